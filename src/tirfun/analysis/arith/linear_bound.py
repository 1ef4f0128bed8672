"""Symbolic bounds of integer index expressions, with exactness.

The bound of an expression is a :class:`LinearInterval` whose two ends are
:class:`~tirfun.analysis.arith.linear.Linear` forms over the *kept*
variables, after every *relaxed* variable has been replaced by its range.
The caller decides which variables are relaxed by listing them in
``ranges``: typically the loops inside a block (relaxed) while the block's
own iteration variables, scalar parameters and symbolic shapes stay symbolic
(kept). So the access ``A[vi * 4 + j]`` with ``j`` relaxed over ``[0, 3]``
bounds to ``[4*vi, 4*vi + 3]``.

* :func:`bound` ``(expr, ranges) -> LinearInterval``
* :func:`loop_interval` ``(var, min, extent, ranges)``, the range of a loop
  variable, for use in ``ranges``; :func:`let_interval` ``(var, value,
  ranges)`` that of a let-bound variable
* :func:`const_bounds` ``(linear, facts) -> (lo, hi)``, constant bounds of a
  linear form given ranges of its variables (``None`` where unbounded)

An end of ``None`` means unbounded on that side (the expression is not affine
there, or reads memory). Intervals are sound for the values the index
arithmetic denotes (the verifier's reading: an index that wraps is out of
bounds anyway); ``exact`` says more: for each value of the kept variables,
both ends are attained by some values of the relaxed variables, so a bound
outside a region proves that some access really goes outside it.

(:mod:`~tirfun.analysis.arith.int_set` answers the neighbouring question with
TIR-expression ends, for region inference.)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import attrs
from pyrsistent import PVector

from ...nodes import (
    Add, Broadcast, BufferLoad, Call, Cast, Div, FloorDiv, FloorMod, IntImm, Let, Max,
    Min, Mod, Mul, PrimExpr, Ramp, Select, Sub, Var,
)
from .linear import Linear
from .terms import corners as _corners


@attrs.frozen
class LinearInterval:
    """``[lo, hi]`` (both ends included); an end of None is unbounded.

    ``deps`` are the relaxed variables the ends were computed from; ``exact``
    is True when both ends are attained (see the module docstring); ``dense``
    when every integer between the ends is (the range of a loop variable).
    """

    lo: Linear | None
    hi: Linear | None
    exact: bool = False
    deps: frozenset = frozenset()
    dense: bool = False

    @staticmethod
    def point(linear: Linear) -> "LinearInterval":
        """The single value ``linear``."""
        return LinearInterval(linear, linear, True, frozenset())

    @staticmethod
    def constant(lo: int, hi: int, exact: bool = True) -> "LinearInterval":
        """The constant interval ``[lo, hi]``."""
        return LinearInterval(Linear.constant(lo), Linear.constant(hi), exact, frozenset())

    @property
    def is_const(self) -> bool:
        """Both ends known and free of variables."""
        return self.lo is not None and self.hi is not None and self.lo.is_const and self.hi.is_const

    @property
    def is_point(self) -> bool:
        """A single known value (the two ends are the same form)."""
        return self.lo is not None and self.lo == self.hi


_UNKNOWN = LinearInterval(None, None, False, frozenset())


def _diff(a: Linear | None, b: Linear | None) -> int | None:
    """``a - b`` when it is a constant."""
    if a is None or b is None:
        return None
    d = a - b
    return d.const if d.is_const else None


def _lesser(a: Linear | None, b: Linear | None) -> Linear | None:
    d = _diff(a, b)
    if d is None:
        return None
    return a if d <= 0 else b


def _greater(a: Linear | None, b: Linear | None) -> Linear | None:
    d = _diff(a, b)
    if d is None:
        return None
    return a if d >= 0 else b


def _add(x: LinearInterval, y: LinearInterval, sign: int) -> LinearInterval:
    if sign > 0:
        lo = None if x.lo is None or y.lo is None else x.lo + y.lo
        hi = None if x.hi is None or y.hi is None else x.hi + y.hi
    else:
        lo = None if x.lo is None or y.hi is None else x.lo - y.hi
        hi = None if x.hi is None or y.lo is None else x.hi - y.lo
    # independent sources reach their extremes together; shared ones may not
    exact = x.exact and y.exact and not (x.deps & y.deps)
    return LinearInterval(lo, hi, exact, x.deps | y.deps)


def _scale(x: LinearInterval, k: int) -> LinearInterval:
    if k >= 0:
        lo = None if x.lo is None else x.lo.scale(k)
        hi = None if x.hi is None else x.hi.scale(k)
    else:
        lo = None if x.hi is None else x.hi.scale(k)
        hi = None if x.lo is None else x.lo.scale(k)
    return LinearInterval(lo, hi, x.exact, x.deps)


def _const_value(x: LinearInterval) -> int | None:
    if x.is_point and x.lo.is_const:
        return x.lo.const
    return None


def _mul(x: LinearInterval, y: LinearInterval) -> LinearInterval:
    k = _const_value(y)
    if k is not None:
        return _scale(x, k)
    k = _const_value(x)
    if k is not None:
        return _scale(y, k)
    if x.is_const and y.is_const:
        lo, hi = _corners(x.lo.const, x.hi.const, y.lo.const, y.hi.const)
        return LinearInterval.constant(lo, hi, False)
    return LinearInterval(None, None, False, x.deps | y.deps)


def _floordiv(x: LinearInterval, y: LinearInterval) -> LinearInterval:
    k = _const_value(y)
    if k is None and x.lo is not None and x.hi is not None and x.lo.is_const and x.hi.is_const:
        # by any nonzero integer, a quotient is no larger than the dividend
        # in magnitude (-1 // n lies in [-1, 1], whatever n is)
        m = max(abs(x.lo.const), abs(x.hi.const))
        return LinearInterval(Linear.constant(-m), Linear.constant(m), False, x.deps | y.deps)
    if k is None or k <= 0:
        return LinearInterval(None, None, False, x.deps | y.deps)
    lo = None if x.lo is None else x.lo.floordiv(k)
    hi = None if x.hi is None else x.hi.floordiv(k)
    # floordiv is monotone, so attained ends stay attained
    exact = x.exact and lo is not None and hi is not None
    return LinearInterval(lo, hi, exact, x.deps)


def _floormod(x: LinearInterval, y: LinearInterval) -> LinearInterval:
    k = _const_value(y)
    if k is None or k <= 0:
        return LinearInterval(None, None, False, x.deps | y.deps)
    full = LinearInterval.constant(0, k - 1, False)
    if x.lo is None or x.hi is None:
        return LinearInterval(full.lo, full.hi, False, x.deps)
    span = x.hi - x.lo
    if x.lo.terms != x.hi.terms or not span.is_const or any(c % k for _, c in x.lo.terms):
        return LinearInterval(full.lo, full.hi, False, x.deps)
    # the variable part is a multiple of k: the remainder depends on the constants only
    lo_c, hi_c = x.lo.const, x.hi.const
    if lo_c // k == hi_c // k:
        return LinearInterval(Linear.constant(lo_c % k), Linear.constant(hi_c % k), x.exact, x.deps)
    return LinearInterval(full.lo, full.hi, False, x.deps)


def _dense_floormod(out: LinearInterval, args: list[LinearInterval]) -> LinearInterval:
    """``v % c`` of a loop variable: the loop takes every value of its range,
    so a range of at least ``c`` values reaches both 0 and ``c - 1``."""
    x, k = args[0], _const_value(args[1])
    if not (x.exact and x.dense) or k is None or k <= 0 or x.lo is None or x.hi is None:
        return out
    span = x.hi - x.lo
    if span.is_const and span.const >= k - 1:
        return LinearInterval(Linear.constant(0), Linear.constant(k - 1), True, x.deps)
    return out


def _nonnegative(x: LinearInterval) -> bool:
    return x.lo is not None and x.lo.is_const and x.lo.const >= 0


def _trunc(x: LinearInterval, y: LinearInterval, floor_version) -> LinearInterval:
    # truncated and floored division agree on non-negative operands
    if _nonnegative(x) and _nonnegative(y):
        return floor_version(x, y)
    return LinearInterval(None, None, False, x.deps | y.deps)


def _min(x: LinearInterval, y: LinearInterval) -> LinearInterval:
    lo = _lesser(x.lo, y.lo)
    hi = _lesser(x.hi, y.hi)
    if hi is None:  # min(a, b) <= a whatever b is
        hi = x.hi if x.hi is not None else y.hi
    return LinearInterval(lo, hi, False, x.deps | y.deps)


def _max(x: LinearInterval, y: LinearInterval) -> LinearInterval:
    lo = _greater(x.lo, y.lo)
    if lo is None:
        lo = x.lo if x.lo is not None else y.lo
    hi = _greater(x.hi, y.hi)
    return LinearInterval(lo, hi, False, x.deps | y.deps)


def _hull(x: LinearInterval, y: LinearInterval) -> LinearInterval:
    return LinearInterval(_lesser(x.lo, y.lo), _greater(x.hi, y.hi), False, x.deps | y.deps)


def _ramp(base: LinearInterval, stride: LinearInterval, lanes: int) -> LinearInterval:
    k = _const_value(stride)
    if k is None:
        return LinearInterval(None, None, False, base.deps | stride.deps)
    span = k * (lanes - 1)
    lo = None if base.lo is None else base.lo + min(0, span)
    hi = None if base.hi is None else base.hi + max(0, span)
    return LinearInterval(lo, hi, base.exact, base.deps)


_BINARY = {
    Add: lambda x, y: _add(x, y, 1),
    Sub: lambda x, y: _add(x, y, -1),
    Mul: _mul,
    FloorDiv: _floordiv,
    FloorMod: _floormod,
    Div: lambda x, y: _trunc(x, y, _floordiv),
    Mod: lambda x, y: _trunc(x, y, _floormod),
    Min: _min,
    Max: _max,
}


def _operands(node: PrimExpr):
    """The sub-expressions a bound is combined from, or None for a leaf."""
    cls = type(node)
    if cls in _BINARY:
        return (node.a, node.b)
    if cls is Cast:
        if node.dtype.is_integer and node.value.dtype.is_integer:
            return (node.value,)
        return None
    if cls is Select:
        return (node.condition, node.true_value, node.false_value)
    if cls is Call and node.op == "tir.if_then_else" and len(node.args) == 3:
        return tuple(node.args)
    if cls is Ramp:
        return (node.base, node.stride)
    if cls is Broadcast:
        return (node.value,)
    return None


def _combine(node: PrimExpr, args: list[LinearInterval]) -> LinearInterval:
    cls = type(node)
    op = _BINARY.get(cls)
    if op is not None:
        return op(args[0], args[1])
    if cls is Ramp:
        return _ramp(args[0], args[1], node.lanes)
    if cls in (Cast, Broadcast):
        return args[0]
    # Select, if_then_else: either branch, chosen by a condition that may vary
    out = _hull(args[1], args[2])
    return LinearInterval(out.lo, out.hi, False, out.deps | args[0].deps)


def _leaf(node, ranges: Mapping) -> LinearInterval | None:
    """The bound of a leaf, or None when ``node`` is combined from operands."""
    cls = type(node)
    if cls is Var:
        found = ranges.get(node)
        if found is not None:
            return found
        if _is_index(node):
            return LinearInterval.point(Linear.of_var(node))
        return _UNKNOWN
    if cls is IntImm:
        return LinearInterval.point(Linear.constant(node.value))
    if cls is Let or _operands(node) is not None:
        return None
    return _opaque(node, ranges)


def _is_index(node) -> bool:
    dtype = node.dtype
    return dtype.is_integer and dtype.lanes == 1


def _opaque(node, ranges: Mapping) -> LinearInterval:
    """A sub-expression not followed (a load, a call, a comparison): an atom
    when it depends on kept variables only, unbounded otherwise."""
    deps, pure = _scan(node, ranges)
    if deps or not _is_index(node):
        return LinearInterval(None, None, False, frozenset(deps))
    atom = Linear.of_var(node)
    # a load or call may give another value elsewhere in the block: not exact
    return LinearInterval(atom, atom, pure, frozenset())


def _scan(node, ranges: Mapping) -> tuple[set, bool]:
    """The relaxed variables inside ``node``, and whether it is free of
    loads and calls."""
    deps: set = set()
    pure = True
    stack = [node]
    while stack:
        x = stack.pop()
        cls = type(x)
        if cls is Var:
            if x in ranges:
                deps.add(x)
            continue
        if cls is BufferLoad or (cls is Call and x.op != "tir.if_then_else"):
            pure = False
        for name in _child_fields(cls):
            value = getattr(x, name)
            if isinstance(value, PrimExpr):
                stack.append(value)
            elif isinstance(value, PVector):
                stack.extend(v for v in value if isinstance(v, PrimExpr))
    return deps, pure


@functools.cache
def _child_fields(cls) -> tuple[str, ...]:
    if not attrs.has(cls):
        return ()
    return tuple(a.name for a in attrs.fields(cls))


def _atomize(node, result: LinearInterval, args: list[LinearInterval]) -> LinearInterval:
    """Keep a non-affine combination of kept variables whole, as an atom."""
    if result.deps or (result.is_point and result.exact) or not _is_index(node):
        return result
    atom = Linear.of_var(node)
    return LinearInterval(atom, atom, all(a.exact for a in args), frozenset())


def bound(expr: PrimExpr, ranges: Mapping | None = None) -> LinearInterval:
    """The interval of the integer expression ``expr`` when each variable of
    ``ranges`` (a mapping from Var to LinearInterval) takes any value of its range.

    Variables not in ``ranges`` stay symbolic in the result. Sound for every
    input: an unknown part gives an unbounded end, never a wrong one. Evaluated
    with an explicit stack, so deep expressions do not exhaust the recursion
    limit.
    """
    ranges = {} if ranges is None else ranges
    results: list[LinearInterval] = []
    stack: list[tuple] = [(expr, ranges, 0)]
    while stack:
        node, env, phase = stack.pop()
        if phase == 0:
            leaf = _leaf(node, env)
            if leaf is not None:
                results.append(leaf)
            elif type(node) is Let:
                stack.append((node, env, 2))
                stack.append((node.value, env, 0))
            else:
                kids = _operands(node)
                stack.append((node, env, 1))
                stack.extend((k, env, 0) for k in reversed(kids))
        elif phase == 1:
            n = len(_operands(node))
            args = results[-n:]
            del results[-n:]
            out = _combine(node, args)
            if type(node) is FloorMod and type(node.a) is Var and node.a in env:
                out = _dense_floormod(out, args)
            results.append(_atomize(node, out, args))
        else:  # Let: the body's bound, with the variable ranging over the value's
            inner = dict(env)
            inner[node.var] = _as_let(node.var, results.pop())
            stack.append((node.body, inner, 0))
    return results[-1]


def _as_let(var: Var, value: LinearInterval) -> LinearInterval:
    # the variable is relaxed over its value's range: as the source of what it
    # bounds, it keeps expressions that use it from becoming atoms that name it
    return attrs.evolve(value, deps=value.deps | {var}, dense=False)


def let_interval(var: Var, value: PrimExpr, ranges: Mapping | None = None) -> LinearInterval:
    """The range of a let-bound variable, for ``ranges``: its value's bound."""
    return _as_let(var, bound(value, ranges))


