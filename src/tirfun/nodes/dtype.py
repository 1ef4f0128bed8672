"""Data types: ``"float32"``, ``"int64"``, ``"bool"``, ``"float32x8"``, ``"handle"``.

A :class:`DataType` is a ``str`` holding the canonical spelling, so it compares
equal to plain strings (``x.dtype == "float32"``) and prints as TVM prints it,
while also offering the parsed parts (``code``, ``bits``, ``lanes``).
"""

from __future__ import annotations

import functools
import re

from ..errors import NodeError

_CODES = ("int", "uint", "float", "bfloat")
_PATTERN = re.compile(r"^(int|uint|float|bfloat)(\d+)(?:x(\d+))?$")
_BOOL = re.compile(r"^bool(?:x(\d+))?$")
_VALID_BITS = {
    "int": (8, 16, 32, 64),
    "uint": (1, 8, 16, 32, 64),
    "float": (16, 32, 64),
    "bfloat": (16,),
}


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> tuple[str, str, int, int]:
    """Return ``(canonical, code, bits, lanes)`` for a dtype spelling."""
    if text in ("handle", "void"):
        return text, text, 64 if text == "handle" else 0, 1
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

    @property
    def code(self) -> str:
        """``"int"``, ``"uint"``, ``"float"``, ``"bfloat"``, ``"handle"`` or ``"void"``."""
        return _facts(self).code

    @property
    def bits(self) -> int:
        return _facts(self).bits

    @property
    def lanes(self) -> int:
        return _facts(self).lanes

    @property
    def element_of(self) -> "DataType":
        """The scalar type of one lane."""
        facts = _facts(self)
        if facts.code in ("handle", "void"):
            return self
        if facts.element is None:
            facts.element = _intern(_spell(facts.code, facts.bits, 1))
        return facts.element

    def with_lanes(self, lanes: int) -> "DataType":
        return DataType(_spell(self.code, self.bits, lanes))

    def with_bits(self, bits: int) -> "DataType":
        return DataType(_spell(self.code, bits, self.lanes))

    @property
    def is_bool(self) -> bool:
        return _facts(self).is_bool

    @property
    def is_int(self) -> bool:
        """Signed integer (not bool)."""
        return _facts(self).code == "int"

    @property
    def is_uint(self) -> bool:
        """Unsigned integer, excluding bool."""
        return _facts(self).is_uint

    @property
    def is_integer(self) -> bool:
        """Signed or unsigned integer, excluding bool."""
        return _facts(self).is_integer

    @property
    def is_float(self) -> bool:
        """IEEE float or bfloat."""
        return _facts(self).is_float

    @property
    def is_handle(self) -> bool:
        return _facts(self).code == "handle"

    @property
    def is_void(self) -> bool:
        return _facts(self).code == "void"

    @property
    def is_scalar(self) -> bool:
        return _facts(self).lanes == 1

    @property
    def is_vector(self) -> bool:
        return _facts(self).lanes > 1

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
        return _facts(self).min_value

    def max_value(self) -> int | float:
        """The largest representable value of one lane."""
        return _facts(self).max_value

    def int_range(self) -> tuple[int, int] | None:
        """``(min, max)`` of a scalar integer or bool type, None for any
        other type: the one question an integer constant asks of its type."""
        return _facts(self).int_range

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __reduce__(self):
        return (DataType, (str(self),))


class _Facts:
    """Everything a DataType answers about itself, worked out once per
    spelling: node constructors ask these questions on every node built, so
    each answer is one dictionary look-up, not a parse."""

    __slots__ = ("code", "bits", "lanes", "is_bool", "is_uint", "is_integer", "is_float",
                 "min_value", "max_value", "int_range", "element")

    def __init__(self, text: str):
        _, code, bits, lanes = _parse(text)
        self.code, self.bits, self.lanes = code, bits, lanes
        self.is_bool = code == "uint" and bits == 1
        self.is_uint = code == "uint" and bits != 1
        self.is_integer = code == "int" or self.is_uint
        self.is_float = code in ("float", "bfloat")
        if self.is_bool:
            lo, hi = 0, 1
        elif code == "int":
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        elif code == "uint":
            lo, hi = 0, (1 << bits) - 1
        else:
            lo, hi = float("-inf"), float("inf")
        self.min_value, self.max_value = lo, hi
        self.int_range = (lo, hi) if (self.is_bool or self.is_integer) and lanes == 1 else None
        self.element = None  # the DataType of one lane, made on first use


# canonical spelling -> its facts (a pure function of the spelling, filled on first use)
_FACTS: dict[str, _Facts] = {}


def _facts(dt: str) -> _Facts:
    try:
        return _FACTS[dt]
    except KeyError:
        facts = _FACTS[str(dt)] = _Facts(str(dt))
        return facts


@functools.lru_cache(maxsize=None)
def _intern(text: str) -> DataType:
    canonical = _parse(text)[0]
    return str.__new__(DataType, canonical)


def dtype_of(value) -> DataType:
    """The default dtype TVM gives a Python literal."""
    if isinstance(value, bool):
        return DataType("bool")
    if isinstance(value, int):
        return DataType("int32") if -(2**31) <= value < 2**31 else DataType("int64")
    if isinstance(value, float):
        return DataType("float32")
    raise NodeError(f"no TIR data type for the Python value {value!r}")


__all__ = ["DataType", "dtype_of"]
