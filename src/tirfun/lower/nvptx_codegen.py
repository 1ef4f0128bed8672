"""NVPTX code generation: kernels to LLVM IR for ``nvptx64-nvidia-cuda``.

:class:`NVPTXCodegen` reuses the shared statement and expression code of
:class:`~tirfun.lower.llvm_codegen.LLVMCodegen` and decides what is
particular to a GPU:

* each :class:`~tirfun.lower.device_split.Kernel` becomes a function of
  LLVM's ``ptx_kernel`` calling convention (what LLVM 22 reads instead of
  ``nvvm.annotations``), its buffers passed as pointers to global memory
  (address space 1, cast to generic pointers, which LLVM's address space
  inference turns back into ``ld.global``);
* a loop bound to ``blockIdx.x`` or ``threadIdx.x`` (or a launched thread)
  reads its index from ``llvm.nvvm.read.ptx.sreg.ctaid.x`` /
  ``tid.x``; the launch makes the grid exactly the loops' extents, so no
  guard is needed; a ``vthread`` loop (lowering leaves one only as a
  kernel of virtual threads alone, with no barrier inside:
  :mod:`tirfun.analysis.virtual_threads`) runs its iterations one after
  another in its thread;
* ``shared`` buffers are globals of address space 3, one per block,
  ``local`` ones stack slots (the local state space, address space 5); a
  kernel with more than 48 KiB of shared memory (which the target allows
  with ``-max_shared_memory_per_block``) takes it as dynamic shared memory,
  sized at launch (:attr:`NVPTXCodegen.dynamic_shared`);
* ``T.tvm_storage_sync("shared")`` is ``llvm.nvvm.barrier0``
  (``bar.sync 0``), ``"warp"`` a ``bar.warp.sync`` of the full mask;
* ``T.tvm_warp_shuffle_down`` / ``_up`` / ``tvm_warp_shuffle`` are
  ``shfl.sync.down`` / ``up`` / ``idx`` (32-bit pieces of other values);
* a vectorized access whose start is a multiple of its lanes is one PTX
  vector load or store (``ld.global.v4.f32``);
* the math functions NVPTX has no instruction for (exp, log, sin, pow,
  tanh, ...) call CUDA's libdevice, computed in double precision as the
  interpreter computes them and rounded once; libdevice is linked when
  found (:func:`find_libdevice`) and is otherwise a BuildError naming the
  function, never needed by a kernel that calls none. A ``float64`` call
  is libdevice's own double function, which is not the C library's the
  interpreter calls: on an H200, 48 of 5,861 random programs gave float64
  results 1 to 4 ulps from the interpreter's (more where later arithmetic
  cancels), within the error bounds CUDA documents for each function;
* ``fmod`` (and a float ``truncmod``) is libdevice's exact ``fmod``, not
  LLVM's ``frem``, whose NVPTX expansion is inexact (see :meth:`NVPTXCodegen._fmod`).

Floating point stays exact IEEE arithmetic (``div.rn``, ``sqrt.rn``, no
fused multiply-add unless the target allows contraction), so a kernel
computes what the interpreter computes, bit for bit, float64 math
functions aside.
"""

from __future__ import annotations

import os
import re

from llvmlite import ir

from ..analysis.threads import launched_iter_var
from ..errors import BuildError
from ..nodes import AttrStmt, Call, For, IntImm, StringImm
from ..target import NVPTX_TRIPLE
from ..tir.intrinsics import of_op
from . import llvm_intrinsics
from .device_split import Kernel
from .llvm_codegen import Frame, LLVMCodegen, _const
from .llvm_types import I8, I32, I64, PTR, BFloatType, element_bytes, memory_type, scalar_type, value_type

GLOBAL_PTR = ir.PointerType(addrspace=1)
#: the most static shared memory a CUDA kernel may declare
STATIC_SHARED_LIMIT = 48 * 1024
SHARED = 3
#: the special register of each thread tag
SREG = {"threadIdx.x": "tid.x", "threadIdx.y": "tid.y", "threadIdx.z": "tid.z",
        "blockIdx.x": "ctaid.x", "blockIdx.y": "ctaid.y", "blockIdx.z": "ctaid.z"}