def loop_interval(var: Var, min_expr: PrimExpr, extent: PrimExpr, ranges: Mapping | None = None,
                  facts: Mapping | None = None) -> LinearInterval:
    """The range ``[min, min + extent - 1]`` of a loop variable, for ``ranges``.

    Exact when the loop surely runs (a constant extent of at least 1, or a
    kept extent that ``facts``, Var -> LinearInterval, put at 1 or more) and
    its start does not depend on relaxed variables, so every value is taken.
    """
    lo_iv = bound(min_expr, ranges)
    ext_iv = bound(extent, ranges)
    lo = lo_iv.lo
    hi = None if lo_iv.hi is None or ext_iv.hi is None else lo_iv.hi + ext_iv.hi - 1
    ext = _const_value(ext_iv)
    if ext is None and facts and ext_iv.is_point and not ext_iv.deps:
        ext = const_bounds(ext_iv.lo, facts)[0]
    exact = lo_iv.is_point and not lo_iv.deps and ext is not None and ext >= 1
    return LinearInterval(lo, hi, exact, lo_iv.deps | ext_iv.deps | {var}, dense=exact)


def _as_ranges(facts: Mapping) -> dict:
    # a fact used as a range is a relaxed variable: mark it as the source of
    # the bounds it gives, so they are not taken back as an atom
    return {v: attrs.evolve(iv, deps=iv.deps | {v}) for v, iv in facts.items()}


