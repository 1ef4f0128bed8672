"""Pipeline, >>, apply, JSON and Python forms of a trace."""

import json

import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.nodes import IRModule, IntImm, Var
from tirfun.script import from_source

SOURCE = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 8), "float32")
    B = T.match_buffer(b, (n, 8), "float32")
    for i, j in T.grid(n, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


@pytest.fixture
def mod():
    return IRModule({"main": from_source(SOURCE)})


def pipeline():
    n = Var("n", "int32")
    return (R.split("i", [None, n // 4 + 1])
            >> R.split("j", [2, None], preserve_unit_iters=False)
            >> R.reorder("j_0", "i_1")
            >> R.annotate("B", "note", {"list": [1, 2.5, "x", True], "expr": IntImm("int32", 7)})
            >> R.bind("i_0", "blockIdx.x"))


def test_rshift_and_apply_compose(mod):
    p = pipeline()
    assert isinstance(p, R.Pipeline) and len(p) == 5
    assert R.apply(mod, *p) == p(mod)
    assert (p[:2] >> p[2:]) == p
    step = mod
    for r in p:
        step = r(step)
    assert step == p(mod)


def test_json_round_trip_is_exact(mod):
    p = pipeline()
    text = p.to_json()
    again = R.Pipeline.from_json(text)
    assert again == p
    assert again.to_json() == text
    assert again(mod) == p(mod)
    assert json.loads(text)["format"] == "tirfun.trace"


def test_as_python_runs_through_the_schedule_api(mod):
    p = pipeline()
    code = p.as_python()
    assert code.startswith("from tirfun import tir\nfrom tirfun.rewrites import BlockRef, LoopRef\n")
    assert 'sch.bind(LoopRef("i_0"), thread_axis="blockIdx.x")' in code
    namespace: dict = {}
    exec(code, namespace)
    sch = tirfun.Schedule(mod)
    namespace["apply_trace"](sch)
    assert sch.mod == p(mod)


def test_as_python_imports_only_what_it_uses():
    assert R.Pipeline([R.unroll("i")]).as_python() == (
        'from tirfun.rewrites import LoopRef\n\n\ndef apply_trace(sch):\n    sch.unroll(LoopRef("i"))\n')


def test_violations_of_a_pipeline_are_those_of_the_first_failing_step(mod):
    p = R.split("i", [None, 2]) >> R.fuse("i_1", "i_0")
    [err] = p.violations(mod)
    assert isinstance(err, R.OuterNotInnerParentError)
    assert pipeline().violations(mod) == []


@pytest.mark.parametrize("text, message", [
    ("not json", "not JSON text"),
    ('{"format": "other"}', "not a tirfun trace"),
    ('{"format": "tirfun.trace", "version": 99}', "trace version 99"),
    ('{"format": "tirfun.trace", "version": 1, "rewrites": [{"primitive": "nope"}]}',
     "unknown primitive 'nope'"),
    ('{"format": "tirfun.trace", "version": 1, "rewrites": [{"primitive": "unroll", "args": {"x": 1}}]}',
     "unroll has no argument"),
])
def test_from_json_rejects_what_it_did_not_write(text, message):
    with pytest.raises(tirfun.ScheduleError, match=message):
        R.Pipeline.from_json(text)


def test_a_pipeline_holds_only_rewrites():
    with pytest.raises(tirfun.ScheduleError, match="a pipeline holds rewrites"):
        R.Pipeline([R.unroll("i"), 3])


def test_empty_pipeline_is_the_identity(mod):
    assert R.Pipeline()(mod) is mod
    assert "    pass" in R.Pipeline().as_python()
