"""Compile a PrimFunc once into a Python function, and run it.

Compiled functions are cached by the PrimFunc itself (an immutable value),
so running the same function again costs only the argument checks.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import attrs

from ..analysis.nesting import guard_depth
from ..errors import InterpError, TirfunError
from ..nodes import Block, Call, GlobalVar, IntImm, IRModule, PrimFunc, Var
from .args import bind_arguments
from .codegen import Compiler, Env, LineInfo
from .runtime import namespace
from .semantics import Fault

_FILENAME = "<tirfun.interp>"


@attrs.frozen(eq=False)
class CompiledFunc:
    """A PrimFunc translated into Python: ``source`` is the generated text,
    ``kernel`` the function built from it."""

    func: PrimFunc
    source: str
    kernel: Any
    table: tuple
    params: tuple
    free: tuple
    name: str = ""  # the function's name in its module, for messages

    def __call__(self, *args, **kwargs):
        """Run on numpy arrays, in place (see :func:`tirfun.interp.run`)."""
        bound = bind_arguments(self, args, kwargs)
        try:
            return self.kernel(bound.storages, bound.values, bound.shapes)
        except TirfunError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure of generated code is reported
            raise self.runtime_error(exc) from (None if isinstance(exc, Fault) else exc)
        finally:
            bound.write_back()

    def call_raw(self, *args):
        """Run as the callee of another function of the module: pointers
        come as the caller's storage (shared, so writes are seen), scalars
        as values of their dtype."""
        storages, shapes, values = [], [], {}
        for spec, arg in zip(self.params, args):
            if spec.buffer is None and not spec.var.dtype.is_handle:
                values[spec.var] = arg
        for spec, arg in zip(self.params, args):
            if spec.buffer is not None:
                shape = []
                for d in spec.buffer.shape:
                    if isinstance(d, Var) and d in values:
                        shape.append(values[d])
                    elif not isinstance(d, IntImm):
                        raise InterpError(f"{self.func_label()}: buffer {spec.buffer.name} has the "
                                          "symbolic shape of a parameter array; a call from the "
                                          "module passes a pointer, which has no shape")
                    else:
                        shape.append(d.value)
                _check_pointee(self, spec.buffer, arg, shape)
                storages.append(arg)
                shapes.append(tuple(shape))
            elif spec.var.dtype.is_handle:
                storages.append(arg)
                shapes.append(())
            else:
                shapes.append(())
        missing = [v.name for v in self.free if v not in values]
        if missing:
            raise InterpError(f"{self.func_label()}: no value for {', '.join(missing)} in a call "
                              "from the module")
        try:
            return self.kernel(tuple(storages), tuple(values[v] for v in self.free), tuple(shapes))
        except TirfunError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure of generated code is reported
            raise self.runtime_error(exc) from (None if isinstance(exc, Fault) else exc)

    def func_label(self) -> str:
        return f"function {self.name or self.func.attrs.get('global_symbol', '(unnamed)')}"

    def runtime_error(self, exc: Exception) -> InterpError:
        """An InterpError for ``exc``, naming the statement being executed
        and the values of the variables in scope."""
        message = _message(exc)
        frame_info = _innermost_generated_frame(exc)
        if frame_info is None:
            return InterpError(message)
        lineno, local_values = frame_info
        return InterpError(message + describe(line_info(self.table, lineno), local_values))


def _check_pointee(compiled, buf, storage, shape) -> None:
    """A pointer passed for a buffer parameter holds elements of its dtype,
    at least as many as the buffer has."""
    from .runtime import storage_dtype

    held = storage_dtype(storage)
    if held != str(buf.dtype.element_of):
        raise InterpError(f"{compiled.func_label()}: buffer {buf.name} of {buf.dtype} is given a "
                          f"pointer to {held} data")
    needed = 1
    for d in shape:
        needed *= d
    if needed > len(storage):
        raise InterpError(f"{compiled.func_label()}: buffer {buf.name} has {needed} elements but "
                          f"the pointer it is given reaches {len(storage)}")


def _message(exc: Exception) -> str:
    if isinstance(exc, Fault):
        return str(exc)
    if isinstance(exc, ZeroDivisionError):
        return "integer division by zero"
    if isinstance(exc, TypeError) and "read-only" in str(exc):
        return "store into an argument array that is read-only"
    if isinstance(exc, RecursionError):
        return "the program nests too deeply to run"
    return f"{type(exc).__name__}: {exc}"


def line_info(table: tuple, lineno: int | None) -> LineInfo | None:
    """The statement at line ``lineno`` of the generated code, or None: a
    line past the table, or no line at all (Python gives none for some
    instructions, where a signal's exception, a timeout's, can arrive)."""
    return table[lineno - 1] if lineno is not None and 0 < lineno <= len(table) else None


def _innermost_generated_frame(exc: Exception):
    tb = exc.__traceback__
    found = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == _FILENAME:
            found = (tb.tb_lineno, tb.tb_frame.f_locals)
        tb = tb.tb_next
    return found


def describe(info: LineInfo | None, local_values: dict | None = None) -> str:
    """Where an error happened: the block, the statement, the variables."""
    if info is None:
        return ""
    parts = []
    if info.block is not None:
        parts.append(f'in block "{info.block}"')
    if local_values is not None and info.scope:
        shown = [f"{name} = {local_values[py]!r}" for py, name in info.scope if py in local_values]
        if shown:
            parts.append("with " + ", ".join(shown))
    text = ("\n  " + ", ".join(parts)) if parts else ""
    if info.stmt is not None:
        text += "\n  statement:\n" + _indent(statement_text(info.stmt))
    return text


def statement_text(stmt, max_lines: int = 8) -> str:
    """The statement as TVMScript (its first lines), or a short description
    when no printer is available."""
    try:
        text = stmt.script()
    except Exception:  # noqa: BLE001 - the printer is optional here
        text = _short(stmt)
    lines = text.rstrip("\n").splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["..."]
    return "\n".join(lines)


def _short(stmt) -> str:
    name = type(stmt).__name__
    if isinstance(stmt, Block):
        return f'block "{stmt.name_hint}"'
    buffer = getattr(stmt, "buffer", None)
    if buffer is not None:
        return f"{name} to buffer {buffer.name}"
    var = getattr(stmt, "loop_var", None) or getattr(stmt, "var", None)
    if var is not None:
        return f"{name} of {var.name}"
    return name


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


@guard_depth(InterpError)
@functools.lru_cache(maxsize=512)
def compile_func(func: PrimFunc) -> CompiledFunc:
    """Translate ``func`` into Python (cached per function value)."""
    if not isinstance(func, PrimFunc):
        raise InterpError(f"expected a PrimFunc, got {type(func).__name__}")
    return translate(func, Compiler(func))


def translate(func: PrimFunc, compiler, extra=None) -> CompiledFunc:
    """Run ``compiler`` over ``func`` and load the Python it writes; every
    failure is an InterpError. ``extra(compiler)``, called after the
    translation, gives names to add to the generated code's namespace."""
    try:
        source, table, params, free = compiler.compile()
    except InterpError as exc:
        raise InterpError(str(exc) + describe(compiler.ctx)) from None
    # a RecursionError goes up to the entry point (compile_func, run), which
    # tries once more with room for a program as deep as tirfun reads
    try:
        code = compile(source, _FILENAME, "exec")
    except (SyntaxError, RecursionError, MemoryError) as exc:
        raise InterpError(f"the program is too large or nests too deeply for the interpreter "
                          f"({type(exc).__name__})") from None
    ns = namespace()
    if extra is not None:
        ns.update(extra(compiler))
    exec(code, ns)  # noqa: S102 - source generated from our own nodes, see codegen
    return CompiledFunc(func, source, ns["h_kernel"], tuple(table), tuple(params), tuple(free))


