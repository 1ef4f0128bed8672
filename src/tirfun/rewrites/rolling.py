"""rolling_buffer: keep only a sliding window of an intermediate buffer.

A producer placed inside a loop of its consumer (with compute_at) computes
a tile of the intermediate at every iteration; when consecutive tiles
overlap (a pooling or convolution cascade), the overlap is computed again
and the whole intermediate stays allocated. ``rolling_buffer`` folds the
buffer along the outermost loop that slides the tile: that dimension
shrinks to the tile's extent and is indexed modulo it (a circular buffer),
and the producer skips the elements an earlier iteration already holds.
"""

from __future__ import annotations

import attrs

from ..analysis.arith import Affine, can_prove, region_covers
from ..analysis.arith.int_set import Interval, cover_range
from ..analysis.arith.iter_map import is_plain_sum
from ..analysis.arith.region import _plain_bound
from ..analysis.arith.terms import fits
from ..analysis.arith.terms import int_value
from ..analysis.arith.int_set import simplify as simplify_index
from ..analysis.mentions import mentions, plain_arithmetic
from ..analysis.traversal import Path, map_children, transform, transform_plain, stmt_nodes
from ..nodes import (
    GE, LE, LT, Add, And, Block, FloorDiv, BlockRealize, BufferLoad, BufferRegion, BufferStore, FloatImm, FloorMod, For, ForKind,
    IntImm, IterVar, IterVarType, Max, Min, Or, PrimExpr, Range, SeqStmt, Stmt, StringImm, Sub, Var,
)
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .checks import describe, loops_above
# ``bound_region`` with bindings, read off sums in normal form where it can
from .compute_location import _bound_substituted
from .dataflow import produced_region, scope_allocations, scope_children, scope_of
from .errors import (
    OutputBlockError, RollingBufferCoverError, RollingBufferDependencyError, RollingBufferInsertionError,
    RollingBufferMatchError,
)
from .refs import as_block_ref
from .serialize import py_value
from .storage import buffer_views, resolve_buffer


@attrs.frozen
class _Roll:
    site: object
    scope: Path
    block_path: Path
    buffer: object
    axis: int
    extent: int
    # per dimension: (loop variable, overlap) where the producer skips
    # what the previous iteration of that loop computed, else None
    skips: tuple


