"""Point every access of one buffer in a block's body at another buffer,
at given indices, in one walk that rebuilds the node kinds a body is
nearly always made of directly; and find those accesses (:func:`accesses_of`).

``reindex`` reads or writes a buffer through a copy at the block's own
iteration variables: each load and store of the buffer in the body becomes
a load or store of the copy. The generic
:func:`~tirfun.analysis.traversal.transform` asks a callback at every node
and rebuilds through :func:`~tirfun.analysis.traversal.map_children`;
:func:`redirect_accesses` knows the arithmetic, loads, stores, casts,
calls and sequences of a body and rebuilds them itself, and hands any
other node to the generic walk, with the same result. It also tells
whether the body it rewrote is *plain*: made of those kinds only, no
``Let`` among them, and the replaced indices holding none either; then the
names the rewritten statements bind are the ones the old statements bound,
which the rewrite's index derivation relies on.
"""

from __future__ import annotations

from ..analysis.traversal import OPERAND_NODES, iter_children, transform
from ..nodes import Block, Buffer, BufferLoad, BufferStore, FloatImm, IntImm, StringImm, Var
from .body_walk import BodyWalk

_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


class _Redirect(BodyWalk):
    """One rewrite of accesses of ``old`` into accesses of ``new`` at
    ``indices`` (see :func:`redirect_accesses`)."""

    def __init__(self, old: Buffer, new: Buffer, indices):
        self.old = old
        self.new = new
        self.indices = list(indices)
        self.plain = True

    def is_old(self, buf: Buffer) -> bool:
        return same_buffer(buf, self.old)

    def other(self, node):
        """The generic walk, for a node kind this walk does not know."""
        old, new, indices = self.old, self.new, self.indices
        self.plain = False

        def post(n):
            if isinstance(n, BufferLoad) and n.buffer == old:
                return BufferLoad(new, indices, n.predicate)
            if isinstance(n, BufferStore) and n.buffer == old:
                return BufferStore(new, n.value, indices, n.predicate)
            return n

        def pre(n):
            return n if isinstance(n, Buffer) else None

        return transform(node, post, pre)

    def replaced_indices(self, indices) -> None:
        """Indices of the old buffer are dropped: one that held a Let took
        its name out of the function."""
        for i in indices:
            if type(i) not in _LEAVES and not _let_free(i):
                self.plain = False

    def load(self, n):
        if not self.is_old(n.buffer):
            if n.predicate is None and all(type(i) in _LEAVES for i in n.indices):
                return n  # what the walk gives back: variables and constants stay as they are
            return super().load(n)
        for i in n.indices:
            self.expr(i)  # walked as any other expression: an unknown kind is not plain
        pred = None if n.predicate is None else self.expr(n.predicate)
        self.replaced_indices(n.indices)
        return BufferLoad(self.new, self.indices, pred)

    def store(self, n):
        if not self.is_old(n.buffer):
            return super().store(n)
        value = self.expr(n.value)
        for i in n.indices:
            self.expr(i)
        pred = None if n.predicate is None else self.expr(n.predicate)
        self.replaced_indices(n.indices)
        return BufferStore(self.new, value, self.indices, pred)


def same_buffer(a: Buffer, b: Buffer) -> bool:
    """``a == b``, told by identity or by name first (two buffers of a
    function nearly always differ in name, and comparing every field costs
    more)."""
    return a is b or (a.name == b.name and a == b)


def accesses_of(body, buf: Buffer) -> tuple[list, bool]:
    """``(the index lists of the loads and stores of buf in body, whether
    a Block sits in body)``: a walk of every node but buffers, the kinds a
    body is nearly always made of read directly, any other through
    :func:`~tirfun.analysis.traversal.iter_children`; the walk stops at
    the first Block. The lists come in no particular order."""
    found: list = []
    stack = [body]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        n = pop()
        kind = type(n)
        if kind in _LEAVES:
            continue
        if kind in OPERAND_NODES:
            push(n.a)
            push(n.b)
        elif kind is BufferLoad or kind is BufferStore:
            if same_buffer(n.buffer, buf):
                found.append(list(n.indices))
            if kind is BufferStore:
                push(n.value)
            extend(n.indices)
            if n.predicate is not None:
                push(n.predicate)
        elif kind is Block:
            return found, True
        elif not isinstance(n, Buffer):
            extend(iter_children(n))
    return found, False


def _let_free(e) -> bool:
    from .index import binds_let

    return not binds_let(e)


def expression_redirect(old: Buffer, new: Buffer, indices):
    """The walk of :func:`redirect_accesses` for expressions: a function
    giving an expression with every load of old as one of new at indices
    (its predicate kept), what the generic transform gives."""
    return _Redirect(old, new, indices).expr


def redirect_accesses(body, old: Buffer, new: Buffer, indices) -> tuple:
    """``(body with every load and store of old as one of new at indices,
    whether the walk was plain)``: what the generic transform gives (a load
    ``old[...]`` becomes ``new[indices]``, its predicate kept, a store
    likewise), and plain when the body held only the kinds this walk knows,
    with no Let among them nor in the replaced indices (see the module's
    docstring)."""
    walk = _Redirect(old, new, indices)
    out = walk.stmt(body)
    return out, walk.plain
