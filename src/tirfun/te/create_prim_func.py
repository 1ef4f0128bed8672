"""``te.create_prim_func``: a te program as a schedulable PrimFunc.

The result has the shape TVM gives it: one handle parameter ``var_<name>``
per argument tensor, viewed as a buffer named after the tensor (and a scalar
parameter per te variable among the arguments); the function attributes
``global_symbol = "main"`` and ``tir.noalias``; an implicit root block
allocating the tensors that are not arguments; and per compute a nest of
serial loops named after its axes around one block named after the compute,
whose iteration variables are the axes prefixed ``v_``, with the compute's
attrs as its annotations, the regions it reads and writes (inferred as the
TVMScript parser infers omitted ones) and, for a reduction, an ``init``
storing the reducer's identity (or the reduction's ``init=`` values).

A compute with several plain outputs gets one loop nest holding one block
per output, named ``<name>.v<k>`` after its tensor; a tuple reduction (an
argmax) gets one block writing every output, whose body binds each combined
value with ``LetStmt`` before storing them all, so every value is computed
from the old ones.

te variables are objects, not names: a size ``te.var("k")`` and a
reduction axis named ``"k"`` are two variables. In the PrimFunc, where a
name is an identity, each gets a name of its own, the first one met keeping
its name and later ones suffixed as TVM prints them (``k``, ``k_1``): the
scalar arguments first, then the sizes in the argument tensors' shapes,
then loops and block variables compute by compute.

``index_dtype_override="int64"`` makes every index (shapes, loop and block
variables, buffer indices) that integer type, as TVM's does. A compute
attribute ``layout_free_placeholders`` naming argument tensors becomes the
function attribute ``layout_free_buffers`` (their parameter positions); one
naming other tensors stays on the block, holding their buffers.
"""

from __future__ import annotations

import attrs
from pyrsistent import PVector

from ..analysis.access import fill_regions
from ..analysis.block_names import unique_block_name
from ..analysis.nesting import MAX_DEPTH, nesting_depth
from ..analysis.traversal import iter_children, transform, walk
from ..errors import NodeError
from ..nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferStore, Cast, For, ForKind, IntImm,
    IterVar, LetStmt, PrimExpr, PrimFunc, Range, SeqStmt, Stmt, Var,
)
from ..nodes.dtype import DataType
from ..tir.op import if_then_else
from .reduce import Reduce
from .extern import ExternOp
from .tensor import ComputeOp, PlaceholderOp, Tensor, TensorLoad

#: the compute attribute whose argument tensors become ``layout_free_buffers``
LAYOUT_FREE_PLACEHOLDERS = "layout_free_placeholders"
#: compute attributes of TVM's older schedulers, dropped as TVM drops them
_DROPPED_ATTRS = ("const_matrix", "auto_scheduler_simplify_const_tensor_indices", "workload")


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


class _BlockNames:
    """Block names made unique by the parser's rule
    (:func:`~tirfun.analysis.block_names.unique_block_name`). Unlike a
    repeat in TVMScript, a repeated compute name is no ambiguity: as TVM's
    name supply does, the first block is ``main``, the next ``main_1``, and
    ``get_block("main")`` finds the first."""

    def __init__(self):
        self.used: set[str] = set()

    def fresh(self, base: str) -> str:
        name = unique_block_name(base, self.used)
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


