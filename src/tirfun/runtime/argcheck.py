"""Argument checks: nothing reaches native code unless it fits.

Before a compiled function runs, every argument is checked against the
function's :class:`~tirfun.lower.signature.Signature`: the count; for a
buffer, that it is an array on the CPU with the buffer's dtype, number of
dimensions and shape (binding each size variable at its first use and
checking every other use against it, and against the variable's dtype),
C-contiguous (or laid out with the buffer's explicit strides), aligned to
its element size, and writeable when the function stores into it; for a
scalar, its type and range; and, when the function declares
``tir.noalias``, that no written array overlaps another argument. Any
mismatch raises :class:`ArgumentError` naming the parameter, so a compiled
loop can never run past an array because of a wrong shape.

Plain numpy arrays are passed by pointer, without a copy, and so are other
DLPack arrays (torch tensors, ...) in host memory, viewed through numpy.
"""

from __future__ import annotations

import numbers

from ..errors import ArgumentError
from ..lower.signature import Signature, dtype_fits, eval_int
from ..numpy_dtypes import numpy_dtype
from ..nodes import IntImm, Var
from .dlpack import device_of, host_view, is_dlpack_array
from .ndarray import NDArray

#: the scalar types of ml_dtypes, which numbers.Real does not know
_ML_DTYPES_SCALARS = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn")


def _np():
    import numpy as np

    return np


