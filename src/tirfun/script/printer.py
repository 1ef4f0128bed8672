"""The TVMScript printer: any node as text laid out the way TVM prints it.

``to_script(node)`` is what ``node.script()`` and ``repr(node)`` return:

* an ``IRModule`` prints as an ``@I.ir_module`` class under a two-line import
  header (``main`` last, the other functions by name, a blank line after
  each function);
* a ``PrimFunc`` prints as ``@T.prim_func`` under the ``tir`` import line;
* statements, expressions, buffers, ranges and regions print on their own,
  without a header, naming free variables without declaring them.

Functions follow TVM's choices: a handle parameter used only through its
buffer prints as ``A: T.Buffer((8,), "float32")``, otherwise as
``a: T.handle`` with ``A = T.match_buffer(a, ...)`` in the body; the
``global_symbol`` attribute is left out when it equals the function's name,
and a function without one is ``@T.prim_func(private=True)``; the implicit
root block prints as the comment ``# with T.block("root"):`` followed by its
buffer allocations.
"""

from __future__ import annotations

import functools
import keyword

import attrs
from pyrsistent import pmap, pvector

from ..errors import NodeError
from ..nodes import (
    Block, BlockRealize, Buffer, BufferRegion, FloatImm, IntImm, IRModule, IterVar,
    MatchBufferRegion, PrimExpr, PrimFunc, Range, SeqStmt, Stmt, StringImm, Var,
)
from ..nodes.base import Node
from ..nodes.dtype import DataType
from ..nodes.reducer import CommReducer
from ..nodes.target import TargetConfig
from .printer_exprs import dict_text, is_one, str_literal
from .printer_stmts import ScriptWriter, contains_block, has_vars, shape_text

_MODULE_NAME = "Module"
_LEAVES = (IntImm, FloatImm, StringImm)
_PVECTOR = type(pvector())
_PMAP = type(pmap())


def to_script(node, *, tir_prefix: str = "T", ir_prefix: str = "I", indent_spaces: int = 4,
              name: str | None = None) -> str:
    """``node`` as TVMScript text.

    ``tir_prefix`` and ``ir_prefix`` name the ``tir`` and ``ir`` namespaces
    in the output (``T`` and ``I``); ``indent_spaces`` is the indentation
    step; ``name`` names a module's class or a function's ``def`` (as
    TVM's ``script(name=...)``). The text is deterministic: the same node
    always prints the same.
    """
    if isinstance(node, IRModule):
        return _module_script(node, tir_prefix, ir_prefix, indent_spaces, name or _MODULE_NAME)
    if isinstance(node, PrimFunc):
        lines = _function_lines(node, name or _function_name(node), tir_prefix, indent_spaces,
                                ir_prefix=ir_prefix)
        header = [f"# from tirfun.script import tir as {tir_prefix}", ""]
        if any(f"{ir_prefix}.GlobalVar(" in line for line in lines):
            header.insert(0, f"# from tirfun.script import ir as {ir_prefix}")
        return _finish(header + lines)
    w = ScriptWriter(prefix=tir_prefix, indent_spaces=indent_spaces)
    if isinstance(node, PrimExpr):
        return w.exprs.expr(node)
    if isinstance(node, SeqStmt):
        w.body(node, 0)
    elif isinstance(node, Stmt):
        w.stmt(node, 0)
    elif isinstance(node, Buffer):
        w.emit(0, f"{node.name} = {w.buffer_call(node, 'Buffer', [])}")
    elif isinstance(node, BufferRegion):
        w.emit(0, w.region_text(node))
    elif isinstance(node, MatchBufferRegion):
        w.emit(0, w.match_text(node))
    elif isinstance(node, Range):
        w.emit(0, w.range_text(node))
    elif isinstance(node, IterVar):
        w.emit(0, w.iter_var_text(node))
    elif isinstance(node, (CommReducer, TargetConfig)):
        w.emit(0, w.attr_node_text(node))
    else:
        raise NodeError(f"cannot print a {type(node).__name__} as TVMScript")
    return _finish(w.lines)


def _finish(lines: list[str]) -> str:
    # TVM's printer drops trailing whitespace, the blank line after the last
    # function included
    return "\n".join(lines).rstrip()


# --------------------------------------------------------------------------
# modules


def _module_order(mod: IRModule) -> list[str]:
    """TVM's order: every function by name, ``main`` last."""
    names = sorted(mod.functions)
    if "main" in mod.functions:
        names.remove("main")
        names.append("main")
    return names


