"""decompose_reduction and rfactor: results, TVM's corner cases done right,
and every ScheduleError with its message."""

import copy

import attrs
import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.traversal import blocks
from tirfun.analysis.verify import verify
from tirfun.interp import run
from tirfun.nodes import IRModule
from tirfun.rewrites.index import build_index, index_of
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from corner_sources import SPATIAL_INIT, WRITTEN_LATER


def mod_of(source: str) -> IRModule:
    return IRModule({"main": from_source(source)})


def applied(rewrite, mod: IRModule) -> IRModule:
    """Apply ``rewrite``; the result verifies, its index is right, it prints
    and parses back, and the input is unchanged."""
    snapshot = copy.deepcopy(mod)
    out = rewrite(mod)
    verify(out)
    assert mod == snapshot
    assert index_of(out["main"]) == build_index(out["main"])
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    return out


ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32")):
    for i, k in T.grid(5, 10):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
"""

# the program compute_at leaves when it puts the row sum C under D's loop j:
# j repeats the whole reduction, and C's init runs again for every j
REPEATED = """
@T.prim_func
def main(A: T.Buffer((4, 8), "int32"), D: T.Buffer((4, 3), "int32")):
    C = T.alloc_buffer((4,), "int32")
    for i, j in T.grid(4, 3):
        for k in range(8):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = 0
                C[vi] = C[vi] + A[vi, vk]
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi] * 2
"""


# ------------------------------------------------------------ decompose_reduction

def test_decompose_reduction_at_the_reduction_loop():
    mod = mod_of(ROW_SUM)
    out = applied(R.decompose_reduction("B", "k"), mod)
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32")):
    for i in range(5):
        with T.block("B_init"):
            vi = T.axis.spatial(5, i)
            T.reads()
            T.writes(B[vi])
            B[vi] = 0
        for k in range(10):
            with T.block("B_update"):
                vi_1, vk = T.axis.remap("SR", [i, k])
                T.reads(B[vi_1], A[vi_1, vk])
                T.writes(B[vi_1])
                B[vi_1] = B[vi_1] + A[vi_1, vk]
""")
    assert_structural_equal(out["main"], expected)
    assert_equivalent(mod["main"], out["main"])


def test_decompose_reduction_above_spatial_loops_recreates_them():
    mod = mod_of(ROW_SUM)
    out = applied(R.decompose_reduction("B", "i"), mod)
    text = out["main"].script()
    assert "for i_init in range(5):" in text
    assert 'T.block("B_init")' in text and 'T.block("B_update")' in text
    assert_equivalent(mod["main"], out["main"])


def test_decompose_reduction_keeps_the_predicate_of_a_split_spatial_loop():
    sch = Schedule(mod_of(ROW_SUM))
    i, k = sch.get_loops("B")
    sch.split(i, [None, 2])
    k0, _ = sch.split(k, [None, 4])
    init = sch.decompose_reduction("B", k0)
    assert init == R.BlockRef("B_init", "main")
    verify(sch.mod)
    init_realize = sch.get_sref(init).stmt
    assert init_realize.name_hint == "B_init"
    text = sch.mod["main"].script()
    assert "T.where(i_0 * 2 + i_1 < 5)" in text.split('T.block("B_init")')[1].split("T.block")[0]
    assert_equivalent(mod_of(ROW_SUM)["main"], sch.mod["main"])


SYMBOLIC_MATMUL = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (8, n))
    B = T.match_buffer(b, (n, 8))
    C = T.match_buffer(c, (8, 8))
    for i, j, k in T.grid(8, 8, n):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

TRIANGLE = """
@T.prim_func
def main(A: T.Buffer((6, 6), "float32"), S: T.Buffer((6,), "float32")):
    for i in range(6):
        with T.block("row"):
            vi = T.axis.spatial(6, i)
            for k in range(vi):
                with T.block("S"):
                    vs = T.axis.spatial(6, vi)
                    vk = T.axis.reduce(6, k)
                    with T.init():
                        S[vs] = T.float32(0)
                    S[vs] = S[vs] + A[vs, vk]
"""


@pytest.mark.parametrize("loop", ["i", "j", "k"])
def test_decompose_reduction_over_a_symbolic_extent_runs_the_init_only_where_the_loop_runs(loop):
    # with n == 0 the block, and so its init, never runs: C keeps what it
    # held; the init before the loop runs under 0 < n (TVM's zeroes C)
    mod = mod_of(SYMBOLIC_MATMUL)
    out = applied(R.decompose_reduction("C", loop), mod)
    verify(out)
    text = out["main"].script()
    assert "T.where(0 < n)" in text.split('T.block("C_init")')[1].split("T.block")[0]
    for n in (0, 1, 3):
        rng = np.random.default_rng(n)
        a, b = rng.random((8, n), dtype=np.float32), rng.random((n, 8), dtype=np.float32)
        c = rng.random((8, 8), dtype=np.float32)
        want, got, built = c.copy(), c.copy(), c.copy()
        run(mod, a, b, want, n)
        run(out, a, b, got, n)
        np.testing.assert_array_equal(got, want)
        tirfun.build(out)(a, b, built, n)
        np.testing.assert_array_equal(built, want)


