"""Swap one buffer for a new version of it, with its match_buffer views, in
one walk.

``set_scope``, ``unsafe_set_dtype`` and ``set_axis_separator`` give a
buffer a new scope, element type or axis separators where it is
allocated; every use below sees the new buffer, and each match_buffer view
of it (views of views too) takes the change as well. :func:`swap_buffer`
does this in a single pre-order walk of the statements that name one of
them: a view is declared by a block's ``match_buffers`` and used only
inside that block, so meeting the declaration before its uses lets the walk
find the views as it goes, where looking for them first would walk the same
statements twice.

The swap changes no buffer's shape, and no dtype of an expression (a load
of a buffer whose element type changes is cast back to the old one, a
value stored into it is cast to the new one), so each node the walk
rebuilds around a new child holds children of the same kinds, shapes and
dtypes as before: every rule its constructor checks held for the old node
and holds again. Such a node is therefore copied with its new children
(:func:`_swapper`) instead of being checked afresh, where checking costs
more than the copy; nodes of kinds the walk does not know go through
:func:`~tirfun.analysis.traversal.map_children`, checked as usual. (A view
of another element type than its source's, which TVMScript refuses to
parse, breaks the rule for a new element type: where the walk meets one, it
starts again rebuilding every node through its checks.)
"""

from __future__ import annotations

import functools
from types import MappingProxyType

import attrs
from pyrsistent import pmap, pvector

from ..analysis.mentions import names_in
from ..analysis.traversal import OPERAND_NODES, Path, map_children, replace_at, stmt_children
from ..nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Call, Cast, DataType, FloatImm, For, IntImm,
    IterVar, MatchBufferRegion, Node, PrimFunc, Range, SeqStmt, Stmt, StringImm, Var,
)
from ..nodes.base import rebuilder, with_fields

#: expression nodes that hold no other node: nothing to swap inside
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


@functools.cache
def _swapper(cls: type, fields: tuple, derive: bool = False):
    """A function ``(node, *values)``: a copy of the ``cls`` node with the
    ``fields`` set to ``values``, its other fields and its dtype (an
    expression's, kept in a slot) carried over, and no rule checked again:
    only for a node whose new children are of the old ones' kinds, shapes
    and dtypes (see the module's docstring). ``derive``: the dtype is
    derived afresh from the new fields instead (a load from a buffer of a
    new element type). Written out once per class and fields, as
    :func:`~tirfun.nodes.base.with_fields` writes its rebuilders.

    The copy is filled as a :func:`_fillable` twin of ``cls`` and then made
    a ``cls``: a frozen record refuses plain stores, and storing each slot
    through its descriptor costs a call per field, where a plain store into
    a slot costs next to nothing."""
    args = [f"v{k}" for k in range(len(fields))]
    lines = [f"def swap(node, {', '.join(args)}):", "    new = _new(_fillable)"]
    for a in attrs.fields(cls):
        value = args[fields.index(a.name)] if a.name in fields else f"node.{a.name}"
        lines.append(f"    new.{a.name} = {value}")
    if hasattr(cls, "_derive_dtype"):  # see nodes.base.node
        lines.append(f"    new._dtype = {'new._derive_dtype()' if derive else 'node.dtype'}")
    lines += ["    new._attrs_cached_hash = None", "    new.__class__ = _cls", "    return new"]
    env = {"_new": object.__new__, "_fillable": _fillable(cls), "_cls": cls}
    exec("\n".join(lines), env)  # the source is built above from field names only
    return env["swap"]


@functools.cache
def _fillable(cls: type) -> type:
    """A subclass of the frozen slotted record ``cls`` that adds no slot
    and takes plain attribute stores: a copy is filled as one and then
    given ``cls`` as its class, which the same layout allows. Both of
    ``object``'s setters are restored, as Python takes a store into a slot
    by its fast path only when neither is overridden."""
    body = {"__slots__": (), "__setattr__": object.__setattr__, "__delattr__": object.__delattr__,
            "__module__": __name__}
    return type(f"_Fillable{cls.__name__}", (cls,), body)


#: the length up to which a sequence's items are each asked whether they
#: name the buffers (a kept answer each) rather than the index (which asks
#: its tables for the blocks naming them): either way the same items are
#: visited, and the index costs as much as asking a dozen items
_ASK_EACH_UP_TO = 16

#: the length up to which a sequence in which several items change is
#: rebuilt in one edit of the span they cover, rather than an edit per item
#: (each edit makes a sequence and remembers where it came from; a longer
#: sequence costs more to copy than those edits)
_ONE_EDIT_UP_TO = 16

