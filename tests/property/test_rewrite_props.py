"""Properties of the loop primitives on random programs and random schedules."""

import copy

from hypothesis import given, strategies as st

import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal, structural_hash
from tirfun.analysis.traversal import ancestors, walk_stmts
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.nodes import Block, IRModule
from tirfun.rewrites.index import build_index, index_of
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent
from tirfun.testing.programs import prim_funcs
from tirfun.testing.schedules import bad_rewrites, loop_schedules


def _blocks(mod: IRModule) -> dict[str, Block]:
    return {s.name_hint: s for _, s in walk_stmts(mod["main"]) if isinstance(s, Block)}


def _touched_blocks(mod: IRModule, rewrite) -> set[str]:
    """Names of the blocks a rewrite may rebuild: those on the path to what
    it targets, and a target block itself."""
    func = mod["main"]
    index = index_of(func)
    refs = []
    for a in type(rewrite).__attrs_attrs__:
        value = getattr(rewrite, a.name)
        refs.extend(value if isinstance(value, tuple) else [value])
    out = set()
    for ref in refs:
        if isinstance(ref, R.LoopRef) and ref.name in index.loops:
            path = index.loops[ref.name]
        elif isinstance(ref, R.BlockRef) and ref.name in index.blocks:
            path = index.blocks[ref.name]
            out.add(ref.name)
        else:
            continue
        out |= {n.name_hint for _, n in ancestors(func, path) if isinstance(n, Block)}
    return out


@given(prim_funcs(), st.data())
def test_random_schedules_keep_meaning_and_share_untouched_blocks(func, data):
    mod = IRModule({"main": func})
    snapshot = copy.deepcopy(mod)
    snapshot_hash = structural_hash(mod)
    pipeline = data.draw(loop_schedules(mod), label="schedule")
    touched: set[str] = set()
    step = mod
    for rewrite in pipeline:
        touched |= _touched_blocks(step, rewrite)
        step = rewrite(step)
    out = pipeline(mod)
    assert out == step
    verify(out)
    # print -> parse gives the same function, which prints the same
    again = from_source(out["main"].script())
    assert_structural_equal(again, out["main"])
    assert again.script() == out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    # the input is untouched, and so is every block no step reached into
    assert mod == snapshot and structural_hash(mod) == snapshot_hash
    before, after = _blocks(mod), _blocks(out)
    for name, block in before.items():
        if name not in touched:
            assert after[name] is block, name
    # the index derived step by step is the index of the result
    assert index_of(out["main"]) == build_index(out["main"])


@given(prim_funcs(), st.data())
def test_wrong_arguments_raise_schedule_errors_naming_the_primitive(func, data):
    mod = IRModule({"main": func})
    rewrite = data.draw(bad_rewrites(mod), label="rewrite")
    try:
        rewrite(mod)
    except ScheduleError as err:
        assert isinstance(err, R.RewriteError)
        assert str(err).startswith(f"{rewrite.primitive}: ")
        assert rewrite.violations(mod), "violations() must report what __call__ raised"
    else:
        raise AssertionError(f"{rewrite!r} applied although an argument is wrong")


@given(prim_funcs(max_blocks=2), st.data())
def test_trace_replays_from_python_and_from_json(func, data):
    mod = IRModule({"main": func})
    pipeline = data.draw(loop_schedules(mod), label="schedule")
    sch = Schedule(mod)
    for rewrite in pipeline:
        sch.apply(rewrite)
    trace = sch.trace
    assert trace(mod) == sch.mod
    from_json = R.Pipeline.from_json(trace.to_json())
    assert from_json == trace and from_json(mod) == sch.mod
    namespace: dict = {}
    exec(trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod
