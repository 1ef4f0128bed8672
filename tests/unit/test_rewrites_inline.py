"""The shortcuts of compute_inline and reverse_compute_inline
(:mod:`tirfun.rewrites.inline`) against the general checks they skip,
over every block of many stage programs, before and after random
schedules."""

from tirfun.analysis.traversal import walk_stmts
from tirfun.nodes import Block, BlockRealize, IRModule, PrimFunc
from tirfun.rewrites.base import Site
from tirfun.rewrites.dataflow import region_cover_violation, scope_children, scope_of
from tirfun.rewrites.index import index_of
from tirfun.rewrites.inline import whole_writer_covers
from tirfun.testing.schedules import random_block_schedule
from tirfun.testing.stage_programs import random_stage_program
from tirfun.testing.stages import random_stages


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
                general = region_cover_violation(site, children, (rpath, realize), {read.buffer})
                if fast:
                    fired += 1
                    assert general is None, (rpath, read.buffer.name, mod.script())
    assert fired > 100
