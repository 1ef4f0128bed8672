"""transform_block_layout: a block over the iteration space an index map
gives, its body reading the old variables through the map's inverse."""

from __future__ import annotations

import functools

import attrs

from ..analysis.arith import detect_iter_map
from ..analysis.arith.terms import int_value as _int_value
from ..analysis.arith.iter_map import is_plain_sum, simplify_index
from ..analysis.arith.simplify import is_true
from ..analysis.traversal import transform
from ..nodes import (
    BlockRealize, BufferRegion, For, ForKind, IntImm, IterVar, IterVarType, PrimExpr, Range, Var,
)
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .body_walk import BodyWalk
from .checks import describe, loop_dependent_domain, loops_above, resolve_block, resolve_site
from .errors import (
    InvalidArgumentError, LoopDependentDomainError, LoopNotStartWithZeroError, NonTrivialPredicateError,
    NotBijectiveAffineIndexMapError,
    NotOnlyChildError, NotTrivialBindingError, OpaqueNewIterTypeError,
)
from .exprs import buffer_is_plain, cast as _cast, substitute, var_names
from .index_maps import NOP as _NOP, Dims as _Dims, arity as _arity, as_map as _as_map, \
    _fold_divmod as fold_divmod, access_tidier, dims_text as _dims, inverse_of as _inverse, trace_index_map
from .index import binds_let, derive_renamed_nest_index
from .layout import _sizes
from .name_pool import NamePool
from .refs import as_block_ref
from .serialize import py_value


@attrs.frozen
class _BlockLayoutPlan:
    site: object
    top: object  # path of the outermost loop replaced (the realize's when there is none)
    realize: BlockRealize
    results: tuple  # the map in the old iteration variables
    extents: tuple  # the new domains' extents
    types: tuple  # the new iteration types
    inverse: dict  # old iteration variable -> expression of the new ones, by position of new variable
    nest: tuple = ()  # the loops replaced, outermost first


