"""The buffer regions a block reads and writes, inferred from its body.

TVMScript lets a block omit ``T.reads``/``T.writes``; the regions are then
inferred the way TVM's block access-region detector does it:

* every ``BufferLoad`` is a read and every ``BufferStore`` a write; the
  statements of ``init`` come before the body;
* loop variables of loops inside the block are relaxed over their ranges
  (``A[vi * 4 + j]`` for ``j`` in ``range(4)`` covers ``A[vi * 4:vi * 4 + 4]``),
  narrowed by simple conditions of enclosing ``if`` statements on them;
  block iteration variables and everything defined outside stay symbolic;
* a nested block contributes its own declared regions, with its iteration
  variables replaced by their bound values and then relaxed;
* accesses through a ``T.match_buffer`` view count against the viewed
  buffer, at the matching offset;
* buffers the block allocates (``alloc_buffers``, ``T.decl_buffer`` inside
  it) are not reported, nor are buffers not visible from outside;
* accesses are merged per buffer (the union of their intervals), buffers in
  order of first access; an access that is one point gives extent 1,
  otherwise the interval's (min, extent), or the whole dimension when the
  interval is unbounded;
* when the block has an ``init`` (a reduction), the buffers it writes are
  left out of its reads;
* a buffer used through its ``data`` pointer is an opaque access of the
  whole buffer, which :func:`access_regions` reports as both read and
  written (and leaves out of the other regions of that buffer), as TVM's
  ``GetBlockReadWriteRegion`` does; ``T.tvm_access_ptr`` (``A.access_ptr``)
  with a constant mask of 1 reads the whole buffer, 2 writes it, 3 is opaque.

:func:`fill_regions` applies the inference to whole functions, the step that
both the TVMScript parser and ``te.create_prim_func`` end with. The symbolic
interval arithmetic lives in :mod:`tirfun.analysis.arith.int_set`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Allocate, And, AssertStmt, AttrStmt, Block, BlockRealize, Buffer,
    BufferLoad, BufferRegion, BufferStore, Call, DeclBuffer, Evaluate, For, IfThenElse, IntImm,
    LetStmt, MatchBufferRegion, Node, Not, PrimExpr, PrimFunc, Range, SeqStmt, Stmt, Var, While,
    AllocateConst, BufferRealize,
)
from .arith import int_set as ivs
from .arith import linear as lin
from .arith.int_set import Interval
from .mentions import pointer_buffers
from .traversal import iter_children, map_children, stmt_nodes, walk

__all__ = [
    "BlockAccess", "detect_access", "access_regions", "fill_regions",
]


@attrs.frozen
class BlockAccess:
    """What a block's body touches: read, write and opaque regions (opaque:
    buffers used through their data pointer), each in order of first use."""

    reads: tuple[BufferRegion, ...]
    writes: tuple[BufferRegion, ...]
    opaques: tuple[BufferRegion, ...]


def detect_access(block: Block, visible: Iterable[Buffer] | None = None, *,
                  declared: Iterable[Buffer] | None = None) -> BlockAccess:
    """All regions the body of ``block`` accesses, before the reduction rule.

    ``visible`` is the set of buffers defined outside the block (parameters'
    buffers, enclosing allocations); accesses to other buffers are not
    reported. By default every buffer not allocated inside the block counts;
    with ``declared`` (the buffers a function declares somewhere), only
    those of them not allocated inside the block: a ``T.Buffer`` made over
    a pointer without a declaration is left out, as the parser leaves it.
    """
    return _Detector(block, visible, declared).run()


def access_regions(block: Block, visible: Iterable[Buffer] | None = None, *,
                   declared: Iterable[Buffer] | None = None
                   ) -> tuple[list[BufferRegion], list[BufferRegion]]:
    """``(reads, writes)`` that TVMScript infers for ``block`` when its
    ``T.reads``/``T.writes`` are omitted (see the module docstring;
    ``visible`` and ``declared`` as for :func:`detect_access`).

    A buffer used through its data pointer is read and written as a whole
    (after the other regions), as in TVM.
    """
    access = detect_access(block, visible, declared=declared)
    opaque = {r.buffer for r in access.opaques}
    writes = [r for r in access.writes if r.buffer not in opaque]
    reads = [r for r in access.reads if r.buffer not in opaque]
    if block.init is not None:
        written = {r.buffer for r in writes}
        reads = [r for r in reads if r.buffer not in written]
    return reads + list(access.opaques), writes + list(access.opaques)


# --------------------------------------------------------------------------


class _Detector:
    """One pass over a block body; its state lives for one call."""

    def __init__(self, block: Block, visible: Iterable[Buffer] | None, declared: Iterable[Buffer] | None = None):
        self.block = block
        if visible is None:
            hidden = _allocated_inside(block)
            if declared is None:
                self.is_visible = lambda b: b not in hidden
                # only these can be used through a pointer: a pointer
                # alone does not say whose it is
                self.candidates = lambda: pointer_buffers(block)
            else:
                declared = list(declared)
                known = frozenset(declared)
                self.is_visible = lambda b: b not in hidden and b in known
                # a declared buffer's pointer may be all the body names of it
                self.candidates = lambda: [b for b in declared if b.data is not None]
        else:
            allowed = set(visible)
            for b in block.alloc_buffers:
                allowed.discard(b)
            self.is_visible = allowed.__contains__
            self.candidates = lambda: list(allowed)
        self.matched: dict[Buffer, MatchBufferRegion] = {}
        for m in block.match_buffers:
            if self.is_visible(m.source.buffer):
                self.matched[m.buffer] = m
        # found when a handle variable is first met (see pointer_owner)
        self.data_vars: dict[Var, Buffer] | None = None
        self.dom: dict[Var, Interval] = {}
        self.lets: dict[Var, PrimExpr] = {}
        self.regions: dict[str, dict[Buffer, list[Interval]]] = {"read": {}, "write": {}, "opaque": {}}

    def visible(self, buffer: Buffer) -> bool:
        return buffer in self.matched or self.is_visible(buffer)

    def pointer_owner(self, var: Var) -> Buffer | None:
        """The visible buffer whose data pointer ``var`` is, if any: a bare
        use of it is an opaque access. A data pointer is a handle, so only
        a handle variable makes the detector look for the buffers used
        through a pointer, which takes a walk of the whole body: most
        bodies hold none, and never pay for it."""
        if not var.dtype.is_handle:
            return None
        if self.data_vars is None:
            self.data_vars = {}
            for b in self.candidates():
                if b.data is not None and self.is_visible(b) and b not in self.matched:
                    self.data_vars.setdefault(b.data, b)
            # a view's pointer reaches the region it views (update converts
            # it), as TVM's detector reads a matched buffer's pointer
            for b in self.matched:
                if b.data is not None:
                    self.data_vars.setdefault(b.data, b)
        return self.data_vars.get(var)

    def run(self) -> BlockAccess:
        if self.block.init is not None:
            self.stmt(self.block.init)
        self.stmt(self.block.body)
        return BlockAccess(self.collect("read"), self.collect("write"), self.collect("opaque"))

    # statements ------------------------------------------------------------
    def stmt(self, s: Stmt) -> None:
        if isinstance(s, BufferStore):
            self.update("write", s.buffer, [self.relax(i) for i in s.indices])
            self.expr(s.value)
            for i in s.indices:
                self.expr(i)
            if s.predicate is not None:  # a mask may read buffers too
                self.expr(s.predicate)
        elif isinstance(s, SeqStmt):
            for item in s.seq:
                self.stmt(item)
        elif isinstance(s, For):
            self.expr(s.min)
            self.expr(s.extent)
            saved = self.dom.get(s.loop_var)
            self.dom[s.loop_var] = Interval.from_range(Range(s.min, s.extent))
            self.stmt(s.body)
            if saved is None:
                self.dom.pop(s.loop_var, None)
            else:
                self.dom[s.loop_var] = saved
        elif isinstance(s, IfThenElse):
            self.expr(s.condition)
            self.narrowed(s.condition, lambda: self.stmt(s.then_case))
            if s.else_case is not None:
                self.narrowed(_negate(s.condition), lambda: self.stmt(s.else_case))
        elif isinstance(s, LetStmt):
            self.expr(s.value)
            saved = self.lets.get(s.var)
            self.lets[s.var] = ivs.substitute(s.value, self.lets)
            self.stmt(s.body)
            if saved is None:
                self.lets.pop(s.var, None)
            else:
                self.lets[s.var] = saved
        elif isinstance(s, BlockRealize):
            self.nested(s)
        elif isinstance(s, Evaluate):
            self.expr(s.value)
        elif isinstance(s, AttrStmt):
            self.expr(s.value)
            self.stmt(s.body)
        elif isinstance(s, AssertStmt):
            self.expr(s.condition)
            self.stmt(s.body)
        elif isinstance(s, While):
            self.expr(s.condition)
            self.stmt(s.body)
        elif isinstance(s, AllocateConst):
            self.stmt(s.body)
        elif isinstance(s, BufferRealize):
            self.stmt(s.body)
        elif isinstance(s, Allocate):
            for e in s.extents:
                self.expr(e)
            self.stmt(s.body)
        elif isinstance(s, DeclBuffer):
            self.stmt(s.body)
        elif isinstance(s, Block):  # a block without realize: not entered, like TVM
            pass

    def narrowed(self, condition: PrimExpr, visit) -> None:
        """Run ``visit`` with relaxed variables narrowed by ``condition``."""
        bounds = _condition_bounds(condition, self.dom)
        saved = {v: self.dom[v] for v in bounds}
        for v, iv in bounds.items():
            self.dom[v] = ivs.intersect(self.dom[v], iv)
        try:
            visit()
        finally:
            self.dom.update(saved)

    def nested(self, realize: BlockRealize) -> None:
        inner = realize.block
        values = dict(zip((iv.var for iv in inner.iter_vars), realize.iter_values))
        own = set(inner.alloc_buffers)
        for kind, regions in (("read", inner.reads), ("write", inner.writes)):
            for region in regions:
                if region.buffer in own:
                    continue
                sets = []
                for rng in region.region:
                    lo = ivs.substitute(rng.min, values)
                    extent = ivs.substitute(rng.extent, values)
                    sets.append(self.relax_interval(Interval.from_range(Range(lo, extent))))
                self.update(kind, region.buffer, sets)

    # expressions -----------------------------------------------------------
    def expr(self, e: PrimExpr) -> None:
        # an explicit stack: expressions may be long chains
        stack: list[Node] = [e]
        while stack:
            n = stack.pop()
            if isinstance(n, BufferLoad):
                self.update("read", n.buffer, [self.relax(i) for i in n.indices])
                stack.extend(reversed(list(n.indices)))
                if n.predicate is not None:
                    stack.append(n.predicate)
            elif isinstance(n, Var):
                buffer = self.pointer_owner(n)
                if buffer is not None:
                    full = [self.relax_interval(Interval.from_range(r))
                            for r in BufferRegion.full(buffer).region]
                    self.update("opaque", buffer, full)
            elif isinstance(n, Call) and n.op == "tir.tvm_access_ptr" and len(n.args) == 5 \
                    and isinstance(n.args[1], Var) and isinstance(n.args[4], IntImm):
                # as TVM: the whole buffer, read (mask 1), written (2) or both
                buffer = self.pointer_owner(n.args[1])
                mask = n.args[4].value
                if buffer is not None and mask & 3:
                    kind = "opaque" if mask & 3 == 3 else "read" if mask & 1 else "write"
                    full = [self.relax_interval(Interval.from_range(r))
                            for r in BufferRegion.full(buffer).region]
                    self.update(kind, buffer, full)
                elif buffer is None:
                    stack.extend(reversed(list(n.args)))
            elif isinstance(n, Call) and n.op == "tir.if_then_else" and len(n.args) == 3:
                cond, then_value, else_value = n.args
                self.expr(cond)
                self.narrowed(cond, lambda v=then_value: self.expr(v))
                self.narrowed(_negate(cond), lambda v=else_value: self.expr(v))
            elif isinstance(n, PrimExpr):
                stack.extend(reversed([c for c in iter_children(n) if isinstance(c, PrimExpr)]))

    def relax(self, index: PrimExpr) -> Interval:
        if self.lets:
            index = ivs.substitute(index, self.lets)
        return ivs.eval_interval(index, self.dom)

    def relax_interval(self, iv: Interval) -> Interval:
        lo = None if iv.lo is None else ivs.eval_interval(iv.lo, self.dom).lo
        hi = None if iv.hi is None else ivs.eval_interval(iv.hi, self.dom).hi
        return Interval(lo, hi)

    # bookkeeping -----------------------------------------------------------
    def update(self, kind: str, buffer: Buffer, sets: list[Interval]) -> None:
        if not self.visible(buffer):
            return
        match = self.matched.get(buffer)
        if match is not None:
            buffer, sets = match.source.buffer, self.convert_matched(match, sets)
        table = self.regions[kind]
        previous = table.get(buffer)
        if previous is None:
            table[buffer] = sets
        else:
            table[buffer] = [ivs.union(a, b) for a, b in zip(previous, sets)]

    def convert_matched(self, match: MatchBufferRegion, sets: list[Interval]) -> list[Interval]:
        """Intervals of a view's indices as intervals of the viewed buffer."""
        target, source = match.buffer, match.source
        ranges = [ivs.cover_range(iv, Range(IntImm(dim.dtype, 0), dim))
                  for iv, dim in zip(sets, target.shape)]
        offset = len(source.region) - len(ranges)
        out = []
        for i, src in enumerate(source.region):
            if i < offset:
                rng = Range(src.min, IntImm(src.min.dtype, 1))
            else:
                tgt = ranges[i - offset]
                rng = Range(lin.fold_add(src.min, tgt.min), tgt.extent)
            if lin.prove_equal(rng.extent, IntImm(rng.extent.dtype, 1)):
                out.append(ivs.eval_interval(rng.min, self.dom))
            else:
                hi = ivs.simplify(lin.fold_sub(lin.fold_add(rng.min, rng.extent),
                                               IntImm(rng.min.dtype, 1)))
                out.append(self.relax_interval(Interval(rng.min, hi)))
        return out

    def collect(self, kind: str) -> tuple[BufferRegion, ...]:
        out = []
        for buffer, sets in self.regions[kind].items():
            region = []
            for iv, dim in zip(sets, buffer.shape):
                region.append(ivs.point_or_cover(iv, Range(IntImm(dim.dtype, 0), dim)))
            out.append(BufferRegion(buffer, region))
        return tuple(out)


