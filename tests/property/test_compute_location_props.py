"""Properties of compute_at, reverse_compute_at, compute_inline and
reverse_compute_inline on random multi-stage programs and random programs:
a valid application keeps the program's meaning under the interpreter and
compiled, prints and parses back, and replays from its JSON trace; an
invalid one raises a ScheduleError subclass and nothing else."""

import numpy as np
import pytest
from hypothesis import event, given, settings, strategies as st

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.traversal import walk_stmts
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError, TirfunError
from tirfun.interp import run
from tirfun.nodes import Block, For, IRModule
from tirfun.script import from_source
from tirfun.testing._choices import DrawChooser
from tirfun.testing.corner_programs import SHAPES, corner_program
from tirfun.testing.draw_compute_location import DRAWERS
from tirfun.testing.equivalence import (
    NotEquivalentError, assert_built_as_interpreted, assert_equivalent, random_inputs,
)
from tirfun.testing.reassociation import reassociates
from tirfun.testing.programs import prim_funcs
from tirfun.testing.stage_programs import stage_programs

PRIMITIVES = tuple(DRAWERS)


def _loops(mod: IRModule) -> list[For]:
    return [s for _, s in walk_stmts(mod["main"]) if isinstance(s, For)]


def _blocks(mod: IRModule) -> list[Block]:
    root = mod["main"].body.block
    return [s for _, s in walk_stmts(mod["main"]) if isinstance(s, Block) and s is not root]


def _random_splits(data, mod: IRModule, label: str) -> tuple[IRModule, list]:
    steps = []
    for _ in range(data.draw(st.integers(0, 2), label=f"{label} splits")):
        loops = [l for l in _loops(mod) if l.kind.value == "serial" and l.thread_binding is None]
        if not loops:
            break
        loop = data.draw(st.sampled_from(loops), label=f"{label} split loop")
        rewrite = R.split(loop.loop_var.name, [None, data.draw(st.integers(2, 4), label="factor")])
        if rewrite.violations(mod):
            continue
        mod = rewrite(mod)
        steps.append(rewrite)
    return mod, steps


def _check_valid(before: IRModule, after: IRModule, steps: list, original: IRModule) -> None:
    verify(after)
    again = from_source(after["main"].script())
    assert_structural_equal(again, after["main"])
    if reassociates(before, after):
        # the loops regenerated for a moved block follow its iteration
        # variables, so a float reduction may add up in another order (TVM's
        # meaning allows it) and round differently: the result runs against
        # itself only, as test_rewrite_props does for reorder
        event("a float reduction's order changed")
        assert_equivalent(after["main"], after["main"])
    else:
        assert_equivalent(before["main"], after["main"])
    trace = R.Pipeline(steps)
    replayed = R.Pipeline.from_json(trace.to_json())
    assert replayed == trace
    assert replayed(original) == after


def _apply_drawn(data, mod: IRModule, name: str):
    """Draw one application of ``name``; check that an invalid one fails
    with its first violation, and return the new module (None if invalid)."""
    rewrite = DRAWERS[name](DrawChooser(data.draw), mod)
    if rewrite is None:
        event(f"{name}: no site")
        return None, None
    problems = rewrite.violations(mod)
    if problems:
        assert all(isinstance(p, ScheduleError) for p in problems)
        event(f"{name}: refused with {type(problems[0]).__name__}")
        try:
            rewrite(mod)
        except ScheduleError as err:
            assert type(err) is type(problems[0])
            str(err)  # the message renders
        else:
            raise AssertionError(f"{rewrite} has violations but applied")
        return rewrite, None
    event(f"{name}: applied")
    return rewrite, rewrite(mod)


@given(stage_programs(), st.sampled_from(PRIMITIVES), st.data())
def test_stage_programs_keep_meaning(func, name, data):
    original = IRModule({"main": func})
    mod, steps = _random_splits(data, original, "before")
    rewrite, after = _apply_drawn(data, mod, name)
    if after is None:
        assert mod["main"] is not None
        return
    steps.append(rewrite)
    after2, more = _random_splits(data, after, "after")
    _check_valid(mod, after2, steps[len(steps) - 1:] + more, mod)
    assert_equivalent(original["main"], after2["main"])


