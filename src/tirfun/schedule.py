"""``Schedule``: TVM's Schedule API over the pure rewrites, and ``Trace``.

A Schedule holds the current module and the records applied so far. Each
method builds the record of the same name in :mod:`tirfun.rewrites`, pins
its references to the function being worked on, applies it, and appends it
to the trace::

    sch = tirfun.Schedule(MyModule)
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1, i2 = sch.split(i, factors=[2, 2, 2])
    sch.reorder(i0, i2, i1)
    sch.bind(i0, "blockIdx.x")
    sch.mod                        # an ordinary immutable IRModule
    sch.trace(MyModule) == sch.mod # the trace is a Pipeline of the records

Loops and blocks come back as :class:`~tirfun.rewrites.LoopRef` and
:class:`~tirfun.rewrites.BlockRef` values, TVM's LoopRV and BlockRV.
"""

from __future__ import annotations

import functools

import attrs

from . import rewrites as R
from . import sampling
from .errors import ScheduleError
from .nodes import Buffer, IRModule, PrimFunc
from .rewrites.buffer_names import accesses_named
from .rewrites.checks import default_function
from .rewrites.checks import describe
from .rewrites.errors import (
    RENDER_LEVELS, InvalidArgumentError, RemovedBlockRefError, RemovedLoopRefError, RewriteError,
    UnknownFunctionError,
)
from .rewrites.pipeline import Pipeline
from .rewrites.refs import BlockRef, LoopRef, as_block_or_loop_ref

#: The trace of a Schedule is a Pipeline of the records it applied.
Trace = Pipeline


def _parse_debug_mask(mask) -> bool:
    if mask == "all":
        return True
    if mask == "none":
        return False
    if isinstance(mask, int) and not isinstance(mask, bool):
        return mask != 0
    raise InvalidArgumentError("Schedule", "debug_mask", f"expected 'all', 'none' or an int, got {mask!r}")


def _pin(value, func: str | None):
    """References without a function get ``func``; others are kept."""
    if isinstance(value, (LoopRef, BlockRef)) and value.func is None and func is not None:
        return value.with_func(func)
    if isinstance(value, tuple):
        pinned = tuple(_pin(v, func) for v in value)
        return value if all(a is b for a, b in zip(pinned, value)) else pinned
    return value


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


def _flatten(items) -> list:
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(item)
        else:
            out.append(item)
    return out


