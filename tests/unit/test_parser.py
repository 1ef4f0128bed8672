"""The TVMScript parser: every construct builds the nodes TVMScript means.

Expected trees are built independently with the node constructors; printed
forms are compared through parse -> print -> parse round trips.
"""

from __future__ import annotations

import linecache
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tirfun
from tirfun.errors import ParseError
from tirfun.nodes import (
    EQ, LT, Add, Allocate, And, AssertStmt, AttrStmt, Block, BlockRealize, Broadcast, Buffer,
    BufferLoad, BufferRegion, BufferStore, Call, Cast, DeclBuffer, Div, Evaluate, FloatImm,
    FloorDiv, FloorMod, For, ForKind, IfThenElse, IntImm, IRModule, IterVar, IterVarType, Let,
    LetStmt, MatchBufferRegion, Max, Min, Mod, Mul, Not, PrimFunc, Ramp, Range, Select,
    SeqStmt, StringImm, Var,
)
from tirfun.script import from_source
from tirfun.script import ir as I
from tirfun.script import tir as T
from tirfun.tir import op

F32 = "float32"


def parse(body: str, params: str = 'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")',
          decorator: str = "@T.prim_func", name: str = "f", check: bool = True) -> PrimFunc:
    text = f"{decorator}\ndef {name}({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return from_source(text, check_well_formed=check)


def param_buffers(func: PrimFunc) -> list[Buffer]:
    return [func.buffer_map[p] for p in func.params]


def i32(v: int) -> IntImm:
    return IntImm("int32", v)


def true() -> IntImm:
    return IntImm("bool", 1)


def root_body(func: PrimFunc):
    """The body of the implicit root block."""
    assert isinstance(func.body, BlockRealize) and func.body.block.name_hint == "root"
    return func.body.block.body


# --------------------------------------------------------------------------
# the tutorial module

@I.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0


def tutorial_expected() -> IRModule:
    a, b = Var("a", "handle"), Var("b", "handle")
    A, B = Buffer("A", [8], F32), Buffer("B", [8], F32)
    i, vi = Var("i"), Var("vi")
    block = Block([IterVar(Range(0, 8), vi, "DataPar")],
                  [BufferRegion(A, [Range(vi, 1)])], [BufferRegion(B, [Range(vi, 1)])], "B",
                  BufferStore(B, Add(BufferLoad(A, [vi]), FloatImm(F32, 1.0)), [vi]))
    loop = For(i, 0, 8, ForKind.SERIAL, BlockRealize([i], true(), block))
    root = BlockRealize([], true(), Block([], [], [], "root", loop))
    func = PrimFunc([a, b], root, None, {a: A, b: B}, {"global_symbol": "main", "tir.noalias": True})
    return IRModule({"main": func})


def test_tutorial_module_parses_to_the_expected_tree():
    assert MyModule == tutorial_expected()


TUTORIAL_TEXT = '''
from tvm.script import tir as T

@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0
'''


def test_from_source_gives_the_same_module_as_the_decorators():
    assert from_source("import tvm\n" + TUTORIAL_TEXT) == tutorial_expected()


def test_tutorial_round_trips_through_the_printer():
    text = MyModule.script()
    again = from_source(text)
    assert tirfun.structural_equal(again, MyModule)
    assert again.script() == text


# --------------------------------------------------------------------------
# parameters and function level


def test_buffer_parameters_get_handle_variables():
    f = parse("T.evaluate(0)")
    A, B = param_buffers(f)
    assert [p.name for p in f.params] == ["A_handle", "B_handle"]
    assert all(p.dtype == "handle" for p in f.params)
    assert A == Buffer("A", [8], F32) and B == Buffer("B", [8], F32)


def test_scalar_parameters_and_symbolic_shapes():
    f = parse("""
        k = T.int32()
        A = T.match_buffer(a, (n, k), "float16")
        B = T.match_buffer(b, (m,), "int8")
        T.evaluate(0)
    """, params="a: T.handle, b: T.handle, n: T.int32, m: T.int64")
    a, b, n, m = f.params
    assert (n, m) == (Var("n", "int32"), Var("m", "int64"))
    assert f.buffer_map[a] == Buffer("A", [n, Var("k", "int32")], "float16")
    assert f.buffer_map[b] == Buffer("B", [m], "int8")
    assert f.body == Evaluate(i32(0))


