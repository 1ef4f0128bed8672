"""The canonical event stream of a tree, modulo a renaming of bound names.

Structural equality and structural hashing are both defined on this one
stream, which is what makes them consistent: two trees are structurally equal
exactly when their streams are equal, and the hash is a digest of the stream.

The stream walks a tree in a fixed field order. Every node contributes a
token naming its class; every plain field (a dtype, a loop kind, a
constant, an annotation) contributes its value. A block's name does not
count, as in TVM v0.20's Block equality, unless ``names=True`` asks for it. Variables and buffers
are where renaming comes in:

* a *binding position* (a loop variable, a block iteration variable, a let
  variable, a parameter, a buffer of the buffer map, an ``alloc_buffer``, a
  ``match_buffer``, a ``decl_buffer``, an ``Allocate``'s pointer, a thread
  variable of ``T.launch_thread``) pushes the name on a scope stack and
  contributes only its dtype;
* a *use* of a name in scope contributes the depth of its binding on that
  stack, not the name, so a consistent renaming leaves the stream unchanged;
* a *free* variable (used where nothing binds it) contributes its name,
  or, with ``map_free_vars``, the order in which free names were first seen;
* a *free* buffer (accessed where nothing declares it) always contributes
  the order of its first sight, and at first sight its fields, whose free
  variables are mapped the same way: TVM's Buffer equality compares a buffer
  as a definition wherever it meets one, so ``B`` and ``B_global`` that
  nothing declares pair up as long as they keep pairing one to one.

As in TVM, the fields of a buffer declaration (shape, strides, element
offset, data pointer) are themselves binding positions for variables not yet
in scope: ``A = T.match_buffer(a, (n,))`` binds ``n``. A declaration without
a data pointer binds one that nothing names, so it equals a declaration
whose pointer nothing uses (TVMScript prints both alike). A buffer's name is
not part of the stream, only its definition.

A ``SeqStmt`` of one statement streams as that statement, so the two are
structurally equal (print then parse makes the one from the other).

Scopes end with the construct that opened them (a loop's variable is out of
scope after the loop), so a name reused in sibling scopes is two independent
bindings. Each function of a module is walked with a fresh state.

The stream is produced by a generator that takes, through ``send``, whether
to skip the node it just entered: equality skips a subtree that is the very
same object on both sides while every binding so far pairs a name with
itself, which keeps comparing a tree with a lightly rewritten copy of itself
cheap. The walk uses an explicit stack, so deep trees do not exhaust Python's
recursion limit.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import attrs
from pyrsistent import PMap, PVector

from ..nodes import (
    Allocate, AttrStmt, Block, Buffer, DeclBuffer, FloatImm, For, IntImm, IRModule, IterVar, Let,
    LetStmt, Node, PrimFunc, SeqStmt, StringImm, Var,
)
from ..nodes.reducer import CommReducer
from ..nodes.expr import float_bits

# event kinds: what the consumer may do with an event
PLAIN = 0   # a token, nothing more
ENTER = 1   # entering a node whose subtree may be skipped
PUSH = 2    # a name was bound (the event's object is the Var or Buffer)
POP = 3     # scopes closed down to the depth in the token

# task operations of the walk
_NODE, _DEFV, _DEFB, _DEFI, _DEFS, _MATCH, _BMAP, _REST, _FUNCS, _FUNC, _DEFP = range(11)

# the ``implicit`` mark of the fields of an undeclared buffer: their free
# variables are mapped on first sight, as the buffer itself is
_FREE = "free"

#: AttrStmt keys whose Var node binds a thread index for the body
THREAD_ATTR_KEYS = frozenset({"thread_extent", "virtual_thread"})


def value_key(value):
    """A comparable, hashable key of a plain field value.

    Distinguishes ``1``, ``True`` and ``1.0``, ``0.0`` and ``-0.0``, and
    compares floats by their bits (a NaN equals a NaN of the same bits).
    """
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", int(value))
    if isinstance(value, float):
        return ("float", float_bits(value))
    if isinstance(value, str):
        return ("str", str.__str__(value))
    return ("obj", type(value).__qualname__, value)


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


def _generic(node, depth):
    return [(_NODE, getattr(node, name), name) for name in _field_names(type(node))]


def _for(node: For, depth):
    return [(_NODE, node.min, "min"), (_NODE, node.extent, "extent"), (_NODE, node.kind, "kind"),
            (_NODE, node.thread_binding, "thread_binding"), (_NODE, node.annotations, "annotations"),
            (_DEFV, node.loop_var, "loop_var"), (_NODE, node.body, "body"), (_REST, depth, "")]


def _let(node, depth):
    return [(_NODE, node.value, "value"), (_DEFV, node.var, "var"), (_NODE, node.body, "body"),
            (_REST, depth, "")]


def _allocate(node: Allocate, depth):
    return [(_NODE, node.dtype, "dtype"), (_NODE, node.extents, "extents"),
            (_NODE, node.condition, "condition"), (_NODE, node.annotations, "annotations"),
            (_NODE, node.scope, "scope"), (_DEFV, node.buffer_var, "buffer_var"),
            (_NODE, node.body, "body"), (_REST, depth, "")]


def _decl_buffer(node: DeclBuffer, depth):
    return [(_DEFB, node.buffer, "buffer"), (_NODE, node.body, "body"), (_REST, depth, "")]


def _attr_stmt(node: AttrStmt, depth):
    target = node.node
    if isinstance(target, IterVar):
        binder = (_DEFI, target, "node")
    elif isinstance(target, Var) and node.attr_key in THREAD_ATTR_KEYS:
        binder = (_DEFV, target, "node")
    else:
        binder = (_NODE, target, "node")
    return [(_NODE, node.attr_key, "attr_key"), (_NODE, node.value, "value"), binder,
            (_NODE, node.body, "body"), (_REST, depth, "")]


def _block(node: Block, depth):
    # as TVM's Block equality, the name is not compared (names=True adds it)
    return [(_DEFS, (_DEFI, node.iter_vars), "iter_vars"),
            (_DEFS, (_DEFB, node.alloc_buffers), "alloc_buffers"),
            (_DEFS, (_MATCH, node.match_buffers), "match_buffers"),
            (_NODE, node.reads, "reads"), (_NODE, node.writes, "writes"),
            (_NODE, node.init, "init"), (_NODE, node.body, "body"),
            (_NODE, node.annotations, "annotations"), (_REST, depth, "")]


def _named_block(node: Block, depth):
    return [(_NODE, node.name_hint, "name_hint"), *_block(node, depth)]


def _prim_func(node: PrimFunc, depth):
    return [(_DEFS, (_DEFV, node.params), "params"), (_BMAP, node, "buffer_map"),
            (_NODE, node.ret_type, "ret_type"), (_NODE, node.attrs, "attrs"),
            (_NODE, node.body, "body"), (_REST, depth, "")]


def _seq_stmt(node: SeqStmt, depth):
    return [(_NODE, node.seq, "")]  # items print as body[1], not body.seq[1]


def _module(node: IRModule, depth):
    return [(_FUNCS, node.functions, ""), (_NODE, node.attrs, "attrs")]


def _buffer_fields(buf: Buffer, param=None, data_op=_NODE):
    # a parameter's buffer points at the parameter whether or not it says so
    # (the parser gives it the parameter as data only where ``B.data`` is used)
    data = None if param is not None and buf.data == param else buf.data
    # an offset of constant 0 is no offset, and an offset factor of 0 is
    # TVM's 1 (no constraint): TVMScript that spells either out, as TVM's
    # printer and tests do (``elem_offset=0, offset_factor=1``), means the
    # same buffer as one that leaves them out
    offset = buf.elem_offset
    if isinstance(offset, IntImm) and offset.value == 0:
        offset = None
    factor = buf.offset_factor or 1
    return [(_NODE, buf.shape, "shape"), (_NODE, buf.dtype, "dtype"), (_NODE, buf.strides, "strides"),
            (_NODE, offset, "elem_offset"), (_NODE, buf.storage_scope, "scope"),
            (data_op, data, "data"), (_NODE, buf.data_alignment, "data_alignment"),
            (_NODE, factor, "offset_factor"),
            (_NODE, buf.axis_separators, "axis_separators"),
            (_NODE, buf.buffer_type, "buffer_type")]


def _comm_reducer(node, depth):
    # the combiner's variables are bound by the reducer, as a lambda's parameters
    return [(_DEFS, (_DEFV, node.lhs), "lhs"), (_DEFS, (_DEFV, node.rhs), "rhs"),
            (_NODE, node.result, "result"), (_NODE, node.identity_element, "identity_element"),
            (_REST, depth, "")]


_SCHEMA = {
    CommReducer: _comm_reducer,
    For: _for, Let: _let, LetStmt: _let, Allocate: _allocate, DeclBuffer: _decl_buffer,
    AttrStmt: _attr_stmt, Block: _block, PrimFunc: _prim_func, SeqStmt: _seq_stmt,
    IRModule: _module,
}


def events(root, *, map_free_vars: bool = False, label: str = "", names: bool = False) -> Iterator[tuple]:
    """The canonical stream of ``root`` as events ``(token, path, obj, kind)``.

    ``path`` is a linked tuple ``(parent_path, label)`` (render it with
    :func:`render_path`), ``obj`` the value the token came from and ``kind``
    one of PLAIN, ENTER, PUSH, POP. Sending True right after an ENTER event
    skips that node's subtree. A Buffer at the root is walked as a
    definition (its name does not count); anything else as a use. Block
    names are part of the stream only with ``names``.
    """
    schema = {**_SCHEMA, Block: _named_block} if names else _SCHEMA
    scope: dict = {}      # bound Var or Buffer -> depth of its binding
    undo: list = []       # (key, the binding it shadowed or None)
    free: dict = {}       # map_free_vars: free name -> order of first sight
    root_path = (None, label)
    first = _DEFB if type(root) is Buffer else _NODE
    stack: list[tuple] = [(first, root, root_path, False)]

    def bind(key):
        undo.append((key, scope.get(key)))
        scope[key] = len(undo) - 1

    while stack:
        op, x, path, implicit = stack.pop()
        if op == _NODE:
            cls = type(x)
            if cls is Var:
                level = scope.get(x)
                if level is not None:
                    yield ("b", level), path, x, PLAIN
                elif implicit is True:  # a buffer declaration binds a new size variable
                    bind(x)
                    yield ("d", x.dtype, x.type_annotation), path, x, PUSH
                elif map_free_vars or implicit is _FREE or x in free:
                    seen = free.get(x)
                    if seen is None:
                        free[x] = len(free)
                        yield ("F", x.dtype, x.type_annotation), path, x, PLAIN
                    else:
                        yield ("f", seen), path, x, PLAIN
                else:
                    yield ("v", x.name, x.dtype, x.type_annotation), path, x, PLAIN
            elif cls is IntImm:
                yield ("I", x.dtype, x.value), path, x, PLAIN
            elif cls is FloatImm:
                yield ("R", x.dtype, float_bits(x.value)), path, x, PLAIN
            elif cls is StringImm:
                yield ("S", x.value), path, x, PLAIN
            elif cls is Buffer:
                level = scope.get(x)
                if level is not None:
                    yield ("B", level), path, x, PLAIN
                    continue
                # a buffer nothing in the tree declares is mapped on first
                # sight whatever map_free_vars says, as TVM's Buffer equality
                # maps its data pointer and shape as definitions: the name
                # does not count, its fields do, and the pairing is one to one
                seen = free.get(x)
                if seen is not None:
                    yield ("fB", seen), path, x, PLAIN
                    continue
                free[x] = len(free)
                yield ("FB",), path, x, PLAIN
                for op2, value, name in reversed(_buffer_fields(x)):
                    stack.append((op2, value, (path, name), _FREE))
            elif isinstance(x, Node):
                if cls is SeqStmt and len(x.seq) == 1:
                    # a sequence of one is that statement (what TVM's Flatten makes)
                    x = x.seq[0]
                    cls = type(x)
                skip = yield ("T", cls.__qualname__), path, x, (PLAIN if implicit else ENTER)
                if skip:
                    continue
                expand = schema.get(cls, _generic)
                for op2, value, name in reversed(expand(x, len(undo))):
                    stack.append((op2, value, (path, name), implicit))
            elif isinstance(x, (PVector, list, tuple)):
                yield ("n", len(x)), path, x, PLAIN
                for i in range(len(x) - 1, -1, -1):
                    stack.append((_NODE, x[i], (path, f"[{i}]"), implicit))
            elif isinstance(x, (PMap, dict)):
                keys = sorted(x, key=_key_order)
                yield ("k", tuple(value_key(k) if not isinstance(k, Node) else ("node",) for k in keys)), \
                    path, x, PLAIN
                for k in reversed(keys):  # popped in order: each key, then its value
                    stack.append((_NODE, x[k], (path, f"[{_key_order(k)!r}]"), implicit))
                    if isinstance(k, Node):
                        stack.append((_NODE, k, (path, f"[key {_key_order(k)}]"), implicit))
            else:
                yield value_key(x), path, x, PLAIN
        elif op == _DEFV:
            bind(x)
            yield ("d", x.dtype, x.type_annotation), path, x, PUSH
        elif op == _DEFB:
            bind(x)
            yield ("D",), path, x, PUSH
            # ``implicit`` carries the parameter of a buffer_map entry
            for op2, value, name in reversed(_buffer_fields(x, implicit if type(implicit) is Var else None, _DEFP)):
                stack.append((op2, value, (path, name), True))
        elif op == _DEFP:
            # a declared buffer's data pointer, where no outer name gives it,
            # is bound by the declaration; a buffer with no pointer binds one
            # that nothing can name. The parser makes the pointer only where
            # ``B.data`` names it, so a buffer whose pointer a rewrite no
            # longer names compares equal to its printed and parsed copy; a
            # use of the pointer still tells the two apart
            level = None if x is None else scope.get(x)
            if level is not None:
                yield ("b", level), path, x, PLAIN
            else:
                bind(object() if x is None else x)
                yield ("P",), path, x, PUSH
        elif op == _DEFI:
            stack.append((_NODE, x.thread_tag, (path, "thread_tag"), False))
            stack.append((_NODE, x.iter_type, (path, "iter_type"), False))
            stack.append((_DEFV, x.var, (path, "var"), False))
            stack.append((_NODE, x.dom, (path, "dom"), False))
        elif op == _DEFS:
            item_op, items = x
            yield ("n", len(items)), path, items, PLAIN
            for i in range(len(items) - 1, -1, -1):
                stack.append((item_op, items[i], (path, f"[{i}]"), False))
        elif op == _MATCH:
            # the source is a use outside the new view, the buffer a definition
            stack.append((_DEFB, x.buffer, (path, "buffer"), False))
            stack.append((_NODE, x.source, (path, "source"), False))
        elif op == _BMAP:
            present = tuple(p in x.buffer_map for p in x.params)
            yield ("p", present), path, x.buffer_map, PLAIN
            for p in reversed([p for p in x.params if p in x.buffer_map]):
                stack.append((_DEFB, x.buffer_map[p], (path, f"[{p.name}]"), p))
        elif op == _REST:
            while len(undo) > x:
                key, previous = undo.pop()
                if previous is None:
                    del scope[key]
                else:
                    scope[key] = previous
            yield ("r", x), path, None, POP
        elif op == _FUNCS:
            names = sorted(x)
            yield ("M", tuple(names)), path, x, PLAIN
            for name in reversed(names):
                stack.append((_FUNC, x[name], (path, name), False))
        else:  # _FUNC: every function of a module starts afresh
            free.clear()
            stack.append((_REST, len(undo), path, False))
            stack.append((_NODE, x, path, False))


def _key_order(key):
    return key.name if isinstance(key, (Var, Buffer)) else str(key)


def render_path(path) -> str:
    """``main.body.block.body[1].value.b`` from a linked path."""
    labels = []
    while path is not None:
        path, label = path
        if label:
            labels.append(label)
    text = ""
    for label in reversed(labels):
        if text and not label.startswith("["):
            text += "."
        text += label
    return text or "<root>"


__all__ = ["events", "render_path", "value_key", "PLAIN", "ENTER", "PUSH", "POP", "THREAD_ATTR_KEYS"]
