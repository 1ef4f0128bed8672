"""Arrays on a device: the ``tirfun.nd`` namespace.

``tirfun.nd.array(np_array, device)`` copies a numpy array (or anything
numpy can turn into one) into a new C-contiguous array aligned to 64 bytes;
``tirfun.nd.empty(shape, dtype, device)`` allocates one. ``.numpy()``
returns a copy, as TVM's does. On the CPU an NDArray views host memory, and
built functions also accept plain numpy arrays without copying them.

``tirfun.nd.from_dlpack(x)`` wraps any DLPack array (numpy, torch, ...)
without a copy, and an NDArray is itself a DLPack array
(``numpy.from_dlpack(nd_array)`` shares its memory); see :mod:`.dlpack`.
"""

from __future__ import annotations

from ..errors import ArgumentError, TirfunError
from ..numpy_dtypes import bfloat16
from .device import Device, cpu

ALIGNMENT = 64


def _np():
    import numpy as np

    return np


def _dtype(dtype):
    """numpy's dtype for ``dtype``; ``"bfloat16"`` is ml_dtypes' bfloat16."""
    if dtype is not None and str(dtype) == "bfloat16":
        return bfloat16()
    return _np().dtype(dtype)


def aligned_empty(shape, dtype, alignment: int = ALIGNMENT):
    """An uninitialised C-contiguous numpy array whose data pointer is a
    multiple of ``alignment``."""
    np = _np()
    dtype = _dtype(dtype)
    shape = tuple(int(d) for d in shape)
    count = 1
    for d in shape:
        count *= d
    nbytes = count * dtype.itemsize
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    offset = (-raw.ctypes.data) % alignment
    return raw[offset:offset + nbytes].view(dtype).reshape(shape)


