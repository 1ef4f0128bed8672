"""``tvm.runtime``: built modules, arrays and devices."""

from ...runtime import Device, Function, Module, NDArray, cpu, cuda
from ...runtime.ndarray import array, empty, from_dlpack

PackedFunc = Function

__all__ = ["Module", "Function", "PackedFunc", "NDArray", "Device", "cpu", "cuda", "array",
           "empty", "from_dlpack"]
