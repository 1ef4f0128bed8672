"""Check and bind the arguments of one run: arrays to buffers, numbers to
scalar parameters, and symbolic sizes to the arrays' shapes."""

from __future__ import annotations

import attrs
import numpy as np

from ..errors import ArgumentError, InterpError
from ..nodes import IntImm, Var
from ..nodes.dtype import DataType
from .runtime import NULL, ListStorage, memoryview_of
from .semantics import (
    MEMORYVIEW_FORMATS, ROUNDERS, numpy_dtype, round_bf16, round_f16, round_f32,
)


@attrs.define
class Bound:
    """The arguments of one run, ready for the generated kernel."""

    storages: tuple
    values: tuple
    shapes: tuple
    write_backs: list  # (array, storage, dtype name) to copy back after the run

    def write_back(self) -> None:
        """Copy results held outside the caller's arrays back into them."""
        for array, storage, dtype in self.write_backs:
            if isinstance(storage, ListStorage):
                # the values are already rounded to the element type
                flat = np.array(storage, dtype=np.float64).astype(array.dtype)
            else:
                flat = np.frombuffer(storage.cast("B"), dtype=array.dtype)
            flat = flat.reshape(array.shape)
            if not array.flags.writeable:
                if not np.array_equal(flat, array, equal_nan=True):
                    raise InterpError("the function wrote into an argument array that is read-only")
                continue
            np.copyto(array, flat)


def _param_label(spec) -> str:
    return spec.buffer.name if spec.buffer is not None else spec.var.name


def bind_arguments(compiled, args: tuple, kwargs: dict) -> Bound:
    """Match ``args`` (in parameter order) and ``kwargs`` (by parameter or
    buffer name) to the parameters of ``compiled``; check every one."""
    params = compiled.params
    labels = [_param_label(s) for s in params]
    if len(args) > len(params):
        raise ArgumentError(f"the function takes {len(params)} arguments ({', '.join(labels)}), "
                            f"got {len(args)}")
    given = dict(enumerate(args))
    for key, value in kwargs.items():
        index = next((i for i, s in enumerate(params)
                      if key == s.var.name or (s.buffer is not None and key == s.buffer.name)), None)
        if index is None:
            raise ArgumentError(f"the function has no parameter {key!r} (its parameters are "
                                f"{', '.join(labels)})")
        if index in given:
            raise ArgumentError(f"parameter {labels[index]} is given twice")
        given[index] = value

    values: dict[Var, object] = {}
    for i, spec in enumerate(params):
        if spec.buffer is None and not spec.var.dtype.is_handle and i in given:
            values[spec.var] = _scalar(spec.var, given[i])

    storages, shapes, write_backs = [], [], []
    for i, spec in enumerate(params):
        is_array = spec.buffer is not None or spec.var.dtype.is_handle
        if not is_array:
            shapes.append(())
            continue
        label = labels[i]
        if i not in given:
            raise ArgumentError(f"missing the argument for parameter {label}")
        array = given[i]
        if array is None and spec.buffer is None:
            # a bare T.handle takes None as a null pointer, as TVM passes it
            storages.append(NULL)
            shapes.append(())
            continue
        if not isinstance(array, np.ndarray):
            raise ArgumentError(f"the argument for parameter {label} must be a numpy array, "
                                f"got {type(array).__name__}")
        if spec.buffer is not None:
            _check_buffer_argument(spec.buffer, array, values)
            dtype = str(spec.buffer.dtype)
        else:
            if array.dtype.name not in (*MEMORYVIEW_FORMATS, "float16", "bfloat16"):
                raise ArgumentError(f"the argument for parameter {label} has the unsupported "
                                    f"element type {array.dtype}")
            dtype = array.dtype.name
        storage, copied = _storage(array, dtype)
        storages.append(storage)
        shapes.append(tuple(int(d) for d in array.shape))
        if copied:
            write_backs.append((array, storage, dtype))

    for var in compiled.free:
        if var not in values:
            raise ArgumentError(f"no value for {var.name}: pass it as an argument, or pass an "
                                "array whose shape determines it")
    return Bound(tuple(storages), tuple(values[v] for v in compiled.free), tuple(shapes),
                 write_backs)


