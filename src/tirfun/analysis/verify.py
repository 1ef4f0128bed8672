"""The well-formedness verifier: rules that span a tree.

``verify(func_or_mod)`` raises :class:`~tirfun.errors.VerifyError` when a
function breaks one of these rules; the message starts with the rule's name,
then names the function, the block (where there is one) and the offender:

``duplicate name``
    Loop variables, block iteration variables, parameters, let variables,
    buffers and block names are identities: each is bound once per function.
    (A thread variable of ``T.launch_thread`` may be launched again in a
    scope that does not overlap; a size variable may appear in several buffer
    declarations.)
``use outside scope`` / ``undefined variable``
    A variable is used where no binding of it is in scope: a loop variable
    after its loop, a block iteration variable outside its block, or a name
    nothing binds.
``block isolation``
    Inside a block, the body, ``init``, regions, ``alloc_buffers`` and
    ``match_buffers`` may not use the variables of loops outside the block
    (the ``iter_values`` and ``T.where`` of a ``BlockRealize``, and the
    iteration domains, are read outside the block and may). As in TVM, the
    iteration variables of enclosing blocks may be used (``blockize`` makes
    such inner blocks), and an opaque block (one without iteration
    variables) is no boundary: it sees the loop variables around it.
    With ``strict=True`` the iteration variables of enclosing blocks are
    refused too.
``undeclared buffer``
    A buffer is accessed that is not a parameter buffer, an ``alloc_buffer``
    or ``match_buffer`` of an enclosing block, nor a ``decl_buffer`` in scope,
    nor a view (``T.Buffer(shape, data=ptr)``) of a data pointer in scope.
``region not covered`` (only with ``strict=True``)
    A block's ``T.reads``/``T.writes`` must cover what its body reads and
    writes, including what nested blocks read and write. Index bounds are
    computed over the loops inside the block; a read may also be covered by
    a written region (a reduction reads what it writes). Only a definite
    miss is reported: where symbolic bounds cannot be decided, the program is
    accepted. A loop's body runs only where its extent is at least 1, which
    decides such bounds: a block declaring ``T.reads(A[i, m])`` while its
    loop ``for j in range(m)`` reads ``A[i, j]`` misses for every ``m``.
    The function's root block is exempt, as in TVM.
``binding dtype``
    A block iteration variable is bound to a value of another dtype.
``match_buffer shape``
    A buffer a block matches to a region has the region's dtype and storage
    scope, no more dimensions than the region, and the region's trailing
    extents as its shape (the extra leading ones are 1); as TVM's
    MatchBufferRegion checks, a dimension that is a variable takes any
    extent. Only a definite mismatch is reported (constants that differ,
    expressions a nonzero constant apart): a buffer larger than its region
    would reach past it.
``binding outside domain`` (only with ``strict=True`` or ``domains=True``)
    A block iteration variable is bound to values definitely outside its
    domain (checked when the domain is known and the value is an affine
    function of loops with known ranges; a ``T.where`` predicate on those
    loops turns the check off). TVM parses and schedules such a function;
    its block then runs where its domain says it does not, usually past the
    end of a buffer, so ``tirfun.build`` checks this rule before it
    compiles (the interpreter stops at the first such binding it runs).
``strides`` (only with ``strict=True`` or ``domains=True``)
    A buffer with strides has one per dimension. TVM's IR holds a buffer
    with fewer (``T.alloc_buffer((80, 80), strides=[1])``, as its
    cache_index writes), and fails when it flattens one; ``tirfun.build``
    refuses it before it compiles, and the interpreter when it lays the
    buffer out.

``spatial dependence`` (only with ``strict=True``)
    Instances of a block that differ in its data-parallel (spatial)
    iteration variables write different elements and read none the others
    write: ``B[vi + 1] = B[vi] * 2`` with ``vi`` spatial, or a sum over a
    variable declared spatial, is refused, with the two instances and the
    element (see :mod:`~tirfun.analysis.dependence`, which reports only
    definite conflicts: constant domains of at most 4096 instances, affine
    indices in the block's own body). TVM accepts and schedules such a
    block, and a schedule that reorders its instances changes its result.

``verify`` by default is as strict as TVM's well-formedness check: what
TVM accepts as TensorIR passes. ``strict=True`` adds the lint rules marked
above; the regions a user declares are their declaration, and the
primitives that depend on regions check them where they need them.

The walk uses explicit stacks, so deep loop nests do not exhaust Python's
recursion limit.
"""

from __future__ import annotations

