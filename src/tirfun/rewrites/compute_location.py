"""Compute location: compute_at, reverse_compute_at, compute_inline and
reverse_compute_inline.

Each moves a block's computation: under a loop, computing there only the
region the consumers (or producers) under that loop need, or into the
blocks that read (or write) its buffer. The shared dataflow checks (scope,
producers and consumers, region cover, leaf removal) live in
:mod:`.dataflow`; the integer analysis in :mod:`tirfun.analysis.arith`.
"""

from __future__ import annotations

import functools
import itertools
import math

import attrs
from pyrsistent import PMap, PVector

from ..analysis.access import access_regions, detect_access
from ..analysis.left_behind import reordered_access
from ..analysis.equality import structural_equal
from ..analysis.arith import bound_region, can_prove, expr_bounds, index_at_most, surely_at_most
from ..analysis.arith.int_set import Interval, eval_interval, point_or_cover, substitute, union
from ..analysis.arith.iter_map import (
    _product_key, detect_iter_map, divides, is_affine_binding, is_bijective, is_plain_sum, loop_ranges, simplify_index, slices_chain,
    tiled_loops,
)
from ..analysis.arith.region import _plain_bound
from ..analysis.arith.const_bound import UNBOUNDED, const_interval
from ..analysis.arith.linear import affine_form, prove_equal
from ..analysis.arith.simplify import is_true as _is_true, simplify_expr
from ..analysis.arith.terms import int_value
from ..analysis.mentions import (
    masked_vector_loads, mentions, mentions_any, names_in, plain_arithmetic, pointer_buffers,
)
from ..analysis.traversal import (
    STMT_FIELDS, Path, ancestors, get_at, iter_children, nodes_along, replace_at, stmt_children, stmt_nodes,
    transform, transform_plain, walk, walk_stmts,
)
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Call,
    DeclBuffer, Div, FloorDiv, FloorMod, For, ForKind, IfThenElse, IntImm, IterVarType, Max, Min, Mod, Mul, Node,
    Or, PrimExpr, Range, Select, SeqStmt, Stmt, Sub, Var, While, const,
)
from ..nodes.base import with_fields
from ..nodes.dtype import DataType
from .base import Checks, Outcome, Rewrite, commit, register
from .checks import (
    describe, loop_dependent_domain, names_bound_between, resolve_block, resolve_loop, resolve_site,
    statements_above, statements_outside_blocks,
)
from .dataflow import (
    COMPLETE_BLOCK_DEFINITION, REDUCTION_BLOCK_DEFINITION, blocks_in_order, complete_block_code,
    bindings, conflicting_buffer, conjuncts, consumers, delete_at, fold_units, guarded_produced_region,
    indexed_scope_blocks, insertion_range, is_output_block, is_under, leaf_removal_path, loop_domains,
    loops_between, producers, program_key, reads_of, reduction_block_code, region_cover_violation, scope_children,
    scope_of, size_conditions, subtrees, updated_by, writers, writes_of,
)
from .errors import (
    BodyAnalysisError, DependenceViolationError, HasInitBlockError, IncompleteBlockError,
    InvalidArgumentError, InvalidInsertionIndexError, LoopDependentDomainError, LoopVariableInBlockError,
    NonLoopAncestorError,
    NonSingleProducerError, NotAllRequiredBlocksAreVisitedError, NotCompleteOrReductionBlockError,
    NotInSameScopeError, NotSingleReadWriteBufferError, NotStagePipelineError, OnlyLeafError,
    NonTrivialPredicateError, OpaqueAccessError, OutputBlockError, RootBlockError,
    ThreadOverlapError, UnsafeRegionError, UnsupportedRegionError,
)
from .exprs import cast as _cast, find_nodes, plain_buffer, uses_any, var_names
from .index import binds_let, derive_inline_index, derive_move_index, leaf_binds_lets
from .names import fresh_names
from .refs import as_block_ref, as_loop_ref
from .scopes import valid_scope
from .serialize import py_value

_BODY = ("body", None)
_ROOT = (_BODY, ("block", None))


# -- shared steps --------------------------------------------------------------------------

@attrs.frozen
class _Located:
    """A block resolved with its scope: realize path, realize, scope path,
    the scope's child blocks that may use a buffer the block reads or
    writes, and the block's position among them; ``keyed``: every block
    under the scope that may use one of those buffers, nested ones too, as
    ``(program_key, realize path, BlockRealize)`` in program order, where
    the name index found them with the children (else None)."""

    rpath: Path
    realize: BlockRealize
    scope: Path | None
    children: list
    position: int
    keyed: list | None = None


def _locate(chk: Checks, site, ref) -> _Located:
    bpath = resolve_block(chk, site, ref)
    if bpath == _ROOT:
        chk.stop(RootBlockError, describe(ref), f"it is the root block of the function; "
                 f"{chk.primitive} does not operate on the root block")
    rpath = bpath[:-1]
    scope = scope_of(site, rpath)
    # every question asked of the children (producers, consumers, other
    # writers, region cover) is about the buffers the block reads or writes:
    # the children that use none of them can change no answer
    realize = site.at(rpath)
    touching = reads_of(realize.block) | writes_of(realize.block)
    found = indexed_scope_blocks(site, scope, touching)
    children, keyed = found if found is not None else (scope_children(site, scope, touching), None)
    position = next((k for k, (p, _) in enumerate(children) if p == rpath), None)
    if position is None:  # under the scope but not among its child blocks (in an init)
        children, position = children + [(rpath, site.at(rpath))], len(children)
    return _Located(rpath, realize, scope, children, position, keyed)


def _names(blocks) -> str:
    return ", ".join(repr(b.name_hint) for b in blocks)


def _check_only_loops(chk: Checks, site, removal: Path, loc: _Located, subject: str) -> None:
    """Only loops lie between the statement removed and the block: the
    moved block is put under new loops alone, so a condition or a binding
    on the way would be lost (TVM drops it)."""
    for node in nodes_along(site.at(removal), loc.rpath[len(removal):])[:-1]:
        if type(node) is not For:
            what = {"IfThenElse": "an if", "LetStmt": "a let binding"}.get(type(node).__name__,
                                                                          f"a {type(node).__name__}")
            chk.stop(NonLoopAncestorError, subject,
                     f"{what} sits between the block and the loops it is taken out of; the block would not "
                     "take it to its new place", node)


def _left_loop_named(site, loc: _Located, lpath: Path) -> str | None:
    """The name of a loop between the block and its scope, not around the
    loop at ``lpath`` (nor that loop), that the block uses: an opaque
    block may name the loops around it."""
    kept = {node.loop_var.name for _, node in ancestors(site.func, lpath) if isinstance(node, For)}
    kept.add(site.at(lpath).loop_var.name)
    left = {node.loop_var.name for p, node in ancestors(site.func, loc.rpath)
            if isinstance(node, For) and (loc.scope is None or is_under(p, loc.scope))} - kept
    return uses_any(loc.realize.block, left) if left else None


def _check_leaf(chk: Checks, site, loc: _Located, subject: str) -> Path | None:
    path = leaf_removal_path(site, loc.rpath, loc.scope)
    if path is None:
        scope_name = "the function" if loc.scope is None else f"scope {site.at(loc.scope).name_hint!r}"
        chk.fail(OnlyLeafError, subject, f"it is the only leaf of {scope_name}, which removing it "
                 "would leave empty", loc.realize)
    return path


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


@attrs.frozen
class _Uses:
    """What the statements of a scope that name a buffer do with it, found
    in one walk that enters only those statements.

    ``opaque``: the buffer is used through its data pointer or matched into
    a block (buffers themselves are not entered); ``blocks``:
    ``(path, realize)`` of the blocks that name it, nested ones too, in
    program order, those inside a reduction ``init`` left out; ``tops``: the
    paths of the outermost statements that name it and are blocks or load
    it in their own expressions, in program order: what rewriting its uses
    rebuilds (every other statement that names it only leads to these)."""

    opaque: bool
    blocks: list
    tops: list


def _scope_uses(root: Stmt, path: Path, buffer: Buffer, index=None) -> _Uses:
    """The :class:`_Uses` of ``buffer`` under ``root`` (at ``path``): only
    the statements whose kept names include the buffer are entered; the
    items of a sequence that do come from the function's ``index`` where
    it can tell, else from asking each item."""
    data = buffer.data
    wanted = {buffer.name} if data is None else {buffer.name, data.name}
    opaque = False
    blocks, tops = [], []
    # (path, statement, inside an init, inside a top), each naming the buffer
    stack = [(path, root, False, False)] if mentions(root, buffer) else []
    while stack:
        p, s, in_init, inside = stack.pop()
        is_realize = isinstance(s, BlockRealize)
        if is_realize and not in_init:
            blocks.append((p, s))
        # a block's own expressions matter only for a data pointer: it is
        # inside its realize, which is rebuilt whole
        if data is not None or not (inside or is_realize or isinstance(s, Block)):
            own = STMT_FIELDS.get(type(s), ())
            for name in _field_names(type(s)):
                if name not in own:
                    loads, data_use = _scan_exprs(getattr(s, name), buffer, data)
                    opaque = opaque or data_use
                    if loads and not inside:
                        tops.append(p)
                        inside = True
        if isinstance(s, Block) and any(m.source.buffer == buffer for m in s.match_buffers):
            opaque = True
        if is_realize and not inside:
            tops.append(p)
            inside = True
        if type(s) is SeqStmt:  # the long case: a scope of many statements
            chosen = None if index is None else index.items_naming(p, wanted)
            if chosen is None:
                chosen = [k for k, child in enumerate(s.seq) if mentions(child, buffer)]
            kids = [(p + (("seq", k),), s.seq[k], in_init, inside) for k in chosen]
        else:
            kids = [(p + (step,), child, in_init or (isinstance(s, Block) and step[0] == "init"), inside)
                    for step, child in stmt_children(s) if mentions(child, buffer)]
        stack.extend(reversed(kids))
    return _Uses(opaque, blocks, tops)


def _first_masked_load(root: Stmt, buffer: Buffer) -> BufferLoad | None:
    """The first predicated vector load of ``buffer`` under ``root`` in
    program order, looked for only where the kept answer says there is one."""
    if buffer.name not in masked_vector_loads(root):
        return None
    return next((n for n in _loads_of_stmt(root, buffer)
                 if n.predicate is not None and n.dtype.lanes > 1), None)


def _scan_exprs(value, buffer: Buffer, data) -> tuple[bool, bool]:
    """``(loads it, uses its data pointer)`` for the value of one field of a
    statement: an expression, a sequence or a mapping of them, a region, a
    buffer (buffers are not entered)."""
    loads = data_use = False
    stack = [value]
    while stack:
        n = stack.pop()
        if isinstance(n, Buffer):
            continue
        if isinstance(n, Var):
            if data is not None and n == data:
                data_use = True
            continue
        if isinstance(n, Node):
            if isinstance(n, BufferLoad) and n.buffer == buffer:
                loads = True
            stack.extend(iter_children(n))
        elif isinstance(n, PVector):
            stack.extend(n)
        elif isinstance(n, PMap):
            for k, v in n.items():
                stack.append(k)
                stack.append(v)
    return loads, data_use


def _check_no_init(chk: Checks, subject: str, realize: BlockRealize) -> None:
    """compute_inline and reverse_compute_inline take blocks without an init."""
    if realize.block.init is not None:
        chk.stop(HasInitBlockError, subject, "the block has an init statement; only a block "
                 "without a reduction can be inlined", realize)


def _uses_in_scope(site, loc: _Located, buffer: Buffer) -> _Uses:
    """What the block's scope does with ``buffer`` (see :class:`_Uses`)."""
    if loc.scope is None:
        return _scope_uses(site.func.body, (_BODY,), buffer, site.index)
    return _scope_uses(site.at(loc.scope).body, loc.scope + (_BODY,), buffer, site.index)


def _check_plain_uses(chk: Checks, uses: _Uses, buffer: Buffer, subject: str) -> None:
    """The inlined buffer is used only through loads and stores in the
    scope (its uses are all rewritten): not through its data pointer, nor
    matched into a block."""
    if uses.opaque:
        chk.fail(OpaqueAccessError, subject, f"the buffer {buffer.name} is used through its data "
                 "pointer or matched into a block, so its uses cannot be rewritten")


def _blocks_between(site, loc: _Located, start: Path, end: Path, skip: tuple, touching):
    """The blocks of the block's scope that run strictly between the blocks
    at ``start`` and ``end`` in program order, leaving out those at
    ``skip`` and the blocks nested under ``start``: where an inlining or a
    move would jump over a dependence; only blocks that use a buffer of
    ``touching`` (some of those the block reads or writes)."""
    blocks = _keyed_using(site, loc, touching)
    keys = {p: key for key, p, _ in blocks if key is not None}
    first = keys[start] if start in keys else program_key(site, start)
    last = keys[end] if end in keys else program_key(site, end)
    for key, ypath, yrealize in blocks:
        if is_under(ypath, start) or ypath in skip:
            continue
        if first < (key if key is not None else program_key(site, ypath)) < last:
            yield yrealize


def _check_inferable(chk: Checks, subject: str, realize: BlockRealize) -> None:
    """The block's regions can be inferred again after its body changes:
    it uses no buffer through its data pointer."""
    if not _names_a_pointer(realize.block):
        return
    opaque = detect_access(realize.block).opaques
    if opaque:
        chk.fail(OpaqueAccessError, subject,
                 f"block {realize.block.name_hint!r} uses {opaque[0].buffer.name} through its data pointer, "
                 "so its regions cannot be inferred again after inlining", realize)


def _names_a_pointer(block: Block) -> bool:
    """Whether the data pointer of a buffer the block uses appears in it
    outside the buffers themselves: only then can access detection find an
    opaque access, so the much dearer detection is needed only then."""
    pointers = {b.data for b in pointer_buffers(block) if b.data is not None}
    if not pointers:
        return False
    stack = [block]
    while stack:
        n = stack.pop()
        if isinstance(n, Var):
            if n in pointers:
                return True
        elif not isinstance(n, Buffer):
            stack.extend(iter_children(n))
    return False


def _reinfer(block: Block, buffer: Buffer, known: frozenset, declared) -> Block:
    """The block with its regions inferred again when it declared an access
    to ``buffer`` (whose accesses were rewritten), as TVM's inliner does,
    over the buffers the function declares (:func:`_regions_over_declared`)."""
    if not any(r.buffer == buffer for r in list(block.reads) + list(block.writes)):
        return block
    reads, writes = _regions_over_declared(block, known | _region_buffers(block), declared)
    return with_fields(block, reads=reads, writes=writes)


def _region_buffers(*blocks: Block) -> frozenset:
    """The buffers the regions of ``blocks`` name."""
    return frozenset(r.buffer for b in blocks for r in list(b.reads) + list(b.writes))


def _regions_over_declared(block: Block, known: frozenset, declared) -> tuple[list, list]:
    """``access_regions(block)`` over the buffers the function declares:
    ``known`` are some of them (the parameters' buffers, those the regions
    of the blocks involved name), and ``declared()`` gives them all, at the
    cost of a walk of the function, taken only when the block accesses a
    buffer outside ``known`` (a ``T.Buffer`` over ``T.allocate_const``), so
    that an inline costs the same in a module of a thousand blocks."""
    found = _store_regions(block)
    reads, writes = found if found is not None else access_regions(block)
    if all(r.buffer in known for r in reads + writes):
        return reads, writes
    return access_regions(block, declared=declared())


_NO_DOMAIN: dict = {}


def _store_regions(block: Block) -> tuple[list, list] | None:
    """``access_regions(block)`` for a block whose body is one unmasked
    store and that has no init, allocation or view (what an inlining
    nearly always leaves): no loop or let inside relaxes or names an
    index, so each access is the point of its indices, and the regions
    are the union of those points per buffer, in the order of first use,
    as the general inference finds them. None where the block is not of
    that form, or an expression may use a buffer through its pointer or
    hides a load behind a mask; then the general inference is needed."""
    store = block.body
    if (type(store) is not BufferStore or store.predicate is not None or block.init is not None
            or block.alloc_buffers or block.match_buffers):
        return None
    reads: dict = {}
    # pre-order, the value before the store's indices, as the inference visits them
    stack = list(reversed(store.indices))
    stack.append(store.value)
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is IntImm:
            continue
        if kind is Var:
            if n.dtype.is_handle:  # perhaps a buffer's pointer: an opaque access
                return None
            continue
        if kind is BufferLoad:
            if n.predicate is not None:
                return None
            points = [_point_of(i) for i in n.indices]
            previous = reads.get(n.buffer)
            reads[n.buffer] = points if previous is None else [union(a, b) for a, b in zip(previous, points)]
            stack.extend(reversed(n.indices))
        elif kind is Call and n.op == "tir.tvm_access_ptr":
            return None
        elif isinstance(n, PrimExpr):
            # with no relaxed variable a condition narrows nothing: the
            # branches of an if_then_else are visited as any operands are
            stack.extend(reversed([c for c in iter_children(n) if isinstance(c, PrimExpr)]))
    write = BufferRegion(store.buffer, _covered([_point_of(i) for i in store.indices], store.buffer))
    return [BufferRegion(b, _covered(sets, b)) for b, sets in reads.items()], [write]


def _point_of(index: PrimExpr) -> Interval:
    """The interval of an index where no variable is relaxed: the index
    itself, unless it spans lanes or sets (a ramp, a select)."""
    if type(index) is Var or type(index) is IntImm:
        return Interval(index, index)
    return eval_interval(index, _NO_DOMAIN)


def _covered(sets: list, buffer: Buffer) -> list:
    """The region of ``buffer`` the intervals ``sets`` span, dimension by
    dimension, as access inference writes it (:func:`point_or_cover`)."""
    out = []
    for iv, dim in zip(sets, buffer.shape):
        lo = iv.lo
        if lo is not None and lo is iv.hi:  # one point: extent 1
            out.append(Range(lo, IntImm(lo.dtype, 1)))
        else:
            out.append(point_or_cover(iv, Range(IntImm(dim.dtype, 0), dim)))
    return out


def _declared_buffers(func) -> frozenset:
    """The buffers whose accesses a block's regions name, as the parser and
    TVM's inliner infer them: the parameters' buffers, every allocation,
    view and ``T.decl_buffer``, and every buffer a block's regions already
    name. A ``T.Buffer`` over a pointer (``T.allocate_const``) without a
    declaration is none of them, and stays out of the regions."""
    out = set(func.buffer_map.values())
    for s in stmt_nodes(func.body):
        if isinstance(s, Block):
            out.update(s.alloc_buffers)
            out.update(m.buffer for m in s.match_buffers)
            out.update(r.buffer for r in list(s.reads) + list(s.writes))
        elif isinstance(s, DeclBuffer):
            out.add(s.buffer)
    return frozenset(out)


def _drop_allocation(scope_block: Block, buffer: Buffer) -> Block:
    # every load and store of the buffer is gone (no data-pointer use or
    # match_buffer of it was allowed), so nothing else can use it
    if buffer not in scope_block.alloc_buffers:
        return scope_block
    return with_fields(scope_block, alloc_buffers=[b for b in scope_block.alloc_buffers if b != buffer])


