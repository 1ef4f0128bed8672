"""The shortcuts of the caching primitives give what the general analyses
they skip give:

* the region cover checks compare ends that are equal, or integer
  literals, directly, where region_covers would prove the same
  containment;
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
from tirfun.rewrites.dataflow import within_buffer

cache = importlib.import_module("tirfun.rewrites.cache")


def _end(rng: random.Random, dtype: str, symbols: list):
    if rng.random() < 0.3:
        return rng.choice(symbols)
    return IntImm(dtype, rng.randint(-3, 12))


def _box(rng: random.Random, dims: int, dtype: str, symbols: list) -> list[Interval]:
    out = []
    for _ in range(dims):
        lo = _end(rng, dtype, symbols)
        hi = IntImm(dtype, lo.value + rng.randint(0, 10)) if type(lo) is IntImm else _end(rng, dtype, symbols)
        out.append(Interval(lo, hi))
    return out


def test_plain_cover_is_what_region_covers_finds():
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(600):
        dims = rng.randint(1, 3)
        dtype = rng.choice(["int32", "int64"])
        i, j = Var("i", dtype), Var("j", dtype)
        symbols = [i, j, i + 1]
        boxes = [_box(rng, dims, dtype, symbols) for _ in range(rng.randint(1, 2))]
        goal = _box(rng, dims, dtype, symbols) if rng.random() < 0.7 else list(rng.choice(boxes))
        fast = cache._plainly_covers(boxes, goal)
        if fast:
            assert region_covers(boxes, goal)
        elif len(boxes) == 1 and all(type(e) is IntImm for iv in boxes[0] + goal for e in (iv.lo, iv.hi)):
            # one box of literals joins with no other: containment alone decides
            assert not region_covers(boxes, goal)
        seen[fast] += 1
    assert seen[True] > 50 and seen[False] > 50


def test_plain_cover_leaves_the_rest_to_region_covers():
    i = Var("i")
    box = [Interval(IntImm("int32", 0), IntImm("int32", 9))]
    assert not cache._plainly_covers([box], [Interval(i, i)])
    assert not cache._plainly_covers([box], [Interval(IntImm("int64", 0), IntImm("int64", 3))])
    assert not cache._plainly_covers([box], box + box)
    assert not cache._plainly_covers([[Interval(i, None)]], [Interval(i, None)])
    assert cache._plainly_covers([box], [Interval(IntImm("int32", 2), IntImm("int32", 9))])
    assert cache._plainly_covers([[Interval(i, i + 3)]], [Interval(i, i + 3)])


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


def test_stage_names_are_what_a_walk_finds():
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import Block

    def walked(stmt):
        out = set()
        for _, s in walk_stmts(stmt):
            if isinstance(s, For):
                out.add(s.loop_var.name)
            elif isinstance(s, Block):
                out.update(iv.var.name for iv in s.iter_vars)
        return out

    orig = Buffer("A", [8, 6, 4])
    for dims in range(1, 4):
        region = [Range(IntImm("int32", 1), IntImm("int32", 2 + k)) for k in range(dims)] + \
            [Range(IntImm("int32", 0), d) for d in list(orig.shape)[dims:]]
        for full in (True, False):
            cache_buf = cache._cache_buffer(orig, "local", region, full, set())
            for is_read in (True, False):
                stage, _ = cache._make_stage(region, orig, cache_buf, is_read=is_read, full=full, name="A_local",
                                             taken={"ax0", "v1"})
                assert cache._bound_names(stage) == walked(stage)


def test_permuted_iteration_variables_are_a_bijective_map():
    from tirfun.nodes import IterVar

    n = Var("n")
    rng = random.Random(3)
    doms = [Range(0, 8), Range(2, 5), Range(0, 1), Range(3, 1), Range(0, n), Range(n, 4)]
    for _ in range(60):
        ivs = [IterVar(rng.choice(doms), Var(f"v{k}"), "DataPar") for k in range(rng.randint(1, 3))]
        new = [iv.var for iv in ivs]
        rng.shuffle(new)
        assert cache._permutes(new, ivs)
        loops = {iv.var.name: cache._DomLoop(iv) for iv in ivs}
        assert detect_iter_map(new, loops, "bijective") is not None
        if len(new) > 1:
            # a variable twice, or one left out, is not a permutation: the analysis is asked
            assert not cache._permutes(new[:-1], ivs)
            assert not cache._permutes(new[:-1] + new[:1], ivs)
    assert not cache._permutes([Var("v0") + 1], [IterVar(Range(0, 8), Var("v0"), "DataPar")])


def test_copy_stage_shares_only_equal_ranges():
    orig = Buffer("A", [8, 6], "float32")
    one = IntImm("int32", 1)
    for mins in [(0, 0), (1, 0), (0, 2), (3, 1)]:
        region = [Range(IntImm("int32", m), IntImm("int32", d - m)) for m, d in zip(mins, [8, 6])]
        cache_buf = cache._cache_buffer(orig, "local", region, False, set())
        for is_read in (True, False):
            stage, block = cache._make_stage(region, orig, cache_buf, is_read=is_read, full=False, name="A_local",
                                             taken=set())
            for iv, rng in zip(block.iter_vars, region):
                assert iv.dom == Range(IntImm("int32", 0), rng.extent)
            store = block.body
            assert list(block.reads[0].region) == [Range(i, one) for i in store.value.indices]
            assert list(block.writes[0].region) == [Range(i, one) for i in store.indices]
            shared = all(a is b for a, b in zip(block.reads[0].region, block.writes[0].region))
            assert shared == (mins == (0, 0))


def test_whole_writer_box_covers_any_read_as_region_covers_finds():
    # a producer whose relaxed region is the whole buffer: region_covers
    # proves that it holds whatever a read reaches inside the buffer
    rng = random.Random(11)
    n = Var("n")
    seen = {True: 0, False: 0}
    for _ in range(150):
        dtype = rng.choice(["int32", "int64"])
        shape = [IntImm(dtype, rng.randint(1, 9)) for _ in range(rng.randint(1, 2))]
        buf = Buffer("B", shape, "float32")
        box = [Interval(IntImm(dtype, rng.choice([0, 0, 1])), IntImm(dtype, d.value - rng.choice([1, 1, 2])))
               for d in shape]
        rdt = rng.choice([dtype, dtype, "int64" if dtype == "int32" else "int32"])
        read = BufferRegion(buf, [Range(Var("r", rdt), IntImm(rdt, 1)) for _ in shape])
        gdt = rng.choice([dtype, dtype, "int64"])  # a read relaxed over loops of another dtype
        k = Var("k", gdt)
        ends = [None, k, k + 3, IntImm(gdt, rng.randint(-3, 12)), n.astype(gdt) if gdt != "int32" else n]
        goal = within_buffer([Interval(rng.choice(ends), rng.choice(ends)) for _ in shape], buf)
        whole = cache._whole_box(box, buf, read)
        if whole:
            dom = {k: Range(IntImm(gdt, 0), IntImm(gdt, 4))}
            assert region_covers([box], goal, dom), (box, goal)
        seen[whole] += 1
    assert seen[True] > 20 and seen[False] > 20


def test_rebased_redirect_is_the_generic_redirect():
    from tirfun.nodes import Cast, Max, Select, const

    old, new = Buffer("B", [8, 8], "int32"), Buffer("B_local", [6, 6], "int32", storage_scope="local")
    other = Buffer("A", [8, 8], "int32")
    i, j = Var("i"), Var("j")
    rng = random.Random(5)

    def expr(depth):
        pick = rng.randint(0, 7 if depth else 2)
        if pick == 0:
            return rng.choice([i, j])
        if pick == 1:
            return const(rng.randint(0, 5))
        if pick == 2:
            return BufferLoad(rng.choice([old, other]), [rng.choice([i, j]), IntImm("int32", 1)])
        if pick == 3:
            return BufferLoad(old, [expr(depth - 1), i + 1])
        if pick == 4:
            return BufferLoad(other, [expr(depth - 1), j])
        if pick == 5:
            return Max(expr(depth - 1), expr(depth - 1))
        if pick == 6:
            return Cast("int32", expr(depth - 1))
        return Select(expr(depth - 1) < 3, expr(depth - 1), expr(depth - 1))

    for offsets in [None, [IntImm("int32", 0), IntImm("int32", 2)]]:
        walk = cache._RebasedRedirect(old, new, offsets).expr
        for _ in range(150):
            e = expr(3)
            fast, general = walk(e), cache._redirect_expr(e, old, new, offsets)
            assert fast == general
            assert (fast is e) == (general is e)


def test_kept_points_reach_what_their_bounds_give_over_the_wider_domain():
    # reindex_cache_read bounds the map's indices over the block's domains;
    # where the map keeps the indices, the copy's reach over the domains of
    # the enclosing blocks as well is that same box
    from tirfun.nodes import IterVar

    rng = random.Random(13)
    n = Var("n")
    doms = [Range(0, 8), Range(2, 5), Range(0, 1), Range(0, n), Range(n, 4)]
    reused = 0
    for _ in range(80):
        ivs = [IterVar(rng.choice(doms), Var(f"v{k}"), "DataPar") for k in range(rng.randint(1, 3))]
        old = [iv.var for iv in ivs]
        new = list(old) if rng.random() < 0.7 else [old[0] + 1] + old[1:]
        dom = {iv.var: iv.dom for iv in ivs}
        wider = {n: Range(0, 16), Var("w"): Range(0, 3), **dom}
        ends = cache._point_bounds(new, dom)
        if cache._same_literal_points(old, new, ends, dom):
            assert ends == cache._point_bounds(old, wider)
            reused += 1
    assert reused > 10


def test_read_before_write_finds_the_load_a_generic_walk_finds_first():
    from tirfun.analysis.traversal import iter_children
    from tirfun.nodes import Block, BufferStore, Cast, Max, Select, const

    buf, other = Buffer("B", [8], "int32"), Buffer("A", [8], "int32")
    i = Var("i")
    rng = random.Random(17)

    def expr(depth):
        pick = rng.randint(0, 6 if depth else 2)
        if pick == 0:
            return i
        if pick == 1:
            return const(rng.randint(0, 5))
        if pick == 2:
            return BufferLoad(rng.choice([buf, other]), [const(rng.randint(0, 7))])
        if pick == 3:
            return BufferLoad(rng.choice([buf, other]), [expr(depth - 1)])
        if pick == 4:
            return Max(expr(depth - 1), expr(depth - 1))
        if pick == 5:
            return Cast("int32", expr(depth - 1))
        return Select(expr(depth - 1) < 3, expr(depth - 1), expr(depth - 1))

    def first_load(e):
        stack = [e]
        while stack:
            n = stack.pop()
            if isinstance(n, BufferLoad) and n.buffer == buf:
                return n
            if not isinstance(n, Buffer):
                stack.extend(iter_children(n))
        return None

    found = 0
    for _ in range(200):
        store = BufferStore(buf, expr(3), [expr(1)])
        parts = [first_load(p) for p in [store.value, *store.indices]]
        expected = next((p for p in parts if p is not None), None)
        got = cache._reads_before_writing(Block([], [], [], "b", store), buf)
        assert got is expected
        found += got is not None
    assert found > 40


def test_literal_intervals_inside_are_clamped_without_their_domains():
    rng = random.Random(19)
    i = Var("i")
    dom = {i: Range(0, 4)}
    inside = 0
    for _ in range(200):
        dtype = rng.choice(["int32", "int64"])
        buf = Buffer("B", [IntImm(dtype, rng.randint(1, 9)) for _ in range(rng.randint(1, 2))])
        box = []
        for _ in buf.shape:
            lo = IntImm(rng.choice([dtype, dtype, "int32"]), rng.randint(-1, 6))
            box.append(Interval(lo, IntImm(dtype, lo.value + rng.randint(0, 3)) if rng.random() < 0.9 else i))
        if cache._literally_inside(box, buf):
            assert cache._clamped(box, buf, {}) == cache._clamped(box, buf, dom)
            inside += 1
    assert inside > 30


def test_domain_end_is_the_folded_sum():
    # reindex's copy takes the extent itself as a dimension where its domain starts at a literal 0
    from tirfun.analysis.arith.linear import fold_add

    n = Var("n")
    doms = [Range(IntImm("int32", 0), IntImm("int32", 128)), Range(IntImm("int64", 0), IntImm("int64", 7)),
            Range(IntImm("int32", 3), IntImm("int32", 5)), Range(IntImm("int32", 0), n),
            Range(n, IntImm("int32", 4))]
    for dom in doms:
        fast, general = cache._dom_end(dom), fold_add(dom.min, dom.extent)
        assert fast == general and fast.dtype == general.dtype
    assert cache._dom_end(doms[0]) is doms[0].extent


def test_reindex_of_leaf_indices_keeps_what_the_simplifier_gives():
    # indices that are variables or constants skip the simplifier: it gives them back as they are
    from tirfun.analysis.arith.simplify import simplify_expr

    i = Var("i")
    for e in (i, IntImm("int32", 0), IntImm("int64", 5)):
        assert simplify_expr(e, {i: (0, 0)}) is e and simplify_expr(e, {i: (0, 127)}) is e


def test_region_of_leaf_ends_binds_no_let_as_the_walk_finds():
    from tirfun.nodes import Let
    from tirfun.rewrites.index import binds_let

    i, x = Var("i"), Var("x")
    buf = Buffer("A", [16, 16], "float32")
    regions = [BufferRegion(buf, [Range(i, IntImm("int32", 1)), Range(IntImm("int32", 0), IntImm("int32", 16))]),
               BufferRegion(buf, [Range(i + 1, IntImm("int32", 1)), Range(i, IntImm("int32", 2))]),
               BufferRegion(buf, [Range(Let(x, i, x + 1), IntImm("int32", 1)), Range(i, IntImm("int32", 1))])]
    assert [cache._region_binds_let(r) for r in regions] == [binds_let(r) for r in regions] == [False, False, True]
