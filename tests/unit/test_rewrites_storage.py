"""Storage primitives: set_scope, storage_align, unsafe_set_dtype and
set_axis_separator; every error with its message, and what they produce
built for the CPU and run against the interpreter."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import tirfun
from tirfun import IRModule
from tirfun import rewrites as R
from tirfun.interp import run as interp_run
from tirfun.lower import compact_allocations, lower_allocations, lower_blocks
from tirfun.nodes import Add, Allocate, Buffer, DeclBuffer, PrimExpr
from tirfun.analysis.traversal import map_children, walk
from tirfun.rewrites.pipeline import Pipeline
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs

from corner_sources import LOOSE_READ, PLAIN_PRODUCER

SRC = '''@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4, 6), "float32")):
    B = T.alloc_buffer((4, 6))
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
'''

# the producer of B placed inside loop i0 of its consumer, two rows a time
TILED = '''@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4, 6), "float32")):
    B = T.alloc_buffer((4, 6))
    for i0 in range(2):
        for i1, j in T.grid(2, 6):
            with T.block("B"):
                vi = T.axis.spatial(4, i0 * 2 + i1)
                vj = T.axis.spatial(6, j)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i1, j in T.grid(2, 6):
            with T.block("C"):
                vi = T.axis.spatial(4, i0 * 2 + i1)
                vj = T.axis.spatial(6, j)
                C[vi, vj] = B[vi, vj] + T.float32(1)
'''

VIEW = '''@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            V = T.match_buffer(B[vi], (1,))
            V[0] = A[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi]
'''


def _mod(src=SRC):
    return IRModule({"main": from_source(src)})


def _runs_as_interpreted(before, after):
    """``after`` built for the CPU computes what the interpreter computes for
    ``before`` (and for ``after``)."""
    f, g = before["main"], after["main"]
    assert_equivalent(f, g, trials=2)
    rt = tirfun.build(after)
    args = random_inputs(g, np.random.default_rng(1))
    expected = [a.copy() for a in args]
    interp_run(f, *expected)
    rt(*args)
    for p, x, y in zip(g.params, expected, args):
        assert compare_arrays(g.buffer_map[p].name, x, y, g.buffer_map[p].dtype) is None


def _fails(rewrite, cls, *fragments, src=SRC):
    with pytest.raises(cls) as info:
        rewrite(_mod(src))
    text = str(info.value)
    for fragment in fragments:
        assert fragment in text, text
    return info.value


# -- set_scope ---------------------------------------------------------------------

@pytest.mark.parametrize("scope", ["local", "shared", "global.texture"])
def test_set_scope_changes_the_buffer_everywhere_and_builds(scope):
    mod = _mod()
    out = R.set_scope("B", 0, scope)(mod)
    buffers = {n.storage_scope for n in walk(out["main"]) if getattr(n, "name", None) == "B"
               and hasattr(n, "storage_scope")}
    assert buffers == {scope}
    _runs_as_interpreted(mod, out)


def test_set_scope_to_the_same_scope_is_the_same_module():
    mod = _mod()
    assert R.set_scope("B", 0, "global")(mod) is mod


def test_set_scope_changes_a_view_of_the_buffer_with_it():
    out = R.set_scope("B", 0, "local")(_mod(VIEW))
    views = [n for n in walk(out["main"]) if getattr(n, "name", None) == "V" and hasattr(n, "storage_scope")]
    assert views and all(v.storage_scope == "local" for v in views)
    _runs_as_interpreted(_mod(VIEW), out)


def test_set_scope_errors():
    _fails(R.set_scope("B", 1, "local"), R.BufferIndexOutOfRangeError,
           "set_scope: block 'B': it has 1 write region(s), so buffer_index must be in [0, 1), got 1",
           'with T.block("B")')
    _fails(R.set_scope("B", "0", "local"), R.InvalidArgumentError, "buffer_index must be an int")
    _fails(R.set_scope("B", 0, "registers"), R.InvalidStorageScopeError,
           "the storage scope 'registers' is invalid")
    _fails(R.set_scope("C", 0, "local"), R.NonAllocatedBufferError,
           "buffer C is not allocated by a block (it is a function parameter or a match_buffer view)")
    _fails(R.set_scope("D", 0, "local"), R.UnknownBlockError, "block 'D'")


def test_schedule_set_scope_takes_a_buffer_name():
    sch = tirfun.Schedule(_mod())
    sch.set_scope("B", "B", "local")
    assert "scope=\"local\"" in sch.mod.script()
    assert 'buffer_index=0, storage_scope="local")' in sch.trace.as_python()
    with pytest.raises(R.InvalidArgumentError,
                       match=r"'Q' names no single buffer the block writes \(it writes: B\)"):
        sch.set_scope("B", "Q", "local")
    # a Buffer object, as TVM's set_scope takes it
    sch = tirfun.Schedule(_mod())
    buffer = sch.get(sch.get_block("B")).writes[0].buffer
    sch.set_scope("B", buffer, "shared")
    assert 'scope="shared"' in sch.mod.script()


# -- storage_align -----------------------------------------------------------------

def test_storage_align_pads_the_stride_as_tvm_does():
    mod = _mod()
    out = R.storage_align("B", 0, 0, 8, 1)(mod)
    assert 'annotations={"buffer_dim_align": [[0, 8, 1]]}' in lower_allocations(out).script()
    lowered = compact_allocations(lower_blocks(out))
    decl = next(n for n in walk(lowered["main"]) if isinstance(n, DeclBuffer) and n.buffer.name == "B")
    alloc = next(n for n in walk(lowered["main"]) if isinstance(n, Allocate))
    # the dense stride 6 is padded to 9, the smallest with 9 % 8 == 1
    assert [s.value for s in decl.buffer.strides] == [9, 1]
    assert [e.value for e in alloc.extents] == [33]
    assert "B[i * 9 + j]" in tirfun.lower(out).script()
    _runs_as_interpreted(mod, out)


def test_storage_align_pads_the_compacted_buffer_as_tvm_does():
    mod = _mod(TILED)
    out = R.storage_align("B", 0, 0, 8, 1)(mod)
    lowered = compact_allocations(lower_blocks(out))
    decl = next(n for n in walk(lowered["main"]) if isinstance(n, DeclBuffer) and n.buffer.name == "B")
    alloc = next(n for n in walk(lowered["main"]) if isinstance(n, Allocate))
    # compacted to the 2x6 rows of one iteration of i0, then the row stride
    # 6 padded to 9
    assert [s.value for s in decl.buffer.strides] == [9, 1]
    assert [e.value for e in alloc.extents] == [15]
    assert "B[i1 * 9 + j] = A_1[i0 * 12 + i1 * 6 + j] * T.float32(2.0)" in tirfun.lower(out).script()
    _runs_as_interpreted(mod, out)


def test_storage_align_replaces_an_entry_for_the_same_axis_and_takes_a_negative_axis():
    out = (R.storage_align("B", 0, 0, 8, 1) >> R.storage_align("B", 0, -2, 4, 0) >>
           R.storage_align("B", 0, 1, 2, 1))(_mod())
    block = next(n for n in walk(out["main"]) if getattr(n, "name_hint", None) == "B")
    assert [list(e) for e in block.annotations["buffer_dim_align"]] == [[0, 0, 4, 0], [0, 1, 2, 1]]
    lowered = compact_allocations(lower_blocks(out))
    decl = next(n for n in walk(lowered["main"]) if isinstance(n, DeclBuffer) and n.buffer.name == "B")
    # the inner stride 1 becomes 1 (1 % 2 == 1); the outer one 6 -> 8
    assert [s.value for s in decl.buffer.strides] == [8, 1]
    _runs_as_interpreted(_mod(), out)


def test_storage_align_errors():
    _fails(R.storage_align("B", 0, 0, 0, 1), R.StorageAlignInvalidFactorError, "factor must be positive, got 0")
    _fails(R.storage_align("B", 0, 2, 8, 1), R.StorageAlignAxisOutOfRangeError,
           "buffer B has 2 dimension(s), so axis must be in [-2, 2), got 2")
    _fails(R.storage_align("B", 0, 0, 8.0, 1), R.InvalidArgumentError, "factor must be an int")
    _fails(R.storage_align("C", 0, 0, 8, 1), R.NonAllocatedBufferError, "buffer C is not allocated")
    _fails(R.storage_align("B", 3, 0, 8, 1), R.BufferIndexOutOfRangeError, "got 3")
    bad = R.annotate("B", "buffer_dim_align", [[0, 1]])(_mod())
    with pytest.raises(R.StorageAlignInvalidAnnotationError, match="is not a list of"):
        R.storage_align("B", 0, 0, 8, 1)(bad)


# -- unsafe_set_dtype --------------------------------------------------------------

def test_unsafe_set_dtype_casts_stores_and_loads_and_builds():
    mod = _mod()
    out = R.unsafe_set_dtype("B", 0, "float64")(mod)
    text = out.script()
    assert 'B = T.alloc_buffer((4, 6), "float64")' in text
    assert 'B[vi, vj] = T.Cast("float64", A[vi, vj] * T.float32(2.0))' in text
    assert 'C[vi_1, vj_1] = T.Cast("float32", B[vi_1, vj_1]) + T.float32(1.0)' in text
    # float32 -> float64 -> float32 is exact
    _runs_as_interpreted(mod, out)


def test_unsafe_set_dtype_to_a_narrower_type_computes_what_the_interpreter_does():
    out = R.unsafe_set_dtype("B", 0, "float16")(_mod())
    f = out["main"]
    rt = tirfun.build(out)
    args = random_inputs(f, np.random.default_rng(2))
    expected = [a.copy() for a in args]
    interp_run(f, *expected)
    rt(*args)
    assert compare_arrays("C", expected[1], args[1], f.buffer_map[f.params[1]].dtype) is None


def test_unsafe_set_dtype_keeps_the_element_an_address_is_taken_of():
    # a load is cast back to the old type where it is a value; under
    # T.address_of it names an element, and a cast of it has no address
    # (the module would print as a program the parser refuses)
    source = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("S"):
            vi = T.axis.spatial(8, i)
            S[vi] = A[vi]
            T.evaluate(T.address_of(S[vi]))
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = S[vi] * T.float32(2)
"""
    mod = IRModule({"main": from_source(source)})
    out = R.unsafe_set_dtype("S", 0, "float64")(mod)
    text = out.script()
    assert "T.address_of(S[vi])" in text
    assert 'C[vi_1] = T.Cast("float32", S[vi_1]) * T.float32(2.0)' in text
    assert from_source(text).script() == text


