"""Entry points of the TVMScript parser.

* :func:`parse_source` reads TVMScript text: imports of the script
  namespaces, module-level constants, ``@T.prim_func`` functions and
  ``@I.ir_module`` classes. It evaluates nothing with Python.
* :func:`parse_python_function` is what ``@T.prim_func`` does to a Python
  function: it fetches the function's source (file, notebook cell, or text
  registered with ``linecache``), and interprets it with the names of the
  function's closure, defining scope and module as values.

Every failure is a :class:`~tirfun.errors.ParseError` located in the user's
text; errors raised by node constructors are reported where the culprit is
written.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from ..errors import ParseError, TirfunError
from ..nodes import IRModule, PrimFunc
from ..nodes.dtype import DataType
from . import parser_macros
from .parser_exprs import ExprEvaluator
from .parser_scope import IMPORTABLE, OuterEnv, Scopes
from .parser_source import MAX_DEPTH, SourceMap, function_source, function_text, parse_python
from .parser_stmts import FunctionInterpreter, return_dtype
from .parser_values import Builtin, ModuleFunctions, Namespace, describe

__all__ = ["parse_source", "parse_python_function", "calls_its_module", "module_functions"]

_DEFAULTS_SCRIPT = {"T": Namespace("T"), "I": Namespace("I"), "range": Builtin("range")}
_DEFAULTS_PYTHON = {"range": Builtin("range")}
_UNBOUND = object()


def parse_source(text: str, *, filename: str = "<string>", check_well_formed: bool | str = True):
    """The PrimFunc or IRModule that TVMScript ``text`` defines."""
    src = SourceMap(filename, tuple(text.splitlines()) if isinstance(text, str) else ())
    try:
        with _guard(src):
            tree, names = parse_python(text, src)
            module = _Module(src, names)
            result = module.run(tree)
    except ParseError as err:
        raise err.with_traceback(None) from None  # the user's text is the location
    # a decorator's check_well_formed=False (a function's or the module's) turns the check off
    _check(result, False if module.unchecked else check_well_formed, src, module.sites)
    return result


def _layers(func, caller_locals, module: ModuleFunctions | None) -> list:
    closure = {}
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                pass
    first = {module.name: module} if module is not None else {}
    return [first, closure, caller_locals or {}, func.__globals__]


def in_class_body(caller_locals: dict[str, Any] | None) -> bool:
    """Whether ``caller_locals`` is the namespace of a class body."""
    return bool(caller_locals) and "__qualname__" in caller_locals and "__module__" in caller_locals


def calls_its_module(func, caller_locals: dict[str, Any] | None) -> bool:
    """Whether ``func`` is defined in a class body and names that class
    (``Module.sub(...)``): a call of a function of its module."""
    if not in_class_body(caller_locals):
        return False
    if not inspect.isfunction(func):
        return False
    class_name = str(caller_locals["__qualname__"]).rsplit(".", 1)[-1]
    try:
        fdef, _ = function_source(func, "@T.prim_func")
    except ParseError:
        return False  # parsing it now reports the problem
    return any(isinstance(n, ast.Name) and n.id == class_name for n in ast.walk(fdef))


def module_functions(class_name: str, functions: dict) -> ModuleFunctions:
    """The class name's value inside the functions of a decorated
    ``@I.ir_module`` class (``functions``: name -> PrimFunc or
    DeferredPrimFunc): each function's return dtype."""
    returns = {}
    for name, f in functions.items():
        if isinstance(f, PrimFunc):
            returns[name] = DataType("void") if f.ret_type is None else DataType(f.ret_type)
            continue
        fdef, src = function_source(f.func, "@T.prim_func")
        env = OuterEnv(_layers(f.func, f.caller_locals, None), _DEFAULTS_PYTHON, trusted=True)
        try:
            with _guard(src):
                returns[name] = return_dtype(_ModuleEvaluator(src, env), fdef)
        except ParseError as err:
            raise err.with_traceback(None) from None
    return ModuleFunctions(class_name, returns)


