"""Script functions for TVM's call intrinsics beyond the math functions:
the table-driven ones of :mod:`tirfun.tir.intrinsics` (warp shuffles,
tensor-core and PTX operations, LLVM intrinsics, TVM's calling-convention
helpers), ``T.ceildiv``, and the names of TVM's ``T`` that tirfun does not
support yet.

Every table entry builds ``Call(dtype, "tir.<name>", args)``, with the dtype
where TVM takes it: the first argument (or ``dtype=``), the last argument,
the dtype of an argument, or fixed. :data:`HANDLERS` maps each name to its
signature and handler.
"""

from __future__ import annotations

from ..errors import NodeError
from ..nodes import Buffer, BufferLoad, Call, FloatImm, IntImm, StringImm
from ..nodes.target import TargetConfig
from ..nodes.target import target as make_target
from ..nodes.dtype import DataType
from ..tir import op as tir_op
from ..tir.intrinsics import ALIASES, INTRINSICS, Intrinsic
from .parser_args import sig, to_dtype, to_mask, to_str
from .parser_values import DTypeCtor, describe


def _arg(ip, value, node):
    """An intrinsic argument: strings stay strings, everything else is an
    expression (a buffer slice a vector load)."""
    if isinstance(value, (str, StringImm)):
        return StringImm(value) if isinstance(value, str) else value
    return ip.as_expr(value, node)


def _table_handler(entry: Intrinsic):
    fixed = [p for p in entry.params if not p.startswith("*")]
    star = next((p[1:] for p in entry.params if p.startswith("*")), None)
    if entry.dtype == "last":
        fixed = fixed[:-1]

    def handler(ip, node, a):
        values = [(getattr(a, p), a.node(p)) for p in fixed]
        if star is not None:
            values += [(v, node) for v in getattr(a, star)]
        args = [_arg(ip, v, n) for v, n in values]
        if entry.dtype == "first":
            dtype = to_dtype(ip, a.dtype, a.node("dtype"))
        elif entry.dtype == "last":
            dtype = to_dtype(ip, getattr(a, entry.params[-1]), a.node(entry.params[-1]))
        elif entry.dtype.startswith("arg:"):
            dtype = args[int(entry.dtype[4:])].dtype
        else:
            dtype = DataType(entry.dtype)
        if entry.name in ("call_llvm_intrin", "call_llvm_pure_intrin"):
            # a name such as "llvm.fabs", or, as older TVM printed it, LLVM's
            # numeric intrinsic id (T.uint32(97)), which is kept as written
            # and which the builds refuse, not knowing LLVM's numbering
            numbered = isinstance(args[0], IntImm) and args[0].dtype.is_integer
            if not numbered and (not isinstance(args[0], StringImm)
                                 or not args[0].value.startswith("llvm.")):
                raise ip.fail(a.node("name"), f"T.{entry.name} names the LLVM intrinsic as a "
                              f"string such as \"llvm.fabs\" (or its numeric id), got "
                              f"{describe(a.name)}")
        return Call(dtype, f"tir.{entry.name}", args)
    return handler


def _signature(entry: Intrinsic):
    params = [p for p in entry.params if not p.startswith("*")]
    star = next((p[1:] for p in entry.params if p.startswith("*")), None)
    if entry.dtype == "first":
        return sig("dtype", *params, star=star, dtype_first=True)
    return sig(*params, star=star, drop=("dtype",) if entry.dtype != "last" else ())


def _ceildiv(ip, node, a):
    """TVM's ``ceildiv``: ``(a + b - 1) // b`` on integers, folded when both
    are constants (there is no ceildiv node)."""
    x = ip.expr_or_literal(a.lhs, a.node("lhs"))
    y = ip.expr_or_literal(a.rhs, a.node("rhs"))
    return tir_op.ceildiv(x, y)


def unsupported_message(name: str) -> str:
    """The message for a name of TVM's ``T`` that tirfun does not support yet."""
    return f"tirfun does not support T.{name} yet (TVM v0.20 has it)"


def _comm_reducer(ip, node, a):
    raise ip.fail(node, "T.comm_reducer is called with a lambda: T.comm_reducer(lambda x, y: "
                  "x + y, [T.float32(0)])")


def _target(ip, node, a):
    config = a.target_config
    if isinstance(config, StringImm):
        config = config.value
    if not isinstance(config, (str, dict)):
        raise ip.fail(a.node("target_config"), f"T.target takes a target string such as "
                      f"\"llvm\" or a config dict, got {describe(config)}")
    host = a.host
    if host is not None and not isinstance(host, (str, dict, TargetConfig)):
        raise ip.fail(a.node("host"), f"the host of T.target is a target, got {describe(host)}")
    try:
        return make_target(config, host)
    except NodeError as err:
        raise ip.fail(node, str(err)) from None