def test_buffer_keyword_arguments():
    f = parse("""
        C = T.alloc_buffer((4, 4), "float16", scope="shared", align=128, offset_factor=1, elem_offset=0)
        T.evaluate(0)
    """)
    (C,) = f.body.block.alloc_buffers
    assert C == Buffer("C", [4, 4], "float16", storage_scope="shared", data_alignment=128,
                       offset_factor=1, elem_offset=i32(0))
    # omitted keywords give tirfun's defaults
    assert parse("D = T.alloc_buffer((4,))\nT.evaluate(0)").body.block.alloc_buffers[0] == Buffer("D", [4])


def test_function_attributes_and_privacy():
    f = parse("T.func_attr({'tir.noalias': T.bool(True), 'n': 3, 'name': 'x'})\nT.evaluate(0)")
    assert dict(f.attrs) == {"tir.noalias": True, "n": 3, "name": "x", "global_symbol": "f"}
    g = parse("T.evaluate(0)", decorator="@T.prim_func(private=True)")
    assert "global_symbol" not in g.attrs
    h = parse("T.func_attr({'global_symbol': 'other'})\nT.evaluate(0)")
    assert h.attrs["global_symbol"] == "other"


def test_return_annotation():
    assert from_source("@T.prim_func\ndef f() -> None:\n    T.evaluate(0)\n").ret_type is None
    g = from_source("@T.prim_func\ndef g(n: T.int32) -> T.int32:\n    return n\n")
    assert g.ret_type == "int32"
    assert g.body == Evaluate(op.ret(Var("n")))


# --------------------------------------------------------------------------
# loops


def test_loop_kinds_bounds_and_annotations():
    f = parse("""
        for i in range(2, 8):
            for j in T.serial(4, annotations={"k": 1}):
                for p in T.parallel(2):
                    for v in T.vectorized(4):
                        for u in T.unroll(1, 3):
                            for t in T.thread_binding(0, 4, thread="threadIdx.x"):
                                A[i] = T.float32(0)
    """, params='A: T.Buffer((8,), "float32")')
    loops = []
    s = f.body
    while isinstance(s, For):
        loops.append(s)
        s = s.body
    assert [(l.loop_var.name, l.min, l.extent, l.kind, l.thread_binding) for l in loops] == [
        ("i", i32(2), i32(6), ForKind.SERIAL, None),
        ("j", i32(0), i32(4), ForKind.SERIAL, None),
        ("p", i32(0), i32(2), ForKind.PARALLEL, None),
        ("v", i32(0), i32(4), ForKind.VECTORIZED, None),
        ("u", i32(1), i32(2), ForKind.UNROLLED, None),
        ("t", i32(0), i32(4), ForKind.THREAD_BINDING, "threadIdx.x"),
    ]
    assert dict(loops[1].annotations) == {"k": 1}


def test_thread_binding_short_forms_and_symbolic_extents():
    f = parse("""
        for b in T.thread_binding(n, "blockIdx.x"):
            for t in T.thread_binding(8, thread="threadIdx.y"):
                for k in range(m, n):
                    T.evaluate(k)
    """, params="n: T.int32, m: T.int32")
    n, m = f.params
    outer = f.body
    assert (outer.extent, outer.thread_binding) == (n, "blockIdx.x")
    assert (outer.body.extent, outer.body.thread_binding) == (i32(8), "threadIdx.y")
    inner = outer.body.body
    assert (inner.min, inner.extent) == (m, n - m)


def test_grid_builds_a_nest_and_int64_extents_give_int64_loops():
    f = parse("""
        for i, j in T.grid(2, T.int64(3)):
            T.evaluate(0)
    """)
    assert f.body.loop_var == Var("i", "int32") and f.body.extent == i32(2)
    inner = f.body.body
    assert inner.loop_var == Var("j", "int64") and inner.extent == IntImm("int64", 3)


# --------------------------------------------------------------------------
# blocks


