"""Padding: decompose_padding (and the query can_decompose_padding) and
pad_einsum.

A padding block stores ``T.if_then_else(in_bounds, value, pad)``; its
decomposition fills the whole region with the constant ``pad`` first, then
computes ``value`` over the in-bound part only, whose loops run over
exactly that part, so the hot loop carries no test. ``pad_einsum`` goes the
other way: it pads an einsum's iteration domain to round extents, computing
on padded copies of its buffers.
"""

from __future__ import annotations

import attrs

from ..analysis.arith import can_prove, index_at_most
from ..analysis.arith.iter_map import is_bijective, simplify_index
from ..analysis.arith.simplify import is_true, simplify_expr
from ..analysis.traversal import ancestors, replace_at, transform, transform_plain, walk
from ..analysis.arith.terms import fits
from ..nodes import (
    GE, GT, LE, LT, NE, Add, And, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Call, Div,
    FloatImm, FloorDiv, FloorMod, For, IfThenElse, IntImm, IRModule, IterVar, IterVarType, Mod, PrimExpr, Range,
    SeqStmt, Stmt, StringImm, Sub, Var, While, const,
)
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .body_walk import BodyWalk
from .dataflow import fold_units
from .checks import (
    all_block_realizes, child_blocks, complete_block_violation, describe, loop_dependent_domain, loops_above,
    resolve_block, resolve_loop, resolve_site, scope_path, statements_above,
)
from .errors import (
    IncompleteBlockError, InvalidPaddingError, LoopDependentDomainError, LoopPositionError, NonEinsumError,
    NotStagePipelineError, PaddedDivisionError, PaddingPatternMatchError,
)
from .exprs import find_nodes, plain_buffer, substitute_expr, uses_any, var_names
from .name_pool import NamePool
from .index import derive_stages_index
from .names import fresh_name, suffixed
from .refs import BlockRef, as_block_ref, as_loop_ref
from .serialize import py_value

_TRUE = IntImm("bool", 1)


