"""The CUDA runtime's host side against a stand-in driver.

No GPU is needed: :mod:`tirfun.runtime.cuda_driver` is replaced by a fake
whose "device memory" is host memory and whose kernel launches run the
kernel in the interpreter with the GPU's meaning. Everything above the
driver is the real code: device arrays, argument checks, the host code,
the packing of kernel parameters, timing, DLPack capsules of GPU arrays.
"""

import ctypes

import numpy as np
import pytest

import tirfun
from tirfun.errors import ArgumentError
from tirfun.runtime import cuda_driver


class FakeGPU:
    """Device memory in host memory; launches run in the interpreter."""

    def __init__(self):
        self.blocks = {}      # address -> the numpy array holding it
        self.kernels = {}     # name -> Kernel, set by the test
        self.launched = []
        self.freed = 0

    def mem_alloc(self, index, nbytes):
        raw = np.zeros(max(nbytes, 1) + 256, np.uint8)
        start = raw.ctypes.data + (-raw.ctypes.data) % 256
        self.blocks[start] = (raw, nbytes)
        return start

    def mem_free(self, index, ptr):
        self.blocks.pop(ptr)
        self.freed += 1

    def view(self, ptr, dtype):
        for start, (raw, nbytes) in self.blocks.items():
            if start <= ptr < start + max(nbytes, 1):
                offset = ptr - raw.ctypes.data
                return raw[offset:offset + nbytes - (ptr - start)].view(dtype)
        raise AssertionError(f"address 0x{ptr:x} was never allocated")

    def install(self, monkeypatch):
        gpu = self

        class Loaded:
            def __init__(self, index, ptx, names, dynamic_shared=None):
                assert ".entry" in ptx
                self.names = names
                gpu.dynamic_shared = dict(dynamic_shared or {})

            def launch(self, name, grid, block, values):
                from tirfun.interp import run
                from tirfun.numpy_dtypes import numpy_dtype

                kernel = gpu.kernels[name]
                args = []
                for var, buf, value in zip(kernel.args, kernel.buffers + (None,) * len(values),
                                           values):
                    if var.dtype.is_handle:
                        args.append(gpu.view(value.value, numpy_dtype(buf.dtype)))
                    else:
                        args.append(value.value)
                gpu.launched.append((name, grid, block))
                run(kernel.func, *args)

        class Timer:
            def __init__(self, index):
                self.t = 0.0

            def begin(self):
                import time

                self.t = time.perf_counter()

            def end(self):
                import time

                return time.perf_counter() - self.t + 1e-9

            def close(self):
                pass

        for name, value in {
            "device_count": lambda: 1, "device_arch": lambda index=0: "sm_80",
            "activate": lambda index: None, "synchronize": lambda index: None,
            "mem_alloc": self.mem_alloc, "mem_free": self.mem_free,
            "copy_to_device": lambda index, dst, host: ctypes.memmove(dst, host.ctypes.data, host.nbytes),
            "copy_to_host": lambda index, host, src: ctypes.memmove(host.ctypes.data, src, host.nbytes),
            "copy_on_device": lambda index, dst, src, n: ctypes.memmove(dst, src, n),
            "device_attribute": lambda index, name: {"COMPUTE_CAPABILITY_MAJOR": 8,
                                                     "COMPUTE_CAPABILITY_MINOR": 0}[name],
            "LoadedModule": Loaded, "Timer": Timer,
        }.items():
            monkeypatch.setattr(cuda_driver, name, value)


@pytest.fixture
def gpu(monkeypatch):
    # a cached build keeps the PTX it loaded on the previous test's fake
    tirfun.runtime.clear_cache()
    fake = FakeGPU()
    fake.install(monkeypatch)
    yield fake
    tirfun.runtime.clear_cache()


def _unit():
    import test_cuda_build as unit

    return unit