class _Context:
    """What one call of create_prim_func has decided so far: the names in
    use, the PrimFunc variable of every te variable, the buffer of every
    tensor, and the index dtype (None: each index keeps its own)."""

    def __init__(self, args: list, index_dtype: DataType | None):
        self.args = args
        self.names = _Names()
        self.block_names = _BlockNames()
        self.index_dtype = index_dtype
        # te variable -> its PrimFunc variable; keyed by the te variable
        # itself, whose equality is identity
        self.vars: dict[Var, Var] = {}
        self.buffers: list[tuple[Tensor, Buffer]] = []
        # buffers of te.extern -> theirs in the PrimFunc
        self.extern_buffers: dict[Buffer, Buffer] = {}
        # tensors read by a te.extern, with the extern's view of them: the
        # tensor's buffer is that view, as in TVM
        self.views: list[tuple[Tensor, Buffer]] = []
        self.extern_blocks: set[str] = set()

    def bind(self, v: Var) -> Var:
        """The PrimFunc variable of te variable ``v``, named on first use."""
        out = self.vars.get(v)
        if out is None:
            dtype = v.dtype
            if self.index_dtype is not None and dtype.is_integer and dtype.lanes == 1:
                dtype = self.index_dtype
            out = Var(self.names.fresh(v.name), dtype)
            self.vars[v] = out
        return out

    def bind_free_vars(self, e: PrimExpr) -> None:
        for n in walk(e):
            if isinstance(n, Var):
                self.bind(n)

    def is_arg(self, tensor: Tensor) -> bool:
        return any(t.op is tensor.op and t.value_index == tensor.value_index
                   for t in self.args if isinstance(t, Tensor))

    def buffer_of(self, tensor: Tensor) -> Buffer:
        for t, b in self.buffers:
            if t.op is tensor.op and t.value_index == tensor.value_index:
                return b
        raise NodeError(f"tensor {tensor.name} is used before it is computed")

    def declare(self, tensor: Tensor, view: Buffer | None = None) -> Buffer:
        """The buffer of ``tensor``: the lowered ``view`` (an extern's
        buffer) when given or known, else a new buffer of its shape."""
        if view is None:
            view = next((b for t, b in self.views
                         if t.op is tensor.op and t.value_index == tensor.value_index), None)
        if view is not None:
            buf = self.extern_buffer(view, self.is_arg(tensor))
        else:
            shape = [self.lower(d, index=True) for d in tensor.shape]
            buf = Buffer(self.names.fresh(tensor.buffer_name), shape, tensor.dtype)
        self.buffers.append((tensor, buf))
        return buf

    def extern_buffer(self, tb: Buffer, arg: bool = False) -> Buffer:
        """The PrimFunc buffer of a buffer built for te.extern, its pointer
        a variable of its own: for an argument (``arg``), the handle
        parameter itself, as a parsed ``A.data`` is. An allocation starts
        its memory: a variable element offset is 0 there."""
        out = self.extern_buffers.get(tb)
        if out is None:
            name = self.names.fresh(tb.name)
            data = None
            if tb.data is not None:
                data = Var(self.names.fresh(f"var_{name}" if arg else f"{name}_data"), tb.data.dtype)
                self.vars[tb.data] = data
            offset = tb.elem_offset
            if not arg and isinstance(offset, Var) and not any(offset is a for a in self.args):
                self.vars[offset] = IntImm(self.index_dtype or offset.dtype, 0)
                offset = None
            out = attrs.evolve(
                tb, name=name, data=data,
                shape=[self.lower(d, index=True) for d in tb.shape],
                strides=[self.lower(d, index=True) for d in tb.strides],
                elem_offset=None if offset is None else self.lower(offset, True))
            self.extern_buffers[tb] = out
        return out

    def lower(self, e: PrimExpr, index: bool = False, subst: dict | None = None,
              where: str = "") -> PrimExpr:
        """``e`` in PrimFunc terms: te variables replaced by theirs (those of
        ``subst`` by its expressions, already in PrimFunc terms), tensor loads
        by buffer loads. With an index dtype, an index expression
        (``index=True``) is made of that integer type, and a variable whose
        dtype changed is cast back where it is used as a value."""
        subst = subst or {}

        def variable(n: Var) -> PrimExpr:
            new = subst.get(n)
            if new is None:
                new = self.vars.get(n)
            if new is None and type(n) is Var:
                return n  # a variable of the PrimFunc's own, such as a loop of an extern's body
            if new is None:
                raise NodeError(f"{where or 'the te program'} uses the variable {n.name}, which "
                                "is neither an axis, nor a size of a tensor, nor an argument "
                                "of create_prim_func")
            if not index and new.dtype != n.dtype:
                return Cast(n.dtype, new)
            return new

        def pre(n):
            if isinstance(n, Var):
                return variable(n)
            if isinstance(n, TensorLoad):
                return BufferLoad(self.buffer_of(n.tensor),
                                  [self.lower(i, True, subst, where) for i in n.indices])
            if isinstance(n, Buffer):
                return self.extern_buffers.get(n)
            return None

        def post(n):
            if index and self.index_dtype is not None:
                return self.as_index(n)
            return n

        return transform(e, post, pre=pre)

    def as_index(self, e: PrimExpr) -> PrimExpr:
        """``e`` of the index dtype, when it is a scalar integer of another."""
        dt = e.dtype
        if self.index_dtype is None or not dt.is_integer or dt.lanes != 1 or dt == self.index_dtype:
            return e
        if isinstance(e, IntImm):
            return IntImm(self.index_dtype, e.value)
        return Cast(self.index_dtype, e)


