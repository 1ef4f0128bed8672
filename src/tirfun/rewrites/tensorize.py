"""tensorize: a block's computation replaced by a tensor intrinsic's code.

The block (or the block that :mod:`blockize <.blockize>` makes of the
subtree under a loop) is compared with the intrinsic's description
(:mod:`.tensorize_match`); where they agree, its body becomes the body of
the intrinsic's implementation, whose buffers are bound by
``T.match_buffer`` to the windows of the block's buffers the comparison
found. The block keeps its iteration variables, bindings, regions and
init; what it computes is what the implementation computes, which the
intrinsic promises to be what its description computes.
"""

from __future__ import annotations

import weakref

import attrs

from ..analysis.arith import bound_region
from ..analysis.arith.int_set import Interval
from ..analysis.traversal import iter_children, transform, transform_plain, walk
from ..nodes import (
    Block, BlockRealize, Buffer, BufferRegion, IntImm, Let, MatchBufferRegion, PrimFunc, Range, Var,
)
from ..errors import NodeError
from ..nodes.base import with_fields
from ..tir.tensor_intrin import TensorIntrin, TensorIntrinError, as_tensor_intrin
from .base import Checks, Outcome, Rewrite, commit, register
from .blockize import _INTO_BLOCK, Blockize, _chain_entries
from .checks import describe, resolve_block_or_loop, resolve_site
from .errors import InvalidArgumentError, RefKindError, TensorIntrinMismatchError, TensorizeWindowOutOfBoundsError
from .exprs import cast as _cast
from .index import (
    _ROOT_REALIZE, FuncIndex, _own_names_plain, _realizes_along, _scan, _stated, _tally_loops, _tally_one, binds_let,
    leaf_binds_lets, var_names_in_buffer as var_names_of_buffer,
)
from .index_dtype import normalize_index_dtype
from .name_pool import NamePool
from .refs import BlockRef, LoopRef, as_block_or_loop_ref
from .serialize import py_value
from .tensorize_match import Mismatch, match_block


def _as_intrin(value):
    """A TensorIntrin from a value or a registered name; an invalid value
    is kept, for ``plan`` to report."""
    try:
        return as_tensor_intrin(value)
    except TensorIntrinError:
        return value


@attrs.frozen
class _TensorizePlan:
    site: object
    realize_path: tuple
    realize: BlockRealize
    match: object
    names: object  # the names in use (``in``) where the block is tensorized
    blocks: object  # the block names in use there
    prep: "_Prepared"  # the intrinsic retyped to the block's index dtype
    blockized: object = None  # blockize's plan, where the block was made at a loop and is not in place


