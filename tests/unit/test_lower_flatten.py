"""Buffer flattening."""

import pytest

from tirfun import IRModule, tir
from tirfun.analysis.traversal import walk
from tirfun.errors import BuildError
from tirfun.lower import flatten_buffers, lower_blocks
from tirfun.lower.flatten import flat_index, flat_size
from tirfun.nodes import Allocate, BufferLoad, BufferStore, DeclBuffer, IntImm, Var
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

SRC = """
@T.prim_func
def main(A: T.Buffer((3, 4, 5), "float32"), C: T.Buffer((3, 4), "float32")):
    B = T.alloc_buffer((3, 4), "float32")
    for i, j in T.grid(3, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj, 2] + A[vi, vj, 4]
    for i, j in T.grid(3, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)
"""


def lowered():
    f = from_source(SRC)
    return f, lower_blocks(IRModule({"main": f}))


def test_every_access_is_one_dimensional():
    f, mod = lowered()
    out = flatten_buffers(mod)["main"]
    for n in walk(out.body):
        if isinstance(n, (BufferLoad, BufferStore)):
            assert len(n.indices) == 1
    assert_equivalent(f, out)


def test_parameters_keep_their_shape_and_get_a_flat_view():
    f, mod = lowered()
    out = flatten_buffers(mod)["main"]
    shapes = [tuple(d.value for d in out.buffer_map[p].shape) for p in out.params]
    assert shapes == [(3, 4, 5), (3, 4)]
    views = {d.buffer.name: d.buffer for d in walk(out.body) if isinstance(d, DeclBuffer)}
    assert views["A_1"].data == out.buffer_map[out.params[0]].data
    assert [d.value for d in views["A_1"].shape] == [60]
    assert [d.value for d in views["C_1"].shape] == [12]


def test_allocations_are_flattened_in_place():
    _, mod = lowered()
    out = flatten_buffers(mod)["main"]
    allocs = [n for n in walk(out.body) if isinstance(n, Allocate)]
    assert len(allocs) == 1 and [e.value for e in allocs[0].extents] == [12]
    views = [d.buffer for d in walk(out.body) if isinstance(d, DeclBuffer) and d.buffer.name == "B"]
    assert [d.value for d in views[0].shape] == [12]


def test_flat_index_uses_row_major_strides_or_the_given_ones():
    i, j = Var("i"), Var("j")
    dense = tir.decl_buffer((3, 4), "float32", name="D")
    assert flat_index(dense, [i, j]).script() == "i * 4 + j"
    strided = tir.decl_buffer((3, 4), "float32", name="S", strides=[10, 2])
    assert flat_index(strided, [i, j]).script() == "i * 10 + j * 2"
    assert flat_size(strided).value == 1 + 2 * 10 + 3 * 2
    scalar = tir.decl_buffer((), "float32", name="Z")
    assert flat_index(scalar, []) == IntImm("int32", 0)
    assert flat_size(scalar) == IntImm("int32", 1)


def test_large_constant_shapes_index_in_int64():
    big = tir.decl_buffer((65536, 65536), "float32", name="G")
    i, j = Var("i"), Var("j")
    assert flat_index(big, [i, j]).dtype == "int64"


def test_blocks_must_be_lowered_first():
    with pytest.raises(BuildError, match="run lower_blocks first"):
        flatten_buffers(IRModule({"main": from_source(SRC)}))
