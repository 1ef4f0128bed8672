"""What a block's inner stages write whole, for each instance of the block.

A block made by ``blockize`` (or written by hand as a scope) holds its work
in stages: loop nests around inner blocks, in its init and in its body. Its
declared write region is then a box of many elements per instance, and an
inner block may read an element of the buffer that an earlier stage of the
same instance wrote (a reduction's updates read what the init stage wrote).
A cache_write of such a block needs no copy of the buffer into the cache
first when the stages write every element they and the copy back read:
TVM's cache_write adds none. This module proves that, or gives up (and the
caller keeps the copy):

* :func:`stage_of` reads one statement as a stage: loops of constant
  extents around one block realize, no predicate;
* :func:`whole_write` is the box a stage writes whole: its block stores the
  element it declares, unconditionally, at indices that cover a dense box
  over the stage's loops;
* :func:`dense_over` is that density test, for any indices and loops.
"""

from __future__ import annotations

from ..analysis.arith import bound_region, detect_iter_map
from ..analysis.arith.iter_map import is_bijective
from ..analysis.arith.int_set import Interval
from ..analysis.arith.linear import affine_form, simplify_affine
from ..analysis.arith.terms import int_value
from ..analysis.arith.simplify import is_true
from ..analysis.traversal import iter_children
from ..nodes import (
    And, Block, BlockRealize, BufferLoad, BufferRegion, BufferStore, Call, Evaluate, For, IntImm, Let, LetStmt, Or,
    PrimExpr, Range, Select, SeqStmt, Stmt, Var,
)
from .exprs import substitute_expr, var_names
from .redirect import same_buffer


def stage_of(stmt: Stmt) -> tuple[list[For], BlockRealize] | None:
    """``(loops, realize)`` where ``stmt`` is loops of constant extents of
    one or more (each the only statement of the one above) around one block
    realize without a predicate, every iteration of which runs; None for
    anything else. A loop bound to threads makes no stage: a later stage's
    thread may read what another thread wrote, which a cache local to each
    thread would not hold."""
    loops = []
    node = stmt
    while type(node) is For:
        if not (type(node.min) is IntImm and type(node.extent) is IntImm and node.extent.value >= 1) \
                or node.thread_binding is not None:
            return None
        loops.append(node)
        node = node.body
    if type(node) is not BlockRealize:
        return None
    if not is_true(node.predicate):
        return None
    return loops, node


def whole_write(loops: list[For], realize: BlockRealize, buf) -> list[Interval] | None:
    """The box of ``buf`` (one Interval a dimension, in the variables around
    the stage) that the stage writes whole: its block declares one element
    of ``buf`` per instance and stores it unconditionally at the top of its
    body or init, at indices that cover a dense box over the stage's loops
    (:func:`dense_over`). None where that is not shown."""
    block = realize.block
    region = next((r for r in block.writes if same_buffer(r.buffer, buf)), None)
    if region is None or any(not (type(r.extent) is IntImm and r.extent.value == 1) for r in region.region):
        return None
    if not stores_unconditionally(block, buf, [r.min for r in region.region]):
        return None
    indices = written_indices(region, realize)
    if dense_over(indices, {loop.loop_var.name: loop for loop in loops}) is not None:
        return None
    dom = {loop.loop_var: Range(loop.min, loop.extent) for loop in loops}
    box = bound_region(BufferRegion(buf, [Range(i, IntImm(i.dtype, 1)) for i in indices]), dom)
    return box if all(iv.bounded for iv in box) else None


def stores_unconditionally(block: Block, buf, mins: list) -> bool:
    """Whether a statement at the top of the block's init or body (itself,
    or an item of its sequence) stores ``buf[mins]`` with no mask."""
    for stmt in ([block.init] if block.init is not None else []) + [block.body]:
        for x in (stmt.seq if type(stmt) is SeqStmt else (stmt,)):
            if type(x) is BufferStore and x.predicate is None and same_buffer(x.buffer, buf) \
                    and list(x.indices) == mins:
                return True
    return False


def loads_unconditionally(block: Block, buf, indices: list) -> bool:
    """Whether every run of the block's body loads ``buf[indices]`` (with
    no mask): in a statement at the top of the body (a store without a mask,
    an evaluate, a let's value or, in turn, its body), outside the branches
    of a condition (``T.if_then_else``, ``T.Select``, an ``if``) and the
    second operand of ``and`` / ``or``, which a run may skip."""
    stmts = list(block.body.seq if type(block.body) is SeqStmt else (block.body,))
    while stmts:
        x = stmts.pop()
        if type(x) is LetStmt:
            if _load_in(x.value, buf, indices):
                return True
            stmts.extend(x.body.seq if type(x.body) is SeqStmt else (x.body,))
        elif type(x) is BufferStore and x.predicate is None:
            if any(_load_in(e, buf, indices) for e in (x.value, *x.indices)):
                return True
        elif type(x) is Evaluate and _load_in(x.value, buf, indices):
            return True
    return False