def test_block_axes_remap_and_explicit_regions():
    f = parse("""
        for i, j, k in T.grid(8, 8, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                vk = T.axis.reduce(4, k)
                vs = T.axis.S((2, 6), k + 2)
                vr = T.axis.R(T.int64(4), T.int64(0))
                vo = T.axis.opaque(8, i)
                vq = T.axis.scan(8, j)
                T.where(i < 7)
                T.reads(A[vi, 0:4], B[vk])
                T.writes([A[vi, vj]])
                T.block_attr({"meta": True})
                A[vi, vj] = B[vk]
    """, params='A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")')
    A, B = param_buffers(f)
    realize = root_body(f).body.body.body
    block = realize.block
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vj, vk, vs = Var("vi"), Var("vj"), Var("vk"), Var("vs")
    vr, vo, vq = Var("vr", "int64"), Var("vo"), Var("vq")
    assert list(block.iter_vars) == [
        IterVar(Range(0, 8), vi, IterVarType.DataPar), IterVar(Range(0, 8), vj, IterVarType.DataPar),
        IterVar(Range(0, 4), vk, IterVarType.CommReduce), IterVar(Range(2, 4), vs, IterVarType.DataPar),
        IterVar(Range(IntImm("int64", 0), IntImm("int64", 4)), vr, IterVarType.CommReduce),
        IterVar(Range(0, 8), vo, IterVarType.Opaque), IterVar(Range(0, 8), vq, IterVarType.Ordered),
    ]
    assert list(realize.iter_values) == [i, j, k, k + 2, IntImm("int64", 0), i, j]
    assert realize.predicate == LT(i, i32(7))
    assert list(block.reads) == [BufferRegion(A, [Range(vi, 1), Range(0, 4)]), BufferRegion(B, [Range(vk, 1)])]
    assert list(block.writes) == [BufferRegion(A, [Range(vi, 1), Range(vj, 1)])]
    assert dict(block.annotations) == {"meta": True}


def test_init_alloc_buffer_and_sblock():
    f = parse("""
        for i, k in T.grid(8, 8):
            with T.sblock("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                S = T.alloc_buffer((1,), "float32", scope="local")
                with T.init():
                    B[vi] = T.float32(0)
                S[0] = A[vk]
                B[vi] = B[vi] + S[0]
    """)
    A, B = param_buffers(f)
    block = root_body(f).body.body.block
    vi, vk = Var("vi"), Var("vk")
    S = Buffer("S", [1], F32, storage_scope="local")
    assert block.name_hint == "sum"
    assert list(block.alloc_buffers) == [S]
    assert block.init == BufferStore(B, FloatImm(F32, 0.0), [vi])
    assert block.body == SeqStmt([BufferStore(S, BufferLoad(A, [vk]), [i32(0)]),
                                  BufferStore(B, BufferLoad(B, [vi]) + BufferLoad(S, [i32(0)]), [vi])])


def test_match_buffer_in_block_and_no_realize():
    f = parse("""
        for i in range(2):
            with T.block("tile"):
                vi = T.axis.spatial(2, i)
                T.reads([])
                T.writes([])
                Av = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,))
                Aw = T.match_buffer(A[vi * 4:vi * 4 + 2])
                T.evaluate(0)
        with T.block("opaque", no_realize=True):
            T.evaluate(0)
    """, check=False)  # the verifier wants views listed in T.reads; here only the parse matters
    A = param_buffers(f)[0]
    vi = Var("vi")
    first, second = root_body(f).seq
    tile = first.body.block
    assert list(tile.match_buffers) == [
        MatchBufferRegion(Buffer("Av", [4], F32), BufferRegion(A, [Range(vi * 4, 4)])),
        MatchBufferRegion(Buffer("Aw", [2], F32), BufferRegion(A, [Range(vi * 4, 2)])),
    ]
    assert isinstance(second, Block) and second.name_hint == "opaque"


def test_implicit_root_block_rules():
    with_alloc = parse("C = T.alloc_buffer((8,))\nC[0] = A[0]\nB[0] = C[0]")
    assert with_alloc.body.block.name_hint == "root"
    assert list(with_alloc.body.block.alloc_buffers) == [Buffer("C", [8], F32)]
    assert list(with_alloc.body.block.reads) == [] and list(with_alloc.body.block.writes) == []
    no_blocks = parse("B[0] = A[0]")
    assert isinstance(no_blocks.body, BufferStore)
    # a single block without iteration variables is the root itself: kept,
    # and (as in TVM) its regions are not inferred
    single = parse('with T.block("only"):\n    B[0] = A[0]')
    assert single.body.block.name_hint == "only"
    assert list(single.body.block.reads) == [] and list(single.body.block.writes) == []


# --------------------------------------------------------------------------
# statements


