"""Rewrite arguments as JSON and as Python source.

Arguments are plain values (ints, floats, strings, bools, None, lists,
dicts), references, or IR nodes (a symbolic split factor, an expression
annotation). Nodes are written field by field under their class name, so
decoding rebuilds an equal node through the node's own constructor and
checks. Tuples, persistent vectors and maps are tagged so that decoding
gives back the exact type, and a round trip is exact.
"""

from __future__ import annotations

import enum
import json

import attrs
from pyrsistent import PMap, PVector, pmap, pvector

from ..nodes import Node
from .errors import InvalidArgumentError
from .refs import BlockRef, LoopRef


def _node_classes() -> dict:
    from .. import nodes

    return {name: getattr(nodes, name) for name in nodes.__all__
            if isinstance(getattr(nodes, name), type) and issubclass(getattr(nodes, name), Node)}


def encode(value):
    """A JSON-compatible form of an argument value."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, LoopRef):
        return {"loop": encode(value.name), "func": encode(value.func)}
    if isinstance(value, BlockRef):
        return {"block": encode(value.name), "func": encode(value.func)}
    if isinstance(value, tuple):
        return [encode(v) for v in value]
    if isinstance(value, (list, PVector)):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, (dict, PMap)):
        return {"map": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, Node):
        fields = {a.name: encode(getattr(value, a.name)) for a in attrs.fields(type(value))}
        return {"node": type(value).__name__, "fields": fields}
    from ..tir.tensor_intrin import TensorIntrin

    if isinstance(value, TensorIntrin):
        return {"tensor_intrin": {"desc": encode(value.desc), "impl": encode(value.impl), "name": value.name}}
    raise InvalidArgumentError("to_json", "argument", f"cannot serialise a {type(value).__name__}: {value!r}")


def decode(data):
    """The argument value :func:`encode` gave ``data`` for."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return tuple(decode(v) for v in data)
    if isinstance(data, dict):
        if "loop" in data:
            return LoopRef(decode(data["loop"]), decode(data.get("func")))
        if "block" in data:
            return BlockRef(decode(data["block"]), decode(data.get("func")))
        if "list" in data:
            return pvector(decode(v) for v in data["list"])
        if "map" in data:
            return pmap({decode(k): decode(v) for k, v in data["map"]})
        if "tensor_intrin" in data:
            from ..tir.tensor_intrin import TensorIntrin

            parts = data["tensor_intrin"]
            return TensorIntrin(decode(parts["desc"]), decode(parts["impl"]), name=parts.get("name"))
        if "node" in data:
            cls = _node_classes().get(data["node"])
            if cls is None:
                raise InvalidArgumentError("from_json", "argument", f"unknown node type {data['node']!r}")
            fields = {k: _thaw_field(decode(v)) for k, v in data["fields"].items()}
            return cls(**fields)
    raise InvalidArgumentError("from_json", "argument", f"cannot decode {data!r}")


def _thaw_field(value):
    # node constructors convert lists themselves; a decoded tuple is a plain sequence
    return list(value) if isinstance(value, tuple) else value


def py_value(value) -> str:
    """Python source that evaluates to ``value`` (with ``LoopRef``,
    ``BlockRef`` and ``tir`` in scope)."""
    if isinstance(value, enum.Enum):
        return repr(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return json.dumps(str(value)) if isinstance(value, str) else repr(value)
    if isinstance(value, LoopRef):
        args = [py_value(value.name)] + ([py_value(value.func)] if value.func is not None else [])
        return f"LoopRef({', '.join(args)})"
    if isinstance(value, BlockRef):
        args = [py_value(value.name)] + ([py_value(value.func)] if value.func is not None else [])
        return f"BlockRef({', '.join(args)})"
    if isinstance(value, tuple):
        inner = ", ".join(py_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, (list, PVector)):
        return "[" + ", ".join(py_value(v) for v in value) + "]"
    if isinstance(value, (dict, PMap)):
        return "{" + ", ".join(f"{py_value(k)}: {py_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Node):
        fields = ", ".join(f"{a.name}={py_value(getattr(value, a.name))}" for a in attrs.fields(type(value)))
        return f"tir.{type(value).__name__}({fields})"
    return repr(value)


__all__ = ["encode", "decode", "py_value"]