def _load_in(expr: PrimExpr, buf, indices: list) -> bool:
    """Whether evaluating ``expr`` always loads ``buf[indices]`` (see
    :func:`loads_unconditionally`)."""
    stack = [expr]
    while stack:
        e = stack.pop()
        t = type(e)
        if t is BufferLoad:
            if e.predicate is None and same_buffer(e.buffer, buf) and list(e.indices) == indices:
                return True
            stack.extend(e.indices)
        elif t is Call and e.op == "tir.if_then_else":
            stack.append(e.args[0])
        elif t is Select:
            stack.append(e.condition)
        elif t is And or t is Or:
            stack.append(e.a)
        elif t is Let:
            stack.extend((e.value, e.body))
        else:
            stack.extend(c for c in iter_children(e) if isinstance(c, PrimExpr))
    return False


def written_indices(region: BufferRegion, realize: BlockRealize) -> list[PrimExpr]:
    """The first element of the block's ``region``, in the variables around
    the realize (its bindings substituted)."""
    bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    return [simplify_affine(substitute_expr(r.min, bindings)) for r in region.region]


def dense_over(indices: list[PrimExpr], loops: dict, buffer_name: str | None = None, *,
               overwrites: bool = False) -> str | None:
    """Why ``indices`` (one a dimension, of the buffer ``buffer_name``) may
    not cover a dense box as the ``loops`` (loop variable name -> For) run,
    or None: together they are a bijective iterator map of the loops they
    use, so each iteration writes one element of the box and every element
    is written. A loop's own variable alone is that loop, tiled whole; a
    loop may also be sliced across several indices (``f // 127`` and
    ``f % 127``, what ``fuse`` leaves).

    With ``overwrites`` (a caller that needs every element written, not
    each once) an iterator map that leaves part of a loop out does too:
    ``f // 4`` over ``range(128)`` writes each of ``[0, 32)`` four times (a
    fused loop whose inner part the written index does not use)."""
    names = set(loops)
    mapped, used_all, seen, shared = [], set(), set(), False
    for index in indices:
        used = var_names(index) & names
        if not used:
            continue
        shared = shared or bool(used & seen)
        seen |= used
        mapped.append(index)
        used_all |= used
    if not mapped:
        return None
    if not shared and all(type(i) is Var and i.dtype.is_index for i in mapped):
        return None  # distinct loop variables: each its loop, whole
    if is_bijective(mapped, {n: loops[n] for n in used_all}):
        return None
    folded = _fold_fused(mapped, {n: loops[n] for n in used_all})
    if folded is not None and detect_iter_map(*folded, "bijective") is not None:
        return None
    # the slices of an iterator map are digits that take every value of
    # their extent independently of each other: all of the box is reached
    if overwrites and (_reaches_every_digit(mapped, {n: loops[n] for n in used_all})
                       or (folded is not None and _reaches_every_digit(*folded))):
        return None
    if overwrites and not shared and all(_overlaps_densely(i, loops) for i in mapped):
        return None
    bad = mapped[0] if len(mapped) == 1 else None
    of = f" of {buffer_name}" if buffer_name else ""
    if bad is not None:
        return f"its write index {bad.script()} does not cover a dense range{of} over the loops"
    return (f"its write indices {', '.join(i.script() for i in mapped)} do not cover a dense box{of} "
            "over the loops")


def _overlaps_densely(index: PrimExpr, loops: dict) -> bool:
    """Whether ``index``, ``sum(k * v) + c`` over loops from 0 of constant
    extents with constant positive weights, takes every value from ``c``
    to its largest as the loops run, some more than once: weighted by
    ascending ``k``, the first is 1 and each next weight is at most one past
    the largest the smaller terms reach (``v0 * 2 + v1`` over 6 x 4 reaches
    ``[0, 13]``, rows written twice where tiles overlap)."""
    found = weighted_loop_terms(index, loops)
    if found is None or found[1]:
        return False
    return dense_reach([(k, extent) for _, k, extent in found[0]]) is not None


