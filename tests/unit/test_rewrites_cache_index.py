"""cache_index: results as TVM v0.20 gives them (its own tests' programs),
the threshold, the cases TVM gets wrong, every error class with its message,
and the cached programs built and run."""

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.traversal import walk_stmts
from tirfun.analysis.verify import verify
from tirfun.nodes import Block, For, IRModule
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent, random_inputs

RESIZE = """
@T.prim_func
def main(A: T.Buffer((1, 3, 40, 40), "float32"), B: T.Buffer((1, 3, 80, 80), "float32")):
    for i0, i1, i2, i3 in T.grid(1, 3, 80, 80):
        with T.block("A"):
            n, c, vi, vj = T.axis.remap("SSSS", [i0, i1, i2, i3])
            B[n, c, vi, vj] = A[n, c, vi // 4 + vj // 4, vj // 2]
"""


def mod_of(source: str) -> IRModule:
    return IRModule({"main": from_source(source)})


def check(before: IRModule, after: IRModule, sizes=None) -> None:
    """The result verifies, means what the input means, and builds to it."""
    verify(after)
    assert_equivalent(before["main"], after["main"], sizes=sizes)
    func = after["main"]
    rt = tirfun.build(after, target="llvm")
    args = random_inputs(func, np.random.default_rng(0), sizes=sizes)
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tirfun.interp.run(func, *expected)
    rt(*args)
    for x, y in zip(expected, args):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()


def blocks(mod: IRModule) -> dict[str, Block]:
    return {s.name_hint: s for _, s in walk_stmts(mod["main"]) if isinstance(s, Block)}


# -- results as TVM gives them -------------------------------------------------------

def test_schedule_cache_index_returns_the_index_blocks_and_replays():
    mod = mod_of(RESIZE)
    sch = Schedule(mod)
    made = sch.cache_index(sch.get_block("A"), "global")
    assert made == [R.BlockRef("index_0", "main"), R.BlockRef("index_1", "main")]
    assert sch.get(made[0]).body.value.script() == "v0 // 4 + v1 // 4"
    assert sch.get(made[1]).body.value.script() == "v0_1 // 2"
    # cse_thresh=1 is the same as the default: every computation occurs once
    assert Schedule(mod).cache_index("A", "global", 1) == made
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    assert 'sch.cache_index(BlockRef("A", "main"), "global", cse_thresh=0)' in sch.trace.as_python()
    check(mod, sch.mod)


def _floor_int(v: str) -> str:
    return (f'T.Cast("int32", T.floor((T.Cast("float32", {v}) + T.float32(0.5)) * T.float32(0.5) '
            f'- T.float32(0.5)))')


def _frac(v: str, floor_int: str) -> str:
    return (f'((T.Cast("float32", {v}) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) '
            f'- T.Cast("float32", {floor_int}))')


def _bilinear(i2: str, i3: str, f2: str, f3: str, w2: str, w3: str) -> str:
    """TVM's bilinear resize test, with the row and column computations given."""
    def x(r, c):
        return f'T.Cast("float32", x[i0_1, i1_1, T.max(T.min({r}, 39), 0), T.max(T.min({c}, 39), 0)])'

    top = f"{x(f2, f3)} * (T.float32(1) - {w3}) + {x(f2, f3 + ' + 1')} * {w3}"
    bottom = f"{x(f2 + ' + 1', f3)} * (T.float32(1) - {w3}) + {x(f2 + ' + 1', f3 + ' + 1')} * {w3}"
    return f'T.Cast("float16", ({top}) * (T.float32(1) - {w2}) + ({bottom}) * {w2})'


BILINEAR = f"""
@T.prim_func
def main(x: T.Buffer((1, 3, 40, 40), "float16"), resize: T.Buffer((1, 3, 80, 80), "float16")):
    for i0, i1, i2, i3 in T.grid(1, 3, 80, 80):
        with T.block("resize"):
            i0_1, i1_1, i2_1, i3_1 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(x[i0_1, i1_1, 0:40, 0:40])
            T.writes(resize[i0_1, i1_1, i2_1, i3_1])
            resize[i0_1, i1_1, i2_1, i3_1] = {_bilinear(
                "i2_1", "i3_1", _floor_int("i2_1"), _floor_int("i3_1"),
                _frac("i2_1", _floor_int("i2_1")), _frac("i3_1", _floor_int("i3_1")))}
"""