@register
@attrs.frozen
class Tensorize(Rewrite):
    """Replace what a block computes by a tensor intrinsic's code (TVM's
    ``tensorize``). Given a loop, the subtree under it is first made a
    block, as :class:`~tirfun.rewrites.Blockize` makes it; given a block,
    the block itself is used. The block is compared with the intrinsic's
    description: its regions fix the window of each buffer the description
    sees, and its body must be the description's body, statement for
    statement, with its variables and buffers in the description's places
    and every index equal within the windows. Its body then becomes the
    implementation's, whose buffers are ``T.match_buffer`` views of the
    windows (fresh names, as every name in a function is one variable);
    the block's iteration variables, regions and init stay, and the
    implementation's block annotations are added to the block's. The
    intrinsic's index arithmetic (shapes, offsets, loops, indices) first
    takes the block's index dtype, the widest among the starts of its
    regions, as TVM retypes the implementation's: an intrinsic written with
    ``int32`` indices views ``int64``-indexed buffers with ``int64``
    offsets, and its description compares with the block's ``int64``
    indices (TVM compares the description as written, with looser
    integer types; retyped, the windows a blockized block's indices stay
    in are proved the same way in either dtype).

    Requirements, each with the error raised when it fails:

    1. the loop or block exists (UnknownLoopError, UnknownBlockError,
       RefKindError); ``intrin`` is a TensorIntrin or a registered name
       (InvalidArgumentError);
    2. given a loop, it can be made a block (the errors of blockize:
       NonSingleChildBlockError, NotOnlyChildError, SubspaceNotDivisibleError);
    3. the block computes what the description computes, as above, with
       dtypes equal (TensorIntrinMismatchError, naming the first difference);
    4. every window lies inside its buffer for every iteration of the block
       (TensorizeWindowOutOfBoundsError): a padded block's region may reach
       outside, its accesses guarded by a condition the implementation
       does not keep, and a ``T.match_buffer`` view cannot.

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((8,), "float32")):
            for i, k_0, k_1 in T.grid(8, 4, 4):
                with T.block("dot"):
                    vi = T.axis.spatial(8, i)
                    vk = T.axis.reduce(16, k_0 * 4 + k_1)
                    C[vi] = C[vi] + A[vi, vk] * B[vi, vk]

        # intrinsic
        @T.prim_func
        def dot4_desc(a: T.handle, b: T.handle, c: T.handle):
            A = T.match_buffer(a, (4,), offset_factor=1)
            B = T.match_buffer(b, (4,), offset_factor=1)
            C = T.match_buffer(c, (), offset_factor=1)
            with T.block("root"):
                T.reads(C[()], A[0:4], B[0:4])
                T.writes(C[()])
                for k in range(4):
                    with T.block("update"):
                        vk = T.axis.remap("R", [k])
                        C[()] = C[()] + A[vk] * B[vk]

        @T.prim_func
        def dot4_impl(a: T.handle, b: T.handle, c: T.handle):
            A = T.match_buffer(a, (4,), offset_factor=1)
            B = T.match_buffer(b, (4,), offset_factor=1)
            C = T.match_buffer(c, (), offset_factor=1)
            with T.block("root"):
                T.reads(C[()], A[0:4], B[0:4])
                T.writes(C[()])
                for k in T.unroll(4):
                    C[()] = C[()] + A[k] * B[k]

        # rewrite
        tensorize(LoopRef("k_1"), TensorIntrin(dot4_desc, dot4_impl))

        # after
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((8,), "float32")):
            for i, k_0 in T.grid(8, 4):
                with T.block("dot_o"):
                    vi_o, vk_o = T.axis.remap("SR", [i, k_0])
                    T.reads(C[vi_o], A[vi_o, vk_o * 4:vk_o * 4 + 4], B[vi_o, vk_o * 4:vk_o * 4 + 4])
                    T.writes(C[vi_o])
                    A_1_elem_offset = T.int32()
                    A_1 = T.match_buffer(A[vi_o, vk_o * 4:vk_o * 4 + 4], (4,), elem_offset=A_1_elem_offset, offset_factor=1)
                    B_1_elem_offset = T.int32()
                    B_1 = T.match_buffer(B[vi_o, vk_o * 4:vk_o * 4 + 4], (4,), elem_offset=B_1_elem_offset, offset_factor=1)
                    C_1_elem_offset = T.int32()
                    C_1 = T.match_buffer(C[vi_o], (), elem_offset=C_1_elem_offset, offset_factor=1)
                    for k in T.unroll(4):
                        C_1[()] = C_1[()] + A_1[k] * B_1[k]
    """

    primitive = "tensorize"

    target: object = attrs.field(converter=as_block_or_loop_ref)
    intrin: object = attrs.field(converter=_as_intrin)
    preserve_unit_iters: object = True

    def plan(self, mod, chk: Checks):
        subject = describe(self.target)
        if not isinstance(self.intrin, TensorIntrin):
            chk.stop(InvalidArgumentError, subject,
                     f"intrin must be a TensorIntrin or the name of a registered one, got {self.intrin!r}")
        if not isinstance(self.preserve_unit_iters, bool):
            chk.stop(InvalidArgumentError, subject,
                     f"preserve_unit_iters must be a bool, got {self.preserve_unit_iters!r}")
        if isinstance(self.target, LoopRef):
            # the loop's subtree made a block first; blockize's own checks
            # report what prevents it
            blockize = Blockize(self.target, self.preserve_unit_iters)
            errors, bplan = blockize.analyze(mod)
            if errors:
                for err in errors:
                    chk.fail(type(err), err.subject, err.reason, *err.nodes)
                chk.checkpoint()
            made = _blockized(blockize, bplan)
            if made is None:
                outcome = blockize.build(bplan)
                mod, block_ref = outcome.mod, outcome.result
        elif isinstance(self.target, BlockRef):
            block_ref, made = self.target, None
        else:
            chk.stop(RefKindError, subject, f"expected a loop or a block reference, got a "
                                            f"{type(self.target).__name__}")
        if made is not None:
            # the new block stays out of the function until it is tensorized:
            # one change of the function, at the loop's path
            site, rpath, realize = bplan.site, bplan.loop_path, made.realize
            names, blocks = made.names, made.blocks
        else:
            site = resolve_site(chk, mod, [block_ref])
            bpath = resolve_block_or_loop(chk, site, block_ref)
            rpath = bpath[:-1]
            realize = site.at(rpath)
            names, blocks = site.index.names, site.index.blocks
        # the description's indices take the block's index dtype, as the
        # implementation's do: an int32 description then compares with an
        # int64 block variable for variable, its ranges known by name
        prep = prepared(self.intrin, _index_dtype(realize.block))
        desc = prep.desc
        try:
            found = match_block(realize, desc.body)
        except Mismatch as m:
            nodes = (m.node,) if m.node is not None else (realize,)
            chk.stop(TensorIntrinMismatchError, subject,
                     f"block {realize.block.name_hint!r} does not compute what the intrinsic's description "
                     f"computes: {m.reason}", *nodes)
        missing = [desc.buffer_map[p].name for p in desc.params if desc.buffer_map[p] not in found.buffers]
        if missing:
            chk.stop(TensorIntrinMismatchError, subject,
                     f"the intrinsic's description never uses its buffer(s) {', '.join(missing)}, so the block "
                     "has no window to bind them to")
        _check_windows(chk, subject, realize, found, desc, prep.extents)
        return _TensorizePlan(site, rpath, realize, found, names, blocks, prep, bplan if made is not None else None)

    def build(self, plan: _TensorizePlan) -> Outcome:
        site, realize = plan.site, plan.realize
        block = realize.block
        prep = plan.prep
        desc = prep.desc
        names, blocks = prep.fresh_names(NamePool(plan.names).fresh, NamePool(plan.blocks).fresh)
        renamed = _renamed(prep.impl, names, blocks, prep.variables)
        new_root = renamed.body.block
        matches = []
        for dp, ip, extents in zip(desc.params, renamed.params, _impl_extents(renamed)):
            cur = plan.match.buffers[desc.buffer_map[dp]]
            window = _window(plan.match.starts[cur], extents)
            matches.append(MatchBufferRegion(renamed.buffer_map[ip], BufferRegion(cur, window)))
        annotations = dict(block.annotations)
        for key, value in new_root.annotations.items():
            annotations.setdefault(key, value)  # the schedule's value wins, as in TVM
        new_block = with_fields(block, body=new_root.body, match_buffers=list(block.match_buffers) + matches,
                                alloc_buffers=list(block.alloc_buffers) + list(new_root.alloc_buffers),
                                annotations=annotations)
        new = with_fields(realize, block=new_block)
        derive = None
        if plan.blockized is not None:
            derive = lambda new_func: _stated_index(plan.blockized, new, new_func)  # noqa: E731
        mod = commit(site, plan.realize_path, new, derive=derive)
        return Outcome(mod, None)

    def python_args(self):
        if isinstance(self.intrin, TensorIntrin) and not self.intrin.name:
            # an intrinsic registered under no name is written out whole, as
            # the TVMScript of its two functions
            intrin = (f"tir.TensorIntrin(from_source({self.intrin.desc.script()!r}), "
                      f"from_source({self.intrin.impl.script()!r}))")
        else:
            intrin = repr(self.intrin.name if isinstance(self.intrin, TensorIntrin) else self.intrin)
        args = [py_value(self.target), intrin]
        if self.preserve_unit_iters is not True:
            args.append(f"preserve_unit_iters={py_value(self.preserve_unit_iters)}")
        return args


