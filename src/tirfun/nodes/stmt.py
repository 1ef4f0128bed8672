"""Statement nodes, blocks and iteration variables."""

from __future__ import annotations

import enum
import weakref

from attrs import field
from pyrsistent import PMap, PVector

from ..errors import NodeError
from .base import Node, accepts, node, pure_converter, to_attr_map, to_pvector
from .buffer import Buffer, BufferRegion, MatchBufferRegion, Range
from .dtype import DataType
from .expr import (
    IntImm, PrimExpr, StringImm, Var, _check_indices, check_predicate, to_expr, to_expr_vector,
    to_optional_expr,
)


class Stmt(Node):
    """Base of every statement."""

    __slots__ = ()


@accepts(Stmt)
def _is_stmt(self, attribute, value):
    if not isinstance(value, Stmt):
        raise NodeError(f"{type(self).__name__}.{attribute.name} must be a statement, got "
                        f"{type(value).__name__}")


@accepts(Stmt, type(None))
def _is_optional_stmt(self, attribute, value):
    if value is not None:
        _is_stmt(self, attribute, value)


@accepts(Var)
def _is_var(self, attribute, value):
    if not isinstance(value, Var):
        raise NodeError(f"{type(self).__name__}.{attribute.name} must be a Var, got {value!r}")


def _is_bool_scalar(self, attribute, value):
    if not value.dtype.is_bool or value.dtype.lanes != 1:
        raise NodeError(f"{type(self).__name__}.{attribute.name} must be a bool condition, "
                        f"got {value!r}: {value.dtype}")


@node
class BufferStore(Stmt):
    """``buffer[indices] = value``.

    ``predicate`` (TVM's predicated store, ``A.vstore([...], v,
    predicate=m)``) is a bool vector with one lane per lane of ``value``: a
    lane whose mask is false writes nothing."""

    buffer: Buffer
    value: PrimExpr = field(converter=to_expr)
    indices: PVector = field(converter=to_expr_vector)
    predicate: PrimExpr | None = field(default=None, converter=to_optional_expr)

    def __attrs_post_init__(self):
        _check_indices(self.buffer, self.indices, "store into")
        lanes = max([1] + [i.dtype.lanes for i in self.indices])
        expected = self.buffer.dtype.with_lanes(lanes) if lanes > 1 else self.buffer.dtype
        if self.value.dtype != expected:
            raise NodeError(f"cannot store a {self.value.dtype} value into buffer "
                            f"{self.buffer.name} of {expected}")
        if self.predicate is not None:
            check_predicate(self.predicate, self.value.dtype.lanes,
                            f"store into {self.buffer.name}")