def const_bounds(linear: Linear, facts: Mapping, rounds: int = 4) -> tuple[int | None, int | None]:
    """Constant lower and upper bounds of ``linear`` when each variable lies in
    its interval of ``facts`` (a mapping from Var to LinearInterval); None where a
    variable has no usable bound. Substitutes bounds a few rounds deep, so a
    fact may itself mention other variables (``vi`` in ``[0, n - 1]``)."""
    return _extreme(linear, facts, -1, rounds), _extreme(linear, facts, 1, rounds)


def _extreme(linear: Linear, facts: Mapping, direction: int, rounds: int) -> int | None:
    current = linear
    atoms: dict = {}
    for _ in range(rounds + 1):
        if current.is_const:
            return current.const
        out = Linear.constant(current.const)
        for var, c in current.terms:
            fact = facts.get(var)
            if fact is None and type(var) is not Var:
                # an atom: bound it with the facts as ranges of its variables
                fact = atoms.get(var)
                if fact is None:
                    fact = atoms[var] = bound(var, _as_ranges(facts)) if facts else _UNKNOWN
            if fact is None:
                return None
            # to push c*var towards ``direction`` take the matching end of var
            end = fact.hi if (c > 0) == (direction > 0) else fact.lo
            if end is None:
                return None
            out = out + end.scale(c)
        current = out
    return current.const if current.is_const else None