def test_decompose_reduction_of_a_triangle_leaves_the_empty_row_alone():
    # row 0 sums nothing: the original never initialises S[0]
    mod = mod_of(TRIANGLE)
    out = applied(R.decompose_reduction("S", "k"), mod)
    text = out["main"].script()
    assert "T.where(0 < vi)" in text, text
    a = np.arange(36, dtype="float32").reshape(6, 6)
    s0 = np.full(6, 7, "float32")
    want, got = s0.copy(), s0.copy()
    run(mod, a, want)
    run(out, a, got)
    np.testing.assert_array_equal(got, want)
    assert got[0] == 7


def test_decompose_reduction_keeps_the_init_inside_a_loop_that_repeats_the_reduction():
    mod = mod_of(REPEATED)
    for loop in ("i", "j", "k"):
        out = applied(R.decompose_reduction("C", loop), mod)
        assert_equivalent(mod["main"], out["main"])
        # the init runs under j, once per repetition, right before k
        body = out["main"].body.block.body.body.body
        assert body.seq[0].block.name_hint == "C_init"
        assert body.seq[1].loop_var.name == "k"


def test_decompose_reduction_under_a_fused_loop_that_repeats_the_reduction():
    # the fused loop feeds the row index but runs each row three times
    mod = R.fuse("i", "j", preserve_unit_iters=False)(mod_of(REPEATED))
    out = applied(R.decompose_reduction("C", "i_j_fused"), mod)
    assert_equivalent(mod["main"], out["main"])
    fused = out["main"].body.block.body
    assert fused.loop_var.name == "i_j_fused" and fused.body.seq[0].block.name_hint == "C_init"


def test_decompose_reduction_keeps_the_init_below_a_spatial_variable_the_output_does_not_follow():
    # found by the fuzzer: vi is spatial but C is indexed by vj alone, so
    # the original re-initialises C[vj] at each vi (C = 2 * A[n - 1, :]);
    # the init went above loop i and the sum ran over every row
    mod = mod_of(SPATIAL_INIT)
    out = applied(R.decompose_reduction("C", "i"), mod)
    assert_equivalent(mod["main"], out["main"])
    # the init runs under i, before j
    body = out["main"].body.block.body.seq[0].body
    assert body.seq[0].body.block.name_hint == "C_init"


def test_decompose_reduction_of_a_block_with_blocks_inside():
    # a blockized reduction: the blocks inside write what the outer block
    # reduces into, and are its own body, not blocks the init could disturb
    source = """
@T.prim_func
def main(A: T.Buffer((8, 4, 16), "int32"), B: T.Buffer((8, 4), "int32")):
    for i0, i2_0 in T.grid(8, 4):
        with T.block("blockized_B"):
            io, ko = T.axis.remap("SR", [i0, i2_0])
            with T.init():
                for i1 in range(4):
                    with T.block("B_init"):
                        ii_init = T.axis.S(4, i1)
                        B[io, ii_init] = 0
            for i1_1, i2_1 in T.grid(4, 4):
                with T.block("B"):
                    ii = T.axis.S(4, i1_1)
                    k = T.axis.R(16, ko * 4 + i2_1)
                    B[io, ii] = B[io, ii] + A[io, ii, k]
"""
    mod = mod_of(source)
    for loop in ("i0", "i2_0"):
        out = applied(R.decompose_reduction("blockized_B", loop), mod)
        assert_equivalent(mod["main"], out["main"])
        names = {b.name_hint for _, b in blocks(out["main"].body)}
        assert {"blockized_B_init", "blockized_B_update", "B_init", "B"} <= names


def _freshly_built(node):
    """``node`` built again through its constructor, every rule checked."""
    from tirfun.analysis.traversal import map_children
    return map_children(node, _freshly_built) if attrs.has(type(node)) else node


def test_decompose_reduction_copies_are_the_checked_nodes():
    # the update block, its realize and the nodes above the placement are
    # copied, not rebuilt through their checks: building every node of the
    # result again gives the same function, of the same hash
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import For
    for source, block in [(ROW_SUM, "B"), (REPEATED, "C")]:
        func = from_source(source)
        loops = [s.loop_var.name for _, s in walk_stmts(func) if type(s) is For]
        done = 0
        for loop in loops:
            if R.decompose_reduction(block, loop).violations(mod_of(source)):
                continue
            out = R.decompose_reduction(block, loop)(mod_of(source))["main"]
            again = _freshly_built(out)
            assert again == out and hash(again) == hash(out)
            done += 1
        assert done >= 2


