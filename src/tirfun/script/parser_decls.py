"""Script functions that declare: buffers, parameters' views, variables
and function attributes (``T.Buffer``, ``T.match_buffer``,
``T.alloc_buffer``, ``T.func_attr``, ``T.handle``, ``T.env_thread``...).

:data:`HANDLERS` maps each name to its signature and handler.
"""

from __future__ import annotations

from collections.abc import Callable

from ..nodes import Buffer, BufferLoad, BufferRegion, MatchBufferRegion, PointerType, Var
from ..nodes.dtype import DataType
from .parser_args import (
    Args, attr_dict, sig, to_dtype, to_int_expr, to_shape, to_str,
)
from .parser_values import NewBuffer, NewVar, SlicedAccess, article, describe


def buffer_maker(ip, a: Args, *, align_default=64, what: str,
                 offset_var: bool = False) -> Callable[[str], Buffer]:
    """The function naming a buffer declared with TVM's buffer arguments
    (``offset_var``: as TVM does for a view, give a buffer with an
    ``offset_factor`` and no ``elem_offset`` an offset variable of its own,
    ``<name>_elem_offset``)."""
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
    if buffer_type not in ("", "default", "auto"):
        raise ip.fail(a.node("buffer_type"), f"buffer_type must be 'auto' or 'default', "
                      f"got {buffer_type!r}")
    buffer_type = buffer_type or "default"
    separators = [] if a.axis_separators is None else list(a.axis_separators)
    stride_items = list(strides)

    def make(name: str) -> Buffer:
        items = stride_items
        if buffer_type == "auto" and not items:
            # as TVM does, an auto-broadcast buffer gets one stride variable per
            # dimension, bound to the argument's strides (0 where the extent is 1)
            items = ["stride"] * len(shape)
        out_strides = []
        for i, s in enumerate(items):
            if isinstance(s, str):
                out_strides.append(Var(ip.namer.fresh(f"{name}_s{i}"), shape[0].dtype if shape else "int32"))
            else:
                out_strides.append(to_int_expr(ip, s, a.node("strides"), "a stride"))
        offset = elem_offset
        if offset is None and offset_var and offset_factor != 0:
            offset = Var(ip.namer.fresh(f"{name}_elem_offset"), shape[0].dtype if shape else "int32")
        # fields keep what is written: they print back only when they differ
        # from tirfun's defaults, which is what an omitted keyword gives
        return Buffer(name, shape, dtype, strides=out_strides, elem_offset=offset,
                      storage_scope=scope, data=data,
                      data_alignment=align if a.given("align") and align != -1 else align_default,
                      offset_factor=offset_factor, axis_separators=separators,
                      buffer_type=buffer_type)

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
            # as TVM's match_buffer: without a shape, the region gives the
            # shape and the dtype (a dtype= given too is not used)
            shape = tuple(r.extent for r in param.region)
            dtype = param.buffer.dtype
        values = dict(a._values, shape=shape, dtype=dtype)
        make = buffer_maker(ip, Args(values, a._nodes, node), what="T.match_buffer", offset_var=True)
        return NewBuffer(make, lambda b: _add_match(ip, node, block, MatchBufferRegion(b, param)),
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
        make = buffer_maker(ip, a, what="T.match_buffer", offset_var=True)
        return NewBuffer(make, lambda b: ip.func.buffer_map.__setitem__(param, b), "T.match_buffer",
                         handle=param)
    raise ip.fail(a.node("param"), f"T.match_buffer matches a handle parameter or a buffer "
                  f"region, got {describe(a.param)}")


def _add_match(ip, node, block, match: MatchBufferRegion) -> None:
    """Add a block's matched region, refused here, as TVM refuses it, when
    the buffer cannot view the region."""
    from ..analysis.verify import match_buffer_problem

    problem = match_buffer_problem(match)
    if problem is not None:
        raise ip.fail(node, f"T.match_buffer: {match.buffer.name} cannot view "
                      f"{match.source.buffer.name}'s region: {problem}")
    block.match_buffers.append(match)


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
    scope = to_str(ip, a.storage_scope, a.node("storage_scope"), "storage_scope")
    if a.dtype is None and scope == "global":
        return NewVar(DataType("handle"))  # TVM's untyped handle
    element = DataType("void") if a.dtype is None else to_dtype(ip, a.dtype, a.node("dtype"))
    return NewVar(DataType("handle"), pointee=PointerType(element, scope))


def _var(ip, node, a):
    return NewVar(to_dtype(ip, a.dtype, a.node("dtype")))


def _env_thread(ip, node, a):
    tag = to_str(ip, a.thread_tag, a.node("thread_tag"), "the thread tag")
    return NewVar(to_dtype(ip, a.dtype, a.node("dtype")), thread_tag=tag)


HANDLERS: dict = {
    "T.Buffer": (sig("shape", *_BUFFER_PARAMS[:5], ("align", 0), *_BUFFER_PARAMS[6:]), _buffer),
    "T.buffer": (sig("shape", *_BUFFER_PARAMS[:5], ("align", 0), *_BUFFER_PARAMS[6:]), _buffer),
    "T.match_buffer": (sig("param", ("shape", None), *_BUFFER_PARAMS), _match_buffer),
    "T.alloc_buffer": (sig("shape", *_BUFFER_PARAMS), _alloc_buffer),
    "T.func_attr": (sig("attrs"), _func_attr),
    "T.handle": (sig(("dtype", None), ("storage_scope", "global"), kwonly=(("is_size_var", False),)), _handle),
    "T.var": (sig("dtype", ("name", "")), _var),
    "T.env_thread": (sig("thread_tag", ("dtype", "int32")), _env_thread),
}