class NDArray:
    """An array on a device. Read ``shape``, ``dtype``, ``device``; get the
    values with :meth:`numpy`; overwrite them with :meth:`copyfrom`."""

    __slots__ = ("_array", "_device")

    def __init__(self, array, device: Device):
        self._array = array
        self._device = device

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's dimensions."""
        return tuple(self._array.shape)

    @property
    def dtype(self) -> str:
        """The element type as a string (``"float32"``)."""
        return str(self._array.dtype)

    @property
    def device(self) -> Device:
        """Where the array lives."""
        return self._device

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._array.ndim

    def numpy(self):
        """A numpy copy of the values (copied from the GPU for a GPU array)."""
        if self._device.device_type == "cuda":
            return self._array.to_host()
        return self._array.copy()

    asnumpy = numpy

    def copyfrom(self, source) -> "NDArray":
        """Overwrite the values from a numpy array (or NDArray) of the same
        shape; returns self."""
        np = _np()
        if self._device.device_type == "cuda":
            if isinstance(source, NDArray) and source.device == self._device:
                self._array.copy_from_device(source._array)
            else:
                src = source.numpy() if isinstance(source, NDArray) else np.asarray(source)
                self._array.from_host(src)
            return self
        src = source.numpy() if isinstance(source, NDArray) else np.asarray(source)
        if src.shape != self._array.shape:
            raise ArgumentError(f"copyfrom: shape {src.shape} does not match the array's {self.shape}")
        self._array[...] = src.astype(self._array.dtype, copy=False)
        return self

    def host_array(self):
        """The numpy array holding a CPU array's memory (no copy)."""
        if self._device.device_type != "cpu":
            raise TirfunError(f"the array lives on {self._device}; call .numpy() for a host copy")
        return self._array

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The array as a DLPack capsule sharing its memory (the Python array
        API's protocol; ``numpy.from_dlpack`` and ``torch.from_dlpack`` call it)."""
        from .dlpack import export

        return export(self._array, self._device, stream=stream, max_version=max_version,
                      dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack ``(device type code, index)``: ``(1, 0)`` on the CPU."""
        from .dlpack import dlpack_device

        return dlpack_device(self._device)

    to_dlpack = __dlpack__

    @property
    def data_ptr(self) -> int:
        """The address of the first element (a device address on a GPU)."""
        if self._device.device_type == "cuda":
            return self._array.ptr
        return self._array.ctypes.data

    def __repr__(self) -> str:
        if self._device.device_type == "cuda":
            return (f"<tirfun.NDArray shape={self.shape} dtype={self.dtype} device={self._device} "
                    f"at 0x{self._array.ptr:x}>")
        return f"<tirfun.NDArray shape={self.shape} dtype={self.dtype} device={self._device}>\n{self._array!r}"

    def __array__(self, dtype=None, copy=None):
        if self._device.device_type == "cuda":
            out = self._array.to_host()
            return out if dtype is None else out.astype(dtype)
        out = self._array if dtype is None else self._array.astype(dtype)
        return out.copy() if copy else out


def _check_device(device) -> Device:
    if device is None:
        return cpu(0)
    if not isinstance(device, Device):
        raise ArgumentError(f"expected a device such as tirfun.cpu(0), got {device!r}")
    if device.device_type == "cuda":
        from .device import cuda

        cuda(device.device_id)  # a clear error when there is no such GPU
    return device


def array(source, device: Device | None = None, dtype=None) -> NDArray:
    """A new array on ``device`` (default ``cpu(0)``) holding a copy of
    ``source`` (a numpy array, a nested list, an NDArray)."""
    np = _np()
    device = _check_device(device)
    if isinstance(source, NDArray):
        source = source.numpy()
    try:
        src = np.asarray(source, dtype=None if dtype is None else _dtype(dtype))
    except (TypeError, ValueError) as err:
        raise ArgumentError(f"cannot make an array from {type(source).__name__}: {err}") from None
    if src.dtype == object:
        raise ArgumentError("cannot make an array of Python objects")
    if device.device_type == "cuda":
        from .cuda_array import DeviceBuffer

        buf = DeviceBuffer.allocate(src.shape, src.dtype, device.device_id)
        buf.from_host(src)
        return NDArray(buf, device)
    out = aligned_empty(src.shape, src.dtype)
    out[...] = src
    return NDArray(out, device)


def from_dlpack(source) -> NDArray:
    """An NDArray sharing the memory of ``source``, any array with the
    DLPack protocol (``__dlpack__`` and ``__dlpack_device__``): a numpy
    array, a torch tensor, another NDArray. No copy is made: a write
    through one is seen through the other."""
    from .dlpack import device_of, host_view, is_dlpack_array

    if isinstance(source, NDArray):
        return NDArray(source._array, source.device)
    if not is_dlpack_array(source):
        raise ArgumentError(f"from_dlpack: expected an array with __dlpack__ and __dlpack_device__ "
                            f"(numpy, torch, ...), got {type(source).__name__}")
    device = device_of(source, "from_dlpack: the array")
    if device.device_type == "cuda":
        from .dlpack import device_view

        return NDArray(device_view(source, "from_dlpack: the array"), device)
    return NDArray(host_view(source, "from_dlpack: the array"), device)


def empty(shape, dtype="float32", device: Device | None = None) -> NDArray:
    """A new uninitialised array of ``shape`` and ``dtype`` on ``device``."""
    device = _check_device(device)
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)
        dt = _dtype(str(dtype))
    except (TypeError, ValueError) as err:
        raise ArgumentError(f"empty: bad shape {shape!r} or dtype {dtype!r}: {err}") from None
    if any(d < 0 for d in shape):
        raise ArgumentError(f"empty: negative dimension in {shape}")
    if device.device_type == "cuda":
        from .cuda_array import DeviceBuffer

        return NDArray(DeviceBuffer.allocate(shape, dt, device.device_id), device)
    return NDArray(aligned_empty(shape, dt), device)


__all__ = ["NDArray", "array", "empty", "from_dlpack", "aligned_empty", "ALIGNMENT"]
