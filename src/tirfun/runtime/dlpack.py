"""DLPack: arrays pass between tirfun and other libraries without copies.

An array from another library (a numpy array, a torch tensor, anything with
``__dlpack__`` and ``__dlpack_device__``) is taken over through numpy's
DLPack consumer, which views the producer's memory; an NDArray is handed
out through the numpy array holding its memory. Both directions share
memory: a write through one is seen through the other.

The device of a DLPack array is a pair ``(device type code, index)``;
:data:`DEVICE_TYPES` maps the codes tirfun knows to its device types
(``kDLCPU = 1``, ``kDLCUDA = 2``). Host memory is taken over through
numpy; GPU memory (torch or cupy CUDA tensors) through DLPack's C structures
read and written with ctypes (:func:`export_device`, :func:`device_view`).

numpy's DLPack support covers bool, integer, float and complex elements
only: it refuses DLPack's ``kDLBfloat`` (type code 4) and DLPack 1.1's
float8 and float4 codes in both directions, and ml_dtypes (which gives
numpy these types) adds no DLPack support. tirfun carries them itself
through DLPack's C structures (:data:`NARROW_CODES`): an NDArray of
bfloat16, float8_e4m3fn, float8_e5m2 or float4_e2m1fn exports a capsule with
DLPack's code, and a foreign array of one of them (a torch tensor) is viewed
with ml_dtypes' type. float4 travels one element per byte, which DLPack
calls padded and can say only in a versioned capsule (DLPack 1.0 and
later): a consumer or a producer that speaks only the older capsule is
refused with an :class:`ArgumentError` that says so. A numpy array of these
types cannot be the producer (numpy's ``__dlpack__`` refuses it); pass the
array itself.
"""

from __future__ import annotations

from ..errors import ArgumentError
from .device import Device

K_DL_CPU = 1
K_DL_CUDA = 2
K_DL_BFLOAT = 4  # DLPack's type code of bfloat16 elements

# DLPack device type code -> tirfun device type
DEVICE_TYPES = {K_DL_CPU: "cpu", K_DL_CUDA: "cuda"}
# and back
DEVICE_CODES = {name: code for code, name in DEVICE_TYPES.items()}

#: the element types numpy's DLPack support lacks, with DLPack's type code
#: (1.1 for float8 and float4) and width in bits
NARROW_CODES = {"bfloat16": (4, 16), "float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8),
                "float4_e2m1fn": (17, 4)}
_NARROW_NAMES = {code: name for name, (code, _bits) in NARROW_CODES.items()}

#: DLPack's flag of a sub-byte type held one element per byte
_FLAG_SUBBYTE_PADDED = 1 << 2


def _numpy_refuses(name: str) -> str:
    return (f"{name} arrays cannot pass through numpy's DLPack export: numpy takes bool, integer, "
            f"float and complex elements only (DLPack's {name} is type code "
            f"{NARROW_CODES[name][0]}); pass the numpy array itself (tirfun.nd.array or a direct "
            "argument)")


def is_dlpack_array(obj) -> bool:
    """Whether ``obj`` offers the DLPack protocol (``__dlpack__`` and
    ``__dlpack_device__``)."""
    return hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")


def dlpack_device(device: Device) -> tuple[int, int]:
    """The DLPack ``(device type code, index)`` of a tirfun device."""
    return DEVICE_CODES[device.device_type], device.device_id


def device_of(obj, what: str = "the array") -> Device:
    """The tirfun device of a DLPack array."""
    try:
        code, index = obj.__dlpack_device__()
        code, index = int(code), int(index)
    except Exception as exc:  # noqa: BLE001 - a foreign object's protocol may fail any way
        raise ArgumentError(f"{what}: __dlpack_device__() failed: {exc}") from None
    kind = DEVICE_TYPES.get(code)
    if kind is None:
        raise ArgumentError(f"{what} lives on DLPack device type {code}, which tirfun does not "
                            f"know (it knows {', '.join(f'{c} ({n})' for c, n in DEVICE_TYPES.items())})")
    return Device(kind, index)


