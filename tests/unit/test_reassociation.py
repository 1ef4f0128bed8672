"""tirfun.testing.reassociation: when a float reduction's order changes."""

import tirfun.rewrites as R
from tirfun.nodes import IRModule
from tirfun.script import from_source
from tirfun.testing.reassociation import float_reduction_orders, reassociates

# D reduces over r (outer) and k (inner), though its iteration variables
# list k first: reverse_compute_at regenerates its loops as k, r
SOURCE = """
@T.prim_func
def main(A: T.Buffer((7, 6), "float32"), D: T.Buffer((4,), "DTYPE")):
    B = T.alloc_buffer((7, 6), "DTYPE")
    for i, j in T.grid(7, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.Cast("DTYPE", A[vi, vj])
    for i, r, k in T.grid(4, 6, 7):
        with T.block("D"):
            vi, vk, vr = T.axis.remap("SRR", [i, k, r])
            with T.init():
                D[vi] = T.Cast("DTYPE", 1)
            D[vi] = D[vi] * B[vk, vr]
"""


def mod_of(dtype: str) -> IRModule:
    return IRModule({"main": from_source(SOURCE.replace("DTYPE", dtype))})


def test_a_float_reduction_regenerated_in_its_iteration_variables_order_reassociates():
    mod = mod_of("float64")
    assert float_reduction_orders(mod) == {"D": (((2, 1),), ((1, 1),))}
    moved = R.reverse_compute_at("D", "i")(mod)
    assert float_reduction_orders(moved)["D"] == (((1, 1),), ((2, 1),))
    assert reassociates(mod, moved)


def test_spatial_loops_do_not_count_and_split_reduction_loops_do():
    mod = mod_of("float64")
    spatial = R.split("i", [None, 2])(mod)
    assert float_reduction_orders(spatial) == float_reduction_orders(mod)
    assert not reassociates(mod, spatial)
    assert reassociates(mod, R.reorder("k", "r")(mod))
    # the pieces of a split, and their weights
    split = R.split("k", [None, 2])(mod)
    assert float_reduction_orders(split)["D"] == (((2, 1),), ((1, 2),), ((1, 1),))
    assert reassociates(split, R.reorder("k_1", "k_0")(split))
    assert reassociates(mod, split)


def test_integer_reductions_have_no_order_to_keep():
    mod = mod_of("int32")
    assert float_reduction_orders(mod) == {}
    assert not reassociates(mod, R.reverse_compute_at("D", "i")(mod))
