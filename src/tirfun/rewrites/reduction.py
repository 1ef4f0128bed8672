"""Reductions: decompose_reduction and rfactor.

``decompose_reduction`` moves a reduction block's ``init`` into a block of
its own placed before a loop; ``rfactor`` turns one reduction loop into a
data-parallel axis of a new buffer, reduced again by a write-back block.
Both follow TVM v0.20's semantics and preconditions; where TVM computes a
wrong answer (a loop that repeats the whole reduction, a predicate from a
split whose factors do not divide the extent) these either compute the
right one or refuse with a ScheduleError, as each docstring says.
"""

from __future__ import annotations

import functools

import attrs
from pyrsistent import pvector

from ..analysis.arith.iter_map import is_bijective, simplify_index
from ..analysis.arith.simplify import simplify_expr
from ..analysis.arith.terms import int_value
from ..analysis.traversal import Path, ancestors, iter_children, replace_at, walk
from ..nodes import (
    GE, GT, LE, LT, EQ, Add, And, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Call,
    FloatImm, For, ForKind, IntImm, IterVar, IterVarType, LetStmt, Max, Min, Mul, Or, PrimExpr, Range, Select,
    SeqStmt, Stmt, Var, binary, const,
)
from ..nodes.base import with_fields
from ..nodes.reducer import CommReducer
from ..te.reduce import max_value, min_value  # TVM's finite extremes, as its reducers use
from .base import Checks, Outcome, Rewrite, commit, register
from .buffer_swap import copier, rebuilt_above
from .checks import (
    all_block_realizes, child_blocks, describe, loops_above, loops_and_parent, reduction_block_violation,
    resolve_block, resolve_loop, resolve_site, scope_path,
)
from .errors import (
    FactorAxisOutOfRangeError, LoopHeightError, LoopPositionError, LoopPropertyError,
    NoMatchedReducerError, NonSingleChildBlockError, NoScopeBlockError, NotReductionBlockError,
    InitAllocationError, InitPlacementError, LoopVariableInBlockError, NotSerialLoopKindError,
    NotStagePipelineError, ReductionStartError, RepeatedReductionError, RFactorNotApplicableError,
)
from .exprs import is_const_int, substitute, substitute_expr, uses_any, var_names
from .index import (
    _loops_over, _realizes_along, _stated, binds_let, derive_init_index, derive_scope_index, leaf_binds_lets,
    var_names_in_buffer,
)
from .name_pool import NamePool
from .names import fresh_name, suffixed
from .refs import BlockRef, as_block_ref, as_loop_ref
from .serialize import py_value

_TRUE = IntImm("bool", 1)


# ------------------------------------------------------------------ shared helpers

