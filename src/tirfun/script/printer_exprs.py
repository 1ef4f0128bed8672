"""Expressions as TVMScript text.

Operators print with Python's precedence and the fewest parentheses that
keep the tree: a child is wrapped when it binds less tightly than its parent,
and a right operand also when it binds equally (``a - (b - c)``). An operator
prints in its infix spelling only when TVM's constant folding would rebuild
the very same node from that spelling; otherwise it prints as the explicit
``T.Add(x, 0)`` call, so the text always parses back to the same tree.

Expressions are rendered with an explicit work stack rather than recursion,
so very deep trees (long sums, chains of selects) print without hitting
Python's recursion limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pyrsistent import PMap, PVector

from ..errors import NodeError
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Broadcast, Buffer, BufferLoad, Call, Cast, Div, FloatImm,
    FloorDiv, FloorMod, GlobalVar, IntImm, Let, Max, Min, Mod, Mul, Not, Or, PrimExpr, Ramp, Select, Shuffle,
    StringImm, Sub, Var, binary,
)
from ..nodes.base import Node
from ..nodes.dtype import DataType
from ..nodes.target import TargetConfig

# Python's operator precedence, lowest first (the levels TVM's doc printer uses)
IF_ELSE = 2
OR = 3
AND = 4
NOT = 5
COMPARE = 6
ADD = 11
MUL = 12
UNARY = 13
ATOM = 15

Rendered = tuple[str, int]

_INFIX: dict[type, tuple[str, int]] = {
    Add: ("+", ADD), Sub: ("-", ADD), Mul: ("*", MUL), FloorDiv: ("//", MUL),
    FloorMod: ("%", MUL), Div: ("/", MUL),
    LT: ("<", COMPARE), LE: ("<=", COMPARE), EQ: ("==", COMPARE), NE: ("!=", COMPARE),
    GT: (">", COMPARE), GE: (">=", COMPARE),
    And: ("and", AND), Or: ("or", OR),
}
# operators that always print as a call: TVM's names for them
_CALL_ONLY: dict[type, str] = {Mod: "truncmod", Min: "min", Max: "max"}

# intrinsics whose result dtype is printed as their first argument (TVM's
# TScriptDtypePrintLocation: the others infer it from their arguments)
DTYPE_FIRST_OPS = frozenset({
    "reinterpret", "call_extern", "call_pure_extern", "call_llvm_intrin",
    "call_llvm_pure_intrin", "ptx_mma", "ptx_mma_sp", "ptx_ldmatrix", "ptx_cp_async",
    "ptx_cp_async_bulk", "mma_store", "mma_fill", "vectorhigh", "vectorlow", "vectorcombine",
    "dp4a", "get_active_lane_mask", "type_annotation",
})
DTYPE_LAST_OPS = frozenset({"tvm_struct_get"})
# intrinsics TVM prints under another name (its TScriptPrinterName)
PRINTER_NAMES = {"tvm_call_packed": "call_packed", "tvm_call_cpacked": "call_cpacked",
                 "tvm_call_packed_lowered": "call_packed_lowered",
                 "tvm_call_cpacked_lowered": "call_cpacked_lowered"}


# --------------------------------------------------------------------------
# literals


def str_literal(text: str) -> str:
    """A double-quoted Python string literal.

    Printable ASCII stays as is; tab, newline and carriage return use their
    short escapes; anything else uses ``\\x``/``\\u`` escapes, so the literal
    means the same string when Python reads it back.
    """
    out = []
    for ch in text:
        code = ord(ch)
        if 32 <= code <= 126 and ch not in '\\"':
            out.append(ch)
        elif ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x100:
            out.append(f"\\x{code:02X}")
        elif code < 0x10000:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    return '"' + "".join(out) + '"'


def float_literal(value: float) -> str:
    """A float the way TVM's printer writes it: integral values with one
    decimal (``1.0``), others with 17 significant digits, which read back
    to the same double; infinities and NaN as quoted strings. A NaN keeps
    its sign (``"-nan"``); its payload has no spelling and reads back as the
    quiet NaN of that sign."""
    if math.isnan(value):
        return '"-nan"' if math.copysign(1.0, value) < 0 else '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    if value.is_integer():
        return f"{value:.1f}"
    return f"{value:.17g}"


def int_literal(imm: IntImm, prefix: str) -> str:
    """``5`` for int32, ``T.bool(True)`` for bool, ``T.int64(5)`` otherwise."""
    dtype = imm.dtype
    if dtype == "int32":
        return str(imm.value)
    if dtype.is_bool:
        return f"{prefix}.bool({bool(imm.value)})"
    return f"{prefix}.{dtype}({imm.value})"


# --------------------------------------------------------------------------
# when TVM's operator would fold (then the node prints as an explicit call)


def _is_int(x) -> bool:
    return type(x) is IntImm


def _is_float(x) -> bool:
    return type(x) is FloatImm


def tvm_folds(cls: type, a: PrimExpr, b: PrimExpr) -> bool:
    """Whether TVM's operator for ``cls`` would simplify ``a op b`` instead
    of building the node (its constant-folding rules, which include
    identities such as ``x + 0`` and ``x * 1``)."""
    ia, ib, fa, fb = _is_int(a), _is_int(b), _is_float(a), _is_float(b)
    if ia and ib:
        return True
    if fa and fb:
        if cls is FloorMod:  # TVM folds remainders of integers only
            return False
        if not (cls is FloorDiv and b.value == 0):
            return True
    av = a.value if (ia or fa) else None
    bv = b.value if (ib or fb) else None
    if cls is Add:
        return av == 0 or bv == 0
    if cls is Sub:
        return bv == 0
    if cls is Mul:
        return av in (0, 1) or bv in (0, 1)
    if cls in (Div, FloorDiv):
        return av == 0 or bv == 1
    if cls is FloorMod:
        return (ia and av == 0) or (ib and bv == 1)
    if cls in (And, Or):
        return ia or ib
    return False


# --------------------------------------------------------------------------
# helpers shared with the statement printer


def end_of(start: PrimExpr, extent: PrimExpr) -> PrimExpr:
    """``start + extent`` as TVM's operator builds it (constants folded,
    ``+ 0`` dropped), used for ``range(a, b)`` ends and slice stops."""
    if type(start) is IntImm and start.value == 0 and start.dtype.bits <= extent.dtype.bits:
        return extent
    if type(extent) is IntImm and extent.value == 0 and extent.dtype.bits <= start.dtype.bits:
        return start
    return binary(Add, start, extent)


def is_zero(expr: PrimExpr) -> bool:
    """An integer constant zero of any integer dtype."""
    return type(expr) is IntImm and expr.value == 0


def is_one(expr: PrimExpr) -> bool:
    """An integer or bool constant one (``T.bool(True)`` included)."""
    return type(expr) is IntImm and expr.value == 1


def wrap(arg: Rendered, level: int, strict: bool = False) -> str:
    """The child's text, parenthesised when it binds less tightly than
    ``level`` (or equally, when ``strict``)."""
    text, prec = arg
    if prec < level or (strict and prec == level):
        return f"({text})"
    return text


class _Finish:
    """A work-stack marker: pop ``count`` rendered children, then format."""

    __slots__ = ("count", "fmt")

    def __init__(self, count: int, fmt: Callable[[list[Rendered]], Rendered]):
        self.count = count
        self.fmt = fmt


class ExprRenderer:
    """Renders expressions; names of variables and buffers come from the
    ``names`` object (``var(v)`` and ``buffer(b)``), which in a function
    also declares names that nothing binds."""

    def __init__(self, names, prefix: str = "T"):
        self.names = names
        self.p = prefix
        # the class a module function is called through; None: TVM's
        # I.GlobalVar("f") form, for a function printed alone
        self.module_name: str | None = None
        self.ir_prefix = "I"

    # public ------------------------------------------------------------------
    def expr(self, e: PrimExpr) -> str:
        """The text of ``e``."""
        return self.render(e)[0]

    def render(self, root: PrimExpr) -> Rendered:
        """The text of ``root`` and its precedence level."""
        leaf = self._leaf(root)
        if leaf is not None:
            return leaf
        values: list[Rendered] = []
        work: list = [root]
        while work:
            item = work.pop()
            if type(item) is _Finish:
                n = item.count
                if n:
                    args = values[-n:]
                    del values[-n:]
                else:
                    args = []
                values.append(item.fmt(args))
                continue
            leaf = self._leaf(item)
            if leaf is not None:
                values.append(leaf)
                continue
            kids, fmt = self._plan(item)
            work.append(_Finish(len(kids), fmt))
            work.extend(reversed(kids))
        return values[0]

    # leaves ------------------------------------------------------------------
    def _leaf(self, e) -> Rendered | None:
        t = type(e)
        if isinstance(e, Var):  # te variables too
            return self.names.var(e), ATOM
        if t is IntImm:
            return int_literal(e, self.p), ATOM
        if t is FloatImm:
            return f"{self.p}.{e.dtype}({float_literal(e.value)})", ATOM
        if t is StringImm:
            return str_literal(e.value), ATOM
        if not isinstance(e, PrimExpr):
            raise NodeError(f"cannot print {type(e).__name__} {e!r} as a TIR expression")
        return None

    # inner nodes -------------------------------------------------------------
    def _plan(self, e: PrimExpr) -> tuple[list, Callable[[list[Rendered]], Rendered]]:
        t = type(e)
        p = self.p
        infix = _INFIX.get(t)
        if infix is not None:
            return [e.a, e.b], self._binary_fmt(e, t, infix)
        name = _CALL_ONLY.get(t)
        if name is not None:
            return [e.a, e.b], _call_fmt(f"{p}.{name}")
        if t is Not:
            return [e.a], lambda args: (f"not {wrap(args[0], NOT)}", NOT)
        if t is BufferLoad:
            return self._load_plan(e)
        if t is Call:
            return self._call_plan(e)
        if t is Cast:
            head = f"{p}.Cast({str_literal(e.dtype)}, "
            return [e.value], lambda args: (head + args[0][0] + ")", ATOM)
        if t is Select:
            return [e.condition, e.true_value, e.false_value], _call_fmt(f"{p}.Select")
        if t is Ramp:
            tail = f", {e.lanes})"
            head = f"{p}.Ramp("
            return [e.base, e.stride], lambda args: (f"{head}{args[0][0]}, {args[1][0]}{tail}", ATOM)
        if t is Shuffle:
            n = len(e.vectors)
            head = f"{p}.Shuffle(["
            return list(e.vectors) + list(e.indices), lambda args: (
                head + ", ".join(a[0] for a in args[:n]) + "], ["
                + ", ".join(a[0] for a in args[n:]) + "])", ATOM)
        if t is Broadcast:
            tail = f", {e.lanes})"
            head = f"{p}.Broadcast("
            return [e.value], lambda args: (head + args[0][0] + tail, ATOM)
        if t is Let:
            var = self.names.var(e.var)
            head = f"{p}.Let("
            return [e.body, e.value], lambda args: (
                f"{head}{args[0][0]}, where={{{var}: {args[1][0]}}})", ATOM)
        raise NodeError(f"cannot print the expression node {t.__name__}")

    def _binary_fmt(self, e, t: type, infix: tuple[str, int]):
        op, level = infix
        folds = tvm_folds(t, e.a, e.b)
        if t is Div and not e.a.dtype.element_of.is_float:
            folds = True  # TVM spells integer Div as T.Div, never '/'
        if folds:
            return _call_fmt(f"{self.p}.{t.__name__}")
        text = f" {op} "
        if level == COMPARE:
            # Python would chain 'a < b == c'; keep nested comparisons grouped
            def fmt(args):
                return (wrap(args[0], level, True) + text + wrap(args[1], level, True), level)
        else:
            def fmt(args):
                return (wrap(args[0], level) + text + wrap(args[1], level, True), level)
        return fmt

    def _load_plan(self, e: BufferLoad):
        name = self.names.buffer(e.buffer)
        if e.predicate is not None:
            # TVM prints a predicated load as a vload with the indices as a list
            n = len(e.indices)

            def masked(args):
                indices = ", ".join(a[0] for a in args[:n])
                return f"{name}.vload([{indices}], predicate={args[n][0]})", ATOM
            return list(e.indices) + [e.predicate], masked
        kids, shape = index_plan(e.indices)

        def fmt(args):
            return f"{name}[{join_indices(shape, args)}]", ATOM
        return kids, fmt

    def _call_plan(self, e: Call):
        p = self.p
        op = e.op
        if isinstance(op, GlobalVar):
            callee = (f"{self.module_name}.{op.name_hint}" if self.module_name is not None
                      else f"{self.ir_prefix}.GlobalVar({str_literal(op.name_hint)})")

            return list(e.args), _call_fmt(callee)
        short = op[4:] if op.startswith("tir.") else ""
        if short.isidentifier() and not _dtype_unsaid(e, short):
            head = f"{p}.{PRINTER_NAMES.get(short, short)}("
            if short in DTYPE_FIRST_OPS:
                head += str_literal(e.dtype) + (", " if e.args else "")
                tail = ")"
            elif short in DTYPE_LAST_OPS:
                tail = (", " if e.args else "") + str_literal(e.dtype) + ")"
            else:
                tail = ")"
        elif short.isidentifier():
            # a dtype its T call would not give it: the call node itself
            head = f"{p}.Call({str_literal(e.dtype)}, {str_literal(op)}, ["
            tail = "])"
        else:
            # an op outside the T namespace: name it and its dtype explicitly
            head = f"{p}.call_intrin({str_literal(e.dtype)}, {str_literal(op)}"
            head += ", " if e.args else ""
            tail = ")"
        kids = list(e.args)
        return kids, lambda args: (head + ", ".join(a[0] for a in args) + tail, ATOM)


def _dtype_unsaid(e: Call, short: str) -> bool:
    """Whether ``T.<short>(...)`` would make a call of another dtype than
    ``e``'s: an intrinsic whose dtype is fixed, or that of an argument."""
    from ..tir.intrinsics import ALIASES, INTRINSICS

    if short == "reinterpret" and len(e.args) == 1:
        # T.reinterpret refuses a change of size, which a T.Call may hold
        arg = e.args[0].dtype
        return arg.bits * arg.lanes != e.dtype.bits * e.dtype.lanes
    entry = INTRINSICS.get(ALIASES.get(short, short))
    if entry is None or entry.dtype in ("first", "last"):
        return False
    if entry.dtype.startswith("arg:"):
        k = int(entry.dtype[4:])
        return k < len(e.args) and e.args[k].dtype != e.dtype
    return e.dtype != entry.dtype