def test_if_else_and_conditions_known_while_parsing():
    f = parse("""
        for i in range(8):
            if i < 4 and not i == 2:
                B[i] = A[i]
            else:
                B[i] = T.float32(0)
            if FLAG:
                B[i] = A[0]
            else:
                B[i] = A[1]
    """.replace("FLAG", "1 > 2"))
    A, B = param_buffers(f)
    i = Var("i")
    cond = And(LT(i, i32(4)), Not(EQ(i, i32(2))))
    assert f.body.body == SeqStmt([
        IfThenElse(cond, BufferStore(B, BufferLoad(A, [i]), [i]), BufferStore(B, FloatImm(F32, 0), [i])),
        BufferStore(B, BufferLoad(A, [i32(1)]), [i]),
    ])


def test_lets_in_every_spelling():
    f = parse("""
        x: T.float32 = A[0] * 2.0
        y = x + T.float32(1)
        z = T.int64()
        with T.LetStmt(T.int32(3)) as w:
            B[w] = T.Let(y + T.Cast("float32", z), where={z: T.int64(2)})
    """)
    A, B = param_buffers(f)
    x, y, z, w = Var("x", F32), Var("y", F32), Var("z", "int64"), Var("w")
    inner = BufferStore(B, Let(z, IntImm("int64", 2), Add(y, Cast(F32, z))), [w])
    expected = LetStmt(x, BufferLoad(A, [i32(0)]) * FloatImm(F32, 2.0),
                       LetStmt(y, x + FloatImm(F32, 1.0), LetStmt(w, i32(3), inner)))
    assert f.body == expected


def test_assert_return_evaluate_and_aug_assign():
    f = parse("""
        assert n > 0, "n must be positive"
        B[0] += A[0]
        T.evaluate(T.call_extern("int32", "puts", "hi"))
        return n
    """, params='A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), n: T.int32')
    A, B = [f.buffer_map[p] for p in f.params[:2]]
    n = f.params[2]
    assert isinstance(f.body, AssertStmt) and f.body.message == StringImm("n must be positive")
    assert f.body.body == SeqStmt([
        BufferStore(B, BufferLoad(B, [i32(0)]) + BufferLoad(A, [i32(0)]), [i32(0)]),
        Evaluate(Call("int32", "tir.call_extern", [StringImm("puts"), StringImm("hi")])),
        Evaluate(op.ret(n)),
    ])


def test_lowered_forms():
    f = parse("""
        bx = T.launch_thread("blockIdx.x", 2)
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 4)
        buf = T.allocate([4], "float32", "shared")
        S = T.decl_buffer((4,), data=buf, scope="shared")
        L = T.decl_buffer((1,), "float32", scope="local")
        with T.attr(S, "storage_alignment", 16):
            S[tx] = A[bx * 4 + tx]
        T.evaluate(T.address_of(S[0]))
        L[0] = S[tx]
    """)
    A = param_buffers(f)[0]
    bx, tx, buf = Var("bx"), Var("tx"), Var("buf", "handle")
    S = Buffer("S", [4], F32, storage_scope="shared", data=buf)
    L = Buffer("L", [1], F32, storage_scope="local", data=Var("L_data", "handle"))
    body = SeqStmt([
        AttrStmt(S, "storage_alignment", i32(16), BufferStore(S, BufferLoad(A, [bx * 4 + tx]), [tx])),
        Evaluate(op.address_of(BufferLoad(S, [i32(0)]))),
        BufferStore(L, BufferLoad(S, [tx]), [i32(0)]),
    ])
    lowered = Allocate(L.data, F32, [1], true(), DeclBuffer(L, body), scope="local")
    lowered = Allocate(buf, F32, [4], true(), DeclBuffer(S, lowered), scope="shared")
    lowered = AttrStmt(IterVar(Range(0, 4), tx, IterVarType.ThreadIndex, "threadIdx.x"),
                       "thread_extent", i32(4), lowered)
    lowered = AttrStmt(IterVar(Range(0, 2), bx, IterVarType.ThreadIndex, "blockIdx.x"),
                       "thread_extent", i32(2), lowered)
    assert f.body == lowered


# --------------------------------------------------------------------------
# expressions