# TVM's expected result, with tirfun's unique names and the index buffers among the reads
BILINEAR_CACHED = f"""
@T.prim_func
def main(x: T.Buffer((1, 3, 40, 40), "float16"), resize: T.Buffer((1, 3, 80, 80), "float16")):
    index_var_0 = T.alloc_buffer((80,))
    index_var_1 = T.alloc_buffer((80,), "int32")
    index_var_2 = T.alloc_buffer((80,), "int32")
    for ax0 in range(80):
        with T.block("index_0"):
            v0 = T.axis.spatial(80, ax0)
            index_var_0[v0] = {_frac("v0", _floor_int("v0"))}
    for ax0_1 in range(80):
        with T.block("index_1"):
            v0_1 = T.axis.spatial(80, ax0_1)
            index_var_1[v0_1] = {_floor_int("v0_1")}
    for ax0_2 in range(80):
        with T.block("index_2"):
            v0_2 = T.axis.spatial(80, ax0_2)
            index_var_2[v0_2] = {_floor_int("v0_2")}
    for i0, i1, i2, i3 in T.grid(1, 3, 80, 80):
        with T.block("resize"):
            i0_1, i1_1, i2_1, i3_1 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(x[i0_1, i1_1, 0:40, 0:40], index_var_0[i3_1], index_var_1[i2_1], index_var_2[i3_1])
            T.writes(resize[i0_1, i1_1, i2_1, i3_1])
            resize[i0_1, i1_1, i2_1, i3_1] = {_bilinear(
                "i2_1", "i3_1", "index_var_1[i2_1]", "index_var_2[i3_1]",
                _frac("i2_1", "index_var_1[i2_1]"), "index_var_0[i3_1]")}
"""


def test_bilinear_resize_with_threshold_4_caches_what_tvm_caches():
    # TVM's test_resize_bilinear_cache_index: the column weight occurs four
    # times and is cached whole; the row weight only twice, so only its
    # floor (six times, with the row indices) is; the two floors are one
    # expression over different variables, two buffers
    mod = mod_of(BILINEAR)
    sch = Schedule(mod)
    made = sch.cache_index("resize", "global", 4)
    assert [b.name for b in made] == ["index_0", "index_1", "index_2"]
    assert_structural_equal(sch.mod["main"], from_source(BILINEAR_CACHED))
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    check(mod, sch.mod)


# -- the threshold ----------------------------------------------------------------------

REPEATED = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi * 2 + 1] + A[1 + vi * 2] + A[vi * 2 + 7 - vi]
"""


def test_threshold_counts_equivalent_computations_together():
    mod = mod_of(REPEATED)
    # 0: every computation, two of them one after simplification; the largest first
    out = R.cache_index("B", "global").run(mod)
    assert len(out.result) == 2
    b = blocks(out.mod)["B"]
    assert b.body.value.script() == "A[index_var_1[vi]] + A[index_var_1[vi]] + A[index_var_0[vi]]"
    check(mod, out.mod)
    # 2: the one seen twice
    out = R.cache_index("B", "global", 2).run(mod)
    assert len(out.result) == 1
    assert blocks(out.mod)["index_0"].body.value.script() == "v0 * 2 + 1"
    check(mod, out.mod)
    # 3: none is seen three times, but vi * 2 takes the counts of the two
    # sums it is part of (2 and 1)
    out = R.cache_index("B", "global", 3).run(mod)
    assert [blocks(out.mod)[r.name].body.value.script() for r in out.result] == ["v0 * 2"]
    check(mod, out.mod)
    # 4: nothing
    out = R.cache_index("B", "global", 4).run(mod)
    assert out.result == () and out.mod == mod


def test_threshold_hands_a_rare_computation_count_to_its_subexpressions():
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi * 3 + 1] + A[vi * 3 + 2] + A[vi * 3]
""")
    out = R.cache_index("B", "global", 3).run(mod)
    # each sum occurs once; vi * 3 gets one count from each and its own
    assert [blocks(out.mod)[r.name].body.value.script() for r in out.result] == ["v0 * 3"]
    assert blocks(out.mod)["B"].body.value.script() == \
        "A[index_var_0[vi] + 1] + A[index_var_0[vi] + 2] + A[index_var_0[vi]]"
    check(mod, out.mod)


