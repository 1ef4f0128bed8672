"""``te.create_prim_func``: a te program as a schedulable PrimFunc.

The result has the shape TVM gives it: one handle parameter ``var_<name>``
per argument tensor, viewed as a buffer named after the tensor; the
function attributes ``global_symbol = "main"`` and ``tir.noalias``; an
implicit root block allocating the tensors that are not arguments; and per
compute a nest of serial loops named after its axes around one block named
after the compute, whose iteration variables are the axes prefixed ``v_``,
with the compute's attrs as its annotations, the regions it reads and
writes (inferred as the TVMScript parser infers omitted ones) and, for a
reduction, an ``init`` storing the reducer's identity.

Names are made unique within the function (a second compute over axes
``i, j`` gets loops ``i_1, j_1``), because in tirfun a name is an identity.
A reduction's ``where=`` condition guards the reduced value with
``T.if_then_else``, so the reduction skips the points where it is false.
"""

from __future__ import annotations

from ..analysis.traversal import transform, walk
from ..errors import NodeError
from ..nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferStore, For, ForKind, IntImm,
    IterVar, PrimExpr, PrimFunc, Range, SeqStmt, Var,
)
from ..nodes.dtype import DataType
from ..tir.op import if_then_else
from .reduce import Reduce
from ..analysis.access import fill_regions
from .tensor import ComputeOp, PlaceholderOp, Tensor, TensorLoad


class _Names:
    """Fresh names following TVM's rule: ``x``, then ``x_1``, ``x_2``..."""

    def __init__(self):
        self.used: set[str] = set()

    def fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name


def _post_dfs(args: list[Tensor]) -> list:
    """The operations the arguments depend on, inputs before their users,
    in the order a depth-first walk from the arguments meets them."""
    order: list = []
    visiting: list = []

    def visit(op):
        if any(op is o for o in order):
            return
        if any(op is o for o in visiting):
            raise NodeError(f"the te program has a cycle through {op.name}")
        visiting.append(op)
        for t in op.input_tensors:
            visit(t.op)
        visiting.pop()
        order.append(op)

    for t in args:
        visit(t.op)
    return order


def create_prim_func(ops, index_dtype_override=None) -> PrimFunc:
    """The PrimFunc computing the te program whose inputs and outputs are
    the tensors ``ops`` (in parameter order)."""
    if index_dtype_override is not None:
        raise NodeError("create_prim_func: index_dtype_override is not supported")
    if isinstance(ops, Tensor):
        ops = [ops]
    args = list(ops)
    for k, t in enumerate(args):
        if not isinstance(t, Tensor):
            raise NodeError(f"create_prim_func takes te tensors, got {type(t).__name__}")
        if any(t.op is u.op for u in args[:k]):
            raise NodeError(f"tensor {t.name} appears twice among the arguments")
    order = _post_dfs(args)
    names = _Names()
    block_names = _Names()
    # symbolic sizes keep their names
    for op in order:
        for d in op.shape:
            for n in walk(d):
                if isinstance(n, Var):
                    names.used.add(n.name)

    buffers: list[tuple[Tensor, Buffer]] = []

    def buffer_of(tensor: Tensor) -> Buffer:
        for t, b in buffers:
            if t.op is tensor.op and t.value_index == tensor.value_index:
                return b
        raise NodeError(f"tensor {tensor.name} is used before it is computed")

    def is_arg(op) -> bool:
        return any(t.op is op for t in args)

    stmts = []
    root_alloc = []
    for op in order:
        if isinstance(op, PlaceholderOp):
            if not is_arg(op):
                raise NodeError(f"placeholder {op.name} is read by the program but is not one of "
                                "the arguments of create_prim_func")
            buffers.append((op.output(0), Buffer(names.fresh(op.name), list(op.shape), op.dtype)))
        elif isinstance(op, ComputeOp):
            buf = Buffer(names.fresh(op.name), list(op.shape), op.dtype)
            buffers.append((op.output(0), buf))
            if not is_arg(op):
                root_alloc.append(buf)
            stmts.append(_compute_stmt(op, buf, buffer_of, names, block_names))
        else:
            raise NodeError(f"create_prim_func: unsupported operation {type(op).__name__}")

    params, buffer_map = [], {}
    for t in args:
        buf = buffer_of(t)
        param = Var(names.fresh(f"var_{buf.name}"), "handle")
        params.append(param)
        buffer_map[param] = buf
    body = stmts[0] if len(stmts) == 1 else SeqStmt(stmts)
    root = BlockRealize([], True, Block([], [], [], "root", body, alloc_buffers=root_alloc))
    func = PrimFunc(params, root, buffer_map=buffer_map,
                    attrs={"global_symbol": "main", "tir.noalias": True})
    return fill_regions(func)


