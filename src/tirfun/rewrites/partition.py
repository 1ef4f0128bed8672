"""Partitioning: loop_partition.

A loop becomes consecutive loops over consecutive parts of its range, each
with its own copy of the body, so each part can be scheduled on its own (a
main part and a remainder, a border and an interior). The primitive is the
newest TVM's (v0.20 has none), with its structure: the parts sit in opaque
blocks ``<block>_<loop><k>_partition`` inside one opaque block
``<block>_<loop>_common`` that takes the loop's place.
"""

from __future__ import annotations

import operator

import attrs

from ..analysis.access import access_regions
from ..analysis.arith.terms import fits
from ..analysis.traversal import replace_at, stmt_nodes, walk
from ..nodes import (
    Allocate, AllocateConst, Block, BlockRealize, Buffer, BufferLoad, BufferRealize, BufferRegion, BufferStore,
    DeclBuffer, Evaluate, FloatImm, For, ForKind, IfThenElse, IntImm, IterVar, IterVarType, Let, LetStmt,
    PrimExpr, Range, SeqStmt, Stmt, StringImm, Var,
)
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .checks import check_plain_loop, describe, resolve_loop, resolve_site
from .exprs import find_nodes, var_names
from .errors import (
    InvalidArgumentError, InvalidFactorError, NonPositiveFactorError, NotSingleInferFactorError,
    PartitionAllocationError, SymbolicShapeError, WrongFactorError,
)
from .index import _entries, build_index, derive_replaced_index, remember
from .name_pool import NamePool
from .names import fresh_name
from .refs import LoopRef, as_loop_ref
from .serialize import py_value

_TRUE = IntImm("bool", 1)


def _undeclared_view(body: Stmt) -> Buffer | None:
    """A buffer that ``body`` loads or stores over an allocation it makes
    itself, with no ``T.decl_buffer`` of it there (lowered TIR's
    ``T.Buffer(..., data=B_data)``), or None."""
    allocated, declared = set(), set()
    for node in stmt_nodes(body):
        if type(node) is Allocate:
            allocated.add(node.buffer_var)
        elif type(node) is DeclBuffer:
            declared.add(node.buffer)
    if not allocated:
        return None
    for node in walk(body):
        if type(node) in (BufferLoad, BufferStore):
            buf = node.buffer
            if buf.data in allocated and buf not in declared:
                return buf
    return None


def _as_factors(value):
    if isinstance(value, (list, tuple, range)) or type(value).__name__ == "PVector":
        return tuple(operator.index(f) if not isinstance(f, (bool, PrimExpr)) and hasattr(f, "__index__")
                     else f for f in value)
    return value


def _bound_names(stmt: Stmt) -> tuple[list[str], list[str], list[Buffer]]:
    """The variable and buffer names bound under ``stmt``, its block names,
    and the buffers its ``T.decl_buffer`` statements declare (renamed in each
    part like every name bound there, and hidden from the regions inferred
    around them)."""
    return _binders(stmt)[:3]


def _binders(stmt: Stmt, external=()) -> tuple[list[str], list[str], list[Buffer], list | None]:
    """:func:`_bound_names` and, where ``stmt`` binds no name but loop and
    iteration variables and block names (no Let, no declared or allocated
    buffer, only loops, blocks, sequences, stores, conditions and
    evaluations), its BlockRealizes; None for those otherwise. The names
    then are every name the index counts under ``stmt``, once per binding.
    A ``T.realize`` of a buffer of ``external`` (the function's parameters)
    binds no name: it marks a region of storage the caller owns, the same
    in every part, and renamed it would be a buffer nothing declares."""
    names, blocks, declared, realizes = [], [], [], []
    for node in stmt_nodes(stmt):
        kind = type(node)
        if kind is For:
            names.append(node.loop_var.name)
        elif kind is Block:
            blocks.append(node.name_hint)
            names.extend(iv.var.name for iv in node.iter_vars)
            names.extend(b.name for b in node.alloc_buffers)
            names.extend(m.buffer.name for m in node.match_buffers)
            if node.alloc_buffers or node.match_buffers:
                realizes = None
        elif kind is BlockRealize:
            if realizes is not None:
                realizes.append(node)
        elif kind not in _PLAIN_STMTS:
            realizes = None
            # each part binds its own copy of what the body binds, so that
            # every bound name stays unique in the function
            if isinstance(node, LetStmt):
                names.append(node.var.name)
            elif isinstance(node, DeclBuffer):
                declared.append(node.buffer)
                names.append(node.buffer.name)
            elif isinstance(node, (Allocate, AllocateConst)):
                names.append(node.buffer_var.name)
            elif isinstance(node, BufferRealize):
                if not any(node.buffer is b or node.buffer == b for b in external):
                    names.append(node.buffer.name)
    lets = _let_names(stmt)
    names.extend(lets)
    return names, blocks, declared, None if lets else realizes


