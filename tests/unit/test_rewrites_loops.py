"""split, fuse, reorder, merge, add_unit_loop, reorder_block_iter_var."""

import copy
import re

import numpy as np
import pytest

import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.nodes import IRModule
from tirfun.rewrites.index import build_index, index_of
from tirfun.interp import run
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from corner_sources import ELEMENTWISE, STAGED_UNDER_IF


def mod_of(source: str) -> IRModule:
    return IRModule({"main": from_source(source)})


def check(rewrite, before: str, after: str) -> IRModule:
    """Apply ``rewrite`` to ``before``; the result equals ``after``, verifies,
    computes the same, and the input is unchanged."""
    mod = mod_of(before)
    snapshot = copy.deepcopy(mod)
    out = rewrite(mod)
    assert_structural_equal(out["main"], from_source(after))
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    assert mod == snapshot
    assert index_of(out["main"]) == build_index(out["main"])
    return out



MATMUL = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"), C: T.Buffer((4, 5), "float32")):
    for i, j, k in T.grid(4, 5, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)
"""


# ---------------------------------------------------------------- split

def test_split_exact_factors_has_no_predicate():
    check(R.split("i", [2, 2, 2]), ELEMENTWISE, """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i_0, i_1, i_2, j in T.grid(2, 2, 2, 8):
        with T.block("B"):
            vi = T.axis.spatial(8, i_0 * 4 + i_1 * 2 + i_2)
            vj = T.axis.spatial(8, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)
""")


def test_split_infers_a_none_factor_and_guards_the_overshoot():
    check(R.split("j", [3, None]), ELEMENTWISE, """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j_0, j_1 in T.grid(8, 3, 3):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(8, j_0 * 3 + j_1)
            T.where(j_0 * 3 + j_1 < 8)
            B[vi, vj] = A[vi, vj] * T.float32(2)
""")


def test_split_with_overshooting_explicit_factors_adds_the_predicate():
    check(R.split("i", [5, 2]), ELEMENTWISE, """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i_0, i_1, j in T.grid(5, 2, 8):
        with T.block("B"):
            vi = T.axis.spatial(8, i_0 * 2 + i_1)
            vj = T.axis.spatial(8, j)
            T.where(i_0 * 2 + i_1 < 8)
            B[vi, vj] = A[vi, vj] * T.float32(2)
