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
    # numpy refuses DLPack's kDLBfloat both ways; say so rather than fail inside numpy
    with pytest.raises(BufferError):
        np.zeros(2, bfloat16()).__dlpack__()
    with pytest.raises(ArgumentError, match=r"bfloat16 arrays cannot pass through DLPack.*kDLBfloat"):
        tirfun.nd.from_dlpack(np.zeros(2, bfloat16()))
    with pytest.raises(ArgumentError, match=r"bfloat16 arrays cannot pass through DLPack"):
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