@register
@attrs.frozen
class TransformBlockLayout(Rewrite):
    """Transform a block's iteration space by a bijective affine index map
    (TVM's ``transform_block_layout``): the block gets one iteration
    variable per output of the map, over the extent that output spans, and
    new loops ``ax0, ax1, ...`` in place of the loops around it; its body
    reads the old variables through the map's inverse. What the block
    computes, and in which order its reductions add up, follows the new
    loops.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. the loops around the block (up to its scope) start at 0
       (LoopNotStartWithZeroError) and each holds only the next one, or the
       block (NotOnlyChildError);
    3. its binding is trivial: one loop per iteration variable, in order,
       each domain from 0 (NotTrivialBindingError), under no predicate
       (NonTrivialPredicateError);
    4. ``index_map`` takes one variable per iteration variable and gives
       integer indices, using besides them only the sizes of the function's
       parameters (InvalidArgumentError);
    5. the map is a bijective affine map of the iteration domain onto a box
       from 0 (NotBijectiveAffineIndexMapError); over symbolic extents, each
       result a mixed radix of whole variables (``i * n + j``, ``j`` in
       ``[0, n)``), as TVM's iterator maps fuse them;
    6. no new variable mixes data-parallel and reduction variables
       (OpaqueNewIterTypeError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        transform_block_layout("B", lambda i, j: (i * 4 + j,))

        # after
        @T.prim_func
        def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
            for ax0 in range(32):
                with T.block("B"):
                    v0 = T.axis.spatial(32, ax0)
                    B[v0 // 4, v0 % 4] = A[v0 // 4, v0 % 4] * T.float32(2)
    """

    primitive = "transform_block_layout"

    block: object = attrs.field(converter=as_block_ref)
    index_map: object = attrs.field(default=None, converter=_as_map)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block])
        path = resolve_block(chk, site, self.block)
        rpath = path[:-1]
        realize = site.at(rpath)
        block = realize.block
        subject = describe(self.block)
        loops = loops_above(site, rpath)
        for p, loop in loops:
            if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
                chk.stop(LoopNotStartWithZeroError, subject,
                         f"loop {loop.loop_var.name!r} starts at {loop.min.script()}, not 0", loop)
        for (_, loop), below in zip(loops, [lp for _, lp in loops[1:]] + [realize]):
            if loop.body is not below:
                chk.stop(NotOnlyChildError, subject,
                         f"loop {loop.loop_var.name!r} holds more than the loop or block below it; the loops "
                         "around the block are replaced", loop)
        values = list(realize.iter_values)
        # the loops run over the whole domains (not a part, as loop_partition's)
        if len(values) != len(loops) or any(v != loop.loop_var for v, (_, loop) in zip(values, loops)) \
                or any(not (isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0) for iv in block.iter_vars) \
                or any(not _same_extent(loop.extent, iv.dom.extent) for (_, loop), iv in zip(loops, block.iter_vars)):
            chk.stop(NotTrivialBindingError, subject,
                     "the block's iteration variables are not bound to the loops around it, one loop each, "
                     "in order, each loop running over the whole domain from 0", realize)
        dependent = loop_dependent_domain(site, path, block)
        if dependent is not None:
            # a triangular nest: the new loops, made from the domains,
            # would name a loop they replace
            iv, name = dependent
            chk.stop(LoopDependentDomainError, subject,
                     f"the domain of {iv.var.name}, {iv.dom.min.script()} for {iv.dom.extent.script()}, "
                     f"depends on loop {name!r}, which the new loops replace", realize)
        if not is_true(realize.predicate):
            chk.stop(NonTrivialPredicateError, subject,
                     f"the block has the predicate {realize.predicate.script()}, which the new loops would "
                     "not keep", realize)
        dtypes = [iv.var.dtype for iv in block.iter_vars]
        index_map = trace_index_map(self.index_map, _Dims(dtypes))
        arity = _arity(index_map)
        if arity is not None and arity != len(dtypes):
            chk.stop(InvalidArgumentError, subject,
                     f"the index map takes {arity} variables, but the block has {len(dtypes)} iteration "
                     "variables", realize)
        ok = (isinstance(index_map, tuple) and len(index_map) == 2
              and all(isinstance(v, Var) and v.dtype.is_integer for v in index_map[0])
              and all(isinstance(e, PrimExpr) and e.dtype.is_integer and e.dtype.lanes == 1
                      for e in index_map[1]) and index_map[1])
        if not ok:
            chk.stop(InvalidArgumentError, subject,
                     "the index map must be a function of the block's iteration variables returning integer "
                     f"indices, or (params, results), got {self.index_map!r}")
        params, results = index_map
        if len(params) != len(block.iter_vars):
            chk.stop(InvalidArgumentError, subject,
                     f"the index map takes {len(params)} variables, but the block has {len(block.iter_vars)} "
                     "iteration variables", realize)
        # besides its own variables, a map may use the function's sizes (the
        # variables of its parameters' shapes, in scope everywhere), as TVM's
        names = {p.name for p in params}
        sizes = None
        for e in results:
            extra = var_names(e) - names
            if extra:
                if sizes is None:  # asked only of a map that uses more than its variables
                    sizes = _sizes(site.func)
                extra -= sizes
            if extra:
                chk.stop(InvalidArgumentError, subject,
                         f"the index map uses {sorted(extra)[0]}, which is neither one of its variables nor a "
                         "size of the function's parameters")
        key = (tuple(params), tuple(results), tuple(iv.dom.extent for iv in block.iter_vars))
        read = _read_map(*key)
        if read is None:
            chk.stop(NotBijectiveAffineIndexMapError, subject,
                     f"the index map {_dims(results)} is not a bijective affine map "
                     "of the block's iteration domain onto a box from 0", realize)
        extents, uses, _ = read
        kinds = {p.name: iv.iter_type for p, iv in zip(params, block.iter_vars)}
        types = []
        for e, used_names, ext in zip(results, uses, extents):
            used = {kinds[n] for n in used_names}
            if _int_value(ext) == 1 or used <= {IterVarType.DataPar}:
                types.append(IterVarType.DataPar)
            elif used == {IterVarType.CommReduce}:
                types.append(IterVarType.CommReduce)
            else:
                chk.stop(OpaqueNewIterTypeError, subject,
                         f"the new iteration variable {e.script()} mixes data-parallel and reduction variables",
                         realize)
        fresh_vars, inverse = _inverse_at(*key)
        by_param = {iv.var: _cast(e, iv.var.dtype) for e, iv in zip(inverse, block.iter_vars)}
        top = loops[0][0] if loops else rpath
        return _BlockLayoutPlan(site, top, realize, tuple(results), tuple(extents), tuple(types),
                                {"vars": fresh_vars, "map": by_param}, tuple(loop for _, loop in loops))

    def build(self, plan: _BlockLayoutPlan) -> Outcome:
        site, realize = plan.site, plan.realize
        block = realize.block
        fresh = NamePool(site.index.names).fresh

        placeholders = plan.inverse["vars"]
        new_vars = [Var(fresh(f"v{d}"), v.dtype) for d, v in enumerate(placeholders)]
        loop_vars = [Var(fresh(f"ax{d}"), v.dtype) for d, v in enumerate(placeholders)]
        rename = dict(zip(placeholders, new_vars))
        mapping = {old: substitute(e, rename) for old, e in plan.inverse["map"].items()}
        # the indices read through the inverse, as TVM's
        # BlockBufferAccessSimplifier leaves them
        walk = _Relayout(mapping)
        body = walk.stmt(block.body)
        init = None if block.init is None else walk.stmt(block.init)
        reads = [walk.region(r) for r in block.reads]
        writes = [walk.region(w) for w in block.writes]
        matches = [substitute(m, mapping) for m in block.match_buffers]
        ivs = [IterVar(Range(IntImm(v.dtype, 0), _cast(ext, v.dtype)), v, t)
               for v, ext, t in zip(new_vars, plan.extents, plan.types)]
        new_block = with_fields(block, iter_vars=ivs, body=body, init=init, reads=reads, writes=writes,
                                match_buffers=matches)
        stmt = BlockRealize(loop_vars, realize.predicate, new_block)
        for lv, ext in reversed(list(zip(loop_vars, plan.extents))):
            stmt = For(lv, IntImm(lv.dtype, 0), _cast(ext, lv.dtype), ForKind.SERIAL, stmt)
        index = None
        if walk.plain and not block.match_buffers and _let_free_domains(block.iter_vars) \
                and _let_free_domains(ivs):
            index = _renamed_nest_index(plan, stmt, len(loop_vars), ivs)
        return Outcome(commit(site, plan.top, stmt, index=index))

    def python_args(self):
        return [py_value(self.block), f"index_map={py_value(self.index_map)}"]


