"""Substituting loop variables in a statement and simplifying the block
bindings that change, as split and fuse need.

The walk carries the constant ranges of the loops it is inside, so the
binding simplifier can drop ``x // c`` and ``x % c`` where the ranges allow.
Only what mentions a substituted variable is rebuilt: everything else is
returned as the same object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pyrsistent import pvector

from ..analysis.traversal import map_children, stmt_children
from ..nodes import And, Block, BlockRealize, IfThenElse, For, IntImm, PrimExpr, Range, SeqStmt, Stmt, Var
from ..nodes.base import with_fields
from ..analysis.arith.iter_map import Ranges, simplify_index
from ..analysis.arith.terms import int_value
from .buffer_swap import copier
from .exprs import substitute, substitute_expr, uses_any

#: a realize with new bindings, a loop with a new body, copied unchecked (see :func:`_chain`)
_NEW_VALUES = copier(BlockRealize, ("iter_values",))
_NEW_BODY = copier(For, ("body",))


def rebind(stmt: Stmt, mapping: Mapping[Var, PrimExpr], ranges: Ranges | Callable[[], Ranges], *,
           drop_unit_iters: bool = False, simplified: Mapping[Var, PrimExpr] | None = None) -> Stmt:
    """``stmt`` with the variables of ``mapping`` substituted everywhere.

    A block binding that changed is simplified with
    :func:`~tirfun.analysis.arith.iter_map.simplify_index` under the ranges of the
    loops around it (``ranges`` gives those outside ``stmt``, or is a
    function that returns them: it is called only if a binding needs
    simplifying). With
    ``drop_unit_iters`` (TVM's ``preserve_unit_iters=False``) every binding
    is also rid of loop variables whose loop runs exactly once, which are
    replaced by their only value.

    ``simplified`` may give, for a variable of ``mapping``, what
    ``simplify_index`` makes of its value under any ranges (a value without
    ``//`` or ``%`` does not depend on them): a binding that is that
    variable alone then takes it without simplifying again.
    """
    known = {id(mapping[v]): (mapping[v], s) for v, s in simplified.items()} if simplified else None
    if not drop_unit_iters:
        chained = _chain(stmt, mapping, ranges, known)
        if chained is not None:
            return chained
    return rebind_walk(stmt, mapping, ranges, drop_unit_iters=drop_unit_iters, known=known)


def rebind_walk(stmt: Stmt, mapping: Mapping[Var, PrimExpr], ranges: Ranges | Callable[[], Ranges], *,
                drop_unit_iters: bool = False, known: dict | None = None) -> Stmt:
    """:func:`rebind` by the general walk, whatever the shape of ``stmt``
    (``known``: the simplified bindings by the identity of their value)."""
    simplified = known

    def sub(node):
        if isinstance(node, PrimExpr):
            return substitute_expr(node, mapping)
        return substitute(node, mapping)

    def visit(node: Stmt, scope: _Scope) -> Stmt:
        kind = type(node)
        if kind is For:
            return visit_for(node, scope)
        if kind is BlockRealize:
            return visit_realize(node, scope)
        if kind is Block and node.iter_vars:
            # block isolation: nothing inside a block with iteration variables
            # mentions the loops around it, so its body is left alone; but
            # the domains of its variables may (TVM's well-formedness check
            # skips them: a triangular nest's ``T.axis.reduce(i + 1, k)``)
            return _with_domains(node, sub)
        if kind is SeqStmt:
            items = [visit(s, scope) for s in node.seq]
            if all(a is b for a, b in zip(items, node.seq)):
                return node
            return with_fields(node, seq=pvector(items))
        return map_children(node, lambda c: visit(c, scope) if isinstance(c, Stmt) else sub(c))

    def visit_for(node: For, scope: _Scope) -> Stmt:
        loop_min, loop_extent = sub(node.min), sub(node.extent)
        lo, ext = int_value(loop_min), int_value(loop_extent)
        inner = scope
        if lo is not None and ext is not None and ext > 0:
            inner = _Scope(scope, node.loop_var.name, (lo, lo + ext - 1))
        if node.annotations:
            # annotation values may hold expressions: the generic walk reaches them
            return map_children(node, lambda c: visit(c, inner) if isinstance(c, Stmt) else sub(c))
        loop_var = mapping.get(node.loop_var, node.loop_var)
        body = visit(node.body, inner)
        if (loop_var is node.loop_var and loop_min is node.min and loop_extent is node.extent
                and body is node.body):
            return node
        changes = {}
        if loop_var is not node.loop_var:
            changes["loop_var"] = loop_var
        if loop_min is not node.min:
            changes["min"] = loop_min
        if loop_extent is not node.extent:
            changes["extent"] = loop_extent
        if body is not node.body:
            changes["body"] = body
        return with_fields(node, **changes)

    def visit_realize(node: BlockRealize, scope) -> BlockRealize:
        ranges = None  # the scope's ranges, worked out when a binding needs them
        units = {}
        if drop_unit_iters:
            ranges = _ranges_of(scope)
            units = {name: lo for name, (lo, hi) in ranges.items() if lo == hi}
        values = []
        changed = False
        for value in node.iter_values:
            new = sub(value)
            if new is not value or (units and uses_any(new, units) is not None):
                if units:
                    new = substitute(new, {v: IntImm(v.dtype, units[v.name])
                                           for v in _vars(new) if v.name in units})
                    new = simplify_index(new, ranges)
                else:
                    new = _simplified(new, scope)
            changed = changed or new is not value
            values.append(new)
        predicate = sub(node.predicate)
        block = visit(node.block, scope)
        if not changed and predicate is node.predicate and block is node.block:
            return node
        changes = {}
        if changed:
            changes["iter_values"] = values
        if predicate is not node.predicate:
            changes["predicate"] = predicate
        if block is not node.block:
            changes["block"] = block
        return with_fields(node, **changes)

    def _simplified(new: PrimExpr, scope) -> PrimExpr:
        # a binding that was the substituted variable itself becomes the
        # caller's value, whose simplified form the caller may know
        known = simplified.get(id(new)) if simplified else None
        if known is not None and known[0] is new:
            return known[1]
        return simplify_index(new, _ranges_of(scope))

    return visit(stmt, _Scope(ranges, None, None))


def rebind_chain(stmt: Stmt, mapping: Mapping[Var, PrimExpr], ranges: Ranges) -> Stmt | None:
    """``rebind(stmt, mapping, ranges)`` where ``stmt`` is a chain of loops
    with literal bounds down to one block whose bindings are loop variables
    or literals (the common body of split, fuse and merge): what rebind
    builds, without its general walk. None for any other shape."""
    return _chain(stmt, mapping, ranges, None)


def _chain(stmt: Stmt, mapping, ranges, known) -> Stmt | None:
    """:func:`rebind_chain`, a binding whose simplified form ``known``
    gives (see :func:`rebind`) taking it. A binding that was a substituted
    variable takes its value, simplified under the ranges of the loops
    around it (theirs added to ``ranges`` as rebind adds them); the loops
    are rebuilt above a changed block only."""
    loops = []
    node = stmt
    while type(node) is For:
        if (node.annotations or node.thread_binding is not None or type(node.min) is not IntImm
                or type(node.extent) is not IntImm or node.loop_var in mapping):
            return None
        loops.append(node)
        node = node.body
    if type(node) is not BlockRealize or type(node.predicate) is not IntImm or type(node.block) is not Block \
            or not node.block.iter_vars:
        return None  # a block without iteration variables is entered by rebind
    for iv in node.block.iter_vars:
        if type(iv.dom.min) is not IntImm or type(iv.dom.extent) is not IntImm:
            return None  # a domain that may name a loop: rebind substitutes it
    values = []
    changed = False
    same_types = True  # every changed binding has the dtype of the one it replaces
    inner = None  # the ranges at the block, made when a binding needs them
    for value in node.iter_values:
        kind = type(value)
        if kind is Var:
            new = mapping.get(value, value)
            if new is not value:
                if type(new) is not Var:
                    hit = known.get(id(new)) if known else None
                    if hit is not None and hit[0] is new:
                        new = hit[1]
                    else:
                        if inner is None:
                            inner = _ranges_inside(ranges() if callable(ranges) else ranges, loops)
                        new = simplify_index(new, inner)
                if new is not value:
                    changed = True
                    same_types = same_types and isinstance(new, PrimExpr) and new.dtype == value.dtype
            values.append(new)
        elif kind is IntImm:
            values.append(value)
        else:
            return None
    if not changed:
        return stmt
    if not same_types:
        new = with_fields(node, iter_values=values)
        for loop in reversed(loops):
            new = with_fields(loop, body=new)
        return new
    # the realize holds as many expressions as before for the same block,
    # and a loop's rules do not read its body beyond its being a statement:
    # every rule held for the old nodes and holds again, so they are copied
    # (see :func:`~tirfun.rewrites.buffer_swap.replaced_along`)
    new = _NEW_VALUES(node, pvector(values))
    for loop in reversed(loops):
        new = _NEW_BODY(loop, new)
    return new


def _with_domains(block: Block, sub) -> Block:
    """``block`` with ``sub`` applied to the bounds of its iteration
    variables' domains (the block itself where none changes)."""
    ivs = []
    changed = False
    for iv in block.iter_vars:
        dom = iv.dom
        if type(dom.min) is IntImm and type(dom.extent) is IntImm:
            ivs.append(iv)
            continue
        lo, ext = sub(dom.min), sub(dom.extent)
        if lo is dom.min and ext is dom.extent:
            ivs.append(iv)
            continue
        ivs.append(with_fields(iv, dom=Range(lo, ext)))
        changed = True
    return with_fields(block, iter_vars=ivs) if changed else block


def _ranges_inside(ranges: Ranges, loops: list) -> dict:
    """``ranges`` with those of ``loops`` (literal bounds) added, as
    rebind adds a loop's range where its extent is positive."""
    out = dict(ranges)
    for loop in loops:
        lo, ext = int_value(loop.min), int_value(loop.extent)
        if lo is not None and ext is not None and ext > 0:
            out[loop.loop_var.name] = (lo, lo + ext - 1)
    return out


class _Scope:
    """The ranges of the loops around a statement, as a chain of the loops
    entered below the caller's ranges: a walk that needs no range (every
    binding's simplified form known) never copies them."""

    __slots__ = ("outer", "name", "bounds", "ranges")

    def __init__(self, outer, name, bounds):
        self.outer, self.name, self.bounds, self.ranges = outer, name, bounds, None


def _ranges_of(scope: _Scope) -> dict:
    """The ranges ``scope`` stands for, as a dict (worked out once per scope)."""
    if scope.ranges is None:
        outer = scope.outer
        if isinstance(outer, _Scope):
            ranges = dict(_ranges_of(outer))
        else:
            ranges = dict(outer() if callable(outer) else outer)
        if scope.name is not None:
            ranges[scope.name] = scope.bounds
        scope.ranges = ranges
    return scope.ranges


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


__all__ = ["rebind", "rebind_chain", "append_predicate"]
