"""Strategies for ``blockize`` where TVM's iterator maps read more than a
plain mixed radix of loops from 0.

:func:`draw_blockize_case` draws a :class:`BlockizeCase`: one block (an
elementwise map or a sum with an init) of a random dtype, scheduled by
splits and fuses TVM makes, then blockized at a random loop. Its
``kind`` names what the division must read:

* ``"bounded"``: a split whose factors pass the extent, whose predicate
  bounds a fused part of the loops (``j_1_0 + j_1_1 < 4`` over
  ``range(8) x range(1)``): TVM reads the part as a loop of 4;
* ``"conditions"``: two such splits, so that the predicate's conditions
  read the loops on both sides of the cut, each one side only;
* ``"start"``: loops over ranges that do not start at 0
  (``T.serial(3, 8)``), whose variables keep their domain's start;
* ``"offset"``: a binding ``i_0 * 4 + i_1 + c`` with a constant offset;
* ``"padded"``: a sum over a loop padded past a run-time length ``K`` and
  guarded by ``k < K``, as ``pad_einsum`` leaves it, where the lifted init
  runs only where the reduction has a first step;
* ``"digits"``: a fuse of a constant split with a loop of run-time extent
  (``f // n`` of ``f`` in ``range(n * 4)``).

Every case is one TVM accepts (it divides each binding as here); tirfun
must keep the meaning, or refuse with a ScheduleError where it cannot
prove it.
"""

from __future__ import annotations

import attrs

from .. import rewrites as R
from ..nodes import IRModule
from ._choices import Chooser

#: the dtypes drawn
BLOCKIZE_DTYPES = ("float32", "int32", "float64", "int8", "float16")

#: the kinds of division drawn
BLOCKIZE_KINDS = ("bounded", "conditions", "start", "offset", "padded", "digits")


@attrs.frozen
class BlockizeCase:
    """A program (``source``), the schedule before the blockize
    (``steps``), the loop blockized (``loop``; None: the innermost loop
    over the block after the steps, found then), the run-time sizes the
    program reads (``sizes``), and what the division must read
    (``kind``, see the module)."""

    kind: str
    dtype: str
    source: str
    steps: tuple
    loop: str | None
    sizes: tuple = ()

    def program(self) -> IRModule:
        """The program before the schedule."""
        from ..script import from_source

        return IRModule({"main": from_source(self.source)})

    def scheduled(self) -> IRModule:
        """The program after the steps, before the blockize."""
        mod = self.program()
        for step in self.steps:
            mod = step(mod)
        return mod

    def blockize(self) -> R.Blockize:
        """The blockize record of the case."""
        return R.blockize(self.loop, True)

    def size_map(self) -> dict:
        """The run-time sizes, by name."""
        return dict(self.sizes)


def _zero(dtype: str) -> str:
    return f"T.{dtype}(0)"


def _sum_source(dtype: str, rows: int, cols: int, row_range: str, col_range: str, kinds: str,
                shape_rows: int | None = None) -> str:
    """``B[row] = sum over the columns of A[row, col]`` (kinds "SR") or the
    elementwise ``B[row, col] = A[row, col] + A[row, col]`` (kinds "SS")."""
    shape_rows = shape_rows or rows
    col_dim = str(cols)
    row_index = "vi"
    if kinds == "SR":
        out_shape, out, init = f"({shape_rows},)", f"B[{row_index}]", True
    else:
        out_shape, out, init = f"({shape_rows}, {col_dim})", f"B[{row_index}, vj]", False
    lines = [
        "@T.prim_func",
        f"def main(A: T.Buffer(({shape_rows}, {col_dim}), \"{dtype}\"), B: T.Buffer({out_shape}, \"{dtype}\")):",
        f"    for i in {row_range}:",
        f"        for j in {col_range}:",
        "            with T.block(\"B\"):",
        f"                vi, vj = T.axis.remap(\"{kinds}\", [i, j])",
    ]
    value = f"A[{row_index}, vj]"
    if init:
        lines += ["                with T.init():", f"                    {out} = {_zero(dtype)}",
                  f"                {out} = {out} + {value}"]
    else:
        lines.append(f"                {out} = {value} + {value}")
    return "\n".join(lines) + "\n"


