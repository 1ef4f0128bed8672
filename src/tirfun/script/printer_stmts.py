"""Statements, loops, blocks and buffer declarations as TVMScript lines.

:class:`ScriptWriter` appends indented lines to a list (joined once at the
end, so printing stays linear in the size of the output). It also keeps the
scoped set of names a function has bound so far: inside a function, a
variable or buffer that nothing binds is declared the way TVM declares it
(``n = T.int32()``, ``A = T.Buffer((8,))``) on the line before the statement
that first uses it. Printed on their own, statements name free variables
without declaring them.

Layout follows TVM's printer: statements that scope a body
(``LetStmt``, ``AssertStmt``, ``AttrStmt``, ``Allocate``, ``DeclBuffer``)
print flat (``x: T.int32 = 1`` followed by the body at the same depth) when
they are the last statement of their body, and as ``with ...:`` otherwise.
"""

from __future__ import annotations

import attrs

from ..errors import NodeError
from ..nodes import (
    Allocate, AssertStmt, AttrStmt, Block, BlockRealize, Buffer, BufferRegion, BufferStore,
    Call, DeclBuffer, Evaluate, For, ForKind, IfThenElse, IntImm, IterVar, IterVarType,
    LetStmt, MatchBufferRegion, PrimExpr, Range, SeqStmt, Stmt, Var, While, AllocateConst,
    BufferRealize, Prefetch,
)
from ..analysis.threads import launched_iter_var
from ..analysis.traversal import iter_children, stmt_nodes, walk
from ..nodes.reducer import CommReducer
from ..nodes.target import TargetConfig
from .printer_exprs import (
    ExprRenderer, dict_text, end_of, index_plan, is_one, is_zero, join_indices, str_literal,
    comm_reducer_text, target_text,
)

_AXIS_KIND = {
    IterVarType.DataPar: "spatial",
    IterVarType.CommReduce: "reduce",
    IterVarType.Ordered: "scan",
    IterVarType.Opaque: "opaque",
}
_LOOP_PREFIX = {
    ForKind.PARALLEL: "parallel",
    ForKind.VECTORIZED: "vectorized",
    ForKind.UNROLLED: "unroll",
    ForKind.THREAD_BINDING: "thread_binding",
}
_SCOPED = (LetStmt, AssertStmt, AttrStmt, Allocate, DeclBuffer, AllocateConst, BufferRealize)

# tirfun's defaults of the Buffer fields that print as keywords only when set
_DEFAULT_ALIGN = 64
_DEFAULT_OFFSET_FACTOR = 0


def flatten(stmt: Stmt) -> list[Stmt]:
    """The statements of ``stmt`` in order, nested sequences spliced in."""
    if type(stmt) is not SeqStmt:
        return [stmt]
    out: list[Stmt] = []
    stack = [iter(stmt.seq)]
    while stack:
        for item in stack[-1]:
            if type(item) is SeqStmt:
                stack.append(iter(item.seq))
                break
            out.append(item)
        else:
            stack.pop()
    return out


def uses_any(expr: PrimExpr, names: set[str]) -> bool:
    """Whether ``expr`` mentions a variable named in ``names``."""
    if not names or type(expr) is IntImm:
        return False
    return any(type(n) is Var and n.name in names for n in walk(expr))


def has_vars(expr: PrimExpr) -> bool:
    """Whether ``expr`` mentions any variable."""
    if type(expr) is IntImm:
        return False
    return any(type(n) is Var for n in walk(expr))


def contains_block(stmt: Stmt) -> bool:
    """Whether a block is nested anywhere in ``stmt``."""
    return any(type(s) is BlockRealize for s in stmt_nodes(stmt))


