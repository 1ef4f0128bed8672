"""Devices: where arrays live and code runs.

``tirfun.cpu(0)`` is the host. ``tirfun.cuda(0)`` is an NVIDIA GPU, reached
through cuda-python, imported only when a GPU device is asked for; without
the package, a driver or a device it raises a :class:`TirfunError` that
says which is missing.
"""

from __future__ import annotations

import attrs

from ..errors import TirfunError

_TYPES = ("cpu", "cuda")


@attrs.frozen
class Device:
    """A device: its type (``"cpu"`` or ``"cuda"``) and index."""

    device_type: str
    device_id: int = 0

    def __attrs_post_init__(self):
        if self.device_type not in _TYPES:
            raise TirfunError(f"unknown device type {self.device_type!r}; expected cpu or cuda")
        if not isinstance(self.device_id, int) or self.device_id < 0:
            raise TirfunError(f"device index must be a non-negative int, got {self.device_id!r}")

    @property
    def exist(self) -> bool:
        """Whether the device is present (TVM's name)."""
        if self.device_type == "cpu":
            return self.device_id == 0
        try:
            return self.device_id < _cuda_device_count()
        except TirfunError:
            return False

    def sync(self) -> None:
        """Wait for work queued on the device (a no-op on the CPU, whose
        calls return when done)."""
        if self.device_type == "cuda":
            from .cuda_driver import synchronize

            synchronize(self.device_id)

    @property
    def compute_version(self) -> str:
        """A GPU's compute capability as TVM writes it (``"9.0"``)."""
        if self.device_type != "cuda":
            raise TirfunError(f"{self} has no compute capability")
        from .cuda_driver import device_attribute

        return (f"{device_attribute(self.device_id, 'COMPUTE_CAPABILITY_MAJOR')}."
                f"{device_attribute(self.device_id, 'COMPUTE_CAPABILITY_MINOR')}")

    def __str__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __repr__ = __str__


def cpu(dev_id: int = 0) -> Device:
    """The host CPU."""
    if dev_id != 0:
        raise TirfunError(f"there is one CPU device, cpu(0); got cpu({dev_id})")
    return Device("cpu", 0)


def cuda(dev_id: int = 0) -> Device:
    """NVIDIA GPU number ``dev_id``; raises TirfunError when there is none."""
    count = _cuda_device_count()
    if dev_id >= count:
        raise TirfunError(f"cuda({dev_id}) does not exist: the driver reports {count} GPU(s)")
    return Device("cuda", dev_id)


def _cuda_device_count() -> int:
    from .cuda_driver import device_count

    count = device_count()
    if count == 0:
        raise TirfunError("the CUDA driver reports no GPU")
    return count


__all__ = ["Device", "cpu", "cuda"]
