"""Random reductions, and random applications of the reduction primitives.

``reduction_programs()`` is a hypothesis strategy (``random_reduction_program``
the same from any :class:`~tirfun.testing._choices.Chooser`) of programs of
the shapes the reduction primitives meet:

* ``"reduce"``: ``O[vi, vj]`` reduced over ``vk`` by a sum, product, min
  or max, in int8, int32, float32 or float64, the three loops in any order,
  then split (factors that need not divide the extents, so the bindings
  carry predicates) and fused a few times;
* ``"repeat"``: the program ``compute_at`` leaves when it places a row
  reduction under a consumer's loops: a loop above the reduction that
  feeds none of its iteration variables repeats it, and the reduction's
  ``init`` runs again on every repetition;
* ``"argmax"``: a two-value reduction (index and value) through LetStmt
  values, as ``te.comm_reducer`` writes argmax and argmin.

:data:`DRAWERS` maps each primitive name to a function ``(chooser, module)
-> record or None``: a random application of that primitive that applies to
the module (its ``violations`` are empty), or None when the module offers
no site.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import rewrites as R
from ..analysis.traversal import stmt_nodes
from ..nodes import Block, BlockRealize, For, IRModule, PrimFunc
from ..rewrites.base import Rewrite
from ._choices import Chooser, DrawChooser, RandomChooser

#: the reducers of the ``"reduce"`` shape: name -> (init, update) templates
REDUCERS = {
    "sum": ("T.{dtype}(0)", "O[vi, vj] + {value}"),
    "product": ("T.{dtype}(1)", "O[vi, vj] * {value}"),
    "min": ("T.max_value(\"{dtype}\")", "T.min(O[vi, vj], {value})"),
    "max": ("T.min_value(\"{dtype}\")", "T.max(O[vi, vj], {value})"),
}
DTYPES = ("int32", "float32", "int8", "float64")
SHAPES = ("reduce", "repeat", "argmax")

_REDUCE = '''@T.prim_func
def main(A: T.Buffer(({si}, {r}, {sj}), "{dtype}"), O: T.Buffer(({si}, {sj}), "{dtype}")):
    for {l0}, {l1}, {l2} in T.grid({e0}, {e1}, {e2}):
        with T.block("O"):
            vi, vk, vj = T.axis.remap("SRS", [i, k, j])
            with T.init():
                O[vi, vj] = {init}
            O[vi, vj] = {update}'''

_REPEAT = '''@T.prim_func
def main(A: T.Buffer(({si}, {r}), "{dtype}"), B: T.Buffer(({si}, {sj}), "{dtype}"),
         D: T.Buffer(({si}, {sj}), "{dtype}")):
    C = T.alloc_buffer(({si},), "{dtype}")
    for {outer}, {middle} in T.grid({e_outer}, {e_middle}):
        for k in range({r}):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = {init}
                C[vi] = {update}
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi] + B[vi, vj]'''

_ARGMAX = '''@T.prim_func
def main(A: T.Buffer(({si}, {r}), "{dtype}"), Oi: T.Buffer(({si},), "int32"),
         Ov: T.Buffer(({si},), "{dtype}")):
    for i, k in T.grid({si}, {r}):
        with T.block("O"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                Oi[vi] = -1
                Ov[vi] = T.{limit}_value("{dtype}")
            v_Oi: T.int32 = T.Select(Ov[vi] {cmp} A[vi, vk], Oi[vi], vk)
            v_Ov: T.{dtype} = T.Select(Ov[vi] {cmp} A[vi, vk], Ov[vi], A[vi, vk])
            Oi[vi] = v_Oi
            Ov[vi] = v_Ov'''


def reduction_source(ch: Chooser) -> tuple[str, str, str]:
    """TVMScript of a random program of one of :data:`SHAPES`, with its
    shape and its reducer (``"sum"``, ..., or ``"argmax"``/``"argmin"``)."""
    shape = ch.choice(SHAPES)
    si = ch.choice((4, 3, 1, 5))
    sj = ch.choice((3, 4, 1, 2))
    r = ch.integer(1, 10)
    if shape == "argmax":
        # float values: ties, whose winner depends on the order, are unlikely
        dtype = ch.choice(("float32", "float64"))
        kind = ch.choice(("argmax", "argmin"))
        cmp, limit = (">=", "min") if kind == "argmax" else ("<=", "max")
        return _ARGMAX.format(si=si, r=r, dtype=dtype, cmp=cmp, limit=limit), shape, kind
    reducer = ch.choice(tuple(REDUCERS))
    dtype = ch.choice(DTYPES)
    init, update = REDUCERS[reducer]
    if shape == "repeat":
        value = ch.choice(("A[vi, vk]", "A[vi, vk] * A[vi, vk]"))
        outer, middle = ch.choice((("i", "j"), ("j", "i")))
        extent = {"i": si, "j": sj}
        text = _REPEAT.format(si=si, sj=sj, r=r, dtype=dtype, outer=outer, middle=middle,
                              e_outer=extent[outer], e_middle=extent[middle],
                              init=init.format(dtype=dtype),
                              update=update.replace("O[vi, vj]", "C[vi]").format(value=value))
        return text, shape, reducer
    order = ch.choice((("i", "k", "j"), ("i", "j", "k"), ("k", "i", "j"), ("j", "k", "i")))
    extent = {"i": si, "k": r, "j": sj}
    value = ch.choice(("A[vi, vk, vj]", "A[vi, vk, vj] + A[vi, 0, vj]"))
    text = _REDUCE.format(si=si, r=r, sj=sj, dtype=dtype, l0=order[0], l1=order[1], l2=order[2],
                          e0=extent[order[0]], e1=extent[order[1]], e2=extent[order[2]],
                          init=init.format(dtype=dtype), update=update.format(value=value))
    return text, shape, reducer


def random_reduction_program(ch: Chooser, max_steps: int = 3) -> IRModule:
    """A random program of :func:`reduction_source`, after up to
    ``max_steps`` random ``split`` (factors that need not divide) and
    ``fuse`` steps on the reduction block's loops."""
    from ..schedule import Schedule
    from ..script import from_source

    text, _, _ = reduction_source(ch)
    sch = Schedule(from_source(text))
    for _ in range(ch.integer(0, max_steps)):
        block = ch.choice(sorted(n for n in _block_names(sch.mod) if n != "D"))
        loops = sch.get_loops(block)
        if len(loops) > 1 and ch.chance(30):
            at = ch.integer(0, len(loops) - 2)
            step = R.fuse(loops[at], loops[at + 1])
        else:
            step = R.split(ch.choice(loops), [None, ch.integer(2, 4)])
        if not step.violations(sch.mod):
            sch.apply(step)
    return sch.mod


