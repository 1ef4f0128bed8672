"""decompose_padding and can_decompose_padding: results on conv2d's
padding, and every error with its message."""

import copy
import re

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.nodes import IRModule
from tirfun.rewrites.index import build_index, index_of
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from corner_sources import CONSTANT_TABLE, TRIANGLE_IN_A_SQUARE

CONV_PAD = """
@T.prim_func
def main(X: T.Buffer((1, 4, 6, 6), "float32"), P: T.Buffer((1, 4, 8, 8), "float32")):
    for n, c, h, w in T.grid(1, 4, 8, 8):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 7 and 1 <= vw and vw < 7,
                                               X[vn, vc, vh - 1, vw - 1], T.float32(0))
"""


def mod_of(source=CONV_PAD) -> IRModule:
    return IRModule({"main": from_source(source)})


def check(mod, out):
    verify(out)
    assert index_of(out["main"]) == build_index(out["main"])
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    assert_equivalent(mod["main"], out["main"])
    x = np.random.default_rng(0).uniform(-1, 1, (1, 4, 6, 6)).astype("float32")
    p = np.full((1, 4, 8, 8), np.nan, "float32")
    tirfun.build(out, target="llvm")(x, p)
    assert (p == np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))).all()


@pytest.mark.parametrize("loop", ["n", "c", "h"])
def test_decompose_padding_trims_the_in_bound_loops(loop):
    mod = mod_of()
    snapshot = copy.deepcopy(mod)
    sch = Schedule(mod)
    fill = sch.decompose_padding("pad", loop)
    assert fill == R.BlockRef("pad_pad_const", "main")
    check(mod, sch.mod)
    assert mod == snapshot
    text = sch.mod["main"].script()
    in_bound = text.split('T.block("pad")')[1]
    assert "T.if_then_else" not in text and "T.where" not in in_bound
    assert "P[vn, vc, vh + 1, vw + 1] = X[vn, vc, vh, vw]" in in_bound
    if loop == "h":
        assert "for h, w in T.grid(6, 6):" in text


def test_decompose_padding_at_the_innermost_loop_keeps_the_outer_test_in_the_predicate():
    mod = mod_of()
    out = R.decompose_padding("pad", "w")(mod)
    check(mod, out)
    assert "T.where(1 <= h and h < 7)" in out["main"].script()


def test_decompose_padding_after_a_split_that_does_not_divide():
    mod = mod_of()
    sch = Schedule(mod)
    _, _, h, w = sch.get_loops("pad")
    sch.split(h, [None, 3])
    sch.split(w, [3, None])
    for loop in sch.get_loops("pad"):
        trial = sch.copy()
        trial.decompose_padding("pad", loop)
        check(mod, trial.mod)


def test_can_decompose_padding():
    sch = Schedule(mod_of())
    assert sch.can_decompose_padding("pad", "h") is True
    assert sch.mod == mod_of()
    plain = Schedule(mod_of(CONV_PAD.replace("T.if_then_else(1 <= vh and vh < 7 and 1 <= vw and vw < 7,\n"
                                             "                                               X[vn, vc, vh - 1, vw - 1], T.float32(0))",
                                             "T.float32(1)")))
    assert plain.can_decompose_padding("pad", "h") is False
    with pytest.raises(R.UnknownLoopError):
        sch.can_decompose_padding("pad", "x")


def raises(cls, rewrite, source, message):
    mod = mod_of(source)
    with pytest.raises(ScheduleError) as info:
        rewrite(mod)
    assert type(info.value) is cls
    assert info.value.summary == message
    assert rewrite.violations(mod)


def test_loop_position_error():
    source = """
@T.prim_func
def main(X: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32"), Q: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("pad"):
            vi = T.axis.spatial(8, i)
            P[vi] = T.if_then_else(1 <= vi and vi < 7, X[vi - 1], T.float32(0))
    for j in range(8):
        with T.block("Q"):
            vj = T.axis.spatial(8, j)
            Q[vj] = P[vj]
"""
    raises(R.LoopPositionError, R.decompose_padding("pad", "j"), source,
           "decompose_padding: loop 'j': the loop is not an ancestor of block 'pad' in its scope; "
           "decompose_padding places the constant fill before a loop above the block")


