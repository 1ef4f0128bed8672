"""Syntax colour for TVMScript: terminals, Jupyter and IPython.

Colour comes from Pygments, an optional extra (``pip install
tirfun[color]``), imported only when something is coloured. Without it,
everything here falls back to plain text, as TVM's ``show()`` does.

Styles are Pygments styles: any style name Pygments knows, a Pygments
``Style`` class, or one of three defined here, ``"light"`` (for a white
notebook), ``"dark"`` (for a dark editor theme) and ``"ansi"`` (the
terminal's own sixteen colours, the default on a terminal). ``"plain"``
(or ``"none"``) turns colour off. When no style is named, the environment
variable ``TIRFUN_PYGMENTIZE_STYLE`` (or TVM's ``TVM_PYGMENTIZE_STYLE``)
chooses, then ``"light"`` in a notebook and ``"ansi"`` on a terminal.

:func:`show` colours only when the output is a terminal and the
``NO_COLOR`` convention (https://no-color.org: set and not empty) does not
ask otherwise, unless a style is named explicitly.
"""

from __future__ import annotations

import html as _html
import os
import sys
import warnings

from ..errors import TirfunError
from ..warning_filters import catch_warnings

_PLAIN_STYLES = ("plain", "none")
#: the styles defined here, besides Pygments' own
STYLES = ("light", "dark", "ansi")
_ENV_STYLES = ("TIRFUN_PYGMENTIZE_STYLE", "TVM_PYGMENTIZE_STYLE")


def _pygments():
    """The Pygments modules needed, or None when Pygments is not installed
    (then a one-time warning says how to install it)."""
    try:
        import pygments
        from pygments import formatters, lexers, style, styles, token, util
    except ImportError:
        with catch_warnings():
            warnings.simplefilter("once", UserWarning)
            warnings.warn("Pygments is not installed, so TVMScript is shown without colour; "
                          "install it with: pip install 'tirfun[color]'", UserWarning, stacklevel=3)
        return None
    return pygments, formatters, lexers, style, styles, token, util


def _own_style(name: str, pyg):
    """The Pygments Style class of one of :data:`STYLES`."""
    _, _, _, style_mod, _, token, _ = pyg
    T = token
    palettes = {
        "light": {
            T.Keyword: "bold #7928a1", T.Keyword.Constant: "#7928a1", T.Name.Decorator: "#a0522d",
            T.Name.Function: "#1f4fb8", T.Name.Class: "bold #1f4fb8", T.String: "#b22222",
            T.Number: "#0b7a45", T.Operator.Word: "bold #7928a1", T.Comment: "italic #6b7280",
        },
        "dark": {
            T.Keyword: "bold #d19ae6", T.Keyword.Constant: "#d19ae6", T.Name.Decorator: "#e8b96a",
            T.Name.Function: "#7cb7ff", T.Name.Class: "bold #7cb7ff", T.String: "#e9967a",
            T.Number: "#9fd8a6", T.Operator.Word: "bold #d19ae6", T.Comment: "italic #8b949e",
        },
        "ansi": {
            T.Keyword: "bold ansimagenta", T.Keyword.Constant: "ansimagenta",
            T.Name.Decorator: "ansicyan", T.Name.Function: "bold ansiblue",
            T.Name.Class: "bold ansiblue", T.String: "ansigreen", T.Number: "ansiyellow",
            T.Operator.Word: "bold ansimagenta", T.Comment: "italic ansibrightblack",
        },
    }
    return type(f"Tirfun{name.capitalize()}", (style_mod.Style,),
                {"background_color": "", "styles": palettes[name]})


