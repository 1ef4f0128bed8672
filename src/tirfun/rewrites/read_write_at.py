"""read_at and write_at: a copy of one buffer in another storage scope,
made in every iteration of a loop, for the part of the loop's body that
reads (or writes) it (TVM v0.20's ``read_write_at.cc``).

Both look at the statements of the loop's body (its items, when it is a
sequence) and at the outermost blocks in each:

* ``read_at`` puts a block ``<buffer>_<scope>`` before the first item that
  reads the buffer; it copies, in each iteration of the loop, the region
  that item and the ones after it read, and they read the copy;
* ``write_at`` puts the block after the last item that writes the buffer;
  the items up to it read and write the copy, and the block copies the
  region they write back.

The region is the blocks' declared regions relaxed over the loops between
them and the loop, and over the thread loops whose threads share the new
scope (``shared``: threadIdx and vthread, ``warp``: threadIdx.x), the loop
itself included: every thread then copies the whole tile its thread block
uses, as TVM does. The copy is one block whose iteration variables
``v0, v1, ...`` stand for the loops around it that the region depends on,
with loops ``ax0, ax1, ...`` inside it over the region, annotated
``auto_copy``. The new buffer has the old one's shape and is allocated in
the block that holds the loop.

TVM checks less than it needs to. Here:

* a write of the buffer at or after the first read (read_at) is a
  ScheduleError, where TVM aborts on an internal check;
* an access TVM would not redirect is a ScheduleError: outside any block
  (no declared region says what to copy), through the buffer's data
  pointer, or through another buffer on that pointer;
* write_at copies back a whole region: where an element of it may be left
  unwritten in an iteration (a predicate, a strided or conditional write,
  several blocks writing different parts), or the items read an element
  nothing in the loop wrote before (an accumulation without an init, a
  read beside the written region), TVM copies back, or reads, whatever the
  new buffer held. A block ``<buffer>_<scope>_fill`` then fills the copy
  from the buffer first (what the items read and write), before the first
  item that uses it, and the result keeps its meaning. The copy persists
  across the loop's iterations and runs: a reduction's updates may read
  what its init wrote in an earlier one, as long as nothing else in the
  scope writes the buffer;
* where the region spans thread loops (a ``shared`` copy), each thread's
  copy back writes the tile of every thread: that is right once the last
  thread has written its part, and nothing else under those thread loops
  may use the buffer in between. A fill there would race with the threads'
  own writes (two writes, which no barrier orders): a ScheduleError. So is
  a copy back that runs outside thread loops of the loop's body unless the
  copy is ``shared`` and the buffer one the threads share (each thread
  would copy the others' parts from its own copy);
* reads of the buffer after the last write (write_at) are allowed where TVM
  aborts: they read the buffer after the copy back, as before.
"""

from __future__ import annotations

import attrs

from ..analysis.arith import can_prove
from ..analysis.arith.int_set import Interval, union
from ..analysis.arith.linear import fold_add
from ..analysis.arith.simplify import simplify_expr
from ..analysis.arith.terms import int_value
from ..analysis.mentions import mentions
from ..analysis.threads import launch_of
from ..analysis.traversal import (
    Path, ancestors, iter_children, nodes_along, replace_at, stmt_children, stmt_nodes, walk,
)
from ..nodes import (
    LE, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Call, Div, FloorDiv, FloorMod, For,
    ForKind,
    IfThenElse, IntImm, IterVar, IterVarType, Mod, Range, SeqStmt, Stmt, Var, While,
)
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .buffer_swap import swap_buffer
from .cache import (
    _Both, _bound, _cache_buffer, _clamped, _predicate_bounds, _reads_before_writing, _region_of, _skipped_init,
    _under, _writes_every_element, access_buffer,
)
from .checks import child_blocks, describe, resolve_block, resolve_loop, resolve_site, scope_path
from .compute_location import _loads_of_stmt, _relaxed_under, _storage_rank
from .errors import (
    BlockNotUnderLoopError, NoScopeBlockError, OpaqueAccessError, ReadWriteAtOrderError, SharedScopeUnderThreadError,
    UndeclaredAccessError, UnsupportedRegionError,
)
from .exprs import cast as _cast, substitute_expr, var_names
from .index import _entries, _leaf_or_plain, derive_replaced_index, var_names_in_buffer
from .names import fresh_name, suffixed
from .redirect import same_buffer
from .refs import BlockRef, as_block_ref, as_loop_ref
from .scopes import check_per_thread_writes, check_shared_allocation, check_storage_scope
from .serialize import py_value


@attrs.frozen
class _AtPlan:
    site: object
    scope_path: Path
    loop_path: Path
    buf: Buffer
    scope: str
    region: tuple  # Ranges, in the variables around the loop
    free: tuple  # (Var, Range): the variables the region depends on, their domains
    insert: int  # where the copy goes among the loop body's items
    span: tuple  # (start, end): the items redirected to the copy
    fill: int | None  # write_at: where the fill goes, or None when none is needed
    fill_copy: tuple | None  # its region and free variables, as ``region`` and ``free``