def test_operators_follow_tvmscript():
    f = parse("""
        for i in range(8):
            B[i] = T.Cast("float32", (i // 3 + i % 3) * 2 - T.truncdiv(i, 2) + T.truncmod(i, 5))
            B[i] = T.Select(i < 4, A[i], T.float32(0)) + T.if_then_else(i >= 2, A[i], 1.0)
            B[i] = T.min(A[i], 0.5) + T.max(A[i], T.float32(0.5)) - A[i] / 2.0
            B[i] = T.Cast("float32", T.Div(i, 3) + T.FloorDiv(6, 3) + T.Add(1, 2))
    """)
    A, B = param_buffers(f)
    i = Var("i")
    seq = f.body.body.seq
    assert seq[0].value == Cast(F32, Add(Sub_(Mul(Add(FloorDiv(i, i32(3)), FloorMod(i, i32(3))), i32(2)),
                                              Div(i, i32(2))), Mod(i, i32(5))))
    ai = BufferLoad(A, [i])
    assert seq[1].value == Add(Select(LT(i, i32(4)), ai, FloatImm(F32, 0)),
                               op.if_then_else(i >= 2, ai, FloatImm(F32, 1.0)))
    assert seq[2].value == (Min(ai, FloatImm(F32, 0.5)) + Max(ai, FloatImm(F32, 0.5))) - ai / FloatImm(F32, 2.0)
    # explicit node constructors are kept as written, never folded
    assert seq[3].value == Cast(F32, Add(Add(Div(i, i32(3)), FloorDiv(i32(6), i32(3))), Add(i32(1), i32(2))))


def Sub_(a, b):
    from tirfun.nodes import Sub

    return Sub(a, b)


def test_comparisons_are_built_as_written():
    f = parse("T.evaluate(T.int64(1) < 2)\nT.evaluate(n == 3)", params="n: T.int32")
    first, second = f.body.seq
    assert first.value == LT(IntImm("int64", 1), IntImm("int64", 2))
    assert second.value == EQ(Var("n"), i32(3))


@pytest.mark.parametrize("name", op.MATH_INTRINSICS)
def test_every_math_intrinsic(name):
    if name in op.INT_UNARY:
        f = parse(f"T.evaluate(T.{name}(n))", params="n: T.int32")
        arg = [Var("n")]
    elif name in op.FLOAT_BINARY:
        f = parse(f"T.evaluate(T.{name}(x, x))", params="x: T.float32")
        arg = [Var("x", F32)] * 2
    elif name == "ldexp":
        f = parse("T.evaluate(T.ldexp(x, n))", params="x: T.float32, n: T.int32")
        arg = [Var("x", F32), Var("n")]
    else:
        f = parse(f"T.evaluate(T.{name}(x))", params="x: T.float32")
        arg = [Var("x", F32)]
    assert f.body == Evaluate(getattr(op, name)(*arg))


def test_typed_literals():
    f = parse("""
        T.evaluate(T.bool(True))
        T.evaluate(T.float32(1))
        T.evaluate(T.int64(7))
        T.evaluate(T.uint8(255))
        T.evaluate(T.float16("inf") > T.float16(0))
        T.evaluate(T.float32(n))
    """, params="n: T.int32")
    values = [s.value for s in f.body.seq]
    assert values[:4] == [true(), FloatImm(F32, 1.0), IntImm("int64", 7), IntImm("uint8", 255)]
    assert values[4].a == FloatImm("float16", float("inf"))
    assert values[5] == Cast(F32, Var("n"))


def test_vector_loads_stores_and_ramps():
    f = parse("""
        B[0:4] = A[4:8] + T.Broadcast(T.float32(1), 4)
        B[T.Ramp(0, 2, 4)] = A[0:8:2]
    """)
    A, B = param_buffers(f)
    first, second = f.body.seq
    assert first == BufferStore(B, Add(BufferLoad(A, [Ramp(i32(4), i32(1), 4)]),
                                       Broadcast(FloatImm(F32, 1.0), 4)), [Ramp(i32(0), i32(1), 4)])
    assert second == BufferStore(B, BufferLoad(A, [Ramp(i32(0), i32(2), 4)]), [Ramp(i32(0), i32(2), 4)])