#: statements that bind no name themselves
_PLAIN_STMTS = frozenset({SeqStmt, BufferStore, Evaluate, IfThenElse})


#: expression nodes that hold no other node
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


def _let_names(stmt: Stmt) -> list[str]:
    """The variables of the Let expressions under ``stmt``, in pre-order,
    once per occurrence (as ``walk`` meets them)."""
    return [n.var.name for n in find_nodes(stmt, (Let,))]


@register
@attrs.frozen
class LoopPartition(Rewrite):
    """Partition a loop into consecutive loops ``i0, i1, ...`` over
    consecutive parts of its range, each running a copy of the body (blocks
    renamed ``<block>_<new loop>``, every name bound inside made fresh).
    Correct where TVM is not: a reduction variable bound to the loop keeps
    its domain, so a reduction split across parts is initialised once; TVM
    narrows its domain too, and each part starts the reduction over.

    ``factors`` are the lengths of the parts, in order; one may be None and
    is then what the others leave of the extent. Without a None the
    factors must leave part of the range, and a last part takes the rest
    (TVM's rule: ``[2, 64]`` on a loop of 128 gives 2, 64 and 62). The
    block iteration variable bound to exactly the loop gets the part's range
    as its domain (data-parallel ones only, see above). Each part's loop sits in an opaque block
    ``<block>_<loop><k>_partition``, and these in an opaque block
    ``<block>_<loop>_common`` in the loop's place. Returns the new loops.

    Requirements, each with the error raised when it fails:

    1. the loop exists (UnknownLoopError, RefKindError, UnknownFunctionError)
       and ``preserve_unit_iters`` is a bool (InvalidArgumentError);
    2. the loop has no annotations and no thread binding
       (LoopHasAnnotationOrThreadBindingError);
    3. a buffer the loop's body uses over an allocation of its own is
       declared there with ``T.decl_buffer`` (PartitionAllocationError), and
       the loop's min and extent are constants (SymbolicShapeError);
    4. the factors are None or positive ints (InvalidFactorError,
       NonPositiveFactorError), at most one None (NotSingleInferFactorError),
       and they sum to less than the extent (WrongFactorError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((2, 10), "float32"), B: T.Buffer((2, 10), "float32")):
            for i, j in T.grid(2, 10):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        loop_partition("j", [None, 2])

        # after
        @T.prim_func
        def main(A: T.Buffer((2, 10), "float32"), B: T.Buffer((2, 10), "float32")):
            for i in range(2):
                with T.block("B_j_common"):
                    T.reads(A[i, 0:10])
                    T.writes(B[i, 0:10])
                    with T.block("B_j0_partition"):
                        T.reads(A[i, 0:8])
                        T.writes(B[i, 0:8])
                        for j0 in range(8):
                            with T.block("B_j0"):
                                vi = T.axis.spatial(2, i)
                                vj = T.axis.spatial(8, j0)
                                T.reads(A[vi, vj])
                                T.writes(B[vi, vj])
                                B[vi, vj] = A[vi, vj] * T.float32(2)
                    with T.block("B_j1_partition"):
                        T.reads(A[i, 8:10])
                        T.writes(B[i, 8:10])
                        for j1 in range(8, 10):
                            with T.block("B_j1"):
                                vi_1 = T.axis.spatial(2, i)
                                vj_1 = T.axis.spatial((8, 10), j1)
                                T.reads(A[vi_1, vj_1])
                                T.writes(B[vi_1, vj_1])
                                B[vi_1, vj_1] = A[vi_1, vj_1] * T.float32(2)
    """

    primitive = "loop_partition"

    loop: object = attrs.field(converter=as_loop_ref)
    factors: object = attrs.field(converter=_as_factors)
    preserve_unit_iters: object = True

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.loop])
        path = resolve_loop(chk, site, self.loop)
        loop: For = site.at(path)
        subject = describe(self.loop)
        if not isinstance(self.preserve_unit_iters, bool):
            chk.fail(InvalidArgumentError, "argument preserve_unit_iters",
                     f"expected True or False, got {self.preserve_unit_iters!r}")
        check_plain_loop(chk, loop)
        view = _undeclared_view(loop.body)
        if view is not None:
            chk.stop(PartitionAllocationError, subject,
                     f"the loop's body uses buffer {view.name} over its own allocation {view.data.name} "
                     "without declaring it (T.decl_buffer); each part's copy renames the allocation, "
                     "which the buffer would not follow", loop)
        lo, extent = loop.min, loop.extent
        if not (isinstance(lo, IntImm) and isinstance(extent, IntImm)):
            chk.stop(SymbolicShapeError, subject,
                     f"the loop runs from {lo.script()} for {extent.script()} iterations; loop_partition "
                     "needs a constant min and extent", loop)
        if not isinstance(self.factors, tuple) or not self.factors:
            chk.stop(InvalidFactorError, subject,
                     f"factors must be a non-empty list of positive ints and at most one None, got "
                     f"{self.factors!r}")
        sizes, infer = [], []
        for k, f in enumerate(self.factors):
            if f is None:
                infer.append(k)
                sizes.append(None)
                continue
            value = f.value if isinstance(f, IntImm) and not f.dtype.is_bool else f
            if isinstance(value, bool) or not isinstance(value, int):
                chk.fail(InvalidFactorError, subject,
                         f"factor {k} is {f!r}; loop_partition takes positive ints and at most one None")
                continue
            if value <= 0:
                chk.fail(NonPositiveFactorError, subject, f"factor {k} is {value}; factors must be positive")
                continue
            sizes.append(value)
        if len(infer) > 1:
            chk.fail(NotSingleInferFactorError, subject,
                     f"{len(infer)} factors are None; only one factor can be inferred")
        chk.checkpoint()
        total = sum(s for s in sizes if s is not None)
        if total >= extent.value:
            chk.stop(WrongFactorError, subject,
                     f"the factors sum to {total}, which leaves nothing of the loop's extent "
                     f"{extent.value} for {'the inferred part' if infer else 'the last part'}", loop)
        if infer:
            sizes[infer[0]] = extent.value - total
        else:
            sizes.append(extent.value - total)
        return site, path, sizes

    def build(self, plan) -> Outcome:
        site, path, sizes = plan
        loop: For = site.at(path)
        taken = NamePool(site.index.names)
        blocks_taken = NamePool(site.index.blocks)

        def fresh(base, pool):
            name = fresh_name(base, pool)
            pool.add(name)
            return name

        inner_names, inner_blocks, declared, old_realizes = _binders(
            loop.body, tuple(site.func.buffer_map.values()))
        # the names each part renames: a buffer holding none is the same in every part
        renamed = set(inner_names) | {loop.loop_var.name}
        kept_buffers: dict = {}

        def kept(buffer: Buffer) -> bool:
            found = kept_buffers.get(id(buffer))
            if found is None:
                found = kept_buffers[id(buffer)] = buffer.name not in renamed and not var_names(buffer) & renamed
            return found

        # a part's regions are worked out from a plain nest without a
        # declared buffer its block could name
        nest = _plain_nest(loop.body) if not declared else None
        first = next((s.name_hint for s in stmt_nodes(loop.body) if isinstance(s, Block)), None)
        base = f"{first}_{loop.loop_var.name}" if first is not None else loop.loop_var.name
        dtype = loop.loop_var.dtype
        parts, refs, stated = [], [], []
        start = loop.min.value
        for k, size in enumerate(sizes):
            var = Var(fresh(f"{loop.loop_var.name}{k}", taken), dtype)
            refs.append(LoopRef(var.name, site.func_name))
            mapping = {name: fresh(name, taken) for name in inner_names}
            block_names, realizes = {}, []  # what the part's copy renamed and rebuilt, for the index
            body = _part_body(loop.body, loop.loop_var, var, mapping, start, size, blocks_taken, kept,
                              block_names, realizes)
            new_loop = For(var, IntImm(dtype, start), IntImm(dtype, size), ForKind.SERIAL, body)
            part = Block([], [], [], fresh(f"{base}{k}_partition", blocks_taken), new_loop)
            regions = None if nest is None else _nest_regions(nest, loop.loop_var, start, size, kept)
            reads, writes = regions if regions is not None else access_regions(part)
            parts.append(BlockRealize([], _TRUE, with_fields(part, reads=reads, writes=writes)))
            stated.append((mapping, block_names, realizes))
            start += size
        common_name = fresh(f"{base}_common", blocks_taken)
        regions = _constant_union(parts)
        reads, writes = regions if regions is not None else access_regions(_regions_only(common_name, parts))
        common = BlockRealize([], _TRUE, Block([], reads, writes, common_name, SeqStmt(parts)))

        def derive(new_func):
            if old_realizes is None or type(common.block.body) is not SeqStmt \
                    or len(common.block.body.seq) != len(parts):
                return None  # names the copies bind otherwise, or one part, not in a sequence
            return _partition_index(site, new_func, path, loop, common, old_realizes, inner_names, inner_blocks,
                                    stated)

        if loop is not site.func.body and not isinstance(site.func.body, BlockRealize):
            # the parts are the function's first blocks: its body goes into a
            # root block, as the parser puts a body holding blocks (else the
            # printed module would not parse back to this one); where the
            # loop is the whole body, the common block is the root
            return Outcome(_commit_under_root(site, path, common), tuple(refs))
        return Outcome(commit(site, path, common, derive=derive), tuple(refs))

    def python_args(self):
        return [py_value(self.loop), f"factors={py_value(list(self.factors))}",
                f"preserve_unit_iters={py_value(self.preserve_unit_iters)}"]


