"""``tvm.runtime``: built modules, arrays and devices, and ``const`` and
``convert``, which turn Python values into tirfun's nodes."""

from __future__ import annotations

from ...nodes import PrimExpr, const
from ...runtime import Device, Function, Module, NDArray, cpu, cuda
from ...runtime.ndarray import array, empty, from_dlpack

PackedFunc = Function


def convert(value):
    """TVM's ``tvm.runtime.convert``: a Python number becomes a constant
    (an int is int32, or int64 when it does not fit; a float is float32; a
    bool is bool), a list or tuple a list of converted values, a dict a
    dict of them; nodes and strings stay as they are."""
    if isinstance(value, (bool, int, float)):
        return const(value)
    if isinstance(value, (list, tuple)):
        return [convert(v) for v in value]
    if isinstance(value, dict):
        return {k: convert(v) for k, v in value.items()}
    return value


__all__ = ["Module", "Function", "PackedFunc", "NDArray", "Device", "cpu", "cuda", "array",
           "empty", "from_dlpack", "const", "convert", "PrimExpr"]
