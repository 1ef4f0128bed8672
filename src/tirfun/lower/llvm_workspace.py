"""Heap scratch buffers that outlive one call: a small cache per module.

A scratch buffer too large for the stack (a packed copy of a matrix, a tile
per parallel task) is allocated from the heap when its statement starts and
freed when it ends. For buffers of hundreds of kilobytes the C library maps
fresh pages from the system for each allocation and unmaps them at the free,
so every call of the function pays a page fault per 4 KiB of scratch: a
quarter of the time of a 1024^3 packed matmul, whose copies of A and B take
8 MiB. TVM keeps such workspace in a pool; here each module keeps up to
:data:`SLOTS` freed blocks and hands them out again:

* ``tirfun.ws.alloc(bytes)`` takes a cached block at least that large, else
  allocates one aligned to a cache line (``aligned_alloc``) with a header
  that records its capacity (null when the allocation fails); the block
  handed out starts :data:`HEADER` bytes in, a cache line too;
* ``tirfun.ws.free(ptr)`` puts a block of :data:`CACHE_FROM` to
  :data:`CACHE_UP_TO` bytes into an empty slot, else frees it;
* ``__tirfun_workspace_release()`` frees every cached block: the runtime
  calls it when it unloads the module's code.

A slot is taken and filled with an atomic compare-and-exchange, so threads
running the module at once (a parallel loop's tasks, or two callers) never
share a block. Blocks smaller than :data:`CACHE_FROM` go straight back to
malloc, which keeps them cheap already.
"""

from __future__ import annotations

from llvmlite import ir

from . import llvm_intrinsics

#: freed blocks each module keeps
SLOTS = 8
#: the smallest block worth keeping (glibc maps blocks from 128 KiB up afresh)
CACHE_FROM = 128 * 1024
#: the largest block kept: the page faults of a larger one cost little
#: against the work that fills it, and a module keeps at most SLOTS of
#: these (128 MiB) for as long as it lives
CACHE_UP_TO = 16 * 1024 * 1024
#: bytes before the block handed out: its capacity, and the alignment
HEADER = 64
#: the exported function that frees the cached blocks
RELEASE = "__tirfun_workspace_release"

_I8, _I64 = ir.IntType(8), ir.IntType(64)
_PTR = ir.PointerType()  # opaque, as the code generator's pointers
_ARRAY = ir.ArrayType(_PTR, SLOTS)
_ALLOC, _FREE, _SLOTS = "tirfun.ws.alloc", "tirfun.ws.free", "tirfun.ws.slots"


def workspace_functions(module: ir.Module) -> tuple[ir.Function, ir.Function]:
    """``(alloc, free)`` of ``module``, defined on first use."""
    if _ALLOC in module.globals:
        return module.globals[_ALLOC], module.globals[_FREE]
    slots = ir.GlobalVariable(module, _ARRAY, name=_SLOTS)
    slots.linkage = "internal"
    slots.initializer = ir.Constant(_ARRAY, None)
    malloc = llvm_intrinsics.declare(module, "aligned_alloc", _PTR, [_I64, _I64])
    free = llvm_intrinsics.declare(module, "free", ir.VoidType(), [_PTR])
    alloc_fn = _define_alloc(module, slots, malloc)
    free_fn = _define_free(module, slots, free)
    _define_release(module, slots, free)
    return alloc_fn, free_fn


def _slot(b: ir.IRBuilder, slots, i: int):
    return b.gep(slots, [ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), i)], inbounds=True,
                 source_etype=_ARRAY)


def _capacity_of(b: ir.IRBuilder, raw):
    return b.load(raw, typ=_I64, align=8)


def _offset(b: ir.IRBuilder, ptr, by: int):
    return b.gep(ptr, [ir.Constant(_I64, by)], inbounds=True, source_etype=_I8)