#: libdevice's name of each double-precision function the codegen may declare
_LIBDEVICE = {
    **{f"llvm.{n}.f64": f"__nv_{n}" for n in ("exp", "exp2", "log", "log2", "log10", "sin", "cos",
                                               "pow")},
    **{f"llvm.{n}.f32": f"__nv_{n}f" for n in ("exp", "exp2", "log", "log2", "log10", "sin",
                                                "cos", "pow")},
    "llvm.ldexp.f64.i32": "__nv_ldexp", "llvm.ldexp.f32.i32": "__nv_ldexpf",
    "fmod": "__nv_fmod", "fmodf": "__nv_fmodf",
    **{n: f"__nv_{n}" for n in ("tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh",
                                "acosh", "atanh", "erf", "exp10", "log1p", "atan2", "hypot",
                                "nextafter", "pow")},
    **{n + "f": f"__nv_{n}f" for n in ("tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
                                       "asinh", "acosh", "atanh", "erf", "exp10", "log1p",
                                       "atan2", "hypot", "nextafter", "pow")},
}


def find_libdevice() -> str | None:
    """The path of CUDA's ``libdevice.10.bc``: ``TIRFUN_LIBDEVICE``, else
    under ``CUDA_HOME`` / ``CUDA_PATH`` / ``/usr/local/cuda``; None when
    there is none."""
    explicit = os.environ.get("TIRFUN_LIBDEVICE")
    if explicit:
        return explicit if os.path.isfile(explicit) else None
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda",
             "/opt/cuda"]
    for root in roots:
        if root:
            path = os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")
            if os.path.isfile(path):
                return path
    return None


