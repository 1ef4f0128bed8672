"""Index maps as the layout primitives take them: a Python function of
the indices (traced on the dimensions it maps), ``(params, results)``, or
a ``tir.IndexMap``; TVM's ``IndexMap.AXIS_SEPARATOR`` markers; and the
inverse of a bijective map read as iteration sums."""

from __future__ import annotations

import functools
import inspect
import types

from ..analysis.arith.iter_map import is_plain_sum, simplify_index
from ..nodes import Buffer, Evaluate, FloatImm, IntImm, StringImm, Var
from .cache import as_index_map
from .exprs import buffer_is_plain, cast as _cast

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
    found = _parameters(index_map)
    if found is None:
        return index_map
    before, star, after = found
    dtypes = [d.dtype for d in buffer.shape]
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



def _parameters(fn) -> tuple[list, bool, list] | None:
    """``(positional names, whether it takes *args, keyword-only names)``
    of a function's parameters, as ``inspect.signature`` gives them; None
    when it gives none. A plain function's come from its code object, read
    once per code object (the lambdas a schedule makes anew each time it
    runs share theirs); anything else is asked through ``inspect``."""
    if type(fn) is types.FunctionType and not hasattr(fn, "__signature__") and not hasattr(fn, "__wrapped__"):
        before, star, after = _code_parameters(fn.__code__)
        return list(before), star, list(after)
    try:
        sig = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    return ([p.name for p in sig if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)],
            any(p.kind is p.VAR_POSITIONAL for p in sig), [p.name for p in sig if p.kind is p.KEYWORD_ONLY])


@functools.lru_cache(maxsize=256)
def _code_parameters(code: types.CodeType) -> tuple[tuple, bool, tuple]:
    """What :func:`_parameters` gives for a plain function of ``code``."""
    names, positional = code.co_varnames, code.co_argcount
    return (tuple(names[:positional]), bool(code.co_flags & inspect.CO_VARARGS),
            tuple(names[positional:positional + code.co_kwonlyargcount]))


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


def _linear(e, params: dict):
    """``e`` as ``(constant, {param name: coefficient})``, each coefficient
    an expression of no parameter, read off its sums and products; None
    where a product multiplies two parameters or an operation other than
    ``+``, ``-`` and ``*`` touches one."""
    from ..nodes import Add, Mul, Sub

    def scale(lin, k):
        const, coefs = lin
        return const * k, {n: c * k for n, c in coefs.items()}

    def read(n):
        if isinstance(n, Var) and n.name in params:
            return IntImm(n.dtype, 0), {n.name: IntImm(n.dtype, 1)}
        if isinstance(n, (Add, Sub)):
            a, b = read(n.a), read(n.b)
            if a is None or b is None:
                return None
            if isinstance(n, Sub):
                b = scale(b, IntImm(n.dtype, -1))
            coefs = dict(a[1])
            for name, c in b[1].items():
                coefs[name] = coefs[name] + c if name in coefs else c
            return a[0] + b[0], coefs
        if isinstance(n, Mul):
            a, b = read(n.a), read(n.b)
            if a is None or b is None or (a[1] and b[1]):
                return None
            return scale(b, a[0]) if not a[1] else scale(a, b[0])
        from ..analysis.traversal import walk

        if any(isinstance(m, Var) and m.name in params for m in walk(n)):
            return None
        return n, {}

    out = read(e)
    if out is None:
        return None
    return simplify_index(out[0]), {n: simplify_index(c) for n, c in out[1].items()}


def _same(a, b) -> bool:
    return simplify_index(a - b) == IntImm(a.dtype, 0) if a.dtype == b.dtype else False


