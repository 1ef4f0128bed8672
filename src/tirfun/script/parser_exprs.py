"""Evaluating TVMScript expressions.

:class:`ExprEvaluator` interprets the expression nodes of Python's ``ast``:
names, constants, ``T.`` attributes, calls, operators, subscripts, tuples,
lists and dicts. It never hands text or code objects to Python: each node
type has a handler here, and anything without one is a ParseError.

Operator rules follow TVMScript. Arithmetic on expressions uses tirfun's
operators (literals take the other operand's dtype, mixed dtypes are
promoted, two literals fold); comparisons, ``and``/``or``/``not`` build their
node directly; operators on plain Python numbers compute Python values,
within limits (no huge powers or shifts). ``a < b < c`` is rejected:
TVMScript has no chained comparison.
"""

from __future__ import annotations

import ast
import difflib
import operator
from typing import Any

from ..errors import NodeError, ParseError, TirfunError
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, And, Buffer, BufferLoad, BufferRegion, Call, GlobalVar, IntImm,
    IterVar, Not, Or, PrimExpr, Range, Ramp, Var, const,
)
from ..nodes.dtype import DataType
from ..nodes.expr import true_div
from . import parser_buffer_methods as buffer_methods
from . import parser_builtins as builtins
from . import parser_macros
from . import parser_python as python
from .parser_intrinsics import is_unsupported, unsupported_message
from .parser_args import bind, lift_pair, sig
from .parser_macros import TextMacro
from .parser_python import Macro, PyValue
from .parser_scope import MISSING, RefusedValue
from .parser_values import (
    BufferMethod, Builtin, Callee, DTypeCtor, MetaVar, ModuleFunctions, Namespace, NewVar, SlicedAccess,
    article, describe,
)

_MAX_INT_BITS = 4096
_MAX_COMPREHENSION = 10_000

_PY_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow,
}
_OP_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
    ast.Pow: "**", ast.MatMult: "@",
}
_CMP_NODES = {ast.Eq: EQ, ast.NotEq: NE, ast.Lt: LT, ast.LtE: LE, ast.Gt: GT, ast.GtE: GE}
_PY_CMPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}

_UNSUPPORTED_EXPRS = {
    ast.Lambda: "lambda expressions",
    ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.Set: "set literals",
    ast.JoinedStr: "f-strings",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
    ast.NamedExpr: "assignment expressions (:=)",
    ast.Starred: "starred expressions",
}


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float))


def _bool_pair(a: PrimExpr, b: PrimExpr, is_and: bool) -> PrimExpr:
    """``a and b`` / ``a or b`` of two bool expressions: T.And / T.Or of
    scalars; with a vector operand, as TVM's parser does, the lane-wise
    T.bitwise_and / T.bitwise_or (a scalar operand is broadcast)."""
    if a.dtype.is_vector or b.dtype.is_vector:
        return a & b if is_and else a | b
    return And(a, b) if is_and else Or(a, b)


