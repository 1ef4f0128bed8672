"""The shortcuts of the caching primitives give what the general analyses
they skip give:

* the region cover check compares boxes of integer literals as integers,
  where region_covers would prove the same containment;
* the check that a write covers a dense range takes a loop's own variable
  as a bijective iterator map of that loop without asking;
* redirecting the regions of a block rebuilds only the Ranges whose ends
  change, and shares the others.
"""

import importlib
import random

from tirfun.analysis.arith import detect_iter_map, region_covers
from tirfun.analysis.arith.int_set import Interval
from tirfun.nodes import Buffer, BufferLoad, BufferRegion, For, IntImm, Range, Var

cache = importlib.import_module("tirfun.rewrites.cache")


def _box(rng: random.Random, dims: int, dtype: str) -> list[Interval]:
    out = []
    for _ in range(dims):
        lo = rng.randint(-3, 12)
        out.append(Interval(IntImm(dtype, lo), IntImm(dtype, lo + rng.randint(0, 10))))
    return out


def test_literal_containment_is_what_region_covers_finds():
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(400):
        dims = rng.randint(1, 3)
        dtype = rng.choice(["int32", "int64"])
        box, goal = _box(rng, dims, dtype), _box(rng, dims, dtype)
        fast = cache._literally_contains(box, goal)
        # one box joins with no other: region_covers answers by containment alone
        assert fast == region_covers([box], goal)
        seen[fast] += 1
    assert seen[True] and seen[False]


def test_literal_containment_leaves_the_rest_to_region_covers():
    i = Var("i")
    box = [Interval(IntImm("int32", 0), IntImm("int32", 9))]
    assert not cache._literally_contains(box, [Interval(i, i)])
    assert not cache._literally_contains(box, [Interval(IntImm("int64", 0), IntImm("int64", 3))])
    assert not cache._literally_contains(box, box + box)
    assert cache._literally_contains(box, [Interval(IntImm("int32", 2), IntImm("int32", 9))])


def test_loop_variable_is_a_bijective_map_of_its_loop():
    n = Var("n")
    for lo in [IntImm("int32", 0), IntImm("int32", 3), n]:
        for extent in [IntImm("int32", 1), IntImm("int32", 2), IntImm("int32", 8), n]:
            i = Var("i")
            loop = For(i, lo, extent, "serial", cache.BufferStore(Buffer("X", [4]), 1.0, [0]))
            assert detect_iter_map([i], {"i": loop}, "bijective") is not None, (lo, extent)


def test_redirected_regions_share_the_ranges_that_do_not_change():
    old, new = Buffer("B", [8, 8], "int32"), Buffer("B_local", [8, 8], "int32", storage_scope="local")
    other = Buffer("A", [8, 8])
    i, j = Var("i"), Var("j")
    plain = BufferRegion(other, [Range(i, 1), Range(j, 2)])
    # a load of the buffer in another region's index reads the cache too
    indirect = BufferRegion(other, [Range(BufferLoad(old, [i, j]), 1), Range(j, 1)])
    own = BufferRegion(old, [Range(i, 1), Range(j, 1)])
    for offsets in [None, [IntImm("int32", 0), IntImm("int32", 0)], [IntImm("int32", 0), IntImm("int32", 2)]]:
        regions = [plain, indirect, own]
        out, changed = cache._redirect_regions(regions, old, new, offsets)
        assert changed
        rebuilt = [BufferRegion(r.buffer, [Range(x.min, x.extent) for x in r.region]) for r in out]
        assert list(out) == rebuilt
        assert out[0] is plain
        assert out[1].region[1] is indirect.region[1]
        assert out[1].region[0].min == BufferLoad(new, cache._rebase([i, j], offsets))
        assert out[2].buffer is new
        for a, b, off in zip(out[2].region, own.region, offsets or [IntImm("int32", 0)] * 2):
            assert (a is b) == (off.value == 0)
    same, changed = cache._redirect_regions([plain], old, new, None)
    assert not changed and same == [plain]
