"""Do two functions compute the same thing? Run both on the same inputs.

``assert_equivalent(f, g)`` draws random arguments for ``f`` (small
integers, some 8- and 16-bit ones over their whole range, floats in
[-1, 1], sizes for symbolic shapes), runs ``f`` and
``g`` on copies of them with the reference interpreter, and compares every
buffer afterwards (any of them may have been written) exactly: floats bit
for bit (``-0.0`` is not ``0.0``), except that any two NaNs agree, since
IEEE leaves the sign and payload of a computed NaN open. The first
difference is reported with the buffer, the index and both values.

The one tolerance is for math intrinsics whose results the interpreter and
compiled code may round differently: :data:`INTRINSIC_ULPS` says, per
intrinsic, how many units in the last place apart the two may be, and
:func:`ulps_for` gives the width a function needs (0 without such calls).

``random_inputs(func, rng)`` and the hypothesis strategy ``inputs_for(func)``
give argument lists for ``tirfun.interp.run(func, *args)``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import ArgumentError, TirfunError
from ..interp.intrinsics import C_EXP10, C_HYPOT
from ..nodes import IntImm, PrimFunc, Var
from ..nodes.dtype import DataType
from ..numpy_dtypes import numpy_dtype, round_bfloat16

#: Units in the last place (of the call's own dtype) by which the compiled
#: result of a math intrinsic may differ from the interpreter's. Every
#: intrinsic not listed is exact: both sides compute it with the same
#: formula in the same precision and round once.
INTRINSIC_ULPS: dict[str, int] = {}
# the interpreter calls the C library's exp10, hypot and pow, as compiled
# code does (pow as it is: LLVM may not rewrite it); where the C library
# has no exp10 or hypot it computes pow(10, x) (up to 2 ulps apart) and
# Python's hypot (1 ulp)
if C_EXP10 is None:
    INTRINSIC_ULPS["exp10"] = 2
if C_HYPOT is None:
    INTRINSIC_ULPS["hypot"] = 1

#: Units in the last place by which a call computed inline under the CPU
#: target's ``-math=fast`` (a ``float32``, ``float16`` or ``bfloat16`` call of
#: one of these functions) may differ from the interpreter: the result of a
#: double computation within 2**-44 of the true value, rounded once, lands
#: on one of the two floats around the true value, as the interpreter's
#: does (:mod:`tirfun.lower.llvm_vecmath` has the derivation). Special
#: values (infinities, NaN, signed zeros, the overflow and underflow
#: thresholds) are exact; ``float64`` calls keep the C library and are exact.
FAST_MATH_ULPS: dict[str, int] = {
    "exp": 1, "exp2": 1, "log": 1, "log2": 1, "log1p": 1, "tanh": 1, "sigmoid": 1, "sin": 1,
    "cos": 1, "erf": 1,
}

_MAX_SIZE = 6


class NotEquivalentError(AssertionError):
    """Two functions gave different results on the same inputs."""


def _function(func_or_mod) -> PrimFunc:
    from ..interp import select_function

    return select_function(func_or_mod)


def _free_in_shapes(func: PrimFunc) -> list[Var]:
    from ..analysis.traversal import walk

    out: list[Var] = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            continue
        for d in buf.shape:
            for n in walk(d):
                if isinstance(n, Var) and n not in out:
                    out.append(n)
    return out


def _shapes(func: PrimFunc, sizes: Mapping[str, int]) -> list[tuple[int, ...]] | None:
    """The shape of each buffer parameter for the given sizes (None when a
    dimension comes out negative)."""
    from ..interp import evaluate

    shapes = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            continue
        dims = []
        for d in buf.shape:
            value = d.value if isinstance(d, IntImm) else evaluate(d, **sizes)
            if value < 0:
                return None
            dims.append(int(value))
        shapes.append(tuple(dims))
    return shapes


def choose_sizes(func: PrimFunc, rng: np.random.Generator, max_size: int = _MAX_SIZE) -> dict:
    """Values for the symbolic sizes of ``func``'s buffers, by name."""
    names = [v.name for v in _free_in_shapes(func)]
    for _ in range(100):
        sizes = {n: int(rng.integers(1, max_size + 1)) for n in names}
        if _shapes(func, sizes) is not None:
            return sizes
    raise TirfunError(f"no sizes up to {max_size} give every buffer of the function a valid shape")


