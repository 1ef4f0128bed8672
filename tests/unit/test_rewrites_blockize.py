"""blockize: the subtree under a loop made a block of its own, the meaning
kept, the bindings divided as TVM divides them; each refusal with its error."""

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.nodes import IRModule
from tirfun.rewrites.index import build_index, index_of
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

MATMUL = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

TILED = R.Pipeline([R.split("i", [None, 4]), R.split("j", [None, 4]), R.split("k", [None, 4]),
                    R.reorder("i_0", "j_0", "k_0", "i_1", "j_1", "k_1")])


def check(before: IRModule, after: IRModule) -> None:
    verify(after)
    assert_equivalent(before["main"], after["main"])
    assert index_of(after["main"]) == build_index(after["main"])
    assert_structural_equal(from_source(after["main"].script()), after["main"])
    func = after["main"]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d) for d in func.buffer_map[p].shape]).astype("float32")
            for p in func.params]
    expected = [a.copy() for a in args]
    interp_run(func, *expected)
    tirfun.build(after, target="llvm")(*args)
    for x, y in zip(expected, args):
        assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("loop, outer_kinds, inner_kinds", [
    ("i_1", "SSR", "SSR"),   # a tile of the reduction: the init becomes the outer block's
    ("k_0", "SSR", "SSR"),   # the tile of the reduction loop and those inside it
    ("k_1", "SSR", "R"),
    ("i_0", "SSR", "SSR"),   # everything: an outer block of one instance
])
def test_blockize_of_a_tiled_matmul_keeps_the_meaning(loop, outer_kinds, inner_kinds):
    mod = IRModule({"main": from_source(MATMUL)})
    tiled = TILED(mod)
    sch = Schedule(tiled)
    outer = sch.blockize(loop)
    assert outer == R.BlockRef("C_o", "main")
    out = sch.mod
    check(mod, out)
    o = sch.get(outer)
    inner = sch.get(sch.get_block("C"))
    kind = {"DataPar": "S", "CommReduce": "R"}
    assert "".join(kind[iv.iter_type.value] for iv in o.iter_vars) == outer_kinds
    assert "".join(kind[iv.iter_type.value] for iv in inner.iter_vars) == inner_kinds
    assert (o.init is not None) and inner.init is None
    # the trace replays
    assert R.Pipeline.from_json(R.Pipeline(list(sch.trace)).to_json())(tiled) == out


def test_blockize_then_decompose_reduction_of_the_outer_block():
    mod = IRModule({"main": from_source(MATMUL)})
    out = (TILED >> R.blockize("i_1") >> R.decompose_reduction("C_o", "k_0"))(mod)
    check(mod, out)


def test_blockize_errors():
    mod = TILED(IRModule({"main": from_source(MATMUL)}))
    two = IRModule({"main": from_source("""
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi]
""")})
    with pytest.raises(R.NonSingleChildBlockError, match="it holds 2"):
        R.blockize("i")(two)
    # i_1 * 4 + ... : a binding whose inner part is not a dense radix from 1
    strided = IRModule({"main": from_source("""
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i_0, i_1 in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i_1 * 4 + i_0)
            B[vi] = A[vi]
""")})
    with pytest.raises(R.SubspaceNotDivisibleError, match=r"the binding vi = i_1 \* 4 \+ i_0 does not divide at "
                                                            r"loop 'i_1'"):
        R.blockize("i_1")(strided)
    with pytest.raises(R.RefKindError):
        R.blockize(R.BlockRef("C"))(mod)
    with pytest.raises(tirfun.errors.ScheduleError, match="blockize of a list of blocks is not supported"):
        Schedule(mod).blockize([R.BlockRef("C")])


def test_blockize_of_an_opaque_block_relaxes_the_loops_its_regions_read():
    # found by the soak: loop_partition's opaque blocks read the loop
    # variables directly; the outer block's regions must not name them
    src = """
@T.prim_func
def main(A: T.Buffer((4, 1, 3), "int32"), O: T.Buffer((4, 3), "int32")):
    for i, k, j in T.grid(4, 1, 3):
        with T.block("O"):
            vi, vk, vj = T.axis.remap("SRS", [i, k, j])
            with T.init():
                O[vi, vj] = 0
            O[vi, vj] = O[vi, vj] + A[vi, vk, vj]
"""
    mod = IRModule({"main": from_source(src)})
    parted = R.loop_partition("j", [None, 1])(mod)
    out = R.blockize("i", False)(parted)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    outer = Schedule(out).get(R.BlockRef("O_j_common_o"))
    assert [r.script() for r in outer.writes] == ["O[0:4, 0:3]"]


def test_blockize_refuses_a_predicate_reading_loops_above_an_opaque_block_and_below_the_loop():
    # found by the soak: under loop_partition's opaque block, the loops above
    # it are outer loops too; the predicate reads one of them and the unit
    # loop blockize starts at, so it has no side to go to
    src = """
@T.prim_func
def main(A: T.Buffer((5, 6), "float32"), B: T.Buffer((5, 6), "float32")):
    for i_0 in T.parallel(3):
        for j in range(6):
            for i_1 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(5, i_0 * 2 + i_1)
                    vj = T.axis.spatial(6, j)
                    T.where(i_0 * 2 + i_1 < 5)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
"""
    parted = R.loop_partition("i_1", [None, 1])(IRModule({"main": from_source(src)}))
    with pytest.raises(R.SubspaceNotDivisibleError, match=r"its predicate i_0 \* 2 \+ i_10 < 5 reads loops on both "
                                                           r"sides of loop 'i_10'"):
        R.blockize("i_10", False)(parted)
