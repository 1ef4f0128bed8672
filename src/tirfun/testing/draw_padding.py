"""Random padded stages, and random applications of ``decompose_padding``,
``pad_einsum``, ``loop_partition`` and the region hints (``annotate_buffer_access``,
``unsafe_hide_buffer_access``).

``padded_programs()`` is a hypothesis strategy (``random_padded_program``
the same from any :class:`~tirfun.testing._choices.Chooser`) of programs
with a padding stage as conv2d has one: ``P[c, h, w] =
T.if_then_else(in bounds, X[c, h - top, w - left], pad)`` with random
amounts on each side (zero included), dtype and pad value, read by a
stencil or by a window sum (a reduction), then split a few times (factors
that need not divide).

:data:`DRAWERS` maps each primitive name to a function ``(chooser, module)
-> record or None``: a random application that applies to the module, or
None when the module offers no site. The regions drawn for
``annotate_buffer_access`` cover what the block touches (the declared
region itself, widened to the whole buffer in some dimensions), so later
primitives that trust the hint stay right.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import rewrites as R
from ..analysis.traversal import stmt_nodes
from ..nodes import Block, BlockRealize, For, IntImm, IRModule, PrimFunc
from ..rewrites.base import Rewrite
from ._choices import Chooser, DrawChooser, RandomChooser

_PADDED = '''@T.prim_func
def main(X: T.Buffer(({c}, {h}, {w}), "{dtype}"), Y: T.Buffer(({c}, {oh}, {ow}), "{dtype}")):
    P = T.alloc_buffer(({c}, {ph}, {pw}), "{dtype}")
    for c, h, w in T.grid({c}, {ph}, {pw}):
        with T.block("pad"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            P[vc, vh, vw] = T.if_then_else({cond}, X[vc, vh - {top}, vw - {left}], T.{dtype}({value}))
{consumer}'''

_STENCIL = '''    for c, h, w in T.grid({c}, {oh}, {ow}):
        with T.block("Y"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            Y[vc, vh, vw] = P[vc, vh, vw] + P[vc, vh + {k} - 1, vw + {k} - 1]'''

_WINDOW = '''    for c, h, w, r, s in T.grid({c}, {oh}, {ow}, {k}, {k}):
        with T.block("Y"):
            vc, vh, vw, vr, vs = T.axis.remap("SSSRR", [c, h, w, r, s])
            with T.init():
                Y[vc, vh, vw] = T.{dtype}(0)
            Y[vc, vh, vw] = Y[vc, vh, vw] + P[vc, vh + vr, vw + vs]'''


def padded_source(ch: Chooser) -> str:
    """TVMScript of a random padded stage and its consumer."""
    c = ch.integer(1, 2)
    h, w = ch.integer(1, 5), ch.integer(1, 5)
    top, bottom, left, right = (ch.integer(0, 2) for _ in range(4))
    if top + bottom + left + right == 0:
        top = 1
    ph, pw = h + top + bottom, w + left + right
    k = ch.integer(1, min(ph, pw, 3))
    dtype = ch.choice(("float32", "int32", "int8", "float64"))
    value = ch.choice((0, 1, -3))
    terms = []
    for var, lo, size in (("vh", top, h), ("vw", left, w)):
        if lo:
            terms.append(f"{lo} <= {var}")
        if lo + size < (ph if var == "vh" else pw):
            terms.append(f"{var} < {lo + size}")
    cond = " and ".join(terms)
    consumer = ch.choice((_STENCIL, _WINDOW)).format(c=c, oh=ph - k + 1, ow=pw - k + 1, k=k, dtype=dtype)
    return _PADDED.format(c=c, h=h, w=w, ph=ph, pw=pw, top=top, left=left, cond=cond, dtype=dtype,
                          value=value, oh=ph - k + 1, ow=pw - k + 1, consumer=consumer)


def random_padded_program(ch: Chooser, max_steps: int = 2) -> IRModule:
    """A random :func:`padded_source` program after up to ``max_steps``
    random splits of its loops."""
    from ..schedule import Schedule
    from ..script import from_source

    sch = Schedule(from_source(padded_source(ch)))
    for _ in range(ch.integer(0, max_steps)):
        loops = sch.get_loops(ch.choice(("pad", "Y")))
        step = R.split(ch.choice(loops), [None, ch.integer(2, 3)])
        if not step.violations(sch.mod):
            sch.apply(step)
    return sch.mod


def padded_programs(max_steps: int = 2):
    """A hypothesis strategy of :func:`random_padded_program` modules."""
    from hypothesis import strategies as st  # a test dependency, loaded on use

    @st.composite
    def build(draw):
        return random_padded_program(DrawChooser(draw), max_steps)

    return build()


def random_padded_module(seed: int, max_steps: int = 2) -> IRModule:
    """:func:`random_padded_program` from a seed (no hypothesis needed)."""
    return random_padded_program(RandomChooser(seed), max_steps)


def _main(mod: IRModule) -> PrimFunc:
    return mod.functions["main"] if "main" in mod.functions else next(iter(mod.functions.values()))


def _blocks(mod: IRModule) -> list[Block]:
    func = _main(mod)
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    return [s for s in stmt_nodes(func, skip_init=True) if isinstance(s, Block) and s is not root]


def draw_decompose_padding(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """A ``decompose_padding`` of a padding block at one of its loops."""
    candidates = []
    for block in _blocks(mod):
        try:
            loops = R.get_loops(mod, R.BlockRef(block.name_hint))
        except R.RewriteError:
            continue
        candidates.extend(R.decompose_padding(block.name_hint, loop) for loop in loops)
    for rewrite in ch.shuffled(candidates):
        if not rewrite.violations(mod):
            return rewrite
    return None


def draw_pad_einsum(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """A ``pad_einsum`` of an einsum block by random factors (2 to 4, or 1)."""
    candidates = []
    for block in _blocks(mod):
        pads = [ch.choice((1, 2, 3, 4)) for _ in block.iter_vars]
        candidates.append(R.pad_einsum(block.name_hint, pads))
    for rewrite in ch.shuffled(candidates):
        if not rewrite.violations(mod):
            return rewrite
    return None


def draw_loop_partition(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """A ``loop_partition`` of a loop of constant extent into two or three
    parts (one of them inferred, or a remainder)."""
    func = _main(mod)
    loops = [s for s in stmt_nodes(func, skip_init=True) if isinstance(s, For) and isinstance(s.extent, IntImm)
             and isinstance(s.min, IntImm) and s.extent.value >= 2 and not s.annotations
             and s.thread_binding is None]
    if not loops:
        return None
    loop = ch.choice(loops)
    extent = loop.extent.value
    first = ch.integer(1, extent - 1)
    if ch.chance(50):
        factors = [first]
    elif extent - first >= 2 and ch.chance(50):
        factors = [first, ch.integer(1, extent - first - 1)]
    else:
        factors = [first, None] if ch.chance(50) else [None, first]
    rewrite = R.loop_partition(loop.loop_var.name, factors)
    return None if rewrite.violations(mod) else rewrite


def draw_annotate_buffer_access(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """An ``annotate_buffer_access`` of a block's read or write region, with
    a region that covers the declared one."""
    sites = [(b, t, k) for b in _blocks(mod) for t in ("read", "write")
             for k in range(len(b.reads if t == "read" else b.writes))]
    if not sites:
        return None
    block, buf_type, k = ch.choice(sites)
    region = (block.reads if buf_type == "read" else block.writes)[k]
    ranges = []
    for rng, dim in zip(region.region, region.buffer.shape):
        if ch.chance(30):
            ranges.append((IntImm(dim.dtype, 0), dim))
        elif isinstance(rng.extent, IntImm) and rng.extent.value == 1 and ch.chance(50):
            ranges.append(rng.min)
        else:
            ranges.append((rng.min, rng.min + rng.extent))
    rewrite = R.annotate_buffer_access(block.name_hint, k, buf_type, ranges)
    return None if rewrite.violations(mod) else rewrite


def draw_any_unsafe_hide_buffer_access(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """An ``unsafe_hide_buffer_access`` of some of a block's regions, reads
    or writes: for schedules of region hints alone, which no later
    primitive trusts (see :func:`draw_unsafe_hide_buffer_access`)."""
    sites = [(b, t) for b in _blocks(mod) for t in ("read", "write") if (b.reads if t == "read" else b.writes)]
    if not sites:
        return None
    block, buf_type = ch.choice(sites)
    n = len(block.reads if buf_type == "read" else block.writes)
    picked = [k for k in range(n) if ch.chance(50)] or [ch.integer(0, n - 1)]
    rewrite = R.unsafe_hide_buffer_access(block.name_hint, buf_type, picked)
    return None if rewrite.violations(mod) else rewrite


def draw_unsafe_hide_buffer_access(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """An ``unsafe_hide_buffer_access`` of some of a block's reads of
    buffers that no block writes. Hiding is a promise that the schedule
    need not know of the access, and later primitives trust it as TVM's
    do: hiding a write, or a read of something written, lets them reorder
    or overwrite what the block still touches, so the schedules drawn here,
    which must keep their meaning, make only promises that hold."""
    blocks = _blocks(mod)
    written = {w.buffer for b in blocks for w in b.writes}
    sites = []
    for block in blocks:
        safe = [k for k, r in enumerate(block.reads) if r.buffer not in written]
        if safe:
            sites.append((block, safe))
    if not sites:
        return None
    block, safe = ch.choice(sites)
    picked = [k for k in safe if ch.chance(50)] or [ch.choice(safe)]
    rewrite = R.unsafe_hide_buffer_access(block.name_hint, "read", picked)
    return None if rewrite.violations(mod) else rewrite


DRAWERS: dict[str, Callable[[Chooser, IRModule], Rewrite | None]] = {
    "decompose_padding": draw_decompose_padding,
    "loop_partition": draw_loop_partition,
    "pad_einsum": draw_pad_einsum,
    "annotate_buffer_access": draw_annotate_buffer_access,
    "unsafe_hide_buffer_access": draw_unsafe_hide_buffer_access,
}


__all__ = ["DRAWERS", "padded_source", "random_padded_program", "padded_programs", "random_padded_module",
           "draw_decompose_padding", "draw_pad_einsum", "draw_loop_partition", "draw_annotate_buffer_access",
           "draw_unsafe_hide_buffer_access", "draw_any_unsafe_hide_buffer_access"]
