"""The indexes block primitives state from what they know, without walking
what they kept, are the ones built afresh: every path leads to its loop or
block, the names counted are those bound, and the table of mentions is
the one a walk finds."""

import pytest

import tirfun.rewrites as R
from tirfun.analysis.traversal import get_at
from tirfun.nodes import IRModule
from tirfun.rewrites import index as I
from tirfun.rewrites.index import build_index, index_of
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent


def _mod(source: str) -> IRModule:
    return IRModule({"main": from_source(source)})


def _is_the_built_one(func) -> None:
    derived = index_of(func)
    assert derived == build_index(func)
    for name, path in derived.loops.items():
        assert get_at(func, path).loop_var.name == name
    for name, path in derived.blocks.items():
        assert get_at(func, path).name_hint == name


def _spy(monkeypatch, module, name) -> list:
    """Record each call of ``module.name`` (a shortcut of the index)."""
    calls = []
    original = getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


# the block alone in its loop: a sequence of the stages takes its place
ALONE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
    for i2 in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i2)
            A[vi] = A[vi] * T.float32(2)
"""

# the block an item of its loop's sequence, with items after it; a Let in
# its store, whose name must still count once
BESIDE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi]
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi], A[vi])
            T.writes(B[vi])
            z = T.float32()
            B[vi] = T.Let(B[vi] + z, where={z: A[vi]})
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            C[vi] = C[vi] + T.float32(1)
        for j in range(2):
            with T.block("E"):
                vj = T.axis.spatial(2, j)
                A[vj] = A[vj] + T.float32(1)
"""

# the block under an ``if`` of its loop, and a block nested in it that
# uses the buffer too: both realizes are rebuilt and mention the cache
NESTED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        if i < 7:
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.reads(B[vi], A[vi])
                T.writes(B[vi])
                for k in range(1):
                    with T.block("inner"):
                        vk = T.axis.spatial(1, k)
                        T.reads(B[vi], A[vi])
                        T.writes(B[vi])
                        B[vi] = B[vi] + A[vi + vk]
"""


@pytest.mark.parametrize("source", [ALONE, BESIDE, NESTED])
def test_cache_inplace_states_the_index_around_the_block_it_keeps(monkeypatch, source):
    kept = _spy(monkeypatch, I, "_kept_in_scope")
    mod = _mod(source)
    out = R.cache_inplace("B", 0, "local")(mod)
    assert kept == ["_kept_in_scope"]
    _is_the_built_one(out["main"])
    assert_equivalent(mod["main"], out["main"])
    # a rewrite that follows reads the stated index, and states its own from it
    split = R.split("i", [None, 2])(out)
    _is_the_built_one(split["main"])


def _answers(monkeypatch, module, name) -> list:
    """Record what each call of ``module.name`` (a check of the index) answered."""
    answers = []
    original = getattr(module, name)

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        answers.append(out)
        return out

    monkeypatch.setattr(module, name, spy)
    return answers


# a producer and readers: one reader's store binds a Let of its own, which
# inlining keeps; the producer of Q binds a Let, which each inlined copy binds again
INLINED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
    P = T.alloc_buffer((8,))
    Q = T.alloc_buffer((8,))
    D = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("P"):
            vi = T.axis.spatial(8, i)
            P[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            z = T.float32()
            C[vi] = T.Let(z + P[vi], where={z: P[vi] + T.float32(1)})
    for i in range(8):
        with T.block("Q"):
            vi = T.axis.spatial(8, i)
            w = T.float32()
            Q[vi] = T.Let(w * w, where={w: A[vi]})
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = Q[vi] + Q[vi]
    for i in range(6):
        with T.block("E"):
            vi = T.axis.spatial(6, i)
            E[vi] = D[vi] + T.float32(1)
"""

