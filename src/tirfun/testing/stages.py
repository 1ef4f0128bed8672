"""Random multi-stage programs, written as TensorIR users write them.

:func:`multi_stage_programs` is a hypothesis strategy and :func:`random_stages`
builds the same kind of program from an integer seed; both build through
one function of a stream of choices (see :mod:`tirfun.testing._choices`),
so the same choices always give the same program and hypothesis shrinks a
failing program toward fewer, simpler stages.

A program is the TVMScript text a user would write for a small network
layer, parsed: a public ``main`` whose parameters are the inputs, any
weights, and one output; every stage is one block (``T.axis.remap`` over a
``T.grid``) in the implicit root block, and every stage but the last
writes an intermediate in the root block's ``alloc_buffers``. The stages,
each drawn after the last, over one element dtype per program:

* ``elementwise``: ``Y[i, j] = f(X[i, j])`` or ``f(X[i, j], Z[i, j])``,
  where ``Z`` is any earlier tensor of that shape, so that one producer
  often has several consumers;
* ``reduction``: a row reduction (sum, max or min, with ``T.init()``)
  feeding an elementwise stage that combines each row with its result;
* ``padding``: a border of zeros, ``T.if_then_else`` on the border as
  conv2d's padding is written;
* ``softmax`` (floats only): row maximum, ``T.exp(x - max)``, row sum of
  the exponentials, division;
* ``conv``: padding (or none) and a 2-D window reduction with a kernel
  parameter ``K[kh, kw]``;
* ``matmul``: ``Y[i, j] += X[i, k] * W[k, j]`` with a weight parameter.

Every program verifies, interprets and builds for the CPU. Integer
programs keep their values far from overflow (the inputs of
:func:`tirfun.testing.equivalence.random_inputs` are at most 8 in
magnitude); float programs may reach infinities and NaNs in float16,
which compare equal between the interpreter and compiled code.
:func:`stage_features` reads what a program contains back from the tree.

Float sums depend on their order: a schedule that reorders or splits the
reduction loops of a float program (a conv's two window axes, a matmul's
split ``k``) changes its results by rounding, in TVM as here. Compare such
schedules on integer programs (``dtypes=["int32", "int64"]``), whose
results do not depend on the order, or with a tolerance.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..analysis.traversal import walk
from ..errors import TirfunError
from ..nodes import (
    Add, Block, BufferLoad, BufferStore, Call, DataType, Div, FloorDiv, IterVarType, PrimFunc, Var,
)
from ._choices import BytesChooser, Chooser, RandomChooser

#: every stage kind, the simplest first
STAGE_KINDS = ("elementwise", "reduction", "padding", "softmax", "conv", "matmul")

#: the element dtypes drawn by default (any float, float8 and float4 too,
#: and signed integers of 16 bits or more may be asked for)
DEFAULT_DTYPES = ("float32", "int32", "float64", "float16", "int64")

# integer values stay below this magnitude (int32 wraps at 2**31)
_INT_LIMIT = 2 ** 24


def _to_dtypes(values) -> tuple[DataType, ...]:
    out = tuple(DataType(v) for v in values)
    for d in out:
        if not (d.lanes == 1 and (d.is_float or (d.is_int and d.bits >= 16))):
            raise TirfunError(f"stage programs are made of float scalars or signed integer "
                              f"scalars of 16 bits or more, got {d}")
    if not out:
        raise TirfunError("stage programs need at least one dtype")
    return out


def _to_kinds(values) -> tuple[str, ...]:
    out = tuple(values)
    unknown = [k for k in out if k not in STAGE_KINDS]
    if unknown or not out:
        raise TirfunError(f"stage kinds are some of {', '.join(STAGE_KINDS)}, got {list(out)}")
    return out


@attrs.frozen
class StageOptions:
    """What :func:`multi_stage_programs` and :func:`random_stages` may draw.

    ``max_stages`` bounds the number of drawn stages (a softmax or a conv
    counts once though it makes several blocks), ``max_extent`` the
    extents of the input, ``dtypes`` the element types (one per program)
    and ``kinds`` the stage kinds (:data:`STAGE_KINDS`)."""

    max_stages: int = attrs.field(default=4)
    max_extent: int = attrs.field(default=6)
    dtypes: tuple = attrs.field(default=DEFAULT_DTYPES, converter=_to_dtypes)
    kinds: tuple = attrs.field(default=STAGE_KINDS, converter=_to_kinds)

    def __attrs_post_init__(self):
        if self.max_stages < 1 or self.max_extent < 1:
            raise TirfunError("max_stages and max_extent are at least 1")


def multi_stage_programs(options: StageOptions | None = None, **kwargs: Any):
    """A hypothesis strategy of random multi-stage PrimFuncs.

    Keyword arguments are the fields of :class:`StageOptions`::

        multi_stage_programs()
        multi_stage_programs(dtypes=["float32"], kinds=["softmax", "matmul"], max_stages=2)
    """
    from hypothesis import strategies as st  # a test dependency, loaded on use

    opts = _options(options, kwargs)
    size = 64 + 48 * opts.max_stages
    return st.binary(min_size=size, max_size=size).map(
        lambda data: build_stages(BytesChooser(data), opts))


def random_stages(seed: int, options: StageOptions | None = None, **kwargs: Any) -> PrimFunc:
    """A random multi-stage PrimFunc determined by ``seed`` (no hypothesis).

    >>> random_stages(5) == random_stages(5)
    True
    """
    return build_stages(RandomChooser(seed), _options(options, kwargs))


def _options(options: StageOptions | None, kwargs: dict) -> StageOptions:
    if options is not None and kwargs:
        raise TirfunError("pass either a StageOptions or keyword options, not both")
    if options is None:
        try:
            return StageOptions(**kwargs)
        except TypeError as error:
            raise TirfunError(f"unknown stage program option: {error}") from None
    return options


def build_stages(ch: Chooser, options: StageOptions) -> PrimFunc:
    """Build one random multi-stage PrimFunc from the choices of ``ch``."""
    from ..script import from_source

    return from_source(stage_source(ch, options))


def stage_source(ch: Chooser, options: StageOptions) -> str:
    """The TVMScript text of one random multi-stage program."""
    return _Builder(ch, options).build()


# ---------------------------------------------------------------------------


@attrs.define
class _Tensor:
    name: str
    shape: tuple
    bound: float  # the largest magnitude an integer element can reach


class _Builder:
    def __init__(self, ch: Chooser, options: StageOptions):
        self.ch = ch
        self.opts = options
        self.dtype = ch.choice(options.dtypes)
        self.params: list[_Tensor] = []
        self.allocs: list[_Tensor] = []
        self.blocks: list[list[str]] = []
        self.pool: list[_Tensor] = []
        self.names: set[str] = set()

    # -- helpers ---------------------------------------------------------------
    @property
    def is_float(self) -> bool:
        return self.dtype.is_float

    def lit(self, value) -> str:
        if self.is_float:
            return f"T.{self.dtype}({float(value)!r})"
        return f"T.{self.dtype}({int(value)})"

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.names:
            name = f"{base}_{k}"
            k += 1
        self.names.add(name)
        return name

    def new_tensor(self, base: str, shape: tuple, bound: float) -> _Tensor:
        t = _Tensor(self.fresh(base), tuple(shape), bound)
        self.allocs.append(t)
        self.pool.append(t)
        return t

    def param(self, base: str, shape: tuple) -> _Tensor:
        t = _Tensor(self.fresh(base), tuple(shape), 8.0)
        self.params.append(t)
        return t

    def block(self, out: _Tensor, extents: tuple, kinds: str, body: list[str],
              init: str | None = None) -> None:
        loops = ["i", "j", "k", "l"][:len(extents)]
        axes = ["v" + v for v in loops]
        lines = [f"for {', '.join(loops)} in T.grid({', '.join(str(e) for e in extents)}):",
                 f'    with T.block("{out.name}"):',
                 f'        {", ".join(axes)} = T.axis.remap("{kinds}", [{", ".join(loops)}])']
        if init is not None:
            lines += ["        with T.init():", f"            {init}"]
        lines += [f"        {b}" for b in body]
        self.blocks.append(lines)

    def fits(self, bound: float) -> bool:
        return self.is_float or bound < _INT_LIMIT

    # -- the program -------------------------------------------------------------
    def build(self) -> str:
        ch, opts = self.ch, self.opts
        n = ch.integer(1, opts.max_extent)
        m = ch.integer(1, opts.max_extent)
        x = self.param("A", (n, m))
        self.pool.append(x)
        if ch.chance(40):
            self.pool.append(self.param("B", (n, m)))
        focus = x
        stages = ch.integer(1, opts.max_stages)
        for _ in range(stages):
            kinds = [k for k in opts.kinds if self.feasible(k, focus)]
            if not kinds:
                break
            kind = ch.choice(kinds)
            focus = getattr(self, f"stage_{kind}")(focus)
        if not self.blocks:
            # nothing fitted: one copy, so that every program has a stage
            focus = self.stage_copy(focus)
        out = self.allocs.pop()  # the last stage writes the output parameter
        self.params.append(out)
        return self.text()

    def feasible(self, kind: str, x: _Tensor) -> bool:
        n, m = x.shape
        if kind == "softmax":
            return self.is_float
        if kind == "padding":
            return n + 2 <= 2 * self.opts.max_extent + 2 and m + 2 <= 2 * self.opts.max_extent + 2
        if kind == "conv":
            return self.fits(x.bound * 8 * 9)
        if kind == "matmul":
            return self.fits(x.bound * 8 * m)
        if kind == "reduction":
            return self.fits(x.bound * m * 2)
        return self.fits(x.bound * 2 + 8)

    def text(self) -> str:
        dt = self.dtype
        sig = ", ".join(f'{t.name}: T.Buffer({_shape(t.shape)}, "{dt}")' for t in self.params)
        lines = ["@T.prim_func", f"def main({sig}):",
                 '    T.func_attr({"tir.noalias": True})']
        for t in self.allocs:
            lines.append(f'    {t.name} = T.alloc_buffer({_shape(t.shape)}, "{dt}")')
        for b in self.blocks:
            lines += [f"    {s}" for s in b]
        return "\n".join(lines) + "\n"

    # -- stages ------------------------------------------------------------------
    def operand(self, x: _Tensor) -> _Tensor | None:
        """Another tensor of ``x``'s shape (a second consumer), or None."""
        same = [t for t in self.pool if t.shape == x.shape and t is not x]
        if same and self.ch.chance(60):
            return self.ch.choice(same)
        return None

    def elementwise_expr(self, a: str, b: str | None, bound_a: float, bound_b: float):
        ch, dt = self.ch, self.dtype
        if self.is_float:
            unary = [f"{a} * {self.lit(0.5)} + {self.lit(1)}", f"T.max({a}, {self.lit(0)})",
                     f"T.if_then_else({a} > {self.lit(0)}, {a}, {a} * {self.lit(0.25)})",
                     f"T.sqrt(T.fabs({a}))", f"T.exp({a})", f"T.Cast(\"{dt}\", T.Cast(\"int32\", {a}))"]
            binary = [f"{a} + {b}", f"{a} * {b}", f"{a} - {b}", f"T.max({a}, {b})",
                      f"T.Select({a} < {b}, {a}, {b})"]
            if b is None:
                return ch.choice(unary), 0.0
            return ch.choice(binary), 0.0
        unary = [(f"{a} + {self.lit(1)}", bound_a + 1), (f"T.max({a}, {self.lit(0)})", bound_a),
                 (f"{a} * {self.lit(2)} - {self.lit(3)}", bound_a * 2 + 3),
                 (f"T.floordiv({a}, {self.lit(2)})", bound_a), (f"T.floormod({a}, {self.lit(7)})", 7),
                 (f"T.if_then_else({a} > {self.lit(0)}, {a}, {self.lit(0)} - {a})", bound_a)]
        binary = [(f"{a} + {b}", bound_a + bound_b), (f"{a} - {b}", bound_a + bound_b),
                  (f"T.max({a}, {b})", max(bound_a, bound_b)),
                  (f"T.Select({a} < {b}, {a}, {b})", max(bound_a, bound_b))]
        options = unary if b is None else binary
        options = [o for o in options if self.fits(o[1])] or [(a, bound_a)]
        return ch.choice(options)

    def stage_copy(self, x: _Tensor) -> _Tensor:
        y = self.new_tensor("T_copy", x.shape, x.bound)
        self.block(y, x.shape, "SS", [f"{y.name}[vi, vj] = {x.name}[vi, vj]"])
        return y

    def stage_elementwise(self, x: _Tensor) -> _Tensor:
        other = self.operand(x)
        a = f"{x.name}[vi, vj]"
        b = None if other is None else f"{other.name}[vi, vj]"
        expr, bound = self.elementwise_expr(a, b, x.bound, 0 if other is None else other.bound)
        y = self.new_tensor("T_add" if other is not None else "compute", x.shape, bound)
        self.block(y, x.shape, "SS", [f"{y.name}[vi, vj] = {expr}"])
        return y

    def reduce_rows(self, x: _Tensor, base: str, how: str) -> _Tensor:
        n, m = x.shape
        dt = self.dtype
        bound = x.bound * m if how == "sum" else x.bound
        r = self.new_tensor(base, (n,), bound)
        src = f"{x.name}[vi, vj]"
        if how == "sum":
            init, update = self.lit(0), f"{r.name}[vi] + {src}"
        elif how == "max":
            init, update = f'T.min_value("{dt}")', f"T.max({r.name}[vi], {src})"
        else:
            init, update = f'T.max_value("{dt}")', f"T.min({r.name}[vi], {src})"
        self.block(r, (n, m), "SR", [f"{r.name}[vi] = {update}"], init=f"{r.name}[vi] = {init}")
        return r

    def stage_reduction(self, x: _Tensor) -> _Tensor:
        how = self.ch.choice(["sum", "max", "min"])
        r = self.reduce_rows(x, {"sum": "T_sum", "max": "T_max", "min": "T_min"}[how], how)
        a, b = f"{x.name}[vi, vj]", f"{r.name}[vi]"
        op = self.ch.choice(["-", "+"])
        y = self.new_tensor("T_subtract" if op == "-" else "T_add", x.shape, x.bound + r.bound)
        self.block(y, x.shape, "SS", [f"{y.name}[vi, vj] = {a} {op} {b}"])
        return y

    def pad(self, x: _Tensor, p: int, base: str) -> _Tensor:
        n, m = x.shape
        y = self.new_tensor(base, (n + 2 * p, m + 2 * p), x.bound)
        cond = f"{p} <= vi and vi < {n + p} and {p} <= vj and vj < {m + p}"
        self.block(y, y.shape, "SS", [f"{y.name}[vi, vj] = T.if_then_else({cond}, "
                                      f"{x.name}[vi - {p}, vj - {p}], {self.lit(0)})"])
        return y

    def stage_padding(self, x: _Tensor) -> _Tensor:
        return self.pad(x, 1, "pad_temp")

    def stage_softmax(self, x: _Tensor) -> _Tensor:
        n, m = x.shape
        top = self.reduce_rows(x, "T_softmax_maxelem", "max")
        e = self.new_tensor("T_softmax_exp", x.shape, 0.0)
        self.block(e, x.shape, "SS",
                   [f"{e.name}[vi, vj] = T.exp({x.name}[vi, vj] - {top.name}[vi])"])
        total = self.reduce_rows(e, "T_softmax_expsum", "sum")
        y = self.new_tensor("T_softmax_norm", x.shape, 0.0)
        self.block(y, x.shape, "SS", [f"{y.name}[vi, vj] = {e.name}[vi, vj] / {total.name}[vi]"])
        return y

    def stage_conv(self, x: _Tensor) -> _Tensor:
        n, m = x.shape
        k = self.ch.integer(1, 3)
        p = self.ch.integer(0, 1)
        while k > 1 and (n + 2 * p < k or m + 2 * p < k):
            k -= 1
        src = self.pad(x, p, "pad_temp") if p else x
        kernel = self.param("K", (k, k))
        oh, ow = n + 2 * p - k + 1, m + 2 * p - k + 1
        y = self.new_tensor("conv", (oh, ow), src.bound * 8 * k * k)
        self.block(y, (oh, ow, k, k), "SSRR",
                   [f"{y.name}[vi, vj] = {y.name}[vi, vj] + {src.name}[vi + vk, vj + vl] * "
                    f"{kernel.name}[vk, vl]"], init=f"{y.name}[vi, vj] = {self.lit(0)}")
        return y

    def stage_matmul(self, x: _Tensor) -> _Tensor:
        n, m = x.shape
        cols = self.ch.integer(1, self.opts.max_extent)
        w = self.param("W", (m, cols))
        y = self.new_tensor("matmul", (n, cols), x.bound * 8 * m)
        self.block(y, (n, cols, m), "SSR",
                   [f"{y.name}[vi, vj] = {y.name}[vi, vj] + {x.name}[vi, vk] * {w.name}[vk, vj]"],
                   init=f"{y.name}[vi, vj] = {self.lit(0)}")
        return y


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# ---------------------------------------------------------------------------
# what a program contains, read from the tree