def test_nothing_to_compute_leaves_the_module_as_it_is():
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
""")
    sch = Schedule(mod)
    assert sch.cache_index("B", "local") == []
    assert sch.mod == mod


# -- where TVM goes wrong -----------------------------------------------------------------

def test_a_binding_over_two_loops_gets_the_range_it_takes():
    # TVM gives v0 the extent of the first loop (4), too small for i * 3 + j
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((12,), "float32")):
    for i, j in T.grid(4, 3):
        with T.block("B"):
            vi = T.axis.spatial(12, i * 3 + j)
            B[vi] = A[vi // 2 * 5 + vi % 2]
""")
    out = R.cache_index("B", "global").run(mod)
    stage = blocks(out.mod)["index_0"]
    assert stage.iter_vars[0].dom.extent.value == 12
    assert [b.shape[0].value for b in out.mod["main"].body.block.alloc_buffers] == [12]
    check(mod, out.mod)


def test_new_loops_start_where_the_old_ones_did():
    # TVM's loop would run from 0 and fill the wrong elements
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(2, 10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi - 2] = A[vi * 3 % 29]
""")
    out = R.cache_index("B", "global").run(mod)
    loop = next(s for _, s in walk_stmts(out.mod["main"]) if isinstance(s, For))
    assert (loop.loop_var.name, loop.min.value, loop.extent.value) == ("ax0", 2, 8)
    assert out.mod["main"].body.block.alloc_buffers[0].shape[0].value == 10
    check(mod, out.mod)


def test_a_split_with_a_predicate_computes_every_binding_value():
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((10,), "float32")):
    for i0, i1 in T.grid(3, 4):
        with T.block("B"):
            vi = T.axis.spatial(10, i0 * 4 + i1)
            T.where(i0 * 4 + i1 < 10)
            B[vi] = A[vi * 5 + 3]
""")
    out = R.cache_index("B", "global").run(mod)
    assert out.mod["main"].body.block.alloc_buffers[0].shape[0].value == 12
    check(mod, out.mod)


def test_variables_of_the_block_body_stay_where_they_are():
    # TVM fails: k is no iteration variable; here vi * 4 is cached alone
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((8, 4), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            for k in range(4):
                B[vi, k] = A[vi * 4 + k]
""")
    out = R.cache_index("B", "global").run(mod)
    assert len(out.result) == 1
    store = next(s for _, s in walk_stmts(blocks(out.mod)["B"].body) if hasattr(s, "value"))
    assert store.value.script() == "A[index_var_0[vi] + k]"
    check(mod, out.mod)


def test_a_guarded_division_by_a_variable_is_not_computed_ahead():
    # computed ahead for every vi, vi // (vi - 3) would divide by zero at vi == 3
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.if_then_else(vi != 3, A[vi * 2 + 40 // (vi - 3) % 4 + 8], T.float32(0))
""")
    out = R.cache_index("B", "global").run(mod)
    cached = [blocks(out.mod)[r.name].body.value.script() for r in out.result]
    assert cached == ["v0 != 3", "v0_1 * 2", "v0_2 - 3"]
    assert blocks(out.mod)["B"].body.value.script() == \
        "T.if_then_else(index_var_0[vi], A[index_var_1[vi] + 40 // index_var_2[vi] % 4 + 8], T.float32(0.0))"
    check(mod, out.mod)


def test_a_reduction_caches_in_its_init_and_body():
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(8, 4):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi * 2 + 1] = T.float32(0)
            B[vi * 2 + 1] = B[vi * 2 + 1] + A[vi * 4 + vk]
""")
    out = R.cache_index("B", "global").run(mod)
    b = blocks(out.mod)["B"]
    assert b.init.indices[0].script() == "index_var_0[vi]"
    assert b.body.script() == "B[index_var_0[vi]] = B[index_var_0[vi]] + A[index_var_1[vi, vk]]"
    stage = blocks(out.mod)["index_1"]
    assert [str(iv.iter_type.name) for iv in stage.iter_vars] == ["DataPar", "DataPar"]
    check(mod, out.mod)


def test_symbolic_extents_give_symbolic_buffers_in_a_local_scope():
    mod = mod_of("""
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi * 3 % n]
""")
    out = R.cache_index("B", "local").run(mod)
    buf = out.mod["main"].body.block.alloc_buffers[0]
    assert (buf.shape[0].script(), buf.storage_scope) == ("n", "local")
    check(mod, out.mod, {"n": 7})


def test_a_second_application_takes_fresh_names():
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi * 3]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi * 5]
""")
    sch = Schedule(mod)
    sch.cache_index("B", "global")
    assert sch.cache_index("C", "shared") == [R.BlockRef("index_0_1", "main")]
    c = sch.get("C")
    assert c.body.value.script() == "A[index_var_0_1[vi_1]]"
    # the stage goes just before C's loop nest, after B's
    names = [s.name_hint for _, s in walk_stmts(sch.mod["main"]) if isinstance(s, Block)]
    assert names == ["root", "index_0", "B", "index_0_1", "C"]
    check(mod, sch.mod)


