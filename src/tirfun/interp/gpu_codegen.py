"""Translate a thread-bound PrimFunc into Python with the GPU's meaning.

The host code (everything outside thread-bound loops) is generated as by
:class:`~.codegen.Compiler`. Each kernel (an outermost loop bound to a
thread tag, or an outermost ``T.launch_thread``) becomes a separate
generator function run once per thread by :mod:`.gpu`:

* every thread-bound loop inside the kernel binds its variable to the
  thread's index for that tag (``min + index``), as TVM's
  UnifyThreadBinding makes all loops of one tag in a kernel one thread
  axis; launched thread variables likewise;
* ``T.tvm_storage_sync(scope)`` becomes a ``yield`` of the barrier, so the
  scheduler runs a thread only up to its next barrier;
* buffers of ``shared`` scope allocated inside the kernel are one storage
  per thread block; every other allocation inside it is per thread;
  ``shared`` and ``local`` buffers allocated outside (at the root, as
  TensorIR schedules leave them) get fresh storage per block or per thread
  when the kernel starts, as TVM's lowering moves them into the kernel;
* each access to storage that other threads can see (shared, or from
  outside the kernel) goes through the race recorder;
* a cross-thread reduction (a block whose reduction iteration variable
  takes its value from a ``threadIdx`` loop, which TVM lowers to an
  all-reduce) is a collective step: the body of that loop runs between two
  barriers, and the threads update the block's outputs in turn without
  racing, thread by thread in index order, each through all its own
  iterations (a ``local`` output, one per thread, is handed from each
  thread's copy to the next, and every copy gets the total at the end, as
  TVM's all-reduce gives every thread the result; the serial order when
  the bound loop is the outer reduction loop; TVM's all-reduce combines
  in a tree, so float sums may round differently on a GPU; the lowered
  program, ``tirfun.lower(mod, "cuda")``, runs the all-reduce in the GPU's
  order);
* ``buf[i] = T.tvm_warp_shuffle_down(mask, value, offset, width, 32)`` (and
  ``tvm_warp_shuffle``, ``tvm_warp_shuffle_up``) is a warp-collective step:
  the thread waits for the lanes of its mask and stores the value of its
  source lane, chosen as PTX's ``shfl.sync`` chooses it.
"""

from __future__ import annotations

import attrs

from ..errors import InterpError
from ..analysis.threads import bound_var, is_sync, launch_of
from ..analysis.traversal import walk
from ..nodes import (
    Allocate, BlockRealize, BufferLoad, BufferStore, Call, Evaluate, For, ForKind, IterVarType, StringImm, Var,
)
from .codegen import Compiler, DataInfo, Env, _Function

# storage scopes whose buffers one thread block shares
SHARED_SCOPES = frozenset({"shared", "shared.dyn", "warp"})
# the warp shuffles and how each picks its source lane
SHUFFLES = {"tir.tvm_warp_shuffle": "idx", "tir.tvm_warp_shuffle_down": "down",
            "tir.tvm_warp_shuffle_up": "up"}
# tvm_storage_sync scopes and the barrier each one is
BARRIERS = {"shared": "shared", "shared.dyn": "shared", "warp": "warp", "global": "global"}


