"""cache_index: precompute the index arithmetic of a block into buffers.

TVM v0.20's ``cache_index.cc`` looks for the computations a block's stores
do that need no memory (TVM's common-subexpression tools: pure, more than
one node, not a vector), keeps those seen at least ``cse_thresh`` times
(default 0: every one), computes each into a new buffer ``index_var_<k>``
indexed by the block's iteration variables it uses, in a block
``index_<k>`` placed just before the block's loop nest, and makes the block
read the buffer instead. It works in this order:

1. the computations of each store of the block: the largest eligible
   expressions of its value and indices, each with the number of times it
   occurs; occurrences that simplify to the same expression count together;
2. with a threshold, a computation seen fewer times gives its count to its
   largest eligible subexpressions, down to those seen often enough;
3. the computations kept are those of the stored value, in the order they
   first complete there, then sorted by size, largest first (a stable
   sort);
4. the block replaces each kept computation, and every occurrence that
   simplifies to it, by a load of its buffer, largest first.

Three cases where TVM builds a wrong program or fails are done right here:

* an iteration variable's domain in the new block is the range its binding
  takes, which is also the buffer's extent (TVM takes the extent of one of
  the loops, wrong when a binding uses several), and the new loops start
  where the old ones did (TVM starts them at 0);
* only computations over iteration variables the new block can rebuild are
  eligible: those bound to loops of the block's scope (with ranges that do
  not depend on other loops) with bindings of known, non-negative bounds
  (TVM fails on a let or loop variable of the block's body, and on a loop
  outside the scope);
* computations that could fault where the block does not run (a predicate,
  a ``Select`` or an ``if_then_else`` guards it) are not eligible: integer division or modulo by
  anything but a positive constant, and calls other than the math
  intrinsics, ``if_then_else`` and the bitwise operations.

The block's ``reads`` gain the index buffers it reads (TVM leaves them out,
and later primitives then do not see that the block reads them): compute_at
and compute_inline treat the new blocks as its producers.

As for cache_read, a ``shared`` or ``local`` index buffer filled outside
the kernel that reads it is not the buffer the kernel sees; move the new
block into the kernel (compute_at) before running such a program.
"""

from __future__ import annotations

import heapq

import attrs
from pyrsistent import pvector

from ..analysis.arith import can_prove, eval_interval, simplify_expr
from ..analysis.arith.int_set import Interval
from ..analysis.arith.simplify import ExprSimplifier
from ..analysis.traversal import Path, replace_at, stmt_nodes, transform, walk_stmts
from ..nodes import (
    GE, Block, BlockRealize, Broadcast, Buffer, BufferLoad, BufferRegion, BufferStore, Call, Div, FloorDiv,
    FloorMod, For, ForKind, IntImm, IterVar, IterVarType, Let, Mod, PrimExpr, Ramp, Range, Shuffle,
    Stmt, Var,
)
from ..nodes.base import with_fields
from ..tir.op import MATH_INTRINSICS
from .base import Checks, Outcome, Rewrite, commit, register
from .cache import _insert, _scope_of
from .checks import describe, loops_above, resolve_block, resolve_site
from .errors import InvalidArgumentError
from .exprs import substitute_expr
from .names import fresh_name
from .refs import BlockRef, as_block_ref
from .scopes import check_storage_scope
from .serialize import py_value

#: calls whose value may be computed where the block would not compute it
_TOTAL_CALLS = frozenset({f"tir.{n}" for n in MATH_INTRINSICS} |
                         {"tir.if_then_else", "tir.bitwise_and", "tir.bitwise_or", "tir.bitwise_xor",
                          "tir.bitwise_not"})
_VECTORS = (Ramp, Broadcast, Shuffle)


# ------------------------------------------------------------------ expressions

_PVEC = type(pvector())
#: per node class, its fields that hold expressions
_EXPR_FIELDS: dict = {}


def _children(e: PrimExpr) -> list[PrimExpr]:
    """The expression's direct subexpressions, in TVM's visiting order (a
    load's indices, not its buffer)."""
    fields = _EXPR_FIELDS.get(type(e))
    if fields is None:
        fields = _EXPR_FIELDS[type(e)] = tuple(a.name for a in attrs.fields(type(e))
                                               if a.name not in ("dtype", "op", "buffer", "lanes"))
    out = []
    for name in fields:
        value = getattr(e, name)
        if isinstance(value, PrimExpr):
            out.append(value)
        elif type(value) is _PVEC:
            out.extend(v for v in value if isinstance(v, PrimExpr))
    return out