def _scalar(var: Var, value):
    """A Python value of ``var``'s dtype, or ArgumentError."""
    dt = var.dtype
    if isinstance(value, np.generic):
        value = value.item()
    if dt.is_bool:
        if isinstance(value, bool) or value in (0, 1):
            return bool(value)
        raise ArgumentError(f"parameter {var.name} is a bool, got {value!r}")
    if dt.is_integer:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(f"parameter {var.name} is an {dt}, got {type(value).__name__} {value!r}")
        if not dt.min_value() <= value <= dt.max_value():
            raise ArgumentError(f"parameter {var.name}: {value} does not fit in {dt}")
        return value
    if dt.is_float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ArgumentError(f"parameter {var.name} is a {dt}, got {type(value).__name__} {value!r}")
        value = float(value)
        if dt.bits == 32:
            return round_f32(value)
        if dt.is_mini_float:
            return ROUNDERS[str(dt)](value)
        if dt.bits == 16:
            return round_f16(value) if dt.code == "float" else round_bf16(value)
        return value
    raise ArgumentError(f"parameter {var.name} has the unsupported type {dt}")


def _bind(var: Var, value: int, values: dict, what: str) -> None:
    if var in values:
        if values[var] != value:
            raise ArgumentError(f"{what} is {value}, but {var.name} is already {values[var]}")
        return
    if not var.dtype.min_value() <= value <= var.dtype.max_value():
        raise ArgumentError(f"{what} is {value}, which does not fit {var.name}: {var.dtype}")
    values[var] = value


def _check_buffer_argument(buf, array: np.ndarray, values: dict) -> None:
    expected = numpy_dtype(buf.dtype)
    if array.dtype != expected:
        raise ArgumentError(f"the argument for buffer {buf.name} has element type {array.dtype}, "
                            f"expected {expected}")
    if array.ndim != len(buf.shape):
        raise ArgumentError(f"the argument for buffer {buf.name} has {array.ndim} dimensions, "
                            f"expected {len(buf.shape)}")
    for k, (dim, size) in enumerate(zip(buf.shape, array.shape)):
        size = int(size)
        if isinstance(dim, IntImm):
            if dim.value != size:
                raise ArgumentError(f"the argument for buffer {buf.name} has shape "
                                    f"{tuple(array.shape)}, expected {_shape_text(buf)}")
        elif isinstance(dim, Var):
            _bind(dim, size, values, f"dimension {k} of the argument for buffer {buf.name}")
    if buf.strides:
        contiguous = _row_major(array.shape)
        for k, (st, expect) in enumerate(zip(buf.strides, contiguous)):
            if isinstance(st, IntImm):
                if st.value != expect and array.shape[k] > 1:
                    raise ArgumentError(f"buffer {buf.name} declares stride {st.value} for dimension "
                                        f"{k}; the interpreter passes compact row-major arrays, "
                                        f"whose stride there is {expect}")
            elif isinstance(st, Var):
                _bind(st, expect, values, f"stride {k} of buffer {buf.name}")
            else:
                raise ArgumentError(f"buffer {buf.name}: a computed stride ({st.script()}) is not "
                                    "supported for arguments")
    off = buf.elem_offset
    if isinstance(off, Var):
        _bind(off, 0, values, f"the element offset of buffer {buf.name}")
    elif off is not None and not (isinstance(off, IntImm) and off.value == 0):
        raise ArgumentError(f"buffer {buf.name} has a non-zero element offset, which an argument "
                            "array cannot have")


def _shape_text(buf) -> str:
    dims = []
    for d in buf.shape:
        dims.append(str(d.value) if isinstance(d, IntImm) else (d.name if isinstance(d, Var) else "?"))
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _row_major(shape) -> list[int]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= int(d)
    return list(reversed(strides))


def _storage(array: np.ndarray, dtype: str):
    """(storage, whether it is a copy that must be written back)."""
    dt = DataType(dtype)
    if dt.element_of in ("float16", "bfloat16") or dt.is_mini_float:
        # held as Python floats (exact: both widen to double without rounding;
        # ml_dtypes warns about NaNs it widens, which are fine here)
        with np.errstate(invalid="ignore"):
            wide = array.astype(np.float64)
        return ListStorage(wide.reshape(-1).tolist(), str(dt.element_of)), True
    if array.flags.c_contiguous:
        return memoryview_of(array), False
    copy = np.ascontiguousarray(array)
    return memoryview_of(copy), True


__all__ = ["Bound", "bind_arguments"]
