"""The shortcuts rolling_buffer and the padding primitives take give what
the general paths they skip give."""

import random

from tirfun.analysis.arith import region_covers
from tirfun.analysis.arith.int_set import Interval
from tirfun.analysis.arith.region import _plain_bound
from tirfun.nodes import Add, IntImm, Mul, Range, Sub, Var
from tirfun.rewrites import rolling as RB


def _sum(rnd, vs, dtype):
    """A sum in normal form of some of ``vs``, with a constant near zero or
    near the dtype's end."""
    ks = sorted(rnd.sample(range(1, 5), rnd.randint(1, 3)), reverse=True)
    out = None
    for k, v in zip(ks, rnd.sample(vs, len(ks))):
        term = v if k == 1 else Mul(v, IntImm(dtype, k))
        out = term if out is None else Add(out, term)
    c = rnd.choice([0, 1, 2, 5, -3, 2**31 - 10, -(2**31) + 10])
    if c > 0:
        return Add(out, IntImm(dtype, c))
    return Sub(out, IntImm(dtype, -c)) if c < 0 else out


def test_plainly_covers_is_region_covers():
    rnd = random.Random(7)
    seen = 0
    for _ in range(300):
        vs = [Var(f"x{k}", "int32") for k in range(3)]
        m = _sum(rnd, vs, "int32")
        e = IntImm("int32", rnd.choice([1, 2, 3, 130]))
        window = [Range(m, e), Range(IntImm("int32", 0), IntImm("int32", 130))]
        top = rnd.choice([4, 128, 2**30, 2**31 - 1])
        dom = {v: Range(IntImm("int32", 0), IntImm("int32", top)) for v in vs if rnd.random() < 0.9}
        full = _plain_bound(window[0], {}) or Interval.from_range(window[0])
        # the window itself, in normal form or not, or a shorter read
        lo_hi = rnd.choice([(full.lo, full.hi), (m, Interval.from_range(window[0]).hi), (m, m)])
        got = [Interval(*lo_hi), Interval(IntImm("int32", 0), IntImm("int32", 129))]
        fast = RB._plainly_covers(window, got, dom)
        seen += fast
        assert not fast or region_covers([window], got, dom)
    assert seen > 50


def _simplify_indices_by_transform(e):
    """decompose_padding's index simplification through the general walk."""
    from tirfun.analysis.traversal import transform
    from tirfun.nodes import BufferLoad
    from tirfun.rewrites.padding import _simplified

    def post(n):
        if isinstance(n, BufferLoad):
            return BufferLoad(n.buffer, [_simplified(i) for i in n.indices], n.predicate)
        return n

    return _simplified(transform(e, post))


def test_simplify_indices_is_the_general_walk():
    from tirfun.nodes import Buffer, BufferLoad, Call, FloatImm, LT
    from tirfun.rewrites.padding import _simplify_indices

    vi, vj = Var("vi", "int32"), Var("vj", "int32")
    one = IntImm("int32", 1)
    A = Buffer("A", [IntImm("int32", 16), IntImm("int32", 16)], "float32")
    I = Buffer("I", [IntImm("int32", 16)], "int32")
    loads = [
        BufferLoad(A, [Sub(Add(vi, one), one), vj]),  # simplified
        BufferLoad(A, [vi, vj]),  # kept
        BufferLoad(A, [BufferLoad(I, [Add(vj, IntImm("int32", 0))]), Add(vi, vi)]),  # nested
    ]
    for load in loads:
        for e in (load, Call("float32", "tir.if_then_else", [LT(vi, IntImm("int32", 3)), load, FloatImm("float32", 0.0)]),
                  Add(Sub(Add(vi, one), one), vj)):
            fast = _simplify_indices(e)
            assert fast == _simplify_indices_by_transform(e)
            if fast == e:
                assert fast is e or not isinstance(e, BufferLoad)
