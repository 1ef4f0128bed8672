"""The README's Python examples run as written, in order, in one namespace."""

import linecache
import pathlib
import re
import sys

import numpy as np

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_examples_run_and_compute_what_they_say():
    blocks = _python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    source = "\n".join(blocks)
    filename = "<README.md examples>"
    # decorated TVMScript functions read their own source, as in a notebook
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {"__name__": "readme"}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own README
    b = namespace["b"]
    np.testing.assert_array_equal(b.numpy(), np.arange(8, dtype="float32") + 1)
    sch = namespace["sch"]
    assert 'T.thread_binding(2, thread="blockIdx.x")' in sch.mod.script()
    assert "tirfun" in namespace["MyModule"].script()
    np.testing.assert_array_equal(namespace["y"].numpy(), [0, 2, 4, 6])
    assert "tvm" not in sys.modules
