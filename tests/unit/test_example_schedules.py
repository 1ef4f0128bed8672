"""The schedules of ``tirfun.examples.schedules`` (the kernels of
``benchmarks/cpu.py``), at small sizes: each scheduled kernel computes what
the interpreter computes on the plain program (bit for bit in exact IEEE
arithmetic; within the stated bound of contraction under
``-fast-math-contract``; within ``FAST_MATH_ULPS`` under ``-math=fast``),
its trace replays, and its hot loop is the one the schedule is for (the
accumulator tiles in registers, independent vector partial sums)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tirfun
from tirfun import Schedule, structural_equal
from tirfun.errors import ScheduleError
from tirfun.examples import schedules
from tirfun.interp import run as interp_run
from tirfun.runtime.target import host_description
from tirfun.testing.equivalence import compare_arrays, ulps_for

#: float32's unit roundoff
U32 = 2.0 ** -24


def contraction_bound(terms: int, magnitudes: np.ndarray) -> np.ndarray:
    """How far a contracted sum of ``terms`` products may lie from the exact
    build's: each is within gamma_n * sum |a*b| of the true sum (the dot
    product bound, the order of the additions fixed by the program, one
    rounding fewer per term when fused), so the two differ by at most twice
    that. ``magnitudes`` is sum |a*b| per result."""
    gamma = terms * U32 / (1 - terms * U32)
    return 2 * gamma * magnitudes


def run_both(program, sch: Schedule, target, args):
    """(the interpreter's outputs on the plain program, the scheduled
    kernel's compiled outputs), each on copies of ``args``."""
    expected = [a.copy() for a in args]
    actual = [a.copy() for a in args]
    interp_run(program["main"], *expected)
    tirfun.build(sch.mod, target=target)(*actual)
    return expected, actual


def assert_same_bits(actual, expected):
    np.testing.assert_array_equal(actual.view(np.uint32), expected.view(np.uint32))


def conv2d_reference(image: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The 3x3, padding 1 convolution in numpy, as nine shifted products."""
    _, c, h, w = image.shape
    padded = np.pad(image[0], ((0, 0), (1, 1), (1, 1)))
    out = np.zeros((weights.shape[0], h, w), image.dtype)
    for ry in range(3):
        for rx in range(3):
            out += np.einsum("kc,chw->khw", weights[:, :, ry, rx], padded[:, ry:ry + h, rx:rx + w])
    return out[None]


# -- matmul ------------------------------------------------------------------

def matmul_inputs(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    return [a, b, np.full((n, n), np.nan, np.float32)]


@pytest.mark.parametrize("seed", [0, 1])
def test_packed_matmul_is_the_interpreters_bit_for_bit(seed):
    args = matmul_inputs(64, seed)
    expected, actual = run_both(schedules.matmul(64), schedules.packed_matmul(64), "llvm", args)
    assert_same_bits(actual[2], expected[2])
    # and it is a matrix product (the interpreter is not wrong in the same way)
    np.testing.assert_allclose(expected[2], args[0].astype(np.float64) @ args[1], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows, cols", [(4, 16), (6, 16), (5, 8)])
def test_packed_matmul_with_other_tiles_is_the_interpreters_bit_for_bit(rows, cols):
    # 6 and 5 rows do not divide 32: the last tile is partitioned off
    args = matmul_inputs(32, 3)
    sch = schedules.packed_matmul(32, rows=rows, cols=cols)
    expected, actual = run_both(schedules.matmul(32), sch, "llvm", args)
    assert_same_bits(actual[2], expected[2])


def test_packed_matmul_contracted_stays_within_the_contraction_bound():
    n = 64
    args = matmul_inputs(n, 2)
    expected, actual = run_both(schedules.matmul(n), schedules.packed_matmul(n),
                                "llvm -fast-math-contract", args)
    magnitudes = np.abs(args[0]).astype(np.float64) @ np.abs(args[1]).astype(np.float64)
    gap = np.abs(actual[2].astype(np.float64) - expected[2])
    assert np.all(gap <= contraction_bound(n, magnitudes))


def test_packed_matmul_is_built_by_the_block_primitives_and_its_trace_replays():
    sch = schedules.packed_matmul(64)
    names = [type(step).__name__ for step in sch.trace.rewrites]
    for primitive in ("CacheRead", "ComputeAt", "CacheWrite", "ReverseComputeAt", "DecomposeReduction",
                      "LoopPartition"):
        assert primitive in names
    assert structural_equal(sch.trace(schedules.matmul(64)), sch.mod)
    lowered = tirfun.lower(sch.mod).script()
    # B is packed per panel of 64 columns, the full tiles accumulate in a
    # 6 x 64 buffer and the last tile (rows 60 to 63) in a 4 x 64 one, all
    # inside the parallel loop
    assert re.findall(r'T.allocate\(\[\d+\], "float32", "global"\)', lowered) == [
        'T.allocate([4096], "float32", "global")']
    assert re.findall(r'T.allocate\(\[\d+\], "float32", "local"\)', lowered) == [
        'T.allocate([384], "float32", "local")', 'T.allocate([256], "float32", "local")']


@pytest.mark.parametrize("n", [64, 32])
def test_packed_matmul_packing_b_whole_is_the_interpreters_bit_for_bit(n):
    # B copied once into contiguous panels of 32 columns before the product
    sch = schedules.packed_matmul(n, cols=32, pack="whole")
    names = [type(step).__name__ for step in sch.trace.rewrites]
    assert "TransformLayout" in names and "ComputeAt" not in names
    packed = [b for b in sch.mod["main"].body.block.alloc_buffers if b.name == "B_global"]
    assert [[int(d) for d in b.shape] for b in packed] == [[n // 32, n, 32]]
    assert structural_equal(sch.trace(schedules.matmul(n)), sch.mod)
    args = matmul_inputs(n, 5)
    expected, actual = run_both(schedules.matmul(n), sch, "llvm", args)
    assert_same_bits(actual[2], expected[2])


@pytest.mark.parametrize("n, rows", [(64, 14), (64, 8)])
def test_packed_matmul_packing_a_into_panels_of_rows_is_the_interpreters_bit_for_bit(n, rows):
    # A copied once into panels (i // rows, k, i % rows); 14 rows leave the
    # last panel 6 rows of zeros, which the partitioned last tile never reads
    sch = schedules.packed_matmul(n, rows=rows, pack="whole", pack_a=True)
    packed = [b for b in sch.mod["main"].body.block.alloc_buffers if b.name == "A_global"]
    assert [[int(d) for d in b.shape] for b in packed] == [[-(-n // rows), n, rows]]
    assert structural_equal(sch.trace(schedules.matmul(n)), sch.mod)
    args = matmul_inputs(n, 6)
    expected, actual = run_both(schedules.matmul(n), sch, "llvm", args)
    assert_same_bits(actual[2], expected[2])


def test_packed_matmul_packs_a_for_tall_tiles_from_its_threshold_on():
    def packs_a(n, rows):
        sch = schedules.packed_matmul(n, rows=rows)
        return any(b.name == "A_global" for b in sch.mod["main"].body.block.alloc_buffers)

    tall, short = schedules.PACK_A_ABOVE_ROWS + 1, schedules.PACK_A_ABOVE_ROWS
    assert packs_a(schedules.PACK_A_FROM, tall)
    assert not packs_a(schedules.PACK_A_FROM - 64, tall)
    # the rows of a short tile fit the ways of the L1 cache: A stays as it is
    assert not packs_a(schedules.PACK_A_FROM, short)
    assert not packs_a(schedules.PACK_A_FROM, 6)


def test_packed_matmul_packs_b_per_panel_unless_asked_to_pack_it_whole():
    def packing(n, **kw):
        # whole: B's copy takes the layout (j // cols, k, j % cols); per panel it keeps B's shape
        (copy,) = [b for b in schedules.packed_matmul(n, **kw).mod["main"].body.block.alloc_buffers
                   if b.name == "B_global"]
        return "whole" if len(copy.shape) == 3 else "panel"

    assert packing(1024) == packing(64) == "panel"
    assert packing(64, pack="whole") == "whole"
    with pytest.raises(ScheduleError, match="pack must be 'whole' or 'panel', got 'rows'"):
        schedules.packed_matmul(64, pack="rows")


# -- conv2d ------------------------------------------------------------------

def conv_inputs(c, k, size, seed):
    rng = np.random.default_rng(seed)
    image = rng.standard_normal((1, c, size, size)).astype(np.float32)
    weights = rng.standard_normal((k, c, 3, 3)).astype(np.float32)
    return [image, weights, np.full((1, k, size, size), np.nan, np.float32)]


@pytest.mark.parametrize("size, cols, lanes, vectors", [(16, 4, 8, 1), (8, 4, 4, 2), (14, 7, 4, 1)])
def test_conv2d_is_the_interpreters_bit_for_bit(size, cols, lanes, vectors):
    args = conv_inputs(8, 8, size, size)
    expected, actual = run_both(schedules.conv2d_nchw_program(8, 8, size),
                                schedules.conv2d_nchw(8, 8, size, cols, lanes, vectors), "llvm", args)
    assert_same_bits(actual[2], expected[2])
    reference = conv2d_reference(args[0].astype(np.float64), args[1].astype(np.float64))
    np.testing.assert_allclose(expected[2], reference, rtol=1e-4, atol=1e-4)


def test_conv2d_contracted_stays_within_the_contraction_bound():
    c, size = 8, 16
    args = conv_inputs(c, 8, size, 3)
    expected, actual = run_both(schedules.conv2d_nchw_program(c, 8, size),
                                schedules.conv2d_nchw(c, 8, size, cols=4, lanes=8),
                                "llvm -fast-math-contract", args)
    magnitudes = conv2d_reference(np.abs(args[0]).astype(np.float64), np.abs(args[1]).astype(np.float64))
    gap = np.abs(actual[2].astype(np.float64) - expected[2])
    assert np.all(gap <= contraction_bound(9 * c, magnitudes))


# -- softmax and row sum -----------------------------------------------------

def check_against_interpreter(sch, args, math):
    """The compiled kernel against the interpreter on the scheduled module:
    rfactor reassociates a float sum, so the plain program's result differs
    in the last bits, legitimately."""
    func = sch.mod["main"]
    expected = [a.copy() for a in args]
    actual = [a.copy() for a in args]
    interp_run(func, *expected)
    tirfun.build(sch.mod, target=f"llvm -math={math}")(*actual)
    for p, x, y in zip(func.params, expected, actual):
        buf = func.buffer_map[p]
        problem = compare_arrays(buf.name, x, y, buf.dtype, ulps_for(sch.mod, math=math))
        assert problem is None, problem
    return actual


def numpy_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("math", ["exact", "fast"])
def test_softmax_is_the_interpreters(math):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((8, 64)) * 20).astype(np.float32)
    sch = schedules.softmax(8, 64)
    actual = check_against_interpreter(sch, [x, np.zeros_like(x)], math)
    np.testing.assert_allclose(actual[1], numpy_softmax(x), rtol=1e-5, atol=1e-30)


def test_softmax_places_every_stage_under_the_row_loop():
    sch = schedules.softmax(8, 64)
    names = [type(step).__name__ for step in sch.trace.rewrites]
    assert names.count("ComputeAt") == 5 and names.count("RFactor") == 2
    assert structural_equal(sch.trace(schedules.softmax_program(8, 64)), sch.mod)
    func = sch.mod["main"]
    # one parallel loop at the top of the function holds every stage
    top = func.body.block.body
    assert isinstance(top, tirfun.nodes.For) and top.kind.name == "PARALLEL"


def _exp_calls(ll: str) -> set[str]:
    """The functions called for exp (``expf``, ``llvm.exp.*``) in LLVM IR."""
    return {name for name in re.findall(r"call [^@]*@([\w.]+)", ll)
            if re.search(r"(^|\.)exp(f|\.|$)", name)}


def test_softmax_with_fast_math_computes_exp_inline_in_vectors():
    sch = schedules.softmax(8, 64)
    assert not _exp_calls(tirfun.build(sch.mod, target="llvm -math=fast").get_source("ll"))
    assert _exp_calls(tirfun.build(sch.mod, target="llvm -math=exact").get_source("ll"))


@pytest.mark.parametrize("lanes, tail", [(32, 16), (64, 16), (64, 8), (64, None), (16, 16)])
def test_row_sum_rfactor_is_the_interpreters_and_a_row_sum(lanes, tail):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((8, 256)).astype(np.float32)
    sch = schedules.row_sum_rfactor(8, 256, lanes, tail)
    actual = check_against_interpreter(sch, [a, np.zeros(8, np.float32)], "exact")
    np.testing.assert_allclose(actual[1], a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    assert structural_equal(sch.trace(schedules.row_sum(8, 256)), sch.mod)
    # with a tree, the lanes' partial sums are summed tail lanes at a time
    # first: a buffer of lanes // tail x tail partials under one of tail
    shapes = sorted([int(d) for d in b.shape] for b in sch.mod["main"].body.block.alloc_buffers)
    if tail in (None, lanes):
        assert shapes == [[8, lanes]]
    else:
        assert shapes == sorted([[8, tail], [8, lanes // tail, tail]])


def test_row_sum_rfactor_refuses_a_tail_that_does_not_divide_the_lanes():
    with pytest.raises(ScheduleError, match="extent 64 of loop 'k_1' is not a multiple of the tile size 24"):
        schedules.row_sum_rfactor(4, 128, 64, 24)


# -- the hot loops -------------------------------------------------------------

def _blocks(ll: str) -> dict[str, str]:
    """The basic blocks of LLVM IR text, by label."""
    out, label = {}, None
    for line in ll.splitlines():
        m = re.match(r"^([\w.$-]+):", line)
        if m:
            label = m.group(1)
            out[label] = ""
        elif line.startswith("}"):
            label = None
        elif label is not None:
            out[label] += line + "\n"
    return out


def _hot_loops(ll: str, vector: str) -> list[str]:
    """Blocks that branch back to themselves and add ``vector`` values: the
    reduction loop's body after LLVM's optimisation."""
    found = []
    for label, body in _blocks(ll).items():
        branches = re.findall(r"\bbr\b[^\n]*", body)
        loops_back = any(f"%{label}" in re.split(r"[,\s]+", b) for b in branches)
        if loops_back and re.search(rf"(fadd|fma\w*)[^\n]*{re.escape(vector)}", body):
            found.append(body)
    return found


@pytest.mark.parametrize("target", ["llvm", "llvm -fast-math-contract"])
def test_matmul_accumulator_tile_stays_in_registers(target):
    rows, cols = 8, 32
    rt = tirfun.build(schedules.packed_matmul(64, rows=rows, cols=cols).mod, target=target)
    ll = rt.get_source("ll")
    # the tile's stack slot is gone: its elements became SSA values
    assert not re.search(r"%C_local\w*\s*=\s*alloca", ll)
    loops = _hot_loops(ll, f"<{cols} x float>")
    assert loops
    for body in loops:
        assert "store" not in body
        # one vector of the B panel and one element of each of the tile's rows
        # of A per step of k; nothing else is read: the tile is carried in
        # registers from one step to the next
        vector_loads = re.findall(rf"= load <{cols} x float>", body)
        scalar_loads = re.findall(r"= load float,", body)
        assert vector_loads and len(scalar_loads) == rows * len(vector_loads)
        assert len(re.findall(r"\bload\b", body)) == len(vector_loads) + len(scalar_loads)
        assert len(re.findall(rf"= phi <{cols} x float>", body)) == rows
    if target != "llvm" and "+fma" in host_description()[2].split(","):
        assert re.search(r"\bvfmadd\w*ps\b", rt.get_source("asm"))


@pytest.mark.parametrize("cols, vectors", [(4, 1), (2, 2)])
def test_conv2d_accumulator_tile_stays_in_registers(cols, vectors):
    size, lanes = 16, 4
    rt = tirfun.build(schedules.conv2d_nchw(8, 8, size, cols, lanes, vectors).mod)
    ll = rt.get_source("ll")
    assert not re.search(r"%conv_local\w*\s*=\s*alloca", ll)
    loops = _hot_loops(ll, f"<{lanes} x float>")
    assert loops
    for body in loops:
        # per step of the window (LLVM may unroll the window's nine): one
        # vector of weights per vector of the tile, at most one element of
        # the input per pixel (fewer where an unrolled window shares them),
        # nothing else read and nothing stored
        assert "store" not in body
        assert len(re.findall(rf"= phi <{lanes} x float>", body)) == cols * vectors
        vector_loads = re.findall(rf"= load <{lanes} x float>", body)
        scalar_loads = re.findall(r"= load float,", body)
        assert vector_loads and len(vector_loads) % vectors == 0
        assert 0 < len(scalar_loads) * vectors <= len(vector_loads) * cols
        assert len(re.findall(r"\bload\b", body)) == len(vector_loads) + len(scalar_loads)


def test_row_sum_streams_each_row_into_independent_vector_partials():
    lanes = 64
    rt = tirfun.build(schedules.row_sum_rfactor(2, 64 * 256, lanes).mod)
    loops = _hot_loops(rt.get_source("ll"), f"<{lanes} x float>")
    assert loops
    for body in loops:
        # the partial sums stay in registers: read A, add, nothing stored
        assert "store" not in body
        assert re.findall(rf"= load <{lanes} x float>", body)
        assert len(re.findall(rf"= phi <{lanes} x float>", body)) == 1


def test_sizes_that_do_not_tile_are_refused():
    with pytest.raises(ScheduleError, match="extent 60 of loop 'j' is not a multiple of the tile size 64"):
        schedules.packed_matmul(60)
    with pytest.raises(ScheduleError, match="extent 12 of loop 'x' is not a multiple of the tile size 14"):
        schedules.conv2d_nchw(size=12)
    with pytest.raises(ScheduleError, match="extent 8 of loop 'f' is not a multiple of the tile size 16"):
        schedules.conv2d_nchw(filters=8)
    with pytest.raises(ScheduleError, match="extent 100 of loop 'k' is not a multiple of the tile size 16"):
        schedules.softmax(4, 100)
    with pytest.raises(ScheduleError, match="extent 100 of loop 'k' is not a multiple of the tile size 64"):
        schedules.row_sum_rfactor(4, 100)


# -- byte matmul -------------------------------------------------------------

@pytest.mark.parametrize("rows", [4, 8])
def test_byte_matmul_vnni_is_numpys_product_and_its_trace_replays(rows):
    n = 64
    sch = schedules.byte_matmul_vnni(n, rows)
    rng = np.random.default_rng(rows)
    a = rng.integers(0, 256, (n, n), dtype=np.uint8)
    b = rng.integers(-128, 128, (n, n), dtype=np.int8)
    packed = b.reshape(n // 16, 16, n // 4, 4).transpose(0, 2, 1, 3).copy()
    want = a.astype(np.int64) @ b.astype(np.int64).T
    got = np.zeros((n, n), np.int32)
    interp_run(sch.mod["main"], a, packed, got)
    np.testing.assert_array_equal(got, want)
    assert structural_equal(sch.trace(tirfun.IRModule({"main": schedules.byte_matmul(n)["main"]})), sch.mod)
    if "+avx512vnni" not in host_description()[2].split(","):
        pytest.skip("the CPU has no avx512vnni")
    rt = tirfun.build(sch.mod)
    built = np.zeros((n, n), np.int32)
    rt(a, packed, built)
    np.testing.assert_array_equal(built, got)
    # one vpdpbusd per tile row and step of k, its operands loaded whole
    # (a per-lane gather would read each of the 64 bytes apart)
    ll = rt.get_source("ll")
    # (LLVM may unroll the k loop too: a multiple of the rows, at most one per row and step)
    calls = len(re.findall(r"call <16 x i32> @llvm\.x86\.avx512\.vpdpbusd\.512", ll))
    assert calls and calls % rows == 0 and calls <= rows * (n // 4)
    assert re.search(r"load <64 x i8>", ll) and "gather" not in ll