def _conjuncts(e: PrimExpr) -> list[PrimExpr]:
    if isinstance(e, And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    if isinstance(e, Call) and e.op == "tir.likely":
        return _conjuncts(e.args[0])
    if isinstance(e, IntImm) and e.dtype.is_bool and e.value == 1:
        return []
    return [e]


def _conjoin(terms) -> PrimExpr:
    out = None
    for t in terms:
        out = t if out is None else And(out, t)
    return _TRUE if out is None else out


def _int(e) -> int | None:
    return e.value if isinstance(e, IntImm) and not e.dtype.is_bool else None


def _bound(term: PrimExpr, var: Var) -> tuple[int | None, int | None] | None:
    """The constant bounds ``[lo, hi)`` a comparison puts on ``var`` alone,
    or None when it is not such a comparison."""
    cls = type(term)
    if cls not in (LT, LE, GT, GE):
        return None
    a, b = term.a, term.b
    if a == var and _int(b) is not None:
        c = _int(b)
        return {LT: (None, c), LE: (None, c + 1), GT: (c + 1, None), GE: (c, None)}[cls]
    if b == var and _int(a) is not None:
        c = _int(a)
        return {LT: (c + 1, None), LE: (c, None), GT: (None, c), GE: (None, c + 1)}[cls]
    return None


@attrs.frozen
class _Padding:
    """What the padding pattern gives: the in-bound value, the pad value,
    the condition (in the block's variables) and, per iteration variable,
    the constant in-bound interval ``[lo, hi)``."""

    store: BufferStore
    value: PrimExpr
    pad: PrimExpr
    cond: PrimExpr
    bounds: tuple


def _match(block: Block, realize: BlockRealize) -> _Padding | str:
    """The padding pattern of the block, or why it does not match."""
    store = block.body
    if not isinstance(store, BufferStore):
        return "the block body is not a single store into the written buffer"
    if store.predicate is not None:
        return "the block's store is predicated (a masked store)"
    call = store.value
    if not (isinstance(call, Call) and call.op == "tir.if_then_else"):
        return "the stored value is not a T.if_then_else of the padding condition"
    cond, value, pad = call.args
    if not isinstance(pad, (IntImm, FloatImm)):
        return f"the pad value {pad.script()} is not a constant"
    env = {iv.var: _dom_env(iv) for iv in block.iter_vars if _dom_env(iv) is not None}
    if not _surely_narrows(cond, env) and (simplify_expr(cond, env) == _TRUE or not _conjuncts(cond)):
        return "the in-bound condition is always true"
    bounds = []
    for iv in block.iter_vars:
        lo, ext = _int(iv.dom.min), _int(iv.dom.extent)
        if lo is None or ext is None:
            bounds.append(None)
            continue
        hi = lo + ext
        for term in _conjuncts(cond):
            b = _bound(term, iv.var)
            if b is not None:
                lo = lo if b[0] is None else max(lo, b[0])
                hi = hi if b[1] is None else min(hi, b[1])
        if hi <= lo:
            return f"the in-bound range of {iv.var.name} is empty"
        bounds.append((lo, hi))
    return _Padding(store, value, pad, cond, tuple(bounds))


def _surely_narrows(cond: PrimExpr, env: dict) -> bool:
    """Whether ``cond`` is a conjunction of comparisons of a variable of
    ``env`` (Var -> ``(lo, hi)``) with a literal, one of which leaves out
    part of its variable's interval: ``cond`` is then false somewhere in the
    intervals, so no simplification under them makes it ``True``, and it
    holds a conjunct; the simplifier need not be asked (comparisons of a
    variable and a literal are all it would meet)."""
    narrows = False
    for term in _conjuncts(cond):
        if type(term) not in (LT, LE, GT, GE):
            return False
        var = term.a if type(term.a) is Var else term.b
        interval = env.get(var) if type(var) is Var else None
        found = None if interval is None else _bound(term, var)
        if found is None:
            return False
        lo, hi = interval
        narrows = narrows or (found[0] is not None and found[0] > lo) or (found[1] is not None and found[1] <= hi)
    return narrows


def _always_true(cond: PrimExpr, ranges: dict) -> bool:
    """Whether ``cond`` is a conjunction of comparisons of a literal with
    a variable of ``ranges`` (Var -> ``(lo, hi)``), or that variable plus
    or minus a literal, each true over the whole range, as the in-bound
    conditions of a padding are once its loops are trimmed: the simplifier
    makes such a condition ``True`` (a test compares the two), worked out
    here in integers."""
    stack = [cond]
    while stack:
        term = stack.pop()
        kind = type(term)
        if kind is And:
            stack += (term.a, term.b)
            continue
        if kind is IntImm and term.dtype.is_bool and term.value == 1:
            continue
        if kind not in (LT, LE, GT, GE) or not (type(term.a) is IntImm or type(term.b) is IntImm):
            return False
        a, b = _span(term.a, ranges), _span(term.b, ranges)
        if a is None or b is None:
            return False
        if kind is LT:
            holds = a[1] < b[0]
        elif kind is LE:
            holds = a[1] <= b[0]
        elif kind is GT:
            holds = a[0] > b[1]
        else:
            holds = a[0] >= b[1]
        if not holds:
            return False
    return True


def _span(e: PrimExpr, ranges: dict) -> tuple[int, int] | None:
    """The integer interval of a literal, a variable of ``ranges``, or such
    a variable plus or minus a literal (values that fit the dtype); None
    for anything else."""
    kind = type(e)
    if kind is IntImm:
        return None if e.dtype.is_bool else (e.value, e.value)
    shift = 0
    if (kind is Add or kind is Sub) and type(e.b) is IntImm:
        shift = e.b.value if kind is Add else -e.b.value
        e = e.a
    interval = ranges.get(e) if type(e) is Var else None
    if interval is None:
        return None
    lo, hi = interval[0] + shift, interval[1] + shift
    return (lo, hi) if fits(e.dtype, lo) and fits(e.dtype, hi) else None


def _dom_env(iv: IterVar):
    lo, ext = _int(iv.dom.min), _int(iv.dom.extent)
    if lo is None or ext is None or ext <= 0:
        return None
    return (lo, lo + ext - 1)



@register
@attrs.frozen
class DecomposePadding(Rewrite):
    """Split a padding block, which stores ``T.if_then_else(cond, value,
    pad)`` with a constant ``pad``, into a block ``<name>_pad_const`` that
    stores ``pad`` everywhere, placed right before ``loop`` under copies of
    the loops from ``loop`` down, and the block itself, now storing
    ``value`` over the in-bound part only: each iteration variable with
    constant bounds in ``cond`` counts from the start of its in-bound range,
    and a loop bound to exactly that variable runs over the in-bound range
    only; what the bounds do not settle stays in the block's predicate.
    Returns the ``_pad_const`` block.

    Requirements, each with the error raised when it fails:

    1. the block and the loop exist (UnknownBlockError, UnknownLoopError,
       RefKindError, UnknownFunctionError);
    2. the loop is an ancestor of the block in its scope (LoopPositionError);
    3. the block is complete (IncompleteBlockError);
    4. the block matches the padding pattern: its body is one store of a
       ``T.if_then_else`` whose pad value is a constant and whose condition
       is not always true, over its iteration variables (not the loop
       variables an opaque block sees), and no in-bound range is empty
       (PaddingPatternMatchError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(X: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("P"):
                    vi = T.axis.spatial(8, i)
                    P[vi] = T.if_then_else(1 <= vi and vi < 7, X[vi - 1], T.float32(0))

        # rewrite
        decompose_padding("P", "i")

        # after
        @T.prim_func
        def main(X: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32")):
            for i_1 in range(8):
                with T.block("P_pad_const"):
                    vi_1 = T.axis.spatial(8, i_1)
                    T.reads()
                    T.writes(P[vi_1])
                    P[vi_1] = T.float32(0)
            for i in range(6):
                with T.block("P"):
                    vi = T.axis.spatial(6, i)
                    T.reads(X[vi])
                    T.writes(P[vi + 1])
                    P[vi + 1] = X[vi]
    """

    primitive = "decompose_padding"

    block: object = attrs.field(converter=as_block_ref)
    loop: object = attrs.field(converter=as_loop_ref)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block, self.loop])
        bpath = resolve_block(chk, site, self.block)
        lpath = resolve_loop(chk, site, self.loop)
        rpath = bpath[:-1]
        realize: BlockRealize = site.at(rpath)
        block = realize.block
        loops = loops_above(site, bpath)
        position = next((k for k, (p, _) in enumerate(loops) if p == lpath), None)
        if position is None:
            chk.stop(LoopPositionError, describe(self.loop),
                     f"the loop is not an ancestor of block {block.name_hint!r} in its scope; "
                     "decompose_padding places the constant fill before a loop above the block",
                     site.at(lpath))
        why = complete_block_violation(block)
        if why is not None:
            chk.stop(IncompleteBlockError, describe(self.block), f"the block is not complete: {why}", realize)
        direct = sorted(var_names(block.body) & {lp.loop_var.name for _, lp in loops})
        if direct:
            # an opaque block reading the loops around it: the fill's loops
            # would be new ones, and the pattern is one over iteration
            # variables (TVM's too)
            chk.stop(PaddingPatternMatchError, describe(self.block),
                     f"the block does not match the padding pattern: it reads the loop variable {direct[0]} "
                     "directly, not through an iteration variable", realize)
        found = _match(block, realize)
        if isinstance(found, str):
            chk.stop(PaddingPatternMatchError, describe(self.block),
                     f"the block does not match the padding pattern: {found}", realize)
        # the in-bound nest: the loops from the block up that each hold only
        # the next one, up to the given loop
        inner = len(loops) - 1
        while inner > position and isinstance(loops[inner - 1][1].body, (For, BlockRealize)):
            inner -= 1
        if loops and not isinstance(loops[-1][1].body, BlockRealize):
            inner = len(loops)
        return site, rpath, loops, position, inner, found

    def build(self, plan) -> Outcome:
        site, rpath, loops, position, inner, found = plan
        realize: BlockRealize = site.at(rpath)
        block = realize.block
        fresh = NamePool(site.index.names).fresh
        # a store's index is its written region's start, a load's its read
        # region's: each is simplified once
        simplified = _memo_simplified()

        # --- the constant fill, under copies of the loops from ``loop`` down
        const_loops = [l for _, l in loops[position:]]
        loop_map = {l.loop_var: Var(fresh(l.loop_var.name), l.loop_var.dtype) for l in const_loops}
        var_map = {iv.var: Var(fresh(iv.var.name), iv.var.dtype) for iv in block.iter_vars}
        const_ivs = [IterVar(iv.dom, var_map[iv.var], IterVarType.DataPar) for iv in block.iter_vars]
        store = found.store
        const_store = BufferStore(store.buffer, found.pad, [substitute_expr(i, var_map) for i in store.indices])
        writes = [_region(w, var_map, simplified) for w in block.writes]
        const_name = fresh_name(suffixed(block.name_hint, "pad_const"), site.index.blocks)
        const_block = Block(const_ivs, [], writes, const_name, const_store)
        # a loop of one iteration above ``loop`` takes its value in the new
        # bindings, as TVM's analyzer folds it (``T.axis.spatial(1, 0)``);
        # the loops from ``loop`` down are copied and keep their variables
        units = {l.loop_var: l.min for _, l in loops[:position] if _int(l.extent) == 1}
        nest: Stmt = BlockRealize([fold_units(substitute_expr(v, loop_map), units) for v in realize.iter_values],
                                  substitute_expr(realize.predicate, loop_map), const_block)
        for loop in reversed(const_loops):
            nest = For(loop_map[loop.loop_var], loop.min, loop.extent, "serial", nest)
        # --- the in-bound part: iteration variables counted from the start
        # of their in-bound range, loops bound to exactly one of them trimmed
        nest_loops = {l.loop_var: l for _, l in loops[inner:]}
        rebase, new_ivs, values, loop_shift, new_ranges = {}, [], [], {}, {}
        for iv, value, bounds in zip(block.iter_vars, realize.iter_values, found.bounds):
            if bounds is None:
                new_ivs.append(iv)
                values.append(value)
                continue
            lo, hi = bounds
            dtype = iv.var.dtype
            rebase[iv.var] = iv.var + IntImm(dtype, lo) if lo else iv.var
            new_ivs.append(IterVar(Range(IntImm(dtype, 0), IntImm(dtype, hi - lo)), iv.var, iv.iter_type,
                                   iv.thread_tag))
            if isinstance(value, Var) and value in nest_loops and value not in new_ranges \
                    and _int(nest_loops[value].min) == 0:
                new_ranges[value] = hi - lo
                loop_shift[value] = value + IntImm(value.dtype, lo) if lo else value
                values.append(value)
            else:
                values.append(simplify_index(value - IntImm(value.dtype, lo)) if lo else value)
        # a trimmed loop now counts from 0: every other use of it is shifted
        plain = {id(v) for v in values if isinstance(v, Var) and v in new_ranges}
        values = [v if id(v) in plain and isinstance(v, Var) else simplified(substitute_expr(v, loop_shift))
                  for v in values]
        ranges = {}
        for loop in [l for _, l in loops]:
            lo, ext = _int(loop.min), _int(loop.extent)
            if loop.loop_var in new_ranges:
                ranges[loop.loop_var] = (0, new_ranges[loop.loop_var] - 1)
            elif lo is not None and ext is not None and ext > 0:
                ranges[loop.loop_var] = (lo, lo + ext - 1)
        bindings = dict(zip([iv.var for iv in block.iter_vars], realize.iter_values))
        predicate = _conjoin(_conjuncts(substitute_expr(found.cond, bindings)) + _conjuncts(realize.predicate))
        predicate = substitute_expr(predicate, loop_shift)
        predicate = _TRUE if _always_true(predicate, ranges) else simplify_expr(predicate, ranges)
        body = BufferStore(store.buffer, _simplify_indices(substitute_expr(found.value, rebase), simplified),
                           [simplified(substitute_expr(i, rebase)) for i in store.indices])
        new_block = attrs.evolve(block, iter_vars=new_ivs, body=body,
                                 reads=[_region(r, rebase, simplified) for r in block.reads],
                                 writes=[_region(w, rebase, simplified) for w in block.writes])
        in_bound: Stmt = BlockRealize([fold_units(v, units) for v in values], predicate, new_block)
        for _, loop in reversed(loops[inner:]):
            if loop.loop_var in new_ranges:
                in_bound = attrs.evolve(loop, min=IntImm(loop.loop_var.dtype, 0),
                                        extent=IntImm(loop.loop_var.dtype, new_ranges[loop.loop_var]),
                                        body=in_bound)
            else:
                in_bound = attrs.evolve(loop, body=in_bound)
        # --- replace: the in-bound nest where the old one was, the fill
        # right before the given loop
        top = loops[inner][0] if inner < len(loops) else rpath
        at = loops[position][0]
        sub = site.at(at)
        sub = in_bound if top == at else _replace(sub, top[len(at):], in_bound)
        parent = at[:-1]
        if at and at[-1][1] is not None and isinstance(site.at(parent), SeqStmt):
            seq = site.at(parent)
            k = at[-1][1]
            new = seq.with_items(k, k + 1, [nest, sub])
            return Outcome(commit(site, parent, new), BlockRef(const_name, site.func_name))
        return Outcome(commit(site, at, SeqStmt([nest, sub])), BlockRef(const_name, site.func_name))

    def python_args(self):
        return [py_value(self.block), py_value(self.loop)]


