"""The common base of every node and the field converters they share."""

from __future__ import annotations

import functools
import types
from typing import Any

import attrs
from pyrsistent import PMap, PVector, pmap, pvector

from ..errors import NodeError


class Node:
    """Base of every IR node: an immutable record that prints as TVMScript."""

    __slots__ = ()

    def script(self, **options: Any) -> str:
        """This node as TVMScript text. Takes TVM's ``script()`` keyword
        arguments (``name``, ``tir_prefix``, ``ir_prefix``, ``indent_spaces``,
        ``print_line_numbers``, and the others, which have no effect here:
        see :mod:`tirfun.script.script_options`)."""
        from ..script.script_options import script_text  # the printer sits above nodes

        return script_text(self, **options)

    def same_as(self, other) -> bool:
        """TVM's ``same_as``. In TVM it is object identity: the same node, not
        merely an equal one. Here nodes are immutable values and names are
        identities (two ``Var("i")`` of one function are one variable), so
        an equal value *is* the same node: ``same_as`` is exact equality,
        names included (``==``), checked by identity first. For equality up
        to renaming use :func:`~tirfun.analysis.structural_equal`."""
        return self is other or (type(self) is type(other) and self == other)

    def __repr__(self) -> str:
        try:
            return self.script()
        except Exception:  # repr must never fail, even on a half-built tree
            fields = ", ".join(f"{a.name}={getattr(self, a.name)!r}" for a in attrs.fields(type(self)))
            return f"{type(self).__name__}({fields})"

    __str__ = __repr__


def node(cls):
    """Class decorator: a frozen, slotted attrs record with a cached hash.

    An expression class that derives its dtype from its operands (it defines
    ``_derive_dtype``) computes it once at construction into a private slot
    (see ``PrimExpr.dtype``), so reading the dtype of a deep expression is
    O(1), never a recursion down the tree. The slot is not an attrs field:
    equality, hashing and ``attrs.fields`` see only the real fields.
    """
    if hasattr(cls, "_derive_dtype"):
        check = cls.__dict__.get("__attrs_post_init__") or getattr(cls, "__attrs_post_init__", None)

        set_dtype = _slot_setter(cls, "_dtype") or (lambda node, value: object.__setattr__(node, "_dtype", value))

        def __attrs_post_init__(self):
            if check is not None:
                check(self)
            set_dtype(self, self._derive_dtype())

        cls.__attrs_post_init__ = __attrs_post_init__
    return attrs.frozen(cls, cache_hash=True, repr=False)


@functools.cache
def _rebuild_plan(cls: type):
    """How :func:`with_fields` rebuilds a ``cls``: its field names in order,
    each field's ``(converter, validator, attribute)`` by name, whether a
    validator reads other fields too (see :func:`spans_fields`), its
    post-init hook and the fields that hook reads (a class's
    ``_POST_INIT_READS``, None: any); None when a converter needs more than the value
    (attrs' ``Converter``), where ``attrs.evolve`` is used instead."""
    fields = attrs.fields(cls)
    if any(isinstance(a.converter, attrs.Converter) for a in fields):
        return None
    return (tuple(a.name for a in fields),
            {a.name: (a.converter, a.validator, a) for a in fields},
            any(getattr(a.validator, "spans_fields", False) for a in fields),
            getattr(cls, "__attrs_post_init__", None),
            getattr(cls, "_POST_INIT_READS", None))


def spans_fields(validator):
    """Mark a field validator that reads other fields of the node as well:
    :func:`with_fields` runs it whatever field changes (it runs the others
    only when their own field changes)."""
    validator.spans_fields = True
    return validator


def with_fields(node, /, **changes):
    """``node`` with the fields named in ``changes`` replaced: what
    ``attrs.evolve`` gives, for less. Only the changed fields go through
    their converters and validators (the others were converted and checked
    when ``node`` was made and cannot have changed since; a field's
    validator looks at that field alone, rules that span fields live in
    ``__attrs_post_init__``); the node's own rules run as in a constructor,
    so the result is exactly as checked as a node built from scratch.
    Rewrites rebuild the nodes along a path with it, many times per
    primitive."""
    return rebuilder(type(node), tuple(changes))(node, *changes.values())


