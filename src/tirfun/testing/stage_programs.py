"""Random multi-stage programs: the shapes compute location is made for.

:func:`stage_programs` is a hypothesis strategy of PrimFuncs, and
:func:`random_stage_program` builds the same from a seed. Each program is one
of these pipelines of blocks over float32 buffers, intermediates in the root
block's ``alloc_buffers``, with random sizes and random constants:

* ``chain``: an elementwise chain ``A -> B -> C [-> D]`` in one or two
  dimensions;
* ``reduction``: a row sum (``T.init`` and an update) feeding an
  elementwise stage;
* ``two_consumers``: a producer whose buffer two consumers read, the second
  also reading the first's output;
* ``stencil``: a producer over ``n + 2`` elements and a consumer reading
  the window ``B[i:i + 3]``;
* ``overwrite``: a producer ``B``, a consumer ``D[i] = B[i] + E[i]`` and a
  second consumer that then overwrites ``E`` (moving it before the first
  consumer changes what that one reads);
* ``gather``: a consumer reading its producer through a non-affine index
  (``B[(i * i) % n]`` or ``B[i // 2]``);
* ``reshape``: a consumer flattening its 2-D producer,
  ``C[v] = B[v // m, v % m]`` (row by row: the instances that read one row
  of ``B`` are one range of ``v``), or ``C[v] = B[v % n, v // n]`` (column
  by column: they are not).

Every stage's loop nest is in the program's own loops ``i``, ``j`` (or
``k`` for a reduction), each block bound to them one to one, so the
programs run the same under the interpreter and compiled.
"""

from __future__ import annotations

from ..nodes import PrimFunc
from ._choices import BytesChooser, Chooser, RandomChooser

SHAPES = ("chain", "reduction", "two_consumers", "stencil", "overwrite", "gather", "reshape")

_OPS = ("{x} * T.float32({c})", "{x} + T.float32({c})", "T.max({x}, T.float32({c}))", "{x} - T.float32({c})")


def _expr(ch: Chooser, x: str) -> str:
    op = ch.choice(_OPS)
    return op.format(x=x, c=ch.choice([0.5, 1.0, 2.0, 3.0, -1.0]))


def _chain(ch: Chooser) -> str:
    two_d = ch.chance(50)
    n = ch.integer(4, 10)
    m = ch.integer(2, 6)
    stages = ch.integer(2, 3)
    shape = f"({n}, {m})" if two_d else f"({n},)"
    idx = "vi, vj" if two_d else "vi"
    names = ["A", "B", "C", "D"][: stages + 1]
    params = ", ".join(f'{names[0]}: T.Buffer({shape}, "float32")' for _ in [0])
    params += f', {names[-1]}: T.Buffer({shape}, "float32")'
    lines = ["@T.prim_func", f"def main({params}):"]
    for b in names[1:-1]:
        lines.append(f'    {b} = T.alloc_buffer({shape})')
    for k, b in enumerate(names[1:], 1):
        prev = names[k - 1]
        if two_d:
            lines += [f"    for i, j in T.grid({n}, {m}):",
                      f'        with T.block("{b}"):',
                      '            vi, vj = T.axis.remap("SS", [i, j])']
        else:
            lines += [f"    for i in range({n}):", f'        with T.block("{b}"):',
                      f"            vi = T.axis.spatial({n}, i)"]
        lines.append(f"            {b}[{idx}] = {_expr(ch, f'{prev}[{idx}]')}")
    return "\n".join(lines) + "\n"


def _reduction(ch: Chooser) -> str:
    n, m = ch.integer(2, 8), ch.integer(2, 6)
    return f'''@T.prim_func
def main(A: T.Buffer(({n}, {m}), "float32"), C: T.Buffer(({n},), "float32")):
    B = T.alloc_buffer(({n},))
    for i, k in T.grid({n}, {m}):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            C[vi] = {_expr(ch, "B[vi]")}
'''


