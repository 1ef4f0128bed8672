"""Rewrites that state the new index (reindex, transform_block_layout):
the stated index is the built one, the stated path is taken where the
rewrite is plain and left where it is not, and the walks that rebuild the
block give what the generic transform gives."""

import pytest

import tirfun.rewrites as R
from tirfun.analysis.traversal import transform, walk_stmts
from tirfun.nodes import BlockRealize, Buffer, BufferLoad, BufferStore, IRModule, Var
from tirfun.rewrites import block_layout, cache
from tirfun.rewrites.index import build_index, index_of
from tirfun.rewrites.index_maps import access_tidier
from tirfun.rewrites.redirect import redirect_accesses
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

ROOTED = """
@T.prim_func
def main(A: T.Buffer((8, 6), "float32"), B: T.Buffer((6, 8), "float32"), C: T.Buffer((8, 8), "float32"),
         D: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0)) + T.exp(A[vi, 0])
"""

# the blocks under a block of their own: the scope is not the root, and
# the realizes above it are rebuilt
NESTED = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), E: T.Buffer((8,), "float32")):
    with T.block("outer"):
        T.reads(A[0:8, 0:8])
        T.writes(B[0:8, 0:8], E[0:8])
        for p in range(8):
            with T.block("E"):
                vp = T.axis.spatial(8, p)
                E[vp] = A[vp, 0]
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj, vi] = T.Cast("float32", T.Cast("int32", A[vj, vi])) * T.float32(2)
"""

# a Let expression inside the index of the buffer reindexed: its name
# leaves the function with the index
LET_INDEX = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            z = T.int32()
            B[vi] = A[T.Let(z, where={z: vi})] * T.float32(2)
"""


def _spy(monkeypatch, module, name) -> list:
    """Record whether each call of ``module.name`` stated an index."""
    used = []
    original = getattr(module, name)

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        used.append(out is not None)
        return out

    monkeypatch.setattr(module, name, spy)
    return used


def _same_results(before: IRModule, after: IRModule) -> None:
    assert_equivalent(before, after)


@pytest.mark.parametrize("source, step", [
    (ROOTED, R.reindex("C", ("read", 1))),
    (ROOTED, R.reindex("C", ("write", 0))),
    (ROOTED, R.reindex("D", ("read", 0))),
    (NESTED, R.reindex("B", ("read", 0))),
    (NESTED, R.reindex("B", "B")),
    (ROOTED, R.reindex_cache_read("D", 0, "local", lambda i, j: (j, i))),
    (ROOTED, R.reindex_cache_write("D", 0, "local", lambda i, j: (i, j))),
    (ROOTED, R.reindex_cache_read("C", 1, "shared", lambda i, j, k: (k, j))),
    (NESTED, R.reindex_cache_read("B", 0, "local", lambda i, j: (i, j))),
    (NESTED, R.reindex_cache_write("B", 0, "local", lambda i, j: (j, i))),
])
def test_reindex_and_the_reindexing_caches_state_the_index_they_leave(monkeypatch, source, step):
    used = _spy(monkeypatch, cache, "derive_insert_index")
    mod = IRModule({"main": from_source(source)})
    out = step(mod)
    assert used == [True]
    assert index_of(out["main"]) == build_index(out["main"])
    # and after a rewrite that follows, reading the stated index
    after = R.split(next(iter(index_of(out["main"]).loops)), [None, 2])(out)
    assert index_of(after["main"]) == build_index(after["main"])
    _same_results(mod, out)


def test_reindex_through_a_let_leaves_the_index_to_the_walk(monkeypatch):
    used = _spy(monkeypatch, cache, "derive_insert_index")
    mod = IRModule({"main": from_source(LET_INDEX)})
    assert "z" in index_of(mod["main"]).names  # in the load and in the region read
    out = R.reindex("B", ("read", 0))(mod)
    assert used == []
    assert index_of(out["main"]) == build_index(out["main"])
    assert "z" not in index_of(out["main"]).names
    _same_results(mod, out)


