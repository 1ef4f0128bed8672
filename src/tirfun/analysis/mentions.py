"""Which names a subtree mentions, cached behind the immutable statement.

A primitive that redirects one buffer (``set_scope``, ``cache_read``,
``compute_inline``, ...) rebuilds only the statements that use it, but
finding them must not mean walking every expression of a scope of a
thousand blocks at every step. :func:`names_in` answers, for a statement,
the set of variable and buffer names used anywhere under it (a buffer's own
shape, strides, offset and data pointer included); the answer for a
statement is kept for as long as the statement lives, and rewrites share
unchanged statements between the old and the new module, so after the first
question only the statements a rewrite rebuilt are looked at again, each
from its children's kept answers.

Names are identities inside a function (DESIGN.md), so a statement whose
names do not include a buffer's name (nor its data pointer's) cannot use
that buffer: :func:`mentions` is the test the rewrites skip subtrees with.

:func:`pointer_buffers` answers, kept the same way, which buffers under a
statement have a data pointer (only those can be used through it), so
that access detection need not walk a whole block to learn there are none.
"""

from __future__ import annotations

import weakref

from ..nodes import BinaryOp, BlockRealize, Buffer, BufferLoad, IntImm, Node, Stmt, Var
from .traversal import iter_children

# identity of a statement or buffer -> (weak reference to it, its names);
# an entry lives exactly as long as its node, which cannot change meanwhile
_CACHE: dict[int, tuple] = {}
# the same for the buffers with a data pointer under a statement
_POINTERS: dict[int, tuple] = {}
# the same for the buffer and pointer names under a statement
_BUFFER_NAMES: dict[int, tuple] = {}


def _forget(cache: dict, key: int):
    def callback(_ref):
        cache.pop(key, None)
    return callback


def _kept(node, cache: dict = _CACHE):
    entry = cache.get(id(node))
    if entry is not None and entry[0]() is node:
        return entry[1]
    return None


def _keep(node, value, cache: dict = _CACHE) -> None:
    key = id(node)
    cache[key] = (weakref.ref(node, _forget(cache, key)), value)


def _answer(node: Node, cache: dict, collect) -> frozenset:
    """``collect(node)`` as a frozenset, kept in ``cache`` for a statement
    or buffer (an expression is answered afresh: it is not shared)."""
    if not isinstance(node, (Stmt, Buffer)):
        return frozenset(collect(node))
    found = _kept(node, cache)
    if found is None:
        found = frozenset(collect(node))
        _keep(node, found, cache)
    return found


def _gather(root: Node, kept, stops: tuple, record) -> set:
    """What ``record(node, out)`` adds to ``out`` over every node under
    ``root`` (itself included), except below a node of one of the ``stops``
    types, whose answer ``kept(node)`` gives (kept per statement, so a
    rebuilt statement costs its own nodes, not those it holds)."""
    out: set = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if n is not root and isinstance(n, stops):
            out |= kept(n)
            continue
        record(n, out)
        stack.extend(iter_children(n))
    return out


def names_in(node: Node) -> frozenset:
    """Every variable and buffer name used in ``node`` (buffers entered)."""
    # the kept answer first, looked up here: rewrites ask this of every
    # statement they pass, nearly always of one asked before (an entry
    # under the identity of a live node is that node's, so an expression,
    # never kept, misses)
    entry = _CACHE.get(id(node))
    if entry is not None and entry[0]() is node:
        return entry[1]
    return _answer(node, _CACHE, _collect)


def _collect(root: Node) -> set:
    return _gather(root, names_in, (Stmt, Buffer), _record_name)


def _record_name(n: Node, out: set) -> None:
    if isinstance(n, (Var, Buffer)):
        out.add(n.name)


def buffer_names_in(node: Node) -> frozenset:
    """The names in ``node`` that can stand for a buffer: the names of the
    buffers used anywhere under it, of their data pointers, and of every
    handle variable. ``mentions(node, b)`` is true exactly when the name of
    ``b`` or of its data pointer is among them (names are identities inside
    a function), so an index of these names answers which statements may
    use a buffer without the variables that every block binds."""
    return _answer(node, _BUFFER_NAMES, _buffer_names_of)


def _buffer_names_of(node: Node):
    if (type(node) is BlockRealize and all(map(plain_arithmetic, node.iter_values))
            and plain_arithmetic(node.predicate)):
        # bindings of loop variables and constants (nearly every block): the
        # block's names, kept already when the block is shared
        return buffer_names_in(node.block)
    return _collect_buffer_names(node)


def plain_arithmetic(expr) -> bool:
    """Whether ``expr`` is built of integer variables, constants and
    two-operand arithmetic only (so it names no buffer and no pointer)."""
    stack = [expr]
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is IntImm:
            continue
        if kind is Var:
            if n.dtype.is_handle:
                return False
        elif isinstance(n, BinaryOp):
            stack.append(n.a)
            stack.append(n.b)
        else:
            return False
    return True


def _collect_buffer_names(root: Node) -> set:
    # buffers are entered: their shapes may hold handles
    return _gather(root, buffer_names_in, (Stmt,), _record_buffer_name)


def _record_buffer_name(n: Node, out: set) -> None:
    if isinstance(n, Var):
        if n.dtype.is_handle:
            out.add(n.name)
    elif isinstance(n, Buffer):
        out.add(n.name)
        if n.data is not None:
            out.add(n.data.name)


def mentions(node: Node, buffer: Buffer) -> bool:
    """Whether ``node`` may use ``buffer``: it names it or its data pointer."""
    names = names_in(node)
    return buffer.name in names or (buffer.data is not None and buffer.data.name in names)


def mentions_any(node: Node, buffers) -> bool:
    """Whether ``node`` may use any of ``buffers``."""
    names = names_in(node)
    return any(b.name in names or (b.data is not None and b.data.name in names) for b in buffers)


def pointer_buffers(node: Node) -> tuple:
    """The buffers with a data pointer used in ``node`` (itself included),
    each once, in the order a pre-order walk first meets them."""
    if isinstance(node, Buffer):
        return (node,) if node.data is not None else ()
    if isinstance(node, Stmt):
        found = _kept(node, _POINTERS)
        if found is None:
            found = _pointers_below(node)
            _keep(node, found, _POINTERS)
        return found
    return _pointers_below(node)


def _pointers_below(root: Node) -> tuple:
    out: dict = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if n is not root and isinstance(n, (Stmt, Buffer)):
            for b in pointer_buffers(n):  # kept per statement
                out.setdefault(b, None)
            continue
        stack.extend(reversed(list(iter_children(n))))
    return tuple(out)


# the same for the buffers read by predicated vector loads under a statement
_MASKED: dict[int, tuple] = {}


def masked_vector_loads(node: Node) -> frozenset:
    """The names of the buffers that ``node`` (itself included) reads
    through a predicated vector load (``T.vectorized`` code with a mask),
    buffers entered; kept per statement, as :func:`names_in` is. Such a
    load reads some lanes only, which rewrites that inline the buffer must
    know about."""
    return _answer(node, _MASKED, _masked_below)


def _masked_below(root: Node) -> set:
    return _gather(root, masked_vector_loads, (Stmt, Buffer), _record_masked)


def _record_masked(n: Node, out: set) -> None:
    if isinstance(n, BufferLoad) and n.predicate is not None and n.dtype.lanes > 1:
        out.add(n.buffer.name)


__all__ = ["names_in", "buffer_names_in", "mentions", "mentions_any", "pointer_buffers", "masked_vector_loads",
           "plain_arithmetic"]
