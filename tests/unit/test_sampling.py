"""Sampling primitives on Schedule: what each can draw, decisions forced and
checked, determinism under a seed, and schedules built from samples that
keep the meaning and replay from their traces."""

import itertools
import math
from collections import Counter

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun import sampling
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.nodes import IRModule
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

TWO_STAGES = """
@T.prim_func
def main(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
    B = T.alloc_buffer((16, 12))
    for i, j in T.grid(16, 12):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 12):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((8, 6), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8, 6))
    for i, j in T.grid(8, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, k in T.grid(8, 6):
        with T.block("D"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                D[vi] = T.float32(0)
            D[vi] = D[vi] + B[vi, vk]
"""


def _mod(src: str = TWO_STAGES) -> IRModule:
    return IRModule({"main": from_source(src)})


def _same_results_built(before: IRModule, after: IRModule) -> None:
    """The interpreter gives the same results before and after, and the
    LLVM build of ``after`` the interpreter's results, bit for bit."""
    verify(after)
    assert_equivalent(before["main"], after["main"])
    func = after["main"]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d) for d in func.buffer_map[p].shape]).astype("float32")
            for p in func.params]
    expected = [a.copy() for a in args]
    interp_run(func, *expected)
    tirfun.build(after, target="llvm")(*args)
    for x, y in zip(expected, args):
        assert x.tobytes() == y.tobytes()


# -- sample_categorical ------------------------------------------------------------------

def test_sample_categorical_draws_every_candidate_with_weight_and_no_other():
    sch = Schedule(_mod(), seed=42)
    candidates = [5, 2, 7, 1, 9]
    probs = [0.15, 0.55, 0.0, 0.3, 0.0]
    n = 4000
    counts = Counter(sch.sample_categorical(candidates, probs) for _ in range(n))
    assert set(counts) == {5, 2, 1}
    for c, p in zip(candidates, probs):
        assert abs(counts[c] / n - p) < 0.04, counts


def test_sample_categorical_weights_need_not_sum_to_one():
    sch = Schedule(_mod(), seed=7)
    counts = Counter(sch.sample_categorical([0, 1], [1, 3]) for _ in range(2000))
    assert abs(counts[1] / 2000 - 0.75) < 0.04


def test_sample_categorical_decision_is_an_index_and_is_checked():
    sch = Schedule(_mod(), seed=1)
    assert sch.sample_categorical([5, 6, 7], [0.2, 0.3, 0.5], decision=2) == 7
    # a forced decision may pick a candidate of probability 0, as TVM's does
    assert sch.sample_categorical([5, 6], [1.0, 0.0], decision=1) == 6
    with pytest.raises(R.InvalidArgumentError, match="decision: the decision is an index into the 3 candidates, "
                                                     "got 3"):
        sch.sample_categorical([5, 6, 7], [0.2, 0.3, 0.5], decision=3)
    with pytest.raises(R.InvalidArgumentError, match="expected 3 probabilities"):
        sch.sample_categorical([5, 6, 7], [0.5, 0.5])
    with pytest.raises(R.InvalidArgumentError, match="finite number >= 0, got -0.5"):
        sch.sample_categorical([5, 6], [1.5, -0.5])
    with pytest.raises(R.InvalidArgumentError, match="sum to 0"):
        sch.sample_categorical([5, 6], [0, 0])
    with pytest.raises(R.InvalidArgumentError, match="non-empty list of ints"):
        sch.sample_categorical([], [])


# -- sample_perfect_tile ---------------------------------------------------------------------

def _tilings(extent: int, n: int):
    """Every ordered way to write ``extent`` as ``n`` positive factors."""
    divisors = [d for d in range(1, extent + 1) if extent % d == 0]
    return {t for t in itertools.product(divisors, repeat=n) if math.prod(t) == extent}


@pytest.mark.parametrize("extent, n, limit", [(12, 3, 16), (16, 2, 4), (16, 4, -1), (7, 2, 16), (1, 3, 16)])
def test_sample_perfect_tile_reaches_every_tiling_within_the_limit(extent, n, limit):
    sch = Schedule(_mod(), seed=3)
    rng_loop = R.LoopRef("i")
    expected = {t for t in _tilings(extent, n) if limit == -1 or t[-1] <= limit}
    seen = set()
    state = sampling.Rng(11)
    for _ in range(3000):
        seen.add(tuple(sampling.perfect_tile(state, extent, n, limit)))
    assert seen == expected
    # and through the schedule, on a loop of that extent (16)
    if extent == 16:
        drawn = {tuple(sch.sample_perfect_tile(rng_loop, n, limit)) for _ in range(2000)}
        assert drawn == expected