def test_device_arrays_copy_both_ways(gpu):
    dev = tirfun.cuda(0)
    assert dev.compute_version == "8.0" and dev.exist
    x = np.arange(12, dtype="float32").reshape(3, 4)
    a = tirfun.nd.array(x, dev)
    assert (a.shape, a.dtype, a.device) == ((3, 4), "float32", dev)
    np.testing.assert_array_equal(a.numpy(), x)
    a.copyfrom(x * 2)
    np.testing.assert_array_equal(a.numpy(), x * 2)
    b = tirfun.nd.empty((3, 4), "float32", dev)
    b.copyfrom(a)  # device to device
    np.testing.assert_array_equal(np.asarray(b), x * 2)
    with pytest.raises(ArgumentError, match=r"copyfrom: shape \(4,\) does not match"):
        b.copyfrom(np.zeros(4, "float32"))
    assert "device=cuda(0)" in repr(b)
    del a, b
    assert gpu.freed == 2


def test_the_seed_vector_add_through_the_runtime(gpu):
    unit = _unit()
    rt = tirfun.build(unit.seed_schedule(), target="cuda")
    gpu.kernels = {k.name: k for k in rt.kernels}
    dev = tirfun.cuda(0)
    a = tirfun.nd.array(np.arange(8, dtype="float32"), dev)
    b = tirfun.nd.array(np.zeros(8, dtype="float32"), dev)
    rt(a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8, dtype="float32") + 1)
    assert gpu.launched == [("main_kernel", (2, 1, 1), (2, 1, 1))]
    with pytest.raises(ArgumentError, match=r"parameter B: expected dimension 0 must be 8|"
                                            r"parameter B: dimension 0 must be 8"):
        rt(a, tirfun.nd.array(np.zeros(9, "float32"), dev))
    with pytest.raises(ArgumentError, match="parameter A: expected dtype float32, got int32"):
        rt(tirfun.nd.array(np.zeros(8, "int32"), dev), b)
    result = rt.time_evaluator("main", dev, number=2, repeat=3)(a, b)
    assert len(result.results) == 3 and result.min > 0


def test_symbolic_sizes_and_scalars_reach_the_launch(gpu):
    unit = _unit()
    src = open(unit.__file__).read().split(
        "def test_a_symbolic_size_reaches_the_kernel_and_the_launch():\n    src = '''")[1].split("'''")[0]
    rt = tirfun.build(unit.parse(src), target="cuda")
    gpu.kernels = {k.name: k for k in rt.kernels}
    dev = tirfun.cuda(0)
    a = tirfun.nd.array(np.arange(70, dtype="float32"), dev)
    b = tirfun.nd.array(np.zeros(70, dtype="float32"), dev)
    rt(a, b, 70)
    assert gpu.launched == [("main_kernel", (3, 1, 1), (32, 1, 1))]
    np.testing.assert_array_equal(b.numpy(), np.arange(70, dtype="float32") * 3)


def test_scratch_global_memory_is_allocated_per_call(gpu):
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.alloc_buffer((64,), "float32")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(64, bx * 32 + tx)
                B[vi] = A[vi] + T.float32(1)
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial(64, bx * 32 + tx)
                C[vi] = B[63 - vi] * T.float32(2)
