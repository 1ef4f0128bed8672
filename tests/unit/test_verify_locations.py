"""Every VerifyError raised while parsing says where the culprit is written,
as a ParseError does: a fuzz-like loop over broken variants of generated
programs."""

from __future__ import annotations

import random
import re

import pytest

from tirfun.errors import ParseError, VerifyError
from tirfun.script import from_source
from tirfun.testing.programs import random_prim_func

_WORD = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*\b")
_AXIS = re.compile(r"T\.axis\.(spatial|reduce)\((\d+)")


def _variants(text: str, rng: random.Random, count: int):
    """``count`` single-point changes of ``text``: one name swapped for
    another name of the program, or one iteration domain shrunk."""
    lines = text.splitlines()
    body = [i for i, line in enumerate(lines) if line.startswith("    ")]
    names = sorted({w for i in body for w in _WORD.findall(lines[i])
                    if w not in ("T", "for", "in", "with", "if", "else", "range")})
    for _ in range(count):
        i = rng.choice(body)
        line = lines[i]
        axes = list(_AXIS.finditer(line))
        if axes and rng.random() < 0.3:
            m = rng.choice(axes)
            line = line[:m.start(2)] + "1" + line[m.end(2):]
        else:
            words = list(_WORD.finditer(line))
            if not words or not names:
                continue
            m = rng.choice(words)
            line = line[:m.start()] + rng.choice(names) + line[m.end():]
        yield "\n".join(lines[:i] + [line] + lines[i + 1:])


def test_every_verify_error_from_the_parser_is_located():
    rng = random.Random(8)
    seen = 0
    for seed in range(80):
        text = random_prim_func(seed).script()
        for variant in _variants(text, rng, 25):
            try:
                from_source(variant, filename="variant.py", check_well_formed="strict")
            except VerifyError as err:
                seen += 1
                assert err.filename == "variant.py", str(err)
                assert err.line > 0 and err.column > 0, str(err)
                assert err.source_line == variant.splitlines()[err.line - 1], str(err)
                assert str(err).startswith(f"variant.py:{err.line}:{err.column}: error: ")
            except ParseError:
                pass
    assert seen >= 30, seen  # the loop does reach the verifier


def test_a_loop_variable_in_a_block_points_at_its_use():
    text = '''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[i]
'''
    with pytest.raises(VerifyError) as info:
        from_source(text, filename="k.py")
    err = info.value
    assert (err.rule, err.block, err.names, err.line, err.column) == (
        "block isolation", "B", ("i",), 7, 23)
    assert str(err).splitlines()[1:] == ["                B[vi] = A[i]", "                          ^"]


def test_a_binding_outside_its_domain_points_at_the_binding():
    text = '''
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            A[vi] = T.float32(0)
'''
    from_source(text, filename="k.py")  # TVM parses it: a lint, and a refusal to build
    with pytest.raises(VerifyError) as info:
        from_source(text, filename="k.py", check_well_formed="strict")
    assert (info.value.rule, info.value.line) == ("binding outside domain", 6)


def test_a_decorated_function_is_located_in_its_file():
    from tirfun.script import tir as T

    with pytest.raises(VerifyError) as info:
        @T.prim_func
        def bad(A: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    A[i] = T.float32(0)  # the loop variable inside the block

    err = info.value
    assert err.filename == __file__
    assert err.source_line.strip() == "A[i] = T.float32(0)  # the loop variable inside the block"
    assert err.column == err.source_line.index("i]") + 1
