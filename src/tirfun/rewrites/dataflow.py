"""Block-level dataflow inside one block scope: the checks the block
primitives share.

A *scope* is the nearest block above a block (TVM's scope root); its
*child blocks* are the blocks under it that are not inside another block,
in program order. On those this module answers, as TVM's ``BlockScope``
and ``analysis.cc`` do:

* who writes and reads what: :func:`reads_of`, :func:`writes_of`,
  :func:`producers`, :func:`consumers` (TVM's read-after-write and
  write-after-write edges, in program order);
* what kind of block it is: :func:`complete_block_code` and
  :func:`reduction_block_code` (0, or the number of the first condition of
  TVM's definition that fails), :func:`is_dominant`,
  :func:`is_output_block`;
* whether the producers of what a consumer reads cover it, at the lowest
  common loop of producer and consumer (TVM's region cover, the condition
  of a stage pipeline): :func:`region_cover_violation`, built on
  :func:`produced_region` (a lower bound: only what surely gets written) and
  :func:`consumed_region` (an upper bound), compared with
  :func:`~tirfun.analysis.arith.region_covers`;
* which blocks lie under a loop (:func:`is_under`, :func:`loops_between`,
  :func:`common_ancestor`), where a block can go among a loop's statements
  (:func:`insertion_range`), how a leaf block is taken out of its scope
  (:func:`leaf_removal_path`, :func:`delete_at`), and the order the program
  first runs statements in (:func:`program_key`);
* whether moving a block past others changes what any of them reads or
  writes (:func:`conflicting_buffer`), the dependence TVM's stage pipeline
  assumes away (a write after a read).

A primitive that moves or rewrites blocks typically locates its block
(:func:`scope_of`, :func:`scope_children`), checks
:func:`complete_block_code` / :func:`reduction_block_code`, asks
:func:`region_cover_violation` for each consumer it relies on, and refuses
with its own ScheduleError subclass what these report.

Everything here reads; nothing builds. Paths are paths from the function
(see :mod:`tirfun.analysis.traversal`); a block is passed with the path of
its BlockRealize.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
from pyrsistent import PVector

from ..analysis.arith import can_prove, index_at_most, region_covers
from ..analysis.arith.int_set import Interval, eval_interval, intersect, substitute
from ..analysis.arith.iter_map import detect_iter_map, predicate_fused, predicate_fused_parts, simplify_index
from ..analysis.arith.linear import affine_form, fold_add, fold_max, fold_min, fold_mul, fold_sub, simplify_affine
from ..analysis.arith.region import bound_region
from ..analysis.arith.simplify import is_true as _is_true
from ..analysis.arith.simplify import conjuncts, simplify_expr
from ..analysis.arith.terms import as_exprs, int_value
from ..analysis.traversal import (
    STMT_FIELDS, Path, get_at, nodes_along, replace_at, stmt_nodes, transform, walk,
)
from ..nodes import (
    GE, GT, LE, LT, Add, And, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Evaluate, FloorDiv, FloorMod,
    For, ForKind, IntImm, IterVarType, Mul, PrimExpr, Range, SeqStmt, Stmt, Sub, Var,
)
from .base import Site
from .checks import all_block_realizes, child_blocks, has_affine_binding, scope_path
from .stage_writes import dense_reach, weighted_loop_terms
from .exprs import cast, find_nodes, uses_any, var_names
from ..analysis.mentions import mentions_any

_BODY = ("body", None)

Child = tuple  # (realize path, BlockRealize)


# -- scopes --------------------------------------------------------------------------

def scope_of(site: Site, realize_path: Path) -> Path | None:
    """The path of the scope root of the block realized at ``realize_path``
    (None: the function has no root block and is its own scope)."""
    return scope_path(site, realize_path)


def scope_children(site: Site, scope: Path | None, touching=None) -> list[Child]:
    """The child blocks of a scope, ``(realize path, BlockRealize)`` in
    program order; with ``touching`` (buffers), only those that may read or
    write one of them: a block that uses none of them can be no producer,
    consumer or other writer of a block that uses only them. Found from the
    name index, whatever the number of blocks in the scope."""
    if touching is not None and scope is not None and not site.index.clashes:
        return _indexed_blocks(site, scope, touching, nested=False)
    if scope is not None:
        children = list(child_blocks(site.at(scope), scope))
    else:
        body = site.func.body
        children = [((_BODY,), body)] if isinstance(body, BlockRealize) else list(child_blocks(body, (_BODY,)))
    if touching is None:
        return children
    return [c for c in children if mentions_any(c[1], touching)]


def scope_allocations(site: Site, scope: Path | None) -> set:
    """The buffers the scope root allocates (none without a root block)."""
    return set() if scope is None else set(site.at(scope).alloc_buffers)


def blocks_in_order(site: Site, scope: Path | None, touching=None) -> list[Child]:
    """Every block under the scope, nested ones too, in program order; with
    ``touching`` (buffers), only those that may read or write one of them
    (the others cannot depend on a block that uses only those), found from
    the name index without looking at the other blocks."""
    if touching is not None and scope is not None and not site.index.clashes:
        return _indexed_blocks(site, scope, touching, nested=True)
    if scope is None:
        return list(all_block_realizes(site.func.body, (_BODY,), touching=touching))
    block: Block = site.at(scope)
    return list(all_block_realizes(block.body, scope + (_BODY,), touching=touching))


def indexed_scope_blocks(site: Site, scope: Path | None, touching) -> tuple[list[Child], list[tuple]] | None:
    """``scope_children(site, scope, touching)`` and the blocks
    :func:`blocks_in_order` gives for the same buffers, nested ones too,
    each as ``(program_key, realize path, BlockRealize)``, from one look at
    the name index; None where the index cannot tell (no scope, or
    clashing names), and the caller asks those two functions. A primitive
    that needs the child blocks and then every block that uses the same
    buffers finds them once, with the keys that order them."""
    if scope is None or site.index.clashes:
        return None
    keyed = _indexed_keyed(site, scope, touching, nested=True)
    # the child blocks are those with no block between them and the scope
    k = len(scope) + 1
    children = [(rpath, realize) for _, rpath, realize in keyed
                if not any(step[0] == "block" for step in rpath[k:])]
    return children, keyed


def _indexed_blocks(site: Site, scope: Path, touching, *, nested: bool) -> list[Child]:
    """The blocks under the body of the block at ``scope`` (not inside a
    reduction ``init``; with ``nested`` False, not inside another block)
    whose BlockRealize mentions one of the buffers ``touching``, in program
    order: the name index lists the candidates, so the cost follows the
    number of blocks that use the buffers, not the size of the scope."""
    return [(rpath, realize) for _, rpath, realize in _indexed_keyed(site, scope, touching, nested=nested)]


def _indexed_keyed(site: Site, scope: Path, touching, *, nested: bool) -> list[tuple]:
    """:func:`_indexed_blocks` with each block's program key:
    ``(program_key, realize path, BlockRealize)``."""
    touching = list(touching)
    names = []
    for buf in touching:
        names.append(buf.name)
        if buf.data is not None:
            names.append(buf.data.name)
    body = scope + (_BODY,)
    k = len(body)
    located = site.index.blocks
    found = []
    for name in site.index.blocks_mentioning(names):
        path = located.get(name)
        if path is None:
            continue
        rpath = path[:-1]
        if rpath[:k] != body:
            continue
        rest = rpath[k:]
        if any(step[0] == "init" or (not nested and step[0] == "block") for step in rest):
            continue
        key, realize = _keyed_at(site.func, rpath)
        if mentions_any(realize, touching):
            found.append((key, rpath, realize))
    found.sort(key=lambda item: item[0])
    return found


# -- accesses and dependences ----------------------------------------------------------

def reads_of(block: Block) -> set[Buffer]:
    """The buffers a block declares it reads."""
    return {r.buffer for r in block.reads}


def writes_of(block: Block) -> set[Buffer]:
    """The buffers a block declares it writes."""
    return {w.buffer for w in block.writes}


def updated_by(block: Block) -> set[Buffer]:
    """The buffers ``block`` updates from what they hold: those it writes
    (as it declares, or by a store in its body) and also loads anywhere in
    its body, whatever regions it states (TVM accepts stated regions that
    leave such a read out); with an init, every buffer it writes."""
    written = writes_of(block) | {s.buffer for s in stmt_nodes(block) if type(s) is BufferStore}
    if block.init is not None:
        return written
    return written & {n.buffer for n in find_nodes(block, (BufferLoad,))}


def _depends(src: Block, dst: Block) -> bool:
    """TVM's edge ``src -> dst`` (src before dst): dst reads or writes what src writes."""
    written = writes_of(src)
    return bool(written & (reads_of(dst) | writes_of(dst)))