def test_incomplete_block_error():
    source = """
@T.prim_func
def main(X: T.Buffer((6, 4), "float32"), P: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 4):
        with T.block("pad"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                P[vi] = T.float32(0)
            P[vi] = P[vi] + T.if_then_else(1 <= vi and vi < 7, X[vi - 1, vk], T.float32(0))
"""
    raises(R.IncompleteBlockError, R.decompose_padding("pad", "i"), source,
           "decompose_padding: block 'pad': the block is not complete: its iteration variable vk is not "
           "data-parallel")


@pytest.mark.parametrize("value, reason", [
    ("X[vi % 6]", "the stored value is not a T.if_then_else of the padding condition"),
    ("T.if_then_else(1 <= vi and vi < 7, X[vi - 1], X[0])", "the pad value X[0] is not a constant"),
    ("T.if_then_else(0 <= vi, X[vi % 6], T.float32(0))", "the in-bound condition is always true"),
    ("T.if_then_else(9 <= vi, X[vi % 6], T.float32(0))", "the in-bound range of vi is empty"),
])
def test_padding_pattern_match_error(value, reason):
    source = f"""
@T.prim_func
def main(X: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("pad"):
            vi = T.axis.spatial(8, i)
            P[vi] = {value}
"""
    raises(R.PaddingPatternMatchError, R.decompose_padding("pad", "i"), source,
           f"decompose_padding: block 'pad': the block does not match the padding pattern: {reason}")


def test_padding_pattern_needs_one_store():
    source = """
@T.prim_func
def main(X: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("pad"):
            vi = T.axis.spatial(8, i)
            if vi < 7:
                P[vi] = T.if_then_else(1 <= vi, X[vi - 1], T.float32(0))
"""
    raises(R.PaddingPatternMatchError, R.decompose_padding("pad", "i"), source,
           "decompose_padding: block 'pad': the block does not match the padding pattern: the block body "
           "is not a single store into the written buffer")


@pytest.mark.parametrize("loop", ["i", "j"])
def test_padding_pattern_of_an_opaque_block_reading_its_loops_is_refused(loop):
    # found by fuzzing: the fill block got loops of its own, and its store
    # still read the old ones
    source = """
@T.prim_func
def main(A: T.Buffer((4, 4), "int32")):
    for i, j in T.grid(4, 4):
        with T.block("pad"):
            T.reads()
            T.writes(A[i, j])
            A[i, j] = T.if_then_else(i == 3 and 2 <= j, 0, 42)
"""
    raises(R.PaddingPatternMatchError, R.decompose_padding("pad", loop), source,
           "decompose_padding: block 'pad': the block does not match the padding pattern: it reads the loop "
           "variable i directly, not through an iteration variable")


# ---------------------------------------------------------------------- pad_einsum

MATMUL = """
@T.prim_func
def main(A: T.Buffer((7, 5), "float32"), B: T.Buffer((5, 6), "float32"), C: T.Buffer((7, 6), "float32")):
    for i0, i1, i2 in T.grid(7, 6, 5):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[k, j]
"""


def test_pad_einsum_of_a_matmul():
    mod = mod_of(MATMUL)
    snapshot = copy.deepcopy(mod)
    sch = Schedule(mod)
    sch.pad_einsum("C", [4, 4, 4])
    out = sch.mod
    verify(out)
    assert mod == snapshot
    assert index_of(out["main"]) == build_index(out["main"])
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    assert_equivalent(mod["main"], out["main"])
    root = out["main"].body.block
    assert {b.name: [d.value for d in b.shape] for b in root.alloc_buffers} == \
        {"A_pad": [8, 8], "B_pad": [8, 8], "C_pad": [8, 8]}
    assert "for i0, i1, i2 in T.grid(8, 8, 8):" in out["main"].script()
    a = np.random.default_rng(1).uniform(-1, 1, (7, 5)).astype("float32")
    b = np.random.default_rng(2).uniform(-1, 1, (5, 6)).astype("float32")
    c = np.zeros((7, 6), "float32")
    tirfun.build(out, target="llvm")(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)


