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

import itertools
from math import prod

import attrs

from ..analysis.arith import bound_region, detect_iter_map
from ..analysis.arith.int_set import Interval, cover_range, union
from ..analysis.arith.iter_map import is_bijective, is_plain_sum, predicate_fused_parts, simplify_index
from ..analysis.arith.linear import affine_form, fold_mul, prove_equal
from ..analysis.arith.terms import as_exprs, fits, int_value
from ..analysis.arith.simplify import conjoin, conjuncts, is_true, simplify_expr
from ..analysis.traversal import Path, ancestors, substitute_vars, walk
from ..nodes import (
    LE, LT, Add, And, Block, BlockRealize, BufferLoad, BufferRegion, FloorDiv, FloorMod, For, IntImm, IterVar,
    IterVarType, PrimExpr, Range, SeqStmt, Sub, Var,
)
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .checks import child_blocks, describe, loops_above, resolve_block, resolve_loop, resolve_site
from .errors import (
    BlocksNotConsecutiveError, BlocksNotSiblingsError, InvalidArgumentError, NonSingleChildBlockError,
    NotOnlyChildError, NotReductionBlockError, OuterBindingMismatchError, OuterReductionInitError,
    ReductionStartError, RepeatedReductionError, SubspaceNotDivisibleError,
)
from .exprs import cast as _cast, find_nodes, substitute, var_names
from .index import (
    _DOWN, _ROOT_REALIZE, FuncIndex, _is_loose, _own_names_plain, _plain_own_fields, _realizes_along, _scan, _stated,
    _tally_one, leaf_binds_lets,
)
from .index_maps import access_tidier
from .name_pool import NamePool
from .refs import BlockRef, as_block_ref, as_loop_ref
from .serialize import py_value


@attrs.frozen
class _Division:
    """One binding divided: ``value == outer * extent + inner``."""

    outer: PrimExpr  # the outer block's binding
    outer_extent: int | PrimExpr  # symbolic where the block's domain is
    inner: PrimExpr | None  # the inner block's binding (None: no inner part)
    extent: int | PrimExpr  # the inner part's extent (symbolic in a trivial division)
    # where one side takes the binding whole over a domain that does not
    # start at 0 (a loop of range(32, 64)): that domain's start
    start: PrimExpr | None = None


@attrs.frozen
class _BlockizePlan:
    site: object
    loop_path: object
    chain: tuple  # the loops from the given one down to the block, outermost first
    realize: BlockRealize
    divisions: tuple
    inner_predicate: PrimExpr
    outer_predicate: PrimExpr
    init_guard: tuple = ()  # extents the outer init runs only where positive
    # the outer init's predicate, where it is not the inner block's: that
    # predicate at the first iteration of the loops the init does not run
    init_predicate: PrimExpr | None = None


def _first_instance_predicate(realize: BlockRealize, predicate: PrimExpr, divisions, chain,
                              unkept: set) -> PrimExpr | None:
    """``predicate`` (the inner block's) with the loops ``unkept`` (from the cut down,
    which the outer init does not run) at their first iteration, where
    that tells whether the original init runs: every reduction variable
    that reads those loops is then at its start, and each condition that
    reads them is ``e < b`` (or ``<=``) with ``e`` affine and growing in
    them, ``b`` free of them, so that it holds at some iteration exactly
    when it holds at the first (a reduction padded past its end: ``k <
    K``). None otherwise."""
    firsts = {lp.loop_var: lp.min for lp in chain if lp.loop_var.name in unkept}
    if any(var_names(m) & unkept for m in firsts.values()):
        return None
    for d, iv in zip(divisions, realize.block.iter_vars):
        # the inner part of a reduction variable starts there (its outer
        # part is the outer block's, whose own init waits for its start)
        if (iv.iter_type is IterVarType.CommReduce and d.inner is not None
                and not var_names(d.inner).isdisjoint(unkept)):
            at, start = substitute(d.inner, firsts), _start(d, d.inner.dtype, False)
            if at.dtype != start.dtype or not prove_equal(at, start):
                return None
    out = []
    for cond in conjuncts(predicate):
        if var_names(cond).isdisjoint(unkept):
            out.append(cond)
            continue
        if type(cond) not in (LT, LE) or not var_names(cond.b).isdisjoint(unkept):
            return None
        form = affine_form(simplify_index(cond.a))
        # a term over those loops must be one of them, with a positive weight
        # (``k % 4`` grows and falls)
        if form is None or any(type(t) is not Var or w < 0 for t, w in form.terms
                               if not var_names(t).isdisjoint(unkept)):
            return None
        first = simplify_expr(type(cond)(simplify_index(substitute(cond.a, firsts)), cond.b))
        if not is_true(first):
            out.append(first)
    return conjoin(out)


def _init_guard(chk: Checks, site, lpath, chain, kept: set, subject: str, realize: BlockRealize) -> tuple:
    """The extents of the loops from the cut down that the outer block's
    init leaves out (those not in ``kept``) and that may be zero: where one
    is, the block, and so the original init, never runs, while the outer
    block and its init would; the init takes ``0 < extent`` for each (a
    loop it runs too is read under its new name). A ScheduleError where
    such an extent reads another loop from the cut down, which the init
    does not run."""
    from .reduction import empty_extents

    unseen = {lp.loop_var.name for lp in chain} - kept
    out, clash = empty_extents(site, lpath, [lp for _, lp in loops_above(site, lpath)],
                               [lp for lp in chain if lp.loop_var.name not in kept], unseen)
    if clash is not None:
        lp, _ = clash
        chk.stop(ReductionStartError, subject,
                 f"block {realize.block.name_hint!r}: loop {lp.loop_var.name!r} may run no iteration (its "
                 f"extent {lp.extent.script()} may be zero), and where it does not, neither does the block "
                 f"nor its init; the extent reads loop {sorted(var_names(lp.extent) & unseen)[0]!r}, which the "
                 "new block's init does not run, so no condition on it can say when the init runs", realize)
    return tuple(out)


def _slice_expr(arg, loops) -> PrimExpr:
    """``(source // lower_factor) % extent`` of one IterSplit, as an
    expression (without the parts that do nothing)."""
    v = loops[arg.source].loop_var
    e = v
    ext = loops[arg.source].extent
    if isinstance(arg.lower_factor, PrimExpr):
        # f // d of f in range(d * 4): the top digit, no modulus
        return FloorDiv(e, _cast(arg.lower_factor, v.dtype))
    if arg.lower_factor != 1:
        e = FloorDiv(e, IntImm(v.dtype, arg.lower_factor))
    if arg.extent is not None and not (isinstance(ext, IntImm) and arg.lower_factor * arg.extent >= ext.value):
        e = FloorMod(e, IntImm(v.dtype, arg.extent))
    return e


def _weighted(args, loops, divide: int | PrimExpr, dtype) -> PrimExpr | None:
    """``sum(slice * scale / divide)`` over ``args``, the largest scale
    first (a symbolic one is the largest: it follows every constant one)."""
    out = None
    for a in sorted(args, key=lambda a: (0, 0) if not isinstance(a.scale, int) else (1, -a.scale)):
        term = _slice_expr(a, loops)
        k = a.scale if isinstance(divide, int) and divide == 1 else _quotient(a.scale, divide)
        if not isinstance(k, int):
            term = term * _cast(k, term.dtype)
        elif k != 1:
            term = term * IntImm(term.dtype, k)
        out = term if out is None else out + term
    return None if out is None else _cast(out, dtype)


def _same(a: int | PrimExpr, b: int | PrimExpr) -> bool:
    """Whether two scales (ints, or expressions of sizes) are proven equal."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    a, b = as_exprs(a, b)
    return a.dtype == b.dtype and prove_equal(a, b)


def _quotient(scale: int | PrimExpr, ext: int | PrimExpr) -> int | None:
    """``scale / ext`` where ``ext`` divides ``scale`` and is at most it (a
    symbolic pair only where they are proven equal); None otherwise."""
    if isinstance(scale, int) and isinstance(ext, int):
        return scale // ext if scale >= ext and scale % ext == 0 else None
    return 1 if _same(scale, ext) else None


def _inner_extent(a, loops) -> int | PrimExpr | None:
    """How many values an inner slice takes: its extent, or its loop's
    symbolic extent where it takes the loop whole from 0."""
    if a.extent is not None:
        return a.extent if isinstance(a.extent, int) else None
    loop = loops.get(a.source)
    if loop is None or a.lower_factor != 1 or _int(loop.min) != 0:
        return None
    return loop.extent


def _times(a: int | PrimExpr, b: int | PrimExpr) -> int | PrimExpr | None:
    """``a * b`` of two extents, folded where both are constants; None for
    two expressions of different widths."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    a, b = as_exprs(a, b)
    return fold_mul(a, b) if a.dtype == b.dtype else None