def _complexity(e: PrimExpr) -> int:
    """TVM's CalculateExprComplexity: the number of expression nodes."""
    return 1 + sum(_complexity(c) for c in _children(e))


class _Eligibility:
    """Which expressions of the block may be computed ahead in a block of
    their own: ``allowed`` are the iteration variables that may occur."""

    def __init__(self, allowed: frozenset):
        self.allowed = allowed
        self.memo: dict[int, tuple[PrimExpr, bool]] = {}

    def _clean(self, e: PrimExpr) -> bool:
        """Free of loads, vectors, foreign variables and partial operations."""
        hit = self.memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        if isinstance(e, Var):
            ok = e in self.allowed
        elif isinstance(e, (BufferLoad, Let) + _VECTORS):
            ok = False
        elif isinstance(e, Call):
            ok = isinstance(e.op, str) and e.op in _TOTAL_CALLS and all(self._clean(a) for a in e.args)
        else:
            ok = e.dtype.is_scalar and all(self._clean(c) for c in _children(e))
            if ok and isinstance(e, (Div, Mod, FloorDiv, FloorMod)) and not e.dtype.is_float:
                ok = isinstance(e.b, IntImm) and e.b.value > 0
        self.memo[id(e)] = (e, ok)
        return ok

    def __call__(self, e: PrimExpr) -> bool:
        dt = e.dtype
        if not dt.is_scalar or not (dt.is_integer or dt.is_bool or (dt.is_float and not dt.is_mini_float)):
            return False
        # more than one node (TVM's complexity above 1): not a leaf
        return bool(_children(e)) and self._clean(e)


class _Normal:
    """Simplified forms, the equivalence TVM's EquivalentTerms uses."""

    def __init__(self):
        # one simplifier for all: it remembers the subexpressions it has seen
        self.simplifier = ExprSimplifier({})

    def __call__(self, e: PrimExpr) -> PrimExpr:
        return self.simplifier.expr(e)


def _maximal(e: PrimExpr, eligible, table: dict) -> None:
    """Count the largest eligible subexpressions of ``e`` (TVM's
    ComputationsDoneBy on an expression)."""
    if isinstance(e, (Var, IntImm)) or not _children(e):
        return
    if eligible(e):
        table[e] = table.get(e, 0) + 1
        return
    for c in _children(e):
        _maximal(c, eligible, table)


def _direct(e: PrimExpr, eligible) -> list[PrimExpr]:
    """The largest eligible proper subexpressions of ``e`` (TVM's DirectSubexpr)."""
    out: list[PrimExpr] = []
    for c in _children(e):
        if eligible(c):
            out.append(c)
        else:
            out.extend(_direct(c, eligible))
    return out


def _post_order(e: PrimExpr):
    for c in _children(e):
        yield from _post_order(c)
    yield e


def _choose(stores, eligible, normal, thresh: int) -> list[PrimExpr]:
    """The computations to cache, in buffer order (see the module docstring)."""
    chosen: list[PrimExpr] = []
    keys: set = set()
    for store in stores:
        table: dict = {}
        for e in [store.value, *store.indices]:
            _maximal(e, eligible, table)
        classes: dict = {}  # normal form -> [representative, count]
        for e, n in table.items():
            entry = classes.setdefault(normal(e), [e, 0])
            entry[1] += n
        if thresh > 1:
            # largest first, so a computation has its whole count before it
            # gives it on to its subexpressions
            heap = [(-_complexity(rep), k, key) for k, (key, (rep, _)) in enumerate(classes.items())]
            heapq.heapify(heap)
            seq = len(heap)
            done: set = set()
            while heap:
                _, _, key = heapq.heappop(heap)
                if key in done:
                    continue
                done.add(key)
                rep, n = classes[key]
                if n >= thresh:
                    continue
                for sub in _direct(rep, eligible):
                    sub_key = normal(sub)
                    entry = classes.get(sub_key)
                    if entry is None:
                        classes[sub_key] = [sub, n]
                        heapq.heappush(heap, (-_complexity(sub), seq, sub_key))
                        seq += 1
                    else:
                        entry[1] += n
        for node in _post_order(store.value):
            if not eligible(node):
                continue
            key = normal(node)
            entry = classes.get(key)
            if entry is not None and entry[1] >= thresh and key not in keys:
                keys.add(key)
                chosen.append(entry[0])
    return sorted(chosen, key=lambda e: -_complexity(e))