def _replace(node, rel, new):
    return replace_at(node, rel, new)


def _simplify_indices(e: PrimExpr, simplified=None) -> PrimExpr:
    """``e`` with the indices of its loads simplified (``vi + 1 - 1`` is
    ``vi``), through ``simplified`` (:func:`_simplified` by default)."""
    simplified = simplified or _simplified

    def post(n):
        if isinstance(n, BufferLoad):
            indices = [simplified(i) for i in n.indices]
            if all(a is b for a, b in zip(indices, n.indices)):
                return n  # each index already as simple as it gets
            return BufferLoad(n.buffer, indices, n.predicate)
        return n

    # ``post`` keeps every other node, arithmetic included: the plain walk,
    # which rebuilds arithmetic without asking it, gives what ``transform`` does
    return _simplified(transform_plain(e, post))


def _memo_simplified():
    """:func:`_simplified`, each distinct index simplified once (a memo for
    one application, keyed by the expression's value)."""
    memo: dict = {}

    def simplified(e: PrimExpr) -> PrimExpr:
        if type(e) is IntImm or type(e) is Var:
            return e  # as simple as it gets (simplify_index returns it)
        out = memo.get(e)
        if out is None:
            out = memo[e] = _simplified(e)
        return out

    return simplified


def _simplified(e: PrimExpr) -> PrimExpr:
    return simplify_index(e) if e.dtype.is_integer and e.dtype.lanes == 1 else e


def _region(r: BufferRegion, mapping, simplified) -> BufferRegion:
    return BufferRegion(r.buffer, [Range(simplified(substitute_expr(x.min, mapping)),
                                         simplified(substitute_expr(x.extent, mapping))) for x in r.region])


def decompose_padding(block, loop) -> DecomposePadding:
    """The :class:`DecomposePadding` record: ``decompose_padding("pad", "i0")``."""
    return DecomposePadding(block, loop)


