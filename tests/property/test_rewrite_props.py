"""Properties of the loop primitives on random programs and random schedules."""

import copy
import random

from hypothesis import given, strategies as st

import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal, structural_hash
from tirfun.analysis.traversal import ancestors, walk_stmts
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.interp import evaluate
from tirfun.nodes import Block, IntImm, IRModule, Var
from tirfun.analysis.arith import simplify_index
from tirfun.rewrites.exprs import floordiv, floormod
from tirfun.rewrites.index import build_index, index_of
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent
from tirfun.testing.reassociation import float_reduction_orders, reassociates
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


def _reassociates(before: IRModule, rewrite, after: IRModule) -> bool:
    """Whether one step may change the order in which a float reduction
    combines its terms: a reorder that permutes the loops driving it, or a
    merge of loops where a float reduction is."""
    if rewrite.primitive == "merge":
        return bool(float_reduction_orders(before))
    return rewrite.primitive == "reorder" and reassociates(before, after)


@given(prim_funcs(), st.data())
def test_random_schedules_keep_meaning_and_share_untouched_blocks(func, data):
    mod = IRModule({"main": func})
    snapshot = copy.deepcopy(mod)
    snapshot_hash = structural_hash(mod)
    pipeline = data.draw(loop_schedules(mod), label="schedule")
    touched: set[str] = set()
    step = mod
    reassociated = False
    for rewrite in pipeline:
        touched |= _touched_blocks(step, rewrite)
        before, step = step, rewrite(step)
        reassociated = reassociated or _reassociates(before, rewrite, step)
    out = pipeline(mod)
    assert out == step
    verify(out)
    # print -> parse gives the same function, which prints the same
    again = from_source(out["main"].script())
    assert_structural_equal(again, out["main"])
    assert again.script() == out["main"].script()
    if reassociated:
        # reorder and merge may change the order in which a float reduction
        # combines its terms (TVM's meaning allows it): the results may differ
        # in rounding, so the scheduled program runs against itself only
        assert_equivalent(out["main"], out["main"])
    else:
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


_INDEX_VARS = [Var("i_0"), Var("i_1"), Var("i_2"), Var("f")]


def _random_index(rng: random.Random, depth: int):
    """A random integer index over ``_INDEX_VARS``: sums, scalings, products,
    and ``//``, ``%`` by positive constants."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([*_INDEX_VARS, IntImm("int32", rng.randint(-5, 9))])
    kind = rng.choice("+-*/%")
    a = _random_index(rng, depth - 1)
    if kind in "/%":
        c = IntImm("int32", rng.randint(1, 9))
        return floordiv(a, c) if kind == "/" else floormod(a, c)
    if kind == "*":
        return a * rng.randint(-3, 5) if rng.random() < 0.8 else a * _random_index(rng, depth - 1)
    b = _random_index(rng, depth - 1)
    return a + b if kind == "+" else a - b


@given(st.integers(0, 2**32 - 1))
def test_simplification_keeps_the_value(seed):
    """The binding simplifier rewrites an index into one with the same value
    for every value of its variables within their ranges."""
    rng = random.Random(seed)
    expr = _random_index(rng, 4)
    ranges = {"i_0": (0, 1), "i_1": (0, 2), "i_2": (0, 3), "f": (0, 23)}
    simple = simplify_index(expr, ranges)
    for _ in range(8):
        values = {name: rng.randint(lo, hi) for name, (lo, hi) in ranges.items()}
        assert evaluate(simple, **values) == evaluate(expr, **values), (expr.script(), simple.script())


@given(st.sampled_from(["int32", "int64", "int16"]), st.one_of(st.just(0), st.integers(0, 40)),
       st.lists(st.one_of(st.integers(1, 9), st.sampled_from([1 << 12, 1 << 20, 1 << 31])), min_size=1,
                max_size=4),
       st.data())
def test_split_by_constants_binds_the_simplified_sum(dtype, extent, factors, data):
    # split works out constant factors on ints and writes the binding's
    # simplified form directly: both must be what the expressions give
    from tirfun.nodes import (
        Block, BlockRealize, Buffer, BufferRegion, BufferStore, For, IterVar, LT, PrimFunc, Range,
    )
    from tirfun.nodes.expr import binary

    factors = list(factors)
    if data.draw(st.booleans(), label="infer"):
        factors[data.draw(st.integers(0, len(factors) - 1), label="at")] = None
    i, vi = Var("i", dtype), Var("vi", dtype)
    B = Buffer("B", [max(extent, 1)], "int32")
    store = BufferStore(B, IntImm("int32", 1), [vi])
    block = Block([IterVar(Range(IntImm(dtype, 0), IntImm(dtype, max(extent, 1))), vi, "DataPar")], [],
                  [BufferRegion(B, [Range(vi, IntImm(dtype, 1))])], "B", store)
    loop = For(i, IntImm(dtype, 0), IntImm(dtype, extent), "serial", BlockRealize([i], True, block))
    b = Var("b", "handle")
    mod = IRModule({"main": PrimFunc([b], loop, None, {b: B})})
    rewrite = R.split("i", factors)
    errors = rewrite.violations(mod)
    if errors:
        known = 1
        for f in factors:
            known *= f or 1
        assert None not in factors or known > IntImm(dtype, 0).dtype.max_value(), errors
        return
    out = rewrite(mod)["main"]
    loops, node = [], out.body
    while isinstance(node, For):
        loops.append(node)
        node = node.body
    assert len(loops) == len(factors)
    value = loops[0].loop_var
    for inner in loops[1:]:
        value = value * inner.extent + inner.loop_var
    assert_structural_equal(node.iter_values[0], simplify_index(value))
    if None in factors:  # the inferred factor is the ceiling of the extent over the others
        others = 1
        for f in factors:
            others *= f or 1
        assert_structural_equal(loops[factors.index(None)].extent,
                                IntImm(loops[0].loop_var.dtype, -(-extent // others)))
    product = 1
    for inner in loops:
        if isinstance(inner.extent, IntImm):
            product *= inner.extent.value
    predicate = node.predicate
    if all(isinstance(inner.extent, IntImm) for inner in loops):
        guarded = not (isinstance(predicate, IntImm) and predicate.value == 1)
        assert guarded == (product > extent)
        if guarded:
            assert_structural_equal(predicate, binary(LT, value, IntImm(loops[0].loop_var.dtype, extent)))