def draw_blockize_case(ch: Chooser) -> BlockizeCase:
    """A random :class:`BlockizeCase` (see the module for the kinds)."""
    kind = ch.choice(BLOCKIZE_KINDS)
    dtype = ch.choice(BLOCKIZE_DTYPES)
    kinds = ch.choice(("SR", "SS"))
    rows, cols = ch.integer(1, 6), ch.integer(1, 6)
    if kind == "bounded":
        # split(j, [None, t]) then split(j_1, [f, None]) with f past t: the
        # predicate j_1_0 + j_1_1 < t bounds the fused part
        t = ch.integer(2, 4)
        cols = t * ch.integer(1, 3)
        f = ch.integer(t + 1, t + 4)
        source = _sum_source(dtype, rows, cols, f"range({rows})", f"range({cols})", kinds)
        steps = (R.split("j", [None, t]), R.split("j_1", [f, None]))
        loop = ch.choice(("j_1_0", "j_0", "i", "j_1_1"))
        return BlockizeCase(kind, dtype, source, steps, loop)
    if kind == "conditions":
        # both loops split by factors that do not divide them; cut between
        si, sj = ch.integer(2, 4), ch.integer(2, 4)
        rows, cols = si * ch.integer(1, 2) + ch.integer(1, si - 1), sj * ch.integer(1, 2) + ch.integer(1, sj - 1)
        source = _sum_source(dtype, rows, cols, f"range({rows})", f"range({cols})", kinds)
        steps = (R.split("i", [None, si]), R.split("j", [None, sj]))
        loop = ch.choice(("j_0", "i_1"))
        if loop == "i_1":
            steps = steps + (R.reorder("i_1", "j_0"),)
            loop = "j_0"
        return BlockizeCase(kind, dtype, source, steps, loop)
    if kind == "start":
        a, b = ch.integer(0, 3), ch.integer(0, 3)
        rows, cols = ch.integer(1, 4), ch.integer(1, 4)
        source = _sum_source(dtype, a + rows, b + cols, f"T.serial({a}, {a + rows})",
                             f"T.serial({b}, {b + cols})", kinds)
        return BlockizeCase(kind, dtype, source, (), ch.choice(("i", "j")))
    if kind == "offset":
        off, t = ch.integer(1, 5), ch.integer(2, 3)
        rows = t * ch.integer(1, 3)
        source = _sum_source(dtype, rows, cols, f"range({rows})", f"range({cols})", kinds,
                             shape_rows=rows + off).replace(
            f"vi, vj = T.axis.remap(\"{kinds}\", [i, j])",
            f"vi = T.axis.spatial({rows + off}, i + {off})\n"
            f"                vj = T.axis.{'reduce' if kinds == 'SR' else 'spatial'}({cols}, j)")
        return BlockizeCase(kind, dtype, source, (R.split("i", [None, t]),), ch.choice(("i_1", "j")))
    if kind == "padded":
        # pad_einsum's form of a sum over a run-time length K
        pad, k_size = ch.integer(2, 4), ch.integer(0, 6)
        return BlockizeCase(kind, dtype, _padded_source(dtype, rows, pad), (), ch.choice(("j", "i")),
                            (("K", k_size),))
    # digits: split(i, [None, 4]) and fuse(i_1, j) over j < n
    t = ch.integer(2, 4)
    n_size = ch.integer(0, 4)
    source = _digits_source(dtype, rows, kinds)
    steps = (R.split("i", [None, t]), R.fuse("i_1", "j"))
    return BlockizeCase(kind, dtype, source, steps, ch.choice(("i_0", "i_1_j_fused")), (("n", n_size),))


def _padded_source(dtype: str, rows: int, pad: int) -> str:
    return f"""
@T.prim_func
def main(a: T.handle, b: T.handle):
    K = T.int32()
    A = T.match_buffer(a, ({rows}, K), "{dtype}")
    B = T.match_buffer(b, ({rows},), "{dtype}")
    for i, j in T.grid({rows}, (K + {pad - 1}) // {pad} * {pad}):
        with T.block("B"):
            vi = T.axis.spatial({rows}, i)
            vj = T.axis.reduce((K + {pad - 1}) // {pad} * {pad}, j)
            T.where(j < K)
            with T.init():
                B[vi] = {_zero(dtype)}
            B[vi] = B[vi] + A[vi, vj]
"""


def _digits_source(dtype: str, rows: int, kinds: str) -> str:
    out, init = ("B[vi]", True) if kinds == "SR" else ("B[vi, vj]", False)
    shape = f"({rows},)" if init else f"({rows}, n)"
    body = (f"            with T.init():\n                {out} = {_zero(dtype)}\n"
            f"            {out} = {out} + A[vi, vj]" if init else f"            {out} = A[vi, vj] + A[vi, vj]")
    return f"""
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, ({rows}, n), "{dtype}")
    B = T.match_buffer(b, {shape}, "{dtype}")
    for i, j in T.grid({rows}, n):
        with T.block("B"):
            vi, vj = T.axis.remap("{kinds}", [i, j])
{body}
"""


__all__ = ["BlockizeCase", "draw_blockize_case", "BLOCKIZE_DTYPES", "BLOCKIZE_KINDS"]