def _common_prefix(a: Path, b: Path) -> Path:
    """The path of the lowest node above (or at) both paths."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return a[:k]


def _index_map(indices, iter_vars) -> dict | None:
    """Iteration variable -> dimension for indices that are distinct
    iteration variables or constants; None for any other index."""
    names = {iv.var: iv for iv in iter_vars}
    out: dict = {}
    for d, e in enumerate(indices):
        if isinstance(e, Var) and e in names and e not in out:
            out[e] = d
        elif int_value(e) is None:
            return None
    return out


def _mirrored_map(indices, iter_vars):
    """:func:`_inverse` for indices that are distinct iteration variables,
    some of them mirrored (``Y[9 - vi, vj]``: TVM's test_compute_at_rev_iter),
    or constants: ``v = c - x`` of a mirrored index ``x``. None where some
    index is anything else, or none is mirrored (the plain map reads those)."""
    ivs = {iv.var: iv for iv in iter_vars}
    dims: dict = {}  # variable -> (dimension, the constant of a mirror or None)
    for d, e in enumerate(indices):
        if int_value(e) is not None:
            continue
        mirror = _mirrored(e, ivs)
        if mirror is not None:
            atom, c = mirror[0], mirror[1].value
        else:
            form = affine_form(e)
            if form is None or form.const != 0 or len(form.terms) != 1 or form.terms[0][1] != 1:
                return None
            (atom, _), = form.terms
            c = None
        if atom not in ivs or atom in dims:
            return None
        dims[atom] = (d, c)
    if not any(c is not None for _, c in dims.values()):
        return None
    units = _unit_values(iter_vars, dims)
    if units is None:
        return None

    def mirror(xs):
        out = dict(units)
        for v, (d, c) in dims.items():
            x = _scalar_as(xs[d], v.dtype)
            out[v] = x if c is None else simplify_index(IntImm(v.dtype, c) - x)
        return out
    return mirror


def _unit_values(iter_vars, mapped) -> dict | None:
    """Values for the iteration variables ``mapped`` leaves out: each must
    have a domain of one constant point."""
    out = {}
    for iv in iter_vars:
        if iv.var in mapped:
            continue
        if int_value(iv.dom.extent) == 1 and int_value(iv.dom.min) is not None:
            out[iv.var] = iv.dom.min
        else:
            return None
    return out


class _Extent:
    """A stand-in loop over an iteration variable's domain, for :func:`detect_iter_map`."""

    __slots__ = ("min", "extent")

    def __init__(self, rng: Range):
        self.min = rng.min
        self.extent = rng.extent


def _inverse(indices, iter_vars, *, pad: bool = False):
    """How to recover the iteration variables from the indices a block
    stores (or loads) at: a function from concrete index expressions to
    ``{iteration variable: value}``, or None when the indices are not a
    bijective map of the variables.

    Indices that are distinct variables (or constants) are read off
    directly, as TVM's fast path does; otherwise they must be an iteration
    map of the variables (domains from 0) that tiles each of them whole,
    and each variable is put back together from its slices. With ``pad``,
    a variable whose extent its slices do not divide (``v // 16`` and
    ``v % 16`` over ``v < 127``) is read over its extent rounded up to
    their multiple: the map is then one to one on the real domain, and the
    caller must bound the values it recovers to that domain.
    """
    dims = _index_map(indices, iter_vars)
    units = None if dims is None else _unit_values(iter_vars, dims)
    if units is not None:
        def direct(xs):
            out = dict(units)
            for v, d in dims.items():
                # an index of another dtype (a consumer on int64 loops)
                # stands for the variable in the variable's own dtype
                out[v] = _scalar_as(xs[d], v.dtype)
            return out
        return direct
    mirrored = _mirrored_map(indices, iter_vars)
    if mirrored is not None:
        return mirrored
    if any(int_value(iv.dom.min) != 0 or int_value(iv.dom.extent) is None for iv in iter_vars):
        return None
    consts = {iv.var: iv.dom.min for iv in iter_vars if int_value(iv.dom.extent) == 1}
    loops = {iv.var.name: _Extent(iv.dom) for iv in iter_vars if iv.var not in consts}
    sums = detect_iter_map(list(indices), loops, "bijective")
    if sums is None and pad:
        padded = _padded_domains(indices, [iv for iv in iter_vars if iv.var not in consts])
        if padded is not None:
            sums = detect_iter_map(list(indices), padded, "bijective")
    if sums is None:
        return None
    by_name = {iv.var.name: iv.var for iv in iter_vars}

    def rebuild(xs):
        parts: dict = {}
        for x, total in zip(xs, sums):
            top = max((a.scale for a in total.args), default=None)
            # the base may hold unit variables (vc * 2 with vc of extent 1):
            # they take their one value, as everywhere in the inverse
            base = simplify_index(substitute(total.base, consts)) if consts else total.base
            offset = simplify_index(x - base) if int_value(base) != 0 else x
            for a in total.args:
                piece = offset if a.scale == 1 else offset // a.scale
                if a.scale != top:
                    piece = piece % a.extent
                if a.lower_factor != 1:
                    piece = piece * a.lower_factor
                var = by_name[a.source]
                parts[var] = piece if var not in parts else parts[var] + piece
        out = dict(consts)
        out.update({v: _scalar_as(simplify_index(e), v.dtype) for v, e in parts.items()})
        return out
    return rebuild


def _scalar_as(e, dtype):
    """A scalar index ``e`` in ``dtype``; a vector index (a Ramp a masked
    vector store indexes by) as it is."""
    return e if e.dtype.lanes != 1 else _cast(e, dtype)


def _conjuncts(cond):
    """The terms of ``cond`` as a chain of ``and``."""
    if isinstance(cond, And):
        return [*_conjuncts(cond.a), *_conjuncts(cond.b)]
    return [cond]


def _padded_domains(indices, iter_vars) -> dict | None:
    """Stand-in loops over the variables' domains, each extent rounded up
    to a multiple of the divisors it is sliced by in ``indices`` (the
    least common multiple of ``c`` in ``v // c`` and ``v % c``, and of
    ``a * b`` in ``v // a % b``); None when no extent changes."""
    multiple = {iv.var.name: 1 for iv in iter_vars}
    for index in indices:
        for node in walk(index):
            if not isinstance(node, (FloorDiv, FloorMod)):
                continue
            c = int_value(node.b)
            inner = node.a
            if isinstance(node, FloorMod) and isinstance(inner, FloorDiv) and int_value(inner.b):
                c = None if c is None else c * int_value(inner.b)
                inner = inner.a
            if c is None or c <= 0 or not isinstance(inner, Var) or inner.name not in multiple:
                continue
            multiple[inner.name] = math.lcm(multiple[inner.name], c)
    out, changed = {}, False
    for iv in iter_vars:
        ext = int_value(iv.dom.extent)
        m = multiple[iv.var.name]
        padded = -(-ext // m) * m
        changed |= padded != ext
        out[iv.var.name] = _Extent(Range(iv.dom.min, IntImm(iv.dom.extent.dtype, padded)))
    return out if changed else None


def _keyed_using(site, loc: _Located, buffers) -> list:
    """``blocks_in_order(site, loc.scope, buffers)`` for ``buffers`` among
    those the block reads or writes, as :func:`_keyed_blocks` gives them
    (with their program keys where :func:`_locate` found them): picked
    from the blocks found for all those buffers rather than looked for
    again. A block is kept as the index would find it for ``buffers``
    alone: the index lists it as mentioning one of them, and it does."""
    if loc.keyed is None:
        return [(None, p, r) for p, r in blocks_in_order(site, loc.scope, buffers)]
    names = []
    for buf in buffers:
        names.append(buf.name)
        if buf.data is not None:
            names.append(buf.data.name)
    listed = site.index.blocks_mentioning(names)
    return [item for item in loc.keyed
            if item[2].block.name_hint in listed and mentions_any(item[2], buffers)]


def _keyed_blocks(site, loc: _Located):
    """Every block under the block's scope that may use a buffer it reads
    or writes, nested ones too, in program order, as ``(program_key or
    None, realize path, BlockRealize)``: those :func:`_locate` found with
    their keys, else :func:`blocks_in_order` (keys left to the caller)."""
    if loc.keyed is not None:
        return loc.keyed
    block = loc.realize.block
    return [(None, p, r) for p, r in blocks_in_order(site, loc.scope, reads_of(block) | writes_of(block))]


# -- compute_at and reverse_compute_at --------------------------------------------------------

def _check_flags(chk: Checks, preserve_unit_loops, index) -> None:
    if not isinstance(preserve_unit_loops, bool):
        chk.fail(InvalidArgumentError, "argument preserve_unit_loops",
                 f"expected True or False, got {preserve_unit_loops!r}")
    if isinstance(index, bool) or not isinstance(index, int):
        chk.fail(InvalidArgumentError, "argument index", f"expected an int, got {index!r}")


def _shift(e: PrimExpr, ivs: dict | None = None):
    """``(var, offset)`` when ``e`` is a variable plus a constant, else None.
    With ``ivs`` (the block's iteration variables), the offset may also be
    an expression of none of them (``v + index`` of a run-time start, as
    TVM's iterator maps take a symbolic base): then ``offset`` is that
    expression."""
    if isinstance(e, Var):
        return e, 0
    e = simplify_index(e)
    if isinstance(e, Var):
        return e, 0
    if isinstance(e, (Add, Sub)) and isinstance(e.a, Var) and int_value(e.b) is not None:
        k = int_value(e.b)
        return e.a, (k if isinstance(e, Add) else -k)
    if ivs is not None and isinstance(e, (Add, Sub)) and e.dtype.is_integer:
        names = {v.name for v in ivs}
        if isinstance(e.a, Var) and e.a in ivs and not var_names(e.b) & names:
            return e.a, (e.b if isinstance(e, Add) else Sub(IntImm(e.b.dtype, 0), e.b))
        if isinstance(e, Add) and isinstance(e.b, Var) and e.b in ivs and not var_names(e.a) & names:
            return e.b, e.a
    return None


def _mirrored(e: PrimExpr, ivs: dict):
    """``(var, c)`` when ``e`` is ``c - var`` for an iteration variable of
    ``ivs`` and an integer constant ``c`` (a backward index, ``T[1 - v]``),
    else None."""
    form = affine_form(e)
    if form is None or len(form.terms) != 1 or not e.dtype.is_integer:
        return None
    (var, coeff), = form.terms
    if coeff != -1 or not isinstance(var, Var) or var not in ivs:
        return None
    return var, IntImm(e.dtype, form.const)


def _solve_once(chk, subject: str, realize, doms: dict, var, mine: Interval, proof: dict) -> None:
    """Set ``doms[var]`` to ``mine``, the values reverse_compute_at solved
    for ``var`` from one region: another region must have solved the same
    (UnsupportedRegionError otherwise)."""
    old = doms.get(var)
    if old is not None and not (_same(old.lo, mine.lo, proof) and _same(old.hi, mine.hi, proof)):
        chk.stop(UnsupportedRegionError, subject,
                 f"the producers under the loop write what the block reads at {var.name} over different "
                 "ranges; no one domain fits them all", realize)
    doms[var] = mine


def _divided(e: PrimExpr, ivs: dict):
    """``(var, c)`` when ``e`` is ``var // c`` for an iteration variable of
    ``ivs`` (a domain from 0) and a constant ``c`` above 1, else None."""
    if type(e) is FloorDiv and type(e.a) is Var and e.a in ivs and int_value(e.b) is not None \
            and int_value(e.b) > 1 and int_value(ivs[e.a].dom.min) == 0:
        return e.a, int_value(e.b)
    return None


def _fused_write(region, needed, ivs: dict, doms: dict) -> bool:
    """compute_at of a block writing one element at indices that are an
    iteration map of its iteration variables other than variable plus
    constant (``B[vi // 4, vi % 4]``, as TVM solves with its affine
    inverse): each variable's domain runs from its value at the needed
    box's first corner to its value at the last, which covers every element
    of the box (an element's variables are a dense sum of its indices'
    pieces, each inside the piece's range). Updates ``doms`` and returns
    True, or returns False when the indices are not such a map."""
    mins = [r.min for r in region.region]
    if all(int_value(r.extent) == 1 for r in region.region) and all(
            _shift(m) is not None or int_value(m) is not None for m in mins):
        return False  # the per-dimension solution applies
    if any(int_value(r.extent) != 1 for r in region.region) or any(
            iv.lo is None or iv.hi is None for iv in needed):
        return False
    used = set().union(*[var_names(m) for m in mins])
    chosen = [iv for v, iv in ivs.items() if v.name in used]
    if not chosen:
        return False
    # one piece of one variable per index: each piece grows with its index,
    # so the box's corners give each variable's least and greatest value (a
    # piece taken modulo would not)
    if any(int_value(iv.dom.min) != 0 or int_value(iv.dom.extent) is None for iv in chosen):
        return False
    loops = {iv.var.name: _Extent(iv.dom) for iv in chosen if int_value(iv.dom.extent) != 1}
    sums = detect_iter_map(mins, loops, "bijective")
    mapping = _inverse(mins, chosen)
    if sums is None or mapping is None or any(len(total.args) > 1 for total in sums):
        return False
    first = mapping([iv.lo for iv in needed])
    last = mapping([iv.hi for iv in needed])
    for iv in chosen:
        mine = Interval(simplify_index(first[iv.var]), simplify_index(last[iv.var]))
        old = doms.get(iv.var)
        doms[iv.var] = mine if old is None else union(old, mine)
    return True


def _exact_read(region, needed, ivs: dict, proof: dict) -> dict | str | None:
    """reverse_compute_at of a block reading one element at indices that
    are a bijective iteration map of its iteration variables
    (``temp[v // 16, v % 16]``, as TVM solves with its affine inverse):
    ``{variable: Interval}`` of the instances that read exactly the box
    ``needed`` the producers write in one iteration, or None when those
    instances are not one interval of each variable.

    A variable is the mixed-radix number of its slices, so the instances
    reading a box are an interval of it when, from its lowest slice up,
    the box takes each slice whole, then one range of one slice, then one
    value of every slice above; a variable taken whole everywhere is left
    out (its whole domain). Anything else would run instances reading
    elements the producers have not written yet: then the name of the
    first variable whose instances are not one range."""
    if any(int_value(r.extent) != 1 for r in region.region) or any(
            iv.lo is None or iv.hi is None for iv in needed):
        return None
    mins = [r.min for r in region.region]
    used = set().union(*[var_names(m) for m in mins])
    chosen = [iv for v, iv in ivs.items() if v.name in used]
    if not chosen or any(int_value(iv.dom.min) != 0 or int_value(iv.dom.extent) is None
                         for iv in chosen):
        return None
    loops = {iv.var.name: _Extent(iv.dom) for iv in chosen if int_value(iv.dom.extent) != 1}
    sums = detect_iter_map(mins, loops, "bijective")
    if sums is None:
        # digits of each variable that tile it past its end (v // 16 and v
        # % 16 of v in range(127), which no iteration map reads: its top
        # digit does not divide the extent), read one index at a time; that
        # they are one mixed radix of each variable is checked below
        sums = [detect_iter_map([m], loops, "affine") for m in mins]
        if any(t is None or len(t[0].args) > 1 for t in sums):
            return None
        sums = [t[0] for t in sums]
        digits: dict = {}  # variable name -> [lower, upper) of its place values
        for total in sums:
            for a in total.args:
                upper = float("inf") if a.extent is None else a.lower_factor * a.extent
                digits.setdefault(a.source, []).append((a.lower_factor, upper))
        if not all(slices_chain(parts) for parts in digits.values()):
            return None  # not the digits of one mixed radix (a repeat, T[v // 2], is read elsewhere)
    slices: dict = {}  # variable name -> [(lower factor, extent, digit)]
    for total, box in zip(sums, needed):
        if not total.args:
            continue
        args = sorted(total.args, key=lambda a: a.scale)
        span = args[-1].scale * args[-1].extent
        lo, hi = simplify_index(box.lo - total.base), simplify_index(box.hi - total.base)
        # the bounds in the box's own width (an int64 program's are int64)
        zero, top = IntImm(lo.dtype, 0), IntImm(hi.dtype, span - 1)
        if can_prove(LE(lo, zero), proof) and can_prove(GE(hi, top), proof):
            digits = [None] * len(args)  # the whole slice
        elif _same(lo, hi, proof):
            dt = lo.dtype
            digits = [(d, d) for d in (
                simplify_index(FloorMod(FloorDiv(lo, IntImm(dt, a.scale)), IntImm(dt, a.extent))
                               if a is not args[-1] else FloorDiv(lo, IntImm(dt, a.scale))) for a in args)]
        elif len(args) == 1 and can_prove(GE(lo, zero), proof) and can_prove(LE(hi, top), proof):
            digits = [(lo, hi)]
        else:
            return ", ".join(sorted(a.source for a in args))
        for a, digit in zip(args, digits):
            slices.setdefault(a.source, []).append((a.lower_factor, a.extent, digit))
    out = {}
    for iv in chosen:
        parts = sorted(slices.get(iv.var.name, []), key=lambda p: p[0])
        ext = int_value(iv.dom.extent)
        if not parts:
            continue
        # the slices may reach past the domain (a producer over 128 rows
        # of 16, a consumer over 127): the instances past it do not exist
        reach = parts[-1][0] * parts[-1][1]
        if reach < ext or parts[-1][0] * (parts[-1][1] - 1) >= ext:
            return None  # the slices fall short of the domain, or a whole top digit lies past it
        t = next((k for k, p in enumerate(parts) if p[2] is not None), None)
        if t is None:
            continue  # taken whole: its whole domain
        above = parts[t + 1:]
        if any(p[2] is None or not _same(p[2][0], p[2][1], proof) for p in above):
            return iv.var.name
        base = sum((p[2][0] * p[0] for p in above), IntImm(iv.var.dtype, 0))
        lower, _, (dlo, dhi) = parts[t]
        lo = simplify_index(base + dlo * lower)
        hi = simplify_index(base + dhi * lower + (lower - 1))
        # (instances past the domain, some or all of an iteration's, are
        # left out by the block's predicate, as TVM writes it: T.where(i0 *
        # 16 + ax0 < 127))
        out[iv.var] = Interval(lo, hi)
    return out


def _runs_wholly_before(site, scope: Path | None, path: Path, lpath: Path) -> bool:
    """Whether the statement at ``path`` runs before the loop at ``lpath``
    starts, every time: it comes first in program order, and no loop of
    more than one iteration below the scope holds both."""
    if program_key(site, path) >= program_key(site, lpath):
        return False
    k = 0
    while k < min(len(path), len(lpath)) and path[k] == lpath[k]:
        k += 1
    # nodes_along walks down once; nodes[j] is the node at path[:j]
    nodes = nodes_along(site.func, path[:k])[0 if scope is None else len(scope):k]
    return not any(isinstance(n, While) or (isinstance(n, For) and int_value(n.extent) != 1) for n in nodes)


def _check_every_instance_runs(chk, site, loc, doms: dict, proof: dict, subject: str) -> None:
    """Over all iterations of the loops above the new place, the domains
    solved from what the producers write must reach every instance of the
    consumer that runs: one whose reads fall only outside the buffer (a
    padding block reading ``T[v - 1]`` under ``if 1 <= v``) depends on no
    producer and would otherwise never run (TVM drops those instances).
    Instances of the domain that the block's binding never reaches (a copy
    of the rows one part of a partitioned loop writes, in a domain as wide
    as the buffer) did not run before either, and need not run after."""
    loops = None  # the loops' intervals, made when an end is not a loop variable over literals

    def interval(end: PrimExpr) -> Interval:
        nonlocal loops
        got = _literal_loop(end, proof)
        if got is None:
            if loops is None:
                loops = {v: Interval.from_range(r) for v, r in proof.items()}
            got = eval_interval(end, loops)
        return got

    reach = None
    for iv in loc.realize.block.iter_vars:
        dom = doms.get(iv.var)
        if dom is None:
            continue  # the whole domain
        lo = None if dom.lo is None else interval(dom.lo).lo
        hi = None if dom.hi is None else interval(dom.hi).hi
        first = iv.dom.min
        last = _domain_last(iv.dom)
        if (lo is not None and not index_at_most(lo, first, proof)) or \
                (hi is not None and not index_at_most(last, hi, proof)):
            if reach is None:
                reach = _binding_reach(site, loc)
            ran = reach.get(iv.var)
            if ran is not None and lo is not None and hi is not None and \
                    index_at_most(lo, ran[0], proof) and index_at_most(ran[1], hi, proof):
                continue
            if lo is not None and hi is not None and _past_bounds_outside(loc.realize.block, iv.var, lo, hi, proof):
                continue
            chk.stop(UnsupportedRegionError, subject,
                     f"the producers under the loop write what the block reads for {iv.var.name} in "
                     f"[{'...' if lo is None else lo.script()}, {'...' if hi is None else hi.script()}] "
                     f"only, of its domain [{first.script()}, {last.script()}]: the other instances "
                     "(reading elements no producer writes, such as padding) would never run",
                     loc.realize)


def _past_bounds_outside(block: Block, var: Var, lo: PrimExpr, hi: PrimExpr, proof: dict) -> bool:
    """Whether every instance of ``block`` whose ``var`` lies outside
    ``[lo, hi]`` accesses an element past a buffer's bounds, whatever it
    reads: the body is one store that always loads (or stores)
    ``buf[..., var + off, ...]``, and ``[lo, hi]`` holds the values
    ``[-off, extent - 1 - off]`` that keep that index inside the buffer
    (a slice at a run-time start, ``A[v + index]``). The program is
    undefined for such an instance (TVM takes every access to be in
    bounds), so it need not run."""
    body = block.body
    if not isinstance(body, BufferStore):
        return False
    ivs = {iv.var: iv for iv in block.iter_vars}
    accesses = [(body.buffer, body.indices)] + [(x.buffer, x.indices) for x in _always_loaded(body)]
    for buf, indices in accesses:
        if len(indices) != len(buf.shape):
            continue
        for index, extent in zip(indices, buf.shape):
            shifted = _shift(index, ivs)
            if shifted is None or shifted[0] != var:
                continue
            dt = index.dtype
            off = IntImm(dt, shifted[1]) if isinstance(shifted[1], int) else shifted[1]
            first = simplify_index(IntImm(dt, 0) - off)
            last = simplify_index(_cast(extent, dt) - IntImm(dt, 1) - off)
            if index_at_most(lo, first, proof) and index_at_most(last, hi, proof):
                return True
    return False


def _always_loaded(store: BufferStore) -> list:
    """The loads evaluated whenever ``store`` runs: those of its indices and
    value, not inside a branch of ``T.if_then_else`` nor the right side of
    ``and`` / ``or`` (``T.Select`` evaluates both of its sides)."""
    out: list = []

    def visit(e) -> None:
        if isinstance(e, BufferLoad):
            out.append(e)
        if isinstance(e, Call) and e.op == "tir.if_then_else":
            visit(e.args[0])
            return
        if isinstance(e, (And, Or)):
            visit(e.a)
            return
        if isinstance(e, PrimExpr):
            for child in iter_children(e):
                visit(child)

    for x in list(store.indices) + [store.value]:
        visit(x)
    return out


def _literal_loop(e: PrimExpr, proof: dict) -> Interval | None:
    """``eval_interval(e, loops)`` over the intervals of the loops of
    ``proof`` where ``e`` is the variable of one of them whose interval
    has literal ends (a bound a consumer reads at a loop variable): that
    interval, as the evaluation gives it, without building the others;
    None otherwise."""
    if type(e) is not Var:
        return None
    rng = proof.get(e)
    if rng is None:
        return None
    got = Interval.from_range(rng)
    return got if type(got.lo) is IntImm and type(got.hi) is IntImm else None


def _names_read(block: Block) -> set[str]:
    """The names of the variables the block reads: everywhere in its
    body and init but in the indices its stores write at."""
    out: set[str] = set()
    stack = [block.body] + ([block.init] if block.init is not None else [])
    while stack:
        n = stack.pop()
        if isinstance(n, Var):
            out.add(n.name)
        elif isinstance(n, BufferStore):
            stack.append(n.value)
            if n.predicate is not None:
                stack.append(n.predicate)
        else:
            stack.extend(iter_children(n))
    return out


def _binding_reach(site, loc) -> dict:
    """Iteration variable -> (first, last) literal values its binding takes
    over the loops around the block, where both are known; the instances
    that run lie within them (and within the domain)."""
    doms = loop_domains(site, loc.rpath, inclusive=False)
    ranges = _constant_ranges(doms)
    # the loops of run-time extents (a copy back clamped to the buffer,
    # ``range(T.min(i_0 * 256 + 251, 1023) - T.max(i_0 * 256, 0) + 1)``),
    # from the innermost out: the ends of the binding over them, simplified
    # (the clamp's ``T.max`` cancels), are bounded over the others
    symbolic = {v: Interval.from_range(r) for v, r in doms.items() if v.name not in ranges}
    out = {}
    for iv, value in zip(loc.realize.block.iter_vars, loc.realize.iter_values):
        got = expr_bounds(value, ranges)
        if got is None and symbolic and uses_any(value, {v.name for v in symbolic}) is not None:
            ends = eval_interval(value, dict(reversed(list(symbolic.items()))))
            if ends.lo is not None and ends.hi is not None:
                env = {v: ranges[v.name] for v in doms if v.name in ranges}
                lo = const_interval(simplify_expr(ends.lo), env)
                hi = const_interval(simplify_expr(ends.hi), env)
                if lo is not UNBOUNDED and hi is not UNBOUNDED:
                    got = (lo[0], hi[1])
        if got is not None:
            out[iv.var] = (IntImm(iv.var.dtype, got[0]), IntImm(iv.var.dtype, got[1]))
    return out


def _domain_last(dom: Range) -> PrimExpr:
    """``simplify_index(dom.min + dom.extent - 1)``, the last value of an
    iteration variable's domain. Both ends literals of one integer dtype
    (nearly every domain) fold to the literal the operators and the
    simplifier would write, without building the sum; a sum that leaves
    the dtype stays unfolded there, and takes the general path."""
    lo, ext = dom.min, dom.extent
    if type(lo) is IntImm and type(ext) is IntImm and lo.dtype == ext.dtype and lo.dtype.is_int:
        end = lo.value + ext.value
        # with a positive extent, end - 1 lies between lo and end: both fit
        # the dtype when end does not pass its greatest value
        if ext.value >= 1 and end <= lo.dtype.max_value():
            return IntImm(lo.dtype, end - 1)
    return simplify_index(lo + ext - 1)


def _tile(rng: Range, ivs: dict):
    """``(var, scale, offset, extent)`` when ``rng`` is the tile ``[var *
    scale + offset, ... + extent)`` of an iteration variable, constant
    ``scale`` and ``extent`` with ``1 <= |scale| <= extent`` (so the tiles
    of consecutive values leave no gap; a negative scale runs backwards)
    and not the plain element ``var + offset``; None otherwise."""
    e = int_value(rng.extent)
    if e is None or e < 1:
        return None
    if e == 1 and type(rng.min) is Var:
        # one element at a variable (the commonest write): its form is the
        # variable once, the plain element, or no form at all
        return None
    return _affine_tile(rng, ivs, e)


def _affine_tile(rng: Range, ivs: dict, e: int):
    """:func:`_tile` of a range of literal extent ``e >= 1``, read off the
    affine form of its start."""
    form = affine_form(rng.min)
    if form is None or len(form.terms) != 1:
        return None
    (var, scale), = form.terms
    if not isinstance(var, Var) or var not in ivs or not 1 <= abs(scale) <= e or (scale == 1 and e == 1):
        return None
    return var, scale, form.const, e


def _minus(e: PrimExpr | None, k: int | PrimExpr) -> PrimExpr | None:
    if e is None or (isinstance(k, int) and k == 0):
        return e
    return simplify_index(e - k)


@attrs.frozen
class _Placement:
    """Where and how the moved block goes: the target loop, the position
    among its statements, the statement to delete, the domain of each
    iteration variable (Interval, None ends: its whole domain), the loop
    domains to prove under, and the scope."""

    lpath: Path
    loop: For
    position: int
    removal: Path
    loc: _Located
    doms: dict
    proof: dict
    guard: object = None  # a condition of the kept loops the moved block runs under, or None
    # conditions of the block's predicate in its iteration variables, which
    # the domains do not imply: the moved block keeps them
    kept: tuple = ()


def _rank(terms) -> PrimExpr | None:
    """The rank of a point in a row-major box, the first of ``terms`` (value,
    start, extent) the slowest: ``sum((value - start) * stride)``, each
    stride the product of the extents after it; None for no term of more
    than one value, or a value that is not an integer (or, past a run-time
    extent, not of the extent's dtype). The stride is a literal while the
    extents are; a run-time one makes it an expression."""
    total, stride = None, 1
    for value, low, extent in reversed(terms):
        size = int_value(extent)
        if size == 1:
            continue
        if not value.dtype.is_integer:
            return None
        if isinstance(stride, int):
            term = (value - IntImm(value.dtype, low)) * IntImm(value.dtype, stride)
        elif extent.dtype != value.dtype:
            return None
        else:
            term = (value - IntImm(value.dtype, low) if low else value) * stride
        total = term if total is None else total + term
        if isinstance(stride, int) and size is not None:
            stride *= size
        elif isinstance(stride, int):
            if extent.dtype != value.dtype:
                return None
            stride = extent if stride == 1 else IntImm(extent.dtype, stride) * extent
        else:
            stride = stride * extent
    return total


def _runs_its_domain_in_order(realize: BlockRealize, loops: list[For]) -> bool:
    """Whether the loops around a block (outermost first) run every instance
    of its domain once, in ascending order of its iteration variables (the
    first the slowest), as the nest of its whole domain does: constant
    extents whose products agree, and the instance's rank in the
    domain equal to the iteration's rank in the loops (``vi = f // 64, vj =
    f % 64`` under a fuse ``f`` of the two). A predicate may cut the loops
    to the domain's size by their rank (a fuse split again without
    dividing: ``f_0 * 8 + f_1 < 30``): they then run the first instances,
    which are all of them."""
    ivs = realize.block.iter_vars
    sizes = [int_value(iv.dom.extent) for iv in ivs] + [int_value(lp.extent) for lp in loops]
    if any(int_value(lp.min) is None for lp in loops) or any(int_value(iv.dom.min) is None for iv in ivs):
        return False
    if any(v is None for v in sizes):
        return _runs_its_symbolic_domain_in_order(realize, loops)
    count = math.prod(sizes[:len(ivs)])
    cut = None
    if not _is_true(realize.predicate):
        cut = realize.predicate
        if not isinstance(cut, LT) or int_value(cut.b) != count or count > math.prod(sizes[len(ivs):]):
            return False
    elif count != math.prod(sizes[len(ivs):]):
        return False
    ranges = {lp.loop_var.name: (int_value(lp.min), int_value(lp.min) + int_value(lp.extent) - 1) for lp in loops}
    if len(ranges) != len(loops):
        return False

    mine = _rank([(v, int_value(iv.dom.min), iv.dom.extent) for iv, v in zip(ivs, realize.iter_values)])
    theirs = _rank([(lp.loop_var, int_value(lp.min), lp.extent) for lp in loops])
    if mine is None or theirs is None:
        return mine is None and theirs is None and cut is None
    if mine.dtype != theirs.dtype:
        return False
    theirs = simplify_index(theirs, ranges)
    if cut is not None and not (cut.a.dtype == theirs.dtype and prove_equal(simplify_index(cut.a, ranges), theirs)):
        return False
    return prove_equal(simplify_index(mine, ranges), theirs)


def _accesses_its_element_only(block: Block, stores: list | None = None) -> bool:
    """Whether every access of a buffer the block writes (a tuple reduction
    writes several) is at the one index of its stores, unpredicated: each
    instance touches its own element of what it writes, so instances of
    different elements may run in any order."""
    if stores is None:
        stores = [n for n in walk(block.body) if isinstance(n, BufferStore)]
    if not stores:
        return False
    index = list(stores[0].indices)
    written = {n.buffer for n in stores} | {w.buffer for w in block.writes}
    roots = [block.body] + ([block.init] if block.init is not None else [])
    return not any(isinstance(n, (BufferLoad, BufferStore)) and n.buffer in written
                   and (list(n.indices) != index or n.predicate is not None)
                   for root in roots for n in walk(root))


def _runs_each_element_in_order(part: BlockRealize, loops: list[For]) -> bool:
    """Whether ``loops`` run the whole domain of ``part`` (a block with some
    of its iteration variables) once, in the order of another arrangement
    of its variables that keeps its reduction variables in their order
    (``vi1_1 = f % 32, vk = f // 32``: the reduction variable the slowest),
    while each element the block writes is that of one value of its
    data-parallel variables: every access of a buffer it writes is at the
    indices of its store, which name all of them. The whole-domain nest
    then runs each element's reduction steps in the loops' order, and the
    elements apart from one another, so only their interleaving changes."""
    ivs = list(part.block.iter_vars)
    if len(ivs) > 4 or not _is_true(part.predicate):
        return False
    block = part.block
    stores = [n for n in walk(block.body) if isinstance(n, BufferStore)]
    if not stores or block.match_buffers or block.alloc_buffers:
        return False
    index = list(stores[0].indices)
    # (a variable of one value names one element whether indexed or not)
    spatial = {iv.var.name for iv in ivs if iv.iter_type is IterVarType.DataPar and int_value(iv.dom.extent) != 1}
    if not spatial <= set().union(*[var_names(x) for x in index]):
        return False
    if not _accesses_its_element_only(block, stores):
        return False
    reductions = [k for k, iv in enumerate(ivs) if iv.iter_type is not IterVarType.DataPar]
    for order in itertools.permutations(range(len(ivs))):
        if list(order) == sorted(order) or [k for k in order if k in reductions] != reductions:
            continue
        arranged = attrs.evolve(part, iter_values=[part.iter_values[k] for k in order],
                                block=attrs.evolve(part.block, iter_vars=[ivs[k] for k in order]))
        if _runs_its_domain_in_order(arranged, loops):
            return True
    return False


def _loop_sharing_groups(bound: list) -> list[list[int]]:
    """The positions of the iteration variables joined into groups by the
    loops their bindings read (``bound``: the names of those loops, per
    variable): two share a group when they share a loop, directly or
    through others. A variable that reads no loop is in no group."""
    parent = list(range(len(bound)))

    def root(k):
        while parent[k] != k:
            k = parent[k]
        return k

    for k in range(len(bound)):
        for w in range(k):
            if bound[k] & bound[w]:
                parent[root(k)] = root(w)
    groups: dict = {}
    for k in range(len(bound)):
        if bound[k]:
            groups.setdefault(root(k), []).append(k)
    return list(groups.values())


def _ordered_groups(realize: BlockRealize, bound: list, loops: list[For], own: set, doms: dict, free) -> set:
    """The names of the iteration variables that share loops with one
    another only in groups that run their whole domains in order: each
    group's variables are free (or the producers give them their whole
    domain), bound to loops of their own (``own``: not around the target
    loop) that no other variable reads, under no predicate but on those
    loops, and the loops run the group's domain once, in its order
    (:func:`_runs_its_domain_in_order`: ``v_ax2 = f // 5, v_ax3 = f % 5``).
    The whole-domain nest then runs each group's values as the loops did.
    Empty where a free variable outside the groups reads a loop: its own
    loop would interleave with theirs in another order."""
    ivs = realize.block.iter_vars

    def whole(k):
        iv = ivs[k]
        if free(iv):
            return True
        dom = doms.get(iv.var)
        last = simplify_index(iv.dom.min + iv.dom.extent - 1)
        return dom is not None and dom.lo is not None and dom.hi is not None and \
            prove_equal(simplify_index(dom.lo), simplify_index(iv.dom.min)) and \
            prove_equal(simplify_index(dom.hi), last)

    pred_loops = var_names(realize.predicate) & {lp.loop_var.name for lp in loops}
    out: set = set()
    for members in _loop_sharing_groups(bound):
        if len(members) < 2:
            continue
        reach = set().union(*[bound[k] for k in members])
        if not reach <= own or not all(whole(k) for k in members) or (pred_loops and not pred_loops <= reach):
            continue
        part = attrs.evolve(realize, iter_values=[realize.iter_values[k] for k in members],
                            block=attrs.evolve(realize.block, iter_vars=[ivs[k] for k in members]))
        group_loops = [lp for lp in loops if lp.loop_var.name in reach]
        if _runs_its_domain_in_order(part, group_loops) or _runs_each_element_in_order(part, group_loops):
            out |= {ivs[k].var.name for k in members}
    if any(free(iv) and iv.var.name not in out and bound[k] for k, iv in enumerate(ivs)):
        return set()
    return out


def _group_runs_its_box(pairs: list, bound: list, k: int, around: dict) -> bool:
    """Whether the iteration variables that share loops with variable
    ``k`` (``pairs[k]``), directly or through one another, ran every point
    of the box of their domains, each once: their binding is a bijective
    map of those loops (``f // s``, ``f % s`` of a fuse over ``n * s``),
    and the loops run as many iterations as the box has points, so the
    points it gives (inside the domains, as every binding's) are all of
    them. A nest over any part of that box then runs only instances the
    block ran (in another order: its caller asks that each instance
    accesses its own element of what it writes). ``bound``: the names of the loops (of ``around``, name ->
    (path, loop)) each variable's binding reads."""
    members = next(g for g in _loop_sharing_groups(bound) if k in g)
    loops = {name: around[name][1] for w in members for name in bound[w]}
    values = [pairs[w][1] for w in members]
    if not is_bijective(values, loops):
        return False
    points = [pairs[w][0].dom.extent for w in members]
    steps = [loop.extent for loop in loops.values()]
    return _same_product(points, steps)


def _same_product(a: list, b: list) -> bool:
    """Whether two lists of extents have one product, as written: their
    constants multiply to one number and their other factors are the same
    (``[n, s]`` and ``[n * s]``)."""
    def key(extents):
        const, factors = 1, []
        for e in extents:
            c, fs = _product_key(e)
            const *= c
            factors += fs
        return const, sorted(factors, key=repr)
    return key(a) == key(b)


def _runs_its_symbolic_domain_in_order(realize: BlockRealize, loops: list[For]) -> bool:
    """:func:`_runs_its_domain_in_order` where an extent is known at run time
    only (``vj = f // n, vk = f % n`` under a fuse ``f`` of ``range(128)``
    and ``range(n)``): the ranks, with strides the products of the extents,
    must be proven equal, and so must the numbers of instances and of
    iterations; or, under a guard ``rank < count`` (a fuse split again
    without dividing: ``f_0 * 8 + f_1 < m * n``), the iterations must be
    at least the instances, of which the loops then run the first."""
    cut = None if _is_true(realize.predicate) else realize.predicate
    if cut is not None and not isinstance(cut, LT):
        return False
    ivs = realize.block.iter_vars
    mine = _rank([(v, int_value(iv.dom.min), iv.dom.extent) for iv, v in zip(ivs, realize.iter_values)])
    theirs = _rank([(lp.loop_var, int_value(lp.min), lp.extent) for lp in loops])
    if mine is None or theirs is None:
        return False

    def product(extents):
        # outermost first, as fuse writes the extent it makes (m * n)
        out = None
        for e in extents:
            if int_value(e) != 1:
                out = e if out is None else out * e
        return out

    count = product(iv.dom.extent for iv in ivs)
    steps = product(lp.extent for lp in loops)
    if mine.dtype != theirs.dtype or count is None or steps is None or count.dtype != steps.dtype:
        return False
    ranges = {lp.loop_var.name: (int_value(lp.min), int_value(lp.min) + int_value(lp.extent) - 1)
              for lp in loops if int_value(lp.extent) is not None}
    # (simplify_expr merges f // n * n + f % n at a symbolic n; the index
    # normaliser only at constants)
    theirs = simplify_index(simplify_expr(theirs), ranges)
    if cut is None:
        if not prove_equal(simplify_index(count), simplify_index(steps)):
            return False
    elif not (cut.a.dtype == theirs.dtype and cut.b.dtype == count.dtype
              and prove_equal(simplify_index(cut.b), simplify_index(count))
              and prove_equal(simplify_index(simplify_expr(cut.a), ranges), theirs)
              and surely_at_most(count, steps, {})):
        return False
    return prove_equal(simplify_index(simplify_expr(mine), ranges), theirs)


class _ComputeAtBase(Rewrite):
    """compute_at and reverse_compute_at: the checks and the new loop nest."""

    __slots__ = ()
    reverse = False

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block, self.loop])
        _check_flags(chk, self.preserve_unit_loops, self.index)
        loc = _locate(chk, site, self.block)
        lpath = resolve_loop(chk, site, self.loop)
        loop: For = site.at(lpath)
        block = loc.realize.block
        subject = describe(self.block)
        chk.checkpoint()
        if is_under(loc.rpath, lpath):
            chk.stop(NotInSameScopeError, subject,
                     f"loop {loop.loop_var.name!r} is an ancestor of block {block.name_hint!r}; the block "
                     "can only move under a loop outside it", loc.realize, loop)
        if scope_of(site, lpath) != loc.scope:
            chk.stop(NotInSameScopeError, subject,
                     f"the block and loop {loop.loop_var.name!r} must be under the same block scope",
                     loc.realize, loop)
        ccode = complete_block_code(loc.children, block)
        rcode = reduction_block_code(site, loc.children, loc.rpath, loc.realize) if ccode else 0
        if ccode and rcode:
            children = self._earlier_writers_aside(site, loc, lpath)
            if children is not None:
                ccode = complete_block_code(children, block)
                rcode = reduction_block_code(site, children, loc.rpath, loc.realize) if ccode else 0
            if ccode and rcode:
                chk.fail(NotCompleteOrReductionBlockError, subject,
                         f"the block is neither a complete block (it fails condition {ccode}: "
                         f"{COMPLETE_BLOCK_DEFINITION}) nor a reduction block (it fails condition "
                         f"{rcode}: {REDUCTION_BLOCK_DEFINITION})", loc.realize)
        dependent = loop_dependent_domain(site, loc.rpath + (("block", None),), block)
        if dependent is not None:
            iv, name = dependent
            chk.stop(LoopDependentDomainError, subject,
                     f"the domain of {iv.var.name}, {iv.dom.min.script()} for {iv.dom.extent.script()}, names "
                     f"loop {name!r} around the block; the loops {self.primitive} makes from the domains "
                     "would name a loop the block leaves", loc.realize)
        if not block.iter_vars:
            named = _left_loop_named(site, loc, lpath)
            if named is not None:
                chk.stop(LoopVariableInBlockError, subject,
                         f"the block has no iteration variables and uses loop {named!r} around it, which moving it "
                         f"under loop {loop.loop_var.name!r} takes it out of; it would name a variable nothing "
                         "binds", loc.realize)
        if not self.reverse and is_output_block(site, loc.scope, block):
            chk.fail(OutputBlockError, subject, "the block writes a buffer its scope does not allocate; "
                     "an output block cannot be moved under a loop with compute_at", loc.realize)
        kept = ()
        if self.reverse:
            loops_around = [(p, node) for p, node in ancestors(site.func, loc.rpath) if isinstance(node, For)]
            _check_instances_form_a_box(chk, loc, loops_around, subject)
            around = [node for _, node in loops_around]
            unimplied = _unimplied_conjuncts(loc.realize, site.func, loop_ranges(around))
            if unimplied:
                # a condition the domains do not imply goes with the block,
                # written in its iteration variables (TVM drops it)
                names = {lp.loop_var.name for lp in around}
                kept = tuple(_in_iteration_variables(c, loc.realize, names) for c in unimplied)
                if None in kept:
                    bad = unimplied[kept.index(None)]
                    chk.fail(NonTrivialPredicateError, subject,
                             f"the block's predicate {loc.realize.predicate.script()} does not follow from the "
                             f"domains of its iteration variables, and its condition {bad.script()} cannot be "
                             "written in them; it would be lost with the loops it is written in", loc.realize)
                    kept = ()
        chk.checkpoint()
        removal = _check_leaf(chk, site, loc, subject)
        if removal is not None:
            _check_only_loops(chk, site, removal, loc, subject)
        prods = producers(loc.children, loc.position)
        cons = consumers(loc.children, loc.position)
        required = prods if self.reverse else cons
        missing = [c for c in required if not is_under(c[0], lpath)]
        if missing and self.reverse:
            # a producer that has run to its end before the loop starts (the
            # fill of a cache, pad_einsum's copy in of an output, TVM has
            # neither) leaves its values in the buffer for every iteration:
            # the domains come from the producers under the loop, and an
            # instance that reads only what the earlier one wrote would
            # never run (refused below, UnsupportedRegionError); with none
            # under the loop, the block runs its whole domain in each
            # iteration, as it does with no producer at all
            missing = [c for c in missing if not _runs_wholly_before(site, loc.scope, c[0], lpath)]
        if missing:
            kind = "producer" if self.reverse else "consumer"
            chk.stop(NotAllRequiredBlocksAreVisitedError, subject,
                     f"{self.primitive} requires all the {kind}(s) of the block to be under loop "
                     f"{loop.loop_var.name!r}, and {len(missing)} are not: "
                     f"{_names(c[1].block for c in missing)}",
                     *[c[1] for c in missing])
        lo, hi = insertion_range(lpath, loop, [p[0] for p in prods], [c[0] for c in cons])
        if lo > hi:  # producers after consumers under one loop: the moved block cannot sit there
            chk.stop(InvalidInsertionIndexError, subject,
                     f"under loop {loop.loop_var.name!r}, the last producer is in statement {lo - 1} and the "
                     f"first consumer in statement {hi}; no position lies between them", loop)
        if self.index == -1:
            position = hi
        elif self.index == -2:
            position = lo
        elif lo <= self.index <= hi:
            position = self.index
        else:
            chk.stop(InvalidInsertionIndexError, subject,
                     f"index {self.index} is not valid: it must be -1, -2 or in [{lo}, {hi}]", loop)
        self._check_cover(chk, site, loc, subject, prods, cons)
        self._check_moves(chk, site, loc, lpath, position, subject,
                          whole=self.reverse and not any(is_under(p[0], lpath) for p in prods))
        _check_loose_accesses(chk, site, loc, lpath, subject)
        chk.checkpoint()
        proof = loop_domains(site, lpath)
        doms, guard = self._domains(chk, site, loc, lpath, prods, cons, proof, subject)
        _check_safe_divisions(chk, subject, doms, proof,
                              [c[1].block for c in (prods if self.reverse else cons) if is_under(c[0], lpath)],
                              loc.realize)
        if self.reverse:
            _check_every_instance_runs(chk, site, loc, doms, proof, subject)
        placement = _Placement(lpath, loop, position, removal, loc, doms, proof, guard, kept)
        nest = self._nest(site, placement)
        self._check_threads(chk, site, placement, nest, subject)
        return site, placement, nest

    def _earlier_writers_aside(self, site, loc, lpath) -> list | None:
        """The scope's children without the other writers of the block's
        outputs that have run to their end before the loop and the block
        (the fill of a cache, pad_einsum's copy in of an output, which TVM
        does not make): they still write first, and the block's instances
        keep their order with them wherever they go. None where there are
        none, or (compute_at) where the block's predicate does not follow
        from its domains: compute_at rebuilds it from them, as TVM does,
        and one they do not imply would be lost, which the other writer's
        values would show."""
        block = loc.realize.block
        written = writes_of(block)
        earlier = [c for c in loc.children if c[1].block is not block and writes_of(c[1].block) & written
                   and _runs_wholly_before(site, loc.scope, c[0], lpath)
                   and _runs_wholly_before(site, loc.scope, c[0], loc.rpath)]
        if not earlier:
            return None
        if not self.reverse and not _predicate_implied(
                loc.realize, site.func, loop_ranges(node for _, node in ancestors(site.func, loc.rpath)
                                                    if isinstance(node, For))):
            return None
        return [c for c in loc.children if not any(c is e for e in earlier)]

    def _check_cover(self, chk, site, loc, subject, prods, cons):
        block = loc.realize.block
        if self.reverse:
            pairs = [((loc.rpath, loc.realize), {b for p in prods for b in writes_of(p[1].block)})]
        else:
            pairs = [(c, writes_of(block)) for c in cons]
        for consumer, buffers in pairs:
            bad = region_cover_violation(site, loc.children, consumer, buffers)
            if bad is not None:
                buf, blocks = bad
                chk.fail(NotStagePipelineError, subject,
                         f"block {consumer[1].block.name_hint!r} reads elements of {buf.name} that "
                         f"{_names(blocks)} do not surely write before it within the loop they share",
                         consumer[1])

    def _check_moves(self, chk, site, loc, lpath, position, subject, whole=False):
        """No block the move jumps over depends on the moved block, except
        the consumers (producers) whose regions the placement accounts for.
        ``whole``: the block runs its whole domain in every iteration of the
        loop (reverse_compute_at with none of its producers under the loop),
        so a consumer after it under the loop reads all it would have read
        before the move."""
        block = loc.realize.block
        span = mine = None  # program keys of the block and the loop, found when first needed
        keyed = _keyed_blocks(site, loc)
        # the block's own key, where the blocks came with theirs
        own = next((k for k, p, r in keyed if r is loc.realize and p == loc.rpath), None)
        for key, ypath, yrealize in keyed:
            if ypath == loc.rpath or is_under(ypath, loc.rpath):
                continue
            other = yrealize.block
            if is_under(ypath, lpath):
                # every iteration of the loop now runs the block: it meets
                # every block under the loop in an earlier or later iteration;
                # a consumer of it (compute_at) or a producer (reverse) is
                # accounted for by the placement, but only a block on that
                # side of it: one after it that overwrites what it read, or
                # one before it reading what it writes, is not
                if mine is None:
                    mine = own if own is not None else program_key(site, loc.rpath)
                ran_before = (key if key is not None else program_key(site, ypath)) < mine
                buf = conflicting_buffer(block, other,
                                         allow_reads_of_moved=(whole or not self.reverse) and not ran_before,
                                         allow_writes_to_moved_reads=self.reverse and ran_before)
            else:
                if span is None:
                    span = sorted([own if own is not None else program_key(site, loc.rpath),
                                   program_key(site, lpath)])
                    # the loops the move takes the block out of
                    left = [p for p, node in ancestors(site.func, loc.rpath) if isinstance(node, For)
                            and p != lpath and not is_under(lpath, p)
                            and (loc.scope is None or is_under(p, loc.scope))]
                if not span[0] < (key if key is not None else program_key(site, ypath)) < span[1]:
                    shared = [p for p in left if is_under(ypath, p)]
                    if shared and conflicting_buffer(block, other) is not None:
                        if mine is None:
                            mine = own if own is not None else program_key(site, loc.rpath)
                        first = (key if key is not None else program_key(site, ypath)) < mine
                        self._check_left_behind(chk, site, loc, lpath, shared, ypath, yrealize, subject, first)
                    continue
                buf = conflicting_buffer(block, other)
            if buf is not None:
                chk.fail(DependenceViolationError, subject,
                         f"moving the block under loop {site.at(lpath).loop_var.name!r} reorders it with "
                         f"block {other.name_hint!r}, and one of them writes {buf.name}, which the other uses",
                         yrealize)

    def _check_left_behind(self, chk, site, loc, lpath, shared, ypath, yrealize, subject,
                           first: bool = False) -> None:
        """A block before (``first``) or after the moved one under loops the
        move takes it out of ran interleaved with it, iteration by
        iteration; moved, all the
        block's instances run before its own (reverse_compute_at) or after
        them (compute_at). Refused where that reorders two accesses of one
        element, one a write (:func:`~tirfun.analysis.left_behind.reordered_access`;
        TVM does not look); where the loops cannot be enumerated, the move
        is made, as TVM makes it."""
        inner = shared[-1]
        mine = nodes_along(site.func, loc.rpath)[len(inner) + 1:]
        theirs = nodes_along(site.func, ypath)[len(inner) + 1:]
        loops = [site.at(p) for p in shared]
        buf = reordered_access(loops, mine, theirs, earlier=self.reverse, other_first=first)
        if buf is not None:
            names = ", ".join(repr(lp.loop_var.name) for lp in loops)
            chk.fail(DependenceViolationError, subject,
                     f"moving the block under loop {site.at(lpath).loop_var.name!r} takes it out of loop(s) "
                     f"{names}, which it shares with block {yrealize.block.name_hint!r}; there the two access "
                     f"{buf} in turn, iteration by iteration, and moved, an access of one would come "
                     "on the other side of an access of the other to the same element", yrealize)

    def _domains(self, chk, site, loc, lpath, prods, cons, proof, subject) -> dict:
        """Iteration variable -> the Interval of values the block runs for in
        one iteration of the loop (missing: the whole domain)."""
        block = loc.realize.block
        provided = block.reads if self.reverse else block.writes
        under = [c for c in (prods if self.reverse else cons) if is_under(c[0], lpath)]
        ivs = {iv.var: iv for iv in block.iter_vars}
        doms: dict = {}
        guards: list = []  # (producer, the kept loops' condition for it to write at all)
        sources = 0        # the producer regions the domains come from
        # the moved block's conditions of sizes, which it keeps: facts for what its producers write
        facts = tuple(size_conditions(loc.realize.predicate, site.func)) if self.reverse else ()
        for region in provided:
            needed = None
            for cpath, crealize in under:
                theirs = crealize.block.writes if self.reverse else crealize.block.reads
                for r in theirs:
                    if r.buffer != region.buffer:
                        continue
                    if self.reverse:
                        shown = guarded_produced_region(site, cpath, crealize, r, lpath, facts)
                        if shown is None:
                            chk.stop(UnsupportedRegionError, subject,
                                     f"what block {crealize.block.name_hint!r} writes of {r.buffer.name} in one "
                                     f"iteration of loop {site.at(lpath).loop_var.name!r} cannot be shown",
                                     crealize)
                        got, guard = shown
                        if guard is not None:
                            guards.append((crealize, guard))
                        sources += 1
                    else:
                        got = _required_region(site, cpath, crealize, r, lpath)
                    needed = got if needed is None else [union(a, b) for a, b in zip(needed, got)]
            if needed is None:
                continue
            if not self.reverse and _fused_write(region, needed, ivs, doms):
                continue
            if self.reverse and not all(_shift(r.min, ivs) is not None or int_value(r.min) is not None
                                        for r in region.region):
                exact = _exact_read(region, needed, ivs, proof)
                if isinstance(exact, str):
                    chk.stop(UnsupportedRegionError, subject,
                             f"the instances of the block that read what the producers write of "
                             f"{region.buffer.name} in one iteration of loop "
                             f"{site.at(lpath).loop_var.name!r} are not one range of {exact}: any "
                             "range holding them would also run instances that read elements not "
                             "written yet", loc.realize)
                if exact is not None:
                    for var, mine in exact.items():
                        _solve_once(chk, subject, loc.realize, doms, var, mine, proof)
                    continue
            for rng, iv in zip(region.region, needed):
                tile = None if self.reverse else _tile(rng, ivs)
                if tile is not None:
                    # a tile per iteration variable value (B[v * 16:v * 16 + 16]):
                    # the values whose tiles meet the needed elements, as TVM
                    # solves it
                    var, scale, k, e = tile
                    if not iv.bounded:
                        continue  # needed everywhere: the whole domain
                    c = IntImm(iv.lo.dtype, abs(scale))
                    if scale > 0:
                        lo = simplify_index(FloorDiv(iv.lo - (k + e - 1) + (abs(scale) - 1), c))
                        hi = simplify_index(FloorDiv(iv.hi - k, c))
                    else:  # a backward index (Y[9 - v]): the values mirror
                        lo = simplify_index(FloorDiv(IntImm(iv.hi.dtype, k + abs(scale) - 1) - iv.hi, c))
                        hi = simplify_index(FloorDiv(IntImm(iv.lo.dtype, k + e - 1) - iv.lo, c))
                    mine = Interval(lo, hi)
                    doms[var] = mine if var not in doms else union(doms[var], mine)
                    continue
                if int_value(rng.extent) != 1:
                    chk.stop(UnsupportedRegionError, subject,
                             f"the block {'reads' if self.reverse else 'writes'} {region.buffer.name} over "
                             f"more than one element per iteration ({rng.min.script()} to "
                             f"{(rng.min + rng.extent).script()}); its domain cannot be solved from it",
                             loc.realize)
                if int_value(rng.min) is not None:
                    if self.reverse and not (iv.bounded and can_prove(EQ(iv.lo, rng.min), proof)
                                             and can_prove(EQ(iv.hi, rng.min), proof)):
                        chk.stop(UnsupportedRegionError, subject,
                                 f"the block reads {region.buffer.name} at the constant index "
                                 f"{rng.min.script()}, which the producers under the loop do not write "
                                 "alone in every iteration", loc.realize)
                    continue
                divided = _divided(rng.min, ivs) if self.reverse and iv.bounded else None
                if divided is not None:
                    # each element is read by c instances (a repeat,
                    # ``T[v // 2]``): those of the elements just written
                    var, c = divided
                    dt = iv.lo.dtype
                    mine = Interval(simplify_index(iv.lo * IntImm(dt, c)),
                                    simplify_index(iv.hi * IntImm(dt, c) + IntImm(dt, c - 1)))
                    _solve_once(chk, subject, loc.realize, doms, var, mine, proof)
                    continue
                shifted = _shift(rng.min, ivs if self.reverse else None)
                mirrored = _mirrored(rng.min, ivs) if self.reverse and shifted is None else None
                if mirrored is not None:
                    # a backward read (T[1 - v], TVM's flip): the values whose
                    # mirror image lies in what was written, in the other order
                    var, c = mirrored
                    mine = Interval(None if iv.hi is None else simplify_index(_cast(c, iv.hi.dtype) - iv.hi),
                                    None if iv.lo is None else simplify_index(_cast(c, iv.lo.dtype) - iv.lo))
                else:
                    if shifted is None or shifted[0] not in ivs:
                        chk.stop(UnsupportedRegionError, subject,
                                 f"the block {'reads' if self.reverse else 'writes'} {region.buffer.name} at "
                                 f"{rng.min.script()}, which is not an iteration variable plus a constant",
                                 loc.realize)
                    var, k = shifted
                    mine = Interval(_minus(iv.lo, k), _minus(iv.hi, k))
                old = doms.get(var)
                if old is None:
                    doms[var] = mine
                elif self.reverse:
                    if not (_same(old.lo, mine.lo, proof) and _same(old.hi, mine.hi, proof)):
                        chk.stop(UnsupportedRegionError, subject,
                                 f"the producers under the loop write what the block reads at "
                                 f"{var.name} over different ranges; no one domain fits them all",
                                 loc.realize)
                else:
                    doms[var] = union(old, mine)
        # a reduction that runs whole from its init in every iteration (its
        # reduction variables free) leaves what its last run computes
        restarts = self.reverse and _restarts(loc.realize, doms)
        if self.reverse and block.init is not None and not (
                restarts and site.at(lpath).loop_var.name not in _followed(doms)):
            self._check_disjoint(chk, site, loc, lpath, under, subject)
        self._keep_shared_bindings(chk, site, loc, lpath, doms, subject)
        guard = None
        if guards:
            if len(guards) != sources or not all(structural_equal(g, guards[0][1]) for _, g in guards):
                # one producer's condition says nothing of what another writes
                chk.stop(UnsupportedRegionError, subject,
                         f"block {guards[0][0].block.name_hint!r} writes in some iterations of loop "
                         f"{site.at(lpath).loop_var.name!r} only ({guards[0][1].script()}), and what the block "
                         "reads is written there under other conditions too; no one condition says where "
                         "it may run", guards[0][0])
            # the block runs where the producer wrote, and nowhere else: the
            # instances the condition skips would read what no iteration wrote
            guard = guards[0][1]
        if self.reverse:
            self._check_partial_reductions(chk, site, loc, lpath, under, subject, doms, restarts)
        return doms, guard

    def _keep_shared_bindings(self, chk, site, loc, lpath, doms, subject) -> None:
        """The variables no needed region determines run over their whole
        domain, in ascending order, as TVM makes them, where that keeps the
        meaning: the block writes the same elements for each of their values,
        and the consumers read what the last instance left.

        - A reduction variable must not be bound to a loop the block shares
          with the target loop (the consumers read partial results in each
          iteration of it) nor share a loop with another variable that
          matters (the whole domains would sum pairs the original never
          summed).
        - A spatial variable the block reads, bound to shared loops only,
          keeps its binding, one value per iteration: the original ran only
          that value before the consumers there (TVM runs every value and
          leaves the last one's). Bound to shared and own loops, to a loop
          another variable that matters is bound to, or to anything but one
          loop over exactly its domain, the placement is refused: the last
          value stored would not be the original's.

        A variable matters when it is a reduction variable, a needed region
        determines it, or the block reads it.

        reverse_compute_at takes the domains from what the producers write
        under the loop; a variable they leave free that the block uses at
        all (in what it reads or where it writes) and that is bound to loops
        shared with the target loop keeps its binding too, or is refused as
        above: the whole domain would write, in each iteration of those
        loops, the elements of the others from this iteration's values. One
        that shares a loop with a variable that matters is refused too; the
        order of its values matters only where it is not in an index the
        block writes at."""
        block = loc.realize.block
        pairs = list(zip(block.iter_vars, loc.realize.iter_values))

        def free(iv):
            dom = doms.get(iv.var)
            return (dom is None or (dom.lo is None and dom.hi is None)) and int_value(iv.dom.extent) != 1

        if not any(free(iv) for iv, _ in pairs):
            return
        # loops of one iteration fix nothing the whole domain would not
        loops = [(p, node) for p, node in ancestors(site.func, loc.rpath) if isinstance(node, For)]
        around = {node.loop_var.name: (p, node) for p, node in loops if int_value(node.extent) != 1}
        shared = {n for n, (p, _) in around.items() if is_under(lpath, p)}
        if not shared and all(free(iv) or int_value(iv.dom.extent) == 1 for iv, _ in pairs) \
                and _runs_its_domain_in_order(loc.realize, [node for p, node in loops
                                                            if loc.scope is None or is_under(p, loc.scope)]):
            # the new nest runs the very instances the old one ran, in its order
            return
        read = _names_read(block) if not self.reverse else \
            var_names(block.body) | (var_names(block.init) if block.init is not None else set())
        written = set().union(*[var_names(r.min) for w in block.writes for r in w.region]) if self.reverse \
            else set()
        bound = [var_names(value) & around.keys() for _, value in pairs]
        matters = [iv.iter_type is not IterVarType.DataPar or not free(iv) or iv.var.name in read
                   for iv, _ in pairs]
        ordered = _ordered_groups(loc.realize, bound, [node for _, node in loops], around.keys() - shared, doms,
                                  free)
        loop = site.at(lpath).loop_var.name
        for k, (iv, value) in enumerate(pairs):
            if not free(iv) or iv.var.name in ordered:
                continue
            names = bound[k]
            partner = next(((pairs[w][0].var.name, sorted(names & bound[w])[0]) for w in range(len(pairs))
                            if w != k and matters[w] and names & bound[w]), None)
            binding = f"{iv.var.name}, bound to {value.script()},"
            if iv.iter_type is not IterVarType.DataPar:
                if names & shared:
                    readers = "the block sums one step" if self.reverse else "the consumers read the partial " \
                        "results"
                    chk.stop(NotStagePipelineError, subject,
                             f"the reduction variable {binding} counts the steps of "
                             f"{', '.join(sorted(names & shared))} around loop {loop!r}: {readers} in each, "
                             f"and placed under {loop!r} the block would run the whole reduction and leave "
                             "another value's result", loc.realize)
                if partner is not None:
                    chk.stop(NotStagePipelineError, subject,
                             f"the reduction variable {binding} shares loop {partner[1]!r} with "
                             f"{partner[0]}: placed under {loop!r}, each would run over a domain of its own, "
                             "summing pairs of values the original never summed, and leave another "
                             "value's result", loc.realize)
                continue
            if iv.var.name not in read:
                continue  # every value stores the same
            if names & shared:
                if names <= shared:
                    # B's own loops of one iteration leave with it: their one value
                    units = {node.loop_var: node.min for p, node in loops
                             if int_value(node.extent) == 1 and not is_under(lpath, p)}
                    kept = fold_units(value, units)
                    doms[iv.var] = Interval(kept, kept)
                    continue
                chk.stop(NotStagePipelineError, subject,
                         f"the block {'uses' if self.reverse else 'reads'} {binding} and "
                         f"{'runs it for one value in each iteration of' if self.reverse else 'writes the same elements for each of its values;'} "
                         f"{', '.join(sorted(names & shared))} around loop {loop!r}"
                         f"{'' if self.reverse else ' fix the values the consumers read there'}, but placed "
                         f"under {loop!r} the block would run {iv.var.name} over the values of its own "
                         "loops too and leave another value's result", loc.realize)
            if partner is not None and not (self.reverse and _accesses_its_element_only(block)
                                            and _group_runs_its_box(pairs, bound, k, around)):
                chk.stop(NotStagePipelineError, subject,
                         f"the block {'uses' if self.reverse else 'reads'} {binding} "
                         f"{'' if self.reverse else 'and writes the same elements for each of its values; it '}"
                         f"shares loop {partner[1]!r} with {partner[0]}, and placed under {loop!r} each "
                         "would run over a domain of its own, in pairs of values the original never ran, "
                         "and leave another value's result", loc.realize)
            if self.reverse and iv.var.name in written:
                continue  # each value writes elements of its own: the order does not matter
            own = around.get(value.name) if isinstance(value, Var) else None
            if own is None or not (_same(own[1].min, iv.dom.min, {}) and _same(own[1].extent, iv.dom.extent, {})):
                chk.stop(NotStagePipelineError, subject,
                         f"the block reads {binding} and writes the same elements for each of its values; "
                         f"placed under {loop!r} it would run {iv.var.name} over its domain in ascending "
                         "order, which is not the order of its binding, and leave another value's result",
                         loc.realize)

    def _check_partial_reductions(self, chk, site, loc, lpath, under, subject, doms, restarts) -> None:
        """Placed under a loop that drives a reduction variable of a producer
        (the loop or one around it), the block reads the producer's partial
        results in every iteration but the last. A block that stores its
        every element unconditionally, over a domain (``doms``) the same in
        every iteration of that loop, overwrites them in the last iteration,
        and so does a reduction that ``restarts`` (:func:`_restarts`); one
        that reads what it writes, or stores under a
        condition on what it reads, keeps a value computed from a partial
        result, and so does one whose domain follows the loop (an element
        of a softmax's normalisation computed in the step of the sum that
        adds its own column) (TVM accepts all three; the second and third
        compute something else)."""
        block = loc.realize.block
        body = block.body
        overwrites = (block.init is None and not _reads_what_it_writes(block) and isinstance(body, BufferStore)
                      and body.predicate is None) or restarts
        # the loops the block's domain follows: those an element's one
        # computation depends on. Not the guard's: where it holds, the
        # producers write the whole box of the domains, and nothing where
        # it does not (guarded_produced_region), so the last iteration the
        # block runs in is the last that writes what it reads
        follows = _followed(doms) if overwrites else set()
        reads = reads_of(block)
        for cpath, crealize in under:
            if not any(r.buffer in reads for r in crealize.block.writes):
                continue
            shared = {node.loop_var.name: node for p, node in ancestors(site.func, cpath)
                      if isinstance(node, For) and (p == lpath or is_under(lpath, p))}
            for iv, value in zip(crealize.block.iter_vars, crealize.iter_values):
                if iv.iter_type is not IterVarType.CommReduce:
                    continue
                hit = sorted(name for name in var_names(value) & set(shared)
                             if int_value(shared[name].extent) != 1 and (not overwrites or name in follows))
                if hit and overwrites:
                    chk.stop(NotStagePipelineError, subject,
                             f"loop {hit[0]!r} drives the reduction variable {iv.var.name} of block "
                             f"{crealize.block.name_hint!r}: placed under it, the block would read the partial "
                             f"results of that reduction, and the elements it computes follow {hit[0]!r}, so "
                             "the last iteration does not compute them again from the whole result", crealize)
                if hit:
                    chk.stop(NotStagePipelineError, subject,
                             f"loop {hit[0]!r} drives the reduction variable {iv.var.name} of block "
                             f"{crealize.block.name_hint!r}: placed under it, the block would read the partial "
                             "results of that reduction, and it stores under a condition or accumulates, so "
                             "the last iteration does not overwrite what they gave", crealize)

    def _check_disjoint(self, chk, site, loc, lpath, under, subject):
        """A reduction must not run an iteration twice: what the producers
        write in one iteration of the loop differs from every other one."""
        loop: For = site.at(lpath)
        if int_value(loop.extent) == 1:
            return
        parent = lpath[:-1]
        while parent and not isinstance(site.at(parent), (For, Block)):
            parent = parent[:-1]
        for cpath, crealize in under:
            for r in crealize.block.writes:
                if r.buffer not in reads_of(loc.realize.block):
                    continue
                bind = {iv.var: v for iv, v in zip(crealize.block.iter_vars, crealize.iter_values)}
                loops = loops_between(site, cpath, parent)
                relaxed = {l.loop_var.name: l for l in loops}
                sums = detect_iter_map([substitute(x.min, bind) for x in r.region], relaxed, "affine",
                                       symbolic=True)
                used = {s.source for total in (sums or []) for s in total.args}
                if sums is None or loop.loop_var.name not in used:
                    chk.stop(UnsupportedRegionError, subject,
                             f"block {crealize.block.name_hint!r} writes the same elements of {r.buffer.name} "
                             f"in several iterations of loop {loop.loop_var.name!r}; the reduction would "
                             "run twice", crealize)

    def _nest(self, site, pl: _Placement):
        """The new loops (Var, extent), the block's new binding and predicate."""
        loc = pl.loc
        block = loc.realize.block
        proof = dict(pl.proof)
        values, extents, predicate = [], [], None
        made = []
        # a loop of one iteration above the place takes its one value in the
        # new binding, as TVM's analyzer folds it (``T.axis.spatial(1, 0)``
        # rather than the loop's variable)
        units = {v: r.min for v, r in proof.items() if int_value(r.extent) == 1}
        ranges = _constant_ranges(proof)  # the loops' constant bounds, for the comparisons and the simplifier
        for iv in block.iter_vars:
            blo, bhi = iv.dom.min, _domain_last(iv.dom)
            dom = pl.doms.get(iv.var)
            lo = blo if dom is None or dom.lo is None else fold_units(dom.lo, units)
            hi = bhi if dom is None or dom.hi is None else fold_units(dom.hi, units)
            if type(hi) is Min and any(structural_equal(a, lo) and b.dtype == bhi.dtype and _same(b, bhi, proof)
                                       for a, b in ((hi.a, hi.b), (hi.b, hi.a))):
                # one value clipped to the domain's end (``T.min(v, n - 1)``,
                # where the producer writes under ``v < n``): one value,
                # guarded by the domain below, as TVM writes it, rather than
                # a loop of zero or one iterations
                hi = lo
            conds = []
            if dom is not None and (dom.lo is not None or dom.hi is not None):
                inside = _ge(lo, blo, proof, ranges) and _ge(bhi, hi, proof, ranges)
                covers = not inside and _ge(blo, lo, proof, ranges) and _ge(hi, bhi, proof, ranges)
                if covers and not inside:
                    lo, hi = blo, bhi
                elif not inside:
                    clo, chi = int_value(lo), int_value(hi)
                    cblo, cbhi = int_value(blo), int_value(bhi)
                    if None not in (clo, chi, cblo, cbhi):
                        lo, hi = IntImm(lo.dtype, max(clo, cblo)), IntImm(hi.dtype, min(chi, cbhi))
                    else:
                        if not _ge(lo, blo, proof, ranges):
                            conds.append(("lo", blo))
                        if not _ge(bhi, hi, proof, ranges):
                            conds.append(("hi", bhi))
            # one point (a consumer reading one element per iteration) needs no simplifier
            # TVM's analyzer knows the loops around the place: a bound that
            # clips to the domain only where those loops do not reach (the
            # last tile of a split, in a part of a partitioned loop that ends
            # before it) folds away
            lo, hi = _unclipped(lo, proof, ranges), _unclipped(hi, proof, ranges)
            extent = IntImm(hi.dtype, 1) if hi == lo and hi.dtype.is_integer else simplify_index(hi - lo + 1)
            if self.preserve_unit_loops or int_value(extent) != 1:
                bits = max(lo.dtype.bits, extent.dtype.bits)
                made.append((DataType(f"int{bits}"), extent))
                values.append(("loop", len(made) - 1, lo))
            else:
                values.append(("const", None, lo))
            extents.append(conds)
        names = fresh_names([f"ax{k}" for k in range(len(made))], site.index.names)
        loop_vars = [Var(n, dt) for n, (dt, _) in zip(names, made)]
        # TVM's analyzer knows the loops around the place and the new loops:
        # it simplifies the start of each domain with them, and drops the new
        # loops of one iteration from the predicate
        ones = {v: IntImm(v.dtype, 0) for v, (_, e) in zip(loop_vars, made) if int_value(e) == 1}
        iter_values = []
        for iv, (kind, k, lo), conds in zip(block.iter_vars, values, extents):
            lo = simplify_index(lo, ranges)
            if kind == "const" or int_value(lo) == 0:
                value = lo if kind == "const" else loop_vars[k]
            elif lo.dtype == loop_vars[k].dtype:
                value = Add(lo, loop_vars[k])  # the start plus the loop, as TVM writes it
            else:
                value = simplify_index(lo + loop_vars[k])
            if value.dtype != iv.var.dtype:
                # the other block indexes the buffer in another width (its
                # loops int32, this block's variables int64, or the reverse)
                value = _cast(value, iv.var.dtype)
            iter_values.append(value)
            for side, b in conds:
                if pl.guard is not None and side == "hi" and _guard_bounds(pl.guard, value, b):
                    continue  # where the producer wrote, the binding is inside the domain
                c = _bound_condition(fold_units(value, ones), side, b)
                predicate = c if predicate is None else And(predicate, c)
        if pl.guard is not None:
            predicate = pl.guard if predicate is None else And(pl.guard, predicate)
        if pl.kept:
            bound = {iv.var: v for iv, v in zip(block.iter_vars, iter_values)}
            for c in reversed(pl.kept):
                c = substitute(c, bound)
                predicate = c if predicate is None else And(c, predicate)
        if self.reverse:
            # a condition of no loop stays with the block (see _predicate_implied)
            for c in reversed(size_conditions(loc.realize.predicate, site.func)):
                predicate = c if predicate is None else And(c, predicate)
        if predicate is None:
            predicate = IntImm("bool", 1)
        return list(zip(loop_vars, [e for _, e in made])), iter_values, predicate

    def _check_threads(self, chk, site, pl: _Placement, nest, subject) -> None:
        """Threads that would compute the same iterations of the block.

        Under parallel loops, distinct iterations must compute distinct
        iterations of the block's data-parallel variables (TVM lets them
        race). Under thread-bound loops the block runs, as TVM places it, in
        every thread of each loop its new binding does not use (and of each
        thread-bound loop it is placed above): every such thread computes
        the same values. Where those threads share the block's output
        (``shared`` memory among the threads of a block, ``global`` among
        all), that is harmless for a block that only writes, and wrong for
        one that reads what it writes (a reduction), which is refused.
        """
        def concurrent(loop: For, kinds) -> bool:
            return loop.kind in kinds and int_value(loop.extent) != 1

        # the loops above the place and the loop itself, the last node along its path
        above = [n for n in nodes_along(site.func, pl.lpath) if isinstance(n, For)]
        inner = [l for l in stmt_nodes(pl.loop.body)
                 if isinstance(l, For) and concurrent(l, (ForKind.THREAD_BINDING,))]
        threads = [l for l in above if concurrent(l, (ForKind.THREAD_BINDING, ForKind.PARALLEL))]
        if not threads and not inner:
            return
        if self.reverse:
            self._check_cross_thread_reads(chk, pl, inner, subject)
        loops, values, _ = nest
        block = pl.loc.realize.block
        spatial = [v for iv, v in zip(block.iter_vars, values) if iv.iter_type is IterVarType.DataPar]
        ranges = {l.loop_var.name: l for l in threads}
        ranges.update({v.name: For(v, IntImm(v.dtype, 0), e, ForKind.SERIAL, pl.loop.body) for v, e in loops})
        sums = detect_iter_map(spatial, ranges, "affine") if threads else []
        # a loop the binding uses only in part (``l // 3`` alone) still has
        # several iterations compute the same instance: only a loop whose
        # slices tile it whole gives each iteration instances of its own
        used = tiled_loops(sums, ranges) if sums else set()
        parallel = [l for l in threads if l.kind is ForKind.PARALLEL]
        if parallel and (sums is None or any(l.loop_var.name not in used for l in parallel)) and \
                not all(_splits_by(spatial, l, pl.proof, loops) for l in parallel):
            chk.fail(ThreadOverlapError, subject,
                     f"under the parallel loops {', '.join(repr(l.loop_var.name) for l in parallel)}, several "
                     "threads would compute the same iterations of the block and write the same elements at "
                     "once", pl.loop)
            return
        if self.reverse:
            self._check_reads_inside_cross_thread_reduction(chk, pl, threads, subject)
            self._check_reads_of_other_threads(chk, pl, threads, values, subject)
        if not _reads_what_it_writes(block):
            return
        bound = [l for l in threads if l.kind is ForKind.THREAD_BINDING]
        # a thread loop driving a reduction variable splits the reduction
        # among the threads: a cross-thread reduction, lowered to an
        # all-reduce (as TVM's LowerCrossThreadReduction), not a race
        reducing = [v for iv, v in zip(block.iter_vars, values) if iv.iter_type is IterVarType.CommReduce]
        # ... but only within a thread block: nothing combines the parts of
        # thread blocks (TVM lowers the all-reduce over threadIdx only, and
        # binds no blockIdx to a reduction variable; placed so, its blocks
        # race on the output, or each keeps a part of it)
        for loop in bound:
            if loop.thread_binding.startswith("blockIdx") and \
                    any(loop.loop_var.name in var_names(v) for v in reducing):
                out = ", ".join(sorted(b.name for b in writes_of(block)))
                chk.fail(ThreadOverlapError, subject,
                         f"loop {loop.loop_var.name!r} ({loop.thread_binding}) would drive a reduction "
                         f"variable of the block: each thread block would reduce its part into {out}, and "
                         "nothing combines the parts of thread blocks (a reduction across threads is an "
                         "all-reduce within one thread block, over threadIdx)", loop)
                return
        rsums = detect_iter_map(spatial + reducing, ranges, "affine") if reducing and sums is not None else None
        # the slices of a loop in the spatial and reduction values together:
        # the loop is split among the threads only where they tile it whole
        # (``l // 3`` spatial with ``l % 3`` reducing); where they do not,
        # several threads compute the same instances
        split = tiled_loops(rsums, ranges) if rsums else set()
        idle = [l for l in bound if (sums is None or l.loop_var.name not in used)
                and l.loop_var.name not in split] + inner
        for buf in writes_of(block):
            shared = [l for l in idle if _shares_storage(buf.scope(), l.thread_binding)]
            if shared:
                touched = {sp.source for total in (rsums or sums or []) for sp in total.args}
                where = ("placed above it" if shared[0] in inner else
                         "with iterations that overlap between threads" if sums is None else
                         "depending on it only in part, so that several threads compute the same "
                         "instances" if shared[0].loop_var.name in touched else
                         "not depending on it")
                chk.fail(ThreadOverlapError, subject,
                         f"the block reads the {buf.scope()} buffer {buf.name} it writes; {where}, it would "
                         f"run in every thread of loop {shared[0].loop_var.name!r} "
                         f"({shared[0].thread_binding}), which share {buf.name} and would update the same "
                         "elements at once", shared[0])
                return

    def _check_reads_inside_cross_thread_reduction(self, chk, pl: _Placement, threads, subject) -> None:
        """A consumer placed inside the innermost thread-bound loop that a
        producer's reduction variable is bound to (a cross-thread
        reduction) reads the reduction's result before the threads have
        combined their parts: the combination ends with that loop. TVM
        accepts the placement (and its lowering of the reduction then
        refuses the consumer's company under the reduction's loops)."""
        reads = {r.buffer for r in pl.loc.realize.block.reads}
        name = pl.loc.realize.block.name_hint
        bound_above = {l.loop_var.name: l for l in threads if l.kind is ForKind.THREAD_BINDING}
        if not bound_above:
            return
        body = pl.loop.body
        for path, r in walk_stmts(body):
            if not isinstance(r, BlockRealize) or r.block.name_hint == name:
                continue
            if not any(w.buffer in reads for w in r.block.writes):
                continue
            reducing = set().union(*[var_names(v) for iv, v in zip(r.block.iter_vars, r.iter_values)
                                     if iv.iter_type is IterVarType.CommReduce])
            if any(isinstance(n, For) and n.kind is ForKind.THREAD_BINDING and n.loop_var.name in reducing
                   for _, n in ancestors(body, path)):
                continue  # the innermost one is below the placement: combined before the block runs
            # outermost first: the innermost is the loop whose end combines the parts
            above = [l for l in bound_above.values() if l.loop_var.name in reducing]
            if any(int_value(l.extent) != 1 for l in above):
                buf = next(w.buffer for w in r.block.writes if w.buffer in reads)
                loop = above[-1]
                chk.fail(ThreadOverlapError, subject,
                         f"under loop {loop.loop_var.name!r} ({loop.thread_binding}), block "
                         f"{r.block.name_hint!r} reduces into {buf.name} across the threads of the loop: "
                         "inside it each thread holds only its own part of the result, which the threads "
                         "combine once they leave the loop", loop)
                return

    def _check_reads_of_other_threads(self, chk, pl: _Placement, threads, values, subject) -> None:
        """A consumer placed under a thread-bound loop its new binding does
        not use runs in every thread of it, each reading the same elements;
        where a producer under that loop writes elements that depend on the
        loop (each thread its own), a thread reads what others wrote in
        storage they share. In global memory nothing orders the reads after
        the writes; in shared memory TVM's lowering would put a barrier
        between the two nests, which the TensorIR's own meaning (the
        interpreter's) does not have, so both are refused. TVM accepts the
        global case and races."""
        used = set().union(*[var_names(v) for v in values]) if values else set()
        reads = {r.buffer for r in pl.loc.realize.block.reads}
        name = pl.loc.realize.block.name_hint
        for loop in threads:
            if loop.kind is not ForKind.THREAD_BINDING or loop.thread_binding.startswith("vthread") \
                    or int_value(loop.extent) == 1 or loop.loop_var.name in used:
                continue
            for r in stmt_nodes(loop.body):
                if not isinstance(r, BlockRealize) or r.block.name_hint == name:
                    continue
                if not any(loop.loop_var.name in var_names(v) for v in r.iter_values):
                    continue  # every thread writes the same elements
                for w in r.block.writes:
                    buf = w.buffer
                    if buf in reads and _shares_storage(buf.scope(), loop.thread_binding):
                        chk.fail(ThreadOverlapError, subject,
                                 f"under loop {loop.loop_var.name!r} ({loop.thread_binding}), which its binding "
                                 f"does not use, the block runs in every thread and reads the {buf.scope()} "
                                 f"buffer {buf.name} that block {r.block.name_hint!r} writes thread by thread: "
                                 "each thread would read what the others write, with no barrier between",
                                 loop)
                        return

    def _check_cross_thread_reads(self, chk, pl: _Placement, inner, subject) -> None:
        """A consumer placed above thread-bound loops of its producers reads
        what other threads wrote. Lowering puts a barrier between them only
        for ``shared`` memory (and ``warp`` memory across threadIdx.x), as
        TVM's thread-sync pass does; from ``global`` memory the read races
        with the writes, and ``local`` memory holds only the reading
        thread's part. TVM accepts both and computes wrong values."""
        reads = {r.buffer for r in pl.loc.realize.block.reads}
        for node in (l for l in inner if not l.thread_binding.startswith("vthread")):
            written = {w.buffer for r in stmt_nodes(node) if isinstance(r, BlockRealize)
                       for w in r.block.writes}
            for buf in sorted(written & reads, key=lambda b: b.name):
                scope = buf.scope()
                # the scopes compute_at relaxes over a thread loop are those its
                # threads share within one thread block, where a barrier reaches
                synced = _relaxed_under(scope, node.thread_binding)
                if not synced:
                    chk.fail(ThreadOverlapError, subject,
                             f"placed above loop {node.loop_var.name!r} ({node.thread_binding}), the block "
                             f"would read the {scope} buffer {buf.name} that other threads of that loop "
                             "write: no barrier orders those reads after the writes (only shared memory "
                             "within a thread block gets one)", node)
                    return

    def build(self, plan) -> Outcome:
        site, pl, nest = plan
        loc = pl.loc
        block = loc.realize.block
        loops, iter_values, predicate = nest
        new: object = BlockRealize(iter_values, predicate, block)
        for v, extent in reversed(loops):
            new = For(v, IntImm(v.dtype, 0), extent, ForKind.SERIAL, new)
        items = subtrees(pl.loop)
        items.insert(pl.position, new)
        new_loop = with_fields(pl.loop, body=SeqStmt(items))
        # only the loop and the sequence the block leaves change: the new
        # subtree holding both is built below its own root (the path above
        # it is rebuilt once, by commit), and the name index is derived
        # from it, not the whole scope
        changed = _common_prefix(pl.lpath, pl.removal[:-1])
        n = len(changed)
        sub = replace_at(site.at(changed), pl.lpath[n:], new_loop)
        sub = delete_at(sub, pl.removal[n:])

        def derive(new_func):
            # what moved is stated: the two nests, and the statements after each
            return derive_move_index(site.index, site.func, new_func, pl.removal, site.at(pl.removal),
                                     pl.lpath, pl.loop, pl.position, new)

        return Outcome(commit(site, changed, sub, derive=derive))

    def python_args(self):
        return [py_value(self.block), py_value(self.loop),
                f"preserve_unit_loops={py_value(self.preserve_unit_loops)}", f"index={py_value(self.index)}"]