def _allocated_inside(block: Block) -> set[Buffer]:
    """Buffers that exist only inside ``block``: its own allocations, those
    of nested blocks, and buffers declared in its body."""
    hidden = set(block.alloc_buffers)
    roots = [block.body] + ([block.init] if block.init is not None else [])
    for root in roots:
        for s in stmt_nodes(root):
            if isinstance(s, Block):
                hidden.update(s.alloc_buffers)
                hidden.update(m.buffer for m in s.match_buffers)
            elif isinstance(s, DeclBuffer):
                hidden.add(s.buffer)
    return hidden


_FLIPPED = {LT: GE, LE: GT, GT: LE, GE: LT, EQ: NE, NE: EQ}


def _negate(cond: PrimExpr) -> PrimExpr:
    cls = _FLIPPED.get(type(cond))
    if cls is not None:
        return cls(cond.a, cond.b)
    if isinstance(cond, Not):
        return cond.a
    return Not(cond)


def _condition_bounds(cond: PrimExpr, dom: Mapping[Var, Interval]) -> dict[Var, Interval]:
    """Bounds a condition puts on relaxed variables.

    Each conjunct of the form ``v + rest OP e`` (or mirrored), where ``v`` is
    the one relaxed variable, with coefficient 1 or -1, bounds ``v``; other
    conditions give no bound. (TVM solves general linear systems here; these
    are the cases that guard padded and split loops.)
    """
    out: dict[Var, Interval] = {}
    stack = [cond]
    while stack:
        c = stack.pop()
        if isinstance(c, And):
            stack.extend([c.a, c.b])
        elif isinstance(c, Call) and c.op == "tir.likely" and c.args:
            stack.append(c.args[0])
        elif isinstance(c, (LT, LE, GT, GE, EQ)):
            found = _solve(c, dom)
            if found is not None:
                var, iv = found
                out[var] = ivs.intersect(out[var], iv) if var in out else iv
    return out


