"""Block read/write regions inferred when T.reads/T.writes are omitted, and
the interval arithmetic behind them.

Each inference case is a pair of programs: one without regions, one with
the regions TVM infers written out; parsing both must give the same
function.
"""

from __future__ import annotations

import itertools
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tirfun.analysis.arith import int_set as ivs
from tirfun.analysis.access import (
    access_regions, detect_access, fill_regions,
)
from tirfun.nodes import (
    Add, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, FloatImm, FloorDiv,
    FloorMod, For, ForKind, IntImm, IterVar, Max, Min, Mul, PrimFunc, Range, SeqStmt, Sub, Var,
)
from tirfun.script import from_source


def parse(params: str, body: str, check: bool = True) -> PrimFunc:
    text = f"@T.prim_func\ndef f({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return from_source(text, check_well_formed=check)


# (parameters, body without regions, the same body with the regions TVM infers)
PAIRS = {
    "reduction with init leaves the output out of the reads": (
        'A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")',
        """
        for i, j, k in T.grid(16, 16, 16):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
        """,
        """
        for i, j, k in T.grid(16, 16, 16):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vj, vk])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
        """),
    "without init the output is read first": (
        'A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")',
        """
        for i, j, k in T.grid(16, 16, 16):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] += A[vi, vk] * B[vj, vk]
        """,
        """
        for i, j, k in T.grid(16, 16, 16):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(C[vi, vj], A[vi, vk], B[vj, vk])
                T.writes(C[vi, vj])
                C[vi, vj] += A[vi, vk] * B[vj, vk]
        """),
    "inner loops are relaxed over their ranges": (
        'A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")',
        """
        for i, j in T.grid(32, 32):
            with T.block("init"):
                vi, vj = T.axis.remap("SS", [i, j])
                for ii, jj in T.grid(4, 4):
                    C[vi * 4 + ii, vj * 4 + jj] = T.float32(0)
            for k in range(32):
                with T.block("update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    for ii, jj, kk in T.grid(4, 4, 4):
                        C[vi * 4 + ii, vj * 4 + jj] = C[vi * 4 + ii, vj * 4 + jj] + A[vi * 4 + ii, vk * 4 + kk] * B[vj * 4 + jj, vk * 4 + kk]
        """,
        """
        for i, j in T.grid(32, 32):
            with T.block("init"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(C[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
                for ii, jj in T.grid(4, 4):
                    C[vi * 4 + ii, vj * 4 + jj] = T.float32(0)
            for k in range(32):
                with T.block("update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(C[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], A[vi * 4:vi * 4 + 4, vk * 4:vk * 4 + 4], B[vj * 4:vj * 4 + 4, vk * 4:vk * 4 + 4])
                    T.writes(C[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
                    for ii, jj, kk in T.grid(4, 4, 4):
                        C[vi * 4 + ii, vj * 4 + jj] = C[vi * 4 + ii, vj * 4 + jj] + A[vi * 4 + ii, vk * 4 + kk] * B[vj * 4 + jj, vk * 4 + kk]
        """),
    "an explicit top block is the root and keeps no regions; only missing lists are inferred": (
        'A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")',
        """
        with T.block("top"):
            for i, j in T.grid(8, 8):
                with T.block("b"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    B[vi, vj] = A[vi, vj] + T.float32(1)
            for i, j in T.grid(8, 8):
                with T.block("c"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1)
        """,
        """
        with T.block("top"):
            for i, j in T.grid(8, 8):
                with T.block("b"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] + T.float32(1)
            for i, j in T.grid(8, 8):
                with T.block("c"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1)
        """),
    "loads inside indices are reads, after their load": (
        'data: T.Buffer((16, 16), "float32"), index: T.Buffer((1,), "int32"), out: T.Buffer((16, 16), "float32")',
        """
        for i, j in T.grid(16, 16):
            with T.block("gather"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = data[vi, index[0]]
        """,
        """
        for i, j in T.grid(16, 16):
            with T.block("gather"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(data[vi, index[0]], index[0])
                T.writes(out[vi, vj])
                out[vi, vj] = data[vi, index[0]]
        """),
    "several accesses of one buffer are merged": (
        'data: T.Buffer((16, 16), "float32"), index: T.Buffer((1,), "int32"), out: T.Buffer((16, 16), "float32")',
        """
        for i, j in T.grid(16, 16):
            with T.block("gather"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = data[index[index[0]], index[0]]
        """,
        """
        for i, j in T.grid(16, 16):
            with T.block("gather"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(data[index[index[0]], index[0]], index[T.min(index[0], 0):T.max(index[0], 0) + 1])
                T.writes(out[vi, vj])
                out[vi, vj] = data[index[index[0]], index[0]]
        """),
    "views count against the viewed buffer": (
        'A: T.Buffer((16, 16), "float32")',
        """
        for i in range(16):
            with T.block("row"):
                vi = T.axis.spatial(16, i)
                A0 = T.match_buffer(A[vi, 0:16], (16,))
                with T.block("cols"):
                    for j in range(16):
                        with T.block("one"):
                            vj = T.axis.spatial(16, j)
                            A1 = T.match_buffer(A0[vj], ())
                            A1[()] = T.float32(1)
        """,
        """
        for i in range(16):
            with T.block("row"):
                vi = T.axis.spatial(16, i)
                T.reads()
                T.writes(A[vi, 0:16])
                A0 = T.match_buffer(A[vi, 0:16], (16,))
                with T.block("cols"):
                    T.reads()
                    T.writes(A0[0:16])
                    for j in range(16):
                        with T.block("one"):
                            vj = T.axis.spatial(16, j)
                            T.reads()
                            T.writes(A0[vj])
                            A1 = T.match_buffer(A0[vj], ())
                            A1[()] = T.float32(1)
        """),
    "buffers declared outside the block are visible, its own are not": (
        'A: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32")',
        """
        B = T.decl_buffer((4,), "int32")
        for i in range(4):
            with T.block("compute"):
                vi = T.axis.remap("S", [i])
                L = T.alloc_buffer((1,), "int32", scope="local")
                L[0] = A[vi] + B[vi]
                C[vi] = L[0]
        """,
        """
        B = T.decl_buffer((4,), "int32")
        for i in range(4):
            with T.block("compute"):
                vi = T.axis.remap("S", [i])
                T.reads(A[vi], B[vi])
                T.writes(C[vi])
                L = T.alloc_buffer((1,), "int32", scope="local")
                L[0] = A[vi] + B[vi]
                C[vi] = L[0]
        """),
    "a condition on a loop variable narrows its range": (
        'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")',
        """
        with T.block("outer"):
            with T.block("branch"):
                for i in range(8):
                    if i < 5:
                        B[i] = A[i] + T.float32(1)
                    else:
                        B[i] = A[i - 1]
            with T.block("select"):
                for i in range(8):
                    C[i] = T.if_then_else(i < 5, A[i], T.float32(0))
        """,
        """
        with T.block("outer"):
            with T.block("branch"):
                T.reads(A[0:7])
                T.writes(B[0:8])
                for i in range(8):
                    if i < 5:
                        B[i] = A[i] + T.float32(1)
                    else:
                        B[i] = A[i - 1]
            with T.block("select"):
                T.reads(A[0:5])
                T.writes(C[0:8])
                for i in range(8):
                    C[i] = T.if_then_else(i < 5, A[i], T.float32(0))
        """),
    "let-bound indices are substituted": (
        'storage: T.Buffer((16, 16, 16), "float32"), seq: T.Buffer((16,), "int32"), hist: T.Buffer((16,), "int32"), out: T.Buffer((16, 16), "float32")',
        """
        for i, s in T.grid(16, 16):
            with T.block("copy"):
                vi, vs = T.axis.remap("SS", [i, s])
                seq_id: T.int32 = seq[vi]
                hist_id: T.int32 = hist[vi]
                out[vi, vs] = storage[seq_id, hist_id, vs]
        """,
        """
        for i, s in T.grid(16, 16):
            with T.block("copy"):
                vi, vs = T.axis.remap("SS", [i, s])
                T.reads(seq[vi], hist[vi], storage[seq[vi], hist[vi], vs])
                T.writes(out[vi, vs])
                seq_id: T.int32 = seq[vi]
                hist_id: T.int32 = hist[vi]
                out[vi, vs] = storage[seq_id, hist_id, vs]
        """),
    "a nested block contributes its regions at its bindings": (
        'A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")',
        """
        for o in range(4):
            with T.block("outer"):
                vo = T.axis.spatial(4, o)
                for j in range(16):
                    with T.block("inner"):
                        vj = T.axis.spatial(64, vo * 16 + j)
                        B[vj] = A[vj] * T.float32(2)
        """,
        """
        for o in range(4):
            with T.block("outer"):
                vo = T.axis.spatial(4, o)
                T.reads(A[vo * 16:vo * 16 + 16])
                T.writes(B[vo * 16:vo * 16 + 16])
                for j in range(16):
                    with T.block("inner"):
                        vj = T.axis.spatial(64, vo * 16 + j)
                        T.reads(A[vj])
                        T.writes(B[vj])
                        B[vj] = A[vj] * T.float32(2)
        """),
    "vector accesses cover their lanes; unknown indices the whole dimension": (
        'A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), I: T.Buffer((16,), "int32")',
        """
        for v in range(4):
            with T.block("vec"):
                vv = T.axis.spatial(4, v)
                B[vv * 4:vv * 4 + 4] = A[vv * 4:vv * 4 + 4]
        for k in range(4):
            with T.block("indirect"):
                vk = T.axis.spatial(4, k)
                for t in range(4):
                    B[vk * 4 + t] = A[I[vk * 4 + t]]
        """,
        """
        for v in range(4):
            with T.block("vec"):
                vv = T.axis.spatial(4, v)
                T.reads(A[vv * 4:vv * 4 + 4])
                T.writes(B[vv * 4:vv * 4 + 4])
                B[vv * 4:vv * 4 + 4] = A[vv * 4:vv * 4 + 4]
        for k in range(4):
            with T.block("indirect"):
                vk = T.axis.spatial(4, k)
                T.reads(A[0:16], I[vk * 4:vk * 4 + 4])
                T.writes(B[vk * 4:vk * 4 + 4])
                for t in range(4):
                    B[vk * 4 + t] = A[I[vk * 4 + t]]
        """),
    "guards narrow loops; symbolic extents give symbolic regions": (
        'a: T.handle, n: T.int32',
        """
        A = T.match_buffer(a, (n,), "float32")
        for o in range(n // 4):
            with T.block("tile"):
                vo = T.axis.spatial(n // 4, o)
                for t in range(4):
                    if t < 3 and t >= 1:
                        A[vo * 4 + t] = T.float32(0)
        for r in range(n):
            with T.block("all"):
                for s in range(n):
                    A[s] = A[r]
        """,
        """
        A = T.match_buffer(a, (n,), "float32")
        for o in range(n // 4):
            with T.block("tile"):
                vo = T.axis.spatial(n // 4, o)
                T.reads()
                T.writes(A[vo * 4 + 1:vo * 4 + 3])
                for t in range(4):
                    if t < 3 and t >= 1:
                        A[vo * 4 + t] = T.float32(0)
        for r in range(n):
            with T.block("all"):
                T.reads(A[r])
                T.writes(A[0:n])
                for s in range(n):
                    A[s] = A[r]
        """),
    "a view's pointer reaches the region it views": (
        'A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")',
        """
        for i, j in T.grid(4, 4):
            with T.block("tile"):
                vi, vj = T.axis.remap("SS", [i, j])
                A0 = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16 + 2:vj * 16 + 10], (16, 8))
                B0 = T.match_buffer(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16))
                T.evaluate(T.call_extern("int32", "gemm", B0.access_ptr("w"), A0.access_ptr("r")))
        """,
        """
        for i, j in T.grid(4, 4):
            with T.block("tile"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi * 16:vi * 16 + 16, vj * 16 + 2:vj * 16 + 10])
                T.writes(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                A0 = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16 + 2:vj * 16 + 10], (16, 8))
                B0 = T.match_buffer(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16))
                T.evaluate(T.call_extern("int32", "gemm", B0.access_ptr("w"), A0.access_ptr("r")))
        """),
    "a view's bare pointer is an opaque use of the region it views": (
        'A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")',
        """
        for i in range(4):
            with T.block("tile"):
                vi = T.axis.spatial(4, i)
                A0 = T.match_buffer(A[vi * 16:vi * 16 + 16], (16,))
                B[vi] = T.float32(0)
                T.evaluate(T.call_extern("int32", "touch", A0.data))
        """,
        """
        for i in range(4):
            with T.block("tile"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi * 16:vi * 16 + 16])
                T.writes(B[vi], A[vi * 16:vi * 16 + 16])
                A0 = T.match_buffer(A[vi * 16:vi * 16 + 16], (16,))
                B[vi] = T.float32(0)
                T.evaluate(T.call_extern("int32", "touch", A0.data))
        """),
}


