"""Building for the CPU: compiled code agrees with the interpreter and numpy,
and the generated code has the shape the schedule asked for."""

import math
import re

import numpy as np
import pytest

import tirfun
from tirfun import IRModule, Schedule, te, tir
from tirfun.analysis.traversal import walk
from tirfun.errors import BuildError, TirfunError, UnknownNameError
from tirfun.interp import run as interp_run
from tirfun.nodes import For, ForKind
from tirfun.runtime import Target, clear_cache
from tirfun.runtime.target import host_description
from tirfun.script import from_source
from tirfun.testing.equivalence import compare_arrays, random_inputs
from sequential import libm, ordered_matmul

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


def same_as_interpreter(mod, seed=0, trials=2):
    """Run the built module and the interpreter on the same random inputs
    and compare every buffer."""
    func = mod["main"] if isinstance(mod, IRModule) else mod
    rt = tirfun.build(mod)
    for trial in range(trials):
        args = random_inputs(func, np.random.default_rng([seed, trial]))
        expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        interp_run(func, *expected)
        rt(*actual)
        for p, x, y in zip(func.params, expected, actual):
            if isinstance(x, np.ndarray):
                buf = func.buffer_map[p]
                problem = compare_arrays(buf.name, x, y, buf.dtype)
                assert problem is None, problem
    return rt


def matmul(n):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return IRModule({"main": te.create_prim_func([A, B, C])})


def tiled_matmul(n=64, tile=16, kf=4):
    sch = Schedule(matmul(n))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, tile])
    k0, k1 = sch.split(k, [None, kf])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch.mod


def add_one(n=1024, inner=16, parallel=True):
    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, inner])
    if parallel:
        sch.parallel(i0)
    sch.vectorize(i1)
    return sch.mod


def test_tutorial_builds_and_runs():
    rt = tirfun.build(from_source(TUTORIAL), target="llvm")
    a = tirfun.nd.array(np.arange(8, dtype="float32"))
    b = tirfun.nd.array(np.zeros(8, dtype="float32"))
    rt(a, b)
    np.testing.assert_array_equal(b.numpy(), a.numpy() + np.float32(1))


def test_tiled_matmul_agrees_with_the_interpreter_and_numpy():
    rt = same_as_interpreter(tiled_matmul())
    rng = np.random.default_rng(1)
    a, b = rng.random((64, 64), dtype=np.float32), rng.random((64, 64), dtype=np.float32)
    c = np.zeros((64, 64), np.float32)
    rt(a, b, c)
    np.testing.assert_array_equal(c, ordered_matmul(a, b))


def test_vectorized_loops_become_vector_instructions():
    rt = tirfun.build(add_one(parallel=False))
    assert "<16 x float>" in rt.get_source("ll")
    assert re.search(r"\bv?addps\b", rt.get_source("asm"))


def test_parallel_loops_run_on_the_thread_pool(monkeypatch):
    from tirfun.runtime import jit

    if not jit.gomp_available():
        pytest.skip("libgomp is not available on this machine")
    monkeypatch.setenv("TIRFUN_NUM_THREADS", "2")
    rt = same_as_interpreter(add_one())
    assert "GOMP_parallel" in rt.get_source("ll")
    monkeypatch.setenv("TIRFUN_NUM_THREADS", "1")
    serial = same_as_interpreter(add_one())
    assert serial is not rt  # the thread count is part of the cache key
    assert "GOMP_parallel" not in serial.get_source("ll")