class ForKind(str, enum.Enum):
    """How a loop runs. The values are TVMScript's names for the loop kinds."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"
    THREAD_BINDING = "thread_binding"

    def __str__(self) -> str:
        return self.value


@pure_converter(ForKind)
def _to_for_kind(value) -> ForKind:
    if isinstance(value, ForKind):
        return value
    kind = _FOR_KINDS.get(value) if isinstance(value, str) else None
    if kind is not None:
        return kind  # the enum's own look-up by value costs several calls
    try:
        return ForKind(value)
    except ValueError:
        raise NodeError(f"unknown loop kind {value!r}; expected one of "
                        f"{', '.join(k.value for k in ForKind)}") from None


_FOR_KINDS = {k.value: k for k in ForKind}

THREAD_TAGS = (
    "blockIdx.x", "blockIdx.y", "blockIdx.z",
    "threadIdx.x", "threadIdx.y", "threadIdx.z",
    "vthread", "vthread.x", "vthread.y", "vthread.z",
)


@node
class For(Stmt):
    """``for loop_var in range(min, min + extent): body``.

    ``thread_binding`` is the thread tag (``"threadIdx.x"``...) of a loop of
    kind THREAD_BINDING, and None for every other kind.
    """

    loop_var: Var = field(validator=_is_var)
    min: PrimExpr = field(converter=to_expr)
    extent: PrimExpr = field(converter=to_expr)
    kind: ForKind = field(converter=_to_for_kind)
    body: Stmt = field(validator=_is_stmt)
    thread_binding: str | None = field(default=None)
    annotations: PMap = field(factory=dict, converter=to_attr_map)

    # the fields __attrs_post_init__ reads (see with_fields)
    _POST_INIT_READS = frozenset({"loop_var", "min", "extent", "kind", "thread_binding"})

    def __attrs_post_init__(self):
        dt = self.loop_var.dtype
        if not dt.is_index:
            raise NodeError(f"loop variable {self.loop_var.name} must be a scalar integer, got {dt}")
        for name in ("min", "extent"):
            value = getattr(self, name)
            if value.dtype != dt:
                raise NodeError(f"loop {self.loop_var.name}: {name} {value!r} has dtype "
                                f"{value.dtype}, the loop variable {dt}")
        if self.kind is ForKind.THREAD_BINDING:
            if self.thread_binding not in THREAD_TAGS:
                raise NodeError(f"loop {self.loop_var.name}: unknown thread tag {self.thread_binding!r}; "
                                f"expected one of {', '.join(THREAD_TAGS)}")
        elif self.thread_binding is not None:
            raise NodeError(f"loop {self.loop_var.name} of kind {self.kind.value} has a thread tag")


# identity of a sequence made by one of SeqStmt's edits -> (a weak reference
# to it, and for the sequence it was made from and the ones that one was
# made from in turn: a weak reference to each, its length, and the span of
# its items the edits replaced): kept while the new sequence lives. The
# name index reads it to skip comparing the thousand items an insertion
# kept (see ``sequence_edit``); like every table kept by identity here, it
# answers only for the very objects it was made from, so it is never stale.
_EDITS: dict[int, tuple] = {}

#: how many edits back a sequence remembers its sources
_EDIT_CHAIN = 8


def _remember_edit(new: "SeqStmt", old: "SeqStmt", start: int, removed: int, added: int) -> None:
    n = len(old.seq)
    sources = [(weakref.ref(old), n, start, removed)]
    earlier = _EDITS.get(id(old))
    if earlier is not None and earlier[0]() is old:
        # the spans compose: what both edits kept at the head and the tail
        tail = n - start - removed
        for ref, length, s, r in earlier[1][:_EDIT_CHAIN - 1]:
            head = min(s, start)
            keep = min(length - s - r, tail)
            sources.append((ref, length, head, length - head - keep))
    key = id(new)
    _EDITS[key] = (weakref.ref(new, _forget_edit(key)), sources)


def _forget_edit(key: int):
    def callback(_ref):
        _EDITS.pop(key, None)
    return callback


def sequence_edit(new: "SeqStmt", old: "SeqStmt") -> tuple[int, int, int] | None:
    """``(start, removed, added)`` when ``new`` was made from ``old`` by
    :meth:`SeqStmt.with_item`, :meth:`~SeqStmt.with_items`,
    :meth:`~SeqStmt.with_inserted` or :meth:`~SeqStmt.without_items` (one
    item), or by a few such edits in a row: the items of ``old`` from
    ``start`` on, ``removed`` of them, were replaced by ``added`` new ones,
    and every other item is the same object in both (for several edits,
    the span covers them all). None when ``new`` was made otherwise."""
    entry = _EDITS.get(id(new))
    if entry is None or entry[0]() is not new:
        return None
    for ref, length, start, removed in entry[1]:
        if ref() is old:
            return start, removed, len(new.seq) - (length - removed)
    return None


def _is_no_op(s) -> bool:
    value = getattr(s, "value", None)
    return (type(s) is Evaluate and type(value) is IntImm and value.value == 0
            and not value.dtype.is_bool)


def _flatten_seq(values) -> PVector:
    # as TVM's SeqStmt::Flatten: a sequence inside a sequence is spliced in
    # and a no-op T.evaluate(0) beside other statements is dropped, so
    # neither form exists and print then parse is the identity
    items = to_pvector(values)
    # one pass in C over the item types: a long sequence rebuilt around one
    # changed item costs no Python step per item
    kinds = set(map(type, items))
    if SeqStmt not in kinds and (Evaluate not in kinds or not any(map(_is_no_op, items))):
        return items
    flat: list = []
    for s in items:
        if type(s) is SeqStmt:
            flat.extend(s.seq)  # already flat: it was made by this converter
        elif not _is_no_op(s):
            flat.append(s)
    if not flat and len(items):
        flat = [items[0]]  # nothing but no-ops: one of them stands for the sequence
    return to_pvector(flat)


@node
class SeqStmt(Stmt):
    """Statements in order. A ``SeqStmt`` given as an item is spliced in and
    a no-op ``T.evaluate(0)`` beside other statements is dropped, as TVM's
    ``SeqStmt::Flatten`` does, so sequences never nest. (A sequence of one
    statement is structurally equal to that statement.)"""

    seq: PVector = field(converter=_flatten_seq)

    def __attrs_post_init__(self):
        if len(self.seq) == 0:
            raise NodeError("SeqStmt needs at least one statement")
        if not all(issubclass(kind, Stmt) for kind in set(map(type, self.seq))):
            bad = next(s for s in self.seq if not isinstance(s, Stmt))
            raise NodeError(f"SeqStmt holds a non-statement {type(bad).__name__}")

    def __len__(self) -> int:
        return len(self.seq)

    def __getitem__(self, i):
        return self.seq[i]

    def with_item(self, index: int, stmt: Stmt) -> "SeqStmt":
        """The sequence with item ``index`` replaced by ``stmt``.

        A statement that is neither a sequence nor a no-op keeps the
        sequence flat, so only it needs checking and the new sequence shares
        the rest: the cost does not grow with the length of the sequence, as
        rebuilding (which looks at every item) would. Any other statement
        goes through the constructor."""
        if not isinstance(stmt, Stmt) or type(stmt) is SeqStmt or _is_no_op(stmt):
            return SeqStmt(self.seq.set(index, stmt))
        return self._edited(self.seq.set(index, stmt), index if index >= 0 else index + len(self.seq), 1, 1)

    def without_items(self, indices) -> "SeqStmt":
        """The sequence without the items at ``indices``: what is left of a
        flat sequence is flat, so nothing needs checking again and the cost
        does not grow with the length of the sequence. Removing every item
        is an error (a sequence holds at least one statement)."""
        seq = self.seq
        gone = sorted(set(indices), reverse=True)
        for index in gone:
            seq = seq.delete(index)
        if not seq:
            return SeqStmt(seq)  # the constructor's error
        if len(gone) != 1:
            return self._edited(seq)
        index = gone[0] if gone[0] >= 0 else gone[0] + len(self.seq)
        return self._edited(seq, index, 1, 0)

    def with_item_without(self, index: int, stmt: Stmt, removed) -> "SeqStmt":
        """``self.with_item(index, stmt).without_items(removed)`` in one
        rebuild (merge's edit: the last nest replaced, the others gone).

        Removing an item from a persistent vector copies every item, and
        the two steps would also build and drop the vector between them:
        here the items are copied once, through a list, which is the
        cheapest copy the vector offers. The edit is remembered as one span,
        from the first item touched to the last (see :func:`sequence_edit`).
        Anything but a plain case (indices in range, ``index`` not removed,
        an item left besides ``stmt``, ``stmt`` neither a sequence nor a
        no-op) takes the two steps."""
        n = len(self.seq)
        gone = set(removed)
        if (not gone or index in gone or len(gone) >= n - 1 or not 0 <= index < n
                or not all(type(k) is int and 0 <= k < n for k in gone)
                or not isinstance(stmt, Stmt) or type(stmt) is SeqStmt or _is_no_op(stmt)):
            return self.with_item(index, stmt).without_items(removed)
        items = self.seq.tolist()
        items[index] = stmt
        for k in sorted(gone, reverse=True):
            del items[k]
        start = min(index, min(gone))
        span = max(index, max(gone)) + 1 - start
        return self._edited(to_pvector(items), start, span, span - len(gone))

    def with_inserted(self, index: int, stmt: Stmt) -> "SeqStmt":
        """The sequence with ``stmt`` inserted before item ``index`` (at the
        end when ``index`` is the length). As :meth:`with_item`, a statement
        that is neither a sequence nor a no-op is the only one checked."""
        return self.with_items(index, index, [stmt])

    def with_items(self, start: int, stop: int, stmts) -> "SeqStmt":
        """The sequence with items ``start`` to ``stop`` (excluded) replaced
        by ``stmts``: what ``SeqStmt(seq[:start] + stmts + seq[stop:])``
        gives, checking only ``stmts`` when none of them is a sequence or a
        no-op (the items kept were checked when this sequence was made), so
        inserting a statement costs the same in a sequence of a thousand."""
        stmts = list(stmts)
        items = self.seq[:start] + stmts + self.seq[stop:]
        if len(self.seq) == 1 or not items or any(
                not isinstance(s, Stmt) or type(s) is SeqStmt or _is_no_op(s) for s in stmts):
            return SeqStmt(items)  # a lone item may be a no-op: the constructor's rules apply
        start, stop, _ = slice(start, stop).indices(len(self.seq))
        return self._edited(items, start, max(stop - start, 0), len(stmts))

    def _edited(self, items, start: int | None = None, removed: int = 0, added: int = 0) -> "SeqStmt":
        """A sequence of ``items``, flat and checked already, made by an edit
        of this one, without the constructor's look at every item; with
        ``start``, it remembers which span of this sequence's items the edit
        replaced (see :func:`sequence_edit`)."""
        out = object.__new__(SeqStmt)
        object.__setattr__(out, "seq", items)
        object.__setattr__(out, "_attrs_cached_hash", None)
        if start is not None:
            _remember_edit(out, self, start, removed, added)
        return out


@node
class IfThenElse(Stmt):
    """``if condition: then_case else: else_case``."""

    condition: PrimExpr = field(converter=to_expr, validator=_is_bool_scalar)
    then_case: Stmt = field(validator=_is_stmt)
    else_case: Stmt | None = field(default=None, validator=_is_optional_stmt)


@node
class Evaluate(Stmt):
    """Evaluate an expression for its effect (``T.evaluate(0)`` is the empty statement)."""

    value: PrimExpr = field(converter=to_expr)


@node
class LetStmt(Stmt):
    """``var = value`` in scope of ``body``."""

    var: Var = field(validator=_is_var)
    value: PrimExpr = field(converter=to_expr)
    body: Stmt = field(validator=_is_stmt)

    def __attrs_post_init__(self):
        if self.var.dtype != self.value.dtype:
            raise NodeError(f"let {self.var.name}: {self.var.dtype} is bound to a value of {self.value.dtype}")


@node
class AttrStmt(Stmt):
    """An attribute on a region of code: ``T.attr(node, key, value)``.
    ``thread_extent`` attributes (``T.launch_thread``) bind a thread index
    variable in lowered GPU code."""

    node: object
    attr_key: str
    value: PrimExpr = field(converter=to_expr)
    body: Stmt = field(validator=_is_stmt)


@node
class AssertStmt(Stmt):
    """``assert condition, message`` then ``body``."""

    condition: PrimExpr = field(converter=to_expr, validator=_is_bool_scalar)
    message: StringImm = field(converter=lambda m: StringImm(m) if isinstance(m, str) else m)
    body: Stmt = field(validator=_is_stmt)


@node
class Allocate(Stmt):
    """Lowered allocation: ``buffer_var`` points at ``prod(extents)`` elements
    of ``dtype`` in ``scope`` for the extent of ``body``."""

    buffer_var: Var = field(validator=_is_var)
    dtype: DataType = field(converter=DataType)
    extents: PVector = field(converter=to_expr_vector)
    condition: PrimExpr = field(converter=to_expr)
    body: Stmt = field(validator=_is_stmt)
    annotations: PMap = field(factory=dict, converter=to_attr_map)
    scope: str = field(default="global")


@node
class DeclBuffer(Stmt):
    """Declare ``buffer`` (a view of its ``data`` pointer) for ``body``."""

    buffer: Buffer
    body: Stmt = field(validator=_is_stmt)


class IterVarType(str, enum.Enum):
    """TVM's iteration variable types that blocks use."""

    DataPar = "DataPar"
    CommReduce = "CommReduce"
    Ordered = "Ordered"
    Opaque = "Opaque"
    ThreadIndex = "ThreadIndex"

    def __str__(self) -> str:
        return self.value


@pure_converter(IterVarType)
def _to_iter_type(value) -> IterVarType:
    if isinstance(value, IterVarType):
        return value
    aliases = {0: "DataPar", 1: "ThreadIndex", 2: "CommReduce", 3: "Ordered", 4: "Opaque",
               "spatial": "DataPar", "reduce": "CommReduce", "scan": "Ordered", "opaque": "Opaque",
               "S": "DataPar", "R": "CommReduce", "O": "Opaque"}
    value = aliases.get(value, value)
    try:
        return IterVarType(value)
    except ValueError:
        raise NodeError(f"unknown iteration variable type {value!r}") from None


@node
class IterVar(Node):
    """A block iteration variable: its domain, the variable and its type
    (``DataPar`` for spatial, ``CommReduce`` for reduction axes)."""

    dom: Range
    var: Var = field(validator=_is_var)
    iter_type: IterVarType = field(converter=_to_iter_type)
    thread_tag: str = field(default="")

    DataPar = IterVarType.DataPar
    CommReduce = IterVarType.CommReduce
    Ordered = IterVarType.Ordered
    Opaque = IterVarType.Opaque
    ThreadIndex = IterVarType.ThreadIndex


def _tvm_iter_var_init(init):
    """``IterVar((begin, end), "name", kind)``, as TVM's constructor also
    takes it: a pair is the range ``[begin, end)``, a name (or None, for
    ``iter``) a new variable of the range's type."""
    def __init__(self, dom, var, iter_type, thread_tag=""):
        if isinstance(dom, (list, tuple)):
            if len(dom) != 2:
                raise NodeError(f"an IterVar's domain is a Range or (begin, end), got {dom!r}")
            dom = Range.from_begin_end(*dom)
        if var is None or isinstance(var, str):
            var = Var("iter" if var is None else var,
                      dom.extent.dtype if isinstance(dom, Range) else "int32")
        init(self, dom, var, iter_type, thread_tag)
    __init__.__doc__ = init.__doc__
    __init__.__wrapped__ = init  # the constructor of the fields themselves
    return __init__


IterVar.__init__ = _tvm_iter_var_init(IterVar.__init__)


@node
class Block(Stmt):
    """A TensorIR block: a unit of computation with declared iteration
    variables, the regions it reads and writes, an optional reduction
    ``init``, and the buffers it allocates."""

    iter_vars: PVector = field(converter=to_pvector)
    reads: PVector = field(converter=to_pvector)
    writes: PVector = field(converter=to_pvector)
    name_hint: str = field()
    body: Stmt = field(validator=_is_stmt)
    init: Stmt | None = field(default=None, validator=_is_optional_stmt)
    alloc_buffers: PVector = field(default=(), converter=to_pvector)
    match_buffers: PVector = field(default=(), converter=to_pvector)
    annotations: PMap = field(factory=dict, converter=to_attr_map)

    # the fields __attrs_post_init__ reads (see with_fields)
    _POST_INIT_READS = frozenset({"name_hint", "iter_vars", "reads", "writes", "alloc_buffers",
                                  "match_buffers"})

    def __attrs_post_init__(self):
        if not isinstance(self.name_hint, str):
            raise NodeError("a block name must be a string")
        for kind, items, cls in (("iter_vars", self.iter_vars, IterVar),
                                 ("reads", self.reads, BufferRegion),
                                 ("writes", self.writes, BufferRegion),
                                 ("alloc_buffers", self.alloc_buffers, Buffer),
                                 ("match_buffers", self.match_buffers, MatchBufferRegion)):
            for item in items:
                if not isinstance(item, cls):
                    raise NodeError(f"block {self.name_hint}: {kind} holds a {type(item).__name__}, "
                                    f"expected {cls.__name__}")

    @property
    def name(self) -> str:
        return self.name_hint


@node
class BlockRealize(Stmt):
    """A block instance: the values of its iteration variables and the
    predicate (``T.where``) under which it runs."""

    iter_values: PVector = field(converter=to_expr_vector)
    predicate: PrimExpr = field(converter=to_expr, validator=_is_bool_scalar)
    block: Block = field()

    # the fields __attrs_post_init__ reads (see with_fields)
    _POST_INIT_READS = frozenset({"iter_values", "block"})

    def __attrs_post_init__(self):
        if not isinstance(self.block, Block):
            raise NodeError("BlockRealize.block must be a Block")
        if len(self.iter_values) != len(self.block.iter_vars):
            raise NodeError(f"block {self.block.name_hint} has {len(self.block.iter_vars)} iteration "
                            f"variables but {len(self.iter_values)} bound values")


__all__ = [
    "Stmt", "BufferStore", "ForKind", "For", "SeqStmt", "IfThenElse", "Evaluate", "LetStmt",
    "AttrStmt", "AssertStmt", "Allocate", "DeclBuffer", "IterVarType", "IterVar", "Block",
    "BlockRealize", "THREAD_TAGS",
]
