"""What merging loop nests may reorder, and whether that keeps the meaning.

``merge`` runs, in each iteration of the merged nest, the nests' bodies one
after another: where the program ran all of the first nest before any of
the second, it now interleaves them iteration by iteration, in the order
the loops were given, and it moves every nest to the place of the last one
given, past the statements between them. TVM's merge checks none of this.
Here a merge is allowed where no buffer carries a dependence that the new
order would break:

* two nests that share a buffer one of them writes are merged only in
  their program order, and only where different iterations of the merged
  nest touch different elements of it: each merged level of more than one
  iteration is by itself the index of one dimension, the same in both
  nests. An element is then used by both in one iteration only, first by
  the nest that used it first before;
* a nest moved past a statement shares no buffer with it that one of them
  writes.

Accesses are read from what a nest holds: the regions the blocks in it
state (their iteration variables bound to the loops), and the loads and
stores outside blocks. A pointer named outside the blocks (``B.data``
passed to a call) may reach any buffer: it counts as writing every buffer
(:data:`OPAQUE`).
"""

from __future__ import annotations

from ..analysis.arith import detect_iter_map
from ..analysis.traversal import iter_children, stmt_children, stmt_nodes
from ..nodes import (
    Add, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Cast, For, IntImm, Max, Min, Mul, Stmt,
    Var,
)
from .checks import statements_outside_blocks
from .exprs import find_nodes, substitute_expr, var_names

#: the name the accesses through a pointer outside the blocks go under
OPAQUE = ""


class NestAccesses:
    """The accesses of a nest's innermost body (see :func:`nest_accesses`).

    ``uses`` maps a buffer's name to its uses there, each ``(writes,
    buffer, indices or the stated region, the BlockRealize stating it or
    None)``. :meth:`indices` reads a buffer's uses, on asking (most buffers
    are used by one nest only), in the merged levels' variables: the
    nest's loop variables renamed to the levels, a block's iteration
    variables to their bound values, an index naming a loop inside the
    body not one expression of the levels."""

    __slots__ = ("uses", "_loop_vars", "_levels", "_loose", "_mapping", "_widths", "_inner", "_values")

    def __init__(self, uses: dict, loop_vars: list, levels: list, loose: list):
        self.uses = uses
        self._loop_vars, self._levels, self._loose = loop_vars, levels, loose
        self._mapping = None
        self._values: dict = {}

    def writes(self, name: str) -> bool:
        """Whether one of the uses of buffer ``name`` writes it."""
        for use in self.uses.get(name, ()):
            if use[0]:
                return True
        return False

    def indices(self, name: str) -> list[tuple]:
        """Per use of buffer ``name``, per dimension the index in the
        merged levels' variables, or None where it is not one expression of
        them (a range, or an index naming a loop inside the nest's body)."""
        if self._mapping is None:
            mapping, inner = {}, set()
            for v, level in zip(self._loop_vars, self._levels):
                if v is not level:
                    mapping[v] = level
            for stmt in self._loose:
                if type(stmt) is For:
                    inner.add(stmt.loop_var.name)
            self._mapping, self._inner = mapping, inner
            # inside an expression, a level replacing a loop of another
            # width (an int64 nest merged with an int32 one) is read in the
            # loop's
            self._widths = {v: level if level.dtype == v.dtype else Cast(v.dtype, level)
                            for v, level in mapping.items()}
        mapping, inner = self._mapping, self._inner
        out = []
        for _, _, exprs, realize in self.uses.get(name, ()):
            stated = type(exprs) is BufferRegion
            values = None if realize is None else self._values_of(realize)
            index = []
            for e in (exprs.region if stated else exprs):
                if stated:
                    # a dimension of extent 1 is indexed by its start; a wider one by no single expression
                    extent = e.extent
                    e = e.min if isinstance(extent, IntImm) and extent.value == 1 else None
                if e is None:
                    index.append(None)
                    continue
                if values:
                    e = values.get(e, e) if type(e) is Var else substitute_expr(e, values)
                if type(e) is Var:
                    # the common index: a loop variable, renamed where it is the nest's
                    index.append(None if e.name in inner else mapping.get(e, e) if mapping else e)
                else:
                    index.append(self._component(e))
            out.append(tuple(index))
        return out

    def _values_of(self, realize: BlockRealize) -> dict:
        """The block's iteration variables -> their bound values."""
        values = self._values.get(id(realize))
        if values is None:
            block = realize.block
            values = self._values[id(realize)] = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
        return values

    def _component(self, e):
        """The index ``e`` (no variable; its block's bindings substituted)
        in the levels' variables, or None where it names a loop inside the
        body."""
        names = () if type(e) is IntImm else var_names(e)
        if self._inner and any(n in self._inner for n in names):
            return None
        return substitute_expr(e, self._widths) if self._mapping else e


