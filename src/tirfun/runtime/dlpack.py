"""DLPack: arrays pass between tirfun and other libraries without copies.

An array from another library (a numpy array, a torch tensor, anything with
``__dlpack__`` and ``__dlpack_device__``) is taken over through numpy's
DLPack consumer, which views the producer's memory; an NDArray is handed
out through the numpy array holding its memory. Both directions share
memory: a write through one is seen through the other.

The device of a DLPack array is a pair ``(device type code, index)``;
:data:`DEVICE_TYPES` maps the codes tirfun knows to its device types
(``kDLCPU = 1``, ``kDLCUDA = 2``). Only host memory is taken over today:
an array on a GPU gets a clear error until tirfun has CUDA arrays.

bfloat16 cannot pass: numpy's DLPack support covers bool, integer, float
and complex elements only, and refuses DLPack's ``kDLBfloat`` (type code
4) in both directions, and ml_dtypes (which gives numpy its bfloat16) adds
none. Such an array raises an :class:`ArgumentError` that says so.
"""

from __future__ import annotations

from ..errors import ArgumentError, TirfunError
from .device import Device

K_DL_CPU = 1
K_DL_CUDA = 2
K_DL_BFLOAT = 4  # DLPack's type code of bfloat16 elements

# DLPack device type code -> tirfun device type
DEVICE_TYPES = {K_DL_CPU: "cpu", K_DL_CUDA: "cuda"}
# and back
DEVICE_CODES = {name: code for code, name in DEVICE_TYPES.items()}

_BF16 = ("bfloat16 arrays cannot pass through DLPack: numpy's DLPack support takes bool, "
         "integer, float and complex elements only and refuses DLPack's bfloat16 (kDLBfloat, "
         "type code 4); pass a numpy array of ml_dtypes.bfloat16 instead")


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
    try:
        return np.from_dlpack(obj)
    except BufferError as exc:
        if _is_bfloat16(obj):
            raise ArgumentError(f"{what}: {_BF16}") from None
        raise ArgumentError(f"{what} cannot be taken over through DLPack: {exc}") from None
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ArgumentError(f"{what} cannot be taken over through DLPack: {exc}") from None


def _is_bfloat16(obj) -> bool:
    return "bfloat16" in str(getattr(obj, "dtype", ""))


def export(array, device: Device, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of the numpy ``array`` holding an NDArray's memory
    (keyword arguments as the protocol's, passed on only when given, so older
    numpy keeps working)."""
    if device.device_type != "cpu":
        raise TirfunError(f"DLPack export of arrays on {device} is not supported yet")
    if str(array.dtype) == "bfloat16":
        raise ArgumentError(_BF16)
    if stream is not None:
        raise ArgumentError(f"__dlpack__: an array on {device} has no stream; pass stream=None")
    kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
    try:
        return array.__dlpack__(**kwargs)
    except BufferError as exc:
        raise ArgumentError(f"__dlpack__: {exc}") from None


__all__ = ["K_DL_CPU", "K_DL_CUDA", "K_DL_BFLOAT", "DEVICE_TYPES", "DEVICE_CODES", "is_dlpack_array",
           "dlpack_device", "device_of", "host_view", "export"]
