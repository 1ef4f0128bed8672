"""TVMScript sources of nests the program generators seldom make, shared by
the unit tests of several primitives."""

# a triangular reduction: the inner loop runs i + 1 times, and the block's
# reduction variable has the domain [0, i + 1), an expression of the outer
# loop (TVM's well-formedness check leaves block domains alone)
TRIANGULAR = """
@T.prim_func
def main(A: T.Buffer((5, 10), "int32"), B: T.Buffer((5,), "int32"), C: T.Buffer((5,), "int32")):
    for i in range(5):
        for k in range(i + 1):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
    for j in range(5):
        with T.block("C"):
            vj = T.axis.spatial(5, j)
            C[vj] = B[vj] * 2
"""

# a loop outside every block whose extent loads from the intermediate
# buffer B: the index of the blocks that mention B does not list it
LOOSE_READ = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32"), D: T.Buffer((4,), "int32")):
    B = T.alloc_buffer((4,), "int32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.max(T.min(A[vi], 4), 0)
    for j in range(4):
        with T.block("C"):
            vj = T.axis.spatial(4, j)
            C[vj] = B[vj] + 1
    for k in range(B[1]):
        with T.block("D"):
            vk = T.axis.spatial(4, k)
            D[vk] = A[vk]
"""

# block P writes P later in each iteration of i, for the readers of the
# next iteration: B and Q read what the previous iteration wrote
WRITTEN_LATER = """
@T.prim_func
def main(A: T.Buffer((4, 8), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4, 8), "int32"),
         P: T.Buffer((4, 8), "int32")):
    for i in range(4):
        for k in range(8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + P[vi, vk]
        for j in range(8):
            with T.block("Q"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + P[vi, vj]
        for j in range(8):
            with T.block("P"):
                vi, vj = T.axis.remap("SS", [i, j])
                P[(vi + 1) % 4, vj] = A[vi, vj] * 2
"""

# the consumer runs under a condition inside its loop
GUARDED_CONSUMER = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for m in range(4):
        with T.block("B"):
            vm = T.axis.spatial(4, m)
            B[vm] = A[vm]
    for n in range(4):
        if n < 3:
            with T.block("C"):
                vn = T.axis.spatial(4, n)
                C[vn] = B[vn]
"""

# the same with B an intermediate buffer the function allocates
GUARDED_CONSUMER_OF_AN_INTERMEDIATE = GUARDED_CONSUMER.replace(
    'B: T.Buffer((4,), "float32"), ', "").replace(
    "    for m in range(4):", "    B = T.alloc_buffer((4,))\n    for m in range(4):")

# the producer stores four elements per instance (a vector store)
VECTOR_PRODUCER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(2):
        with T.block("B"):
            vi = T.axis.spatial(2, i)
            B[vi * 4:vi * 4 + 4] = A[vi * 4:vi * 4 + 4]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
"""

# an opaque block indexing its buffer by the loop's variable
OPAQUE_STORE = """
@T.prim_func
def main(A: T.Buffer((14,), "int32")):
    for i in range(14):
        with T.block("block"):
            T.reads()
            T.writes(A[i])
            A[i] = 42
"""

# each instance reads the element the previous one wrote
RECURRENCE = """
@T.prim_func
def main(B: T.Buffer((8,), "float32")):
    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            T.reads(B[vi])
            T.writes(B[vi + 1])
            B[vi + 1] = B[vi] * T.float32(2.0)
"""

# a loop that feeds no iteration variable visits each instance of the
# reduction twice; its init (vk of extent 1 always at its start) runs at both
REPEATED_REDUCTION = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i, u in T.grid(4, 2):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(1, 0)
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi]
"""

# the reduction's init uses a buffer the block allocates
INIT_SCRATCH = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32")):
    for k in range(4):
        with T.block("acc"):
            vk = T.axis.reduce(4, k)
            T.reads(A[vk])
            T.writes(B[0])
            S = T.alloc_buffer((1,))
            with T.init():
                S[0] = T.float32(0.0)
                B[0] = S[0]
            S[0] = A[vk]
            B[0] = B[0] + S[0]
"""

# every index int64; the consumer reads the producer at 0 - vj
WIDE_STAGES = """
@T.prim_func
def main(A: T.Buffer((T.int64(2), T.int64(1), T.int64(2)), "float32"), C: T.Buffer((T.int64(1),), "float32"),
         D: T.Buffer((T.int64(2), T.int64(1), T.int64(1)), "float32")):
    B = T.alloc_buffer((T.int64(2), T.int64(1), T.int64(1)))
    for j, i, l in T.grid(T.int64(2), T.int64(1), T.int64(1)):
        with T.block("B"):
            vj, vi, vl = T.axis.remap("SSS", [j, i, l])
            B[vj, vi, vl] = C[vl] + A[T.int64(0), vi, vj]
    for i_1, j_1, l_1 in T.grid(T.int64(2), T.int64(1), T.int64(1)):
        with T.block("D"):
            vi_1, vj_1, vl_1 = T.axis.remap("SSS", [i_1, j_1, l_1])
            D[vi_1, vj_1, vl_1] = B[vi_1, T.int64(0) - vj_1, vl_1]
"""


# a loop shifted by a loop above it, and one clipped by them as compute_at
# leaves a partial tile: ranges that read the loops around them
RANGES_READING_OUTER_LOOPS = """
@T.prim_func
def main(A: T.Buffer((12,), "float32")):
    for a, b in T.grid(2, 2):
        for ax0 in range(T.min((a * 2 + b) * 2 + 1, 4) - (a * 2 + b) * 2 + 1):
            with T.block("C"):
                vi = T.axis.spatial(5, (a * 2 + b) * 2 + ax0)
                A[vi] = T.float32(0.5)
        for c in range(a, a + (b * 2 + 1) * 3):
            with T.block("D"):
                vj = T.axis.spatial(12, c)
                A[vj] = T.float32(1.5)
"""

# the block divides by vi - 3 only where that is not zero
GUARDED_DIVISION = """
@T.prim_func
def main(A: T.Buffer((64,), "int32"), B: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.if_then_else(vi != 3, A[vi * 2 + 40 // (vi - 3) % 4 + 8], 0)
"""

# a function without blocks: loop_partition makes blocks of the second loop,
# while the first still writes C with plain stores
PLAIN_PRODUCER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    C = T.Buffer((8,))
    T.realize(C[0:8], "global")
    for i in range(8):
        C[i] = A[i] + T.float32(1.0)
    for i_1 in range(8):
        B[i_1] = C[i_1] * T.float32(2.0)
"""

# a copy A_global and a block B reading it, both under one if
COPY_AND_READER_UNDER_ONE_IF = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    A_global = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        if i < 6:
            with T.block("A_global"):
                vi, vj = T.axis.remap("SS", [i, j])
                A_global[vi, vj] = A[vi, vj]
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A_global[vi, vj] * T.float32(2)
"""

# C reads A before block A writes it
READ_BEFORE_WRITE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi]
    for i in range(8):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            A[vi] = B[vi]
"""

# a block with an init whose variables are all spatial, but whose output C
# is indexed by vj alone: each vi re-initialises C[vj] and adds one row
# (C ends as twice the last row of A); D copies C out
SPATIAL_INIT = """
@T.prim_func
def main(A: T.Buffer((3, 8), "float32"), D: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((8,))
    for i, j in T.grid(3, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            with T.init():
                C[vj] = T.float32(0)
            C[vj] = C[vj] + A[vi, vj] * T.float32(2)
    for k in range(8):
        with T.block("D"):
            vk = T.axis.spatial(8, k)
            D[vk] = C[vk]
"""

# an 8 x 8 elementwise block, B = A * 2
ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""

# a triangle summed over a square domain: k runs i + 1 times, its block
# variable has the constant domain of 8 columns
TRIANGLE_IN_A_SQUARE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in range(i + 1):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(8, k)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
"""

# B, then B2 adding A to it under a condition, then C reading it
STAGED_UNDER_IF = """
@T.prim_func
def main(A: T.Buffer((4, 3), "int8"), C: T.Buffer((4, 3), "int8"), flag: T.int32):
    B = T.alloc_buffer((4, 3), "int8")
    for i, j in T.grid(4, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    if flag > 0:
        for i_1, j_1 in T.grid(4, 3):
            with T.block("B2"):
                vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
                B[vi_1, vj_1] = B[vi_1, vj_1] + A[vi_1, vj_1]
    for i_2, j_2 in T.grid(4, 3):
        with T.block("C"):
            vi_2, vj_2 = T.axis.remap("SS", [i_2, j_2])
            C[vi_2, vj_2] = B[vi_2, vj_2] + B[vi_2, vj_2]
"""


# a constant table declared at the top of the root block's body (TVM's
# T.allocate_const with a T.decl_buffer view of it)
CONSTANT_TABLE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    K = T.allocate_const([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5], "float32", [8])
    K_buf = T.decl_buffer((8,), data=K)
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * K_buf[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + K_buf[7 - vi]
"""


# a producer and its consumer, elementwise
TWO_STAGES = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

# a loop whose bounds name the loop around it: j runs from i
MOVING_DOMAIN = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i in range(4):
        for j in range(i, i + 4):
            for k in range(4):
                with T.block("B"):
                    vj = T.axis.spatial(8, j)
                    vk = T.axis.spatial(4, k)
                    B[vj, vk] = A[vj, vk]
"""

# a block every other iteration of its loop runs, under an if: a copy that
# re-runs the loop without the if would run the others too
UNDER_AN_IF = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        if i % 2 == 0:
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
"""
