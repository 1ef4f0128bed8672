"""Random TensorIR in the shapes TVM accepts and a stricter reading refuses.

:func:`accepted_sources` is a hypothesis strategy of :class:`AcceptedSource`
values: TVMScript text of one function made of several *pieces*, each
writing its own output buffer from the input ``A``:

* ``nested``: an outer block over ``io`` whose inner blocks index with the
  outer block's iteration variable (``B[vo * f + vi]``), the shape TVM's
  ``blockize`` makes;
* ``window``: a block bound to an affine window ``vi = k * a + b`` whose
  parts overlap (``b`` of extent at least ``k``) under a unit loop ``u`` of
  extent 1, the shapes reorder must accept as TVM does;
* ``plain``: one block over one loop.

Block names are drawn from a few, so repeated names and anonymous
``T.block()`` appear; each block's regions are drawn as covering, as
too small (``T.reads(A[0])``, a declaration TVM takes as given), or left
out (the parser detects them). Stores are idempotent (``B[v] = A[v] op c``)
so a window that visits an element twice computes the same value.

:func:`random_accepted_source` does the same from a seed, without hypothesis.
"""

from __future__ import annotations

import attrs

from ._choices import BytesChooser, Chooser, RandomChooser

KINDS = ("nested", "window", "plain")
#: the block names drawn: repeats and the anonymous block are the point
BLOCK_NAMES = ("B", "B", "", "C")
_DTYPES = ("int32", "float32")
_SIZE = 16


@attrs.frozen
class AcceptedSource:
    """TVMScript text and, for each ``window`` piece, the names of its two
    loops (outer ``a``, inner ``b``) and its unit loop ``u``."""

    text: str
    windows: tuple[tuple[str, str, str], ...]


def accepted_sources(max_pieces: int = 3):
    """A strategy of :class:`AcceptedSource` values (see the module docstring)."""
    from hypothesis import strategies as st  # a test dependency, loaded on use

    # one byte string per program, as tirfun.testing.programs does
    size = 48 * max_pieces + 8
    return st.binary(min_size=size, max_size=size).map(
        lambda data: build_accepted_source(BytesChooser(data), max_pieces))


def random_accepted_source(seed: int, max_pieces: int = 3) -> AcceptedSource:
    """One :class:`AcceptedSource` drawn from ``seed``."""
    return build_accepted_source(RandomChooser(seed), max_pieces)


def build_accepted_source(ch: Chooser, max_pieces: int) -> AcceptedSource:
    """The program ``ch``'s choices describe."""
    dtype = ch.choice(_DTYPES)
    n = ch.integer(1, max_pieces)
    params = [f'A: T.Buffer(({_SIZE},), "{dtype}")']
    body: list[str] = []
    windows = []
    for k in range(n):
        out = f"B{k}"
        params.append(f'{out}: T.Buffer(({_SIZE},), "{dtype}")')
        kind = ch.choice(KINDS)
        const = ch.integer(1, 5)
        value = f"T.{dtype}({const})" if dtype == "int32" else f"T.float32({const}.0)"
        op = ch.choice(("+", "*"))
        if kind == "nested":
            body += _nested(ch, k, out, op, value)
        elif kind == "window":
            lines, loops = _window(ch, k, out, op, value)
            body += lines
            windows.append(loops)
        else:
            body += _plain(ch, k, out, op, value)
    text = ("@T.prim_func\n"
            f"def main({', '.join(params)}):\n"
            '    T.func_attr({"tir.noalias": True})\n' + "\n".join(body) + "\n")
    return AcceptedSource(text, tuple(windows))


def _name(ch: Chooser) -> str:
    name = ch.choice(BLOCK_NAMES)
    return "T.block()" if name == "" and ch.chance(50) else f'T.block("{name}")'


def _regions(ch: Chooser, indent: str, reads: str, writes: str, out: str) -> list[str]:
    """The block's T.reads/T.writes: covering, too small, or left out."""
    how = ch.choice(("cover", "small", "none"))
    if how == "none":
        return []
    if how == "small":
        return [f"{indent}T.reads(A[0])", f"{indent}T.writes({out}[0])"]
    return [f"{indent}T.reads({reads})", f"{indent}T.writes({writes})"]


def _nested(ch: Chooser, k: int, out: str, op: str, value: str) -> list[str]:
    outer = ch.integer(1, 4)
    f = ch.integer(1, _SIZE // outer)
    lines = [f"    for io{k} in range({outer}):",
             f"        with {_name(ch)}:",
             f"            vo = T.axis.spatial({outer}, io{k})"]
    lines += _regions(ch, " " * 12, f"A[vo * {f}:vo * {f} + {f}]", f"{out}[vo * {f}:vo * {f} + {f}]", out)
    lines += [f"            for ii{k} in range({f}):",
              f"                with {_name(ch)}:",
              f"                    vi = T.axis.spatial({f}, ii{k})"]
    lines += _regions(ch, " " * 20, f"A[vo * {f} + vi]", f"{out}[vo * {f} + vi]", out)
    lines.append(f"                    {out}[vo * {f} + vi] = A[vo * {f} + vi] {op} {value}")
    return lines


def _window(ch: Chooser, k: int, out: str, op: str, value: str) -> tuple[list[str], tuple[str, str, str]]:
    stride = ch.integer(1, 3)
    inner = ch.integer(stride, 4)  # at least the stride: windows touch or overlap
    outer = ch.integer(1, (_SIZE - inner) // stride + 1)
    dom = stride * (outer - 1) + inner
    a, b, u = f"a{k}", f"b{k}", f"u{k}"
    binding = f"{stride} * {a} + {b} + {u}" if stride > 1 else f"{a} + {b} + {u}"
    lines = [f"    for {a} in range({outer}):",
             f"        for {b} in range({inner}):",
             f"            for {u} in range(1):",
             f"                with {_name(ch)}:",
             f"                    vi = T.axis.spatial({dom}, {binding})"]
    lines += _regions(ch, " " * 20, "A[vi]", f"{out}[vi]", out)
    lines.append(f"                    {out}[vi] = A[vi] {op} {value}")
    return lines, (a, b, u)


def _plain(ch: Chooser, k: int, out: str, op: str, value: str) -> list[str]:
    extent = ch.integer(1, _SIZE)
    lines = [f"    for i{k} in range({extent}):",
             f"        with {_name(ch)}:",
             f"            vi = T.axis.spatial({extent}, i{k})"]
    lines += _regions(ch, " " * 12, "A[vi]", f"{out}[vi]", out)
    lines.append(f"            {out}[vi] = A[vi] {op} {value}")
    return lines


__all__ = ["AcceptedSource", "accepted_sources", "random_accepted_source", "build_accepted_source",
           "KINDS", "BLOCK_NAMES"]
