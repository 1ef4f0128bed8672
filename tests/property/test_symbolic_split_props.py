"""Splits of loops of run-time extent by a count of parts (``[8, None]``),
whose bindings carry a symbolic weight (``i_0 * ((rows + 7) // 8) + i_1``),
and fuses of two such loops (``f // cols``, ``f % cols``), crossed with
random schedules of loop and block primitives: TVM's iterator maps read
such bindings as dense mixed radices, so reorder, blockize, compute_at,
reverse_compute_at, decompose_reduction and the caches take them, and
tirfun must too. Every schedule keeps the program's meaning for sizes of
every remainder (none, fewer rows than parts, a multiple and not, no
column), and the scheduled program compiles to what the interpreter
computes."""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.schedule import Schedule
from tirfun.testing._choices import DrawChooser, RandomChooser
from tirfun.testing.corner_programs import corner_program
from tirfun.testing.equivalence import compare_arrays, random_inputs
from tirfun.testing.schedules import ALL_PRIMITIVES, build_schedule, primitive_counts

PRIMITIVES = tuple(p for p in ALL_PRIMITIVES if p != "bind")
#: a float sum taken in another order is another sum (as in TVM)
REASSOCIATING = {"reorder", "rfactor", "pad_einsum", "merge", "blockize"}
#: the primitives that must take a binding of symbolic weight
TAKES_THE_WEIGHT = ("reorder", "blockize", "compute_at", "reverse_compute_at", "cache_read", "cache_write",
                    "decompose_reduction")


def _split_by_parts(ch, mod, fuse: bool | None = None):
    """``mod`` with one loop of run-time extent split into a drawn count of
    parts (the inner extent, and so the outer weight, symbolic), or (with
    ``fuse``, drawn when None) a block's two loops fused first."""
    sch = Schedule(mod)
    block = ch.choice(("B", "C", "D"))
    loops = sch.get_loops(sch.get_block(block))
    fuse = ch.chance(40) if fuse is None else fuse
    loop = sch.fuse(*loops) if fuse else loops[0]
    sch.split(loop, [ch.integer(2, 8), None])
    return sch.mod


#: (rows, cols): no row, fewer rows than parts, a multiple of the parts
#: and not; no column (the sum runs no iteration)
SIZES = ((0, 2), (1, 3), (3, 1), (8, 2), (13, 3), (17, 1), (5, 0))


def _runs(mod, rows: int, cols: int, seed: int):
    func = mod["main"]
    return random_inputs(func, np.random.default_rng(seed), sizes={"rows": rows, "cols": cols})


def _check(before, after, steps, seed: int) -> None:
    func = after["main"]
    exact = not (REASSOCIATING & set(primitive_counts(steps))) or not func.buffer_map[func.params[0]].dtype.is_float
    built = tirfun.build(after, target="llvm")
    for rows, cols in SIZES:
        args = _runs(before, rows, cols, seed)
        expected, got, compiled = ([a.copy() if isinstance(a, np.ndarray) else a for a in args] for _ in range(3))
        interp_run(before["main"], *expected)
        interp_run(func, *got)
        built(*compiled)
        for p, x, y, z in zip(func.params, expected, got, compiled):
            if isinstance(x, np.ndarray):
                dtype = func.buffer_map[p].dtype
                if exact:
                    assert compare_arrays(p.name, x, y, dtype) is None, (rows, cols, steps, func.script())
                assert compare_arrays(p.name, y, z, dtype) is None, (rows, cols, steps, func.script())


@settings(max_examples=max(settings().max_examples // 2, 10))
@given(st.data(), st.integers(0, 2**16))
def test_schedules_over_a_split_into_parts_keep_meaning_and_compile_exactly(data, seed):
    ch = DrawChooser(data.draw)
    shape = ch.choice(("symbolic_stages", "symbolic_guarded"))
    mod = corner_program(ch, shape)
    split = _split_by_parts(ch, mod)
    steps = build_schedule(ch, split, max_steps=3, primitives=PRIMITIVES)
    after = steps(split)
    for primitive in sorted(set(primitive_counts(steps)) & set(TAKES_THE_WEIGHT)):
        event(f"applies {primitive}")
    moved = {"compute_at", "reverse_compute_at"} & set(primitive_counts(steps))
    if shape == "symbolic_guarded" and moved and "// cols" in after["main"].script():
        # a nest moved beside the guarded B, dividing by cols, which the
        # sizes drawn below make 0
        event("a moved nest divides by cols beside a guarded block")
    verify(after)
    _check(mod, after, steps, seed)


def _weighted_blocks(mod) -> set[str]:
    """The blocks of ``mod`` bound with a symbolic weight (a product with
    the run-time count of rows in a binding)."""
    from tirfun.analysis.traversal import walk
    from tirfun.nodes import BlockRealize, Mul, Var

    out = set()
    for node in walk(mod["main"].body):
        if isinstance(node, BlockRealize):
            for value in node.iter_values:
                for part in walk(value):
                    if isinstance(part, Mul) and any(isinstance(v, Var) and v.name == "rows" for v in walk(part)):
                        out.add(node.block.name_hint)
    return out


def test_each_primitive_that_must_take_the_weight_is_drawn_and_applies_to_it():
    # over seeded draws, each primitive of TAKES_THE_WEIGHT applies to a
    # block whose binding still carries the weight afterwards (the loop
    # ends once each was seen)
    seen = collections.Counter()
    for seed in range(600):
        ch = RandomChooser(seed)
        mod = corner_program(ch, "symbolic_stages")
        split = _split_by_parts(ch, mod)
        weighted = _weighted_blocks(split)
        assert weighted, split["main"].script()
        steps = build_schedule(ch, split, max_steps=1, primitives=TAKES_THE_WEIGHT)
        if len(steps.rewrites) != 1:
            continue
        after = steps(split)
        if _weighted_blocks(after):
            seen[steps.rewrites[0].primitive] += 1
        if all(seen[p] for p in TAKES_THE_WEIGHT):
            break
    missing = [p for p in TAKES_THE_WEIGHT if seen[p] == 0]
    assert not missing, f"never applied over a symbolic weight: {missing} ({dict(seen)})"
