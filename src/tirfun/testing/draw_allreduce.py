"""Reductions bound across threads, as TVM users schedule them.

A :class:`ThreadReduction` describes a row reduction ``O[i] = reduce_k
A[i, k]`` (a sum, an integer product, max, min, or an argmax whose ties go
to the smaller index) whose reduction loop is split and one part bound to a
thread dimension: ``inner`` binds the inner part (``k = ko * threads + tx``, the outer part a
serial loop in each thread), otherwise the outer part (``k = tx * f + ki``).
The rows go to ``blockIdx.x``, split with their inner part bound to the
other thread dimension when ``row_threads > 1`` (several reductions per
thread block). ``reduce_on`` is the dimension the reduction is bound to
(``"x"``: consecutive lanes; ``"y"``: lanes ``row_threads`` apart).
With ``local``, the reduction goes to a ``local`` buffer (one per thread)
and a block after it in each row copies that to the output: TVM's
all-reduce leaves the whole result in every thread's copy, so every
thread of the reduction stores the same value.

``thread_reductions()`` draws them (``random_thread_reduction`` from any
:class:`~tirfun.testing._choices.Chooser`); :func:`thread_reduction_module`
builds the scheduled module and :func:`expected_result` computes, with
numpy, what the lowered program must give: for float sums the all-reduce's
order of :mod:`tirfun.lower.allreduce` (bit for bit), otherwise the serial
result, which any order gives.
"""

from __future__ import annotations

import attrs
import numpy as np

from ..nodes import IRModule
from ._choices import Chooser, DrawChooser

#: the reducers drawn
REDUCERS = ("sum", "product", "max", "min", "argmax")
#: the dtypes drawn for each reducer
DTYPES = {"sum": ("int32", "float32", "int64", "float64"), "product": ("int32", "int64"),
          "max": ("int32", "float32"),
          "min": ("int32", "float64"), "argmax": ("int32", "float32")}
#: thread extents drawn: warps, parts of warps, several warps, none a
#: multiple of 32 or a power of two among them
THREADS = (2, 3, 7, 8, 16, 24, 25, 32, 33, 48, 64, 96, 100, 128)

_HEADER = '''from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer(({rows}, {length}), "{dtype}"), {outputs}):
    for i, k in T.grid({rows}, {length}):
        with T.block("O"):
            vi, vk = T.axis.remap("SR", [i, k])
'''

_BODIES = {
    "sum": ('O: T.Buffer(({rows},), "{dtype}")',
            "            with T.init():\n                O[vi] = T.{dtype}(0)\n"
            "            O[vi] = O[vi] + A[vi, vk]\n"),
    "product": ('O: T.Buffer(({rows},), "{dtype}")',
                "            with T.init():\n                O[vi] = T.{dtype}(1)\n"
                "            O[vi] = O[vi] * A[vi, vk]\n"),
    "max": ('O: T.Buffer(({rows},), "{dtype}")',
            "            with T.init():\n                O[vi] = T.min_value(\"{dtype}\")\n"
            "            O[vi] = T.max(O[vi], A[vi, vk])\n"),
    "min": ('O: T.Buffer(({rows},), "{dtype}")',
            "            with T.init():\n                O[vi] = T.max_value(\"{dtype}\")\n"
            "            O[vi] = T.min(O[vi], A[vi, vk])\n"),
    "argmax": ('Oi: T.Buffer(({rows},), "int32"), Ov: T.Buffer(({rows},), "{dtype}")',
               "            with T.init():\n                Oi[vi] = -1\n"
               "                Ov[vi] = T.min_value(\"{dtype}\")\n"
               "            v_Oi: T.int32 = T.Select(Ov[vi] > A[vi, vk] or (Ov[vi] == A[vi, vk] "
               "and Oi[vi] < vk), Oi[vi], vk)\n"
               "            v_Ov: T.{dtype} = T.Select(Ov[vi] > A[vi, vk], Ov[vi], A[vi, vk])\n"
               "            Oi[vi] = v_Oi\n            Ov[vi] = v_Ov\n"),
}


@attrs.frozen
class ThreadReduction:
    """One row reduction bound across threads (see the module)."""

    reducer: str
    dtype: str
    rows: int
    length: int
    threads: int
    inner: bool = True
    row_threads: int = 1
    reduce_on: str = "x"
    local: bool = False

    def source(self) -> str:
        """The program before scheduling, as TVMScript."""
        outputs, body = _BODIES[self.reducer]
        fields = {"rows": self.rows, "length": self.length, "dtype": self.dtype}
        text = (_HEADER.format(outputs=outputs.format(**fields), **fields)
                + body.format(**fields))
        if not self.local:
            return text
        names = ("Oi", "Ov") if self.reducer == "argmax" else ("O",)
        dtypes = ("int32", self.dtype) if self.reducer == "argmax" else (self.dtype,)
        head, grid = text.split("    for i, k in T.grid", 1)
        # the reduction one level deeper, under loops i and k, then the copy under loop i
        block = "".join("    " + line + "\n" for line in grid.splitlines()[1:])
        for name in names:
            block = block.replace(f"{name}[", f"{name}_local[")
        allocs = "".join(f'    {n}_local = T.alloc_buffer(({self.rows},), "{d}", scope="local")\n'
                         for n, d in zip(names, dtypes))
        copies = "".join(f'        with T.block("{n}_copy"):\n'
                         f"            vi = T.axis.spatial({self.rows}, i)\n"
                         f"            {n}[vi] = {n}_local[vi]\n" for n in names)
        return (head + allocs + f"    for i in range({self.rows}):\n"
                f"        for k in range({self.length}):\n" + block + copies)