from ..errors import VerifyError
from ..nodes import (
    Allocate, AssertStmt, AttrStmt, Block, BlockRealize, Buffer, BufferLoad, BufferStore, Call,
    DeclBuffer, Evaluate, FloatImm, For, GlobalVar, IfThenElse, IntImm, IRModule, IterVar, Let, LetStmt,
    Node, PrimFunc, Select, SeqStmt, StringImm, Var, While, AllocateConst, BufferRealize, Prefetch,
)
from ..nodes.dtype import DataType
from .arith.linear import Linear
from .arith.linear_bound import LinearInterval as Interval
from .arith.linear_bound import bound, const_bounds, let_interval, loop_interval
from .canonical import THREAD_ATTR_KEYS
from .dependence import spatial_conflict
from .threads import binds_threads
from .regions import access_box, attained_minimum, domain_interval, hull, region_box, within
from .traversal import iter_children, stmt_nodes


def verify(func_or_mod, *, name: str | None = None, strict: bool = False, domains: bool = False):
    """Check every rule of the module docstring; return the argument.

    Accepts a PrimFunc (named ``name``, else by its ``global_symbol``
    attribute) or an IRModule, whose functions are all checked. With
    ``strict``, the lint rules are checked too: regions must cover what the
    body accesses, nested blocks may not use the iteration variables of
    enclosing blocks, bindings must stay inside their domains, and the
    instances of a block along its spatial variables must not depend on
    each other. With
    ``domains``, only the last of these is added (what a build needs).
    """
    if isinstance(func_or_mod, IRModule):
        for fname in func_or_mod:
            _FunctionVerifier(func_or_mod[fname], fname, strict, domains).run()
            _check_calls(func_or_mod, fname)
        return func_or_mod
    if isinstance(func_or_mod, PrimFunc):
        fname = name or func_or_mod.attrs.get("global_symbol") or "main"
        _FunctionVerifier(func_or_mod, str(fname), strict, domains).run()
        return func_or_mod
    raise VerifyError(f"verify expects a PrimFunc or an IRModule, got {type(func_or_mod).__name__}")


def _check_calls(mod: IRModule, fname: str) -> None:
    """Every call of a module function names one of the module, with one
    argument of the right dtype per parameter, and has its return type."""
    from .traversal import walk

    pointees = _pointees(mod[fname])
    for node in walk(mod[fname].body):
        if not (isinstance(node, Call) and isinstance(node.op, GlobalVar)):
            continue
        callee = node.op.name_hint
        where = f"in function {fname}: the call of {callee}"
        if callee not in mod.functions:
            raise VerifyError(f"{where} names no function of the module",
                              rule="call target", function=fname, names=(callee,))
        target = mod[callee]
        if len(node.args) != len(target.params):
            raise VerifyError(f"{where} passes {len(node.args)} arguments; {callee} takes "
                              f"{len(target.params)}", rule="call arguments", function=fname,
                              names=(callee,))
        for param, arg in zip(target.params, node.args):
            if arg.dtype != param.dtype:
                raise VerifyError(f"{where} passes {arg.dtype} for parameter {param.name} of "
                                  f"{param.dtype}", rule="call arguments", function=fname,
                                  names=(callee, param.name))
            buf = target.buffer_map.get(param)
            held = _pointee(arg, pointees)
            if buf is not None and held is not None and held != buf.dtype.element_of:
                raise VerifyError(f"{where} passes a pointer to {held} data for buffer "
                                  f"{buf.name} of {buf.dtype}", rule="call arguments",
                                  function=fname, names=(callee, buf.name))
        returns = "void" if target.ret_type is None else str(target.ret_type)
        if str(node.dtype) != returns:
            raise VerifyError(f"{where} has type {node.dtype}, but {callee} returns {returns}",
                              rule="call return", function=fname, names=(callee,))


def _pointees(func: PrimFunc) -> dict:
    """The element dtype each data pointer of ``func`` is known to hold."""
    from .traversal import walk

    out = {}
    for node in walk(func.body):
        if isinstance(node, Buffer) and node.data is not None:
            out.setdefault(node.data, node.dtype.element_of)
        elif isinstance(node, Allocate):
            out.setdefault(node.buffer_var, DataType(node.dtype).element_of)
    for buf in func.buffer_map.values():
        if buf.data is not None:
            out.setdefault(buf.data, buf.dtype.element_of)
    return out


def _pointee(arg, pointees: dict):
    """The element dtype a pointer argument holds, when it is known."""
    if isinstance(arg, Var):
        return pointees.get(arg)
    if isinstance(arg, Call) and arg.op == "tir.address_of" and arg.args \
            and isinstance(arg.args[0], BufferLoad):
        return arg.args[0].buffer.dtype.element_of
    if isinstance(arg, Call) and arg.op == "tir.tvm_access_ptr" and arg.args:
        return arg.args[0].dtype.element_of
    return None