@settings(max_examples=max(1, settings().max_examples * 200 // 300))
@given(prim_funcs(), st.sampled_from(PRIMITIVES), st.data())
def test_random_programs_keep_meaning(func, name, data):
    mod = IRModule({"main": func})
    rewrite, after = _apply_drawn(data, mod, name)
    if after is not None:
        _check_valid(mod, after, [rewrite], mod)


@settings(max_examples=max(10, settings().max_examples // 3))
@given(st.sampled_from(sorted(SHAPES)), st.sampled_from(PRIMITIVES), st.data())
def test_corner_programs_keep_meaning(shape, name, data):
    # the shapes the generators never draw, an opaque block naming the loop
    # around it among them: compute_at taking it out of that loop would
    # leave the loop's variable unbound (TVM moves it so)
    mod = corner_program(DrawChooser(data.draw), shape)
    rewrite, after = _apply_drawn(data, mod, name)
    if after is not None:
        _check_valid(mod, after, [rewrite], mod)


@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(stage_programs(), st.data())
def test_every_loop_of_the_nest(func, data):
    """compute_at of every block to every loop, and reverse_compute_at
    likewise: each is refused with a ScheduleError or keeps the meaning."""
    mod, _ = _random_splits(data, IRModule({"main": func}), "before")
    preserve = data.draw(st.booleans(), label="preserve_unit_loops")
    applied = 0
    for block in _blocks(mod):
        for loop in _loops(mod):
            for make in (R.compute_at, R.reverse_compute_at):
                rewrite = make(block.name_hint, loop.loop_var.name, preserve)
                if rewrite.violations(mod):
                    continue
                after = rewrite(mod)
                verify(after)
                assert_equivalent(mod["main"], after["main"])
                applied += 1
    event(f"applied {min(applied, 4)}+")


@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(stage_programs(), st.sampled_from(PRIMITIVES), st.data())
def test_compiled_agrees_with_interpreter(func, name, data):
    mod, _ = _random_splits(data, IRModule({"main": func}), "before")
    _, after = _apply_drawn(data, mod, name)
    if after is None:
        return
    args = random_inputs(after["main"], 0)
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run(after["main"], *expected)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tirfun.build(after, target="llvm")(*got)
    for e, g in zip(expected, got):
        if isinstance(e, np.ndarray):
            assert np.array_equal(e.view(np.uint8), g.view(np.uint8))


@given(stage_programs(("overwrite",)), st.data())
def test_moving_past_another_consumer_is_refused(func, data):
    """``E`` overwrites what ``D`` reads; putting ``E`` under ``B``'s loops
    would move it before ``D`` (TVM moves it and computes a wrong ``D``)."""
    mod, _ = _random_splits(data, IRModule({"main": func}), "before")
    for loop in R.get_loops(mod, "B"):
        problems = R.reverse_compute_at("E", loop.name).violations(mod)
        assert problems and all(isinstance(p, ScheduleError) for p in problems)
        event(type(problems[0]).__name__)
    # E does not depend on D the other way round, so placing D is fine
    for loop in R.get_loops(mod, "B"):
        rewrite = R.reverse_compute_at("D", loop.name)
        if not rewrite.violations(mod):
            assert_equivalent(mod["main"], rewrite(mod)["main"])


@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(stage_programs(("gather",)), st.data())
def test_non_affine_consumer_is_refused_or_right(func, data):
    """``C`` reads ``B`` through an index that is no iteration variable:
    reverse_compute_at under ``B``'s loops is refused for a non-affine one
    (``vi * vi % n``), and for a repeat (``vi // 2``, each element read by
    two instances) places those instances where the element is written;
    compute_at of ``B`` computes what ``C`` needs."""
    mod, _ = _random_splits(data, IRModule({"main": func}), "before")
    repeat = " // 2]" in mod["main"].script()
    for loop in R.get_loops(mod, "B"):
        rewrite = R.reverse_compute_at("C", loop.name)
        problems = rewrite.violations(mod)
        if repeat and not problems:
            event("repeat placed")
            assert_equivalent(mod["main"], rewrite(mod)["main"])
            continue
        assert problems and all(isinstance(p, ScheduleError) for p in problems)
        event(type(problems[0]).__name__)
    for loop in R.get_loops(mod, "C"):
        rewrite = R.compute_at("B", loop.name)
        problems = rewrite.violations(mod)
        if problems:
            assert isinstance(problems[0], ScheduleError)
            continue
        event("compute_at applied")
        assert_equivalent(mod["main"], rewrite(mod)["main"])


@given(stage_programs(), st.sampled_from(PRIMITIVES), st.data())
def test_bad_arguments_raise_schedule_errors(func, name, data):
    mod = IRModule({"main": func})
    junk = data.draw(st.sampled_from([None, 3, "nope", R.LoopRef("nope"), R.BlockRef("nope"), 1.5]))
    flag = data.draw(st.sampled_from([True, False, None, 2, "yes"]))
    index = data.draw(st.sampled_from([-1, -2, 0, 7, -3, None, True]))
    blocks = [b.name_hint for b in _blocks(mod)]
    loops = [l.loop_var.name for l in _loops(mod)]
    if name in ("compute_at", "reverse_compute_at"):
        make = R.compute_at if name == "compute_at" else R.reverse_compute_at
        block = data.draw(st.sampled_from(blocks + [junk]))
        loop = data.draw(st.sampled_from(loops + [junk]))
        rewrite = make(block, loop, flag, index)
    else:
        make = R.compute_inline if name == "compute_inline" else R.reverse_compute_inline
        rewrite = make(data.draw(st.sampled_from(blocks + [junk])))
    try:
        rewrite(mod)
    except ScheduleError:
        pass


@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(stage_programs(("reshape",)), st.data())
def test_a_flattening_consumer_runs_exactly_what_each_iteration_produced(func, data):
    """``C[v] = B[v // m, v % m]`` (or ``B[v % n, v // n]``) under each loop
    of ``B``: where the instances reading what one iteration produces are
    one range of ``v``, reverse_compute_at places them (row by row under the
    outer loop: always); where they are not (column by column under the
    outer loop), it is refused, where TVM's hull of the box would run
    instances reading elements not written yet."""
    mod, _ = _random_splits(data, IRModule({"main": func}), "before")
    row_major = "B[v // " in func.script()
    extents = {l.loop_var.name: int(l.extent) for l in _loops(mod)}
    for loop in R.get_loops(mod, "B"):
        rewrite = R.reverse_compute_at("C", loop.name)
        problems = rewrite.violations(mod)
        if loop.name == "i" and extents["i"] > 1:
            # row by row the domain is solved (a split of C's loop may still
            # be refused, for its predicate); column by column it is not
            if row_major:
                assert not any(isinstance(p, R.UnsupportedRegionError) for p in problems), problems
            else:
                assert problems
        if problems:
            assert isinstance(problems[0], ScheduleError)
            event("refused")
            continue
        event("applied")
        assert_equivalent(mod["main"], rewrite(mod)["main"])


@st.composite
def producers_under_shared_loops(draw):
    """(source, loop, refused, conservative) of a producer B and a consumer C that share
    the loops ``i, j``: B runs its own loop ``k`` under them, C its loops
    ``u, t``; compute_at B at ``loop`` (u or t). B's variables v0, v1, v2
    are bound to i, j, k and a fourth, vm, to ``j * ek + k``; each is
    spatial or reduction at random, indexes B's element or not, and is read
    by B's value or not. A variable that does not index the element but is
    read, bound to a shared loop of several iterations, is what the
    consumer's iteration fixes, and so is a reduction variable bound to
    such a loop, read or not: ``refused`` says whether compute_at must
    refuse (a reduction variable, or vm with its own loop) rather than keep
    the binding (a spatial variable bound to shared loops only), and
    ``conservative`` whether the refusal is one where TVM's placement
    happens to keep the meaning."""
    ei, ej, ek = (draw(st.integers(1, 3), label=f"extent {n}") for n in "ijk")
    kinds = [draw(st.sampled_from("SR"), label=f"kind v{n}") for n in "012m"]
    # vm never indexes the element: the consumer reads by i, j, t
    # a reduction variable indexing B makes no reduction block
    indexed = [k == "S" and draw(st.booleans(), label=f"v{n} indexes B") for n, k in zip("012", kinds)] + [False]
    read = [draw(st.booleans(), label=f"v{n} read") for n in "012m"]
    loop = draw(st.sampled_from("ut"), label="compute_at loop")
    # vm shares its loops with v1 and v2: a block with a reduction and vm
    # has no affine binding, so it is no reduction block; without vm it is
    with_vm = draw(st.booleans(), label="vm declared")
    if not with_vm:
        kinds[3], read[3] = "S", False
    names = ["v0", "v1", "v2", "vm"]
    doms = [ei, ej, ek, ej * ek if with_vm else 1]
    bind = ["i", "j", "k", f"j * {ek} + k"]
    reduction = "R" in kinds
    out = [n for n, x in zip(names, indexed) if x] or ["0"]
    shape = [d for d, x in zip(doms, indexed) if x] or [1]
    # what C reads of B in iteration (i, j, t): v2 is read at t % ek
    cidx = [c for c, x in zip(["i", "j", f"t % {ek}"], indexed) if x] or ["0"]
    terms = " + ".join(f"{n} * {7 ** p}" for p, (n, r) in enumerate(zip(names, read)) if r) or "0"
    at = ", ".join(n if r else "0" for n, r in zip(names[:3], read))
    value = f"A[{at}] + ({terms})"
    axes = "\n".join(f"            {n} = T.axis.{'spatial' if k == 'S' else 'reduce'}({d}, {b})"
                     for n, k, d, b in zip(names[:4 if with_vm else 3], kinds, doms, bind))
    init = (f"            with T.init():\n                B[{', '.join(out)}] = 0\n"
            f"            B[{', '.join(out)}] = B[{', '.join(out)}] + {value}\n" if reduction
            else f"            B[{', '.join(out)}] = {value}\n")
    src = f'''
@T.prim_func
def main(A: T.Buffer(({ei}, {ej}, {ek}), "int32"), C: T.Buffer(({ei}, {ej}, 2, {ek}), "int32")):
    B = T.alloc_buffer(({", ".join(map(str, shape))},), "int32")
    for i, j in T.grid({ei}, {ej}):
        for k in range({ek}):
          with T.block("B"):
{axes}
{init}        for u, t in T.grid(2, {ek}):
            with T.block("C"):
                ci, cj, cu, ct = T.axis.remap("SSSS", [i, j, u, t])
                C[ci, cj, cu, ct] = B[{", ".join(cidx).replace("i", "ci").replace("j", "cj").replace("t", "ct")}] + cu
'''
    # the rules compute_at follows for a variable no needed region fixes
    # (free): the loops of several iterations its binding names, shared (i,
    # j) or B's own (k)
    bound = [{"i"} if ei > 1 else set(), {"j"} if ej > 1 else set(), {"k"} if ek > 1 else set(),
             (({"j"} if ej > 1 else set()) | ({"k"} if ek > 1 else set())) if with_vm else set()]
    free = [not x and d > 1 for x, d in zip(indexed, doms)]
    matters = [k == "R" or not f or r for k, f, r in zip(kinds, free, read)]
    refused = False
    for n in range(4):
        if not free[n]:
            continue
        partner = any(w != n and matters[w] and bound[n] & bound[w] for w in range(4))
        shared = bound[n] & {"i", "j"}
        if kinds[n] == "R":
            refused |= bool(shared) or partner
        elif read[n]:
            # kept where bound to shared loops only; vm is no plain loop
            refused |= (bound[n] - {"i", "j"} != set()) if shared else (partner or n == 3)
    # refusals whose placement as TVM makes it happens to leave the same
    # result: vm = k read, beside v2 = k spatial and free, both ascending
    conservative = ej == 1 and ek > 1 and kinds[3] == "S" and read[3] and kinds[2] == "S" and not indexed[2]
    return src, loop, refused, conservative


@given(producers_under_shared_loops(), st.integers(0, 2**16))
def test_a_producer_under_loops_it_shares_computes_what_each_iteration_read(case, seed):
    # the consumer in iteration (i, j) read what B's instances of that
    # iteration left; a variable B reads but does not write by, bound to i
    # or j, runs one value there. TVM runs it over its whole domain and
    # leaves the last value's result; tirfun keeps the binding, or refuses
    # where no domain keeps it
    from unittest import mock

    from tirfun.rewrites.compute_location import ComputeAt
    from tirfun.testing.equivalence import NotEquivalentError

    src, loop, refused, conservative = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.compute_at("B", loop)
    problems = rewrite.violations(mod)
    ours = [p for p in problems if "and leave another value's result" in str(p)]
    if ours:
        assert type(ours[0]) is R.NotStagePipelineError
        assert refused, ours[0]
        event("refused: the binding cannot be kept")
        if len(problems) == len(ours) and not conservative:
            # placed as TVM places it, the block leaves another value's result
            with mock.patch.object(ComputeAt, "_keep_shared_bindings", lambda *a: None):
                placed = rewrite(mod)
            with pytest.raises(NotEquivalentError):
                assert_equivalent(mod["main"], placed["main"], seed=seed)
        return
    if problems:
        # refused by another precondition (a reduction variable indexing B,
        # say): not this property's concern
        assert all(isinstance(p, ScheduleError) for p in problems)
        event(f"refused: {type(problems[0]).__name__}")
        return
    assert not refused
    event("placed")
    out = rewrite(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], seed=seed)


@st.composite
def consumers_under_shared_loops(draw):
    """(source, refused) of a producer B and a consumer C that share the
    loops ``i, j``: B runs its own loop ``k``, writing B[vi, vj, vk]; C
    runs its own loop ``t`` (as many steps) and reads B[.., .., c2] with c2
    bound to t; reverse_compute_at C at ``k``. C's other variables c0, c1
    (bound to i, j) and cm (bound to ``j * ek + t``) are spatial or
    reduction at random; c0 and c1 index B's element or not, and each
    indexes C's element or is read by C's value or not. A variable B's
    region leaves free that C uses, bound to a shared loop of several
    iterations, keeps its binding (spatial, shared loops only) or makes
    ``refused`` hold (a reduction variable, or cm with its own loop)."""
    ei, ej, ek = (draw(st.integers(1, 3), label=f"extent {n}") for n in "ijk")
    kinds = [draw(st.sampled_from("SR"), label=f"kind c{n}") for n in "01m"]
    in_b = [draw(st.booleans(), label=f"c{n} indexes B") for n in "01"]
    # a reduction variable indexing C makes no reduction block
    in_c = [k == "S" and draw(st.booleans(), label=f"c{n} indexes C") for n, k in zip("01m", kinds)]
    read = [draw(st.booleans(), label=f"c{n} read") for n in "01m"]
    # cm shares its loops with c1 and c2: a reduction with cm has no affine
    # binding, so it is no reduction block; without cm it is
    with_cm = draw(st.booleans(), label="cm declared")
    if not with_cm:
        kinds[2], in_c[2], read[2] = "S", False, False
    names, binds = ["c0", "c1", "cm"], ["i", "j", f"j * {ek} + t"]
    doms = [ei, ej, ej * ek if with_cm else 1]
    reduction = "R" in kinds
    out = [n for n, x in zip(names, in_c) if x] + ["c2"]
    shape = [d for d, x in zip(doms, in_c) if x] + [ek]
    at = ", ".join([n if x else "0" for n, x in zip(names[:2], in_b)] + ["c2"])
    terms = " + ".join(f"{n} * {7 ** p}" for p, (n, r) in enumerate(zip(names, read)) if r) or "0"
    value = f"B[{at}] + ({terms})"
    axes = "\n".join(f"                {n} = T.axis.{'spatial' if k == 'S' else 'reduce'}({d}, {b})"
                     for n, k, d, b in zip(names[:3 if with_cm else 2], kinds, doms, binds))
    write = ", ".join(out)
    body = (f"                with T.init():\n                    C[{write}] = 0\n"
            f"                C[{write}] = C[{write}] + {value}\n" if reduction
            else f"                C[{write}] = {value}\n")
    src = f'''
@T.prim_func
def main(A: T.Buffer(({ei}, {ej}, {ek}), "int32"), C: T.Buffer(({", ".join(map(str, shape))}), "int32")):
    B = T.alloc_buffer(({ei}, {ej}, {ek}), "int32")
    for i, j in T.grid({ei}, {ej}):
        for k in range({ek}):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[vi, vj, vk] = A[vi, vj, vk] * 3
        for t in range({ek}):
            with T.block("C"):
                c2 = T.axis.spatial({ek}, t)
{axes}
{body}'''
    # the loops of several iterations each binding names
    bound = [{"i"} if ei > 1 else set(), {"j"} if ej > 1 else set(),
             (({"j"} if ej > 1 else set()) | ({"t"} if ek > 1 else set())) if with_cm else set()]
    free = [not b and d > 1 for b, d in zip(in_b + [False], doms)]
    used = [x or r for x, r in zip(in_c, read)]
    # c2, bound to t, is fixed by B's region and matters
    matters = [k == "R" or not f or u for k, f, u in zip(kinds, free, used)] + [True]
    bound_all = bound + [{"t"} if ek > 1 else set()]
    refused = False
    for n in range(3):
        if not free[n]:
            continue
        shared = bound[n] & {"i", "j"}
        partner = any(w != n and matters[w] and bound[n] & bound_all[w] for w in range(4))
        if kinds[n] == "R":
            refused |= bool(shared) or partner
        elif used[n]:
            # kept where bound to shared loops only; cm is no plain loop,
            # so read but not written at, its order is refused too
            refused |= bool(bound[n] - {"i", "j"}) if shared else (partner or (n == 2 and not in_c[n]))
    return src, refused


@given(consumers_under_shared_loops(), st.integers(0, 2**16))
def test_a_consumer_moved_under_loops_it_shares_runs_what_each_iteration_ran(case, seed):
    # C in iteration (i, j) ran the values its binding gives of the
    # variables B's region leaves free; TVM runs their whole domain there,
    # writing the other iterations' elements from this one's values
    from unittest import mock

    from tirfun.rewrites.compute_location import ReverseComputeAt
    from tirfun.testing.equivalence import NotEquivalentError

    src, refused = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.reverse_compute_at("C", "k")
    problems = rewrite.violations(mod)
    ours = [p for p in problems if "leave another value's result" in str(p)]
    if ours:
        assert type(ours[0]) is R.NotStagePipelineError
        assert refused, ours[0]
        event("refused: the binding cannot be kept")
        if len(problems) == len(ours):
            with mock.patch.object(ReverseComputeAt, "_keep_shared_bindings", lambda *a: None):
                placed = rewrite(mod)
            with pytest.raises(NotEquivalentError):
                assert_equivalent(mod["main"], placed["main"], seed=seed)
        return
    if problems:
        assert all(isinstance(p, ScheduleError) for p in problems)
        event(f"refused: {type(problems[0]).__name__}")
        return
    assert not refused
    event("placed")
    out = rewrite(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], seed=seed)


def _draw_place(draw, own: str, whole: str, what: str) -> tuple[int, str, bool]:
    """``(n, index, late)``: a size ``n`` and where a block reads the
    ``what`` (row or column) another block writes: its own (``own``), an
    earlier or a later one, a fixed one, or all of them (``whole``, a
    variable over the size); ``late`` where that is one the other block
    writes in a later iteration."""
    n = draw(st.integers(2, 4), label="size")
    d = draw(st.integers(1, 2), label="shift")
    where = draw(st.sampled_from(["same", "earlier", "later", "fixed", "all"]), label="place")
    fixed = draw(st.integers(0, n - 1), label=f"fixed {what}")
    index = {"same": own, "earlier": f"T.max({own} - {d}, 0)", "later": f"T.min({own} + {d}, {n - 1})",
             "fixed": str(fixed), "all": whole}[where]
    return n, index, where in ("later", "all") or (where == "fixed" and fixed > 0)


@st.composite
def readers_left_behind(draw):
    """(source, loop, late) of C, then D under the loops i_1, j_1, D
    reading C's row at a random place (this iteration's column, an earlier
    or a later one, a fixed one, or all of them); reverse_compute_at C into
    Y's loop ``loop``. ``late`` holds where D reads a column C writes in a
    later iteration, which C moved earlier would already have written."""
    n, col, late = _draw_place(draw, "vc", "vj_2", "column")
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
         C: T.Buffer(({n}, {n}), "float32"), D: T.Buffer(({n}, {n}, {n}), "float32")):
    Y = T.alloc_buffer(({n}, {n}))
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0.0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i_1, j_1 in T.grid({n}, {n}):
        with T.block("C"):
            vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
            C[vi_1, vj_1] = T.max(Y[vi_1, vj_1], T.float32(0.0))
        for jj in range({n}):
            with T.block("D"):
                vi_2, vc, vj_2 = T.axis.remap("SSS", [i_1, j_1, jj])
                D[vi_2, vc, vj_2] = C[vi_2, {col}] + T.float32(1.0)
'''
    return src, draw(st.sampled_from(["i", "j", "k"]), label="loop"), late


@given(readers_left_behind(), st.integers(0, 2**16))
def test_a_reader_left_behind_by_reverse_compute_at_keeps_what_it_read(case, seed):
    src, loop, late = case
    mod = IRModule({"main": from_source(src)})
    _left_behind_refused_exactly(mod, R.reverse_compute_at("C", loop), "D", late, seed, f" under {loop}")


def _left_behind_refused_exactly(mod, rewrite, other: str, late: bool, seed: int, where: str = "") -> None:
    """``rewrite`` (a move of a block out of loops it shares with block
    ``other``) is refused for reordering their accesses exactly where
    ``late`` says it reorders them: refused, it changes the result once
    the check is patched off; applied, it keeps it."""
    from unittest import mock

    from tirfun.testing.equivalence import NotEquivalentError

    problems = [p for p in rewrite.violations(mod) if f"which it shares with block '{other}'" in str(p)]
    if problems:
        assert type(problems[0]) is R.DependenceViolationError
        assert late, problems[0]
        event(f"refused{where}")
        with mock.patch.object(type(rewrite), "_check_left_behind", lambda *a: None):
            placed = rewrite(mod)
        with pytest.raises(NotEquivalentError):
            assert_equivalent(mod["main"], placed["main"], seed=seed)
        return
    others = rewrite.violations(mod)
    if others:
        event(f"refused: {type(others[0]).__name__}")
        return
    assert not late
    event(f"placed{where}")
    assert_equivalent(mod["main"], rewrite(mod)["main"], seed=seed)


@st.composite
def writers_left_behind(draw):
    """(source, late) of B, then C under the loop i, C reading B's row at a
    random place (this iteration's row, an earlier or a later one, a fixed
    one, or a whole column), then a copy of what C writes; compute_at C
    into the copy's loop. ``late`` holds where C reads a row B writes in a
    later iteration, which C moved later would read rewritten."""
    n, row, late = _draw_place(draw, "vi", "vk", "row")
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
         C: T.Buffer(({n}, {n}, {n}), "float32")):
    C_shared = T.alloc_buffer(({n}, {n}, {n}), scope="shared")
    for i in range({n}):
        for j in range({n}):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j, k in T.grid({n}, {n}):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                C_shared[vi, vj, vk] = B[{row}, vj] + T.float32(1)
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C_shared"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = C_shared[vi, vj, vk]
'''
    return src, late


@given(writers_left_behind(), st.integers(0, 2**16))
def test_a_writer_left_behind_by_compute_at_keeps_what_the_block_read(case, seed):
    # the mirror of the reader case: B runs before C in each iteration of i;
    # C moved after the loop reads B once B has written every row
    src, late = case
    mod = IRModule({"main": from_source(src)})
    sch = tirfun.Schedule(mod)
    loop = sch.get(sch.get_loops(sch.get_block("C_shared"))[0])
    _left_behind_refused_exactly(mod, R.compute_at("C", loop.loop_var.name), "B", late, seed)


@st.composite
def guarded_divisions(draw):
    """(source, steps) of a block reading A at an index that divides by
    ``vi - c`` (or ``vi + 1``, never zero) only where ``vi != c``, with a
    copy of A cached for it and moved under its loop, or under the outer
    loop of a split of it."""
    c = draw(st.integers(0, 7), label="zero at")
    divisor = draw(st.sampled_from([f"vi - {c}", "vi + 1"]), label="divisor")
    src = f'''
@T.prim_func
def main(A: T.Buffer((64,), "int32"), B: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.if_then_else(vi != {c}, A[vi * 2 + 40 // ({divisor}) % 4 + 8], 0)
'''
    factor = draw(st.sampled_from([None, 1, 2, 4]), label="split by")
    steps = [R.cache_read("B", 0, draw(st.sampled_from(["local", "global"]), label="scope"))]
    if factor is None:
        steps.append(R.compute_at("A_local" if steps[0].storage_scope == "local" else "A_global", "i"))
    else:
        steps += [R.split("i", [None, factor]),
                  R.compute_at("A_local" if steps[0].storage_scope == "local" else "A_global", "i_0")]
    return src, steps


@given(guarded_divisions())
def test_compute_at_of_a_copy_of_a_guarded_division_keeps_meaning_or_is_refused_exactly(case):
    # B divides only where vi != c; the copy moved under the loop computes
    # its binding at every iteration (TVM's divides by zero)
    import importlib
    from unittest import mock

    src, steps = case
    mod = R.Pipeline(tuple(steps[:-1]))(IRModule({"main": from_source(src)}))
    original = IRModule({"main": from_source(src)})
    rewrite = steps[-1]
    problems = rewrite.violations(mod)
    if problems:
        assert type(problems[0]) is R.UnsafeRegionError, problems[0]
        module = importlib.import_module("tirfun.rewrites.compute_location")
        with mock.patch.object(module, "_check_safe_divisions", lambda *a: None):
            out = rewrite(mod)
        with pytest.raises(Exception, match="division by zero"):
            assert_equivalent(original["main"], out["main"], trials=1)
        event("refused")
        return
    event("moved")
    out = rewrite(mod)
    verify(out)
    assert_equivalent(original["main"], out["main"], trials=2)


@st.composite
def guarded_consumers(draw):
    """(source, always) of a copy A_global of A and a block B reading it
    under ``if i < c``, in its own loops or in the copy's under one ``if``;
    ``always``: the condition holds on every row, or the copy is under it
    too."""
    n = draw(st.integers(1, 5), label="rows")
    c = draw(st.integers(0, n + 1), label="bound")
    shared = draw(st.booleans(), label="one if for both")
    if shared:
        body = f'''
    for i, j in T.grid({n}, 3):
        if i < {c}:
            with T.block("A_global"):
                vi, vj = T.axis.remap("SS", [i, j])
                A_global[vi, vj] = A[vi, vj]
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A_global[vi, vj] * T.float32(2)'''
    else:
        body = f'''
    for i, j in T.grid({n}, 3):
        with T.block("A_global"):
            vi, vj = T.axis.remap("SS", [i, j])
            A_global[vi, vj] = A[vi, vj]
    for i, j in T.grid({n}, 3):
        if i < {c}:
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A_global[vi, vj] * T.float32(2)'''
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n}, 3), "float32"), B: T.Buffer(({n}, 3), "float32")):
    A_global = T.alloc_buffer(({n}, 3)){body}
