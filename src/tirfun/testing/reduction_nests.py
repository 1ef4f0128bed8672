"""Random reduction nests: a reduction loop among spatial loops, then fused
and split.

``reduction_nests()`` draws programs of one shape that general random
programs reach only rarely and that optimisers get wrong: an output
``O[vi, vj]`` with ``T.init()`` accumulated over ``vk``, the three loops in
any order, under ``tir.noalias`` (usually), then a few ``fuse`` and
``split`` steps whose factors need not divide the extents, so the bindings
become ``f // c`` and ``f % c`` of fused loops and the split loops carry
predicates. The input is read either with the reduction index or without it
(``A[vi, 0, vj]``: every step adds the same value). Values are float32 or
int32, both computed exactly by any correct evaluation order that the
program fixes.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ..nodes import IRModule
from ..schedule import Schedule
from ..script import from_source

_SOURCE = '''@T.prim_func
def main(A: T.Buffer(({si}, {r}, {sj}), "{dtype}"), O: T.Buffer(({si}, {sj}), "{dtype}")):
    T.func_attr({{"tir.noalias": {noalias}}})
    for {l0}, {l1}, {l2} in T.grid({e0}, {e1}, {e2}):
        with T.block("O"):
            vi, vk, vj = T.axis.remap("SRS", [i, k, j])
            with T.init():
                O[vi, vj] = T.{dtype}(0)
            O[vi, vj] = O[vi, vj] + A[vi, {k_index}, vj]'''


def _source(si: int, r: int, sj: int, order: tuple, dtype: str, noalias: bool,
            reads_k: bool) -> str:
    extent = {"i": si, "k": r, "j": sj}
    return _SOURCE.format(si=si, r=r, sj=sj, dtype=dtype, noalias=noalias,
                          l0=order[0], l1=order[1], l2=order[2],
                          e0=extent[order[0]], e1=extent[order[1]], e2=extent[order[2]],
                          k_index="vk" if reads_k else "0")


#: the first steps of a schedule, by loop name (the rest are drawn at random)
_PLANS = {
    "fuse the reduction with the inner spatial loop": (("fuse", "k", "j"),),
    "fuse the outer spatial loop with the reduction": (("fuse", "i", "k"),),
    "split the reduction": (("split", "k"),),
    "split the reduction, fuse its inner part": (("split", "k"), ("fuse", "k.1", "j")),
    "random steps": (),
}


@st.composite
def reduction_nests(draw, max_steps: int = 3) -> IRModule:
    """An IRModule whose ``main`` accumulates ``A`` into ``O`` over a
    reduction loop placed among two spatial loops, after a drawn plan of
    ``fuse``/``split`` steps and up to ``max_steps`` random ones."""
    # extents with powers of two among them (LLVM turns ``f % 4`` into
    # ``f & 3``) and large enough for LLVM's loop optimisers to act
    si = draw(st.sampled_from([16, 5, 8, 1, 3]), label="spatial extent i")
    r = draw(st.integers(1, 13), label="reduction extent")
    sj = draw(st.sampled_from([4, 8, 16, 3, 5, 1]), label="spatial extent j")
    plan = draw(st.sampled_from(sorted(_PLANS)), label="plan")
    if plan == "random steps":
        order = tuple(draw(st.permutations(("i", "k", "j")), label="loop order"))
    else:
        order = ("i", "k", "j")
    dtype = draw(st.sampled_from(["float32", "int32"]), label="dtype")
    noalias = draw(st.sampled_from([True, True, False]), label="noalias")
    # the input read without the reduction index (the same value added at
    # every step) is the form LLVM's loop vectorizer once miscompiled
    reads_k = draw(st.sampled_from([False, False, True]), label="input read with the reduction index")
    sch = Schedule(from_source(_source(si, r, sj, order, dtype, noalias, reads_k)))
    block = sch.get_block("O")
    named = dict(zip(order, sch.get_loops(block)))
    for step in _PLANS[plan]:
        if step[0] == "fuse":
            named[step[1]] = sch.fuse(named[step[1]], named.pop(step[2]))
        else:
            factor = draw(st.integers(2, 5), label="reduction factor")
            named[step[1]], named[step[1] + ".1"] = sch.split(named[step[1]], [None, factor])
    extra = max_steps if plan == "random steps" else min(max_steps, 1)
    for _ in range(draw(st.integers(0, extra), label="steps")):
        loops = sch.get_loops(block)
        if len(loops) > 1 and draw(st.booleans(), label="fuse"):
            at = draw(st.integers(0, len(loops) - 2), label="fuse at")
            sch.fuse(loops[at], loops[at + 1])
        else:
            at = draw(st.integers(0, len(loops) - 1), label="split at")
            factor = draw(st.integers(2, 5), label="inner factor")
            sch.split(loops[at], [None, factor])
    return sch.mod


__all__ = ["reduction_nests"]
