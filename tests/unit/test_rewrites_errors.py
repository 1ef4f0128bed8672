"""Every ScheduleError subclass of the rewrites, raised with its message.

Each case applies a rewrite to a small module and checks the exact class
(not a base class), the first line of the message (primitive, subject and
reason), and that the detailed rendering shows the offending TVMScript.
"""

import re

import attrs
import pytest

import tirfun.rewrites as R
from tirfun.errors import ScheduleError
from tirfun.nodes import BufferLoad, IntImm, IRModule, Var
from tirfun.tir.op import decl_buffer
from tirfun.script import from_source

from corner_sources import (
    ELEMENTWISE, GUARDED_CONSUMER, GUARDED_DIVISION, INIT_SCRATCH, OPAQUE_STORE, TRIANGLE_IN_A_SQUARE, TRIANGULAR,
    TWO_STAGES, UNDER_AN_IF,
)


# a row of 8 elements plus one: what the elementwise block (times two) is not
_ROW_ADD_DESC = """
@T.prim_func
def row_add(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (8,), offset_factor=1)
    B = T.match_buffer(b, (8,), offset_factor=1)
    with T.block("root"):
        T.reads(A[0:8])
        T.writes(B[0:8])
        for j in range(8):
            with T.block("B"):
                vj = T.axis.remap("S", [j])
                B[vj] = A[vj] + T.float32(1)
"""
_ROW_ADD = R.TensorIntrin(from_source(_ROW_ADD_DESC), from_source(_ROW_ADD_DESC))

# a padding: its region of X reaches one element before X's start
_PAD = """
@T.prim_func
def main(X: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("pad"):
            vi = T.axis.remap("S", [i])
            P[vi] = T.if_then_else(1 <= vi and vi < 7, X[vi - 1], T.float32(0))
"""


# the same as one block whose declared region of X reaches an element past
# each end (blockize clamps what it declares to the buffer; a block written
# so keeps its region)
_PAD_BLOCK = """
@T.prim_func
def main(X: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32")):
    with T.block("pad_o"):
        T.reads(X[-1:7])
        T.writes(P[0:8])
        for i in range(8):
            with T.block("pad"):
                vi = T.axis.remap("S", [i])
                P[vi] = T.if_then_else(1 <= vi and vi < 7, X[vi - 1], T.float32(0))
"""


# the padding over a window of X as wide as P, from one element before X
_PAD_WINDOW = """
@T.prim_func
def pad_window(w0: T.handle, w1: T.handle):
    W0 = T.match_buffer(w0, (8,), offset_factor=1)
    W1 = T.match_buffer(w1, (8,), offset_factor=1)
    with T.block("root"):
        T.reads(W1[0:8])
        T.writes(W0[0:8])
        for i in range(8):
            with T.block("pad"):
                vi_i = T.axis.spatial(8, i)
                T.reads(W1[vi_i])
                T.writes(W0[vi_i])
                W0[vi_i] = T.if_then_else(1 <= vi_i and vi_i < 7, W1[vi_i], T.float32(0.0))
"""


def _pad_intrin():
    """An intrinsic computing the padding over a window of X that reaches
    one element past X at each end."""
    desc = from_source(_PAD_WINDOW)
    return R.TensorIntrin(desc, desc)


TWO_NESTS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for j in range(4):
        for k in range(2):
            with T.block("C"):
                vj = T.axis.spatial(8, j * 2 + k)
                C[vj] = A[vj] + T.float32(1)
"""

SIBLINGS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for k in range(8):
            with T.block("C"):
                vi, vk = T.axis.remap("SS", [i, k])
                C[vi, vk] = A[vi, vk]
"""

BLOCK_RUNS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for m in range(2):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(8, m * 4 + i)
                B[vi] = A[vi]
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = A[vi]
        for i in range(4):
            with T.block("D"):
                vi = T.axis.spatial(8, m * 4 + i)
                C[vi] = B[vi]
    for n in range(8):
        with T.block("E"):
            vn = T.axis.spatial(8, n)
            B[vn] = C[vn]
"""

TWO_SUMS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), S: T.Buffer((1,), "float32"), T_: T.Buffer((1,), "float32")):
    for m, i in T.grid(2, 4):
        with T.block("S"):
            vk = T.axis.reduce(8, m * 4 + i)
            with T.init():
                S[0] = T.float32(0)
            S[0] = S[0] + A[vk]
        with T.block("T"):
            vk = T.axis.reduce(8, m * 4 + i)
            with T.init():
                T_[0] = T.float32(0)
            T_[0] = T_[0] + A[vk]
"""

SHIFTED = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(2, 10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi]
"""


OPAQUE_ITER = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.opaque(8, j)
            B[vi, vj] = A[vi, vj]
"""

NOT_AFFINE = """
@T.prim_func
def main(A: T.Buffer((20,), "float32"), B: T.Buffer((20,), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(20, i * 5 + j)
            B[vi] = A[vi]
"""

NESTED_SCOPE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i in range(8):
        with T.block("outer"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi, 0:8])
            T.writes(B[vi, 0:8])
            for j in range(8):
                with T.block("B"):
                    vi2 = T.axis.spatial(8, vi)
                    vj = T.axis.spatial(8, j)
                    B[vi2, vj] = A[vi2, vj]
    for k in range(8):
        with T.block("C"):
            vk = T.axis.spatial(8, k)
            C[vk, 0] = A[vk, 0]
"""

IN_PLACE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
"""


# lowered TIR: scratch storage allocated in every iteration
_ALLOCATING_LOOP = """
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    for i in range(8):
        B_data = T.allocate((1,), "float32", "global")
        B = T.Buffer(shape=[1], dtype="float32", data=B_data)
        B[0] = T.float32(3)
        A[i] = B[0] + T.float32(1)
"""


# a row of B viewed through a pointer, declared inside the root block's body
_CACHE_DECLARED_VIEW = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((2, 16), "float32")):
    with T.LetStmt(T.address_of(B[1, 0]), var=T.handle("float32")) as B_data_1:
        B_1 = T.decl_buffer(16, "float32", data=B_data_1)
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B_1[vi] = A[vi] * T.float32(2)
"""


# a parameter realized inside the root (TVM's legacy T.realize: fresh
# storage for the buffer over the region, as the interpreter runs it)
_CACHE_REALIZED = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    T.realize(B[0:8], "")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
"""


# a row of B viewed through the address of its first element (TVM's
# private-function inlining tests): the block's regions say B[i, 0] only
_ADDRESS_VIEW = """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            T.reads(B[vi, 0])
            T.writes(A[vi, 0:16])
            row_data: T.handle = T.address_of(B[vi, 0])
            row = T.decl_buffer((16,), data=row_data)
            for j in range(16):
                A[vi, j] = row[j] * T.float32(2)
"""


# a buffer over an allocation in the root's body, not declared (TVM's
# renew-defs tests)
_CACHE_ALLOCATED_VIEW = """
@T.prim_func
def main(B: T.Buffer((16,), "float16")):
    A_data = T.allocate([16], "float16", "global")
    A = T.Buffer((16,), "float16", data=A_data)
    for i in range(16):
        with T.block("A"):
            vi = T.axis.spatial(16, i)
            A[vi] = T.float16(1)
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + T.float16(1)
"""


# a reduction whose loop runs as many times as an enclosing block's
# variable says: none at all for vi = 0
_EMPTY_REDUCTION = """
@T.prim_func
def main(A: T.Buffer((4, 4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 4):
        for l in range(k):
            with T.block("B"):
                vb, vk, vl = T.axis.remap("SRR", [i, k, l])
                with T.init():
                    B[vb] = T.float32(0)
                B[vb] = B[vb] + A[vb, vk, vl]
"""

# a reduction over a loop whose extent is another reduction loop
_NESTED_EMPTY = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 3):
        for l in range(k):
            with T.block("B"):
                vb = T.axis.spatial(4, i)
                vk = T.axis.reduce(3, k)
                vl = T.axis.reduce(4, l)
                with T.init():
                    B[vb] = T.float32(0)
                B[vb] = B[vb] + A[vb, vl] * T.float32(vk)
"""

# an opaque reduction naming its loops (TVM's layout-free-buffer test program)
_OPAQUE_SUM = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j, k_0, k_1 in T.grid(8, 8, 8, 1):
        with T.block("C"):
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k_0 + k_1] * B[k_0 + k_1, j]
"""

