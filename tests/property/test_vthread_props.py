"""Virtual threads split at barriers, on random programs with a known answer.

Each thread of a block runs one or two virtual-thread loops; in every round
each (thread, virtual thread) pair writes its element of a shared buffer,
and after a barrier reads the element a random permutation gives it, plus
what it kept across the barrier in a local buffer or a let. The answer
follows from the threads' meaning of a barrier (every virtual thread of
every thread writes before any reads), computed with numpy. The barriers
are written in the program or left to lowering; the program runs on the
interpreter's GPU as written (where its barriers are written), lowered for
CUDA, and built for CUDA with the interpreter as the GPU, and each gives
the answer bit for bit.
"""

import numpy as np
from hypothesis import event, given, settings, strategies as st

import tirfun
from tirfun.interp import run
from tirfun.script import from_source
from tirfun.testing.cuda import run_split


@st.composite
def mirrors(draw):
    """(source, threads, virtual threads per dimension, rounds, keep, written, permutation)."""
    n = draw(st.integers(1, 4), label="threads")
    dims = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2), label="vthreads")
    rounds = draw(st.integers(1, 3), label="rounds")
    keep = draw(st.sampled_from(["none", "local", "let"]), label="kept across the barrier")
    written = draw(st.booleans(), label="barriers written")
    size = n * int(np.prod(dims))
    perm = draw(st.permutations(range(size)), label="permutation")
    sync = 'T.tvm_storage_sync("shared")' if written else "T.evaluate(0)"
    # the element of a (thread, virtual thread) pair: virtual threads outermost
    if len(dims) == 1:
        loops = f'for w0 in T.thread_binding({dims[0]}, thread="vthread.x"):'
        place = f"w0 * {n} + tx"
    else:
        loops = (f'for w0 in T.thread_binding({dims[0]}, thread="vthread.y"):\n'
                 f'              for w1 in T.thread_binding({dims[1]}, thread="vthread.x"):')
        place = f"(w0 * {dims[1]} + w1) * {n} + tx"
    if keep == "let":
        head, p, extra = f"p: T.int32 = {place}\n                    ", "p", " + T.Cast('float32', p)"
    else:
        head, p, extra = "", f"({place})", ""
    if keep == "local":
        head += ('L_data = T.allocate([1], "float32", "local")\n                    '
                 'L = T.decl_buffer((1,), data=L_data, scope="local")\n                    '
                 f"L[0] = A[r, {p}] * T.float32(3)\n                    ")
        extra = " + L[0]"
    src = f'''
@T.prim_func
def main(A: T.Buffer(({rounds}, {size}), "float32"), P: T.Buffer(({size},), "int32"),
         B: T.Buffer(({rounds}, {size}), "float32")):
    S = T.alloc_buffer(({size},), "float32", scope="shared")
    for tx in T.thread_binding({n}, thread="threadIdx.x"):
            {loops}
                for r in range({rounds}):
                    {head}S[{p}] = A[r, {p}] * T.float32(2)
                    {sync}
                    B[r, {p}] = S[P[{p}]]{extra}
                    {sync}
'''
    return src, rounds, size, keep, written, perm


def _answer(a: np.ndarray, perm: np.ndarray, keep: str) -> np.ndarray:
    out = 2 * a[:, perm]
    if keep == "local":
        out = out + 3 * a
    elif keep == "let":
        out = out + np.arange(a.shape[1], dtype="float32")
    return out.astype("float32")


@settings(max_examples=max(settings().max_examples // 3, 10))
@given(mirrors(), st.integers(0, 2**16))
def test_virtual_threads_reach_each_barrier_together(case, seed):
    src, rounds, size, keep, written, perm = case
    func = from_source(src)
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, (rounds, size)).astype("float32")
    p = np.asarray(perm, dtype="int32")
    want = _answer(a, p, keep)
    event(f"keeps {keep} across the barrier")
    event("barriers written" if written else "barriers placed by lowering")
    if written:
        b = np.zeros((rounds, size), "float32")
        run(func, a, p, b)
        np.testing.assert_array_equal(b, want)
    lowered = tirfun.lower(func, target="cuda")
    b = np.zeros((rounds, size), "float32")
    run(lowered["main"], a, p, b)
    np.testing.assert_array_equal(b, want)
    rt = tirfun.build(func, target="cuda")
    b = np.zeros((rounds, size), "float32")
    run_split(rt, a, p, b)
    np.testing.assert_array_equal(b, want)