def _constant_ranges(proof) -> dict:
    """Name -> inclusive constant bounds of the loops of ``proof`` whose
    range is constant, for :func:`simplify_index`."""
    out = {}
    for var, rng in proof.items():
        lo, ext = int_value(rng.min), int_value(rng.extent)
        if lo is not None and ext is not None and ext > 0:
            out[var.name] = (lo, lo + ext - 1)
    return out


def _guard_bounds(guard: PrimExpr, value: PrimExpr, b: PrimExpr) -> bool:
    """Whether a conjunct of ``guard`` is ``x < c`` where ``value`` is ``x``
    or ``x // d`` (``d`` a positive constant) and ``c`` keeps ``value`` at
    most the constant ``b``: an over-split's guard ``i_0 * 5 + i_1 < 24``
    keeps ``(i_0 * 5 + i_1) // 6`` at most 3, so the bound needs no
    condition of its own (TVM's simplifier folds the two into one)."""
    top = int_value(b)
    if top is None:
        return False
    x, d = value, 1
    if type(value) is FloorDiv and int_value(value.b) is not None and int_value(value.b) > 0:
        x, d = value.a, int_value(value.b)
    for c in conjuncts(guard):
        if type(c) is LT and int_value(c.b) is not None and int_value(c.b) <= (top + 1) * d \
                and structural_equal(c.a, x):
            return True
    return False


