"""tirfun: TensorIR as immutable values.

Write a tensor program in TVMScript or with ``te.compute``, transform it with
schedule primitives that are pure functions from one IRModule to another,
print it at every step, build it for the CPU or an NVIDIA GPU, and run it.

The public surface is re-exported here lazily, so ``import tirfun`` stays
fast and loads neither llvmlite nor cuda-python.
"""

from __future__ import annotations

import importlib

from .errors import (
    ArgumentError, BuildError, InterpError, NodeError, ParseError, ScheduleError, TirfunError,
    UnknownNameError, VerifyError,
)
from .nodes import DataType, IRModule, PrimFunc

__version__ = "0.1.0"

# name -> (module, attribute or None for the module itself)
_LAZY = {
    "tir": ("tirfun.tir", None),
    "script": ("tirfun.script", None),
    "te": ("tirfun.te", None),
    "analysis": ("tirfun.analysis", None),
    "interp": ("tirfun.interp", None),
    "testing": ("tirfun.testing", None),
    "rewrites": ("tirfun.rewrites", None),
    "lower_passes": ("tirfun.lower", None),
    "runtime": ("tirfun.runtime", None),
    "nd": ("tirfun.runtime.ndarray", None),
    "structural_equal": ("tirfun.analysis.equality", "structural_equal"),
    "assert_structural_equal": ("tirfun.analysis.equality", "assert_structural_equal"),
    "structural_hash": ("tirfun.analysis.equality", "structural_hash"),
    "verify": ("tirfun.analysis.verify", "verify"),
    "Schedule": ("tirfun.schedule", "Schedule"),
    "Trace": ("tirfun.schedule", "Trace"),
    "Pipeline": ("tirfun.rewrites", "Pipeline"),
    "apply": ("tirfun.rewrites", "apply"),
    "LoopRef": ("tirfun.rewrites", "LoopRef"),
    "BlockRef": ("tirfun.rewrites", "BlockRef"),
    "lower": ("tirfun.lower", None),  # the package is callable: tirfun.lower(mod)
    "build": ("tirfun.runtime", "build"),
    "cpu": ("tirfun.runtime", "cpu"),
    "cuda": ("tirfun.runtime", "cuda"),
    "target": ("tirfun.target", None),
    "Target": ("tirfun.target", "Target"),
}


def __getattr__(name: str):
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'tirfun' has no attribute {name!r}")
    module = importlib.import_module(entry[0])
    value = module if entry[1] is None else getattr(module, entry[1])
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "TirfunError", "NodeError", "ParseError", "ScheduleError", "VerifyError", "InterpError",
    "BuildError", "ArgumentError", "UnknownNameError", "DataType", "IRModule", "PrimFunc",
    *_LAZY,
]