def test_decompose_reduction_compiles():
    mod = applied(R.decompose_reduction("C", "i"), mod_of(REPEATED))
    a = np.arange(32, dtype="int32").reshape(4, 8)
    d = np.zeros((4, 3), "int32")
    tirfun.build(mod, target="llvm")(a, d)
    assert (d == 2 * a.sum(axis=1, keepdims=True)).all()


def test_decompose_reduction_names_avoid_names_in_use():
    source = ROW_SUM.replace('"B"', '"B_init"', 1)
    out = applied(R.decompose_reduction("B_init", "k"), mod_of(source))
    names = {b.name_hint for b in (out["main"].body.block.body.body.seq[0].block,
                                   out["main"].body.block.body.body.seq[1].body.block)}
    assert names == {"B_init_init", "B_init_update"}


# ------------------------------------------------------------------------ rfactor

def test_rfactor_of_the_inner_loop_of_a_split():
    sch = Schedule(mod_of(ROW_SUM))
    _, k = sch.get_loops("B")
    _, k1 = sch.split(k, [None, 5])
    rf = sch.rfactor(k1, 0)
    assert rf == R.BlockRef("B_rf", "main")
    verify(sch.mod)
    root = sch.mod["main"].body.block
    assert [b.name for b in root.alloc_buffers] == ["B_rf"]
    assert [int(d.value) for d in root.alloc_buffers[0].shape] == [5, 5]
    assert_equivalent(mod_of(ROW_SUM)["main"], sch.mod["main"])
    assert "T.where" not in sch.mod["main"].script()


@pytest.mark.parametrize("factors, which", [([3, 4], 1), ([3, 4], 0), ([4, 4], 1), ([None, 16], 1),
                                            ([7, 2], 0)])
def test_rfactor_of_a_split_that_does_not_divide_initialises_every_slot(factors, which):
    # TVM leaves the slots no iteration reaches uninitialised and the
    # write-back reads them; the interpreter starts float scratch buffers
    # as NaN, so such a slot would make the sum NaN
    source = ROW_SUM.replace("int32", "float32").replace("B[vi] = 0", "B[vi] = T.float32(0)")
    sch = Schedule(mod_of(source))
    i, k = sch.get_loops("B")
    sch.split(i, [None, 2])
    loops = sch.split(k, factors)
    sch.rfactor(loops[which], 1)
    verify(sch.mod)
    a = np.random.default_rng(0).uniform(-1, 1, (5, 10)).astype("float32")
    b = np.full(5, np.nan, "float32")
    run(sch.mod, a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)
    compiled = np.full(5, np.nan, "float32")
    tirfun.build(sch.mod, target="llvm")(a, compiled)
    assert compiled.tobytes() == b.tobytes()


def test_rfactor_guards_the_combined_value_and_keeps_spatial_terms_in_the_write_back():
    sch = Schedule(mod_of(ROW_SUM))
    i, k = sch.get_loops("B")
    sch.split(i, [None, 2])
    _, k1 = sch.split(k, [None, 4])
    sch.rfactor(k1, 0)
    text = sch.mod["main"].script()
    rf_part, wb_part = text.split('T.block("B")')
    assert "T.if_then_else(vk_0 * 4 + vk_1 < 10, A[vi, vk_0 * 4 + vk_1], 0)" in rf_part
    assert "T.where(i_0 * 2 + i_1 < 5)" in wb_part
    assert_equivalent(mod_of(ROW_SUM)["main"], sch.mod["main"])


@pytest.mark.parametrize("grid", ["i, k, u in T.grid(5, 10, 1)", "i, u, k in T.grid(5, 1, 10)"])
def test_rfactor_of_a_unit_loop_that_feeds_no_iteration_variable(grid):
    # one iteration repeats nothing: TVM factors such a loop (a split by 1
    # leaves one), into an rfactor buffer of extent 1
    mod = mod_of(ROW_SUM.replace("i, k in T.grid(5, 10)", grid))
    out = applied(R.rfactor("u", 0), mod)
    assert_equivalent(mod["main"], out["main"])
    (rf,) = out["main"].body.block.alloc_buffers
    assert [int(d) for d in rf.shape] == [1, 5]


def test_rfactor_of_a_loop_not_starting_at_zero_indexes_from_zero():
    source = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32")):
    for i in range(5):
        for k in range(2, 10):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
