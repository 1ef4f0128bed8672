"""Which names a subtree mentions: the cached answer that lets buffer
rewrites skip the statements that cannot use their buffer."""

import gc

from tirfun import rewrites as R
from tirfun.analysis.mentions import _CACHE, mentions, names_in
from tirfun.analysis.traversal import walk, walk_stmts
from tirfun.nodes import Buffer, IRModule, Var
from tirfun.script import from_source
from tirfun.testing.block_programs import SOURCES, random_block_program

SOURCE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    C = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)
    for k, l in T.grid(8, 8):
        with T.block("B"):
            vk, vl = T.axis.remap("SS", [k, l])
            B[vk, vl] = C[vk, vl] + T.float32(1)
"""


def _uses(node, buf: Buffer) -> bool:
    """Whether ``buf`` or its data pointer occurs under ``node``, by a full walk."""
    for n in walk(node):
        if isinstance(n, Buffer) and n.name == buf.name:
            return True
        if buf.data is not None and isinstance(n, Var) and n.name == buf.data.name:
            return True
    return False


def test_a_statement_mentions_the_buffers_it_uses_and_no_other():
    func = from_source(SOURCE)
    buffers = {b.name: b for b in func.body.block.alloc_buffers} | {b.name: b for b in func.buffer_map.values()}
    loops = {s.loop_var.name: s for _, s in walk_stmts(func) if hasattr(s, "loop_var")}
    assert mentions(loops["i"], buffers["A"]) and mentions(loops["i"], buffers["C"])
    assert not mentions(loops["i"], buffers["B"])
    assert not mentions(loops["k"], buffers["A"])
    assert {"i", "j", "vi", "vj", "A", "C"} <= names_in(loops["i"])


def test_the_answer_is_kept_per_statement_and_released_with_it():
    func = from_source(SOURCE)
    loop = func.body.block.body.seq[0]
    first = names_in(loop)
    assert names_in(loop) is first
    key = id(loop)
    assert key in _CACHE
    del func, loop, first
    gc.collect()
    assert key not in _CACHE


def test_mentions_agrees_with_a_full_walk_on_scheduled_programs():
    # every statement of seeded programs of every shape, before and after
    # seeded schedules (whose results share statements with their inputs):
    # a statement mentions a buffer exactly when a full walk finds it there
    from tirfun.testing.schedules import ALL_PRIMITIVES, random_block_schedule

    for seed in range(2 * len(SOURCES)):
        mod = random_block_program(seed, SOURCES[seed % len(SOURCES)])
        mods = [mod, random_block_schedule(mod, seed, max_steps=3, primitives=ALL_PRIMITIVES)(mod)]
        for m in mods:
            func = m["main"]
            buffers = {n.name: n for n in walk(func) if isinstance(n, Buffer)}
            for _, stmt in walk_stmts(func):
                for buf in buffers.values():
                    assert mentions(stmt, buf) == _uses(stmt, buf), (buf.name, stmt)


def test_a_buffer_rewrite_leaves_the_statements_that_do_not_use_it_as_they_were():
    mod = IRModule({"main": from_source(SOURCE)})
    out = R.set_scope("C", 0, "local")(mod)
    before, after = mod["main"].body.block.body.seq, out["main"].body.block.body.seq
    assert after[0] is not before[0] and after[1] is not before[1]  # both use C
    out = R.cache_read("B", 0, "local")(mod)
    after = out["main"].body.block.body.seq
    assert after[0] is before[0]  # the producer of C reads no cache


def test_pointer_buffers_are_those_a_full_walk_meets_in_its_order():
    # lowered code gives buffers data pointers; access detection asks only
    # for those, and must see them in the order a walk meets them
    from tirfun.analysis.mentions import pointer_buffers
    from tirfun.lower import lower

    for seed in range(len(SOURCES)):
        mod = random_block_program(seed, SOURCES[seed % len(SOURCES)])
        for func in (mod["main"], lower(mod)["main"]):
            for _, stmt in walk_stmts(func):
                expected = list(dict.fromkeys(n for n in walk(stmt) if isinstance(n, Buffer) and n.data is not None))
                assert list(pointer_buffers(stmt)) == expected