def test_transform_block_layout_states_the_index_it_leaves(monkeypatch):
    used = _spy(monkeypatch, block_layout, "derive_renamed_nest_index")
    mod = IRModule({"main": from_source(ROOTED)})
    for step in [R.transform_block_layout("D", lambda i, j: (j // 4, i, j % 4)),
                 R.transform_block_layout("C", lambda i, j, k: (i * 8 + j, k))]:
        out = step(mod)
        assert index_of(out["main"]) == build_index(out["main"]), step
        _same_results(mod, out)
        mod = out
    assert used == [True, True]


def _generic_redirect(node, old, new, indices):
    def post(n):
        if isinstance(n, BufferLoad) and n.buffer == old:
            return BufferLoad(new, indices, n.predicate)
        if isinstance(n, BufferStore) and n.buffer == old:
            return BufferStore(new, n.value, indices, n.predicate)
        return n

    return transform(node, post, lambda n: n if isinstance(n, Buffer) else None)


@pytest.mark.parametrize("source, plain", [(ROOTED, True), (NESTED, True), (LET_INDEX, False)])
def test_the_redirect_walk_is_the_generic_transform(source, plain):
    func = from_source(source)
    realizes = [s for _, s in walk_stmts(func) if type(s) is BlockRealize and s.block.iter_vars]
    for realize in realizes:
        block = realize.block
        for region in list(block.reads) + list(block.writes):
            old = region.buffer
            new = Buffer(old.name + "_copy", [8] * len(block.iter_vars), old.dtype)
            own = [iv.var for iv in block.iter_vars]
            for part in [block.body] + ([block.init] if block.init is not None else []):
                got, was_plain = redirect_accesses(part, old, new, own)
                assert got == _generic_redirect(part, old, new, own)
                assert was_plain is plain


@pytest.mark.parametrize("source", [ROOTED, NESTED, LET_INDEX])
def test_the_relayout_walk_is_the_tidier(source):
    func = from_source(source)
    for _, realize in walk_stmts(func):
        if type(realize) is not BlockRealize or not realize.block.iter_vars:
            continue
        block = realize.block
        fresh = [Var(f"w{k}", iv.var.dtype) for k, iv in enumerate(block.iter_vars)]
        mapping = {iv.var: (w // 2) * 2 + w % 2 for iv, w in zip(block.iter_vars, fresh)}
        walk = block_layout._Relayout(mapping)
        generic = access_tidier(mapping)
        for part in [block.body] + ([block.init] if block.init is not None else []):
            assert walk.stmt(part) == generic(part)
        for region in list(block.reads) + list(block.writes):
            assert walk.region(region) == generic(region)


@pytest.mark.parametrize("lo, hi, dim, dtype", [
    (0, 7, 8, "int32"), (-1, 7, 8, "int32"), (0, 8, 8, "int32"), (3, 3, 4, "int32"), (0, 0, 1, "int64"),
    (0, 5, 2 ** 40, "int64"), (0, 5, 2 ** 31, "int64"), (2, 1, 2, "int32"),
])
def test_the_literal_bounds_check_is_index_arithmetic(lo, hi, dim, dtype):
    # the copy's reach on integers decides as the index arithmetic does
    from tirfun.analysis.arith.int_set import Interval
    from tirfun.analysis.arith.linear import fold_sub
    from tirfun.analysis.arith.region import index_at_most
    from tirfun.nodes import IntImm
    from tirfun.rewrites.exprs import cast

    iv = Interval(IntImm(dtype, lo), IntImm(dtype, hi))
    shape = IntImm("int64", dim)
    want = index_at_most(IntImm(dtype, 0), iv.lo) and \
        index_at_most(iv.hi, fold_sub(cast(shape, dtype), IntImm(dtype, 1)))
    assert cache._inside(iv, shape) == want


def test_accesses_of_finds_every_access_and_stops_at_a_block():
    from tirfun.rewrites.redirect import accesses_of

    func = from_source(NESTED)
    outer = [s for _, s in walk_stmts(func) if type(s) is BlockRealize and s.block.name_hint == "outer"][0]
    inner = [s for _, s in walk_stmts(func) if type(s) is BlockRealize and s.block.name_hint == "B"][0]
    found, nested = accesses_of(outer.block.body, inner.block.reads[0].buffer)
    assert nested
    found, nested = accesses_of(inner.block.body, inner.block.reads[0].buffer)
    assert not nested and len(found) == 1 and [i.name for i in found[0]] == ["vj", "vi"]


def test_a_reindexing_cache_through_a_let_leaves_the_index_to_the_walk(monkeypatch):
    used = _spy(monkeypatch, cache, "derive_insert_index")
    mod = IRModule({"main": from_source(LET_INDEX)})
    out = R.reindex_cache_write("B", 0, "local", lambda i: (i,))(mod)
    assert used == []
    assert index_of(out["main"]) == build_index(out["main"])
    _same_results(mod, out)


@pytest.mark.parametrize("source, step", [
    (ROOTED, R.reindex("C", ("read", 1))),
    (ROOTED, R.reindex("C", ("write", 0))),
    (ROOTED, R.reindex_cache_read("D", 0, "local", lambda i, j: (j, i))),
    (NESTED, R.reindex_cache_write("B", 0, "local", lambda i, j: (j, i))),
])
def test_a_copy_stage_is_read_as_a_scan_finds_it(step, source):
    # the stage a reindexing primitive inserts is read from its parts: the
    # same loops, block and names as a walk of it finds
    from tirfun.analysis.traversal import get_at
    from tirfun.rewrites.index import _plain_stage, _scan

    out = step(IRModule({"main": from_source(source)}))
    func = out["main"]
    block_path = index_of(func).blocks[step.run(IRModule({"main": from_source(source)})).result.name]
    path = block_path[:-1]
    while len(path) > 1 and type(get_at(func, path[:-1])).__name__ == "For":
        path = path[:-1]
    stage = get_at(func, path)
    read, walked = {}, {}
    found = _plain_stage(stage, path, read)
    assert found is not None
    assert found == _scan(stage, path, walked, 1, {}, None)
    assert read == walked


def test_reindex_of_the_only_nest_of_its_scope_wraps_it_in_a_sequence(monkeypatch):
    # the stage and the nest make a new sequence where the scope held the
    # nest alone: the paths below move, and the scope is re-indexed
    source = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)
"""
    used = _spy(monkeypatch, cache, "derive_insert_index")
    mod = IRModule({"main": from_source(source)})
    for step in [R.reindex("B", ("read", 0)), R.reindex("B", ("write", 0))]:
        out = step(mod)
        assert index_of(out["main"]) == build_index(out["main"]), step
        _same_results(mod, out)
    assert used == []
