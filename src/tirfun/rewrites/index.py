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
import itertools
import operator
import weakref
from collections.abc import Iterator, Mapping

import attrs
from pyrsistent import pvector

from ..analysis.mentions import buffer_names_in, plain_arithmetic
from ..analysis.traversal import STMT_FIELDS, Path, get_at, iter_children, stmt_children, walk_stmts
from .layered_map import LayeredMap
from ..nodes.stmt import sequence_edit
from ..nodes import (
    Allocate, And, AttrStmt, Block, BlockRealize, Buffer, BufferLoad, BufferStore, Call, DeclBuffer, FloatImm, For, IntImm, Let, LetStmt, Node, PrimFunc,
    SeqStmt, Stmt, StringImm, Var,
)
from ..nodes.expr import CmpOp


class Located(Mapping):
    """A read-only view of one table of a :class:`FuncIndex`: a loop or
    block name to its path, each path brought up to date with the shifts
    recorded since it was stored (see :class:`FuncIndex`)."""

    __slots__ = ("_table", "_shifts")

    def __init__(self, table: LayeredMap, shifts: tuple):
        self._table = table
        self._shifts = shifts

    def __getitem__(self, name) -> Path:
        return _resolve(self._table[name], self._shifts)

    def get(self, name, default=None):
        entry = self._table.get(name)
        return default if entry is None else _resolve(entry, self._shifts)

    def __contains__(self, name) -> bool:
        return name in self._table

    def __iter__(self) -> Iterator:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


def _resolve(entry: tuple, shifts: tuple) -> Path:
    """The current path of an entry ``(path, epoch)``: its path with every
    shift recorded after it was stored applied in order."""
    path, epoch = entry
    for prefix, start, delta in shifts[epoch:]:
        n = len(prefix)
        if len(path) > n:
            step = path[n]
            # the kind first: a path that left the prefix earlier may have
            # a field step (index None) there
            if step[0] == "seq" and step[1] >= start and path[:n] == prefix:
                path = path[:n] + (("seq", step[1] + delta),) + path[n + 1:]
    return path


class FuncIndex:
    """Where every loop and block of one function is, and which names it uses.

    ``loops`` maps a loop variable's name to the path of its For, ``blocks``
    a block's name to the path of the Block (its BlockRealize is one step
    up). ``names`` counts the names the function binds (parameters, buffers
    and their size variables, loop, iteration and let variables, block
    names): the names a fresh name must avoid. ``clashes`` holds loop or
    block names bound more than once, which only an ill-formed function has.

    A rewrite that inserts or removes statements in a sequence moves every
    statement after them. Rather than rewriting the path of every loop and
    block there (a thousand of them at the root of a large function), the
    derived index records the move as a *shift* ``(sequence path, first
    position, delta)``; each entry is stored with the number of shifts
    recorded before it (its epoch), and reading it applies the later ones.
    Once shifts pile up they are folded into the entries, so a read stays a
    few tuple comparisons.

    ``mentioned`` maps a buffer's name, or a pointer's, to the names of the
    blocks whose BlockRealize mentions it (see
    :func:`~tirfun.analysis.mentions.buffer_names_in`); the function's own
    root block is left out (it mentions everything). A block primitive asks
    it which blocks of a scope may use a buffer, instead of looking at every
    block of the scope.

    ``loose`` counts the statements outside every block but the root that
    name a buffer or pointer in their own fields (a loop whose extent loads
    from a buffer, a condition, a let value, a store outside blocks). Where
    there is none, which is nearly always, the blocks that mention a buffer
    are every place outside blocks that uses it, and :meth:`items_naming`
    answers which statements of a sequence may use it from them.
    """

    __slots__ = ("loop_table", "block_table", "names", "clashes", "shifts", "_mentioned", "_pending", "loose",
                 "_loops", "_blocks")

    def __init__(self, loop_table: LayeredMap, block_table: LayeredMap, names: LayeredMap, clashes: frozenset,
                 shifts: tuple = (), mentioned: LayeredMap | None = None, pending: tuple = (),
                 loose: int = 0):
        self.loop_table = loop_table
        self.block_table = block_table
        self.names = names
        self.clashes = clashes
        self.shifts = shifts
        self.loose = loose
        self._mentioned = mentioned if mentioned is not None else LayeredMap()
        # BlockRealizes rebuilt since ``_mentioned`` was brought up to date,
        # as ``(old, new)``: a rewrite only records them, and the first
        # question about mentions (few primitives ask one) settles them
        self._pending = pending
        self._loops = self._blocks = None  # the views below, made on first use

    @property
    def mentioned(self) -> LayeredMap:
        """Buffer or pointer name -> the blocks whose BlockRealize mentions it."""
        if self._pending:
            self._mentioned = _mentioned(self._mentioned, self._pending)
            self._pending = ()
        return self._mentioned

    @property
    def loops(self) -> Located:
        """Loop variable name -> path of its For."""
        if self._loops is None:
            self._loops = Located(self.loop_table, self.shifts)
        return self._loops

    @property
    def blocks(self) -> Located:
        """Block name -> path of its Block."""
        if self._blocks is None:
            self._blocks = Located(self.block_table, self.shifts)
        return self._blocks

    def with_loop_paths(self, paths: dict) -> "FuncIndex":
        """This index with the loops named in ``paths`` (name -> current
        path) moved there: for a rewrite that only permutes loops."""
        table = self.loop_table.evolver()
        epoch = len(self.shifts)
        for name, path in paths.items():
            table[name] = (path, epoch)
        return FuncIndex(table.persistent(), self.block_table, self.names, self.clashes, self.shifts,
                         self._mentioned, self._pending, self.loose)

    def blocks_mentioning(self, names) -> set:
        """The blocks (names) whose BlockRealize may use a buffer or
        pointer of one of ``names`` (the function's root block excepted)."""
        out: set = set()
        table = self.mentioned
        for name in names:
            found = table.get(name)
            if found:
                out |= found
        return out

    def items_naming(self, seq_path: Path, names) -> list[int] | None:
        """The positions, in order, of the statements of the sequence at
        ``seq_path`` that may use a buffer or pointer of one of ``names``,
        found from the blocks that mention them; None when the index cannot
        tell (the sequence is inside a block other than the root, a
        statement outside blocks names a buffer, or block names clash),
        and the caller must ask each statement."""
        if self.loose or self.clashes or not _in_root(seq_path + (("seq", 0),)):
            return None
        n = len(seq_path)
        table = self.blocks
        found = set()
        for block in self.blocks_mentioning(names):
            path = table.get(block)
            if path is not None and len(path) > n and path[n][0] == "seq" and path[:n] == seq_path:
                found.add(path[n][1])
        return sorted(found)

    def __eq__(self, other) -> bool:
        if not isinstance(other, FuncIndex):
            return NotImplemented
        return (dict(self.loops.items()) == dict(other.loops.items())
                and dict(self.blocks.items()) == dict(other.blocks.items())
                and self.names == other.names and self.clashes == other.clashes
                and self.mentioned == other.mentioned and self.loose == other.loose)

    __hash__ = None

    def __repr__(self) -> str:
        return (f"FuncIndex(loops={dict(self.loops.items())!r}, blocks={dict(self.blocks.items())!r}, "
                f"clashes={set(self.clashes)!r})")


_PVEC = type(pvector())


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


#: expression nodes that hold no other node: never worth a visit
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


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


class _Enter(dict):
    """type -> whether ``_expr_lets`` looks inside a value of it: a node
    that may hold a Let (statements are counted on their own, buffers bind
    nothing there, leaves hold nothing); learnt on first sight of the type."""

    def __missing__(self, kind: type) -> bool:
        inner = self[kind] = (kind not in _LEAVES and issubclass(kind, Node)
                              and not issubclass(kind, (Stmt, Buffer)))
        return inner


_ENTER = _Enter()


class _LetWalkers(dict):
    """type -> a function ``(node, stack)`` pushing the values of the
    node's fields that may hold a Let, written out once per type (as
    ``attrs`` writes an ``__init__``): a visit is then a few attribute reads
    and type tests, where reading the field names and asking each value
    what it is cost a call each, and the index visits every expression of
    what a rewrite rebuilt."""

    def __missing__(self, cls: type):
        lines = ["def walk(n, push):"]
        for k, name in enumerate(_let_fields(cls)):
            lines += [f"    v{k} = n.{name}",
                      f"    if type(v{k}) is _PVEC:",
                      f"        for x in v{k}:",
                      "            if _ENTER[type(x)]:",
                      "                push(x)",
                      f"    elif _ENTER[type(v{k})]:",
                      f"        push(v{k})"]
        if len(lines) == 1:
            lines.append("    return")
        env = {"_PVEC": _PVEC, "_ENTER": _ENTER}
        exec("\n".join(lines), env)  # the source is built above from field names only
        walk = self[cls] = env["walk"]
        return walk


_LET_WALKERS = _LetWalkers()


def _expr_lets(node, counts: dict, sign: int) -> None:
    """Count the variables that ``Let`` expressions inside ``node`` bind
    (statements and buffers are not entered)."""
    stack = [node]
    push, pop = stack.append, stack.pop
    walkers = _LET_WALKERS
    while stack:
        n = pop()
        if type(n) is Let:
            counts[n.var.name] = counts.get(n.var.name, 0) + sign
        walkers[type(n)](n, push)


def _buffer_names(buf: Buffer, counts: dict, sign: int) -> None:
    """A declared buffer binds its name and the size variables it introduces."""
    counts[buf.name] = counts.get(buf.name, 0) + sign
    for name in var_names_in_buffer(buf):
        counts[name] = counts.get(name, 0) + sign