def thread_reduction_module(spec: ThreadReduction) -> IRModule:
    """The scheduled module of ``spec``: split, bound as a TVM user does."""
    from ..schedule import Schedule
    from ..script import from_source

    sch = Schedule(from_source(spec.source()))
    block = sch.get_block("O")
    i, k = sch.get_loops(block)
    other = "y" if spec.reduce_on == "x" else "x"
    if spec.row_threads > 1:
        io, ii = sch.split(i, factors=[None, spec.row_threads])
        sch.bind(io, "blockIdx.x")
        sch.bind(ii, f"threadIdx.{other}")
    else:
        sch.bind(i, "blockIdx.x")
    if spec.inner:
        _, kt = sch.split(k, factors=[None, spec.threads])
    else:
        kt, _ = sch.split(k, factors=[spec.threads, None])
    sch.bind(kt, f"threadIdx.{spec.reduce_on}")
    return sch.mod


def _partials_order(spec: ThreadReduction) -> list[list[int]]:
    """The reduction indices each thread folds, in its loop order."""
    t = spec.threads
    if spec.inner:
        outer = -(-spec.length // t)
        return [[ko * t + r for ko in range(outer) if ko * t + r < spec.length] for r in range(t)]
    f = -(-spec.length // t)
    return [[r * f + ki for ki in range(f) if r * f + ki < spec.length] for r in range(t)]


def expected_result(spec: ThreadReduction, a: np.ndarray) -> list[np.ndarray]:
    """The outputs the lowered program computes from ``a`` (see the module)."""
    from ..lower.allreduce import allreduce_order

    dt = np.dtype(spec.dtype)
    if spec.reducer == "argmax":
        return [np.argmax(a, axis=1).astype("int32"), np.max(a, axis=1)]
    if spec.reducer in ("max", "min"):
        return [getattr(np, spec.reducer)(a, axis=1)]
    if spec.reducer == "product":
        return [a.prod(axis=1, dtype=dt)]
    if dt.kind != "f":
        return [a.sum(axis=1, dtype=dt)]
    order = _partials_order(spec)
    out = np.zeros(spec.rows, dt)
    for row in range(spec.rows):
        partials = []
        for ks in order:
            p = dt.type(0)
            for k in ks:
                p = dt.type(p + a[row, k])
            partials.append(p)
        out[row] = allreduce_order(partials, lambda x, y: dt.type(x + y))
    return [out]


def inputs(spec: ThreadReduction, seed: int) -> list[np.ndarray]:
    """Random arguments of the program: small integers (ties likely for
    max and argmax), or floats of mixed magnitude (sums that round)."""
    rng = np.random.default_rng(seed)
    if np.dtype(spec.dtype).kind == "f":
        a = (rng.standard_normal((spec.rows, spec.length))
             * 10.0 ** rng.integers(-3, 4, (spec.rows, spec.length))).astype(spec.dtype)
    else:
        a = rng.integers(-50, 50, (spec.rows, spec.length)).astype(spec.dtype)
    outs = ([np.zeros(spec.rows, "int32"), np.zeros(spec.rows, spec.dtype)]
            if spec.reducer == "argmax" else [np.zeros(spec.rows, spec.dtype)])
    return [a] + outs


def random_thread_reduction(ch: Chooser) -> ThreadReduction:
    """A random :class:`ThreadReduction` of at most 1024 threads per block."""
    reducer = ch.choice(REDUCERS)
    dtype = ch.choice(DTYPES[reducer])
    threads = ch.choice(THREADS)
    row_threads = ch.choice((1, 1, 2, 3, 4))
    rows = ch.integer(1, 5)
    inner = ch.choice((True, False))
    # binding the outer part leaves an inner loop of extent 1 when the length
    # is at most the threads, and bind reads ``k_0 * 1 + k_1`` as not affine
    length = ch.integer(1 if inner else threads + 1, 3 * threads + 5)
    return ThreadReduction(reducer, dtype, rows, length, threads, inner, row_threads,
                           ch.choice(("x", "x", "y")), ch.choice((False, False, True)))


def thread_reductions():
    """A hypothesis strategy of :func:`random_thread_reduction` values."""
    from hypothesis import strategies as st  # hypothesis is a test dependency only

    @st.composite
    def build(draw):
        return random_thread_reduction(DrawChooser(draw))

    return build()


__all__ = ["ThreadReduction", "thread_reduction_module", "expected_result", "inputs",
           "random_thread_reduction", "thread_reductions", "REDUCERS", "THREADS"]