def _divide(value, total, iv: IterVar, inner_names: set, loops, unit: Var | None = None,
            above: set = frozenset()) -> _Division | None:
    """The division of one binding read as the iteration sum ``total``, or
    None when it is not divisible at the given loop. ``unit`` is the outer
    loop of extent 1 the binding reads, kept as the outer binding when no
    other outer loop is (TVM's division with ``preserve_unit_iters``).
    ``above``: the names of every loop above the cut, past opaque blocks
    too, which the inner block may not read."""
    d = _divide_sum(value, total, iv, inner_names, loops, unit)
    if d is None and total.args and all(a.source in inner_names for a in total.args):
        # the loops from the cut down only, of symbolic extent (vj = j for j
        # in range(d1), or k_0 * 8 + k_1 of a split of one); a loop above an
        # opaque block around them (t0 * 2 + p under a partition's block) is
        # not one of the sum's loops, and no more visible inside
        d = _whole_inner(value, iv, inner_names, (set(loops) - inner_names) | set(above), unit)
    if d is None and not any(a.source in inner_names for a in total.args):
        # the loops above only, sliced by a size (i_j_fused // k of a fuse
        # of symbolic loops)
        d = _whole_outer(value, iv, inner_names)
    return d


def _whole_inner(value, iv: IterVar, inner_names: set, outside: set, unit: Var | None) -> _Division | None:
    """The inner block takes the binding whole, over the variable's domain,
    and the outer part is one value, as TVM divides it; None where the
    value or the domain reads a loop of ``outside`` (above the cut)."""
    if not var_names(value).isdisjoint(outside):
        return None
    extent = _dom_extent(iv, inner_names)
    if extent is None or _int(iv.dom.min) != 0 or not var_names(iv.dom.extent).isdisjoint(outside):
        return None
    outer = IntImm(value.dtype, 0) if unit is None else _cast(unit, value.dtype)
    return _Division(outer, 1, value, extent)


def _whole_outer(value, iv: IterVar, inner_names: set) -> _Division | None:
    """The outer block takes the binding whole, over the variable's domain;
    None where it reads a loop from the cut down."""
    if not var_names(value).isdisjoint(inner_names):
        return None
    extent = _dom_extent(iv, inner_names)
    if extent is None or _int(iv.dom.min) != 0:
        return None
    return _Division(value, extent, None, 1)


def _divide_sum(value, total, iv: IterVar, inner_names: set, loops, unit: Var | None = None) -> _Division | None:
    """:func:`_divide` where the inner part is a dense mixed radix of
    constant extents (or there is none)."""
    dtype = value.dtype
    inner = sorted((a for a in total.args if a.source in inner_names),
                   key=lambda a: (0, a.scale) if isinstance(a.scale, int) else (1, 0))
    outer = [a for a in total.args if a.source not in inner_names]
    # an inner slice of symbolic extent divides the binding only below an
    # outer slice of symbolic weight (i_1 of i_0 * ((n + 7) // 8) + i_1, cut
    # between them); inner slices alone go whole, over the domain (_whole_inner)
    sized = any(not isinstance(a.scale, int) for a in outer)
    ext = 1
    for a in inner:  # the inner part: a dense mixed radix from weight 1
        if ((a.extent is None or not isinstance(a.scale, int)) and not sized) or not _same(a.scale, ext):
            return None
        size = _inner_extent(a, loops)
        ext = None if size is None else _times(ext, size)
        if ext is None:
            return None
    if any(_quotient(a.scale, ext) is None for a in outer):
        return None
    base = total.base
    if inner and not isinstance(base, IntImm):
        return None  # a symbolic offset would have to be divided too
    span = _outer_span(outer, ext, loops, dtype)
    if span is None:
        return None
    outer_expr = _weighted(outer, loops, ext, dtype)
    if outer_expr is None and unit is not None:
        outer_expr = _cast(unit, dtype)
    if not inner:
        # no inner part: the outer binding is the whole value, rebuilt from
        # its slices (a unit loop under the given one takes its one value, 0)
        whole = outer_expr if outer_expr is not None else IntImm(dtype, 0)
        if not (isinstance(base, IntImm) and base.value == 0):
            whole = simplify_index(_cast(base, dtype) + whole) if outer_expr is not None else _cast(base, dtype)
        # the block's domain holds the value (whatever its base): the outer
        # variable takes it (a symbolic one must not read the inner loops)
        extent = _dom_extent(iv, inner_names)
        return None if extent is None else _Division(whole, extent, None, 1)
    if outer_expr is None:
        outer_expr = IntImm(dtype, 0)
    inner_expr = _weighted(inner, loops, 1, dtype)
    if base.value != 0:
        # a constant offset goes to the inner variable, whose domain starts
        # there (TVM binds it past a domain from 0); the inner part must lie
        # in the variable's domain (a part a predicate bounds reads narrower)
        lo, count = _int(iv.dom.min), _int(iv.dom.extent)
        if not isinstance(ext, int) or lo is None or count is None or not lo <= base.value <= lo + count - ext:
            return None
        return _Division(outer_expr, span, inner_expr + IntImm(dtype, base.value), ext, IntImm(dtype, base.value))
    return _Division(outer_expr, span, inner_expr, ext)


def _outer_span(outer, ext: int, loops, dtype) -> int | PrimExpr | None:
    """The extent of the outer part of a binding, ``1 + sum(scale / ext *
    (extent - 1))`` over its slices: an int, or an expression where a slice
    takes a whole loop of symbolic extent (``i_0`` of a split of ``n * 16``
    by 16 spans ``n``); None for any other slice of unknown extent."""
    const, terms = 1, []
    for a in outer:
        k = _quotient(a.scale, ext)
        if isinstance(a.extent, int):
            const += k * (a.extent - 1)
        elif a.extent is None and a.lower_factor == 1 and a.source in loops:
            last = _cast(loops[a.source].extent, dtype) - IntImm(dtype, 1)
            terms.append(last if k == 1 else last * IntImm(dtype, k))
        else:
            return None
    if not terms:
        return const
    out = IntImm(dtype, const)
    for t in terms:
        out = out + t
    return simplify_index(out)


def _int(e) -> int | None:
    return e.value if isinstance(e, IntImm) and not e.dtype.is_bool else None


def _dom_extent(iv: IterVar, inner_names: set):
    """The extent of the variable's domain, an int where it is constant;
    None where it reads a loop of the inner side, which the outer block
    cannot see."""
    extent = _int(iv.dom.extent)
    if extent is not None:
        return extent
    return None if not var_names(iv.dom.extent).isdisjoint(inner_names) else iv.dom.extent


def _start(d: _Division, dtype, outer: bool) -> PrimExpr:
    """Where the domain of a division's outer (or inner) variable starts:
    0, unless that side takes the binding whole over a domain that starts
    elsewhere."""
    whole = d.inner is None if outer else d.inner is not None
    return IntImm(dtype, 0) if d.start is None or not whole else _cast(d.start, dtype)


def _extent_expr(extent, dtype) -> PrimExpr:
    return IntImm(dtype, extent) if isinstance(extent, int) else _cast(extent, dtype)


def _show(extent) -> str:
    return str(extent) if isinstance(extent, int) else extent.script()


def _as_target(value):
    """A loop (a string names one), or a list of blocks as a tuple of
    BlockRefs (strings name blocks); anything else is kept for the checks."""
    if isinstance(value, (list, tuple)) or type(value).__name__ == "PVector":
        return tuple(as_block_ref(v) for v in value)
    return as_loop_ref(value)


