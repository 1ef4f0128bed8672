"""Name -> path index of a PrimFunc, cached behind the immutable function.

Resolving ``split("i", ...)`` must not walk the whole function: a module of
a thousand blocks would make every primitive cost a thousand blocks. So each
PrimFunc gets, once, a :class:`FuncIndex` mapping loop and block names to
their paths, and counting the names in use (for fresh names). A rewrite
that replaces the subtree at one path derives the new function's index from
the old one by un-indexing the old subtree and indexing the new one, so the
cost of a primitive is the size of what it rewrites plus the length of the
path, never the size of the function.

The cache is keyed by the identity of the (immutable) function and holds it
weakly: an index lives exactly as long as its function, and because the
function cannot change, the index can never go stale.
"""

from __future__ import annotations

import functools
import weakref

import attrs
from pyrsistent import PMap, PSet, pmap, pset, pvector

from ..analysis.traversal import Path, stmt_children, walk_stmts
from ..nodes import (
    Allocate, AttrStmt, Block, Buffer, DeclBuffer, FloatImm, For, IntImm, Let, LetStmt, Node, PrimFunc,
    Stmt, StringImm, Var,
)


@attrs.frozen
class FuncIndex:
    """Where every loop and block of one function is, and which names it uses.

    ``loops`` maps a loop variable's name to the path of its For, ``blocks``
    a block's name to the path of the Block (its BlockRealize is one step
    up). ``names`` counts the names the function binds (parameters, buffers
    and their size variables, loop, iteration and let variables, block
    names): the names a fresh name must avoid. ``clashes`` holds loop or
    block names bound more than once, which only an ill-formed function has.
    """

    loops: PMap
    blocks: PMap
    names: PMap
    clashes: PSet


_PVEC = type(pvector())


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


#: expression nodes that hold no other node: never worth a visit
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


def _inner(value) -> bool:
    """Whether ``_expr_lets`` must look inside ``value``: a node that may
    hold a Let (statements are counted on their own, buffers bind nothing
    there)."""
    return type(value) not in _LEAVES and isinstance(value, Node) and not isinstance(value, (Stmt, Buffer))


def _expr_lets(node, counts: dict, sign: int) -> None:
    """Count the variables that ``Let`` expressions inside ``node`` bind
    (statements and buffers are not entered)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is Let:
            counts[n.var.name] = counts.get(n.var.name, 0) + sign
        for name in _field_names(type(n)):
            value = getattr(n, name)
            if type(value) is _PVEC:
                stack.extend(v for v in value if _inner(v))
            elif _inner(value):
                stack.append(value)


def _buffer_names(buf: Buffer, counts: dict, sign: int) -> None:
    """A declared buffer binds its name and the size variables it introduces."""
    counts[buf.name] = counts.get(buf.name, 0) + sign
    for name in var_names_in_buffer(buf):
        counts[name] = counts.get(name, 0) + sign


def var_names_in_buffer(buf: Buffer) -> set[str]:
    """Variables in a buffer's shape, strides, offset and data pointer."""
    from .exprs import var_names

    out: set[str] = set()
    for e in list(buf.shape) + list(buf.strides) + [buf.elem_offset, buf.data]:
        if e is not None:
            out |= var_names(e)
    return out


def _tally_one(node, counts: dict, sign: int) -> None:
    """Count the names one statement binds itself (not those of the
    statements inside it)."""
    if isinstance(node, Block):
        counts[node.name_hint] = counts.get(node.name_hint, 0) + sign
        for iv in node.iter_vars:
            counts[iv.var.name] = counts.get(iv.var.name, 0) + sign
        for buf in node.alloc_buffers:
            _buffer_names(buf, counts, sign)
        for match in node.match_buffers:
            _buffer_names(match.buffer, counts, sign)
    elif isinstance(node, For):
        counts[node.loop_var.name] = counts.get(node.loop_var.name, 0) + sign
    elif isinstance(node, (LetStmt, Allocate)):
        var = node.var if isinstance(node, LetStmt) else node.buffer_var
        counts[var.name] = counts.get(var.name, 0) + sign
    elif isinstance(node, DeclBuffer):
        _buffer_names(node.buffer, counts, sign)
    elif isinstance(node, AttrStmt):
        var = getattr(node.node, "var", node.node)
        if isinstance(var, Var):
            counts[var.name] = counts.get(var.name, 0) + sign
    _expr_lets(node, counts, sign)


