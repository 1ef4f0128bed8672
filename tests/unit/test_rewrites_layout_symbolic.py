"""transform_layout and transform_block_layout over symbolic shapes: a map
fusing whole dimensions (``i * n + j`` with ``j`` in ``[0, n)``) is read
as TVM's iterator maps read it; the meaning is kept, checked on concrete
sizes with the interpreter and the LLVM build."""

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.nodes import IRModule
from tirfun.schedule import Schedule
from tirfun.script import from_source

MATVEC = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (T.int64(1), T.int64(4), T.int64(8)), "float32")
    B = T.match_buffer(b, (T.int64(4), n, T.int64(8)), "float32")
    C = T.match_buffer(c, (T.int64(1), T.int64(4), n), "float32")
    for i0, i1, i2, k in T.grid(T.int64(1), T.int64(4), n, T.int64(8)):
        with T.block("C"):
            v0, v1, v2, vk = T.axis.remap("SSSR", [i0, i1, i2, k])
            with T.init():
                C[v0, v1, v2] = T.float32(0)
            C[v0, v1, v2] = C[v0, v1, v2] + A[v0, v1, vk] * B[v1, v2, vk]
"""


def mod_of(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


def _size(mod):
    func = mod["main"]
    return func.buffer_map[func.params[1]].shape[1]


def _run(mod, n, flat_c=False):
    """C of ``mod`` run on fixed data with ``n`` = 3, by the interpreter and
    by the LLVM build, which must agree bit for bit."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 4, 8)).astype("float32")
    b = rng.standard_normal((4, n, 8)).astype("float32")
    c = np.zeros((4 * n,) if flat_c else (1, 4, n), "float32")
    c2 = c.copy()
    interp_run(mod["main"], a, b, c)
    tirfun.build(mod, target="llvm")(a, b, c2)
    assert c.tobytes() == c2.tobytes()
    return c.reshape(1, 4, n)


@pytest.mark.parametrize("assume_injective", [True, False])
def test_a_symbolic_output_fused_to_one_dimension(assume_injective):
    mod = mod_of(MATVEC)
    n = _size(mod)
    out = R.transform_layout("C", ("write", 0), lambda x, y, z: x * 4 * n + y * n + z,
                             assume_injective_transform=assume_injective)(mod)
    verify(out)
    func = out["main"]
    assert [d.script() for d in func.buffer_map[func.params[2]].shape] == ["n * T.int64(4)"]
    # v0 takes one value, 0: the fused index drops it, as TVM's simplifier does
    block = func.body.block.body.body.body.body.body.block
    assert block.writes[0].script() == "C[v1 * n + v2]"
    assert_structural_equal(from_source(func.script()), func)
    assert _run(mod, 3).tobytes() == _run(out, 3, flat_c=True).tobytes()


def test_a_symbolic_map_that_is_not_a_fusion_is_refused():
    mod = mod_of(MATVEC)
    n = _size(mod)
    # z's extent is n, but y's weight is n + 1: the image has holes
    with pytest.raises(R.TransformationIntroducesPaddingError):
        R.transform_layout("C", ("write", 0), lambda x, y, z: y * (n + 1) + z)(mod)
    with pytest.raises(R.NotBijectiveAffineIndexMapError):
        R.transform_block_layout("C", lambda x, y, z, k: (y * (n + 1) + z, k))(mod)
    with pytest.raises(R.InvalidArgumentError, match="uses m, which is neither one of its variables nor a size"):
        from tirfun.nodes import Var

        R.transform_block_layout("C", lambda x, y, z, k: (y * Var("m", "int64") + z, k))(mod)


def test_a_symbolic_block_domain_fused_by_a_size():
    mod = mod_of(MATVEC)
    n = _size(mod)
    sch = Schedule(mod)
    sch.transform_block_layout("C", lambda x, y, z, k: (x * 4 * n + y * n + z, k))
    expected = from_source("""
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (T.int64(1), T.int64(4), T.int64(8)), "float32")
    B = T.match_buffer(b, (T.int64(4), n, T.int64(8)), "float32")
    C = T.match_buffer(c, (T.int64(1), T.int64(4), n), "float32")
    for ax0, ax1 in T.grid(n * T.int64(4), T.int64(8)):
        with T.block("C"):
            v0, v1 = T.axis.remap("SR", [ax0, ax1])
            with T.init():
                C[T.int64(0), v0 // n, v0 % n] = T.float32(0)
            C[T.int64(0), v0 // n, v0 % n] = C[T.int64(0), v0 // n, v0 % n] + A[T.int64(0), v0 // n, v1] * B[v0 // n, v0 % n, v1]
""")
    assert_structural_equal(sch.mod["main"], expected)
    verify(sch.mod)
    assert _run(mod, 3).tobytes() == _run(sch.mod, 3).tobytes()
    assert R.Pipeline.from_json(R.Pipeline(list(sch.trace)).to_json())(mod) == sch.mod


SPLIT_BY_N = """
@T.prim_func
def main(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"), n: T.int32):
    for i in range(16):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * 2
"""


def test_a_split_by_a_symbolic_divisor_pads_up_to_its_multiple():
    mod = mod_of(SPLIT_BY_N)
    n = mod["main"].params[2]
    with pytest.raises(R.TransformationIntroducesPaddingError, match="give a pad_value for them"):
        R.transform_layout("block", ("write", 0), lambda i: (i // n, i % n))(mod)
    out = R.transform_layout("block", ("write", 0), lambda i: (i // n, i % n), pad_value=-7)(mod)
    verify(out)
    func = out["main"]
    assert [d.script() for d in func.buffer_map[func.params[1]].shape] == ["(n + 15) // n", "n"]
    assert_structural_equal(from_source(func.script()), func)
    a = np.arange(16, dtype="int32")
    for size in (3, 4, 5, 16, 17):
        rows = -(-16 // size)
        b = np.full((rows, size), 99, "int32")
        b2 = b.copy()
        interp_run(func, a, b, size)
        tirfun.build(out, target="llvm")(a, b2, size)
        assert b.tobytes() == b2.tobytes()
        flat = b.reshape(-1)
        # every element at its place, the padding holds the pad value
        assert (flat[:16] == a * 2).all() and (flat[16:] == -7).all()
