"""Whether a transformation may change the order a float reduction adds up in.

TVM's meaning of a reduction block lets a schedule combine its terms in any
order: ``reorder`` may swap two reduction loops, and ``compute_at`` and
``reverse_compute_at`` lay out the loops they regenerate in the order of the
block's iteration variables, whatever order the loops had before. Integer
reductions give the same result in every order; float ones may differ in
rounding. A property test that compares a program with its transformed form
bit for bit must know when that happened::

    from tirfun.testing.reassociation import reassociates

    if reassociates(before, after):
        ...  # the float reductions may round differently: compare loosely
    else:
        assert_equivalent(before["main"], after["main"])

The order of a block is read from its loops: outermost first, one entry per
loop, the reduction iteration variables the loop drives (by their positions
in the block) and the step one iteration of the loop makes in each. Loops
renamed, or regenerated in the same order, are no change; the pieces of a
split loop swapped are. The test leans to caution: splitting a reduction
loop counts as a change, though its pieces run in the original order.
"""

from __future__ import annotations

from ..analysis.traversal import ancestors, walk_stmts
from ..nodes import BlockRealize, For, IRModule, PrimFunc
from ..rewrites.exprs import var_names


def float_reduction_orders(mod: IRModule | PrimFunc, func_name: str = "main") -> dict[str, tuple]:
    """For each block that reduces into a float buffer (by block name): the
    order its reduction iteration variables are driven in, outermost loop
    first, as positions among the block's iteration variables."""
    func = mod[func_name] if isinstance(mod, IRModule) else mod
    out: dict[str, tuple] = {}
    for path, stmt in walk_stmts(func):
        if not isinstance(stmt, BlockRealize):
            continue
        block = stmt.block
        if not any(w.buffer.dtype.is_float for w in block.writes):
            continue
        # (position, binding, the names the binding uses) of each reduction variable
        reduced = [(k, value, var_names(value))
                   for k, (iv, value) in enumerate(zip(block.iter_vars, stmt.iter_values))
                   if iv.iter_type.value == "CommReduce"]
        driving = set().union(*(names for _, _, names in reduced))
        if not driving:
            continue
        order: list = []
        for _, node in ancestors(func, path):
            if isinstance(node, For) and node.loop_var.name in driving:
                name = node.loop_var.name
                order.append(tuple((k, _step(value, name, driving)) for k, value, names in reduced
                                   if name in names))
        out[block.name_hint] = tuple(order)
    return out


def _step(value, name: str, names: set) -> int | None:
    """How far ``value`` moves when loop ``name`` goes from 0 to 1, the
    other loops at 0: the loop's weight in an affine binding (None where
    the value is undefined there, as ``i // n`` with ``n`` at 0)."""
    from ..errors import TirfunError
    from ..interp import evaluate

    zero = dict.fromkeys(names, 0)
    try:
        return int(evaluate(value, **{**zero, name: 1})) - int(evaluate(value, **zero))
    except (TirfunError, ArithmeticError):
        return None


def reassociates(before: IRModule | PrimFunc, after: IRModule | PrimFunc, func_name: str = "main") -> bool:
    """Whether some float reduction block of ``before`` that ``after`` still
    has (by name) is driven in another order there: its results may differ
    in rounding, as TVM's meaning of a reduction allows."""
    old, new = float_reduction_orders(before, func_name), float_reduction_orders(after, func_name)
    return any(name in new and new[name] != order for name, order in old.items())


__all__ = ["float_reduction_orders", "reassociates"]