@attrs.frozen
class Site:
    """One instrumented access: the buffer, its layout (ints, or names of
    locals when only known at run time), the statement, the block, and
    whether the storage is the thread block's (shared memory)."""

    buffer: str
    shape: tuple
    strides: tuple
    offset: object
    stmt: object
    block: str | None
    shared: bool

    def index_of(self, flat: int) -> str:
        """The buffer index of storage element ``flat``, as text."""
        layout = list(self.shape) + list(self.strides) + [self.offset]
        if not all(isinstance(x, int) for x in layout) or not self.shape:
            return f"storage element {flat}"
        rem = flat - self.offset
        index = []
        for st in self.strides:
            if st > 0:
                index.append(rem // st)
                rem -= index[-1] * st
            else:
                index.append(0)
        return "(" + ", ".join(map(str, index)) + ("," if len(index) == 1 else "") + ")"


@attrs.frozen
class Binding:
    """A thread-bound loop or launched thread of a kernel, for the launch."""

    tag: str
    stmt: object


@attrs.frozen
class KernelInfo:
    """What the launcher needs to know of one kernel."""

    bindings: tuple  # Binding per thread-bound statement, in the order of their values


class _Kernel:
    """Compilation state inside one kernel."""

    def __init__(self):
        self.private: set[str] = set()  # storages each thread has its own of
        self.block: set[str] = set()    # storages one thread block shares
        self.reducing: frozenset = frozenset()  # buffers a cross-thread reduction updates
        self.reduce_tags: tuple = ()            # the thread tags of the cross-thread reductions entered


class GpuCompiler(Compiler):
    """A :class:`Compiler` that gives thread-bound code the GPU's meaning."""

    def __init__(self, func):
        super().__init__(func)
        self.kernel: _Kernel | None = None
        self.sites: list[Site] = []
        self.barriers: list = []          # the tvm_storage_sync statements
        self.kernels: list[KernelInfo] = []
        self._pending_store = None        # the access a store line is writing

    # ------------------------------------------------------------ statements
    def stmt(self, s, env: Env) -> None:
        handler = None
        if self.kernel is None:
            if launch_of(s) is not None:
                handler = self.launch
        elif launch_of(s) is not None:
            handler = self.bind_thread
        elif is_sync(s):
            handler = self.barrier
        elif isinstance(s, BufferStore) and isinstance(s.value, Call) and s.value.op in SHUFFLES:
            handler = self.shuffle
        elif isinstance(s, Allocate):
            handler = self.kernel_allocate
        if handler is None:
            super().stmt(s, env)
            return
        previous = self.ctx
        self.set_ctx(s, env)
        handler(s, env)
        self.ctx = previous

    def launch(self, s, env: Env) -> None:
        """Host code: compute every thread extent of the kernel and launch it."""
        bindings = [(p, node) for p, node in _walk_launches(s)]
        values = []
        for _, node in bindings:
            tag, lo, ext = launch_of(node)
            for what, e in (("start", lo), ("extent", ext)):
                if e is None:
                    values.append("0")
                    continue
                try:
                    values.append(self.expr(e, env).code)
                except InterpError as exc:
                    raise InterpError(f"the {what} of the loop bound to {tag} must be known when "
                                      f"the kernel is launched: {exc}") from None
        k = len(self.kernels)
        self.kernels.append(KernelInfo(tuple(Binding(launch_of(n)[0], n) for _, n in bindings)))
        name = self.fresh("h_thread")
        host_live = env.live
        kenv = attrs.evolve(env, live=env.live + ("h_ix", "h_gpu"))
        saved = (self.cur, self.indent, self.loop_depth, self.kernel)
        fn = _Function(f"def {name}({', '.join(kenv.live)}):")
        self.functions.append(fn)
        self.cur, self.indent, self.loop_depth, self.kernel = fn, 1, 0, _Kernel()
        self.set_ctx(s, kenv)
        self.relocate(s, kenv)
        self.bind_thread(s, kenv)
        self.line("return None")
        self.line("yield None  # every thread is a generator, paused at its barriers")
        self.cur, self.indent, self.loop_depth, self.kernel = saved
        self.set_ctx(s, env)
        self.line(f"h_launch({k}, {name}, ({''.join(v + ', ' for v in values)}), "
                  f"({''.join(n + ', ' for n in host_live)}))")

    def relocate(self, s, env: Env) -> None:
        """``shared`` and ``local`` buffers allocated outside the kernel and
        used in it get fresh storage per block or per thread, as TVM's
        lowering allocates them inside the kernel, where they are used."""
        used = {n.buffer for n in walk(s) if isinstance(n, (BufferLoad, BufferStore))}
        done = set()
        for buf, access in env.buffers.items():
            scope = buf.storage_scope
            if buf not in used or access.storage in done or not (
                    scope in SHARED_SCOPES or scope.startswith("local")):
                continue
            done.add(access.storage)
            self.line(f"{access.storage} = h_alloc({str(buf.dtype)!r}, len({access.storage}))")
            self.share(access.storage, scope, buf.name)

    def bind_thread(self, s, env: Env) -> None:
        """Inside a kernel: the variable of a thread-bound loop is the start
        plus the thread's index for the tag (the launch checked the extents)."""
        tag, lo, ext = launch_of(s)
        var = bound_var(s)
        body = s.body
        if tag.startswith("vthread"):
            # a kernel of virtual threads only: its one thread runs them in
            # turn (tirfun.analysis.virtual_threads made every other vthread loop serial)
            self.stmt(For(var, lo if lo is not None else 0, ext, ForKind.SERIAL, body), env)
            return
        e = self.expr(ext, env)
        py = self.var_name(var)
        ext_iv = e.iv or (0, var.dtype.max_value())
        if lo is None:
            self.line(f"{py} = h_ix[{tag!r}]")
            lo_iv = (0, 0)
        else:
            lv = self.expr(lo, env)
            lo_iv = lv.iv or (var.dtype.min_value(), var.dtype.max_value())
            self.line(f"{py} = h_ix[{tag!r}]" if lv.iv == (0, 0) else f"{py} = {lv.code} + h_ix[{tag!r}]")
        iv = (lo_iv[0], lo_iv[1] + max(ext_iv[1], 1) - 1)
        below = frozenset([e.code]) if lo_iv == (0, 0) and e.code.isidentifier() else frozenset()
        env = env.bind_var(var, py, iv, below)
        reduced = _cross_thread_outputs(body, var) if tag.startswith("threadIdx") else set()
        if not reduced:
            self.stmt(body, env)
            return
        # a cross-thread reduction: a collective step between two barriers, in
        # which the threads update the outputs in turn without racing
        self.barriers.append(s)
        step = len(self.barriers) - 1
        self.line(f"yield ('shared', {step})")
        saved, saved_tags = self.kernel.reducing, self.kernel.reduce_tags
        tags = saved_tags + (tag,)
        # outputs each thread has its own of (local scope): TVM's all-reduce
        # leaves the whole result in every thread's copy, so the threads of
        # the reduction pass their partial result on in turn, and each copy
        # gets the total at the end. The innermost of nested steps (a
        # reduction over two thread dimensions) does it for all of them: its
        # body holds no barrier, so each thread's turn is one stretch
        innermost = not any(launch_of(n) is not None and launch_of(n)[0].startswith("threadIdx")
                            and _cross_thread_outputs(n.body, bound_var(n)) for _, n in _walk_launches(body))
        private = [] if not innermost else sorted(
            {a.storage for a in env.buffers.values()
             if a.name in reduced | saved and a.storage in self.kernel.private})
        carried = f"{tags!r}, ({''.join(p + ', ' for p in private)})"
        if private:
            self.line(f"h_gpu.reduce_enter({step}, {carried})")
        self.kernel.reducing, self.kernel.reduce_tags = saved | reduced, tags
        self.stmt(body, env)
        self.kernel.reducing, self.kernel.reduce_tags = saved, saved_tags
        self.set_ctx(s, env)
        if private:
            self.line(f"h_gpu.reduce_leave({step}, {carried})")
        self.line(f"yield ('shared', {step})")
        if private:
            self.line(f"h_gpu.reduce_final({step}, {carried})")

    def barrier(self, s: Evaluate, env: Env) -> None:
        """``T.tvm_storage_sync(scope)``: the thread pauses until the others arrive."""
        args = s.value.args
        scope = args[0].value if args and isinstance(args[0], StringImm) else None
        kind = BARRIERS.get(scope)
        if kind is None:
            raise InterpError(f"T.tvm_storage_sync of scope {scope!r}: the interpreter knows the "
                              f"scopes {', '.join(sorted(BARRIERS))}")
        self.barriers.append(s)
        self.line(f"yield ({kind!r}, {len(self.barriers) - 1})")

    def shuffle(self, s: BufferStore, env: Env) -> None:
        """``buf[i] = T.tvm_warp_shuffle*(mask, value, lane or offset, width,
        warp_size)``: the thread pauses until every lane of its mask has
        arrived, then stores the value its source lane gave (see :mod:`.gpu`)."""
        call = s.value
        if len(call.args) != 5 or call.dtype.lanes != 1:
            raise InterpError(f"T.{call.op[4:]} takes a scalar and five arguments (mask, value, "
                              f"lane, width, warp_size), got {len(call.args)}")
        mask, value, lane, width, warp = (self.expr(a, env) for a in call.args)
        self.barriers.append(s)
        t = self.fresh("s_shfl")
        self.line(f"{t} = yield ('shfl', {len(self.barriers) - 1}, ({mask.code}, "
                  f"{self.exact(value)}, {SHUFFLES[call.op]!r}, {lane.code}, {width.code}, "
                  f"{warp.code}))")
        var = Var(t, call.dtype)
        self.s_store(BufferStore(s.buffer, var, s.indices), env.bind_var(var, t, None))

    def expr(self, e, env: Env, lane: int = 0):
        """As the base compiler's; a warp shuffle is a statement of its own here."""
        if isinstance(e, Call) and self.kernel is not None and e.op in SHUFFLES:
            raise InterpError(f"T.{e.op[4:]} inside an expression: the interpreter runs a warp "
                              "shuffle as the whole value stored to a buffer "
                              "(buf[0] = T.tvm_warp_shuffle_down(...))")
        return super().expr(e, env, lane)

    def kernel_allocate(self, s: Allocate, env: Env) -> None:
        """An Allocate inside a kernel: per block for shared scopes, else per thread."""
        size = self.product([self.expr(e, env) for e in s.extents])
        py = self.fresh(f"b_{s.buffer_var.name}")
        self.line(f"{py} = h_alloc({str(s.dtype)!r}, {size})")
        self.share(py, s.scope, s.buffer_var.name)
        self.stmt(s.body, env.bind_data(s.buffer_var, DataInfo(py, s.dtype)))

    def allocate_buffer(self, buf, env: Env) -> Env:
        env = super().allocate_buffer(buf, env)
        if self.kernel is not None:
            self.share(env.buffers[buf].storage, buf.storage_scope, buf.name)
        return env

    def share(self, py: str, scope: str, name: str) -> None:
        """Make the fresh storage ``py`` the thread block's when its scope is shared."""
        if scope in SHARED_SCOPES:
            self.kernel.block.add(py)
            self.line(f"{py} = h_gpu.shared({name!r}, {py})")
        else:
            self.kernel.private.add(py)

    def continue_in_new_function(self, s, env: Env) -> None:
        """As the base compiler's, but inside a kernel the part is a generator
        too, so a barrier inside it pauses the thread."""
        if self.kernel is None:
            super().continue_in_new_function(s, env)
            return
        name = self.fresh("h_part")
        params = ", ".join(env.live)
        saved = (self.cur, self.indent, self.loop_depth)
        fn = _Function(f"def {name}({params}):")
        self.functions.append(fn)
        self.cur, self.indent, self.loop_depth = fn, 1, 0
        self.stmt(s, env)
        self.line("return None")
        self.line("yield None")
        self.cur, self.indent, self.loop_depth = saved
        t = self.temp()
        self.line(f"{t} = yield from {name}({params})")
        self.line(f"if {t} is not None:")
        self.line(f"    return {t}")

    # ------------------------------------------------------------ accesses
    def stored(self, target: str) -> None:
        pending, self._pending_store = self._pending_store, None
        if pending is not None:
            where, storage, offset = pending
            self.line(f"h_gpu.stored_{where}({storage}, {offset})")

    def address(self, access, indices, env: Env, lane: int, verb: str, statement: bool = False) -> str:
        text = super().address(access, indices, env, lane, verb, statement)
        kernel = self.kernel
        if kernel is None or access.storage in kernel.private or access.name in kernel.reducing:
            return text
        prefix = access.storage + "["
        start = 0 if text.startswith(prefix) else 1
        if not text.startswith(prefix, start):
            raise InterpError(f"internal: unexpected access code for buffer {access.name}")
        end = _closing(text, start + len(prefix) - 1)
        offset = text[start + len(prefix):end]
        where = "block" if access.storage in kernel.block else "global"
        self.sites.append(Site(access.name, access.shape, access.strides, access.offset,
                               self.ctx.stmt if self.ctx else None, self.ctx.block if self.ctx else None,
                               where == "block"))
        site = len(self.sites) - 1
        if statement:
            self.line(f"h_gpu.store_{where}({access.storage}, {offset}, {site})")
            self._pending_store = (where, access.storage, offset)
            return text
        return (text[:start] + f"h_gpu.load_{where}({access.storage}, {offset}, {site})"
                + text[end + 1:])


def _cross_thread_outputs(body, var: Var) -> set[str]:
    """The buffers written by blocks under ``body`` whose reduction
    iteration variables take their values from ``var`` (a threadIdx loop)."""
    out: set[str] = set()
    for node in walk(body):
        if not isinstance(node, BlockRealize):
            continue
        block = node.block
        if any(iv.iter_type is IterVarType.CommReduce and any(n == var for n in walk(value)
                                                             if isinstance(n, Var))
               for iv, value in zip(block.iter_vars, node.iter_values)):
            out |= {r.buffer.name for r in block.writes}
            out |= {n.buffer.name for n in walk(block) if isinstance(n, BufferStore)}
    return out


def _closing(text: str, open_at: int) -> int:
    """The index of the bracket closing the one at ``open_at``."""
    depth = 0
    for k in range(open_at, len(text)):
        c = text[k]
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
            if depth == 0:
                return k
    raise InterpError("internal: unbalanced access code")


def _walk_launches(s):
    """Every thread-binding statement under ``s`` (itself included), in order."""
    from ..analysis.traversal import walk_stmts

    for path, node in walk_stmts(s):
        if launch_of(node) is not None:
            yield path, node


__all__ = ["GpuCompiler", "Site", "Binding", "KernelInfo", "launch_of", "SHARED_SCOPES", "BARRIERS",
           "SHUFFLES"]
