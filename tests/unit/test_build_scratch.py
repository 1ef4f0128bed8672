"""Heap scratch buffers are freed on every way out of a compiled function,
an assertion that fails inside their scope included."""

from __future__ import annotations

import ctypes
import ctypes.util
import re

import numpy as np
import pytest

import tirfun
from tirfun.lower.llvm_codegen import STACK_LIMIT_BYTES

N = 1 << 18  # 1 MiB of float32 scratch: far above the stack limit, so malloc'd
assert N * 4 > STACK_LIMIT_BYTES

SRC = f'''@T.prim_func
def main(A: T.Buffer(({N},), "float32"), B: T.Buffer((1,), "float32")):
    S = T.alloc_buffer(({N},), "float32")
    for i in range({N}):
        with T.block("S"):
            vi = T.axis.spatial({N}, i)
            S[vi] = A[vi] * T.float32(2)
    with T.block("B"):
        T.Assert(S[0] < T.float32(1), "S[0] must stay below 1")
        B[0] = S[0] + S[{N - 1}]
'''

# the assertion fails inside a parallel loop, run on the thread pool
SRC_PARALLEL = f'''@T.prim_func
def main(A: T.Buffer(({N},), "float32"), B: T.Buffer((1,), "float32")):
    S = T.alloc_buffer(({N},), "float32")
    for i in T.parallel({N}):
        with T.block("S"):
            vi = T.axis.spatial({N}, i)
            T.Assert(A[vi] < T.float32(0.5), "S[0] must stay below 1")
            S[vi] = A[vi] * T.float32(2)
    with T.block("B"):
        B[0] = S[0] + S[{N - 1}]
'''


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _allocated_bytes():
    """Bytes the C heap has handed out and not taken back (glibc), or None."""
    path = ctypes.util.find_library("c")
    libc = ctypes.CDLL(path) if path else None
    fn = getattr(libc, "mallinfo2", None)
    if fn is None:
        return None
    fn.restype = _Mallinfo2
    info = fn()
    return info.uordblks + info.hblkhd


@pytest.mark.parametrize("src", [SRC, SRC_PARALLEL], ids=["serial", "parallel"])
def test_heap_scratch_is_freed_when_an_assertion_fails(src):
    if _allocated_bytes() is None:
        pytest.skip("needs glibc's mallinfo2 to count heap bytes")
    rt = tirfun.build(tirfun.script.from_source(src), target="llvm")
    # from the heap, at a cache line: aligned_alloc(64, ...) (malloc's 16
    # bytes put every vector load of a packed panel across two lines)
    assert re.search(r"@aligned_alloc\(i64 64, i64", rt.get_source("ll"))
    bad = np.ones(N, "float32")
    out = np.zeros(1, "float32")
    calls = 64
    for _ in range(4):  # warm up the allocator and the error path
        with pytest.raises(tirfun.TirfunError, match="must stay below 1"):
            rt(bad, out)
    before = _allocated_bytes()
    for _ in range(calls):
        with pytest.raises(tirfun.TirfunError, match="must stay below 1"):
            rt(bad, out)
    grown = _allocated_bytes() - before
    # a leak keeps every call's MiB; the allocator's own noise is far smaller
    assert grown < 8 * N * 4, f"{grown} bytes stayed allocated after {calls} failed calls"
    good = np.full(N, 0.25, "float32")
    rt(good, out)
    assert out[0] == np.float32(1.0)


def test_a_freed_heap_block_is_kept_for_the_next_call_and_released_with_the_module():
    # glibc maps a block this large afresh at each malloc and unmaps it at
    # the free: every call would pay a page fault per 4 KiB of scratch
    if _allocated_bytes() is None:
        pytest.skip("needs glibc's mallinfo2 to count heap bytes")
    import gc

    from tirfun.runtime.builder import clear_cache

    clear_cache()  # a module built before (by another test) would hold a block already
    rt = tirfun.build(tirfun.script.from_source(SRC), target="llvm")
    assert "tirfun.ws.alloc" in rt.get_source("ll")
    good = np.full(N, 0.25, "float32")
    out = np.zeros(1, "float32")
    before = _allocated_bytes()
    rt(good, out)
    kept = _allocated_bytes() - before
    assert kept >= N * 4, f"the block of {N * 4} bytes was not kept ({kept} bytes)"
    for _ in range(32):
        rt(good, out)
    assert _allocated_bytes() - before < kept + N * 4, "each call took a new block"
    assert out[0] == np.float32(1.0)
    alive = _allocated_bytes()
    del rt
    clear_cache()
    gc.collect()
    assert alive - _allocated_bytes() >= N * 4, "unloading the module kept its cached block"


def test_threads_of_a_parallel_loop_take_cached_blocks_of_their_own():
    # each parallel task packs its 512 x 64 panel of B (128 KiB, cached) in a
    # scratch block of its own; blocks shared between tasks would mix panels
    from tirfun.examples import schedules

    n = 512
    sch = schedules.packed_matmul(n, rows=6, cols=64, pack="panel", pack_a=False)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    want = np.zeros((n, n), "float32")
    tirfun.build(schedules.matmul(n), target="llvm")(a, b, want)  # k in the same order: the same bits
    rt = tirfun.build(sch.mod, target="llvm")
    for _ in range(3):
        got = np.full((n, n), np.nan, "float32")
        rt(a, b, got)
        np.testing.assert_array_equal(got, want)


def test_callers_on_two_threads_each_get_their_own_block():
    import threading

    rt = tirfun.build(tirfun.script.from_source(SRC), target="llvm")
    results = {}

    def calls(value: float):
        a = np.full(N, value, "float32")
        a[-1] = value / 2
        out = np.zeros(1, "float32")
        seen = set()
        for _ in range(40):
            rt(a, out)
            seen.add(float(out[0]))
        results[value] = seen

    threads = [threading.Thread(target=calls, args=(v,)) for v in (0.25, 0.375)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0.25: {0.75}, 0.375: {1.125}}


@pytest.mark.parametrize("elements, kept", [(20000, False), (1 << 18, True), (1 << 23, False)],
                         ids=["80 KB: malloc keeps it cheap", "1 MiB", "32 MiB: too large to keep"])
def test_only_blocks_of_the_cached_sizes_are_kept(elements, kept):
    if _allocated_bytes() is None:
        pytest.skip("needs glibc's mallinfo2 to count heap bytes")
    from tirfun.lower.llvm_workspace import CACHE_FROM, CACHE_UP_TO
    from tirfun.runtime.builder import clear_cache

    assert (CACHE_FROM <= elements * 4 <= CACHE_UP_TO) == kept and elements * 4 > STACK_LIMIT_BYTES
    clear_cache()
    src = SRC.replace(str(N - 1), str(elements - 1)).replace(f"({N},)", f"({elements},)").replace(
        f"range({N})", f"range({elements})").replace(f"spatial({N}", f"spatial({elements}")
    rt = tirfun.build(tirfun.script.from_source(src), target="llvm")
    good = np.full(elements, 0.25, "float32")
    out = np.zeros(1, "float32")
    before = _allocated_bytes()
    rt(good, out)
    assert out[0] == np.float32(1.0)
    assert (_allocated_bytes() - before >= elements * 4) == kept
