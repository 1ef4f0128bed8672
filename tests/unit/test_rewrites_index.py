"""The name index: built once per function, derived along rewritten paths."""

import gc

import tirfun.rewrites as R
from tirfun.analysis.traversal import get_at
from tirfun.nodes import IRModule
from tirfun.rewrites.index import _CACHE, build_index, index_of
from tirfun.script import from_source

SOURCE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), n: T.int32):
    C = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            x: T.float32 = A[vi, vj]
            C[vi, vj] = x * T.float32(2)
    for k in range(8):
        with T.block("B"):
            vk = T.axis.spatial(8, k)
            T.reads(C[vk, 0:8])
            T.writes(B[vk, 0:8])
            for l in range(8):
                B[vk, l] = C[vk, l]
"""


def test_the_index_maps_names_to_paths():
    func = from_source(SOURCE)
    index = index_of(func)
    for name, path in index.loops.items():
        assert get_at(func, path).loop_var.name == name
    for name, path in index.blocks.items():
        assert get_at(func, path).name_hint == name
    assert set(index.loops) == {"i", "j", "k", "l"}
    assert {"A", "B", "C", "n", "x", "vi", "vj", "vk", "i", "l", "root"} <= set(index.names)


def test_the_index_is_cached_per_function_and_released_with_it():
    func = from_source(SOURCE)
    assert index_of(func) is index_of(func)
    key = id(func)
    assert key in _CACHE
    del func
    gc.collect()
    assert key not in _CACHE


def test_a_rewrite_registers_the_derived_index():
    mod = IRModule({"main": from_source(SOURCE)})
    out = (R.split("l", [None, 3]) >> R.add_unit_loop("B") >> R.reorder_block_iter_var("C", [1, 0])
           >> R.merge("i", "k") >> R.split("j", [2, 4]) >> R.fuse("j_0", "j_1") >> R.annotate("B", "k", 1) >> R.reorder("l_1", "l_0"))
    for step in out:
        mod = step(mod)
        cached = _CACHE[id(mod["main"])][1]
        assert cached == build_index(mod["main"])


def test_the_derived_index_is_the_built_one_after_every_block_primitive():
    # block primitives rebuild whole scopes around what they move, and the
    # derived index skips what they carried over unchanged: after every
    # step of seeded schedules of every program shape, it must be exactly
    # the index built from scratch
    from tirfun.testing.block_programs import SOURCES, random_block_program
    from tirfun.testing.schedules import ALL_PRIMITIVES, primitive_counts, random_block_schedule

    applied = set()
    for seed in range(3 * len(SOURCES)):
        mod = random_block_program(seed, SOURCES[seed % len(SOURCES)])
        pipeline = random_block_schedule(mod, seed, max_steps=4, primitives=ALL_PRIMITIVES)
        applied |= set(primitive_counts(pipeline))
        for step in pipeline:
            mod = step(mod)
            assert index_of(mod["main"]) == build_index(mod["main"]), step
    assert len(applied) >= 10, applied


NO_ROOT = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i] * T.float32(3)
"""


def test_a_realize_put_at_the_root_of_a_function_is_not_counted_as_mentioning():
    # a function without a root block: loop_partition wraps the loop in a
    # block that becomes the root, which build_index leaves out of the
    # table of mentions; the derived index must leave it out too
    mod = IRModule({"main": from_source(NO_ROOT)})
    out = R.loop_partition("i", [1], preserve_unit_iters=True)(mod)
    assert type(out["main"].body).__name__ == "BlockRealize"
    assert index_of(out["main"]) == build_index(out["main"])
    assert "i_common" not in index_of(out["main"]).mentioned["A"]
    assert index_of(out["main"]).mentioned["A"] == {"i0_partition", "i1_partition"}


