"""Single-point changes to a PrimFunc: one constant, one dtype or one block name.

Each change keeps the function constructible (every node's own rules hold)
but makes it a different program, so structural equality must tell it apart
from the original. That is the negative half of equality's property test::

    >>> from tirfun.testing.mutations import mutants
    >>> for m in mutants(func):                              # doctest: +SKIP
    ...     names = m.kind == "block_name"  # block names count only when asked
    ...     assert not structural_equal(func, m.func, names=names), m.description

Kinds of change:

* ``"constant"``: one IntImm or FloatImm at one place (a loop extent, an
  index, a literal in a body...), one integer or bool value of an annotation
  or function attribute, or one constant of a buffer's shape (a buffer is one
  declaration: the change reaches every use of it);
* ``"dtype"``: the dtype of one Cast, Call or literal at one place, of one
  buffer (everywhere it is used) or of one variable (at its binding and every
  use); only changes every node still accepts are kept;
* ``"block_name"``: one block (not the root) gets a name no block has
  (``structural_equal`` tells it apart only with ``names=True``, as TVM's
  Block equality ignores names).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs
from pyrsistent import PMap, PVector

from ..analysis.traversal import replace_at, transform, walk
from ..errors import NodeError, TirfunError
from ..nodes import (
    Block, Buffer, Call, Cast, DataType, FloatImm, For, IntImm, IterVar, Let, LetStmt, Node,
    PrimFunc, Var,
)

KINDS = ("constant", "dtype", "block_name")

# the dtypes a dtype mutation tries instead of each dtype
_ALTERNATIVES = {
    "int8": ("int16", "uint8"), "int16": ("int32",), "int32": ("int64", "int16"),
    "int64": ("int32",), "uint8": ("int8", "uint16"), "uint16": ("uint8",),
    "uint32": ("int32",), "uint64": ("int64",), "bool": ("int8",),
    "float16": ("float32",), "bfloat16": ("float32",), "float32": ("float64", "float16"),
    "float64": ("float32",),
}


@attrs.frozen
class Mutation:
    """One applied change: its kind, where it happened, and the new function."""

    kind: str
    description: str
    func: PrimFunc


@attrs.frozen
class MutationSite:
    """A change that :meth:`apply` makes to a function.

    ``action`` is ``("path", path, value)`` (replace what lies at a path),
    ``("buffer", name, field, index, value)`` (set a field of a buffer, or
    one element of its ``shape`` or ``strides`` when ``index`` is not None,
    everywhere the buffer appears) or ``("var", name, dtype)`` (change a
    variable everywhere).
    """

    kind: str
    description: str
    action: tuple

    def apply(self, func: PrimFunc) -> PrimFunc:
        """``func`` with the change; raises :class:`NodeError` when some node
        does not accept it."""
        tag = self.action[0]
        if tag == "path":
            _, path, value = self.action
            return replace_at(func, path, value)
        if tag == "buffer":
            _, name, field, index, value = self.action

            def post(node: Node) -> Node:
                if isinstance(node, Buffer) and node.name == name:
                    if index is None:
                        return attrs.evolve(node, **{field: value})
                    return attrs.evolve(node, **{field: getattr(node, field).set(index, value)})
                return node
            return transform(func, post)
        if tag == "var":
            _, name, dtype = self.action

            def post(node: Node) -> Node:
                if isinstance(node, Var) and node.name == name:
                    return Var(name, dtype)
                return node
            return transform(func, post)
        raise TirfunError(f"unknown mutation action {tag!r}")


def mutation_sites(func: PrimFunc, kinds: Sequence[str] = KINDS) -> tuple[MutationSite, ...]:
    """Every single change of the given kinds, whether or not it applies, in a
    fixed order."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise TirfunError(f"unknown mutation kind {unknown[0]!r}; expected some of {', '.join(KINDS)}")
    sites: list[MutationSite] = []
    nodes = list(_paths(func))
    if "constant" in kinds:
        sites += _constant_sites(nodes, func)
    if "dtype" in kinds:
        sites += _dtype_sites(nodes, func)
    if "block_name" in kinds:
        sites += _block_name_sites(nodes)
    return tuple(sites)