# TVM's LowerInitBlock program: the init writes through a match_buffer view
_INIT_VIEW = """
@T.prim_func
def main(A: T.Buffer((8, 8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i0, j0 in T.grid(8, 8):
        for k0 in T.serial(4, 8):
            with T.block("R"):
                i, j, k = T.axis.remap("SRR", [i0, j0, k0])
                BB = T.match_buffer(B[i], ())
                AA = T.match_buffer(A[i, 0:8, 0:8], (8, 8))
                with T.init():
                    BB[()] = T.float32(0)
                BB[()] += AA[j, k]
"""

# an integer division by a loaded value (TVM's strided-slice shape function)
_DIVIDING = """
@T.prim_func
def main(A: T.Buffer((6,), "int32"), B: T.Buffer((6,), "int32"), C: T.Buffer((6,), "int32")):
    for i in range(6):
        with T.block("C"):
            vi = T.axis.spatial(6, i)
            C[vi] = A[vi] // B[vi]
"""

# an int32 nest and an int64 one, the second writing at an expression
_MIXED_WIDTH_NESTS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[(vi + 1) % 8]
    for j in range(T.int64(8)):
        with T.block("B"):
            vj = T.axis.spatial(T.int64(8), j)
            B[(vj + T.int64(1)) % T.int64(8)] = A[vj] + T.float32(1)
"""

# a sum started from a value another block under the row loop writes first
_INIT_READS_STAGED = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4,), "float32"), S: T.Buffer((4,), "float32")):
    Bg = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("copy"):
            vi = T.axis.spatial(4, i)
            Bg[vi] = C[vi]
        for k in range(4):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = Bg[vi]
                S[vi] = S[vi] + A[vi, vk]
"""


# a buffer over constants declared below the top of the root's body (TVM's
# round-trip tests)
_CACHE_CONST_VIEW = """
@T.prim_func
def main(A: T.Buffer((10,), "int32"), C: T.Buffer((10,), "int32")):
    for x in range(10):
        with T.block("C0"):
            vx = T.axis.spatial(10, x)
            C[vx] = A[vx]
    K_data = T.allocate_const([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "int32", [10])
    K = T.Buffer((10,), "int32", data=K_data)
    for x in range(10):
        with T.block("C1"):
            vx = T.axis.spatial(10, x)
            T.reads(C[vx], K[vx])
            T.writes(C[vx])
            C[vx] = C[vx] + K[vx]
"""


# an opaque block naming the loop around it (TVM lets one)
_OPAQUE_TILE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(4):
        with T.block("tile"):
            T.reads(A[i * 4:i * 4 + 4])
            T.writes(B[i * 4:i * 4 + 4])
            for j in range(4):
                B[i * 4 + j] = A[i * 4 + j] * T.float32(2)
    for k in range(16):
        with T.block("C"):
            vk = T.axis.spatial(16, k)
            C[vk] = B[vk] + T.float32(1)
"""


def mod_of(source: str) -> IRModule:
    return IRModule({"main": from_source(source)})


def bound(source: str) -> IRModule:
    return R.bind("i", "threadIdx.x")(mod_of(source))


def annotated(source: str) -> IRModule:
    return R.annotate(R.LoopRef("i"), "pragma", 1)(mod_of(source))


def with_duplicate_block(source: str) -> IRModule:
    """An ill-formed module whose two blocks share a name."""
    mod = mod_of(source)
    func = mod["main"]
    seq = func.body.block.body
    second = seq.seq[1]
    renamed = attrs.evolve(second.body.body, block=attrs.evolve(second.body.body.block, name_hint="B"))
    new_seq = attrs.evolve(seq, seq=seq.seq.set(1, attrs.evolve(second, body=attrs.evolve(second.body, body=renamed))))
    root = attrs.evolve(func.body.block, body=new_seq)
    return IRModule({"main": attrs.evolve(func, body=attrs.evolve(func.body, block=root))})


def two_functions() -> IRModule:
    f = from_source(ELEMENTWISE)
    return IRModule({"f": f, "g": f})


# a block viewing A through a match_buffer in the global scope
_VIEWED = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(2):
        with T.block("B"):
            vi = T.axis.spatial(2, i)
            T.reads(A[vi * 2:vi * 2 + 2])
            T.writes(B[vi * 2:vi * 2 + 2])
            V = T.match_buffer(A[vi * 2:vi * 2 + 2], (2,), offset_factor=1)
            for x in range(2):
                B[vi * 2 + x] = V[x]
"""


# a row sum across threadIdx.x in a kernel that binds threadIdx.y too, to
# another loop
_SUM_BESIDE_Y_THREADS = """
@T.prim_func
def main(A: T.Buffer((4, 32), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4, 8), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
        for j in T.thread_binding(8, thread="threadIdx.y"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = 1
"""

