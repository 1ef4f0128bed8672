"""TensorIR that TVM accepts is accepted: nested blocks using outer block
variables, repeated and anonymous block names, regions that do not cover
the body; and the schedule surface TVM users call (get_sref, remove_rv,
same_as, error_render_level, split's disable_predication)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.block_names import unique_block_name, uniquify_block_names
from tirfun.analysis.traversal import blocks
from tirfun.analysis.verify import verify
from tirfun.errors import InterpError, ScheduleError, VerifyError
from tirfun.nodes import Block, For, IRModule, SeqStmt, Var
from tirfun.rewrites.errors import NotSingleBlockError
from tirfun.schedule import Schedule
from tirfun.script import from_source

BLOCKIZED = '''
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for io in range(4):
        with T.block("outer"):
            vo = T.axis.spatial(4, io)
            T.reads(A[vo * 4:vo * 4 + 4])
            T.writes(B[vo * 4:vo * 4 + 4])
            for ii in range(4):
                with T.block("inner"):
                    vi = T.axis.spatial(4, ii)
                    T.reads(A[vo * 4 + vi])
                    T.writes(B[vo * 4 + vi])
                    B[vo * 4 + vi] = A[vo * 4 + vi] + T.float32(1)
'''

REPEATED = '''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] * T.float32(2)
    for i in range(8):
        with T.block():
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + T.float32(1)
    for i in range(8):
        with T.block():
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + T.float32(1)
    for i in range(8):
        with T.block("B_1"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] - T.float32(3)
'''

UNCOVERED = '''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(A[0])
            T.writes(B[0:2])
            B[vi] = A[vi] + T.float32(1)
'''


def _run_both(func, n=16):
    a = np.arange(n, dtype="float32")
    expected, actual = np.zeros(n, "float32"), np.zeros(n, "float32")
    tirfun.interp.run(func, a, expected)
    tirfun.build(IRModule({"main": func}))(a, actual)
    assert expected.tobytes() == actual.tobytes()
    return expected


def test_inner_block_using_outer_block_variables_is_accepted_and_runs():
    func = from_source(BLOCKIZED)
    assert verify(func) is func
    with pytest.raises(VerifyError, match="block isolation .* block iteration variable vo"):
        verify(func, strict=True)
    assert (_run_both(func) == np.arange(16) + 1).all()
    assert from_source(func.script()) == func


def test_repeated_and_anonymous_block_names_are_made_unique_as_tvm_names_them():
    func = from_source(REPEATED)
    names = [b.name_hint for _, b in blocks(func.body)]
    # the written B_1 is kept: the repeat of B skips it
    assert names == ["root", "B", "B_2", "", "_1", "B_1"]
    assert from_source(REPEATED) == func  # deterministic
    assert from_source(func.script()) == func
    assert (_run_both(func, 8) == np.arange(8) * 2 + 2 - 3).all()
    sch = Schedule(func)
    assert sch.get_block("B_2") == R.BlockRef("B_2", "main")
    assert [b.name_hint for b in (sch.get(r) for r in sch.get_child_blocks("root"))] == names[1:]


def test_a_name_repeated_in_the_source_is_ambiguous_to_get_block_as_in_tvm():
    func = from_source(REPEATED)
    assert dict(func.renamed_blocks) == {"B": ("B", "B_2"), "": ("", "_1")}
    sch = Schedule(func)
    with pytest.raises(NotSingleBlockError, match="block name 'B' was repeated in the source of "
                       "function 'main' and renamed B, B_2; use one of those"):
        sch.get_block("B")
    with pytest.raises(NotSingleBlockError, match="renamed , _1"):
        sch.get_block("")
    assert sch.get_block("B_1") == R.BlockRef("B_1", "main")  # written so, not a rename
    # a primitive still reaches the first block by its name
    sch.split(sch.get_loops("B")[0], [2, 4])
    assert dict(sch.mod["main"].renamed_blocks) == dict(func.renamed_blocks)
    with pytest.raises(NotSingleBlockError):
        sch.get_block("B")
    # the record is no part of the value; printed text has unique names, so
    # the function read back has nothing ambiguous
    again = from_source(func.script())
    assert again == func and hash(again) == hash(func) and not again.renamed_blocks
    assert Schedule(again).get_block("B") == R.BlockRef("B", "main")


def test_once_a_repeat_is_gone_its_name_is_no_longer_ambiguous():
    func = from_source(REPEATED)
    removed = attrs.evolve(func, body=attrs.evolve(func.body, block=attrs.evolve(
        func.body.block, body=SeqStmt([s for s in func.body.block.body.seq
                                       if next(blocks(s))[1].name_hint != "B_2"]))))
    assert removed.renamed_blocks == func.renamed_blocks
    assert Schedule(removed).get_block("B") == R.BlockRef("B", "main")


def test_block_name_helpers():
    assert unique_block_name("B", {"A"}) == "B"
    assert unique_block_name("B", {"B", "B_1"}) == "B_2"
    assert unique_block_name("", {""}) == "_1"
    func = from_source(REPEATED)
    assert uniquify_block_names(func) is func
    fixed = uniquify_block_names(_twice_b(func))
    assert [b.name_hint for _, b in blocks(fixed.body)] == ["root", "B", "B_1"]
    # recorded beside the earlier renaming; only the names still present count
    assert dict(fixed.renamed_blocks) == {"B": ("B", "B_2", "B_1"), "": ("", "_1")}
    with pytest.raises(NotSingleBlockError, match="renamed B, B_1; use"):
        Schedule(fixed).get_block("B")


def _twice_b(func):
    """``func`` with its first block nest twice: two blocks named B."""
    seq = func.body.block.body.seq
    return attrs.evolve(func, body=attrs.evolve(func.body, block=attrs.evolve(
        func.body.block, body=SeqStmt([seq[0], seq[0]]))))


def test_a_duplicate_name_built_directly_is_ambiguous_for_the_schedule():
    same = _twice_b(from_source(REPEATED))
    with pytest.raises(VerifyError, match="duplicate name"):
        verify(same)
    with pytest.raises(R.NotSingleBlockError, match="several blocks with that name"):
        Schedule(same).get_loops("B")


def test_uncovered_regions_are_the_users_declaration():
    func = from_source(UNCOVERED)
    assert verify(func) is func
    assert func.body.block.body.body.block.reads[0].region[0].min.value == 0
    with pytest.raises(VerifyError, match="region not covered"):
        verify(func, strict=True)
    assert (_run_both(func, 8) == np.arange(8) + 1).all()


def test_get_sref_stmt_and_parent():
    func = from_source(BLOCKIZED)
    sch = Schedule(func)
    sref = sch.get_sref(sch.get_block("inner"))
    assert isinstance(sref.stmt, Block) and sref.stmt.name_hint == "inner"
    assert isinstance(sref.parent.stmt, For) and sref.parent.stmt.loop_var.name == "ii"
    assert sref.parent.parent.stmt.name_hint == "outer"
    assert sref.parent.parent.parent.stmt.loop_var.name == "io"
    assert sref.parent.parent.parent.parent.stmt.name_hint == "root"
    assert sref.parent.parent.parent.parent.parent is None
    assert sref.ref == R.BlockRef("inner", "main")
    loop = sch.get_sref(sch.get_loops("inner")[0])
    assert loop.stmt is sref.parent.stmt and loop == sref.parent
    with pytest.raises(R.UnknownBlockError):
        sch.get_sref("nope")


def test_remove_rv():
    sch = Schedule(from_source(BLOCKIZED))
    block = sch.get_block("inner")
    (loop,) = sch.get_loops(block)
    sch.remove_rv(loop)
    with pytest.raises(R.RemovedLoopRefError, match="removed from the schedule with remove_rv"):
        sch.split(loop, [2, 2])
    # what TVM raises for a removed random variable, and tirfun's own classes
    with pytest.raises(IndexError):
        sch.get_sref(loop)
    with pytest.raises(R.UnknownLoopError):
        sch.get_sref(loop)
    assert sch.get_loops(block) == [loop]  # asked for again: live again
    sch.split(loop, [2, 2])
    sch.remove_rv(block)
    with pytest.raises(R.RemovedBlockRefError, match="remove_rv"):
        sch.get_loops(block)
    with pytest.raises(IndexError):
        sch.get(block)
    with pytest.raises(R.UnknownBlockError):
        sch.get(block)
    with pytest.raises(R.InvalidArgumentError):
        sch.remove_rv("inner")


def test_a_schedule_of_several_functions_asks_which_one_as_tvm_does():
    func = from_source(BLOCKIZED)
    sch = Schedule(IRModule({"f": func, "g": func}))
    # TVM raises ValueError here; tirfun's class is one
    with pytest.raises(ValueError, match="does not know which function to be working on"):
        sch.get_block("inner")
    with pytest.raises(R.UnknownFunctionError, match="call work_on first"):
        sch.get_block("inner")
    sch.work_on("g")
    assert sch.get(sch.get_block("inner")).name_hint == "inner"


def test_same_as():
    i = Var("i")
    assert i.same_as(i) and i.same_as(Var("i")) and not i.same_as(Var("j"))
    assert not i.same_as(Var("i", "int64"))
    func = from_source(BLOCKIZED)
    assert func.same_as(from_source(BLOCKIZED))
    assert not func.same_as(from_source(BLOCKIZED.replace('"inner"', '"other"')))
    assert R.BlockRef("B", "main").same_as(R.BlockRef("B", "main"))


ERRORS = [
    ("split", lambda s: s.split(s.get_loops("inner")[0], [1, 2]), R.WrongFactorProductError),
    ("get_block", lambda s: s.get_block("missing"), R.UnknownBlockError),
    ("fuse", lambda s: s.fuse(s.get_block("inner")), R.RefKindError),
    ("reorder", lambda s: s.reorder("io", "io"), R.LoopMultiAppearanceError),
    ("parallel", lambda s: s.parallel("missing"), R.UnknownLoopError),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_every_render_level(case):
    _, call, cls = case
    rendered = {}
    for level in ("detail", "fast", "none"):
        sch = Schedule(from_source(BLOCKIZED), error_render_level=level)
        with pytest.raises(cls) as info:
            call(sch)
        err = info.value
        assert isinstance(err, ScheduleError)
        assert err.args == (err.summary,)  # one message
        rendered[level] = str(err)
    assert rendered["fast"] == rendered["detail"].split("\n")[0] == info.value.summary
    assert "\n" not in rendered["fast"]
    first = cls.__doc__.split(".")[0]
    assert rendered["none"] == f"{cls.__name__}: {' '.join(first.split())}."
    if info.value.nodes:
        assert rendered["detail"].count("\n") >= 1 and "    " in rendered["detail"]


def test_detail_shows_the_offending_script():
    sch = Schedule(from_source(BLOCKIZED))
    with pytest.raises(R.WrongFactorProductError) as info:
        sch.split(sch.get_loops("inner")[0], [3, 1])
    lines = str(info.value).split("\n")
    assert lines[0].startswith("split: loop 'ii': ")
    assert "    for ii in range(4):" in lines


def test_disable_predication_past_the_extent_is_refused_downstream():
    sch = Schedule(from_source(BLOCKIZED))
    sch.split(sch.get_loops("inner")[0], [3, 2], disable_predication=True)
    verify(sch.mod)  # TVM accepts it too
    with pytest.raises(VerifyError, match="binding outside domain"):
        verify(sch.mod, strict=True)
    with pytest.raises(VerifyError, match="binding outside domain"):
        tirfun.build(sch.mod)
    with pytest.raises(InterpError, match="outside its domain"):
        tirfun.interp.run(sch.mod["main"], np.zeros(16, "float32"), np.zeros(16, "float32"))
    assert "unsafe when the factors' product" in " ".join(R.Split.__doc__.split())


def test_a_block_named_root_beside_the_implicit_root_is_renamed():
    text = '''
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,))
    with T.block("root"):
        C[0] = T.float32(1)
        A[0] = C[0]
'''
    func = from_source(text)
    assert [b.name_hint for _, b in blocks(func.body)] == ["root", "root_1"]
    assert from_source(func.script()) == func


def test_sequences_as_tvm_flattens_them_round_trip():
    from tirfun.analysis.equality import structural_equal, structural_hash
    from tirfun.nodes import Buffer, BufferStore, Evaluate, IntImm, PrimFunc

    A = Buffer("A", [4], "int32")
    a = Var("a", "handle")

    def store(k):
        return BufferStore(A, IntImm("int32", k), [IntImm("int32", 0)])

    nop = Evaluate(IntImm("int32", 0))
    assert SeqStmt([SeqStmt([store(1), store(2)]), store(3)]) == SeqStmt([store(1), store(2), store(3)])
    assert SeqStmt([nop, store(1), nop]).seq == SeqStmt([store(1)]).seq
    assert SeqStmt([nop, nop]).seq == SeqStmt([nop]).seq
    assert structural_equal(SeqStmt([store(1)]), store(1))
    assert structural_hash(SeqStmt([store(1)])) == structural_hash(store(1))
    assert not structural_equal(SeqStmt([store(1), store(1)]), store(1))
    for body in (SeqStmt([store(1)]), SeqStmt([nop, store(1)]), SeqStmt([SeqStmt([store(1)]), store(2)]),
                 For(Var("i"), 0, 4, "serial", SeqStmt([store(2)])), SeqStmt([nop])):
        func = PrimFunc([a], body, buffer_map={a: A}, attrs={"global_symbol": "main"})
        assert structural_equal(from_source(func.script()), func)
