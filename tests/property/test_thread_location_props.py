"""compute_at under thread-bound loops, on random programs and schedules.

A producer ``S`` (of a random storage scope, elementwise or a reduction) is
read through a random stencil by a consumer whose loop is split and bound
to blockIdx.x and threadIdx.x; compute_at places ``S`` under a random loop
of that nest. The result reads the same as the original with serial loops;
a ``local`` producer (each thread's own) runs on threads as it did, and a
``shared`` one does once its copy is shared out among the threads
(``fuse``, ``split``, ``bind``) and lowering has placed the barriers; a
reduction that threads would share is refused with ThreadOverlapError. The
shared-memory tiled matmul with random tiles computes the product bit for
bit on the interpreter's GPU. Traces replay from JSON.
"""

import numpy as np
from hypothesis import event, given, settings, strategies as st

import tirfun.rewrites as R
from tirfun.analysis.verify import verify
from tirfun.errors import InterpError, ScheduleError
from tirfun.examples import gpu_schedules
from tirfun.interp import compile_func, run
from tirfun.lower import lower
from tirfun.nodes import IRModule
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import random_inputs

SCOPES = ("shared", "local", "global", "warp")


@st.composite
def stencils(draw):
    """(source, taps, tx, reduce) of a two-stage program, the consumer's
    loop split so that it binds ``tx`` threads."""
    blocks = draw(st.integers(1, 2), label="blocks")
    tx = draw(st.sampled_from([1, 2, 4, 8]), label="threads")
    inner = draw(st.integers(1, 3), label="per thread")
    n = blocks * tx * inner
    taps = sorted(set(draw(st.lists(st.integers(0, 3), min_size=1, max_size=3), label="taps")))
    halo = taps[-1]
    scope = draw(st.sampled_from(SCOPES), label="scope")
    reduce = draw(st.booleans(), label="reduction")
    if reduce:
        producer = f'''
    for i, k in T.grid({n + halo}, 3):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]'''
        a_shape = f"({n + halo}, 3)"
    else:
        producer = f'''
    for i in range({n + halo}):
        with T.block("S"):
            vi = T.axis.spatial({n + halo}, i)
            S[vi] = A[vi] * T.float32(3) + T.float32(1)'''
        a_shape = f"({n + halo},)"
    value = " + ".join(f"S[vi + {t}]" for t in taps)
    src = f'''
@T.prim_func
def main(A: T.Buffer({a_shape}, "float32"), C: T.Buffer(({n},), "float32")):
    S = T.alloc_buffer(({n + halo},), scope="{scope}"){producer}
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            C[vi] = {value}
'''
    return src, scope, tx, inner, reduce