CASES = [
    # (id, module, rewrite, error class, first-line pattern)
    ("module", lambda: 42, R.split("i", [2]), R.InvalidModuleError,
     r"^split: argument: expected an IRModule or a PrimFunc, got int$"),
    ("function", lambda: mod_of(ELEMENTWISE), R.split(R.LoopRef("i", "nope"), [2]), R.UnknownFunctionError,
     r"^split: function 'nope': the module has no such function \(it has: main\)$"),
    ("no-main", two_functions, R.split("i", [2]), R.UnknownFunctionError,
     r"^split: arguments: the module has several functions and none is 'main' \(it has: f, g\)"),
    ("loop", lambda: mod_of(ELEMENTWISE), R.split("x", [2]), R.UnknownLoopError,
     r"^split: loop 'x': function 'main' has no loop with that loop variable$"),
    ("block", lambda: mod_of(ELEMENTWISE), R.reorder_block_iter_var("X", [0]), R.UnknownBlockError,
     r"^reorder_block_iter_var: block 'X': function 'main' has no block with that name$"),
    ("dup-block", lambda: with_duplicate_block(TWO_NESTS), R.annotate("B", "k", 1), R.NotSingleBlockError,
     r"^annotate: block 'B': function 'main' has several blocks with that name$"),
    ("ref-kind", lambda: mod_of(ELEMENTWISE), R.split(R.BlockRef("B"), [2]), R.RefKindError,
     r"^split: block 'B': expected a loop \(a LoopRef or a loop name\), got a block$"),
    ("foreign", lambda: mod_of(ELEMENTWISE), R.fuse(R.LoopRef("i", "main"), R.LoopRef("j", "g")),
     R.ForeignRefError, r"^fuse: arguments: the references point into different functions \('main', 'g'\)"),
    ("flag", lambda: mod_of(ELEMENTWISE), R.split("i", [2, 4], preserve_unit_iters="yes"),
     R.InvalidArgumentError, r"^split: argument preserve_unit_iters: expected True or False, got 'yes'$"),
    ("few-loops", lambda: mod_of(ELEMENTWISE), R.merge("i"), R.NotEnoughLoopsError,
     r"^merge: arguments: merge needs at least 2 loops, got 1$"),
    ("factor-type", lambda: mod_of(ELEMENTWISE), R.split("i", ["x", None]), R.InvalidFactorError,
     r"^split: loop 'i': factor 0 is 'x'; a factor is None, a positive int or an integer expression$"),
    ("factor-zero", lambda: mod_of(ELEMENTWISE), R.split("i", [0, None]), R.NonPositiveFactorError,
     r"^split: loop 'i': factor 0 is 0; constant factors must be positive$"),
    ("two-none", lambda: mod_of(ELEMENTWISE), R.split("i", [None, None]), R.NotSingleInferFactorError,
     r"^split: loop 'i': 2 factors are None; only one factor can be inferred$"),
    ("product", lambda: mod_of(ELEMENTWISE), R.split("i", [2, 2]), R.WrongFactorProductError,
     r"^split: loop 'i': the factors' product 4 is not provably at least the loop's extent$"),
    ("thread", lambda: mod_of(ELEMENTWISE), R.bind("i", "threadIdx.w"), R.InvalidThreadAxisError,
     r"^bind: loop 'i': 'threadIdx.w' is not a thread axis; expected one of blockIdx.x"),
    ("ann-key", lambda: mod_of(ELEMENTWISE), R.annotate("B", 3, 1), R.InvalidAnnotationError,
     r"^annotate: block 'B': the annotation key 3 is not a string$"),
    ("iter-order", lambda: mod_of(ELEMENTWISE), R.reorder_block_iter_var("B", [0, 0]),
     R.InvalidReorderIndexError,
     r"^reorder_block_iter_var: block 'B': the order \(0, 0\) is not a permutation of \[0, 1, \.\.\., 1\]"),
    ("bound-loop", lambda: bound(ELEMENTWISE), R.split("i", [2, 4]), R.LoopHasAnnotationOrThreadBindingError,
     r"^split: loop 'i': the loop is bound to threadIdx.x; split applies only to loops without"),
    ("annotated-loop", lambda: annotated(ELEMENTWISE), R.fuse("i", "j"),
     R.LoopHasAnnotationOrThreadBindingError, r"^fuse: loop 'i': the loop has annotations \(pragma\)"),
    ("start", lambda: mod_of(SHIFTED), R.split("i", [2, 4]), R.LoopNotStartWithZeroError,
     r"^split: loop 'i': the loop starts at 2, and split supports only loops starting at 0$"),
    ("twice", lambda: mod_of(ELEMENTWISE), R.reorder("i", "i"), R.LoopMultiAppearanceError,
     r"^reorder: loop 'i': the loop is given more than once$"),
    ("parent", lambda: mod_of(ELEMENTWISE), R.fuse("j", "i"), R.OuterNotInnerParentError,
     r"^fuse: loop 'i': loop 'j' is not the parent of loop 'i', so they cannot be fused$"),
    ("only-child", lambda: mod_of(SIBLINGS), R.fuse("i", "j"), R.NotOnlyChildError,
     r"^fuse: loop 'j': loop 'j' is not the only child of loop 'i', so they cannot be fused$"),
    ("dependent", lambda: mod_of(TRIANGLE_IN_A_SQUARE), R.reorder("k", "i"), R.DependentLoopError,
     r"^reorder: loop 'k': the min or extent of loop 'k' depends on loop 'i', which would be inside"),
    ("fuse-dependent", lambda: mod_of(TRIANGLE_IN_A_SQUARE), R.fuse("i", "k"), R.DependentLoopError,
     r"^fuse: loop 'k': the extent of loop 'k' depends on loop 'i', which is fused with it$"),
    ("chain", lambda: mod_of(SIBLINGS), R.reorder("j", "k"), R.LoopsNotAChainError,
     r"^reorder: loops 'j', 'k': the loops are not in a chain: they are on different branches"),
    ("iter-type", lambda: mod_of(OPAQUE_ITER), R.reorder("j", "i"), R.BlockIterTypeError,
     r"^reorder: block 'B': the block under the loops to reorder has the Opaque iteration variable vj"),
    ("affine", lambda: mod_of(NOT_AFFINE), R.reorder("j", "i"), R.NotAffineBindingError,
     r"^reorder: block 'B': the block under the loops to reorder does not have an affine binding$"),
    ("scope", lambda: mod_of(NESTED_SCOPE), R.merge("j", "k"), R.NotSameScopeError,
     r"^merge: loops 'j', 'k': the loops to merge are not in the same block scope$"),
    ("depth", lambda: mod_of(TWO_NESTS), R.merge("i", "k"), R.NestDepthMismatchError,
     r"^merge: loop 'k': its nest has 2 loops below the common ancestor, the nest of loop 'i' has 1$"),
    ("extent", lambda: mod_of(TWO_NESTS), R.merge("i", "j"), R.NestExtentMismatchError,
     r"^merge: loop 'j': loop 'j' has extent 4, loop 'i' at the same level has 8$"),
    ("root", lambda: mod_of(ELEMENTWISE), R.add_unit_loop(R.BlockRef("root")), R.RootBlockError,
     r"^add_unit_loop: block 'root': it is the root block of the function; no loop can be added above it$"),
    ("dataflow", lambda: mod_of(IN_PLACE), R.parallel("i"), R.NotCompactDataflowError,
     r"^parallel: block 'B': the block under loop 'i' is neither a complete block \(it both reads and "
     r"writes buffer B\) nor a reduction block \(it has no init statement\)$"),
    ("iter-kind", lambda: mod_of(TRIANGLE_IN_A_SQUARE), R.vectorize("k"), R.WrongBlockIterTypeError,
     r"^vectorize: block 'C': the vectorize of loop 'k' cannot be fulfilled: the loop feeds the "
     r"CommReduce iteration variable vk, which must be data-parallel$"),
    ("unroll-thread-reduction", lambda: mod_of(_SUM_BESIDE_Y_THREADS), R.unroll("k"),
     R.ReplicatedThreadReductionError,
     r"^unroll: loop 'k': loop 'k' is bound to threadIdx.x and feeds the reduction variable vk of block "
     r"'sum'; unrolled, the loop no longer spreads the reduction over threads, and the block is not under a "
     r"loop bound to threadIdx.y of its kernel: every thread of it would run the whole reduction, updating "
     r"B at once$"),
    ("unroll-barrier", lambda: mod_of(_MIRROR_THROUGH_SHARED), R.unroll("tx"), R.UnrolledBarrierError,
     r"^unroll: loop 'tx': loop 'tx' is bound to threadIdx.x and holds a barrier; unrolled, one thread would "
     r"run its iterations in turn: iteration 0 would read S\[7\] after the barrier before iteration 7 writes "
     r"it before the barrier$"),
    ("unroll-barrier-unknown", lambda: mod_of(_MIRROR_THROUGH_SHARED.replace("S[7 - tx]", "S[B[tx]]")),
     R.unroll("tx"), R.UnrolledBarrierError,
     r"^unroll: loop 'tx': .* it cannot be shown that no access after the barrier moves ahead of another "
     r"iteration's access before it: .* is not a constant once the loops have values$"),
    ("annotation", lambda: mod_of(ELEMENTWISE), R.unannotate("B", "nope"), R.AnnotationNotFoundError,
     r"^unannotate: block 'B': it has no annotation 'nope' \(it has: none\)$"),
]

# -- reductions, padding, partitioning and region hints ----------------------------

ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32"), C: T.Buffer((5,), "int32")):
    for i, k in T.grid(5, 10):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
    for j in range(5):
        with T.block("C"):
            vj = T.axis.spatial(5, j)
            C[vj] = A[vj, 0]
"""

PAD = """
@T.prim_func
def main(X: T.Buffer((6,), "float32"), P: T.Buffer((8,), "float32"), n: T.int32):
    for i in range(8):
        with T.block("P"):
            vi = T.axis.spatial(8, i)
            P[vi] = T.if_then_else(1 <= vi and vi < 7, X[vi - 1], T.float32(0))
    for j in range(n):
        with T.block("Q"):
            vj = T.axis.spatial(n, j)
            P[vj % 8] = T.float32(1)
"""


NESTED_SUM = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32")):
    for i in range(5):
        for k in {k_loop}:
            with T.block("B"):
                vi = T.axis.spatial(5, i)
                vk = T.axis.reduce(10, k)
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
{after}"""

WRITES_A = """        with T.block("W"):
            vw = T.axis.spatial(5, i)
            A[vw, 0] = 0
"""


def _nested(k_loop: str, after: str = ""):
    return lambda: mod_of(NESTED_SUM.format(k_loop=k_loop, after=after))


def _variant(source: str, old: str, new: str):
    return lambda: mod_of(source.replace(old, new))


def _rootless():
    func = from_source(ROW_SUM)
    return IRModule({"main": attrs.evolve(func, body=func.body.block.body.seq[0])})