def surely_at_most(a: PrimExpr, b: PrimExpr, domains: Mapping) -> bool:
    """Whether ``a <= b`` for every value of the variables of ``domains``
    (Var -> Range, in order: a Range may mention the variables before it),
    each relaxed over its range symbolically, as TVM's analyzer proves with
    symbolic bounds: ``v * 32 + 31 <= n * 32 - 1`` for ``v`` below ``n``.
    Read as the index arithmetic denotes (an index that wraps is out of
    bounds anyway); False means "not shown"."""
    if not (a.dtype.is_integer and a.dtype == b.dtype):
        return False
    ranges: dict = {}
    for var, rng in domains.items():
        ranges[var] = loop_interval(var, rng.min, rng.extent, ranges)
    gap = bound(Sub(a, b), ranges)
    if gap.hi is None:
        return False
    if gap.hi.is_const:
        return gap.hi.const <= 0
    # what is left may be a multiple of a quotient against its dividend:
    # d * (x // d) lies in [x - (d - 1), x], so m - (m + 3) // 4 * 4 <= 0
    # (a ceil-divided extent times its factor reaches the extent)
    hi = _without_quotients(gap.hi, ranges)
    return hi is not None and hi.is_const and hi.const <= 0


def _without_quotients(form: Linear, ranges: Mapping) -> Linear | None:
    """An upper bound of ``form`` with each term ``c * (x // d)`` (a
    positive constant ``d`` dividing ``c``) replaced by the bound of ``c /
    d * x`` it follows from, and each ``c * (k // n)`` of a constant ``k``
    by ``|c * k|``; None when ``x`` has no bound on that side."""
    out = Linear.constant(form.const)
    for atom, coef in form.terms:
        if isinstance(atom, FloorDiv) and not isinstance(atom.b, IntImm):
            # by a size: no larger than a constant dividend in magnitude
            x = bound(atom.a, ranges)
            if x.lo is not None and x.hi is not None and x.lo.is_const and x.hi.is_const:
                out = out + abs(coef) * max(abs(x.lo.const), abs(x.hi.const))
                continue
        d = atom.b.value if isinstance(atom, FloorDiv) and isinstance(atom.b, IntImm) else 0
        if d <= 0 or coef % d:
            out = out + Linear(((atom, coef),))
            continue
        k = coef // d
        x = bound(atom.a, ranges)
        end = x.hi if k > 0 else x.lo
        if end is None:
            return None
        # k > 0: k * (x // d) <= k * x / d; k < 0: <= k * (x - (d - 1)) / d
        out = out + end.scale(k) + (0 if k > 0 else -k * (d - 1))
    return out


__all__ = ["LinearInterval", "bound", "loop_interval", "let_interval", "const_bounds", "surely_at_most"]