""")


def test_split_disable_predication_leaves_the_predicate_out():
    out = R.split("i", [None, 4], disable_predication=True)(mod_of(ELEMENTWISE))
    assert "T.where" not in out.script()


def test_split_of_a_symbolic_loop():
    check(R.split("i", [None, 4]), SYMBOLIC, """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i_0, i_1 in T.grid((n + 3) // 4, 4):
        with T.block("B"):
            vi = T.axis.spatial(n, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < n)
            B[vi] = A[vi] + T.float32(1)
""")


def test_split_by_a_symbolic_factor():
    out = R.split("i", [None, from_source(SYMBOLIC).params[2]])(mod_of(SYMBOLIC))
    loop = out["main"].body.block.body
    assert loop.loop_var.name == "i_0" and loop.body.loop_var.name == "i_1"
    verify(out)


def test_split_factor_using_an_unknown_variable_is_refused():
    from tirfun.nodes import Var

    errors = R.split("i", [None, Var("m")]).violations(mod_of(SYMBOLIC))
    assert [type(e) for e in errors] == [R.InvalidFactorError]
    assert "uses m, which is not defined at the loop" in str(errors[0])


def test_split_keeps_unit_loops_in_bindings_unless_asked():
    kept = R.split("i", [1, None])(mod_of(ELEMENTWISE))
    assert "vi = T.axis.spatial(8, i_0 * 8 + i_1)" in kept.script()
    dropped = R.split("i", [1, None], preserve_unit_iters=False)(mod_of(ELEMENTWISE))
    assert 'vi, vj = T.axis.remap("SS", [i_1, j])' in dropped.script()
    verify(dropped)


def test_split_names_avoid_names_in_use():
    mod = R.split("i", [2, 4])(mod_of(ELEMENTWISE))
    # splitting i_0 makes i_0_0 and i_0_1; a second split of a loop named like
    # an existing one gets the next free suffix
    mod = R.split("i_0", [1, 2])(mod)
    assert [l.name for l in R.get_loops(mod, "B")] == ["i_0_0", "i_0_1", "i_1", "j"]
    out = R.split("j", [2, 4])(R.fuse("i_0_0", "i_0_1")(mod))
    names = [l.name for l in R.get_loops(out, "B")]
    assert names == ["i_0_0_i_0_1_fused", "i_1", "j_0", "j_1"]


def test_split_result_names_are_fresh_when_the_preferred_one_is_taken():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            i_0 = T.axis.spatial(8, i)
            B[i_0] = A[i_0]
"""
    out = R.split("i", [2, 4]).run(mod_of(src))
    assert [r.name for r in out.result] == ["i_0_1", "i_1"]
    verify(out.mod)


def test_split_accepts_numpy_and_literal_factors():
    import numpy as np

    from tirfun.nodes import IntImm

    expected = R.split("i", [2, 4])(mod_of(ELEMENTWISE))
    assert R.split("i", [np.int64(2), 4])(mod_of(ELEMENTWISE)) == expected
    assert R.split("i", [IntImm("int32", 2), None])(mod_of(ELEMENTWISE)) == expected


def test_split_returns_refs_to_the_new_loops():
    outcome = R.split("i", [2, None]).run(mod_of(ELEMENTWISE))
    assert outcome.result == (R.LoopRef("i_0", "main"), R.LoopRef("i_1", "main"))


def test_split_of_a_loop_inside_a_block_guards_with_if():
    src = """
@T.prim_func
def main(A: T.Buffer((8, 5), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi, 0:5], B[vi])
            T.writes(B[vi])
            B[vi] = T.float32(0)
            for k in range(5):
                B[vi] = B[vi] + A[vi, k]
"""
    mod = mod_of(src)
    out = R.split("k", [None, 2])(mod)
    assert "if k_0 * 2 + k_1 < 5:" in out.script()
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_split_shares_untouched_blocks_and_keeps_the_input():
    mod = mod_of(MATMUL)
    block = R.get(mod, "C")
    out = R.split("k", [2, 3])(mod)
    assert R.get(out, "C") is block
    assert mod == mod_of(MATMUL)


# ----------------------------------------------------------------- fuse

def test_fuse_two_loops():
    check(R.fuse("i", "j"), ELEMENTWISE, """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i_j_fused in range(64):
        with T.block("B"):
            vi = T.axis.spatial(8, i_j_fused // 8)
            vj = T.axis.spatial(8, i_j_fused % 8)
            B[vi, vj] = A[vi, vj] * T.float32(2)
""")


def test_fuse_three_loops_uses_mixed_radix_digits():
    out = check(R.fuse("i", "j", "k"), MATMUL, """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"), C: T.Buffer((4, 5), "float32")):
    for i_j_k_fused in range(120):
        with T.block("C"):
            vi = T.axis.spatial(4, i_j_k_fused // 30)
            vj = T.axis.spatial(5, i_j_k_fused % 30 // 6)
            vk = T.axis.reduce(6, i_j_k_fused % 6)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""")
    assert R.get_loops(out, "C") == [R.LoopRef("i_j_k_fused", "main")]


def test_split_then_fuse_gives_back_the_plain_binding():
    mod = R.fuse("i_0", "i_1")(R.split("i", [2, 4])(mod_of(ELEMENTWISE)))
    assert 'vi, vj = T.axis.remap("SS", [i_0_i_1_fused, j])' in mod.script()


def test_fuse_then_split_simplifies_div_and_mod():
    mod = R.split("i_j_fused", [8, 8])(R.fuse("i", "j")(mod_of(ELEMENTWISE)))
    text = mod.script()
    assert 'vi, vj = T.axis.remap("SS", [i_j_fused_0, i_j_fused_1])' in text


def test_fuse_works_literal_extents_out_on_ints_as_the_expressions_give():
    # with positive literal extents whose product fits the loops' type,
    # fuse computes its bindings and extent on ints: the same nodes as the
    # general arithmetic, for unit loops anywhere in the nest too; a
    # zero extent, a product past the type or a symbolic extent takes the
    # general way
    from tirfun.nodes import DataType, IntImm, Var
    from tirfun.rewrites.loops import _fused_bindings, _fused_literals

    checked = 0
    for bits in (32, 64):
        dtype = DataType(f"int{bits}")
        for extents in [(8,), (1,), (4, 8), (1, 8), (8, 1), (1, 1), (2, 3, 4), (1, 5, 1), (3, 1, 7, 2),
                        (1, 1, 6), (6, 1, 1), (46340, 46340), (2, 1, 32768, 32767)]:
            loops = [_LoopOf(Var(f"x{k}", dtype)) for k in range(len(extents))]
            exts = [IntImm(dtype, e) for e in extents]
            fused = Var("f", dtype)
            fast = _fused_literals(fused, loops, exts, dtype)
            assert fast is not None, extents
            mapping, total = _fused_bindings(fused, loops, exts, dtype)
            assert total == fast[1], extents
            assert list(mapping) == list(fast[0]), extents
            for var, value in mapping.items():
                assert value == fast[0][var] and value.dtype == fast[0][var].dtype, (extents, var)
            checked += 1
    assert checked == 26
    dtype = DataType("int32")
    for extents in [(IntImm(dtype, 0), IntImm(dtype, 4)), (IntImm(dtype, 65536), IntImm(dtype, 32768)),
                    (IntImm(dtype, 4), Var("n", dtype)), (IntImm(dtype, 4), IntImm("int64", 4))]:
        loops = [_LoopOf(Var(f"x{k}", dtype)) for k in range(2)]
        assert _fused_literals(Var("f", dtype), loops, list(extents), dtype) is None


class _LoopOf:
    """What fuse's arithmetic reads of a loop: its variable."""

    def __init__(self, var):
        self.loop_var = var


def test_fuse_of_one_loop_renames_it():
    out = R.fuse("j")(mod_of(ELEMENTWISE))
    assert [l.name for l in R.get_loops(out, "B")] == ["i", "j_fused"]


# --------------------------------------------------------------- reorder

def test_reorder_a_subset_of_a_chain():
    check(R.reorder("k", "i"), MATMUL, """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"), C: T.Buffer((4, 5), "float32")):
    for k, j, i in T.grid(6, 5, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""")


def test_reorder_in_the_same_order_returns_the_same_module():
    mod = mod_of(ELEMENTWISE)
    assert R.reorder("i", "j")(mod) is mod
    assert R.reorder("i")(mod) is mod


def test_reorder_keeps_the_block():
    mod = mod_of(ELEMENTWISE)
    out = R.reorder("j", "i")(mod)
    assert R.get(out, "B") is R.get(mod, "B")
    assert index_of(out["main"]) == build_index(out["main"])


# ----------------------------------------------------------------- merge

TWO = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    for k, l in T.grid(8, 4):
        with T.block("C"):
            vk, vl = T.axis.remap("SS", [k, l])
            C[vk, vl] = A[vk, vl] * T.float32(3)
"""


def test_merge_outer_loops():
    check(R.merge("i", "k"), TWO, """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i_m in range(8):
        for j in range(4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i_m, j])
                B[vi, vj] = A[vi, vj]
        for l in range(4):
            with T.block("C"):
                vk, vl = T.axis.remap("SS", [i_m, l])
                C[vk, vl] = A[vk, vl] * T.float32(3)