CASES += [  # reductions, padding, partitioning, region hints
    ("loop-position", lambda: mod_of(ROW_SUM), R.decompose_reduction("B", "j"), R.LoopPositionError,
     r"^decompose_reduction: loop 'j': the loop is not an ancestor of block 'B'"),
    ("not-reduction", lambda: mod_of(ROW_SUM), R.decompose_reduction("C", "j"), R.NotReductionBlockError,
     r"^decompose_reduction: block 'C': the block is not a reduction block: it has no init statement$"),
    ("loop-height", _variant(ROW_SUM, "for i, k in T.grid(5, 10):", "for k, i in T.grid(10, 5):"),
     R.decompose_reduction("B", "i"), R.LoopHeightError,
     r"^decompose_reduction: loop 'i': loop 'k' above it feeds a reduction iteration variable"),
    ("repeated", _variant(ROW_SUM, "for i, k in T.grid(5, 10):", "for i, k, u in T.grid(5, 10, 2):"),
     R.decompose_reduction("B", "k"), R.RepeatedReductionError,
     r"^decompose_reduction: block 'B': the loops from 'k' down to the block reach an instance of it "
     r"more than once \(through 'u'\)"),
    ("init-placement", _variant(ROW_SUM, """    for i, k in T.grid(5, 10):
        with T.block("B"):""", """    for i in range(5):
        with T.block("S"):
            vs = T.axis.spatial(5, i)
            B[vs] = A[vs, 1]
        for k in range(10):
          with T.block("B"):"""),
     R.decompose_reduction("B", "i"), R.InitPlacementError,
     r"^decompose_reduction: block 'B': block 'S' runs before it under loop 'i' and touches B: placed before "
     r"the loop, the init would change what it reads or be overwritten by what it writes"),
    ("reduction-start", _nested("range(2, 10)"),
     R.decompose_reduction("B", "k"), R.ReductionStartError,
     r"^decompose_reduction: block 'B': the loops start the reduction variable vk at 2, not at the start "
     r"of its domain 0"),
    ("single-child", lambda: mod_of(SIBLINGS), R.rfactor("i", 0), R.NonSingleChildBlockError,
     r"^rfactor: loop 'i': rfactor needs exactly one block under the loop, it has 2$"),
    ("serial", _nested("T.unroll(10)"),
     R.rfactor("k", 0), R.NotSerialLoopKindError,
     r"^rfactor: loop 'k': the loop is unrolled; rfactor applies to serial loops only$"),
    ("loop-property", lambda: mod_of(ROW_SUM), R.rfactor("i", 0), R.LoopPropertyError,
     r"^rfactor: loop 'i': the rfactor loop feeds a data-parallel iteration variable$"),
    ("rfactor-form", _variant(ROW_SUM, "B[vi] = 0\n", "B[vi] = T.if_then_else(vi < 9, 0, 1)\n"),
     R.rfactor("k", 0), R.NoMatchedReducerError, r"^rfactor: block 'B': the identities and the combiner"),
    ("rfactor-init", _variant(ROW_SUM, "                B[vi] = 0\n", "                if vi < 9:\n                    B[vi] = 0\n"),
     R.rfactor("k", 0), R.RFactorNotApplicableError,
     r"^rfactor: block 'B': rfactor cannot read the reduction \(condition 1\)"),
    ("factor-axis", lambda: mod_of(ROW_SUM), R.rfactor("k", 5), R.FactorAxisOutOfRangeError,
     r"^rfactor: loop 'k': the buffer B has 1 dimension\(s\), so factor_axis must be an int in \[-2, 1\], "
     r"got 5$"),
    ("stage-pipeline", _nested("range(10)", WRITES_A),
     R.rfactor("k", 0), R.NotStagePipelineError,
     r"^rfactor: block 'B': block 'W' under loop 'i' writes A, which the reduction reads$"),
    ("scope-block", _rootless, R.rfactor("k", 0), R.NoScopeBlockError,
     r"^rfactor: block 'B': the block is not inside a block that could allocate the rfactor buffer"),
    ("buf-type", lambda: mod_of(ROW_SUM), R.unsafe_hide_buffer_access("B", "both", [0]), R.BufTypeError,
     r"^unsafe_hide_buffer_access: block 'B': the buffer type must be 'read' or 'write', got 'both'$"),
    ("hide-index", lambda: mod_of(ROW_SUM), R.unsafe_hide_buffer_access("B", "read", [3]), R.InvalidIndexError,
     r"^unsafe_hide_buffer_access: block 'B': the buffer indices must be ints between 0 and 0"),
    ("buffer-index", lambda: mod_of(ROW_SUM), R.annotate_buffer_access("B", 1, "write", ["vi"]),
     R.BufferIndexOutOfRangeError,
     r"^annotate_buffer_access: block 'B': buffer_index 1 does not index the block's 1 write region\(s\)$"),
    ("region", lambda: mod_of(ROW_SUM), R.annotate_buffer_access("B", 0, "write", ["vi", "vi"]),
     R.InvalidRegionError,
     r"^annotate_buffer_access: block 'B': the buffer B has 1 dimension\(s\), so the region needs as many "
     r"ranges, got 2$"),
    ("incomplete", lambda: mod_of(ROW_SUM), R.decompose_padding("B", "i"), R.IncompleteBlockError,
     r"^decompose_padding: block 'B': the block is not complete: its iteration variable vk is not "
     r"data-parallel$"),
    ("padding-pattern", lambda: mod_of(ROW_SUM), R.decompose_padding("C", "j"), R.PaddingPatternMatchError,
     r"^decompose_padding: block 'C': the block does not match the padding pattern: the stored value is "
     r"not a T.if_then_else of the padding condition$"),
    ("symbolic", lambda: mod_of(PAD), R.loop_partition("j", [2]), R.SymbolicShapeError,
     r"^loop_partition: loop 'j': the loop runs from 0 for n iterations; loop_partition needs a constant"),
    ("partition-sum", lambda: mod_of(PAD), R.loop_partition("i", [8]), R.WrongFactorError,
     r"^loop_partition: loop 'i': the factors sum to 8, which leaves nothing of the loop's extent 8"),
    ("padding", lambda: mod_of(ROW_SUM), R.pad_einsum("B", [2]), R.InvalidPaddingError,
     r"^pad_einsum: block 'B': the padding must be a list of 2 positive ints, one per iteration variable"),
    ("einsum", lambda: mod_of(PAD), R.pad_einsum("P", [3]), R.NonEinsumError,
     r"^pad_einsum: block 'P': the block is not an einsum: its region of X is not one point"),
    ("init-allocation", lambda: mod_of(INIT_SCRATCH), R.decompose_reduction("acc", "k"), R.InitAllocationError,
     r"^decompose_reduction: block 'acc': the init uses S, which the block allocates; the init block, split off, "
     r"would use it outside that allocation$"),
    ("reindex-index-variable", lambda: mod_of(OPAQUE_STORE), R.reindex("block", ("write", 0)),
     R.ReindexIndexVariableError,
     r"^reindex: block 'block': the access to buffer A uses i, which is not an iteration variable of the block"),
    ("non-loop-ancestor", lambda: mod_of(GUARDED_CONSUMER), R.reverse_compute_at("C", "m"),
     R.NonLoopAncestorError,
     r"^reverse_compute_at: block 'C': an if sits between the block and the loops it is taken out of; the block "
     r"would not take it to its new place$"),
    ("loop-dependent-domain", lambda: mod_of(TRIANGULAR), R.transform_block_layout("B", lambda a, b: (b, a)),
     R.LoopDependentDomainError,
     r"^transform_block_layout: block 'B': the domain of vk, 0 for i \+ 1, depends on loop 'i', which the new "
     r"loops replace$"),
]


# compute location
PIPE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = B[vi] + E[vi]
    for i in range(8):
        with T.block("E"):
            vi = T.axis.spatial(8, i)
            E[vi] = B[vi] * T.float32(3)
"""


# a reduction into shared memory that compute_at relaxes over the threads
SHARED_SUM = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((8,), scope="shared")
    for i, k in T.grid(8, 4):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
    for t in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("C"):
            vi = T.axis.spatial(8, t)
            C[vi] = S[vi]
"""


def _pipe(old: str = "", new: str = "") -> IRModule:
    return mod_of(PIPE.replace(old, new))


