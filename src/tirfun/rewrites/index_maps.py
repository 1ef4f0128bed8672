"""Index maps as the layout primitives take them: a Python function of
the indices (traced on the dimensions it maps), ``(params, results)``, or
a ``tir.IndexMap``; TVM's ``IndexMap.AXIS_SEPARATOR`` markers; and the
inverse of a bijective map read as iteration sums."""

from __future__ import annotations

from ..analysis.arith.iter_map import simplify_index
from ..nodes import Buffer, Evaluate, IntImm, Var
from .cache import as_index_map
from .exprs import cast as _cast

#: the body of the loops an iteration-map check reads
NOP = Evaluate(IntImm("int32", 0))


def as_map(value):
    """A Python function is kept as it is until the buffer it maps is known
    (its variables take the dtype of the buffer's dimensions, and a
    function of ``*indices`` one per dimension: see :func:`trace_index_map`);
    anything else is read as :func:`~tirfun.rewrites.cache.as_index_map`
    reads it."""
    from ..tir.index_map import IndexMap

    if isinstance(value, IndexMap):
        return tuple(value.initial_indices), tuple(value.final_indices)
    if callable(value) and not isinstance(value, type):
        return value
    return as_index_map(value)


def separators(results) -> tuple[tuple, list[int]]:
    """The results without TVM's ``IndexMap.AXIS_SEPARATOR`` markers, and
    the axis separators they mark (the position of each among the others)."""
    from ..tir.index_map import IndexMap

    out, seps = [], []
    for r in results:
        if isinstance(r, str) and r == IndexMap.AXIS_SEPARATOR:
            seps.append(len(out))
        else:
            out.append(r)
    return tuple(out), seps


def trace_index_map(index_map, buffer: Buffer):
    """``(params, results)`` of a Python function mapping ``buffer``'s
    indices: called once with one variable per dimension (``i0``, ``i1``...
    for a function of ``*indices``, else named after its parameters), each
    of the dtype of its dimension, as TVM's ``IndexMap.from_func`` does with
    the buffer's ``ndim``. Anything but a function is returned unchanged;
    a function that cannot be traced too, for the primitive to report."""
    if not callable(index_map) or isinstance(index_map, type):
        return index_map
    import inspect

    try:
        sig = inspect.signature(index_map).parameters.values()
    except (TypeError, ValueError):
        return index_map
    dtypes = [d.dtype for d in buffer.shape]
    sig = list(sig)
    star = [p for p in sig if p.kind is p.VAR_POSITIONAL]
    before = [p.name for p in sig if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    after = [p.name for p in sig if p.kind is p.KEYWORD_ONLY]
    # ``lambda *indices, k: ...``: the starred parameter takes the dimensions
    # the named ones leave, as TVM's IndexMap.from_func gives them
    spread = len(dtypes) - len(before) - len(after)
    if (not star and spread) or spread < 0:
        return index_map  # reported by the primitive, with the arity
    names = before + [f"i{len(before) + k}" for k in range(spread)] + after
    params = tuple(Var(n, dt) for n, dt in zip(names, dtypes))
    head, tail = params[:len(before) + spread], params[len(before) + spread:]
    try:
        out = index_map(*head, **{n: v for n, v in zip(after, tail)})
    except Exception:  # a map that cannot be traced is reported by the primitive
        return index_map
    results = tuple(out) if isinstance(out, (list, tuple)) else (out,)
    return params, tuple(IntImm(params[0].dtype if params else "int32", r) if isinstance(r, int)
                         and not isinstance(r, bool) else r for r in results)



def arity(index_map) -> int | None:
    """How many indices a Python function left untraced takes (None for
    anything else, or a function of ``*indices``)."""
    if not callable(index_map) or isinstance(index_map, type):
        return None
    import inspect

    try:
        params = inspect.signature(index_map).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return len(params)


def dims_text(shape) -> str:
    return "(" + ", ".join(d.script() for d in shape) + ("," if len(shape) == 1 else "") + ")"


def inverse_of(sums, params, new_vars) -> dict:
    """Each old variable as an expression of the new ones: a bijective map's
    output ``d`` is a mixed radix of slices ``(source // lower) % extent``
    with weights ``scale``; each slice is read back as ``(new_d // scale) %
    extent`` (no modulus for the top digit) and each source is the sum of its
    slices times their lower factors."""
    from ..nodes import FloorDiv, FloorMod

    by_name = {p.name: p for p in params}
    parts: dict = {p.name: [] for p in params}
    for d, total in enumerate(sums):
        top = max((a.scale for a in total.args), default=None)
        v = new_vars[d]
        for a in total.args:
            piece = v if a.scale == 1 else FloorDiv(v, IntImm(v.dtype, a.scale))
            if a.scale != top:
                piece = FloorMod(piece, IntImm(v.dtype, a.extent))
            parts[a.source].append(piece if a.lower_factor == 1 else piece * IntImm(v.dtype, a.lower_factor))
    out = {}
    for name, pieces in parts.items():
        p = by_name[name]
        e = pieces[0] if pieces else IntImm(p.dtype, 0)
        for piece in pieces[1:]:
            e = e + piece
        out[p] = simplify_index(_cast(e, p.dtype))
    return out


class Dims:
    """The iteration domain as trace_index_map reads a buffer: the dtypes of
    its dimensions."""

    def __init__(self, dtypes):
        self.shape = [IntImm(dt, 1) for dt in dtypes]


def tidy_accesses(node):
    """``node`` with its buffer indices and ranges in the simple form TVM's
    simplifier leaves after a substitution (``simplify_index``), as the
    block primitives that read variables through an inverse write them."""
    from ..analysis.traversal import transform
    from ..nodes import BufferLoad, BufferStore, Range
    from ..nodes.base import with_fields

    def post(n):
        if isinstance(n, (BufferLoad, BufferStore)):
            return with_fields(n, indices=[simplify_index(i) for i in n.indices])
        if isinstance(n, Range):
            return Range(simplify_index(n.min), simplify_index(n.extent))
        return n
    return transform(node, post)


__all__ = ["as_map", "separators", "trace_index_map", "arity", "dims_text", "inverse_of", "Dims", "NOP", "tidy_accesses"]