def var_names_in_buffer(buf: Buffer) -> set[str]:
    """Variables in a buffer's shape, strides, offset and data pointer."""
    out: set[str] = set()
    for e in (*buf.shape, *buf.strides, buf.elem_offset, buf.data):
        kind = type(e)
        # a constant or a plain variable (nearly every dimension, offset
        # and pointer) is told by its type, without a walk
        if kind is Var:
            out.add(e.name)
        elif kind is not IntImm and e is not None:
            from .exprs import var_names

            out |= var_names(e)
    return out


def _block_names(block: Block) -> dict:
    """The names a block binds itself, with how many times: its name, its
    iteration variables, its buffers and their size variables, and the
    variables of Let expressions in its own fields (its domains, regions
    and views, where most of a block's expression nodes are). Kept for as
    long as the block lives: a rewrite that brings a block in tallies it,
    and the rewrite that later takes it out (or moves it) reads this."""
    return _kept_for(_BLOCK_NAMES, block, _count_block_names)


def _count_block_names(block: Block) -> dict:
    counts: dict = {block.name_hint: 1}
    for iv in block.iter_vars:
        counts[iv.var.name] = counts.get(iv.var.name, 0) + 1
    for buf in block.alloc_buffers:
        _buffer_names(buf, counts, 1)
    for match in block.match_buffers:
        _buffer_names(match.buffer, counts, 1)
    if not _plain_own_fields(block):
        _expr_lets(block, counts, 1)
    return counts


def _plain_own_fields(block: Block) -> bool:
    """Whether every expression of the block's own fields that may hold a
    Let (see :func:`_let_fields`: the ends of its domains, of its regions
    and of its views' sources) is a variable, a constant or plain
    arithmetic, and so holds none: nearly every block, told by a look at
    each end where the walk of :func:`_expr_lets` visits every range."""
    for iv in block.iter_vars:
        dom = iv.dom
        if not (_leaf_or_plain(dom.min) and _leaf_or_plain(dom.extent)):
            return False
    return _plain_regions(itertools.chain(block.reads, block.writes, (m.source for m in block.match_buffers)))


def _plain_regions(regions) -> bool:
    """Whether every end of ``regions`` is a variable, a constant or plain
    arithmetic (and so holds no Let)."""
    for region in regions:
        for r in region.region:
            if not (_leaf_or_plain(r.min) and _leaf_or_plain(r.extent)):
                return False
    return True


# identity of a block -> (weak reference to it, the names it binds itself)
_BLOCK_NAMES: dict[int, tuple] = {}


def _store_lets(store: BufferStore) -> tuple:
    """The variables Let expressions in a store bind (nearly always none),
    kept as :func:`_block_names` keeps a block's: a store's value is most
    of the expression nodes of a body."""
    return _kept_for(_STORE_LETS, store, _count_store_lets)


def _count_store_lets(store: BufferStore) -> tuple:
    counts: dict = {}
    _expr_lets(store, counts, 1)
    return tuple(name for name, k in counts.items() for _ in range(k))


# identity of a store -> (weak reference to it, the Let-bound names in it)
_STORE_LETS: dict[int, tuple] = {}


def _tally_one(node, counts: dict, sign: int) -> None:
    """Count the names one statement binds itself (not those of the
    statements inside it)."""
    if type(node) is Block:
        get = counts.get
        for name, k in _block_names(node).items():
            counts[name] = get(name, 0) + sign * k
        return
    kind = type(node)
    if kind is For:
        counts[node.loop_var.name] = counts.get(node.loop_var.name, 0) + sign
        if type(node.min) in _LEAVES and type(node.extent) in _LEAVES and node.thread_binding is None:
            return  # the common loop: no expression to hold a Let
    elif kind is BlockRealize:
        if type(node.predicate) in _LEAVES and all(type(v) in _LEAVES for v in node.iter_values):
            return  # bound to loop variables and constants
        if _leaf_or_plain(node.predicate) and all(map(_leaf_or_plain, node.iter_values)):
            return  # or plain arithmetic of them: no Let either
    elif kind is BufferStore:
        lets = _store_lets(node)
        if lets:
            get = counts.get
            for name in lets:
                counts[name] = get(name, 0) + sign
        return
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


#: the key under which a walk's ``counts`` gather the change in loose statements
_LOOSE = ("", "loose statements")

#: statements whose own fields never make them loose
_NEVER_LOOSE = frozenset({SeqStmt, Block, BlockRealize})


def _in_root(path: Path) -> bool:
    """Whether the statement at ``path`` lies outside every block but the
    function's root block (its path enters no other block)."""
    # a step into a block is always ("block", None), the field of BlockRealize
    return _INTO_BLOCK not in path[2:]


_INTO_BLOCK = ("block", None)


def _is_loose(node) -> bool:
    """Whether a statement's own fields (not the statements inside it)
    name a buffer or pointer; blocks and their realizes never count, their
    mentions are indexed (see ``FuncIndex.loose``)."""
    kind = type(node)
    if kind in _NEVER_LOOSE:
        return False
    if kind is For and type(node.min) in _LEAVES and type(node.extent) in _LEAVES \
            and node.thread_binding is None and not node.annotations:
        return False  # the common loop: integer bounds, nothing attached
    return any(not isinstance(c, Stmt) and buffer_names_in(c) for c in iter_children(node))


# identity of a statement -> (weak reference to it, its loose statements)
_LOOSE_WITHIN: dict[int, tuple] = {}


def _loose_within(stmt) -> int:
    """How many statements under ``stmt`` (itself included), outside the
    blocks under it, are loose; kept for as long as ``stmt`` lives."""
    return _kept_for(_LOOSE_WITHIN, stmt, _count_loose)


def _count_loose(stmt) -> int:
    count, stack = 0, [stmt]
    while stack:
        node = stack.pop()
        if type(node) is BlockRealize:
            continue  # everything below lies inside its block
        count += _is_loose(node)
        stack.extend(child for _, child in stmt_children(node))
    return count


def _kept_for(cache: dict, node, compute):
    """``compute(node)``, kept in ``cache`` (identity -> (weak reference,
    value)) for as long as the immutable ``node`` lives, so it can never be
    stale."""
    key = id(node)
    entry = cache.get(key)
    if entry is not None and entry[0]() is node:
        return entry[1]
    value = compute(node)
    cache[key] = (weakref.ref(node, _forget_in(cache, key)), value)
    return value


def _forget_in(cache: dict, key: int):
    """The weak reference callback that drops ``key`` from ``cache``; the
    table is bound here, not looked up when the node dies (at interpreter
    exit, module globals are cleared before the last nodes are collected)."""
    def callback(_ref):
        cache.pop(key, None)
    return callback


