"""The shortcuts blockize (and tensorize, through it) takes give what the
general paths they skip give: the index blockize states for its result is
the one built afresh, and a block that binds other names (a Let, a declared
buffer) or a loop that names a buffer in its bounds is left to the
generic derivation."""

import importlib

import pytest

import tirfun.rewrites as R
from tirfun.analysis.traversal import walk_stmts
from tirfun.nodes import For, IRModule
from tirfun.rewrites.index import build_index, index_of
from tirfun.script import from_source
from tirfun.testing.block_programs import random_block_program
from tirfun.testing.schedules import random_block_schedule

from test_rewrites_index import _index_is_the_built_one
from test_rewrites_stated_index import _spy

BZ = importlib.import_module("tirfun.rewrites.blockize")

# a Let in the block's body, and a loop whose extent loads from a buffer
LET_BODY = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            z = T.float32()
            B[vi, vj] = T.Let(z * T.float32(2), where={z: A[vi, vj]})
"""

LOADED_EXTENT = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), N: T.Buffer((1,), "int32")):
    for i in range(8):
        for j in range(N[0]):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.opaque(4, j)
                B[vi, vj] = A[vi, vj]
"""


def drawn_programs(seeds: int) -> list:
    """Random block programs, as drawn and after a short random schedule
    (the program alone where the schedule does not apply)."""
    from tirfun.errors import TirfunError

    mods = []
    for seed in range(seeds):
        mod = random_block_program(seed)
        mods.append(mod)
        try:
            mods.append(random_block_schedule(mod, seed, max_steps=3)(mod))
        except TirfunError:
            pass
    return mods


def _loops_and_modules():
    """Random block programs, as drawn and after a short random schedule,
    with each of their loops."""
    for m in drawn_programs(6):
        for _, stmt in walk_stmts(m["main"]):
            if isinstance(stmt, For):
                yield m, stmt.loop_var.name


def test_the_stated_index_is_the_built_one(monkeypatch):
    used = _spy(monkeypatch, BZ, "_stated_index")
    checked = 0
    for mod, loop in _loops_and_modules():
        for preserve in (True, False):
            record = R.blockize(loop, preserve)
            if record.violations(mod):
                continue
            _index_is_the_built_one(record(mod)["main"], record)
            checked += 1
    assert checked > 40 and sum(used) > 40


@pytest.mark.parametrize("source, loop", [(LET_BODY, "j"), (LOADED_EXTENT, "j")])
def test_what_binds_other_names_is_left_to_the_derivation(monkeypatch, source, loop):
    used = _spy(monkeypatch, BZ, "_stated_index")
    mod = IRModule({"main": from_source(source)})
    out = R.blockize(loop)(mod)
    assert used == [False]
    assert index_of(out["main"]) == build_index(out["main"])


TZ = importlib.import_module("tirfun.rewrites.tensorize")


@pytest.mark.parametrize("case", [
    "tiled matmul", "test_tensorize_a_reduction_keeps_the_outer_init",
    "test_tensorize_a_batch_keeps_the_leading_dimension_a_single_index",
    "test_tensorize_renames_the_implementations_names_apart_from_the_functions",
    "test_tensorize_an_int8_matmul_over_a_packed_layout",
    "test_tensorize_an_int64_block_retypes_the_implementations_indices",
])
def test_tensorize_states_the_built_index(monkeypatch, case):
    """tensorize of a loop states the index of its result (the block
    blockize made never enters the function): over the tensorize tests,
    each stated index is the one built afresh."""
    import test_tensorize

    stated = []
    original = TZ._stated_index

    def checked(bplan, new, new_func):
        out = original(bplan, new, new_func)
        if out is not None:
            assert out == build_index(new_func)
        stated.append(out is not None)
        return out

    monkeypatch.setattr(TZ, "_stated_index", checked)
    if case == "tiled matmul":  # the tensorize test's schedule, without its run of the kernel
        from tirfun import tir

        sch, ii = test_tensorize._tiled_matmul()
        sch.tensorize(ii, tir.TensorIntrin(test_tensorize.MMA_DESC, test_tensorize.MMA_IMPL))
    else:
        getattr(test_tensorize, case)()
    assert stated and all(stated)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_a_relaxed_variable_range_is_bound_inferences(monkeypatch, dtype):
    """A dimension starting at a variable, relaxed over literal ends or not
    relaxed, worked out in integers, is what bound inference and the
    simplification of its ends give (the general path of _relaxed), ends
    up to and past the dtype's limits and the buffer's extent included."""
    import random

    from tirfun.errors import NodeError
    from tirfun.nodes import Buffer, BufferRegion, IntImm, Range, Var
    from tirfun.nodes.dtype import DataType

    rng = random.Random(dtype)
    low, high = DataType(dtype).min_value(), DataType(dtype).max_value()
    ends = [low, low + 1, -3, 0, 1, 2, 7, 100, high - 8, high - 1, high]
    x, y = Var("x", dtype), Var("y", dtype)
    cases = []
    for _ in range(300):
        def lit(v):
            return IntImm(dtype, max(low, min(high, v)))
        dom = {x: Range(lit(rng.choice(ends)), lit(rng.choice(ends)))}
        shape = rng.choice([lit(rng.choice(ends)), y])
        dims = [Range(rng.choice([x, y]), lit(rng.choice(ends))) for _ in range(2)]
        cases.append(([BufferRegion(Buffer("A", [shape, shape], "float32"), dims)], dom))
    def outcome(regions, dom):
        try:
            return BZ._relaxed(regions, dom)
        except NodeError as err:  # an end that leaves the dtype: both paths refuse it alike
            return str(err)

    fast = [outcome(regions, dom) for regions, dom in cases]
    monkeypatch.setattr(BZ, "_relaxed_var", lambda *args: None)
    assert fast == [outcome(regions, dom) for regions, dom in cases]