def can_decompose_padding(mod, block, loop) -> bool:
    """Whether ``decompose_padding(block, loop)`` applies to ``mod`` (TVM's
    ``can_decompose_padding``). A block or loop that does not exist is an
    error, as in TVM, not a False."""
    from .errors import RefKindError, UnknownBlockError, UnknownFunctionError, UnknownLoopError

    errors = DecomposePadding(block, loop).violations(mod)
    for err in errors:
        if isinstance(err, (UnknownBlockError, UnknownLoopError, RefKindError, UnknownFunctionError)):
            raise err
    return not errors


__all__ = ["DecomposePadding", "decompose_padding", "can_decompose_padding"]


# ---------------------------------------------------------------------- pad_einsum

def _trivial_indices(indices) -> bool:
    return all(isinstance(i, Var) or (isinstance(i, IntImm) and not i.dtype.is_bool) for i in indices)


def _body_nodes(block: Block) -> list:
    """The loads, stores and integer divisions of the block's body and
    init, in pre-order: what :func:`_einsum_violation` and
    :func:`_padded_divisor` look at, found in one walk."""
    nodes = find_nodes(block.body, _BODY_KINDS)
    if block.init is not None:
        nodes += find_nodes(block.init, _BODY_KINDS)
    return nodes


def _einsum_violation(block: Block, nodes: list) -> str | None:
    """Why the block is not an einsum (every region one point at variables
    or constants, each buffer once, the body indexing the same way);
    ``nodes`` are its :func:`_body_nodes`."""
    seen = set()
    for r in list(block.reads) + list(block.writes):
        if r.buffer in seen:
            return f"it accesses buffer {r.buffer.name} in more than one region"
        seen.add(r.buffer)
        for rng in r.region:
            if not (_int(rng.extent) == 1 and (isinstance(rng.min, Var) or _int(rng.min) is not None)):
                return (f"its region of {r.buffer.name} is not one point at iteration variables or "
                        "constants")
    for n in nodes:
        if type(n) in _DIVISIONS:
            continue
        if not _trivial_indices(n.indices):
            return f"its body indexes {n.buffer.name} with an expression that is not a variable or a constant"
        if n.buffer not in seen:
            # a padded domain reaches past such a buffer, which no padded copy
            # stands in for (regions hidden by unsafe_hide_buffer_access)
            kind = "stores to" if isinstance(n, BufferStore) else "loads from"
            return f"its body {kind} {n.buffer.name}, which its regions do not declare"
    return None


#: the integer divisions that trap on a zero divisor
_DIVISIONS = (Div, FloorDiv, Mod, FloorMod)
_BODY_KINDS = (BufferLoad, BufferStore) + _DIVISIONS


def _padded_divisor(nodes: list, padded: dict):
    """The first integer divisor among ``nodes`` (a block's
    :func:`_body_nodes`) that the iterations the padding adds may make
    zero, or None: one reading a buffer indexed by a padded variable (which
    gets a copy padded with zeros), or one of a padded variable not proven
    nonzero over the padded extent."""
    from ..analysis.arith import can_prove

    names = {v.name for v in padded}
    ranges = None
    for n in nodes:
        if type(n) in _DIVISIONS and n.dtype.is_integer:
            c = _int(n.b)
            if c is not None and c != 0:
                continue
            for load in walk(n.b):
                if type(load) is BufferLoad and any(uses_any(i, names) is not None for i in load.indices):
                    return n.b
            if uses_any(n.b, names) is not None:
                if ranges is None:
                    ranges = {v: Range(IntImm(new.dtype, 0), new) for v, (_, new) in padded.items()}
                if not can_prove(NE(n.b, IntImm(n.b.dtype, 0)), ranges):
                    return n.b
    return None


