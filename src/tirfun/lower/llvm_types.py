"""TIR data types as llvmlite IR types.

Imported only by the code generators (llvmlite is loaded lazily).
"""

from __future__ import annotations

from llvmlite import ir

from ..errors import BuildError
from ..nodes import DataType

class BFloatType(ir.Type):
    """LLVM's ``bfloat``, which llvmlite.ir does not spell: 16 bits, the
    exponent range of float, 8 bits of precision."""

    null = "0xR0000"
    intrinsic_name = "bf16"

    def __str__(self):
        return "bfloat"

    def __eq__(self, other):
        return isinstance(other, BFloatType)

    def __hash__(self):
        return hash(BFloatType)

    def format_constant(self, value) -> str:
        """A constant as LLVM writes bfloat ones: ``0xR`` and its 16 bits
        (``value`` rounded to bfloat16 as ml_dtypes rounds it)."""
        from ..numpy_dtypes import bfloat16

        bits = int(bfloat16().type(float(value)).view("uint16"))
        return f"0xR{bits:04X}"


HALF = ir.HalfType()
BFLOAT = BFloatType()
PTR = ir.PointerType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
VOID = ir.VoidType()


def scalar_type(dt: DataType) -> ir.Type:
    """The register type of one lane (bool is ``i1``)."""
    dt = DataType(dt).element_of
    if dt.is_bool:
        return I1
    if dt.is_integer:
        return ir.IntType(dt.bits)
    if dt.code == "float":
        return {16: HALF, 32: ir.FloatType(), 64: ir.DoubleType()}[dt.bits]
    if dt.code == "bfloat":
        return BFLOAT
    if dt.is_mini_float:
        # float8/float4 compute in double (see tirfun.lower.llvm_minifloat)
        return ir.DoubleType()
    if dt.is_handle:
        return PTR
    raise BuildError(f"the LLVM build does not support the data type {dt}")


def value_type(dt: DataType) -> ir.Type:
    """The register type of a value of ``dt`` (vectors for lanes > 1)."""
    dt = DataType(dt)
    t = scalar_type(dt)
    return t if dt.lanes == 1 else ir.VectorType(t, dt.lanes)


def memory_type(dt: DataType) -> ir.Type:
    """How one element is stored in memory (bool takes a byte, as numpy's)."""
    dt = DataType(dt).element_of
    return I8 if dt.is_bool or dt.is_mini_float else scalar_type(dt)


def element_bytes(dt: DataType) -> int:
    """Bytes one element of ``dt`` takes in memory."""
    dt = DataType(dt).element_of
    return 1 if dt.is_bool or dt.is_mini_float else dt.bits // 8


__all__ = ["BFloatType", "HALF", "BFLOAT", "PTR", "I1", "I8", "I16", "I32", "I64", "VOID",
           "scalar_type", "value_type", "memory_type",
           "element_bytes"]