def _items(loop: For, path: Path) -> tuple[list, list]:
    """The loop body's items (its sequence, or the body alone) and their paths."""
    body_path = path + (("body", None),)
    if type(loop.body) is SeqStmt:
        seq = list(loop.body.seq)
        return seq, [body_path + (("seq", i),) for i in range(len(seq))]
    return [loop.body], [body_path]


def _outer_realizes(item: Stmt, path: Path) -> list:
    """The BlockRealizes of ``item`` not inside another block, with paths."""
    if isinstance(item, BlockRealize):
        return [(path, item)]
    return list(child_blocks(item, path))


def _states(regions, buf: Buffer) -> list[BufferRegion]:
    return [r for r in regions if same_buffer(r.buffer, buf)]


def _loose_access(item: Stmt, buf: Buffer, kind: type | tuple = (BufferLoad, BufferStore)):
    """A load or store (``kind``) of ``buf`` in ``item`` outside every
    block, or None."""
    stack = [item]
    while stack:
        n = stack.pop()
        if isinstance(n, (BlockRealize, Buffer)):
            continue
        if isinstance(n, kind) and same_buffer(n.buffer, buf):
            return n
        stack.extend(iter_children(n))
    return None


def _may_hold_loose(site, lpath: Path) -> bool:
    """Whether the body of the loop at ``lpath`` may hold a load or store
    outside every block: the index counts the statements outside blocks
    below the root that name a buffer in their own fields (a store, a
    loop's extent that loads), and where there is none and the loop lies
    outside every block but the root, no statement of its body outside
    its blocks names one."""
    return bool(site.index.loose) or ("block", None) in lpath[2:]


def _opaque_use(item: Stmt, buf: Buffer) -> str | None:
    """How ``item`` reaches ``buf``'s memory other than through its loads,
    stores and declared regions (its data pointer taken, another buffer
    declared on that pointer, or the address of an element taken), or
    None."""
    data = buf.data
    stack = [item]
    while stack:
        n = stack.pop()
        if isinstance(n, Buffer):
            if data is not None and n.data is not None and n.data == data and not same_buffer(n, buf):
                return f"buffer {n.name} is declared on its data pointer"
            continue
        if data is not None and isinstance(n, Var) and n == data:
            return f"its data pointer {data.name} is used"
        if type(n) is Call and n.op == "tir.address_of" and n.args and type(n.args[0]) is BufferLoad \
                and same_buffer(n.args[0].buffer, buf):
            return f"the address of {n.args[0].script()} is taken"
        stack.extend(iter_children(n))
    return None