def weighted_loop_terms(index: PrimExpr, loops: dict) -> tuple[list, bool] | None:
    """``index`` read as ``sum(k * v) + rest``: the ``(v, k, extent)`` of each
    term on a loop of ``loops`` (loop variable name -> For), and whether a
    ``rest`` of other terms (a kept loop, a size) remains besides the
    constant; None where a term on one of the loops is not its plain variable
    with a positive constant weight, or that loop does not run from 0 over a
    constant extent of one or more."""
    form = affine_form(index)
    if form is None:
        return None
    terms, rest = [], False
    for term, k in form.terms:
        if not var_names(term) & loops.keys():
            rest = True
            continue
        loop = loops[term.name] if type(term) is Var else None
        if loop is None or k < 1:
            return None
        lo, extent = int_value(loop.min), int_value(loop.extent)
        if lo != 0 or extent is None or extent < 1:
            return None
        terms.append((term, k, extent))
    return terms, rest


def dense_reach(terms: list[tuple[int, int]]) -> int | None:
    """The largest value of ``sum(k * v)``, ``v`` in ``range(extent)`` for
    each ``(k, extent)`` of ``terms`` (positive weights), where the sum
    takes every value from 0 to it; None where it skips one. Taken by
    ascending weight, the smaller terms reach every value up to their
    largest, so a next weight of at most one past it leaves no gap."""
    reach = 0  # the smaller terms take every value in [0, reach]
    for k, extent in sorted(terms):
        if k > reach + 1 and extent > 1:
            return None
        reach += k * (extent - 1)
    return reach


def _reaches_every_digit(indices: list[PrimExpr], loops: dict) -> bool:
    """Whether ``indices`` are an iterator map of ``loops`` whose slices
    take every value of their extents together: the slices of one loop do
    not overlap (the map says so), and its largest combination,
    ``sum((extent - 1) * lower)``, lies inside the loop, so that every
    combination is one of its values (``(f // 4) % 64`` over ``range(128)``
    reaches 32 values, not 64). Constant extents only."""
    sums = detect_iter_map(indices, loops, "affine")
    if sums is None:
        return False
    reach: dict = {}
    for total in sums:
        for arg in total.args:
            if not isinstance(arg.lower_factor, int) or not isinstance(arg.extent, int):
                return False
            reach[arg.source] = reach.get(arg.source, 0) + (arg.extent - 1) * arg.lower_factor
    for name, top in reach.items():
        loop = loops[name]
        if type(loop.extent) is not IntImm or type(loop.min) is not IntImm or top > loop.extent.value - 1:
            return False
    return True


def cuts_a_prefix(indices: list[PrimExpr], loops: dict, conjuncts: list, shape: list) -> bool:
    """Whether a writer whose written ``indices`` (one a dimension, in the
    ``loops``: name -> For) run under the predicate ``conjuncts`` writes
    every element of its span inside the buffer (of ``shape``): the region
    a copy back takes is what the indices span over the loops, clamped to
    the buffer, predicate or not.

    Each conjunct must be ``f < n`` with ``f`` enumerating the instances
    in order, so that those that run are a prefix of them (what a fuse
    split by a factor that does not divide it leaves: ``i_0 * 32 + i_1 <
    16129``). Shown two ways:

    * ``f`` is one loop, or a sum that enumerates the loops it uses from 0
      and that the indices name (``(i_0 * 32 + i_1) // 127``): read as one
      loop of ``n`` iterations, the indices must cover a dense box
      (:func:`dense_over`) holding the span;
    * the indices are a bijective map of the loops onto a box, and ``f`` is
      the box's row-major position plus a constant (``i_0 * 4 + i_1 < 6``
      over ``vi = i_0 * 2 + i_1 // 2``, ``vj = i_1 % 2``): the prefix must
      reach the span's last element.

    Loops of one iteration take their value first. Constant loop bounds
    and buffer dimensions only; anything else is not shown."""
    from ..analysis.arith import can_prove
    from ..analysis.arith.const_bound import const_interval

    if any(type(d) is not IntImm for d in shape):
        return False
    for loop in loops.values():
        if type(loop.min) is not IntImm or type(loop.extent) is not IntImm or loop.extent.value < 1:
            return False
    units = {loop.loop_var: loop.min for loop in loops.values() if loop.extent.value == 1}
    if units:
        indices = [simplify_affine(substitute_expr(i, units)) for i in indices]
        conjuncts = [substitute_expr(c, units) for c in conjuncts]
        loops = {n: loop for n, loop in loops.items() if loop.loop_var not in units}
    if any(var_names(i) - set(loops) for i in indices):
        return False  # an outer loop's or a size's variable: a span per value of it
    if not any(var_names(i) for i in indices):
        # one element, written by every instance that runs: the first,
        # where every loop starts, if it runs
        start = {loop.loop_var: loop.min for loop in loops.values()}
        return all(can_prove(substitute_expr(c, start)) for c in conjuncts)
    env = {loop.loop_var: (loop.min.value, loop.min.value + loop.extent.value - 1) for loop in loops.values()}
    span = []
    for index, dim in zip(indices, shape):
        lo, hi = const_interval(index, env)
        lo, hi = max(lo, 0), min(hi, dim.value - 1)
        if hi < lo:
            return True  # the span misses the buffer: nothing is copied back
        span.append((lo, hi))
    return (_folds_to_a_loop(indices, loops, conjuncts, span)
            or _row_major_prefix(indices, loops, env, conjuncts, span))


