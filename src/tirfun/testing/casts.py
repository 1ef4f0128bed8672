"""Random chains of conversions over short vectors of every dtype.

``cast_chains()`` draws programs ``B[i] = T.Cast(d_k, ... T.Cast(d_1, A[i]))``
over 1 to 16 elements, the loop serial, unrolled or vectorized, under
``tir.noalias``. General random programs convert one step at a time and
rarely line up eight equal conversions of sign-extended values; LLVM's SLP
vectorizer narrowed exactly such a chain wrongly (``float32(uint64(x))`` of
int8 values computed as ``uitofp`` of a 32-bit sign extension).

Every chain is defined on every input: a float becomes an integer only when
the value it carries is known to be finite and to fit the integer type
(from the full range of the input dtype, followed through the chain), so
the program means the same to the interpreter and to C. Inputs should take
any value of their dtype (:func:`full_range_inputs`).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from ..nodes import IRModule
from ..nodes.dtype import DataType
from ..numpy_dtypes import numpy_dtype
from ..script import from_source

#: every element dtype tirfun has
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64")

_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
              "float64": math.inf}
#: relative rounding error of each float type (half an ulp, rounded up to a whole ulp)
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}


def _int_range(dtype: DataType) -> tuple[int, int]:
    if dtype.is_bool:
        return 0, 1
    return int(dtype.min_value()), int(dtype.max_value())


def _next_range(rng, src: DataType, dst: DataType):
    """The range of values after converting values in ``rng`` (a pair of
    numbers, or None for "any float, including inf and nan") from ``src``
    to ``dst``; and whether the conversion is defined for all of them."""
    if dst.is_bool:
        return (0, 1), True
    if dst.is_float:
        if rng is None:
            return None, True
        # rounding may carry a value a little further out
        grow = 1.0 + _EPS[str(dst)]
        lo, hi = rng[0] * grow if rng[0] < 0 else rng[0], rng[1] * grow if rng[1] > 0 else rng[1]
        top = _FLOAT_MAX[str(dst)]
        if max(abs(lo), abs(hi)) >= top:
            return None, True  # may round to an infinity
        return (lo, hi), True
    # integer destination
    if src.is_float:
        if rng is None:
            return None, False
        lo, hi = rng
        dlo, dhi = _int_range(dst)
        # truncation toward zero keeps values inside [lo, hi] rounded inward
        if math.trunc(lo) < dlo or math.trunc(hi) > dhi:
            return None, False
        return (math.trunc(lo), math.trunc(hi)), True
    lo, hi = rng
    dlo, dhi = _int_range(dst)
    if lo >= dlo and hi <= dhi:
        return rng, True
    return (dlo, dhi), True  # wraps around


@st.composite
def cast_chains(draw, max_steps: int = 3, dtypes=DTYPES) -> IRModule:
    """An IRModule whose ``main(A, B)`` stores a chain of one to
    ``max_steps`` conversions of ``A[i]`` into ``B[i]``."""
    dtypes = tuple(DataType(d) for d in dtypes)
    first = draw(st.sampled_from(dtypes), label="input dtype")
    rng = None if first.is_float else _int_range(first)  # float inputs may hold inf and nan
    chain, cur = [], first
    steps = draw(st.integers(1, max_steps), label="steps")
    if first.is_integer and not first.is_bool and draw(st.booleans(), label="extend, then convert"):
        # the shape vectorizers narrow: an extension to a wider integer of
        # the other signedness, then a conversion
        wider = [d for d in dtypes if d.is_integer and not d.is_bool and d.bits > first.bits
                 and d.is_int != first.is_int]
        if wider:
            cur = draw(st.sampled_from(wider), label="extended to")
            chain.append(cur)
            rng, _ = _next_range(rng, first, cur)
            steps = max(steps - 1, 1)
    for _ in range(steps):
        options = []
        for d in dtypes:
            _, ok = _next_range(rng, cur, d)
            if ok:
                options.append(d)
        nxt = draw(st.sampled_from(options), label="to")
        rng, _ = _next_range(rng, cur, nxt)
        chain.append(nxt)
        cur = nxt
    # whole vectors (8, 16) most of the time: LLVM's vectorizers act on them
    n = draw(st.sampled_from((8, 16, 8, 16, 4, 1, 2, 3, 5, 7, 9)), label="elements")
    kinds = ["range", "T.unroll"] + (["T.vectorized"] if n in (2, 4, 8, 16) else [])
    kind = draw(st.sampled_from(kinds), label="loop kind")
    noalias = draw(st.booleans(), label="noalias")
    value = "A[vi]"
    for d in chain:
        value = f'T.Cast("{d}", {value})'
    source = f'''@T.prim_func
def main(A: T.Buffer(({n},), "{first}"), B: T.Buffer(({n},), "{cur}")):
    T.func_attr({{"tir.noalias": {noalias}}})
    for i in {kind}({n}):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = {value}'''
    return IRModule({"main": from_source(source)})


def full_range_inputs(mod: IRModule, rng: np.random.Generator) -> list[np.ndarray]:
    """Arrays for ``mod["main"]``'s parameters: integers over their whole
    type, with the extremes and zero among them; floats with infinities,
    NaN, -0.0, values near the integer limits and ordinary numbers."""
    func = mod["main"]
    out = []
    for p in func.params:
        buf = func.buffer_map[p]
        dtype, shape = DataType(buf.dtype), tuple(int(x) for x in buf.shape)
        size = int(np.prod(shape))
        if dtype.is_bool:
            out.append(rng.integers(0, 2, size=shape).astype(bool))
            continue
        if dtype.is_integer:
            lo, hi = _int_range(dtype)
            values = rng.integers(lo, hi, size=size, endpoint=True, dtype=np.int64 if dtype.is_int
                                  else np.uint64)
            special = np.array([lo, hi, 0, -1 if lo < 0 else 1], dtype=values.dtype)
            pick = rng.random(size) < 0.3
            values = np.where(pick, special[rng.integers(0, 4, size)], values)
            out.append(values.astype(str(dtype)).reshape(shape))
            continue
        special = [math.inf, -math.inf, math.nan, -0.0, 0.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 63, 255.5,
                   -128.75, 65504.0, 1e-40]
        values = rng.uniform(-300.0, 300.0, size=size)
        pick = rng.random(size) < 0.3
        values = np.where(pick, np.array(special)[rng.integers(0, len(special), size)], values)
        with np.errstate(over="ignore"):
            out.append(values.astype(numpy_dtype(dtype)).reshape(shape))
    return out


__all__ = ["cast_chains", "full_range_inputs", "DTYPES"]