"""
    mod = mod_of(source)
    out = applied(R.rfactor("k", -1), mod)
    assert [int(d.value) for d in out["main"].body.block.alloc_buffers[0].shape] == [5, 8]
    assert_equivalent(mod["main"], out["main"])


@pytest.mark.parametrize("reducer, init, update", [
    ("min", 'T.max_value("int32")', "T.min(B[vi], A[vi, vk])"),
    ("max", 'T.min_value("int32")', "T.max(B[vi], A[vi, vk])"),
    ("product", "1", "B[vi] * A[vi, vk]"),
])
def test_rfactor_recognises_the_reducers(reducer, init, update):
    source = ROW_SUM.replace("B[vi] = 0", f"B[vi] = {init}").replace("B[vi] + A[vi, vk]", update)
    mod = mod_of(source)
    sch = Schedule(mod)
    _, k = sch.get_loops("B")
    _, k1 = sch.split(k, [None, 3])
    sch.rfactor(k1, 1)
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"])


def test_rfactor_of_an_argmax_through_let_values():
    source = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), Oi: T.Buffer((4,), "int32"), Ov: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("O"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                Oi[vi] = -1
                Ov[vi] = T.min_value("float32")
            v_Oi: T.int32 = T.Select(Ov[vi] >= A[vi, vk], Oi[vi], vk)
            v_Ov: T.float32 = T.Select(Ov[vi] >= A[vi, vk], Ov[vi], A[vi, vk])
            Oi[vi] = v_Oi
            Ov[vi] = v_Ov
"""
    mod = mod_of(source)
    out = applied(R.split("k", [None, 3]) >> R.rfactor("k_1", 0), mod)
    assert {b.name for b in out["main"].body.block.alloc_buffers} == {"Oi_rf", "Ov_rf"}
    assert_equivalent(mod["main"], out["main"])


def test_rfactor_then_decompose_both_blocks_compiles():
    sch = Schedule(mod_of(ROW_SUM))
    i, k = sch.get_loops("B")
    k0, k1 = sch.split(k, [None, 5])
    rf = sch.rfactor(k1, 1)
    sch.decompose_reduction(rf, sch.get_loops(rf)[1])
    sch.decompose_reduction("B", sch.get_loops("B")[1])
    verify(sch.mod)
    a = np.arange(50, dtype="int32").reshape(5, 10)
    b = np.zeros(5, "int32")
    tirfun.build(sch.mod, target="llvm")(a, b)
    assert (b == a.sum(axis=1)).all()
    replay = R.Pipeline.from_json(sch.trace.to_json())
    assert replay(mod_of(ROW_SUM)) == sch.mod


# ------------------------------------------------------------------------- errors

def raises(cls, rewrite, source: str, message: str):
    mod = mod_of(source) if isinstance(source, str) else source
    with pytest.raises(R.RewriteError) as info:
        rewrite(mod)
    err = info.value
    assert type(err) is cls
    assert err.summary == message
    assert rewrite.violations(mod)
    if err.nodes:
        assert "\n    " in str(err)


def test_loop_position_error():
    source = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32"), C: T.Buffer((5,), "int32")):
    for i, k in T.grid(5, 10):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
    for j in range(5):
        with T.block("C"):
            vj = T.axis.spatial(5, j)
            C[vj] = B[vj]
"""
    raises(R.LoopPositionError, R.decompose_reduction("B", "j"), source,
           "decompose_reduction: loop 'j': the loop is not an ancestor of block 'B' in its scope; "
           "decompose_reduction places the init before a loop above the block")


def test_not_reduction_block_error():
    source = """
@T.prim_func
def main(A: T.Buffer((5,), "int32"), B: T.Buffer((5,), "int32")):
    for i in range(5):
        with T.block("B"):
            vi = T.axis.spatial(5, i)
            B[vi] = A[vi]
"""
    raises(R.NotReductionBlockError, R.decompose_reduction("B", "i"), source,
           "decompose_reduction: block 'B': the block is not a reduction block: it has no init statement")
    raises(R.NotReductionBlockError, R.rfactor("i", 0), source,
           "rfactor: block 'B': the block is not a reduction block: it has no init statement")


def test_loop_height_error():
    source = ROW_SUM.replace("for i, k in T.grid(5, 10):", "for k, i in T.grid(10, 5):")
    raises(R.LoopHeightError, R.decompose_reduction("B", "i"), source,
           "decompose_reduction: loop 'i': loop 'k' above it feeds a reduction iteration variable of "
           "block 'B'; the init must go before every loop the reduction runs over")


def test_repeated_reduction_error():
    source = ROW_SUM.replace("for i, k in T.grid(5, 10):", "for i, k, j in T.grid(5, 10, 2):")
    raises(R.RepeatedReductionError, R.decompose_reduction("B", "k"), source,
           "decompose_reduction: block 'B': the loops from 'k' down to the block reach an instance of it "
           "more than once (through 'j'), so they repeat the reduction, and every placement that avoids "
           "the repetition lies below a loop that feeds a reduction variable; no init placement keeps "
           "the meaning")


def test_non_single_child_block_error():
    source = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32"), C: T.Buffer((5, 10), "int32")):
    for i in range(5):
        for k in range(10):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
            with T.block("C"):
                vi, vk = T.axis.remap("SS", [i, k])
                C[vi, vk] = A[vi, vk]
"""
    raises(R.NonSingleChildBlockError, R.rfactor("k", 0), source,
           "rfactor: loop 'k': rfactor needs exactly one block under the loop, it has 2")