CASES += [
    ("not_in_same_scope", _pipe, R.compute_at("B", "i"), R.NotInSameScopeError,
     r"^compute_at: block 'B': loop 'i' is an ancestor of block 'B'; the block can only move under a loop"),
    ("not_in_same_scope_nested", lambda: mod_of(NESTED_SCOPE), R.compute_at("C", "j"), R.NotInSameScopeError,
     r"^compute_at: block 'C': the block and loop 'j' must be under the same block scope$"),
    ("not_all_required", _pipe, R.compute_at("B", "i_1"), R.NotAllRequiredBlocksAreVisitedError,
     r"^compute_at: block 'B': compute_at requires all the consumer\(s\) of the block to be under loop 'i_1', and 1 are not: 'E'$"),
    ("insertion_index", lambda: _pipe("E[vi] = B[vi] * T.float32(3)", "E[vi] = A[vi]"),
     R.compute_at("B", "i_1", index=1), R.InvalidInsertionIndexError,
     r"^compute_at: block 'B': index 1 is not valid: it must be -1, -2 or in \[0, 0\]$"),
    ("not_complete_or_reduction", lambda: _pipe("E[vi] = B[vi] * T.float32(3)", "E[vi] = E[vi] + B[vi]"),
     R.reverse_compute_at("E", "i"), R.NotCompleteOrReductionBlockError,
     r"^reverse_compute_at: block 'E': the block is neither a complete block \(it fails condition 3"),
    ("output_block", _pipe, R.compute_inline("D"), R.OutputBlockError,
     r"^compute_inline: block 'D': the block writes D, which its scope does not allocate"),
    ("only_leaf", lambda: mod_of(PIPE.split("    for i in range(8):\n        with T.block(\"D\")")[0]),
     R.compute_inline("B"), R.OnlyLeafError, r"^compute_inline: block 'B': it is the only leaf of scope 'root'"),
    ("stage_pipeline", lambda: _pipe("vi = T.axis.spatial(8, i)\n            B[vi]",
                                     "vi = T.axis.spatial(8, i)\n            T.where(i < 4)\n            B[vi]"),
     R.compute_inline("B"), R.NotStagePipelineError,
     r"^compute_inline: block 'B': block 'D' reads elements of B that block 'B' does not surely write"),
    ("dependence", _pipe, R.reverse_compute_at("E", "i"), R.DependenceViolationError,
     r"^reverse_compute_at: block 'E': moving the block under loop 'i' reorders it with block 'D', "
     r"and one of them writes E, which the other uses$"),
    ("unsupported_region", lambda: mod_of(PIPE.replace("+ E[vi]", "").replace("E[vi] = B[vi] * T.float32(3)",
                                                                                 "E[vi] = B[vi * 2 // 3]")),
     R.reverse_compute_at("E", "i"), R.UnsupportedRegionError,
     r"^reverse_compute_at: block 'E': the block reads B at vi_2 \* 2 // 3, which is not an iteration variable"),
    ("predicate", lambda: mod_of(PIPE.replace("+ E[vi]", "").replace(
        "    for i in range(8):\n        with T.block(\"E\"):\n            vi = T.axis.spatial(8, i)\n"
        "            E[vi] = B[vi] * T.float32(3)",
        "    for i_0, i_1 in T.grid(4, 2):\n        with T.block(\"E\"):\n"
        "            vi = T.axis.spatial(8, i_0 * 2 + i_1)\n            T.where(i_0 < 3)\n"
        "            E[vi] = B[vi]")),
     R.reverse_compute_at("E", "i"), R.NonTrivialPredicateError,
     r"^reverse_compute_at: block 'E': the block's predicate i_0 < 3 does not follow from the domains of its "
     r"iteration variables, and its condition i_0 < 3 cannot be written in them"),
    ("thread_overlap", lambda: mod_of(SHARED_SUM), R.compute_at("S", "t"), R.ThreadOverlapError,
     r"^compute_at: block 'S': the block reads the shared buffer S it writes; not depending on it, it would "
     r"run in every thread of loop 't' \(threadIdx.x\), which share S"),
    ("has_init", lambda: mod_of(TRIANGLE_IN_A_SQUARE), R.compute_inline("C"), R.HasInitBlockError,
     r"^compute_inline: block 'C': the block has an init statement"),
    ("single_read_write", _pipe, R.reverse_compute_inline("D"), R.NotSingleReadWriteBufferError,
     r"^reverse_compute_inline: block 'D': the block reads 2 buffers that its scope writes"),
    ("incomplete", lambda: _pipe("B[vi] = A[vi] * T.float32(2)", "B[vi] = A[vi]\n            B[vi] = B[vi] * T.float32(2)"),
     R.compute_inline("B"), R.IncompleteBlockError,
     r"^compute_inline: block 'B': the block is not a complete block: it fails condition 3"),
    ("body_analysis", lambda: _pipe("B[vi] = A[vi] * T.float32(2)", "B[vi % 4] = A[vi]"),
     R.compute_inline("B"), R.BodyAnalysisError,
     r"^compute_inline: block 'B': the body must be one store B\[\.\.\.\] = f\(\.\.\.\) whose indices are a "
     r"bijective affine map"),
    ("single_producer", _pipe, R.reverse_compute_inline("E"), R.NonSingleProducerError,
     r"^reverse_compute_inline: block 'E': the block must be the only reader of a buffer written by one "
     r"complete block: block 'D' also uses B$"),
    ("opaque", lambda: _pipe("D[vi] = B[vi] + E[vi]", "T.reads(B[vi], E[vi])\n            T.writes(D[vi])\n"
                             "            Bv = T.match_buffer(B[vi], (1,))\n            D[vi] = Bv[0] + E[vi]"),
     R.compute_inline("B"), R.OpaqueAccessError,
     r"^compute_inline: block 'B': the buffer B is used through its data pointer or matched into a block"),
]


# storage: set_scope, storage_align, unsafe_set_dtype, set_axis_separator, rolling_buffer
STAGED = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(4):
        for ax in range(4):
            with T.block("B"):
                vb = T.axis.spatial(10, i * 2 + ax)
                B[vb] = A[vb] * T.float32(2)
        for ax in range(2):
            with T.block("C"):
                vc = T.axis.spatial(8, i * 2 + ax)
                C[vc] = B[vc] + B[vc + 2]
"""
VIEWED = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            V = T.match_buffer(B[vi], (1,))
            with T.block("inner"):
                V[0] = A[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi]
"""
CASES += [  # storage
    ("buffer-index", lambda: mod_of(STAGED), R.set_scope("B", 2, "local"), R.BufferIndexOutOfRangeError,
     r"^set_scope: block 'B': it has 1 write region\(s\), so buffer_index must be in \[0, 1\), got 2$"),
    ("scope-name", lambda: mod_of(STAGED), R.set_scope("B", 0, "lokal"), R.InvalidStorageScopeError,
     r"^set_scope: block 'B': the storage scope 'lokal' is invalid"),
    ("not-allocated", lambda: mod_of(STAGED), R.unsafe_set_dtype("C", 0, "float64"), R.NonAllocatedBufferError,
     r"^unsafe_set_dtype: block 'C': buffer C is not allocated by a block"),
    ("align-factor", lambda: mod_of(STAGED), R.storage_align("B", 0, 0, -4, 0), R.StorageAlignInvalidFactorError,
     r"^storage_align: block 'B': factor must be positive, got -4$"),
    ("align-axis", lambda: mod_of(STAGED), R.storage_align("B", 0, -2, 4, 0), R.StorageAlignAxisOutOfRangeError,
     r"^storage_align: block 'B': buffer B has 1 dimension\(s\), so axis must be in \[-1, 1\), got -2$"),
    ("align-annotation", lambda: R.annotate("B", "buffer_dim_align", "x")(mod_of(STAGED)),
     R.storage_align("B", 0, 0, 4, 0), R.StorageAlignInvalidAnnotationError,
     r"^storage_align: block 'B': its buffer_dim_align annotation 'x' is not a list of"),
    ("separators", lambda: mod_of(STAGED), R.set_axis_separator("B", 0, "write", [2]),
     R.InvalidAxisSeparatorError, r"^set_axis_separator: block 'B': axis_separators must be increasing ints"),
    ("subregion", lambda: mod_of(VIEWED), R.set_axis_separator("inner", 0, "write", [1]),
     R.BufferIsSubregionError, r"^set_axis_separator: block 'inner': buffer V is a match_buffer view"),
    ("output-block", lambda: mod_of(STAGED), R.rolling_buffer("C", 0), R.OutputBlockError,
     r"^rolling_buffer: block 'C': it writes C, which its scope does not allocate: it is an output block$"),
    ("rolling-deps", lambda: mod_of(STAGED.replace("""        for ax in range(2):
            with T.block("C"):""", """        for ax in range(2):
            with T.block("D"):
                vd = T.axis.spatial(10, i * 2 + ax)
                B[vd] = T.float32(0)
        for ax in range(2):
            with T.block("C"):""")), R.rolling_buffer("B", 0), R.RollingBufferDependencyError,
     r"^rolling_buffer: block 'B': block D writes what it writes; only read-after-write dependences are "
     r"allowed$"),
    ("rolling-insertion", lambda: mod_of(TWO_NESTS.replace("C[vj] = A[vj]", "C[vj] = B[vj]").replace(
        "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\"), ",
        "def main(A: T.Buffer((8,), \"float32\"), ").replace("    for i in range(8):",
                                                        "    B = T.alloc_buffer((8,))\n    for i in range(8):")),
     R.rolling_buffer("B", 0), R.RollingBufferInsertionError,
     r"^rolling_buffer: block 'B': the lowest common ancestor of the block and the consumers of B is not a loop"),
    ("rolling-match", lambda: mod_of(STAGED.replace("for ax in range(4)", "for ax in range(2)").replace(
        "B[vc] + B[vc + 2]", "B[vc]")), R.rolling_buffer("B", 0), R.RollingBufferMatchError,
     r"^rolling_buffer: block 'B': no dimension of the region of B written in one iteration slides"),
    ("rolling-cover", lambda: mod_of(STAGED.replace("B[vc] + B[vc + 2]", "B[vc] + B[T.min(vc + 5, 9)]")),
     R.rolling_buffer("B", 0), R.RollingBufferCoverError,
     r"^rolling_buffer: block 'B': block C reads B outside the region the block writes in the same iteration"),
]

