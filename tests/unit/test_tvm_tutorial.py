"""A program in the style of TVM's TensorIR creation tutorial runs with
``import tvm`` served by tirfun (``tirfun.compat.install()``).

The program below is written for this test; it makes every call the
tutorial makes, in the same order and with the same shapes: a matmul
followed by a relu in TVMScript (explicit, concise, with shapes taken from
Python values, with dynamic shapes), built and run against numpy, then the
same computation from te, with static and with symbolic sizes.
"""

from __future__ import annotations

import io
import sys
import types
from contextlib import redirect_stdout

import numpy as np
import pytest

import tirfun.compat
from tirfun.errors import TirfunError


@pytest.fixture
def tvm():
    module = tirfun.compat.install()
    try:
        yield module
    finally:
        tirfun.compat.uninstall()


def test_matmul_relu_walkthrough_with_tvm_served_by_tirfun(tvm):
    import tvm as imported
    from tvm.script import ir as I
    from tvm.script import tir as T

    assert imported is tvm

    @I.ir_module
    class Explicit:
        @T.prim_func
        def mm_relu(X: T.Buffer((128, 128), "float32"), W: T.Buffer((128, 128), "float32"),
                    Out: T.Buffer((128, 128), "float32")):
            Acc = T.alloc_buffer((128, 128), dtype="float32")
            for r in range(128):
                for c in range(128):
                    for t in range(128):
                        with T.block("Y"):
                            vr = T.axis.spatial(128, r)
                            vc = T.axis.spatial(128, c)
                            vt = T.axis.reduce(128, t)
                            T.reads(X[vr, vt], W[vt, vc])
                            T.writes(Acc[vr, vc])
                            with T.init():
                                Acc[vr, vc] = T.float32(0)
                            Acc[vr, vc] = Acc[vr, vc] + X[vr, vt] * W[vt, vc]
            for r in range(128):
                for c in range(128):
                    with T.block("C"):
                        vr = T.axis.spatial(128, r)
                        vc = T.axis.spatial(128, c)
                        T.reads(Acc[vr, vc])
                        T.writes(Out[vr, vc])
                        Out[vr, vc] = T.max(Acc[vr, vc], T.float32(0))

    @I.ir_module
    class Concise:
        @T.prim_func
        def mm_relu(X: T.Buffer((128, 128), "float32"), W: T.Buffer((128, 128), "float32"),
                    Out: T.Buffer((128, 128), "float32")):
            Acc = T.alloc_buffer((128, 128), dtype="float32")
            for r, c, t in T.grid(128, 128, 128):
                with T.block("Y"):
                    vr, vc, vt = T.axis.remap("SSR", [r, c, t])
                    with T.init():
                        Acc[vr, vc] = T.float32(0)
                    Acc[vr, vc] = Acc[vr, vc] + X[vr, vt] * W[vt, vc]
            for r, c in T.grid(128, 128):
                with T.block("C"):
                    vr, vc = T.axis.remap("SS", [r, c])
                    Out[vr, vc] = T.max(Acc[vr, vc], T.float32(0))

    assert tvm.ir.structural_equal(Explicit, Concise)

    rows = cols = depth = 128
    elem = "float32"

    @I.ir_module
    class FromPythonValues:
        @T.prim_func
        def mm_relu(X: T.Buffer((rows, depth), elem), W: T.Buffer((depth, cols), elem),
                    Out: T.Buffer((rows, cols), elem)):
            Acc = T.alloc_buffer((rows, cols), elem)
            for r, c, t in T.grid(rows, cols, depth):
                with T.block("Y"):
                    vr, vc, vt = T.axis.remap("SSR", [r, c, t])
                    with T.init():
                        Acc[vr, vc] = T.cast(T.float32(0), elem)
                    Acc[vr, vc] = Acc[vr, vc] + X[vr, vt] * W[vt, vc]
            for r, c in T.grid(rows, cols):
                with T.block("C"):
                    vr, vc = T.axis.remap("SS", [r, c])
                    Out[vr, vc] = T.max(Acc[vr, vc], T.cast(T.float32(0), elem))

    assert tvm.ir.structural_equal(Concise, FromPythonValues)

    @I.ir_module
    class Dynamic:
        @T.prim_func
        def mm_relu(x: T.handle, w: T.handle, out: T.handle):
            R, C, D = T.int32(), T.int32(), T.int32()
            X = T.match_buffer(x, [R, D], elem)
            W = T.match_buffer(w, [D, C], elem)
            Out = T.match_buffer(out, [R, C], elem)
            Acc = T.alloc_buffer((R, C), elem)
            for r, c, t in T.grid(R, C, D):
                with T.block("Y"):
                    vr, vc, vt = T.axis.remap("SSR", [r, c, t])
                    with T.init():
                        Acc[vr, vc] = T.cast(T.float32(0), elem)
                    Acc[vr, vc] = Acc[vr, vc] + X[vr, vt] * W[vt, vc]
            for r, c in T.grid(R, C):
                with T.block("C"):
                    vr, vc = T.axis.remap("SS", [r, c])
                    Out[vr, vc] = T.max(Acc[vr, vc], T.cast(T.float32(0), elem))

    def run(lib: tvm.runtime.Module, m: int, n: int, k: int) -> None:
        rng = np.random.default_rng(m * 1000 + n + k)
        x = rng.uniform(-1, 1, size=(m, k)).astype("float32")
        w = rng.uniform(-1, 1, size=(k, n)).astype("float32")
        a, b = tvm.nd.array(x), tvm.nd.array(w)
        c = tvm.nd.array(np.zeros((m, n), dtype="float32"))
        lib(a, b, c)
        tvm.testing.assert_allclose(c.numpy(), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)

    lib = tvm.compile(Dynamic, target="llvm")
    run(lib, 4, 4, 4)
    run(lib, 64, 64, 128)

    from tvm import te

    X = te.placeholder((128, 128), "float32", name="X")
    W = te.placeholder((128, 128), "float32", name="W")
    t = te.reduce_axis((0, 128), "t")
    Acc = te.compute((128, 128), lambda r, c: te.sum(X[r, t] * W[t, c], axis=t), name="Y")
    Out = te.compute((128, 128), lambda r, c: te.max(Acc[r, c], 0), name="C")
    func = te.create_prim_func([X, W, Out]).with_attr({"global_symbol": "mm_relu"})
    from_te = tvm.IRModule({"mm_relu": func})
    shown = io.StringIO()
    with redirect_stdout(shown):
        from_te.show()
    assert "def mm_relu(X: T.Buffer((128, 128), \"float32\")" in shown.getvalue()
    # te adds tir.noalias, as TVM's create_prim_func does; the rest is the same program
    same = tvm.IRModule({"mm_relu": from_te["mm_relu"].without_attr("tir.noalias")})
    assert tvm.ir.structural_equal(same, Concise)
    run(tvm.compile(from_te, target="llvm"), 128, 128, 128)

    # the sizes and the reduction axis share a name, as in the tutorial
    R, C, D = te.var("m"), te.var("n"), te.var("k")
    X = te.placeholder((R, C), "float32", name="A")
    W = te.placeholder((D, C), "float32", name="B")
    k = te.reduce_axis((0, D), "k")
    Acc = te.compute((R, C), lambda i, j: te.sum(X[i, k] * W[k, j], axis=k), name="Y")
    Out = te.compute((R, C), lambda i, j: te.max(Acc[i, j], 0), name="C")
    func = te.create_prim_func([X, W, Out]).with_attr({"global_symbol": "mm_relu"})
    dynamic_te = tvm.IRModule({"mm_relu": func})
    shown = io.StringIO()
    with redirect_stdout(shown):
        dynamic_te.show()
    text = shown.getvalue()
    assert "k = T.int32()" in text and "for i, j, k_1 in T.grid(m, n, k):" in text
    # square sizes keep every access of this program in bounds
    lib = tvm.tir.build(dynamic_te, target="llvm")
    for size in (3, 16):
        x = np.random.default_rng(size).uniform(-1, 1, (size, size)).astype("float32")
        w = np.random.default_rng(size + 1).uniform(-1, 1, (size, size)).astype("float32")
        c = tvm.nd.array(np.zeros((size, size), "float32"), tvm.cpu())
        lib(tvm.nd.array(x), tvm.nd.array(w), c)
        tvm.testing.assert_allclose(c, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)


