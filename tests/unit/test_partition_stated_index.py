"""loop_partition states the index it leaves (derive_replaced_index) where
the loop's body binds only loop and iteration variables and block names:
the stated index is the built one, and a body that binds other names
(a Let, an allocated buffer) is left to the generic derivation."""

import pytest

import tirfun.rewrites as R
from tirfun.nodes import IRModule
from tirfun.rewrites import partition
from tirfun.rewrites.index import build_index, index_of
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from test_rewrites_stated_index import _spy

MATMUL = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
         C: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    Y = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
        for jj in range(16):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, jj])
                T.where(j < 8)
                D[vi, vj] = C[vi, vj] + T.float32(1)
"""

# the loop under a block of its own, with a condition around a block
NESTED = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    with T.block("outer"):
        T.reads(A[0:8, 0:8])
        T.writes(B[0:8, 0:8])
        for i, j in T.grid(8, 8):
            if i < 6:
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
"""

# a Let expression in the body: a name bound besides the loops and blocks
LET_BODY = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            z = T.float32()
            B[vi] = T.Let(z * T.float32(2), where={z: A[vi]})
"""

# a block allocating a buffer under the loop
ALLOC = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i in range(8):
        with T.block("outer"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi, 0:4])
            T.writes(B[vi, 0:4])
            S = T.alloc_buffer((4,))
            for j in range(4):
                with T.block("S"):
                    vj = T.axis.spatial(4, j)
                    S[vj] = A[vi, vj]
            for j in range(4):
                with T.block("B"):
                    vj = T.axis.spatial(4, j)
                    B[vi, vj] = S[vj]
"""



@pytest.mark.parametrize("source, loop", [
    (MATMUL, "i"), (MATMUL, "j"), (MATMUL, "k"), (MATMUL, "i_1"), (MATMUL, "j_1"), (MATMUL, "jj"),
    (NESTED, "i"), (NESTED, "j"),
])
@pytest.mark.parametrize("factors", [[None, 2], [3, None], [None], [1, 1, None], [2, 3]])
def test_loop_partition_states_the_index_it_leaves(monkeypatch, source, loop, factors):
    used = _spy(monkeypatch, partition, "derive_replaced_index")
    mod = IRModule({"main": from_source(source)})
    out = R.loop_partition(loop, factors)(mod)
    assert used == [True]
    assert index_of(out["main"]) == build_index(out["main"])
    # and after rewrites that follow, reading the stated index: another
    # partition of a copied loop, a split
    name = sorted(index_of(out["main"]).loops)[-1]
    out = R.loop_partition(name, [None, 1])(out)
    assert index_of(out["main"]) == build_index(out["main"])
    out = R.split(sorted(index_of(out["main"]).loops)[0], [None, 1])(out)
    assert index_of(out["main"]) == build_index(out["main"])


@pytest.mark.parametrize("source, loop", [(LET_BODY, "i"), (ALLOC, "i")])
def test_a_body_binding_other_names_is_left_to_the_generic_derivation(monkeypatch, source, loop):
    used = _spy(monkeypatch, partition, "derive_replaced_index")
    mod = IRModule({"main": from_source(source)})
    out = R.loop_partition(loop, [None, 2])(mod)
    assert used == []
    assert index_of(out["main"]) == build_index(out["main"])
    assert_equivalent(mod, out)
