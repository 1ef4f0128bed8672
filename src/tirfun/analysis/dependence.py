"""Dependences between the instances of a block along its data-parallel
iteration variables: the lint rule ``spatial dependence`` of
``verify(strict=True)``.

A spatial (``"S"``) iteration variable is a promise: the block's instances
that differ in it touch different elements of what they write, so they may
run in any order, or at once. The primitives take the promise at its word, as
TVM does: ``reorder``, ``parallel``, ``vectorize`` and ``compute_at`` move the
instances of a spatial variable freely. A block that breaks it, such as::

    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            B[vi + 1] = B[vi] * 2.0       # instance vi reads what vi - 1 wrote

or one that sums over a variable it calls spatial (``B[vi] = B[vi] +
A[vi, vj]`` with ``vj`` spatial), is a valid TensorIR program whose schedules
may change its result. :func:`spatial_conflict` finds such a block by
enumerating its instances, so what it reports is definite: two instances,
differing in spatial variables, that write one element, or one of which reads
an element the other writes.

It looks only where the answer is certain and cheap: blocks whose domains
are constants with at most :data:`MAX_INSTANCES` instances, and accesses in
the block's own body (not in nested blocks or loops) whose indices are
affine in the iteration variables. An access under a condition
(``T.if_then_else``, an ``if``) counts in the instances where the condition
holds, when it is made of comparisons of such affine forms (``0 < vi and vj
< 4``); under any other condition it is left out. A buffer the block
allocates is private to each instance and never conflicts; one it matches
to a region (``T.match_buffer``) is left out too. Elsewhere it reports
nothing.
"""

from __future__ import annotations

import itertools

import attrs

from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Allocate, And, Block, BlockRealize, BufferLoad, BufferStore, Call, DeclBuffer,
    For, IfThenElse, IntImm, IterVar, Not, Or, Var, While,
)
from ..nodes.expr import compare_result
from .arith.linear import affine_form
from .traversal import iter_children

#: blocks with more instances than this are not enumerated
MAX_INSTANCES = 1 << 12


@attrs.frozen
class SpatialConflict:
    """Two instances of a block that its spatial variables declare
    independent and that are not: ``first`` writes ``buffer[location]`` and
    ``second`` writes it too (``reads=False``) or reads it (``reads=True``).
    Instances are tuples of ``(variable name, value)`` over the block's
    iteration variables."""

    buffer: object
    location: tuple
    first: tuple
    second: tuple
    reads: bool

    def describe(self) -> str:
        """One sentence for the lint's message."""
        where = f"{self.buffer.name}[{', '.join(str(i) for i in self.location)}]"
        differ = [name for (name, a), (_, b) in zip(self.first, self.second) if a != b]
        first = ", ".join(f"{name} = {value}" for name, value in self.first)
        second = ", ".join(f"{name} = {value}" for name, value in self.second)
        verb = "reads" if self.reads else "writes"
        return (f"the instance with {first} writes {where} and the instance with {second} {verb} it, "
                f"but the data-parallel iteration variable{'s' if len(differ) > 1 else ''} "
                f"{', '.join(differ)} declare{'' if len(differ) > 1 else 's'} them independent, so a "
                f"schedule may reorder or parallelize them; declare "
                f"{'them' if len(differ) > 1 else 'it'} a reduction (\"R\") or an ordered (scan) "
                f"variable, or give each instance its own elements")


def spatial_conflict(block: Block, thread_bound: bool = False) -> SpatialConflict | None:
    """A definite dependence between instances of ``block`` that differ in
    its spatial iteration variables, or None (see the module docstring for
    where it looks). In a function with thread bindings (``thread_bound``),
    buffers in ``shared``, ``local`` or ``warp`` scope are left out: each
    thread block or thread has its own copy, and which instances share one
    depends on bindings outside the block."""
    ivs = block.iter_vars
    if not any(iv.iter_type == IterVar.DataPar for iv in ivs):
        return None
    ranges = []
    for iv in ivs:
        lo, extent = iv.dom.min, iv.dom.extent
        if not (isinstance(lo, IntImm) and isinstance(extent, IntImm)) or extent.value <= 0:
            return None
        ranges.append(range(lo.value, lo.value + extent.value))
    count = 1
    for r in ranges:
        count *= len(r)
    if count > MAX_INSTANCES:
        return None
    spatial = [k for k, iv in enumerate(ivs) if iv.iter_type == IterVar.DataPar]
    if all(len(ranges[k]) == 1 for k in spatial):
        return None
    positions = {iv.var: k for k, iv in enumerate(ivs)}
    stores, loads = _accesses(block, positions, thread_bound)
    written = {buf for buf, _, _ in stores}
    if not written:
        return None
    instances = list(itertools.product(*ranges))
    names = [iv.var.name for iv in ivs]

    def label(instance):
        return tuple(zip(names, instance))

    owners: dict = {}
    for buf, forms, guard in stores:
        for instance in instances:
            if not _holds(guard, instance):
                continue
            key = (buf, _location(forms, instance))
            key_spatial = tuple(instance[k] for k in spatial)
            seen = owners.setdefault(key, (key_spatial, instance))
            if seen[0] != key_spatial:
                return SpatialConflict(buf, key[1], label(seen[1]), label(instance), reads=False)
    for buf, forms, guard in loads:
        if buf not in written:
            continue
        for instance in instances:
            if not _holds(guard, instance):
                continue
            location = _location(forms, instance)
            seen = owners.get((buf, location))
            if seen is not None and seen[0] != tuple(instance[k] for k in spatial):
                return SpatialConflict(buf, location, label(seen[1]), label(instance), reads=True)
    return None


