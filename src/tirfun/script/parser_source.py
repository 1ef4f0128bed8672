"""Source text, positions and limits for the TVMScript parser.

A :class:`SourceMap` turns the position of a Python ``ast`` node into the
file, line and column of the user's text (functions taken from a file are
dedented before parsing; positions are mapped back), and builds
:class:`~tirfun.errors.ParseError` values with the source line and a caret.

:func:`parse_python` wraps ``ast.parse`` with the limits that keep untrusted
input from exhausting the interpreter: a maximum size, a maximum number of
syntax nodes and a maximum nesting depth, all checked without recursion.
``ast.parse`` only builds a syntax tree; nothing in the text is executed.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import warnings

import attrs

from ..analysis.nesting import MAX_DEPTH as _MAX_DEPTH
from ..errors import ParseError
from ..warning_filters import catch_warnings

#: longest source text accepted, in characters
MAX_SOURCE_CHARS = 4_000_000
#: most syntax nodes accepted in one source
MAX_NODES = 1_000_000
#: deepest nesting of syntax nodes accepted (statements and expressions):
#: see :mod:`tirfun.analysis.nesting`
MAX_DEPTH = _MAX_DEPTH


@attrs.frozen
class SourceMap:
    """Where the parsed text came from.

    ``lines`` are the lines of the original text (the whole file for a
    decorated function); the parsed text starts at ``line_offset + 1`` and
    had ``indent`` leading characters removed from every line.
    """

    filename: str
    lines: tuple[str, ...]
    line_offset: int = 0
    indent: int = 0

    def position(self, node: ast.AST | None) -> tuple[int, int]:
        """1-based (line, column) of ``node`` in the original text."""
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return 0, 0
        line = lineno + self.line_offset
        col_bytes = getattr(node, "col_offset", 0) or 0
        text = self.line(line)
        body = text[self.indent:] if len(text) >= self.indent else ""
        # ast columns count UTF-8 bytes; the caret needs characters
        chars = len(body.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return line, chars + self.indent + 1

    def line(self, line: int) -> str:
        """The text of a 1-based line, or '' when out of range."""
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1].rstrip("\r\n")
        return ""

    def error(self, node: ast.AST | None, message: str, hint: str = "") -> ParseError:
        """A ParseError located at ``node``."""
        line, column = self.position(node)
        return ParseError(message, filename=self.filename, line=line, column=column,
                          source_line=self.line(line), hint=hint)

    def error_at(self, line: int, column: int, message: str, hint: str = "") -> ParseError:
        """A ParseError at an explicit position of the parsed text."""
        return ParseError(message, filename=self.filename, line=line + self.line_offset,
                          column=column + self.indent if column else column,
                          source_line=self.line(line + self.line_offset), hint=hint)


def dedent_lines(lines: list[str]) -> tuple[str, int]:
    """Remove the common indentation of ``lines``; returns (text, removed)."""
    widths = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
    indent = min(widths) if widths else 0
    return "".join(line[indent:] if line.strip() else line.lstrip(" \t") for line in lines), indent


def parse_python(text: str, source: SourceMap) -> tuple[ast.Module, frozenset[str]]:
    """Parse ``text`` into a syntax tree within the limits of this module;
    returns the tree and the identifiers it uses. Every failure is a
    ParseError."""
    if not isinstance(text, str):
        raise ParseError(f"TVMScript source must be a str, got {type(text).__name__}",
                         filename=source.filename)
    if len(text) > MAX_SOURCE_CHARS:
        raise ParseError(f"the source is too large ({len(text)} characters; at most "
                         f"{MAX_SOURCE_CHARS} are accepted)", filename=source.filename, line=1,
                         column=1, source_line=source.line(1 + source.line_offset))
    try:
        with catch_warnings():
            # Python warns about odd literals while parsing; the parser reports
            # its own errors and must not print on the user's console
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=source.filename, mode="exec")
    except SyntaxError as err:
        line = err.lineno or 0
        column = err.offset or 0
        raise source.error_at(line, column, f"invalid Python syntax: {err.msg}") from None
    except (RecursionError, MemoryError):
        raise ParseError("the source is nested too deeply to be parsed",
                         filename=source.filename, line=1, column=1,
                         source_line=source.line(1 + source.line_offset),
                         hint=f"TVMScript accepts at most {MAX_DEPTH} levels of nesting") from None
    except ValueError as err:  # e.g. null bytes, over-long integer literals
        raise ParseError(f"the source cannot be parsed: {err}", filename=source.filename) from None
    return tree, check_limits(tree, source)


_SKIPPED = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def check_limits(tree: ast.AST, source: SourceMap) -> frozenset[str]:
    """Reject trees with too many nodes or too deep nesting (iteratively);
    returns every identifier written in the tree, the names a fresh name
    must avoid."""
    names: set[str] = set()
    count = 0
    stack: list[tuple[ast.AST, int, ast.AST]] = [(tree, 1, tree)]
    while stack:
        node, depth, anchor = stack.pop()
        count += 1
        if isinstance(node, ast.stmt):
            anchor = node  # errors point at the statement holding the culprit
        if count > MAX_NODES:
            raise source.error(anchor, f"the source is too large (more than {MAX_NODES} syntax nodes)")
        if depth > MAX_DEPTH:
            raise source.error(anchor, f"the source is nested too deeply (more than {MAX_DEPTH} levels)",
                               hint="split long expressions with intermediate variables")
        kind = type(node)
        if kind is ast.Name:
            names.add(node.id)
        elif kind is ast.arg:
            names.add(node.arg)
        elif kind is ast.Attribute:
            names.add(node.attr)
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST) and not isinstance(item, _SKIPPED):
                        stack.append((item, depth + 1, anchor))
            elif isinstance(value, ast.AST) and not isinstance(value, _SKIPPED):
                stack.append((value, depth + 1, anchor))
    return frozenset(names)


def function_text(func, what: str) -> tuple[str, SourceMap]:
    """The dedented source text of a Python function and where it lies:
    its file, a notebook cell, or text registered with ``linecache``."""
    filename = func.__code__.co_filename
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as err:
        raise ParseError(f"cannot read the source of function {func.__name__}: {err}",
                         filename=filename,
                         hint="define the function in a file, a notebook, or register "
                         "exec'd source with linecache") from None
    text, indent = dedent_lines(lines)
    all_lines = linecache.getlines(filename) or lines
    offset = first - 1 if linecache.getlines(filename) else 0
    if first == 0:  # a module-level source: inspect reports line 0
        offset = 0
    return text, SourceMap(filename, tuple(all_lines), offset, indent)


def function_source(func, what: str) -> tuple[ast.FunctionDef, SourceMap]:
    """The syntax tree of a Python function's definition (``what`` names its
    decorator in messages) and its source map."""
    text, src = function_text(func, what)
    tree, _ = parse_python(text, src)
    fdef = next((s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if not isinstance(fdef, ast.FunctionDef):
        raise src.error(tree.body[0] if tree.body else None,
                        f"{what} needs a def statement; {func.__name__} has none")
    return fdef, src
