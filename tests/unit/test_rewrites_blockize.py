"""blockize: the subtree under a loop made a block of its own, the meaning
kept, the bindings divided as TVM divides them; each refusal with its error."""

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.interp import run as interp_run
from tirfun.nodes import IRModule
from tirfun.rewrites.index import build_index, index_of
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from corner_sources import GUARDED_CONSUMER, LOOSE_READ, RANGES_READING_OUTER_LOOPS

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
    with pytest.raises(R.InvalidArgumentError, match="needs two blocks or more"):
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


def test_blockize_reads_a_unit_loop_of_a_predicate_on_both_sides_at_its_value():
    # found by the soak: under loop_partition's opaque block, the loops above
    # it are outer loops too; the predicate reads one of them and the unit
    # loop blockize starts at. That loop takes one value (TVM's iterator
    # maps read it as a constant), so the condition is the outer side's;
    # a loop of two iterations leaves it on both sides
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
    mod = IRModule({"main": from_source(src)})
    parted = R.loop_partition("i_1", [None, 1])(mod)
    after = R.blockize("i_10", False)(parted)
    verify(after)
    assert_equivalent(parted["main"], after["main"])
    assert _realize(after, "B_i_10_o").predicate.script() == "i_0 * 2 < 5"
    with pytest.raises(R.SubspaceNotDivisibleError, match=r"its predicate i_0 \* 2 \+ i_1 < 5 reads loops on both "
                                                           r"sides of loop 'i_1'"):
        R.blockize("i_1", False)(mod)


RANGE_READS_OUTER = RANGES_READING_OUTER_LOOPS


@pytest.mark.parametrize("target, loop, outer", [("ax0", "ax0", "a"), ("c", "c", "a"),
                                                  (["C", "D"], "ax0", "a")])
@pytest.mark.parametrize("preserve", [True, False])
def test_blockize_refuses_loops_whose_range_reads_loops_above_the_new_block(target, loop, outer, preserve):
    # found by fuzzing: the loop moved into the new block with its range,
    # which then read a loop variable the block does not bind
    mod = IRModule({"main": from_source(RANGE_READS_OUTER)})
    with pytest.raises(R.SubspaceNotDivisibleError,
                       match=rf"loop '{loop}' runs over a range that reads '{outer}', a loop above"):
        R.blockize(tuple(target) if isinstance(target, list) else target, preserve)(mod)
    # from the loop the range reads down, the nest divides
    only_d = RANGE_READS_OUTER.replace(RANGE_READS_OUTER[RANGE_READS_OUTER.index("        for ax0"):
                                                         RANGE_READS_OUTER.index("        for c")], "")
    mod = IRModule({"main": from_source(only_d)})
    out = R.blockize("a", preserve)(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])


# -- blockize of a list of blocks -------------------------------------------------

TWO_STAGES = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for m in range(6):
        for i, j in T.grid(3, 1):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 64):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj + 64] = A[vi, vj + 64] * T.float32(3)
"""


def test_blockize_of_two_blocks_makes_one_block_holding_both():
    # as TVM makes it: the outer variables come from the first block, the
    # regions are the union of the blocks' relaxed regions
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for m in range(6):
        with T.block("outer_B_C_"):
            vi_o = T.axis.spatial(1, 0)
            vj_o = T.axis.spatial(1, 0)
            T.reads(A[0:128, 0:128])
            T.writes(B[0:128, 0:128])
            for i, j in T.grid(3, 1):
                with T.block("B"):
                    vi_i = T.axis.spatial(3, i)
                    T.reads(A[vi_i, 0])
                    T.writes(B[vi_i, 0])
                    B[vi_i, 0] = A[vi_i, 0] * T.float32(2)
            for i, j in T.grid(128, 64):
                with T.block("C"):
                    vi_i, vj_i = T.axis.remap("SS", [i, j])
                    T.reads(A[vi_i, vj_i + 64])
                    T.writes(B[vi_i, vj_i + 64])
                    B[vi_i, vj_i + 64] = A[vi_i, vj_i + 64] * T.float32(3)
""")
    mod = IRModule({"main": from_source(TWO_STAGES)})
    sch = Schedule(mod, debug_mask="all")
    outer = sch.blockize([sch.get_block("B"), sch.get_block("C")], preserve_unit_iters=False)
    assert outer == R.BlockRef("outer_B_C_", "main")
    assert_structural_equal(sch.mod["main"], expected, names=True)
    check(mod, sch.mod)
    # the trace replays, from JSON and from its Python
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    assert "sch.blockize([BlockRef(\"B\", \"main\"), BlockRef(\"C\", \"main\")], preserve_unit_iters=False)" \
        in sch.trace.as_python()


SHARED_OUTER = """
@T.prim_func
def main(A: T.Buffer((8, 6), "float32"), B: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32"),
         D: T.Buffer((8,), "float32"), E: T.Buffer((8, 6), "float32")):
    for m in range(4):
        for i, j in T.grid(2, 6):
            with T.block("B"):
                vi = T.axis.spatial(8, m * 2 + i)
                vj = T.axis.spatial(6, j)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, k in T.grid(2, 6):
            with T.block("D"):
                vi = T.axis.spatial(8, m * 2 + i)
                vk = T.axis.reduce(6, k)
                with T.init():
                    D[vi] = T.float32(0)
                D[vi] = D[vi] + B[vi, vk]
        for i, j in T.grid(2, 6):
            with T.block("C"):
                vi = T.axis.spatial(8, m * 2 + i)
                vj = T.axis.spatial(6, j)
                C[vi, vj] = B[vi, vj] - D[vi]
        for i, j in T.grid(2, 6):
            with T.block("E"):
                vi = T.axis.spatial(8, m * 2 + i)
                vj = T.axis.spatial(6, j)
                E[vi, vj] = C[vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("names", [["B", "D"], ["D", "C"], ["B", "D", "C"], ["C", "D", "B"], ["B", "D", "C", "E"]])
@pytest.mark.parametrize("preserve", [True, False])
def test_blockize_of_blocks_reading_the_loop_above_keeps_the_meaning(names, preserve):
    mod = IRModule({"main": from_source(SHARED_OUTER)})
    sch = Schedule(mod, debug_mask="all")
    outer = sch.blockize(names, preserve_unit_iters=preserve)
    out = sch.mod
    check(mod, out)
    o = sch.get(outer)
    # the outer variable shared by the blocks' first variables runs over m;
    # the blocks stay in program order whatever the order given
    assert [iv.dom.extent.value for iv in o.iter_vars][0] == 4
    order = [b.name for b in sch.get_child_blocks(outer)]
    assert order == [n for n in ["B", "D", "C", "E"] if n in names]
    # the reduction keeps its init, in its own block
    if "D" in names:
        assert sch.get(sch.get_block("D")).init is not None
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == out


def test_blockize_of_blocks_then_blockize_of_the_new_block_loop():
    mod = IRModule({"main": from_source(SHARED_OUTER)})
    out = (R.blockize(["B", "D", "C", "E"]) >> R.blockize("m"))(mod)
    check(mod, out)


def test_blockize_of_blocks_at_the_root():
    src = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4,), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    with T.block("C"):
        C[0] = B[0, 0]
    for i in range(4):
        with T.block("D"):
            vi = T.axis.spatial(4, i)
            C[vi] = C[vi] + B[vi, 3]
"""
    mod = IRModule({"main": from_source(src)})
    for names in (["B", "C"], ["C", "D"], ["B", "C", "D"]):
        out = R.blockize(names)(mod)
        check(mod, out)