""")


def test_merge_whole_nests():
    out = check(R.merge("j", "l"), TWO, """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i_m, j_m in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i_m, j_m])
            B[vi, vj] = A[vi, vj]
        with T.block("C"):
            vk, vl = T.axis.remap("SS", [i_m, j_m])
            C[vk, vl] = A[vk, vl] * T.float32(3)
""")
    assert R.merge("j", "l").run(mod_of(TWO)).result == R.LoopRef("j_m", "main")
    assert [l.name for l in R.get_loops(out, "C")] == ["i_m", "j_m"]
    mod = mod_of(TWO)
    assert R.get(R.merge("j", "l")(mod), "C") is R.get(mod, "C")


@pytest.mark.parametrize("loops, cls, message", [
    # C's body would run before B's in each iteration
    (("j_2", "j"), R.DependenceViolationError, "the nest of loop 'i' runs before the nest of loop 'i_2'"),
    # B2 would run outside its if, or B inside it
    (("j", "j_1"), R.NonLoopAncestorError, "the nest of loop 'i_1' is under IfThenElse (if flag > 0)"),
    # B would move past B2, which adds to it
    (("j", "j_2"), R.DependenceViolationError, "would move past a statement that it shares buffer B with"),
    (("i", "i_2"), R.DependenceViolationError, "would move past a statement that it shares buffer B with"),
])
def test_merge_refuses_what_would_change_the_meaning(loops, cls, message):
    # found by random arguments: TVM's merge checks none of these
    mod = mod_of(STAGED_UNDER_IF)
    with pytest.raises(cls, match=re.escape(message)):
        R.merge(*loops)(mod)


def test_merge_refuses_nests_one_of_which_names_a_pointer():
    # B.data passed to a call may reach any element of any buffer: the
    # call's nest is taken to write them all
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        T.evaluate(T.call_extern("int32", "fill", B.data, i))
    for j in range(4):
        A[j] = B[j]
""")
    with pytest.raises(R.DependenceViolationError, match="both use a buffer through a pointer"):
        R.merge("i", "j")(mod)