def test_pad_einsum_copies_an_output_in_only_where_the_block_may_not_write_all_of_it():
    # the matmul writes every C[i, j] (its init first): C_pad needs no copy
    # in, as in TVM; under a predicate some elements keep their values, so
    # the output is copied in before and back after
    out = R.pad_einsum("C", [4, 4, 4])(mod_of(MATMUL))
    names = [b.name_hint for b in _blocks(out)]
    assert names == ["A_pad", "B_pad", "C", "C_pad"], names
    guarded = mod_of(MATMUL.replace('i, j, k = T.axis.remap("SSR", [i0, i1, i2])',
                                    'i, j, k = T.axis.remap("SSR", [i0, i1, i2])\n            T.where(i0 != 3)'))
    out = R.pad_einsum("C", [4, 4, 4])(guarded)
    names = [b.name_hint for b in _blocks(out)]
    # the copy back takes TVM's name; the copy in, which TVM does not make, one of its own
    assert names == ["A_pad", "B_pad", "C_pad_in", "C", "C_pad"], names
    verify(out)
    assert_equivalent(guarded["main"], out["main"])


def test_pad_einsum_copies_in_an_output_written_under_a_condition():
    # found by the fuzzer: under ``if i < 6`` rows 6 and 7 of B are never
    # written, and the copy back stored B_pad's unset rows there
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        if i < 6:
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
""")
    out = R.pad_einsum("B", [2, 3])(mod)
    assert [b.name_hint for b in _blocks(out)] == ["A_pad", "B_pad_in", "B", "B_pad"]
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=3)


def test_pad_einsum_keeps_a_loop_that_follows_a_padded_row_in_its_domain():
    # found by the fuzzer: k runs i + 1 times over a domain of 8 columns;
    # padding the rows to 9 gives row 8 a k of 8, past the domain (TVM reads
    # A_pad[8, 8], past the padded buffer). The padded rows keep k below 8
    mod = mod_of(TRIANGLE_IN_A_SQUARE)
    out = R.pad_einsum("C", [3, 1])(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=3)
    text = out.script()
    assert "for i in range(9):" in text and "for k in range(i + 1):" in text
    assert "T.where(k < 8)" in text


def _blocks(mod):
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import Block

    root = mod["main"].body.block
    return [s for _, s in walk_stmts(mod["main"]) if isinstance(s, Block) and s is not root]


def test_pad_einsum_keeps_a_padded_reduction_out_of_a_max():
    source = """
@T.prim_func
def main(A: T.Buffer((3, 5), "float32"), B: T.Buffer((3,), "float32")):
    for i, k in T.grid(3, 5):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.min_value("float32")
            B[vi] = T.max(B[vi], A[vi, vk])
