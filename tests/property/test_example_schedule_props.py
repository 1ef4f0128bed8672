"""The CPU schedules of ``tirfun.examples.schedules`` on random sizes and
tiles: compiled without contraction, each is the interpreter's result on the
plain program, bit for bit. Tiles that do not divide the rows of the matmul
take the partitioned last tile (and, with A packed into panels of rows, a
panel padded with zeros); the convolution's tile shapes vary in pixels,
lanes and vectors."""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.examples import schedules
from tirfun.interp import run as interp_run

# each example compiles a kernel: 40 examples in CI (of a plain property's 300)
_FEW = max(1, settings().max_examples * 40 // 300)


def _same_bits(actual, expected):
    np.testing.assert_array_equal(actual.view(np.uint32), expected.view(np.uint32))


@st.composite
def matmul_tiles(draw):
    cols = draw(st.sampled_from([4, 8, 16]))
    n = cols * draw(st.integers(1, 4))
    rows = draw(st.integers(1, min(n, 15)))
    return n, rows, cols, draw(st.sampled_from(["whole", "panel"])), draw(st.booleans())


@settings(max_examples=_FEW)
@given(matmul_tiles(), st.integers(0, 2**32 - 1))
def test_the_packed_matmul_is_the_interpreters_on_any_tile(tiles, seed):
    n, rows, cols, pack, pack_a = tiles
    sch = schedules.packed_matmul(n, rows, cols, pack, pack_a)
    names = [type(step).__name__ for step in sch.trace.rewrites]
    assert ("LoopPartition" in names) == (n % rows != 0)
    # B's panels and A's, each packed by a transform_layout of its copy
    assert names.count("TransformLayout") == (pack == "whole") + pack_a
    event(f"B packed {pack}" + (", A packed" + (" with padding" if n % rows else "") if pack_a else ""))
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    expected, actual = np.full((n, n), np.nan, np.float32), np.full((n, n), np.nan, np.float32)
    interp_run(schedules.matmul(n)["main"], a, b, expected)
    tirfun.build(sch.mod, target="llvm")(a, b, actual)
    _same_bits(actual, expected)


@st.composite
def conv_tiles(draw):
    lanes = draw(st.sampled_from([2, 4]))
    vectors = draw(st.sampled_from([1, 2]))
    filters = lanes * vectors * draw(st.integers(1, 2))
    cols = draw(st.sampled_from([2, 3, 4]))
    size = cols * draw(st.integers(1, 3))
    channels = draw(st.integers(1, 3))
    return channels, filters, size, cols, lanes, vectors


@settings(max_examples=_FEW)
@given(conv_tiles(), st.integers(0, 2**32 - 1))
def test_the_convolution_is_the_interpreters_on_any_tile(tiles, seed):
    channels, filters, size, cols, lanes, vectors = tiles
    sch = schedules.conv2d_nchw(channels, filters, size, cols, lanes, vectors)
    rng = np.random.default_rng(seed)
    image = rng.standard_normal((1, channels, size, size)).astype(np.float32)
    weights = rng.standard_normal((filters, channels, 3, 3)).astype(np.float32)
    expected = np.full((1, filters, size, size), np.nan, np.float32)
    actual = expected.copy()
    interp_run(schedules.conv2d_nchw_program(channels, filters, size)["main"], image, weights, expected)
    tirfun.build(sch.mod, target="llvm")(image, weights, actual)
    _same_bits(actual, expected)


def _tree_sum(a: np.ndarray, lanes: int, tail: int | None) -> np.ndarray:
    """The row sums in the order the rfactor'd schedule adds, in float32:
    ``lanes`` interleaved partial sums along each row, summed ``tail`` lanes
    at a time into ``tail`` sums (no step where ``tail`` is None), then
    those one after another."""
    rows, cols = a.shape
    partial = np.zeros((rows, lanes), np.float32)
    for step in range(cols // lanes):
        partial = partial + a[:, step * lanes:(step + 1) * lanes]
    if tail is not None and tail != lanes:
        sums = np.zeros((rows, tail), np.float32)
        for group in range(lanes // tail):
            sums = sums + partial[:, group * tail:(group + 1) * tail]
        partial = sums
    out = np.zeros(rows, np.float32)
    for lane in range(partial.shape[1]):
        out = out + partial[:, lane]
    return out


@st.composite
def row_sum_tiles(draw):
    lanes = draw(st.sampled_from([4, 8, 16, 32, 64]))
    tail = draw(st.sampled_from([None] + [t for t in (2, 4, 8, 16) if lanes % t == 0 and t < lanes]))
    return draw(st.integers(1, 5)), lanes * draw(st.integers(1, 4)), lanes, tail


@settings(max_examples=_FEW)
@given(row_sum_tiles(), st.integers(0, 2**32 - 1))
def test_the_rfactor_row_sum_adds_in_its_trees_order(tiles, seed):
    rows, cols, lanes, tail = tiles
    sch = schedules.row_sum_rfactor(rows, cols, lanes, tail)
    names = [type(step).__name__ for step in sch.trace.rewrites]
    assert names.count("RFactor") == (1 if tail is None else 2)
    event("one rfactor" if tail is None else "a tree of two rfactors")
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    expected, actual = np.full(rows, np.nan, np.float32), np.full(rows, np.nan, np.float32)
    interp_run(sch.mod["main"], a, expected)
    _same_bits(expected, _tree_sum(a, lanes, tail))
    tirfun.build(sch.mod, target="llvm")(a, actual)
    _same_bits(actual, expected)
