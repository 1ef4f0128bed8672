"""Script functions of TVM's IRBuilder that TVMScript also accepts:
``T.While``/``T.If``/``T.Then``/``T.Else`` frames, ``T.buffer_store``, ``T.prefetch``,
``T.Shuffle``,
``T.arg``, ``T.func_name``, ``T.func_ret``, pointer declarations
(``T.ptr``, ``T.Ptr``, ``T.buffer_var``), ``T.Var``/``T.SizeVar``,
``T.IterVar``, ``T.CommReducer``, ``T.CallEffectKind``,
``T.llvm_lookup_intrinsic_id`` and ``T.call_kernel``, each as TVM v0.20's
``python/tvm/script/ir_builder/tir/ir.py`` defines it.

``with T.If(c):`` holds ``with T.Then():`` and optionally ``with T.Else():``
and nothing else; the frames build one ``IfThenElse``, which prints as an
``if`` statement. :data:`HANDLERS` maps each name to its signature and
handler.
"""

from __future__ import annotations

import attrs

from ..errors import NodeError
from ..nodes import (
    Buffer, Call, Evaluate, IfThenElse, IterVar, IterVarType, PointerType, Prefetch, Range, Shuffle, SeqStmt,
    StringImm, Var, While,
)
from ..nodes.dtype import DataType
from ..nodes.reducer import CommReducer
from .parser_args import sig, to_branch_condition, to_dtype, to_str
from .parser_values import DTypeCtor, MetaVar, NewBuffer, NewVar, Scope, describe


@attrs.define
class _IfFrame:
    """The branches a ``T.If`` frame collects from its Then and Else."""

    then_case: object = None
    else_case: object = None


def _while(ip, node, a):
    cond = to_branch_condition(ip, a.condition, a.node("condition"), "the condition of T.While")

    def open_(name):
        if name is not None:
            raise ip.fail(node, "T.While binds no value to a name")
        return None, lambda body: While(cond, body)

    return Scope("T.While", open_)


# a branch's place in the body of T.If, until the If frame closes
_THEN, _ELSE = Evaluate(StringImm("T.Then")), Evaluate(StringImm("T.Else"))


def _if(ip, node, a):
    cond = to_branch_condition(ip, a.condition, a.node("condition"), "the condition of T.If")
    frame = _IfFrame()

    def open_(name):
        if name is not None:
            raise ip.fail(node, "T.If binds no value to a name")
        ip.if_frames.append(frame)

        def wrap(body):
            ip.if_frames.pop()
            items = list(body.seq) if isinstance(body, SeqStmt) else [body]
            if frame.then_case is None or any(s is not _THEN and s is not _ELSE for s in items):
                raise ip.fail(node, "the body of T.If is a T.Then frame, optionally followed by "
                              "a T.Else frame, and nothing else")
            return IfThenElse(cond, frame.then_case, frame.else_case)
        return None, wrap

    return Scope("T.If", open_)


def _branch(which: str):
    def handler(ip, node, a):
        frame = ip.if_frames[-1] if ip.if_frames and ip.frames and ip.frames[-1] == "body" else None
        if frame is None:
            raise ip.fail(node, f"T.{which} must stand directly inside a T.If frame")
        if which == "Then" and frame.then_case is not None:
            raise ip.fail(node, "a T.If frame has one T.Then")
        if which == "Else" and (frame.then_case is None or frame.else_case is not None):
            raise ip.fail(node, "T.Else follows the T.Then of its T.If frame, once")

        def open_(name):
            if name is not None:
                raise ip.fail(node, f"T.{which} binds no value to a name")
            ip.if_frames.append(None)  # a T.Then inside a branch needs an If of its own

            def wrap(body):
                ip.if_frames.pop()
                if which == "Then":
                    frame.then_case = body
                    return _THEN
                frame.else_case = body
                return _ELSE
            return None, wrap

        return Scope(f"T.{which}", open_)
    return handler


