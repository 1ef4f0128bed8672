"""DLPack on the CPU: arrays pass in and out of tirfun without copies."""

import numpy as np
import pytest

import tirfun
from tirfun.errors import ArgumentError
from tirfun.numpy_dtypes import bfloat16

ADD_ONE = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
'''


class Foreign:
    """An array of another library: only the DLPack protocol, nothing numpy knows."""

    def __init__(self, array, device=(1, 0)):
        self._array = array
        self._device = device

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._device


def test_from_dlpack_shares_memory_with_a_numpy_array():
    x = np.arange(4, dtype="float32")
    a = tirfun.nd.from_dlpack(x)
    assert a.shape == (4,) and a.dtype == "float32" and a.device == tirfun.cpu(0)
    a.host_array()[0] = 5
    assert x[0] == 5
    x[1] = 9
    assert a.numpy()[1] == 9


def test_an_ndarray_exports_itself_without_a_copy():
    a = tirfun.nd.array(np.arange(6, dtype="int32").reshape(2, 3))
    assert a.__dlpack_device__() == (1, 0)
    y = np.from_dlpack(a)
    y[1, 2] = -1
    assert a.numpy()[1, 2] == -1
    a.copyfrom(np.zeros((2, 3), "int32"))
    assert not y.any()


def test_from_dlpack_of_any_protocol_object_and_of_an_ndarray():
    x = np.arange(3, dtype="int64")
    a = tirfun.nd.from_dlpack(Foreign(x))
    a.host_array()[2] = 42
    assert x[2] == 42
    b = tirfun.nd.from_dlpack(a)
    b.host_array()[0] = 7
    assert x[0] == 7


def test_a_built_module_takes_dlpack_arrays_directly():
    rt = tirfun.build(tirfun.script.from_source(ADD_ONE), target="llvm")
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    rt(Foreign(a), Foreign(b))
    np.testing.assert_array_equal(b, a + 1)


def test_a_built_module_checks_dlpack_arguments_as_any_other():
    rt = tirfun.build(tirfun.script.from_source(ADD_ONE), target="llvm")
    with pytest.raises(ArgumentError, match="parameter A: expected dtype float32, got float64"):
        rt(Foreign(np.zeros(8)), Foreign(np.zeros(8, "float32")))
    with pytest.raises(ArgumentError, match=r"parameter B: dimension 0 must be 8, got 4"):
        rt(Foreign(np.zeros(8, "float32")), Foreign(np.zeros(4, "float32")))
    with pytest.raises(ArgumentError, match="parameter A: the array is on cuda\\(0\\), the "
                       "function runs on cpu\\(0\\)"):
        rt(Foreign(np.zeros(8, "float32"), device=(2, 0)), np.zeros(8, "float32"))
    with pytest.raises(ArgumentError, match="parameter B: expected an array .*any DLPack array"):
        rt(np.zeros(8, "float32"), object())


def test_device_type_codes():
    from tirfun.runtime import dlpack

    assert dlpack.DEVICE_TYPES == {1: "cpu", 2: "cuda"}
    # GPU arrays are taken over through DLPack's C structures; a producer
    # whose capsule contradicts its device is refused
    with pytest.raises(ArgumentError, match="says it lives on cuda\\(0\\), but its DLPack tensor "
                       "is on device type 1"):
        tirfun.nd.from_dlpack(Foreign(np.zeros(2), device=(2, 0)))
    with pytest.raises(ArgumentError, match="DLPack device type 7, which tirfun does not know"):
        tirfun.nd.from_dlpack(Foreign(np.zeros(2), device=(7, 0)))
    with pytest.raises(ArgumentError, match="expected an array with __dlpack__"):
        tirfun.nd.from_dlpack([1, 2, 3])


def test_bfloat16_cannot_pass_through_numpys_dlpack():
    # numpy refuses DLPack's kDLBfloat both ways: a numpy array of bfloat16 is
    # no producer (say so rather than fail inside numpy), and numpy as the
    # consumer of an NDArray's bfloat16 capsule refuses it itself
    with pytest.raises(BufferError):
        np.zeros(2, bfloat16()).__dlpack__()
    with pytest.raises(ArgumentError, match=r"bfloat16 arrays cannot pass through numpy's DLPack "
                                            r"export.*type code 4"):
        tirfun.nd.from_dlpack(np.zeros(2, bfloat16()))
    with pytest.raises((BufferError, RuntimeError), match="dtype"):
        np.from_dlpack(tirfun.nd.array(np.zeros(2, bfloat16())))


def test_export_refuses_a_stream_on_the_cpu():
    with pytest.raises(ArgumentError, match="has no stream"):
        tirfun.nd.array(np.zeros(2, "float32")).__dlpack__(stream=1)


def test_torch_cpu_tensors_pass_both_ways():
    torch = pytest.importorskip("torch")
    t = torch.arange(8, dtype=torch.float32)
    a = tirfun.nd.from_dlpack(t)
    a.host_array()[0] = 100
    assert t[0].item() == 100
    back = torch.from_dlpack(a)
    back[1] = -3
    assert a.numpy()[1] == -3
    rt = tirfun.build(tirfun.script.from_source(ADD_ONE), target="llvm")
    out = torch.zeros(8, dtype=torch.float32)
    rt(t, out)
    assert out.tolist() == (t + 1).tolist()


def test_tvm_spellings_of_from_dlpack():
    from tirfun.compat import tvm

    x = np.arange(3, dtype="float32")
    for make in (tvm.nd.from_dlpack, tvm.runtime.from_dlpack):
        a = make(x)
        a.host_array()[0] = 11
        assert x[0] == 11
        x[0] = 0


NARROW = {"float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8), "float4_e2m1fn": (17, 4),
          "bfloat16": (4, 16)}


def _capsule_dtype(capsule):
    """(code, bits, lanes, flags) of a DLPack capsule, read as DLPack 1.1 lays it out."""
    import ctypes

    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if api.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        # version (8 bytes), manager_ctx, deleter, flags, then the DLTensor
        base = api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        flags = ctypes.c_uint64.from_address(base + 24).value
        tensor = base + 32
    else:
        tensor, flags = api.PyCapsule_GetPointer(capsule, b"dltensor"), None
    # data, device (8 bytes), ndim (4 bytes), then code, bits, lanes
    code = ctypes.c_uint8.from_address(tensor + 20).value
    bits = ctypes.c_uint8.from_address(tensor + 21).value
    lanes = ctypes.c_uint16.from_address(tensor + 22).value
    return code, bits, lanes, flags


@pytest.mark.parametrize("name", list(NARROW))
def test_narrow_floats_pass_through_dlpack_with_dlpack_11_codes(name):
    from tirfun.numpy_dtypes import numpy_dtype

    code, bits = NARROW[name]
    a = tirfun.nd.array(np.array([0.5, -1.5, 2, 3], numpy_dtype(name)))
    assert _capsule_dtype(a.__dlpack__(max_version=(1, 1))) == \
        (code, bits, 1, 4 if bits == 4 else 0)  # float4 held a byte each: "padded"
    if name != "float4_e2m1fn":
        assert _capsule_dtype(a.__dlpack__()) == (code, bits, 1, None)
    # another library's array (only the protocol) comes in without a copy
    b = tirfun.nd.from_dlpack(Foreign(a))
    assert b.dtype == name and b.numpy().astype(float).tolist() == [0.5, -1.5, 2, 3]
    b.host_array()[0] = 4
    assert a.numpy().astype(float)[0] == 4


def test_a_narrow_float_array_of_another_library_reaches_a_built_function():
    from tirfun.numpy_dtypes import numpy_dtype

    func = tirfun.script.from_source('''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "float8_e4m3fn"), B: T.Buffer((4,), "float8_e4m3fn")):
    for i in range(4):
        B[i] = A[i] * T.float8_e4m3fn(3)