def _bound_condition(value: PrimExpr, side: str, b: PrimExpr) -> PrimExpr:
    """``value >= b`` (side ``"lo"``) or ``value <= b`` (``"hi"``) as TVM's
    simplifier writes it: with a constant ``b``, the constant of ``value``
    moves to the other side, ``1 <= i * 8 + ax0`` and ``i * 8 + ax0 < 225``
    for ``i * 8 + ax0 - 1`` within ``[0, 223]``, and a division by a positive
    constant moves over as a product."""
    c = int_value(b)
    d = int_value(value.b) if type(value) is FloorDiv and c is not None else None
    if d is not None and d > 0 and value.dtype.is_integer:
        # ``x // d <= c`` is ``x < (c + 1) * d`` and ``c <= x // d`` is
        # ``c * d <= x``, as TVM's simplifier writes them (an over-split's
        # ``(i_0 * 5 + i_1) // 6 < 4`` is ``i_0 * 5 + i_1 < 24``), where the
        # product fits the dtype
        end = (c + 1) * d if side == "hi" else c * d
        lo, hi = value.dtype.min_value(), value.dtype.max_value()
        if lo <= end <= hi:
            return _bound_condition(value.a, side, IntImm(value.dtype, end - 1 if side == "hi" else end))
    form = affine_form(value) if c is not None and value.dtype.is_integer else None
    if form is None or not form.terms or any(k < 0 for _, k in form.terms):
        # a term that counts down keeps the plain form: no constant to move
        # past it reads better
        if side == "lo":
            return GE(value, b)
        # ``v < n``, not ``v < n - 1 + 1``, as TVM's simplifier writes it
        end = simplify_index(b + 1) if b.dtype.is_integer else b + 1
        return LT(value, end)
    rest = simplify_index(value - IntImm(value.dtype, form.const)) if form.const else value
    if side == "lo":
        return LE(IntImm(value.dtype, c - form.const), rest)
    return LT(rest, IntImm(value.dtype, c + 1 - form.const))


