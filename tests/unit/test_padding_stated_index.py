"""pad_einsum states the index it leaves (derive_stages_index): the stated
index is the built one, the copy stages are read as a walk finds them, the
padded block's names are kept as they are counted, and the walk that puts
the block on the padded buffers gives what the generic transform gives."""

import pytest

import tirfun.rewrites as R
from tirfun.analysis.traversal import get_at, transform, walk_stmts
from tirfun.nodes import Block, BlockRealize, Buffer, BufferLoad, BufferStore, For, IRModule
from tirfun.rewrites import padding
from tirfun.rewrites.index import _count_block_names, _plain_stage, _scan, build_index, index_of
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from test_rewrites_stated_index import _spy

MATMUL = """
@T.prim_func
def main(A: T.Buffer((31, 31), "float32"), B: T.Buffer((31, 31), "float32"),
         C: T.Buffer((31, 31), "float32"), D: T.Buffer((31, 31), "float32")):
    Y = T.alloc_buffer((31, 31))
    for i, j, k in T.grid(31, 31, 31):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(31, 31):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
    for i, j in T.grid(31, 31):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + T.float32(1)
"""

# the block under a block of its own: the realizes above it are rebuilt
NESTED = """
@T.prim_func
def main(A: T.Buffer((7, 5), "float32"), B: T.Buffer((7,), "float32"), E: T.Buffer((7,), "float32")):
    with T.block("outer"):
        T.reads(A[0:7, 0:5])
        T.writes(B[0:7], E[0:7])
        for p in range(7):
            with T.block("E"):
                vp = T.axis.spatial(7, p)
                E[vp] = A[vp, 0]
        for i, k in T.grid(7, 5):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
"""

# symbolic extents: the padded sizes are expressions
SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 6), "float32")
    B = T.match_buffer(b, (n, 6), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i, j in T.grid(n, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = B[vi, 0]
"""

# a Let expression in the padded block's body: its name is bound as before
LET_BODY = """
@T.prim_func
def main(A: T.Buffer((7,), "float32"), B: T.Buffer((7,), "float32"), C: T.Buffer((7,), "float32")):
    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            z = T.float32()
            B[vi] = T.Let(A[vi] * T.float32(2), where={z: A[vi]})
    for i in range(7):
        with T.block("C"):
            vi = T.axis.spatial(7, i)
            C[vi] = B[vi]
"""



CASES = [
    (MATMUL, R.pad_einsum("Y", [32, 32, 32])),
    (MATMUL, R.pad_einsum("Y", [1, 2, 1])),
    (MATMUL, R.pad_einsum("C", [16, 1])),
    (MATMUL, R.pad_einsum("D", [4, 4])),
    (NESTED, R.pad_einsum("B", [4, 4])),
    (NESTED, R.pad_einsum("E", [8])),
    (SYMBOLIC, R.pad_einsum("B", [4, 4])),
    (SYMBOLIC, R.pad_einsum("C", [8])),
    (LET_BODY, R.pad_einsum("B", [4])),
]


@pytest.mark.parametrize("source, step", CASES)
def test_pad_einsum_states_the_index_it_leaves(monkeypatch, source, step):
    used = _spy(monkeypatch, padding, "derive_stages_index")
    mod = IRModule({"main": from_source(source)})
    out = step(mod)
    assert used == [True]
    assert index_of(out["main"]) == build_index(out["main"])
    # and after rewrites that follow, reading the stated index
    for name in list(index_of(out["main"]).loops)[:3]:
        out = R.split(name, [None, 2])(out)
        assert index_of(out["main"]) == build_index(out["main"])
    assert_equivalent(mod, step(mod))


def test_a_statement_alone_in_its_scope_is_left_to_the_generic_derivation(monkeypatch):
    source = """
@T.prim_func
def main(A: T.Buffer((7, 5), "float32"), B: T.Buffer((7, 5), "float32")):
    for i, j in T.grid(7, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
"""
    used = _spy(monkeypatch, padding, "derive_stages_index")
    mod = IRModule({"main": from_source(source)})
    out = R.pad_einsum("B", [4, 4])(mod)
    assert used == [False]
    assert index_of(out["main"]) == build_index(out["main"])


@pytest.mark.parametrize("source, step", CASES)
def test_the_copy_stages_are_read_as_a_scan_finds_them(source, step):
    out = step(IRModule({"main": from_source(source)}))
    func = out["main"]
    read_any = False
    for path, stmt in walk_stmts(func):
        if type(stmt) is not For or type(get_at(func, path[:-1])).__name__ == "For":
            continue
        inner = stmt
        while type(inner) is For:
            inner = inner.body
        if type(inner) is not BlockRealize or not inner.block.name_hint.endswith("_pad"):
            continue
        read, walked = {}, {}
        found = _plain_stage(stmt, path, read)
        if found is None:  # a loop over an expression (a symbolic padded extent): scanned instead
            assert type(stmt.extent).__name__ not in ("IntImm", "Var")
            continue
        assert found == _scan(stmt, path, walked, 1, {}, None)
        assert read == walked
        read_any = True
    assert read_any


@pytest.mark.parametrize("source, step", CASES)
def test_the_padded_block_keeps_the_names_it_binds(source, step):
    out = step(IRModule({"main": from_source(source)}))
    from tirfun.rewrites.index import _BLOCK_NAMES

    for _, stmt in walk_stmts(out["main"]):
        if type(stmt) is Block and id(stmt) in _BLOCK_NAMES and _BLOCK_NAMES[id(stmt)][0]() is stmt:
            assert _BLOCK_NAMES[id(stmt)][1] == _count_block_names(stmt)


def _generic_swap(node, buf_map):
    def post(n):
        if isinstance(n, BufferLoad) and n.buffer in buf_map:
            return BufferLoad(buf_map[n.buffer], n.indices, n.predicate)
        if isinstance(n, BufferStore) and n.buffer in buf_map:
            return BufferStore(buf_map[n.buffer], n.value, n.indices, n.predicate)
        return n

    def unchanged(n):
        kind = type(n)
        return n if kind in padding._LEAVES or (kind is Buffer and padding.plain_buffer(n)) else None

    return transform(node, post, unchanged)


@pytest.mark.parametrize("source", [MATMUL, NESTED, SYMBOLIC, LET_BODY])
def test_the_swap_walk_is_the_generic_transform(source):
    func = from_source(source)
    for _, realize in walk_stmts(func):
        if type(realize) is not BlockRealize or not realize.block.iter_vars:
            continue
        block = realize.block
        regions = list(block.reads) + list(block.writes)
        for k in range(len(regions)):
            buf_map = {r.buffer: Buffer(r.buffer.name + "_pad", r.buffer.shape, r.buffer.dtype)
                       for r in regions[k:]}
            walk = padding._SwapBuffers(buf_map)
            for part in [block.body] + ([block.init] if block.init is not None else []):
                assert walk.stmt(part) == _generic_swap(part, buf_map)
