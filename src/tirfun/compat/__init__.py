"""Run programs written for TVM with tirfun serving ``import tvm``.

:mod:`tirfun.compat.tvm` is a package with TVM v0.20's layout over
tirfun's implementation: ``tvm.script`` (``ir as I``, ``tir as T``),
``tvm.te``, ``tvm.tir`` (``build``), ``tvm.IRModule``, ``tvm.ir``
(``structural_equal``), ``tvm.compile`` / ``tvm.build``, ``tvm.nd.array``,
``tvm.cpu()``, ``tvm.runtime.Module`` and ``tvm.testing.assert_allclose``.
Import it under any name, or let ``import tvm`` find it::

    import tirfun.compat
    tirfun.compat.install()        # from now on, ``import tvm`` is tirfun
    import tvm
    from tvm.script import ir as I, tir as T

:func:`install` changes nothing unless called, and refuses to hide a real
TVM: when one is importable (or already imported) it raises, unless asked
with ``replace=True``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from ..errors import TirfunError

#: the submodules of ``tvm`` that ``install`` registers, each a module of
#: tirfun.compat.tvm or of tirfun itself
SUBMODULES = {
    "tvm": "tirfun.compat.tvm",
    "tvm.script": "tirfun.compat.tvm.script",
    "tvm.script.ir": "tirfun.script.ir",
    "tvm.script.tir": "tirfun.script.tir",
    "tvm.script.parser": "tirfun.compat.tvm.script_parser",
    "tvm.script.parser.ir": "tirfun.script.ir",
    "tvm.script.parser.tir": "tirfun.script.tir",
    "tvm.error": "tirfun.compat.tvm.error",
    "tvm.te": "tirfun.te",
    "tvm.tir": "tirfun.compat.tvm.tir",
    "tvm.tir.schedule": "tirfun.compat.tvm.schedule",
    "tvm.tir.analysis": "tirfun.compat.tvm.analysis",
    "tvm.tir.schedule.schedule": "tirfun.compat.tvm.schedule",
    "tvm.tir.schedule.testing": "tirfun.compat.tvm.schedule_testing",
    "tvm.tir.tensor_intrin": "tirfun.tir.tensor_intrin",
    "tvm.tir.tensor_intrin.x86": "tirfun.tir.tensor_intrin.x86",
    "tvm.ir": "tirfun.compat.tvm.ir",
    "tvm.nd": "tirfun.runtime.ndarray",
    "tvm.runtime": "tirfun.compat.tvm.runtime",
    "tvm.target": "tirfun.compat.tvm.target",
    "tvm.testing": "tirfun.compat.tvm.testing",
    "tvm.error": "tirfun.compat.tvm.error",
    "tvm.arith": "tirfun.compat.tvm.arith",
}


def _is_ours(module) -> bool:
    return getattr(module, "__name__", None) == SUBMODULES["tvm"]


def install(*, replace: bool = False) -> ModuleType:
    """Make ``import tvm`` (and ``import tvm.script`` and the other
    submodules) give :mod:`tirfun.compat.tvm`; returns that module.

    Raises :class:`~tirfun.errors.TirfunError` when a real TVM is imported
    or importable, unless ``replace=True``: tirfun never hides it silently.
    Calling it twice is harmless.
    """
    present = sys.modules.get("tvm")
    if present is not None and not _is_ours(present) and not replace:
        raise TirfunError("tirfun.compat.install: a real tvm is already imported; "
                          "pass replace=True to serve 'import tvm' with tirfun anyway")
    if present is None and not replace:
        try:
            spec = importlib.util.find_spec("tvm")
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            raise TirfunError(f"tirfun.compat.install: a real tvm is installed at "
                              f"{spec.origin or spec.submodule_search_locations}; pass "
                              "replace=True to serve 'import tvm' with tirfun anyway")
    if present is not None and not _is_ours(present):
        # only reached with replace=True: the real tvm's modules give way
        for name in [n for n in sys.modules if n == "tvm" or n.startswith("tvm.")]:
            del sys.modules[name]
    for alias, target in SUBMODULES.items():
        sys.modules[alias] = importlib.import_module(target)
    return sys.modules["tvm"]


def uninstall() -> None:
    """Undo :func:`install`: ``import tvm`` finds whatever it found before."""
    for alias, target in SUBMODULES.items():
        module = sys.modules.get(alias)
        if module is not None and module.__name__ == target:
            del sys.modules[alias]


__all__ = ["install", "uninstall", "SUBMODULES"]
