"""The runtime: devices, arrays, building and calling compiled modules.

``tirfun.build(mod, target="llvm")`` returns a :class:`Module`;
``tirfun.cpu(0)`` / ``tirfun.cuda(0)`` name devices; ``tirfun.nd`` makes
arrays. llvmlite is imported on the first build, not before.
"""

from __future__ import annotations

from .builder import build, clear_cache
from .device import Device, cpu, cuda
from .module import Function, Module, ProfileResult
from .ndarray import NDArray
from .target import Target

__all__ = ["build", "clear_cache", "Device", "cpu", "cuda", "Module", "Function", "ProfileResult",
           "NDArray", "Target"]
