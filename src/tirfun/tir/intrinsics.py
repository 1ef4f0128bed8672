"""TVM's call intrinsics beyond the math functions, as data.

Each :class:`Intrinsic` says how ``T.<name>(...)`` is written (its
parameters, where its result dtype comes from) and where it can run: on
any target, or only where ``needs`` says (``"cuda"`` for warp and tensor-core
operations, TVM's packed-function runtime for the calling-convention
helpers). The parser builds ``Call(dtype, "tir.<name>", args)`` from it, the
printer writes the call back as TVM does, and the interpreter and the CPU
build use :func:`refusal` for a message that names the construct and what it
needs when they cannot give it a meaning.
"""

from __future__ import annotations

import attrs

#: what ``needs`` says for TVM's packed-function calling convention
PACKED_RUNTIME = "TVM's packed-function runtime"


@attrs.frozen
class Intrinsic:
    """How ``T.<name>`` is called and where it runs.

    ``params`` are the positional parameters after the dtype (a trailing
    ``*name`` collects the rest); ``dtype`` is ``"first"`` (the dtype is the
    first argument, or ``dtype=``), ``"last"`` (the last argument),
    ``"arg:N"`` (the dtype of argument N) or a fixed dtype; ``needs`` is
    None when the CPU build and the interpreter give it a meaning, else the
    target or runtime it needs."""

    name: str
    params: tuple[str, ...]
    dtype: str
    needs: str | None
    what: str


def _table(*rows) -> dict[str, Intrinsic]:
    return {r[0]: Intrinsic(r[0], tuple(r[1].split()), r[2], r[3], r[4]) for r in rows}


_WARP = "a warp-level operation"
_TC = "a tensor-core (wmma) operation"
_PTX = "an inline PTX instruction"
_ABI = "part of TVM's calling convention"

