"""LLVM IR from lowered PrimFuncs, with llvmlite.ir.

:class:`LLVMCodegen` turns lowered statements and expressions into LLVM
IR; it knows nothing of threads. Backends subclass it and decide how loops
of kind ``parallel`` and ``thread_binding`` run and how scratch memory is
allocated (:mod:`tirfun.lower.llvm_cpu` for the host; an NVPTX backend
maps thread tags to the PTX special registers through the same hooks).

Every compiled function follows :mod:`tirfun.lower.signature`: one
argument per parameter, then the hidden size variables, returning an int32
status. Integer arithmetic wraps as the dtype does; integer division by a
value that is not a constant is guarded so that dividing by zero yields 0
instead of a hardware trap; floating point is exact IEEE arithmetic, never
reassociated, and ``a*b + c`` is fused into one multiply-add only when the
target allows contraction. Math functions call the C library unless the
target asks for ``-math=fast`` (:mod:`tirfun.lower.llvm_vecmath`).
"""

from __future__ import annotations

import math

from collections.abc import Callable

from llvmlite import ir

from ..errors import BuildError
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, Allocate, And, AssertStmt, AttrStmt, Block, BlockRealize,
    Broadcast, Buffer, BufferLoad, BufferStore, Call, Cast, DataType, DeclBuffer, Div, Evaluate,
    FloatImm, FloorDiv, FloorMod, For, ForKind, GlobalVar, IfThenElse, IntImm, Let, LetStmt, Max, Min, Mod,
    Mul, Not, Or, PrimExpr, PrimFunc, Ramp, Select, SeqStmt, Stmt, StringImm, Sub, Var,
)
from ..tir.intrinsics import refusal
from ..tir.llvm_x86 import X86, intrinsic_args, signature_problem
from ..tir.legalize import LEGALIZED, legalize
from . import llvm_intrinsics, llvm_libcalls, llvm_minifloat
from .llvm_workspace import workspace_functions
from .llvm_types import I8, I16, I32, I64, PTR, element_bytes, memory_type, scalar_type, value_type
from .signature import STATUS_OUT_OF_MEMORY, Signature

#: expressions whose float8/float4 result is computed in double and rounded
_MINI_ROUNDED = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Call, Cast)

#: scratch buffers up to this size live on the stack; larger ones use malloc
STACK_LIMIT_BYTES = 64 * 1024
#: fast-math flags on float arithmetic when contraction is allowed
CONTRACT_FLAGS = ("contract",)


class Frame:
    """The state of the function being generated: its builder, the values
    of the variables in scope, the pointers of the buffers in scope, and how
    a failed assertion leaves the function.

    The entry block holds only stack slots (so that loops never grow the
    stack) and is closed with a branch to the body by :meth:`finish`."""

    def __init__(self, fn: ir.Function, on_fail: Callable[["Frame", int], None]):
        self.fn = fn
        self.entry = fn.append_basic_block("entry")
        self.start = fn.append_basic_block("start")
        self._entry_builder = ir.IRBuilder(self.entry)
        self.builder = ir.IRBuilder(self.start)
        self.vars: dict[Var, ir.Value] = {}
        self.buffers: dict[Buffer, ir.Value] = {}
        self.on_fail = on_fail
        self.in_parallel = False
        # (dtype, slot) where T.ret writes the function's value; None: none
        self.ret = None
        # pointers known not to alias any other pointer of the frame
        self.noalias: set[int] = set()
        # heap scratch buffers live at the builder's position, innermost
        # last: an early return frees them
        self.heap: list[ir.Value] = []

    def alloca(self, typ: ir.Type, count: int, name: str, align: int) -> ir.Value:
        """A stack slot in the entry block."""
        b = self._entry_builder
        slot = b.alloca(typ, size=ir.Constant(I64, count) if count != 1 else None, name=name)
        slot.align = align
        # every pointer in generated code is opaque (loads and stores name
        # their type); llvmlite types an alloca's result, so retype it
        slot.type = PTR
        return slot

    def finish(self) -> None:
        """Close the entry block."""
        self._entry_builder.branch(self.start)


def _is_float16(dt: DataType) -> bool:
    """float16 or bfloat16: passed as their 16 bits, since C callers have
    no portable type for them."""
    return dt.is_float and dt.bits == 16


def _abi_type(dt: DataType) -> ir.Type:
    """How a scalar crosses a function boundary: bool as a byte, 16-bit
    floats as their bits, the rest as their register type."""
    if dt.is_handle:
        return PTR
    if dt.is_bool:
        return I8
    if _is_float16(dt):
        return I16
    return scalar_type(dt)


def _to_abi(b: ir.IRBuilder, value: ir.Value, dt: DataType) -> ir.Value:
    if dt.is_bool:
        return b.zext(value, I8)
    if _is_float16(dt):
        return llvm_intrinsics.float_bits(b, value, I16)
    return value


def _from_abi(b: ir.IRBuilder, value: ir.Value, dt: DataType) -> ir.Value:
    if dt.is_bool:
        return b.icmp_unsigned("!=", value, ir.Constant(I8, 0))
    if _is_float16(dt):
        return b.bitcast(value, scalar_type(dt))
    return value


def _with_lanes(t: ir.Type, dt: DataType) -> ir.Type:
    return t if dt.lanes == 1 else ir.VectorType(t, dt.lanes)


def _const(t: ir.Type, value) -> ir.Constant:
    if isinstance(t, ir.VectorType):
        return ir.Constant(t, [ir.Constant(t.element, value)] * t.count)
    return ir.Constant(t, value)


#: the calls whose two operands LLVM takes in one type
_SAME_TYPED = frozenset({"tir.bitwise_and", "tir.bitwise_or", "tir.bitwise_xor", "tir.shift_left",
                         "tir.shift_right"})