class ScriptWriter:
    """Collects the lines of one printout.

    ``declare_free`` switches on the declaration of names nothing binds (used
    inside functions); ``prefix`` is the name of the ``tir`` namespace.
    """

    def __init__(self, *, prefix: str = "T", indent_spaces: int = 4, declare_free: bool = False,
                 hoisted: frozenset = frozenset()):
        self.p = prefix
        self.step = " " * indent_spaces
        self.declare_free = declare_free
        self.lines: list[str] = []
        self.pending: list[str] = []
        self.defined: set[tuple[str, str]] = set()
        self.scopes: list[list[tuple[str, str]]] = [[]]
        self.loops: dict[str, For] = {}
        self.exprs = ExprRenderer(self, prefix)
        # variables written otherwise than by name: a parameter that is its
        # buffer's data pointer is ``A.data``
        self.spelling: dict[Var, str] = {}
        # free names (``("v", name)`` / ``("b", name)``) declared where their
        # uses meet rather than before each use; see :meth:`hoist`
        self.hoisted = hoisted
        self.uses = _FreeUses(hoisted)
        self.declarations: dict[tuple[str, str], int] = {}

    # ------------------------------------------------------------------ output
    def emit(self, level: int, text: str) -> None:
        """Append a line at depth ``level``, after any declarations its
        expressions asked for."""
        indent = self.step * level
        if self.pending:
            self.lines.extend(indent + d for d in self.pending)
            self.pending.clear()
        self.lines.append(indent + text)

    # ------------------------------------------------------------------ scopes
    def push(self) -> None:
        """Open a scope: names bound from now on go out of scope at :meth:`pop`."""
        self.scopes.append([])

    def pop(self) -> None:
        """Close the innermost scope, forgetting the names bound in it."""
        for key in self.scopes.pop():
            self.defined.discard(key)

    def _define(self, key: tuple[str, str]) -> None:
        if key not in self.defined:
            self.defined.add(key)
            self.scopes[-1].append(key)

    def define_var(self, var: Var) -> None:
        """Bind ``var`` in the innermost scope."""
        self._define(("v", var.name))

    def define_buffer(self, buffer: Buffer) -> None:
        """Bind ``buffer`` in the innermost scope."""
        self._define(("b", buffer.name))

    def var_defined(self, var: Var) -> bool:
        """Whether a variable of that name is bound here."""
        return ("v", var.name) in self.defined

    # ------------------------------------------------------------------ names (used by ExprRenderer)
    def var(self, var: Var) -> str:
        """The name of ``var``, declared first when nothing binds it."""
        spelled = self.spelling.get(var)
        if spelled is not None:
            return spelled
        if self.declare_free and ("v", var.name) not in self.defined:
            self.define_var(var)
            self._count(("v", var.name))
            self.pending.append(f"{var.name} = {self.var_creation(var)}")
        return var.name

    def buffer(self, buffer: Buffer) -> str:
        """The name of ``buffer``, declared first when nothing declares it."""
        if self.declare_free and ("b", buffer.name) not in self.defined:
            decl = self.buffer_call(buffer, "Buffer", [])
            self.define_buffer(buffer)
            self._count(("b", buffer.name))
            self.pending.append(f"{buffer.name} = {decl}")
        return buffer.name

    def _count(self, key: tuple[str, str]) -> None:
        self.declarations[key] = self.declarations.get(key, 0) + 1

    def redeclared(self) -> frozenset:
        """The free names this printout declared more than once (each
        declaration would parse back as a name of its own)."""
        return frozenset(k for k, n in self.declarations.items() if n > 1)

    def hoist(self, items: list[Stmt], i: int, later: set) -> None:
        """Before ``items[i]``: declare each of the :attr:`hoisted` names that
        it and a later item of the same body use, or that two of its own
        separately scoped parts use (the branches of an ``if``, a block's
        ``init`` and body), as TVM declares a free name once where its uses
        meet."""
        shared = self.uses.of(items[i]) & later
        seen: set = set()
        for part in _scoped_parts(items[i]):
            names = self.uses.of(part)
            shared |= names & seen
            seen |= names
        for key in self.uses.ordered(shared):
            if key in self.defined:
                continue
            node = self.uses.node(key)
            if node is not None:
                if key[0] == "v":
                    self.var(node)
                else:
                    self.buffer(node)

    def var_creation(self, var: Var) -> str:
        """``T.int32()``: the call that makes a fresh variable."""
        if var.type_annotation is not None:
            return self.var_type(var)
        return f"{self.p}.{var.dtype}()"

    def var_type(self, var: Var) -> str:
        """The annotation of ``var``: ``T.int32``, ``T.handle``, or TVM's
        ``T.handle("float32", "global")`` for a typed pointer."""
        t = var.type_annotation
        if t is None:
            return f"{self.p}.{var.dtype}"
        return f"{self.p}.handle({str_literal(t.element)}, {str_literal(t.scope)})"

    # ------------------------------------------------------------------ buffers
    def buffer_call(self, buffer: Buffer, method: str, lead: list[str]) -> str:
        """``T.<method>(lead..., shape, dtype, keywords...)`` declaring
        ``buffer``; variables it introduces are declared on one line before."""
        if self.declare_free:
            self._declare_buffer_vars(buffer)
        r = self.exprs.expr
        args = list(lead)
        args.append(shape_text(buffer.shape, r))
        if buffer.dtype != "float32":
            args.append(str_literal(buffer.dtype))
        if buffer.data is not None:
            args.append(f"data={self.var(buffer.data)}")
        if buffer.strides:
            args.append(f"strides={shape_text(buffer.strides, r)}")
        if buffer.elem_offset is not None:
            args.append(f"elem_offset={r(buffer.elem_offset)}")
        if buffer.storage_scope != "global":
            args.append(f"scope={str_literal(buffer.storage_scope)}")
        if buffer.data_alignment != _DEFAULT_ALIGN:
            args.append(f"align={buffer.data_alignment}")
        if buffer.offset_factor != _DEFAULT_OFFSET_FACTOR:
            args.append(f"offset_factor={buffer.offset_factor}")
        if buffer.buffer_type != "default":
            args.append(f"buffer_type={str_literal(buffer.buffer_type)}")
        if buffer.axis_separators:
            args.append("axis_separators=[" + ", ".join(str(a) for a in buffer.axis_separators) + "]")
        return f"{self.p}.{method}({', '.join(args)})"

    def _declare_buffer_vars(self, buffer: Buffer) -> None:
        fresh: list[Var] = []
        seen: set[str] = set()
        candidates = [*buffer.shape, buffer.data, *buffer.strides, buffer.elem_offset]
        for e in candidates:
            if type(e) is Var and e.name not in seen and not self.var_defined(e):
                seen.add(e.name)
                fresh.append(e)
        if not fresh:
            return
        for v in fresh:
            self.define_var(v)
            self._count(("v", v.name))
        names = ", ".join(v.name for v in fresh)
        values = ", ".join(self.var_creation(v) for v in fresh)
        self.pending.append(f"{names} = {values}")

    def region_text(self, region: BufferRegion) -> str:
        """``A[vi, 0:128]``: a point where the extent is one, a slice otherwise."""
        name = self.buffer(region.buffer)
        r = self.exprs.expr
        parts = []
        for rng in region.region:
            lo = r(rng.min)
            if is_one(rng.extent):
                parts.append(lo)
            else:
                parts.append(f"{lo}:{r(end_of(rng.min, rng.extent))}")
        return f"{name}[{', '.join(parts) if parts else '()'}]"

    def indices_text(self, indices) -> str:
        """``i, j`` or ``i * 4:i * 4 + 4`` for a ramp: the inside of ``A[...]``."""
        kids, shape = index_plan(indices)
        return join_indices(shape, [self.exprs.render(k) for k in kids])

    # ------------------------------------------------------------------ statements
    def body(self, stmt: Stmt, level: int) -> None:
        """The statements of a body at depth ``level``. The last one, when it
        scopes a body of its own, prints flat and its body follows it."""
        start = len(self.lines)
        items = flatten(stmt)
        later = self.uses.after(items)
        i = 0
        while i < len(items):
            s = items[i]
            if later is not None:
                self.hoist(items, i, later[i])
            if i == len(items) - 1 and isinstance(s, _SCOPED):
                inner, opened = self.scoped(s, level, concise=True)
                if opened:
                    self.body(inner, level + 1)
                    self.pop()
                    break
                items = flatten(inner)
                later = self.uses.after(items)
                i = 0
                continue
            self.stmt(s, level)
            i += 1
        if len(self.lines) == start:
            self.emit(level, "pass")

    def stmt(self, s: Stmt, level: int) -> None:
        """One statement (a scoping one with its body in a ``with``)."""
        t = type(s)
        if t is BufferStore:
            name = self.buffer(s.buffer)
            value = self.exprs.expr(s.value)
            if s.predicate is not None:
                # TVM prints a predicated store as a vstore with the indices as a list
                indices = ", ".join(self.exprs.expr(i) for i in s.indices)
                self.emit(level, f"{name}.vstore([{indices}], {value}, "
                                 f"predicate={self.exprs.expr(s.predicate)})")
            else:
                self.emit(level, f"{name}[{self.indices_text(s.indices)}] = {value}")
        elif t is For:
            self.for_loop(s, level)
        elif t is BlockRealize:
            self.emit(level, f"with {self.p}.block({str_literal(s.block.name_hint)}):")
            self.block_body(s.block, s, level + 1)
        elif t is Block:
            self.emit(level, f"with {self.p}.block({str_literal(s.name_hint)}, no_realize=True):")
            self.block_body(s, None, level + 1)
        elif t is IfThenElse:
            self.emit(level, f"if {self.exprs.expr(s.condition)}:")
            self.push()
            self.body(s.then_case, level + 1)
            self.pop()
            if s.else_case is not None:
                self.emit(level, "else:")
                self.push()
                self.body(s.else_case, level + 1)
                self.pop()
        elif t is Prefetch:
            bounds = ", ".join(self.range_text(r) for r in s.bounds)
            self.emit(level, f"{self.p}.prefetch({self.buffer(s.buffer)}, [{bounds}])")
        elif t is While:
            self.emit(level, f"while {self.exprs.expr(s.condition)}:")
            self.push()
            self.body(s.body, level + 1)
            self.pop()
        elif t is Evaluate:
            self.evaluate(s, level)
        elif t is SeqStmt:
            self.body(s, level)
        elif isinstance(s, _SCOPED):
            inner, _ = self.scoped(s, level, concise=False)
            self.body(inner, level + 1)
            self.pop()
        else:
            raise NodeError(f"cannot print the statement node {t.__name__}")

    def evaluate(self, s: Evaluate, level: int) -> None:
        """``return x`` for a return, a call alone, else ``T.evaluate(x)``."""
        value = s.value
        if type(value) is Call and value.op == "tir.ret" and len(value.args) == 1:
            self.emit(level, f"return {self.exprs.expr(value.args[0])}")
        elif type(value) is Call:
            self.emit(level, self.exprs.expr(value))
        else:
            self.emit(level, f"{self.p}.evaluate({self.exprs.expr(value)})")

    def _open(self, level: int, head: str, target: str | None, concise: bool) -> bool:
        """Print a scoping statement's header; True when it opened a ``with``
        (and a scope the caller closes)."""
        if concise:
            self.emit(level, head if target is None else f"{target} = {head}")
            return False
        self.emit(level, f"with {head}" + ("" if target is None else f" as {target}") + ":")
        self.push()
        return True

    def declare_views(self, data: Var, body: Stmt) -> None:
        """Declare the buffers of ``body`` that view the pointer ``data``
        without a decl_buffer, right after the pointer is bound, as TVM
        prints them (``A = T.Buffer((n,), data=A_data)``)."""
        if not self.declare_free:
            return
        declared = {d.buffer for d in stmt_nodes(body) if isinstance(d, DeclBuffer)}
        for n in walk(body):
            if isinstance(n, Buffer) and n.data == data and n not in declared:
                self.buffer(n)

    def scoped(self, s: Stmt, level: int, concise: bool) -> tuple[Stmt, bool]:
        """Print the header of a scoping statement; returns its body and
        whether a ``with`` was opened."""
        p = self.p
        r = self.exprs.expr
        t = type(s)
        if t is LetStmt:
            value = r(s.value)
            name = s.var.name
            if self.var_defined(s.var):  # a second binding of a name in scope
                return s.body, self._open(level, f"{p}.LetStmt({value}, var={name})", None, False)
            if concise:
                self.emit(level, f"{name}: {self.var_type(s.var)} = {value}")
                self.define_var(s.var)
                return s.body, False
            if s.var.type_annotation is not None:
                # what the variable points to: a new variable of that type
                head = f"{p}.LetStmt({value}, var={self.var_type(s.var)})"
            else:
                head = f"{p}.LetStmt({value})"
            opened = self._open(level, head, name, False)
            self.define_var(s.var)
            return s.body, opened
        if t is AssertStmt:
            cond, msg = r(s.condition), r(s.message)
            if concise:
                self.emit(level, f"assert {cond}, {msg}")
                return s.body, False
            return s.body, self._open(level, f"{p}.Assert({cond}, {msg})", None, False)
        if t is AttrStmt:
            return self.attr_stmt(s, level, concise)
        if t is Allocate:
            args = ["[" + ", ".join(r(e) for e in s.extents) + "]", str_literal(s.dtype),
                    str_literal(s.scope)]
            if not is_one(s.condition):
                args.append(r(s.condition))
            if s.annotations:
                args.append(f"annotations={dict_text(s.annotations, self.exprs)}")
            opened = self._open(level, f"{p}.allocate({', '.join(args)})", s.buffer_var.name, concise)
            self.define_var(s.buffer_var)
            self.declare_views(s.buffer_var, s.body)
            return s.body, opened
        if t is AllocateConst:
            args = [const_data_text(s.values, s.dtype, p), str_literal(s.dtype),
                    "[" + ", ".join(r(e) for e in s.extents) + "]"]
            if s.annotations:
                args.append(f"annotations={dict_text(s.annotations, self.exprs)}")
            opened = self._open(level, f"{p}.allocate_const({', '.join(args)})", s.buffer_var.name,
                                concise)
            self.define_var(s.buffer_var)
            self.declare_views(s.buffer_var, s.body)
            return s.body, opened
        if t is BufferRealize:
            return s.body, self._open(level, self.realize_text(s, None), None, concise)
        # DeclBuffer
        head = self.buffer_call(s.buffer, "decl_buffer", [])
        opened = self._open(level, head, s.buffer.name, concise)
        self.define_buffer(s.buffer)
        return s.body, opened

    def realize_text(self, s: BufferRealize, scope: Stmt | None) -> str:
        """``T.realize(A[0:8], "global")``: TVM writes every bound as a slice."""
        r = self.exprs.expr
        name = self.buffer(s.buffer)
        parts = [f"{r(b.min)}:{r(end_of(b.min, b.extent))}" for b in s.bounds]
        args = [f"{name}[{', '.join(parts) if parts else '()'}]"]
        if scope is not None:
            args.append(r(scope))
        if not is_one(s.condition):
            args.append(f"condition={r(s.condition)}")
        return f"{self.p}.realize({', '.join(args)})"

    def attr_stmt(self, s: AttrStmt, level: int, concise: bool) -> tuple[Stmt, bool]:
        """``T.launch_thread`` for a thread extent on a thread index, else ``T.attr``."""
        p = self.p
        node = s.node
        if (s.attr_key == "realize_scope" and type(s.body) is BufferRealize
                and s.body.buffer == node):
            return s.body.body, self._open(level, self.realize_text(s.body, s.value), None, concise)
        launched = launched_iter_var(s)
        if (launched is not None and launch_form(node, s.value) and not self.var_defined(node.var)):
            head = f"{p}.launch_thread({str_literal(node.thread_tag)}, {self.exprs.expr(s.value)})"
            opened = self._open(level, head, node.var.name, concise)
            self.define_var(node.var)
            return s.body, opened
        if (launched is not None and launch_form(node, s.value, any_var_dtype=True)
                and not self.var_defined(node.var)):
            # a thread variable of another type than its extent: declared first,
            # as TVM writes it (T.env_thread, then T.launch_thread of it)
            dtype = "" if node.var.dtype == "int32" else f", dtype={str_literal(node.var.dtype)}"
            self.emit(level, f"{node.var.name} = {p}.env_thread({str_literal(node.thread_tag)}{dtype})")
            self.define_var(node.var)
            head = f"{p}.launch_thread({node.var.name}, {self.exprs.expr(s.value)})"
            return s.body, self._open(level, head, None, concise)
        node_text = self.attr_node_text(node)
        head = f"{p}.attr({node_text}, {str_literal(s.attr_key)}, {self.exprs.expr(s.value)})"
        return s.body, self._open(level, head, None, concise)

    def attr_node_text(self, node) -> str:
        """The first argument of ``T.attr``: an expression, a buffer, an
        iteration variable or a string."""
        if isinstance(node, PrimExpr):
            return self.exprs.expr(node)
        if isinstance(node, Buffer):
            return self.buffer(node)
        if isinstance(node, IterVar):
            return self.iter_var_text(node)
        if isinstance(node, str):
            return str_literal(node)
        if isinstance(node, TargetConfig):
            return target_text(node, self.exprs)
        if isinstance(node, CommReducer):
            for var in (*node.lhs, *node.rhs):
                self.define_var(var)
            return comm_reducer_text(node, self.exprs)
        raise NodeError(f"cannot print an attribute statement on a {type(node).__name__}")

    def iter_var_text(self, iv: IterVar) -> str:
        """``T.iter_var(v, T.Range(0, 8), "DataPar", "")``."""
        return (f"{self.p}.iter_var({self.var(iv.var)}, {self.range_text(iv.dom)}, "
                f"{str_literal(iv.iter_type.value)}, {str_literal(iv.thread_tag)})")

    def range_text(self, rng: Range) -> str:
        """``T.Range(min, extent + min)``, TVM's spelling of a range."""
        r = self.exprs.expr
        return f"{self.p}.Range({r(rng.min)}, {r(end_of(rng.extent, rng.min))})"

    # ------------------------------------------------------------------ loops
    def for_loop(self, loop: For, level: int) -> None:
        """A loop, or a ``T.grid`` of the perfect nest it starts."""
        grid = grid_chain(loop)
        r = self.exprs.expr
        if len(grid) > 1:
            extents = ", ".join(r(l.extent) for l in grid)
            names = ", ".join(l.loop_var.name for l in grid)
            self.emit(level, f"for {names} in {self.p}.grid({extents}):")
            inner = grid[-1].body
        else:
            grid = [loop]
            self.emit(level, f"for {loop.loop_var.name} in {self.loop_call(loop)}:")
            inner = loop.body
        self.push()
        saved = []
        for l in grid:
            self.define_var(l.loop_var)
            saved.append((l.loop_var.name, self.loops.get(l.loop_var.name)))
            self.loops[l.loop_var.name] = l
        self.body(inner, level + 1)
        for name, old in reversed(saved):
            if old is None:
                del self.loops[name]
            else:
                self.loops[name] = old
        self.pop()

    def loop_call(self, loop: For) -> str:
        """``range(8)``, ``range(2, 10)``, ``T.parallel(8)``,
        ``T.thread_binding(8, thread="threadIdx.x")``, ``T.serial(8, annotations=...)``."""
        r = self.exprs.expr
        if is_zero(loop.min):
            args = [r(loop.extent)]
        else:
            args = [r(loop.min), r(end_of(loop.min, loop.extent))]
        if loop.kind is ForKind.SERIAL:
            callee = "range" if not loop.annotations else f"{self.p}.serial"
        else:
            callee = f"{self.p}.{_LOOP_PREFIX[loop.kind]}"
        if loop.kind is ForKind.THREAD_BINDING:
            args.append(f"thread={str_literal(loop.thread_binding)}")
        if loop.annotations:
            args.append(f"annotations={dict_text(loop.annotations, self.exprs)}")
        return f"{callee}({', '.join(args)})"

    # ------------------------------------------------------------------ blocks
    def block_body(self, block: Block, realize: BlockRealize | None, level: int) -> None:
        """Everything inside ``with T.block(...)``, in TVM's order: iteration
        variables, T.where, T.reads/T.writes, T.block_attr, alloc_buffers,
        match_buffers, T.init, then the body."""
        p = self.p
        self.push()
        self.iter_vars(block, realize, level)
        if realize is not None and not is_one(realize.predicate):
            self.emit(level, f"{p}.where({self.exprs.expr(realize.predicate)})")
        self.emit(level, f"{p}.reads({', '.join(self.region_text(x) for x in block.reads)})")
        self.emit(level, f"{p}.writes({', '.join(self.region_text(x) for x in block.writes)})")
        if block.annotations:
            self.emit(level, f"{p}.block_attr({dict_text(block.annotations, self.exprs)})")
        for buffer in block.alloc_buffers:
            self.alloc_line(buffer, level)
        for match in block.match_buffers:
            self.match_line(match, level)
        if block.init is not None:
            self.emit(level, f"with {p}.init():")
            self.push()
            self.body(block.init, level + 1)
            self.pop()
        self.body(block.body, level)
        self.pop()

    def alloc_line(self, buffer: Buffer, level: int) -> None:
        """``C = T.alloc_buffer((8,), scope="shared")``; a pointer of the
        allocation's own (bound nowhere else) is spelled ``C.data``."""
        buffer = self.own_pointer(buffer)
        decl = self.buffer_call(buffer, "alloc_buffer", [])
        self.define_buffer(buffer)
        self.emit(level, f"{buffer.name} = {decl}")

    def own_pointer(self, buffer: Buffer) -> Buffer:
        """``buffer`` without its data pointer when the pointer is its own
        (bound nowhere in scope), which is then spelled ``<buffer>.data``:
        what the parser reads back as a pointer the declaration makes. A
        pointer spelled through a buffer of a scope that has ended (two
        copies of one declaration in sibling scopes, as loop_partition
        makes them) is spelled through this one from here on."""
        data = buffer.data
        if data is None or self.var_defined(data):
            return buffer
        spelled = self.spelling.get(data)
        if spelled is not None:
            owner = spelled[:-len(".data")] if spelled.endswith(".data") else None
            if owner is None or ("b", owner) in self.defined:
                return buffer  # spelled by a name in scope here
        self.spelling[data] = f"{buffer.name}.data"
        return attrs.evolve(buffer, data=None)

    def match_line(self, match: MatchBufferRegion, level: int) -> None:
        """A block's ``T.match_buffer`` line."""
        self.emit(level, self.match_text(match))

    def match_text(self, match: MatchBufferRegion) -> str:
        """``A_sub = T.match_buffer(A[vi, 0:4], (4,))``; a pointer of the
        view's own (bound nowhere else) is spelled ``A_sub.data``, as the
        parser reads it back."""
        source = self.region_text(match.source)
        buffer = self.own_pointer(match.buffer)
        decl = self.buffer_call(buffer, "match_buffer", [source])
        self.define_buffer(buffer)
        return f"{buffer.name} = {decl}"

    def iter_vars(self, block: Block, realize: BlockRealize | None, level: int) -> None:
        """Bindings of the block's iteration variables; consecutive ones bound
        to enclosing loops over the same domain group into ``T.axis.remap``."""
        group: list[int] = []

        def flush():
            if len(group) == 1:
                self.single_iter_var(block, realize, group[0], level)
            elif group:
                self.remap_line(block, realize, group, level)
            group.clear()

        for i, iv in enumerate(block.iter_vars):
            if realize is not None and self.remappable(iv, realize.iter_values[i]):
                group.append(i)
            else:
                flush()
                self.single_iter_var(block, realize, i, level)
        flush()

    def remappable(self, iv: IterVar, value: PrimExpr) -> bool:
        """TVM's rule: a spatial or reduction variable bound to an enclosing
        loop's variable, over exactly that loop's range."""
        if iv.iter_type not in (IterVarType.DataPar, IterVarType.CommReduce):
            return False
        if type(value) is not Var:
            return False
        loop = self.loops.get(value.name)
        return (loop is not None and loop.loop_var == value and loop.min == iv.dom.min
                and loop.extent == iv.dom.extent)

    def single_iter_var(self, block: Block, realize: BlockRealize | None, i: int, level: int) -> None:
        """``vi = T.axis.spatial(8, i)``."""
        iv = block.iter_vars[i]
        kind = _AXIS_KIND.get(iv.iter_type)
        if kind is None:
            raise NodeError(f"block {block.name_hint}: iteration variable {iv.var.name} has type "
                            f"{iv.iter_type.value}, which a block cannot declare")
        r = self.exprs.expr
        if is_zero(iv.dom.min):
            dom = r(iv.dom.extent)
        else:
            dom = f"({r(iv.dom.min)}, {r(end_of(iv.dom.min, iv.dom.extent))})"
        if realize is not None:
            rhs = f"{self.p}.axis.{kind}({dom}, {r(realize.iter_values[i])})"
        else:
            rhs = f"{self.p}.axis.{kind}({dom})"
        self.define_var(iv.var)
        self.emit(level, f"{iv.var.name} = {rhs}")

    def remap_line(self, block: Block, realize: BlockRealize, group: list[int], level: int) -> None:
        """``vi, vk = T.axis.remap("SR", [i, k])``."""
        names, kinds, values = [], [], []
        for i in group:
            iv = block.iter_vars[i]
            names.append(iv.var.name)
            kinds.append("S" if iv.iter_type is IterVarType.DataPar else "R")
            values.append(self.exprs.expr(realize.iter_values[i]))
            self.define_var(iv.var)
        self.emit(level, f'{", ".join(names)} = {self.p}.axis.remap("{"".join(kinds)}", '
                         f'[{", ".join(values)}])')


