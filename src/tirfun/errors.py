"""The error classes of tirfun.

Every mistake a user can make ends in one of these, never in a bare Python
exception from tirfun's internals. They all derive from :class:`TirfunError`,
so ``except tirfun.TirfunError`` catches anything tirfun raises on purpose.
"""

from __future__ import annotations


class TirfunError(Exception):
    """Base class of every error tirfun raises on purpose."""


class NodeError(TirfunError, TypeError, ValueError):
    """A node was constructed with fields that break a rule of that node.

    Examples: adding an ``int32`` to a ``float32`` without a cast, a ``For``
    whose extent is a float, a ``DataType`` string that names no type.
    It is also a ``TypeError`` and a ``ValueError`` so that code written
    against TVM's Python API, which raises either in such cases (a value out
    of range, an expression used as a Python bool), keeps working.
    """


class UnknownNameError(TirfunError, KeyError):
    """A lookup by name (a function of a module, a block, a loop) found nothing."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ParseError(TirfunError):
    """TVMScript that cannot be parsed.

    Carries the file, the line and column (1-based), the source line with a
    caret under the culprit, and a hint on how to fix it.
    """

    def __init__(self, message: str, *, filename: str = "<string>", line: int = 0,
                 column: int = 0, source_line: str = "", hint: str = ""):
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        text = f"{self.filename}:{self.line}:{self.column}: error: {self.message}"
        if self.source_line:
            stripped = self.source_line.rstrip("\n")
            caret_col = max(self.column - 1, 0)
            text += f"\n    {stripped}\n    {' ' * caret_col}^"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text

    def __reduce__(self):
        return (_rebuild_parse_error, (self.message, self.filename, self.line, self.column,
                                       self.source_line, self.hint))


def _rebuild_parse_error(message, filename, line, column, source_line, hint):
    return ParseError(message, filename=filename, line=line, column=column,
                      source_line=source_line, hint=hint)


class VerifyError(TirfunError):
    """A tree breaks a well-formedness rule that spans several nodes.

    Raised by :func:`tirfun.analysis.verify`; the message names the rule, the
    function and the offending name. The fields say the same for programs:
    ``rule``, ``function``, ``block`` (or None) and ``names`` (the offending
    variables or buffers). When the tree came from TVMScript, the parser
    adds where the culprit is written, as a ParseError does: ``filename``,
    ``line``, ``column`` (1-based; 0 when unknown) and ``source_line``.
    """

    def __init__(self, message: str, *, rule: str | None = None, function: str | None = None,
                 block: str | None = None, names: tuple = (), filename: str | None = None,
                 line: int = 0, column: int = 0, source_line: str = ""):
        self.message = message
        self.rule = rule
        self.function = function
        self.block = block
        self.names = tuple(names)
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        if self.filename is None:
            return self.message
        text = f"{self.filename}:{self.line}:{self.column}: error: {self.message}"
        if self.source_line:
            caret_col = max(self.column - 1, 0)
            text += f"\n    {self.source_line.rstrip()}\n    {' ' * caret_col}^"
        return text

    def located(self, filename: str, line: int, column: int, source_line: str = "") -> "VerifyError":
        """The same error, located at ``filename:line:column``."""
        return VerifyError(self.message, rule=self.rule, function=self.function, block=self.block,
                           names=self.names, filename=filename, line=line, column=column,
                           source_line=source_line)

    def __reduce__(self):
        return (_rebuild_verify_error, (self.message, self.rule, self.function, self.block, self.names,
                                        self.filename, self.line, self.column, self.source_line))


def _rebuild_verify_error(message, rule, function, block, names, filename, line, column, source_line):
    return VerifyError(message, rule=rule, function=function, block=block, names=names,
                       filename=filename, line=line, column=column, source_line=source_line)


class ScheduleError(TirfunError):
    """A schedule primitive cannot be applied.

    Subclasses name the failed precondition; the message names the primitive,
    the loop or block concerned, the reason, and shows the offending TVMScript.
    """


class InterpError(TirfunError):
    """The reference interpreter met a program that has no meaning on the
    given inputs, such as an out-of-bounds access."""


class BuildError(TirfunError):
    """A module could not be lowered or compiled for the requested target."""


class ArgumentError(TirfunError, TypeError):
    """Arguments passed to a built function do not match its parameters."""


__all__ = [
    "TirfunError",
    "NodeError",
    "UnknownNameError",
    "ParseError",
    "VerifyError",
    "ScheduleError",
    "InterpError",
    "BuildError",
    "ArgumentError",
]