def _solve(c, dom: Mapping[Var, Interval]):
    if c.a.dtype != c.b.dtype:
        return None
    diff = lin.affine_form(lin.fold_sub(c.a, c.b))
    if diff is None:
        return None
    relaxed = [(t, k) for t, k in diff.terms if isinstance(t, Var) and t in dom]
    if len(relaxed) != 1 or abs(relaxed[0][1]) != 1:
        return None
    var, k = relaxed[0]
    rest_terms = tuple((t, kk) for t, kk in diff.terms if not (isinstance(t, Var) and t == var))
    for t, _ in rest_terms:
        if any(isinstance(n, Var) and n in dom for n in walk(t)):
            return None
    # c.a - c.b == k * var + rest, so the condition reads "k * var + rest OP 0"
    rest = lin.Affine(diff.dtype, rest_terms, diff.const)
    op = type(c)
    if k == -1:  # -var + rest OP 0  <=>  var OP' rest
        op = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ}[op]
        value = ivs.simplify(lin.affine_expr(rest))
    else:
        value = ivs.simplify(lin.affine_expr(rest.scale(-1)))
    one = IntImm(var.dtype, 1)
    if op is LT:
        return var, Interval(None, ivs.simplify(lin.fold_sub(value, one)))
    if op is LE:
        return var, Interval(None, value)
    if op is GT:
        return var, Interval(ivs.simplify(lin.fold_add(value, one)), None)
    if op is GE:
        return var, Interval(value, None)
    return var, Interval.point(value)