class _ReadWriteAt(Rewrite):
    """read_at and write_at: the checks and the new loop body."""

    __slots__ = ()
    is_read = True

    def _index(self):
        raise NotImplementedError

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block, self.loop])
        bpath = resolve_block(chk, site, self.block)
        lpath = resolve_loop(chk, site, self.loop)
        scope = check_storage_scope(chk, self.storage_scope)
        chk.checkpoint()
        rpath = bpath[:-1]
        realize = site.at(rpath)
        loop: For = site.at(lpath)
        subject = describe(self.block)
        kind = "read" if self.is_read else "write"
        buf = access_buffer(chk, realize.block, realize, self._index(), kind)
        if rpath[:len(lpath)] != lpath:
            chk.stop(BlockNotUnderLoopError, subject,
                     f"block {realize.block.name_hint!r} is not under loop {loop.loop_var.name!r}; "
                     f"{self.primitive} copies what the loop's body {kind}s", realize, loop)
        spath = scope_path(site, lpath)
        if spath is None:
            chk.stop(NoScopeBlockError, subject,
                     f"loop {loop.loop_var.name!r} has no enclosing block to allocate the copy in")
        items, paths = _items(loop, lpath)
        loose_here = _may_hold_loose(site, lpath)
        reads, writes, blocks = [], [], []
        for item, path in zip(items, paths):
            touching = mentions(item, buf)
            outer = _outer_realizes(item, path) if touching else []
            # the places follow the blocks' declared accesses, as TVM's; an
            # access outside every block is refused below where it would be
            # redirected
            reads.append(any(_states(r.block.reads, buf) for _, r in outer))
            writes.append(any(_states(r.block.writes, buf) for _, r in outer))
            blocks.append(outer)
        if self.is_read:
            at = [i for i, r in enumerate(reads) if r]
            if not at:
                chk.stop(UndeclaredAccessError, subject,
                         f"no block of loop {loop.loop_var.name!r}'s body outside the others declares a read of "
                         f"{buf.name}, so the region to copy is not known", realize)
            insert = at[0]
            span = (insert, len(items))
            late = [i for i in range(insert, len(items))
                    if writes[i] or (loose_here and _loose_access(items[i], buf, BufferStore) is not None)]
            if late:
                chk.stop(ReadWriteAtOrderError, subject,
                         f"{self._what(items[late[0]], blocks[late[0]], buf, 'writes')} at or after the first read "
                         f"of {buf.name} in loop {loop.loop_var.name!r}'s body; the copy, made before that read, "
                         "would not see the write", items[late[0]])
        else:
            at = [i for i, w in enumerate(writes) if w]
            if not at:
                chk.stop(UndeclaredAccessError, subject,
                         f"no block of loop {loop.loop_var.name!r}'s body outside the others declares a write of "
                         f"{buf.name}, so the region to copy back is not known", realize)
            insert = at[-1] + 1
            span = (0, insert)
        for i in range(*span):
            loose = _loose_access(items[i], buf) if loose_here else None
            if loose is not None:
                chk.stop(UndeclaredAccessError, subject,
                         f"loop {loop.loop_var.name!r}'s body accesses {buf.name} outside any block "
                         f"({loose.script().strip()}), where no declared region says what to copy", items[i])
            why = _opaque_use(items[i], buf)
            if why is not None:
                chk.stop(OpaqueAccessError, subject,
                         f"loop {loop.loop_var.name!r}'s body reaches buffer {buf.name} other than by its loads "
                         f"and stores: {why}; that access would not see the copy", items[i])
        relaxed = self._relaxed_loops(site, lpath, scope)
        self._check_own_copies(chk, buf, relaxed, subject, realize)
        if not self.is_read:
            self._check_copy_back_threads(chk, buf, scope, items, span, subject, realize)
        kinds = ("reads",) if self.is_read else ("writes",)
        region, free = self._region(chk, site, lpath, buf, blocks, span, relaxed, subject, realize, kinds)
        fill = fill_region = fill_free = None
        if not self.is_read:
            # a store after the copy back leaves the copy behind the buffer
            # for the loop's next iteration
            stale = loose_here and any(_loose_access(items[i], buf, BufferStore) is not None
                                       for i in range(insert, len(items)))
            fill = self._fill_position(site, lpath, buf, blocks, span, relaxed, region, reads, writes, stale)
            if fill is not None and relaxed:
                node = relaxed[min(relaxed, key=len)]
                chk.stop(SharedScopeUnderThreadError, subject,
                         f"the copy back would copy elements of {buf.name} that an iteration may leave unwritten, "
                         f"or the blocks read before writing them, so the copy must be filled from {buf.name} "
                         f"first; spanning the threads of loop {node.loop_var.name!r} (bound to "
                         f"{launch_of(node)[0]}), every thread would fill the whole tile while the others write "
                         "their parts, two writes that no barrier orders", realize)
            if fill is not None:
                # the fill copies what the blocks read as well as what they
                # write: a read outside the written region reads the copy too
                fill_region, fill_free = self._region(chk, site, lpath, buf, blocks, span, relaxed, subject,
                                                      realize, ("reads", "writes"))
        self._check_threads(chk, site, spath, buf, scope, region, blocks, span, subject)
        return _AtPlan(site, spath, lpath, buf, scope, tuple(region), tuple(free), insert, span, fill,
                       None if fill is None else (tuple(fill_region), tuple(fill_free)))

    @staticmethod
    def _what(item, outer, buf: Buffer, verb: str) -> str:
        for _, r in outer:
            if _states(r.block.writes if verb == "writes" else r.block.reads, buf):
                return f"block {r.block.name_hint!r} {verb} {buf.name}"
        return f"a statement {verb} {buf.name}"

    @staticmethod
    def _relaxed_loops(site, lpath: Path, scope: str) -> dict:
        """The thread loops at or above the loop that the copy spans (path ->
        For): those whose threads share a buffer of ``scope``."""
        out = {}
        chain = ancestors(site.func, lpath) + [(lpath, site.at(lpath))]
        for p, node in chain:
            if isinstance(node, For) and node.kind is ForKind.THREAD_BINDING:
                tag = launch_of(node)[0]
                if _relaxed_under(scope, tag):
                    out[p] = node
        return out

    @staticmethod
    def _check_own_copies(chk, buf: Buffer, relaxed: dict, subject: str, realize) -> None:
        """A copy that spans thread loops reads (or writes back) every
        thread's part of the buffer in each thread: the buffer must be one
        those threads share. A ``local`` buffer is each thread's own (TVM
        copies every thread's garbage into the shared tile)."""
        own = buf.storage_scope or "global"
        if _storage_rank(own) == 0:
            return
        for node in relaxed.values():
            tag = launch_of(node)[0]
            if not _relaxed_under(own, tag):
                chk.stop(SharedScopeUnderThreadError, subject,
                         f"the copy would span the threads of loop {node.loop_var.name!r} (bound to {tag}), "
                         f"reading or writing every thread's part of buffer {buf.name}; in scope {own!r} each "
                         "of those threads has its own copy of it", realize)

    @staticmethod
    def _check_copy_back_threads(chk, buf: Buffer, scope: str, items, span, subject: str, realize) -> None:
        """write_at's copy back sits outside the thread loops of the loop's
        body, so every one of their threads runs it, over what all of them
        wrote. Across the threads of a block that is right only through a
        ``shared`` copy (lowering places the barrier before the copy back)
        into a buffer they share; across thread blocks never. (TVM copies
        back each thread's own, unwritten, part of the others'.) Virtual
        threads run in their thread, one after another: any scope serves."""
        for i in range(*span):
            for node in stmt_nodes(items[i]):
                if not (isinstance(node, For) and node.kind is ForKind.THREAD_BINDING):
                    continue
                tag = launch_of(node)[0]
                if tag.startswith("vthread"):
                    continue
                where = f"loop {node.loop_var.name!r} (bound to {tag})"
                if tag.startswith("blockIdx"):
                    chk.stop(SharedScopeUnderThreadError, subject,
                             f"the copy back would run outside {where}, over what every thread block wrote; no "
                             "barrier orders the thread blocks", realize)
                own = buf.storage_scope or "global"
                if not (scope or "").startswith("shared") or _storage_rank(own) > 1:
                    chk.stop(SharedScopeUnderThreadError, subject,
                             f"the copy back runs in every thread of {where} inside the loop's body, copying what "
                             f"all of them wrote; that needs the copy in a 'shared' scope (lowering places the "
                             f"barrier before the copy back) and buffer {buf.name} in one the threads share, "
                             f"not {scope!r} and {own!r}", realize)

    def _region(self, chk, site, lpath, buf, blocks, span, relaxed, subject, realize, kinds):
        """The region to copy (Ranges in the variables around the loop,
        clamped to the buffer): the union of what the blocks of the span
        declare of ``buf`` among their ``kinds`` ("reads", "writes"); and
        the variables it depends on with their domains."""
        box = None
        for i in range(*span):
            for rpath, r in blocks[i]:
                for region in [x for kind in kinds for x in _states(getattr(r.block, kind), buf)]:
                    ivs = _box(site, rpath, r, region, lpath, relaxed)
                    box = ivs if box is None else [union(a, b) for a, b in zip(box, ivs)]
        known = {}  # the variables the copy block may bind, with their domains
        for p, node in ancestors(site.func, lpath) + [(lpath, site.at(lpath))]:
            if isinstance(node, For) and p not in relaxed:
                known[node.loop_var] = Range(node.min, node.extent)
            elif isinstance(node, Block):
                for iv in node.iter_vars:
                    known[iv.var] = iv.dom
        ranges = _clamped(box, buf, dict(known))
        ranges = [Range(simplify_expr(r.min), simplify_expr(r.extent)) for r in ranges]
        # the copy evaluates its bounds unguarded: a bound that divides by a
        # value that may be zero, or loads (an index a guard keeps in
        # bounds), takes the whole dimension instead
        ranges = [r if _safe(r.min) and _safe(r.extent) else Range(IntImm(dim.dtype, 0), dim)
                  for r, dim in zip(ranges, buf.shape)]
        free, seen = [], set()
        by_name = {v.name: v for v in known}
        for rng in ranges:
            for e in (rng.min, rng.extent):
                for name in _in_order(e):
                    if name in seen:
                        continue
                    seen.add(name)
                    var = by_name.get(name)
                    if var is None:
                        continue  # a parameter of the function: the same everywhere
                    dom = known[var]
                    if var_names(dom.min) & by_name.keys() or var_names(dom.extent) & by_name.keys():
                        chk.stop(UnsupportedRegionError, subject,
                                 f"the region of {buf.name} to copy depends on {name}, whose domain "
                                 f"{dom.min.script()} for {dom.extent.script()} depends on the loops around it; "
                                 "the copy block cannot take it as an iteration variable", realize)
                    free.append((var, dom))
        return ranges, free

    def _fill_position(self, site, lpath, buf, blocks, span, relaxed, region, reads, writes, stale):
        """write_at: where the fill goes (before the first item that uses
        the buffer), or None where every element of the region copied back
        is written in each iteration, and every element read was written
        before in the loop (in an earlier item of the iteration, or by the
        reading block itself)."""
        first = next(i for i in range(*span) if reads[i] or writes[i])
        written = []  # the boxes earlier items wrote whole in this iteration
        for i in range(*span):
            for p, r in blocks[i]:
                read_regions = _states(r.block.reads, buf)
                write_regions = _states(r.block.writes, buf)
                box = None
                if write_regions:
                    if _partial_write_over(site, buf, p, r, lpath, relaxed, region) is not None:
                        return first
                    box = _box(site, p, r, write_regions[0], lpath, relaxed)
                    if len(write_regions) != 1 or not _same_box(box, region):
                        return first  # several writers, or one writing several regions: the parts may leave holes
                # a reduction's update reads what it writes without declaring
                # it (TVM leaves it out of the reads): its loads count too
                loads = bool(read_regions) or _loads(r.block, buf)
                if loads and not self._reads_written(site, p, r, buf, lpath, relaxed, read_regions,
                                                     written, bool(write_regions), stale):
                    return first
                if box is not None:
                    written.append(box)
        if relaxed:
            top = min(relaxed, key=len)
            if self._touched_beside(site, top, lpath, buf):
                return first
        return None

    @staticmethod
    def _reads_written(site, p, r, buf, lpath, relaxed, read_regions, written, writes, stale) -> bool:
        """Whether the block at ``p`` reads only elements written before it
        in the loop: by an earlier item of the iteration that wrote a box
        holding what it reads, or by itself (its init, or its own store of
        the element earlier in its body). The copy persists across the
        loop's iterations, so a reduction's updates may read what its init
        wrote in an earlier one: the init need only run in the loop's first
        iteration (the loop itself counts among the loops it runs over)."""
        if writes and _reads_before_writing(r.block, buf) is None:
            if _skipped_init(site, p, r, lpath[:-1]) is None:
                return True
            # the copy persists across the loop's runs too, as long as the
            # scope writes the buffer nowhere else: the init may then run
            # in any earlier iteration of the loops of the scope
            scope = scope_path(site, lpath)
            if not stale and _skipped_init(site, p, r, scope) is None and \
                    not _written_elsewhere(site, scope, lpath, buf):
                return True
        if relaxed or not read_regions:
            # the earlier writes may be another thread's; or what is read
            # is not declared, so not known to lie where they wrote
            return False
        for region in read_regions:
            box = _box(site, p, r, region, lpath, relaxed)
            if not any(_inside(box, w) for w in written):
                return False
        return True

    @staticmethod
    def _touched_beside(site, top: Path, lpath: Path, buf: Buffer) -> bool:
        """Whether a statement under the thread loop at ``top`` but not
        under the loop uses ``buf``: it would meet a copy back made before
        every thread wrote its part."""
        stack = [(top, site.at(top))]
        while stack:
            p, n = stack.pop()
            if p == lpath:
                continue
            if not mentions(n, buf):
                continue
            if lpath[:len(p)] == p:
                # on the way down to the loop: look at the other children
                stack.extend((p + (step,), child) for step, child in stmt_children(n))
                continue
            return True
        return False

    def _check_threads(self, chk, site, spath, buf, scope, region, blocks, span, subject):
        """A ``shared`` copy allocated in a block that every thread of a
        threadIdx loop runs must hold the same elements for each thread;
        a copy more threads share than shared the buffer must not have
        them write one element each (:mod:`.scopes`)."""
        check_shared_allocation(chk, subject, site.func, spath, scope, f"the copy of buffer {buf.name}",
                                [r.min for r in region], site.at(spath))
        if not self.is_read:
            writers = [p for i in range(*span) for p, r in blocks[i] if _states(r.block.writes, buf)]
            check_per_thread_writes(chk, subject, site.func, writers, buf, buf.storage_scope, scope,
                                    f"the copy of buffer {buf.name}")

    def build(self, plan: _AtPlan) -> Outcome:
        site, buf = plan.site, plan.buf
        taken = site.index.names
        dst = _cache_buffer(buf, plan.scope, list(plan.region), True, taken)
        name = fresh_name(suffixed(buf.name, plan.scope), site.index.blocks)
        used: set = {dst.name}
        src_buf, dst_buf = (buf, dst) if self.is_read else (dst, buf)
        copy = _copy_block(plan.region, plan.free, src_buf, dst_buf, name, _Both(taken, used), used)
        loop: For = site.at(plan.loop_path)
        items, _ = _items(loop, plan.loop_path)

        def view_of(view, _source=None):
            return with_fields(view, storage_scope=plan.scope)

        swapped = []  # (old item, new item)
        for i in range(*plan.span):
            old_item = items[i]
            items[i] = swap_buffer(old_item, buf, dst, view_of)
            swapped.append((old_item, items[i]))
        items.insert(plan.insert, copy)
        copies = [copy]
        if plan.fill is not None:
            fill_name = fresh_name(f"{dst.name}_fill", _Both(site.index.blocks, {name}))
            fill_region, fill_free = plan.fill_copy
            fill = _copy_block(fill_region, fill_free, buf, dst, fill_name, _Both(taken, used), used)
            items.insert(plan.fill, fill)
            copies.append(fill)
        new_loop = with_fields(loop, body=SeqStmt(items))
        scope_block = site.at(plan.scope_path)
        rel = plan.loop_path[len(plan.scope_path):]
        scope_block = replace_at(scope_block, rel, new_loop)
        scope_block = with_fields(scope_block, alloc_buffers=list(scope_block.alloc_buffers) + [dst])

        def derive(new_func):
            return _at_index(site, new_func, plan.loop_path, loop, new_loop, dst, copies, swapped)

        mod = commit(site, plan.scope_path, scope_block, derive=derive)
        return Outcome(mod, BlockRef(name, site.func_name))

    def python_args(self):
        return [py_value(self.loop), py_value(self.block), py_value(self._index()), py_value(self.storage_scope)]


