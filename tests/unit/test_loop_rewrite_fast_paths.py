"""The shortcuts of the loop primitives give what the general paths they
skip give, on the statements of many random programs:

* merge reads a nest body that is a chain of loops down to one block
  without walking it, and orders statement paths without building a key
  per path; it copies the nodes above the merged nest where their checks
  cannot fail;
* the loop checks take a literal 0 as a loop's start without simplifying
  it;
* several loop references naming no function resolve to ``main`` without
  asking each for a function.
"""

import random

import pytest

from tirfun import rewrites as R
from tirfun.analysis.traversal import replace_at, stmt_children, walk_stmts
from tirfun.nodes import Block, BlockRealize, For, IRModule
from tirfun.nodes.base import with_fields
from tirfun.rewrites.base import Checks
from tirfun.rewrites.checks import check_starts_at_zero, starts_at_zero, statements_outside_blocks
from tirfun.rewrites.buffer_swap import rebuilt_above
from tirfun.rewrites.loops import _runs_before
from tirfun.rewrites.merge_order import _parts
from tirfun.script import from_source
from tirfun.testing.block_programs import SOURCES, random_block_program


def _programs():
    return [random_block_program(seed, source) for seed in range(8) for source in SOURCES]


PROGRAMS = _programs()


def _statements():
    for mod in PROGRAMS:
        for func in mod.functions.values():
            yield from walk_stmts(func)


def _walked_parts(body):
    """What ``_parts`` gives, by the walk of the statements outside blocks."""
    if type(body) is BlockRealize:
        return [body], []
    loose = [s for _, s in statements_outside_blocks(body, ())]
    return [c for s in loose for _, c in stmt_children(s) if type(c) is BlockRealize], loose


def test_parts_of_a_chain_is_the_walk_s():
    chains = 0
    for _, stmt in _statements():
        if type(stmt) is For:
            realizes, loose = _parts(stmt)
            want_realizes, want_loose = _walked_parts(stmt)
            assert [id(r) for r in realizes] == [id(r) for r in want_realizes]
            assert [id(s) for s in loose] == [id(s) for s in want_loose]
            node = stmt
            while type(node) is For:
                node = node.body
            chains += type(node) is BlockRealize
    assert chains > 50  # the shortcut was taken


def test_copies_along_a_path_are_the_checked_rebuilds():
    # each statement but a block (merge replaces a loop or a sequence)
    # replaced by another of the program: the nodes above it, copied where
    # rebuilt_above copies, equal those rebuilt through their checks, of
    # the same hash; a block takes a block of its iteration variables
    rng = random.Random(1)
    for mod in PROGRAMS[::2]:
        func = mod["main"]
        stmts = [(p, s) for p, s in walk_stmts(func) if p and type(s) is not Block]
        for path, _ in rng.sample(stmts, min(6, len(stmts))):
            _, other = rng.choice(stmts)
            got = replace_at(func, path, other, rebuild=rebuilt_above)
            want = replace_at(func, path, other)
            assert got == want and hash(got) == hash(want)
        # a block replaced by one of the same iteration variables (reindex's edit)
        for path, block in walk_stmts(func):
            if type(block) is Block:
                other = with_fields(block, name_hint=block.name_hint + "_x")
                got, want = replace_at(func, path, other, rebuild=rebuilt_above), replace_at(func, path, other)
                assert got == want and hash(got) == hash(want)


def _key(path) -> tuple:
    return tuple((field, -1 if index is None else index) for field, index in path)


def test_runs_before_is_the_key_order():
    rng = random.Random(0)
    for mod in PROGRAMS[::4]:
        paths = [p for p, _ in walk_stmts(mod["main"])]
        for _ in range(200):
            a, b = rng.choice(paths), rng.choice(paths)
            assert _runs_before(a, b) == (_key(a) < _key(b)), (a, b)


def test_literal_zero_start_is_what_simplifying_gives():
    literal = 0
    for _, stmt in _statements():
        if type(stmt) is For:
            chk = Checks("split")
            check_starts_at_zero(chk, stmt)
            assert (not chk.errors) == starts_at_zero(stmt)
            literal += type(stmt.min).__name__ == "IntImm" and stmt.min.value == 0
    assert literal > 50


_TWO = """
@T.prim_func
def {name}(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for j in range(8):
        with T.block("C"):
            vj = T.axis.spatial(8, j)
            C[vj] = A[vj] + T.float32(1)
"""


def _described(errors) -> list:
    return [(type(e).__name__, str(e)) for e in errors]


@pytest.mark.parametrize("primitive", ["merge", "reorder"])
def test_references_naming_no_function_mean_main(primitive):
    funcs = {name: from_source(_TWO.format(name=name)) for name in ("main", "other")}
    mod = IRModule(funcs)
    make = R.merge if primitive == "merge" else R.reorder
    plain, pinned = make("i", "j"), make(R.LoopRef("i", "main"), R.LoopRef("j", "main"))
    assert _described(plain.violations(mod)) == _described(pinned.violations(mod))
    if primitive == "merge":
        assert plain(mod) == pinned(mod)
        assert plain(mod)["other"] is mod["other"]
    # without a main, references naming no function are refused as before
    lone = IRModule({"other": funcs["other"], "third": funcs["main"]})
    assert [name for name, _ in _described(plain.violations(lone))] == ["UnknownFunctionError"]
