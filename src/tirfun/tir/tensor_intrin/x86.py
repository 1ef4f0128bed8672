"""x86 tensor intrinsics, as TVM's ``tvm.tir.tensor_intrin.x86`` registers
them: a 16x4 dot product of unsigned bytes with signed bytes into 32-bit
sums (``C[i] += sum_k A[k] * B[i, k]`` over ``i < 16, k < 4``), done by one
AVX512-VNNI ``vpdpbusd`` (``VNNI_DOT_16x4_INTRIN``) or by AVX512-BW's
``pmaddubsw`` and ``pmaddwd`` (``AVX512_DOT_16x4_INTRIN``).

Importing the module registers both names. ``B`` is read 64 lanes at a
time from its first element, row after row (``B[0, 0:64]``), as TVM's
``vload`` reads it. Note that ``pmaddubsw`` saturates each pair of
products to 16 bits, as the instruction does: where both bytes of a pair
are large (255 * -128 twice), the AVX512 intrinsic computes another sum
than its description; the VNNI one is exact.
"""

from ...script import tir as T
from . import TensorIntrin


@T.prim_func
def dot_product_16x4_u8i8i32_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
    B = T.match_buffer(b, (16, 4), "int8", offset_factor=1)
    C = T.match_buffer(c, (16,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        for i in T.serial(0, 16):
            for k in T.serial(0, 4):
                with T.block("update"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    C[vi] = C[vi] + T.cast(A[vk], "int32") * T.cast(B[vi, vk], "int32")


@T.prim_func
def dot_product_16x4_u8i8i32_vnni(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
    B = T.match_buffer(b, (16, 4), "int8", offset_factor=1)
    C = T.match_buffer(c, (16,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        A_i32: T.int32 = T.reinterpret("int32", A[0:4])
        B_i32x16: T.int32x16 = T.reinterpret("int32x16", B[0, 0:64])
        C[0:16] = T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), C[0:16],
                                          T.Broadcast(A_i32, 16), B_i32x16)


@T.prim_func
def dot_product_16x4_u8i8i32_avx512(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
    B = T.match_buffer(b, (16, 4), "int8", offset_factor=1)
    C = T.match_buffer(c, (16,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        A_u8x64: T.uint8x64 = T.reinterpret("uint8x64", T.Broadcast(T.reinterpret("int32", A[0:4]), 16))
        pairs: T.int16x32 = T.call_llvm_pure_intrin("int16x32", "llvm.x86.avx512.pmaddubs.w.512", T.uint32(2),
                                                    A_u8x64, B[0, 0:64])
        C[0:16] = C[0:16] + T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.pmaddw.d.512", T.uint32(2),
                                                    pairs, T.Broadcast(T.int16(1), 32))


#: TVM's name of the VNNI 16x4 dot product
VNNI_DOT_16x4_INTRIN = "dot_16x4_vnni"
#: TVM's name of the AVX512-BW 16x4 dot product
AVX512_DOT_16x4_INTRIN = "dot_16x4_avx512"

TensorIntrin.register(VNNI_DOT_16x4_INTRIN, dot_product_16x4_u8i8i32_desc, dot_product_16x4_u8i8i32_vnni,
                      override=True)
TensorIntrin.register(AVX512_DOT_16x4_INTRIN, dot_product_16x4_u8i8i32_desc, dot_product_16x4_u8i8i32_avx512,
                      override=True)

__all__ = ["VNNI_DOT_16x4_INTRIN", "AVX512_DOT_16x4_INTRIN", "dot_product_16x4_u8i8i32_desc",
           "dot_product_16x4_u8i8i32_vnni", "dot_product_16x4_u8i8i32_avx512"]
