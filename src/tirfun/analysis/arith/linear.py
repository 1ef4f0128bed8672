"""Linear and affine forms of integer expressions.

Two forms, for two jobs:

* :class:`Linear`, ``const + sum(coeff * term)`` with the terms sorted by
  name, so that equal forms compare equal: the ends of the symbolic bounds in
  :mod:`~tirfun.analysis.arith.linear_bound`.
* :class:`Affine`, the same sum over one integer dtype with the terms kept in
  order of first appearance, so an expression rebuilt from the form keeps the
  shape of the one it came from. :meth:`Affine.of` reads a sum plainly
  (only ``+``, ``-`` and ``*`` by constants); :func:`affine_form` also folds
  ``(c * x + r) // c``, ``% c`` and ``min``/``max`` whose operands differ by
  a constant. :meth:`Affine.to_expr` writes positive terms first (code
  generation); :func:`affine_expr` keeps the order, leading with a positive
  term (region inference, as TVM prints regions).

Forms are exact in unbounded integers. Over a dtype, TIR arithmetic wraps
modulo ``2**bits``: regrouping a sum or a product by a constant stays exact
(it is a ring identity), while folding a division is exact only when the
sum does not wrap; callers that fold divisions say what they assume.

The folding constructors (:func:`fold_add`, ...) build ``a + b`` and friends
with literals folded, the way TVM's operators fold as they build.
"""

from __future__ import annotations

import attrs

from ...errors import NodeError
from ...nodes import (
    Add, Div, FloorDiv, FloorMod, IntImm, Max, Min, Mod, Mul, PrimExpr, Sub, Var,
)
from ...nodes.dtype import DataType
from .terms import collect_terms, fits, int_value, scale_terms

_int = int_value
_fits = fits

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
class Affine:
    """``sum(coeff * term) + const`` over one integer dtype.

    Unlike :class:`Linear`, whose terms are sorted so that equal forms compare
    equal, ``terms`` keeps the order of first appearance. ``terms`` is a tuple
    of ``(term, coeff)`` pairs with no zero coefficient and no repeated term.
    """

    dtype: DataType
    terms: tuple = ()
    const: int = 0

    @staticmethod
    def of(e: PrimExpr) -> "Affine | None":
        """The plain linear form of a scalar integer expression (``+``, ``-``
        and ``*`` by constants followed; anything else is a term), or None
        when it is not a scalar integer expression."""
        dt = e.dtype
        if not dt.is_integer or dt.lanes != 1:
            return None
        return _plain(e, dt)

    @property
    def is_const(self) -> bool:
        """Whether no term is left: the form is the number ``const``."""
        return not self.terms

    def scale(self, k: int) -> "Affine":
        """``k * self``."""
        if k == 0:
            return Affine(self.dtype, (), 0)
        return Affine(self.dtype, scale_terms(self.terms, k), self.const * k)

    def plus(self, other: "Affine", sign: int = 1) -> "Affine":
        """``self + sign * other``, like terms collected."""
        terms = tuple(collect_terms(self.terms, other.terms, sign).items())
        return Affine(self.dtype, terms, self.const + sign * other.const)

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


def _plain(e: PrimExpr, dt: DataType) -> Affine:
    if isinstance(e, IntImm):
        return Affine(dt, (), e.value)
    if isinstance(e, Add):
        return _plain(e.a, dt).plus(_plain(e.b, dt))
    if isinstance(e, Sub):
        return _plain(e.a, dt).plus(_plain(e.b, dt), -1)
    if isinstance(e, Mul):
        la, lb = _plain(e.a, dt), _plain(e.b, dt)
        if lb.is_const:
            return la.scale(lb.const)
        if la.is_const:
            return lb.scale(la.const)
    return Affine(dt, ((e, 1),), 0)


def linear_expr(lin: Affine) -> PrimExpr | None:
    """``lin`` as an expression (:meth:`Affine.to_expr`), or None when a
    coefficient or the constant does not fit the dtype (then the caller
    keeps the original)."""
    dt = lin.dtype
    if not fits(dt, lin.const) or any(not fits(dt, c) or not fits(dt, -c) for _, c in lin.terms):
        return None
    if lin.terms and not fits(dt, -lin.const):  # ``x - c`` is written with ``-const``
        return None
    return lin.to_expr()


