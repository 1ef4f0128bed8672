"""The runtime: devices, arrays, building and calling compiled modules.

``tirfun.build(mod, target="llvm")`` returns a :class:`Module`, for
``target="cuda"`` a :class:`CUDAModule` (PTX, readable without a GPU);
``tirfun.cpu(0)`` / ``tirfun.cuda(0)`` name devices; ``tirfun.nd`` makes
arrays. llvmlite is imported on the first build, cuda-python on the first
use of a GPU, not before.
"""

from __future__ import annotations

from .builder import build, clear_cache
from .cuda_module import CUDAModule
from .device import Device, cpu, cuda
from .module import Function, Module, ProfileResult
from .ndarray import NDArray
from .target import Target

__all__ = ["build", "clear_cache", "Device", "cpu", "cuda", "Module", "CUDAModule", "Function",
           "ProfileResult", "NDArray", "Target"]
