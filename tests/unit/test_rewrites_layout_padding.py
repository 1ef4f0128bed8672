"""transform_layout with padding: the pad value written where a producer
writes (its loops replaced by loops over the new layout, or a block after
it), assumed for an input, as TVM does; each element that is not padding
keeps its value, each element that is padding holds the pad value."""

import itertools

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.nodes import IRModule, IntImm
from tirfun.schedule import Schedule
from tirfun.script import from_source


def mod_of(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


def _random(shape, dtype, rng):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, size=shape).astype(dtype)


def check_padded(before: IRModule, after: IRModule, name: str, index_map, pad=None, sentinel=77):
    """``after`` is ``before`` with parameter ``name`` in the layout
    ``index_map`` gives (a Python function of int indices): run on the same
    data, each element keeps its value at its new place, and, where the
    function writes the buffer, each element of the padding holds ``pad``
    (a function of the new indices, or None); the LLVM build of ``after``
    gives the interpreter's results bit for bit."""
    verify(after)
    assert_structural_equal(from_source(after["main"].script()), after["main"])
    fb, fa = before["main"], after["main"]
    rng = np.random.default_rng(0)
    old_args, new_args = [], []
    for pb, pa in zip(fb.params, fa.params):
        bb, ba = fb.buffer_map[pb], fa.buffer_map[pa]
        old = _random([int(d) for d in bb.shape], str(bb.dtype), rng)
        if bb.name != name:
            old_args.append(old)
            new_args.append(old.copy())
            continue
        new_shape = [int(d) for d in ba.shape]
        new = np.full(new_shape, sentinel, dtype=old.dtype)
        if pad is not None:  # an input's padding holds the pad value, as the caller promises
            for idx in itertools.product(*map(range, new_shape)):
                new[idx] = pad(*idx)
        for idx in itertools.product(*map(range, old.shape)):
            new[tuple(index_map(*idx))] = old[idx]
        old_args.append(old)
        new_args.append(new)
    compiled = [a.copy() for a in new_args]
    interp_run(fb, *old_args)
    interp_run(fa, *new_args)
    tirfun.build(after, target="llvm")(*compiled)
    for x, y in zip(new_args, compiled):
        assert x.tobytes() == y.tobytes()
    for pb, old, new in zip(fb.params, old_args, new_args):
        if fb.buffer_map[pb].name != name:
            assert old.tobytes() == new.tobytes()
            continue
        hit = np.zeros(new.shape, bool)
        for idx in itertools.product(*map(range, old.shape)):
            where = tuple(index_map(*idx))
            hit[where] = True
            assert new[where] == old[idx]
        if pad is not None:
            for idx in zip(*np.nonzero(~hit)):
                assert new[idx] == pad(*idx), (idx, new[idx])
    return new_args


COPY = """
@T.prim_func
def main(A: T.Buffer((14,), "int32"), B: T.Buffer((14,), "int32")):
    for i in range(14):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * 3
"""