#: every intrinsic of this table, by its ``T.`` name
INTRINSICS: dict[str, Intrinsic] = _table(
    # meaning on the CPU
    ("assume", "cond", "bool", None, "an assumption for the optimizer"),
    ("tvm_thread_invariant", "cond", "arg:0", None, "a thread-invariance hint"),
    ("ignore_loop_partition", "predicate", "bool", None, "a loop-partition hint"),
    ("undef", "", "int32", None, "an undefined value"),
    ("start_profile_intrinsic", "id", "handle", None, "a profiling marker"),
    ("end_profile_intrinsic", "id", "handle", None, "a profiling marker"),
    ("call_llvm_intrin", "name *args", "first", None, "a call of an LLVM intrinsic"),
    ("call_llvm_pure_intrin", "name *args", "first", None, "a call of an LLVM intrinsic"),
    ("vectorlow", "vec", "first", None, "the low half of a vector"),
    ("vectorhigh", "vec", "first", None, "the high half of a vector"),
    ("vectorcombine", "vec1 vec2", "first", None, "two vectors joined"),
    ("dp4a", "vec1 vec2 acc", "first", None, "a four-lane 8-bit dot product"),
    ("q_multiply_shift", "x y q s", "int32", None, "a fixed-point multiplication"),
    ("type_annotation", "", "first", None, "a type carried as a value"),
    ("isnullptr", "x", "bool", None, "a null-pointer test"),
    ("tvm_access_ptr", "ptype data offset extent rw_mask", "handle", None,
     "a pointer into a buffer's data"),
    ("q_multiply_shift_per_axis", "x y ls rs q is_lshift_required is_rshift_required", "int32",
     None, "a fixed-point multiplication"),
    # GPU: warps
    ("tvm_warp_shuffle", "mask value warp_id width warp_size", "arg:1", "cuda", _WARP),
    ("tvm_warp_shuffle_up", "mask value offset width warp_size", "arg:1", "cuda", _WARP),
    ("tvm_warp_shuffle_down", "mask value offset width warp_size", "arg:1", "cuda", _WARP),
    ("tvm_warp_activemask", "", "uint32", "cuda", _WARP),
    ("tvm_thread_allreduce", "*args", "handle", "cuda", "a reduction across GPU threads"),
    # GPU: tensor cores through wmma
    ("tvm_fill_fragment", "fragment m n k index value", "handle", "cuda", _TC),
    ("tvm_load_matrix_sync", "fragment m n k index buffer_ptr stride layout", "handle", "cuda", _TC),
    ("tvm_store_matrix_sync", "fragment m n k index buffer_ptr stride layout", "handle", "cuda", _TC),
    ("tvm_mma_sync", "fragment_d index_d fragment_a index_a fragment_b index_b fragment_c index_c",
     "handle", "cuda", _TC),
    ("tvm_bmma_sync", "fragment_d index_d fragment_a index_a fragment_b index_b fragment_c index_c",
     "handle", "cuda", _TC),
    # GPU: PTX
    ("ptx_mma", "*args", "first", "cuda", _PTX),
    ("ptx_mma_sp", "*args", "first", "cuda", _PTX),
    ("ptx_ldmatrix", "trans num type local_ptr local_offset smem_ptr smem_offset", "first", "cuda", _PTX),
    ("ptx_cp_async", "shared_ptr shared_offset global_ptr global_offset bytes", "first", "cuda", _PTX),
    ("ptx_cp_async_bulk", "shared_ptr shared_offset global_ptr global_offset bytes barrier_id",
     "first", "cuda", _PTX),
    ("ptx_commit_group", "", "void", "cuda", _PTX),
    ("ptx_wait_group", "num", "void", "cuda", _PTX),
    ("ptx_cp_async_barrier", "barrier_id", "void", "cuda", _PTX),
    ("ptx_init_barrier_thread_count", "barrier_id thread_count", "void", "cuda", _PTX),
    ("ptx_arrive_barrier", "barrier_id", "void", "cuda", _PTX),
    ("ptx_arrive_barrier_expect_tx", "barrier_id byte_count", "void", "cuda", _PTX),
    ("ptx_wait_barrier", "barrier_id", "void", "cuda", _PTX),
    ("create_barriers", "barrier_count", "void", "cuda", _PTX),
    ("mma_store", "m n dst_ptr src_ptr src_offset dst_stride", "first", "cuda", _TC),
    ("mma_fill", "local_size local_ptr offset", "first", "cuda", _TC),
    # GPU: Metal simdgroups
    ("make_filled_simdgroup_matrix", "d index value col row", "handle", "metal", "a simdgroup matrix operation"),
    ("simdgroup_load", "d index ptr stride col row transpose_matrix", "handle", "metal",
     "a simdgroup matrix operation"),
    ("simdgroup_store", "d index ptr stride col row transpose_matrix", "handle", "metal",
     "a simdgroup matrix operation"),
    ("simdgroup_multiply_accumulate", "d index_d a index_a b index_b c index_c", "handle", "metal",
     "a simdgroup matrix operation"),
    # TVM's runtime ABI: packed calls and the structures they pass
    ("tvm_struct_get", "arr index field dtype", "last", PACKED_RUNTIME, _ABI),
    ("tvm_struct_set", "arr index field value", "int32", PACKED_RUNTIME, _ABI),
    ("tvm_stack_alloca", "dtype_str num", "handle", PACKED_RUNTIME, _ABI),
    ("tvm_stack_make_shape", "*args", "handle", PACKED_RUNTIME, _ABI),
    ("tvm_stack_make_array", "data shape strides ndim arr_dtype elem_offset", "handle",
     PACKED_RUNTIME, _ABI),
    ("tvm_call_packed", "*args", "int32", PACKED_RUNTIME, _ABI),
    ("tvm_call_cpacked", "*args", "int32", PACKED_RUNTIME, _ABI),
    ("tvm_call_packed_lowered", "*args", "int32", PACKED_RUNTIME, _ABI),
    ("tvm_call_cpacked_lowered", "*args", "int32", PACKED_RUNTIME, _ABI),
    ("tvm_check_return", "expected return_unexpected nested_call", "int32", PACKED_RUNTIME, _ABI),
    ("tvm_throw_last_error", "", "handle", PACKED_RUNTIME, _ABI),
    ("tvm_tuple", "*value", "handle", PACKED_RUNTIME, _ABI),
    ("TVMBackendAllocWorkspace", "device_type device_id nbytes dtype_code_hint dtype_bits_hint",
     "handle", PACKED_RUNTIME, _ABI),
    ("TVMBackendFreeWorkspace", "device_type device_id ptr", "int32", PACKED_RUNTIME, _ABI),
    ("lookup_param", "param_name", "handle", PACKED_RUNTIME, _ABI),
    ("anylist_getitem", "list_handle index", "handle", PACKED_RUNTIME, _ABI),
    ("anylist_resetitem", "list_handle index", "int32", PACKED_RUNTIME, _ABI),
    ("anylist_setitem_call_packed", "list_handle index func_name *args", "int32", PACKED_RUNTIME, _ABI),
    ("anylist_setitem_call_cpacked", "list_handle index func_name *args", "int32", PACKED_RUNTIME, _ABI),
    # a kernel compiled by an external compiler (Triton), launched through the packed runtime
    ("call_kernel", "kernel launch_args *args", "void", "cuda (a kernel compiled by Triton)",
     "a call of an externally compiled GPU kernel"),
    # scalable vectors
    ("vscale", "", "int32", "llvm with scalable vectors (SVE)", "the scalable-vector length"),
    # of a fixed number of lanes, defined in tirfun.tir.legalize
    ("get_active_lane_mask", "base limit", "first", None, "a vector lane mask"),
)

#: ``T.`` spellings that TVM maps to an intrinsic of another name
ALIASES = {"call_packed": "tvm_call_packed", "call_cpacked": "tvm_call_cpacked",
           "call_packed_lowered": "tvm_call_packed_lowered",
           "call_cpacked_lowered": "tvm_call_cpacked_lowered"}


def of_op(op: str) -> Intrinsic | None:
    """The table entry of a ``Call`` op such as ``"tir.ptx_mma"``, or None."""
    return INTRINSICS.get(op[4:]) if isinstance(op, str) and op.startswith("tir.") else None


def refusal(op: str, where: str) -> str | None:
    """Why ``where`` (``"the interpreter"``, ``"the CPU build (llvm)"``)
    cannot run the call ``op``, naming what it needs; None when it can."""
    entry = of_op(op)
    if entry is None or entry.needs is None:
        return None
    if entry.needs == PACKED_RUNTIME:
        return (f"T.{entry.name} is {entry.what}: it needs {PACKED_RUNTIME}, which {where} "
                f"does not use")
    return f"T.{entry.name} is {entry.what}: it needs target {entry.needs}; {where} cannot run it"


__all__ = ["Intrinsic", "INTRINSICS", "ALIASES", "PACKED_RUNTIME", "of_op", "refusal"]