def _check_nesting(op: ComputeOp) -> None:
    """Refuse a body that would nest deeper than tirfun takes a program
    (its loops and block above it included): the function would neither
    lower nor print and parse back."""
    room = MAX_DEPTH - len(op.axis) - len(op.reduce_axis) - 8
    for e in op.body:
        depth = nesting_depth(e, stop=room)
        if depth > room:
            raise NodeError(
                f"create_prim_func: the expression of {op.name} nests more than {room} levels deep "
                f"(tirfun takes programs of at most {MAX_DEPTH} levels, loops and blocks included); "
                "compute it in several stages, each summing a part")


def create_prim_func(ops, index_dtype_override=None) -> PrimFunc:
    """The PrimFunc computing the te program whose inputs and outputs are
    the tensors ``ops`` (in parameter order); a te variable among ``ops``
    becomes a scalar parameter. ``index_dtype_override`` (``"int64"``)
    makes every index that integer type."""
    index_dtype = None
    if index_dtype_override is not None:
        index_dtype = DataType(index_dtype_override)
        if not index_dtype.is_integer or index_dtype.lanes != 1:
            raise NodeError(f"create_prim_func: index_dtype_override must be an integer type, "
                            f"got {index_dtype_override!r}")
    if isinstance(ops, (Tensor, Var)):
        ops = [ops]
    args = list(ops)
    for k, t in enumerate(args):
        if isinstance(t, Var):
            if any(t is u for u in args[:k]):
                raise NodeError(f"variable {t.name} appears twice among the arguments")
            continue
        if not isinstance(t, Tensor):
            raise NodeError(f"create_prim_func takes te tensors and variables, got {type(t).__name__}")
        if any(isinstance(u, Tensor) and t.op is u.op and t.value_index == u.value_index
               for u in args[:k]):
            raise NodeError(f"tensor {t.name} appears twice among the arguments")
    tensors = [t for t in args if isinstance(t, Tensor)]
    order = _post_dfs(tensors)
    ctx = _Context(args, index_dtype)
    for op in order:
        if isinstance(op, ExternOp):
            for t, view in zip(op.inputs, op.input_placeholders):
                if not any(u.op is t.op and u.value_index == t.value_index for u, _ in ctx.views):
                    ctx.views.append((t, view))
    # names of the te variables, in the order TVM's printer defines them
    for a in args:
        if isinstance(a, Var):
            ctx.bind(a)
    for t in tensors:
        for d in t.shape:
            ctx.bind_free_vars(d)
    for op in order:
        for k in range(getattr(op, "num_outputs", 1)):
            for d in op.output(k).shape:
                ctx.bind_free_vars(d)
        for view in [*getattr(op, "input_placeholders", ()), *getattr(op, "output_placeholders", ())]:
            offset = [] if view.elem_offset is None else [view.elem_offset]
            for e in [*view.shape, *view.strides, *offset]:
                ctx.bind_free_vars(e)

    stmts = []
    root_alloc = []
    for op in order:
        if isinstance(op, PlaceholderOp):
            if not ctx.is_arg(op.output(0)):
                raise NodeError(f"placeholder {op.name} is read by the program but is not one of "
                                "the arguments of create_prim_func")
            ctx.declare(op.output(0))
        elif isinstance(op, ComputeOp):
            _check_nesting(op)
            bufs = []
            for k in range(op.num_outputs):
                buf = ctx.declare(op.output(k))
                bufs.append(buf)
                if not ctx.is_arg(op.output(k)):
                    root_alloc.append(buf)
            stmts.append(_compute_stmt(op, bufs, ctx))
        elif isinstance(op, ExternOp):
            for k in range(op.num_outputs):
                buf = ctx.declare(op.output(k), op.output_placeholders[k])
                if not ctx.is_arg(op.output(k)):
                    root_alloc.append(buf)
            stmts.append(_extern_stmt(op, ctx))
        else:
            raise NodeError(f"create_prim_func: unsupported operation {type(op).__name__}")

    params, buffer_map = [], {}
    for a in args:
        if isinstance(a, Var):
            params.append(ctx.vars[a])
            continue
        buf = ctx.buffer_of(a)
        # an extern's buffer points at the parameter itself (its data is it)
        param = buf.data if buf.data is not None else Var(ctx.names.fresh(f"var_{buf.name}"), "handle")
        params.append(param)
        buffer_map[param] = buf
    body = stmts[0] if len(stmts) == 1 else SeqStmt(stmts)
    pending = ctx.block_names.used - ctx.extern_blocks
    if _needs_root(body, root_alloc):
        body = BlockRealize([], True, Block([], [], [], "root", body, alloc_buffers=root_alloc))
    else:
        pending = pending - {body.block.name_hint}  # a root block keeps no regions, as in TVM
    func = PrimFunc(params, body, buffer_map=buffer_map,
                    attrs={"global_symbol": "main", "tir.noalias": True})
    # regions are inferred for the computes; an extern's block keeps none, as in TVM
    func = _drop_unused_pointers(func, root_alloc)
    pending = {name: (True, True) for name in pending}
    func = _layout_free_buffers(fill_regions(func, pending))
    return func