def host_view(obj, what: str = "the array"):
    """A numpy array viewing the memory of the DLPack array ``obj`` on the
    host (no copy), or an ArgumentError saying why it cannot be had."""
    import numpy as np

    device = device_of(obj, what)
    if device.device_type != "cpu":
        raise ArgumentError(f"{what} lives on {device}; tirfun takes host arrays through DLPack "
                            "today, not arrays on a GPU")
    name = _narrow_name(obj)
    if isinstance(obj, np.ndarray) and name is not None:
        raise ArgumentError(f"{what}: {_numpy_refuses(name)}")
    if name is not None:
        return _narrow_host_view(obj, what)
    try:
        return np.from_dlpack(obj)
    except (BufferError, TypeError, ValueError, RuntimeError) as exc:
        refused = exc
    # numpy takes no narrow float: a producer that does not name its element
    # type may still hold one
    view = None if isinstance(obj, np.ndarray) else _narrow_host_view(obj, what, only_narrow=True)
    if view is None:
        raise ArgumentError(f"{what} cannot be taken over through DLPack: {refused}") from None
    return view


def _narrow_name(obj) -> str | None:
    """The narrow float type an array says it holds (``torch.float8_e4m3fn``
    and ml_dtypes' ``float8_e4m3fn`` both name it), or None."""
    text = str(getattr(obj, "dtype", ""))
    return next((name for name in NARROW_CODES if text.endswith(name)), None)