def _conjuncts(e: PrimExpr) -> list[PrimExpr]:
    """The terms of a conjunction (``a and b and c``), constants True dropped."""
    if isinstance(e, And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    if isinstance(e, IntImm) and e.dtype.is_bool and e.value == 1:
        return []
    return [e]


def _conjoin(terms) -> PrimExpr:
    out = None
    for t in terms:
        out = t if out is None else And(out, t)
    return _TRUE if out is None else out


def _loop_env(loops) -> dict:
    """Constant ranges of the loops with constant bounds, for the simplifier."""
    env = {}
    for loop in loops:
        lo, ext = getattr(loop.min, "value", None), getattr(loop.extent, "value", None)
        if isinstance(lo, int) and isinstance(ext, int) and ext > 0:
            env[loop.loop_var] = (lo, lo + ext - 1)
    return env


def _used_loops(values, loops: list[For]) -> list[set[str]]:
    """For each bound value, the names of the loops it uses."""
    names = {loop.loop_var.name for loop in loops}
    # a value that is a variable (nearly every one) names itself alone
    return [({v.name} & names) if type(v) is Var else (var_names(v) & names) for v in values]


def _insert_before(site, path: Path, first: Stmt, replaced: Stmt) -> tuple[Path, Stmt]:
    """Where to commit, and what, to put ``first`` right before the
    statement at ``path`` (itself replaced by ``replaced``). A statement in
    a sequence gets a new sequence, so the paths of its siblings stay
    meaningful for the index."""
    if path and path[-1][1] is not None and isinstance(site.at(path[:-1]), SeqStmt):
        parent: SeqStmt = site.at(path[:-1])
        k = path[-1][1]
        return path[:-1], parent.with_items(k, k + 1, [first, replaced])
    return path, SeqStmt([first, replaced])


def _taken(site) -> NamePool:
    """The names in use, as a pool that grows as names are chosen."""
    return NamePool(site.index.names)


def _fresh(base: str, taken: set) -> str:
    name = fresh_name(base, taken)
    taken.add(name)
    return name


# -------------------------------------------------------------- decompose_reduction

@register
@attrs.frozen
class DecomposeReduction(Rewrite):
    """Split a reduction block into an init block ``<name>_init``, placed
    right before ``loop``, and the update block ``<name>_update`` (the
    block without its ``init``, reading what it writes).

    The init block has the data-parallel iteration variables of the block;
    the loops between ``loop`` and the block that feed them are re-created
    above it (``i_init``), the others are dropped, and the block's
    predicate keeps its terms on the loops kept (a term on a dropped
    reduction loop is taken at that loop's start, where the original
    ``init`` runs). Returns the init block.

    Correct where TVM is not: when the loops from ``loop`` down to the
    block reach an instance of the block more than once (after
    ``compute_at``, a consumer's loop around the reduction repeats it, and
    the original re-initialises it on each repetition), the init goes
    inside the repeating loops: before the outermost loop at or below
    ``loop`` from which each instance is reached once. TVM puts it before
    ``loop`` and the result accumulates over the repetitions.

    Requirements, each with the error raised when it fails:

    1. the block and the loop exist (UnknownBlockError, UnknownLoopError,
       RefKindError, UnknownFunctionError);
    2. the loop is an ancestor of the block in its scope (LoopPositionError);
    3. the block is a reduction block (NotReductionBlockError) whose loops
       start each reduction variable at the start of its domain, where its
       init runs (ReductionStartError; not so in the later parts of a
       ``loop_partition``). A loop the init leaves out whose extent may be
       zero (a symbolic ``range(n)``, or ``range(v)`` for a ``v`` of an
       enclosing block) runs no instance there and so no init: the moved
       init runs under ``T.where(0 < n)`` (TVM moves it regardless, and
       initialises what the original left alone); where that extent names
       another loop the init leaves out, no such condition exists
       (ReductionStartError);
    4. no loop above ``loop`` feeds a reduction iteration variable
       (LoopHeightError);
    5. the reduction is not repeated below a loop that feeds a reduction
       iteration variable (RepeatedReductionError);
    6. no other block under the loop where the init goes runs before the
       block and reads or writes what it writes (a cache_inplace copy
       placed in its loop): it would meet the init's values, or overwrite
       them; and a block after it under that loop touches, in an iteration
       of the loop, only what the block wrote in that iteration (shown by
       region cover): an element first updated in a later iteration would
       meet the init where the original met the buffer's earlier contents
       (InitPlacementError; TVM moves the init regardless).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            for i, k in T.grid(4, 8):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

        # rewrite
        decompose_reduction("B", "k")

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B_init"):
                    vi = T.axis.spatial(4, i)
                    T.reads()
                    T.writes(B[vi])
                    B[vi] = T.float32(0)
                for k in range(8):
                    with T.block("B_update"):
                        vi_1, vk = T.axis.remap("SR", [i, k])
                        T.reads(B[vi_1], A[vi_1, vk])
                        T.writes(B[vi_1])
                        B[vi_1] = B[vi_1] + A[vi_1, vk]
    """

    primitive = "decompose_reduction"

    block: object = attrs.field(converter=as_block_ref)
    loop: object = attrs.field(converter=as_loop_ref)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block, self.loop])
        bpath = resolve_block(chk, site, self.block)
        lpath = resolve_loop(chk, site, self.loop)
        rpath = bpath[:-1]
        loops, realize = loops_and_parent(site, bpath)
        block: Block = realize.block
        subject = describe(self.block)
        position = next((k for k, (p, _) in enumerate(loops) if p == lpath), None)
        if position is None:
            chk.stop(LoopPositionError, describe(self.loop),
                     f"the loop is not an ancestor of block {block.name_hint!r} in its scope; "
                     "decompose_reduction places the init before a loop above the block", site.at(lpath))
        target: For = loops[position][1]
        why = reduction_block_violation(site, bpath, realize)
        if why is not None:
            chk.stop(NotReductionBlockError, subject, f"the block is not a reduction block: {why}", realize)
        why = _reduction_start_violation(block, realize, loops)
        if why is not None:
            chk.stop(ReductionStartError, subject, why, realize)
        check_init_allocation(chk, subject, realize, "the init block, split off,")
        fors = [loop for _, loop in loops]
        used = _used_loops(realize.iter_values, fors)
        reduce_loops: set[str] = set()
        spatial_loops: set[str] = set()
        for iv, names in zip(block.iter_vars, used):
            (reduce_loops if iv.iter_type is IterVarType.CommReduce else spatial_loops).update(names)
        for _, loop in loops[:position]:
            if loop.loop_var.name in reduce_loops:
                chk.stop(LoopHeightError, describe(self.loop),
                         f"loop {loop.loop_var.name!r} above it feeds a reduction iteration variable of "
                         f"block {block.name_hint!r}; the init must go before every loop the reduction "
                         "runs over", loop, target)
        # the loops from the init's place down to the block must reach each
        # instance of the block once: a loop that repeats the reduction (a
        # consumer's loop around it after compute_at) re-initialises it on
        # each repetition, so the init goes inside that loop, never below a
        # loop that feeds a reduction variable
        first_reduce = next((k for k, (_, l) in enumerate(loops) if l.loop_var.name in reduce_loops),
                            len(loops))
        # a spatial variable that does not index what the block writes
        # re-initialises the element at each of its values, as a repeating
        # loop does: its loops stay above the init
        rerun = set()
        spatial = [(iv, names) for iv, names in zip(block.iter_vars, used)
                   if names and iv.iter_type is IterVarType.DataPar]
        if spatial:
            # the variables the written indices name (not the buffers'):
            # most are the variables themselves
            mins = [rng.min for r in block.writes for rng in r.region]
            if all(type(m) is Var for m in mins):
                written = {m.name for m in mins}
            else:
                written = set().union(*[var_names(x) for r in block.writes for rng in r.region
                                        for x in (rng.min, rng.extent)])
            rerun = set().union(*[names for iv, names in spatial
                                  if iv.var.name not in written and int_value(iv.dom.extent) != 1])
        below = max((k + 1 for k, (_, l) in enumerate(loops) if l.loop_var.name in rerun), default=0) \
            if rerun else 0
        start = next((k for k in range(max(position, below), first_reduce + 1)
                      if _visits_once(realize.iter_values, loops[k:], realize.predicate)), None)
        if start is None:
            repeating = [l.loop_var.name for _, l in loops[position:]
                         if l.loop_var.name not in reduce_loops and not _is_unit(l)]
            chk.stop(RepeatedReductionError, subject,
                     f"the loops from {target.loop_var.name!r} down to the block reach an instance of it "
                     f"more than once (through {', '.join(map(repr, repeating))}), so they repeat the "
                     "reduction, and every placement that avoids the repetition lies below a loop that "
                     "feeds a reduction variable; no init placement keeps the meaning", realize)
        if start < len(loops):  # else the init goes right before the block: nothing runs between
            _check_init_placement(chk, site, rpath, realize, loops[start], subject)
        empty = _maybe_empty(chk, site, rpath, realize, loops, start, subject)
        return site, rpath, realize, loops, start, empty

    def build(self, plan) -> Outcome:
        site, rpath, realize, loops, start, empty = plan
        block = realize.block
        taken = _taken(site)
        # the init block: the data-parallel iteration variables, fresh names
        var_map = {}
        init_ivs, init_values = [], []
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type is not IterVarType.DataPar:
                continue
            new_var = Var(_fresh(iv.var.name, taken), iv.var.dtype)
            var_map[iv.var] = new_var
            init_ivs.append(_NEW_VAR(iv, new_var))  # its domain, type and tag
            init_values.append(value)
        init_body = None
        if not block.alloc_buffers and not block.match_buffers:
            init_body = _substitute_stores(block.init, var_map)
        if init_body is None:
            init_body = substitute(block.init, var_map)
        writes = [BufferRegion(w.buffer, [Range(substitute_expr(r.min, var_map), substitute_expr(r.extent, var_map))
                                          for r in w.region]) for w in block.writes]
        # the loops from the placement down to the block: re-create those the
        # init's bindings use, drop the others
        bound = set()  # the variables the init's bindings name
        for v in init_values:
            bound |= var_names(v)
        chosen, dropped = [], []
        for _, loop in loops[start:]:
            (chosen if loop.loop_var.name in bound else dropped).append(loop)
        loop_map = {loop.loop_var: Var(_fresh(suffixed(loop.loop_var.name, "init"), taken), loop.loop_var.dtype)
                    for loop in chosen}
        predicate = _init_predicate(realize.predicate, dropped, [l for _, l in loops])
        if empty:
            # the block, and so its init, runs only where those loops run
            predicate = _conjoin([LT(IntImm(e.dtype, 0), e) for e in empty] + _conjuncts(predicate))
        blocks = NamePool(site.index.blocks)
        init_name = _fresh(suffixed(block.name_hint, "init"), blocks)
        # the block's annotations, iteration variables, regions and
        # statements made through their checks: every rule of a block holds,
        # and it is copied from the old one
        init_block = _NEW_INIT(block, pvector(init_ivs), _EMPTY, pvector(writes), init_name, init_body, None,
                               _EMPTY, _EMPTY)
        init_realize = BlockRealize([substitute_expr(v, loop_map) for v in init_values],
                                    substitute_expr(predicate, loop_map), init_block)
        body: Stmt = init_realize
        init_loops = []
        for loop in reversed(chosen):
            body = For(loop_map[loop.loop_var], loop.min, loop.extent, loop.kind, body,
                       thread_binding=loop.thread_binding)
            init_loops.append(body)
        init_loops.reverse()
        # the update block
        update_name = _fresh(suffixed(block.name_hint, "update"), blocks)
        read_bufs = {r.buffer for r in block.reads}
        reads = [w for w in block.writes if w.buffer not in read_bufs] + list(block.reads)
        # a name, no init, regions of the block's own: every rule of a block
        # held for the old one and holds again, as the realize's do for a
        # block of the same iteration variables; both are copied
        update = _NEW_UPDATE(block, update_name, None, pvector(reads))
        new_realize = _NEW_BLOCK(realize, update)
        # the statement the init goes before: the loop at the placement, or
        # the block itself when every loop is above it
        at, old_at = loops[start] if start < len(loops) else (rpath, realize)
        # the nodes above a realize or a loop, copied where their checks cannot fail
        replaced = replace_at(old_at, rpath[len(at):], new_realize, rebuild=rebuilt_above)
        path, new = _insert_before(site, at, body, replaced)
        index = derive_init_index(site.index, at, path != at, old_at, init_loops, init_realize, rpath, realize,
                                  new_realize)
        return Outcome(commit(site, path, new, index=index, rebuild=rebuilt_above), BlockRef(init_name, site.func_name),
                       renamed=((BlockRef(block.name_hint, site.func_name),
                                 BlockRef(update_name, site.func_name)),))

    def python_args(self):
        return [py_value(self.block), py_value(self.loop)]