#: the empty map nearly every loop and block has as annotations (pyrsistent
#: gives one empty map): told by identity, where asking a map its length is
#: a Python call
_NO_ANNOTATIONS = pmap()


_NEW_CAST = _swapper(Cast, ("dtype", "value"))


def _cast(dtype: DataType, value):
    """``Cast(dtype, value)`` where ``value`` has ``dtype``'s lanes (the
    only rule a Cast checks), built without checking it again."""
    return _NEW_CAST(None, dtype, value)


@attrs.frozen
class _Rebuilders:
    """How the walk rebuilds each node kind it knows around new children:
    each a function ``(node, *new fields)`` (``cast``: ``(dtype, value)``,
    ``operands``: each two-operand kind's rebuilder, by kind)."""

    block: object
    realize: object
    for_body: object
    store: object
    load: object
    retyped_load: object
    region: object
    match: object
    range: object
    cast: object
    operands: object


def _checked(cls: type, fields: tuple):
    """The rebuilder of ``fields`` of a ``cls`` node through
    :func:`~tirfun.nodes.base.with_fields`, every rule checked."""
    def rebuild(node, *values):
        return with_fields(node, **dict(zip(fields, values)))
    return rebuild


_FIELDS = {
    Block: ("iter_vars", "reads", "writes", "body", "init", "alloc_buffers", "match_buffers", "annotations"),
    BlockRealize: ("iter_values", "predicate", "block"),
    BufferStore: ("buffer", "value", "indices", "predicate"),
    BufferLoad: ("buffer", "indices", "predicate"),
    BufferRegion: ("buffer", "region"),
    MatchBufferRegion: ("buffer", "source"),
    Range: ("min", "extent"),
}

#: nodes copied (see the module's docstring)
_COPIED = _Rebuilders(
    block=_swapper(Block, _FIELDS[Block]), realize=_swapper(BlockRealize, _FIELDS[BlockRealize]),
    for_body=_swapper(For, ("body",)), store=_swapper(BufferStore, _FIELDS[BufferStore]),
    load=_swapper(BufferLoad, _FIELDS[BufferLoad]),
    retyped_load=_swapper(BufferLoad, _FIELDS[BufferLoad], derive=True),
    region=_swapper(BufferRegion, _FIELDS[BufferRegion]), match=_swapper(MatchBufferRegion, _FIELDS[MatchBufferRegion]),
    range=_swapper(Range, _FIELDS[Range]), cast=_cast,
    operands=MappingProxyType({kind: _swapper(kind, ("a", "b")) for kind in OPERAND_NODES}))

#: nodes rebuilt and checked, as map_children rebuilds them
_CHECKS = _Rebuilders(
    block=_checked(Block, _FIELDS[Block]), realize=_checked(BlockRealize, _FIELDS[BlockRealize]),
    for_body=_checked(For, ("body",)), store=_checked(BufferStore, _FIELDS[BufferStore]),
    load=_checked(BufferLoad, _FIELDS[BufferLoad]), retyped_load=_checked(BufferLoad, _FIELDS[BufferLoad]),
    region=_checked(BufferRegion, _FIELDS[BufferRegion]), match=_checked(MatchBufferRegion, _FIELDS[MatchBufferRegion]),
    range=_checked(Range, _FIELDS[Range]), cast=Cast,
    operands=MappingProxyType({kind: _checked(kind, ("a", "b")) for kind in OPERAND_NODES}))


class _ViewOfAnotherType(Exception):
    """Raised inside the walk that copies nodes: a view whose element type
    is not its source's (TVMScript refuses to parse one) is to change type,
    and a load of it, cast back to the source's old type, would change
    type: the nodes above it must be checked."""


def _names_of(buffer: Buffer) -> tuple:
    """The names a statement using ``buffer`` mentions: its own, and its
    data pointer's when it has one."""
    return (buffer.name,) if buffer.data is None else (buffer.name, buffer.data.name)


def copier(cls: type, fields: tuple):
    """A function ``(node, *values)``: a copy of the ``cls`` node with the
    ``fields`` set to ``values`` and no rule checked again, for a caller
    whose new values keep every rule of ``cls`` that held for the old ones
    (as the swap's copies do, see the module's docstring)."""
    return _swapper(cls, fields)


#: the fields along a path whose rebuild around a new statement checks
#: nothing that could fail: each rule of the node asks of that field only
#: that it is a statement (a BlockRealize: a block with as many iteration
#: variables, which a block rebuilt below keeps)
_COPIABLE = frozenset({(PrimFunc, ("body",)), (Block, ("body",)), (For, ("body",)), (BlockRealize, ("block",))})


