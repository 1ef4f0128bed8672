"""loop_partition: parts, names, a reduction split across parts, and every
error with its message."""

import copy

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

ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((4, 10), "int32"), B: T.Buffer((4,), "int32")):
    for i, k in T.grid(4, 10):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
"""


def mod_of(source=ROW_SUM) -> IRModule:
    return IRModule({"main": from_source(source)})


def applied(rewrite, mod):
    snapshot = copy.deepcopy(mod)
    out = rewrite(mod)
    verify(out)
    assert mod == snapshot
    assert index_of(out["main"]) == build_index(out["main"])
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    assert_equivalent(mod["main"], out["main"])
    return out


@pytest.mark.parametrize("factors, sizes", [([2, 5], [2, 5, 3]), ([None, 3], [7, 3]), ([4, None, 1], [4, 5, 1]),
                                            ([9], [9, 1])])
def test_partition_sizes(factors, sizes):
    sch = Schedule(mod_of())
    loops = sch.loop_partition(sch.get_loops("B")[1], factors)
    assert [l.name for l in loops] == [f"k{n}" for n in range(len(sizes))]
    out = sch.mod
    verify(out)
    assert_equivalent(mod_of()["main"], out["main"])
    extents = [sch.get(l).extent.value for l in loops]
    assert extents == sizes
    starts = [sch.get(l).min.value for l in loops]
    assert starts == [sum(sizes[:n]) for n in range(len(sizes))]


def test_a_reduction_split_across_parts_is_initialised_once():
    sch = Schedule(mod_of())
    sch.loop_partition("k", [3])
    text = sch.mod["main"].script()
    # the reduction variable keeps its whole domain in every part
    assert text.count("T.axis.reduce(10,") == 2
    a = np.arange(40, dtype="int32").reshape(4, 10)
    b = np.zeros(4, "int32")
    tirfun.build(sch.mod, target="llvm")(a, b)
    assert (b == a.sum(axis=1)).all()
    # the first part starts the reduction and can be decomposed; the second
    # continues it, and a separate init there would start it over
    sch.decompose_reduction("B_k0", "k0")
    with pytest.raises(R.ReductionStartError) as info:
        sch.decompose_reduction("B_k1", "k1")
    assert info.value.summary == (
        "decompose_reduction: block 'B_k1': the loops start the reduction variable vk_2 at 3, not at the "
        "start of its domain 0, so the block's init never runs there")
    with pytest.raises(R.ReductionStartError):
        sch.rfactor("k1", 0)
    assert_equivalent(mod_of()["main"], sch.mod["main"])


def test_partition_of_a_spatial_loop_narrows_its_variable_and_compiles():
    out = applied(R.loop_partition("i", [1, 2]), mod_of())
    text = out["main"].script()
    dom = Schedule(out).get("B_i1").iter_vars[0].dom
    assert (dom.min.value, dom.extent.value) == (1, 2)
    assert 'T.block("B_i_common")' in text and 'T.block("B_i2_partition")' in text
    a = np.arange(40, dtype="int32").reshape(4, 10)
    b = np.zeros(4, "int32")
    tirfun.build(out, target="llvm")(a, b)
    assert (b == a.sum(axis=1)).all()


def test_partition_renames_everything_bound_inside():
    source = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    for i in range(4):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + T.float32(1)
        for j2 in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j2])
                C[vi, vj] = C[vi, vj] * T.float32(2)
"""
    out = applied(R.loop_partition("i", [None, 1]), mod_of(source))
    names = set(index_of(out["main"]).blocks)
    assert {"B_i0", "C_i0", "B_i1", "C_i1", "B_i0_partition", "B_i1_partition", "B_i_common"} <= names


def raises(cls, rewrite, message, source=ROW_SUM):
    mod = mod_of(source)
    with pytest.raises(ScheduleError) as info:
        rewrite(mod)
    assert type(info.value) is cls
    assert info.value.summary == message
    assert rewrite.violations(mod)