class ExprEvaluator:
    """Expression half of the interpreter. Subclasses provide ``src`` (a
    SourceMap), ``scopes`` and the hooks used by the builtins."""

    # -- errors --------------------------------------------------------------
    def fail(self, node: ast.AST | None, message: str, hint: str = "") -> ParseError:
        """A ParseError at ``node`` (to be raised by the caller)."""
        return self.src.error(node, message, hint)

    # -- entry ---------------------------------------------------------------
    def eval(self, node: ast.expr) -> Any:
        """The value of an expression node."""
        method = _EXPR_HANDLERS.get(type(node))
        if method is None:
            what = _UNSUPPORTED_EXPRS.get(type(node), f"{type(node).__name__} expressions")
            raise self.fail(node, f"{what} are not supported in TVMScript")
        try:
            return method(self, node)
        except (ParseError, RecursionError):
            raise
        except NodeError as err:
            raise self.fail(node, str(err)) from None
        except TirfunError as err:
            raise self.fail(node, str(err)) from None

    # -- conversions used by handlers and builtins -----------------------------
    def as_expr(self, value: Any, node: ast.AST) -> PrimExpr:
        """``value`` as a TIR expression (literals become constants)."""
        if isinstance(value, PrimExpr):
            return value
        if isinstance(value, SlicedAccess):
            return self.vector_load(value, node)
        if _is_number(value):
            return const(value)
        if isinstance(value, BufferRegion):
            raise self.fail(node, "a buffer region cannot be used as a value",
                            hint="index the buffer with integers to load an element")
        raise self.fail(node, f"expected an expression, got {describe(value)}")

    def expr_or_literal(self, value: Any, node: ast.AST):
        """A TIR expression or a plain number (which then takes the other
        operand's dtype)."""
        if _is_number(value) or isinstance(value, PrimExpr):
            return value
        return self.as_expr(value, node)

    def plain(self, value: Any, node: ast.AST):
        """A plain Python number, or a ParseError."""
        if _is_number(value):
            return value
        raise self.fail(node, f"expected a number, got {describe(value)}")

    def cast_to(self, value: Any, dtype: DataType, node: ast.AST) -> PrimExpr:
        """``value`` as an expression of exactly ``dtype``: a literal is
        converted, an expression must already have it."""
        if _is_number(value):
            return const(value, dtype)
        expr = self.as_expr(value, node)
        if expr.dtype != dtype:
            raise self.fail(node, f"expected {article(str(dtype))} value, got {describe(expr)}",
                            hint=f'convert it with T.Cast("{dtype}", ...)')
        return expr

    def region_of(self, value: Any, node: ast.AST) -> BufferRegion:
        """A buffer region from ``A[0:4, i]``, ``A[i, j]`` or a region."""
        if isinstance(value, BufferRegion):
            return value
        if isinstance(value, Buffer):
            return BufferRegion.full(value)
        if isinstance(value, BufferLoad):
            ranges = []
            for index in value.indices:
                if isinstance(index, Ramp) and isinstance(index.stride, IntImm) and index.stride.value == 1:
                    ranges.append(Range(index.base, IntImm(index.base.dtype, index.lanes)))
                else:
                    ranges.append(Range(index, IntImm(index.dtype, 1)))
            return BufferRegion(value.buffer, ranges)
        if isinstance(value, SlicedAccess):
            from ..analysis.arith.linear import extent_between

            ranges = []
            for dim, item in zip(value.buffer.shape, value.items):
                if isinstance(item, tuple):
                    start, stop, step = item
                    if step is not None and not (isinstance(step, IntImm) and step.value == 1):
                        raise self.fail(node, "a region slice takes no step")
                    start = IntImm(dim.dtype, 0) if start is None else start
                    stop = dim if stop is None else stop
                    start, stop = self._same_int(start, stop, node)
                    ranges.append(Range(start, extent_between(start, stop)))
                else:
                    ranges.append(Range(item, IntImm(item.dtype, 1)))
            return BufferRegion(value.buffer, ranges)
        raise self.fail(node, f"expected a buffer region such as A[0:4, j], got {describe(value)}")

    def vector_load(self, access: SlicedAccess, node: ast.AST) -> BufferLoad:
        """``A[0:4]`` in an expression: a load with a Ramp index."""
        return BufferLoad(access.buffer, self.slice_indices(access, node))

    def slice_indices(self, access: SlicedAccess, node: ast.AST) -> list[PrimExpr]:
        """Indices of a sliced access: a Ramp per slice (its start when one lane wide)."""
        from ..analysis.arith.linear import extent_between

        indices = []
        for dim, item in zip(access.buffer.shape, access.items):
            if not isinstance(item, tuple):
                indices.append(item)
                continue
            start, stop, step = item
            start = IntImm(dim.dtype, 0) if start is None else start
            stop = dim if stop is None else stop
            start, stop = self._same_int(start, stop, node)
            step = IntImm(start.dtype, 1) if step is None else step
            span = extent_between(start, stop)
            if not (isinstance(span, IntImm) and isinstance(step, IntImm) and step.value > 0):
                raise self.fail(node, "a vector access needs a constant length and step",
                                hint="write A[i:i + 4] with a constant width")
            lanes = (span.value + step.value - 1) // step.value
            if lanes < 1:
                raise self.fail(node, "an empty slice cannot be accessed")
            indices.append(start if lanes == 1 else Ramp(start, step, lanes))
        return indices

    def _same_int(self, a: PrimExpr, b: PrimExpr, node) -> tuple[PrimExpr, PrimExpr]:
        if a.dtype == b.dtype:
            return a, b
        if isinstance(a, IntImm) and b.dtype.is_integer:
            return IntImm(b.dtype, a.value), b
        if isinstance(b, IntImm) and a.dtype.is_integer:
            return a, IntImm(a.dtype, b.value)
        raise self.fail(node, f"slice bounds have different dtypes ({a.dtype} and {b.dtype})")

    # -- leaves --------------------------------------------------------------
    def _constant(self, node: ast.Constant):
        v = node.value
        if v is None or isinstance(v, (bool, int, float, str)):
            if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > _MAX_INT_BITS:
                raise self.fail(node, "integer literal too large")
            return v
        raise self.fail(node, f"{type(v).__name__} literals are not supported in TVMScript")

    def _name(self, node: ast.Name):
        value = self.scopes.lookup(node.id)
        if value is MISSING:
            raise self.fail(node, f"undefined name '{node.id}'", hint=self._name_hint(node.id))
        if isinstance(value, RefusedValue):
            raise self.fail(node, f"'{node.id}' is {value.reason}, which TVMScript cannot use",
                            hint="only numbers, strings, dtypes, expressions, buffers and PrimFuncs "
                            "can come from the enclosing Python scope")
        if isinstance(value, MetaVar):
            return value.value
        return value

    def _name_hint(self, name: str) -> str:
        known = set()
        for frame in self.scopes.frames:
            known.update(frame)
        close = difflib.get_close_matches(name, sorted(known), n=1)
        if close:
            return f"did you mean '{close[0]}'?"
        return ("a name must be a parameter, a loop or block variable, a buffer, or a value "
                "of the enclosing Python scope")

    def _attribute(self, node: ast.Attribute):
        base = self.eval(node.value)
        attr = node.attr
        if isinstance(base, PyValue):
            return python.attribute(self, base, attr, node)
        if isinstance(base, Namespace):
            value = builtins.resolve(base.path, attr)
            if value is None and is_unsupported(base.path, attr):
                raise self.fail(node, unsupported_message(attr))
            if value is None:
                choices = builtins.names_of(base.path)
                close = difflib.get_close_matches(attr, choices, n=1)
                hint = f"did you mean {base.path}.{close[0]}?" if close else ""
                raise self.fail(node, f"unknown name {base.path}.{attr}", hint=hint)
            return value
        if isinstance(base, ModuleFunctions):
            if attr not in base.returns:
                have = ", ".join(sorted(base.returns)) or "none"
                raise self.fail(node, f"the module {base.name} has no function '{attr}' (it has: {have})")
            return Callee(GlobalVar(attr), base.returns[attr])
        if isinstance(base, Buffer):
            if attr == "data":
                if base.data is None:
                    raise self.fail(node, f"buffer {base.name} has no data variable",
                                    hint="declare it with data=... to refer to its pointer")
                return base.data
            if attr in ("shape", "strides"):
                return tuple(getattr(base, attr))
            if attr == "dtype":
                return base.dtype
            if attr == "elem_offset" and base.elem_offset is None:
                # as in TVM, a buffer declared without one starts at its data
                return IntImm(base.shape[0].dtype if base.shape else "int32", 0)
            if attr in ("name", "elem_offset", "ndim"):
                return getattr(base, attr)
            if attr in buffer_methods.METHODS:
                return BufferMethod(base, attr)
            raise self.fail(node, f"buffers have no attribute '{attr}' in TVMScript",
                            hint="available: data, shape, strides, dtype, elem_offset, name, ndim, "
                            "vload, vstore")
        if isinstance(base, PrimExpr) and attr == "dtype":
            return base.dtype
        if isinstance(base, Var) and attr == "name":
            return base.name
        if isinstance(base, IterVar) and attr in ("var", "dom"):
            return getattr(base, attr)
        if isinstance(base, Range) and attr in ("min", "extent"):
            return getattr(base, attr)
        raise self.fail(node, f"{describe(base)} has no attribute '{attr}' in TVMScript")

    # -- calls ---------------------------------------------------------------
    def _call(self, node: ast.Call):
        func = self.eval(node.func)
        if func == Builtin("T.comm_reducer"):
            from .parser_reducer import comm_reducer

            return comm_reducer(self, node)
        positional = self.elements(node.args)
        keywords = self.keyword_arguments(node.keywords)
        if isinstance(func, Builtin):
            return self.call_builtin(func.name, node, positional, keywords)
        if isinstance(func, DTypeCtor):
            return self.call_dtype(func.dtype, node, positional, keywords)
        if isinstance(func, DataType) and getattr(self.scopes.outer, "trusted", False):
            # np.float32(2) in a decorated function: a numpy type makes a typed value
            return self.call_dtype(func, node, positional, keywords)
        if isinstance(func, BufferMethod):
            return buffer_methods.call(self, func, node, positional, keywords)
        if isinstance(func, PyValue):
            return python.call(self, func, node, positional, keywords)
        if isinstance(func, Macro):
            return python.expand_macro(self, func, node, positional, keywords)
        if isinstance(func, TextMacro):
            return parser_macros.expand(self, func, node, positional, keywords)
        if isinstance(func, Callee):
            return self.call_module_function(func, node, positional, keywords)
        raise self.fail(node, f"{describe(func)} cannot be called in TVMScript")

    def call_module_function(self, callee: Callee, node: ast.Call, positional, keywords):
        """``Module.sub(x, y)``: a call of another function of the module,
        of the callee's return type (TVM's ``tir.call_tir``)."""
        if keywords:
            name = next(iter(keywords))
            raise self.fail(keywords[name][1], f"{callee.op.name_hint} takes its arguments by "
                            f"position, not by keyword ('{name}')")
        args = []
        for value, arg in positional:
            if not (_is_number(value) or isinstance(value, PrimExpr)):
                raise self.fail(arg, f"an argument of {callee.op.name_hint} must be a scalar "
                                f"expression, got {describe(value)}")
            args.append(self.as_expr(value, arg))
        return Call(callee.dtype, callee.op, args)

    def call_builtin(self, name: str, node: ast.Call, positional, keywords):
        """Bind the arguments of a namespace function and run its handler."""
        signature, handler = builtins.BUILTINS[name]
        args = bind(self, name, signature, node, positional, keywords)
        return handler(self, node, args)

    def call_dtype(self, dtype: DataType, node: ast.Call, positional, keywords):
        """``T.int32()`` declares a variable; ``T.int32(5)`` is a typed
        literal; ``T.float32(x)`` converts an expression."""
        name = f"T.{dtype}"
        signature = sig(("expr", None), kwonly=(("is_size_var", False),))
        args = bind(self, name, signature, node, positional, keywords)
        value = args.expr
        if value is None:
            return NewVar(dtype)
        if isinstance(value, str):
            if value not in ("inf", "-inf", "nan", "-nan") or not dtype.is_float:
                raise self.fail(args.node("expr"), f"{name}() takes a number, got the string {value!r}")
            value = float(value)
        if _is_number(value):
            if dtype.is_bool and not isinstance(value, bool) and value not in (0, 1):
                raise self.fail(args.node("expr"), f"{value!r} is not a bool")
            if dtype.is_integer and isinstance(value, float) and not value.is_integer():
                raise self.fail(args.node("expr"), f"{value!r} is not a value of {dtype}")
            return const(value, dtype)
        expr = self.as_expr(value, args.node("expr"))
        return expr.astype(dtype)

    # -- operators -----------------------------------------------------------
    def _binop(self, node: ast.BinOp):
        a = self.eval(node.left)
        b = self.eval(node.right)
        op = type(node.op)
        if _is_number(a) and _is_number(b):
            return self._python_binop(node, op, a, b)
        a = self.expr_or_literal(a, node.left)
        b = self.expr_or_literal(b, node.right)
        if op is ast.Div:
            return true_div(a, b)
        if op is ast.Pow:
            from ..tir import op as tir_op

            return tir_op.pow(a, b)
        if op is ast.MatMult:
            raise self.fail(node, "the @ operator is not supported in TVMScript")
        return _PY_BINOPS[op](a, b)

    def _python_binop(self, node, op, a, b):
        if op is ast.MatMult:
            raise self.fail(node, "the @ operator is not supported in TVMScript")
        if op is ast.Pow and isinstance(a, int) and isinstance(b, int):
            if b < 0 or b * max(a.bit_length(), 1) > _MAX_INT_BITS:
                raise self.fail(node, "the power is too large to compute")
        if op is ast.LShift and isinstance(b, int) and b > _MAX_INT_BITS:
            raise self.fail(node, "the shift is too large to compute")
        try:
            out = _PY_BINOPS[op](a, b)
        except ZeroDivisionError:
            raise self.fail(node, "division by zero") from None
        except (OverflowError, ValueError, TypeError) as err:
            raise self.fail(node, f"cannot compute {a!r} {_OP_SYMBOLS[op]} {b!r}: {err}") from None
        if isinstance(out, int) and out.bit_length() > _MAX_INT_BITS:
            raise self.fail(node, "the result is too large")
        return out

    def _unaryop(self, node: ast.UnaryOp):
        v = self.eval(node.operand)
        op = type(node.op)
        if op is ast.Not:
            if isinstance(v, PrimExpr):
                return Not(v)
            if _is_number(v):
                return not v
            raise self.fail(node, f"'not' needs a condition, got {describe(v)}")
        if _is_number(v):
            if op is ast.USub:
                return -v
            if op is ast.UAdd:
                return +v
            if isinstance(v, bool) or not isinstance(v, int):
                raise self.fail(node, "~ needs an integer")
            return ~v
        v = self.as_expr(v, node.operand)
        if op is ast.USub:
            return -v
        if op is ast.UAdd:
            return v
        return ~v

    def _boolop(self, node: ast.BoolOp):
        values = [self.eval(v) for v in node.values]
        if all(_is_number(v) for v in values):
            if isinstance(node.op, ast.And):
                return all(values)
            return any(values)
        exprs = []
        for v, n in zip(values, node.values):
            if isinstance(v, bool):
                v = IntImm("bool", int(v))
            e = self.as_expr(v, n)
            if not e.dtype.is_bool:
                raise self.fail(n, f"'{'and' if isinstance(node.op, ast.And) else 'or'}' needs "
                                f"bool operands, got {describe(e)}")
            exprs.append(e)
        is_and = isinstance(node.op, ast.And)
        out = exprs[0]
        for e in exprs[1:]:
            out = _bool_pair(out, e, is_and)
        return out

    def _compare(self, node: ast.Compare):
        if len(node.ops) != 1:
            raise self.fail(node, "chained comparisons such as a < b < c are not supported in TVMScript",
                            hint="write (a < b) and (b < c)")
        op = type(node.ops[0])
        if op not in _CMP_NODES:
            raise self.fail(node, "only ==, !=, <, <=, > and >= comparisons are supported in TVMScript")
        a = self.eval(node.left)
        b = self.eval(node.comparators[0])
        if (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str)):
            return _PY_CMPS[op](a, b)
        a, b = lift_pair(self, self.expr_or_literal(a, node.left),
                                   self.expr_or_literal(b, node.comparators[0]), node)
        return _CMP_NODES[op](a, b)

    def _ifexp(self, node: ast.IfExp):
        cond = self.eval(node.test)
        if isinstance(cond, PrimExpr) and not isinstance(cond, IntImm):
            raise self.fail(node, "a conditional expression needs a condition known while parsing",
                            hint="use T.Select(cond, a, b) or T.if_then_else(cond, a, b)")
        return self.eval(node.body if cond else node.orelse)

    # -- containers and subscripts ------------------------------------------------
    def _listcomp(self, node: ast.ListComp):
        """``[expr for x in values if cond]`` over tuples, lists and
        ``range`` of ints: evaluated while parsing, within a size limit."""
        out: list = []
        self.scopes.push()
        try:
            self._comprehend(node, 0, out)
        finally:
            self.scopes.pop()
        return out

    def _comprehend(self, node: ast.ListComp, k: int, out: list) -> None:
        if k == len(node.generators):
            out.append(self.eval(node.elt))
            if len(out) > _MAX_COMPREHENSION:
                raise self.fail(node, f"a list comprehension makes more than {_MAX_COMPREHENSION} items")
            return
        gen = node.generators[k]
        if gen.is_async:
            raise self.fail(gen.iter, "async comprehensions are not supported in TVMScript")
        for item in self._iterate(gen.iter):
            self._bind_comprehension(gen.target, item)
            if all(self._truth(self.eval(cond), cond) for cond in gen.ifs):
                self._comprehend(node, k + 1, out)

    def _iterate(self, node: ast.expr) -> list:
        """The values a comprehension iterates over."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                self.scopes.lookup(node.func.id) == Builtin("range") and not node.keywords:
            bounds = [self.eval(a) for a in node.args]
            if not bounds or len(bounds) > 3 or not all(isinstance(b, int) and not isinstance(b, bool)
                                                         for b in bounds):
                raise self.fail(node, "range in a list comprehension takes 1 to 3 ints")
            if bounds[-1] == 0 and len(bounds) == 3:
                raise self.fail(node, "range() step must not be zero")
            values = range(*bounds)
        else:
            value = self.eval(node)
            if isinstance(value, (tuple, list)):
                values = value
            elif isinstance(value, python.PyValue):
                values = python.iterate(self, value, node, _MAX_COMPREHENSION + 1)
            else:
                raise self.fail(node, f"a list comprehension iterates over a tuple, a list or "
                                f"range of ints, not {describe(value)}")
        if len(values) > _MAX_COMPREHENSION:
            raise self.fail(node, f"a list comprehension makes more than {_MAX_COMPREHENSION} items")
        return list(values)

    def _bind_comprehension(self, target: ast.expr, value) -> None:
        if isinstance(target, ast.Name):
            self.scopes.define(target.id, value)
            return
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) \
                and len(value) == len(target.elts):
            for t, v in zip(target.elts, value):
                self._bind_comprehension(t, v)
            return
        raise self.fail(target, f"cannot bind {describe(value)} to this target")

    def _truth(self, value, node) -> bool:
        if _is_number(value) or isinstance(value, (str, tuple, list)) or value is None:
            return bool(value)
        if isinstance(value, IntImm):
            return bool(value.value)
        raise self.fail(node, "the condition of a list comprehension must be known while parsing, "
                        f"got {describe(value)}")

    def _tuple(self, node: ast.Tuple):
        return tuple(v for v, _ in self.elements(node.elts))

    def _list(self, node: ast.List):
        return [v for v, _ in self.elements(node.elts)]

    def elements(self, nodes: list[ast.expr]) -> list[tuple[Any, ast.expr]]:
        """The values of the items of a tuple, a list or a call's
        positional arguments, each with the node it was written at; a
        starred item (``[128, *dims]``, ``T.grid(*A.shape)``) contributes
        the items of its sequence, as in Python."""
        out = []
        for item in nodes:
            if not isinstance(item, ast.Starred):
                out.append((self.eval(item), item))
                continue
            out.extend((v, item.value) for v in self.unpacked(item.value))
        return out

    def unpacked(self, node: ast.expr) -> list:
        """The items of the sequence ``*node`` unpacks."""
        value = self.eval(node)
        if isinstance(value, (tuple, list)):
            return list(value)
        if isinstance(value, python.PyValue):
            items = python.iterate(self, value, node, _MAX_COMPREHENSION + 1)
            if len(items) > _MAX_COMPREHENSION:
                raise self.fail(node, f"unpacking makes more than {_MAX_COMPREHENSION} items")
            return items
        raise self.fail(node, f"only a tuple or a list can be unpacked with *, got {describe(value)}")

    def keyword_arguments(self, keywords: list[ast.keyword]) -> dict[str, tuple[Any, ast.expr]]:
        """A call's keyword arguments by name, ``**options`` (a dict with
        string keys) spread in as Python spreads it."""
        out: dict[str, tuple[Any, ast.expr]] = {}
        for kw in keywords:
            if kw.arg is not None:
                pairs = [(kw.arg, self.eval(kw.value))]
            else:
                spread = self.eval(kw.value)
                if isinstance(spread, python.PyValue) and isinstance(spread.value, dict):
                    spread = {k: python.from_python(v) for k, v in spread.value.items()}
                if not isinstance(spread, dict) or not all(isinstance(k, str) for k in spread):
                    raise self.fail(kw.value, "only a dict with string keys can be unpacked with **, "
                                    f"got {describe(spread)}")
                pairs = list(spread.items())
            for name, value in pairs:
                if name in out:
                    raise self.fail(kw.value, f"the keyword argument '{name}' is given twice")
                out[name] = (value, kw.value)
        return out

    def _dict(self, node: ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise self.fail(v, "unpacking a dict with ** is not supported in TVMScript")
            key = self.eval(k)
            try:
                hash(key)
            except TypeError:
                raise self.fail(k, f"{describe(key)} cannot be a dict key") from None
            out[key] = self.eval(v)
        return out

    def _subscript(self, node: ast.Subscript):
        base = self.eval(node.value)
        if isinstance(base, PyValue):
            return python.subscript(self, base, self.eval(node.slice), node)
        if isinstance(base, Buffer):
            return self.buffer_access(base, node.slice, node)
        if isinstance(base, (tuple, list)):
            index = self.eval(node.slice)
            if not isinstance(index, int) or isinstance(index, bool):
                raise self.fail(node.slice, "a tuple can only be indexed by an int")
            if not -len(base) <= index < len(base):
                raise self.fail(node.slice, f"index {index} is out of range for {describe(base)} "
                                f"of length {len(base)}")
            return base[index]
        if isinstance(base, dict):
            key = self.eval(node.slice)
            try:
                return base[key]
            except (KeyError, TypeError):
                raise self.fail(node.slice, f"no key {key!r} in the dict") from None
        if isinstance(base, Builtin) and base.name in ("T.Buffer", "T.ptr"):
            return self._subscript_call(base.name, node)
        raise self.fail(node, f"{describe(base)} cannot be indexed")

    def _subscript_call(self, name: str, node: ast.Subscript):
        """TVM's older spellings ``T.Buffer[(8,), "float32"]`` and
        ``T.Ptr[T.float32]``: the call with the subscript's items as its
        arguments (a tuple of numbers alone is a buffer's shape)."""
        keys = self.eval(node.slice)
        if not isinstance(keys, tuple):
            args = [keys]
        elif name == "T.Buffer" and len(keys) >= 2 and not isinstance(keys[1], str):
            args = [keys]
        else:
            args = list(keys)
        return self.call_builtin(name, node, [(a, node.slice) for a in args], {})

    def buffer_access(self, buffer: Buffer, index_node: ast.expr, node: ast.AST):
        """``A[i, j]`` (a load), ``A[0:4, j]`` (a sliced access) or ``A[()]``."""
        items = []
        sliced = False
        for value, item in self._index_items(index_node):
            if isinstance(item, ast.Slice):
                sliced = True
                start = None if item.lower is None else self._index(self.eval(item.lower), item.lower)
                stop = None if item.upper is None else self._index(self.eval(item.upper), item.upper)
                step = None if item.step is None else self._index(self.eval(item.step), item.step)
                items.append((start, stop, step))
            else:
                items.append(self._index(value, item))
        if len(items) != len(buffer.shape):
            n = len(buffer.shape)
            raise self.fail(node, f"buffer {buffer.name} has {n} dimension{'s' if n != 1 else ''} "
                            f"but is indexed with {len(items)} "
                            f"ind{'ices' if len(items) != 1 else 'ex'}",
                            hint=f"{buffer.name} has shape "
                            f"({', '.join(d.script() if hasattr(d, 'script') else str(d) for d in buffer.shape)}"
                            f"{',' if n == 1 else ''})")
        if sliced:
            return SlicedAccess(buffer, tuple(items))
        return BufferLoad(buffer, items)

    def _index_items(self, index_node: ast.expr) -> list[tuple[Any, ast.expr]]:
        """The indices written in ``A[...]``, each with its node (a slice's
        value is None, it is read by the caller). As in TVM, a tuple or a
        list written as the whole index (``A[()]``, ``A[iters]`` with
        ``iters`` the variables of a grid) gives one index per item, and a
        starred item (``A[(*spatial, k)]``) gives one per item of its
        sequence."""
        nodes = index_node.elts if isinstance(index_node, ast.Tuple) else [index_node]
        out = []
        for item in nodes:
            if isinstance(item, ast.Slice):
                out.append((None, item))
            elif isinstance(item, ast.Starred):
                out.extend((v, item.value) for v in self.unpacked(item.value))
            else:
                out.append((self.eval(item), item))
        if not isinstance(index_node, ast.Tuple) and len(out) == 1 \
                and isinstance(out[0][0], (tuple, list)):
            return [(v, index_node) for v in out[0][0]]
        return out

    def _index(self, value: Any, node: ast.AST) -> PrimExpr:
        if isinstance(value, bool):
            raise self.fail(node, "a buffer index must be an integer, got a bool")
        if isinstance(value, int):
            return IntImm(DataType("int32") if -(2**31) <= value < 2**31 else DataType("int64"), value)
        expr = self.as_expr(value, node)
        if not expr.dtype.is_integer:
            raise self.fail(node, f"a buffer index must be an integer, got {describe(expr)}")
        return expr


_EXPR_HANDLERS = {
    ast.Constant: ExprEvaluator._constant,
    ast.Name: ExprEvaluator._name,
    ast.Attribute: ExprEvaluator._attribute,
    ast.Call: ExprEvaluator._call,
    ast.BinOp: ExprEvaluator._binop,
    ast.UnaryOp: ExprEvaluator._unaryop,
    ast.BoolOp: ExprEvaluator._boolop,
    ast.Compare: ExprEvaluator._compare,
    ast.IfExp: ExprEvaluator._ifexp,
    ast.Tuple: ExprEvaluator._tuple,
    ast.List: ExprEvaluator._list,
    ast.ListComp: ExprEvaluator._listcomp,
    ast.Dict: ExprEvaluator._dict,
    ast.Subscript: ExprEvaluator._subscript,
}