def nest_accesses(body: Stmt, loop_vars: list, levels: list) -> NestAccesses:
    """The accesses of a nest's innermost ``body``, by buffer name, its
    loop variables ``loop_vars`` (outermost first) renamed to ``levels``."""
    realizes, loose = _parts(body)
    out: dict[str, list] = {}
    for realize in realizes:
        block = realize.block
        for writes, regions in ((False, block.reads), (True, block.writes)):
            for region in regions:
                use = (writes, region.buffer, region, realize)
                uses = out.get(region.buffer.name)
                if uses is None:
                    out[region.buffer.name] = [use]
                else:
                    uses.append(use)
    for stmt in loose:
        kind = type(stmt)
        if kind is For and type(stmt.min) is IntImm and type(stmt.extent) is IntImm:
            continue  # a loop of literal bounds loads nothing itself
        if kind is BufferStore:
            out.setdefault(stmt.buffer.name, []).append((True, stmt.buffer, stmt.indices, None))
        # the expressions the statement holds itself: its statements are met
        # on their own, and constants and variables load nothing
        exprs = (stmt.min, stmt.extent) if kind is For else iter_children(stmt)
        for child in exprs:
            if isinstance(child, Stmt) or type(child) is IntImm:
                continue
            if type(child) is Var:
                if child.dtype.is_handle:
                    out.setdefault(OPAQUE, []).append((True, None, (None,), None))
                continue
            for load in find_nodes(child, (BufferLoad,)):
                out.setdefault(load.buffer.name, []).append((False, load.buffer, load.indices, None))
            if _names_pointer(child):
                out.setdefault(OPAQUE, []).append((True, None, (None,), None))
    return NestAccesses(out, loop_vars, levels, loose)


def loose_dependence(body: Stmt, loops: list, *, updates_commute: bool = False) -> str | None:
    """The name of a buffer that makes it unsafe to run the iterations of
    ``loops`` (a chain around ``body``) in another order or at once, or
    None. Blocks promise that their instances are independent, so only a
    buffer that a statement outside the blocks uses is looked at, where
    something under the loops writes it: two of its uses, one a write,
    must meet only in one iteration (each loop of more than one iteration
    is by itself the index of one dimension in both, see :func:`pointwise`;
    or the two use the same indices, which map the iterations one to one).
    A pointer named outside the blocks gives
    :data:`OPAQUE`. With ``updates_commute`` (an order that changes, as
    reorder's), a buffer that the statements only update in place,
    ``X[i] = X[i] + e`` with ``e`` not reading ``X`` (or ``*``, ``min``,
    ``max``), is left alone: its updates commute, as a reduction block's
    do, which reorder also reorders."""
    realizes, loose = _parts(body)
    if all(type(s) is For and type(s.min) is IntImm and type(s.extent) is IntImm for s in loose):
        return None  # blocks under loops of literal bounds, the common nest: nothing bare
    loop_vars = [loop.loop_var for loop in loops]
    levels = [loop.loop_var for loop in loops
              if not (type(loop.extent) is IntImm and loop.extent.value == 1)]
    accesses = nest_accesses(body, loop_vars, loop_vars)
    for name in sorted(accesses.uses):
        uses = accesses.uses[name]
        if not any(use[3] is None for use in uses):
            continue  # used by blocks only
        if name == OPAQUE:
            return OPAQUE
        if not accesses.writes(name) or not levels:
            continue
        if updates_commute and _only_updated(realizes, loose, name):
            continue
        indices = accesses.indices(name)
        for k, (writes, _, _, _) in enumerate(uses):
            if not writes:
                continue
            for other in indices:
                if not pointwise(indices[k], other, levels) and not _one_to_one(indices[k], other, loops):
                    return name
    return None


_COMMUTING = (Add, Mul, Min, Max)