"""
    mod = mod_of(source)
    out = R.pad_einsum("B", [1, 4])(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    a = -np.ones((3, 5), "float32")
    b = np.zeros(3, "float32")
    tirfun.build(out, target="llvm")(a, b)
    assert (b == -1).all()  # zero padding read by the max would give 0


def test_pad_einsum_copies_back_only_what_the_block_wrote():
    source = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            B[vi] = A[vi] * T.float32(2)
"""
    mod = mod_of(source)
    out = R.pad_einsum("B", [4])(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    b = np.full(10, 5, "float32")
    tirfun.build(out, target="llvm")(np.ones(10, "float32"), b)
    assert list(b) == [2] * 7 + [5] * 3


def test_pad_einsum_errors():
    raises(R.InvalidPaddingError, R.pad_einsum("C", [4, 4]), MATMUL,
           "pad_einsum: block 'C': the padding must be a list of 3 positive ints, one per iteration "
           "variable, got (4, 4)")
    raises(R.InvalidPaddingError, R.pad_einsum("C", [4, 0, 4]), MATMUL,
           "pad_einsum: block 'C': the padding must be a list of 3 positive ints, one per iteration "
           "variable, got (4, 0, 4)")
    shifted = MATMUL.replace("A[i, k] * B[k, j]", "A[i, k] * B[(k + 1) % 5, j]")
    raises(R.NonEinsumError, R.pad_einsum("C", [4, 4, 4]), shifted,
           "pad_einsum: block 'C': the block is not an einsum: its region of B is not one point at "
           "iteration variables or constants")
    side = """
@T.prim_func
def main(A: T.Buffer((7, 5), "float32"), C: T.Buffer((7,), "float32"), D: T.Buffer((7,), "float32")):
    for i0 in range(7):
        for i2 in range(5):
            with T.block("C"):
                i, k = T.axis.remap("SR", [i0, i2])
                with T.init():
                    C[i] = T.float32(0)
                C[i] = C[i] + A[i, k]
        with T.block("D"):
            i = T.axis.spatial(7, i0)
            D[i] = C[i]
"""
    # C is wider than the block's domain: the padded iterations would
    # write the elements of C that D reads
    wide = side.replace("C: T.Buffer((7,)", "C: T.Buffer((9,)")
    raises(R.NotStagePipelineError, R.pad_einsum("C", [4, 1]), wide,
           "pad_einsum: block 'C': block 'D' beside it uses C, which would be padded, and the block's "
           "domain covers 7 of its 9 elements along i: the padded iterations would overwrite elements "
           "block 'D' uses")
    # a view of the buffer in the block beside it
    view = side.replace("            D[i] = C[i]\n", "            T.reads(C[i])\n            T.writes(D[i])\n"
                        "            c = T.match_buffer(C[i], (1,))\n            D[i] = c[0]\n")
    raises(R.NotStagePipelineError, R.pad_einsum("C", [4, 1]), view,
           "pad_einsum: block 'C': a block beside it reaches C, which would be padded, other than by loads, "
           "stores and its declared regions (a match_buffer view or its pointer)")


# the matmul's tile accumulated in C_local, copied out by a block under the
# same row loop (a cache_write moved under it): the copy reads the padded
# C_local too
BESIDE_READER = """
@T.prim_func
def main(A: T.Buffer((10, 12), "float32"), B: T.Buffer((12, 6), "float32"), C: T.Buffer((10, 6), "float32")):
    C_local = T.alloc_buffer((10, 6))
    for i in range(10):
        for j, k in T.grid(6, 12):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C_local[vi, vj] = T.float32(0)
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for j in range(6):
            with T.block("C_local"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = C_local[vi, vj]
"""

# A's row copied into A_local by a block under the same row loop (a
# cache_read moved under it), and B read there by another block
BESIDE_WRITER = """
@T.prim_func
def main(A: T.Buffer((10, 12), "float32"), B: T.Buffer((12, 6), "float32"), C: T.Buffer((10, 6), "float32"),
         E: T.Buffer((10, 6), "float32")):
    A_local = T.alloc_buffer((10, 12))
    for i in range(10):
        for k in range(12):
            with T.block("A_local"):
                vi, vk = T.axis.remap("SS", [i, k])
                A_local[vi, vk] = A[vi, vk]
        for j, k in T.grid(6, 12):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A_local[vi, vk] * B[vk, vj]
        for j in range(6):
            with T.block("E"):
                vi, vj = T.axis.remap("SS", [i, j])
                E[vi, vj] = B[vi, vj] + C[vi, vj]
"""


@pytest.mark.parametrize("source", [BESIDE_READER, BESIDE_WRITER])
def test_pad_einsum_pads_a_buffer_that_blocks_beside_it_use_for_them_too(source):
    mod = mod_of(source)
    out = R.pad_einsum("C", [1, 8, 16])(mod)
    verify(out)
    assert index_of(out["main"]) == build_index(out["main"])
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    text = out["main"].script()
    # the block's loops are padded; inside the row loop the blocks beside it
    # use the padded copy
    assert "in T.grid(8, 16):" in text, text
    local = "C_local" if source is BESIDE_READER else "A_local"
    row = text.split("for i in range(10):")[1].split(f'T.block("{local}_pad')[0]
    assert f"{local}_pad[" in row and f"{local}[" not in row, text
    assert_equivalent(mod["main"], out["main"])
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (10, 12)).astype("float32"), rng.uniform(-1, 1, (12, 6)).astype("float32")
    c, e = np.zeros((10, 6), "float32"), np.zeros((10, 6), "float32")
    tirfun.build(out, target="llvm")(*([a, b, c] if source is BESIDE_READER else [a, b, c, e]))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    if source is BESIDE_WRITER:
        # B, which the blocks beside it only read and nothing there writes,
        # stays B for them
        assert re.search(r"E\[\w+, \w+\] = B\[\w+, \w+\] \+ C_pad\[", text), text
        np.testing.assert_allclose(e, b[:10] + a @ b, rtol=1e-5, atol=1e-6)


