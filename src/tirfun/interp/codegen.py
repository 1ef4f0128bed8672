"""Translate a PrimFunc, once, into the source of one Python function.

The generated function is plain Python over flat storages (see
:mod:`.semantics`): ``for`` loops for TIR loops, local variables for loop,
block and let variables, and inline arithmetic. Only our own trusted nodes
are turned into source, never user text: every name in the output is
generated here (``x_*`` for variables, ``b_*`` for storages, ``t*`` for
temporaries, ``h_*`` for helpers), and constants are written with ``repr``.

Checks the compiler cannot prove unnecessary stay in the code: bounds
checks on buffer indices, integer wrap-around, block iteration values
inside their domain. Each emitted line remembers the statement it belongs
to, so an error raised while running names the statement.
"""

from __future__ import annotations

from typing import Any

import attrs
from pyrsistent import pmap

from ..analysis.threads import launched_iter_var
from ..errors import InterpError
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, Allocate, And, AssertStmt, AttrStmt, Block, BlockRealize,
    Broadcast, Buffer, BufferLoad, BufferStore, Call, Cast, DeclBuffer, Div, Evaluate, FloatImm,
    FloorDiv, FloorMod, For, GlobalVar, IfThenElse, IntImm, IterVarType, Let, LetStmt, Max, Min,
    Mod, Mul, Not, Or, PrimFunc, Ramp, Select, SeqStmt, Shuffle, StringImm, Sub, Var, While,
    AllocateConst, BufferRealize, Prefetch,
)
from ..nodes.dtype import DataType
from ..analysis.arith import const_bound as ivs
from ..tir.intrinsics import refusal
from ..tir.llvm_x86 import X86, intrinsic_args, signature_problem
from ..tir.legalize import LEGALIZED, legalize
from .intrinsics import EXTERN_FLOAT, FLOAT_BINARY, FLOAT_PREDICATES, FLOAT_UNARY, LLVM_NAMES
from .semantics import MEMORYVIEW_FORMATS, const_float, rounder_name, wrap_code

# Python limits a function to 20 nested loop blocks and 100 indentation
# levels; deeper nests continue in a separate generated function.
_MAX_LOOP_DEPTH = 14
_MAX_INDENT = 60

_BOOL = DataType("bool")


@attrs.frozen
class Value:
    """A compiled scalar expression: Python source, its TIR dtype (one lane),
    whether the Python value is already a value of that dtype (floats
    computed in double are not, until rounded), and for integers an interval
    holding every value it can take."""

    code: str
    dtype: DataType
    exact: bool = True
    iv: tuple[int, int] | None = None
    below: frozenset = frozenset()  # sources of values this one is known to be below (and >= 0)


@attrs.frozen
class VarInfo:
    """A variable in scope: its local, its interval, locals it is below."""

    py: str
    iv: tuple[int, int] | None
    below: frozenset = frozenset()


@attrs.frozen
class Access:
    """How to address one buffer: its storage, and per dimension the extent
    and the stride, each an int constant or the name of a Python local."""

    name: str
    storage: str
    dtype: DataType
    shape: tuple
    strides: tuple
    offset: Any
    list_storage: bool


@attrs.frozen
class DataInfo:
    """A data pointer (``Allocate``'s variable or a buffer's ``data``): the
    storage it names and its element type (None when only known at run time)."""

    storage: str
    dtype: DataType | None


@attrs.frozen
class Env:
    """What is in scope: variables, buffers, data pointers, and the Python
    locals holding them (passed on when code continues in a new function)."""

    vars: Any = pmap()
    buffers: Any = pmap()
    data: Any = pmap()
    live: tuple = ()
    block: str | None = None

    def bind_var(self, var: Var, py, iv, below: frozenset = frozenset()) -> "Env":
        """In scope: ``var`` held in the local ``py`` (a tuple of one local per
        lane for a vector variable), with its interval and known upper bounds."""
        names = py if isinstance(py, tuple) else (py,)
        return attrs.evolve(self, vars=self.vars.set(var, VarInfo(py, iv, below)),
                            live=self._live(*names))

    def bind_buffer(self, buffer: Buffer, access: Access, extra_live=()) -> "Env":
        """In scope: ``buffer`` addressed through ``access``."""
        return attrs.evolve(self, buffers=self.buffers.set(buffer, access),
                            live=self._live(*extra_live))

    def bind_data(self, var: Var, info: DataInfo) -> "Env":
        """In scope: the data pointer ``var`` naming a storage."""
        return attrs.evolve(self, data=self.data.set(var, info), live=self._live(info.storage))

    def _live(self, *names) -> tuple:
        """The live locals plus ``names`` (Python identifiers only, no repeats)."""
        out = self.live
        for n in names:
            if isinstance(n, str) and n.isidentifier() and n not in out:
                out = out + (n,)
        return out


@attrs.frozen
class ParamSpec:
    """One parameter of the compiled function, for the argument binder."""

    var: Var
    buffer: Buffer | None


@attrs.frozen
class LineInfo:
    """What a generated line belongs to: the statement, the enclosing block,
    and the variables in scope (Python local -> TIR name)."""

    stmt: Any
    block: str | None
    scope: tuple


class _Function:
    """The lines of one generated function and what each belongs to."""

    def __init__(self, header: str):
        self.lines = [header]
        self.meta: list[LineInfo | None] = [None]


def is_list_storage(dtype: DataType) -> bool:
    """Element types held as a list of Python floats (no memoryview format)."""
    return str(dtype.element_of) not in MEMORYVIEW_FORMATS


