"""read_at and write_at state the index of their result from what they
changed (``read_write_at._at_index``): it is the index derived by walking
what changed, and the one built from scratch, on the programs of the
primitives' own tests (copies with and without a fill, under thread loops,
and beside statements outside blocks, where the walk is kept). Where the
index shows no statement outside blocks naming a buffer, the walks for a
load or store outside blocks are skipped: there is none to find."""

from unittest import mock

import pytest

import tirfun.rewrites as R
from tirfun.analysis.traversal import walk_stmts
from tirfun.nodes import Block
from tirfun.rewrites import read_write_at
from tirfun.rewrites.base import Site
from tirfun.rewrites.index import build_index, index_of
from test_rewrites_read_write_at import (
    ACCUMULATE, GPU_MATMUL, LOOSE, LOOSE_AROUND, PREDICATED, READ_WRITE_READ, READS_BESIDE, STRIDED, TILED, TWO_PARTS,
    mod_of,
)

CASES = [
    (TILED, R.read_at("k0", "C", 0, "global") >> R.read_at("k0", "C", 1, "local")
     >> R.write_at("j0", "C", 0, "local"), True),
    (TILED, R.write_at("k1", "C", 0, "local"), True),
    (TILED, R.decompose_reduction("C", "k0") >> R.write_at("j0", "C_update", 0, "local"), True),
    (GPU_MATMUL, R.read_at("k0", "C", 0, "shared") >> R.read_at("k0", "C", 1, "shared")
     >> R.write_at("tx", "C", 0, "shared"), True),
    (STRIDED, R.write_at("i0", "B", 0, "local"), True),
    (ACCUMULATE, R.write_at("i0", "B", 0, "local"), True),
    (PREDICATED, R.write_at("i0", "B", 0, "local"), True),
    (TWO_PARTS, R.write_at("i0", "B1", 0, "local"), True),
    (READS_BESIDE, R.write_at("i0", "B", 0, "local"), True),
    (READ_WRITE_READ, R.write_at("i0", "W", 0, "local"), True),
    # statements outside blocks: the index is derived by the walk
    (LOOSE_AROUND, R.read_at("i0", "W", 1, "local"), False),
]


@pytest.mark.parametrize("src, pipeline, stated", CASES)
def test_the_stated_index_is_the_derived_and_the_built_one(src, pipeline, stated):
    mod = mod_of(src)
    answers = []

    def recorded(*args):
        out = at_index(*args)
        answers.append(out is not None)
        return out

    at_index = read_write_at._at_index
    with mock.patch.object(read_write_at, "_at_index", recorded):
        after = pipeline(mod)
    assert answers and all(answers) == stated
    with mock.patch.object(read_write_at, "_at_index", lambda *a: None):
        walked = pipeline(mod)
    assert after == walked
    assert index_of(after["main"]) == index_of(walked["main"]) == build_index(after["main"])


def test_a_loop_the_index_shows_free_of_loose_statements_has_no_load_or_store_outside_blocks():
    found = []
    for src in [TILED, GPU_MATMUL, STRIDED, READ_WRITE_READ, LOOSE_AROUND, LOOSE]:
        mod = mod_of(src)
        func = mod["main"]
        index = index_of(func)
        site = Site(mod, "main", func, index)
        buffers = list(func.buffer_map.values()) + [b for _, s in walk_stmts(func) if isinstance(s, Block)
                                                    for b in s.alloc_buffers]
        for path in index.loops.values():
            items, _ = read_write_at._items(site.at(path), path)
            loose = [read_write_at._loose_access(item, buf) for item in items for buf in buffers]
            if not read_write_at._may_hold_loose(site, path):
                assert loose == [None] * len(loose), (src, path)
            found.append(any(x is not None for x in loose))
    assert any(found)  # the loose programs have loops whose body loads or stores outside blocks