def test_a_statement_held_twice_counts_its_names_twice():
    # the same statement object in two places binds its names twice: the
    # derived counts must not take the second copy for the carried-over one
    from tirfun.nodes import LetStmt, SeqStmt
    from tirfun.nodes.base import with_fields
    from tirfun.rewrites.base import Site, commit

    mod = IRModule({"main": from_source(SOURCE)})
    func = mod["main"]
    index = index_of(func)
    path = index.blocks["C"]
    block = get_at(func, path)
    assert isinstance(block.body, LetStmt)
    doubled = with_fields(block, body=SeqStmt([block.body, block.body]))
    out = commit(Site(mod, "main", func, index), path, doubled)
    derived = index_of(out["main"])
    assert derived.names["x"] == 2
    assert derived == build_index(out["main"])


def test_a_rebuilt_node_is_checked_like_a_new_one():
    # with_fields runs a field's validator when that field changes, and a
    # validator that reads other fields (a handle's pointee needs a handle
    # dtype) whatever changes
    import pytest

    from tirfun.errors import NodeError
    from tirfun.nodes import For, PointerType, Var
    from tirfun.nodes.base import with_fields

    func = from_source(SOURCE)
    loop = get_at(func, index_of(func).loops["i"])
    with pytest.raises(NodeError, match="must be a statement"):
        with_fields(loop, body=3)
    with pytest.raises(NodeError, match="must be a Var"):
        with_fields(loop, loop_var="i")
    assert isinstance(with_fields(loop, extent=4), For)
    handle = Var("p", "handle", PointerType("float32"))
    with pytest.raises(NodeError, match="only a handle variable points to"):
        with_fields(handle, dtype="int32")


def _wide(n: int) -> str:
    lines = ['@T.prim_func', f'def main(A: T.Buffer(({n}, 8), "float32"), B: T.Buffer(({n},), "float32")):']
    for k in range(n):
        lines += [f'    for l{k} in range(8):',
                  f'        with T.block("B{k}"):',
                  f'            v = T.axis.reduce(8, l{k})',
                  '            with T.init():',
                  f'                B[{k}] = T.float32(0)',
                  f'            B[{k}] = B[{k}] + A[{k}, v]']
    return "\n".join(lines)


def test_inserted_blocks_shift_their_followers_through_many_rewrites():
    # every decompose_reduction inserts a block into the root sequence, moving every
    # block after it; the index records the moves as shifts and folds them
    # once they pile up (more than 32 here)
    from tirfun.rewrites.index import _MAX_SHIFTS

    n = _MAX_SHIFTS + 8
    mod = IRModule({"main": from_source(_wide(n))})
    seen_shifts = 0
    for k in range(n):
        mod = R.decompose_reduction(f"B{k}", f"l{k}")(mod)
        func = mod["main"]
        index = _CACHE[id(func)][1]
        seen_shifts = max(seen_shifts, len(index.shifts))
        assert index == build_index(func), k
        for name, path in index.blocks.items():
            assert get_at(func, path).name_hint == name
        for name, path in index.loops.items():
            assert get_at(func, path).loop_var.name == name
    assert seen_shifts == _MAX_SHIFTS  # the shifts were folded, not dropped


def test_mentions_settle_when_asked_and_when_rebuilt_realizes_pile_up(monkeypatch):
    import tirfun.rewrites.index as index_module

    for limit in (0, 2, 10_000):  # settled at every step, every few steps, only when asked
        monkeypatch.setattr(index_module, "_MAX_PENDING", limit)
        mod = IRModule({"main": from_source(_wide(6))})
        for k in range(6):
            mod = R.decompose_reduction(f"B{k}", f"l{k}")(mod)
            mod = R.split(f"l{k}", [None, 2])(mod)
            func = mod["main"]
            assert _CACHE[id(func)][1] == build_index(func), (limit, k)


def test_a_shift_leaves_a_path_that_left_its_sequence_earlier_alone():
    # found by the soak: a path that parts from the shifted sequence's
    # path above it has a field step (no index) at the sequence's depth
    from tirfun.rewrites.index import _resolve

    shift = ((("body", None), ("seq", 2)), 0, 1)
    elsewhere = (("body", None), ("seq", 1), ("body", None), ("block", None))
    inside = (("body", None), ("seq", 2), ("seq", 3), ("block", None))
    assert _resolve((elsewhere, 0), (shift,)) == elsewhere
    assert _resolve((inside, 0), (shift,)) == (("body", None), ("seq", 2), ("seq", 4), ("block", None))