class LLVMCodegen:
    """Shared LLVM code generation.

    :meth:`stmt` and :meth:`expr` dispatch on the node type to one
    ``_stmt_<Node>`` / ``_expr_<Node>`` method each. Backends override the
    hooks :meth:`parallel_for`, :meth:`thread_for`, :meth:`allocate` and
    :meth:`symbol`; everything else is shared."""

    def __init__(self, module_name: str, triple: str, data_layout: str = "", *,
                 contract: bool = False, fast_math: bool = False):
        self.float_flags = CONTRACT_FLAGS if contract else ()
        # math functions as inline polynomials instead of C library calls
        self.fast_math = fast_math
        # the target's CPU features (LLVM's "+avx512vnni,..."), for the
        # intrinsics that need one; the builder sets them
        self.cpu_features = ""
        self.module = ir.Module(name=module_name)
        self.module.triple = triple
        if data_layout:
            self.module.data_layout = data_layout
        self.assert_messages: list[str] = []
        self.frame: Frame | None = None
        self._strings: dict[str, ir.GlobalVariable] = {}
        self._counter = 0
        # the signature of every function of the module, for calls between them
        self.signatures: dict[str, Signature] = {}

    # ------------------------------------------------------------ functions
    def symbol(self, name: str) -> str:
        """The exported symbol of function ``name`` (prefixed so it never
        shadows a C library function such as ``exp``)."""
        return f"tirfun_{name}"

    def declare(self, sig: Signature) -> ir.Function:
        """The LLVM function of ``sig`` (declared once, defined by
        :meth:`add_function`)."""
        symbol = self.symbol(sig.name)
        existing = self.module.globals.get(symbol)
        if existing is not None:
            return existing
        arg_types = []
        for p in sig.params:
            arg_types.append(PTR if p.buffer is not None else _abi_type(p.var.dtype))
        for v in sig.size_vars:
            arg_types.append(scalar_type(v.dtype))
        if sig.ret is not None:
            arg_types.append(PTR)  # the slot of the returned value
        return ir.Function(self.module, ir.FunctionType(I32, arg_types), name=symbol)

    def add_function(self, sig: Signature, func: PrimFunc) -> str:
        """Generate ``func``; returns its symbol."""
        fn = self.declare(sig)
        frame = Frame(fn, self._fail_by_return)
        frame.ret = (sig.ret, fn.args[-1]) if sig.ret is not None else None
        self.frame = frame
        b = frame.builder
        args = list(fn.args)
        for p, arg in zip(sig.params, args):
            arg.name = p.var.name
            if p.buffer is not None:
                if sig.noalias:
                    arg.add_attribute("noalias")
                    frame.noalias.add(id(arg))
                frame.vars[p.var] = arg
                frame.buffers[p.buffer] = arg
                if p.buffer.data is not None:
                    frame.vars[p.buffer.data] = arg
            elif p.var.dtype.is_bool:
                frame.vars[p.var] = b.icmp_unsigned("!=", arg, ir.Constant(I8, 0))
            elif _is_float16(p.var.dtype):
                frame.vars[p.var] = b.bitcast(arg, scalar_type(p.var.dtype))
            else:
                frame.vars[p.var] = arg
        for v, arg in zip(sig.size_vars, args[len(sig.params):]):
            arg.name = v.name
            frame.vars[v] = arg
        self.stmt(func.body)
        if not frame.builder.block.is_terminated:
            frame.builder.ret(ir.Constant(I32, 0))
        frame.finish()
        self.frame = None
        return fn.name

    def _module_call(self, e: Call) -> ir.Value:
        """A call of another function of the module: its status is checked
        (a failure leaves this function with it), its value read from the
        slot it was written to."""
        name = e.op.name_hint
        sig = self.signatures.get(name)
        if sig is None:
            raise BuildError(f"the call of {name} names no function of the module")
        if sig.size_vars:
            raise BuildError(f"the call of {name}: its buffer parameters have sizes "
                             f"({', '.join(v.name for v in sig.size_vars)}) that a pointer does "
                             "not carry; give them as scalar parameters")
        b = self.b
        args = [_to_abi(b, self.expr(a), p.var.dtype) for a, p in zip(e.args, sig.params)]
        slot = None
        if sig.ret is not None:
            slot = self.frame.alloca(_abi_type(sig.ret), 1, f"{name}_value", 8)
            args.append(slot)
        status = b.call(self.declare(sig), args)
        ok = self.frame.fn.append_basic_block(self.fresh("call_ok"))
        bad = self.frame.fn.append_basic_block(self.fresh("call_fail"))
        b.cbranch(b.icmp_signed("==", status, ir.Constant(I32, 0)), ok, bad)
        b.position_at_end(bad)
        self.free_live()
        b.ret(status)
        b.position_at_end(ok)
        if slot is None:
            return ir.Constant(I32, 0)  # a void call's value is never used
        return _from_abi(b, b.load(slot, typ=_abi_type(sig.ret)), sig.ret)

    def _ret(self, e: Call) -> ir.Value:
        """``T.ret(v)``: write the value to the caller's slot and return."""
        if self.frame.in_parallel:
            raise BuildError("T.ret inside a parallel loop is not supported by the CPU build")
        if self.frame.ret is None:
            raise BuildError("T.ret in a function without a return type: annotate it, e.g. -> T.int32")
        dt, slot = self.frame.ret
        b = self.b
        value = self.expr(e.args[0])
        b.store(_to_abi(b, value, dt), slot)
        self.free_live()
        b.ret(ir.Constant(I32, 0))
        # what follows T.ret is unreachable; it still needs a block
        b.position_at_end(self.frame.fn.append_basic_block(self.fresh("after_ret")))
        # the call's own value is never used, but code that follows (a
        # float8 result is rounded) may still see its type
        return ir.Constant(I32, 0) if e.dtype.is_void else ir.Constant(value_type(e.dtype), None)

    def _fail_by_return(self, frame: Frame, code: int) -> None:
        frame.builder.ret(ir.Constant(I32, code))

    def fail(self, code: int) -> None:
        """Leave the function with status ``code``, freeing the heap
        scratch buffers in scope first."""
        self.free_live()
        self.frame.on_fail(self.frame, code)

    def free_live(self) -> None:
        """Free every heap scratch buffer in scope (before an early return)."""
        if not self.frame.heap:
            return
        _alloc, free = workspace_functions(self.module)
        for ptr in reversed(self.frame.heap):
            self.b.call(free, [ptr])

    def fresh(self, base: str) -> str:
        """A new basic-block or global name (LLVM needs them unique)."""
        self._counter += 1
        return f"{base}_{self._counter}"

    # ------------------------------------------------------------ helpers
    @property
    def b(self) -> ir.IRBuilder:
        """The builder of the function being generated."""
        return self.frame.builder

    def buffer_ptr(self, buf: Buffer) -> ir.Value:
        """The data pointer of a buffer in scope."""
        p = self.frame.buffers.get(buf)
        if p is not None:
            return p
        if buf.data is not None and buf.data in self.frame.vars:
            return self.frame.vars[buf.data]
        raise BuildError(f"buffer {buf.name} is used where it is not declared")

    def to_index(self, v: ir.Value, dt: DataType) -> ir.Value:
        """An index value widened to 64 bits (vectors too)."""
        t = v.type
        target = I64 if not isinstance(t, ir.VectorType) else ir.VectorType(I64, t.count)
        width = (t.element if isinstance(t, ir.VectorType) else t).width
        if width == 64:
            return v
        return self.b.zext(v, target) if DataType(dt).is_uint else self.b.sext(v, target)

    def element_ptr(self, buf: Buffer, index: ir.Value) -> ir.Value:
        """The address of ``buf[index]`` (a 64-bit index)."""
        return self.b.gep(self.buffer_ptr(buf), [index], source_etype=memory_type(buf.dtype))

    # ------------------------------------------------------------ statements
    def stmt(self, s: Stmt) -> None:
        """Generate code for a lowered statement at the builder's position."""
        method = getattr(self, f"_stmt_{type(s).__name__}", None)
        if method is None:
            raise BuildError(f"the LLVM build cannot compile a {type(s).__name__}; "
                             "lower the module first (tirfun.lower)")
        method(s)

    def _stmt_SeqStmt(self, s: SeqStmt) -> None:
        for x in s.seq:
            self.stmt(x)

    def _stmt_BufferStore(self, s: BufferStore) -> None:
        if len(s.indices) != 1:
            raise BuildError(f"store into {s.buffer.name} is not flattened; lower the module first")
        value = self.expr(s.value)
        index = s.indices[0]
        buf = s.buffer
        mem = memory_type(buf.dtype)
        align = element_bytes(buf.dtype)
        if buf.dtype.is_bool:
            value = self.b.zext(value, mem if not isinstance(value.type, ir.VectorType)
                                else ir.VectorType(mem, value.type.count))
        if buf.dtype.is_mini_float:
            name = str(buf.dtype.element_of)
            value = llvm_minifloat.lanes(self.b, value, I8,
                                         lambda x: llvm_minifloat.encode(self.b, x, name))
        lanes = index.dtype.lanes
        if s.predicate is not None:
            self._masked_store(buf, index, value, self.expr(s.predicate), align)
            return
        if lanes == 1:
            ptr = self.element_ptr(buf, self.to_index(self.expr(index), index.dtype))
            self.b.store(value, ptr, align=align)
            return
        if _is_dense(index):
            ptr = self.element_ptr(buf, self.to_index(self.expr(index.base), index.base.dtype))
            self.b.store(value, ptr, align=align)
            return
        idx = self.to_index(self.expr(index), index.dtype)
        for lane in range(lanes):
            k = ir.Constant(I32, lane)
            ptr = self.element_ptr(buf, self.b.extract_element(idx, k))
            self.b.store(self.b.extract_element(value, k), ptr, align=align)

    def _masked_store(self, buf: Buffer, index, value: ir.Value, mask: ir.Value, align: int) -> None:
        """A predicated store: LLVM's masked store for a dense vector, else
        one guarded store per lane; a lane whose mask is false writes nothing."""
        b = self.b
        lanes = index.dtype.lanes
        if lanes > 1 and _is_dense(index):
            ptr = self.element_ptr(buf, self.to_index(self.expr(index.base), index.base.dtype))
            fn = llvm_intrinsics.declare(
                self.module, f"llvm.masked.store.{llvm_intrinsics.overload_suffix(value.type)}.p0", ir.VoidType(),
                [value.type, PTR, I32, mask.type])
            b.call(fn, [value, ptr, ir.Constant(I32, align), mask])
            return
        idx = self.to_index(self.expr(index), index.dtype)
        for lane in range(lanes):
            k = ir.Constant(I32, lane)
            on = mask if lanes == 1 else b.extract_element(mask, k)
            with b.if_then(on):
                at = idx if lanes == 1 else b.extract_element(idx, k)
                x = value if lanes == 1 else b.extract_element(value, k)
                b.store(x, self.element_ptr(buf, at), align=align)

    def _stmt_Evaluate(self, s: Evaluate) -> None:
        if isinstance(s.value, (IntImm, FloatImm, StringImm, Var)):
            return
        self.expr(s.value)

    def _stmt_LetStmt(self, s: LetStmt) -> None:
        self.frame.vars[s.var] = self.expr(s.value)
        self.stmt(s.body)

    def _stmt_AttrStmt(self, s: AttrStmt) -> None:
        self.stmt(s.body)

    def _stmt_DeclBuffer(self, s: DeclBuffer) -> None:
        buf = s.buffer
        if buf not in self.frame.buffers:
            if buf.data is None or buf.data not in self.frame.vars:
                raise BuildError(f"buffer {buf.name} is declared over an unknown allocation")
            self.frame.buffers[buf] = self.frame.vars[buf.data]
        self.stmt(s.body)

    def _stmt_IfThenElse(self, s: IfThenElse) -> None:
        cond = self.expr(s.condition)
        b = self.b
        fn = self.frame.fn
        then_bb = fn.append_basic_block(self.fresh("if_then"))
        end_bb = fn.append_basic_block(self.fresh("if_end"))
        else_bb = fn.append_basic_block(self.fresh("if_else")) if s.else_case is not None else end_bb
        b.cbranch(cond, then_bb, else_bb)
        b.position_at_end(then_bb)
        self.stmt(s.then_case)
        if not self.b.block.is_terminated:
            self.b.branch(end_bb)
        if s.else_case is not None:
            self.b.position_at_end(else_bb)
            self.stmt(s.else_case)
            if not self.b.block.is_terminated:
                self.b.branch(end_bb)
        self.b.position_at_end(end_bb)

    def _stmt_While(self, s) -> None:
        fn = self.frame.fn
        head = fn.append_basic_block(self.fresh("while_head"))
        body = fn.append_basic_block(self.fresh("while_body"))
        end = fn.append_basic_block(self.fresh("while_end"))
        self.b.branch(head)
        self.b.position_at_end(head)
        self.b.cbranch(self.expr(s.condition), body, end)
        self.b.position_at_end(body)
        self.stmt(s.body)
        if not self.b.block.is_terminated:
            self.b.branch(head)
        self.b.position_at_end(end)

    def _stmt_AssertStmt(self, s: AssertStmt) -> None:
        cond = self.expr(s.condition)
        self.assert_messages.append(s.message.value)
        code = len(self.assert_messages)
        fn = self.frame.fn
        ok = fn.append_basic_block(self.fresh("assert_ok"))
        bad = fn.append_basic_block(self.fresh("assert_fail"))
        self.b.cbranch(cond, ok, bad)
        self.b.position_at_end(bad)
        self.fail(code)
        self.b.position_at_end(ok)
        self.stmt(s.body)

    def _stmt_Allocate(self, s: Allocate) -> None:
        self.allocate(s)

    def _stmt_AllocateConst(self, s) -> None:
        """Constant data: a private global array of the values' bits."""
        import numpy as np

        bits = element_bytes(s.dtype) * 8
        raw = np.frombuffer(s.data, dtype=np.dtype(f"uint{bits}").newbyteorder("<")).tolist()
        ty = ir.ArrayType(ir.IntType(bits), max(len(raw), 1))
        g = ir.GlobalVariable(self.module, ty, name=self.fresh(f"const_{s.buffer_var.name}"))
        g.global_constant = True
        g.linkage = "private"
        g.align = 64
        g.initializer = ir.Constant(ty, raw or [0])
        self.frame.vars[s.buffer_var] = g
        self.stmt(s.body)

    def _stmt_For(self, s: For) -> None:
        if s.kind is ForKind.PARALLEL:
            self.parallel_for(s)
        elif s.kind is ForKind.THREAD_BINDING:
            self.thread_for(s)
        else:
            self.serial_for(s)

    def _stmt_Block(self, s: Block) -> None:
        raise BuildError(f"block {s.name_hint} is not lowered; call tirfun.lower first")

    def _stmt_BlockRealize(self, s: BlockRealize) -> None:
        raise BuildError(f"block {s.block.name_hint} is not lowered; call tirfun.lower first")

    # loops -----------------------------------------------------------------
    def serial_for(self, s: For) -> None:
        """A loop run in order on the current thread."""
        begin = self.expr(s.min)
        end = self.b.add(begin, self.expr(s.extent), flags=("nsw",))
        self.loop(s.loop_var, begin, end, lambda: self.stmt(s.body))

    def loop(self, var: Var, begin: ir.Value, end: ir.Value, body: Callable[[], None]) -> None:
        """``for var in [begin, end): body()``."""
        b = self.b
        fn = self.frame.fn
        pre = b.block
        header = fn.append_basic_block(self.fresh(f"for_{var.name}"))
        body_bb = fn.append_basic_block(self.fresh(f"for_{var.name}_body"))
        exit_bb = fn.append_basic_block(self.fresh(f"for_{var.name}_end"))
        b.branch(header)
        b.position_at_end(header)
        phi = b.phi(begin.type, name=var.name)
        phi.add_incoming(begin, pre)
        less = b.icmp_unsigned("<", phi, end) if var.dtype.is_uint else b.icmp_signed("<", phi, end)
        b.cbranch(less, body_bb, exit_bb)
        b.position_at_end(body_bb)
        self.frame.vars[var] = phi
        body()
        b = self.b
        if not b.block.is_terminated:
            nxt = b.add(phi, ir.Constant(phi.type, 1), flags=("nsw",))
            phi.add_incoming(nxt, b.block)
            b.branch(header)
        b.position_at_end(exit_bb)

    def parallel_for(self, s: For) -> None:
        """A parallel loop; the base class runs it serially."""
        self.serial_for(s)

    def thread_for(self, s: For) -> None:
        """A thread-bound loop; on a host backend it runs serially."""
        self.serial_for(s)

    # scratch memory ---------------------------------------------------------
    def allocate(self, s: Allocate) -> None:
        """Scratch memory for ``s.body``: a stack slot when small and of
        constant size, else a block of the heap, from the module's cache of
        freed ones (:mod:`.llvm_workspace`; a failed malloc returns the
        out-of-memory status; every early return frees what is in scope)."""
        mem = memory_type(s.dtype)
        elem = element_bytes(s.dtype)
        count = 1
        constant = True
        for e in s.extents:
            if isinstance(e, IntImm):
                count *= e.value
            else:
                constant = False
        if constant and count * elem <= STACK_LIMIT_BYTES:
            slot = self.frame.alloca(mem, max(count, 1), s.buffer_var.name, 64)
            self.frame.vars[s.buffer_var] = slot
            self.frame.noalias.add(id(slot))
            self.stmt(s.body)
            return
        b = self.b
        total = ir.Constant(I64, elem)
        for e in s.extents:
            total = b.mul(total, self.to_index(self.expr(e), e.dtype))
        # from the module's cache of freed blocks (tirfun.lower.llvm_workspace)
        malloc, free = workspace_functions(self.module)
        ptr = b.call(malloc, [b.select(b.icmp_signed(">", total, ir.Constant(I64, 0)),
                                       total, ir.Constant(I64, 1))])
        fn = self.frame.fn
        ok = fn.append_basic_block(self.fresh("alloc_ok"))
        bad = fn.append_basic_block(self.fresh("alloc_fail"))
        b.cbranch(b.icmp_unsigned("!=", ptr, ir.Constant(PTR, None)), ok, bad)
        b.position_at_end(bad)
        self.fail(STATUS_OUT_OF_MEMORY)
        b.position_at_end(ok)
        self.frame.vars[s.buffer_var] = ptr
        self.frame.noalias.add(id(ptr))
        self.frame.heap.append(ptr)
        self.stmt(s.body)
        self.frame.heap.pop()
        if not self.b.block.is_terminated:
            self.b.call(free, [ptr])

    # ------------------------------------------------------------ expressions
    def expr(self, e: PrimExpr) -> ir.Value:
        """The LLVM value of an expression (vectors for lanes > 1)."""
        method = getattr(self, f"_expr_{type(e).__name__}", None)
        if method is None:
            raise BuildError(f"the LLVM build cannot compile the expression {type(e).__name__}")
        if e.dtype.is_mini_float and isinstance(e, _MINI_ROUNDED):
            # computed in double: each result rounds to its format, as in the interpreter
            return llvm_minifloat.round_to(self.b, method(e), str(e.dtype.element_of))
        return method(e)

    def _expr_Var(self, e: Var) -> ir.Value:
        try:
            return self.frame.vars[e]
        except KeyError:
            raise BuildError(f"variable {e.name} is used where it is not defined") from None

    def _expr_IntImm(self, e: IntImm) -> ir.Value:
        return ir.Constant(scalar_type(e.dtype), e.value)

    def _expr_FloatImm(self, e: FloatImm) -> ir.Value:
        if e.dtype.is_mini_float:
            # the constant is the format's value nearest to the literal
            from ..numpy_dtypes import round_mini_float

            return ir.Constant(scalar_type(e.dtype), round_mini_float(e.value, str(e.dtype)))
        return ir.Constant(scalar_type(e.dtype), e.value)

    def _expr_StringImm(self, e: StringImm) -> ir.Value:
        g = self._strings.get(e.value)
        if g is None:
            data = bytearray(e.value.encode("utf-8")) + b"\0"
            t = ir.ArrayType(I8, len(data))
            g = ir.GlobalVariable(self.module, t, name=self.fresh(".str"))
            g.global_constant = True
            g.linkage = "private"
            g.initializer = ir.Constant(t, data)
            self._strings[e.value] = g
        return self.b.bitcast(g, PTR)

    def _arith_operands(self, e):
        return self.expr(e.a), self.expr(e.b), e.a.dtype

    def _expr_Add(self, e: Add) -> ir.Value:
        a, b, dt = self._arith_operands(e)
        return self.b.fadd(a, b, flags=self.float_flags) if dt.is_float else self.b.add(a, b)

    def _expr_Sub(self, e: Sub) -> ir.Value:
        a, b, dt = self._arith_operands(e)
        return self.b.fsub(a, b, flags=self.float_flags) if dt.is_float else self.b.sub(a, b)

    def _expr_Mul(self, e: Mul) -> ir.Value:
        a, b, dt = self._arith_operands(e)
        return self.b.fmul(a, b, flags=self.float_flags) if dt.is_float else self.b.mul(a, b)

    def _is_safe_divisor(self, e: PrimExpr) -> bool:
        """A constant divisor that is neither 0 nor -1 cannot trap."""
        if isinstance(e, Broadcast):
            e = e.value
        return isinstance(e, IntImm) and e.value not in (0, -1)

    def _int_divmod(self, e, want: str) -> ir.Value:
        """Truncating (``div``/``rem``) or flooring (``floordiv``/``floormod``)
        integer division, guarded against the divisors that trap."""
        b = self.b
        a, d, dt = self._arith_operands(e)
        t = a.type
        zero, one = _const(t, 0), _const(t, 1)
        guarded = not self._is_safe_divisor(e.b)
        if dt.is_uint or dt.is_bool:
            if guarded:
                is_zero = b.icmp_unsigned("==", d, zero)
                d = b.select(is_zero, one, d)
            q = b.udiv(a, d) if want in ("div", "floordiv") else b.urem(a, d)
            return b.select(is_zero, zero, q) if guarded else q
        if guarded:
            bad = b.or_(b.icmp_signed("==", d, zero), b.icmp_signed("==", d, _const(t, -1)))
            safe = b.select(bad, one, d)
        else:
            safe = d
        q = b.sdiv(a, safe)
        r = b.srem(a, safe)
        if want == "div":
            out = q
        elif want == "rem":
            out = r
        else:
            # flooring: step down when the remainder and divisor differ in sign
            adjust = b.and_(b.icmp_signed("!=", r, zero),
                            b.icmp_signed("!=", b.icmp_signed("<", r, zero), b.icmp_signed("<", safe, zero)))
            out = b.sub(q, b.zext(adjust, t)) if want == "floordiv" else b.add(r, b.select(adjust, safe, zero))
        if guarded:
            # x / -1 is -x (wrapping), x % -1 is 0; x / 0 and x % 0 give 0
            is_m1 = b.icmp_signed("==", d, _const(t, -1))
            by_m1 = b.sub(zero, a) if want in ("div", "floordiv") else zero
            out = b.select(is_m1, by_m1, out)
            out = b.select(b.icmp_signed("==", d, zero), zero, out)
        return out

    def _expr_Div(self, e: Div) -> ir.Value:
        if e.dtype.is_float:
            a, b, _ = self._arith_operands(e)
            return self.b.fdiv(a, b, flags=self.float_flags)
        return self._int_divmod(e, "div")

    def _expr_Mod(self, e: Mod) -> ir.Value:
        if e.dtype.is_float:
            a, b, _ = self._arith_operands(e)
            return self.b.frem(a, b)
        return self._int_divmod(e, "rem")

    def _expr_FloorDiv(self, e: FloorDiv) -> ir.Value:
        if e.dtype.is_float:
            a, b, _ = self._arith_operands(e)
            return llvm_intrinsics.emit(self.b, "floor", [self.b.fdiv(a, b)], a.type)
        return self._int_divmod(e, "floordiv")

    def _expr_FloorMod(self, e: FloorMod) -> ir.Value:
        if e.dtype.is_float:
            a, b, _ = self._arith_operands(e)
            q = llvm_intrinsics.emit(self.b, "floor", [self.b.fdiv(a, b)], a.type)
            return self.b.fsub(a, self.b.fmul(q, b))
        return self._int_divmod(e, "floormod")

    def _minmax(self, e, op: str) -> ir.Value:
        a, b, dt = self._arith_operands(e)
        if dt.is_float:
            ca, cb = a, b
            if isinstance(e.a, (Min, Max)) or isinstance(e.b, (Min, Max)):
                # LLVM 22's InstCombine folds a min/max of a min/max that
                # shares an operand as if signed zeros were equal:
                # max(max(0.0, x), 0.0) is +0.0 for x = -0.0, and LLVM makes
                # it max(0.0, x), which is -0.0. Comparing through a fence
                # keeps it from matching the pattern (found by the soak)
                ca, cb = llvm_intrinsics.fence(self.b, a), llvm_intrinsics.fence(self.b, b)
            c = self.b.fcmp_ordered(op, ca, cb)
        elif dt.is_uint or dt.is_bool:
            c = self.b.icmp_unsigned(op, a, b)
        else:
            c = self.b.icmp_signed(op, a, b)
        return self.b.select(c, a, b)

    def _expr_Min(self, e: Min) -> ir.Value:
        return self._minmax(e, "<")

    def _expr_Max(self, e: Max) -> ir.Value:
        return self._minmax(e, ">")

    _CMP = {EQ: "==", NE: "!=", LT: "<", LE: "<=", GT: ">", GE: ">="}

    def _compare(self, e) -> ir.Value:
        a, b, dt = self._arith_operands(e)
        op = self._CMP[type(e)]
        if dt.is_float:
            # != is true for NaN operands, the rest are false, as in numpy
            if op == "!=":
                return self.b.fcmp_unordered(op, a, b)
            return self.b.fcmp_ordered(op, a, b)
        if dt.is_uint or dt.is_bool:
            return self.b.icmp_unsigned(op, a, b)
        return self.b.icmp_signed(op, a, b)

    _expr_EQ = _expr_NE = _expr_LT = _expr_LE = _expr_GT = _expr_GE = _compare

    def _expr_And(self, e: And) -> ir.Value:
        return self.b.and_(self.expr(e.a), self.expr(e.b))

    def _expr_Or(self, e: Or) -> ir.Value:
        return self.b.or_(self.expr(e.a), self.expr(e.b))

    def _expr_Not(self, e: Not) -> ir.Value:
        a = self.expr(e.a)
        return self.b.xor(a, _const(a.type, 1))

    def _expr_Select(self, e: Select) -> ir.Value:
        c, t, f = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
        return self.b.select(c, t, f)

    def _expr_Cast(self, e: Cast) -> ir.Value:
        v = self.expr(e.value)
        src, dst = e.value.dtype, e.dtype
        t = value_type(dst)
        b = self.b
        if src == dst:
            return v
        if src.is_mini_float or dst.is_mini_float:
            return self._mini_cast(v, src, dst)
        if dst.is_bool:
            if src.is_float:
                return b.fcmp_unordered("!=", v, _const(v.type, 0.0))
            return b.icmp_unsigned("!=", v, _const(v.type, 0))
        if dst.is_float:
            if src.is_float:
                if dst.bits == src.bits:  # float16 <-> bfloat16: exact through float
                    v = b.fpext(v, _with_lanes(ir.FloatType(), dst))
                    return b.fptrunc(v, t)
                return b.fpext(v, t) if dst.bits > src.bits else b.fptrunc(v, t)
            if dst.bits == 16:
                # through double, rounding once (as the interpreter and
                # ml_dtypes do), with the rounding spelt out: LLVM folds
                # fptrunc(sitofp i32 to double) into a sitofp that its
                # backend rounds to float first
                wide = _with_lanes(ir.DoubleType(), dst)
                v = b.sitofp(v, wide) if src.is_int else b.uitofp(v, wide)
                return self._narrow16(v, dst)
            if src.is_int:
                return b.sitofp(v, t)
            return b.uitofp(v, t)
        # integer destination
        if src.is_float:
            return self._float_to_int(v, t, dst)
        sb, db = (1 if src.is_bool else src.bits), dst.bits
        if db < sb:
            return b.trunc(v, t)
        if db > sb:
            return b.sext(v, t) if src.is_int else b.zext(v, t)
        return v

    def _mini_cast(self, v: ir.Value, src: DataType, dst: DataType) -> ir.Value:
        """A cast to or from float8/float4, whose values are doubles: to one
        through double (rounded by :meth:`expr`), from one as from float64."""
        b = self.b
        wide = _with_lanes(ir.DoubleType(), dst)
        if dst.is_mini_float:
            if src.is_mini_float:
                return v
            if src.is_bool:
                return b.uitofp(v, wide)
            if src.is_float:
                return v if src.bits == 64 else b.fpext(v, wide)
            return b.sitofp(v, wide) if src.is_int else b.uitofp(v, wide)
        if dst.is_bool:
            return b.fcmp_unordered("!=", v, _const(v.type, 0.0))
        t = value_type(dst)
        if dst.is_float:
            if dst.bits == 64:
                return v
            if dst.bits == 16:
                return self._narrow16(v, dst)
            return b.fptrunc(v, t)  # exact: every value fits in float
        return self._float_to_int(v, t, dst)

    def _float_to_int(self, v: ir.Value, t: ir.Type, dst: DataType) -> ir.Value:
        """A float converted to an integer as the interpreter defines it
        (:func:`tirfun.interp.semantics.float_to_int`): truncated toward
        zero, then wrapped to the destination's bits; NaN and infinities
        give 0. LLVM's ``fptosi`` of a value out of range is poison (x86
        gives the minimum integer), so the value is taken through int64:
        ``fptosi`` where ``|x| < 2**63``, and above that from the bits of the
        double, whose mantissa shifted left by its exponent is the integer
        modulo 2**64."""
        b = self.b
        lanes = t.count if isinstance(t, ir.VectorType) else None

        def typ(base):
            return base if lanes is None else ir.VectorType(base, lanes)

        f64, i64 = typ(ir.DoubleType()), typ(ir.IntType(64))
        x = v if v.type == f64 else b.fpext(v, f64)
        a = llvm_intrinsics.emit(b, "fabs", [x], f64)
        small = b.fptosi(x, i64)  # poison where |x| >= 2**63: selected away
        bits = b.bitcast(a, i64)
        exponent = b.sub(b.lshr(bits, _const(i64, 52)), _const(i64, 1075))
        mantissa = b.or_(b.and_(bits, _const(i64, (1 << 52) - 1)), _const(i64, 1 << 52))
        # |x| >= 2**63 has an exponent of at least 11 here; from 64 on, every
        # bit of the product lies above bit 63
        big = b.select(b.icmp_signed("<", exponent, _const(i64, 64)), b.shl(mantissa, exponent),
                       _const(i64, 0))
        big = b.select(b.fcmp_ordered("<", x, _const(f64, 0.0)), b.sub(_const(i64, 0), big), big)
        finite = b.fcmp_ordered("<", a, _const(f64, math.inf))  # false for NaN and infinities
        wide = b.select(b.fcmp_ordered("<", a, _const(f64, 2.0 ** 63)), small,
                        b.select(finite, big, _const(i64, 0)))
        return wide if dst.bits == 64 else b.trunc(wide, t)

    def _narrow16(self, v: ir.Value, dst: DataType) -> ir.Value:
        """The double ``v`` rounded to float16/bfloat16, lane by lane."""
        fmt = llvm_libcalls.BFLOAT_FORMAT if dst.code == "bfloat" else llvm_libcalls.HALF_FORMAT
        b = self.b
        one = scalar_type(dst)
        if dst.lanes == 1:
            return b.bitcast(llvm_libcalls.narrow_bits(b, v, fmt), one)
        out = ir.Constant(value_type(dst), ir.Undefined)
        for lane in range(dst.lanes):
            k = ir.Constant(I32, lane)
            x = b.bitcast(llvm_libcalls.narrow_bits(b, b.extract_element(v, k), fmt), one)
            out = b.insert_element(out, x, k)
        return out

    def _expr_Ramp(self, e: Ramp) -> ir.Value:
        base = self.expr(e.base)
        stride = self.expr(e.stride)
        t = ir.VectorType(base.type, e.lanes)
        steps = ir.Constant(t, [ir.Constant(base.type, k) for k in range(e.lanes)])
        return self.b.add(self._splat(base, e.lanes), self.b.mul(steps, self._splat(stride, e.lanes)))

    def _splat(self, v: ir.Value, lanes: int) -> ir.Value:
        if isinstance(v, ir.Constant):
            return ir.Constant(ir.VectorType(v.type, lanes), [v] * lanes)
        t = ir.VectorType(v.type, lanes)
        one = self.b.insert_element(ir.Constant(t, ir.Undefined), v, ir.Constant(I32, 0))
        return self.b.shuffle_vector(one, ir.Constant(t, ir.Undefined),
                                     ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))

    def _expr_Shuffle(self, e) -> ir.Value:
        """Lanes picked from the vectors laid end to end."""
        b = self.b
        lanes = []  # (value, lane or None for a scalar), in concatenation order
        for v in e.vectors:
            x = self.expr(v)
            lanes += [(x, k) for k in range(v.dtype.lanes)] if v.dtype.lanes > 1 else [(x, None)]

        def pick(i):
            x, k = lanes[i.value]
            return x if k is None else b.extract_element(x, ir.Constant(I32, k))
        if len(e.indices) == 1:
            return pick(e.indices[0])
        out = ir.Constant(value_type(e.dtype), ir.Undefined)
        for n, i in enumerate(e.indices):
            out = b.insert_element(out, pick(i), ir.Constant(I32, n))
        return out

    def _expr_Broadcast(self, e: Broadcast) -> ir.Value:
        return self._splat(self.expr(e.value), e.lanes)

    def _expr_BufferLoad(self, e: BufferLoad) -> ir.Value:
        if len(e.indices) != 1:
            raise BuildError(f"load from {e.buffer.name} is not flattened; lower the module first")
        buf = e.buffer
        index = e.indices[0]
        mem = memory_type(buf.dtype)
        align = element_bytes(buf.dtype)
        lanes = index.dtype.lanes
        b = self.b
        if e.predicate is not None:
            v = self._masked_load(buf, index, self.expr(e.predicate), mem, align)
        elif lanes == 1:
            v = b.load(self.element_ptr(buf, self.to_index(self.expr(index), index.dtype)), typ=mem, align=align)
        elif _is_dense(index):
            ptr = self.element_ptr(buf, self.to_index(self.expr(index.base), index.base.dtype))
            v = b.load(ptr, typ=ir.VectorType(mem, lanes), align=align)
        else:
            idx = self.to_index(self.expr(index), index.dtype)
            v = ir.Constant(ir.VectorType(mem, lanes), ir.Undefined)
            for lane in range(lanes):
                k = ir.Constant(I32, lane)
                x = b.load(self.element_ptr(buf, b.extract_element(idx, k)), typ=mem, align=align)
                v = b.insert_element(v, x, k)
        if buf.dtype.is_bool:
            v = b.icmp_unsigned("!=", v, _const(v.type, 0))
        if buf.dtype.is_mini_float:
            name = str(buf.dtype.element_of)
            v = llvm_minifloat.lanes(b, v, ir.DoubleType(),
                                     lambda x: llvm_minifloat.decode(b, x, name))
        return v

    def _masked_load(self, buf: Buffer, index, mask: ir.Value, mem: ir.Type, align: int) -> ir.Value:
        """A predicated load, as stored in memory: LLVM's masked load for a
        dense vector, else one guarded load per lane; a lane whose mask is
        false reads nothing and is zero (as the interpreter has it)."""
        b = self.b
        lanes = index.dtype.lanes
        typ = mem if lanes == 1 else ir.VectorType(mem, lanes)
        zero = ir.Constant(typ, None)
        if lanes > 1 and _is_dense(index):
            ptr = self.element_ptr(buf, self.to_index(self.expr(index.base), index.base.dtype))
            fn = llvm_intrinsics.declare(
                self.module, f"llvm.masked.load.{llvm_intrinsics.overload_suffix(typ)}.p0", typ,
                [PTR, I32, mask.type, typ])
            return b.call(fn, [ptr, ir.Constant(I32, align), mask, zero])
        idx = self.to_index(self.expr(index), index.dtype)
        v = zero
        for lane in range(lanes):
            k = ir.Constant(I32, lane)
            on = mask if lanes == 1 else b.extract_element(mask, k)
            before = b.block
            with b.if_then(on):
                at = idx if lanes == 1 else b.extract_element(idx, k)
                x = b.load(self.element_ptr(buf, at), typ=mem, align=align)
                loaded = x if lanes == 1 else b.insert_element(v, x, k)
                then_end = b.block
            phi = b.phi(typ)
            phi.add_incoming(loaded, then_end)
            phi.add_incoming(v, before)
            v = phi
        return v

    def _expr_Let(self, e: Let) -> ir.Value:
        self.frame.vars[e.var] = self.expr(e.value)
        return self.expr(e.body)

    def _expr_Call(self, e: Call) -> ir.Value:
        op = e.op
        b = self.b
        if isinstance(op, GlobalVar):
            return self._module_call(e)
        if op == "tir.ret":
            return self._ret(e)
        if op == "tir.if_then_else":
            return self._if_then_else(e)
        if op in _SAME_TYPED and len(e.args) == 2 and (
                (e.args[0].dtype.bits, e.args[0].dtype.lanes) != (e.args[1].dtype.bits, e.args[1].dtype.lanes)):
            # TVM's codegen aborts on these; its T helpers cast first
            raise BuildError(f"T.{op[4:]} of {e.args[0].dtype} and {e.args[1].dtype}: both operands "
                             f"must have one dtype (cast one of them): {e}")
        if op in ("tir.bitwise_and", "tir.bitwise_or", "tir.bitwise_xor"):
            x, y = (self.expr(a) for a in e.args)
            return {"tir.bitwise_and": b.and_, "tir.bitwise_or": b.or_,
                    "tir.bitwise_xor": b.xor}[op](x, y)
        if op == "tir.bitwise_not":
            x = self.expr(e.args[0])
            return b.xor(x, _const(x.type, -1))
        if op in ("tir.shift_left", "tir.shift_right"):
            x, y = (self.expr(a) for a in e.args)
            if op == "tir.shift_left":
                return b.shl(x, y)
            return b.ashr(x, y) if e.args[0].dtype.is_int else b.lshr(x, y)
        if op in ("tir.call_extern", "tir.call_pure_extern"):
            return self._call_extern(e)
        if op == "tir.tvm_access_ptr" and len(e.args) == 5:
            base = self.expr(e.args[1])
            offset = self.to_index(self.expr(e.args[2]), e.args[2].dtype)
            lanes = e.args[0].dtype.lanes
            if lanes > 1:
                # the offset counts vectors of the annotated type (content_lanes)
                offset = b.mul(offset, ir.Constant(offset.type, lanes))
            return b.gep(base, [offset], source_etype=memory_type(e.args[0].dtype))
        if op == "tir.isnullptr" and len(e.args) == 1:
            ptr = self.expr(e.args[0])
            return b.icmp_unsigned("==", ptr, ir.Constant(ptr.type, None))
        if op == "tir.address_of":
            load = e.args[0]
            if not isinstance(load, BufferLoad) or len(load.indices) != 1:
                raise BuildError("address_of needs a flattened buffer element")
            return self.element_ptr(load.buffer, self.to_index(self.expr(load.indices[0]),
                                                               load.indices[0].dtype))
        if op.startswith("tir.") and op[4:] in llvm_intrinsics.SUPPORTED:
            args = [self.expr(a) for a in e.args]
            return llvm_intrinsics.emit(b, op[4:], args, value_type(e.dtype),
                                        fast=self.fast_math)
        if op in _PASS_THROUGH:
            return self.expr(e.args[0])
        if op in _NO_VALUE:
            # hints and markers: nothing to compute; the statement discards the value
            return ir.Constant(I32, 0) if e.dtype.is_void else _const(value_type(e.dtype), 0)
        if op in ("tir.call_llvm_intrin", "tir.call_llvm_pure_intrin"):
            return self._call_llvm_intrin(e)
        if op in ("tir.vectorlow", "tir.vectorhigh", "tir.vectorcombine"):
            return self._vector_part(e)
        if op == "tir.dp4a":
            return self._dp4a(e)
        if op == "tir.reinterpret" and len(e.args) == 1:
            # the same bits read as another type of the same size (the parser
            # checks the sizes agree)
            return b.bitcast(self.expr(e.args[0]), value_type(e.dtype))
        if op in LEGALIZED:
            return self.expr(legalize(e))
        refused = refusal(op, "the CPU build (llvm)")
        if refused is not None:
            raise BuildError(refused)
        raise BuildError(f"the LLVM build does not support the call {op}")

    def _call_llvm_intrin(self, e: Call) -> ir.Value:
        """``T.call_llvm_intrin(dtype, "llvm.name", *args)``: the named LLVM
        intrinsic, overloaded on the result type (one of
        :data:`~tirfun.lower.llvm_intrinsics.CALLABLE`)."""
        name_e = e.args[0]
        if not isinstance(name_e, StringImm) or not name_e.value.startswith("llvm."):
            raise BuildError("call_llvm_intrin needs the intrinsic's name, such as \"llvm.fabs\", "
                             "as its first argument")
        callee, call_args = intrinsic_args(e)
        if callee in X86:
            return self._call_x86(callee, call_args, e.dtype)
        if len(call_args) != len(e.args) - 1:  # TVM's count of signature arguments, dropped
            e = Call(e.dtype, e.op, [name_e, *call_args])
        arity = llvm_intrinsics.CALLABLE.get(name_e.value)
        if arity is None or arity != len(e.args) - 1 or e.dtype.is_void:
            known = ", ".join(f"{n} ({k} args)" for n, k in sorted(llvm_intrinsics.CALLABLE.items()))
            raise BuildError(f"the CPU build cannot call the LLVM intrinsic {name_e.value} with "
                             f"{len(e.args) - 1} arguments; it calls these: {known}")
        expected = [e.dtype] * arity
        if name_e.value in ("llvm.ctlz", "llvm.cttz", "llvm.abs"):
            expected[1] = DataType("bool")  # the flag saying zero (or INT_MIN) is poison
        got = [a.dtype for a in e.args[1:]]
        if got != expected:
            raise BuildError(f"{name_e.value} returning {e.dtype} takes arguments of "
                             f"{', '.join(map(str, expected))}, got {', '.join(map(str, got))}")
        args = [self.expr(a) for a in e.args[1:]]
        ret = value_type(e.dtype)
        fname = llvm_intrinsics.overloaded_name(name_e.value, ret)
        existing = self.module.globals.get(fname)
        if existing is not None and [a.type for a in args] != list(existing.function_type.args):
            raise BuildError(f"{name_e.value} is called with different argument types")
        fn = llvm_intrinsics.declare(self.module, fname, ret, [a.type for a in args])
        return self.b.call(fn, args)

    def _call_x86(self, callee: str, args: list, dtype) -> ir.Value:
        """An x86 intrinsic of :data:`~tirfun.tir.llvm_x86.X86`, declared
        with its own types; refused where the target lacks its feature
        (LLVM would abort selecting it)."""
        ret, _types, feature = X86[callee]
        problem = signature_problem(callee, args, dtype)
        if problem is not None:
            raise BuildError(problem)
        if f"+{feature}" not in self.cpu_features.split(","):
            raise BuildError(f"{callee} needs the CPU feature {feature}, which the target does not have")
        values = [self.expr(a) for a in args]
        fn = llvm_intrinsics.declare(self.module, callee, value_type(DataType(ret)), [v.type for v in values])
        return self.b.call(fn, values)

    def _dp4a(self, e: Call) -> ir.Value:
        """``acc + sum(vec1[k] * vec2[k])`` over four 8-bit lanes, widened to 32 bits."""
        b = self.b
        vec1, vec2, acc = (self.expr(a) for a in e.args)
        out = acc
        for k in range(4):
            idx = ir.Constant(I32, k)
            x, y = b.extract_element(vec1, idx), b.extract_element(vec2, idx)
            x = b.sext(x, I32) if e.args[0].dtype.is_int else b.zext(x, I32)
            y = b.sext(y, I32) if e.args[1].dtype.is_int else b.zext(y, I32)
            out = b.add(out, b.mul(x, y))
        return out

    def _vector_part(self, e: Call) -> ir.Value:
        """``vectorlow``/``vectorhigh`` take half of a vector's lanes,
        ``vectorcombine`` joins two vectors."""
        first = self.expr(e.args[0])
        n = e.args[0].dtype.lanes
        if e.op == "tir.vectorcombine":
            second = self.expr(e.args[1])
            mask = list(range(n + e.args[1].dtype.lanes))
        else:
            second = ir.Constant(first.type, ir.Undefined)
            start = 0 if e.op == "tir.vectorlow" else n // 2
            mask = list(range(start, start + e.dtype.lanes))
        return self.b.shuffle_vector(first, second, ir.Constant(ir.VectorType(I32, len(mask)), mask))

    def _if_then_else(self, e: Call) -> ir.Value:
        cond_e, t_e, f_e = e.args
        if cond_e.dtype.lanes != 1:
            return self.b.select(self.expr(cond_e), self.expr(t_e), self.expr(f_e))
        cond = self.expr(cond_e)
        fn = self.frame.fn
        then_bb = fn.append_basic_block(self.fresh("ite_then"))
        else_bb = fn.append_basic_block(self.fresh("ite_else"))
        end_bb = fn.append_basic_block(self.fresh("ite_end"))
        self.b.cbranch(cond, then_bb, else_bb)
        self.b.position_at_end(then_bb)
        tv = self.expr(t_e)
        then_end = self.b.block
        self.b.branch(end_bb)
        self.b.position_at_end(else_bb)
        fv = self.expr(f_e)
        else_end = self.b.block
        self.b.branch(end_bb)
        self.b.position_at_end(end_bb)
        phi = self.b.phi(tv.type)
        phi.add_incoming(tv, then_end)
        phi.add_incoming(fv, else_end)
        return phi

    def _call_extern(self, e: Call) -> ir.Value:
        name_e = e.args[0]
        if not isinstance(name_e, StringImm):
            raise BuildError("call_extern needs the callee's name as its first argument")
        args = [self.expr(a) for a in e.args[1:]]
        ret = ir.VoidType() if e.dtype.is_void else value_type(e.dtype)
        existing = self.module.globals.get(name_e.value)
        if existing is not None and [a.type for a in args] != list(existing.function_type.args):
            raise BuildError(f"call_extern {name_e.value} is called with different argument types")
        fn = llvm_intrinsics.declare(self.module, name_e.value, ret, [a.type for a in args])
        out = self.b.call(fn, args)
        return ir.Constant(I32, 0) if e.dtype.is_void else out


# hints whose value is their argument
_PASS_THROUGH = frozenset({"tir.likely", "tir.tvm_thread_invariant", "tir.ignore_loop_partition"})
# calls with no value to compute on the CPU: TVM removes assumptions before
# code generation, profiling markers do nothing here, and an undefined value
# is zero, as the interpreter has it
_NO_VALUE = frozenset({"tir.assume", "tir.start_profile_intrinsic", "tir.end_profile_intrinsic",
                       "tir.undef"})


__all__ = ["LLVMCodegen", "Frame", "STACK_LIMIT_BYTES", "CONTRACT_FLAGS"]


def _is_dense(index) -> bool:
    """A vector index of consecutive elements (a Ramp of stride 1)."""
    return isinstance(index, Ramp) and isinstance(index.stride, IntImm) and index.stride.value == 1
