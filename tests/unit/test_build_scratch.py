"""Heap scratch buffers are freed on every way out of a compiled function,
an assertion that fails inside their scope included."""

from __future__ import annotations

import ctypes
import ctypes.util

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
    assert "@malloc" in rt.get_source("ll")
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
