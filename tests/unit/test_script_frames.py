"""TVM's IRBuilder frames and constructors as TVMScript accepts them:
``T.While``, ``T.If``/``T.Then``/``T.Else``, ``T.buffer_store``, ``T.arg``,
``T.func_ret``, ``T.func_name``, ``T.ptr``/``T.Ptr``/``T.buffer_var``,
``T.Var``/``T.SizeVar``, ``T.IterVar``, ``T.CommReducer``,
``T.CallEffectKind``, ``T.llvm_lookup_intrinsic_id``, ``T.call_kernel`` and
``T.void``."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun.errors import BuildError, InterpError, ParseError
from tirfun.nodes import IfThenElse, IterVarType, PointerType, While
from tirfun.script import from_source
from tirfun.script import tir as T

FRAMES = '''
@T.prim_func
def main(A: T.Buffer((8,), "int32"), n: T.int32):
    k = T.decl_buffer((1,), "int32")
    k[0] = 0
    with T.While(k[0] < n):
        with T.If(k[0] % 2 == 0):
            with T.Then():
                T.buffer_store(A, k[0] * 10, [k[0]])
            with T.Else():
                A[k[0]] = T.CallEffectKind.kOpaque
        k[0] = k[0] + 1
    with T.If(n > 6):
        with T.Then():
            A[7] = -1
'''

PLAIN = '''
@T.prim_func
def main(A: T.Buffer((8,), "int32"), n: T.int32):
    k = T.decl_buffer((1,), "int32")
    k[0] = 0
    while k[0] < n:
        if k[0] % 2 == 0:
            A[k[0]] = k[0] * 10
        else:
            A[k[0]] = 4
        k[0] = k[0] + 1
    if n > 6:
        A[7] = -1
'''


def test_frames_build_the_statements_they_name():
    func = from_source(FRAMES)
    assert func == from_source(PLAIN)
    from tirfun.analysis.traversal import walk
    kinds = {type(s) for s in walk(func.body)}
    assert While in kinds and IfThenElse in kinds


@pytest.mark.parametrize("n", [0, 5, 7])
def test_frames_interpret_and_build_alike(n):
    func = from_source(FRAMES)
    interpreted, compiled = np.full(8, 9, "int32"), np.full(8, 9, "int32")
    tirfun.interp.run(func, interpreted, n)
    tirfun.build(func)(compiled, n)
    expected = np.full(8, 9, "int32")
    for k in range(n):
        expected[k] = k * 10 if k % 2 == 0 else 4
    if n > 6:
        expected[7] = -1
    assert interpreted.tolist() == compiled.tolist() == expected.tolist()


@pytest.mark.parametrize("body, message", [
    ("    with T.If(A[0] > 0):\n        A[1] = 1\n",
     "the body of T.If is a T.Then frame, optionally followed by a T.Else frame, and nothing else"),
    ("    with T.Then():\n        A[1] = 1\n", "T.Then must stand directly inside a T.If frame"),
    ("    with T.If(A[0] > 0):\n        with T.Else():\n            A[1] = 1\n",
     "T.Else follows the T.Then of its T.If frame, once"),
    ("    T.func_name(\"g\")\n", "the function is already named main by its def"),
    ("    T.buffer_store(A, 1, [0, 1])\n",
     "buffer A has 1 dimensions but T.buffer_store gives 2 indices"),
    ("    T.func_ret(T.int32)\n    T.func_ret(T.int64)\n",
     "the function's return type is already int32"),
])
def test_frame_errors(body, message):
    with pytest.raises(ParseError, match=message):
        from_source('@T.prim_func\ndef main(A: T.Buffer((8,), "int32")):\n' + body)


def test_arg_func_ret_and_pointer_declarations():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    T.func_ret(T.int32)
    B = T.arg("B", T.Buffer((4,), "float32"))
    m = T.arg("m", T.int32())
    p = T.arg("p", T.ptr("float16", "shared"))
    q = T.arg("q", T.Ptr("int8"))
    r = T.arg("r", T.buffer_var("float32"))
    for i in range(4):
        B[i] = A[i] * T.Cast("float32", m)
    T.ret(m)
''')
    names = [v.name for v in func.params]
    assert names == ["A_handle", "B_handle", "m", "p", "q", "r"]
    assert func.ret_type == "int32"
    p, q, r = func.params[3:]
    assert p.type_annotation == PointerType("float16", "shared")
    assert q.type_annotation == PointerType("int8", "global")
    assert r.type_annotation == PointerType("float32", "global")
    text = func.script()
    assert 'def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), m: T.int32' in text
    assert from_source(text) == func
    a = np.arange(4, dtype="float32")
    b, interpreted = np.zeros(4, "float32"), np.zeros(4, "float32")
    pointers = (np.zeros(2, "float16"), np.zeros(2, "int8"), np.zeros(2, "float32"))
    assert tirfun.build(func)["main"](a, b, 3, *pointers) == 3
    assert tirfun.interp.run(func, a, interpreted, 3, *pointers) == 3
    assert b.tolist() == interpreted.tolist() == (a * 3).tolist()


def test_var_iter_var_and_comm_reducer_constructors():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    x = T.Var("x", "float32")
    y = T.SizeVar("y", "float32")
    r = T.CommReducer([x], [y], [x + y], [T.float32(0)])
    i = T.int32()
    iv = T.IterVar(T.Range(0, 4), i, 2)
    with T.attr(r, "reduce_scope", T.reinterpret("handle", T.uint64(0))):
        with T.attr(iv, "iter", 0):
            A[0] = T.float32(1)
''')
    reducer = func.body.node
    assert [v.name for v in reducer.lhs] == ["x"] and [v.name for v in reducer.rhs] == ["y"]
    iv = func.body.body.node
    assert iv.iter_type == IterVarType.CommReduce and iv.dom.extent.value == 4


def test_call_effect_kind_matches_python():
    assert int(T.CallEffectKind.kPure) == 1 and int(T.CallEffectKind.kOpaque) == 4
    func = from_source('@T.prim_func\ndef main(A: T.Buffer((1,), "int32")):\n'
                       '    A[0] = T.CallEffectKind.kUpdateState\n')
    a = np.zeros(1, "int32")
    tirfun.build(func)(a)
    assert a[0] == 3


def test_llvm_lookup_intrinsic_id_names_the_intrinsic_for_call_llvm_intrin():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((2,), "float32")):
    A[0] = T.call_llvm_pure_intrin("float32", T.llvm_lookup_intrinsic_id("llvm.fabs"), A[1])
''')
    assert 'T.call_llvm_pure_intrin("float32", "llvm.fabs", A[1])' in func.script()
    a, b = np.array([0, -2.5], "float32"), np.array([0, -2.5], "float32")
    tirfun.build(func)(a)
    tirfun.interp.run(func, b)
    assert a.tolist() == b.tolist() == [2.5, -2.5]
    with pytest.raises(ParseError, match="LLVM intrinsics are named llvm.\\*, got 'fabs'"):
        from_source('@T.prim_func\ndef main():\n    x = T.llvm_lookup_intrinsic_id("fabs")\n')


def test_call_kernel_parses_prints_and_is_refused_where_it_cannot_run():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    T.call_kernel("add_kernel", [(8,), (32,)], A.data, 8)
''')
    text = func.script()
    assert 'T.call_kernel("add_kernel", T.tvm_tuple(8, 32), A.data, 8)' in text
    assert from_source(text) == func
    with pytest.raises(BuildError, match="T.call_kernel is a call of an externally compiled GPU "
                       "kernel: it needs target cuda"):
        tirfun.build(func)
    with pytest.raises(InterpError, match="T.call_kernel .*needs target cuda"):
        tirfun.interp.run(func, np.zeros(8, "float32"))


def test_void_annotates_a_function_without_a_value():
    func = from_source('@T.prim_func\ndef main(A: T.Buffer((1,), "int32")) -> T.void:\n'
                       '    A[0] = 1\n')
    assert "-> T.void:" in func.script()
    assert from_source(func.script()) == func


PREFETCH = '''
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i in range(4):
        T.prefetch(A, [T.Range(i, i + 1), T.Range(0, 8)])
        for j in range(8):
            B[i, j] = A[i, j] * T.float32(2)
    T.prefetch(B, [T.Range(0, 4), T.Range(0, 8)])
'''


def test_prefetch_is_a_hint_that_prints_interprets_and_builds_as_nothing():
    from tirfun.nodes import Prefetch

    func = from_source(PREFETCH)
    hints = [s for s in __import__("tirfun.analysis.traversal", fromlist=["walk"]).walk(func.body)
             if isinstance(s, Prefetch)]
    assert [h.buffer.name for h in hints] == ["A", "B"]
    text = func.script()
    assert "T.prefetch(A, [T.Range(i, 1 + i), T.Range(0, 8)])" in text
    assert from_source(text) == func
    a = np.arange(32, dtype="float32").reshape(4, 8)
    interpreted, compiled = np.zeros_like(a), np.zeros_like(a)
    tirfun.interp.run(func, a, interpreted)
    tirfun.build(func)(a, compiled)  # TVM's CPU build refuses it; it computes nothing
    assert interpreted.tobytes() == compiled.tobytes() == (a * 2).tobytes()
    assert "prefetch" not in tirfun.lower(func).script()


@pytest.mark.parametrize("call, message", [
    ("T.prefetch(A, [T.Range(0, 4)])", "buffer A has 2 dimensions but T.prefetch gives 1 ranges"),
    ("T.prefetch(A, 3)", "the bounds of T.prefetch are a list of T.Range, one per dimension"),
    ("T.prefetch(3, [])", "T.prefetch takes a buffer, got an int"),
])
def test_prefetch_errors(call, message):
    with pytest.raises(ParseError, match=message):
        from_source(f'@T.prim_func\ndef main(A: T.Buffer((4, 8), "float32")):\n    {call}\n')


SHUFFLE = '''
@T.prim_func
def main(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((1,), "int32")):
    B[0:8] = T.Shuffle([A[4:8], A[0:4]], [7, 6, 5, 4, 0, 1, 2, 3])
    C[0] = T.Shuffle([A[0:4], A[5]], [4])
'''


def test_shuffle_picks_lanes_of_the_vectors_end_to_end():
    from tirfun.nodes import Shuffle

    func = from_source(SHUFFLE)
    text = func.script()
    assert "T.Shuffle([A[4:8], A[0:4]], [7, 6, 5, 4, 0, 1, 2, 3])" in text
    assert "T.Shuffle([A[0:4], A[5]], [4])" in text
    assert from_source(text) == func
    a = np.arange(10, 18, dtype="int32")
    expected_b = np.concatenate([a[4:8], a[0:4]])[[7, 6, 5, 4, 0, 1, 2, 3]]
    for run in ("interp", "build"):
        b, c = np.zeros(8, "int32"), np.zeros(1, "int32")
        tirfun.interp.run(func, a, b, c) if run == "interp" else tirfun.build(func)(a, b, c)
        assert b.tolist() == expected_b.tolist() and c.tolist() == [a[5]]
    with pytest.raises(tirfun.errors.NodeError, match="Shuffle indices are constants below 4"):
        Shuffle([tirfun.nodes.Ramp(0, 1, 4)], [4])


@pytest.mark.parametrize("call, message", [
    ("T.Shuffle(A[0:4], [0])", "the vectors of T.Shuffle are a list"),
    ("T.Shuffle([A[0:4]], [9])", "Shuffle indices are constants below 4"),
    ("T.Shuffle([A[0:4], T.float32(1)], [0])", "Shuffle takes vectors of one element type"),
])
def test_shuffle_errors(call, message):
    with pytest.raises(ParseError, match=message):
        from_source(f'@T.prim_func\ndef main(A: T.Buffer((8,), "int32")):\n    T.evaluate({call})\n')


def test_the_data_of_a_matched_buffer_is_its_parameter_or_a_pointer_of_its_own():
    from tirfun.analysis.equality import assert_structural_equal

    # as TVM takes it: B.data of a T.match_buffer of a parameter is the
    # parameter's pointer, here viewed with another shape
    func = from_source('''
@T.prim_func
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16,), "float32")
    B = T.match_buffer(b, (16,), "float32")
    V = T.decl_buffer((4, 4), "float32", data=B.data)
    for i, j in T.grid(4, 4):
        V[i, j] = A[i * 4 + j] * T.float32(2)
''')
    b = func.buffer_map[func.params[1]]
    assert b.data is func.params[1]
    assert "V = T.decl_buffer((4, 4), data=B.data)" in func.script()
    assert_structural_equal(from_source(func.script()), func)
    a = np.arange(16, dtype="float32")
    interpreted, compiled = np.zeros(16, "float32"), np.zeros(16, "float32")
    tirfun.interp.run(func, a, interpreted)
    tirfun.build(func)(a, compiled)
    assert interpreted.tolist() == compiled.tolist() == (a * 2).tolist()
    # a matched region has a pointer of its own, and keeps it through printing
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((16, 16), "float32")):
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi * 4:vi * 4 + 4, 0:16])
            T.writes()
            Ac = T.match_buffer(A[vi * 4:vi * 4 + 4, 0:16], (4, 16))
            T.evaluate(T.call_extern("int32", "consume", Ac.data))
''')
    (realize,) = [n for n in tirfun.analysis.traversal.walk(func.body)
                  if isinstance(n, tirfun.nodes.BlockRealize) and n.block.name_hint == "C"]
    (match,) = realize.block.match_buffers
    assert match.buffer.data is not None
    assert_structural_equal(from_source(func.script()), func)


def test_a_matched_region_with_an_offset_factor_has_an_offset_variable_bound_to_where_it_starts():
    from tirfun.analysis.equality import assert_structural_equal

    # as TVM's decl_buffer does: a view with an offset_factor and no
    # elem_offset gets a variable of its own, which is where the region
    # starts in the source (TVM's tensor-core schedules pass it to
    # tvm_access_ptr); a buffer declared without one starts at 0
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(2, 2):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
            T.writes(C[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
            A0 = T.match_buffer(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4), strides=[8, 1], offset_factor=1)
            C0 = T.match_buffer(C[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (4, 4), offset_factor=1)
            for x, y in T.grid(4, 4):
                C0[x, y] = A0[x, y] + T.Cast("float32", A0.elem_offset + A.elem_offset)
''')
    (realize,) = [n for n in tirfun.analysis.traversal.walk(func.body)
                  if isinstance(n, tirfun.nodes.BlockRealize) and n.block.name_hint == "tile"]
    views = [m.buffer for m in realize.block.match_buffers]
    assert [v.elem_offset.name for v in views] == ["A0_elem_offset", "C0_elem_offset"]
    assert "elem_offset=A0_elem_offset, offset_factor=1)" in func.script()
    assert_structural_equal(from_source(func.script()), func)
    a = np.arange(64, dtype="float32").reshape(8, 8)
    starts = np.repeat(np.repeat(np.array([[0, 4], [32, 36]], "float32"), 4, axis=0), 4, axis=1)
    interpreted, compiled = np.zeros((8, 8), "float32"), np.zeros((8, 8), "float32")
    tirfun.interp.run(func, a, interpreted)
    tirfun.build(func)(a, compiled)
    assert interpreted.tolist() == compiled.tolist() == (a + starts).tolist()


def test_a_parameter_buffer_equals_itself_whether_or_not_its_data_is_named():
    from tirfun.analysis.equality import structural_equal, structural_hash

    # the parser names a parameter's pointer only where B.data is used; the
    # buffers are the same either way
    plain = from_source('''
@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, (4,), "float32")
    for i in range(4):
        A[i] = T.float32(1)
''')
    named = from_source('''
@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, (4,), "float32")
    for i in range(4):
        A[i] = T.float32(1)
    T.evaluate(T.call_extern("int32", "touch", A.data))
''')
    assert named.buffer_map[named.params[0]].data is named.params[0]
    assert plain.buffer_map[plain.params[0]].data is None
    body = named.body.seq[0] if hasattr(named.body, "seq") else named.body
    same = named.with_body(body)
    assert structural_equal(plain, same)
    assert structural_hash(plain) == structural_hash(same)


def test_an_empty_dtype_of_an_extern_call_is_void_as_in_tvm():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((4,), "int32")):
    T.evaluate(T.call_extern("call_impl", A.data, dtype=""))
''')
    assert func.body.value.dtype == "void"
    assert 'T.call_extern("void", "call_impl", A.data)' in func.script()


@pytest.mark.parametrize("tail", ["", "    A[0] = A[0] + T.float32(0)\n"])
def test_a_thread_variable_of_another_type_than_its_extent_survives_printing(tail):
    # an int32 thread index launched over an int64 extent, as TVM writes it
    from tirfun.analysis.equality import assert_structural_equal
    from tirfun.interp import run

    text = ('from tirfun.script import tir as T\n@T.prim_func\n'
            'def main(A: T.Buffer((T.int64(64),), "float32")):\n'
            '    bx = T.env_thread("blockIdx.x")\n'
            '    with T.launch_thread(bx, T.int64(2)):\n'
            '        tx = T.env_thread("threadIdx.x")\n'
            '        T.launch_thread(tx, T.int64(32))\n'
            '        A[T.Cast("int64", bx) * T.int64(32) + T.Cast("int64", tx)] = T.Cast("float32", bx * 32 + tx)\n'
            + tail)
    func = from_source(text)
    launch = func.body if not tail else func.body[0]
    assert launch.node.var.dtype == "int32" and launch.value.dtype == "int64"
    printed = func.script()
    assert 'bx = T.env_thread("blockIdx.x")' in printed and "T.launch_thread(bx, T.int64(2))" in printed
    again = from_source(printed)
    assert_structural_equal(func, again)
    assert again.script() == printed
    a = np.zeros(64, "float32")
    run(func, a)
    np.testing.assert_array_equal(a, np.arange(64, dtype="float32"))
    # the thread variable may be declared in the launch itself, as TVM allows
    inline = text.replace('    bx = T.env_thread("blockIdx.x")\n', "").replace(
        "with T.launch_thread(bx, T.int64(2)):", 'with T.launch_thread(T.env_thread("blockIdx.x"), T.int64(2)) as bx:')
    assert_structural_equal(from_source(inline), func)
