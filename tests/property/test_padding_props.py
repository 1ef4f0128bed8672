"""Properties of decompose_padding (and loop_partition and the region hints
drawn with it) on random padded stages (conv2d's
padding with random amounts on each side, dtypes and pad values, read by a
stencil or a window sum), split with factors that need not divide, and on
general random programs: the result keeps its meaning under the interpreter
bit for bit, compiles to what the interpreter computes, replays from its
trace, and any application either applies or raises a ScheduleError;
``can_decompose_padding`` says which."""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
import tirfun.rewrites as R
from tirfun import IRModule
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.traversal import walk_stmts
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.interp import run as interp_run
from tirfun.nodes import Block, For
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing._choices import DrawChooser, RandomChooser
from tirfun.testing.draw_padding import DRAWERS, padded_programs, random_padded_module
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs
from tirfun.testing.programs import prim_funcs


def _apply(ch, mod: IRModule, count: int) -> Schedule:
    sch = Schedule(mod)
    for _ in range(count):
        rewrite = DRAWERS[ch.choice(sorted(DRAWERS))](ch, sch.mod)
        if rewrite is not None:
            sch.apply(rewrite)
    return sch


# each example interprets and compiles a program: half of CI's 300 (the
# soak draws twenty times as many)
@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(padded_programs(), st.data())
def test_decompose_padding_keeps_meaning_compiles_and_replays(mod, data):
    ch = DrawChooser(data.draw)
    sch = _apply(ch, mod, ch.integer(1, 3))
    out = sch.mod
    verify(out)
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    assert_equivalent(mod["main"], out["main"])
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == out
    if data.draw(st.integers(0, 2), label="build") == 0:
        func = out["main"]
        args = random_inputs(func, np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed")))
        expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        interp_run(func, *expected)
        tirfun.build(out, target="llvm")(*actual)
        for p, x, y in zip(func.params, expected, actual):
            if isinstance(x, np.ndarray):
                problem = compare_arrays(p.name, x, y, func.buffer_map[p].dtype)
                assert problem is None, problem


@given(st.one_of(padded_programs(), prim_funcs(max_blocks=3).map(lambda f: IRModule({"main": f}))),
       st.data())
def test_any_decompose_padding_applies_or_raises_and_can_decompose_padding_says_which(mod, data):
    func = mod["main"]
    blocks = [s.name_hint for _, s in walk_stmts(func) if isinstance(s, Block) and s is not func.body.block]
    loops = [s.loop_var.name for _, s in walk_stmts(func) if isinstance(s, For)]
    if not blocks or not loops:
        return
    block = data.draw(st.sampled_from(blocks), label="block")
    loop = data.draw(st.sampled_from(loops), label="loop")
    can = Schedule(mod).can_decompose_padding(block, loop)
    rewrite = R.decompose_padding(block, loop)
    try:
        out = rewrite(mod)
    except ScheduleError as err:
        assert isinstance(err, R.RewriteError) and str(err).startswith("decompose_padding: ")
        assert not can
        return
    assert can
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_decompose_padding_and_loop_partition_are_drawn():
    counts = collections.Counter()
    for seed in range(30):
        sch = _apply(RandomChooser(seed), random_padded_module(seed), 3)
        counts.update(r.primitive for r in sch.trace.rewrites)
    assert counts["decompose_padding"] >= 10 and counts["loop_partition"] >= 10, counts


@st.composite
def skipping_einsums(draw):
    """(source, padding, scoped) of an einsum block writing an output,
    elementwise or a sum, that may skip instances: under an ``if`` on its
    loops, or in a loop ``r`` binding no iteration variable whose extent
    (the parameter ``n``) may be zero, or neither; and a padding of its
    variables. ``scoped`` (elementwise only): the block is to be blockized
    at its inner loop first, so that it indexes its rows by the new block's
    variable, fixed in each instance of its scope."""
    n, m = draw(st.integers(2, 5), label="rows"), draw(st.integers(1, 4), label="cols")
    kind = draw(st.sampled_from(["elementwise", "sum"]), label="kind")
    skip = draw(st.sampled_from(["if", "repeat", "none"] + (["scoped"] if kind == "elementwise" else [])),
                label="skip")
    bound = draw(st.integers(0, n), label="rows kept")
    if kind == "sum":
        header = f"for i, k in T.grid({n}, {m}):"
        block = f'''with T.block("B"):
    vi, vk = T.axis.remap("SR", [i, k])
    with T.init():
        B[vi] = 0
    B[vi] = B[vi] + A[vi, vk]'''
        out_shape, cond = f"({n},)", f"i < {bound}"
    else:
        header = f"for i, j in T.grid({n}, {m}):"
        block = f'''with T.block("B"):
    vi, vj = T.axis.remap("SS", [i, j])
    B[vi, vj] = A[vi, vj] * 2'''
        out_shape, cond = f"({n}, {m})", f"i < {bound}"
    inner = block
    if skip == "if":
        inner = f"if {cond}:\n" + "    " + inner.replace("\n", "\n    ")
    nest = header + "\n" + "    " + inner.replace("\n", "\n    ")
    if skip == "repeat":
        nest = "for r in range(n):\n    " + nest.replace("\n", "\n    ")
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "int32"), B: T.Buffer({out_shape}, "int32"), n: T.int32):
    {nest.replace(chr(10), chr(10) + "    ")}