def rebuilt_above(cls: type, fields: tuple):
    """How :func:`~tirfun.analysis.traversal.replace_at` rebuilds a node
    along the path to a replaced statement other than a block, or a block
    of the iteration variables of the one it replaces (merge replaces a
    sequence, decompose_reduction a loop or a realize, reindex a block):
    copied where no rule can fail (:data:`_COPIABLE`), else checked as
    usual."""
    if (cls, fields) in _COPIABLE:
        return _swapper(cls, fields)
    return rebuilder(cls, fields)


def replaced_along(root: Node, path: Path, new: Node) -> Node:
    """``root`` with the node at ``path`` replaced by ``new``, a version of
    it of the same kind, with the same iteration variables and dtypes (the
    result of a swap there, or a block with a new annotation): what
    :func:`~tirfun.analysis.traversal.replace_at` gives, with each node
    along the path copied around its new child instead of rebuilt through
    its checks, as every rule a node above it checks held before and holds
    again (see the module's docstring)."""
    return replace_at(root, path, new, rebuild=_swapper)


def swap_buffer(root: Node, buffer: Buffer, new: Buffer, view_of, *, index=None, path: Path | None = None,
                cast: tuple[DataType, DataType] | None = None) -> Node:
    """``root`` (a statement, or a function) with ``buffer`` replaced by
    ``new``, which has the same shape, and each match_buffer view of it
    below by ``view_of(view, new source)``.

    Statements that name none of the buffers are kept as they are (their
    kept names answer that), and with the function's ``index`` and the
    ``path`` of ``root`` in it, a sequence outside the blocks below the root
    is asked only for the items that the index knows to name them.

    ``cast``, ``(old dtype, new dtype)``, is for a new element type: a
    store into one of the buffers casts its value to the new type, a load
    from one casts back to the old type (as TVM's ``unsafe_set_dtype``).
    Without it the buffers keep their element type."""
    try:
        return _Swap(buffer, new, view_of, index, cast, _COPIED).run(root, path)
    except _ViewOfAnotherType:
        return _Swap(buffer, new, view_of, index, cast, _CHECKS).run(root, path)


