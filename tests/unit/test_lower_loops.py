"""Loop passes: partitioning (init hoisting), unrolling, vectorizing, parallel loops."""

from tirfun import IRModule, Schedule, lower, te
from tirfun.analysis.traversal import walk
from tirfun.lower import (
    PASSES, flatten_buffers, interleave_parallel, lower_blocks, partition_loops, prepare_parallel,
    simplify, unroll_loops, vectorize_loops,
)
from tirfun.lower.interleave import FACTOR
from tirfun.nodes import Broadcast, BufferStore, For, ForKind, IfThenElse, Ramp, Var
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent


def matmul(n=16):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return IRModule({"main": te.create_prim_func([A, B, C])})


def tiled_matmul(n=16, tile=4, kf=2):
    """The matmul schedule of the CPU benchmark: tiles, k split, reorder,
    vectorized inner j, parallel outer i."""
    sch = Schedule(matmul(n))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, tile])
    k0, k1 = sch.split(k, [None, kf])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch.mod


def run_until(mod, last: str):
    for name, p in PASSES:
        mod = p(mod)
        if name == last:
            return mod
    raise AssertionError(last)


def before(mod, name: str):
    """``mod`` after every pass that runs before the pass ``name``."""
    for pass_name, p in PASSES:
        if pass_name == name:
            return mod
        mod = p(mod)
    raise AssertionError(name)


def loops(func):
    return [n for n in walk(func.body) if isinstance(n, For)]


def test_init_test_is_hoisted_out_of_the_hot_loop():
    mod = tiled_matmul()
    before = run_until(mod, "simplify")
    tests = [n for n in walk(before["main"].body) if isinstance(n, IfThenElse)]
    assert [t.condition.script() for t in tests] == ["k_0 == 0 and k_1 == 0"]
    after = partition_loops(before)
    assert not any(isinstance(n, IfThenElse) for n in walk(after["main"].body))
    assert_equivalent(mod["main"], after["main"])


def test_partitioned_copies_bind_fresh_names():
    after = lower(tiled_matmul())
    names = [f.loop_var.name for f in loops(after["main"])]
    assert len(names) == len(set(names))


CUT_AT_THREE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        if i == 3:
            A[i] = T.float32(1)
        else:
            A[i] = T.float32(2)
"""


def test_partition_cuts_around_an_equality():
    mod = IRModule({"main": from_source(CUT_AT_THREE)})
    out = partition_loops(lower_blocks(mod))
    assert not any(isinstance(n, IfThenElse) for n in walk(out["main"].body))
    extents = sorted(f.extent.value for f in loops(out["main"]))
    assert extents == [3, 4]  # [0, 3), i = 3 inlined, [4, 8)
    assert_equivalent(mod["main"], out["main"])


def test_partition_leaves_large_bodies_alone(monkeypatch):
    import tirfun.lower.partition as partition

    monkeypatch.setattr(partition, "MAX_BODY_NODES", 3)
    mod = lower_blocks(IRModule({"main": from_source(CUT_AT_THREE)}))
    assert partition_loops(mod) == mod


def test_unrolled_loops_are_copied_out():
    src = """
@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), B: T.Buffer((4, 3), "float32")):
    for i in range(4):
        for j in T.unroll(3):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    out = unroll_loops(flatten_buffers(lower_blocks(mod)))
    assert [f.loop_var.name for f in loops(out["main"])] == ["i"]
    stores = [n for n in walk(out["main"].body) if isinstance(n, BufferStore)]
    assert len(stores) == 3
    assert_equivalent(mod["main"], out["main"])


def test_vectorized_loop_becomes_ramp_and_broadcast():
    src = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i_0 in range(8):
        for i_1 in T.vectorized(8):
            with T.block("B"):
                vi = T.axis.spatial(64, i_0 * 8 + i_1)
                B[vi] = A[vi] + T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    out = lower(mod)
    stores = [n for n in walk(out["main"].body) if isinstance(n, BufferStore)]
    assert len(stores) == 1
    (index,) = stores[0].indices
    assert isinstance(index, Ramp) and index.lanes == 8 and index.stride.value == 1
    assert index.base.script() == "i_0 * 8"
    assert any(isinstance(n, Broadcast) for n in walk(stores[0].value))
    assert [f.loop_var.name for f in loops(out["main"])] == ["i_0"]
    assert_equivalent(mod["main"], out["main"])


def test_vectorize_keeps_a_loop_whose_lanes_are_not_independent():
    src = """
@T.prim_func
def main(A: T.Buffer((9,), "float32")):
    for i in T.vectorized(8):
        A[i + 1] = A[i] + T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    out = vectorize_loops(mod)
    (loop,) = loops(out["main"])
    assert loop.kind is ForKind.SERIAL
    assert_equivalent(mod["main"], out["main"])


def test_vectorize_keeps_a_loop_with_a_lane_dependent_test():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        if i < 3:
            A[i] = T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    out = vectorize_loops(mod)
    assert loops(out["main"])[0].kind is ForKind.SERIAL
    assert_equivalent(mod["main"], out["main"])


def test_lane_dependent_let_is_inlined():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        x: T.float32 = A[i] * T.float32(2)
        B[i] = x + x
"""
    mod = IRModule({"main": from_source(src)})
    out = vectorize_loops(mod)
    assert not loops(out["main"])
    assert not any(isinstance(n, Var) and n.name == "x" for n in walk(out["main"].body))
    assert_equivalent(mod["main"], out["main"])


