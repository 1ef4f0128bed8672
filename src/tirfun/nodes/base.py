"""The common base of every node and the field converters they share."""

from __future__ import annotations

import functools
import linecache
import types
from typing import Any

import attrs
from attr import _config as _attrs_config  # attrs' switch for validators, as its __init__ reads it
from pyrsistent import PMap, PVector, pmap, pvector

from ..errors import NodeError
from .dtype import DataType


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

    The constructor is attrs' own, written out leaner (see
    :func:`lean_init`); attrs' stays at hand in :func:`attrs_init`.
    """
    check = set_dtype = None
    if hasattr(cls, "_derive_dtype"):
        check = cls.__dict__.get("__attrs_post_init__") or getattr(cls, "__attrs_post_init__", None)

        set_dtype = _slot_setter(cls, "_dtype") or (lambda node, value: object.__setattr__(node, "_dtype", value))

        def __attrs_post_init__(self):
            if check is not None:
                check(self)
            set_dtype(self, self._derive_dtype())

        cls.__attrs_post_init__ = __attrs_post_init__
    cls = attrs.frozen(cls, cache_hash=True, repr=False)
    _ATTRS_INITS[cls] = cls.__init__
    init = lean_init(cls, check, set_dtype)
    if init is not None:
        cls.__init__ = init
    return cls


# class -> the __init__ attrs wrote for it (see attrs_init)
_ATTRS_INITS: dict = {}


def attrs_init(cls: type):
    """The ``__init__`` attrs wrote for the node class ``cls``, before
    :func:`lean_init` (or a hand-written constructor) took its place: the
    general path, against which the lean one is checked."""
    return _ATTRS_INITS[cls]


# converter -> (the types it returns as they are, whether the type must be exact)
_PURE: dict = {}
# validator -> the types it accepts without a look at the value
_ACCEPTS: dict = {}


def pure_converter(*kept: type, exact: bool = False):
    """Declare a field converter pure: its result is an immutable value that
    depends only on the value given, so a field's default is converted once,
    when the class is made. It returns a value of one of the types ``kept``
    (``exact``: of exactly one of them, not a subclass) as it is: a
    constructor tests the type and calls the converter only for other
    values."""
    def mark(converter):
        _PURE[converter] = (kept, exact)
        return converter
    return mark


def accepts(*types: type):
    """Mark a field validator that passes every value of one of ``types``
    (by ``isinstance``): a constructor calls it only for other values."""
    def mark(validator):
        _ACCEPTS[validator] = types
        return validator
    return mark


def _lookup(table: dict, key):
    try:
        return table.get(key)
    except TypeError:  # an unhashable callable
        return None


def _converted(converter, arg: str, env: dict, key: str) -> str:
    """Source of ``converter`` applied to ``arg``, skipped for a value the
    converter keeps as it is (see :func:`pure_converter`)."""
    if converter is None:
        return arg
    env[f"_c{key}"] = converter
    call = f"_c{key}({arg})"
    kept, exact = _lookup(_PURE, converter) or ((), False)
    if not kept:
        return call
    env[f"_k{key}"] = kept[0] if len(kept) == 1 else kept
    if exact and len(kept) == 1:
        return f"{arg} if _type({arg}) is _k{key} else {call}"
    if exact:
        return f"{arg} if _type({arg}) in _k{key} else {call}"
    return f"{arg} if _isinstance({arg}, _k{key}) else {call}"


def _keeps(converter, value) -> bool:
    """Whether ``converter`` says it keeps ``value`` as it is, by its type."""
    kept, exact = _lookup(_PURE, converter) or ((), False)
    return type(value) in kept if exact else isinstance(value, kept)


def _validation(validator, attribute, self: str, value: str, env: dict, key: str) -> str:
    """Source of the call of ``validator`` on ``value``, skipped for a type
    the validator accepts as it is (see :func:`accepts`)."""
    env[f"_val{key}"], env[f"_att{key}"] = validator, attribute
    call = f"_val{key}({self}, _att{key}, {value})"
    accepted = _lookup(_ACCEPTS, validator)
    if accepted is None:
        return call
    env[f"_ok{key}"] = accepted[0] if len(accepted) == 1 else accepted
    return f"if not _isinstance({value}, _ok{key}): {call}"


def _converted_default(attribute):
    """The default of ``attribute`` converted once, for a pure converter
    that keeps its own result as it is (so a constructor given that very
    object may skip the converter); None otherwise."""
    converter, default = attribute.converter, attribute.default
    if converter is None or _lookup(_PURE, converter) is None:
        return None
    try:
        value = converter(default.factory() if isinstance(default, attrs.Factory) else default)
        if converter(value) is not value:
            return None
    except Exception:  # the converter refuses its default: every call will, as attrs' would
        return None
    return (value,)


def _compiled(source: str, filename: str, env: dict) -> dict:
    """Run ``source`` (built from field names only) in ``env``, under
    ``filename``, whose lines tracebacks and ``inspect`` then show, as for
    the methods attrs writes."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), env)
    return env


