"""Small tree utilities shared by the lowering passes.

Substitution of variables and buffers, the free variables of a tree, fresh
names (:mod:`tirfun.analysis.names`, which the interpreter uses too),
renaming of the names bound inside a copied subtree, and helpers for
conditions and sequences. Nothing here knows about any one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from ..analysis.arith.simplify import conjoin, is_false, is_true
from ..analysis.names import bound_names, fresh_name
from ..analysis.threads import launched_iter_var
from ..analysis.traversal import map_children, transform, walk
from ..nodes import (
    Allocate, And, Buffer, BufferLoad, BufferStore, DeclBuffer, Evaluate, For, IntImm, Let,
    LetStmt, Node, PrimExpr, PrimFunc, SeqStmt, Stmt, Var,
)

def func_names(func: PrimFunc) -> set[str]:
    """All names used in a function, its parameters and buffer map included."""
    return bound_names(func)


def substitute(root: Node, vars: Mapping[Var, PrimExpr] | None = None,
               buffers: Mapping[Buffer, Buffer] | None = None) -> Node:
    """``root`` with every occurrence of the variables in ``vars`` and the
    buffers in ``buffers`` replaced. Unchanged subtrees are shared."""
    vars = dict(vars or {})
    buffers = dict(buffers or {})
    if not vars and not buffers:
        return root

    def post(n: Node) -> Node:
        if isinstance(n, Var):
            return vars.get(n, n)
        if isinstance(n, Buffer):
            return buffers.get(n, n)
        return n

    return transform(root, post)


def free_vars(root: Node) -> list[Var]:
    """The variables used under ``root`` and not bound there, in order of
    first use (loop, let, allocation and launched thread variables are
    bound)."""
    bound: set[Var] = set()
    for n in walk(root):
        if isinstance(n, For):
            bound.add(n.loop_var)
        elif launched_iter_var(n) is not None:
            bound.add(n.node.var)
        elif isinstance(n, (LetStmt, Let)):
            bound.add(n.var)
        elif isinstance(n, Allocate):
            bound.add(n.buffer_var)
    seen: dict[Var, None] = {}
    for n in walk(root):
        if isinstance(n, Var) and n not in bound:
            seen.setdefault(n, None)
    return list(seen)


def rename_bound(stmt: Stmt, used: set[str]) -> tuple[Stmt, set[str]]:
    """Give fresh names to every loop, let and allocation variable bound
    inside ``stmt`` (and to the buffers declared there), so that a copy of a
    subtree keeps names unique within its function. Returns the renamed
    statement and ``used`` extended with the new names."""
    used = set(used)
    var_map: dict[Var, Var] = {}
    for n in walk(stmt):
        if isinstance(n, For):
            v = n.loop_var
        elif isinstance(n, (LetStmt, Let)):
            v = n.var
        elif isinstance(n, Allocate):
            v = n.buffer_var
        else:
            continue
        if v not in var_map:
            name = fresh_name(v.name, used)
            used.add(name)
            var_map[v] = Var(name, v.dtype)
    buf_map: dict[Buffer, Buffer] = {}
    for n in walk(stmt):
        if isinstance(n, DeclBuffer) and n.buffer not in buf_map:
            b = n.buffer
            name = fresh_name(b.name, used)
            used.add(name)
            new = substitute(b, var_map)
            buf_map[b] = attrs.evolve(new, name=name)
    if not var_map and not buf_map:
        return stmt, used
    # buffers first: a declared buffer's data field names an allocation variable
    return substitute(substitute(stmt, None, buf_map), var_map), used


def uses_var(root: Node, var: Var) -> bool:
    """Whether ``var`` occurs under ``root``."""
    return any(n == var for n in walk(root) if isinstance(n, Var))


def vars_in(root: Node) -> set[Var]:
    """Every variable occurring under ``root``."""
    return {n for n in walk(root) if isinstance(n, Var)}


def conjuncts(cond: PrimExpr) -> list[PrimExpr]:
    """``a and b and c`` as ``[a, b, c]``."""
    if isinstance(cond, And):
        return conjuncts(cond.a) + conjuncts(cond.b)
    return [cond]


def nop() -> Stmt:
    """The empty statement, ``T.evaluate(0)``."""
    return Evaluate(IntImm("int32", 0))


def is_nop(s: Stmt) -> bool:
    """Whether ``s`` does nothing (an ``Evaluate`` of a constant)."""
    return isinstance(s, Evaluate) and isinstance(s.value, IntImm)


def seq(stmts: Iterable[Stmt]) -> Stmt:
    """A statement running ``stmts`` in order: nested sequences are flattened,
    empty statements dropped, a single statement returned as is."""
    flat: list[Stmt] = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(x for x in s.seq if not is_nop(x))
        elif not is_nop(s):
            flat.append(s)
    if not flat:
        return nop()
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(flat)


def map_funcs(mod, fn):
    """Apply ``fn`` to every PrimFunc of an IRModule; the same module when
    nothing changed."""
    changed = {}
    for name, f in mod.items():
        g = fn(f)
        if g is not f:
            changed[name] = g
    if not changed:
        return mod
    out = mod
    for name, g in changed.items():
        out = out.with_function(name, g)
    return out


def stores_and_loads(root: Node) -> tuple[list[BufferStore], list[BufferLoad]]:
    """The buffer stores and loads under ``root``."""
    stores, loads = [], []
    for n in walk(root):
        if isinstance(n, BufferStore):
            stores.append(n)
        elif isinstance(n, BufferLoad):
            loads.append(n)
    return stores, loads


def count_nodes(root: Node, limit: int | None = None) -> int:
    """How many nodes the tree holds (counting stops at ``limit``)."""
    k = 0
    for _ in walk(root):
        k += 1
        if limit is not None and k >= limit:
            break
    return k


__all__ = [
    "fresh_name", "bound_names", "func_names", "substitute", "free_vars", "rename_bound",
    "uses_var", "vars_in", "conjuncts", "conjoin", "is_true", "is_false", "nop", "is_nop", "seq",
    "map_funcs", "stores_and_loads", "count_nodes", "map_children",
]