def test_a_row_major_producer_writes_the_pad_value_in_its_own_loops():
    mod = mod_of(COPY)
    out = R.transform_layout("block", ("write", 0), lambda i: (i // 4, i % 4), pad_value=-1)(mod)
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((14,), "int32"), B: T.Buffer((4, 4), "int32")):
    for axis0, axis1 in T.grid(4, 4):
        with T.block("block"):
            v_axis0, v_axis1 = T.axis.remap("SS", [axis0, axis1])
            T.reads(A[v_axis0 * 4 + v_axis1])
            T.writes(B[v_axis0, v_axis1])
            B[v_axis0, v_axis1] = T.if_then_else(v_axis0 == 3 and 2 <= v_axis1, -1, A[v_axis0 * 4 + v_axis1] * 3)
""")
    assert_structural_equal(out["main"], expected)
    check_padded(mod, out, "B", lambda i: (i // 4, i % 4), pad=lambda i, j: -1)


def test_the_pad_value_may_be_a_function_of_the_new_indices():
    mod = mod_of(COPY)
    sch = Schedule(mod)
    sch.transform_layout("block", "B", lambda i: (i // 4, i % 4), pad_value=lambda i, j: i * 10 + j)
    check_padded(mod, sch.mod, "B", lambda i: (i // 4, i % 4), pad=lambda i, j: i * 10 + j)
    # the trace holds the traced function and replays, from JSON too
    assert R.Pipeline.from_json(R.Pipeline(list(sch.trace)).to_json())(mod) == sch.mod
    namespace: dict = {}
    exec(sch.trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod


def test_the_pad_value_may_read_the_transformed_buffer():
    # in its old layout, as TVM's pad functions name it: the padding repeats
    # the first element
    mod = mod_of(COPY)
    B = mod["main"].buffer_map[mod["main"].params[1]]
    out = Schedule(mod)
    out.transform_layout("block", "B", lambda i: (i // 4, i % 4), pad_value=lambda i, j: B[0])
    new = check_padded(mod, out.mod, "B", lambda i: (i // 4, i % 4))
    assert (new[1][3, 2:] == new[1][0, 0]).all()


REDUCE = """
@T.prim_func
def main(A: T.Buffer((14, 8), "float32"), B: T.Buffer((14,), "float32")):
    for i, k in T.grid(14, 8):
        with T.block("block"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


def test_a_reduction_guards_its_init_and_its_update():
    mod = mod_of(REDUCE)
    out = R.transform_layout("block", ("write", 0), lambda i: (i // 4, i % 4), pad_value=0.5)(mod)
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((14, 8), "float32"), B: T.Buffer((4, 4), "float32")):
    for axis0, axis1, k in T.grid(4, 4, 8):
        with T.block("block"):
            v_axis0, v_axis1, vk = T.axis.remap("SSR", [axis0, axis1, k])
            T.reads(A[v_axis0 * 4 + v_axis1, vk])
            T.writes(B[v_axis0, v_axis1])
            with T.init():
                B[v_axis0, v_axis1] = T.if_then_else(v_axis0 == 3 and 2 <= v_axis1, T.float32(0.5), T.float32(0))
            B[v_axis0, v_axis1] = T.if_then_else(v_axis0 == 3 and 2 <= v_axis1, T.float32(0.5),
                                                 B[v_axis0, v_axis1] + A[v_axis0 * 4 + v_axis1, vk])
""")
    assert_structural_equal(out["main"], expected)
    check_padded(mod, out, "B", lambda i: (i // 4, i % 4), pad=lambda i, j: 0.5)


SIDE_EFFECT = """
@T.prim_func
def main(A: T.Buffer((14,), "int32"), B: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
    for i in range(14):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
            C[vi] = A[vi] + 1
"""


def test_a_producer_with_other_effects_is_followed_by_a_padding_block():
    # its loops over the new layout would write C at padding positions too
    mod = mod_of(SIDE_EFFECT)
    out = R.transform_layout("block", ("write", 0), lambda i: (i // 4, i % 4), pad_value=9)(mod)
    seq = out["main"].body.block.body.seq
    assert len(seq) == 2 and seq[1].body.body.block.name_hint == "buffer_B_padding"
    assert seq[1].body.body.predicate.script() == "ax0 == 3 and 2 <= ax1"
    check_padded(mod, out, "B", lambda i: (i // 4, i % 4), pad=lambda i, j: 9)


@pytest.mark.parametrize("body", [
    # a predicate or a condition that skips elements: padding would be skipped too
    "with T.block(\"block\"):\n            vi = T.axis.remap(\"S\", [i])\n            T.where(i % 3 != 1)\n"
    "            B[vi] = A[vi]",
    "if i % 3 != 1:\n            with T.block(\"block\"):\n                vi = T.axis.remap(\"S\", [i])\n"
    "                B[vi] = A[vi]",
    # a load outside the guarded value: it would read past A
    "with T.block(\"block\"):\n            vi = T.axis.remap(\"S\", [i])\n            x = A[vi]\n"
    "            B[vi] = x",
], ids=["predicate", "condition", "let"])
def test_producer_loops_are_kept_where_replacing_them_would_change_the_meaning(body):
    src = f"""
@T.prim_func
def main(A: T.Buffer((14,), "int32"), B: T.Buffer((14,), "int32")):
    for i in range(14):
        {body}
"""
    mod = mod_of(src)
    out = R.transform_layout("block", ("write", 0), lambda i: (i // 4, i % 4), pad_value=5)(mod)
    assert out["main"].body.block.body.seq[1].body.body.block.name_hint == "buffer_B_padding"
    check_padded(mod, out, "B", lambda i: (i // 4, i % 4), pad=lambda i, j: 5)


def test_a_producer_reading_other_elements_keeps_its_order():
    # the new loops would run j-major: B[vi - 1, vj + 1] would not be
    # written yet where it is read
    src = """
@T.prim_func
def main(A: T.Buffer((3, 5), "int32"), B: T.Buffer((3, 5), "int32")):
    for i, j in T.grid(3, 5):
        with T.block("block"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.if_then_else(0 < vi and vj < 4, B[vi - 1, vj + 1], 0) + A[vi, vj]
"""
    mod = mod_of(src)
    index_map = lambda i, j: (j // 2, j % 2, i)  # noqa: E731 - the map, also run on ints
    out = R.transform_layout("block", ("write", 0), index_map, pad_value=8)(mod)
    assert out["main"].body.block.body.seq[1].body.body.body.block.name_hint == "buffer_B_padding"
    check_padded(mod, out, "B", index_map, pad=lambda *_: 8)
    # a pad value reading the buffer is written after the producer too
    B = mod["main"].buffer_map[mod["main"].params[1]]
    out = R.transform_layout("block", ("write", 0), index_map, pad_value=lambda a, b, c: B[2, 4])(mod)
    assert out["main"].body.block.body.seq[1].body.body.body.block.name_hint == "buffer_B_padding"
    new = check_padded(mod, out, "B", index_map)
    assert (new[1][2, 1, :] == new[1][2, 0, 2]).all()


def test_a_store_outside_loops_is_followed_by_a_padding_block():
    src = """
@T.prim_func
def main(A: T.Buffer((14,), "int32")):
    with T.block("root"):
        with T.block("block"):
            T.reads()
            T.writes(A[0])
            A[0] = 7
"""
    mod = mod_of(src)
    out = R.transform_layout("block", ("write", 0), lambda i: (i // 4, i % 4), pad_value=0)(mod)
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((4, 4), "int32")):
    with T.block("block"):
        T.reads()
        T.writes(A[0, 0])
        A[0, 0] = 7
    for i, j in T.grid(4, 4):
        with T.block("buffer_A_padding"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(i == 3 and 2 <= j)
            T.reads()
            T.writes(A[vi, vj])
            A[vi, vj] = 0
""")
    assert_structural_equal(out["main"].body.block.body, expected.body.block.body)
    check_padded(mod, out, "A", lambda i: (i // 4, i % 4), pad=lambda i, j: 0)


def test_an_input_states_its_padding_with_an_assumption():
    mod = mod_of(COPY)
    out = R.transform_layout("block", ("read", 0), lambda i: (i // 4, i % 4), pad_value=42)(mod)
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((4, 4), "int32"), B: T.Buffer((14,), "int32")):
    for axis0, axis1 in T.grid(4, 4):
        with T.block("buffer_A_assumption"):
            v_axis0, v_axis1 = T.axis.remap("SS", [axis0, axis1])
            T.reads(A[v_axis0, v_axis1])
            T.writes()
            T.assume(not (v_axis0 == 3 and 2 <= v_axis1) or A[v_axis0, v_axis1] == 42)
    for i in range(14):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi // 4, vi % 4])
            T.writes(B[vi])
            B[vi] = A[vi // 4, vi % 4] * 3
""")
    assert_structural_equal(out["main"], expected)
    check_padded(mod, out, "A", lambda i: (i // 4, i % 4), pad=lambda i, j: 42)


def test_an_intermediate_producer_writes_its_padding():
    src = """
@T.prim_func
def main(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((14,), "int32")
    for i in range(14):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + 1
    for i in range(14):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] * 2
"""
    mod = mod_of(src)
    out = R.transform_layout("B", ("write", 0), lambda i: (i // 4, i % 4), pad_value=0)(mod)
    producer = out["main"].body.block.body.seq[0]
    assert [int(producer.extent), int(producer.body.extent)] == [4, 4]
    check_padded(mod, out, "", lambda i: (i,))


def test_axis_separators_and_padding_together():
    from tirfun.tir import IndexMap

    src = """
@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, [14], "int32")
    for i in range(14):
        with T.block("block"):
            A[i] = 42
"""
    mod = mod_of(src)
    sch = Schedule(mod)
    sch.transform_layout("block", "A", lambda i: [i // 4, IndexMap.AXIS_SEPARATOR, i % 4], pad_value=0)
    expected = from_source("""
@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, [4, 4], "int32", axis_separators=[1])
    for i, j in T.grid(4, 4):
        with T.block("block"):
            A[i, j] = T.if_then_else(i == 3 and 2 <= j, 0, 42)
""")
    assert_structural_equal(sch.mod["main"], expected)
    verify(sch.mod)


@pytest.mark.parametrize("pad_value, cls, message", [
    (IntImm("int8", 0), R.TransformationPaddingTypeError,
     "buffer B has elements of type int32, but the pad value T.int8(0) is of type int8"),
    (0.5, R.TransformationPaddingTypeError,
     "buffer B has elements of type int32, but the pad value T.float32(0.5) is of type float32"),
    (lambda i, j: (i, j), R.TransformationPaddingExpressionError, "pad_value gives 2 values; it must give one"),
    (1 << 40, R.InvalidArgumentError, "pad_value 1099511627776 is not a value of int32"),
    ("zero", R.InvalidArgumentError, "pad_value must be a number, an expression or a function"),
])
def test_pad_value_refusals(pad_value, cls, message):
    mod = mod_of(COPY)
    with pytest.raises(cls, match="^transform_layout: block 'block': " + message.replace("(", r"\(")
                       .replace(")", r"\)").replace(".", r"\.")):
        R.transform_layout("block", ("write", 0), lambda i: (i // 4, i % 4), pad_value=pad_value)(mod)


def test_a_float_buffer_refuses_an_int_pad_value_and_a_pad_value_may_not_read_another_buffer():
    # as TVM: a Python int is an int32 constant, not a float
    mod = mod_of(REDUCE)
    with pytest.raises(R.TransformationPaddingTypeError, match="pad value 0 is of type int32"):
        Schedule(mod).transform_layout("block", "B", lambda i: (i // 4, i % 4), pad_value=0)
    A = mod["main"].buffer_map[mod["main"].params[0]]
    with pytest.raises(R.TransformationPaddingExpressionError,
                       match=r"the pad value may read only buffer B, which is transformed, but it reads A\[0, 0\]"):
        Schedule(mod).transform_layout("block", "B", lambda i: (i // 4, i % 4), pad_value=lambda i, j: A[0, 0])
    # the failed rewrites leave no trace
    sch = Schedule(mod)
    with pytest.raises(R.TransformationPaddingTypeError):
        sch.transform_layout("block", "B", lambda i: (i // 4, i % 4), pad_value=0)
    assert sch.mod == mod


ADD64 = """
@T.prim_func
def main(p0: T.Buffer((T.int64(33), T.int64(8)), "float32"), p1: T.Buffer((T.int64(33), T.int64(8)), "float32"),
         T_add: T.Buffer((T.int64(33), T.int64(8)), "float32")):
    for ax0, ax1 in T.grid(T.int64(33), T.int64(8)):
        with T.block("T_add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T_add[v_ax0, v_ax1] = p0[v_ax0, v_ax1] + p1[v_ax0, v_ax1]
"""


@pytest.mark.parametrize("separate", [False, True])
def test_a_cache_written_in_a_padded_layout_with_int64_indices(separate):
    from tirfun import te
    from tirfun.testing.equivalence import assert_equivalent

    mod = mod_of(ADD64)
    sch = Schedule(mod)
    block = sch.get_block("T_add")
    sch.cache_write(block, 0, "global")

    def index_map(x, y):
        return [x // 32, y, te.AXIS_SEPARATOR, x % 32] if separate else [x // 32, y, x % 32]

    sch.transform_layout(block, ("write", 0), index_map, pad_value=0.0)
    cache = sch.mod["main"].body.block.alloc_buffers[0]
    assert [int(d) for d in cache.shape] == [2, 8, 32] and list(cache.axis_separators) == ([2] if separate else [])
    store = sch.mod["main"].body.block.body.seq[0].body.body.body.block.body
    assert store.value.args[0].script() == "v_axis0 == T.int64(1) and T.int64(1) <= v_axis2"
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"])
    if not separate:  # the CPU build refuses axis separators
        check_padded(mod, sch.mod, "", lambda *i: i)


def test_a_map_reading_an_index_shifted_pads_before_the_domain_too():
    # (i + 1) // 8 over 16 elements: element 0 of the new layout and the
    # last 7 are padding
    src = """
@T.prim_func
def main(A: T.Buffer((T.int64(16),), "int32"), B: T.Buffer((T.int64(16),), "int32")):
    for i in range(T.int64(16)):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + 1
"""
    from tirfun.nodes import const

    mod = mod_of(src)
    sch = Schedule(mod)
    sch.transform_layout("block", "B", lambda i: [const(0, i.dtype), (i + 1) // 8, (i + 1) % 8], pad_value=-1)
    func = sch.mod["main"]
    assert [int(d) for d in func.buffer_map[func.params[1]].shape] == [1, 3, 8]
    check_padded(mod, sch.mod, "B", lambda i: (0, (i + 1) // 8, (i + 1) % 8), pad=lambda *_: -1)
    # an input shifted so gets its assumption, and keeps its meaning
    sch = Schedule(mod)
    sch.transform_layout("block", "A", lambda i: [(i + 3) // 4, (i + 3) % 4], pad_value=5)
    check_padded(mod, sch.mod, "A", lambda i: ((i + 3) // 4, (i + 3) % 4), pad=lambda *_: 5)


def test_loops_with_a_block_between_them_are_kept():
    # replacing the two loops would drop the block between them
    src = """
@T.prim_func
def main(A: T.Buffer((3, 6), "int32"), B: T.Buffer((3, 6), "int32")):
    for i in range(3):
        with T.block("row"):
            vi = T.axis.spatial(3, i)
            T.reads(A[vi, 0:6])
            T.writes(B[vi, 0:6])
            for j in range(6):
                B[vi, j] = A[vi, j] + 1
"""
    mod = mod_of(src)
    index_map = lambda i, j: (i, j // 4, j % 4)  # noqa: E731 - the map, also run on ints
    out = R.transform_layout("row", ("write", 0), index_map, pad_value=0)(mod)
    assert out["main"].body.block.body.seq[1].body.body.body.block.name_hint == "buffer_B_padding"
    check_padded(mod, out, "B", index_map, pad=lambda *_: 0)