class _Swap:
    """One walk of :func:`swap_buffer`: the buffers swapped so far (the
    buffer, then each view of it met) with their new versions and their
    names, and how the walk rebuilds nodes (``make``). The walk's steps are
    methods, made once, where functions nested in the walk would be made
    again at every swap."""

    __slots__ = ("mapping", "get", "by_name", "names", "items_naming", "view_of", "cast", "make")

    def __init__(self, buffer: Buffer, new: Buffer, view_of, index, cast, make: _Rebuilders):
        self.mapping = {buffer: new}
        self.get = self.mapping.get
        # name -> (buffer, new version): the buffer met is nearly always
        # the very object swapped, told by identity without hashing it
        self.by_name = {buffer.name: (buffer, new)}
        self.names = set(_names_of(buffer))
        self.items_naming = None if index is None else index.items_naming
        self.view_of = view_of
        self.cast = cast
        self.make = make

    def run(self, root: Node, path: Path | None) -> Node:
        """``root`` swapped."""
        if isinstance(root, Stmt):
            return self.stmt(root, path)
        # a function: its body first (the views are found there), then its
        # buffer map and the rest
        body = self.stmt(root.body, None if path is None else path + (("body", None),))
        return map_children(root, lambda c: body if c is root.body else self.any_node(c))

    def new_of(self, b):
        """The new version of buffer ``b``, or None when it is not swapped."""
        # a buffer equal to one of them has its name: most buffers met are
        # told apart by name, without hashing the buffer
        pair = self.by_name.get(b.name)
        if pair is None:
            return None
        return pair[1] if b is pair[0] else self.get(b)

    def swapped(self, b):
        """Buffer ``b`` swapped (itself when it is not one of them)."""
        new = self.new_of(b)
        return b if new is None else new

    def stmt(self, s, path):
        """Statement ``s``, at ``path`` (None: not tracked), swapped."""
        if self.names.isdisjoint(names_in(s)):
            return s
        return self.naming(s, path)

    def naming(self, s, path):
        """Statement ``s``, which names one of the buffers, swapped."""
        kind = type(s)
        if kind is SeqStmt:
            return self.sequence(s, path)
        if kind is For and type(s.min) in _LEAVES and type(s.extent) in _LEAVES and (
                s.annotations is _NO_ANNOTATIONS or not s.annotations):
            # the loop's own fields name no buffer, so its body names one:
            # not asked again
            body = self.naming(s.body, None if path is None else path + (("body", None),))
            return s if body is s.body else self.make.for_body(s, body)
        if kind is BlockRealize:
            return self.realize(s, path)
        if kind is Block:
            return self.block(s, path)
        if kind is BufferStore:
            return self.store(s)
        return self.other_stmt(s, path)

    def sequence(self, s, path):
        """A sequence with the items that name the buffers swapped."""
        seq = s.seq
        chosen = None
        if self.items_naming is not None and path is not None and len(seq) > _ASK_EACH_UP_TO:
            chosen = self.items_naming(path, self.names)
        changes = []
        for i in range(len(seq)) if chosen is None else chosen:
            item = seq[i]
            changed = self.stmt(item, None if path is None else path + (("seq", i),))
            if changed is not item:
                changes.append((i, changed))
        if len(changes) > 1 and len(seq) <= _ONE_EDIT_UP_TO:
            # one edit of the span they cover (the positions come in order)
            first, last = changes[0][0], changes[-1][0]
            items = seq[first:last + 1].tolist()
            for i, changed in changes:
                items[i - first] = changed
            return s.with_items(first, last + 1, items)
        out = s
        for i, changed in changes:
            out = out.with_item(i, changed)
        return out

    def realize(self, s, path):
        """A BlockRealize swapped, its block included."""
        values = self.exprs(s.iter_values)
        predicate = s.predicate
        if type(predicate) not in _LEAVES:  # nearly always the constant true
            predicate = self.expr(predicate)
        # the index answers for no sequence inside a block below the
        # function's root block (FuncIndex.items_naming): paths stop there
        inner = self.block(s.block, None if path is None or len(path) > 1 else path + (("block", None),))
        if values is s.iter_values and predicate is s.predicate and inner is s.block:
            return s
        return self.make.realize(s, values, predicate, inner)

    def block(self, s, path):
        """A Block swapped: its views, regions, buffers, init and body."""
        # the views first: the rest of the block may use them
        match = s.match_buffers
        if match:
            match = self.matches(match)
        reads, writes = self.regions(s.reads), self.regions(s.writes)
        alloc = s.alloc_buffers
        if alloc:
            alloc = self.buffers(alloc)
        init = s.init
        if init is not None:
            init = self.stmt(init, None if path is None else path + (("init", None),))
        body = self.stmt(s.body, None if path is None else path + (("body", None),))
        iter_vars = s.iter_vars
        for iv in iter_vars:  # nearly always over ranges of constants and variables
            if type(iv) is not IterVar or type(iv.dom.min) not in _LEAVES or type(iv.dom.extent) not in _LEAVES:
                iter_vars = self.exprs(iter_vars)
                break
        annotations = s.annotations
        if annotations is not _NO_ANNOTATIONS and annotations:
            annotations = self.attr_map(annotations)
        if (match is s.match_buffers and reads is s.reads and writes is s.writes and alloc is s.alloc_buffers
                and init is s.init and body is s.body and iter_vars is s.iter_vars
                and annotations is s.annotations):
            return s
        return self.make.block(s, iter_vars, reads, writes, body, init, alloc, match, annotations)

    def matches(self, vector):
        """A block's match_buffers swapped; each view of a swapped buffer
        met here is swapped from now on."""
        out = None
        for i, m in enumerate(vector):
            source = m.source.buffer
            if source in self.mapping and m.buffer not in self.mapping:
                if self.cast is not None and self.make is _COPIED and m.buffer.dtype != source.dtype:
                    raise _ViewOfAnotherType
                view = self.view_of(m.buffer, self.mapping[source])
                self.mapping[m.buffer] = view
                self.by_name.setdefault(m.buffer.name, (m.buffer, view))
                self.names.update(_names_of(m.buffer))
            buf, region_ = self.swapped(m.buffer), self.region(m.source)
            if buf is not m.buffer or region_ is not m.source:
                if out is None:
                    out = list(vector)
                out[i] = self.make.match(m, buf, region_)
        return vector if out is None else pvector(out)

    def store(self, s):
        """A BufferStore swapped (its value cast, for a new element type)."""
        buf = self.new_of(s.buffer)
        value, indices = self.expr(s.value), self.exprs(s.indices)
        predicate = s.predicate
        if predicate is not None:
            predicate = self.expr(predicate)
        if buf is not None and self.cast is not None:
            # the value cast to the new type, of its own lanes, which are
            # the store's: the store's rules hold for the new buffer
            value = self.make.cast(self.cast[1].with_lanes(value.dtype.lanes), value)
        if buf is None:
            if value is s.value and indices is s.indices and predicate is s.predicate:
                return s
            buf = s.buffer
        return self.make.store(s, buf, value, indices, predicate)

    def load(self, e):
        """A BufferLoad swapped (cast back, for a new element type)."""
        buf = self.new_of(e.buffer)
        indices = self.exprs(e.indices)
        predicate = e.predicate
        if predicate is not None:
            predicate = self.expr(predicate)
        if buf is not None and self.cast is not None:
            # cast back to the old type: the old load's dtype (a view has
            # its source's type), so what holds it holds it still
            loaded = self.make.retyped_load(e, buf, indices, predicate)
            return self.make.cast(self.cast[0].with_lanes(loaded.dtype.lanes), loaded)
        if buf is None:
            if indices is e.indices and predicate is e.predicate:
                return e
            buf = e.buffer
        return self.make.load(e, buf, indices, predicate)

    def region(self, r):
        """A BufferRegion swapped."""
        buf = r.buffer
        pair = self.by_name.get(buf.name)  # new_of, written out: a block has a few regions
        if pair is not None:
            buf = pair[1] if buf is pair[0] else self.swapped(buf)
        ranges = r.region
        for rng in ranges:
            if type(rng.min) not in _LEAVES or type(rng.extent) not in _LEAVES:
                ranges = self.exprs(ranges)
                break
        if buf is r.buffer and ranges is r.region:
            return r
        return self.make.region(r, buf, ranges)

    def regions(self, vector):
        """A vector of BufferRegions swapped."""
        return _map_vector(vector, self.region) if vector else vector

    def buffers(self, vector):
        """A vector of buffers swapped."""
        return _map_vector(vector, self.swapped)

    def exprs(self, vector):
        """A vector of expressions (or other nodes) swapped."""
        for item in vector:  # nearly always variables and constants alone: nothing to swap
            if type(item) not in _LEAVES:
                return _map_vector(vector, self.expr, _LEAVES)
        return vector

    def expr(self, e):
        """Any node that is not a statement, by kind."""
        kind = type(e)
        if kind in _LEAVES:
            return e
        if kind in OPERAND_NODES:
            a, b = self.expr(e.a), self.expr(e.b)
            if a is e.a and b is e.b:
                return e
            return self.make.operands[kind](e, a, b)
        if kind is BufferLoad:
            return self.load(e)
        if kind is Buffer:
            return self.swapped(e)
        if kind is Range:
            lo, extent = self.expr(e.min), self.expr(e.extent)
            return e if lo is e.min and extent is e.extent else self.make.range(e, lo, extent)
        if kind is IterVar and type(e.dom.min) in _LEAVES and type(e.dom.extent) in _LEAVES:
            return e
        if kind is BufferRegion:
            return self.region(e)
        if kind is Call and e.op == "tir.address_of" and self.cast is not None and len(e.args) == 1 \
                and type(e.args[0]) is BufferLoad and self.new_of(e.args[0].buffer) is not None:
            # the address of an element of the retyped buffer: the element
            # itself, not the value cast back from it, which has no address
            element = self.load(e.args[0])
            return with_fields(e, args=pvector([element.value if type(element) is Cast else element]))
        return map_children(e, self.any_node)

    def any_node(self, n):
        """Any node swapped, statement or not."""
        return self.stmt(n, None) if isinstance(n, Stmt) else self.expr(n)

    def attr_map(self, m):
        """An annotation map swapped."""
        # as map_children treats annotations: a value that is a node is
        # visited, a container of nodes is not entered
        out = {k: self.any_node(v) if isinstance(v, Node) else v for k, v in m.items()}
        return m if all(out[k] is v for k, v in m.items()) else pmap(out)

    def other_stmt(self, s, path):
        """A statement of a kind the walk does not rebuild itself."""
        # a statement of a kind met rarely here: rebuilt and checked by the
        # generic mapper, its statements visited with their paths
        steps = {} if path is None else {id(child): step for step, child in stmt_children(s)}

        def child(c):
            if isinstance(c, Stmt):
                step = steps.get(id(c))
                return self.stmt(c, None if step is None else path + (step,))
            return self.expr(c)

        return map_children(s, child)



def _map_vector(vector, swap, keep=frozenset()):
    """``vector`` with ``swap`` applied to each item (but those of a type in
    ``keep``, which it would return as they are: most indices are variables,
    not worth a call): the same vector when every item comes back as
    itself, else a new one sharing the others."""
    out = None
    i = -1  # counted by hand: an enumerate costs more than the few items of most vectors
    for item in vector:
        i += 1
        if type(item) in keep:
            continue
        changed = swap(item)
        if changed is not item:
            if out is None:
                out = list(vector)
            out[i] = changed
    return vector if out is None else pvector(out)

__all__ = ["copier", "rebuilt_above", "swap_buffer", "replaced_along"]
