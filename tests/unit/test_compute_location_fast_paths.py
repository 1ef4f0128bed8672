"""The shortcuts compute_at and reverse_compute_at take give what the
general paths they skip give: the bound of a consumer's region read off
its substituted sums, the last value of a literal domain, the blocks
found once from the name index, what a producer writes at outer
variables, the tile of one element at a variable, the interval of a loop
variable over literals, and the walks down one path."""

import functools

import pytest

from tirfun.analysis.arith import bound_region
from tirfun.analysis.traversal import ancestors, stmt_nodes, walk_stmts
from tirfun.nodes import BlockRealize, For, IntImm, IRModule, Range
from tirfun.analysis.arith.iter_map import simplify_index
from tirfun.rewrites import compute_location as CL
from tirfun.rewrites import dataflow as DF
from tirfun.rewrites.base import Checks, Site, _Stop
from tirfun.rewrites.dataflow import (
    bindings, blocks_in_order, indexed_scope_blocks, program_key, reads_of, scope_children, scope_of, writes_of,
)
from tirfun.rewrites.index import index_of
from tirfun.testing.block_programs import random_block_program
from tirfun.testing.schedules import random_block_schedule
from tirfun.testing.stage_programs import random_stage_program


@functools.cache
def _modules() -> tuple:
    """Random stage and block programs, as drawn and after random schedules
    (splits, fuses and caches give the sums the shortcut reads); drawn once
    for all the tests here (modules are immutable)."""
    out = []
    for seed in range(25):
        for mod in (IRModule({"main": random_stage_program(seed)}), random_block_program(seed)):
            out.append(mod)
            try:
                out.append(random_block_schedule(mod, seed, max_steps=4)(mod))
            except Exception:  # a schedule that does not apply: the program alone
                pass
    return tuple(out)


def _realizes(func):
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    return [(p, s) for p, s in walk_stmts(func) if isinstance(s, BlockRealize) and s.block is not root]


def test_bound_substituted_is_bound_region():
    """Relaxing any suffix of the loops above each block, over each region
    it reads or writes, the shortcut's intervals are bound_region's."""
    compared = 0
    for mod in _modules():
        func = mod["main"]
        for path, realize in _realizes(func):
            loops = [n for _, n in ancestors(func, path) if isinstance(n, For)]
            for k in range(len(loops) + 1):
                dom = {l.loop_var: Range(l.min, l.extent) for l in loops[k:]}
                for region in list(realize.block.reads) + list(realize.block.writes):
                    bind = bindings(realize)
                    assert CL._bound_substituted(region, dom, bind) == bound_region(region, dom, bind)
                    compared += 1
    assert compared > 1000


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "bool"])
def test_domain_last_is_the_simplified_sum(dtype):
    """Literal ends of every signed dtype, up to and past its limits, and
    the dtypes the shortcut leaves to the general path."""
    values = [0, 1, 2, 5, 100, 126, 127, 128, 2**31 - 2, 2**31 - 1, 2**63 - 2, -1, -128, -2**31]
    for a in values:
        for b in values:
            try:
                dom = Range(IntImm(dtype, a), IntImm(dtype, b))
            except Exception:  # not a value of the dtype
                continue
            try:
                want = simplify_index(dom.min + dom.extent - 1)
            except Exception as err:
                with pytest.raises(type(err)):
                    CL._domain_last(dom)
                continue
            got = CL._domain_last(dom)
            assert got == want and got.dtype == want.dtype, (a, b)


def test_indexed_scope_blocks_are_the_children_and_the_blocks_in_order():
    """For every block's buffers, the children and the keyed blocks found
    at once are scope_children's and blocks_in_order's, keys included."""
    compared = 0
    for mod in _modules():
        func = mod["main"]
        site = Site(mod, "main", func, index_of(func))
        for path, realize in _realizes(func):
            scope = scope_of(site, path)
            touching = reads_of(realize.block) | writes_of(realize.block)
            found = indexed_scope_blocks(site, scope, touching)
            if found is None:
                continue
            children, keyed = found
            assert children == scope_children(site, scope, touching)
            assert [(p, r) for _, p, r in keyed] == blocks_in_order(site, scope, touching)
            assert all(key == program_key(site, p) for key, p, _ in keyed)
            compared += 1
    assert compared > 100


