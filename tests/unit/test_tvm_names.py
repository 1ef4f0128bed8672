"""Every name of TVM v0.20's ``T`` (``tvm.script.tir``) either works in
tirfun or is refused with a ParseError saying tirfun does not support it
yet, inside a TVMScript function and from Python alike."""

from __future__ import annotations

import pytest

from tirfun.errors import ParseError
from tirfun.script import from_source
from tirfun.script import tir as T
from tirfun.script.parser_builtins import resolve

#: ``tvm.script.tir.__all__`` of TVM v0.20: ``ir_builder.tir.ir.__all__`` and
#: the parser's additions (Buffer, Ptr, bool, macro; prim_func is in both)
TVM_T_NAMES = (
    "int8", "int16", "int32", "int64", "int8x4", "int16x4", "int32x4", "int64x4", "int8x8",
    "int16x8", "int32x8", "int64x8", "int8x16", "int16x16", "int32x16", "int64x16", "int8x32",
    "int16x32", "int32x32", "int64x32", "int8x64", "int16x64", "int32x64", "int64x64", "uint8",
    "uint16", "uint32", "uint64", "uint8x4", "uint16x4", "uint32x4", "uint64x4", "uint8x8",
    "uint16x8", "uint32x8", "uint64x8", "uint8x16", "uint16x16", "uint32x16", "uint64x16",
    "uint8x32", "uint16x32", "uint32x32", "uint64x32", "uint8x64", "uint16x64", "uint32x64",
    "uint64x64", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float16", "float32", "float64",
    "float4_e2m1fnx2", "float8_e4m3fnx4", "float8_e5m2x4", "float4_e2m1fnx4", "float16x4",
    "float32x4", "float64x4", "float8_e4m3fnx8", "float8_e5m2x8", "float4_e2m1fnx8", "float16x8",
    "float32x8", "float64x8", "float8_e4m3fnx16", "float8_e5m2x16", "float4_e2m1fnx16",
    "float16x16", "float32x16", "float64x16", "float8_e4m3fnx32", "float8_e5m2x32",
    "float4_e2m1fnx32", "float16x32", "float32x32", "float64x32", "float8_e4m3fnx64",
    "float8_e5m2x64", "float4_e2m1fnx64", "float16x64", "float32x64", "float64x64", "bfloat16",
    "buffer", "buffer_decl", "prim_func", "arg", "func_name", "func_attr", "func_ret",
    "match_buffer", "block", "init", "where", "reads", "writes", "block_attr", "alloc_buffer",
    "axis", "serial", "parallel", "vectorized", "unroll", "thread_binding", "grid", "Assert",
    "realize", "allocate", "allocate_const", "attr", "While", "If", "Then", "Else", "decl_buffer",
    "launch_thread", "env_thread", "buffer_store", "prefetch", "evaluate", "boolean", "handle",
    "void", "var", "ptr", "min", "max", "iter_var", "comm_reducer", "index_map", "target",
    "buffer_var", "abs", "fabs", "acos", "acosh", "address_of", "asin", "asinh", "atan", "atan2",
    "atanh", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "ceil", "clz", "copysign",
    "cos", "cosh", "erf", "exp", "exp2", "exp10", "floor", "ceildiv", "floordiv", "floormod",
    "fmod", "hypot", "if_then_else", "infinity", "isfinite", "isinf", "isnan", "isnullptr",
    "ldexp", "likely", "log", "log1p", "log2", "log10", "lookup_param", "max_value", "min_value",
    "nearbyint", "nextafter", "popcount", "pow", "q_multiply_shift", "q_multiply_shift_per_axis",
    "ret", "reinterpret", "round", "rsqrt", "shift_left", "shift_right", "sigmoid", "sin", "sinh",
    "sqrt", "tan", "tanh", "trunc", "truncdiv", "truncmod", "tvm_access_ptr",
    "tvm_throw_last_error", "tvm_stack_alloca", "tvm_stack_make_shape", "tvm_stack_make_array",
    "tvm_check_return", "call_packed", "call_cpacked", "call_packed_lowered",
    "call_cpacked_lowered", "call_extern", "call_intrin", "call_llvm_intrin",
    "call_llvm_pure_intrin", "call_pure_extern", "tvm_tuple", "tvm_struct_set", "tvm_struct_get",
    "tvm_thread_invariant", "tvm_thread_allreduce", "tvm_load_matrix_sync", "tvm_mma_sync",
    "tvm_bmma_sync", "tvm_fill_fragment", "tvm_store_matrix_sync", "tvm_storage_sync",
    "tvm_warp_shuffle", "tvm_warp_shuffle_up", "tvm_warp_shuffle_down", "tvm_warp_activemask",
    "ptx_mma", "ptx_mma_sp", "ptx_ldmatrix", "ptx_cp_async", "ptx_cp_async_bulk", "ptx_wait_group",
    "ptx_commit_group", "ptx_cp_async_barrier", "ptx_init_barrier_thread_count",
    "ptx_arrive_barrier", "ptx_arrive_barrier_expect_tx", "ptx_wait_barrier",
    "make_filled_simdgroup_matrix", "simdgroup_load", "simdgroup_store",
    "simdgroup_multiply_accumulate", "create_barriers", "mma_store", "mma_fill", "vectorlow",
    "vectorhigh", "vectorcombine", "dp4a", "assume", "undef", "tvm_call_packed",
    "tvm_call_cpacked", "tvm_call_packed_lowered", "tvm_call_cpacked_lowered",
    "TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", "start_profile_intrinsic",
    "end_profile_intrinsic", "meta_var", "anylist_getitem", "anylist_resetitem",
    "anylist_setitem_call_packed", "anylist_setitem_call_cpacked", "llvm_lookup_intrinsic_id",
    "type_annotation", "broadcast", "ramp", "cast", "Var", "SizeVar", "Reduce", "FloatImm",
    "IntImm", "StringImm", "Cast", "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod",
    "Min", "Max", "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not", "Select", "BufferLoad",
    "ProducerLoad", "Ramp", "Broadcast", "Shuffle", "Call", "CallEffectKind", "let", "LetStmt",
    "Let", "IterVar", "CommReducer", "Range", "vscale", "get_active_lane_mask", "call_kernel",
    "ignore_loop_partition", "Buffer", "Ptr", "bool", "macro",
)