def test_errors():
    raises(R.WrongFactorError, R.loop_partition("k", [4, 6]),
           "loop_partition: loop 'k': the factors sum to 10, which leaves nothing of the loop's extent 10 for "
           "the last part")
    raises(R.WrongFactorError, R.loop_partition("k", [None, 10]),
           "loop_partition: loop 'k': the factors sum to 10, which leaves nothing of the loop's extent 10 for "
           "the inferred part")
    raises(R.NonPositiveFactorError, R.loop_partition("k", [0, None]),
           "loop_partition: loop 'k': factor 0 is 0; factors must be positive")
    raises(R.InvalidFactorError, R.loop_partition("k", [1.5]),
           "loop_partition: loop 'k': factor 0 is 1.5; loop_partition takes positive ints and at most one None")
    raises(R.InvalidFactorError, R.loop_partition("k", 3),
           "loop_partition: loop 'k': factors must be a non-empty list of positive ints and at most one None, "
           "got 3")
    raises(R.NotSingleInferFactorError, R.loop_partition("k", [None, None]),
           "loop_partition: loop 'k': 2 factors are None; only one factor can be inferred")
    raises(R.InvalidArgumentError, R.loop_partition("k", [2], preserve_unit_iters="yes"),
           "loop_partition: argument preserve_unit_iters: expected True or False, got 'yes'")
    symbolic = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "int32")
    B = T.match_buffer(b, (n,), "int32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]
"""
    raises(R.SymbolicShapeError, R.loop_partition("i", [2]),
           "loop_partition: loop 'i': the loop runs from 0 for n iterations; loop_partition needs a constant "
           "min and extent", symbolic)
    sch = Schedule(mod_of())
    sch.annotate(sch.get_loops("B")[1], "pragma_unroll_explicit", 1)
    with pytest.raises(R.LoopHasAnnotationOrThreadBindingError):
        sch.loop_partition(sch.get_loops("B")[1], [2])


def test_each_part_has_its_own_copy_of_a_buffer_allocated_inside():
    # a buffer allocated under the loop is renamed in each part, with every
    # use of it; the buffers from outside stay the same objects' names
    source = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi, 0:8])
            T.writes(C[vi, 0:8])
            S = T.alloc_buffer((8,))
            for j in range(8):
                with T.block("S"):
                    vj = T.axis.spatial(8, j)
                    S[vj] = A[vi, vj] * T.float32(2)
            for j2 in range(8):
                with T.block("C"):
                    vj = T.axis.spatial(8, j2)
                    C[vi, vj] = S[vj] + T.float32(1)
"""
    from tirfun.analysis.traversal import walk
    from tirfun.nodes import Block, Buffer

    out = applied(R.loop_partition("i", [None, 1]), mod_of(source))
    rows = [n for n in walk(out["main"]) if isinstance(n, Block) and n.alloc_buffers]
    assert len(rows) == 2
    allocated = [row.alloc_buffers[0] for row in rows]
    assert len({b.name for b in allocated} | {"S"}) == 3
    for row, buf in zip(rows, allocated):
        used = {n.name for n in walk(row.body) if isinstance(n, Buffer)}
        assert used == {"A", "C", buf.name}


def test_each_part_has_its_own_allocation_declared_buffer_and_let():
    # a T.allocate, the buffer declared on it and a let under the loop are
    # bound once per part, under fresh names (the same names bound twice
    # fail the verifier, and print as a module that parses back otherwise)
    source = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        L_data = T.allocate([1], "float32", "local")
        L = T.decl_buffer((1,), "float32", data=L_data, scope="local")
        x: T.float32 = A[i] * T.float32(2)
        L[0] = x
        B[i] = L[0] + T.float32(1)
"""
    from tirfun.analysis.traversal import walk
    from tirfun.nodes import Allocate, DeclBuffer, LetStmt

    out = applied(R.loop_partition("i", [3]), mod_of(source))  # verified, equivalent
    func = out["main"]
    allocated = [n.buffer_var.name for n in walk(func) if isinstance(n, Allocate)]
    declared = [n.buffer.name for n in walk(func) if isinstance(n, DeclBuffer)]
    lets = [n.var.name for n in walk(func) if isinstance(n, LetStmt)]
    for names in (allocated, declared, lets):
        assert len(names) == 2 and len(set(names)) == 2, names
    parsed = from_source(out.script())
    assert_structural_equal(parsed, out)
    assert parsed.script() == out.script()


def test_partitioning_a_function_without_blocks_puts_its_body_in_a_root_block():
    # the parts are its first blocks: the body goes into a root block, as
    # the parser puts a body holding blocks, so the printed module parses
    # back to the same module
    source = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[i] + T.float32(1)
    for i2 in range(8):
        B[i2] = B[i2] * T.float32(2)
"""
    from tirfun.nodes import BlockRealize

    out = applied(R.loop_partition("i2", [None, 3]), mod_of(source))  # indexed, verified, equivalent
    body = out["main"].body
    assert isinstance(body, BlockRealize) and body.block.name_hint == "root"
    parsed = from_source(out.script())
    assert_structural_equal(parsed, out)
    assert parsed.script() == out.script()
    # a second partition finds the root in place
    again = applied(R.loop_partition("i", [4]), out)
    assert again["main"].body.block.body.seq[0].block.name_hint == "i_common"


def test_the_common_blocks_regions_of_constant_parts_are_those_inference_gives():
    # constant boxes are joined in integers; inference over the parts'
    # regions gives the same regions, the same objects' values and dtypes
    import random

    from tirfun.analysis.access import access_regions
    from tirfun.nodes import Block, BlockRealize, Buffer, BufferRegion, Evaluate, IntImm, Range, Var
    from tirfun.rewrites.partition import _constant_union, _regions_only

    rng = random.Random(0)
    buffers = [Buffer("A", [64, 64], "float32"), Buffer("B", [64], "float32"),
               Buffer("C", [IntImm("int64", 64), IntImm("int64", 8)], "float32")]

    def box(buf):
        out = []
        for dim in buf.shape:
            lo = rng.choice([0, 0, 3, 17, 63])
            ext = rng.choice([1, 1, 2, 64 - lo]) if lo < 64 else 1
            out.append(Range(IntImm(dim.dtype, lo), IntImm(dim.dtype, min(ext, 64 - lo))))
        return BufferRegion(buf, out)

    def part(k, regions_r, regions_w):
        block = Block([], regions_r, regions_w, f"p{k}", Evaluate(IntImm("int32", 0)))
        return BlockRealize([], IntImm("bool", 1), block)

    for _ in range(200):
        parts = [part(k, [box(rng.choice(buffers)) for _ in range(rng.randint(0, 3))],
                      [box(rng.choice(buffers)) for _ in range(rng.randint(0, 2))])
                 for k in range(rng.randint(1, 4))]
        joined = _constant_union(parts)
        assert joined is not None
        assert joined == tuple(access_regions(_regions_only("common", parts)))
    # a symbolic end: the regions are inferred
    n = Var("n")
    symbolic = [part(0, [BufferRegion(buffers[1], [Range(n, IntImm("int32", 1))])], [])]
    assert _constant_union(symbolic) is None


def test_a_parts_regions_worked_out_from_a_plain_nest_are_those_inference_gives():
    # every loop of random programs and schedules, cut at several places:
    # where the shortcut answers, it answers what inference over the part
    # (the loop over that range, as the rewrite builds it) gives
    from tirfun.analysis.access import access_regions
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import Block, For, ForKind, IntImm
    from tirfun.rewrites.exprs import var_names
    from tirfun.rewrites.partition import _bound_names, _nest_regions, _plain_nest
    from tirfun.testing.block_programs import random_block_program
    from tirfun.testing.schedules import random_block_schedule

    answered = 0
    for seed in range(60):
        mod = random_block_program(seed)
        if seed % 2:
            try:
                mod = random_block_schedule(mod, seed, max_steps=3)(mod)
            except Exception:
                pass
        for _, loop in walk_stmts(mod["main"].body):
            if not isinstance(loop, For) or type(loop.min) is not IntImm or type(loop.extent) is not IntImm:
                continue
            names, _, declared = _bound_names(loop.body)
            nest = _plain_nest(loop.body)
            if nest is None or declared:
                continue
            renamed = set(names) | {loop.loop_var.name}

            def kept(buffer):
                return buffer.name not in renamed and not var_names(buffer) & renamed

            lo, extent = loop.min.value, loop.extent.value
            cuts = {(lo, extent), (lo, 1), (lo + extent - 1, 1), (lo + extent // 2, extent - extent // 2)}
            for start, size in sorted(cuts):
                if size < 1:
                    continue
                got = _nest_regions(nest, loop.loop_var, start, size, kept)
                if got is None:
                    continue
                dtype = loop.loop_var.dtype
                part = Block([], [], [], "part",
                             For(loop.loop_var, IntImm(dtype, start), IntImm(dtype, size), ForKind.SERIAL,
                                                    loop.body))
                assert got == tuple(access_regions(part))
                answered += 1
    assert answered > 100


def test_a_realize_of_a_parameter_inside_the_loop_is_the_parameter_in_every_part():
    # TVM's rolling-buffer program realizes a region of a parameter in the
    # loop: no storage of its own, so each part's copy names the parameter
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((4, 6), "int32"), B: T.Buffer((4, 6), "int32")):
    for i in range(4):
        T.realize(B[i:i + 1, 0:6], "")
        for j in range(6):
            B[i, j] = A[i, j] * 2
""")
    out = applied(R.loop_partition("i", [None, 1]), mod)
    verify(out)
    text = out["main"].script()
    assert "B_1" not in text, text
    assert text.count('T.realize(B[') == 2, text
    assert_equivalent(mod["main"], out["main"])


SMALL_MATMUL = """
@T.prim_func
def main(A: T.Buffer((16, 8), "int32"), B: T.Buffer((8, 12), "int32"), C: T.Buffer((16, 12), "int32")):
    for i, j, k in T.grid(16, 12, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _tiled_parts(blocked: bool):
    """The small matmul with i in tiles of 3 rows that do not divide it,
    partitioned before the last tile: within blocks of 8 rows under a
    column panel (``blocked``: each part of the block's tile loop lies under
    the block and panel loops) or with the panel loop inside the parts."""
    sch = Schedule(mod_of(SMALL_MATMUL))
    i, j, k = sch.get_loops("C")
    j0, j1 = sch.split(j, [None, 4])
    if blocked:
        ib, ii = sch.split(i, [None, 8])
        i0, i1 = sch.split(ii, [None, 3])
        sch.reorder(ib, j0, i0, k, i1, j1)
        cut = 2
    else:
        i0, i1 = sch.split(i, [None, 3])
        sch.reorder(i0, j0, k, i1, j1)
        cut = 5
    return sch, [sch.get_child_blocks(p)[0] for p in sch.loop_partition(i0, [cut])]


@pytest.mark.parametrize("blocked", [True, False])
def test_each_part_of_a_partitioned_tile_loop_takes_a_register_tile(blocked):
    # TVM accepts both: cache_write of each part's block, then its copy back
    # moved under the part's tile loop (or the panel loop inside the part).
    # The full parts' split guard (i_1_00 * 3 + i_1_1 < 8, rows of the block)
    # never cuts there: no fill, and the part's binding, i_0 * 8 + i_1_00 * 3
    # + i_1_1, is affine as TVM reads the guard. The last part's guard bounds
    # a row of a cache moved by the part's start (C_local[v_i - 15]).
    sch, parts = _tiled_parts(blocked)
    for part in parts:
        tile = sch.get_loops(part)[-4]
        cache = sch.cache_write(part, 0, "local")
        sch.reverse_compute_at(cache, tile)
        assert sch.get(tile) in [sch.get(lp) for lp in sch.get_loops(cache)]
    text = sch.mod["main"].script()
    assert "_fill" not in text
    verify(sch.mod)
    assert_equivalent(mod_of(SMALL_MATMUL)["main"], sch.mod["main"])
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, (16, 8)).astype("int32")
    b = rng.integers(-50, 50, (8, 12)).astype("int32")
    c = np.zeros((16, 12), "int32")
    tirfun.build(sch.mod, target="llvm")(a, b, c)
    assert (c == a @ b).all()