def _scan(root, path: Path, counts: dict, sign: int, shared: dict, tops: dict | None = None, *,
          count: bool = True, realizes: list | None = None) -> list:
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
    looking for shared statements. ``realizes`` collects the BlockRealizes
    walked (shared ones are not: they are the same on both sides)."""
    found = []
    stack = [(path, root, count)]
    pop, push = stack.pop, stack.append
    fields_of = _FIELDS_BACKWARDS.get
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
                    if tops is not None:
                        # into a block or out of one: its loose statements count or stop counting
                        moved = _in_root(p) - _in_root(old_path)
                        if moved and _loose_within(node):
                            counts[_LOOSE] = counts.get(_LOOSE, 0) + moved * _loose_within(node)
                continue
        kind = type(node)
        if kind is For:
            found.append((True, node.loop_var.name, p))
        elif kind is Block:
            found.append((False, node.name_hint, p))
        elif realizes is not None and kind is BlockRealize and p != _ROOT_REALIZE:
            # the function's root realize is left out of ``mentioned``, as
            # build_index leaves it (loop_partition of a loop at the root
            # puts a new one there)
            realizes.append(node)
        if counting:
            _tally_one(node, counts, sign)
            # inside a block nothing counts as loose: the cheaper question first
            if kind not in _NEVER_LOOSE and _in_root(p) and _is_loose(node):
                counts[_LOOSE] = counts.get(_LOOSE, 0) + sign
        names = fields_of(kind)
        if not names:
            continue
        # pushed last field first, last item first: popped in pre-order
        for name in names:
            value = getattr(node, name)
            if value is None:
                continue
            if type(value) is _PVEC:
                for i in range(len(value) - 1, -1, -1):
                    push((p + ((name, i),), value[i], counting))
            else:
                push((p + ((name, None),), value, counting))
    return found


#: each statement type's statement fields, last first (see :func:`_scan`)
_FIELDS_BACKWARDS = {kind: tuple(reversed(names)) for kind, names in STMT_FIELDS.items()}


# identity of a statement -> (weak reference to it, its loops and blocks as
# ``(is_loop, name, path relative to it)`` in pre-order): a statement a
# rewrite carries over to another place is listed from here, not walked
_ENTRIES: dict[int, tuple] = {}


def _entries(stmt) -> tuple:
    """The loops and blocks of ``stmt`` (itself included), with their paths
    relative to it, in pre-order; kept for as long as ``stmt`` lives."""
    return _kept_for(_ENTRIES, stmt, lambda node: tuple(_scan(node, (), {}, 0, {}, None, count=False)))


def _taken_out(stmt, path: Path, counts: dict, realizes: list) -> list:
    """What ``_scan(stmt, path, counts, -1, {}, realizes=realizes)`` gives
    for a statement a rewrite took out (or rebuilt), read from what is kept
    for it (:func:`_within`): its loops and blocks at ``path``, the names it
    binds taken from ``counts``, its loose statements where it lies outside
    every block but the root, and its BlockRealizes appended to
    ``realizes``. A statement at the function's top (the root realize, or
    above it) is scanned: its path decides what counts there."""
    if len(path) < 3:
        return _scan(stmt, path, counts, -1, {}, realizes=realizes)
    names, inner = _within(stmt)
    get = counts.get
    for name, k in names.items():
        counts[name] = get(name, 0) - k
    if _in_root(path):
        loose = _loose_within(stmt)
        if loose:
            counts[_LOOSE] = get(_LOOSE, 0) - loose
    realizes.extend(inner)
    return [(is_loop, name, path + rel) for is_loop, name, rel in _entries(stmt)]


#: a path inside a block other than the root: nothing under it is loose,
#: and it is not the root realize's (see :func:`_within`)
_DEEP: Path = (("body", None), ("block", None), ("body", None), ("block", None))


# identity of a statement -> (weak reference to it, (the names bound under
# it, with how many times, its BlockRealizes))
_WITHIN: dict[int, tuple] = {}


def _within(stmt) -> tuple:
    """The names the statements under ``stmt`` (itself included) bind, with
    how many times, and its BlockRealizes; kept for as long as ``stmt``
    lives, with its loops and blocks (:func:`_entries`), all from one walk."""
    entry = _WITHIN.get(id(stmt))
    if entry is not None and entry[0]() is stmt:
        return entry[1]
    counts: dict = {}
    realizes: list = []
    found = _scan(stmt, _DEEP, counts, 1, {}, realizes=realizes)
    value = ({name: k for name, k in counts.items() if k}, tuple(realizes))
    _keep(_WITHIN, stmt, value)
    key = id(stmt)
    kept = _ENTRIES.get(key)
    if kept is None or kept[0]() is not stmt:
        n = len(_DEEP)
        _keep(_ENTRIES, stmt, tuple((is_loop, name, p[n:]) for is_loop, name, p in found))
    return value


def _top_statements(roots: list) -> dict:
    """The statements of the replaced subtrees (``roots``: ``(path, node)``)
    that a rewrite may carry over unchanged, id -> path: the roots and what
    is reachable from them without entering a block other than a root. The
    new side's walk recognises them by identity, so a rewrite that rebuilds
    a scope around one moved block tallies only what it changed."""
    out: dict = {}
    twice: set = set()
    stack = list(roots)
    fields_of = STMT_FIELDS.get
    root_ids = {id(node) for _, node in roots}
    while stack:
        p, node = stack.pop()
        key = id(node)
        if key in out:
            twice.add(key)  # held twice: its copies cannot be told apart
        out[key] = p
        if isinstance(node, Block) and key not in root_ids:
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
    loose = 0
    for path, stmt in walk_stmts(func):
        if type(stmt) not in _NEVER_LOOSE and _in_root(path) and _is_loose(stmt):
            loose += 1
        if isinstance(stmt, For):
            name = stmt.loop_var.name
            if name in loops:
                clashes.add(name)
            else:
                loops[name] = (path, 0)
        elif isinstance(stmt, Block):
            name = stmt.name_hint
            if name in blocks:
                clashes.add(name)
            else:
                blocks[name] = (path, 0)
    counts: dict = {}
    for p in func.params:
        counts[p.name] = counts.get(p.name, 0) + 1
    for buf in func.buffer_map.values():
        _buffer_names(buf, counts, 1)
    _tally(func.body, counts, 1)
    mentioned: dict = {}
    for path, stmt in walk_stmts(func):
        if type(stmt) is BlockRealize and path != _ROOT_REALIZE:
            block = stmt.block.name_hint
            for name in buffer_names_in(stmt):
                mentioned.setdefault(name, set()).add(block)
    return FuncIndex(LayeredMap(loops), LayeredMap(blocks),
                     LayeredMap({k: v for k, v in counts.items() if v > 0}), frozenset(clashes), (),
                     LayeredMap({k: frozenset(v) for k, v in mentioned.items()}), (), loose)


#: the path of the function's root BlockRealize, left out of ``mentioned``
_ROOT_REALIZE: Path = (("body", None),)


#: shifts kept unfolded at most; folding rewrites every entry, so it is done
#: once per this many shifts
_MAX_SHIFTS = 32


def _same_fields(a, b, skip: tuple) -> bool:
    """Whether ``a`` and ``b`` (of one type) hold the same objects in every
    field but ``skip``."""
    return all(getattr(a, f) is getattr(b, f) for f in _field_names(type(a)) if f not in skip)


def _narrow(path: Path, old, new, regions: list, delta: dict, shifts: list, gone: list, came: list,
            realizes: list) -> None:
    """Compare the replaced subtree ``old`` with its replacement ``new``,
    descending through what they share, and collect what must be indexed
    again: ``regions`` of ``(old roots, new roots)`` to walk, the names
    bound by rebuilt statements (``delta``), their loops and blocks
    (``gone``/``came``), the BlockRealizes rebuilt in place (``realizes``)
    and, where a sequence changed its length, the shift of the statements
    after the change.

    The point is the sequences: a block inserted into a root of a thousand
    statements is one changed item and one shift, where walking the old and
    the new sequence would visit every item."""
    if old is new:
        return
    kind = type(old)
    fields = STMT_FIELDS.get(kind)
    if kind is not type(new) or not fields or kind is PrimFunc:
        regions.append(([(path, old)], [(path, new)]))
        return
    if kind is SeqStmt:
        a, b = old.seq, new.seq  # indexed and iterated in C: a copy would cost the whole sequence
        n, m = len(a), len(b)
        edit = sequence_edit(new, old)
        if edit is not None:
            # the sequence says which of its items the edit that made it
            # replaced: the others need no comparing, however many they are
            start, removed, _added = edit
            pre, suf = start, n - start - removed
        else:
            pre = _common_head(a, b, min(n, m))
            suf = _common_head(reversed(a), reversed(b), min(n, m) - pre)
        if n == m:
            for k in range(pre, n - suf):
                _narrow(path + (("seq", k),), a[k], b[k], regions, delta, shifts, gone, came, realizes)
            return
        # between the head and the tail, the items kept by identity (a block
        # rebuilt near the start and a stage inserted at the end leave all
        # the items between them as they were): only the gaps between kept
        # items are indexed again, and each gap that changes the length
        # shifts what follows it
        runs = _kept_runs(a, b, pre, n - suf, pre, m - suf) + [(n - suf, m - suf, 0)]
        moves = []
        i0, j0 = pre, pre  # the first old and new positions of the current gap
        for i, j, length in runs:
            if i > i0 or j > j0:
                if i - i0 == j - j0 and i0 == j0:  # rebuilt in place, item by item
                    for k in range(i0, i):
                        _narrow(path + (("seq", k),), a[k], b[k], regions, delta, shifts, gone, came, realizes)
                else:
                    regions.append(([(path + (("seq", k),), a[k]) for k in range(i0, i)],
                                    [(path + (("seq", k),), b[k]) for k in range(j0, j)]))
                if (j - j0) != (i - i0) and i < n:
                    moves.append((path, i, (j - j0) - (i - i0)))
            i0, j0 = i + length, j + length
        # applied from the last gap back, each in the old positions: a
        # shift never moves an item left of an earlier gap
        shifts.extend(reversed(moves))
        return
    if kind is BlockRealize and path != _ROOT_REALIZE:
        realizes.append((old, new))
    if not _same_fields(old, new, fields):
        # the statement itself changed (a loop's extent, a block's buffers):
        # its own names leave and come back
        _tally_one(old, delta, -1)
        _tally_one(new, delta, 1)
        change = _in_root(path) and _is_loose(new) - _is_loose(old)
        if change:
            delta[_LOOSE] = delta.get(_LOOSE, 0) + change
        if kind is For and old.loop_var.name != new.loop_var.name:
            gone.append((True, old.loop_var.name, path))
            came.append((True, new.loop_var.name, path))
        elif kind is Block and old.name_hint != new.name_hint:
            gone.append((False, old.name_hint, path))
            came.append((False, new.name_hint, path))
    for name in fields:
        x, y = getattr(old, name), getattr(new, name)
        if x is y:
            continue
        step = path + ((name, None),)
        if x is None or y is None:
            regions.append(([(step, x)] if x is not None else [], [(step, y)] if y is not None else []))
        else:
            _narrow(step, x, y, regions, delta, shifts, gone, came, realizes)


def _common_head(a, b, limit: int) -> int:
    """How many leading items (at most ``limit``) the iterables ``a`` and
    ``b`` hold as the same objects (lists, or their ``reversed`` views for
    the common tail: nothing is copied). The comparison runs in C (a rewrite of a root of a
    thousand blocks changes a few items and keeps the others) and stops at
    the first item that differs. Identity, not equality: two distinct
    nodes are compared field by field by ``==``, down to their leaves."""
    differs = itertools.islice(map(operator.is_not, a, b), limit)
    return next(itertools.compress(itertools.count(), differs), limit)


#: how far :func:`_kept_runs` looks ahead for the next kept item
_LOOKAHEAD = 8


def _kept_runs(a, b, lo_a: int, hi_a: int, lo_b: int, hi_b: int) -> list[tuple[int, int, int]]:
    """Runs ``(i, j, length)`` of items kept by identity (``b[j + k]`` is
    ``a[i + k]``), increasing in both, among ``a[lo_a:hi_a]`` and
    ``b[lo_b:hi_b]``: each run measured in C, and between runs the next
    kept item looked for a few items ahead, so a few changes among many
    kept items cost the changes, not the items. Past that window, what is
    left is paired by :func:`_kept_items`."""
    runs: list = []
    i, j = lo_a, lo_b
    while i < hi_a and j < hi_b:
        if a[i] is b[j]:
            same = list(map(operator.is_, a[i:hi_a], b[j:hi_b]))
            length = same.index(False) if False in same else len(same)
            runs.append((i, j, length))
            i, j = i + length, j + length
            continue
        # the next kept item: items inserted in b, dropped from a, or replaced
        for d in range(1, _LOOKAHEAD + 1):
            if j + d < hi_b and a[i] is b[j + d]:
                j += d
                break
            if i + d < hi_a and a[i + d] is b[j]:
                i += d
                break
            if i + d < hi_a and j + d < hi_b and a[i + d] is b[j + d]:
                i, j = i + d, j + d
                break
        else:
            runs.extend((x, y, 1) for x, y in _kept_items(a, b, i, hi_a, j, hi_b))
            break
    # an item held twice in ``b`` is kept once and walked again as a new
    # item where it repeats: its names then count twice, which the index
    # reports as a clash (and builds afresh), as for any other name bound twice
    return runs


def _kept_items(a, b, lo_a: int, hi_a: int, lo_b: int, hi_b: int) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of positions, increasing in both, where ``b[j]`` is
    ``a[i]`` (the same object), among ``a[lo_a:hi_a]`` and ``b[lo_b:hi_b]``;
    none when an item is held twice there (its copies cannot be told apart).
    Greedy: an item met out of order counts as changed, which costs only
    a walk of it."""
    where: dict = {}
    for i in range(lo_a, hi_a):
        key = id(a[i])
        if key in where:
            return []
        where[key] = i
    pairs = []
    last = lo_a - 1
    seen: set = set()
    for j in range(lo_b, hi_b):
        key = id(b[j])
        if key in seen:
            return []
        seen.add(key)
        i = where.get(key)
        if i is not None and i > last:
            pairs.append((i, j))
            last = i
    return pairs