@pytest.mark.parametrize("case", sorted(PAIRS))
def test_inferred_regions_match_tvm(case):
    params, implicit, explicit = PAIRS[case]
    assert parse(params, implicit, check=False) == parse(params, explicit, check=False)


# --------------------------------------------------------------------------
# the functions on nodes


def _block(body, init=None, allocs=(), name="b", iter_vars=()) -> Block:
    return Block(list(iter_vars), [], [], name, body, init, list(allocs))


def test_access_regions_on_nodes_and_visibility():
    A, B, L = Buffer("A", [16]), Buffer("B", [16]), Buffer("L", [1], storage_scope="local")
    vi, j = Var("vi"), Var("j")
    body = SeqStmt([
        For(j, 0, 4, ForKind.SERIAL, BufferStore(L, BufferLoad(A, [vi * 4 + j]), [IntImm("int32", 0)])),
        BufferStore(B, BufferLoad(L, [IntImm("int32", 0)]), [vi]),
    ])
    block = _block(body, allocs=[L], iter_vars=[IterVar(Range(0, 4), vi, "DataPar")])
    reads, writes = access_regions(block)
    assert reads == [BufferRegion(A, [Range(vi * 4, 4)])]
    assert writes == [BufferRegion(B, [Range(vi, 1)])]
    # only buffers said to be visible are reported
    reads, writes = access_regions(block, visible=[B])
    assert (reads, writes) == ([], [BufferRegion(B, [Range(vi, 1)])])