def mutants(func: PrimFunc, kinds: Sequence[str] = KINDS) -> Iterator[Mutation]:
    """Every applicable single change of ``func``, one Mutation each."""
    for site in mutation_sites(func, kinds):
        try:
            yield Mutation(site.kind, site.description, site.apply(func))
        except NodeError:
            continue


def mutations(func: PrimFunc, kinds: Sequence[str] = KINDS):
    """A hypothesis strategy of single applicable changes of ``func``.

    It first draws a kind (among those with an applicable change), then a
    change of that kind, so each kind is tried as often as the others.
    """
    from hypothesis import strategies as st  # a test dependency, loaded on use

    by_kind = {k: [s for s in mutation_sites(func, kinds) if s.kind == k] for k in kinds}
    by_kind = {k: v for k, v in by_kind.items() if v}
    if not by_kind:
        return st.nothing()

    @st.composite
    def strategy(draw):
        order = list(by_kind)
        first = draw(st.integers(0, len(order) - 1))
        for kind in order[first:] + order[:first]:
            sites = by_kind[kind]
            start = draw(st.integers(0, len(sites) - 1))
            for k in range(len(sites)):
                site = sites[(start + k) % len(sites)]
                try:
                    return Mutation(site.kind, site.description, site.apply(func))
                except NodeError:
                    continue
        from hypothesis import reject
        reject()  # no change of any kind applies to this function

    return strategy()


# ---------------------------------------------------------------------------


def _paths(root: Node, path: tuple = ()) -> Iterator[tuple[tuple, object]]:
    """``(path, value)`` for every node and every scalar mapping value below
    ``root``, in a fixed order, not entering buffers (a buffer changes as a
    whole) or variables."""
    for field in attrs.fields(type(root)):
        value = getattr(root, field.name)
        if isinstance(value, Buffer):
            continue
        if isinstance(value, Node):
            step = path + ((field.name, None),)
            yield step, value
            if not isinstance(value, Var):
                yield from _paths(value, step)
        elif isinstance(value, PVector):
            for i, item in enumerate(value):
                if isinstance(item, Node) and not isinstance(item, Buffer):
                    step = path + ((field.name, i),)
                    yield step, item
                    if not isinstance(item, Var):
                        yield from _paths(item, step)
        elif isinstance(value, PMap) and field.name in ("annotations", "attrs"):
            for key in sorted(value, key=str):
                item = value[key]
                step = path + ((field.name, key),)
                if isinstance(item, Node):
                    yield step, item
                    yield from _paths(item, step)
                elif isinstance(item, (bool, int, float)):
                    yield step, item


def _where(path: tuple) -> str:
    parts = []
    for name, index in path:
        parts.append(name if index is None else f"{name}[{index!r}]")
    return ".".join(parts) or "<root>"


def _other_value(node):
    """A different constant of the same type (and dtype, for immediates)."""
    if isinstance(node, IntImm):
        if node.dtype.is_bool:
            return IntImm(node.dtype, 1 - node.value)
        value = node.value + 1 if node.value < node.dtype.max_value() else node.value - 1
        return IntImm(node.dtype, value)
    if isinstance(node, FloatImm):
        return FloatImm(node.dtype, 1.5 if node.value != 1.5 else 2.5)
    if isinstance(node, bool):
        return not node
    if isinstance(node, int):
        return node + 1
    if isinstance(node, float):
        return 1.5 if node != 1.5 else 2.5
    return None


def _buffers(func: PrimFunc) -> list[Buffer]:
    """Every distinct buffer of ``func`` (by name), in a fixed order."""
    seen: dict[str, Buffer] = {}
    for buffer in func.buffers:
        seen.setdefault(buffer.name, buffer)
    for node in walk(func.body):
        if isinstance(node, Buffer):
            seen.setdefault(node.name, node)
    return list(seen.values())


