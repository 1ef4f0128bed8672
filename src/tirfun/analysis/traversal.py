"""Generic traversal with structural sharing, and paths into a tree.

Every rewrite in tirfun is built from three operations:

* :func:`map_children` rebuilds a node from transformed children, returning
  the *same object* when no child changed, so untouched subtrees are shared
  between the old and the new tree;
* :func:`find_block` / :func:`find_loop` return the :data:`Path` to a named
  block or loop;
* :func:`replace_at` rebuilds only the nodes along one path.

A path is a tuple of steps ``(field_name, index)``, where ``index`` is the
position inside a sequence field or ``None`` for a plain field.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import attrs
from pyrsistent import PMap, PVector, pmap, pvector

from ..errors import UnknownNameError
from ..nodes.base import rebuilder, with_fields
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, Allocate, AllocateConst, And, AssertStmt, AttrStmt, Block, BlockRealize, Buffer,
    BufferRealize, DeclBuffer, Div, FloatImm, FloorDiv, FloorMod, For, IfThenElse, IntImm, LetStmt, Max, Min, Mod,
    Mul, Node, Or, PrimFunc, SeqStmt, Stmt, StringImm, Sub, Var, While,
)

Step = tuple[str, "int | None"]
Path = tuple[Step, ...]


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


# what a field value is, by its type: a pure function of the type, learnt on
# first sight, so that walking a tree asks no abstract-class isinstance
# question (PVector and PMap are abstract classes, and slow to ask about)
_NOTHING, _NODE, _VECTOR, _MAP = 0, 1, 2, 3
_KINDS: dict[type, int] = {type(None): _NOTHING, str: _NOTHING, int: _NOTHING, bool: _NOTHING,
                           float: _NOTHING}


def _kind(kind: type) -> int:
    found = _KINDS.get(kind)
    if found is None:
        if issubclass(kind, Node):
            found = _NODE
        elif issubclass(kind, PVector):
            found = _VECTOR
        elif issubclass(kind, PMap):
            found = _MAP
        else:
            found = _NOTHING
        _KINDS[kind] = found
    return found


def iter_children(node: Node) -> Iterator[Node]:
    """The direct child nodes of ``node``, in field order. Mapping fields
    (``buffer_map``, annotations) yield their node keys and values."""
    kinds = _KINDS
    for name in _field_names(type(node)):
        value = getattr(node, name)
        kind = kinds.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == _NODE:
            yield value
        elif kind == _VECTOR:
            for item in value:
                if isinstance(item, Node):
                    yield item
        elif kind == _MAP:
            for k in sorted(value, key=_map_key_order):
                if isinstance(k, Node):
                    yield k
                v = value[k]
                if isinstance(v, Node):
                    yield v


@functools.cache
def child_pusher(cls: type):
    """A function ``(node, push)`` that calls ``push`` on each child node
    of a ``cls``, in the order :func:`iter_children` yields them, written
    out once per class (as :func:`_child_mapper` is): for a walk with an
    explicit stack, where asking each field's value what it is costs a
    generator step per field. A node whose mappings are not empty (a
    loop's annotations), or that has a field of a type not known here,
    goes through :func:`iter_children` itself."""
    general = []  # conditions under which the node takes iter_children
    fast = []
    for attribute in attrs.fields(cls):
        name, kind = attribute.name, _field_type(attribute)
        if kind in _PLAIN_FIELD_TYPES:
            continue
        if kind in _NODE_FIELD_TYPES:  # validated as a node (or None) when the node was made
            fast += [f"    v = node.{name}", "    if v is not None:", "        push(v)"]
        elif kind == "PVector":
            general.append(f"type(node.{name}) is not _PVEC")
            fast += [f"    for x in node.{name}:", "        if isinstance(x, _Node):", "            push(x)"]
        elif kind == "PMap":  # annotations: nearly always empty, and then hold no child
            general.append(f"node.{name}")
        else:
            general, fast = ["True"], []
            break
    lines = ["def pusher(node, push):"]
    if general:
        lines += [f"    if {' or '.join(general)}:",
                  "        for x in _iter_children(node):",
                  "            push(x)",
                  "        return"]
    lines += fast or ["    return"]
    env = {"_Node": Node, "_PVEC": _PVEC, "_iter_children": iter_children}
    exec("\n".join(lines), env)  # the source is built above from field names only
    return env["pusher"]


def _map_key_order(key):
    return key.name if hasattr(key, "name") else str(key)


def _map_value(value, fn):
    """Apply ``fn`` to the node(s) inside one field value; same object if unchanged."""
    kind = _KINDS.get(type(value))
    if kind is None:
        kind = _kind(type(value))
    if kind == _NODE:
        return fn(value)
    if kind == _VECTOR:
        changed = False
        out = []
        for item in value:
            new = fn(item) if isinstance(item, Node) else item
            changed = changed or new is not item
            out.append(new)
        return pvector(out) if changed else value
    if kind == _MAP:
        changed = False
        out = {}
        for k, v in value.items():
            nk = fn(k) if isinstance(k, Node) else k
            nv = fn(v) if isinstance(v, Node) else v
            changed = changed or nk is not k or nv is not v
            out[nk] = nv
        return pmap(out) if changed else value
    return value


def map_children(node: Node, fn: Callable[[Node], Node]) -> Node:
    """Rebuild ``node`` with ``fn`` applied to each child node.

    Returns ``node`` itself when ``fn`` returned every child unchanged (by
    identity), so callers get structural sharing for free.
    """
    return _child_mapper(type(node))(node, fn)


#: field types that never hold a node: a mapper does not look at them
_PLAIN_FIELD_TYPES = frozenset({
    "str", "str | None", "int", "float", "bool", "bytes", "DataType", "ForKind", "IterVarType",
})

#: field types that hold one node or None (checked by the field's validator)
_NODE_FIELD_TYPES = frozenset({
    "PrimExpr", "PrimExpr | None", "Stmt", "Stmt | None", "Buffer", "'Buffer'", "Var", "Var | None",
    "Range", "BufferRegion", "StringImm", "Block",
})


def _field_type(attribute) -> str:
    kind = attribute.type
    return kind.__name__ if isinstance(kind, type) else str(kind)


@functools.cache
def _child_mapper(cls: type):
    """:func:`map_children` for a ``cls``, written out once: each field that
    may hold a node is read and mapped in field order, a field that cannot
    (a name, a dtype, a count) is not looked at, and the node is rebuilt
    through :func:`with_fields` only when a child changed. Visiting a node
    is then a few attribute reads, where asking each field's value what it
    is costs a call per field, and rewrites visit every node of what they
    rebuild."""
    lines = ["def mapper(node, fn):", "    changed = None"]
    env = {"_map_value": _map_value, "_with_fields": with_fields, "_Node": Node, "_PVEC": _PVEC}
    for k, attribute in enumerate(attrs.fields(cls)):
        name, kind = attribute.name, _field_type(attribute)
        if kind in _PLAIN_FIELD_TYPES:
            continue
        lines.append(f"    v = node.{name}")
        if kind in _NODE_FIELD_TYPES:
            # validated as a node (or None) when the node was made
            lines.append("    if v is not None:")
            lines.append("        n = fn(v)")
        elif kind == "PVector":
            lines += ["    if type(v) is _PVEC:",
                      "        out = None",
                      "        for i, item in enumerate(v):",
                      "            if isinstance(item, _Node):",
                      "                new = fn(item)",
                      "                if new is not item:",
                      "                    if out is None:",
                      "                        out = list(v)",
                      "                    out[i] = new",
                      "        n = v if out is None else _pvector(out)",
                      "    else:",
                      "        n = _map_value(v, fn)"]
            env["_pvector"] = pvector
        elif kind == "PMap":  # annotations: nearly always empty
            lines.append("    n = _map_value(v, fn) if v else v")
        else:  # fields of any type: asked at run time
            lines.append("    n = _map_value(v, fn)")
        if kind in _NODE_FIELD_TYPES:
            lines += ["        if n is not v:",
                      "            if changed is None:",
                      "                changed = {}",
                      f"            changed[{name!r}] = n"]
        else:
            lines += ["    if n is not v:",
                      "        if changed is None:",
                      "            changed = {}",
                      f"        changed[{name!r}] = n"]
    lines += ["    if changed is None:", "        return node", "    return _with_fields(node, **changed)"]
    exec("\n".join(lines), env)  # the source is built above from field names only
    return env["mapper"]


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree in pre-order (a node before its children)."""
    stack = [node]
    pop, push, pusher_of = stack.pop, stack.append, child_pusher
    while stack:
        current = pop()
        yield current
        # the children go on the stack in their order, then are turned
        # round where there are several, so that the first is taken first
        mark = len(stack)
        pusher_of(type(current))(current, push)
        if len(stack) > mark + 1:
            stack[mark:] = stack[mark:][::-1]


def transform(node: Node, post: Callable[[Node], Node], pre: Callable[[Node], "Node | None"] | None = None) -> Node:
    """Rewrite a tree bottom-up.

    ``pre(n)``, when given, may return a replacement that is used as is (its
    children are not visited). Otherwise the children are transformed first
    and ``post`` is applied to the rebuilt node. Unchanged subtrees are the
    same objects in the result.
    """
    memo: dict[int, Node] = {}

    def visit(n: Node) -> Node:
        key = id(n)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if pre is not None:
            replaced = pre(n)
            if replaced is not None:
                memo[key] = replaced
                return replaced
        out = post(map_children(n, visit))
        memo[key] = out
        return out

    # memo is keyed by id() of nodes of the input tree, which the caller keeps
    # alive for the whole call, so no id can be reused while memo exists
    try:
        return visit(node)
    finally:
        visit = None  # noqa: F841  (it refers to itself: a cycle left for the collector, with the memo)


def transform_plain(node: Node, post=None, pre=None, mapping=None, operands=None) -> Node:
    """``transform(node, post, pre)`` for a ``pre`` that returns None and a
    ``post`` that returns its argument on every variable, constant and
    two-operand node (``a + b``, ``a < b``, ``a and b``...): those are
    rebuilt directly, without asking either (the arithmetic of an
    expression is most of its nodes); with ``mapping`` (Var -> expression)
    a variable is replaced by its value. A two-operand node whose operands
    changed is rebuilt as ``kind(a, b)``, or by ``operands(kind, a, b)``
    when given (to fold constants, say). The memo is transform's: a subtree
    held twice is rewritten once and stays shared."""
    memo: dict = {}

    def visit(n):
        kind = type(n)
        if kind is Var:
            return n if mapping is None else mapping.get(n, n)
        if kind in _LEAF_CONSTANTS:
            return n
        key = id(n)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if kind in OPERAND_NODES:
            a, b = visit(n.a), visit(n.b)
            if a is n.a and b is n.b:
                out = n
            else:
                out = kind(a, b) if operands is None else operands(kind, a, b)
        else:
            out = None if pre is None else pre(n)
            if out is None:
                out = map_children(n, visit)
                if post is not None:
                    out = post(out)
        memo[key] = out
        return out

    try:
        return visit(node)
    finally:
        visit = None  # noqa: F841  (it refers to itself: a cycle left for the collector, with the memo)


def substitute_vars(node: Node, mapping, enter_buffer: Callable[[Buffer], bool] | None = None) -> Node:
    """``node`` with the variables of ``mapping`` (Var -> expression)
    replaced; unchanged subtrees are the same objects (see
    :func:`transform_plain`). A buffer is entered (its shape, strides,
    offset and pointer substituted) where ``enter_buffer(buffer)`` says so,
    and kept as it is otherwise."""
    if not mapping:
        return node

    def pre(n):
        if isinstance(n, Var):  # a subclass of Var
            return mapping.get(n, n)
        if isinstance(n, Buffer) and (enter_buffer is None or not enter_buffer(n)):
            return n
        return None

    return transform_plain(node, None, pre, mapping)


#: the node types whose only fields are the operands ``a`` and ``b`` (a
#: rewrite of expressions rebuilds them as ``kind(a, b)``)
OPERAND_NODES = frozenset({Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or})
_LEAF_CONSTANTS = frozenset({IntImm, FloatImm, StringImm})


def rename(node: Node, mapping) -> Node:
    """``node`` with every variable and buffer whose name is a key of
    ``mapping`` renamed to its value. Names are identities inside a
    function, so renaming by name renames each binding with all its uses;
    the caller keeps the new names unique."""
    if not mapping:
        return node

    def post(n: Node) -> Node:
        if isinstance(n, Var) and n.name in mapping:
            return Var(mapping[n.name], n.dtype, n.type_annotation)
        if isinstance(n, Buffer) and n.name in mapping:
            return attrs.evolve(n, name=mapping[n.name])
        return n

    return transform(node, post)


# --------------------------------------------------------------------------
# statement-level structure: only these fields hold statements

_STMT_FIELDS: dict[type, tuple[str, ...]] = {
    For: ("body",),
    SeqStmt: ("seq",),
    IfThenElse: ("then_case", "else_case"),
    LetStmt: ("body",),
    AttrStmt: ("body",),
    AssertStmt: ("body",),
    While: ("body",),
    AllocateConst: ("body",),
    BufferRealize: ("body",),
    Allocate: ("body",),
    DeclBuffer: ("body",),
    BlockRealize: ("block",),
    Block: ("init", "body"),
    PrimFunc: ("body",),
}


#: the statement-holding fields of each statement type (read-only)
STMT_FIELDS = _STMT_FIELDS
_PVEC = type(pvector())


def stmt_children(node: Node) -> Iterator[tuple[Step, Stmt]]:
    """The statement children of ``node`` with the step leading to each."""
    for name in _STMT_FIELDS.get(type(node), ()):
        value = getattr(node, name)
        if value is None:
            continue
        # PVector is an abstract class: test the concrete type first
        if type(value) is _PVEC or isinstance(value, PVector):
            for i, item in enumerate(value):
                yield (name, i), item
        else:
            yield (name, None), value


def walk_stmts(root: Node, path: Path = (), *, skip_init: bool = False) -> Iterator[tuple[Path, Stmt]]:
    """Every statement under ``root`` (root included when it is one) with its
    path, in pre-order. Expressions are not entered. ``skip_init`` leaves
    out what blocks' inits hold, which a schedule does not reach into."""
    stack: list[tuple[Path, Node]] = [(path, root)]
    while stack:
        p, current = stack.pop()
        if isinstance(current, Stmt):
            yield p, current
        kids = [(p + (step,), child) for step, child in stmt_children(current)
                if not (skip_init and step[0] == "init")]
        stack.extend(reversed(kids))


def stmt_nodes(root: Node, *, skip_init: bool = False) -> Iterator[Stmt]:
    """Every statement under ``root`` (root included when it is one), in
    the pre-order of :func:`walk_stmts` (``skip_init`` as there), without
    making their paths: for a caller that wants the statements only."""
    stack: list[Node] = [root]
    pop, push, extend, fields_of = stack.pop, stack.append, stack.extend, _STMT_FIELDS.get
    while stack:
        current = pop()
        if isinstance(current, Stmt):
            yield current
        names = fields_of(type(current))
        if not names:
            continue
        # the children go on in their order, then are turned round, so
        # that the first is taken first (stmt_children's order)
        mark = len(stack)
        for name in names:
            if skip_init and name == "init":
                continue
            value = getattr(current, name)
            if value is None:
                continue
            if type(value) is _PVEC or isinstance(value, PVector):
                extend(value)
            else:
                push(value)
        if len(stack) > mark + 1:
            stack[mark:] = stack[mark:][::-1]


def get_at(root: Node, path: Path) -> Node:
    """The node at ``path`` below ``root``."""
    node = root
    for name, index in path:
        value = getattr(node, name)
        node = value if index is None else value[index]
    return node


def nodes_along(root: Node, path: Path) -> list:
    """The nodes at every prefix of ``path`` below ``root``, ``root`` first
    and the node at ``path`` last."""
    out = [root]
    node = root
    for name, index in path:
        value = getattr(node, name)
        node = value if index is None else value[index]
        out.append(node)
    return out


def replace_at(root: Node, path: Path, new: Node, *, rebuild=None) -> Node:
    """``root`` with the node at ``path`` replaced by ``new``; only the nodes
    along the path are rebuilt, each by ``rebuild(cls, fields)`` (by
    default :func:`rebuilder`, which checks the node's rules again)."""
    rebuild = rebuilder if rebuild is None else rebuild
    if not path:
        return new
    # down the path once, then up it rebuilding each node with its new child
    nodes = nodes_along(root, path)
    if nodes[-1] is new:
        return root
    child = new
    for k in range(len(path) - 1, -1, -1):
        parent = nodes[k]
        name, index = path[k]
        if index is None:
            child = rebuild(type(parent), (name,))(parent, child)
        elif type(parent) is SeqStmt:
            child = parent.with_item(index, child)  # not a rebuild of every item
        else:
            child = rebuild(type(parent), (name,))(parent, getattr(parent, name).set(index, child))
    return child


def find_block(root: Node, name: str) -> Path:
    """The path to the Block named ``name`` (the BlockRealize is one step up).

    Raises :class:`UnknownNameError` when there is none.
    """
    for path, stmt in walk_stmts(root):
        if isinstance(stmt, Block) and stmt.name_hint == name:
            return path
    raise UnknownNameError(f"no block named {name!r}")


def find_loop(root: Node, name: str) -> Path:
    """The path to the For whose loop variable is named ``name``."""
    for path, stmt in walk_stmts(root):
        if isinstance(stmt, For) and stmt.loop_var.name == name:
            return path
    raise UnknownNameError(f"no loop named {name!r}")


def blocks(root: Node) -> Iterator[tuple[Path, Block]]:
    """Every block with its path, in pre-order."""
    for path, stmt in walk_stmts(root):
        if isinstance(stmt, Block):
            yield path, stmt


def loops(root: Node) -> Iterator[tuple[Path, For]]:
    """Every loop with its path, in pre-order."""
    for path, stmt in walk_stmts(root):
        if isinstance(stmt, For):
            yield path, stmt


def ancestors(root: Node, path: Path) -> list[tuple[Path, Node]]:
    """The nodes from ``root`` down to (not including) the node at ``path``,
    each with its own path."""
    out = []
    node = root
    for i, (name, index) in enumerate(path):
        out.append((path[:i], node))
        value = getattr(node, name)
        node = value if index is None else value[index]
    return out


__all__ = [
    "Step", "Path", "STMT_FIELDS", "iter_children", "map_children", "walk", "transform", "rename", "stmt_children",
    "substitute_vars", "transform_plain", "OPERAND_NODES",
    "walk_stmts", "stmt_nodes", "get_at", "nodes_along", "replace_at", "find_block", "find_loop", "blocks", "loops",
    "ancestors",
]
