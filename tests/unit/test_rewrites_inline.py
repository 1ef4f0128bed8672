"""The shortcuts of compute_inline and reverse_compute_inline against
the general paths they skip (the region cover check, the walk for the
buffer's uses, the prover on constants), over every block of many stage
programs before and after random schedules; and the index they state,
which must be the built one."""

import tirfun.rewrites as R
from tirfun.analysis.traversal import walk_stmts
from tirfun.nodes import Block, BlockRealize, IRModule, PrimFunc
from tirfun.rewrites.base import Site
from tirfun.rewrites.dataflow import general_cover_violation, scope_children, scope_of, whole_writer_covers
from tirfun.rewrites.index import index_of
from tirfun.script import from_source
from tirfun.testing.schedules import random_block_schedule
from tirfun.testing.stage_programs import random_stage_program
from tirfun.testing.stages import random_stages

from test_rewrite_garbage import _BENCH
from test_rewrites_index import _index_is_the_built_one
from test_rewrites_stated_index import _spy


def _modules(count: int):
    for seed in range(count):
        for make in (random_stage_program, random_stages):
            mod = make(seed)
            mod = IRModule({"main": mod}) if isinstance(mod, PrimFunc) else mod
            yield mod
            yield random_block_schedule(mod, seed)(mod)


def _realizes(func):
    return [(p, s) for p, s in walk_stmts(func, skip_init=True) if isinstance(s, BlockRealize)]


def test_whole_writer_covers_only_where_the_general_check_finds_nothing():
    fired = 0
    for mod in _modules(60):
        func = mod["main"]
        site = Site(mod, "main", func, index_of(func))
        for rpath, realize in _realizes(func):
            if rpath == (("body", None),):
                continue
            scope = scope_of(site, rpath)
            children = scope_children(site, scope)
            if not any(p == rpath for p, _ in children):
                continue
            for read in realize.block.reads:
                fast = whole_writer_covers(site, children, (rpath, realize), read.buffer)
                general = general_cover_violation(site, children, (rpath, realize), {read.buffer})
                if fast:
                    fired += 1
                    assert general is None, (rpath, read.buffer.name, mod.script())
    assert fired > 100


def test_inlining_states_the_index_of_its_result(monkeypatch):
    # an inlining deletes a stage of a sequence and rebuilds its readers
    # (or its producer) in place: the stated index is the built one, the
    # stages after the deleted one moving up by a shift
    used = _spy(monkeypatch, R.compute_location, "derive_inline_index")
    checked = 0
    for mod in _modules(30):
        func = mod["main"]
        for _, block in walk_stmts(func, skip_init=True):
            if not isinstance(block, Block) or block is func.body.block:
                continue
            for record in (R.compute_inline(block.name_hint), R.reverse_compute_inline(block.name_hint)):
                if record.violations(mod):
                    continue
                after = record(mod)
                _index_is_the_built_one(after["main"], record)
                checked += 1
    assert checked > 50 and sum(used) > 50


def test_inlining_keeps_the_index_along_a_schedule(monkeypatch):
    # inlinings between other steps, with shifts of earlier insertions and
    # deletions pending, amid blocks the inlining does not touch
    used = _spy(monkeypatch, R.compute_location, "derive_inline_index")
    mod = _BENCH.with_filler(IRModule({"main": from_source(_BENCH.STAGES)}), 12)
    steps = [R.cache_read("D", 0, "local"), R.compute_inline("B_local"), R.split("l2", [None, 2]),
             R.reverse_compute_inline("D"), R.compute_inline("P"), R.split("l7", [2, None])]
    for step in steps:
        mod = step(mod)
        _index_is_the_built_one(mod["main"], step)
    assert used == [True, True, True]


def test_indexed_uses_are_those_a_walk_finds():
    # in the root block, the uses of a buffer read off the index are those
    # the walk of the statements naming it finds
    from tirfun.rewrites.compute_location import _indexed_uses, _locate, _uses_in_scope
    from tirfun.rewrites.base import Checks

    told = 0
    for mod in list(_modules(40)) + [_BENCH.with_filler(IRModule({"main": from_source(_BENCH.STAGES)}), 12)]:
        func = mod["main"]
        site = Site(mod, "main", func, index_of(func))
        for _, block in walk_stmts(func, skip_init=True):
            if not isinstance(block, Block) or block is func.body.block:
                continue
            loc = _locate(Checks("compute_inline"), site, R.BlockRef(block.name_hint, "main"))
            for region in list(block.reads) + list(block.writes):
                fast = _indexed_uses(site, loc, region.buffer)
                if fast is not None:
                    told += 1
                    assert fast == _uses_in_scope(site, loc, region.buffer), (block.name_hint, region.buffer.name)
    assert told > 200


def test_constants_compare_as_the_prover_finds():
    from tirfun.analysis.arith import can_prove
    from tirfun.nodes import GE, GT, LT, IntImm
    from tirfun.rewrites.compute_location import _always_of

    cases = [(lambda x, y: x[0] > y[1], GT), (lambda x, y: x[1] < y[0], LT), (lambda x, y: x[0] >= y[1], GE)]
    for a in range(-3, 4):
        for b in range(-3, 4):
            x, y = IntImm("int32", a), IntImm("int32", b)
            for holds, op in cases:
                assert _always_of(x, y, {}, holds, lambda: op(x, y)) == can_prove(op(x, y), {})
