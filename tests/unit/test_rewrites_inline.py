"""The shortcuts of compute_inline and reverse_compute_inline
(:mod:`tirfun.rewrites.inline`) against the general checks they skip,
over every block of many stage programs, before and after random
schedules."""

import tirfun.rewrites as R
from tirfun.analysis.traversal import get_at, walk_stmts
from tirfun.nodes import Block, BlockRealize, IRModule, PrimFunc
from tirfun.rewrites.base import Site
from tirfun.rewrites.dataflow import region_cover_violation, scope_children, scope_of
from tirfun.rewrites.index import build_index, index_of
from tirfun.rewrites.inline import whole_writer_covers
from tirfun.script import from_source
from tirfun.testing.schedules import random_block_schedule
from tirfun.testing.stage_programs import random_stage_program
from tirfun.testing.stages import random_stages


# three stages (a padding, a stencil, a relu) amid blocks of their own
STAGES = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32"), E: T.Buffer((8,), "float32")):
    P = T.alloc_buffer((18, 18), "float32")
    B = T.alloc_buffer((16, 16), "float32")
    for f in range(8):
        with T.block("F"):
            vf = T.axis.spatial(8, f)
            E[vf] = T.float32(1)
    for i, j in T.grid(18, 18):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = T.if_then_else(1 <= vi and vi < 17 and 1 <= vj and vj < 17, A[vi - 1, vj - 1],
                                       T.float32(0))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = P[vi, vj] + P[vi + 2, vj + 2]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(B[vi, vj], T.float32(0))
    for g in range(8):
        with T.block("G"):
            vg = T.axis.spatial(8, g)
            E[vg] = E[vg] * T.float32(2)
"""


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


def _index_is_the_built_one(func, step) -> None:
    derived = index_of(func)
    assert derived == build_index(func), step
    for name, path in derived.blocks.items():
        assert get_at(func, path).name_hint == name, step


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
    mod = IRModule({"main": from_source(STAGES)})
    steps = [R.cache_read("D", 0, "local"), R.compute_inline("B_local"), R.split("f", [None, 2]),
             R.reverse_compute_inline("D"), R.compute_inline("P"), R.split("g", [2, None])]
    for step in steps:
        mod = step(mod)
        _index_is_the_built_one(mod["main"], step)
    assert used == [True, True, True]


def _spy(monkeypatch, module, name) -> list:
    """Record, for each call of ``module.name``, whether it gave the index."""
    used = []
    original = getattr(module, name)

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        used.append(out is not None)
        return out

    monkeypatch.setattr(module, name, spy)
    return used


def test_indexed_uses_are_those_a_walk_finds():
    # in the root block, the uses of a buffer read off the index are those
    # the walk of the statements naming it finds
    from tirfun.rewrites.compute_location import _indexed_uses, _locate, _uses_in_scope
    from tirfun.rewrites.base import Checks

    told = 0
    for mod in list(_modules(40)) + [IRModule({"main": from_source(STAGES)})]:
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
