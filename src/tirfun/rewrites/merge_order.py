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

from ..analysis.traversal import iter_children, stmt_children, walk_stmts
from ..nodes import Block, BlockRealize, Buffer, BufferLoad, BufferStore, For, IntImm, Stmt, Var
from .checks import statements_outside_blocks
from .exprs import find_nodes, substitute_expr, var_names

#: the name the accesses through a pointer outside the blocks go under
OPAQUE = ""


class Access:
    """One use of a buffer in a nest: ``buffer``, ``writes``, and, worked
    out on first asking (most buffers are used by one nest only),
    :meth:`indices`: per dimension the index in the merged levels'
    variables, or None where it is not one expression of them (a range,
    or an index naming a loop inside the nest's body)."""

    __slots__ = ("buffer", "writes", "_exprs", "_values", "_nest", "_indices")

    def __init__(self, buffer, writes: bool, exprs, values, nest):
        self.buffer, self.writes = buffer, writes
        self._exprs, self._values, self._nest, self._indices = exprs, values, nest, None

    def indices(self) -> tuple:
        if self._indices is None:
            self._indices = tuple(None if e is None else self._nest.component(e, self._values)
                                  for e in self._exprs)
        return self._indices


class _Nest:
    """What the indices of a nest's accesses are read with: its loop
    variables renamed to the levels, and the loops inside its body."""

    __slots__ = ("mapping", "inner")

    def __init__(self, mapping: dict, inner: set):
        self.mapping, self.inner = mapping, inner

    def component(self, e, values):
        if values:
            e = substitute_expr(e, values)
        kind = type(e)
        names = () if kind is IntImm else (e.name,) if kind is Var else var_names(e)
        if self.inner and any(n in self.inner for n in names):
            return None
        return substitute_expr(e, self.mapping) if self.mapping else e


def nest_accesses(body: Stmt, loop_vars: list, levels: list) -> dict[str, list[Access]]:
    """The accesses of a nest's innermost ``body``, by buffer name, its
    loop variables ``loop_vars`` (outermost first) renamed to ``levels``."""
    realizes, loose = _parts(body)
    nest = _Nest({v: l for v, l in zip(loop_vars, levels) if v is not l},
                 {s.loop_var.name for s in loose if type(s) is For})
    out: dict[str, list[Access]] = {}
    for realize in realizes:
        block = realize.block
        values = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
        for regions, writes in ((block.reads, False), (block.writes, True)):
            for region in regions:
                exprs = [r.min if _is_one(r.extent) else None for r in region.region]
                out.setdefault(region.buffer.name, []).append(Access(region.buffer, writes, exprs, values, nest))
    for stmt in loose:
        kind = type(stmt)
        if kind is BufferStore:
            out.setdefault(stmt.buffer.name, []).append(Access(stmt.buffer, True, stmt.indices, None, nest))
        # the expressions the statement holds itself: its statements are met
        # on their own, and constants and variables load nothing
        exprs = (stmt.min, stmt.extent) if kind is For else iter_children(stmt)
        for child in exprs:
            if isinstance(child, Stmt) or type(child) is IntImm:
                continue
            if type(child) is Var:
                if child.dtype.is_handle:
                    out.setdefault(OPAQUE, []).append(Access(None, True, (None,), None, nest))
                continue
            for load in find_nodes(child, (BufferLoad,)):
                out.setdefault(load.buffer.name, []).append(Access(load.buffer, False, load.indices, None, nest))
            if _names_pointer(child):
                out.setdefault(OPAQUE, []).append(Access(None, True, (None,), None, nest))
    return out


def touched(stmt: Stmt) -> tuple[set, set]:
    """The names of the buffers ``stmt`` reads and writes, by what it holds:
    the stated regions of its blocks, and its loads and stores; a pointer
    it names outside its blocks writes :data:`OPAQUE`."""
    reads, writes = set(), set()
    realizes, loose = _parts(stmt)
    for _, node in walk_stmts(stmt):
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


def pointwise(a: Access, b: Access, levels: list) -> bool:
    """Whether accesses ``a`` and ``b`` of one buffer meet only in the same
    iteration of the merged nest: each of the ``levels`` (the merged loops
    of more than one iteration) is, by itself, the index of one dimension
    in both, so that different iterations touch different elements."""
    left, right = a.indices(), b.indices()
    return all(any(type(x) is Var and x == level and type(y) is Var and y == level for x, y in zip(left, right))
               for level in levels)


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


def _is_one(extent) -> bool:
    return isinstance(extent, IntImm) and extent.value == 1


def _parts(body: Stmt) -> tuple[list[BlockRealize], list[Stmt]]:
    """The BlockRealizes under ``body`` that no other block holds, and the
    statements under it that no block holds."""
    if type(body) is BlockRealize:
        return [body], []
    loose = [s for _, s in statements_outside_blocks(body, ())]
    return [c for s in loose for _, c in stmt_children(s) if type(c) is BlockRealize], loose


def buffer_words(name: str) -> str:
    """How a message names the buffer ``name`` (:data:`OPAQUE`: any buffer
    a pointer reaches)."""
    return "a buffer through a pointer" if name == OPAQUE else f"buffer {name}"


__all__ = ["buffer_words", "OPAQUE", "Access", "nest_accesses", "touched", "pointwise", "conflict"]