def test_parallel_loop_with_scratch_and_inside_a_serial_loop(monkeypatch):
    monkeypatch.setenv("TIRFUN_NUM_THREADS", "2")
    src = """
@T.prim_func
def main(A: T.Buffer((3, 8, 4), "float32"), B: T.Buffer((3, 8), "float32")):
    for r in range(3):
        for i in T.parallel(8):
            with T.block("row"):
                vr, vi = T.axis.remap("SS", [r, i])
                T.reads(A[vr, vi, 0:4])
                T.writes(B[vr, vi])
                S = T.alloc_buffer((4,), "float32")
                for k in range(4):
                    S[k] = A[vr, vi, k] * T.float32(2)
                B[vr, vi] = S[0] + S[1] + S[2] + S[3]
"""
    same_as_interpreter(from_source(src))


ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in T.{kind}(16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
"""


def test_a_parallel_loop_over_a_reduction_is_refused_not_built_into_a_race():
    # TVM builds it, and its threads race on B[vi]; the interpreter sums in order
    racing = from_source(ROW_SUM.replace("{kind}", "parallel"))
    with pytest.raises(BuildError, match=r"^function main: loop k is parallel, but block 'B' binds it into "
                                         r"its reduction variable vk: its iterations would update the "
                                         r"same elements at once"):
        tirfun.build(racing)
    # serial, unrolled or vectorized, the same reduction builds to the interpreter's sums
    for kind in ("serial", "unroll", "vectorized"):
        same_as_interpreter(from_source(ROW_SUM.replace("{kind}", kind)))
    # a parallel loop over the rows builds
    rows = ROW_SUM.replace("for i in range(8)", "for i in T.parallel(8)").replace("{kind}", "serial")
    same_as_interpreter(from_source(rows))


def test_unrolled_loops_are_unrolled():
    A = te.placeholder((16, 4), "float32", name="A")
    B = te.compute((16, 4), lambda i, j: A[i, j] * 3.0, name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    _, j = sch.get_loops(sch.get_block("B"))
    sch.unroll(j)
    rt = same_as_interpreter(sch.mod)
    kinds = [n.kind for n in walk(rt.lowered["main"].body) if isinstance(n, For)]
    assert kinds == [ForKind.SERIAL]


FLOAT_UNARY = ["exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
               "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "atanh",
               "erf", "sigmoid", "fabs", "floor", "ceil", "round", "nearbyint", "trunc"]


@pytest.mark.parametrize("name", FLOAT_UNARY)
@pytest.mark.parametrize("lanes", [1, 4])
def test_math_intrinsics_match_the_interpreter(name, lanes):
    positive = name in ("log", "log2", "log10", "sqrt", "rsqrt")
    A = te.placeholder((8,), "float32", name="A")

    def body(i):
        x = A[i]
        if positive:
            x = tir.abs(x) + 0.5
        return getattr(tir, name)(x)

    B = te.compute((8,), body, name="B")
    mod = IRModule({"main": te.create_prim_func([A, B])})
    if lanes > 1:
        sch = Schedule(mod)
        (i,) = sch.get_loops(sch.get_block("B"))
        _, inner = sch.split(i, [None, lanes])
        sch.vectorize(inner)
        mod = sch.mod
    same_as_interpreter(mod)


@pytest.mark.parametrize("name", ["atan2", "pow", "fmod", "hypot", "copysign", "nextafter"])
def test_binary_math_intrinsics_match_the_interpreter(name):
    A = te.placeholder((8,), "float64", name="A")
    B = te.compute((8,), lambda i: getattr(tir, name)(tir.abs(A[i]) + 0.25, A[(i + 3) % 8]),
                   name="B")
    same_as_interpreter(IRModule({"main": te.create_prim_func([A, B])}))


def test_float_predicates_and_integer_bit_counts():
    src = """
@T.prim_func
def main(A: T.Buffer((6,), "float32"), N: T.Buffer((6,), "int32"), B: T.Buffer((6,), "bool"),
         C: T.Buffer((6,), "bool"), D: T.Buffer((6,), "bool"), E: T.Buffer((6,), "int32"),
         F: T.Buffer((6,), "int32")):
    for i in range(6):
        B[i] = T.isnan(A[i])
        C[i] = T.isinf(A[i])
        D[i] = T.isfinite(A[i])
        E[i] = T.popcount(N[i])
        F[i] = T.clz(N[i])
"""
    rt = tirfun.build(from_source(src))
    a = np.array([0.0, np.nan, np.inf, -np.inf, 1.5, -2.0], np.float32)
    n = np.array([0, 1, 7, -1, 1 << 20, 12345], np.int32)
    outs = [np.zeros(6, bool) for _ in range(3)] + [np.zeros(6, np.int32) for _ in range(2)]
    rt(a, n, *outs)
    np.testing.assert_array_equal(outs[0], np.isnan(a))
    np.testing.assert_array_equal(outs[1], np.isinf(a))
    np.testing.assert_array_equal(outs[2], np.isfinite(a))
    np.testing.assert_array_equal(outs[3], [bin(int(x) & 0xFFFFFFFF).count("1") for x in n])
    np.testing.assert_array_equal(outs[4], [32 - (int(x) & 0xFFFFFFFF).bit_length() for x in n])


def test_integer_division_rounds_as_tir_says_and_never_traps():
    src = """
@T.prim_func
def main(A: T.Buffer((6,), "int32"), B: T.Buffer((6,), "int32"), Q: T.Buffer((6,), "int32"),
         R: T.Buffer((6,), "int32"), TQ: T.Buffer((6,), "int32"), TR: T.Buffer((6,), "int32")):
    for i in range(6):
        Q[i] = A[i] // B[i]
        R[i] = A[i] % B[i]
        TQ[i] = T.truncdiv(A[i], B[i])
        TR[i] = T.truncmod(A[i], B[i])
"""
    rt = tirfun.build(from_source(src))
    a = np.array([7, -7, 7, -7, 5, -2**31], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1], np.int32)
    q, r, tq, tr = (np.full(6, 99, np.int32) for _ in range(4))
    rt(a, b, q, r, tq, tr)
    ok = slice(0, 4)
    np.testing.assert_array_equal(q[ok], a[ok] // b[ok])
    np.testing.assert_array_equal(r[ok], a[ok] % b[ok])
    np.testing.assert_array_equal(tq[ok], np.trunc(a[ok] / b[ok]).astype(np.int32))
    np.testing.assert_array_equal(tr[ok], np.fmod(a[ok], b[ok]))
    # dividing by zero gives 0 and dividing the smallest int by -1 wraps,
    # where hardware division would stop the process
    assert (q[4], r[4], tq[4], tr[4]) == (0, 0, 0, 0)
    assert (q[5], r[5]) == (-2**31, 0)


def test_symbolic_sizes_and_casts_agree_with_the_interpreter():
    n = te.var("n")
    A = te.placeholder((n, 3), "int8", name="A")
    B = te.compute((n, 3), lambda i, j: (A[i, j].astype("float32") * 1.5).astype("int32"), name="B")
    same_as_interpreter(IRModule({"main": te.create_prim_func([A, B])}), trials=4)


def test_large_scratch_buffers_live_on_the_heap():
    src = """
@T.prim_func
def main(A: T.Buffer((40000,), "float32"), B: T.Buffer((40000,), "float32")):
    S = T.alloc_buffer((40000,), "float32")
    for i in range(40000):
        with T.block("S"):
            vi = T.axis.spatial(40000, i)
            S[vi] = A[vi] * T.float32(2)
    for i in range(40000):
        with T.block("B"):
            vi = T.axis.spatial(40000, i)
            B[vi] = S[39999 - vi]
"""
    rt = same_as_interpreter(from_source(src), trials=1)
    assert "@aligned_alloc" in rt.get_source("ll")  # too large for the stack: from the heap


def test_failed_assertion_raises_with_its_message():
    src = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), x: T.int32):
    assert x > 0, "x must be positive"
    A[0] = x
"""
    rt = tirfun.build(from_source(src))
    a = np.zeros(4, np.int32)
    rt(a, 3)
    assert a[0] == 3
    with pytest.raises(TirfunError, match="assertion failed: x must be positive"):
        rt(a, -1)


def test_call_extern_reaches_the_c_library():
    A = te.placeholder((4,), "float32", name="A")
    B = te.compute((4,), lambda i: tir.call_extern("float32", "expf", A[i]), name="B")
    rt = tirfun.build(te.create_prim_func([A, B]))
    a = np.linspace(-1, 1, 4).astype(np.float32)
    b = np.zeros(4, np.float32)
    rt(a, b)
    np.testing.assert_array_equal(b, libm(math.exp, a))


def test_several_functions_are_called_by_name():
    src = """
@I.ir_module
class Two:
    @T.prim_func
    def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] * T.float32(2)

    @T.prim_func
    def negate(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = T.float32(0) - A[i]
"""
    rt = tirfun.build(from_source(src))
    a = np.arange(4, dtype=np.float32)
    b = np.zeros(4, np.float32)
    rt["double"](a, b)
    np.testing.assert_array_equal(b, a * 2)
    rt.get_function("negate")(a, b)
    np.testing.assert_array_equal(b, -a)
    assert rt.function_names == ["double", "negate"]
    with pytest.raises(UnknownNameError, match="no main function"):
        rt(a, b)
    with pytest.raises(UnknownNameError, match="no function 'triple'"):
        rt["triple"]


def test_noalias_follows_the_function_attribute():
    mod = from_source(TUTORIAL)
    assert "noalias" in tirfun.build(mod).get_source("ll")
    plain = mod["main"].without_attr("tir.noalias")
    assert "noalias" not in tirfun.build(plain).get_source("ll")


def test_builds_are_cached_by_module_and_target():
    mod = from_source(TUTORIAL)
    first = tirfun.build(mod)
    assert tirfun.build(from_source(TUTORIAL)) is first
    assert tirfun.build(mod, target=Target("llvm")) is first
    clear_cache()
    assert tirfun.build(mod) is not first


def test_sources():
    rt = tirfun.build(from_source(TUTORIAL))
    assert "define" in rt.get_source("ll") and "tirfun_main" in rt.get_source("ll")
    assert "tirfun_main:" in rt.get_source("asm")
    with pytest.raises(tirfun.ArgumentError, match="unknown format 'ptx'"):
        rt.get_source("ptx")


def test_default_target_is_the_host_cpu():
    triple, cpu, features = host_description()
    t = Target("llvm")
    assert (t.triple, t.cpu, t.features) == (triple, cpu, features)
    assert str(t).startswith(f"llvm -mtriple={triple} -mcpu={cpu}")
    generic = Target("llvm -mcpu=x86-64")
    assert (generic.cpu, generic.features) == ("x86-64", "")
    assert Target(str(t)) == t


def test_float_contraction_is_opt_in():
    mod = tiled_matmul(n=32, tile=8, kf=2)
    exact = tirfun.build(mod)
    assert "contract" not in exact.get_source("ll")
    fused = tirfun.build(mod, target="llvm -fast-math-contract")
    assert Target("llvm -fast-math-contract").contract
    assert "fast-math-contract" in str(fused.target)
    if "+fma" in host_description()[2].split(","):
        assert re.search(r"\bvfmadd\w*ps\b", fused.get_source("asm"))
        assert not re.search(r"\bvfmadd\w*ps\b", exact.get_source("asm"))
    rng = np.random.default_rng(0)
    a, b = rng.random((32, 32), dtype=np.float32), rng.random((32, 32), dtype=np.float32)
    c = np.zeros((32, 32), np.float32)
    plain = np.zeros((32, 32), np.float32)
    exact(a, b, plain)
    np.testing.assert_array_equal(plain, ordered_matmul(a, b))
    fused(a, b, c)
    # a fused multiply-add rounds once where the exact build rounds twice, so
    # the opt-in contracted build may differ in the last bits (at most one
    # ulp per term of the 32-term sum of values in [0, 1))
    assert np.all(np.abs(c - plain) <= 32 * np.spacing(plain))


def test_generic_cpu_target_still_computes_the_same():
    mod = add_one(parallel=False)
    rt = tirfun.build(mod, target="llvm -mcpu=x86-64")
    a = np.arange(1024, dtype=np.float32)
    b = np.zeros(1024, np.float32)
    rt(a, b)
    np.testing.assert_array_equal(b, a + np.float32(1))


@pytest.mark.parametrize("text, message", [
    ("", "empty target string"),
    ("llvm -mcpu", "is not of the form -key=value"),
    ("llvm -frobnicate=1", "unknown option -frobnicate"),
    ("llvm -fast-math-contract=maybe", "-fast-math-contract takes no value, or 1/0"),
    ("opencl", "unknown target kind 'opencl'"),
])
def test_bad_targets(text, message):
    with pytest.raises(BuildError, match=message):
        Target(text)


def test_targets_this_machine_cannot_run():
    mod = from_source(TUTORIAL)
    # an unbound program has no kernel: the GPU build says what to bind
    with pytest.raises(BuildError, match="block B writes memory outside any kernel"):
        tirfun.build(mod, target="cuda")
    with pytest.raises(BuildError, match="cannot run code for aarch64"):
        tirfun.build(mod, target="llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=generic")


def test_unlowerable_input_is_a_build_error():
    with pytest.raises(BuildError, match="expected an IRModule or a PrimFunc"):
        tirfun.build(42)
    with pytest.raises(BuildError, match="no function to build"):
        tirfun.build(IRModule({}))


def test_a_shift_or_bitwise_call_of_two_widths_is_a_build_error():
    # TVM's codegen aborts on such a call; its T helpers cast an operand first
    from tirfun.errors import BuildError
    from tirfun.script import from_source

    for op in ("shift_right", "bitwise_and"):
        func = from_source(f'''
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), n: T.int64):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.Call("int32", "tir.{op}", [A[vi], n])
''')
        with pytest.raises(BuildError, match=rf"T.{op} of int32 and int64: both operands must have one dtype"):
            tirfun.build(func)
