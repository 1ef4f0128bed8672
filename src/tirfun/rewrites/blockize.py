"""blockize: the subtree under a loop made a block of its own.

The block under the loop splits in two: an outer block ``<name>_o`` with
one iteration variable per original one, bound to the loops above the
given loop, and the original block inside it, its variables bound to the
given loop and the loops below. Each binding is divided as TVM's
``SubspaceDivide`` divides it: ``value == outer * inner_extent + inner``,
where ``inner`` is the part of the value that reads the loops from the
given one down (a dense mixed radix from weight 1) and ``outer`` the part
that reads the loops above it. What the block computes does not change.
"""

from __future__ import annotations

import attrs

from ..analysis.arith import bound_region, detect_iter_map
from ..analysis.arith.iter_map import simplify_index
from ..analysis.arith.simplify import is_true
from ..analysis.traversal import ancestors
from ..nodes import Block, BlockRealize, BufferRegion, For, IntImm, IterVar, IterVarType, PrimExpr, Range, Var
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .checks import child_blocks, describe, loops_above, resolve_loop, resolve_site
from .errors import InvalidArgumentError, NonSingleChildBlockError, NotOnlyChildError, SubspaceNotDivisibleError
from .exprs import cast as _cast, substitute, var_names
from .index_maps import tidy_accesses as _tidy
from .name_pool import NamePool
from .refs import BlockRef, as_loop_ref
from .serialize import py_value


@attrs.frozen
class _Division:
    """One binding divided: ``value == outer * extent + inner``."""

    outer: PrimExpr  # the outer block's binding
    outer_extent: int
    inner: PrimExpr | None  # the inner block's binding (None: no inner part)
    extent: int  # the inner part's extent


@attrs.frozen
class _BlockizePlan:
    site: object
    loop_path: object
    chain: tuple  # the loops from the given one down to the block, outermost first
    realize: BlockRealize
    divisions: tuple
    inner_predicate: PrimExpr
    outer_predicate: PrimExpr


def _slice_expr(arg, loops) -> PrimExpr:
    """``(source // lower_factor) % extent`` of one IterSplit, as an
    expression (without the parts that do nothing)."""
    from ..nodes import FloorDiv, FloorMod

    v = loops[arg.source].loop_var
    e = v
    if arg.lower_factor != 1:
        e = FloorDiv(e, IntImm(v.dtype, arg.lower_factor))
    ext = loops[arg.source].extent
    if arg.extent is not None and not (isinstance(ext, IntImm) and arg.lower_factor * arg.extent >= ext.value):
        e = FloorMod(e, IntImm(v.dtype, arg.extent))
    return e


def _weighted(args, loops, divide: int, dtype) -> PrimExpr | None:
    out = None
    for a in sorted(args, key=lambda a: -a.scale):
        term = _slice_expr(a, loops)
        k = a.scale // divide
        term = term if k == 1 else term * IntImm(term.dtype, k)
        out = term if out is None else out + term
    return None if out is None else _cast(out, dtype)