@attrs.frozen
class _Blockized:
    """The block blockize makes at a loop, not yet put in place, and the
    names the function would then use: its variables (``names``) and its
    block names (``blocks``), each a container answering ``in``."""

    realize: BlockRealize
    names: object
    blocks: object


@attrs.frozen
class _NamesAfter:
    """The names ``before`` (a container) without ``gone`` and with
    ``added``: those of a function after a change not put in place."""

    before: object
    gone: frozenset
    added: frozenset

    def __contains__(self, name) -> bool:
        return name in self.added or (name in self.before and name not in self.gone)


def _blockized(blockize: Blockize, bplan) -> _Blockized | None:
    """Blockize's new block at the loop, with the names in use once it
    replaced the loop, known without replacing it: blockize keeps every
    name the loop's subtree binds but the block's iteration variables,
    which its new variables replace, and adds the names it chooses. None
    where that reading is not sure (a buffer the block declares mentions an
    iteration variable, a let expression binds a name, names clash), and
    tensorize puts the block in place first."""
    site, realize = bplan.site, bplan.realize
    block = realize.block
    iter_names = {iv.var.name for iv in block.iter_vars}
    if len(iter_names) != len(block.iter_vars) or site.index.clashes:
        return None
    for buf in list(block.alloc_buffers) + [m.buffer for m in block.match_buffers]:
        if not iter_names.isdisjoint(var_names_of_buffer(buf)):
            return None
    if _binds_a_let(realize):
        return None
    taken_names, taken_blocks = NamePool(site.index.names), NamePool(site.index.blocks)
    added: list[str] = []
    added_blocks: list[str] = []

    def fresh(base: str) -> str:
        added.append(taken_names.fresh(base))
        return added[-1]

    def fresh_block(base: str) -> str:
        added_blocks.append(taken_blocks.fresh(base))
        return added_blocks[-1]

    new = blockize.outer_realize(bplan, fresh, fresh_block)
    counts = site.index.names
    # a name bound once, by the block's iteration variable, is free again
    gone = frozenset(n for n in iter_names if counts.get(n) == 1)
    # the function's names count its block names too
    names = _NamesAfter(counts, gone, frozenset(added) | frozenset(added_blocks))
    return _Blockized(new, names, _NamesAfter(site.index.blocks, frozenset(), frozenset(added_blocks)))