_MISSING = object()

# the kinds of variable bindings; loop and block iteration variables do not
# cross a block boundary
_LOOP, _ITER, _PARAM, _LET, _THREAD, _ALLOC, _SIZE, _DATA, _LET_EXPR = (
    "loop variable", "block iteration variable", "parameter", "let variable", "thread variable",
    "allocation", "size variable", "data pointer", "let-expression variable")
_ISOLATED_STRICT = (_LOOP, _ITER)
_ISOLATED = (_LOOP,)
# kinds whose identical Var may be bound again once the earlier binding is out of scope
_REBINDABLE = (_THREAD, _SIZE, _DATA, _LET_EXPR)


class _Frame:
    """What the verifier knows inside one block (or the function body)."""

    __slots__ = ("block", "index", "iso", "check", "ranges", "facts", "reads", "writes", "guard")

    def __init__(self, block: Block | None, index: int, iso: int, check: bool):
        self.block = block
        self.index = index
        self.iso = iso              # loop and iteration variables of frames below this are hidden
        self.check = check          # does this block's coverage get checked?
        self.ranges: dict = {}      # loop and let variables inside the block -> Interval
        self.facts: dict = {}       # the block's iteration variables -> their domain
        self.reads: list = []       # (Buffer, Box, BufferRegion) of T.reads
        self.writes: list = []      # (Buffer, Box, BufferRegion) of T.writes
        self.guard = 0              # > 0 under a condition: accesses may not all run


