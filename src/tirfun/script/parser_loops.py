"""Script functions of loops and blocks: loop headers (``range``,
``T.serial``... ``T.grid``), block headers and declarations (``T.block``,
``T.init``, ``T.where``, ``T.reads``/``T.writes``, ``T.block_attr``) and
block iteration variables (``T.axis.*``).

:data:`HANDLERS` maps each name to its signature and handler.
"""

from __future__ import annotations

from ..nodes import Cast, IntImm, IterVar, IterVarType, PrimExpr, Range, Var
from ..nodes.dtype import DataType, dtype_of
from ..nodes.stmt import ForKind
from .parser_args import (
    Args, attr_dict, sig, to_bool_expr, to_dtype, to_int_expr, to_str,
)
from .parser_values import BlockHeader, InitHeader, LoopSpec, NewIterVar, describe


def _loop_bounds(ip, a, what: str):
    start, stop = a.start, a.stop
    if stop is None:
        stop_node = a.node("start")
        stop = start
        start = None
    else:
        stop_node = a.node("stop")
    stop_expr = _loop_int(ip, stop, stop_node, what)
    if start is None:
        start_expr = IntImm(stop_expr.dtype, 0)
    else:
        start_expr = _loop_int(ip, start, a.node("start"), what)
    bits = max(start_expr.dtype.bits, stop_expr.dtype.bits)
    dt = DataType(f"int{bits}") if start_expr.dtype.is_int else start_expr.dtype.with_bits(bits)
    start_expr = _widen(start_expr, dt)
    stop_expr = _widen(stop_expr, dt)
    from ..analysis.arith.linear import extent_between

    extent = extent_between(start_expr, stop_expr)
    return start_expr, extent


def _widen(e: PrimExpr, dt: DataType) -> PrimExpr:
    if e.dtype == dt:
        return e
    if isinstance(e, IntImm):
        return IntImm(dt, e.value)
    return Cast(dt, e)


def _loop_int(ip, value, node, what: str) -> PrimExpr:
    if isinstance(value, (int, PrimExpr)) and not isinstance(value, bool):
        if isinstance(value, int):
            return IntImm(dtype_of(value), value)
        if value.dtype.is_integer and value.dtype.lanes == 1:
            return value
    raise ip.fail(node, f"the bounds of a loop must be integers, got {describe(value)}",
                  hint=f"{what} takes integer extents, such as range(8) or range(n) for an int32 n")


def _for_kind(kind: ForKind, what: str):
    def handler(ip, node, a):
        start, extent = _loop_bounds(ip, a, what)
        annotations = attr_dict(ip, a.annotations, a.node("annotations"), "annotations")
        return LoopSpec(((start, extent, kind, None, annotations),), what)
    return handler


def _range(ip, node, a):
    if a.step is not None and not (isinstance(a.step, int) and a.step == 1):
        raise ip.fail(a.node("step"), "range() with a step is not supported in TVMScript",
                      hint="loop over range(n) and scale the index instead")
    start, extent = _loop_bounds(ip, a, "range")
    annotations = attr_dict(ip, a.annotations, a.node("annotations"), "annotations")
    return LoopSpec(((start, extent, ForKind.SERIAL, None, annotations),), "range")


def _thread_binding(ip, node, a):
    start, stop, thread = a.start, a.stop, a.thread
    values = dict(a._values)
    if thread is None:
        if not isinstance(stop, str):
            raise ip.fail(node, "T.thread_binding needs a thread tag such as \"threadIdx.x\"")
        thread, values["stop"] = stop, None
    tag = to_str(ip, thread, a.node("thread"), "the thread tag")
    from ..nodes.stmt import THREAD_TAGS

    if tag not in THREAD_TAGS:
        raise ip.fail(a.node("thread") if a.given("thread") else node,
                      f"unknown thread tag {tag!r}", hint=f"expected one of {', '.join(THREAD_TAGS)}")
    start, extent = _loop_bounds(ip, Args(values, a._nodes, node), "T.thread_binding")
    annotations = attr_dict(ip, a.annotations, a.node("annotations"), "annotations")
    return LoopSpec(((start, extent, ForKind.THREAD_BINDING, tag, annotations),), "T.thread_binding")