def _stride_of(e, loop_vars: set):
    """``(var, stride)`` when ``e`` is ``var * stride`` or ``var`` for a loop
    variable, ``None`` for a constant; ``False`` for anything else. A
    fractional stride, ``(var * s) // d`` (an upscaling consumer's tiles),
    moves by ``s // d`` or ``s // d + 1`` elements a step; it counts as the
    larger, so the overlap the block skips is one every step has (as TVM
    takes it)."""
    if isinstance(e, IntImm):
        return None
    if type(e) is FloorDiv and isinstance(e.b, IntImm) and e.b.value > 0:
        inner = _stride_of(e.a, loop_vars)
        if not inner:
            return False
        var, s = inner
        return var, -(-s // e.b.value)
    form = Affine.of(e)
    if form is None or form.const != 0 or len(form.terms) != 1:
        return False
    term, coeff = form.terms[0]
    if not isinstance(term, Var) or term not in loop_vars or coeff <= 0:
        return False
    return term, coeff


@register
@attrs.frozen
class RollingBuffer(Rewrite):
    """Fold the buffer a block writes at ``write_buffer_index`` into a
    rolling (circular) buffer along the outermost loop that slides the
    region the block writes (TVM's ``rolling_buffer``): that dimension of the
    buffer shrinks to the extent of the region written in one iteration and
    every access to it is taken modulo that extent; the block gets a
    predicate so that it computes only what no earlier iteration computed
    (``i < 1 or overlap <= offset``, one test per sliding dimension); the
    iteration variable at the rolled position of each block that uses the
    buffer becomes opaque (a reduction variable stays one), and so does
    every one of the block's that a sliding loop drives, so that
    ``parallel`` and ``vectorize`` refuse those loops afterwards. TVM marks
    the variable at that position in every block of the scope, also in
    blocks that neither use the buffer nor run under the sliding loop,
    which only keeps later primitives from them.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``write_buffer_index`` is an int indexing the block's write regions
       (InvalidArgumentError, BufferIndexOutOfRangeError);
    3. the block writes only buffers its scope allocates (OutputBlockError);
    4. its only dependences are read-after-write: no other block of the
       scope writes what it writes, none before it reads what it writes,
       none after it writes what it reads (RollingBufferDependencyError);
    5. the lowest common ancestor of the block and its consumers is a loop
       (RollingBufferInsertionError);
    6. in the region written during one iteration of that loop some
       dimension starts at ``loop_var * stride`` (or ``loop_var``) of a loop
       starting at 0, with a constant extent larger than the stride, and the
       block's index there is that start plus an offset free of the loop
       variable, and that loop runs its iterations in order (serial or
       unrolled, not parallel, vectorized or thread-bound)
       (RollingBufferMatchError);
    7. what the consumers read during one iteration lies within what the
       block writes during it, so the window holds every element read;
       for a block with a predicate, what it surely writes, which must be
       shown (a second rolling_buffer of a buffer already rolled along
       another loop cannot be: the first made the block skip elements that
       the second would no longer keep) (RollingBufferCoverError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((10,))
            for i in range(4):
                for ax in range(4):
                    with T.block("B"):
                        vb = T.axis.spatial(10, i * 2 + ax)
                        B[vb] = A[vb] * T.float32(2)
                for ax in range(2):
                    with T.block("C"):
                        vc = T.axis.spatial(8, i * 2 + ax)
                        C[vc] = B[vc] + B[vc + 2]

        # rewrite
        rolling_buffer("B", 0)

        # after
        @T.prim_func
        def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((4,))
            for i in range(4):
                for ax in range(4):
                    with T.block("B"):
                        vb = T.axis.opaque(10, i * 2 + ax)
                        T.where(i < 1 or 2 <= ax)
                        T.reads(A[vb])
                        T.writes(B[vb % 4])
                        B[vb % 4] = A[vb] * T.float32(2)
                for ax in range(2):
                    with T.block("C"):
                        vc = T.axis.opaque(8, i * 2 + ax)
                        T.reads(B[0:4])
                        T.writes(C[vc])
                        C[vc] = B[vc % 4] + B[(vc + 2) % 4]
    """

    primitive = "rolling_buffer"

    block: object = attrs.field(converter=as_block_ref)
    write_buffer_index: object = 0

    def plan(self, mod, chk: Checks):
        site, path, block, buffer = resolve_buffer(chk, mod, self.block, self.write_buffer_index)
        realize = site.at(path[:-1])
        subject = describe(self.block)
        scope = scope_of(site, path[:-1])
        allocated = scope_allocations(site, scope)
        outputs = [w.buffer.name for w in block.writes if w.buffer not in allocated]
        if outputs:
            chk.stop(OutputBlockError, subject,
                     f"it writes {', '.join(outputs)}, which its scope does not allocate: it is an "
                     "output block", realize)
        # a block that names neither what this one writes nor what it
        # reads can neither clash with it nor consume it
        realizes = scope_children(site, scope, _buffers_of(block))
        order = [r.block for _, r in realizes]
        mine = next(k for k, b in enumerate(order) if b is block)
        written = {w.buffer for w in block.writes}
        read = {r.buffer for r in block.reads}
        consumers = []
        for k, (p, r) in enumerate(realizes):
            other = r.block
            if other is block:
                continue
            o_writes = {w.buffer for w in other.writes}
            o_reads = {x.buffer for x in other.reads}
            clash = None
            if o_writes & written:
                clash = "writes what it writes"
            elif k < mine and o_reads & written:
                clash = "reads, before it, what it writes"
            elif k > mine and o_writes & read:
                clash = "writes, after it, what it reads"
            if clash:
                chk.stop(RollingBufferDependencyError, subject,
                         f"block {other.name_hint} {clash}; only read-after-write dependences are "
                         "allowed", r)
            if k > mine and o_reads & written:
                consumers.append((p, r))
        for _, r in [(path[:-1], realize)] + consumers:
            # a view of the buffer is a window of consecutive elements; the
            # rolled buffer wraps its window around, which no view follows
            # (a consumer made by tensorize reads through one)
            seen = next((m for n in stmt_nodes(r) if isinstance(n, Block) for m in n.match_buffers
                         if m.source.buffer == buffer), None)
            if seen is not None:
                chk.stop(RollingBufferMatchError, subject,
                         f"block {r.block.name_hint!r} views {buffer.name} through the match buffer "
                         f"{seen.buffer.name}, a window of consecutive elements, which the rolled buffer, "
                         "wrapping its window around, would not hold", r)
        lca = _lca([path[:-1]] + [p for p, _ in consumers])
        lca_loop = None
        for p in reversed(_prefixes(lca)):
            node = site.at(p)
            if isinstance(node, For):
                lca_loop = (p, node)
                break
            if isinstance(node, (Block, BlockRealize)):
                break
        if lca_loop is None:
            chk.stop(RollingBufferInsertionError, subject,
                     f"the lowest common ancestor of the block and the consumers of {buffer.name} "
                     "is not a loop; tile the block (compute_at) so that it is", realize)
        loops = loops_above(site, path[:-1])
        names = [lp.loop_var for _, lp in loops]
        inner = {lp.loop_var: Range(lp.min, lp.extent) for p, lp in loops
                 if len(p) > len(lca_loop[0])}
        bindings = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
        region = block.writes[self.write_buffer_index]
        intervals = _bound_substituted(region, inner, bindings)
        ranges = [cover_range(iv, Range(IntImm(d.dtype, 0), d)) for iv, d in zip(intervals, buffer.shape)]
        loop_of = {lp.loop_var: lp for _, lp in loops}
        dom = {lp.loop_var: Range(lp.min, lp.extent) for _, lp in loops}
        window = [Range(r.min, r.extent) for r in ranges]
        if not _is_true(realize.predicate):
            # a predicated block may skip some of its region (an earlier
            # rolling_buffer made it skip what a previous iteration of its
            # loop computed): the window is only what it surely writes,
            # unless all it skips lies outside the buffer (the guard of a
            # split that does not divide)
            made = produced_region(site, path[:-1], realize, region, lca_loop[0])
            if made is None:
                chk.stop(RollingBufferCoverError, subject,
                         f"its predicate {realize.predicate} may skip elements of {buffer.name} in an "
                         f"iteration of loop {lca_loop[1].loop_var.name}, which the rolling window "
                         "would then not hold for its consumers", realize)
            if not _skips_only_outside(made, ranges, buffer.shape, dom):
                window = [Range(iv.lo, simplify_index(iv.hi - iv.lo + 1)) for iv in made]
        # the window slides: its extent, not the region's before a predicate
        # cuts it (a split that does not divide), is what one iteration
        # writes and what the next may reuse
        dims = []
        for d, rng in enumerate(window):
            start = simplify_index(rng.min)
            matched = _stride_of(start, set(names))
            if matched is False:
                chk.stop(RollingBufferMatchError, subject,
                         f"dimension {d} of the region of {buffer.name} written in one iteration starts "
                         f"at {rng.min}, not at loop_var * stride or a constant", realize)
            if matched is None or int_value(loop_of[matched[0]].extent) == 1:
                dims.append(None)  # a constant, or a unit loop's one value: nothing slides
                continue
            var, stride = matched
            if not isinstance(rng.extent, IntImm):
                chk.stop(RollingBufferMatchError, subject,
                         f"dimension {d} of the region of {buffer.name} written in one iteration has "
                         f"extent {rng.extent}, not a constant", realize)
            overlap = rng.extent.value - stride
            dims.append((var, stride, rng.extent.value, overlap, start) if overlap > 0 else None)
        roll = None
        for var in names:
            hits = [d for d, m in enumerate(dims) if m is not None and m[0] == var]
            if hits:
                roll = hits[0]
                break
        if roll is None:
            chk.stop(RollingBufferMatchError, subject,
                     f"no dimension of the region of {buffer.name} written in one iteration slides "
                     "with a loop above the block and overlaps the next iteration's", realize)
        skips = []
        for d, m in enumerate(dims):
            if m is None:
                skips.append(None)
                continue
            var, stride, _extent, overlap, start = m
            if sum(1 for x in dims if x is not None and x[0] == var) > 1:
                chk.stop(RollingBufferMatchError, subject,
                         f"loop {var.name} slides several dimensions of {buffer.name}", realize)
            lp = loop_of[var]
            if lp.kind not in (ForKind.SERIAL, ForKind.UNROLLED):
                chk.stop(RollingBufferMatchError, subject,
                         f"loop {var.name}, which slides dimension {d}, is {lp.kind.value}: its iterations "
                         "do not run one after another, so none can reuse what the previous one computed", lp)
            if not (isinstance(lp.min, IntImm) and lp.min.value == 0):
                chk.stop(RollingBufferMatchError, subject,
                         f"loop {var.name}, which slides dimension {d}, does not start at 0", lp)
            if not (isinstance(region.region[d].extent, IntImm) and region.region[d].extent.value == 1):
                # the predicate skips whole block instances: one that writes
                # several elements along the sliding dimension (a block
                # holding others, as loop_partition makes) would skip new
                # elements with the old
                chk.stop(RollingBufferMatchError, subject,
                         f"the block writes {region.script()}, {region.region[d].extent.script()} elements of "
                         f"dimension {d} per instance; the rolled block must write one element of the sliding "
                         "dimension per instance, so that skipping an instance skips only what an earlier "
                         "iteration computed", realize)
            index = simplify_index(_substitute(region.region[d].min, bindings))
            form, first = Affine.of(index), Affine.of(start)
            rest = None if form is None or first is None else form.plus(first, -1)
            if rest is None or any(_mentions(t, var) for t, c in rest.terms if c):
                chk.stop(RollingBufferMatchError, subject,
                         f"the block's index {index} of dimension {d} is not {start}, where the region "
                         f"starts, plus an offset free of {var.name}", realize)
            offset = simplify_index(rest.to_expr())
            skips.append((var, overlap, offset))
        for p, r in consumers:
            c_loops = loops_above(site, p)
            c_inner = {lp.loop_var: Range(lp.min, lp.extent) for q, lp in c_loops if len(q) > len(lca_loop[0])}
            c_bind = {iv.var: v for iv, v in zip(r.block.iter_vars, r.iter_values)}
            for reg in r.block.reads:
                if reg.buffer != buffer:
                    continue
                got = _bound_substituted(reg, c_inner, c_bind)
                if not all(iv.bounded for iv in got) or not (
                        _plainly_covers(window, got, dom) or region_covers([window], got, dom)):
                    chk.stop(RollingBufferCoverError, subject,
                             f"block {r.block.name_hint} reads {buffer.name} outside the region the block "
                             "writes in the same iteration, which the rolling window would not hold", r)
        return _Roll(site, scope, path, buffer, roll, dims[roll][2], tuple(skips))

    def build(self, plan: _Roll) -> Outcome:
        site, old, axis, extent = plan.site, plan.buffer, plan.axis, plan.extent
        shape = list(old.shape)
        shape[axis] = IntImm(shape[axis].dtype, extent)
        new = with_fields(old, shape=shape)
        target = site.at(plan.block_path)
        ext = IntImm(old.shape[axis].dtype, extent)

        def rolled(indices):
            out = list(indices)
            i = out[axis]
            out[axis] = FloorMod(i, IntImm(i.dtype, extent) if i.dtype != ext.dtype else ext)
            return out

        def region(reg: BufferRegion) -> BufferRegion:
            rngs = list(reg.region)
            r = rngs[axis]
            if isinstance(r.extent, IntImm) and r.extent.value == 1:
                rngs[axis] = Range(FloorMod(r.min, IntImm(r.min.dtype, extent)), r.extent)
            else:
                rngs[axis] = Range(IntImm(r.min.dtype, 0), IntImm(r.min.dtype, extent))
            return BufferRegion(new, rngs)

        scope_block = site.at(plan.scope)

        def pre(n):
            kind = type(n)
            if kind is Var or kind is IntImm:
                return None
            if isinstance(n, BufferStore) and n.buffer == old:
                return BufferStore(new, visit(n.value), rolled([visit(i) for i in n.indices]),
                                   None if n.predicate is None else visit(n.predicate))
            if isinstance(n, BufferLoad) and n.buffer == old:
                return BufferLoad(new, rolled([visit(i) for i in n.indices]),
                                  None if n.predicate is None else visit(n.predicate))
            if isinstance(n, BufferRegion) and n.buffer == old:
                return region(n)
            return None

        def visit_expr(n):
            # an expression holds no block, which alone ``post`` changes,
            # and one without a use of the buffer comes back as it is: one
            # walk finds out as much as asking for its names first would;
            # integer arithmetic alone names no buffer and comes back as it is
            if plain_arithmetic(n):
                return n
            return transform_plain(n, None, pre)

        def visit(n):
            if isinstance(n, PrimExpr):
                return visit_expr(n)
            return transform(n, post, pre=pre)

        def post(n):
            # only blocks that use the buffer are marked: ``rebuild`` does
            # not enter the others (TVM marks every block of the scope,
            # including those the rolled loop does not drive)
            if isinstance(n, Block) and n.name_hint != scope_block.name_hint:
                ivs = n.iter_vars
                if axis < len(ivs) and ivs[axis].iter_type is IterVarType.DataPar:
                    n = with_fields(n, iter_vars=ivs.set(axis, IterVar(ivs[axis].dom, ivs[axis].var,
                                                                        IterVarType.Opaque)))
            if isinstance(n, BlockRealize) and n.block.name_hint == target.name_hint:
                # every iteration variable the sliding loops drive becomes
                # opaque too (TVM marks only the one at the rolled
                # position): parallel and vectorize then refuse those
                # loops, whose iterations must run in order
                ivs = list(n.block.iter_vars)
                for k, value in enumerate(n.iter_values):
                    if ivs[k].iter_type is IterVarType.DataPar and any(
                            skip is not None and _mentions(value, skip[0]) for skip in plan.skips):
                        ivs[k] = IterVar(ivs[k].dom, ivs[k].var, IterVarType.Opaque)
                n = with_fields(n, block=with_fields(n.block, iter_vars=ivs))
                cond = n.predicate
                for skip in plan.skips:
                    if skip is None:
                        continue
                    var, overlap, offset = skip
                    test = Or(LT(var, IntImm(var.dtype, 1)), LE(IntImm(offset.dtype, overlap), offset))
                    cond = test if _is_true(cond) else And(cond, test)
                n = with_fields(n, predicate=cond)
            if isinstance(n, Block) and n.name_hint == scope_block.name_hint:
                n = with_fields(n, alloc_buffers=[new if b == old else b for b in n.alloc_buffers])
            return n

        def child(c):
            # a child of a statement that names the buffer: a leaf, or a
            # part that does not name it, is left as it is; an expression is
            # walked once, which finds out as much
            if type(c) in _LEAVES:
                return c
            if isinstance(c, Stmt):
                return rebuild(c)
            if isinstance(c, PrimExpr):
                return visit_expr(c)
            if _plainly_free_of(c, old) or \
                    not (isinstance(c, BufferRegion) and c.buffer == old or mentions(c, old)):
                return c
            return visit(c)

        def rebuild(n, deep=None):
            # ``transform(n, post, pre)`` for a statement, entering only
            # what names the rolled buffer: a statement that does not is
            # kept as it is, blocks and all (a sequence is not asked what
            # it names, which would gather the names of every statement of
            # a long one: its items are asked one by one)
            replaced = pre(n)
            if replaced is not None:
                return replaced
            if type(n) is SeqStmt and not deep:
                out = n
                for i in using.get(id(n), range(len(n.seq))):
                    item = n.seq[i]
                    new = rebuild(item)
                    if new is not item:
                        out = out.with_item(i, new)
                return out
            if not deep and not mentions(n, old):
                return n
            return post(map_children(n, child))

        # the statements of each sequence that use the buffer, from the
        # index where it can tell (the others are kept as they are)
        using: dict = {}
        buffer_views(scope_block, old, using, site.index, plan.scope)
        out = rebuild(scope_block, deep=True)  # it allocates the buffer
        # the walks refer to one another: cycles, left for the collector
        # unless cut here
        pre = visit = visit_expr = post = child = rebuild = None  # noqa: F841
        return Outcome(commit(site, plan.scope, out, index=site.index))

    def python_args(self):
        return [py_value(self.block), f"write_buffer_index={py_value(self.write_buffer_index)}"]


def rolling_buffer(block, write_buffer_index) -> RollingBuffer:
    """The :class:`RollingBuffer` record: ``rolling_buffer("B", 0)``."""
    return RollingBuffer(block, write_buffer_index)

#: nodes that hold no other node
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


def _plainly_free_of(c, old) -> bool:
    """Whether ``c``, a block's iteration variable or a region of another
    buffer than ``old``, holds only integer arithmetic besides that buffer,
    which then does not use ``old``: the walk would give ``c`` back as it
    is (it holds no block, and nothing in it loads, stores or names
    ``old``'s region). Told without gathering its names (``mentions``),
    which, for a node that is not a statement, are gathered afresh at every
    question."""
    if type(c) is IterVar:
        return plain_arithmetic(c.dom.min) and plain_arithmetic(c.dom.extent)
    if type(c) is BufferRegion and c.buffer is not old and not mentions(c.buffer, old):
        return all(plain_arithmetic(r.min) and plain_arithmetic(r.extent) for r in c.region)
    return False


def _plainly_covers(window: list, got: list, dom: dict) -> bool:
    """``region_covers([window], got, dom)`` where it is True for a reason
    read off the literals: in each dimension the read interval ``got`` is
    the window's (a Range ``(m, e)``) own ends, either as ``region_covers``
    writes them (``m`` and ``m + e - 1``, equal expressions need no proof)
    or with the upper end in normal form (``i + 2`` for ``i + 3 - 1``),
    where ``m`` is a sum in normal form of variables whose domains in
    ``dom`` are literals and no sum it takes, nor the difference of two
    such ends, leaves the dtype: the prover then finds the two ends equal.
    False means "ask region_covers", which also covers a read inside the
    window that does not reach its ends."""
    for rng, iv in zip(window, got):
        ends = Interval.from_range(rng)
        if iv.lo == ends.lo and iv.hi == ends.hi:
            continue
        m, e = rng.min, rng.extent
        if type(e) is not IntImm or iv.lo != m or iv.hi.dtype != m.dtype or not is_plain_sum(m):
            return False
        plain = _plain_bound(rng, {})
        if plain is None or iv.hi != plain.hi or not _ends_fit(m, e.value, dom):
            return False
    return True


def _ends_fit(m, extent: int, dom: dict) -> bool:
    """Whether ``m``, ``m + extent`` and ``m + extent - 1`` (``m`` a sum in
    normal form) stay inside their dtype for every value of the variables
    of ``m`` within their literal domains in ``dom``, and so does the
    difference of any two values of ``m + extent - 1``."""
    dtype = m.dtype
    lo = hi = 0
    node = m
    if (type(node) is Add or type(node) is Sub) and type(node.b) is IntImm:
        c = node.b.value if type(node) is Add else -node.b.value
        lo = hi = c
        node = node.a
    while node is not None:
        if type(node) is Add:
            term, node = node.b, node.a
        else:
            term, node = node, None
        var, k = (term, 1) if type(term) is Var else (term.a, term.b.value)
        rng = dom.get(var)
        if type(rng) is not Range or type(rng.min) is not IntImm or type(rng.extent) is not IntImm:
            return False
        lo += k * rng.min.value
        hi += k * (rng.min.value + rng.extent.value - 1)
        if not (fits(dtype, lo) and fits(dtype, hi)):
            return False
    return all(fits(dtype, v) for v in (lo + extent, hi + extent, lo + extent - 1, hi + extent - 1,
                                        hi - lo, lo - hi))


def _buffers_of(block: Block) -> set:
    """The buffers a block declares it reads or writes."""
    return {r.buffer for r in block.reads} | {w.buffer for w in block.writes}


def _skips_only_outside(made: list, ranges: list, shape, dom: dict) -> bool:
    """Whether what a predicated block surely writes (``made``, one
    interval per dimension) is all of what it may write (``ranges``) that
    lies inside the buffer: its predicate then skips only elements that
    do not exist."""
    for iv, rng, dim in zip(made, ranges, shape):
        zero, one = IntImm(dim.dtype, 0), IntImm(dim.dtype, 1)
        lo = Max(rng.min, zero)
        hi = Min(rng.min + rng.extent - one, dim - one)
        if not (can_prove(LE(iv.lo, lo), dom) and can_prove(GE(iv.hi, hi), dom)):
            return False
    return True


def _is_true(e) -> bool:
    return isinstance(e, IntImm) and e.dtype.is_bool and e.value == 1


def _prefixes(path: Path) -> list[Path]:
    return [path[:k] for k in range(len(path) + 1)]


def _lca(paths: list[Path]) -> Path:
    common = paths[0]
    for p in paths[1:]:
        k = 0
        while k < min(len(common), len(p)) and common[k] == p[k]:
            k += 1
        common = common[:k]
    return common


def _substitute(e, mapping):
    from ..analysis.arith.int_set import substitute

    return substitute(e, mapping)


def _mentions(e, var: Var) -> bool:
    from ..analysis.traversal import walk

    return any(n == var for n in walk(e) if isinstance(n, Var))


__all__ = ["RollingBuffer", "rolling_buffer"]
