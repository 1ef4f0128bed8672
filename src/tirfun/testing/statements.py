"""Random programs built around the statements outside the schedulable core:
``while`` loops and ``T.allocate_const`` data.

Each strategy draws TVMScript text and parses it, so the parser, the printer
(round trips), the interpreter and the build can all be checked on it.

* :func:`while_programs` -- a counter in a scratch buffer drives a ``while``
  loop (optionally nested in a ``for`` or holding another ``while``) that
  updates ``A``; the loop always ends because the step is positive.
* :func:`const_programs` -- ``T.allocate_const`` data of a random dtype read
  through a ``T.Buffer`` view; returns the function and the data.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ..script import from_source

_HEAD = "from tirfun.script import tir as T\n\n"

_UPDATES = (
    "A[k[0]] = A[k[0]] * {c} + k[0]",
    "A[k[0]] = A[k[0]] - {c}",
    "A[k[0]] = T.max(A[k[0]], k[0] * {c})",
    "A[k[0]] = A[(k[0] + {c}) % {n}] + 1",
)


@st.composite
def while_programs(draw):
    """A PrimFunc ``main(A: int32[n], m: int32)`` whose work is done by
    ``while`` loops."""
    n = draw(st.integers(1, 24), label="n")
    start = draw(st.integers(0, 4), label="start")
    step = draw(st.integers(1, 4), label="step")
    c = draw(st.integers(-3, 5), label="c")
    update = draw(st.sampled_from(_UPDATES), label="update").format(c=c, n=n)
    inner = draw(st.sampled_from(["none", "if", "for", "while"]), label="inner")
    outer_for = draw(st.booleans(), label="outer for")
    body = [update]
    if inner == "if":
        body += ["if k[0] % 2 == 0:", f"    A[k[0]] = A[k[0]] + {c}"]
    elif inner == "for":
        body += ["for j in range(2):", "    A[k[0]] = A[k[0]] + j"]
    elif inner == "while":
        body += ["t[0] = 0", "while t[0] < 2:", "    A[k[0]] = A[k[0]] + t[0]",
                 "    t[0] = t[0] + 1"]
    body.append(f"k[0] = k[0] + {step}")
    loop = [f"k[0] = {start}", f"while k[0] < T.min(m, {n}):"] + ["    " + s for s in body]
    if outer_for:
        loop = ["for r in range(2):"] + ["    " + s for s in loop]
    lines = ["@T.prim_func", f'def main(A: T.Buffer(({n},), "int32"), m: T.int32):',
             '    k = T.alloc_buffer((1,), "int32")', '    t = T.alloc_buffer((1,), "int32")']
    lines += ["    " + s for s in loop]
    return from_source(_HEAD + "\n".join(lines) + "\n")


_CONST_DTYPES = {
    "int8": st.integers(-128, 127),
    "uint8": st.integers(0, 255),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**63), 2**63 - 1),
    "float16": st.floats(-65504, 65504, allow_nan=False, width=16),
    "float32": st.floats(allow_nan=False, allow_infinity=False, width=32),
    "float64": st.floats(allow_nan=False, allow_infinity=False),
}


@st.composite
def const_programs(draw):
    """``(func, dtype, data)``: ``main(B)`` copies ``T.allocate_const`` data
    into ``B`` in reverse order."""
    dtype = draw(st.sampled_from(sorted(_CONST_DTYPES)), label="dtype")
    data = draw(st.lists(_CONST_DTYPES[dtype], min_size=1, max_size=12), label="data")
    n = len(data)
    text = (_HEAD + "@T.prim_func\n"
            f'def main(B: T.Buffer(({n},), "{dtype}")):\n'
            f'    c = T.allocate_const({data!r}, "{dtype}", [{n}])\n'
            f'    C = T.Buffer(({n},), "{dtype}", data=c)\n'
            f"    for i in range({n}):\n"
            f"        B[i] = C[{n - 1} - i]\n")
    return from_source(text), dtype, data


__all__ = ["while_programs", "const_programs"]