def _grid(ip, node, a):
    loops = []
    for i, extent in enumerate(a.extents):
        ext = _loop_int(ip, extent, node, "T.grid")
        loops.append((IntImm(ext.dtype, 0), ext, ForKind.SERIAL, None, {}))
    if not loops:
        raise ip.fail(node, "T.grid needs at least one extent")
    return LoopSpec(tuple(loops), "T.grid")


def _block(ip, node, a):
    name = to_str(ip, a.name, a.node("name"), "a block name")
    if not isinstance(a.no_realize, bool):
        raise ip.fail(a.node("no_realize"), "no_realize= must be True or False")
    return BlockHeader(name, not a.no_realize)


def _init(ip, node, a):
    return InitHeader()


def _where(ip, node, a):
    block = ip.require_block_frame(node, "T.where")
    if block.predicate is not None:
        raise ip.fail(node, "duplicate T.where in block " + repr(block.name))
    block.predicate = to_bool_expr(ip, a.predicate, a.node("predicate"), "T.where's predicate")
    return None


def _regions(kind: str):
    def handler(ip, node, a):
        block = ip.require_block_frame(node, f"T.{kind}")
        items = list(a.regions)
        if len(items) == 1 and isinstance(items[0], (list, tuple)):
            items = list(items[0])
        regions = [ip.region_of(item, node) for item in items]
        if getattr(block, kind) is not None:
            raise ip.fail(node, f"duplicate T.{kind} in block {block.name!r}")
        setattr(block, kind, regions)
        return None
    return handler


def _block_attr(ip, node, a):
    block = ip.require_block_frame(node, "T.block_attr")
    if block.annotations is not None:
        raise ip.fail(node, f"duplicate T.block_attr in block {block.name!r}")
    block.annotations = attr_dict(ip, a.attrs, a.node("attrs"), "T.block_attr's argument")
    return None


def _as_dom(ip, value, node, what: str) -> Range:
    if isinstance(value, Range):
        return value
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ip.fail(node, f"the domain of {what} is an extent or a (min, max) pair")
        lo = to_int_expr(ip, value[0], node, "the domain's min")
        hi = to_int_expr(ip, value[1], node, "the domain's max", lo.dtype if isinstance(value[1], int) else None)
        if isinstance(value[0], int) and not isinstance(value[1], int):
            lo = IntImm(hi.dtype, value[0])
        from ..analysis.arith.linear import extent_between

        return Range(lo, extent_between(lo, hi))
    extent = to_int_expr(ip, value, node, f"the domain of {what}")
    return Range(IntImm(extent.dtype, 0), extent)


def _retyped(value: PrimExpr, dtype: DataType) -> PrimExpr:
    """``value`` as an integer of ``dtype``."""
    if isinstance(value, IntImm):
        bounds = dtype.int_range()
        if bounds is not None and bounds[0] <= value.value <= bounds[1]:
            return IntImm(dtype, value.value)
    return Cast(dtype, value)


def _axis(iter_type: IterVarType, what: str):
    def handler(ip, node, a):
        ip.require_block_frame(node, what)
        dom = _as_dom(ip, a.dom, a.node("dom"), what)
        dtype = to_dtype(ip, a.dtype, a.node("dtype"))
        bits = max(dom.min.dtype.bits, dom.extent.dtype.bits, dtype.bits)
        dtype = dtype.with_bits(bits)
        binding = a.binding
        if isinstance(binding, int) and not isinstance(binding, bool):
            binding = IntImm(dtype, binding)
        binding = ip.as_expr(binding, a.node("binding"))
        if not binding.dtype.is_integer:
            raise ip.fail(a.node("binding"), f"the binding of {what} must be an integer, got "
                          f"{describe(binding)}")
        if binding.dtype != dtype and binding.dtype.lanes == 1:
            # TVM keeps a binding of another integer type (T.axis.spatial(1,
            # T.int64(0))); here the binding takes the variable's type: a
            # constant as itself, anything else through a cast
            binding = _retyped(binding, dtype)
        return NewIterVar(dom, binding, iter_type, dtype, what)
    return handler