def _mod(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


def test_blockize_of_blocks_refusals():
    mod = _mod(SHARED_OUTER)
    with pytest.raises(R.InvalidArgumentError, match="a block is given more than once"):
        R.blockize(["B", "B"])(mod)
    with pytest.raises(R.InvalidArgumentError, match="preserve_unit_iters must be a bool"):
        R.blockize(["B", "C"], 1)(mod)
    with pytest.raises(R.UnknownBlockError):
        R.blockize(["B", "X"])(mod)
    with pytest.raises(R.BlocksNotConsecutiveError, match=r"1 other statement\(s\) stand between"):
        R.blockize(["B", "C"])(mod)
    nested = _mod("""
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for m in range(4):
        with T.block("B"):
            vm = T.axis.spatial(4, m)
            B[vm] = A[vm]
        for n in range(1):
            with T.block("C"):
                vm = T.axis.spatial(4, m)
                C[vm] = B[vm]
            with T.block("D"):
                vm = T.axis.spatial(4, m)
                C[vm] = C[vm] + B[vm]
""")
    # C's loop holds D too: C's nest is not an item of m's sequence
    with pytest.raises(R.BlocksNotSiblingsError, match="items of different sequences"):
        R.blockize(["B", "C"])(nested)
    alone = _mod(GUARDED_CONSUMER)
    with pytest.raises(R.BlocksNotSiblingsError, match="block 'C', with the loops right above it, is the only "
                                                       "statement of a IfThenElse"):
        R.blockize(["B", "C"])(alone)
    # the k-th variables read the loop above differently
    mismatch = _mod("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for m in range(2):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(8, m * 4 + i)
                B[vi] = A[vi]
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(8, i * 2 + m)
                C[vi] = A[vi]
""")
    with pytest.raises(R.SubspaceNotDivisibleError, match=r"vi_1 = i_1 \* 2 \+ m does not divide at the "
                                                            r"blocks' sequence"):
        R.blockize(["B", "C"])(mismatch)
    extents = _mod("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((2,), "float32")):
    for m in range(2):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(8, m * 4 + i)
                B[vi] = A[vi]
        for i in range(2):
            with T.block("C"):
                vi = T.axis.spatial(2, i)
                C[vi] = A[vi]
""")
    with pytest.raises(R.OuterBindingMismatchError, match=r"block 'C'.s iteration variable vi_1 reads the loops "
                                                           r"above the blocks as 0 \(extent 1"):
        R.blockize(["B", "C"])(extents)
    predicates = _mod("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for m in range(3):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(8, m * 4 + i)
                T.where(m < 2)
                B[vi] = A[vi]
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(8, m * 4 + i)
                T.where(m * 4 + i < 8)
                C[vi] = A[vi]
""")
    with pytest.raises(R.SubspaceNotDivisibleError, match="reads loops on both sides of the blocks' sequence"):
        R.blockize(["B", "C"])(predicates)
    guarded = _mod(predicates["main"].script().replace("T.where(m * 4 + i_1 < 8)", "T.where(m < 1)"))
    with pytest.raises(R.OuterBindingMismatchError, match="predicate on the loops above the blocks, m < 1, is not"):
        R.blockize(["B", "C"])(guarded)
    reduction = _mod("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), S: T.Buffer((1,), "float32")):
    for m in range(2):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(8, m * 4 + i)
                B[vi] = A[vi]
        for i in range(4):
            with T.block("S"):
                vk = T.axis.reduce(8, m * 4 + i)
                with T.init():
                    S[0] = T.float32(0)
                S[0] = S[0] + B[vk]
""")
    with pytest.raises(R.OuterBindingMismatchError):
        R.blockize(["B", "S"])(reduction)
    with pytest.raises(R.OuterReductionInitError, match=r"block 'S' reduces over the loops above the blocks "
                                                         r"\(vk\)"):
        R.blockize(["S", "S_copy"])(_mod(_two_reductions()))
    # violations report the refusal without raising, and the module is untouched
    before = mod["main"].script()
    assert [type(e) for e in R.blockize(["B", "C"]).violations(mod)] == [R.BlocksNotConsecutiveError]
    assert mod["main"].script() == before


def _two_reductions() -> str:
    return """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), S: T.Buffer((1,), "float32"), S_copy: T.Buffer((1,), "float32")):
    for m in range(2):
        for i in range(4):
            with T.block("S"):
                vk = T.axis.reduce(8, m * 4 + i)
                with T.init():
                    S[0] = T.float32(0)
                S[0] = S[0] + A[vk]
        for i in range(4):
            with T.block("S_copy"):
                vk = T.axis.reduce(8, m * 4 + i)
                with T.init():
                    S_copy[0] = T.float32(0)
                S_copy[0] = S_copy[0] + A[vk]
"""


NON_AFFINE = """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    for m, i in T.grid(2, 4):
        with T.block("B"):
            vm = T.axis.spatial(4, m * m)
            vi = T.axis.spatial(16, i * i)
            B[vm, vi] = A[vm, vi] * T.float32(2)
"""

NON_AFFINE_TWO = """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
    for m in range(2):
        for i in range(4):
            with T.block("B"):
                vm = T.axis.spatial(4, m * m)
                vi = T.axis.spatial(16, i * i)
                B[vm, vi] = A[vm, vi] * T.float32(2)
        for j in range(4):
            with T.block("C"):
                vm = T.axis.spatial(4, m * m)
                vj = T.axis.spatial(16, j * j)
                C[vm, vj] = B[vm, vj] + T.float32(1)
"""


def _realize(mod: IRModule, name: str):
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import BlockRealize

    return next(s for _, s in walk_stmts(mod["main"]) if isinstance(s, BlockRealize) and s.block.name_hint == name)


@pytest.mark.parametrize("preserve", [True, False])
def test_blockize_of_bindings_that_are_no_iteration_map_divides_them_whole(preserve):
    # as TVM's trivial division: each binding reads the loops on one side
    # only, and goes to that side whole
    mod = _mod(NON_AFFINE)
    out = R.blockize("i", preserve)(mod)
    check(mod, out)
    outer, inner = _realize(out, "B_o"), _realize(out, "B")
    assert [v.script() for v in outer.iter_values] == ["m * m", "0"]
    assert [iv.dom.extent.value for iv in outer.block.iter_vars] == [4, 1]
    assert [v.script() for v in inner.iter_values] == ["i * i"]
    assert [iv.dom.extent.value for iv in inner.block.iter_vars] == [16]
    # the list form divides them the same way, the blocks sharing vm_o
    two = _mod(NON_AFFINE_TWO)
    out = R.blockize(["B", "C"], preserve)(two)
    check(two, out)
    assert [v.script() for v in _realize(out, "outer_B_C_").iter_values] == ["m * m", "0"]


def test_blockize_refuses_a_binding_that_is_no_iteration_map_and_reads_both_sides():
    mod = _mod(NON_AFFINE.replace("T.axis.spatial(16, i * i)", "T.axis.spatial(16, m * i * 2)"))
    with pytest.raises(R.SubspaceNotDivisibleError, match=r"block 'B': its binding \(m \* m, m \* i \* 2\) is not "
                                                           r"an iteration map of the loops around it"):
        R.blockize("i")(mod)


UNDER_OPAQUE = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 4), "float32")
    B = T.match_buffer(b, (n, 4), "float32")
    C = T.match_buffer(c, (n, 4), "float32")
    for i in range(n):
        with T.block("opaque"):
            for k in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(n, i)
                    vk = T.axis.spatial(4, k)
                    B[vi, vk] = A[vi, vk] * T.float32(2)
            for k in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(n, i)
                    vk = T.axis.spatial(4, k)
                    C[vi, vk] = B[vi, vk] + T.float32(1)