def _call_fmt(callee: str):
    head = callee + "("

    def fmt(args):
        return head + ", ".join(a[0] for a in args) + ")", ATOM
    return fmt


# --------------------------------------------------------------------------
# buffer indices: a ramp with a constant stride prints as a slice


def index_plan(indices) -> tuple[list, list]:
    """The expressions to render for ``indices`` and, per index, how many of
    them it uses: 1 for a plain index, 2 (start, stop) or 3 (with step)
    for a ramp printed as a slice."""
    kids: list = []
    shape: list[int] = []
    for index in indices:
        if type(index) is Ramp and type(index.stride) is IntImm:
            stride = index.stride
            total = index.lanes * stride.value
            if _fits(stride.dtype, total):
                kids.append(index.base)
                kids.append(end_of(index.base, IntImm(stride.dtype, total)))
                if stride.value != 1:
                    kids.append(stride)
                    shape.append(3)
                else:
                    shape.append(2)
                continue
        kids.append(index)
        shape.append(1)
    return kids, shape


def _fits(dtype: DataType, value: int) -> bool:
    return dtype.min_value() <= value <= dtype.max_value()


def join_indices(shape: list[int], args: list[Rendered]) -> str:
    """Index text from the rendered pieces laid out by :func:`index_plan`."""
    if not shape:
        return "()"
    parts = []
    i = 0
    for n in shape:
        if n == 1:
            parts.append(args[i][0])
        elif n == 2:
            parts.append(f"{args[i][0]}:{args[i + 1][0]}")
        else:
            parts.append(f"{args[i][0]}:{args[i + 1][0]}:{args[i + 2][0]}")
        i += n
    return ", ".join(parts)