def _bounds(c) -> tuple[PrimExpr, int] | None:
    """``(f, n)`` for a conjunct ``f < n`` of an integer ``f`` and a constant ``n``."""
    from ..nodes import LT

    if type(c) is LT and type(c.b) is IntImm and c.a.dtype.is_int:
        return c.a, c.b.value
    return None


def _folds_to_a_loop(indices: list, loops: dict, conjuncts: list, span: list) -> bool:
    """:func:`cuts_a_prefix`'s first way: each conjunct's sum read as one
    loop of the instances that run."""
    from ..analysis.arith.const_bound import const_interval

    for k, c in enumerate(conjuncts):
        got = _bounds(c)
        if got is None:
            return False
        f = simplify_affine(got[0])
        if not var_names(f) or var_names(f) - set(loops):
            return False
        folded = _fold_sum(indices, loops, f, f"pred{k}", limit=got[1])
        if folded is None:
            return False
        indices, loops = folded
    if dense_over(indices, loops) is not None:
        return False
    env = {loop.loop_var: (loop.min.value, loop.min.value + loop.extent.value - 1) for loop in loops.values()}
    for index, (lo, hi) in zip(indices, span):
        got = const_interval(index, env)
        if not (got[0] <= lo and hi <= got[1]):
            return False
    return True


def _row_major_prefix(indices: list, loops: dict, env: dict, conjuncts: list, span: list) -> bool:
    """:func:`cuts_a_prefix`'s second way: each conjunct bounds the
    written element's row-major position in the box the indices cover."""
    from ..analysis.arith.const_bound import const_interval
    from ..analysis.arith.simplify import simplify_expr

    if dense_over(indices, loops) is not None:
        return False
    boxes = [const_interval(i, env) for i in indices]
    strides, stride = [], 1
    for lo, hi in reversed(boxes):
        strides.append(stride)
        stride *= hi - lo + 1
    strides.reverse()
    position = None
    for index, (lo, _), k in zip(indices, boxes, strides):
        term = (index - IntImm(index.dtype, lo)) * IntImm(index.dtype, k)
        position = term if position is None else position + term
    last = sum((hi - lo0) * k for (_, hi), (lo0, _), k in zip(span, boxes, strides))
    for c in conjuncts:
        got = _bounds(c)
        if got is None or got[0].dtype != position.dtype:
            return False
        f, n = got
        offset = simplify_expr(f - position, env)
        if type(offset) is not IntImm:
            # a sum split in both (``(i_0 * 3 + i_1) // 2`` and its modulo,
            # written ``(i_0 + i_1) % 2``) as one variable, for the
            # simplifier to put ``(x // 2) * 2 + x % 2`` back together
            a, b, scope = f, position, dict(env)
            for k, g in enumerate(_fused_sums([f, position])):
                if var_names(g) - set(loops):
                    continue
                var = Var(f"fused{k}", g.dtype)
                scope[var] = const_interval(g, env)
                a, b = _replace(a, g, var), _replace(b, g, var)
            offset = simplify_expr(a - b, scope)
        if type(offset) is not IntImm or not last < n - offset.value:
            return False
    return True


def _fused_sums(exprs: list[PrimExpr]) -> list[PrimExpr]:
    """The sums in ``exprs`` that a division or modulo splits, and the
    expressions themselves where they are sums, in the normal form of
    :func:`simplify_affine`."""
    out = _divided_sums(exprs)
    for e in exprs:
        f = simplify_affine(e)
        if type(f) is not Var and type(f) is not IntImm and f not in out:
            out.append(f)
    return out