'''
    return src, shared or c >= n


@given(guarded_consumers())
def test_reverse_compute_inline_of_a_block_under_a_condition_keeps_meaning_or_is_refused(case):
    # folded into its producer, a consumer's stores run wherever the
    # producer runs: a condition around the consumer alone is lost
    src, always = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.reverse_compute_inline("B")
    problems = rewrite.violations(mod)
    if problems:
        assert not always, problems[0]
        assert type(problems[0]) is R.BodyAnalysisError and "runs under the condition" in str(problems[0])
        event("refused")
        return
    assert always, src
    event("inlined")
    out = rewrite(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=2)


@st.composite
def accumulating_producers(draw, kinds=("accumulates",)):
    """A producer C whose variables are all spatial, indexed by some of its
    variables or by all of them, and a consumer D reading C out: ``(kind,
    complete, src)``. Of ``kinds``, C ``"accumulates"`` (a store reading
    C, an init perhaps) into D's scaled copy; or accumulates into D's
    plain copy (``"copied out"``); or ``"overwrites"`` what its init
    stored. ``complete`` says whether C is a complete block."""
    n, m = draw(st.integers(1, 4), label="rows"), draw(st.integers(1, 4), label="cols")
    by = draw(st.sampled_from(["j", "i", "both"]), label="C indexed by")
    kind = draw(st.sampled_from(kinds), label="kind")
    init = draw(st.booleans(), label="with an init")
    declared = draw(st.booleans(), label="regions stated without C's read")
    shape, index = {"j": (f"({m},)", "vj"), "i": (f"({n},)", "vi"), "both": (f"({n}, {m})", "vi, vj")}[by]
    extent = {"j": m, "i": n, "both": None}[by]
    init_stmt = f'''
            with T.init():
                C[{index}] = T.float32(1)''' if init else ""
    if declared:  # as TVM accepts: the stated regions leave out the read of C
        init_stmt = f'''
            T.reads(A[vi, vj])
            T.writes(C[{index}])''' + init_stmt
    value = "C[{index}] * T.float32(3)" if kind == "accumulates" else "C[{index}]"
    if extent is None:
        copy = f'''
    for k, l in T.grid({n}, {m}):
        with T.block("D"):
            vk, vl = T.axis.remap("SS", [k, l])
            D[vk, vl] = {value.format(index="vk, vl")}'''
    else:
        copy = f'''
    for k in range({extent}):
        with T.block("D"):
            vk = T.axis.spatial({extent}, k)
            D[vk] = {value.format(index="vk")}'''
    update = "A[vi, vj] * T.float32(2)" if kind == "overwrites" else f"C[{index}] + A[vi, vj] * T.float32(2)"
    # a store reading C makes C no complete block unless its stated
    # regions leave the read out (or an init states C is what it writes)
    complete = kind == "overwrites" or init or declared
    return kind, complete, f'''
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "float32"), D: T.Buffer({shape}, "float32")):
    C = T.alloc_buffer({shape})
    for i, j in T.grid({n}, {m}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j]){init_stmt}
            C[{index}] = {update}
{copy}
'''


@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(accumulating_producers(("accumulates", "copied out", "overwrites")))
def test_reverse_compute_inline_into_a_producer_with_an_init_is_exact(case):
    # folded into a producer that reads C, the consumer's store replaces
    # the producer's, whose read of C is left on a buffer nothing writes
    # (TVM 0.25 reads D there, which holds the consumer's value of the
    # init: D = C * 3 over C = 1; C = C + x gives 9 + 3x, not 3 + 3x). With
    # an init, the body reads what the init stored, and reads it as that;
    # where the producer overwrites what its init stored, likewise.
    # (Without an init or stated regions, the inferred regions say C reads
    # what it writes, so it is no complete block, and refused as such)
    kind, complete, src = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.reverse_compute_inline("D")
    problems = rewrite.violations(mod)
    if not complete:
        assert problems and type(problems[0]) is R.NonSingleProducerError, src
        event("not a complete block")
        return
    if kind != "overwrites" and "T.init" not in src:
        # no init: the accumulation starts from what C held before
        assert problems and type(problems[0]) is R.BodyAnalysisError, src
        assert "reads C, which it writes" in str(problems[0])
        event(f"{kind}: refused")
        _accumulation_refusal_is_needed(rewrite, mod, src)
        return
    # with an init (1, so that TVM's reading of D instead differs), each
    # instance's body reads what its init stored
    assert not problems, (src, problems[0])
    event(f"{kind}: inlined")
    out = rewrite(mod)
    verify(out)
    assert "C = T.alloc_buffer" not in out["main"].script()
    assert_equivalent(mod["main"], out["main"], trials=2)


@given(accumulating_producers())
def test_compute_inline_of_a_block_that_accumulates_is_refused_exactly(case):
    # inlined, the block's value reads C, which nothing writes any more
    _, _, src = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.compute_inline("C")
    problems = rewrite.violations(mod)
    assert problems, src
    if "reads C, which it writes" not in str(problems[0]):
        event("refused for another reason")  # an init, an index not bijective, an incomplete block
        return
    event("accumulates")
    _accumulation_refusal_is_needed(rewrite, mod, src)


def _accumulation_refusal_is_needed(rewrite, mod, src) -> None:
    """Applied anyway (the accumulation check patched out), ``rewrite``
    fails or gives a program that verifies no more or means another thing."""
    from unittest import mock

    from tirfun.rewrites import compute_location

    with mock.patch.object(compute_location, "_accumulates", lambda *a: False):
        try:
            out = rewrite(mod)
            verify(out)
            assert_equivalent(mod["main"], out["main"], trials=1)
        except (TirfunError, AssertionError):
            return
    raise AssertionError(f"the accumulation was refused but inlines with the same meaning:\n{src}")


_REPEAT = """
@T.prim_func
def main(A: T.Buffer(({n},), "{dt}"), C: T.Buffer(({m},), "{dt}")):
    P = T.alloc_buffer(({n},), "{dt}")
    for i in range({n}):
        with T.block("P"):
            vi = T.axis.spatial({n}, i)
            P[vi] = A[vi] + A[vi]
    for j in range({m}):
        with T.block("C"):
            vj = T.axis.spatial({m}, j)
            C[vj] = P[vj // {c}]
"""


@settings(max_examples=max(10, settings().max_examples // 3))
@given(st.integers(1, 6), st.integers(2, 4), st.integers(0, 3), st.sampled_from(["float32", "int32", "int8"]),
       st.integers(0, 4))
def test_reverse_compute_at_of_a_repeat_computes_each_copy_once_its_element_is_written(n, c, short, dt, factor):
    # C[v] = P[v // c] (TVM's repeat): under a loop of P, the instances of
    # C are those reading what P just wrote, c per element; a C shorter
    # than n * c reads the last elements fewer times
    m = max(1, n * c - short)
    mod = IRModule({"main": from_source(_REPEAT.format(n=n, m=m, c=c, dt=dt))})
    steps = R.Pipeline([])
    loop = "i"
    if factor:
        steps = steps >> R.split("i", [None, factor])
        loop = "i_1" if factor % 2 else "i_0"
    steps = steps >> R.reverse_compute_at("C", loop)
    out = steps(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    args = random_inputs(out["main"], 1)
    want = [a.copy() for a in args]
    run(mod["main"], *want)
    tirfun.build(out)(*args)
    np.testing.assert_array_equal(args[1], want[1])


@st.composite
def sums_taken_column_by_column(draw):
    """(source, loop, preserve): an elementwise stage ``E`` over columns
    then rows, a reduction ``S`` of E's rows (a sum, a max or a min, of a
    drawn dtype) and a consumer ``N`` of both that overwrites its output,
    accumulates into it, or stores under a condition on what it reads;
    ``S`` is then moved under E's row loop, inside the column loop that
    drives its reduction variable, and ``N`` is to be moved under ``loop``
    (``"j"``, the column loop, or ``"i"``)."""
    m, n = draw(st.integers(1, 4), label="rows"), draw(st.integers(1, 5), label="cols")
    dtype = draw(st.sampled_from(["float32", "int32", "float64", "int8", "int64"]), label="dtype")
    reduce = draw(st.sampled_from(["sum", "max", "min"]), label="reduction")
    init, update = {"sum": ("0", "S[vi] + E[vi, vk]"), "max": ("-100", "T.max(S[vi], E[vi, vk])"),
                    "min": ("100", "T.min(S[vi], E[vi, vk])")}[reduce]
    consumer = draw(st.sampled_from(["overwrite", "accumulate", "condition", "whole"]), label="consumer")
    value = {"overwrite": "E[vi, vj] - S[vi]", "accumulate": "N[vi, vj] + E[vi, vj] * S[vi]",
             "condition": f"T.if_then_else(E[vi, vj] < S[vi], E[vi, vj], T.{dtype}(0))",
             "whole": "A[vi, vj] + S[vi]"}[consumer]
    src = f'''
