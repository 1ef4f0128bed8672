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
stores outside blocks. Anything else that names a buffer counts as touching
all of it.
"""

from __future__ import annotations

from ..analysis.traversal import stmt_children, walk_stmts
from ..nodes import Block, BlockRealize, Buffer, BufferLoad, BufferStore, For, IntImm, Stmt, Var
from .exprs import find_nodes, substitute_expr

#: an access: (buffer, writes?, per dimension the index in the merged
#: levels' variables, or None where it is not one expression of them)
Access = tuple


def nest_accesses(body: Stmt, loop_vars: list, levels: list) -> list[Access]:
    """The accesses of a nest's innermost ``body``, its loop variables
    ``loop_vars`` (outermost first) renamed to ``levels``: each dimension's
    index where it is one expression of the levels, else None (a range, or
    an index naming a loop inside the body)."""
    mapping = dict(zip(loop_vars, levels))
    inner = _loops_inside(body)

    def component(e, values=None):
        if values:
            e = substitute_expr(e, values)
        if {v.name for v in find_nodes(e, (Var,))} & inner:
            return None
        return substitute_expr(e, mapping)

    out: list[Access] = []
    for realize in _top_realizes(body):
        block = realize.block
        values = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
        for regions, writes in ((block.reads, False), (block.writes, True)):
            for region in regions:
                out.append((region.buffer, writes, tuple(
                    component(r.min, values) if _is_one(r.extent) else None for r in region.region)))
    for stmt in _loose(body):
        if type(stmt) is BufferStore:
            out.append((stmt.buffer, True, tuple(component(e) for e in stmt.indices)))
    for load in _loose_loads(body):
        out.append((load.buffer, False, tuple(component(e) for e in load.indices)))
    return out


def touched(stmt: Stmt) -> tuple[set, set]:
    """The buffers ``stmt`` reads and writes, by what it holds: the stated
    regions of its blocks, and its loads and stores."""
    reads, writes = set(), set()
    for _, node in walk_stmts(stmt):
        if type(node) is Block:
            reads |= {r.buffer for r in node.reads}
            writes |= {w.buffer for w in node.writes}
        elif type(node) is BufferStore:
            writes.add(node.buffer)
    reads |= {n.buffer for n in find_nodes(stmt, (BufferLoad,))}
    return reads, writes


def pointwise(a: Access, b: Access, extents: list) -> bool:
    """Whether accesses ``a`` and ``b`` of one buffer meet only in the same
    iteration of the merged nest: each merged level of more than one
    iteration is, by itself, the index of one dimension in both, so that
    different iterations touch different elements."""
    return all(any(type(x) is Var and x == level and type(y) is Var and y == level for x, y in zip(a[2], b[2]))
               for level, extent in extents if not _is_one(extent))


def conflict(a_reads: set, a_writes: set, b_reads: set, b_writes: set) -> Buffer | None:
    """A buffer one side writes and the other touches, or None."""
    for buf in sorted(a_writes & (b_reads | b_writes), key=lambda b: b.name):
        return buf
    for buf in sorted(b_writes & a_reads, key=lambda b: b.name):
        return buf
    return None


def _is_one(extent) -> bool:
    return isinstance(extent, IntImm) and extent.value == 1


def _loops_inside(body: Stmt) -> set[str]:
    return {s.loop_var.name for _, s in walk_stmts(body) if type(s) is For}


def _top_realizes(body: Stmt) -> list[BlockRealize]:
    """The BlockRealizes under ``body`` that no other block holds."""
    out, stack = [], [body]
    while stack:
        node = stack.pop()
        if type(node) is BlockRealize:
            out.append(node)
            continue
        stack.extend(reversed([child for _, child in stmt_children(node)]))
    return out


def _loose(body: Stmt) -> list[Stmt]:
    """The statements under ``body`` that no block holds."""
    out, stack = [], [body]
    while stack:
        node = stack.pop()
        if type(node) is BlockRealize:
            continue
        out.append(node)
        stack.extend(reversed([child for _, child in stmt_children(node)]))
    return out


def _loose_loads(body: Stmt) -> list[BufferLoad]:
    """The loads under ``body`` outside its blocks (in stores, conditions,
    loop bounds, evaluations)."""
    in_blocks = {id(n) for r in _top_realizes(body) for n in find_nodes(r, (BufferLoad,))}
    return [n for n in find_nodes(body, (BufferLoad,)) if id(n) not in in_blocks]


__all__ = ["nest_accesses", "touched", "pointwise", "conflict"]