def _commit_under_root(site, path, common: BlockRealize):
    """:func:`commit` of ``common`` at ``path`` in a function without a root
    block, its whole body then wrapped in one. Every path moves under the
    root, so the index is built anew (once per function: afterwards the root
    is there)."""
    func = replace_at(site.func, path, common)
    root = Block([], [], [], "root", func.body)
    func = with_fields(func, body=BlockRealize([], _TRUE, root))
    remember(func, build_index(func))
    return site.mod.with_function(site.func_name, func)


def _partition_index(site, new_func, path, loop: For, common: BlockRealize, old_realizes: list,
                     inner_names: list, inner_blocks: list, stated: list):
    """The index after the loop at ``path`` became the parts under
    ``common``, stated (see :func:`~tirfun.rewrites.index.derive_replaced_index`)
    from what the copies renamed: each part binds its loop, its block and
    a fresh name for each name the loop's body bound (``inner_names``, the
    only names it binds, once per binding), its blocks renamed as each
    copy records, at the places they had below the loop."""
    delta: dict = {}
    get = delta.get
    for name in [loop.loop_var.name] + inner_names + inner_blocks:
        delta[name] = get(name, 0) - 1
    block_path = path + _BLOCK
    came = [(False, common.block.name_hint, block_path)]
    delta[common.block.name_hint] = get(common.block.name_hint, 0) + 1
    realizes = [(a, None) for a in old_realizes] + [(None, common)]
    below = _entries(loop.body)
    for k, (realize, (mapping, block_names, copied)) in enumerate(zip(common.block.body.seq, stated)):
        part_path = block_path + (("body", None), ("seq", k)) + _BLOCK
        part_loop = realize.block.body
        came.append((False, realize.block.name_hint, part_path))
        came.append((True, part_loop.loop_var.name, part_path + _BODY))
        inner = part_path + _BODY + _BODY
        for is_loop, name, rel in below:
            came.append((is_loop, mapping[name] if is_loop else block_names[name], inner + rel))
        for name in [realize.block.name_hint, part_loop.loop_var.name] + [mapping[n] for n in inner_names] \
                + [block_names[n] for n in inner_blocks]:
            delta[name] = get(name, 0) + 1
        realizes.append((None, realize))
        realizes.extend((None, b) for b in copied)
    return derive_replaced_index(site.index, site.func, new_func, path, loop, came, delta, realizes)