def _renamed_nest_index(plan: _BlockLayoutPlan, nest, depth: int, ivs):
    """The new function's index, where the rewrite was plain: the loops
    around the block swapped for the new ones, the block's iteration
    variables renamed, nothing else bound or moved (see
    :func:`~tirfun.rewrites.index.derive_renamed_nest_index`); None when
    that cannot be told cheaply."""
    site, realize = plan.site, plan.realize
    new_nest = []
    node = nest
    for _ in range(depth):
        new_nest.append(node)
        node = node.body
    return derive_renamed_nest_index(site.index, plan.top, list(plan.nest), new_nest,
                                     [iv.var.name for iv in realize.block.iter_vars],
                                     [iv.var.name for iv in ivs])


@functools.lru_cache(maxsize=256)
def _read_map(params: tuple, results: tuple, extents: tuple):
    """``(extents of the new variables, the parameters each uses, the
    inverse as a function of the new variables)`` of a bijective affine map
    over the domain ``extents``, or None when it is not one: read as
    iteration sums over constant domains, or, over symbolic ones, as mixed
    radices of whole variables (``y * n + w`` with ``w`` in ``[0, n)``, as
    TVM fuses them). A pure function of the map and the domain, kept for
    the next block over that domain under that map (one schedule applied to
    many modules, or to blocks alike): the iterator-map analysis dominates
    the plan."""
    from .index_maps import symbolic_radix

    doms = {p.name: For(p, IntImm(p.dtype, 0), _cast(ext, p.dtype), "serial", _NOP)
            for p, ext in zip(params, extents)}
    sums = detect_iter_map(list(results), doms, "bijective")
    if sums is not None and all(isinstance(t.base, IntImm) and t.base.value == 0 for t in sums) \
            and all(a.extent is not None for t in sums for a in t.args):
        spans = []
        for total in sums:
            span = 1
            for a in total.args:
                span += a.scale * (a.extent - 1)
            spans.append(IntImm(results[len(spans)].dtype, span))
        return tuple(spans), tuple(frozenset(a.source for a in t.args) for t in sums), \
            lambda new_vars: _keep_units(_inverse(sums, params, new_vars), params, results, new_vars)
    radix = symbolic_radix(results, params, list(extents))
    if radix is None:
        return None
    shapes, inverse_of_vars = radix
    unit = {p.name for p, e in zip(params, extents) if _int_value(e) == 1}
    uses = tuple(frozenset(var_names(e) & ({p.name for p in params} - unit)) for e in results)
    return tuple(shapes), uses, inverse_of_vars


