"""The random applications of the compute location primitives: every
primitive is drawn, and often enough valid, on multi-stage programs."""

from collections import Counter

from tirfun.errors import ScheduleError
from tirfun.analysis.traversal import walk_stmts
from tirfun.nodes import Block, For, IRModule
from tirfun.testing import compute_location_drawers
from tirfun.testing._choices import RandomChooser, RecordingChooser, ReplayChooser
from tirfun.testing.draw_compute_location import DRAWERS
from tirfun.testing.stage_programs import SHAPES, random_stage_program, stage_source


def test_the_public_table_is_the_drawers():
    assert compute_location_drawers is DRAWERS
    assert set(DRAWERS) == {"compute_at", "reverse_compute_at", "compute_inline", "reverse_compute_inline"}


def test_every_primitive_is_drawn_and_applies():
    valid, refused = Counter(), Counter()
    for seed in range(60):
        mod = IRModule({"main": random_stage_program(seed)})
        ch = RandomChooser(seed)
        for name, draw in DRAWERS.items():
            rewrite = draw(ch, mod)
            assert rewrite is not None and rewrite.primitive == name
            problems = rewrite.violations(mod)
            assert all(isinstance(p, ScheduleError) for p in problems)
            (refused if problems else valid)[name] += 1
    for name in DRAWERS:
        assert valid[name] >= 6, (name, valid, refused)
        assert refused[name] >= 1, (name, valid, refused)


def test_a_producer_is_drawn_under_a_loop_of_its_consumer_and_applies():
    # reverse_compute_at of a block to a loop after it (the block's readers
    # are under the loop): the block runs whole in every iteration
    valid = refused = 0
    for seed in range(200):
        func = random_stage_program(seed)
        mod = IRModule({"main": func})
        rewrite = DRAWERS["reverse_compute_at"](RandomChooser(seed), mod)
        order = {}
        for k, (_, node) in enumerate(walk_stmts(func)):
            if isinstance(node, Block):
                order.setdefault(node.name_hint, k)
            elif isinstance(node, For):
                order.setdefault(node.loop_var.name, k)
        if order[rewrite.block.name] < order[rewrite.loop.name]:
            if rewrite.violations(mod):
                refused += 1
            else:
                valid += 1
    assert valid >= 3 and refused >= 1, (valid, refused)


def test_every_shape_is_built():
    seen = Counter()
    for seed in range(60):
        src = stage_source(RandomChooser(seed))
        seen[next(shape for shape, marker in [("reduction", "T.init()"), ("stencil", "vi + 2"),
                                               ("gather", "B[(vi"), ("gather", "B[vi // 2]"),
                                               ("reshape", "B[v // "), ("reshape", "B[v % "),
                                               ("overwrite", "+ E[vi]"), ("two_consumers", "E[vi] = B[vi] +"),
                                               ("chain", "")] if marker in src)] += 1
    assert set(seen) == set(SHAPES)


def test_the_same_choices_draw_the_same_application():
    mod = IRModule({"main": random_stage_program(3)})
    for draw in DRAWERS.values():
        rec = RecordingChooser(RandomChooser(11))
        first = draw(rec, mod)
        again = draw(ReplayChooser(rec.record), mod)
        assert first == again