def test_decompose_padding_of_a_partition_part_with_no_in_bound_element():
    # after loop_partition the part w_01 (w from 2) holds no in-bound element
    # of the padding (vw < 1): its in-bound block keeps a T.where(False) and
    # a binding past its narrowed domain, which never runs
    from tirfun.interp import run
    from tirfun.script import from_source
    from tirfun.testing.equivalence import assert_equivalent

    src = '''@T.prim_func
def main(X: T.Buffer((1, 1, 1), "float32"), Y: T.Buffer((1, 2, 3), "float32")):
    P = T.alloc_buffer((1, 2, 3))
    for c_0, c_1, h, w_0, w_1 in T.grid(1, 2, 2, 2, 2):
        with T.block("pad"):
            vc = T.axis.spatial(1, c_0 * 2 + c_1)
            vh = T.axis.spatial(2, h)
            vw = T.axis.spatial(3, w_0 * 2 + w_1)
            T.where(w_0 * 2 + w_1 < 3 and c_0 * 2 + c_1 < 1)
            P[vc, vh, vw] = T.if_then_else(vh < 1 and vw < 1, X[vc, vh, vw], T.float32(0))
    for c, h, w in T.grid(1, 2, 3):
        with T.block("Y"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            Y[vc, vh, vw] = P[vc, vh, vw] * T.float32(2)'''
    mod = IRModule({"main": from_source(src)})
    parted = R.loop_partition("w_0", [1])(mod)
    after = R.decompose_padding("pad_w_01", "w_01")(parted)
    verify(after)
    assert "T.where(T.bool(False))" in after.script()
    assert_structural_equal(from_source(after["main"].script()), after["main"])
    assert_equivalent(mod["main"], after["main"], trials=2)
    x = np.full((1, 1, 1), 3.0, "float32")
    expected, actual = np.zeros((1, 2, 3), "float32"), np.zeros((1, 2, 3), "float32")
    run(after["main"], x, expected)
    tirfun.build(after, target="llvm")(x, actual)
    np.testing.assert_array_equal(actual, expected)
    assert expected[0, 0, 0] == 6.0 and expected.sum() == 6.0


def test_pad_einsum_refuses_a_block_whose_regions_hide_a_store():
    # the padded domain would store past P, for which no padded copy is
    # made since the block's regions do not name it
    src = '''
@T.prim_func
def main(X: T.Buffer((1, 2, 1), "float32"), P: T.Buffer((1, 2, 1), "float32")):
    for c, h, w in T.grid(1, 2, 1):
        with T.block("pad"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            P[vc, vh, vw] = X[vc, vh, vw]
'''
    mod = IRModule({"main": from_source(src)})
    hidden = R.unsafe_hide_buffer_access("pad", "write", [0])(mod)
    with pytest.raises(R.NonEinsumError, match="its body stores to P, which its regions do not declare"):
        R.pad_einsum("pad", [1, 1, 2])(hidden)
    assert R.pad_einsum("pad", [1, 1, 2]).violations(mod) == []


