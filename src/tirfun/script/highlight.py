"""Syntax colour for TVMScript in a terminal.

A small hand-written tokenizer splits the text into comments, strings,
numbers, names and the rest; keywords, ``T.*``/``I.*`` names, strings,
numbers and comments get ANSI colours. :func:`show` colours only when the
output is a terminal and the ``NO_COLOR`` convention (https://no-color.org:
set and not empty) does not ask otherwise, unless a style is named
explicitly.
"""

from __future__ import annotations

import os
import sys

from ..errors import TirfunError

_RESET = "\x1b[0m"

#: colour of each token kind, per style
PALETTES: dict[str, dict[str, str]] = {
    "dark": {
        "keyword": "\x1b[1;35m",
        "namespace": "\x1b[36m",
        "string": "\x1b[32m",
        "number": "\x1b[33m",
        "comment": "\x1b[90m",
    },
    "light": {
        "keyword": "\x1b[1;34m",
        "namespace": "\x1b[35m",
        "string": "\x1b[31m",
        "number": "\x1b[36m",
        "comment": "\x1b[90m",
    },
}
PALETTES["ansi"] = PALETTES["dark"]
_PLAIN_STYLES = ("plain", "none")

KEYWORDS = frozenset({
    "and", "as", "assert", "break", "class", "continue", "def", "elif", "else", "for", "from",
    "if", "import", "in", "is", "lambda", "not", "or", "pass", "return", "while", "with",
    "None", "True", "False",
})
NAMESPACES = frozenset({"T", "I"})


def tokens(text: str):
    """Split ``text`` into ``(kind, piece)`` pairs whose pieces, joined,
    give back ``text``. Kinds: comment, string, number, keyword, namespace
    (a ``T.``/``I.`` dotted name or a decorator), name, other."""
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield "comment", text[i:j]
            i = j
        elif ch in "\"'":
            j = _string_end(text, i)
            yield "string", text[i:j]
            i = j
        elif ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isdigit()):
            j = _number_end(text, i)
            yield "number", text[i:j]
            i = j
        elif ch.isalpha() or ch == "_":
            j = _dotted_end(text, i)
            word = text[i:j]
            head = word.split(".", 1)[0]
            if head in NAMESPACES and "." in word:
                yield "namespace", word
            elif word in KEYWORDS:
                yield "keyword", word
            else:
                yield "name", word
            i = j
        elif ch == "@":
            named = i + 1 < n and (text[i + 1].isalpha() or text[i + 1] == "_")
            j = _dotted_end(text, i + 1) if named else i + 1
            yield "namespace", text[i:j]
            i = j
        else:
            j = i + 1
            while j < n and not _starts_token(text[j]):
                j += 1
            yield "other", text[i:j]
            i = j


def _starts_token(ch: str) -> bool:
    return ch.isalnum() or ch in "_#\"'@."


def _string_end(text: str, i: int) -> int:
    quote = text[i]
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == quote:
            return j + 1
        if c == "\n":  # an unterminated string ends with its line
            return j
        j += 1
    return n


def _number_end(text: str, i: int) -> int:
    n = len(text)
    j = i
    while j < n and (text[j].isalnum() or text[j] in "._"):
        if text[j] in "eE" and j + 1 < n and text[j + 1] in "+-":
            j += 2  # the sign of an exponent belongs to the number: 1e-05
            continue
        j += 1
    return j


def _dotted_end(text: str, i: int) -> int:
    n = len(text)
    j = i
    while j < n:
        while j < n and (text[j].isalnum() or text[j] == "_"):
            j += 1
        if j + 1 < n and text[j] == "." and (text[j + 1].isalpha() or text[j + 1] == "_"):
            j += 1
            continue
        return j
    return j


def highlight(text: str, style: str = "dark") -> str:
    """``text`` with ANSI colour codes around keywords, ``T.*`` names,
    strings, numbers and comments."""
    palette = _palette(style)
    if palette is None:
        return text
    out = []
    for kind, piece in tokens(text):
        code = palette.get(kind)
        out.append(piece if code is None else f"{code}{piece}{_RESET}")
    return "".join(out)


def _palette(style):
    if style in _PLAIN_STYLES:
        return None
    palette = PALETTES.get(style) if isinstance(style, str) else None
    if palette is None:
        names = ", ".join(sorted([*PALETTES, *_PLAIN_STYLES]))
        raise TirfunError(f"unknown style {style!r} for syntax colour; expected one of {names}")
    return palette


def wants_colour(file) -> bool:
    """Whether output to ``file`` should be coloured by default: it is a
    terminal and ``NO_COLOR`` is unset or empty."""
    if os.environ.get("NO_COLOR", ""):
        return False
    isatty = getattr(file, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


def show(text, style: str | None = None, file=None) -> None:
    """Print TVMScript ``text`` (or any node, printed first) to ``file``
    (standard output by default).

    ``style=None`` colours only on a terminal without ``NO_COLOR``; a style
    name (``"dark"``, ``"light"``, ``"ansi"``) forces colour, ``"plain"``
    turns it off.
    """
    if not isinstance(text, str):
        from .printer import to_script

        text = to_script(text)
    stream = sys.stdout if file is None else file
    if style is None:
        style = "dark" if wants_colour(stream) else "plain"
    print(highlight(text, style), file=stream)


__all__ = ["show", "highlight", "tokens", "wants_colour", "PALETTES", "KEYWORDS"]