def _stated_index(bplan, new: BlockRealize, new_func) -> FuncIndex | None:
    """The index after the tensorized block ``new``, made by blockize at
    the loop of ``bplan``, took the loop's place, stated from what changed
    rather than derived by walking both sides: the loops of the chain and
    the block below them are gone, the new block came with what the
    implementation put in its body and the init blockize gave it, which are
    indexed on their own. Only for the common case: the old block declares
    no buffer and holds no Let (its body and init are stores, so nothing
    else is under it) and no loop of the chain names a buffer in its
    bounds (it would have been a loose statement). None otherwise, and the
    index is derived."""
    site, path, chain, old_realize = bplan.site, bplan.loop_path, bplan.chain, bplan.realize
    old = site.index
    block = old_realize.block
    if old.clashes or path == _ROOT_REALIZE or not _own_names_plain(block) or leaf_binds_lets(block):
        return None
    delta: dict = {}
    if not _tally_loops(chain, delta, -1):
        return None  # a loop naming a buffer: the loose statements change
    _tally_one(old_realize, delta, -1)
    _tally_one(block, delta, -1)
    _tally_one(new, delta, 1)
    _tally_one(new.block, delta, 1)
    gone = _chain_entries(path, chain, block)
    block_path = path + _INTO_BLOCK
    came = [(False, new.block.name_hint, block_path)]
    new_realizes: list = []
    for field in ("init", "body"):
        part = getattr(new.block, field)
        if part is not None:
            came.extend(_scan(part, block_path + ((field, None),), delta, 1, {}, realizes=new_realizes))
    realizes = _realizes_along(site.func, new_func, path) + [(old_realize, None), (None, new)]
    realizes.extend((None, b) for b in new_realizes)
    return _stated(old, delta, (), gone, came, realizes)  # None on a clash: derive_index then