def test_decompose_padding_binds_a_loop_of_one_iteration_above_it_to_its_value():
    # TVM's test_int64_indices_batch_decompose_padding: the batch loop b
    # (one iteration) is above the decomposed loop i, so both new blocks
    # bind vb to 0, as TVM's analyzer folds it; loops copied from i down
    # keep their variables
    src = '''@T.prim_func
def main(x: T.Buffer((T.int64(1), T.int64(128), T.int64(128)), "int32"),
         y: T.Buffer((T.int64(1), T.int64(140), T.int64(128)), "int32")):
    for b, i, j in T.grid(T.int64(1), T.int64(140), T.int64(128)):
        with T.block("block"):
            vb, vi, vj = T.axis.remap("SSS", [b, i, j])
            y[vb, vi, vj] = T.if_then_else(vi < T.int64(128), x[vb, vi, vj], 0)
'''
    mod = IRModule({"main": from_source(src)})
    out = R.decompose_padding("block", "j")(mod)
    text = out["main"].script()
    assert "vb_1 = T.axis.spatial(T.int64(1), T.int64(0))" in text  # the fill
    assert "vb = T.axis.spatial(T.int64(1), T.int64(0))" in text  # the in-bound part
    assert 'vi_1, vj_1 = T.axis.remap("SS", [i, j_1])' in text
    assert_equivalent(mod["main"], out["main"])


def test_pad_einsum_pads_a_symbolic_extent_to_a_multiple_of_its_factor():
    # TVM's test_pad_matmul: n pads to (n + 31) // 32 * 32, the copy in
    # guards v < n, and the loop over n runs over the padded extent
    src = '''@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (128, 128), "float32")
    B = T.match_buffer(b, (n, 128), "float32")
    C = T.match_buffer(c, (128, n), "float32")
    for i0, i1, i2 in T.grid(128, n, 128):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[j, k]
'''
    mod = IRModule({"main": from_source(src)})
    out = R.pad_einsum("C", [32, 32, 32])(mod)
    text = out["main"].script()
    assert "B_pad = T.alloc_buffer(((n + 31) // 32 * 32, 128))" in text
    assert "T.grid(128, (n + 31) // 32 * 32, 128)" in text
    assert "T.if_then_else(v0 < n, B[v0, v1], T.float32(0.0))" in text
    for n in (1, 5, 33):
        assert_equivalent(mod["main"], out["main"], sizes={"n": n})


@pytest.mark.parametrize("a_decl", ['A: T.Buffer((7, 6), "float32")', "a: T.handle"])
def test_pad_einsum_names_the_first_access_indexed_by_an_expression(a_decl):
    # the regions are points, but the body reads A one place further on;
    # over a symbolic shape the buffer's own expressions are looked into too
    src = f"""
@T.prim_func
def main({a_decl}, C: T.Buffer((7,), "float32")):
    {'n = T.int32()' if a_decl.startswith('a') else ''}
    {'A = T.match_buffer(a, (7, n + 1), "float32")' if a_decl.startswith('a') else ''}
    for i0, i2 in T.grid(7, 5):
        with T.block("C"):
            i, k = T.axis.remap("SR", [i0, i2])
            T.reads(A[i, k])
            T.writes(C[i])
            with T.init():
                C[i] = T.float32(0)
            C[i] = C[i] + A[i, k + 1] * A[i + 1, k]
"""
    raises(R.NonEinsumError, R.pad_einsum("C", [4, 4]), src,
           "pad_einsum: block 'C': the block is not an einsum: its body indexes A with an expression that is not "
           "a variable or a constant")


