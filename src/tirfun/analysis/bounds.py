"""Interval bounds of integer index expressions.

The bound of an expression is an :class:`Interval` whose two ends are
:class:`Linear` forms (``c0 + c1*v1 + c2*v2 ...`` with integer coefficients)
over the *kept* variables, after every *relaxed* variable has been replaced by
its range. The caller decides which variables are relaxed by listing them in
``ranges``: typically the loops inside a block (relaxed) while the block's own
iteration variables, scalar parameters and symbolic shapes stay symbolic
(kept). So the access ``A[vi * 4 + j]`` with ``j`` relaxed over ``[0, 3]``
bounds to ``[4*vi, 4*vi + 3]``.

API:

* :func:`bound` ``(expr, ranges) -> Interval``
* :func:`loop_interval` ``(var, min, extent, ranges) -> Interval``, the range
  of a loop variable, for use in ``ranges``; :func:`let_interval` ``(var,
  value, ranges)`` that of a let-bound variable
* :func:`const_bounds` ``(linear, facts) -> (lo, hi)``, constant bounds of a
  linear form given ranges of its variables (``None`` where unbounded)

and, for code generation, which reasons about one integer dtype at a time
with constant ranges only:

* :class:`TypedLinear`, a linear form over one dtype that keeps its terms in
  order of first appearance (so rebuilding an expression keeps its shape), and
  :func:`linear_expr` to turn it back into an expression when it fits the dtype
* :func:`const_interval` ``(expr, env) -> (lo, hi)``, constant bounds of an
  integer expression clamped to its dtype, given constant ranges of its
  variables (a :data:`ConstInterval`; :data:`UNBOUNDED` where nothing is known)
* :func:`const_int`, :func:`int_value` and :func:`fits`, small constant tests,
  and :func:`collect_terms`, :func:`scale_terms`, the term algebra every
  linear form here is built on

An end of ``None`` means unbounded on that side (the expression is not affine
there, or reads memory). Intervals are always sound (every value lies inside);
``exact`` says more: for each value of the kept variables, both ends are
attained by some values of the relaxed variables, so a bound outside a
region proves that some access really goes outside it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import attrs
from pyrsistent import PVector

from ..nodes import (
    Add, Broadcast, BufferLoad, Call, Cast, DataType, Div, FloorDiv, FloorMod, IntImm, Let, Max,
    Min, Mod, Mul, PrimExpr, Ramp, Select, Sub, Var,
)


def fits(dtype: DataType, value: int) -> bool:
    """Whether ``value`` is representable in the integer ``dtype``."""
    return dtype.min_value() <= value <= dtype.max_value()


def int_value(e) -> int | None:
    """The value of an integer literal that is not a boolean, else None."""
    return e.value if isinstance(e, IntImm) and not e.dtype.is_bool else None


def const_int(e: PrimExpr) -> int | None:
    """The value of an integer constant (booleans included), else None."""
    return e.value if isinstance(e, IntImm) else None


def collect_terms(terms_a: tuple, terms_b: tuple, sign: int = 1) -> dict:
    """``terms_a + sign * terms_b`` as a term -> coefficient dict, like terms
    collected, in order of first appearance, zero coefficients dropped.
    ``terms_a`` must not repeat a term (pass ``()`` and the concatenation as
    ``terms_b`` to collect a sequence that may)."""
    acc = dict(terms_a)
    for term, c in terms_b:
        acc[term] = acc.get(term, 0) + sign * c
    return {t: c for t, c in acc.items() if c != 0}


def scale_terms(terms: tuple, k: int) -> tuple:
    """``(term, coeff)`` pairs with every coefficient multiplied by ``k``."""
    return tuple((t, c * k) for t, c in terms)


def _corners(x_lo: int, x_hi: int, y_lo: int, y_hi: int) -> tuple[int, int]:
    """The range of ``x * y`` for ``x`` in ``[x_lo, x_hi]``, ``y`` in ``[y_lo, y_hi]``."""
    products = [x_lo * y_lo, x_lo * y_hi, x_hi * y_lo, x_hi * y_hi]
    return min(products), max(products)


def _var_key(item):
    term = item[0]
    if type(term) is Var:
        return (0, term.name, str(term.dtype), 0)
    # an atom: any order works as long as it is the same for equal atoms
    return (1, type(term).__name__, str(term.dtype), hash(term))


@attrs.frozen(cache_hash=True)
class Linear:
    """``const + sum(coeff * term)`` with integer coefficients, terms sorted by
    name and without zero coefficients. A term is a kept variable or an
    *atom*: a non-affine sub-expression of kept variables only (``vi % 7``,
    ``T.min(vi + 2, 7)``, ``A[vi]``), which is a single value for each value of
    the kept variables, so equal atoms cancel like variables do."""

    terms: tuple = ()
    const: int = 0

    @staticmethod
    def constant(value: int) -> "Linear":
        """The constant form ``value``."""
        return Linear((), int(value))

    @staticmethod
    def of_var(var: PrimExpr) -> "Linear":
        """The form ``1 * var`` (``var`` a variable or an atom)."""
        return Linear(((var, 1),), 0)

    @property
    def is_const(self) -> bool:
        """True when there is no variable term."""
        return not self.terms

    def variables(self) -> frozenset:
        """The variables with a non-zero coefficient."""
        return frozenset(v for v, _ in self.terms)

    def _combine(self, other: "Linear", sign: int) -> "Linear":
        if not other.terms:
            return Linear(self.terms, self.const + sign * other.const)
        terms = tuple(sorted(collect_terms(self.terms, other.terms, sign).items(), key=_var_key))
        return Linear(terms, self.const + sign * other.const)

    def __add__(self, other) -> "Linear":
        if isinstance(other, int):
            return Linear(self.terms, self.const + other)
        return self._combine(other, 1)

    def __sub__(self, other) -> "Linear":
        if isinstance(other, int):
            return Linear(self.terms, self.const - other)
        return self._combine(other, -1)

    def __neg__(self) -> "Linear":
        return self.scale(-1)

    def scale(self, k: int) -> "Linear":
        """``k * self``."""
        if k == 0:
            return Linear((), 0)
        return Linear(scale_terms(self.terms, k), self.const * k)

    def floordiv(self, k: int) -> "Linear | None":
        """``floordiv(self, k)`` for ``k > 0`` when every coefficient is a
        multiple of ``k`` (then it is exact); None otherwise."""
        if k <= 0 or any(c % k for _, c in self.terms):
            return None
        return Linear(tuple((v, c // k) for v, c in self.terms), self.const // k)

    def to_expr(self, dtype="int32") -> PrimExpr:
        """The form as a TIR expression of ``dtype``."""
        out: PrimExpr = IntImm(dtype, self.const)
        for var, c in self.terms:
            term = var if c == 1 else var * c
            out = term if (isinstance(out, IntImm) and out.value == 0) else out + term
        return out


@attrs.frozen
class Interval:
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
    def point(linear: Linear) -> "Interval":
        """The single value ``linear``."""
        return Interval(linear, linear, True, frozenset())

    @staticmethod
    def constant(lo: int, hi: int, exact: bool = True) -> "Interval":
        """The constant interval ``[lo, hi]``."""
        return Interval(Linear.constant(lo), Linear.constant(hi), exact, frozenset())

    @property
    def is_const(self) -> bool:
        """Both ends known and free of variables."""
        return self.lo is not None and self.hi is not None and self.lo.is_const and self.hi.is_const

    @property
    def is_point(self) -> bool:
        """A single known value (the two ends are the same form)."""
        return self.lo is not None and self.lo == self.hi


_UNKNOWN = Interval(None, None, False, frozenset())


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


def _add(x: Interval, y: Interval, sign: int) -> Interval:
    if sign > 0:
        lo = None if x.lo is None or y.lo is None else x.lo + y.lo
        hi = None if x.hi is None or y.hi is None else x.hi + y.hi
    else:
        lo = None if x.lo is None or y.hi is None else x.lo - y.hi
        hi = None if x.hi is None or y.lo is None else x.hi - y.lo
    # independent sources reach their extremes together; shared ones may not
    exact = x.exact and y.exact and not (x.deps & y.deps)
    return Interval(lo, hi, exact, x.deps | y.deps)


def _scale(x: Interval, k: int) -> Interval:
    if k >= 0:
        lo = None if x.lo is None else x.lo.scale(k)
        hi = None if x.hi is None else x.hi.scale(k)
    else:
        lo = None if x.hi is None else x.hi.scale(k)
        hi = None if x.lo is None else x.lo.scale(k)
    return Interval(lo, hi, x.exact, x.deps)


def _const_value(x: Interval) -> int | None:
    if x.is_point and x.lo.is_const:
        return x.lo.const
    return None


def _mul(x: Interval, y: Interval) -> Interval:
    k = _const_value(y)
    if k is not None:
        return _scale(x, k)
    k = _const_value(x)
    if k is not None:
        return _scale(y, k)
    if x.is_const and y.is_const:
        lo, hi = _corners(x.lo.const, x.hi.const, y.lo.const, y.hi.const)
        return Interval.constant(lo, hi, False)
    return Interval(None, None, False, x.deps | y.deps)


def _floordiv(x: Interval, y: Interval) -> Interval:
    k = _const_value(y)
    if k is None or k <= 0:
        return Interval(None, None, False, x.deps | y.deps)
    lo = None if x.lo is None else x.lo.floordiv(k)
    hi = None if x.hi is None else x.hi.floordiv(k)
    # floordiv is monotone, so attained ends stay attained
    exact = x.exact and lo is not None and hi is not None
    return Interval(lo, hi, exact, x.deps)


def _floormod(x: Interval, y: Interval) -> Interval:
    k = _const_value(y)
    if k is None or k <= 0:
        return Interval(None, None, False, x.deps | y.deps)
    full = Interval.constant(0, k - 1, False)
    if x.lo is None or x.hi is None:
        return Interval(full.lo, full.hi, False, x.deps)
    span = x.hi - x.lo
    if x.lo.terms != x.hi.terms or not span.is_const or any(c % k for _, c in x.lo.terms):
        return Interval(full.lo, full.hi, False, x.deps)
    # the variable part is a multiple of k: the remainder depends on the constants only
    lo_c, hi_c = x.lo.const, x.hi.const
    if lo_c // k == hi_c // k:
        return Interval(Linear.constant(lo_c % k), Linear.constant(hi_c % k), x.exact, x.deps)
    return Interval(full.lo, full.hi, False, x.deps)


def _dense_floormod(out: Interval, args: list[Interval]) -> Interval:
    """``v % c`` of a loop variable: the loop takes every value of its range,
    so a range of at least ``c`` values reaches both 0 and ``c - 1``."""
    x, k = args[0], _const_value(args[1])
    if not (x.exact and x.dense) or k is None or k <= 0 or x.lo is None or x.hi is None:
        return out
    span = x.hi - x.lo
    if span.is_const and span.const >= k - 1:
        return Interval(Linear.constant(0), Linear.constant(k - 1), True, x.deps)
    return out


def _nonnegative(x: Interval) -> bool:
    return x.lo is not None and x.lo.is_const and x.lo.const >= 0


def _trunc(x: Interval, y: Interval, floor_version) -> Interval:
    # truncated and floored division agree on non-negative operands
    if _nonnegative(x) and _nonnegative(y):
        return floor_version(x, y)
    return Interval(None, None, False, x.deps | y.deps)


def _min(x: Interval, y: Interval) -> Interval:
    lo = _lesser(x.lo, y.lo)
    hi = _lesser(x.hi, y.hi)
    if hi is None:  # min(a, b) <= a whatever b is
        hi = x.hi if x.hi is not None else y.hi
    return Interval(lo, hi, False, x.deps | y.deps)


def _max(x: Interval, y: Interval) -> Interval:
    lo = _greater(x.lo, y.lo)
    if lo is None:
        lo = x.lo if x.lo is not None else y.lo
    hi = _greater(x.hi, y.hi)
    return Interval(lo, hi, False, x.deps | y.deps)


def _hull(x: Interval, y: Interval) -> Interval:
    return Interval(_lesser(x.lo, y.lo), _greater(x.hi, y.hi), False, x.deps | y.deps)


def _ramp(base: Interval, stride: Interval, lanes: int) -> Interval:
    k = _const_value(stride)
    if k is None:
        return Interval(None, None, False, base.deps | stride.deps)
    span = k * (lanes - 1)
    lo = None if base.lo is None else base.lo + min(0, span)
    hi = None if base.hi is None else base.hi + max(0, span)
    return Interval(lo, hi, base.exact, base.deps)


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


def _combine(node: PrimExpr, args: list[Interval]) -> Interval:
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
    return Interval(out.lo, out.hi, False, out.deps | args[0].deps)


def _leaf(node, ranges: Mapping) -> Interval | None:
    """The bound of a leaf, or None when ``node`` is combined from operands."""
    cls = type(node)
    if cls is Var:
        found = ranges.get(node)
        if found is not None:
            return found
        if _is_index(node):
            return Interval.point(Linear.of_var(node))
        return _UNKNOWN
    if cls is IntImm:
        return Interval.point(Linear.constant(node.value))
    if cls is Let or _operands(node) is not None:
        return None
    return _opaque(node, ranges)


def _is_index(node) -> bool:
    dtype = node.dtype
    return dtype.is_integer and dtype.lanes == 1


def _opaque(node, ranges: Mapping) -> Interval:
    """A sub-expression not followed (a load, a call, a comparison): an atom
    when it depends on kept variables only, unbounded otherwise."""
    deps, pure = _scan(node, ranges)
    if deps or not _is_index(node):
        return Interval(None, None, False, frozenset(deps))
    atom = Linear.of_var(node)
    # a load or call may give another value elsewhere in the block: not exact
    return Interval(atom, atom, pure, frozenset())


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


def _atomize(node, result: Interval, args: list[Interval]) -> Interval:
    """Keep a non-affine combination of kept variables whole, as an atom."""
    if result.deps or (result.is_point and result.exact) or not _is_index(node):
        return result
    atom = Linear.of_var(node)
    return Interval(atom, atom, all(a.exact for a in args), frozenset())


def bound(expr: PrimExpr, ranges: Mapping | None = None) -> Interval:
    """The interval of the integer expression ``expr`` when each variable of
    ``ranges`` (a mapping from Var to Interval) takes any value of its range.

    Variables not in ``ranges`` stay symbolic in the result. Sound for every
    input: an unknown part gives an unbounded end, never a wrong one. Evaluated
    with an explicit stack, so deep expressions do not exhaust the recursion
    limit.
    """
    ranges = {} if ranges is None else ranges
    results: list[Interval] = []
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


def _as_let(var: Var, value: Interval) -> Interval:
    # the variable is relaxed over its value's range: as the source of what it
    # bounds, it keeps expressions that use it from becoming atoms that name it
    return attrs.evolve(value, deps=value.deps | {var}, dense=False)


def let_interval(var: Var, value: PrimExpr, ranges: Mapping | None = None) -> Interval:
    """The range of a let-bound variable, for ``ranges``: its value's bound."""
    return _as_let(var, bound(value, ranges))


