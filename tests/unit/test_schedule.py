"""The Schedule facade: the tutorial, TVM's method names, the trace."""

import io

import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.errors import ScheduleError, VerifyError
from tirfun.nodes import Block, For, IRModule
from tirfun.schedule import Schedule, Trace
from tirfun.script import from_source
from tirfun.script import tir as T


@tirfun.script.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0


AFTER_SPLIT = '''# from tirfun.script import ir as I
# from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i_0, i_1, i_2 in T.grid(2, 2, 2):
            with T.block("B"):
                vi = T.axis.spatial(8, i_0 * 4 + i_1 * 2 + i_2)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] + T.float32(1.0)'''

AFTER_BIND = '''# from tirfun.script import ir as I
# from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i_0 in T.thread_binding(2, thread="blockIdx.x"):
            for i_2 in T.thread_binding(2, thread="threadIdx.x"):
                for i_1 in range(2):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i_0 * 4 + i_1 * 2 + i_2)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] + T.float32(1.0)'''


def tutorial_schedule() -> Schedule:
    sch = tirfun.Schedule(MyModule)
    block_b = sch.get_block("B")
    (i,) = sch.get_loops(block_b)
    i0, i1, i2 = sch.split(i, factors=[2, 2, 2])
    sch.reorder(i0, i2, i1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(i2, "threadIdx.x")
    return sch


def test_tutorial_split_prints_as_the_tutorial_shows():
    sch = tirfun.Schedule(MyModule)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[2, 2, 2])
    assert sch.mod.script() == AFTER_SPLIT


def test_tutorial_reorder_and_bind_print_as_the_tutorial_shows():
    assert tutorial_schedule().mod.script() == AFTER_BIND


def test_refs_are_tvm_style_return_values():
    sch = tirfun.Schedule(MyModule)
    block = sch.get_block("B")
    assert block == R.BlockRef("B", "main")
    loops = sch.get_loops("B")  # a block may be named by its string
    assert loops == [R.LoopRef("i", "main")]
    new = sch.split(loops[0], factors=[None, 4])
    assert isinstance(new, list) and new == [R.LoopRef("i_0", "main"), R.LoopRef("i_1", "main")]
    fused = sch.fuse(*new)
    assert fused == R.LoopRef("i_0_i_1_fused", "main")
    assert isinstance(sch.get(fused), For) and isinstance(sch.get(block), Block)
    assert sch.add_unit_loop(block) == R.LoopRef("u", "main")


def test_the_trace_replays_to_the_module():
    sch = tutorial_schedule()
    trace = sch.trace
    assert isinstance(trace, Trace) and isinstance(trace, R.Pipeline)
    assert trace(MyModule) == sch.mod
    assert R.Pipeline.from_json(trace.to_json()) == trace
    namespace: dict = {}
    exec(trace.as_python(), namespace)
    replay = Schedule(MyModule)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod
    assert replay.trace == trace


def test_the_module_keeps_its_value_after_more_primitives():
    sch = tutorial_schedule()
    before = sch.mod
    sch.unroll(R.LoopRef("i_1"))
    assert before.script() == AFTER_BIND
    assert sch.mod != before


def test_schedule_of_a_prim_func_and_the_mod_keyword():
    func = MyModule["main"]
    assert Schedule(func).mod == IRModule({"main": func})
    assert Schedule(mod=func).mod == IRModule({"main": func})
    with pytest.raises(ScheduleError, match="expected an IRModule or a PrimFunc"):
        Schedule(3)


def test_copy_is_independent():
    sch = tirfun.Schedule(MyModule)
    other = sch.copy()
    other.split(other.get_loops("B")[0], [2, 4])
    assert sch.mod == MyModule and sch.trace == R.Pipeline()
    assert len(other.trace) == 1


def test_work_on_selects_the_function():
    f = MyModule["main"]
    mod = IRModule({"f": f, "g": f})
    sch = Schedule(mod)
    assert sch.func_working_on is None
    with pytest.raises(R.UnknownFunctionError, match="get_block: block .B.: the schedule does not know "
                                                     "which function to be working on: the module has several"):
        sch.get_block("B")
    sch.work_on("g")
    (i,) = sch.get_loops(sch.get_block("B"))
    assert i == R.LoopRef("i", "g")
    sch.split(i, [2, 4])
    assert sch.mod["f"] is f and sch.mod["g"] != f
    assert sch.get_block("B", func_name="f") == R.BlockRef("B", "f")
    with pytest.raises(R.UnknownFunctionError, match="work_on: function 'h'"):
        sch.work_on("h")