def _divide(value, total, iv: IterVar, inner_names: set, loops) -> _Division | None:
    """The division of one binding read as the iteration sum ``total``, or
    None when it is not divisible at the given loop."""
    dtype = value.dtype
    inner = sorted((a for a in total.args if a.source in inner_names), key=lambda a: a.scale)
    outer = [a for a in total.args if a.source not in inner_names]
    ext = 1
    for a in inner:  # the inner part: a dense mixed radix from weight 1
        if a.extent is None or a.scale != ext:
            return None
        ext *= a.extent
    if any(a.scale % ext or a.scale < ext for a in outer):
        return None
    base = total.base
    if inner and not (isinstance(base, IntImm) and base.value == 0):
        return None  # an offset would have to be divided too
    span = 1
    for a in outer:
        if a.extent is None:
            return None
        span += (a.scale // ext) * (a.extent - 1)
    outer_expr = _weighted(outer, loops, ext, dtype)
    if not inner:
        # no inner part: the outer binding is the whole value, rebuilt from
        # its slices (a unit loop under the given one takes its one value, 0)
        whole = outer_expr if outer_expr is not None else IntImm(dtype, 0)
        if not (isinstance(base, IntImm) and base.value == 0):
            whole = simplify_index(_cast(base, dtype) + whole) if outer_expr is not None else _cast(base, dtype)
        return _Division(whole, _int(iv.dom.extent) or span, None, 1)
    if outer_expr is None:
        outer_expr = IntImm(dtype, 0)
    return _Division(outer_expr, span, _weighted(inner, loops, 1, dtype), ext)


def _int(e) -> int | None:
    return e.value if isinstance(e, IntImm) and not e.dtype.is_bool else None


@register
@attrs.frozen
class Blockize(Rewrite):
    """Make the subtree under a loop a block of its own (TVM's
    ``blockize``): an outer block ``<name>_o`` replaces the loop, its
    iteration variables bound to the loops above it, and holds the loop and
    the original block, whose variables become the inner part of each
    binding (``vi = vi_o * 16 + vi_i``). The outer block reads and writes
    the regions the inner one touches over its inner variables; a
    reduction's init becomes the outer block's init, a block
    ``<name>_init`` over the inner loops it needs.

    Requirements, each with the error raised when it fails:

    1. the loop exists (UnknownLoopError, RefKindError, UnknownFunctionError);
    2. exactly one block is under it (NonSingleChildBlockError), under a
       chain of loops holding nothing else (NotOnlyChildError);
    3. each binding divides at the loop: the part reading the loop and the
       loops below it is a dense mixed radix from weight 1 (an iteration
       map of those loops), every other part a multiple of its extent, and
       the block's predicate reads the loops on one side only; the
       iteration domains start at 0 (SubspaceNotDivisibleError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
            for i_0, j_0, i_1, j_1 in T.grid(2, 2, 16, 16):
                with T.block("B"):
                    vi = T.axis.spatial(32, i_0 * 16 + i_1)
                    vj = T.axis.spatial(32, j_0 * 16 + j_1)
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        blockize("i_1")

        # after
        @T.prim_func
        def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
            for i_0, j_0 in T.grid(2, 2):
                with T.block("B_o"):
                    vi_o, vj_o = T.axis.remap("SS", [i_0, j_0])
                    T.reads(A[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])
                    T.writes(B[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])
                    for i_1, j_1 in T.grid(16, 16):
                        with T.block("B"):
                            vi_i, vj_i = T.axis.remap("SS", [i_1, j_1])
                            T.reads(A[vi_o * 16 + vi_i, vj_o * 16 + vj_i])
                            T.writes(B[vi_o * 16 + vi_i, vj_o * 16 + vj_i])
                            B[vi_o * 16 + vi_i, vj_o * 16 + vj_i] = A[vi_o * 16 + vi_i, vj_o * 16 + vj_i] * T.float32(2)
    """

    primitive = "blockize"

    target: object = attrs.field(converter=as_loop_ref)
    preserve_unit_iters: object = True

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.target])
        lpath = resolve_loop(chk, site, self.target)
        subject = describe(self.target)
        if not isinstance(self.preserve_unit_iters, bool):
            chk.stop(InvalidArgumentError, subject,
                     f"preserve_unit_iters must be a bool, got {self.preserve_unit_iters!r}")
        loop: For = site.at(lpath)
        found = list(child_blocks(loop, lpath))
        if len(found) != 1:
            chk.stop(NonSingleChildBlockError, subject,
                     f"blockize makes a block of the subtree under the loop, which must hold exactly one block; "
                     f"it holds {len(found)}", loop)
        rpath, realize = found[0]
        chain, node = [], loop
        while isinstance(node, For):
            chain.append(node)
            node = node.body
        if node is not realize:
            chk.stop(NotOnlyChildError, subject,
                     f"the loops under {loop.loop_var.name!r} hold {type(node).__name__} statements besides "
                     "the block, which the new block would leave out", loop)
        block = realize.block
        outer_loops = [lp for _, lp in loops_above(site, lpath)]
        loops = {lp.loop_var.name: lp for lp in outer_loops + chain}
        inner_names = {lp.loop_var.name for lp in chain}
        values = list(realize.iter_values)
        used = set().union(*[var_names(v) for v in values]) if values else set()
        for lp in outer_loops + chain:
            if lp.loop_var.name in used and _int(lp.min) != 0:
                chk.stop(SubspaceNotDivisibleError, subject,
                         f"block {block.name_hint!r}: loop {lp.loop_var.name!r} it reads starts at "
                         f"{lp.min.script()}, not 0", realize)
        sums = detect_iter_map(values, loops, "surjective")
        if sums is None:
            chk.stop(SubspaceNotDivisibleError, subject,
                     f"block {block.name_hint!r}: its binding ({', '.join(v.script() for v in values)}) is not an "
                     "iteration map of the loops around it", realize)
        divisions = []
        for value, total, iv in zip(values, sums, block.iter_vars):
            d = _divide(value, total, iv, inner_names, loops)
            if d is None or _int(iv.dom.min) != 0:
                chk.stop(SubspaceNotDivisibleError, subject,
                         f"block {block.name_hint!r}: the binding {iv.var.name} = {value.script()} does not "
                         f"divide at loop {loop.loop_var.name!r} into a part of the loops above it times the "
                         "extent of a part of the loops from it down", realize)
            divisions.append(d)
        pred = realize.predicate
        # every loop above the given one, past opaque blocks too (whose loops
        # a predicate may read): none of them may be read inside the new block
        outer_names = {node.loop_var.name for _, node in ancestors(site.func, lpath) if isinstance(node, For)}
        used = var_names(pred)
        if is_true(pred):
            inner_pred = outer_pred = pred
        elif used.isdisjoint(outer_names):
            inner_pred, outer_pred = pred, IntImm("bool", 1)
        elif used.isdisjoint(inner_names):
            inner_pred, outer_pred = IntImm("bool", 1), pred
        else:
            chk.stop(SubspaceNotDivisibleError, subject,
                     f"block {block.name_hint!r}: its predicate {pred.script()} reads loops on both sides of "
                     f"loop {loop.loop_var.name!r}", realize)
        if block.init is not None and not is_true(inner_pred):
            # the outer block's init runs over the inner loops its own
            # bindings read, where the predicate's loops may not be
            chk.stop(SubspaceNotDivisibleError, subject,
                     f"block {block.name_hint!r}: a reduction whose predicate {pred.script()} reads the loops "
                     f"from {loop.loop_var.name!r} down, which the outer block's init would not run", realize)
        return _BlockizePlan(site, lpath, tuple(chain), realize, tuple(divisions), inner_pred, outer_pred)

    def build(self, plan: _BlockizePlan) -> Outcome:
        site, realize = plan.site, plan.realize
        block = realize.block
        fresh = NamePool(site.index.names).fresh
        fresh_block = NamePool(site.index.blocks).fresh

        outer_ivs, outer_values, inner_ivs, inner_values, subst = [], [], [], [], {}
        for iv, d in zip(block.iter_vars, plan.divisions):
            dt = iv.var.dtype
            o = Var(fresh(f"{iv.var.name}_o"), dt)
            outer_ivs.append(IterVar(Range(IntImm(dt, 0), IntImm(dt, d.outer_extent)), o, iv.iter_type))
            outer_values.append(_cast(d.outer, dt))
            if d.inner is None or d.extent == 1:
                unit = d.outer_extent == 1 and not self.preserve_unit_iters
                subst[iv.var] = IntImm(dt, 0) if unit else o
                continue
            i = Var(fresh(f"{iv.var.name}_i"), dt)
            inner_ivs.append(IterVar(Range(IntImm(dt, 0), IntImm(dt, d.extent)), i, iv.iter_type))
            inner_values.append(_cast(d.inner, dt))
            subst[iv.var] = i if d.outer_extent == 1 else o * IntImm(dt, d.extent) + i
        body = _tidy(substitute(block.body, subst))
        init = None if block.init is None else _tidy(substitute(block.init, subst))
        reads = [_tidy(substitute(r, subst)) for r in block.reads]
        writes = [_tidy(substitute(w, subst)) for w in block.writes]
        matches = [substitute(m, subst) for m in block.match_buffers]
        outer_reduce = any(iv.iter_type is IterVarType.CommReduce for iv in outer_ivs)
        # the inner block accumulates onto what earlier outer iterations left:
        # it reads what it writes (TVM's is_write_reduction)
        inner_reads = (writes + reads) if (init is not None and outer_reduce) else reads
        inner_block = with_fields(block, iter_vars=inner_ivs, init=None, body=body, reads=inner_reads,
                                  writes=writes, match_buffers=matches)
        inner = BlockRealize(inner_values, plan.inner_predicate, inner_block)
        nest = inner
        for lp in reversed(plan.chain):
            nest = with_fields(lp, body=nest)
        # relaxed over the inner variables, and over the loops from the given
        # one down, which an opaque block's regions read directly
        dom = {iv.var: iv.dom for iv in inner_ivs}
        dom.update({lp.loop_var: Range(lp.min, lp.extent) for lp in plan.chain})
        outer_name = fresh_block(block.name_hint + "_o")
        outer_init = None if init is None else self._outer_init(init, inner_ivs, inner_values, writes, plan,
                                                               fresh_block(block.name_hint + "_init"), fresh)
        outer = Block(outer_ivs, _relaxed(reads, dom), _relaxed(writes, dom), outer_name, nest, outer_init)
        new = BlockRealize(outer_values, plan.outer_predicate, outer)
        mod = commit(site, plan.loop_path, new)
        return Outcome(mod, BlockRef(outer.name_hint, site.func_name))

    @staticmethod
    def _outer_init(init, inner_ivs, inner_values, writes, plan, name, fresh):
        """TVM's GenerateOuterInit: the init as a block ``<name>_init`` over
        the inner data-parallel variables it uses, under the inner loops
        their bindings read (renamed)."""
        used = var_names(init)
        ivs, values, rename = [], [], {}
        for iv, value in zip(inner_ivs, inner_values):
            if iv.iter_type is IterVarType.DataPar and iv.var.name in used:
                v = Var(fresh(f"{iv.var.name}_init"), iv.var.dtype)
                rename[iv.var] = v
                ivs.append(IterVar(iv.dom, v, iv.iter_type))
                values.append(value)
        block = Block(ivs, [], [substitute(w, rename) for w in writes], name, substitute(init, rename))
        stmt = BlockRealize(values, plan.inner_predicate, block)
        loop_rename = {}
        for lp in reversed(plan.chain):
            if any(lp.loop_var.name in var_names(v) for v in values):
                nv = Var(fresh(lp.loop_var.name), lp.loop_var.dtype)
                loop_rename[lp.loop_var] = nv
                stmt = with_fields(lp, loop_var=nv, body=stmt)
        return substitute(stmt, loop_rename)

    def python_args(self):
        args = [py_value(self.target)]
        if self.preserve_unit_iters is not True:
            args.append(f"preserve_unit_iters={py_value(self.preserve_unit_iters)}")
        return args


def _relaxed(regions, dom) -> list:
    """The regions relaxed over the inner variables (``dom``), within each
    buffer's shape."""
    out = []
    for r in regions:
        ranges = []
        for iv, rng, d in zip(bound_region(r, dom), r.region, r.buffer.shape):
            if iv.lo is None or iv.hi is None:
                ranges.append(Range(IntImm(d.dtype, 0), d))
            else:
                lo = simplify_index(iv.lo)
                ranges.append(Range(lo, simplify_index(iv.hi - lo + IntImm(iv.hi.dtype, 1))))
        out.append(BufferRegion(r.buffer, ranges))
    return out


def blockize(target, preserve_unit_iters: bool = True) -> Blockize:
    """The :class:`Blockize` record: ``blockize("i_1")``."""
    return Blockize(target, preserve_unit_iters)


__all__ = ["Blockize", "blockize"]