def test_a_float_literal_stored_into_ints_is_cast_toward_zero_as_tvm_does():
    f = parse("B[0] = 1.5\nB[1] = -2.75\nC[0] = 7.9\nD[0] = 0.5",
              'B: T.Buffer((2,), "int32"), C: T.Buffer((1,), "uint8"), D: T.Buffer((1,), "bool")')
    B, C, D = param_buffers(f)
    assert list(f.body.seq) == [BufferStore(B, IntImm("int32", 1), [i32(0)]),
                                BufferStore(B, IntImm("int32", -2), [i32(1)]),
                                BufferStore(C, IntImm("uint8", 7), [i32(0)]),
                                BufferStore(D, IntImm("bool", 0), [i32(0)])]
    b, c, d = np.zeros(2, "int32"), np.zeros(1, "uint8"), np.ones(1, "bool")
    tirfun.interp.run(f, b, c, d)
    assert b.tolist() == [1, -2] and c.tolist() == [7] and d.tolist() == [False]


def test_a_negative_float_literal_is_no_unsigned_value():
    with pytest.raises(ParseError, match="cannot store the float literal -1.5 into buffer C of uint8"):
        parse("C[0] = -1.5", 'C: T.Buffer((1,), "uint8")')


def test_outer_values_are_used_as_values():
    n, scale, dtype = 4, 0.5, "float16"

    @T.prim_func
    def f(A: T.Buffer((n,), dtype)):
        for i in range(n):
            A[i] = A[i] * T.Cast(dtype, scale)

    A = param_buffers(f)[0]
    assert A == Buffer("A", [n], dtype)
    store = f.body.body
    assert store.value == BufferLoad(A, [Var("i")]) * Cast(dtype, FloatImm(F32, scale))


# --------------------------------------------------------------------------
# names


def test_names_bound_inside_differ_from_outside_variables():
    n = Var("n")

    @T.prim_func
    def f(A: T.Buffer((n,), "float32")):
        for n in range(4):
            A[n] = T.float32(0)

    assert f.body.loop_var == Var("n_1")
    assert param_buffers(f)[0].shape[0] is n


def test_reused_names_are_renamed_deterministically():
    f = parse("""
        for i in range(8):
            with T.block("x"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i_1 in range(8):
            with T.block("z"):
                vi = T.axis.spatial(8, i_1)
                B[vi] = A[vi]
    """)
    loops = list(root_body(f).seq)
    assert [l.loop_var.name for l in loops] == ["i", "i_2", "i_1"]
    assert [l.body.block.iter_vars[0].var.name for l in loops] == ["vi", "vi_1", "vi_2"]
    # the choice is a function of the source only
    assert f == parse("""
        for i in range(8):
            with T.block("x"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i in range(8):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i_1 in range(8):
            with T.block("z"):
                vi = T.axis.spatial(8, i_1)
                B[vi] = A[vi]
    """)


def test_renamed_names_round_trip():
    f = parse("""
        for i in range(4):
            B[i] = A[i]
        for i in range(4):
            B[i + 4] = A[i + 4]
    """)
    text = f.script()
    assert from_source(text) == f


# --------------------------------------------------------------------------
# decorator entry points


def test_exec_source_registered_with_linecache():
    code = textwrap.dedent('''
        from tirfun.script import tir as T

        @T.prim_func(private=True)
        def g(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(SCALE)
    ''')
    filename = "<tirfun-test-exec>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        namespace = {"SCALE": 3}
        exec(compile(code, filename, "exec"), namespace)
    finally:
        del linecache.cache[filename]
    g = namespace["g"]
    assert "global_symbol" not in g.attrs
    assert g.body == BufferStore(param_buffers(g)[0], FloatImm(F32, 3.0), [i32(0)])


def test_prim_func_keyword_forms():
    @T.prim_func(check_well_formed=False)
    def f(A: T.Buffer((2,), "int32")):
        A[0] = 1

    @T.prim_func(private=True, check_well_formed=True)
    def g(A: T.Buffer((2,), "int32")):
        A[0] = 1

    assert f.attrs["global_symbol"] == "f" and "global_symbol" not in g.attrs
    assert f.body == g.body


def test_ir_module_from_source_with_several_functions():
    mod = from_source('''
from tirfun.script import ir as I
from tirfun.script import tir as T

@I.ir_module
class Module:
    """Two functions."""
    @T.prim_func
    def first(A: T.Buffer((2,), "float32")):
        A[0] = T.float32(1)

    @T.prim_func(private=True)
    def second(A: T.Buffer((2,), "float32")):
        A[1] = T.float32(2)
''')
    assert list(mod) == ["first", "second"]
    assert mod["first"].attrs["global_symbol"] == "first"
    assert "global_symbol" not in mod["second"].attrs