def target_text(t: TargetConfig, exprs: ExprRenderer) -> str:
    """``T.target({...})``: the target's configuration, as TVM prints it."""
    return f"{exprs.p}.target({dict_text(t.config, exprs)})"


def comm_reducer_text(r, exprs: ExprRenderer) -> str:
    """``T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)])``; a tuple of
    results for a combiner of several values. The caller has bound the
    lambda's variables."""
    params = ", ".join(exprs.names.var(v) for v in (*r.lhs, *r.rhs))
    results = [exprs.expr(e) for e in r.result]
    body = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
    identity = "[" + ", ".join(exprs.expr(e) for e in r.identity_element) + "]"
    return f"{exprs.p}.comm_reducer(lambda {params}: {body}, {identity})"


# --------------------------------------------------------------------------
# attribute and annotation values


def value_text(value, exprs: ExprRenderer) -> str:
    """A function attribute or annotation value: strings, numbers, bools
    (``T.bool(True)``), None, nested lists and dicts, and IR nodes."""
    if isinstance(value, bool):
        return f"{exprs.p}.bool({value})"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_literal(value)
    if isinstance(value, str):
        return str_literal(value)
    if value is None:
        return "None"
    if isinstance(value, (PVector, list, tuple)):
        return "[" + ", ".join(value_text(v, exprs) for v in value) + "]"
    if isinstance(value, (PMap, dict)):
        return dict_text(value, exprs)
    if isinstance(value, PrimExpr):
        return exprs.expr(value)
    if isinstance(value, Buffer):
        return exprs.names.buffer(value)
    if isinstance(value, TargetConfig):
        return target_text(value, exprs)
    if isinstance(value, Node):
        raise NodeError(f"cannot print a {type(value).__name__} as an attribute value")
    raise NodeError(f"cannot print the attribute value {value!r} ({type(value).__name__})")


def dict_text(mapping, exprs: ExprRenderer) -> str:
    """``{"a": 1, "b": T.bool(True)}`` with string keys in sorted order (other
    keys after them, ordered by their text), so the text does not depend on
    the map's internal order."""
    items = []
    for key in mapping:
        if isinstance(key, str):
            items.append((0, key, str_literal(key), mapping[key]))
        else:
            text = value_text(key, exprs)
            items.append((1, text, text, mapping[key]))
    items.sort(key=lambda item: (item[0], item[1]))
    return "{" + ", ".join(f"{k}: {value_text(v, exprs)}" for _, _, k, v in items) + "}"


__all__ = [
    "ExprRenderer", "str_literal", "float_literal", "int_literal", "tvm_folds",
    "end_of", "is_zero", "is_one", "wrap", "index_plan", "join_indices", "value_text",
    "dict_text", "comm_reducer_text", "target_text", "ATOM",
]
