"""The schedule strategy's check that thread bindings keep a program's meaning on a GPU."""

import numpy as np
import pytest

import tirfun
from tirfun.errors import InterpError
from tirfun.interp import run
from tirfun.testing.schedules import thread_binding_problems

TWO_BLOCKS = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(8, thread="TAG_J"):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for k in T.thread_binding(EXT_K, thread="threadIdx.x"):
            with T.block("C"):
                vi, vk = T.axis.remap("SS", [i, k])
                C[vi] = A[vi, vk]
'''


def problems(tag_j="threadIdx.x", ext_k="8", k_loop=None):
    text = TWO_BLOCKS.replace("TAG_J", tag_j).replace("EXT_K", ext_k)
    if k_loop is not None:
        text = text.replace(f'for k in T.thread_binding({ext_k}, thread="threadIdx.x")', k_loop)
    return thread_binding_problems(tirfun.script.from_source(text))


def test_sibling_loops_of_one_tag_and_extent_are_fine():
    assert problems() == []


def test_one_tag_with_two_extents_is_found():
    assert problems(ext_k="4") == ["loops bound to threadIdx.x have different extents"]


def test_a_tag_bound_inside_a_loop_bound_to_it_is_found():
    assert problems(tag_j="blockIdx.x") == [
        "loop j is bound to blockIdx.x inside another loop bound to it",
        "loops bound to blockIdx.x have different extents",
        "block B is run by every thread of threadIdx.x",
    ]


def test_a_block_every_thread_of_an_axis_runs_is_found():
    assert problems(k_loop="for k in range(8)") == ["block C is run by every thread of threadIdx.x"]


def test_overlapping_windows_are_found():
    text = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((5,), "int32"), B: T.Buffer((5,), "int32")):
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for j in T.thread_binding(4, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(5, i + j)
                B[vi] = B[vi] + A[vi]
'''
    func = tirfun.script.from_source(text)
    assert thread_binding_problems(func) == ["block B is not bound one to one to the loops of its kernel"]
    # and the interpreter sees the race it would be: two blocks update B[1]
    with pytest.raises(InterpError, match=r"data race on buffer B at index \(1,\)"):
        run(func, np.ones(5, "int32"), np.zeros(5, "int32"))


SHARED_FILLED_ON_THE_HOST = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    A_shared = T.alloc_buffer((4,), scope="SCOPE")
    for ax0 in range(4):
        with T.block("A_shared"):
            v0 = T.axis.spatial(4, ax0)
            A_shared[v0] = A[v0]
    for i in T.thread_binding(4, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A_shared[vi] + T.float32(1)
'''


@pytest.mark.parametrize("scope", ["shared", "local"])
def test_a_shared_or_local_buffer_filled_outside_its_kernel_is_found(scope):
    func = tirfun.script.from_source(SHARED_FILLED_ON_THE_HOST.replace("SCOPE", scope))
    assert thread_binding_problems(func) == [
        f"buffer A_shared of scope {scope} is used in the kernel of loop i and outside it, where the GPU "
        "gives the kernel its own"]
    # and the interpreter gives it no meaning: the kernel would read its own
    # storage, never filled, where a run once read NaN (or 0) as a result
    a = np.arange(4, dtype="float32")
    b = np.zeros(4, "float32")
    per = "thread block" if scope == "shared" else "thread"
    with pytest.raises(InterpError, match=rf"buffer A_shared of scope '{scope}' is allocated outside the "
                       rf"kernels and used in host code and in a kernel: TVM allocates it inside the "
                       rf"kernel, one per {per}(.|\n)*A_shared\[v0\] = A\[v0\](.|\n)*"
                       rf"B\[vi\] = A_shared\[vi\]"):
        run(func, a, b)
    assert not b.any()


def test_a_global_buffer_filled_outside_its_kernel_is_fine():
    func = tirfun.script.from_source(SHARED_FILLED_ON_THE_HOST.replace("SCOPE", "global"))
    assert thread_binding_problems(func) == []
