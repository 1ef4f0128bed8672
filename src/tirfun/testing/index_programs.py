"""Random programs whose loads index through arithmetic, for cache_index and
any pass that rewrites index expressions.

One block (spatial, or a reduction with an ``init``) reads a float buffer
``A`` at indices such as ``vi // 4 * 8 + vi % 4``, ``vi * 3 + vj``, a gather
through an int32 table ``G``, a float computation truncated to an int, or
an ``if_then_else`` of two of them; each index is brought into ``A``'s
bounds by a ``%``, so any input is valid. The same index often occurs
twice (what ``cse_thresh`` counts), and the stored value may hold float
arithmetic and a guarded division by an iteration variable (computed only
where the guard holds). Its iteration variables are bound plainly, to loops
that start above 0, to a fused loop, or to a split loop with a predicate.

:func:`build_index_program` builds one from a Chooser;
:func:`index_programs` is the hypothesis strategy and
:func:`random_index_program` the seeded generator.
"""

from __future__ import annotations

from ..nodes import PrimFunc
from ..script import from_source
from ._choices import BytesChooser, Chooser, RandomChooser

_HEAD = "from tirfun.script import tir as T\n\n"
#: the extent of A and of the gather table G
_N, _M = 37, 11


def _term(ch: Chooser, names: list[str], depth: int = 0) -> str:
    """An int32 expression over the iteration variables ``names``."""
    a = ch.choice(names)
    b = ch.choice(names)
    c = ch.integer(2, 5)
    k = ch.integer(1, 9)
    forms = [
        f"{a} // {c} * {k} + {a} % {c}",
        f"{a} * {c} + {b}",
        f"{a} + {b} * {k} - {c}",
        f"G[({a} * {c} + {b}) % {_M}]",
        f'T.Cast("int32", T.floor(T.Cast("float32", {a}) * T.float32(0.5) + T.float32(0.25)))',
        f"T.max({a} - {c}, {b}) // {c}",
    ]
    if depth == 0:
        forms.append(f"T.if_then_else({a} < {c}, {_term(ch, names, 1)}, {_term(ch, names, 1)})")
    return ch.choice(forms)


def _index(term: str) -> str:
    return f"({term}) % {_N}"


def build_index_program(ch: Chooser) -> PrimFunc:
    """One program (see the module docstring) from ``ch``'s choices."""
    n_spatial = ch.integer(1, 2)
    extents = [ch.integer(1, 8) for _ in range(n_spatial)]
    binding = ch.choice(("plain", "offset", "fused", "split") if n_spatial == 2 else ("plain", "offset", "split"))
    reduce_extent = ch.integer(1, 4) if ch.chance(30) else 0
    names = ["vi", "vj"][:n_spatial]
    loops: list[str] = []
    axes: list[str] = []
    where = None
    names_out = list(names)
    if binding == "fused":
        e0, e1 = extents
        loops.append(f"for f in range({e0 * e1}):")
        axes += [f"vi = T.axis.spatial({e0}, f // {e1})", f"vj = T.axis.spatial({e1}, f % {e1})"]
    elif binding == "split":
        e = extents[0]
        factor = ch.integer(2, 3)
        loops += [f"for i0 in range({(e + factor - 1) // factor}):", f"for i1 in range({factor}):"]
        axes.append(f"vi = T.axis.spatial({e}, i0 * {factor} + i1)")
        where = f"T.where(i0 * {factor} + i1 < {e})"
        if n_spatial == 2:
            loops.append(f"for j in range({extents[1]}):")
            axes.append(f"vj = T.axis.spatial({extents[1]}, j)")
    else:
        lows = [ch.integer(1, 3) if binding == "offset" else 0 for _ in extents]
        for name, lo, e, var in zip(names, lows, extents, "ij"):
            loops.append(f"for {var} in range({lo}, {lo + e}):" if lo else f"for {var} in range({e}):")
            axes.append(f"{name} = T.axis.spatial({lo + e}, {var})")
        names_out = [f"{n} - {lo}" if lo else n for n, lo in zip(names, lows)]
    if reduce_extent:
        loops.append(f"for k in range({reduce_extent}):")
        axes.append(f"vk = T.axis.reduce({reduce_extent}, k)")
    iters = names + (["vk"] if reduce_extent else [])
    first = _term(ch, iters)
    loads = [f"A[{_index(first)}]"]
    if ch.chance(60):  # the same index again, up to three times: what cse_thresh counts
        loads += [f"A[{_index(first)}]"] * ch.integer(1, 3)
    for _ in range(ch.integer(0, 2)):
        loads.append(f"A[{_index(_term(ch, iters))}]")
    value = " + ".join(loads)
    extra = ch.weighted([("none", 3), ("float", 2), ("guarded", 2), ("select", 1)])
    if extra == "float":
        value = f'({value}) * (T.Cast("float32", {iters[0]}) * T.float32(0.5) + T.float32(1))'
    elif extra == "guarded":
        a, b = ch.choice(iters), ch.choice(iters)
        value = f'{value} + T.Cast("float32", T.if_then_else({b} > 0, {a} // {b}, 0))'
    elif extra == "select":
        a, b = ch.choice(iters), ch.choice(iters)
        value = f"T.Select({a} * 2 < {b} + 3, {value}, A[{_index(_term(ch, iters))}])"
    out = ", ".join(names_out)
    body = []
    if where:
        body.append(where)
    if reduce_extent:
        body += ["with T.init():", f"    B[{out}] = T.float32(0)", f"B[{out}] = B[{out}] + {value}"]
    else:
        body.append(f"B[{out}] = {value}")
    shape = ", ".join(str(e) for e in extents)
    lines = ["@T.prim_func",
             f'def main(A: T.Buffer(({_N},), "float32"), G: T.Buffer(({_M},), "int32"), '
             f'B: T.Buffer(({shape},), "float32")):']
    indent = "    "
    for loop in loops:
        lines.append(indent + loop)
        indent += "    "
    lines.append(indent + 'with T.block("C"):')
    indent += "    "
    lines += [indent + a for a in axes]
    lines += [indent + b for b in body]
    return from_source(_HEAD + "\n".join(lines) + "\n")


def index_programs():
    """A hypothesis strategy of programs from :func:`build_index_program`."""
    from hypothesis import strategies as st

    return st.binary(min_size=64, max_size=64).map(lambda data: build_index_program(BytesChooser(data)))


def random_index_program(seed: int) -> PrimFunc:
    """The program :func:`build_index_program` builds from ``seed``."""
    return build_index_program(RandomChooser(seed))


__all__ = ["build_index_program", "index_programs", "random_index_program"]