def test_sample_perfect_tile_decision_is_checked():
    sch = Schedule(_mod(), seed=5)
    loop = sch.get_loops("B")[0]  # extent 16
    assert sch.sample_perfect_tile(loop, 3, decision=[2, 4, 2]) == [2, 4, 2]
    with pytest.raises(R.InvalidArgumentError, match=r"decision: the factors \[2, 4, 4\] multiply to 32, not to "
                                                     r"the loop's extent 16"):
        sch.sample_perfect_tile(loop, 3, decision=[2, 4, 4])
    with pytest.raises(R.InvalidArgumentError, match=r"expected a list of 3 factors, got \[4, 4\]"):
        sch.sample_perfect_tile(loop, 3, decision=[4, 4])
    with pytest.raises(R.InvalidArgumentError, match=r"expected an int of at least 1, got 0"):
        sch.sample_perfect_tile(loop, 2, decision=[16, 0])
    with pytest.raises(R.InvalidArgumentError, match=r"innermost factor of \[1, 16\] is more than "
                                                     r"max_innermost_factor=8"):
        sch.sample_perfect_tile(loop, 2, max_innermost_factor=8, decision=[1, 16])
    with pytest.raises(R.InvalidArgumentError, match="needs 2 tiles or more"):
        sch.sample_perfect_tile(loop, 1)
    assert sch.sample_perfect_tile(loop, 1, max_innermost_factor=-1) == [16]
    with pytest.raises(R.RefKindError):
        sch.sample_perfect_tile(sch.get_block("B"), 2)
    with pytest.raises(R.UnknownLoopError):
        sch.sample_perfect_tile("nope", 2)


def test_sample_perfect_tile_of_a_symbolic_loop_is_trivial():
    src = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]