@T.prim_func
def main(A: T.Buffer(({m}, {n}), "{dtype}"), N: T.Buffer(({m}, {n}), "{dtype}")):
    E = T.alloc_buffer(({m}, {n}), "{dtype}")
    S = T.alloc_buffer(({m},), "{dtype}")
    for j, i in T.grid({n}, {m}):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = A[vi, vj] * T.{dtype}(2) + T.{dtype}(1)
    for i, k in T.grid({m}, {n}):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.{dtype}({init})
            S[vi] = {update}
    for i, j in T.grid({m}, {n}):
        with T.block("N"):
            vi, vj = T.axis.remap("SS", [i, j])
            N[vi, vj] = {value}
'''
    return src, draw(st.sampled_from(["j", "i"]), label="loop"), draw(st.booleans(), label="preserve")


@settings(max_examples=max(1, settings().max_examples * 100 // 300))
@given(sums_taken_column_by_column(), st.integers(0, 2**16))
def test_a_consumer_moved_under_the_loop_of_a_producers_reduction_keeps_meaning_or_is_refused(case, seed):
    # under the column loop that drives the sum's reduction, the consumer
    # reads partial sums in every step; TVM moves it there regardless,
    # and a consumer whose elements follow the step (each column computed
    # once, in its own step) keeps values from a partial sum
    src, loop, preserve = case
    mod = R.reverse_compute_at("S", "i")(IRModule({"main": from_source(src)}))
    rewrite = R.reverse_compute_at("N", loop, preserve_unit_loops=preserve)
    try:
        out = rewrite(mod)
    except ScheduleError as err:
        event(f"refused: {type(err).__name__}")
        return
    event(f"applied under {loop}")
    assert_equivalent(mod["main"], out["main"], seed=seed)


@st.composite
def filled_cache_copy_backs(draw):
    """(source, split, scope, loop position, preserve_unit_loops, index) of
    an update in place of a buffer (it reads what it adds to, so
    cache_write fills its cache first, by a stage TVM does not make),
    whose copy back is then moved under one of the update's loops."""
    dtype = draw(st.sampled_from(["float32", "float64", "int32", "int8", "uint16"]), label="dtype")
    n, m, k = (draw(st.integers(1, 5), label=f"extent {x}") for x in "nmk")
    guarded = draw(st.booleans(), label="writes under a condition")
    body = "C[vi, vj] = C[vi, vj] + A[vi, vk] * A[vk % {n}, vj]".format(n=n)
    if guarded:
        body = f"if vk % 2 == vi % 2:\n                {body}"
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n}, {max(m, k)}), "{dtype}"), C: T.Buffer(({n}, {m}), "{dtype}")):
    for i, j, kk in T.grid({n}, {m}, {k}):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, kk])
            {body}
'''
    if draw(st.booleans(), label="a copy of every other row instead"):
        # a block that writes part of its output: the cache is filled first
        # too, and the block itself may move under the copy back's loops
        rows = max(n, 2)  # one row would write all of C
        # a predicate the domains do not imply would be lost with the loops
        # (refused); a condition in the body moves with the block
        where = draw(st.booleans(), label="a predicate, not a condition in the body")
        guard, indent = ("T.where(i % 2 == 0)", "") if where else ("if vi % 2 == 0:", "    ")
        src = f'''
@T.prim_func
def main(A: T.Buffer(({rows}, {m}), "{dtype}"), C: T.Buffer(({rows}, {m}), "{dtype}")):
    for i, j in T.grid({rows}, {m}):
        with T.block("update"):
            vi, vj = T.axis.remap("SS", [i, j])
            {guard}
            {indent}C[vi, vj] = A[vi, vj] * A[vi, 0]
'''
    split = draw(st.sampled_from([None, "i", "j", "kk"]), label="split")
    scope = draw(st.sampled_from(["global", "local", "shared"]), label="scope")
    position = draw(st.integers(0, 3), label="loop")
    preserve = draw(st.booleans(), label="preserve_unit_loops")
    index = draw(st.sampled_from([-1, -2]), label="index")
    move = draw(st.sampled_from(["copy back under the block", "block under the copy back",
                                 "block computed at the copy back"]), label="move")
    return src, split, scope, position, preserve, index, move


