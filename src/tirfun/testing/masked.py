"""Random programs with predicated (masked) loads and stores.

:func:`masked_programs` draws the TVMScript text of a PrimFunc that walks a
buffer in chunks of ``lanes`` elements and copies ``A`` into ``B`` (plus a
constant) with TVM v0.20's predicated accesses, in one of the spellings TVM
has: ``B.vstore([...], value, predicate=m)``, ``T.buffer_store(B, value,
[...], predicate=m)``, ``A.vload([...], predicate=m)`` or
``T.BufferLoad(A, [...], predicate=m)``. The chunks step through the
elements forwards, backwards or every second element, so dense and strided
vector indices both occur; a scalar chunk (one lane, a scalar mask) occurs
too. The masks come from a comparison with the element count (the tail
lanes of the last chunk lie outside the buffers and must not be touched),
from a bool buffer ``M`` (a mask that depends on the data), or both.

:meth:`MaskedProgram.expected` computes, with numpy alone, what the program
leaves in ``B``: a lane masked off in the store keeps ``B``'s element, a
lane masked off in the load stores zero plus the constant.
"""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import strategies as st

from ..nodes import IRModule
from ..numpy_dtypes import numpy_dtype
from ..script import from_source

_HEAD = "from tirfun.script import tir as T\n\n"

#: element types drawn, with the range of values the inputs take (every
#: sum of an input and the constant is exact before its one rounding)
DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int8", "uint8", "int64",
          "float8_e4m3fn", "float8_e5m2", "bool")