def _outcome(record, mod):
    """What applying ``record`` gives: its failed checks (class and
    message), or the rewritten module."""
    errors = record.violations(mod)
    if errors:
        return [(type(e), str(e)) for e in errors]
    return record(mod)


def _block_and_loop_pairs():
    """(module, block name, loop name) for every block and every loop of
    the test modules: compute_at's and reverse_compute_at's arguments, valid
    or not."""
    for mod in _modules():
        func = mod["main"]
        loops = [s.loop_var.name for _, s in walk_stmts(func) if isinstance(s, For)]
        for _, realize in _realizes(func):
            for loop in loops:
                yield mod, realize.block.name_hint, loop


def test_whole_writer_cover_gives_the_general_check_s_answer(monkeypatch):
    """compute_at and reverse_compute_at of every block under every loop of
    its scope: the same failed checks, or the same module, when every
    region cover is left to general_cover_violation."""
    fast = DF.whole_writer_covers
    fired = []

    def counted(*args):
        covered = fast(*args)
        fired.append(covered)
        return covered

    compared = 0
    for mod, name, loop in _block_and_loop_pairs():
        for record in (CL.compute_at(name, loop), CL.reverse_compute_at(name, loop)):
            monkeypatch.setattr(DF, "whole_writer_covers", counted)
            got = _outcome(record, mod)
            monkeypatch.setattr(DF, "whole_writer_covers", lambda *args: False)
            want = _outcome(record, mod)
            assert got == want, (record, mod.script())
            compared += 1
    monkeypatch.setattr(DF, "whole_writer_covers", fast)
    assert compared > 1000 and sum(fired) > 100


def test_keyed_using_is_blocks_in_order():
    """The blocks picked for some of a block's buffers from those found for
    all of them are blocks_in_order's for those buffers, keys included."""
    compared = 0
    for mod in _modules():
        func = mod["main"]
        site = Site(mod, "main", func, index_of(func))
        for path, realize in _realizes(func):
            try:
                loc = CL._locate(Checks("test"), site, CL.as_block_ref(realize.block.name_hint))
            except _Stop:  # a name the function binds twice
                continue
            if loc.keyed is None:
                continue
            block = loc.realize.block
            mine = reads_of(block) | writes_of(block)
            for buffers in [reads_of(block), writes_of(block), mine] + [[b] for b in mine]:
                got = CL._keyed_using(site, loc, buffers)
                assert [(p, r) for _, p, r in got] == blocks_in_order(site, loc.scope, buffers)
                assert all(key == program_key(site, p) for key, p, _ in got)
                compared += 1
    assert compared > 300


def test_moves_state_the_index_of_their_result(monkeypatch):
    """compute_at and reverse_compute_at of every block under every loop of
    its scope, into a loop of one statement or of several, with unit loops
    kept or not: the index they state is the one built afresh."""
    from test_rewrites_index import _index_is_the_built_one, _spy

    used = _spy(monkeypatch, CL, "derive_move_index")
    checked = 0
    for mod, name, loop in _block_and_loop_pairs():
        for keep in (False, True):
            for record in (CL.compute_at(name, loop, keep), CL.reverse_compute_at(name, loop, keep)):
                if record.violations(mod):
                    continue
                _index_is_the_built_one(record(mod)["main"], record)
                checked += 1
    assert checked > 100 and sum(used) > 100


def test_outer_points_are_the_produced_region(monkeypatch):
    """What every block writes while each suffix of the loops above it
    runs: the same intervals, or None, with the plain reading of indices
    at outer variables taken and with it left to the general path."""
    fast = DF._outer_points
    fired = []

    def counted(*args):
        got = fast(*args)
        fired.append(got is not None)
        return got

    compared = 0
    for mod in _modules():
        func = mod["main"]
        site = Site(mod, "main", func, index_of(func))
        for path, realize in _realizes(func):
            tops = [p for p, n in ancestors(func, path) if isinstance(n, For)]
            for top in tops:
                for region in realize.block.writes:
                    monkeypatch.setattr(DF, "_outer_points", counted)
                    got = DF.produced_region(site, path, realize, region, top)
                    monkeypatch.setattr(DF, "_outer_points", lambda *args: None)
                    want = DF.produced_region(site, path, realize, region, top)
                    assert got == want, (realize.block.name_hint, top)
                    compared += 1
    assert compared > 300 and sum(fired) > 50