def test_detect_access_reports_opaque_uses_and_access_regions_reads_and_writes_them():
    data = Var("A_data", "handle")
    A = Buffer("A", [8], data=data)
    block = _block(SeqStmt([
        BufferStore(A, FloatImm("float32", 0), [IntImm("int32", 0)]),
        __import__("tirfun.nodes", fromlist=["Evaluate"]).Evaluate(
            __import__("tirfun.tir", fromlist=["call_extern"]).call_extern("int32", "g", data)),
    ]))
    access = detect_access(block, visible=[A])
    assert access.opaques == (BufferRegion.full(A),)
    # as TVM's GetBlockReadWriteRegion: the whole buffer, read and written
    assert access_regions(block, visible=[A]) == ([BufferRegion.full(A)], [BufferRegion.full(A)])


def test_fill_regions_completes_every_block_innermost_first():
    A, B = Buffer("A", [8]), Buffer("B", [8])
    a, b = Var("a", "handle"), Var("b", "handle")
    i, vi = Var("i"), Var("vi")
    inner = Block([IterVar(Range(0, 8), vi, "DataPar")], [], [], "inner",
                  BufferStore(B, BufferLoad(A, [vi]), [vi]))
    outer = Block([], [], [], "outer", For(i, 0, 8, ForKind.SERIAL, BlockRealize([i], True, inner)))
    root = Block([], [], [], "root", BlockRealize([], True, outer))
    func = PrimFunc([a, b], BlockRealize([], True, root), None, {a: A, b: B})
    done = fill_regions(func)
    got_outer = done.body.block.body.block
    got_inner = got_outer.body.body.block
    assert list(got_inner.reads) == [BufferRegion(A, [Range(vi, 1)])]
    assert list(got_outer.reads) == [BufferRegion(A, [Range(0, 8)])]
    assert list(got_outer.writes) == [BufferRegion(B, [Range(0, 8)])]
    assert list(done.body.block.reads) == []  # the root keeps none
    # only the named blocks are completed when asked
    partial = fill_regions(func, {"inner": (False, True)})
    assert list(partial.body.block.body.block.reads) == []
    assert list(partial.body.block.body.block.body.body.block.writes) == [BufferRegion(B, [Range(vi, 1)])]