def _divided_sums(exprs: list[PrimExpr]) -> list[PrimExpr]:
    """The sums in ``exprs`` that a division or modulo splits, in the
    normal form of :func:`simplify_affine`, each once."""
    from ..analysis.traversal import walk
    from ..nodes import FloorDiv, FloorMod

    out = []
    for e in exprs:
        for n in walk(e):
            if type(n) in (FloorDiv, FloorMod) and type(n.a) is not Var and n.a.dtype.is_int:
                f = simplify_affine(n.a)
                if f not in out:
                    out.append(f)
    return out


def _congruent(a, b, c: int) -> bool:
    """Whether the linear forms ``a`` and ``b`` agree modulo ``c``: the
    same terms, each coefficient and the constant congruent."""
    if a is None or b is None or (a.const - b.const) % c:
        return False
    mine = {t: k % c for t, k in a.terms if k % c}
    theirs = {t: k % c for t, k in b.terms if k % c}
    return mine == theirs


def _fold_fused(indices: list[PrimExpr], loops: dict) -> tuple[list, dict] | None:
    """``indices`` with each sum that a division or modulo splits again
    (``(i_0 * 32 + i_1) // 127``, a fuse split by a factor) read as one
    loop over its values, where the sum enumerates the loops it uses one
    by one from 0; those loops leave ``loops`` for the new one. None where
    no sum folds, or a folded loop is still named elsewhere (the iterator
    maps then see it twice)."""
    changed = False
    for k, f in enumerate(_divided_sums(indices)):
        if len(var_names(f) & set(loops)) < 2:
            continue
        folded = _fold_sum(indices, loops, f, f"fused{k}")
        if folded is not None:
            (indices, loops), changed = folded, True
    return (indices, loops) if changed else None


def _fold_sum(indices: list[PrimExpr], loops: dict, f: PrimExpr, name: str,
              limit: int | None = None) -> tuple[list, dict] | None:
    """``indices`` and ``loops`` with the sum ``f`` read as one loop over its
    values (the first ``limit`` of them, where given), named after
    ``name``: ``f`` must enumerate the loops it uses one by one from 0 (a
    bijective iterator map of them from base 0), and those loops leave
    ``loops`` for the new one. None where ``f`` is not such a sum, it
    leaves no value, or an index still names one of its loops after the
    replacement (the iterator maps would then see it twice)."""
    from ..nodes import Evaluate, ForKind

    used = var_names(f) & set(loops)
    if any(type(loops[u].extent) is not IntImm or type(loops[u].min) is not IntImm or loops[u].min.value != 0
           for u in used):
        return None
    found = detect_iter_map([f], {u: loops[u] for u in used}, "bijective")
    if found is None or not (type(found[0].base) is IntImm and found[0].base.value == 0):
        return None
    count = 1
    for u in used:
        count *= loops[u].extent.value
    if limit is not None:
        count = min(limit, count)
    if count < 1:
        return None
    while name in loops:
        name += "_"
    var = Var(name, f.dtype)
    folded = [_replace(i, f, var) for i in indices]
    if any(var_names(i) & used for i in folded):
        return None
    kept = {n: loop for n, loop in loops.items() if n not in used}
    kept[name] = For(var, IntImm(f.dtype, 0), IntImm(f.dtype, count), ForKind.SERIAL, Evaluate(IntImm("int32", 0)))
    return folded, kept


def _replace(e: PrimExpr, old: PrimExpr, new: Var) -> PrimExpr:
    """``e`` with every subexpression equal to ``old`` (``old`` in the
    normal form :func:`simplify_affine` writes; so is each candidate
    compared) replaced by ``new``."""
    from ..analysis.arith.linear import Affine
    from ..analysis.traversal import transform
    from ..nodes import FloorMod

    form = Affine.of(old)

    def pre(n):
        if not isinstance(n, PrimExpr) or n.dtype != old.dtype or isinstance(n, (Var, IntImm)):
            return None
        if n == old or simplify_affine(n) == old:
            return new
        if type(n) is FloorMod and type(n.b) is IntImm and n.b.value > 0 and form is not None \
                and _congruent(Affine.of(n.a), form, n.b.value):
            # the simplifier reduces a modulo's coefficients by its divisor
            # (``(i_0 * 3 + i_1) % 2`` is written ``(i_0 + i_1) % 2``)
            return FloorMod(new, n.b)
        return None

    if e == old:
        return new
    if type(old) is Var:
        return substitute_expr(e, {old: new})
    return transform(e, lambda n: n, pre)


__all__ = ["cuts_a_prefix", "dense_over", "stage_of", "stores_unconditionally", "whole_write", "written_indices"]