def test_loop_primitives_derive_the_index_from_the_two_nests(monkeypatch):
    # split, fuse and add_unit_loop swap a nest's loops and move what is
    # below without walking it: under a block, after a statement was
    # inserted at the root (a shift still pending), and where a loop's
    # extent reads a buffer or a split guards its iterations (the walk over
    # the body is used instead), the derived index is the built one, every
    # loop's path leads to it, and a name the nest freed is free
    from tirfun.nodes import Var

    used = _spy(monkeypatch, R.base, "derive_nest_index")
    source = SOURCE.replace("n: T.int32):", "n: T.int32, L: T.Buffer((1,), \"int32\")):")
    source = source.replace("            for l in range(8):\n                B[vk, l] = C[vk, l]",
                            "            for l, m in T.grid(8, 1):\n                B[vk, l + m] = C[vk, l]")
    assert "m in" in source
    source += """
    for t in range(L[0]):
        with T.block("D"):
            vt = T.axis.opaque(8, t)
            B[vt % 8, 0] = T.float32(0)
"""
    mod = IRModule({"main": from_source(source)})
    steps = [R.cache_read("B", 0, "local"), R.split("l", [None, 4]), R.fuse("l_0", "l_1"),
             R.add_unit_loop("B"), R.split("i", [2, 4]), R.split("k", [None, Var("n", "int32")]),
             R.fuse("k_0", "k_1"), R.fuse("t"),
             # a loop inside a block split by a factor that does not divide
             # it: the guard wraps the body in an ``if``, so the walk is used
             R.split("l_0_l_1_fused", [None, 3])]
    for step in steps:
        mod = step(mod)
        derived = index_of(mod["main"])
        assert derived == build_index(mod["main"]), step
        for name, path in derived.loops.items():
            assert get_at(mod["main"], path).loop_var.name == name, step
    # split k (by n) and the last split are guarded: the walk, without asking
    assert used == [True, True, True, True, True, False]
    assert "l" not in index_of(mod["main"]).names


def test_names_bound_by_let_expressions_are_counted_through_rewrites():
    # a Let expression inside a block binds its variable: the derived index
    # counts it as the built one does, after rewrites that rebuild, copy
    # (cache_write) and drop (compute_inline) the statements holding it
    source = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            z = T.float32()
            B[vi] = T.Let(z + z, where={z: A[vi] * T.float32(2)})
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)
"""
    mod = IRModule({"main": from_source(source)})
    assert index_of(mod["main"]).names["z"] == 1
    for step in [R.split("i", [None, 2]), R.cache_write("B", 0, "local"), R.compute_inline("B_local"),
                 R.compute_inline("B")]:
        mod = step(mod)
        assert index_of(mod["main"]) == build_index(mod["main"]), step
    assert index_of(mod["main"]).names["z"] == 1


MERGES = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32"),
         D: T.Buffer((8, 8), "float32"), E: T.Buffer((8,), "float32"), F: T.Buffer((3, 8), "float32")):
    for f0 in range(8):
        with T.block("F0"):
            v = T.axis.spatial(8, f0)
            F[0, v] = A[0, v]
    for i, j in T.grid(8, 8):
        with T.block("C1"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj]
        with T.block("C2"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for f1 in range(8):
        with T.block("F1"):
            v = T.axis.spatial(8, f1)
            F[1, v] = A[1, v]
    for k, l in T.grid(8, 8):
        with T.block("D"):
            vk, vl = T.axis.remap("SS", [k, l])
            D[vk, vl] = A[vk, vl] + T.float32(1)
    with T.block("E"):
        T.reads(A[0:8, 0])
        T.writes(E[0:8])
        for p in range(8):
            with T.block("E1"):
                vp = T.axis.spatial(8, p)
                E[vp] = A[vp, 0]
        for q in range(8):
            with T.block("E2"):
                vq = T.axis.spatial(8, q)
                E[vq] = E[vq] * T.float32(2)
    for f2 in range(8):
        with T.block("F2"):
            v = T.axis.spatial(8, f2)
            F[2, v] = A[2, v]
"""