@register
@attrs.frozen
class PadEinsum(Rewrite):
    """Pad the iteration domain of an einsum block (every access indexed by
    iteration variables or constants) up to multiples of ``padding``, one
    per iteration variable: the buffers indexed by a padded variable get
    padded copies ``<buffer>_pad``, copied in by blocks ``<buffer>_pad``
    before the block (zero beyond the original shape) and, for outputs,
    copied back after it; the block computes on the copies, and a loop
    bound to exactly a padded variable, over its whole original domain and
    with only this block under it, runs over the padded extent.

    Correct where TVM is not: the padded iterations of a reduction variable
    would add the reduction of padding values (zero is no identity for max,
    nor for a sum of ``x + 1``), so a padded reduction variable keeps them
    out with a predicate; an output is copied back only over the original
    domain in the padded dimensions, and copied in as well where the block
    may not write all of it (a predicate other than a split's guard that
    cuts a variable to its domain, loops over part of its domain, a
    dimension indexed by a constant or by a variable of an enclosing
    block, a reduction over a run-time count that may be 0, where no
    instance runs), so elements it does not write keep their values (TVM copies
    back from elements it never wrote). A binding that tiles each domain
    once (a split that divides, ``j_0 * 4 + j_1``; a split into parts of
    a run-time extent under its guard ``i_0 * ((m + 1) // 2) + i_1 < m``)
    writes all of it, and no copy in is made, as TVM makes none; a dimension indexed by a constant
    is copied whole (TVM makes it of extent 1 and accesses it out of
    bounds); a
    variable left unpadded whose loop's range follows a padded loop (``for
    k in range(i + 1)``) is kept to its domain by a predicate in the
    iterations the padding adds (TVM's result reads past the padded buffer
    there).

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``padding`` has one positive int per iteration variable
       (InvalidPaddingError); a block with none is left as it is;
    3. the block is an einsum whose padded variables have domains starting
       at 0 (NonEinsumError);
    4. other blocks in the statement of the scope that holds the block
       (a cache's copy moved under the block's loops, say) use a buffer
       to pad only where they can use the padded copy instead, as TVM
       makes them: the block's domain spans each padded dimension of the
       buffer, so that the padding lies beyond its elements; they reach it
       by loads, stores and declared regions only; and the scope, not the
       statement, allocates it (NotStagePipelineError). Such a buffer is
       copied in whole before the statement and back whole after it. One
       they only read and nothing there writes stays theirs, unpadded;
    5. the block divides integers (``//``, ``%``) only by nonzero
       constants or by values the padding leaves alone: a divisor read
       from a padded buffer, or of a padded variable, is zero or unknown
       in the iterations the padding adds (PaddedDivisionError; TVM pads
       regardless, and its code divides by zero there).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3,), "float32")):
            for i, k in T.grid(3, 4):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

        # rewrite
        pad_einsum("B", [4, 1])

        # after
        @T.prim_func
        def main(A: T.Buffer((3, 4), "float32"), B: T.Buffer((3,), "float32")):
            A_pad = T.alloc_buffer((4, 4))
            B_pad = T.alloc_buffer((4,))
            for i0, i1 in T.grid(4, 4):
                with T.block("A_pad"):
                    v0, v1 = T.axis.remap("SS", [i0, i1])
                    T.reads(A[v0, v1])
                    T.writes(A_pad[v0, v1])
                    A_pad[v0, v1] = T.if_then_else(v0 < 3, A[v0, v1], T.float32(0))
            for i, k in T.grid(4, 4):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A_pad[vi, vk])
                    T.writes(B_pad[vi])
                    with T.init():
                        B_pad[vi] = T.float32(0)
                    B_pad[vi] = B_pad[vi] + A_pad[vi, vk]
            for i0 in range(3):
                with T.block("B_pad"):
                    v0 = T.axis.spatial(3, i0)
                    T.reads(B_pad[v0])
                    T.writes(B[v0])
                    B[v0] = B_pad[v0]
    """

    primitive = "pad_einsum"

    block: object = attrs.field(converter=as_block_ref)
    padding: object = attrs.field(converter=lambda v: tuple(v) if isinstance(v, (list, tuple)) else v)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block])
        bpath = resolve_block(chk, site, self.block)
        rpath = bpath[:-1]
        realize: BlockRealize = site.at(rpath)
        block = realize.block
        subject = describe(self.block)
        n = len(block.iter_vars)
        pads = self.padding
        if not isinstance(pads, tuple) or len(pads) != n or \
                any(isinstance(p, bool) or not isinstance(p, int) or p <= 0 for p in pads):
            chk.stop(InvalidPaddingError, subject,
                     f"the padding must be a list of {n} positive ints, one per iteration variable, "
                     f"got {self.padding!r}", realize)
        if n == 0:
            # no iteration variable, nothing to pad: TVM leaves such a block
            # (the opaque block of a loop_partition, say) as it is
            return mod
        nodes = _body_nodes(block)
        why = _einsum_violation(block, nodes)
        if why is not None:
            chk.stop(NonEinsumError, subject, f"the block is not an einsum: {why}", realize)
        scope = scope_path(site, bpath)
        if scope is None:
            chk.stop(NonEinsumError, subject, "the block is not inside a block that could allocate the "
                     "padded buffers", realize)
        # iteration variable -> (extent, padded extent), as expressions: a
        # symbolic extent n pads to (n + p - 1) // p * p, as in TVM
        padded = {}
        dependent = loop_dependent_domain(site, bpath, block)
        for iv, p in zip(block.iter_vars, pads):
            extent = iv.dom.extent
            if dependent is not None and iv is dependent[0]:
                chk.stop(LoopDependentDomainError, subject,
                         f"the domain of {iv.var.name} depends on loop {dependent[1]!r}, so the padded "
                         "buffers, allocated outside it, could not be sized", realize)
            ext = _int(extent)
            if ext is not None:
                new = -(-ext // p) * p
                if new == ext:
                    continue
                new_extent = IntImm(extent.dtype, new)
            elif p == 1:
                continue
            else:
                step = IntImm(extent.dtype, p)
                new_extent = FloorDiv(extent + IntImm(extent.dtype, p - 1), step) * step
            if _int(iv.dom.min) != 0:
                chk.stop(NonEinsumError, subject,
                         f"the domain of {iv.var.name} to pad does not start at 0", realize)
            padded[iv.var] = (extent, new_extent)
        if padded:
            divisor = _padded_divisor(nodes, padded)
            if divisor is not None:
                chk.stop(PaddedDivisionError, subject,
                         f"the block divides by {divisor.script()}, which the iterations the padding adds "
                         "read from the padding (zeros) or at padded indices: they would divide by zero",
                         realize)
        # the statement of the scope's body that holds the block
        scope_block: Block = site.at(scope)
        body_path = scope + (("body", None),)
        holder = body_path
        if isinstance(scope_block.body, SeqStmt):
            holder = rpath[:len(body_path) + 1]
        regions = {r.buffer: r for r in list(block.reads) + list(block.writes)
                   if any(isinstance(x.min, Var) and x.min in padded for x in r.region)}
        redirect = _redirected(chk, site, subject, realize, holder, scope_block, regions, padded)
        return site, scope, holder, rpath, padded, redirect

    def build(self, plan) -> Outcome:
        if isinstance(plan, IRModule):  # a block with nothing to pad
            return Outcome(plan)
        site, scope, holder, rpath, padded, redirect = plan
        realize: BlockRealize = site.at(rpath)
        block = realize.block
        taken = NamePool(site.index.names)
        blocks = NamePool(site.index.blocks)

        def fresh(base, pool):
            name = fresh_name(base, pool)
            pool.add(name)
            return name

        buf_map, reads_copy, writes_copy = {}, [], []
        for region, is_read in [(r, True) for r in block.reads] + [(w, False) for w in block.writes]:
            if not any(isinstance(x.min, Var) and x.min in padded for x in region.region):
                continue
            buf = region.buffer
            shape, back = [], []
            for x, dim in zip(region.region, buf.shape):
                if isinstance(x.min, Var) and x.min in padded:
                    ext, new = padded[x.min]
                    if _int(ext) is not None:
                        shape.append(IntImm(dim.dtype, _int(new)))
                        back.append(IntImm(dim.dtype, min(_int(ext), _int(dim)) if _int(dim) is not None
                                           else _int(ext)))
                    else:
                        shape.append(new)
                        back.append(dim if dim == ext else ext)
                else:
                    shape.append(dim)
                    back.append(dim)
            new_buf = Buffer(fresh(f"{buf.name}_pad", taken), shape, buf.dtype, storage_scope=buf.storage_scope)
            buf_map[buf] = new_buf
            # an output is copied in too where the block may not write all of
            # it (a predicate, loops that cover part of its domain): what it
            # does not write is copied back unchanged
            # a buffer the blocks beside it use too is theirs inside the
            # statement as well: copied in whole and back whole
            copy_in = is_read or buf in redirect or not _writes_every_element(site, rpath, realize, region, padded)
            copy_back = buf in redirect  # an input's (an output is always copied back)
            # TVM makes one copy of a buffer, named after the padded buffer:
            # the copy in of an input, the copy back of an output; that one
            # takes the name, so that scripts naming it find it, and a copy
            # added for the meaning is named for its direction
            # (TVM's copy is made first, so that its loops take the first names)
            if is_read:
                reads_copy.append(_copy_nest(buf, new_buf, True, None, fresh, taken, blocks))
                if copy_back:
                    writes_copy.append(_copy_nest(buf, new_buf, False, back, fresh, taken, blocks, "_back"))
            else:
                copied_back = _copy_nest(buf, new_buf, False, back, fresh, taken, blocks)
                if copy_in:
                    reads_copy.append(_copy_nest(buf, new_buf, True, None, fresh, taken, blocks, "_in"))
                writes_copy.append(copied_back)
        # loops bound to exactly a padded variable, with only this block
        # under them, run over the padded extent
        extend = {}
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.var in padded and isinstance(value, Var):
                extend[value] = padded[iv.var]
        # the block on the padded buffers, over the padded domain
        swap = _SwapBuffers(buf_map)
        ivs, guards = [], []
        chain = ancestors(site.func, rpath)  # the statements down to the block
        unkept = _following_extended_loops(chain, holder, extend)
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.var in padded:
                ext, new = padded[iv.var]
                ivs.append(IterVar(Range(iv.dom.min, new), iv.var, iv.iter_type, iv.thread_tag))
                if iv.iter_type is not IterVarType.DataPar:
                    guards.append(LT(value, ext))
            else:
                ivs.append(iv)
                if unkept and var_names(value) & unkept:
                    guards.extend(_in_domain(iv, value, chain))
        new_block = with_fields(
            block, iter_vars=ivs, body=swap.stmt(block.body),
            init=None if block.init is None else swap.stmt(block.init),
            reads=[BufferRegion(buf_map.get(r.buffer, r.buffer), r.region) for r in block.reads],
            writes=[BufferRegion(buf_map.get(w.buffer, w.buffer), w.region) for w in block.writes])
        predicate = _conjoin(_conjuncts(realize.predicate) + guards)
        new_realize = BlockRealize(realize.iter_values, predicate, new_block)
        node_new: Stmt = new_realize
        rebuilt = [(realize, new_realize), (block, new_block)]  # for the index: what changed in place

        for p, old_node in reversed(chain):
            if len(p) < len(holder):
                break
            node = _set_child(old_node, rpath[len(p)], node_new)
            # only a loop that runs over the whole original domain (not a
            # part of it, as after loop_partition) is extended
            if isinstance(node, For) and node.loop_var in extend and _int(node.min) == 0 \
                    and _same_value(node.extent, extend[node.loop_var][0]) \
                    and len(list(child_blocks(node, ()))) == 1:
                new = extend[node.loop_var][1]
                node = with_fields(node, extent=IntImm(node.loop_var.dtype, _int(new)) if _int(new) is not None
                                    else new)
            rebuilt.append((old_node, node))
            node_new = node
        if redirect:
            node_new = _swap_everywhere(node_new, {b: buf_map[b] for b in redirect})
        stmts = reads_copy + [node_new] + writes_copy
        scope_block: Block = site.at(scope)
        if holder == scope + (("body", None),):
            # no copies (nothing needed padding) leave the statement alone,
            # not a sequence of one around it: primitives after this one
            # look through the declarations at the top of a body, not
            # through such a sequence
            body = SeqStmt(stmts) if len(stmts) > 1 else stmts[0]
        else:
            k = holder[-1][1]
            body = scope_block.body.with_items(k, k + 1, stmts)
        added = list(buf_map.values())
        new_scope = with_fields(scope_block, body=body, alloc_buffers=list(scope_block.alloc_buffers) + added)

        def derive(new_func):
            # the copies put around the block's statement, which is rebuilt
            # in place along the path to the block (blocks beside it on
            # the padded buffers too: then the index is derived afresh)
            if redirect:
                return None
            return derive_stages_index(site.index, site.func, new_func, scope, added, holder, reads_copy,
                                       writes_copy, rebuilt)

        return Outcome(commit(site, scope, new_scope, derive=derive))

    def python_args(self):
        return [py_value(self.block), py_value(list(self.padding) if isinstance(self.padding, tuple)
                                               else self.padding)]


def _redirected(chk, site, subject, realize, holder, scope_block, regions: dict, padded: dict) -> frozenset:
    """The buffers to pad that other blocks in the statement holding the
    block (``holder``) use too, and that some block there writes: those
    blocks use the padded copy as well, as TVM makes them. The copy holds
    all the original's elements only where the block's domain spans every
    padded dimension; the padding then lies beyond the original shape,
    which the other blocks never reach. A buffer the others only read and
    nothing there writes stays theirs unpadded. Refused
    (NotStagePipelineError) where a padded dimension is wider than the
    block's domain, where another block reaches the buffer other than by
    its loads, stores and declared regions (a ``match_buffer`` view, its
    pointer), or where the buffer is allocated inside the statement."""
    others = [r for _, r in all_block_realizes(site.at(holder), holder) if r is not realize]
    touching = {}
    written = {w.buffer for w in realize.block.writes if w.buffer in regions}
    for other in others:
        ob = other.block
        for r in list(ob.reads) + list(ob.writes):
            if r.buffer in regions:
                touching.setdefault(r.buffer, other)
        written |= {w.buffer for w in ob.writes if w.buffer in regions}
    redirect = frozenset(b for b in touching if b in written)
    own = set(scope_block.alloc_buffers) | set(site.func.buffer_map.values())
    for buf in sorted(redirect, key=lambda b: b.name):
        other = touching[buf]
        name = other.block.name_hint
        if buf not in own:
            chk.stop(NotStagePipelineError, subject,
                     f"block {name!r} beside it uses {buf.name}, which would be padded, and {buf.name} is "
                     "allocated inside the statement that holds them", other)
        for x, dim in zip(regions[buf].region, buf.shape):
            if isinstance(x.min, Var) and x.min in padded and not _same_value(padded[x.min][0], dim):
                chk.stop(NotStagePipelineError, subject,
                         f"block {name!r} beside it uses {buf.name}, which would be padded, and the block's "
                         f"domain covers {padded[x.min][0].script()} of its {dim.script()} elements along "
                         f"{x.min.name}: the padded iterations would overwrite elements block {name!r} uses",
                         other)
    if redirect:
        # swapped onto stand-ins, the statement names none of them any more,
        # unless a block reaches one otherwise
        swapped = _swap_everywhere(site.at(holder), {b: Buffer(f"{b.name}_pad", b.shape, b.dtype,
                                                               storage_scope=b.storage_scope) for b in redirect})
        datas = {b.data: b for b in redirect}
        left = sorted({n if type(n) is Buffer else datas[n] for n in walk(swapped)
                       if (type(n) is Buffer and n in redirect) or (type(n) is Var and n in datas)},
                      key=lambda b: b.name)
        if left:
            chk.stop(NotStagePipelineError, subject,
                     f"a block beside it reaches {left[0].name}, which would be padded, other than by loads, "
                     "stores and its declared regions (a match_buffer view or its pointer)", realize)
    return redirect


def _swap_everywhere(stmt: Stmt, buf_map: dict) -> Stmt:
    """``stmt`` with every load and store of the buffers of ``buf_map``, and
    every block's declared regions of them, on their padded copies."""
    swap = _SwapBuffers(buf_map).swap  # the loads and stores

    def post(node):
        if type(node) is Block and any(r.buffer in buf_map for r in list(node.reads) + list(node.writes)):
            return with_fields(
                node, reads=[BufferRegion(buf_map.get(r.buffer, r.buffer), r.region) for r in node.reads],
                writes=[BufferRegion(buf_map.get(w.buffer, w.buffer), w.region) for w in node.writes])
        return swap(node)

    return transform(stmt, post)


def _following_extended_loops(chain: list, holder, extend: dict) -> set:
    """Where a loop between ``holder`` and the block (``chain``: the
    statements above it, with their paths) has a range that follows a loop
    the padding may extend (``extend``'s variables), the names of both kinds
    of loops; else none. In the iterations the padding adds, such a loop
    may run where the program never let it (``for k in range(i + 1)``,
    ``i`` padded, reaches ``k = 8`` at ``i = 8``)."""
    moved = {v.name for v in extend}
    following = set()
    for path, node in chain:
        if len(path) < len(holder) or not isinstance(node, For) or node.loop_var in extend:
            continue
        if (var_names(node.min) | var_names(node.extent)) & (moved | following):
            following.add(node.loop_var.name)
    return moved | following if following else set()


def _in_domain(iv: IterVar, value, chain: list) -> list:
    """Guards keeping the binding ``value`` of the unpadded variable ``iv``
    (of the block under the statements ``chain``) in its domain, where it follows loops the
    padding extends: the padded iterations would otherwise give it values
    out of its domain, where TVM's result reads past the padded buffers.
    A loop variable starting at a constant no lower than the domain needs
    no lower guard."""
    lo, extent = iv.dom.min, iv.dom.extent
    top = lo + extent if _int(lo) != 0 else extent
    guards = [LT(value, top)]
    if isinstance(value, Var) and _int(lo) is not None:
        start = next((_int(node.min) for _, node in chain
                      if isinstance(node, For) and node.loop_var == value), None)
        if start is not None and start >= _int(lo):
            return guards
    return [GE(value, lo)] + guards


class _SwapBuffers(BodyWalk):
    """A block's body or init with the loads and stores of the buffers in
    ``buf_map`` on their padded copies, at the same indices: what
    :func:`~tirfun.analysis.traversal.transform` gives with :meth:`swap`
    at every node (a buffer left as it is), with the kinds a body is nearly
    always made of rebuilt directly and any other handed to that walk."""

    def __init__(self, buf_map: dict):
        self.buf_map = buf_map

    def swap(self, node):
        """The node on the copy of its buffer, where it is a load or store
        of one that is padded."""
        kind = type(node)
        if kind is BufferLoad and node.buffer in self.buf_map:
            return BufferLoad(self.buf_map[node.buffer], node.indices, node.predicate)
        if kind is BufferStore and node.buffer in self.buf_map:
            return BufferStore(self.buf_map[node.buffer], node.value, node.indices, node.predicate)
        return node

    @staticmethod
    def unchanged(node):
        """Constants, variables and buffers hold no access to swap."""
        kind = type(node)
        return node if kind in _LEAVES or (kind is Buffer and plain_buffer(node)) else None

    def other(self, n):
        return transform(n, self.swap, self.unchanged)

    def load(self, n):
        if not plain_buffer(n.buffer):
            return self.other(n)
        return self.swap(super().load(n))

    def store(self, n):
        if not plain_buffer(n.buffer):
            return self.other(n)
        return self.swap(super().store(n))


def _tiles_domains(values, iter_vars, loops: dict, predicate=None) -> bool:
    """Whether the binding ``values`` runs each iteration variable over
    exactly its domain, once per point, as a bijective iteration map of the
    loops it uses (a split that divides, ``j_0 * 2 + j_1`` over 8 x 2 for a
    domain of 16; a split into parts of a run-time extent), the loops from
    0. With ``predicate``, each of its conditions must cut one variable's
    values to its domain (``i_0 * 4 + i_1 < 10``, the guard of a split
    that does not divide), which the map may then pass."""
    used = {v.name: loop for v, loop in loops.items() if any(v.name in var_names(x) for x in values)}
    if any(_int(loop.min) != 0 for loop in used.values()):
        return False
    if any(_int(iv.dom.min) != 0 for iv in iter_vars):
        return False
    cut = set()
    if predicate is not None:
        keys = [simplify_index(v) for v in values]
        for c in _conjuncts(predicate):
            if type(c) is not LT or not c.a.dtype.is_integer:
                return False
            key = simplify_index(c.a)
            k = next((k for k, v in enumerate(keys)
                      if v == key and _same_value(c.b, iter_vars[k].dom.extent)), None)
            if k is None:
                return False
            cut.add(k)
    if not is_bijective(values, used):
        return False
    # the map's first point is 0 and its last reaches each domain's end
    # (passes it only where the predicate cuts it back)
    firsts = {loop.loop_var: IntImm(loop.loop_var.dtype, 0) for loop in used.values()}
    lasts = {loop.loop_var: simplify_index(loop.extent - IntImm(loop.extent.dtype, 1)) for loop in used.values()}
    for k, (value, iv) in enumerate(zip(values, iter_vars)):
        if _int(simplify_index(substitute_expr(value, firsts))) != 0:
            return False
        last = simplify_index(substitute_expr(value, lasts))
        end = simplify_index(iv.dom.extent - IntImm(iv.dom.extent.dtype, 1))
        if last.dtype != end.dtype:
            return False
        if not (_same_value(last, end) or (k in cut and index_at_most(end, last))):
            return False
    return True


def _one_loop_over_domain(iv, value, loops: dict) -> bool:
    """Whether ``value`` is a loop of ``loops`` running over exactly the
    domain of ``iv``, from 0."""
    loop = loops.get(value) if isinstance(value, Var) else None
    return loop is not None and _int(loop.min) == 0 and _int(iv.dom.min) == 0 and _same_value(loop.extent, iv.dom.extent)


def _writes_every_element(site, rpath, realize: BlockRealize, region, padded=()) -> bool:
    """Whether the einsum block writes every element of its output over its
    domain before anything reads it, so that the padded output needs no copy
    in (TVM's result): no predicate, no condition between the scope and the
    block, nor a loop there that binds no iteration variable and may run
    no iteration, each iteration variable bound to a loop
    of its own running over exactly its domain, the body one store at the
    written point, and the output read only there after an init that
    stores it (a reduction's accumulator)."""
    block = realize.block
    loops = {loop.loop_var: loop for _, loop in loops_above(site, rpath)}
    values = list(realize.iter_values)
    if len(set(values)) != len(values):
        return False
    # a predicate must cut each variable to its domain, over a map that tiles it
    predicate = None if is_true(realize.predicate) else realize.predicate
    tiled = predicate is not None and _tiles_domains(values, block.iter_vars, loops, predicate)
    if predicate is not None and not tiled:
        return False
    # a condition, or a loop that may run no iteration, between the scope
    # and the block skips its instances
    for _, node in statements_above(site, rpath):
        if isinstance(node, (IfThenElse, While)):
            return False
        # (a loop the binding uses runs no iteration only where the domain
        # it tiles is empty: the map reaches every point, checked below)
        if isinstance(node, For) and node.loop_var not in values \
                and not (isinstance(node.extent, IntImm) and node.extent.value >= 1) \
                and not any(node.loop_var.name in var_names(v) for v in values):
            return False
    # each variable bound to a loop of its own over exactly its domain, or
    # (what that is a case of) the binding tiling the domains
    if not tiled and not all(_one_loop_over_domain(iv, value, loops) for iv, value in zip(block.iter_vars, values)) \
            and not _tiles_domains(values, block.iter_vars, loops):
        return False
    point = [x.min for x in region.region]
    # the copy back takes every dimension whole (a padded one up to the
    # original domain, ``padded``): each must be indexed by an iteration
    # variable over all of it, not a constant nor a variable of an
    # enclosing block (fixed in each instance of the scope: TVM copies back
    # the rest of the dimension from elements never written)
    doms = {iv.var: iv.dom for iv in block.iter_vars}
    for index, dim in zip(point, region.buffer.shape):
        dom = doms.get(index) if isinstance(index, Var) else None
        if dom is None or (index not in padded and not _same_value(dom.extent, dim)):
            return False
    # a variable the output is not indexed by (a reduction's) over a domain
    # that may be empty (a run-time count of 0): then no instance runs and
    # the block writes nothing, which the output must keep
    for iv in block.iter_vars:
        if iv.var not in point and not can_prove(LT(IntImm(iv.dom.extent.dtype, 0), iv.dom.extent)):
            return False

    def stores_point(stmt) -> bool:
        return (isinstance(stmt, BufferStore) and stmt.buffer == region.buffer and stmt.predicate is None
                and list(stmt.indices) == point)

    if not stores_point(block.body) or any(not (isinstance(x.extent, IntImm) and x.extent.value == 1)
                                           for x in region.region):
        return False
    reads = [r for r in block.reads if r.buffer == region.buffer]
    uses = _loads_of(block.body, region.buffer)
    if reads or uses:
        if block.init is None or not stores_point(block.init) or _loads_of(block.init, region.buffer):
            return False
        if any([x.min for x in r.region] != point for r in reads) or any(list(ld.indices) != point for ld in uses):
            return False
    return True


def _loads_of(stmt, buf) -> list:
    return [n for n in _accesses(stmt) if isinstance(n, BufferLoad) and n.buffer == buf]


#: expression nodes that hold no other node
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


def _accesses(stmt) -> list:
    """The loads and stores under ``stmt`` in pre-order, as ``walk`` meets
    them (a buffer's shape holds none but in odd programs; those are found
    all the same)."""
    return find_nodes(stmt, (BufferLoad, BufferStore))


def _same_value(a, b) -> bool:
    """Two extents that are the same constant, or the same expression."""
    return _int(a) == _int(b) if _int(a) is not None and _int(b) is not None else a == b


def _set_child(node, step, child):
    name, index = step
    value = getattr(node, name)
    if index is None:
        return with_fields(node, **{name: child})
    return with_fields(node, **{name: value.set(index, child)})


def _copy_nest(buf, padded, is_read: bool, written, fresh, taken, blocks, suffix: str = "") -> Stmt:
    """A loop nest and block copying ``buf`` into its padded copy (zero
    beyond the original shape), or, for an output, the padded copy back
    over the extents ``written``; the block is named after the padded
    buffer, with ``suffix``."""
    ndim = len(buf.shape)
    loop_vars, ivs, ranges = [], [], []
    for d in range(ndim):
        ext = padded.shape[d] if is_read else written[d]
        lo = IntImm(ext.dtype, 0)
        dtype = ext.dtype
        loop_vars.append(Var(fresh(f"i{d}", taken), dtype))
        ivs.append(IterVar(Range(lo, ext), Var(fresh(f"v{d}", taken), dtype), IterVarType.DataPar))
        ranges.append((lo, ext))
    idx = [iv.var for iv in ivs]
    point = [Range(v, IntImm(v.dtype, 1)) for v in idx]
    if is_read:
        guards = [LT(v, dim) for v, dim, pd in zip(idx, buf.shape, padded.shape) if not _same_value(dim, pd)]
        value = BufferLoad(buf, idx)
        if guards:
            value = Call(buf.dtype, "tir.if_then_else", [_conjoin(guards), value, const(0, buf.dtype)])
        body = BufferStore(padded, value, idx)
        reads, writes = [BufferRegion(buf, point)], [BufferRegion(padded, point)]
    else:
        body = BufferStore(buf, BufferLoad(padded, idx), idx)
        reads, writes = [BufferRegion(padded, point)], [BufferRegion(buf, point)]
    name = fresh_name(padded.name + suffix, blocks)
    blocks.add(name)
    nest: Stmt = BlockRealize(loop_vars, _TRUE, Block(ivs, reads, writes, name, body))
    for v, (lo, ext) in reversed(list(zip(loop_vars, ranges))):
        nest = For(v, lo, ext, "serial", nest)
    return nest


def pad_einsum(block, padding) -> PadEinsum:
    """The :class:`PadEinsum` record: ``pad_einsum("C", [32, 32, 32])``."""
    return PadEinsum(block, padding)


__all__ += ["PadEinsum", "pad_einsum"]