def _check_flag(chk: Checks, subject: str, flag) -> None:
    if not isinstance(flag, bool):
        chk.stop(InvalidArgumentError, subject, f"preserve_unit_iters must be a bool, got {flag!r}")


@attrs.frozen
class _Cut:
    """Where the new block goes: the loops above it in its scope (outer),
    every loop above it past opaque blocks too (``outer_names``), and how
    messages name the place."""

    subject: str
    at: str  # "loop 'i_1'"
    below: str  # how the messages say "the loops from the cut down"
    outer_loops: list
    outer_names: set


@attrs.frozen
class _Part:
    """One block divided at the cut: the loops from the cut down to it
    (outermost first), the division of each binding, and its predicate's
    inner and outer sides."""

    realize: BlockRealize
    chain: tuple
    divisions: tuple
    inner_predicate: PrimExpr
    outer_predicate: PrimExpr


def _unit_outer(value: PrimExpr, outer_loops) -> Var | None:
    """The one outer loop of extent 1 ``value`` reads, if it reads exactly one."""
    names = var_names(value)
    units = [lp.loop_var for lp in outer_loops if lp.loop_var.name in names and _int(lp.extent) == 1]
    return units[0] if len(units) == 1 else None


def _divide_block(chk: Checks, cut: _Cut, realize: BlockRealize, chain, preserve: bool,
                  outer_init: bool) -> _Part:
    """Divide each binding of the block at the cut (requirement 3 of
    :class:`Blockize`), and its predicate between the two sides.
    ``outer_init``: a reduction's init would move to the outer block."""
    block = realize.block
    inner_names = {lp.loop_var.name for lp in chain}
    for lp in chain:
        # the loop moves into the new block, where the loops above the cut
        # are not visible (a compute_at's clipped extent reads them)
        read = sorted((var_names(lp.min) | var_names(lp.extent)) & cut.outer_names)
        if read:
            chk.stop(SubspaceNotDivisibleError, cut.subject,
                     f"block {block.name_hint!r}: loop {lp.loop_var.name!r} runs over a range that reads "
                     f"{read[0]!r}, a loop above {cut.at}; inside the new block that loop is not visible",
                     realize)
    divisions, reason = _affine_divisions(cut, realize, chain, preserve)
    if divisions is None and not (outer_init and block.init is not None
                                  and not _plain_reduction_bindings(realize, chain)):
        # an outer init runs over every inner iteration; the original init
        # runs only where the reduction variables reach their minimum, which
        # bindings that are no iteration map need not do
        divisions = _trivial_divisions(cut, realize, inner_names)
    if divisions is None:
        chk.stop(SubspaceNotDivisibleError, cut.subject, f"block {block.name_hint!r}: {reason}", realize)
    pred = realize.predicate
    used = var_names(pred)
    subject = cut.subject
    if is_true(pred):
        inner_pred = outer_pred = pred
    elif used.isdisjoint(cut.outer_names):
        inner_pred, outer_pred = pred, IntImm("bool", 1)
    elif used.isdisjoint(inner_names):
        inner_pred, outer_pred = IntImm("bool", 1), pred
    else:
        # each condition reading one side guards that side's block
        sides = _sides(pred, chain, cut.outer_loops, cut.outer_names, inner_names)
        if sides is None:
            chk.stop(SubspaceNotDivisibleError, subject,
                     f"block {block.name_hint!r}: its predicate {pred.script()} reads loops on both sides of "
                     f"{cut.at}", realize)
        inner_pred, outer_pred = conjoin(sides[0]), conjoin(sides[1])
    return _Part(realize, tuple(chain), tuple(divisions), inner_pred, outer_pred)


def _sides(pred: PrimExpr, chain, outer_loops, outer_names: set, inner_names: set) -> tuple | None:
    """The predicate's conditions as ``(inner, outer)``: those that read no
    loop above the cut, and the others; a condition that reads loops on
    both sides is read with the loops of one iteration at their one value
    (TVM's iterator maps take such a loop for its constant: the unit loop a
    split by a factor past the extent leaves under the cut). None where
    one still reads both sides."""
    inner, outer = [], []
    for cond in conjuncts(pred):
        names = var_names(cond)
        if not (names.isdisjoint(outer_names) or names.isdisjoint(inner_names)):
            ones = {lp.loop_var: lp.min for lp in list(outer_loops) + list(chain)
                    if lp.loop_var.name in names and int_value(lp.extent) == 1 and int_value(lp.min) is not None}
            if ones:
                cond = simplify_expr(substitute(cond, ones))
                names = var_names(cond)
            if not (names.isdisjoint(outer_names) or names.isdisjoint(inner_names)):
                return None
        (inner if names.isdisjoint(outer_names) else outer).append(cond)
    return inner, outer


def _affine_divisions(cut: _Cut, realize: BlockRealize, chain, preserve: bool):
    """``(divisions, None)`` when every binding divides at the cut as an
    iteration map of the loops, else ``(None, why not)``."""
    block = realize.block
    loops = {lp.loop_var.name: lp for lp in cut.outer_loops + list(chain)}
    inner_names = {lp.loop_var.name for lp in chain}
    values = list(realize.iter_values)
    used = set().union(*[var_names(v) for v in values]) if values else set()
    for lp in cut.outer_loops + list(chain):
        if lp.loop_var.name in used and _int(lp.min) != 0:
            return None, f"loop {lp.loop_var.name!r} it reads starts at {lp.min.script()}, not 0"
    sums = detect_iter_map(values, loops, "surjective", symbolic=True, weights=True)
    divisions = None if sums is None else _divisions(cut, values, block.iter_vars, preserve, sums, loops, inner_names)
    if not isinstance(divisions, list):
        # a predicate may bound a fused part of the loops, and the bindings
        # divide over that part (a split whose factors pass the extent)
        bounded = _predicate_sums(values, loops, inner_names, realize.predicate)
        if bounded is not None:
            found = _divisions(cut, values, block.iter_vars, preserve, bounded=bounded)
            divisions = found if isinstance(found, list) or divisions is None else divisions
    if divisions is None:
        return None, (f"its binding ({', '.join(v.script() for v in values)}) is not an iteration map of the "
                      "loops around it")
    if isinstance(divisions, int):
        iv, value = block.iter_vars[divisions], values[divisions]
        return None, (f"the binding {iv.var.name} = {value.script()} does not divide at {cut.at} into a "
                      f"part of the loops above it times the extent of a part of the loops {cut.below}")
    return divisions, None


def _divisions(cut: _Cut, values, iter_vars, preserve: bool, sums=None, loops=None, inner_names=None,
               bounded=None):
    """The division of every binding (over ``sums``, or over the stand-ins
    of ``bounded``), or the position of the first that does not divide."""
    out = []
    for k, (value, iv) in enumerate(zip(values, iter_vars)):
        unit = _unit_outer(value, cut.outer_loops) if preserve else None
        if bounded is None:
            d = _divide(value, sums[k], iv, inner_names, loops, unit, cut.outer_names)
        else:
            d = bounded.divide(k, iv, unit, cut.outer_names)
        if d is None or _int(iv.dom.min) != 0:
            return k
        out.append(d)
    return out


@attrs.frozen
class _Bounded:
    """The bindings read over loops fused by the predicate
    (:func:`predicate_fused_parts`): each part that a conjunct ``e < c``
    bounds is one stand-in loop of ``c`` iterations, on the side of the
    cut where all the loops of ``e`` are. ``values``, ``sums`` and
    ``loops`` are over the stand-ins; ``parts`` maps each stand-in's name
    to its ``e``; ``inner_names`` are the inner loops, stand-ins included;
    ``original`` the bindings and ``all_names`` the loops before."""

    values: list
    sums: list
    loops: dict
    parts: dict
    inner_names: set
    original: list
    all_names: set

    def divide(self, k: int, iv: IterVar, unit: Var | None, above: set) -> _Division | None:
        """The division of binding ``k``: its slices of the stand-ins
        divided as slices of loops (TVM's iterator map reads the predicate
        so), each stand-in then given back its sum; else, for a binding
        that reads a part, that side whole, over the variable's domain."""
        d = _divide(self.values[k], self.sums[k], iv, self.inner_names, self.loops, unit, above)
        if d is not None:
            back = {lp.loop_var: self.parts[name] for name, lp in self.loops.items() if name in self.parts}
            return _Division(_given_back(d.outer, back), d.outer_extent, _given_back(d.inner, back), d.extent,
                             d.start)
        value = self.original[k]
        inner = self.inner_names - set(self.parts)
        if not var_names(value).isdisjoint(self.all_names - set(self.loops)):  # it reads a part
            return _divide_whole(value, iv, inner, self.all_names, unit)
        return None


