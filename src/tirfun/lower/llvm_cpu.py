"""The host backend: parallel loops on libgomp's thread pool.

A parallel loop becomes two internal functions: ``body(captured...,
begin, end)``, the loop over one range of iterations, whose pointer
parameters keep ``noalias`` where the exported function's had it; and
``wrapper(ptr closure)``, which reads the captured values (variables,
buffer pointers, the loop bounds, a slot for a failed assertion's status
and a chunk counter) from a record on the caller's stack.
``GOMP_parallel(wrapper, closure, threads, 0)`` runs the wrapper on every
thread of the pool; each takes contiguous chunks of iterations from the
shared atomic counter (a few chunks per thread, so a thread slowed by a
busy core does less of the work) and calls ``body`` on them. Parallel loops
nested in a parallel loop run serially inside it.

When libgomp is not available every loop runs serially (the build still
succeeds and computes the same results).

A function with many loops has each of its outermost serial loops
generated as an internal function of its own, ``nest(captured..., begin,
end)``, called once and never inlined: LLVM's loop passes (induction
variable simplification, loop rotation, strength reduction) take time that
grows with the square of the number of loops in one function, so a
function of thousands of small loop nests would otherwise build for
minutes.
"""

from __future__ import annotations

from llvmlite import ir

from ..analysis.traversal import walk
from ..nodes import Buffer, BufferLoad, BufferStore, DeclBuffer, For, IntImm, Var
from . import llvm_intrinsics
from .llvm_codegen import Frame, LLVMCodegen

#: the module's int32 flag that runs parallel loops on the calling thread
#: (a forked child's runtime sets it; :mod:`tirfun.runtime.forking` says why)
SERIAL_FLAG = "tirfun_parallel_serially"
from .llvm_types import I32, PTR, VOID, scalar_type


#: chunks of iterations per thread that a parallel loop is cut into
CHUNKS_PER_THREAD = 8
#: a function with more loops than this has its outermost serial loops
#: generated as functions of their own
OUTLINE_LOOPS = 64