def test_unsafe_set_dtype_errors_and_no_change():
    mod = _mod()
    assert R.unsafe_set_dtype("B", 0, "float32")(mod) is mod
    _fails(R.unsafe_set_dtype("B", 0, "float32x4"), R.InvalidArgumentError, "dtype must name a scalar data type")
    _fails(R.unsafe_set_dtype("B", 0, "floaty"), R.InvalidArgumentError, "'floaty'")
    _fails(R.unsafe_set_dtype("C", 0, "float16"), R.NonAllocatedBufferError, "buffer C is not allocated")


# -- set_axis_separator ------------------------------------------------------------

def test_set_axis_separator_keeps_the_meaning_and_builds_flat_on_the_cpu():
    mod = _mod()
    out = R.set_axis_separator("B", 0, "write", [1])(mod)
    assert "axis_separators=[1]" in out.script()
    assert_equivalent(mod["main"], out["main"], trials=2)
    _runs_as_interpreted(mod, out)


def test_set_axis_separator_on_a_parameter_changes_the_signature():
    out = R.set_axis_separator("C", 0, "write", [1])(_mod())
    param = out["main"].buffer_map[out["main"].params[1]]
    assert list(param.axis_separators) == [1]
    assert_equivalent(_mod()["main"], out["main"], trials=1)