def shape_text(values, render) -> str:
    """A tuple: ``()``, ``(8,)``, ``(8, n)``."""
    if len(values) == 1:
        return f"({render(values[0])},)"
    return "(" + ", ".join(render(v) for v in values) + ")"


def grid_chain(loop: For) -> list[For]:
    """The perfectly nested serial loops from ``loop`` down that start at
    zero, carry no annotations and whose extents do not depend on one
    another: what ``T.grid`` can express."""
    chain: list[For] = []
    names: set[str] = set()
    current = loop
    while type(current) is For:
        if (current.kind is not ForKind.SERIAL or not is_zero(current.min) or current.annotations
                or uses_any(current.extent, names)):
            break
        chain.append(current)
        names.add(current.loop_var.name)
        current = current.body
    return chain


def launch_form(iv: IterVar, extent: PrimExpr, any_var_dtype: bool = False) -> bool:
    """Whether ``T.launch_thread(tag, extent)`` rebuilds exactly this thread
    iteration variable: a tagged thread index over ``[0, extent)`` whose
    variable has the extent's type (with ``any_var_dtype``, of any type:
    ``T.launch_thread(var, extent)`` of a declared variable rebuilds it)."""
    return (iv.iter_type is IterVarType.ThreadIndex and iv.thread_tag != ""
            and is_zero(iv.dom.min) and iv.dom.min.dtype == extent.dtype
            and iv.dom.extent == extent and (any_var_dtype or iv.var.dtype == extent.dtype))


