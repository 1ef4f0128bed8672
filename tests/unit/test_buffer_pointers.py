"""``B.data`` and ``B.access_ptr(...)`` on buffers a function allocates, and
``access_ptr`` with ``content_lanes``, as TVM v0.20 allows them: parsed,
printed back, given TVM's inferred regions, interpreted and built."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun.analysis import structural_equal
from tirfun.errors import ParseError
from tirfun.script import from_source

HEAD = "from tirfun.script import ir as I\nfrom tirfun.script import tir as T\n"

ALLOCATED = HEAD + '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fill(p: T.handle("float32"), n: T.int32, v: T.float32):
        R = T.decl_buffer((n,), data=p)
        for j in range(n):
            R[j] = v + T.Cast("float32", j)

    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,))
        with T.block("fill"):
            Module.fill(B.data, 8, T.float32(1.0))
            Module.fill(B.access_ptr("w", offset=5), 3, T.float32(10.0))
        for i in range(8):
            with T.block("copy"):
                vi = T.axis.spatial(8, i)
                A[vi] = B[vi] * T.float32(2.0)
'''


def _run_both(mod, *arrays):
    interpreted = [a.copy() for a in arrays]
    compiled = [a.copy() for a in arrays]
    tirfun.interp.run(mod, *interpreted)
    tirfun.build(mod)(*compiled)
    return interpreted, compiled


def test_an_allocation_passes_its_pointer_and_a_pointer_into_it():
    mod = from_source(ALLOCATED)
    main = mod["main"]
    root = main.body.block
    (B,) = root.alloc_buffers
    assert B.data is not None
    # printed as TVM prints it: the pointer is B.data, the allocation has no data=
    text = mod.script()
    assert "B = T.alloc_buffer((8,))" in text
    assert "Module.fill(B.data, 8, T.float32(1.0))" in text
    assert 'T.tvm_access_ptr(T.type_annotation("float32"), B.data, 5, 3, 2)' in text
    again = from_source(text)
    assert structural_equal(again, mod)
    assert again.script() == text
    expected = np.array([1, 2, 3, 4, 5, 10, 11, 12], "float32") * 2
    (interpreted,), (compiled,) = _run_both(mod, np.zeros(8, "float32"))
    assert interpreted.tobytes() == compiled.tobytes() == expected.tobytes()


def test_regions_of_a_pointer_use_are_tvms():
    block = next(s for s in _blocks(from_source(ALLOCATED)["main"]) if s.name_hint == "fill")
    # B.data is an opaque use of all of B: read and written, as TVM infers it
    assert [r.buffer.name for r in block.reads] == ["B"]
    assert [r.buffer.name for r in block.writes] == ["B"]
    assert block.reads[0].region[0].extent.value == 8


def test_an_access_ptr_alone_is_a_read_or_a_write():
    text = HEAD + '''
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    with T.block("b"):
        T.evaluate(T.call_extern("int32", "g", B.access_ptr("r"), A.access_ptr("w")))
'''
    block = next(s for s in _blocks(from_source(text)) if s.name_hint == "b")
    assert [r.buffer.name for r in block.reads] == ["B"]
    assert [r.buffer.name for r in block.writes] == ["A"]


def _blocks(func):
    from tirfun.analysis.traversal import walk
    from tirfun.nodes import Block
    return [n for n in walk(func.body) if isinstance(n, Block)]


LANES = HEAD + '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(p: T.handle("float32"), n: T.int32, v: T.float32):
        R = T.decl_buffer((n,), data=p)
        for j in range(n):
            R[j] = R[j] + v

    @T.prim_func
    def main(A: T.Buffer((16,), "float32")):
        Module.add(A.access_ptr("rw", content_lanes=4, offset=8), 8, T.float32(0.5))
'''


def test_content_lanes_counts_vectors():
    mod = from_source(LANES)
    text = mod.script()
    # the offset and the extent count float32x4 vectors
    assert 'T.tvm_access_ptr(T.type_annotation("float32x4"), A.data, 2, 2, 3)' in text
    assert structural_equal(from_source(text), mod)
    a = np.arange(16, dtype="float32")
    expected = a.copy()
    expected[8:] += np.float32(0.5)
    (interpreted,), (compiled,) = _run_both(mod, a)
    assert interpreted.tobytes() == compiled.tobytes() == expected.tobytes()


def test_content_lanes_errors():
    head = HEAD + '@T.prim_func\ndef f(A: T.Buffer((16,), "float32")):\n'
    with pytest.raises(ParseError, match="A.access_ptr: the offset 6 is not a whole number of "
                       "4-lane vectors"):
        from_source(head + '    T.evaluate(T.call_extern("int32", "g", A.access_ptr("r", '
                    'content_lanes=4, offset=6)))\n')
    with pytest.raises(ParseError, match="A.access_ptr: content_lanes is a positive int, got 0"):
        from_source(head + '    T.evaluate(T.call_extern("int32", "g", A.access_ptr("r", '
                    'content_lanes=0)))\n')