def lean_init(cls: type, check=None, set_dtype=None):
    """The constructor of the attrs record ``cls`` as attrs writes it
    (convert the fields in order, run their validators in order, then the
    post-init rules), written leaner: a value a converter keeps as it is
    skips the converter, a value a validator accepts by its type skips the
    validator, a default is converted once, and each field goes into its
    slot through the slot's own setter. With ``set_dtype``, the post-init
    rules are ``check`` and the derived dtype stored by ``set_dtype`` (see
    :func:`node`). None when the class asks for more than this writes (an
    argument spelled other than its field, keyword-only arguments, a
    default made from the half-built node, attrs' ``Converter``, a
    pre-init hook, a field that is not a slot)."""
    fields = attrs.fields(cls)
    if hasattr(cls, "__attrs_pre_init__"):
        return None
    env = {"_config": _attrs_config, "_NOTHING": attrs.NOTHING, "_type": type, "_isinstance": isinstance}
    params, convert, validate = [], [], []
    for k, a in enumerate(fields):
        setter = _slot_setter(cls, a.name)
        if (not a.init or a.alias != a.name or a.kw_only or setter is None or a.on_setattr
                or isinstance(a.converter, attrs.Converter)
                or (isinstance(a.default, attrs.Factory) and a.default.takes_self)):
            return None
        arg = a.name
        env[f"_set{k}"] = setter
        value = _converted(a.converter, arg, env, str(k))
        if a.default is attrs.NOTHING:
            params.append(arg)
        elif (once := _converted_default(a)) is not None:
            # the default is its own conversion: passed as it is
            env[f"_d{k}"] = once[0]
            params.append(f"{arg}=_d{k}")
            if value != arg and not _keeps(a.converter, once[0]):
                value = f"{arg} if {arg} is _d{k} else {value}"
        elif isinstance(a.default, attrs.Factory):
            params.append(f"{arg}=_NOTHING")
            env[f"_f{k}"] = a.default.factory
            convert.append(f"    if {arg} is _NOTHING: {arg} = _f{k}()")
        else:
            env[f"_d{k}"] = a.default
            params.append(f"{arg}=_d{k}")
        if value != arg:
            convert.append(f"    {arg} = {value}")
        convert.append(f"    _set{k}(self, {arg})")
        if a.validator is not None:
            validate.append("        " + _validation(a.validator, a, "self", arg, env, str(k)))
    lines = [f"def __init__(self, {', '.join(params)}):" if params else "def __init__(self):", *convert]
    if validate:
        lines += ["    if _config._run_validators is True:", *validate]
    post_init = getattr(cls, "__attrs_post_init__", None)
    if set_dtype is not None:
        env["_check"], env["_set_dtype"] = check, set_dtype
        if check is not None:
            lines.append("    _check(self)")
        lines.append("    _set_dtype(self, self._derive_dtype())")
    elif post_init is not None:
        env["_post_init"] = post_init
        lines.append("    _post_init(self)")
    hash_setter = _slot_setter(cls, "_attrs_cached_hash")
    if hash_setter is None:
        return None
    env["_set_hash"] = hash_setter
    lines.append("    _set_hash(self, None)")
    init = _compiled("\n".join(lines), f"<lean __init__ of {cls.__module__}.{cls.__qualname__}>", env)["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = f"{cls.__name__}'s constructor (see :func:`tirfun.nodes.base.lean_init`)."
    return init


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


pure_converter(DataType, exact=True)(DataType)  # a DataType is its own conversion


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
    env = {"_new": object.__new__, "_put": object.__setattr__, "_cls": cls, "_post_init": post_init,
           "_type": type, "_isinstance": isinstance}

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
    # (a value the converter keeps as it is skips it, as in lean_init)
    for k, name in enumerate(n for n in names if n in arg_of):
        arg = arg_of[name]
        value = _converted(by_name[name][0], arg, env, str(k))
        if value != arg:
            lines.append(f"    {arg} = {value}")
        lines.append(put(name, arg))
    for k, name in enumerate(names):
        _converter, validator, attribute = by_name[name]
        if validator is not None and (name in arg_of or getattr(validator, "spans_fields", False)):
            lines.append("    " + _validation(validator, attribute, "new", f"new.{name}", env, str(k)))
    # a statement's rules that read none of the changed fields held for
    # ``node`` and still hold (a new loop body is checked by its validator)
    if post_init is not None and (post_init_reads is None or not post_init_reads.isdisjoint(arg_of)):
        lines.append("    _post_init(new)")
    lines.append(put("_attrs_cached_hash", "None"))
    lines.append("    return new")
    exec("\n".join(lines), env)  # the source is built above from field names only
    return env["rebuild"]


_PVEC = type(pvector())


@pure_converter(_PVEC, exact=True)
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


@pure_converter()
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