def _given_back(e: PrimExpr | None, back: dict) -> PrimExpr | None:
    """``e`` with each stand-in loop replaced by the sum it stands for."""
    if e is None or not back:
        return e
    return simplify_index(substitute(e, back))


def _predicate_sums(values, loops, inner_names: set, predicate) -> _Bounded | None:
    """The bindings as iteration sums where the predicate bounds a fused
    part (``(f_0 + f_1) // 3`` under ``f_0 + f_1 < 6``,
    :func:`predicate_fused_parts`) and the loops of each such part lie on
    one side of the cut; None otherwise."""
    fused = predicate_fused_parts(values, loops, predicate)
    if fused is None:
        return None
    fvalues, floops, parts = fused
    inner = set(inner_names) & set(floops)
    for name, part in parts.items():
        read = var_names(part) & set(loops)
        if read <= inner_names:
            inner.add(name)
        elif not read.isdisjoint(inner_names):
            return None
    sums = detect_iter_map(fvalues, floops, "surjective", symbolic=True, weights=True)
    if sums is None:
        return None
    return _Bounded(fvalues, sums, floops, parts, inner, list(values), set(loops))


def _divide_whole(value, iv: IterVar, inner_names: set, loop_names: set, unit: Var | None) -> _Division | None:
    """The division of a binding that reads the loops of one side only:
    the inner block takes it whole over the variable's domain (the outer
    part one value), or the outer block does; None where it reads both."""
    d = None
    if var_names(value) & loop_names <= inner_names:
        d = _whole_inner(value, iv, inner_names, loop_names - inner_names, unit)
    return d if d is not None else _whole_outer(value, iv, inner_names)


def _trivial_divisions(cut: _Cut, realize: BlockRealize, inner_names: set):
    """TVM's trivial subspace division, for bindings that are no iteration
    map: without a predicate, each binding reads the loops on one side only
    and goes to that side whole (one reading no loop goes outside, where
    it keeps its value), over the iteration variable's domain; None
    otherwise. A domain that does not start at 0 keeps its start (TVM
    gives the new variable the extent alone, and a binding outside it)."""
    if not is_true(realize.predicate):
        return None
    out = []
    for value, iv in zip(realize.iter_values, realize.block.iter_vars):
        extent = _dom_extent(iv, inner_names)
        start = iv.dom.min
        if extent is None or (_int(start) != 0 and not (type(start) is IntImm and start.value > 0)):
            return None
        start = None if _int(start) == 0 else start
        names = var_names(value)
        reads_outer, reads_inner = not names.isdisjoint(cut.outer_names), not names.isdisjoint(inner_names)
        if reads_outer and reads_inner:
            return None
        if reads_inner:
            out.append(_Division(IntImm(value.dtype, 0), 1, value, extent, start))
        else:
            out.append(_Division(value, extent, None, 1, start))
    return out


def _plain_reduction_bindings(realize: BlockRealize, chain) -> bool:
    """Whether every reduction variable that reads a loop of ``chain`` (the
    loops from the cut down) is bound to one such loop over its whole
    range, the variable's domain: its minimum then comes at the loop's
    first iteration, where an init that moves to the outer block runs."""
    ranges = {lp.loop_var: lp for lp in chain}
    inner = {lp.loop_var.name for lp in chain}
    for value, iv in zip(realize.iter_values, realize.block.iter_vars):
        if iv.iter_type is not IterVarType.CommReduce or var_names(value).isdisjoint(inner):
            continue
        lp = ranges.get(value) if type(value) is Var else None
        if lp is None or lp.min != iv.dom.min or lp.extent != iv.dom.extent:
            return False
    return True


def _inner_parts(block: Block, divisions, outer_vars, preserve: bool, fresh):
    """The inner block's iteration variables and bindings, and what each
    original variable becomes (``vi_o * 16 + vi_i``, ``vi_o``, ``vi_i``, 0)."""
    inner_ivs, inner_values, subst = [], [], {}
    for iv, d, o in zip(block.iter_vars, divisions, outer_vars):
        dt = iv.var.dtype
        if d.inner is not None and d.extent == 1 and d.start is not None:
            # the inner side's one value is where its domain starts
            subst[iv.var] = _cast(d.start, dt) if d.outer_extent == 1 else o + _cast(d.start, dt)
            continue
        if d.inner is None or d.extent == 1:
            unit = d.outer_extent == 1 and not preserve
            subst[iv.var] = _start(d, dt, True) if unit else o
            continue
        i = Var(fresh(f"{iv.var.name}_i"), dt)
        inner_ivs.append(IterVar(Range(_start(d, dt, False), _extent_expr(d.extent, dt)), i, iv.iter_type))
        inner_values.append(_cast(d.inner, dt))
        subst[iv.var] = i if d.outer_extent == 1 else o * _extent_expr(d.extent, dt) + i
    return inner_ivs, inner_values, subst


def _reaches_twice(realize: BlockRealize, chain: list, inner_names: set, outer_loops=()) -> bool:
    """Whether two iterations of the loops of ``chain`` bind the block's
    iteration variables alike (a loop that feeds none of them, or ``vi =
    f // 2`` after a fuse with such a loop): the block's instance runs
    twice. The map is read as an iteration map first; where it is not a
    bijective one, the iterations are enumerated (up to 4,096, the loops
    above taken at zero), and where they cannot be, two passes are
    assumed. Under a predicate (a split past the extent), only the passes
    where it holds count, at each iteration of the loops above it reads
    (``outer_loops``, constant ranges)."""
    fed = set().union(*[var_names(v) for v in realize.iter_values])
    guarded = not is_true(realize.predicate)
    if any(lp.loop_var.name not in fed and (int_value(lp.extent) or 0) > 1 for lp in chain):
        # a loop that feeds no iteration variable repeats them all, unless
        # the predicate lets one pass through (a split past the extent):
        # the passes are counted below
        if not guarded:
            return True
    else:
        guarded = False
    values = [v for v in realize.iter_values if not var_names(v).isdisjoint(inner_names)]
    if not values and not guarded:
        return False
    # the common bindings, ``i`` or ``vi_o * 4 + i``: each a distinct inner
    # loop added once, which no two iterations share
    plain = [_added_loop(v, inner_names) for v in values]
    if not guarded and None not in plain and len(set(plain)) == len(plain):
        return False
    loops = {lp.loop_var.name: lp for lp in chain}
    if not guarded and is_bijective(values, loops, realize.predicate):
        return False
    mins, extents = [int_value(lp.min) for lp in chain], [int_value(lp.extent) for lp in chain]
    if None in mins or None in extents or prod(max(e, 0) for e in extents) > 4096:
        return True
    # the loops above (and the function's parameters) at one value: zero
    outer = {n: IntImm(n.dtype, 0) for v in values for n in walk(v) if type(n) is Var and n.name not in inner_names}
    # where the predicate reads loops above, the passes are counted at each
    # of their iterations (loops of constant ranges, few enough)
    above = [lp for lp in outer_loops if guarded and lp.loop_var.name in var_names(realize.predicate)]
    if guarded and not var_names(realize.predicate) <= inner_names | {lp.loop_var.name for lp in above}:
        return True  # the passes the predicate lets through depend on what is not counted
    amins, aexts = [int_value(lp.min) for lp in above], [int_value(lp.extent) for lp in above]
    if None in amins or None in aexts or prod(max(e, 0) for e in aexts + extents) > 4096:
        return True
    for at in itertools.product(*[range(m, m + e) for m, e in zip(amins, aexts)]):
        fixed = {**outer, **{lp.loop_var: IntImm(lp.loop_var.dtype, x) for lp, x in zip(above, at)}}
        if _repeats(realize, values, chain, mins, extents, fixed, guarded):
            return True
    return False