def _copy(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def _same(xs, ys):
    for x, y in zip(xs, ys):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()


@settings(max_examples=max(settings().max_examples // 3, 20))
@given(stencils(), st.data())
def test_compute_at_under_threads_keeps_meaning(program, data):
    src, scope, tx, inner, reduce = program
    original = IRModule({"main": from_source(src)})
    sch = Schedule(original)
    (i,) = sch.get_loops(sch.get_block("C"))
    bx, t, r = sch.split(i, [None, tx, inner])
    sch.bind(bx, "blockIdx.x")
    sch.bind(t, "threadIdx.x")
    loop = data.draw(st.sampled_from([bx, t, r]), label="target")
    preserve = data.draw(st.booleans(), label="preserve_unit_loops")
    rewrite = R.compute_at(sch.get_block("S"), loop, preserve, -1)
    bound = sch.mod
    problems = rewrite.violations(bound)
    where = {bx: "bx", t: "tx", r: "inner"}[loop]
    if problems:
        assert all(isinstance(p, ScheduleError) for p in problems)
        # only a reduction that several threads would update at once is
        # refused, and never in memory of its own thread
        assert reduce and scope != "local", problems[0]
        assert type(problems[0]) is R.ThreadOverlapError
        event(f"refused: {scope} reduction at {where}")
        return
    # a shared reduction is relaxed over the threads: every one would run it
    assert not (reduce and scope == "shared" and tx > 1)
    sch.apply(rewrite)
    event(f"placed: {scope} {'reduction' if reduce else 'elementwise'} at {where}")
    after = sch.mod
    verify(after)
    args = random_inputs(original["main"], data.draw(st.integers(0, 2**16), label="seed"))
    expected = _copy(args)
    run(original["main"], *expected)
    serial = _copy(args)
    compile_func(after["main"])(*serial)
    _same(expected, serial)
    replayed = R.Pipeline.from_json(sch.trace.to_json())
    assert replayed == sch.trace and replayed(original) == after
    if scope == "local":
        event("run on threads: local")
        _same(expected, _on_threads(after, args))
    elif scope == "shared":
        # share the copy out: its loops fused and split over the threads
        loops = sch.get_loops(sch.get_block("S"))
        placed = [lp for lp in loops if lp.name.startswith("ax")]
        if not placed:
            return
        spatial = placed[:1] if reduce else placed
        fused = sch.fuse(*spatial) if len(spatial) > 1 else spatial[0]
        _, threads = sch.split(fused, [None, tx])
        if tx > 1:
            sch.bind(threads, "threadIdx.x")
        else:
            return
        event("run on threads: shared, shared out")
        _same(expected, _on_threads(sch.mod, args))


def _on_threads(mod, args):
    out = _copy(args)
    run(lower(mod, target="cuda")["main"], *out)
    return out


@st.composite
def tilings(draw):
    tm, tn = draw(st.sampled_from([1, 2]), label="tm"), draw(st.sampled_from([1, 2]), label="tn")
    ty, tx = draw(st.sampled_from([1, 2, 4]), label="ty"), draw(st.sampled_from([1, 2, 4]), label="tx")
    bk = draw(st.sampled_from([1, 2, 4]), label="bk")
    vec = draw(st.sampled_from([1, 2]), label="vec")
    bm, bn = ty * tm, tx * tn
    n = draw(st.sampled_from([8, 16]), label="n")
    return n, dict(bm=bm, bn=bn, bk=bk, tm=tm, tn=tn, vec=vec)


@settings(max_examples=max(settings().max_examples // 6, 10))
@given(tilings(), st.integers(0, 2**16))
def test_tiled_matmul_with_random_tiles_on_the_interpreters_gpu(tiling, seed):
    n, tiles = tiling
    try:
        sch = gpu_schedules.tiled_matmul(n, **tiles)
    except ScheduleError as err:
        assert "schedule_tiled_matmul" in str(err)
        event("tiles refused")
        return
    event("tiled")
    plain = gpu_schedules.matmul(n)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    expected = np.zeros((n, n), "float32")
    run(plain["main"], a, b, expected)
    got = np.zeros((n, n), "float32")
    run(lower(sch.mod, target="cuda")["main"], a, b, got)
    assert got.tobytes() == expected.tobytes()
    assert R.Pipeline.from_json(sch.trace.to_json())(plain) == sch.mod


@st.composite
def per_thread_caches(draw):
    """(source, rewrite, scope, varies) of a thread-bound elementwise
    program whose inner loop is blockized, so the new block runs once per
    thread, and a cache of the inner block in it. The row of A the block
    reads is its own (``vi``), varying with the thread, or its thread
    block's (``vi // tx``), the same for each of them."""
    tx = draw(st.sampled_from([1, 2, 4]), label="threads")
    blocks = draw(st.integers(1, 2), label="blocks")
    width = draw(st.integers(2, 3), label="width")
    varies = draw(st.booleans(), label="row varies with the thread")
    n = blocks * tx
    row = "vi" if varies else f"vi // {tx}"
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n}, {width}), "int32"), B: T.Buffer(({n}, {width}), "int32")):
    for bx in T.thread_binding({blocks}, thread="blockIdx.x"):
        for tx in T.thread_binding({tx}, thread="threadIdx.x"):
            for k in range({width}):
                with T.block("B"):
                    vi = T.axis.spatial({n}, bx * {tx} + tx)
                    vk = T.axis.spatial({width}, k)
                    B[vi, vk] = A[{row}, vk] * 3 + vk
'''
    scope = draw(st.sampled_from(["shared", "local", "shared.dyn"]), label="scope")
    which = draw(st.sampled_from(["cache_read", "cache_write", "reindex_cache_read", "reindex_cache_write"]),
                 label="primitive")
    cache = {"cache_read": lambda: R.cache_read("B", 0, scope),
             "cache_write": lambda: R.cache_write("B", 0, scope),
             "reindex_cache_read": lambda: R.reindex_cache_read("B", 0, scope, lambda vk: (vk,)),
             "reindex_cache_write": lambda: R.reindex_cache_write("B", 0, scope, lambda vk: (vk,))}[which]()
    # a read cache holds the row of A, a write cache what the block stores
    # from it: the threads race on either exactly when that row is theirs
    # (each writing its own row of B the same values is no race)
    races = tx > 1 and varies
    return src, R.blockize("k") >> cache, scope, which, races


@given(per_thread_caches(), st.integers(0, 2**16))
def test_a_shared_cache_in_a_block_each_thread_runs_is_refused_exactly_where_threads_race(case, seed):
    # TVM builds such a cache as it is: every thread of the block uses the
    # one shared buffer as its own copy
    from unittest import mock

    from tirfun.rewrites import cache as cache_module

    src, rewrite, scope, which, races = case
    original = IRModule({"main": from_source(src)})
    args = random_inputs(original["main"], seed)
    expected = _copy(args)
    run(original["main"], *expected)
    problems = rewrite.violations(original)
    if problems:
        assert [type(p) for p in problems] == [R.SharedScopeUnderThreadError], problems[0]
        assert races and scope.startswith("shared")
        event(f"refused: {which}")
        # without the check the threads race, as the interpreter finds
        with mock.patch.object(cache_module, "check_shared_allocation", lambda *a, **k: None):
            racy = rewrite(original)
        # every element its own value: threads storing equal values into one
        # element (rows of random inputs that happen to be alike) do not race
        out = [np.arange(a.size).reshape(a.shape).astype(a.dtype) if isinstance(a, np.ndarray) else a
               for a in args]
        try:
            run(racy["main"], *out)
        except InterpError as e:
            assert "data race" in str(e)
        else:
            raise AssertionError("the refused cache ran without a race")
        return
    assert not (races and scope.startswith("shared"))
    event(f"accepted: {scope.split('.')[0]} {which}{', each thread its row' if races else ''}")
    after = rewrite(original)
    verify(after)
    out = _copy(args)
    run(after["main"], *out)
    _same(expected, out)


@st.composite
def inplace_updates_under_threads(draw):
    """(source, scope, shared) of a block under a threadIdx loop of ``t``
    threads and a loop of ``r`` rows that adds A's element into B: into
    B[vi, vk], each thread its own column, or into B[vi, 0], the sum across
    the threads (``shared``); cache_inplace of B in ``scope``."""
    t = draw(st.integers(1, 4), label="threads")
    r = draw(st.integers(1, 3), label="rows")
    shared = draw(st.booleans(), label="summed across the threads")
    scope = draw(st.sampled_from(["global", "local", "shared"]), label="scope")
    col, kind = ("0", "R") if shared else ("vk", "S")
    src = f'''
@T.prim_func
def main(A: T.Buffer(({r}, {t}), "int32"), B: T.Buffer(({r}, {t}), "int32")):
    for k in T.thread_binding({t}, thread="threadIdx.x"):
        for i in range({r}):
            with T.block("sum"):
                vi, vk = T.axis.remap("S{kind}", [i, k])
                T.reads(B[vi, {col}], A[vi, vk])
                T.writes(B[vi, {col}])
                B[vi, {col}] = B[vi, {col}] + A[vi, vk]
'''
    return src, scope, shared and t > 1


@given(inplace_updates_under_threads())
def test_cache_inplace_beside_a_reduction_across_threads_is_refused_else_kept(case):
    # the copies sit beside the block under the thread loop: where the
    # threads share what the block writes, each would copy it in and back
    # while the others update it
    from unittest import mock

    from tirfun.rewrites import cache
    from tirfun.testing.equivalence import assert_equivalent

    src, scope, racy = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.cache_inplace("sum", 0, scope)
    problems = rewrite.violations(mod)
    if problems:
        assert type(problems[0]) is R.ThreadOverlapError, problems[0]
        assert racy
        event(f"refused, {scope}")
        with mock.patch.object(cache, "_check_copies_per_thread", lambda *a: None):
            placed = rewrite(mod)
        try:
            assert_equivalent(mod["main"], placed["main"], trials=1)
        except (InterpError, AssertionError):
            return
        raise AssertionError("placed anyway, the copies kept the meaning")
    assert not racy
    event(f"kept, {scope}")
    out = rewrite(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=2)


@st.composite
def per_thread_buffers(draw):
    """(source, primitive, scope, refused) of a kernel whose block B writes
    a ``local`` buffer, read back by C in the same thread: B's variables
    vb (blockIdx.x) and vt (threadIdx.x) each index the element or not, vt
    spatial or a reduction across the threads; set_scope or cache_write of
    that buffer to ``shared`` or ``global``. Where threads that share the
    new scope write the same elements (a spatial thread variable left out
    of the index, or a reduction across threads into global storage, whose
    result the other threads read unordered), ``refused`` holds."""
    nb = draw(st.integers(1, 3), label="thread blocks")
    nt = draw(st.integers(1, 4), label="threads")
    reduce = draw(st.booleans(), label="vt a reduction")
    by_b = draw(st.booleans(), label="vb indexes B")
    by_t = not reduce and draw(st.booleans(), label="vt indexes B")
    primitive = draw(st.sampled_from(["set_scope", "cache_write"]), label="primitive")
    scope = draw(st.sampled_from(["shared", "global"]), label="scope")
    idx = [n for n, x in (("vb", by_b), ("vt", by_t)) if x] or ["0"]
    shape = [e for e, x in ((nb, by_b), (nt, by_t)) if x] or [1]
    ridx = [n for n, x in (("bx", by_b), ("tx", by_t)) if x] or ["0"]
    out = ", ".join(idx)
    body = (f"                    with T.init():\n                        B[{out}] = 0\n"
            f"                    B[{out}] = B[{out}] + A[vb, vt] * (vt + 1)\n" if reduce
            else f"                    B[{out}] = A[vb, vt] * (vt + 1)\n")
    src = f'''
@T.prim_func
def main(A: T.Buffer(({nb}, {nt}), "int32"), C: T.Buffer(({nb}, {nt}), "int32")):
    B = T.alloc_buffer(({", ".join(map(str, shape))},), "int32", scope="local")
    for bx in T.thread_binding({nb}, thread="blockIdx.x"):
        for ty in T.thread_binding(1, thread="threadIdx.y"):
            for tx in T.thread_binding({nt}, thread="threadIdx.x"):
                with T.block("B"):
                    vb = T.axis.spatial({nb}, bx)
                    vt = T.axis.{"reduce" if reduce else "spatial"}({nt}, tx)
{body}            for tx in T.thread_binding({nt}, thread="threadIdx.x"):
                with T.block("C"):
                    vb, vt = T.axis.remap("SS", [bx, tx])
                    C[vb, vt] = B[{", ".join(ridx).replace("bx", "vb").replace("tx", "vt")}]
'''
    # a reduction across the threads into global storage: the first thread
    # writes the result back, the others read it with no barrier between
    refused = (not by_t and nt > 1 and (not reduce or scope == "global")) or \
        (scope == "global" and not by_b and nb > 1)
    # cache_write's copy back runs after the thread loop, in every thread:
    # from global storage, each copies every thread's elements unordered
    refused |= primitive == "cache_write" and scope == "global" and nt > 1
    return src, primitive, scope, refused


def _differs_on_some_input(changed: IRModule, mod: IRModule, seed: int, outcome) -> bool:
    """Whether ``outcome`` of ``changed`` differs from that of ``mod`` on
    one of a few random inputs: a race shows only where the threads store
    different bits."""
    for k in range(4):
        inputs = random_inputs(mod["main"], np.random.default_rng(seed + k))
        if outcome(changed, inputs) != outcome(mod, inputs):
            return True
    return False


def _outcome(mod: IRModule, inputs):
    """The outputs of ``mod`` under the interpreter (the TensorIR's own
    meaning on the GPU's threads), or the first line of the error it
    reports (a data race)."""
    args = _copy(inputs)
    try:
        run(mod["main"], *args)
    except InterpError as e:
        return str(e).splitlines()[0]
    return [a.tobytes() for a in args if isinstance(a, np.ndarray)]


def _lowered_outcome(mod: IRModule, inputs):
    """:func:`_outcome` of ``mod`` lowered for CUDA (barriers placed, as
    TVM's thread-sync pass places them)."""
    return _outcome(lower(mod, target="cuda"), inputs)


@given(per_thread_buffers(), st.integers(0, 2**16))
def test_a_local_buffer_moved_to_a_scope_threads_share_is_refused_where_they_write_alike(case, seed):
    from unittest import mock

    from tirfun.rewrites import cache, storage

    src, primitive, scope, refused = case
    mod = IRModule({"main": from_source(src)})
    inputs = random_inputs(mod["main"], np.random.default_rng(seed))
    expected = _lowered_outcome(mod, inputs)
    assert isinstance(expected, list), expected
    rewrite = getattr(R, primitive)("B", 0, scope)
    problems = rewrite.violations(mod)
    if problems:
        assert type(problems[0]) is R.SharedScopeUnderThreadError, problems[0]
        assert refused
        event(f"refused, {scope}")
        with mock.patch.object(storage, "check_per_thread_writes", lambda *a: None), \
                mock.patch.object(cache, "check_per_thread_writes", lambda *a: None), \
                mock.patch.object(cache, "check_copy_per_thread", lambda *a: None):
            moved = rewrite(mod)
        assert _differs_on_some_input(moved, mod, seed, _lowered_outcome), \
            "moved anyway, the buffer kept the meaning"
        return
    assert not refused
    event(f"kept, {scope}")
    out = rewrite(mod)
    verify(out)
    assert _lowered_outcome(out, inputs) == expected


@st.composite
def partly_used_thread_loops(draw):
    """(source, n, m, tx, scope, reduce, swapped) of a producer ``S`` of one row per
    ``i``, read by a consumer over ``i`` and ``j`` (``m`` columns) whose two
    loops are fused and split over blockIdx.x and threadIdx.x (``tx``
    threads): placed under the thread loop, ``S`` is indexed by the fused
    loop divided by ``m`` (or taken modulo ``n``, the loops swapped first),
    which uses the threads only in part when ``m > 1``: several threads
    compute the same row of ``S``."""
    n = draw(st.integers(1, 3), label="rows")
    m = draw(st.integers(1, 3), label="columns")
    tx = draw(st.sampled_from([t for t in (1, 2, 3, 4, 6) if (n * m) % t == 0]), label="threads")
    scope = draw(st.sampled_from(("shared", "local", "global")), label="scope")
    reduce = draw(st.booleans(), label="reduction")
    swapped = draw(st.booleans(), label="columns outside")
    if reduce:
        producer = f'''
    for i, k in T.grid({n}, 3):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = 0
            S[vi] = S[vi] + A[vi, vk] * (vk + 1)'''
    else:
        producer = f'''
    for i in range({n}):
        with T.block("S"):
            vi = T.axis.spatial({n}, i)
            S[vi] = A[vi, 0] * 3 + 1'''
    src = f'''
@T.prim_func
def main(A: T.Buffer(({n}, 3), "int32"), C: T.Buffer(({n}, {m}), "int32")):
    S = T.alloc_buffer(({n},), "int32", scope="{scope}"){producer}
    for i, j in T.grid({n}, {m}):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = S[vi] * (vj + 2)
'''
    return src, n, m, tx, scope, reduce, swapped


@given(partly_used_thread_loops(), st.integers(0, 2**16))
def test_a_reduction_under_a_thread_loop_used_in_part_is_refused_exactly_where_threads_race(case, seed):
    from unittest import mock

    from tirfun.rewrites import compute_location

    src, n, m, tx, scope, reduce, swapped = case
    original = IRModule({"main": from_source(src)})
    sch = Schedule(original)
    i, j = sch.get_loops(sch.get_block("C"))
    if swapped:
        sch.reorder(j, i)
        i, j = j, i
    bx, t = sch.split(sch.fuse(i, j), [None, tx])
    sch.bind(bx, "blockIdx.x")
    sch.bind(t, "threadIdx.x")
    rewrite = R.compute_at(sch.get_block("S"), t, True, -1)
    bound = sch.mod

    inputs = random_inputs(original["main"], np.random.default_rng(seed))
    expected = _outcome(original, inputs)
    # several threads (or thread blocks) that share S reduce into one row:
    # a shared S is relaxed over the threads (each computes every row of
    # its thread block), a global one is not, and is shared by all threads
    races = reduce and (scope == "shared" and tx > 1 or scope == "global" and m > 1)
    problems = rewrite.violations(bound)
    if problems:
        assert type(problems[0]) is R.ThreadOverlapError, problems[0]
        assert races, problems[0]
        assert "S" in str(problems[0])
        event(f"refused, {scope}")
        with mock.patch.object(compute_location._ComputeAtBase, "_check_threads", lambda *a: None):
            placed = rewrite(bound)
        assert _differs_on_some_input(placed, original, seed, _outcome), \
            "placed anyway, the threads kept the meaning"
        return
    assert not races
    event(f"placed, {scope}, {'reduction' if reduce else 'elementwise'}")
    after = rewrite(bound)
    verify(after)
    assert _outcome(after, inputs) == expected