# caching (cache_read, cache_write, cache_inplace, reindex, reindex_cache_read/write)
_CACHE_STAGES = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B0"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + A[vi] + A[vi]
"""
_CACHE_WRITERS = _CACHE_STAGES.replace("    for i in range(8):\n        with T.block(\"C\")", """    for i in range(4):
        with T.block("B1"):
            vi = T.axis.spatial(4, i)
            B[vi + 4] = A[vi + 4]
    for i in range(8):
        with T.block("C")""")
_CACHE_GUARDED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(i % 2 == 0)
            B[vi] = T.if_then_else(vi > 0, A[vi - 1], T.float32(0)) + A[vi - 1]
"""
# threads pass their elements through shared memory, in mirror order
_MIRROR_THROUGH_SHARED = """
@T.prim_func
def main(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    S = T.alloc_buffer((8,), "int32", scope="shared")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            S[tx] = A[tx]
            T.tvm_storage_sync("shared")
            B[tx] = S[7 - tx]
"""
_PER_THREAD_BLOCK = """
@T.prim_func
def main(A: T.Buffer((32, 4), "float32"), B: T.Buffer((32, 4), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            with T.block("B_o"):
                vi_o = T.axis.spatial(32, bx * 8 + tx)
                for k in range(4):
                    with T.block("B"):
                        vk = T.axis.spatial(4, k)
                        B[vi_o, vk] = A[vi_o, vk] * T.float32(2)
"""
_CACHE_TWICE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            B[vi] = A[vi] + A[vi + 1]
"""
_CACHE_ROOT = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    with T.block("root"):
        T.reads(A[0:8])
        T.writes(B[0:8])
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
"""
CASES += [
    ("cache-scope", lambda: mod_of(ELEMENTWISE), R.cache_read("B", 0, "vram"), R.InvalidStorageScopeError,
     r"^cache_read: argument storage_scope: the storage scope 'vram' is invalid"),
    ("cache-index", lambda: mod_of(ELEMENTWISE), R.cache_read("B", 1, "shared"), R.BufferIndexOutOfRangeError,
     r"^cache_read: block 'B': the block has 1 read regions, so read_buffer_index 1 is out of range$"),
    ("cache-buffer", lambda: mod_of(ELEMENTWISE), R.cache_write("B", "A", "local"), R.BufferNotAccessedError,
     r"^cache_write: block 'B': buffer A is not a write buffer of the block: it is a read buffer"),
    ("cache-no-scope", lambda: mod_of(_CACHE_ROOT), R.cache_read("root", 0, "local"), R.NoScopeBlockError,
     r"^cache_read: block 'root': the block has no enclosing block to allocate the cache in"),
    ("cache-cover", lambda: mod_of(_CACHE_STAGES), R.cache_read("C", 0, "local"), R.NotRegionCoverError,
     r"^cache_read: block 'root': the region cover of the scope is not complete: block 'C' reads"),
    ("cache-writers", lambda: mod_of(_CACHE_WRITERS), R.cache_write("B0", 0, "local"), R.NotSingleWriteBlockError,
     r"^cache_write: buffer B: the buffer is expected to be written by a single block of the scope, or by "
     r"block 'B0' after all the others, but 2 blocks write it and 'B1' runs last"),
    ("cache-consumer", lambda: mod_of(NESTED_SCOPE.replace("B[vi2, vj] = A[vi2, vj]",
                                                            "B[vi2, vj] = A[vi2, vj] + A[vi2, 0]\n"
                                                            "            C[vi, 1] = A[vi, 1]")),
     R.cache_read("C", 0, "local", ["B"]),
     R.ConsumerNotInScopeError, r"^cache_read: block 'B': the consumer block is not in the scope of block"),
    ("cache-order", lambda: mod_of(TWO_NESTS), R.cache_write("B", 0, "local", ["B"]), R.CacheStageOrderError,
     r"^cache_write: block 'B': the consumer block runs before block 'B' writes buffer B"),
    ("partition-allocate", lambda: mod_of(_ALLOCATING_LOOP), R.loop_partition("i", [None, 7]),
     R.PartitionAllocationError, r"^loop_partition: loop 'i': the loop's body uses buffer B over its own "
                                 r"allocation B_data without declaring it \(T.decl_buffer\)"),
    ("opaque-loop-var", lambda: mod_of(_OPAQUE_TILE), R.compute_at("tile", "k"), R.LoopVariableInBlockError,
     r"^compute_at: block 'tile': the block has no iteration variables and uses loop 'i' around it, which moving "
     r"it under loop 'k' takes it out of; it would name a variable nothing binds"),
    ("cache-decl-scope", lambda: mod_of(_CACHE_DECLARED_VIEW), R.cache_write("B", 0, "local"),
     R.CacheStageScopeError, r"^cache_write: block 'B': buffer B_1 is declared by a T.decl_buffer inside block "
                             r"'root', below where a cache stage goes, which could not name it"),
    ("cache-realized", lambda: mod_of(_CACHE_REALIZED), R.cache_inplace("B", 0, "local"),
     R.CacheStageScopeError, r"^cache_inplace: block 'B': buffer B is realized by a T.realize inside block "
                             r"'root', below where a cache stage goes, which could not name it"),
    ("cache-address", lambda: mod_of(_ADDRESS_VIEW), R.cache_read("row", 0, "local"), R.OpaqueAccessError,
     r"^cache_read: block 'row': block 'row' takes the address of B\[vi, 0\]; what it reaches through that "
     r"pointer is not in its declared regions of B, so the copy would miss it"),
    ("read-at-address", lambda: mod_of(_ADDRESS_VIEW), R.read_at("i", "row", 0, "local"), R.OpaqueAccessError,
     r"^read_at: block 'row': loop 'i''s body reaches buffer B other than by its loads and stores: the address "
     r"of B\[vi, 0\] is taken; that access would not see the copy"),
    ("cache-allocated-view", lambda: mod_of(_CACHE_ALLOCATED_VIEW), R.cache_read("B", 0, "shared"),
     R.CacheStageScopeError, r"^cache_read: block 'B': buffer A is a view of the T.allocate of A_data inside "
                             r"block 'root', below where a cache stage goes, which could not name it"),
    ("decompose-empty", lambda: mod_of(_EMPTY_REDUCTION), R.decompose_reduction("B", "k"), R.ReductionStartError,
     r"^decompose_reduction: block 'B': the loop 'l' may run no iteration \(its extent k may be zero\), and where "
     r"it does not, neither does the block nor its init; the extent names loop 'k', which the init leaves out, so "
     r"no condition before the loop can say when the init runs"),
    ("blockize-empty", lambda: mod_of(_NESTED_EMPTY), R.blockize("i"), R.ReductionStartError,
     r"^blockize: loop 'i': block 'B': loop 'l' may run no iteration \(its extent k may be zero\), and where it does "
     r"not, neither does the block nor its init; the extent reads loop 'k', which the new block's init does not "
     r"run, so no condition on it can say when the init runs"),
    ("rfactor-opaque", lambda: mod_of(_OPAQUE_SUM), R.rfactor("k_1", 0), R.LoopVariableInBlockError,
     r"^rfactor: block 'C': the block has no iteration variables and uses loop 'j' around it; the rfactor block, "
     r"under new loops, would name a variable nothing binds"),
    ("decompose-init-view", lambda: mod_of(_INIT_VIEW), R.decompose_reduction("R", "j0"), R.InitAllocationError,
     r"^decompose_reduction: block 'R': the init uses BB, which the block's match_buffer declares as a view of "
     r"B\[i\]; the init block, split off, would use it where nothing declares it"),
    ("blockize-init-view", lambda: mod_of(_INIT_VIEW.replace("T.serial(4, 8)", "range(8)")), R.blockize("j0"), R.InitAllocationError,
     r"^blockize: loop 'j0': the init uses BB, which the block's match_buffer declares as a view of B\[i\]; the "
     r"new block's init, lifted out of it, would use it where nothing declares it"),
    ("pad-division", lambda: mod_of(_DIVIDING), R.pad_einsum("C", [4]), R.PaddedDivisionError,
     r"^pad_einsum: block 'C': the block divides by B\[vi\], which the iterations the padding adds read from the "
     r"padding \(zeros\) or at padded indices: they would divide by zero"),
    ("rfactor-view", lambda: mod_of(_INIT_VIEW.replace("T.serial(4, 8)", "range(8)")), R.rfactor("j0", 0),
     R.RFactorNotApplicableError,
     r"^rfactor: block 'R': the block writes its reduction through BB, a match_buffer view of B\[i\]; rfactor "
     r"needs the reduction written to a buffer of the scope"),
    ("merge-mixed-widths", lambda: mod_of(_MIXED_WIDTH_NESTS), R.merge("i", "j"), R.DependenceViolationError,
     r"^merge: 'i', 'j': the nests of loops 'i' and 'j' both use buffer B, which one of them writes, and different "
     r"iterations of the merged nest may meet at one element of it"),
    ("decompose-init-reads", lambda: mod_of(_INIT_READS_STAGED), R.decompose_reduction("S", "i"),
     R.InitPlacementError, r"^decompose_reduction: block 'S': block 'copy' under loop 'i' writes Bg, which the init "
                           r"reads: placed before the loop, the init would read what it held before"),
    ("cache-const-view", lambda: mod_of(_CACHE_CONST_VIEW), R.cache_read("C1", 1, "global"),
     R.CacheStageScopeError, r"^cache_read: block 'C1': buffer K is a view of the T.allocate_const of K_data inside "
                             r"block 'root', below where a cache stage goes, which could not name it"),
    ("cache-read-first", lambda: mod_of(IN_PLACE), R.reindex_cache_write("B", 0, "local", lambda vi: (vi,)),
     R.CacheWriteReadBeforeWriteError,
     r"^reindex_cache_write: block 'B': the block reads B\[vi\] before writing"),
    ("cache-partial", lambda: mod_of(UNDER_AN_IF), R.reindex_cache_write("B", 0, "local", lambda vi: (vi,)),
     R.CacheWritePartialError, r"^reindex_cache_write: block 'B': the block may not write every element of "
                               r"buffer B"),
    ("layout-padding", lambda: mod_of(ELEMENTWISE), R.transform_layout("B", ("write", 0), lambda i, j: (i // 3, i % 3, j)),
     R.TransformationIntroducesPaddingError,
     r"^transform_layout: block 'B': the index map does not take the shape \(8, 8\) of buffer B one to one"),
    ("layout-pad-type", lambda: mod_of(ELEMENTWISE),
     R.transform_layout("B", ("write", 0), lambda i, j: (i // 3, i % 3, j), pad_value=0),
     R.TransformationPaddingTypeError,
     r"^transform_layout: block 'B': buffer B has elements of type float32, but the pad value 0 is of type int32"),
    ("layout-pad-load", lambda: mod_of(ELEMENTWISE),
     R.transform_layout("B", ("write", 0), lambda i, j: (i // 3, i % 3, j),
                        pad_value=((Var("p0"), Var("p1"), Var("p2")),
                                   (BufferLoad(decl_buffer((1,), "float32", "other"), [IntImm("int32", 0)]),))),
     R.TransformationPaddingExpressionError,
     r"^transform_layout: block 'B': the pad value may read only buffer B, which is transformed, but it reads "
     r"other\[0\]"),
    ("layout-vector", lambda: mod_of(ELEMENTWISE.replace("B[vi, vj] = A[vi, vj] * T.float32(2)",
                                                         "B[vi, 0:4] = A[vi, 0:4]")),
     R.transform_layout("B", ("read", 0), lambda i, j: (j, i)), R.UnsupportedLayoutError,
     r"^transform_layout: block 'B': buffer A is accessed as a vector"),
    ("block-layout-binding", lambda: R.split("i", [2, 4])(mod_of(ELEMENTWISE)),
     R.transform_block_layout("B", lambda i, j: (j, i)), R.NotTrivialBindingError,
     r"^transform_block_layout: block 'B': the block's iteration variables are not bound to the loops"),
    ("block-layout-bijective", lambda: mod_of(ELEMENTWISE), R.transform_block_layout("B", lambda i, j: (i,)),
     R.NotBijectiveAffineIndexMapError, r"^transform_block_layout: block 'B': the index map \(i,\) is not"),
    ("block-layout-opaque", lambda: mod_of(ROW_SUM), R.transform_block_layout("B", lambda i, k: (i * 10 + k,)),
     R.OpaqueNewIterTypeError, r"^transform_block_layout: block 'B': the new iteration variable i \* 10 \+ k "
                               r"mixes"),
    ("blockize-divide", lambda: R.reorder("i_1", "i_0")(R.split("i", [2, 4])(mod_of(ELEMENTWISE))),
     R.blockize("i_0"), R.SubspaceNotDivisibleError,
     r"^blockize: loop 'i_0': block 'B': the binding vi = i_0 \* 4 \+ i_1 does not divide at loop 'i_0'"),
    ("tensorize-mismatch", lambda: mod_of(ELEMENTWISE), R.tensorize(R.LoopRef("j"), _ROW_ADD),
     R.TensorIntrinMismatchError,
     r"^tensorize: loop 'j': block 'B_o' does not compute what the intrinsic's description computes: "
     r"A\[vi_o, vj_i\] \* T.float32\(2.0\) is not of the form of the description's A\[vj\] \+ T.float32\(1.0\)"),
    ("tensorize-window", lambda: mod_of(_PAD_BLOCK), R.tensorize("pad_o", _pad_intrin()),
     R.TensorizeWindowOutOfBoundsError,
     r"^tensorize: block 'pad_o': the window of buffer X the intrinsic's W1 sees runs over \[-1, 6\] in dimension 0, "
     r"past its extent 6$"),
    ("blockize-siblings", lambda: mod_of(BLOCK_RUNS), R.blockize(["B", "E"]), R.BlocksNotSiblingsError,
     r"^blockize: blocks 'B', 'E': the blocks' loop nests are items of different sequences of statements"),
    ("blockize-consecutive", lambda: mod_of(BLOCK_RUNS), R.blockize(["B", "D"]), R.BlocksNotConsecutiveError,
     r"^blockize: blocks 'B', 'D': 1 other statement\(s\) stand between the blocks' loop nests"),
    ("blockize-outer", lambda: mod_of(BLOCK_RUNS), R.blockize(["B", "C"]), R.OuterBindingMismatchError,
     r"^blockize: blocks 'B', 'C': block 'C''s iteration variable vi_1 reads the loops above the blocks as 0 "
     r"\(extent 1, DataPar\), block 'B''s vi as m \(extent 2, DataPar\)"),
    ("blockize-init", lambda: mod_of(TWO_SUMS), R.blockize(["S", "T"]), R.OuterReductionInitError,
     r"^blockize: blocks 'S', 'T': block 'S' reduces over the loops above the blocks \(vk\), and its init "
     r"would run on every iteration of them"),
    ("cache-inplace", lambda: mod_of(ELEMENTWISE), R.cache_inplace("B", 0, "local"), R.NotReadWriteError,
     r"^cache_inplace: block 'B': the block does not both read and write buffer A$"),
    ("reindex-leaf", lambda: mod_of(NESTED_SCOPE), R.reindex("outer", ("read", 0)), R.NotLeafBlockError,
     r"^reindex: block 'outer': the block is not a leaf block"),
    ("reindex-access", lambda: mod_of(_CACHE_TWICE), R.reindex("B", ("read", 0)), R.InvalidBufferAccessError,
     r"^reindex: block 'B': buffer A should be accessed with the same indices everywhere"),
    ("reindex-chain", lambda: mod_of(SIBLINGS), R.reindex("B", ("read", 0)), R.ReindexNotChainError,
     r"^reindex: block 'B': the block must sit under a chain of loops"),
    ("reindex-written", lambda: mod_of(IN_PLACE), R.reindex("B", ("read", 0)), R.ReindexReadWrittenError,
     r"^reindex: block 'B': the block also writes buffer B"),
    ("reindex-bounds", lambda: mod_of(_CACHE_GUARDED), R.reindex("B", ("read", 0)), R.ReindexOutOfBoundsError,
     r"^reindex: block 'B': the index vi - 1 of buffer A is not provably inside the buffer"),
    ("reindex-divisor", lambda: mod_of(GUARDED_DIVISION),
     R.reindex_cache_read("B", 0, "local", lambda vi: (vi,)), R.ReindexUnsafeIndexError,
     r"^reindex_cache_read: block 'B': the index of buffer A divides by vi - 3, which is not provably nonzero"),
    ("unsafe-region", lambda: R.cache_read("B", 0, "local")(mod_of(GUARDED_DIVISION)),
     R.compute_at("A_local", "i"), R.UnsafeRegionError,
     r"^compute_at: block 'A_local': the region the block is computed over divides by i - 3, which is not "
     r"provably nonzero"),
    ("shared-per-thread", lambda: mod_of(_PER_THREAD_BLOCK), R.cache_read("B", 0, "shared"),
     R.SharedScopeUnderThreadError,
     r"^cache_read: block 'B': the cache of buffer A would be a 'shared' buffer allocated in block 'B_o', which "
     r"every thread of loop 'tx' \(bound to threadIdx.x\) runs; each thread would store its own values in the "
     r"same elements of that one buffer \(a data race\)"),
    ("reindex-point", lambda: mod_of(_CACHE_TWICE), R.reindex_cache_read("B", 0, "local", lambda vi: (vi,)),
     R.NotSinglePointAccessError, r"^reindex_cache_read: block 'B': the region A\[vi:vi \+ 2\] the block"),
    ("reindex-match", lambda: mod_of(ELEMENTWISE), R.reindex_cache_read("B", 0, "local", lambda vi, vj: (vi,)),
     R.ReindexCacheReadWriteNotMatchError,
     r"^reindex_cache_read: block 'B': the block iteration variable vj appears in \[vi, vj\] but not in"),
    ("reindex-collision", lambda: mod_of(ELEMENTWISE),
     R.reindex_cache_read("B", 0, "local", lambda vi, vj: (vi * 2 + vj,)), R.IndexMapCollisionError,
     r"^reindex_cache_read: block 'B': the index map sends different elements of buffer A to one element of the "
     r"cache: \(vi, vj\) = \(0, 2\) reads \[0, 2\] and \(vi, vj\) = \(1, 0\) reads \[1, 0\], both cached at \[2\]"),
    ("view-scope", lambda: mod_of(_VIEWED), R.cache_read("B", 0, "shared"), R.ViewScopeMismatchError,
     r"^cache_read: block 'B': it views buffer A through match_buffer V in scope 'global'; redirected to a "
     r"buffer in scope 'shared'"),
]


# a loop whose body writes B outside any block, reads A in one block, then
# writes it in another
_READ_THEN_WRITE = """
@T.prim_func
def main(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in range(2):
        B[i] = A[i + 4]
        for j in range(4):
            with T.block("R"):
                vi = T.axis.spatial(8, i * 4 + j)
                B[vi] = A[vi]
        for k in range(4):
            with T.block("W"):
                vi = T.axis.spatial(8, i * 4 + k)
                A[vi] = 0
"""

CASES += [  # read_at, write_at
    ("not-under-loop", lambda: mod_of(_READ_THEN_WRITE), R.read_at("k", "R", 0, "local"), R.BlockNotUnderLoopError,
     r"^read_at: block 'R': block 'R' is not under loop 'k'; read_at copies what the loop's body reads$"),
    ("write-after-read", lambda: mod_of(_READ_THEN_WRITE), R.read_at("i", "R", 0, "local"),
     R.ReadWriteAtOrderError,
     r"^read_at: block 'R': block 'W' writes A at or after the first read of A in loop 'i''s body"),
    ("undeclared", lambda: mod_of(_READ_THEN_WRITE), R.write_at("i", "R", 0, "local"), R.UndeclaredAccessError,
     r"^write_at: block 'R': loop 'i''s body accesses B outside any block \(B\[i\] = A\[i \+ 4\]\)"),
]

def _too_deep() -> IRModule:
    """corner_sources' two stages with 1,500 additions made by hand at the
    bottom of the consumer's value: deeper than the parser reads, and than
    Python's recursion limit lets a rewrite walk."""
    from tirfun.analysis.traversal import transform
    from tirfun.nodes import Add, BufferStore, FloatImm
    from tirfun.nodes.base import with_fields

    func = from_source(TWO_STAGES)

    def deepen(n):
        if isinstance(n, BufferStore) and n.buffer.name == "C":
            value = n.value
            for _ in range(1500):
                value = Add(FloatImm("float32", 1.0), value)
            return BufferStore(n.buffer, value, n.indices)
        return n

    return IRModule({"main": with_fields(func, body=transform(func.body, deepen))})


CASES += [  # a module deeper than tirfun takes
    ("too-deep", _too_deep, R.compute_inline("B"), R.NestingTooDeepError,
     r"^compute_inline: the module: the program nests too deeply for tirfun to take"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_error_is_raised_with_its_message(case):
    _, make, rewrite, cls, pattern = case
    mod = make()
    with pytest.raises(ScheduleError) as info:
        rewrite(mod)
    err = info.value
    assert type(err) is cls
    first = str(err).split("\n")[0]
    assert re.search(pattern, first), first
    assert rewrite.primitive in first


# raised by a Schedule, not by a rewrite record: test_accept.py::test_remove_rv
SCHEDULE_ONLY = {R.RemovedLoopRefError, R.RemovedBlockRefError}


def test_every_error_class_has_a_case():
    covered = {c[3] for c in CASES} | SCHEDULE_ONLY
    every = {getattr(R, name) for name in R.__all__
             if name.endswith("Error") and getattr(R, name) is not R.RewriteError}
    assert every - covered == set()


def test_errors_derive_from_schedule_error():
    for name in R.__all__:
        if name.endswith("Error"):
            assert issubclass(getattr(R, name), ScheduleError)


def test_detail_shows_the_offending_script_and_fast_does_not():
    mod = bound(ELEMENTWISE)
    err = R.split("i", [2, 4]).violations(mod)[0]
    detail = str(err)
    assert 'for i in T.thread_binding(8, thread="threadIdx.x"):' in detail
    assert 'with T.block("B"):' in detail
    assert str(err.with_level("fast")) == detail.split("\n")[0]
    assert str(err.with_level("none")) == ("LoopHasAnnotationOrThreadBindingError: The loop carries "
                                           "annotations or a thread binding, which the primitive cannot "
                                           "carry over to the loops it creates.")


def test_block_errors_show_the_binding():
    err = R.parallel("i").violations(mod_of(IN_PLACE))[0]
    assert "vi = T.axis.spatial(8, i)" in str(err)


def test_violations_lists_independent_failures_and_raises_nothing():
    mod = bound(SHIFTED)
    errors = R.split("i", [2, 4]).violations(mod)
    assert [type(e) for e in errors] == [R.LoopHasAnnotationOrThreadBindingError, R.LoopNotStartWithZeroError]
    with pytest.raises(R.LoopHasAnnotationOrThreadBindingError):
        R.split("i", [2, 4])(mod)


def test_violations_is_empty_for_a_legal_rewrite():
    assert R.split("i", [2, 4]).violations(mod_of(ELEMENTWISE)) == []


def test_errors_pickle_with_their_message():
    import pickle

    err = R.split("x", [2]).violations(mod_of(ELEMENTWISE))[0]
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is type(err) and str(again) == str(err)