def test_merge_refuses_iterations_that_would_meet_at_one_element():
    # C reads B[vi, 2 - vj]: merged at j, iteration j = 0 reads the element
    # iteration 2 writes; merged at i, a row is whole before it is read
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((4, 3), "int8"), C: T.Buffer((4, 3), "int8")):
    B = T.alloc_buffer((4, 3), "int8")
    for i, j in T.grid(4, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    for i_2, j_2 in T.grid(4, 3):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i_2, j_2])
            C[vi, vj] = B[vi, vj] + B[vi, 2 - vj]
""")
    with pytest.raises(R.DependenceViolationError, match="different iterations of the merged nest may meet"):
        R.merge("j", "j_2")(mod)
    out = R.merge("i", "i_2")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=3)


RENAMED_SHAPES = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), n: T.int32):
    for a in range(8):
        for j in range(8):
            with T.block("B0"):
                vi, vj = T.axis.remap("SS", [a, j])
                B[vi, vj] = A[vi, vj]
    for b in range(8):
        with T.block("B1"):
            vi = T.axis.spatial(8, b)
            B[vi, 0] = A[vi, 0]
        for j in range(8):
            with T.block("B2"):
                vj = T.axis.spatial(8, j)
                B[0, vj] = A[0, vj]
    for c in range(8):
        for j in range(4):
            with T.block("B3"):
                vi = T.axis.spatial(8, c // 2 * 2 + j % 2)
                B[vi, 0] = A[vi, 0]
    for d in range(8):
        with T.block("B4"):
            vi = T.axis.spatial(8, d)
            T.where(d < n)
            B[vi, 1] = A[vi, 1]
    for e in range(8):
        for j in range(n):
            with T.block("B5"):
                vi = T.axis.spatial(8, e)
                B[vi, 2] = A[vi, 2]
    for f in range(8):
        for j in T.serial(8, annotations={"pragma_unroll": 1}):
            with T.block("B6"):
                vi, vj = T.axis.remap("SS", [f, j])
                B[vi, vj] = A[vi, vj]
    for g in range(8):
        with T.block("B7"):
            B[g, 3] = A[g, 3]
"""


def test_merge_and_fuse_rebind_plain_bodies_as_rebind_does():
    # split, merge and fuse substitute the loop variables of plain bodies
    # (loops with literal bounds down to a block bound to loop variables or
    # literals) without rebind's general walk: the same statements as rebind, for a renaming,
    # a cast, fuse's divisions under the loops' ranges and a constant, the
    # unchanged ones the same objects; any other shape is left to rebind
    from tirfun.nodes import Cast, FloorDiv, FloorMod, IntImm, SeqStmt, Var
    from tirfun.rewrites.loops import _rebound_items
    from tirfun.rewrites.rebind import rebind_walk

    func = from_source(RENAMED_SHAPES)
    fused = Var("f", "int32")
    outcome = {}
    for loop in func.body.block.body.seq:
        var = loop.loop_var
        for how, value, ranges in [("rename", Var(var.name + "_m", var.dtype), {}),
                                   ("cast", Cast("int32", Var(var.name + "_m", "int64")), {}),
                                   # a binding of another dtype: the realize is rebuilt through its checks
                                   ("wider", Var(var.name + "_w", "int64"), {}),
                                   ("fused", FloorMod(FloorDiv(fused, IntImm("int32", 8)), IntImm("int32", 8)),
                                    {"f": (0, 63)}),
                                   ("unit", IntImm("int32", 0), {"f": (0, 0)})]:
            mapping = {var: value}
            fast = _rebound_items(loop.body, mapping, ranges)
            outcome[var.name, how] = fast is not None
            if fast is None:
                continue
            ref = rebind_walk(loop.body, mapping, ranges)
            expected = list(ref.seq) if isinstance(ref, SeqStmt) else [ref]
            old = list(loop.body.seq) if isinstance(loop.body, SeqStmt) else [loop.body]
            assert len(fast) == len(expected)
            for got, want, before in zip(fast, expected, old):
                assert_structural_equal(got, want)
                assert (got is before) == (want is before), (var.name, how)
    # a binding computed from the variable, a predicate, a bound that is
    # not a literal, an annotated loop and a block without iteration
    # variables take rebind's way
    taken = {name for (name, _), fast in outcome.items() if fast}
    assert taken == {"a", "b"}
    assert all(outcome["a", how] and outcome["b", how] for how in ("rename", "cast", "wider", "fused", "unit"))