def _slot_setter(cls: type, name: str):
    """The ``__set__`` of the slot ``name`` of ``cls`` (None when the
    attribute is not a plain slot)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            return found.__set__ if isinstance(found, types.MemberDescriptorType) else None
    return None


def slot_setters(cls: type, *names: str) -> tuple:
    """The setters of the slots ``names`` of the frozen record ``cls``, for
    hand-written constructors: calling a slot's setter skips
    ``object.__setattr__``'s look-up of the attribute on the class, half
    the cost of storing a field."""
    out = []
    for name in names:
        setter = _slot_setter(cls, name)
        if setter is None:
            raise TypeError(f"{cls.__name__}.{name} is not a slot")
        out.append(setter)
    return tuple(out)


@functools.cache
def rebuilder(cls: type, changed: tuple):
    """A function ``(node, *values)`` that rebuilds a ``cls`` with the
    fields ``changed`` replaced by ``values``: the steps of
    :func:`with_fields` for this class and these fields, written out once
    (a pure function of its key, as attrs writes its ``__init__``)."""
    plan = _rebuild_plan(cls)
    if plan is None:
        return lambda node, *values: attrs.evolve(node, **dict(zip(changed, values)))
    names, by_name, _spanning, post_init, post_init_reads = plan
    args = [f"_v{k}" for k in range(len(changed))]
    arg_of = {name: arg for name, arg in zip(changed, args) if name in by_name}
    env = {"_new": object.__new__, "_put": object.__setattr__, "_cls": cls, "_post_init": post_init}

    def put(name: str, value: str) -> str:
        # a slot's own setter skips object.__setattr__'s look-up of the
        # attribute on the class: half the cost of each field copied
        setter = _slot_setter(cls, name)
        if setter is None:
            return f"    _put(new, {name!r}, {value})"
        env[f"_set_{name}"] = setter
        return f"    _set_{name}(new, {value})"

    lines = [f"def rebuild(node, {', '.join(args)}):" if args else "def rebuild(node):",
             "    new = _new(_cls)"]
    for name in names:
        if name not in arg_of:
            lines.append(put(name, f"node.{name}"))
    # converters and then validators in field order, as a constructor runs them
    for k, name in enumerate(n for n in names if n in arg_of):
        converter = by_name[name][0]
        if converter is None:
            lines.append(put(name, arg_of[name]))
        else:
            env[f"_c{k}"] = converter
            lines.append(put(name, f"_c{k}({arg_of[name]})"))
    for k, name in enumerate(names):
        _converter, validator, attribute = by_name[name]
        if validator is not None and (name in arg_of or getattr(validator, "spans_fields", False)):
            env[f"_val{k}"], env[f"_att{k}"] = validator, attribute
            lines.append(f"    _val{k}(new, _att{k}, new.{name})")
    # a statement's rules that read none of the changed fields held for
    # ``node`` and still hold (a new loop body is checked by its validator)
    if post_init is not None and (post_init_reads is None or not post_init_reads.isdisjoint(arg_of)):
        lines.append("    _post_init(new)")
    lines.append(put("_attrs_cached_hash", "None"))
    lines.append("    return new")
    exec("\n".join(lines), env)  # the source is built above from field names only
    return env["rebuild"]


_PVEC = type(pvector())


def to_pvector(value) -> PVector:
    # PVector is an abstract class, slow to ask about: test the concrete
    # types first (a node's fields are nearly always a vector or a list)
    kind = type(value)
    if kind is _PVEC:
        return value
    if kind is list or kind is tuple:
        return pvector(value)
    if isinstance(value, PVector):
        return value
    if value is None:
        return pvector()
    return pvector(value)


def freeze_value(value):
    """Turn Python containers into hashable persistent ones, recursively.

    An int32 or bool constant node becomes the Python int or bool it stands
    for: TVMScript spells both alike (``3``, ``T.bool(True)``), so an
    attribute must hold one form only for printing and parsing to agree.
    """
    from .expr import IntImm  # expr builds on this module

    if isinstance(value, (PVector, PMap)):
        return value
    if isinstance(value, IntImm) and value.dtype in ("int32", "bool"):
        return bool(value.value) if value.dtype == "bool" else value.value
    if isinstance(value, (list, tuple)):
        return pvector(freeze_value(v) for v in value)
    if isinstance(value, dict):
        return pmap({k: freeze_value(v) for k, v in value.items()})
    return value


_EMPTY_MAP = pmap()


def to_attr_map(value) -> PMap:
    """Convert an attribute/annotation dict: string keys, frozen values."""
    if value is None or value is _EMPTY_MAP or (type(value) is dict and not value):
        return _EMPTY_MAP  # most loops and blocks have no annotations
    if isinstance(value, PMap) and all(isinstance(k, str) for k in value):
        return value
    if not hasattr(value, "items"):
        raise NodeError(f"annotations and attributes must be a dict, got {value!r}")
    out = {}
    for k, v in value.items():
        if not isinstance(k, str):
            raise NodeError(f"attribute keys must be strings, got {k!r}")
        out[k] = freeze_value(v)
    return pmap(out)