def _filled_cache_move(case, report: bool = True):
    """``(before, after)`` of the move ``case`` draws, after the cache_write
    that fills its cache first; after is None where it is refused (with
    ``report``, an event says which way it went)."""
    src, split, scope, position, preserve, index, move = case
    mod = IRModule({"main": from_source(src)})
    sch = tirfun.Schedule(mod)
    if split is not None:
        loops = {l.name: l for l in sch.get_loops(sch.get_block("update"))}
        if split in loops:
            sch.split(loops[split], [None, 2])
    sch.cache_write(sch.get_block("update"), 0, scope)
    assert f'T.block("C_{scope}_fill")' in sch.mod["main"].script()
    moved, at = ("update", f"C_{scope}") if move != "copy back under the block" else (f"C_{scope}", "update")
    loops = sch.get_loops(sch.get_block(at))
    primitive = sch.compute_at if move == "block computed at the copy back" else sch.reverse_compute_at
    try:
        primitive(sch.get_block(moved), loops[min(position, len(loops) - 1)], preserve_unit_loops=preserve,
                  index=index)
    except ScheduleError as err:
        if report:
            event(f"{move}: refused: {type(err).__name__}")
        return mod, None
    if report:
        event(f"{move}: applied at loop {min(position, len(loops) - 1)}")
    return mod, sch.mod


