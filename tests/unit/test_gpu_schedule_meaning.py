"""GPU programs whose schedules changed the interpreter's results, found by
running random block schedules on the thread-bound programs of the tests:

* a ``shared`` or ``local`` buffer allocated outside the kernels and used
  by a kernel and by host code (or another kernel): TVM allocates it in the
  kernel, so no value crosses, and CUDA has no such program; the
  interpreter had read the never-written storage (NaN) as its result, and a
  schedule moving the two uses together seemed to change it.
"""

import numpy as np
import pytest

import tirfun.rewrites as R
from tirfun.errors import InterpError
from tirfun.interp import run
from tirfun.nodes import IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import random_inputs
from tirfun.testing.schedules import thread_binding_problems


def mod_of(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


# the kernel fills a shared buffer, the host reads it
SHARED_READ_ON_THE_HOST = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("S"):
                vi = T.axis.spatial(64, bx * 32 + tx)
                S[vi] = A[vi] * T.float32(2)
    for i in range(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = S[vi] + T.float32(1)
"""


def test_a_shared_buffer_a_kernel_fills_and_the_host_reads_has_no_meaning():
    func = from_source(SHARED_READ_ON_THE_HOST)
    args = random_inputs(func, np.random.default_rng(0))
    with pytest.raises(InterpError, match=r"buffer S of scope 'shared' is allocated outside the kernels and "
                       r"used in host code and in a kernel: TVM allocates it inside the kernel, one per "
                       r"thread block(.|\n)*in host code:\n +C\[vi_1\] = S\[vi_1\] \+ T.float32\(1.0\)\n"
                       r"  in a kernel:\n +S\[vi\] = A\[vi\] \* T.float32\(2.0\)"):
        run(func, *args)


# one kernel fills a local buffer, another reads it
LOCAL_ACROSS_KERNELS = """
@T.prim_func
def main(A: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    L = T.alloc_buffer((8,), "int32", scope="local")
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("L"):
            vi = T.axis.spatial(8, tx)
            L[vi] = A[vi] + 1
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("C"):
            vi = T.axis.spatial(8, tx)
            C[vi] = L[vi] * 2
"""


def test_a_local_buffer_two_kernels_use_has_no_meaning():
    func = from_source(LOCAL_ACROSS_KERNELS)
    with pytest.raises(InterpError, match=r"buffer L of scope 'local' is allocated outside the kernels and "
                       r"used in a kernel and in another kernel: TVM allocates it inside the kernel, one "
                       r"per thread,"):
        run(func, np.arange(8, dtype="int32"), np.zeros(8, "int32"))
    # one kernel using it is fine
    fused = LOCAL_ACROSS_KERNELS.replace('''            L[vi] = A[vi] + 1
    for tx in T.thread_binding(8, thread="threadIdx.x"):
''', '''            L[vi] = A[vi] + 1
''')
    c = np.zeros(8, "int32")
    run(from_source(fused), np.arange(8, dtype="int32"), c)
    assert c.tolist() == [2 * (k + 1) for k in range(8)]


# a sum across launched threads: cache_write to local puts the copy back to
# B after the launch, on the host, as TVM's does
LAUNCHED_SUM = """
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
    tx = T.launch_thread("threadIdx.x", 32)
    with T.block("sum"):
        vk = T.axis.reduce(32, tx)
        with T.init():
            B[0] = T.float32(0)
        B[0] = B[0] + A[vk]
"""


def test_a_local_cache_of_a_launched_kernel_used_on_the_host_is_found():
    mod = mod_of(LAUNCHED_SUM)
    after = R.cache_write("sum", 0, "local")(mod)
    # what the schedule drawer asks before taking a step: T.launch_thread
    # starts a kernel as a thread-bound loop does
    assert thread_binding_problems(after["main"]) == [
        "buffer B_local of scope local is used in the kernel of T.launch_thread('threadIdx.x') and "
        "outside it, where the GPU gives the kernel its own"]
    args = random_inputs(mod["main"], np.random.default_rng(1))
    with pytest.raises(InterpError, match="buffer B_local of scope 'local' is allocated outside the kernels"):
        run(after["main"], *args)