def resolve_style(style, *, notebook: bool = False):
    """The Pygments style to use for ``style`` (see the module docstring);
    None for plain text (asked for, or Pygments missing). An unknown style
    name is a TirfunError."""
    if style is None:
        style = next((os.environ[v].strip() for v in _ENV_STYLES if os.environ.get(v, "").strip()),
                     "light" if notebook else "ansi")
    if isinstance(style, str) and style in _PLAIN_STYLES:
        return None
    pyg = _pygments()
    if pyg is None:
        return None
    if isinstance(style, str):
        if style in STYLES:
            return _own_style(style, pyg)
        styles, util = pyg[4], pyg[6]
        try:
            return styles.get_style_by_name(style)
        except util.ClassNotFound:
            known = ", ".join([*STYLES, *_PLAIN_STYLES, "or a Pygments style name"])
            raise TirfunError(f"unknown style {style!r} for syntax colour; expected one of {known}") from None
    return style  # a Pygments Style class


def highlight(text: str, style="ansi") -> str:
    """``text`` with ANSI colour codes for a terminal, in ``style``; plain
    ``text`` for ``"plain"`` or without Pygments."""
    chosen = resolve_style(style)
    if chosen is None:
        return text
    pyg = _pygments()
    pygments, formatters, lexers = pyg[0], pyg[1], pyg[2]
    formatter = formatters.Terminal256Formatter(style=chosen)
    out = pygments.highlight(text, lexers.Python3Lexer(), formatter)
    # the lexer ends the text with a newline it did not have
    return out[:-1] if out.endswith("\n") and not text.endswith("\n") else out


def html(text: str, style="light") -> str:
    """``text`` as an HTML ``<div>`` with inline colours (for Jupyter); an
    escaped ``<pre>`` for ``"plain"`` or without Pygments."""
    chosen = resolve_style(style, notebook=True)
    if chosen is None:
        return f"<pre>{_html.escape(text)}</pre>"
    pyg = _pygments()
    pygments, formatters, lexers = pyg[0], pyg[1], pyg[2]
    formatter = formatters.HtmlFormatter(style=chosen, noclasses=True)
    return pygments.highlight(text, lexers.Python3Lexer(), formatter)


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


def _text_of(printable) -> str:
    if isinstance(printable, str):
        return printable
    script = getattr(printable, "script", None)
    if not callable(script):
        raise TirfunError(f"show prints TVMScript text or a node, not {type(printable).__name__}")
    return script()


def _black(text: str) -> str:
    """``text`` formatted by Black when it is installed (as TVM's
    ``black_format``); otherwise unchanged, with a one-time warning."""
    try:
        import black
    except ImportError:
        with catch_warnings():
            warnings.simplefilter("once", UserWarning)
            warnings.warn("black_format=True needs the black formatter; the text is shown as "
                          "printed", UserWarning, stacklevel=3)
        return text
    return black.format_str(text, mode=black.FileMode())


def show(printable, style=None, file=None, black_format: bool = False) -> None:
    """Print TVMScript ``printable`` (text, or any node, printed first) to
    ``file`` (standard output by default), as TVM's ``show()``.

    ``style=None`` colours only on a terminal without ``NO_COLOR``; a style
    (see the module docstring) forces colour, ``"plain"`` turns it off.
    ``black_format`` reformats the text with Black first, where installed.
    """
    text = _text_of(printable)
    if black_format:
        text = _black(text)
    stream = sys.stdout if file is None else file
    if style is None and not wants_colour(stream):
        style = "plain"
    print(highlight(text, style), file=stream)


def repr_html(obj) -> str:
    """What ``_repr_html_`` returns for a node or schedule: its TVMScript as
    coloured HTML for Jupyter."""
    return html(_text_of(obj))


def repr_pretty(obj, printer) -> None:
    """What ``_repr_pretty_`` does for IPython's terminal shell: its
    TVMScript, coloured unless ``NO_COLOR`` says no."""
    text = _text_of(obj)
    printer.text(text if os.environ.get("NO_COLOR", "") else highlight(text, None))


__all__ = ["show", "highlight", "html", "resolve_style", "wants_colour", "repr_html", "repr_pretty",
           "STYLES"]