# --------------------------------------------------------------------------
# intervals, checked against brute force

VARS = [Var("x"), Var("y"), Var("z")]
RANGES = {VARS[0]: (0, 3), VARS[1]: (-2, 2), VARS[2]: (1, 5)}


def evaluate(e, env):
    """An independent evaluator of integer expressions, for the checks."""
    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, Var):
        return env[e]
    a, b = evaluate(e.a, env), evaluate(e.b, env)
    return {Add: lambda: a + b, Sub: lambda: a - b, Mul: lambda: a * b,
            FloorDiv: lambda: a // b, FloorMod: lambda: a % b,
            Min: lambda: min(a, b), Max: lambda: max(a, b)}[type(e)]()


def affine_exprs():
    leaf = st.one_of(st.sampled_from(VARS), st.integers(-6, 6).map(lambda v: IntImm("int32", v)))
    const = st.integers(-5, 5).map(lambda v: IntImm("int32", v))
    positive = st.integers(1, 5).map(lambda v: IntImm("int32", v))

    def extend(children):
        return st.one_of(
            st.tuples(children, children).map(lambda p: Add(*p)),
            st.tuples(children, children).map(lambda p: Sub(*p)),
            st.tuples(children, const).map(lambda p: Mul(*p)),
            st.tuples(children, positive).map(lambda p: FloorDiv(*p)),
            st.tuples(children, positive).map(lambda p: FloorMod(*p)),
            st.tuples(children, children).map(lambda p: Min(*p)),
            st.tuples(children, children).map(lambda p: Max(*p)),
        )
    return st.recursive(leaf, extend, max_leaves=8)