@attrs.frozen
class MaskedProgram:
    """One drawn program and what it needs to be checked."""

    mod: IRModule
    text: str
    dtype: str
    lanes: int
    stride: int     # 1, -1 or 2: how a chunk's lanes step through the elements
    n: int          # elements walked (lane numbers 0 .. n-1 are inside)
    chunks: int     # chunks * lanes >= n: the last chunk may overrun
    add: int        # the constant added to each loaded value (0 for bool)
    load_mask: str  # "tail", "data", "both" or "none"
    store_mask: str

    @property
    def size(self) -> int:
        """The length of ``A`` and ``B``."""
        return self.n * abs(self.stride)

    def element(self, t: int) -> int:
        """The element lane number ``t`` addresses."""
        if self.stride == -1:
            return self.n - 1 - t
        return t * self.stride

    def _on(self, kind: str, t: int, m: np.ndarray) -> bool:
        tail = t < self.n
        return {"tail": tail, "data": bool(m[t]), "both": tail and bool(m[t]),
                "none": True}[kind]

    def inputs(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Random ``A``, ``M`` and ``B`` for the program."""
        dt = numpy_dtype(self.dtype)
        if self.dtype == "bool":
            a = rng.integers(0, 2, self.size).astype(bool)
            b = rng.integers(0, 2, self.size).astype(bool)
        else:
            low = 0 if self.dtype.startswith("uint") else -12
            a = rng.integers(low, 13, self.size).astype(np.float64).astype(dt)
            b = rng.integers(low, 13, self.size).astype(np.float64).astype(dt)
        m = rng.integers(0, 2, self.chunks * self.lanes).astype(bool)
        return a, m, b

    def expected(self, a: np.ndarray, m: np.ndarray, b: np.ndarray) -> np.ndarray:
        """What the program leaves in ``B``, computed with numpy alone."""
        out = b.copy()
        for t in range(self.chunks * self.lanes):
            if not self._on(self.store_mask, t, m):
                continue
            k = self.element(t)
            if self.dtype == "bool":
                out[k] = bool(a[k]) if self._on(self.load_mask, t, m) else False
                continue
            loaded = float(a[k]) if self._on(self.load_mask, t, m) else 0.0
            out[k] = np.array(loaded + self.add).astype(out.dtype)
        return out


def _mask(kind: str, lanes: int, first: str, n: int, lane_mask: bool) -> str:
    if lane_mask:  # TVM's spelling of a tail mask
        dtype = "bool" if lanes == 1 else f"boolx{lanes}"
        tail = f'T.get_active_lane_mask("{dtype}", {first}, {n})'
        data = f"M[{first}]" if lanes == 1 else f"M[T.Ramp({first}, 1, {lanes})]"
    elif lanes == 1:
        tail, data = f"{first} < {n}", f"M[{first}]"
    else:
        tail = f"T.Ramp({first}, 1, {lanes}) < T.Broadcast({n}, {lanes})"
        data = f"M[T.Ramp({first}, 1, {lanes})]"
    return {"tail": tail, "data": data, "both": f"{tail} and {data}",
            "none": f"T.Broadcast(T.bool(True), {lanes})" if lanes > 1 else "T.bool(True)"}[kind]


@st.composite
def masked_programs(draw, in_block: bool | None = None) -> MaskedProgram:
    """A program of predicated loads and stores (see the module docstring).
    With ``in_block`` (drawn when None) the store is the body of a block
    ``B`` over the chunks, so that schedule primitives apply to it."""
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    lanes = draw(st.sampled_from([1, 2, 4, 8]), label="lanes")
    stride = draw(st.sampled_from([1, 1, -1, 2]), label="stride")
    chunks = draw(st.integers(1, 3), label="chunks")
    n = draw(st.integers(max(1, (chunks - 1) * lanes + 1), chunks * lanes), label="n")
    overrun = chunks * lanes > n
    kinds = ["tail", "both"] if overrun else ["tail", "data", "both", "none"]
    store_mask = draw(st.sampled_from(kinds), label="store mask")
    load_mask = draw(st.sampled_from(kinds), label="load mask")
    add = 0 if dtype == "bool" else draw(st.integers(0, 3), label="add")
    kind = draw(st.sampled_from(["serial", "unroll", "parallel", "vectorized"]), label="loop")
    if in_block is None:
        in_block = draw(st.booleans(), label="in a block")
    i = "vi" if in_block else "i"
    first = f"{i} * {lanes}" if lanes > 1 else i
    if stride == 1:
        base, step = first, 1
    elif stride == 2:
        base, step = f"{i} * {2 * lanes}" if lanes > 1 else f"{i} * 2", 2
    else:
        base, step = (f"{n - 1} - {i} * {lanes}" if lanes > 1 else f"{n - 1} - {i}"), -1
    index = f"T.Ramp({base}, {step}, {lanes})" if lanes > 1 else base
    lane_mask = draw(st.booleans(), label="T.get_active_lane_mask")
    lmask = _mask(load_mask, lanes, first, n, lane_mask)
    smask = _mask(store_mask, lanes, first, n, lane_mask)
    if draw(st.booleans(), label="T.BufferLoad"):
        value = f"T.BufferLoad(A, [{index}], predicate={lmask})"
    else:
        value = f"A.vload([{index}], predicate={lmask})"
    if add:
        c = f"T.{dtype}({add})"
        value += f" + T.Broadcast({c}, {lanes})" if lanes > 1 else f" + {c}"
    if draw(st.booleans(), label="T.buffer_store"):
        store = f"T.buffer_store(B, {value}, [{index}], predicate={smask})"
    else:
        store = f"B.vstore([{index}], {value}, predicate={smask})"
    size = n * abs(stride)
    if in_block:
        store = (f'with T.block("B"):\n            vi = T.axis.spatial({chunks}, i)\n'
                 f"            {store}")
    text = _HEAD + f'''@T.prim_func
def main(A: T.Buffer(({size},), "{dtype}"), M: T.Buffer(({chunks * lanes},), "bool"),
         B: T.Buffer(({size},), "{dtype}")):
    for i in T.{kind}({chunks}):
        {store}
'''
    return MaskedProgram(from_source(text), text, dtype, lanes, stride, n, chunks, add,
                         load_mask, store_mask)
