"""read_at and write_at on random thread-bound matmuls: A's and B's tiles
read through copies per iteration of a random loop, C's written through a
copy copied back at a random loop, each in a random scope. Lowered for
CUDA (lowering places the barriers the staging needs), the result computes
what the original computes, bit for bit, on the interpreter's GPU; a
refusal is a ScheduleError; and the copy back is filled first exactly
where an element of it would be left unwritten in some iteration. Some
matmuls bind two loops to virtual threads as well, between the thread
blocks and the threads, as TVM's GPU schedules do: lowering splits those
loops at the barriers the staging needs."""

import numpy as np
from hypothesis import event, given, settings, strategies as st

import tirfun.rewrites as R
from tirfun.analysis.traversal import walk_stmts
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.interp import run
from tirfun.lower import lower
from tirfun.nodes import Block, IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import random_inputs

SCOPES = ("shared", "local", "global")


@st.composite
def staged_matmuls(draw):
    """(source, read_at records, write_at record) over a matmul whose
    output tiles are bound to thread blocks and threads."""
    by, bx = draw(st.integers(1, 2), label="by"), draw(st.integers(1, 2), label="bx")
    vthreads = draw(st.booleans(), label="vthreads")
    vy, vx = (draw(st.integers(1, 2), label="vy"), draw(st.integers(1, 2), label="vx")) if vthreads else (1, 1)
    ty, tx = draw(st.sampled_from([1, 2, 4]), label="ty"), draw(st.sampled_from([1, 2, 4]), label="tx")
    ti, tj = draw(st.integers(1, 2), label="i"), draw(st.integers(1, 2), label="j")
    k0, k1 = draw(st.integers(1, 3), label="k0"), draw(st.integers(1, 3), label="k1")
    m, n, k = by * vy * ty * ti, bx * vx * tx * tj, k0 * k1
    # the virtual threads: vy and vx between the thread blocks and the threads
    kind = (lambda tag: f'T.thread_binding({{}}, thread="{tag}")') if vthreads else (lambda tag: "range({})")
    vloops = (f"for vy in {kind('vthread.y').format(vy)}:\n"
              f"             for vx in {kind('vthread.x').format(vx)}:")
    # without an init, C accumulates onto what it held: a write_at copy
    # must be filled from C first
    init = "with T.init():\n                                    C[vi, vj] = 0" if draw(st.booleans(), label="init") \
        else "T.evaluate(0)"
    src = f'''
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "int32"), B: T.Buffer(({k}, {n}), "int32"), C: T.Buffer(({m}, {n}), "int32")):
    for by in T.thread_binding({by}, thread="blockIdx.y"):
        for bx in T.thread_binding({bx}, thread="blockIdx.x"):
            {vloops}
              for ty in T.thread_binding({ty}, thread="threadIdx.y"):
                for tx in T.thread_binding({tx}, thread="threadIdx.x"):
                    for k0 in range({k0}):
                        for k1, i, j in T.grid({k1}, {ti}, {tj}):
                            with T.block("C"):
                                vi = T.axis.spatial({m}, by * {vy * ty * ti} + vy * {ty * ti} + ty * {ti} + i)
                                vj = T.axis.spatial({n}, bx * {vx * tx * tj} + vx * {tx * tj} + tx * {tj} + j)
                                vk = T.axis.reduce({k}, k0 * {k1} + k1)
                                {init}
                                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''
    reads = []
    for index in draw(st.lists(st.sampled_from([0, 1]), unique=True, max_size=2), label="read"):
        loop = draw(st.sampled_from(["vx", "ty", "tx", "k0", "k1"]), label="read_at loop")
        reads.append(R.read_at(loop, "C", index, draw(st.sampled_from(SCOPES), label="read scope")))
    write = None
    if draw(st.booleans(), label="write_at"):
        loop = draw(st.sampled_from(["vx", "ty", "tx", "k0", "k1", "i"]), label="write_at loop")
        write = R.write_at(loop, "C", 0, draw(st.sampled_from(SCOPES), label="write scope"))
    return src, reads, write


def _on_the_gpu(mod: IRModule, args) -> list:
    out = [a.copy() for a in args]
    lowered = lower(mod, target="cuda")
    if "vthread" in mod.script() and "tvm_storage_sync" in lowered.script():
        event("lowering splits the virtual threads at barriers")
    run(lowered["main"], *out)
    return out


@settings(max_examples=max(settings().max_examples // 2, 10))
@given(staged_matmuls(), st.integers(0, 2**16))
def test_staged_matmuls_compute_the_product_on_the_interpreters_gpu(case, seed):
    src, reads, write = case
    mod = IRModule({"main": from_source(src)})
    after = mod
    applied = set()
    for rewrite in reads + ([write] if write is not None else []):
        try:
            after = rewrite(after)
        except ScheduleError as err:
            event(f"{rewrite.primitive} refused: {type(err).__name__}")
            continue
        applied.add(rewrite.primitive)
        event(f"applies {rewrite.primitive} into {rewrite.storage_scope}")
    verify(after)
    fills = [b.name_hint for _, b in walk_stmts(after["main"]) if isinstance(b, Block) and b.name_hint.endswith("_fill")]
    if write is not None and write.primitive in applied:
        # the fill is there exactly where the blocks read C before writing
        # it: without an init (with one, the copy holds what the init wrote
        # in an earlier iteration, since nothing else writes C)
        assert bool(fills) == ("T.init" not in src)
        if fills:
            event("write_at fills its copy")
    if "vthread" in src:
        event("virtual threads")
    args = random_inputs(mod["main"], np.random.default_rng(seed))
    want, got = _on_the_gpu(mod, args), _on_the_gpu(after, args)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(w, g)
    # and both compute the product (int32 sums wrap alike in any order)
    a, b, c = args
    product = (a.astype("int64") @ b.astype("int64") + (0 if "T.init" in src else c)).astype("int32")
    np.testing.assert_array_equal(got[2], product)
