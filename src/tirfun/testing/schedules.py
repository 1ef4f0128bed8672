"""Random schedules: sequences of loop primitives for property tests.

:func:`loop_schedules` is a hypothesis strategy of :class:`~tirfun.rewrites.Pipeline`
values that apply to a given module: every step is drawn among the loop
primitives (split, fuse, reorder, merge, add_unit_loop,
reorder_block_iter_var, parallel, vectorize, bind, unroll, annotate,
unannotate) with arguments taken from the module as the previous steps left
it, and kept only when ``violations()`` is empty. :func:`random_schedule`
does the same from a seed, without hypothesis. Each primitive is applied
at least :data:`MINIMUM_PER_100` times in 100 schedules; merge, which
random programs seldom allow as they are, also comes as a merge of two unit
loops put over adjacent nests. :func:`primitive_counts` counts a schedule's
primitives, and the strategy reports them as hypothesis events.

:func:`block_schedules` (and :func:`random_block_schedule`) draw among the
loop primitives and the block primitives together: compute location
(:mod:`.draw_compute_location`), caching (:mod:`.draw_cache`), storage
(:mod:`.draw_storage`), reductions (:mod:`.draw_reduction`), padding,
partitioning and region hints (:mod:`.draw_padding`), tensorize
(:mod:`.draw_tensorize`). Each of those modules
keeps its own ``DRAWERS``; :data:`BLOCK_PRIMITIVES` lists them all.

:func:`bad_rewrites` is a strategy of records with at least one argument
that cannot be right (a name that does not exist, a block where a loop goes,
a factor of the wrong type, ...), for testing that such arguments end in a
ScheduleError.

The draws stay inside what keeps a program's meaning and what a backend
can take: merges join adjacent loop nests, and are kept where merge
accepts them (it refuses what would change the meaning); parallel, vectorize
and bind only apply to loops whose iterations are whole blocks (a loop
inside a block's body may carry an accumulation), bind never makes a
cross-thread reduction, vectorize only takes innermost loops of constant
extent, and unroll only loops of constant extent.

``unsafe_hide_buffer_access`` is drawn only as the last step of a
schedule (:data:`ENDS_SCHEDULE`): once a block's declared regions hide
what it touches, no primitive that relies on regions may follow, as TVM's
docstring warns.

Thread-bound programs have the GPU's meaning (see :mod:`tirfun.interp.gpu`),
so no step may leave a kernel (an outermost thread-bound loop) where
:func:`thread_binding_problems` finds something: a tag bound twice on one
path (TVM makes both loops one thread axis), one tag bound with different
extents, a block that not every thread axis of its kernel reaches (every
thread of that axis would run it, a data race), or a block whose binding is
not one to one in the kernel's loops (overlapping windows: two threads
would write one element), or a ``shared`` or ``local`` buffer that a kernel
and something outside it both use (the kernel gets its own storage, as
TVM's lowering allocates it inside the kernel).
"""

from __future__ import annotations

import collections
import math

from ..analysis.traversal import stmt_children, stmt_nodes, walk, walk_stmts
from ..nodes import (
    THREAD_TAGS, Block, BlockRealize, BufferLoad, BufferStore, For, IntImm, IRModule, IterVarType,
    MatchBufferRegion, PrimFunc, SeqStmt,
)
from .. import rewrites as R
from ..analysis.arith.iter_map import is_affine_binding
from ..analysis.threads import launch_of
from ..rewrites.exprs import var_names
from ..target import CUDA_DIM_LIMITS, CUDA_MAX_THREADS_PER_BLOCK
from ._choices import BytesChooser, Chooser, RandomChooser

# unroll and add_unit_loop apply to any loop and any non-root block, so they
# come first: hypothesis's simplest choice is the first, and it must succeed
PRIMITIVES = ("unroll", "add_unit_loop", "split", "fuse", "reorder", "merge", "reorder_block_iter_var",
              "parallel", "vectorize", "bind", "annotate", "unannotate")