#: an init iteration variable (a variable of the old one's dtype), the init
#: block (every field but the annotations) from the old block, the update
#: block (its name, init and reads) and its realize, copied unchecked (see build)
_NEW_VAR = copier(IterVar, ("var",))
_NEW_INIT = copier(Block, ("iter_vars", "reads", "writes", "name_hint", "body", "init", "alloc_buffers",
                           "match_buffers"))
_EMPTY = pvector()
_NEW_UPDATE = copier(Block, ("name_hint", "init", "reads"))
_NEW_BLOCK = copier(BlockRealize, ("block",))


def _substitute_stores(stmt: Stmt, mapping: dict) -> Stmt | None:
    """``substitute(stmt, mapping)`` for a store or a sequence of stores
    whose buffers cannot mention the variables of ``mapping`` (declared
    outside the block whose iteration variables these are), as a
    substitution of their expressions; None for any other statement."""
    if type(stmt) is BufferStore:
        changes = {}
        value = substitute_expr(stmt.value, mapping)
        if value is not stmt.value:
            changes["value"] = value
        indices = [substitute_expr(i, mapping) for i in stmt.indices]
        if any(a is not b for a, b in zip(indices, stmt.indices)):
            changes["indices"] = indices
        if stmt.predicate is not None:
            predicate = substitute_expr(stmt.predicate, mapping)
            if predicate is not stmt.predicate:
                changes["predicate"] = predicate
        return with_fields(stmt, **changes) if changes else stmt
    if type(stmt) is SeqStmt:
        items = []
        for item in stmt.seq:
            new = _substitute_stores(item, mapping)
            if new is None:
                return None
            items.append(new)
        if all(a is b for a, b in zip(items, stmt.seq)):
            return stmt
        return with_fields(stmt, seq=items)
    return None


def check_init_allocation(chk: Checks, subject: str, realize: BlockRealize, moved: str) -> None:
    """The block's init uses no buffer the block allocates or views with a
    ``match_buffer`` (``moved`` says where the init goes, for the
    message): outside the block, nothing declares it (TVM moves the init
    regardless, naming an undeclared buffer)."""
    block = realize.block
    if (not block.alloc_buffers and not block.match_buffers) or block.init is None:
        return
    from ..analysis.mentions import buffer_names_in

    named = buffer_names_in(block.init)
    own = next((b for b in block.alloc_buffers if b.name in named), None)
    if own is not None:
        chk.stop(InitAllocationError, subject, f"the init uses {own.name}, which the block allocates; {moved} "
                 "would use it outside that allocation", realize)
    view = next((m for m in block.match_buffers if m.buffer.name in named), None)
    if view is not None:
        chk.stop(InitAllocationError, subject, f"the init uses {view.buffer.name}, which the block's match_buffer "
                 f"declares as a view of {view.source.script()}; {moved} would use it where "
                 "nothing declares it", realize)


def _maybe_empty(chk: Checks, site, rpath: Path, realize: BlockRealize, loops, start: int,
                 subject: str) -> list[PrimExpr]:
    """The extents of the loops the init leaves out (those from ``start``
    down that its bindings do not use) that may be zero: where one is, the
    block runs no instance and so its init never runs, so the moved init
    runs under the condition that each is positive (TVM moves it
    regardless, and initialises what the original left alone). A ScheduleError
    where such an extent names a left-out loop, which the init cannot."""
    bound = set()
    block = realize.block
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type is IterVarType.DataPar:
            bound |= var_names(value)
    left = [l for _, l in loops[start:] if l.loop_var.name not in bound]
    out, clash = empty_extents(site, rpath, [l for _, l in loops], left, {l.loop_var.name for l in left})
    if clash is not None:
        loop, names = clash
        chk.stop(ReductionStartError, subject,
                 f"the loop {loop.loop_var.name!r} may run no iteration (its extent {loop.extent.script()} "
                 f"may be zero), and where it does not, neither does the block nor its init; the extent "
                 f"names loop {uses_any(loop.extent, names)!r}, which the init leaves out, so no condition "
                 "before the loop can say when the init runs", loop, realize)
    return out


def empty_extents(site, path: Path, around: list, left: list, unseen: set):
    """For an init moved out of the loops ``left`` (decompose_reduction,
    blockize): the extents of those that may be zero, proven otherwise
    over the loops ``around`` and the blocks enclosing ``path``, as
    ``(extents, None)``; the init runs where each is positive. Where such
    an extent names a loop of ``unseen`` (which the init does not run,
    so no condition before it can read), ``(extents so far, (that loop,
    unseen))`` instead."""
    loose = [l for l in left if not (type(l.extent) is IntImm and l.extent.value >= 1)]
    if not loose:
        return [], None  # constant extents (nearly always)
    from ..analysis.arith import can_prove
    from .cache import _enclosing_domains

    dom = {loop.loop_var: Range(loop.min, loop.extent) for loop in around}
    dom.update(_enclosing_domains(site, path))
    out = []
    for loop in loose:
        if can_prove(GE(loop.extent, IntImm(loop.extent.dtype, 1)), dom):
            continue
        if uses_any(loop.extent, unseen) is not None:
            return out, (loop, unseen)
        out.append(loop.extent)
    return out, None


def _reduction_start_violation(block: Block, realize: BlockRealize, loops) -> str | None:
    """Why the loops do not start each reduction variable of the block at
    the start of its domain (where its ``init`` runs), or None. After
    ``loop_partition`` of a reduction loop, the later parts continue the
    reduction and never run the init; splitting it out would add one."""
    at_start = {l.loop_var: l.min for _, l in loops}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type is not IterVarType.CommReduce:
            continue
        first, lo = (at_start.get(value) if type(value) is Var else None), iv.dom.min
        if type(first) is IntImm and type(lo) is IntImm and first.value == lo.value and first.dtype == lo.dtype:
            continue  # bound to a loop that starts where the domain does (nearly always)
        first = simplify_index(substitute_expr(value, at_start))
        gap = simplify_index(first - iv.dom.min) if first.dtype == iv.dom.min.dtype else None
        if not (isinstance(gap, IntImm) and gap.value == 0):
            return (f"the loops start the reduction variable {iv.var.name} at {first.script()}, not at the "
                    f"start of its domain {iv.dom.min.script()}, so the block's init never runs there")
    return None


def _visits_once(values, loops, predicate=None) -> bool:
    """Whether each iteration of ``loops`` (the others held fixed) where
    ``predicate`` holds gives a different instance of a block bound to
    ``values``."""
    plain = _visits_once_plain(values, loops)
    if plain is not None:
        return plain
    return is_bijective(list(values), {l.loop_var.name: l for _, l in loops}, predicate)


def _visits_once_plain(values, loops) -> bool | None:
    """:func:`_visits_once` where every value is an integer variable and
    every loop has a constant extent of at least 1 (nearly always): then
    each loop that runs more than once must be bound by exactly one value,
    as the bijective iterator map requires; None where that does not
    apply."""
    bound: dict = {}
    for v in values:
        if type(v) is not Var or not v.dtype.is_index:
            return None
        bound[v.name] = bound.get(v.name, 0) + 1
    for _, loop in loops:
        ext = loop.extent
        if type(ext) is not IntImm or ext.value < 1:
            return None
        if ext.value > 1 and bound.get(loop.loop_var.name, 0) != 1:
            return False
    return True


def _is_unit(loop: For) -> bool:
    return isinstance(loop.extent, IntImm) and loop.extent.value == 1