def merge_div_mod(lin: Affine, divide=None) -> Affine:
    """``(x // y) * y + x % y`` is ``x`` (for flooring and for truncating
    division alike, and under wrap-around too: the identity holds for the
    wrapped values), wherever the pair appears in a sum with matching
    coefficients. ``y`` is a constant, or any expression, as in TVM's
    rewrite rules: the product ``(x // y) * y`` is then one term of the
    sum. Where ``y`` is 0 the division has no value, and ``x`` is one.

    The same holds one digit lower (:func:`quotient_digits`): ``x // (a *
    b) * a + x % (a * b) // b`` is ``x // b``, for positive constants ``a``
    and ``b``; and for the low digits (:func:`remainder_digits`): ``x // b
    % a * b + x % b`` is ``x % (a * b)``. ``divide(cls, x, c)``, where
    given, writes the merged quotient or remainder (the simplifier
    simplifies it again); else it is ``cls(x, c)``."""
    terms = dict(lin.terms)
    merged = quotient_digits(lin, terms) or remainder_digits(lin, terms)
    if merged is not None:
        rest, cls, x, b, coeff = merged
        quotient = cls(x, b) if divide is None else divide(cls, x, b)
        return merge_div_mod(rest.plus(Affine.of(quotient).scale(coeff)), divide)
    pairs = ((FloorMod, FloorDiv), (Mod, Div))
    for term, coeff in lin.terms:
        for mod_cls, div_cls in pairs:
            if type(term) is not mod_cls:
                continue
            divisor = term.b
            if isinstance(divisor, IntImm):
                if divisor.value == 0:
                    continue
                partners = ((div_cls(term.a, divisor), coeff * divisor.value),)
            else:
                quotient = div_cls(term.a, divisor)
                partners = ((Mul(quotient, divisor), coeff), (Mul(divisor, quotient), coeff))
            for partner, want in partners:
                if terms.get(term) == coeff and terms.get(partner) == want:
                    del terms[term]
                    del terms[partner]
                    rest = Affine(lin.dtype, tuple(terms.items()), lin.const)
                    inner = Affine.of(term.a)
                    return merge_div_mod(rest.plus(inner.scale(coeff)), divide)
    return lin


_OTHER = {FloorDiv: FloorMod, FloorMod: FloorDiv, Div: Mod, Mod: Div}


def _nested_terms(lin: Affine, outer: tuple):
    """``(term, coeff, cls, inner)`` for each term of ``lin`` that is a
    division or remainder of ``outer`` (floor or truncating) of the other
    of the same family (``x // b % a``, ``x % c // b``)."""
    for term, coeff in lin.terms:
        cls = type(term)
        if cls in outer and type(term.a) is _OTHER[cls]:
            yield term, coeff, cls, term.a


def remainder_digits(lin: Affine, terms: dict | None = None):
    """The first pair of terms ``k * b * (x // b % a)`` and ``k * (x % b)``
    of ``lin`` (``a`` and ``b`` positive constants; flooring, or truncating
    division alike): ``(rest, cls, x, a * b, k)`` with ``rest`` the other
    terms and ``cls`` the remainder, or None. Together the pair is ``k * (x
    % (a * b))`` for every integer ``x``: with ``x = q * a * b + r``, ``x //
    b % a`` is ``r // b``, and ``x % b`` is ``r % b``. What a loop fused from
    three gives back for the rank of its two inner digits (``f // 30 % 130
    * 30 + f % 30`` is ``f % 3900``)."""
    terms = dict(lin.terms) if terms is None else terms
    for term, coeff, cls, inner in _nested_terms(lin, (FloorMod, Mod)):
        a, b = _int(term.b), _int(inner.b)
        if a is None or b is None or a < 1 or b < 2 or not _fits(lin.dtype, a * b):
            continue
        partner = cls(inner.a, inner.b)
        if coeff % b or terms.get(partner) != coeff // b:
            continue
        rest = Affine(lin.dtype, tuple((t, k) for t, k in lin.terms if t != term and t != partner), lin.const)
        return rest, cls, inner.a, IntImm(inner.b.dtype, a * b), coeff // b
    return None


