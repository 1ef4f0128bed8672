"""Properties of cache_index on programs whose loads index through
arithmetic and gathers (:mod:`tirfun.testing.index_programs`), after random
loop schedules, and on the random multi-block programs of
:mod:`tirfun.testing.programs`: the interpreter gives the same results
before and after, bit for bit; compiled code agrees with the interpreter;
the trace replays from JSON and from Python; an application that does not
hold raises a ScheduleError and nothing else.
"""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st

import tirfun.rewrites as R
from tirfun import IRModule
from tirfun.analysis.traversal import walk_stmts
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.nodes import For, ForKind
from tirfun.schedule import Schedule
from tirfun.testing._choices import RandomChooser
from tirfun.testing.draw_cache import SCOPES, draw_cache_index
from tirfun.testing.equivalence import assert_built_as_interpreted, assert_equivalent
from tirfun.testing.index_programs import index_programs, random_index_program
from tirfun.testing.programs import prim_funcs, random_prim_func
from tirfun.testing.schedules import PRIMITIVES, loop_schedules

_SHARE = settings().max_examples
#: CPU schedules: a thread-bound loop gives the program the GPU's meaning
_CPU_PRIMITIVES = tuple(p for p in PRIMITIVES if p != "bind")


def _threaded(func) -> bool:
    return any(isinstance(s, For) and s.kind is ForKind.THREAD_BINDING for _, s in walk_stmts(func))


def _replays(mod: IRModule, pipeline: R.Pipeline, out: IRModule) -> None:
    assert R.Pipeline.from_json(pipeline.to_json())(mod) == out
    sch = Schedule(mod)
    for rewrite in pipeline:
        sch.apply(rewrite)
    namespace: dict = {}
    exec(sch.trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == out


@st.composite
def scheduled_index_programs(draw):
    """An index program after a random loop schedule (splits and fuses make
    bindings over several loops, with predicates)."""
    func = draw(index_programs(), label="program")
    mod = IRModule({"main": func})
    schedule = draw(st.none() | loop_schedules(mod, max_steps=2, primitives=_CPU_PRIMITIVES), label="schedule")
    return mod, (schedule or R.Pipeline([]))


@settings(max_examples=max(10, _SHARE // 3))
@given(scheduled_index_programs(), st.sampled_from(SCOPES), st.sampled_from([0, 0, 1, 2, 3, 4]),
       st.integers(0, 2**16))
def test_cache_index_keeps_meaning_compiles_exactly_and_replays(case, scope, thresh, seed):
    mod, schedule = case
    pipeline = schedule >> R.cache_index("C", scope, thresh)
    out = pipeline(mod)
    scheduled = schedule(mod)
    cached = R.cache_index("C", scope, thresh).run(scheduled).result
    event(f"index buffers: {min(len(cached), 3)}{'+' if len(cached) >= 3 else ''}")
    event(f"after loop primitives: {bool(len(schedule))}")
    verify(out)
    assert_equivalent(mod["main"], out["main"], seed=seed)
    assert_built_as_interpreted(out, seed=seed)
    _replays(mod, pipeline, out)


@settings(max_examples=max(10, _SHARE // 3))
@given(prim_funcs(max_blocks=3), st.binary(min_size=16, max_size=16), st.integers(0, 2**16))
def test_cache_index_on_random_programs_applies_or_refuses(func, choices, seed):
    from tirfun.testing._choices import BytesChooser

    mod = IRModule({"main": func})
    rewrite = draw_cache_index(BytesChooser(choices), mod)
    if rewrite is None:
        return
    errors = rewrite.violations(mod)
    if errors:
        try:
            rewrite(mod)
        except ScheduleError as err:
            assert isinstance(err, R.RewriteError) and type(err) is type(errors[0])
            assert str(err).startswith("cache_index: ")
            event("refused")
            return
        raise AssertionError(f"{rewrite!r} applied although violations() reported {errors[0]}")
    out = rewrite(mod)
    event(f"changed: {out != mod}")
    verify(out)
    assert_equivalent(mod["main"], out["main"], seed=seed)
    if out != mod and not _threaded(func):
        assert_built_as_interpreted(out, seed=seed)
    _replays(mod, R.Pipeline([rewrite]), out)


_BAD_BLOCKS = ("no_such_block", R.LoopRef("i"), R.BlockRef("C", "no_such_function"), 3, None)
_BAD_SCOPES = ("nowhere", "", 7, None, "Shared")
_BAD_THRESH = (-1, -7, 1.5, True, "2", None)


@settings(max_examples=max(10, _SHARE // 3))
@given(index_programs(), st.sampled_from(["block", "scope", "thresh"]), st.data())
def test_bad_arguments_raise_a_schedule_error_and_nothing_else(func, wrong, data):
    mod = IRModule({"main": func})
    args = {"block": "C", "storage_scope": "local", "cse_thresh": 0}
    bad = {"block": _BAD_BLOCKS, "scope": _BAD_SCOPES, "thresh": _BAD_THRESH}[wrong]
    key = {"block": "block", "scope": "storage_scope", "thresh": "cse_thresh"}[wrong]
    args[key] = data.draw(st.sampled_from(bad), label=key)
    try:
        rewrite = R.cache_index(**args)
    except ScheduleError:
        return  # refused as the record is made (a block reference of the wrong type)
    try:
        out = rewrite(mod)
    except ScheduleError as err:
        assert isinstance(err, R.RewriteError)
        assert str(err).startswith("cache_index: ")
        assert [type(e) for e in rewrite.violations(mod)][:1] == [type(err)]
        event(type(err).__name__)
        return
    # the empty scope is TVM's "global"
    assert args["storage_scope"] == ""
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_index_programs_are_cached_and_drawn():
    # over seeded index programs nearly every block has index arithmetic to
    # cache, under each threshold some; and the drawer picks cache_index
    # applications that apply on random programs
    changed = {0: 0, 2: 0, 4: 0}
    for seed in range(60):
        mod = IRModule({"main": random_index_program(seed)})
        for thresh in changed:
            changed[thresh] += R.cache_index("C", "global", thresh)(mod) != mod
    assert changed[0] >= 55 and changed[2] >= 20 and changed[4] >= 5, changed
    valid = refused = 0
    for seed in range(120):
        mod = IRModule({"main": random_prim_func(seed)})
        rewrite = draw_cache_index(RandomChooser(seed), mod)
        if rewrite is not None:
            if rewrite.violations(mod):
                refused += 1
            else:
                valid += 1
    assert valid >= 60 and refused >= 1, (valid, refused)
