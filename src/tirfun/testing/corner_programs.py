"""Programs of shapes the other generators never draw.

Each is a shape TVMScript accepts and a schedule has to handle, which the
generators of :mod:`tirfun.testing.block_programs` do not make: a function
without blocks (so without a root block, which a rewrite may then create),
one whose loop body allocates, declares a buffer and binds a let,
stages indexing one buffer in ``int32`` and in ``int64``, a stage under a
condition at the function's top level, an int64 epilogue of an int32
stage, a triangular reduction whose block domain names the outer loop, an
opaque block naming the loop around it, a reduction over as many values as
an enclosing block's variable (none, for its first), a sum started from
a value staged under the same loop, a sum over a number of values given at
run time (which may be none), a sum in an opaque block naming its loops, a
sum whose init writes through a view. :func:`corner_program` draws one of
them, with its sizes drawn too.
"""

from __future__ import annotations

from ..nodes import IRModule
from ._choices import Chooser

#: a function without blocks: loops straight under the function
_BLOCKLESS = """
@T.prim_func
def main(A: T.Buffer(({n},), "{dt}"), B: T.Buffer(({n},), "{dt}"), S: T.Buffer((1,), "{dt}")):
    for i in range({n}):
        B[i] = A[i] + A[i]
    S[0] = {zero}
    for k in range({n}):
        S[0] = S[0] + B[k]
"""

#: a function without blocks whose loop body binds names: an allocation,
#: the buffer declared on it and a let (a copy of the body, as
#: loop_partition makes, binds them afresh)
_SCRATCH = """
@T.prim_func
def main(A: T.Buffer(({n},), "{dt}"), B: T.Buffer(({n},), "{dt}")):
    for i in range({n}):
        t_data = T.allocate([1], "{dt}", "local")
        t = T.decl_buffer((1,), "{dt}", data=t_data, scope="local")
        x: T.{dt} = A[i] + A[i]
        t[0] = x
        B[i] = t[0] * x
"""

#: one buffer written and read by stages whose loops are int32 and int64
_MIXED_WIDTHS = """
@T.prim_func
def main(A: T.Buffer(({n},), "{dt}"), C: T.Buffer(({n},), "{dt}")):
    B = T.alloc_buffer(({n},), "{dt}")
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = A[vi] + A[vi]
    for k in range(T.int64({n})):
        with T.block("B64"):
            vk = T.axis.spatial(T.int64({n}), k)
            B[vk] = B[vk] * B[vk]
    for j in range({n}):
        with T.block("C"):
            vj = T.axis.spatial({n}, j)
            C[vj] = B[vj] + A[vj]
"""

#: a stage that runs only when a scalar parameter says so
_GUARDED = """
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "{dt}"), C: T.Buffer(({n}, {m}), "{dt}"), flag: T.int32):
    B = T.alloc_buffer(({n}, {m}), "{dt}")
    for i, j in T.grid({n}, {m}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    if flag > 0:
        for i, j in T.grid({n}, {m}):
            with T.block("B2"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = B[vi, vj] + A[vi, vj]
    for i, j in T.grid({n}, {m}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + B[vi, vj]
"""

#: a reduction whose loops and buffers are all int64
_WIDE_REDUCTION = """
@T.prim_func
def main(A: T.Buffer((T.int64({n}), T.int64({m})), "{dt}"), S: T.Buffer((T.int64({n}),), "{dt}")):
    for i, k in T.grid(T.int64({n}), T.int64({m})):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = {zero}
            S[vi] = S[vi] + A[vi, vk]
"""

#: an epilogue reading nothing but its producer's output (what
#: reverse_compute_inline folds into the producer), in two widths
_EPILOGUE = """
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "{dt}"), C: T.Buffer(({n}, {m}), "{dt}")):
    B = T.alloc_buffer(({n}, {m}), "{dt}")
    for i, j in T.grid({n}, {m}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + A[vi, vj]
    for i, j in T.grid(T.int64({n}), T.int64({m})):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * B[vi, vj]
"""

#: a triangular reduction: the inner loop's extent, and so the domain of
#: the block's reduction variable, is an expression of the outer loop
#: (TVM's well-formedness check leaves block domains alone)
_TRIANGULAR = """
@T.prim_func
def main(A: T.Buffer(({n}, {n}), "{dt}"), S: T.Buffer(({n},), "{dt}"), C: T.Buffer(({n},), "{dt}")):
    for i in range({n}):
        for k in range(i + 1):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = {zero}
                S[vi] = S[vi] + A[vi, vk]
    for j in range({n}):
        with T.block("C"):
            vj = T.axis.spatial({n}, j)
            C[vj] = S[vj] + S[vj]
"""

#: an opaque block (no iteration variables) naming the loop around it, as
#: TVM lets one, here a check that writes nothing (TVM's ``T.assume``
#: tests): compute_at may not take it out of that loop
_OPAQUE_CHECK = """
@T.prim_func
def main(A: T.Buffer(({nm},), "{dt}"), C: T.Buffer(({nm},), "{dt}")):
    for i in range({n}):
        with T.block("check"):
            T.reads(A[i * {m}:i * {m} + {m}])
            T.writes()
            for j in range({m}):
                T.assume(A[i * {m} + j] == A[i * {m} + j])
    for k in range({nm}):
        with T.block("C"):
            vk = T.axis.spatial({nm}, k)
            C[vk] = A[vk] * A[vk]
"""