def _constant_sites(nodes, func: PrimFunc) -> list[MutationSite]:
    sites = []
    for path, node in nodes:
        if isinstance(node, (IntImm, FloatImm, bool, int, float)):
            new = _other_value(node)
            sites.append(MutationSite("constant", f"constant {_brief(node)} -> {_brief(new)} at "
                                                  f"{_where(path)}", ("path", path, new)))
    for buffer in _buffers(func):
        for field in ("shape", "strides"):
            for dim, extent in enumerate(getattr(buffer, field)):
                if isinstance(extent, IntImm):
                    new = _other_value(extent)
                    sites.append(MutationSite(
                        "constant", f"constant {extent.value} -> {new.value} in {field}[{dim}] of "
                                    f"buffer {buffer.name}", ("buffer", buffer.name, field, dim, new)))
        if isinstance(buffer.elem_offset, IntImm):
            new = _other_value(buffer.elem_offset)
            sites.append(MutationSite(
                "constant", f"elem_offset {buffer.elem_offset.value} -> {new.value} of buffer "
                            f"{buffer.name}", ("buffer", buffer.name, "elem_offset", None, new)))
        for field in ("data_alignment", "offset_factor"):
            old = getattr(buffer, field)
            # an offset factor of 0 is TVM's 1 (no constraint): step past both
            new = max(old, 1) + 1 if field == "offset_factor" else old + 1
            sites.append(MutationSite(
                "constant", f"{field} {old} -> {new} of buffer {buffer.name}",
                ("buffer", buffer.name, field, None, new)))
    return sites


def _brief(value) -> str:
    if isinstance(value, (IntImm, FloatImm)):
        return f"{value.value!r}: {value.dtype}"
    return repr(value)


def _dtype_sites(nodes, func: PrimFunc) -> list[MutationSite]:
    sites = []
    for path, node in nodes:
        if isinstance(node, (Cast, Call, IntImm, FloatImm)):
            for other in _ALTERNATIVES.get(str(node.dtype), ()):
                new = _with_dtype(node, DataType(other))
                if new is not None:
                    sites.append(MutationSite(
                        "dtype", f"dtype {node.dtype} -> {other} of the {type(node).__name__} at "
                                 f"{_where(path)}", ("path", path, new)))
    for buffer in _buffers(func):
        for other in _ALTERNATIVES.get(str(buffer.dtype), ()):
            sites.append(MutationSite("dtype", f"dtype {buffer.dtype} -> {other} of buffer "
                                               f"{buffer.name}",
                                      ("buffer", buffer.name, "dtype", None, DataType(other))))
    seen: set[str] = set()
    for node in [func, *walk(func.body)]:
        for var in _defined_vars(node):
            if var.name in seen or var.dtype.is_handle:
                continue
            seen.add(var.name)
            for other in _ALTERNATIVES.get(str(var.dtype), ()):
                sites.append(MutationSite("dtype", f"dtype {var.dtype} -> {other} of variable "
                                                   f"{var.name}", ("var", var.name, DataType(other))))
    return sites


def _defined_vars(node) -> list[Var]:
    if isinstance(node, PrimFunc):
        return list(node.params)
    if isinstance(node, For):
        return [node.loop_var]
    if isinstance(node, IterVar):
        return [node.var]
    if isinstance(node, (Let, LetStmt)):
        return [node.var]
    return []


def _with_dtype(node, dtype: DataType):
    try:
        if isinstance(node, Cast):
            return Cast(dtype, node.value)
        if isinstance(node, Call):
            return Call(dtype, node.op, node.args)
        if isinstance(node, IntImm):
            return IntImm(dtype, node.value) if (dtype.is_integer or dtype.is_bool) else None
        return FloatImm(dtype, node.value) if dtype.is_float else None
    except NodeError:
        return None


def _block_name_sites(nodes) -> list[MutationSite]:
    blocks = [(path, node) for path, node in nodes if isinstance(node, Block)]
    names = {b.name_hint for _, b in blocks}
    sites = []
    for path, block in blocks:
        if block.name_hint == "root":
            continue
        new, k = f"{block.name_hint}_x", 1
        while new in names:
            k += 1
            new = f"{block.name_hint}_x{k}"
        renamed = attrs.evolve(block, name_hint=new)
        sites.append(MutationSite("block_name", f"block {block.name_hint!r} renamed {new!r}",
                                  ("path", path, renamed)))
    return sites


__all__ = ["KINDS", "Mutation", "MutationSite", "mutation_sites", "mutants", "mutations"]