def _init_predicate(predicate: PrimExpr, dropped: list[For], loops: list[For]) -> PrimExpr:
    """The init block's predicate: the terms on loops it keeps, and the
    terms on dropped loops taken at those loops' start (where the
    reduction's ``init`` runs)."""
    given = _conjuncts(predicate)
    if not given:
        return _TRUE  # no predicate (nearly always): nothing to take at a start
    names = {loop.loop_var.name for loop in dropped}
    at_start = {loop.loop_var: loop.min for loop in dropped}
    env = None  # the loops' ranges, found when a term first needs simplifying
    terms = []
    for term in given:
        if uses_any(term, names) is not None:
            env = _loop_env(loops) if env is None else env
            term = simplify_expr(substitute_expr(term, at_start), env)
        terms.extend(_conjuncts(term))
    return _conjoin(terms)


def decompose_reduction(block, loop) -> DecomposeReduction:
    """The :class:`DecomposeReduction` record: ``decompose_reduction("C", "k")``."""
    return DecomposeReduction(block, loop)


# --------------------------------------------------------------------- reducers

@functools.cache
def _registry(dtypes: tuple) -> tuple[CommReducer, ...]:
    """TVM's registered reducers for values of ``dtypes``, in its order
    (immutable values of immutable keys: made once per tuple of dtypes)."""
    def pair(name):
        return [Var(f"{name}{k}", dt) for k, dt in enumerate(dtypes)]

    out = []
    if len(dtypes) == 1:
        dt = dtypes[0]
        x, y = Var("x", dt), Var("y", dt)
        out.append(CommReducer([x], [y], [binary(Add, x, y)], [const(0, dt)]))
        out.append(CommReducer([x], [y], [binary(Mul, x, y)], [const(1, dt)]))
        out.append(CommReducer([x], [y], [Min(x, y)], [max_value(dt)]))
        out.append(CommReducer([x], [y], [Max(x, y)], [min_value(dt)]))
    elif len(dtypes) == 2:
        x, y = pair("x"), pair("y")
        d0, d1 = dtypes
        out.append(CommReducer(x, y, [binary(Add, x[0], y[0]), binary(Add, x[1], y[1])],
                               [const(0, d0), const(0, d1)]))
        for better, tie, ident in ((GE, None, min_value(d1)), (GT, LT, min_value(d1)),
                                   (LE, None, max_value(d1)), (LT, LT, max_value(d1))):
            wins = better(x[1], y[1])
            if tie is None:
                idx, val = Select(wins, x[0], y[0]), Select(wins, x[1], y[1])
            else:
                idx = Select(Or(wins, And(EQ(x[1], y[1]), tie(x[0], y[0]))), x[0], y[0])
                val = Select(wins, x[1], y[1])
            out.append(CommReducer(x, y, [idx, val], [const(-1, d0), ident]))
    return tuple(out)


def _match(pattern: PrimExpr, expr: PrimExpr, binds: dict) -> bool:
    """Whether ``expr`` has the shape of ``pattern``, whose reducer variables
    (the keys allowed in ``binds``) stand for any sub-expression, the same
    one at each occurrence."""
    if isinstance(pattern, Var) and pattern in binds:
        if binds[pattern] is None:
            binds[pattern] = expr
            return True
        return binds[pattern] == expr
    if type(pattern) is not type(expr):
        return False
    if isinstance(pattern, Var):
        return pattern == expr
    for a in attrs.fields(type(pattern)):
        p, e = getattr(pattern, a.name), getattr(expr, a.name)
        if isinstance(p, PrimExpr):
            if not _match(p, e, binds):
                return False
        elif type(p).__name__ == "PVector":
            if len(p) != len(e):
                return False
            for pi, ei in zip(p, e):
                if isinstance(pi, PrimExpr):
                    if not _match(pi, ei, binds):
                        return False
                elif pi != ei:
                    return False
        elif p != e:
            return False
    return True


@attrs.frozen
class _Reduction:
    """A recognised reduction: the reducer, the stores it updates (with the
    stored values' right-hand sides) and the identities."""

    reducer: CommReducer
    updates: tuple        # BufferStore per value, in the reducer's order
    rhs: tuple            # the combined right-hand value per value


def _recognise(chk: Checks, block: Block, realize) -> _Reduction:
    """TVM's reading of a reduction block for rfactor (stops on failure)."""
    subject = f"block {block.name_hint!r}"

    def fail(cond: int, what: str):
        chk.stop(RFactorNotApplicableError, subject,
                 f"rfactor cannot read the reduction (condition {cond}): {what}", realize)

    init = block.init
    if any(isinstance(s, BufferStore) and s.predicate is not None
           for s in (init, block.body, *getattr(init, "seq", ()))):
        fail(1, "a store of the block is predicated (a masked store)")
    if isinstance(init, BufferStore):
        inits = [init]
    elif isinstance(init, SeqStmt) and all(isinstance(s, BufferStore) for s in init.seq):
        inits = list(init.seq)
        if len({s.buffer for s in inits}) != len(inits):
            fail(2, "the init stores into one buffer twice")
    else:
        fail(1, "the init is not a store or a sequence of stores")
    n = len(inits)
    body = block.body
    if isinstance(body, BufferStore):
        if n != 1:
            fail(3, f"the init stores {n} values but the body one, without LetStmt values")
        updates = [body]
    else:
        lets = []
        node = body
        while isinstance(node, LetStmt) and len(lets) < n:
            lets.append(node)
            node = node.body
        if len(lets) != n or isinstance(node, LetStmt):
            fail(3, f"the body does not bind {n} LetStmt values, one per value of the init")
        if len({l.var for l in lets}) != n:
            fail(4, "the LetStmt variables repeat")
        stores = [node] if isinstance(node, BufferStore) else list(node.seq) if isinstance(node, SeqStmt) else None
        if stores is None or not all(isinstance(s, BufferStore) for s in stores):
            fail(5, "under the LetStmts there is not a store or a sequence of stores")
        if len(stores) != n:
            fail(6, f"the body stores {len(stores)} values, the init {n}")
        position = {l.var: k for k, l in enumerate(lets)}
        updates = [None] * n
        for s in stores:
            if not isinstance(s.value, Var) or s.value not in position:
                fail(7, "a stored value is not one of the LetStmt variables")
            if s.predicate is not None:
                fail(5, "a store under the LetStmts is predicated (a masked store)")
            k = position[s.value]
            if updates[k] is not None:
                fail(8, "a LetStmt variable is stored twice")
            updates[k] = BufferStore(s.buffer, lets[k].value, s.indices)
        if len({u.buffer for u in updates}) != n:
            fail(9, "the body stores into one buffer twice")
    shape = updates[0].buffer.shape
    indices = updates[0].indices
    identities = [None] * n
    for s in inits:
        k = next((j for j, u in enumerate(updates) if u.buffer == s.buffer), None)
        if k is None:
            fail(10, f"the init stores into {s.buffer.name}, which the body does not update")
        identities[k] = s.value
    for u, s in zip(updates, inits):
        if len(u.buffer.shape) != len(shape) or any(a != b for a, b in zip(u.buffer.shape, shape)):
            fail(11, "the buffers written have different shapes")
    for s in list(inits) + list(updates):
        if list(s.indices) != list(indices):
            fail(12, "the stores use different indices")
    loads = [BufferLoad(u.buffer, u.indices) for u in updates]
    for reducer in _registry(tuple(u.buffer.dtype for u in updates)):
        if list(reducer.identity_element) != identities:
            continue
        binds = {v: None for v in list(reducer.lhs) + list(reducer.rhs)}
        if not all(_match(r, u.value, binds) for r, u in zip(reducer.result, updates)):
            continue
        if [binds[v] for v in reducer.lhs] != loads:
            continue
        return _Reduction(reducer, tuple(updates), tuple(binds[v] for v in reducer.rhs))
    chk.stop(NoMatchedReducerError, subject,
             "the identities and the combiner of the reduction match no known reducer (sum, product, "
             "min, max, the pair sum, argmax and argmin forms)", realize)