def _partial_write_over(site, buf: Buffer, wpath: Path, wrealize: BlockRealize, lpath: Path, relaxed: dict,
                        region) -> str | None:
    """Why the writer may leave an element of the region copied back
    unwritten over the loops the copy spans (those under the loop, and the
    thread loops ``relaxed``), or None when it writes every element (cache's
    ``_partial_write``, over those loops)."""
    block = wrealize.block
    declared = _region_of(block.writes, buf)
    if any(not (isinstance(r.extent, IntImm) and r.extent.value == 1) for r in declared.region):
        return f"its declared write {declared.script()} is not one element per block instance"
    bounds, others = _predicate_bounds(declared, wrealize)
    for dim, ends in bounds.items():
        rng = region[dim]
        for bound in ends:
            if bound.dtype != rng.extent.dtype or not can_prove(LE(fold_add(rng.min, rng.extent), bound)):
                return f"its predicate stops dimension {dim} of {buf.name} at {bound.script()}, inside the region"
    top = min(relaxed, key=len) if relaxed else lpath
    along = nodes_along(site.func, wpath)
    for depth in range(len(top) + 1, len(wpath)):
        node = along[depth]
        if isinstance(node, (IfThenElse, While)):
            return "it runs under a condition, which may skip elements"
    return _writes_every_element(site, buf, wpath, wrealize, declared, lpath,
                                 _relaxed_over(site, wpath, lpath, relaxed, by_name=True), others=others)