def test_a_condition_that_surely_narrows_is_never_simplified_to_true():
    # the shortcut that spares decompose_padding the simplifier: wherever
    # it answers, the simplifier does not find the condition always true
    import random

    from tirfun.analysis.arith.simplify import simplify_expr
    from tirfun.nodes import GE, GT, LE, LT, And, IntImm, Var
    from tirfun.rewrites.padding import _TRUE, _surely_narrows

    rng = random.Random(0)
    vs = [Var("vi"), Var("vj")]
    answered = 0
    for _ in range(500):
        env = {}
        for v in vs:
            lo = rng.randint(-2, 3)
            env[v] = (lo, lo + rng.randint(0, 8))
        cond = None
        for _ in range(rng.randint(1, 4)):
            v, c = rng.choice(vs), IntImm("int32", rng.randint(-3, 12))
            op = rng.choice([LT, LE, GT, GE])
            term = op(v, c) if rng.random() < 0.5 else op(c, v)
            cond = term if cond is None else And(cond, term)
        if _surely_narrows(cond, env):
            answered += 1
            assert simplify_expr(cond, env) != _TRUE
    assert answered > 100


def test_a_condition_always_true_in_integers_is_what_the_simplifier_makes_true():
    # decompose_padding's in-bound predicate: where the shortcut finds it
    # true over the ranges, the simplifier gives True as well; where it
    # does not, it is not asked to agree (the simplifier decides)
    import random

    from tirfun.analysis.arith.simplify import simplify_expr
    from tirfun.nodes import GE, GT, LE, LT, And, IntImm, Var
    from tirfun.rewrites.padding import _TRUE, _always_true

    rng = random.Random(1)
    vs = [Var("i"), Var("j"), Var("k", "int64")]
    answered = 0
    for _ in range(600):
        ranges = {}
        for v in vs:
            lo = rng.randint(-3, 3)
            ranges[v] = (lo, lo + rng.randint(0, 9))
        cond = None
        for _ in range(rng.randint(1, 4)):
            v = rng.choice(vs)
            side = v
            if rng.random() < 0.6:
                c = IntImm(v.dtype, rng.randint(-2, 3))
                side = v + c if rng.random() < 0.5 else v - c
            c = IntImm(v.dtype, rng.randint(-4, 14))
            op = rng.choice([LT, LE, GT, GE])
            term = op(side, c) if rng.random() < 0.5 else op(c, side)
            cond = term if cond is None else And(cond, term)
        if _always_true(cond, ranges):
            answered += 1
            assert simplify_expr(cond, ranges) == _TRUE
    assert answered > 50



def test_pad_einsum_that_pads_nothing_leaves_the_body_as_it_is_for_the_primitives_after_it():
    # a padding of 1 pads nothing: the body keeps its declarations at the
    # top (it was wrapped in a sequence of one, which cache_read then did not
    # look through: its copy of K_buf went above the decl_buffer, out of
    # K_buf's scope)
    from tirfun.nodes import AllocateConst

    mod = IRModule({"main": from_source(CONSTANT_TABLE)})
    padded = R.pad_einsum("B", [1])(mod)
    assert type(padded["main"].body.block.body) is AllocateConst
    cached = R.cache_read("B", 1, "local")(padded)
    verify(cached)
    text = cached.script()
    assert text.index("T.decl_buffer") < text.index('T.block("K_buf_local")')
    assert_equivalent(mod["main"], cached["main"])


RUN_TIME_SUM = """
@T.prim_func
def main(a: T.handle, s: T.handle):
    rows, cols = T.int32(), T.int32()
    A = T.match_buffer(a, (rows, cols), "int32")
    S = T.match_buffer(s, (rows,), "int32")
    for i, k in T.grid(rows, cols):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = 0
            S[vi] = S[vi] + A[vi, vk]
"""


@pytest.mark.parametrize("cols", [0, 1, 3])
def test_pad_einsum_of_a_sum_over_a_run_time_count_keeps_the_output_where_no_term_is_added(cols):
    # with no column no instance runs, and S keeps what it held; the padded
    # output is copied in first, so the copy back returns those values
    # (TVM copies back a padded output the block never wrote)
    mod = IRModule({"main": from_source(RUN_TIME_SUM)})
    after = R.pad_einsum("S", [4, 1])(mod)
    verify(after)
    assert_equivalent(mod["main"], after["main"], sizes={"rows": 5, "cols": cols})


