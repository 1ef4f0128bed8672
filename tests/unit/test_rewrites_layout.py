"""transform_layout: the buffer in a new layout, every access through the
map, the program's meaning kept; each refusal with its error."""

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.interp import run as interp_run
from tirfun.nodes import BlockRealize, IRModule
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from corner_sources import VECTOR_PRODUCER

TWO_STAGES = """
@T.prim_func
def main(A: T.Buffer((8, 12), "float32"), C: T.Buffer((8, 12), "float32")):
    B = T.alloc_buffer((8, 12))
    for i, j in T.grid(8, 12):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 12):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

# a reduction whose blocks declare ranges of the buffer (a row at a time)
ROWS = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4, 8))
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi, 0:8])
            T.writes(B[vi, 0:8])
            for j in range(8):
                B[vi, j] = A[vi, j] * T.float32(3)
    for i, k in T.grid(4, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]
"""


def mod_of(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


def check(before: IRModule, after: IRModule) -> None:
    """Verified, the same meaning, compiled to the interpreter's results."""
    verify(after)
    assert_equivalent(before["main"], after["main"])
    from tirfun.rewrites.index import build_index, index_of

    assert index_of(after["main"]) == build_index(after["main"])
    func = after["main"]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d) for d in func.buffer_map[p].shape]).astype("float32")
            for p in func.params]
    expected = [a.copy() for a in args]
    interp_run(func, *expected)
    tirfun.build(after, target="llvm")(*args)
    for x, y in zip(expected, args):
        assert x.tobytes() == y.tobytes()
    assert_structural_equal(from_source(func.script()), func)


