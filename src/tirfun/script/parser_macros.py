"""``@T.macro`` written in script text (``from_source``).

Text runs no Python, so a macro defined in it is a template: its ``def`` is
kept as a syntax tree and the parser expands the body at each call site,
with the call's arguments bound to the parameters, as TVM expands a
macro. Hygiene follows TVM: a hygienic macro (the default) reads the names
of its body where it is defined, that is the source's module-level names
(imports, assignments, macros, the ``@I.ir_module`` class), read when it
is called, as a Python function reads its module's globals;
``hygienic=False`` reads them where it is called, among the caller's
variables and buffers. Either way the parameters and the names the body
binds are its own.

A macro of a decorated Python function is
:class:`~tirfun.script.parser_python.Macro`, which reads its Python source.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import attrs

#: most nested expansions (a macro calling itself ends here); the same
#: limit as for macros of decorated functions
from .parser_python import MAX_MACRO_DEPTH


@attrs.frozen(eq=False)
class TextMacro:
    """A ``@T.macro`` of script text: its ``def``, whether it is hygienic,
    the module-level names of its source (the table itself, so that the
    names defined later are seen too), and its parameters' default values
    (evaluated where it is defined, as Python evaluates them)."""

    fdef: ast.FunctionDef
    hygienic: bool
    names: dict
    defaults: dict

    @property
    def name(self) -> str:
        """The macro's name, for messages."""
        return self.fdef.name


def define(src, evaluator, fdef: ast.FunctionDef, hygienic: bool, names: dict) -> TextMacro:
    """The macro a ``@T.macro`` ``def`` of the source defines. Its
    parameters are plain names, with or without defaults."""
    args = fdef.args
    for extra, what in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
        if extra is not None:
            raise src.error(extra, f"macro {fdef.name}: {what} parameters are not supported in "
                            "TVMScript text")
    if args.posonlyargs or args.kwonlyargs:
        first = (args.posonlyargs or args.kwonlyargs)[0]
        raise src.error(first, f"macro {fdef.name}: positional-only and keyword-only parameters "
                        "are not supported in TVMScript text")
    if fdef.returns is not None:
        raise src.error(fdef.returns, f"macro {fdef.name}: a macro is expanded as statements "
                        "and has no return annotation")
    params = [a.arg for a in args.args]
    defaults = {}
    for name, node in zip(params[len(params) - len(args.defaults):], args.defaults):
        defaults[name] = evaluator.eval(node)
    return TextMacro(fdef, hygienic, names, defaults)


def _bind(ip, macro: TextMacro, node: ast.Call, positional, keywords) -> dict[str, Any]:
    """The parameters' values, bound as Python binds a call's arguments
    (with Python's messages, as for a macro of a decorated function)."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    empty = inspect.Parameter.empty
    signature = inspect.Signature([
        inspect.Parameter(a.arg, kind, default=macro.defaults.get(a.arg, empty))
        for a in macro.fdef.args.args])
    try:
        bound = signature.bind(*[v for v, _ in positional], **{k: v for k, (v, _) in keywords.items()})
    except TypeError as err:
        raise ip.fail(node, f"macro {macro.name}: {err}") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def expand(ip, macro: TextMacro, node: ast.Call, positional, keywords):
    """The statement a text macro's body makes at a call site."""
    from .parser_scope import OuterEnv, Scopes

    if not hasattr(ip, "visit_body") or not ip.frames:
        raise ip.fail(node, f"the macro {macro.name} can only be called inside a function body")
    depth = getattr(ip, "macro_depth", 0)
    if depth >= MAX_MACRO_DEPTH:
        raise ip.fail(node, f"macro {macro.name} expands more than {MAX_MACRO_DEPTH} levels deep",
                      hint="a macro that calls itself never ends")
    values = _bind(ip, macro, node, positional, keywords)
    saved = ip.scopes
    ip.macro_depth = depth + 1
    if macro.hygienic:
        # untrusted, as every name of text is
        ip.scopes = Scopes(OuterEnv([macro.names], saved.outer.defaults))
    else:
        ip.scopes.push()
    try:
        for key, value in values.items():
            ip.scopes.define(key, value)
        return ip.visit_body(macro.fdef.body, ip.frames[-1])
    finally:
        if not macro.hygienic:
            ip.scopes.pop()
        ip.scopes = saved
        ip.macro_depth = depth


__all__ = ["TextMacro", "define", "expand"]
