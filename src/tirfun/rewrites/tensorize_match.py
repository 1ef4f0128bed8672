"""Does a block compute what a tensor intrinsic's description computes?

``tensorize`` compares the block it replaces with the intrinsic's
``desc``, as TVM's ``TensorizeComparator`` does: statement for statement
and expression for expression, where

* a variable the block binds (a loop, an iteration or a let variable) is
  matched to the one the description binds in the same place, and every
  later use must then agree;
* a buffer is matched to the description's buffer in the same place when
  both hold the same dtype in the same storage scope; its shape may differ
  (the description sees a window of it);
* the regions the outer block reads and writes fix where each window
  starts: leading dimensions of extent 1 the description does not have,
  then one start per dimension it has, whose extents must agree. Every
  access of the buffer inside is then compared after subtracting the
  window's start, so ``C[vi_o * 16 + vi_i, ...]`` matches ``C[vii, ...]``.

Beyond TVM, expressions must agree in dtype (TVM compares only whether
both are floats, or both ints, so a float16 accumulation would match a
float32 description), the leading indices of an access must be the
window's start (TVM checks them in the regions only), and blocks must
agree in their init.
"""

from __future__ import annotations

import attrs

from ..analysis.arith import prove_equal
from ..analysis.arith.iter_map import simplify_index
from ..analysis.traversal import walk
from ..nodes import (
    Add, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Cast, FloatImm, For, IntImm, IterVar,
    Let, LetStmt, Node, PrimExpr, SeqStmt, Var,
)
from .exprs import cast as _cast, substitute_expr


class Mismatch(Exception):
    """Raised inside the comparison: ``reason`` names the first difference,
    ``node`` is the block's statement or expression where it lies."""

    def __init__(self, reason: str, node=None):
        super().__init__(reason)
        self.reason = reason
        self.node = node


@attrs.frozen
class Match:
    """What a successful comparison found: the block's buffer for each of
    the description's (by identity of the description's buffer object, in
    ``desc_buffers`` order) and where each window starts."""

    buffers: dict  # description Buffer -> the block's Buffer
    starts: dict  # the block's Buffer -> tuple of start expressions, one per dimension


def _int_like(a: PrimExpr, b: PrimExpr) -> bool:
    """Both integer typed (index arithmetic of int32 and int64 may meet)."""
    return a.dtype.is_int and b.dtype.is_int and a.dtype.lanes == b.dtype.lanes


def _plainly_offset(mapped: PrimExpr, start: PrimExpr, rhs: PrimExpr) -> bool:
    """Whether ``mapped`` is written as ``start + rhs`` (or ``start`` with
    ``rhs`` zero, or ``rhs`` with ``start`` zero), all of one dtype: then
    ``mapped - start == rhs`` without simplifying either side. Blockize
    writes every index of a window that way (``vi_o * 16 + vi_i``, the
    window starting at ``vi_o * 16``)."""
    dtype = mapped.dtype
    if start.dtype != dtype or rhs.dtype != dtype:
        return False
    if type(rhs) is IntImm and rhs.value == 0:
        return mapped == start
    if type(start) is IntImm and start.value == 0 and mapped == rhs:
        return True
    return type(mapped) is Add and mapped.b == rhs and mapped.a == start