def _binds_a_let(realize: BlockRealize) -> bool:
    """Whether a ``Let`` expression lies in ``realize`` (buffers, which
    hold none, are not entered). The function's index tells for the
    block's own fields and the stores of its body (see
    :func:`~tirfun.rewrites.index.leaf_binds_lets`), and the bindings
    and predicate are asked directly; a walk answers where the index
    cannot (a body of other statements)."""
    if not binds_let(realize) and not leaf_binds_lets(realize.block):
        return False
    return _walk_finds_let(realize)


def _walk_finds_let(node) -> bool:
    """:func:`_binds_a_let` by a walk of every node."""
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is Let:
            return True
        if type(n) is not Buffer:
            stack.extend(iter_children(n))
    return False


def _index_dtype(block: Block) -> str:
    """The widest index dtype among the starts of the regions ``block``
    declares: the implementation's indices take it, as TVM's tensorize
    retypes them, so its views are as wide as the block's buffers."""
    bits = max((r.min.dtype.bits for region in list(block.reads) + list(block.writes) for r in region.region),
               default=32)
    return f"int{bits}"


def _retyped(intrin: TensorIntrin, dtype: str) -> tuple[PrimFunc, PrimFunc]:
    """The description and the implementation (its buffers made views:
    :func:`_as_views`) with indices of ``dtype``; both as written when a node of
    theirs cannot be retyped (the comparison then meets two index dtypes,
    which it allows, and the implementation keeps its own)."""
    impl = _as_views(intrin.impl)
    try:
        return normalize_index_dtype(intrin.desc, dtype), normalize_index_dtype(impl, dtype)
    except NodeError:
        return intrin.desc, impl


@attrs.frozen
class _Prepared:
    """What tensorize derives from an intrinsic for one index dtype, the
    same for every block it replaces: the retyped description and
    implementation, the extents of the windows the implementation views,
    and the names the implementation binds, in the order fresh names are
    chosen for them."""

    desc: PrimFunc
    impl: PrimFunc
    extents: tuple  # per parameter, the extents of its window (see _impl_extents)
    buffer_names: tuple  # the implementation's buffer names, first occurrence first
    var_names: tuple  # (name, owning buffer name or None) of its other variables, likewise
    block_names: tuple  # the names of its blocks but the root, likewise
    variables: tuple  # its distinct variables (of type Var exactly), for the renaming

    def fresh_names(self, fresh, fresh_block) -> tuple[dict, dict]:
        """The implementation's names made fresh in a function (``fresh``
        and ``fresh_block`` choose them there): buffers first, then the
        variables they own under derived names (``A_elem_offset`` follows
        ``A`` to ``A_1_elem_offset``), as the printer and the parser name
        them; then the other variables, and the blocks."""
        names = {b: fresh(b) for b in self.buffer_names}
        for name, owner in self.var_names:
            names[name] = fresh(name if owner is None else names[owner] + name[len(owner):])
        return names, {b: fresh_block(b) for b in self.block_names}