_BLOCK = (("block", None),)
_BODY = (("body", None),)


def _regions_only(name: str, parts: list) -> Block:
    """A block holding blocks with the regions of ``parts`` and empty
    bodies: the regions inferred for it are those of the block holding the
    parts themselves (a nested block contributes only its declared regions,
    and a part's regions name no buffer that another part hides), without
    walking the parts' bodies again."""
    stubs = [BlockRealize([], _TRUE, Block([], r.block.reads, r.block.writes, r.block.name_hint, _NO_OP))
             for r in parts]
    return Block([], [], [], name, SeqStmt(stubs))


_NO_OP = Evaluate(IntImm("int32", 0))


def _constant_union(parts: list) -> tuple[list, list] | None:
    """The regions inferred for the block holding ``parts`` (as from
    :func:`_regions_only`), when every region of theirs is a box of integer
    constants of one dtype, as a partitioned loop of constant bounds mostly
    gives: per buffer, in order of first use, the smallest box holding its
    boxes, with the ends region inference picks (the first of equal
    minimums), reached in integers rather than through interval arithmetic
    on expressions; None otherwise (a symbolic or mixed end, a bound out of
    its dtype), and the caller infers the regions."""
    tables: tuple[dict, dict] = ({}, {})
    for realize in parts:
        for table, regions in zip(tables, (realize.block.reads, realize.block.writes)):
            for region in regions:
                box = []
                for rng in region.region:
                    lo, extent = rng.min, rng.extent
                    if type(lo) is not IntImm or type(extent) is not IntImm or lo.dtype != extent.dtype \
                            or lo.dtype.is_bool:
                        return None
                    hi = lo.value + extent.value - 1
                    if not (fits(lo.dtype, hi + 1) and fits(lo.dtype, hi)):
                        return None
                    box.append((lo, hi))
                previous = table.get(region.buffer)
                if previous is not None:
                    merged = []
                    for (lo_a, hi_a), (lo_b, hi_b) in zip(previous, box):
                        if lo_a.dtype != lo_b.dtype:
                            return None
                        merged.append((lo_a if lo_a.value <= lo_b.value else lo_b, max(hi_a, hi_b)))
                    box = merged
                table[region.buffer] = box
    out = []
    for table in tables:
        regions = []
        for buffer, box in table.items():
            ranges = []
            for (lo, hi), _dim in zip(box, buffer.shape):
                if not fits(lo.dtype, hi + 1 - lo.value):
                    return None
                ranges.append(Range(lo, IntImm(lo.dtype, hi + 1 - lo.value)))
            regions.append(BufferRegion(buffer, ranges))
        out.append(regions)
    return out[0], out[1]