def producers(children: Sequence[Child], index: int) -> list[Child]:
    """The child blocks before ``children[index]`` that write what it reads
    or writes (TVM's producers: read-after-write and write-after-write)."""
    block = children[index][1].block
    return [c for c in children[:index] if _depends(c[1].block, block)]


def consumers(children: Sequence[Child], index: int) -> list[Child]:
    """The child blocks after ``children[index]`` that read or write what it writes."""
    block = children[index][1].block
    return [c for c in children[index + 1:] if _depends(block, c[1].block)]


def writers(children: Iterable[Child], buffer: Buffer) -> list[Child]:
    """The child blocks that write ``buffer``."""
    return [c for c in children if buffer in writes_of(c[1].block)]


def is_dominant(children: Sequence[Child], block: Block) -> bool:
    """Whether the block is the only writer, in its scope, of every buffer it writes."""
    for buf in writes_of(block):
        if any(c[1].block is not block and buf in writes_of(c[1].block) for c in children):
            return False
    return True


def is_output_block(site: Site, scope: Path | None, block: Block) -> bool:
    """Whether the block writes a buffer its scope root does not allocate."""
    allocated = scope_allocations(site, scope)
    return any(w.buffer not in allocated for w in block.writes)


COMPLETE_BLOCK_DEFINITION = (
    "a complete block has (1) only data-parallel iteration variables, (2) is the only writer of "
    "its outputs in its scope, (3) reads no buffer it writes")

REDUCTION_BLOCK_DEFINITION = (
    "a reduction block has (1) an init statement, (2) an affine binding, (3) only data-parallel "
    "and reduction iteration variables, (4) is the only writer of its outputs in its scope, "
    "(5) no reduction variable in the indices of its outputs")


def complete_block_code(children: Sequence[Child], block: Block) -> int:
    """0 when the block is a complete block of its scope, else the number of
    the first condition of :data:`COMPLETE_BLOCK_DEFINITION` it fails."""
    if any(iv.iter_type is not IterVarType.DataPar for iv in block.iter_vars):
        return 1
    if not is_dominant(children, block):
        return 2
    if reads_of(block) & writes_of(block):
        return 3
    return 0


def reduction_block_code(site: Site, children: Sequence[Child], realize_path: Path,
                         realize: BlockRealize) -> int:
    """0 when the block is a reduction block of its scope, else the number
    of the first condition of :data:`REDUCTION_BLOCK_DEFINITION` it fails."""
    block = realize.block
    if block.init is None:
        return 1
    if not has_affine_binding(site, realize_path + (("block", None),), realize):
        return 2
    if any(iv.iter_type not in (IterVarType.DataPar, IterVarType.CommReduce) for iv in block.iter_vars):
        return 3
    if not is_dominant(children, block):
        return 4
    reduce_names = {iv.var.name for iv in block.iter_vars if iv.iter_type is IterVarType.CommReduce}
    for w in block.writes:
        for rng in w.region:
            if uses_any(rng.min, reduce_names) is not None or uses_any(rng.extent, reduce_names) is not None:
                return 5
    return 0


# -- loops and regions -------------------------------------------------------------------

def is_under(path: Path, top: Path) -> bool:
    """Whether ``path`` lies strictly inside the node at ``top``."""
    return len(path) > len(top) and path[:len(top)] == top