def derive_index(old: FuncIndex, path: Path, old_sub, new_sub, new_func: PrimFunc,
                 old_func: PrimFunc | None = None) -> FuncIndex:
    """The index of ``new_func``, which is the old function (``old_func``)
    with ``old_sub`` at ``path`` replaced by ``new_sub``: only what differs
    between the two subtrees, and the path to them, is walked."""
    if old.clashes or old_func is None:
        return build_index(new_func)
    regions: list = []
    delta: dict = {}
    shifts: list = []
    gone: list = []
    came: list = []
    # BlockRealizes rebuilt: (old or None, new or None); those above the
    # path first (rebuilt by the replacement along it)
    realizes: list = []
    for k, step in enumerate(path):
        if step[0] == "block" and k > 1:  # the realize at path[:k]; not the root's
            a, b = get_at(old_func, path[:k]), get_at(new_func, path[:k])
            if a is not b and type(a) is BlockRealize:
                realizes.append((a, b))
    _narrow(path, old_sub, new_sub, regions, delta, shifts, gone, came, realizes)
    for old_roots, new_roots in regions:
        # the new side first: the outer statements of the old side that it
        # reaches unchanged are the shared ones, skipped by both tallies
        shared: dict = {}
        tops = _top_statements(old_roots)
        new_realizes: list = []
        old_realizes: list = []
        for p, node in new_roots:
            came.extend(_scan(node, p, delta, 1, shared, tops, realizes=new_realizes))
        for p, node in old_roots:
            gone.extend(_scan(node, p, delta, -1, shared, realizes=old_realizes))
        realizes.extend((a, None) for a in old_realizes)
        realizes.extend((None, b) for b in new_realizes)
    out = _stated(old, delta, shifts, gone, came, realizes)
    return out if out is not None else build_index(new_func)  # a clash: index the ill-formed result fully


def _recounted(names: LayeredMap, delta: dict) -> LayeredMap:
    """The name counts ``names`` changed by ``delta`` (name -> change); a
    name whose count drops to zero is free again. Nothing is copied when
    nothing changed (see :meth:`LayeredMap.recounted`)."""
    return names.recounted(delta)


def _tally_loops(loops: list, counts: dict, sign: int) -> bool:
    """Count the names ``loops`` bind themselves (as :func:`_tally_one`);
    False, and the counts left part-way, when one of them is loose (its
    bounds name a buffer)."""
    get = counts.get
    for loop in loops:
        if (type(loop.min) in _LEAVES and type(loop.extent) in _LEAVES and loop.thread_binding is None
                and not loop.annotations):
            name = loop.loop_var.name  # the common loop: its variable is all it binds
            counts[name] = get(name, 0) + sign
        elif _is_loose(loop):
            return False
        else:
            _tally_one(loop, counts, sign)
    return True


def derive_nest_index(old: FuncIndex, path: Path, old_nest: list, new_nest: list, *,
                      delta: dict | None = None) -> FuncIndex | None:
    """The index after a loop primitive replaced the perfect nest of loops
    ``old_nest`` (outermost first, the outermost at ``path``; empty when
    the statement at ``path`` itself was wrapped) by the nest ``new_nest``,
    whose innermost body is the old innermost body with loop variables
    substituted in its expressions: the same loops and blocks at the same
    places relative to the body, binding the same names and naming the same
    buffers (split, fuse, add_unit_loop). Only the loops of the two nests are
    looked at, and the entries below them moved down or up; None when that
    cannot be told this cheaply (then :func:`derive_index` is used).
    ``delta`` (name -> change) counts names the rewrite bound or unbound
    below the nest as well, in the same recount."""
    if old.clashes or not new_nest:
        return None
    delta = {} if delta is None else dict(delta)
    if not (_tally_loops(old_nest, delta, -1) and _tally_loops(new_nest, delta, 1)):
        return None  # bounds that name a buffer: the blocks below may name it in a predicate now
    epoch = len(old.shifts)
    swapped = _swapped_loops(old.loop_table, old_nest, new_nest, path, epoch)
    if swapped is None:
        return None  # a clash: the generic derivation indexes it afresh
    removed, added = swapped
    blocks = old.block_table
    below = _entries(old_nest[-1].body if old_nest else new_nest[-1].body)
    if below:
        inner = path + _DOWN * len(new_nest)
        moved: dict = {}
        for is_loop, name, rel in below:
            (added if is_loop else moved)[name] = (inner + rel, epoch)
        if moved:
            blocks = blocks.changed(moved)
    # the entries below the nest were indexed and stay: only the nests'
    # loops change the count
    loops = old.loop_table.changed(added, removed)
    names = _recounted(old.names, delta)
    return FuncIndex(loops, blocks, names, old.clashes, old.shifts, old._mentioned, old._pending, old.loose)


#: the step from a loop to its body
_DOWN = (("body", None),)


def _swapped_loops(loops: LayeredMap, old_nest: list, new_nest: list, top: Path, epoch: int):
    """The changes to the loop table ``loops`` that take the loops of
    ``old_nest`` out and put those of ``new_nest`` (a perfect nest,
    outermost at ``top``) in their place: the names removed and the new
    entries (name -> ``(path, epoch)``), for :meth:`LayeredMap.changed`;
    None when a new loop's name is taken."""
    removed = [loop.loop_var.name for loop in old_nest]
    added: dict = {}
    path = top
    for loop in new_nest:
        name = loop.loop_var.name
        if name in added or (name in loops and name not in removed):
            return None
        added[name] = (path, epoch)
        path = path + _DOWN
    return removed, added


def derive_merge_index(old: FuncIndex, seq_path: Path, seq_len: int, tops: list, old_nests: list,
                       new_nest: list) -> FuncIndex | None:
    """The index after merge replaced perfect nests of loops that are
    items of one sequence by one nest: ``old_nests`` (each outermost
    first) stood at positions ``tops`` of the sequence at ``seq_path``
    (``seq_len`` items), in the order given; the nests but the last are
    removed, the last is replaced by ``new_nest``, whose innermost body is
    a sequence of the old innermost bodies' statements in that order, with
    loop variables substituted in their expressions (so they bind the same
    names and name the same buffers). A sequence left with one statement is
    that statement, as merge leaves it. Only the loops of the nests are
    looked at: the statements after a removed one move up by a shift (see
    :class:`FuncIndex`) and the entries below the old bodies move to their
    place in the new one; None when that cannot be told this cheaply (then
    :func:`derive_index` is used)."""
    if old.clashes or not new_nest or len(set(tops)) != len(tops) or len(tops) != len(old_nests):
        return None
    delta: dict = {}
    for nest in old_nests:
        if not _tally_loops(nest, delta, -1):
            return None  # bounds that name a buffer: the blocks below may name it in a predicate now
    if not _tally_loops(new_nest, delta, 1):
        return None
    body = new_nest[-1].body
    if type(body) is not SeqStmt:
        return None
    # where each old body's statements start in the new one; a body that
    # was a no-op is dropped from a sequence, which this does not follow
    starts = []
    count = 0
    for nest in old_nests:
        starts.append(count)
        inner = nest[-1].body
        count += len(inner.seq) if type(inner) is SeqStmt else 1
    if count != len(body.seq):
        return None
    removed = sorted(tops[:-1])
    if seq_len - len(removed) == 1:
        # every item was a nest: the sequence becomes the merged nest
        top, shifts = seq_path, old.shifts
    else:
        last = tops[-1]
        top = seq_path + (("seq", last - sum(1 for r in removed if r < last)),)
        # applied from the last removed item back, each in the old
        # positions, as derive_index records the gaps of a sequence
        shifts = old.shifts + tuple((seq_path, r + 1, -1) for r in reversed(removed))
    epoch = len(shifts)
    old_loops = [loop for nest in old_nests for loop in nest]
    swapped = _swapped_loops(old.loop_table, old_loops, new_nest, top, epoch)
    if swapped is None:
        return None  # a clash: the generic derivation indexes it afresh
    gone, added = swapped
    inner_path = top + _DOWN * len(new_nest)
    moved: dict = {}
    for nest, start in zip(old_nests, starts):
        inner = nest[-1].body
        flat = type(inner) is SeqStmt
        for is_loop, name, rel in _entries(inner):
            if flat:  # an item of the old body: the same item of the new one, further on
                rel = (("seq", start + rel[0][1]),) + rel[1:]
            else:
                rel = (("seq", start),) + rel
            (added if is_loop else moved)[name] = (inner_path + rel, epoch)
    # the entries below the bodies were indexed and stay: only the nests'
    # loops change the count
    loops = old.loop_table.changed(added, gone)
    blocks = old.block_table.changed(moved)
    if len(shifts) > _MAX_SHIFTS:
        loops, blocks, shifts = _fold(loops, shifts), _fold(blocks, shifts), ()
    names = _recounted(old.names, delta)
    return FuncIndex(loops, blocks, names, old.clashes, shifts, old._mentioned, old._pending, old.loose)


