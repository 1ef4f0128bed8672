"""The name index answers the scope queries of the block primitives: after
random block schedules, the blocks it lists as using a buffer are exactly
those a walk of the scope finds, in the same order, and the index derived
step by step is the index built from scratch."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tirfun.analysis.mentions import mentions_any
from tirfun.analysis.traversal import get_at, walk, walk_stmts
from tirfun.nodes import Block, Buffer
from tirfun.rewrites.base import Site
from tirfun.rewrites.checks import all_block_realizes, child_blocks
from tirfun.rewrites.dataflow import blocks_in_order, scope_children
from tirfun.rewrites.index import build_index, index_of
from tirfun.testing.block_programs import block_programs
from tirfun.testing.schedules import block_schedules

_BODY = ("body", None)


def _walked(func, scope, touching, nested):
    block = get_at(func, scope)
    start = scope + (_BODY,)
    if nested:
        return list(all_block_realizes(block.body, start, touching=touching))
    return [c for c in child_blocks(block, scope) if mentions_any(c[1], touching)]


@settings(max_examples=max(settings().max_examples // 3, 10))
@given(data=st.data())
def test_indexed_scope_queries_match_a_walk_of_the_scope(data):
    mod = data.draw(block_programs(), label="program")
    pipeline = data.draw(block_schedules(mod, max_steps=4), label="schedule")
    for step in pipeline:
        mod = step(mod)
        func = mod["main"]
        index = index_of(func)
        assert index == build_index(func), step
    if index.clashes:
        return
    site = Site(mod, "main", func, index)
    buffers = sorted({n for n in walk(func) if isinstance(n, Buffer)}, key=lambda b: b.name)
    scopes = [p for p, s in walk_stmts(func) if isinstance(s, Block)]
    for scope in scopes:
        for k, buf in enumerate(buffers):
            for touching in ({buf}, {buf, buffers[(k + 1) % len(buffers)]}):
                assert blocks_in_order(site, scope, touching) == _walked(func, scope, touching, True)
                assert scope_children(site, scope, touching) == _walked(func, scope, touching, False)


def _key_step_by_step(func, path):
    """``program_key`` as each step's position among the statement children."""
    from tirfun.rewrites.dataflow import _child_position

    key, node = [], func
    for step in path:
        key.append(_child_position(node, step))
        node = get_at(node, (step,))
    return tuple(key)


def _assert_keys(mod):
    from tirfun.rewrites.dataflow import program_key

    func = mod["main"]
    site = Site(mod, "main", func, index_of(func))
    paths = [p for p, _ in walk_stmts(func)]
    for p in paths:
        assert program_key(site, p) == _key_step_by_step(func, p), p
    # and so the keys order the statements as a pre-order walk meets them
    assert sorted(paths, key=lambda p: program_key(site, p)) == paths


@settings(max_examples=max(settings().max_examples // 3, 10))
@given(data=st.data())
def test_program_keys_count_each_step_among_the_statement_children(data):
    mod = data.draw(block_programs(), label="program")
    pipeline = data.draw(block_schedules(mod, max_steps=3), label="schedule")
    _assert_keys(pipeline(mod))


def test_program_keys_of_an_init_and_an_else_branch():
    from tirfun.nodes import IRModule
    from tirfun.script import from_source

    func = from_source('''
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        if i < 4:
            for k in range(8):
                with T.block("sum"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
        else:
            with T.block("copy"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi, 0]
''')
    _assert_keys(IRModule({"main": func}))