def _compute_stmt(op: ComputeOp, buf: Buffer, buffer_of, names: _Names, block_names: _Names):
    axes = list(op.axis) + list(op.reduce_axis)
    axis_vars = {iv.var for iv in axes}
    for iv in axes:
        for e in (iv.dom.min, iv.dom.extent):
            for n in walk(e):
                if isinstance(n, Var) and n in axis_vars:
                    raise NodeError(f"compute {op.name}: the range of axis {iv.var.name} depends on "
                                    f"axis {n.name}; such nested domains are not supported")
    loop_vars, iter_vars, mapping = [], [], {}
    for iv in axes:
        bits = max(iv.dom.min.dtype.bits, iv.dom.extent.dtype.bits)
        index_type = DataType(f"int{bits}")
        loop_var = Var(names.fresh(iv.var.name), index_type)
        block_var = Var(names.fresh(f"v_{iv.var.name}"), index_type)
        dom = Range(_as_index(iv.dom.min, index_type), _as_index(iv.dom.extent, index_type))
        loop_vars.append((loop_var, dom))
        iter_vars.append(IterVar(dom, block_var, iv.iter_type, iv.thread_tag))
        mapping[iv.var] = block_var
    bindings: list[PrimExpr] = [lv for lv, _ in loop_vars]
    if not axes:
        # a zero-dimensional compute still gets one (trivial) block variable
        iter_vars.append(IterVar(Range(IntImm("int32", 0), IntImm("int32", 1)),
                                 Var(names.fresh("vi"), "int32"), "DataPar"))
        bindings.append(IntImm("int32", 0))
    store_indices = [mapping[iv.var] for iv in op.axis]

    def lower_expr(e: PrimExpr) -> PrimExpr:
        def pre(n):
            if isinstance(n, Var):
                return mapping.get(n)
            if isinstance(n, TensorLoad):
                return BufferLoad(buffer_of(n.tensor), [lower_expr(i) for i in n.indices])
            return None
        return transform(e, lambda n: n, pre=pre)

    body_expr = op.body[0]
    init = None
    if isinstance(body_expr, Reduce):
        reducer = body_expr.combiner
        identity = lower_expr(reducer.identity)
        source = lower_expr(body_expr.source)
        if not (isinstance(body_expr.condition, IntImm) and body_expr.condition.value == 1):
            source = if_then_else(lower_expr(body_expr.condition), source, identity)
        value = reducer(BufferLoad(buf, store_indices), source)
        init = BufferStore(buf, identity, store_indices)
    else:
        value = lower_expr(body_expr)
    if value.dtype != buf.dtype:
        raise NodeError(f"compute {op.name}: the body has dtype {value.dtype}, the tensor {buf.dtype}")
    store = BufferStore(buf, value, store_indices)
    # reads and writes are filled in at the end, for the whole function at once
    block = Block(iter_vars, [], [], block_names.fresh(op.name), store, init=init,
                  annotations=op.attrs)
    stmt = BlockRealize(bindings, True, block)
    for loop_var, dom in reversed(loop_vars):
        stmt = For(loop_var, dom.min, dom.extent, ForKind.SERIAL, stmt)
    return stmt


def _as_index(e: PrimExpr, dtype: DataType) -> PrimExpr:
    if e.dtype == dtype:
        return e
    if isinstance(e, IntImm):
        return IntImm(dtype, e.value)
    return e.astype(dtype)


__all__ = ["create_prim_func"]