__all__ = ["ScriptWriter", "flatten", "grid_chain", "launch_form", "shape_text", "contains_block",
           "has_vars", "uses_any"]


def const_data_text(data, dtype, prefix: str) -> str:
    """The values of ``T.allocate_const``: every one of them (TVM prints at
    most 201), non-finite floats as ``T.float32("inf")``."""
    items = []
    for v in data:
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            items.append(f'{prefix}.{dtype}("{v}")')
        else:
            items.append(repr(v))
    return "[" + ", ".join(items) + "]"



def _scoped_parts(stmt: Stmt) -> list[Stmt]:
    """The parts of ``stmt`` printed in scopes of their own, side by side."""
    if type(stmt) is IfThenElse:
        return [stmt.then_case] + ([stmt.else_case] if stmt.else_case is not None else [])
    if type(stmt) is BlockRealize and stmt.block.init is not None:
        return [stmt.block.init, stmt.block.body]
    return []


class _FreeUses:
    """Which of some free names (``("v", name)``, ``("b", name)``) each
    statement uses, anywhere inside it (buffer fields included), computed
    once per statement. A name that stands for two different variables or
    buffers in one function is never reported: one declaration cannot serve
    both."""

    def __init__(self, names: frozenset):
        self.names = names
        self.memo: dict[int, tuple[Stmt, frozenset]] = {}
        self.nodes: dict[tuple[str, str], object] = {}
        self.clashing: set[tuple[str, str]] = set()

    def after(self, items: list[Stmt]) -> list[set] | None:
        """For each item, the names the items after it use (None when no
        name is to be hoisted)."""
        if not self.names:
            return None
        out: list[set] = [set() for _ in items]
        acc: set = set()
        for k in range(len(items) - 1, -1, -1):
            out[k] = set(acc)
            acc |= self.of(items[k])
        return out

    def node(self, key: tuple[str, str]):
        """The variable or buffer a name stands for (None when it clashes)."""
        return None if key in self.clashing else self.nodes.get(key)

    @staticmethod
    def ordered(keys) -> list[tuple[str, str]]:
        """Variables before buffers (a buffer's declaration may name them),
        each by name."""
        return sorted(keys, key=lambda k: (k[0] != "v", k[1]))

    def of(self, root: Stmt) -> frozenset:
        """The names ``root`` uses (statements are visited bottom-up with an
        explicit stack: nests of lowered code can be deep)."""
        memo = self.memo
        if id(root) in memo:
            return memo[id(root)][1]
        stack: list[tuple[Stmt, bool]] = [(root, False)]
        parts: dict[int, tuple[list[Stmt], set]] = {}
        while stack:
            stmt, ready = stack.pop()
            if id(stmt) in memo:
                continue
            if not ready:
                inner, own = self._own(stmt)
                parts[id(stmt)] = (inner, own)
                stack.append((stmt, True))
                stack.extend((c, False) for c in inner if id(c) not in memo)
                continue
            inner, own = parts.pop(id(stmt))
            for c in inner:
                own |= memo[id(c)][1]
            memo[id(stmt)] = (stmt, frozenset(own))
        return memo[id(root)][1]

    def _own(self, stmt: Stmt) -> tuple[list[Stmt], set]:
        """The statements directly inside ``stmt`` and the names its other
        parts (expressions, regions, buffers) use."""
        inner: list[Stmt] = []
        own: set = set()
        stack = list(iter_children(stmt))
        while stack:
            n = stack.pop()
            if isinstance(n, Stmt):
                inner.append(n)
                continue
            t = type(n)
            if t is Var:
                self._saw(("v", n.name), n, own)
                continue
            if t is Buffer:
                self._saw(("b", n.name), n, own)
            stack.extend(iter_children(n))
        return inner, own

    def _saw(self, key: tuple[str, str], node, own: set) -> None:
        if key not in self.names:
            return
        known = self.nodes.setdefault(key, node)
        if known is not node and known != node:
            self.clashing.add(key)
        own.add(key)