''')
    x = np.array([0.5, -1.5, 2, 3], numpy_dtype("float8_e4m3fn"))
    out = tirfun.nd.array(np.zeros(4, numpy_dtype("float8_e4m3fn")))
    tirfun.build(func)(Foreign(tirfun.nd.array(x)), Foreign(out))
    assert out.numpy().astype(float).tolist() == [1.5, -4.5, 6, 9]


def test_narrow_float_dlpack_refusals_say_why():
    from tirfun.numpy_dtypes import numpy_dtype

    f4 = tirfun.nd.array(np.zeros(2, numpy_dtype("float4_e2m1fn")))
    with pytest.raises(ArgumentError, match="float4_e2m1fn arrays hold one element per byte.*"
                                            "versioned capsule"):
        f4.__dlpack__()

    class Legacy(Foreign):  # a producer from before DLPack 1.0
        def __dlpack__(self):
            return self._array.__dlpack__()

    with pytest.raises(ArgumentError, match="versioned capsule"):
        tirfun.nd.from_dlpack(Legacy(f4))
    with pytest.raises(ArgumentError, match=r"float8_e5m2 arrays cannot pass through numpy's "
                                            r"DLPack export.*type code 12.*pass the numpy array itself"):
        tirfun.nd.from_dlpack(np.zeros(2, numpy_dtype("float8_e5m2")))