class Schedule:
    """TVM's ``tir.Schedule`` over immutable modules.

    ``mod`` is an IRModule or a PrimFunc (which becomes ``{"main": func}``).
    ``debug_mask="all"`` verifies the module after creation and after every
    primitive. ``error_render_level`` is ``"detail"`` (the message with the
    offending TVMScript), ``"fast"`` (the message alone) or ``"none"``.
    ``seed`` (an int in ``[1, 2**31 - 1]``, or None for one from the
    operating system) starts the random state the sampling primitives
    draw from: the same seed gives the same decisions.
    """

    #: what sample_compute_location gives for "leave the block where it is"
    #: and "inline it" (TVM's root and inline marks)
    ROOT_MARK = sampling.ROOT_MARK
    INLINE_MARK = sampling.INLINE_MARK

    def __init__(self, mod=None, *, seed=None, debug_mask="none", error_render_level: str = "detail"):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise InvalidArgumentError("Schedule", "mod", f"expected an IRModule or a PrimFunc, got "
                                       f"{type(mod).__name__}")
        if error_render_level not in RENDER_LEVELS:
            raise InvalidArgumentError("Schedule", "error_render_level",
                                       f"expected one of {', '.join(RENDER_LEVELS)}, got {error_render_level!r}")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)
                                 or not 1 <= seed <= sampling.MODULUS):
            raise InvalidArgumentError("Schedule", "seed", f"expected None or an int in [1, 2147483647], "
                                       f"got {seed!r}")
        self._rand = sampling.normalize_seed(-1 if seed is None else seed)
        self._debug = _parse_debug_mask(debug_mask)
        self._render = error_render_level
        self._mod = mod
        self._trace: tuple = ()
        self._func = default_function(mod)
        self._removed: frozenset = frozenset()  # references given to remove_rv
        # blocks a primitive renamed, old reference -> new (replaced, never mutated)
        self._renamed: dict = {}
        if self._debug:
            self._verify(mod)

    # -- state ---------------------------------------------------------------------
    @property
    def mod(self) -> IRModule:
        """The module as scheduled so far."""
        return self._mod

    @property
    def trace(self) -> Pipeline:
        """The records applied so far: ``sch.trace(original) == sch.mod``."""
        return Pipeline(self._trace)

    @property
    def func_working_on(self) -> str | None:
        """The name of the function that references without one refer to."""
        return self._func

    def work_on(self, func_name: str) -> None:
        """Make ``func_name`` the function that references and ``get_block``
        refer to by default."""
        if not isinstance(func_name, str) or func_name not in self._mod.functions:
            have = ", ".join(sorted(self._mod.functions)) or "none"
            raise UnknownFunctionError("work_on", f"function {func_name!r}",
                                       f"the module has no such function (it has: {have})")
        self._func = func_name

    def copy(self) -> "Schedule":
        """An independent schedule with the same module, trace and settings;
        its random state is forked from this one's (:meth:`fork_seed`), as
        TVM's copy does."""
        out = Schedule.__new__(Schedule)
        out.__dict__.update(self.__dict__)
        out._rand = sampling.normalize_seed(self.fork_seed())
        return out

    # -- random state and sampling ---------------------------------------------------
    def seed(self, seed: int) -> None:
        """Restart the random state from ``seed`` (-1: one from the operating
        system; otherwise a non-negative int)."""
        try:
            self._rand = sampling.normalize_seed(seed)
        except RewriteError as err:
            raise err.with_level(self._render) from None

    def fork_seed(self) -> int:
        """A seed for another schedule, drawn from this one's random state
        (which moves on): not the current state."""
        return self._draw(lambda rng: rng.fork_seed())

    def _draw(self, fn):
        """``fn(rng)`` on this schedule's random state, which then moves on;
        a refused argument leaves the state as it was."""
        rng = sampling.Rng(self._rand)
        try:
            out = fn(rng)
        except RewriteError as err:
            raise err.with_level(self._render) from None
        self._rand = rng.state
        return out

    def sample_categorical(self, candidates, probs, decision: int | None = None) -> int:
        """One of ``candidates``, drawn with the weights ``probs``; with
        ``decision``, the candidate at that index (checked). The value comes
        back as a plain int, which the primitives it is passed to record."""
        return self._draw(lambda rng: sampling.categorical(rng, candidates, probs, decision)[0])

    def _extent(self, primitive: str, loop) -> int | None:
        """The loop's extent as an int, None when it is symbolic."""
        from .nodes import For
        from .rewrites.errors import RefKindError
        from .rewrites.refs import as_loop_ref

        loop = as_loop_ref(loop)
        if not isinstance(loop, LoopRef):
            raise RefKindError(primitive, describe(loop), f"expected a loop (a LoopRef or a loop name), got "
                               f"{loop!r}").with_level(self._render)
        node = self._query(R.get, self._pin(loop))
        assert isinstance(node, For)  # a LoopRef resolves to a loop
        value = getattr(node.extent, "value", None)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def sample_perfect_tile(self, loop, n: int, max_innermost_factor: int = 16,
                            decision=None) -> list[int | None]:
        """``n`` factors that multiply to the loop's extent, the innermost at
        most ``max_innermost_factor`` (-1: no limit), for ``split``; with
        ``decision``, those factors (checked to be such a tiling). A loop of
        symbolic extent gives ``[None, 1, ..., 1]``, as TVM's does (split
        infers the None)."""
        extent = self._extent("sample_perfect_tile", loop)
        return self._draw(lambda rng: sampling.perfect_tile(rng, extent, n, max_innermost_factor, decision))

    def sample_partitioned_tile(self, loop, n: int, partition_pos: int = 0, innerpart_factor: int = 1,
                                decision=None) -> list[int]:
        """``n`` factors that multiply to the loop's extent, those from
        ``partition_pos`` on to a multiple of ``innerpart_factor``; with
        ``decision``, those factors (checked). A loop of symbolic extent, or
        one ``innerpart_factor`` does not divide, gives ``[-1, 1, ..., 1]``,
        as TVM's does."""
        extent = self._extent("sample_partitioned_tile", loop)
        return self._draw(lambda rng: sampling.partitioned_tile(rng, extent, n, partition_pos,
                                                                innerpart_factor, decision))

    def sample_compute_location(self, block, decision: int | None = None) -> LoopRef:
        """A loop where ``block`` may be computed, drawn uniformly among the
        locations TVM lists (see :func:`tirfun.sampling.compute_locations`):
        a loop, ``ROOT_MARK`` (leave it) or ``INLINE_MARK`` (inline it),
        which :meth:`compute_at` understands. ``decision`` is a location's
        index: -2 inline, -1 root, ``i`` the i-th loop above the first
        consumer."""
        block = self._block(block)
        self.get(block)  # an unknown block is reported as such
        mod = self._mod
        return self._draw(lambda rng: sampling.compute_location(rng, mod, block, decision)[0])

    def show(self, style=None, black_format: bool = False, *, file=None) -> None:
        """Print the module as TVMScript (with colour on a terminal, see
        ``IRModule.show``), then the trace."""
        self._mod.show(style=style, black_format=black_format, file=file)
        if self._trace:
            print(file=file)
            self.trace.show(file=file)

    def _repr_html_(self) -> str:
        """The module as coloured TVMScript for Jupyter."""
        return self._mod._repr_html_()

    def _repr_pretty_(self, printer, cycle) -> None:
        """The module as coloured TVMScript for IPython's terminal."""
        self._mod._repr_pretty_(printer, cycle)

    def get(self, ref):
        """The Block or For a reference points at (a name means a block). A
        sampled value is already a plain int, and comes back as it is (TVM's
        ``get`` of an expression random variable)."""
        if isinstance(ref, int) and not isinstance(ref, bool):
            return ref
        return self._query(R.get, self._pin(as_block_or_loop_ref(ref)))

    # -- applying records ---------------------------------------------------------
    def apply(self, rewrite: R.Rewrite):
        """Apply any rewrite record (its references pinned to the function
        worked on), append it to the trace, and return its result."""
        if not isinstance(rewrite, R.Rewrite):
            raise InvalidArgumentError("apply", "argument", f"expected a rewrite record, got {rewrite!r}")
        names = _field_names(type(rewrite))
        changes = {}
        for name in names:
            value = getattr(rewrite, name)
            new = self._follow(_pin(value, self._func))
            if new is not value:
                changes[name] = new
        # a record whose references already name the function is kept as it is
        pinned = attrs.evolve(rewrite, **changes) if changes else rewrite
        if self._removed:
            self._check_live(rewrite.primitive, [getattr(pinned, name) for name in names])
        try:
            outcome = pinned.run(self._mod)
        except RewriteError as err:
            raise err.with_level(self._render) from None
        if self._debug:
            self._verify(outcome.mod)
        self._mod = outcome.mod
        self._trace = self._trace + (pinned,)
        if outcome.renamed:
            self._renamed = {**self._renamed, **dict(outcome.renamed)}
        return self._revive(list(outcome.result) if isinstance(outcome.result, tuple) else outcome.result)

    def _check_live(self, primitive: str, values) -> None:
        """Refuse a reference given to :meth:`remove_rv` (as TVM refuses a
        removed random variable)."""
        if not self._removed:
            return
        for value in _flatten(list(values)):
            if isinstance(value, (LoopRef, BlockRef)) and _pin(value, self._func) in self._removed:
                cls = RemovedLoopRefError if isinstance(value, LoopRef) else RemovedBlockRefError
                raise cls(primitive, describe(value),
                          "the reference was removed from the schedule with remove_rv; get it "
                          "again (get_block, get_loops)").with_level(self._render)

    def _revive(self, result):
        """A reference handed out again is live again."""
        if self._removed:
            items = result if isinstance(result, list) else [result]
            self._removed = self._removed - {_pin(r, self._func) for r in items
                                             if isinstance(r, (LoopRef, BlockRef))}
        return result

    def _verify(self, mod: IRModule) -> None:
        from .analysis.verify import verify

        verify(mod)

    def _pin(self, ref):
        return self._follow(_pin(ref, self._func))

    def _follow(self, value):
        """A block reference whose block a primitive renamed (and whose name
        is gone from the module) points at the renamed block, as a TVM
        BlockRV keeps pointing at its block."""
        if not self._renamed:
            return value
        if isinstance(value, tuple):
            return tuple(self._follow(v) for v in value)
        if isinstance(value, list):
            return [self._follow(v) for v in value]
        seen = set()
        while isinstance(value, BlockRef) and value in self._renamed and value not in seen:
            seen.add(value)
            try:
                R.get(self._mod, value)
                return value  # the name is in use again: it means that block
            except RewriteError:
                value = self._renamed[value]
        return value

    def _query(self, fn, *args):
        args = tuple(self._follow(a) for a in args)
        self._check_live(fn.__name__, args)
        try:
            return self._revive(fn(self._mod, *args))
        except RewriteError as err:
            raise err.with_level(self._render) from None

    def _block(self, block):
        if isinstance(block, str):
            return BlockRef(block, self._func)
        return self._pin(block)

    # -- get blocks and loops -----------------------------------------------------
    def get_block(self, name: str, func_name: str | None = None) -> BlockRef:
        """The block named ``name`` in ``func_name`` (default: the function worked on)."""
        func = func_name if func_name is not None else self._func
        if func is None:
            raise UnknownFunctionError("get_block", f"block {name!r}",
                                       "the schedule does not know which function to be working on: the "
                                       "module has several functions and none is 'main'; name one with "
                                       "func_name= or call work_on first").with_level(self._render)
        return self._query(R.get_block, name, func)

    def get_sref(self, block_or_loop) -> R.StmtSRef:
        """TVM's ``get_sref``: where a block or loop sits, with ``.stmt``
        (the Block or For) and ``.parent`` (the enclosing block or loop's
        StmtSRef, None at the top). A name means a block."""
        return self._query(R.get_sref, self._pin(as_block_or_loop_ref(block_or_loop)))

    def remove_rv(self, rand_var) -> None:
        """TVM's ``remove_rv``: the reference may no longer be used with this
        schedule; using it raises RemovedBlockRefError or RemovedLoopRefError
        (UnknownBlockError and UnknownLoopError, and IndexError as in TVM)
        until the block or loop is asked for again (``get_block``,
        ``get_loops``, ...), which hands out a live reference. References
        are values, so every equal reference is removed with it."""
        if not isinstance(rand_var, (LoopRef, BlockRef)):
            raise InvalidArgumentError("remove_rv", "argument", f"expected a LoopRef or a BlockRef, "
                                       f"got {type(rand_var).__name__}").with_level(self._render)
        self._removed = self._removed | {self._pin(rand_var)}

    def get_loops(self, block) -> list[LoopRef]:
        """The loops above a block in its scope, outermost first."""
        return self._query(R.get_loops, self._block(block))

    def get_child_blocks(self, block_or_loop) -> list[BlockRef]:
        """The blocks directly inside a block or loop."""
        return self._query(R.get_child_blocks, self._block(block_or_loop))

    def get_producers(self, block) -> list[BlockRef]:
        """The producers of a block in its scope."""
        return self._query(R.get_producers, self._block(block))

    def get_consumers(self, block) -> list[BlockRef]:
        """The consumers of a block in its scope."""
        return self._query(R.get_consumers, self._block(block))

    def get_output_blocks(self, scope_block) -> list[BlockRef]:
        """The blocks under ``scope_block`` that write the scope's outputs."""
        return self._query(R.get_output_blocks, self._block(scope_block))

    # -- transform loops ----------------------------------------------------------
    def merge(self, *loops) -> LoopRef:
        """Merge loop nests of equal shape into one (see :class:`~tirfun.rewrites.Merge`)."""
        return self.apply(R.merge(*_flatten(loops)))

    def fuse(self, *loops, preserve_unit_iters: bool = True) -> LoopRef:
        """Fuse a perfect loop nest into one loop (see :class:`~tirfun.rewrites.Fuse`)."""
        return self.apply(R.fuse(*_flatten(loops), preserve_unit_iters=preserve_unit_iters))

    def split(self, loop, factors, preserve_unit_iters: bool = True,
              disable_predication: bool = False) -> list[LoopRef]:
        """Split a loop by ``factors`` (see :class:`~tirfun.rewrites.Split`).

        ``disable_predication=True`` is unsafe when the factors do not divide
        the extent: the loops then run past it and the blocks are bound
        outside their domains (``verify`` and ``tirfun.build`` refuse the
        result, the interpreter raises InterpError; see Split)."""
        return self.apply(R.split(loop, factors, preserve_unit_iters, disable_predication))

    def reorder(self, *ordered_loops) -> None:
        """Reorder loops of one chain (see :class:`~tirfun.rewrites.Reorder`)."""
        self.apply(R.reorder(*_flatten(ordered_loops)))

    def reorder_block_iter_var(self, block, new_order) -> None:
        """Permute a block's iteration variables (see :class:`~tirfun.rewrites.ReorderBlockIterVar`)."""
        self.apply(R.reorder_block_iter_var(self._block(block), new_order))

    def add_unit_loop(self, block_or_loop) -> LoopRef:
        """Wrap a block or loop in a loop of extent 1 (see :class:`~tirfun.rewrites.AddUnitLoop`)."""
        return self.apply(R.add_unit_loop(self._block(block_or_loop)))

    # -- loop kinds -----------------------------------------------------------------
    def parallel(self, loop) -> None:
        """Parallelize a loop (see :class:`~tirfun.rewrites.Parallel`)."""
        self.apply(R.parallel(loop))

    def vectorize(self, loop) -> None:
        """Vectorize a loop (see :class:`~tirfun.rewrites.Vectorize`)."""
        self.apply(R.vectorize(loop))

    def bind(self, loop, thread_axis: str) -> None:
        """Bind a loop to a thread axis (see :class:`~tirfun.rewrites.Bind`)."""
        self.apply(R.bind(loop, thread_axis))

    def unroll(self, loop) -> None:
        """Unroll a loop (see :class:`~tirfun.rewrites.Unroll`)."""
        self.apply(R.unroll(loop))

    # -- compute location (compute_at, reverse_compute_at, compute_inline, reverse_compute_inline)
    def compute_at(self, block, loop, preserve_unit_loops: bool = False, index: int = -1) -> None:
        """Move a producer under a loop of its consumers, computing there only
        what they read (see :class:`~tirfun.rewrites.ComputeAt`). As in TVM,
        ``loop`` may be what :meth:`sample_compute_location` gives:
        ``ROOT_MARK`` leaves the block where it is, ``INLINE_MARK`` inlines it."""
        if loop == sampling.ROOT_MARK:
            return
        if loop == sampling.INLINE_MARK:
            return self.compute_inline(block)
        self.apply(R.compute_at(self._block(block), loop, preserve_unit_loops, index))

    def reverse_compute_at(self, block, loop, preserve_unit_loops: bool = False, index: int = -1) -> None:
        """Move a consumer under a loop of its producers, computing there what
        they have just written (see :class:`~tirfun.rewrites.ReverseComputeAt`);
        ``ROOT_MARK`` and ``INLINE_MARK`` as in :meth:`compute_at`."""
        if loop == sampling.ROOT_MARK:
            return
        if loop == sampling.INLINE_MARK:
            return self.reverse_compute_inline(block)
        self.apply(R.reverse_compute_at(self._block(block), loop, preserve_unit_loops, index))

    def compute_inline(self, block) -> None:
        """Inline a block into its readers (see :class:`~tirfun.rewrites.ComputeInline`)."""
        self.apply(R.compute_inline(self._block(block)))

    def reverse_compute_inline(self, block) -> None:
        """Inline a block into its producer (see :class:`~tirfun.rewrites.ReverseComputeInline`)."""
        self.apply(R.reverse_compute_inline(self._block(block)))

    # -- annotations ----------------------------------------------------------------
    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Annotate a block or loop (see :class:`~tirfun.rewrites.Annotate`)."""
        self.apply(R.annotate(self._block(block_or_loop), ann_key, ann_val))

    def unannotate(self, block_or_loop, ann_key: str) -> None:
        """Remove an annotation (see :class:`~tirfun.rewrites.Unannotate`)."""
        self.apply(R.unannotate(self._block(block_or_loop), ann_key))

    # -- reductions, padding, partitioning and region hints ------------------------
    def decompose_reduction(self, block, loop) -> BlockRef:
        """Split a reduction block into an init block placed before ``loop``
        and an update block; returns the init block (see
        :class:`~tirfun.rewrites.DecomposeReduction`)."""
        return self.apply(R.decompose_reduction(self._block(block), loop))

    def rfactor(self, loop, factor_axis: int) -> BlockRef:
        """Factor a reduction over ``loop`` into a new buffer with one more
        dimension at ``factor_axis``; returns the rfactor block (see
        :class:`~tirfun.rewrites.RFactor`)."""
        return self.apply(R.rfactor(loop, factor_axis))

    def decompose_padding(self, block, loop) -> BlockRef:
        """Split a padding block into a constant fill placed before ``loop``
        and the in-bound computation; returns the fill block (see
        :class:`~tirfun.rewrites.DecomposePadding`)."""
        return self.apply(R.decompose_padding(self._block(block), loop))

    def can_decompose_padding(self, block, loop) -> bool:
        """Whether :meth:`decompose_padding` applies to ``block`` at ``loop``."""
        return self._query(R.can_decompose_padding, self._block(block), self._pin(loop))

    def pad_einsum(self, block, padding) -> None:
        """Pad an einsum block's iteration domain to multiples of ``padding``
        (see :class:`~tirfun.rewrites.PadEinsum`)."""
        self.apply(R.pad_einsum(self._block(block), padding))

    def loop_partition(self, loop, factors, preserve_unit_iters: bool = True) -> list[LoopRef]:
        """Partition a loop into consecutive loops over parts of its range
        (see :class:`~tirfun.rewrites.LoopPartition`)."""
        return self.apply(R.loop_partition(loop, factors, preserve_unit_iters))

    def annotate_buffer_access(self, block, buffer_index: int, buf_type: str, gen_new_ranges) -> None:
        """Declare the region a block reads or writes of one buffer:
        ``gen_new_ranges`` takes the block's iteration variables and returns
        one index or ``(begin, end)`` pair per dimension (see
        :class:`~tirfun.rewrites.AnnotateBufferAccess`)."""
        node = self.get(self._block(block))
        if not callable(gen_new_ranges):
            raise InvalidArgumentError("annotate_buffer_access", "gen_new_ranges",
                                       f"expected a function of the block's iteration variables, got "
                                       f"{gen_new_ranges!r}").with_level(self._render)
        ranges = gen_new_ranges(*[iv.var for iv in node.iter_vars])
        self.apply(R.annotate_buffer_access(self._block(block), buffer_index, buf_type, ranges))

    def unsafe_hide_buffer_access(self, block, buf_type: str, buf_index_array) -> None:
        """Remove regions from what a block declares it reads or writes (see
        :class:`~tirfun.rewrites.UnsafeHideBufferAccess`)."""
        self.apply(R.unsafe_hide_buffer_access(self._block(block), buf_type, buf_index_array))

    # -- storage: scopes, alignment, dtypes, axis separators ------------------------
    def _write_index(self, primitive: str, block, buffer_index):
        """``buffer_index`` as TVM's Python API takes it: an int, or a
        buffer the block writes or its name."""
        if isinstance(buffer_index, (str, Buffer)):
            found = self.get(self._block(block))
            hits = accesses_named(found, buffer_index, "write")
            if len({buf for _, _, buf in hits}) == 1:
                return hits[0][1]
            names = [r.buffer.name for r in found.writes]
            wanted = buffer_index if isinstance(buffer_index, str) else f"buffer {buffer_index.name}"
            raise InvalidArgumentError(
                primitive, describe(self._block(block)),
                f"{wanted!r} names no single buffer the block writes (it writes: "
                f"{', '.join(names) or 'none'})").with_level(self._render)
        return buffer_index

    def set_scope(self, block, buffer_index, storage_scope: str) -> None:
        """Set the storage scope of a buffer the block writes (see
        :class:`~tirfun.rewrites.SetScope`)."""
        self.apply(R.set_scope(self._block(block), self._write_index("set_scope", block, buffer_index),
                                 storage_scope))

    def storage_align(self, block, buffer_index: int, axis: int, factor: int, offset: int) -> None:
        """Align the stride of one dimension of a buffer the block writes (see
        :class:`~tirfun.rewrites.StorageAlign`)."""
        self.apply(R.storage_align(self._block(block), buffer_index, axis, factor, offset))

    def unsafe_set_dtype(self, block, buffer_index: int, dtype: str) -> None:
        """Change the element type of a buffer the block writes (see
        :class:`~tirfun.rewrites.UnsafeSetDType`)."""
        self.apply(R.unsafe_set_dtype(self._block(block), buffer_index, dtype))

    def set_axis_separator(self, block, buffer, axis_separators) -> None:
        """Set the axis separators of a buffer the block reads or writes (see
        :class:`~tirfun.rewrites.SetAxisSeparator`). ``buffer`` is
        ``("read" | "write", index)`` or the name of a buffer the block
        accesses, as in TVM."""
        kind, index = self._buffer_arg("set_axis_separator", block, buffer)
        self.apply(R.set_axis_separator(self._block(block), index, kind,
                                        list(axis_separators or ())))

    def transform_layout(self, block, buffer, index_map, pad_value=None, *,
                         assume_injective_transform: bool = False) -> None:
        """Store a buffer the block reads or writes in the layout ``index_map``
        gives (see :class:`~tirfun.rewrites.TransformLayout`). ``buffer`` is
        ``("read" | "write", index)`` or the name of a buffer the block
        accesses, as in TVM."""
        kind, index = self._buffer_arg("transform_layout", block, buffer)
        if callable(index_map) or callable(pad_value):
            # traced here, on the buffer's dimensions (the pad value on the
            # new layout's), so that the trace holds them as values (a Python
            # function does not replay from JSON)
            index_map, pad_value = self._trace_layout(block, kind, index, index_map, pad_value)
        self.apply(R.transform_layout(self._block(block), (kind, index), index_map, pad_value,
                                      assume_injective_transform))

    def _trace_layout(self, block, kind, index, index_map, pad_value):
        """The index map and pad value of :meth:`transform_layout` with
        Python functions traced; left as they are where they cannot be
        (the record then reports what is wrong)."""
        from .rewrites.index_maps import Dims, separators, trace_index_map

        try:
            found = self.get(self._block(block))
            regions = found.reads if kind == "read" else found.writes
            buf = regions[index].buffer
        except (RewriteError, IndexError, TypeError):
            return index_map, pad_value
        index_map = trace_index_map(index_map, buf)
        if callable(pad_value) and isinstance(index_map, tuple) and len(index_map) == 2:
            ndim = len(separators(index_map[1])[0])
            dtype = buf.shape[0].dtype if buf.shape else "int32"
            traced = trace_index_map(pad_value, Dims([dtype] * ndim))
            pad_value = traced if isinstance(traced, tuple) else pad_value
        return index_map, pad_value

    def blockize(self, target, preserve_unit_iters: bool = True) -> BlockRef:
        """Make the subtree under a loop a block of its own, or, given a list
        of blocks whose loop nests are consecutive items of one sequence,
        one block holding them all (see :class:`~tirfun.rewrites.Blockize`);
        returns the new outer block. Block names may stand for blocks."""
        if isinstance(target, (list, tuple)):
            target = [self._block(b) for b in target]
        return self.apply(R.blockize(target, preserve_unit_iters))

    def tensorize(self, block_or_loop, tensor_intrin, preserve_unit_iters: bool = True) -> None:
        """Replace what a block (or the block blockize makes of a loop's
        subtree) computes by a tensor intrinsic's implementation, after
        checking it computes what the intrinsic's description computes (see
        :class:`~tirfun.rewrites.Tensorize`). ``tensor_intrin`` is a
        :class:`~tirfun.tir.TensorIntrin` or the name it was registered
        under; the trace holds the intrinsic itself."""
        from .tir.tensor_intrin import TensorIntrinError, as_tensor_intrin

        try:
            intrin = as_tensor_intrin(tensor_intrin)
        except TensorIntrinError as err:
            raise InvalidArgumentError("tensorize", "argument tensor_intrin",
                                       str(err)).with_level(self._render) from None
        self.apply(R.tensorize(block_or_loop, intrin, preserve_unit_iters))

    def transform_block_layout(self, block, index_map) -> None:
        """Transform a block's iteration space by a bijective affine index map
        (see :class:`~tirfun.rewrites.TransformBlockLayout`)."""
        if callable(index_map):
            # traced here, on the block's iteration variables, so that the
            # trace holds the map as a value
            from .rewrites.index_maps import Dims, trace_index_map

            try:
                found = self.get(self._block(block))
                index_map = trace_index_map(index_map, Dims([iv.var.dtype for iv in found.iter_vars]))
            except (RewriteError, TypeError):
                pass  # the record reports what is wrong
        self.apply(R.transform_block_layout(self._block(block), index_map))

    def rolling_buffer(self, block, write_buffer_index: int) -> None:
        """Fold a buffer the block writes into a rolling buffer along the loop
        that slides it (see :class:`~tirfun.rewrites.RollingBuffer`)."""
        self.apply(R.rolling_buffer(self._block(block), write_buffer_index))

    def _buffer_arg(self, primitive: str, block, buffer):
        if isinstance(buffer, tuple) and len(buffer) == 2:
            return buffer[0], buffer[1]
        if isinstance(buffer, int):
            return "write", buffer
        found = self.get(self._block(block))
        candidates = accesses_named(found, buffer)
        if len({buf for _, _, buf in candidates}) != 1:
            raise InvalidArgumentError(
                primitive, describe(self._block(block)),
                f"expected ('read' | 'write', index) or the name of one buffer the block accesses, "
                f"got {buffer!r}").with_level(self._render)
        kind, position, _ = candidates[-1]  # as TVM's lookup: a buffer both read and written is the write
        return kind, position

    # -- caching (cache_read, cache_write, cache_inplace, cache_index, reindex) -------
    def _buffer_index(self, block, index, kind: str):
        """A Buffer or buffer name as its position among the block's reads or
        writes, as TVM's Python API normalises it; anything else is kept for
        the record to check."""
        if isinstance(index, int) or not isinstance(index, (str, Buffer)):
            return index
        try:
            found = self.get(block)
        except RewriteError:
            return index
        hits = accesses_named(found, index, kind)
        return hits[0][1] if hits else index

    def _blocks(self, blocks):
        return None if blocks is None else [self._block(b) for b in _flatten([blocks])]

    def cache_read(self, block, read_buffer_index, storage_scope: str, consumer_blocks=None) -> BlockRef:
        """Read a buffer through a cache in ``storage_scope``; returns the copy
        block (see :class:`~tirfun.rewrites.CacheRead`). ``read_buffer_index``
        is a position in the block's reads, a Buffer, or a buffer name."""
        block = self._block(block)
        index = self._buffer_index(block, read_buffer_index, "read")
        return self.apply(R.cache_read(block, index, storage_scope, self._blocks(consumer_blocks)))

    def cache_write(self, block, write_buffer_index, storage_scope: str, consumer_blocks=None) -> BlockRef:
        """Write a buffer through a cache in ``storage_scope``; returns the
        copy block (see :class:`~tirfun.rewrites.CacheWrite`)."""
        block = self._block(block)
        index = self._buffer_index(block, write_buffer_index, "write")
        return self.apply(R.cache_write(block, index, storage_scope, self._blocks(consumer_blocks)))

    def read_at(self, loop, block, read_buffer_index, storage_scope: str) -> BlockRef:
        """Read a buffer through a copy made in each iteration of ``loop``;
        returns the copy block (see :class:`~tirfun.rewrites.ReadAt`)."""
        block = self._block(block)
        index = self._buffer_index(block, read_buffer_index, "read")
        return self.apply(R.read_at(loop, block, index, storage_scope))

    def write_at(self, loop, block, write_buffer_index, storage_scope: str) -> BlockRef:
        """Write a buffer through a copy copied back in each iteration of
        ``loop``; returns the copy-back block (see
        :class:`~tirfun.rewrites.WriteAt`)."""
        block = self._block(block)
        index = self._buffer_index(block, write_buffer_index, "write")
        return self.apply(R.write_at(loop, block, index, storage_scope))

    def cache_inplace(self, block, read_buffer_index, storage_scope: str) -> list[BlockRef]:
        """Cache a buffer the block both reads and writes; returns the copy-in
        and copy-back blocks (see :class:`~tirfun.rewrites.CacheInplace`)."""
        block = self._block(block)
        index = self._buffer_index(block, read_buffer_index, "read")
        return self.apply(R.cache_inplace(block, index, storage_scope))

    def _index_map(self, block, index_map):
        """A function index map traced with the block's iteration variable
        dtype, as TVM's ``IndexMap.from_func`` with the block's index dtype."""
        if not callable(index_map):
            return index_map
        dtype = "int32"
        try:
            found = self.get(block)
            if found.iter_vars:
                dtype = found.iter_vars[0].var.dtype
        except RewriteError:
            pass
        from .rewrites.cache import as_index_map

        return as_index_map(index_map, dtype)

    def reindex_cache_read(self, block, read_buffer_index, storage_scope: str, index_map) -> BlockRef:
        """Read a buffer through a cache laid out by ``index_map`` of the
        block's iteration variables; returns the copy block (see
        :class:`~tirfun.rewrites.ReindexCacheRead`)."""
        block = self._block(block)
        index = self._buffer_index(block, read_buffer_index, "read")
        return self.apply(R.reindex_cache_read(block, index, storage_scope, self._index_map(block, index_map)))

    def reindex_cache_write(self, block, write_buffer_index, storage_scope: str, index_map) -> BlockRef:
        """Write a buffer through a cache laid out by ``index_map`` of the
        block's iteration variables; returns the copy block (see
        :class:`~tirfun.rewrites.ReindexCacheWrite`)."""
        block = self._block(block)
        index = self._buffer_index(block, write_buffer_index, "write")
        return self.apply(R.reindex_cache_write(block, index, storage_scope, self._index_map(block, index_map)))

    def reindex(self, block, buffer) -> BlockRef:
        """Copy a buffer into (or out of) a buffer laid out by the block's
        iteration variables; returns the copy block (see
        :class:`~tirfun.rewrites.ReIndex`). ``buffer`` is ``("read" |
        "write", index)``, a Buffer, or a buffer name."""
        block = self._block(block)
        if isinstance(buffer, (str, Buffer)):
            try:
                # as TVM's lookup: reads, then writes, the last match kept
                # (a reduction's output is the write)
                hits = accesses_named(self.get(block), buffer)
            except RewriteError:
                hits = []
            if hits:
                buffer = hits[-1][:2]
        elif isinstance(buffer, list):
            buffer = tuple(buffer)
        return self.apply(R.reindex(block, buffer))

    def cache_index(self, block, storage_scope: str, cse_thresh: int = 0) -> list[BlockRef]:
        """Compute the block's index arithmetic ahead into ``index_var_<k>``
        buffers of ``storage_scope``, each computation seen at least
        ``cse_thresh`` times (0: every one); returns the blocks that fill them
        (see :class:`~tirfun.rewrites.CacheIndex`)."""
        return list(self.apply(R.cache_index(self._block(block), storage_scope, cse_thresh)))


__all__ = ["Schedule", "Trace", "ScheduleError"]