def _location(forms, instance) -> tuple:
    return tuple(const + sum(coeff * instance[k] for k, coeff in terms) for terms, const in forms)


def _holds(guard, instance) -> bool:
    """Whether every ``(condition, polarity)`` of ``guard`` holds at the
    instance (see :func:`_condition`)."""
    return all(_value(c, instance) == polarity for c, polarity in guard)


def _value(c, instance) -> bool:
    kind = c[0]
    if kind == "cmp":
        _, cls, a, b = c
        return compare_result(cls, _location(a, instance)[0], _location(b, instance)[0])
    if kind == "and":
        return _value(c[1], instance) and _value(c[2], instance)
    if kind == "or":
        return _value(c[1], instance) or _value(c[2], instance)
    if kind == "not":
        return not _value(c[1], instance)
    return c[1]  # "const"


def _condition(expr, positions: dict):
    """``expr`` as a tree :func:`_value` evaluates at an instance: and, or,
    not and comparisons of affine forms in the iteration variables; None
    where it is anything else."""
    if isinstance(expr, (And, Or)):
        a, b = _condition(expr.a, positions), _condition(expr.b, positions)
        return None if a is None or b is None else ("and" if isinstance(expr, And) else "or", a, b)
    if isinstance(expr, Not):
        a = _condition(expr.a, positions)
        return None if a is None else ("not", a)
    if isinstance(expr, IntImm) and expr.dtype.is_bool:
        return ("const", bool(expr.value))
    if isinstance(expr, (EQ, NE, LT, LE, GT, GE)):
        a, b = _forms([expr.a], positions), _forms([expr.b], positions)
        return None if a is None or b is None else ("cmp", type(expr), a, b)
    return None


def _accesses(block: Block, positions: dict, thread_bound: bool):
    """The stores (body and init) and loads (body) of ``block`` that run
    once per instance, or under a condition :func:`_condition` reads, at an
    index affine in its iteration variables, as ``(buffer, forms, guard)``;
    a form is ``(((position, coeff), ...), const)`` per dimension, the guard
    a tuple of ``(condition, polarity)``. Buffers the block allocates or
    matches are left out."""
    # a matched buffer is a view whose origin moves with the instance: its
    # indices alone do not say which element of the source they touch
    private = set(block.alloc_buffers) | {match.buffer for match in block.match_buffers}
    private_data = set()
    stores, loads = [], []
    roots = [(block.body, True)]
    if block.init is not None:
        roots.append((block.init, False))  # the init's reads run once per reduction, not per instance
    for root, with_loads in roots:
        stack = [(root, ())]
        while stack:
            node, guard = stack.pop()
            if isinstance(node, (BlockRealize, For, While)):
                continue  # nested blocks are checked on their own; loops may not run once
            branches = None
            if isinstance(node, IfThenElse):
                branches = (node.condition, node.then_case, node.else_case)
            elif isinstance(node, Call) and node.op == "tir.if_then_else":
                branches = tuple(node.args)
            if branches is not None:
                cond, then, other = branches
                stack.append((cond, guard))
                c = _condition(cond, positions)
                if c is not None:  # otherwise neither branch surely runs
                    stack.append((then, guard + ((c, True),)))
                    if other is not None:
                        stack.append((other, guard + ((c, False),)))
                continue
            if isinstance(node, DeclBuffer):
                private.add(node.buffer)
            elif isinstance(node, Allocate):
                private_data.add(node.buffer_var)
            elif isinstance(node, BufferStore) or (with_loads and isinstance(node, BufferLoad)):
                forms = _forms(node.indices, positions)
                if forms is not None:
                    (stores if isinstance(node, BufferStore) else loads).append((node.buffer, forms, guard))
            stack.extend((child, guard) for child in iter_children(node))

    def shared(access):
        buf = access[0]
        if thread_bound and buf.storage_scope != "global":
            return False
        return buf not in private and buf.data not in private_data

    return [a for a in stores if shared(a)], [a for a in loads if shared(a)]


def _forms(indices, positions: dict):
    forms = []
    for index in indices:
        form = affine_form(index)
        if form is None:
            return None
        terms = []
        for term, coeff in form.terms:
            if type(term) is not Var or term not in positions:
                return None
            terms.append((positions[term], coeff))
        forms.append((tuple(terms), form.const))
    return tuple(forms)


__all__ = ["MAX_INSTANCES", "SpatialConflict", "spatial_conflict"]