def random_array(dtype: DataType, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """Random contents: floats in [-1, 1], small integers, random bools
    (bfloat16 as ml_dtypes' bfloat16 arrays). Integers of 8 and 16 bits
    take any value of their type one time in four, so that arithmetic on
    them wraps around now and then."""
    dtype = DataType(dtype)
    if dtype.is_bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.is_integer:
        small = rng.integers(-8 if dtype.is_int else 0, 9, size=shape)
        if dtype.bits <= 16:
            wide = rng.integers(dtype.min_value(), dtype.max_value() + 1, size=shape)
            small = np.where(rng.random(size=shape) < 0.25, wide, small)
        return small.astype(str(dtype))
    values = rng.uniform(-1.0, 1.0, size=shape)
    return values.astype(numpy_dtype(dtype))


def _scalar(var: Var, rng: np.random.Generator, sizes: Mapping[str, int]):
    if var.name in sizes:
        return sizes[var.name]
    dt = var.dtype
    if dt.is_bool:
        return bool(rng.integers(0, 2))
    if dt.is_integer:
        return int(rng.integers(1, _MAX_SIZE + 1))
    if dt.is_float:
        return float(rng.uniform(-1.0, 1.0))
    raise ArgumentError(f"cannot make a random value for parameter {var.name}: {dt}")


def random_inputs(func_or_mod, rng: np.random.Generator | int = 0, *,
                  sizes: Mapping[str, int] | None = None) -> list:
    """Positional arguments for ``interp.run(func, *args)``: one random
    array per buffer parameter, one value per scalar parameter."""
    func = _function(func_or_mod)
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    sizes = dict(sizes) if sizes is not None else choose_sizes(func, rng)
    shapes = _shapes(func, sizes)
    if shapes is None:
        raise TirfunError(f"the sizes {sizes} give a buffer a negative dimension")
    args, k = [], 0
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is not None:
            args.append(random_array(buf.dtype, shapes[k], rng))
            k += 1
        elif p.dtype.is_handle:
            raise ArgumentError(f"parameter {p.name} is a handle without a buffer; its array "
                                "cannot be made up")
        else:
            args.append(_scalar(p, rng, sizes))
    return args


def _copy(args: list) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _labels(func: PrimFunc) -> list[str]:
    return [func.buffer_map[p].name if p in func.buffer_map else p.name for p in func.params]


def _check_signatures(f: PrimFunc, g: PrimFunc) -> None:
    if len(f.params) != len(g.params):
        raise NotEquivalentError(f"the functions take {len(f.params)} and {len(g.params)} parameters")
    for k, (p, q) in enumerate(zip(f.params, g.params)):
        bf, bg = f.buffer_map.get(p), g.buffer_map.get(q)
        if (bf is None) != (bg is None):
            raise NotEquivalentError(f"parameter {k} is a buffer in one function and not the other")
        if bf is not None and (bf.dtype != bg.dtype or len(bf.shape) != len(bg.shape)):
            raise NotEquivalentError(f"parameter {k}: buffer {bf.name} of {bf.dtype} with "
                                     f"{len(bf.shape)} dimensions against {bg.name} of {bg.dtype} "
                                     f"with {len(bg.shape)}")
        if bf is None and p.dtype != q.dtype:
            raise NotEquivalentError(f"parameter {k}: {p.name}: {p.dtype} against {q.name}: {q.dtype}")


def ulps_for(func_or_mod, math: str = "exact") -> int:
    """How many ulps apart compiled and interpreted results of ``func`` may
    be: the widest :data:`INTRINSIC_ULPS` entry among the intrinsics it
    calls (0 when it calls none that needs one); with ``math="fast"`` (the
    target's ``-math=fast``), :data:`FAST_MATH_ULPS` for its calls on
    floats narrower than 64 bits as well."""
    from ..analysis.traversal import walk
    from ..nodes import Call

    func = _function(func_or_mod)
    widest = 0
    for node in walk(func.body):
        if isinstance(node, Call):
            name = str(node.op).removeprefix("tir.")
            widest = max(widest, INTRINSIC_ULPS.get(name, 0))
            if math == "fast" and node.dtype.is_float and node.dtype.bits < 64:
                widest = max(widest, FAST_MATH_ULPS.get(name, 0))
    return widest


def _bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of a float array as unsigned integers of its width."""
    return a.view(f"uint{a.dtype.itemsize * 8}")


def _ulp_distance(bx: np.ndarray, by: np.ndarray, width: int) -> np.ndarray:
    """How many representable floats lie between two arrays of float bits
    (``-0.0`` and ``0.0`` are one apart)."""
    sign = np.uint64(1) << np.uint64(width - 1)
    ux, uy = bx.astype(np.uint64), by.astype(np.uint64)
    mx, my = ux & (sign - np.uint64(1)), uy & (sign - np.uint64(1))
    same_sign = (ux & sign) == (uy & sign)
    return np.where(same_sign, np.maximum(mx, my) - np.minimum(mx, my), mx + my + np.uint64(1))


def _float_agreement(expected: np.ndarray, actual: np.ndarray, dtype: DataType):
    """``(same, distance, finite)`` of two float arrays of one shape, element
    by element: the same bits or both NaN; how many representable values
    apart; both finite. (Not ``ascontiguousarray``, which makes a 0-d array
    1-d.)"""
    bx, by = _bits(np.asarray(expected, order="C")), _bits(np.asarray(actual, order="C"))
    x, y = _as_float(expected, dtype), _as_float(actual, dtype)
    same = (bx == by) | (np.isnan(x) & np.isnan(y))
    return same, _ulp_distance(bx, by, bx.dtype.itemsize * 8), np.isfinite(x) & np.isfinite(y)


def ulps_apart(expected: np.ndarray, actual: np.ndarray, dtype) -> int | None:
    """How many representable values apart two float arrays of one shape lie
    at most, over the elements that differ (0 when none does); None when an
    element differs where one side is not finite."""
    same, distance, finite = _float_agreement(expected, actual, DataType(dtype))
    differs = ~same
    if np.any(differs & ~finite):
        return None
    return int(distance[differs].max()) if np.any(differs) else 0


def compare_arrays(name: str, expected: np.ndarray, actual: np.ndarray, dtype: DataType,
                   ulps: int = 0) -> str | None:
    """None when the arrays agree, else a message naming the first differing
    index and both values.

    Integers and bools must be equal; floats must have the same bits, or
    both be NaN; with ``ulps`` > 0, finite floats may also lie up to that
    many representable values apart (see :data:`INTRINSIC_ULPS`).
    """
    dtype = DataType(dtype)
    if expected.shape != actual.shape:
        return f"buffer {name} has shape {expected.shape} against {actual.shape}"
    if dtype.is_float:
        same, distance, finite = _float_agreement(expected, actual, dtype)
        if ulps:
            same |= finite & (distance <= np.uint64(ulps))
    else:
        same = np.asarray(expected == actual)
    if np.all(same):
        return None
    bad = np.argwhere(~np.asarray(same))
    index = tuple(int(i) for i in bad[0])
    count = len(bad)
    if dtype.is_float:
        shown = (_as_float(expected, dtype), _as_float(actual, dtype))
    else:
        shown = (expected, actual)
    return (f"buffer {name} differs at index {index}: {_show(shown[0][index])} against "
            f"{_show(shown[1][index])} ({count} of {expected.size} elements differ)")


def _as_float(a: np.ndarray, dtype: DataType) -> np.ndarray:
    """Float values of an array numpy computes with (bfloat16 and the narrow
    floats widened to float32)."""
    return a.astype(np.float32) if dtype == "bfloat16" or dtype.is_mini_float else a


def _show(value) -> str:
    """A value in its own type's shortest spelling (float32 ``0.1``, not ``0.10000000149``)."""
    return str(value) if isinstance(value, np.floating) else repr(value.item())


def assert_equivalent(f, g, *, trials: int = 3, seed: int = 0, ulps: int = 0,
                      sizes: Mapping[str, int] | None = None) -> None:
    """Raise :class:`NotEquivalentError` unless ``f`` and ``g`` leave every
    buffer equal on ``trials`` random inputs (floats bit for bit, or within
    ``ulps`` units in the last place; see :func:`compare_arrays`).

    The inputs are drawn for ``f`` (with ``seed``) and passed to both by
    position; symbolic sizes get random values up to 6 unless ``sizes``
    (by variable name) fixes them. An error of ``f`` on its inputs is
    raised as is; an error of ``g`` alone is a difference.
    """
    from ..interp import run

    ff, gg = _function(f), _function(g)
    _check_signatures(ff, gg)
    labels = _labels(ff)
    for trial in range(trials):
        rng = np.random.default_rng([seed, trial])
        args = random_inputs(ff, rng, sizes=sizes)
        first, second = _copy(args), _copy(args)
        run(ff, *first)
        try:
            run(gg, *second)
        except TirfunError as exc:
            raise NotEquivalentError(f"the first function runs but the second fails "
                                     f"(trial {trial}, seed {seed}): {exc}") from exc
        for label, p, x, y in zip(labels, ff.params, first, second):
            if not isinstance(x, np.ndarray):
                continue
            problem = compare_arrays(label, x, y, ff.buffer_map[p].dtype, ulps)
            if problem is not None:
                raise NotEquivalentError(f"{problem} (trial {trial}, seed {seed})")


def assert_built_as_interpreted(mod, *, reference=None, seed: int = 0, ulps: int | None = None,
                                target: str = "llvm") -> None:
    """Build ``mod`` for ``target`` and run it on random inputs (drawn with
    ``seed``); the interpreter runs ``reference`` (``mod``'s function unless
    given: the program before a rewrite, say) on the same inputs. Raise
    :class:`NotEquivalentError` unless every array agrees, floats bit for
    bit, or within ``ulps`` (by default :func:`ulps_for` the function: 0
    without math intrinsics)."""
    from .. import build
    from ..interp import run

    func = _function(mod)
    args = random_inputs(func, np.random.default_rng(seed))
    expected = _copy(args)
    run(func if reference is None else _function(reference), *expected)
    build(mod, target=target)(*args)
    ulps = ulps_for(func) if ulps is None else ulps
    for label, p, x, y in zip(_labels(func), func.params, expected, args):
        if isinstance(x, np.ndarray):
            problem = compare_arrays(label, x, y, func.buffer_map[p].dtype, ulps)
            if problem is not None:
                raise NotEquivalentError(f"built against interpreted: {problem}\n{func.script()}")


def inputs_for(func_or_mod, *, max_size: int = _MAX_SIZE):
    """A hypothesis strategy of argument lists for ``interp.run(func, *args)``."""
    from hypothesis import assume
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    func = _function(func_or_mod)
    free = _free_in_shapes(func)

    def elements(dtype: DataType):
        if dtype.is_bool:
            return st.booleans()
        if dtype.is_int:
            return st.integers(-8, 8)
        if dtype.is_uint:
            return st.integers(0, 8)
        if dtype == "bfloat16":
            return st.floats(-1.0, 1.0, width=32).map(round_bfloat16)
        width = {"float16": 16, "float32": 32}.get(str(dtype), 64)
        return st.floats(-1.0, 1.0, width=width)

    @st.composite
    def draw_inputs(draw):
        sizes = {v.name: draw(st.integers(1, max_size), label=v.name) for v in free}
        shapes = _shapes(func, sizes)
        assume(shapes is not None)
        args, k = [], 0
        for p in func.params:
            buf = func.buffer_map.get(p)
            if buf is not None:
                # bfloat16 arrays are drawn as float32 holding bfloat16 values
                # (hypothesis knows no ml_dtypes dtype), then converted exactly
                held = np.dtype("float32") if buf.dtype == "bfloat16" else numpy_dtype(buf.dtype)
                drawn = draw(hnp.arrays(held, shapes[k], elements=elements(buf.dtype)))
                args.append(drawn.astype(numpy_dtype(buf.dtype)))
                k += 1
            elif p.name in sizes:
                args.append(sizes[p.name])
            elif p.dtype.is_handle:
                raise ArgumentError(f"parameter {p.name} is a handle without a buffer; its array "
                                    "cannot be made up")
            elif p.dtype.is_bool:
                args.append(draw(st.booleans()))
            elif p.dtype.is_integer:
                args.append(draw(st.integers(1, max_size)))
            else:
                args.append(draw(st.floats(-1.0, 1.0, width=32 if p.dtype.bits == 32 else 64)))
        return args

    return draw_inputs()


__all__ = ["NotEquivalentError", "assert_equivalent", "assert_built_as_interpreted", "random_inputs", "inputs_for", "ulps_apart",
           "random_array", "compare_arrays", "choose_sizes", "INTRINSIC_ULPS", "FAST_MATH_ULPS",
           "ulps_for"]