def export(array, device: Device, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of the numpy ``array`` holding an NDArray's memory
    (keyword arguments as the protocol's, passed on only when given, so older
    numpy keeps working)."""
    if device.device_type == "cuda":
        return export_device(array, device, stream=stream, max_version=max_version,
                             dl_device=dl_device, copy=copy)
    if stream is not None:
        raise ArgumentError(f"__dlpack__: an array on {device} has no stream; pass stream=None")
    if str(array.dtype) in NARROW_CODES:
        return _export_narrow(array, device, max_version, dl_device, copy)
    kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
    try:
        return array.__dlpack__(**kwargs)
    except BufferError as exc:
        raise ArgumentError(f"__dlpack__: {exc}") from None




# GPU arrays: DLPack's C structures, built and read with ctypes -------------
# (numpy's DLPack support is for host memory only)

import ctypes  # noqa: E402 - only the GPU half below needs it


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DELETER)]
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_DL_CODES = {"i": 0, "u": 1, "f": 2, "b": 6, "c": 5}  # kDLInt, kDLUInt, kDLFloat, kDLBool, kDLComplex
_NP_KINDS = {0: "i", 1: "u", 2: "f", 6: "b", 5: "c"}

# the exported tensors still referenced by a consumer: address -> (struct,
# shape array, the buffer kept alive); the entry goes when the consumer calls
# the deleter (a C callback cannot hold a Python reference by itself)
_exported: dict = {}


@_DELETER
def _delete_exported(managed):
    _exported.pop(ctypes.addressof(managed.contents), None)


def _capsule_api():
    api = ctypes.pythonapi
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.restype = ctypes.c_int
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api


@_CAPSULE_DESTRUCTOR
def _destroy_capsule(capsule_ptr):
    # an unconsumed capsule ("dltensor" still) owns its tensor: release it
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    if api.PyCapsule_IsValid(capsule_ptr, b"dltensor"):
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        _exported.pop(api.PyCapsule_GetPointer(capsule_ptr, b"dltensor"), None)


def export_device(buffer, device: Device, stream=None, max_version=None, dl_device=None,
                  copy=None):
    """The DLPack capsule of a GPU array (a :class:`~.cuda_array.DeviceBuffer`)
    sharing its memory; the buffer stays alive until the consumer is done."""
    import numpy as np

    if copy:
        raise ArgumentError("__dlpack__(copy=True): a GPU array is shared, not copied")
    if dl_device is not None and tuple(dl_device) != dlpack_device(device):
        raise ArgumentError(f"__dlpack__: the array lives on {device}, not on DLPack device "
                            f"{tuple(dl_device)}")
    dtype = np.dtype(buffer.dtype)
    if str(buffer.dtype) == "bfloat16":
        code, bits = K_DL_BFLOAT, 16
    elif str(buffer.dtype) in NARROW_CODES:
        raise ArgumentError(f"__dlpack__: {buffer.dtype} arrays on a GPU do not pass through "
                            "DLPack yet; copy the array to the host")
    elif dtype.kind in _DL_CODES:
        code, bits = _DL_CODES[dtype.kind], dtype.itemsize * 8
    else:
        raise ArgumentError(f"__dlpack__: elements of {dtype} have no DLPack type")
    managed = _DLManagedTensor()
    shape = (ctypes.c_int64 * max(buffer.ndim, 1))(*buffer.shape)
    managed.dl_tensor = _DLTensor(buffer.ptr, _DLDevice(K_DL_CUDA, device.device_id), buffer.ndim,
                                  _DLDataType(code, bits, 1), shape, None, 0)
    managed.deleter = _delete_exported
    address = ctypes.addressof(managed)
    _exported[address] = (managed, shape, buffer)
    # work on the default stream is ordered before the consumer's on any stream
    # once the device is idle: synchronise, as a producer without streams must
    from .cuda_driver import synchronize

    synchronize(device.device_id)
    return _capsule_api().PyCapsule_New(address, b"dltensor", _destroy_capsule)


class _Borrowed:
    """Keeps a consumed DLPack tensor alive; calls its deleter when dropped."""

    def __init__(self, address: int, source):
        self.address = address
        self.source = source

    def __del__(self):
        managed = _DLManagedTensor.from_address(self.address)
        if managed.deleter:
            managed.deleter(ctypes.pointer(managed))


def device_view(obj, what: str = "the array"):
    """A :class:`~.cuda_array.DeviceBuffer` viewing the memory of the DLPack
    GPU array ``obj`` (no copy), or an ArgumentError saying why not."""
    import numpy as np

    from .cuda_array import DeviceBuffer

    device = device_of(obj, what)
    try:
        capsule = obj.__dlpack__(stream=None)
    except Exception as exc:  # noqa: BLE001 - a foreign producer may fail any way
        raise ArgumentError(f"{what}: __dlpack__() failed: {exc}") from None
    api = _capsule_api()
    if not api.PyCapsule_IsValid(capsule, b"dltensor"):
        raise ArgumentError(f"{what}: __dlpack__() did not return an unused DLPack capsule")
    address = api.PyCapsule_GetPointer(capsule, b"dltensor")
    tensor = _DLManagedTensor.from_address(address).dl_tensor
    if (tensor.device.device_type, tensor.device.device_id) != (K_DL_CUDA, device.device_id):
        raise ArgumentError(f"{what} says it lives on {device}, but its DLPack tensor is on "
                            f"device type {tensor.device.device_type}, index "
                            f"{tensor.device.device_id}")
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if tensor.dtype.code in _NARROW_NAMES and tensor.dtype.code != K_DL_BFLOAT:
        raise ArgumentError(f"{what}: {_NARROW_NAMES[tensor.dtype.code]} arrays on a GPU do not "
                            "pass through DLPack yet; copy the array to the host")
    if tensor.dtype.code == K_DL_BFLOAT:
        raise ArgumentError(f"{what}: bfloat16 arrays on a GPU do not pass through DLPack yet; "
                            "copy the array to the host")
    kind = _NP_KINDS.get(tensor.dtype.code)
    if kind is None or tensor.dtype.lanes != 1:
        raise ArgumentError(f"{what}: DLPack element type (code {tensor.dtype.code}, "
                            f"{tensor.dtype.bits} bits, {tensor.dtype.lanes} lanes) has no numpy type")
    dtype = np.dtype("bool") if kind == "b" else np.dtype(f"{kind}{tensor.dtype.bits // 8}")
    if tensor.strides:
        expected, step = [], 1
        for d in reversed(shape):
            expected.append(step)
            step *= d
        strides = tuple(tensor.strides[i] for i in range(tensor.ndim))
        if any(s != e for s, e, d in zip(strides, reversed(expected), shape) if d > 1):
            raise ArgumentError(f"{what} is not C-contiguous (strides {strides}); pass a "
                                "contiguous copy")
    api.PyCapsule_SetName(capsule, b"used_dltensor")
    owner = _Borrowed(address, obj)
    return DeviceBuffer(shape, dtype, (tensor.data or 0) + tensor.byte_offset, device.device_id,
                        owner=owner)


# narrow floats on the host: DLPack's C structures, legacy and versioned ----


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    pass


_DELETER_VERSIONED = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensorVersioned))
_DLManagedTensorVersioned._fields_ = [
    ("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER_VERSIONED),
    ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


def _export_narrow(array, device: Device, max_version, dl_device, copy):
    """The DLPack capsule of a host array of a narrow float type, with
    DLPack's type code. numpy makes the capsule of the same bytes seen as
    unsigned integers (so the capsule's destructor and deleter are numpy's,
    in C), and the element type is then set to DLPack's: versioned (DLPack
    1.x) when the consumer takes one, else the legacy capsule, which cannot
    say that float4 is padded."""
    import numpy as np

    name = str(array.dtype)
    code, bits = NARROW_CODES[name]
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    if name == "float4_e2m1fn" and not versioned:
        raise ArgumentError("__dlpack__: float4_e2m1fn arrays hold one element per byte, which "
                            "DLPack says only in a versioned capsule; the consumer asked for the "
                            "legacy one (pass max_version=(1, 1))")
    carrier = array.view(np.uint8 if array.dtype.itemsize == 1 else np.uint16)
    kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
    try:
        capsule = carrier.__dlpack__(**kwargs)
    except BufferError as exc:
        raise ArgumentError(f"__dlpack__: {exc}") from None
    api = _capsule_api()
    if api.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        managed = _DLManagedTensorVersioned.from_address(
            api.PyCapsule_GetPointer(capsule, b"dltensor_versioned"))
        if bits < 8:
            managed.flags |= _FLAG_SUBBYTE_PADDED
    elif bits < 8:
        raise ArgumentError("__dlpack__: this numpy makes only legacy DLPack capsules, which "
                            "cannot carry float4_e2m1fn held one element per byte")
    else:
        managed = _DLManagedTensor.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor"))
    managed.dl_tensor.dtype = _DLDataType(code, bits, 1)
    return capsule


class _BorrowedVersioned(_Borrowed):
    def __del__(self):
        managed = _DLManagedTensorVersioned.from_address(self.address)
        if managed.deleter:
            managed.deleter(ctypes.pointer(managed))


def _narrow_host_view(obj, what: str, only_narrow: bool = False):
    """A numpy array of ml_dtypes' type viewing a foreign host array of a
    narrow float type through DLPack's C structures (no copy); with
    ``only_narrow``, None (the capsule left unused) when the array holds
    another type."""
    import numpy as np

    from ..numpy_dtypes import numpy_dtype

    try:
        try:
            capsule = obj.__dlpack__(max_version=(1, 1))
        except TypeError:  # a producer from before DLPack 1.0 takes no max_version
            capsule = obj.__dlpack__()
    except Exception as exc:  # noqa: BLE001 - a foreign producer may fail any way
        raise ArgumentError(f"{what}: __dlpack__() failed: {exc}") from None
    api = _capsule_api()
    if api.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        address = api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        managed = _DLManagedTensorVersioned.from_address(address)
        tensor, flags, used, owner_cls = (managed.dl_tensor, managed.flags,
                                          b"used_dltensor_versioned", _BorrowedVersioned)
    elif api.PyCapsule_IsValid(capsule, b"dltensor"):
        address = api.PyCapsule_GetPointer(capsule, b"dltensor")
        tensor, flags, used, owner_cls = (_DLManagedTensor.from_address(address).dl_tensor, 0,
                                          b"used_dltensor", _Borrowed)
    else:
        raise ArgumentError(f"{what}: __dlpack__() did not return an unused DLPack capsule")
    dt = tensor.dtype
    name = _NARROW_NAMES.get(dt.code)
    if name is None and only_narrow:
        return None
    if name is None or dt.lanes != 1 or tensor.device.device_type != K_DL_CPU:
        raise ArgumentError(f"{what}: DLPack element type (code {dt.code}, {dt.bits} bits, "
                            f"{dt.lanes} lanes) on device type {tensor.device.device_type} is not "
                            "a narrow float tirfun takes")
    padded = dt.bits == 8 or (name == "float4_e2m1fn" and dt.bits == 4
                              and flags & _FLAG_SUBBYTE_PADDED)
    if dt.bits != NARROW_CODES[name][1] and not padded:
        raise ArgumentError(f"{what}: {name} elements of {dt.bits} bits are not tirfun's layout")
    if name == "float4_e2m1fn" and not padded:
        raise ArgumentError(f"{what}: the float4_e2m1fn array is packed two elements to a byte; "
                            "tirfun holds one element per byte (DLPack's padded float4)")
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if tensor.strides:
        step = 1
        for i in reversed(range(tensor.ndim)):
            if shape[i] > 1 and tensor.strides[i] != step:
                raise ArgumentError(f"{what} is not C-contiguous; pass a contiguous copy")
            step *= shape[i]
    api.PyCapsule_SetName(capsule, used)
    owner = owner_cls(address, obj)
    dtype = numpy_dtype(name)
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count == 0:
        return np.empty(shape, dtype)
    memory = (ctypes.c_uint8 * (count * dtype.itemsize)).from_address(
        (tensor.data or 0) + tensor.byte_offset)
    memory.owner = owner  # the producer's tensor lives as long as the view
    return np.frombuffer(memory, dtype=dtype).reshape(shape)


__all__ = ["NARROW_CODES", "K_DL_CPU", "K_DL_CUDA", "K_DL_BFLOAT", "DEVICE_TYPES", "DEVICE_CODES", "is_dlpack_array",
           "dlpack_device", "device_of", "host_view", "export", "export_device", "device_view"]