def stage_features(func: PrimFunc) -> set[str]:
    """The stage shapes ``func`` contains, read from its blocks alone:
    ``reduction`` (a block with ``T.init()``), ``reduction_feeds`` (a
    block without init reads what a reduction wrote), ``padding`` (a store
    of ``T.if_then_else`` of a load and a constant), ``softmax`` (``T.exp``
    of a difference whose result a division reads), ``conv`` (two reduction
    axes and a load indexed ``vi + vk``), ``matmul`` (one reduction axis
    shared by the indices of two loads), ``several_consumers`` (a buffer
    read by two blocks or more), ``alloc`` (root allocations),
    ``stages:N`` (N blocks, 1 to 5, then ``6+``) and ``dtype:<dtype>``."""
    blocks = [n for n in walk(func.body) if isinstance(n, Block) and n.name_hint != "root"]
    out = {f"stages:{len(blocks) if len(blocks) < 6 else '6+'}"}
    root = func.body.block if hasattr(func.body, "block") else None
    if root is not None and root.alloc_buffers:
        out.add("alloc")
    for buf in func.buffer_map.values():
        out.add(f"dtype:{buf.dtype}")
    readers: dict = {}
    reduced = set()
    exp_outputs = set()
    for b in blocks:
        written = {n.buffer for n in walk(b.body) if isinstance(n, BufferStore)}
        loads = [n for n in walk(b.body) if isinstance(n, BufferLoad)]
        for buf in {ld.buffer for ld in loads} - written:
            readers[buf] = readers.get(buf, 0) + 1
        reduce_vars = {iv.var for iv in b.iter_vars if iv.iter_type == IterVarType.CommReduce}
        if b.init is not None:
            out.add("reduction")
            reduced |= written
        elif any(ld.buffer in reduced for ld in loads):
            out.add("reduction_feeds")
        for store in (n for n in walk(b.body) if isinstance(n, BufferStore)):
            v = store.value
            if isinstance(v, Call) and v.op == "tir.if_then_else" and \
                    isinstance(v.args[1], BufferLoad) and not isinstance(v.args[2], BufferLoad):
                out.add("padding")
            if isinstance(v, Call) and v.op == "tir.exp" and _is_difference(v.args[0]):
                exp_outputs.add(store.buffer)
            if isinstance(v, (Div, FloorDiv)) and isinstance(v.a, BufferLoad) and \
                    v.a.buffer in exp_outputs:
                out.add("softmax")
        if len(reduce_vars) == 2 and any(
                isinstance(i, Add) and isinstance(i.b, Var) and i.b in reduce_vars
                for ld in loads for i in ld.indices):
            out.add("conv")
        if len(reduce_vars) == 1:
            (rv,) = reduce_vars
            indexed = [ld for ld in loads if ld.buffer not in written
                       and any(i is rv or i == rv for i in ld.indices)]
            if len({ld.buffer for ld in indexed}) >= 2:
                out.add("matmul")
    if any(count >= 2 for count in readers.values()):
        out.add("several_consumers")
    return out


def _is_difference(e) -> bool:
    from ..nodes import Sub
    return isinstance(e, Sub)


__all__ = ["STAGE_KINDS", "DEFAULT_DTYPES", "StageOptions", "multi_stage_programs", "random_stages",
           "build_stages", "stage_source", "stage_features"]