def _drop_unused_pointers(func: PrimFunc, allocs: list[Buffer]) -> PrimFunc:
    """An allocated extern buffer keeps a pointer variable of its own only
    where a statement uses it (``outs[0].data``); otherwise it is a plain
    allocation, as TVMScript writes one."""
    candidates = {b.data.name for b in allocs if b.data is not None}
    if not candidates:
        return func
    used = set()
    for n in walk(func.body):
        for c in iter_children(n):
            if type(c) is Var and c.name in candidates and not (isinstance(n, Buffer) and c is n.data):
                used.add(c.name)
    plain = {b: attrs.evolve(b, data=None) for b in allocs
             if b.data is not None and b.data.name not in used}
    if not plain:
        return func
    return transform(func, lambda n: plain.get(n, n) if isinstance(n, Buffer) else n)


def _needs_root(body: Stmt, root_alloc: list) -> bool:
    """Whether the function needs a root block around ``body``, by the rule
    TVM completes a function with: allocations to hold, or a body that is
    not one opaque block (a single extern's block is the root itself)."""
    if root_alloc or not isinstance(body, BlockRealize):
        return True
    return bool(body.block.iter_vars)


def _axis_levels(axes: list) -> list[int]:
    """The nesting level of each axis, as TVM's create_prim_func nests
    them: 0 for an axis whose range mentions no other axis, else one more
    than the deepest axis its range mentions."""
    depth: dict[int, int] = {}

    def level(k: int, visiting: tuple = ()) -> int:
        if k in depth:
            return depth[k]
        if k in visiting:
            raise NodeError(f"the ranges of the axes {', '.join(axes[i].var.name for i in visiting)} "
                            "depend on each other")
        out = 0
        for e in (axes[k].dom.min, axes[k].dom.extent):
            for n in walk(e):
                for j, a in enumerate(axes):
                    if isinstance(n, Var) and n is a.var:
                        out = max(out, level(j, (*visiting, k)) + 1)
        depth[k] = out
        return out

    return [level(k) for k in range(len(axes))]


