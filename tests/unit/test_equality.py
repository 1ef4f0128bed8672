"""Structural equality and hashing modulo renaming of bound names."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tirfun import TirfunError
from tirfun.analysis.equality import (
    StructuralMismatch, assert_structural_equal, structural_equal, structural_hash,
)
from tirfun.nodes import (
    Allocate, AttrStmt, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Call,
    DeclBuffer, Evaluate, FloatImm, For, IntImm, IRModule, IterVar, Let, LetStmt, MatchBufferRegion,
    PrimFunc, Range, SeqStmt, StringImm, Var,
)

TRUE = IntImm("bool", 1)


def i32(v):
    return IntImm("int32", v)


# ---------------------------------------------------------------------------
# programs built with every bound name chosen by the caller


BINDERS = dict(a="a", b="b", c="c", A="A", B="B", C="C", i="i", j="j", k="k", vi="vi", vj="vj",
               vk="vk", T="T_buf", t="t", x="x", M="M_view")
BLOCKS = dict(root="root", blk="C", fill="fill")


def names(**over):
    """Every bound name of :func:`matmul` (and its block names), overridable."""
    base = {**BINDERS, **BLOCKS}
    base.update(over)
    return base


def matmul(nm=None, *, const=0.0, dtype="float32", blk_name=None, annotations=None,
           kind="serial", iter_k="CommReduce", init=True, attrs=None):
    """C = A @ B (8x8, reduction over 8) with an intermediate alloc_buffer, a
    match_buffer, a LetStmt and a Let expression: every kind of binder."""
    nm = nm or names()
    a, b, c = Var(nm["a"], "handle"), Var(nm["b"], "handle"), Var(nm["c"], "handle")
    A = Buffer(nm["A"], [8, 8], dtype)
    B = Buffer(nm["B"], [8, 8], dtype)
    C = Buffer(nm["C"], [8, 8], dtype)
    T = Buffer(nm["T"], [8], dtype)
    i, j, k = Var(nm["i"]), Var(nm["j"]), Var(nm["k"])
    vi, vj, vk = Var(nm["vi"]), Var(nm["vj"]), Var(nm["vk"])
    t = Var(nm["t"], dtype)
    x = Var(nm["x"])
    # fill block: T[vi] = const via a match_buffer view
    M = Buffer(nm["M"], [1], dtype)
    fvi = Var(nm["vi"] + "_f")
    fill = Block(
        [IterVar(Range(i32(0), i32(8)), fvi, "DataPar")],
        [], [BufferRegion(T, [Range(fvi, i32(1))])], nm["fill"],
        BufferStore(M, FloatImm(dtype, const), [i32(0)]),
        match_buffers=[MatchBufferRegion(M, BufferRegion(T, [Range(fvi, i32(1))]))])
    body = BufferStore(
        C,
        Let(x, vk, _update(C, A, B, vi, vj, x)),
        [vi, vj])
    body = LetStmt(t, BufferLoad(T, [vk]), SeqStmt([body, Evaluate(t)]))
    mm = Block(
        [IterVar(Range(i32(0), i32(8)), vi, "DataPar"), IterVar(Range(i32(0), i32(8)), vj, "DataPar"),
         IterVar(Range(i32(0), i32(8)), vk, iter_k)],
        [BufferRegion(A, [Range(vi, i32(1)), Range(vk, i32(1))]),
         BufferRegion(B, [Range(vk, i32(1)), Range(vj, i32(1))]),
         BufferRegion(T, [Range(vk, i32(1))])],
        [BufferRegion(C, [Range(vi, i32(1)), Range(vj, i32(1))])],
        blk_name or nm["blk"], body,
        init=BufferStore(C, FloatImm(dtype, 0.0), [vi, vj]) if init else None,
        annotations=annotations or {})
    nest = For(i, i32(0), i32(8), "serial", For(j, i32(0), i32(8), "serial", For(
        k, i32(0), i32(8), "serial", BlockRealize([i, j, k], TRUE, mm))))
    fill_loop = For(Var(nm["i"] + "_0"), i32(0), i32(8), kind,
                    BlockRealize([Var(nm["i"] + "_0")], TRUE, fill))
    root = Block([], [], [], nm["root"], SeqStmt([fill_loop, nest]), alloc_buffers=[T])
    return PrimFunc([a, b, c], BlockRealize([], TRUE, root),
                    buffer_map={a: A, b: B, c: C},
                    attrs=attrs if attrs is not None else {"global_symbol": "main", "tir.noalias": True})


def _update(C, A, B, vi, vj, x):
    """``C[vi, vj] + A[vi, x] * B[x, vj]``; the caller binds ``x`` to ``vk``."""
    return BufferLoad(C, [vi, vj]) + BufferLoad(A, [vi, x]) * BufferLoad(B, [x, vj])


RENAMED = names(a="p", b="q", c="r", A="X", B="Y", C="Z", i="ii", j="jj", k="kk", vi="u", vj="w",
                vk="r_k", T="tmp", t="s", x="y", M="view")


def equal_both_ways(f, g, **kw):
    return structural_equal(f, g, **kw) and structural_equal(g, f, **kw)


# ---------------------------------------------------------------------------
# renaming


def test_renaming_every_kind_of_binder_keeps_equality_and_hash():
    f, g = matmul(), matmul(RENAMED)
    assert f != g  # the names really differ
    assert equal_both_ways(f, g)
    assert_structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)


def test_renaming_in_a_module_and_hash():
    m1 = IRModule({"main": matmul()})
    m2 = IRModule({"main": matmul(RENAMED)})
    assert structural_equal(m1, m2)
    assert structural_hash(m1) == structural_hash(m2)


def test_block_names_count_only_with_names_true():
    # TVM v0.20's Block equality ignores name_hint
    assert structural_equal(matmul(), matmul(blk_name="D"))
    assert structural_hash(matmul()) == structural_hash(matmul(blk_name="D"))
    assert not structural_equal(matmul(), matmul(blk_name="D"), names=True)
    assert structural_hash(matmul(), names=True) != structural_hash(matmul(blk_name="D"), names=True)
    with pytest.raises(StructuralMismatch, match="at main.body.block.body.body.body.block: "
                                                 "'C' vs 'D'|'C' vs 'D'"):
        assert_structural_equal(matmul(), matmul(blk_name="D"), names=True)


def test_inconsistent_renaming_is_detected():
    i, j, p, q = Var("i"), Var("j"), Var("p"), Var("q")
    A = Buffer("A", [8, 8], "float32")
    ha = Var("a", "handle")

    def nest(outer, inner, first, second):
        store = BufferStore(A, FloatImm("float32", 1.0), [first, second])
        return PrimFunc([ha], For(outer, 0, 8, "serial", For(inner, 0, 8, "serial", store)),
                        buffer_map={ha: A})

    f = nest(i, j, i, j)
    assert structural_equal(f, nest(p, q, p, q))
    assert not structural_equal(f, nest(p, q, q, p))  # A[i, j] vs A[j, i]
    assert not structural_equal(f, nest(p, q, p, p))  # two names map to one


def test_swapped_parameters_over_a_shared_body_are_not_equal():
    # the body is the very same object on both sides, but the parameters that
    # bind its variables come in the other order, so the bodies mean different things
    x, y = Var("x"), Var("y")
    A = Buffer("A", [4], "int32")
    ha = Var("a", "handle")
    body = BufferStore(A, x - y, [i32(0)])
    f = PrimFunc([ha, x, y], body, buffer_map={ha: A})
    g = PrimFunc([ha, y, x], body, buffer_map={ha: A})
    assert not structural_equal(f, g)
    assert structural_hash(f) != structural_hash(g)


def test_shared_subtree_under_renamed_loop_is_not_equal():
    # the same load object sits under loops binding different names: on the
    # right it refers to a free i, on the left to the loop variable
    i, j = Var("i"), Var("j")
    A, B = Buffer("A", [8], "float32"), Buffer("B", [8], "float32")
    load = BufferLoad(A, [i])
    left = For(i, 0, 8, "serial", BufferStore(B, load, [i]))
    right = For(j, 0, 8, "serial", BufferStore(B, load, [j]))
    assert not structural_equal(left, right)


def test_identical_object_shortcut_agrees_with_a_copy():
    f = matmul()
    copy = matmul()
    assert f is not copy
    assert structural_equal(f, f) and structural_equal(f, copy)
    assert structural_hash(f) == structural_hash(copy)


def test_sibling_scopes_are_independent_bindings():
    i, a, b = Var("i"), Var("a"), Var("b")
    A = Buffer("A", [8], "int32")

    def two_loops(v1, v2):
        return SeqStmt([For(v1, 0, 8, "serial", BufferStore(A, v1, [v1])),
                        For(v2, 0, 8, "serial", BufferStore(A, v2 + 1, [v2]))])

    assert structural_equal(two_loops(i, i), two_loops(a, b))
    assert structural_hash(two_loops(i, i)) == structural_hash(two_loops(a, b))


def test_size_variables_of_parameter_buffers_are_bound_by_the_declaration():
    def func(n_name, with_param):
        n = Var(n_name)
        A = Buffer("A", [n], "float32")
        ha = Var("a", "handle")
        i = Var("i")
        params = [ha, n] if with_param else [ha]
        body = For(i, 0, n, "serial", BufferStore(A, FloatImm("float32", 0.0), [i]))
        return PrimFunc(params, body, buffer_map={ha: A})

    assert structural_equal(func("n", False), func("m", False))
    assert structural_equal(func("n", True), func("m", True))
    assert structural_hash(func("n", False)) == structural_hash(func("m", False))
    assert not structural_equal(func("n", True), func("m", False))


def test_lowered_binders_allocate_declbuffer_attr():
    def lowered(ptr_name, buf_name, tx_name):
        ptr = Var(ptr_name, "handle")
        buf = Buffer(buf_name, [16], "float32", data=ptr, storage_scope="shared")
        tx = IterVar(Range(i32(0), i32(16)), Var(tx_name), "ThreadIndex", "threadIdx.x")
        store = BufferStore(buf, FloatImm("float32", 2.0), [tx.var])
        return AttrStmt(tx, "thread_extent", i32(16),
                        Allocate(ptr, "float32", [16], TRUE, DeclBuffer(buf, store), scope="shared"))

    assert structural_equal(lowered("p", "S", "tx"), lowered("q", "R", "t0"))
    assert structural_hash(lowered("p", "S", "tx")) == structural_hash(lowered("q", "R", "t0"))
    assert not structural_equal(lowered("p", "S", "tx"),
                                AttrStmt(IterVar(Range(i32(0), i32(16)), Var("tx"), "ThreadIndex",
                                                 "threadIdx.y"), "thread_extent", i32(16),
                                         lowered("p", "S", "tx").body))


def test_a_declared_pointer_nothing_names_equals_no_pointer():
    # the parser gives an allocated buffer a pointer only where ``B.data``
    # names it, so a buffer whose pointer a rewrite stopped naming must equal
    # its printed and parsed copy; a use of the pointer still counts
    def func(data, use=None):
        B = Buffer("B", [4], "float32", data=data)
        body = [BufferStore(B, FloatImm("float32", 1.0), [i32(0)])]
        if use is not None:
            body.append(Evaluate(Call("int32", "tir.call_extern", [StringImm("g"), use])))
        root = Block([], [], [], "root", SeqStmt(body), alloc_buffers=[B])
        return PrimFunc([], BlockRealize([], TRUE, root))

    ptr = Var("B_data", "handle")
    assert structural_equal(func(ptr), func(None))
    assert structural_hash(func(ptr)) == structural_hash(func(None))
    assert structural_equal(func(ptr, ptr), func(Var("p", "handle"), Var("p", "handle")))
    assert not structural_equal(func(ptr, ptr), func(None, ptr))  # bound on one side, free on the other
    assert not structural_equal(func(ptr, ptr), func(ptr, Var("q", "handle")))


def test_let_expression_binder_is_renamed():
    x, y = Var("x"), Var("y")
    assert structural_equal(Let(x, i32(3), x + 1), Let(y, i32(3), y + 1))
    assert not structural_equal(Let(x, i32(3), x + 1), Let(y, i32(3), x + 1))


# ---------------------------------------------------------------------------
# every kind of difference


def _store_func(value=None, dtype="float32", loop_kind="serial", thread=None, ann=None, extent=8,
                 scope="global", order=False):
    i = Var("i")
    A = Buffer("A", [8], dtype, storage_scope=scope)
    ha = Var("a", "handle")
    value = FloatImm(dtype, 1.0) if value is None else value
    stores = [BufferStore(A, value, [i]), BufferStore(A, FloatImm(dtype, 3.0), [i])]
    if order:
        stores.reverse()
    loop = For(i, 0, extent, loop_kind, SeqStmt(stores), thread_binding=thread, annotations=ann or {})
    return PrimFunc([ha], loop, buffer_map={ha: A}, attrs={"global_symbol": "main"})


DIFFERENCES = [
    ("constant", lambda: _store_func(FloatImm("float32", 2.0)), "FloatImm 1.0 vs FloatImm 2.0"),
    ("dtype", lambda: _store_func(dtype="float16"), "float32"),
    ("loop kind", lambda: _store_func(loop_kind="parallel"), "'serial' vs 'parallel'"),
    ("thread", lambda: _store_func(loop_kind="thread_binding", thread="threadIdx.x"), "kind"),
    ("annotation", lambda: _store_func(ann={"pragma_unroll": 1}), "keys"),
    ("extent", lambda: _store_func(extent=4), "IntImm 8 vs IntImm 4"),
    ("scope", lambda: _store_func(scope="shared"), "'global' vs 'shared'"),
    ("order", lambda: _store_func(order=True), "FloatImm 1.0 vs FloatImm 3.0"),
    ("attrs", lambda: _store_func().with_attr("global_symbol", "other"), "'main' vs 'other'"),
]


@pytest.mark.parametrize("label,make,fragment", DIFFERENCES, ids=[d[0] for d in DIFFERENCES])
def test_each_difference_is_detected_and_reported(label, make, fragment):
    f, g = _store_func(), make()
    assert not structural_equal(f, g)
    assert not structural_equal(g, f)
    with pytest.raises(StructuralMismatch) as info:
        assert_structural_equal(f, g)
    assert fragment in str(info.value)


def test_matmul_differences():
    base = matmul()
    variants = {
        "constant": matmul(const=1.0),
        "dtype": matmul(dtype="float64"),
        "block name": matmul(blk_name="D"),
        "annotation": matmul(annotations={"meta": "x"}),
        "iter type": matmul(iter_k="DataPar"),
        "init": matmul(init=False),
        "attrs": matmul(attrs={"global_symbol": "main"}),
        "loop kind": matmul(kind="vectorized"),
    }
    hashes = {structural_hash(base, names=True)}
    for label, other in variants.items():
        assert not structural_equal(base, other, names=True), label
        assert not structural_equal(other, base, names=True), label
        hashes.add(structural_hash(other, names=True))
    assert len(hashes) == len(variants) + 1


def test_annotation_values_keep_their_python_type():
    f1 = _store_func(ann={"k": 1})
    assert not structural_equal(f1, _store_func(ann={"k": True}))
    assert not structural_equal(f1, _store_func(ann={"k": 1.0}))
    assert structural_equal(f1, _store_func(ann={"k": 1}))


def test_float_constants_signed_zero_and_nan():
    nan = FloatImm("float32", math.nan)
    assert structural_equal(nan, FloatImm("float32", math.nan))
    assert structural_hash(nan) == structural_hash(FloatImm("float32", math.nan))
    assert not structural_equal(FloatImm("float32", 0.0), FloatImm("float32", -0.0))
    assert not structural_equal(FloatImm("float32", 1.0), FloatImm("float64", 1.0))


def test_var_dtype_counts_at_the_binding():
    f = PrimFunc([Var("x")], Evaluate(i32(0)))
    g = PrimFunc([Var("y", "int64")], Evaluate(i32(0)))
    with pytest.raises(StructuralMismatch,
                       match=r"at params\[0\]: Var x: int32 vs Var y: int64: bound with different dtypes"):
        assert_structural_equal(f, g)


def test_statement_count_difference():
    A = Buffer("A", [8], "int32")
    s1 = SeqStmt([BufferStore(A, i32(1), [i32(0)])] * 2)
    s2 = SeqStmt([BufferStore(A, i32(1), [i32(0)])] * 3)
    with pytest.raises(StructuralMismatch, match="length 2 vs 3"):
        assert_structural_equal(s1, s2)


def test_buffers_compare_as_definitions():
    assert structural_equal(Buffer("A", [8, 4], "float32"), Buffer("B", [8, 4], "float32"))
    assert not structural_equal(Buffer("A", [8, 4], "float32"), Buffer("A", [4, 8], "float32"))
    assert not structural_equal(Buffer("A", [8], "float32"), Buffer("A", [8], "float32", storage_scope="local"))
    n, m = Var("n"), Var("m")
    assert structural_equal(Buffer("A", [n, n]), Buffer("B", [m, m]))
    assert not structural_equal(Buffer("A", [n, n]), Buffer("B", [m, n]))


def test_a_zero_offset_and_an_offset_factor_of_one_are_the_defaults_spelled_out():
    # TVM's printer and tests write ``elem_offset=0, offset_factor=1`` for a
    # buffer that has neither
    plain = Buffer("A", [8], "float32")
    spelled = Buffer("A", [8], "float32", elem_offset=0, offset_factor=1)
    assert structural_equal(plain, spelled)
    assert structural_hash(plain) == structural_hash(spelled)
    assert not structural_equal(plain, Buffer("A", [8], "float32", elem_offset=4))
    assert not structural_equal(plain, Buffer("A", [8], "float32", offset_factor=4))


def test_undeclared_buffers_pair_by_their_fields_as_tvm_maps_them():
    # TVM's Buffer equality maps the data pointer and shape as definitions
    # and skips the name, so a statement over B equals one over B_global
    # when nothing in either declares them
    i = Var("i")
    A, B = Buffer("A", [8], "int32"), Buffer("B", [8], "int32")

    def store(buf, value=i):
        return For(i, 0, 8, "serial", BufferStore(buf, value, [i]))

    assert structural_equal(store(A), store(B))
    assert structural_equal(store(A), store(B), map_free_vars=True)
    assert structural_hash(store(A)) == structural_hash(store(B))
    # the fields still count
    assert not structural_equal(store(A), store(Buffer("A", [8], "float32"), FloatImm("float32", 0.0)))
    assert not structural_equal(store(A), store(Buffer("A", [8], "int32", storage_scope="local")))
    # and the pairing is one to one, in both directions
    assert structural_equal(SeqStmt([store(A), store(B)]), SeqStmt([store(B), store(A)]))
    assert not structural_equal(SeqStmt([store(A), store(B)]), SeqStmt([store(B), store(B)]))
    assert not structural_equal(SeqStmt([store(A), store(A)]), SeqStmt([store(A), store(B)]))
    with pytest.raises(StructuralMismatch, match="Buffer A vs Buffer B: they refer to different undeclared"):
        assert_structural_equal(SeqStmt([store(A), store(B), store(A)]),
                                SeqStmt([store(A), store(B), store(B)]))
    # the same subtree on both sides means different things once two
    # different buffers pair: B on the left is the right's A
    shared = store(A)
    assert not structural_equal(SeqStmt([store(B), shared]), SeqStmt([store(A), shared]))
    assert structural_equal(SeqStmt([store(B), store(A)]), SeqStmt([store(A), store(B)]))


def test_the_free_variables_of_an_undeclared_buffer_pair_with_it():
    n, m = Var("n"), Var("m")
    i = Var("i")
    A, B = Buffer("A", [n], "int32"), Buffer("B", [m], "int32")

    def store(buf, value):
        return For(i, 0, 8, "serial", BufferStore(buf, value, [i]))

    assert structural_equal(store(A, i), store(B, i))
    # once paired through the buffers, n stands for m in the rest of the tree
    assert structural_equal(store(A, n), store(B, m))
    assert not structural_equal(store(A, m), store(B, n))


# ---------------------------------------------------------------------------
# free variables


def test_free_variables_must_match_unless_mapped():
    x, y = Var("x"), Var("y")
    assert not structural_equal(x + 1, y + 1)
    assert structural_equal(x + 1, y + 1, map_free_vars=True)
    assert structural_hash(x + 1, map_free_vars=True) == structural_hash(y + 1, map_free_vars=True)
    assert structural_hash(x + 1) != structural_hash(y + 1)
    # the mapping is one to one
    assert not structural_equal(x + y, y + y, map_free_vars=True)
    assert not structural_equal(x + x, x + y, map_free_vars=True)
    assert structural_equal(x - y, y - x, map_free_vars=True)
    with pytest.raises(StructuralMismatch, match="map_free_vars=True"):
        assert_structural_equal(x + 1, y + 1)


def test_free_variable_dtypes_count_even_when_mapped():
    assert not structural_equal(Var("x"), Var("y", "int64"), map_free_vars=True)


def test_statements_with_free_loop_variables():
    i, j = Var("i"), Var("j")
    A = Buffer("A", [8], "int32")
    assert not structural_equal(BufferStore(A, i, [i]), BufferStore(A, j, [j]))
    assert structural_equal(BufferStore(A, i, [i]), BufferStore(A, j, [j]), map_free_vars=True)


# ---------------------------------------------------------------------------
# modules


def test_modules_compare_functions_by_name():
    f = matmul()
    assert structural_equal(IRModule({"f": f, "g": f}), IRModule({"g": matmul(RENAMED), "f": f}))
    with pytest.raises(StructuralMismatch, match=r"functions \['f'\] vs \['g'\]"):
        assert_structural_equal(IRModule({"f": f}), IRModule({"g": f}))


def test_module_functions_are_renamed_independently():
    # a name bound in one function says nothing about another function
    f1 = _store_func()
    i2 = Var("k")
    A = Buffer("Q", [8], "float32")
    ha = Var("h", "handle")
    body = For(i2, 0, 8, "serial", SeqStmt([BufferStore(A, FloatImm("float32", 1.0), [i2]),
                                           BufferStore(A, FloatImm("float32", 3.0), [i2])]))
    f2 = PrimFunc([ha], body, buffer_map={ha: A}, attrs={"global_symbol": "main"})
    m1 = IRModule({"f": f1, "g": f1})
    m2 = IRModule({"f": f1, "g": f2})
    assert structural_equal(m1, m2)
    assert structural_hash(m1) == structural_hash(m2)


def test_mismatch_path_names_function_and_fields():
    m1 = IRModule({"main": matmul()})
    m2 = IRModule({"main": matmul(const=2.0)})
    with pytest.raises(StructuralMismatch) as info:
        assert_structural_equal(m1, m2)
    err = info.value
    assert err.path == "main.body.block.body[0].body.block.body.value"
    assert str(err).startswith("structural mismatch at main.body.block.body[0].body.block.body.value: "
                               "FloatImm 0.0 vs FloatImm 2.0")
    assert (err.left, err.right) == (FloatImm("float32", 0.0), FloatImm("float32", 2.0))


def test_mismatch_message_shows_both_sides_as_tvmscript():
    f, g = _store_func(), _store_func(FloatImm("float32", 2.0))
    with pytest.raises(StructuralMismatch) as info:
        assert_structural_equal(f, g)
    text = str(info.value)
    assert "--- left\n" + f.script() in text
    assert "--- right\n" + g.script() in text


def test_mismatch_is_an_assertion_and_a_tirfun_error():
    with pytest.raises(AssertionError):
        assert_structural_equal(i32(1), i32(2))
    with pytest.raises(TirfunError):
        assert_structural_equal(i32(1), i32(2))
    assert assert_structural_equal(i32(1), i32(1)) is None


def test_type_difference_is_reported_with_both_classes():
    x = Var("x")
    with pytest.raises(StructuralMismatch, match=r"at b: IntImm 1 vs Var"):
        assert_structural_equal(x + 1, x + x, map_free_vars=False)
    with pytest.raises(StructuralMismatch, match="<root>: Add .* vs Sub"):
        assert_structural_equal(x + 1, x - 1)


# ---------------------------------------------------------------------------
# deep trees


def _deep_nest(depth, prefix, value):
    A = Buffer("A", [2], "int32")
    ha = Var("a", "handle")
    loops = [Var(f"{prefix}{d}") for d in range(depth)]
    body = BufferStore(A, IntImm("int32", value), [i32(0)])
    for v in reversed(loops):
        body = For(v, 0, 1, "serial", body)
    return PrimFunc([ha], body, buffer_map={ha: A})


def test_thousand_deep_nests_do_not_exhaust_the_recursion_limit():
    f, g, h = _deep_nest(1200, "i", 1), _deep_nest(1200, "j", 1), _deep_nest(1200, "i", 2)
    assert structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)
    assert not structural_equal(f, h)
    assert structural_hash(f) != structural_hash(h)
    with pytest.raises(StructuralMismatch) as info:
        assert_structural_equal(f, h)
    assert info.value.path == "body" + ".body" * 1200 + ".value"


# ---------------------------------------------------------------------------
# properties: random consistent renamings and single changes


_ident = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=4).map(lambda s: "z" + s)


@st.composite
def renamings(draw):
    keys = list(BINDERS)
    fresh = draw(st.lists(_ident, min_size=len(keys), max_size=len(keys), unique=True))
    return names(**dict(zip(keys, fresh)))


@given(renamings())
def test_property_random_renaming_is_equal_with_same_hash(nm):
    f, g = matmul(), matmul(nm)
    assert structural_equal(f, g) and structural_equal(g, f)
    assert structural_hash(f) == structural_hash(g)


@given(renamings(), st.sampled_from(["const", "dtype", "block", "kind"]))
def test_property_renaming_plus_one_change_is_unequal(nm, change):
    kwargs = {"const": dict(const=5.0), "dtype": dict(dtype="float16"),
              "block": dict(blk_name="other"), "kind": dict(kind="unrolled")}[change]
    f, g = matmul(), matmul(nm, **kwargs)
    names = change == "block"  # block names count only when asked for
    assert not structural_equal(f, g, names=names)
    assert not structural_equal(g, f, names=names)


# ---------------------------------------------------------------------------
# parsed TVMScript


MM_RELU = '''
@I.ir_module
class Module:
    @T.prim_func
    def main(a: T.handle, b: T.handle, c: T.handle):
        T.func_attr({{"tir.noalias": True}})
        {A} = T.match_buffer(a, (16, 16), "float32")
        {B} = T.match_buffer(b, (16, 16), "float32")
        {C} = T.match_buffer(c, (16, 16), "float32")
        {Y} = T.alloc_buffer((16, 16), "float32")
        for {i}, {j}, {k} in T.grid(16, 16, 16):
            with T.block("Y"):
                {vi}, {vj}, {vk} = T.axis.remap("SSR", [{i}, {j}, {k}])
                with T.init():
                    {Y}[{vi}, {vj}] = T.float32(0)
                {Y}[{vi}, {vj}] = {Y}[{vi}, {vj}] + {A}[{vi}, {vk}] * {B}[{vk}, {vj}]
        for {i}2, {j}2 in T.grid(16, 16):
            with T.block("C"):
                {vi}2, {vj}2 = T.axis.remap("SS", [{i}2, {j}2])
                {C}[{vi}2, {vj}2] = T.max({Y}[{vi}2, {vj}2], T.float32({zero}))
'''

PARSE_NAMES = dict(A="A", B="B", C="C", Y="Y", i="i", j="j", k="k", vi="vi", vj="vj", vk="vk", zero="0")


def parse(template, **over):
    from tirfun.script import from_source

    return from_source(template.format(**{**PARSE_NAMES, **over}))


def test_parsed_programs_differing_in_bound_names_are_equal():
    m1 = parse(MM_RELU)
    m2 = parse(MM_RELU, A="P", B="Q", C="R", Y="S", i="x", j="y", k="z", vi="u", vj="v", vk="w")
    assert m1 != m2
    assert_structural_equal(m1, m2)
    assert structural_hash(m1) == structural_hash(m2)


def test_print_then_parse_is_structurally_equal():
    from tirfun.script import from_source

    m1 = parse(MM_RELU)
    m2 = from_source(m1.script())
    assert_structural_equal(m1, m2)
    assert structural_hash(m1) == structural_hash(m2)


def test_parsed_constant_change_is_reported_with_path_and_scripts():
    m1, m2 = parse(MM_RELU), parse(MM_RELU, zero="1")
    with pytest.raises(StructuralMismatch) as info:
        assert_structural_equal(m1, m2)
    text = str(info.value)
    assert text.startswith("structural mismatch at main.body.block.body[1].body.body.block.body.value.b: "
                           "FloatImm 0.0 vs FloatImm 1.0\n")
    assert m1.script() in text and m2.script() in text
    assert "T.float32(1.0)" in m2.script()


def test_type_difference_shows_both_expressions_as_tvmscript():
    x = Var("x")
    with pytest.raises(StructuralMismatch) as info:
        assert_structural_equal(x + 1, x - 1)
    assert str(info.value) == ("structural mismatch at <root>: Add x + 1 vs Sub x - 1\n"
                               "--- left\nx + 1\n--- right\nx - 1")