def test_a_gather_index_is_computed_inside_the_load():
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((64,), "float32"), G: T.Buffer((16,), "int32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[G[vi * 2 + 1] % 64]
""")
    out = R.cache_index("B", "global").run(mod)
    assert blocks(out.mod)["B"].body.value.script() == "A[G[index_var_0[vi]] % 64]"
    check(mod, out.mod)


# -- errors -------------------------------------------------------------------------------

@pytest.mark.parametrize("rewrite, cls, message", [
    (R.cache_index("nope", "global"), R.UnknownBlockError,
     "cache_index: block 'nope': function 'main' has no block with that name"),
    (R.cache_index(R.LoopRef("i0"), "global"), R.RefKindError,
     "cache_index: loop 'i0': expected a block (a BlockRef or a block name), got a loop"),
    (R.cache_index(R.BlockRef("A", "other"), "global"), R.UnknownFunctionError,
     "cache_index: function 'other': the module has no such function (it has: main)"),
    (R.cache_index("A", "nowhere"), R.InvalidStorageScopeError,
     "cache_index: argument storage_scope: the storage scope 'nowhere' is invalid"),
    (R.cache_index("A", "global", -1), R.InvalidArgumentError,
     "cache_index: argument cse_thresh: cse_thresh must be a non-negative int (how many times a "
     "computation must occur to be cached; 0 caches every one), got -1"),
    (R.cache_index("A", "global", 1.5), R.InvalidArgumentError, "got 1.5"),
    (R.cache_index("A", "global", True), R.InvalidArgumentError, "got True"),
    (R.cache_index("root", "global"), R.NoScopeBlockError,
     "cache_index: block 'root': the block has no enclosing block to allocate the cache in"),
])
def test_errors_name_the_problem(rewrite, cls, message):
    mod = mod_of(RESIZE)
    with pytest.raises(cls) as info:
        rewrite(mod)
    assert message in str(info.value)
    assert [type(e) for e in rewrite.violations(mod)] == [cls]


def test_the_index_blocks_are_producers_of_the_block():
    # the block lists the index buffers among its reads, so compute_at and
    # compute_inline see it as their consumer
    mod = mod_of(RESIZE)
    sch = Schedule(mod)
    first, second = sch.cache_index("A", "local")
    sch.compute_at(first, sch.get_loops("A")[3])
    sch.compute_inline(second)
    assert [s.name_hint for _, s in walk_stmts(sch.mod["main"]) if isinstance(s, Block)] == \
        ["root", "index_0", "A"]
    assert sch.get("A").body.value.script() == "A[n, c, index_var_0[vi, vj], vj // 2]"
    check(mod, sch.mod)


def test_computations_only_in_the_stored_indices_are_not_cached():
    # as in TVM, the computations kept are those of the stored value; one of
    # them is still replaced wherever it occurs, the stored indices included
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi * 4 + 1] = A[vi]
""")
    out = R.cache_index("B", "global").run(mod)
    assert out.result == () and out.mod == mod
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi * 4 + 1] = A[1 + vi * 4]
""")
    out = R.cache_index("B", "global").run(mod)
    assert blocks(out.mod)["B"].body.script() == "B[index_var_0[vi]] = A[index_var_0[vi]]"
    check(mod, out.mod)


def test_an_index_over_a_loop_whose_extent_loads_a_buffer_is_not_cached():
    # range(L[0]) may be negative, or change before the loop: an index
    # buffer of L[0] elements, filled before the loop, would be neither
    # allocatable nor right; the block keeps computing its index
    src = """
@T.prim_func
def main(B: T.Buffer((8,), "float32"), L: T.Buffer((1,), "int32")):
    for t in range(L[0]):
        with T.block("B5"):
            vt = T.axis.opaque(8, t)
            T.reads(B[vt % 8])
            T.writes(B[vt % 8])
            B[vt % 8] = B[vt % 8] + T.float32(1.0)
"""
    from tirfun.interp import run

    mod = IRModule({"main": from_source(src)})
    out = R.cache_index("B5", "global", 0)(mod)
    assert "index_var" not in out.script()
    for count in (3, -5):
        b = np.zeros(8, "float32")
        run(out["main"], b, np.array([count], "int32"))
        assert b.tolist() == [1.0 if k < count else 0.0 for k in range(8)]
