"""Interpreting the statements of one ``@T.prim_func`` into a PrimFunc.

:class:`FunctionInterpreter` walks the body of a function definition,
keeping the state of one parse (scopes, unique names, the frames of open
blocks and loops) and builds the nodes bottom-up. Statements map to TIR as
TVMScript defines:

* ``for`` over ``range``/``T.serial``/.../``T.grid`` builds loops;
* ``with`` opens a block, a reduction ``init``, or a scoped statement
  (``T.attr``, ``T.launch_thread``, ``T.allocate``, ``T.decl_buffer``,
  ``T.Assert``, ``T.LetStmt``);
* ``A[i] = v`` stores; ``x = T.alloc_buffer(...)``, ``vi = T.axis.*(...)``,
  ``n = T.int32()`` declare; ``x = value`` and ``x: T.int32 = value`` bind a
  let, and the scoped statements written without ``with`` (``buf =
  T.allocate(...)``, ``T.attr(...)``, ``assert``) take the rest of the
  current body as their body, as TVM's printer writes them;
* ``if`` on an expression builds ``IfThenElse``; on a value known while
  parsing it keeps only the branch taken.

Blocks without ``T.reads``/``T.writes`` get them inferred once the function
is complete (:func:`tirfun.analysis.regions.fill_regions`), after the
implicit root block has been added where TVM adds it.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import attrs

from ..errors import NodeError, ParseError, TirfunError
from ..analysis.block_names import unique_block_name
from ..nodes import (
    AssertStmt, Block, BlockRealize, Buffer, BufferStore, Evaluate, For, IfThenElse, IntImm,
    IterVar, LetStmt, PrimExpr, PrimFunc, Range, SeqStmt, Stmt, StringImm, Var, While, const,
)
from ..nodes.dtype import DataType
from ..tir import op as tir_op
from .parser_args import to_bool_expr, to_branch_condition, to_mask, to_str
from .parser_exprs import ExprEvaluator, _is_number
from .parser_scope import Namer, Scopes
from .parser_values import (
    BlockHeader, Builtin, DTypeCtor, InitHeader, LoopSpec, MetaVar, NewBuffer, NewIterVar, NewVar,
    Scope, SlicedAccess, article, describe,
)

_UNSUPPORTED_STMTS = {
    ast.Try: ("try statements are not supported in TVMScript", ""),
    ast.ClassDef: ("class definitions inside a function are not supported in TVMScript", ""),
    ast.FunctionDef: ("function definitions inside a function are not supported in TVMScript", ""),
    ast.AsyncFunctionDef: ("function definitions inside a function are not supported in TVMScript", ""),
    ast.Import: ("import statements inside a function are not supported in TVMScript",
                 "import at the top of the file"),
    ast.ImportFrom: ("import statements inside a function are not supported in TVMScript",
                     "import at the top of the file"),
    ast.Delete: ("del statements are not supported in TVMScript", ""),
    ast.Global: ("global statements are not supported in TVMScript", ""),
    ast.Nonlocal: ("nonlocal statements are not supported in TVMScript", ""),
    ast.Raise: ("raise statements are not supported in TVMScript", "use assert or T.Assert"),
    ast.Break: ("break statements are not supported in TVMScript", ""),
    ast.Continue: ("continue statements are not supported in TVMScript", ""),
    ast.AsyncFor: ("async statements are not supported in TVMScript", ""),
    ast.AsyncWith: ("async statements are not supported in TVMScript", ""),
    ast.Match: ("match statements are not supported in TVMScript", ""),
}
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STMTS[ast.TryStar] = _UNSUPPORTED_STMTS[ast.Try]


@attrs.define
class BlockBuilder:
    """The parts of a block collected while its body is interpreted."""

    name: str
    realize: bool
    node: ast.AST
    iter_vars: list = attrs.Factory(list)
    iter_values: list = attrs.Factory(list)
    reads: list | None = None
    writes: list | None = None
    predicate: PrimExpr | None = None
    init: Stmt | None = None
    init_seen: bool = False
    alloc_buffers: list = attrs.Factory(list)
    match_buffers: list = attrs.Factory(list)
    annotations: dict | None = None


@attrs.define
class FuncState:
    """What a function collects besides its body."""

    name: str
    private: bool
    params: list = attrs.Factory(list)
    param_set: set = attrs.Factory(set)
    buffer_map: dict = attrs.Factory(dict)
    func_attrs: dict = attrs.Factory(dict)
    root_allocs: list = attrs.Factory(list)
    env_threads: dict = attrs.Factory(dict)
    thread_extents: dict = attrs.Factory(dict)
    block_nodes: dict = attrs.Factory(dict)
    written_block_names: set = attrs.Factory(set)
    renamed_blocks: dict = attrs.Factory(dict)
    # parameters and allocations whose ``.data`` (or ``.access_ptr``) the body uses
    data_of_params: set = attrs.Factory(set)
    pending: dict = attrs.Factory(dict)
    ret_type: Any = None
    # te variables (by id) named by an assignment -> the name each takes
    te_names: dict = attrs.Factory(dict)


def _return_annotation(ev, node: ast.expr):
    """The dtype a ``->`` annotation names (None for ``-> None``)."""
    value = ev.eval(node)
    if value is None:
        return None
    if isinstance(value, DTypeCtor):
        return value.dtype
    raise ev.fail(node, f"unsupported return annotation: {describe(value)}",
                  hint="use -> None or a scalar type such as -> T.int32")


def return_dtype(ev, fdef: ast.FunctionDef) -> DataType:
    """The dtype of a call of the function ``fdef``: its return annotation,
    ``void`` without one (TVM's ``call_tir``)."""
    dtype = None if fdef.returns is None else _return_annotation(ev, fdef.returns)
    return DataType("void") if dtype is None else dtype


@attrs.frozen
class _Open:
    """A concise scope: the rest of the body goes inside ``wrap``."""

    wrap: Callable[[Stmt], Stmt]
    node: ast.AST


def seq(stmts: list[Stmt]) -> Stmt:
    """TVM's ``SeqStmt::Flatten``: nested sequences are spliced, no-op
    ``Evaluate(0)`` statements dropped, an empty result is ``Evaluate(0)``
    and a single statement stands alone."""
    flat: list[Stmt] = []
    stack = list(reversed(stmts))
    while stack:
        s = stack.pop()
        if isinstance(s, SeqStmt):
            stack.extend(reversed(list(s.seq)))
        elif isinstance(s, Evaluate) and isinstance(s.value, IntImm) and s.value.value == 0 \
                and not s.value.dtype.is_bool:
            continue
        else:
            flat.append(s)
    if not flat:
        return Evaluate(IntImm("int32", 0))
    return flat[0] if len(flat) == 1 else SeqStmt(flat)


def _written_block_names(fdef: ast.FunctionDef) -> set[str]:
    """The block names written as literals in ``fdef`` (``T.block("B")``):
    a name made for a repeated block avoids them."""
    names: set[str] = set()
    for node in ast.walk(fdef):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("block", "sblock"):
            args = list(node.args[:1]) + [kw.value for kw in node.keywords if kw.arg == "name"]
            names.update(a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return names


class FunctionInterpreter(ExprEvaluator):
    """Interprets one function definition; create one per function."""

    def __init__(self, src, outer, reserved: frozenset[str]):
        self.src = src
        self.scopes = Scopes(outer)
        self.namer = Namer(reserved)
        self.frames: list[str] = []
        self.blocks: list[BlockBuilder] = []
        self.loops: list[tuple[Var, Any]] = []
        self.func: FuncState | None = None
        # the T.If frames being built (None inside a T.Then or T.Else)
        self.if_frames: list = []

    # -- frames --------------------------------------------------------------
    @contextmanager
    def scope(self):
        """A nested name scope for the duration of the with statement."""
        self.scopes.push()
        try:
            yield
        finally:
            self.scopes.pop()

    def require_block_frame(self, node, what: str, allow_function: bool = False):
        """The block whose body is being interpreted, when the call stands
        directly in it; None at the top of the function if allowed."""
        kind = self.frames[-1] if self.frames else None
        if kind == "block":
            return self.blocks[-1]
        if allow_function and kind == "func":
            return None
        where = "directly inside a T.block" + (" or at the top of the function" if allow_function else "")
        raise self.fail(node, f"{what} must be called {where}",
                        hint="declarations of a block come before its loops, conditions and lets")

    def require_function_frame(self, node, what: str) -> None:
        """Refuse ``what`` unless it stands at the top of the function body."""
        if not self.frames or self.frames[-1] != "func":
            raise self.fail(node, f"{what} must be called at the top of the function body")

    def loop_domain(self, var: Var):
        """The Range of the enclosing loop of ``var``, or None."""
        for v, dom in reversed(self.loops):
            if v is var or v == var:
                return dom
        return None

    # -- the function ------------------------------------------------------------
    def run(self, fdef: ast.FunctionDef, private: bool) -> PrimFunc:
        """Build the PrimFunc of ``fdef``."""
        self.func = FuncState(fdef.name, private)
        self.func.written_block_names = _written_block_names(fdef)
        self.func.data_of_params = {n.value.id for n in ast.walk(fdef) if isinstance(n, ast.Attribute)
                                    and n.attr in ("data", "access_ptr")
                                    and isinstance(n.value, ast.Name)}
        self._check_signature(fdef)
        self._claim_outer_names()
        with self.scope():
            for arg in fdef.args.args:
                self._param(arg)
            ret_type = None
            if fdef.returns is not None:
                ret_type = self._return_type(fdef.returns)
            self.func.ret_type = ret_type
            body = self.visit_body(fdef.body, "func")
        return self._finish(fdef, body)

    def _claim_outer_names(self) -> None:
        """Variables and buffers taken from outside keep their names, so the
        names the function binds must differ from theirs."""
        from ..analysis.traversal import walk

        for name in sorted(self.namer.reserved):
            value = self.scopes.outer.get(name)
            items = value if isinstance(value, (tuple, list)) else [value]
            for item in items:
                if isinstance(item, (PrimExpr, Buffer)):
                    for n in walk(item):
                        if isinstance(n, (Var, Buffer)):
                            self.namer.claim(n.name)

    def _check_signature(self, fdef: ast.FunctionDef) -> None:
        a = fdef.args
        for what, items in (("positional-only parameters", a.posonlyargs),
                            ("keyword-only parameters", a.kwonlyargs)):
            if items:
                raise self.fail(items[0], f"{what} are not supported in TVMScript")
        if a.vararg is not None or a.kwarg is not None:
            raise self.fail(a.vararg or a.kwarg, "*args and **kwargs parameters are not supported in TVMScript")
        if a.defaults:
            raise self.fail(a.defaults[0], "parameter defaults are not supported in TVMScript")

    def _param(self, arg: ast.arg) -> None:
        if arg.annotation is None:
            raise self.fail(arg, f"parameter {arg.arg} needs a type annotation",
                            hint="annotate it with T.handle, T.Buffer(shape, dtype) or a scalar "
                            "type such as T.int32")
        ann = self.eval(arg.annotation)
        if isinstance(ann, Builtin) and ann.name == "T.handle":
            ann = NewVar(DataType("handle"))
        if isinstance(ann, DTypeCtor):
            ann = NewVar(ann.dtype)
        if isinstance(ann, NewBuffer):
            try:
                buffer = ann.make(self.namer.fresh(arg.arg))
            except NodeError as err:
                raise self.fail(arg.annotation, str(err)) from None
            if buffer.elem_offset is None and buffer.offset_factor != 0:
                # as TVM's match of a parameter, which the annotation is: an
                # offset_factor without an elem_offset gives it a variable
                offset = Var(self.namer.fresh(f"{buffer.name}_elem_offset"),
                             buffer.shape[0].dtype if buffer.shape else "int32")
                buffer = attrs.evolve(buffer, elem_offset=offset)
            handle = Var(self.namer.fresh(f"{buffer.name}_handle"), "handle")
            if arg.arg in self.func.data_of_params:
                # ``A.data`` is used: as in TVM, the buffer's data pointer is
                # what the parameter passes
                buffer = attrs.evolve(buffer, data=handle)
            self.func.params.append(handle)
            self.func.buffer_map[handle] = buffer
            self.scopes.define(arg.arg, buffer)
        elif isinstance(ann, NewVar):
            var = Var(self.namer.fresh(arg.arg), ann.dtype, ann.pointee)
            self.func.params.append(var)
            self.scopes.define(arg.arg, var)
        else:
            raise self.fail(arg.annotation, f"unsupported annotation for parameter {arg.arg}: "
                            f"{describe(ann)}",
                            hint="annotate it with T.handle, T.Buffer(shape, dtype) or a scalar "
                            "type such as T.int32")
        self.func.param_set = set(self.func.params)

    def _return_type(self, node: ast.expr):
        return _return_annotation(self, node)

    def _finish(self, fdef: ast.FunctionDef, body: Stmt) -> PrimFunc:
        from ..analysis.access import fill_regions
        from ..analysis.traversal import stmt_nodes

        func = self.func
        contains_blocks = any(isinstance(s, BlockRealize) for s in stmt_nodes(body))
        insert_root = bool(func.root_allocs) or (
            isinstance(body, BlockRealize) and len(body.block.iter_vars) > 0) or (
            not isinstance(body, BlockRealize) and contains_blocks)
        if insert_root:
            if "root" in func.block_nodes:
                # the implicit root block is "root"; the user's block named so
                # becomes a repeat of it, renamed as any repeat is
                body = self._rename_block(body, "root")
            root = Block([], [], [], "root", body, None, list(func.root_allocs))
            body = BlockRealize([], IntImm("bool", 1), root)
        attrs_ = dict(func.func_attrs)
        if not func.private and "global_symbol" not in attrs_:
            attrs_["global_symbol"] = func.name
        try:
            out = PrimFunc(func.params, body, func.ret_type, func.buffer_map, attrs_)
        except NodeError as err:
            raise self.fail(fdef, str(err)) from None
        out = self._plain_te_vars(out)
        pending = {name: mask for name, mask in func.pending.items() if mask[0] or mask[1]}
        if pending:
            out = fill_regions(out, pending)
        if func.renamed_blocks:
            out = attrs.evolve(out, renamed_blocks=func.renamed_blocks)
        return out

    def _plain_te_vars(self, func: PrimFunc) -> PrimFunc:
        """``func`` with each te variable that came in from the Python scope
        (``n = te.var("n")`` outside, ``T.match_buffer(a, (n,))`` inside)
        replaced by a plain Var of a name unique in the function (the name
        an assignment gave it, if one did): a te variable is only itself, a
        function's variable is its name, and TVM takes such a variable into
        the function as it is."""
        from ..analysis.traversal import transform, walk
        from ..te.tensor import TeVar

        found: dict[int, TeVar] = {}
        for n in walk(func):
            if type(n) is TeVar:
                found.setdefault(id(n), n)
        if not found:
            return func
        names = self.func.te_names
        plain = {key: Var(names[key] if key in names else self.namer.fresh(v.name), v.dtype,
                          v.type_annotation)
                 for key, v in found.items()}
        return transform(func, lambda n: plain.get(id(n), n) if type(n) is TeVar else n)

    def _rename_block(self, body: Stmt, name: str) -> Stmt:
        """``body`` with its block ``name`` renamed to a fresh name; the
        records kept by name follow it."""
        from ..analysis.traversal import find_block, get_at, replace_at

        func = self.func
        fresh = unique_block_name(name, func.block_nodes.keys() | func.written_block_names)
        path = find_block(body, name)
        body = replace_at(body, path, attrs.evolve(get_at(body, path), name_hint=fresh))
        func.block_nodes[fresh] = func.block_nodes.pop(name)
        func.renamed_blocks.setdefault(name, [name]).append(fresh)
        if name in func.pending:
            func.pending[fresh] = func.pending.pop(name)
        return body

    # -- bodies ------------------------------------------------------------------
    def visit_body(self, stmts: list[ast.stmt], kind: str) -> Stmt:
        """The statement of a body; concise scopes nest the rest inside."""
        self.frames.append(kind)
        items: list[Any] = []
        try:
            for s in stmts:
                out = self.visit_stmt(s)
                for item in out if isinstance(out, list) else [out]:
                    if item is None:
                        continue
                    items.append(item)
                    if isinstance(item, _Open):
                        self.frames[-1] = "scoped"
        finally:
            self.frames.pop()
        acc: list[Stmt] = []
        for item in reversed(items):
            if isinstance(item, _Open):
                acc = [self._wrap(item, seq(acc))]
            else:
                acc.insert(0, item)
        return seq(acc)

    def _wrap(self, opener: _Open, body: Stmt) -> Stmt:
        try:
            return opener.wrap(body)
        except TirfunError as err:
            if isinstance(err, ParseError):
                raise
            raise self.fail(opener.node, str(err)) from None

    def visit_stmt(self, node: ast.stmt):
        """Interpret one statement: a Stmt, None, an opener, or a list of them."""
        handler = _STMT_HANDLERS.get(type(node))
        if handler is None:
            message, hint = _UNSUPPORTED_STMTS.get(
                type(node), (f"{type(node).__name__} statements are not supported in TVMScript", ""))
            raise self.fail(node, message, hint=hint)
        try:
            return handler(self, node)
        except (ParseError, RecursionError):
            raise
        except TirfunError as err:
            raise self.fail(node, str(err)) from None

    # -- simple statements ----------------------------------------------------------
    def _pass(self, node):
        return None

    def _expr_stmt(self, node: ast.Expr):
        value = self.eval(node.value)
        if value is None or isinstance(value, str):
            return None  # declarations such as T.reads(...), and docstrings
        if isinstance(value, Stmt):
            return value
        if isinstance(value, Scope):
            bound, wrap = value.open(None)
            return _Open(wrap, node)
        if isinstance(value, PrimExpr):
            return Evaluate(value)
        if _is_number(value):
            return Evaluate(const(value))
        if isinstance(value, (NewBuffer, NewVar, NewIterVar)) or (
                isinstance(value, list) and value and all(isinstance(v, NewIterVar) for v in value)):
            what = value.what if hasattr(value, "what") else "this declaration"
            if isinstance(value, list):
                what = value[0].what
            raise self.fail(node, f"the result of {what} must be assigned to a name")
        if isinstance(value, (BlockHeader, InitHeader)):
            raise self.fail(node, "T.block and T.init open a scope: use them in a with statement")
        if isinstance(value, LoopSpec):
            raise self.fail(node, f"{value.what} is a loop header: use it in a for statement")
        raise self.fail(node, f"a statement cannot be {describe(value)}")

    def _return(self, node: ast.Return):
        if node.value is None:
            raise self.fail(node, "return needs a value in TVMScript")
        value = self.as_expr(self.eval(node.value), node.value)
        return Evaluate(tir_op.ret(value))

    def _assert(self, node: ast.Assert):
        cond = to_bool_expr(self, self.eval(node.test), node.test, "the assertion")
        if node.msg is None:
            raise self.fail(node, "assert needs a message in TVMScript", hint='assert cond, "message"')
        msg = to_str(self, self.eval(node.msg), node.msg, "the assertion message")
        return _Open(lambda body: AssertStmt(cond, StringImm(msg), body), node)

    # -- assignment ------------------------------------------------------------------
    def _assign(self, node: ast.Assign):
        if len(node.targets) != 1:
            raise self.fail(node, "chained assignments such as a = b = c are not supported in TVMScript")
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return self._store(target, node.value, self.eval(node.value))
        value = self.eval(node.value)
        return self.bind_target(target, value, node.value)

    def _aug_assign(self, node: ast.AugAssign):
        target = node.target
        if not isinstance(target, ast.Subscript):
            raise self.fail(node, "augmented assignment of a name is not supported in TVMScript",
                            hint="names are bound once; store into a buffer element instead")
        load = ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
        ast.copy_location(load, target)
        combined = ast.BinOp(left=load, op=node.op, right=node.value)
        ast.copy_location(combined, node)
        return self._store(target, node.value, self.eval(combined))

    def _store(self, target: ast.Subscript, value_node: ast.expr, value: Any):
        buffer = self.eval(target.value)
        if not isinstance(buffer, Buffer):
            raise self.fail(target, f"only buffer elements can be assigned, not {describe(buffer)}")
        access = self.buffer_access(buffer, target.slice, target)
        if isinstance(access, SlicedAccess):
            indices = self.slice_indices(access, target)
        else:
            indices = list(access.indices)
        return self.store_value(buffer, indices, value, value_node)

    def store_value(self, buffer: Buffer, indices: list, value: Any, value_node: ast.AST,
                    predicate: Any = None, predicate_node: ast.AST | None = None) -> BufferStore:
        """``buffer[indices] = value`` with the value converted as TVM's
        buffer_store converts it; ``predicate`` (when not None) masks the
        lanes stored."""
        lanes = max([1] + [i.dtype.lanes for i in indices])
        expected = buffer.dtype.with_lanes(lanes) if lanes > 1 else buffer.dtype
        if isinstance(value, SlicedAccess):
            value = self.vector_load(value, value_node)
        if _is_number(value):
            if isinstance(value, float) and not expected.is_float and math.isfinite(value) \
                    and (value >= 0 or expected.is_int):
                # TVM's buffer_store casts the literal to the buffer's type, and a
                # constant cast folds as C++ does: toward zero
                literal, value = value, int(value)
            else:
                literal = value
            try:
                value = const(value, expected)
            except NodeError:
                raise self.fail(value_node, f"cannot store the {type(literal).__name__} literal "
                                f"{literal!r} into buffer {buffer.name} of {expected}") from None
        else:
            value = self.as_expr(value, value_node)
        if value.dtype != expected:
            if value.dtype.lanes != expected.lanes or value.dtype.is_handle or expected.is_handle:
                raise self.fail(value_node, f"cannot store {article(str(value.dtype))} value into "
                                f"buffer {buffer.name} of {expected}",
                                hint=f'convert the value with T.Cast("{expected}", ...)')
            # TVM's buffer_store casts a value of another type to the buffer's
            value = value.astype(expected)
        if predicate is None:
            return BufferStore(buffer, value, indices)
        mask = to_mask(self, predicate, predicate_node, expected.lanes, f"a store into {buffer.name}")
        return BufferStore(buffer, value, indices, mask)

    def bind_target(self, target: ast.expr, value: Any, value_node: ast.AST):
        """Bind an assignment target; returns openers for lets and scopes."""
        if isinstance(value, MetaVar):
            # T.meta_var: the names stand for the values themselves, no let
            if isinstance(target, ast.Name):
                if self.scopes.defined_here(target.id):
                    raise self.fail(target, f"'{target.id}' is already defined in this scope",
                                    hint="TVMScript binds each name once per scope; choose a new name")
                self.scopes.define(target.id, value.value)
                return None
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value.value, (tuple, list)):
                value = type(value.value)(MetaVar(v) for v in value.value)
        if isinstance(target, ast.Name):
            if isinstance(value, list) and len(value) == 1 and isinstance(value[0], NewIterVar):
                value = value[0]
            if isinstance(value, (tuple, list)) and value and \
                    all(isinstance(v, NewIterVar) for v in value):
                return self._bind_axes(target, value, value_node)
            return self.bind_name(target, value, value_node)
        if isinstance(target, (ast.Tuple, ast.List)):
            names = target.elts
            if not isinstance(value, (tuple, list)):
                raise self.fail(target, f"cannot unpack {describe(value)} into {len(names)} names")
            if len(value) != len(names):
                raise self.fail(target, f"cannot unpack {len(value)} values into {len(names)} names")
            seen = set()
            for n in names:
                if isinstance(n, ast.Name):
                    if n.id in seen:
                        raise self.fail(n, f"'{n.id}' is assigned twice in one statement")
                    seen.add(n.id)
            out = []
            for n, v in zip(names, value):
                r = self.bind_target(n, v, value_node)
                out.extend(r if isinstance(r, list) else [r])
            return out
        raise self.fail(target, "only names, tuples of names and buffer elements can be assigned")

    def _bind_axes(self, target: ast.Name, axes, value_node: ast.AST) -> None:
        """``vs = T.axis.remap("SS", [i, j])``: one name for several block
        variables, the tuple of them, each named ``vs_0``, ``vs_1``... as
        TVM names them."""
        if self.scopes.defined_here(target.id):
            raise self.fail(target, f"'{target.id}' is already defined in this scope",
                            hint="TVMScript binds each name once per scope; choose a new name")
        variables = tuple(self._block_var(f"{target.id}_{k}", axis) for k, axis in enumerate(axes))
        self.scopes.define(target.id, variables)

    def _block_var(self, name: str, axis: NewIterVar) -> Var:
        """The variable of a ``T.axis.*`` declaration, added to its block."""
        block = self.blocks[-1]
        var = Var(self.namer.fresh(name), axis.dtype)
        block.iter_vars.append(IterVar(axis.dom, var, axis.iter_type))
        block.iter_values.append(axis.binding)
        return var

    def bind_name(self, target: ast.Name, value: Any, value_node: ast.AST):
        """Bind one name to an assigned value (see the module docstring)."""
        name = target.id
        if self.scopes.defined_here(name):
            raise self.fail(target, f"'{name}' is already defined in this scope",
                            hint="TVMScript binds each name once per scope; choose a new name")
        if isinstance(value, NewBuffer):
            buffer = value.make(self.namer.fresh(name))
            if value.what in ("T.alloc_buffer", "T.match_buffer", "T.Buffer") and buffer.data is None \
                    and name in self.func.data_of_params:
                # ``B.data`` or ``B.access_ptr`` is used: as in TVM, the
                # buffer has a pointer (printed as ``B.data``): a matched
                # parameter's is the parameter, as for a T.Buffer annotation;
                # an allocation, a matched region or a declared view
                # (``B = T.Buffer(...)``, TVM's decl_buffer) has one of its own
                data = value.handle if value.handle is not None else \
                    Var(self.namer.fresh(f"{buffer.name}_data"), "handle")
                buffer = attrs.evolve(buffer, data=data)
            value.register(buffer)
            self.scopes.define(name, buffer)
            return None
        if isinstance(value, NewVar):
            var = Var(self.namer.fresh(name), value.dtype, value.pointee)
            if value.thread_tag is not None:
                self.func.env_threads[var] = value.thread_tag
            self.scopes.define(name, var)
            return None
        if isinstance(value, NewIterVar):
            self.scopes.define(name, self._block_var(name, value))
            return None
        if isinstance(value, Scope):
            bound, wrap = value.open(name)
            self.scopes.define(name, bound)
            return _Open(wrap, value_node)
        if isinstance(value, Stmt):
            raise self.fail(value_node, "a statement has no value to assign")
        if isinstance(value, (LoopSpec, BlockHeader, InitHeader)):
            raise self.fail(value_node, f"{describe(value)} cannot be assigned; use it in a "
                            f"{'for' if isinstance(value, LoopSpec) else 'with'} statement")
        if isinstance(value, Var) and not self.scopes.binds(value):
            # as TVM does: a variable made in Python (``n = te.var("n")``)
            # that no name of the function stands for yet is named, not
            # bound by a let, so it can still be defined by what uses it
            # (a T.match_buffer's elem_offset, a shape). A te variable takes
            # the name, as TVM renames it, wherever it occurs (see
            # _plain_te_vars); a plain Var keeps its own, its identity
            if type(value) is not Var:
                self.func.te_names.setdefault(id(value), self.namer.fresh(name))
            self.scopes.define(name, value)
            return None
        if isinstance(value, (PrimExpr, SlicedAccess)) or _is_number(value):
            expr = self.as_expr(value, value_node)
            var = Var(self.namer.fresh(name), expr.dtype)
            self.scopes.define(name, var)
            return _Open(lambda body: LetStmt(var, expr, body), value_node)
        # buffers, strings, dtypes, tuples...: names for values used while parsing
        self.scopes.define(name, value)
        return None

    def _ann_assign(self, node: ast.AnnAssign):
        if not isinstance(node.target, ast.Name):
            raise self.fail(node.target, "only a name can be declared with a type annotation")
        ann = self.eval(node.annotation)
        if isinstance(ann, Builtin) and ann.name == "T.handle":
            ann = NewVar(DataType("handle"))
        pointee = None
        if isinstance(ann, DTypeCtor):
            dtype = ann.dtype
        elif isinstance(ann, NewVar):
            dtype, pointee = ann.dtype, ann.pointee
        else:
            raise self.fail(node.annotation, f"a let annotation must be a type such as T.float32, "
                            f"got {describe(ann)}")
        if node.value is None:
            raise self.fail(node, f"{node.target.id}: {dtype} needs a value",
                            hint=f"write {node.target.id}: T.{dtype} = value, or "
                            f"{node.target.id} = T.{dtype}() to declare a variable")
        if self.scopes.defined_here(node.target.id):
            raise self.fail(node.target, f"'{node.target.id}' is already defined in this scope",
                            hint="TVMScript binds each name once per scope; choose a new name")
        value = self.cast_to(self.eval(node.value), dtype, node.value)
        var = Var(self.namer.fresh(node.target.id), dtype, pointee)
        self.scopes.define(node.target.id, var)
        return _Open(lambda body: LetStmt(var, value, body), node)

    # -- loops ------------------------------------------------------------------------
    def _for(self, node: ast.For):
        spec = self.eval(node.iter)
        if not isinstance(spec, LoopSpec):
            raise self.fail(node.iter, "a for loop must iterate over range(...), T.serial, "
                            "T.parallel, T.vectorized, T.unroll, T.thread_binding or T.grid, "
                            f"not {describe(spec)}")
        if node.orelse:
            raise self.fail(node.orelse[0], "for-else is not supported in TVMScript")
        groups = self._loop_targets(node.target, spec)
        loop_vars = []
        with self.scope():
            loops = iter(spec.loops)
            for name, names in groups:
                group = []
                for var_name in names:
                    start, extent = next(loops)[:2]
                    var = Var(self.namer.fresh(var_name), start.dtype)
                    self.loops.append((var, Range(start, extent)))
                    group.append(var)
                # a name standing for several loops is the tuple of their variables
                self.scopes.define(name, group[0] if names == [name] else tuple(group))
                loop_vars.extend(group)
            try:
                body = self.visit_body(node.body, "body")
            finally:
                del self.loops[len(self.loops) - len(loop_vars):]
        for var, (start, extent, kind, tag, annotations) in reversed(list(zip(loop_vars, spec.loops))):
            body = For(var, start, extent, kind, body, thread_binding=tag, annotations=annotations)
        return body

    def _loop_targets(self, target: ast.expr, spec: LoopSpec) -> list[tuple[str, list[str]]]:
        """The names a for statement binds, each with the names of the loop
        variables it stands for, in loop order. As TVM binds them: ``i, j``
        name one loop each; a single name for several loops (``for iters in
        T.grid(4, 8)``) and a starred name (``for *outer, k in ...``) stand
        for the tuple of theirs, named ``iters_0``, ``iters_1``..."""
        n = len(spec.loops)
        if isinstance(target, ast.Name):
            return [(target.id, [target.id] if n == 1 else [f"{target.id}_{k}" for k in range(n)])]
        if not isinstance(target, (ast.Tuple, ast.List)):
            raise self.fail(target, "a loop variable must be a name")
        starred = [t for t in target.elts if isinstance(t, ast.Starred)]
        if len(starred) > 1:
            raise self.fail(starred[1], "a for statement unpacks into at most one starred name")
        fixed = len(target.elts) - len(starred)
        if len(target.elts) != n and not (starred and fixed <= n):
            raise self.fail(target, f"{spec.what} makes {n} loop variable{'s' if n != 1 else ''} "
                            f"but {fixed} name{'s are' if fixed != 1 else ' is'} given")
        out, seen = [], set()
        for t in target.elts:
            inner = t.value if isinstance(t, ast.Starred) else t
            if not isinstance(inner, ast.Name):
                raise self.fail(inner, "a loop variable must be a name")
            if inner.id in seen:
                raise self.fail(inner, f"'{inner.id}' is used twice as a loop variable")
            seen.add(inner.id)
            if isinstance(t, ast.Starred):
                out.append((inner.id, [f"{inner.id}_{k}" for k in range(n - fixed)]))
            else:
                out.append((inner.id, [inner.id]))
        return out

    # -- with -------------------------------------------------------------------------
    def _with(self, node: ast.With):
        return self._with_items(node, list(node.items))

    def _with_items(self, node: ast.With, items: list[ast.withitem]):
        item, rest = items[0], items[1:]
        value = self.eval(item.context_expr)

        def inner(kind: str) -> Stmt:
            if rest:
                self.frames.append(kind)
                try:
                    return seq([self._with_items(node, rest)])
                finally:
                    self.frames.pop()
            return self.visit_body(node.body, kind)

        if isinstance(value, BlockHeader):
            if item.optional_vars is not None:
                raise self.fail(item.optional_vars, "T.block binds no name")
            return self._block(value, item.context_expr, inner)
        if isinstance(value, InitHeader):
            if item.optional_vars is not None:
                raise self.fail(item.optional_vars, "T.init binds no name")
            return self._init(item.context_expr, inner)
        if isinstance(value, Scope):
            target = item.optional_vars
            if target is not None and not isinstance(target, ast.Name):
                raise self.fail(target, "the target of a with statement must be a name")
            with self.scope():
                bound, wrap = value.open(None if target is None else target.id)
                if target is not None:
                    self.scopes.define(target.id, bound)
                body = inner("body")
            return wrap(body)
        raise self.fail(item.context_expr, f"a with statement takes T.block, T.init, T.attr, "
                        f"T.launch_thread, T.allocate, T.decl_buffer, T.Assert or T.LetStmt, "
                        f"not {describe(value)}")

    def _block(self, header: BlockHeader, node: ast.AST, inner) -> Stmt:
        func = self.func
        # TVM accepts repeated and anonymous block names; here names are
        # identities, so a repeat is renamed as TVM names repeats (B, B_1)
        name = header.name
        if name in func.block_nodes:
            name = unique_block_name(name, func.block_nodes.keys() | func.written_block_names)
            func.renamed_blocks.setdefault(header.name, [header.name]).append(name)
        func.block_nodes[name] = node
        builder = BlockBuilder(name, header.realize, node)
        self.blocks.append(builder)
        try:
            with self.scope():
                body = inner("block")
        finally:
            self.blocks.pop()
        if not builder.realize and (builder.iter_vars or builder.predicate is not None):
            raise self.fail(node, "a block with no_realize=True takes no T.axis bindings or T.where")
        mask = (builder.reads is None, builder.writes is None)
        if mask[0] or mask[1]:
            func.pending[name] = mask
        block = Block(builder.iter_vars, builder.reads or [], builder.writes or [], name, body,
                      builder.init, builder.alloc_buffers, builder.match_buffers,
                      builder.annotations or {})
        if not builder.realize:
            return block
        predicate = IntImm("bool", 1) if builder.predicate is None else builder.predicate
        return BlockRealize(builder.iter_values, predicate, block)

    def _init(self, node: ast.AST, inner) -> None:
        block = self.require_block_frame(node, "T.init")
        if block.init_seen:
            raise self.fail(node, f"duplicate T.init in block {block.name!r}")
        block.init_seen = True
        with self.scope():
            block.init = inner("init")
        return None

    # -- if ---------------------------------------------------------------------------
    def _if(self, node: ast.If):
        cond = self.eval(node.test)
        if _is_number(cond):
            branch = node.body if cond else node.orelse
            if not branch:
                return None
            with self.scope():
                return self.visit_body(branch, "body")
        cond = to_branch_condition(self, cond, node.test, "the condition of an if statement")
        with self.scope():
            then_case = self.visit_body(node.body, "body")
        else_case = None
        if node.orelse:
            with self.scope():
                else_case = self.visit_body(node.orelse, "body")
        return IfThenElse(cond, then_case, else_case)

    # -- while ------------------------------------------------------------------------
    def _while(self, node: ast.While):
        if node.orelse:
            raise self.fail(node.orelse[0], "while-else is not supported in TVMScript")
        cond = to_branch_condition(self, self.eval(node.test), node.test, "the condition of a while loop")
        with self.scope():
            body = self.visit_body(node.body, "body")
        return While(cond, body)


_STMT_HANDLERS = {
    ast.Expr: FunctionInterpreter._expr_stmt,
    ast.Assign: FunctionInterpreter._assign,
    ast.AnnAssign: FunctionInterpreter._ann_assign,
    ast.AugAssign: FunctionInterpreter._aug_assign,
    ast.For: FunctionInterpreter._for,
    ast.With: FunctionInterpreter._with,
    ast.If: FunctionInterpreter._if,
    ast.While: FunctionInterpreter._while,
    ast.Assert: FunctionInterpreter._assert,
    ast.Return: FunctionInterpreter._return,
    ast.Pass: FunctionInterpreter._pass,
}