def _splits_by(values, loop: For, proof, made) -> bool:
    """Whether distinct iterations of ``loop`` compute distinct instances:
    some value is ``c * loop + rest`` where ``rest`` spans less than ``|c|``
    over the other loops (those of ``proof`` with constant ranges, and the
    new ones ``made``), so each iteration takes values of its own. This
    covers a panel loop above a serial loop of tiles inside the panel
    (``j_0 * 32 + j_1 * 16 + ax1``), which is no iteration map."""
    ranges = _constant_ranges(proof)
    ranges.update({v.name: (0, int_value(e) - 1) for v, e in made if int_value(e) is not None})
    for value in values:
        form = affine_form(value)
        if form is None:
            continue
        coeff = dict((t.name if isinstance(t, Var) else None, c) for t, c in form.terms).get(loop.loop_var.name)
        if not coeff:
            continue
        rest = [(t, c) for t, c in form.terms if not (isinstance(t, Var) and t.name == loop.loop_var.name)]
        if any(not isinstance(t, Var) or t.name not in ranges for t, _ in rest):
            continue
        span = sum(abs(c) * (ranges[t.name][1] - ranges[t.name][0]) for t, c in rest)
        if span < abs(coeff):
            return True
    return False


def _unclipped(e: PrimExpr, proof, ranges: dict) -> PrimExpr:
    """``T.min(a, b)`` as ``a`` when ``a <= b`` over the loops of ``proof``
    (and the other way round, and ``T.max`` alike); anything else as it is."""
    kind = type(e)
    if kind is Min or kind is Max:
        small, large = (e.a, e.b) if kind is Min else (e.b, e.a)
        if _ge(large, small, proof, ranges):
            return e.a
        if _ge(small, large, proof, ranges):
            return e.b
    return e


def _ge(a: PrimExpr, b: PrimExpr, proof, ranges: dict | None = None) -> bool:
    """``a >= b`` for every value of the loops in ``proof``; constants,
    equal expressions and constant bounds of the loops (``ranges``, their
    :func:`_constant_ranges`, found here when the caller has not) decide
    most cases without the prover."""
    x, y = int_value(a), int_value(b)
    if a.dtype != b.dtype:
        # bounds of loops of int32 and of int64 (a producer's and a
        # consumer's) compare in the wider type
        wide = a.dtype if a.dtype.bits >= b.dtype.bits else b.dtype
        a, b = _cast(a, wide), _cast(b, wide)
    if x is not None and y is not None:
        return x >= y
    if a == b:
        return True
    if ranges is None:
        ranges = _constant_ranges(proof)
    if y is not None:
        got = expr_bounds(a, ranges)
        if got is not None and got[0] >= y:
            return True
    if x is not None:
        got = expr_bounds(b, ranges)
        if got is not None and got[1] <= x:
            return True
    # a row or a column of a fused loop: f // n in [0, 32) and f % n in
    # [0, n) for f below n * 32, as TVM's iterator maps find them
    low, high = _fused_part_bounds(a, proof), _fused_part_bounds(b, proof)
    if (low is not None and _ge(low[0], b, proof, ranges)) or (high is not None and _ge(a, high[1], proof, ranges)):
        return True
    # past constant bounds, symbolically: k_0 * 32 + ax0 < n * 32 for k_0
    # below n, as TVM proves it with symbolic bounds
    return can_prove(GE(a, b), proof) or surely_at_most(b, a, proof)