def test_schedule_set_axis_separator_takes_tvm_buffer_arguments():
    for arg in [("read", 0), "A"]:
        sch = tirfun.Schedule(_mod())
        sch.set_axis_separator("B", arg, [1])
        assert list(sch.mod["main"].buffer_map[sch.mod["main"].params[0]].axis_separators) == [1]
        replay = Pipeline.from_json(sch.trace.to_json())
        assert replay(_mod()) == sch.mod


def test_set_axis_separator_errors():
    _fails(R.set_axis_separator("B", 0, "write", [3]), R.InvalidAxisSeparatorError,
           "axis_separators must be increasing ints in [0, 2] for buffer B of 2 dimension(s), got (3,)")
    _fails(R.set_axis_separator("B", 0, "write", [1, 1]), R.InvalidAxisSeparatorError, "got (1, 1)")
    _fails(R.set_axis_separator("B", 0, "input", [1]), R.InvalidArgumentError,
           "buffer_index_type must be 'read' or 'write'")
    _fails(R.set_axis_separator("B", 2, "read", [1]), R.BufferIndexOutOfRangeError, "1 read region(s)")
    nested = VIEW.replace("            V[0] = A[vi]", """            with T.block("inner"):
                V[0] = A[vi]""")
    _fails(R.set_axis_separator("inner", 0, "write", [0]), R.BufferIsSubregionError,
           "buffer V is a match_buffer view", src=nested)
    _fails(R.set_scope("inner", 0, "local"), R.NonAllocatedBufferError, "buffer V is not allocated", src=nested)