class NVPTXCodegen(LLVMCodegen):
    """LLVM IR for the kernels of a CUDA build (see the module)."""

    def __init__(self, module_name: str, data_layout: str, *, contract: bool = False):
        super().__init__(module_name, NVPTX_TRIPLE, data_layout, contract=contract)
        self.kernel_names: list[str] = []
        #: the bytes of dynamic shared memory each kernel needs at launch
        self.dynamic_shared: dict[str, int] = {}
        self._dynamic = None  # (the kernel's dynamic shared base, next offset)

    def symbol(self, name: str) -> str:
        return name

    def add_kernel(self, kernel: Kernel, noalias: bool = True) -> str:
        """Generate ``kernel``; returns its symbol."""
        func = kernel.func
        arg_types = []
        for v in kernel.args:
            if v.dtype.is_handle:
                arg_types.append(GLOBAL_PTR)
            elif v.dtype.is_bool:
                arg_types.append(I8)
            else:
                arg_types.append(scalar_type(v.dtype))
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), arg_types), name=kernel.name)
        fn.calling_convention = "ptx_kernel"
        frame = Frame(fn, self._trap)
        self.frame = frame
        shared = _shared_bytes(func.body)
        self._dynamic = None
        if shared > STATIC_SHARED_LIMIT:
            # beyond 48 KiB a kernel's shared memory must be dynamic: one
            # array sized at launch, each buffer at its offset in it
            base = ir.GlobalVariable(self.module, ir.ArrayType(I8, 0),
                                     name=f"{kernel.name}_shared", addrspace=SHARED)
            base.linkage = "external"
            base.align = 16
            self._dynamic = (base, 0)
            self.dynamic_shared[kernel.name] = shared
        b = frame.builder
        buffers = dict(zip(kernel.args, kernel.buffers))
        for v, arg in zip(kernel.args, fn.args):
            arg.name = v.name
            if v.dtype.is_handle:
                if noalias:
                    arg.add_attribute("noalias")
                frame.vars[v] = b.addrspacecast(arg, PTR)
                frame.noalias.add(id(frame.vars[v]))
                if buffers.get(v) is not None:
                    frame.buffers[buffers[v]] = frame.vars[v]
            elif v.dtype.is_bool:
                frame.vars[v] = b.icmp_unsigned("!=", arg, ir.Constant(I8, 0))
            else:
                frame.vars[v] = arg
        self.stmt(func.body)
        if not frame.builder.block.is_terminated:
            frame.builder.ret_void()
        frame.finish()
        self.frame = None
        self._dynamic = None
        self.kernel_names.append(kernel.name)
        return kernel.name

    def _trap(self, frame: Frame, code: int) -> None:
        # a failed assertion in a kernel stops it: the launch reports an error
        trap = llvm_intrinsics.declare(self.module, "llvm.trap", ir.VoidType(), [])
        frame.builder.call(trap, [])
        frame.builder.unreachable()

    # threads -----------------------------------------------------------------
    def _thread_index(self, tag: str, dtype) -> ir.Value:
        reg = SREG.get(tag)
        if reg is None:
            raise BuildError(f"the CUDA build has no thread index for the tag {tag!r}")
        fn = llvm_intrinsics.declare(self.module, f"llvm.nvvm.read.ptx.sreg.{reg}", I32, [])
        value = self.b.call(fn, [])
        width = scalar_type(dtype).width
        if width > 32:
            return self.b.zext(value, scalar_type(dtype))
        if width < 32:
            return self.b.trunc(value, scalar_type(dtype))
        return value

    def _bind_thread(self, tag: str, lo, var, body) -> None:
        index = self._thread_index(tag, var.dtype)
        if not (isinstance(lo, IntImm) and lo.value == 0):
            index = self.b.add(self.expr(lo), index)
        self.frame.vars[var] = index
        self.stmt(body)

    def thread_for(self, s: For) -> None:
        if s.thread_binding.startswith("vthread"):
            self.serial_for(s)
            return
        self._bind_thread(s.thread_binding, s.min, s.loop_var, s.body)

    def parallel_for(self, s: For) -> None:
        # inside a kernel each thread runs its share serially
        self.serial_for(s)

    def _stmt_AttrStmt(self, s: AttrStmt) -> None:
        if launched_iter_var(s) is not None:
            tag = s.node.thread_tag
            if tag.startswith("vthread"):
                self.loop(s.node.var, _const(scalar_type(s.node.var.dtype), 0),
                          self.expr(s.value), lambda: self.stmt(s.body))
                return
            self._bind_thread(tag, IntImm(s.node.var.dtype, 0), s.node.var, s.body)
            return
        self.stmt(s.body)

    # memory ------------------------------------------------------------------
    def allocate(self, s) -> None:
        count = 1
        for e in s.extents:
            if not isinstance(e, IntImm):
                raise BuildError(f"buffer {s.buffer_var.name} of scope {s.scope} has the symbolic "
                                 f"size {[str(x) for x in s.extents]}; a kernel allocates "
                                 "statically")
            count *= e.value
        mem = memory_type(s.dtype)
        if s.scope in ("shared", "shared.dyn", "warp") and self._dynamic is not None:
            base, offset = self._dynamic
            size = max(count, 1) * element_bytes(s.dtype)
            self._dynamic = (base, offset + (size + 15) // 16 * 16)
            ptr = self.b.gep(self.b.addrspacecast(base, PTR), [ir.Constant(I64, offset)],
                             source_etype=I8)
        elif s.scope in ("shared", "shared.dyn", "warp"):
            ty = ir.ArrayType(mem, max(count, 1))
            g = ir.GlobalVariable(self.module, ty, name=self.fresh(s.buffer_var.name),
                                  addrspace=SHARED)
            g.linkage = "internal"
            g.initializer = ir.Constant(ty, ir.Undefined)
            g.align = max(16, element_bytes(s.dtype))
            ptr = self.b.addrspacecast(g, PTR)
        elif s.scope in ("local", "global", ""):
            if s.scope == "global":
                raise BuildError(f"buffer {s.buffer_var.name} is allocated in global memory "
                                 "inside a kernel; allocate it outside (T.alloc_buffer at the "
                                 "root) or give it the scope local")
            ptr = self.frame.alloca(mem, max(count, 1), s.buffer_var.name,
                                    max(16, element_bytes(s.dtype)))
        else:
            raise BuildError(f"the CUDA build does not know the storage scope {s.scope!r} "
                             f"of buffer {s.buffer_var.name}")
        self.frame.vars[s.buffer_var] = ptr
        self.frame.noalias.add(id(ptr))
        self.stmt(s.body)

    # vector memory access ----------------------------------------------------
    def _vector_align(self, buf, index) -> int:
        """The alignment of a vector access ``buf[index]`` (a Ramp of stride
        1 whose base is a multiple of the lanes an aligned load takes;
        buffers start 16-byte aligned, which the runtime checks): the
        vector's size up to the 16 bytes of a PTX vector load, else 0."""
        from ..nodes import Ramp

        if buf.dtype.is_bool or not isinstance(index, Ramp):
            return 0
        if not (isinstance(index.stride, IntImm) and index.stride.value == 1):
            return 0
        elem = element_bytes(buf.dtype)
        size = index.dtype.lanes * elem
        if size & (size - 1) or size < 4:
            return 0
        align = min(size, 16)  # PTX loads at most 16 bytes at once
        if not _multiple_of(index.base, max(align // elem, 1)):
            return 0
        return align

    def _expr_BufferLoad(self, e):
        # a predicated access takes the masked path of the CPU code
        align = self._vector_align(e.buffer, e.indices[0]) \
            if len(e.indices) == 1 and e.predicate is None else 0
        if not align:
            return super()._expr_BufferLoad(e)
        index = e.indices[0]
        ptr = self.element_ptr(e.buffer, self.to_index(self.expr(index.base), index.base.dtype))
        return self.b.load(ptr, typ=ir.VectorType(memory_type(e.buffer.dtype), index.dtype.lanes),
                           align=align)

    def _stmt_BufferStore(self, s) -> None:
        align = self._vector_align(s.buffer, s.indices[0]) \
            if len(s.indices) == 1 and s.predicate is None else 0
        if not align:
            super()._stmt_BufferStore(s)
            return
        value = self.expr(s.value)
        index = s.indices[0]
        ptr = self.element_ptr(s.buffer, self.to_index(self.expr(index.base), index.base.dtype))
        self.b.store(value, ptr, align=align)

    # calls -------------------------------------------------------------------
    def _expr_Call(self, e: Call) -> ir.Value:
        if e.op == "tir.tvm_storage_sync":
            scope = e.args[0].value if e.args and isinstance(e.args[0], StringImm) else "shared"
            if scope in ("shared", "shared.dyn"):
                fn = llvm_intrinsics.declare(self.module, "llvm.nvvm.barrier0", ir.VoidType(), [])
                self.b.call(fn, [])
            elif scope == "warp":
                fn = llvm_intrinsics.declare(self.module, "llvm.nvvm.bar.warp.sync",
                                             ir.VoidType(), [I32])
                self.b.call(fn, [ir.Constant(I32, -1)])
            else:
                raise BuildError(f"T.tvm_storage_sync({scope!r}): the CUDA build has barriers "
                                 "of a thread block (shared) and of a warp, not of the whole grid")
            return ir.Constant(I32, 0)
        if e.op in _SHUFFLES:
            return self._shuffle(e)
        if e.op == "tir.ret":
            raise BuildError("T.ret in a kernel: a kernel returns no value")
        if isinstance(e.op, str) and e.op.startswith("tir.") and e.op[4:] in llvm_intrinsics.SUPPORTED:
            return self._math(e.op[4:], e)
        entry = of_op(e.op) if isinstance(e.op, str) else None
        if entry is not None and entry.needs == "cuda":
            # the target is right; what is missing is tirfun's lowering of it
            raise BuildError(f"T.{entry.name} is {entry.what}: tirfun's CUDA build does not "
                             "support it yet")
        return super()._expr_Call(e)

    def _shuffle(self, e: Call) -> ir.Value:
        """``T.tvm_warp_shuffle*(mask, value, lane, width, warp_size)`` as
        ``llvm.nvvm.shfl.sync.{idx,down,up}``, with CUDA's clamp for
        ``width`` (``__shfl_down_sync``'s); values other than 32-bit ones go
        through 32-bit pieces."""
        if len(e.args) != 5 or e.dtype.lanes != 1:
            raise BuildError(f"T.{e.op[4:]} takes a scalar and five arguments (mask, value, lane, "
                             f"width, warp_size), got {len(e.args)}")
        b = self.b
        kind = _SHUFFLES[e.op]
        mask = self._as_i32(self.expr(e.args[0]))
        value = self.expr(e.args[1])
        lane = self._as_i32(self.expr(e.args[2]))
        width = self._as_i32(self.expr(e.args[3]))
        clamp = b.shl(b.sub(ir.Constant(I32, 32), width), ir.Constant(I32, 8))
        if kind != "up":
            clamp = b.or_(clamp, ir.Constant(I32, 0x1F))

        def shfl(v):
            typ = "f32" if isinstance(v.type, ir.FloatType) else "i32"
            fn = llvm_intrinsics.declare(self.module, f"llvm.nvvm.shfl.sync.{kind}.{typ}",
                                         v.type, [I32, v.type, I32, I32])
            return b.call(fn, [mask, v, lane, clamp])

        t = value.type
        if isinstance(t, ir.FloatType) or t == I32:
            return shfl(value)
        bits = _bits_of(t)
        as_int = value if isinstance(t, ir.IntType) else b.bitcast(value, ir.IntType(bits))
        if bits < 32:
            out = b.trunc(shfl(b.zext(as_int, I32)), ir.IntType(bits))
        elif bits == 64:
            low = shfl(b.trunc(as_int, I32))
            high = shfl(b.trunc(b.lshr(as_int, ir.Constant(I64, 32)), I32))
            out = b.or_(b.zext(low, I64), b.shl(b.zext(high, I64), ir.Constant(I64, 32)))
        else:
            raise BuildError(f"T.{e.op[4:]} of a {e.dtype} value: a shuffle moves values of at "
                             "most 64 bits")
        return out if isinstance(t, ir.IntType) else b.bitcast(out, t)

    def _minmax(self, e, op: str) -> ir.Value:
        """Integer min/max of vectors lane by lane. The GPU has no vector
        min or max, and LLVM 22's instruction selection aborts on
        ``umin(fptoui <N x double>, <0, 1, ...>)`` (the lane that clamps to
        zero asks for an integer of 0 bits); one lane at a time, each
        constant lane folds before instruction selection sees it."""
        t = value_type(e.dtype)
        if not isinstance(t, ir.VectorType) or e.dtype.is_float:
            return super()._minmax(e, op)
        a, b, dt = self._arith_operands(e)
        bld = self.b
        out = ir.Constant(t, ir.Undefined)
        for lane in range(t.count):
            k = ir.Constant(I32, lane)
            x, y = bld.extract_element(a, k), bld.extract_element(b, k)
            if dt.is_uint or dt.is_bool:
                c = bld.icmp_unsigned(op, x, y)
            else:
                c = bld.icmp_signed(op, x, y)
            out = bld.insert_element(out, bld.select(c, x, y), k)
        return out

    def _as_i32(self, v: ir.Value) -> ir.Value:
        if v.type == I32:
            return v
        if isinstance(v.type, ir.IntType) and v.type.width < 32:
            return self.b.zext(v, I32)
        if isinstance(v.type, ir.IntType):
            return self.b.trunc(v, I32)
        raise BuildError("a warp shuffle's mask, lane and width are integers")

    def _math(self, name: str, e: Call) -> ir.Value:
        """A math function, one lane at a time (libdevice has no vector
        functions); ldexp of a bfloat16 in double, which holds it exactly."""
        b = self.b
        args = [self.expr(a) for a in e.args]
        ret = value_type(e.dtype)
        lanes = e.dtype.lanes

        def scalar(parts, ret_type):
            if name == "fmod":
                return self._fmod(*parts)
            if name == "ldexp" and isinstance(ret_type, BFloatType):
                wide = llvm_intrinsics.emit(b, name, [b.fpext(parts[0], ir.DoubleType()), parts[1]],
                                            ir.DoubleType())
                return b.fptrunc(wide, ret_type)
            return llvm_intrinsics.emit(b, name, parts, ret_type)

        if lanes == 1:
            return scalar(args, ret)
        out = ir.Constant(ret, ir.Undefined)
        for lane in range(lanes):
            k = ir.Constant(I32, lane)
            parts = [b.extract_element(a, k) if isinstance(a.type, ir.VectorType) else a
                     for a in args]
            out = b.insert_element(out, scalar(parts, ret.element), k)
        return out

    def _expr_Mod(self, e) -> ir.Value:
        if not e.dtype.is_float:
            return super()._expr_Mod(e)
        a, b, _ = self._arith_operands(e)
        return llvm_intrinsics.per_lane(self.b, [a, b], lambda parts: self._fmod(*parts))

    def _fmod(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """C's ``fmod`` of two scalars through libdevice, which computes it
        exactly. Not LLVM's ``frem``: the NVPTX backend expands it as
        ``x - trunc(x / y) * y``, which is wrong where the quotient needs
        more bits than the format has, gives ``+0`` where the result is
        ``-0``, and ``x`` for ``fmod(inf, inf)`` (found on a GPU). A 16-bit
        float goes through float32: the remainder is exact there and fits
        the narrow format, so rounding back changes nothing."""
        b = self.b
        t = x.type
        if isinstance(t, ir.DoubleType):
            return b.call(llvm_intrinsics.declare(self.module, "fmod", t, [t, t]), [x, y])
        f32 = ir.FloatType()
        fn = llvm_intrinsics.declare(self.module, "fmodf", f32, [f32, f32])
        if isinstance(t, ir.FloatType):
            return b.call(fn, [x, y])
        return b.fptrunc(b.call(fn, [b.fpext(x, f32), b.fpext(y, f32)]), t)

    def _module_call(self, e: Call) -> ir.Value:
        raise BuildError(f"a kernel calls the function {e.op.name_hint}; the CUDA build "
                         "compiles no device functions yet")

    def ir_text(self) -> tuple[str, list[str]]:
        """The module's LLVM IR with math calls renamed to libdevice's
        functions, and the libdevice functions it needs."""
        text = str(self.module)
        needed = []
        for name, fn in list(self.module.globals.items()):
            if not isinstance(fn, ir.Function) or fn.blocks:
                continue
            if re.fullmatch(r"llvm\.[a-z0-9]+\.v\d+f(32|64|16)", name) and name.split(".")[1] in (
                    "exp", "exp2", "log", "log2", "log10", "sin", "cos", "pow"):
                raise BuildError(f"the CUDA build computes {name.split('.')[1]} one element at a "
                                 "time; do not vectorize a loop that calls it")
            target = _LIBDEVICE.get(name)
            if target is None:
                # LLVM's NVPTX backend ends the process on a call it cannot
                # select: refuse the transcendental intrinsics it has no code for
                if re.fullmatch(r"llvm\.(exp|exp2|exp10|log|log2|log10|sin|cos|tan|pow|powi|"
                                r"sinh|cosh|tanh|asin|acos|atan|atan2|ldexp|frexp|sincos)\..*", name):
                    raise BuildError(f"the CUDA build cannot compute {name} on this element "
                                     "type; compute it in float32 or float64")
                continue
            text = text.replace(f'@"{name}"', f'@"{target}"')
            needed.append(target)
        return text, needed


#: the warp shuffles and the ``shfl.sync`` mode of each
_SHUFFLES = {"tir.tvm_warp_shuffle": "idx", "tir.tvm_warp_shuffle_down": "down",
             "tir.tvm_warp_shuffle_up": "up"}


def _bits_of(t: ir.Type) -> int:
    """The width in bits of a scalar register type."""
    if isinstance(t, ir.IntType):
        return t.width
    if isinstance(t, ir.DoubleType):
        return 64
    if isinstance(t, ir.FloatType):
        return 32
    return 16  # half and bfloat


def _shared_bytes(body) -> int:
    """The shared memory of a kernel: its shared allocations, each rounded
    up to 16 bytes."""
    from ..analysis.traversal import stmt_nodes
    from ..nodes import Allocate

    total = 0
    for s in stmt_nodes(body):
        if isinstance(s, Allocate) and s.scope in ("shared", "shared.dyn", "warp"):
            count = 1
            for e in s.extents:
                count *= e.value if isinstance(e, IntImm) else 1
            total += (max(count, 1) * element_bytes(s.dtype) + 15) // 16 * 16
    return total


def _multiple_of(e, k: int) -> bool:
    """Whether the integer expression ``e`` is surely a multiple of ``k``."""
    from ..nodes import Add, FloorMod, Mul, Sub

    if isinstance(e, IntImm):
        return e.value % k == 0
    if isinstance(e, Mul):
        return _multiple_of(e.a, k) or _multiple_of(e.b, k)
    if isinstance(e, FloorMod):  # x - c * (x // c): both multiples of k
        return _multiple_of(e.a, k) and _multiple_of(e.b, k)
    if isinstance(e, (Add, Sub)):
        return _multiple_of(e.a, k) and _multiple_of(e.b, k)
    return False


__all__ = ["NVPTXCodegen", "find_libdevice", "SREG"]