def _fused_part_bounds(e: PrimExpr, proof) -> tuple[PrimExpr, PrimExpr] | None:
    """The least and greatest values of ``f // d`` (``[0, c - 1]``) or
    ``f % d`` (``[0, d - 1]``) for a loop ``f`` of ``proof`` over ``[0, d *
    c)`` with ``c`` a positive constant; None for any other expression. The
    loop runs only when ``d * c`` is positive, so ``d`` is positive where
    ``e`` is evaluated."""
    if not isinstance(e, (FloorDiv, FloorMod)) or not isinstance(e.a, Var):
        return None
    rng = next((r for v, r in proof.items() if v == e.a), None)
    if rng is None or int_value(rng.min) != 0 or not isinstance(rng.extent, Mul):
        return None
    ext, d = rng.extent, e.b
    c = ext.b if ext.a == d else ext.a if ext.b == d else None
    count = None if c is None else int_value(c)
    if count is None or count <= 0:
        return None
    zero = IntImm(e.dtype, 0)
    if isinstance(e, FloorDiv):
        return zero, IntImm(e.dtype, count - 1)
    return zero, Sub(d, IntImm(e.dtype, 1))


def _const_bounds(e: PrimExpr, ranges: dict) -> tuple[int, int] | None:
    """``(least, greatest)`` value of a constant, or of a variable whose
    range in ``ranges`` is constant and not empty; None otherwise."""
    c = int_value(e)
    if c is not None:
        return c, c
    rng = ranges.get(e) if isinstance(e, Var) else None
    if rng is None:
        return None
    lo, ext = int_value(rng.min), int_value(rng.extent)
    if lo is None or ext is None or ext < 1:
        return None
    return lo, lo + ext - 1


def _always(a: PrimExpr, b: PrimExpr, ranges: dict, holds, make) -> bool:
    """``can_prove(make(), ranges)`` for a comparison of ``a`` with ``b``.
    Where they are distinct constants or variables of constant range, each
    takes every value of its range independently of the other, so the
    comparison holds for all of them exactly when ``holds`` is true of
    their ``(least, greatest)`` bounds: the prover is not needed."""
    if a != b:
        x, y = _const_bounds(a, ranges), _const_bounds(b, ranges)
        if x is not None and y is not None:
            return holds(x, y)
    return can_prove(make(), ranges)


def _predicate_implied(realize: BlockRealize, func, ranges: dict | None = None) -> bool:
    """Whether each conjunct of the block's predicate is ``value < c`` for
    the bound value of an iteration variable whose domain ends below ``c``
    (what a split that does not divide adds), or ``e < c`` for the high
    part ``e`` of such a value, ``value = e * d + r`` with ``r`` in ``[0,
    d)`` by the loops' ``ranges`` (by name) and the domain ending at most at
    ``c * d`` (a split into three parts over a value scaled by 16): then the
    domain alone keeps it."""
    return not _unimplied_conjuncts(realize, func, ranges)


def _check_instances_form_a_box(chk, loc: _Located, loops_around: list, subject: str) -> None:
    """The instances the block ran must be every point of its domains: the
    new nest runs a box of them, solved from what the producers write. Where
    one loop feeds two iteration variables whole (``vi = i``, ``vj = i * 4
    + j``) and the binding is no iteration map of the loops (a predicate
    may fuse a part), the original ran a band of that box; placed under the
    loop, the block would run (and store) the instances it never ran. TVM
    moves it and does. ``loops_around``: the loops above the block, with
    their paths."""
    realize = loc.realize
    values = list(realize.iter_values)
    loops = {node.loop_var.name: node for p, node in loops_around
             if int_value(node.extent) != 1 and (loc.scope is None or is_under(p, loc.scope))}
    readers: dict = {}
    for k, v in enumerate(values):
        for name in var_names(v) & loops.keys():
            readers.setdefault(name, []).append(k)
    shared = [(name, ks) for name, ks in readers.items() if len(ks) > 1]
    if not shared:
        return
    if is_affine_binding(values, loops, surjective=True, predicate=realize.predicate):
        return
    name, (a, b) = shared[0][0], shared[0][1][:2]
    ivs = realize.block.iter_vars
    chk.fail(NotStagePipelineError, subject,
             f"loop {name!r} feeds both {ivs[a].var.name} = {values[a].script()} and {ivs[b].var.name} = "
             f"{values[b].script()}: the block ran some pairs of their values only, and placed under the loop it "
             "would run every pair its producers' region allows, storing where it never stored", realize)


def _unimplied_conjuncts(realize: BlockRealize, func, ranges: dict | None = None) -> list:
    """The conjuncts of the block's predicate that neither the domains of
    its iteration variables imply (see :func:`_predicate_implied`) nor read
    sizes only."""
    keys = [(simplify_index(v), iv) for iv, v in zip(realize.block.iter_vars, realize.iter_values)]
    out = []
    for c in conjuncts(realize.predicate):
        if _is_true(c) or size_conditions(c, func):
            continue  # true, or of sizes only: the moved block keeps it (see _nest)
        if not var_names(c) and can_prove(c):
            continue  # a comparison of constants left unfolded (T.int64(0) < T.int64(1))
        bounds = _as_bounds(c)
        if bounds is not None:
            upper, lower = bounds
            if upper is not None and _upper_implied(upper, keys, realize, ranges):
                continue
            if lower is not None and _lower_implied(lower, keys):
                continue
        out.append(c)
    return out


def _in_iteration_variables(cond: PrimExpr, realize: BlockRealize, loop_names: set) -> PrimExpr | None:
    """``cond``, a condition of the block's predicate over the loops around
    it, written in the block's iteration variables: each binding that is a
    sum of loops (``i_0 * 4 + i_1``) replaced where it appears whole or as
    a multiple, then each loop bound alone replaced by its variable; None
    where a loop of ``loop_names`` is left, or where the condition loads
    an element the block does not declare it reads (the moved block's
    dependences are those of its regions)."""
    from ..analysis.arith.iter_map import _replace_sum

    out = cond
    for iv, v in zip(realize.block.iter_vars, realize.iter_values):
        used = var_names(v) & loop_names
        if type(v) is Var or not used:
            continue
        if isinstance(out, (LT, LE, GT, GE, EQ, NE)) and out.a.dtype.is_integer:
            # a side the sum does not make up is left for the other bindings
            # (``i < 3`` beside ``vj = i * 4 + j`` is ``vi < 3`` for ``vi = i``)
            a = _replace_sum(out.a, v, iv.var, used) if var_names(out.a) & used else None
            b = _replace_sum(out.b, v, iv.var, used) if var_names(out.b) & used else None
            out = type(out)(out.a if a is None else a, out.b if b is None else b)
    plain = {v: iv.var for iv, v in zip(realize.block.iter_vars, realize.iter_values)
             if type(v) is Var and v.name in loop_names}
    out = substitute(out, plain)
    if var_names(out) & loop_names:
        return None
    for load in find_nodes(out, (BufferLoad,)):
        if not any(r.buffer == load.buffer and len(r.region) == len(load.indices)
                   and all(int_value(rng.extent) == 1 and prove_equal(simplify_index(rng.min), simplify_index(i))
                           for rng, i in zip(r.region, load.indices)) for r in realize.block.reads):
            return None
    return out


def _as_bounds(c) -> tuple | None:
    """A conjunct as ``(upper, lower)``: ``upper`` an ``LT(e, b)`` meaning
    ``e < b`` or None, ``lower`` a pair ``(b, e)`` meaning ``b <= e`` or
    None; None for anything else than an integer comparison."""
    if not isinstance(c, (LT, LE, GT, GE)) or not c.a.dtype.is_integer:
        return None
    a, b = (c.a, c.b) if isinstance(c, (LT, LE)) else (c.b, c.a)  # a < b, or a <= b
    one = IntImm(a.dtype, 1)
    if isinstance(c, (LT, GT)):
        return LT(a, b), (a + one, b)
    return LT(a, b + one), (a, b)


def _offset(e: PrimExpr, value: PrimExpr) -> int | None:
    """``e - value`` when it is a constant, else None."""
    fe, fv = affine_form(e), affine_form(value)
    if fe is None or fv is None or fe.dtype != fv.dtype:
        return None
    diff = fe.plus(fv, -1)
    return diff.const if not diff.terms else None


def _upper_implied(c: LT, keys: list, realize: BlockRealize, ranges) -> bool:
    """Whether the domains imply ``c.a < c.b``: ``c.a`` is an iteration
    variable's value plus a constant and the domain ends below the bound
    so shifted (what a split that does not divide adds, or a padding's
    shifted guard); or the high part of a value (:func:`_high_part_bounded`);
    or the dividend of a value ``c.a // q`` whose domain ends at ``m``, with
    ``c.b`` equal to ``m * q`` (a fuse split again: ``f < m * n`` where the
    row is ``f // n``)."""
    key = simplify_index(c.a)
    for k, iv in keys:
        end = simplify_index(iv.dom.min + iv.dom.extent)
        # the domain's end, a constant or a size (``i_0 * 8 + i_1 < c`` for
        # a variable over ``range(c)``), at most the bound
        if k == key and index_at_most(end, c.b):
            return True
        d = _offset(key, k)
        if d and end.dtype == c.b.dtype and index_at_most(simplify_index(end + IntImm(end.dtype, d)), c.b):
            return True
    if any(_high_part_bounded(c, v, iv, ranges or {}) for v, iv in zip(realize.iter_values, realize.block.iter_vars)):
        return True
    return _quotient_bounded(c, key, realize)


def _quotient_bounded(c: LT, key: PrimExpr, realize: BlockRealize) -> bool:
    """``c.a < c.b`` where a value is ``c.a // q`` over a domain from 0 to
    ``m``, ``c.b`` is ``m * q``, and ``q`` is a positive constant or the
    extent of the domain of the value ``c.a % q`` (where it is not
    positive, that domain is empty and the block never runs)."""
    for iv, v in zip(realize.block.iter_vars, realize.iter_values):
        if not isinstance(v, FloorDiv) or simplify_index(v.a) != key or int_value(iv.dom.min) != 0:
            continue
        q = v.b
        if not (int_value(q) is not None and int_value(q) > 0) and not any(
                isinstance(w, FloorMod) and simplify_index(w.a) == key and prove_equal(w.b, q)
                and prove_equal(other.dom.extent, q) and int_value(other.dom.min) == 0
                for other, w in zip(realize.block.iter_vars, realize.iter_values)):
            continue
        if iv.dom.extent.dtype == c.b.dtype and prove_equal(simplify_index(iv.dom.extent * q), simplify_index(c.b)):
            return True
    return False


def _lower_implied(lower: tuple, keys: list) -> bool:
    """Whether the domains imply ``b <= e`` (``lower`` is ``(b, e)``):
    ``e`` is an iteration variable's value plus a constant ``d``, and the
    domain starts at ``b - d`` or later (a padding's ``1 <= h + 1``)."""
    b, e = lower
    key = simplify_index(e)
    for k, iv in keys:
        d = 0 if k == key else _offset(key, k)
        if d is None or iv.dom.min.dtype != b.dtype:
            continue
        if index_at_most(b, simplify_index(iv.dom.min + IntImm(b.dtype, d)) if d else iv.dom.min):
            return True
    return False


def _high_part_bounded(c: LT, value: PrimExpr, iv, ranges: dict) -> bool:
    """``c`` is ``e < b`` and ``value = e * d + r`` with ``r`` in ``[0, d)``
    (``ranges`` bound its loops) and the domain of ``iv`` ending at most
    at ``b * d``: the domain implies ``c``."""
    fe, fv = affine_form(c.a), affine_form(value)
    if fe is None or fv is None or not fe.terms or fe.dtype != fv.dtype:
        return False
    term, ce = fe.terms[0]
    cv = dict(fv.terms).get(term)
    if cv is None or ce == 0 or cv % ce or cv // ce <= 0:
        return False
    d = cv // ce
    rest = simplify_index(value - c.a * IntImm(value.dtype, d), ranges)
    if var_names(rest) & var_names(c.a):
        return False
    bounds = expr_bounds(rest, ranges)
    if bounds is None or bounds[0] < 0 or bounds[1] >= d:
        return False
    end = simplify_index(iv.dom.min + iv.dom.extent)
    return index_at_most(end, simplify_index(c.b * IntImm(c.b.dtype, d))) if c.b.dtype == end.dtype else False


def _same(a, b, proof) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b or can_prove(EQ(a, b), proof)


def _storage_rank(scope: str) -> int:
    """TVM's rank of a storage scope: global 0, shared 1, warp 2, local 3;
    the special scopes (``wmma.*`` and others) belong to one thread too. A
    scope TVM does not know (the parser takes any string, TVM's lowering
    refuses it) counts as global, as the interpreter runs it: one buffer
    that every thread shares."""
    if not valid_scope(scope):
        return 0
    rank = scope.partition(".")[0] or "global"
    return {"global": 0, "shared": 1, "warp": 2, "local": 3}.get(rank, 4)


def _thread_rank(tag: str) -> int:
    """TVM's rank of a thread tag: blockIdx 0, threadIdx and vthread 1."""
    return 0 if tag.startswith("blockIdx") else 1


def _relaxed_under(scope: str, tag: str) -> bool:
    """Whether compute_at relaxes a buffer of ``scope`` over a loop bound to
    ``tag`` above the target loop, as TVM does: ``shared`` over threadIdx
    and vthread, ``warp`` over threadIdx.x, ``global`` and ``local`` over
    none (each thread computes what it reads itself)."""
    rank = _storage_rank(scope)
    if rank == 0:
        return False
    if rank == 2:
        return tag == "threadIdx.x"
    return rank <= _thread_rank(tag)


def _shares_storage(scope: str, tag: str) -> bool:
    """Whether the threads of a loop bound to ``tag`` share one buffer of
    ``scope``: ``global`` is shared by all, ``shared`` by the threads of a
    block, ``warp`` by those of a warp; virtual threads run one after
    another and never race."""
    if tag.startswith("vthread"):
        return False
    rank = _storage_rank(scope)
    if rank == 2:
        return tag == "threadIdx.x"
    return rank <= 1 and rank <= _thread_rank(tag)


def _required_region(site, cpath: Path, crealize: BlockRealize, region, lpath: Path) -> list[Interval]:
    """What the consumer realized at ``cpath`` reads of ``region`` while the
    loops below ``lpath`` run, relaxed further over the thread-bound loops
    at and above ``lpath`` that share the buffer's storage scope: what
    compute_at makes the producer compute in each iteration of the loop
    (TVM's RelaxBufferRegions with the storage scope). A ``shared`` buffer
    read by the threads of a block is computed whole by each of them, so
    that every thread finds what the others read."""
    dom = {l.loop_var: Range(l.min, l.extent) for l in loops_between(site, cpath, lpath)}
    scope = region.buffer.scope()
    above = nodes_along(site.func, lpath)  # the nodes above the loop, and the loop
    for node in above:
        if (isinstance(node, For) and node.kind is ForKind.THREAD_BINDING
                and _relaxed_under(scope, node.thread_binding)):
            dom[node.loop_var] = Range(node.min, node.extent)
    return _bound_substituted(region, dom, bindings(crealize))


def _bound_substituted(region, dom: dict, bind: dict) -> list[Interval]:
    """``bound_region(region, dom, bind)``. Where every dimension, its
    bindings substituted, is a sum in normal form of literal extent whose
    relaxed variables have literal ends, each interval is read off the
    sum directly (:func:`~tirfun.analysis.arith.region._plain_bound`, what
    ``bound_region`` does for a region without bindings), rather than by
    evaluating and simplifying both ends: the two agree node for node (a
    test compares them), as substituting variables by sums commutes with
    the folding of the ends."""
    relaxed = None
    out = []
    for rng in region.region:
        m = rng.min
        if type(m) is Var and type(rng.extent) is IntImm and rng.extent.value == 1:
            # one element at a variable bound to a variable that is not
            # relaxed (a consumer reading at an outer loop): the sum is that
            # variable, kept as it is at both ends
            m = bind.get(m, m)
            if type(m) is Var and m.dtype == rng.extent.dtype and m not in dom:
                out.append(Interval(m, m))
                continue
        m = substitute(rng.min, bind)
        if type(rng.extent) is not IntImm or m.dtype != rng.extent.dtype or not is_plain_sum(m):
            return bound_region(region, dom, bind)
        if relaxed is None:
            relaxed = {v: Interval.from_range(r) for v, r in dom.items()}
        got = _plain_bound(Range(m, rng.extent), relaxed)
        if got is None:
            return bound_region(region, dom, bind)
        out.append(got)
    return out


def _followed(doms: dict) -> set:
    """The names of the loops the solved domains ``doms`` depend on."""
    return set().union(*[var_names(e) for iv in doms.values() for e in (iv.lo, iv.hi) if e is not None])


def _restarts(realize: BlockRealize, doms: dict) -> bool:
    """Whether the reduction block, placed under a loop with the domains
    ``doms``, computes each element it writes afresh in every iteration:
    each of its reduction variables runs its whole domain there (no
    region solved it), and its body is one unconditional store of an
    element that reads no element of what it writes but that one (the
    accumulator). Run again with later values of what it reads, it then
    leaves what one run with the last values would, as a block that
    overwrites does (a softmax's sum under its maximum's loop, which TVM
    places there and which computes the right result)."""
    block = realize.block
    body = block.body
    if block.init is None or not isinstance(body, BufferStore) or body.predicate is not None:
        return False
    for iv in block.iter_vars:
        dom = doms.get(iv.var)
        if iv.iter_type is IterVarType.CommReduce and dom is not None and (dom.lo is not None or dom.hi is not None):
            return False
    def the_element(access) -> bool:  # the element the body stores
        return access.buffer == body.buffer and len(access.indices) == len(body.indices) and all(
            structural_equal(a, b) for a, b in zip(access.indices, body.indices))

    written = writes_of(block)
    if any(load.buffer in written and not the_element(load) for load in find_nodes(body.value, (BufferLoad,))):
        return False
    init = block.init
    return (isinstance(init, BufferStore) and the_element(init)
            and not any(load.buffer in written for load in find_nodes(init.value, (BufferLoad,))))


def _reads_what_it_writes(block: Block) -> bool:
    """Whether the block reads (or, with an init, updates) a buffer it writes."""
    return block.init is not None or bool(reads_of(block) & writes_of(block))


@register
@attrs.frozen
class ComputeAt(_ComputeAtBase):
    """Move a producer block under a loop of its consumers, computing in
    each iteration of the loop exactly the region the consumers under it
    read there, on new loops ``ax0, ax1, ...`` (loops of one iteration are
    left out unless ``preserve_unit_loops``). The block goes before the
    first consumer among the loop's statements (``index=-1``), after the
    last producer (``index=-2``), or at the position ``index``. Where the
    region reaches past the block's domain, its new binding gets a
    predicate. The block's buffer keeps its whole shape.

    Under thread-bound loops, the region is taken as TVM takes it: over
    the loops below the target loop, and over the thread-bound loops at and
    above it whose threads share the buffer's storage (``shared``: those
    bound to threadIdx and vthread; ``warp``: threadIdx.x; ``local`` and
    ``global``: none). A ``shared`` tile read by every thread of a block is
    thus computed whole by each of them; binding the new loops to the
    threads (a cooperative fetch: ``fuse``, ``split``, ``bind``) shares the
    work out. Until then the threads write the same values, which the
    interpreter's GPU semantics reports as a race.

    Requirements, each with the error raised when it fails:

    1. the block and the loop exist (UnknownBlockError, UnknownLoopError,
       RefKindError, UnknownFunctionError), the block is not the root block
       (RootBlockError), ``preserve_unit_loops`` is a bool and ``index`` an
       int (InvalidArgumentError);
    2. the block and the loop are in the same scope and the loop is not
       above the block (NotInSameScopeError);
    3. the block is a complete or a reduction block
       (NotCompleteOrReductionBlockError; another writer of its outputs
       that has run to its end before the block and the loop, such as the
       fill of a cache, does not count where the domains imply the block's
       predicate) and not an output block (OutputBlockError);
    4. it is not the only leaf of its scope (OnlyLeafError);
    5. every consumer of the block is under the loop
       (NotAllRequiredBlocksAreVisitedError), and ``index`` is -1, -2 or a
       position after the producers and before the consumers among the
       loop's statements (InvalidInsertionIndexError);
    6. the block writes all its consumers read of it, within the loop they
       share (NotStagePipelineError);
    7. no block the move jumps over writes what the block reads or uses
       what it writes, other than its consumers (DependenceViolationError);
    8. the block writes one element per dimension at an iteration variable
       plus a constant, or at a constant, or at indices that are an
       iteration map of its variables (``B[vi // 4, vi % 4]``: each
       variable then runs from its value at the first element needed to its
       value at the last) (UnsupportedRegionError);
    9. under parallel loops, distinct iterations compute distinct
       iterations of the block; a block that reads what it writes (a
       reduction) is not run by several threads that share its output,
       under thread-bound loops its binding does not use or above
       thread-bound loops under the target loop (ThreadOverlapError); a
       thread-bound loop driving a reduction variable is a cross-thread
       reduction, lowered to an all-reduce where its loops allow it.

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,))
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] * T.float32(2)
            for i_0, i_1 in T.grid(2, 4):
                with T.block("C"):
                    vi = T.axis.spatial(8, i_0 * 4 + i_1)
                    C[vi] = B[vi] + T.float32(1)

        # rewrite
        compute_at("B", "i_0")

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,))
            for i_0 in range(2):
                for ax0 in range(4):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i_0 * 4 + ax0)
                        B[vi] = A[vi] * T.float32(2)
                for i_1 in range(4):
                    with T.block("C"):
                        vi = T.axis.spatial(8, i_0 * 4 + i_1)
                        C[vi] = B[vi] + T.float32(1)
    """

    primitive = "compute_at"

    block: object = attrs.field(converter=as_block_ref)
    loop: object = attrs.field(converter=as_loop_ref)
    preserve_unit_loops: object = False
    index: object = -1