def _two_consumers(ch: Chooser) -> str:
    n = ch.integer(3, 10)
    return f'''@T.prim_func
def main(A: T.Buffer(({n},), "float32"), D: T.Buffer(({n},), "float32"), E: T.Buffer(({n},), "float32")):
    B = T.alloc_buffer(({n},))
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = {_expr(ch, "A[vi]")}
    for i in range({n}):
        with T.block("D"):
            vi = T.axis.spatial({n}, i)
            D[vi] = {_expr(ch, "B[vi]")}
    for i in range({n}):
        with T.block("E"):
            vi = T.axis.spatial({n}, i)
            E[vi] = B[vi] + {_expr(ch, "D[vi]")}
'''


def _stencil(ch: Chooser) -> str:
    n = ch.integer(3, 10)
    return f'''@T.prim_func
def main(A: T.Buffer(({n + 2},), "float32"), C: T.Buffer(({n},), "float32")):
    B = T.alloc_buffer(({n + 2},))
    for i in range({n + 2}):
        with T.block("B"):
            vi = T.axis.spatial({n + 2}, i)
            B[vi] = {_expr(ch, "A[vi]")}
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            C[vi] = B[vi] + B[vi + 1] * T.float32(2) + B[vi + 2]
'''


def _overwrite(ch: Chooser) -> str:
    n = ch.integer(3, 10)
    return f'''@T.prim_func
def main(A: T.Buffer(({n},), "float32"), D: T.Buffer(({n},), "float32"), E: T.Buffer(({n},), "float32")):
    B = T.alloc_buffer(({n},))
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = {_expr(ch, "A[vi]")}
    for i in range({n}):
        with T.block("D"):
            vi = T.axis.spatial({n}, i)
            D[vi] = B[vi] + E[vi]
    for i in range({n}):
        with T.block("E"):
            vi = T.axis.spatial({n}, i)
            E[vi] = {_expr(ch, "B[vi]")}
'''


def _gather(ch: Chooser) -> str:
    n = ch.integer(3, 10)
    index = ch.choice(["(vi * vi) % " + str(n), "vi // 2"])
    return f'''@T.prim_func
def main(A: T.Buffer(({n},), "float32"), C: T.Buffer(({n},), "float32")):
    B = T.alloc_buffer(({n},))
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = {_expr(ch, "A[vi]")}
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            C[vi] = {_expr(ch, f"B[{index}]")}
'''


def _reshape(ch: Chooser) -> str:
    n, m = ch.integer(2, 5), ch.integer(2, 5)
    index = ch.choice([f"v // {m}, v % {m}", f"v % {n}, v // {n}"])
    return f'''@T.prim_func
def main(A: T.Buffer(({n}, {m}), "float32"), C: T.Buffer(({n * m},), "float32")):
    B = T.alloc_buffer(({n}, {m}))
    for i, j in T.grid({n}, {m}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = {_expr(ch, "A[vi, vj]")}
    for i in range({n * m}):
        with T.block("C"):
            v = T.axis.spatial({n * m}, i)
            C[v] = {_expr(ch, f"B[{index}]")}
'''


_BUILDERS = {"chain": _chain, "reduction": _reduction, "two_consumers": _two_consumers,
             "stencil": _stencil, "overwrite": _overwrite, "gather": _gather, "reshape": _reshape}


def stage_source(ch: Chooser, shapes=SHAPES) -> str:
    """The TVMScript source of one random program of one of ``shapes``."""
    return _BUILDERS[ch.choice(list(shapes))](ch)


def build_stage_program(ch: Chooser, shapes=SHAPES) -> PrimFunc:
    """One random program of one of ``shapes`` (see the module docstring)."""
    from ..script import from_source

    return from_source(stage_source(ch, shapes))


def stage_programs(shapes=SHAPES):
    """A hypothesis strategy of programs of ``shapes`` (all by default)."""
    from hypothesis import strategies as st

    return st.binary(min_size=24, max_size=24).map(lambda data: build_stage_program(BytesChooser(data), shapes))


def random_stage_program(seed: int, shapes=SHAPES) -> PrimFunc:
    """One program of ``shapes`` from an integer seed, without hypothesis."""
    return build_stage_program(RandomChooser(seed), shapes)


__all__ = ["SHAPES", "stage_source", "build_stage_program", "stage_programs", "random_stage_program"]
