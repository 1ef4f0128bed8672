"""``tirfun.lower``: the pass list, its entry points and its output."""

import importlib

import pytest

import tirfun
from tirfun import IRModule, te
from tirfun.analysis.traversal import walk
from tirfun.errors import BuildError
from tirfun.nodes import Block, BlockRealize, BufferLoad, BufferStore
from tirfun.script import from_source

TUTORIAL = """
@I.ir_module
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
"""


def test_pass_list_is_in_order():
    names = [name for name, _ in tirfun.lower_passes.PASSES]
    assert names == ["lower_allocations", "lower_blocks", "compact_allocations", "flatten_buffers", "simplify",
                     "partition_loops", "unroll_loops", "simplify", "interleave_parallel",
                     "vectorize_loops", "prepare_parallel"]


def test_lower_is_callable_even_after_its_submodules_are_imported():
    importlib.import_module("tirfun.lower.simplify")
    importlib.import_module("tirfun.lower.llvm_codegen")
    mod = from_source(TUTORIAL)
    assert tirfun.lower(mod) == importlib.import_module("tirfun.lower").lower(mod)


def test_lowered_tutorial_prints_and_parses_back():
    mod = from_source(TUTORIAL)
    out = tirfun.lower(mod)
    text = out.script()
    assert text == '''# from tirfun.script import ir as I
# from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        for i in range(8):
            B[i] = A[i] + T.float32(1.0)'''
    assert tirfun.structural_equal(from_source(text), out)


def test_lowered_code_has_no_blocks_and_flat_accesses():
    n = te.var("n")
    A = te.placeholder((n, 4), "float32", name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j] * 2.0, name="B")
    out = tirfun.lower(te.create_prim_func([A, B]))
    for node in walk(out["main"].body):
        assert not isinstance(node, (Block, BlockRealize))
        if isinstance(node, (BufferLoad, BufferStore)):
            assert len(node.indices) == 1


def test_a_prim_func_is_lowered_as_main():
    f = from_source(TUTORIAL)["main"]
    out = tirfun.lower(f)
    assert isinstance(out, IRModule) and list(out) == ["main"]


def test_lowering_something_else_is_a_build_error():
    with pytest.raises(BuildError, match="expected an IRModule or a PrimFunc, got str"):
        tirfun.lower("main")