class _FunctionVerifier:
    """One walk over one function: binds names as it meets their binders,
    restores scopes when constructs end, and fails at the first broken rule."""

    def __init__(self, func: PrimFunc, fname: str, strict: bool = False, domains: bool = False):
        self.func = func
        self.fname = fname
        self.strict = strict
        self.thread_bound = strict and binds_threads(func.body)
        self.domains = strict or domains
        self.isolated = _ISOLATED_STRICT if strict else _ISOLATED
        self.var_names: dict[str, tuple] = {}     # name -> (Var, kind) bound so far
        self.buffer_names: dict[str, tuple] = {}  # name -> (Buffer, description)
        self.block_names: set[str] = set()
        self.visible: dict = {}                   # Var -> (kind, frame index)
        self.visible_buffers: dict = {}           # Buffer -> frame index of its declaration
        self.undo: list = []                      # (dict, key, previous value)
        self.frames: list[_Frame] = [_Frame(None, 0, 0, False)]
        self.binders, self.declared = _collect_binders(func)
        self.tasks: list = []

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        func = self.func
        for p in func.params:
            self.bind_var(p, _PARAM)
        for p in func.params:
            if p in func.buffer_map:
                self.declare_buffer(func.buffer_map[p], f"the buffer of parameter {p.name}", implicit=True)
        self.tasks.append((self.visit, func.body))
        while self.tasks:
            fn, arg = self.tasks.pop()
            fn(arg)

    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def fail(self, rule: str, detail: str, names: tuple = ()):
        block = self.frame.block
        where = f"function {self.fname}" + (f', block "{block.name_hint}"' if block is not None else "")
        raise VerifyError(f"{rule} in {where}: {detail}", rule=rule, function=self.fname,
                          block=None if block is None else block.name_hint, names=tuple(names))

    # ------------------------------------------------------------------ scopes
    def _set(self, table: dict, key, value) -> None:
        self.undo.append((table, key, table.get(key, _MISSING)))
        table[key] = value

    def note_runs(self, frame, extent) -> None:
        """Inside a loop the extent is at least 1: with ``extent`` ``c * n + k``
        (``c > 0``) of one variable ``n``, the body knows ``n >= (1 - k) / c``
        (scoped like the loop's range), so that a region declared at ``n``
        is seen to miss accesses over ``range(n)``."""
        linear = bound(extent, {}).lo
        if linear is None or len(linear.terms) != 1:
            return
        (var, c), = linear.terms
        if type(var) is not Var or c <= 0:
            return
        low = -((linear.const - 1) // c)  # the ceiling of (1 - k) / c
        known = frame.facts.get(var)
        if known is not None:
            if known.lo is None or not known.lo.is_const:
                return
            if known.lo.const >= low:
                return
            fact = Interval(Linear.constant(low), known.hi, False, known.deps)
        else:
            fact = Interval(Linear.constant(low), None, False, frozenset())
        self._set(frame.facts, var, fact)

    def restore(self, mark: int) -> None:
        while len(self.undo) > mark:
            table, key, previous = self.undo.pop()
            if previous is _MISSING:
                del table[key]
            else:
                table[key] = previous

    def bind_var(self, var: Var, kind: str) -> None:
        previous = self.var_names.get(var.name)
        if previous is not None:
            same = previous[0] == var and previous[1] == kind
            if not (same and kind in _REBINDABLE and var not in self.visible):
                self.fail("duplicate name", f"the name {var.name} is bound twice: as a {previous[1]} "
                                            f"and as a {kind}", names=(var.name,))
        self.var_names[var.name] = (var, kind)
        self._set(self.visible, var, (kind, self.frame.index))

    def use_var(self, var: Var) -> None:
        entry = self.visible.get(var)
        if entry is None:
            binder = self.binders.get(var)
            if binder is not None:
                kind, where = binder
                self.fail("use outside scope", f"{kind} {var.name} is used outside {where}", names=(var.name,))
            other = self.binders_by_name().get(var.name)
            if other is not None:
                self.fail("undefined variable", f"{var.name}: {var.dtype} is used but not bound; the "
                                                f"{other[0]} {var.name} has dtype {other[1].dtype}", names=(var.name,))
            self.fail("undefined variable", f"{var.name} is used but nothing binds it", names=(var.name,))
        kind, index = entry
        if kind in self.isolated and index < self.frame.iso:
            if kind == _LOOP:
                self.fail("block isolation", f"{kind} {var.name} is bound outside the block and used "
                                             "inside it; a block may not use the variables of loops "
                                             "around it (bind a block iteration variable to it)",
                          names=(var.name,))
            self.fail("block isolation", f"{kind} {var.name} is bound outside the block and used inside "
                                         "it; with strict=True a block may use only its own iteration "
                                         "variables and variables bound inside it", names=(var.name,))

    def binders_by_name(self) -> dict:
        return {v.name: (kind, v) for v, (kind, _where) in self.binders.items()}

    def declare_buffer(self, buf: Buffer, what: str, implicit: bool, implicit_data: bool | None = None) -> None:
        """Declare ``buf`` in the current scope. With ``implicit``, variables of
        its shape, strides and offset that are not in scope are bound here (a
        parameter buffer or match_buffer introduces its sizes); with
        ``implicit_data`` (default: ``implicit``) so is its data pointer."""
        previous = self.buffer_names.get(buf.name)
        if previous is not None:
            self.fail("duplicate name", f"the buffer name {buf.name} is declared twice: as {previous[1]} "
                                        f"and as {what}", names=(buf.name,))
        self.buffer_names[buf.name] = (buf, what)
        if self.domains and buf.strides and len(buf.strides) != len(buf.shape):
            # TVM's IR holds such a buffer, and its flattening fails on it
            self.fail("strides", f"buffer {buf.name} ({what}) has {len(buf.shape)} dimensions but "
                                 f"{len(buf.strides)} strides, so its elements have no place in memory",
                      names=(buf.name,))
        exprs = list(buf.shape) + list(buf.strides)
        if buf.elem_offset is not None:
            exprs.append(buf.elem_offset)
        if implicit:
            # as in TVM, a declaration binds the size variables it introduces
            for expr in exprs:
                for node in _walk_expr_nodes(expr):
                    if type(node) is Var and node not in self.visible:
                        self.bind_var(node, _SIZE)
        for expr in exprs:
            self.check_expr(expr, track=False)
        if buf.data is not None:
            if buf.data not in self.visible and (implicit if implicit_data is None else implicit_data):
                self.bind_var(buf.data, _DATA)
            else:
                self.use_var(buf.data)
        self._set(self.visible_buffers, buf, self.frame.index)

    def use_buffer(self, buf: Buffer) -> int:
        """Check ``buf`` is declared here; return the frame index of its declaration."""
        index = self.visible_buffers.get(buf)
        if index is not None:
            return index
        decl = self.declared.get(buf.name)
        if decl is None and buf.data is not None and buf.data in self.visible:
            # lowered TIR views an allocation without a decl_buffer
            # (T.Buffer(shape, data=ptr)); TVM accepts it while ptr is in scope
            for expr in [*buf.shape, *buf.strides] + ([buf.elem_offset] if buf.elem_offset is not None else []):
                self.check_expr(expr, track=False)
            return self.visible[buf.data][1]
        if decl is not None and decl[0] == buf:
            self.fail("undeclared buffer", f"buffer {buf.name} is accessed outside {decl[1]}, "
                                           "where it is declared", names=(buf.name,))
        if decl is not None:
            self.fail("undeclared buffer", f"buffer {buf.name} is accessed but not declared; a different "
                                           f"buffer named {buf.name} (shape {_shape_text(decl[0])}, "
                                           f"{decl[0].dtype}) is declared as {decl[1]}", names=(buf.name,))
        self.fail("undeclared buffer", f"buffer {buf.name} is accessed but not declared: it is not a "
                                       "parameter buffer, an alloc_buffer or match_buffer of an "
                                       "enclosing block, nor a decl_buffer in scope", names=(buf.name,))
        return -1  # unreachable

    # ------------------------------------------------------------ statements
    def visit(self, s) -> None:
        cls = type(s)
        push = self.tasks.append
        if cls is SeqStmt:
            for child in reversed(s.seq):
                push((self.visit, child))
        elif cls is BufferStore:
            index = self.use_buffer(s.buffer)
            for i in s.indices:
                self.check_expr(i)
            self.check_expr(s.value)
            if s.predicate is not None:
                self.check_expr(s.predicate)
            self.cover(s.buffer, index, s.indices, write=True, exact=s.predicate is None)
        elif cls is For:
            self.check_expr(s.min)
            self.check_expr(s.extent)
            mark = len(self.undo)
            frame = self.frame
            if frame.check:
                self.note_runs(frame, s.extent)
            interval = loop_interval(s.loop_var, s.min, s.extent, frame.ranges, frame.facts)
            self.bind_var(s.loop_var, _LOOP)
            self._set(frame.ranges, s.loop_var, interval)
            push((self.restore, mark))
            push((self.visit, s.body))
        elif cls is IfThenElse:
            self.check_expr(s.condition)
            self.frame.guard += 1
            push((self._unguard, self.frame))
            if s.else_case is not None:
                push((self.visit, s.else_case))
            push((self.visit, s.then_case))
        elif cls is Evaluate:
            self.check_expr(s.value)
        elif cls is LetStmt:
            self.check_expr(s.value)
            mark = len(self.undo)
            frame = self.frame
            value = let_interval(s.var, s.value, frame.ranges) if s.value.dtype.is_integer else None
            self.bind_var(s.var, _LET)
            if value is not None:
                self._set(frame.ranges, s.var, value)
            push((self.restore, mark))
            push((self.visit, s.body))
        elif cls is AttrStmt:
            self.check_expr(s.value)
            mark = len(self.undo)
            target = s.node
            if isinstance(target, IterVar):
                self.check_expr(target.dom.min)
                self.check_expr(target.dom.extent)
                self.bind_var(target.var, _THREAD)
            elif isinstance(target, Var) and s.attr_key in THREAD_ATTR_KEYS:
                self.bind_var(target, _THREAD)
            push((self.restore, mark))
            push((self.visit, s.body))
        elif cls is AssertStmt:
            self.check_expr(s.condition)
            push((self.visit, s.body))
        elif cls is AllocateConst:
            for e in s.extents:
                self.check_expr(e)
            mark = len(self.undo)
            self.bind_var(s.buffer_var, _ALLOC)
            push((self.restore, mark))
            push((self.visit, s.body))
        elif cls is BufferRealize:
            for r in s.bounds:
                self.check_expr(r.min)
                self.check_expr(r.extent)
            self.check_expr(s.condition)
            mark = len(self.undo)
            if s.buffer not in self.visible_buffers:
                self.declare_buffer(s.buffer, "a realize", implicit=False)
            push((self.restore, mark))
            push((self.visit, s.body))
        elif cls is Prefetch:
            self.use_buffer(s.buffer)
            for r in s.bounds:
                self.check_expr(r.min)
                self.check_expr(r.extent)
        elif cls is While:
            self.check_expr(s.condition)
            self.frame.guard += 1  # the body may run no time at all
            push((self._unguard, self.frame))
            push((self.visit, s.body))
        elif cls is Allocate:
            for e in s.extents:
                self.check_expr(e)
            self.check_expr(s.condition)
            mark = len(self.undo)
            self.bind_var(s.buffer_var, _ALLOC)
            push((self.restore, mark))
            push((self.visit, s.body))
        elif cls is DeclBuffer:
            mark = len(self.undo)
            self.declare_buffer(s.buffer, "a decl_buffer", implicit=False)
            push((self.restore, mark))
            push((self.visit, s.body))
        elif cls is BlockRealize:
            self.realize(s)
        elif cls is Block:
            self.enter_block(s, None)
        else:
            self.fail("unknown statement", f"{cls.__name__} is not a TIR statement")

    def _unguard(self, frame: _Frame) -> None:
        frame.guard -= 1

    # ---------------------------------------------------------------- blocks
    def realize(self, br: BlockRealize) -> None:
        block = br.block
        for iv, value in zip(block.iter_vars, br.iter_values):
            self.check_expr(value)
            if value.dtype != iv.var.dtype:
                self.fail("binding dtype", f'block "{block.name_hint}": iteration variable '
                                           f"{iv.var.name}: {iv.var.dtype} is bound to "
                                           f"{_text(value)} of dtype {value.dtype}", names=(iv.var.name,))
        self.check_expr(br.predicate)
        if self.domains:
            self.check_domains(br)
        self.enter_block(block, br)

    def check_domains(self, br: BlockRealize) -> None:
        block = br.block
        frame = self.frame
        if type(br.predicate) is IntImm and br.predicate.value == 0:
            # T.where(False): the block never runs, so its binding is never
            # taken (decompose_padding leaves one where a part of a
            # partitioned loop holds no in-bound element)
            return
        predicate_vars = set() if _is_true(br.predicate) else {
            n for n in _walk_expr_nodes(br.predicate) if type(n) is Var}
        for iv, value in zip(block.iter_vars, br.iter_values):
            dom = domain_interval(iv.dom)
            if dom.lo is None or dom.hi is None:
                continue
            iv_value = bound(value, frame.ranges)
            if not iv_value.exact or iv_value.deps & predicate_vars:
                continue  # inexact bounds, or a T.where that may exclude the extremes
            for end, limit, below in ((iv_value.lo, dom.lo, True), (iv_value.hi, dom.hi, False)):
                if end is None:
                    continue
                # how far inside the domain the end stays; negative is outside
                margin = end - limit if below else limit - end
                _low, high = const_bounds(margin, frame.facts)
                reached = attained_minimum(margin, frame.facts)
                if (high is not None and high < 0) or (reached is not None and reached < 0):
                    self.fail("binding outside domain",
                              f'block "{block.name_hint}": iteration variable {iv.var.name} has domain '
                              f"[{_linear_text(dom.lo)}, {_linear_text(dom.hi)}] but is bound to "
                              f"{_text(value)}, which reaches {_linear_text(end)}", names=(iv.var.name,))

    def enter_block(self, block: Block, br: BlockRealize | None) -> None:
        name = block.name_hint
        # domains are read outside the block (TVM's isolation check skips them too)
        for iv in block.iter_vars:
            self.check_expr(iv.dom.min, track=False)
            self.check_expr(iv.dom.extent, track=False)
        if name in self.block_names:
            self.fail("duplicate name", f'the block name "{name}" is used twice')
        self.block_names.add(name)
        mark = len(self.undo)
        is_root = br is not None and br is self.func.body and not block.iter_vars
        index = len(self.frames)
        # as in TVM, an opaque block (no iteration variables) does not isolate
        iso = index if block.iter_vars else self.frame.iso
        frame = _Frame(block, index, iso, check=self.strict and not is_root)
        self.frames.append(frame)
        for iv in block.iter_vars:
            if iv.dom.min.dtype != iv.var.dtype or iv.dom.extent.dtype != iv.var.dtype:
                self.fail("binding dtype", f"iteration variable {iv.var.name}: {iv.var.dtype} has a domain "
                                           f"of dtype {iv.dom.extent.dtype}", names=(iv.var.name,))
            self.bind_var(iv.var, _ITER)
            frame.facts[iv.var] = domain_interval(iv.dom)
        for buf in block.alloc_buffers:
            self.declare_buffer(buf, f'an alloc_buffer of block "{name}"', implicit=False, implicit_data=True)
        for match in block.match_buffers:
            self.check_region(match.source)
            self.check_match(match)
            self.declare_buffer(match.buffer, f'a match_buffer of block "{name}"', implicit=True)
        for region in block.reads:
            self.check_region(region)
            frame.reads.append((region.buffer, region_box(region), region))
        for region in block.writes:
            self.check_region(region)
            frame.writes.append((region.buffer, region_box(region), region))
        if frame.check:
            conflict = spatial_conflict(block, self.thread_bound) if block.iter_vars else None
            if conflict is not None:
                self.fail("spatial dependence", conflict.describe(), names=(conflict.buffer.name,))
            for match in block.match_buffers:
                source = match.source
                index = self.visible_buffers.get(source.buffer, -1)
                if index < frame.index:
                    self.check_covered(source.buffer, region_box(source), write=False,
                                       what=lambda match=match: (
                                           f"matched by {match.buffer.name} as {_region_text(match.source)}"))
        self.tasks.append((self.exit_block, (block, br, mark)))
        self.tasks.append((self.visit, block.body))
        if block.init is not None:
            self.tasks.append((self.visit, block.init))

    def check_match(self, match) -> None:
        """The rule ``match_buffer shape`` for one matched region."""
        problem = match_buffer_problem(match)
        if problem is not None:
            self.fail("match_buffer shape", f"{match.buffer.name} matches {_region_text(match.source)}: "
                      f"{problem}", names=(match.buffer.name,))

    def exit_block(self, args) -> None:
        block, br, mark = args
        self.frames.pop()
        self.restore(mark)
        parent = self.frame
        if br is None or not parent.check:
            return
        # the parent must cover what the child declares, with the child's
        # iteration variables replaced by the ranges of their bound values
        ranges = dict(parent.ranges)
        for iv, value in zip(block.iter_vars, br.iter_values):
            ranges[iv.var] = bound(value, parent.ranges)
        exact = _is_true(br.predicate) and parent.guard == 0
        for regions, write in ((block.reads, False), (block.writes, True)):
            for region in regions:
                index = self.visible_buffers.get(region.buffer)
                if index is None or index >= parent.index:
                    continue  # declared inside the parent: not visible from outside
                box = region_box(region, ranges, exact)
                verb = "writes" if write else "reads"
                self.check_covered(region.buffer, box, write,
                                   what=lambda region=region, verb=verb: (
                                       f'(block "{block.name_hint}" inside it {verb} {_region_text(region)})'))

    def check_region(self, region) -> None:
        self.use_buffer(region.buffer)
        for rng in region.region:
            self.check_expr(rng.min, track=False)
            self.check_expr(rng.extent, track=False)

    # -------------------------------------------------------------- coverage
    def cover(self, buf: Buffer, index: int, indices, write: bool, exact: bool) -> None:
        frame = self.frame
        if not frame.check or index >= frame.index:
            return  # the root block, or a buffer declared inside this block
        box = access_box(indices, frame.ranges, exact and frame.guard == 0)
        self.check_covered(buf, box, write,
                           what=lambda: f"at {buf.name}[{', '.join(_text(i) for i in indices)}]")

    def check_covered(self, buf: Buffer, box, write: bool, what) -> None:
        """Fail unless ``box`` of ``buf`` lies in the current block's regions;
        ``what`` (a string or a function giving one, printed only on failure)
        says which access it is."""
        frame = self.frame
        regions = frame.writes if write else frame.reads + frame.writes
        listed = [(b, r) for (rb, b, r) in regions if rb == buf]
        boxes = [b for b, _ in listed]
        listing = "T.writes" if write else "T.reads (or T.writes)"
        verb = "writes" if write else "reads"
        if not boxes:
            what = what() if callable(what) else what
            self.fail("region not covered", f"the block {verb} buffer {buf.name} {what}, but its "
                                            f"{listing} do not list {buf.name}")
        verdicts = [within(box, b, frame.facts) for b in boxes]
        if any(v is True for v in verdicts):
            return
        outer = boxes[0] if len(boxes) == 1 else hull(boxes)
        if outer is not None and within(box, outer, frame.facts) is False:
            shown = ", ".join(_region_text(r) for _, r in listed)
            what = what() if callable(what) else what
            self.fail("region not covered", f"the block {verb} buffer {buf.name} {what}, outside the "
                                            f"regions of {buf.name} in its {listing}: {shown}")

    # ----------------------------------------------------------- expressions
    def check_expr(self, expr, track: bool = True) -> None:
        """Check the variables and buffers used by ``expr``; with ``track``,
        loads count as reads of the current block."""
        stack = [(expr, False)]
        while stack:
            x, guarded = stack.pop()
            if type(x) is tuple:  # a scope action of a Let
                action, payload = x
                if action == "bind":
                    var, value = payload
                    self.bind_var(var, _LET_EXPR)
                    if value is not None:
                        self._set(self.frame.ranges, var, value)
                else:
                    self.restore(payload)
                continue
            cls = type(x)
            if cls is Var:
                self.use_var(x)
            elif cls in (IntImm, FloatImm, StringImm):
                continue
            elif cls is BufferLoad:
                index = self.use_buffer(x.buffer)
                if track:
                    self.cover(x.buffer, index, x.indices, write=False,
                               exact=not guarded and x.predicate is None)
                if x.predicate is not None:
                    stack.append((x.predicate, guarded))
                for i in reversed(x.indices):
                    stack.append((i, guarded))
            elif cls is Let:
                value = let_interval(x.var, x.value, self.frame.ranges) if x.value.dtype.is_integer else None
                stack.append((("restore", len(self.undo)), guarded))
                stack.append((x.body, guarded))
                stack.append((("bind", (x.var, value)), guarded))
                stack.append((x.value, guarded))
            elif cls is Select:
                stack.append((x.false_value, True))
                stack.append((x.true_value, True))
                stack.append((x.condition, guarded))
            elif cls is Call and x.op == "tir.if_then_else":
                for arg in reversed(x.args[1:]):
                    stack.append((arg, True))
                if x.args:
                    stack.append((x.args[0], guarded))
            elif cls is Buffer:
                self.use_buffer(x)
            elif isinstance(x, Node):
                for child in reversed(list(iter_children(x))):
                    stack.append((child, guarded))


# ---------------------------------------------------------------------------
# helpers


def _collect_binders(func: PrimFunc):
    """Every variable binding and buffer declaration of the function, for
    messages: Var -> (kind, where it is in scope), name -> (Buffer, where)."""
    binders: dict = {}
    declared: dict = {}
    for p in func.params:
        binders.setdefault(p, (_PARAM, "the function"))
    for p, buf in func.buffer_map.items():
        declared.setdefault(buf.name, (buf, f"the buffer of parameter {p.name}"))
    for s in stmt_nodes(func.body):
        if isinstance(s, For):
            binders.setdefault(s.loop_var, (_LOOP, "its loop"))
        elif isinstance(s, Block):
            where = f'block "{s.name_hint}"'
            for iv in s.iter_vars:
                binders.setdefault(iv.var, (_ITER, where))
            for buf in s.alloc_buffers:
                declared.setdefault(buf.name, (buf, f"an alloc_buffer of {where}"))
            for m in s.match_buffers:
                declared.setdefault(m.buffer.name, (m.buffer, f"a match_buffer of {where}"))
        elif isinstance(s, LetStmt):
            binders.setdefault(s.var, (_LET, "its let statement"))
        elif isinstance(s, Allocate):
            binders.setdefault(s.buffer_var, (_ALLOC, "its allocate"))
        elif isinstance(s, AttrStmt) and isinstance(s.node, IterVar):
            binders.setdefault(s.node.var, (_THREAD, "its launch_thread"))
        elif isinstance(s, DeclBuffer):
            declared.setdefault(s.buffer.name, (s.buffer, "a decl_buffer"))
    return binders, declared


def _walk_expr_nodes(expr):
    stack = [expr]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, Node) and not isinstance(x, (Var, IntImm, FloatImm, StringImm)):
            stack.extend(iter_children(x))