def _safe(e) -> bool:
    """Whether ``e`` evaluates anywhere: no load, and every divisor a
    nonzero constant."""
    for n in walk(e):
        if isinstance(n, BufferLoad):
            return False
        if isinstance(n, (Div, FloorDiv, Mod, FloorMod)):
            d = int_value(n.b)
            if d is None or d == 0:
                return False
    return True


def _in_order(e) -> list[str]:
    """The variable names of ``e``, left to right, as TVM's substitution meets them."""
    out = []
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, Var):
            out.append(n.name)
            continue
        if isinstance(n, Buffer):
            continue
        stack.extend(reversed(list(iter_children(n))))
    return out


def _written_elsewhere(site, spath: Path, lpath: Path, buf: Buffer) -> bool:
    """Whether something in the scope block at ``spath`` outside the loop
    at ``lpath`` writes ``buf`` (a store, a block declaring the write, or
    its data pointer taken)."""
    stack = [(spath + (("body", None),), site.at(spath).body)]
    while stack:
        p, n = stack.pop()
        if p == lpath or not mentions(n, buf):
            continue
        if isinstance(n, BufferStore) and same_buffer(n.buffer, buf):
            return True
        if isinstance(n, BlockRealize) and _states(n.block.writes, buf):
            return True
        if _opaque_use(n, buf) is not None and not isinstance(n, (SeqStmt, For, BlockRealize, Block)):
            return True
        stack.extend((p + (step,), child) for step, child in stmt_children(n))
    return False


