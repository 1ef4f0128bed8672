"""What counts as a launched thread: ``T.launch_thread`` is an ``AttrStmt``
``thread_extent`` (or ``virtual_thread`` for a ``vthread``) on an
``IterVar``. The analyses, the printer, the interpreter and both lowerings
read launches through one test, so they agree on every statement."""

from __future__ import annotations

import pytest

from tirfun.analysis.threads import launch_of, launched_iter_var
from tirfun.analysis.traversal import walk_stmts
from tirfun.lower import cuda
from tirfun.nodes import AttrStmt, Evaluate, IntImm, IterVar, Range, Var
from tirfun.script import from_source

LAUNCHED = """
@T.prim_func
def main(A: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    bx = T.launch_thread("blockIdx.x", 2)
    vx = T.launch_thread("vthread.x", 2)
    tx = T.launch_thread("threadIdx.x", 16)
    A[bx * 32 + vx * 16 + tx] = T.float32(1)
"""


def _launch(tag: str, key: str = "thread_extent", node_kind: str = "itervar") -> AttrStmt:
    var = Var("t")
    node = IterVar(Range(0, 4), var, "ThreadIndex", tag) if node_kind == "itervar" else var
    return AttrStmt(node, key, 4, Evaluate(IntImm("int32", 0)))


def test_every_launch_of_a_parsed_kernel_is_found_with_its_tag_and_extent():
    func = from_source(LAUNCHED)
    launches = [s for _, s in walk_stmts(func.body) if launched_iter_var(s) is not None]
    assert [(s.attr_key, launched_iter_var(s).thread_tag, s.value.value) for s in launches] == [
        ("thread_extent", "blockIdx.x", 2), ("virtual_thread", "vthread.x", 2), ("thread_extent", "threadIdx.x", 16)]
    # the analyses' and the CUDA lowering's readings agree with the test
    for s in launches:
        iv = launched_iter_var(s)
        assert launch_of(s) == (iv.thread_tag, None, s.value)
        assert cuda.launch_of(s) == (iv.thread_tag, IntImm(s.value.dtype, 0), s.value, iv.var)


@pytest.mark.parametrize("key", ["pragma_unroll", "storage_scope", "thread_extents"])
def test_an_attribute_of_another_key_launches_nothing(key):
    s = _launch("threadIdx.x", key)
    assert launched_iter_var(s) is None and launch_of(s) is None and cuda.launch_of(s) is None


def test_a_thread_extent_on_a_bare_variable_launches_nothing():
    # lowered code may state an extent on a Var (TVM's form after some
    # passes); only an IterVar carries the tag a launch needs
    s = _launch("threadIdx.x", node_kind="var")
    assert launched_iter_var(s) is None and launch_of(s) is None and cuda.launch_of(s) is None


def test_a_launch_of_an_unknown_tag_is_seen_by_lowering_and_not_by_the_analyses():
    # the CUDA lowering must see it to refuse it by name; the analyses of
    # thread semantics only know CUDA's tags
    s = _launch("warpIdx.x")
    assert launched_iter_var(s) is s.node
    assert cuda.launch_of(s)[0] == "warpIdx.x"
    assert launch_of(s) is None