'''
    rt = tirfun.build(tirfun.script.from_source(src), target="cuda")
    assert [k.name for k in rt.kernels] == ["main_kernel_0", "main_kernel_1"]
    gpu.kernels = {k.name: k for k in rt.kernels}
    dev = tirfun.cuda(0)
    a = tirfun.nd.array(np.arange(64, dtype="float32"), dev)
    c = tirfun.nd.empty((64,), "float32", dev)
    before = gpu.freed
    rt(a, c)
    np.testing.assert_array_equal(c.numpy(), (np.arange(64, dtype="float32") + 1)[::-1] * 2)
    assert gpu.freed == before + 1  # the scratch buffer B


class _Foreign:
    """A GPU array of another library, known only through DLPack."""

    def __init__(self, nd):
        self.nd = nd

    def __dlpack__(self, stream=None):
        return self.nd.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.nd.__dlpack_device__()


def test_gpu_arrays_pass_through_dlpack_without_copies(gpu):
    unit = _unit()
    dev = tirfun.cuda(0)
    owner = tirfun.nd.array(np.arange(8, dtype="float32"), dev)
    assert owner.__dlpack_device__() == (2, 0)
    view = tirfun.nd.from_dlpack(_Foreign(owner))
    assert view.device == dev and view.data_ptr == owner.data_ptr and view.shape == (8,)
    np.testing.assert_array_equal(view.numpy(), np.arange(8, dtype="float32"))
    rt = tirfun.build(unit.seed_schedule(), target="cuda")
    gpu.kernels = {k.name: k for k in rt.kernels}
    out = tirfun.nd.array(np.zeros(8, "float32"), dev)
    rt(_Foreign(owner), _Foreign(out))  # a built module takes DLPack GPU arrays directly
    np.testing.assert_array_equal(out.numpy(), np.arange(8, dtype="float32") + 1)
    from tirfun.runtime import dlpack

    del view
    import gc

    gc.collect()
    assert not dlpack._exported  # every consumer released what it took
    with pytest.raises(ArgumentError, match="the array is on cuda\\(0\\), the function runs on cpu"):
        tirfun.build(unit.parse(unit.VECTOR_ADD), target="llvm")(owner, out)


def test_a_module_needs_a_gpu_array(gpu):
    unit = _unit()
    rt = tirfun.build(unit.seed_schedule(), target="cuda")
    with pytest.raises(ArgumentError, match="expected an array on a GPU"):
        rt([1.0] * 8, [0.0] * 8)
    with pytest.raises(ArgumentError, match="unknown format .cubin. for a CUDA module"):
        rt.get_source("cubin")


def test_dynamic_shared_memory_is_requested_when_the_module_is_loaded(gpu):
    unit = _unit()
    # the threads' elements 1024 apart: compaction keeps the whole span
    big = (unit.REVERSE.replace("(16,), \"float32\", scope", "(16384,), \"float32\", scope")
           .replace("S[vt] =", "S[vt * 1024] =").replace("S[(15 - vt)]", "S[(15 - vt) * 1024]")
           .replace("S[15 - vt]", "S[(15 - vt) * 1024]"))
    rt = tirfun.build(unit.parse(big), target="cuda -max_shared_memory_per_block=98304")
    gpu.kernels = {k.name: k for k in rt.kernels}
    dev = tirfun.cuda(0)
    x = np.random.default_rng(0).standard_normal((64, 16)).astype("float32")
    a = tirfun.nd.array(x, dev)
    b = tirfun.nd.empty((64, 16), "float32", dev)
    rt(a, b)
    assert gpu.dynamic_shared == {"main_kernel": 61456}  # rounded up to 16 bytes
    np.testing.assert_array_equal(b.numpy(), (x * np.float32(2))[:, ::-1] + np.float32(1))


def test_zero_dimensional_arrays_copy_both_ways_and_reach_a_kernel(gpu):
    # found on a GPU: a 0-d array was copied as shape (1,) and refused
    dev = tirfun.cuda(0)
    x = np.array(2.5, "float32")
    a = tirfun.nd.array(x, dev)
    assert a.shape == () and a.numpy().shape == () and a.numpy() == x
    a.copyfrom(np.array(-1.0, "float32"))
    assert a.numpy() == -1.0
    rt = tirfun.build(tirfun.script.from_source('''
@T.prim_func
def main(A: T.Buffer((), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[()] + T.Cast("float32", vi)
'''), target="cuda")
    b = tirfun.nd.empty((4,), "float32", dev)
    gpu.kernels = {k.name: k for k in rt.kernels}
    rt(a, b)
    np.testing.assert_array_equal(b.numpy(), np.array([-1, 0, 1, 2], "float32"))
