"""Scoped statements of lowered code and lets: ``T.decl_buffer``,
``T.allocate``, ``T.attr``, ``T.launch_thread``, ``T.Assert``,
``T.LetStmt``/``T.let``/``T.Let`` and ``T.evaluate``.

A scoped statement returns a :class:`~tirfun.script.parser_values.Scope`: its
body is the ``with`` body, or the rest of the current body when written
without ``with``. :data:`HANDLERS` maps each name to its signature and
handler.
"""

from __future__ import annotations

import attrs

from ..nodes import (
    AssertStmt, AttrStmt, Buffer, BufferRegion, DeclBuffer, Evaluate, IntImm, IterVar,
    IterVarType, Let, LetStmt, PrimExpr, Range, StringImm, Var, const,
)
from ..nodes.reducer import CommReducer
from ..nodes.stmt import Allocate
from ..nodes.target import TargetConfig
from .parser_args import (
    attr_dict, sig, to_bool_expr, to_dtype, to_int_expr, to_shape, to_str,
)
from .parser_decls import _BUFFER_PARAMS, buffer_maker
from .parser_values import NewVar, Scope, describe


def _decl_buffer(ip, node, a):
    make = buffer_maker(ip, a, what="T.decl_buffer")

    def open_(name):
        buf_name = ip.namer.fresh(name or "buffer")
        if a.data is not None:
            buffer = make(buf_name)
            return buffer, lambda body: DeclBuffer(buffer, body)
        data = Var(ip.namer.fresh(f"{buf_name}_data"), "handle")
        buffer = attrs.evolve(make(buf_name), data=data)

        def wrap(body):
            return Allocate(data, buffer.dtype, list(buffer.shape), IntImm("bool", 1),
                            DeclBuffer(buffer, body), scope=buffer.storage_scope)
        return buffer, wrap

    return Scope("T.decl_buffer", open_)


def _allocate(ip, node, a):
    extents = to_shape(ip, a.extents, a.node("extents"), "the extents of T.allocate")
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    scope = to_str(ip, a.scope, a.node("scope"), "scope") or "global"
    cond = IntImm("bool", 1) if a.condition is None else to_bool_expr(ip, a.condition, a.node("condition"), "the condition")
    annotations = attr_dict(ip, a.annotations, a.node("annotations"), "annotations")

    def open_(name):
        var = Var(ip.namer.fresh(name or "buf"), "handle")
        return var, lambda body: Allocate(var, dtype, extents, cond, body, annotations, scope)

    return Scope("T.allocate", open_)


def _attr(ip, node, a):
    key = to_str(ip, a.attr_key, a.node("attr_key"), "the attribute key")
    target = a.node_
    if isinstance(target, str):
        target = StringImm(target)
    elif isinstance(target, (bool, int, float)):
        target = const(target)
    elif not isinstance(target, (PrimExpr, Buffer, IterVar, BufferRegion, CommReducer,
                                 TargetConfig)):
        raise ip.fail(a.node("node_"), f"T.attr cannot annotate {describe(target)}")
    value = a.value
    value = StringImm(value) if isinstance(value, str) else ip.as_expr(value, a.node("value"))

    def open_(name):
        if name is not None:
            raise ip.fail(node, "T.attr binds no value to a name")
        return None, lambda body: AttrStmt(target, key, value, body)

    return Scope("T.attr", open_)


def _launch_thread(ip, node, a):
    thread = a.thread
    extent = a.extent
    declared = None
    if isinstance(thread, NewVar) and thread.thread_tag is not None:
        # T.launch_thread(T.env_thread("blockIdx.x"), n): declared in place,
        # named by ``as`` (or after the tag)
        declared, thread = thread, thread.thread_tag
    if isinstance(thread, Var):
        tag = ip.func.env_threads.get(thread)
        if tag is None:
            raise ip.fail(a.node("thread"), f"{thread.name} is not declared with T.env_thread")
        dtype = thread.dtype
    else:
        tag = to_str(ip, thread, a.node("thread"), "the thread of T.launch_thread")
        dtype = None if declared is None else declared.dtype
    extent = to_int_expr(ip, extent, a.node("extent"), "the extent of T.launch_thread", dtype)
    if isinstance(thread, Var):
        first = ip.func.thread_extents.setdefault(thread, extent)
        from ..analysis.arith.linear import prove_equal

        if not prove_equal(first, extent):
            raise ip.fail(a.node("extent"), f"inconsistent extents for the environment thread "
                          f"{thread.name}: {first.script()} and {extent.script()}")
    key = "virtual_thread" if tag.startswith("vthread") else "thread_extent"

    def open_(name):
        if isinstance(thread, Var):
            var = thread
        else:
            var = Var(ip.namer.fresh(name or tag.replace(".", "_")),
                      extent.dtype if declared is None else declared.dtype)
            if declared is not None:
                ip.func.env_threads[var] = tag
        iv = IterVar(Range(IntImm(extent.dtype, 0), extent), var, IterVarType.ThreadIndex, tag)
        return var, lambda body: AttrStmt(iv, key, extent, body)

    return Scope("T.launch_thread", open_)