def parse_python_function(func, *, private: bool, check_well_formed: bool,
                          caller_locals: dict[str, Any] | None = None,
                          module: ModuleFunctions | None = None) -> PrimFunc:
    """The PrimFunc of a Python function written in TVMScript (``module``:
    the functions of its @I.ir_module class, which it may call)."""
    if inspect.ismethod(func):
        func = func.__func__
    if not inspect.isfunction(func):
        raise ParseError(f"@T.prim_func decorates a function, got {type(func).__name__}")
    text, src = function_text(func, "@T.prim_func")
    layers = _layers(func, caller_locals, module)
    try:
        with _guard(src):
            tree, names = parse_python(text, src)
            fdef = next((s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
            if not isinstance(fdef, ast.FunctionDef):
                raise src.error(tree.body[0] if tree.body else None,
                                f"@T.prim_func needs a def statement; {func.__name__} has none")
            # the user's own Python: values of its scope may be Python objects
            # and functions (see parser_python); from_source never sets trusted
            interp = FunctionInterpreter(src, OuterEnv(layers, _DEFAULTS_PYTHON, trusted=True), names)
            result = interp.run(fdef, private)
    except ParseError as err:
        raise err.with_traceback(None) from None  # the user's text is the location
    _check(result, check_well_formed, src, {fdef.name: (fdef, interp.func.block_nodes)})
    return result


class _guard:
    """Turn anything escaping the interpreter into a ParseError."""

    def __init__(self, src: SourceMap):
        self.src = src

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if err is None or isinstance(err, ParseError):
            return False
        if isinstance(err, RecursionError):
            raise ParseError("the source is nested too deeply to be parsed",
                             filename=self.src.filename,
                             hint=f"TVMScript accepts at most {MAX_DEPTH} levels of nesting") from None
        if isinstance(err, TirfunError):
            raise ParseError(str(err), filename=self.src.filename) from err
        if isinstance(err, Exception):
            raise ParseError(f"internal error while parsing: {type(err).__name__}: {err}",
                             filename=self.src.filename) from err
        return False


def _check(result, check_well_formed, src: SourceMap, sites: dict) -> None:
    """TVM checks parsed functions for well-formedness by default
    (``check_well_formed="strict"`` adds the lint rules of
    :func:`~tirfun.analysis.verify.verify`). A VerifyError is located in the
    user's text (``sites``: function name -> its def and its blocks' nodes)."""
    if not check_well_formed:
        return
    from ..analysis.verify import verify
    from ..errors import VerifyError

    try:
        verify(result, strict=check_well_formed == "strict")
    except VerifyError as err:
        raise _locate(err, src, sites).with_traceback(None) from None


def _locate(err, src: SourceMap, sites: dict):
    """``err`` located at its culprit: a mention of an offending name in its
    block (or function), else the block, else the function."""
    site = sites.get(err.function)
    if site is None and len(sites) == 1:
        site = next(iter(sites.values()))
    if site is None:
        return err
    fdef, block_nodes = site
    scope: ast.AST = fdef
    anchor: ast.AST = fdef
    block_call = block_nodes.get(err.block) if err.block is not None else None
    if block_call is not None:
        anchor = block_call
        scope = next((w for w in ast.walk(fdef) if isinstance(w, ast.With)
                      and any(item.context_expr is block_call for item in w.items)), fdef)
    spellings = set(err.names)
    # the parser gives a repeated name a suffix (i_1); the text has the base
    spellings |= {name.rsplit("_", 1)[0] for name in err.names
                  if "_" in name and name.rsplit("_", 1)[1].isdigit()}
    mentions = [n for n in ast.walk(scope) if (isinstance(n, ast.Name) and n.id in spellings)
                or (isinstance(n, ast.arg) and n.arg in spellings)]
    if mentions:
        # a binding's own errors are at the binding, the first mention; a
        # misuse is usually the last
        pick = min if err.rule in ("binding outside domain", "binding dtype", "match_buffer shape") \
            else max
        anchor = pick(mentions, key=lambda n: (n.lineno, n.col_offset))
    line, column = src.position(anchor)
    if line == 0:
        return err
    return err.located(src.filename, line, column, src.line(line))


# --------------------------------------------------------------------------
# module level


class _ModuleEvaluator(ExprEvaluator):
    """Evaluates module-level expressions (constants, decorators)."""

    def __init__(self, src: SourceMap, env: OuterEnv):
        self.src = src
        self.scopes = Scopes(env)

    def require_block_frame(self, node, what, allow_function=False):
        """Block declarations are refused at module level."""
        raise self.fail(node, f"{what} can only be used inside a @T.prim_func function")

    require_function_frame = require_block_frame


class _Module:
    """Interprets the statements of a TVMScript source."""

    def __init__(self, src: SourceMap, identifiers: frozenset[str]):
        self.src = src
        self.identifiers = identifiers
        self.names: dict[str, Any] = {}
        self.env = OuterEnv([self.names], _DEFAULTS_SCRIPT)
        self.evaluator = _ModuleEvaluator(src, self.env)
        self.sites: dict[str, tuple] = {}  # function name -> (def, block nodes), to locate errors
        self.unchecked = False  # a decorator said check_well_formed=False

    def run(self, tree: ast.Module):
        functions: list[tuple[str, PrimFunc, ast.AST]] = []
        modules: list[tuple[IRModule, ast.AST]] = []
        for stmt in tree.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self._import(stmt)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
                continue  # a docstring
            elif isinstance(stmt, ast.Assign):
                self._assign(stmt)
            elif isinstance(stmt, ast.FunctionDef):
                if self._macro(stmt):
                    continue
                name, func = self._function(stmt)
                functions.append((name, func, stmt))
            elif isinstance(stmt, ast.ClassDef):
                modules.append((self._class(stmt), stmt))
            elif isinstance(stmt, ast.Pass):
                continue
            else:
                raise self.src.error(stmt, f"{type(stmt).__name__} statements are not supported "
                                     "at the top level of TVMScript",
                                     hint="a TVMScript source holds imports, @T.prim_func "
                                     "functions and @I.ir_module classes")
        if modules:
            if len(modules) > 1:
                raise self.src.error(modules[1][1], "the source defines more than one @I.ir_module class")
            if functions:
                raise self.src.error(functions[0][2], "a source with an @I.ir_module class cannot "
                                     "also define functions outside it")
            return modules[0][0]
        if not functions:
            raise ParseError("the source defines no @T.prim_func function and no @I.ir_module class",
                             filename=self.src.filename)
        if len(functions) > 1:
            raise self.src.error(functions[1][2], "the source defines more than one @T.prim_func "
                                 "function", hint="put them in an @I.ir_module class")
        return functions[0][1]

    def _import(self, stmt) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                path = alias.name
                if alias.asname is None:
                    top = path.split(".")[0]
                    ns = IMPORTABLE.get(top)
                    self._bind_import(stmt, top, ns, path)
                else:
                    self._bind_import(stmt, alias.asname, IMPORTABLE.get(path), path)
            return
        if stmt.level:
            raise self.src.error(stmt, "relative imports are not supported in TVMScript")
        for alias in stmt.names:
            path = f"{stmt.module}.{alias.name}"
            ns = IMPORTABLE.get(path)
            value = None
            if ns is not None:
                value = Namespace(ns)
            elif IMPORTABLE.get(stmt.module) is not None:
                from .parser_builtins import resolve

                value = resolve(IMPORTABLE[stmt.module], alias.name)
            if value is None:
                raise self.src.error(stmt, f"cannot import {path} in TVMScript",
                                     hint="TVMScript sources import the script namespaces only, "
                                     "e.g. from tirfun.script import tir as T")
            self.names[alias.asname or alias.name] = value

    def _bind_import(self, stmt, name: str, ns: str | None, path: str) -> None:
        if ns is None:
            raise self.src.error(stmt, f"cannot import {path} in TVMScript",
                                 hint="TVMScript sources import the script namespaces only, "
                                 "e.g. from tirfun.script import tir as T")
        self.names[name] = Namespace(ns)

    def _assign(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            raise self.src.error(stmt, "only NAME = value assignments are supported at the top "
                                 "level of TVMScript")
        value = self.evaluator.eval(stmt.value)
        if not isinstance(value, (bool, int, float, str, tuple, list)) and value is not None:
            from ..nodes import PrimExpr
            from ..nodes.dtype import DataType

            if not isinstance(value, (PrimExpr, DataType)):
                raise self.src.error(stmt.value, f"a top-level name cannot hold {describe(value)}")
        self.names[stmt.targets[0].id] = value

    def _decorator_kind(self, dec: ast.expr) -> tuple[str, dict[str, Any]]:
        call_kwargs: dict[str, Any] = {}
        target = dec
        if isinstance(dec, ast.Call):
            target = dec.func
            if dec.args:
                raise self.src.error(dec.args[0], "decorator arguments must be given by keyword")
            for kw in dec.keywords:
                if kw.arg is None:
                    raise self.src.error(kw.value, "** is not supported in decorators")
                call_kwargs[kw.arg] = (self.evaluator.eval(kw.value), kw.value)
        value = self.evaluator.eval(target)
        if isinstance(value, Builtin) and value.name in ("T.prim_func", "I.ir_module", "T.macro"):
            return value.name, call_kwargs
        raise self.src.error(dec, f"unsupported decorator: {describe(value)}",
                             hint="functions are decorated with @T.prim_func (or @T.macro), classes "
                             "with @I.ir_module")

    def _macro(self, fdef: ast.FunctionDef) -> bool:
        """Define the macro of a ``@T.macro`` def (True), or leave any
        other def alone (False)."""
        kinds = [self._decorator_kind(d) for d in fdef.decorator_list]
        if [k for k, _ in kinds] != ["T.macro"]:
            return False
        hygienic = True
        for key, (value, node) in kinds[0][1].items():
            if key != "hygienic":
                raise self.src.error(node, f"T.macro() got an unexpected keyword argument '{key}'")
            if not isinstance(value, bool):
                raise self.src.error(node, "T.macro(hygienic=...) takes True or False")
            hygienic = value
        self.names[fdef.name] = parser_macros.define(self.src, self.evaluator, fdef, hygienic,
                                                     self.names)
        return True

    def _function(self, fdef: ast.FunctionDef) -> tuple[str, PrimFunc]:
        private = False
        kinds = [self._decorator_kind(d) for d in fdef.decorator_list]
        if not kinds or [k for k, _ in kinds] != ["T.prim_func"]:
            raise self.src.error(fdef, f"function {fdef.name} must be decorated with @T.prim_func")
        for key, (value, node) in kinds[0][1].items():
            if key == "private":
                if not isinstance(value, bool):
                    raise self.src.error(node, "private= must be True or False")
                private = value
            elif key == "check_well_formed":
                if not isinstance(value, bool):
                    raise self.src.error(node, "check_well_formed= must be True or False")
                self.unchecked |= not value
            else:
                raise self.src.error(node, f"T.prim_func() got an unexpected keyword argument '{key}'")
        interp = FunctionInterpreter(self.src, self.env, self.identifiers)
        func = interp.run(fdef, private)
        self.sites[fdef.name] = (fdef, interp.func.block_nodes)
        return fdef.name, func

    def _class(self, cdef: ast.ClassDef) -> IRModule:
        kinds = [self._decorator_kind(d) for d in cdef.decorator_list]
        if [k for k, _ in kinds] != ["I.ir_module"]:
            raise self.src.error(cdef, f"class {cdef.name} must be decorated with @I.ir_module")
        for key, (value, node) in kinds[0][1].items():
            if key != "check_well_formed":
                raise self.src.error(node, f"I.ir_module() got an unexpected keyword argument '{key}'")
            if not isinstance(value, bool):
                raise self.src.error(node, "check_well_formed= must be True or False")
            self.unchecked |= not value
        if cdef.bases or cdef.keywords:
            raise self.src.error(cdef, "an @I.ir_module class takes no base classes")
        functions: dict[str, PrimFunc] = {}
        module_attrs: dict | None = None
        # as TVM, every function is declared before any body is read, so
        # that one may call another through the class name (Module.sub)
        shadowed = self.names.get(cdef.name, _UNBOUND)
        self.names[cdef.name] = self._declare_functions(cdef)
        for stmt in cdef.body:
            if self._is_module_attrs(stmt):
                if module_attrs is not None:
                    raise self.src.error(stmt, "I.module_attrs is given twice in the module")
                module_attrs = self._module_attrs(stmt.value)
            elif isinstance(stmt, ast.FunctionDef):
                if self._macro(stmt):
                    continue
                name, func = self._function(stmt)
                if name in functions:
                    raise self.src.error(stmt, f"function {name} is defined twice in the module")
                functions[name] = func
            elif isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(
                    stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                continue
            else:
                raise self.src.error(stmt, f"{type(stmt).__name__} statements are not supported "
                                     "in an @I.ir_module class",
                                     hint="the class holds @T.prim_func functions only")
        if shadowed is _UNBOUND:
            del self.names[cdef.name]
        else:
            self.names[cdef.name] = shadowed
        # an empty module (``pass``) is a module too: the printer writes it so
        return IRModule(functions, module_attrs or {})

    def _declare_functions(self, cdef: ast.ClassDef) -> ModuleFunctions:
        """The class name's value inside its functions: each function's
        return dtype, read from its ``->`` annotation."""
        returns = {}
        for stmt in cdef.body:
            if isinstance(stmt, ast.FunctionDef) and not _is_macro_def(stmt):
                returns[stmt.name] = return_dtype(self.evaluator, stmt)
        return ModuleFunctions(cdef.name, returns)

    def _is_module_attrs(self, stmt: ast.stmt) -> bool:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return False
        return self.evaluator.eval(stmt.value.func) == Builtin("I.module_attrs")

    def _module_attrs(self, call: ast.Call) -> dict:
        """``I.module_attrs({...})``: the attributes of the module."""
        from .parser_args import attr_dict, bind, sig

        positional = [(self.evaluator.eval(a), a) for a in call.args]
        keywords = {kw.arg: (self.evaluator.eval(kw.value), kw.value) for kw in call.keywords}
        if None in keywords:
            raise self.src.error(call, "** is not supported in I.module_attrs")
        args = bind(self.evaluator, "I.module_attrs", sig("attrs"), call, positional, keywords)
        return attr_dict(self.evaluator, args.attrs, args.node("attrs"), "I.module_attrs's argument")


def _is_macro_def(fdef: ast.FunctionDef) -> bool:
    """Whether a def of a class is decorated with ``T.macro`` (by its spelling:
    the class's functions are declared before any decorator is evaluated)."""
    for dec in fdef.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute) and target.attr == "macro":
            return True
    return False