def reduction_programs(max_steps: int = 3):
    """A hypothesis strategy of :func:`random_reduction_program` modules."""
    from hypothesis import strategies as st  # a test dependency, loaded on use

    @st.composite
    def build(draw):
        return random_reduction_program(DrawChooser(draw), max_steps)

    return build()


def random_reduction_module(seed: int, max_steps: int = 3) -> IRModule:
    """:func:`random_reduction_program` from a seed (no hypothesis needed)."""
    return random_reduction_program(RandomChooser(seed), max_steps)


# --------------------------------------------------------------------- drawers

def _main(mod: IRModule) -> PrimFunc:
    return mod.functions["main"] if "main" in mod.functions else next(iter(mod.functions.values()))


def _block_names(mod: IRModule) -> list[str]:
    func = _main(mod)
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    return [s.name_hint for s in stmt_nodes(func, skip_init=True) if isinstance(s, Block) and s is not root]


def _reduction_blocks(mod: IRModule) -> list[str]:
    func = _main(mod)
    return [s.name_hint for s in stmt_nodes(func, skip_init=True) if isinstance(s, Block) and s.init is not None]


def _loops(mod: IRModule) -> list[str]:
    return [s.loop_var.name for s in stmt_nodes(_main(mod), skip_init=True) if isinstance(s, For)]


def _first_valid(ch: Chooser, mod: IRModule, candidates: list) -> Rewrite | None:
    """A random candidate that applies: candidates are tried in a random
    order, so one that applies is found whenever there is one."""
    for rewrite in ch.shuffled(candidates):
        if not rewrite.violations(mod):
            return rewrite
    return None


def draw_decompose_reduction(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """A ``decompose_reduction`` of a reduction block at one of its loops."""
    candidates = []
    for name in _reduction_blocks(mod):
        try:
            loops = R.get_loops(mod, R.BlockRef(name))
        except R.RewriteError:
            continue
        candidates.extend(R.decompose_reduction(name, loop) for loop in loops)
    return _first_valid(ch, mod, candidates)


def draw_rfactor(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """An ``rfactor`` of a loop above a reduction block, at a random axis."""
    candidates = []
    for name in _reduction_blocks(mod):
        try:
            loops = R.get_loops(mod, R.BlockRef(name))
        except R.RewriteError:
            continue
        block = R.get(mod, R.BlockRef(name))
        ndim = max((len(w.buffer.shape) for w in block.writes), default=0)
        candidates.extend(R.rfactor(loop, ch.integer(-(ndim + 1), ndim)) for loop in loops)
    return _first_valid(ch, mod, candidates)


DRAWERS: dict[str, Callable[[Chooser, IRModule], Rewrite | None]] = {
    "decompose_reduction": draw_decompose_reduction,
    "rfactor": draw_rfactor,
}


def draw_any(ch: Chooser, mod: IRModule, primitive: str) -> Rewrite | None:
    """Any record of ``primitive`` with arguments taken from the module, valid
    or not (a block, a loop and an axis picked without checking), for tests
    that invalid applications end in a ScheduleError."""
    blocks = _block_names(mod)
    loops = _loops(mod)
    if primitive == "decompose_reduction":
        if not blocks or not loops:
            return None
        return R.decompose_reduction(ch.choice(blocks), ch.choice(loops))
    if primitive == "rfactor":
        if not loops:
            return None
        return R.rfactor(ch.choice(loops), ch.integer(-3, 3))
    return None


__all__ = ["DRAWERS", "REDUCERS", "DTYPES", "SHAPES", "reduction_source", "random_reduction_program",
           "reduction_programs", "random_reduction_module", "draw_decompose_reduction", "draw_rfactor",
           "draw_any"]