def _assert(ip, node, a):
    cond = to_bool_expr(ip, a.condition, a.node("condition"), "the assertion")
    msg = to_str(ip, a.message, a.node("message"), "the assertion message")

    def open_(name):
        if name is not None:
            raise ip.fail(node, "T.Assert binds no value to a name")
        return None, lambda body: AssertStmt(cond, StringImm(msg), body)

    return Scope("T.Assert", open_)


def _let_stmt(ip, node, a):
    value = ip.as_expr(a.value, a.node("value"))
    annotation = a.type_annotation
    given_var = a.var
    declared = None
    if isinstance(given_var, NewVar) and given_var.thread_tag is None:
        # var=T.handle("float32"): a new variable of that type, named by ``as``
        declared, given_var = given_var, None
    if given_var is not None and not isinstance(given_var, Var):
        raise ip.fail(a.node("var"), f"var= must be a variable, got {describe(given_var)}")
    dtype = value.dtype if declared is None else declared.dtype
    if annotation is not None:
        dtype = to_dtype(ip, annotation, a.node("type_annotation"))

    def open_(name):
        var = given_var if given_var is not None else \
            Var(ip.namer.fresh(name or "v"), dtype, None if declared is None else declared.pointee)
        return var, lambda body: LetStmt(var, ip.cast_to(value, var.dtype, a.node("value")), body)

    return Scope("T.LetStmt", open_)


def _let(ip, node, a):
    if not isinstance(a.v, Var):
        raise ip.fail(a.node("v"), f"T.let binds a variable, got {describe(a.v)}")
    value = ip.cast_to(ip.as_expr(a.value, a.node("value")), a.v.dtype, a.node("value"))
    if a.body is not None:
        return Let(a.v, value, ip.as_expr(a.body, a.node("body")))
    var = a.v
    return Scope("T.let", lambda name: (None, lambda body: LetStmt(var, value, body)))


def _let_expr(ip, node, a):
    where = a.where
    if not isinstance(where, dict) or len(where) != 1:
        raise ip.fail(a.node("where"), "T.Let needs where= with exactly one {var: value} entry")
    (var, value), = where.items()
    if not isinstance(var, Var):
        raise ip.fail(a.node("where"), f"T.Let binds a variable, got {describe(var)}")
    value = ip.cast_to(ip.as_expr(value, a.node("where")), var.dtype, a.node("where"))
    return Let(var, value, ip.as_expr(a.expr, a.node("expr")))


def _evaluate(ip, node, a):
    value = a.value
    if isinstance(value, str):
        value = StringImm(value)
    elif isinstance(value, bool):
        value = IntImm("bool", int(value))
    return Evaluate(ip.as_expr(value, a.node("value")))


HANDLERS: dict = {
    "T.decl_buffer": (sig("shape", *_BUFFER_PARAMS[:5], ("align", 0), ("offset_factor", 0),
                          ("buffer_type", ""), ("axis_separators", None)), _decl_buffer),
    "T.evaluate": (sig("value"), _evaluate),
    "T.attr": (sig("node_", "attr_key", "value"), _attr),
    "T.launch_thread": (sig("thread", "extent"), _launch_thread),
    "T.allocate": (sig("extents", "dtype", ("scope", "global"), ("condition", None), ("annotations", None)),
                   _allocate),
    "T.Assert": (sig("condition", "message"), _assert),
    "T.LetStmt": (sig("value", ("type_annotation", None), kwonly=(("var", None),)), _let_stmt),
    "T.let": (sig("v", "value", ("body", None)), _let),
    "T.Let": (sig("expr", "where"), _let_expr),
}
