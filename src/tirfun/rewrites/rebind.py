"""Substituting loop variables in a statement and simplifying the block
bindings that change, as split and fuse need.

The walk carries the constant ranges of the loops it is inside, so the
binding simplifier can drop ``x // c`` and ``x % c`` where the ranges allow.
Only what mentions a substituted variable is rebuilt: everything else is
returned as the same object.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..analysis.traversal import map_children, stmt_children
from ..nodes import And, Block, BlockRealize, IfThenElse, For, IntImm, PrimExpr, Stmt, Var
from ..analysis.arith.iter_map import Ranges, loop_ranges, simplify_index
from .exprs import substitute, substitute_expr, uses_any


def rebind(stmt: Stmt, mapping: Mapping[Var, PrimExpr], ranges: Ranges, *,
           drop_unit_iters: bool = False) -> Stmt:
    """``stmt`` with the variables of ``mapping`` substituted everywhere.

    A block binding that changed is simplified with
    :func:`~tirfun.analysis.arith.iter_map.simplify_index` under the ranges of the
    loops around it (``ranges`` gives those outside ``stmt``). With
    ``drop_unit_iters`` (TVM's ``preserve_unit_iters=False``) every binding
    is also rid of loop variables whose loop runs exactly once, which are
    replaced by their only value.
    """

    def sub(node):
        if isinstance(node, PrimExpr):
            return substitute_expr(node, mapping)
        return substitute(node, mapping)

    def visit(node: Stmt, ranges: Ranges) -> Stmt:
        if isinstance(node, For):
            loop_min, loop_extent = sub(node.min), sub(node.extent)
            inner = dict(ranges)
            inner.update(loop_ranges([_Bounds(node.loop_var, loop_min, loop_extent)]))
            return map_children(node, lambda c: visit(c, inner) if isinstance(c, Stmt) else sub(c))
        if isinstance(node, BlockRealize):
            return visit_realize(node, ranges)
        if isinstance(node, Block) and node.iter_vars:
            # block isolation: nothing inside a block with iteration variables
            # mentions the loops around it, so its body is left alone
            return node
        return map_children(node, lambda c: visit(c, ranges) if isinstance(c, Stmt) else sub(c))

    def visit_realize(node: BlockRealize, ranges: Ranges) -> BlockRealize:
        units = {name: lo for name, (lo, hi) in ranges.items() if lo == hi} if drop_unit_iters else {}
        values = []
        changed = False
        for value in node.iter_values:
            new = sub(value)
            if new is not value or (units and uses_any(new, units) is not None):
                if units:
                    new = substitute(new, {v: IntImm(v.dtype, units[v.name])
                                           for v in _vars(new) if v.name in units})
                new = simplify_index(new, ranges)
            changed = changed or new is not value
            values.append(new)
        predicate = sub(node.predicate)
        block = visit(node.block, ranges)
        if not changed and predicate is node.predicate and block is node.block:
            return node
        return BlockRealize(values if changed else node.iter_values, predicate, block)

    return visit(stmt, dict(ranges))


class _Bounds:
    """The loop fields :func:`loop_ranges` reads."""

    __slots__ = ("loop_var", "min", "extent")

    def __init__(self, loop_var, min_, extent):
        self.loop_var = loop_var
        self.min = min_
        self.extent = extent


def _vars(expr: PrimExpr) -> list[Var]:
    from ..analysis.traversal import walk

    return [node for node in walk(expr) if isinstance(node, Var)]


def append_predicate(stmt: Stmt, predicate: PrimExpr) -> Stmt:
    """``stmt`` with its iterations guarded by ``predicate``, as TVM's split
    guards the iterations a non-dividing factor adds.

    Blocks directly under ``stmt`` (not those nested inside them) get
    ``predicate`` and-ed onto their ``T.where``. A statement with no block
    under it (a loop inside a block's body) has no ``T.where`` to carry the
    predicate, so it is wrapped in ``if predicate:``; TVM leaves such
    statements unguarded, which would run the extra iterations.
    """

    def has_block(node: Stmt) -> bool:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, BlockRealize):
                return True
            stack.extend(child for _, child in stmt_children(n))
        return False

    def visit(node: Stmt) -> Stmt:
        if isinstance(node, BlockRealize):
            old = node.predicate
            if isinstance(old, IntImm) and old.value == 1:
                new = predicate
            else:
                new = And(old, predicate)
            return BlockRealize(node.iter_values, new, node.block)
        if not has_block(node):
            return IfThenElse(predicate, node)
        return map_children(node, lambda c: visit(c) if isinstance(c, Stmt) else c)

    return visit(stmt)


__all__ = ["rebind", "append_predicate"]