def _replace(e: PrimExpr, key: PrimExpr, load: BufferLoad, eligible, normal) -> PrimExpr:
    """``e`` with every eligible subexpression whose simplified form is
    ``key`` replaced by ``load``, outermost first (TVM's ReplaceSelectedExpr)."""

    def pre(n):
        if isinstance(n, Buffer):
            return n
        if isinstance(n, PrimExpr) and eligible(n) and normal(n) == key:
            return load
        return None

    return transform(e, lambda n: n, pre)


# ------------------------------------------------------------------ the plan

@attrs.frozen
class _Entry:
    """One computation to cache: the expression, the iteration variables it
    uses (in order of first use), their bindings' upper extents, and the
    loops those bindings use."""

    expr: PrimExpr
    ivars: tuple
    shape: tuple
    loops: tuple


@attrs.frozen
class _Plan:
    site: object
    scope_path: Path
    scope_block: Block
    block_path: Path
    realize: BlockRealize
    entries: tuple
    field: str
    pos: int
    eligible: object
    normal: object


def _stores(block: Block) -> list[BufferStore]:
    """The block's stores (init first), not those of nested blocks."""
    out = []
    for part in ([block.init] if block.init is not None else []) + [block.body]:
        skip: list[Path] = []
        for path, s in walk_stmts(part):
            if any(path[:len(p)] == p for p in skip):
                continue
            if isinstance(s, BlockRealize):
                skip.append(path)
            elif isinstance(s, BufferStore):
                out.append(s)
    return out


def _vars_in(e: PrimExpr) -> list[Var]:
    """The variables of ``e``, in post order of first occurrence."""
    out: list[Var] = []
    for n in _post_order(e):
        if isinstance(n, Var) and n not in out:
            out.append(n)
    return out


def _rebuildable(site, realize: BlockRealize, realize_path: Path) -> dict:
    """The iteration variables a new block can rebuild, each with the upper
    extent its binding takes (the index buffer's extent): a binding over
    loops of the scope whose ranges use only parameters, non-negative and
    bounded. A range that loads from a buffer (``range(L[0])``) does not
    count: the index buffer would be allocated, and its stage run, with
    what the buffer holds before the loop, which may be negative or may
    change on the way."""
    params = {p for p in site.func.params}
    params |= {v for b in site.func.buffer_map.values() for s in b.shape for v in _vars_in(s)}
    ranges = {}
    for _, loop in loops_above(site, realize_path):
        var = loop.loop_var
        if all(v in params for v in _vars_in(loop.min) + _vars_in(loop.extent)) and not any(
                isinstance(n, BufferLoad) for e in (loop.min, loop.extent) for n in _post_order(e)):
            ranges[var] = Interval.from_range(Range(loop.min, loop.extent))
    out = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        used = _vars_in(value)
        if not all(v in ranges or v in params for v in used):
            continue
        bound = eval_interval(value, ranges)
        if bound.lo is None or bound.hi is None or not can_prove(GE(bound.lo, IntImm(bound.lo.dtype, 0))):
            continue
        shape = simplify_expr(bound.hi + IntImm(bound.hi.dtype, 1))
        out[iv.var] = (value, shape, tuple(v for v in used if v in ranges))
    return out


def _position(block_path: Path, scope_path: Path) -> tuple[str, int]:
    """Which field of the scope block holds the block, and the position in
    it of the statement that does (TVM inserts the new stages there)."""
    rel = block_path[len(scope_path):]
    field = rel[0][0]
    pos = rel[1][1] if len(rel) > 1 and rel[1][0] == "seq" else 0
    return field, pos


# ------------------------------------------------------------------ the record