# --------------------------------------------------------- add_unit_loop

def test_add_unit_loop_above_a_loop():
    check(R.add_unit_loop(R.LoopRef("j")), ELEMENTWISE, """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, u, j in T.grid(8, 1, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
""")


def test_add_unit_loop_twice_gets_a_fresh_name():
    mod = R.add_unit_loop("B")(R.add_unit_loop("B")(mod_of(ELEMENTWISE)))
    # the second unit loop goes right above the block, under the first
    assert [l.name for l in R.get_loops(mod, "B")] == ["i", "j", "u", "u_1"]


# ------------------------------------------------ reorder_block_iter_var

def test_reorder_block_iter_var_of_a_reduction():
    check(R.reorder_block_iter_var("C", [2, 1, 0]), MATMUL, """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"), C: T.Buffer((4, 5), "float32")):
    for i, j, k in T.grid(4, 5, 6):
        with T.block("C"):
            vk, vj, vi = T.axis.remap("RSS", [k, j, i])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
""")


# ----------------------------------------------------------- the records

def test_records_are_values():
    a, b = R.split("i", [2, 4]), R.split(R.LoopRef("i"), (2, 4))
    assert a == b and hash(a) == hash(b)
    assert R.fuse("i", "j") == R.fuse(["i", "j"])
    assert R.fuse("i", "j") != R.fuse("j", "i")
    with pytest.raises(AttributeError):
        a.factors = (1,)


def test_a_record_applies_to_a_prim_func_too():
    func = from_source(ELEMENTWISE)
    assert R.split("i", [2, 4])(func) == R.split("i", [2, 4])(IRModule({"main": func}))


def test_refs_may_name_another_function():
    f = from_source(ELEMENTWISE)
    mod = IRModule({"main": f, "other": f})
    out = R.split(R.LoopRef("i", "other"), [2, 4])(mod)
    assert out["main"] is f
    assert [l.name for l in R.get_loops(out, R.BlockRef("B", "other"))] == ["i_0", "i_1", "j"]


def test_reorder_keeps_a_predicate_on_loops_it_swaps():
    # TVM refuses: its iterator maps cannot read the bindings under a
    # predicate on the fused loops. Each iteration stands alone and keeps
    # its predicate, so the swapped loops compute the same elements
    src = '''
@T.prim_func
def main(A: T.Buffer((6, 6, 6, 6), "float32"), B: T.Buffer((6, 6, 6, 6), "float32")):
    for i, j, k, l in T.grid(6, 6, 6, 6):
        with T.block("B"):
            T.where(i * 216 + j * 36 + k * 6 + l < 100)
            vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
            B[vi, vj, vk, vl] = A[vi, vj, vk, vl] * T.float32(2)
'''
    mod = mod_of(src)
    out = R.reorder("l", "i")(mod)
    assert "for l, j, k, i in T.grid(6, 6, 6, 6):" in out["main"].script()
    assert "T.where(i * 216 + j * 36 + k * 6 + l < 100)" in out["main"].script()
    verify(out)
    assert_equivalent(mod["main"], out["main"])