class CPUCodegen(LLVMCodegen):
    """LLVM code for the host CPU.

    ``num_threads`` is the size of the pool a parallel loop asks for (0 or
    1, or ``use_gomp=False``, make every loop serial).
    """

    def __init__(self, module_name: str, triple: str, data_layout: str = "", *,
                 num_threads: int = 1, use_gomp: bool = True, contract: bool = False,
                 fast_math: bool = False):
        super().__init__(module_name, triple, data_layout, contract=contract,
                         fast_math=fast_math)
        self.num_threads = max(int(num_threads), 1)
        self.use_gomp = use_gomp and self.num_threads > 1
        self._outlined = 0
        self._outline_nests = False

    def add_function(self, sig, func) -> str:
        """Generate ``func``, outlining its loop nests when it has many."""
        loops = sum(1 for n in walk(func.body) if isinstance(n, For))
        self._outline_nests = loops > OUTLINE_LOOPS
        try:
            return super().add_function(sig, func)
        finally:
            self._outline_nests = False

    def serial_for(self, s: For) -> None:
        """A loop in order; an outermost loop of a function with many loops
        becomes a call of a function of its own."""
        outer = self.frame
        if not self._outline_nests or outer.fn.linkage == "internal":
            super().serial_for(s)
            return
        captured_vars, captured_bufs, values, index_of = self._closure(s)
        b = outer.builder
        lo = self.expr(s.min)
        end = b.add(lo, self.expr(s.extent), flags=("nsw",))
        self._outlined += 1
        nest = self._loop_function(f"{outer.fn.name}_nest_{self._outlined}", s, values, outer,
                                   captured_vars, captured_bufs, index_of, in_parallel=False)
        nest.attributes.add("noinline")
        code = b.call(nest, values + [lo, end])
        ok = outer.fn.append_basic_block(self.fresh("nest_ok"))
        bad = outer.fn.append_basic_block(self.fresh("nest_fail"))
        b.cbranch(b.icmp_signed("==", code, ir.Constant(I32, 0)), ok, bad)
        b.position_at_end(bad)
        b.ret(code)  # as a failed parallel loop leaves the exported function
        b.position_at_end(ok)

    def _closure(self, s: For):
        """What a loop moved into a function of its own needs from outside:
        the captured variables and buffers, and the distinct values that
        carry them (a pointer reached both as a variable and as a buffer is
        passed once, so ``noalias`` stays true), with the index of each."""
        outer = self.frame
        captured_vars, captured_bufs = self._captures(s)
        values: list[ir.Value] = []
        index_of: dict[int, int] = {}
        for v in [outer.vars[x] for x in captured_vars] + [outer.buffers[x] for x in captured_bufs]:
            if id(v) not in index_of:
                index_of[id(v)] = len(values)
                values.append(v)
        return captured_vars, captured_bufs, values, index_of

    def parallel_for(self, s: For) -> None:
        """Outline the loop and run it on the pool (serially when nested in
        another parallel loop or when there is no pool)."""
        if not self.use_gomp or self.frame.in_parallel:
            self.serial_for(s)
            return
        outer = self.frame
        captured_vars, captured_bufs, values, index_of = self._closure(s)
        b = outer.builder
        lo = self.expr(s.min)
        ext = self.expr(s.extent)
        t = ext.type
        # iterations are handed out in chunks from a shared counter, so a
        # thread that is slowed down (a busy core) takes fewer of them
        most = ir.Constant(t, self.num_threads * CHUNKS_PER_THREAD)
        nchunks = b.select(b.icmp_signed("<", ext, most), ext, most)
        nchunks = b.select(b.icmp_signed("<", nchunks, ir.Constant(t, 1)), ir.Constant(t, 1), nchunks)
        chunk = b.sdiv(b.sub(b.add(ext, nchunks), ir.Constant(t, 1)), nchunks)
        status = outer.alloca(I32, 1, "parallel_status", 4)
        record_t = ir.LiteralStructType([v.type for v in values] + [t, t, t, t, PTR, t])
        record = outer.alloca(record_t, 1, "parallel_closure", 8)
        zero = ir.Constant(I32, 0)
        b.store(ir.Constant(I32, 0), status)
        for k, v in enumerate(values + [lo, ext, chunk, nchunks, status, ir.Constant(t, 0)]):
            b.store(v, b.gep(record, [zero, ir.Constant(I32, k)], source_etype=record_t))

        self._outlined += 1
        base = f"{outer.fn.name}_parallel_{self._outlined}"
        body_fn = self._loop_function(f"{base}_body", s, values, outer, captured_vars,
                                      captured_bufs, index_of)
        wrapper = self._wrapper(base, record_t, body_fn, len(values))

        threads = self.num_threads
        if isinstance(s.extent, IntImm):
            threads = max(1, min(threads, s.extent.value))
        gomp = llvm_intrinsics.declare(self.module, "GOMP_parallel", VOID, [PTR, PTR, I32, I32])
        # in a child forked after the pool started the runtime sets the flag:
        # the wrapper then runs every chunk on this thread, without libgomp
        serially = b.icmp_signed("!=", b.load(self.serial_flag(), typ=I32), zero)
        with b.if_else(serially) as (on_this_thread, on_the_pool):
            with on_this_thread:
                b.call(wrapper, [record])
            with on_the_pool:
                b.call(gomp, [wrapper, record, ir.Constant(I32, threads), ir.Constant(I32, 0)])
        code = b.load(status, typ=I32)
        ok = outer.fn.append_basic_block(self.fresh("parallel_ok"))
        bad = outer.fn.append_basic_block(self.fresh("parallel_fail"))
        b.cbranch(b.icmp_signed("==", code, zero), ok, bad)
        b.position_at_end(bad)
        self.free_live()
        b.ret(code)  # the exported function, or an outlined nest that returns it there
        b.position_at_end(ok)

    def serial_flag(self) -> ir.GlobalVariable:
        """The module's :data:`SERIAL_FLAG`, declared on first use."""
        flag = self.module.globals.get(SERIAL_FLAG)
        if flag is None:
            flag = ir.GlobalVariable(self.module, I32, name=SERIAL_FLAG)
            flag.initializer = ir.Constant(I32, 0)
            flag.align = 4
        return flag

    def _loop_function(self, name, s: For, values, outer: Frame, captured_vars, captured_bufs,
                       index_of, in_parallel: bool = True) -> ir.Function:
        """``i32 name(captured..., begin, end)``: the loop over one thread's
        share. Its pointer parameters carry ``noalias`` where the caller's
        did, which LLVM keeps as alias scopes when it inlines the function."""
        t = scalar_type(s.loop_var.dtype)
        fn = ir.Function(self.module, ir.FunctionType(I32, [v.type for v in values] + [t, t]),
                         name=name)
        fn.linkage = "internal"
        frame = Frame(fn, self._fail_by_return)
        frame.in_parallel = in_parallel
        args = list(fn.args)
        for v, arg in zip(values, args):
            if id(v) in outer.noalias and isinstance(v.type, ir.PointerType):
                arg.add_attribute("noalias")
                frame.noalias.add(id(arg))
        for var in captured_vars:
            frame.vars[var] = args[index_of[id(outer.vars[var])]]
        for buf in captured_bufs:
            frame.buffers[buf] = args[index_of[id(outer.buffers[buf])]]
        self.frame = frame
        self.loop(s.loop_var, args[-2], args[-1], lambda: self.stmt(s.body))
        if not self.frame.builder.block.is_terminated:
            self.frame.builder.ret(ir.Constant(I32, 0))
        frame.finish()
        self.frame = outer
        return fn

    def _wrapper(self, name: str, record_t, body_fn, nvalues: int) -> ir.Function:
        """``void name(ptr closure)``, run by every thread of the pool: take
        the next chunk from the shared counter and run the loop over it,
        until the chunks run out or one fails."""
        fn = ir.Function(self.module, ir.FunctionType(VOID, [PTR]), name=name)
        fn.linkage = "internal"
        entry = fn.append_basic_block("entry")
        take = fn.append_basic_block("take")
        run = fn.append_basic_block("run")
        failed = fn.append_basic_block("failed")
        done = fn.append_basic_block("done")
        b = ir.IRBuilder(entry)
        zero = ir.Constant(I32, 0)

        def field_ptr(k):
            return b.gep(fn.args[0], [zero, ir.Constant(I32, k)], source_etype=record_t)

        values = [b.load(field_ptr(k), typ=record_t.elements[k]) for k in range(nvalues)]
        lo, ext, chunk, nchunks = (b.load(field_ptr(nvalues + k), typ=record_t.elements[nvalues + k])
                                   for k in range(4))
        status = b.load(field_ptr(nvalues + 4), typ=PTR)
        counter = field_ptr(nvalues + 5)
        t = ext.type
        b.branch(take)
        b.position_at_end(take)
        c = b.atomic_rmw("add", counter, ir.Constant(t, 1), "monotonic")
        b.cbranch(b.icmp_signed("<", c, nchunks), run, done)
        b.position_at_end(run)
        begin = b.mul(c, chunk)
        end = b.add(begin, chunk)
        end = b.select(b.icmp_signed("<", end, ext), end, ext)
        code = b.call(body_fn, values + [b.add(begin, lo), b.add(end, lo)])
        b.cbranch(b.icmp_signed("!=", code, zero), failed, take)
        b.position_at_end(failed)
        b.store(code, status)
        b.branch(done)
        b.position_at_end(done)
        b.ret_void()
        return fn

    def _captures(self, s: For) -> tuple[list[Var], list[Buffer]]:
        """The variables and buffers the loop uses from outside it."""
        frame = self.frame
        declared_inside = {n.buffer for n in walk(s) if isinstance(n, DeclBuffer)}
        vars_: dict[Var, None] = {}
        bufs: dict[Buffer, None] = {}
        for n in walk(s):
            if isinstance(n, Var) and n in frame.vars:
                vars_.setdefault(n, None)
            elif isinstance(n, (BufferLoad, BufferStore)):
                buf = n.buffer
                if buf in frame.buffers and buf not in declared_inside:
                    bufs.setdefault(buf, None)
        # the loop variable itself is bound inside
        vars_.pop(s.loop_var, None)
        return list(vars_), list(bufs)


__all__ = ["CPUCodegen"]