def _loads(block: Block, buf: Buffer) -> bool:
    """Whether the block's init or body loads ``buf``."""
    parts = [block.body] + ([block.init] if block.init is not None else [])
    return any(_loads_of_stmt(part, buf) for part in parts)


def _relaxed_over(site, p: Path, lpath: Path, relaxed: dict, *, by_name: bool = False) -> dict:
    """The loops above the statement at ``p`` that a copy at the loop at
    ``lpath`` spans: those under that loop, and the thread loops
    ``relaxed``; keyed by loop variable (or its name)."""
    return {(node.loop_var.name if by_name else node.loop_var): node for q, node in ancestors(site.func, p)
            if isinstance(node, For) and (_under(q, lpath) or q in relaxed)}


def _box(site, p: Path, r: BlockRealize, region: BufferRegion, lpath: Path, relaxed: dict) -> list[Interval]:
    """The block's declared ``region`` relaxed over the loops under the
    loop at ``lpath`` and the thread loops ``relaxed``."""
    bindings = {iv.var: v for iv, v in zip(r.block.iter_vars, r.iter_values)}
    return _bound(region, _relaxed_over(site, p, lpath, relaxed), bindings)


def _inside(a: list[Interval], b: list[Interval]) -> bool:
    """Whether the box ``a`` provably lies in the box ``b``."""
    for x, y in zip(a, b):
        if not (x.bounded and y.bounded and x.lo.dtype == y.lo.dtype and x.hi.dtype == y.hi.dtype):
            return False
        if not (can_prove(LE(y.lo, x.lo)) and can_prove(LE(x.hi, y.hi))):
            return False
    return True


def _same_box(a: list[Interval], b: list[Range]) -> bool:
    """Whether the intervals ``a`` are the ranges ``b`` (as proven by simplification)."""
    for iv, rng in zip(a, b):
        if not iv.bounded:
            return False
        last = simplify_expr(fold_add(rng.min, rng.extent) - IntImm(rng.extent.dtype, 1))
        if simplify_expr(iv.lo) != simplify_expr(rng.min) or simplify_expr(iv.hi) != last:
            return False
    return True


