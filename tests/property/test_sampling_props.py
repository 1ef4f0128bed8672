"""Properties of the sampling primitives: every perfect or partitioned tile
drawn is a tiling of the loop's extent within its limits, and the same
seed draws the same tiles."""

import math

from hypothesis import given
from hypothesis import strategies as st

from tirfun import sampling
from tirfun.nodes import IRModule
from tirfun.schedule import Schedule
from tirfun.script import from_source

# extents with many factors, large primes and powers of two among them
extents = st.one_of(st.integers(1, 5000), st.sampled_from([2**20, 65537, 2147483629, 720720, 3 * 2**15]))
seeds = st.integers(1, sampling.MODULUS - 1)


@given(extent=extents, n=st.integers(2, 6), limit=st.sampled_from([-1, 1, 2, 4, 16, 64]), seed=seeds)
def test_perfect_tiles_multiply_to_the_extent(extent, n, limit, seed):
    rng = sampling.Rng(seed)
    tiles = sampling.perfect_tile(rng, extent, n, limit)
    assert len(tiles) == n and all(isinstance(t, int) and t >= 1 for t in tiles)
    assert math.prod(tiles) == extent
    assert limit == -1 or tiles[-1] <= limit
    # a function of the state
    assert sampling.perfect_tile(sampling.Rng(seed), extent, n, limit) == tiles


@given(extent=st.integers(1, 3000), n=st.integers(2, 5), data=st.data(), seed=seeds)
def test_partitioned_tiles_multiply_to_the_extent(extent, n, data, seed):
    pos = data.draw(st.integers(0, n - 1), label="partition_pos")
    factor = data.draw(st.sampled_from([1, 2, 3, 4, 8]), label="innerpart_factor")
    tiles = sampling.partitioned_tile(sampling.Rng(seed), extent, n, pos, factor)
    if extent % factor:
        assert tiles == [-1] + [1] * (n - 1)
        return
    assert math.prod(tiles) == extent and all(t >= 1 for t in tiles)
    assert math.prod(tiles[pos:]) % factor == 0


LOOP = """
@T.prim_func
def main(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32")):
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = A[vi]
"""


@given(extent=st.integers(1, 4096), n=st.integers(2, 4), seed=st.integers(1, 2**31 - 1))
def test_a_schedule_splits_by_its_sampled_tiles_and_replays(extent, n, seed):
    mod = IRModule({"main": from_source(LOOP.format(n=extent))})
    sch = Schedule(mod, seed=seed)
    tiles = sch.sample_perfect_tile("i", n)
    assert math.prod(tiles) == extent and tiles[-1] <= 16
    loops = sch.split("i", tiles)
    assert [sch.get(lp).extent.value for lp in loops] == tiles
    again = Schedule(mod, seed=seed)
    again.split("i", again.sample_perfect_tile("i", n))
    assert again.mod == sch.mod
    assert sch.trace(mod) == sch.mod