def _axis_remap(ip, node, a):
    ip.require_block_frame(node, "T.axis.remap")
    kinds = to_str(ip, a.kinds, a.node("kinds"), "the kinds of T.axis.remap")
    bindings = a.bindings
    if not isinstance(bindings, (list, tuple)):
        bindings = [bindings]
    if len(kinds) != len(bindings):
        raise ip.fail(a.node("kinds"), f"T.axis.remap: the kind string {kinds!r} has {len(kinds)} "
                      f"kind{'s' if len(kinds) != 1 else ''} but {len(bindings)} loop "
                      f"variable{'s are' if len(bindings) != 1 else ' is'} given",
                      hint="give one kind (S for spatial, R for reduction) per loop variable")
    out = []
    for kind, value in zip(kinds, bindings):
        if kind not in "SR":
            raise ip.fail(a.node("kinds"), f"T.axis.remap: unknown kind {kind!r} in {kinds!r}",
                          hint="kinds are S (spatial) and R (reduction)")
        if not isinstance(value, Var):
            raise ip.fail(a.node("bindings"), f"T.axis.remap binds loop variables, got {describe(value)}",
                          hint="use T.axis.spatial/T.axis.reduce for other bindings")
        dom = ip.loop_domain(value)
        if dom is None:
            raise ip.fail(a.node("bindings"), f"T.axis.remap: {value.name} is not the variable "
                          "of an enclosing loop")
        it = IterVarType.DataPar if kind == "S" else IterVarType.CommReduce
        out.append(NewIterVar(dom, value, it, value.dtype, "T.axis.remap"))
    return out


def _iter_var(ip, node, a):
    var = a.var
    if not isinstance(var, Var):
        raise ip.fail(a.node("var"), f"T.iter_var needs a variable, got {describe(var)}")
    dom = a.dom
    if dom is not None:
        dom = _as_dom(ip, dom, a.node("dom"), "T.iter_var")
    kind = to_str(ip, a.iter_type, a.node("iter_type"), "the iteration type")
    try:
        it = IterVarType(kind)
    except ValueError:
        raise ip.fail(a.node("iter_type"), f"unknown iteration type {kind!r}") from None
    tag = to_str(ip, a.thread_tag, a.node("thread_tag"), "the thread tag")
    return IterVar(dom, var, it, tag)


def _range_ctor(ip, node, a):
    begin = to_int_expr(ip, a.begin, a.node("begin"), "the range's begin")
    end = to_int_expr(ip, a.end, a.node("end"), "the range's end", begin.dtype if isinstance(a.end, int) else None)
    from ..analysis.arith.linear import extent_between

    return Range(begin, extent_between(begin, end))


_AXIS_SIG = sig("dom", "binding", ("dtype", "int32"))


_LOOP_SIG = sig("start", ("stop", None), kwonly=(("annotations", None),))


HANDLERS: dict = {
    "range": (sig("start", ("stop", None), ("step", None), kwonly=(("annotations", None),)), _range),
    "T.serial": (_LOOP_SIG, _for_kind(ForKind.SERIAL, "T.serial")),
    "T.parallel": (_LOOP_SIG, _for_kind(ForKind.PARALLEL, "T.parallel")),
    "T.vectorized": (_LOOP_SIG, _for_kind(ForKind.VECTORIZED, "T.vectorized")),
    "T.unroll": (_LOOP_SIG, _for_kind(ForKind.UNROLLED, "T.unroll")),
    "T.thread_binding": (sig("start", ("stop", None), ("thread", None), kwonly=(("annotations", None),)),
                         _thread_binding),
    "T.grid": (sig(star="extents"), _grid),
    "T.block": (sig(("name", ""), ("no_realize", False)), _block),
    "T.init": (sig(), _init),
    "T.where": (sig("predicate"), _where),
    "T.reads": (sig(star="regions"), _regions("reads")),
    "T.writes": (sig(star="regions"), _regions("writes")),
    "T.block_attr": (sig("attrs"), _block_attr),
    "T.axis.spatial": (_AXIS_SIG, _axis(IterVarType.DataPar, "T.axis.spatial")),
    "T.axis.reduce": (_AXIS_SIG, _axis(IterVarType.CommReduce, "T.axis.reduce")),
    "T.axis.scan": (_AXIS_SIG, _axis(IterVarType.Ordered, "T.axis.scan")),
    "T.axis.opaque": (_AXIS_SIG, _axis(IterVarType.Opaque, "T.axis.opaque")),
    "T.axis.remap": (sig("kinds", "bindings", ("dtype", "int32")), _axis_remap),
    "T.iter_var": (sig("var", "dom", "iter_type", "thread_tag"), _iter_var),
    "T.Range": (sig("begin", "end"), _range_ctor),
}
