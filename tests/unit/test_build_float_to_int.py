"""Float-to-integer conversions of values out of range, NaN and infinities:
the compiled code gives what the interpreter defines (truncation toward
zero, wrapped to the destination's bits; NaN and infinities give 0), where
LLVM's plain ``fptosi`` is poison and x86 gives the minimum integer."""

import numpy as np
import pytest

import tirfun
from tirfun.interp import run

SPECIAL = [0.0, -0.0, 0.5, -0.5, 123.75, -123.75, 127.9, 128.0, -129.0, 255.5, 256.0, 65535.0,
           65536.0, 3e9, -3e9, 2.0 ** 31, -2.0 ** 31 - 1, 2.0 ** 32 + 5, 2.0 ** 53 + 2, 2.0 ** 63,
           -2.0 ** 63, 2.0 ** 64 + 2.0 ** 41, -(2.0 ** 70 + 2.0 ** 50), 1e30, -1e30, 1e300, 3.4e38,
           5e-324, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("src", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("dst", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("lanes", [1, 4])
def test_float_to_int_conversions_agree_with_the_interpreter_everywhere(src, dst, lanes):
    n = 32
    loop = f"for i in T.vectorized({n})" if lanes > 1 else f"for i in range({n})"
    func = tirfun.script.from_source(f'''@T.prim_func
def main(A: T.Buffer(({n},), "{src}"), B: T.Buffer(({n},), "{dst}")):
    {loop}:
        B[i] = T.Cast("{dst}", A[i])
''')
    np_src = tirfun.numpy_dtypes.numpy_dtype(src)
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.array((SPECIAL + [7.0] * n)[:n], np.float64).astype(np_src)
    interpreted, compiled = np.zeros(n, dst), np.zeros(n, dst)
    run(func, a, interpreted)
    tirfun.build(func)(a, compiled)
    assert interpreted.tolist() == compiled.tolist()