"""


@pytest.mark.parametrize("target", ["k", ["B", "C"]])
def test_blockize_under_an_opaque_block_keeps_the_outer_domain(target):
    # found by the soak: the loop above the opaque block is no loop of the
    # map, so i is the whole outer binding; its variable takes the block's
    # domain (n), not the span of the loops of the map it reads (1)
    mod = _mod(UNDER_OPAQUE)
    out = R.blockize(target)(mod)
    verify(out)
    outer = _realize(out, "B_o" if target == "k" else "outer_B_C_")
    assert [iv.dom.extent.script() for iv in outer.block.iter_vars] == ["n", "1"]
    for n in (1, 3, 6):
        assert_equivalent(mod["main"], out["main"], sizes={"n": n})
        rng = np.random.default_rng(n)
        args = [rng.standard_normal((n, 4)).astype("float32") for _ in range(3)]
        expected = [a.copy() for a in args]
        interp_run(out["main"], *expected)
        tirfun.build(out, target="llvm")(*args)
        for x, y in zip(expected, args):
            assert x.tobytes() == y.tobytes()


def test_blockize_refuses_a_reduction_whose_binding_is_no_iteration_map_of_loops_from_zero():
    # found by the soak: after loop_partition, the reduction's loop starts
    # at 1, so B[0]'s init never runs in this part; an outer init would run
    # over the whole inner loop and zero B[0] again
    src = """