@register
@attrs.frozen
class CacheIndex(Rewrite):
    """Compute the index arithmetic of a block ahead, into buffers: each
    computation of the block's stores that needs no memory (kept when seen
    at least ``cse_thresh`` times; 0, the default, keeps every one) is
    computed by a new block ``index_<k>`` into a new buffer
    ``index_var_<k>`` of ``storage_scope``, indexed by the block's iteration
    variables it uses, just before the block's loop nest; the block reads it
    there. Returns the new blocks (none when there is nothing to compute).

    Unlike TVM's, the new blocks' iteration domains are the ranges the
    bindings take and the new loops start where the old ones did;
    computations that use variables a new block cannot rebuild, or that
    could fault where the block does not run (integer division by a
    variable), are left in place; the block's reads list the index buffers.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. the storage scope is one TVM knows (InvalidStorageScopeError);
    3. ``cse_thresh`` is a non-negative int (InvalidArgumentError);
    4. the block has an enclosing block for the buffers (NoScopeBlockError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((1, 3, 40, 40), "float32"), B: T.Buffer((1, 3, 80, 80), "float32")):
            for i0, i1, i2, i3 in T.grid(1, 3, 80, 80):
                with T.block("A"):
                    n, c, vi, vj = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    B[n, c, vi, vj] = A[n, c, vi // 4 + vj // 4, vj // 2]

        # rewrite
        cache_index("A", "global")

        # after
        @T.prim_func
        def main(A: T.Buffer((1, 3, 40, 40), "float32"), B: T.Buffer((1, 3, 80, 80), "float32")):
            index_var_0 = T.alloc_buffer((80, 80), "int32")
            index_var_1 = T.alloc_buffer((80,), "int32")
            for ax0, ax1 in T.grid(80, 80):
                with T.block("index_0"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    index_var_0[v0, v1] = v0 // 4 + v1 // 4
            for ax0_1 in range(80):
                with T.block("index_1"):
                    v0_1 = T.axis.spatial(80, ax0_1)
                    index_var_1[v0_1] = v0_1 // 2
            for i0, i1, i2, i3 in T.grid(1, 3, 80, 80):
                with T.block("A"):
                    n, c, vi, vj = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    T.reads(A[n, c, vi // 4 + vj // 4, vj // 2], index_var_0[vi, vj], index_var_1[vj])
                    T.writes(B[n, c, vi, vj])
                    B[n, c, vi, vj] = A[n, c, index_var_0[vi, vj], index_var_1[vj]]
    """

    primitive = "cache_index"

    block: object = attrs.field(converter=as_block_ref)
    storage_scope: object = "global"
    cse_thresh: object = 0

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block])
        path = resolve_block(chk, site, self.block)
        check_storage_scope(chk, self.storage_scope)
        if not isinstance(self.cse_thresh, int) or isinstance(self.cse_thresh, bool) or self.cse_thresh < 0:
            chk.stop(InvalidArgumentError, "argument cse_thresh",
                     f"cse_thresh must be a non-negative int (how many times a computation must occur "
                     f"to be cached; 0 caches every one), got {self.cse_thresh!r}")
        realize = site.at(path[:-1])
        scope = _scope_of(chk, site, path, describe(self.block))
        rebuild = _rebuildable(site, realize, path[:-1])
        eligible = _Eligibility(frozenset(rebuild))
        normal = _Normal()
        exprs = _choose(_stores(realize.block), eligible, normal, self.cse_thresh)
        entries = []
        for e in exprs:
            ivars = tuple(_vars_in(e))
            loops: list = []
            for v in ivars:
                loops.extend(lv for lv in rebuild[v][2] if lv not in loops)
            entries.append(_Entry(e, ivars, tuple(rebuild[v][1] for v in ivars), tuple(loops)))
        field, pos = _position(path, scope.path)
        return _Plan(site, scope.path, scope.block, path, realize, tuple(entries), field, pos, eligible, normal)

    def build(self, plan: _Plan) -> Outcome:
        site, block = plan.site, plan.realize.block
        if not plan.entries:
            return Outcome(site.mod, ())
        scope_name = self.storage_scope or "global"
        taken = site.index.names
        used: set = set()

        def fresh(base: str, also=()) -> str:
            name = fresh_name(base, _Taken(taken, used, also))
            used.add(name)
            return name

        loops = {loop.loop_var: loop for _, loop in loops_above(site, plan.block_path[:-1])}
        bindings = {iv.var: v for iv, v in zip(block.iter_vars, plan.realize.iter_values)}
        stages: list[Stmt] = []
        names: list[str] = []
        buffers: list[Buffer] = []
        for k, entry in enumerate(plan.entries):
            buf = Buffer(fresh(f"index_var_{k}"), list(entry.shape), entry.expr.dtype, storage_scope=scope_name)
            name = fresh(f"index_{k}", site.index.blocks)
            new_loops = {lv: Var(fresh(f"ax{j}"), lv.dtype) for j, lv in enumerate(entry.loops)}
            new_vars = {v: Var(fresh(f"v{j}"), v.dtype) for j, v in enumerate(entry.ivars)}
            indices = [new_vars[v] for v in entry.ivars]
            stage_block = Block(
                [IterVar(Range(IntImm(new_vars[v].dtype, 0), shape), new_vars[v], IterVarType.DataPar)
                 for v, shape in zip(entry.ivars, entry.shape)],
                [], [BufferRegion(buf, [Range(i, IntImm(i.dtype, 1)) for i in indices])], name,
                BufferStore(buf, substitute_expr(entry.expr, new_vars), indices))
            stage: Stmt = BlockRealize([substitute_expr(bindings[v], new_loops) for v in entry.ivars],
                                       IntImm("bool", 1), stage_block)
            for lv in reversed(entry.loops):
                loop = loops[lv]
                stage = For(new_loops[lv], loop.min, loop.extent, ForKind.SERIAL, stage)
            stages.append(stage)
            names.append(name)
            buffers.append(buf)
        # the block reads each computation from its buffer, largest first
        eligible, normal = plan.eligible, plan.normal

        def rewrite(stmt: Stmt) -> Stmt:
            def pre(n):
                if isinstance(n, Block):
                    return n  # a nested block keeps its own computations
                if isinstance(n, BufferStore):
                    value, indices, predicate = n.value, list(n.indices), n.predicate
                    for entry, buf in zip(plan.entries, buffers):
                        load = BufferLoad(buf, list(entry.ivars))
                        key = normal(entry.expr)
                        value = _replace(value, key, load, eligible, normal)
                        indices = [_replace(i, key, load, eligible, normal) for i in indices]
                        if predicate is not None:
                            predicate = _replace(predicate, key, load, eligible, normal)
                    # a predicated store keeps its mask
                    return BufferStore(n.buffer, value, indices, predicate)
                if isinstance(n, PrimExpr):
                    return n
                return None

            return transform(stmt, lambda n: n, pre)

        body = rewrite(block.body)
        init = None if block.init is None else rewrite(block.init)
        read = set()
        for part in [body] + ([init] if init is not None else []):
            for s in stmt_nodes(part):
                if isinstance(s, BufferStore):
                    for e in [s.value, *s.indices]:
                        read |= {n.buffer for n in _post_order(e) if isinstance(n, BufferLoad)}
        extra = [BufferRegion(buf, [Range(v, IntImm(v.dtype, 1)) for v in entry.ivars])
                 for entry, buf in zip(plan.entries, buffers) if buf in read]
        new_block = with_fields(block, body=body, init=init, reads=list(block.reads) + extra)
        scope_block = replace_at(plan.scope_block, plan.block_path[len(plan.scope_path):], new_block)
        holder = getattr(scope_block, plan.field)
        for stage in reversed(stages):
            holder = _insert(holder, plan.pos, stage)
        scope_block = with_fields(scope_block, **{plan.field: holder},
                                  alloc_buffers=list(scope_block.alloc_buffers) + buffers)
        mod = commit(site, plan.scope_path, scope_block)
        return Outcome(mod, tuple(BlockRef(n, site.func_name) for n in names))

    def python_args(self):
        return [py_value(self.block), py_value(self.storage_scope), f"cse_thresh={py_value(self.cse_thresh)}"]


class _Taken:
    __slots__ = ("parts",)

    def __init__(self, *parts):
        self.parts = parts

    def __contains__(self, name) -> bool:
        return any(name in p for p in self.parts)


def cache_index(block, storage_scope="global", cse_thresh=0) -> CacheIndex:
    """The :class:`CacheIndex` record: ``cache_index("B", "global")``."""
    return CacheIndex(block, storage_scope, cse_thresh)


__all__ = ["CacheIndex", "cache_index"]