def _buffer_store(ip, node, a):
    buffer = a.buffer
    if not isinstance(buffer, Buffer):
        raise ip.fail(a.node("buffer"), f"T.buffer_store stores into a buffer, got {describe(buffer)}")
    indices = a.indices if isinstance(a.indices, (list, tuple)) else [a.indices]
    if len(indices) != len(buffer.shape):
        raise ip.fail(a.node("indices"), f"buffer {buffer.name} has {len(buffer.shape)} "
                      f"dimensions but T.buffer_store gives {len(indices)} indices")
    exprs = [ip._index(i, a.node("indices")) for i in indices]
    return ip.store_value(buffer, exprs, a.value, a.node("value"), a.predicate, a.node("predicate"))


def _prefetch(ip, node, a):
    """``T.prefetch(A, [T.Range(0, 8), ...])``: a hint, one range per dimension."""
    buffer = a.buffer
    if not isinstance(buffer, Buffer):
        raise ip.fail(a.node("buffer"), f"T.prefetch takes a buffer, got {describe(buffer)}")
    bounds = a.bounds
    if not isinstance(bounds, (list, tuple)) or not all(isinstance(r, Range) for r in bounds):
        raise ip.fail(a.node("bounds"), "the bounds of T.prefetch are a list of T.Range, one per "
                      "dimension")
    if len(bounds) != len(buffer.shape):
        raise ip.fail(a.node("bounds"), f"buffer {buffer.name} has {len(buffer.shape)} dimensions "
                      f"but T.prefetch gives {len(bounds)} ranges")
    return Prefetch(buffer, list(bounds))


def _shuffle(ip, node, a):
    """``T.Shuffle([v0, v1], [0, 5, ...])``: lanes of the vectors end to end."""
    for field_name in ("vectors", "indices"):
        if not isinstance(getattr(a, field_name), (list, tuple)):
            raise ip.fail(a.node(field_name), f"the {field_name} of T.Shuffle are a list, got "
                          f"{describe(getattr(a, field_name))}")
    vectors = [ip.as_expr(v, a.node("vectors")) for v in a.vectors]
    indices = [ip.as_expr(i, a.node("indices")) for i in a.indices]
    try:
        return Shuffle(vectors, indices)
    except NodeError as err:
        raise ip.fail(node, str(err)) from None


def _arg(ip, node, a):
    """``T.arg(name, T.Buffer(...))`` or ``T.arg(name, T.int32())``: one more
    parameter, after those of the signature, as TVM's IRBuilder adds it."""
    ip.require_function_frame(node, "T.arg")
    name = to_str(ip, a.name, a.node("name"), "the name of T.arg")
    obj = a.obj
    if isinstance(obj, DTypeCtor):
        obj = NewVar(obj.dtype)
    try:
        if isinstance(obj, NewBuffer) and obj.what == "T.Buffer":
            buffer = obj.make(ip.namer.fresh(name))
            handle = Var(ip.namer.fresh(f"{buffer.name}_handle"), "handle")
            ip.func.params.append(handle)
            ip.func.buffer_map[handle] = buffer
            value = buffer
        elif isinstance(obj, NewVar):
            value = Var(ip.namer.fresh(name), obj.dtype, obj.pointee)
            ip.func.params.append(value)
        else:
            raise ip.fail(a.node("obj"), f"T.arg takes T.Buffer(...) or a variable type such as "
                          f"T.int32() or T.handle(), got {describe(obj)}")
    except NodeError as err:
        raise ip.fail(node, str(err)) from None
    ip.func.param_set = set(ip.func.params)
    # assigned, the name stands for the parameter itself (no let)
    return MetaVar(value) if isinstance(value, Var) else value