def _define_alloc(module, slots, malloc) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(_PTR, [_I64]), name=_ALLOC)
    fn.linkage = "internal"
    (size,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    # the cached blocks, in turn: take the first one large enough
    for i in range(SLOTS):
        slot = _slot(b, slots, i)
        raw = b.load_atomic(slot, "acquire", 8, typ=_PTR)
        look = fn.append_basic_block(f"look{i}")
        take = fn.append_basic_block(f"take{i}")
        took = fn.append_basic_block(f"took{i}")
        nxt = fn.append_basic_block(f"next{i}")
        b.cbranch(b.icmp_unsigned("!=", raw, ir.Constant(_PTR, None)), look, nxt)
        b.position_at_end(look)
        b.cbranch(b.icmp_unsigned(">=", _capacity_of(b, raw), size), take, nxt)
        b.position_at_end(take)
        pair = b.cmpxchg(slot, raw, ir.Constant(_PTR, None), "acq_rel", "monotonic")
        b.cbranch(b.extract_value(pair, 1), took, nxt)
        b.position_at_end(took)
        b.ret(_offset(b, raw, HEADER))
        b.position_at_end(nxt)
    # aligned to HEADER bytes, so that the block handed out, HEADER bytes
    # in, starts a cache line (malloc's 16-byte alignment put it across
    # two for every vector load of a packed panel); aligned_alloc takes a
    # multiple of the alignment
    rounded = b.and_(b.add(size, ir.Constant(_I64, 2 * HEADER - 1)), ir.Constant(_I64, -HEADER))
    raw = b.call(malloc, [ir.Constant(_I64, HEADER), rounded])
    ok = fn.append_basic_block("malloc_ok")
    bad = fn.append_basic_block("malloc_failed")
    b.cbranch(b.icmp_unsigned("!=", raw, ir.Constant(_PTR, None)), ok, bad)
    b.position_at_end(bad)
    b.ret(ir.Constant(_PTR, None))
    b.position_at_end(ok)
    b.store(size, raw, align=8)
    b.ret(_offset(b, raw, HEADER))
    return fn


def _define_free(module, slots, free) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [_PTR]), name=_FREE)
    fn.linkage = "internal"
    (ptr,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    raw = _offset(b, ptr, -HEADER)
    keep = fn.append_basic_block("keep")
    release = fn.append_basic_block("release")
    # capacity - CACHE_FROM <= CACHE_UP_TO - CACHE_FROM, unsigned: within both bounds at once
    span = b.sub(_capacity_of(b, raw), ir.Constant(_I64, CACHE_FROM))
    b.cbranch(b.icmp_unsigned("<=", span, ir.Constant(_I64, CACHE_UP_TO - CACHE_FROM)), keep, release)
    b.position_at_end(keep)
    for i in range(SLOTS):
        pair = b.cmpxchg(_slot(b, slots, i), ir.Constant(_PTR, None), raw, "acq_rel", "monotonic")
        done = fn.append_basic_block(f"kept{i}")
        nxt = fn.append_basic_block(f"full{i}")
        b.cbranch(b.extract_value(pair, 1), done, nxt)
        b.position_at_end(done)
        b.ret_void()
        b.position_at_end(nxt)
    b.branch(release)
    b.position_at_end(release)
    b.call(free, [raw])
    b.ret_void()
    return fn


def _define_release(module, slots, free) -> None:
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), []), name=RELEASE)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    for i in range(SLOTS):
        slot = _slot(b, slots, i)
        raw = b.atomic_rmw("xchg", slot, ir.Constant(_PTR, None), "acq_rel")
        some = fn.append_basic_block(f"some{i}")
        nxt = fn.append_basic_block(f"next{i}")
        b.cbranch(b.icmp_unsigned("!=", raw, ir.Constant(_PTR, None)), some, nxt)
        b.position_at_end(some)
        b.call(free, [raw])
        b.branch(nxt)
        b.position_at_end(nxt)
    b.ret_void()


__all__ = ["workspace_functions", "SLOTS", "CACHE_FROM", "CACHE_UP_TO", "HEADER", "RELEASE"]