# ----------------------------------------------------------------------- rfactor

@register
@attrs.frozen
class RFactor(Rewrite):
    """Factor a reduction over ``loop``: a new block ``<name>_rf`` computes
    partial results into a new buffer ``<buffer>_rf`` with one more
    dimension (at ``factor_axis``) indexed by the loop, and the original
    block, now a write-back, reduces that dimension into the output. The
    loop becomes a data-parallel axis of the ``_rf`` block, so it can then
    be parallelized or vectorized. The ``_rf`` block runs under a copy of
    every loop above the block (fresh names), before the outermost one;
    the write-back keeps the loops that do not feed a reduction variable and
    the rfactor loop. Returns the ``_rf`` block.

    Correct where TVM is not: when the block's predicate (from a split
    whose factors do not divide the extent) involves reduction loops, TVM
    leaves the slots of the rfactor buffer that no iteration reaches
    uninitialised and the write-back reads them. Here the predicate's terms
    on reduction loops guard the value combined instead
    (``T.if_then_else(cond, value, identity)``), so every slot is
    initialised; the write-back keeps the terms on the loops it keeps,
    which TVM drops (writing outside the output when a spatial loop was
    split that way).

    Requirements, each with the error raised when it fails:

    1. the loop exists (UnknownLoopError, RefKindError,
       UnknownFunctionError) and ``factor_axis`` is an int in
       ``[-(ndim + 1), ndim]`` (FactorAxisOutOfRangeError);
    2. exactly one block is under the loop (NonSingleChildBlockError), and
       it is a reduction block (NotReductionBlockError) whose loops start
       each reduction variable at the start of its domain
       (ReductionStartError) inside a block that can hold the new buffer
       (NoScopeBlockError);
    3. the loop is serial (NotSerialLoopKindError);
    4. the loops above the block: the rfactor loop feeds reduction
       variables only, no loop feeds both kinds, the block is the first
       block under the outermost loop, a loop that feeds nothing and runs
       more than once is not under a reduction loop, the rfactor loop's
       extent uses no loop variable (LoopPropertyError), and the outermost
       reduction loop has only this block under it
       (NonSingleChildBlockError);
    5. the reduction has the form rfactor reads (RFactorNotApplicableError)
       with a known reducer (NoMatchedReducerError);
    6. no other block under the loops writes a buffer the block reads
       (NotStagePipelineError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            for i, k_0, k_1 in T.grid(4, 2, 4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(8, k_0 * 4 + k_1)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

        # rewrite
        rfactor("k_1", 0)

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            B_rf = T.alloc_buffer((4, 4))
            for i_1, k_0_1, k_1_1 in T.grid(4, 2, 4):
                with T.block("B_rf"):
                    vk_1 = T.axis.spatial(4, k_1_1)
                    vi = T.axis.spatial(4, i_1)
                    vk_0 = T.axis.reduce(2, k_0_1)
                    with T.init():
                        B_rf[vk_1, vi] = T.float32(0)
                    B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
            for i, k_1 in T.grid(4, 4):
                with T.block("B"):
                    vk_1_1 = T.axis.reduce(4, k_1)
                    vi_1 = T.axis.spatial(4, i)
                    with T.init():
                        B[vi_1] = T.float32(0)
                    B[vi_1] = B[vi_1] + B_rf[vk_1_1, vi_1]
    """

    primitive = "rfactor"

    loop: object = attrs.field(converter=as_loop_ref)
    factor_axis: object = 0

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.loop])
        lpath = resolve_loop(chk, site, self.loop)
        rf_loop: For = site.at(lpath)
        subject = describe(self.loop)
        kids = list(child_blocks(rf_loop, lpath))
        if len(kids) != 1:
            chk.stop(NonSingleChildBlockError, subject,
                     f"rfactor needs exactly one block under the loop, it has {len(kids)}", rf_loop)
        rpath, realize = kids[0]
        bpath = rpath + (("block", None),)
        block = realize.block
        scope = scope_path(site, bpath)
        if scope is None:
            chk.stop(NoScopeBlockError, f"block {block.name_hint!r}",
                     "the block is not inside a block that could allocate the rfactor buffer; "
                     "give the function a root block", realize)
        why = reduction_block_violation(site, bpath, realize)
        if why is not None:
            chk.stop(NotReductionBlockError, f"block {block.name_hint!r}",
                     f"the block is not a reduction block: {why}", realize)
        loops = loops_above(site, bpath)
        why = _reduction_start_violation(block, realize, loops)
        if why is not None:
            chk.stop(ReductionStartError, f"block {block.name_hint!r}", why, realize)
        if not block.iter_vars:
            # an opaque block names the loops around it, where only its
            # iteration variables are carried to the rfactor block's loops
            named = uses_any(block, {l.loop_var.name for _, l in loops})
            if named is not None:
                chk.stop(LoopVariableInBlockError, f"block {block.name_hint!r}",
                         f"the block has no iteration variables and uses loop {named!r} around it; the rfactor "
                         "block, under new loops, would name a variable nothing binds", realize)
        if rf_loop.kind is not ForKind.SERIAL:
            chk.stop(NotSerialLoopKindError, subject,
                     f"the loop is {rf_loop.kind.value}; rfactor applies to serial loops only", rf_loop)
        fors = [loop for _, loop in loops]
        used = _used_loops(realize.iter_values, fors)
        dp, rd = set(), set()
        for iv, names in zip(block.iter_vars, used):
            (rd if iv.iter_type is IterVarType.CommReduce else dp).update(names)
        self._check_loops(chk, site, loops, rf_loop, realize, dp, rd)
        found = _recognise(chk, block, realize)
        buf = found.updates[0].buffer
        views = {m.buffer: m.source for m in block.match_buffers}
        through = next((u.buffer for u in found.updates if u.buffer in views), None)
        if through is not None:
            # the rfactor buffer takes the shape of what the block writes:
            # of a view, it would drop the dimensions the view's region
            # fixes, and the block's instances would share its slots
            chk.stop(RFactorNotApplicableError, f"block {block.name_hint!r}",
                     f"the block writes its reduction through {through.name}, a match_buffer view of "
                     f"{views[through].script()}; rfactor needs the reduction written to a buffer of the scope",
                     realize)
        ndim = len(buf.shape)
        axis = self.factor_axis
        if isinstance(axis, bool) or not isinstance(axis, int) or not -(ndim + 1) <= axis <= ndim:
            chk.stop(FactorAxisOutOfRangeError, subject,
                     f"the buffer {buf.name} has {ndim} dimension(s), so factor_axis must be an int in "
                     f"[{-(ndim + 1)}, {ndim}], got {axis!r}")
        if axis < 0:
            axis += ndim + 1
        # the partial results are computed ahead of the outermost loop: no
        # other block under it may write what the reduction reads
        read = {r.buffer for r in block.reads}
        outer_path, outer = loops[0]
        written_elsewhere = () if _alone_under(site, rpath, outer_path, read, inside=False) else \
            all_block_realizes(outer, outer_path)
        for _, other in written_elsewhere:
            if other is realize:
                continue
            clash = [w.buffer.name for w in other.block.writes if w.buffer in read]
            if clash:
                chk.stop(NotStagePipelineError, f"block {block.name_hint!r}",
                         f"block {other.block.name_hint!r} under loop {outer.loop_var.name!r} writes "
                         f"{clash[0]}, which the reduction reads", other)
        terms = self._classify(chk, realize, block, loops, rf_loop, rd)
        return site, scope, rpath, loops, lpath, rd, found, axis, terms

    @staticmethod
    def _classify(chk, realize, block, loops, rf_loop: For, rd: set):
        """The predicate's terms: on loops the write-back keeps (both blocks
        keep them), on the loops the rfactor loop's reduction variables use
        (they guard the combined value, so every slot is initialised; a
        unit loop there is taken at its only value), on other reduction
        loops (the rfactor block keeps them)."""
        rf_name = rf_loop.loop_var.name
        mapped = {rf_name}
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type is IterVarType.CommReduce and uses_any(value, {rf_name}) is not None:
                mapped |= var_names(value) & rd
        reduce_names = set(rd) | {rf_name}
        all_names = {l.loop_var.name for _, l in loops}
        units = {l.loop_var.name for _, l in loops if _is_unit(l) and l.loop_var.name not in mapped}
        kept, guard, other = [], [], []
        for term in _conjuncts(realize.predicate):
            names = var_names(term) & all_names
            if not names & reduce_names:
                kept.append(term)
            elif names - units <= mapped:
                guard.append(term)
            elif not names & mapped:
                other.append(term)
            else:
                chk.stop(LoopPropertyError, f"block {block.name_hint!r}",
                         f"the predicate term {term.script()} mixes the loops of the reduction variables the "
                         "rfactor loop feeds with other loops", realize)
        return kept, guard, other

    @staticmethod
    def _check_loops(chk, site, loops, rf_loop: For, realize, dp: set, rd: set) -> None:
        """TVM's loop properties, and that the rfactor loop feeds a reduction."""
        name = rf_loop.loop_var.name
        outer_path, outer = loops[0]
        first = next(iter(child_blocks(outer, outer_path)), None)
        if first is None or first[1] is not realize:
            chk.stop(LoopPropertyError, f"loop {outer.loop_var.name!r}",
                     f"block {realize.block.name_hint!r} is not the first block under the outermost loop "
                     f"{outer.loop_var.name!r} above it", outer)
        # a loop of one iteration repeats nothing: TVM factors it (into an
        # rfactor buffer of extent 1), and so does tirfun
        if name not in rd and name not in dp and not is_const_int(rf_loop.extent, 1):
            chk.stop(LoopPropertyError, f"loop {name!r}",
                     "the loop feeds no reduction iteration variable of the block, so it repeats the "
                     "reduction rather than dividing it", rf_loop)
        above = {loop.loop_var.name for _, loop in loops}
        if uses_any(rf_loop.extent, above) is not None or uses_any(rf_loop.min, above) is not None:
            chk.stop(LoopPropertyError, f"loop {name!r}",
                     "the loop's range uses a loop variable, so it cannot size the rfactor buffer", rf_loop)
        met = False
        for path, loop in loops:
            n = loop.loop_var.name
            if n in dp and n in rd:
                chk.stop(LoopPropertyError, f"loop {n!r}",
                         "the loop feeds both data-parallel and reduction iteration variables", loop)
            if n in dp:
                if n == name:
                    chk.stop(LoopPropertyError, f"loop {n!r}",
                             "the rfactor loop feeds a data-parallel iteration variable", loop)
            elif n in rd:
                if not met:
                    kids = list(child_blocks(loop, path))
                    if len(kids) != 1:
                        chk.stop(NonSingleChildBlockError, f"loop {n!r}",
                                 f"the outermost reduction loop must have one block under it, it has "
                                 f"{len(kids)}", loop)
                    met = True
            elif met and not _is_unit(loop):
                chk.stop(LoopPropertyError, f"loop {n!r}",
                         "the loop feeds no iteration variable, runs more than once and is under a "
                         "reduction loop", loop)

    @staticmethod
    def _bind_outer_loops(site, rpath, loops, guard: PrimExpr, rf_ivs: list, rf_values: list, taken) -> PrimExpr:
        """The guard with the loops above the block's scope that it names
        read through new opaque iteration variables of the rfactor block.
        A predicate may name such loops (loop_partition leaves them there);
        moved into the block's body, it would break block isolation."""
        inner = {loop.loop_var.name for _, loop in loops}
        outer = {node.loop_var.name: node for _, node in ancestors(site.func, rpath)
                 if isinstance(node, For) and node.loop_var.name not in inner}
        bound = {}
        for v in _vars_in_order(guard):
            loop = outer.get(v.name)
            if loop is None or loop.loop_var != v:
                continue
            new = IterVar(Range(loop.min, loop.extent), Var(_fresh("v" + v.name, taken), v.dtype),
                          IterVarType.Opaque)
            rf_ivs.append(new)
            rf_values.append(loop.loop_var)
            bound[v] = new.var
        return substitute_expr(guard, bound) if bound else guard

    def build(self, plan) -> Outcome:
        site, scope, rpath, loops, lpath, rd, found, axis, (kept_terms, guard_terms, other_terms) = plan
        realize: BlockRealize = site.at(rpath)
        block = realize.block
        rf_loop: For = site.at(lpath)
        rf_name = rf_loop.loop_var.name
        reducer, updates = found.reducer, found.updates
        taken = _taken(site)
        # the rfactor buffers
        rf_bufs = []
        for u in updates:
            shape = list(u.buffer.shape)
            shape.insert(axis, rf_loop.extent)
            rf_bufs.append(Buffer(_fresh(suffixed(u.buffer.name, "rf"), taken), shape, u.buffer.dtype,
                                  storage_scope=u.buffer.storage_scope))
        loop_of = {loop.loop_var.name: loop for _, loop in loops}
        # --- the rfactor block
        extra = IterVar(Range(rf_loop.min, rf_loop.extent), Var(_fresh("v" + rf_name, taken), rf_loop.loop_var.dtype),
                        IterVarType.DataPar)
        loop_to_iter = {rf_loop.loop_var: extra.var}
        rf_ivs, rf_values = [extra], [rf_loop.loop_var]
        var_map = {}
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type is IterVarType.DataPar or uses_any(value, {rf_name}) is None:
                rf_ivs.append(iv)
                rf_values.append(value)
                continue
            for v in _vars_in_order(value):
                loop = loop_of.get(v.name)
                if loop is None or loop.loop_var in loop_to_iter:
                    continue
                new = IterVar(Range(loop.min, loop.extent), Var(_fresh("v" + v.name, taken), v.dtype),
                              IterVarType.CommReduce)
                loop_to_iter[loop.loop_var] = new.var
                rf_ivs.append(new)
                rf_values.append(loop.loop_var)
            var_map[iv.var] = substitute_expr(value, loop_to_iter)
        has_reduce = any(iv.iter_type is IterVarType.CommReduce for iv in rf_ivs)
        # the new dimension counts from 0 whatever the loop's start
        slot = extra.var if is_const_int(rf_loop.min, 0) else extra.var - rf_loop.min
        rf_indices = list(updates[0].indices)
        rf_indices.insert(axis, slot)
        rhs = list(found.rhs)
        if guard_terms:
            guard = _conjoin(guard_terms)
            guard = substitute_expr(guard, {l.loop_var: l.min for _, l in loops
                                            if _is_unit(l) and l.loop_var not in loop_to_iter})
            guard = substitute_expr(guard, _inverse(rf_ivs, rf_values))
            guard = substitute_expr(guard, var_map)
            guard = self._bind_outer_loops(site, rpath, loops, guard, rf_ivs, rf_values, taken)
            rhs = [Call(r.dtype, "tir.if_then_else", [guard, r, e])
                   for r, e in zip(rhs, reducer.identity_element)]
        # the reduction variables the rfactor loop feeds, read through the
        # new iteration variables; where the block declares no buffer, no
        # buffer it names can mention them, so its pieces are substituted as
        # expressions before the stores are built around them (what a
        # substitution of the built stores gives)
        pieces = not block.alloc_buffers and not block.match_buffers
        if pieces:
            rf_indices_at = [substitute_expr(i, var_map) for i in rf_indices]
            rhs = [substitute_expr(r, var_map) for r in rhs]
        else:
            rf_indices_at = rf_indices
        rf_lhs = [BufferLoad(b, rf_indices_at) for b in rf_bufs]
        rf_body = _combine(reducer, rf_bufs, rf_indices_at, rf_lhs, rhs, has_reduce, taken)
        rf_init = (_seq([BufferStore(b, e, rf_indices_at) for b, e in zip(rf_bufs, reducer.identity_element)])
                   if has_reduce else None)
        if not pieces:
            rf_body = substitute(rf_body, var_map)
            rf_init = None if rf_init is None else substitute(rf_init, var_map)
        rf_reads = [BufferRegion(r.buffer, [Range(substitute_expr(x.min, var_map), substitute_expr(x.extent, var_map))
                                            for x in r.region]) for r in block.reads]
        rf_writes = []
        for w in block.writes:
            k = next((j for j, u in enumerate(updates) if u.buffer == w.buffer), None)
            if k is None:
                continue
            region = [Range(substitute_expr(x.min, var_map), substitute_expr(x.extent, var_map)) for x in w.region]
            region.insert(axis, Range(slot, IntImm(extra.var.dtype, 1)))
            rf_writes.append(BufferRegion(rf_bufs[k], region))
        rf_block_name = fresh_name(suffixed(block.name_hint, "rf"), site.index.blocks)
        rf_block = Block(rf_ivs, rf_reads, rf_writes, rf_block_name, rf_body, init=rf_init,
                         annotations=block.annotations)
        # the rfactor nest: a copy of every loop above the block, fresh names
        new_loop = {loop.loop_var: Var(_fresh(loop.loop_var.name, taken), loop.loop_var.dtype)
                    for _, loop in loops}
        rf_realize = BlockRealize([substitute_expr(v, new_loop) for v in rf_values],
                                  substitute_expr(_conjoin(kept_terms + other_terms), new_loop), rf_block)
        rf_nest: Stmt = rf_realize
        for _, loop in reversed(loops):
            rf_nest = with_fields(loop, loop_var=new_loop[loop.loop_var],
                                  min=substitute_expr(loop.min, new_loop),
                                  extent=substitute_expr(loop.extent, new_loop), body=rf_nest)
        # --- the write-back block
        wb_extra = IterVar(Range(rf_loop.min, rf_loop.extent),
                           Var(_fresh("v" + rf_name, taken), rf_loop.loop_var.dtype), IterVarType.CommReduce)
        wb_map = {extra.var: wb_extra.var}
        wb_ivs, wb_values = [wb_extra], [rf_loop.loop_var]
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type is IterVarType.DataPar:
                new = IterVar(iv.dom, Var(_fresh(iv.var.name, taken), iv.var.dtype), IterVarType.DataPar)
                wb_map[iv.var] = new.var
                wb_ivs.append(new)
                wb_values.append(value)
        out_indices = [substitute_expr(i, wb_map) for i in updates[0].indices]
        wb_rf_indices = [substitute_expr(i, wb_map) for i in rf_indices]
        wb_lhs = [BufferLoad(u.buffer, out_indices) for u in updates]
        wb_rhs = [BufferLoad(b, wb_rf_indices) for b in rf_bufs]
        out_bufs = [u.buffer for u in updates]
        wb_body = _combine(reducer, out_bufs, out_indices, wb_lhs, wb_rhs, True, taken)
        wb_init = _seq([BufferStore(b, e, out_indices) for b, e in zip(out_bufs, reducer.identity_element)])
        wb_block = Block(wb_ivs, [_point(l) for l in wb_rhs], [_point(l) for l in wb_lhs], block.name_hint,
                         wb_body, init=wb_init, annotations=block.annotations)
        wb_realize = BlockRealize(wb_values, _conjoin(kept_terms), wb_block)
        # --- replace: loops feeding reductions (but the rfactor loop) go
        outer_path = loops[0][0]
        new: Stmt = wb_realize
        for p, node in reversed(ancestors(site.func, rpath)):
            if len(p) < len(outer_path):
                break
            if isinstance(node, For) and node.loop_var.name in rd and node.loop_var.name != rf_name:
                continue  # the loop is dropped: its rebuilt body stands in its place
            new = _rebuild(node, rpath[len(p)], new)
        scope_block: Block = site.at(scope)
        rel = outer_path[len(scope):]
        in_seq = len(rel) == 2 and rel[0] == ("body", None) and isinstance(scope_block.body, SeqStmt)
        if in_seq:
            # the nest is an item of the scope's sequence: the rfactor nest goes in before it
            k = rel[1][1]
            body = with_fields(scope_block, body=scope_block.body.with_items(k, k + 1, [rf_nest, new]),
                               alloc_buffers=list(scope_block.alloc_buffers) + rf_bufs)
        else:
            body = replace_at(scope_block, rel, SeqStmt([rf_nest, new]))
            body = with_fields(body, alloc_buffers=list(scope_block.alloc_buffers) + rf_bufs)
        old_nest = site.at(outer_path)

        def derive(new_func):
            stated = _rfactor_index(site, new_func, outer_path, in_seq, old_nest, realize, rf_bufs, rf_nest, new)
            if stated is not None:
                return stated
            return derive_scope_index(site.index, site.func, new_func, scope, rf_bufs, outer_path, in_seq,
                                      old_nest, [rf_nest, new])

        return Outcome(commit(site, scope, body, derive=derive), BlockRef(rf_block_name, site.func_name))

    def python_args(self):
        return [py_value(self.loop), f"factor_axis={py_value(self.factor_axis)}"]