def _assignments():
    names = list(RANGES)
    for values in itertools.product(*[range(lo, hi + 1) for lo, hi in RANGES.values()]):
        yield dict(zip(names, values))


def _dom():
    return {v: ivs.Interval(IntImm("int32", lo), IntImm("int32", hi)) for v, (lo, hi) in RANGES.items()}


@given(affine_exprs())
def test_intervals_hold_every_value(expr):
    iv = ivs.eval_interval(expr, _dom())
    values = [evaluate(expr, env) for env in _assignments()]
    if iv.lo is not None:
        lo = ivs.simplify(iv.lo)
        assert isinstance(lo, IntImm) and lo.value <= min(values)
    if iv.hi is not None:
        hi = ivs.simplify(iv.hi)
        assert isinstance(hi, IntImm) and hi.value >= max(values)


@given(st.lists(st.tuples(st.sampled_from(VARS), st.integers(-4, 4)), min_size=1, max_size=3,
                unique_by=lambda term: term[0].name),
       st.integers(-10, 10))
def test_intervals_of_sums_are_exact(terms, c):
    # exact when each variable occurs once (like TVM, x - x is not seen as 0)
    expr = IntImm("int32", c)
    for var, k in terms:
        expr = Add(expr, Mul(var, IntImm("int32", k)))
    iv = ivs.eval_interval(expr, _dom())
    values = [evaluate(expr, env) for env in _assignments()]
    assert (ivs.simplify(iv.lo), ivs.simplify(iv.hi)) == (IntImm("int32", min(values)),
                                                          IntImm("int32", max(values)))


@given(affine_exprs())
def test_simplify_keeps_the_value(expr):
    simple = ivs.simplify(expr)
    for env in _assignments():
        assert evaluate(simple, env) == evaluate(expr, env)


def test_symbolic_bounds_and_cover_range():
    vi, j = Var("vi"), Var("j")
    dom = {j: ivs.Interval.from_range(Range(0, 4))}
    iv = ivs.eval_interval(vi * 4 + j, dom)
    assert ivs.cover_range(iv, Range(0, 64)) == Range(vi * 4, 4)
    assert ivs.is_single_point(ivs.eval_interval(vi * 2 + 1, dom))
    assert ivs.cover_range(ivs.eval_interval(BufferLoad(Buffer("I", [4], "int32"), [j]), dom),
                           Range(0, 64)) == Range(0, 64)


def test_pointer_uses_are_found_without_visible_buffers():
    # without ``visible``, the buffers with a data pointer are gathered from
    # the block only when a handle variable turns up; each kind of use is
    # still reported, and a block without one is read as before
    from tirfun.nodes import Evaluate
    from tirfun.tir import call_extern
    from tirfun.tir.buffer_methods import access_ptr

    A = Buffer("A", [8], data=Var("A_data", "handle"))
    B = Buffer("B", [8], data=Var("B_data", "handle"))
    vi = Var("vi")
    store = BufferStore(B, BufferLoad(A, [vi]), [vi])
    opaque = _block(SeqStmt([store, Evaluate(call_extern("int32", "g", A.data))]))
    assert access_regions(opaque) == ([BufferRegion.full(A)], [BufferRegion(B, [Range(vi, 1)]),
                                                               BufferRegion.full(A)])
    read_ptr = _block(SeqStmt([store, Evaluate(access_ptr(B, "r"))]))
    assert detect_access(read_ptr).reads == (BufferRegion(A, [Range(vi, 1)]), BufferRegion.full(B))
    plain = _block(store)
    assert access_regions(plain) == ([BufferRegion(A, [Range(vi, 1)])], [BufferRegion(B, [Range(vi, 1)])])
    # a pointer of a buffer the block allocates is no access from outside
    inner = _block(SeqStmt([store, Evaluate(call_extern("int32", "g", A.data))]), allocs=[A])
    assert access_regions(inner) == ([], [BufferRegion(B, [Range(vi, 1)])])