def _index_is_the_built_one(func, step) -> None:
    derived = index_of(func)
    assert derived == build_index(func), step
    for name, path in derived.loops.items():
        assert get_at(func, path).loop_var.name == name, step
    for name, path in derived.blocks.items():
        assert get_at(func, path).name_hint == name, step


def _spy(monkeypatch, module, name) -> list:
    """Record, for each call of ``module.name`` (a derivation a primitive
    states), whether it gave the index (rather than leaving it to the walk)."""
    used = []
    original = getattr(module, name)

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        used.append(out is not None)
        return out

    monkeypatch.setattr(module, name, spy)
    return used


def _without_merge_order_checks(monkeypatch):
    # the merges below reorder nests that share a buffer, or take one out
    # of an ``if``, which merge refuses; what is tested is the index each
    # merge derives, the same whether or not the meaning is kept
    monkeypatch.setattr(R.Merge, "_check_order", lambda *a: None)


def test_merge_derives_the_index_from_the_nests(monkeypatch):
    # merge removes every nest but the last given and puts the merged nest
    # in its place: the items after a removed nest move up (here with a
    # shift of an earlier insertion still pending), the blocks below the
    # bodies move into the merged body (a body of two blocks gives it two
    # items), a sequence left with one item is that item, and the loops of
    # the nests are swapped for the merged ones. Without walking the
    # bodies, the derived index is the built one and every path leads to
    # its loop or block
    _without_merge_order_checks(monkeypatch)
    used = _spy(monkeypatch, R.base, "derive_merge_index")
    mod = IRModule({"main": from_source(MERGES)})
    steps = [R.cache_read("C1", 0, "local"),
             # given last, i's nest stays (before k's): k's nest is removed
             R.merge("k", "i"),
             # the two nests are all the merged loop holds: j's body of two
             # blocks gives the new body its last two items
             R.merge("l", "j"),
             # inside block E the sequence holds only the two nests
             R.merge("p", "q"),
             # three nests, the first and last removed around the one that stays
             R.merge("f2", "f0", "f1"),
             # two-deep nests, the earlier one removed
             R.split("f2_m", [None, 4]), R.split("k_m", [None, 4]), R.merge("f2_m_1", "k_m_1"),
             R.fuse("f2_m_0_m", "f2_m_1_m")]
    for step in steps:
        mod = step(mod)
        _index_is_the_built_one(mod["main"], step)
    assert used == [True] * 5
    names = index_of(mod["main"]).names
    assert not {"i", "j", "k", "l", "p", "q", "f0", "f1", "f2", "k_m_0", "k_m_1"} & set(names)
    script = mod["main"].script()
    assert "for l_m in range(8):" in script and "for p_m in range(8):" in script


def test_merges_shift_their_followers_until_the_shifts_fold(monkeypatch):
    # each merge of two neighbouring nests removes one item of the root
    # sequence: the items after it move up by a shift, and once shifts pile
    # up they are folded into the entries
    from tirfun.rewrites.index import _MAX_SHIFTS

    _without_merge_order_checks(monkeypatch)
    used = _spy(monkeypatch, R.base, "derive_merge_index")
    n = _MAX_SHIFTS + 4
    mod = IRModule({"main": from_source(_wide(2 * n))})
    seen_shifts = 0
    for k in range(n):
        mod = R.merge(f"l{2 * k}", f"l{2 * k + 1}")(mod)
        seen_shifts = max(seen_shifts, len(index_of(mod["main"]).shifts))
        _index_is_the_built_one(mod["main"], k)
    assert used == [True] * n
    assert seen_shifts == _MAX_SHIFTS