def common_ancestor(site: Site, a: Path, b: Path) -> Path:
    """The path of the lowest loop or block above both paths (``()`` when
    only the function is)."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    p = a[:k]
    nodes = nodes_along(site.func, p)  # nodes[j] is the node at p[:j]: one walk down
    while k and not isinstance(nodes[k], (For, Block)):
        k -= 1
    return p[:k]


def loops_between(site: Site, realize_path: Path, top: Path) -> list[For]:
    """The loops above the block realized at ``realize_path`` and strictly
    below the node at ``top``, outermost first."""
    # the nodes along the path strictly below ``top`` (none where the path
    # does not pass through it), read in one walk down without their paths
    k = len(top)
    if realize_path[:k] != top:
        return []
    return [node for node in nodes_along(site.func, realize_path)[k + 1:-1] if isinstance(node, For)]


def loop_domains(site: Site, path: Path, *, inclusive: bool = True) -> dict:
    """Var -> Range of every loop above ``path`` (and the loop at ``path``
    itself when ``inclusive``), outermost first: the domains to prove under."""
    out = {}
    nodes = nodes_along(site.func, path)
    for node in nodes[:-1]:
        if isinstance(node, For):
            out[node.loop_var] = Range(node.min, node.extent)
    node = nodes[-1]
    if inclusive and isinstance(node, For):
        out[node.loop_var] = Range(node.min, node.extent)
    return out


def bindings(realize: BlockRealize) -> dict:
    """Iteration variable -> bound value."""
    return {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}


def consumed_region(site: Site, realize_path: Path, realize: BlockRealize, region: BufferRegion,
                    top: Path, *, within_domains: bool = True) -> list[Interval]:
    """An upper bound of what the block touches of ``region`` while the loops
    below ``top`` run (ends None where unbounded).

    Each iteration variable takes the values of its binding over those
    loops, within its domain (a block never runs outside it: a split that
    does not divide guards the extra iterations with a predicate), and the
    declared region is evaluated over those values. Without
    ``within_domains`` the bindings are relaxed alone, as TVM's bound
    inference for compute_at does (its caller clips to the domain).
    """
    if not within_domains:
        dom = {l.loop_var: Range(l.min, l.extent) for l in loops_between(site, realize_path, top)}
        return bound_region(region, dom, bindings(realize))
    between = loops_between(site, realize_path, top)
    values = realize.iter_values
    if between and not _is_true(realize.predicate):
        # a sum of the loops the predicate bounds (the guard of a split
        # that does not divide, hh_1_0 * 5 + hh_1_1 < 8) runs only to that
        # bound, as TVM's iterator maps read it: one loop of 8 iterations
        fused = predicate_fused(values, {l.loop_var.name: l for l in between}, realize.predicate)
        if fused is not None:
            values, named = fused
            between = list(named.values())
    loops = {l.loop_var: Interval.from_range(Range(l.min, l.extent)) for l in between}
    doms = {}
    for iv, value in zip(realize.block.iter_vars, values):
        got = eval_interval(value, loops) if loops else Interval.point(value)
        doms[iv.var] = intersect(got, Interval.from_range(iv.dom))
    out = []
    for rng in region.region:
        lo = eval_interval(rng.min, doms).lo
        hi = eval_interval(fold_sub(fold_add(rng.min, rng.extent), IntImm(rng.extent.dtype, 1)), doms).hi
        out.append(Interval(None if lo is None else simplify_affine(lo),
                            None if hi is None else simplify_affine(hi)))
    return out


def produced_region(site: Site, realize_path: Path, realize: BlockRealize, region: BufferRegion,
                    top: Path, facts: tuple = ()) -> list[Interval] | None:
    """A lower bound of what the block writes of ``region`` while the loops
    below ``top`` run: one interval per dimension, every element of which is
    surely written, or None when that cannot be shown.

    Shown when the region's minimum, in the loop variables, is an iteration
    map of the relaxed loops (each dimension a dense mixed-radix sum of
    slices of loops starting at 0, no loop shared between dimensions), its
    extents are constants, and each conjunct of the block's predicate bounds
    a dimension's index, or the outer part of it, from above by an
    expression of the loops kept (what splits that do not divide add), is
    provably true, or constrains only relaxed loops the indices do not use
    and holds where they start (a split reduction loop's guard). Unit loops
    take their one value. A dense sum of loops (what fuse makes) that an
    index cuts inside a digit, or that the predicate bounds as a whole, is
    read as one loop over its values, as TVM's iterator maps fuse it.

    ``facts`` are conditions of sizes the reader runs under (its own
    ``T.where(0 < n)``): a guard of relaxed loops need hold at their start
    only where they do.
    """
    got = _produced(site, realize_path, realize, region, top, False, facts)
    return got if got is not None else _produced(site, realize_path, realize, region, top, False, facts, True)


def guarded_produced_region(site: Site, realize_path: Path, realize: BlockRealize, region: BufferRegion,
                            top: Path, facts: tuple = ()) -> tuple[list[Interval], PrimExpr | None] | None:
    """:func:`produced_region` for a block that may not run at all in some
    iterations of the loops kept: ``(box, guard)``, where ``box`` is what
    it surely writes in an iteration where ``guard`` (an expression of the
    kept loops, None for always) holds, and nothing is written where it
    does not. An over-split fused loop gives one: at its inner loop, the
    block writes one element when ``i_0 * 5 + i_1 < 24`` and none
    otherwise, which :func:`produced_region` cannot state."""
    for kept_units in (False, True):
        plain = _produced(site, realize_path, realize, region, top, False, facts, kept_units)
        if plain is not None:
            return plain, None
        got = _produced(site, realize_path, realize, region, top, True, facts, kept_units)
        if got is not None:
            return got
    return None


def _produced(site: Site, realize_path: Path, realize: BlockRealize, region: BufferRegion,
              top: Path, guarded: bool, facts: tuple = (), kept_units: bool = False):
    """:func:`produced_region`; with ``guarded``, the conjuncts of the
    predicate on no relaxed loop that cannot be proven are set aside as a
    guard instead, giving ``(box, guard)`` (guard None when there is none).
    With ``kept_units``, the kept loops of one iteration take their one
    value too (tried where the reading without them shows nothing)."""
    loops = loops_between(site, realize_path, top)
    # a unit loop takes its one value (the unit loops splits and
    # add_unit_loop leave would otherwise stop the iteration map, and the
    # last part of a partitioned loop, ``range(4, 5)``, is one); a loop from
    # a constant other than 0 (the other parts) counts from 0 as a stand-in
    # shifted by its start, as TVM's iterator maps read it
    units = {}
    relaxed = {}
    # a kept loop of one iteration too (the unit loops a split leaves above
    # the target, the target itself): its variable is its start there
    if kept_units:
        between = {l.loop_var for l in loops}
        for var, rng in loop_domains(site, realize_path, inclusive=False).items():
            if var not in between and int_value(rng.extent) == 1:
                units[var] = rng.min
        if not units:
            return None  # no kept loop of one iteration: the first reading stands
    for l in loops:
        start = int_value(l.min)
        if int_value(l.extent) == 1:
            units[l.loop_var] = l.min
        elif start == 0:
            relaxed[l.loop_var.name] = l
        elif start is None:
            return None
        else:
            stand = Var(f"{l.loop_var.name}_from_0_{start}", l.loop_var.dtype)
            units[l.loop_var] = Add(l.min, stand)
            relaxed[stand.name] = attrs.evolve(l, loop_var=stand, min=IntImm(l.min.dtype, 0))
    bind = bindings(realize)
    if not units and _is_true(realize.predicate):
        points = _outer_points(region, bind, relaxed)
        if points is not None:
            return (points, None) if guarded else points
    mins = [_fixed(substitute(r.min, bind), units) for r in region.region]
    extents = [int_value(r.extent) for r in region.region]
    if any(e is None or e < 1 for e in extents):
        return None
    # conjuncts free of the relaxed loops hold for every instance that runs;
    # those only on relaxed loops the indices do not use (a reduction's
    # guard) leave every element written if they all hold where those loops
    # start
    # (so is a conjunct the loops' domains imply: a split's guard under the
    # full part of a partitioned loop, which never cuts)
    terms = [c for c in conjuncts(_fixed(realize.predicate, units))
             if not _is_true(c) and not can_prove(c)]
    if terms and facts:
        # a conjunct the reader runs under too (the same split's guard)
        known = {simplify_expr(f) for f in facts}
        terms = [c for c in terms if simplify_expr(c) not in known]
    if terms:
        domains = loop_domains(site, realize_path, inclusive=False)
        domains.update((l.loop_var, Range(l.min, l.extent)) for l in relaxed.values())
        terms = [c for c in terms if not can_prove(c, domains)]
    guards = []
    if guarded:
        # what only the kept loops decide (an over-split's ``i_0 * 5 + i_1 < 24``
        # at the inner loop) says whether the block runs in the iteration at all
        guards = [c for c in terms if uses_any(c, relaxed) is None]
        terms = [c for c in terms if uses_any(c, relaxed) is not None]
    in_index = set().union(*[var_names(m) for m in mins])
    # (a guard may also read sizes and the kept loops, ``k_0 * 4 + k_1 <
    # n``: it must then hold at the start for every size and every value of
    # those loops, or where the reader's facts say)
    aside = [c for c in terms if var_names(c) & set(relaxed) and not var_names(c) & set(relaxed) & in_index]
    if aside:
        starts = {relaxed[n].loop_var: IntImm(relaxed[n].loop_var.dtype, 0)
                  for n in set().union(*[var_names(c) for c in aside]) if n in relaxed}
        at_start = simplify_expr(_fixed(_conjoin(aside), starts))
        if can_prove(at_start, domains, facts=facts):
            terms = [c for c in terms if not any(c is a for a in aside)]
        elif guarded and all(_grows_in(c, relaxed) for c in aside):
            # each holds somewhere only if it holds where the relaxed loops
            # start (``k_0 * 4 + k_1 < n`` at ``k_1 = 0``): that decides
            # whether the kept loops' iteration writes at all, and then it
            # writes every element
            terms = [c for c in terms if not any(c is a for a in aside)]
            guards.extend(conjuncts(at_start))
    predicate = _conjoin(terms)
    out = _box(mins, extents, predicate, dict(relaxed))
    if out is None:
        # the loops of a fused sum the predicate guards, read as digits of it
        # in the indices as the block writes them (simplified, (i * 5 + j) % 3
        # would read (i * 2 + j) % 3, no longer a remainder of the sum)
        written = [substitute(substitute(r.min, bind), units) for r in region.region]
        digits = _fused_digits(written, predicate, relaxed)
        if digits is not None:
            out = _box(digits[0], extents, digits[1], digits[2])
    if guarded:
        return None if out is None else (out, _conjoin(guards) if guards else None)
    return out


def _outer_points(region: BufferRegion, bind: dict, relaxed: dict) -> list[Interval] | None:
    """What :func:`produced_region` shows written of ``region`` under no
    predicate and no unit loop, where each dimension starts at a variable
    bound to none of the relaxed loops (an iteration variable bound to a
    loop above them, or the loop variable itself) and has a constant
    extent: the same block of elements in every iteration, ``[v, v + e -
    1]``, as the iteration map reads it (every index a constant of the
    map, no slice), without substituting, detecting or checking the
    predicate; None where it is not so plain (the general reading runs)."""
    out = []
    for r in region.region:
        m = r.min
        if type(m) is Var:
            m = bind.get(m, m)
        e = int_value(r.extent)
        if type(m) is not Var or m.name in relaxed or not m.dtype.is_index or e is None or e < 1:
            return None
        out.append(Interval(m, m) if e == 1 else Interval(m, simplify_index(fold_add(m, IntImm(m.dtype, e - 1)))))
    return out


def _box(mins: list, extents: list, predicate: PrimExpr, relaxed: dict) -> list[Interval] | None:
    """What :func:`produced_region` shows written of the region at ``mins``
    (in the loops of ``relaxed``, which it may extend with stand-ins) and
    ``extents`` under ``predicate``, or None."""
    fused, consumed = _fuse_guarded(mins, predicate, relaxed)
    sums = detect_iter_map(fused, relaxed, "affine", symbolic=True, weights=True)
    if sums is None:
        found = _fused_stand_ins(fused, relaxed, predicate, consumed)
        if found is not None:
            fused, more = found
            sums = detect_iter_map(fused, relaxed, "affine", symbolic=True, weights=True)
            consumed = consumed | more
    if sums is None and not _is_true(predicate):
        # a guarded sum with a symbolic weight (a fuse over run-time sizes
        # split into a count of parts, ``(f_0 * ((b * c + 2) // 3) + f_1) //
        # c`` under ``... < b * c``), read as one loop as iteration maps read it
        found = predicate_fused_parts(fused, relaxed, predicate)
        if found is not None:
            values, loops, stood = found
            keys = {simplify_index(e) for e in stood.values()}
            sums = detect_iter_map(values, loops, "affine", symbolic=True, weights=True)
            if sums is not None:
                fused = values
                relaxed.clear()
                relaxed.update(loops)
                consumed = consumed | {k for k, c in enumerate(conjuncts(predicate))
                                       if isinstance(c, LT) and simplify_index(c.a) in keys}
    if sums is None and _is_true(predicate):
        # a loop that runs the index backwards (Y[9 - i]) writes what it
        # would forwards: read it reflected
        flipped = _reflected(mins, relaxed)
        if flipped is not None:
            mins = flipped
            sums = detect_iter_map(mins, relaxed, "affine")
    if sums is None and _is_true(predicate) and any(e > 1 for e in extents):
        # a tile per iteration (B[i * 16:i * 16 + 16]): the loops step by
        # the tile, which the tile's own extent fills; read the index with
        # the tile's offset as one more loop, and the tile as one element
        sums, extents = _with_tile_loops(mins, extents, relaxed)
    if sums is None and _is_true(predicate):
        # tiles that overlap (rows v0 * 2 + v1 over 6 x 4): every value from
        # the first to the last is written, some more than once
        return _overlapping_box(mins, extents, relaxed)
    if sums is None:
        return None
    out = []
    for m, s, e in zip(mins, sums, extents):
        span = 0
        reach: list = []  # the spans of slices that run to a symbolic loop end
        for split in s.args:
            if split.extent is None:
                # the slice takes every value up to the last of its loop
                # (which starts at 0): (extent - 1) // lower_factor
                last = fold_sub(relaxed[split.source].extent, IntImm(relaxed[split.source].extent.dtype, 1))
                if isinstance(split.lower_factor, PrimExpr):  # a symbolic size (f // n)
                    last = _last_quotient(relaxed[split.source].extent, split.lower_factor,
                                          _with_remainder(sums, split))
                elif split.lower_factor != 1:
                    last = FloorDiv(last, IntImm(last.dtype, split.lower_factor))
                reach.append(last * split.scale if split.scale != 1 else last)
                continue
            if isinstance(split.extent, PrimExpr):  # f % n: up to n - 1
                last = fold_sub(split.extent, IntImm(split.extent.dtype, 1))
                reach.append(last * split.scale if split.scale != 1 else last)
                continue
            if isinstance(split.scale, PrimExpr):  # a symbolic weight: i_0 * ((n + 7) // 8)
                reach.append(split.scale * IntImm(split.scale.dtype, split.extent - 1))
                continue
            span += split.scale * (split.extent - 1)
        lo = s.base
        hi = lo
        for part in reach:
            hi = fold_add(hi, part)
        if span + e - 1:
            hi = fold_add(hi, IntImm(lo.dtype, span + e - 1))
        out.append(Interval(lo, simplify_index(hi) if hi is not lo else lo))
    return _apply_predicate(predicate, mins, sums, out, relaxed, consumed)


def _overlapping_box(mins: list, extents: list, relaxed: dict) -> list[Interval] | None:
    """What :func:`_box` shows written where each index is a sum of
    relaxed loops (from 0, of constant extents) with positive constant
    weights plus terms of no relaxed loop, each relaxed loop in one index
    only, and the weights leave no gap (:func:`~.stage_writes.dense_reach`,
    the tile's own extent one more term of weight 1): ``[base, base +
    reach]`` in each dimension; None for anything else."""
    out, seen = [], set()
    for m, e in zip(mins, extents):
        found = weighted_loop_terms(m, relaxed)  # the rest: a kept loop or a size, part of the base
        if found is None or any(v.name in seen for v, _, _ in found[0]):
            return None
        seen.update(v.name for v, _, _ in found[0])
        reach = dense_reach([(k, extent) for _, k, extent in found[0]] + [(1, e)])
        if reach is None:
            return None
        zero = {v: IntImm(v.dtype, 0) for v, _, _ in found[0]}
        base = simplify_index(substitute(m, zero)) if zero else m
        out.append(Interval(base, simplify_index(fold_add(base, IntImm(base.dtype, reach))) if reach else base))
    return out


def _last_quotient(extent: PrimExpr, size: PrimExpr, paired: bool = False) -> PrimExpr:
    """``(extent - 1) // size``, the last value of ``f // size`` over a loop
    ``f`` of ``extent``: ``k - 1`` when the extent is ``k * size`` (fuse of a
    loop of ``k`` with one of ``size``; the loop runs only when ``size`` is
    at least 1, and then the quotient is exactly that).

    With ``paired`` (the box also holds ``f % size``, up to ``size - 1``),
    ``k`` may be symbolic too (the fuse of two loops of symbolic extents):
    where ``k`` and ``size`` are at least 1 the quotient reaches ``k - 1``;
    where either is not, the box is empty on that side (``[0, k - 1]`` or
    the remainder's ``[0, size - 1]``) and claims nothing written."""
    form = affine_form(extent)
    if form is not None and form.const == 0 and len(form.terms) == 1:
        (atom, k), = form.terms
        if atom == size and k > 0:
            return IntImm(extent.dtype, k - 1)
    if paired and isinstance(extent, Mul) and size in (extent.a, extent.b):
        k = extent.b if extent.a == size else extent.a
        return fold_sub(k, IntImm(k.dtype, 1))
    return simplify_expr(FloorDiv(fold_sub(extent, IntImm(extent.dtype, 1)), size))


def _with_remainder(sums, quotient) -> bool:
    """Whether the iteration sums also take ``f % size`` of the loop whose
    ``f // size`` is ``quotient`` (a slice of symbolic size)."""
    return any(split.source == quotient.source and isinstance(split.extent, PrimExpr)
               and split.extent == quotient.lower_factor and split.lower_factor == 1
               for s in sums for split in s.args)


def _reflected(mins: list, relaxed: dict) -> list | None:
    """``mins`` with each relaxed loop of constant extent that every index
    takes with a negative coefficient replaced by ``extent - 1 - loop`` (the
    same values, in the other order); None when there is no such loop, or a
    loop is taken with both signs."""
    signs: dict = {}
    variables: dict = {}  # the variable itself: a relaxed entry may be a stand-in with no loop_var
    for m in mins:
        form = affine_form(m)
        if form is None:
            return None
        for term, coeff in form.terms:
            if isinstance(term, Var) and term.name in relaxed:
                signs.setdefault(term.name, set()).add(coeff < 0)
                variables[term.name] = term
    mapping = {}
    for name, seen in signs.items():
        ext = int_value(relaxed[name].extent)
        if seen == {True} and ext is not None:
            var = variables[name]
            mapping[var] = IntImm(var.dtype, ext - 1) - var
    if not mapping:
        return None
    return [simplify_index(substitute(m, mapping)) for m in mins]


def _with_tile_loops(mins: list, extents: list, relaxed: dict):
    """``(sums, extents)``: the iteration sums of ``min + t`` for each
    dimension, ``t`` a loop over the dimension's extent, and extents of one;
    ``(None, extents)`` when those are no iteration map either."""
    values, loops = box_points(mins, extents, relaxed)
    sums = detect_iter_map(values, loops, "affine")
    return (None, extents) if sums is None else (sums, [1] * len(extents))


def box_points(mins: list, extents: list, loops: dict) -> tuple[list, dict]:
    """A box of constant ``extents`` from ``mins``, one dimension at a time,
    as the points it holds: ``(values, loops)``, where each value is
    ``min + t`` for a new loop ``t`` over the dimension's extent (the min
    alone where the extent is one), and ``loops`` (loop variable name ->
    For) is the given ones with those added. An iterator map of the values
    over the loops tells what the boxes of ``mins`` cover as the given
    loops run."""
    loops = dict(loops)
    values = []
    for d, (m, e) in enumerate(zip(mins, extents)):
        if e == 1:
            values.append(m)
            continue
        name = f"tile_{d}"
        while name in loops:
            name += "_"
        t = Var(name, m.dtype)
        loops[name] = For(t, IntImm(m.dtype, 0), IntImm(m.dtype, e), ForKind.SERIAL, Evaluate(IntImm("int32", 0)))
        values.append(m + t)
    return values, loops


def _fixed(e: PrimExpr, values: dict) -> PrimExpr:
    """``e`` with the variables of ``values`` replaced, simplified."""
    return simplify_index(substitute(e, values)) if values and e.dtype.is_integer else (
        substitute(e, values) if values else e)


def fold_units(e: PrimExpr, units: dict) -> PrimExpr:
    """``e`` with the variables of loops of one iteration (``units``: Var
    -> its one value) replaced and simplified, as TVM's analyzer folds them
    in the bindings a primitive writes; ``e`` itself when it uses none."""
    if not units or not (var_names(e) & {v.name for v in units}):
        return e
    return _fixed(e, units)


def _as_less(cond: PrimExpr) -> tuple[PrimExpr, PrimExpr, bool] | None:
    """``(small, large, strict)`` for a comparison ``small < large``
    (``strict``) or ``small <= large``, however it is written (``>`` and
    ``>=`` turned round), or None for anything else."""
    if isinstance(cond, (LT, LE)):
        return cond.a, cond.b, isinstance(cond, LT)
    if isinstance(cond, (GT, GE)):
        return cond.b, cond.a, isinstance(cond, GT)
    return None


def _grows_in(cond: PrimExpr, relaxed: dict) -> bool:
    """Whether ``cond`` is ``a < b`` (or ``<=``, ``>``, ``>=``) where the
    loops of ``relaxed`` (which start at 0) appear, as plain variables, only
    in the smaller side, with positive weights: then it holds for some of
    their values only if it holds where they all start."""
    sides = _as_less(cond)
    if sides is None:
        return False
    small, large, _ = sides
    if not small.dtype.is_integer or var_names(large) & set(relaxed):
        return False
    form = affine_form(small)
    if form is None:
        return False
    for term, coeff in form.terms:
        if type(term) is Var and term.name in relaxed:
            if coeff < 0:
                return False
        elif var_names(term) & set(relaxed):
            return False
    return True


def _conjoin(terms: list) -> PrimExpr:
    out = None
    for t in terms:
        out = t if out is None else And(out, t)
    return IntImm("bool", 1) if out is None else out


class _Extent:
    """A stand-in loop of ``extent`` iterations, for :func:`detect_iter_map`."""

    __slots__ = ("min", "extent")

    def __init__(self, dtype, extent: int | PrimExpr):
        self.min = IntImm(dtype, 0)
        self.extent = IntImm(dtype, extent) if isinstance(extent, int) else extent


def _fuse_guarded(mins: list, pred: PrimExpr, relaxed: dict) -> tuple[list, set]:
    """The indices with each part ``e`` that the predicate guards as
    ``e < c`` (the inner split of a loop that was split again, its factors
    not dividing) replaced by a stand-in loop of ``c`` iterations: ``e``
    takes exactly the values ``0 .. c - 1``, so the index keeps its values.
    Adds the stand-ins to ``relaxed``; returns the new indices and the
    positions of the conjuncts they account for. A conjunct that bounds a
    whole index is left to :func:`_apply_predicate`."""
    if _is_true(pred):
        return mins, set()
    out = list(mins)
    keys = [simplify_index(m) for m in mins]
    consumed = set()
    for k, c in enumerate(conjuncts(pred)):
        bound = int_value(c.b) if isinstance(c, LT) else None
        if bound is None or bound < 1 or simplify_index(c.a) in keys:
            continue
        part = detect_iter_map([c.a], relaxed, "affine")
        form = affine_form(c.a)
        if not part or int_value(part[0].base) != 0 or form is None or form.const != 0:
            continue
        loops_in_part = {a.source for a in part[0].args}
        for d, m in enumerate(out):
            whole = affine_form(m)
            if whole is None:
                continue
            coeffs = dict(whole.terms)
            ratios = {coeffs.get(t, 0) / w for t, w in form.terms}
            if len(ratios) != 1 or 0 in ratios or not float(next(iter(ratios))).is_integer():
                continue
            g = int(next(iter(ratios)))
            rest = whole.plus(form.scale(g), -1)
            if uses_any(rest.to_expr(), loops_in_part) is not None:
                continue
            name = f"_guarded{k}"
            while name in relaxed:
                name += "_"
            stand_in = Var(name, m.dtype)
            relaxed[name] = _Extent(m.dtype, bound)
            out[d] = simplify_index(rest.to_expr() + stand_in * g)
            consumed.add(k)
            break
    return out, consumed


def _dense_sum(e: PrimExpr, relaxed: dict, least: int = 2, sized: bool = False) -> int | PrimExpr | None:
    """The number of values of ``e`` when it is a dense mixed-radix sum of
    ``least`` or more relaxed loops of constant extents (weights 1, e0,
    e0 * e1, ..., no constant: what fuse makes), which then takes each value
    of ``[0, that number)`` exactly once as the loops run; None otherwise.
    With ``sized``, the top loop may run to a symbolic extent (a fuse over
    run-time sizes split by a constant: ``f_0 * 8 + f_1``), and the number
    is then an expression."""
    form = affine_form(e)
    if form is None or form.const != 0 or len(form.terms) < least:
        return None
    reach = 1
    terms = sorted(form.terms, key=lambda t: t[1])
    for k, (var, w) in enumerate(terms):
        loop = relaxed.get(var.name) if isinstance(var, Var) else None
        ext = None if loop is None else int_value(loop.extent)
        if not isinstance(reach, int) or w != reach:
            return None
        if ext is None and sized and loop is not None and k == len(terms) - 1 \
                and loop.extent.dtype == e.dtype and int_value(loop.min) == 0:
            return fold_mul(IntImm(e.dtype, w), loop.extent)
        if ext is None or ext < 1:
            return None
        reach = w * ext
    return reach


def _fused_digits(mins: list, predicate: PrimExpr, relaxed: dict):
    """``(mins, predicate, relaxed)`` with the loops of each dense sum
    ``S`` that the predicate bounds as ``S < c`` (the guard of a split of a
    fused loop that does not divide it), or that an index divides or takes
    the remainder of, replaced by the digits of a stand-in loop ``S`` over
    its values (a loop of weight ``w`` and extent ``e`` is ``S // w % e``),
    up to ``c`` under a guard, and the guards dropped: the loops take their
    values exactly once each over ``S``'s, so the indices take the same
    values. Only where the predicate reads the sum's loops in no other
    conjunct; None when there is no such sum."""
    conds = conjuncts(predicate)
    # the sums the guards bound (one loop alone is a sum too: the guard then
    # shortens it), and those the indices divide or take the remainder of
    candidates = [(c.a, _dense_sum(c.a, relaxed, 1)) for c in conds
                  if isinstance(c, LT) and int_value(c.b) is not None]
    candidates += [(n.a, _dense_sum(n.a, relaxed)) for m in mins for n in walk(m)
                   if isinstance(n, (FloorDiv, FloorMod)) and not isinstance(n.a, Var)]
    taken: set = set()
    mapping: dict = {}
    dropped: set = set()
    added: dict = {}
    for sum_expr, size in candidates:
        if size is None:
            continue
        key = simplify_index(sum_expr)
        loops = var_names(key)
        guards = _sum_guards(conds, frozenset(), key, loops)
        if loops & taken or guards is None:
            continue
        name = "_fused"
        while name in relaxed or name in added:
            name += "_"
        stand_in = Var(name, key.dtype)
        form = affine_form(key)
        top = max(w for _, w in form.terms)
        for var, w in form.terms:
            digit = stand_in if w == 1 else FloorDiv(stand_in, IntImm(key.dtype, w))
            if w != top:
                digit = FloorMod(digit, relaxed[var.name].extent)
            mapping[var] = digit
        taken |= loops
        dropped |= {k for k, _ in guards}
        added[name] = _Extent(key.dtype, min([size] + [g for _, g in guards]))
    if not added:
        return None
    new_mins = [simplify_index(substitute(m, mapping)) for m in mins]
    rest = [c for k, c in enumerate(conds) if k not in dropped]
    new_relaxed = {n: l for n, l in relaxed.items() if n not in {v.name for v in mapping}}
    new_relaxed.update(added)
    return new_mins, _conjoin(rest), new_relaxed


def _fused_stand_ins(mins: list, relaxed: dict, predicate: PrimExpr, consumed: set):
    """The indices with each dense sum of loops that they divide or take
    the remainder of (``(i * 32 + j) % 56``) replaced by a stand-in loop
    over its values, as TVM's iterator maps fuse such a sum into one mark
    before splitting it: where a cut falls inside a digit, the slices of the
    loops themselves are no iteration map. A sum is replaced only where its
    loops appear nowhere else in the indices, and the predicate reads them
    only as ``sum < c`` (the guard of a split of the fused loop that does
    not divide it: the stand-in then runs to ``c``); the indices then take
    the same values over the stand-in as over the loops. A loop of a
    conjunct in ``consumed`` (read by a stand-in of :func:`_fuse_guarded`)
    is tied to that stand-in and stays. Adds the stand-ins to ``relaxed``;
    returns the new indices and the positions of the conjuncts the
    stand-ins account for, or None when there is no such sum."""
    conds = conjuncts(predicate)
    tied = set().union(*[var_names(conds[k]) for k in consumed])
    sums: dict = {}
    for m in mins:
        for n in walk(m):
            if isinstance(n, (FloorDiv, FloorMod)) and not isinstance(n.a, Var):
                size = _dense_sum(n.a, relaxed, sized=True)
                if size is not None:
                    sums.setdefault(simplify_index(n.a), size)
    out, added, used = list(mins), {}, set()
    for key, size in sums.items():
        loops = var_names(key)
        guards = _sum_guards(conds, consumed, key, loops)
        if loops & tied or guards is None:
            continue
        name = "_fused"
        while name in relaxed or name in added:
            name += "_"
        stand_in = Var(name, key.dtype)

        def pre(n, key=key, stand_in=stand_in):
            if isinstance(n, (FloorDiv, FloorMod)) and not isinstance(n.a, Var) and simplify_index(n.a) == key:
                return type(n)(stand_in, n.b)
            return None

        trial = [transform(m, lambda n: n, pre) for m in out]
        if any(var_names(m) & loops for m in trial):
            continue  # a loop of the sum is read apart from it too
        extent = _least_extent(size, [c for _, c in guards])
        if extent is None:
            continue
        out = trial
        added[name] = _Extent(key.dtype, extent)
        used |= {k for k, _ in guards}
    if not added:
        return None
    relaxed.update(added)
    return out, used


def _sum_guards(conds: list, consumed: set, key: PrimExpr, loops: set) -> list | None:
    """``[(position, c)]`` for the conjuncts that read the loops of the
    dense sum ``key``, each ``key < c`` with ``c`` a constant or a size (an
    expression of no loop of the sum: ``b * c``); None when one reads them
    otherwise."""
    guards = []
    for k, c in enumerate(conds):
        if k in consumed or not (var_names(c) & loops):
            continue
        if not isinstance(c, LT) or simplify_index(c.a) != key or var_names(c.b) & loops \
                or c.b.dtype != key.dtype or find_nodes(c.b, (BufferLoad,)):
            return None
        limit = int_value(c.b)
        if limit is not None and limit < 1:
            return None
        guards.append((k, c.b if limit is None else limit))
    return guards


def _least_extent(size, limits: list):
    """How many values a dense sum of ``size`` values takes under the
    guards ``sum < limit``: the least of them, where the order of a
    symbolic one is shown (a split's guard, ``b * c``, at most the
    padded ``(b * c + 7) // 8 * 8``); None where it is not."""
    ends = [size] + limits
    if all(isinstance(x, int) for x in ends):
        return min(ends)
    for cand in ends:
        if all(x is cand or _no_more(cand, x) for x in ends):
            return cand
    return None


def _no_more(a, b) -> bool:
    """``a <= b`` for two extents (ints or expressions), as index
    arithmetic denotes."""
    if isinstance(a, int) and isinstance(b, int):
        return a <= b
    return index_at_most(*as_exprs(a, b))


def _high_part(se, sd) -> int | None:
    """``f`` when the iteration sum ``sd`` is ``se * f + r`` with ``r`` the
    rest of ``sd``, dense over ``[0, f - 1]`` (``se`` the outer part of a
    split of the same loops, as nested splits give); None otherwise."""
    if not se.args or int_value(se.base) != 0:
        return None
    if any(not isinstance(a.scale, int) for a in (*se.args, *sd.args)):
        return None  # symbolic weights: the parts are not compared
    first = se.args[0]
    match = [a for a in sd.args if (a.source, a.lower_factor, a.extent) == (first.source, first.lower_factor, first.extent)]
    if not match or match[0].scale % first.scale:
        return None
    f = match[0].scale // first.scale
    used = []
    for arg in se.args:
        hit = [a for a in sd.args if (a.source, a.lower_factor, a.extent, a.scale)
               == (arg.source, arg.lower_factor, arg.extent, arg.scale * f)]
        if not hit:
            return None
        used.append(hit[0])
    rest = [a for a in sd.args if a not in used]
    if any(a.extent is None or a.scale >= f for a in rest):
        return None
    return f if sum(a.scale * (a.extent - 1) for a in rest) == f - 1 else None


def _lesser_end(hi: PrimExpr, cap: PrimExpr) -> PrimExpr:
    """``min(hi, cap)``, or the one end shown the lesser (as index
    arithmetic denotes: the end of a split into parts reaches past the
    extent it caps, ``n - 1 <= (n + 63) // 64 * 64 - 1``)."""
    if index_at_most(cap, hi):
        return cap
    if index_at_most(hi, cap):
        return hi
    return simplify_affine(fold_min(hi, cap))


def _apply_predicate(pred: PrimExpr, mins: list, sums: list, out: list[Interval],
                     relaxed, consumed=frozenset()) -> list[Interval] | None:
    """Narrow the dense box ``out`` by the block's predicate: each conjunct
    must bound one dimension's index, or the outer part of it, from above."""
    if _is_true(pred):
        return out
    keys = [simplify_index(m) for m in mins]
    out = list(out)
    for k, c in enumerate(conjuncts(pred)):
        if _is_true(c) or k in consumed:
            continue
        low = _lower_bound(c, keys, relaxed)
        if low is not None:
            # a bound from below (a padding's ``1 <= h + 1``): the index
            # starts no lower than it
            d, first = low
            if out[d].lo is None or first.dtype != out[d].lo.dtype:
                return None
            out[d] = Interval(_greater_end(out[d].lo, first), out[d].hi)
            continue
        if not isinstance(c, LT) or uses_any(c.b, relaxed) is not None:
            return None
        key = simplify_index(c.a)
        shifted = None if key in keys else _shifted_bound(c, keys, relaxed)
        if key in keys:
            d, limit = keys.index(key), c.b
        elif shifted is not None:
            d, limit = shifted
        else:
            part = detect_iter_map([c.a], relaxed, "affine")
            found = [(d, _high_part(part[0], sd)) for d, sd in enumerate(sums)] if part else []
            found = [(d, f) for d, f in found if f is not None]
            if not found:
                return None
            d, f = found[0]
            # se < c with r in [0, f - 1] is exactly index < base + c * f
            limit = simplify_affine(sums[d].base + c.b * f)
        hi, cap = int_value(out[d].hi), int_value(limit)
        if hi is not None and cap is not None:
            if cap - 1 < hi:
                out[d] = Interval(out[d].lo, IntImm(out[d].hi.dtype, cap - 1))
        else:
            out[d] = Interval(out[d].lo, _lesser_end(out[d].hi, simplify_affine(limit - 1)))
    return out


def _lower_bound(c: PrimExpr, keys: list, relaxed) -> tuple[int, PrimExpr] | None:
    """``(d, first)`` where the conjunct ``a <= e`` (or ``e >= a``, ``a < e``,
    ``e > a``) bounds the index of dimension ``d`` from below: ``e`` is
    that index plus what the relaxed loops do not change, ``a`` is free of
    them, and the index is then at least ``first``; None otherwise."""
    sides = _as_less(c)
    if sides is None:
        return None
    a, e, strict = sides
    if not e.dtype.is_integer or a.dtype != e.dtype or uses_any(a, relaxed) is not None:
        return None
    found = _index_plus(e, keys, relaxed)
    if found is None:
        return None
    d, delta = found
    first = simplify_index(Sub(a, delta))
    return d, simplify_index(first + IntImm(first.dtype, 1)) if strict else first


def _index_plus(e: PrimExpr, keys: list, relaxed) -> tuple[int, PrimExpr] | None:
    """``(d, delta)`` where ``e`` is the index of dimension ``d`` (one of
    ``keys`` that reads relaxed loops) plus ``delta``, which reads none of
    them; None where no dimension's index is so."""
    for d, key in enumerate(keys):
        if key.dtype != e.dtype or uses_any(key, relaxed) is None:
            continue
        delta = simplify_index(Sub(e, key))
        if uses_any(delta, relaxed) is None:
            return d, delta
    return None


def _greater_end(lo: PrimExpr, floor: PrimExpr) -> PrimExpr:
    """``max(lo, floor)``, or the one start shown the greater."""
    if index_at_most(floor, lo):
        return lo
    if index_at_most(lo, floor):
        return floor
    return simplify_affine(fold_max(lo, floor))


def _shifted_bound(c: LT, keys: list, relaxed) -> tuple[int, PrimExpr] | None:
    """``(d, limit)`` where the conjunct ``e < b`` bounds the index of
    dimension ``d`` moved by what the relaxed loops do not change (``e``
    is ``index + delta``, ``delta`` of the kept loops and sizes only): the
    index is then below ``b - delta``. A block of a part of a partitioned
    loop reading a cache compacted to it (``i_01 * 6 + i_1 < 1024`` over
    ``C_local[i_01 * 6 + i_1 - 1020]``) bounds its index so."""
    found = _index_plus(c.a, keys, relaxed)
    if found is None or found[1].dtype != c.b.dtype:
        return None
    d, delta = found
    return d, simplify_index(Sub(c.b, delta))


def general_cover_violation(site: Site, children: Sequence[Child], consumer: Child, buffers=None):
    """Why the producers in the scope do not cover what ``consumer`` reads,
    as ``(buffer, producer blocks)``, or None when they do.

    As TVM checks it: the producers of each buffer the consumer reads are
    grouped by their lowest common loop with the consumer; from the
    consumer's loop upwards, the first group must write, within one
    iteration of that loop, everything the consumer reads in that iteration.
    Only the buffers in ``buffers`` are checked when it is given.
    """
    cpath, crealize = consumer
    for read in crealize.block.reads:
        if buffers is not None and read.buffer not in buffers:
            continue
        groups: dict = {}
        for w in writers(children, read.buffer):
            if w[1].block is crealize.block:
                continue
            groups.setdefault(common_ancestor(site, w[0], cpath), []).append(w)
        if not groups:
            continue
        top = max(groups, key=len)
        # only elements inside the buffer need a producer: a declared read
        # region may reach past its ends (a window clipped by the body, as
        # annotate_buffer_access declares it), and TVM's check clips it too
        needed = within_buffer(consumed_region(site, cpath, crealize, read, top), read.buffer)
        boxes = []
        # the consumer reads only where its conditions on sizes and on the
        # loops fixed in one iteration of ``top`` hold: the producers may
        # be read under them
        facts = () if _is_true(crealize.predicate) else tuple(size_conditions(
            crealize.predicate, site.func, frozenset(v.name for v in loop_domains(site, top))))
        for wpath, wrealize in groups[top]:
            for region in wrealize.block.writes:
                if region.buffer is read.buffer:
                    box = produced_region(site, wpath, wrealize, region, top, facts)
                    if box is not None:
                        boxes.append(box)
        if not region_covers(boxes, needed, loop_domains(site, top)):
            return read.buffer, [w[1].block for w in groups[top]]
    return None



def within_buffer(intervals: list[Interval], buf: Buffer) -> list[Interval]:
    """What of a relaxed read lies inside the buffer: only those elements
    need a producer (a consumer split without dividing reaches past the
    end, its last iteration guarded by a predicate), as TVM's region cover
    intersects both sides with the buffer's shape."""
    out = []
    for iv, dim in zip(intervals, buf.shape):
        lo, hi = iv.lo, iv.hi
        if type(lo) is IntImm and type(hi) is IntImm and type(dim) is IntImm \
                and lo.dtype == hi.dtype == dim.dtype and dim.value >= 1:
            # literals: the intersection keeps an end or takes the buffer's, as its folding does
            dt = dim.dtype
            out.append(Interval(lo if lo.value >= 0 else IntImm(dt, 0),
                                hi if hi.value <= dim.value - 1 else IntImm(dt, dim.value - 1)))
            continue
        dt = (lo if lo is not None else hi if hi is not None else dim).dtype
        out.append(intersect(iv, Interval(IntImm(dt, 0), fold_sub(cast(dim, dt), IntImm(dt, 1)))))
    return out


def size_conditions(predicate: PrimExpr, func, outer: frozenset = frozenset()) -> list[PrimExpr]:
    """The conjuncts of a block's ``predicate`` that read only the
    function's parameters and sizes, no loop and no buffer (``0 < n``, a
    copy back that runs only where a reduction over ``range(n)`` ran): a
    block keeps them wherever it moves, and what it reads is needed only
    where they hold. With ``outer``, the names of loops fixed within the
    iteration asked about, conjuncts reading those too (a split's guard
    ``i_0 * 16 + i_1 < 8`` on the loops a producer shares with it)."""
    sizes = None
    out = []
    for c in conjuncts(predicate):
        names = var_names(c)
        if not names or _is_true(c) or find_nodes(c, (BufferLoad,)):
            continue
        if sizes is None:
            sizes = {p.name for p in func.params}
            for buf in func.buffer_map.values():
                for dim in buf.shape:
                    sizes |= var_names(dim)
        if names <= sizes or (outer and names <= sizes | outer):
            out.append(c)
    return out


def region_cover_violation(site: Site, children: Sequence[Child], consumer: Child, buffers=None):
    """Why the producers in the scope do not cover what ``consumer`` reads,
    as ``(buffer, producer blocks)``, or None when they do (see
    :func:`general_cover_violation`; only the buffers in ``buffers`` are
    checked when it is given).

    A buffer whose one writer writes all of it covers any read: that
    buffer is passed over without the bounds and the proof
    (:func:`whole_writer_covers`), as it nearly always is (the producer of
    an elementwise stage or a reduction)."""
    reads = {r.buffer for r in consumer[1].block.reads} if buffers is None else buffers
    left = {b for b in reads if not whole_writer_covers(site, children, consumer, b)}
    return general_cover_violation(site, children, consumer, left) if left else None


# the plainest cover: a writer of the whole buffer

def whole_writer_covers(site, children, consumer, buffer: Buffer) -> bool:
    """Whether :func:`general_cover_violation` of ``consumer`` over
    ``buffer`` surely finds nothing (True), because the one other
    block of ``children`` that writes the buffer writes all of it within
    one iteration of the loop it shares with the consumer; False when that
    cannot be told this way (the general check must run).

    The general check bounds what the consumer reads by the buffer's
    shape, so a writer of the whole buffer covers any read. The consumer's
    read regions must be in the dtype of the buffer's shape, where the
    general check compares them with the writer's indices without a cast.
    """
    cpath, crealize = consumer
    reads = [r for r in crealize.block.reads if r.buffer == buffer]
    found = [w for w in writers(children, buffer) if w[1].block is not crealize.block]
    # the general check matches the writer's regions to a read by identity:
    # an equal copy of the buffer is left to it
    if len(found) != 1 or not reads or any(r.buffer is not buffer for r in reads):
        return False
    dtype = _shape_dtype(buffer)
    if dtype is None or any(e.dtype != dtype for r in reads for rng in r.region for e in (rng.min, rng.extent)):
        return False
    wpath, wrealize = found[0]
    return writes_whole(site, wpath, wrealize, buffer, common_ancestor(site, wpath, cpath))


def _shape_dtype(buffer: Buffer):
    """The dtype of the buffer's shape when every dimension is a constant
    of that one dtype, else None."""
    dims = list(buffer.shape)
    if not dims or any(type(d) is not IntImm for d in dims):
        return None
    dtype = dims[0].dtype
    return dtype if all(d.dtype == dtype for d in dims) else None


def writes_whole(site, wpath, wrealize: BlockRealize, buffer: Buffer, top) -> bool:
    """Whether the block realized at ``wpath`` surely writes every element
    of ``buffer`` while the loops below ``top`` run, as
    :func:`produced_region` shows it in its plainest case: no
    predicate, every loop below ``top`` starting at 0, and a declared write
    region of one element at distinct iteration variables, each over
    ``[0, n)`` for its dimension's extent ``n`` and bound to a distinct
    loop of those, which runs over ``[0, n)`` too."""
    if not _is_true(wrealize.predicate):
        return False
    dtype = _shape_dtype(buffer)
    if dtype is None:
        return False
    loops = loops_between(site, wpath, top)
    if any(int_value(loop.min) != 0 for loop in loops):
        return False
    by_var = {loop.loop_var: loop for loop in loops}
    block = wrealize.block
    domains = {iv.var: iv.dom for iv in block.iter_vars}
    bound = dict(zip((iv.var for iv in block.iter_vars), wrealize.iter_values))
    for region in block.writes:
        if region.buffer is buffer and _one_point_each(region, buffer, dtype, domains, bound, by_var):
            return True
    return False


def _one_point_each(region, buffer: Buffer, dtype, domains: dict, bound: dict, by_var: dict) -> bool:
    """Whether ``region`` is one element at distinct iteration variables,
    dimension by dimension over the dimension's extent, each bound to a
    distinct loop of ``by_var`` over that extent (see :func:`writes_whole`)."""
    seen_ivs, seen_loops = set(), set()
    for rng, dim in zip(region.region, buffer.shape):
        n = dim.value
        var = rng.min
        if int_value(rng.extent) != 1 or type(var) is not Var or var.dtype != dtype or var in seen_ivs:
            return False
        dom = domains.get(var)
        if dom is None or int_value(dom.min) != 0 or int_value(dom.extent) != n:
            return False
        loop_var = bound.get(var)
        loop = by_var.get(loop_var) if type(loop_var) is Var else None
        if loop is None or loop_var in seen_loops or loop_var.dtype != dtype or int_value(loop.extent) != n:
            return False
        seen_ivs.add(var)
        seen_loops.add(loop_var)
    return len(region.region) == len(buffer.shape)


# -- moving blocks -----------------------------------------------------------------------

def conflicting_buffer(moved: Block, other: Block, *, allow_reads_of_moved: bool = False,
                       allow_writes_to_moved_reads: bool = False) -> Buffer | None:
    """A buffer through which ``moved`` and ``other`` depend on each other
    (one writes what the other reads or writes), or None.

    ``allow_reads_of_moved`` ignores ``other`` reading what ``moved`` writes
    (a consumer whose reads the primitive accounts for);
    ``allow_writes_to_moved_reads`` ignores ``other`` writing what ``moved``
    reads (a producer the primitive accounts for).
    """
    mr, mw = reads_of(moved), writes_of(moved)
    orr, ow = reads_of(other), writes_of(other)
    found = (mw & ow) | (set() if allow_writes_to_moved_reads else (mr & ow)) \
        | (set() if allow_reads_of_moved else (mw & orr))
    if not found:
        return None
    return sorted(found, key=lambda b: b.name)[0]


def subtrees(loop: For) -> list[Stmt]:
    """The statements of a loop's body (TVM's ``AsArray(loop->body)``)."""
    return list(loop.body.seq) if isinstance(loop.body, SeqStmt) else [loop.body]


def subtree_index(loop_path: Path, loop: For, path: Path) -> int | None:
    """Which statement of the loop's body ``path`` lies in (None: not under the loop)."""
    head = loop_path + (_BODY,)
    if not (len(path) >= len(head) and path[:len(head)] == head):
        return None
    if isinstance(loop.body, SeqStmt):
        return path[len(head)][1]
    return 0


def insertion_range(loop_path: Path, loop: For, before: Iterable[Path], after: Iterable[Path]) -> tuple[int, int]:
    """``(lo, hi)``: a block placed among the loop's body statements at any
    position in ``[lo, hi]`` comes after every statement holding a path of
    ``before`` and before every one holding a path of ``after`` (those not
    under the loop are ignored); ``lo > hi`` when no position does."""
    n = len(subtrees(loop))
    last = max([k for k in (subtree_index(loop_path, loop, p) for p in before) if k is not None],
               default=-1)
    first = min([k for k in (subtree_index(loop_path, loop, p) for p in after) if k is not None],
                default=n)
    return last + 1, first


def leaf_removal_path(site: Site, realize_path: Path, scope: Path | None) -> Path | None:
    """The statement to delete to take the block out of its place: the
    block, or the outermost loop above it whose only statement leads to it,
    stopping below a loop or the scope root whose body is a sequence (TVM's
    ``LeafBlockRemovalPlan``). None when the block is the only leaf of its
    scope, which would be left empty."""
    top = scope if scope is not None else ()
    path = realize_path
    while True:
        parent = path[:-1]
        # a sequence step sits between a loop or block and its statements;
        # a sequence of one statement (a rewrite may leave one) is that
        # statement, and deleting its item would leave it empty
        if path[-1][0] == "seq":
            if len(site.at(parent).seq) > 1:
                return path
        elif parent == top or not parent:
            return None
        node = site.at(parent)
        if isinstance(node, Block):
            return None
        path = parent


def delete_at(root: Stmt, rel: Path) -> Stmt:
    """``root`` with the statement at relative path ``rel`` (a sequence
    item) deleted; a sequence left with one statement becomes that statement."""
    seq_path, (_, k) = rel[:-1], rel[-1]
    seq: SeqStmt = get_at(root, seq_path)
    # without_items deletes in C, checks nothing again and records the
    # edit, so the name index need not compare the items kept
    new = seq.seq[1 - k] if len(seq.seq) == 2 and k in (0, 1) else seq.without_items([k])
    return new if not seq_path else replace_at(root, seq_path, new)


def program_key(site: Site, path: Path) -> tuple:
    """A key that orders paths as the program runs their statements the
    first time (a statement before the statements inside it)."""
    return _keyed_at(site.func, path)[0]


def _keyed_at(root, path: Path) -> tuple:
    """``(program_key, node)`` for the node at ``path`` under ``root``, in
    one walk down the path. A step out of a sequence is its position and a
    step out of a statement with one statement field is 0, told apart by
    the type alone; the others are counted (:func:`_child_position`)."""
    key = []
    node = root
    for step in path:
        name, index = step
        kind = type(node)
        if kind is SeqStmt:
            key.append(index if name == "seq" and type(index) is int and 0 <= index < len(node.seq) else 0)
        elif kind in _ONE_STMT_FIELD:
            key.append(0)
        else:
            key.append(_child_position(node, step))
        value = getattr(node, name)
        node = value if index is None else value[index]
    return tuple(key), node


#: the statements with one field that holds a statement (not a sequence of
#: them): every step out of one is at position 0
_ONE_STMT_FIELD = frozenset(kind for kind, fields in STMT_FIELDS.items() if len(fields) == 1 and kind is not SeqStmt)


def _child_position(node, step) -> int:
    """The position of ``step`` among the statement children of ``node``
    (as :func:`~tirfun.analysis.traversal.stmt_children` lists them; 0 for
    a step that leads to no statement child), counted without listing the
    children: a sequence of a thousand statements costs one addition."""
    name, index = step
    position = 0
    for field in STMT_FIELDS.get(type(node), ()):
        value = getattr(node, field)
        if value is None:
            continue
        many = isinstance(value, PVector)
        if field == name:
            if many and isinstance(index, int) and 0 <= index < len(value):
                return position + index
            return position if not many and index is None else 0
        position += len(value) if many else 1
    return 0


__all__ = [
    "scope_of", "scope_children", "indexed_scope_blocks", "scope_allocations", "blocks_in_order", "reads_of",
    "writes_of",
    "producers", "consumers", "writers", "is_dominant", "is_output_block",
    "COMPLETE_BLOCK_DEFINITION", "REDUCTION_BLOCK_DEFINITION", "complete_block_code",
    "reduction_block_code", "is_under", "common_ancestor", "loops_between", "loop_domains",
    "bindings", "consumed_region", "produced_region", "guarded_produced_region", "region_cover_violation", "general_cover_violation",
    "whole_writer_covers", "writes_whole",
    "conflicting_buffer", "subtrees", "subtree_index", "insertion_range", "leaf_removal_path",
    "delete_at", "program_key", "conjuncts", "fold_units",
]