def _only_updated(realizes: list, loose: list, name: str) -> bool:
    """Whether every use of buffer ``name`` in a body (its :func:`_parts`)
    is a commuting update in place, ``X[i] = X[i] + e``, all of one kind
    (all ``+``, all ``*``...), with no other load of ``X``, and no block of
    it states a region of it."""
    for realize in realizes:
        block = realize.block
        if any(r.buffer.name == name for r in (*block.reads, *block.writes)):
            return False
    updates = 0
    kinds = set()
    for stmt in loose:
        if type(stmt) is BufferStore and stmt.buffer.name == name:
            value = stmt.value
            if type(value) not in _COMMUTING:
                return False
            # updates of one kind commute; ``+`` and ``*`` of one element do not
            kinds.add(type(value))
            if len(kinds) > 1:
                return False
            own = BufferLoad(stmt.buffer, stmt.indices)
            if value.a == own:
                other = value.b
            elif value.b == own:
                other = value.a
            else:
                return False
            if any(load.buffer.name == name for load in find_nodes(other, (BufferLoad,))):
                return False
            updates += 1
    loads = sum(1 for stmt in loose for child in iter_children(stmt) if not isinstance(child, Stmt)
                for load in find_nodes(child, (BufferLoad,)) if load.buffer.name == name)
    return updates > 0 and loads == updates


def _one_to_one(mine: tuple, other: tuple, loops: list) -> bool:
    """Whether two uses at the same indices meet only in one iteration: the
    indices map the loops' iterations one to one (``B[l_0 * 3 + l_1]`` after
    a split), as TVM's iterator maps read a bijective binding."""
    if mine != other or any(i is None for i in mine):
        return False
    return detect_iter_map(list(mine), {loop.loop_var.name: loop for loop in loops}, "bijective") is not None


def touched(stmt: Stmt) -> tuple[set, set]:
    """The names of the buffers ``stmt`` reads and writes, by what it holds:
    the stated regions of its blocks, and its loads and stores; a pointer
    it names outside its blocks writes :data:`OPAQUE`."""
    reads, writes = set(), set()
    realizes, loose = _parts(stmt)
    for node in stmt_nodes(stmt):
        if type(node) is Block:
            reads |= {r.buffer.name for r in node.reads}
            writes |= {w.buffer.name for w in node.writes}
        elif type(node) is BufferStore:
            writes.add(node.buffer.name)
    reads |= {n.buffer.name for n in find_nodes(stmt, (BufferLoad,))}
    for node in loose:
        for child in iter_children(node):
            if not isinstance(child, Stmt) and _names_pointer(child):
                writes.add(OPAQUE)
    return reads, writes


def pointwise(left: tuple, right: tuple, levels: list) -> bool:
    """Whether two uses of one buffer, ``left`` and ``right`` (their
    indices, see :meth:`NestAccesses.indices`), meet only in the same
    iteration of the merged nest: each of the ``levels`` (the merged loops
    of more than one iteration) is, by itself, the index of one dimension
    in both, so that different iterations touch different elements."""
    for level in levels:
        # the level itself (the common case) or a variable equal to it
        for x, y in zip(left, right):
            if ((x is level or type(x) is Var and x == level)
                    and (y is level or type(y) is Var and y == level)):
                break
        else:
            return False
    return True


def conflict(a_reads: set, a_writes: set, b_reads: set, b_writes: set) -> str | None:
    """The name of a buffer one side writes and the other touches, or None;
    :data:`OPAQUE` where a pointer named outside the blocks may reach what
    the other side touches."""
    if (OPAQUE in a_writes and (b_reads or b_writes)) or (OPAQUE in b_writes and (a_reads or a_writes)):
        return OPAQUE
    for name in sorted(a_writes & (b_reads | b_writes)):
        return name
    for name in sorted(b_writes & a_reads):
        return name
    return None


def _names_pointer(expr) -> bool:
    """Whether ``expr`` names a pointer (a handle variable, such as
    ``B.data``) other than as the buffer of a load."""
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is Var:
            if node.dtype.is_handle:
                return True
        elif kind is not Buffer and kind is not IntImm:
            stack.extend(iter_children(node))
    return False


def _parts(body: Stmt) -> tuple[list[BlockRealize], list[Stmt]]:
    """The BlockRealizes under ``body`` that no other block holds, and the
    statements under it that no block holds."""
    if type(body) is BlockRealize:
        return [body], []
    # a chain of loops down to one block (the common nest body): its loops
    # are what the walk below gives, in its order, without the walk
    chain = []
    node = body
    while type(node) is For:
        chain.append(node)
        node = node.body
    if type(node) is BlockRealize:
        return [node], chain
    loose = [s for _, s in statements_outside_blocks(body, ())]
    return [c for s in loose for _, c in stmt_children(s) if type(c) is BlockRealize], loose


def buffer_words(name: str) -> str:
    """How a message names the buffer ``name`` (:data:`OPAQUE`: any buffer
    a pointer reaches)."""
    return "a buffer through a pointer" if name == OPAQUE else f"buffer {name}"


__all__ = ["buffer_words", "OPAQUE", "NestAccesses", "nest_accesses", "touched", "pointwise", "conflict",
           "loose_dependence"]