#: rebuilt BlockRealizes kept unsettled at most (see ``FuncIndex.mentioned``)
_MAX_PENDING = 256


def _mentioned(table: LayeredMap, realizes: list) -> LayeredMap:
    """``table`` (buffer or pointer name -> block names) after the
    BlockRealizes in ``realizes`` (``(old, new)``, either None) changed."""
    if not realizes:
        return table
    change: dict = {}  # (name, block) -> +1 / -1, netted
    for a, b in realizes:
        if a is not None:
            block = a.block.name_hint
            for name in buffer_names_in(a):
                change[name, block] = change.get((name, block), 0) - 1
        if b is not None:
            block = b.block.name_hint
            for name in buffer_names_in(b):
                change[name, block] = change.get((name, block), 0) + 1
    per_name: dict = {}
    for (name, block), d in change.items():
        if d:
            per_name.setdefault(name, []).append((block, d))
    if not per_name:
        return table
    out = table.evolver()
    for name, edits in per_name.items():
        found = set(out[name]) if name in out else set()
        for block, d in edits:
            if d > 0:
                found.add(block)
            else:
                found.discard(block)
        if found:
            out[name] = frozenset(found)
        elif name in out:
            del out[name]
    return out.persistent()


def _fold(table: LayeredMap, shifts: tuple) -> LayeredMap:
    """``table`` with every shift applied to its entries (epoch 0 again)."""
    return LayeredMap({name: (_resolve(entry, shifts), 0) for name, entry in table.items()})


def _moved(table: LayeredMap, shifts: tuple, gone: list, came: list, epoch: int) -> LayeredMap | None:
    """``table`` (name -> ``(path, epoch)``) without the entries of the
    replaced subtree (``gone``, current paths before the rewrite's shifts)
    and with those of the new one (``came``, paths after them, stored at
    ``epoch``); None when a new name is already taken (a clash). A name
    that only moved is updated in place, and nothing is copied when nothing
    changed."""
    dropped = set()
    for name, p in gone:
        entry = table.get(name)
        if entry is not None and _resolve(entry, shifts) == p:
            dropped.add(name)
    placed: dict = {}
    for name, p in came:
        if name in placed or (name in table and name not in dropped):
            return None
        placed[name] = p
    # one pass of dictionary look-ups (LayeredMap.changed), not an evolver's calls per name
    return table.changed({name: (p, epoch) for name, p in placed.items()},
                         [name for name in dropped if name not in placed])


# identity -> (weak reference to the function, its index)
_CACHE: dict[int, tuple] = {}


def remember(func: PrimFunc, index: FuncIndex) -> None:
    """Cache ``index`` as the index of ``func`` for as long as ``func`` lives."""
    key = id(func)
    entry = _CACHE.get(key)
    if entry is not None and entry[0]() is func:
        return
    _CACHE[key] = (weakref.ref(func, _forget_in(_CACHE, key)), index)


def index_of(func: PrimFunc) -> FuncIndex:
    """The index of ``func``: cached, or built once and cached."""
    entry = _CACHE.get(id(func))
    if entry is not None and entry[0]() is func:
        return entry[1]
    index = build_index(func)
    remember(func, index)
    return index



def binds_let(node) -> bool:
    """Whether a ``Let`` expression sits inside ``node`` (statements and
    buffers are not entered, as the index counts names): a rewrite that
    rebuilds such expressions without one keeps the names the index counts."""
    counts: dict = {}
    _expr_lets(node, counts, 1)
    return bool(counts)


def leaf_binds_lets(block: Block) -> bool:
    """Whether a Let expression may sit in the block's own fields or in
    the statements of its body and init: told from the names kept for the
    block and for each store (see :func:`_block_names`), without a walk
    where they are kept; True, to be safe, where the body holds statements
    other than stores (alone or in a sequence)."""
    counts: dict = {block.name_hint: 1}
    for iv in block.iter_vars:
        counts[iv.var.name] = counts.get(iv.var.name, 0) + 1
    for buf in block.alloc_buffers:
        _buffer_names(buf, counts, 1)
    for match in block.match_buffers:
        _buffer_names(match.buffer, counts, 1)
    if _block_names(block) != counts:
        return True  # the block's fields bind more than its own names
    for part in (block.init, block.body):
        if part is None:
            continue
        for stmt in (part.seq if type(part) is SeqStmt else (part,)):
            if type(stmt) is not BufferStore or _store_lets(stmt):
                return True
    return False


def _stated(old: FuncIndex, delta: dict, shifts: tuple, gone: list, came: list, realizes: list) -> FuncIndex | None:
    """The end of a derivation whose changes a rewrite stated: ``old``
    with the names counted by ``delta`` (and the change of loose statements
    under ``_LOOSE``), the ``shifts`` recorded after its own, the loops and
    blocks ``gone`` and ``came`` (``(is_loop, name, path)``, current paths
    before and after the shifts) and the BlockRealizes rebuilt
    (``(old or None, new or None)``); None on a clash of names."""
    all_shifts = old.shifts + tuple(shifts)
    epoch = len(all_shifts)
    loops = _moved(old.loop_table, old.shifts, [(n, p) for is_loop, n, p in gone if is_loop],
                   [(n, p) for is_loop, n, p in came if is_loop], epoch)
    blocks = _moved(old.block_table, old.shifts, [(n, p) for is_loop, n, p in gone if not is_loop],
                    [(n, p) for is_loop, n, p in came if not is_loop], epoch)
    if loops is None or blocks is None:
        return None
    return _finished(old, loops, blocks, all_shifts, delta, realizes)


def _finished(old: FuncIndex, loops: LayeredMap, blocks: LayeredMap, shifts: tuple, delta: dict,
              realizes) -> FuncIndex:
    """The derived index: the new tables and every shift (folded into
    them once they pile up), ``old``'s names and loose statements changed
    by ``delta``, and the BlockRealizes rebuilt pending for the table of
    mentions (settled once they pile up)."""
    loose = old.loose + delta.pop(_LOOSE, 0)
    names = _recounted(old.names, delta)
    if len(shifts) > _MAX_SHIFTS:
        loops, blocks, shifts = _fold(loops, shifts), _fold(blocks, shifts), ()
    pending = old._pending + tuple(realizes)
    if len(pending) > _MAX_PENDING:
        return FuncIndex(loops, blocks, names, old.clashes, shifts, _mentioned(old._mentioned, pending),
                         (), loose)
    return FuncIndex(loops, blocks, names, old.clashes, shifts, old._mentioned, pending, loose)


_DOWN = (("body", None),)


def _leaf_or_plain(e) -> bool:
    """Whether ``e`` is a variable, a constant, or plain arithmetic of
    them (no Let, no buffer in it)."""
    return type(e) in _LEAVES or plain_arithmetic(e)


def _new_entries(stmt, path: Path, delta: dict, new_realizes: list) -> list:
    """What :func:`_scan` finds in the new statement ``stmt`` at ``path``
    (its names tallied into ``delta``, its realizes appended to
    ``new_realizes``), a copy stage read from what it is made of (see
    :func:`_plain_stage`)."""
    found = _plain_stage(stmt, path, delta)
    if found is None:
        return _scan(stmt, path, delta, 1, {}, realizes=new_realizes)
    new_realizes.append(get_at(stmt, _DOWN * (len(found) - 1)))  # the stage's realize, below its loops
    return found


def _plain_stage(stage, path: Path, delta: dict) -> list | None:
    """What :func:`_scan` finds in a copy stage (loops over one block that
    stores one element), read from what it is made of: its loops and
    block, with paths from ``path``, and the names they bind tallied into
    ``delta``; None, with ``delta`` untouched, for anything else (a loop
    with a binding or annotations, an expression that is not plain
    arithmetic of variables and constants, a block with more than one
    store), which is scanned instead."""
    loops = []
    node = stage
    while type(node) is For:
        if not (type(node.min) in _LEAVES and type(node.extent) in _LEAVES and node.thread_binding is None
                and not node.annotations):
            return None
        loops.append(node.loop_var.name)
        node = node.body
    if type(node) is not BlockRealize or not all(map(_leaf_or_plain, node.iter_values)) \
            or not _leaf_or_plain(node.predicate):
        return None
    block = node.block
    store = block.body
    if block.init is not None or block.alloc_buffers or block.match_buffers or block.annotations \
            or type(store) is not BufferStore or store.predicate is not None:
        return None
    copied = _copied_value(store.value)
    if copied is None:
        return None
    exprs = list(store.indices) + copied
    for iv in block.iter_vars:
        exprs += (iv.dom.min, iv.dom.extent)
    for region in list(block.reads) + list(block.writes):
        for r in region.region:
            exprs += (r.min, r.extent)
    if not all(map(_leaf_or_plain, exprs)):
        return None
    found = [(True, name, path + _DOWN * k) for k, name in enumerate(loops)]
    found.append((False, block.name_hint, path + _DOWN * len(loops) + (("block", None),)))
    get = delta.get
    for name in loops + [block.name_hint] + [iv.var.name for iv in block.iter_vars]:
        delta[name] = get(name, 0) + 1
    return found