class _Scope:
    """One level of a compute's nest: its loops, and the block variables of
    the block at that level with their bindings. ``origin`` says which axis
    each block variable stands for (None for the trivial one); ``remap``
    maps each axis defined so far to its variable at this level."""

    def __init__(self):
        self.loops: list[tuple[Var, Range]] = []
        self.iters: list[IterVar] = []
        self.bindings: list[PrimExpr] = []
        self.origin: list[int | None] = []
        self.remap: dict[Var, Var] = {}

    def add(self, axes: list, k: int | None, iv: IterVar, binding: PrimExpr) -> None:
        self.iters.append(iv)
        self.bindings.append(binding)
        self.origin.append(k)
        if k is not None:
            self.remap[axes[k].var] = iv.var


def _scopes(op: ComputeOp, axes: list, ctx: _Context) -> list[_Scope]:
    """The levels of the compute's nest, outermost first: an axis gets its
    loop at its level, and each deeper block rebinds it to the variable of
    the level above (a range of extent 1), as TVM nests them."""
    where = f"compute {op.name}"
    levels = _axis_levels(axes)
    scopes: list[_Scope] = []
    top = max(levels, default=0)
    for i in range(top + 1):
        cur = _Scope()
        prev = scopes[-1].remap if scopes else {}
        for k, iv in enumerate(axes):
            bits = max(iv.dom.min.dtype.bits, iv.dom.extent.dtype.bits)
            index_type = ctx.index_dtype or DataType(f"int{bits}")
            if levels[k] == i:
                loop_var = Var(ctx.names.fresh(iv.var.name), index_type)
                dom = Range(_as_type(ctx.lower(iv.dom.min, True, prev, where), index_type),
                            _as_type(ctx.lower(iv.dom.extent, True, prev, where), index_type))
                cur.loops.append((loop_var, dom))
                binding = loop_var
            elif levels[k] < i:
                binding = prev[iv.var]
                dom = Range(binding, IntImm(index_type, 1))
            else:
                continue
            # the innermost block's variables are named afresh for each of its blocks
            name = f"v_{iv.var.name}" if i == top else ctx.names.fresh(f"v_{iv.var.name}")
            cur.add(axes, k, IterVar(dom, Var(name, index_type), iv.iter_type, iv.thread_tag), binding)
        scopes.append(cur)
    if not scopes[-1].iters:
        # the innermost block has at least one (trivial) block variable
        scopes[-1].add(axes, None, IterVar(Range(IntImm("int32", 0), IntImm("int32", 1)),
                                           Var("vi", "int32"), "DataPar"), IntImm("int32", 0))
    return scopes


