"""``tvm.tir.analysis`` as TVM's users call it, over tirfun's analyses."""

from __future__ import annotations

import pytest

import tirfun
import tirfun.compat.tvm as tvm
from tirfun.errors import VerifyError
from tirfun.nodes import Var
from tirfun.script import from_source

TEXT = '''
from tirfun.script import tir as T
@T.prim_func
def gemm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
         C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
'''
GEMM = from_source(TEXT)
UPDATE = GEMM.body.block.body.body.body.body.block


def test_the_package_is_where_tvm_has_it():
    assert tvm.tir.analysis.verify_well_formed is tirfun.compat.tvm.analysis.verify_well_formed
    tirfun.compat.install()
    try:
        import tvm.tir.analysis as served  # noqa: F811

        assert served.verify_well_formed(GEMM)
    finally:
        tirfun.compat.uninstall()


def test_verify_well_formed_answers_or_raises_a_value_error():
    analysis = tvm.tir.analysis
    assert analysis.verify_well_formed(GEMM) is True
    assert analysis.verify_well_formed(tirfun.IRModule({"main": GEMM})) is True
    # the loop variable i used inside the block, which only its iteration
    # variables may be
    broken = from_source(TEXT.replace("A[vi, vk] * B[vj, vk]", "A[i, vk] * B[vj, vk]"),
                         check_well_formed=False)
    assert analysis.verify_well_formed(broken, assert_mode=False) is False
    with pytest.raises(ValueError, match="in function gemm") as info:
        analysis.verify_well_formed(broken)
    assert isinstance(info.value, VerifyError)
    with pytest.raises(ValueError, match="takes a PrimFunc or an IRModule, got int"):
        analysis.verify_well_formed(3)


def test_block_regions_leave_a_reductions_output_out_of_its_reads():
    analysis = tvm.tir.analysis
    buffers = {p: GEMM.buffer_map[p] for p in GEMM.params}
    reads, writes, opaque = analysis.get_block_access_region(UPDATE, {b.data: b for b in buffers.values()})
    assert [r.buffer.name for r in reads] == ["A", "B"]
    assert [w.buffer.name for w in writes] == ["C"]
    assert opaque == []
    assert reads == list(UPDATE.reads) and writes == list(UPDATE.writes)
    # the same through the BlockRealize, and as TVMScript reads them
    realize = GEMM.body.block.body.body.body.body
    assert analysis.get_block_read_write_region(realize, {b.data: b for b in buffers.values()}) == [reads, writes]


def test_a_buffer_left_out_of_the_map_is_not_reported():
    A = GEMM.buffer_map[GEMM.params[0]]
    B = GEMM.buffer_map[GEMM.params[1]]
    # keys that are not None: only the buffers given count
    only_a = {Var("A_data", "handle"): A}
    reads, writes, _ = tvm.tir.analysis.get_block_access_region(UPDATE, only_a)
    assert [r.buffer.name for r in reads] == ["A"] and writes == []
    both = {Var("A_data", "handle"): A, Var("B_data", "handle"): B}
    reads, _, _ = tvm.tir.analysis.get_block_access_region(UPDATE, both)
    assert [r.buffer.name for r in reads] == ["A", "B"]


def test_expr_deep_equal_and_undefined_vars():
    analysis = tvm.tir.analysis
    x, y = Var("x"), Var("y")
    assert analysis.expr_deep_equal(x + y * 2, x + y * 2)
    assert not analysis.expr_deep_equal(x + y, y + x)
    assert analysis.undefined_vars(x + y * x) == [x, y]
    assert analysis.undefined_vars(x + y, [x]) == [y]
    assert analysis.undefined_vars(UPDATE.body) == [Var("vi"), Var("vj"), Var("vk")]