@given(filled_cache_copy_backs(), st.integers(0, 2**16))
def test_a_block_and_the_copy_back_of_its_filled_cache_move_keeping_the_meaning(case, seed):
    # the fill runs to its end before the block and its loops: the copy back
    # may move under them, or the block under the copy back's (TVM's
    # schedules, where TVM makes no fill), taking the domains from the
    # block alone
    mod, out = _filled_cache_move(case)
    if out is None:
        return
    verify(out)
    assert_equivalent(mod["main"], out["main"], seed=seed)
    rt = tirfun.build(out, target="llvm")
    args = random_inputs(out["main"], np.random.default_rng(seed))
    expected = [a.copy() for a in args]
    run(out["main"], *expected)
    rt(*args)
    for x, y in zip(expected, args):
        np.testing.assert_array_equal(x, y)


def test_each_move_of_a_block_and_its_filled_cache_is_drawn_and_applies():
    # the draws above reach each of the three moves where it applies
    from hypothesis import find

    for move in ("copy back under the block", "block under the copy back", "block computed at the copy back"):
        case = find(filled_cache_copy_backs(),
                    lambda c: c[6] == move and _filled_cache_move(c, report=False)[1] is not None)
        mod, out = _filled_cache_move(case, report=False)
        assert_equivalent(mod["main"], out["main"])


def _keeps_meaning_and_builds_exactly(mod, out, seed, case) -> None:
    """``out`` verifies, means what ``mod`` means under the interpreter,
    and builds to the interpreter's result bit for bit."""
    verify(out)
    assert_equivalent(mod["main"], out["main"], seed=seed, trials=2)
    try:
        assert_built_as_interpreted(out, reference=mod, seed=seed, ulps=0)
    except NotEquivalentError as err:
        raise AssertionError(f"{err}\n{case}") from None


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.binary(min_size=12, max_size=12), st.integers(0, 2**16))
def test_reverse_compute_at_keeps_a_condition_it_can_write_in_the_block_variables(choices, seed):
    # TVM drops the consumer's condition when it moves it under the
    # producer's loop; tirfun keeps it where it can write it in the block's
    # variables (a loop's, a split's guard, a load of what the block reads)
    # and refuses it where it cannot (the high part of a split). A consumer
    # that ran a band of its domains is refused too (TVM runs them all)
    from tirfun.testing._choices import BytesChooser
    from tirfun.testing.draw_compute_location import draw_guarded_consumer

    case = draw_guarded_consumer(BytesChooser(choices))
    event(f"kind {case.kind}")
    mod = case.program()
    if case.kind == "high part":
        with pytest.raises(R.NonTrivialPredicateError, match="cannot be written in them"):
            case.rewrite()(mod)
        return
    if case.kind == "band" and case.rows > 1:
        with pytest.raises(R.NotStagePipelineError, match="storing where it never stored"):
            case.rewrite()(mod)
        return
    out = case.rewrite()(mod)
    _keeps_meaning_and_builds_exactly(mod, out, seed, case)


def test_each_kind_of_consumer_condition_and_dtype_is_drawn():
    from tirfun.testing._choices import RandomChooser
    from tirfun.testing.draw_compute_location import GUARD_DTYPES, GUARD_KINDS, draw_guarded_consumer

    cases = [draw_guarded_consumer(RandomChooser(seed)) for seed in range(200)]
    assert {c.kind for c in cases} == set(GUARD_KINDS)
    assert {c.dtype for c in cases} == set(GUARD_DTYPES)
    assert {c.loop for c in cases} == {"i", "j"}


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.binary(min_size=10, max_size=10), st.integers(0, 2**16))
def test_reverse_compute_at_under_a_split_reduction_runs_where_its_column_is_written(choices, seed):
    # rfactor's second stage moved under the first stage's outer reduction
    # loop: the guard k_0 * f + k_1 < cols of the split reads that loop and
    # the inner one, which the partial sum's element does not use. Every
    # iteration writes its column where the guard holds at k_1 = 0; that
    # is proven for an exact split and is the moved block's condition for
    # an over-split (TVM moves it there too)
    from tirfun.testing._choices import BytesChooser
    from tirfun.testing.draw_compute_location import draw_split_reduction

    case = draw_split_reduction(BytesChooser(choices))
    event(f"{case.op} {'over-split' if case.outer > case.parts else 'split'}, {case.second} at {case.loop}")
    mod = case.program()
    if case.loop == "k_1" and case.second == "sum":
        # the sum would add the partial sum of every iteration of k_1
        with pytest.raises(R.UnsupportedRegionError, match="the reduction would run twice"):
            case.rewrite()(mod)
        return
    out = case.rewrite()(mod)
    text = out["main"].script()
    if case.loop == "k_0":
        guarded = f"k_0 * {case.factor} < {case.cols}" in text
        assert guarded == (case.outer > case.parts), text
    _keeps_meaning_and_builds_exactly(mod, out, seed, case)