def symbolic_radix(results, params, extents):
    """A map whose every result is a mixed radix of whole parameters
    (``y * n + w`` with ``w`` in ``[0, n)``) read over the domain
    ``extents`` (expressions, symbolic ones too), as TVM's iterator maps
    fuse: ``(extents of the results, inverse)``, the inverse taking the
    results' variables (a function of them) to each parameter's
    expression. None where the map is not such a bijection (a parameter of
    extent 1 may be used anywhere, or not at all: it is 0)."""
    from ..analysis.arith.terms import int_value
    from ..nodes import FloorDiv, FloorMod

    names = {p.name: p for p in params}
    ext_of = {p.name: e for p, e in zip(params, extents)}
    unit = {n for n, e in ext_of.items() if int_value(e) == 1}
    used: set = set()
    shapes, radices = [], []
    for e in results:
        lin = _linear(e, names)
        if lin is None or not _same(lin[0], IntImm(e.dtype, 0)):
            return None
        terms = {n: c for n, c in lin[1].items() if n not in unit and not _same(c, IntImm(c.dtype, 0))}
        if used & set(terms):
            return None
        used |= set(terms)
        order, current = [], IntImm(e.dtype, 1)
        while len(order) < len(terms):
            nxt = next((n for n, c in terms.items() if n not in order and _same(c, current)), None)
            if nxt is None:
                return None
            order.append(nxt)
            current = simplify_index(current * _cast(ext_of[nxt], e.dtype))
        shapes.append(current)
        radices.append([(n, terms[n]) for n in order])
    if used | unit != set(names):
        return None

    def inverse(new_vars):
        out = {p: IntImm(p.dtype, 0) for p in params}
        for v, radix in zip(new_vars, radices):
            for k, (n, coef) in enumerate(radix):
                piece = v if int_value(coef) == 1 else FloorDiv(v, _cast(coef, v.dtype))
                if k + 1 < len(radix):
                    piece = FloorMod(piece, _cast(ext_of[n], v.dtype))
                out[names[n]] = _cast(piece, names[n].dtype)
        return out

    return shapes, inverse


def symbolic_split(results, params, extents):
    """A map whose results are whole parameters or the two halves of a
    parameter split by a symbolic divisor (``i // n`` and ``i % n``, each
    once): ``(shape, inverse, exact)``, the shape padding each split up to a
    multiple of its divisor (``(extent + n - 1) // n`` by ``n``), the
    inverse as :func:`symbolic_radix` gives it, and whether that padding
    is provably empty. None for any other map."""
    from ..analysis.arith.terms import int_value
    from ..nodes import FloorDiv, FloorMod

    names = {p.name: k for k, p in enumerate(params)}
    pieces: dict = {}
    for k, e in enumerate(results):
        if isinstance(e, Var) and e.name in names:
            kind, divisor, source = "whole", None, e.name
        elif isinstance(e, (FloorDiv, FloorMod)) and isinstance(e.a, Var) and e.a.name in names \
                and int_value(e.b) is None and not set(names) & _names_of(e.b):
            kind, divisor, source = ("div" if isinstance(e, FloorDiv) else "mod"), e.b, e.a.name
        else:
            return None
        entry = pieces.setdefault(source, {})
        if kind in entry:
            return None
        entry[kind] = (k, divisor)
    shape: list = [None] * len(results)
    exact = True
    for name, entry in pieces.items():
        ext = _cast(extents[names[name]], params[names[name]].dtype)
        if set(entry) == {"whole"}:
            shape[entry["whole"][0]] = ext
        elif set(entry) == {"div", "mod"} and entry["div"][1] == entry["mod"][1]:
            d = _cast(entry["div"][1], ext.dtype)
            outer = simplify_index(FloorDiv(ext + d - IntImm(ext.dtype, 1), d))
            shape[entry["div"][0]], shape[entry["mod"][0]] = outer, d
            exact = exact and _same(simplify_index(outer * d), ext)
        else:
            return None
    if any(int_value(e) != 1 for n, e in zip(names, extents) if n not in pieces):
        return None

    def inverse(new_vars):
        out = {p: IntImm(p.dtype, 0) for p in params}
        for name, entry in pieces.items():
            p = params[names[name]]
            if "whole" in entry:
                out[p] = _cast(new_vars[entry["whole"][0]], p.dtype)
            else:
                outer, inner = new_vars[entry["div"][0]], new_vars[entry["mod"][0]]
                out[p] = _cast(outer * _cast(entry["div"][1], outer.dtype) + inner, p.dtype)
        return out

    return shape, inverse, exact