def _at_index(site, new_func, lpath: Path, loop: For, new_loop: For, dst: Buffer, copies: list,
              swapped: list):
    """The index after read_at or write_at, stated from what they changed:
    the loop at ``lpath`` became ``new_loop``, whose body holds the
    ``copies`` (copy blocks of :func:`_copy_block`) and the loop's
    items, ``swapped`` ``(old, new)`` where they read or write ``dst``
    instead of the buffer, and the scope block allocates ``dst``. A swap
    keeps every statement at its place and every name bound (it changes
    buffers read and written, and views' scopes), so the names that come
    are ``dst``'s and the copies' and the loops and blocks are those of
    the new loop. None where that cannot be told this cheaply (then the
    index is derived by walking what changed): a loose statement in the
    function (one below the loop could stop or start counting), a copy
    block whose expressions could hold a Let, an item whose block
    allocates the buffer (the swap renames the allocation)."""
    if site.index.loose:
        return None
    delta: dict = {}
    realizes = []
    for copy in copies:
        names = _copy_names(copy)
        if names is None:
            return None
        for n in names:
            delta[n] = delta.get(n, 0) + 1
        realizes.append((None, copy))
    for old, new in swapped:
        pairs = _rebuilt_realizes(old, new)
        if pairs is None:
            return None
        realizes.extend(pairs)
    for n in [dst.name, *var_names_in_buffer(dst)]:
        delta[n] = delta.get(n, 0) + 1
    came = [(is_loop, n, lpath + rel) for is_loop, n, rel in _entries(new_loop)]
    return derive_replaced_index(site.index, site.func, new_func, lpath, loop, came, delta, realizes)


def _copy_names(copy: BlockRealize) -> list | None:
    """The names a copy block of :func:`_copy_block` binds (its name, its
    iteration variables and the loop variables inside it), or None where
    one of its expressions is not plain arithmetic of variables and
    constants (a Let in it would bind a name as well)."""
    block = copy.block
    names = [block.name_hint]
    exprs = list(copy.iter_values)
    for iv in block.iter_vars:
        exprs += (iv.dom.min, iv.dom.extent)
        names.append(iv.var.name)
    for region in (*block.reads, *block.writes):
        for r in region.region:
            exprs += (r.min, r.extent)
    node = block.body
    while type(node) is For:
        exprs += (node.min, node.extent)
        names.append(node.loop_var.name)
        node = node.body
    exprs += (*node.indices, *node.value.indices)
    if not all(map(_leaf_or_plain, exprs)):
        return None
    return names