# the consumer reaches a part of what the producer writes: the producer's
# predicate gains the bounds
PARTIAL = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((6,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(6):
        with T.block("C"):
            vi = T.axis.spatial(6, i)
            C[vi] = B[vi] + T.float32(1)
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            A[vi] = A[vi] + T.float32(1)
"""


@pytest.mark.parametrize("source, step, told", [
    (INLINED, R.compute_inline("P"), [True]),      # the reader's own Let kept
    (INLINED, R.compute_inline("Q"), []),          # the value binds a Let: the reader is walked
    (INLINED, R.reverse_compute_inline("E"), [True]),
    (PARTIAL, R.reverse_compute_inline("C"), [True]),  # the producer's predicate bounded
])
def test_inlining_states_the_names_of_a_reader_it_does_not_walk(monkeypatch, source, step, told):
    answers = _answers(monkeypatch, I, "_same_reader")
    mod = _mod(source)
    out = step(mod)
    assert answers == told
    _is_the_built_one(out["main"])
    assert_equivalent(mod["main"], out["main"])
    split = R.split(next(iter(index_of(out["main"]).loops)), [None, 2])(out)
    _is_the_built_one(split["main"])


def test_inlining_random_programs_states_the_built_index(monkeypatch):
    from tirfun.testing.stage_programs import random_stage_program

    answers = _answers(monkeypatch, I, "_same_reader")
    checked = 0
    for seed in range(12):
        mod = IRModule({"main": random_stage_program(seed)})
        func = mod["main"]
        for block in _blocks(func):
            for record in (R.compute_inline(block), R.reverse_compute_inline(block)):
                if record.violations(mod):
                    continue
                _is_the_built_one(record(mod)["main"])
                checked += 1
    assert checked > 8 and sum(answers) > 4


def _blocks(func) -> list:
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import Block

    return [s.name_hint for _, s in walk_stmts(func) if type(s) is Block and s is not func.body.block]


def test_buffer_variables_are_those_a_walk_finds():
    # constant and variable dimensions, strides and offsets (told by their
    # type) and those that are sums and products (walked)
    from tirfun.nodes import Buffer, IntImm, Var
    from tirfun.rewrites.exprs import var_names

    n, m, s, off = (Var(x, "int32") for x in ("n", "m", "s", "off"))
    ptr = Var("ptr", "handle")
    four = IntImm("int32", 4)
    buffers = [
        Buffer("A", [four, four], elem_offset=IntImm("int32", 0), data=Var("A", "handle")),
        Buffer("B", [n, m * four], strides=[m, IntImm("int32", 1)], elem_offset=off, data=Var("B", "handle")),
        Buffer("C", [n + four], strides=[s * four], elem_offset=off * four),
        Buffer("D", [], data=ptr),
    ]
    from tirfun.testing.stage_programs import random_stage_program
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import Block

    for seed in range(5):
        func = random_stage_program(seed)
        buffers += list(func.buffer_map.values())
        buffers += [b for _, s in walk_stmts(func) if type(s) is Block for b in s.alloc_buffers]
    for buf in buffers:
        walked = set()
        for e in [*buf.shape, *buf.strides, buf.elem_offset, buf.data]:
            if e is not None:
                walked |= var_names(e)
        assert I.var_names_in_buffer(buf) == walked


def test_a_statement_taken_out_is_read_from_what_is_kept_as_a_walk_finds_it():
    # every statement of drawn programs (before and after a schedule, so
    # that loops and conditions outside blocks name buffers), at its own
    # path: first computed, then read back from what is kept
    from tirfun.analysis.traversal import walk_stmts

    from test_blockize_fast_paths import drawn_programs

    compared = 0
    for m in drawn_programs(4):
        for path, stmt in walk_stmts(m["main"]):
            if len(path) < 3:
                continue
            want_counts, want_realizes = {}, []
            want = I._scan(stmt, path, want_counts, -1, {}, realizes=want_realizes)
            want_counts = {k: v for k, v in want_counts.items() if v}
            for _ in range(2):
                counts, realizes = {}, []
                assert I._taken_out(stmt, path, counts, realizes) == want
                assert {k: v for k, v in counts.items() if v} == want_counts
                assert sorted(map(id, realizes)) == sorted(map(id, want_realizes))
            compared += 1
    assert compared > 100


LETS_IN_FIELDS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            z = T.int32()
            T.reads(A[T.Let(z, where={z: vi}):T.Let(z, where={z: vi}) + 1])
            T.writes(B[vi])
            B[vi] = A[vi]
"""


def test_a_block_whose_fields_are_plain_binds_what_the_walk_of_its_fields_finds():
    # the names counted for each block of drawn programs (and of one whose
    # region holds Let expressions), with and without the look at its
    # fields that spares the walk
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import Block
    from tirfun.testing.block_programs import random_block_program
    from tirfun.testing.stage_programs import random_stage_program

    funcs = [from_source(LETS_IN_FIELDS)]
    for seed in range(8):
        funcs += [random_stage_program(seed), random_block_program(seed)["main"]]
    compared = plain = 0
    for func in funcs:
        for _, block in walk_stmts(func):
            if type(block) is not Block:
                continue
            walked = {block.name_hint: 1}
            for iv in block.iter_vars:
                walked[iv.var.name] = walked.get(iv.var.name, 0) + 1
            for buf in [*block.alloc_buffers, *(m.buffer for m in block.match_buffers)]:
                I._buffer_names(buf, walked, 1)
            I._expr_lets(block, walked, 1)
            assert I._count_block_names(block) == walked
            compared += 1
            plain += I._plain_own_fields(block)
    assert compared > 50 and 0 < plain < compared


def test_a_realize_bound_by_plain_arithmetic_binds_what_the_walk_of_its_fields_finds():
    # bindings of variables, constants, sums and products after splits and
    # fuses, and a binding that holds a Let
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import BlockRealize
    from test_blockize_fast_paths import drawn_programs

    funcs = [from_source(LETS_IN_FIELDS.replace("            vi = T.axis.spatial(8, i)\n", """            w = T.int32()
            vi = T.axis.spatial(8, T.Let(w, where={w: i}))\n"""))]
    funcs += [mod["main"] for mod in drawn_programs(6)]
    compared = bound = lets = 0
    for func in funcs:
        for _, realize in walk_stmts(func):
            if type(realize) is not BlockRealize:
                continue
            walked: dict = {}
            I._expr_lets(realize, walked, 1)
            counts: dict = {}
            I._tally_one(realize, counts, 1)
            assert counts == walked
            compared += 1
            bound += any(type(v) not in I._LEAVES for v in realize.iter_values)
            lets += bool(walked)
    assert compared > 30 and bound > 10 and lets == 1