def _tally(root, counts: dict, sign: int) -> None:
    """Count the names bound by the statements under ``root`` (loop and
    iteration variables, block names, declared buffers, let variables)."""
    stack = [root]
    while stack:
        node = stack.pop()
        _tally_one(node, counts, sign)
        stack.extend(child for _, child in stmt_children(node))


def _scan(root, path: Path, counts: dict, sign: int, shared: frozenset) -> list:
    """One walk of a replaced (``sign`` -1) or replacing (+1) subtree: its
    loops and blocks as ``(is_loop, name, path)``, in pre-order, and the
    names it binds tallied into ``counts``. Blocks whose id is in
    ``shared`` are the same object on both sides of the rewrite: their
    names cancel out, so they are not tallied, but their loops and blocks
    are listed, since their paths may have moved."""
    found = []
    stack = [(path, root, True)]
    while stack:
        p, node, counting = stack.pop()
        if isinstance(node, For):
            found.append((True, node.loop_var.name, p))
        elif isinstance(node, Block):
            found.append((False, node.name_hint, p))
            if counting and id(node) in shared:
                counting = False
        if counting:
            _tally_one(node, counts, sign)
        kids = [(p + (step,), child, counting) for step, child in stmt_children(node)]
        stack.extend(reversed(kids))
    return found


def _top_blocks(root) -> frozenset:
    """Ids of the blocks reachable from ``root`` without entering a block."""
    out = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Block):
            out.add(id(node))
            continue
        stack.extend(child for _, child in stmt_children(node))
    return frozenset(out)


def build_index(func: PrimFunc) -> FuncIndex:
    """Index ``func`` from scratch (one walk of the whole function)."""
    loops: dict = {}
    blocks: dict = {}
    clashes: set = set()
    for path, stmt in walk_stmts(func):
        if isinstance(stmt, For):
            name = stmt.loop_var.name
            if name in loops:
                clashes.add(name)
            else:
                loops[name] = path
        elif isinstance(stmt, Block):
            name = stmt.name_hint
            if name in blocks:
                clashes.add(name)
            else:
                blocks[name] = path
    counts: dict = {}
    for p in func.params:
        counts[p.name] = counts.get(p.name, 0) + 1
    for buf in func.buffer_map.values():
        _buffer_names(buf, counts, 1)
    _tally(func.body, counts, 1)
    return FuncIndex(pmap(loops), pmap(blocks), pmap({k: v for k, v in counts.items() if v > 0}),
                     pset(clashes))


def derive_index(old: FuncIndex, path: Path, old_sub, new_sub, new_func: PrimFunc) -> FuncIndex:
    """The index of ``new_func``, which is the old function with ``old_sub``
    at ``path`` replaced by ``new_sub``: only those two subtrees are walked."""
    if old.clashes:
        return build_index(new_func)
    shared = _top_blocks(old_sub) & _top_blocks(new_sub)
    delta: dict = {}
    gone = _scan(old_sub, path, delta, -1, shared)
    came = _scan(new_sub, path, delta, 1, shared)
    loops = old.loops.evolver()
    blocks = old.blocks.evolver()
    for is_loop, name, p in gone:
        table = loops if is_loop else blocks
        if name in table and table[name] == p:
            del table[name]
    for is_loop, name, p in came:
        table = loops if is_loop else blocks
        if name in table:
            return build_index(new_func)  # a clash: index the ill-formed result fully
        table[name] = p
    names = old.names.evolver()
    for name, d in delta.items():
        if d == 0:
            continue
        count = (names[name] if name in names else 0) + d
        if count > 0:
            names[name] = count
        elif name in names:
            del names[name]
    return FuncIndex(loops.persistent(), blocks.persistent(), names.persistent(), old.clashes)


# identity -> (weak reference to the function, its index)
_CACHE: dict[int, tuple] = {}


def _forget(key: int):
    def callback(_ref):
        _CACHE.pop(key, None)
    return callback


def remember(func: PrimFunc, index: FuncIndex) -> None:
    """Cache ``index`` as the index of ``func`` for as long as ``func`` lives."""
    key = id(func)
    entry = _CACHE.get(key)
    if entry is not None and entry[0]() is func:
        return
    _CACHE[key] = (weakref.ref(func, _forget(key)), index)


def index_of(func: PrimFunc) -> FuncIndex:
    """The index of ``func``: cached, or built once and cached."""
    entry = _CACHE.get(id(func))
    if entry is not None and entry[0]() is func:
        return entry[1]
    index = build_index(func)
    remember(func, index)
    return index


__all__ = ["FuncIndex", "build_index", "derive_index", "index_of", "remember"]