def _names_of(e) -> set:
    from .exprs import var_names

    return var_names(e)


class Dims:
    """The iteration domain as trace_index_map reads a buffer: the dtypes of
    its dimensions."""

    def __init__(self, dtypes):
        self.shape = [IntImm(dt, 1) for dt in dtypes]


def tidy_accesses(node, subst=None):
    """``node`` with its buffer indices and ranges in the simple form TVM's
    simplifier leaves after a substitution (``simplify_index``), as the
    block primitives that read variables through an inverse write them.
    With ``subst`` (Var -> expression), the variables are replaced first,
    in the same pass: ``tidy_accesses(substitute(node, subst))``."""
    return access_tidier(subst)(node)


def access_tidier(mapping=None):
    """:func:`tidy_accesses` as a function, for the parts of one block: the
    variables of ``mapping`` (Var -> expression) are substituted in the
    same walk, as ``tidy_accesses(substitute(node, mapping))`` would give,
    and an index met again (a store's element, then its load and its
    declared region) is simplified once."""
    from ..analysis.traversal import transform
    from ..nodes import BufferLoad, BufferStore, Range
    from ..nodes.base import with_fields

    tidied: dict = {}

    def tidy(e):
        if type(e) is IntImm or is_plain_sum(e):
            return e  # simplified already, and no division to fold
        out = tidied.get(e)
        if out is None:
            out = tidied[e] = transform(simplify_index(e), _fold_divmod)
        return out

    def post(n):
        if isinstance(n, (BufferLoad, BufferStore)):
            indices = [tidy(i) for i in n.indices]
            if all(a is b for a, b in zip(indices, n.indices)):
                return n
            return with_fields(n, indices=indices)
        if isinstance(n, Range):
            lo, extent = tidy(n.min), tidy(n.extent)
            return n if lo is n.min and extent is n.extent else Range(lo, extent)
        return n

    def plain(n):
        # constants, and buffers whose expressions are literals or
        # variables, hold nothing to tidy
        kind = type(n)
        if kind in _CONSTANTS or kind is Var:
            return n
        return n if kind is Buffer and buffer_is_plain(n) else None

    if not mapping:
        return lambda node: transform(node, post, plain)
    replaced: dict = {}

    def pre(n):
        kind = type(n)
        if kind is Var:
            value = mapping.get(n)
            if value is None:
                return n
            out = replaced.get(n)
            if out is None:  # the value as the substituted tree would be tidied
                out = replaced[n] = transform(value, post, plain)
            return out
        if kind in _CONSTANTS:
            return n
        # a buffer none of whose expressions is substituted holds nothing to rewrite
        return n if kind is Buffer and buffer_is_plain(n, mapping) else None

    return lambda node: transform(node, post, pre)


_CONSTANTS = frozenset({IntImm, FloatImm, StringImm})


def _fold_divmod(n):
    """``a // b * b + a % b`` as ``a``, which the simplifier leaves where
    ``b`` is symbolic (an inverse through a fused symbolic extent)."""
    from ..nodes import Add, FloorDiv, FloorMod, Mul

    if isinstance(n, Add):
        for x, y in ((n.a, n.b), (n.b, n.a)):
            if isinstance(x, Mul) and isinstance(y, FloorMod):
                for q, b in ((x.a, x.b), (x.b, x.a)):
                    if isinstance(q, FloorDiv) and q.a == y.a and q.b == y.b == b:
                        return y.a
    return n


__all__ = [
    "symbolic_split", "symbolic_radix", "as_map", "separators", "trace_index_map", "arity", "dims_text",
    "inverse_of", "Dims", "NOP", "tidy_accesses", "access_tidier",
]