def quotient_digits(lin: Affine, terms: dict | None = None):
    """The first pair of terms ``k * a * (x // (a * b))`` and ``k * (x % (a
    * b) // b)`` of ``lin`` (``a`` and ``b`` positive constants, ``b`` at
    least 2; flooring, or truncating division alike): ``(rest, cls, x, b,
    k)`` with ``rest`` the other terms, or None (``a`` may be 1: the low
    digit is then 0). Together the pair is ``k * (x // b)`` for every
    integer ``x``: with ``x = q * a * b + r``, ``x // b`` is ``q * a + r //
    b``. Under wrap-around too, as both read the same
    wrapped ``x``. What the digits of a loop fused and split give back
    where the split did not divide (``f // 6 * 2 + f % 6 // 3`` is ``f //
    3``)."""
    terms = dict(lin.terms) if terms is None else terms
    for term, coeff, cls, inner in _nested_terms(lin, (FloorDiv, Div)):
        b, ab = _int(term.b), _int(inner.b)
        if b is None or ab is None or b < 2 or ab < b or ab % b:
            continue
        partner = cls(inner.a, inner.b)
        if terms.get(partner) != coeff * (ab // b):
            continue
        rest = Affine(lin.dtype, tuple((t, k) for t, k in lin.terms if t != term and t != partner), lin.const)
        return rest, cls, inner.a, term.b, coeff
    return None


def _one(dtype: DataType) -> IntImm:
    return IntImm(dtype, 1)


def fold_add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a + b`` with literals folded and ``x + 0`` dropped."""
    x, y = _int(a), _int(b)
    if x is not None and y is not None and _fits(a.dtype, x + y):
        return IntImm(a.dtype, x + y)
    if x == 0:
        return b
    if y == 0:
        return a
    return Add(a, b)


def fold_sub(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a - b`` with literals folded and ``x - 0`` dropped."""
    x, y = _int(a), _int(b)
    if x is not None and y is not None and _fits(a.dtype, x - y):
        return IntImm(a.dtype, x - y)
    if y == 0:
        return a
    return Sub(a, b)


def fold_mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a * b`` with literals folded, ``x * 1`` and ``x * 0`` reduced."""
    x, y = _int(a), _int(b)
    if x is not None and y is not None and _fits(a.dtype, x * y):
        return IntImm(a.dtype, x * y)
    if x == 1:
        return b
    if y == 1:
        return a
    if x == 0:
        return a
    if y == 0:
        return b
    return Mul(a, b)


def fold_floordiv(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    x, y = _int(a), _int(b)
    if x is not None and y is not None and y != 0:
        return IntImm(a.dtype, x // y)
    if y == 1 or x == 0:
        return a
    return FloorDiv(a, b)


def fold_floormod(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    x, y = _int(a), _int(b)
    if x is not None and y is not None and y != 0:
        return IntImm(a.dtype, x % y)
    if y == 1:
        return IntImm(a.dtype, 0)
    if x == 0:
        return a
    return FloorMod(a, b)


def fold_min(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``min(a, b)``, resolved when the difference is a known constant or
    when one side already takes the minimum with the other
    (``min(min(x, y), y)`` is ``min(x, y)``)."""
    return _fold_extreme(Min, a, b, lambda d: d <= 0)


def fold_max(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``max(a, b)``, resolved like :func:`fold_min`."""
    return _fold_extreme(Max, a, b, lambda d: d >= 0)


def _fold_extreme(cls, a: PrimExpr, b: PrimExpr, keep_a) -> PrimExpr:
    if type(a) is IntImm and type(b) is IntImm and a.dtype == b.dtype:
        return a if keep_a(a.value - b.value) else b  # two literals: no affine forms to build
    return fold_extreme_given(cls, a, b, constant_difference(a, b))


def fold_extreme_given(cls, a: PrimExpr, b: PrimExpr, d: int | None) -> PrimExpr:
    """``cls(a, b)`` (Min or Max) folded as :func:`fold_min` and
    :func:`fold_max` fold it, given ``d``, the ``constant_difference(a, b)``
    (the caller that folds both the min and the max of one pair works it
    out once)."""
    if d is not None:
        return a if (d <= 0 if cls is Min else d >= 0) else b
    if isinstance(a, cls) and (a.a == b or a.b == b):
        return a
    if isinstance(b, cls) and (b.a == a or b.b == a):
        return b
    if isinstance(a, cls) and _int(a.b) is not None and _int(b) is not None:
        # min(min(x, c1), c2) == min(x, min(c1, c2))
        return cls(a.a, IntImm(a.b.dtype, min(a.b.value, b.value) if cls is Min else max(a.b.value, b.value)))
    return cls(a, b)


def _atom(e: PrimExpr) -> Affine:
    return Affine(e.dtype, ((e, 1),), 0)


def affine_form(e: PrimExpr) -> Affine | None:
    """The affine form of a scalar integer expression, None for others.

    Sub-expressions that are not affine (products of variables, loads,
    calls, divisions that do not fold) become atoms, after their own
    operands are normalised.
    """
    if not isinstance(e, PrimExpr) or not e.dtype.is_integer or e.dtype.lanes != 1:
        return None
    return _affine(e)


def _affine(e: PrimExpr, memo: dict | None = None) -> Affine:
    if isinstance(e, IntImm):
        return Affine(e.dtype, (), e.value)
    if isinstance(e, (Add, Sub)):
        # walk the left spine iteratively: long sums must not recurse per term
        chain = []
        node = e
        while isinstance(node, (Add, Sub)):
            chain.append(node)
            node = node.a
        acc = _affine(node, memo)
        for op in reversed(chain):
            acc = acc.plus(_affine(op.b, memo), 1 if isinstance(op, Add) else -1)
        return acc
    if isinstance(e, Mul):
        a, b = _affine(e.a, memo), _affine(e.b, memo)
        if b.is_const:
            return a.scale(b.const)
        if a.is_const:
            return b.scale(a.const)
        return _atom(Mul(affine_expr(a), affine_expr(b)))
    if isinstance(e, (FloorDiv, FloorMod)):
        return _affine_div(_affine(e.a, memo), _affine(e.b, memo), modulo=isinstance(e, FloorMod))
    if isinstance(e, (Min, Max)):
        return _affine_extreme(e, {} if memo is None else memo)
    return _atom(e)


def _affine_extreme(e, memo: dict) -> Affine:
    """The form of ``min(a, b)`` or ``max(a, b)``: the operands in normal
    form, folded as :func:`fold_min` and :func:`fold_max` fold them.

    The folding compares the forms of the normalised operands, and the
    folded result is read again; ``memo`` (by node identity, the nodes kept
    alive in it) holds each min and max already read, so that a nest of
    them, whose every level reads the levels below again, is read in time
    linear in its depth, not exponential."""
    seen = memo.get(id(e))
    if seen is not None:
        return seen[1]
    cls = Min if isinstance(e, Min) else Max
    a, b = affine_expr(_affine(e.a, memo)), affine_expr(_affine(e.b, memo))
    if type(a) is IntImm and type(b) is IntImm and a.dtype == b.dtype:
        d = a.value - b.value  # two literals: no affine forms to build
        ra = rb = None
    else:
        # what constant_difference(a, b) gives, with the forms kept
        ra, rb = _affine(a, memo), _affine(b, memo)
        d = _literal_offset(a, b)
        if d is None:
            d = _forms_difference(ra, rb)
    folded = fold_extreme_given(cls, a, b, d)
    if isinstance(folded, (Min, Max)):
        out = _atom(folded)
    elif folded is a and ra is not None:
        out = ra
    elif folded is b and rb is not None:
        out = rb
    else:
        out = _affine(folded, memo)
    memo[id(e)] = (e, out)
    return out


def _affine_div(a: Affine, b: Affine, modulo: bool) -> Affine:
    if b.is_const and b.const > 0:
        c = b.const
        if all(coeff % c == 0 for _, coeff in a.terms):
            # for integer X: (c * X + r) // c == X + r // c and (c * X + r) % c == r % c
            if modulo:
                return Affine(a.dtype, (), a.const % c)
            return Affine(a.dtype, tuple((t, coeff // c) for t, coeff in a.terms), a.const // c)
    cls = FloorMod if modulo else FloorDiv
    return _atom(cls(affine_expr(a), affine_expr(b)))


def affine_expr(form: Affine) -> PrimExpr:
    """The TIR expression of an affine form: terms in order (a positive one
    first when there is one), ``x * c`` for coefficients, subtraction for
    negative ones, the constant last."""
    dt = form.dtype
    acc: PrimExpr | None = None
    terms = list(form.terms)
    # lead with a positive term when there is one: n - vo * 4, not vo * -4 + n
    first_positive = next((k for k, (_, c) in enumerate(terms) if c > 0), None)
    if first_positive:
        terms.insert(0, terms.pop(first_positive))
    const = form.const
    if terms and first_positive is None and const > 0:
        # every coefficient negative: lead with the constant (9 - i)
        acc, const = IntImm(dt, const), 0
    for atom, coeff in terms:
        if acc is None:
            acc = atom if coeff == 1 else Mul(atom, IntImm(dt, coeff))
        elif coeff > 0:
            acc = Add(acc, atom if coeff == 1 else Mul(atom, IntImm(dt, coeff)))
        else:
            acc = Sub(acc, atom if coeff == -1 else Mul(atom, IntImm(dt, -coeff)))
    if acc is None:
        return IntImm(dt, const)
    if const > 0:
        return Add(acc, IntImm(dt, const))
    if const < 0:
        return Sub(acc, IntImm(dt, -const))
    return acc


def simplify_affine(e: PrimExpr) -> PrimExpr:
    """``e`` normalised through its affine form (scalar integers only; other
    expressions come back unchanged). Returns ``e`` itself when the normal
    form is structurally the same."""
    if type(e) is IntImm or type(e) is Var:
        return e  # its own normal form
    form = affine_form(e)
    if form is None:
        return e
    try:
        out = affine_expr(form)
    except NodeError:  # a folded constant that no longer fits its dtype: keep e
        return e
    return e if out == e else out


def constant_difference(a: PrimExpr, b: PrimExpr) -> int | None:
    """``a - b`` when it is a constant (their affine forms differ only in
    the constant), else None."""
    d = _literal_offset(a, b)
    if d is not None:
        return d
    return _forms_difference(affine_form(a), affine_form(b))


def _forms_difference(fa: Affine | None, fb: Affine | None) -> int | None:
    """``fa - fb`` when it is a constant, else None (also for a missing
    form or forms of two dtypes)."""
    if fa is None or fb is None or fa.dtype != fb.dtype:
        return None
    d = fa.plus(fb, -1)
    return d.const if d.is_const else None


def _literal_offset(a: PrimExpr, b: PrimExpr) -> int | None:
    """``a - b`` where one is the other itself, or the other plus or minus
    a literal (``vi`` and ``vi + 2``, the accesses of one block at two
    indices), for a scalar integer: what the affine forms give, since the
    form of ``x + c`` is the form of ``x`` with ``c`` added, told without
    building them; None for any other pair."""
    if not isinstance(a, PrimExpr) or not isinstance(b, PrimExpr):
        return None
    dt = a.dtype
    if not dt.is_integer or dt.lanes != 1:
        return None
    if a is b:
        return 0
    kind = type(b)
    if (kind is Add or kind is Sub) and b.a is a and type(b.b) is IntImm:
        return -b.b.value if kind is Add else b.b.value
    kind = type(a)
    if (kind is Add or kind is Sub) and a.a is b and type(a.b) is IntImm:
        return a.b.value if kind is Add else -a.b.value
    return None


def prove_equal(a: PrimExpr, b: PrimExpr) -> bool:
    """True when ``a`` and ``b`` have the same affine form."""
    if type(a) is IntImm and type(b) is IntImm:
        return a == b  # two literals: equal forms are equal literals of one dtype
    return a == b or constant_difference(a, b) == 0




__all__ = [
    "Linear", "Affine", "linear_expr", "merge_div_mod", "quotient_digits", "remainder_digits", "affine_form", "affine_expr",
    "simplify_affine", "prove_equal", "constant_difference", "fold_add", "fold_sub", "fold_mul",
    "fold_floordiv", "fold_floormod", "fold_min", "fold_max", "fold_extreme_given", "extent_between",
]


def extent_between(start: PrimExpr, stop: PrimExpr) -> PrimExpr:
    """The extent of ``[start, stop)`` as the printer's ``range(start,
    start + extent)`` and ``A[start:start + extent]`` were written: ``stop``
    itself from 0, ``extent`` when ``stop`` is ``start + extent``, so that
    printing and parsing give back the same expression; otherwise the
    simplified difference."""
    x = _int(start)
    if x == 0:
        return stop
    if isinstance(stop, Add) and stop.a == start:
        return stop.b
    return simplify_affine(fold_sub(stop, start))
