"""Random well-formed PrimFuncs, for property tests of anything that takes one.

:func:`prim_funcs` is a hypothesis strategy; :func:`random_prim_func` builds
the same kind of program from an integer seed without hypothesis. Both build
through one function of a stream of choices, so the same choices always give
the same program, and hypothesis shrinks a failing program toward a small one.

>>> from hypothesis import given
>>> from tirfun.testing.programs import prim_funcs
>>> @given(prim_funcs(max_blocks=2, allow_symbolic=False))
... def test_my_pass_keeps_names(func):
...     assert my_pass(func).params == func.params

What the programs contain (each feature can be switched off by an option, so
a pass that handles only part of TensorIR can still be tested):

* one to ``max_blocks`` blocks, each under its own loop nest in the implicit
  root block, with unique block names;
* producer/consumer chains: a block reads what an earlier block wrote, either
  an output parameter or an intermediate in the root block's
  ``alloc_buffers``; every intermediate is written whole before it is read;
* reductions: ``T.axis.reduce`` iteration variables, ``T.init()`` and an
  update ``C[v] = C[v] + e`` (or ``*``, ``max``, ``min``);
* loop nests with splits (``i_0 * 4 + i_1``, guarded by ``T.where`` when the
  factor overshoots the extent), fusions (``ij // 8``, ``ij % 8``), loops that
  start above zero, extent-1 axes bound to ``0``;
* every loop kind: serial, parallel, vectorized (innermost, constant
  extent), unrolled (constant extent) and thread bindings (the outer loops of
  a nest, blockIdx before threadIdx). Parallel, vectorized and thread-bound
  loops only ever iterate over spatial axes, so their iterations write
  distinct elements;
* symbolic extents: int32/int64 scalar parameters ``n``, ``m`` in buffer
  shapes (also ``n + 2``), loop extents and iteration domains, and as values
  inside blocks;
* bodies with lets (``x: T.float32 = ...``), if/else, a store followed by an
  update of the same element, inner loops that accumulate over a whole
  dimension (regions like ``A[vi, 0:8]``), stencil reads (``A[vi:vi + 3]``);
  blocks that write an output parameter may skip elements (an ``if``
  without ``else``, a ``T.where`` on a loop);
* every expression kind of :mod:`tirfun.nodes` that scalar code uses, over
  every element dtype: float16/bfloat16/float32/float64, int8/16/32/64,
  uint8/16/32/64 and bool values (see
  :mod:`tirfun.testing._exprs` for how each stays defined on every input).

Every access is in bounds for every execution, for any values of the
symbolic parameters that are at least 1, and every declared region is
exactly the hull of the accesses, so ``tirfun.analysis.verify.verify``
accepts every program and the interpreter can run it.

Integer arithmetic in 32 and 64 bits stays far from overflow when integer
inputs are small (|x| <= 100): products always have a constant or an index
on one side. Arithmetic on int8 and uint8 may wrap around, as two's
complement arithmetic does.

Options that are off by default add what is valid but not meant for
computing, for tests of printing, parsing and equality: ``literal_pairs``,
``special_values``, ``buffer_fields`` (see :class:`ProgramOptions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from ..analysis.traversal import walk
from ..errors import TirfunError
from ..nodes import (
    EQ, LT, Add, And, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore,
    DataType, FloatImm, FloorDiv, FloorMod, For, ForKind, IfThenElse, IntImm, IterVar, LetStmt,
    Max, Min, Mul, Or, PrimExpr, PrimFunc, Range, SeqStmt, Stmt, Sub, Var,
)
from ._choices import BytesChooser, Chooser, RandomChooser
from ._exprs import Access, DimIndex, ExprBuilder

#: every element dtype tirfun supports, the most common first (the simplest choices)
DEFAULT_DTYPES = ("float32", "int32", "float64", "int64", "int8", "uint8", "bool", "float16",
                  "bfloat16", "int16", "uint16", "uint32", "uint64")
#: the largest finite value of each float dtype
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
             "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
ALL_LOOP_KINDS = tuple(k.value for k in ForKind)
THREAD_AXES = ("x", "y", "z")
#: the value a symbolic extent is assumed to take when sizing programs
ASSUMED_SYMBOLIC_EXTENT = 8

_LOOP_ANNOTATIONS = (("pragma_auto_unroll_max_step", 16), ("pragma_unroll_explicit", 0),
                     ("software_pipeline_stage", "0"))
_BLOCK_ANNOTATIONS = (("meta_schedule.unroll_explicit", 16), ("schedule_rule", "None"),
                      ("meta_schedule.auto_tensorize", "dot_4x4"))
_BUFFER_LETTERS = "ABCDEFGHJKLMNOPQRSUVWXYZ"  # no T or I: the printer's namespaces


def _to_dtypes(values) -> tuple[DataType, ...]:
    out = tuple(DataType(v) for v in values)
    for d in out:
        if d.lanes != 1 or not (d.is_float or d.is_integer or d.is_bool):
            raise TirfunError(f"random programs hold scalar int, float or bool elements, not {d}")
    return out


def _to_loop_kinds(values) -> tuple[ForKind, ...]:
    try:
        kinds = tuple(ForKind(v) for v in values)
    except ValueError as error:
        raise TirfunError(f"unknown loop kind in {values!r}; expected some of "
                          f"{', '.join(ALL_LOOP_KINDS)}") from error
    return kinds


@attrs.frozen
class ProgramOptions:
    """What random programs may contain. Every field has a permissive default.

    ``dtypes`` are the element dtypes of buffers (bool included: bool buffers
    hold conditions); ``index_dtypes`` the dtypes of loop variables and shapes
    (one per program); ``loop_kinds`` the loop kinds that may appear (serial
    loops always may); ``alloc_scopes`` the scopes of intermediate buffers.
    ``symbolic_chance`` is the percentage of programs that get symbolic
    sizes, where ``allow_symbolic`` allows them.
    ``allow_partial_writes`` lets blocks that write an output parameter skip
    some elements (an ``if`` without ``else`` in the block or around it, an
    extra ``T.where``).

    Three options add things that are well-formed but not meant for
    computing (they are off by default): ``literal_pairs`` allows operators
    between two literals, such as ``T.Add(1, 2)``, which a parser must not
    fold; ``special_values`` adds infinities, NaNs, ``-0.0``, denormals and the
    extremes of integer types as literals; ``buffer_fields`` gives some
    parameter buffers explicit strides, ``elem_offset``, alignment and offset
    factor.
    """

    max_blocks: int = 3
    max_extent: int = 8
    max_points: int = 256
    max_depth: int = 3
    dtypes: tuple = attrs.field(default=DEFAULT_DTYPES, converter=_to_dtypes)
    index_dtypes: tuple = attrs.field(default=("int32", "int64"), converter=_to_dtypes)
    loop_kinds: tuple = attrs.field(default=ALL_LOOP_KINDS, converter=_to_loop_kinds)
    allow_symbolic: bool = True
    symbolic_chance: int = 40
    allow_where: bool = True
    allow_alloc: bool = True
    alloc_scopes: tuple = ("global",)
    allow_reduction: bool = True
    allow_inner_loops: bool = True
    allow_stencils: bool = True
    allow_let: bool = True
    allow_if: bool = True
    allow_math: bool = True
    allow_bitwise: bool = True
    allow_annotations: bool = True
    allow_zero_dim: bool = True
    allow_odd_names: bool = True
    allow_partial_writes: bool = True
    literal_pairs: bool = False
    special_values: bool = False
    buffer_fields: bool = False

    def __attrs_post_init__(self):
        if self.max_blocks < 1:
            raise TirfunError(f"max_blocks must be at least 1, got {self.max_blocks}")
        if self.max_extent < 2:
            raise TirfunError(f"max_extent must be at least 2, got {self.max_extent}")
        if self.max_points < self.max_extent:
            raise TirfunError(f"max_points ({self.max_points}) must be at least max_extent "
                              f"({self.max_extent})")
        if not 0 <= self.symbolic_chance <= 100:
            raise TirfunError(f"symbolic_chance is a percentage, got {self.symbolic_chance}")
        if self.max_depth < 0:
            raise TirfunError(f"max_depth must not be negative, got {self.max_depth}")
        if not self.dtypes:
            raise TirfunError("dtypes must name at least one element dtype")
        if not any(d.is_float or d.is_integer for d in self.dtypes):
            raise TirfunError("dtypes must include a numeric dtype, not only bool")
        if not self.index_dtypes or any(d not in ("int32", "int64") for d in self.index_dtypes):
            raise TirfunError(f"index_dtypes must be int32 and/or int64, got {self.index_dtypes}")
        if not self.alloc_scopes:
            raise TirfunError("alloc_scopes must name at least one scope")

    @property
    def numeric_dtypes(self) -> tuple[DataType, ...]:
        """The element dtypes other than bool."""
        return tuple(d for d in self.dtypes if not d.is_bool)


def prim_funcs(options: ProgramOptions | None = None, **kwargs: Any):
    """A hypothesis strategy of random well-formed PrimFuncs.

    Keyword arguments are the fields of :class:`ProgramOptions`::

        prim_funcs()                                   # everything
        prim_funcs(max_blocks=1, loop_kinds=["serial"], allow_symbolic=False)
        prim_funcs(dtypes=["float32"], allow_where=False, allow_alloc=False)
    """
    from hypothesis import strategies as st  # a test dependency, loaded on use

    opts = _options(options, kwargs)
    # one byte string per program: one hypothesis draw per choice costs far
    # more than building the program, and bytes shrink as well
    size = min(8192, 128 * opts.max_blocks * (opts.max_depth + 1) + 256)
    return st.binary(min_size=size, max_size=size).map(
        lambda data: build_prim_func(BytesChooser(data), opts))


def random_prim_func(seed: int, options: ProgramOptions | None = None, **kwargs: Any) -> PrimFunc:
    """A random well-formed PrimFunc determined by ``seed`` (no hypothesis needed).

    >>> random_prim_func(3) == random_prim_func(3)
    True
    """
    return build_prim_func(RandomChooser(seed), _options(options, kwargs))


def _options(options: ProgramOptions | None, kwargs: dict) -> ProgramOptions:
    if options is not None and kwargs:
        raise TirfunError("pass either a ProgramOptions or keyword options, not both")
    if options is None:
        try:
            return ProgramOptions(**kwargs)
        except TypeError as error:
            raise TirfunError(f"unknown random program option: {error}") from None
    return options


def build_prim_func(ch: Chooser, options: ProgramOptions) -> PrimFunc:
    """Build one random PrimFunc from the choices of ``ch``."""
    return _FuncBuilder(ch, options).build()


# ---------------------------------------------------------------------------
# the builder

@attrs.define(eq=False)
class _Axis:
    base: str  # the loops over this axis are named after it: i, i_0, i_1...
    size: Any  # an int, a symbolic Var or a _SymPlus
    kind: str  # "S" spatial or "R" reduce
    iter_var: Var


@attrs.define
class _Loop:
    var: Var
    min: int
    extent: PrimExpr
    axes: list  # the axes whose binding uses this loop
    group: int
    kind: ForKind = ForKind.SERIAL
    tag: str | None = None
    annotations: dict = attrs.field(factory=dict)

    @property
    def spatial_only(self) -> bool:
        return all(a.kind == "S" for a in self.axes)

    @property
    def constant(self) -> bool:
        return isinstance(self.extent, IntImm)


@attrs.frozen
class _SymPlus:
    """The extent ``var + offset`` (a symbolic buffer with room for a stencil)."""

    var: Var
    offset: int


@attrs.define
class _BufInfo:
    buffer: Buffer
    sizes: tuple
    role: str  # "input", "output" or "intermediate"


class _FuncBuilder:
    def __init__(self, ch: Chooser, opts: ProgramOptions):
        self.ch = ch
        self.opts = opts
        self.names: set[str] = set()
        self.block_names: set[str] = set()
        self.buffers: list[_BufInfo] = []
        self.pending: list[_BufInfo] = []   # intermediates no block has read yet
        self.used_symbols: list[Var] = []
        self.idx = DataType("int32")
        self.symbols: list[Var] = []

    # ------------------------------------------------------------ names, sizes

    def fresh(self, base: str) -> str:
        """``base`` if unused, else ``base_1``, ``base_2``...: a function of the names in use."""
        name, k = base, 0
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def fresh_block_name(self, base: str) -> str:
        name, k = base, 0
        while name in self.block_names or name == "root":
            k += 1
            name = f"{base}_{k}"
        self.block_names.add(name)
        return name

    def const(self, value: int) -> IntImm:
        return IntImm(self.idx, value)

    def size_expr(self, size) -> PrimExpr:
        """An extent as an expression of the index dtype (noting the symbols used)."""
        if isinstance(size, int):
            return self.const(size)
        if isinstance(size, _SymPlus):
            return Add(self.size_expr(size.var), self.const(size.offset))
        if size not in self.used_symbols:
            self.used_symbols.append(size)
        return size

    @staticmethod
    def estimate(size) -> int:
        """An extent as a number, for keeping programs small."""
        if isinstance(size, _SymPlus):
            return ASSUMED_SYMBOLIC_EXTENT + size.offset
        return size if isinstance(size, int) else ASSUMED_SYMBOLIC_EXTENT

    def new_size(self, budget: int):
        """A random extent whose estimate fits ``budget`` (at least 1)."""
        if self.symbols and budget >= ASSUMED_SYMBOLIC_EXTENT and self.ch.chance(30):
            return self.ch.choice(self.symbols)
        return self.ch.integer(1, max(1, min(self.opts.max_extent, budget)))

    def new_buffer(self, sizes: Sequence, dtype: DataType, role: str, scope: str = "global") -> _BufInfo:
        """A new buffer of the given extents; ``role`` is input, output or intermediate."""
        name = self.fresh(self.ch.choice(_BUFFER_LETTERS) if self.ch.chance(20)
                          else _BUFFER_LETTERS[len(self.buffers) % len(_BUFFER_LETTERS)])
        buffer = Buffer(name, [self.size_expr(s) for s in sizes], dtype, storage_scope=scope)
        if role != "intermediate" and self.opts.buffer_fields and self.ch.chance(30):
            buffer = self.with_fields(buffer, sizes)
        info = _BufInfo(buffer, tuple(sizes), role)
        self.buffers.append(info)
        return info

    def with_fields(self, buffer: Buffer, sizes) -> Buffer:
        """``buffer`` with some non-default fields that keep its layout compact."""
        ch = self.ch
        fields = {}
        if sizes and all(isinstance(s, int) for s in sizes) and ch.chance(50):
            strides, step = [], 1
            for s in reversed(sizes):
                strides.append(self.const(step))
                step *= s
            fields["strides"] = list(reversed(strides))
        if ch.chance(40):
            fields["elem_offset"] = self.const(0)
        if ch.chance(40):
            fields["data_alignment"] = ch.choice((16, 32, 128))
        if ch.chance(40):
            fields["offset_factor"] = ch.choice((1, 4, 16))
            if "elem_offset" not in fields:
                # as TVM declares it (and the parser reads it): an offset of
                # its own, which the argument's offset (0) binds
                fields["elem_offset"] = Var(f"{buffer.name}_elem_offset", self.idx)
        return attrs.evolve(buffer, **fields)

    # ------------------------------------------------------------------ build

    def build(self) -> PrimFunc:
        ch, opts = self.ch, self.opts
        self.idx = ch.choice(opts.index_dtypes)
        if opts.allow_symbolic and ch.chance(opts.symbolic_chance):
            self.symbols.append(Var(self.fresh("n"), self.idx))
            if ch.chance(30):
                self.symbols.append(Var(self.fresh("m"), self.idx))
        n_blocks = ch.integer(1, opts.max_blocks)
        nests = [self.block(last=(b == n_blocks - 1)) for b in range(n_blocks)]
        body = nests[0] if len(nests) == 1 else SeqStmt(nests)
        allocs = [b.buffer for b in self.buffers if b.role == "intermediate"]
        root = Block([], [], [], "root", body, alloc_buffers=allocs)
        params, buffer_map = self.params()
        return PrimFunc(params, BlockRealize([], IntImm("bool", 1), root),
                        buffer_map=buffer_map, attrs=self.func_attrs())

    def params(self):
        """The handle of each input and output buffer, and the symbols used."""
        params, buffer_map = [], {}
        for info in self.buffers:
            if info.role == "intermediate":
                continue
            name = info.buffer.name
            handle = Var(self.fresh(name.lower() if name.isupper() else f"{name}_handle"), "handle")
            params.append(handle)
            buffer_map[handle] = info.buffer
        symbols = [s for s in self.symbols if s in self.used_symbols]
        if symbols and self.ch.chance(20):
            params = symbols + params
        else:
            params = params + symbols
        return params, buffer_map

    def func_attrs(self) -> dict:
        """Function attributes: a global symbol (or none: a private function)."""
        name = self.ch.choice(("main", "main", "default_function", "fused_compute"))
        kind = self.ch.weighted((("noalias", 6), ("symbol", 2), ("private", 1)))
        if kind == "private":
            return {}
        if kind == "symbol":
            return {"global_symbol": name}
        return {"global_symbol": name, "tir.noalias": True}

    # ------------------------------------------------------------------ blocks

    def block(self, last: bool) -> Stmt:
        """The loop nest of one block (the last block reads every
        intermediate no block has read yet)."""
        ch, opts = self.ch, self.opts
        reduction = opts.allow_reduction and ch.chance(35)
        readable = list(self.buffers)
        primary = self.primary_input(readable, reduction)
        axes, primary_dims, budget = self.block_axes(primary, reduction)
        spatial = [a for a in axes if a.kind == "S"]

        out_dtype = ch.choice(opts.numeric_dtypes) if reduction else self.element_dtype()
        intermediate = opts.allow_alloc and not last and ch.chance(45)
        out = self.new_buffer([a.size for a in spatial], out_dtype,
                              "intermediate" if intermediate else "output",
                              ch.choice(opts.alloc_scopes) if intermediate else "global")
        accesses = self.block_accesses(primary, primary_dims, axes, readable, last)
        if intermediate:
            self.pending.append(out)

        loops, bindings, predicates = self.loops_for(axes)
        inner_loop = (not reduction and opts.allow_inner_loops and not out_dtype.is_bool
                      and ch.chance(15))
        partial = opts.allow_partial_writes and not intermediate and not reduction
        body, init, inner_loop_used = self.block_body(out.buffer, spatial, axes, accesses,
                                                      reduction, inner_loop, budget, partial)
        if partial and loops and opts.allow_where and ch.chance(10):
            predicates.append(self.skip_predicate(ch.choice(loops)))
        self.assign_loop_kinds(loops, has_inner_loop=inner_loop_used)

        iter_vars = [IterVar(Range(self.const(0), self.size_expr(a.size)), a.iter_var,
                             "DataPar" if a.kind == "S" else "CommReduce") for a in axes]
        # the init only stores constants where the body stores: it adds no region
        reads, writes = self.regions(body, inner_vars=self.inner_vars(body))
        annotations = {}
        if opts.allow_annotations and ch.chance(6):
            key, value = ch.choice(_BLOCK_ANNOTATIONS)
            annotations[key] = value
        block = Block(iter_vars, reads, writes, self.block_name(out.buffer.name), body, init,
                      annotations=annotations)
        predicate = predicates[0] if predicates else IntImm("bool", 1)
        for p in predicates[1:]:
            predicate = And(predicate, p)
        stmt: Stmt = BlockRealize([bindings[a] for a in axes], predicate, block)
        if partial and loops and opts.allow_if and ch.chance(8):
            # a condition around the block skips whole instances (a cache of
            # its output must not copy back what they leave unwritten)
            stmt = IfThenElse(self.skip_predicate(ch.choice(loops)), stmt)
        for loop in reversed(loops):
            stmt = For(loop.var, self.const(loop.min), loop.extent, loop.kind, stmt,
                       thread_binding=loop.tag, annotations=loop.annotations)
        return stmt

    def primary_input(self, readable: Sequence[_BufInfo], reduction: bool) -> _BufInfo | None:
        """The buffer a block is shaped after: an unread intermediate, an
        existing buffer, a new input, or none."""
        ch, opts = self.ch, self.opts
        if self.pending and ch.chance(80):
            return ch.choice(self.pending)
        if readable and ch.chance(55):
            return ch.choice(readable)
        if not ch.chance(85):
            return None
        budget, sizes = opts.max_points, []
        for _ in range(ch.integer(1, 3)):
            size = self.new_size(budget // 2 if reduction else budget)
            budget //= self.estimate(size)
            sizes.append(size)
            if budget < 2:
                break
        return self.new_buffer(sizes, self.element_dtype(), "input")

    def block_axes(self, primary: _BufInfo | None, reduction: bool):
        """The block's axes (spatial first), how each dimension of the primary
        input is indexed (an axis or a constant index), and the iteration
        budget left."""
        ch, opts = self.ch, self.opts
        axes: list[_Axis] = []
        budget = opts.max_points
        primary_dims: list = []
        for size in primary.sizes if primary is not None else ():
            roles = [("spatial", 6), ("drop", 1)] + ([("reduce", 3)] if reduction else [])
            role = ch.weighted(roles)
            if role != "drop" and self.estimate(size) <= budget:
                axis = self.new_axis(size, "S" if role == "spatial" else "R", axes)
                budget //= self.estimate(size)
                axes.append(axis)
                primary_dims.append(axis)
            else:
                primary_dims.append(self.const_index(size))
        if budget >= 2 and (not axes or ch.chance(20)):
            size = self.new_size(budget)
            axes.append(self.new_axis(size, "S", axes))
            budget //= self.estimate(size)
        if reduction and not any(a.kind == "R" for a in axes):
            size = self.new_size(max(budget, 1))
            axes.append(self.new_axis(size, "R", axes))
            budget //= self.estimate(size)
        if not any(a.kind == "S" for a in axes) and (not opts.allow_zero_dim or not axes):
            axes.append(self.new_axis(self.new_size(max(budget, 1)), "S", axes))
        spatial = ch.shuffled([a for a in axes if a.kind == "S"])
        return spatial + [a for a in axes if a.kind == "R"], primary_dims, budget

    def block_accesses(self, primary, primary_dims, axes, readable, last: bool) -> list[Access]:
        """What the block reads: the primary input, intermediates that must
        be read, and up to two more buffers."""
        ch = self.ch
        accesses: list[Access] = []
        if primary is not None:
            accesses.append(Access(primary.buffer, tuple(
                self.axis_index(d, s) if isinstance(d, _Axis) else d
                for d, s in zip(primary_dims, primary.sizes))))
        must_read = [p for p in self.pending if p is not primary] if last else []
        if not last and self.pending and ch.chance(40):
            must_read.append(ch.choice(self.pending))
        for info in must_read:
            if all(a.buffer.name != info.buffer.name for a in accesses):
                accesses.append(self.generic_access(info, axes))
        for _ in range(ch.integer(0, 2)):
            access = self.extra_access(axes, readable)
            if all(a.buffer.name != access.buffer.name for a in accesses):
                accesses.append(access)
        read_names = {a.buffer.name for a in accesses}
        self.pending = [p for p in self.pending if p.buffer.name not in read_names]
        return accesses

    def element_dtype(self) -> DataType:
        # bool is the rarest element type: most blocks compute numbers
        weighted = [(d, 1 if d.is_bool else 4) for d in self.opts.dtypes]
        return self.ch.weighted(weighted)

    def new_axis(self, size, kind: str, axes: Sequence[_Axis]) -> _Axis:
        letters = "ijlpq" if kind == "S" else "krs"
        base = letters[sum(a.kind == kind for a in axes) % len(letters)]
        return _Axis(base, size, kind, Var(self.fresh(f"v{base}"), self.idx))

    def block_name(self, buffer_name: str) -> str:
        base = buffer_name
        if self.opts.allow_odd_names and self.ch.chance(10):
            base = self.ch.choice((f"{buffer_name}_compute", f"{buffer_name}.rf",
                                   f"compute_{buffer_name}", f"{buffer_name} update",
                                   f"T-{buffer_name}"))
        return self.fresh_block_name(base)

    # ------------------------------------------------------------------ indices

    def const_index(self, size) -> DimIndex:
        """A constant index (or a constant stencil) inside ``[0, size)``."""
        if isinstance(size, int):
            if self.opts.allow_stencils and size >= 2 and self.ch.chance(15):
                first = self.ch.integer(0, size - 2)
                return DimIndex(None, (first, self.ch.integer(first + 1, size - 1)))
            return DimIndex(None, (self.ch.integer(0, size - 1),))
        return DimIndex(None, (0,))

    def axis_index(self, axis: _Axis, size) -> DimIndex:
        """Index a dimension of the axis's own extent by that axis."""
        if self.ch.chance(12):
            return self.reverse_index(axis, size)
        return DimIndex(axis.iter_var)

    def reverse_index(self, axis: _Axis, size) -> DimIndex:
        """``size - 1 - v``, for an axis of the dimension's own extent."""
        if isinstance(size, int):
            return DimIndex(Sub(self.const(size - 1), axis.iter_var))
        return DimIndex(Sub(Sub(self.size_expr(size), self.const(1)), axis.iter_var))

    def dim_index(self, size, axes: Sequence[_Axis]) -> DimIndex:
        """An index that stays inside ``[0, size)`` for every value of the axes."""
        ch = self.ch
        same = [a for a in axes if a.size == size]
        const = isinstance(size, int)
        smaller = [a for a in axes if const and isinstance(a.size, int) and a.size < size]
        if isinstance(size, _SymPlus):  # an axis over the symbol leaves room for the offset
            smaller = [a for a in axes if a.size == size.var]
        options = [("const", 2)]
        if same:
            options += [("same", 8), ("reverse", 1), ("div", 1)]
        if smaller:
            options.append(("shift", 4))
        if axes:
            options.append(("clamp", 1))
            if const and size >= 2:
                options.append(("mod", 2))
        kind = ch.weighted(options)
        if kind == "const":
            return self.const_index(size)
        if kind == "same":
            return DimIndex(ch.choice(same).iter_var)
        if kind == "reverse":
            return self.reverse_index(ch.choice(same), size)
        if kind == "div":  # v // k <= v < size
            return DimIndex(FloorDiv(ch.choice(same).iter_var, self.const(ch.integer(2, 3))))
        if kind == "shift":
            axis = ch.choice(smaller)
            room = size.offset if isinstance(size, _SymPlus) else size - axis.size
            if self.opts.allow_stencils and ch.chance(40):
                count = ch.integer(2, min(3, room + 1))
                offsets = sorted(ch.shuffled(list(range(room + 1)))[:count])
                return DimIndex(axis.iter_var, tuple(offsets))
            return DimIndex(axis.iter_var, (ch.integer(0, room),))
        axis = ch.choice(list(axes))
        if kind == "mod":
            shift = ch.integer(0, 3)
            inner = Add(axis.iter_var, self.const(shift)) if shift else axis.iter_var
            return DimIndex(FloorMod(inner, self.const(size)))
        # clamp: min(v + c, size - 1) lies in [0, size) since v >= 0
        shift = ch.integer(0, 2)
        inner = Add(axis.iter_var, self.const(shift)) if shift else axis.iter_var
        upper = self.const(size - 1) if const else Sub(self.size_expr(size), self.const(1))
        if not const and isinstance(size, _SymPlus) and size.offset >= 1:
            upper = Add(self.size_expr(size.var), self.const(size.offset - 1))
        return DimIndex(Min(inner, upper))

    def generic_access(self, info: _BufInfo, axes: Sequence[_Axis]) -> Access:
        """An in-bounds access to any buffer from the given axes."""
        return Access(info.buffer, tuple(self.dim_index(s, axes) for s in info.sizes))

    def extra_access(self, axes: Sequence[_Axis], readable: Sequence[_BufInfo]) -> Access:
        """Another buffer to read: an existing one or a new input shaped after some axes."""
        ch = self.ch
        if readable and ch.chance(40):
            return self.generic_access(ch.choice(list(readable)), axes)
        chosen = ch.subset(axes, 60) or ([ch.choice(axes)] if axes else [])
        sizes, dims = [], []
        for axis in ch.shuffled(chosen):
            if self.opts.allow_stencils and ch.chance(25):
                room = ch.integer(1, 2)
                offsets = sorted(ch.shuffled(list(range(room + 1)))[:ch.integer(1, room + 1)])
                if isinstance(axis.size, int):
                    sizes.append(axis.size + room)
                elif isinstance(axis.size, _SymPlus):
                    sizes.append(_SymPlus(axis.size.var, axis.size.offset + room))
                else:
                    sizes.append(_SymPlus(axis.size, room))
                dims.append(DimIndex(axis.iter_var, tuple(offsets)))
            else:
                sizes.append(axis.size)
                dims.append(DimIndex(axis.iter_var))
        if ch.chance(15):
            size = self.new_size(self.opts.max_extent)
            sizes.append(size)
            dims.append(self.const_index(size))
        info = self.new_buffer(sizes, self.element_dtype(), "input")
        return Access(info.buffer, tuple(dims))

    # ------------------------------------------------------------------ loops

    def loops_for(self, axes: Sequence[_Axis]):
        """Loops over the axes, the binding of each axis and the predicates."""
        ch, opts = self.ch, self.opts
        groups: list[list[_Loop]] = []
        bindings: dict[_Axis, PrimExpr] = {}
        predicates: list[PrimExpr] = []
        todo = list(axes)
        while todo:
            axis = todo.pop(0)
            # a fused loop may also join a reduction axis and a spatial one
            # (``k_j_fused`` with ``vk = f // 4``, ``vj = f % 4``), a shape
            # that once made LLVM's loop vectorizer miscompile
            mixed = opts.allow_reduction and ch.chance(30)
            partner = next((a for a in todo if (mixed or a.kind == axis.kind)
                            and isinstance(a.size, int) and a.size >= 2), None)
            options = [("direct", 12)]
            if isinstance(axis.size, int):
                options.append(("offset", 1))
                if axis.size == 1:
                    options.append(("constant", 2))
                if partner is not None and axis.size >= 1:
                    options.append(("fuse", 2 if partner.kind == axis.kind else 6))
                if axis.size >= 2:
                    options.append(("split", 4))
            elif opts.allow_where:
                options.append(("split", 3))
            scheme = ch.weighted(options)
            group = len(groups)
            if scheme == "constant":
                bindings[axis] = self.const(0)
            elif scheme == "offset":
                start = ch.integer(1, 3)
                var = Var(self.fresh(axis.base), self.idx)
                groups.append([_Loop(var, start, self.const(axis.size), [axis], group)])
                bindings[axis] = Sub(var, self.const(start))
            elif scheme == "fuse":
                todo.remove(partner)
                outer, inner = axis, partner
                if partner.kind != axis.kind and ch.chance(50):  # the reduction axis outside
                    outer, inner = partner, axis
                var = Var(self.fresh(f"{outer.base}_{inner.base}_fused"), self.idx)
                extent = self.const(outer.size * inner.size)
                groups.append([_Loop(var, 0, extent, [outer, inner], group)])
                bindings[outer] = FloorDiv(var, self.const(inner.size))
                bindings[inner] = FloorMod(var, self.const(inner.size))
            elif scheme == "split":
                split = self.split(axis, group)
                if split is None:
                    scheme = "direct"
                else:
                    loops, binding, predicate = split
                    groups.append(loops)
                    bindings[axis] = binding
                    if predicate is not None:
                        predicates.append(predicate)
            if scheme == "direct":
                var = Var(self.fresh(axis.base), self.idx)
                groups.append([_Loop(var, 0, self.size_expr(axis.size), [axis], group)])
                bindings[axis] = var
        return self.order(groups), bindings, predicates

    def split(self, axis: _Axis, group: int):
        """Two loops ``outer * f + inner`` over ``axis``, the binding and the
        predicate that keeps an overshooting factor in bounds (None when
        ``f`` divides the extent); None when no factor is allowed."""
        ch, opts = self.ch, self.opts
        size = axis.size
        if isinstance(size, int):
            factors = [f for f in range(2, size + 2)
                       if opts.allow_where or size % f == 0]
            if not factors:
                return None
            factor = ch.choice(factors)
            outer_extent = self.const(-(-size // factor))
            exact = size % factor == 0
        else:
            factor = ch.integer(2, 4)
            # ceil(size / factor); ``n + 1`` plus a constant folds to one sum,
            # as the parser folds ``n + 1 + 1`` into ``n + 2``
            if isinstance(size, _SymPlus):
                rounded_up = self.size_expr(_SymPlus(size.var, size.offset + factor - 1))
            else:
                rounded_up = Add(self.size_expr(size), self.const(factor - 1))
            outer_extent = FloorDiv(rounded_up, self.const(factor))
            exact = False
        outer = Var(self.fresh(axis.base + "_0"), self.idx)
        inner = Var(self.fresh(axis.base + "_1"), self.idx)
        binding = Add(Mul(outer, self.const(factor)), inner)
        loops = [_Loop(outer, 0, outer_extent, [axis], group),
                 _Loop(inner, 0, self.const(factor), [axis], group)]
        predicate = None if exact else LT(Add(Mul(outer, self.const(factor)), inner),
                                          self.size_expr(size))
        return loops, binding, predicate

    def order(self, groups: list[list[_Loop]]) -> list[_Loop]:
        """Interleave the groups, each group's loops keeping their order
        (a split's outer loop stays outside its inner loop)."""
        ch = self.ch
        queues = [list(g) for g in groups]
        spatial_first = not ch.chance(25)  # TVM's usual order: reduction loops inside
        out = []
        while any(queues):
            live = [q for q in queues if q]
            if spatial_first:
                spatial = [q for q in live if q[0].spatial_only]
                live = spatial or live
            out.append(ch.choice(live).pop(0))
        return out

    def assign_loop_kinds(self, loops: list[_Loop], has_inner_loop: bool) -> None:
        """Give loops kinds where that keeps the program meaningful: thread
        bindings on the outer spatial loops, at most one parallel spatial
        loop, a vectorized innermost spatial loop, unrolled constant loops."""
        ch, kinds = self.ch, self.opts.loop_kinds
        gpu = False
        if ForKind.THREAD_BINDING in kinds and ch.chance(20):
            prefix = 0
            while (prefix < len(loops) and prefix < 3 and loops[prefix].spatial_only
                   and loops[prefix].min == 0):
                prefix += 1
            if prefix:
                count = ch.integer(1, prefix)
                n_block = ch.integer(0, count)
                tags = ([f"blockIdx.{a}" for a in THREAD_AXES[:n_block]]
                        + [f"threadIdx.{a}" for a in THREAD_AXES[:count - n_block]])
                for loop, tag in zip(loops, tags):
                    loop.kind, loop.tag = ForKind.THREAD_BINDING, tag
                gpu = True
        free = [l for l in loops if l.kind is ForKind.SERIAL]
        if ForKind.PARALLEL in kinds and not gpu and ch.chance(25):
            candidates = [l for l in free if l.spatial_only]
            if candidates:
                ch.choice(candidates).kind = ForKind.PARALLEL
        if (ForKind.VECTORIZED in kinds and loops and not has_inner_loop and ch.chance(25)):
            last = loops[-1]
            if last.kind is ForKind.SERIAL and last.spatial_only and last.constant and last.min == 0:
                last.kind = ForKind.VECTORIZED
        if ForKind.UNROLLED in kinds:
            for loop in loops:
                if loop.kind is ForKind.SERIAL and loop.constant and ch.chance(12):
                    loop.kind = ForKind.UNROLLED
        if self.opts.allow_annotations:
            for loop in loops:
                if ch.chance(4):
                    key, value = ch.choice(_LOOP_ANNOTATIONS)
                    loop.annotations = {key: value}

    def skip_predicate(self, loop: _Loop) -> PrimExpr:
        """A ``T.where`` condition that skips some iterations of ``loop``."""
        if self.ch.chance(50):
            return EQ(FloorMod(loop.var, self.const(2)), self.const(0))
        bound = loop.min + (self.ch.integer(1, 3) if isinstance(loop.extent, IntImm) else 1)
        return LT(loop.var, self.const(bound))

    # ------------------------------------------------------------------ bodies

    def block_body(self, out: Buffer, spatial, axes, accesses, reduction: bool,
                   inner_loop: bool, budget: int, partial: bool):
        """The body statement, the init statement (or None) and whether the
        body holds an inner loop."""
        ch, opts = self.ch, self.opts
        out_index = [a.iter_var for a in spatial]
        dtype = out.dtype
        depth = ch.integer(0, opts.max_depth)
        exprs = self.expr_builder(axes, accesses)
        if reduction:
            current = BufferLoad(out, out_index)
            combiners = [Add, Max, Min] + ([Mul] if dtype.is_float else [])
            combiner = ch.choice(combiners)
            update = exprs.absorb_unused(exprs.expr(dtype, depth))
            swap = combiner not in (Max, Min) and ch.chance(20)
            value = combiner(update, current) if swap else combiner(current, update)
            init_value = exprs.constant(dtype) if ch.chance(20) else self.identity(combiner, dtype)
            return (BufferStore(out, value, out_index), BufferStore(out, init_value, out_index), False)
        if inner_loop and budget >= 2:
            stmt = self.inner_loop_body(out, out_index, spatial, axes, accesses, depth, budget)
            if stmt is not None:
                return stmt, None, True
        form = ch.weighted((("plain", 8), ("if", 2 if opts.allow_if else 0),
                            ("let", 2 if opts.allow_let else 0), ("two", 1),
                            ("if_only", 1 if opts.allow_if and partial else 0)))
        if form == "if":
            cond = exprs.cond(max(depth - 1, 0))
            other = BufferStore(out, exprs.expr(dtype, depth), out_index)
            then = BufferStore(out, exprs.absorb_unused(exprs.expr(dtype, depth)), out_index)
            return IfThenElse(cond, then, other), None, False
        if form == "if_only":  # some elements of an output parameter keep their values
            cond = exprs.cond(max(depth - 1, 0))
            then = BufferStore(out, exprs.absorb_unused(exprs.expr(dtype, depth)), out_index)
            return IfThenElse(cond, then), None, False
        if form == "two":  # a store, then an update that reads it back
            first = BufferStore(out, exprs.expr(dtype, depth), out_index)
            current = BufferLoad(out, out_index)
            rest = exprs.absorb_unused(exprs.expr(dtype, depth))
            if dtype.is_bool:
                update = ch.choice((And, Or))(current, rest)
            else:
                update = exprs.binary(ch.choice((Add, Max, Min)), current, rest)
            return SeqStmt([first, BufferStore(out, update, out_index)]), None, False
        if form == "let":
            var_dtype = ch.choice(list(opts.numeric_dtypes))
            var = Var(self.fresh("x"), var_dtype)
            value = exprs.nonliteral_or_expr(var_dtype, depth)
            exprs.lets.append(var)
            use = exprs.convert(var, dtype)
            rest = exprs.expr(dtype, depth)
            if dtype.is_bool:
                combined = And(use, rest)
            else:
                combined = exprs.binary(ch.choice((Add, Max, Min)), use, rest)
            combined = exprs.absorb_unused(combined)
            return LetStmt(var, value, BufferStore(out, combined, out_index)), None, False
        return BufferStore(out, exprs.absorb_unused(exprs.expr(dtype, depth)), out_index), None, False

    def inner_loop_body(self, out, out_index, spatial, axes, accesses, depth, budget):
        """``C[v] = init; for k in range(s): C[v] = C[v] + f(A[..., k])``."""
        ch = self.ch
        size = self.new_size(budget)
        k = Var(self.fresh("k_inner"), self.idx)
        chosen = ch.subset(spatial, 60)
        sizes = [a.size for a in chosen] + [size]
        dims = [DimIndex(a.iter_var) for a in chosen] + [DimIndex(k)]
        info = self.new_buffer(sizes, self.element_dtype(), "input")
        inner_access = Access(info.buffer, tuple(dims))
        exprs = self.expr_builder(axes, list(accesses) + [inner_access])
        dtype = out.dtype
        term = exprs.convert(exprs.load(inner_access), dtype)
        if ch.chance(50):
            term = exprs.binary(ch.choice((Add, Mul, Max)), term, exprs.expr(dtype, max(depth - 1, 0)))
        term = exprs.absorb_unused(term)
        combiner = ch.choice((Add, Max, Min))
        current = BufferLoad(out, out_index)
        kind = ForKind.UNROLLED if (isinstance(size, int) and ch.chance(25)
                                    and ForKind.UNROLLED in self.opts.loop_kinds) else ForKind.SERIAL
        loop = For(k, self.const(0), self.size_expr(size), kind,
                   BufferStore(out, combiner(current, term), out_index))
        init = BufferStore(out, self.identity(combiner, dtype), out_index)
        return SeqStmt([init, loop])

    def expr_builder(self, axes, accesses) -> ExprBuilder:
        opts = self.opts
        return ExprBuilder(self.ch, index_dtype=self.idx, iter_vars=[a.iter_var for a in axes],
                           accesses=accesses, dtypes=opts.dtypes, fresh=self.fresh,
                           symbols=list(self.used_symbols),
                           allow_math=opts.allow_math, allow_bitwise=opts.allow_bitwise,
                           allow_let=opts.allow_let, literal_pairs=opts.literal_pairs,
                           special_values=opts.special_values)

    @staticmethod
    def identity(combiner, dtype: DataType) -> PrimExpr:
        """The identity of a reduction: 0 for +, 1 for *, the extremes for max and min."""
        if combiner is Add:
            value = 0
        elif combiner is Mul:
            value = 1
        elif dtype.is_float:
            finite = FLOAT_MAX[str(dtype)]
            value = -finite if combiner is Max else finite
        else:
            value = dtype.min_value() if combiner is Max else dtype.max_value()
        return FloatImm(dtype, float(value)) if dtype.is_float else IntImm(dtype, int(value))

    # ------------------------------------------------------------------ regions

    @staticmethod
    def inner_vars(body: Stmt) -> set:
        """Variables bound inside a block body (inner loops, lets)."""
        out = set()
        for node in walk(body):
            if isinstance(node, For):
                out.add(node.loop_var)
            elif isinstance(node, LetStmt):
                out.add(node.var)
        return out

    def regions(self, body: Stmt, inner_vars: set):
        """Reads and writes: per buffer, in order of first access, the hull of
        its accesses (a whole dimension where an index uses an inner variable)."""
        loads: dict[str, list] = {}
        stores: dict[str, list] = {}
        buffers: dict[str, Buffer] = {}
        for node in walk(body):
            if isinstance(node, BufferLoad):
                loads.setdefault(node.buffer.name, []).append(node.indices)
                buffers[node.buffer.name] = node.buffer
            elif isinstance(node, BufferStore):
                stores.setdefault(node.buffer.name, []).append(node.indices)
                buffers[node.buffer.name] = node.buffer
        reads = [BufferRegion(buffers[n], self.hull(buffers[n], idx, inner_vars))
                 for n, idx in loads.items()]
        writes = [BufferRegion(buffers[n], self.hull(buffers[n], idx, inner_vars))
                  for n, idx in stores.items()]
        return reads, writes

    def hull(self, buffer: Buffer, index_lists, inner_vars: set) -> list[Range]:
        """Per dimension, the smallest range holding every index in
        ``index_lists`` (indices differ only by constant offsets)."""
        out = []
        for dim, indices in enumerate(zip(*index_lists)):
            shape = buffer.shape[dim]
            if any(_uses(e, inner_vars) for e in indices):
                out.append(Range(IntImm(shape.dtype, 0), shape))
                continue
            parts = [_split_offset(e) for e in indices]
            bases = {p[0] for p in parts}
            if len(bases) != 1:
                out.append(Range(IntImm(shape.dtype, 0), shape))
                continue
            base = parts[0][0]
            low = min(p[1] for p in parts)
            high = max(p[1] for p in parts)
            start = DimIndex(base).index(low, self.idx) if base is not None else self.const(low)
            out.append(Range(start, self.const(high - low + 1)))
        return out


def _split_offset(e: PrimExpr):
    """``(base, offset)`` with ``e == base + offset`` as the builders write it."""
    if isinstance(e, IntImm):
        return None, e.value
    if isinstance(e, Add) and isinstance(e.b, IntImm):
        return e.a, e.b.value
    return e, 0


def _uses(e: PrimExpr, variables: set) -> bool:
    return bool(variables) and any(isinstance(n, Var) and n in variables for n in walk(e))


__all__ = ["ProgramOptions", "prim_funcs", "random_prim_func", "build_prim_func",
           "DEFAULT_DTYPES", "FLOAT_MAX", "ALL_LOOP_KINDS", "ASSUMED_SYMBOLIC_EXTENT"]
