"""The expression helpers of the rewrites give what the generic
``transform`` gives, with the arithmetic handled directly: the same
result, unchanged subtrees shared, a subtree held twice rewritten once."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tirfun.analysis.traversal import transform, transform_plain, walk
from tirfun.nodes import Add, Buffer, BufferLoad, BufferStore, IntImm, Mul, PrimExpr, Var
from tirfun.rewrites.exprs import substitute
from tirfun.script import from_source
from tirfun.testing.block_programs import block_programs


def _reference_substitute(node, mapping):
    def pre(n):
        if isinstance(n, Var):
            return mapping.get(n, n)
        return None

    return transform(node, lambda n: n, pre)


@settings(max_examples=30)
@given(data=st.data())
def test_substitute_matches_transform_on_whole_programs(data):
    func = data.draw(block_programs(), label="program")["main"]
    variables = sorted({n for n in walk(func) if type(n) is Var and n.dtype.is_integer}, key=lambda v: v.name)
    if not variables:
        return
    chosen = data.draw(st.lists(st.sampled_from(variables), min_size=1, max_size=3, unique=True))
    # variables for variables (a bound one must stay a variable), and for
    # sums inside the blocks' bodies, where only expressions hold them
    renamed = {v: Var(v.name + "_s", v.dtype) for v in chosen}
    assert substitute(func.body, renamed) == _reference_substitute(func.body, renamed)
    scaled = {v: Add(Mul(v, IntImm(v.dtype, 2)), IntImm(v.dtype, 1)) for v in chosen}
    for store in [n for n in walk(func.body) if isinstance(n, BufferStore)]:
        assert substitute(store, scaled) == _reference_substitute(store, scaled)
    unrelated = {Var("not_there"): IntImm("int32", 0)}
    assert substitute(func.body, unrelated) is func.body


def test_substitute_enters_buffers_and_shares_a_subtree_held_twice():
    n = Var("n")
    A = Buffer("A", [n], "float32")
    i = Var("i")
    load = BufferLoad(A, [i + 1])
    store = BufferStore(A, Add(load, load), [i])
    mapping = {n: IntImm("int32", 8), i: Var("j")}
    out = substitute(store, mapping)
    assert out == _reference_substitute(store, mapping)
    assert out.buffer.shape[0] == IntImm("int32", 8)  # a symbolic shape is rewritten too
    assert out.value.a is out.value.b


def test_transform_plain_matches_transform_for_a_rewrite_of_loads():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vi, vj] * T.float32(2) + A[vj, vi], T.float32(0)) - A[vi, 7 - vj]
''')
    A = func.buffer_map[func.params[0]]
    C = Buffer("C", [8, 8], "float32")

    def pre(n):
        return None if isinstance(n, PrimExpr) or not isinstance(n, Buffer) else n

    def post(n):
        if isinstance(n, BufferLoad) and n.buffer == A:
            return BufferLoad(C, list(n.indices)[::-1])
        return n

    assert transform_plain(func.body, post, pre) == transform(func.body, post, pre)
    # nothing to rewrite: the very same tree
    assert transform_plain(func.body, lambda n: n, pre) is func.body
