"""Coloured TVMScript: show() on a terminal, Jupyter and IPython displays,
and the plain-text path when Pygments is missing."""

from __future__ import annotations

import builtins
import io
import re

import pytest

import tirfun
from tirfun.errors import TirfunError
from tirfun.script import highlight as hl
from tirfun.script import tir as T

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@T.prim_func
def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)


class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


class _Printer:
    """IPython's pretty printer, as far as _repr_pretty_ uses it."""

    def __init__(self):
        self.out = []

    def text(self, s):
        self.out.append(s)


@pytest.fixture
def no_pygments(monkeypatch):
    real_import = builtins.__import__

    def failing(name, *args, **kwargs):
        if name == "pygments" or name.startswith("pygments."):
            raise ImportError(f"No module named {name!r}", name="pygments")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing)


@pytest.mark.parametrize("style", ["ansi", "light", "dark", "monokai"])
def test_highlight_colours_keywords_and_keeps_the_text(style):
    text = add_one.script()
    out = hl.highlight(text, style)
    assert out != text and "\x1b[" in out
    assert _ANSI.sub("", out) == text
    # the keyword 'for' is wrapped in a colour
    assert re.search(r"\x1b\[[0-9;]*m(for)\x1b\[", out)


def test_plain_style_and_unknown_style():
    assert hl.highlight("x = 1", "plain") == "x = 1"
    with pytest.raises(TirfunError, match="unknown style 'neon'"):
        hl.highlight("x = 1", "neon")


def test_show_colours_only_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TIRFUN_PYGMENTIZE_STYLE", raising=False)
    monkeypatch.delenv("TVM_PYGMENTIZE_STYLE", raising=False)
    text = add_one.script()
    plain = _Stream(tty=False)
    add_one.show(file=plain)
    assert plain.getvalue() == text + "\n"
    tty = _Stream(tty=True)
    add_one.show(file=tty)
    assert tty.getvalue() == hl.highlight(text, "ansi") + "\n" != text + "\n"
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Stream(tty=True)
    hl.show(add_one, file=tty)
    assert tty.getvalue() == text + "\n"
    forced = _Stream(tty=False)
    hl.show(add_one, style="dark", file=forced)
    assert forced.getvalue() == hl.highlight(text, "dark") + "\n"


def test_environment_chooses_the_default_style(monkeypatch):
    monkeypatch.setenv("TVM_PYGMENTIZE_STYLE", "dark")
    assert hl.highlight("for i in x: pass", None) == hl.highlight("for i in x: pass", "dark")
    monkeypatch.setenv("TIRFUN_PYGMENTIZE_STYLE", "light")
    assert hl.highlight("for i in x: pass", None) == hl.highlight("for i in x: pass", "light")


def test_module_function_and_schedule_display_in_jupyter_and_ipython(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    mod = tirfun.IRModule({"main": add_one})
    sch = tirfun.Schedule(mod)
    for obj in (mod, add_one, sch):
        page = obj._repr_html_()
        assert page.startswith("<div") and "<span" in page
        text = re.sub(r"<[^>]+>", "", page)
        import html
        assert html.unescape(text).strip() == (obj.mod if obj is sch else obj).script().strip()
        printer = _Printer()
        obj._repr_pretty_(printer, False)
        assert _ANSI.sub("", "".join(printer.out)) == (obj.mod if obj is sch else obj).script()
        assert "\x1b[" in "".join(printer.out)


def test_without_pygments_everything_is_plain_text(no_pygments, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = add_one.script()
    with pytest.warns(UserWarning, match="Pygments is not installed"):
        assert hl.highlight(text, "ansi") == text
    tty = _Stream(tty=True)
    with pytest.warns(UserWarning):
        add_one.show(file=tty)
    assert tty.getvalue() == text + "\n"
    with pytest.warns(UserWarning):
        page = add_one._repr_html_()
    assert page.startswith("<pre>") and "&quot;float32&quot;" in page
    printer = _Printer()
    with pytest.warns(UserWarning):
        add_one._repr_pretty_(printer, False)
    assert printer.out == [text]


def test_show_rejects_what_cannot_be_printed():
    with pytest.raises(TirfunError, match="show prints TVMScript text or a node, not int"):
        hl.show(3, file=io.StringIO())


def test_black_format_without_black_shows_the_text_as_printed(monkeypatch):
    real_import = builtins.__import__

    def failing(name, *args, **kwargs):
        if name == "black":
            raise ImportError("No module named 'black'", name="black")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing)
    out = _Stream(tty=False)
    with pytest.warns(UserWarning, match="black_format=True needs the black formatter"):
        add_one.show(black_format=True, file=out)
    assert out.getvalue() == add_one.script() + "\n"