_WEIGHTS = {"split": 6, "fuse": 4, "reorder": 4, "merge": 2, "add_unit_loop": 1,
            "reorder_block_iter_var": 2, "parallel": 2, "vectorize": 2, "bind": 2, "unroll": 1,
            "annotate": 2, "unannotate": 4}
#: the least number of times each primitive is applied in 100 drawn schedules
#: (of up to 6 steps, on default random programs): what the weights above are
#: tuned for, and what ``tests/unit/test_schedules_strategy.py`` measures
MINIMUM_PER_100 = {p: 10 for p in PRIMITIVES}
_ANNOTATION_KEYS = ("pragma_unroll_explicit", "software_pipeline_stage", "tirfun.note")
#: the modules whose ``DRAWERS`` draw the block primitives
_BLOCK_DRAWER_MODULES = ("draw_compute_location", "draw_cache", "draw_storage", "draw_reduction",
                         "draw_padding", "draw_tensorize")
#: every block primitive the block schedules draw, by family
BLOCK_PRIMITIVES = ("compute_at", "reverse_compute_at", "compute_inline", "reverse_compute_inline",
                    "cache_read", "cache_write", "cache_inplace", "reindex", "reindex_cache_read",
                    "reindex_cache_write",
                    "cache_index", "read_at", "write_at",
                    "set_scope", "storage_align", "unsafe_set_dtype", "set_axis_separator", "transform_layout",
                    "transform_block_layout", "blockize", "tensorize",
                    "rolling_buffer",
                    "decompose_reduction", "rfactor",
                    "decompose_padding", "pad_einsum", "loop_partition", "annotate_buffer_access",
                    "unsafe_hide_buffer_access")
#: loop and block primitives together
ALL_PRIMITIVES = PRIMITIVES + BLOCK_PRIMITIVES
#: primitives after which a drawn schedule stops: ``unsafe_hide_buffer_access``
#: leaves a block's declared regions short of what it touches (unsafe by
#: TVM's contract), and every later primitive that trusts regions (region
#: cover, cache regions, compute_at's bounds, buffer compaction in lowering)
#: may then change the program's meaning
ENDS_SCHEDULE = ("unsafe_hide_buffer_access",)


def _block_drawers() -> dict:
    """Every block primitive's drawer (imported on first use: the drawer
    modules pull in hypothesis-free but large parts of tirfun)."""
    import importlib

    out = {}
    for name in _BLOCK_DRAWER_MODULES:
        out.update(importlib.import_module(f"{__package__}.{name}").DRAWERS)
    return out
_ATTEMPTS = 8


def _module(mod) -> IRModule:
    return IRModule({"main": mod}) if isinstance(mod, PrimFunc) else mod


def _main(mod: IRModule) -> PrimFunc:
    return mod.functions["main"] if "main" in mod.functions else next(iter(mod.functions.values()))


def _loops(func: PrimFunc) -> list[tuple[tuple, For]]:
    return [(p, s) for p, s in walk_stmts(func) if isinstance(s, For)]


def _blocks(func: PrimFunc) -> list[tuple[tuple, Block]]:
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    return [(p, s) for p, s in walk_stmts(func) if isinstance(s, Block) and s is not root]


def _chain(loop: For) -> list[For]:
    """The loop and the loops that are each the only child of the one before."""
    out = [loop]
    while isinstance(out[-1].body, For):
        out.append(out[-1].body)
    return out


def _float_reduction_loops(top: For) -> set[str]:
    """Names of the loop variables that the reduction iteration variables
    of float-writing blocks under ``top`` are bound to."""
    out: set[str] = set()
    for node in walk(top):
        if not isinstance(node, BlockRealize):
            continue
        if not any(w.buffer.dtype.is_float for w in node.block.writes):
            continue
        for iv, value in zip(node.block.iter_vars, node.iter_values):
            if iv.iter_type == IterVarType.CommReduce:
                out |= var_names(value)
    return out


def _name(loop: For) -> str:
    return loop.loop_var.name


