"""The name index derived across random edits of a long sequence (items
rebuilt, inserted, deleted and swapped anywhere, wrapped into a new block
and taken out of it again, held twice, loops whose extent loads from a
buffer among them) is the index built from scratch, and the items it says use a buffer
are those that name it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tirfun.analysis.mentions import names_in
from tirfun.nodes import Block, BlockRealize, IntImm, SeqStmt
from tirfun.nodes.base import with_fields
from tirfun.rewrites.index import build_index, derive_index
from tirfun.script import from_source

N = 8
SEQ = (("body", None), ("block", None), ("body", None))


def _source(prefix: str, loose: frozenset) -> str:
    lines = ['@T.prim_func',
             f'def main(A: T.Buffer(({N}, 8), "float32"), B: T.Buffer(({N},), "float32"), '
             f'C: T.Buffer(({N},), "float32"), L: T.Buffer((1,), "int32")):']
    for k in range(N):
        out = "B" if k % 2 else "C"
        extent = "L[0]" if k in loose else "8"
        lines += [f'    for {prefix}l{k} in range({extent}):',
                  f'        with T.block("{prefix}B{k}"):',
                  f'            v = T.axis.reduce(8, {prefix}l{k})',
                  '            with T.init():',
                  f'                {out}[{k}] = T.float32(0)',
                  f'            {out}[{k}] = {out}[{k}] + A[{k}, v]']
    return "\n".join(lines)


def _items(func) -> list:
    return list(func.body.block.body.seq)


def _with_items(func, items):
    root = func.body.block
    return with_fields(func, body=with_fields(func.body, block=with_fields(root, body=SeqStmt(items))))


_edit = st.one_of(
    st.tuples(st.just("replace"), st.integers(0, 3 * N), st.integers(0, N - 1)),
    st.tuples(st.just("insert"), st.integers(0, 3 * N), st.integers(0, N - 1)),
    st.tuples(st.just("delete"), st.integers(0, 3 * N), st.just(0)),
    st.tuples(st.just("swap"), st.integers(0, 3 * N), st.integers(0, 3 * N)),
    st.tuples(st.just("wrap"), st.integers(0, 3 * N), st.just(0)),
    st.tuples(st.just("unwrap"), st.integers(0, 3 * N), st.just(0)),
    st.tuples(st.just("copy"), st.integers(0, 3 * N), st.integers(0, 3 * N)),
)


def _wrapped(item, name: str):
    """``item`` (the same object) as the body of a new block: its
    statements move from outside every block to inside one."""
    return BlockRealize([], IntImm("bool", 1), Block([], [], [], name, item))


@settings(max_examples=max(settings().max_examples, 30))
@given(loose=st.frozensets(st.integers(0, N - 1), max_size=4),
       fresh_loose=st.frozensets(st.integers(0, N - 1), max_size=2),
       rounds=st.lists(st.lists(_edit, min_size=1, max_size=4), min_size=1, max_size=3))
def test_derived_index_after_random_sequence_edits_is_the_built_one(loose, fresh_loose, rounds):
    func = from_source(_source("", loose))
    pool = _items(from_source(_source("X", fresh_loose)))
    unused = list(range(N))
    wraps = 0
    index = build_index(func)
    for edits in rounds:
        items = _items(func)
        for kind, p, q in edits:
            p %= len(items) + (kind == "insert")
            if kind in ("replace", "insert"):
                if not unused:
                    continue
                fresh = pool[unused.pop(q % len(unused))]
                if kind == "replace" and items:
                    items[p % len(items)] = fresh
                else:
                    items.insert(p, fresh)
            elif kind == "delete" and len(items) > 1:
                del items[p % len(items)]
            elif kind == "swap" and items:
                a, b = p % len(items), q % len(items)
                items[a], items[b] = items[b], items[a]
            elif kind == "wrap":
                items[p % len(items)] = _wrapped(items[p % len(items)], f"W{wraps}")
                wraps += 1
            elif kind == "copy" and items:
                # the same statement twice: its names are bound twice (a clash)
                items.insert(p % len(items), items[q % len(items)])
            elif kind == "unwrap":
                item = items[p % len(items)]
                if type(item) is BlockRealize and item.block.name_hint.startswith("W"):
                    items[p % len(items)] = item.block.body  # out of the block again
        new = _with_items(func, items)
        index = derive_index(index, SEQ, func.body.block.body, new.body.block.body, new, func)
        func = new
        assert index == build_index(func), edits
        for names in ({"A"}, {"B"}, {"C"}, {"L"}, {"B", "C"}):
            got = index.items_naming(SEQ, names)
            if got is not None:
                assert got == [k for k, item in enumerate(items) if names & names_in(item)], names
            else:
                assert index.loose or index.clashes  # the only reasons here the index cannot tell


def test_the_index_tells_where_no_loose_statement_is():
    func = from_source(_source("", frozenset()))
    assert build_index(func).items_naming(SEQ, {"B"}) == list(range(1, N, 2))
    assert build_index(from_source(_source("", frozenset({3})))).items_naming(SEQ, {"B"}) is None


def test_a_loose_loop_moved_into_a_block_and_out_again_stops_and_starts_counting():
    func = from_source(_source("", frozenset({2})))
    index = build_index(func)
    assert index.loose == 1
    for items in (lambda xs: xs[:2] + [_wrapped(xs[2], "W0")] + xs[3:],
                  lambda xs: xs[:2] + [xs[2].block.body] + xs[3:]):
        new = _with_items(func, items(_items(func)))
        index = derive_index(index, SEQ, func.body.block.body, new.body.block.body, new, func)
        func = new
        assert index == build_index(func)
    assert index.loose == 1