def test_not_serial_loop_kind_error():
    source = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32")):
    for i in range(5):
        for k in T.unroll(10):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
"""
    raises(R.NotSerialLoopKindError, R.rfactor("k", 0), source,
           "rfactor: loop 'k': the loop is unrolled; rfactor applies to serial loops only")


def test_loop_property_errors():
    two_kinds = """
@T.prim_func
def main(A: T.Buffer((4, 4), "int32"), B: T.Buffer((4,), "int32")):
    for f in range(16):
        with T.block("B"):
            vi = T.axis.spatial(4, f // 4)
            vk = T.axis.reduce(4, f % 4)
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
"""
    raises(R.LoopPropertyError, R.rfactor("f", 0), two_kinds,
           "rfactor: loop 'f': the loop feeds both data-parallel and reduction iteration variables")
    raises(R.LoopPropertyError, R.rfactor("i", 0), ROW_SUM,
           "rfactor: loop 'i': the rfactor loop feeds a data-parallel iteration variable")
    repeat = ROW_SUM.replace("for i, k in T.grid(5, 10):", "for i, k, j in T.grid(5, 10, 2):")
    raises(R.LoopPropertyError, R.rfactor("k", 0), repeat,
           "rfactor: loop 'j': the loop feeds no iteration variable, runs more than once and is under "
           "a reduction loop")
    raises(R.LoopPropertyError, R.rfactor("j", 0), repeat.replace("i, k, j", "j, i, k").replace("5, 10, 2", "2, 5, 10"),
           "rfactor: loop 'j': the loop feeds no reduction iteration variable of the block, so it "
           "repeats the reduction rather than dividing it")
    second = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32"), C: T.Buffer((5,), "int32")):
    for i in range(5):
        with T.block("C"):
            vi = T.axis.spatial(5, i)
            C[vi] = A[vi, 0]
        for k in range(10):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
"""
    raises(R.LoopPropertyError, R.rfactor("k", 0), second,
           "rfactor: loop 'i': block 'B' is not the first block under the outermost loop 'i' above it")
    symbolic = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32")):
    for i in range(5):
        for k in range(i + 1):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
"""
    raises(R.LoopPropertyError, R.rfactor("k", 0), symbolic,
           "rfactor: loop 'k': the loop's range uses a loop variable, so it cannot size the rfactor buffer")


def test_rfactor_not_applicable_error():
    source = ROW_SUM.replace("with T.init():\n                B[vi] = 0",
                             "with T.init():\n                if vi < 9:\n                    B[vi] = 0")
    raises(R.RFactorNotApplicableError, R.rfactor("k", 0), source,
           "rfactor: block 'B': rfactor cannot read the reduction (condition 1): the init is not a store "
           "or a sequence of stores")


def test_no_matched_reducer_error():
    source = ROW_SUM.replace("B[vi] + A[vi, vk]", "B[vi] - A[vi, vk]")
    raises(R.NoMatchedReducerError, R.rfactor("k", 0), source,
           "rfactor: block 'B': the identities and the combiner of the reduction match no known reducer "
           "(sum, product, min, max, the pair sum, argmax and argmin forms)")
    wrong_identity = ROW_SUM.replace("B[vi] = 0", "B[vi] = 1")
    raises(R.NoMatchedReducerError, R.rfactor("k", 0), wrong_identity,
           "rfactor: block 'B': the identities and the combiner of the reduction match no known reducer "
           "(sum, product, min, max, the pair sum, argmax and argmin forms)")


@pytest.mark.parametrize("axis", [2, -3, "0", True, 1.0])
def test_factor_axis_out_of_range_error(axis):
    raises(R.FactorAxisOutOfRangeError, R.rfactor("k", axis), ROW_SUM,
           f"rfactor: loop 'k': the buffer B has 1 dimension(s), so factor_axis must be an int in "
           f"[-2, 1], got {axis!r}")


def test_not_stage_pipeline_error():
    source = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32")):
    for i in range(5):
        for k in range(10):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
        with T.block("A"):
            vi = T.axis.spatial(5, i)
            A[(vi + 1) % 5, 0] = B[vi]
"""
    raises(R.NotStagePipelineError, R.rfactor("k", 0), source,
           "rfactor: block 'B': block 'A' under loop 'i' writes A, which the reduction reads")


def test_no_scope_block_error():
    func = from_source(ROW_SUM)
    bare = attrs.evolve(func, body=func.body.block.body)
    raises(R.NoScopeBlockError, R.rfactor("k", 0), IRModule({"main": bare}),
           "rfactor: block 'B': the block is not inside a block that could allocate the rfactor buffer; "
           "give the function a root block")


def test_unknown_names_are_schedule_errors():
    raises(R.UnknownLoopError, R.rfactor("x", 0), ROW_SUM,
           "rfactor: loop 'x': function 'main' has no loop with that loop variable")
    raises(R.UnknownBlockError, R.decompose_reduction("X", "k"), ROW_SUM,
           "decompose_reduction: block 'X': function 'main' has no block with that name")
    raises(R.RefKindError, R.decompose_reduction(R.LoopRef("k"), "k"), ROW_SUM,
           "decompose_reduction: loop 'k': expected a block (a BlockRef or a block name), got a loop")


def test_the_tensorir_tutorials_decompose_reduction_step():
    # TVM's TensorIR transformation tutorial, after split, reorder and
    # reverse_compute_at (here 16 wide instead of 128)
    before = from_source("""
@T.prim_func
def mm_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
            C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    Y = T.alloc_buffer((16, 16))
    for i, j_0 in T.grid(16, 4):
        for k, j_1 in T.grid(16, 4):
            with T.block("Y"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + j_1)
                vk = T.axis.reduce(16, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + ax0)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
""")
    expected = from_source("""
@T.prim_func
def mm_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
            C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    Y = T.alloc_buffer((16, 16))
    for i, j_0 in T.grid(16, 4):
        for j_1_init in range(4):
            with T.block("Y_init"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + j_1_init)
                T.reads()
                T.writes(Y[vi, vj])
                Y[vi, vj] = T.float32(0)
        for k, j_1 in T.grid(16, 4):
            with T.block("Y_update"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + j_1)
                vk = T.axis.reduce(16, k)
                T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + ax0)
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
""")
    sch = Schedule(IRModule({"mm_relu": before}))
    block_y = sch.get_block("Y", func_name="mm_relu")
    _, _, k, _ = sch.get_loops(block_y)
    sch.decompose_reduction(block_y, k)
    assert_structural_equal(sch.mod["mm_relu"], expected)
    assert_equivalent(before, sch.mod["mm_relu"])
    assert "sch.decompose_reduction(" in sch.trace.as_python()
    a = np.random.default_rng(0).uniform(-1, 1, (16, 16)).astype("float32")
    b = np.random.default_rng(1).uniform(-1, 1, (16, 16)).astype("float32")
    c = np.zeros((16, 16), "float32")
    tirfun.build(sch.mod, target="llvm")(a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)


def test_decompose_reduction_places_the_init_right_before_a_block_every_loop_repeats():
    # found by the soak: every loop from i down repeats the block (u feeds
    # no iteration variable), so the init goes right before the block,
    # below all of them, and there is no loop to check for blocks before it
    src = '''@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i, u in T.grid(4, 2):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(1, 0)
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi]
'''
    mod = IRModule({"main": from_source(src)})
    out = R.decompose_reduction("B", "i")(mod)
    assert_equivalent(mod["main"], out["main"])


@pytest.mark.parametrize("index, refused", [
    ("vi", False),  # the row the reduction has just finished
    ("(vi + 1) % 4", True),  # the next row: its update, and the original's init, come later
    # a row finished in this iteration or an earlier one: right, yet refused,
    # since the check proves only what this iteration's update wrote
    ("vi // 2 * 2", True),
])
def test_decompose_reduction_refuses_an_init_that_a_later_block_would_meet_too_early(index, refused):
    src = f'''@T.prim_func
def main(A: T.Buffer((4, 8), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32")):
    for i in range(4):
        for k in range(8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[{index}]
'''
    mod = IRModule({"main": from_source(src)})
    if refused:
        with pytest.raises(R.InitPlacementError, match=r"block 'C' runs after it under loop 'i' and "
                                                        r"touches B where the block may not have written"):
            R.decompose_reduction("B", "i")(mod)
        # it would change the result: C[0] read B[1] before its first update
        if index == "(vi + 1) % 4":
            a = np.ones((4, 8), "int32")
            b0 = np.full(4, 7, "int32")
            c = np.zeros(4, "int32")
            run(mod["main"], a, b0, c)
            assert c.tolist() == [7, 7, 7, 8]
    else:
        out = R.decompose_reduction("B", "i")(mod)
        assert_equivalent(mod["main"], out["main"])
        assert "B_init" in out["main"].script()


def test_rfactor_binds_the_loops_above_the_scope_that_its_guard_names():
    # found by the soak: loop_partition leaves the block under a new block,
    # with a predicate on loops above that block; rfactor moves the predicate
    # into the rfactor block's value, where those loops must come in through
    # iteration variables (block isolation)
    src = '''@T.prim_func
def main(A: T.Buffer((4, 1), "int32"), B: T.Buffer((4, 3), "int32"), D: T.Buffer((4, 3), "int32")):
    C = T.alloc_buffer((4,), "int32")
    for i_j_fused in range(12):
        for k_0, k_1_0, k_1_1 in T.grid(1, 1, 2):
            with T.block("C"):
                vi = T.axis.spatial(4, i_j_fused // 3)
                vk = T.axis.reduce(1, k_1_1)
                T.where(k_0 * 2 + (k_1_0 * 2 + k_1_1) < 1)
                T.reads(A[vi, vk])
                T.writes(C[vi])
                with T.init():
                    C[vi] = 0
                C[vi] = C[vi] + A[vi, vk]
        with T.block("D"):
            vi_1 = T.axis.spatial(4, i_j_fused // 3)
            vj = T.axis.spatial(3, i_j_fused % 3)
            T.reads(C[vi_1], B[vi_1, vj])
            T.writes(D[vi_1, vj])
            D[vi_1, vj] = C[vi_1] + B[vi_1, vj]'''
    mod = IRModule({"main": from_source(src)})
    parted = R.LoopPartition(loop=R.LoopRef("k_1_1"), factors=(None, 1), preserve_unit_iters=True)(mod)
    out = R.RFactor(loop=R.LoopRef("k_1_10", "main"), factor_axis=0)(parted)
    verify(out)
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    assert_equivalent(mod["main"], out["main"])
    rng = np.random.default_rng(0)
    A = rng.integers(-100, 100, (4, 1), dtype="int32")
    B = rng.integers(-100, 100, (4, 3), dtype="int32")
    expected, actual = np.zeros((4, 3), "int32"), np.zeros((4, 3), "int32")
    run(out["main"], A, B, expected)
    tirfun.build(out, target="llvm")(A, B, actual)
    np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(expected, A[:, :1] + B)


# the reduction split by 5 over 12 elements: a predicate guards the last piece
ROW_SUM_GUARDED = '''
@T.prim_func
def main(A: T.Buffer((4, 12), "int32"), B: T.Buffer((4,), "int32")):
    for i, k_0, k_1 in T.grid(4, 3, 5):
        with T.block("B"):
            T.where(k_0 * 5 + k_1 < 12)
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(12, k_0 * 5 + k_1)
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
'''


@pytest.mark.parametrize("loop", ["k_0", "k_1"])
@pytest.mark.parametrize("factor_axis", [0, 1])
def test_rfactor_of_a_loop_under_the_reductions_predicate(loop, factor_axis):
    # TVM fails inside its iterator maps on the predicate (an internal
    # error, not a ScheduleError): the predicate goes into the rfactor
    # block's update as a guard, and every slot starts from the init
    mod = mod_of(ROW_SUM_GUARDED)
    out = applied(R.rfactor(loop, factor_axis), mod)
    assert "T.if_then_else(vk_0 * 5 + vk_1 < 12" in out["main"].script()
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_rfactor_in_a_scope_whose_reader_reads_past_what_the_reduction_writes():
    # TVM refuses: D reads all of C where the reduction writes a quarter of
    # it, so the scope is no stage pipeline. The rfactor keeps what the
    # reduction writes and leaves the rest of C as it was
    src = '''
@T.prim_func
def main(A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 8), "int32"), D: T.Buffer((8, 8), "int32")):
    C = T.alloc_buffer((8, 8), "int32")
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj]
'''
    mod = mod_of(src)
    out = applied(R.rfactor("k", 0), mod)
    assert [b.name for b in out["main"].body.block.alloc_buffers] == ["C", "C_rf"]
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_the_plain_reading_of_a_binding_visits_once_as_the_iterator_map_does():
    # decompose_reduction asks whether the loops from a placement down reach
    # each instance of the block once; bindings of plain loop variables are
    # read without the iterator map: every such case gives the map's answer
    import itertools

    from tirfun.analysis.arith.iter_map import detect_iter_map
    from tirfun.nodes import Evaluate, For, ForKind, IntImm, Var
    from tirfun.rewrites.reduction import _visits_once_plain

    loops = [For(Var(name, "int32"), IntImm("int32", lo), IntImm("int32", ext), ForKind.SERIAL,
                 Evaluate(IntImm("int32", 0)))
             for name, lo, ext in (("a", 0, 1), ("b", 2, 1), ("c", 0, 3), ("d", 1, 4), ("e", 0, 2))]
    outer = Var("o", "int32")
    atoms = [loop.loop_var for loop in loops] + [outer]
    answered = 0
    for size in range(0, 4):
        for values in itertools.product(atoms, repeat=size):
            for chosen in itertools.combinations(loops, 3):
                placed = [((("body", None),) * k, loop) for k, loop in enumerate(chosen)]
                plain = _visits_once_plain(list(values), placed)
                mapped = detect_iter_map(list(values), {l.loop_var.name: l for l in chosen}, "bijective")
                assert plain is not None
                assert plain == (mapped is not None), (values, [l.loop_var.name for l in chosen])
                answered += 1
    assert answered > 1000
    # a value that is not a plain variable, a symbolic extent: the map answers
    assert _visits_once_plain([loops[2].loop_var + 1], [((), loops[2])]) is None
    symbolic = For(Var("s", "int32"), IntImm("int32", 0), Var("n", "int32"), ForKind.SERIAL,
                   Evaluate(IntImm("int32", 0)))
    assert _visits_once_plain([symbolic.loop_var], [((), symbolic)]) is None


def test_rfactor_refuses_a_nest_where_another_block_writes_what_the_reduction_reads():
    # the partial results are computed ahead of the outermost loop, before
    # the block that writes P after the reduction in each of its
    # iterations; a block under the loop that only reads what the reduction
    # reads (Q) is no obstacle
    src = WRITTEN_LATER
    raises(R.NotStagePipelineError, R.rfactor("k", 0), src,
           "rfactor: block 'B': block 'P' under loop 'i' writes P, which the reduction reads")
    alone = src.replace("P[(vi + 1) % 4, vj] = A[vi, vj] * 2", "C[vi, vj] = A[vi, vj] * 2")
    mod = mod_of(alone)
    out = R.rfactor("k", 0)(mod)
    assert_equivalent(mod["main"], out["main"])


def test_the_init_stores_are_substituted_as_a_walk_of_the_statement_would():
    # decompose_reduction renames the init block's variables in the init's
    # stores expression by expression: the same statement as the general
    # substitution, unchanged stores kept as they were, anything but stores
    # left to the general walk
    from tirfun.nodes import BufferStore, IntImm, LetStmt, SeqStmt, Var
    from tirfun.rewrites.exprs import substitute
    from tirfun.rewrites.reduction import _substitute_stores

    func = mod_of(ROW_SUM)["main"]
    block = next(r.block for _, r in _realizes(func) if r.block.init is not None)
    store = block.init
    assert isinstance(store, BufferStore)
    vi = block.iter_vars[0].var
    mapping = {vi: Var("w", vi.dtype)}
    other = BufferStore(store.buffer, store.value, [IntImm(vi.dtype, 0)])
    for stmt in (store, SeqStmt([store, other]), SeqStmt([other, other])):
        got = _substitute_stores(stmt, mapping)
        assert got == substitute(stmt, mapping)
        assert "w" in got.script() or got is stmt
    assert _substitute_stores(other, mapping) is other
    let = LetStmt(Var("t", "int32"), IntImm("int32", 0), store)
    assert _substitute_stores(let, mapping) is None
    assert _substitute_stores(SeqStmt([store, let]), mapping) is None


def _realizes(func):
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import BlockRealize

    return [(p, s) for p, s in walk_stmts(func) if isinstance(s, BlockRealize)]


FUSED_SYMBOLIC_MATMUL = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    m, n, k = T.int32(), T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "int32")
    B = T.match_buffer(b, (n, k), "int32")
    C = T.match_buffer(c, (m, k), "int32")
    for i, j, r in T.grid(m, k, n):
        with T.block("C"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
"""


@pytest.mark.parametrize("sizes", [{"m": 2, "n": 3, "k": 2}, {"m": 1, "n": 0, "k": 3}, {"m": 3, "n": 1, "k": 0}])
def test_decompose_reduction_over_a_fuse_of_a_spatial_and_a_reduction_loop_of_run_time_extents(sizes):
    # j and r fused: vj = f // n, vr = f % n over f < k * n, one instance of
    # the block per iteration (TVM's iterator map reads the slices by the
    # size); the init goes before the fused loop and keeps its meaning,
    # with no reduction iteration too
    mod = IRModule({"main": from_source(FUSED_SYMBOLIC_MATMUL)})
    fused = R.fuse("j", "r")(mod)
    assert "j_r_fused // n" in fused["main"].script()
    after = R.decompose_reduction("C", "j_r_fused")(fused)
    verify(after)
    assert_equivalent(mod["main"], after["main"], sizes=sizes)


SPLIT_PAST_THE_EXTENT = """
@T.prim_func
def main(A: T.Buffer((7, 7), "int32"), B: T.Buffer((1,), "int32")):
    for f_0, f_1 in T.grid(1, 256):
        with T.block("B"):
            r0 = T.axis.reduce(7, (f_0 * 256 + f_1) // 7)
            r1 = T.axis.reduce(7, (f_0 * 256 + f_1) % 7)
            T.where(f_0 * 256 + f_1 < 49)
            with T.init():
                B[0] = 0
            B[0] = B[0] + A[r0, r1]
"""


def test_a_predicate_that_cuts_a_split_past_the_extent_makes_the_binding_affine():
    # TVM's splitted_square_sum_with_predicate: the 49 iterations of a fuse
    # split by 256; under the predicate the binding is a map of 49
    # iterations, which reorder and decompose_reduction take
    mod = IRModule({"main": from_source(SPLIT_PAST_THE_EXTENT)})
    for step in (R.reorder("f_1", "f_0"), R.decompose_reduction("B", "f_0")):
        after = step(mod)
        verify(after)
        assert_equivalent(mod["main"], after["main"])
