"""Functions of a module calling one another, as TVM writes it
(``Module.sub(...)``): parse, print, verify, interpret, build."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import tirfun
from tirfun.analysis.verify import verify
from tirfun.analysis import structural_equal
from tirfun.errors import BuildError, InterpError, NodeError, ParseError, TirfunError, VerifyError
from tirfun.nodes import Call, GlobalVar, IRModule, PointerType, Var
from tirfun.script import from_source
from tirfun.script import ir as I
from tirfun.script import tir as T

TEXT = '''# from tirfun.script import ir as I
# from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def check(n: T.int32):
        assert n < 100, "n is too large"
        T.evaluate(0)

    @T.prim_func(private=True)
    def scale(a: T.float32, k: T.int32) -> T.float32:
        if k < 0:
            return T.float32(0.0)
        return a * T.Cast("float32", k) + T.float32(1.0)

    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), n: T.int32):
        Module.check(n)
        for i in range(8):
            A[i] = Module.scale(A[i], i - n)'''


@I.ir_module
class Decorated:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), n: T.int32):
        Decorated.check(n)
        for i in range(8):
            A[i] = Decorated.scale(A[i], i - n)

    @T.prim_func(private=True)
    def check(n: T.int32):
        assert n < 100, "n is too large"

    @T.prim_func(private=True)
    def scale(a: T.float32, k: T.int32) -> T.float32:
        if k < 0:
            T.ret(T.float32(0))
        T.ret(a * T.Cast("float32", k) + T.float32(1))


def _expected(a, n):
    k = np.arange(8) - n
    return np.where(k < 0, np.float32(0), a * k.astype("float32") + np.float32(1)).astype("float32")


def test_a_call_prints_as_tvm_prints_it_and_parses_back():
    mod = from_source(TEXT)
    assert mod.script() == TEXT
    call = mod["main"].body.seq[1].body.value
    assert call == Call("float32", GlobalVar("scale"), call.args)
    assert mod["main"].body.seq[0].value.dtype == "void"


def test_a_decorated_class_calls_functions_defined_after_the_caller():
    assert Decorated == from_source(TEXT)
    assert verify(Decorated) is Decorated


def test_interpreted_and_compiled_as_numpy_computes():
    a = np.linspace(-2, 2, 8, dtype="float32")
    for n in (0, 3, 9):
        expected = a.copy()
        tirfun.interp.run(Decorated, expected, n)
        assert expected.tobytes() == _expected(a, n).tobytes()
        actual = a.copy()
        tirfun.build(Decorated)(actual, n)
        assert actual.tobytes() == expected.tobytes()


def test_a_failure_in_a_callee_is_the_callers_failure():
    a = np.zeros(8, "float32")
    with pytest.raises(TirfunError, match="n is too large"):
        tirfun.interp.run(Decorated, a, 100)
    with pytest.raises(TirfunError, match="assertion failed: n is too large"):
        tirfun.build(Decorated)(a, 100)


def test_called_private_functions_are_internal_to_the_build():
    rt = tirfun.build(Decorated)
    assert rt.function_names == ["main"]
    assert "define internal" in rt.get_source("ll") or "scale" not in rt.get_source("ll")


def test_a_public_function_returns_its_value_when_called_from_python():
    mod = from_source(TEXT.replace("@T.prim_func(private=True)\n    def scale",
                                   "@T.prim_func\n    def scale"))
    rt = tirfun.build(mod)
    assert rt.function_names == ["main", "scale"]
    assert rt["scale"](2.5, 3) == tirfun.interp.compile_in_module(mod, "scale")(2.5, 3) == 8.5
    assert rt["scale"](2.5, -1) == 0.0


def test_ret_of_each_scalar_type_through_the_build():
    mod = from_source('''
from tirfun.script import ir as I
from tirfun.script import tir as T
@I.ir_module
class Module:
    @T.prim_func
    def half(a: T.float16) -> T.bool:
        T.ret(a > T.float16(1))
    @T.prim_func
    def wide(a: T.int64, b: T.int8) -> T.int64:
        T.ret(a * T.Cast("int64", b))
''')
    rt = tirfun.build(mod)
    for x in (0.5, 2.0):
        assert rt["half"](x) is tirfun.interp.run(mod["half"], x) is (x > 1)
    assert rt["wide"](2**40, -3) == tirfun.interp.run(mod["wide"], 2**40, -3) == -3 * 2**40


def test_a_function_printed_alone_names_its_callee_as_tvm_does():
    assert 'A[i] = I.GlobalVar("scale")(A[i], i - n)' in Decorated["main"].script()


def test_a_function_run_without_its_module_says_so():
    with pytest.raises(InterpError, match="calls check, a function of its module: run the module"):
        tirfun.interp.run(Decorated["main"], np.zeros(8, "float32"), 1)


def test_an_unknown_function_of_the_module_is_a_parse_error():
    text = TEXT.replace("Module.scale(A[i], i - n)", "Module.sclae(A[i], i - n)")
    with pytest.raises(ParseError, match=r"the module Module has no function 'sclae' "
                       r"\(it has: check, main, scale\)") as info:
        from_source(text)
    assert info.value.line == 21


def test_keyword_and_buffer_arguments_are_parse_errors():
    with pytest.raises(ParseError, match="scale takes its arguments by position"):
        from_source(TEXT.replace("Module.scale(A[i], i - n)", "Module.scale(A[i], k=i - n)"))
    with pytest.raises(ParseError, match="an argument of scale must be a scalar expression, "
                       "got the buffer A"):
        from_source(TEXT.replace("Module.scale(A[i], i - n)", "Module.scale(A, i - n)"))


def test_the_verifier_checks_the_callee_and_its_arguments():
    mod = from_source(TEXT)
    main = mod["main"]

    def with_call(call):
        loop = main.body.seq[1]
        store = attrs.evolve(loop.body, value=call)
        body = attrs.evolve(main.body, seq=[main.body.seq[0], attrs.evolve(loop, body=store)])
        return mod.with_function("main", main.with_body(body))

    args = main.body.seq[1].body.value.args
    with pytest.raises(VerifyError, match="the call of nope names no function of the module"):
        verify(with_call(Call("float32", GlobalVar("nope"), args)))
    with pytest.raises(VerifyError, match="passes 1 arguments; scale takes 2"):
        verify(with_call(Call("float32", GlobalVar("scale"), args[:1])))
    with pytest.raises(VerifyError, match="passes float32 for parameter k of int32"):
        verify(with_call(Call("float32", GlobalVar("scale"), [args[0], args[0]])))
    with pytest.raises(VerifyError, match="has type float64, but scale returns float32"):
        verify(with_call(Call("float64", GlobalVar("scale"), args).astype("float32")))


POINTERS = '''# from tirfun.script import ir as I
# from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fill(B_data: T.handle, n: T.int32, v: T.float32):
        B = T.decl_buffer((n,), data=B_data)
        for i in range(n):
            B[i] = v + T.Cast("float32", i)

    @T.prim_func(private=True)
    def twice(C: T.Buffer((4,), "float32")):
        for i in range(4):
            C[i] = C[i] * T.float32(2.0)

    @T.prim_func
    def main(A: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
        Module.fill(A.data, 4, T.float32(1.0))
        Module.twice(A.data)
        p = T.allocate([4], "float32", "global")
        P = T.Buffer((4,), data=p)
        Module.fill(p, 4, T.float32(-1.0))
        for i in range(4):
            D[i] = P[i] + A[i]'''


def test_data_pointers_are_passed_and_written_through():
    mod = from_source(POINTERS)
    assert mod.script() == POINTERS
    A = mod["main"].buffer_map[mod["main"].params[0]]
    assert A.data == mod["main"].params[0]  # A.data is what the parameter passes
    assert mod["main"].buffer_map[mod["main"].params[1]].data is None
    a, d = np.full(4, 7, "float32"), np.zeros(4, "float32")
    tirfun.interp.run(mod, a, d)
    assert a.tolist() == [2, 4, 6, 8] and d.tolist() == [1, 4, 7, 10]
    a2, d2 = np.full(4, 7, "float32"), np.zeros(4, "float32")
    rt = tirfun.build(mod)
    rt(a2, d2)
    assert a2.tobytes() == a.tobytes() and d2.tobytes() == d.tobytes()
    assert rt.function_names == ["main"]


def test_a_callee_buffer_whose_size_no_argument_gives_is_refused():
    mod = from_source('''
from tirfun.script import ir as I
from tirfun.script import tir as T
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fill(b: T.handle):
        m = T.int32()
        B = T.match_buffer(b, (m,), "float32")
        for i in range(m):
            B[i] = T.float32(1)
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        Module.fill(A.data)
''')
    with pytest.raises(BuildError, match=r"the call of fill: its buffer parameters have sizes \(m\) "
                       "that a pointer does not carry"):
        tirfun.build(mod)
    with pytest.raises(InterpError, match="buffer B has the symbolic shape of a parameter array"):
        tirfun.interp.run(mod, np.zeros(4, "float32"))


def test_ret_without_a_return_type_is_refused_by_the_build():
    ret_in_void = from_source('''
from tirfun.script import tir as T
@T.prim_func
def main(a: T.int32):
    T.ret(a)
''')
    with pytest.raises(BuildError, match="T.ret in a function without a return type"):
        tirfun.build(ret_in_void)


def test_global_var_names_are_identifiers():
    with pytest.raises(tirfun.errors.NodeError, match="function name '1f' is not a valid identifier"):
        GlobalVar("1f")
    assert IRModule({"main": Decorated["main"]}).script().count("I.GlobalVar") == 0


HANDLES = '''# from tirfun.script import tir as T

@T.prim_func
def main(a: T.handle("float32", "global"), b: T.handle("int8", "shared"), c: T.handle):
    A = T.decl_buffer((4,), data=a)
    p: T.handle("float32", "global") = T.address_of(A[1])
    q = T.handle("float16", "local")
    T.call_extern("int32", "f", p, q, b, c)'''


def test_a_typed_handle_keeps_its_element_type_and_scope_as_tvm_prints_it():
    written = HANDLES.replace('a: T.handle("float32", "global")', 'a: T.handle("float32")')
    func = from_source(written, check_well_formed=False)
    assert func.script() == HANDLES
    a, b, c = func.params
    assert a.type_annotation == PointerType("float32", "global")
    assert b.type_annotation == PointerType("int8", "shared") and c.type_annotation is None
    assert from_source(func.script(), check_well_formed=False) == func
    # the pointee counts in structural equality, as TVM's type annotation does
    other = from_source(written.replace('T.handle("float32")', 'T.handle("int32")'),
                        check_well_formed=False)
    assert not structural_equal(func, other)


def test_only_a_handle_points_to_something():
    with pytest.raises(NodeError, match="only a handle variable points to float32; x is int32"):
        Var("x", "int32", PointerType("float32"))


ACCESS = '''# from tirfun.script import ir as I
# from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_row(p: T.handle("{dt}", "global"), n: T.int32, v: T.{dt}):
        R = T.decl_buffer((n,){dtarg}, data=p)
        for j in range(n):
            R[j] = R[j] + v

    @T.prim_func
    def main(A: T.Buffer((3, 4), "{dt}")):
        for i in range(3):
            Module.add_row(T.address_of(A[i, 1]), 3, T.Cast("{dt}", i))
        Module.add_row(T.tvm_access_ptr(T.type_annotation("{dt}"), A.data, 4, 8, 3), 8, T.{dt}({half}))'''


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_pointers_into_a_buffer_reach_the_callee(dtype):
    text = ACCESS.format(dt=dtype, half="0.5", dtarg="" if dtype == "float32" else f', "{dtype}"')
    mod = from_source(text)
    assert mod.script() == text
    a = np.zeros((3, 4), dtype)
    expected = a.copy()
    expected[:, 1:] += np.arange(3, dtype=dtype)[:, None]
    expected.reshape(-1)[4:12] += np.asarray(0.5, dtype)
    interpreted, compiled = a.copy(), a.copy()
    tirfun.interp.run(mod, interpreted)
    tirfun.build(mod)(compiled)
    assert interpreted.tobytes() == expected.tobytes() == compiled.tobytes()


def test_access_ptr_is_tvms_tvm_access_ptr():
    @I.ir_module
    class Mod:
        @T.prim_func(private=True)
        def add_row(p: T.handle("float32"), n: T.int32, v: T.float32):
            R = T.decl_buffer((n,), data=p)
            for j in range(n):
                R[j] = R[j] + v

        @T.prim_func
        def main(A: T.Buffer((3, 4), "float32")):
            for i in range(3):
                Mod.add_row(T.address_of(A[i, 1]), 3, T.Cast("float32", i))
            Mod.add_row(A.access_ptr("rw", offset=4, extent=8), 8, T.float32(0.5))

    assert Mod == from_source(ACCESS.format(dt="float32", half="0.5", dtarg=""))
    whole = Mod["main"].buffer_map[Mod["main"].params[0]]
    # the extent defaults to the rest of the buffer, the mask counts r as 1 and w as 2
    from tirfun.tir import op
    assert op.tvm_access_ptr("float32", whole.data, 0, 12, 2).script() == \
        'T.tvm_access_ptr(T.type_annotation("float32"), A_handle, 0, 12, 2)'


def test_access_ptr_errors():
    head = 'from tirfun.script import tir as T\n@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'
    with pytest.raises(ParseError, match="A.access_ptr: the access mask is made of 'r' and 'w', "
                       "got 'x'"):
        from_source(head + '    T.evaluate(T.call_extern("int32", "g", A.access_ptr("x")))\n')
    with pytest.raises(ParseError, match="B.access_ptr: buffer B has no data variable"):
        from_source(head + '    B = T.alloc_buffer((4,))\n'
                    '    C = B\n'
                    '    T.evaluate(T.call_extern("int32", "g", C.access_ptr("r")))\n')


def test_a_function_printed_alone_reads_back_with_void_calls_as_tvm_reads_them():
    main = from_source(TEXT)["main"]
    text = main.script()
    assert text.startswith("# from tirfun.script import ir as I\n# from tirfun.script import tir as T\n")
    assert '    I.GlobalVar("check")(n)\n' in text
    again = from_source(text, check_well_formed=False)
    # TVM's call_tir of an undeclared function is void, so only the void call reads back alike
    assert again.body.seq[0] == main.body.seq[0]
    assert again.body.seq[1].body.value.value.dtype == "void"


def test_a_pointer_to_the_wrong_data_is_an_interp_error():
    text = '''
from tirfun.script import ir as I
from tirfun.script import tir as T
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def twice(C: T.Buffer((4,), "{dt}")):
        for i in range(4):
            C[i] = C[i] + C[i]
    @T.prim_func
    def main(A: T.Buffer((6,), "int32")):
        Module.twice(T.address_of(A[{k}]))
'''
    wrong = text.format(dt="float32", k=0)
    with pytest.raises(VerifyError, match="the call of twice passes a pointer to int32 data for "
                       "buffer C of float32"):
        from_source(wrong)
    with pytest.raises(InterpError, match="function twice: buffer C of float32 is given a "
                       "pointer to int32 data"):
        tirfun.interp.run(from_source(wrong, check_well_formed=False), np.zeros(6, "int32"))
    with pytest.raises(InterpError, match="buffer C has 4 elements but the pointer it is given "
                       "reaches 3"):
        tirfun.interp.run(from_source(text.format(dt="int32", k=3)), np.zeros(6, "int32"))
    a = np.arange(6, dtype="int32")
    tirfun.interp.run(from_source(text.format(dt="int32", k=2)), a)
    assert a.tolist() == [0, 1, 4, 6, 8, 10]
