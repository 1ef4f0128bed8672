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
of a buffer whose element type changes is cast back to the old one), so
each node the walk rebuilds around a new child holds children of the same
kinds, shapes and dtypes as before: every rule its constructor checks held
for the old node and holds again. Such a node is therefore copied with its
new children (:func:`_swapper`) instead of being checked afresh; a node
whose own buffer changes element type is built through its constructor,
and nodes of kinds the walk does not know go through
:func:`~tirfun.analysis.traversal.map_children`, checked as usual.
"""

from __future__ import annotations

import functools

import attrs
from pyrsistent import pmap, pvector

from ..analysis.mentions import names_in
from ..analysis.traversal import OPERAND_NODES, Path, map_children, stmt_children
from ..nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Cast, DataType, FloatImm, For, IntImm,
    IterVar, MatchBufferRegion, Node, Range, SeqStmt, Stmt, StringImm, Var,
)

#: expression nodes that hold no other node: nothing to swap inside
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


@functools.cache
def _swapper(cls: type, fields: tuple):
    """A function ``(node, *values)``: a copy of the ``cls`` node with the
    ``fields`` set to ``values``, its other fields, its derived dtype
    (expressions) and nothing else carried over, and no rule checked again:
    only for a node whose new children are of the old ones' kinds, shapes
    and dtypes (see the module's docstring). Written out once per class and
    fields, as :func:`~tirfun.nodes.base.with_fields` writes its
    rebuilders."""
    names = [a.name for a in attrs.fields(cls)]
    slots = {s for k in cls.__mro__ for s in getattr(k, "__slots__", ())}
    args = [f"v{k}" for k in range(len(fields))]
    lines = [f"def swap(node, {', '.join(args)}):", "    new = _new(_cls)"]
    for name in names:
        value = args[fields.index(name)] if name in fields else f"node.{name}"
        lines.append(f"    _put(new, {name!r}, {value})")
    if "_dtype" in slots:
        lines.append("    _put(new, '_dtype', node._dtype)")
    lines += ["    _put(new, '_attrs_cached_hash', None)", "    return new"]
    env = {"_new": object.__new__, "_put": object.__setattr__, "_cls": cls}
    exec("\n".join(lines), env)  # the source is built above from field names only
    return env["swap"]


_SWAP_BLOCK = _swapper(Block, ("iter_vars", "reads", "writes", "body", "init", "alloc_buffers", "match_buffers",
                               "annotations"))
_SWAP_REALIZE = _swapper(BlockRealize, ("iter_values", "predicate", "block"))
_SWAP_FOR_BODY = _swapper(For, ("body",))
_SWAP_STORE = _swapper(BufferStore, ("buffer", "value", "indices", "predicate"))
_SWAP_LOAD = _swapper(BufferLoad, ("buffer", "indices", "predicate"))
_SWAP_REGION = _swapper(BufferRegion, ("buffer", "region"))
_SWAP_MATCH = _swapper(MatchBufferRegion, ("buffer", "source"))
_SWAP_RANGE = _swapper(Range, ("min", "extent"))


def _names_of(buffer: Buffer) -> tuple:
    """The names a statement using ``buffer`` mentions: its own, and its
    data pointer's when it has one."""
    return (buffer.name,) if buffer.data is None else (buffer.name, buffer.data.name)


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
    mapping = {buffer: new}
    get = mapping.get
    names = set(_names_of(buffer))
    items_naming = None if index is None else index.items_naming

    def stmt(s, path):
        if names.isdisjoint(names_in(s)):
            return s
        kind = type(s)
        if kind is SeqStmt:
            return sequence(s, path)
        if kind is For and type(s.min) in _LEAVES and type(s.extent) in _LEAVES and not s.annotations:
            body = stmt(s.body, None if path is None else path + (("body", None),))
            return s if body is s.body else _SWAP_FOR_BODY(s, body)
        if kind is BlockRealize:
            return realize(s, path)
        if kind is Block:
            return block(s, path)
        if kind is BufferStore:
            return store(s)
        return other_stmt(s, path)

    def sequence(s, path):
        seq = s.seq
        chosen = None if items_naming is None or path is None else items_naming(path, names)
        out = s
        for i in range(len(seq)) if chosen is None else chosen:
            item = seq[i]
            changed = stmt(item, None if path is None else path + (("seq", i),))
            if changed is not item:
                out = out.with_item(i, changed)
        return out

    def realize(s, path):
        values = exprs(s.iter_values)
        predicate = expr(s.predicate)
        inner = block(s.block, None if path is None else path + (("block", None),))
        if values is s.iter_values and predicate is s.predicate and inner is s.block:
            return s
        return _SWAP_REALIZE(s, values, predicate, inner)

    def block(s, path):
        # the views first: the rest of the block may use them
        match = s.match_buffers
        if match:
            match = matches(match)
        reads, writes = regions(s.reads), regions(s.writes)
        alloc = s.alloc_buffers
        if alloc:
            alloc = buffers(alloc)
        init = s.init
        if init is not None:
            init = stmt(init, None if path is None else path + (("init", None),))
        body = stmt(s.body, None if path is None else path + (("body", None),))
        iter_vars = exprs(s.iter_vars)
        annotations = s.annotations
        if annotations:
            annotations = attr_map(annotations)
        if (match is s.match_buffers and reads is s.reads and writes is s.writes and alloc is s.alloc_buffers
                and init is s.init and body is s.body and iter_vars is s.iter_vars
                and annotations is s.annotations):
            return s
        return _SWAP_BLOCK(s, iter_vars, reads, writes, body, init, alloc, match, annotations)

    def matches(vector):
        out = None
        for i, m in enumerate(vector):
            source = m.source.buffer
            if source in mapping and m.buffer not in mapping:
                view = view_of(m.buffer, mapping[source])
                mapping[m.buffer] = view
                names.update(_names_of(m.buffer))
            buf, region_ = get(m.buffer, m.buffer), region(m.source)
            if buf is not m.buffer or region_ is not m.source:
                if out is None:
                    out = list(vector)
                out[i] = _SWAP_MATCH(m, buf, region_)
        return vector if out is None else pvector(out)

    def store(s):
        buf = get(s.buffer)
        value, indices = expr(s.value), exprs(s.indices)
        predicate = s.predicate
        if predicate is not None:
            predicate = expr(predicate)
        if buf is not None and cast is not None:
            return BufferStore(buf, Cast(cast[1].with_lanes(value.dtype.lanes), value), list(indices), predicate)
        if buf is None:
            if value is s.value and indices is s.indices and predicate is s.predicate:
                return s
            buf = s.buffer
        return _SWAP_STORE(s, buf, value, indices, predicate)

    def load(e):
        buf = get(e.buffer)
        indices = exprs(e.indices)
        predicate = e.predicate
        if predicate is not None:
            predicate = expr(predicate)
        if buf is not None and cast is not None:
            loaded = BufferLoad(buf, list(indices), predicate)
            return Cast(cast[0].with_lanes(loaded.dtype.lanes), loaded)
        if buf is None:
            if indices is e.indices and predicate is e.predicate:
                return e
            buf = e.buffer
        return _SWAP_LOAD(e, buf, indices, predicate)

    def region(r):
        buf = get(r.buffer, r.buffer)
        ranges = r.region
        for rng in ranges:
            if type(rng.min) not in _LEAVES or type(rng.extent) not in _LEAVES:
                ranges = exprs(ranges)
                break
        if buf is r.buffer and ranges is r.region:
            return r
        return _SWAP_REGION(r, buf, ranges)

    def regions(vector):
        out = None
        for i, r in enumerate(vector):
            changed = region(r)
            if changed is not r:
                if out is None:
                    out = list(vector)
                out[i] = changed
        return vector if out is None else pvector(out)

    def buffers(vector):
        out = None
        for i, b in enumerate(vector):
            changed = get(b)
            if changed is not None:
                if out is None:
                    out = list(vector)
                out[i] = changed
        return vector if out is None else pvector(out)

    def exprs(vector):
        out = None
        for i, e in enumerate(vector):
            if type(e) in _LEAVES:
                continue
            changed = expr(e)
            if changed is not e:
                if out is None:
                    out = list(vector)
                out[i] = changed
        return vector if out is None else pvector(out)

    def expr(e):
        """Any node that is not a statement, by kind."""
        kind = type(e)
        if kind in _LEAVES:
            return e
        if kind in OPERAND_NODES:
            a, b = expr(e.a), expr(e.b)
            if a is e.a and b is e.b:
                return e
            return _swapper(kind, ("a", "b"))(e, a, b)
        if kind is BufferLoad:
            return load(e)
        if kind is Buffer:
            return get(e, e)
        if kind is Range:
            lo, extent = expr(e.min), expr(e.extent)
            return e if lo is e.min and extent is e.extent else _SWAP_RANGE(e, lo, extent)
        if kind is IterVar and type(e.dom.min) in _LEAVES and type(e.dom.extent) in _LEAVES:
            return e
        if kind is BufferRegion:
            return region(e)
        return map_children(e, any_node)

    def any_node(n):
        return stmt(n, None) if isinstance(n, Stmt) else expr(n)

    def attr_map(m):
        # as map_children treats annotations: a value that is a node is
        # visited, a container of nodes is not entered
        out = {k: any_node(v) if isinstance(v, Node) else v for k, v in m.items()}
        return m if all(out[k] is v for k, v in m.items()) else pmap(out)

    def other_stmt(s, path):
        # a statement of a kind met rarely here: rebuilt and checked by the
        # generic mapper, its statements visited with their paths
        steps = {} if path is None else {id(child): step for step, child in stmt_children(s)}

        def child(c):
            if isinstance(c, Stmt):
                step = steps.get(id(c))
                return stmt(c, None if step is None else path + (step,))
            return expr(c)

        return map_children(s, child)

    if isinstance(root, Stmt):
        return stmt(root, path)
    # a function: its body first (the views are found there), then its
    # buffer map and the rest
    body = stmt(root.body, None if path is None else path + (("body", None),))
    return map_children(root, lambda c: body if c is root.body else any_node(c))


__all__ = ["swap_buffer"]