def _compute_stmt(op: ComputeOp, bufs: list[Buffer], ctx: _Context) -> Stmt:
    axes = list(op.axis) + list(op.reduce_axis)
    where = f"compute {op.name}"
    scopes = _scopes(op, axes, ctx)
    leaf = scopes[-1]
    mapping: dict[Var, Var] = {}

    def leaf_block(name: str, make_body) -> BlockRealize:
        # every block gets block variables of its own, with fresh names
        iter_vars = []
        mapping.clear()
        for k, iv in zip(leaf.origin, leaf.iters):
            new = attrs.evolve(iv.var, name=ctx.names.fresh(iv.var.name))
            iter_vars.append(attrs.evolve(iv, var=new))
            if k is not None:
                mapping[axes[k].var] = new
        store_indices = [mapping[iv.var] for iv in op.axis]
        body, init = make_body(store_indices)
        block = Block(iter_vars, [], [], ctx.block_names.fresh(name), body, init=init,
                      annotations=_annotations(op, ctx))
        return BlockRealize(list(leaf.bindings), True, block)

    def lower(e: PrimExpr, extra: dict | None = None) -> PrimExpr:
        return ctx.lower(e, subst=mapping | (extra or {}), where=where)

    def check_dtype(value: PrimExpr, buf: Buffer) -> None:
        if value.dtype != buf.dtype:
            raise NodeError(f"compute {op.name}: the body has dtype {value.dtype}, the tensor "
                            f"{buf.dtype}")

    first = op.body[0]
    reduce = first if isinstance(first, Reduce) else None
    # Where a reduction is initialised. With a reduction axis at the
    # outermost level, that level's block's T.init does it. When every
    # reduction axis depends on a spatial one, the block of the level above
    # the first reduction loop stores the initial value before that loop:
    # it runs for every spatial point, even where the reduction ranges are
    # empty. TVM instead gives each block with a reduction axis an init;
    # but there the sum over an empty range is never initialised, and a
    # deeper init, whose rebound outer reduction variable is always at its
    # minimum, resets the sum at each value of the outer axis.
    init_level = min((i for i, sc in enumerate(scopes)
                      if any(iv.iter_type == "CommReduce" for iv in sc.iters)),
                     default=0)

    def init_stores(store_indices, subst) -> Stmt:
        # where each value starts: the reduction's init= values, else the
        # identity. (TVM's create_prim_func stores the identity even where
        # an init is given, dropping it; tirfun starts from it.)
        start = reduce.init or reduce.combiner.identity_element
        values = [ctx.lower(i, subst=subst, where=where) for i in start]
        return _seq([BufferStore(b, v, store_indices) for b, v in zip(bufs, values)])

    if reduce is not None:
        def reduction(store_indices):
            reducer = reduce.combiner
            identity = [lower(i) for i in reducer.identity_element]
            source = [lower(s) for s in reduce.source]
            if not (isinstance(reduce.condition, IntImm) and reduce.condition.value == 1):
                cond = lower(reduce.condition)
                source = [if_then_else(cond, s, i) for s, i in zip(source, identity)]
            # the combination, with lhs the stored values and rhs the new ones
            operands = dict(zip(reducer.lhs, (BufferLoad(b, store_indices) for b in bufs)))
            operands |= dict(zip(reducer.rhs, source))
            values = [lower(r, operands) for r in reducer.result]
            for v, b in zip(values, bufs):
                check_dtype(v, b)
            init = init_stores(store_indices, dict(mapping)) if len(scopes) == 1 else None
            if len(bufs) == 1:
                return BufferStore(bufs[0], values[0], store_indices), init
            # every value is combined from the old ones before any is stored
            temps = [Var(ctx.names.fresh(f"v_{b.name}"), b.dtype) for b in bufs]
            body: Stmt = _seq([BufferStore(b, t, store_indices) for b, t in zip(bufs, temps)])
            for t, v in reversed(list(zip(temps, values))):
                body = LetStmt(t, v, body)
            return body, init

        stmt: Stmt = leaf_block(op.name, reduction)
    else:
        blocks = []
        for k, buf in enumerate(bufs):
            def element(store_indices, k=k, buf=buf):
                value = lower(op.body[k])
                check_dtype(value, buf)
                return BufferStore(buf, value, store_indices), None

            name = op.name if len(bufs) == 1 else op.output(k).name
            blocks.append(leaf_block(name, element))
        stmt = _seq(blocks)
    for i in range(len(scopes) - 1, -1, -1):
        cur = scopes[i]
        if i < len(scopes) - 1:
            how = None
            if reduce is not None and i == init_level == 0:
                how = "init"
            elif reduce is not None and i == init_level - 1:
                how = "prologue"
            stmt = _level_block(op, cur, stmt, init_stores, how, ctx, i + 1)
        for loop_var, dom in reversed(cur.loops):
            stmt = For(loop_var, dom.min, dom.extent, ForKind.SERIAL, stmt)
    return stmt


