"""Statements outside the schedulable core: ``While``, ``AllocateConst``,
``BufferRealize`` and ``Prefetch``.

They are kept apart from :mod:`.stmt` because schedule primitives never
create them; the parser, printer, verifier, interpreter and lowering know
them.
"""

from __future__ import annotations

import math

from attrs import field
from pyrsistent import PMap, PVector

from ..errors import NodeError
from .base import node, to_attr_map, to_pvector
from .buffer import Buffer, Range
from .dtype import DataType
from .expr import IntImm, PrimExpr, Var, to_expr, to_expr_vector
from .stmt import Stmt, _is_bool_scalar, _is_stmt, _is_var


@node
class While(Stmt):
    """``while condition: body``; the condition is evaluated before every
    iteration, as in TVM's ``tir.While``."""

    condition: PrimExpr = field(converter=to_expr, validator=_is_bool_scalar)
    body: Stmt = field(validator=_is_stmt)


@node
class AllocateConst(Stmt):
    """``buffer_var`` points at constant data of ``dtype`` for the extent of
    ``body`` (TVM's ``tir.AllocateConst``). ``data`` holds the
    ``prod(extents)`` values in row-major order as little-endian bytes, as
    TVM's NDArray does, so equality is exact (``-0.0`` is not ``0.0``);
    :attr:`values` reads them as Python numbers."""

    buffer_var: Var = field(validator=_is_var)
    dtype: DataType = field(converter=DataType)
    extents: PVector = field(converter=to_expr_vector)
    data: bytes = field()
    body: Stmt = field(validator=_is_stmt)
    annotations: PMap = field(factory=dict, converter=to_attr_map)

    @property
    def values(self) -> list:
        """The constants as Python numbers, in row-major order."""
        import numpy as np

        return np.frombuffer(self.data, dtype=np.dtype(self.dtype.numpy_name).newbyteorder("<")).tolist()

    def __attrs_post_init__(self):
        if not self.buffer_var.dtype.is_handle:
            raise NodeError(f"AllocateConst: {self.buffer_var.name} must be a handle variable")
        if not all(isinstance(e, IntImm) for e in self.extents):
            raise NodeError("AllocateConst needs constant extents")
        if (not (self.dtype.is_integer or self.dtype.is_float) or self.dtype.lanes != 1
                or self.dtype.numpy_name is None):
            raise NodeError(f"AllocateConst holds scalar integers or floats, not {self.dtype}")
        if not isinstance(self.data, bytes):
            raise NodeError(f"AllocateConst data must be bytes, got {type(self.data).__name__}")
        count = math.prod(e.value for e in self.extents)
        size = count * self.dtype.bits // 8
        if size != len(self.data):
            raise NodeError(f"AllocateConst {self.buffer_var.name}: the extents hold {count} "
                            f"values ({size} bytes) but {len(self.data)} bytes are given")


@node
class BufferRealize(Stmt):
    """``T.realize(A[0:8], scope)``: the region ``bounds`` of ``buffer``
    exists for ``body`` (TIR before storage flattening; TVM's CPU build does
    not compile it)."""

    buffer: Buffer
    bounds: PVector = field(converter=to_pvector)
    condition: PrimExpr = field(converter=to_expr, validator=_is_bool_scalar)
    body: Stmt = field(validator=_is_stmt)

    def __attrs_post_init__(self):
        if len(self.bounds) != len(self.buffer.shape) or not all(isinstance(r, Range) for r in self.bounds):
            raise NodeError(f"BufferRealize of {self.buffer.name} needs one Range per dimension")


@node
class Prefetch(Stmt):
    """``T.prefetch(A, [T.Range(0, 8)])``: a hint that the region ``bounds``
    of ``buffer`` is read soon (TVM's ``tir.Prefetch``). It computes
    nothing: the interpreter skips it and the build drops it."""

    buffer: Buffer
    bounds: PVector = field(converter=to_pvector)

    def __attrs_post_init__(self):
        if len(self.bounds) != len(self.buffer.shape) or not all(isinstance(r, Range) for r in self.bounds):
            raise NodeError(f"Prefetch of {self.buffer.name} needs one Range per dimension")


__all__ = ["While", "AllocateConst", "BufferRealize", "Prefetch"]