@register
@attrs.frozen
class ReverseComputeAt(_ComputeAtBase):
    """Move a consumer block under a loop of its producers, computing in
    each iteration of the loop exactly the iterations whose reads the
    producers under it have just written, on new loops ``ax0, ax1, ...``
    (loops of one iteration are left out unless ``preserve_unit_loops``).
    The block goes before the first of its consumers among the loop's
    statements (``index=-1``, the end when none is there), right after the
    last producer (``index=-2``), or at the position ``index``.

    Requirements, each with the error raised when it fails:

    1. the block and the loop exist (UnknownBlockError, UnknownLoopError,
       RefKindError, UnknownFunctionError), the block is not the root block
       (RootBlockError), ``preserve_unit_loops`` is a bool and ``index`` an
       int (InvalidArgumentError);
    2. the block and the loop are in the same scope and the loop is not
       above the block (NotInSameScopeError);
    3. the block is a complete or a reduction block
       (NotCompleteOrReductionBlockError; another writer of its outputs
       that has run to its end before the loop, such as the fill of a
       cache, does not count), and each condition of its predicate either
       says no more than that its iteration variables stay in their
       domains, shifted or not (``1 <= h + 1``), or through a fused row
       (``f < m * n`` for ``f // n``), or can be written in its iteration
       variables (``i_0 * 4 + i_1 < n`` as ``vi < n``, ``B[i, j] < 10`` as
       ``B[vi, vj] < 10``, its loads among what it declares it reads), and
       then goes with the block (NonTrivialPredicateError): the loops it
       is written in go away. TVM drops such a condition, and its result
       then runs instances the original did not;
    4. it is not the only leaf of its scope (OnlyLeafError);
    5. every producer of the block is under the loop, or has run to its
       end before it (NotAllRequiredBlocksAreVisitedError; TVM asks for
       all under the loop), and ``index`` is -1, -2 or a
       position after the producers and before the consumers among the
       loop's statements (InvalidInsertionIndexError);
    6. the producers write all the block reads of them, within the loop they
       share (NotStagePipelineError);
    7. no block the move jumps over uses what the block writes or writes
       what it reads, other than its producers (DependenceViolationError):
       it would move past another reader of what it overwrites. A block
       none of whose producers is under the loop runs its whole domain in
       every iteration, as in TVM, so its consumers under the loop, after
       it, may read what it writes, as long as nothing under the loop
       writes what it reads or writes (its reruns then write the same
       values);
    8. the block reads one element per dimension of each produced buffer,
       at an iteration variable plus a constant or an expression of none of
       them (a slice from a run-time start, ``A[v + index]``), or divided
       by a constant (a repeat, ``T[v // 2]``: each element's readers run
       in the iteration that writes it), so that its iterations can
       be solved from what the producers write in one iteration of the loop,
       which must be shown exactly, and agree between buffers; a reduction
       must not meet the same element in two iterations of the loop, unless
       it runs whole from its init in every iteration (its reduction
       variables free, as a softmax's sum under the loop of its maximum);
       and over all iterations those solved iterations are all of the
       block's that access no element past a buffer's end (a padding block
       whose border reads nothing any producer writes would lose it; TVM
       drops it) (UnsupportedRegionError). Producers that write only in
       some iterations of the loop, by a condition of the loops kept (an
       over-split's ``i_0 * 128 + i_1 < 1000`` at its inner loop, or a
       split reduction's ``k_0 * 4 + k_1 < n`` at ``k_0``, read where
       ``k_1`` starts), give the block that condition as its predicate, as
       TVM does; all of them must then write under one condition;
    9. under parallel loops, distinct iterations compute distinct
       iterations of the block; a block that reads what it writes (a
       reduction) is not run by several threads that share its output,
       under thread-bound loops its binding does not use or above
       thread-bound loops under the target loop (ThreadOverlapError); a
       thread-bound loop driving a reduction variable is a cross-thread
       reduction, lowered to an all-reduce where its loops allow it.

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,))
            for i_0, i_1 in T.grid(2, 4):
                with T.block("B"):
                    vi = T.axis.spatial(8, i_0 * 4 + i_1)
                    B[vi] = A[vi] * T.float32(2)
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    C[vi] = B[vi] + T.float32(1)

        # rewrite
        reverse_compute_at("C", "i_0")

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,))
            for i_0 in range(2):
                for i_1 in range(4):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i_0 * 4 + i_1)
                        B[vi] = A[vi] * T.float32(2)
                for ax0 in range(4):
                    with T.block("C"):
                        vi = T.axis.spatial(8, i_0 * 4 + ax0)
                        C[vi] = B[vi] + T.float32(1)
    """

    primitive = "reverse_compute_at"
    reverse = True

    block: object = attrs.field(converter=as_block_ref)
    loop: object = attrs.field(converter=as_loop_ref)
    preserve_unit_loops: object = False
    index: object = -1


def compute_at(block, loop, preserve_unit_loops: bool = False, index: int = -1) -> ComputeAt:
    """The :class:`ComputeAt` record: ``compute_at("B", "i_0")``."""
    return ComputeAt(block, loop, preserve_unit_loops, index)


def reverse_compute_at(block, loop, preserve_unit_loops: bool = False, index: int = -1) -> ReverseComputeAt:
    """The :class:`ReverseComputeAt` record: ``reverse_compute_at("C", "i_0")``."""
    return ReverseComputeAt(block, loop, preserve_unit_loops, index)


def _check_safe_divisions(chk: Checks, subject: str, doms: dict, proof: dict, others: list, realize) -> None:
    """The domains the moved block gets (``doms``, from the regions of the
    blocks ``others`` under the loop) divide by nothing that may be zero
    where those blocks compute their indices under a condition
    (UnsafeRegionError): ``A[40 // (vi - 3)]`` read only where ``vi !=
    3``; the moved block's loop bounds and bindings are computed at every
    iteration. TVM builds them as they are. Where the other blocks compute
    the index unconditionally, the moved block divides where they did; and
    a divisor that is a factor of the extent of a loop the nest runs
    under (``f // c`` under a loop over ``b * c``) is nonzero wherever the
    nest runs."""
    divisions = [e for iv in doms.values() for side in (iv.lo, iv.hi) if side is not None
                 and not (type(side) in (IntImm, Var))
                 for e in walk(side) if type(e) in (Div, Mod, FloorDiv, FloorMod) and not e.dtype.is_float]
    if not divisions or not any(_has_condition(b) for b in others):
        return
    ranges = _constant_ranges(proof)
    for e in divisions:
        got = expr_bounds(e.b, ranges)
        if got is not None and (got[0] >= 1 or got[1] <= -1):
            continue
        if can_prove(NE(e.b, IntImm(e.b.dtype, 0)), proof):
            continue
        if any(_no_run_without(e.b, rng.extent) for rng in proof.values()):
            # a loop the nest runs under does not run where the divisor is
            # zero (TVM's fused and split loops over run-time sizes: `f //
            # c` under a loop of `b * c`, or of `(b * c + 2) // 3`)
            continue
        chk.stop(UnsafeRegionError, subject,
                 f"the region the block is computed over divides by {e.b.script()}, which is not provably "
                 "nonzero; the blocks it is computed for evaluate it only under a condition, and the loops "
                 "and bindings built from it would evaluate it at every iteration", realize)


def _no_run_without(divisor: PrimExpr, extent: PrimExpr) -> bool:
    """Whether a loop of ``extent`` runs no iteration where ``divisor`` is
    zero: the extent is a multiple of it (``b * c`` of ``c``), or the
    divisor is a size whose value 0 leaves the extent at most 0
    (``(b * c + 2) // 3`` of ``c``)."""
    if divides(divisor, extent):
        return True
    if type(divisor) is not Var:
        return False
    at_zero = int_value(simplify_expr(substitute(extent, {divisor: IntImm(divisor.dtype, 0)})))
    return at_zero is not None and at_zero <= 0


def _has_condition(block: Block) -> bool:
    """Whether the block's body computes something under a condition (an
    ``if``, ``T.if_then_else`` or ``T.Select``)."""
    for node in walk(block.body):
        if type(node) in (IfThenElse, Select) or (type(node) is Call and node.op == "tir.if_then_else"):
            return True
    return False


def _check_loose_accesses(chk: Checks, site, loc: _Located, lpath: Path, subject: str) -> None:
    """No statement of the scope outside its blocks (a store in a loop of
    a function without blocks, a loop bound) that the move reorders with
    the block writes a buffer the block uses, or reads one it writes
    (DependenceViolationError): the move orders the block with the blocks
    only, as TVM does, and would run it on the wrong side of such a
    statement. A statement is reordered where it lies under the target
    loop, holds one of the block's two places and not the other, or runs
    between them."""
    index = site.index
    if index is not None and not index.loose:
        return
    block = loc.realize.block
    written = writes_of(block)
    used = written | reads_of(block)
    span = sorted([program_key(site, loc.rpath), program_key(site, lpath)])
    top = (() if loc.scope is None else loc.scope) + (("body", None),)
    for path, node in statements_outside_blocks(get_at(site.func, top), top):
        holds_old, holds_new = is_under(loc.rpath, path), path == lpath or is_under(lpath, path)
        if not (is_under(path, lpath) or holds_old != holds_new
                or (not holds_old and span[0] < program_key(site, path) < span[1])):
            continue
        conflict = None
        if isinstance(node, BufferStore) and node.buffer in used:
            conflict = f"writes {node.buffer.name}, which the block uses"
        else:
            for child in iter_children(node):
                if isinstance(child, Stmt) or plain_arithmetic(child):
                    continue
                loaded = next((n.buffer for n in walk(child) if type(n) is BufferLoad and n.buffer in written),
                              None)
                if loaded is not None:
                    conflict = f"reads {loaded.name}, which the block writes"
                    break
        if conflict is not None:
            chk.stop(DependenceViolationError, subject,
                     f"a {type(node).__name__} outside the blocks {conflict}; the move orders the block "
                     "with the other blocks only, and would run it on the other side of that statement",
                     loc.realize)


# -- compute_inline ------------------------------------------------------------------------

def _inline_uses(site, loc: _Located, buffer: Buffer) -> _Uses:
    """What the block's scope does with ``buffer``: read off the name
    index where it can tell (:func:`_indexed_uses`), else found by a walk
    of the statements that name it (:func:`_uses_in_scope`)."""
    uses = _indexed_uses(site, loc, buffer)
    return uses if uses is not None else _uses_in_scope(site, loc, buffer)


def _indexed_uses(site, loc: _Located, buffer: Buffer) -> _Uses | None:
    """The :class:`_Uses` of ``buffer`` in the function's root block, from
    the blocks the index says mention it, without a walk; None where the
    index cannot tell: another scope, a statement outside blocks that
    names a buffer (a loop bound, a condition: it would use the buffer in
    its own fields), clashing names, a data pointer (its uses in the
    blocks' expressions would need a scan) or an init that holds more than
    a store (a block inside it, which the index does not list, might match
    the buffer). Otherwise the blocks that mention the buffer are every
    statement that uses it, and the outermost of them are the tops."""
    index = site.index
    if loc.scope != _ROOT or buffer.data is not None or index.loose or index.clashes:
        return None
    blocks = [(p, r) for _, p, r in _keyed_using(site, loc, [buffer])]
    tops: list = []
    opaque = False
    for path, realize in blocks:
        block = realize.block
        if block.init is not None and type(block.init) is not BufferStore:
            return None
        opaque = opaque or any(m.source.buffer == buffer for m in block.match_buffers)
        # program order: a block nested in a top comes after it
        if not (tops and is_under(path, tops[-1])):
            tops.append(path)
    return _Uses(opaque, blocks, tops)


def _check_own_variables(chk: Checks, site, loc: _Located, store: BufferStore, subject: str,
                         outcome: str = "inlined into the blocks that read the buffer, the value would "
                                        "name a loop they are not in") -> None:
    """The store's indices and value name no variable bound between the
    scope and the block (a loop or let around it, as in an opaque block
    written over loop variables): inlined into a reader (or, for
    reverse_compute_inline, folded into the producer), the value would
    name a loop that block is not in. TVM asks the same: the value may use
    only the block's iteration variables and what the whole scope sees."""
    around = names_bound_between(site.func, loc.scope, loc.rpath)
    # an iteration variable of the block shadows a loop of its name
    around -= {iv.var.name for iv in loc.realize.block.iter_vars}
    # the names kept for the store hold every variable of its expressions
    # (and more: its buffers'), so where none is bound around, none is named
    if not around or around.isdisjoint(names_in(store)):
        return
    # the expressions' variables, not those of the buffers they load from
    named, stack = set(), [store.value, *store.indices]
    while stack:
        n = stack.pop()
        if isinstance(n, Var):
            if n.name in around:
                named.add(n.name)
        elif not isinstance(n, Buffer):
            stack.extend(iter_children(n))
    named = sorted(named)
    if named:
        chk.stop(BodyAnalysisError, subject,
                 f"the body names {', '.join(named)}, bound around the block rather than by its iteration "
                 f"variables; {outcome}", loc.realize)


def _check_no_views(chk: Checks, block: Block, subject: str, realize, outcome: str) -> None:
    """The block matches no buffer (BodyAnalysisError): its body would be
    moved into another block, which does not declare the view, and would
    use a buffer nothing declares there (TVM moves it as it is)."""
    if block.match_buffers:
        view = block.match_buffers[0].buffer.name
        chk.stop(BodyAnalysisError, subject,
                 f"the block reads through its match buffer {view}; {outcome}, its body would use {view}, which "
                 "the block it goes into does not declare", realize)


def _commit_inline(site, scope: Path | None, func, removal: Path, rebuilt: list, buffer: Buffer,
                   same_lets: bool = False):
    """The module with an inlining's result: ``func`` is the site's
    function with the statements of ``rebuilt`` (``(path, old, new)``)
    replaced in place; the statement at ``removal`` is deleted and
    ``buffer`` dropped from the allocations of the scope's block. The new
    index is stated from what changed (:func:`derive_inline_index`, told
    ``same_lets`` where the rebuilt stores bind the Let names they bound)."""
    removed = get_at(site.func, removal)
    func = delete_at(func, removal)
    dropped = []
    if scope is not None:
        block = get_at(func, scope)
        dropped = [b for b in block.alloc_buffers if b == buffer]
        func = replace_at(func, scope, _drop_allocation(block, buffer))
    path = scope if scope is not None else (_BODY,)

    def derive(new_func):
        return derive_inline_index(site.index, site.func, new_func, removal, removed, rebuilt, dropped,
                                   same_lets=same_lets)

    return commit(site, path, get_at(func, path), derive=derive)


@register
@attrs.frozen
class ComputeInline(Rewrite):
    """Inline a block into the blocks that read its buffer: every load of
    the buffer becomes the block's stored value at that index, the block is
    removed, and so is its buffer from the scope's allocations when nothing
    uses it any more. The readers' ``T.reads``/``T.writes`` are inferred again.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError,
       UnknownFunctionError) and is not the root block (RootBlockError);
    2. it has no init statement (HasInitBlockError) and writes exactly one
       buffer (NotSingleReadWriteBufferError);
    3. it is not an output block of its scope (OutputBlockError) and is a
       complete block (IncompleteBlockError);
    4. its body is one store ``B[...] = f(...)`` whose indices are a
       bijective affine map of the iteration variables: distinct variables
       or constants (every variable left out of one constant value), or
       slices of the variables that tile each of them whole, as
       ``B[vi * 4 + vj]`` (BodyAnalysisError);
    5. it is not the only leaf of its scope (OnlyLeafError);
    6. the buffer is not used through its data pointer nor matched into a
       block (OpaqueAccessError);
    7. within the loop a reader shares with it, the block writes all the
       reader reads of its buffer (NotStagePipelineError);
    8. no block between it and its last reader writes what it reads
       (DependenceViolationError): the inlined value would be read later.

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,))
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] * T.float32(2)
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    C[vi] = B[vi] + T.float32(1)

        # rewrite
        compute_inline("B")

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi])
                    T.writes(C[vi])
                    C[vi] = A[vi] * T.float32(2) + T.float32(1)
    """

    primitive = "compute_inline"

    block: object = attrs.field(converter=as_block_ref)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block])
        loc = _locate(chk, site, self.block)
        block = loc.realize.block
        subject = describe(self.block)
        _check_no_init(chk, subject, loc.realize)
        if len(block.writes) != 1:
            chk.stop(NotSingleReadWriteBufferError, subject,
                     f"the block writes {len(block.writes)} buffer regions; it must write exactly one",
                     loc.realize)
        buffer = block.writes[0].buffer
        if is_output_block(site, loc.scope, block):
            chk.fail(OutputBlockError, subject, f"the block writes {buffer.name}, which its scope does "
                     "not allocate; an output block cannot be inlined", loc.realize)
        code = complete_block_code(loc.children, block)
        if code:
            chk.fail(IncompleteBlockError, subject, f"the block is not a complete block: it fails "
                     f"condition {code} ({COMPLETE_BLOCK_DEFINITION})", loc.realize)
        chk.checkpoint()
        store = block.body
        mapping = None
        if isinstance(store, BufferStore) and store.buffer == buffer and store.predicate is None:
            mapping = _inverse(store.indices, block.iter_vars)
        if mapping is None:
            chk.stop(BodyAnalysisError, subject,
                     f"the body must be one store {buffer.name}[...] = f(...) whose indices are a bijective "
                     "affine map of the iteration variables (distinct variables, constants, or slices "
                     "of them tiling each whole)", loc.realize)
        if _accumulates(block, buffer):
            # the inlined value would read the buffer no block writes any more
            # (the stated regions may leave that read out, which TVM accepts)
            chk.stop(BodyAnalysisError, subject, f"the block reads {buffer.name}, which it writes; only a block "
                     f"that computes each element of {buffer.name} from other buffers can be inlined",
                     loc.realize)
        _check_own_variables(chk, site, loc, store, subject)
        _check_no_views(chk, block, subject, loc.realize, "inlined into the blocks that read the buffer")
        removal = _check_leaf(chk, site, loc, subject)
        uses = _inline_uses(site, loc, buffer)
        _check_plain_uses(chk, uses, buffer, subject)
        masked = _first_masked_load(site.func.body if loc.scope is None else site.at(loc.scope).body, buffer)
        if masked is not None:
            # its masked lanes would compute the value where the mask keeps them from reading
            chk.fail(OpaqueAccessError, subject, f"the buffer {buffer.name} is read by the predicated "
                     f"vector load {masked.script()}; its lanes cannot be inlined one by one")
        for _, r in uses.blocks:
            if r.block is not block and buffer in (reads_of(r.block) | writes_of(r.block)):
                _check_inferable(chk, subject, r)
        readers = [c for c in consumers(loc.children, loc.position)]
        for reader in readers:
            bad = region_cover_violation(site, loc.children, reader, {buffer})
            if bad is not None:
                chk.fail(NotStagePipelineError, subject,
                         f"block {reader[1].block.name_hint!r} reads elements of {buffer.name} that block "
                         f"{block.name_hint!r} does not surely write before it within the loop they share",
                         loc.realize, reader[1])
        if readers:
            for yrealize in _blocks_between(site, loc, loc.rpath, readers[-1][0], (loc.rpath,),
                                             reads_of(block) | writes_of(block)):
                buf = conflicting_buffer(block, yrealize.block, allow_reads_of_moved=True)
                if buf is not None:
                    chk.fail(DependenceViolationError, subject,
                             f"block {yrealize.block.name_hint!r} writes {buf.name}, which the block reads, "
                             "between the block and its readers; the inlined value would change",
                             yrealize)
        # the statements to rebuild: those that load the buffer, less the block itself
        tops = [p for p in uses.tops if removal is None or (p != removal and not is_under(p, removal))]
        return site, loc, buffer, mapping, removal, tops

    def build(self, plan) -> Outcome:
        site, loc, buffer, mapping, removal, tops = plan
        block = loc.realize.block
        store: BufferStore = block.body
        value = store.value

        def pre(n):
            if isinstance(n, Buffer):
                return n
            # (a block's stated regions may leave out what its body loads, as
            # TVM's programs state them: the names under it tell)
            if isinstance(n, Stmt) and not mentions(n, buffer):
                return n
            return None

        def post(n):
            if isinstance(n, BufferLoad) and n.buffer == buffer:
                inlined = substitute(value, mapping(list(n.indices)))
                if n.predicate is None:
                    return inlined
                # a masked-off (scalar) load is zero and evaluates nothing
                return Call(inlined.dtype, "tir.if_then_else",
                            [n.predicate, inlined, const(0, inlined.dtype)])
            if isinstance(n, Block):
                return _reinfer(n, buffer, known, declared)
            return n

        known = frozenset(site.func.buffer_map.values()) | _region_buffers(block)
        # walked once, for the first consumer that needs it
        declared = functools.cache(lambda: _declared_buffers(site.func))

        # every other statement of the scope either names no use of the
        # buffer or only leads to these; the paths stay valid until the
        # deletion, which comes last
        func = site.func
        rebuilt = []
        for path in tops:
            # ``pre`` and ``post`` leave arithmetic and leaves alone
            before = get_at(func, path)
            after = _inlined_store_realize(before, buffer, post, pre)
            if after is None:
                after = transform_plain(before, post, pre)
            rebuilt.append((path, before, after))
            func = replace_at(func, path, after)
        # a value that binds no Let leaves each reader's store binding the
        # Let names it bound (the names kept for the block tell it)
        return Outcome(_commit_inline(site, loc.scope, func, removal, rebuilt, buffer,
                                      not leaf_binds_lets(block)))

    def python_args(self):
        return [py_value(self.block)]


def _inlined_store_realize(realize, buffer: Buffer, post, pre) -> BlockRealize | None:
    """``transform_plain(realize, post, pre)`` (compute_inline's rewrite
    of a reader) for the common reader: a BlockRealize whose block is
    one store, with no init, view or
    annotation, and whose bindings, predicate and domains are plain
    arithmetic, so that the buffer can be loaded in the store only (its
    regions may not say so: they are inferred again). Only the store is
    walked; the block's regions, which the walk would rewrite before
    ``post`` infers them again, are not. None for any other statement: the
    whole walk is needed."""
    if type(realize) is not BlockRealize:
        return None
    block = realize.block
    store = block.body
    if (type(store) is not BufferStore or block.init is not None or block.match_buffers or block.annotations
            or not plain_arithmetic(realize.predicate) or not all(map(plain_arithmetic, realize.iter_values))
            or not all(plain_arithmetic(iv.dom.min) and plain_arithmetic(iv.dom.extent) for iv in block.iter_vars)):
        return None
    new_store = transform_plain(store, post, pre)
    new_block = post(block if new_store is store else with_fields(block, body=new_store))
    return realize if new_block is block else with_fields(realize, block=new_block)


