"""How many arithmetic operations a program runs: TVM's ``estimate_tir_flops``.

Each binary arithmetic operator (``+ - * / % // min max``, on any type)
counts one each time it runs; comparisons, logic, loads, casts, constants
and the call itself count nothing (a call's arguments do). A loop multiplies
its body by the largest value its extent can take (from the ranges of the
loops around it; 1 where nothing but its type bounds it), an ``if`` with an ``else`` and a
select count the costlier branch, type by type, and a function whose
``estimated_flops`` attribute is set counts that instead. These are TVM's
rules, so the figures agree with TVM's; where TVM's estimator stops at a
statement or expression it has no rule for (an ``evaluate``, a ``while``, an
assertion, a vector ramp or a ``let`` expression), this one counts what
they contain, a ``while`` loop's body once.
"""

from __future__ import annotations

from collections import Counter

from ..errors import TirfunError
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, AssertStmt, AttrStmt, Block, BlockRealize, BufferLoad, BufferStore, Div,
    Evaluate, FloatImm, FloorDiv, FloorMod, For, IfThenElse, IntImm, IRModule, LetStmt, Max, Min, Mod, Mul,
    PrimExpr, PrimFunc, Select, Stmt, StringImm, Sub, Var, While,
)
from .arith import const_interval
from .traversal import iter_children, stmt_children

_ARITHMETIC = frozenset({Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max})
_UNCOUNTED = frozenset({EQ, NE, LT, LE, GT, GE, BufferLoad, Var, IntImm, FloatImm, StringImm})


def estimate_flops(node) -> float:
    """The operations ``node`` (an IRModule, a PrimFunc or a statement)
    runs, by the rules of the module docstring."""
    if isinstance(node, IRModule):
        total = 0.0
        for name in node:
            total += estimate_flops(node[name])
        return total
    if isinstance(node, PrimFunc):
        given = node.attrs.get("estimated_flops")
        if given is not None:
            return float(given.value if hasattr(given, "value") else given)
        node = node.body
    if not isinstance(node, Stmt):
        raise TirfunError(f"estimate_flops takes an IRModule, a PrimFunc or a statement, got "
                          f"{type(node).__name__}")
    return float(sum(_Counter().stmt(node).values()))


class _Counter:
    """One count; ``env`` holds the ranges of the loops in scope."""

    def __init__(self):
        self.env: dict = {}

    def stmt(self, s: Stmt) -> Counter:
        kind = type(s)
        if kind is For:
            out = self.stmt_in_loop(s)
        elif kind is BufferStore:
            out = self.expr(s.value)
        elif kind is BlockRealize:
            out = self.block(s.block)
        elif kind is Block:
            out = self.block(s)
        elif kind is IfThenElse:
            out = self.expr(s.condition)
            then = self.stmt(s.then_case)
            out += then if s.else_case is None else _most(then, self.stmt(s.else_case))
        elif kind is LetStmt:
            out = self.expr(s.value) + self.stmt(s.body)
        elif kind is AttrStmt:
            out = self.stmt(s.body) + self.expr(s.value) if isinstance(s.value, PrimExpr) else self.stmt(s.body)
        elif kind is Evaluate:
            out = self.expr(s.value)
        elif kind is AssertStmt:
            out = self.expr(s.condition) + self.stmt(s.body)
        elif kind is While:
            out = self.expr(s.condition) + self.stmt(s.body)
        else:  # sequences, allocations, declarations: what they hold
            out = Counter()
            for _, child in stmt_children(s):
                out += self.stmt(child)
        return out

    def block(self, b: Block) -> Counter:
        out = self.stmt(b.init) if b.init is not None else Counter()
        return out + self.stmt(b.body)

    def stmt_in_loop(self, loop: For) -> Counter:
        lo_min, hi_min = const_interval(loop.min, self.env)
        _, hi_extent = const_interval(loop.extent, self.env)
        saved = self.env.get(loop.loop_var)
        if None not in (lo_min, hi_min, hi_extent):
            self.env[loop.loop_var] = (lo_min, hi_min + max(hi_extent, 1) - 1)
        else:
            self.env.pop(loop.loop_var, None)
        body = self.stmt(loop.body)
        if saved is None:
            self.env.pop(loop.loop_var, None)
        else:
            self.env[loop.loop_var] = saved
        # nothing but the type bounds a size parameter: TVM then means to
        # count once (it does for an int64 size, and multiplies by 2**31 - 1
        # for an int32 one, whose type's bound it takes for a real one)
        unbounded = hi_extent is None or hi_extent >= loop.extent.dtype.max_value()
        times = 1 if unbounded else max(hi_extent, 0)
        return Counter({k: v * times for k, v in body.items()})

    def expr(self, e) -> Counter:
        out: Counter = Counter()
        stack = [e]
        while stack:
            n = stack.pop()
            kind = type(n)
            if kind in _ARITHMETIC:
                out[str(n.dtype)] += 1
                stack.append(n.a)
                stack.append(n.b)
            elif kind is Select:
                stack.append(n.condition)
                out += _most(self.expr(n.true_value), self.expr(n.false_value))
            elif kind in _UNCOUNTED or not isinstance(n, PrimExpr):
                continue  # a comparison counts nothing, its operands neither (as TVM)
            else:  # logic, casts, a call's arguments, vectors, lets
                stack.extend(c for c in iter_children(n) if isinstance(c, PrimExpr))
        return out


def _most(a: Counter, b: Counter) -> Counter:
    """Type by type, the larger count (TVM's ``MaxWith``)."""
    out = Counter(a)
    for k, v in b.items():
        if out[k] < v:
            out[k] = v
    return out


__all__ = ["estimate_flops"]