def _rfactor_index(site, new_func, at: Path, in_seq: bool, old_nest: Stmt, realize: BlockRealize, rf_bufs: list,
                   rf_nest: Stmt, wb_nest: Stmt):
    """The index after rfactor, stated from what it changed where the
    reduction block sits at the bottom of a perfect nest (``old_nest`` at
    ``at``) and binds no name but its own and its iteration variables':
    the nest's loops and block go, the rfactor nest and the write-back nest
    (``wb_nest``) come in its place (as items of the scope's sequence with
    ``in_seq``, else as a new sequence), and the scope allocates
    ``rf_bufs``. Their names are read off the nests' loops and blocks: every
    expression in them is made of the old block's, of its realize's and of
    its loops' expressions (substituted, combined by a known reducer), and
    none of those holds a Let. None where that cannot be told this cheaply
    (then :func:`derive_scope_index` walks what changed): a statement
    outside blocks that names a buffer somewhere in the function, a nest
    that is not perfect, a Let (or a let-bound value) in the old nest."""
    index = site.index
    if index.clashes or index.loose:
        return None
    block = realize.block
    if block.alloc_buffers or block.match_buffers or type(block.body) is not BufferStore \
            or leaf_binds_lets(block) or binds_let(realize):
        return None
    delta: dict = {}
    gone = _nest_entries(old_nest, at, delta, -1)
    if gone is None or _loops_over(old_nest)[1] is not realize:
        return None
    if in_seq:
        seq, k = at[:-1], at[-1][1]
        places, shifts = [at, seq + (("seq", k + 1),)], ((seq, k + 1, 1),)
    else:
        places, shifts = [at + (("seq", 0),), at + (("seq", 1),)], ()
    came = []
    for place, nest in zip(places, (rf_nest, wb_nest)):
        found = _nest_entries(nest, place, delta, 1)
        if found is None:
            return None
        came.extend(found)
    for buf in rf_bufs:
        for name in (buf.name, *var_names_in_buffer(buf)):
            delta[name] = delta.get(name, 0) + 1
    realizes = _realizes_along(site.func, new_func, at)
    realizes += [(realize, None), (None, _loops_over(rf_nest)[1]), (None, _loops_over(wb_nest)[1])]
    return _stated(index, delta, shifts, gone, came, realizes)