def compute_inline(block) -> ComputeInline:
    """The :class:`ComputeInline` record: ``compute_inline("B")``."""
    return ComputeInline(block)


# -- reverse_compute_inline ------------------------------------------------------------------

def _always_of(a: PrimExpr, b: PrimExpr, ranges: dict, holds, make) -> bool:
    """:func:`_always`, where two constants of one dtype (equal ones too:
    a domain's end against what the producer reaches) are compared
    directly: ``holds`` of their one-point bounds is what the prover would
    find of the comparison ``make()`` builds of them."""
    if type(a) is IntImm and type(b) is IntImm and a.dtype == b.dtype:
        return holds((a.value, a.value), (b.value, b.value))
    return _always(a, b, ranges, holds, make)


def _foldable_init(producer: Block, buffer: Buffer, cond, pstore: BufferStore):
    """How a producer with an init takes a consumer folded into it:
    ``(init, value, cond)``, or why it cannot. The producer is a complete
    block (every variable spatial), so each of its instances runs the init,
    then the body: a read of ``buffer`` in the body at the element it
    stores reads what the init stored there. The body's value and its
    condition are returned with those reads replaced by the init's value;
    the consumer then folds into both stores. (TVM redirects those reads
    to the consumer's buffer, which holds the consumer's value of the init,
    not the init's: ``D = C * 3`` over ``C = 1; C = C + x`` gives ``9 +
    3x`` where the original gives ``3 + 3x``.)"""
    refusal = (f"the producer {producer.name_hint!r} reads {buffer.name}, which it writes"
               f"{' (it has an init)' if producer.init is not None else ''}; only a producer that "
               f"computes each element of {buffer.name} in one store, or stores it in its init first and "
               "reads it only there, can take the block")
    init = producer.init
    if not (type(init) is BufferStore and init.buffer == buffer and init.predicate is None
            and list(init.indices) == list(pstore.indices) and not _loads_of(init.value, buffer)
            and not any(_loads_of(x, buffer) for x in pstore.indices)):
        return refusal
    reads = _loads_of(pstore.value, buffer) + (_loads_of(cond, buffer) if cond is not None else [])
    if len(reads) != len(_loads_of_stmt(producer.body, buffer)) or \
            any(list(l.indices) != list(pstore.indices) or l.predicate is not None for l in reads):
        return refusal

    def pre(n):
        if isinstance(n, Buffer):
            return n
        if isinstance(n, BufferLoad) and n.buffer == buffer:
            return init.value
        return None

    value = transform(pstore.value, lambda n: n, pre) if reads else pstore.value
    if cond is not None and reads:
        cond = transform(cond, lambda n: n, pre)
    return init, value, cond


def _accumulates(block: Block, buffer: Buffer) -> bool:
    """Whether ``block`` accumulates into ``buffer`` (an init, or a load of
    what it stores; :func:`~tirfun.rewrites.dataflow.updated_by`). Inlined,
    or with a consumer folded into it, its value would read a buffer
    nothing writes any more (TVM leaves those reads)."""
    found = _store_accumulates(block, buffer)
    return found if found is not None else buffer in updated_by(block)


def _store_accumulates(block: Block, buffer: Buffer) -> bool | None:
    """:func:`_accumulates` for a block of one store that declares it
    writes ``buffer``, with no init, view or annotation: it accumulates
    exactly where the store loads the buffer, when nothing else in the
    block can (its domains and regions plain arithmetic, every buffer met
    a plain one, see :func:`~tirfun.rewrites.exprs.plain_buffer`). Only the
    store is walked, where ``updated_by`` walks the whole block; None where
    the block is not of that form."""
    store = block.body
    if (type(store) is not BufferStore or block.init is not None or block.match_buffers or block.annotations
            or not any(r.buffer == buffer for r in block.writes)):
        return None
    for iv in block.iter_vars:
        if not (plain_arithmetic(iv.dom.min) and plain_arithmetic(iv.dom.extent)):
            return None
    for region in list(block.reads) + list(block.writes):
        if not plain_buffer(region.buffer):
            return None
        for rng in region.region:
            if not (plain_arithmetic(rng.min) and plain_arithmetic(rng.extent)):
                return None
    if not (all(map(plain_buffer, block.alloc_buffers)) and plain_buffer(store.buffer)):
        return None
    stack = [store.value, *store.indices]
    if store.predicate is not None:
        stack.append(store.predicate)
    loads = False
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is Var or kind is IntImm:
            continue
        if kind is BufferLoad:
            if n.buffer == buffer:
                loads = True
            elif not plain_buffer(n.buffer):  # its shape may hold a load
                return None
            stack.extend(n.indices)
            if n.predicate is not None:
                stack.append(n.predicate)
        elif isinstance(n, Buffer):
            if not plain_buffer(n):
                return None
        else:
            stack.extend(iter_children(n))
    return loads


def _instances_without_producer(block: Block, reads, producer: Block, writes, buffer: Buffer) -> str | None:
    """Why some instance of the consumer ``block`` (reading at ``reads``)
    has no producer instance to fold into, or None: every index it reads,
    over its whole domain, must lie in what the producer writes over its
    domain (``writes``, each a producer variable plus a constant, which
    writes every element of its range; another index is not checked
    here). The consumer's instances of a fused read (``S[a * 3 + b]`` over
    ``2 x 3``) must not reach past the producer's (5 of them): the
    instance reading past them, under a guard (``T.if_then_else(a * 3 + b
    < 5, S[a * 3 + b], 2)``), still stores, and folded into the producer it
    would never run. TVM folds it and loses that store."""
    mine = None  # the consumer's domains, made where a read is more than a variable
    doms = {iv.var: iv.dom for iv in block.iter_vars}
    theirs = {iv.var: iv.dom for iv in producer.iter_vars}
    for k, (read, write) in enumerate(zip(reads, writes)):
        shifted = _shift(write)
        if shifted is None or shifted[0] not in theirs:
            continue
        var, off = shifted
        dom = theirs[var]
        lo, ext = int_value(dom.min), int_value(dom.extent)
        if lo is None or ext is None:
            continue
        if type(read) is Var and read in doms:
            # the commonest read, a variable: its domain, as literals
            first, ext = int_value(doms[read].min), int_value(doms[read].extent)
            if first is None or ext is None:
                continue
            last = first + ext - 1
        else:
            if mine is None:
                mine = {v: Interval.from_range(r) for v, r in doms.items()}
            got = eval_interval(read, mine)
            if got.lo is None or got.hi is None:
                continue
            first, last = int_value(simplify_expr(got.lo)), int_value(simplify_expr(got.hi))
            if first is None or last is None:
                continue
        if first < lo + off or last > lo + ext - 1 + off:
            return (f"the block reads {buffer.name} at [{first}, {last}] in dimension {k}, and its producer "
                    f"writes [{lo + off}, {lo + ext - 1 + off}] there only: the instances reading past that have no "
                    "producer instance to fold into, and would no longer store")
    return None


def _plain_reach(e: PrimExpr, dom: Range, ranges: dict) -> tuple[bool, bool, bool] | None:
    """For the consumer's iteration variable over ``dom`` whose value is
    ``e``, the producer's iteration variable over a range of ``ranges``,
    both of literals of ``e``'s dtype far from its limits: whether the
    producer reaches the whole domain, and whether it stays at or above
    its start and below its end (so that no bound is needed), told from
    the literals, as the interval of ``e`` and the comparisons
    :func:`ReverseComputeInline._pattern` makes of it tell it. None for
    anything else."""
    rng = ranges.get(e) if type(e) is Var else None
    if rng is None:
        return None
    ends = (rng.min, rng.extent, dom.min, dom.extent)
    if any(type(x) is not IntImm or x.dtype != e.dtype for x in ends):
        return None
    pmin, pext, cmin, cext = (x.value for x in ends)
    if not (e.dtype.is_int and e.dtype.lanes == 1 and e.dtype.bits >= 32 and pext >= 1 and cext >= 1
            and all(abs(v) < 2 ** 30 for v in (pmin, pext, cmin, cext))):
        return None
    pmax, cmax = pmin + pext - 1, cmin + cext - 1
    return not (pmin > cmin or pmax < cmax), pmin >= cmin, pmax < cmax + 1


def _loads_of(e: PrimExpr, buffer: Buffer) -> list[BufferLoad]:
    out = []
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, Buffer):
            continue
        if isinstance(n, BufferLoad) and n.buffer == buffer:
            out.append(n)
        stack.extend(iter_children(n))
    return out


@register
@attrs.frozen
class ReverseComputeInline(Rewrite):
    """Inline a block into the block that produces the buffer it reads: the
    producer stores the consumer's value (computed from the produced value)
    straight into the consumer's buffer, the consumer is removed, and so is
    the intermediate buffer from the scope's allocations. Where the
    producer's iterations reach past the consumer's domain, the producer
    gets a predicate.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError,
       UnknownFunctionError) and is not the root block (RootBlockError);
    2. it has no init statement (HasInitBlockError) and reads exactly one
       buffer that its scope writes (NotSingleReadWriteBufferError);
    3. it is a complete block (IncompleteBlockError);
    4. that buffer has exactly one writer, a complete block, and no other
       block uses it (NonSingleProducerError); the writer is not an output
       block (OutputBlockError);
    5. the consumer has no predicate and its body is one store ``C[...] =
       f(B[...])``, every load of ``B`` at the same indices, a bijective
       affine map of its iteration variables (a constant index reads one
       slice: the producer instances of other slices then skip the store,
       where TVM lets every slice overwrite the result); the
       producer's body is ``B[...] = g(...)`` (perhaps under an ``if``
       without ``else``) and covers the consumer's domain; a producer that
       reads ``B`` must have an init storing the element its body stores
       and reads: the body then reads what the init stored, and the
       consumer folds into both stores (BodyAnalysisError);
    6. it is not the only leaf of its scope (OnlyLeafError);
    7. the buffer is not used through its data pointer nor matched into a
       block (OpaqueAccessError);
    8. the producer writes all the consumer reads (NotStagePipelineError);
    9. no block between producer and consumer reads or writes what the
       consumer writes or writes what it reads (DependenceViolationError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            B = T.alloc_buffer((8,))
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] * T.float32(2)
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    C[vi] = B[vi] + T.float32(1)

        # rewrite
        reverse_compute_inline("C")

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi])
                    T.writes(C[vi])
                    C[vi] = A[vi] * T.float32(2) + T.float32(1)
    """

    primitive = "reverse_compute_inline"

    block: object = attrs.field(converter=as_block_ref)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block])
        loc = _locate(chk, site, self.block)
        realize = loc.realize
        block = realize.block
        subject = describe(self.block)
        _check_no_init(chk, subject, realize)
        written_in_scope = set()
        for _, _, r in _keyed_using(site, loc, reads_of(block)):
            written_in_scope |= writes_of(r.block)
        inputs = [b for b in dict.fromkeys(r.buffer for r in block.reads) if b in written_in_scope]
        if len(inputs) != 1:
            chk.stop(NotSingleReadWriteBufferError, subject,
                     f"the block reads {len(inputs)} buffers that its scope writes; it must read exactly one",
                     realize)
        buffer = inputs[0]
        code = complete_block_code(loc.children, block)
        if code:
            chk.stop(IncompleteBlockError, subject, f"the block is not a complete block: it fails "
                     f"condition {code} ({COMPLETE_BLOCK_DEFINITION})", realize)
        found = writers(loc.children, buffer)
        uses = _inline_uses(site, loc, buffer)
        others = [r for p, r in uses.blocks
                  if r.block is not block and (not found or r.block is not found[0][1].block)
                  and buffer in (reads_of(r.block) | writes_of(r.block))]
        if len(found) != 1 or others or complete_block_code(
                scope_children(site, loc.scope, writes_of(found[0][1].block)), found[0][1].block):
            why = (f"{len(found)} blocks write {buffer.name}" if len(found) != 1 else
                   f"block {others[0].block.name_hint!r} also uses {buffer.name}" if others else
                   f"its producer {found[0][1].block.name_hint!r} is not a complete block")
            chk.stop(NonSingleProducerError, subject, f"the block must be the only reader of a buffer "
                     f"written by one complete block: {why}", realize)
        ppath, prealize = found[0]
        producer = prealize.block
        if is_output_block(site, loc.scope, producer):
            chk.stop(OutputBlockError, subject, f"its producer {producer.name_hint!r} writes a buffer its "
                     "scope does not allocate; an output block cannot be changed this way", prealize)
        pattern = self._pattern(realize, producer, buffer)
        if isinstance(pattern, str):
            chk.stop(BodyAnalysisError, subject, pattern, realize)
        # a condition around the block, not around the producer, skips some
        # of its stores, which, folded into the producer, would run
        # wherever the producer runs (TVM drops the condition with the block)
        guards = [node for path, node in statements_above(site, loc.rpath)
                  if isinstance(node, (IfThenElse, While)) and not is_under(ppath, path)]
        if guards:
            # a condition that holds on every iteration of the loops skips nothing
            proof = loop_domains(site, loc.rpath, inclusive=False)
            guards = [g for g in guards if not (isinstance(g, IfThenElse) and g.else_case is None
                                                and can_prove(g.condition, proof))]
        guard = guards[0] if guards else None
        if guard is not None:
            what = f"if {guard.condition.script()}" if isinstance(guard, IfThenElse) else \
                f"while {guard.condition.script()}"
            chk.stop(BodyAnalysisError, subject, f"the block runs under the condition {what}; folded into its "
                     "producer, its stores would run wherever the producer runs", realize)
        if isinstance(block.body, BufferStore):
            _check_own_variables(chk, site, loc, block.body, subject,
                                 "folded into its producer, the store would name a loop the producer is not in")
        _check_no_views(chk, block, subject, realize, "folded into its producer")
        removal = _check_leaf(chk, site, loc, subject)
        _check_plain_uses(chk, uses, buffer, subject)
        stray = next((p for p in uses.tops if type(site.at(p)) is not BlockRealize), None)
        if stray is not None:
            # a loop bound or a condition outside the blocks reads the
            # buffer: folded into the consumer, the producer no longer
            # writes it (TVM looks at blocks only and leaves the read)
            chk.fail(NonSingleProducerError, subject, f"the block must be the only reader of a buffer written "
                     f"by one complete block: a statement outside the blocks also reads {buffer.name}",
                     site.at(stray))
        _check_inferable(chk, subject, prealize)
        _check_inferable(chk, subject, realize)
        if region_cover_violation(site, loc.children, (loc.rpath, realize), {buffer}) is not None:
            chk.fail(NotStagePipelineError, subject,
                     f"the block reads elements of {buffer.name} that block {producer.name_hint!r} does not "
                     "surely write before it within the loop they share", prealize, realize)
        for yrealize in _blocks_between(site, loc, ppath, loc.rpath, (ppath, loc.rpath),
                                         reads_of(block) | writes_of(block)):
            buf = conflicting_buffer(block, yrealize.block)
            if buf is not None:
                chk.fail(DependenceViolationError, subject,
                         f"block {yrealize.block.name_hint!r} between the producer and the block uses "
                         f"{buf.name}, which one of them writes; moving the block there would change it",
                         yrealize)
        return site, loc, ppath, buffer, pattern, removal

    @staticmethod
    def _pattern(realize: BlockRealize, producer: Block, buffer: Buffer):
        """The substitution the inlining needs, or why the bodies do not allow it."""
        block = realize.block
        if not _is_true(realize.predicate):
            return "the block has a predicate (T.where); a consumer with one cannot be inlined"
        store = block.body
        if not isinstance(store, BufferStore):
            return "the block's body must be one store C[...] = f(B[...])"
        if store.predicate is not None:
            return "the block's store is predicated (a masked store); it cannot be inlined"
        loads = _loads_of(store.value, buffer) + [l for e in store.indices for l in _loads_of(e, buffer)]
        if any(l.predicate is not None for l in loads):
            return f"a load of {buffer.name} in the block is predicated (a masked load)"
        if not loads or any(list(l.indices) != list(loads[0].indices) for l in loads):
            return (f"every load of {buffer.name} in the block must be at the same indices, "
                    "and there must be one")
        # recovered values outside the block's domain are bounded below
        mapping = _inverse(loads[0].indices, block.iter_vars, pad=True)
        if mapping is None:
            return (f"the indices of {buffer.name} must be a bijective affine map of the block's "
                    "iteration variables")
        body = producer.body
        cond = None
        if isinstance(body, IfThenElse) and body.else_case is None:
            cond, body = body.condition, body.then_case
        if not isinstance(body, BufferStore) or body.buffer != buffer or body.predicate is not None:
            return (f"the producer's body must be one store {buffer.name}[...] = g(...), perhaps "
                    "under an if without else, and not a predicated (masked) store")
        init = None
        if _accumulates(producer, buffer):
            folded = _foldable_init(producer, buffer, cond, body)
            if isinstance(folded, str):
                return folded
            init, value, cond = folded
            body = with_fields(body, value=value)
        if any(x.dtype.lanes != 1 for x in body.indices):
            # a vector store (a Ramp index) writes several elements per
            # instance: the consumer's one element is not one instance's
            return (f"the producer stores a vector of {buffer.name} per instance; its store must write one "
                    "element")
        sub = mapping(list(body.indices))
        doms = {iv.var: Interval.from_range(iv.dom) for iv in producer.iter_vars}
        ranges = {iv.var: iv.dom for iv in producer.iter_vars}
        unmatched = _instances_without_producer(block, loads[0].indices, producer, body.indices, buffer)
        if unmatched is not None:
            return unmatched
        bounds = []
        # a constant index reads one slice of the buffer: only the producer
        # instances writing that slice compute the consumer's value; so does
        # an index that is constant once the block's unit iteration variables
        # take their one value (``vi + 1`` with ``vi`` of extent 1)
        for x, e in zip(body.indices, loads[0].indices):
            c = int_value(e)
            if c is None and not (type(e) is Var and type(sub.get(e)) is Var):  # a variable stays one
                c = int_value(simplify_expr(substitute(e, sub)))
            if c is not None and not can_prove(EQ(x, IntImm(x.dtype, c)), ranges):
                bounds.append(EQ(x, IntImm(x.dtype, c)))
        for iv in block.iter_vars:
            e = sub[iv.var]
            plain = _plain_reach(e, iv.dom, ranges)
            if plain is not None:
                reaches, above, below = plain
                if not reaches:
                    return (f"the producer does not reach the whole domain of the block's iteration "
                            f"variable {iv.var.name}")
                if not above:
                    bounds.append(GE(e, iv.dom.min))
                if not below:
                    bounds.append(LT(e, iv.dom.min + iv.dom.extent))
                continue
            lo, end = iv.dom.min, iv.dom.min + iv.dom.extent
            if e.dtype != lo.dtype:
                # the producer's variables in another index dtype (a stage
                # pad_einsum made in int64): compared in the wider one
                wide = e.dtype if e.dtype.bits >= lo.dtype.bits else lo.dtype
                e, lo, end = _cast(e, wide), _cast(lo, wide), _cast(end, wide)
            got = eval_interval(e, doms)
            hi = end - 1
            if (got.lo is not None and _always_of(got.lo, lo, ranges, lambda x, y: x[0] > y[1],
                                                  lambda: got.lo > lo)) or \
                    (got.hi is not None and _always_of(got.hi, hi, ranges, lambda x, y: x[1] < y[0],
                                                       lambda: got.hi < hi)):
                return (f"the producer does not reach the whole domain of the block's iteration "
                        f"variable {iv.var.name}")
            if not _always_of(e, lo, ranges, lambda x, y: x[0] >= y[1], lambda: GE(e, lo)):
                bounds.append(GE(e, lo))
            if not _always_of(e, end, ranges, lambda x, y: x[1] < y[0], lambda: LT(e, end)):
                bounds.append(LT(e, end))
        return sub, cond, body, bounds, init

    def build(self, plan) -> Outcome:
        site, loc, ppath, buffer, (sub, cond, pstore, bounds, init), removal = plan
        consumer_store: BufferStore = loc.realize.block.body
        prealize: BlockRealize = site.at(ppath)
        producer = prealize.block

        def folded(value):
            def pre(n):
                if isinstance(n, Buffer):
                    return n
                if isinstance(n, BufferLoad) and n.buffer == buffer:
                    return value
                if isinstance(n, Var):
                    return sub.get(n, n)
                return None
            return transform(consumer_store, lambda n: n, pre)

        fields = {}
        new_store = folded(pstore.value)
        if init is not None:
            # the init stores the consumer's value of what it stored
            fields["init"] = folded(init.value)
        body = new_store if cond is None else IfThenElse(cond, new_store)
        new_block = with_fields(producer, body=body, **fields)
        known = (frozenset(site.func.buffer_map.values())
                 | _region_buffers(producer, loc.realize.block))
        reads, writes = _regions_over_declared(new_block, known, lambda: _declared_buffers(site.func))
        new_block = with_fields(new_block, reads=reads, writes=writes)
        predicate = prealize.predicate
        if bounds:
            outer = {iv.var: v for iv, v in zip(producer.iter_vars, prealize.iter_values)}
            # a bound the producer's predicate already states is not repeated
            have = set(_conjuncts(predicate))
            for b in bounds:
                b = substitute(b, outer)
                if b not in have:
                    have.add(b)
                    predicate = b if _is_true(predicate) else And(predicate, b)
        new_realize = BlockRealize(prealize.iter_values, predicate, new_block)
        func = replace_at(site.func, ppath, new_realize)
        # neither store binding a Let, nor the bounds added to the
        # predicate, the producer's new store binds none, as its old one
        same_lets = not leaf_binds_lets(producer) and not leaf_binds_lets(loc.realize.block) \
            and (predicate is prealize.predicate or not binds_let(predicate))
        return Outcome(_commit_inline(site, loc.scope, func, removal, [(ppath, prealize, new_realize)], buffer,
                                      same_lets))

    def python_args(self):
        return [py_value(self.block)]


def reverse_compute_inline(block) -> ReverseComputeInline:
    """The :class:`ReverseComputeInline` record: ``reverse_compute_inline("C")``."""
    return ReverseComputeInline(block)


__all__ = ["ComputeAt", "compute_at", "ReverseComputeAt", "reverse_compute_at",
           "ComputeInline", "compute_inline", "ReverseComputeInline", "reverse_compute_inline"]


def _loads_of_stmt(s, buffer: Buffer) -> list[BufferLoad]:
    """Every load of ``buffer`` under a statement."""
    return [n for n in walk(s) if isinstance(n, BufferLoad) and n.buffer == buffer]
