"""Loop transformations: split, fuse, reorder, merge, add_unit_loop and
reorder_block_iter_var.

Each is a frozen record whose fields are the arguments of TVM's Schedule
method of the same name; the lower-case functions build the records.
"""

from __future__ import annotations

import math
import operator

import attrs

from ..analysis.traversal import Path, get_at, nodes_along
from ..errors import NodeError
from ..nodes.base import with_fields
from ..nodes import (
    LT, Add, Block, BlockRealize, DataType, Evaluate, FloorDiv, FloorMod, For, ForKind, IfThenElse, IntImm,
    IterVarType, LetStmt,
    Mul, PrimExpr, SeqStmt, Stmt, Var, binary,
)
from ..analysis.arith.const_bound import expr_bounds
from ..analysis.arith.iter_map import loop_ranges, simplify_index
from .base import Checks, Outcome, Rewrite, commit, commit_merge, commit_nest, register
from .checks import (
    all_block_realizes, check_plain_loop, check_starts_at_zero, describe, has_affine_binding,
    is_int_expr, loops_above, names_defined_at, resolve_block, resolve_block_or_loop,
    resolve_loop, resolve_site, scope_path,
)
from .errors import (
    BlockIterTypeError, DependenceViolationError, DependentLoopError, InvalidArgumentError, InvalidFactorError,
    InvalidReorderIndexError, LoopMultiAppearanceError, LoopsNotAChainError, NestDepthMismatchError,
    NestExtentMismatchError, NonLoopAncestorError, NonPositiveFactorError, NotAffineBindingError, NotEnoughLoopsError,
    NotOnlyChildError, NotSameScopeError, NotSingleInferFactorError, OuterNotInnerParentError,
    RootBlockError, WrongFactorProductError,
)
from .buffer_swap import rebuilt_above
from .exprs import cast as _cast, floordiv, floormod, mul, uses_any, var_names
from .merge_order import OPAQUE, buffer_words, conflict, loose_dependence, nest_accesses, pointwise, touched
from .names import UNIT_LOOP_BASE, fresh_name, fresh_names, fuse_base, merge_base, split_bases
from .rebind import append_predicate, rebind, rebind_chain
from .refs import BlockRef, LoopRef, as_block_or_loop_ref, as_block_ref, as_loop_ref, as_loop_refs
from .serialize import py_value

_BODY = ("body", None)


def _as_tuple(value):
    if isinstance(value, (list, tuple, range)) or type(value).__name__ == "PVector":
        return tuple(value)
    return value


def _as_factors(value):
    value = _as_tuple(value)
    if isinstance(value, tuple):
        if all(f is None or type(f) is int for f in value):
            return value  # ints and None are kept as they are
        return tuple(operator.index(f) if not isinstance(f, (bool, PrimExpr)) and hasattr(f, "__index__")
                     else f for f in value)  # numpy integers become ints
    return value


def _check_flag(chk: Checks, name: str, value) -> None:
    if not isinstance(value, bool):
        chk.fail(InvalidArgumentError, f"argument {name}", f"expected True or False, got {value!r}")


def _int_dtype(bits: int) -> DataType:
    return DataType(f"int{bits}")


def _same_value(a: PrimExpr, b: PrimExpr) -> bool:
    """Whether two integer expressions provably have the same value."""
    if a.dtype != b.dtype:
        b = _cast(b, a.dtype)
    diff = simplify_index(a - b)
    return isinstance(diff, IntImm) and diff.value == 0


# ---------------------------------------------------------------------------- split