def _repeats(realize: BlockRealize, values, chain, mins, extents, fixed: dict, guarded: bool) -> bool:
    """Whether two iterations of ``chain`` where the predicate holds (with
    ``fixed`` for the variables above) bind ``values`` alike."""
    seen = set()
    for point in itertools.product(*[range(m, m + e) for m, e in zip(mins, extents)]):
        env = {**fixed, **{lp.loop_var: IntImm(lp.loop_var.dtype, x) for lp, x in zip(chain, point)}}
        if guarded:
            holds = simplify_expr(substitute_vars(realize.predicate, env))
            if type(holds) is not IntImm:
                return True
            if not holds.value:
                continue  # the block does not run at this pass
        key = []
        for v in values:
            value = simplify_expr(substitute_vars(v, env))
            if type(value) is not IntImm:
                return True  # not a number (a load): assumed to repeat
            key.append(value.value)
        if tuple(key) in seen:
            return True
        seen.add(tuple(key))
    return False


def _added_loop(value: PrimExpr, inner_names: set) -> str | None:
    """The name of the inner loop ``value`` is, or adds to an expression of
    no inner loop (``vi_o * 4 + i``); None for any other binding."""
    if type(value) is Var:
        return value.name if value.name in inner_names else None
    if type(value) is Add:
        for a, b in ((value.a, value.b), (value.b, value.a)):
            if type(a) is Var and a.name in inner_names and var_names(b).isdisjoint(inner_names):
                return a.name
    return None


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
       each condition of the block's predicate reads the loops on one side
       only, a loop of one iteration read at its value (an outer
       part that takes a loop of symbolic extent whole spans that
       extent: ``i_0 * 16 + i_1`` over ``n * 16`` gives ``vi_o`` over
       ``n``; a part weighted by the symbolic extent of the part below
       it divides there too: ``i_0 * m + i_1`` at ``i_1`` gives ``vi_o *
       m + vi_i``; a binding of the loops from it down only, of symbolic
       extents, goes to the inner block whole over its domain; a part the
       predicate bounds, ``j_0 + j_1 < 4`` of a split past the extent, is
       read as a loop of 4, as TVM's iterator maps read it; a constant
       offset goes to the inner variable, whose domain then starts there);
       the iteration domains start at 0, and the ranges of the loops that
       move into the new block read no loop above it. Failing that
       (bindings that are no iteration map, loops that do not start at 0),
       without a predicate, each binding reads the loops on one side only
       and goes to that side whole over its domain, its start kept, as
       TVM's trivial division (which drops the start); for a loop with an
       init, only where each reduction variable of the inner side is one
       loop over exactly its domain (SubspaceNotDivisibleError). A
       reduction's predicate reads only loops its outer init runs over, or
       holds at the first step of those it leaves out exactly where it
       holds at some step (``k < K``), and the init then takes it there
       (SubspaceNotDivisibleError), and a loop the outer init leaves out
       whose extent may be zero (``range(d)``) gives the init the
       condition ``0 < d``: where it is zero the original never
       initialises, and TVM's outer init does; the condition may read the
       loops the init runs over only (ReductionStartError).

    Given a list of blocks instead (TVM's blockize of blocks), one new
    block ``outer_<B>_<C>_`` takes the place of their loop nests and holds
    them, in program order. Each block is divided as above at the sequence
    holding the nests: the outer part of its bindings reads the loops above
    the sequence, the inner part its own loops. The new block's k-th
    iteration variable is shared by the blocks' k-th variables; its reads
    and writes are the union, per buffer, of the blocks' relaxed regions.
    A reduction keeps its init in its own block, which then runs once per
    outer iteration (TVM's list form drops it). Requirements:

    4. two blocks or more, each given once (InvalidArgumentError), that
       exist (UnknownBlockError, RefKindError);
    5. each block, with the loops right above it that hold nothing else,
       is an item of one sequence of statements (BlocksNotSiblingsError),
       the items consecutive (BlocksNotConsecutiveError);
    6. each block's bindings divide at the sequence as in 3
       (SubspaceNotDivisibleError), and the blocks agree on the outer side:
       the k-th iteration variable of each has the same outer binding,
       extent and type, and their predicates the same outer side
       (OuterBindingMismatchError);
    7. a reduction block with an init does not reduce over the loops above
       the sequence (OuterReductionInitError).

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

    Example of the list form:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
            for m in range(2):
                for i, j in T.grid(4, 4):
                    with T.block("B"):
                        vi = T.axis.spatial(8, m * 4 + i)
                        vj = T.axis.spatial(4, j)
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(4, 4):
                    with T.block("C"):
                        vi = T.axis.spatial(8, m * 4 + i)
                        vj = T.axis.spatial(4, j)
                        C[vi, vj] = B[vi, vj] + T.float32(1)

        # rewrite
        blockize(["B", "C"])

        # after
        @T.prim_func
        def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
            for m in range(2):
                with T.block("outer_B_C_"):
                    vi_o = T.axis.spatial(2, m)
                    vj_o = T.axis.spatial(1, 0)
                    T.reads(A[vi_o * 4:vi_o * 4 + 4, 0:4], B[vi_o * 4:vi_o * 4 + 4, 0:4])
                    T.writes(B[vi_o * 4:vi_o * 4 + 4, 0:4], C[vi_o * 4:vi_o * 4 + 4, 0:4])
                    for i, j in T.grid(4, 4):
                        with T.block("B"):
                            vi_i, vj_i = T.axis.remap("SS", [i, j])
                            B[vi_o * 4 + vi_i, vj_i] = A[vi_o * 4 + vi_i, vj_i] * T.float32(2)
                    for i, j in T.grid(4, 4):
                        with T.block("C"):
                            vi_i, vj_i = T.axis.remap("SS", [i, j])
                            C[vi_o * 4 + vi_i, vj_i] = B[vi_o * 4 + vi_i, vj_i] + T.float32(1)
    """

    primitive = "blockize"

    target: object = attrs.field(converter=_as_target)
    preserve_unit_iters: object = True

    def plan(self, mod, chk: Checks):
        if isinstance(self.target, tuple):
            return _plan_blocks(self, mod, chk)
        site = resolve_site(chk, mod, [self.target])
        lpath = resolve_loop(chk, site, self.target)
        subject = describe(self.target)
        _check_flag(chk, subject, self.preserve_unit_iters)
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
        cut = _Cut(subject, f"loop {loop.loop_var.name!r}", "from it down",
                   [lp for _, lp in loops_above(site, lpath)],
                   # every loop above the given one, past opaque blocks too
                   # (whose loops a predicate may read): none of them may be
                   # read inside the new block
                   {node.loop_var.name for _, node in ancestors(site.func, lpath) if isinstance(node, For)})
        part = _divide_block(chk, cut, realize, chain, self.preserve_unit_iters, outer_init=True)
        block = realize.block
        if block.init is not None:
            from .reduction import check_init_allocation

            check_init_allocation(chk, subject, realize, "the new block's init, lifted out of it,")
            inner_names = {lp.loop_var.name for lp in chain}
            # a reduction variable of the outer side has a value in the new block
            reduce_names = {iv.var.name for iv, v in zip(block.iter_vars, realize.iter_values)
                            if iv.iter_type is IterVarType.CommReduce and not var_names(v).isdisjoint(inner_names)}
            written = set().union(*[var_names(r) for r in block.writes])
            indexing = sorted(reduce_names & written)
            if indexing:
                # the lifted init runs over the inner spatial variables only:
                # it would index by a variable nothing binds (TVM's does)
                chk.stop(NotReductionBlockError, subject,
                         f"block {block.name_hint!r}: its reduction variable {indexing[0]} indexes what it "
                         "writes, and the init lifted into the new block would have no value of it", realize)
            if _reaches_twice(realize, chain, inner_names, cut.outer_loops):
                # a loop under the target that feeds no iteration variable
                # repeats the reduction, its init running at each pass; the
                # outer block's init would run once for all of them
                chk.stop(RepeatedReductionError, subject,
                         f"block {block.name_hint!r}: the loops from {loop.loop_var.name!r} down reach an instance "
                         "of the reduction more than once, re-initialising it each time; the new block's init "
                         "would run once for them all", realize)
            for iv, value in zip(block.iter_vars, realize.iter_values):
                # the init runs wherever the reduction variables are at
                # their start: at every value of a spatial variable, which
                # re-initialises an element that does not depend on it
                if (iv.iter_type is not IterVarType.CommReduce and int_value(iv.dom.extent) != 1
                        and iv.var.name not in written and not var_names(value).isdisjoint(inner_names)):
                    chk.stop(RepeatedReductionError, subject,
                             f"block {block.name_hint!r}: its init runs at every value of the "
                             f"{'spatial' if iv.iter_type is IterVarType.DataPar else 'opaque'} variable "
                             f"{iv.var.name}, which the block's writes do not depend on, re-initialising what it "
                             "accumulates each time; the new block's init would run once for them all", realize)
        init_guard, init_predicate = (), None
        if block.init is not None:
            # the outer block's init runs over the inner loops its own
            # bindings read (the spatial ones its stores name)
            used = var_names(block.init)
            chain_names = {lp.loop_var.name for lp in chain}
            # the loops the inner bindings of those variables read (one
            # taking its one value has no inner variable: see _inner_parts)
            kept = set().union(*[var_names(d.inner) for iv, d in zip(block.iter_vars, part.divisions)
                                 if iv.iter_type is not IterVarType.CommReduce and iv.var.name in used
                                 and d.inner is not None and d.extent != 1]) & chain_names
            # a loop of one iteration the predicate reads joins the init's
            # nest: it repeats nothing
            units = {lp.loop_var.name for lp in chain if int_value(lp.extent) == 1}
            unkept = (var_names(part.inner_predicate) & chain_names) - kept - units
            if unkept and not is_true(part.inner_predicate):
                init_predicate = _first_instance_predicate(realize, part.inner_predicate, part.divisions, chain,
                                                           chain_names - kept)
            if unkept and init_predicate is None:
                chk.stop(SubspaceNotDivisibleError, subject,
                         f"block {block.name_hint!r}: a reduction whose predicate {realize.predicate.script()} reads "
                         f"the loops from {loop.loop_var.name!r} down that the outer block's init does not run",
                         realize)
            init_guard = _init_guard(chk, site, lpath, chain, kept, subject, realize)
        return _BlockizePlan(site, lpath, part.chain, realize, part.divisions, part.inner_predicate,
                             part.outer_predicate, init_guard, init_predicate)

    def build(self, plan) -> Outcome:
        if isinstance(plan, _BlocksPlan):
            return _build_blocks(plan, self.preserve_unit_iters)
        site = plan.site
        new = self.outer_realize(plan, NamePool(site.index.names).fresh, NamePool(site.index.blocks).fresh)
        mod = commit(site, plan.loop_path, new, derive=lambda new_func: _stated_index(plan, new, new_func))
        return Outcome(mod, BlockRef(new.block.name_hint, site.func_name))

    def outer_realize(self, plan: _BlockizePlan, fresh, fresh_block) -> BlockRealize:
        """The new block's BlockRealize, which takes the place of the loop
        (a plan of a loop from :meth:`analyze`), with fresh names for
        variables and blocks from ``fresh`` and ``fresh_block``."""
        block = plan.realize.block
        outer_ivs, outer_values = [], []
        for iv, d in zip(block.iter_vars, plan.divisions):
            dt = iv.var.dtype
            o = Var(fresh(f"{iv.var.name}_o"), dt)
            outer_ivs.append(IterVar(Range(_start(d, dt, True), _extent_expr(d.outer_extent, dt)), o, iv.iter_type))
            outer_values.append(_cast(d.outer, dt))
        inner_ivs, inner_values, subst = _inner_parts(block, plan.divisions, [iv.var for iv in outer_ivs],
                                                      self.preserve_unit_iters, fresh)
        # one tidier for the block's parts: an index a store, its loads and
        # the declared regions share is simplified once
        tidy = access_tidier(subst)
        body = tidy(block.body)
        init = None if block.init is None else tidy(block.init)
        reads = [tidy(r) for r in block.reads]
        writes = [tidy(w) for w in block.writes]
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
        # a load in the range of a loop moved inside is a read of the new
        # block too (``for k in range(B[1])``): its regions declare every
        # access under it
        ranged = _range_loads(plan.chain)
        relaxed = _relaxed(reads + ranged + writes, dom)
        n_reads = len(reads) + len(ranged)
        outer = Block(outer_ivs, relaxed[:n_reads], relaxed[n_reads:], outer_name, nest, outer_init)
        return BlockRealize(outer_values, plan.outer_predicate, outer)

    @staticmethod
    def _outer_init(init, inner_ivs, inner_values, writes, plan, name, fresh):
        """TVM's GenerateOuterInit: the init as a block ``<name>_init`` over
        the inner variables it uses, under the inner loops their bindings
        read (renamed). TVM takes the data-parallel ones only, and an init
        indexed by an opaque variable (``T.axis.opaque``) is left naming a
        variable nothing binds; the init runs at every value of an opaque
        variable as of a data-parallel one, so it takes both."""
        used = var_names(init)
        ivs, values, rename = [], [], {}
        for iv, value in zip(inner_ivs, inner_values):
            if iv.iter_type is not IterVarType.CommReduce and iv.var.name in used:
                v = Var(fresh(f"{iv.var.name}_init"), iv.var.dtype)
                rename[iv.var] = v
                ivs.append(IterVar(iv.dom, v, iv.iter_type))
                values.append(value)
        block = Block(ivs, [], [substitute(w, rename) for w in writes], name, substitute(init, rename))
        predicate = plan.inner_predicate if plan.init_predicate is None else plan.init_predicate
        for extent in reversed(plan.init_guard):
            # the block runs only where the loops it leaves out do
            cond = LT(IntImm(extent.dtype, 0), extent)
            predicate = cond if is_true(predicate) else And(cond, predicate)
        stmt = BlockRealize(values, predicate, block)
        loop_rename = {}
        guarded = var_names(predicate)
        for lp in reversed(plan.chain):
            if lp.loop_var.name in guarded or any(lp.loop_var.name in var_names(v) for v in values):
                nv = Var(fresh(lp.loop_var.name), lp.loop_var.dtype)
                loop_rename[lp.loop_var] = nv
                stmt = with_fields(lp, loop_var=nv, body=stmt)
        return substitute(stmt, loop_rename)

    def python_args(self):
        if isinstance(self.target, tuple):  # a list of blocks, written as TVM's list
            args = ["[" + ", ".join(py_value(b) for b in self.target) + "]"]
        else:
            args = [py_value(self.target)]
        if self.preserve_unit_iters is not True:
            args.append(f"preserve_unit_iters={py_value(self.preserve_unit_iters)}")
        return args


def _stated_index(plan: _BlockizePlan, new: BlockRealize, new_func) -> FuncIndex | None:
    """The index after blockize put ``new`` in the place of the loop, stated
    from what it changed rather than derived by walking both subtrees: the
    loops of the chain move one block down, under the new block, with the
    block below them; the block trades its iteration variables for the
    inner ones; the new block binds its name and its outer variables, and
    its init (if any) is indexed on its own. Only for the common case,
    where what moves binds no other name: the block declares no buffer,
    no Let lies in its fields, its body or its init (each stores only,
    so nothing is under the block), and no loop of the chain is loose
    (its bounds name no buffer: moving into a block would change the
    count of loose statements). None otherwise, and the index is derived."""
    site, path, chain, old_realize = plan.site, plan.loop_path, plan.chain, plan.realize
    old = site.index
    block = old_realize.block
    if old.clashes or path == _ROOT_REALIZE or not _own_names_plain(block) or leaf_binds_lets(block) \
            or any(map(_is_loose, chain)):
        return None
    outer = new.block
    inner = outer.body
    while type(inner) is For:
        inner = inner.body
    if not _plain_own_fields(outer) or not _plain_own_fields(inner.block):
        return None
    delta: dict = {}
    get = delta.get
    for iv in block.iter_vars:
        delta[iv.var.name] = get(iv.var.name, 0) - 1
    for iv in itertools.chain(outer.iter_vars, inner.block.iter_vars):
        delta[iv.var.name] = get(iv.var.name, 0) + 1
    delta[outer.name_hint] = get(outer.name_hint, 0) + 1
    # a binding or predicate holding a Let (nearly never) binds its name
    _tally_one(old_realize, delta, -1)
    _tally_one(inner, delta, 1)
    _tally_one(new, delta, 1)
    outer_path = path + _INTO_BLOCK
    gone = _chain_entries(path, chain, block)
    came = [(False, outer.name_hint, outer_path)]
    came.extend((True, lp.loop_var.name, outer_path + _DOWN * (j + 1)) for j, lp in enumerate(chain))
    came.append((False, block.name_hint, outer_path + _DOWN * (len(chain) + 1) + _INTO_BLOCK))
    realizes = _realizes_along(site.func, new_func, path)
    realizes += [(old_realize, None), (None, new), (None, inner)]
    if outer.init is not None:
        init_realizes: list = []
        came.extend(_scan(outer.init, outer_path + (("init", None),), delta, 1, {}, realizes=init_realizes))
        realizes.extend((None, b) for b in init_realizes)
    return _stated(old, delta, (), gone, came, realizes)  # None on a clash: derive_index then


_INTO_BLOCK = (("block", None),)


def _chain_entries(path: Path, chain, block: Block) -> list:
    """The index entries (``(is_loop, name, path)``) of the loops of
    ``chain`` from ``path`` down and of ``block`` below them: what goes
    where blockize (or tensorize of a loop) puts a new block in their place."""
    out = [(True, lp.loop_var.name, path + _DOWN * j) for j, lp in enumerate(chain)]
    out.append((False, block.name_hint, path + _DOWN * len(chain) + _INTO_BLOCK))
    return out


def _range_loads(chain) -> list:
    """A one-element region for each load in the ranges of ``chain``'s loops."""
    return [BufferRegion(load.buffer, [Range(i, IntImm(i.dtype, 1)) for i in load.indices])
            for lp in chain for e in (lp.min, lp.extent) for load in find_nodes(e, (BufferLoad,))]


def _relaxed(regions, dom) -> list:
    """The regions relaxed over the inner variables (``dom``), within each
    buffer's shape."""
    intervals = None  # made on first use, once for every region
    out = []
    for r in regions:
        ranges = [_relaxed_var(rng, dom, d) for rng, d in zip(r.region, r.buffer.shape)]
        if None not in ranges:
            out.append(BufferRegion(r.buffer, ranges))
            continue
        if intervals is None:
            intervals = {v: Interval.from_range(r) for v, r in dom.items()}
        ranges = []
        for iv, rng, d in zip(bound_region(r, intervals), r.region, r.buffer.shape):
            if iv.lo is None or iv.hi is None:
                ranges.append(Range(IntImm(d.dtype, 0), d))
            else:
                lo, hi = simplify_index(iv.lo), iv.hi
                # a predicated split relaxes past the buffer's end (0:9 of
                # 8 elements); the instances out there never run, and a
                # region declared past the end would send a cache's copy
                # out of bounds
                end = int_value(d)
                if end is not None:
                    if type(lo) is IntImm and lo.value < 0:
                        lo = IntImm(lo.dtype, 0)
                    if type(hi) is IntImm and hi.value > end - 1:
                        hi = IntImm(hi.dtype, max(end - 1, lo.value if type(lo) is IntImm else end - 1))
                ranges.append(Range(lo, _span(lo, hi)))
        out.append(BufferRegion(r.buffer, ranges))
    return out


def _relaxed_var(rng: Range, dom, d: PrimExpr) -> Range | None:
    """One dimension of :func:`_relaxed` whose start is a variable and
    whose extent a literal of its dtype, worked out in integers: a variable
    that is not relaxed keeps the range as it is, one relaxed over a range
    of literals spans it (clipped to the buffer's extent ``d``), as bound
    inference and the simplification of its ends write them; None for
    anything else (or where a bound leaves the dtype), which the general
    path answers."""
    m, extent = rng.min, rng.extent
    if type(m) is not Var or type(extent) is not IntImm or extent.dtype != m.dtype or m.dtype.is_bool \
            or extent.value < 1:
        return None
    dtype = m.dtype
    over = dom.get(m)
    if over is None:
        return rng  # ``[m, m + extent - 1]``, which spans the extent again
    first, count = over.min, over.extent
    if type(first) is not IntImm or type(count) is not IntImm or first.dtype != dtype or count.dtype != dtype \
            or count.value < 1:
        return None
    lo = first.value
    hi = lo + count.value - 1 + extent.value - 1
    if not (fits(dtype, lo + count.value) and fits(dtype, lo) and fits(dtype, hi)):
        return None
    end = int_value(d)
    if end is not None:
        if lo < 0:
            lo = 0
        if hi > end - 1:
            hi = max(end - 1, lo)
    if not fits(dtype, hi - lo + 1):
        return None
    return Range(IntImm(dtype, lo), IntImm(dtype, hi - lo + 1))


def _span(lo: PrimExpr, hi: PrimExpr) -> PrimExpr:
    """``hi - lo + 1``, simplified. Ends that are one sum in normal form
    plus different constants (``vi_o * 16`` and ``vi_o * 16 + 15``, what
    relaxing ``vi_o * 16 + vi_i`` gives) span the difference of their
    constants, which is what simplifying the difference comes to."""
    rest_lo, c_lo = _constant_part(lo)
    rest_hi, c_hi = _constant_part(hi)
    dtype = hi.dtype
    if lo.dtype == dtype and rest_lo == rest_hi and (rest_lo is None or is_plain_sum(rest_lo)) \
            and fits(dtype, c_hi - c_lo + 1):
        return IntImm(dtype, c_hi - c_lo + 1)
    return simplify_index(hi - lo + IntImm(dtype, 1))


def _constant_part(e: PrimExpr) -> tuple:
    """``(rest, c)`` with ``e`` written ``rest + c`` (``rest`` None for a literal)."""
    if type(e) is IntImm:
        return None, e.value
    if type(e) is Add and type(e.b) is IntImm:
        return e.a, e.b.value
    if type(e) is Sub and type(e.b) is IntImm:
        return e.a, -e.b.value
    return e, 0


@attrs.frozen
class _BlocksPlan:
    site: object
    seq_path: object  # the sequence holding the blocks' loop nests
    first: int  # the items first..last of it are replaced
    last: int
    parts: tuple  # one _Part per block, in program order
    outer: tuple  # (IterVar it comes from, outer binding, extent) per outer variable
    outer_predicate: PrimExpr


def _sibling_item(chk: Checks, site, subject: str, ref, block_path):
    """The block's loop nest as an item of a sequence: (sequence path,
    position, the loops from the item down, the BlockRealize)."""
    rpath = block_path[:-1]
    realize = site.at(rpath)
    path, chain = rpath, []
    while path and path[-1] == ("body", None) and isinstance(site.at(path[:-1]), For):
        path = path[:-1]
        chain.append(site.at(path))
    holder = site.at(path[:-1]) if path else None
    if not isinstance(holder, SeqStmt):
        where = f"the only statement of a {type(holder).__name__}" if holder is not None else "the function body"
        chk.stop(BlocksNotSiblingsError, subject,
                 f"block {ref.name!r}, with the loops right above it, is {where}, not an item of a sequence "
                 "of statements beside the other blocks", realize)
    return path[:-1], path[-1][1], tuple(reversed(chain)), realize


def _plan_blocks(rec: Blockize, mod, chk: Checks) -> _BlocksPlan:
    """TVM's blockize of a list of blocks: resolve them, find their common
    sequence, divide each block at it, and check that they agree on the
    outer side."""
    refs = rec.target
    site = resolve_site(chk, mod, refs)
    subject = "blocks " + ", ".join(repr(getattr(r, "name", r)) for r in refs)
    _check_flag(chk, subject, rec.preserve_unit_iters)
    if len(refs) < 2:
        chk.stop(InvalidArgumentError, subject,
                 "blockize of a list needs two blocks or more; for one block, give the loop whose subtree "
                 "to make a block")
    paths = [resolve_block(chk, site, r) for r in refs]
    if len(set(paths)) != len(paths):
        chk.stop(InvalidArgumentError, subject, "a block is given more than once")
    items = sorted((_sibling_item(chk, site, subject, r, p) for r, p in zip(refs, paths)), key=lambda it: it[1])
    if len({it[0] for it in items}) != 1:
        chk.stop(BlocksNotSiblingsError, subject,
                 "the blocks' loop nests are items of different sequences of statements; the new block "
                 "holds consecutive items of one", *[it[3] for it in items])
    seq_path = items[0][0]
    positions = [it[1] for it in items]
    between = [k for k in range(positions[0], positions[-1] + 1) if k not in positions]
    if between:
        chk.stop(BlocksNotConsecutiveError, subject,
                 f"{len(between)} other statement(s) stand between the blocks' loop nests in their sequence, "
                 "which the new block would move", site.at(seq_path)[between[0]])
    cut = _Cut(subject, "the blocks' sequence", "below it",
               [lp for _, lp in loops_above(site, seq_path)],
               {node.loop_var.name for _, node in ancestors(site.func, seq_path) if isinstance(node, For)})
    # the list form keeps each init in its own block (requirement 7)
    parts = [_divide_block(chk, cut, it[3], it[2], rec.preserve_unit_iters, outer_init=False) for it in items]
    outer = _shared_outer(chk, subject, parts)
    if outer:  # an opaque new block may name the loops around it, as the blocks did
        for part in parts:
            _check_no_outer_loop_names(chk, subject, cut, part.realize)
    for part in parts[1:]:
        if part.outer_predicate != parts[0].outer_predicate:
            chk.stop(OuterBindingMismatchError, subject,
                     f"block {part.realize.block.name_hint!r}'s predicate on the loops above the blocks, "
                     f"{part.outer_predicate.script()}, is not block {parts[0].realize.block.name_hint!r}'s, "
                     f"{parts[0].outer_predicate.script()}; the new block has one predicate", part.realize)
    for part in parts:
        block = part.realize.block
        reduced = [iv.var.name for iv, d in zip(block.iter_vars, part.divisions)
                   if iv.iter_type is IterVarType.CommReduce and d.outer_extent != 1]
        if block.init is not None and reduced:
            chk.stop(OuterReductionInitError, subject,
                     f"block {block.name_hint!r} reduces over the loops above the blocks "
                     f"({', '.join(reduced)}), and its init would run on every iteration of them",
                     part.realize)
    return _BlocksPlan(site, seq_path, positions[0], positions[-1], tuple(parts), tuple(outer),
                       parts[0].outer_predicate)


def _check_no_outer_loop_names(chk: Checks, subject: str, cut: _Cut, realize: BlockRealize) -> None:
    """The block names the loops above the blocks only through its
    bindings, which blockize divides between the new block and it. An
    opaque block (``loop_partition``'s common block, say) that names one
    in its regions, its body or the blocks under it would name, inside
    the new block, a loop outside it: block isolation forbids it where the
    new block has iteration variables (another block of the list gives it
    some)."""
    block = realize.block
    own = {iv.var.name for iv in block.iter_vars}
    parts = [block.body, *block.reads, *block.writes, *block.match_buffers]
    if block.init is not None:
        parts.append(block.init)
    named = sorted(set().union(*[var_names(x) for x in parts]) & (cut.outer_names - own))
    if named:
        chk.stop(SubspaceNotDivisibleError, subject,
                 f"block {block.name_hint!r} names the loop {named[0]!r} above the blocks in its body or regions, "
                 "not through an iteration variable; inside the new block it would name a loop outside it",
                 realize)


def _shared_outer(chk: Checks, subject: str, parts) -> list:
    """The new block's iteration variables: the k-th comes from the first
    block with k variables, and every block's k-th variable must have the
    same outer binding, extent and (unless it takes one value) type."""
    shared = []
    for part in parts:
        block = part.realize.block
        for k, (iv, d) in enumerate(zip(block.iter_vars, part.divisions)):
            value = _cast(d.outer, iv.var.dtype)
            if k == len(shared):
                shared.append((iv, value, d.outer_extent, block))
                continue
            siv, svalue, sext, sblock = shared[k]
            if value != svalue or d.outer_extent != sext or (sext != 1 and iv.iter_type is not siv.iter_type):
                chk.stop(OuterBindingMismatchError, subject,
                         f"block {block.name_hint!r}'s iteration variable {iv.var.name} reads the loops above "
                         f"the blocks as {value.script()} (extent {_show(d.outer_extent)}, "
                         f"{iv.iter_type.value}), block {sblock.name_hint!r}'s {siv.var.name} as "
                         f"{svalue.script()} (extent {_show(sext)}, "
                         f"{siv.iter_type.value}); the new block's iteration variable {k} would be both",
                         part.realize)
    return [(iv, value, ext) for iv, value, ext, _ in shared]


def _build_blocks(plan: _BlocksPlan, preserve: bool) -> Outcome:
    """One block ``outer_<B>_<C>_`` (TVM's name) in place of the blocks'
    loop nests, holding them in order, its regions the union of theirs."""
    site = plan.site
    fresh = NamePool(site.index.names).fresh
    fresh_block = NamePool(site.index.blocks).fresh
    outer_ivs, outer_values = [], []
    for iv, value, ext in plan.outer:
        dt = iv.var.dtype
        outer_ivs.append(IterVar(Range(IntImm(dt, 0), _extent_expr(ext, dt)), Var(fresh(f"{iv.var.name}_o"), dt),
                                 iv.iter_type))
        outer_values.append(value)
    nests, reads, writes = [], [], []
    for part in plan.parts:
        block = part.realize.block
        inner_ivs, inner_values, subst = _inner_parts(block, part.divisions, [o.var for o in outer_ivs],
                                                      preserve, fresh)
        # no variable reduces over the loops above (checked), so the init
        # stays with the inner block: it runs once per outer iteration
        tidy = access_tidier(subst)  # one for the block's parts, as in Blockize.outer_realize
        init = None if block.init is None else tidy(block.init)
        inner_reads = [tidy(r) for r in block.reads]
        inner_writes = [tidy(w) for w in block.writes]
        inner = with_fields(block, iter_vars=inner_ivs, init=init, body=tidy(block.body),
                            reads=inner_reads, writes=inner_writes,
                            match_buffers=[substitute(m, subst) for m in block.match_buffers])
        nest = BlockRealize(inner_values, part.inner_predicate, inner)
        for lp in reversed(part.chain):
            nest = with_fields(lp, body=nest)
        nests.append(nest)
        dom = {iv.var: iv.dom for iv in inner_ivs}
        dom.update({lp.loop_var: Range(lp.min, lp.extent) for lp in part.chain})
        relaxed = _relaxed(inner_reads + inner_writes, dom)
        reads += relaxed[:len(inner_reads)]
        writes += relaxed[len(inner_reads):]
    name = fresh_block("outer_" + "".join(p.realize.block.name_hint + "_" for p in plan.parts))
    outer = Block(outer_ivs, _union_regions(reads), _union_regions(writes), name, SeqStmt(nests))
    new = BlockRealize(outer_values, plan.outer_predicate, outer)
    seq = site.at(plan.seq_path)
    items = list(seq.seq[:plan.first]) + [new] + list(seq.seq[plan.last + 1:])
    mod = commit(site, plan.seq_path, new if len(items) == 1 else SeqStmt(items))
    return Outcome(mod, BlockRef(name, site.func_name))


def _union_regions(regions) -> list:
    """One region per buffer (in order of first appearance) covering all
    of that buffer's regions, as TVM's ``UnionRegions``."""
    by_buffer: dict = {}
    for r in regions:
        by_buffer.setdefault(r.buffer, []).append(r)
    out = []
    for buf, group in by_buffer.items():
        ranges = []
        for dim, shape in enumerate(buf.shape):
            hull = Interval.from_range(group[0].region[dim])
            for r in group[1:]:
                hull = union(hull, Interval.from_range(r.region[dim]))
            ranges.append(cover_range(hull, Range(IntImm(shape.dtype, 0), shape)))
        out.append(BufferRegion(buf, ranges))
    return out


def blockize(target, preserve_unit_iters: bool = True) -> Blockize:
    """The :class:`Blockize` record: ``blockize("i_1")`` of a loop, or
    ``blockize(["B", "C"])`` of a list of blocks."""
    return Blockize(target, preserve_unit_iters)


__all__ = ["Blockize", "blockize"]