'''
    padding = [draw(st.integers(1, 3), label="pad i"), draw(st.integers(1, 3), label="pad j/k")]
    return src, padding, skip == "scoped"


@given(skipping_einsums(), st.integers(-1, 2), st.integers(0, 2**16))
def test_pad_einsum_of_a_block_that_may_skip_instances_keeps_what_it_skips(case, n, seed):
    # TVM copies the whole padded output back, over elements the skipped
    # instances never wrote, and so it does for a block in a scope whose
    # variable indexes the output: each instance of the scope writes its
    # row, and copied back whole, the others from elements never written
    src, padding, scoped = case
    mod = IRModule({"main": from_source(src)})
    if scoped:
        mod = R.blockize("j")(mod)
        (inner,) = [b for _, b in walk_stmts(mod["main"]) if isinstance(b, Block) and b.name_hint == "B"]
        padding = padding[1:1 + len(inner.iter_vars)]
    out = R.pad_einsum("B", padding)(mod)
    verify(out)
    args = random_inputs(mod["main"], np.random.default_rng(seed))
    args[-1] = n
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp_run(mod["main"], *expected)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp_run(out["main"], *got)
    np.testing.assert_array_equal(got[1], expected[1])


@st.composite
def einsums_with_following_loops(draw):
    """(source, padding) of a sum over ``k`` whose range follows the row
    loop ``i`` (a lower or upper triangle, a band), and a padding of both
    variables."""
    n, m = draw(st.integers(2, 6), label="rows"), draw(st.integers(2, 6), label="cols")
    shape = draw(st.sampled_from(["lower", "upper", "band"]), label="shape")
    if shape == "lower":
        m = max(m, n)
        loop = "for k in range(i + 1):"
    elif shape == "upper":
        loop = f"for k in range(i, {m}):" if n <= m else f"for k in range(T.min(i, {m}), {m}):"
    else:
        loop = f"for k in range(T.max(i - 1, 0), T.min(i + 2, {m})):"
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n}, {m}), "int32"), B: T.Buffer(({n},), "int32")):
    for i in range({n}):
        {loop}
            with T.block("B"):
                vi = T.axis.spatial({n}, i)
                vk = T.axis.reduce({m}, k)
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk] * (vk + 1)
'''
    padding = [draw(st.integers(1, 4), label="pad i"), draw(st.integers(1, 4), label="pad k")]
    return src, padding