def _copied_value(value) -> list | None:
    """The expressions of a copy stage's stored value that must be plain
    arithmetic for it to bind no name: the indices of a load, or, for a load
    guarded by a condition (``if_then_else(i < n and ..., load, constant)``,
    as pad_einsum copies in), those and the operands of the comparisons;
    None for any other value (or a load with a predicate)."""
    if type(value) is Call and value.op == "tir.if_then_else" and len(value.args) == 3:
        cond, load, other = value.args
        if type(other) not in _LEAVES:
            return None
        out = []
        stack = [cond]
        while stack:
            c = stack.pop()
            if type(c) is And:
                stack += (c.a, c.b)
            elif isinstance(c, CmpOp):
                out += (c.a, c.b)
            else:
                return None
        inner = _copied_value(load) if type(load) is BufferLoad else None
        return None if inner is None else out + inner
    if type(value) is not BufferLoad or value.predicate is not None:
        return None
    return list(value.indices)


def _realizes_along(old_func, new_func, path: Path) -> list:
    """The BlockRealizes rebuilt along ``path`` (the root's left out), as
    :func:`derive_index` collects them: ``(old, new)``."""
    out = []
    for k, step in enumerate(path):
        if step[0] == "block" and k > 1:
            a, b = get_at(old_func, path[:k]), get_at(new_func, path[:k])
            if a is not b and type(a) is BlockRealize:
                out.append((a, b))
    return out


def derive_insert_index(old: FuncIndex, old_func: PrimFunc, new_func: PrimFunc, seq_path: Path, pos: int,
                        stage: Stmt, *, allocs=(), rebuilt=()) -> FuncIndex | None:
    """The index after a rewrite inserted ``stage`` at position ``pos`` of
    the sequence at ``seq_path`` (a sequence in both functions, one item
    longer in the new one), allocated ``allocs`` in the block whose body
    holds the sequence (nothing else of that block changed), and rebuilt the
    BlockRealizes ``rebuilt`` (``(old, new)``) in place: the same
    statements at the same places below them, binding the same names
    (reindex: the block reads the copy at other indices, none of them
    holding a Let). Only the stage is walked; the items after it move by a
    shift. None when that cannot be told this cheaply (then
    :func:`derive_index` is used)."""
    if old.clashes:
        return None
    delta: dict = {}
    for buf in allocs:
        _buffer_names(buf, delta, 1)
    new_realizes: list = []
    stage_path = seq_path + (("seq", pos),)
    came = _new_entries(stage, stage_path, delta, new_realizes)
    realizes = _realizes_along(old_func, new_func, seq_path) + list(rebuilt)
    realizes.extend((None, b) for b in new_realizes)
    old_len = len(get_at(old_func, seq_path).seq)
    shifts = ((seq_path, pos, 1),) if pos < old_len else ()
    return _stated(old, delta, shifts, [], came, realizes)


def derive_renamed_nest_index(old: FuncIndex, path: Path, old_nest: list, new_nest: list, gone: list,
                              came: list) -> FuncIndex | None:
    """:func:`derive_nest_index` for a rewrite that also rebuilt the
    statements below the nest in place, as the same statements at the same
    places naming the same buffers, where the names ``gone`` stopped being
    bound and the names ``came`` started (transform_block_layout: the
    block's iteration variables, renamed; its body read through them holds
    no Let before or after). None when that cannot be told this cheaply."""
    delta: dict = {}
    for name in gone:
        delta[name] = delta.get(name, 0) - 1
    for name in came:
        delta[name] = delta.get(name, 0) + 1
    return derive_nest_index(old, path, old_nest, new_nest, delta=delta)


def derive_init_index(old: FuncIndex, at: Path, in_seq: bool, old_at: Stmt, init_loops: list, init_realize,
                      rpath: Path, old_realize, new_realize) -> FuncIndex | None:
    """The index after decompose_reduction put a new nest before the
    statement ``old_at`` at ``at``: the loops ``init_loops`` (outermost
    first, each the only statement of the one above; none when the init
    goes right before the block) around ``init_realize``. With ``in_seq``
    the statement was an item of a sequence, which gains the nest as an
    item before it; otherwise a sequence of the two takes its place. The
    statement is rebuilt only along the path to the BlockRealize at
    ``rpath`` (``old_realize``), which becomes ``new_realize``: the same
    bindings, its block renamed, without its init, its reads extended by
    regions it writes; every statement off that path is kept.

    Only the new nest, the path and the two blocks' own fields are looked
    at, and the statements off the path are listed from what is kept for
    them (:func:`_entries`). None when that cannot be told this cheaply
    (then :func:`derive_index` is used): a loop of the nest whose bounds
    name a buffer, an init holding anything but stores free of Let
    expressions, a block whose own fields hold a Let expression or that
    declares buffers, or clashing names."""
    if old.clashes or not _plain_init(old_realize.block.init):
        return None
    old_block, update, init_block = old_realize.block, new_realize.block, init_realize.block
    if not (_own_names_plain(old_block) and not init_block.alloc_buffers and not init_block.match_buffers):
        return None
    delta: dict = {}
    if not _tally_loops(init_loops, delta, 1):
        return None  # bounds that name a buffer: loose statements to count
    _tally_one(init_realize, delta, 1)  # a binding that holds a Let (nearly never)
    # the blocks' own names, without a Let in their fields (checked above:
    # the init block's fields and the update block's reads are the old
    # block's, with iteration variables renamed)
    init_names = {init_block.name_hint: 1}
    for iv in init_block.iter_vars:
        init_names[iv.var.name] = init_names.get(iv.var.name, 0) + 1
    update_names = dict(_block_names(old_block))
    update_names[old_block.name_hint] -= 1
    update_names[update.name_hint] = update_names.get(update.name_hint, 0) + 1
    update_names = {name: k for name, k in update_names.items() if k}
    _keep(_BLOCK_NAMES, init_block, init_names)
    _keep(_BLOCK_NAMES, update, update_names)
    for name, k in init_names.items():
        delta[name] = delta.get(name, 0) + k
    delta[old_block.name_hint] = delta.get(old_block.name_hint, 0) - 1
    delta[update.name_hint] = delta.get(update.name_hint, 0) + 1
    rel = rpath[len(at):]
    shifts = old.shifts
    if in_seq:
        # the nest takes the statement's place in the sequence; it and what
        # follows move one item on, recorded as a shift
        parent, k = at[:-1], at[-1][1]
        shifts = shifts + ((parent, k, 1),)
        top, new_at = at, parent + (("seq", k + 1),)
    else:
        top, new_at = at + (("seq", 0),), at + (("seq", 1),)
    epoch = len(shifts)
    # the tables' changes, gathered as plain dictionaries and applied at once
    loop_sets: dict = {}
    block_sets: dict = {}
    if not in_seq:
        # everything under the statement moved one step down
        for is_loop, name, p in _entries_along(old_at, rel):
            (loop_sets if is_loop else block_sets)[name] = (new_at + p, epoch)
    old_name = old_block.name_hint
    block_sets.pop(old_name, None)  # the block is gone, renamed
    down = (("body", None),)
    table = old.loop_table
    for k, loop in enumerate(init_loops):
        name = loop.loop_var.name
        if name in loop_sets or name in table:
            return None  # a clash: the generic derivation indexes it afresh
        loop_sets[name] = (top + down * k, epoch)
    table = old.block_table
    for name, path in ((init_block.name_hint, top + down * len(init_loops) + (("block", None),)),
                       (update.name_hint, new_at + rel + (("block", None),))):
        if name in block_sets or (name != old_name and name in table):
            return None
        block_sets[name] = (path, epoch)
    return _finished(old, old.loop_table.changed(loop_sets), old.block_table.changed(block_sets, (old_name,)),
                     shifts, delta, ((old_realize, new_realize), (None, init_realize)))


def _plain_init(init) -> bool:
    """Whether a block's init is stores (or a sequence of them) free of Let
    expressions: it binds no name and holds no loop or block."""
    stack = [init]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is SeqStmt:
            stack.extend(node.seq)
        elif kind is not BufferStore or _store_lets(node):
            return False
    return True


def _own_names_plain(block: Block) -> bool:
    """Whether the names a block binds itself are its name and iteration
    variables only: it declares no buffer and its fields hold no Let."""
    if block.alloc_buffers or block.match_buffers:
        return False
    return sum(_block_names(block).values()) == 1 + len(block.iter_vars)


def _keep(cache: dict, node, value) -> None:
    """Keep ``value`` for ``node`` in ``cache`` as :func:`_kept_for` does,
    where the caller knows it without computing it."""
    key = id(node)
    cache[key] = (weakref.ref(node, _forget_in(cache, key)), value)


def _keep_same_names(old: Block, new: Block) -> None:
    """Keep, for ``new``, the names kept for ``old`` where that is plainly
    what it binds itself (see :func:`_block_names`): the same name,
    iteration variables and declared buffers, no Let in either's own fields
    (the old one's told from its kept names, the new one's domains and
    regions variables, constants and plain arithmetic). Otherwise nothing is
    kept, and the new block's names are counted from its fields."""
    if new.name_hint != old.name_hint or new.alloc_buffers is not old.alloc_buffers \
            or new.match_buffers or old.match_buffers or len(new.iter_vars) != len(old.iter_vars) \
            or any(a.var.name != b.var.name for a, b in zip(old.iter_vars, new.iter_vars)):
        return
    if _plain_own_fields(new) and _own_names_plain(old):
        _keep(_BLOCK_NAMES, new, _block_names(old))