# -- traces ------------------------------------------------------------------------

def test_every_storage_primitive_replays_from_json_and_python():
    sch = tirfun.Schedule(_mod())
    sch.storage_align("B", 0, 0, 8, 1)
    sch.set_scope("B", 0, "local")
    sch.unsafe_set_dtype("B", 0, "float64")
    replay = Pipeline.from_json(sch.trace.to_json())
    assert replay(_mod()) == sch.mod
    text = sch.trace.as_python()
    for name in ("storage_align", "set_scope", "unsafe_set_dtype"):
        assert f"sch.{name}(" in text


@pytest.mark.parametrize("scope", ["shared.dyn", "amx.tmm", "m16n8k8.matrixA", "local.fragment"])
def test_set_scope_takes_every_scope_cache_read_takes(scope):
    # one check of storage scopes for every primitive, TVM's StorageScope::Create
    mod = _mod()
    assert not R.cache_read("C", 0, scope).violations(mod)
    out = R.set_scope("B", 0, scope)(mod)
    assert {n.storage_scope for n in walk(out["main"]) if getattr(n, "name", None) == "B"
            and hasattr(n, "storage_scope")} == {scope}


def test_set_scope_to_the_empty_scope_is_global():
    mod = _mod()
    assert R.set_scope("B", 0, "")(mod) is mod
    local = R.set_scope("B", 0, "local")(mod)
    assert R.set_scope("B", 0, "")(local) == mod


@pytest.mark.parametrize("step", [R.set_scope("B", 0, "shared"), R.unsafe_set_dtype("B", 0, "int16"),
                                  R.set_axis_separator("B", 0, "write", [1])],
                         ids=["set_scope", "unsafe_set_dtype", "set_axis_separator"])
def test_storage_primitives_change_the_buffer_in_a_loop_extent_outside_blocks(step):
    mod = IRModule({"main": from_source(LOOSE_READ)})
    out = step(mod)
    new = out["main"].body.block.alloc_buffers[0]
    assert new != mod["main"].body.block.alloc_buffers[0]
    # every use of B is the new buffer, the loop extent included
    assert {b for b in walk(out["main"]) if isinstance(b, Buffer) and b.name == "B"} == {new}
    assert_equivalent(mod["main"], out["main"])


# a view of the buffer declared by its producer, and a view of that view
# with fewer dimensions declared by a block inside it
NESTED_VIEWS = '''@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i in range(2):
        with T.block("B"):
            vi = T.axis.spatial(2, i)
            T.reads(A[vi * 4:vi * 4 + 4, 0:8])
            T.writes(B[vi * 4:vi * 4 + 4, 0:8])
            V = T.match_buffer(B[vi * 4:vi * 4 + 4, 0:8], (4, 8))
            for j in range(4):
                with T.block("row"):
                    vj = T.axis.spatial(4, j)
                    T.reads(A[vi * 4 + vj, 0:8])
                    T.writes(V[vj, 0:8])
                    W = T.match_buffer(V[vj, 0:8], (8,))
                    for k in range(8):
                        with T.block("elem"):
                            vk = T.axis.spatial(8, k)
                            W[vk] = A[vi * 4 + vj, vk] + T.float32(1)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)
'''