@given(einsums_with_following_loops(), st.integers(0, 2**16))
def test_pad_einsum_of_a_loop_whose_range_follows_a_padded_loop_keeps_the_meaning(case, seed):
    # in the rows the padding adds, k's range follows i past k's domain;
    # TVM's result then reads past the padded buffer (k = 8 at i = 8 in
    # range(i + 1) over 8 columns)
    src, padding = case
    mod = IRModule({"main": from_source(src)})
    out = R.pad_einsum("B", padding)(mod)
    verify(out)
    args = random_inputs(mod["main"], np.random.default_rng(seed))
    expected = [a.copy() for a in args]
    interp_run(mod["main"], *expected)
    got = [a.copy() for a in args]
    interp_run(out["main"], *got)
    np.testing.assert_array_equal(got[1], expected[1])
    compiled = [a.copy() for a in args]
    tirfun.build(out)(*compiled)
    np.testing.assert_array_equal(compiled[1], expected[1])


_DIVIDING_EINSUM = """
@T.prim_func
def main(A: T.Buffer(({n},), "{dt}"), B: T.Buffer(({n},), "{dt}"), C: T.Buffer(({n},), "{dt}")):
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            C[vi] = A[vi] {op} ({divisor})
"""

#: divisors, and whether the iterations the padding adds, [n, padded),
#: may divide by zero (the padded copy of B holds zeros there)
_DIVISORS = [("B[vi]", lambda n, padded: True), ("B[vi] * T.{dt}(-1)", lambda n, padded: True),
             ("vi - T.{dt}(9)", lambda n, padded: n <= 9 < padded), ("vi + T.{dt}(1)", lambda n, padded: False),
             ("T.{dt}(3)", lambda n, padded: False), ("T.{dt}(-2)", lambda n, padded: False)]