def test_merge_walks_the_bodies_where_the_nests_are_not_items_of_one_sequence(monkeypatch):
    # a nest under an ``if``, a merged loop of another integer type (its
    # variable is cast in one body), an empty body (a no-op, dropped from the
    # merged sequence), a loop whose extent reads a buffer: the index is
    # derived by walking what changed, and is still the built one
    _without_merge_order_checks(monkeypatch)
    used = _spy(monkeypatch, R.base, "derive_merge_index")
    source = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), L: T.Buffer((1,), "int32"),
         n: T.int32):
    for i in range(8):
        with T.block("B1"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    if n > 0:
        for j in range(8):
            with T.block("B2"):
                vj = T.axis.spatial(8, j)
                B[vj] = B[vj] + A[vj]
    for g in range(8):
        with T.block("B6"):
            vg = T.axis.spatial(8, g)
            B[vg] = B[vg] + T.float32(3)
    for k in range(T.int64(8)):
        with T.block("B3"):
            vk = T.axis.spatial(T.int64(8), k)
            B[vk] = B[vk] * T.float32(2)
    for e in range(8):
        T.evaluate(0)
    for s in range(L[0]):
        with T.block("B4"):
            vs = T.axis.opaque(8, s)
            B[vs % 8] = T.float32(0)
    for t in range(L[0]):
        with T.block("B5"):
            vt = T.axis.opaque(8, t)
            B[vt % 8] = B[vt % 8] + T.float32(1)
"""
    mod = IRModule({"main": from_source(source)})
    steps = [R.merge("i", "j"), R.merge("g", "k"), R.merge("e", "g_m"), R.merge("s", "t")]
    for step in steps:
        mod = step(mod)
        _index_is_the_built_one(mod["main"], step)
    # the nest under the ``if`` is not an item of the root sequence and a
    # cast is not plain arithmetic: not asked; the empty body and the
    # extents that read a buffer: asked, and refused
    assert used == [False, False]
    script = mod["main"].script()
    assert "T.Cast(\"int64\", e_m)" in script and "for e_m in range(8):" in script


REDUCTIONS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
         D: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32"), F: T.Buffer((8,), "float32"),
         G: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
    for j, r in T.grid(8, 2):
        with T.block("C"):
            vj = T.axis.spatial(8, j)
            vr = T.axis.reduce(1, 0)
            with T.init():
                C[vj] = T.float32(0)
            C[vj] = C[vj] + A[vj, vr]
        with T.block("E"):
            ve = T.axis.spatial(8, j)
            E[ve] = A[ve, 0]
    for j2, r2 in T.grid(8, 2):
        with T.block("G"):
            vj = T.axis.spatial(8, j2)
            vr = T.axis.reduce(1, 0)
            with T.init():
                G[vj] = T.float32(0)
            G[vj] = G[vj] + A[vj, vr]
    with T.block("S"):
        for p, q in T.grid(8, 8):
            with T.block("F"):
                vp, vq = T.axis.remap("SR", [p, q])
                with T.init():
                    F[vp] = T.float32(0)
                F[vp] = F[vp] + A[vp, vq]
    for m, n in T.grid(8, 8):
        with T.block("D"):
            vm, vn = T.axis.remap("SR", [m, n])
            with T.init():
                for t in range(1):
                    D[vm] = T.float32(0)
            D[vm] = D[vm] + A[vm, vn]
"""


def test_decompose_reduction_derives_the_index_from_the_nest_it_adds(monkeypatch):
    # decompose_reduction puts an init nest before a statement (an item of
    # a sequence, with a shift of an earlier insertion pending; or the body
    # of a loop or of a block, wrapped in a sequence with it; or the
    # reduction block itself, where its loops repeat it) and renames the
    # block: without walking what it kept, the derived index is the built
    # one and every path leads to its loop or block. An init that holds a
    # loop is walked instead
    used = _spy(monkeypatch, R.reduction, "derive_init_index")
    mod = IRModule({"main": from_source(REDUCTIONS)})
    steps = [R.cache_read("B", 0, "local"),
             R.decompose_reduction("B", "i"),   # an item of the root: its followers shift
             R.decompose_reduction("C", "j"),   # before the block, an item of j's body
             R.decompose_reduction("G", "j2"),  # before the block, the body of loop r2
             R.decompose_reduction("F", "q"),   # the body of loop p, inside block S
             R.split("k", [None, 4]),
             R.decompose_reduction("D", "n")]   # an init holding a loop
    for step in steps:
        mod = step(mod)
        _index_is_the_built_one(mod["main"], step)
    assert used == [True, True, True, True, False]
    index = index_of(mod["main"])
    assert {"B_init", "B_update", "C_init", "G_update", "F_init", "i_init"} <= set(index.names)
    assert not {"B", "C", "D", "F", "G"} & set(index.blocks)
    # the inits the repeating loops hold, and the one block S holds
    for block, loop in (("C_init", "r"), ("G_init", "r2"), ("F_init", "p")):
        assert index.blocks[block][:len(index.loops[loop])] == index.loops[loop]


RFACTORS = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32"),
         Oi: T.Buffer((4,), "int32"), Ov: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
    with T.block("S"):
        T.reads(A[0:4, 0:8])
        T.writes(C[0:4])
        for i2, k2 in T.grid(4, 8):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i2, k2])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
    for i3, k3 in T.grid(4, 8):
        with T.block("O"):
            vi, vk = T.axis.remap("SR", [i3, k3])
            with T.init():
                Oi[vi] = -1
                Ov[vi] = T.min_value("float32")
            v_Oi: T.int32 = T.Select(Ov[vi] >= A[vi, vk], Oi[vi], vk)
            v_Ov: T.float32 = T.Select(Ov[vi] >= A[vi, vk], Ov[vi], A[vi, vk])
            Oi[vi] = v_Oi
            Ov[vi] = v_Ov
