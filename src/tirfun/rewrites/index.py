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
from pyrsistent import PSet, pset, pvector

from ..analysis.traversal import STMT_FIELDS, Path, stmt_children, walk_stmts
from .layered_map import LayeredMap
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

    loops: LayeredMap
    blocks: LayeredMap
    names: LayeredMap
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
    kind = type(value)
    inner = _INNER.get(kind)
    if inner is None:
        inner = _INNER[kind] = (kind not in _LEAVES and issubclass(kind, Node)
                                and not issubclass(kind, (Stmt, Buffer)))
    return inner


# type -> whether _expr_lets looks inside its values (a pure function of the type)
_INNER: dict[type, bool] = {}


#: field types that never hold a Let expression (statements are counted on
#: their own, buffers and plain variables bind nothing inside them)
_NO_LET_TYPES = frozenset({
    "str", "str | None", "int", "float", "bool", "bytes", "DataType", "ForKind", "IterVarType",
    "PMap", "Stmt", "Stmt | None", "Block", "Buffer", "'Buffer'", "Var", "Var | None", "StringImm",
    "PointerType | None",
})


@functools.cache
def _let_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` that may hold a Let expression; a field of a
    type not known here is kept, so the answer errs on the side of looking."""
    return tuple(a.name for a in attrs.fields(cls) if str(a.type) not in _NO_LET_TYPES)


def _expr_lets(node, counts: dict, sign: int) -> None:
    """Count the variables that ``Let`` expressions inside ``node`` bind
    (statements and buffers are not entered)."""
    stack = [node]
    inner = _INNER.get
    while stack:
        n = stack.pop()
        if type(n) is Let:
            counts[n.var.name] = counts.get(n.var.name, 0) + sign
        for name in _let_fields(type(n)):
            value = getattr(n, name)
            if type(value) is _PVEC:
                stack.extend(v for v in value if inner(type(v)) or (inner(type(v)) is None and _inner(v)))
            elif inner(type(value)) or (inner(type(value)) is None and _inner(value)):
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


def _scan(root, path: Path, counts: dict, sign: int, shared: dict, tops: dict | None = None, *,
          count: bool = True) -> list:
    """One walk of a replaced (``sign`` -1) or replacing (+1) subtree: its
    loops and blocks as ``(is_loop, name, path)``, in pre-order, and the
    names it binds tallied into ``counts``.

    Statements in ``shared`` are the same object on both sides of the
    rewrite: their names cancel out, so they are not tallied, nor entered.
    Where a shared statement moved, its loops and blocks are listed at the
    new place from what is kept for it (:func:`_entries`); where it kept
    its path, nothing under it moved and nothing is listed. ``tops`` (id ->
    path), given for the new side, holds the replaced subtree's outer
    statements (see :func:`_top_statements`); one met there is added to
    ``shared`` (with whether it kept its path), so the walk of the replaced
    side treats it alike. ``count=False`` lists without tallying or
    looking for shared statements."""
    found = []
    stack = [(path, root, count)]
    pop, push = stack.pop, stack.append
    fields_of = STMT_FIELDS.get
    while stack:
        p, node, counting = pop()
        if counting:
            key = id(node)
            if tops is None:
                kept = shared.get(key)
            else:
                # a statement the new side holds twice is shared once: the
                # second copy binds its names once more
                old_path = tops.get(key)
                kept = None
                if old_path is not None and key not in shared:
                    kept = shared[key] = old_path == p
            if kept is not None:
                if not kept:  # moved as it was: its loops and blocks, at the new place
                    found.extend((is_loop, name, p + rel) for is_loop, name, rel in _entries(node))
                continue
        if isinstance(node, For):
            found.append((True, node.loop_var.name, p))
        elif isinstance(node, Block):
            found.append((False, node.name_hint, p))
        if counting:
            _tally_one(node, counts, sign)
        names = fields_of(type(node))
        if not names:
            continue
        kids = []
        for name in names:
            value = getattr(node, name)
            if value is None:
                continue
            if type(value) is _PVEC:
                kids.extend((p + ((name, i),), child, counting) for i, child in enumerate(value))
            else:
                kids.append((p + ((name, None),), value, counting))
        for kid in reversed(kids):
            push(kid)
    return found


# identity of a statement -> (weak reference to it, its loops and blocks as
# ``(is_loop, name, path relative to it)`` in pre-order): a statement a
# rewrite carries over to another place is listed from here, not walked
_ENTRIES: dict[int, tuple] = {}


def _forget_entries(key: int):
    def callback(_ref):
        _ENTRIES.pop(key, None)
    return callback


def _entries(stmt) -> tuple:
    """The loops and blocks of ``stmt`` (itself included), with their paths
    relative to it, in pre-order; kept for as long as ``stmt`` lives."""
    key = id(stmt)
    entry = _ENTRIES.get(key)
    if entry is not None and entry[0]() is stmt:
        return entry[1]
    found = tuple(_scan(stmt, (), {}, 0, {}, None, count=False))
    _ENTRIES[key] = (weakref.ref(stmt, _forget_entries(key)), found)
    return found


def _top_statements(root, path: Path) -> dict:
    """The statements of the replaced subtree at ``path`` that a rewrite
    may carry over unchanged, id -> path: those reachable from ``root``
    (not included) without entering a block other than ``root``. The new
    side's walk recognises them by identity, so a rewrite that rebuilds a
    scope of a thousand blocks around one moved block tallies only what
    it changed."""
    out: dict = {}
    twice: set = set()
    stack = [(path, root)]
    fields_of = STMT_FIELDS.get
    while stack:
        p, node = stack.pop()
        if node is not root:
            key = id(node)
            if key in out:
                twice.add(key)  # held twice: its copies cannot be told apart
            out[key] = p
            if isinstance(node, Block):
                continue
        for name in fields_of(type(node), ()):
            value = getattr(node, name)
            if type(value) is _PVEC:
                stack.extend((p + ((name, i),), child) for i, child in enumerate(value))
            elif value is not None:
                stack.append((p + ((name, None),), value))
    for key in twice:
        del out[key]
    return out


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
    return FuncIndex(LayeredMap(loops), LayeredMap(blocks),
                     LayeredMap({k: v for k, v in counts.items() if v > 0}), pset(clashes))


def derive_index(old: FuncIndex, path: Path, old_sub, new_sub, new_func: PrimFunc) -> FuncIndex:
    """The index of ``new_func``, which is the old function with ``old_sub``
    at ``path`` replaced by ``new_sub``: only those two subtrees are walked."""
    if old.clashes:
        return build_index(new_func)
    # the new side first: the outer statements of the old side that it
    # reaches unchanged are the shared ones, skipped by both tallies
    shared: dict = {}
    delta: dict = {}
    came = _scan(new_sub, path, delta, 1, shared, _top_statements(old_sub, path))
    gone = _scan(old_sub, path, delta, -1, shared)
    loops = _moved(old.loops, [(n, p) for is_loop, n, p in gone if is_loop],
                   [(n, p) for is_loop, n, p in came if is_loop])
    blocks = _moved(old.blocks, [(n, p) for is_loop, n, p in gone if not is_loop],
                    [(n, p) for is_loop, n, p in came if not is_loop])
    if loops is None or blocks is None:
        return build_index(new_func)  # a clash: index the ill-formed result fully
    changes = {name: d for name, d in delta.items() if d}
    names = old.names
    if changes:
        names = names.evolver()
        for name, d in changes.items():
            count = (names[name] if name in names else 0) + d
            if count > 0:
                names[name] = count
            elif name in names:
                del names[name]
        names = names.persistent()
    return FuncIndex(loops, blocks, names, old.clashes)


def _moved(table: LayeredMap, gone: list, came: list) -> LayeredMap | None:
    """``table`` (name -> path) without the entries of the replaced subtree
    (``gone``) and with those of the new one (``came``); None when a new
    name is already taken (a clash). A name that only moved is updated in
    place, and nothing is copied when nothing changed."""
    dropped = {name for name, p in gone if table.get(name) == p}
    placed: dict = {}
    for name, p in came:
        if name in placed or (name in table and name not in dropped):
            return None
        placed[name] = p
    edits = [(name, None) for name in dropped if name not in placed]
    edits += [(name, p) for name, p in placed.items() if table.get(name) != p]
    if not edits:
        return table
    out = table.evolver()
    for name, p in edits:
        if p is None:
            del out[name]
        else:
            out[name] = p
    return out.persistent()


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