def _buffers_named(func, names) -> dict:
    out: dict = {}
    for b in walk(func):
        if isinstance(b, Buffer) and b.name in names:
            out.setdefault(b.name, set()).add(b)
    return out


@pytest.mark.parametrize("step, expected", [
    (R.set_scope("B", 0, "local"), {"B": ("storage_scope", "local"), "V": ("storage_scope", "local"),
                                   "W": ("storage_scope", "local")}),
    (R.unsafe_set_dtype("B", 0, "float64"), {"B": ("dtype", "float64"), "V": ("dtype", "float64"),
                                            "W": ("dtype", "float64")}),
    # a view of as many dimensions takes the separators, one of fewer as many zeros (as TVM gives them)
    (R.set_axis_separator("B", 0, "write", [1]), {"B": ("axis_separators", [1]), "V": ("axis_separators", [1]),
                                                  "W": ("axis_separators", [0])}),
], ids=["set_scope", "unsafe_set_dtype", "set_axis_separator"])
def test_storage_primitives_change_views_of_views_with_the_buffer(step, expected):
    mod = _mod(NESTED_VIEWS)
    out = step(mod)
    found = _buffers_named(out["main"], set(expected))
    for name, (field, value) in expected.items():
        # one buffer of that name everywhere it is used, changed
        assert len(found[name]) == 1, found[name]
        got = getattr(next(iter(found[name])), field)
        assert (list(got) if field == "axis_separators" else str(got)) == value, (name, got)
    if step.primitive == "set_axis_separator":
        assert_equivalent(mod["main"], out["main"], trials=2)  # the CPU build refuses separators
    else:
        _runs_as_interpreted(mod, out)


def test_unsafe_set_dtype_keeps_every_type_right_around_a_view_of_another_type():
    # TVMScript refuses a view whose element type is not its source's, so the
    # function is built with float16 everywhere and B then made float32: the
    # loads of V, cast back to B's old float32, change type, and the
    # addition above them must take the new type
    src = '''@T.prim_func
def main(A: T.Buffer((4,), "float16"), C: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,), "float16")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi])
            T.writes(B[vi], D[vi])
            V = T.match_buffer(B[vi], (1,), "float16")
            V[0] = A[vi]
            D[vi] = T.Cast("float32", V[0] + V[0])
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = T.Cast("float32", B[vi])
'''
    func = from_source(src)
    old = func.body.block.alloc_buffers[0]
    wider = attrs.evolve(old, dtype="float32")

    def widen(n):
        return (wider if n == old else n) if isinstance(n, Buffer) else map_children(n, widen)

    out = R.unsafe_set_dtype("B", 0, "float64")(IRModule({"main": widen(func)}))["main"]
    assert {str(b.dtype) for b in walk(out) if isinstance(b, Buffer) and b.name in ("B", "V")} == {"float64"}
    sums = [n for n in walk(out) if isinstance(n, Add)]
    assert sums and all(str(n.dtype) == "float32" for n in sums)
    # every expression has the type its constructor gives it
    for n in walk(out):
        if isinstance(n, PrimExpr) and attrs.has(type(n)):
            assert attrs.evolve(n).dtype == n.dtype, n


@pytest.mark.parametrize("block", ["i_10_partition", "i_1_common"])
def test_set_axis_separator_of_a_buffer_declared_by_realize(block):
    # found by the fuzzer: rebuilding the AttrStmt of T.realize, whose field
    # is named ``node``, passed that name twice to with_fields (a TypeError)
    mod = IRModule({"main": from_source(PLAIN_PRODUCER)})
    parts = R.loop_partition("i_1", [6, 1])(mod)
    out = R.set_axis_separator(block, 0, "read", [0])(parts)
    assert_equivalent(mod["main"], out["main"], trials=2)
