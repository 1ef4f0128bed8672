"""The command line: ``python -m tirfun show FILE``, and errors as messages."""

from tirfun.__main__ import main

SOURCE = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * 2.0
'''


def test_show_prints_the_canonical_script(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(SOURCE, encoding="utf-8")
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# from tirfun.script import tir as T")
    assert "T.reads(A[vi])" in out and "B[vi] = A[vi] * T.float32(2.0)" in out


def test_a_parse_error_is_reported_with_its_location_not_a_traceback(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(SOURCE.replace("T.axis.spatial", "T.axis.spatail"), encoding="utf-8")
    assert main(["show", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:8:18: error: unknown name T.axis.spatail")
    assert "did you mean T.axis.spatial?" in err
    assert "Traceback" not in err
