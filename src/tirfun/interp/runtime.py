"""The helpers generated code calls, and the storages it works on."""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..nodes.dtype import DataType
from .intrinsics import helper_namespace
from .semantics import (
    MEMORYVIEW_FORMATS, Fault, fdiv, ffloordiv, ffloormod, float_to_int, ftruncmod,
    rounder_helpers, shift_left, shift_right, tdiv, tmod,
)


class ListStorage(list):
    """Storage of a buffer whose elements have no memoryview format
    (float16, bfloat16): a list of Python floats that knows its dtype."""

    __slots__ = ("dtype",)

    def __init__(self, values, dtype: str):
        super().__init__(values)
        self.dtype = dtype


class ListView(ListStorage):
    """The elements of a ListStorage from ``start`` on, sharing them: a
    pointer into the middle of a float16 or bfloat16 buffer."""

    __slots__ = ("base", "start")

    def __init__(self, base: ListStorage, start: int):
        super().__init__((), base.dtype)
        self.base = base
        self.start = start

    def __len__(self):
        return len(self.base) - self.start

    def __getitem__(self, k):
        if not 0 <= k < len(self):
            raise IndexError("list index out of range")
        return self.base[self.start + k]

    def __setitem__(self, k, value):
        if not 0 <= k < len(self):
            raise IndexError("list assignment index out of range")
        self.base[self.start + k] = value

    def __iter__(self):
        return (self.base[k] for k in range(self.start, len(self.base)))


class NullPointer:
    """The storage of a null pointer (a ``T.handle`` passed None): a buffer
    may view it, as in TVM, but any load or store through it is a fault."""

    __slots__ = ()

    def __getitem__(self, index):
        raise Fault("a load through a null pointer (a T.handle passed None)")

    def __setitem__(self, index, value):
        raise Fault("a store through a null pointer (a T.handle passed None)")

    def __len__(self):
        return 0


#: the one null pointer
NULL = NullPointer()


def offset_view(storage, start: int):
    """The storage a pointer ``start`` elements into ``storage`` names
    (``T.address_of(A[i])``): shared, so writes through it are seen."""
    if storage is NULL:
        raise Fault("a pointer into a null pointer (a T.handle passed None)")
    if not 0 <= start <= len(storage):
        raise Fault(f"a pointer {start} elements into storage of {len(storage)} elements")
    if isinstance(storage, ListView):
        return ListView(storage.base, storage.start + start)
    if isinstance(storage, ListStorage):
        return ListView(storage, start)
    return storage[start:]


def memoryview_of(array: np.ndarray):
    """A flat, writable-if-possible memoryview over a C-contiguous array."""
    fmt = MEMORYVIEW_FORMATS[array.dtype.name]
    return memoryview(array.reshape(-1)).cast("B").cast(fmt)


def storage_dtype(storage) -> str:
    """The element dtype a storage holds."""
    if isinstance(storage, ListStorage):
        return storage.dtype
    for name, fmt in MEMORYVIEW_FORMATS.items():
        if fmt == storage.format:
            return name
    return storage.format


def alloc(dtype: str, size: int):
    """Fresh scratch storage. Floats start as NaN and integers as 0, so that
    reading an element before writing it shows up in float results."""
    if size < 0:
        raise Fault(f"cannot allocate a buffer of {size} elements of {dtype}")
    dt = DataType(dtype).element_of
    name = str(dt)
    if name not in MEMORYVIEW_FORMATS:
        return ListStorage([float("nan")] * size, name)
    fill = np.nan if dt.is_float else 0
    return memoryview_of(np.full(size, fill, dtype=name))


def alloc_const(dtype: str, values: tuple):
    """Storage holding constant ``values`` (already values of ``dtype``)."""
    storage = alloc(dtype, len(values))
    for k, v in enumerate(values):
        storage[k] = v
    return storage


def out_of_bounds(verb: str, buffer: str, index: tuple, shape: tuple):
    raise Fault(f"out-of-bounds {verb} {'to' if verb == 'store' else 'from'} buffer {buffer} at "
                f"index {_tuple(index)}; its shape is {_tuple(shape)}")


def domain_error(block: str, var: str, value: int, lo: int, extent: int):
    raise Fault(f"block {block}: iteration variable {var} = {value} lies outside its domain "
                f"[{lo}, {lo + extent})")


def region_error(buffer: str, source: str, dim: int, lo: int, extent: int, size: int):
    raise Fault(f"match_buffer {buffer}: the region [{lo}, {lo + extent}) of dimension {dim} of "
                f"buffer {source} exceeds its extent {size}")


def match_error(buffer: str, reason: str):
    raise Fault(f"match_buffer {buffer}: {reason}")


def check_view(storage, dtype: str, buffer: str, needed: int, offset: int):
    if storage is NULL:
        return  # only an access through it is an error
    held = storage_dtype(storage)
    if held != str(DataType(dtype).element_of):
        raise Fault(f"buffer {buffer} of {dtype} views storage holding {held}")
    if offset < 0 or needed > len(storage):
        raise Fault(f"buffer {buffer} needs {needed} elements but its storage holds {len(storage)}")


def assert_failed(message: str):
    raise Fault(f"assertion failed: {message}")


def shape_mismatch(buffer: str, dim: int, actual: int, expected: int):
    raise ArgumentError(f"argument for buffer {buffer}: dimension {dim} is {actual} but the "
                        f"function requires {expected}")


def _tuple(values) -> str:
    values = tuple(values)
    if len(values) == 1:
        return f"({values[0]},)"
    return "(" + ", ".join(str(v) for v in values) + ")"


class NoModule:
    """``h_callees`` of a function run on its own: a call of another
    function of its module has nothing to run."""

    def __getitem__(self, name: str):
        from ..errors import InterpError

        raise InterpError(f"the function calls {name}, a function of its module: run the module "
                          "(interp.run(mod, ...)) so that the callee is known")


def namespace() -> dict:
    """The globals of generated code."""
    ns = helper_namespace()
    ns.update(
        h_alloc=alloc, h_alloc_const=alloc_const, h_out_of_bounds=out_of_bounds, h_domain_error=domain_error,
        h_region_error=region_error, h_match_error=match_error, h_check_view=check_view,
        h_assert_failed=assert_failed, h_shape_mismatch=shape_mismatch,
        h_f2i=float_to_int, h_shl=shift_left, h_shr=shift_right, h_tdiv=tdiv, h_tmod=tmod,
        h_fdiv=fdiv, h_ffloordiv=ffloordiv, h_ffloormod=ffloormod, h_ftruncmod=ftruncmod,
        h_callees=NoModule(),
        h_offset=offset_view, h_null=NULL, **rounder_helpers(),
    )
    ns["__builtins__"] = {"range": range, "abs": abs, "float": float, "int": int, "len": len,
                          "max": max, "min": min, "str": str, "bool": bool, "True": True,
                          "False": False, "None": None}
    return ns


__all__ = ["NULL", "ListStorage", "memoryview_of", "storage_dtype", "alloc", "namespace"]