class _Comparator:
    """One comparison of the block (left) with the description (right)."""

    def __init__(self):
        self.vars: dict[Var, Var] = {}  # the block's variable -> the description's
        self._mapped: dict | None = None  # self.vars as a substitution (see _mapping)
        # id of a block's index -> (the index, it under self._mapped): a
        # window's start meets the same index in its region and in each
        # access; emptied with self._mapped
        self._substituted: dict[int, tuple] = {}
        self.buffers: dict[Buffer, Buffer] = {}  # the description's buffer -> the block's
        self.starts: dict[Buffer, tuple] = {}  # the block's buffer -> window start per dimension
        # the description's loop and iteration variables of constant range,
        # by name, inclusive: what index simplification may assume
        self.ranges: dict[str, tuple[int, int]] = {}

    # -- binding ---------------------------------------------------------------
    def define(self, lhs: Var, rhs: Var, where) -> None:
        """``lhs`` and ``rhs`` are bound in the same place: match them."""
        if lhs.dtype != rhs.dtype and not (lhs.dtype.is_int and rhs.dtype.is_int):
            raise Mismatch(f"variable {lhs.name} is a {lhs.dtype} where the description binds {rhs.name}, "
                           f"a {rhs.dtype}", where)
        known = self.vars.get(lhs)
        if known is not None and known != rhs:
            raise Mismatch(f"variable {lhs.name} is bound where the description binds {rhs.name}, but it was "
                           f"matched to {known.name} before", where)
        self.vars[lhs] = rhs
        self._mapped = None
        self._substituted = {}

    def buffer(self, lhs: Buffer, rhs: Buffer, where) -> None:
        """``lhs`` is used where the description uses ``rhs``."""
        known = self.buffers.get(rhs)
        if known is not None:
            if known != lhs:
                raise Mismatch(f"buffer {lhs.name} is used where the description uses {rhs.name}, which "
                               f"matched {known.name} before", where)
            return
        if lhs.dtype != rhs.dtype or lhs.scope() != rhs.scope():
            raise Mismatch(f"buffer {lhs.name} ({lhs.dtype}, scope {lhs.scope()!r}) is used where the description "
                           f"uses {rhs.name} ({rhs.dtype}, scope {rhs.scope()!r}): dtype and scope must agree",
                           where)
        self.buffers[rhs] = lhs

    # -- regions and accesses -----------------------------------------------------
    def _mapping(self) -> dict:
        """The block's variables as the description's (cast to their
        dtypes), kept until the next variable is matched."""
        if self._mapped is None:
            self._mapped = {v: _cast(r, v.dtype) for v, r in self.vars.items()}
        return self._mapped

    def _index_equal(self, lhs: PrimExpr, start: PrimExpr, rhs: PrimExpr) -> bool:
        """``lhs - start == rhs``, the block's variables read as the
        description's they were matched to."""
        entry = self._substituted.get(id(lhs))
        if entry is not None and entry[0] is lhs:
            mapped = entry[1]
        else:
            mapped = substitute_expr(lhs, self._mapping())
            self._substituted[id(lhs)] = (lhs, mapped)
        if _plainly_offset(mapped, start, rhs):
            return True
        offset = simplify_index(mapped - _cast(start, mapped.dtype), self.ranges)
        want = simplify_index(_cast(rhs, offset.dtype), self.ranges)
        return offset == want or prove_equal(offset, want)

    def region(self, lhs: BufferRegion, rhs: BufferRegion, scope: bool, where) -> None:
        self.buffer(lhs.buffer, rhs.buffer, where)
        extra = len(lhs.region) - len(rhs.region)
        if extra < 0:
            raise Mismatch(f"region {lhs.script()} has {len(lhs.region)} dimensions where the description's "
                           f"{rhs.script()} has {len(rhs.region)}", where)
        starts = self.starts.get(lhs.buffer)
        if starts is None:
            if not scope:
                raise Mismatch(f"buffer {lhs.buffer.name} is used inside but not in the outer block's regions",
                               where)
            for r in lhs.region[:extra]:
                if not (isinstance(r.extent, IntImm) and r.extent.value == 1):
                    raise Mismatch(f"region {lhs.script()}: a dimension the description does not have must "
                                   "have extent 1", where)
            starts = tuple(r.min for r in lhs.region)
            self.starts[lhs.buffer] = starts
        for k, r in enumerate(lhs.region[:extra]):
            if not (isinstance(r.extent, IntImm) and r.extent.value == 1) or \
                    not self._index_equal(r.min, starts[k], IntImm(r.min.dtype, 0)):
                raise Mismatch(f"region {lhs.script()}: dimension {k}, which the description does not have, "
                               f"must be the single index {starts[k].script()}", where)
        for k, (a, b) in enumerate(zip(lhs.region[extra:], rhs.region)):
            if not prove_equal(simplify_index(_cast(a.extent, b.extent.dtype)), b.extent):
                raise Mismatch(f"region {lhs.script()}: extent {a.extent.script()} of dimension {k + extra} is "
                               f"not the description's {b.extent.script()}", where)
            if not self._index_equal(a.min, starts[k + extra], b.min):
                raise Mismatch(f"region {lhs.script()}: dimension {k + extra} does not start where the "
                               f"description's {rhs.script()} starts", where)

    def access(self, lhs, rhs, where) -> None:
        """A load or store: the same buffer, indices equal after the start."""
        self.buffer(lhs.buffer, rhs.buffer, where)
        starts = self.starts.get(lhs.buffer)
        if starts is None:
            raise Mismatch(f"buffer {lhs.buffer.name} is accessed but is not in the outer block's regions", where)
        extra = len(lhs.indices) - len(rhs.indices)
        if extra < 0 or len(lhs.indices) != len(starts):
            raise Mismatch(f"access of {lhs.buffer.name} has {len(lhs.indices)} indices where the description's "
                           f"has {len(rhs.indices)}", where)
        for k in range(extra):
            if not self._index_equal(lhs.indices[k], starts[k], IntImm(lhs.indices[k].dtype, 0)):
                raise Mismatch(f"index {k} of {lhs.buffer.name}, a dimension the description does not have, must "
                               f"be {starts[k].script()}", where)
        for k, (a, b) in enumerate(zip(lhs.indices[extra:], rhs.indices)):
            if not self._index_equal(a, starts[k + extra], b):
                raise Mismatch(f"index {k + extra} of {lhs.buffer.name}, {a.script()}, is not the description's "
                               f"{b.script()} within the window", where)
        if getattr(lhs, "predicate", None) is not None or getattr(rhs, "predicate", None) is not None:
            self.expr(lhs.predicate, rhs.predicate, where)

    # -- expressions ----------------------------------------------------------------
    def expr(self, a, b, where) -> None:
        if a is None or b is None:
            if a is not b:
                raise Mismatch("an expression is missing on one side", where)
            return
        try:
            self._expr(a, b, where)
        except Mismatch:
            # integer arithmetic written another way: blockize leaves
            # (v_o * 8 + v_i) % 8 where the description has v % 8
            if not (_int_like(a, b) and self._same_integer(a, b)):
                raise

    def _same_integer(self, a: PrimExpr, b: PrimExpr) -> bool:
        """Whether integer expression ``a``, its variables read as the
        description's, simplifies to what ``b`` simplifies to."""
        mapped = substitute_expr(a, self._mapping())
        try:
            x, y = simplify_index(mapped, self.ranges), simplify_index(_cast(b, mapped.dtype), self.ranges)
        except Exception:  # an expression the index simplifier does not take
            return False
        # what is left of the block's side must be the description's
        # variables: one of the block's own that did not cancel is no
        # variable of the description, whatever its name
        described = set(self.vars.values())
        if any(isinstance(n, Var) and n not in described for n in walk(x)):
            return False
        return x == y or prove_equal(x, y)

    def _expr(self, a, b, where) -> None:
        if type(a) is not type(b):
            raise Mismatch(f"{a.script()} is not of the form of the description's {b.script()}", where)
        if a.dtype != b.dtype and not _int_like(a, b):
            raise Mismatch(f"{a.script()} is a {a.dtype} where the description's {b.script()} is a {b.dtype}", where)
        kind = type(a)
        if kind is Var:
            if self.vars.get(a) != b:
                raise Mismatch(f"variable {a.name} is not the description's {b.name} here", where)
            return
        if kind is IntImm or kind is FloatImm:
            if a.value != b.value or (kind is FloatImm and a.dtype != b.dtype):
                raise Mismatch(f"{a.script()} is not the description's {b.script()}", where)
            return
        if kind is BufferLoad:
            self.access(a, b, where)
            return
        if kind is Cast and a.dtype != b.dtype:
            raise Mismatch(f"{a.script()} is not the description's {b.script()}", where)
        if kind is Let:
            self.expr(a.value, b.value, where)
            self.define(a.var, b.var, where)
            self.expr(a.body, b.body, where)
            return
        self.fields(a, b, where, skip=("dtype",))

    def fields(self, a: Node, b: Node, where, skip=()) -> None:
        """Every field of two nodes of one type, compared by kind."""
        for f in attrs.fields(type(a)):
            if f.name in skip:
                continue
            x, y = getattr(a, f.name), getattr(b, f.name)
            self.value(x, y, where, f.name)

    def value(self, x, y, where, name: str) -> None:
        if isinstance(x, PrimExpr) or isinstance(y, PrimExpr):
            self.expr(x, y, where)
        elif isinstance(x, Buffer) and isinstance(y, Buffer):
            self.buffer(x, y, where)
        elif isinstance(x, Node) and isinstance(y, Node) and type(x) is type(y):
            if isinstance(x, (For, SeqStmt, BlockRealize, Block, BufferStore, LetStmt)) or hasattr(x, "body"):
                self.stmt(x, y)
            else:
                self.fields(x, y, where)
        elif isinstance(x, (tuple, list)) or type(x).__name__ in ("PVector", "pvector"):
            if len(x) != len(y):
                raise Mismatch(f"{name}: {len(x)} items where the description has {len(y)}", where)
            for u, v in zip(x, y):
                self.value(u, v, where, name)
        elif x != y:
            raise Mismatch(f"{name} {x!r} is not the description's {y!r}", where)

    # -- statements -------------------------------------------------------------------
    def stmt(self, a, b) -> None:
        if type(a) is not type(b):
            raise Mismatch(f"a {type(a).__name__} stands where the description has a {type(b).__name__}", a)
        kind = type(a)
        if kind is For:
            self.define(a.loop_var, b.loop_var, a)
            self.expr(a.min, b.min, a)
            self.expr(a.extent, b.extent, a)
            self._range(b.loop_var, b.min, b.extent)
            if a.kind != b.kind:
                raise Mismatch(f"loop {a.loop_var.name} is {a.kind} where the description's is {b.kind}", a)
            if a.thread_binding != b.thread_binding:
                raise Mismatch(f"loop {a.loop_var.name} is bound to other threads than the description's", a)
            if (a.annotations or b.annotations) and dict(a.annotations) != dict(b.annotations):
                raise Mismatch(f"loop {a.loop_var.name}'s annotations are not the description's", a)
            self.stmt(a.body, b.body)
        elif kind is SeqStmt:
            if len(a.seq) != len(b.seq):
                raise Mismatch(f"{len(a.seq)} statements in sequence where the description has {len(b.seq)}", a)
            for x, y in zip(a.seq, b.seq):
                self.stmt(x, y)
        elif kind is BlockRealize:
            if len(a.iter_values) != len(b.iter_values):
                raise Mismatch(f"block {a.block.name_hint} has {len(a.iter_values)} iteration variables where "
                               f"the description's has {len(b.iter_values)}", a)
            for x, y in zip(a.iter_values, b.iter_values):
                self.expr(x, y, a)
            self.expr(a.predicate, b.predicate, a)
            self.block(a.block, b.block, scope=False)
        elif kind is BufferStore:
            self.access(a, b, a)
            self.expr(a.value, b.value, a)
        elif kind is LetStmt:
            self.expr(a.value, b.value, a)
            self.define(a.var, b.var, a)
            self.stmt(a.body, b.body)
        else:
            self.fields(a, b, a)

    def block(self, a: Block, b: Block, scope: bool) -> None:
        """A block; ``scope``: the outer block, whose variables and
        allocations are its own (only its regions and body are compared)."""
        if not scope:
            if len(a.iter_vars) != len(b.iter_vars):
                raise Mismatch(f"block {a.name_hint} has {len(a.iter_vars)} iteration variables where the "
                               f"description's has {len(b.iter_vars)}", a)
            for x, y in zip(a.iter_vars, b.iter_vars):
                self._iter_var(x, y, a)
            if len(a.alloc_buffers) != len(b.alloc_buffers):
                raise Mismatch(f"block {a.name_hint} allocates {len(a.alloc_buffers)} buffers where the "
                               f"description's allocates {len(b.alloc_buffers)}", a)
            for x, y in zip(a.alloc_buffers, b.alloc_buffers):
                self.buffer(x, y, a)
                self.starts.setdefault(x, tuple(IntImm(s.dtype, 0) for s in x.shape))
            if a.match_buffers or b.match_buffers:
                raise Mismatch(f"block {a.name_hint} or the description's declares match_buffer views, which "
                               "tensorize does not compare", a)
            if (a.init is None) != (b.init is None):
                raise Mismatch(f"block {a.name_hint} {'has' if a.init is not None else 'has no'} init where the "
                               f"description's {'has none' if a.init is not None else 'has one'}", a)
        reads = list(a.reads)
        if scope and a.init is not None:
            # a reduction with an init reads what it writes, though its
            # declared reads leave that out (as TVM declares them)
            read = {r.buffer for r in reads}
            reads = [w for w in a.writes if w.buffer not in read] + reads
        for kind, xs, ys in (("writes", a.writes, b.writes), ("reads", reads, b.reads)):
            if len(xs) != len(ys):
                raise Mismatch(f"block {a.name_hint} {kind} {len(xs)} regions where the description's {kind} "
                               f"{len(ys)}", a)
            for x, y in zip(xs, ys):
                self.region(x, y, scope, a)
        if not scope and a.init is not None:
            self.stmt(a.init, b.init)
        self.stmt(a.body, b.body)

    def _iter_var(self, x: IterVar, y: IterVar, where) -> None:
        if x.iter_type != y.iter_type:
            raise Mismatch(f"iteration variable {x.var.name} is {x.iter_type.value} where the description's "
                           f"{y.var.name} is {y.iter_type.value}", where)
        self.expr(x.dom.min, y.dom.min, where)
        self.expr(x.dom.extent, y.dom.extent, where)
        self.define(x.var, y.var, where)
        self._range(y.var, y.dom.min, y.dom.extent)

    def _range(self, var: Var, lo, extent) -> None:
        if isinstance(lo, IntImm) and isinstance(extent, IntImm) and extent.value > 0:
            self.ranges[var.name] = (lo.value, lo.value + extent.value - 1)


def match_block(realize: BlockRealize, desc_body: BlockRealize) -> Match:
    """Compare the outer block ``realize`` with the description's root
    block realize; a :class:`Mismatch` names the first difference."""
    cmp = _Comparator()
    cmp.expr(realize.predicate, desc_body.predicate, realize)
    cmp.block(realize.block, desc_body.block, scope=True)
    return Match(dict(cmp.buffers), dict(cmp.starts))


__all__ = ["Match", "Mismatch", "match_block"]
