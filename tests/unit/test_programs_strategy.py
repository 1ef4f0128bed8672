"""The random program strategy itself: it builds, it is deterministic, it
covers every feature, and its programs keep the promises they make.

The promises (accesses in bounds, regions equal to the hull of the accesses,
bindings inside their domains, intermediates written before they are read)
are checked by brute force here: every loop of every program is enumerated
for a few values of the symbolic extents, so the check does not trust the
builder's own reasoning.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyrsistent import PMap, PVector

from tirfun.analysis.traversal import get_at, replace_at, transform, walk
from tirfun.errors import NodeError, TirfunError
from tirfun.nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Block, BlockRealize, Buffer, BufferLoad, BufferStore,
    FloorDiv, FloorMod, For, ForKind, IfThenElse, IntImm, IterVarType, Let, LetStmt, Max, Min,
    Mul, Node, Or, PrimFunc, SeqStmt, Sub, Var,
)
from tirfun.testing._choices import (
    BytesChooser, DrawChooser, RandomChooser, RecordingChooser, ReplayChooser,
)
from tirfun.testing.features import program_features
from tirfun.testing.mutations import KINDS, mutants, mutation_sites, mutations
from tirfun.testing.programs import (
    DEFAULT_DTYPES, ProgramOptions, build_prim_func, prim_funcs, random_prim_func,
)
from tirfun.testing.renaming import bound_names, random_renaming, rename_bound

SEEDS = range(400)
SYMBOLIC_VALUES = (1, 5)


@pytest.fixture(scope="module")
def programs():
    return [random_prim_func(seed) for seed in SEEDS]


# ---------------------------------------------------------------------------
# an independent evaluator for index arithmetic and the brute-force checker

_INT_OPS = {
    Add: lambda a, b: a + b, Sub: lambda a, b: a - b, Mul: lambda a, b: a * b,
    FloorDiv: lambda a, b: a // b, FloorMod: lambda a, b: a % b, Min: min, Max: max,
    LT: lambda a, b: a < b, LE: lambda a, b: a <= b, GT: lambda a, b: a > b,
    GE: lambda a, b: a >= b, EQ: lambda a, b: a == b, NE: lambda a, b: a != b,
    And: lambda a, b: a and b, Or: lambda a, b: a or b,
}


def ev(e, env):
    """Evaluate an index expression; a KeyError means a variable out of scope."""
    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    return _INT_OPS[type(e)](ev(e.a, env), ev(e.b, env))


def product(ranges):
    out = [()]
    for r in ranges:
        out = [p + (v,) for p in out for v in r]
    return out


class Checker:
    """Runs the index part of a program: every loop, binding, predicate and
    access, recording what each block instance touches."""

    def __init__(self, func: PrimFunc, symbols: dict[str, int]):
        self.func = func
        self.env = dict(symbols)
        self.allocated = {b.name for b in func.body.block.alloc_buffers}
        self.written: dict[str, set] = collections.defaultdict(set)
        self.loaded_by: dict[str, set] = collections.defaultdict(set)
        self.writers: dict[str, set] = collections.defaultdict(set)

    def shape(self, buffer):
        return [ev(d, self.env) for d in buffer.shape]

    def run(self):
        root = self.func.body.block
        for stmt in (root.body.seq if isinstance(root.body, SeqStmt) else [root.body]):
            self.stmt_outside(stmt, dict(self.env))
        for name in self.allocated:
            readers = self.loaded_by[name] - self.writers[name]
            assert readers, f"intermediate {name} is never read by another block"

    def stmt_outside(self, stmt, env):
        if isinstance(stmt, For):
            lo, extent = ev(stmt.min, env), ev(stmt.extent, env)
            for value in range(lo, lo + extent):
                self.stmt_outside(stmt.body, {**env, stmt.loop_var.name: value})
        elif isinstance(stmt, IfThenElse):  # a condition around a block
            assert stmt.else_case is None
            if ev(stmt.condition, env):
                self.stmt_outside(stmt.then_case, env)
        else:
            assert isinstance(stmt, BlockRealize), type(stmt)
            self.instance(stmt, env)

    def instance(self, realize: BlockRealize, env):
        block = realize.block
        if not ev(realize.predicate, env):
            return
        benv = dict(self.env)  # only parameters and iteration variables are visible
        first_reduce = True
        for iv, value in zip(block.iter_vars, realize.iter_values):
            assert value.dtype == iv.var.dtype, f"binding of {iv.var.name} has dtype {value.dtype}"
            v = ev(value, env)
            lo, extent = ev(iv.dom.min, self.env), ev(iv.dom.extent, self.env)
            assert lo <= v < lo + extent, \
                f"{block.name_hint}: {iv.var.name} = {v} outside [{lo}, {lo + extent})"
            benv[iv.var.name] = v
            if iv.iter_type is IterVarType.CommReduce and v != lo:
                first_reduce = False
        touched = collections.defaultdict(list)
        if block.init is not None and first_reduce:
            self.body(block.init, benv, touched, block.name_hint, is_init=True)
        self.body(block.body, benv, touched, block.name_hint)
        self.compare_regions(block, benv, touched)

    def body(self, stmt, env, touched, block_name, is_init=False):
        if isinstance(stmt, SeqStmt):
            for s in stmt.seq:
                self.body(s, env, touched, block_name, is_init)
        elif isinstance(stmt, For):
            for value in range(ev(stmt.min, env), ev(stmt.min, env) + ev(stmt.extent, env)):
                self.body(stmt.body, {**env, stmt.loop_var.name: value}, touched, block_name, is_init)
        elif isinstance(stmt, LetStmt):
            self.loads(stmt.value, env, touched, block_name)
            self.body(stmt.body, env, touched, block_name, is_init)
        elif isinstance(stmt, IfThenElse):  # both branches: regions are static
            self.loads(stmt.condition, env, touched, block_name)
            self.body(stmt.then_case, env, touched, block_name, is_init)
            if stmt.else_case is not None:
                self.body(stmt.else_case, env, touched, block_name, is_init)
        else:
            assert isinstance(stmt, BufferStore), type(stmt)
            self.loads(stmt.value, env, touched, block_name)
            point = self.point(stmt.buffer, stmt.indices, env)
            self.written[stmt.buffer.name].add(point)
            self.writers[stmt.buffer.name].add(block_name)
            if not is_init:
                touched[("w", stmt.buffer.name)].append(point)

    def loads(self, expr, env, touched, block_name):
        for node in walk(expr):
            if isinstance(node, BufferLoad):
                point = self.point(node.buffer, node.indices, env)
                name = node.buffer.name
                if name in self.allocated:
                    assert point in self.written[name], \
                        f"{block_name} reads {name}{point} before it is written"
                self.loaded_by[name].add(block_name)
                touched[("r", name)].append(point)

    def point(self, buffer, indices, env):
        point = tuple(ev(i, env) for i in indices)
        shape = self.shape(buffer)
        assert all(0 <= p < s for p, s in zip(point, shape)), f"{buffer.name}{point} outside {shape}"
        return point

    def compare_regions(self, block, env, touched):
        declared = {("r", r.buffer.name): r for r in block.reads}
        declared.update({("w", r.buffer.name): r for r in block.writes})
        assert set(declared) == set(touched), (block.name_hint, sorted(declared), sorted(touched))
        for key, points in touched.items():
            region = declared[key]
            for dim, rng in enumerate(region.region):
                lo = ev(rng.min, env)
                hi = lo + ev(rng.extent, env)
                seen = [p[dim] for p in points]
                assert (lo, hi) == (min(seen), max(seen) + 1), \
                    f"{block.name_hint}: region of {key} dim {dim} is [{lo}, {hi}), " \
                    f"accessed {sorted(set(seen))}"


def check_program(func: PrimFunc) -> None:
    symbols = [p for p in func.params if p not in func.buffer_map]
    for value in SYMBOLIC_VALUES if symbols else (None,):
        Checker(func, {s.name: value for s in symbols}).run()


def check_names(func: PrimFunc) -> None:
    names = [p.name for p in func.params] + [b.name for b in func.buffer_map.values()]
    blocks = []
    for node in walk(func.body):
        if isinstance(node, For):
            names.append(node.loop_var.name)
        elif isinstance(node, (LetStmt, Let)):
            names.append(node.var.name)
        elif isinstance(node, Block):
            blocks.append(node.name_hint)
            names += [iv.var.name for iv in node.iter_vars] + [b.name for b in node.alloc_buffers]
    twice = sorted(n for n, c in collections.Counter(names).items() if c > 1)
    assert not twice, twice
    assert len(blocks) == len(set(blocks))


def check_loop_kinds(func: PrimFunc) -> None:
    """Parallel, vectorized and thread-bound loops iterate over spatial axes
    only; vectorized and unrolled loops have constant extents; vectorized
    loops are innermost; thread-bound loops open their nest; no parallel
    loop nests in another."""
    root = func.body.block.body
    for nest in (root.seq if isinstance(root, SeqStmt) else [root]):
        chain, stmt = [], nest
        while isinstance(stmt, For):
            chain.append(stmt)
            stmt = stmt.body
        if isinstance(stmt, IfThenElse):  # a condition around the block
            stmt = stmt.then_case
        realize = stmt
        assert isinstance(realize, BlockRealize)
        kinds = [loop.kind for loop in chain]
        assert kinds.count(ForKind.PARALLEL) <= 1
        seen_other = False
        for loop in chain:
            if loop.kind is ForKind.THREAD_BINDING:
                assert not seen_other, "a thread-bound loop below an ordinary loop"
            else:
                seen_other = True
            if loop.kind in (ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.THREAD_BINDING):
                for iv, value in zip(realize.block.iter_vars, realize.iter_values):
                    if any(isinstance(n, Var) and n == loop.loop_var for n in walk(value)):
                        assert iv.iter_type is IterVarType.DataPar, f"{loop.kind} loop binds a reduction"
            if loop.kind in (ForKind.VECTORIZED, ForKind.UNROLLED):
                assert isinstance(loop.extent, IntImm)
            if loop.kind is ForKind.VECTORIZED:
                assert loop is chain[-1]
                assert not any(isinstance(n, For) for n in walk(realize.block.body))


# ---------------------------------------------------------------------------
# it builds, and keeps its promises


def test_programs_are_primfuncs_with_a_root_block(programs):
    for func in programs:
        assert isinstance(func, PrimFunc)
        assert isinstance(func.body, BlockRealize) and func.body.block.name_hint == "root"
        assert not func.body.block.iter_vars and not func.body.block.reads


def test_every_access_is_in_bounds_and_every_region_exact(programs):
    for func in programs[:150]:
        check_program(func)


def test_names_are_unique(programs):
    for func in programs:
        check_names(func)


def test_loop_kinds_are_sensible(programs):
    for func in programs:
        check_loop_kinds(func)


def test_checker_catches_an_out_of_bounds_access():
    func = next(f for f in (random_prim_func(s, allow_symbolic=False, max_blocks=1) for s in SEEDS)
                if any(isinstance(n, BufferLoad) and n.indices for n in walk(f.body)))
    load = next(n for n in walk(func.body) if isinstance(n, BufferLoad) and n.indices)
    shifted = BufferLoad(load.buffer, [load.indices[0] + 1000] + list(load.indices[1:]))
    broken = transform(func, lambda n: shifted if n == load else n)
    with pytest.raises(AssertionError):
        check_program(broken)


# ---------------------------------------------------------------------------
# determinism


def test_same_seed_same_program():
    for seed in range(40):
        assert random_prim_func(seed) == random_prim_func(seed)
    assert len({random_prim_func(seed) for seed in range(40)}) > 30


def test_replaying_the_choices_rebuilds_the_program():
    for seed in range(40):
        recorder = RecordingChooser(RandomChooser(seed))
        first = build_prim_func(recorder, ProgramOptions())
        replay = ReplayChooser(recorder.record)
        assert build_prim_func(replay, ProgramOptions()) == first
        assert replay.exhausted


@st.composite
def _recorded(draw):
    recorder = RecordingChooser(DrawChooser(draw))
    return build_prim_func(recorder, ProgramOptions()), recorder.record


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(_recorded())
def test_same_draws_same_program(recorded):
    func, record = recorded
    assert build_prim_func(ReplayChooser(record), ProgramOptions()) == func


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(min_size=0, max_size=600))
def test_same_bytes_same_program_even_when_they_run_out(data):
    # a stream that runs out gives the simplest choice from then on
    func = build_prim_func(BytesChooser(data), ProgramOptions())
    assert build_prim_func(BytesChooser(data), ProgramOptions()) == func
    check_program(func)


def test_the_empty_stream_gives_the_simplest_program():
    func = build_prim_func(BytesChooser(b""), ProgramOptions())
    assert program_features(func) >= {"blocks:1"}
    assert len([n for n in walk(func.body) if isinstance(n, Block)]) == 2  # root and one block
    check_program(func)


def _canonical(value):
    """A JSON-able dump that does not depend on hash order."""
    if isinstance(value, Node):
        return [type(value).__name__] + [_canonical(getattr(value, a.name))
                                         for a in attrs.fields(type(value))]
    if isinstance(value, (PVector, list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, PMap):
        return sorted([json.dumps(_canonical(k)), _canonical(v)] for k, v in value.items())
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value if not isinstance(value, str) else str(value)
    return repr(value)


def test_programs_do_not_depend_on_hash_seeds():
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]);"
            "from test_programs_strategy import _canonical;"
            "from tirfun.testing.programs import random_prim_func;"
            "print(json.dumps([_canonical(random_prim_func(s)) for s in range(8)]))")
    here = os.path.dirname(__file__)
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", code, here], env=env, capture_output=True,
                              text=True, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == [_canonical(random_prim_func(s)) for s in range(8)]


# ---------------------------------------------------------------------------
# coverage

REQUIRED = {
    "blocks:1", "blocks:2", "blocks:3+", "chain", "chain:alloc", "reduction", "init", "where",
    "alloc_buffer", "symbolic", "index:int64", "loop_min", "loop_annotations",
    "block_annotations", "inner_loop", "range_region", "zero_dim", "let_stmt", "if_stmt",
    "seq_stmt", "binding:split", "binding:fuse", "binding:const", "private", "if_only",
    "shape_expr", "symbol_in_body", "bool_compare", "binding:fuse_mixed", "noalias",
    *(f"loop:{k.value}" for k in ForKind),
    "thread:blockIdx.x", "thread:threadIdx.x", "thread:blockIdx.y", "thread:threadIdx.y",
    *(f"dtype:{d}" for d in DEFAULT_DTYPES),
    *(f"expr:{n}" for n in ("Var", "IntImm", "FloatImm", "Add", "Sub", "Mul", "Div", "Mod",
                            "FloorDiv", "FloorMod", "Min", "Max", "EQ", "NE", "LT", "LE", "GT",
                            "GE", "And", "Or", "Not", "Select", "Cast", "BufferLoad", "Call",
                            "Let")),
    *(f"call:{n}" for n in (
        "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
        "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "atan2", "asinh", "acosh",
        "atanh", "erf", "sigmoid", "fabs", "floor", "ceil", "round", "nearbyint", "trunc", "pow",
        "fmod", "hypot", "copysign", "nextafter", "ldexp", "isnan", "isinf", "isfinite",
        "popcount", "clz", "if_then_else", "bitwise_and", "bitwise_or", "bitwise_xor",
        "bitwise_not", "shift_right", "shift_left")),
}
# features common enough that each must show up in a good share of programs
COMMON = {"blocks:2": 0.15, "blocks:3+": 0.15, "chain": 0.25, "reduction": 0.2, "where": 0.15,
          "alloc_buffer": 0.15, "symbolic": 0.1, "index:int64": 0.2, "loop:parallel": 0.1,
          "loop:vectorized": 0.05, "loop:unrolled": 0.1, "loop:thread_binding": 0.1,
          "range_region": 0.05, "expr:Call": 0.3, "expr:Cast": 0.3, "noalias": 0.5,
          "binding:fuse_mixed": 0.02,
          **{f"dtype:{d}": 0.15 for d in DEFAULT_DTYPES if d != "bool"}}


def test_every_feature_shows_up_over_fixed_seeds(programs):
    counts = collections.Counter()
    for func in programs + [random_prim_func(s) for s in range(400, 1000)]:
        counts.update(program_features(func))
    missing = sorted(REQUIRED - set(counts))
    assert not missing, f"never generated: {missing}"
    for feature, share in COMMON.items():
        assert counts[feature] >= share * 1000, (feature, counts[feature])


def test_hypothesis_draws_cover_the_main_features():
    counts = collections.Counter()

    @settings(max_examples=300, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(prim_funcs())
    def collect(func):
        counts.update(program_features(func))

    collect()
    main = {f for f in REQUIRED if not f.startswith(("call:", "thread:"))} - {
        "binding:const", "zero_dim", "loop_annotations", "block_annotations", "private",
        "loop_min", "expr:Mod", "expr:Not", "expr:Or", "expr:Let"}
    missing = sorted(main - set(counts))
    assert not missing, f"hypothesis never drew: {missing}"


# ---------------------------------------------------------------------------
# options restrict what is generated


@pytest.mark.parametrize("options, absent", [
    ({"max_blocks": 1}, {"blocks:2", "blocks:3+", "chain", "alloc_buffer"}),
    ({"allow_symbolic": False}, {"symbolic"}),
    ({"allow_where": False}, {"where"}),
    ({"allow_alloc": False}, {"alloc_buffer", "chain:alloc"}),
    ({"allow_reduction": False}, {"reduction", "init"}),
    ({"loop_kinds": ["serial"]}, {"loop:parallel", "loop:vectorized", "loop:unrolled",
                                  "loop:thread_binding"}),
    ({"index_dtypes": ["int32"]}, {"index:int64"}),
    ({"allow_let": False}, {"let_stmt", "expr:Let"}),
    ({"allow_if": False}, {"if_stmt"}),
    ({"allow_inner_loops": False}, {"inner_loop"}),
    ({"allow_annotations": False}, {"loop_annotations", "block_annotations"}),
    ({"allow_zero_dim": False}, {"zero_dim"}),
    ({"allow_bitwise": False}, {"call:bitwise_and", "call:popcount", "call:shift_right"}),
    ({"allow_partial_writes": False}, {"if_only"}),
    ({"allow_stencils": False}, {"shape_expr"}),
    ({}, {"literal_pair", "special_value", "buffer_fields", "scope:shared", "scope:local"}),
])
def test_options_switch_features_off(options, absent):
    seen = set()
    for seed in range(60):
        func = random_prim_func(seed, **options)
        seen |= program_features(func)
        if seed < 10:
            check_program(func)
    assert not (seen & absent), seen & absent
    assert "blocks:1" in seen


@pytest.mark.parametrize("options, present", [
    ({"literal_pairs": True}, {"literal_pair"}),
    ({"special_values": True}, {"special_value"}),
    ({"buffer_fields": True}, {"buffer_fields"}),
    ({"alloc_scopes": ("shared", "local")}, {"scope:shared", "scope:local"}),
])
def test_options_switch_rare_features_on(options, present):
    seen = set()
    for seed in range(150):
        func = random_prim_func(seed, **options)
        seen |= program_features(func)
        if seed < 10:
            check_program(func)
    assert present <= seen, present - seen


def test_dtype_option_fixes_element_dtypes():
    for seed in range(60):
        func = random_prim_func(seed, dtypes=["float32"])
        dtypes = {f for f in program_features(func) if f.startswith("dtype:")}
        assert dtypes == {"dtype:float32"}


def test_int64_index_option():
    for seed in range(30):
        func = random_prim_func(seed, index_dtypes=["int64"])
        assert all(n.loop_var.dtype == "int64" for n in walk(func.body) if isinstance(n, For))


@pytest.mark.parametrize("options", [
    {"max_blocks": 0}, {"max_extent": 1}, {"dtypes": []}, {"dtypes": ["bool"]},
    {"dtypes": ["float32x4"]}, {"index_dtypes": ["int8"]}, {"loop_kinds": ["sideways"]},
    {"max_points": 1}, {"no_such_option": 1}, {"alloc_scopes": []},
])
def test_bad_options_raise_a_tirfun_error(options):
    with pytest.raises(TirfunError):
        random_prim_func(0, **options)


# ---------------------------------------------------------------------------
# renaming


def test_random_renaming_is_a_deterministic_permutation(programs):
    for func in programs[:50]:
        names = bound_names(func)
        mapping = random_renaming(func, 3)
        assert mapping == random_renaming(func, 3)
        assert sorted(mapping) == sorted(names)
        assert len(set(mapping.values())) == len(names)


def test_rename_bound_renames_every_bound_name_and_only_those(programs):
    for seed, func in enumerate(programs[:80]):
        mapping = random_renaming(func, seed)
        renamed = rename_bound(func, seed)
        assert bound_names(renamed) == tuple(sorted(mapping.values()))
        blocks = [n.name_hint for n in walk(func.body) if isinstance(n, Block)]
        assert [n.name_hint for n in walk(renamed.body) if isinstance(n, Block)] == blocks
        check_names(renamed)
        if any(k != v for k, v in mapping.items()):
            assert renamed != func
        inverse = {v: k for k, v in mapping.items()}
        assert rename_bound(renamed, inverse) == func


def test_rename_bound_keeps_programs_meaningful(programs):
    for seed, func in enumerate(programs[:20]):
        check_program(rename_bound(func, seed))


def test_rename_bound_rejects_bad_mappings():
    func = random_prim_func(1)
    names = bound_names(func)
    with pytest.raises(NodeError, match="not a name the function binds"):
        rename_bound(func, {"no_such_name": "x"})
    with pytest.raises(NodeError, match="two bindings"):
        rename_bound(func, {names[0]: names[1]})
    with pytest.raises(NodeError):
        rename_bound(func, {names[0]: "not an identifier"})
    with pytest.raises(NodeError):
        rename_bound(func, "seed")


# ---------------------------------------------------------------------------
# mutations


def test_every_function_has_constant_and_block_name_mutants(programs):
    with_dtype = 0
    for func in programs[:60]:
        kinds = {m.kind for m in mutants(func)}
        assert {"constant", "block_name"} <= kinds
        with_dtype += "dtype" in kinds
    assert with_dtype >= 50


def test_each_mutant_differs_in_exactly_the_reported_place(programs):
    extended = [random_prim_func(s, buffer_fields=True, special_values=True) for s in range(10)]
    for func in programs[:25] + extended:
        for site in mutation_sites(func):
            try:
                mutant = site.apply(func)
            except NodeError:
                continue
            assert mutant != func, site.description
            tag = site.action[0]
            if tag == "path":  # putting the old value back restores the function
                path = site.action[1]
                assert replace_at(mutant, path, get_at(func, path)) == func, site.description
            elif tag == "buffer":
                _, name, field, index, _ = site.action
                old = next(n for n in walk(func) if isinstance(n, Buffer) and n.name == name)
                value = getattr(old, field) if index is None else getattr(old, field)[index]
                undo = ("buffer", name, field, index, value)
                assert attrs.evolve(site, action=undo).apply(mutant) == func, site.description
            else:
                name = site.action[1]
                old = next(n for n in walk(func) if isinstance(n, Var) and n.name == name)
                undo = ("var", name, old.dtype)
                assert attrs.evolve(site, action=undo).apply(mutant) == func, site.description


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutations_strategy_draws_applicable_changes(data):
    func = data.draw(prim_funcs(max_blocks=2))
    mutation = data.draw(mutations(func))
    assert mutation.kind in KINDS
    assert mutation.func != func


def test_unknown_mutation_kind_raises():
    with pytest.raises(TirfunError, match="unknown mutation kind"):
        mutation_sites(random_prim_func(0), kinds=["colour"])