#: the names of TVM's ``T`` that tirfun does not support yet, every one
NOT_SUPPORTED_YET = ("index_map", "Reduce", "ProducerLoad")


def test_exactly_these_names_are_not_supported_yet():
    assert [n for n in TVM_T_NAMES if not _supported(n)] == list(NOT_SUPPORTED_YET)


def _supported(name: str) -> bool:
    return resolve("T", name) is not None


def test_the_list_is_tvms_and_has_no_repeats():
    assert len(TVM_T_NAMES) == len(set(TVM_T_NAMES)) == 320


@pytest.mark.parametrize("name", TVM_T_NAMES)
def test_each_name_works_or_says_it_is_not_supported_yet(name):
    text = f"@T.prim_func\ndef main(A: T.Buffer((4,), \"float32\")):\n    x = T.{name}\n"
    if _supported(name):
        try:
            from_source(text)
        except ParseError as err:
            assert "does not support" not in str(err) and "unknown name" not in str(err)
        assert getattr(T, name) is not None or name in ("axis",)
        return
    with pytest.raises(ParseError, match=rf"tirfun does not support T\.{name} yet") as info:
        from_source(text)
    assert info.value.line == 3
    try:
        getattr(T, name)  # from Python, a name may still be a plain helper (T.Var is the node)
    except AttributeError as err:
        assert f"tirfun does not support T.{name} yet" in str(err)


def test_a_name_tvm_lacks_is_still_unknown():
    with pytest.raises(ParseError, match="unknown name T.no_such_thing"):
        from_source("@T.prim_func\ndef main():\n    T.evaluate(T.no_such_thing(0))\n")