def _prepare(intrin: TensorIntrin, dtype: str) -> _Prepared:
    desc, impl = _retyped(intrin, dtype)
    impl_root = impl.body.block
    buffers: dict[str, None] = {}
    others: list = []
    blocks: dict[str, None] = {}
    nodes = list(walk(impl))
    for n in nodes:
        if isinstance(n, Buffer):
            buffers.setdefault(n.name)
    owners = sorted(buffers, key=len, reverse=True)
    seen = set(buffers)
    for n in nodes:
        if isinstance(n, Var) and n.name not in seen:
            seen.add(n.name)
            others.append((n.name, next((b for b in owners if n.name.startswith(b + "_")), None)))
        elif isinstance(n, Block) and n is not impl_root:
            blocks.setdefault(n.name_hint)
    variables = tuple({n: None for n in nodes if type(n) is Var})
    return _Prepared(desc, impl, tuple(tuple(e) for e in _impl_extents(impl)), tuple(buffers), tuple(others),
                     tuple(blocks), variables)


# id(intrin) -> (weak reference to the intrinsic, {index dtype: _Prepared}):
# a schedule tensorizes many blocks with one intrinsic, and what is derived
# from it does not depend on the block but through the index dtype. Held as
# long as the intrinsic lives, which cannot change.
_PREPARED: dict[int, tuple] = {}


def _forget(key: int):
    # the table bound now: at interpreter exit the module's globals are
    # cleared before the last intrinsics are collected
    def callback(_ref, prepared=_PREPARED):
        prepared.pop(key, None)
    return callback


def prepared(intrin: TensorIntrin, dtype: str) -> _Prepared:
    """The intrinsic prepared for blocks of index dtype ``dtype``: built
    once per intrinsic and dtype, kept for as long as the intrinsic lives."""
    key = id(intrin)
    entry = _PREPARED.get(key)
    if entry is None or entry[0]() is not intrin:
        entry = (weakref.ref(intrin, _forget(key)), {})
        _PREPARED[key] = entry
    found = entry[1].get(dtype)
    if found is None:
        found = entry[1][dtype] = _prepare(intrin, dtype)
    return found


def _renamed(impl: PrimFunc, names: dict, blocks: dict, variables: tuple) -> PrimFunc:
    """``impl`` with its variables and buffers renamed by ``names`` (as
    :func:`~tirfun.analysis.traversal.rename` renames them) and its blocks
    by ``blocks``, in one pass. ``variables``, the distinct variables of
    ``impl`` of type Var exactly (``_Prepared.variables``), are renamed
    through a table, so the walk rebuilds arithmetic without a call per
    node (:func:`~tirfun.analysis.traversal.transform_plain`); ``post``
    renames the others (of a subclass of Var) as it meets them. A name
    kept as it is (most of a loop nest's, in a function that does not use
    them) leaves its node as it is: the renamed one would equal it."""
    names = {old: new for old, new in names.items() if new != old}
    blocks = {old: new for old, new in blocks.items() if new != old}
    mapping = {v: Var(names[v.name], v.dtype, v.type_annotation) for v in variables if v.name in names}

    def post(n):
        if isinstance(n, Var):
            return Var(names[n.name], n.dtype, n.type_annotation) if n.name in names else n
        if isinstance(n, Buffer):
            return attrs.evolve(n, name=names[n.name]) if n.name in names else n
        if isinstance(n, Block) and n.name_hint in blocks:
            return with_fields(n, name_hint=blocks[n.name_hint])
        return n
    return transform_plain(impl, post, None, mapping)


def _impl_extents(impl: PrimFunc) -> list:
    """The extents of the window each parameter of the implementation
    views: those of the region its root block declares for it (as TVM
    takes them), or its shape when it declares none."""
    root = impl.body.block
    regions = {r.buffer: r.region for r in list(root.reads) + list(root.writes)}
    out = []
    for p in impl.params:
        buf = impl.buffer_map[p]
        out.append([r.extent for r in regions[buf]] if buf in regions else list(buf.shape))
    return out