def test_pad_einsum_of_a_block_without_iteration_variables_leaves_it_as_it_is():
    # TVM accepts pad_einsum(block, []) on loop_partition's opaque blocks
    # (its own declare no regions) and pads nothing; tirfun's declare
    # what they hold, which is no einsum, but there is nothing to pad
    src = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    parted = R.loop_partition("i", [4, None])(mod)
    assert R.pad_einsum("B_i0_partition", [])(parted) is parted
    with pytest.raises(R.InvalidPaddingError, match="a list of 0 positive ints"):
        R.pad_einsum("B_i0_partition", [4])(parted)
    # a block with variables still takes one factor for each
    with pytest.raises(R.InvalidPaddingError):
        R.pad_einsum("B_i0", [])(parted)


@pytest.mark.parametrize("outer, inner, bound, copied_in", [
    (2, 4, None, False), (4, 2, None, False), (3, 3, 8, False), (4, 1, 3, False), (3, 3, 7, True)])
def test_pad_einsum_of_a_split_output_copies_it_in_only_where_the_split_may_skip_some(outer, inner, bound, copied_in):
    # vj = j_0 * inner + j_1 runs 0..outer * inner - 1 once each, as TVM's
    # slice after split. Over exactly the domain (2 x 4), or past it under
    # the split's guard vj < 8 (3 x 3; 4 x 1 for a domain of 3), the block
    # writes every element the copy back takes: no copy in is made, and
    # compute_inline of the block then applies, as in TVM. A guard short
    # of the domain (vj < 7 of 8) skips an element: the output is copied
    # in first, so the copy back returns it unchanged
    extent = 3 if inner == 1 else 8
    guard = "" if bound is None else f"\n            T.where(j_0 * {inner} + j_1 < {bound})"
    mod = mod_of(f"""
@T.prim_func
def main(A: T.Buffer(({extent},), "float32"), B: T.Buffer(({extent},), "float32")):
    for j_0, j_1 in T.grid({outer}, {inner}):
        with T.block("B"):
            vj = T.axis.spatial({extent}, j_0 * {inner} + j_1){guard}
            B[vj] = A[vj] * T.float32(2)
""")
    out = R.pad_einsum("B", [16])(mod)
    names = [b.name_hint for b in _blocks(out)]
    assert ("B_pad_in" in names) == copied_in, names
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    if not copied_in:
        inlined = R.compute_inline("B")(out)
        verify(inlined)
        assert_equivalent(mod["main"], inlined["main"])


def test_pad_einsum_of_a_split_into_parts_of_a_run_time_extent_needs_no_copy_in():
    # split(i, [2, None]) over m: vi = i_0 * ((m + 1) // 2) + i_1 under
    # vi < m (TVM's tir_id after split). The map tiles 0 .. 2 * ((m + 1)
    # // 2) - 1 once each, which reaches m - 1, and the guard cuts it to m:
    # every element the copy back takes is written, no copy in is made,
    # and compute_at of the block under the copy back applies, as in TVM
    src = """
@T.prim_func
def main(x: T.handle, y: T.handle):
    m, n = T.int32(), T.int32()
    A = T.match_buffer(x, (m, n), "int32")
    B = T.match_buffer(y, (m, n), "int32")
    for i, j in T.grid(m, n):
        with T.block("id"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
"""
    mod = mod_of(src)
    split = R.split("i", [2, None])(mod)
    out = R.pad_einsum("id", [9, 8])(split)
    assert "B_pad_in" not in [b.name_hint for b in _blocks(out)]
    verify(out)
    moved = R.compute_at("id", "i1_1")(out)
    verify(moved)
    for m, n in ((1, 3), (5, 8), (6, 9)):
        assert_equivalent(mod["main"], out["main"], sizes={"m": m, "n": n})
        assert_equivalent(mod["main"], moved["main"], sizes={"m": m, "n": n})