def _entries_along(stmt, rel: Path) -> list:
    """The loops and blocks under ``stmt`` (itself included), paths
    relative to it, where ``rel`` leads from it to a BlockRealize: the
    statements on the path are looked at, those off it listed from what is
    kept for them; below the realize, only its block and its body (not its
    init)."""
    out = []
    node, prefix = stmt, ()
    for step in rel:
        kind = type(node)
        if kind is For:
            out.append((True, node.loop_var.name, prefix))
        elif kind is Block:
            out.append((False, node.name_hint, prefix))
        for name in STMT_FIELDS.get(kind, ()):
            value = getattr(node, name)
            if type(value) is _PVEC:
                for i, child in enumerate(value):
                    if (name, i) != step:
                        here = prefix + ((name, i),)
                        out.extend((is_loop, n, here + p) for is_loop, n, p in _entries(child))
            elif value is not None and (name, None) != step:
                here = prefix + ((name, None),)
                out.extend((is_loop, n, here + p) for is_loop, n, p in _entries(value))
        node = getattr(node, step[0]) if step[1] is None else getattr(node, step[0])[step[1]]
        prefix = prefix + (step,)
    block = node.block
    here = prefix + (("block", None),)
    out.append((False, block.name_hint, here))
    body = here + (("body", None),)
    out.extend((is_loop, n, body + p) for is_loop, n, p in _entries(block.body))
    return out


def derive_regions_index(old: FuncIndex, old_realize: BlockRealize, new_realize: BlockRealize, dropped,
                         added) -> FuncIndex | None:
    """The index after a rewrite changed only the declared regions (and
    annotations) of one block, whose BlockRealize ``old_realize`` became
    ``new_realize`` at the same path: the regions ``dropped`` were taken out
    and ``added`` put in. Every loop and block keeps its path and every
    name its count, but what the block mentions may change (a buffer only
    its hidden region named; a range that loads from a buffer), so the two
    realizes go to the table of mentions like any rebuilt one. None where a
    region holds a Let expression, whose name the count would lose or gain
    (then :func:`derive_index` is used)."""
    for region in (*dropped, *added):
        # ranges of variables, constants and plain arithmetic (nearly
        # always) hold no Let: the walk is for the others
        if not all(_leaf_or_plain(r.min) and _leaf_or_plain(r.extent) for r in region.region) \
                and binds_let(region):
            return None
    return _finished(old, old.loop_table, old.block_table, old.shifts, {}, ((old_realize, new_realize),))


def derive_scope_index(old: FuncIndex, old_func: PrimFunc, new_func: PrimFunc, scope: Path, added: list,
                       at: Path, in_seq: bool, old_stmt: Stmt, new_stmts: list, *, kept: int | None = None,
                       rebuilt=()) -> FuncIndex | None:
    """The index after a rewrite (rfactor) gave the block at ``scope`` the
    buffers ``added`` to allocate, its other fields kept, and replaced the
    statement ``old_stmt`` at ``at`` below it by the statements
    ``new_stmts``: with ``in_seq`` the statement was an item of a sequence
    and they take its place as items (those after it move on, recorded as a
    shift); otherwise a sequence of them takes its place. Only the two
    sides of the replacement are walked (as :func:`derive_index` walks what
    changed), and the block's own names are those it had and the new
    buffers': neither its other fields nor the rest of its body are looked
    at. None when the index has clashes (then :func:`derive_index` is used).

    ``kept``, where given, is the position among ``new_stmts`` of
    ``old_stmt`` rebuilt in place (cache_inplace's redirected block): the
    same statements at the same places below it, binding the same names,
    with the BlockRealizes ``rebuilt`` (``(old, new)``) rebuilt in it.
    Neither side of it is walked: as an item it moves with those after it
    by shifts; where a sequence took its place, what is kept for it
    (:func:`_entries`) moves one step down."""
    if old.clashes:
        return None
    delta: dict = {}
    for buf in added:
        _buffer_names(buf, delta, 1)
    # BlockRealizes rebuilt along the path (the scope's own among them,
    # which now mentions the new buffers); not the function's root
    realizes = _realizes_along(old_func, new_func, at)
    if kept is not None:
        return _kept_in_scope(old, delta, realizes, at, in_seq, old_stmt, new_stmts, kept, rebuilt)
    shifts: tuple = ()
    if in_seq:
        seq, k = at[:-1], at[-1][1]
        places = [seq + (("seq", k + j),) for j in range(len(new_stmts))]
        if len(new_stmts) != 1:
            shifts = ((seq, k + 1, len(new_stmts) - 1),)
    else:
        places = [at + (("seq", j),) for j in range(len(new_stmts))]
    old_realizes: list = []
    new_realizes: list = []
    gone = _taken_out(old_stmt, at, delta, old_realizes)
    came = []
    for place, stmt in zip(places, new_stmts):
        # a copy stage among them (cache_inplace's) is read from what it is made of
        came.extend(_new_entries(stmt, place, delta, new_realizes))
    realizes.extend((a, None) for a in old_realizes)
    realizes.extend((None, b) for b in new_realizes)
    return _stated(old, delta, shifts, gone, came, realizes)  # None on a clash: derive_index then


def _kept_in_scope(old: FuncIndex, delta: dict, realizes: list, at: Path, in_seq: bool, old_stmt: Stmt,
                   new_stmts: list, kept: int, rebuilt) -> FuncIndex | None:
    """:func:`derive_scope_index` where ``new_stmts[kept]`` is ``old_stmt``
    rebuilt in place: only the other new statements are walked."""
    n = len(new_stmts)
    gone: list = []
    came: list = []
    if in_seq:
        # the statements before the kept one push it (and those after it)
        # on; then those after it push the items that followed it on
        seq, k = at[:-1], at[-1][1]
        shifts = []
        if kept:
            shifts.append((seq, k, kept))
        if kept + 1 < n:
            shifts.append((seq, k + kept + 1, n - kept - 1))
        places = [seq + (("seq", k + j),) for j in range(n)]
    else:
        # a sequence takes its place: everything below it moves one step down
        shifts = []
        places = [at + (("seq", j),) for j in range(n)]
        here = places[kept]
        for is_loop, name, rel in _entries(old_stmt):
            gone.append((is_loop, name, at + rel))
            came.append((is_loop, name, here + rel))
    new_realizes: list = []
    for j, (place, stmt) in enumerate(zip(places, new_stmts)):
        if j != kept:
            came.extend(_new_entries(stmt, place, delta, new_realizes))
    realizes.extend(rebuilt)
    realizes.extend((None, b) for b in new_realizes)
    return _stated(old, delta, tuple(shifts), gone, came, realizes)  # None on a clash: derive_index then


def derive_stages_index(old: FuncIndex, old_func: PrimFunc, new_func: PrimFunc, scope: Path, added: list,
                        at: Path, before: list, after: list, rebuilt: list) -> FuncIndex | None:
    """The index after a rewrite (pad_einsum) gave the block at ``scope``
    the buffers ``added`` to allocate, its other fields kept, put the
    statements ``before`` and ``after`` around the item at ``at`` of a
    sequence in that block's body, and rebuilt that item in place along
    one path: ``rebuilt`` holds the statements rebuilt there, ``(old,
    new)``, each of the same kind with the same statements at the same
    places below it (only its own fields changed: a loop's extent, a
    realize's predicate, a block's domains and buffers). Only the new
    statements and the rebuilt ones' own fields are looked at; the item and
    those after it move on by shifts. None when that cannot be told this
    cheaply (then :func:`derive_index` is used)."""
    if old.clashes or not at or at[-1][0] != "seq":
        return None
    seq_path, k = at[:-1], at[-1][1]
    seq = get_at(old_func, seq_path)
    if type(seq) is not SeqStmt:
        return None
    delta: dict = {}
    for buf in added:
        _buffer_names(buf, delta, 1)
    realizes = _realizes_along(old_func, new_func, at)
    loose = 0
    for a, b in rebuilt:
        if type(a) is Block:
            _keep_same_names(a, b)
        _tally_one(a, delta, -1)
        _tally_one(b, delta, 1)
        loose += _is_loose(b) - _is_loose(a)
        if type(a) is BlockRealize:
            realizes.append((a, b))
    if loose and _in_root(at):  # the rebuilt statements above the block lie where the item does
        delta[_LOOSE] = delta.get(_LOOSE, 0) + loose
    # the items from the old one on move by what was put before it, those
    # after it by what was put after it as well: recorded as shifts, the
    # later items first (as derive_index records the gaps of a sequence)
    shifts = []
    if after and k + 1 < len(seq.seq):
        shifts.append((seq_path, k + 1, len(after)))
    if before:
        shifts.append((seq_path, k, len(before)))
    new_realizes: list = []
    came: list = []
    places = [k + j for j in range(len(before))] + [k + len(before) + 1 + j for j in range(len(after))]
    for place, stmt in zip(places, list(before) + list(after)):
        path = seq_path + (("seq", place),)
        came.extend(_new_entries(stmt, path, delta, new_realizes))
    realizes.extend((None, b) for b in new_realizes)
    return _stated(old, delta, tuple(shifts), [], came, realizes)  # None on a clash: derive_index then