def test_from_source_runs_no_python(tmp_path):
    target = tmp_path / "touched"
    source = f'''
@T.prim_func
def f(A: T.Buffer((2,), "float32")):
    A[0] = open({str(target)!r}, "w")
'''
    with pytest.raises(ParseError, match="undefined name 'open'"):
        from_source(source)
    with pytest.raises(ParseError, match="undefined name '__import__'"):
        from_source('@T.prim_func\ndef f():\n    T.evaluate(__import__("os").getpid())\n')
    assert not target.exists()


# --------------------------------------------------------------------------
# the T namespace from Python


def test_T_helpers_from_python():
    assert T.int32(5) == i32(5)
    assert T.float32(Var("n")) == Cast(F32, Var("n"))
    assert T.exp(Var("x", F32)) == op.exp(Var("x", F32))
    assert T.Buffer((4, 4), "int8") == Buffer("buffer", [4, 4], "int8")
    assert isinstance(T.int32(), Var)
    with pytest.raises(ParseError, match="T.block can only be used inside a @T.prim_func"):
        T.block("x")
    with pytest.raises(ParseError, match="T.axis.spatial can only be used"):
        T.axis.spatial(4, 0)


def test_T_expression_nodes_from_python_are_the_nodes():
    from tirfun.nodes import Add, Broadcast, IntImm, StringImm

    assert T.StringImm("a\nb") == StringImm("a\nb")
    assert T.IntImm("int64", 3) == IntImm("int64", 3)
    assert T.Broadcast(T.float32(1), 4) == Broadcast(FloatImm(F32, 1.0), 4)
    assert T.Add(T.int32(1), T.int32(2)) == Add(i32(1), i32(2))
    label = T.StringImm("label")

    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        A[0] = T.IntImm("int32", 7) + T.Add(1, 2)
        T.evaluate(label)

    assert f.body[0].value == Add(i32(7), Add(i32(1), i32(2)))
    assert f.body[1].value == label


def test_importing_the_script_package_stays_light():
    code = ("import sys, tirfun.script\n"
            "print(sorted(m for m in sys.modules if m.startswith('tirfun.script.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['tirfun.script.ir', 'tirfun.script.tir']"


# --------------------------------------------------------------------------
# round trips through the printer

ROUND_TRIP_PROGRAMS = [
    '''
@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), "float32")
    B = T.match_buffer(b, (16, 16), "float32")
    C = T.match_buffer(c, (16, 16), "float32")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
''',
    '''
@T.prim_func
def staged(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    S = T.alloc_buffer((16,), scope="shared")
    for io in T.thread_binding(4, thread="blockIdx.x"):
        for ii in T.thread_binding(4, thread="threadIdx.x"):
            with T.block("load"):
                v = T.axis.spatial(16, io * 4 + ii)
                S[v] = A[v]
    for i in T.serial(16, annotations={"pragma_unroll": 1}):
        with T.block("store"):
            v = T.axis.spatial(16, i)
            T.where(i < 15)
            if v % 2 == 0:
                B[v] = T.exp(S[v]) + T.Select(v > 3, S[v], T.float32(1))
            else:
                B[v] = T.max(S[v], T.float32(0))
''',
    '''
@T.prim_func(private=True)
def lowered(A: T.Buffer((64,), "float32"), n: T.int32):
    bx = T.launch_thread("blockIdx.x", 8)
    tx = T.launch_thread("threadIdx.x", 8)
    S = T.decl_buffer((8,), scope="shared")
    S[tx] = A[bx * 8 + tx]
    T.tvm_storage_sync("shared")
    x: T.int32 = bx * 8 + tx
    assert x < n, "bounds"
    A[x] = S[7 - tx] * T.float32(2)
''',
]


@pytest.mark.parametrize("source", ROUND_TRIP_PROGRAMS)
def test_parse_print_parse_round_trip(source):
    first = from_source(source)
    text = first.script()
    second = from_source(text)
    assert tirfun.structural_equal(first, second)
    assert second.script() == text


def test_an_empty_module_parses_and_prints_back():
    from tirfun.nodes import IRModule

    text = IRModule({}).script()
    assert "class Module:\n    pass" in text
    mod = from_source(text)
    assert isinstance(mod, IRModule) and len(mod) == 0 and mod.script() == text