def _level_block(op: ComputeOp, cur: _Scope, body: Stmt, init_stores, how: str | None,
                 ctx: _Context, level: int) -> BlockRealize:
    """The block of an outer level of a nest (``<name>_l<level>``, as TVM
    names it). ``how`` says whether it initialises the reduction: by its
    T.init (``"init"``), or by storing the initial value before its body
    (``"prologue"``, the level above the first reduction loop)."""
    init = None
    if how is not None:
        store = [cur.remap[iv.var] for iv in op.axis]  # spatial axes are all outermost
        stores = init_stores(store, dict(cur.remap))
        if how == "init":
            init = stores
        else:
            body = SeqStmt([stores, body])
    block = Block(list(cur.iters), [], [], ctx.block_names.fresh(f"{op.name}_l{level}"), body,
                  init=init, annotations=_annotations(op, ctx))
    return BlockRealize(list(cur.bindings), True, block)


def _extern_stmt(op: ExternOp, ctx: _Context) -> Stmt:
    """One opaque block running the extern's statement over the buffers."""
    for t, view in zip(op.inputs, op.input_placeholders):
        if view not in ctx.extern_buffers:
            # another extern's view of this tensor came first: this one reads that buffer
            buf = ctx.buffer_of(t)
            ctx.extern_buffers[view] = buf
            if view.data is not None and buf.data is not None:
                ctx.vars[view.data] = buf.data
    body = ctx.lower(op.body, where=f"extern {op.name}")
    name = ctx.block_names.fresh(op.name)
    ctx.extern_blocks.add(name)
    block = Block([], [], [], name, body, annotations=_annotations(op, ctx))
    return BlockRealize([], True, block)


def _annotations(op, ctx: _Context) -> dict:
    """The compute's attrs as block annotations: tensors become their
    buffers, TVM's old scheduler hints are dropped."""
    out = {}
    for key, value in op.attrs.items():
        if key in _DROPPED_ATTRS:
            continue
        if isinstance(value, Tensor):
            value = ctx.buffer_of(value)
        elif isinstance(value, (list, tuple)):
            value = [ctx.buffer_of(v) if isinstance(v, Tensor) else v for v in value]
        out[key] = value
    return out


def _layout_free_buffers(func: PrimFunc) -> PrimFunc:
    """Argument buffers named by a block's ``layout_free_placeholders`` move
    to the function attribute ``layout_free_buffers`` (their positions)."""
    position = {buf: k for k, p in enumerate(func.params)
                if (buf := func.buffer_map.get(p)) is not None}
    found: set[int] = set()

    def post(n):
        if not isinstance(n, Block) or LAYOUT_FREE_PLACEHOLDERS not in n.annotations:
            return n
        held = n.annotations[LAYOUT_FREE_PLACEHOLDERS]
        held = list(held) if isinstance(held, (PVector, list, tuple)) else [held]
        rest = []
        for b in held:
            if isinstance(b, Buffer) and b in position:
                found.add(position[b])
            else:
                rest.append(b)
        annotations = n.annotations.remove(LAYOUT_FREE_PLACEHOLDERS)
        if rest:
            annotations = annotations.set(LAYOUT_FREE_PLACEHOLDERS, rest)
        return attrs.evolve(n, annotations=annotations)

    body = transform(func.body, post, pre=lambda n: n if not isinstance(n, Stmt) else None)
    if not found:
        return func
    return attrs.evolve(func, body=body).with_attr("layout_free_buffers", sorted(found))


def _seq(stmts: list[Stmt]) -> Stmt:
    return stmts[0] if len(stmts) == 1 else SeqStmt(stmts)


def _as_type(e: PrimExpr, dtype: DataType) -> PrimExpr:
    if e.dtype == dtype:
        return e
    if isinstance(e, IntImm):
        return IntImm(dtype, e.value)
    return e.astype(dtype)


__all__ = ["create_prim_func", "LAYOUT_FREE_PLACEHOLDERS"]