#: a reduction whose loop runs as many times as an enclosing block's
#: variable says (none for the first row): its init runs only where it does
_EMPTY_ROWS = """
@T.prim_func
def main(A: T.Buffer(({n}, {n}), "{dt}"), S: T.Buffer(({n},), "{dt}")):
    for i in range({n}):
        with T.block("row"):
            vi = T.axis.spatial({n}, i)
            for k in range(vi):
                with T.block("S"):
                    vs = T.axis.spatial({n}, vi)
                    vk = T.axis.reduce({n}, k)
                    with T.init():
                        S[vs] = {zero}
                    S[vs] = S[vs] + A[vs, vk]
"""

#: a sum started from a value a block under the same row loop writes first
_STAGED_START = """
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "{dt}"), C: T.Buffer(({n},), "{dt}"), S: T.Buffer(({n},), "{dt}")):
    G = T.alloc_buffer(({n},), "{dt}")
    for i in range({n}):
        with T.block("G"):
            vi = T.axis.spatial({n}, i)
            G[vi] = C[vi] + C[vi]
        for k in range({m}):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = G[vi]
                S[vi] = S[vi] + A[vi, vk]
"""

#: a row sum over a number of columns given at run time, which may be zero:
#: then no instance of the block runs, and its init never does
_SYMBOLIC_SUM = """
@T.prim_func
def main(a: T.handle, S: T.Buffer(({n},), "{dt}"), k: T.int32):
    A = T.match_buffer(a, ({n}, k), "{dt}")
    for i, r in T.grid({n}, k):
        with T.block("S"):
            vi, vr = T.axis.remap("SR", [i, r])
            with T.init():
                S[vi] = {zero}
            S[vi] = S[vi] + A[vi, vr]
"""

#: a reduction in an opaque block (no iteration variables) that names its
#: loops, one of them of one iteration (TVM's layout-free-buffer programs):
#: the init runs at every iteration, the block moves with its loops only
_OPAQUE_SUM = """
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "{dt}"), S: T.Buffer(({n},), "{dt}")):
    for i, k_0, k_1 in T.grid({n}, {m}, 1):
        with T.block("S"):
            with T.init():
                S[i] = {zero}
            S[i] = S[i] + A[i, k_0 + k_1]
"""

#: a reduction whose init writes through a view its block declares with
#: match_buffer (TVM's LowerInitBlock program)
_INIT_VIEW = """
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "{dt}"), S: T.Buffer(({n},), "{dt}")):
    for i, k in T.grid({n}, {m}):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            Sv = T.match_buffer(S[vi], (), "{dt}")
            with T.init():
                Sv[()] = {zero}
            Sv[()] = Sv[()] + A[vi, vk]
"""

#: three stages over a run-time number of rows and of columns: a split of
#: a row loop by a count of parts (``[8, None]``) binds it with a symbolic
#: weight, ``i_0 * ((rows + 7) // 8) + i_1``, and a fuse of the two loops
#: gives slices by a size, ``f // cols`` and ``f % cols``
_SYMBOLIC_STAGES = """
@T.prim_func
def main(a: T.handle, c: T.handle, d: T.handle):
    rows = T.int32()
    cols = T.int32()
    A = T.match_buffer(a, (rows, cols), "{dt}")
    C = T.match_buffer(c, (rows, cols), "{dt}")
    D = T.match_buffer(d, (rows,), "{dt}")
    B = T.alloc_buffer((rows, cols), "{dt}")
    for i, j in T.grid(rows, cols):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + A[vi, vj]
    for i, j in T.grid(rows, cols):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * A[vi, vj]
    for i, k in T.grid(rows, cols):
        with T.block("D"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                D[vi] = {zero}
            D[vi] = D[vi] + C[vi, vk]
"""

# the same stages with B computed under a condition: a nest moved under a
# fuse of B's loops divides by cols where B only computes under the
# condition, and cols may be 0 (the loop over rows * cols then runs no
# iteration, so nothing divides)
_SYMBOLIC_GUARDED = _SYMBOLIC_STAGES.replace(
    "B[vi, vj] = A[vi, vj] + A[vi, vj]",
    "B[vi, vj] = T.if_then_else(vj < 2, A[vi, vj] + A[vi, vj], A[vi, vj])")

SHAPES = {"blockless": _BLOCKLESS, "scratch": _SCRATCH, "mixed_widths": _MIXED_WIDTHS, "guarded": _GUARDED,
          "wide_reduction": _WIDE_REDUCTION, "epilogue": _EPILOGUE, "triangular": _TRIANGULAR,
          "opaque_check": _OPAQUE_CHECK, "empty_rows": _EMPTY_ROWS, "staged_start": _STAGED_START,
          "symbolic_sum": _SYMBOLIC_SUM, "opaque_sum": _OPAQUE_SUM, "init_view": _INIT_VIEW,
          "symbolic_stages": _SYMBOLIC_STAGES, "symbolic_guarded": _SYMBOLIC_GUARDED}

_DTYPES = ("int32", "float32", "int8", "float64")


def corner_source(ch: Chooser, shape: str | None = None) -> str:
    """The TVMScript of one corner program (``shape`` drawn when None)."""
    shape = shape if shape is not None else ch.choice(tuple(SHAPES))
    dt = ch.choice(_DTYPES)
    zero = f"T.{dt}(0)"
    n, m = ch.choice((4, 6, 8)), ch.choice((2, 3, 4))
    return SHAPES[shape].format(n=n, m=m, nm=n * m, dt=dt, zero=zero)


def corner_program(ch: Chooser, shape: str | None = None) -> IRModule:
    """One corner program as a module with one ``main`` function."""
    from ..script import from_source

    return IRModule({"main": from_source(corner_source(ch, shape))})


__all__ = ["SHAPES", "corner_source", "corner_program"]