def match_buffer_problem(match) -> str | None:
    """Why a buffer cannot view the region it matches (the rule
    ``match_buffer shape``), or None."""
    buf, source = match.buffer, match.source
    if buf.dtype != source.buffer.dtype:
        return f"its dtype {buf.dtype} is not the region's {source.buffer.dtype}"
    if buf.storage_scope != source.buffer.storage_scope:
        return f"its scope {buf.storage_scope!r} is not the region's {source.buffer.storage_scope!r}"
    extents = [r.extent for r in source.region]
    offset = len(extents) - len(buf.shape)
    if offset < 0:
        return f"it has {len(buf.shape)} dimensions, the region {len(extents)}"
    for extent in extents[:offset]:
        if _definitely_differ(extent, IntImm(extent.dtype, 1)):
            return f"a leading extent of the region is {_text(extent)}, not 1"
    for dim, extent in zip(buf.shape, extents[offset:]):
        if type(dim) is not Var and _definitely_differ(dim, extent):
            return f"its shape {_shape_text(buf)} does not fit the region's extent {_text(extent)}"
    return None


def _definitely_differ(a, b) -> bool:
    """Whether two integer expressions differ by a nonzero constant."""
    from .arith.linear import constant_difference

    if a.dtype != b.dtype and isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value != b.value
    difference = constant_difference(a, b)
    return difference is not None and difference != 0