def test_install_refuses_to_hide_a_real_tvm():
    real = types.ModuleType("tvm")
    sys.modules["tvm"] = real
    try:
        with pytest.raises(TirfunError, match="a real tvm is already imported; pass replace=True"):
            tirfun.compat.install()
        assert sys.modules["tvm"] is real
        served = tirfun.compat.install(replace=True)
        assert sys.modules["tvm"] is served and served.__name__ == "tirfun.compat.tvm"
        tirfun.compat.uninstall()
        assert "tvm" not in sys.modules
    finally:
        if sys.modules.get("tvm") is real:
            del sys.modules["tvm"]


def test_uninstall_leaves_import_tvm_to_whatever_is_installed(tvm):
    import tvm.script.tir as T

    assert T is sys.modules["tirfun.script.tir"]
    tirfun.compat.uninstall()
    assert not any(name == "tvm" or name.startswith("tvm.") for name in sys.modules)
    tirfun.compat.install()  # the fixture uninstalls again


def test_the_compatibility_package_imports_without_installing():
    import tirfun.compat.tvm as tvm

    assert "tvm" not in sys.modules
    assert tvm.compile is not None and tvm.nd.array is not None
    with pytest.raises(TirfunError, match="no device kind 'metal'"):
        tvm.device("metal")


