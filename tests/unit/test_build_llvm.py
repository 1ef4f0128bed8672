"""The LLVM side of the CPU build: a loop LLVM's own loop vectorizer
miscompiled, target options, builds from several threads, and built
modules called in a forked child."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import subprocess
import sys
import textwrap
import threading
import traceback
from pathlib import Path

import numpy as np
import pytest

import tirfun
from tirfun.errors import BuildError
from tirfun.interp import run as interp_run
from tirfun.runtime import Target
from tirfun.script import from_source

FUSED_REDUCTION = '''@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), O: T.Buffer((16, 4), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k, j in T.grid(16, 13, 4):
        with T.block("O"):
            vi, vk, vj = T.axis.remap("SRS", [i, k, j])
            with T.init():
                O[vi, vj] = T.float32(0)
            O[vi, vj] = O[vi, vj] + A[vi, vj]'''


def test_fused_reduction_with_modulo_index_is_exact_and_stays_in_bounds():
    # a reduction fused with a spatial loop: O[i, f % 4] += A[i, f % 4] over
    # f in range(52); LLVM's loop vectorizer widened it as consecutive,
    # giving 4.0 and writing past O
    sch = tirfun.Schedule(from_source(FUSED_REDUCTION))
    _, k, j = sch.get_loops(sch.get_block("O"))
    sch.fuse(k, j)
    canary = np.float32(-3.25)
    raw = np.full(64 + 64, canary, "float32")
    out = raw[:64].reshape(16, 4)
    tirfun.build(sch.mod, target="llvm")(np.ones((16, 8), "float32"), out)
    np.testing.assert_array_equal(out, np.full((16, 4), 13.0, "float32"))
    assert (raw[64:] == canary).all(), "the kernel wrote past O"
    expected = np.zeros((16, 4), "float32")
    interp_run(sch.mod["main"], np.ones((16, 8), "float32"), expected)
    np.testing.assert_array_equal(out, expected)


def _many_nests(n: int) -> str:
    """``n`` small loop nests of several kinds in one function: plain,
    reading a scratch buffer filled outside the nest, with a parallel inner
    loop, and a reduction."""
    lines = ["@T.prim_func",
             f"def main(A: T.Buffer((16,), 'float32'), B: T.Buffer(({n}, 16), 'float32'), x: T.int32):",
             "    T.func_attr({'tir.noalias': True})",
             "    S = T.alloc_buffer((16,), 'float32')",
             "    for i in range(16):",
             "        with T.block('fill'):",
             "            v = T.axis.spatial(16, i)",
             "            S[v] = A[v] * T.float32(2)"]
    for k in range(n):
        kind = k % 4
        if kind == 0:
            lines += ["    for i in range(16):", f"        with T.block('b{k}'):",
                      "            v = T.axis.spatial(16, i)",
                      f"            B[{k}, v] = B[{k}, v] + A[v] * T.float32({k + 1})"]
        elif kind == 1:
            lines += ["    for i in range(16):", f"        with T.block('b{k}'):",
                      "            v = T.axis.spatial(16, i)",
                      f"            B[{k}, v] = S[v] + T.Cast('float32', x)"]
        elif kind == 2:
            lines += ["    for i0 in range(4):", "        for i1 in T.parallel(4):",
                      f"            with T.block('b{k}'):",
                      "                v = T.axis.spatial(16, i0 * 4 + i1)",
                      f"                B[{k}, v] = A[v] - T.float32({k})"]
        else:
            lines += ["    for i, r in T.grid(16, 5):", f"        with T.block('b{k}'):",
                      "            v, vr = T.axis.remap('SR', [i, r])",
                      f"            with T.init():", f"                B[{k}, v] = T.float32(0)",
                      f"            B[{k}, v] = B[{k}, v] + A[(v + vr) % 16]"]
    return "\n".join(lines)


def test_functions_with_many_loop_nests_are_outlined_and_agree_with_the_interpreter():
    from tirfun.lower.llvm_cpu import OUTLINE_LOOPS

    n = OUTLINE_LOOPS + 6
    mod = from_source(_many_nests(n))
    rt = tirfun.build(mod)
    assert "_nest_" in rt.get_source("ll")  # each nest is a function of its own
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, 16).astype("float32")
    b = rng.uniform(-1, 1, (n, 16)).astype("float32")
    expected = b.copy()
    interp_run(mod, a.copy(), expected, 3)
    rt(a, b, 3)
    assert b.tobytes() == expected.tobytes()
    small = from_source(_many_nests(4))
    assert "_nest_" not in tirfun.build(small).get_source("ll")


def test_a_failed_assertion_inside_an_outlined_nest_is_reported():
    from tirfun.lower.llvm_cpu import OUTLINE_LOOPS

    n = OUTLINE_LOOPS + 2
    lines = ["@T.prim_func",
             f"def main(A: T.Buffer(({n}, 4), 'int32'), x: T.int32):"]
    for k in range(n):
        lines += [f"    for i in range(4):",
                  f"        assert x != {k}, 'x hit nest {k}'",
                  f"        A[{k}, i] = x + i"]
    rt = tirfun.build(from_source("\n".join(lines)))
    assert "_nest_" in rt.get_source("ll")
    a = np.zeros((n, 4), "int32")
    rt(a, -1)
    np.testing.assert_array_equal(a, np.arange(4)[None, :] - 1 + np.zeros((n, 1), "int32"))
    with pytest.raises(tirfun.errors.TirfunError, match=f"x hit nest {n - 3}"):
        rt(a, n - 3)
    assert (a[n - 3:] == np.arange(4)[None, :] - 1).all()  # nothing ran after the failure
    assert (a[:n - 3] == np.arange(4)[None, :] + n - 3).all()


# -- target options --------------------------------------------------------------------

def _scaled(k: int) -> str:
    """``B = A * k + 3k`` with a parallel outer loop of 8 and a vectorized
    inner one."""
    return f'''@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i0 in T.parallel(8):
        for i1 in T.vectorized(8):
            with T.block("b"):
                v = T.axis.spatial(64, i0 * 8 + i1)
                B[v] = A[v] * T.float32({k}) + T.float32({3 * k})'''


def _check_scaled(rt, k: int) -> None:
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    rt(a, b)
    np.testing.assert_array_equal(b, a * np.float32(k) + np.float32(3 * k))


def test_opt_level_is_honoured():
    mod = from_source(FUSED_REDUCTION)
    ir = {}
    for level in (0, 1, 2, 3):
        target = Target(f"llvm -opt-level={level}")
        assert target.opt_level == level and Target(str(target)) == target
        rt = tirfun.build(mod, target=target)
        out = np.zeros((16, 4), "float32")
        rt(np.ones((16, 8), "float32"), out)
        np.testing.assert_array_equal(out, np.full((16, 4), 13.0, "float32"))
        ir[level] = rt.get_source("ll")
    assert Target("llvm").opt_level == 3 and "-opt-level" not in str(Target("llvm"))
    assert "add nsw i32 0, 16" in ir[0]  # unoptimised: the constant is not even folded
    assert "add nsw i32 0, 16" not in ir[1]
    # O2 and up unroll loops: fewer branches and phis than at O1
    assert ir[3].count("br ") < ir[1].count("br ") and ir[3].count("phi ") < ir[1].count("phi ")


def test_num_cores_sets_the_threads_of_parallel_loops():
    mod = from_source(_scaled(2))
    three = tirfun.build(mod, target="llvm -num-cores=3")
    assert Target("llvm -num-cores=3").num_cores == 3 and "-num-cores=3" in str(three.target)
    assert re.search(r"call void @GOMP_parallel\(.*, i32 3, i32 0\)", three.get_source("ll"))
    _check_scaled(three, 2)
    one = tirfun.build(mod, target="llvm -num-cores=1")
    assert "GOMP_parallel" not in one.get_source("ll")  # one thread: serial loops
    _check_scaled(one, 2)


@pytest.mark.parametrize("option", ["-keys=cpu", "-tag=mine", "-mabi=lp64", "-system-lib=1",
                                    "-arch=sm_80", "-max_num_threads=8", "-fast-math=1"])
def test_options_the_llvm_target_does_not_honour_are_refused(option):
    with pytest.raises(BuildError, match=rf"unknown option {option.split('=')[0]}:.*honours "
                                         r"-mtriple, -mcpu, -mattr, -opt-level, -num-cores"):
        Target(f"llvm {option}")


@pytest.mark.parametrize("text, message", [
    ("llvm -opt-level=4", r"-opt-level is LLVM's optimisation level, 0, 1, 2 or 3; got '4'"),
    ("llvm -opt-level=fast", r"-opt-level .* got 'fast'"),
    ("llvm -num-cores=0", r"-num-cores is the number of threads .* got '0'"),
    ("llvm -num-cores=two", r"-num-cores .* got 'two'"),
])
def test_bad_option_values_are_refused(text, message):
    with pytest.raises(BuildError, match=message):
        Target(text)


def test_unknown_cpu_or_feature_is_refused_at_build():
    mod = from_source(_scaled(1))
    with pytest.raises(BuildError, match=r"does not know the processor 'no-such-cpu' \(-mcpu\)"):
        tirfun.build(mod, target="llvm -mcpu=no-such-cpu")
    with pytest.raises(BuildError, match=r"does not know the feature '\+no-such' \(-mattr\)"):
        tirfun.build(mod, target="llvm -mcpu=x86-64 -mattr=+sse2,+no-such")
    _check_scaled(tirfun.build(mod, target="llvm -mcpu=x86-64 -mattr=+sse2"), 1)


# -- threads and fork ---------------------------------------------------------------------

def test_builds_from_several_threads_are_safe():
    errors = []

    def work(t):
        try:
            for r in range(3):
                k = 10 * t + r + 1
                rt = tirfun.build(from_source(_scaled(k)))
                assert "tirfun_main" in rt.get_source("asm")
                _check_scaled(rt, k)
        except BaseException as err:  # reported below, with the thread and the traceback
            errors.append(f"thread {t}: " + "".join(traceback.format_exception(err)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    assert not any(th.is_alive() for th in threads), "a build never finished"
    assert not errors, "\n".join(errors)


def _call_scaled(k: int) -> bool:
    """In a pool worker: build (or reuse) and run ``_scaled(k)``."""
    rt = tirfun.build(from_source(_scaled(k)))
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    rt(a, b)
    return bool(np.array_equal(b, a * np.float32(k) + np.float32(3 * k)))


def test_a_forked_child_runs_parallel_kernels_after_the_parent_did():
    from tirfun.runtime.forking import runs_parallel_loops_serially

    assert _call_scaled(2)  # the parent starts libgomp's pool
    assert not runs_parallel_loops_serially()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        # the cached module of k=2 and fresh builds; a hang fails the test
        results = pool.map_async(_call_scaled, [2, 5, 2, 7]).get(timeout=120)
        serial = pool.apply_async(runs_parallel_loops_serially).get(timeout=60)
    assert results == [True] * 4
    assert serial


def test_a_child_forked_before_any_parallel_kernel_keeps_the_pool():
    code = textwrap.dedent(f"""
        import multiprocessing, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_build_llvm import _call_scaled
        from tirfun.runtime.forking import runs_parallel_loops_serially

        def child(_):
            return _call_scaled(3), runs_parallel_loops_serially()

        if __name__ == "__main__":
            with multiprocessing.get_context("fork").Pool(1) as pool:
                print(pool.map_async(child, [0]).get(timeout=120))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[(True, False)]"


