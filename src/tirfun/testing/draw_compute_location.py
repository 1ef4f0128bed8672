"""Random applications of the compute location primitives, for property tests.

:data:`DRAWERS` maps each primitive's name (``compute_at``,
``reverse_compute_at``, ``compute_inline``, ``reverse_compute_inline``) to a
function ``(chooser, module) -> Rewrite | None`` that returns one random
application of it on the module, or None when the module offers no site.

A drawn application names blocks and loops of the module, but it is not
checked: it may well violate a precondition (a compute_at to a loop that
does not hold every consumer, an inline of an output block), which is what
tests that invalid applications end in a ScheduleError want. Tests that
need valid applications filter with ``rewrite.violations(mod)``; the
drawers favour sites likely to be valid (a block with a consumer, a loop
above a consumer) so that valid ones come often.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from .. import rewrites as R
from ..analysis.traversal import ancestors, stmt_nodes, walk_stmts
from ..nodes import Block, BlockRealize, For, IRModule, PrimFunc
from ._choices import Chooser


def _main(mod: IRModule) -> tuple[str, PrimFunc]:
    name = "main" if "main" in mod.functions else next(iter(mod.functions))
    return name, mod.functions[name]


def _blocks(func: PrimFunc) -> list[tuple[tuple, Block]]:
    """Every block but the root, with its path, in program order."""
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    return [(p, s) for p, s in walk_stmts(func, skip_init=True) if isinstance(s, Block) and s is not root]


def _loops_above(func: PrimFunc, path: tuple) -> list[For]:
    out: list[For] = []
    for _, node in ancestors(func, path):
        if isinstance(node, Block):
            out = []
        elif isinstance(node, For):
            out.append(node)
    return out


def _related(blocks, block: Block, *, after: bool) -> list[tuple[tuple, Block]]:
    """Blocks after ``block`` that read what it writes (``after``), or blocks
    before it that write what it reads."""
    names = [b.name_hint for _, b in blocks]
    k = names.index(block.name_hint)
    if after:
        written = {w.buffer for w in block.writes}
        return [(p, b) for p, b in blocks[k + 1:] if written & {r.buffer for r in b.reads}]
    read = {r.buffer for r in block.reads}
    return [(p, b) for p, b in blocks[:k] if read & {w.buffer for w in b.writes}]


def _draw_at(ch: Chooser, mod: IRModule, reverse: bool):
    func_name, func = _main(mod)
    blocks = _blocks(func)
    if not blocks:
        return None
    # a block with a partner (a consumer, or a producer) is the likely site;
    # now and then reverse_compute_at takes a producer under a loop of its
    # consumer, where it runs whole in every iteration
    after = not reverse or ch.chance(15)
    partnered = [(p, b) for p, b in blocks if _related(blocks, b, after=after)]
    pool = partnered if partnered and not ch.chance(10) else blocks
    path, block = ch.choice(pool)
    partners = _related(blocks, block, after=after)
    if partners and not ch.chance(10):
        ppath, _ = ch.choice(partners)
        loops = _loops_above(func, ppath)
    else:
        loops = [s for s in stmt_nodes(func, skip_init=True) if isinstance(s, For)]
    if not loops:
        return None
    loop = ch.choice(loops)
    preserve = ch.chance(30)
    index = ch.choice([-1, -1, -1, -2, 0, 1])
    cls = R.reverse_compute_at if reverse else R.compute_at
    return cls(R.BlockRef(block.name_hint, func_name), R.LoopRef(loop.loop_var.name, func_name),
               preserve_unit_loops=preserve, index=index)


def draw_compute_at(ch: Chooser, mod: IRModule):
    """A random ``compute_at``: a block with consumers, to a loop above one of them."""
    return _draw_at(ch, mod, reverse=False)


def draw_reverse_compute_at(ch: Chooser, mod: IRModule):
    """A random ``reverse_compute_at``: a block with producers, to a loop
    above one of them, or now and then a block with consumers, to a loop
    above one of them."""
    return _draw_at(ch, mod, reverse=True)


def _draw_inline(ch: Chooser, mod: IRModule, reverse: bool):
    func_name, func = _main(mod)
    blocks = _blocks(func)
    if not blocks:
        return None
    partnered = [(p, b) for p, b in blocks if _related(blocks, b, after=not reverse)]
    pool = partnered if partnered and not ch.chance(10) else blocks
    _, block = ch.choice(pool)
    ref = R.BlockRef(block.name_hint, func_name)
    return R.reverse_compute_inline(ref) if reverse else R.compute_inline(ref)


def draw_compute_inline(ch: Chooser, mod: IRModule):
    """A random ``compute_inline``, of a block with readers when there is one."""
    return _draw_inline(ch, mod, reverse=False)


def draw_reverse_compute_inline(ch: Chooser, mod: IRModule):
    """A random ``reverse_compute_inline``, of a block with a producer when there is one."""
    return _draw_inline(ch, mod, reverse=True)


#: the kinds of condition :func:`draw_guarded_consumer` puts on the consumer
GUARD_KINDS = ("loop", "data", "split", "high part", "band")

#: the dtypes it draws
GUARD_DTYPES = ("float32", "int32", "float64", "int8", "float16")


@attrs.frozen
class GuardedConsumer:
    """A producer ``B = A * 2`` and a consumer ``C = B + 1`` of ``dtype``
    over ``rows x cols``, the consumer under a condition of ``kind``:

    * ``"loop"``: ``j < c`` on a loop bound to one variable;
    * ``"data"``: ``B[i, j] < t``, on what the producer wrote;
    * ``"split"``: the consumer's columns split by ``factor`` and the
      guard ``j_0 * factor + j_1 < c`` with ``c`` short of the columns;
    * ``"high part"``: the same split, guarded by ``j_0 < c``, which no
      variable of the consumer says (refused: it would be lost);
    * ``"band"``: no condition, but ``vi = i`` and ``vj = i * factor + j``
      over ``factor`` columns a row: the consumer ran a band of its domains
      (refused where ``i`` runs more than once: moved, it would run them all).

    ``loop`` is the producer's loop (``"i"`` or ``"j"``) the consumer is
    moved under with reverse_compute_at."""

    kind: str
    dtype: str
    rows: int
    cols: int
    bound: int
    factor: int
    loop: str

    def source(self) -> str:
        """The program's TVMScript."""
        dt = self.dtype
        if self.kind == "band":
            nest = f"for i, j in T.grid({self.rows}, {self.factor}):"
            binding = (f"vi = T.axis.spatial({self.rows}, i)\n"
                       f"            vj = T.axis.spatial({self.cols}, i * {self.factor} + j)")
            guard = None
        elif self.kind in ("split", "high part"):
            parts = -(-self.cols // self.factor)
            nest = f"for i, j_0, j_1 in T.grid({self.rows}, {parts}, {self.factor}):"
            binding = (f"vi = T.axis.spatial({self.rows}, i)\n"
                       f"            vj = T.axis.spatial({self.cols}, j_0 * {self.factor} + j_1)")
            inside = f"j_0 * {self.factor} + j_1 < {self.cols}"
            guard = (f"{inside} and j_0 * {self.factor} + j_1 < {self.bound}" if self.kind == "split"
                     else f"{inside} and j_0 < {self.bound}")
        else:
            nest = f"for i, j in T.grid({self.rows}, {self.cols}):"
            binding = 'vi, vj = T.axis.remap("SS", [i, j])'
            guard = f"j < {self.bound}" if self.kind == "loop" else f"B[i, j] < T.{dt}({self.bound})"
        return f"""
@T.prim_func
def main(A: T.Buffer(({self.rows}, {self.cols}), "{dt}"), C: T.Buffer(({self.rows}, {self.cols}), "{dt}")):
    B = T.alloc_buffer(({self.rows}, {self.cols}), "{dt}")
    for i, j in T.grid({self.rows}, {self.cols}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.{dt}(2)
    {nest}
        with T.block("C"):
            {binding}{"" if guard is None else chr(10) + "            T.where(" + guard + ")"}
            C[vi, vj] = B[vi, vj] + T.{dt}(1)
"""

    def program(self) -> IRModule:
        """The program."""
        from ..script import from_source

        return IRModule({"main": from_source(self.source())})

    def rewrite(self) -> "R.Rewrite":
        """The reverse_compute_at of the consumer."""
        return R.reverse_compute_at("C", self.loop)


def draw_guarded_consumer(ch: Chooser) -> GuardedConsumer:
    """A random :class:`GuardedConsumer`."""
    kind = ch.choice(GUARD_KINDS)
    factor = ch.integer(2, 4)
    rows, cols = ch.integer(1, 5), ch.integer(factor + 1 if kind == "high part" else 2, 9)
    if kind == "band":
        cols = rows * factor
    if kind == "data":
        bound = ch.integer(-2, 3)
    elif kind == "high part":
        # j_0 < bound cuts columns the domain has: bound * factor < cols
        bound = ch.integer(1, (cols - 1) // factor)
    else:
        bound = ch.integer(0, cols - 1)
    return GuardedConsumer(kind, ch.choice(GUARD_DTYPES), rows, cols, bound, factor, ch.choice(("i", "j")))


#: the dtypes :func:`draw_split_reduction` draws
SPLIT_REDUCTION_DTYPES = ("float32", "int32", "float64", "int16", "float16")


@attrs.frozen
class SplitReduction:
    """A sum over the ``cols`` columns of a ``rows x cols`` array of
    ``dtype``, taken in two stages as rfactor leaves it: ``B_rf`` sums each
    run of ``factor`` columns into one of ``parts`` partial sums, over a
    split ``k_0 * factor + k_1`` of ``outer`` times ``factor`` iterations
    guarded by ``k_0 * factor + k_1 < cols``, and ``B`` sums the partial
    sums. ``outer`` may pass ``parts`` (an over-split): the iterations past
    it write nothing. With ``op`` ``"max"`` both stages take a maximum.
    With ``second`` ``"copy"``, the second stage copies the partial sums
    out (``C = B_rf``) instead.

    :meth:`rewrite` moves ``B`` under ``B_rf``'s loop ``loop`` (``"i"``,
    ``"k_0"`` or ``"k_1"``) with reverse_compute_at. Under ``k_0``, each
    iteration writes one column of partial sums where the guard holds at
    ``k_1 = 0``, and the moved block runs under that condition; under
    ``k_1`` it runs where the guard holds, reading partial sums: the copy
    stores the whole one in the last such iteration, the sum would add
    each partial one (refused)."""

    dtype: str
    op: str
    rows: int
    cols: int
    factor: int
    outer: int
    loop: str
    second: str = "sum"

    @property
    def parts(self) -> int:
        """The number of partial sums a row: ``ceil(cols / factor)``."""
        return -(-self.cols // self.factor)

    def source(self) -> str:
        """The program's TVMScript."""
        dt, f = self.dtype, self.factor
        if self.op == "max":
            init = f"T.min_value(\"{dt}\")"
            step = "T.max({0}, {1})"
        else:
            init = f"T.{dt}(0)"
            step = "{0} + {1}"
        rf = "B_rf[vi, vk_0]"
        out = (f'C: T.Buffer(({self.rows}, {self.parts}), "{dt}")' if self.second == "copy"
               else f'B: T.Buffer(({self.rows},), "{dt}")')
        return f"""
@T.prim_func
def main(A: T.Buffer(({self.rows}, {self.cols}), "{dt}"), {out}):
    B_rf = T.alloc_buffer(({self.rows}, {self.parts}), "{dt}")
    for i, k_0, k_1 in T.grid({self.rows}, {self.outer}, {f}):
        with T.block("B_rf"):
            vi = T.axis.spatial({self.rows}, i)
            vk_0 = T.axis.spatial({self.parts}, k_0)
            vk_1 = T.axis.reduce({f}, k_1)
            T.where(k_0 * {f} + k_1 < {self.cols})
            with T.init():
                {rf} = {init}
            {rf} = {step.format(rf, f"A[vi, vk_0 * {f} + vk_1]")}
    for i, k in T.grid({self.rows}, {self.parts}):
        with T.block("B"):
{self._second_stage(init, step)}
"""

    def _second_stage(self, init: str, step: str) -> str:
        pad = " " * 12
        if self.second == "copy":
            return (f'{pad}vi, vk = T.axis.remap("SS", [i, k])\n'
                    f"{pad}C[vi, vk] = B_rf[vi, vk]")
        return (f'{pad}vi, vk = T.axis.remap("SR", [i, k])\n'
                f"{pad}with T.init():\n{pad}    B[vi] = {init}\n"
                f"{pad}B[vi] = {step.format('B[vi]', 'B_rf[vi, vk]')}")

    def program(self) -> IRModule:
        """The program."""
        from ..script import from_source

        return IRModule({"main": from_source(self.source())})

    def rewrite(self) -> "R.Rewrite":
        """The reverse_compute_at of the second stage."""
        return R.reverse_compute_at("B", self.loop)


def draw_split_reduction(ch: Chooser) -> SplitReduction:
    """A random :class:`SplitReduction`."""
    factor = ch.integer(2, 5)
    cols = ch.integer(factor + 1, 4 * factor)
    parts = -(-cols // factor)
    outer = parts + (ch.integer(1, 3) if ch.chance(50) else 0)
    return SplitReduction(ch.choice(SPLIT_REDUCTION_DTYPES), ch.choice(("sum", "max")), ch.integer(1, 4),
                          cols, factor, outer, ch.choice(("i", "k_0", "k_0", "k_1")),
                          "copy" if ch.chance(40) else "sum")


@attrs.frozen
class SliceAtStart:
    """A copy ``A_shared`` of ``A`` (``size`` elements of ``dtype``) and a
    slice of it from a run-time ``start``: ``B[v] = A_shared[v + start] *
    2`` over ``size - start`` elements, or with ``guarded``, over all
    ``size`` under ``v + start < size`` (0 past the end), as a padded slice
    is written. :meth:`rewrite` moves ``B`` under ``A_shared``'s loop.

    Unguarded, the instances the loop reaches are all those whose read is
    inside ``A_shared``, and the move applies. Guarded, the instances past
    the end read nothing and would never run under the loop: refused
    (TVM drops them)."""

    dtype: str
    size: int
    start: int
    guarded: bool

    def source(self) -> str:
        """The program's TVMScript."""
        dt, n = self.dtype, self.size
        extent = str(n) if self.guarded else f"{n} - start"
        read = f"A_shared[v + start] * T.{dt}(2)"
        value = f"T.if_then_else(v + start < {n}, {read}, T.{dt}(0))" if self.guarded else read
        return f"""
@T.prim_func
def main(A: T.Buffer(({n},), "{dt}"), b: T.handle, start: T.int32):
    B = T.match_buffer(b, ({extent},), "{dt}")
    A_shared = T.alloc_buffer(({n},), "{dt}", scope="shared")
    for i in range({n}):
        with T.block("A_shared"):
            v = T.axis.spatial({n}, i)
            A_shared[v] = A[v]
    for i in range({extent}):
        with T.block("B"):
            v = T.axis.spatial({extent}, i)
            B[v] = {value}
"""

    def program(self) -> IRModule:
        """The program."""
        from ..script import from_source

        return IRModule({"main": from_source(self.source())})

    def rewrite(self) -> "R.Rewrite":
        """The reverse_compute_at of the slice under the copy's loop."""
        return R.reverse_compute_at("B", "i")


def draw_slice_at_start(ch: Chooser) -> SliceAtStart:
    """A random :class:`SliceAtStart`."""
    size = ch.integer(1, 12)
    return SliceAtStart(ch.choice(GUARD_DTYPES), size, ch.integer(0, size - 1 if size > 1 else 0), ch.chance(30))


@attrs.frozen
class ReductionAfterReduction:
    """Two reductions over the ``cols`` columns of a ``rows x cols`` array
    of ``dtype``, as a softmax takes its maximum and then its sum: ``M[i]``
    reduces ``A[i, :]`` with ``first`` (``"max"`` or ``"sum"``), then
    ``S[i]`` reduces ``A[i, k] - M[i]`` with ``second``. :meth:`rewrite`
    moves ``S`` under ``M``'s loop ``loop`` (``"i"`` or ``"k"``).

    Under ``k``, M's reduction loop, S runs in every iteration over its
    whole reduction from its init, reading the partial ``M[i]``; the last
    iteration reads the whole one and leaves what the original left (TVM
    places it there too)."""

    dtype: str
    first: str
    second: str
    rows: int
    cols: int
    loop: str

    def source(self) -> str:
        """The program's TVMScript."""
        dt = self.dtype

        def reduce(op: str, acc: str, x: str) -> tuple[str, str]:
            if op == "max":
                return f'T.min_value("{dt}")', f"T.max({acc}, {x})"
            return f"T.{dt}(0)", f"{acc} + {x}"

        m_init, m_step = reduce(self.first, "M[vi]", "A[vi, vk]")
        s_init, s_step = reduce(self.second, "S[vi]", "(A[vi, vk] - M[vi])")
        return f"""
@T.prim_func
def main(A: T.Buffer(({self.rows}, {self.cols}), "{dt}"), S: T.Buffer(({self.rows},), "{dt}")):
    M = T.alloc_buffer(({self.rows},), "{dt}")
    for i, k in T.grid({self.rows}, {self.cols}):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = {m_init}
            M[vi] = {m_step}
    for i, k in T.grid({self.rows}, {self.cols}):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = {s_init}
            S[vi] = {s_step}
"""

    def program(self) -> IRModule:
        """The program."""
        from ..script import from_source

        return IRModule({"main": from_source(self.source())})

    def rewrite(self) -> "R.Rewrite":
        """The reverse_compute_at of the second reduction."""
        return R.reverse_compute_at("S", self.loop)


def draw_reduction_after_reduction(ch: Chooser) -> ReductionAfterReduction:
    """A random :class:`ReductionAfterReduction`."""
    return ReductionAfterReduction(ch.choice(SPLIT_REDUCTION_DTYPES), ch.choice(("max", "sum")),
                                   ch.choice(("max", "sum")), ch.integer(1, 4), ch.integer(1, 8),
                                   ch.choice(("i", "k", "k")))


#: primitive name -> drawer of one random application (or None: no site)
DRAWERS: dict[str, Callable[[Chooser, IRModule], "R.Rewrite | None"]] = {
    "compute_at": draw_compute_at,
    "reverse_compute_at": draw_reverse_compute_at,
    "compute_inline": draw_compute_inline,
    "reverse_compute_inline": draw_reverse_compute_inline,
}

#: the same table under a name of its own, for ``tirfun.testing``
compute_location_drawers = DRAWERS

__all__ = ["DRAWERS", "compute_location_drawers", "draw_compute_at", "draw_reverse_compute_at", "draw_compute_inline",
           "draw_reverse_compute_inline", "GuardedConsumer", "draw_guarded_consumer", "GUARD_KINDS", "GUARD_DTYPES",
           "SplitReduction", "draw_split_reduction", "SPLIT_REDUCTION_DTYPES", "SliceAtStart",
           "draw_slice_at_start", "ReductionAfterReduction", "draw_reduction_after_reduction"]