# --------------------------------------------------------------------------
# whole functions


def fill_regions(func: PrimFunc, pending: Mapping[str, tuple[bool, bool]] | None = None) -> PrimFunc:
    """``func`` with the reads/writes of its blocks inferred.

    ``pending`` maps a block name to ``(infer_reads, infer_writes)``; blocks
    not named keep their regions. By default every block except the root
    (the block of a body that is a single ``BlockRealize``) is inferred.
    Blocks are completed innermost first, so an outer block sees the
    completed regions of the blocks it contains. A block sees as visible the
    parameters' buffers, the allocations and views of enclosing blocks, and
    buffers of enclosing ``T.decl_buffer`` statements.
    """
    visible = frozenset(func.buffer_map.values())
    root = func.body.block.name_hint if isinstance(func.body, BlockRealize) else None
    body = _Filler(pending, root).stmt(func.body, visible)
    return func if body is func.body else attrs.evolve(func, body=body)


class _Filler:
    def __init__(self, pending, root_name):
        self.pending = pending
        self.root_name = root_name

    def stmt(self, s: Stmt, visible: frozenset) -> Stmt:
        if isinstance(s, Block):
            return self.block(s, visible)
        if isinstance(s, DeclBuffer):
            body = self.stmt(s.body, visible | {s.buffer})
            return s if body is s.body else attrs.evolve(s, body=body)
        if isinstance(s, (For, SeqStmt, IfThenElse, LetStmt, AttrStmt, AssertStmt, Allocate,
                          BlockRealize, While, AllocateConst, BufferRealize)):
            return map_children(s, lambda c: self.stmt(c, visible) if isinstance(c, Stmt) else c)
        return s

    def block(self, block: Block, visible: frozenset) -> Block:
        inner = visible | set(block.alloc_buffers) | {m.buffer for m in block.match_buffers}
        init = None if block.init is None else self.stmt(block.init, inner)
        body = self.stmt(block.body, inner)
        if init is not block.init or body is not block.body:
            block = attrs.evolve(block, init=init, body=body)
        if block.name_hint == self.root_name:
            return block
        mask = (True, True) if self.pending is None else self.pending.get(block.name_hint, (False, False))
        if not (mask[0] or mask[1]):
            return block
        reads, writes = access_regions(block, visible)
        return attrs.evolve(block, reads=reads if mask[0] else block.reads,
                            writes=writes if mask[1] else block.writes)
