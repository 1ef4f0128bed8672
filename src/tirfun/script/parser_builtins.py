"""The functions of the script namespaces, as the interpreter runs them.

:data:`BUILTINS` maps a dotted name (``"T.axis.spatial"``) to a
:class:`~tirfun.script.parser_args.Signature` and a handler
``handler(ip, node, args)``; the interpreter binds a call's arguments to the
signature and calls the handler with itself, the call's syntax node and the
bound :class:`~tirfun.script.parser_args.Args`. The handlers live by job in
:mod:`~tirfun.script.parser_decls` (buffers, variables, function
attributes), :mod:`~tirfun.script.parser_loops` (loops and blocks),
:mod:`~tirfun.script.parser_lowered` (scoped statements and lets),
:mod:`~tirfun.script.parser_ops` (expressions) and
:mod:`~tirfun.script.parser_intrinsics` (TVM's call intrinsics, ``T.target``,
``T.comm_reducer``, and the names of TVM's ``T`` not supported yet).

:func:`resolve` answers ``namespace.attribute`` lookups, so that an unknown
``T.`` name is reported where it is written.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import NodeError
from ..nodes.dtype import DataType
from . import (
    parser_decls, parser_extra, parser_frames, parser_intrinsics, parser_loops, parser_lowered,
    parser_ops,
)
from .parser_args import Signature, sig
from .parser_values import Builtin, DTypeCtor, MetaVar, Namespace


def _prim_func_decorator(ip, node, a):
    return Builtin("T.prim_func")


def _meta_var(ip, node, a):
    return MetaVar(a.value)


def _global_var(ip, node, a):
    """``I.GlobalVar("f")``: how TVM prints a module function called from a
    function printed alone. Called, it is TVM's ``call_tir``, whose type
    is void when nothing declares the callee's return."""
    from ..nodes import GlobalVar
    from ..errors import NodeError
    from .parser_values import Callee

    if not isinstance(a.name_hint, str):
        raise ip.fail(a.node("name_hint"), "I.GlobalVar takes the function's name as a string")
    try:
        return Callee(GlobalVar(a.name_hint), DataType("void"))
    except NodeError as err:
        raise ip.fail(a.node("name_hint"), str(err)) from None


def _op_get(ip, node, a):
    """``tvm.ir.Op.get("tir.tvm_call_packed")``: an operator, which a
    ``T.Call`` names by this string."""
    if not isinstance(a.op_name, str):
        raise ip.fail(a.node("op_name"), "Op.get takes the operator's name as a string")
    return a.op_name


def _tir_const(ip, node, a):
    """``tvm.tir.const(value, dtype)``: the constant (of the literal's
    default type without a dtype), as ``T.<dtype>(value)`` makes it."""
    from ..nodes import const
    from .parser_args import to_dtype

    value = ip.plain(a.value, a.node("value"))
    dtype = None if a.dtype is None else to_dtype(ip, a.dtype, a.node("dtype"))
    try:
        return const(value, dtype)
    except NodeError as err:
        raise ip.fail(node, str(err)) from None


def _not_here(name: str):
    def handler(ip, node, a):
        raise ip.fail(node, f"{name} cannot be called inside a TVMScript function")
    return handler


BUILTINS: dict[str, tuple[Signature, Callable]] = {
    "T.prim_func": (sig(("func", None), ("private", False), ("check_well_formed", True)), _prim_func_decorator),
    "I.ir_module": (sig("cls"), _not_here("I.ir_module")),
    "I.module_attrs": (sig("attrs"), _not_here("I.module_attrs")),
    "I.GlobalVar": (sig("name_hint"), _global_var),
    "T.meta_var": (sig("value"), _meta_var),
    # TVM's own names a script may use through ``import tvm``
    "tirfun.ir.Op.get": (sig("op_name"), _op_get),
    "tirfun.tir.const": (sig("value", ("dtype", None)), _tir_const),
    "tirfun.target.Target": (sig("target_config", ("host", None)), parser_intrinsics.target_handler),
    "T.macro": (sig(("func", None), ("hygienic", True)), _not_here("T.macro")),
    **parser_decls.HANDLERS,
    **parser_loops.HANDLERS,
    **parser_lowered.HANDLERS,
    **parser_ops.HANDLERS,
    **parser_intrinsics.HANDLERS,
    **parser_extra.HANDLERS,
    **parser_frames.HANDLERS,
}


ALIASES = {
    "T.sblock": "T.block",
    "T.axis.S": "T.axis.spatial",
    "T.axis.R": "T.axis.reduce",
    "T.select": "T.Select",
    "T.buffer_decl": "T.Buffer",
    "T.ramp": "T.Ramp",
    "T.broadcast": "T.Broadcast",
    **parser_frames.ALIASES,
}


NAMESPACES = {"T", "T.axis", "I", "script", "tirfun", "tirfun.ir", "tirfun.ir.Op", "tirfun.target",
              "tirfun.tir"}


SCALAR_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64", "bfloat16")


def resolve(path: str, attr: str):
    """The value of ``<path>.<attr>`` in a script namespace, or None."""
    full = f"{path}.{attr}"
    full = ALIASES.get(full, full)
    if full in BUILTINS:
        return Builtin(full)
    if full in NAMESPACES:
        return Namespace(full)
    if path == "T.CallEffectKind":
        return parser_frames.CALL_EFFECT_KINDS.get(attr)
    if path == "T":
        if attr == "boolean":
            return DTypeCtor(DataType("bool"))
        if attr == "void":
            return DTypeCtor(DataType("void"))
        if attr == "CallEffectKind":
            return Namespace("T.CallEffectKind")
        if attr in SCALAR_DTYPES or _is_dtype_name(attr):
            return DTypeCtor(DataType(attr))
    if path == "script":
        return {"tir": Namespace("T"), "ir": Namespace("I"), "ir_module": Builtin("I.ir_module"),
                "prim_func": Builtin("T.prim_func")}.get(attr)
    if path == "tirfun" and attr == "script":
        return Namespace("script")
    if path == "tirfun.tir":
        # tvm.tir.exp, tvm.tir.Cast...: TVM's T spells tvm.tir's functions alike
        return resolve("T", attr)
    return None


def _is_dtype_name(attr: str) -> bool:
    if attr in ("handle", "void"):
        return False
    try:
        DataType(attr)
    except NodeError:
        return False
    return True


def names_of(path: str) -> list[str]:
    """Every attribute of a namespace, for suggestions in messages."""
    prefix = path + "."
    out = {k[len(prefix):].split(".")[0] for k in list(BUILTINS) + list(ALIASES) if k.startswith(prefix)}
    if path == "T":
        out.update(SCALAR_DTYPES)
        out.add("axis")
    return sorted(out)