def _plain_nest(body: Stmt):
    """``(domains, realize)`` when ``body`` is loops of literal bounds of
    one dtype down to one block realize (``domains``: each loop variable's
    ``(first, last)``), the nest whose parts' regions
    :func:`_nest_regions` works out; None otherwise."""
    domains = {}
    node = body
    while type(node) is For:
        lo, extent = node.min, node.extent
        if type(lo) is not IntImm or type(extent) is not IntImm or lo.dtype != extent.dtype \
                or node.loop_var.dtype != lo.dtype or not fits(lo.dtype, lo.value + extent.value):
            return None
        domains[node.loop_var] = (lo.value, lo.value + extent.value - 1)
        node = node.body
    if type(node) is not BlockRealize:
        return None
    return domains, node


def _nest_regions(nest, loop_var: Var, start: int, size: int, kept) -> tuple[list, list] | None:
    """The regions :func:`access_regions` infers for a part over a plain
    nest (:func:`_plain_nest`) of the loop ``loop_var``, the part running
    it from ``start`` for ``size`` iterations, worked out in integers from
    the original nest (a part's copy binds its block the same way under
    new names): where every dimension of the block's declared regions
    starts at a literal or at an iteration variable bound to a literal or
    to a loop of the nest, with a positive literal extent, all of one
    dtype, and names a buffer the part keeps (``kept``: not renamed, so
    neither allocated nor viewed inside). Inference relaxes each such
    dimension to ``[first, last + extent - 1]`` of its loop's range and
    joins a buffer's boxes per dimension, reads and writes apart, buffers in
    order of first use. None where any of that fails; the caller infers."""
    domains, realize = nest
    block = realize.block
    dtype = loop_var.dtype
    if not fits(dtype, start + size):
        return None
    domains = dict(domains)
    domains[loop_var] = (start, start + size - 1)
    bound = {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if type(value) is IntImm:
            bound[iv.var] = (value.value, value.value, value.dtype)
        elif type(value) is Var and value in domains:
            first, last = domains[value]
            bound[iv.var] = (first, last, value.dtype)
    out = []
    for regions in (block.reads, block.writes):
        table: dict = {}
        for region in regions:
            buffer = region.buffer
            if not kept(buffer):
                return None
            box = []
            for rng in region.region:
                lo, extent = rng.min, rng.extent
                if type(extent) is not IntImm or extent.value < 1:
                    return None
                if type(lo) is IntImm:
                    first = last = lo.value
                    kind = lo.dtype
                else:
                    found = bound.get(lo) if type(lo) is Var else None
                    if found is None:
                        return None
                    first, last, kind = found
                if kind != extent.dtype or kind.is_bool:
                    return None
                last += extent.value - 1
                if not (fits(kind, first) and fits(kind, last + 1)):
                    return None
                box.append((first, last, kind))
            previous = table.get(buffer)
            if previous is not None:
                merged = []
                for (lo_a, hi_a, kind_a), (lo_b, hi_b, kind_b) in zip(previous, box):
                    if kind_a != kind_b:
                        return None
                    merged.append((min(lo_a, lo_b), max(hi_a, hi_b), kind_a))
                box = merged
            table[buffer] = box
        made = []
        for buffer, box in table.items():
            made.append(BufferRegion(buffer, [Range(IntImm(kind, lo), IntImm(kind, hi - lo + 1))
                                              for lo, hi, kind in box]))
        out.append(made)
    return out[0], out[1]


def _part_body(body: Stmt, loop_var: Var, var: Var, mapping: dict, start: int, size: int, taken,
               kept, block_names: dict | None = None, realizes: list | None = None) -> Stmt:
    """The loop body for one part, in one pass: ``loop_var`` replaced by the
    part's loop ``var``, every variable and buffer bound inside renamed by
    ``mapping`` (old name -> fresh name, as :func:`rename` does), and every
    block named ``<block>_<loop>``; the data-parallel iteration variable
    bound to exactly the part's loop gets the part's range. A reduction
    variable keeps its domain: a reduction's ``init`` runs where its
    variables are at the start of their domains, which a narrowed domain
    would move into every part (TVM narrows it, and the later parts start
    the reduction over). ``kept(buffer)`` tells a buffer that no renaming
    reaches, which is not entered. ``block_names`` (old name -> new) and
    ``realizes`` (the new BlockRealizes), where given, record the blocks
    renamed."""
    from ..analysis.traversal import transform

    def pre(node):
        if isinstance(node, Var):
            if node == loop_var:
                return var
            new_name = mapping.get(node.name)
            return node if new_name is None else Var(new_name, node.dtype)
        kind = type(node)
        if kind in _LEAVES:
            return node
        if kind is Buffer and kept(node):
            return node
        return None

    def post(node):
        if isinstance(node, Buffer) and node.name in mapping:
            return with_fields(node, name=mapping[node.name])
        if isinstance(node, BlockRealize):
            ivs = []
            for iv, value in zip(node.block.iter_vars, node.iter_values):
                if value == var and iv.iter_type is IterVarType.DataPar:
                    iv = IterVar(Range(IntImm(iv.dom.min.dtype, start), IntImm(iv.dom.extent.dtype, size)),
                                 iv.var, iv.iter_type, iv.thread_tag)
                ivs.append(iv)
            name = fresh_name(f"{node.block.name_hint}_{var.name}", taken)
            taken.add(name)
            out = with_fields(node, block=with_fields(node.block, iter_vars=ivs, name_hint=name))
            if block_names is not None:
                block_names[node.block.name_hint] = name
                realizes.append(out)
            return out
        return node

    return transform(body, post, pre)


def loop_partition(loop, factors, preserve_unit_iters: bool = True) -> LoopPartition:
    """The :class:`LoopPartition` record: ``loop_partition("j", [None, 2])``."""
    return LoopPartition(loop, factors, preserve_unit_iters)


__all__ = ["LoopPartition", "loop_partition"]