def test_each_kind_of_split_reduction_and_dtype_is_drawn():
    from tirfun.testing._choices import RandomChooser
    from tirfun.testing.draw_compute_location import SPLIT_REDUCTION_DTYPES, draw_split_reduction

    cases = [draw_split_reduction(RandomChooser(seed)) for seed in range(200)]
    assert {c.dtype for c in cases} == set(SPLIT_REDUCTION_DTYPES)
    assert {c.op for c in cases} == {"sum", "max"}
    assert {c.loop for c in cases} == {"i", "k_0", "k_1"}
    assert {c.second for c in cases if c.loop == "k_1"} == {"sum", "copy"}
    assert {c.outer > c.parts for c in cases if c.loop == "k_0"} == {True, False}


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.binary(min_size=8, max_size=8))
def test_reverse_compute_at_of_a_slice_at_a_run_time_start_runs_every_instance_inside_the_buffer(choices):
    # B[v] = A_shared[v + start]: the instances the copy's loop reaches are
    # those that read inside A_shared; a padded slice's instances past the
    # end read nothing and are refused rather than dropped (TVM drops them)
    from tirfun.testing._choices import BytesChooser
    from tirfun.testing.draw_compute_location import draw_slice_at_start

    case = draw_slice_at_start(BytesChooser(choices))
    event("guarded" if case.guarded else "plain")
    mod = case.program()
    if case.guarded:
        with pytest.raises(R.UnsupportedRegionError, match="would never run"):
            case.rewrite()(mod)
        return
    out = case.rewrite()(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], sizes={"start": case.start}, trials=2)
    a = np.arange(case.size).astype(case.dtype)
    b = np.zeros(case.size - case.start, case.dtype)
    tirfun.build(out, target="llvm")(a, b, case.start)
    expected = np.zeros_like(b)
    run(mod["main"], a, expected, case.start)
    assert np.array_equal(b, expected)
    assert np.array_equal(b, a[case.start:] * np.array(2, case.dtype))


def test_each_kind_of_slice_at_a_run_time_start_is_drawn():
    from tirfun.testing._choices import RandomChooser
    from tirfun.testing.draw_compute_location import GUARD_DTYPES, draw_slice_at_start

    cases = [draw_slice_at_start(RandomChooser(seed)) for seed in range(200)]
    assert {c.guarded for c in cases} == {True, False}
    assert {c.dtype for c in cases} == set(GUARD_DTYPES)
    assert {c.start for c in cases} >= {0, 1, 5}


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.binary(min_size=8, max_size=8), st.integers(0, 2**16))
def test_a_reduction_moved_under_the_loop_of_the_reduction_it_reads_restarts_in_every_iteration(choices, seed):
    # a softmax's sum moved under the loop of its maximum's reduction (TVM
    # accepts it): in every iteration the sum runs whole from its init over
    # the partial maximum, and the last iteration leaves the original's
    # result, bit for bit
    from tirfun.testing._choices import BytesChooser
    from tirfun.testing.draw_compute_location import draw_reduction_after_reduction

    case = draw_reduction_after_reduction(BytesChooser(choices))
    event(f"{case.first} then {case.second} at {case.loop}")
    mod = case.program()
    out = case.rewrite()(mod)
    _keeps_meaning_and_builds_exactly(mod, out, seed, case)


def test_each_kind_of_reduction_after_reduction_is_drawn():
    from tirfun.testing._choices import RandomChooser
    from tirfun.testing.draw_compute_location import SPLIT_REDUCTION_DTYPES, draw_reduction_after_reduction

    cases = [draw_reduction_after_reduction(RandomChooser(seed)) for seed in range(200)]
    assert {(c.first, c.second) for c in cases} == {(a, b) for a in ("max", "sum") for b in ("max", "sum")}
    assert {c.dtype for c in cases} == set(SPLIT_REDUCTION_DTYPES)
    assert {c.loop for c in cases} == {"i", "k"}


_POOL = """
@T.prim_func
def main(X: T.Buffer((N,), "DT"), Y: T.Buffer((N,), "DT")):
    cache = T.alloc_buffer((N,), "DT")
    for h_0 in range(TILES):
        for ax0 in range(WINDOW):
            with T.block("cache"):
                h = T.axis.spatial(N, h_0 * TILE - 1 + ax0)
                T.where(1 <= h_0 * TILE + ax0 and h_0 * TILE + ax0 < N + 1)
                cache[h] = X[h]
        for h_1_0, h_1_1, kh in T.grid(PARTS, FACTOR, 3):
            with T.block("compute"):
                h_1 = T.axis.spatial(N, h_0 * TILE + h_1_0 * FACTOR + h_1_1)
                k = T.axis.reduce(3, kh)
                T.where(h_1_0 * FACTOR + h_1_1 < TILE)
                with T.init():
                    Y[h_1] = T.DT(0)
                Y[h_1] = T.max(Y[h_1], T.if_then_else(1 <= h_1 + k and h_1 + k < N + 1, cache[h_1 + k - 1], T.DT(0)))
"""


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.integers(1, 4), st.integers(2, 6), st.integers(1, 5), st.integers(-1, 1),
       st.sampled_from(["float32", "int32", "float16"]), st.integers(0, 2**16))
def test_compute_inline_of_a_padded_window_under_a_split_tile(tiles, tile, factor, short, dtype, seed):
    # a max pool's window of 3 over a padded row, the cache filled per tile
    # where 1 <= h + 1 < N + 1 (a bound from below as well as above), the
    # tile's rows split by a factor that need not divide it (guarded): the
    # cache covers the tile's reads exactly when the window holds tile + 2
    # rows, and compute_inline applies then, keeping the meaning; a window
    # one row short is refused (the original reads a row not written yet),
    # unless there is one tile only: the row it misses lies past the end,
    # where the guarded read never goes
    window = tile + 2 + short
    parts = -(-tile // factor)
    src = (_POOL.replace("TILES", str(tiles)).replace("WINDOW", str(window)).replace("PARTS", str(parts))
           .replace("FACTOR", str(factor)).replace("TILE", str(tile)).replace("N", str(tiles * tile))
           .replace("DT", dtype))
    mod = IRModule({"main": from_source(src)})
    if short < 0 and tiles > 1:
        with pytest.raises(R.NotStagePipelineError):
            R.compute_inline("cache")(mod)
        event("window short")
        return
    event("window short of the end only" if short < 0 else "split" if tile % factor else "dividing split")
    out = R.compute_inline("cache")(mod)
    _keeps_meaning_and_builds_exactly(mod, out, seed, src)


_FUSED_RF = """
@T.prim_func
def main(A: T.Buffer(({n}, {ks}), "{dt}"), R: T.Buffer(({n},), "{dt}")):
    R_rf = T.alloc_buffer(({n}, {s}), "{dt}")
    for i, f in T.grid({n}, {ks}):
        with T.block("R_rf"):
            vs = T.axis.spatial({s}, {spatial})
            vi = T.axis.spatial({n}, i)
            vk = T.axis.reduce({k}, {red})
            with T.init():
                R_rf[vi, {where}] = T.{dt}({init})
            R_rf[vi, {where}] = {combine}(R_rf[vi, {where}], A[vi, vk * {s} + vs])
    for ci, cs in T.grid({n}, {s}):
        with T.block("R"):
            vi, vs = T.axis.remap("SR", [ci, cs])
            with T.init():
                R[vi] = T.{dt}({init})
            R[vi] = {combine}(R[vi], R_rf[vi, vs])
"""


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.sampled_from(["slow", "slow", "fast", "unwritten"]),
       st.sampled_from([("float32", "T.max", "-1000"), ("int32", "T.max", "-1000"), ("int32", "T.Add", "0"),
                        ("float16", "T.min", "1000")]),
       st.integers(0, 2**16))
def test_compute_at_of_a_fused_partial_reduction_keeps_each_elements_order(n, k, s, reduce, op, seed):
    # rfactor's first stage with its spatial and reduction loops fused (TVM's
    # argmax_split_rfactor): f // S is the reduction variable ("slow") or f
    # % K is ("fast"). Computed at the consumer's row, the stage's nest runs
    # vs before vk, which interleaves the elements otherwise, but runs each
    # element's steps in the order f ran them: it applies, bit for bit. Where
    # the stage writes one element for every vs ("unwritten"), the order of
    # the steps of that element would change, and it is refused
    dtype, combine, init = op
    if reduce == "unwritten":
        s = max(s, 2)  # a stage writing one element for two values of vs
    spatial, red = {"slow": (f"f % {s}", f"f // {s}"), "fast": (f"f // {k}", f"f % {k}"),
                    "unwritten": (f"f % {s}", f"f // {s}")}[reduce]
    src = _FUSED_RF.format(n=n, k=k, s=s, ks=k * s, dt=dtype, spatial=spatial, red=red, init=init,
                           combine=combine, where="0" if reduce == "unwritten" else "vs")
    mod = IRModule({"main": from_source(src)})
    rewrite = R.compute_at("R_rf", "ci")
    problems = rewrite.violations(mod)
    if reduce == "unwritten":
        # (the consumer reads R_rf[vi, vs] for every vs, too)
        assert problems and type(problems[0]) is R.NotStagePipelineError, src
        event("each vs writes one element: refused")
        return
    assert not problems, (src, problems[0])
    event(f"{reduce}: applies")
    _keeps_meaning_and_builds_exactly(mod, rewrite(mod), seed, src)


