"""Structural equality and hashing, modulo a consistent renaming of bound names.

``structural_equal(a, b)`` holds when ``a`` and ``b`` are the same tree up
to the names of what they bind (loop variables, block iteration variables,
let variables, parameters, declared buffers); dtypes, annotations,
attributes, constants and the order of statements still count. Block names
do not, as TVM v0.20's Block equality ignores ``name_hint``; ``names=True``
compares them too (every function takes it).
Free variables (used where nothing in the compared tree binds them) must be
the same unless ``map_free_vars=True``, which maps them consistently on
first sight. Free buffers (accessed where nothing in the tree declares them)
are always mapped so, by their fields and not their names, as TVM maps a
buffer's data pointer and shape wherever it meets the buffer. ``structural_hash`` agrees with it: structurally equal trees
have the same hash. Both are defined on the canonical stream of
:mod:`tirfun.analysis.canonical`, which also says exactly what counts.

Modules are compared function by function, by name. The hash is a 64-bit
digest of the stream, the same in every process.
"""

from __future__ import annotations

import hashlib

from ..errors import TirfunError
from ..nodes import Buffer, FloatImm, IntImm, Node, Var
from .canonical import ENTER, POP, PUSH, events, render_path


class StructuralMismatch(TirfunError, AssertionError, ValueError):
    """Raised by :func:`assert_structural_equal`: the two trees differ (an
    AssertionError for test runners, and a ValueError as TVM's is).

    The message names the first place where they differ, as a path from the
    root (``main.body.block.body[1].value.b``), the two differing values,
    and shows both trees. ``path``, ``left`` and ``right`` hold the path and
    the two differing values.
    """

    def __init__(self, message: str, path: str = "", left=None, right=None):
        super().__init__(message)
        self.path = path
        self.left = left
        self.right = right


class _Difference:
    """Where two streams first differ."""

    __slots__ = ("path", "left", "right", "detail")

    def __init__(self, path: str, left, right, detail: str):
        self.path = path
        self.left = left
        self.right = right
        self.detail = detail


def structural_equal(a, b, map_free_vars: bool = False, *, names: bool = False) -> bool:
    """Whether ``a`` and ``b`` are equal up to a consistent renaming of the
    variables and buffers they bind (see the module docstring).

    Works on IRModules (functions compared by name), PrimFuncs, statements,
    expressions, buffers (compared as definitions: the name does not count)
    and the other nodes. Block names count only with ``names``.
    """
    return _first_difference(a, b, map_free_vars, names) is None


def assert_structural_equal(a, b, map_free_vars: bool = False, *, names: bool = False) -> None:
    """Raise :class:`StructuralMismatch` unless ``structural_equal(a, b)``.

    The message names the first difference (its path and both values) and
    shows both sides as TVMScript.
    """
    diff = _first_difference(a, b, map_free_vars, names)
    if diff is None:
        return
    message = (f"structural mismatch at {diff.path}: {diff.detail}\n"
               f"--- left\n{_show(a)}\n--- right\n{_show(b)}")
    raise StructuralMismatch(message, diff.path, diff.left, diff.right)