def test_nested_parallel_loops_run_serially_inside_the_outer_one():
    src = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32")):
    for i in T.parallel(4):
        for j in T.parallel(4):
            A[i, j] = T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    out = prepare_parallel(mod)
    assert [f.kind for f in loops(out["main"])] == [ForKind.PARALLEL, ForKind.SERIAL]
    assert_equivalent(mod["main"], out["main"])


def test_whole_pipeline_on_the_tiled_matmul():
    mod = tiled_matmul()
    out = lower(mod)
    kinds = {f.kind for f in loops(out["main"])}
    assert ForKind.PARALLEL in kinds and ForKind.VECTORIZED not in kinds
    assert_equivalent(mod["main"], out["main"])
    # simplify is idempotent on the result
    assert simplify(out) == out


def row_sum(rows, cols, schedule_parallel=True):
    A = te.placeholder((rows, cols), "float32", name="A")
    k = te.reduce_axis((0, cols), name="k")
    B = te.compute((rows,), lambda i: te.sum(A[i, k], axis=k), name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    if schedule_parallel:
        i, _ = sch.get_loops(sch.get_block("B"))
        sch.parallel(i)
    return sch.mod


def test_parallel_accumulation_chains_are_interleaved():
    rows = 2 * FACTOR + 3
    mod = row_sum(rows, 5)
    out = interleave_parallel(before(mod, "interleave_parallel"))
    fors = loops(out["main"])
    outer = [f for f in fors if f.kind is ForKind.PARALLEL]
    assert [f.extent.value for f in outer] == [2]
    # one k loop carries FACTOR independent chains
    chain = [f for f in fors if f.kind is ForKind.SERIAL and f.extent.value == 4][0]
    stores = [n for n in walk(chain.body) if isinstance(n, BufferStore)]
    assert len(stores) == FACTOR
    assert len({s.indices[0] for s in stores}) == FACTOR
    # the three rows left over run after the interleaved groups
    tail = [f for f in fors if f.kind is ForKind.SERIAL and f.extent.value == 3]
    assert len(tail) == 1
    names = [f.loop_var.name for f in fors]
    assert len(names) == len(set(names))
    assert_equivalent(mod["main"], out["main"])


def test_interleaving_needs_a_parallel_loop_with_a_chain():
    serial = before(row_sum(20, 5, schedule_parallel=False), "interleave_parallel")
    assert interleave_parallel(serial) == serial
    src = """
@T.prim_func
def main(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
    for i in T.parallel(16):
        for j in range(4):
            B[i, j] = A[i, j] * T.float32(2)
"""
    no_chain = before(IRModule({"main": from_source(src)}), "interleave_parallel")
    assert interleave_parallel(no_chain) == no_chain


def test_symbolic_parallel_extent_is_interleaved_with_a_remainder():
    n = te.var("n")
    A = te.placeholder((n, 3), "float32", name="A")
    k = te.reduce_axis((0, 3), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    mod = sch.mod
    out = interleave_parallel(before(mod, "interleave_parallel"))
    assert [f.extent.script() for f in loops(out["main"]) if f.kind is ForKind.PARALLEL] == \
        [f"n // {FACTOR}"]
    for size in (1, 7, 8, 13):
        assert_equivalent(mod["main"], out["main"], sizes={"n": size})


def test_parallel_bodies_with_vector_loops_are_not_interleaved():
    # an rfactor'd row sum: the vector of partial sums is the body's work,
    # the scalar chain over its lanes is short
    src = """
@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    B_rf = T.alloc_buffer((16, 16), "float32")
    for i in T.parallel(16):
        for ki in T.vectorized(16):
            with T.block("B_rf_init"):
                vi, vki = T.axis.remap("SS", [i, ki])
                B_rf[vi, vki] = T.float32(0)
        for ko in range(4):
            for ki in T.vectorized(16):
                with T.block("B_rf"):
                    vi, vki, vko = T.axis.remap("SSR", [i, ki, ko])
                    B_rf[vi, vki] = B_rf[vi, vki] + A[vi, vko * 16 + vki]
        for ki in range(16):
            with T.block("B"):
                vi, vki = T.axis.remap("SR", [i, ki])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + B_rf[vi, vki]"""
    vector_body = before(IRModule({"main": from_source(src)}), "interleave_parallel")
    assert interleave_parallel(vector_body) == vector_body
    assert_equivalent(IRModule({"main": from_source(src)}), lower(from_source(src)))
