"""The functions of the script namespaces, as the interpreter runs them.

Each entry of :data:`BUILTINS` maps a dotted name (``"T.axis.spatial"``) to a
:class:`Signature` and a handler ``handler(ip, node, args)``. The
interpreter binds the call's arguments to the signature (reporting arity
mistakes like Python does) and calls the handler with itself, the call's
syntax node and an :class:`Args` view. Handlers return script values:
expressions, statements, or the pending declarations and scopes of
:mod:`tirfun.script.parser_values`.

:func:`resolve` answers ``namespace.attribute`` lookups, so that an unknown
``T.`` name is reported where it is written.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

import attrs

from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, AssertStmt, AttrStmt, Broadcast, Buffer, BufferLoad,
    BufferRegion, Call, Cast, DeclBuffer, Div, Evaluate, FloatImm, FloorDiv, FloorMod, IntImm,
    IterVar, IterVarType, Let, LetStmt, Max, MatchBufferRegion, Min, Mod, Mul, Not, Or, And,
    PrimExpr, Range, Ramp, Select, StringImm, Sub, Var, const,
)
from ..nodes.dtype import DataType, dtype_of
from ..nodes.stmt import Allocate, ForKind
from ..tir import op as tir_op
from .parser_values import (
    BlockHeader, Builtin, DTypeCtor, InitHeader, LoopSpec, Namespace, NewBuffer, NewIterVar, NewVar,
    Scope, SlicedAccess, article, describe,
)

REQUIRED = object()


@attrs.frozen
class Signature:
    """Parameters of a script function: positional-or-keyword names with
    defaults (:data:`REQUIRED` when none), an optional ``*args`` name and
    keyword-only parameters."""

    params: tuple[tuple[str, Any], ...]
    star: str | None = None
    kwonly: tuple[tuple[str, Any], ...] = ()
    drop: tuple[str, ...] = ()  # keywords accepted and ignored (TVM's op wrappers drop dtype)


def sig(*params, star=None, kwonly=(), drop=()) -> Signature:
    """``sig("a", ("b", 1), star="rest")``: a parameter is a name (required)
    or a (name, default) pair."""
    norm = tuple(p if isinstance(p, tuple) else (p, REQUIRED) for p in params)
    kw = tuple(p if isinstance(p, tuple) else (p, REQUIRED) for p in kwonly)
    return Signature(norm, star, kw, tuple(drop))


class Args:
    """The bound arguments of one call: ``args.x`` is the value of parameter
    ``x``, ``args.node("x")`` its syntax node (or the call's)."""

    def __init__(self, values: dict[str, Any], nodes: dict[str, ast.AST], call: ast.AST):
        self._values = values
        self._nodes = nodes
        self._call = call

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def given(self, name: str) -> bool:
        """True when the call passed ``name`` explicitly."""
        return name in self._nodes

    def node(self, name: str) -> ast.AST:
        """The syntax node of argument ``name`` (the call's when defaulted)."""
        return self._nodes.get(name, self._call)


def _arity_text(s: Signature) -> str:
    required = sum(1 for _, d in s.params if d is REQUIRED)
    total = len(s.params)
    if s.star:
        return f"at least {required} positional argument{'s' if required != 1 else ''}"
    if required == total:
        return f"{total} positional argument{'s' if total != 1 else ''}"
    return f"from {required} to {total} positional arguments"


def bind(ip, name: str, s: Signature, node: ast.Call, pos: list, kws: dict) -> Args:
    """Bind evaluated arguments to a signature like Python does; mistakes
    are ParseErrors naming the function."""
    values: dict[str, Any] = {}
    nodes: dict[str, ast.AST] = {}
    names = [p for p, _ in s.params]
    star_values = []
    for i, (value, arg_node) in enumerate(pos):
        if i < len(names):
            values[names[i]] = value
            nodes[names[i]] = arg_node
        elif s.star:
            star_values.append(value)
        else:
            raise ip.fail(arg_node, f"{name}() takes {_arity_text(s)} but {len(pos)} "
                          f"{'were' if len(pos) != 1 else 'was'} given",
                          hint=_signature_hint(name, s))
    kwonly = dict(s.kwonly)
    for key, (value, arg_node) in kws.items():
        if key in s.drop:
            continue
        if key in values:
            raise ip.fail(arg_node, f"{name}() got multiple values for argument '{key}'",
                          hint=_signature_hint(name, s))
        if key not in names and key not in kwonly:
            raise ip.fail(arg_node, f"{name}() got an unexpected keyword argument '{key}'",
                          hint=_signature_hint(name, s))
        values[key] = value
        nodes[key] = arg_node
    for p, default in s.params + s.kwonly:
        if p not in values:
            if default is REQUIRED:
                raise ip.fail(node, f"{name}() missing required argument '{p}'",
                              hint=_signature_hint(name, s))
            values[p] = default
    if s.star:
        values[s.star] = star_values
    return Args(values, nodes, node)


def _signature_hint(name: str, s: Signature) -> str:
    parts = []
    for p, d in s.params:
        parts.append(p if d is REQUIRED else f"{p}={d!r}")
    if s.star:
        parts.append(f"*{s.star}")
    elif s.kwonly:
        parts.append("*")
    for p, d in s.kwonly:
        parts.append(p if d is REQUIRED else f"{p}={d!r}")
    return f"the signature is {name}({', '.join(parts)})"


# --------------------------------------------------------------------------
# small conversions shared by the handlers


def to_dtype(ip, value, node) -> DataType:
    """A dtype argument: a string, a DataType or a ``T.float32``-style name."""
    if isinstance(value, DTypeCtor):
        return value.dtype
    if isinstance(value, str):
        try:
            return DataType(value)
        except Exception as err:
            raise ip.fail(node, str(err)) from None
    raise ip.fail(node, f"expected a data type such as \"float32\", got {describe(value)}")


def to_str(ip, value, node, what: str) -> str:
    """A string argument (a StringImm counts)."""
    if isinstance(value, StringImm):
        return value.value
    if not isinstance(value, str):
        raise ip.fail(node, f"{what} must be a string, got {describe(value)}")
    return value


def to_int_expr(ip, value, node, what: str, dtype: DataType | None = None) -> PrimExpr:
    """An integer expression (Python ints become constants of ``dtype``,
    int32 by default, int64 when too large)."""
    if isinstance(value, bool):
        raise ip.fail(node, f"{what} must be an integer, got a bool")
    if isinstance(value, int):
        dt = dtype or dtype_of(value)
        try:
            return IntImm(dt, value)
        except Exception as err:
            raise ip.fail(node, str(err)) from None
    expr = ip.as_expr(value, node)
    if not expr.dtype.is_integer or expr.dtype.lanes != 1:
        raise ip.fail(node, f"{what} must be an integer, got {describe(value)}")
    return expr


def to_shape(ip, value, node, what: str) -> list[PrimExpr]:
    """A shape: one extent or a tuple of integer extents."""
    if isinstance(value, (tuple, list)):
        return [to_int_expr(ip, v, node, f"{what} dimension") for v in value]
    return [to_int_expr(ip, value, node, what)]


def to_bool_expr(ip, value, node, what: str) -> PrimExpr:
    """A bool condition (Python bools and 0/1 become constants)."""
    if isinstance(value, bool):
        return IntImm("bool", int(value))
    if isinstance(value, int) and value in (0, 1):
        return IntImm("bool", value)
    expr = ip.as_expr(value, node)
    if not expr.dtype.is_bool or expr.dtype.lanes != 1:
        raise ip.fail(node, f"{what} must be a bool condition, got {describe(value)}")
    return expr


def attr_value(ip, value, node):
    """Normalise a value of an attribute or annotation dict.

    Attributes hold plain Python values where they can: numbers, strings,
    None, lists and dicts of them. ``T.bool(True)`` is how TVM prints a
    true flag, so a bool constant becomes the Python bool (``True`` and
    ``T.bool(True)`` are the same attribute); other expressions and buffers
    stay nodes.
    """
    if isinstance(value, IntImm) and value.dtype.is_bool:
        return bool(value.value)
    if isinstance(value, (bool, int, float, str, PrimExpr, Buffer)):
        return value
    if isinstance(value, DataType):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [attr_value(ip, v, node) for v in value]
    if isinstance(value, dict):
        return {attr_key(ip, k, node): attr_value(ip, v, node) for k, v in value.items()}
    if isinstance(value, SlicedAccess):
        return ip.region_of(value, node)
    if value is None:
        return None
    raise ip.fail(node, f"{describe(value)} cannot be an attribute value")


def attr_key(ip, key, node) -> str:
    """An attribute key: a string."""
    if isinstance(key, StringImm):
        return key.value
    if not isinstance(key, str):
        raise ip.fail(node, f"attribute keys must be strings, got {describe(key)}")
    return key


def attr_dict(ip, value, node, what: str) -> dict:
    """An attribute or annotation dict, values normalised by :func:`attr_value`."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ip.fail(node, f"{what} must be a dict, got {describe(value)}")
    return {attr_key(ip, k, node): attr_value(ip, v, node) for k, v in value.items()}


# --------------------------------------------------------------------------
# buffers


def buffer_maker(ip, a: Args, *, align_default=64, what: str) -> Callable[[str], Buffer]:
    """The function naming a buffer declared with TVM's buffer arguments."""
    shape = to_shape(ip, a.shape, a.node("shape"), f"the shape of {what}")
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    data = a.data
    if data is not None and not (isinstance(data, Var) and data.dtype.is_handle):
        raise ip.fail(a.node("data"), f"data= must be a handle variable, got {describe(data)}")
    strides = [] if a.strides is None else a.strides
    if not isinstance(strides, (list, tuple)):
        raise ip.fail(a.node("strides"), "strides= must be a tuple")
    elem_offset = None if a.elem_offset is None else to_int_expr(ip, a.elem_offset, a.node("elem_offset"), "elem_offset")
    scope = to_str(ip, a.scope, a.node("scope"), "scope") or "global"
    align = a.align
    if not isinstance(align, int) or isinstance(align, bool):
        raise ip.fail(a.node("align"), "align= must be an int")
    offset_factor = a.offset_factor
    if not isinstance(offset_factor, int) or isinstance(offset_factor, bool):
        raise ip.fail(a.node("offset_factor"), "offset_factor= must be an int")
    buffer_type = a.buffer_type
    if buffer_type not in ("", "default"):
        raise ip.fail(a.node("buffer_type"), f"buffer_type={buffer_type!r} is not supported; "
                      "tirfun buffers have the default type")
    separators = [] if a.axis_separators is None else list(a.axis_separators)
    stride_items = list(strides)

    def make(name: str) -> Buffer:
        out_strides = []
        for i, s in enumerate(stride_items):
            if isinstance(s, str):
                out_strides.append(Var(ip.namer.fresh(f"{name}_s{i}"), shape[0].dtype if shape else "int32"))
            else:
                out_strides.append(to_int_expr(ip, s, a.node("strides"), "a stride"))
        # fields keep what is written: they print back only when they differ
        # from tirfun's defaults, which is what an omitted keyword gives
        return Buffer(name, shape, dtype, strides=out_strides, elem_offset=elem_offset,
                      storage_scope=scope, data=data,
                      data_alignment=align if a.given("align") and align != -1 else align_default,
                      offset_factor=offset_factor, axis_separators=separators)

    return make


_BUFFER_PARAMS = (("dtype", "float32"), ("data", None), ("strides", None), ("elem_offset", None),
                  ("scope", "global"), ("align", -1), ("offset_factor", 0),
                  ("buffer_type", "default"), ("axis_separators", None))


def _buffer(ip, node, a):
    """``T.Buffer(shape, dtype)``: a parameter annotation or a buffer view."""
    return NewBuffer(buffer_maker(ip, a, what="T.Buffer"), lambda b: None, "T.Buffer")


def _alloc_buffer(ip, node, a):
    block = ip.require_block_frame(node, "T.alloc_buffer", allow_function=True)
    make = buffer_maker(ip, a, what="T.alloc_buffer")
    if block is None:
        return NewBuffer(make, ip.func.root_allocs.append, "T.alloc_buffer")
    return NewBuffer(make, block.alloc_buffers.append, "T.alloc_buffer")


def _match_buffer(ip, node, a):
    param = a.param
    shape, dtype = a.shape, a.dtype
    if isinstance(param, SlicedAccess):
        param = ip.region_of(param, a.node("param"))
    elif isinstance(param, BufferLoad):
        param = ip.region_of(param, a.node("param"))
    if isinstance(param, BufferRegion):
        block = ip.require_block_frame(node, "T.match_buffer of a region")
        if shape is None:
            shape = tuple(r.extent for r in param.region)
            if not a.given("dtype"):
                dtype = param.buffer.dtype
        values = dict(a._values, shape=shape, dtype=dtype)
        make = buffer_maker(ip, Args(values, a._nodes, node), what="T.match_buffer")
        region = param
        return NewBuffer(make, lambda b: block.match_buffers.append(MatchBufferRegion(b, region)),
                         "T.match_buffer")
    if isinstance(param, Var):
        ip.require_function_frame(node, "T.match_buffer")
        if param not in ip.func.param_set:
            raise ip.fail(a.node("param"), f"T.match_buffer: {param.name} is not a parameter of "
                          "the function", hint="match a handle parameter (a: T.handle) or a region "
                          "of a buffer inside a block")
        if not param.dtype.is_handle:
            raise ip.fail(a.node("param"), f"T.match_buffer: parameter {param.name} is "
                          f"{article(str(param.dtype))} scalar, not a handle")
        if param in ip.func.buffer_map:
            raise ip.fail(a.node("param"), f"T.match_buffer: parameter {param.name} is already "
                          f"matched to buffer {ip.func.buffer_map[param].name}")
        if shape is None:
            raise ip.fail(node, "T.match_buffer of a parameter needs a shape")
        make = buffer_maker(ip, a, what="T.match_buffer")
        return NewBuffer(make, lambda b: ip.func.buffer_map.__setitem__(param, b), "T.match_buffer")
    raise ip.fail(a.node("param"), f"T.match_buffer matches a handle parameter or a buffer "
                  f"region, got {describe(a.param)}")


def _decl_buffer(ip, node, a):
    make = buffer_maker(ip, a, what="T.decl_buffer")

    def open_(name):
        buf_name = ip.namer.fresh(name or "buffer")
        if a.data is not None:
            buffer = make(buf_name)
            return buffer, lambda body: DeclBuffer(buffer, body)
        data = Var(ip.namer.fresh(f"{buf_name}_data"), "handle")
        buffer = attrs.evolve(make(buf_name), data=data)

        def wrap(body):
            return Allocate(data, buffer.dtype, list(buffer.shape), IntImm("bool", 1),
                            DeclBuffer(buffer, body), scope=buffer.storage_scope)
        return buffer, wrap

    return Scope("T.decl_buffer", open_)


def _allocate(ip, node, a):
    extents = to_shape(ip, a.extents, a.node("extents"), "the extents of T.allocate")
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    scope = to_str(ip, a.scope, a.node("scope"), "scope") or "global"
    cond = IntImm("bool", 1) if a.condition is None else to_bool_expr(ip, a.condition, a.node("condition"), "the condition")
    annotations = attr_dict(ip, a.annotations, a.node("annotations"), "annotations")

    def open_(name):
        var = Var(ip.namer.fresh(name or "buf"), "handle")
        return var, lambda body: Allocate(var, dtype, extents, cond, body, annotations, scope)

    return Scope("T.allocate", open_)


# --------------------------------------------------------------------------
# function level


def _func_attr(ip, node, a):
    ip.require_function_frame(node, "T.func_attr")
    attrs_ = attr_dict(ip, a.attrs, a.node("attrs"), "T.func_attr's argument")
    for key, value in attrs_.items():
        if key == "global_symbol" and ip.func.private:
            raise ip.fail(a.node("attrs"), "a private function may not have a global_symbol "
                          "attribute", hint="drop private=True or the global_symbol entry")
        if key in ip.func.func_attrs:
            raise ip.fail(a.node("attrs"), f"duplicate function attribute {key!r}")
        ip.func.func_attrs[key] = value
    return None


def _handle(ip, node, a):
    if a.dtype is not None:
        to_dtype(ip, a.dtype, a.node("dtype"))  # pointer element types are checked, not kept
    to_str(ip, a.storage_scope, a.node("storage_scope"), "storage_scope")
    return NewVar(DataType("handle"))


def _var(ip, node, a):
    return NewVar(to_dtype(ip, a.dtype, a.node("dtype")))


def _env_thread(ip, node, a):
    tag = to_str(ip, a.thread_tag, a.node("thread_tag"), "the thread tag")
    return NewVar(to_dtype(ip, a.dtype, a.node("dtype")), thread_tag=tag)


# --------------------------------------------------------------------------
# loops


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
    from ..analysis.intervals import fold_sub, simplify

    extent = simplify(fold_sub(stop_expr, start_expr))
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


# --------------------------------------------------------------------------
# blocks


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
        from ..analysis.intervals import fold_sub, simplify

        return Range(lo, simplify(fold_sub(hi, lo)))
    extent = to_int_expr(ip, value, node, f"the domain of {what}")
    return Range(IntImm(extent.dtype, 0), extent)


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


# --------------------------------------------------------------------------
# scoped statements


def _attr(ip, node, a):
    key = to_str(ip, a.attr_key, a.node("attr_key"), "the attribute key")
    target = a.node_
    if isinstance(target, str):
        target = StringImm(target)
    elif isinstance(target, (bool, int, float)):
        target = const(target)
    elif not isinstance(target, (PrimExpr, Buffer, IterVar, BufferRegion)):
        raise ip.fail(a.node("node_"), f"T.attr cannot annotate {describe(target)}")
    value = a.value
    value = StringImm(value) if isinstance(value, str) else ip.as_expr(value, a.node("value"))

    def open_(name):
        if name is not None:
            raise ip.fail(node, "T.attr binds no value to a name")
        return None, lambda body: AttrStmt(target, key, value, body)

    return Scope("T.attr", open_)


def _launch_thread(ip, node, a):
    thread = a.thread
    extent = a.extent
    if isinstance(thread, Var):
        tag = ip.func.env_threads.get(thread)
        if tag is None:
            raise ip.fail(a.node("thread"), f"{thread.name} is not declared with T.env_thread")
        dtype = thread.dtype
    else:
        tag = to_str(ip, thread, a.node("thread"), "the thread of T.launch_thread")
        dtype = None
    extent = to_int_expr(ip, extent, a.node("extent"), "the extent of T.launch_thread", dtype)
    if isinstance(thread, Var):
        first = ip.func.thread_extents.setdefault(thread, extent)
        from ..analysis.intervals import prove_equal

        if not prove_equal(first, extent):
            raise ip.fail(a.node("extent"), f"inconsistent extents for the environment thread "
                          f"{thread.name}: {first.script()} and {extent.script()}")
    key = "virtual_thread" if tag.startswith("vthread") else "thread_extent"

    def open_(name):
        if isinstance(thread, Var):
            var = thread
        else:
            var = Var(ip.namer.fresh(name or tag.replace(".", "_")), extent.dtype)
        iv = IterVar(Range(IntImm(extent.dtype, 0), extent), var, IterVarType.ThreadIndex, tag)
        return var, lambda body: AttrStmt(iv, key, extent, body)

    return Scope("T.launch_thread", open_)


def _assert(ip, node, a):
    cond = to_bool_expr(ip, a.condition, a.node("condition"), "the assertion")
    msg = to_str(ip, a.message, a.node("message"), "the assertion message")

    def open_(name):
        if name is not None:
            raise ip.fail(node, "T.Assert binds no value to a name")
        return None, lambda body: AssertStmt(cond, StringImm(msg), body)

    return Scope("T.Assert", open_)


def _let_stmt(ip, node, a):
    value = ip.as_expr(a.value, a.node("value"))
    annotation = a.type_annotation
    given_var = a.var
    if given_var is not None and not isinstance(given_var, Var):
        raise ip.fail(a.node("var"), f"var= must be a variable, got {describe(given_var)}")
    dtype = value.dtype
    if annotation is not None:
        dtype = to_dtype(ip, annotation, a.node("type_annotation"))

    def open_(name):
        var = given_var if given_var is not None else Var(ip.namer.fresh(name or "v"), dtype)
        return var, lambda body: LetStmt(var, ip.cast_to(value, var.dtype, a.node("value")), body)

    return Scope("T.LetStmt", open_)


def _let(ip, node, a):
    if not isinstance(a.v, Var):
        raise ip.fail(a.node("v"), f"T.let binds a variable, got {describe(a.v)}")
    value = ip.cast_to(ip.as_expr(a.value, a.node("value")), a.v.dtype, a.node("value"))
    if a.body is not None:
        return Let(a.v, value, ip.as_expr(a.body, a.node("body")))
    var = a.v
    return Scope("T.let", lambda name: (None, lambda body: LetStmt(var, value, body)))


def _let_expr(ip, node, a):
    where = a.where
    if not isinstance(where, dict) or len(where) != 1:
        raise ip.fail(a.node("where"), "T.Let needs where= with exactly one {var: value} entry")
    (var, value), = where.items()
    if not isinstance(var, Var):
        raise ip.fail(a.node("where"), f"T.Let binds a variable, got {describe(var)}")
    value = ip.cast_to(ip.as_expr(value, a.node("where")), var.dtype, a.node("where"))
    return Let(var, value, ip.as_expr(a.expr, a.node("expr")))


def _evaluate(ip, node, a):
    value = a.value
    if isinstance(value, str):
        value = StringImm(value)
    elif isinstance(value, bool):
        value = IntImm("bool", int(value))
    return Evaluate(ip.as_expr(value, a.node("value")))


# --------------------------------------------------------------------------
# expressions


def _lift_pair(ip, a_val, b_val, node):
    """Python literals take the dtype of the other operand; scalars are
    broadcast to the other's lanes (TVMScript's rule for explicit nodes)."""
    from ..nodes.expr import _lift

    if not isinstance(a_val, PrimExpr) and not isinstance(b_val, PrimExpr):
        a_val, b_val = ip.as_expr(a_val, node), ip.as_expr(b_val, node)
    elif not isinstance(a_val, PrimExpr):
        a_val = _lift(ip.plain(a_val, node), b_val.dtype)
    elif not isinstance(b_val, PrimExpr):
        b_val = _lift(ip.plain(b_val, node), a_val.dtype)
    la, lb = a_val.dtype.lanes, b_val.dtype.lanes
    if la == 1 and lb > 1:
        a_val = Broadcast(a_val, lb)
    elif lb == 1 and la > 1:
        b_val = Broadcast(b_val, la)
    return a_val, b_val


def _node_ctor(cls):
    def handler(ip, node, a):
        x, y = _lift_pair(ip, a.a, a.b, node)
        return cls(x, y)
    return handler


def _not(ip, node, a):
    return Not(to_bool_expr(ip, a.a, a.node("a"), "the operand of T.Not"))


def _cast(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    return Cast(dtype, ip.as_expr(a.value, a.node("value")))


def _cast_fn(ip, node, a):
    return tir_op.cast(ip.as_expr(a.value, a.node("value")), to_dtype(ip, a.dtype, a.node("dtype")))


def _select(ip, node, a):
    cond = to_bool_expr(ip, a.condition, a.node("condition"), "the condition of T.Select")
    t, f = _lift_pair(ip, a.true_value, a.false_value, node)
    return Select(cond, t, f)


def _if_then_else(ip, node, a):
    cond = to_bool_expr(ip, a.cond, a.node("cond"), "the condition of T.if_then_else")
    return tir_op.if_then_else(cond, ip.expr_or_literal(a.t, a.node("t")), ip.expr_or_literal(a.f, a.node("f")))


def _exact(cls):
    """``T.min``, ``T.max``, ``T.truncmod``: the printer's spelling of the
    Min, Max and Mod nodes, so they build the node even between two literals
    (operands are brought to one dtype first, as the operators do)."""
    def handler(ip, node, a):
        from ..nodes.expr import match_types

        x = ip.expr_or_literal(a.a, a.node("a"))
        y = ip.expr_or_literal(a.b, a.node("b"))
        x, y = match_types(x, y)
        return cls(x, y)
    return handler


def _op(fn, *names):
    def handler(ip, node, a):
        values = [ip.expr_or_literal(getattr(a, n), a.node(n)) for n in names]
        return fn(*values)
    return handler


def _ramp(ip, node, a):
    base = ip.as_expr(a.base, a.node("base"))
    stride = a.stride
    stride = IntImm(base.dtype, stride) if isinstance(stride, int) else ip.as_expr(stride, a.node("stride"))
    lanes = a.lanes
    if isinstance(lanes, IntImm):
        lanes = lanes.value
    if not isinstance(lanes, int) or isinstance(lanes, bool):
        raise ip.fail(a.node("lanes"), "the lanes of T.Ramp must be a constant int")
    return Ramp(base, stride, lanes)


def _broadcast(ip, node, a):
    lanes = a.lanes
    if isinstance(lanes, IntImm):
        lanes = lanes.value
    if not isinstance(lanes, int) or isinstance(lanes, bool):
        raise ip.fail(a.node("lanes"), "the lanes of T.Broadcast must be a constant int")
    return Broadcast(ip.as_expr(a.value, a.node("value")), lanes)


def _call_extern(op_name: str):
    def handler(ip, node, a):
        dtype = to_dtype(ip, a.dtype, a.node("dtype"))
        fname = to_str(ip, a.func_name, a.node("func_name"), "the function name")
        args = [StringImm(v) if isinstance(v, str) else ip.as_expr(v, node) for v in a.args]
        return Call(dtype, op_name, [StringImm(fname), *args])
    return handler


def _call_intrin(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    name = to_str(ip, a.op, a.node("op"), "the intrinsic name")
    args = [StringImm(v) if isinstance(v, str) else ip.as_expr(v, node) for v in a.args]
    return tir_op.call_intrin(dtype, name, *args)


def _address_of(ip, node, a):
    load = a.buffer_load
    if isinstance(load, SlicedAccess):
        load = ip.as_expr(load, a.node("buffer_load"))
    if not isinstance(load, BufferLoad):
        raise ip.fail(a.node("buffer_load"), f"T.address_of takes a buffer element such as "
                      f"A[i], got {describe(a.buffer_load)}")
    return tir_op.address_of(load)


def _ret(ip, node, a):
    return tir_op.ret(ip.as_expr(a.value, a.node("value")))


def _likely(ip, node, a):
    cond = to_bool_expr(ip, a.cond, a.node("cond"), "the argument of T.likely")
    return Call(cond.dtype, "tir.likely", [cond])


def _reinterpret(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    value = ip.as_expr(a.value, a.node("value"))
    if dtype.bits * dtype.lanes != value.dtype.bits * value.dtype.lanes:
        raise ip.fail(node, f"T.reinterpret cannot change the size: {value.dtype} to {dtype}")
    return Call(dtype, "tir.reinterpret", [value])


def _storage_sync(ip, node, a):
    scope = to_str(ip, a.scope, a.node("scope"), "the storage scope")
    return Call("int32", "tir.tvm_storage_sync", [StringImm(scope)])


def _bitwise(op_name: str):
    def handler(ip, node, a):
        from ..nodes.expr import _bitwise as build

        x = ip.expr_or_literal(a.a, a.node("a"))
        y = ip.expr_or_literal(a.b, a.node("b"))
        if not isinstance(x, PrimExpr) and not isinstance(y, PrimExpr):
            x = ip.as_expr(x, a.node("a"))
        return build(op_name, x, y)
    return handler


def _bitwise_not(ip, node, a):
    return ~ip.as_expr(a.a, a.node("a"))


def _limit_value(which: str):
    def handler(ip, node, a):
        dtype = to_dtype(ip, a.dtype, a.node("dtype"))
        value = dtype.max_value() if which == "max" else dtype.min_value()
        if dtype.is_float:
            finite = {16: 65504.0, 32: 3.4028234663852886e38, 64: 1.7976931348623157e308}
            value = finite.get(dtype.bits, math.inf) * (1 if which == "max" else -1)
        return const(value, dtype)
    return handler


def _infinity(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    if not dtype.is_float:
        raise ip.fail(node, f"T.infinity needs a float dtype, got {dtype}")
    return FloatImm(dtype, math.inf)


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
    from ..analysis.intervals import fold_sub, simplify

    return Range(begin, simplify(fold_sub(end, begin)))


def _prim_func_decorator(ip, node, a):
    return Builtin("T.prim_func")


def _not_here(name: str):
    def handler(ip, node, a):
        raise ip.fail(node, f"{name} cannot be called inside a TVMScript function")
    return handler


# --------------------------------------------------------------------------
# the table

_AXIS_SIG = sig("dom", "binding", ("dtype", "int32"))
_LOOP_SIG = sig("start", ("stop", None), kwonly=(("annotations", None),))

BUILTINS: dict[str, tuple[Signature, Callable]] = {
    "range": (sig("start", ("stop", None), ("step", None), kwonly=(("annotations", None),)), _range),
    # declarations
    "T.prim_func": (sig(("func", None), ("private", False), ("check_well_formed", True)), _prim_func_decorator),
    "T.Buffer": (sig("shape", *_BUFFER_PARAMS[:5], ("align", 0), *_BUFFER_PARAMS[6:]), _buffer),
    "T.buffer": (sig("shape", *_BUFFER_PARAMS[:5], ("align", 0), *_BUFFER_PARAMS[6:]), _buffer),
    "T.match_buffer": (sig("param", ("shape", None), *_BUFFER_PARAMS), _match_buffer),
    "T.alloc_buffer": (sig("shape", *_BUFFER_PARAMS), _alloc_buffer),
    "T.decl_buffer": (sig("shape", *_BUFFER_PARAMS[:5], ("align", 0), ("offset_factor", 0),
                          ("buffer_type", ""), ("axis_separators", None)), _decl_buffer),
    "T.func_attr": (sig("attrs"), _func_attr),
    "T.handle": (sig(("dtype", None), ("storage_scope", "global"), kwonly=(("is_size_var", False),)), _handle),
    "T.var": (sig("dtype", ("name", "")), _var),
    "T.env_thread": (sig("thread_tag", ("dtype", "int32")), _env_thread),
    # loops
    "T.serial": (_LOOP_SIG, _for_kind(ForKind.SERIAL, "T.serial")),
    "T.parallel": (_LOOP_SIG, _for_kind(ForKind.PARALLEL, "T.parallel")),
    "T.vectorized": (_LOOP_SIG, _for_kind(ForKind.VECTORIZED, "T.vectorized")),
    "T.unroll": (_LOOP_SIG, _for_kind(ForKind.UNROLLED, "T.unroll")),
    "T.thread_binding": (sig("start", ("stop", None), ("thread", None), kwonly=(("annotations", None),)),
                         _thread_binding),
    "T.grid": (sig(star="extents"), _grid),
    # blocks
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
    # statements
    "T.evaluate": (sig("value"), _evaluate),
    "T.attr": (sig("node_", "attr_key", "value"), _attr),
    "T.launch_thread": (sig("thread", "extent"), _launch_thread),
    "T.allocate": (sig("extents", "dtype", ("scope", "global"), ("condition", None), ("annotations", None)),
                   _allocate),
    "T.Assert": (sig("condition", "message"), _assert),
    "T.LetStmt": (sig("value", ("type_annotation", None), kwonly=(("var", None),)), _let_stmt),
    "T.let": (sig("v", "value", ("body", None)), _let),
    "T.Let": (sig("expr", "where"), _let_expr),
    "T.iter_var": (sig("var", "dom", "iter_type", "thread_tag"), _iter_var),
    "T.Range": (sig("begin", "end"), _range_ctor),
    # expressions
    "T.Cast": (sig("dtype", "value"), _cast),
    "T.cast": (sig("value", "dtype"), _cast_fn),
    "T.Select": (sig("condition", "true_value", "false_value"), _select),
    "T.if_then_else": (sig("cond", "t", "f", drop=("dtype",)), _if_then_else),
    "T.min": (sig("a", "b", drop=("dtype",)), _exact(Min)),
    "T.max": (sig("a", "b", drop=("dtype",)), _exact(Max)),
    "T.floordiv": (sig("a", "b", drop=("dtype",)), _op(tir_op.floordiv, "a", "b")),
    "T.floormod": (sig("a", "b", drop=("dtype",)), _op(tir_op.floormod, "a", "b")),
    "T.truncdiv": (sig("a", "b", drop=("dtype",)), _op(tir_op.truncdiv, "a", "b")),
    "T.truncmod": (sig("a", "b", drop=("dtype",)), _exact(Mod)),
    "T.Add": (sig("a", "b"), _node_ctor(Add)),
    "T.Sub": (sig("a", "b"), _node_ctor(Sub)),
    "T.Mul": (sig("a", "b"), _node_ctor(Mul)),
    "T.Div": (sig("a", "b"), _node_ctor(Div)),
    "T.Mod": (sig("a", "b"), _node_ctor(Mod)),
    "T.FloorDiv": (sig("a", "b"), _node_ctor(FloorDiv)),
    "T.FloorMod": (sig("a", "b"), _node_ctor(FloorMod)),
    "T.Min": (sig("a", "b"), _node_ctor(Min)),
    "T.Max": (sig("a", "b"), _node_ctor(Max)),
    "T.EQ": (sig("a", "b"), _node_ctor(EQ)),
    "T.NE": (sig("a", "b"), _node_ctor(NE)),
    "T.LT": (sig("a", "b"), _node_ctor(LT)),
    "T.LE": (sig("a", "b"), _node_ctor(LE)),
    "T.GT": (sig("a", "b"), _node_ctor(GT)),
    "T.GE": (sig("a", "b"), _node_ctor(GE)),
    "T.And": (sig("a", "b"), _node_ctor(And)),
    "T.Or": (sig("a", "b"), _node_ctor(Or)),
    "T.Not": (sig("a"), _not),
    "T.Ramp": (sig("base", "stride", "lanes"), _ramp),
    "T.Broadcast": (sig("value", "lanes"), _broadcast),
    "T.call_extern": (sig("dtype", "func_name", star="args"), _call_extern("tir.call_extern")),
    "T.call_pure_extern": (sig("dtype", "func_name", star="args"), _call_extern("tir.call_pure_extern")),
    "T.call_intrin": (sig("dtype", "op", star="args"), _call_intrin),
    "T.address_of": (sig("buffer_load"), _address_of),
    "T.ret": (sig("value"), _ret),
    "T.likely": (sig("cond"), _likely),
    "T.reinterpret": (sig("dtype", "value"), _reinterpret),
    "T.tvm_storage_sync": (sig("scope"), _storage_sync),
    "T.bitwise_and": (sig("a", "b"), _bitwise("tir.bitwise_and")),
    "T.bitwise_or": (sig("a", "b"), _bitwise("tir.bitwise_or")),
    "T.bitwise_xor": (sig("a", "b"), _bitwise("tir.bitwise_xor")),
    "T.shift_left": (sig("a", "b"), _bitwise("tir.shift_left")),
    "T.shift_right": (sig("a", "b"), _bitwise("tir.shift_right")),
    "T.bitwise_not": (sig("a"), _bitwise_not),
    "T.max_value": (sig("dtype"), _limit_value("max")),
    "T.min_value": (sig("dtype"), _limit_value("min")),
    "T.infinity": (sig("dtype"), _infinity),
    "T.abs": (sig("x", drop=("dtype",)), _op(tir_op.abs, "x")),
    "T.ldexp": (sig("x", "e", drop=("dtype",)), _op(tir_op.ldexp, "x", "e")),
    # the module decorator is not callable inside a function
    "I.ir_module": (sig("cls"), _not_here("I.ir_module")),
}

for _name in tir_op.FLOAT_UNARY + tir_op.FLOAT_PREDICATES + tir_op.INT_UNARY:
    BUILTINS[f"T.{_name}"] = (sig("x", drop=("dtype",)), _op(getattr(tir_op, _name), "x"))
for _name in tir_op.FLOAT_BINARY:
    BUILTINS[f"T.{_name}"] = (sig("x", "y", drop=("dtype",)), _op(getattr(tir_op, _name), "x", "y"))
BUILTINS["T.fabs"] = BUILTINS["T.abs"]

#: alternative spellings: newer TVM names and TVM's short forms
ALIASES = {
    "T.sblock": "T.block",
    "T.axis.S": "T.axis.spatial",
    "T.axis.R": "T.axis.reduce",
    "T.select": "T.Select",
    "T.buffer_decl": "T.Buffer",
}

NAMESPACES = {"T", "T.axis", "I", "script", "tirfun"}

#: dtype names offered as ``T.<name>`` (others, such as vector types, are
#: recognised by parsing the name)
SCALAR_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64", "bfloat16")


def resolve(path: str, attr: str):
    """The value of ``<path>.<attr>`` in a script namespace, or None."""
    full = f"{path}.{attr}"
    full = ALIASES.get(full, full)
    if full in BUILTINS:
        return Builtin(full)
    if full in NAMESPACES:
        return Namespace(full)
    if path == "T":
        if attr == "boolean":
            return DTypeCtor(DataType("bool"))
        if attr in SCALAR_DTYPES or _is_dtype_name(attr):
            return DTypeCtor(DataType(attr))
    if path == "script":
        return {"tir": Namespace("T"), "ir": Namespace("I"), "ir_module": Builtin("I.ir_module"),
                "prim_func": Builtin("T.prim_func")}.get(attr)
    if path == "tirfun" and attr == "script":
        return Namespace("script")
    return None


def _is_dtype_name(attr: str) -> bool:
    if attr in ("handle", "void"):
        return False
    try:
        DataType(attr)
    except Exception:
        return False
    return True


def names_of(path: str) -> list[str]:
    """Every attribute of a namespace, for suggestions in messages."""
    prefix = path + "."
    out = {k[len(prefix):].split(".")[0] for k in list(BUILTINS) + list(ALIASES) if k.startswith(prefix)}
    if path == "T":
        out.update(SCALAR_DTYPES)
        out.add("axis")
    return sorted(out)