def structural_hash(node, map_free_vars: bool = False, *, names: bool = False) -> int:
    """A 64-bit hash of ``node`` consistent with :func:`structural_equal`:
    equal trees (with the same ``map_free_vars``) hash alike. The value
    depends only on the tree, not on the process."""
    tokens = [_hashable(event[0]) for event in events(node, map_free_vars=map_free_vars, names=names)]
    digest = hashlib.blake2b(repr(tokens).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _hashable(token):
    # value_key() keeps unusual objects as themselves; their repr may name a
    # memory address, so stand in their hash, which agrees with their ==
    if token[0] == "obj":
        return ("obj", token[1], hash(token[2]))
    return token


def _first_difference(a, b, map_free_vars: bool, names: bool = False) -> _Difference | None:
    """Walk both streams in step; None when they agree to the end."""
    if a is b:  # a tree always equals itself, under any mode
        return None
    left = events(a, map_free_vars=map_free_vars, names=names)
    right = events(b, map_free_vars=map_free_vars, names=names)
    # one flag per binding in scope: does it pair two different names?
    renamed: list[bool] = []
    n_renamed = 0
    mapped_free = map_free_vars
    skip = None
    while True:
        try:
            ev_a = left.send(skip)
        except StopIteration:
            ev_a = None
        try:
            ev_b = right.send(skip)
        except StopIteration:
            ev_b = None
        if ev_a is None or ev_b is None:
            if ev_a is None and ev_b is None:
                return None
            ev = ev_a or ev_b
            return _Difference(render_path(ev[1]), a, b, "the trees end at different points")
        token_a, path, obj_a, kind = ev_a
        token_b, _, obj_b, _ = ev_b
        if token_a != token_b:
            return _Difference(render_path(path), obj_a, obj_b, _detail(token_a, token_b, obj_a, obj_b))
        skip = None
        if kind == ENTER:
            # the same object under the same bindings has the same stream
            if obj_a is obj_b and n_renamed == 0 and not mapped_free:
                skip = True
        elif token_a[0] == "FB" and obj_a != obj_b:
            # two different undeclared buffers now pair for the rest of the
            # walk, so the same subtree on both sides may mean different things
            mapped_free = True
        elif kind == PUSH:
            flag = obj_a != obj_b
            renamed.append(flag)
            n_renamed += flag
        elif kind == POP:
            depth = token_a[1]
            while len(renamed) > depth:
                n_renamed -= renamed.pop()


# --------------------------------------------------------------------------
# messages


def _detail(token_a, token_b, a, b) -> str:
    """Say how two differing tokens differ, in words."""
    tag_a, tag_b = token_a[0], token_b[0]
    if isinstance(a, Var) and isinstance(b, Var):
        return _var_detail(token_a, token_b, a, b)
    if isinstance(a, Buffer) and isinstance(b, Buffer):
        return _buffer_detail(token_a, token_b, a, b)
    if tag_a == tag_b == "n":
        return f"length {token_a[1]} vs {token_b[1]}"
    if tag_a == tag_b == "k":
        return f"keys {sorted(a)} vs {sorted(b)}"
    if tag_a == tag_b == "p":
        return "different parameters have buffers"
    if tag_a == tag_b == "M":
        return f"functions {list(token_a[1])} vs {list(token_b[1])}"
    return f"{_describe(a, b)} vs {_describe(b, a)}"


def _var_detail(token_a, token_b, a: Var, b: Var) -> str:
    head = f"Var {_var_text(a, b)} vs Var {_var_text(b, a)}"
    kinds = {token_a[0], token_b[0]}
    if token_a[0] == token_b[0] == "d":
        return f"{head}: bound with different dtypes"
    if token_a[0] == token_b[0] == "b":
        return f"{head}: they refer to different bindings"
    if kinds == {"v"} or kinds <= {"f", "F"}:
        hint = "" if kinds <= {"f", "F"} else " (map_free_vars=True maps free variables)"
        return f"{head}: different free variables{hint}"
    if "b" in kinds and kinds & {"v", "f", "F"}:
        bound_side = a if token_a[0] == "b" else b
        return f"{head}: {bound_side.name} is bound, the other is free"
    return f"{head}: one is bound here, the other refers to an earlier binding"


def _var_text(var: Var, other) -> str:
    if isinstance(other, Var) and other.dtype != var.dtype:
        return f"{var.name}: {var.dtype}"
    return var.name


def _buffer_detail(token_a, token_b, a: Buffer, b: Buffer) -> str:
    head = f"Buffer {a.name} vs Buffer {b.name}"
    if token_a[0] == token_b[0] == "B":
        return f"{head}: they refer to different declarations"
    if token_a[0] == token_b[0] == "fB":
        return f"{head}: they refer to different undeclared buffers"
    if "B" in (token_a[0], token_b[0]):
        declared = a if token_a[0] == "B" else b
        return f"{head}: {declared.name} is declared here, the other is not"
    if {token_a[0], token_b[0]} == {"FB", "fB"}:
        first = a if token_a[0] == "FB" else b
        return f"{head}: {first.name} is an undeclared buffer seen here first, the other was seen before"
    return head


def _describe(x, other) -> str:
    """``IntImm 1``, ``Add A[i] + 1``, ``'float32'``: a short description."""
    if isinstance(x, str):  # dtypes and enums print as their plain spelling
        return repr(str.__str__(x))
    if not isinstance(x, Node):
        return repr(x)
    name = type(x).__name__
    if isinstance(x, (IntImm, FloatImm)):
        text = str(x.value)
        if isinstance(other, (IntImm, FloatImm)) and other.dtype != x.dtype:
            text += f": {x.dtype}"
        return f"{name} {text}"
    text = _one_line(x)
    return f"{name} {text}" if text else name


def _one_line(node: Node, limit: int = 80) -> str:
    try:
        text = node.script()
    except Exception:  # no printer yet, or one that fails on this node
        return ""
    text = text.strip()
    if "\n" in text:
        return ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _show(node) -> str:
    """The whole tree as TVMScript, or a compact stand-in when it cannot be
    printed."""
    if not isinstance(node, Node):
        return repr(node)
    try:
        return node.script()
    except Exception:  # no printer yet, or a tree too deep to print
        pass
    try:
        text = repr(node)
    except RecursionError:
        return f"<{type(node).__name__}: too deep to print>"
    return text if len(text) <= 4000 else text[:4000] + " ..."


__all__ = ["StructuralMismatch", "structural_equal", "assert_structural_equal", "structural_hash"]