def test_tile_of_one_element_at_a_variable_is_the_affine_reading():
    """Every region of every block, and each at every variable of the
    block, one element wide: the tile found, or None, is what the affine
    form of the start gives."""
    compared = 0
    for mod in _modules():
        for _, realize in _realizes(mod["main"]):
            block = realize.block
            ivs = {iv.var: iv for iv in block.iter_vars}
            ranges = [rng for r in list(block.reads) + list(block.writes) for rng in r.region]
            ranges += [Range(iv.var, IntImm(iv.var.dtype, 1)) for iv in block.iter_vars]
            for rng in ranges:
                e = CL.int_value(rng.extent)
                if e is None or e < 1:
                    continue
                assert CL._tile(rng, ivs) == CL._affine_tile(rng, ivs, e)
                compared += 1
    assert compared > 500


def test_literal_loop_is_the_interval_evaluation():
    """The loop variables above every block, and the bindings they give:
    the interval of a variable over literals is eval_interval's; anything
    else is left to it."""
    from tirfun.analysis.arith.int_set import Interval, eval_interval

    taken = 0
    for mod in _modules():
        func = mod["main"]
        for path, realize in _realizes(func):
            proof = {n.loop_var: Range(n.min, n.extent) for _, n in ancestors(func, path) if isinstance(n, For)}
            loops = {v: Interval.from_range(r) for v, r in proof.items()}
            for e in list(proof) + list(realize.iter_values):
                got = CL._literal_loop(e, proof)
                if got is not None:
                    assert got == eval_interval(e, loops)
                    taken += 1
                else:
                    assert not (type(e) is CL.Var and e in proof and all(
                        type(x) is IntImm for x in (loops[e].lo, loops[e].hi)))
    assert taken > 200


def test_stmt_nodes_are_the_walk_s_statements():
    """Under every statement of every program: the statements (loops among
    them, which _check_threads takes), in the walk's order."""
    compared = 0
    for mod in _modules():
        for _, stmt in walk_stmts(mod["main"].body):
            assert list(stmt_nodes(stmt)) == [n for _, n in walk_stmts(stmt)]
            assert list(stmt_nodes(stmt, skip_init=True)) == [n for _, n in walk_stmts(stmt, skip_init=True)]
            compared += 1
    assert compared > 1000


def test_path_walks_are_the_ancestors_reading():
    """loops_between, loop_domains and common_ancestor, which walk down a
    path once, give what reading the ancestors with their paths gives, for
    every block and every statement above it (and paths off it)."""
    from tirfun.rewrites.dataflow import common_ancestor, is_under, loop_domains, loops_between

    compared = 0
    for mod in list(_modules())[::3]:
        func = mod["main"]
        site = Site(mod, "main", func, index_of(func))
        paths = [p for p, _ in walk_stmts(func)]
        for path, _ in _realizes(func):
            above = ancestors(func, path)
            for top in [p for p, _ in above] + [path, path + (("block", None),)]:
                assert loops_between(site, path, top) == [
                    n for p, n in above if isinstance(n, For) and is_under(p, top)]
                compared += 1
            for inclusive in (True, False):
                want = {n.loop_var: Range(n.min, n.extent) for _, n in above if isinstance(n, For)}
                assert list(loop_domains(site, path, inclusive=inclusive).items()) == list(want.items())
            for other in paths[::7]:
                k = 0
                while k < min(len(path), len(other)) and path[k] == other[k]:
                    k += 1
                p = path[:k]
                while p and not isinstance(site.at(p), (For, CL.Block)):
                    p = p[:-1]
                assert common_ancestor(site, path, other) == p
                compared += 1
        for path, node in walk_stmts(func):
            if isinstance(node, For):
                want = {n.loop_var: Range(n.min, n.extent) for _, n in ancestors(func, path) if isinstance(n, For)}
                assert loop_domains(site, path, inclusive=False) == want
                want[node.loop_var] = Range(node.min, node.extent)
                assert list(loop_domains(site, path).items()) == list(want.items())
    assert compared > 300