@T.prim_func
def main(A: T.Buffer((7, 3), "float32"), B: T.Buffer((7,), "float32")):
    for f in range(21):
        with T.block("B"):
            vi = T.axis.spatial(7, f % 7)
            vk = T.axis.reduce(3, f // 7)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""
    parted = R.loop_partition("f", [1, None])(_mod(src))
    later = [lp.name for lp in Schedule(parted).get_loops("B_f1")]
    with pytest.raises(R.SubspaceNotDivisibleError, match="it reads starts at 1, not 0"):
        R.blockize(later[-1])(parted)


ROWS_OF_16 = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n * 16, 8))
    B = T.match_buffer(b, (n * 16, 8))
    for i_0, i_1, j in T.grid(n, 16, 8):
        with T.block("B"):
            vi = T.axis.spatial(n * 16, i_0 * 16 + i_1)
            vj = T.axis.spatial(8, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


def test_blockize_under_a_loop_of_symbolic_extent():
    # vi = i_0 * 16 + i_1 over n * 16 divides at i_1: the outer variable
    # spans n, the extent of the loop it reads, as TVM's subspace division
    # finds it with a symbolic loop
    mod = _mod(ROWS_OF_16)
    out = R.blockize(R.LoopRef("i_1"))(mod)
    expected = from_source("""
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n * 16, 8))
    B = T.match_buffer(b, (n * 16, 8))
    for i_0 in range(n):
        with T.block("B_o"):
            vi_o = T.axis.spatial(n, i_0)
            vj_o = T.axis.spatial(1, 0)
            T.reads(A[vi_o * 16:vi_o * 16 + 16, 0:8])
            T.writes(B[vi_o * 16:vi_o * 16 + 16, 0:8])
            for i_1, j in T.grid(16, 8):
                with T.block("B"):
                    vi_i, vj_i = T.axis.remap("SS", [i_1, j])
                    B[vi_o * 16 + vi_i, vj_i] = A[vi_o * 16 + vi_i, vj_i] * T.float32(2)
""")
    assert_structural_equal(out["main"], expected)
    verify(out)
    x = np.random.default_rng(3).standard_normal((48, 8)).astype("float32")
    want, got, built = (np.zeros_like(x) for _ in range(3))
    interp_run(mod["main"], x, want, 3)
    interp_run(out["main"], x, got, 3)
    tirfun.build(out)(x, built, 3)
    assert want.tobytes() == got.tobytes() == built.tobytes()


def test_accesses_are_substituted_and_tidied_in_one_pass_as_in_two():
    # blockize substitutes each iteration variable and tidies the indices
    # in one walk: the same as substituting, then tidying, for sums that
    # are simple already, those that are not (a division of a division, a
    # sum out of order) and a buffer whose shape reads a substituted variable
    from tirfun.nodes import Buffer, BufferLoad, BufferRegion, BufferStore, FloorDiv, FloorMod, IntImm, Range, Var
    from tirfun.rewrites.exprs import substitute
    from tirfun.rewrites.index_maps import tidy_accesses

    n, vi, vo, vii = Var("n"), Var("vi"), Var("vo"), Var("vii")
    A = Buffer("A", [64, 64], "float32")
    S = Buffer("S", [n, 4], "float32")  # its shape reads n
    nodes = [
        BufferStore(A, BufferLoad(A, [vi, FloorMod(vi, 8)]) + BufferLoad(S, [n - 1, 0]), [FloorDiv(vi, 8), vi]),
        BufferRegion(A, [Range(vi, 1), Range(vi * 2 + 1, FloorDiv(vi, 4) + 1)]),
        BufferRegion(S, [Range(0, n), Range(0, 4)]),
    ]
    substitutions = [
        {vi: vo * 16 + vii},
        {vi: vii + vo * 16},  # not the normal form: tidied
        {vi: IntImm("int32", 0), n: vo * 4},
        {vi: FloorDiv(vo, 4) * 4 + FloorMod(vo, 4)},  # a division pair that folds
        {},
    ]
    for node in nodes:
        for subst in substitutions:
            assert tidy_accesses(node, subst) == tidy_accesses(substitute(node, subst)), (node, subst)


# an init over variables all declared spatial: it runs at every instance
SUM_OVER_SPATIAL = """
@T.prim_func
def main(A: T.Buffer((4, 4, 8), "float32"), B: T.Buffer((1,), "float32")):
    for i, j, k in T.grid(4, 4, 8):
        with T.block("compute"):
            vi, vj, vk = T.axis.remap("{kinds}", [i, j, k])
            with T.init():
                B[0] = T.float32(0.0)
            B[0] = B[0] + A[vi, vj, vk]
"""


@pytest.mark.parametrize("loop, var", [("i", "vi"), ("j", "vj"), ("k", "vk")])
def test_blockize_refuses_to_lift_an_init_that_runs_at_every_value_of_a_spatial_variable(loop, var):
    # found by fuzzing (through tensorize): the original keeps only the last
    # element; with the init lifted (as TVM does) the block sums them all
    mod = IRModule({"main": from_source(SUM_OVER_SPATIAL.format(kinds="SSS"))})
    with pytest.raises(R.RepeatedReductionError, match=rf"block 'compute': its init runs at every value of the "
                                                        rf"spatial variable {var}, which the block's writes do "
                                                        "not depend on"):
        R.blockize(loop)(mod)
    # declared as the reduction it is, it blockizes
    mod = IRModule({"main": from_source(SUM_OVER_SPATIAL.format(kinds="RRR"))})
    out = R.blockize(loop)(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_blockize_refuses_an_init_indexed_by_a_reduction_variable_of_the_inner_side():
    src = SUM_OVER_SPATIAL.format(kinds="SRS").replace("(1,)", "(4,)").replace("B[0]", "B[vj]")
    mod = IRModule({"main": from_source(src)})
    with pytest.raises(R.NotReductionBlockError, match=r"block 'compute': its reduction variable vj indexes what "
                                                        r"it writes, and the init lifted into the new block would "
                                                        r"have no value of it"):
        R.blockize("j")(mod)


# a row sum whose row axis is declared opaque (TVM's rolling-buffer tests)
OPAQUE_ROWS = """
@T.prim_func
def main(A: T.Buffer((8, 3), "int32"), C: T.Buffer((8,), "int32")):
    for i, k in T.grid(8, 3):
        with T.block("C"):
            vi = T.axis.{kind}(8, i)
            vk = T.axis.reduce(3, k)
            with T.init():
                C[vi] = 0
            C[vi] = C[vi] + A[vi, vk]
"""


@pytest.mark.parametrize("kind", ["opaque", "spatial"])
def test_blockize_lifts_an_init_indexed_by_an_inner_opaque_variable_over_its_values(kind):
    # found by running TVM's test programs under random schedules: TVM's
    # outer init loops over the inner data-parallel variables only, and an
    # init indexed by an opaque one was left naming a variable nothing binds
    mod = IRModule({"main": from_source(OPAQUE_ROWS.format(kind=kind))})
    out = (R.split("i", [2, 4]) >> R.blockize("i_1"))(mod)
    verify(out)
    init = out["main"].body.block.body.body.block.init
    assert "for i_1" in init.script() and "C_init" in init.script()
    assert_equivalent(mod["main"], out["main"])


def test_blockize_refuses_to_lift_an_init_that_runs_at_every_value_of_an_opaque_variable():
    src = SUM_OVER_SPATIAL.format(kinds="ROR").replace('vi, vj, vk = T.axis.remap("ROR", [i, j, k])',
                                                         "vi = T.axis.reduce(4, i)\n"
                                                         "            vj = T.axis.opaque(4, j)\n"
                                                         "            vk = T.axis.reduce(8, k)")
    mod = IRModule({"main": from_source(src)})
    with pytest.raises(R.RepeatedReductionError, match=r"block 'compute': its init runs at every value of the "
                                                        r"opaque variable vj"):
        R.blockize("j")(mod)


def test_blockize_declares_a_load_in_the_range_of_a_loop_it_moves_inside():
    # found by fuzzing: the new block left B out of its reads, so
    # reverse_compute_inline of B's other reader dropped B's allocation
    mod = IRModule({"main": from_source(LOOSE_READ)})
    out = R.blockize("k")(mod)
    assert "T.reads(A[0:4], B[1])" in out.script()
    verify(out, strict=True)
    with pytest.raises(R.NonSingleProducerError, match="block 'D_o' also uses B"):
        R.reverse_compute_inline("C")(out)


def test_blockize_of_blocks_refuses_an_opaque_one_naming_a_loop_above_them():
    # loop_partition's common block names i0_0 in its regions and its
    # blocks' bindings; T_add gives the new block an iteration variable, so
    # inside it i0_0 would be a loop outside the block
    src = """
@T.prim_func
def main(x: T.Buffer((4,), "float32"), T_repeat: T.Buffer((64,), "float32")):
    T_add = T.alloc_buffer((4,))
    for i0_0 in range(8):
        with T.block("T_add"):
            ax0 = T.axis.spatial(4, i0_0 // 2)
            T.reads(x[ax0])
            T.writes(T_add[ax0])
            T_add[ax0] = x[ax0] + T.float32(1.0)
        for i0_1 in range(8):
            with T.block("T_repeat"):
                ax0_1 = T.axis.spatial(64, i0_0 * 8 + i0_1)
                T.reads(T_add[ax0_1 // 16])
                T.writes(T_repeat[ax0_1])
                T_repeat[ax0_1] = T_add[ax0_1 // 16]
"""
    sch = Schedule(IRModule({"main": from_source(src)}))
    sch.loop_partition("i0_1", [4])
    with pytest.raises(R.SubspaceNotDivisibleError) as info:
        sch.blockize(["T_add", "T_repeat_i0_1_common"])
    assert ("block 'T_repeat_i0_1_common' names the loop 'i0_0' above the blocks in its body or regions, not "
            "through an iteration variable; inside the new block it would name a loop outside it") in str(info.value)


def test_blockize_of_a_predicated_split_declares_regions_inside_the_buffer():
    # found by the fuzzer: split 8 by 3 relaxes to B[0:9]; a cache_inplace
    # of the new block then copied element 8 of an 8-element buffer
    mod = IRModule({"main": from_source("""
@T.prim_func
def main(B: T.Buffer((8,), "float32")):
    for k in range(8):
        with T.block("B3"):
            vk = T.axis.spatial(8, k)
            B[vk] = B[vk] * T.float32(2)
""")})
    out = (R.split("k", [None, 3]) >> R.blockize("k_0"))(mod)
    outer = next(b for b in _all_blocks(out) if b.name_hint == "B3_o")
    assert outer.reads[0].script() == "B[0:8]" and outer.writes[0].script() == "B[0:8]"
    cached = (R.add_unit_loop("B3_o") >> R.cache_inplace("B3_o", 0, "shared"))(out)
    verify(cached)
    assert_equivalent(mod["main"], cached["main"], trials=3)


def _all_blocks(mod):
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import Block

    return [s for _, s in walk_stmts(mod["main"]) if isinstance(s, Block)]


# TVM's all-reduce test program: every extent symbolic
SYMBOLIC_REDUCE = """
@T.prim_func
def main(a: T.handle, b: T.handle, d1: T.int32, d2: T.int32, d3: T.int32):
    A = T.match_buffer(a, [1, d1, d2, d3])
    B = T.match_buffer(b, [1, d1, d2])
    for i, j, k, l in T.grid(1, d1, d2, d3):
        with T.block("reduce"):
            vi, vj, vk, vl = T.axis.remap("SSSR", [i, j, k, l])
            with T.init():
                B[vi, vj, vk] = T.float32(0)
            B[vi, vj, vk] = B[vi, vj, vk] + A[vi, vj, vk, vl]
"""


@pytest.mark.parametrize("steps", [
    [R.blockize("j")],
    [R.blockize("k")],
    [R.reorder("k", "j"), R.blockize("k")],
    [R.split("k", [None, 8]), R.blockize("k_0")],
], ids=["j", "k", "reordered", "split"])
def test_blockize_over_symbolic_extents_keeps_the_meaning_also_where_a_loop_is_empty(steps):
    # the inner loops are symbolic: the inner block takes its bindings
    # whole over their domains, as TVM divides them; where the reduction
    # loop is empty (d3 == 0) the original never initialises B, and the
    # outer block's init runs under 0 < d3 (TVM's zeroes B)
    mod = IRModule({"main": from_source(SYMBOLIC_REDUCE)})
    out = R.Pipeline(steps)(mod)
    verify(out)
    text = out["main"].script()
    assert "T.where(0 < d3" in text.split('T.block("reduce_init")')[1].split("T.block")[0], text
    for d1, d2, d3 in [(2, 3, 4), (2, 0, 3), (3, 5, 0), (0, 2, 2), (1, 9, 2)]:
        rng = np.random.default_rng(d1 * 100 + d2 * 10 + d3)
        a = rng.random((1, d1, d2, d3), dtype=np.float32)
        b = rng.random((1, d1, d2), dtype=np.float32)
        want, got, built = b.copy(), b.copy(), b.copy()
        interp_run(mod, a, want, d1, d2, d3)
        interp_run(out, a, got, d1, d2, d3)
        np.testing.assert_array_equal(got, want)
        tirfun.build(out)(a, built, d1, d2, d3)
        np.testing.assert_array_equal(built, want)


def test_blockize_of_a_triangle_runs_the_init_where_the_row_has_columns():
    mod = IRModule({"main": from_source("""
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        for l in range(i):
            with T.block("B"):
                vb = T.axis.spatial(4, i)
                vl = T.axis.reduce(4, l)
                with T.init():
                    B[vb] = T.float32(0)
                B[vb] = B[vb] + A[vb, vl]
""")})
    out = R.blockize("i")(mod)
    assert "T.where(0 < i_1)" in out["main"].script()
    a = np.random.default_rng(0).random((4, 4), dtype=np.float32)
    want, got = np.full(4, 9, "float32"), np.full(4, 9, "float32")
    interp_run(mod, a, want)
    interp_run(out, a, got)
    np.testing.assert_array_equal(got, want)
    assert got[0] == 9


def test_blockize_under_a_fuse_of_symbolic_loops_keeps_the_fused_bindings_outside():
    # i_j_fused // k and i_j_fused % k read only the loop above the cut:
    # the outer block takes them whole, as TVM divides them
    mod = IRModule({"main": from_source("""
@T.prim_func
def main(x: T.handle, y: T.handle, z: T.handle):
    m, n, k = T.int64(), T.int64(), T.int64()
    A = T.match_buffer(x, (m, n))
    B = T.match_buffer(y, (n, k))
    C = T.match_buffer(z, (m, k))
    for i, j, r in T.grid(m, k, n):
        with T.block("matmul"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
""")})
    out = (R.fuse("i", "j") >> R.blockize("r"))(mod)
    verify(out)
    text = out["main"].script()
    assert "vi_o = T.axis.spatial(m, i_j_fused // k)" in text, text
    for m, n, k in [(2, 3, 4), (3, 0, 2), (1, 2, 1)]:
        rng = np.random.default_rng(m * 100 + n * 10 + k)
        a, b = rng.random((m, n), dtype=np.float32), rng.random((n, k), dtype=np.float32)
        c = rng.random((m, k), dtype=np.float32)
        want, got = c.copy(), c.copy()
        interp_run(mod, a, b, want)
        interp_run(out, a, b, got)
        np.testing.assert_array_equal(got, want)


SYMBOLIC_WEIGHT = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    m = T.int32()
    A = T.match_buffer(a, (m * 8, 4), "float32")
    B = T.match_buffer(b, (m * 8,), "float32")
    C = T.match_buffer(c, (m,), "float32")  # gives m its value
    for i_0, i_1, k in T.grid(8, m, 4):
        with T.block("B"):
            vi = T.axis.spatial(m * 8, i_0 * m + i_1)
            vk = T.axis.reduce(4, k)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


@pytest.mark.parametrize("m", [0, 1, 3])
def test_blockize_divides_a_binding_of_symbolic_weight_between_its_digits(m):
    # i_0 * m + i_1 cut between i_0 and i_1: the outer block takes i_0, the
    # inner one i_1 over range(m), and vi = vi_o * m + vi_i (TVM divides a
    # dense mixed radix of symbolic weights alike)
    mod = IRModule({"main": from_source(SYMBOLIC_WEIGHT)})
    after = R.blockize("i_1")(mod)
    verify(after)
    text = after["main"].script()
    assert 'vi_o = T.axis.spatial(8, i_0)' in text, text
    assert 'vi_i, vk_i = T.axis.remap("SR", [i_1, k])' in text, text
    assert 'B[vi_o * m + vi_i]' in text, text
    assert_structural_equal(from_source(text), after["main"])
    sizes = {"m": m}
    assert_equivalent(mod["main"], after["main"], sizes=sizes)
    rng = np.random.default_rng(m)
    A = rng.standard_normal((8 * m, 4)).astype("float32")
    expected, got, C = np.zeros(8 * m, "float32"), np.zeros(8 * m, "float32"), np.zeros(m, "float32")
    interp_run(after["main"], A, expected, C)
    tirfun.build(after, target="llvm")(A, got, C)
    assert expected.tobytes() == got.tobytes()
    # the whole nest, and the reduction alone, are blocks too
    for loop in ("i_0", "k"):
        assert_equivalent(mod["main"], R.blockize(loop)(mod)["main"], sizes=sizes)


def test_blockize_refuses_a_symbolic_weight_that_is_not_the_extent_below_it():
    source = SYMBOLIC_WEIGHT.replace("i_0 * m + i_1", "i_0 * (m + 1) + i_1").replace("(m * 8", "(m * 9")
    mod = IRModule({"main": from_source(source)})
    with pytest.raises(R.SubspaceNotDivisibleError, match="not an iteration map"):
        R.blockize("i_1")(mod)


FUSED_SPLIT_PAST_THE_EXTENT = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    m, n = T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m, n), "float32")
    for f_0, f_1 in T.grid(8, (m * n + 7) // 8):
        with T.block("B"):
            vi = T.axis.spatial(m, (f_0 * ((m * n + 7) // 8) + f_1) // n)
            vj = T.axis.spatial(n, (f_0 * ((m * n + 7) // 8) + f_1) % n)
            T.where(f_0 * ((m * n + 7) // 8) + f_1 < m * n)
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("sizes", [{"m": 3, "n": 5}, {"m": 1, "n": 1}, {"m": 0, "n": 4}, {"m": 9, "n": 2}])
def test_blockize_of_a_fuse_split_into_parts_reads_the_predicate_as_the_fused_extent(sizes):
    # fuse of range(m) and range(n), split into 8 parts: the predicate
    # bounds the fused part at m * n, over which // n and % n are a map
    # (TVM's iterator map reads it so); the block takes the nest whole
    mod = IRModule({"main": from_source(FUSED_SPLIT_PAST_THE_EXTENT)})
    after = R.blockize("f_0")(mod)
    verify(after)
    assert "B_o" in after["main"].script()
    assert_equivalent(mod["main"], after["main"], sizes=sizes)
    # where the cut falls inside the bounded part, the binding does not divide
    with pytest.raises(R.SubspaceNotDivisibleError):
        R.blockize("f_1")(mod)


def test_blockize_refuses_a_binding_that_reads_a_loop_above_an_opaque_block_around_it():
    # loop_partition wraps each part in a block of its own; the part's
    # binding t0 * 2 + p00 reads t0, above that block. Dividing it left t0
    # in the inner block's binding, under the new block, where t0 is not
    # visible (the result failed block isolation)
    src = """
@T.prim_func
def main(A: T.Buffer((5,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((5,))
    for t0 in range(2):
        for p0 in range(3):
            with T.block("B"):
                b0 = T.axis.spatial(5, t0 * 2 + p0)
                B[b0] = A[b0] * T.float32(2.0)
        for c0 in range(2):
            with T.block("C"):
                o0 = T.axis.spatial(4, t0 * 2 + c0)
                T.reads(B[o0:o0 + 2])
                C[o0] = B[o0] + B[o0 + 1]
"""
    mod = R.loop_partition("p0", [2, None], True)(IRModule({"main": from_source(src)}))
    with pytest.raises(R.SubspaceNotDivisibleError, match="the binding b0_1 = t0 \\* 2 \\+ p00 does not divide"):
        R.blockize("p00", False)(mod)


def test_blockize_divides_a_binding_over_the_part_its_predicate_bounds():
    # a split of 4 columns by 8 leaves j_2_0 in range(8) under j_2_0 + j_2_1 < 4:
    # TVM's iterator map reads the predicate as a loop of 4, so the inner
    # block takes 4 columns and the outer one the tiles above them
    mod = IRModule({"main": from_source(MATMUL)})
    tiled = (R.split("j", [None, 4]) >> R.split("j_1", [8, None]))(mod)
    after = R.blockize("j_1_0")(tiled)
    check(tiled, after)
    outer = _realize(after, "C_o")
    assert [iv.dom.extent.value for iv in outer.block.iter_vars] == [16, 4, 1]
    assert [v.script() for v in outer.iter_values] == ["i", "j_0", "0"]
    inner = _realize(after, "C")
    assert [iv.dom.extent.value for iv in inner.block.iter_vars] == [4, 16]
    assert inner.predicate.script() == "T.Mul(j_1_0, 1) + j_1_1 < 4"


def test_blockize_splits_a_predicate_whose_conditions_each_read_one_side():
    # each condition guards the side whose loops it reads (TVM divides them so)
    src = """
@T.prim_func
def main(A: T.Buffer((6, 7), "float32"), B: T.Buffer((6, 7), "float32")):
    for i_0, i_1, j_0, j_1 in T.grid(2, 4, 2, 4):
        with T.block("B"):
            vi = T.axis.spatial(6, i_0 * 4 + i_1)
            vj = T.axis.spatial(7, j_0 * 4 + j_1)
            T.where(i_0 * 4 + i_1 < 6 and j_0 * 4 + j_1 < 7)
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""
    mod = _mod(src)
    after = R.blockize("j_0")(mod)
    check(mod, after)
    assert _realize(after, "B_o").predicate.script() == "i_0 * 4 + i_1 < 6"
    assert _realize(after, "B").predicate.script() == "j_0 * 4 + j_1 < 7"
    # a condition that reads both sides cannot be split
    both = _mod(src.replace("i_0 * 4 + i_1 < 6 and j_0 * 4 + j_1 < 7", "i_0 * 4 + j_1 < 7"))
    with pytest.raises(R.SubspaceNotDivisibleError, match="reads loops on both sides of loop 'j_0'"):
        R.blockize("j_0")(both)


def test_blockize_keeps_the_start_of_a_domain_that_does_not_start_at_zero():
    # TVM gives the new variables the extent alone (k_i = T.axis.reduce(32,
    # k0) bound to 32..63) and declares A[i, j, 0:32]; the domain keeps its
    # start, and the regions what the block reads
    src = """
@T.prim_func
def main(A: T.Buffer((8, 8, 64), "float32"), B: T.Buffer((8,), "float32")):
    for i0, j0 in T.grid(8, 8):
        for k0 in T.serial(32, 64):
            with T.block("B"):
                i, j, k = T.axis.remap("SRR", [i0, j0, k0])
                with T.init():
                    B[i] = T.float32(0)
                B[i] = B[i] + A[i, j, k]
"""
    mod = _mod(src)
    after = R.blockize("k0")(mod)
    check(mod, after)
    inner = _realize(after, "B")
    (k,) = inner.block.iter_vars
    assert (k.dom.min.value, k.dom.extent.value) == (32, 32)
    assert "A[i_o, j_o, 32:64]" in after["main"].script()
    # a spatial loop of a later part of a partition, taken by the outer block
    parted = R.loop_partition("i0", [3, None])(mod)
    later = [lp.name for lp in Schedule(parted).get_loops("B_i01")]
    again = R.blockize(later[1])(parted)
    check(parted, again)


def test_blockize_runs_a_lifted_init_under_a_loop_of_one_iteration_its_predicate_reads():
    # TVM's test_loop_aware_initial_value after a split into [4, None, 4]:
    # the predicate reads i_1, of one iteration, which the init's bindings do not
    src = """
@T.prim_func
def main(a: T.Buffer((5, 5), "float32"), b: T.Buffer((5,), "float32"), s: T.Buffer((5,), "float32")):
    for i, ax in T.grid(5, 5):
        with T.block("s"):
            v_i, v_ax = T.axis.remap("SR", [i, ax])
            with T.init():
                s[v_i] = b[v_i]
            s[v_i] = s[v_i] + a[v_i, v_ax]
"""
    mod = R.split("i", [4, None, 4])(_mod(src))
    after = R.blockize("i_0")(mod)
    check(mod, after)
    assert "for i_0_1, i_1_1, i_2_1 in T.grid(4, 1, 4):" in after["main"].script()


GEMM_DYN = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    N, K, M = T.int32(), T.int32(), T.int32()
    A = T.match_buffer(a, (N, K))
    B = T.match_buffer(b, (K, M))
    C = T.match_buffer(c, (N, M))
    for i, j, k in T.grid(N, M, K):
        with T.block("gemm"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


@pytest.mark.parametrize("k_size", [0, 3, 16])
def test_blockize_after_pad_einsum_guards_the_lifted_init_by_the_first_reduction_step(k_size):
    # pad_einsum leaves ``T.where(k < K)`` on the padded reduction; the outer
    # init runs where that holds at k's first iteration (0 < K): at K = 0
    # the original init never runs, and neither does the new one
    padded = R.pad_einsum("gemm", [4, 8, 16])(_mod(GEMM_DYN))
    after = R.blockize("j")(padded)
    verify(after)
    assert "0 < K" in after["main"].script()
    assert_equivalent(padded["main"], after["main"], sizes={"N": 3, "M": 5, "K": k_size})
    # a condition on the reduction that does not hold at its first step alone
    # says nothing of when the init runs
    later = _mod(padded["main"].script().replace("T.where(k < K)", "T.where(K - k < 4)"))
    with pytest.raises(R.SubspaceNotDivisibleError, match="outer block's init does not run"):
        R.blockize("j")(later)


def test_blockize_gives_a_constant_offset_to_the_inner_variable():
    # TVM's scatter test after a split: vi = i_0 * 2 + i_1 + 8; TVM binds the
    # inner variable to i_1 + 8 over a domain of 2 and declares A from -8
    src = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i_0, i_1 in T.grid(4, 2):
        with T.block("B"):
            vi = T.axis.spatial(16, i_0 * 2 + i_1 + 8)
            B[vi] = A[vi - 8]
"""
    mod = _mod(src)
    after = R.blockize("i_1")(mod)
    check(mod, after)
    (vi,) = _realize(after, "B").block.iter_vars
    assert (vi.dom.min.value, vi.dom.extent.value) == (8, 2)
    outer = _realize(after, "B_o").block
    assert [str(r.region[0].min) for r in outer.reads + outer.writes] == ["vi_o * 2", "vi_o * 2 + 8"]


def test_blockize_over_a_fuse_of_a_constant_split_and_a_symbolic_loop():
    # TVM's multiply over (a, b, c, d) after split(i2, [None, 4]) and
    # fuse(i2_1, i3): f // d takes 4 values under i2_0 * 4
    src = """
@T.prim_func
def main(x: T.handle, y: T.handle):
    a, c, d = T.int64(), T.int64(), T.int64()
    X = T.match_buffer(x, (a, c, d))
    Y = T.match_buffer(y, (a, c, d))
    for i0, i2, i3 in T.grid(a, c, d):
        with T.block("Y"):
            v0, v2, v3 = T.axis.remap("SSS", [i0, i2, i3])
            Y[v0, v2, v3] = X[v0, v2, v3] * T.float32(3)
"""
    mod = (R.split("i2", [None, 4]) >> R.fuse("i2_1", "i3"))(_mod(src))
    for loop in ("i0", "i2_0"):
        after = R.blockize(loop)(mod)
        verify(after)
        for sizes in ({"a": 2, "c": 5, "d": 3}, {"a": 1, "c": 8, "d": 1}, {"a": 2, "c": 0, "d": 2}):
            assert_equivalent(mod["main"], after["main"], sizes=sizes)
    # the predicate's bounded part spans the cut there, as in TVM
    with pytest.raises(R.SubspaceNotDivisibleError, match="reads loops on both sides"):
        R.blockize("i2_1_i3_fused")(mod)


@pytest.mark.parametrize("n", [0, 1, 5, 8])
def test_blockize_of_a_sum_split_in_four_and_fused_with_its_reduction(n):
    # TVM's rms_norm over a dynamic length: split(i, [4, None]), fuse(i_1,
    # k): f // 16 takes (n + 3) // 4 values under i_0's weight of as many
    src = """
@T.prim_func
def main(a: T.handle, r: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, T.int64(16)))
    S = T.match_buffer(r, (n,))
    for i, k in T.grid(n, T.int64(16)):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk] * A[vi, vk]
"""
    mod = (R.split("i", [4, None]) >> R.fuse("i_1", "k"))(_mod(src))
    after = R.blockize("i_0")(mod)
    verify(after)
    assert_equivalent(mod["main"], after["main"], sizes={"n": n})


def test_blockize_keeps_an_offset_over_a_bounded_part_inside_the_domain():
    # the part j_0 + j_1 < 4 of a split past the extent, 3 above it: an
    # inner variable from 3 over the 8 values of j_0 would pass the domain
    # (and the buffer); the inner block takes the binding whole over its
    # domain instead
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for j in range(4):
        with T.block("B"):
            vj = T.axis.spatial(8, j + 3)
            B[vj] = A[vj] * T.float32(2)
"""
    mod = R.split("j", [8, None])(_mod(src))
    after = R.blockize("j_0")(mod)
    check(mod, after)
    (vj,) = _realize(after, "B").block.iter_vars
    assert (vj.dom.min.value, vj.dom.extent.value) == (0, 8)
    assert "T.writes(B[0:8])" in after["main"].script()  # its whole domain, inside the buffer


# the second stage of an rfactor over a run-time n, its loops (32, n, 128)
# fused into one: its bindings read digits of f by 128 and by n
SYMBOLIC_FUSE = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    C_rf = T.match_buffer(a, (128, 32, 1, n))
    C = T.match_buffer(c, (32, 1, n))
    for f in range(n * 4096):
        with T.block("NT_matmul"):
            vax2 = T.axis.reduce(128, f % 128)
            v0 = T.axis.spatial(32, f // 128 // n)
            v1 = T.axis.spatial(n, f // 128 % n)
            with T.init():
                C[v0, 0, v1] = T.float32(0.0)
            C[v0, 0, v1] = C[v0, 0, v1] + C_rf[vax2, v0, 0, v1]
"""


@pytest.mark.parametrize("rewrite", [R.blockize("f"), R.decompose_reduction("NT_matmul", "f")],
                         ids=["blockize", "decompose_reduction"])
def test_digits_of_a_fuse_by_run_time_sizes_are_an_iteration_map(rewrite):
    # f // 128 // n, f // 128 % n and f % 128 of f in range(n * 4096) tile
    # f, as TVM's iterator maps read them: the block is a reduction block
    # with an affine binding, and no iteration of f repeats an instance
    mod = IRModule({"main": from_source(SYMBOLIC_FUSE)})
    out = rewrite(mod)
    verify(out)
    for n in (1, 3):
        assert_equivalent(mod["main"], out["main"], sizes={"n": n}, trials=1)
    # f // 64 % n beside f % 128: digits that overlap, no iteration map
    bad = IRModule({"main": from_source(SYMBOLIC_FUSE.replace("f // 128 % n", "f // 64 % n"))})
    with pytest.raises(ScheduleError, match="not an iteration map|not affine"):
        rewrite(bad)