def loop_interval(var: Var, min_expr: PrimExpr, extent: PrimExpr, ranges: Mapping | None = None) -> Interval:
    """The range ``[min, min + extent - 1]`` of a loop variable, for ``ranges``.

    Exact when the loop surely runs (a constant extent of at least 1) and its
    start does not depend on relaxed variables, so every value is taken.
    """
    lo_iv = bound(min_expr, ranges)
    ext_iv = bound(extent, ranges)
    lo = lo_iv.lo
    hi = None if lo_iv.hi is None or ext_iv.hi is None else lo_iv.hi + ext_iv.hi - 1
    ext = _const_value(ext_iv)
    exact = lo_iv.is_point and not lo_iv.deps and ext is not None and ext >= 1
    return Interval(lo, hi, exact, lo_iv.deps | ext_iv.deps | {var}, dense=exact)


def _as_ranges(facts: Mapping) -> dict:
    # a fact used as a range is a relaxed variable: mark it as the source of
    # the bounds it gives, so they are not taken back as an atom
    return {v: attrs.evolve(iv, deps=iv.deps | {v}) for v, iv in facts.items()}


def const_bounds(linear: Linear, facts: Mapping, rounds: int = 4) -> tuple[int | None, int | None]:
    """Constant lower and upper bounds of ``linear`` when each variable lies in
    its interval of ``facts`` (a mapping from Var to Interval); None where a
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




# --------------------------------------------------------------------------
# typed linear forms and constant intervals, for code generation


@attrs.frozen
class TypedLinear:
    """``sum(coeff * term) + const`` over one integer dtype.

    Unlike :class:`Linear`, whose terms are sorted so that equal forms compare
    equal, ``terms`` keeps the order of first appearance, so an expression
    rebuilt from the form keeps the shape of the one it came from. ``terms``
    is a tuple of ``(term, coeff)`` pairs with no zero coefficient and no
    repeated term; a term is an expression that is not itself a sum or a
    product by a constant (a variable, a division, a load...).
    """

    dtype: DataType
    terms: tuple = ()
    const: int = 0

    @staticmethod
    def of(e: PrimExpr) -> "TypedLinear | None":
        """The linear form of a scalar integer expression, or None when it
        is not an integer expression."""
        dt = e.dtype
        if not dt.is_integer or dt.lanes != 1:
            return None
        return _typed_linear(e, dt)

    def scale(self, k: int) -> "TypedLinear":
        """``k * self``."""
        if k == 0:
            return TypedLinear(self.dtype)
        return TypedLinear(self.dtype, scale_terms(self.terms, k), self.const * k)

    def plus(self, other: "TypedLinear") -> "TypedLinear":
        """``self + other``, like terms collected."""
        terms = tuple(collect_terms((), self.terms + other.terms).items())
        return TypedLinear(self.dtype, terms, self.const + other.const)

    @property
    def is_const(self) -> bool:
        """Whether no term is left."""
        return not self.terms

    def to_expr(self) -> PrimExpr:
        """Back to an expression: positive terms first (in order), then the
        negative ones subtracted, then the constant."""
        dt = self.dtype
        out: PrimExpr | None = None
        pos = [(t, c) for t, c in self.terms if c > 0]
        neg = [(t, -c) for t, c in self.terms if c < 0]
        for t, c in pos:
            piece = t if c == 1 else Mul(t, IntImm(dt, c))
            out = piece if out is None else Add(out, piece)
        for t, c in neg:
            piece = t if c == 1 else Mul(t, IntImm(dt, c))
            out = Sub(IntImm(dt, 0), piece) if out is None else Sub(out, piece)
        if out is None:
            return IntImm(dt, self.const)
        if self.const > 0:
            out = Add(out, IntImm(dt, self.const))
        elif self.const < 0:
            out = Sub(out, IntImm(dt, -self.const))
        return out


def _typed_linear(e: PrimExpr, dt: DataType) -> TypedLinear:
    if isinstance(e, IntImm):
        return TypedLinear(dt, (), e.value)
    if isinstance(e, Add):
        return _typed_linear(e.a, dt).plus(_typed_linear(e.b, dt))
    if isinstance(e, Sub):
        return _typed_linear(e.a, dt).plus(_typed_linear(e.b, dt).scale(-1))
    if isinstance(e, Mul):
        la, lb = _typed_linear(e.a, dt), _typed_linear(e.b, dt)
        if lb.is_const:
            return la.scale(lb.const)
        if la.is_const:
            return lb.scale(la.const)
    return TypedLinear(dt, ((e, 1),), 0)


def linear_expr(lin: TypedLinear) -> PrimExpr | None:
    """``lin`` as an expression, or None when a coefficient or the constant
    does not fit the dtype (then the caller keeps the original)."""
    dt = lin.dtype
    if not fits(dt, lin.const) or any(not fits(dt, c) or not fits(dt, -c) for _, c in lin.terms):
        return None
    return lin.to_expr()


ConstInterval = tuple["int | None", "int | None"]
"""``(lo, hi)``, both ends included, ``None`` where unbounded."""

UNBOUNDED: ConstInterval = (None, None)


def _plus(a, b):
    return None if a is None or b is None else a + b


def _mul_const(x: ConstInterval, y: ConstInterval) -> ConstInterval:
    if None in x or None in y:
        # a product with a known sign can still be bounded on one side
        if x == (0, 0) or y == (0, 0):
            return (0, 0)
        if x[0] is not None and x[0] >= 0 and y[0] is not None and y[0] >= 0:
            return (x[0] * y[0], None if (x[1] is None or y[1] is None) else x[1] * y[1])
        return UNBOUNDED
    return _corners(x[0], x[1], y[0], y[1])


def _floordiv_const(x: ConstInterval, c: int) -> ConstInterval:
    if c > 0:
        return (None if x[0] is None else x[0] // c, None if x[1] is None else x[1] // c)
    return (None if x[1] is None else x[1] // c, None if x[0] is None else x[0] // c)


def const_interval(e: PrimExpr, env: Mapping[Var, ConstInterval]) -> ConstInterval:
    """The constant interval a scalar integer (or boolean) expression can
    take, given constant intervals of its variables (a missing variable is
    unbounded within its dtype). The ends are clamped to the dtype's range;
    any other expression gives :data:`UNBOUNDED`."""
    dt = e.dtype
    if not (dt.is_integer or dt.is_bool) or dt.lanes != 1:
        return UNBOUNDED
    lo, hi = _const_interval(e, env)
    # the dtype's own range always holds
    dlo, dhi = dt.min_value(), dt.max_value()
    lo = dlo if lo is None or lo < dlo else lo
    hi = dhi if hi is None or hi > dhi else hi
    return (lo, hi)


def _const_interval(e: PrimExpr, env: Mapping[Var, ConstInterval]) -> ConstInterval:
    if isinstance(e, IntImm):
        return (e.value, e.value)
    if isinstance(e, Var):
        return env.get(e, UNBOUNDED)
    if isinstance(e, Add):
        a, b = _const_interval(e.a, env), _const_interval(e.b, env)
        return (_plus(a[0], b[0]), _plus(a[1], b[1]))
    if isinstance(e, Sub):
        a, b = _const_interval(e.a, env), _const_interval(e.b, env)
        return (_plus(a[0], None if b[1] is None else -b[1]), _plus(a[1], None if b[0] is None else -b[0]))
    if isinstance(e, Mul):
        return _mul_const(_const_interval(e.a, env), _const_interval(e.b, env))
    if isinstance(e, FloorDiv) and isinstance(e.b, IntImm) and e.b.value != 0:
        return _floordiv_const(_const_interval(e.a, env), e.b.value)
    if isinstance(e, FloorMod) and isinstance(e.b, IntImm) and e.b.value > 0:
        c = e.b.value
        a = _const_interval(e.a, env)
        if a[0] is not None and a[1] is not None and a[0] // c == a[1] // c:
            return (a[0] % c, a[1] % c)
        return (0, c - 1)
    if isinstance(e, Min):
        a, b = _const_interval(e.a, env), _const_interval(e.b, env)
        lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
        hi = b[1] if a[1] is None else (a[1] if b[1] is None else min(a[1], b[1]))
        return (lo, hi)
    if isinstance(e, Max):
        a, b = _const_interval(e.a, env), _const_interval(e.b, env)
        lo = b[0] if a[0] is None else (a[0] if b[0] is None else max(a[0], b[0]))
        hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
        return (lo, hi)
    if isinstance(e, Select):
        a, b = _const_interval(e.true_value, env), _const_interval(e.false_value, env)
        lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
        hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
        return (lo, hi)
    if isinstance(e, Cast) and (e.value.dtype.is_integer or e.value.dtype.is_bool):
        inner = const_interval(e.value, env)
        lo, hi = inner
        if lo is not None and hi is not None and fits(e.dtype, lo) and fits(e.dtype, hi):
            return inner
        return UNBOUNDED
    if e.dtype.is_bool:
        return (0, 1)
    return UNBOUNDED


__all__ = [
    "Linear", "Interval", "bound", "loop_interval", "let_interval", "const_bounds",
    "TypedLinear", "linear_expr", "ConstInterval", "UNBOUNDED", "const_interval",
    "const_int", "int_value", "fits", "collect_terms", "scale_terms",
]
