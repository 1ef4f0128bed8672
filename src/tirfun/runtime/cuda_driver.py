"""The CUDA driver API through cuda-python, imported on first use.

Every call goes through :func:`call`, which turns a driver error into a
tirfun error carrying the driver's own name and text for it
(``CUDA_ERROR_INVALID_VALUE: invalid argument``). Without cuda-python,
without the driver library or without a device, :func:`driver` and
:func:`device_count` raise a TirfunError that says which is missing.

The primary context of each device is retained once and made current
before each use, as TVM's runtime does.
"""

from __future__ import annotations

import ctypes
import functools
import threading

from ..errors import TirfunError

_lock = threading.Lock()


def driver():
    """cuda-python's driver module, initialised (``cuInit``) once."""
    with _lock:
        return _initialised()


@functools.cache
def _import():
    try:
        from cuda.bindings import driver as drv  # cuda-python 12.6 and later
    except ImportError:
        try:
            from cuda import cuda as drv  # older cuda-python
        except ImportError:
            raise TirfunError("tirfun.cuda needs the cuda-python package "
                              "(pip install 'tirfun[cuda]')") from None
    return drv


@functools.cache
def _initialised():
    drv = _import()
    try:
        (err,) = drv.cuInit(0)
    except Exception as exc:  # noqa: BLE001 - a missing libcuda surfaces as various errors
        raise TirfunError(f"the CUDA driver (libcuda) is not available: {exc}; is an NVIDIA "
                          "driver installed?") from None
    if int(err) != 0:
        raise TirfunError(f"the CUDA driver could not start: {_describe(drv, err)}; is an "
                          "NVIDIA driver installed and a GPU visible?")
    return drv


def _describe(drv, err) -> str:
    try:
        e1, name = drv.cuGetErrorName(err)
        e2, text = drv.cuGetErrorString(err)
        name = name.decode() if isinstance(name, bytes) else str(name)
        text = text.decode() if isinstance(text, bytes) else str(text)
        if int(e1) == 0 and int(e2) == 0:
            return f"{name}: {text}"
    except Exception:  # noqa: BLE001 - describing an error must not fail
        pass
    return f"error {int(err)}"