@pytest.mark.parametrize("factors", [(1, 1), (1, 5), (3, 1), (3, 4), (0, 4), (4, 0), (2, 3, 4), (5, 1, 2),
                                     (1, 1, 7), (64, 2), (2, 2 ** 30)])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_split_binding_shortcut_is_what_the_simplifier_writes(factors, dtype):
    # split writes the simplified binding of constant factors directly; it
    # must be the simplifier's own answer, node for node
    from tirfun.analysis.arith.iter_map import simplify_index
    from tirfun.nodes import Add, IntImm, Mul, Var
    from tirfun.rewrites.loops import _weighted_sum

    new_vars = [Var(f"i_{k}", dtype) for k in range(len(factors))]
    imms = [IntImm(dtype, f) for f in factors]
    value = new_vars[0]
    for f, v in zip(imms[1:], new_vars[1:]):
        value = Add(Mul(value, f), v)
    assert _weighted_sum(new_vars, imms, value) == simplify_index(value)


def test_split_rebinds_plain_bodies_as_the_general_walk_does():
    # split hands rebind the simplified form of its binding; the chain
    # shortcut must take it where the general walk does, and simplify the
    # other bindings under the same lazily made ranges
    from tirfun.analysis.arith.iter_map import simplify_index
    from tirfun.nodes import Add, FloorDiv, IntImm, Mul, SeqStmt, Var
    from tirfun.rewrites.rebind import rebind, rebind_walk

    func = from_source(RENAMED_SHAPES)
    asked = []
    for loop in func.body.block.body.seq:
        var = loop.loop_var
        outer, inner = Var(var.name + "_0"), Var(var.name + "_1")
        for value in [Add(Mul(outer, IntImm("int32", 4)), inner), FloorDiv(Add(Mul(outer, IntImm("int32", 4)), inner),
                                                                            IntImm("int32", 2))]:
            ranges = {outer.name: (0, 1), inner.name: (0, 3)}

            def lazily():
                asked.append(var.name)
                return ranges

            simplified = {var: simplify_index(value)} if isinstance(value, Add) else None
            known = {id(value): (value, simplified[var])} if simplified else None
            got = rebind(loop.body, {var: value}, lazily, simplified=simplified)
            want = rebind_walk(loop.body, {var: value}, ranges, known=known)
            assert_structural_equal(got, want)
            assert isinstance(got, SeqStmt) or (got is loop.body) == (want is loop.body)
    # the ranges are made only where a binding had to be simplified under them
    assert "a" in asked and "g" not in asked


# -- loops over bare statements: no block promises their independence ---------

BARE = '''
from tirfun.script import tir as T
@T.prim_func
def main(a: T.Buffer((16,), "float32"), c: T.Buffer((8, 8), "float32"), acc: T.Buffer((1,), "float32")):
    for i in range(8):
        for j in range(8):
            {body}
'''


def _bare(body):
    return IRModule({"main": from_source(BARE.replace("{body}", body))})


def test_reorder_refuses_bare_statements_whose_iterations_meet_at_an_element():
    # TVM reorders it: a[i] is doubled at j == i, and later iterations read the
    # doubled value, so the order of the iterations is the result
    mod = _bare("a[j] = T.float32(2) * a[i]")
    with pytest.raises(R.DependenceViolationError, match=r"^reorder: loops 'j', 'i': a statement outside any "
                                                         r"block under the loops uses buffer a, which is written "
                                                         r"there, and two iterations of the loops may meet"):
        R.reorder("j", "i")(mod)


def test_reorder_refuses_bare_updates_in_place_of_two_kinds():
    # each statement alone updates in place, but a sum and a product of one
    # element do not commute: (x + c) * 2 is not x * 2 + c (found by the soak)
    mod = _bare("a[i] = a[i] + c[i, j]\n            a[j] = a[j] * T.float32(2)")
    with pytest.raises(R.DependenceViolationError, match=r"uses buffer a, which is written there"):
        R.reorder("j", "i")(mod)
    # two sums of one element commute
    assert R.reorder("j", "i").violations(_bare("a[i] = a[i] + c[i, j]\n            a[j] = a[j] + c[j, i]")) == []