@register
@attrs.frozen
class Split(Rewrite):
    """Split a loop into a nest of loops, outermost first.

    ``factors`` gives each new loop's extent; one of them may be None and
    is then inferred as ``ceil(extent / product of the others)``. When the
    factors' product is larger than the extent, the blocks directly under
    the loop get the predicate ``new_index < extent`` (unless
    ``disable_predication``). The blocks' bindings are rewritten in the new
    loop variables (``i`` becomes ``i_0 * 4 + i_1``); with
    ``preserve_unit_iters=False``, loop variables of unit loops are dropped
    from them. The new loops are named ``i_0, i_1, ...``.

    ``disable_predication=True`` is unsafe when the factors' product is
    larger than the extent (the factors do not divide it): the predicate is
    left out, as TVM leaves it out, so the new loops run past the extent,
    the blocks' iteration variables are bound outside their domains, and
    their bodies read and write elements the original loop never touched,
    possibly past the end of a buffer. TVM compiles such a module and
    accesses memory out of bounds; here ``verify`` reports "binding outside
    domain", ``tirfun.build`` refuses the module with that VerifyError, and
    the interpreter raises InterpError at the first iteration outside the
    domain. Use it only when the product equals the extent, or when every
    block under the loop already guards itself.

    Requirements, each with the error raised when it fails:

    1. the loop exists (UnknownLoopError, RefKindError, UnknownFunctionError);
    2. the factors are None, positive ints or integer expressions over names
       defined at the loop (InvalidFactorError, NonPositiveFactorError), and
       the flags are bools (InvalidArgumentError);
    3. at most one factor is None (NotSingleInferFactorError);
    4. without a None, the factors' product is provably at least the extent
       (WrongFactorProductError);
    5. the loop has no annotations and no thread binding
       (LoopHasAnnotationOrThreadBindingError);
    6. the loop starts at 0 (LoopNotStartWithZeroError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
            for i in range(10):
                with T.block("B"):
                    vi = T.axis.spatial(10, i)
                    B[vi] = A[vi] * T.float32(2)

        # rewrite
        split("i", [None, 4])

        # after
        @T.prim_func
        def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
            for i_0, i_1 in T.grid(3, 4):
                with T.block("B"):
                    vi = T.axis.spatial(10, i_0 * 4 + i_1)
                    T.where(i_0 * 4 + i_1 < 10)
                    B[vi] = A[vi] * T.float32(2)
    """

    primitive = "split"

    loop: object = attrs.field(converter=as_loop_ref)
    factors: object = attrs.field(converter=_as_factors)
    preserve_unit_iters: object = True
    disable_predication: object = False

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.loop])
        path = resolve_loop(chk, site, self.loop)
        loop: For = site.at(path)
        subject = describe(self.loop)
        _check_flag(chk, "preserve_unit_iters", self.preserve_unit_iters)
        _check_flag(chk, "disable_predication", self.disable_predication)
        if not isinstance(self.factors, tuple) or not self.factors:
            chk.stop(InvalidFactorError, subject,
                     f"factors must be a non-empty list of ints, expressions or None, got {self.factors!r}")
        defined = None
        factors: list = []
        infer = []
        for k, f in enumerate(self.factors):
            if f is None:
                infer.append(k)
                factors.append(None)
                continue
            if isinstance(f, bool) or not (isinstance(f, int) or is_int_expr(f)):
                chk.fail(InvalidFactorError, subject,
                         f"factor {k} is {f!r}; a factor is None, a positive int or an integer expression")
                continue
            value = f.value if isinstance(f, IntImm) else f if isinstance(f, int) else None
            if value is not None:
                if value <= 0:
                    chk.fail(NonPositiveFactorError, subject,
                             f"factor {k} is {value}; constant factors must be positive")
                    continue
                if value > loop.loop_var.dtype.max_value():
                    chk.fail(InvalidFactorError, subject,
                             f"factor {k} is {value}, which does not fit the loop's {loop.loop_var.dtype}")
                    continue
                factors.append(value)
                continue
            if defined is None:
                defined = names_defined_at(site, path)
            stray = uses_any(f, _NotIn(defined))
            if stray is not None:
                chk.fail(InvalidFactorError, subject,
                         f"factor {k} uses {stray}, which is not defined at the loop")
                continue
            factors.append(f)
        if len(infer) > 1:
            chk.fail(NotSingleInferFactorError, subject,
                     f"{len(infer)} factors are None; only one factor can be inferred")
        chk.checkpoint()
        # one integer type for the new loops: the widest of the loop and the factors
        bits = max([loop.loop_var.dtype.bits] + [f.dtype.bits for f in factors if isinstance(f, PrimExpr)])
        dtype = _int_dtype(bits) if bits != loop.loop_var.dtype.bits else loop.loop_var.dtype
        exprs = [None if f is None else _cast(IntImm(dtype, f) if isinstance(f, int) else f, dtype)
                 for f in factors]
        extent = _cast(loop.extent, dtype)
        if not _const_factors(chk, subject, loop, factors, exprs, infer, extent, dtype):
            known = IntImm(dtype, 1)
            for f in exprs:
                if f is not None:
                    known = mul(known, f)
            known = simplify_index(known)
            if infer:
                exprs[infer[0]] = simplify_index(floordiv(extent + known - 1, known))
            else:
                slack = simplify_index(known - extent)
                if not (isinstance(slack, IntImm) and slack.value >= 0):
                    chk.fail(WrongFactorProductError, subject,
                             f"the factors' product {known.script()} "
                             f"is not provably at least the loop's extent", loop)
        check_plain_loop(chk, loop)
        check_starts_at_zero(chk, loop)
        return site, path, loop, exprs, dtype, extent

    def build(self, plan) -> Outcome:
        site, path, loop, factors, dtype, extent = plan
        names = fresh_names(split_bases(loop.loop_var.name, len(factors)), site.index.names)
        new_vars = [Var(name, dtype) for name in names]
        # the operands share one dtype and are never two literals, so the
        # nodes are what the operators would build
        value = new_vars[0]
        for f, v in zip(factors[1:], new_vars[1:]):
            value = Add(Mul(value, f), v)
        constant = all(type(f) is IntImm for f in factors)

        def loop_ranges_here() -> dict:
            # the ranges of the loops around the body: those above the
            # split loop and the new loops of constant extent
            out = loop_ranges(l for _, l in loops_above(site, path))
            for v, f in zip(new_vars, factors):
                if type(f) is IntImm:
                    out[v.name] = (0, f.value - 1)
            return out

        # with constant factors the ranges are needed only where a binding
        # below simplifies under them: rebind works them out on demand
        ranges = loop_ranges_here if constant else loop_ranges_here()
        mapped = _cast(value, loop.loop_var.dtype)
        # with constant factors the binding is a sum of weighted loop
        # variables, whose simplified form no range changes
        simplified = {loop.loop_var: _weighted_sum(new_vars, factors, mapped)} if constant else None
        body = rebind(loop.body, {loop.loop_var: mapped}, ranges,
                      drop_unit_iters=not self.preserve_unit_iters, simplified=simplified)
        guarded = False
        if not self.disable_predication:
            if constant and all(f.value >= 1 for f in factors):
                # each variable below its factor: the sum runs over [0, product)
                bounds = (0, math.prod(f.value for f in factors) - 1)
            else:
                bounds = expr_bounds(value, ranges() if callable(ranges) else ranges)
            exact = (bounds is not None and isinstance(extent, IntImm) and bounds[1] < extent.value)
            if not exact:
                product = IntImm(dtype, 1)
                for f in factors:
                    product = mul(product, f)
                exact = _same_value(simplify_index(product), extent)
            if not exact:
                # the guard may wrap statements below in an ``if``: the
                # body no longer has the old one's shape
                guarded = True
                body = append_predicate(body, binary(LT, value, extent))
        new: Stmt = body
        zero = IntImm(dtype, 0)
        for v, f in reversed(list(zip(new_vars, factors))):
            new = For(v, zero, f, ForKind.SERIAL, new)
        if guarded:
            mod = commit(site, path, new)
        else:
            mod = commit_nest(site, path, [loop], new, len(new_vars), [mapped])
        return Outcome(mod, tuple(LoopRef(n, site.func_name) for n in names))

    def python_args(self):
        return [py_value(self.loop), f"factors={py_value(list(self.factors))}",
                f"preserve_unit_iters={py_value(self.preserve_unit_iters)}",
                f"disable_predication={py_value(self.disable_predication)}"]