class Compiler:
    """Builds the Python source of one PrimFunc. Used once per function."""

    def __init__(self, func: PrimFunc):
        self.func = func
        self.counter = 0
        self.names: dict[str, int] = {}
        self.used: set[str] = set()
        self.depth = 0        # nesting of the expression being compiled
        self.no_spill = 0     # > 0 where sub-expressions must not move to statements
        self.functions: list[_Function] = []
        self.cur: _Function | None = None
        self.indent = 0
        self.loop_depth = 0
        self.ctx: LineInfo | None = None
        self.has_return = False

    # ------------------------------------------------------------------ names
    def fresh(self, base: str) -> str:
        """A Python local name from ``base`` not used before in this function."""
        n = self.names.get(base, 0)
        name = base if n == 0 else f"{base}_{n}"
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.names[base] = n + 1
        self.used.add(name)
        return name

    def temp(self) -> str:
        """A fresh temporary name."""
        self.counter += 1
        return f"t{self.counter}"

    def var_name(self, var: Var) -> str:
        """A fresh local for a TIR variable."""
        return self.fresh(f"x_{var.name}")

    # ------------------------------------------------------------------ output
    def line(self, text: str) -> None:
        """Emit one line of source at the current indentation."""
        self.cur.lines.append("    " * self.indent + text)
        self.cur.meta.append(self.ctx)

    def set_ctx(self, stmt, env: Env) -> None:
        """Record what the next emitted lines belong to (for error messages)."""
        # every variable in scope, by the local holding it (a block variable
        # bound to a loop variable shares its local)
        order = {py: k for k, py in enumerate(env.live)}
        pairs = [(info.py, var.name) for var, info in env.vars.items() if info.py in order]
        pairs.sort(key=lambda p: (order[p[0]], p[1]))
        self.ctx = LineInfo(stmt, env.block, tuple(pairs))

    # ------------------------------------------------------------------ entry
    def compile(self) -> tuple[str, list, list[ParamSpec], list[Var]]:
        """Return (source, line table, parameters, free variables to bind)."""
        func = self.func
        params: list[ParamSpec] = []
        free: list[Var] = []
        env = Env()
        storage_names = []
        for p in func.params:
            buffer = func.buffer_map.get(p)
            params.append(ParamSpec(p, buffer))
            if buffer is None and not p.dtype.is_handle:
                if p not in free:
                    free.append(p)
        for spec in params:
            if spec.buffer is not None:
                for e in list(spec.buffer.shape) + list(spec.buffer.strides) + [spec.buffer.elem_offset]:
                    if isinstance(e, Var) and e not in free:
                        free.append(e)
        # free variables bound by the binder, in a fixed order
        for v in free:
            py = self.var_name(v)
            iv = ivs.full(v.dtype) if (v.dtype.is_integer or v.dtype.is_bool) else None
            if any(v == d for spec in params if spec.buffer is not None for d in spec.buffer.shape):
                iv = (0, iv[1]) if iv is not None else None  # sizes are not negative
            env = env.bind_var(v, py, iv)
        main = _Function("def h_kernel(h_storages, h_values, h_shapes):")
        self.functions.append(main)
        self.cur = main
        self.indent = 1
        self.set_ctx(None, env)
        for spec in params:
            if spec.buffer is None and spec.var.dtype.is_handle:
                py = self.fresh(f"b_{spec.var.name}")
                storage_names.append(py)
                env = env.bind_data(spec.var, DataInfo(py, None))
            elif spec.buffer is not None:
                py = self.fresh(f"b_{spec.buffer.name}")
                storage_names.append(py)
        if storage_names:
            self.line(f"{', '.join(storage_names)}, = h_storages")
        if free:
            self.line(f"{', '.join(env.vars[v].py for v in free)}, = h_values")
        env = self.bind_param_buffers(params, storage_names, env)
        self.stmt(func.body, env)
        self.line("return None")
        source_parts = []
        table: list[LineInfo | None] = []
        for f in reversed(self.functions):  # helpers first, then the kernel
            source_parts.extend(f.lines)
            table.extend(f.meta)
            source_parts.append("")
            table.append(None)
        return "\n".join(source_parts) + "\n", table, params, free

    def bind_param_buffers(self, params, storage_names, env: Env) -> Env:
        index = 0
        for k, spec in enumerate(params):
            if spec.buffer is None:
                if spec.var.dtype.is_handle:
                    index += 1
                continue
            buf = spec.buffer
            storage = storage_names[index]
            index += 1
            shape = []
            for dim_i, d in enumerate(buf.shape):
                if isinstance(d, IntImm):
                    shape.append(d.value)
                elif isinstance(d, Var):
                    shape.append(env.vars[d].py)
                else:
                    # a composite size: check it against the argument's shape
                    v = self.expr(d, env)
                    local = self.fresh("s_dim")
                    self.line(f"{local} = h_shapes[{k}][{dim_i}]")
                    self.line(f"if {local} != {v.code}: "
                              f"h_shape_mismatch({buf.name!r}, {dim_i}, {local}, {v.code})")
                    shape.append(local)
            _check_strides(buf)
            strides = self.row_major(shape) if not buf.strides else [
                self.const_or_local(self.expr(s, env), env) for s in buf.strides]
            live = [storage] + [s for s in list(shape) + list(strides) if isinstance(s, str)]
            access = Access(buf.name, storage, buf.dtype, tuple(shape), tuple(strides), 0,
                            is_list_storage(buf.dtype))
            env = env.bind_buffer(buf, access, live)
            if buf.data is not None:
                env = env.bind_data(buf.data, DataInfo(storage, buf.dtype))
        return env

    def row_major(self, shape) -> list:
        """Strides of a compact row-major layout; constants where possible."""
        strides = []
        acc: Any = 1
        for k, d in enumerate(reversed(shape)):
            strides.append(acc)
            if k == len(shape) - 1:
                break
            if isinstance(acc, int) and isinstance(d, int):
                acc = acc * d
            else:
                t = self.fresh("s_stride")
                self.line(f"{t} = {acc} * {d}")
                acc = t
        return list(reversed(strides))

    def const_or_local(self, v: Value, env: Env):
        """An int constant, or the name of a local holding the value."""
        if v.iv is not None and v.iv[0] == v.iv[1]:
            return v.iv[0]
        if v.code.isidentifier():
            return v.code
        t = self.fresh("s_val")
        self.line(f"{t} = {v.code}")
        return t

    # ================================================================ statements
    def stmt(self, s, env: Env) -> None:
        method = _STMT_DISPATCH.get(type(s))
        if method is None:
            raise InterpError(f"the interpreter cannot run a {type(s).__name__} statement")
        if self.indent >= _MAX_INDENT and isinstance(s, _COMPOUND):
            self.continue_in_new_function(s, env)
            return
        previous = self.ctx
        self.set_ctx(s, env)
        method(self, s, env)
        self.ctx = previous

    def body(self, s, env: Env) -> None:
        """An indented statement body (never empty in Python)."""
        self.indent += 1
        before = len(self.cur.lines)
        self.stmt(s, env)
        if len(self.cur.lines) == before:
            self.line("pass")
        self.indent -= 1

    def s_seq(self, s: SeqStmt, env: Env) -> None:
        """Statements in order."""
        for child in s.seq:
            self.stmt(child, env)

    def s_store(self, s: BufferStore, env: Env) -> None:
        """``buffer[indices] = value``, lane by lane for vectors (all lanes
        computed first)."""
        access = self.lookup(s.buffer, env)
        lanes = s.value.dtype.lanes
        for index in s.indices:
            lanes = max(lanes, index.dtype.lanes)
        values = []
        for lane in range(lanes):
            v = self.expr(s.value, env, lane)
            code = v.code
            if access.list_storage or (access.dtype.is_float and access.dtype.bits == 64):
                code = self.exact(v)
            if lanes > 1:
                t = self.temp()
                self.line(f"{t} = {code}")
                code = t
            values.append(code)
        if s.predicate is not None:
            # a lane whose mask is false writes nothing and is not bounds-checked
            masks = []
            for lane in range(lanes):
                m = self.expr(s.predicate, env, lane)
                if lanes > 1:
                    t = self.temp()
                    self.line(f"{t} = {m.code}")
                    m = attrs.evolve(m, code=t)
                masks.append(m.code)
            for lane in range(lanes):
                self.line(f"if {masks[lane]}:")
                self.indent += 1
                target = self.address(access, s.indices, env, lane, "store", statement=True)
                self.line(f"{target} = {values[lane]}")
                self.stored(target)
                self.indent -= 1
            return
        for lane in range(lanes):
            target = self.address(access, s.indices, env, lane, "store", statement=True)
            self.line(f"{target} = {values[lane]}")
            self.stored(target)

    def stored(self, target: str) -> None:
        """Called after the line that stores to ``target``; the GPU
        compiler follows it with its race bookkeeping."""

    def s_for(self, s: For, env: Env) -> None:
        """A loop of any kind, as a Python ``for`` (thread-bound, parallel,
        vectorized and unrolled loops run serially)."""
        if self.loop_depth >= _MAX_LOOP_DEPTH or self.indent >= _MAX_INDENT:
            self.continue_in_new_function(s, env)
            return
        lo = self.expr(s.min, env)
        ext = self.expr(s.extent, env)
        py = self.var_name(s.loop_var)
        if lo.iv == (0, 0):
            rng = f"range({ext.code})"
        elif lo.code.isidentifier() or (lo.iv is not None and lo.iv[0] == lo.iv[1]):
            rng = f"range({lo.code}, {lo.code} + {ext.code})"
        else:
            t = self.temp()
            rng = f"range(({t} := {lo.code}), {t} + {ext.code})"
        lo_iv = lo.iv or ivs.full(s.loop_var.dtype)
        ext_iv = ext.iv or ivs.full(s.loop_var.dtype)
        iv = (lo_iv[0], lo_iv[1] + max(ext_iv[1], 1) - 1)
        # for i in range(n): 0 <= i < n, which proves accesses to a dimension of size n
        below = frozenset([ext.code]) if lo.iv == (0, 0) and ext.code.isidentifier() else frozenset()
        self.line(f"for {py} in {rng}:")
        self.loop_depth += 1
        self.body(s.body, env.bind_var(s.loop_var, py, iv, below))
        self.loop_depth -= 1

    def continue_in_new_function(self, s, env: Env) -> None:
        """Emit ``s`` as a separate function of the live locals and call it."""
        name = self.fresh("h_part")
        params = ", ".join(env.live)
        call = f"{name}({params})"
        saved = (self.cur, self.indent, self.loop_depth)
        fn = _Function(f"def {name}({params}):")
        self.functions.append(fn)
        self.cur, self.indent, self.loop_depth = fn, 1, 0
        self.stmt(s, env)
        self.line("return None")
        self.cur, self.indent, self.loop_depth = saved
        t = self.temp()
        self.line(f"{t} = {call}")
        self.line(f"if {t} is not None:")
        self.line(f"    return {t}")

    def s_if(self, s: IfThenElse, env: Env) -> None:
        """``if``/``else``."""
        c = self.expr(s.condition, env)
        self.line(f"if {c.code}:")
        self.body(s.then_case, env)
        if s.else_case is not None:
            self.line("else:")
            self.body(s.else_case, env)

    def s_while(self, s: While, env: Env) -> None:
        """``while``: the condition is computed afresh before every iteration
        (its code may need statements of its own, so it goes inside the loop)."""
        if self.loop_depth >= _MAX_LOOP_DEPTH or self.indent >= _MAX_INDENT:
            self.continue_in_new_function(s, env)
            return
        self.line("while True:")
        self.loop_depth += 1
        self.indent += 1
        c = self.expr(s.condition, env)
        self.line(f"if not ({c.code}):")
        self.line("    break")
        self.indent -= 1
        self.body(s.body, env)
        self.loop_depth -= 1

    def s_evaluate(self, s: Evaluate, env: Env) -> None:
        """An expression statement; ``T.ret(v)`` returns from the function."""
        value = s.value
        if isinstance(value, (IntImm, FloatImm, StringImm)):
            return
        if isinstance(value, Call) and value.op == "tir.ret":
            v = self.expr(value.args[0], env)
            self.line(f"return {self.exact(v)}")
            return
        if isinstance(value, Call) and value.op in _NOOP_CALLS:
            return
        if isinstance(value, Call) and value.op == "tir.mma_fill" and len(value.args) == 3:
            self.mma_fill(value, env)
            return
        v = self.expr(value, env)
        self.line(v.code)

    def mma_fill(self, e: Call, env: Env) -> None:
        """``T.mma_fill(dtype, n, ptr, offset)``: one thread zeroes ``n``
        elements of its fragment from ``offset``, as the CUDA code does."""
        size, ptr, offset = e.args
        info = env.data.get(ptr) if isinstance(ptr, Var) else None
        if info is None:
            raise InterpError("T.mma_fill fills the storage of a data pointer (an allocation or a "
                              f"parameter's data), got {ptr!r}")
        if info.dtype is not None and info.dtype.element_of != e.dtype.element_of:
            raise InterpError(f"T.mma_fill of {e.dtype} values into {ptr.name}, which holds {info.dtype}")
        n = self.expr(size, env)
        o = self.expr(offset, env)
        start, count = self.temp(), self.temp()
        self.line(f"{start}, {count} = {o.code}, {n.code}")
        self.line(f"if {start} < 0 or {count} < 0 or {start} + {count} > len({info.storage}):")
        self.line(f"    h_out_of_bounds('store', {ptr.name!r}, ({start} + {count} - 1,), "
                  f"(len({info.storage}),))")
        zero = "0.0" if e.dtype.is_float else "0"
        k = self.temp()
        self.line(f"for {k} in range({count}):")
        self.line(f"    {info.storage}[{start} + {k}] = {zero}")

    def s_let(self, s: LetStmt, env: Env) -> None:
        """``var = value`` for the body; a vector variable gets one local per lane;
        a handle bound to a pointer (``T.address_of(A[i])``...) names that storage."""
        if s.var.dtype.is_handle and self._is_pointer(s.value, env):
            py = self.fresh(f"p_{s.var.name}")
            self.line(f"{py} = {self.pointer(s.value, env, 0, f'the binding of {s.var.name}')}")
            data = DataInfo(py, self._pointee(s.value, env))
            self.stmt(s.body, env.bind_data(s.var, data))
            return
        py = self.var_name(s.var)
        lanes = s.var.dtype.lanes
        if lanes == 1:
            v = self.expr(s.value, env)
            self.line(f"{py} = {self.exact(v)}")
            self.stmt(s.body, env.bind_var(s.var, py, v.iv))
            return
        locals_ = tuple(f"{py}_l{lane}" for lane in range(lanes))
        ivs_ = []
        for lane, name in enumerate(locals_):
            v = self.expr(s.value, env, lane)
            self.line(f"{name} = {self.exact(v)}")
            ivs_.append(v.iv)
        iv = None
        if all(x is not None for x in ivs_):
            iv = (min(x[0] for x in ivs_), max(x[1] for x in ivs_))
        self.stmt(s.body, env.bind_var(s.var, locals_, iv))

    def s_attr(self, s: AttrStmt, env: Env) -> None:
        """An attribute; a launched thread index runs the body once per thread."""
        node = launched_iter_var(s)
        if node is not None:
            # a launched thread index: every thread runs the body, one after another
            ext = self.expr(s.value, env)
            py = self.var_name(node.var)
            self.line(f"for {py} in range({ext.code}):")
            self.loop_depth += 1
            self.body(s.body, env.bind_var(node.var, py, (0, max(ext.iv[1], 1) - 1)))
            self.loop_depth -= 1
            return
        self.stmt(s.body, env)

    def s_assert(self, s: AssertStmt, env: Env) -> None:
        """Raise when the condition is false, else run the body."""
        c = self.expr(s.condition, env)
        self.line(f"if not {c.code}:")
        self.line(f"    h_assert_failed({s.message.value!r})")
        self.stmt(s.body, env)

    def s_allocate_const(self, s: AllocateConst, env: Env) -> None:
        """Fresh storage holding the constant values (numbers, written with repr)."""
        py = self.fresh(f"b_{s.buffer_var.name}")
        values = ", ".join(const_float(v, s.dtype) if s.dtype.is_float else repr(int(v))
                           for v in s.values)
        self.line(f"{py} = h_alloc_const({str(s.dtype)!r}, ({values},))")
        self.stmt(s.body, env.bind_data(s.buffer_var, DataInfo(py, s.dtype)))

    def s_buffer_realize(self, s: BufferRealize, env: Env) -> None:
        """The realized buffer gets fresh storage of its whole shape for the body."""
        if not (isinstance(s.condition, IntImm) and s.condition.value == 1):
            raise InterpError(f"the interpreter runs T.realize of {s.buffer.name} only with a "
                              "true condition")
        self.stmt(s.body, self.allocate_buffer(s.buffer, env))

    def s_prefetch(self, s, env: Env) -> None:
        """A hint: nothing to compute."""

    def s_allocate(self, s: Allocate, env: Env) -> None:
        """Fresh storage named by the allocated pointer variable."""
        size = self.product([self.expr(e, env) for e in s.extents])
        py = self.fresh(f"b_{s.buffer_var.name}")
        self.line(f"{py} = h_alloc({str(s.dtype)!r}, {size})")
        self.stmt(s.body, env.bind_data(s.buffer_var, DataInfo(py, s.dtype)))

    def s_decl_buffer(self, s: DeclBuffer, env: Env) -> None:
        """A buffer viewing existing storage (or fresh storage when it has no data pointer)."""
        buf = s.buffer
        if buf.data is None or buf.data not in env.data:
            if buf.data is not None:
                raise InterpError(f"buffer {buf.name} views the data pointer {buf.data.name}, "
                                  "which is neither allocated nor a parameter here")
            env = self.allocate_buffer(buf, env)
        else:
            env = self.view_buffer(buf, env.data[buf.data], env)
        self.stmt(s.body, env)

    def s_block_realize(self, s: BlockRealize, env: Env) -> None:
        """Bind the block's iteration variables, check the predicate, run the block."""
        block = s.block
        outer = env
        values = [self.expr(v, outer) for v in s.iter_values]
        inner = attrs.evolve(env, block=block.name_hint)
        for iv_node, v in zip(block.iter_vars, values):
            if v.code.isidentifier() and v.code.startswith("x_"):
                # alias the loop variable
                inner = inner.bind_var(iv_node.var, v.code, v.iv, v.below)
            else:
                py = self.var_name(iv_node.var)
                self.line(f"{py} = {v.code}")
                inner = inner.bind_var(iv_node.var, py, v.iv)
        self.set_ctx(block, inner)
        predicate = s.predicate
        guarded = not (isinstance(predicate, IntImm) and predicate.value == 1)
        if guarded:
            p = self.expr(predicate, inner)
            self.line(f"if {p.code}:")
            self.indent += 1
        before = len(self.cur.lines)
        self.block_body(block, outer, inner)
        if len(self.cur.lines) == before:
            self.line("pass")
        if guarded:
            self.indent -= 1

    def block_body(self, block: Block, outer: Env, env: Env) -> None:
        """Domain checks, allocations, matched views, the reduction init, then the body."""
        reduce_checks = []
        for iv_node in block.iter_vars:
            info = env.vars[iv_node.var]
            lo = self.expr(iv_node.dom.min, outer)
            ext = self.expr(iv_node.dom.extent, outer)
            provable = (info.iv is not None and lo.iv[0] == lo.iv[1] and ext.iv[0] == ext.iv[1]
                        and ivs.within(info.iv, lo.iv[0], lo.iv[0] + ext.iv[0]))
            provable = provable or (lo.iv == (0, 0) and ext.code in info.below)
            if not provable:
                upper = ext.code if lo.iv == (0, 0) else f"{lo.code} + {ext.code}"
                self.line(f"if not {lo.code} <= {info.py} < {upper}:")
                self.line(f"    h_domain_error({block.name_hint!r}, {iv_node.var.name!r}, {info.py}, "
                          f"{lo.code}, {ext.code})")
            if iv_node.iter_type is IterVarType.CommReduce:
                reduce_checks.append(f"{info.py} == {lo.code}")
        for buf in block.alloc_buffers:
            env = self.allocate_buffer(buf, env)
        for match in block.match_buffers:
            env = self.match_buffer(match, env)
        if block.init is not None:
            if reduce_checks:
                self.line(f"if {' and '.join(reduce_checks)}:")
                self.body(block.init, env)
            else:
                self.stmt(block.init, env)
        self.stmt(block.body, env)

    def s_block(self, s: Block, env: Env) -> None:
        """A block without a realize (only one without iteration variables can run)."""
        # a bare block (no realize) has no iteration values: run it once
        if s.iter_vars:
            raise InterpError(f"block {s.name_hint} has iteration variables but no BlockRealize "
                              "giving their values")
        self.block_body(s, env, attrs.evolve(env, block=s.name_hint))

    # ------------------------------------------------------------ buffers
    def product(self, values: list[Value]) -> str:
        """Source of the product of ``values``."""
        if not values:
            return "1"
        return " * ".join(f"({v.code})" for v in values)

    def shape_of(self, buf: Buffer, env: Env) -> tuple[list, list[Value]]:
        """The dimensions of ``buf`` as constants or locals."""
        values = [self.expr(d, env) for d in buf.shape]
        return [self.const_or_local(v, env) for v in values], values

    def allocate_buffer(self, buf: Buffer, env: Env) -> Env:
        """A fresh storage for ``buf`` (alloc_buffer, or decl_buffer without data)."""
        shape, _ = self.shape_of(buf, env)
        _check_strides(buf)
        if buf.strides:
            strides = [self.const_or_local(self.expr(s, env), env) for s in buf.strides]
            size = " + ".join(["1"] + [f"(max({d}, 1) - 1) * {st}" for d, st in zip(shape, strides)])
            size = f"({size}) if {' and '.join(f'{d} > 0' for d in shape) or 'True'} else 0"
        else:
            strides = self.row_major(shape)
            size = " * ".join(str(d) for d in shape) or "1"
        py = self.fresh(f"b_{buf.name}")
        self.line(f"{py} = h_alloc({str(buf.dtype)!r}, {size})")
        access = Access(buf.name, py, buf.dtype, tuple(shape), tuple(strides), 0,
                        is_list_storage(buf.dtype))
        live = [py] + [x for x in list(shape) + list(strides) if isinstance(x, str)]
        env = env.bind_buffer(buf, access, live)
        if buf.data is not None:
            env = env.bind_data(buf.data, DataInfo(py, buf.dtype))
        if isinstance(buf.elem_offset, Var) and buf.elem_offset not in env.vars:
            env = env.bind_var(buf.elem_offset, "0", (0, 0))
        return env

    def view_buffer(self, buf: Buffer, data: DataInfo, env: Env) -> Env:
        """``buf`` as a view of an existing storage (DeclBuffer)."""
        if data.dtype is not None and data.dtype.element_of != buf.dtype.element_of:
            raise InterpError(f"buffer {buf.name} of {buf.dtype} views storage of {data.dtype}; "
                              "the interpreter does not reinterpret element types")
        shape, _ = self.shape_of(buf, env)
        _check_strides(buf)
        strides = ([self.const_or_local(self.expr(s, env), env) for s in buf.strides]
                   if buf.strides else self.row_major(shape))
        offset = 0
        if buf.elem_offset is not None:
            if isinstance(buf.elem_offset, Var) and buf.elem_offset not in env.vars:
                env = env.bind_var(buf.elem_offset, "0", (0, 0))
            else:
                offset = self.const_or_local(self.expr(buf.elem_offset, env), env)
        extent = " + ".join([str(offset), "1"] + [f"({d} - 1) * {st}" for d, st in zip(shape, strides)])
        empty = " or ".join(f"{d} <= 0" for d in shape) or "False"
        self.line(f"h_check_view({data.storage}, {str(buf.dtype)!r}, {buf.name!r}, "
                  f"0 if ({empty}) else {extent}, {offset})")
        access = Access(buf.name, data.storage, buf.dtype, tuple(shape), tuple(strides), offset,
                        is_list_storage(buf.dtype))
        live = [x for x in list(shape) + list(strides) + [offset] if isinstance(x, str)]
        return env.bind_buffer(buf, access, live)

    def match_buffer(self, match, env: Env) -> Env:
        """A block's ``match_buffer``: ``match.buffer`` views a region of another buffer."""
        buf = match.buffer
        source = self.lookup(match.source.buffer, env)
        region = match.source.region
        n, d = len(buf.shape), len(region)
        if n > d:
            raise InterpError(f"match_buffer {buf.name} has {n} dimensions but its source region "
                              f"of {match.source.buffer.name} only {d}")
        mins, exts = [], []
        for k, r in enumerate(region):
            lo = self.const_or_local(self.expr(r.min, env), env)
            ext = self.const_or_local(self.expr(r.extent, env), env)
            mins.append(lo)
            exts.append(ext)
            self.line(f"if not (0 <= {lo} and {lo} + {ext} <= {source.shape[k]}):")
            self.line(f"    h_region_error({buf.name!r}, {source.name!r}, {k}, {lo}, {ext}, "
                      f"{source.shape[k]})")
        for k in range(d - n):
            if exts[k] != 1:
                self.line(f"if {exts[k]} != 1:")
                self.line(f"    h_match_error({buf.name!r}, 'the extent of leading dimension {k} "
                          f"of its region is ' + str({exts[k]}) + ', not 1')")
        offset_terms = [str(source.offset)] + [f"{m} * {st}" for m, st in zip(mins, source.strides)]
        offset = self.fresh("s_offset")
        self.line(f"{offset} = {' + '.join(offset_terms)}")
        shape = []
        for k, dim in enumerate(buf.shape):
            ext = exts[d - n + k]
            if isinstance(dim, Var) and dim not in env.vars:
                env = env.bind_var(dim, ext if isinstance(ext, str) else str(ext),
                                   (ext, ext) if isinstance(ext, int) else (0, dim.dtype.max_value()))
            else:
                v = self.expr(dim, env)
                self.line(f"if {v.code} != {ext}:")
                self.line(f"    h_match_error({buf.name!r}, 'dimension {k} is ' + str({v.code}) + "
                          f"' but its region has extent ' + str({ext}))")
            shape.append(ext)
        strides = list(source.strides[d - n:])
        for k, st in enumerate(buf.strides):
            if isinstance(st, Var) and st not in env.vars:
                env = env.bind_var(st, str(strides[k]),
                                   (strides[k], strides[k]) if isinstance(strides[k], int)
                                   else ivs.full(st.dtype))
            else:
                v = self.expr(st, env)
                self.line(f"if {v.code} != {strides[k]}:")
                self.line(f"    h_match_error({buf.name!r}, 'stride {k} is ' + str({v.code}) + "
                          f"' but the region has stride ' + str({strides[k]}))")
        if isinstance(buf.elem_offset, Var) and buf.elem_offset not in env.vars:
            env = env.bind_var(buf.elem_offset, offset, ivs.full(buf.elem_offset.dtype))
        access = Access(buf.name, source.storage, buf.dtype, tuple(shape), tuple(strides), offset,
                        source.list_storage)
        return env.bind_buffer(buf, access, [offset] + [x for x in shape + strides if isinstance(x, str)])

    def lookup(self, buf: Buffer, env: Env) -> Access:
        access = env.buffers.get(buf)
        if access is not None:
            return access
        if buf.data is not None and buf.data in env.data:
            # flattened code may use a buffer through its data pointer without a DeclBuffer
            return self.view_buffer(buf, env.data[buf.data], env).buffers[buf]
        raise InterpError(f"buffer {buf.name} is used where it is not declared "
                          "(not a parameter, an alloc_buffer, a match_buffer or a decl_buffer in scope)")

    def address(self, access: Access, indices, env: Env, lane: int, verb: str,
                statement: bool = False) -> str:
        """Source for ``storage[offset]`` of an access, with the bounds checks
        the intervals cannot rule out. In statement context the checks are
        emitted as lines; in an expression they are inline."""
        if len(indices) != len(access.shape):
            raise InterpError(f"buffer {access.name} has {len(access.shape)} dimensions, "
                              f"accessed with {len(indices)} indices")
        idx = [self.expr(i, env, lane) for i in indices]
        if len(indices) > 1 and isinstance(indices[-1], Ramp) and _unit_stride(indices[-1]):
            return self.linear_address(access, idx, verb, statement)
        checked = []
        for k, (v, dim) in enumerate(zip(idx, access.shape)):
            if isinstance(dim, int) and v.iv is not None and ivs.within(v.iv, 0, dim):
                continue
            if isinstance(dim, str) and dim in v.below:
                continue
            checked.append(k)
        codes = [v.code for v in idx]
        if not checked:
            return f"{access.storage}[{self.offset_code(access, codes)}]"
        all_idx = "(" + "".join(f"{c}, " for c in codes) + ")"
        shape = "(" + "".join(f"{d}, " for d in access.shape) + ")"
        fail = f"h_out_of_bounds({verb!r}, {access.name!r}, {all_idx}, {shape})"
        if statement:
            for k in checked:
                if not codes[k].isidentifier():
                    t = self.temp()
                    self.line(f"{t} = {codes[k]}")
                    codes[k] = t
            cond = " and ".join(f"0 <= {codes[k]} < {access.shape[k]}" for k in checked)
            all_idx = "(" + "".join(f"{c}, " for c in codes) + ")"
            self.line(f"if not ({cond}):")
            self.line(f"    h_out_of_bounds({verb!r}, {access.name!r}, {all_idx}, {shape})")
            return f"{access.storage}[{self.offset_code(access, codes)}]"
        conds = []
        for k in checked:
            if codes[k].isidentifier():
                conds.append(f"0 <= {codes[k]} < {access.shape[k]}")
            else:
                t = self.temp()
                conds.append(f"0 <= ({t} := {codes[k]}) < {access.shape[k]}")
                codes[k] = t
        return (f"({access.storage}[{self.offset_code(access, codes)}] if ({' and '.join(conds)}) "
                f"else {fail})")

    def linear_address(self, access: Access, idx: list, verb: str, statement: bool) -> str:
        """A vector access whose last index is a ramp of stride 1 over a
        buffer of several dimensions: its lanes lie one after another in
        memory from the first lane's element, and may run past the last
        dimension into the next row, as TVM's ``vload`` of more lanes than
        a row holds reads them (flattening makes them consecutive). The
        leading indices are checked as usual; the last only for staying
        within the buffer's elements, from its first to its last."""
        codes = [v.code for v in idx]
        extent = " + ".join(f"({d} - 1) * {st}" for d, st in zip(access.shape, access.strides))
        leading = " and ".join(f"0 <= {c} < {d}" for c, d in zip(codes[:-1], access.shape[:-1]))
        flat = " + ".join(f"({c}) * {st}" for c, st in zip(codes, access.strides))
        cond = f"{leading} and 0 <= {codes[-1]} and {flat} <= {extent}"
        all_idx = "(" + "".join(f"{c}, " for c in codes) + ")"
        shape = "(" + "".join(f"{d}, " for d in access.shape) + ")"
        fail = f"h_out_of_bounds({verb!r}, {access.name!r}, {all_idx}, {shape})"
        target = f"{access.storage}[{self.offset_code(access, codes)}]"
        if statement:
            self.line(f"if not ({cond}):")
            self.line(f"    {fail}")
            return target
        return f"({target} if ({cond}) else {fail})"

    @staticmethod
    def offset_code(access: Access, codes: list[str]) -> str:
        """Source of the flat storage offset of an element."""
        terms = []
        if access.offset != 0:
            terms.append(str(access.offset))
        for c, st in zip(codes, access.strides):
            if st == 1:
                terms.append(c)
            elif st == 0:
                continue
            else:
                terms.append(f"{c} * {st}")
        return " + ".join(terms) if terms else "0"

    # ================================================================ expressions
    def expr(self, e, env: Env, lane: int = 0) -> Value:
        method = _EXPR_DISPATCH.get(type(e))
        if method is None:
            raise InterpError(f"the interpreter cannot evaluate a {type(e).__name__} expression")
        self.depth += 1
        try:
            v = method(self, e, env, lane)
        finally:
            self.depth -= 1
        if self.depth % _SPILL_DEPTH == 0 and self.depth and not self.no_spill \
                and not v.code.isidentifier():
            # Python's parser limits nesting: deep expressions continue in temporaries
            t = self.temp()
            self.line(f"{t} = {v.code}")
            v = attrs.evolve(v, code=t)
        return v

    def lazy(self, e, env: Env, lane: int) -> Value:
        """Compile ``e`` where it may not be evaluated (a branch of
        if_then_else, the body of a Let): nothing of it moves to statements."""
        self.no_spill += 1
        try:
            return self.expr(e, env, lane)
        finally:
            self.no_spill -= 1

    def exact(self, v: Value) -> str:
        """Source for ``v`` rounded to its dtype when it is not already."""
        if v.exact:
            return v.code
        return f"{rounder_name(v.dtype)}({v.code})"

    def e_var(self, e: Var, env: Env, lane: int) -> Value:
        """A variable in scope."""
        info = env.vars.get(e)
        if info is None:
            data = env.data.get(e)
            if data is not None:  # a data pointer as a value: the storage it names
                return Value(data.storage, e.dtype.element_of, True)
            raise InterpError(f"variable {e.name} is used where it is not bound")
        iv = info.iv
        if iv is None and (e.dtype.is_integer or e.dtype.is_bool):
            iv = ivs.full(e.dtype)
        py = info.py[lane] if isinstance(info.py, tuple) else info.py
        return Value(py, e.dtype.element_of, True, iv, info.below)

    def e_int(self, e: IntImm, env: Env, lane: int) -> Value:
        """An integer or bool constant."""
        if e.dtype.is_bool:
            return Value("True" if e.value else "False", e.dtype, True, (e.value, e.value))
        code = repr(e.value) if e.value >= 0 else f"({e.value!r})"
        return Value(code, e.dtype, True, (e.value, e.value))

    def e_float(self, e: FloatImm, env: Env, lane: int) -> Value:
        """A float constant, rounded to its dtype."""
        return Value(const_float(e.value, e.dtype), e.dtype, True, None)

    def e_string(self, e: StringImm, env: Env, lane: int) -> Value:
        """A string constant (an extern function's name)."""
        return Value(repr(e.value), e.dtype, True, None)

    def arith(self, e, env: Env, lane: int) -> Value:
        """``+ - * / % // min max`` with wrap-around for integers and rounding for floats."""
        a = self.expr(e.a, env, lane)
        b = self.expr(e.b, env, lane)
        dt = e.dtype.element_of
        cls = type(e)
        if dt.is_float:
            ca, cb = self.exact(a), self.exact(b)
            exact64 = dt.bits == 64
            if cls is Add:
                return Value(f"({ca} + {cb})", dt, exact64)
            if cls is Sub:
                return Value(f"({ca} - {cb})", dt, exact64)
            if cls is Mul:
                return Value(f"({ca} * {cb})", dt, exact64)
            if cls is Div:
                return Value(f"h_fdiv({ca}, {cb})", dt, exact64)
            if cls in (FloorDiv, FloorMod) and not exact64:
                # floor(a / b) and a - floor(a / b) * b with every step
                # rounded to the dtype, as TIR lowers them (and LLVM runs them)
                r = rounder_name(dt)
                q = f"h_floor({r}(h_fdiv({ca}, {cb})))"
                if cls is FloorDiv:
                    return Value(q, dt, True)
                return Value(f"({ca} - {r}({q} * {cb}))", dt, False)
            if cls is FloorDiv:
                return Value(f"h_ffloordiv({ca}, {cb})", dt, exact64)
            if cls is FloorMod:
                return Value(f"h_ffloormod({ca}, {cb})", dt, exact64)
            if cls is Mod:
                return Value(f"h_ftruncmod({ca}, {cb})", dt, exact64)
            return self.minmax(cls, Value(ca, dt), Value(cb, dt), dt)
        if not (dt.is_integer or dt.is_bool):
            raise InterpError(f"arithmetic on {dt} values is not supported")
        ia, ib = a.iv or ivs.full(dt), b.iv or ivs.full(dt)
        if cls in (Min, Max):
            return self.minmax(cls, a, b, dt)
        if cls is Add:
            code, iv = f"({a.code} + {b.code})", ivs.add(ia, ib)
        elif cls is Sub:
            code, iv = f"({a.code} - {b.code})", ivs.sub(ia, ib)
        elif cls is Mul:
            code, iv = f"({a.code} * {b.code})", ivs.mul(ia, ib)
        elif cls is FloorDiv:
            code, iv = f"({a.code} // {b.code})", ivs.floordiv(ia, ib)
        elif cls is FloorMod:
            code, iv = f"({a.code} % {b.code})", ivs.floormod(ia, ib)
            if iv is None:  # |a % b| < |b|: it always fits
                return Value(code, dt, True, ivs.full(dt))
        elif cls is Div:
            code, iv = f"h_tdiv({a.code}, {b.code})", ivs.truncdiv(ia, ib)
        else:  # Mod
            code, iv = f"h_tmod({a.code}, {b.code})", ivs.truncmod(ia, ib)
            if iv is None:
                return Value(code, dt, True, ivs.full(dt))
        if iv is None or not ivs.interval_fits(iv, dt):
            return Value(wrap_code(code, dt), dt, True, ivs.full(dt))
        return Value(code, dt, True, iv)

    def minmax(self, cls, a: Value, b: Value, dt: DataType) -> Value:
        """``min``/``max`` of two values, each evaluated once."""
        ta, tb = self.temp(), self.temp()
        op = "<" if cls is Min else ">"
        code = f"({ta} if ({ta} := {a.code}) {op} ({tb} := {b.code}) else {tb})"
        iv = None
        if a.iv is not None and b.iv is not None:
            iv = ivs.minimum(a.iv, b.iv) if cls is Min else ivs.maximum(a.iv, b.iv)
        return Value(code, dt, True, iv)

    def compare(self, e, env: Env, lane: int) -> Value:
        """A comparison (float operands rounded first)."""
        a = self.expr(e.a, env, lane)
        b = self.expr(e.b, env, lane)
        op = _CMP_OPS[type(e)]
        return Value(f"({self.exact(a)} {op} {self.exact(b)})", _BOOL, True, (0, 1))

    def logic(self, e, env: Env, lane: int) -> Value:
        """``and``/``or``; both operands are evaluated, as compiled code does
        (no short circuit)."""
        a = self.expr(e.a, env, lane)
        b = self.expr(e.b, env, lane)
        op = "&" if isinstance(e, And) else "|"
        return Value(f"({a.code} {op} {b.code})", _BOOL, True, (0, 1))

    def e_not(self, e: Not, env: Env, lane: int) -> Value:
        """``not``."""
        a = self.expr(e.a, env, lane)
        return Value(f"(not {a.code})", _BOOL, True, (0, 1))

    def e_select(self, e: Select, env: Env, lane: int) -> Value:
        """``Select``: both branches are evaluated (only if_then_else skips
        the other one)."""
        c = self.expr(e.condition, env, lane)
        t = self.expr(e.true_value, env, lane)
        f = self.expr(e.false_value, env, lane)
        iv = ivs.union(t.iv, f.iv) if t.iv is not None and f.iv is not None else None
        return Value(f"({self.exact(f)}, {self.exact(t)})[{c.code}]", t.dtype, True, iv)

    def e_cast(self, e: Cast, env: Env, lane: int) -> Value:
        """A conversion with C's semantics."""
        v = self.expr(e.value, env, lane)
        src, dst = v.dtype.element_of, e.dtype.element_of
        if src == dst:
            return v
        if dst.is_bool:
            return Value(f"({self.exact(v)} != 0)", dst, True, (0, 1))
        if src.is_bool:
            if dst.is_float:
                return Value(f"(1.0 if {v.code} else 0.0)", dst, True)
            return Value(f"(1 if {v.code} else 0)", dst, True, (0, 1))
        if src.is_float and dst.is_float:
            widening = dst.bits > src.bits and not (src.code == "bfloat" and dst.bits == 16)
            return Value(self.exact(v), dst, widening or dst.bits == 64)
        if src.is_float:  # float -> int: truncation toward zero
            return Value(f"h_f2i({self.exact(v)}, {dst.bits}, {dst.is_int})", dst, True, ivs.full(dst))
        if dst.is_float:  # int -> float
            return Value(f"float({v.code})", dst, dst.bits == 64)
        iv = v.iv or ivs.full(src)
        if ivs.interval_fits(iv, dst):
            return Value(v.code, dst, True, iv)
        return Value(wrap_code(v.code, dst), dst, True, ivs.full(dst))

    def e_load(self, e: BufferLoad, env: Env, lane: int) -> Value:
        """``buffer[indices]``; a lane masked off by the predicate reads
        nothing and is zero."""
        access = self.lookup(e.buffer, env)
        dt = e.buffer.dtype.element_of
        iv = ivs.full(dt) if (dt.is_integer or dt.is_bool) else None
        if e.predicate is None:
            return Value(self.address(access, e.indices, env, lane, "load"), dt, True, iv)
        mask = self.expr(e.predicate, env, lane)
        self.no_spill += 1
        try:
            code = self.address(access, e.indices, env, lane, "load")
        finally:
            self.no_spill -= 1
        zero = "False" if dt.is_bool else "0.0" if dt.is_float else "0"
        if iv is not None:
            iv = ivs.union(iv, (0, 0))
        return Value(f"({code} if {mask.code} else {zero})", dt, True, iv)

    def e_shuffle(self, e: Shuffle, env: Env, lane: int) -> Value:
        """Lane ``lane`` of a Shuffle: the lane its index names among the
        vectors' lanes laid end to end."""
        pick = e.indices[lane].value
        for v in e.vectors:
            if pick < v.dtype.lanes:
                return self.expr(v, env, pick)
            pick -= v.dtype.lanes
        raise InterpError(f"a Shuffle index is past the lanes of its vectors: {e!r}")

    def e_ramp(self, e: Ramp, env: Env, lane: int) -> Value:
        """Lane ``lane`` of a Ramp: ``base + lane * stride``."""
        base = self.expr(e.base, env)
        if lane == 0:
            return base
        stride = self.expr(e.stride, env)
        dt = e.dtype.element_of
        if dt.is_float:
            return Value(f"({self.exact(base)} + {lane} * {self.exact(stride)})", dt, dt.bits == 64)
        iv = ivs.add(base.iv, ivs.mul(stride.iv, (lane, lane)))
        code = f"({base.code} + {lane} * {stride.code})"
        if not ivs.interval_fits(iv, dt):
            return Value(wrap_code(code, dt), dt, True, ivs.full(dt))
        return Value(code, dt, True, iv)

    def e_broadcast(self, e: Broadcast, env: Env, lane: int) -> Value:
        """Every lane of a Broadcast is its value."""
        return self.expr(e.value, env, 0)

    def e_let(self, e: Let, env: Env, lane: int) -> Value:
        """``body`` with ``var`` bound to ``value`` (an assignment expression)."""
        v = self.expr(e.value, env, lane)
        py = self.var_name(e.var)
        body = self.lazy(e.body, env.bind_var(e.var, py, v.iv), lane)
        return Value(f"(({py} := {self.exact(v)}), {body.code})[1]", body.dtype, body.exact, body.iv)

    def e_call(self, e: Call, env: Env, lane: int) -> Value:
        """Intrinsics: if_then_else, math, bit operations, extern C functions;
        calls of the module's functions."""
        op = e.op
        if isinstance(op, GlobalVar):
            return self.module_call(e, env, lane)
        name = op[4:] if op.startswith("tir.") else op
        dt = e.dtype.element_of
        args = e.args
        if name == "if_then_else":
            c = self.expr(args[0], env, lane)
            t = self.lazy(args[1], env, lane)
            f = self.lazy(args[2], env, lane)
            iv = ivs.union(t.iv, f.iv) if t.iv is not None and f.iv is not None else None
            return Value(f"({self.exact(t)} if {c.code} else {self.exact(f)})", dt, True, iv)
        if name in ("likely", "assume"):
            v = self.expr(args[0], env, lane)
            return v if name == "likely" else Value("True", _BOOL, True, (1, 1))
        if name == "call_extern" or name == "call_pure_extern":
            return self.extern(e, env, lane)
        if name in _PASS_THROUGH and len(args) == 1:
            return self.expr(args[0], env, lane)
        if name in ("vectorlow", "vectorhigh", "vectorcombine"):
            return self.vector_part(e, env, lane)
        if name == "dp4a" and len(args) == 3:
            terms = [f"{self.expr(args[0], env, k).code} * {self.expr(args[1], env, k).code}"
                     for k in range(4)]
            acc = self.expr(args[2], env, lane)
            return Value(wrap_code(f"{acc.code} + {' + '.join(terms)}", dt), dt, True, ivs.full(dt))
        if name == "undef" and not args:
            return Value("0", dt, True, (0, 0))
        if name in ("call_llvm_intrin", "call_llvm_pure_intrin"):
            return self.llvm_intrinsic(e, env, lane)
        if name == "isnullptr" and len(args) == 1:
            # a null pointer is a handle passed None: it has no storage
            return Value(f"({self.pointer(args[0], env, lane, 'T.isnullptr')} is h_null)", _BOOL,
                         True, (0, 1))
        if op in LEGALIZED:
            return self.expr(legalize(e), env, lane)
        refused = refusal(op, "the interpreter")
        if refused is not None:
            raise InterpError(refused)
        if name == "reinterpret" and len(args) == 1 and args[0].dtype.lanes != e.dtype.lanes:
            return self.reinterpret_lanes(args[0], e.dtype, env, lane)
        vals = [self.expr(a, env, lane) for a in args]
        if name in FLOAT_UNARY and len(vals) == 1:
            return self.float_call(name, vals, dt)
        if name in FLOAT_BINARY and len(vals) == 2:
            if name == "nextafter" and dt.bits != 64:
                helper = {32: "h_nextafter_f32", 16: "h_nextafter_f16"}[dt.bits]
                if dt.element_of == "bfloat16":
                    helper = "h_nextafter_bf16"
                return Value(f"{helper}({self.exact(vals[0])}, {self.exact(vals[1])})", dt, True)
            return self.float_call(name, vals, dt)
        if name in FLOAT_PREDICATES and len(vals) == 1:
            return Value(f"h_{name}({self.exact(vals[0])})", _BOOL, True, (0, 1))
        if name == "abs" and len(vals) == 1:
            v = vals[0]
            if dt.is_float:
                return Value(f"abs({self.exact(v)})", dt, True)
            return Value(wrap_code(f"abs({v.code})", dt), dt, True, ivs.full(dt))
        if name == "ldexp" and len(vals) == 2:
            return Value(f"h_ldexp({self.exact(vals[0])}, {vals[1].code})", dt, dt.bits == 64)
        if name == "reinterpret" and len(vals) == 1:
            src = vals[0].dtype
            if src.lanes != e.dtype.lanes:
                raise InterpError(f"the interpreter reinterprets lane by lane; {src} to {e.dtype} changes "
                                  "the number of lanes")
            code = self.exact(vals[0]) if src.is_float else vals[0].code
            iv = None if dt.is_float else ivs.full(dt)
            return Value(f"h_reinterpret({code}, {str(src.element_of)!r}, {str(dt)!r})", dt, True, iv)
        if name in ("popcount", "clz") and len(vals) == 1:
            bits = vals[0].dtype.bits
            return Value(f"h_{name}({vals[0].code}, {bits})", dt, True, (0, bits))
        if name in _BITWISE and len(vals) == len(_BITWISE[name][1]):
            return self.bitwise(name, vals, dt)
        raise InterpError(f"the interpreter does not support the intrinsic {op} "
                          f"with {len(args)} arguments")

    def module_call(self, e: Call, env: Env, lane: int) -> Value:
        """``Module.sub(x, y)``: the callee runs as a function of its own,
        on the arguments' values (``h_callees`` is bound per module, see
        :func:`tirfun.interp.compile.compile_in_module`)."""
        if e.dtype.lanes != 1:
            raise InterpError(f"a call of {e.op.name_hint} returns a scalar, not {e.dtype}")
        vals = []
        for a in e.args:
            if a.dtype.is_handle:
                # a pointer passes storage: the callee works on it in place
                vals.append(self.pointer(a, env, lane, f"the call of {e.op.name_hint}"))
            else:
                vals.append(self.exact(self.expr(a, env, lane)))
        code = f"h_callees[{e.op.name_hint!r}].call_raw({', '.join(vals)})"
        dt = e.dtype
        if dt.is_integer or dt.is_bool:
            return Value(code, dt, True, ivs.full(dt))
        return Value(code, dt, True)

    @staticmethod
    def _is_pointer(a, env: Env) -> bool:
        """Whether :meth:`pointer` names the storage of ``a``."""
        if isinstance(a, Var):
            return a in env.data
        return isinstance(a, Call) and (
            (a.op == "tir.address_of" and len(a.args) == 1 and isinstance(a.args[0], BufferLoad))
            or (a.op == "tir.tvm_access_ptr" and len(a.args) == 5))

    def _pointee(self, a, env: Env) -> DataType | None:
        """The element type of the storage a pointer expression names."""
        if isinstance(a, Var):
            return env.data[a].dtype
        if a.op == "tir.address_of":
            return a.args[0].buffer.dtype.element_of
        return a.args[0].dtype.element_of  # tvm_access_ptr's type annotation

    def pointer(self, a, env: Env, lane: int, where: str) -> str:
        """Source of the storage a pointer expression names: a data pointer
        (``A.data``, an allocation), ``T.address_of(A[i, j])`` or
        ``T.tvm_access_ptr(type, data, offset, ...)``, the last two as a view
        from that element on."""
        if isinstance(a, Var) and a in env.data:
            return env.data[a].storage
        if isinstance(a, Call) and a.op == "tir.address_of" and len(a.args) == 1 \
                and isinstance(a.args[0], BufferLoad):
            load = a.args[0]
            access = self.lookup(load.buffer, env)
            if len(load.indices) != len(access.shape):
                raise InterpError(f"buffer {access.name} has {len(access.shape)} dimensions, "
                                  f"addressed with {len(load.indices)} indices")
            codes = [self.expr(i, env, lane).code for i in load.indices]
            return f"h_offset({access.storage}, {self.offset_code(access, codes)})"
        if isinstance(a, Call) and a.op == "tir.tvm_access_ptr" and len(a.args) == 5:
            base = self.pointer(a.args[1], env, lane, where)
            offset = self.expr(a.args[2], env, lane).code
            lanes = a.args[0].dtype.lanes
            if lanes > 1:
                # the offset counts vectors of the annotated type (content_lanes)
                offset = f"({offset}) * {lanes}"
            return f"h_offset({base}, {offset})"
        raise InterpError(f"{where} passes the pointer {a!r}; the interpreter passes a data "
                          "pointer (A.data, an allocation), T.address_of(A[...]) or "
                          "T.tvm_access_ptr(...)")

    def vector_part(self, e: Call, env: Env, lane: int) -> Value:
        """``vectorlow``/``vectorhigh``: a half of a vector; ``vectorcombine``:
        two vectors one after the other."""
        name = e.op[4:]
        first = e.args[0]
        n = first.dtype.lanes
        if name == "vectorlow":
            return self.expr(first, env, lane)
        if name == "vectorhigh":
            return self.expr(first, env, lane + n // 2)
        if lane < n:
            return self.expr(first, env, lane)
        return self.expr(e.args[1], env, lane - n)

    def reinterpret_lanes(self, arg, dt: DataType, env: Env, lane: int) -> Value:
        """``T.reinterpret`` to a type of as many bits in other lanes: one
        lane of the result packs several source lanes (``uint8x4`` as
        ``int32``), or is a part of one (``int32x16`` as ``uint8x64``)."""
        src = arg.dtype
        if src.bits * src.lanes != dt.bits * dt.lanes:
            raise InterpError(f"T.reinterpret of {src} as {dt}: the sizes differ")
        s, d = repr(str(src.element_of)), repr(str(dt.element_of))
        iv = None if dt.is_float else ivs.full(dt)
        if src.lanes > dt.lanes:
            r = src.lanes // dt.lanes
            parts = [self.expr(arg, env, lane * r + k) for k in range(r)]
            codes = [self.exact(v) if src.is_float else v.code for v in parts]
            return Value(f"h_reinterpret_pack([{', '.join(codes)}], {s}, {d})", dt.element_of, True, iv)
        r = dt.lanes // src.lanes
        v = self.expr(arg, env, lane // r)
        code = self.exact(v) if src.is_float else v.code
        return Value(f"h_reinterpret_part({code}, {s}, {d}, {lane % r})", dt.element_of, True, iv)

    def llvm_intrinsic(self, e: Call, env: Env, lane: int) -> Value:
        """``T.call_llvm_(pure_)intrin`` of a common LLVM intrinsic, through
        the helper of the TIR intrinsic with the same meaning."""
        callee, call_args = intrinsic_args(e)
        if callee in X86 and len(call_args) == len(X86[callee][1]):
            return self.x86_intrinsic(callee, call_args, e.dtype, env, lane)
        if len(call_args) != len(e.args) - 1:  # TVM's count of signature arguments, dropped
            e = Call(e.dtype, e.op, [e.args[0], *call_args])
        known = LLVM_NAMES.get(callee)
        if known is None or len(e.args) - 1 != known[1]:
            raise InterpError(f"the interpreter does not know the LLVM intrinsic {callee!r} "
                              f"with {len(e.args) - 1} arguments; it knows "
                              f"{', '.join(sorted([*LLVM_NAMES, *X86]))}")
        name = known[0]
        if name in ("fmax", "fmin"):
            vals = [self.expr(a, env, lane) for a in e.args[1:]]
            return Value(f"h_{name}({', '.join(self.exact(v) for v in vals)})",
                         e.dtype.element_of, True)
        # llvm.ctlz's flag (is zero poison) changes nothing where the result is defined
        operands = list(e.args[1:2] if name == "clz" else e.args[1:])
        return self.e_call(Call(e.dtype, f"tir.{name}", operands), env, lane)

    def x86_intrinsic(self, callee: str, args: list, dtype: DataType, env: Env, lane: int) -> Value:
        """One lane of an x86 dot-product intrinsic (see
        :mod:`tirfun.tir.llvm_x86`): ``vpdpbusd`` reads the lane of each
        argument, ``pmaddubsw``/``pmaddwd`` two adjacent lanes of each."""
        problem = signature_problem(callee, args, dtype)
        if problem is not None:
            raise InterpError(problem)
        dt = dtype.element_of
        if "vpdpbusd" in callee:
            acc, a, b = (self.expr(x, env, lane).code for x in args)
            return Value(f"h_vpdpbusd({acc}, {a}, {b})", dt, True, ivs.full(dt))
        helper = "h_pmaddubsw" if "pmaddubs" in callee else "h_pmaddwd"
        a0, a1 = (self.expr(args[0], env, 2 * lane + k).code for k in range(2))
        b0, b1 = (self.expr(args[1], env, 2 * lane + k).code for k in range(2))
        return Value(f"{helper}({a0}, {a1}, {b0}, {b1})", dt, True, ivs.full(dt))

    def float_call(self, name: str, vals: list[Value], dt: DataType) -> Value:
        """A float intrinsic through its helper."""
        args = ", ".join(self.exact(v) for v in vals)
        code = f"h_{name}({args})"
        # fabs, floor, ceil, round, trunc, copysign of a value of dt give a value of dt
        exact = dt.bits == 64 or name in ("fabs", "floor", "ceil", "round", "nearbyint", "trunc",
                                          "copysign")
        return Value(code, dt, exact)

    def bitwise(self, name: str, vals: list[Value], dt: DataType) -> Value:
        """Bitwise operations and shifts on integers."""
        template, _ = _BITWISE[name]
        code = template.format(*[v.code for v in vals])
        if name == "bitwise_not" and dt.is_bool:
            return Value(f"(not {vals[0].code})", dt, True, (0, 1))
        if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            # the result of two in-range operands stays in range
            if dt.is_uint or dt.is_bool:
                return Value(code, dt, True, ivs.full(dt))
            return Value(code, dt, True, ivs.full(dt))
        if name == "shift_right":
            return Value(code, dt, True, ivs.full(dt))
        return Value(wrap_code(code, dt), dt, True, ivs.full(dt))

    def extern(self, e: Call, env: Env, lane: int) -> Value:
        """``T.call_extern`` of a C library function the interpreter knows."""
        callee = e.args[0].value if e.args and isinstance(e.args[0], StringImm) else None
        entry = EXTERN_FLOAT.get(callee)
        if entry is None or len(e.args) - 1 != entry[1] or not e.dtype.is_float:
            raise InterpError(f"unsupported extern function {callee!r}: the interpreter runs "
                              f"only these C library functions: {', '.join(sorted(EXTERN_FLOAT))}")
        name = entry[0]
        vals = [self.expr(a, env, lane) for a in e.args[1:]]
        dt = e.dtype.element_of
        if name in ("fmax", "fmin"):
            return Value(f"h_{name}({', '.join(self.exact(v) for v in vals)})", dt, True)
        return self.float_call(name, vals, dt)


_CMP_OPS = {EQ: "==", NE: "!=", LT: "<", LE: "<=", GT: ">", GE: ">="}

# statements that open an indented Python block
_COMPOUND = (For, IfThenElse, BlockRealize, Block, AttrStmt, AssertStmt, While)

# expressions nested this deep continue in a temporary (Python's parser
# accepts 200 nested parentheses; one level of ours can take four)
_SPILL_DEPTH = 30

# intrinsic -> (source template, operand names)
_BITWISE = {
    "bitwise_and": ("({0} & {1})", "ab"),
    "bitwise_or": ("({0} | {1})", "ab"),
    "bitwise_xor": ("({0} ^ {1})", "ab"),
    "bitwise_not": ("(~{0})", "a"),
    "shift_left": ("h_shl({0}, {1})", "ab"),
    "shift_right": ("h_shr({0}, {1})", "ab"),
}

# calls that have no effect on the values the interpreter computes
_NOOP_CALLS = frozenset({"tir.tvm_storage_sync", "tir.assume", "tir.noop",
                         "tir.start_profile_intrinsic", "tir.end_profile_intrinsic"})
# hints whose value is their argument
_PASS_THROUGH = frozenset({"tvm_thread_invariant", "ignore_loop_partition"})

_STMT_DISPATCH = {
    SeqStmt: Compiler.s_seq,
    BufferStore: Compiler.s_store,
    For: Compiler.s_for,
    IfThenElse: Compiler.s_if,
    Evaluate: Compiler.s_evaluate,
    While: Compiler.s_while,
    AllocateConst: Compiler.s_allocate_const,
    BufferRealize: Compiler.s_buffer_realize,
    Prefetch: Compiler.s_prefetch,
    LetStmt: Compiler.s_let,
    AttrStmt: Compiler.s_attr,
    AssertStmt: Compiler.s_assert,
    Allocate: Compiler.s_allocate,
    DeclBuffer: Compiler.s_decl_buffer,
    BlockRealize: Compiler.s_block_realize,
    Block: Compiler.s_block,
}

_EXPR_DISPATCH = {
    Var: Compiler.e_var,
    IntImm: Compiler.e_int,
    FloatImm: Compiler.e_float,
    StringImm: Compiler.e_string,
    Add: Compiler.arith, Sub: Compiler.arith, Mul: Compiler.arith, Div: Compiler.arith,
    Mod: Compiler.arith, FloorDiv: Compiler.arith, FloorMod: Compiler.arith,
    Min: Compiler.arith, Max: Compiler.arith,
    EQ: Compiler.compare, NE: Compiler.compare, LT: Compiler.compare, LE: Compiler.compare,
    GT: Compiler.compare, GE: Compiler.compare,
    And: Compiler.logic, Or: Compiler.logic,
    Not: Compiler.e_not,
    Select: Compiler.e_select,
    Cast: Compiler.e_cast,
    BufferLoad: Compiler.e_load,
    Ramp: Compiler.e_ramp,
    Shuffle: Compiler.e_shuffle,
    Broadcast: Compiler.e_broadcast,
    Let: Compiler.e_let,
    Call: Compiler.e_call,
}


__all__ = ["Compiler", "Value", "Access", "Env", "ParamSpec", "LineInfo", "is_list_storage"]


def _check_strides(buf: Buffer) -> None:
    """A buffer with strides has one per dimension to be laid out (TVM
    accepts others in the IR, and fails when it flattens the buffer)."""
    if buf.strides and len(buf.strides) != len(buf.shape):
        raise InterpError(f"buffer {buf.name} has {len(buf.shape)} dimensions but {len(buf.strides)} "
                          "strides, so its elements have no place in memory")


def _unit_stride(ramp) -> bool:
    """Whether a ramp's lanes are consecutive (stride 1)."""
    return isinstance(ramp.stride, IntImm) and ramp.stride.value == 1