def _factors(ch: Chooser, loop: For) -> list:
    extent = loop.extent.value if isinstance(loop.extent, IntImm) else None
    parts = ch.choice((2, 2, 3))
    if extent is None:
        factors = [ch.integer(1, 4) for _ in range(parts - 1)]
        factors.insert(ch.integer(0, parts - 1), None)
        return factors
    divisors = [d for d in range(1, extent + 1) if extent % d == 0]
    factors = [ch.choice(divisors + [ch.integer(1, max(1, extent))]) for _ in range(parts - 1)]
    if ch.chance(70):
        factors.insert(ch.integer(0, parts - 1), None)
    else:
        product = 1
        for f in factors:
            product *= f
        factors.insert(ch.integer(0, parts - 1), -(-extent // product))
    return factors


def _blocks_only_below(loop: For) -> bool:
    """Whether every statement under ``loop``, down to the blocks, is a
    loop, a sequence or a block (no stores outside blocks)."""
    stack = [loop.body]
    while stack:
        node = stack.pop()
        if isinstance(node, BlockRealize):
            continue
        if isinstance(node, For):
            stack.append(node.body)
        elif isinstance(node, SeqStmt):
            stack.extend(node.seq)
        else:
            return False
    return True


def _merge_candidates(func: PrimFunc) -> list[tuple[str, str]]:
    """Pairs of loops in adjacent sibling nests whose loops from the top of
    each nest down to them have the same extents level by level
    (``merge``'s own requirement). Nests that share a buffer one of them
    writes are among them: merge refuses those whose merge would change
    what the program computes, and the draw keeps only what it accepts."""
    out = []
    for a, b in _sibling_nests(func):
        for x, y in zip(_chain(a), _chain(b)):
            if not (isinstance(x.extent, IntImm) and isinstance(y.extent, IntImm)
                    and x.extent.value == y.extent.value):
                break
            out.append((_name(x), _name(y)))
    return out


def _sibling_nests(func: PrimFunc) -> list[tuple[For, For]]:
    """Pairs of loops that follow each other in a sequence."""
    out = []
    for stmt in stmt_nodes(func):
        if isinstance(stmt, SeqStmt):
            out.extend((a, b) for a, b in zip(stmt.seq, stmt.seq[1:])
                       if isinstance(a, For) and isinstance(b, For))
    return out


def _merge_through_unit_loops(ch: Chooser, mod: IRModule):
    """``add_unit_loop`` over two adjacent nests, then ``merge`` of the two
    unit loops: the merged loop runs once, the first nest's body before the
    second's, as before, whatever the nests read and write. Random programs
    seldom hold two independent nests of equal extents, so without this
    merge would hardly ever be drawn."""
    pairs = _sibling_nests(_main(mod))
    if not pairs:
        return None
    a, b = ch.choice(pairs)
    first = R.add_unit_loop(R.LoopRef(_name(a)))
    if first.violations(mod):
        return None
    done = first.run(mod)
    second = R.add_unit_loop(R.LoopRef(_name(b)))
    if second.violations(done.mod):
        return None
    again = second.run(done.mod)
    return R.Pipeline([first, second, R.merge(done.result.name, again.result.name)])


def _draw_rewrite(ch: Chooser, mod: IRModule, primitive: str):
    """A record of ``primitive`` with arguments drawn from ``mod`` (maybe not valid)."""
    if primitive in BLOCK_PRIMITIVES:
        return _block_drawers()[primitive](ch, mod)
    func = _main(mod)
    loops = _loops(func)
    blocks = _blocks(func)
    if primitive in ("split", "fuse", "reorder", "parallel", "vectorize", "bind", "unroll") and not loops:
        return None
    if primitive == "split":
        _, loop = ch.choice(loops)
        return R.split(_name(loop), _factors(ch, loop), preserve_unit_iters=ch.chance(80))
    if primitive == "fuse":
        _, loop = ch.choice(loops)
        chain = _chain(loop)
        if len(chain) < 2:
            return None
        n = ch.integer(2, min(3, len(chain)))
        return R.fuse(*[_name(l) for l in chain[:n]], preserve_unit_iters=ch.chance(80))
    if primitive == "reorder":
        _, loop = ch.choice(loops)
        chain = _chain(loop)
        if len(chain) < 2:
            return None
        picked = [l for l in chain if ch.chance(70)]
        if len(picked) < 2:
            picked = chain[:2]
        order = ch.shuffled(picked)
        # the loops that drive a float reduction keep their order among
        # themselves: reordering them changes the order of the sum, and the
        # result in its last bits (TVM allows it; a test that compares bit
        # for bit cannot)
        summing = _float_reduction_loops(chain[0])
        kept = iter([l for l in picked if _name(l) in summing])
        order = [next(kept) if _name(l) in summing else l for l in order]
        return R.reorder(*[_name(l) for l in order])
    if primitive == "merge":
        pairs = _merge_candidates(func)
        if pairs and ch.chance(60):
            return R.merge(*ch.choice(pairs))
        return _merge_through_unit_loops(ch, mod)
    if primitive == "add_unit_loop":
        if blocks and ch.chance(50):
            return R.add_unit_loop(R.BlockRef(ch.choice(blocks)[1].name_hint))
        return R.add_unit_loop(R.LoopRef(_name(ch.choice(loops)[1]))) if loops else None
    if primitive == "reorder_block_iter_var":
        many = [b for _, b in blocks if len(b.iter_vars) >= 2]
        if not many:
            return None
        block = ch.choice(many)
        return R.reorder_block_iter_var(block.name_hint, ch.shuffled(range(len(block.iter_vars))))
    if primitive == "unroll":
        fixed = [l for _, l in loops if isinstance(l.extent, IntImm)]
        return R.unroll(_name(ch.choice(fixed))) if fixed else None
    if primitive in ("parallel", "vectorize", "bind"):
        # only loops whose iterations are blocks, so the checks on the blocks'
        # iteration variables say the iterations are independent
        eligible = [l for _, l in loops if _blocks_only_below(l)]
        if primitive == "vectorize":
            eligible = [l for l in eligible if isinstance(l.extent, IntImm) and l.extent.value <= 16
                        and isinstance(l.body, BlockRealize)]
        if not eligible:
            return None
        loop = ch.choice(eligible)
        if primitive == "bind":
            if R.parallel(_name(loop)).violations(mod):
                return None  # no cross-thread reductions
            return R.bind(_name(loop), ch.choice(THREAD_TAGS))
        return getattr(R, primitive)(_name(loop))
    targets = [R.LoopRef(_name(l)) for _, l in loops] + [R.BlockRef(b.name_hint) for _, b in blocks]
    if primitive == "annotate":
        if not targets:
            return None
        value = ch.choice((ch.integer(0, 16), "value", [1, 2], {"k": 1}))
        return R.annotate(ch.choice(targets), ch.choice(_ANNOTATION_KEYS), value)
    if primitive == "unannotate":
        annotated = [(R.LoopRef(_name(l)), l) for _, l in loops if l.annotations] + \
                    [(R.BlockRef(b.name_hint), b) for _, b in blocks if b.annotations]
        if not annotated:
            return None
        ref, node = ch.choice(annotated)
        return R.unannotate(ref, ch.choice(sorted(node.annotations)))
    raise ValueError(f"unknown primitive {primitive!r}")


def _fallback(mod: IRModule):
    """A rewrite that applies: a unit loop over the first block, or without
    blocks the unroll of the first loop that may be unrolled (a thread loop
    holding a barrier may not), or None."""
    func = _main(mod)
    blocks = _blocks(func)
    if blocks:
        return R.add_unit_loop(R.BlockRef(blocks[0][1].name_hint))
    fixed = [R.unroll(_name(l)) for _, l in _loops(func) if isinstance(l.extent, IntImm)]
    return next((r for r in fixed if not r.violations(mod)), None)


def thread_binding_problems(func: PrimFunc) -> list[str]:
    """Why the thread-bound loops of ``func`` would not keep its meaning on a
    GPU (empty when they do): for each kernel, a tag bound twice on one path,
    a tag bound with different extents, an innermost block not under a loop
    of every tag the kernel binds, or one whose iteration values are not a
    one-to-one (affine) function of the kernel's loops, so that two threads
    could run one block instance; or a launch past CUDA's limits (an
    extent over :data:`~tirfun.target.CUDA_DIM_LIMITS`, more than
    1024 threads per block). This is a sufficient condition for
    the schedules drawn here, not a race check: the interpreter's GPU
    semantics is the judge."""
    problems: list[str] = []

    def kernel(root: For) -> None:
        extents: dict = {}
        reached: list[tuple[str, frozenset]] = []

        def visit(node, tags: frozenset, loops: dict) -> None:
            if isinstance(node, For):
                loops = {**loops, _name(node): node}
            if isinstance(node, For) and node.thread_binding is not None:
                tag = node.thread_binding
                if tag in tags:
                    problems.append(f"loop {_name(node)} is bound to {tag} inside another loop bound to it")
                if extents.setdefault(tag, node.extent) != node.extent:
                    problems.append(f"loops bound to {tag} have different extents")
                tags = tags | {tag}
            if isinstance(node, BlockRealize) and not any(
                    isinstance(inner, BlockRealize) for inner in stmt_nodes(node.block.body)):
                # a block holding no other block: its statements are what threads run
                reached.append((node.block.name_hint, tags))
                if not is_affine_binding(list(node.iter_values), loops):
                    # two threads could run one block instance
                    problems.append(f"block {node.block.name_hint} is not bound one to one to "
                                    "the loops of its kernel")
                return
            for child in _stmt_children(node):
                visit(child, tags, loops)

        visit(root, frozenset(), {})
        for tag, ext in extents.items():
            limit = CUDA_DIM_LIMITS.get(tag)
            if limit is not None and isinstance(ext, IntImm) and ext.value > limit:
                problems.append(f"{ext.value} threads for {tag}, more than a CUDA launch allows ({limit})")
        threads = [extents.get(t) for t in ("threadIdx.x", "threadIdx.y", "threadIdx.z")]
        if all(e is None or isinstance(e, IntImm) for e in threads) and math.prod(
                e.value for e in threads if e is not None) > CUDA_MAX_THREADS_PER_BLOCK:
            problems.append(f"more than {CUDA_MAX_THREADS_PER_BLOCK} threads per block")
        for name, tags in reached:
            missing = set(extents) - tags
            if missing:
                problems.append(f"block {name} is run by every thread of {', '.join(sorted(missing))}")

    def host(node) -> None:
        if isinstance(node, For) and node.thread_binding is not None:
            kernel(node)
            return
        for child in _stmt_children(node):
            host(child)

    host(func.body)
    return problems + _scoped_buffer_problems(func)


#: scopes whose storage a GPU gives each thread block (shared) or each thread
#: (local) of a kernel: a buffer of them allocated at the root is moved into
#: the kernel that uses it, so it must not carry values into or out of it
_KERNEL_SCOPES = ("shared", "warp", "local")


def _scoped_buffer_problems(func: PrimFunc) -> list[str]:
    """Buffers of a shared or local scope that a kernel uses and something
    outside it (the host or another kernel) uses too: as in TVM, the kernel
    sees its own storage, so what the outside wrote never reaches it and
    what it writes never leaves (a ``cache_read`` into ``shared`` filled
    on the host, a ``cache_write`` to ``local`` copied back on the host)."""
    def accessed(node) -> list:
        # loads, stores, and the views a block's match_buffer takes (a
        # tensorized block reads through them)
        used = [n.buffer if isinstance(n, (BufferLoad, BufferStore)) else n.source.buffer for n in walk(node)
                if isinstance(n, (BufferLoad, BufferStore, MatchBufferRegion))]
        return [b for b in used if b.storage_scope.startswith(_KERNEL_SCOPES)]

    # a kernel starts at a thread-bound loop or at a T.launch_thread
    kernels = [s for s in stmt_nodes(func) if launch_of(s) is not None]
    outermost, inside = [], set()
    for k in kernels:
        if id(k) not in inside:
            outermost.append(k)
            inside.update(id(s) for s in stmt_nodes(k))
    total = collections.Counter(accessed(func.body))
    problems = []
    for k in outermost:
        here = collections.Counter(accessed(k))
        for buf, count in sorted(here.items(), key=lambda item: item[0].name):
            if total[buf] > count:
                what = f"loop {_name(k)}" if isinstance(k, For) else f"T.launch_thread({launch_of(k)[0]!r})"
                problems.append(f"buffer {buf.name} of scope {buf.storage_scope} is used in the kernel of "
                                f"{what} and outside it, where the GPU gives the kernel its own")
    return problems


def _stmt_children(node) -> list:
    return [child for _, child in stmt_children(node)]


def _keeps_gpu_meaning(after: IRModule) -> bool:
    func = _main(after)
    if not any(launch_of(s) is not None for s in stmt_nodes(func)):
        return True
    return not thread_binding_problems(func)


def build_schedule(ch: Chooser, mod, *, max_steps: int = 6, primitives=PRIMITIVES) -> R.Pipeline:
    """A pipeline of 1 to ``max_steps`` rewrites, each valid on the module the
    previous ones produce (fewer only when nothing applies at all)."""
    mod = _module(mod)
    steps = []
    weights = [(p, _WEIGHTS.get(p, 2)) for p in primitives]  # a block primitive weighs 2
    for _ in range(ch.integer(1, max_steps)):
        chosen = None
        for _attempt in range(_ATTEMPTS):
            record = _draw_rewrite(ch, mod, ch.weighted(weights))
            if record is not None and not record.violations(mod):
                result = record(mod)
                if _keeps_gpu_meaning(result):
                    chosen = record
                    break
        if chosen is None:
            chosen = _fallback(mod)
            if chosen is None:
                break
            result = chosen(mod)
            if not _keeps_gpu_meaning(result):
                break
        mod = result
        steps.append(chosen)
        if getattr(chosen, "primitive", None) in ENDS_SCHEDULE:
            break
    return R.Pipeline(steps)


def primitive_counts(pipeline) -> dict[str, int]:
    """How many times each primitive is applied in ``pipeline``."""
    counts: dict[str, int] = {}
    for rewrite in pipeline:
        counts[rewrite.primitive] = counts.get(rewrite.primitive, 0) + 1
    return counts


def _with_events(pipeline: R.Pipeline) -> R.Pipeline:
    """Report the primitives of a drawn schedule to hypothesis, so
    ``--hypothesis-show-statistics`` shows in what share of the examples
    each one was applied."""
    from hypothesis import event

    for primitive in sorted(primitive_counts(pipeline)):
        event(f"schedule applies {primitive}")
    return pipeline


def loop_schedules(mod, *, max_steps: int = 6, primitives=PRIMITIVES):
    """A hypothesis strategy of pipelines of valid loop primitives for ``mod``."""
    from hypothesis import strategies as st

    # one byte string per schedule, as for programs: far cheaper than a draw
    # per choice, and it shrinks toward the simplest choices all the same
    size = schedule_bytes(max_steps)
    return st.binary(min_size=size, max_size=size).map(
        lambda data: _with_events(build_schedule(BytesChooser(data), mod, max_steps=max_steps,
                                                 primitives=primitives)))


def block_schedules(mod, *, max_steps: int = 6, primitives=ALL_PRIMITIVES):
    """A hypothesis strategy of pipelines of valid loop and block primitives
    for ``mod`` (see :func:`loop_schedules`)."""
    return loop_schedules(mod, max_steps=max_steps, primitives=primitives)


def random_block_schedule(mod, seed: int, *, max_steps: int = 6,
                          primitives=ALL_PRIMITIVES) -> R.Pipeline:
    """A pipeline of valid loop and block primitives for ``mod`` determined by ``seed``."""
    return build_schedule(RandomChooser(seed), mod, max_steps=max_steps, primitives=primitives)


def schedule_bytes(max_steps: int) -> int:
    """How many bytes of choices :func:`loop_schedules` draws per schedule."""
    return 96 * max_steps


def random_schedule(mod, seed: int, *, max_steps: int = 6, primitives=PRIMITIVES) -> R.Pipeline:
    """A pipeline of valid loop primitives for ``mod`` determined by ``seed``."""
    return build_schedule(RandomChooser(seed), mod, max_steps=max_steps, primitives=primitives)


# -- arguments that cannot be right --------------------------------------------------

_BAD_VALUES = (3, 2.5, None, object)


def build_bad_rewrite(ch: Chooser, mod):
    """A record with at least one argument that is wrong for ``mod``."""
    func = _main(_module(mod))
    loop_names = [_name(l) for _, l in _loops(func)] or ["i"]
    block_names = [b.name_hint for _, b in _blocks(func)] or ["B"]
    loop = R.LoopRef(ch.choice(loop_names))
    block = R.BlockRef(ch.choice(block_names))
    missing_loop = R.LoopRef("no_such_loop")
    missing_block = R.BlockRef("no_such_block")
    other_func = R.LoopRef(loop.name, "no_such_function")
    wrong = ch.choice((missing_loop, missing_block, other_func, block, ch.choice(_BAD_VALUES)))
    kind = ch.choice(PRIMITIVES)
    if kind == "split":
        if ch.chance(50):
            return R.split(wrong, [None, 2])
        factors = ch.choice(([None, None], [0, None], [-3, None], ["x", None], [2.5, None], [],
                             "factors", [True, None]))
        return R.split(loop, factors)
    if kind == "fuse":
        return R.fuse(*ch.choice(([], [missing_loop], [loop, loop], [block], [loop, wrong])))
    if kind == "reorder":
        return R.reorder(*ch.choice(([loop, loop], [missing_loop, loop], [block, loop], [loop, wrong])))
    if kind == "merge":
        return R.merge(*ch.choice(([loop], [loop, loop], [missing_loop, loop], [block, loop])))
    if kind == "add_unit_loop":
        return R.add_unit_loop(ch.choice((missing_block, missing_loop, other_func, 7)))
    if kind == "reorder_block_iter_var":
        return R.reorder_block_iter_var(ch.choice((block, missing_block, loop)),
                                        ch.choice(([0, 0], [-1], [5, 6, 7], "01", [1.0], [True])))
    if kind in ("parallel", "vectorize", "unroll"):
        return getattr(R, kind)(ch.choice((missing_loop, block, other_func, 1.5)))
    if kind == "bind":
        if ch.chance(50):
            return R.bind(loop, ch.choice(("threadIdx.w", "blockIdx", "", 3, None)))
        return R.bind(ch.choice((missing_loop, block)), "threadIdx.x")
    if kind == "annotate":
        if ch.chance(50):
            return R.annotate(ch.choice((missing_block, missing_loop, 4)), "k", 1)
        return R.annotate(block, ch.choice((3, None, ("k",))), ch.choice((None, object(), {1: 2})))
    return R.unannotate(ch.choice((block, loop, missing_block)), ch.choice(("no_such_key", 3, None)))


def bad_rewrites(mod):
    """A hypothesis strategy of records with a wrong argument for ``mod``."""
    from hypothesis import strategies as st

    return st.binary(min_size=32, max_size=32).map(lambda data: build_bad_rewrite(BytesChooser(data), mod))


__all__ = ["PRIMITIVES", "BLOCK_PRIMITIVES", "ALL_PRIMITIVES", "MINIMUM_PER_100", "loop_schedules",
           "random_schedule", "block_schedules", "random_block_schedule", "build_schedule",
           "primitive_counts", "schedule_bytes", "bad_rewrites", "build_bad_rewrite", "ENDS_SCHEDULE"]
