"""Nodes: dtypes, operator building and promotion, node-local rules, modules."""

import pickle

import pytest

from tirfun import tir
from tirfun.errors import NodeError, UnknownNameError
from tirfun.nodes import (
    Add, Block, BlockRealize, Broadcast, Buffer, BufferLoad, BufferRegion, BufferStore, Cast,
    DataType, Evaluate, FloatImm, FloorDiv, FloorMod, For, ForKind, IntImm, IRModule, IterVar,
    Max, Mul, PrimFunc, Ramp, Range, SeqStmt, Sub, Var,
)


@pytest.mark.parametrize("text", ["float32", "int32", "int64", "bool", "float16", "bfloat16",
                                  "uint8", "int8", "float32x8", "boolx4", "handle", "float64"])
def test_dtype_round_trips_its_spelling(text):
    dt = DataType(text)
    assert str(dt) == text and dt == text
    assert DataType(str(dt)) is dt


def test_dtype_parts():
    dt = DataType("float32x8")
    assert (dt.code, dt.bits, dt.lanes) == ("float", 32, 8)
    assert dt.element_of == "float32" and dt.with_lanes(4) == "float32x4"
    assert DataType("bool").is_bool and not DataType("bool").is_integer
    assert DataType("uint1") == "bool"
    assert DataType("int8").min_value() == -128 and DataType("uint8").max_value() == 255


@pytest.mark.parametrize("spelling", ["int8", "int32", "int64x4", "uint1", "uint16", "uint64x2", "bool",
                                      "boolx4", "float32", "float16x8", "bfloat16", "float8_e5m2", "handle",
                                      "void"])
def test_an_index_dtype_is_a_scalar_integer_not_bool(spelling):
    dt = DataType(spelling)
    assert dt.is_index == (dt.is_integer and dt.lanes == 1 and not dt.is_bool)


@pytest.mark.parametrize("bad", ["floatx", "int3", "float8x", "foo", "int32x0", " "])
def test_dtype_rejects_unknown_spellings(bad):
    with pytest.raises(NodeError, match="data type"):
        DataType(bad)


@pytest.mark.parametrize("short, full", [("int", "int32"), ("uint", "uint32"), ("float", "float32"),
                                         ("bfloat", "bfloat16")])
def test_a_type_named_without_its_bits_has_tvms_default(short, full):
    assert DataType(short) == full and str(DataType(short)) == full


def test_the_empty_dtype_is_void_as_tvm_reads_it():
    dt = DataType("")
    assert dt == "void" and dt.is_void and str(dt) == "void"
    assert (dt.bits, dt.lanes) == (0, 1)


def test_literal_takes_the_other_operands_dtype():
    A = Buffer("A", [8], "float16")
    e = A[Var("i")] + 1.0
    assert isinstance(e, Add) and e.b == FloatImm("float16", 1.0)
    x = Var("x", "int64")
    assert (x * 2).b == IntImm("int64", 2)
    assert (3 - x) == Sub(IntImm("int64", 3), x)


def test_mixed_dtypes_promote_with_a_cast():
    i, f = Var("i", "int32"), Var("f", "float32")
    e = i + f
    assert e.a == Cast("float32", i) and e.dtype == "float32"
    w = Var("w", "int64")
    assert (i + w).a == Cast("int64", i)
    assert (Var("h", "float16") * Var("d", "float64")).dtype == "float64"


def test_float_literal_on_integer_expression_promotes_to_float32():
    e = Var("i") + 1.5
    assert e.dtype == "float32" and e.a == Cast("float32", Var("i"))


def test_two_literal_operands_fold_but_others_do_not():
    assert IntImm("int32", 6) * 7 == IntImm("int32", 42)
    assert tir.floordiv(IntImm("int32", -7), 2) == IntImm("int32", -4)
    assert tir.floormod(IntImm("int32", -7), 2) == IntImm("int32", 1)
    assert tir.truncdiv(IntImm("int32", -7), 2) == IntImm("int32", -3)
    assert tir.truncmod(IntImm("int32", -7), 2) == IntImm("int32", -1)
    x = Var("x")
    assert (x + 0) == Add(x, IntImm("int32", 0))  # no algebraic simplification here
    # a fold that would overflow the dtype is left as an expression
    big = IntImm("int32", 2**31 - 1)
    assert isinstance(big + 1, Add)