"""
    mod = _mod(src)
    sch = Schedule(mod, seed=9)
    (loop,) = sch.get_loops("B")
    tiles = sch.sample_perfect_tile(loop, 3)
    assert tiles == [None, 1, 1]
    assert sch.sample_perfect_tile(loop, 3, decision=[-1, 1, 1]) == [None, 1, 1]  # TVM's decision
    with pytest.raises(R.InvalidArgumentError, match=r"the only tiling is \[None, 1\]"):
        sch.sample_perfect_tile(loop, 2, decision=[2, 2])
    # split infers the None; the partitioned tile keeps TVM's -1
    sch.split(loop, tiles)
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"])
    assert sch.sample_partitioned_tile(sch.get_loops("B")[0], 2) == [-1, 1]


# -- sample_partitioned_tile ------------------------------------------------------------------

def test_sample_partitioned_tile_inner_part_is_a_multiple_of_the_factor():
    sch = Schedule(_mod(), seed=13)
    loop = sch.get_loops("B")[0]  # extent 16
    seen = set()
    for _ in range(1500):
        tiles = sch.sample_partitioned_tile(loop, 3, partition_pos=1, innerpart_factor=4)
        assert math.prod(tiles) == 16 and math.prod(tiles[1:]) % 4 == 0
        seen.add(tuple(tiles))
    assert seen == {t for t in _tilings(16, 3) if math.prod(t[1:]) % 4 == 0}
    assert sch.sample_partitioned_tile(loop, 3, 1, 4, decision=[2, 2, 4]) == [2, 2, 4]
    with pytest.raises(R.InvalidArgumentError, match=r"the factors of \[8, 1, 2\] from position 1 on do not "
                                                     r"multiply to a multiple of 4"):
        sch.sample_partitioned_tile(loop, 3, 1, 4, decision=[8, 1, 2])
    # 16 is no multiple of 3: the trivial answer, as TVM's
    assert sch.sample_partitioned_tile(loop, 2, 1, 3) == [-1, 1]
    with pytest.raises(R.InvalidArgumentError, match="expected a position among the 2 tiles"):
        sch.sample_partitioned_tile(loop, 2, 2, 1)


# -- sample_compute_location ------------------------------------------------------------------

def test_compute_locations_are_tvms():
    mod = _mod()
    found = sampling.compute_locations(mod, R.BlockRef("B", "main"))
    assert found == [(-2, sampling.INLINE_MARK), (-1, sampling.ROOT_MARK), (0, R.LoopRef("i_1", "main")),
                     (1, R.LoopRef("j_1", "main"))]
    # the consumer's reduction loop k is a trailing one: not a location;
    # inline is listed because compute_inline applies to B
    found = sampling.compute_locations(_mod(ROW_SUM), R.BlockRef("B", "main"))
    assert [i for i, _ in found] == [-2, -1, 0]
    # the last block has no consumer: root only
    assert sampling.compute_locations(mod, R.BlockRef("C", "main")) == [(-1, sampling.ROOT_MARK)]


TILED_CONV = """
@T.prim_func
def main(inputs: T.Buffer((1, 224, 224, 3), "float32"), weight: T.Buffer((7, 7, 3, 64), "float32"),
         conv2d_nhwc: T.Buffer((1, 112, 112, 64), "float32")):
    PadInput = T.alloc_buffer([1, 230, 230, 3], dtype="float32")
    for i0, i1, i2, i3 in T.grid(1, 230, 230, 3):
        with T.block("PadInput"):
            i0_1, i1_1, i2_1, i3_1 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            PadInput[i0_1, i1_1, i2_1, i3_1] = T.if_then_else(
                3 <= i1_1 and i1_1 < 227 and 3 <= i2_1 and i2_1 < 227,
                inputs[i0_1, i1_1 - 3, i2_1 - 3, i3_1], T.float32(0), dtype="float32")
    for i0_0, i1_0, i2_0, i3_0, i0_1_1, i1_1_1, i2_1_1, i3_1_1, i4_0, i5_0, i6_0, i0_2, i1_2, i2_2, i3_2, \
            i4_1, i5_1, i6_1, i0_3, i1_3, i2_3, i3_3 in T.grid(1, 1, 4, 1, 1, 2, 4, 1, 7, 7, 1, 1, 1, 1, 1, 1,
                                                               1, 3, 1, 56, 7, 64):
        with T.block("conv2d_nhwc"):
            n = T.axis.spatial(1, 0)
            h = T.axis.spatial(112, i1_1_1 * 56 + i1_3)
            w = T.axis.spatial(112, i2_0 * 28 + i2_1_1 * 7 + i2_3)
            co, rh, rw, rc = T.axis.remap("SRRR", [i3_3, i4_0, i5_0, i6_1])
            with T.init():
                conv2d_nhwc[n, h, w, co] = T.float32(0)
            conv2d_nhwc[n, h, w, co] = conv2d_nhwc[n, h, w, co] + \
                PadInput[n, h * 2 + rh, w * 2 + rw, co // 64 * 3 + rc] * weight[rh, rw, rc, co]
"""


def test_compute_locations_of_a_tiled_conv2d_are_tvms_eight():
    # TVM lists 8 locations of the padding block here: inline, root, and the
    # loops above the consumer that are not unit loops, not data-parallel
    # after a reduction loop, and not trailing reduction loops
    mod = _mod(TILED_CONV)
    found = sampling.compute_locations(mod, R.BlockRef("PadInput", "main"))
    assert [i for i, _ in found] == [-2, -1, 2, 5, 6, 8, 9, 17]
    assert [loc.name for _, loc in found[2:]] == ["i2_0", "i1_1_1", "i2_1_1", "i4_0", "i5_0", "i6_1"]
    sch = Schedule(mod, seed=42)
    drawn = Counter(sch.sample_compute_location("PadInput") for _ in range(800))
    assert set(drawn) == {loc for _, loc in found}
    assert all(abs(c / 800 - 1 / 8) < 0.05 for c in drawn.values()), drawn


@pytest.mark.parametrize("src", [TWO_STAGES, ROW_SUM])
def test_sample_compute_location_draws_every_location_and_each_keeps_the_meaning(src):
    mod = _mod(src)
    sch = Schedule(mod, seed=21)
    locations = {loc for _, loc in sampling.compute_locations(mod, R.BlockRef("B", "main"))}
    drawn = Counter(sch.sample_compute_location("B") for _ in range(400))
    assert set(drawn) == locations
    for loc in locations:
        s = Schedule(mod)
        s.compute_at("B", loc)
        _same_results_built(mod, s.mod)
        # the trace records the decision as a plain primitive: it replays
        assert R.Pipeline.from_json(s.trace.to_json())(mod) == s.mod


def test_sample_compute_location_decision_is_checked():
    sch = Schedule(_mod(), seed=2)
    assert sch.sample_compute_location("B", decision=1) == R.LoopRef("j_1", "main")
    assert sch.sample_compute_location("B", decision=-2) == Schedule.INLINE_MARK
    with pytest.raises(R.InvalidArgumentError, match=r"decision: 2 is not a location of the block \(the "
                                                     r"locations are -2, -1, 0, 1\)"):
        sch.sample_compute_location("B", decision=2)
    with pytest.raises(R.UnknownBlockError):
        sch.sample_compute_location("X")


def test_reverse_compute_at_takes_the_marks():
    mod = _mod()
    sch = Schedule(mod)
    sch.reverse_compute_at("C", Schedule.ROOT_MARK)
    assert sch.mod == mod and not list(sch.trace)
    sch.reverse_compute_at("C", Schedule.INLINE_MARK)
    assert [r.primitive for r in sch.trace] == ["reverse_compute_inline"]
    _same_results_built(mod, sch.mod)


# -- seeds --------------------------------------------------------------------------------------

def _decisions(sch: Schedule) -> list:
    loop = sch.get_loops("B")[0]
    out = []
    for _ in range(20):
        out.append(sch.sample_categorical([1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4]))
        out.append(tuple(sch.sample_perfect_tile(loop, 3)))
        out.append(tuple(sch.sample_partitioned_tile(loop, 2, 1, 2)))
        out.append(sch.sample_compute_location("B"))
    return out


def test_the_same_seed_gives_the_same_decisions():
    first = _decisions(Schedule(_mod(), seed=1234))
    assert _decisions(Schedule(_mod(), seed=1234)) == first
    assert _decisions(Schedule(_mod(), seed=4321)) != first
    sch = Schedule(_mod(), seed=99)
    _decisions(sch)
    sch.seed(1234)  # restarts the state
    assert _decisions(sch) == first


def test_fork_seed_and_copy():
    a, b = Schedule(_mod(), seed=5), Schedule(_mod(), seed=5)
    forked = a.fork_seed()
    assert isinstance(forked, int) and 1 <= forked < sampling.MODULUS
    assert forked == b.fork_seed()  # a function of the state
    assert a.fork_seed() != forked  # the state moved on
    # a copy draws from a forked state: not the original's next draws
    c = Schedule(_mod(), seed=5)
    copy = c.copy()
    assert _decisions(copy) != _decisions(Schedule(_mod(), seed=5))
    assert _decisions(Schedule(_mod(), seed=5).copy()) == _decisions(Schedule(_mod(), seed=5).copy())


def test_seed_arguments_are_checked():
    with pytest.raises(R.InvalidArgumentError, match=r"seed: expected None or an int in \[1, 2147483647\]"):
        Schedule(_mod(), seed=0)
    with pytest.raises(R.InvalidArgumentError, match="seed: expected None or an int"):
        Schedule(_mod(), seed="1")
    sch = Schedule(_mod())
    with pytest.raises(R.InvalidArgumentError, match="the seed must be -1 or non-negative, got -5"):
        sch.seed(-5)
    sch.seed(-1)  # one from the operating system
    sch.seed(0)


def test_a_refused_sample_leaves_the_state_as_it_was():
    a, b = Schedule(_mod(), seed=77), Schedule(_mod(), seed=77)
    with pytest.raises(R.InvalidArgumentError):
        a.sample_categorical([1, 2], [0, 0])
    assert _decisions(a) == _decisions(b)


# -- schedules built from samples -----------------------------------------------------------------

def _sampled_schedule(mod: IRModule, seed: int) -> Schedule:
    sch = Schedule(mod, seed=seed, debug_mask="all")
    i, j = sch.get_loops("C")
    sch.split(i, sch.sample_perfect_tile(i, 2, max_innermost_factor=4))
    sch.split(j, sch.sample_partitioned_tile(j, 3, partition_pos=1, innerpart_factor=2))
    sch.compute_at("B", sch.sample_compute_location("B"))
    return sch


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_a_schedule_built_from_samples_replays_from_its_trace(seed):
    mod = _mod()
    sch = _sampled_schedule(mod, seed)
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    assert _sampled_schedule(mod, seed).mod == sch.mod
    _same_results_built(mod, sch.mod)


def test_transform_layout_with_sampled_factors():
    # the sampled factors are plain ints: the index map holds them, and the
    # trace replays without sampling again
    src = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""
    mod = _mod(src)
    sch = Schedule(mod, debug_mask="all")
    block = sch.get_block("B")
    loop = sch.get_loops(block)[-1]
    _, j1, j2 = sch.sample_perfect_tile(loop, 3, decision=[4, 8, 4])
    sch.transform_layout(block, ("write", 0), lambda i, j: (i, j // (j1 * j2), j % (j1 * j2)))
    assert [int(d) for d in sch.get(block).writes[0].buffer.shape] == [128, 4, 32]
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    _same_results_built(mod, sch.mod)