@functools.lru_cache(maxsize=256)
def _inverse_at(params: tuple, results: tuple, extents: tuple):
    """``(new variables, each parameter as an expression of them)``: the
    inverse of the map :func:`_read_map` reads, at the placeholders
    ``__new0, __new1, ...`` that the rewrite renames; asked once the new
    iteration types are known to be consistent, kept as that is."""
    fresh_vars = tuple(Var(f"__new{d}", e.dtype) for d, e in enumerate(results))
    inverse = _read_map(params, results, extents)[2](fresh_vars)
    return fresh_vars, tuple(inverse[p] for p in params)


class _Relayout(BodyWalk):
    """The block's body, init and regions with the old iteration variables
    read through ``mapping`` and the indices of loads, stores and regions
    tidied: what :func:`~tirfun.rewrites.index_maps.access_tidier` gives,
    in a walk that rebuilds the nodes a block is nearly always made of
    (arithmetic, loads, stores, casts, calls, sequences, regions) itself
    and hands any other to the tidier. ``plain`` stays true while every
    node met was one of those: then no Let was met, and the rewritten parts
    bind no name the old ones did not."""

    def __init__(self, mapping: dict):
        self.mapping = mapping
        self.generic = None  # the tidier, made for the first node this walk does not know
        self.values = None  # the walk of a substituted value, tidied as the tidier tidies it: no mapping
        self.replaced: dict = {}
        self.tidied: dict = {}
        self.plain = True

    def other(self, n):
        self.plain = False
        if self.generic is None:
            self.generic = access_tidier(self.mapping)
        return self.generic(n)

    def tidy(self, e):
        if type(e) is IntImm or is_plain_sum(e):
            return e  # simplified already, and no division to fold
        out = self.tidied.get(e)
        if out is None:
            out = self.tidied[e] = transform(simplify_index(e), fold_divmod)
        return out

    def index(self, e):
        return self.tidy(self.expr(e))

    def var(self, n):
        value = self.mapping.get(n)
        if value is None:
            return n
        out = self.replaced.get(n)
        if out is None:
            if self.values is None:
                self.values = _Relayout({})
            out = self.replaced[n] = self.values.expr(value)
            self.plain = self.plain and self.values.plain
        return out

    def load(self, n):
        if not buffer_is_plain(n.buffer, self.mapping):
            return self.other(n)
        return super().load(n)

    def store(self, n):
        if not buffer_is_plain(n.buffer, self.mapping):
            return self.other(n)
        return super().store(n)

    def region(self, r):
        if type(r) is not BufferRegion or not buffer_is_plain(r.buffer, self.mapping):
            return self.other(r)
        ranges = [self.range(x) for x in r.region]
        return r if all(a is b for a, b in zip(ranges, r.region)) else with_fields(r, region=ranges)

    def range(self, x):
        lo, extent = self.index(x.min), self.index(x.extent)
        return x if lo is x.min and extent is x.extent else Range(lo, extent)


def _let_free_domains(ivs) -> bool:
    """Whether no iteration variable's domain holds a Let (each is nearly
    always a constant or a variable)."""
    return all(type(iv.dom.min) in _LEAF_EXPRS and type(iv.dom.extent) in _LEAF_EXPRS or not binds_let(iv)
               for iv in ivs)


_LEAF_EXPRS = frozenset({IntImm, Var})


def _keep_units(inverse: dict, params, results, new_vars) -> dict:
    """``inverse`` with a variable of extent 1 that a result gives as it is
    read back from that result's new variable (also 0), as TVM keeps it,
    rather than as the constant 0."""
    for e, v in zip(results, new_vars):
        if isinstance(e, Var) and e in inverse and _int_value(inverse[e]) == 0:
            inverse[e] = _cast(v, e.dtype)
    return inverse


def _same_extent(a, b) -> bool:
    """Two extents that are the same constant, or the same expression."""
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    return a == b


def transform_block_layout(block, index_map) -> TransformBlockLayout:
    """The :class:`TransformBlockLayout` record:
    ``transform_block_layout("B", lambda i, j: (i * 4 + j,))``."""
    return TransformBlockLayout(block, index_map)


__all__ = ["TransformBlockLayout", "transform_block_layout"]