def _nest_entries(nest: Stmt, path: Path, delta: dict, sign: int) -> list | None:
    """The loops and block of a perfect nest over one BlockRealize at
    ``path`` (``(is_loop, name, path)``, outermost first), the names they
    bind counted into ``delta`` with ``sign``; None where the bounds of a
    loop or of an iteration variable are not variables or constants or a
    loop is bound to a thread (they could hold a Let), or the bottom is no
    BlockRealize."""
    found = []
    get = delta.get
    node = nest
    while type(node) is For:
        if type(node.min) not in _LEAF or type(node.extent) not in _LEAF or node.thread_binding is not None:
            return None
        name = node.loop_var.name
        found.append((True, name, path))
        delta[name] = get(name, 0) + sign
        node, path = node.body, path + (("body", None),)
    if type(node) is not BlockRealize:
        return None
    block = node.block
    found.append((False, block.name_hint, path + (("block", None),)))
    delta[block.name_hint] = get(block.name_hint, 0) + sign
    for iv in block.iter_vars:
        # a domain from a loop above the nest (the rfactor block binds
        # those its guard names) has not been looked at
        if type(iv.dom.min) not in _LEAF or type(iv.dom.extent) not in _LEAF:
            return None
        delta[iv.var.name] = get(iv.var.name, 0) + sign
    return found