def call(what: str, fn_name: str, *args, error=TirfunError):
    """Call the driver function ``fn_name``; return its results (without the
    status), or raise ``error`` naming ``what`` and the driver's message."""
    drv = driver()
    result = getattr(drv, fn_name)(*args)
    err, rest = result[0], result[1:]
    if int(err) != 0:
        raise error(f"{what}: {_describe(drv, err)}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


def device_count() -> int:
    """How many GPUs the driver sees (a TirfunError when it cannot say)."""
    count = call("cannot count CUDA devices", "cuDeviceGetCount")
    return int(count)


def device_arch(index: int = 0) -> str | None:
    """``sm_XY`` of GPU ``index``, or None when there is no usable GPU
    (never an error: a build without a GPU uses the default arch)."""
    try:
        if device_count() <= index:
            return None
        drv = driver()
        dev = call("cuDeviceGet", "cuDeviceGet", index)
        attr = drv.CUdevice_attribute
        major = call("compute capability", "cuDeviceGetAttribute",
                     attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        minor = call("compute capability", "cuDeviceGetAttribute",
                     attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
        return f"sm_{int(major)}{int(minor)}"
    except TirfunError:
        return None


def device_attribute(index: int, name: str) -> int:
    """The driver's attribute ``CU_DEVICE_ATTRIBUTE_<name>`` of GPU ``index``."""
    drv = driver()
    dev = call("cuDeviceGet", "cuDeviceGet", index)
    attr = getattr(drv.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name)
    return int(call(f"device attribute {name}", "cuDeviceGetAttribute", attr, dev))


def activate(index: int):
    """Make GPU ``index``'s primary context current; returns it."""
    with _lock:
        ctx = _primary(index)
    call("cannot make the CUDA context current", "cuCtxSetCurrent", ctx)
    return ctx


@functools.cache
def _primary(index: int):
    drv = _initialised()
    err, dev = drv.cuDeviceGet(index)
    if int(err) != 0:
        raise TirfunError(f"cuda({index}): {_describe(drv, err)}")
    err, ctx = drv.cuDevicePrimaryCtxRetain(dev)
    if int(err) != 0:
        raise TirfunError(f"cuda({index}): cannot retain the primary context: {_describe(drv, err)}")
    return ctx


def mem_alloc(index: int, nbytes: int) -> int:
    """``nbytes`` of global memory on GPU ``index``; returns the address."""
    activate(index)
    ptr = call(f"cannot allocate {nbytes} bytes on cuda({index})", "cuMemAlloc", max(nbytes, 1))
    return int(ptr)


def mem_free(index: int, ptr: int) -> None:
    """Release memory from :func:`mem_alloc`."""
    activate(index)
    call("cuMemFree", "cuMemFree", ptr)


def copy_to_device(index: int, dst: int, host_array) -> None:
    """Copy a C-contiguous numpy array to device address ``dst``."""
    activate(index)
    call("copy to the GPU", "cuMemcpyHtoD", dst, host_array.ctypes.data, host_array.nbytes)


def copy_to_host(index: int, host_array, src: int) -> None:
    """Copy device memory at ``src`` into a C-contiguous numpy array."""
    activate(index)
    call("copy from the GPU", "cuMemcpyDtoH", host_array.ctypes.data, src, host_array.nbytes)


def copy_on_device(index: int, dst: int, src: int, nbytes: int) -> None:
    """Copy ``nbytes`` between two device addresses."""
    activate(index)
    call("copy on the GPU", "cuMemcpyDtoD", dst, src, nbytes)


def synchronize(index: int) -> None:
    """Wait for the work queued on GPU ``index``; a kernel's failure (a
    trap, a bad address) is reported here."""
    activate(index)
    call(f"a kernel failed on cuda({index})", "cuCtxSynchronize")


class LoadedModule:
    """PTX loaded on one GPU, with its kernels' function handles."""

    def __init__(self, index: int, ptx: str, names, dynamic_shared=None):
        from ..errors import BuildError

        activate(index)
        self.index = index
        data = ptx.encode() + b"\0"  # the driver reads PTX as a C string
        self.handle = call(f"the driver cannot load the PTX on cuda({index})", "cuModuleLoadData",
                           data, error=BuildError)
        self.functions = {n: call(f"kernel {n} is missing from the loaded PTX",
                                  "cuModuleGetFunction", self.handle, n.encode(), error=BuildError)
                          for n in names}
        # kernels with more than 48 KiB of shared memory take it dynamically,
        # once the function is allowed that much
        self.shared = dict(dynamic_shared or {})
        drv = driver()
        for name, nbytes in self.shared.items():
            call(f"kernel {name} cannot have {nbytes} bytes of shared memory on cuda({index})",
                 "cuFuncSetAttribute", self.functions[name],
                 drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes,
                 error=BuildError)

    def launch(self, name: str, grid: tuple, block: tuple, values: list) -> None:
        """Launch kernel ``name`` with ``values`` (ctypes scalars), queued on
        the default stream."""
        activate(self.index)
        slots = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
        call(f"cannot launch kernel {name} with grid {grid} and block {block}", "cuLaunchKernel",
             self.functions[name], *grid, *block, self.shared.get(name, 0), 0,
             ctypes.addressof(slots), 0)


class Timer:
    """Two CUDA events around queued work: :meth:`seconds` between them."""

    def __init__(self, index: int):
        activate(index)
        self.index = index
        self.start = call("cuEventCreate", "cuEventCreate", 0)
        self.stop = call("cuEventCreate", "cuEventCreate", 0)

    def begin(self) -> None:
        """Record the start event."""
        call("cuEventRecord", "cuEventRecord", self.start, 0)

    def end(self) -> float:
        """Record the end event, wait for it; the seconds between the two."""
        call("cuEventRecord", "cuEventRecord", self.stop, 0)
        call("a kernel failed", "cuEventSynchronize", self.stop)
        ms = call("cuEventElapsedTime", "cuEventElapsedTime", self.start, self.stop)
        return float(ms) / 1e3

    def close(self) -> None:
        """Destroy the events."""
        for event in (self.start, self.stop):
            call("cuEventDestroy", "cuEventDestroy", event)


__all__ = ["driver", "call", "device_count", "device_arch", "device_attribute", "activate",
           "mem_alloc", "mem_free", "copy_to_device", "copy_to_host", "copy_on_device",
           "synchronize", "LoadedModule", "Timer"]