def _llvm_gives_up(ir_text, target):
    # what LLVM does with IR its code generator cannot handle: print, abort
    os.write(2, b"SelectionDAG.cpp: Assertion `VT == N1.getValueType()' failed.\n")
    os.abort()


def test_an_abort_inside_llvm_during_a_cpu_build_is_a_build_error_and_the_process_lives_on(
        monkeypatch):
    # LLVM ends the process it runs in on an assertion: the CPU build runs
    # LLVM's optimiser and code generator in the LLVM worker process, so
    # such a failure is a BuildError quoting LLVM, and later builds work
    from tirfun.runtime import jit

    src = FUSED_REDUCTION.replace("T.float32(0)", "T.float32(0.5)")
    tirfun.runtime.clear_cache()
    monkeypatch.setattr(jit, "_compile_here", _llvm_gives_up)
    with pytest.raises(BuildError, match=r"compiling with LLVM failed inside LLVM \(LLVM ended "
                                         r"with SIGABRT\).*Assertion `VT == N1"):
        tirfun.build(from_source(src))
    monkeypatch.undo()
    out = np.zeros((16, 4), "float32")
    tirfun.build(from_source(src))(np.ones((16, 8), "float32"), out)
    np.testing.assert_array_equal(out, np.full((16, 4), 13.5, "float32"))


def test_the_object_code_is_made_in_the_worker_and_loaded_here():
    from tirfun.runtime import jit
    from tirfun.runtime.isolate import in_worker

    compiled = jit.compile_module("define i32 @f(i32 %x) {\n  %y = add i32 %x, 41\n  ret i32 %y\n}\n",
                                  Target("llvm"))
    assert "add i32 %x, 41" in compiled.ir_text and compiled.obj[:4] == b"\x7fELF"
    code = jit.load(compiled, Target("llvm"))
    assert ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(code.address("f"))(1) == 42
    assert in_worker("asking", os.getpid) != os.getpid()


def test_the_build_reports_its_phases_and_the_worker_s_processor_time():
    tirfun.runtime.clear_cache()
    rt = tirfun.build(from_source(FUSED_REDUCTION.replace("T.float32(0)", "T.float32(0.25)")))
    seconds = rt.build_seconds
    assert set(seconds) == {"lower", "codegen", "optimise", "jit", "llvm_cpu"}
    assert all(v >= 0 for v in seconds.values())
    assert seconds["llvm_cpu"] > 0  # LLVM ran, in the worker