def _window(starts: tuple, extents: list) -> list:
    """The window from ``starts``: single indices in the leading dimensions
    the intrinsic does not have, then its ``extents``."""
    extra = len(starts) - len(extents)
    ranges = [Range(s, IntImm(s.dtype, 1)) for s in starts[:extra]]
    ranges += [Range(s, _cast(e, s.dtype)) for s, e in zip(starts[extra:], extents)]
    return ranges


def _check_windows(chk: Checks, subject: str, realize: BlockRealize, found, desc: PrimFunc,
                   impl_extents) -> None:
    """Each window lies inside its buffer over every iteration of the
    block: the implementation views it with ``T.match_buffer``, which a
    window reaching outside cannot be (a padded block guards such accesses
    with a condition; the implementation would not)."""
    # the domain's intervals once, for every window (see bound_region)
    dom = {iv.var: Interval.from_range(iv.dom) for iv in realize.block.iter_vars}
    for p, extents in zip(desc.params, impl_extents):
        view = desc.buffer_map[p]
        cur = found.buffers[view]
        if len(extents) > len(found.starts[cur]):
            chk.stop(TensorIntrinMismatchError, subject,
                     f"the implementation views {len(extents)} dimensions of buffer {cur.name}, which has "
                     f"{len(found.starts[cur])}", realize)
        window = _window(found.starts[cur], extents)
        for k, (iv, extent) in enumerate(zip(bound_region(window, dom), cur.shape)):
            lo, hi = _int(iv.lo), _int(iv.hi)
            size = _int(extent)
            if (lo is not None and lo < 0) or (hi is not None and size is not None and hi >= size):
                chk.fail(TensorizeWindowOutOfBoundsError, subject,
                         f"the window of buffer {cur.name} the intrinsic's {view.name} sees runs over "
                         f"[{iv.lo.script()}, {iv.hi.script()}] in dimension {k}, past its extent "
                         f"{extent.script()}", realize)
                break


def _int(e):
    return e.value if isinstance(e, IntImm) else None


def _as_views(impl: PrimFunc) -> PrimFunc:
    """``impl`` with its parameter buffers as the parser makes the
    ``T.match_buffer`` views in a block they become, so that the result
    prints and parses back the same:

    - an offset variable ``<name>_elem_offset`` for a buffer that has an
      offset factor and no offset (the parser gives such a view one, and
      TVM's ``decl_buffer`` gives one to every buffer);
    - a pointer ``<name>_data`` of its own for a buffer whose pointer is
      the parameter (the parser makes a matched parameter's pointer the
      parameter itself where ``B.data`` names it; a view's is its own), so
      the result prints ``B.data`` as the implementation was written, as
      in TVM, not a handle the view is declared with."""
    new, own = {}, {}
    for p in impl.params:
        buf = impl.buffer_map[p]
        changes = {}
        if buf.elem_offset is None and buf.offset_factor != 0:
            dtype = buf.shape[0].dtype if buf.shape else "int32"
            changes["elem_offset"] = Var(f"{buf.name}_elem_offset", dtype)
        if buf.data is p:
            changes["data"] = own[p] = Var(f"{buf.name}_data", p.dtype, p.type_annotation)
        if changes:
            new[buf] = with_fields(buf, **changes)
    if not new:
        return impl

    def post(n):
        if isinstance(n, Var):
            return own.get(n, n)
        if isinstance(n, Buffer):
            return new.get(n, n)
        return n
    # the body only: the parameters stay the function's, keys of its buffer_map
    return with_fields(impl, body=transform(impl.body, post),
                       buffer_map={p: new.get(b, b) for p, b in impl.buffer_map.items()})


def tensorize(target, intrin, preserve_unit_iters: bool = True) -> Tensorize:
    """The :class:`Tensorize` record: ``tensorize(LoopRef("k_1"), intrin)``
    (a string names a block, as TVM's block arguments do; ``intrin`` is a
    TensorIntrin or the name of a registered one)."""
    return Tensorize(target, intrin, preserve_unit_iters)


__all__ = ["Tensorize", "tensorize"]