def _is_true(expr) -> bool:
    return type(expr) is IntImm and expr.value == 1


def _text(node) -> str:
    try:
        text = node.script().strip()
    except Exception:  # printer missing or failing: fall back to a terse form
        if isinstance(node, Var):
            return node.name
        if isinstance(node, IntImm):
            return str(node.value)
        return f"<{type(node).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def _linear_text(linear) -> str:
    if linear.is_const:
        return str(linear.const)
    parts = []
    for term, c in linear.terms:
        name = term.name if isinstance(term, Var) else _text(term)
        parts.append(name if c == 1 else f"{c}*{name}")
    if linear.const:
        parts.append(str(linear.const))
    return " + ".join(parts)


def _shape_text(buf: Buffer) -> str:
    return "(" + ", ".join(_text(d) for d in buf.shape) + ("," if len(buf.shape) == 1 else "") + ")"


def _region_text(region) -> str:
    try:
        return region.script().strip()
    except Exception:  # printer missing or failing: spell it out
        pass
    parts = []
    for rng in region.region:
        if isinstance(rng.extent, IntImm) and rng.extent.value == 1:
            parts.append(_text(rng.min))
        else:
            parts.append(f"{_text(rng.min)}:{_text(rng.min)} + {_text(rng.extent)}")
    return f"{region.buffer.name}[{', '.join(parts)}]"


__all__ = ["verify"]
