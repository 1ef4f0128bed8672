"""Python values around a decorated function: the one place where the
parser lets Python run.

A function decorated with ``@T.prim_func`` (or a class with
``@I.ir_module``) is the user's own Python, already trusted by the act of
running it. As TVM does, its body may use values and functions of the
enclosing Python scope at parse time:

* a name of the closure, defining scope or module whose value is not a plain
  script value (a Python function, a dict, any object) is wrapped in
  :class:`PyValue`; it can be called (``shape_of(n)``), indexed
  (``config["n"]``) and have its attributes read (``cfg.tile``), and the
  results are ordinary script values again;
* a :class:`Macro` (``@T.macro``) expands its body where it is called;
* ``T.meta_var(v)`` binds a name to a value without a let (in both paths).

The only source of :class:`PyValue` and :class:`Macro` values is
:class:`~tirfun.script.parser_scope.OuterEnv` with ``trusted=True``, which
only :func:`~tirfun.script.parser_core.parse_python_function` builds.
``from_source`` reads text in an untrusted environment: its names are script
values only, so no Python function can be reached from it, and
:func:`call` refuses again if a value ever came from elsewhere.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import attrs

from ..errors import ParseError, TirfunError
from .parser_values import ScriptCall

#: most nested macro expansions (a macro calling itself ends here)
MAX_MACRO_DEPTH = 32


@attrs.frozen(eq=False)
class PyValue:
    """A Python object of a decorated function's enclosing scope."""

    value: Any


@attrs.frozen(eq=False)
class Macro:
    """``@T.macro``: a function whose TVMScript body is expanded where it is
    called. A ``hygienic`` macro resolves the names of its body where it is
    defined; otherwise where it is used."""

    func: Any
    hygienic: bool = True
    #: the arguments bound before the call's: a macro defined in a class
    #: and read from an instance (``obj.load(A)``) has the instance first
    bound: tuple = ()

    def __get__(self, instance, owner=None):
        """A macro read from an instance is bound to it, as a method is."""
        if instance is None:
            return self
        return attrs.evolve(self, bound=(*self.bound, instance))

    def __call__(self, *args, **kwargs):
        raise ParseError(f"the macro {self.func.__name__} can only be called inside a "
                         "@T.prim_func function")


def _require_trusted(ip, node, what: str) -> None:
    if not getattr(ip.scopes.outer, "trusted", False):
        raise ip.fail(node, f"{what} cannot be used in TVMScript read from text",
                      hint="from_source runs no Python code")


def from_python(value: Any) -> Any:
    """A Python result as a script value: plain values are admitted, anything
    else stays wrapped."""
    from .parser_scope import Refused, admit

    try:
        return admit(value)
    except Refused:
        return PyValue(value)


def to_python(value: Any) -> Any:
    """A script value as an argument of a Python call."""
    if isinstance(value, PyValue):
        return value.value
    if isinstance(value, tuple):
        return tuple(to_python(v) for v in value)
    if isinstance(value, list):
        return [to_python(v) for v in value]
    return value


def _name(value: PyValue) -> str:
    return getattr(value.value, "__name__", type(value.value).__name__)


def call(ip, func: PyValue, node: ast.Call, positional, keywords) -> Any:
    """Call a Python function of the enclosing scope with script values."""
    _require_trusted(ip, node, "calling a Python function")
    if not callable(func.value):
        raise ip.fail(node, f"{_name(func)} is not callable")
    args = [to_python(v) for v, _ in positional]
    kwargs = {k: to_python(v) for k, (v, _) in keywords.items()}
    try:
        result = func.value(*args, **kwargs)
    except TirfunError as err:
        raise ip.fail(node, f"{_name(func)}(...) failed: {err}") from None
    except Exception as err:  # the user's function: its failure is reported where it is called
        raise ip.fail(node, f"{_name(func)}(...) raised {type(err).__name__}: {err}") from None
    if isinstance(result, ScriptCall):
        # a helper returning T.decl_buffer(...) and the like: the call is
        # made here, where the helper is called, as TVM's builder makes it
        positional = [(from_python(v), node) for v in result.args]
        keywords = {k: (from_python(v), node) for k, v in result.kwargs.items()}
        return ip.call_builtin(result.name, node, positional, keywords)
    return from_python(result)


def attribute(ip, base: PyValue, attr: str, node) -> Any:
    """``obj.attr`` of a Python object (no dunder attributes)."""
    _require_trusted(ip, node, "a Python object")
    if attr.startswith("__"):
        raise ip.fail(node, f"the attribute {attr} cannot be used in TVMScript")
    try:
        return from_python(getattr(base.value, attr))
    except AttributeError:
        raise ip.fail(node, f"{_name(base)} has no attribute '{attr}'") from None


def subscript(ip, base: PyValue, key: Any, node) -> Any:
    """``obj[key]`` of a Python object."""
    _require_trusted(ip, node, "a Python object")
    try:
        return from_python(base.value[to_python(key)])
    except Exception as err:
        raise ip.fail(node, f"cannot index {_name(base)} with {key!r}: "
                      f"{type(err).__name__}: {err}") from None


def iterate(ip, value: PyValue, node, limit: int) -> list:
    """The items of an iterable Python object (at most ``limit``)."""
    import itertools

    _require_trusted(ip, node, "a Python object")
    try:
        items = list(itertools.islice(iter(value.value), limit))
    except Exception as err:
        raise ip.fail(node, f"cannot iterate over {_name(value)}: {type(err).__name__}: {err}") from None
    return [from_python(v) for v in items]


def expand_macro(ip, macro: Macro, node: ast.Call, positional, keywords):
    """The statement a macro's body makes with the call's arguments."""
    from .parser_scope import OuterEnv, Scopes
    from .parser_source import function_source

    _require_trusted(ip, node, "a macro")
    name = macro.func.__name__
    if not hasattr(ip, "visit_body") or not ip.frames:
        raise ip.fail(node, f"the macro {name} can only be called inside a function body")
    depth = getattr(ip, "macro_depth", 0)
    if depth >= MAX_MACRO_DEPTH:
        raise ip.fail(node, f"macro {name} expands more than {MAX_MACRO_DEPTH} levels deep",
                      hint="a macro that calls itself never ends")
    try:
        bound = inspect.signature(macro.func).bind(*macro.bound, *[v for v, _ in positional],
                                                    **{k: v for k, (v, _) in keywords.items()})
    except TypeError as err:
        raise ip.fail(node, f"macro {name}: {err}") from None
    bound.apply_defaults()
    fdef, src = function_source(macro.func, "@T.macro")
    saved_src, saved_scopes = ip.src, ip.scopes
    ip.src = src
    ip.macro_depth = depth + 1
    if macro.hygienic:
        ip.scopes = Scopes(OuterEnv(_layers(macro.func), {"range": saved_scopes.outer.get("range")},
                                    trusted=True))
    else:
        ip.scopes.push()
    try:
        for key, value in bound.arguments.items():
            ip.scopes.define(key, from_python(value) if not _is_script(value) else value)
        return ip.visit_body(fdef.body, ip.frames[-1])
    finally:
        if not macro.hygienic:
            ip.scopes.pop()
        ip.src, ip.scopes = saved_src, saved_scopes
        ip.macro_depth = depth


def _is_script(value: Any) -> bool:
    """Values the parser made (nodes, records) pass into a macro unchanged."""
    module = type(value).__module__ or ""
    return module.startswith("tirfun.")


def _layers(func) -> list[dict]:
    """The closure, then the globals, of a Python function."""
    closure = {}
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    return [closure, func.__globals__]