#: ``T.target`` and TVM's ``tvm.target.Target`` in a script
target_handler = _target


def _imm(cls):
    def handler(ip, node, a):
        dtype = to_dtype(ip, a.dtype, a.node("dtype"))
        value = ip.plain(a.value, a.node("value"))
        try:
            return cls(dtype, value)
        except NodeError as err:
            raise ip.fail(node, str(err)) from None
    return handler


def _string_imm(ip, node, a):
    return StringImm(to_str(ip, a.value, a.node("value"), "the value of T.StringImm"))


def _call_node(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    op = to_str(ip, a.op, a.node("op"), "the op of T.Call")
    if not isinstance(a.args, (list, tuple)):
        raise ip.fail(a.node("args"), f"the arguments of T.Call are a list, got {describe(a.args)}")
    return Call(dtype, op if "." in op else f"tir.{op}", [_arg(ip, v, a.node("args")) for v in a.args])


def _buffer_load(ip, node, a):
    if not isinstance(a.buffer, Buffer):
        raise ip.fail(a.node("buffer"), f"T.BufferLoad loads from a buffer, got {describe(a.buffer)}")
    if not isinstance(a.indices, (list, tuple)):
        raise ip.fail(a.node("indices"), f"the indices of T.BufferLoad are a list, got {describe(a.indices)}")
    load = BufferLoad(a.buffer, [ip.as_expr(i, a.node("indices")) for i in a.indices])
    if a.predicate is None:
        return load
    return BufferLoad(load.buffer, load.indices,
                      to_mask(ip, a.predicate, a.node("predicate"), load.dtype.lanes, "T.BufferLoad"))


def _dp4a(ip, node, a):
    """``T.dp4a(vec1, vec2, acc=0)`` as TVM's function takes it, or
    ``T.dp4a("int32", vec1, vec2, acc)`` as TVM prints it."""
    values = list(a.args)
    if values and isinstance(values[0], (str, DTypeCtor)):
        dtype = to_dtype(ip, values.pop(0), node)
    else:
        dtype = DataType("int32")
    if len(values) == 2:
        values.append(0)
    if len(values) != 3:
        raise ip.fail(node, "T.dp4a takes vec1, vec2 and acc (after an optional dtype)")
    vec1, vec2 = (ip.as_expr(v, node) for v in values[:2])
    acc = ip.cast_to(values[2], dtype, node)
    for v in (vec1, vec2):
        if not (v.dtype.is_integer and v.dtype.bits == 8 and v.dtype.lanes == 4):
            raise ip.fail(node, f"T.dp4a multiplies int8x4 or uint8x4 vectors, got {v.dtype}")
    if dtype != "int32" and dtype != "uint32":
        raise ip.fail(node, f"T.dp4a accumulates in int32 or uint32, got {dtype}")
    return Call(dtype, "tir.dp4a", [vec1, vec2, acc])


HANDLERS: dict = {
    "T.dp4a": (sig(star="args", drop=("dtype",)), _dp4a),
    "T.IntImm": (sig("dtype", "value"), _imm(IntImm)),
    "T.FloatImm": (sig("dtype", "value"), _imm(FloatImm)),
    "T.StringImm": (sig("value"), _string_imm),
    "T.Call": (sig("dtype", "op", "args"), _call_node),
    "T.BufferLoad": (sig("buffer", "indices", ("predicate", None)), _buffer_load),
    "T.target": (sig("target_config", ("host", None)), _target),
    "T.ceildiv": (sig("lhs", "rhs", drop=("dtype",)), _ceildiv),
    # read by parser_reducer before its arguments are evaluated
    "T.comm_reducer": (sig("combiner", "identity"), _comm_reducer),
}
for _name, _entry in INTRINSICS.items():
    HANDLERS.setdefault(f"T.{_name}", (_signature(_entry), _table_handler(_entry)))
for _alias, _name in ALIASES.items():
    HANDLERS[f"T.{_alias}"] = HANDLERS[f"T.{_name}"]


#: Names TVM v0.20's ``T`` exports (``tvm.script.tir``), every one, so that
#: a name tirfun lacks is reported as not supported yet rather than unknown.
TVM_NAMES = frozenset("""
int8 int16 int32 int64 int8x4 int16x4 int32x4 int64x4 int8x8 int16x8 int32x8 int64x8 int8x16
int16x16 int32x16 int64x16 int8x32 int16x32 int32x32 int64x32 int8x64 int16x64 int32x64
int64x64 uint8 uint16 uint32 uint64 uint8x4 uint16x4 uint32x4 uint64x4 uint8x8 uint16x8
uint32x8 uint64x8 uint8x16 uint16x16 uint32x16 uint64x16 uint8x32 uint16x32 uint32x32
uint64x32 uint8x64 uint16x64 uint32x64 uint64x64 float8_e4m3fn float8_e5m2 float4_e2m1fn
float16 float32 float64 float4_e2m1fnx2 float8_e4m3fnx4 float8_e5m2x4 float4_e2m1fnx4
float16x4 float32x4 float64x4 float8_e4m3fnx8 float8_e5m2x8 float4_e2m1fnx8 float16x8
float32x8 float64x8 float8_e4m3fnx16 float8_e5m2x16 float4_e2m1fnx16 float16x16 float32x16
float64x16 float8_e4m3fnx32 float8_e5m2x32 float4_e2m1fnx32 float16x32 float32x32 float64x32
float8_e4m3fnx64 float8_e5m2x64 float4_e2m1fnx64 float16x64 float32x64 float64x64 bfloat16
buffer buffer_decl prim_func arg func_name func_attr func_ret match_buffer block init where
reads writes block_attr alloc_buffer axis serial parallel vectorized unroll thread_binding
grid Assert realize allocate allocate_const attr While If Then Else decl_buffer launch_thread
env_thread buffer_store prefetch evaluate boolean handle void var ptr min max iter_var
comm_reducer index_map target buffer_var abs fabs acos acosh address_of asin asinh atan atan2
atanh bitwise_and bitwise_not bitwise_or bitwise_xor ceil clz copysign cos cosh erf exp exp2
exp10 floor ceildiv floordiv floormod fmod hypot if_then_else infinity isfinite isinf isnan
isnullptr ldexp likely log log1p log2 log10 lookup_param max_value min_value nearbyint
nextafter popcount pow q_multiply_shift q_multiply_shift_per_axis ret reinterpret round rsqrt
shift_left shift_right sigmoid sin sinh sqrt tan tanh trunc truncdiv truncmod tvm_access_ptr
tvm_throw_last_error tvm_stack_alloca tvm_stack_make_shape tvm_stack_make_array
tvm_check_return call_packed call_cpacked call_packed_lowered call_cpacked_lowered
call_extern call_intrin call_llvm_intrin call_llvm_pure_intrin call_pure_extern tvm_tuple
tvm_struct_set tvm_struct_get tvm_thread_invariant tvm_thread_allreduce tvm_load_matrix_sync
tvm_mma_sync tvm_bmma_sync tvm_fill_fragment tvm_store_matrix_sync tvm_storage_sync
tvm_warp_shuffle tvm_warp_shuffle_up tvm_warp_shuffle_down tvm_warp_activemask ptx_mma
ptx_mma_sp ptx_ldmatrix ptx_cp_async ptx_cp_async_bulk ptx_wait_group ptx_commit_group
ptx_cp_async_barrier ptx_init_barrier_thread_count ptx_arrive_barrier
ptx_arrive_barrier_expect_tx ptx_wait_barrier make_filled_simdgroup_matrix simdgroup_load
simdgroup_store simdgroup_multiply_accumulate create_barriers mma_store mma_fill vectorlow
vectorhigh vectorcombine dp4a assume undef tvm_call_packed tvm_call_cpacked
tvm_call_packed_lowered tvm_call_cpacked_lowered TVMBackendAllocWorkspace
TVMBackendFreeWorkspace start_profile_intrinsic end_profile_intrinsic meta_var
anylist_getitem anylist_resetitem anylist_setitem_call_packed anylist_setitem_call_cpacked
llvm_lookup_intrinsic_id type_annotation broadcast ramp cast Var SizeVar Reduce FloatImm
IntImm StringImm Cast Add Sub Mul Div Mod FloorDiv FloorMod Min Max EQ NE LT LE GT GE And Or
Not Select BufferLoad ProducerLoad Ramp Broadcast Shuffle Call CallEffectKind let LetStmt Let
IterVar CommReducer Range vscale get_active_lane_mask call_kernel ignore_loop_partition
Buffer Ptr bool macro
""".split())


def is_unsupported(path: str, attr: str) -> bool:
    """True for a name of TVM's ``T`` that tirfun's namespace lacks."""
    return path == "T" and attr in TVM_NAMES


__all__ = ["HANDLERS", "TVM_NAMES", "is_unsupported", "unsupported_message"]