"""


def test_rfactor_derives_the_index_from_the_nests_it_replaces(monkeypatch):
    # rfactor gives the scope block new buffers and puts two nests where the
    # reduction's was: an item of the root (with a shift of an earlier
    # insertion pending), the whole body of block S (a sequence takes its
    # place, and S's realize now mentions the new buffer), a reduction of
    # two values through let statements. Without walking the rest of the
    # scope, the derived index is the built one and every path leads to its
    # loop or block. The first two state it from the nests alone (perfect
    # nests over a block of one store), the third walks the nests
    stated = _spy(monkeypatch, R.reduction, "_rfactor_index")
    used = _spy(monkeypatch, R.reduction, "derive_scope_index")
    mod = IRModule({"main": from_source(RFACTORS)})
    steps = [R.cache_read("B", 0, "local"), R.split("k", [None, 4]), R.rfactor("k_1", 0),
             R.rfactor("k2", 0), R.split("k3", [None, 2]), R.rfactor("k3_0", 0),
             R.decompose_reduction("B_rf", "k_0_1")]
    for step in steps:
        mod = step(mod)
        _index_is_the_built_one(mod["main"], step)
    assert stated == [True, True, False] and used == [True]
    index = index_of(mod["main"])
    assert {"B_rf", "C_rf", "Oi_rf", "Ov_rf", "k2_1", "B_rf_init"} <= set(index.names)
    assert index.blocks["C_rf"][:len(index.blocks["S"])] == index.blocks["S"]
    assert "C_rf" in index.blocks_mentioning(["C_rf"]) and "S" in index.blocks_mentioning(["C_rf"])


HIDDEN = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), X: T.Buffer((8,), "int32"), Idx: T.Buffer((1,), "int32"),
         C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi], X[0:8])
            T.writes(C[vi])
            C[vi] = A[vi] + T.Cast("float32", T.call_extern("int32", "f", X.data))
"""


def test_region_primitives_tell_the_index_what_the_block_mentions_now():
    # hiding the only region of X leaves the block naming X's pointer alone;
    # a region annotated through a load mentions the buffer loaded from
    mod = IRModule({"main": from_source(HIDDEN)})
    hidden = R.unsafe_hide_buffer_access("C", "read", [1])(mod)
    assert index_of(hidden["main"]) == build_index(hidden["main"])
    assert "C" not in index_of(hidden["main"]).mentioned.get("X", ())
    from tirfun.nodes import BufferLoad, IntImm

    idx = mod["main"].buffer_map[mod["main"].params[2]]
    load = BufferLoad(idx, [IntImm("int32", 0)])
    annotated = R.annotate_buffer_access("C", 1, "read", [(load, load + 8)])(mod)
    assert index_of(annotated["main"]) == build_index(annotated["main"])
    assert "C" in index_of(annotated["main"]).mentioned["Idx"]
    back = R.annotate_buffer_access("C", 1, "read", [(0, 8)])(annotated)
    assert index_of(back["main"]) == build_index(back["main"])