class _Callees:
    """The functions of a module, compiled when first called."""

    def __init__(self, mod: IRModule):
        self.mod = mod

    def __getitem__(self, name: str):
        if name not in self.mod.functions:
            raise InterpError(f"the call of {name} names no function of the module")
        return compile_in_module(self.mod, name)


@guard_depth(InterpError)
@functools.lru_cache(maxsize=256)
def compile_in_module(mod: IRModule, name: str) -> CompiledFunc:
    """Function ``name`` of ``mod`` translated into Python, its calls of
    other functions of ``mod`` bound to them (cached per module)."""
    compiled = attrs.evolve(compile_func(mod[name]), name=name)
    if not _calls_module_functions(mod[name]):
        return compiled
    kernel = compiled.kernel
    ns = dict(kernel.__globals__)
    ns["h_callees"] = _Callees(mod)
    bound = types.FunctionType(kernel.__code__, ns, kernel.__name__, kernel.__defaults__,
                               kernel.__closure__)
    return attrs.evolve(compiled, kernel=bound)


def _calls_module_functions(func: PrimFunc) -> bool:
    from ..analysis.traversal import walk

    return any(isinstance(n, Call) and isinstance(n.op, GlobalVar) for n in walk(func.body))


def select_function(func_or_mod) -> PrimFunc:
    """The PrimFunc to run: the function itself, a module's ``main``, or a
    module's only function."""
    if isinstance(func_or_mod, PrimFunc):
        return func_or_mod
    if isinstance(func_or_mod, IRModule):
        if "main" in func_or_mod:
            return func_or_mod["main"]
        if len(func_or_mod) == 1:
            return func_or_mod.values()[0]
        raise InterpError(f"the module has {len(func_or_mod)} functions and none is named main "
                          f"({', '.join(func_or_mod)}); pass the function to run")
    raise InterpError(f"can only run a PrimFunc or an IRModule, got {type(func_or_mod).__name__}")


@functools.lru_cache(maxsize=1024)
def _expression_function(expr, names: tuple):
    compiler = Compiler(None)
    compiler.no_spill = 1  # a single expression: there are no statements to spill into
    env = Env()
    params = []
    for var in names:
        py = compiler.var_name(var)
        params.append(py)
        env = env.bind_var(var, py, None)
    try:
        value = compiler.expr(expr, env)
    except RecursionError:
        raise InterpError("the expression nests too deeply") from None
    source = f"def h_expr({', '.join(params)}):\n    return {compiler.exact(value)}\n"
    ns = namespace()
    exec(compile(source, _FILENAME, "exec"), ns)  # noqa: S102 - generated from our own nodes
    return ns["h_expr"]


def evaluate(expr, **values):
    """The value of an expression without buffers, with variables given by
    name: ``evaluate(n * 2 + 1, n=4) == 9``."""
    from ..analysis.traversal import walk
    from ..nodes import Let, Var

    nodes = list(walk(expr))
    bound = {n.var for n in nodes if isinstance(n, Let)}
    free = []
    for node in nodes:
        if isinstance(node, Var) and node not in free and node not in bound:
            free.append(node)
    args = []
    for var in free:
        if var.name not in values:
            raise InterpError(f"no value given for variable {var.name}")
        args.append(values[var.name])
    fn = _expression_function(expr, tuple(free))
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001
        raise InterpError(_message(exc)) from None


__all__ = ["CompiledFunc", "compile_func", "select_function", "evaluate", "describe"]