def _rebuilt_realizes(old: Stmt, new: Stmt) -> list | None:
    """The BlockRealizes that swap_buffer rebuilt in ``new`` from ``old``,
    as ``(old, new)``, the statements of both walked side by side (a swap
    keeps each at its place); None where a block's allocations changed."""
    out = []
    stack = [(old, new)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue
        kind = type(a)
        if kind is BlockRealize:
            out.append((a, b))
        elif kind is Block and a.alloc_buffers is not b.alloc_buffers:
            return None
        stack.extend(zip([c for _, c in stmt_children(a)], [c for _, c in stmt_children(b)]))
    return out


def _copy_block(region, free, src: Buffer, dst: Buffer, name: str, taken, used: set) -> BlockRealize:
    """TVM's copy block: iteration variables ``v0..`` for the variables the
    region depends on, loops ``ax0..`` over the region inside it, one
    element copied from ``src`` to ``dst`` per iteration."""
    def fresh(base):
        n = fresh_name(base, taken)
        used.add(n)
        return n

    mapping, iter_vars, values = {}, [], []
    for var, dom in free:
        v = Var(fresh(f"v{len(iter_vars)}"), var.dtype)
        mapping[var] = v
        iter_vars.append(IterVar(Range(_cast(dom.min, var.dtype), _cast(dom.extent, var.dtype)), v,
                                 IterVarType.DataPar))
        values.append(var)
    ranges = [Range(substitute_expr(r.min, mapping), substitute_expr(r.extent, mapping)) for r in region]
    loop_vars = [Var(fresh(f"ax{k}"), r.extent.dtype) for k, r in enumerate(ranges)]
    indices = [_cast(fold_add(_cast(r.min, lv.dtype), lv), dim.dtype)
               for r, lv, dim in zip(ranges, loop_vars, src.shape)]
    body: Stmt = BufferStore(dst, BufferLoad(src, indices), indices)
    for lv, r in reversed(list(zip(loop_vars, ranges))):
        body = For(lv, IntImm(lv.dtype, 0), r.extent, ForKind.SERIAL, body)
    block = Block(iter_vars, [BufferRegion(src, ranges)], [BufferRegion(dst, ranges)], name, body,
                  annotations={"auto_copy": 1})
    return BlockRealize(values, IntImm("bool", 1), block)


@register
@attrs.frozen
class ReadAt(_ReadWriteAt):
    """Read a buffer through a copy made in each iteration of a loop: a
    block ``<buffer>_<scope>`` placed before the first statement of the
    loop's body that reads the buffer copies the region that statement and
    the ones after it read (relaxed over the loops below the loop, and over
    the thread loops whose threads share ``storage_scope``) into a new
    buffer ``<buffer>_<scope>``, which they read instead. Returns the copy
    block. (TVM marks this primitive experimental; it serves automatic
    copy generation, the ``auto_copy`` annotation.)

    Requirements, each with the error raised when it fails:

    1. the loop and the block exist (UnknownLoopError, UnknownBlockError,
       RefKindError, UnknownFunctionError), and the block is under the loop
       (BlockNotUnderLoopError);
    2. the storage scope is one TVM knows (InvalidStorageScopeError), and a
       ``shared`` copy allocated in a block that the threads of a threadIdx
       loop run holds the same elements for each thread
       (SharedScopeUnderThreadError);
    3. ``read_buffer_index`` is a position in the block's reads
       (BufferIndexOutOfRangeError), or a Buffer or buffer name it reads
       (BufferNotAccessedError);
    4. the loop has an enclosing block (NoScopeBlockError);
    5. the statements that read the buffer do so in blocks that declare it
       (UndeclaredAccessError) and not through its data pointer
       (OpaqueAccessError);
    6. no statement at or after the first read writes the buffer
       (ReadWriteAtOrderError);
    7. the region to copy depends only on variables a block can bind
       (UnsupportedRegionError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
            for i, k in T.grid(16, 16):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

        # rewrite
        read_at("i", "B", 0, "local")

        # after
        @T.prim_func
        def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
            A_local = T.alloc_buffer((16, 16), scope="local")
            for i in range(16):
                with T.block("A_local"):
                    v0 = T.axis.spatial(16, i)
                    T.reads(A[v0, 0:16])
                    T.writes(A_local[v0, 0:16])
                    T.block_attr({"auto_copy": 1})
                    for ax0, ax1 in T.grid(1, 16):
                        A_local[v0 + ax0, ax1] = A[v0 + ax0, ax1]
                for k in range(16):
                    with T.block("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A_local[vi, vk]
    """

    primitive = "read_at"
    is_read = True

    loop: object = attrs.field(converter=as_loop_ref)
    block: object = attrs.field(converter=as_block_ref)
    read_buffer_index: object = 0
    storage_scope: object = "global"

    def _index(self):
        return self.read_buffer_index


@register
@attrs.frozen
class WriteAt(_ReadWriteAt):
    """Write a buffer through a copy copied back in each iteration of a
    loop: the statements of the loop's body up to the last one that writes
    the buffer read and write a new buffer ``<buffer>_<scope>`` instead,
    and a block ``<buffer>_<scope>`` after them copies the region they
    write (relaxed as in :class:`ReadAt`) back. Returns that block.

    Where an element of the region may be left unwritten in an iteration,
    or be read before it is written there (TVM copies back, or reads,
    whatever the new buffer held), a block ``<buffer>_<scope>_fill`` first
    copies the region from the buffer, before the first statement that
    uses it. Statements after the last write may read the buffer (they read
    it after the copy back; TVM refuses them).

    Requirements, each with the error raised when it fails:

    1. the loop and the block exist (UnknownLoopError, UnknownBlockError,
       RefKindError, UnknownFunctionError), and the block is under the loop
       (BlockNotUnderLoopError);
    2. the storage scope is one TVM knows (InvalidStorageScopeError); and
       across threads (SharedScopeUnderThreadError): a ``shared`` copy
       allocated in a block that the threads of a threadIdx loop run holds
       the same elements for each thread; threads that had their own
       buffer do not write one element of the copy they share; a copy that
       spans threads is of a buffer they share and needs no fill; a copy
       back outside thread loops of the loop's body is ``shared`` into a
       buffer those threads share;
    3. ``write_buffer_index`` is a position in the block's writes
       (BufferIndexOutOfRangeError), or a Buffer or buffer name it writes
       (BufferNotAccessedError);
    4. the loop has an enclosing block (NoScopeBlockError);
    5. the statements up to the last write access the buffer in blocks that
       declare it (UndeclaredAccessError) and not through its data pointer
       (OpaqueAccessError);
    6. the region to copy depends only on variables a block can bind
       (UnsupportedRegionError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
            for i, j in T.grid(16, 16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        write_at("i", "B", 0, "local")

        # after
        @T.prim_func
        def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
            B_local = T.alloc_buffer((16, 16), scope="local")
            for i in range(16):
                for j in range(16):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        B_local[vi, vj] = A[vi, vj] * T.float32(2)
                with T.block("B_local"):
                    v0 = T.axis.spatial(16, i)
                    T.reads(B_local[v0, 0:16])
                    T.writes(B[v0, 0:16])
                    T.block_attr({"auto_copy": 1})
                    for ax0, ax1 in T.grid(1, 16):
                        B[v0 + ax0, ax1] = B_local[v0 + ax0, ax1]
    """

    primitive = "write_at"
    is_read = False

    loop: object = attrs.field(converter=as_loop_ref)
    block: object = attrs.field(converter=as_block_ref)
    write_buffer_index: object = 0
    storage_scope: object = "global"

    def _index(self):
        return self.write_buffer_index


def read_at(loop, block, read_buffer_index, storage_scope) -> ReadAt:
    """The :class:`ReadAt` record: ``read_at("k0", "C", 1, "shared")``."""
    return ReadAt(loop, block, read_buffer_index, storage_scope)


def write_at(loop, block, write_buffer_index, storage_scope) -> WriteAt:
    """The :class:`WriteAt` record: ``write_at("tx", "C", 0, "shared")``."""
    return WriteAt(loop, block, write_buffer_index, storage_scope)


__all__ = ["ReadAt", "WriteAt", "read_at", "write_at"]