@pytest.mark.parametrize("index_map, shape", [
    (lambda i, j: (i // 4, j // 4, i % 4, j % 4), [2, 3, 4, 4]),
    (lambda i, j: (j, i), [12, 8]),
    (lambda i, j: (i * 12 + j,), [96]),
    (lambda i, j: (j // 3, i, j % 3), [4, 8, 3]),
])
@pytest.mark.parametrize("spec", [("B", ("write", 0)), ("C", ("read", 0))], ids=["writer", "reader"])
def test_an_intermediate_in_a_new_layout_keeps_the_meaning(index_map, shape, spec):
    mod = mod_of(TWO_STAGES)
    block, buffer = spec
    out = R.transform_layout(block, buffer, index_map)(mod)
    check(mod, out)
    B = out["main"].body.block.alloc_buffers[0]
    assert [int(d) for d in B.shape] == shape


def test_declared_ranges_map_to_the_box_their_image_spans():
    mod = mod_of(ROWS)
    out = R.transform_layout("B", ("write", 0), lambda i, j: (j // 4, i, j % 4))(mod)
    check(mod, out)
    block = out["main"].body.block.body.seq[0].body.block
    assert block.writes[0].script() == "B[0:2, vi, 0:4]"


def test_a_parameter_changes_in_the_signature():
    # as in TVM: the caller passes the array in the new layout
    mod = mod_of(TWO_STAGES)
    out = R.transform_layout("B", ("read", 0), lambda i, j: (j, i))(mod)
    func = out["main"]
    A = func.buffer_map[func.params[0]]
    assert [int(d) for d in A.shape] == [12, 8]
    a = np.arange(96, dtype="float32").reshape(8, 12)
    c_before, c_after = np.zeros((8, 12), "float32"), np.zeros((8, 12), "float32")
    interp_run(mod["main"], a, c_before)
    interp_run(func, np.ascontiguousarray(a.T), c_after)
    assert c_before.tobytes() == c_after.tobytes()


def test_the_schedule_method_takes_a_buffer_name_and_replays():
    mod = mod_of(TWO_STAGES)
    sch = Schedule(mod)
    sch.transform_layout("C", "B", lambda i, j: (i // 2, j, i % 2))
    assert [int(d) for d in sch.mod["main"].body.block.alloc_buffers[0].shape] == [4, 12, 2]
    namespace: dict = {}
    exec(sch.trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod
    assert R.Pipeline.from_json(R.Pipeline(list(sch.trace)).to_json())(mod) == sch.mod


def test_symbolic_shapes_transpose():
    src = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n, m))
    B = T.alloc_buffer((n, m))
    for i, j in T.grid(n, m):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(n, m):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)
"""
    mod = mod_of(src)
    out = R.transform_layout("B", ("write", 0), lambda i, j: (j, i))(mod)
    verify(out)
    assert [d.script() for d in out["main"].body.block.alloc_buffers[0].shape] == ["m", "n"]
    assert_equivalent(mod["main"], out["main"])


TAKES_POINTER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    T.evaluate(T.call_extern("int32", "use", B.data))
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
"""

VECTOR = VECTOR_PRODUCER

VIEWED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(2):
        with T.block("C"):
            vi = T.axis.spatial(2, i)
            V = T.match_buffer(B[vi * 4:vi * 4 + 4], (4,))
            for k in range(4):
                C[vi * 4 + k] = V[k]
"""

CASES = [
    (TWO_STAGES, R.transform_layout("B", ("write", 0), lambda i, j: (i // 3, i % 3, j)),
     R.TransformationIntroducesPaddingError,
     "transform_layout: block 'B': the index map does not take the shape (8, 12) of buffer B one to one onto "
     "the shape (3, 3, 12) it spans: some elements would be padding"),
    (TWO_STAGES, R.transform_layout("B", ("write", 0), lambda i, j: (i + j, j)),
     R.TransformationIntroducesPaddingError, "transform_layout: block 'B': the index map does not take"),
    (TWO_STAGES, R.transform_layout("B", ("write", 0), lambda i, j: (i - 1, j)),
     R.TransformationIntroducesPaddingError,
     "transform_layout: block 'B': the index i - 1 of the map does not run over a range from 0"),
    (TWO_STAGES, R.transform_layout("B", ("write", 0), lambda i: (i,)), R.InvalidArgumentError,
     "transform_layout: block 'B': the index map takes 1 indices, but buffer B has 2 dimensions"),
    (TWO_STAGES, R.transform_layout("B", ("write", 3), lambda i, j: (j, i)), R.BufferIndexOutOfRangeError, None),
    (TWO_STAGES, R.transform_layout("B", ("both", 0), lambda i, j: (j, i)), R.InvalidArgumentError,
     "transform_layout: block 'B': buffer must be ('read' | 'write', index)"),
    (TWO_STAGES, R.transform_layout("B", ("write", 0), "not a map"), R.InvalidArgumentError,
     "transform_layout: block 'B': the index map must be a function"),
    (TAKES_POINTER, R.transform_layout("B", ("write", 0), lambda i: (7 - i,)), R.UnsupportedLayoutError,
     "transform_layout: block 'B': the pointer of buffer B is taken"),
    (VECTOR, R.transform_layout("C", ("read", 0), lambda i: (i,)), R.UnsupportedLayoutError,
     "transform_layout: block 'C': buffer B is accessed as a vector"),
    (VIEWED, R.transform_layout("B", ("write", 0), lambda i: (i // 4, i % 4)), R.BufferIsSubregionError,
     "transform_layout: block 'B': buffer B is viewed by match_buffer V in block 'C', whose view would not "
     "follow the new layout"),
]


@pytest.mark.parametrize("source, rewrite, cls, message", CASES,
                         ids=[f"{c[2].__name__}-{k}" for k, c in enumerate(CASES)])
def test_each_refusal_with_its_message(source, rewrite, cls, message):
    mod = mod_of(source)
    with pytest.raises(ScheduleError) as info:
        rewrite(mod)
    assert type(info.value) is cls
    if message is not None:
        assert str(info.value).split("\n")[0].startswith(message), str(info.value)
    assert type(rewrite.violations(mod)[0]) is cls


def test_assume_injective_transform_takes_the_callers_word():
    # TVM's escape hatch: a map the analysis cannot read as one to one
    mod = mod_of(TWO_STAGES)
    rewrite = R.transform_layout("B", ("write", 0), lambda i, j: (i * 12 + j,), assume_injective_transform=True)
    out = rewrite(mod)
    check(mod, out)


def test_a_map_of_star_indices_takes_the_dimensions_its_named_parameters_leave():
    # TVM's sugar: lambda *indices, k: ... maps the last dimension by name
    src = """
@T.prim_func
def main(A: T.Buffer((4, 4, 8), "float32"), B: T.Buffer((1,), "float32")):
    for i, j, k in T.grid(4, 4, 8):
        with T.block("compute"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + A[vi, vj, vk]
"""
    mod = mod_of(src)
    sch = Schedule(mod)
    sch.transform_layout("compute", "A", lambda *indices, k: [*indices, k // 4, k % 4])
    A = sch.mod["main"].buffer_map[sch.mod["main"].params[0]]
    assert [int(d) for d in A.shape] == [4, 4, 2, 4]
    assert "A[vi, vj, vk // 4, vk % 4]" in sch.mod["main"].script()
    # traced on the buffer's dimensions, the trace holds the map as a value
    assert R.Pipeline.from_json(R.Pipeline(list(sch.trace)).to_json())(mod) == sch.mod


def test_a_map_of_int64_indices_takes_their_dtype():
    src = TWO_STAGES.replace("(8, 12)", "(T.int64(8), T.int64(12))").replace(
        "T.grid(8, 12)", "T.grid(T.int64(8), T.int64(12))")
    mod = mod_of(src)
    sch = Schedule(mod)
    sch.transform_layout("B", ("write", 0), lambda i, j: (i // 4, j, i % 4))
    B = sch.mod["main"].body.block.alloc_buffers[0]
    assert [str(d.dtype) for d in B.shape] == ["int64"] * 3
    check(mod, sch.mod)


# ---------------------------------------------------------------------- transform_block_layout

MATMUL = """
@T.prim_func
def main(A: T.Buffer((8, 6), "float32"), B: T.Buffer((6, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i, j, k in T.grid(8, 4, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


@pytest.mark.parametrize("index_map, extents, kinds", [
    (lambda i, j, k: (i * 4 + j, k), [32, 6], "SR"),
    (lambda i, j, k: (j, i, k), [4, 8, 6], "SSR"),
    (lambda i, j, k: (i // 2, j, k // 3, i % 2, k % 3), [4, 4, 2, 2, 3], "SSRSR"),
])
def test_a_block_over_a_new_iteration_space_keeps_the_meaning(index_map, extents, kinds):
    mod = mod_of(MATMUL)
    sch = Schedule(mod)
    sch.transform_block_layout("C", index_map)
    out = sch.mod
    block = out["main"].body.block.body
    while not isinstance(block, BlockRealize):
        block = block.body
    assert [int(iv.dom.extent) for iv in block.block.iter_vars] == extents
    assert "".join("S" if iv.iter_type.value == "DataPar" else "R" for iv in block.block.iter_vars) == kinds
    check(mod, out)
    # the trace holds the traced map and replays
    assert R.Pipeline.from_json(R.Pipeline(list(sch.trace)).to_json())(mod) == out


def test_the_layout_analyses_are_memoised_and_can_be_forgotten():
    from tirfun.rewrites.memos import analysis_memos, clear_analysis_memos

    clear_analysis_memos()
    assert all(memo.cache_info().currsize == 0 for memo in analysis_memos())
    mod = mod_of(MATMUL)
    Schedule(mod).transform_block_layout("C", lambda i, j, k: (j, i, k))
    Schedule(mod).transform_layout("C", ("write", 0), lambda i, j: (j, i))
    # a second block alike would be answered from the tables
    assert all(memo.cache_info().currsize > 0 for memo in analysis_memos())
    clear_analysis_memos()
    assert all(memo.cache_info().currsize == 0 for memo in analysis_memos())


def test_transform_block_layout_refusals():
    mod = mod_of(MATMUL)
    cases = [
        (R.transform_block_layout("C", lambda i, j, k: (i * 6 + k, j)), R.OpaqueNewIterTypeError,
         "transform_block_layout: block 'C': the new iteration variable i * 6 + k mixes data-parallel and "
         "reduction variables"),
        (R.transform_block_layout("C", lambda i, j, k: (i + j, k)), R.NotBijectiveAffineIndexMapError,
         "transform_block_layout: block 'C': the index map (i + j, k) is not a bijective affine map"),
        (R.transform_block_layout("C", lambda i, j: (i, j)), R.InvalidArgumentError,
         "transform_block_layout: block 'C': the index map takes 2 variables, but the block has 3"),
    ]
    for rewrite, cls, message in cases:
        with pytest.raises(cls) as info:
            rewrite(mod)
        assert str(info.value).startswith(message), str(info.value)
    split = R.split("k", [2, 3])(mod)
    with pytest.raises(R.NotTrivialBindingError, match="not bound to the loops around it, one loop each"):
        R.transform_block_layout("C", lambda i, j, k: (i, j, k))(split)
    sided = mod_of(MATMUL.replace('vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
                                  'vi, vj, vk = T.axis.remap("SSR", [i, j, k])\n            T.where(i < 7)'))
    with pytest.raises(R.NonTrivialPredicateError, match="the block has the predicate i < 7"):
        R.transform_block_layout("C", lambda i, j, k: (i, j, k))(sided)


def test_a_map_that_pads_takes_a_pad_value_the_producer_writes():
    src = TWO_STAGES.replace("(8, 12)", "(8, 14)").replace("T.grid(8, 12)", "T.grid(8, 14)")
    mod = mod_of(src)
    rewrite = R.transform_layout("B", ("write", 0), lambda i, j: (i, j // 4, j % 4), pad_value=-1.0)
    out = rewrite(mod)
    check(mod, out)
    root = out["main"].body.block
    assert [int(d) for d in root.alloc_buffers[0].shape] == [8, 4, 4]
    # the producer runs over the new layout, writing -1 exactly where no
    # element of the old layout lands (j // 4 == 3 and j % 4 >= 2)
    producer = root.body.seq[0]
    assert [int(producer.extent), int(producer.body.extent), int(producer.body.body.extent)] == [8, 4, 4]
    store = producer.body.body.body.block.body
    assert store.value.script() == ("T.if_then_else(v_axis1 == 3 and 2 <= v_axis2, T.float32(-1.0), "
                                    "A[v_axis0, v_axis1 * 4 + v_axis2] * T.float32(2.0))")
    with pytest.raises(R.TransformationIntroducesPaddingError, match="give a pad_value for them, as TVM requires"):
        R.transform_layout("B", ("write", 0), lambda i, j: (i, j // 4, j % 4))(mod)


def test_an_axis_separator_in_the_map_sets_the_new_buffers_separators():
    from tirfun.tir import IndexMap

    mod = mod_of(TWO_STAGES)
    sch = Schedule(mod)
    sch.transform_layout("B", ("write", 0), lambda i, j: [i // 4, IndexMap.AXIS_SEPARATOR, i % 4, j])
    B = sch.mod["main"].body.block.alloc_buffers[0]
    assert [int(d) for d in B.shape] == [2, 4, 12] and list(B.axis_separators) == [1]
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"])
    assert R.Pipeline.from_json(R.Pipeline(list(sch.trace)).to_json())(mod) == sch.mod
    namespace: dict = {}
    exec(sch.trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod
    # an IndexMap value, as TVM's IndexMap.from_func makes it
    m = IndexMap.from_func(lambda i, j: (j, i))
    assert [e.script() for e in m.map_indices([1, 2])] == ["2", "1"]
    out = R.transform_layout("B", ("write", 0), m)(mod)
    assert [int(d) for d in out["main"].body.block.alloc_buffers[0].shape] == [12, 8]
    with pytest.raises(R.InvalidArgumentError, match="AXIS_SEPARATOR may stand only between two results"):
        R.transform_layout("B", ("write", 0), lambda i, j: [IndexMap.AXIS_SEPARATOR, i, j])(mod)


def test_transform_block_layout_refuses_loops_over_part_of_the_domain():
    # found by the soak: loop_partition's parts run over part of the domain;
    # the new loops would run over all of it
    from tirfun.nodes import Var

    mod = mod_of(MATMUL)
    parted = R.loop_partition("k", [None, 4])(mod)
    i, j, k = Var("i"), Var("j"), Var("k")
    with pytest.raises(R.NotTrivialBindingError, match="each loop running over the whole domain from 0"):
        R.transform_block_layout("C_k0", ((i, j, k), (i, j, k)))(parted)


POINT_VIEWED = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4, 6), "float32")):
    B = T.alloc_buffer((4, 6))
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            S = T.match_buffer(B[vi, vj], (), offset_factor=1)
            S[()] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            S = T.match_buffer(B[vi, vj], (), offset_factor=1)
            C[vi, vj] = S[()] + T.float32(1)
"""


def test_a_buffer_viewed_one_element_at_a_time_takes_a_new_layout():
    # the view's source point maps to its new place
    mod = mod_of(POINT_VIEWED)
    out = R.transform_layout("B", ("write", 0), lambda i, j: (j // 2, i, j % 2))(mod)
    check(mod, out)
    view = out["main"].body.block.body.seq[0].body.body.block.match_buffers[0]
    assert view.source.script() == "B[vj // 2, vi, vj % 2]"


def test_views_take_the_separators_and_larger_views_refuse_a_new_layout():
    from tirfun.tir import IndexMap

    mod = mod_of(POINT_VIEWED)
    sch = Schedule(mod)
    sch.set_axis_separator("B", ("write", 0), [1])
    views = [n.body.body.block.match_buffers[0].buffer for n in sch.mod["main"].body.block.body.seq]
    # a 0-d view has no axis to separate: TVM gives it zeros, one per separator
    assert [list(v.axis_separators) for v in views] == [[0], [0]]
    assert_equivalent(mod["main"], sch.mod["main"])
    same = Schedule(mod)
    same.transform_layout("B", "B", lambda i, j: [i, IndexMap.AXIS_SEPARATOR, j])
    assert same.mod == sch.mod
    rows = mod_of(POINT_VIEWED.replace("S = T.match_buffer(B[vi, vj], (), offset_factor=1)\n            S[()] = A[vi, vj]",
                                 "S = T.match_buffer(B[vi, 0:6], (6,), offset_factor=1)\n            S[vj] = A[vi, vj]"))
    with pytest.raises(R.BufferIsSubregionError,
                       match="buffer B is viewed by match_buffer S in block 'B', whose view would not follow"):
        R.transform_layout("B", ("write", 0), lambda i, j: (j, i))(rows)
    # under the identity map the row view keeps its meaning, separators aside
    out = R.transform_layout("B", ("write", 0), lambda i, j: (i, j))(rows)
    assert_equivalent(rows["main"], out["main"])
    with pytest.raises(R.BufferIsSubregionError, match="whose view would not follow"):
        R.transform_layout("B", ("write", 0), lambda i, j: (i, j // 4, j % 4), pad_value=0.0)(mod)


def test_a_buffer_index_out_of_range_is_an_assertion_error_too():
    # what TVM's Python API raises for it
    sch = Schedule(mod_of(TWO_STAGES))
    for spec in [("write", 1), ("read", -1)]:
        with pytest.raises(AssertionError):
            sch.set_axis_separator("B", spec, [1])
        with pytest.raises(R.BufferIndexOutOfRangeError):
            sch.transform_layout("B", spec, lambda i, j: (j, i))


def test_accesses_in_the_new_layout_are_simplified_with_the_variables_ranges():
    # a cache read of a blockized consumer, tiled as the consumer reads it:
    # vi_o + vi_i // 16 is vi_o where vi_i runs over [0, 16), as TVM gives it
    sch = Schedule(mod_of(TWO_STAGES.replace("(8, 12)", "(32, 32)").replace("T.grid(8, 12)", "T.grid(32, 32)")))
    before = sch.mod
    i, j = sch.get_loops(sch.get_block("C"))
    i, ii = sch.split(i, factors=[None, 16])
    j, jj = sch.split(j, factors=[None, 16])
    sch.reorder(i, j, ii, jj)
    outer = sch.blockize(ii)
    cache = sch.cache_read(outer, 0, "global")
    sch.transform_layout(cache, ("write", 0), lambda i, j: (i // 16, j // 16, i % 16, j % 16))
    inner = sch.get(sch.get_block("C"))
    assert [r.script() for r in inner.reads] == ["B_global[vi_1_o, vj_1_o, vi_1_i, vj_1_i]"]
    check(before, sch.mod)


def test_transform_block_layout_keeps_a_unit_variable_the_map_gives_as_it_is():
    src = TWO_STAGES.replace("(8, 12)", "(1, 12)").replace("T.grid(8, 12)", "T.grid(1, 12)")
    mod = mod_of(src)
    out = R.transform_block_layout("B", lambda i, j: (j, i))(mod)
    check(mod, out)
    block = out["main"].body.block.body.seq[0].body.body.block
    # vi has one value; it is read back from its new variable, as TVM keeps it
    assert block.body.script().startswith("B[v1, v0] = A[v1, v0]")


def test_one_map_on_two_buffers_of_one_shape_names_each_and_keeps_the_meaning():
    # the layout a map gives a shape is worked out once for both buffers:
    # each refusal still names its own buffer, and each result is its own
    mod = mod_of(TWO_STAGES)
    for block, spec, name in (("B", ("write", 0), "B"), ("C", ("write", 0), "C"), ("B", ("read", 0), "A")):
        rewrite = R.transform_layout(block, spec, lambda i, j: (i // 3, i % 3, j))
        with pytest.raises(R.TransformationIntroducesPaddingError) as info:
            rewrite(mod)
        assert str(info.value).split("\n")[0] == (
            f"transform_layout: block '{block}': the index map does not take the shape (8, 12) of buffer {name} "
            "one to one onto the shape (3, 3, 12) it spans: some elements would be padding; give a pad_value for "
            "them, as TVM requires")
    tile = lambda i, j: (i // 4, j // 4, i % 4, j % 4)  # noqa: E731
    first, second = R.transform_layout("B", ("read", 0), tile), R.transform_layout("C", ("write", 0), tile)
    both = (first >> second)(mod)
    func = both["main"]
    assert [tuple(int(d) for d in func.buffer_map[p].shape) for p in func.params] == [(2, 3, 4, 4)] * 2
    assert [int(d) for d in func.body.block.alloc_buffers[0].shape] == [8, 12]
    assert_structural_equal(second(first(mod))["main"], func)
    # the meaning, with the parameters given in their new layouts
    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((8, 12)).astype("float32"), np.zeros((8, 12), "float32")
    interp_run(mod["main"], a, c)
    tiled = lambda x: x.reshape(2, 4, 3, 4).transpose(0, 2, 1, 3).copy()  # noqa: E731
    a2, c2 = tiled(a), np.zeros((2, 3, 4, 4), "float32")
    interp_run(func, a2, c2)
    assert c2.tobytes() == tiled(c).tobytes()
    a3, c3 = a2.copy(), np.zeros_like(c2)
    tirfun.build(both, target="llvm")(a3, c3)
    assert c3.tobytes() == c2.tobytes()


def test_access_tidier_substitutes_and_tidies_in_one_walk_as_the_two_steps_do():
    # the block's parts read through the inverse: one walk gives what
    # substituting, then tidying, gives; an index met again is the same
    from tirfun.nodes import FloorDiv, FloorMod, Var
    from tirfun.rewrites.exprs import substitute
    from tirfun.rewrites.index_maps import access_tidier, tidy_accesses

    block = mod_of(MATMUL)["main"].body.block.body
    while not isinstance(block, BlockRealize):
        block = block.body
    block = block.block
    vi, vj, vk = (iv.var for iv in block.iter_vars)
    v0, v1 = Var("v0"), Var("v1")
    mapping = {vi: FloorDiv(v0, 4), vj: v1, vk: FloorMod(v0, 4) + 0}
    tidy = access_tidier(mapping)
    parts = [block.body, block.init] + list(block.reads) + list(block.writes)
    for part in parts:
        expected = tidy_accesses(substitute(part, mapping))
        assert_structural_equal(tidy(part), expected)
        assert tidy(part) == expected  # names included
    assert tidy_accesses(block.body) == access_tidier()(block.body) == access_tidier({})(block.body)
    # a buffer whose shape is a substituted variable is rewritten too
    from tirfun.nodes import Buffer, BufferLoad, BufferStore, IntImm

    odd = Buffer("S", [vi], "float32")
    store = BufferStore(odd, BufferLoad(odd, [vk + 0]), [IntImm("int32", 0)])
    assert tidy(store) == tidy_accesses(substitute(store, mapping))
    assert tidy(store).buffer.shape[0] == mapping[vi]


def test_an_index_maps_parameters_are_read_as_inspect_reads_them():
    # a plain function's are read from its code object, kept per code
    # object; anything else is asked through inspect
    import functools
    import inspect

    from tirfun.rewrites.index_maps import _parameters

    def by_inspect(fn):
        sig = list(inspect.signature(fn).parameters.values())
        return ([p.name for p in sig if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)],
                any(p.kind is p.VAR_POSITIONAL for p in sig), [p.name for p in sig if p.kind is p.KEYWORD_ONLY])

    def full(a, b=1, /, c=2, *rest, d, e=3, **more):
        return a

    @functools.wraps(full)
    def wrapped(*args, **kwargs):
        return full(*args, **kwargs)

    class Map:
        def __call__(self, i, j):
            return (j, i)

    maps = [lambda i, j: (j, i), lambda *indices: indices, lambda *indices, k: (k,), lambda: (),
            lambda i, /, j, *, k: (i, j, k), full, wrapped, functools.partial(full, 1, d=0), Map(), Map().__call__]
    for fn in maps:
        assert _parameters(fn) == by_inspect(fn), fn
    assert [_parameters(f) for f in (lambda x, y: (y, x), lambda x, y: (y, x))] == [(["x", "y"], False, [])] * 2
    assert _parameters(len) == by_inspect(len)
    # a function of the matrix's two indices lays it out by them
    mod = mod_of(TWO_STAGES)
    out = R.transform_layout("B", ("write", 0), lambda *ij: (ij[1], ij[0]))(mod)
    assert [int(d) for d in out["main"].body.block.alloc_buffers[0].shape] == [12, 8]
    check(mod, out)