def test_error_render_levels():
    sch = Schedule(MyModule, error_render_level="fast")
    with pytest.raises(R.WrongFactorProductError) as info:
        sch.split(sch.get_loops("B")[0], [2, 2])
    assert "\n" not in str(info.value)
    sch = Schedule(MyModule, error_render_level="none")
    with pytest.raises(R.WrongFactorProductError, match=r"^WrongFactorProductError: The product of the "
                                                        r"split factors is not provably at least the "
                                                        r"loop's extent\.$"):
        sch.split(sch.get_loops("B")[0], [2, 2])
    sch = Schedule(MyModule)
    with pytest.raises(R.WrongFactorProductError) as info:
        sch.split(sch.get_loops("B")[0], [2, 2])
    assert "    for i in range(8):" in str(info.value)
    with pytest.raises(ScheduleError, match="error_render_level"):
        Schedule(MyModule, error_render_level="loud")


def test_a_failed_primitive_changes_nothing():
    sch = tirfun.Schedule(MyModule)
    with pytest.raises(ScheduleError):
        sch.fuse(R.LoopRef("nope"))
    assert sch.mod is MyModule and len(sch.trace) == 0


def test_debug_mask_all_verifies():
    bad = from_source("""
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            A[vi] = A[vi]
""")
    import attrs

    # a module that breaks block isolation: the block body uses the loop variable
    realize = bad.body.block.body.body
    store = realize.block.body
    broken_block = attrs.evolve(realize.block, body=attrs.evolve(store, indices=[bad.body.block.body.loop_var]))
    broken = attrs.evolve(bad, body=attrs.evolve(bad.body, block=attrs.evolve(
        bad.body.block, body=attrs.evolve(bad.body.block.body, body=attrs.evolve(realize, block=broken_block)))))
    Schedule(broken)  # no checks by default
    with pytest.raises(VerifyError):
        Schedule(broken, debug_mask="all")
    sch = Schedule(MyModule, debug_mask="all")
    sch.split(sch.get_loops("B")[0], [2, 4])
    with pytest.raises(ScheduleError, match="debug_mask"):
        Schedule(MyModule, debug_mask="some")


def test_show_prints_the_module_and_the_trace():
    sch = tutorial_schedule()
    out = io.StringIO()
    sch.show(file=out)
    text = out.getvalue()
    assert 'for i_0 in T.thread_binding(2, thread="blockIdx.x"):' in text
    assert "def apply_trace(sch):" in text


def test_every_primitive_method_has_tvm_keywords():
    src = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    for k, l in T.grid(8, 8):
        with T.block("C"):
            vk, vl = T.axis.remap("SS", [k, l])
            C[vk, vl] = A[vk, vl]
"""
    sch = Schedule(from_source(src), debug_mask="all")
    i, j = sch.get_loops(block="B")
    k, _ = sch.get_loops(block="C")
    m = sch.merge(i, k)
    assert m == R.LoopRef("i_m", "main")
    a, b = sch.split(loop=j, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
    f = sch.fuse(a, b, preserve_unit_iters=False)
    l0, l1 = sch.split(R.LoopRef("l"), [2, None])
    sch.reorder(l1, l0)
    sch.reorder_block_iter_var(block="B", new_order=[1, 0])
    u = sch.add_unit_loop(block_or_loop=f)
    sch.parallel(loop=m)
    sch.vectorize(loop=u)
    sch.bind(loop=f, thread_axis="threadIdx.x")
    sch.unroll(loop=l0)
    sch.annotate(block_or_loop="C", ann_key="k", ann_val=1)
    sch.unannotate(block_or_loop="C", ann_key="k")
    assert [b.name for b in sch.get_child_blocks(block_or_loop=m)] == ["B", "C"]
    assert sch.get_producers(block="C") == [] and sch.get_consumers(block="B") == []
    assert [b.name for b in sch.get_output_blocks(scope_block="root")] == ["B", "C"]
    assert sch.trace(from_source(src)) == sch.mod


def test_a_block_reference_follows_its_block_through_decompose_reduction():
    # TVM's decompose_reduction renames the reduction block to Y_update; a
    # BlockRV still points at it, and so does a tirfun BlockRef in a Schedule
    from tirfun import Schedule
    from tirfun.errors import ScheduleError
    from tirfun.script import from_source

    src = '''@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), Y: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("Y"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                Y[vi] = T.float32(0)
            Y[vi] = Y[vi] + A[vi, vk]'''
    sch = Schedule(from_source(src))
    y = sch.get_block("Y")
    i, k = sch.get_loops(y)
    init = sch.decompose_reduction(y, k)
    assert sch.get(init).name_hint == "Y_init"
    assert sch.get(y).name_hint == "Y_update"
    _, k2 = sch.get_loops(y)
    sch.split(k2, [None, 4])
    assert len(sch.get_loops(y)) == 3
    with pytest.raises(ScheduleError, match="no block with that name"):
        sch.get_block("Y")  # by name, as in TVM, the old name is gone
    assert sch.trace(IRModule({"main": from_source(src)})) == sch.mod
