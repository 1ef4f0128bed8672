"""How deep a program tirfun takes: TVMScript as deep as TVM's parser
reads (a sum of 250 terms) goes through every step, and deeper programs,
made by te.compute or by inlining, end in tirfun's own errors."""

import random

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun import te
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.nesting import MAX_DEPTH, nesting_depth
from tirfun.analysis.traversal import iter_children
from tirfun.analysis.verify import verify
from tirfun.errors import BuildError, InterpError, NodeError, ParseError
from tirfun.interp import run
from tirfun.nodes import Add, Buffer, FloatImm, IRModule, Max, Mul, Var
from tirfun.script import from_source


def _sum(n: int) -> str:
    return " + ".join(f"A[{i}]" for i in range(n))


def _two_stages(producer_terms: int, consumer_terms: int) -> str:
    # the consumer reads B at the bottom of its sum: inlining B puts the
    # producer's sum under the consumer's, their depths added
    return f'''
@T.prim_func
def main(A: T.Buffer((256,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = {_sum(producer_terms)}
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] + {_sum(consumer_terms)}
'''


def test_a_sum_as_long_as_tvms_parser_reads_goes_through_every_step():
    # TVM's TVMScript parser reads a sum of about 255 terms and no longer one
    mod = IRModule({"main": from_source(_two_stages(250, 1))})
    again = from_source(mod["main"].script())
    assert again == mod["main"] and hash(again) == hash(mod["main"])
    verify(mod)
    a = np.random.default_rng(0).random(256, dtype=np.float32)
    interpreted = np.zeros(4, "float32")
    run(mod["main"], a, interpreted)
    compiled = np.zeros(4, "float32")
    tirfun.build(mod)["main"](a, compiled)
    assert compiled.tobytes() == interpreted.tobytes()
    inlined = R.compute_inline("B")(mod)
    out = np.zeros(4, "float32")
    run(inlined["main"], a, out)
    assert out.tobytes() == interpreted.tobytes()


def test_a_sum_past_the_limit_is_a_parse_error():
    with pytest.raises(ParseError, match=f"nested too deeply \\(more than {MAX_DEPTH} levels\\)"):
        from_source(_two_stages(MAX_DEPTH + 10, 1))


def test_te_takes_a_long_sum_and_refuses_one_past_the_limit():
    A = te.placeholder((400,), "float32", name="A")

    def summed(n):
        def body(i):
            e = A[0]
            for k in range(1, n):
                e = e + A[k]
            return e
        return te.compute((1,), body, name="S")

    func = te.create_prim_func([A, summed(240)])
    assert_structural_equal(from_source(func.script()), func)
    a = np.arange(400, dtype="float32")
    out = np.zeros(1, "float32")
    tirfun.build(func)["main"](a, out)
    assert out[0] == np.float32(sum(range(240)))
    with pytest.raises(NodeError, match="the expression of S nests more than"):
        te.create_prim_func([A, summed(400)])


_THREE_STAGES = f'''
@T.prim_func
def main(A: T.Buffer((256,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,), "float32")
    D = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = {_sum(250)}
    for i in range(4):
        with T.block("D"):
            vi = T.axis.spatial(4, i)
            D[vi] = B[vi] + {_sum(250)}
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = D[vi] + {_sum(250)}
'''


def test_a_program_inlined_past_the_limit_ends_in_tirfuns_errors():
    # inlining long sums, each under the next, nests deeper than Python's
    # recursion limit lets the passes walk, even with the room the entry
    # points make: each step says so
    mod = IRModule({"main": from_source(_THREE_STAGES)})
    mod = R.compute_inline("D")(R.compute_inline("B")(mod))
    a = np.zeros(256, "float32")
    with pytest.raises(InterpError, match="nests too deeply"):
        run(mod["main"], a, np.zeros(4, "float32"))
    with pytest.raises(BuildError, match="nests too deeply"):
        tirfun.lower(mod)
    with pytest.raises(BuildError, match="nests too deeply"):
        tirfun.build(mod)
    with pytest.raises(ParseError, match="nested too deeply"):
        from_source(mod["main"].script())


def _deep_in_the_stack(frames: int, fn):
    """``fn()`` called from ``frames`` Python frames down, as from a
    compiler that embeds tirfun."""
    return fn() if frames == 0 else _deep_in_the_stack(frames - 1, fn)


def test_a_caller_deep_in_its_own_stack_gets_the_same_room():
    import sys

    mod = IRModule({"main": from_source(_two_stages(250, 1))})
    a = np.random.default_rng(1).random(256, dtype=np.float32)
    expected = np.zeros(4, "float32")
    run(mod["main"], a, expected)
    # what is left of the recursion limit is less than a program of 250
    # levels needs in lowering (three frames a level)
    frames = sys.getrecursionlimit() - 500
    limit = sys.getrecursionlimit()
    got = np.zeros(4, "float32")
    _deep_in_the_stack(frames, lambda: tirfun.build(mod)["main"](a, got))
    assert got.tobytes() == expected.tobytes()
    lowered = _deep_in_the_stack(frames, lambda: tirfun.lower(mod))
    assert lowered == tirfun.lower(mod)
    placed = _deep_in_the_stack(frames, lambda: R.compute_inline("B")(mod))
    assert placed == R.compute_inline("B")(mod)
    out = np.zeros(4, "float32")
    _deep_in_the_stack(frames, lambda: run(placed["main"], a, out))
    assert out.tobytes() == expected.tobytes()
    assert sys.getrecursionlimit() == limit  # set back


def _depth(node) -> int:
    children = [c for c in iter_children(node) if not isinstance(c, Buffer)]
    return 1 + max((_depth(c) for c in children), default=0)


def test_nesting_depth_is_the_depth_of_the_tree():
    rnd = random.Random(5)
    x, y = Var("x", "float32"), Var("y", "float32")
    small = [x, y, FloatImm("float32", 1.0)]
    for _ in range(200):
        e = rnd.choice(small)
        for _ in range(rnd.randint(0, 30)):
            other = rnd.choice(small)  # a leaf or a small tree made before
            op = rnd.choice([Add, Mul, Max])
            e = op(e, other) if rnd.random() < 0.5 else op(other, e)
        if _depth(e) <= 6:
            small.append(e)
        assert nesting_depth(e) == _depth(e)
        stop = rnd.randint(1, 10)
        assert (nesting_depth(e, stop) > stop) == (_depth(e) > stop)