def _const_factors(chk: Checks, subject: str, loop: For, factors: list, exprs: list, infer: list,
                   extent: PrimExpr, dtype: DataType) -> bool:
    """Split's factor arithmetic when the extent and the given factors are
    constants whose product fits the dtype: what folding and simplifying
    the expressions gives, worked out on ints (``exprs`` gets the inferred
    factor; a product short of the extent fails). False: not such a case,
    the expressions must be worked out."""
    if type(extent) is not IntImm or not all(f is None or type(f) is int for f in factors):
        return False
    low, high = dtype.int_range()
    product = 1
    for f in factors:
        if f is not None:
            product *= f
    if product > high:
        return False
    if infer:
        exprs[infer[0]] = IntImm(dtype, -(-extent.value // product))
        return True
    slack = product - extent.value
    if not (0 <= slack <= high):  # a slack past the dtype is not a constant of it
        chk.fail(WrongFactorProductError, subject,
                 f"the factors' product {IntImm(dtype, product).script()} "
                 f"is not provably at least the loop's extent", loop)
    return True


def _weighted_sum(new_vars: list, factors: list, value: PrimExpr) -> PrimExpr:
    """What ``simplify_index`` makes of ``value``, the binding
    ``(v0 * f1 + v1) * f2 + v2 ...`` of a split with constant factors: the
    variables weighted by the product of the factors inside them, heaviest
    first (equal weights keep their order), a weight of 1 left out."""
    if (len(new_vars) == 2 and type(value) is Add and factors[0].value >= 1 and factors[1].value > 1
            and value.dtype == new_vars[0].dtype):
        return value  # ``v0 * f1 + v1`` is that sum already, as the split built it
    weights = []
    weight = 1
    for v, f in zip(reversed(new_vars), reversed(factors)):
        weights.append((v, weight))
        weight *= f.value
    if len(new_vars) == 1 or value.dtype != new_vars[0].dtype or any(f.value < 1 for f in factors):
        return simplify_index(value)  # a zero factor (an empty loop) zeroes weights: the simplifier drops them
    terms = sorted(reversed(weights), key=lambda item: -item[1])
    try:
        out = None
        for v, k in terms:
            term = v if k == 1 else Mul(v, IntImm(v.dtype, k))
            out = term if out is None else Add(out, term)
    except NodeError:  # a weight past the dtype: the simplifier keeps the input
        return simplify_index(value)
    return out


class _NotIn:
    """``name in _NotIn(s)`` is ``name not in s`` (for :func:`uses_any`)."""

    def __init__(self, names):
        self.names = names

    def __contains__(self, name) -> bool:
        return name not in self.names


def split(loop, factors, preserve_unit_iters: bool = True, disable_predication: bool = False) -> Split:
    """The :class:`Split` record: ``split("i", [None, 4])``."""
    return Split(loop, factors, preserve_unit_iters, disable_predication)


# ----------------------------------------------------------------------------- fuse

def _resolve_loops(chk: Checks, mod, refs, *, least: int, primitive_needs: str):
    if not isinstance(refs, tuple) or len(refs) < least:
        count = len(refs) if isinstance(refs, tuple) else 0
        chk.stop(NotEnoughLoopsError, "arguments", f"{primitive_needs}, got {count}")
    site = resolve_site(chk, mod, refs)
    paths = [resolve_loop(chk, site, r) for r in refs]
    if len(set(paths)) < len(paths):  # a loop given twice: the first repeat is reported
        seen = set()
        for ref, p in zip(refs, paths):
            if p in seen:
                chk.stop(LoopMultiAppearanceError, describe(ref), "the loop is given more than once",
                         site.at(p))
            seen.add(p)
    return site, paths


def _has_sref_between(site, outer: Path, inner: Path) -> bool:
    """Whether a loop or block lies strictly between two nested paths."""
    node = site.at(outer)
    for k in range(len(outer), len(inner) - 1):
        name, index = inner[k]
        value = getattr(node, name)
        node = value if index is None else value[index]
        if isinstance(node, (For, Block)):
            return True
    return False


@register
@attrs.frozen
class Fuse(Rewrite):
    """Fuse a perfect nest of loops into one loop ``i_j_fused`` whose extent
    is the product of theirs; the blocks' bindings are rewritten with
    ``//`` and ``%`` of the fused variable.

    Requirements, each with the error raised when it fails:

    1. at least one loop is given, each exists, none twice
       (NotEnoughLoopsError, UnknownLoopError, RefKindError,
       LoopMultiAppearanceError), in one function (ForeignRefError), and
       ``preserve_unit_iters`` is a bool (InvalidArgumentError);
    2. no loop has annotations or a thread binding
       (LoopHasAnnotationOrThreadBindingError);
    3. each loop after the first is directly inside the one before
       (OuterNotInnerParentError) and is its only child (NotOnlyChildError);
    4. every loop starts at 0 (LoopNotStartWithZeroError);
    5. no loop's extent depends on another of the loops (DependentLoopError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        fuse("i", "j")

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i_j_fused in range(32):
                with T.block("B"):
                    vi = T.axis.spatial(4, i_j_fused // 8)
                    vj = T.axis.spatial(8, i_j_fused % 8)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
    """

    primitive = "fuse"

    loops: object = attrs.field(converter=as_loop_refs)
    preserve_unit_iters: object = True

    def plan(self, mod, chk: Checks):
        site, paths = _resolve_loops(chk, mod, self.loops, least=1,
                                     primitive_needs="fuse needs at least 1 loop")
        _check_flag(chk, "preserve_unit_iters", self.preserve_unit_iters)
        loops = [site.at(p) for p in paths]
        outer_names: set[str] = set()
        for k, (p, loop) in enumerate(zip(paths, loops)):
            check_plain_loop(chk, loop)
            if k:
                outer_path, outer = paths[k - 1], loops[k - 1]
                below = p[:len(outer_path)] == outer_path and len(p) > len(outer_path)
                if not below or _has_sref_between(site, outer_path, p):
                    chk.fail(OuterNotInnerParentError, describe(self.loops[k]),
                             f"loop {outer.loop_var.name!r} is not the parent of loop "
                             f"{loop.loop_var.name!r}, so they cannot be fused", outer, loop)
                elif outer.body is not loop:
                    chk.fail(NotOnlyChildError, describe(self.loops[k]),
                             f"loop {loop.loop_var.name!r} is not the only child of loop "
                             f"{outer.loop_var.name!r}, so they cannot be fused", outer)
            check_starts_at_zero(chk, loop)
            # a literal extent, or the outermost loop's, depends on none of them
            used = None
            if outer_names and type(loop.extent) is not IntImm:
                used = uses_any(loop.extent, outer_names)
            if used is not None:
                chk.fail(DependentLoopError, describe(self.loops[k]),
                         f"the extent of loop {loop.loop_var.name!r} depends on loop {used!r}, "
                         "which is fused with it", loop)
            outer_names.add(loop.loop_var.name)
        return site, paths, loops

    def build(self, plan) -> Outcome:
        site, paths, loops = plan
        name = fresh_name(fuse_base(l.loop_var.name for l in loops), site.index.names)
        dtype = _int_dtype(max(l.loop_var.dtype.bits for l in loops))
        fused = Var(name, dtype)
        extents = [_cast(l.extent, dtype) for l in loops]
        mapping, total = (_fused_literals(fused, loops, extents, dtype)
                          or _fused_bindings(fused, loops, extents, dtype))
        ranges = loop_ranges(l for _, l in loops_above(site, paths[0]))
        if isinstance(total, IntImm):
            ranges[name] = (0, total.value - 1)
        body = rebind(loops[-1].body, mapping, ranges, drop_unit_iters=not self.preserve_unit_iters)
        new = For(fused, _zero_of(loops[0], dtype), total, ForKind.SERIAL, body)
        mod = commit_nest(site, paths[0], list(loops), new, 1, mapping.values())
        return Outcome(mod, LoopRef(name, site.func_name))

    def python_args(self):
        return [py_value(r) for r in self.loops] + [f"preserve_unit_iters={py_value(self.preserve_unit_iters)}"]


def _zero_of(loop: For, dtype: DataType) -> IntImm:
    """The literal 0 of ``dtype``: the loop's own start where it is that
    literal (a loop checked to start at zero nearly always is)."""
    start = loop.min
    if type(start) is IntImm and start.value == 0 and start.dtype == dtype:
        return start
    return IntImm(dtype, 0)


def _fused_bindings(fused: Var, loops: list, extents: list, dtype: DataType) -> tuple[dict, PrimExpr]:
    """Fuse's bindings (loop variable -> its value in the fused variable)
    and the fused loop's extent, for ``loops`` (outermost first) whose
    extents, cast to ``dtype``, are ``extents``."""
    mapping = {}
    lower: PrimExpr = IntImm(dtype, 1)
    for loop, ext in reversed(list(zip(loops[1:], extents[1:]))):
        if _is_one(ext):
            value = IntImm(dtype, 0)
        else:
            value = _floordiv(_floormod(fused, _mul(lower, ext)), lower)
        mapping[loop.loop_var] = _cast(value, loop.loop_var.dtype)
        lower = _mul(lower, ext)
    first = IntImm(dtype, 0) if _is_one(extents[0]) else _floordiv(fused, lower)
    mapping[loops[0].loop_var] = _cast(first, loops[0].loop_var.dtype)
    total: PrimExpr = IntImm(dtype, 1)
    for ext in extents:
        total = _mul(total, ext)
    return mapping, simplify_index(total)


def _fused_literals(fused: Var, loops: list, extents: list, dtype: DataType):
    """What :func:`_fused_bindings` builds, worked out on ints, where
    every extent is a positive literal of ``dtype`` and their product fits
    it (the common case); None for any other case."""
    if not all(type(e) is IntImm and e.dtype == dtype for e in extents):
        return None
    low, high = dtype.int_range()
    product = 1
    for e in extents:
        if e.value < 1:
            return None
        product *= e.value
    if product > high:
        return None
    mapping = {}
    # ``lower``: the product of the extents inside the loop, as an int and
    # as the literal the general path would have built (None for 1)
    lower, lower_imm = 1, None
    for loop, ext in reversed(list(zip(loops[1:], extents[1:]))):
        n = ext.value
        if n == 1:
            value = IntImm(dtype, 0)
            upper = lower_imm
        else:
            upper = ext if lower == 1 else IntImm(dtype, lower * n)
            value = FloorMod(fused, upper)
            if lower != 1:
                value = FloorDiv(value, lower_imm)
        mapping[loop.loop_var] = _cast(value, loop.loop_var.dtype)
        lower, lower_imm = lower * n, upper
    n = extents[0].value
    if n == 1:
        first = IntImm(dtype, 0)
        total = extents[0] if lower == 1 else lower_imm
    else:
        first = fused if lower == 1 else FloorDiv(fused, lower_imm)
        total = extents[0] if lower == 1 else IntImm(dtype, lower * n)
    mapping[loops[0].loop_var] = _cast(first, loops[0].loop_var.dtype)
    return mapping, total


# fuse's arithmetic on constants of one dtype: what ``mul``, ``floormod`` and
# ``floordiv`` build (a unit operand folded, literals folded where the result
# fits), without their general type matching; anything else goes to them

def _int_literal(e: PrimExpr) -> bool:
    return type(e) is IntImm and not e.dtype.is_bool


def _mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if not (_int_literal(a) and _int_literal(b) and a.dtype == b.dtype):
        return mul(a, b)
    if a.value == 1:
        return b
    if b.value == 1:
        return a
    low, high = a.dtype.int_range()
    value = a.value * b.value
    return IntImm(a.dtype, value) if low <= value <= high else Mul(a, b)


def _floormod(a: Var, b: PrimExpr) -> PrimExpr:
    if not (type(a) is Var and _int_literal(b) and b.value != 1 and a.dtype == b.dtype):
        return floormod(a, b)
    return FloorMod(a, b)  # a variable and a literal: nothing to fold


def _floordiv(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if not (_int_literal(b) and a.dtype == b.dtype and type(a) in (Var, FloorMod)):
        return floordiv(a, b)
    return a if b.value == 1 else FloorDiv(a, b)


def _is_one(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def fuse(*loops, preserve_unit_iters: bool = True) -> Fuse:
    """The :class:`Fuse` record: ``fuse("i", "j")``."""
    return Fuse(loops, preserve_unit_iters)


# -------------------------------------------------------------------------- reorder

@register
@attrs.frozen
class Reorder(Rewrite):
    """Reorder loops of one chain: the given loops take the chain's
    positions of those loops, in the given order; other loops of the chain
    stay where they are.

    Requirements, each with the error raised when it fails:

    1. the loops exist and none is given twice (UnknownLoopError,
       RefKindError, LoopMultiAppearanceError), in one function
       (ForeignRefError);
    2. the loops are on one chain in one block scope: ordered from outer to
       inner, each is an ancestor of the next, and every loop from the
       outermost to the innermost has the next one as its only child
       (LoopsNotAChainError);
    3. every block under the loops has only data-parallel and reduction
       iteration variables (BlockIterTypeError) and an affine binding
       (NotAffineBindingError), as TVM's ``IsAffineBinding`` defines it:
       windows may overlap (``vi = 2 * a + b`` with ``b`` of extent 3) and
       unit loops count as constants;
    4. no loop's min or extent depends on a loop that is inside it in the
       new order (DependentLoopError);
    5. a buffer that a statement outside any block under the loops uses,
       and that is written there, is used so that two iterations meet at
       an element only in one iteration (each loop indexes a dimension by
       itself, or the same indices map the iterations one to one), or only
       by in-place updates that commute (``acc[0] = acc[0] + x``), as a
       reduction block's do (DependenceViolationError). Correct where TVM
       is not: TVM reorders such loops whatever their statements read.

    Fewer than two loops change nothing.

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        reorder("j", "i")

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for j, i in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
    """

    primitive = "reorder"

    loops: object = attrs.field(converter=as_loop_refs)

    def plan(self, mod, chk: Checks):
        site, paths = _resolve_loops(chk, mod, self.loops, least=0, primitive_needs="")
        if len(paths) < 2:
            return site, None
        scopes = {scope_path(site, p) for p in paths}
        if len(scopes) > 1:
            chk.stop(LoopsNotAChainError, "loops " + ", ".join(repr(r.name) for r in self.loops),
                     "the loops are not in a chain: they are not under the same block scope")
        by_depth = sorted(paths, key=len)
        for outer, inner in zip(by_depth, by_depth[1:]):
            if inner[:len(outer)] != outer:
                common = _common_prefix(outer, inner)
                chk.stop(LoopsNotAChainError, f"loops {_name(site, outer)!r}, {_name(site, inner)!r}",
                         "the loops are not in a chain: they are on different branches below this "
                         "statement", site.at(common))
        top, bottom = by_depth[0], by_depth[-1]
        chain: list[tuple[Path, For]] = [(top, site.at(top))]
        for k in range(len(top), len(bottom)):
            outer_path, outer = chain[-1]
            step = bottom[k]
            child = get_at(outer, (step,)) if step == _BODY else None
            if not isinstance(child, For):
                chk.stop(LoopsNotAChainError, f"loop {outer.loop_var.name!r}",
                         "the loops are not in a chain: this loop's body is not a single loop", outer)
            chain.append((outer_path + (step,), child))
        bottom_loop = chain[-1][1]
        with_init = []
        for rpath, realize in all_block_realizes(bottom_loop.body, bottom + (_BODY,)):
            block = realize.block
            if block.init is not None:
                with_init.append(realize)
            bpath = rpath + (("block", None),)
            bad = [iv for iv in block.iter_vars
                   if iv.iter_type not in (IterVarType.DataPar, IterVarType.CommReduce)]
            if bad:
                chk.fail(BlockIterTypeError, f"block {block.name_hint!r}",
                         f"the block under the loops to reorder has the {bad[0].iter_type.value} "
                         f"iteration variable {bad[0].var.name}; only data-parallel and reduction "
                         "ones can be reordered", realize)
            elif not has_affine_binding(site, bpath, realize, top=top, surjective=True):
                chk.fail(NotAffineBindingError, f"block {block.name_hint!r}",
                         "the block under the loops to reorder does not have an affine binding",
                         realize)
        buf = loose_dependence(bottom_loop.body, [loop for _, loop in chain], updates_commute=True)
        if buf is not None:
            chk.fail(DependenceViolationError, "loops " + ", ".join(repr(r.name) for r in self.loops),
                     f"a statement outside any block under the loops uses {buffer_words(buf)}, which is "
                     "written there, and two iterations of the loops may meet at one element of it: "
                     "reordered, they would use it in another order", chain[0][1])
        chk.checkpoint()
        given = {p: k for k, p in enumerate(paths)}
        order = [site.at(p) for p in paths]
        it = iter(order)
        new_chain = [next(it) if p in given else loop for p, loop in chain]
        inner: set[str] = set()
        for loop in reversed(new_chain):
            used = uses_any(loop.min, inner) or uses_any(loop.extent, inner)
            if used is not None:
                chk.fail(DependentLoopError, f"loop {loop.loop_var.name!r}",
                         f"the min or extent of loop {loop.loop_var.name!r} depends on loop {used!r}, "
                         "which would be inside it in the new order", loop)
            inner.add(loop.loop_var.name)
        for realize in with_init:
            mixed = _init_not_first(realize, [loop for _, loop in chain], new_chain)
            if mixed is not None:
                chk.fail(DependenceViolationError, f"block {realize.block.name_hint!r}",
                         f"loops {mixed[0]!r} and {mixed[1]!r} are parts of one sum that gives both a "
                         "data-parallel and a reduction variable of the block; reordered, an element's "
                         "reduction would not start at its init step, and the init would reset what the "
                         "steps before it added (TVM reorders it so)", realize)
        return site, (top, chain, new_chain)

    def build(self, plan) -> Outcome:
        site, detail = plan
        if detail is None:
            return Outcome(site.mod)
        top, chain, new_chain = detail
        if all(a is b for (_, a), b in zip(chain, new_chain)):
            return Outcome(site.mod)
        body = chain[-1][1].body
        for loop in reversed(new_chain):
            body = with_fields(loop, body=body)
        index = site.index.with_loop_paths(
            {loop.loop_var.name: top + (_BODY,) * k for k, loop in enumerate(new_chain)})
        return Outcome(commit(site, top, body, index=index))

    def python_args(self):
        return [py_value(r) for r in self.loops]


def _init_not_first(realize, chain: list, new_chain: list) -> tuple[str, str] | None:
    """Two loops of ``chain`` that the reorder to ``new_chain`` swaps, both
    read by one binding of the block together, where the bindings that read
    them give a data-parallel and a reduction variable (a fuse of the two
    split again): the steps of one element's reduction then come in another
    order, its init step (the reduction variables at their minimum) not
    first; or None. Bindings are read simplified over the loops' ranges, so
    that a part a division removes (``(f0 * 4 + f1) // 4``) is not counted."""
    names = [loop.loop_var.name for loop in chain]
    before = {name: k for k, name in enumerate(names)}
    after = {loop.loop_var.name: k for k, loop in enumerate(new_chain)}

    def swapped(used):
        """The pairs of loops of ``used`` that the reorder swaps, outer first."""
        ordered = sorted(used, key=before.get)
        return [(a, b) for a in ordered for b in ordered if before[a] < before[b] and after[a] > after[b]]

    # nearly always no binding reads two loops the reorder swaps: nothing to simplify
    if not any(type(v) is not Var and type(v) is not IntImm
               and swapped({n for n in var_names(v) if n in before}) for v in realize.iter_values):
        return None
    ranges = loop_ranges(chain)
    kinds: dict[str, set] = {}
    together = []
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        used = {n for n in var_names(simplify_index(value, ranges)) if n in before}
        for n in used:
            kinds.setdefault(n, set()).add(iv.iter_type)
        together.append(used)
    for used in together:
        for a, b in swapped(used):
            if len(kinds[a] | kinds[b]) > 1 and IterVarType.CommReduce in kinds[a] | kinds[b]:
                return a, b
    return None


def _common_prefix(a: Path, b: Path) -> Path:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return a[:k]


def _name(site, path) -> str:
    return site.at(path).loop_var.name


def reorder(*ordered_loops) -> Reorder:
    """The :class:`Reorder` record: ``reorder("j", "i")``."""
    return Reorder(ordered_loops)


# ---------------------------------------------------------------------------- merge

@register
@attrs.frozen
class Merge(Rewrite):
    """Merge loop nests of equal shape that share an ancestor into one nest
    (loops named ``i_m``, ...) whose innermost body runs the nests' bodies in
    the order given; the merged nest takes the place of the last nest.

    Correct where TVM is not: TVM's merge checks no dependence, so nests
    that communicate through a buffer, merged, may compute something else.
    Here the merge must keep what every buffer sees (requirements 5 and 6,
    :mod:`~tirfun.rewrites.merge_order`).

    Requirements, each with the error raised when it fails:

    1. at least two loops are given, each exists, none twice
       (NotEnoughLoopsError, UnknownLoopError, RefKindError,
       LoopMultiAppearanceError), in one function (ForeignRefError);
    2. the loops are in the same block scope (NotSameScopeError);
    3. no loop from a given loop up to the nests' lowest common ancestor has
       annotations or a thread binding (LoopHasAnnotationOrThreadBindingError),
       each starts at 0 (LoopNotStartWithZeroError), and each inner loop is the
       only child of the loop above it (NotOnlyChildError);
    4. the nests have the same depth (NestDepthMismatchError) and the same
       extents level by level (NestExtentMismatchError);
    5. nothing but sequences lies between the common ancestor and each nest
       (no ``if`` or let the nest would leave: NonLoopAncestorError);
    6. nests that share a buffer one of them writes are given in their
       program order, and each merged loop of more than one iteration indexes
       one dimension of the buffer by itself in both, so that different
       iterations of the merged nest touch different elements; a nest moved
       to the place of the last one given shares no such buffer with a
       statement it moves past (DependenceViolationError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
                 C: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] * T.float32(2)
            for j in range(8):
                with T.block("C"):
                    vj = T.axis.spatial(8, j)
                    C[vj] = A[vj] + T.float32(1)

        # rewrite
        merge("i", "j")

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
                 C: T.Buffer((8,), "float32")):
            for i_m in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i_m)
                    B[vi] = A[vi] * T.float32(2)
                with T.block("C"):
                    vj = T.axis.spatial(8, i_m)
                    C[vj] = A[vj] + T.float32(1)
    """

    primitive = "merge"

    loops: object = attrs.field(converter=as_loop_refs)

    def plan(self, mod, chk: Checks):
        site, paths = _resolve_loops(chk, mod, self.loops, least=2,
                                     primitive_needs="merge needs at least 2 loops")
        # the nodes along each path, read once: the scopes, the common
        # ancestor and the nests are all found among them
        along = [nodes_along(site.func, p) for p in paths]
        parent = paths[0][:-1]
        if all([p[:-1] == parent for p in paths]):
            # items of one statement (the common case): one scope, and
            # that statement is where the paths part
            lca = parent
        else:
            scopes = {_scope_of(p, nodes) for p, nodes in zip(paths, along)}
            if len(scopes) > 1:
                chk.stop(NotSameScopeError, "loops " + ", ".join(repr(r.name) for r in self.loops),
                         "the loops to merge are not in the same block scope")
            lca = paths[0]
            for p in paths[1:]:
                lca = _common_prefix(lca, p)
        while lca and not isinstance(along[0][len(lca)], (For, Block)):
            lca = lca[:-1]
        nests: list[list[tuple[Path, For]]] = []
        for ref, p, nodes in zip(self.loops, paths, along):
            nest = [(p[:k], nodes[k]) for k in range(len(lca) + 1, len(p) + 1) if isinstance(nodes[k], For)]
            for _, loop in nest:
                if loop.annotations or loop.thread_binding is not None:
                    check_plain_loop(chk, loop)
                check_starts_at_zero(chk, loop)
            for (_, outer), (_, inner) in zip(nest, nest[1:]):
                if outer.body is not inner:
                    chk.fail(NotOnlyChildError, describe(ref),
                             f"loop {inner.loop_var.name!r} is not the only child of loop "
                             f"{outer.loop_var.name!r}", outer)
            nests.append(nest)
        chk.checkpoint()
        for ref, nest in zip(self.loops[1:], nests[1:]):
            if len(nest) != len(nests[0]):
                chk.stop(NestDepthMismatchError, describe(ref),
                         f"its nest has {len(nest)} loops below the common ancestor, the nest of "
                         f"{describe(self.loops[0])} has {len(nests[0])}")
            for (_, a), (_, b) in zip(nests[0], nest):
                if not _same_extent(a.extent, b.extent):
                    chk.fail(NestExtentMismatchError, describe(ref),
                             f"loop {b.loop_var.name!r} has extent {b.extent.script()}, loop "
                             f"{a.loop_var.name!r} at the same level has {a.extent.script()}", a, b)
        chk.checkpoint()
        self._check_order(chk, site, lca, along, nests)
        return site, lca, nests

    def _check_order(self, chk: Checks, site, lca, along, nests) -> None:
        """What the merge reorders keeps the meaning (see
        :mod:`~tirfun.rewrites.merge_order`; TVM checks none of it)."""
        # only sequences between the common ancestor and each nest: the
        # merged nest takes none of what lies between along
        for ref, nodes, nest in zip(self.loops, along, nests):
            for node in nodes[len(lca) + 1:len(nest[0][0])]:
                if type(node) is not SeqStmt:
                    chk.stop(NonLoopAncestorError, describe(ref),
                             f"the nest of loop {nest[0][1].loop_var.name!r} is under "
                             f"{type(node).__name__} {_head(node)} below the loops' common ancestor; merged, "
                             "it would leave it", node)
        # the merged levels are named by the first nest's loops; those of
        # one iteration keep no two iterations apart
        levels, spanning = [], []
        for _, loop in nests[0]:
            levels.append(loop.loop_var)
            if not (isinstance(loop.extent, IntImm) and loop.extent.value == 1):
                spanning.append(loop.loop_var)
        accesses, tops = [], []
        for nest in nests:
            accesses.append(nest_accesses(nest[-1][1].body, [loop.loop_var for _, loop in nest], levels))
            tops.append(nest[0][0])
        for i in range(len(nests)):
            for j in range(i + 1, len(nests)):
                # buffers by name, which is a buffer's identity in a function;
                # a pointer named outside the blocks may reach any of them
                ours, others = accesses[i], accesses[j]
                shared = ours.uses.keys() & others.uses.keys()
                if OPAQUE in ours.uses and others.uses or OPAQUE in others.uses and ours.uses:
                    shared = {OPAQUE}
                for name in sorted(shared):
                    if not ours.writes(name) and not others.writes(name):
                        continue  # read by both
                    names = (nests[i][0][1].loop_var.name, nests[j][0][1].loop_var.name)
                    if _runs_before(tops[j], tops[i]):
                        chk.stop(DependenceViolationError, self._subject(),
                                 f"the nest of loop {names[1]!r} runs before the nest of loop {names[0]!r} and "
                                 f"one of them writes {buffer_words(name)}, which both use; merged in the order "
                                 f"given, "
                                 f"{names[0]!r}'s body would run first in each iteration", nests[j][0][1])
                    if name == OPAQUE or not _pointwise_all(ours.indices(name), others.indices(name), spanning):
                        chk.stop(DependenceViolationError, self._subject(),
                                 f"the nests of loops {names[0]!r} and {names[1]!r} both use "
                                 f"{buffer_words(name)}, which "
                                 "one of them writes, and different iterations of the merged nest may meet at "
                                 "one element of it (each merged loop must index a dimension by itself in "
                                 "both); merged, the uses would run in another order",
                                 nests[i][0][1], nests[j][0][1])
        # the nests move to the place of the last one given, past the
        # statements between
        place = tops[-1]
        seq_path = place[:-1]
        seq = along[-1][len(seq_path)]  # the last nest's top is on the last loop's path
        if type(seq) is not SeqStmt:
            return  # one nest only where another was: nothing lies between
        for top in tops:
            if top[:-1] != seq_path:
                return
        last = place[-1][1]
        at = None
        for ref, top, nest in zip(self.loops, tops, nests):
            lo, hi = sorted((top[-1][1], last))
            if hi - lo < 2:
                continue  # next to the place (or the place itself): nothing between
            if at is None:
                at = {t[-1][1] for t in tops}
            mine = None
            for k in range(lo + 1, hi):
                if k in at:
                    continue
                if mine is None:
                    mine = touched(nest[0][1])
                buf = conflict(*mine, *touched(seq.seq[k]))
                if buf is not None:
                    chk.stop(DependenceViolationError, describe(ref),
                             f"merged at the place of the nest of {describe(self.loops[-1])}, the nest of loop "
                             f"{nest[0][1].loop_var.name!r} would move past a statement that it shares "
                             f"{buffer_words(buf)} with, one of them writing it", seq.seq[k])

    def _subject(self) -> str:
        """How a message names the loops given."""
        return ", ".join(repr(r.name) for r in self.loops)

    def build(self, plan) -> Outcome:
        site, lca, nests = plan
        first = [loop for _, loop in nests[0]]
        names = fresh_names([merge_base(l.loop_var.name) for l in first], site.index.names)
        new_vars = [Var(n, l.loop_var.dtype) for n, l in zip(names, first)]
        bodies: list[Stmt] = []
        values: list = []
        for nest in nests:
            mapping = {l.loop_var: _cast(v, l.loop_var.dtype) for (_, l), v in zip(nest, new_vars)}
            values.extend(mapping.values())
            inner = nest[-1][1].body
            items = _rebound_items(inner, mapping, {})
            if items is None:
                body = rebind(inner, mapping, {})
                items = body.seq if isinstance(body, SeqStmt) else [body]
            bodies.extend(items)
        new: Stmt = SeqStmt(bodies) if len(bodies) > 1 else bodies[0]
        new_nest: list[For] = []
        for v, loop in reversed(list(zip(new_vars, first))):
            new = For(v, _zero_of(loop, v.dtype), _cast(loop.extent, v.dtype), ForKind.SERIAL, new)
            new_nest.append(new)
        new_nest.reverse()
        tops = [nest[0][0] for nest in nests]
        seq_path = tops[0][:-1]
        positions = [p[-1][1] for p in tops]
        if (all(p[:-1] == seq_path and p[-1][0] == "seq" for p in tops)
                and len(set(positions)) == len(positions)):
            # the nests are items of one sequence: it loses all but the
            # last, which the merged nest replaces (a sequence left with
            # one item is that item), as _replace_many would make it
            seq: SeqStmt = site.at(seq_path)
            removed = positions[:-1]
            if len(seq.seq) - len(removed) == 1:
                replacement = new
            else:
                replacement = seq.with_item_without(positions[-1], new, removed)
            mod = commit_merge(site, seq_path, len(seq.seq), replacement, positions,
                               [[l for _, l in nest] for nest in nests], new_nest, values,
                               rebuild=rebuilt_above)
        else:
            # the function itself has no statement fields but its body
            base = lca if lca else (_BODY,)
            targets: dict = {p[len(base):]: None for p in tops}
            targets[tops[-1][len(base):]] = new
            mod = commit(site, base, _replace_many(site.at(base), targets))
        return Outcome(mod, LoopRef(names[-1], site.func_name))

    def python_args(self):
        return [py_value(r) for r in self.loops]


def _pointwise_all(mine: list, theirs: list, levels: list) -> bool:
    """Whether every use of ``mine`` meets every one of ``theirs`` only in
    the same iteration of the merged nest (their indices; see
    :func:`~tirfun.rewrites.merge_order.pointwise`)."""
    for a in mine:
        for b in theirs:
            if not pointwise(a, b, levels):
                return False
    return True


def _runs_before(a: Path, b: Path) -> bool:
    """Whether the statement at path ``a`` runs before the one at ``b``:
    the paths ordered by their steps as ``(field, index)`` pairs, a field
    step's index (None) taken as -1, a path that leads on from the other
    after it."""
    for x, y in zip(a, b):
        if x != y:
            return (x[0], -1 if x[1] is None else x[1]) < (y[0], -1 if y[1] is None else y[1])
    return len(a) < len(b)


def _head(node) -> str:
    """A short description of a statement: an ``if``'s condition, a let's
    variable."""
    if isinstance(node, IfThenElse):
        return f"(if {node.condition.script()})"
    if isinstance(node, LetStmt):
        return f"(binding {node.var.name})"
    return ""


def _rebound_items(body: Stmt, mapping: dict, ranges: dict) -> list | None:
    """The statements of ``rebind(body, mapping, ranges)`` (``body``
    itself, or a sequence's items) where each is a plain chain (see
    :func:`~tirfun.rewrites.rebind.rebind_chain`), else None."""
    stmts = body.seq if type(body) is SeqStmt else (body,)
    out = []
    for stmt in stmts:
        new = rebind_chain(stmt, mapping, ranges)
        if new is None:
            return None
        out.append(new)
    return out


def _scope_of(path: Path, nodes: list) -> Path | None:
    """The path of the nearest Block strictly above ``path`` (``nodes``:
    :func:`~tirfun.analysis.traversal.nodes_along` it), None where there is none, as ``scope_path``."""
    for k in range(len(path) - 1, -1, -1):
        if isinstance(nodes[k], Block):
            return path[:k]
    return None


def _same_extent(a: PrimExpr, b: PrimExpr) -> bool:
    """:func:`_same_value` for two extents, two literals of one type (the
    common case) compared directly."""
    if type(a) is IntImm and type(b) is IntImm and a.dtype == b.dtype:
        return a.value == b.value
    return _same_value(a, b)


def _replace_many(node: Stmt, targets: dict) -> Stmt:
    """``node`` with the statement at each relative path replaced (by the
    value in ``targets``, or removed when it is None); a sequence left with
    one statement becomes that statement, TVM's clean-up after merge."""
    if () in targets:
        new = targets[()]
        return Evaluate(IntImm("int32", 0)) if new is None else new
    groups: dict = {}
    for p, v in targets.items():
        groups.setdefault(p[0], {})[p[1:]] = v
    if isinstance(node, SeqStmt) and all(step[0] == "seq" and set(sub) == {()} for step, sub in groups.items()):
        # items replaced or removed whole: edit the sequence in place of a
        # rebuild, which would look at every item of the scope
        seq = node
        removed = [step[1] for step, sub in groups.items() if sub[()] is None]
        for (_, index), sub in groups.items():
            if sub[()] is not None:
                seq = seq.with_item(index, sub[()])
        if len(removed) == len(node.seq):
            return Evaluate(IntImm("int32", 0))
        if type(seq) is SeqStmt and len(seq.seq) == len(node.seq):
            seq = seq.without_items(removed)
            return seq.seq[0] if len(seq.seq) == 1 else seq
    if isinstance(node, SeqStmt):
        out = []
        for i, child in enumerate(node.seq):
            sub = groups.get(("seq", i))
            if sub is None:
                out.append(child)
            elif () in sub and sub[()] is None:
                continue
            else:
                out.append(_replace_many(child, sub))
        if not out:
            return Evaluate(IntImm("int32", 0))
        return out[0] if len(out) == 1 else SeqStmt(out)
    updates = {}
    for (name, index), sub in groups.items():
        value = getattr(node, name)
        if index is None:
            updates[name] = _replace_many(value, sub)
        else:
            updates[name] = value.set(index, _replace_many(value[index], sub))
    return with_fields(node, **updates)


def merge(*loops) -> Merge:
    """The :class:`Merge` record: ``merge("i", "j")``."""
    return Merge(loops)


# -------------------------------------------------------------------- add_unit_loop

@register
@attrs.frozen
class AddUnitLoop(Rewrite):
    """Wrap a block or a loop in a new loop ``u`` of extent 1.

    Requirements, each with the error raised when it fails:

    1. the block or loop exists (UnknownBlockError, UnknownLoopError,
       RefKindError, UnknownFunctionError);
    2. a block is not the function's root block (RootBlockError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((), "int32"), C: T.Buffer((), "int32")):
            with T.block("C"):
                vi = T.axis.spatial(1, 0)
                C[()] = A[()] + 1

        # rewrite
        add_unit_loop("C")

        # after
        @T.prim_func
        def main(A: T.Buffer((), "int32"), C: T.Buffer((), "int32")):
            for u in range(1):
                with T.block("C"):
                    vi = T.axis.spatial(1, 0)
                    C[()] = A[()] + 1
    """

    primitive = "add_unit_loop"

    block_or_loop: object = attrs.field(converter=as_block_or_loop_ref)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block_or_loop])
        path = resolve_block_or_loop(chk, site, self.block_or_loop)
        if isinstance(self.block_or_loop, BlockRef):
            if path == (_BODY, ("block", None)):
                chk.stop(RootBlockError, describe(self.block_or_loop),
                         "it is the root block of the function; no loop can be added above it")
            path = path[:-1]  # the BlockRealize
        return site, path

    def build(self, plan) -> Outcome:
        site, path = plan
        name = fresh_name(UNIT_LOOP_BASE, site.index.names)
        new = For(Var(name, "int32"), IntImm("int32", 0), IntImm("int32", 1), ForKind.SERIAL, site.at(path))
        mod = commit_nest(site, path, [], new, 1, ())
        return Outcome(mod, LoopRef(name, site.func_name))

    def python_args(self):
        return [py_value(self.block_or_loop)]


def add_unit_loop(block_or_loop) -> AddUnitLoop:
    """The :class:`AddUnitLoop` record: ``add_unit_loop("C")``."""
    return AddUnitLoop(block_or_loop)


# ----------------------------------------------------------- reorder_block_iter_var

@register
@attrs.frozen
class ReorderBlockIterVar(Rewrite):
    """Permute a block's iteration variables (and their bound values):
    position ``k`` of the result holds the variable that was at
    ``new_order[k]``.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``new_order`` is a permutation of ``0 .. n-1`` for the block's ``n``
       iteration variables (InvalidReorderIndexError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj]

        # rewrite
        reorder_block_iter_var("B", [1, 0])

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vj, vi = T.axis.remap("SS", [j, i])
                    B[vi, vj] = A[vi, vj]
    """

    primitive = "reorder_block_iter_var"

    block: object = attrs.field(converter=as_block_ref)
    new_order: object = attrs.field(converter=_as_tuple)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block])
        path = resolve_block(chk, site, self.block)
        block: Block = site.at(path)
        n = len(block.iter_vars)
        order = self.new_order
        ok = (isinstance(order, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in order)
              and sorted(order) == list(range(n)))
        if not ok:
            chk.stop(InvalidReorderIndexError, describe(self.block),
                     f"the order {order!r} is not a permutation of [0, 1, ..., {n - 1}] for the "
                     f"block's {n} iteration variables", site.at(path[:-1]))
        return site, path[:-1]

    def build(self, plan) -> Outcome:
        site, rpath = plan
        realize: BlockRealize = site.at(rpath)
        order = self.new_order
        block = with_fields(realize.block, iter_vars=[realize.block.iter_vars[k] for k in order])
        new = BlockRealize([realize.iter_values[k] for k in order], realize.predicate, block)
        return Outcome(commit(site, rpath, new, index=site.index))

    def python_args(self):
        return [py_value(self.block), f"new_order={py_value(list(self.new_order))}"]


def reorder_block_iter_var(block, new_order) -> ReorderBlockIterVar:
    """The :class:`ReorderBlockIterVar` record: ``reorder_block_iter_var("C", [2, 1, 0])``."""
    return ReorderBlockIterVar(block, new_order)


__all__ = [
    "Split", "split", "Fuse", "fuse", "Reorder", "reorder", "Merge", "merge",
    "AddUnitLoop", "add_unit_loop", "ReorderBlockIterVar", "reorder_block_iter_var",
]