def test_reorder_takes_bare_statements_that_meet_in_one_iteration_or_update_in_place():
    for body in ("c[i, j] = c[i, j] * T.float32(2) + a[i]",     # each iteration its own element
                 "acc[0] = acc[0] + c[i, j]"):                   # updates that commute, as a reduction's
        mod = _bare(body)
        out = R.reorder("j", "i")(mod)
        a, c = np.linspace(-1, 1, 16, dtype="float32"), np.arange(64, dtype="float32").reshape(8, 8)
        before = [a.copy(), c.copy(), np.zeros(1, "float32")]
        after = [x.copy() for x in before]
        run(mod, *before)
        run(out, *after)
        for x, y in zip(before, after):
            np.testing.assert_array_equal(x, y)
    # split, the same statement's indices still map the iterations one to one
    split = R.split("j", [2, 4])(_bare("c[i, j] = c[i, j] + a[j]"))
    assert R.reorder("j_1", "j_0").violations(split) == []


def test_parallel_refuses_bare_statements_that_would_race():
    for body, loop in (("a[j] = T.float32(2) * a[i]", "j"), ("a[j] = T.float32(2) * a[i]", "i"),
                       ("acc[0] = acc[0] + c[i, j]", "i")):
        with pytest.raises(R.DependenceViolationError, match=rf"^parallel: loop '{loop}': the parallel of loop "
                                                             rf"'{loop}' cannot be fulfilled: a statement outside "
                                                             r"any block under it uses buffer \w+, which is written "
                                                             r"there, and two iterations may meet at one element "
                                                             r"of it; run at once, they would race on it"):
            R.parallel(loop)(_bare(body))
    # each iteration of i its own row: parallel
    R.parallel("i")(_bare("c[i, j] = c[i, j] + a[j]"))


SPLIT_INTO_PARTS = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "int32")
    B = T.match_buffer(b, (n,), "int32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * 3
"""


@pytest.mark.parametrize("n", [0, 1, 5, 8, 9, 17])
def test_reorder_takes_the_symbolic_weight_of_a_split_into_parts(n):
    # split(i, [8, None]) binds vi = i_0 * ((n + 7) // 8) + i_1: a dense
    # mixed radix whose weight is the inner extent, which TVM reorders
    mod = IRModule({"main": from_source(SPLIT_INTO_PARTS)})
    split = R.split("i", [8, None])(mod)
    assert "i_0 * ((n + 7) // 8) + i_1" in split["main"].script()
    after = R.reorder("i_1", "i_0")(split)
    verify(after)
    assert "for i_1, i_0 in T.grid((n + 7) // 8, 8):" in after["main"].script()
    assert_equivalent(mod["main"], after["main"], sizes={"n": n})
    # a weight other than the extent below is no iteration map: refused
    skewed = from_source(split["main"].script().replace("i_0 * ((n + 7) // 8) + i_1", "i_0 * ((n + 8) // 8) + i_1"))
    with pytest.raises(R.NotAffineBindingError):
        R.reorder("i_1", "i_0")(IRModule({"main": skewed}))


def _fused_sum(cols: int):
    src = f"""
@T.prim_func
def main(C: T.Buffer((5, {cols}), "int32"), D: T.Buffer((5,), "int32")):
    for i, k in T.grid(5, {cols}):
        with T.block("D"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                D[vi] = 0
            D[vi] = D[vi] + C[vi, vk] * (vk + 1)
"""
    return (R.fuse("i", "k") >> R.split("i_k_fused", [None, 4]))(IRModule({"main": from_source(src)}))


def test_reorder_refuses_to_swap_the_parts_of_a_fuse_of_a_data_parallel_and_a_reduction_loop():
    # vi = f // 3 and vk = f % 3 over f = f_0 * 4 + f_1: with f_1 outside,
    # row 6's steps come as vk = 2, 0, 1, and the init at vk = 0 resets the
    # first (TVM reorders it so; found by the soak at run-time sizes)
    mod = _fused_sum(3)
    with pytest.raises(R.DependenceViolationError, match=r"parts of one sum that gives both a data-parallel and a "
                                                         r"reduction variable"):
        R.reorder("i_k_fused_1", "i_k_fused_0")(mod)
    # over 4 columns the split parts are the row and the column: swapped,
    # each row's steps still start at its init
    mod = _fused_sum(4)
    out = R.reorder("i_k_fused_1", "i_k_fused_0")(mod)
    assert_equivalent(mod["main"], out["main"])