def _func_name(ip, node, a):
    # TVM's parser names the function after its def before the body runs, so
    # the IRBuilder refuses a second name the same way
    ip.require_function_frame(node, "T.func_name")
    raise ip.fail(node, f"the function is already named {ip.func.name} by its def; T.func_name "
                  "names a function built with TVM's IRBuilder only")


def _func_ret(ip, node, a):
    ip.require_function_frame(node, "T.func_ret")
    dtype = to_dtype(ip, a.ret_type, a.node("ret_type"))
    if ip.func.ret_type is not None:
        raise ip.fail(node, f"the function's return type is already {ip.func.ret_type}")
    ip.func.ret_type = dtype
    # TVM returns the type, which its parser refuses as a statement; nothing
    # is returned here, so both the statement and an assignment read
    return None


def _ptr(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    scope = to_str(ip, a.storage_scope, a.node("storage_scope"), "storage_scope")
    return NewVar(DataType("handle"), pointee=PointerType(dtype, scope))


def _var_node(ip, node, a):
    """``T.Var(name, dtype)``: a variable of that name (made unique)."""
    name = to_str(ip, a.name, a.node("name"), "the name of T.Var") or "v"
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    try:
        # assigned, the name stands for the variable itself (no let)
        return MetaVar(Var(ip.namer.fresh(name), dtype))
    except NodeError as err:
        raise ip.fail(node, str(err)) from None


#: TVM's IterVar.IterVarType numbers, for those a TensorIR block uses
_ITER_TYPES = {0: IterVarType.DataPar, 1: IterVarType.ThreadIndex, 2: IterVarType.CommReduce,
               3: IterVarType.Ordered, 4: IterVarType.Opaque}


def _iter_var_node(ip, node, a):
    """``T.IterVar(dom, var, iter_type, thread_tag="")``: TVM's node
    constructor, whose iteration type is a number (0 data-parallel, 1
    thread index, 2 reduction, 3 ordered, 4 opaque)."""
    dom = a.dom
    if isinstance(dom, (list, tuple)) and len(dom) == 2:
        lo = ip.as_expr(dom[0], a.node("dom"))
        hi = ip.as_expr(dom[1], a.node("dom"))
        dom = Range(lo, hi - lo)
    if dom is not None and not isinstance(dom, Range):
        raise ip.fail(a.node("dom"), f"the domain of T.IterVar is a T.Range or (begin, end), "
                      f"got {describe(dom)}")
    var = a.var
    if not isinstance(var, Var):
        raise ip.fail(a.node("var"), f"T.IterVar needs a variable, got {describe(var)}")
    kind = a.iter_type
    if isinstance(kind, int) and not isinstance(kind, bool) and kind in _ITER_TYPES:
        kind = _ITER_TYPES[kind]
    else:
        try:
            kind = IterVarType(to_str(ip, kind, a.node("iter_type"), "the iteration type"))
        except ValueError:
            raise ip.fail(a.node("iter_type"), f"unknown iteration type {kind!r}") from None
    tag = to_str(ip, a.thread_tag, a.node("thread_tag"), "the thread tag")
    try:
        return IterVar(dom, var, kind, tag)
    except NodeError as err:
        raise ip.fail(node, str(err)) from None


def _comm_reducer_node(ip, node, a):
    """``T.CommReducer(lhs, rhs, result, identity_element)``: TVM's node
    constructor, with the variables given."""
    parts = []
    for field in ("lhs", "rhs", "result", "identity_element"):
        value = getattr(a, field)
        if not isinstance(value, (list, tuple)):
            raise ip.fail(a.node(field), f"the {field} of T.CommReducer is a list, got {describe(value)}")
        parts.append(value)
    lhs, rhs, result, identity = parts
    for field, vars_ in (("lhs", lhs), ("rhs", rhs)):
        if not all(isinstance(v, Var) for v in vars_):
            raise ip.fail(a.node(field), f"the {field} of T.CommReducer are variables")
    try:
        return CommReducer(lhs, rhs, [ip.as_expr(r, a.node("result")) for r in result],
                           [ip.as_expr(i, a.node("identity_element")) for i in identity])
    except NodeError as err:
        raise ip.fail(node, str(err)) from None


def _lookup_intrinsic(ip, node, a):
    """``T.llvm_lookup_intrinsic_id("llvm.fabs")``: TVM answers LLVM's number
    for the intrinsic; here the name stands for it, which is what
    ``T.call_llvm_intrin`` and ``T.call_llvm_pure_intrin`` take."""
    name = to_str(ip, a.name, a.node("name"), "the intrinsic's name")
    if not name.startswith("llvm."):
        raise ip.fail(a.node("name"), f"LLVM intrinsics are named llvm.*, got {name!r}")
    return StringImm(name)


def _call_kernel(ip, node, a):
    """``T.call_kernel(kernel, launch_args, *args)``: TVM compiles ``kernel``
    (a Triton kernel) and launches it with the grid and block sizes of
    ``launch_args``. Here the kernel is named (by a string, say) and a list
    of launch sizes travels as ``T.tvm_tuple(...)``; no tirfun target runs it, so the
    interpreter and the CPU build refuse it, naming what it needs."""
    kernel = a.kernel
    kernel = StringImm(kernel) if isinstance(kernel, str) else ip.as_expr(kernel, a.node("kernel"))
    launch = a.launch_args
    if isinstance(launch, (list, tuple)):
        flat = []

        def gather(items):
            for item in items:
                if isinstance(item, (list, tuple)):
                    gather(item)
                else:
                    flat.append(ip.as_expr(item, a.node("launch_args")))
        gather(launch)
        launch = Call(DataType("handle"), "tir.tvm_tuple", flat)
    else:
        launch = ip.as_expr(launch, a.node("launch_args"))
    args = [StringImm(v) if isinstance(v, str) else ip.as_expr(v, node) for v in a.args]
    return Call(DataType("void"), "tir.call_kernel", [kernel, launch, *args])


#: TVM's ``CallEffectKind`` values (``T.CallEffectKind.kPure``)
CALL_EFFECT_KINDS = {"kExprAnnotation": 0, "kPure": 1, "kReadState": 2, "kUpdateState": 3,
                     "kOpaque": 4, "kSpecialCallArg": 5, "kEmbedInfo": 6, "kControlJump": 7}



HANDLERS: dict = {
    "T.While": (sig("condition"), _while),
    "T.If": (sig("condition"), _if),
    "T.Then": (sig(), _branch("Then")),
    "T.Else": (sig(), _branch("Else")),
    "T.buffer_store": (sig("buffer", "value", "indices", ("predicate", None)), _buffer_store),
    "T.prefetch": (sig("buffer", "bounds"), _prefetch),
    "T.Shuffle": (sig("vectors", "indices"), _shuffle),
    "T.arg": (sig("name", "obj"), _arg),
    "T.func_name": (sig("name"), _func_name),
    "T.func_ret": (sig("ret_type"), _func_ret),
    "T.ptr": (sig("dtype", ("storage_scope", "global"), ("is_size_var", False)), _ptr),
    "T.buffer_var": (sig("dtype", ("storage_scope", "global")), _ptr),
    "T.Var": (sig("name", "dtype"), _var_node),
    "T.SizeVar": (sig("name", "dtype"), _var_node),
    "T.IterVar": (sig("dom", "var", "iter_type", ("thread_tag", "")), _iter_var_node),
    "T.CommReducer": (sig("lhs", "rhs", "result", "identity_element"), _comm_reducer_node),
    "T.llvm_lookup_intrinsic_id": (sig("name"), _lookup_intrinsic),
    "T.call_kernel": (sig("kernel", "launch_args", star="args"), _call_kernel),
}

ALIASES = {"T.Ptr": "T.ptr"}

__all__ = ["CALL_EFFECT_KINDS", "HANDLERS", "ALIASES"]