def _module_script(mod: IRModule, p: str, ip: str, indent_spaces: int, class_name: str = _MODULE_NAME) -> str:
    step = " " * indent_spaces
    body: list[str] = []
    if mod.attrs:
        w = ScriptWriter(prefix=p, indent_spaces=indent_spaces)
        body.append(f"{step}{ip}.module_attrs({dict_text(mod.attrs, w.exprs)})")
    for name in _module_order(mod):
        for line in _function_lines(mod.functions[name], name, p, indent_spaces, class_name):
            body.append(step + line)
        body.append("")  # TVM leaves a blank line after every function
    if not body:
        body.append(f"{step}pass")
    header = [f"# from tirfun.script import ir as {ip}"]
    if mod.functions or any(f"{p}." in line for line in body):
        header.append(f"# from tirfun.script import tir as {p}")
    header.append("")
    return _finish(header + [f"@{ip}.ir_module", f"class {class_name}:"] + body)


# --------------------------------------------------------------------------
# functions


def _function_name(func: PrimFunc) -> str:
    """A function printed on its own is named by its global symbol, else ``main``."""
    symbol = _global_symbol(func)
    usable = symbol is not None and symbol.isidentifier() and not keyword.iskeyword(symbol)
    return symbol if usable else "main"


def _global_symbol(func: PrimFunc) -> str | None:
    value = func.attrs.get("global_symbol")
    if isinstance(value, StringImm):
        value = value.value
    return value if isinstance(value, str) else None


def _avoid_reserved(func: PrimFunc, reserved: frozenset[str]) -> PrimFunc:
    """``func`` with bound names that the printed text itself relies on
    (the namespace prefixes, ``range``) renamed, as TVM's printer does:
    a buffer called ``T`` would otherwise shadow ``T.block`` on reparsing.
    The new names are the first free ``name_1``, ``name_2``..."""
    from ..analysis.traversal import rename, walk

    used: set[str] = set()
    for node in walk(func):
        if isinstance(node, (Var, Buffer)):
            used.add(node.name)
    clashing = sorted(used & reserved)
    if not clashing:
        return func
    mapping: dict[str, str] = {}
    for old in clashing:
        k = 1
        while f"{old}_{k}" in used or f"{old}_{k}" in reserved:
            k += 1
        mapping[old] = f"{old}_{k}"
        used.add(mapping[old])
    return rename(func, mapping)


def _function_lines(func: PrimFunc, name: str, p: str, indent_spaces: int,
                    module_name: str | None = None, ir_prefix: str = "I") -> list[str]:
    """The decorator, the ``def`` line and the body of ``func``, unindented.
    ``module_name`` is the class a call of a module function is written
    through (``Module.sub(...)``); None outside a module."""
    func = _avoid_reserved(func, frozenset((p, "I", "range")))
    lines, redeclared = _print_function(func, name, p, indent_spaces, module_name, ir_prefix,
                                        frozenset())
    if redeclared:
        # a name nothing binds, used in sibling scopes, was declared in each
        # of them (and would parse back as several); TVM declares it once,
        # where its uses meet: print again, declaring those names there
        lines, _ = _print_function(func, name, p, indent_spaces, module_name, ir_prefix,
                                   redeclared)
    return lines


def _print_function(func: PrimFunc, name: str, p: str, indent_spaces: int, module_name: str | None,
                    ir_prefix: str, hoisted: frozenset) -> tuple[list[str], frozenset]:
    """:func:`_function_lines` with the free names ``hoisted`` declared
    where their uses meet; also returns the free names it declared more
    than once."""
    w = ScriptWriter(prefix=p, indent_spaces=indent_spaces, declare_free=True, hoisted=hoisted)
    w.exprs.module_name = module_name
    w.exprs.ir_prefix = ir_prefix
    sugared = _sugared_params(func)

    # signature: T.Buffer annotations where TVM sugars them, else the var's type
    params = []
    for var in func.params:
        if var in sugared:
            buf = func.buffer_map[var]
            shape = shape_text(buf.shape, w.exprs.expr)  # constant: declares nothing
            params.append(f"{buf.name}: {p}.Buffer({shape}, {str_literal(buf.dtype)})")
            w.define_buffer(buf)
            if buf.data == var:
                w.define_var(var)
                w.spelling[var] = f"{buf.name}.data"
        else:
            params.append(f"{var.name}: {w.var_type(var)}")
            w.define_var(var)

    # attributes; the global symbol goes without saying when it is the name
    if func.attrs:
        shown = func.attrs
        if _global_symbol(func) == name:
            shown = shown.discard("global_symbol")
        if shown:
            w.emit(1, f"{p}.func_attr({dict_text(shown, w.exprs)})")

    # parameter buffers TVM does not sugar
    for var in func.params:
        buf = func.buffer_map.get(var)
        if buf is not None and var not in sugared:
            decl = w.buffer_call(buf, "match_buffer", [var.name])
            w.define_buffer(buf)
            w.emit(1, f"{buf.name} = {decl}")

    root = _implicit_root(func.body)
    if root is not None:
        w.emit(1, f'# with {p}.block("root"):')
        for buf in root.alloc_buffers:
            w.alloc_line(buf, 1)
        w.body(root.body, 1)
    else:
        w.body(func.body, 1)

    decorator = f"@{p}.prim_func" if "global_symbol" in func.attrs else f"@{p}.prim_func(private=True)"
    ret = _ret_annotation(func.ret_type, p)
    return [decorator, f"def {name}({', '.join(params)}){ret}:"] + w.lines, w.redeclared()


