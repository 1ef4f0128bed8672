"""Data types: ``"float32"``, ``"int64"``, ``"bool"``, ``"float32x8"``, ``"handle"``,
``"float8_e4m3fn"``.

A :class:`DataType` is a ``str`` holding the canonical spelling, so it compares
equal to plain strings (``x.dtype == "float32"``) and prints as TVM prints it,
while also offering the parsed parts (``code``, ``bits``, ``lanes``).
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from ..errors import NodeError

_CODES = ("int", "uint", "float", "bfloat")
_PATTERN = re.compile(r"^(int|uint|float|bfloat)(\d+)(?:x(\d+))?$")
#: the narrow floats of ml_dtypes and TVM, spelled by their code alone:
#: float8 with 4 exponent and 3 mantissa bits and no infinity (``fn``),
#: float8 with 5 and 2 bits (IEEE-like), float4 with 2 and 1 bits (no
#: infinity, no NaN); their bits
MINI_FLOATS = {"float8_e4m3fn": 8, "float8_e5m2": 8, "float4_e2m1fn": 4}
_MINI = re.compile(r"^(float8_e4m3fn|float8_e5m2|float4_e2m1fn)(?:x(\d+))?$")
#: the largest finite value of each
_MINI_MAX = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "float4_e2m1fn": 6.0}
_BOOL = re.compile(r"^bool(?:x(\d+))?$")
_VALID_BITS = {
    "int": (8, 16, 32, 64),
    "uint": (1, 8, 16, 32, 64),
    "float": (16, 32, 64),
    "bfloat": (16,),
}


#: the bits TVM gives a type named without them
_DEFAULT_BITS = {"int": "int32", "uint": "uint32", "float": "float32", "bfloat": "bfloat16"}


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> tuple[str, str, int, int]:
    """Return ``(canonical, code, bits, lanes)`` for a dtype spelling."""
    if text in ("handle", "void"):
        return text, text, 64 if text == "handle" else 0, 1
    if text == "":
        return "void", "void", 0, 1  # TVM reads the empty spelling as void
    if text in _DEFAULT_BITS:
        # as TVM reads a type named without its bits: int32, float32, bfloat16
        return _parse(_DEFAULT_BITS[text])
    m = _MINI.match(text)
    if m:
        lanes = int(m.group(2)) if m.group(2) else 1
        if lanes < 1:
            raise NodeError(f"data type {text!r} has no lanes")
        return _spell(m.group(1), MINI_FLOATS[m.group(1)], lanes), m.group(1), MINI_FLOATS[m.group(1)], lanes
    m = _BOOL.match(text)
    if m:
        lanes = int(m.group(1)) if m.group(1) else 1
        return _spell("uint", 1, lanes), "uint", 1, lanes
    m = _PATTERN.match(text)
    if m is None:
        raise NodeError(
            f"unknown data type {text!r}; expected e.g. 'float32', 'int64', 'bool', "
            f"'uint8', 'bfloat16', 'float32x8' or 'handle'")
    code, bits = m.group(1), int(m.group(2))
    lanes = int(m.group(3)) if m.group(3) else 1
    if bits not in _VALID_BITS[code]:
        raise NodeError(f"unsupported data type {text!r}: {code} comes in "
                        f"{', '.join(str(b) for b in _VALID_BITS[code])} bits")
    if lanes < 1:
        raise NodeError(f"data type {text!r} has no lanes")
    return _spell(code, bits, lanes), code, bits, lanes


def _spell(code: str, bits: int, lanes: int) -> str:
    if code in MINI_FLOATS:
        return code if lanes == 1 else f"{code}x{lanes}"
    base = "bool" if (code == "uint" and bits == 1) else f"{code}{bits}"
    return base if lanes == 1 else f"{base}x{lanes}"


class DataType(str):
    """A TIR data type, spelled as TVM spells it.

    >>> DataType("float32x4").lanes
    4
    >>> DataType("float32x4").element_of
    'float32'
    >>> DataType("bool") == "bool"
    True
    """

    __slots__ = ()

    def __new__(cls, value: "str | DataType") -> "DataType":
        if type(value) is DataType:
            return value
        if not isinstance(value, str):
            # numpy dtypes and TVM-style objects print to their name
            name = getattr(value, "name", None)
            if isinstance(name, str):
                value = name
            else:
                raise NodeError(f"a data type must be a string such as 'float32', got {value!r}")
        return _intern(value)

    # Every question below is answered from the spelling's facts, worked out
    # once per spelling (see _Facts): dtypes are asked on every node built
    # and every check made, so each answer is one dictionary look-up.
    @property
    def code(self) -> str:
        """``"int"``, ``"uint"``, ``"float"``, ``"bfloat"``, ``"handle"``, ``"void"``
        or one of the narrow floats of :data:`MINI_FLOATS` (``"float8_e4m3fn"``)."""
        return (_FACTS.get(self) or _learn(self)).code

    @property
    def bits(self) -> int:
        return (_FACTS.get(self) or _learn(self)).bits

    @property
    def lanes(self) -> int:
        return (_FACTS.get(self) or _learn(self)).lanes

    @property
    def element_of(self) -> "DataType":
        """The scalar type of one lane."""
        return (_FACTS.get(self) or _learn(self)).element_of

    def with_lanes(self, lanes: int) -> "DataType":
        if lanes == 1:
            return self.element_of
        return DataType(_spell(self.code, self.bits, lanes))

    def with_bits(self, bits: int) -> "DataType":
        return DataType(_spell(self.code, bits, self.lanes))

    @property
    def is_bool(self) -> bool:
        return (_FACTS.get(self) or _learn(self)).is_bool

    @property
    def is_int(self) -> bool:
        """Signed integer (not bool)."""
        return (_FACTS.get(self) or _learn(self)).code == "int"

    @property
    def is_uint(self) -> bool:
        """Unsigned integer, excluding bool."""
        return (_FACTS.get(self) or _learn(self)).is_uint

    @property
    def is_integer(self) -> bool:
        """Signed or unsigned integer, excluding bool."""
        return (_FACTS.get(self) or _learn(self)).is_integer

    @property
    def is_index(self) -> bool:
        """A scalar integer, signed or unsigned, not bool: the type of a loop
        variable or a buffer index (one question where nodes and checks ask
        three)."""
        return (_FACTS.get(self) or _learn(self)).is_index

    @property
    def is_float(self) -> bool:
        """IEEE float, bfloat or one of the narrow floats (float8, float4)."""
        return (_FACTS.get(self) or _learn(self)).is_float

    @property
    def is_mini_float(self) -> bool:
        """float8_e4m3fn, float8_e5m2 or float4_e2m1fn (held in a byte each)."""
        return self.code in MINI_FLOATS

    @property
    def is_handle(self) -> bool:
        return self.code == "handle"

    @property
    def is_void(self) -> bool:
        return self.code == "void"

    @property
    def is_scalar(self) -> bool:
        return self.lanes == 1

    @property
    def is_vector(self) -> bool:
        return self.lanes > 1

    @property
    def numpy_name(self) -> str | None:
        """The numpy dtype name of one lane, or None where numpy has none."""
        if self.is_bool:
            return "bool"
        if self.code in ("int", "uint", "float"):
            return f"{self.code}{self.bits}"
        return None

    def min_value(self) -> int | float:
        """The smallest representable value of one lane."""
        known = (_FACTS.get(self) or _learn(self)).int_range
        if known is not None:
            return known[0]
        if self.is_bool:
            return 0
        if self.code == "int":
            return -(1 << (self.bits - 1))
        if self.code == "uint":
            return 0
        if self.code in MINI_FLOATS:
            return -_MINI_MAX[self.code]
        return float("-inf")

    def max_value(self) -> int | float:
        """The largest representable value of one lane."""
        known = (_FACTS.get(self) or _learn(self)).int_range
        if known is not None:
            return known[1]
        if self.is_bool:
            return 1
        if self.code == "int":
            return (1 << (self.bits - 1)) - 1
        if self.code == "uint":
            return (1 << self.bits) - 1
        if self.code in MINI_FLOATS:
            return _MINI_MAX[self.code]
        return float("inf")

    def int_range(self) -> tuple[int, int] | None:
        """``(min, max)`` of a scalar integer or bool type, None for any
        other type: the one question an integer constant asks of its type
        (worked out once per spelling)."""
        return (_FACTS.get(self) or _learn(self)).int_range

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __reduce__(self):
        return (DataType, (str(self),))


class _Facts(NamedTuple):
    """What a spelling's questions answer, computed once per spelling."""

    code: str
    bits: int
    lanes: int
    element_of: "DataType"
    is_bool: bool
    is_uint: bool
    is_integer: bool
    is_float: bool
    int_range: "tuple[int, int] | None"
    is_index: bool