class ArgChecker:
    """Checks arguments for one function and returns the raw values of the
    native call (pointers as ints, then scalars, then size variables)."""

    def __init__(self, sig: Signature, device_type: str = "cpu"):
        self.sig = sig
        # where the arrays must live: "cpu", or "cuda" for a CUDA build
        self.device_type = device_type
        self._np_dtypes = []
        for p in sig.params:
            if p.buffer is not None:
                self._np_dtypes.append(numpy_dtype(p.buffer.dtype))
            else:
                self._np_dtypes.append(None)
        self._names = ", ".join(p.name for p in sig.params)

    def __call__(self, args) -> list:
        sig = self.sig
        if len(args) != len(sig.params):
            raise ArgumentError(
                f"function {sig.name} takes {len(sig.params)} argument(s) ({self._names}), "
                f"got {len(args)}")
        sizes: dict[Var, int] = {}
        origin: dict[Var, str] = {}  # which parameter set each size
        values: list = [None] * len(args)
        # scalars first: a size passed explicitly is what every array must match
        for k, (p, arg) in enumerate(zip(sig.params, args)):
            if p.buffer is None:
                values[k] = self._scalar(p, arg)
                if p.var.dtype.is_handle:
                    continue
                sizes[p.var] = values[k]
                origin[p.var] = f"parameter {p.name}"
        arrays = []
        for k, (p, arg, np_dtype) in enumerate(zip(sig.params, args, self._np_dtypes)):
            if p.buffer is not None:
                arr = self._array(p, arg, np_dtype, sizes, origin)
                arrays.append((p, arr))
                values[k] = arr.ctypes.data
        self._check_expressions(sizes, arrays)
        if sig.noalias:
            self._check_overlap(arrays)
        for v in sig.size_vars:
            values.append(sizes[v])
        return values

    # ------------------------------------------------------------ scalars
    def _scalar(self, p, arg):
        dt = p.var.dtype
        where = f"function {self.sig.name}, parameter {p.name}"
        if dt.is_handle:
            return self._pointer(where, arg, p.var in self.sig.nullable)
        if isinstance(arg, NDArray) or hasattr(arg, "shape") and getattr(arg, "shape", ()) != ():
            raise ArgumentError(f"{where}: expected a {dt} scalar, got an array")
        if dt.is_bool:
            if not isinstance(arg, (bool, numbers.Integral)) or int(arg) not in (0, 1):
                raise ArgumentError(f"{where}: expected a bool, got {arg!r}")
            return int(bool(arg))
        if dt.is_integer:
            if isinstance(arg, bool) or not isinstance(arg, numbers.Integral):
                raise ArgumentError(f"{where}: expected an integer ({dt}), got {type(arg).__name__} {arg!r}")
            value = int(arg)
            if not dtype_fits(dt, value):
                raise ArgumentError(f"{where}: {value} does not fit in {dt}")
            return value
        if dt.is_float:
            if type(arg).__name__ in _ML_DTYPES_SCALARS:  # ml_dtypes' scalars are no numbers.Real
                arg = arg.item()
            if isinstance(arg, bool) or not isinstance(arg, numbers.Real):
                raise ArgumentError(f"{where}: expected a number ({dt}), got {type(arg).__name__} {arg!r}")
            if dt.bits == 16:  # passed as the bits of the nearest float16/bfloat16
                np = _np()
                with np.errstate(over="ignore"):
                    return int(np.array(float(arg), numpy_dtype(dt)).view(np.uint16))
            if dt.is_mini_float:  # passed as the double of the nearest float8/float4
                np = _np()
                with np.errstate(over="ignore", invalid="ignore"):
                    return float(np.array(float(arg), numpy_dtype(dt)).astype(np.float64))
            return float(arg)
        raise ArgumentError(f"{where}: parameters of dtype {dt} cannot be passed")

    def _pointer(self, where, arg, nullable: bool):
        """A bare ``T.handle`` parameter: an array (an NDArray, a numpy
        array or any DLPack array in host memory) passes the address of its
        first element; ``None`` a null pointer, where the function tests it
        with ``T.isnullptr`` (elsewhere native code would dereference it)."""
        np = _np()
        if arg is None:
            if not nullable:
                raise ArgumentError(f"{where}: None (a null pointer) is accepted only by a "
                                    "function that tests this handle with T.isnullptr; pass an array")
            return None
        if isinstance(arg, NDArray):
            if arg.device.device_type != "cpu":
                raise ArgumentError(f"{where}: the array is on {arg.device}, the function runs on cpu(0)")
            arr = arg.host_array()
        elif isinstance(arg, np.ndarray):
            arr = arg
        elif is_dlpack_array(arg):
            device = device_of(arg, where)
            if device.device_type != "cpu":
                raise ArgumentError(f"{where}: the array is on {device}, the function runs on cpu(0)")
            arr = host_view(arg, where)
        else:
            raise ArgumentError(f"{where}: a T.handle takes an array (tirfun.nd.array, "
                                f"numpy.ndarray or any DLPack array) or None, got {type(arg).__name__}")
        if not arr.flags.c_contiguous:
            raise ArgumentError(f"{where}: the array is not C-contiguous; a T.handle passes the "
                                "address of contiguous memory")
        return arr.ctypes.data

    # ------------------------------------------------------------ arrays
    def _array(self, p, arg, np_dtype, sizes, origin):
        buf = p.buffer
        where = f"function {self.sig.name}, parameter {p.name}"
        np = _np()
        if self.device_type == "cuda":
            arr = self._device_array(where, buf, arg)
        elif isinstance(arg, NDArray):
            if arg.device.device_type != "cpu":
                raise ArgumentError(f"{where}: the array is on {arg.device}, the function runs on cpu(0)")
            arr = arg.host_array()
        elif isinstance(arg, np.ndarray):
            arr = arg
        elif is_dlpack_array(arg):
            # torch tensors and other DLPack arrays: viewed, not copied
            device = device_of(arg, where)
            if device.device_type != "cpu":
                raise ArgumentError(f"{where}: the array is on {device}, the function runs on cpu(0)")
            arr = host_view(arg, where)
        else:
            raise ArgumentError(f"{where}: expected an array (tirfun.nd.array, numpy.ndarray or "
                                f"any DLPack array) of {buf.dtype}, got {type(arg).__name__}")
        if np_dtype is None or arr.dtype != np_dtype:
            raise ArgumentError(f"{where}: expected dtype {buf.dtype}, got {arr.dtype}")
        shape = arr.shape
        if len(shape) != len(buf.shape):
            raise ArgumentError(f"{where}: expected {len(buf.shape)} dimension(s) "
                                f"{_shape_text(buf.shape)}, got {len(shape)} {tuple(shape)}")
        for k, (dim, actual) in enumerate(zip(buf.shape, shape)):
            self._bind(where, f"dimension {k}", dim, actual, sizes, origin, tuple(shape), buf.shape)
        if buf.strides:
            if arr.itemsize and any(s % arr.itemsize for s in arr.strides):
                raise ArgumentError(f"{where}: strides {arr.strides} are not whole elements")
            elems = tuple(s // arr.itemsize for s in arr.strides)
            for k, (stride, actual) in enumerate(zip(buf.strides, elems)):
                if shape[k] == 1:
                    # a stride of a length-1 axis is never used; a variable
                    # naming it is bound to 0, as TVM binds auto-broadcast strides
                    if isinstance(stride, Var) and stride not in sizes:
                        sizes[stride] = 0
                        origin[stride] = f"{where}, stride {k}"
                    continue
                if actual < 0:
                    raise ArgumentError(f"{where}: negative strides are not supported")
                self._bind(where, f"stride {k}", stride, actual, sizes, origin, elems, buf.strides)
        elif not arr.flags.c_contiguous:
            raise ArgumentError(f"{where}: the array is not C-contiguous; pass "
                                "numpy.ascontiguousarray(...) or a tirfun.nd.array")
        if not arr.flags.aligned:
            raise ArgumentError(f"{where}: the array's data is not aligned to its element size")
        if p.var in self.sig.written or buf in self.sig.written:
            if not arr.flags.writeable:
                raise ArgumentError(f"{where}: the function writes this array, but it is read-only")
        return arr

    def _device_array(self, where, buf, arg):
        """The device memory of a GPU array (an NDArray, or any DLPack array
        on a GPU, viewed without a copy)."""
        np = _np()
        if isinstance(arg, NDArray):
            device = arg.device
        elif isinstance(arg, np.ndarray):
            device = None
        elif is_dlpack_array(arg):
            device = device_of(arg, where)
        else:
            raise ArgumentError(f"{where}: expected an array on a GPU (tirfun.nd.array(x, "
                                f"tirfun.cuda(0)) or any DLPack GPU array) of {buf.dtype}, got "
                                f"{type(arg).__name__}")
        if device is None or device.device_type != "cuda":
            raise ArgumentError(f"{where}: the array is on {device or 'the host (numpy)'}, the "
                                "function runs on a GPU: copy it with tirfun.nd.array(x, "
                                "tirfun.cuda(0))")
        if isinstance(arg, NDArray):
            return arg._array
        from .dlpack import device_view

        view = device_view(arg, where)
        if view.ptr % 16:
            # kernels load vectors of up to 16 bytes from a buffer's start
            raise ArgumentError(f"{where}: the GPU array starts at 0x{view.ptr:x}, not aligned to "
                                "16 bytes; pass a contiguous copy")
        return view

    def _bind(self, where, what, dim, actual, sizes, origin, shown, declared):
        if isinstance(dim, IntImm):
            if dim.value != actual:
                raise ArgumentError(f"{where}: {what} must be {dim.value}, got {actual} "
                                    f"(expected {_shape_text(declared)}, got {shown})")
            return
        if isinstance(dim, Var):
            if not dtype_fits(dim.dtype, actual):
                raise ArgumentError(f"{where}: {what} is {actual}, too large for the {dim.dtype} "
                                    f"size variable {dim.name}")
            bound = sizes.get(dim)
            if bound is None:
                sizes[dim] = actual
                origin[dim] = where.rpartition(", ")[2]
            elif bound != actual:
                raise ArgumentError(f"{where}: {what} is {actual}, but {dim.name} = {bound} (set by "
                                    f"{origin[dim]}; expected {_shape_text(declared)})")

    def _check_expressions(self, sizes, arrays) -> None:
        for p, arr in arrays:
            buf = p.buffer
            where = f"function {self.sig.name}, parameter {p.name}"
            for k, (dim, actual) in enumerate(zip(buf.shape, arr.shape)):
                if isinstance(dim, (IntImm, Var)):
                    continue
                try:
                    expected = eval_int(dim, sizes)
                except (KeyError, ZeroDivisionError):
                    raise ArgumentError(f"{where}: dimension {k} ({expr_text(dim)}) cannot be "
                                        "evaluated from the other arguments") from None
                if expected != actual:
                    raise ArgumentError(f"{where}: dimension {k} must be {expr_text(dim)} = {expected}, "
                                        f"got {actual}")

    def _check_overlap(self, arrays) -> None:
        spans = []
        for p, arr in arrays:
            start = arr.ctypes.data
            extent = 0 if arr.size == 0 else sum((n - 1) * abs(s) for n, s in zip(arr.shape, arr.strides)) + arr.itemsize
            written = p.var in self.sig.written or p.buffer in self.sig.written
            spans.append((p, start, start + extent, written))
        for i, (p, a0, a1, w) in enumerate(spans):
            for q, b0, b1, v in spans[i + 1:]:
                if (w or v) and a0 < b1 and b0 < a1:
                    raise ArgumentError(
                        f"function {self.sig.name}: parameters {p.name} and {q.name} share memory, "
                        "but the function declares tir.noalias and writes one of them; pass "
                        "separate arrays")


_OPS = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%"}


def expr_text(e) -> str:
    """A size expression as short text (``n * 4``), without the printer."""
    if isinstance(e, IntImm):
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    op = _OPS.get(type(e).__name__)
    if op is not None:
        return f"({expr_text(e.a)} {op} {expr_text(e.b)})"
    return repr(e)


def _shape_text(dims) -> str:
    return "(" + ", ".join(expr_text(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


__all__ = ["ArgChecker"]
