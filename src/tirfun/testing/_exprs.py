"""Random, well-defined expressions for the bodies of random blocks.

Every expression built here means something on every input a block can see:
divisors are nonzero constants (never -1, so no ``INT_MIN / -1``), math
intrinsics get arguments inside their domains (``log(fabs(x) + 1)``,
``asin(tanh(x) * 0.5)``, ``exp(sin(x))``), a float becomes an integer only
after being bounded (``T.Cast("int8", T.tanh(x) * 100)``), integer products
have a small constant or an index on one side, and every buffer access goes
through an :class:`Access` that the block builder proved in bounds.

Expressions are built the way the TVMScript parser builds them from text:
operands of one dtype, no operator between two literals (the parser would
fold it) unless a caller asks for such pairs on purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Buffer, BufferLoad, Cast, DataType, Div, FloatImm,
    FloorDiv, FloorMod, IntImm, Let, Max, Min, Mod, Mul, Not, Or, PrimExpr, Select, Sub, Var,
)
from ..tir import op
from ._choices import Chooser

# unary float intrinsics grouped by the argument they need to stay defined
TOTAL_UNARY = ("sin", "cos", "tanh", "sigmoid", "erf", "atan", "asinh", "fabs", "floor", "ceil",
               "round", "nearbyint", "trunc")
BOUNDED_ARG_UNARY = ("exp", "exp2", "exp10", "sinh", "cosh", "tan")     # f(sin(x))
POSITIVE_ARG_UNARY = ("log", "log2", "log10", "sqrt", "rsqrt", "acosh")  # f(fabs(x) + 1)
NONNEG_ARG_UNARY = ("log1p",)                                           # f(fabs(x))
UNIT_ARG_UNARY = ("asin", "acos", "atanh")                              # f(tanh(x) * 0.5)
TOTAL_BINARY = ("atan2", "hypot", "copysign", "nextafter")
UNARY_NAMES = (TOTAL_UNARY + BOUNDED_ARG_UNARY + POSITIVE_ARG_UNARY + NONNEG_ARG_UNARY
               + UNIT_ARG_UNARY)

FLOAT_CONSTANTS = (1.0, 2.0, 0.5, -1.0, 0.0, 3.0, -2.5, 0.25, 0.1, 1.5e3, 3.14159, -0.75, 1e-3)
INT_CONSTANTS = (1, 2, 3, 0, -1, 5, 7, -4, 16, 100)
DIVISORS = (2, 3, 4, 5, 7, -2, -3)


def is_literal(e: PrimExpr) -> bool:
    """True for IntImm and FloatImm."""
    return isinstance(e, (IntImm, FloatImm))


@attrs.frozen
class DimIndex:
    """How one dimension of a buffer is indexed in a block.

    The index is ``base + offset`` for one of ``offsets`` (``base`` None: the
    constant ``offset``). Several offsets make a stencil; the block's region
    for this dimension is then ``[base + min(offsets), base + max(offsets)]``.
    A base that uses a loop inside the block makes the region the whole
    dimension.
    """

    base: PrimExpr | None
    offsets: tuple[int, ...] = (0,)

    def index(self, offset: int, dtype: DataType) -> PrimExpr:
        """The index expression for one of the offsets."""
        if self.base is None:
            return IntImm(dtype, offset)
        if offset == 0:
            return self.base
        return Add(self.base, IntImm(dtype, offset))


@attrs.frozen
class Access:
    """A buffer and how a block indexes each of its dimensions."""

    buffer: Buffer
    dims: tuple[DimIndex, ...]


class ExprBuilder:
    """Builds random expressions for one block.

    ``iter_vars`` are the block's iteration variables (spatial first),
    ``accesses`` the buffers the body may load, ``dtypes`` the element dtypes
    in play, ``fresh`` a function giving unused names, ``symbols`` the
    function's symbolic extents (usable as values, read-only).
    """

    def __init__(self, ch: Chooser, *, index_dtype: DataType, iter_vars: Sequence[Var],
                 accesses: Sequence[Access], dtypes: Sequence[DataType], fresh: Callable[[str], str],
                 symbols: Sequence[Var] = (), allow_math: bool = True, allow_bitwise: bool = True,
                 allow_let: bool = True, literal_pairs: bool = False, special_values: bool = False):
        self.ch = ch
        self.index_dtype = index_dtype
        self.iter_vars = list(iter_vars)
        self.accesses = list(accesses)
        self.fresh = fresh
        self.allow_math = allow_math
        self.allow_bitwise = allow_bitwise
        self.allow_let = allow_let
        self.literal_pairs = literal_pairs
        self.special_values = special_values
        self.symbols = list(symbols)
        self.lets: list[Var] = []
        self.loaded: set[str] = set()  # names of the buffers loaded so far
        self.float_dtypes = [d for d in dtypes if d.is_float]
        self.int_dtypes = [d for d in dtypes if d.is_integer]
        self.numeric_dtypes = self.float_dtypes + self.int_dtypes

    # ------------------------------------------------------------------ leaves

    def load(self, access: Access) -> BufferLoad:
        """A load through ``access``, with one of its offsets per dimension."""
        indices = [d.index(self.ch.choice(d.offsets), self.index_dtype) for d in access.dims]
        self.loaded.add(access.buffer.name)
        return BufferLoad(access.buffer, indices)

    def absorb_unused(self, value: PrimExpr, accesses: Sequence[Access] | None = None) -> PrimExpr:
        """``value`` combined with a load of every access not loaded yet, so
        that each buffer a block was given is read (an intermediate is then
        always consumed, an input parameter always used)."""
        for access in self.accesses if accesses is None else accesses:
            if access.buffer.name in self.loaded:
                continue
            term = self.convert(self.load(access), value.dtype)
            if value.dtype.is_bool:
                value = And(value, term)
            else:
                value = self.binary(self.ch.choice((Add, Max, Min)), value, term)
        return value

    def constant(self, dtype: DataType) -> PrimExpr:
        """A small literal of ``dtype`` (sometimes a special one, when asked for)."""
        if self.special_values and self.ch.chance(25):
            return self.special_constant(dtype)
        if dtype.is_float:
            return FloatImm(dtype, self.ch.choice(FLOAT_CONSTANTS))
        if dtype.is_bool:
            return IntImm(dtype, self.ch.choice((1, 0)))
        fitting = [v for v in INT_CONSTANTS if dtype.min_value() <= v <= dtype.max_value()]
        return IntImm(dtype, self.ch.choice(fitting))

    def special_constant(self, dtype: DataType) -> PrimExpr:
        """Literals that printers and parsers get wrong: infinities, negative
        zero, NaNs of either sign, denormals, the extremes of a type."""
        if dtype.is_float:
            tiny = {"float16": 6e-08, "bfloat16": 9.2e-41, "float32": 1e-45,
                    "float64": 5e-324}[str(dtype)]
            huge = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
                    "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}[str(dtype)]
            return FloatImm(dtype, self.ch.choice((float("inf"), float("-inf"), -0.0, tiny, huge,
                                                   -huge, 1 / 3, float("nan"), -float("nan"))))
        if dtype.is_bool:
            return IntImm(dtype, self.ch.choice((1, 0)))
        return IntImm(dtype, self.ch.choice((dtype.min_value(), dtype.max_value())))

    def nonliteral_leaf(self, dtype: DataType) -> PrimExpr:
        """A load, an iteration variable or a let variable, converted to ``dtype``."""
        options: list[tuple[Callable[[], PrimExpr], int]] = []
        if self.accesses:
            options.append((lambda: self.convert(self.load(self.ch.choice(self.accesses)), dtype), 6))
        if self.iter_vars:
            options.append((lambda: self.convert(self.ch.choice(self.iter_vars), dtype), 3))
        if self.lets:
            options.append((lambda: self.convert(self.ch.choice(self.lets), dtype), 3))
        if self.symbols:
            options.append((lambda: self.convert(self.ch.choice(self.symbols), dtype), 1))
        if not options:  # a block always has an iteration variable; keep a safe answer anyway
            return self.constant(dtype)
        return self.ch.weighted(options)()

    def leaf(self, dtype: DataType) -> PrimExpr:
        """A literal or a :meth:`nonliteral_leaf`."""
        if self.ch.chance(25):
            return self.constant(dtype)
        return self.nonliteral_leaf(dtype)

    # ------------------------------------------------------------- conversion

    def convert(self, e: PrimExpr, dtype: DataType) -> PrimExpr:
        """``e`` as a value of ``dtype``, by a cast that is defined for every value of ``e``."""
        if e.dtype == dtype:
            return e
        if dtype.is_bool:
            zero = FloatImm(e.dtype, 0.0) if e.dtype.is_float else IntImm(e.dtype, 0)
            return NE(e, zero)
        if dtype.is_float or not e.dtype.is_float:
            return Cast(dtype, e)
        return self.bounded_float_to_int(e, dtype)

    def bounded_float_to_int(self, e: PrimExpr, dtype: DataType) -> PrimExpr:
        """A float turned into an integer only after squeezing it into range:
        converting an out-of-range float is undefined in C and LLVM."""
        if dtype.is_uint:
            squeezed = op.sigmoid(e)  # (0, 1): no negative value reaches an unsigned type
        else:
            squeezed = getattr(op, self.ch.choice(("tanh", "sin", "cos", "erf")))(e)
        scale = 100.0 if dtype.bits <= 8 else 1000.0
        if e.dtype.bits <= 16:
            # half precision overflows to infinities within a few operations,
            # and inf - inf is a NaN, which no integer holds
            squeezed = Select(op.isnan(squeezed), FloatImm(e.dtype, 0.0), squeezed)
        return Cast(dtype, Mul(squeezed, FloatImm(e.dtype, scale)))

    # ------------------------------------------------------------ composites

    def binary(self, cls, a: PrimExpr, b: PrimExpr) -> PrimExpr:
        """``cls(a, b)``, replacing ``b`` when both are literals (the parser would fold them)."""
        if is_literal(a) and is_literal(b) and not (self.literal_pairs and self.ch.chance(50)):
            b = self.nonliteral_leaf(b.dtype)
        return cls(a, b)

    def expr(self, dtype: DataType, depth: int) -> PrimExpr:
        """A random expression of ``dtype`` at most ``depth`` operators deep."""
        dtype = DataType(dtype)
        if dtype.is_bool:
            return self.cond(depth)
        if depth <= 0 or self.ch.chance(20):
            return self.leaf(dtype)
        builders = self._float_builders() if dtype.is_float else self._int_builders(dtype)
        return self.ch.weighted(builders)(dtype, depth - 1)

    def _common_builders(self):
        out = [(self._arith, 8), (self._select, 2), (self._if_then_else, 2), (self._cast, 2)]
        if self.allow_let:
            out.append((self._let, 1))
        return out

    def _float_builders(self):
        out = self._common_builders() + [(self._float_div, 2)]
        if self.allow_math:
            out += [(self._float_unary, 6), (self._float_binary, 3)]
        return out

    def _int_builders(self, dtype: DataType):
        out = self._common_builders() + [(self._int_divmod, 3), (self._int_mul, 2)]
        if self.allow_bitwise:
            out += [(self._bitwise, 2), (self._bit_count, 1)]
        return out

    def _arith(self, dtype, depth):
        # integer products go through _int_mul, which keeps them small
        classes = (Add, Sub, Mul, Min, Max) if dtype.is_float else (Add, Sub, Min, Max)
        cls = self.ch.choice(classes)
        return self.binary(cls, self.expr(dtype, depth), self.expr(dtype, depth))

    def _int_mul(self, dtype, depth):
        a = self.expr(dtype, depth)
        if self.ch.chance(50) and self.iter_vars:
            small = self.convert(self.ch.choice(self.iter_vars), dtype)
        else:
            fitting = [v for v in (2, 3, -1, 4, -2) if dtype.min_value() <= v <= dtype.max_value()]
            small = IntImm(dtype, self.ch.choice(fitting))
        if self.ch.chance(30):
            a, small = small, a
        return self.binary(Mul, a, small)

    def _int_divmod(self, dtype, depth):
        cls = self.ch.choice((FloorDiv, FloorMod, Div, Mod))
        divisors = [d for d in DIVISORS if dtype.min_value() <= d <= dtype.max_value()]
        a = self.expr(dtype, depth)
        if is_literal(a) and not (self.literal_pairs and self.ch.chance(50)):
            a = self.nonliteral_leaf(dtype)
        return cls(a, IntImm(dtype, self.ch.choice(divisors)))

    def _float_div(self, dtype, depth):
        a = self.expr(dtype, depth)
        if self.ch.chance(50):
            b = FloatImm(dtype, self.ch.choice((2.0, 4.0, 0.5, -3.0)))
            if is_literal(a):
                a = self.nonliteral_leaf(dtype)
        else:  # |x| + 1 is never zero
            b = Add(op.fabs(self.nonliteral_or_expr(dtype, depth)), FloatImm(dtype, 1.0))
        return Div(a, b)

    def nonliteral_or_expr(self, dtype, depth):
        """An expression of ``dtype`` that is not a literal (so that an
        operator on it is not folded away and an intrinsic is not constant)."""
        e = self.expr(dtype, depth)
        return self.nonliteral_leaf(dtype) if is_literal(e) else e

    def _select(self, dtype, depth):
        return Select(self.cond(depth), self.expr(dtype, depth), self.expr(dtype, depth))

    def _if_then_else(self, dtype, depth):
        return op.if_then_else(self.cond(depth), self.expr(dtype, depth), self.expr(dtype, depth))

    def _cast(self, dtype, depth):
        sources = [d for d in self.numeric_dtypes if d != dtype] or [self.index_dtype]
        source = self.ch.choice(sources)
        return self.convert(self.nonliteral_or_expr(source, depth), dtype)

    def _let(self, dtype, depth):
        var_dtype = self.ch.choice([dtype] + [d for d in self.numeric_dtypes if d != dtype])
        var = Var(self.fresh("x"), var_dtype)
        value = self.nonliteral_or_expr(var_dtype, depth)
        self.lets.append(var)
        try:
            body = self.binary(self.ch.choice((Add, Max, Min)), self.convert(var, dtype),
                               self.expr(dtype, depth))
        finally:
            self.lets.pop()
        return Let(var, value, body)

    def _float_unary(self, dtype, depth):
        x = self.nonliteral_or_expr(dtype, depth)
        name = self.ch.choice(UNARY_NAMES)  # uniform over names, so rare ones show up too
        if name in BOUNDED_ARG_UNARY:
            arg = getattr(op, self.ch.choice(("sin", "cos", "tanh")))(x)
        elif name in POSITIVE_ARG_UNARY:
            arg = Add(op.fabs(x), FloatImm(dtype, 1.0))
        elif name in NONNEG_ARG_UNARY:
            arg = op.fabs(x)
        elif name in UNIT_ARG_UNARY:
            arg = Mul(op.tanh(x), FloatImm(dtype, 0.5))
        else:
            arg = x
        return getattr(op, name)(arg)

    def _float_binary(self, dtype, depth):
        a = self.nonliteral_or_expr(dtype, depth)
        b = self.expr(dtype, depth)
        name = self.ch.choice(TOTAL_BINARY + ("fmod", "pow", "ldexp"))
        if name == "fmod":
            return op.fmod(a, Add(op.fabs(b), FloatImm(dtype, 1.0)) if not is_literal(b)
                           else FloatImm(dtype, 3.0))
        if name == "pow":  # a positive base and a bounded exponent stay finite
            exponent = op.sin(b) if not is_literal(b) else FloatImm(dtype, 0.5)
            return op.pow(Add(op.fabs(a), FloatImm(dtype, 1.0)), exponent)
        if name == "ldexp":
            return op.ldexp(a, IntImm("int32", self.ch.choice((1, 2, -1, 3))))
        return getattr(op, name)(a, b)

    def _bitwise(self, dtype, depth):
        a = self.nonliteral_or_expr(dtype, depth)
        kind = self.ch.choice(("and", "or", "xor", "not", "shift_right", "shift_left"))
        if kind == "not":
            return ~a
        if kind in ("shift_right", "shift_left"):
            amount = IntImm(dtype, self.ch.choice((1, 2, 3)))
            return a >> amount if kind == "shift_right" else a << amount
        b = self.expr(dtype, depth)
        if kind == "and":
            return a & b
        if kind == "or":
            return a | b
        return a ^ b

    def _bit_count(self, dtype, depth):
        a = self.nonliteral_or_expr(dtype, depth)
        if self.ch.chance(50):
            return op.popcount(a)
        # clz(0) is undefined for some targets: set the lowest bit first
        return op.clz(a | IntImm(dtype, 1))

    # ------------------------------------------------------------ conditions

    def cond(self, depth: int) -> PrimExpr:
        """A random bool condition at most ``depth`` operators deep."""
        options = [(self._compare, 6)]
        if depth > 0:
            options += [(self._logic, 3), (self._bool_compare, 1), (self._bool_select, 1)]
            if self.float_dtypes and self.allow_math:
                options.append((self._float_predicate, 1))
            if self.int_dtypes:
                options.append((self._cast_to_bool, 1))
        bool_loads = [a for a in self.accesses if a.buffer.dtype.is_bool]
        if bool_loads:
            options.append((lambda d: self.load(self.ch.choice(bool_loads)), 2))
        return self.ch.weighted(options)(max(depth - 1, 0))

    def _compare(self, depth):
        cls = self.ch.choice((LT, LE, GT, GE, EQ, NE))
        use_index = not self.numeric_dtypes or self.ch.chance(40)
        if use_index and self.iter_vars:
            a = self.ch.choice(self.iter_vars)
            b = self.ch.choice(self.iter_vars) if self.ch.chance(30) else self.constant(self.index_dtype)
        else:
            dtype = self.ch.choice(self.numeric_dtypes or [self.index_dtype])
            a = self.nonliteral_or_expr(dtype, depth)
            b = self.expr(dtype, depth)
        return self.binary(cls, a, b)

    def _logic(self, depth):
        kind = self.ch.choice(("and", "or", "not"))
        if kind == "not":
            return Not(self.cond(depth))
        cls = And if kind == "and" else Or
        return cls(self.cond(depth), self.cond(depth))

    def _bool_compare(self, depth):
        # (a < b) == (c < d) needs its parentheses: Python would chain the comparisons
        return self.ch.choice((EQ, NE))(self.cond(depth), self.cond(depth))

    def _bool_select(self, depth):
        return Select(self.cond(depth), self.cond(depth), self.cond(depth))

    def _cast_to_bool(self, depth):
        dtype = self.ch.choice(self.int_dtypes)
        return Cast("bool", self.nonliteral_or_expr(dtype, depth))

    def _float_predicate(self, depth):
        dtype = self.ch.choice(self.float_dtypes)
        name = self.ch.choice(("isnan", "isinf", "isfinite"))
        return getattr(op, name)(self.nonliteral_or_expr(dtype, depth))


__all__ = ["Access", "DimIndex", "ExprBuilder", "is_literal"]