# spelling -> its facts: a pure function of the spelling, filled on first use
# (the interned DataType and its plain str hash and compare alike)
_FACTS: dict = {}


def _learn(dt: DataType) -> _Facts:
    _, code, bits, lanes = _parse(str(dt))
    element = dt if lanes == 1 or code in ("handle", "void") else _intern(_spell(code, bits, 1))
    is_bool = code == "uint" and bits == 1
    is_uint = code == "uint" and bits != 1
    is_integer = code == "int" or is_uint
    is_float = code in ("float", "bfloat") or code in MINI_FLOATS
    int_range = None
    if lanes == 1 and (is_bool or is_integer):
        if is_bool:
            int_range = (0, 1)
        elif code == "int":
            int_range = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        else:
            int_range = (0, (1 << bits) - 1)
    facts = _Facts(code, bits, lanes, element, is_bool, is_uint, is_integer, is_float, int_range,
                   is_integer and lanes == 1)
    _FACTS[str(dt)] = facts
    return facts


@functools.lru_cache(maxsize=None)
def _intern(text: str) -> DataType:
    canonical = _parse(text)[0]
    return str.__new__(DataType, canonical)


def dtype_of(value) -> DataType:
    """The default dtype TVM gives a Python literal; a numpy scalar has its own."""
    if type(value).__module__ == "numpy" and hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0:
        return DataType(str(value.dtype))
    if isinstance(value, bool):
        return DataType("bool")
    if isinstance(value, int):
        return DataType("int32") if -(2**31) <= value < 2**31 else DataType("int64")
    if isinstance(value, float):
        return DataType("float32")
    raise NodeError(f"no TIR data type for the Python value {value!r}")


__all__ = ["DataType", "dtype_of", "MINI_FLOATS"]