def _ret_annotation(ret_type, p: str) -> str:
    if ret_type is None:
        return ""
    try:
        return f" -> {p}.{DataType(ret_type)}"
    except NodeError:
        raise NodeError(f"cannot print the function return type {ret_type!r}") from None


def _sugared_params(func: PrimFunc) -> set[Var]:
    """The handle parameters TVM prints as ``A: T.Buffer(...)``: used nowhere
    but in the buffer map, viewed by a buffer with a constant shape and every
    other field at its default."""
    handles = {v.name: v for v in func.params if v in func.buffer_map}
    if not handles:
        return set()
    used = _mentioned(handles, [func.body, *func.buffer_map.values()])
    counts: dict[str, int] = {}
    for v in func.params:
        counts[v.name] = counts.get(v.name, 0) + 1
    out = set()
    for name, var in handles.items():
        buf = func.buffer_map[var]
        # a buffer whose data pointer is the parameter itself: TVM's
        # ``A: T.Buffer`` whose ``A.data`` the body uses
        own_data = buf.data == var
        if (own_data or name not in used) and counts[name] == 1 and _is_simple(buf, own_data):
            out.add(var)
    return out


def _mentioned(names, roots) -> set[str]:
    """Which of ``names`` some variable under ``roots`` has (TVM counts every
    occurrence, buffer fields included). Each shared subtree, such as the
    buffer behind every load of it, is visited once."""
    found: set[str] = set()
    seen: set[int] = set()
    stack = list(roots)
    while stack and len(found) < len(names):
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        t = type(node)
        if t is Var:
            if node.name in names:
                found.add(node.name)
            continue
        if t in _LEAVES:
            continue
        for field in _fields(t):
            value = getattr(node, field)
            vt = type(value)
            if vt is _PVECTOR:
                stack.extend(v for v in value if isinstance(v, Node))
            elif vt is _PMAP:
                stack.extend(v for kv in value.items() for v in kv if isinstance(v, Node))
            elif isinstance(value, Node):
                stack.append(value)
    return found


@functools.cache
def _fields(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


def _is_simple(buf: Buffer, own_data: bool = False) -> bool:
    """A buffer ``T.Buffer(shape, dtype)`` describes completely: constant
    shape, every other field at tirfun's default (``own_data``: its data
    pointer is the parameter)."""
    return (not buf.strides and not any(has_vars(e) for e in buf.shape)
            and buf.elem_offset is None and buf.storage_scope == "global"
            and (buf.data is None or own_data) and buf.data_alignment == 64 and buf.offset_factor == 0
            and not buf.axis_separators and buf.buffer_type == "default")


def _implicit_root(body: Stmt) -> Block | None:
    """The root block TVM leaves implicit (printed as a comment), or None.

    It is a realize with no bindings and no predicate of a block named
    ``root`` that carries nothing but allocations, and it holds either
    allocations, a block with iteration variables, or blocks below some
    other statement. The parser wraps exactly such bodies back into a root
    block, so the choice is invisible after a round trip.
    """
    if type(body) is not BlockRealize or body.iter_values or not is_one(body.predicate):
        return None
    root = body.block
    if (root.name_hint != "root" or root.iter_vars or root.annotations or root.match_buffers
            or root.reads or root.writes or root.init is not None):
        return None
    inner = root.body
    if type(inner) is SeqStmt and len(inner.seq) == 1:
        inner = inner.seq[0]  # prints as its one statement
    if root.alloc_buffers:
        return root
    if type(inner) is BlockRealize:
        return root if inner.block.iter_vars else None
    return root if contains_block(inner) else None


__all__ = ["to_script"]