def derive_replaced_index(old: FuncIndex, old_func: PrimFunc, new_func: PrimFunc, path: Path, old_stmt: Stmt,
                          came: list, delta: dict, realizes: list) -> FuncIndex | None:
    """The index after a rewrite (loop_partition) replaced the statement
    ``old_stmt`` at ``path`` by one whose loops and blocks the rewrite
    states: ``came`` (``(is_loop, name, path)``), the names it binds where
    ``old_stmt`` bound others (``delta``, name -> change, with the names
    of ``old_stmt`` taken out), and the BlockRealizes it rebuilt
    (``realizes``: ``(old or None, new or None)``, those under the two
    statements). The new statement lies inside a block of its own, so
    nothing in it is loose. The old statement's loops and blocks are
    listed from what is kept for it (:func:`_entries`); None when that
    cannot be told this cheaply (then :func:`derive_index` is used)."""
    if old.clashes or path == _ROOT_REALIZE:
        return None
    delta = dict(delta)
    if _in_root(path):
        loose = _loose_within(old_stmt)
        if loose:
            delta[_LOOSE] = delta.get(_LOOSE, 0) - loose
    gone = [(is_loop, name, path + rel) for is_loop, name, rel in _entries(old_stmt)]
    return _stated(old, delta, (), gone, came, _realizes_along(old_func, new_func, path) + list(realizes))


def derive_inline_index(old: FuncIndex, old_func: PrimFunc, new_func: PrimFunc, removal: Path, removed: Stmt,
                        rebuilt: list, dropped: list, *, same_lets: bool = False) -> FuncIndex | None:
    """The index after an inlining deleted the statement ``removed``, an
    item of a sequence at ``removal`` that keeps at least two items,
    rebuilt statements in place (``rebuilt``: ``(path, old, new)``, paths
    in the old function, none around the removed statement), each with
    the same loops and blocks at the same places below it, and dropped
    the buffers ``dropped`` from the allocations of the block above them
    (compute_inline, reverse_compute_inline). Only the removed and the
    rebuilt statements are walked, to count the names they bind; the
    items after the removed one move up by a shift. None when that cannot
    be told this cheaply (then :func:`derive_index` is used).

    ``same_lets`` says that each rebuilt store binds the Let names the
    store it replaced bound, and a rebuilt predicate binds none (the
    values the inlining moved hold no Let): a rebuilt reader that is one
    store in a block whose other fields kept their names is then not
    walked (see :func:`_same_reader`)."""
    if old.clashes:
        return None
    seq_path, (kind, k) = removal[:-1], removal[-1]
    seq = get_at(old_func, seq_path)
    if kind != "seq" or type(seq) is not SeqStmt or len(seq.seq) < 3:
        return None  # a sequence left with one item becomes that item: its paths change
    n = len(removal)
    if any(removal[:len(p)] == p or p[:n] == removal for p, _, _ in rebuilt):
        return None  # a rebuilt statement holds the removed one, or the other way round
    delta: dict = {}
    for buf in dropped:
        _buffer_names(buf, delta, -1)
    old_realizes: list = []
    new_realizes: list = []
    realizes_kept: list = []
    gone = _taken_out(removed, removal, delta, old_realizes)
    for path, before, after in rebuilt:
        if same_lets and _same_reader(before, after):
            realizes_kept.append((before, after))
            continue
        was = _taken_out(before, path, delta, old_realizes)
        now = _scan(after, path, delta, 1, {}, realizes=new_realizes)
        if was != now:
            return None  # a loop or block moved, came or went below it
    realizes = _realizes_along(old_func, new_func, removal) + realizes_kept
    realizes.extend((a, None) for a in old_realizes)
    realizes.extend((None, b) for b in new_realizes)
    return _stated(old, delta, ((seq_path, k + 1, -1),), gone, [], realizes)


def _same_reader(before, after) -> bool:
    """Whether the BlockRealize ``after`` binds the names ``before`` binds,
    with its loops and blocks where they were, told without a walk where
    its stores' Let names are known to be the same (see
    :func:`derive_inline_index`): both are one store in a block, with the
    same bindings (the predicate the same, or a new one over a variable or
    constant), the same name, iteration variables, buffers and init, no
    Let in the old block's own fields and none in the new one's regions
    (variables, constants and plain arithmetic)."""
    if type(before) is not BlockRealize or type(after) is not BlockRealize \
            or before.iter_values is not after.iter_values \
            or not (before.predicate is after.predicate or type(before.predicate) in _LEAVES):
        return False
    a, b = before.block, after.block
    if type(a.body) is not BufferStore or type(b.body) is not BufferStore or a.init is not b.init \
            or a.name_hint != b.name_hint or a.iter_vars is not b.iter_vars \
            or a.alloc_buffers is not b.alloc_buffers or a.match_buffers or b.match_buffers:
        return False
    return _plain_regions(itertools.chain(b.reads, b.writes)) and _own_names_plain(a)


def derive_move_index(old: FuncIndex, old_func: PrimFunc, new_func: PrimFunc, removal: Path, removed: Stmt,
                      loop_path: Path, loop: For, position: int, nest: Stmt) -> FuncIndex | None:
    """The index after a block was moved under a loop (compute_at,
    reverse_compute_at): ``removed``, an item of a sequence at ``removal``,
    was loops (none of them naming a buffer) over the block's
    BlockRealize; ``nest``, new loops over a new
    BlockRealize of the same Block, was put at ``position`` among the
    statements of ``loop`` (at ``loop_path`` in the old function), whose
    body became a sequence if it was not one. Only the two nests' loops and
    realizes are looked at: the items after the removed one move up by a
    shift, the statements of the loop after the new nest move on by one
    (by a shift, or, where the loop's body was one statement, each entry
    below it moved into the new sequence), and the block with everything
    below it moves to its new place. A sequence left with one item
    becomes that item: the entries below it are read from the new item,
    which must hold the loop. None when that cannot be told this cheaply
    (then :func:`derive_index` is used)."""
    if old.clashes:
        return None
    seq_path, (kind, k) = removal[:-1], removal[-1]
    seq = get_at(old_func, seq_path)
    if kind != "seq" or type(seq) is not SeqStmt or len(seq.seq) < 2:
        return None
    old_loops, old_realize = _loops_over(removed)
    new_loops, new_realize = _loops_over(nest)
    if old_realize is None or new_realize is None or new_realize.block is not old_realize.block:
        return None
    delta: dict = {}
    if not (_tally_loops(old_loops, delta, -1) and _tally_loops(new_loops, delta, 1)):
        return None  # bounds that name a buffer: loose statements come or go
    _tally_one(old_realize, delta, -1)
    _tally_one(new_realize, delta, 1)
    realizes = _realizes_along(old_func, new_func, _common_path(loop_path, seq_path))
    realizes.append((old_realize, new_realize))
    old_block = removal + _DOWN * len(old_loops) + (_INTO_BLOCK,)
    inside = _entries(old_realize.block)
    if len(seq.seq) == 2:
        # the sequence left with one item becomes that item, one step up:
        # every entry below it moves, read from the new item (which holds
        # the loop, and the moved block under it)
        other = seq_path + (("seq", 1 - k),)
        if loop_path[:len(other)] != other:
            return None
        gone = [(is_loop, name, other + rel) for is_loop, name, rel in _entries(seq.seq[1 - k])]
        gone.extend((True, lp.loop_var.name, removal + _DOWN * j) for j, lp in enumerate(old_loops))
        gone.extend((is_loop, name, old_block + rel) for is_loop, name, rel in inside)
        came = [(is_loop, name, seq_path + rel) for is_loop, name, rel in _entries(get_at(new_func, seq_path))]
        return _stated(old, delta, (), gone, came, realizes)  # None on a clash: derive_index then
    removal_shift = (seq_path, k + 1, -1)
    moved_loop = _resolve((loop_path, 0), (removal_shift,))
    body = moved_loop + _DOWN
    shifts = [removal_shift]
    gone: list = []
    came: list = []
    if type(loop.body) is SeqStmt:
        shifts.append((body, position, 1))
    else:
        # the one statement becomes an item of the new sequence: what is
        # below it moves one step down
        below = _entries(loop.body)
        old_body = loop_path + _DOWN
        new_body = body + (("seq", 1 - position),)
        gone.extend((is_loop, name, old_body + rel) for is_loop, name, rel in below)
        came.extend((is_loop, name, new_body + rel) for is_loop, name, rel in below)
    gone.extend((True, lp.loop_var.name, removal + _DOWN * j) for j, lp in enumerate(old_loops))
    place = body + (("seq", position),)
    came.extend((True, lp.loop_var.name, place + _DOWN * j) for j, lp in enumerate(new_loops))
    new_block = place + _DOWN * len(new_loops) + (_INTO_BLOCK,)
    gone.extend((is_loop, name, old_block + rel) for is_loop, name, rel in inside)
    came.extend((is_loop, name, new_block + rel) for is_loop, name, rel in inside)
    return _stated(old, delta, tuple(shifts), gone, came, realizes)  # None on a clash: derive_index then


def _loops_over(stmt) -> tuple[list, BlockRealize | None]:
    """The loops of a nest that leads to one BlockRealize, outermost first,
    and that realize; ``(loops, None)`` when it leads elsewhere."""
    loops = []
    while type(stmt) is For:
        loops.append(stmt)
        stmt = stmt.body
    return loops, (stmt if type(stmt) is BlockRealize else None)


def _common_path(a: Path, b: Path) -> Path:
    """The longest path both ``a`` and ``b`` start with."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return a[:k]


__all__ = ["FuncIndex", "Located", "build_index", "derive_index", "derive_init_index", "derive_inline_index",
           "derive_merge_index", "derive_move_index", "derive_nest_index", "derive_regions_index", "derive_scope_index",
           "derive_replaced_index", "derive_stages_index", "index_of",
           "remember"]