@settings(max_examples=max(10, settings().max_examples // 3))
@given(st.integers(1, 9), st.integers(2, 8), st.sampled_from(_DIVISORS), st.sampled_from(["//", "%"]),
       st.sampled_from(["int32", "int64", "int8"]))
def test_pad_einsum_of_an_integer_division_is_refused_where_the_padding_reaches_the_divisor(n, pad, divisor, op, dt):
    text, zero_in = divisor
    may_be_zero = zero_in(n, -(-n // pad) * pad)
    mod = IRModule({"main": from_source(_DIVIDING_EINSUM.format(n=n, dt=dt, op=op, divisor=text.format(dt=dt)))})
    rewrite = R.pad_einsum("C", [pad])
    if n % pad == 0:
        assert not rewrite.violations(mod)  # nothing to pad: nothing new divides
        return
    if may_be_zero:
        errors = rewrite.violations(mod)
        assert errors and isinstance(errors[0], R.PaddedDivisionError), errors
        return
    out = rewrite(mod)
    rng = np.random.default_rng(n * 10 + pad)
    a = rng.integers(-50, 50, n).astype(dt)
    b = rng.integers(1, 5, n).astype(dt)
    want, got, built = (np.zeros(n, dt) for _ in range(3))
    interp_run(mod, a, b, want)
    interp_run(out, a, b, got)
    tirfun.build(out)(a, b, built)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(built, want)


BESIDE_DTYPES = ("float32", "int32", "float64", "int64", "int8", "uint8", "float16", "bfloat16")


@st.composite
def einsums_with_stages_beside(draw):
    """(module, padding): a sum ``C[i, j] = sum_k A[i, k] * B[k, j]`` of a
    drawn dtype and sizes, with cache stages of its input and output moved
    under its row loop (``cache_read`` + ``compute_at``, ``cache_write`` +
    ``reverse_compute_at``, or both), which use the buffers the padding
    pads, and a padding of its three variables."""
    m, n, k = (draw(st.integers(1, 5), label=name) for name in ("rows", "cols", "steps"))
    dtype = draw(st.sampled_from(BESIDE_DTYPES), label="dtype")
    src = f'''
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "{dtype}"), B: T.Buffer(({k}, {n}), "{dtype}"), C: T.Buffer(({m}, {n}), "{dtype}")):
    for i, j, r in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.{dtype}(0)
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
'''
    sch = Schedule(IRModule({"main": from_source(src)}))
    stages = draw(st.sampled_from(["read", "write", "both"]), label="stages")
    if stages in ("read", "both"):
        copy = sch.cache_read("C", draw(st.sampled_from([0, 1]), label="input"), "local")
        sch.compute_at(copy, sch.get_loops("C")[0])
    if stages in ("write", "both"):
        copy = sch.cache_write("C", 0, "local")
        sch.reverse_compute_at(copy, sch.get_loops("C")[0])
    padding = [draw(st.integers(1, 4), label=f"pad {v}") for v in "ijr"]
    return sch.mod, padding


# each example interprets, builds and runs a program: 60 of CI's 300
@settings(max_examples=max(1, settings().max_examples * 60 // 300))
@given(einsums_with_stages_beside(), st.integers(0, 2**16))
def test_pad_einsum_beside_cache_stages_under_its_loop_keeps_the_meaning(case, seed):
    # TVM pads the buffers the stages beside the block use for them too;
    # so does tirfun, copying each in and back whole around the statement
    mod, padding = case
    out = R.pad_einsum("C", padding)(mod)
    verify(out)
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    assert_equivalent(mod["main"], out["main"], seed=seed)
    args = random_inputs(mod["main"], np.random.default_rng(seed))
    expected = [a.copy() for a in args]
    interp_run(mod["main"], *expected)
    tirfun.build(out, target="llvm")(*args)
    for name, e, a, buf in zip("ABC", expected, args, mod["main"].params):
        problem = compare_arrays(name, e, a, mod["main"].buffer_map[buf].dtype)
        assert problem is None, problem


_SPLIT_OUTPUT = """
@T.prim_func
def main(x: T.handle, y: T.handle):
    m = T.int32()
    A = T.match_buffer(x, (ROWS, 4), "DT")
    B = T.match_buffer(y, (ROWS, 4), "DT")
    for i, j in T.grid(ROWS, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + A[vi, vj]
"""


@settings(max_examples=max(10, settings().max_examples // 5))
@given(st.sampled_from(["m", "12"]), st.sampled_from([(None, 2), (None, 5), (2, None), (3, None), (2, 2, None)]),
       st.sampled_from([5, 7, 8, 16]), st.sampled_from(["float32", "int32", "int8", "float16"]), st.integers(0, 2**16))
def test_pad_einsum_of_a_split_output_writes_what_the_copy_back_takes(rows, factors, pad, dtype, seed):
    # a split of the rows (dividing or not, into parts, twice; of a constant
    # or a run-time extent) then pad_einsum: where the split's guard cuts
    # the rows to their extent, the block writes every element the copy
    # back takes and no copy in is made (TVM makes none); either way the
    # meaning is kept, for every size, and the block's later moves apply
    from hypothesis import event

    src = _SPLIT_OUTPUT.replace("ROWS", rows).replace("DT", dtype)
    mod = IRModule({"main": from_source(src)})
    split = R.split("i", list(factors))(mod)
    out = R.pad_einsum("B", [pad, 1])(split)
    verify(out)
    names = [b.name_hint for _, b in walk_stmts(out["main"]) if isinstance(b, Block)]
    event("copied in" if "B_pad_in" in names else "no copy in")
    assert "B_pad_in" not in names, out["main"].script()
    inlined = R.compute_inline("B")(out)
    verify(inlined)
    rng = np.random.default_rng(seed)
    for m in ([int(x) for x in rng.integers(1, 30, size=2)] if rows == "m" else [0]):
        sizes = {"m": m} if rows == "m" else {}
        assert_equivalent(mod["main"], out["main"], sizes=sizes, seed=seed)
        assert_equivalent(mod["main"], inlined["main"], sizes=sizes, seed=seed)
