"""Memory on a GPU behind an NDArray.

A :class:`DeviceBuffer` is a C-contiguous array in the global memory of one
GPU: its shape, numpy dtype and device address. It is allocated and freed
through :mod:`.cuda_driver`, or borrows memory another library owns (an
array taken over through DLPack), which it then keeps alive and never frees.
"""

from __future__ import annotations

import sys

from ..errors import ArgumentError


class DeviceBuffer:
    """``shape`` and ``dtype`` elements at address ``ptr`` on ``cuda(index)``."""

    __slots__ = ("shape", "dtype", "ptr", "index", "_owner", "__weakref__")

    def __init__(self, shape: tuple, dtype, ptr: int, index: int, owner=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.ptr = int(ptr)
        self.index = index
        # None: this buffer allocated the memory and frees it; else whatever
        # keeps borrowed memory alive
        self._owner = owner

    @staticmethod
    def allocate(shape, dtype, index: int) -> "DeviceBuffer":
        """Uninitialised device memory for ``shape`` elements of ``dtype``."""
        from .cuda_driver import mem_alloc

        count = 1
        for d in shape:
            if int(d) < 0:
                raise ArgumentError(f"negative dimension in {tuple(shape)}")
            count *= int(d)
        return DeviceBuffer(shape, dtype, mem_alloc(index, count * dtype.itemsize), index)

    # the attributes argument checks read from a numpy array
    @property
    def flags(self):
        """Always contiguous, aligned and writeable (numpy's ``flags``)."""
        return _FLAGS

    @property
    def ctypes(self):
        """``.ctypes.data`` is the device address, as numpy gives a host one."""
        return _Address(self.ptr)

    @property
    def itemsize(self) -> int:
        """The bytes of one element."""
        return self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        """C-contiguous strides in bytes."""
        out, step = [], self.dtype.itemsize
        for d in reversed(self.shape):
            out.append(step)
            step *= d
        return tuple(reversed(out))

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        count = 1
        for d in self.shape:
            count *= d
        return count

    @property
    def nbytes(self) -> int:
        """The size in bytes."""
        return self.size * self.dtype.itemsize

    def to_host(self):
        """A numpy copy of the contents."""
        import numpy as np

        from .cuda_driver import copy_to_host

        out = np.empty(self.shape, dtype=self.dtype)
        if self.nbytes:
            copy_to_host(self.index, out, self.ptr)
        return out

    def from_host(self, array) -> None:
        """Overwrite the contents from a numpy array of the same shape."""
        import numpy as np

        from .cuda_driver import copy_to_device

        # not ascontiguousarray: it makes a 0-d array 1-d, whose shape (1,)
        # would not match a 0-d device array
        src = np.asarray(array, dtype=self.dtype, order="C")
        if src.shape != self.shape:
            raise ArgumentError(f"copyfrom: shape {src.shape} does not match the array's {self.shape}")
        if self.nbytes:
            copy_to_device(self.index, self.ptr, src)

    def copy_from_device(self, other: "DeviceBuffer") -> None:
        """Overwrite the contents from another device buffer of the same shape."""
        from .cuda_driver import copy_on_device

        if other.shape != self.shape or other.dtype != self.dtype:
            raise ArgumentError(f"copyfrom: {other.shape} {other.dtype} does not match the "
                                f"array's {self.shape} {self.dtype}")
        if self.nbytes:
            copy_on_device(self.index, self.ptr, other.ptr, self.nbytes)

    def __del__(self, _finalizing=sys.is_finalizing):
        if getattr(self, "_owner", True) is None and not _finalizing():
            try:
                from .cuda_driver import mem_free

                mem_free(self.index, self.ptr)
            except Exception:  # noqa: BLE001 - a destructor must not raise
                pass


class _Flags:
    c_contiguous = True
    aligned = True
    writeable = True


_FLAGS = _Flags()


class _Address:
    __slots__ = ("data",)

    def __init__(self, data: int):
        self.data = data


__all__ = ["DeviceBuffer"]