def test_a_failed_primitive_is_caught_as_tvm_tir_schedule_error(tvm):
    from tvm.script import tir as T

    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + T.float32(1)

    sch = tvm.tir.Schedule(main)
    with pytest.raises(tvm.tir.ScheduleError):
        sch.compute_inline(sch.get_block("B"))  # an output block
    with pytest.raises(tvm.TVMError):  # TVM's base class catches it too
        sch.compute_inline(sch.get_block("B"))


def test_node_classes_are_found_where_tvm_keeps_them(tvm):
    from tvm.script import tir as T

    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                A[vi] = T.float32(0)

    assert isinstance(main.body.block, tvm.tir.stmt.Block)
    assert isinstance(main.body.block.body, tvm.tir.stmt.For)
    assert isinstance(main.body.block.body.loop_var, tvm.tir.expr.Var)


def test_the_parser_package_and_its_error_class(tvm):
    from tvm.script.parser import tir as T
    import tvm.script.parser.tir as T2

    assert T is T2 is sys.modules["tirfun.script.tir"]
    with pytest.raises(tvm.error.DiagnosticError) as info:
        @T.prim_func
        def f(a: T.handle):
            A = T.match_buffer(a, dtype="int32")
            T.evaluate(0)
    assert info.value.source_line.strip() == 'A = T.match_buffer(a, dtype="int32")'
    assert issubclass(tvm.error.DiagnosticError, tvm.error.TVMError)


def test_a_handle_says_what_it_points_to_as_tvm_ir_types_do(tvm):
    from tvm import ir
    from tvm.script import tir as T

    ptr = T.handle("int32", "shared")
    assert ptr.dtype == "handle" and isinstance(ptr.type_annotation, ir.PointerType)
    assert ptr.type_annotation.element_type == ir.PrimType("int32")
    assert ptr.type_annotation.storage_scope == "shared"
    assert T.handle().type_annotation is None
    assert T.handle(storage_scope="shared").type_annotation.element_type == ir.PrimType("void")

    # the same call in a script declares the same variable
    @T.prim_func(check_well_formed=False)
    def f():
        p = T.handle("int32", "shared")
        T.evaluate(T.isnullptr(p))
    declared = f.body.value.args[0]
    assert declared.type_annotation == ptr.type_annotation


def test_targets_and_ops_of_tvm_in_a_decorated_function(tvm):
    from tvm.script import tir as T

    @T.prim_func
    def with_tvm_names():
        T.func_attr({"target": tvm.target.Target("llvm", host="llvm")})
        T.Call("void", tvm.ir.Op.get("tir.tvm_call_packed"), ["f"])

    @T.prim_func
    def with_t_names():
        T.func_attr({"target": T.target("llvm", host="llvm")})
        T.Call("void", "tir.tvm_call_packed", ["f"])

    assert with_tvm_names.attrs["target"] == with_t_names.attrs["target"]
    assert with_tvm_names.body == with_t_names.body
