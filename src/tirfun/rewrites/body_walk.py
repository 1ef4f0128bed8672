"""A walk that rebuilds the node kinds a block's body is nearly always made
of directly: arithmetic, loads, stores, casts, calls and sequences.

Primitives that rewrite a body's accesses (``reindex`` pointing them at a
copy, ``transform_block_layout`` reading the iteration variables through
new ones) would otherwise go through the generic
:func:`~tirfun.analysis.traversal.map_children`, which asks every field of
every node what it holds. A subclass says what becomes of a variable
(:meth:`BodyWalk.var`), of an index (:meth:`BodyWalk.index`), of a load or
store of a buffer it rewrites (:meth:`BodyWalk.load`,
:meth:`BodyWalk.store`), and of any node kind this walk does not know
(:meth:`BodyWalk.other`, the generic way). Unchanged nodes come back as the
same objects.
"""

from __future__ import annotations

from ..analysis.traversal import OPERAND_NODES
from ..nodes import Buffer, BufferLoad, BufferStore, Call, Cast, FloatImm, IntImm, Node, SeqStmt, StringImm, Var
from ..nodes.base import with_fields

_CONSTANTS = frozenset({IntImm, FloatImm, StringImm})


class BodyWalk:
    """The walk; subclasses fill in :meth:`other` and may override the rest."""

    def var(self, n: Var):
        """What a variable becomes (itself by default)."""
        return n

    def index(self, e):
        """What an index of a load or store becomes (its walk by default)."""
        return self.expr(e)

    def other(self, n):
        """A node kind this walk does not rebuild itself: the generic way."""
        raise NotImplementedError

    def expr(self, n):
        kind = type(n)
        if kind is Var:
            return self.var(n)
        if kind in _CONSTANTS:
            return n
        if kind in OPERAND_NODES:
            a, b = self.expr(n.a), self.expr(n.b)
            return n if a is n.a and b is n.b else kind(a, b)
        if kind is BufferLoad:
            return self.load(n)
        if kind is Cast:
            value = self.expr(n.value)
            return n if value is n.value else with_fields(n, value=value)
        if kind is Call:
            args = [self.expr(a) if isinstance(a, Node) and not isinstance(a, Buffer) else a for a in n.args]
            return n if all(a is b for a, b in zip(args, n.args)) else with_fields(n, args=args)
        return self.other(n)

    def load(self, n: BufferLoad):
        """A load, its indices and predicate walked."""
        indices = [self.index(i) for i in n.indices]
        pred = None if n.predicate is None else self.expr(n.predicate)
        if pred is n.predicate and all(a is b for a, b in zip(indices, n.indices)):
            return n
        return with_fields(n, indices=indices, predicate=pred)

    def store(self, n: BufferStore):
        """A store, its value, indices and predicate walked."""
        value = self.expr(n.value)
        indices = [self.index(i) for i in n.indices]
        pred = None if n.predicate is None else self.expr(n.predicate)
        if value is n.value and pred is n.predicate and all(a is b for a, b in zip(indices, n.indices)):
            return n
        return with_fields(n, value=value, indices=indices, predicate=pred)

    def stmt(self, n):
        kind = type(n)
        if kind is BufferStore:
            return self.store(n)
        if kind is SeqStmt:
            items = [self.stmt(s) for s in n.seq]
            return n if all(a is b for a, b in zip(items, n.seq)) else with_fields(n, seq=items)
        return self.other(n)


__all__ = ["BodyWalk"]