_LEAF = (Var, IntImm)


def _rebuild(node, step, child):
    """``node`` with the child at one step replaced."""
    name, index = step
    value = getattr(node, name)
    if index is None:
        return with_fields(node, **{name: child})
    return with_fields(node, **{name: value.set(index, child)})


def _vars_in_order(e: PrimExpr) -> list[Var]:
    out, seen = [], set()
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, Var):
            if node not in seen:
                seen.add(node)
                out.append(node)
            continue
        stack.extend(reversed(list(iter_children(node))))
    return out


def _inverse(ivs, values) -> dict:
    """Loop variable -> the iteration variable bound to exactly it."""
    return {value: iv.var for iv, value in zip(ivs, values) if isinstance(value, Var)}


def _seq(stmts):
    return stmts[0] if len(stmts) == 1 else SeqStmt(stmts)


def _point(load: BufferLoad) -> BufferRegion:
    return BufferRegion(load.buffer, [Range(i, IntImm(i.dtype, 1)) for i in load.indices])


def _combine(reducer: CommReducer, bufs, indices, lhs, rhs, reduce: bool, taken: set) -> Stmt:
    """The stores of one reduction step: ``buf = reducer(lhs, rhs)`` (or the
    plain ``rhs`` when nothing is reduced), through LetStmt values when
    several buffers are combined, so each reads the old values."""
    values = reducer(lhs, rhs) if reduce else list(rhs)
    if len(bufs) == 1:
        return BufferStore(bufs[0], values[0], indices)
    lets = [Var(_fresh("v_" + b.name, taken), v.dtype) for b, v in zip(bufs, values)]
    body: Stmt = SeqStmt([BufferStore(b, v, indices) for b, v in zip(bufs, lets)])
    for var, value in reversed(list(zip(lets, values))):
        body = LetStmt(var, value, body)
    return body


def rfactor(loop, factor_axis: int = 0) -> RFactor:
    """The :class:`RFactor` record: ``rfactor("k_1", 0)``."""
    return RFactor(loop, factor_axis)


__all__ = ["DecomposeReduction", "decompose_reduction", "RFactor", "rfactor"]


def _check_init_placement(chk: Checks, site, rpath, realize: BlockRealize, placed, subject: str) -> None:
    """No block under the loop ``placed`` (``(path, For)``: the init goes
    right before it) meets the init where the original did not: one that
    runs before the reduction block and touches what the block writes, or
    one that runs after it and touches, in an iteration of the loop, more of
    it than the block has written by then (an element whose first update,
    with the original's init, comes in a later iteration)."""
    lpath, loop = placed
    written = {w.buffer for w in realize.block.writes}
    block = realize.block
    # what the init reads (a row sum started from another buffer's value):
    # a block under the loop that writes it gives the init, placed before
    # the loop, the value from before (TVM moves it regardless)
    init_reads = _loaded_by(block.init) - written if block.init is not None else set()
    if _alone_under(site, rpath, lpath, written | init_reads):
        return
    # imported here, past the common case: an import in a function costs
    # more than the check above
    from ..analysis.arith.region import region_covers
    from .dataflow import consumed_region, loop_domains, produced_region
    body = lpath + (("body", None),)
    seen = False
    doms = None  # the loop domains, found when a block after the reduction first needs them
    for path, other in all_block_realizes(loop.body, body, touching=written | init_reads):
        if path == rpath:
            seen = True
            continue
        if rpath[:len(path)] == path:
            continue  # a block around the reduction block
        if path[:len(rpath)] == rpath:
            continue  # a block inside it: the reduction's own body, which its init precedes anyway
        feeds = [w for w in other.block.writes if w.buffer in init_reads]
        if feeds:
            chk.stop(InitPlacementError, subject,
                     f"block {other.block.name_hint!r} under loop {loop.loop_var.name!r} writes "
                     f"{feeds[0].buffer.name}, which the init reads: placed before the loop, the init would read "
                     "what it held before", other)
        regions = [r for r in list(other.block.reads) + list(other.block.writes) if r.buffer in written]
        if not regions:
            continue
        if not seen:
            chk.stop(InitPlacementError, subject,
                     f"block {other.block.name_hint!r} runs before it under loop {loop.loop_var.name!r} and "
                     f"touches {regions[0].buffer.name}: placed before the loop, the init would change what "
                     "it reads or be overwritten by what it writes", other)
        # after the block: within one iteration of the loop, it may touch
        # only what the block wrote in that iteration (shown by region
        # cover); an element the block first updates later would meet the
        # init where the original met the buffer's earlier contents
        doms = loop_domains(site, lpath) if doms is None else doms
        for region in regions:
            boxes = [box for w in realize.block.writes if w.buffer == region.buffer
                     for box in [produced_region(site, rpath, realize, w, lpath)] if box is not None]
            needed = consumed_region(site, path, other, region, lpath)
            if not region_covers(boxes, needed, doms):
                chk.stop(InitPlacementError, subject,
                         f"block {other.block.name_hint!r} runs after it under loop {loop.loop_var.name!r} and "
                         f"touches {region.buffer.name} where the block may not have written yet in that "
                         "iteration: placed before the loop, the init would change what it meets there",
                         other)


def _loaded_by(init) -> set:
    """The buffers ``init`` loads from; the common init, one store of a
    constant at variables (``Y[vi, vj] = T.float32(0)``), loads none and is
    answered without a walk."""
    if (type(init) is BufferStore and type(init.value) in (IntImm, FloatImm) and init.predicate is None
            and all(type(i) is Var for i in init.indices)):
        return set()
    return {n.buffer for n in walk(init) if type(n) is BufferLoad}


def _alone_under(site, rpath: Path, lpath: Path, buffers, *, inside: bool = True) -> bool:
    """Whether the name index shows that no block under the loop at
    ``lpath`` mentions one of ``buffers`` but the block at ``rpath`` (and,
    with ``inside``, blocks inside it): the common case, where a check of
    the blocks under the loop that touch them has nothing to look at;
    False where the index cannot tell or another block may."""
    index = site.index
    if index.clashes:
        return False
    names = []
    for buf in buffers:
        names.append(buf.name)
        if buf.data is not None:
            names.append(buf.data.name)
    body = lpath + (("body", None),)
    k, n = len(body), len(rpath)
    located = index.blocks
    for name in index.blocks_mentioning(names):
        path = located.get(name)
        if path is None:
            return False
        other = path[:-1]
        if other[:k] == body and (other[:n] != rpath if inside else other != rpath):
            return False
    return True