@given(affine_exprs(), affine_exprs())
def test_union_of_points_folds_the_min_and_the_max(a, b):
    # the two points' difference is worked out once for both ends
    from tirfun.analysis.arith.linear import fold_max, fold_min

    got = ivs.union(ivs.Interval.point(a), ivs.Interval.point(b))
    assert got == ivs.Interval(ivs.simplify(fold_min(a, b)), ivs.simplify(fold_max(a, b)))
    values = [(evaluate(a, env), evaluate(b, env)) for env in _assignments()]
    assert all(evaluate(got.lo, env) <= min(x, y) and evaluate(got.hi, env) >= max(x, y)
               for env, (x, y) in zip(_assignments(), values))


_SMALL = st.one_of(st.sampled_from(VARS), st.tuples(st.sampled_from(VARS), st.integers(-3, 3)).map(
    lambda p: Add(Mul(p[0], IntImm("int32", 2)), IntImm("int32", p[1]))))


@given(affine_exprs(), st.dictionaries(st.sampled_from(VARS), _SMALL, max_size=2))
def test_substitute_matches_a_full_rewrite_and_shares_what_it_keeps(expr, mapping):
    from tirfun.analysis.traversal import transform
    from tirfun.nodes import PrimExpr

    def pre(n):
        if isinstance(n, Var):
            return mapping.get(n, n)
        return None if isinstance(n, PrimExpr) else n

    got = ivs.substitute(expr, mapping)
    assert got == transform(expr, lambda n: n, pre)
    for env in _assignments():
        assert evaluate(got, env) == evaluate(expr, {v: evaluate(mapping.get(v, v), env) for v in VARS})
    if not any(v in mapping for v in _vars_in(expr)):
        assert got is expr
    # a subtree held twice is rewritten once, as a shared subtree
    twice = Add(expr, expr)
    out = ivs.substitute(twice, mapping)
    assert out.a is out.b


def _vars_in(e):
    from tirfun.analysis.traversal import walk

    return {n for n in walk(e) if isinstance(n, Var)}


_ENDS = st.one_of(affine_exprs(), st.sampled_from([IntImm("int32", 2**31 - 1), IntImm("int32", -2**31),
                                                   Add(VARS[0], IntImm("int32", 2**31 - 1))]))


@given(st.one_of(st.none(), _ENDS), st.one_of(st.none(), _ENDS))
def test_point_or_cover_is_a_point_or_the_cover_range(lo, hi):
    # one difference of the ends decides both, as is_single_point and
    # cover_range would decide them apart (dtype limits included)
    iv = ivs.Interval(lo, hi)
    full = Range(IntImm("int32", 0), IntImm("int32", 64))
    expected = (Range(iv.lo, IntImm(iv.lo.dtype, 1)) if ivs.is_single_point(iv)
                else ivs.cover_range(iv, full))
    assert ivs.point_or_cover(iv, full) == expected
    same = ivs.Interval(lo, lo)
    if lo is not None:
        assert ivs.point_or_cover(same, full) == Range(lo, IntImm(lo.dtype, 1))


def test_a_declared_buffer_used_only_through_its_pointer_is_found():
    # the block names D by its pointer alone; with the function's declared
    # buffers the detector knows whose pointer it is
    from tirfun.nodes import Evaluate
    from tirfun.tir import call_extern

    D = Buffer("D", [8], data=Var("D_data", "handle"))
    B = Buffer("B", [8])
    vi = Var("vi")
    block = _block(SeqStmt([BufferStore(B, FloatImm("float32", 0), [vi]),
                            Evaluate(call_extern("int32", "g", D.data))]))
    assert detect_access(block).opaques == ()  # nothing says D_data is D's
    assert detect_access(block, declared=[B, D]).opaques == (BufferRegion.full(D),)
    assert detect_access(block, declared=iter([B, D])).opaques == (BufferRegion.full(D),)