def test_division_rules():
    with pytest.raises(NodeError, match="ambiguous"):
        Var("x") / 2
    assert isinstance(Var("x") // 2, FloorDiv) and isinstance(Var("x") % 2, FloorMod)
    assert (Var("f", "float32") / 2.0).dtype == "float32"


def test_comparisons_build_bool_nodes_and_eq_is_node_equality():
    x = Var("x")
    c = x < 4
    assert c.dtype == "bool"
    assert x.equal(3).dtype == "bool"
    assert (x == Var("x")) is True and (x == Var("x", "int64")) is False
    with pytest.raises(NodeError, match="truth value"):
        bool(c)


def test_vector_operands_broadcast_scalars():
    r = Ramp(IntImm("int32", 0), IntImm("int32", 1), 4)
    e = r + 1
    assert e.dtype == "int32x4" and e.b == Broadcast(IntImm("int32", 1), 4)
    A = Buffer("A", [16], "float32")
    assert BufferLoad(A, [r]).dtype == "float32x4"


def test_node_local_rules():
    A = Buffer("A", [8, 8], "float32")
    with pytest.raises(NodeError, match="2 dimensions"):
        A[Var("i")]
    with pytest.raises(NodeError, match="cannot store a int32 value"):
        BufferStore(A, IntImm("int32", 1), [0, 0])
    with pytest.raises(NodeError, match="operand dtypes differ"):
        Add(Var("x"), Var("y", "float32"))
    with pytest.raises(NodeError, match="does not fit"):
        IntImm("int8", 300)
    with pytest.raises(NodeError, match="not a valid identifier"):
        Var("not a name")
    with pytest.raises(NodeError, match="unknown thread tag"):
        For(Var("i"), 0, 4, ForKind.THREAD_BINDING, Evaluate(0), thread_binding="warp.x")
    with pytest.raises(NodeError, match="extent"):
        For(Var("i"), 0, IntImm("int64", 4), "serial", Evaluate(0))
    with pytest.raises(NodeError, match="unknown loop kind"):
        For(Var("i"), 0, 4, "sideways", Evaluate(0))
    with pytest.raises(NodeError, match="at least one"):
        SeqStmt([])


def _tutorial_func():
    A, B = Buffer("A", [8]), Buffer("B", [8])
    i, vi = Var("i"), Var("vi")
    block = Block([IterVar(Range(0, 8), vi, "DataPar")], [A[vi:vi + 1]], [B[vi:vi + 1]], "B",
                  BufferStore(B, A[vi] + 1.0, [vi]))
    loop = For(i, 0, 8, "serial", BlockRealize([i], True, block))
    root = BlockRealize([], True, Block([], [], [], "root", loop))
    a, b = Var("a", "handle"), Var("b", "handle")
    return PrimFunc([a, b], root, buffer_map={a: A, b: B},
                    attrs={"global_symbol": "main", "tir.noalias": True})


def test_equal_trees_are_equal_and_hash_alike():
    f, g = _tutorial_func(), _tutorial_func()
    assert f == g and hash(f) == hash(g) and f is not g
    assert pickle.loads(pickle.dumps(f)) == f


def test_pattern_matching_on_nodes():
    x = Var("x")
    match x * 4 + 1:
        case Add(Mul(Var(name), IntImm(_, k)), IntImm(_, c)):
            assert (name, k, c) == ("x", 4, 1)
        case _:
            pytest.fail("the pattern should match")


def test_buffer_slicing_builds_regions():
    A = Buffer("A", [8, 16])
    r = A[Var("i"), 0:16]
    assert isinstance(r, BufferRegion)
    assert r.region[1] == Range(0, 16) and r.region[0].extent == IntImm("int32", 1)
    assert BufferRegion.full(A).region[1] == Range(0, 16)


def test_prim_func_attrs_and_module_mapping():
    f = _tutorial_func()
    g = f.with_attr("tir.is_scheduled", True)
    assert g.attrs["tir.is_scheduled"] is True and "tir.is_scheduled" not in f.attrs
    mod = IRModule({"main": f})
    assert mod["main"] is f and len(mod) == 1 and list(mod) == ["main"]
    mod2 = mod.with_function("other", g)
    assert list(mod2) == ["main", "other"] and len(mod) == 1
    with pytest.raises(UnknownNameError, match="no function 'missing'"):
        mod2["missing"]
    with pytest.raises(NodeError, match="expected a PrimFunc"):
        IRModule({"main": 3})
    # with_function checks what it binds, as the constructor checks every binding
    assert mod2 == IRModule({"main": f, "other": g}) and hash(mod2) == hash(IRModule({"main": f, "other": g}))
    with pytest.raises(NodeError, match="function 'x' is a int, expected a PrimFunc"):
        mod.with_function("x", 3)
    with pytest.raises(NodeError, match="names that are identifiers, got 'a b'"):
        mod.with_function("a b", f)


def test_tir_namespace_helpers():
    x, y = Var("x", "float32"), Var("y", "float32")
    assert tir.exp(x).op == "tir.exp" and tir.exp(x).dtype == "float32"
    assert tir.isnan(x).dtype == "bool"
    assert tir.pow(x, 2).args[1] == FloatImm("float32", 2.0)
    assert tir.if_then_else(x < y, x, 0.0).op == "tir.if_then_else"
    assert tir.call_extern("float32", "expf", x).args[0].value == "expf"
    assert isinstance(tir.max(Var("i"), 3), Max)
    assert tir.all(Var("i") < 3, Var("i") > 0).dtype == "bool"
    with pytest.raises(NodeError, match="floating-point"):
        tir.exp(Var("i"))
    buf = tir.decl_buffer((4, 4), "int8", "C", scope="shared")
    assert buf.scope() == "shared" and buf.dtype == "int8"
    for name in tir.MATH_INTRINSICS:
        assert callable(getattr(tir, name)), name


def test_attribute_constants_are_held_as_the_python_values_they_print_as():
    f = _tutorial_func().with_attr({"k": IntImm("int32", 3), "flag": IntImm("bool", 1),
                                    "wide": IntImm("int64", 3)})
    assert f.attrs["k"] == 3 and type(f.attrs["k"]) is int
    assert f.attrs["flag"] is True
    assert f.attrs["wide"] == IntImm("int64", 3)  # spelled T.int64(3): stays a node


def test_module_function_names_must_be_identifiers():
    with pytest.raises(NodeError, match="identifiers"):
        IRModule({"class": _tutorial_func()})
    with pytest.raises(NodeError, match="identifiers"):
        IRModule({"my-func": _tutorial_func()})


def test_with_fields_replaces_a_field_named_node():
    # AttrStmt's first field is ``node``, the name with_fields gives the
    # record it rebuilds: the record is positional only
    from tirfun.nodes import AttrStmt, Evaluate, IntImm, StringImm
    from tirfun.nodes.base import with_fields

    stmt = AttrStmt(StringImm("a"), "pragma_x", IntImm("int32", 1), Evaluate(IntImm("int32", 0)))
    new = with_fields(stmt, node=StringImm("b"))
    assert new.node == StringImm("b") and new.attr_key == "pragma_x" and stmt.node == StringImm("a")


def test_a_buffer_given_where_a_list_is_expected_is_an_error_not_a_hang():
    # indexing a buffer builds a load for any index, so Python's fallback
    # iteration through __getitem__ would run forever
    from tirfun.nodes import Buffer, BufferRegion, BufferStore, FloatImm
    from tirfun.nodes.base import to_pvector
    from tirfun.nodes.expr import to_expr_vector

    buf = Buffer("A", [4, 4], "float32")
    for attempt in (lambda: list(buf), lambda: to_pvector(buf), lambda: to_expr_vector(buf),
                    lambda: BufferRegion(buf, buf), lambda: BufferStore(buf, FloatImm("float32", 1.0), buf)):
        with pytest.raises(NodeError, match="buffer A is not a sequence: index it"):
            attempt()
    # indexing and slicing are as before
    assert buf[1, 2].indices[1].value == 2
    assert len(buf[0:2, 1].region) == 2
