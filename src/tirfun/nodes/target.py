"""``TargetConfig``: a target as an IR value, what ``T.target(...)`` writes.

TVM keeps a compilation target in a function's attributes
(``T.func_attr({"target": T.target("llvm")})``) and prints it as the
target's exported configuration, ``T.target({"keys": ["cpu"], "kind":
"llvm", "tag": ""})``. The record holds that configuration; built from TVM's
string form (``"llvm -mcpu=skylake"``) it has the kind, an empty tag, the
kind's default keys and one entry per option.
"""

from __future__ import annotations

import shlex

from attrs import field
from pyrsistent import PMap

from ..errors import NodeError
from .base import Node, freeze_value, node

# the keys TVM gives each kind when none are set
_DEFAULT_KEYS = {"llvm": ("cpu",), "c": ("cpu",), "cuda": ("cuda", "gpu"), "rocm": ("rocm", "gpu"),
                 "vulkan": ("vulkan", "gpu"), "metal": ("metal", "gpu"), "opencl": ("opencl", "gpu"),
                 "nvptx": ("cuda", "gpu"), "webgpu": ("webgpu", "gpu"), "hexagon": ("hexagon",),
                 "ext_dev": ("ext_dev",)}


def _config(value) -> PMap:
    if isinstance(value, str):
        value = parse_target_string(value)
    if not hasattr(value, "items") or not isinstance(value.get("kind"), str):
        raise NodeError(f"a target is a string such as \"llvm\" or a config dict with a \"kind\", "
                        f"got {value!r}")
    return freeze_value(dict(value))


def parse_target_string(text: str) -> dict:
    """``"llvm -mcpu=skylake -mattr=+avx2"`` as TVM's exported config."""
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise NodeError(f"cannot read the target {text!r}: {err}") from None
    if not words:
        raise NodeError("a target string names a kind, such as \"llvm\"")
    kind = words[0]
    config: dict = {"kind": kind, "tag": ""}
    for word in words[1:]:
        if not word.startswith("-"):
            raise NodeError(f"target option {word!r} must start with '-'")
        key, eq, val = word.lstrip("-").partition("=")
        if key == "keys":
            config["keys"] = [k for k in val.split(",") if k]
        elif key == "mattr":
            config["mattr"] = [a for a in val.split(",") if a]
        else:
            config[key] = val if eq else True
    keys = list(config.get("keys", ()))
    for default in _DEFAULT_KEYS.get(kind, ()):
        if default not in keys:
            keys.append(default)
    config["keys"] = keys
    return config


@node
class TargetConfig(Node):
    """A compilation target's configuration (``T.target(...)``)."""

    config: PMap = field(converter=_config)

    @property
    def kind(self) -> str:
        """The target kind: ``"llvm"``, ``"cuda"``..."""
        return self.config["kind"]


def target(config, host=None) -> TargetConfig:
    """``T.target("llvm")``, ``T.target({"kind": "cuda", ...})``, with an
    optional host target."""
    cfg = dict(_config(config))
    if host is not None:
        if "host" in cfg:
            raise NodeError("give the host in the config or as host=, not both")
        cfg["host"] = host.config if isinstance(host, TargetConfig) else _config(host)
    return TargetConfig(cfg)


__all__ = ["TargetConfig", "target", "parse_target_string"]
