"""``import tirfun`` stays light: no numpy, llvmlite or cuda-python."""

import subprocess
import sys


def test_import_loads_neither_numpy_nor_llvmlite_nor_cuda():
    code = ("import sys, tirfun; "
            "print(sorted(m for m in ('numpy', 'llvmlite', 'cuda', 'hypothesis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_public_surface_resolves_lazily():
    import tirfun

    for name in ("Schedule", "build", "lower", "cpu", "cuda", "nd", "te", "tir", "script",
                 "interp", "testing", "structural_equal", "assert_structural_equal",
                 "structural_hash", "verify", "Pipeline", "apply", "LoopRef", "BlockRef", "Target"):
        assert getattr(tirfun, name) is not None, name
    assert callable(tirfun.build) and callable(tirfun.lower)