_TILED_PRODUCER = """
@T.prim_func
def main(A: T.Buffer(({p},), "{dt}"), C: T.Buffer(({n},), "{dt}")):
    B = T.alloc_buffer(({tiles}, {t}), "{dt}")
    for i0, i1 in T.grid({tiles}, {t}):
        with T.block("B"):
            vi, vm = T.axis.remap("SS", [i0, i1])
            B[vi, vm] = A[vi * {t} + vm] + A[vi * {t} + vm]
    for i in range({n}):
        with T.block("C"):
            v = T.axis.spatial({n}, i)
            C[v] = B[v // {t}, {low}]
"""


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.integers(2, 5), st.integers(1, 4), st.integers(0, 3), st.sampled_from(["i0", "i1"]),
       st.sampled_from(["digits", "overlap"]), st.sampled_from(["float32", "int8", "float16", "uint16"]),
       st.integers(0, 2**16))
def test_reverse_compute_at_reads_a_tiled_producer_past_the_consumers_end(t, tiles, short, loop, kind, dtype,
                                                                         seed):
    # TVM's elementwise_overcomputed_producer_injective_load: B holds tiles
    # of t, C reads B[v // t, v % t] over n <= tiles * t elements. Under a
    # loop of B, C's instances are those reading what B just wrote: an
    # interval of v, guarded by v < n where the last tile reaches past C.
    # Digits that overlap (v % (2 t) // 2) read no one mixed radix of v:
    # refused, or, where the sizes make them one after all, applied
    n = max(1, tiles * t - short)
    low = f"v % {t}" if kind == "digits" else f"v % {2 * t} // 2"
    src = _TILED_PRODUCER.format(p=tiles * t, n=n, tiles=tiles, t=t, dt=dtype, low=low)
    mod = IRModule({"main": from_source(src)})
    rewrite = R.reverse_compute_at("C", loop)
    problems = rewrite.violations(mod)
    if kind == "overlap" and problems:
        assert isinstance(problems[0], ScheduleError), src
        event("overlapping digits: refused")
        return
    assert not problems, (src, problems[0])
    event(f"{kind} under {loop}, {'past the end' if n % t else 'dividing'}")
    _keeps_meaning_and_builds_exactly(mod, rewrite(mod), seed, src)


_MIRRORED = """
@T.prim_func
def main(X: T.Buffer(({n}, {m}), "{dt}"), Z: T.Buffer(({n}, {m}), "{dt}")):
    Y = T.alloc_buffer(({n}, {m}), "{dt}")
    for i, j in T.grid({n}, {m}):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[{store}] = X[vi, vj] + X[vi, vj]
    for i, j in T.grid({n}, {m}):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[{load}] * T.{dt}(3)
"""


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.integers(1, 5), st.integers(1, 5), st.booleans(), st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from(["compute_inline", "reverse_compute_inline"]),
       st.sampled_from(["float32", "int32", "int8", "float16"]), st.integers(0, 2**16))
def test_inlining_through_a_mirrored_index_keeps_the_meaning(n, m, si, sj, li, lj, primitive, dtype, seed):
    # TVM's test_compute_at_rev_iter: the producer stores Y[9 - vi, 9 - vj]
    # (some dimensions mirrored, v = c - x recovers them); inlined into its
    # consumer, or its consumer (reading through mirrors too) folded into
    # it, the result is the program's, bit for bit
    def index(mi, mj):
        return f"{f'{n - 1} - vi' if mi else 'vi'}, {f'{m - 1} - vj' if mj else 'vj'}"

    src = _MIRRORED.format(n=n, m=m, dt=dtype, store=index(si, sj), load=index(li, lj))
    mod = IRModule({"main": from_source(src)})
    rewrite = R.compute_inline("Y") if primitive == "compute_inline" else R.reverse_compute_inline("Z")
    mirrored = (si or sj) if primitive == "compute_inline" else (li or lj)
    event(f"{primitive}, {'mirrored' if mirrored else 'plain'}")
    _keeps_meaning_and_builds_exactly(mod, rewrite(mod), seed, src)


@st.composite
def moves_under_fused_sizes(draw):
    """(module, schedule, move, split, target loop) of the guarded symbolic stages (B computed under a
    condition, over rows x cols), one block's loops fused, the fused loop
    perhaps split by a constant (or into a constant count of parts), and a
    neighbour moved under the fused loop or one part of it: the moved nest
    divides by cols, and cols may be 0."""
    ch = DrawChooser(draw)
    mod = corner_program(ch, "symbolic_guarded")
    sch = tirfun.Schedule(mod)
    kind = draw(st.sampled_from(["reverse_compute_at C", "compute_at B", "reverse_compute_at fused C"]),
                label="move")
    if kind == "reverse_compute_at fused C":
        # C's own loops fused (vi = f // cols, vj = f % cols), moved under
        # B's row loop: vj runs its whole domain there, as the fuse ran it
        sch.fuse(*sch.get_loops(sch.get_block("C")))
        return mod, sch, kind, None, sch.get_loops(sch.get_block("B"))[0]
    host = "B" if kind.startswith("reverse") else "C"
    fused = sch.fuse(*sch.get_loops(sch.get_block(host)))
    split = draw(st.sampled_from([None, "factor", "parts"]), label="split")
    target = fused
    if split is not None:
        k = draw(st.integers(2, 4), label="by")
        outer, inner = sch.split(fused, [None, k] if split == "factor" else [k, None])
        target = draw(st.sampled_from([outer, inner]), label="under which part")
    return mod, sch, kind, split, target


@given(moves_under_fused_sizes(), st.integers(0, 2**16))
def test_a_move_under_a_fuse_of_sizes_divides_only_where_its_loop_runs(case, seed):
    # TVM takes sizes to be positive and moves the nest; with cols = 0 or
    # rows = 0 the moved nest's bindings divide by cols only inside a loop
    # whose extent is then 0, or the move is refused (UnsafeRegionError)
    mod, sch, kind, split, target = case
    try:
        if kind.startswith("reverse"):
            sch.reverse_compute_at(sch.get_block("C"), target)
        else:
            sch.compute_at(sch.get_block("B"), target)
    except ScheduleError as exc:
        event(f"refused ({split}): {type(exc).__name__}")
        if split is None:
            raise  # a plain fuse over rows * cols: the loop's extent is a multiple of cols
        return
    event(f"{kind} ({split}) applies")
    after = sch.mod
    verify(after)
    for rows, cols in ((0, 3), (3, 0), (0, 0), (2, 3), (5, 1), (3, 4)):
        assert_equivalent(mod["main"], after["main"], trials=1, seed=seed, sizes={"rows": rows, "cols": cols})


@st.composite
def fused_readers(draw):
    """(source, short) of a producer S over ``n`` elements and a consumer
    over ``rows x cols`` reading ``S[a * cols + b]`` (under the guard ``a *
    cols + b < n`` where the box reaches past ``n``); ``short``: the
    producer has fewer instances than the consumer."""
    rows, cols = draw(st.integers(1, 4), label="rows"), draw(st.integers(1, 4), label="cols")
    n = draw(st.integers(max(1, rows * cols - 3), rows * cols), label="n")
    short = n < rows * cols
    read = f"S[va * {cols} + vb]"
    value = f"T.if_then_else(va * {cols} + vb < {n}, {read}, T.float32(2))" if short or draw(
        st.booleans(), label="guard anyway") else read
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n},), "float32"), B: T.Buffer(({rows}, {cols}), "float32")):
    S = T.alloc_buffer(({n},))
    for i in range({n}):
        with T.block("S"):
            vi = T.axis.spatial({n}, i)
            S[vi] = A[vi] * T.float32(3)
    for a, b in T.grid({rows}, {cols}):
        with T.block("B"):
            va, vb = T.axis.remap("SS", [a, b])
            B[va, vb] = {value}
'''
    return src, short


@given(fused_readers(), st.integers(0, 2**16))
def test_reverse_compute_inline_of_a_fused_reader_keeps_every_store(case, seed):
    # TVM folds a consumer over a box larger than its producer's instances
    # and loses the stores of the instances past them (TVM 0.25: B[1, 2]
    # left unwritten); tirfun refuses exactly those
    src, short = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.reverse_compute_inline("B")
    problems = rewrite.violations(mod)
    if short:
        assert problems and type(problems[0]) is R.BodyAnalysisError, problems
        assert "no producer instance to fold into" in str(problems[0])
        event("refused: the consumer has more instances")
        return
    assert not problems, problems
    event("folded")
    out = rewrite(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], seed=seed)
