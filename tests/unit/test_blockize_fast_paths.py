"""The shortcuts blockize (and tensorize, through it) takes give what the
general paths they skip give: the index blockize states for its result is
the one built afresh, and a block that binds other names (a Let, a declared
buffer) or a loop that names a buffer in its bounds is left to the
generic derivation."""

import importlib

import pytest

import tirfun.rewrites as R
from tirfun.analysis.traversal import walk_stmts
from tirfun.nodes import For, IRModule
from tirfun.rewrites.index import build_index, index_of
from tirfun.script import from_source
from tirfun.testing.block_programs import random_block_program
from tirfun.testing.schedules import random_block_schedule

from test_rewrites_index import _index_is_the_built_one
from test_rewrites_stated_index import _spy

BZ = importlib.import_module("tirfun.rewrites.blockize")

# a Let in the block's body, and a loop whose extent loads from a buffer
LET_BODY = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            z = T.float32()
            B[vi, vj] = T.Let(z * T.float32(2), where={z: A[vi, vj]})
"""

LOADED_EXTENT = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), N: T.Buffer((1,), "int32")):
    for i in range(8):
        for j in range(N[0]):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.opaque(4, j)
                B[vi, vj] = A[vi, vj]
"""


def _loops_and_modules():
    """Random block programs, as drawn and after a short random schedule,
    with each of their loops."""
    for seed in range(6):
        mod = random_block_program(seed)
        mods = [mod]
        try:
            mods.append(random_block_schedule(mod, seed, max_steps=3)(mod))
        except Exception:  # a schedule that does not apply: the program alone
            pass
        for m in mods:
            for _, stmt in walk_stmts(m["main"]):
                if isinstance(stmt, For):
                    yield m, stmt.loop_var.name


def test_the_stated_index_is_the_built_one(monkeypatch):
    used = _spy(monkeypatch, BZ, "_stated_index")
    checked = 0
    for mod, loop in _loops_and_modules():
        for preserve in (True, False):
            record = R.blockize(loop, preserve)
            if record.violations(mod):
                continue
            _index_is_the_built_one(record(mod)["main"], record)
            checked += 1
    assert checked > 40 and sum(used) > 40


@pytest.mark.parametrize("source, loop", [(LET_BODY, "j"), (LOADED_EXTENT, "j")])
def test_what_binds_other_names_is_left_to_the_derivation(monkeypatch, source, loop):
    used = _spy(monkeypatch, BZ, "_stated_index")
    mod = IRModule({"main": from_source(source)})
    out = R.blockize(loop)(mod)
    assert used == [False]
    assert index_of(out["main"]) == build_index(out["main"])
