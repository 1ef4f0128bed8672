"""Random applications of the storage primitives, and programs whose
intermediate buffers live inside loops.

:data:`DRAWERS` maps a primitive's name to ``drawer(chooser, mod)``, which
returns a random valid application of it to ``mod``'s main function, or None
when the module offers no site. Every drawn application keeps the meaning
of the program and builds for the CPU: ``unsafe_set_dtype`` only widens a
type that holds every value of the old one exactly, and ``set_scope``
chooses ``local`` or ``shared`` only in functions without thread-bound
loops (in a kernel those scopes give each thread or block storage of its
own). ``set_axis_separator`` too: the CPU build flattens a buffer with
separators to one dimension of memory, as if it had none.

:func:`located_programs` is a hypothesis strategy of programs in the shape
``compute_at`` and ``reverse_compute_at`` leave: a producer nest placed
inside a loop of its consumer, that loop (or one inside it) serial,
parallel, unrolled or vectorized, the intermediate in ``global``,
``shared`` or ``local`` scope, sometimes a register-tile accumulator;
:func:`random_located_program` makes one from a seed.
"""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.traversal import stmt_nodes, walk
from ..nodes import Block, For, ForKind, IRModule, PrimFunc
from ._choices import BytesChooser, Chooser, RandomChooser

#: exact widenings: every value of the key type is a value of each target type
WIDER = {
    "float16": ("float32", "float64"),
    "bfloat16": ("float32", "float64"),
    "float32": ("float64",),
    "int8": ("int16", "int32", "int64"),
    "int16": ("int32", "int64"),
    "int32": ("int64",),
    "uint8": ("uint16", "uint32", "uint64", "int16", "int32", "int64"),
    "uint16": ("uint32", "uint64", "int32", "int64"),
    "uint32": ("uint64", "int64"),
}


def _main(mod: IRModule) -> PrimFunc:
    return mod.functions["main"] if "main" in mod.functions else next(iter(mod.functions.values()))


def _allocated(func: PrimFunc) -> set:
    return {b for n in walk(func.body) if isinstance(n, Block) for b in n.alloc_buffers}


def _write_sites(func: PrimFunc, buffers) -> list[tuple[str, int, object]]:
    """(block name, write index, buffer) for every write of one of ``buffers``."""
    out = []
    for s in stmt_nodes(func, skip_init=True):
        if isinstance(s, Block):
            for k, region in enumerate(s.writes):
                if region.buffer in buffers:
                    out.append((s.name_hint, k, region.buffer))
    return out


def _threaded(func: PrimFunc) -> bool:
    return any(isinstance(n, For) and n.kind is ForKind.THREAD_BINDING for n in walk(func.body))


def draw_set_scope(ch: Chooser, mod: IRModule):
    """A random ``set_scope`` of an intermediate buffer, or None."""
    from .. import rewrites as R

    func = _main(mod)
    sites = _write_sites(func, _allocated(func))
    if not sites:
        return None
    block, index, _ = ch.choice(sites)
    scopes = ["global"] if _threaded(func) else ["local", "shared", "global"]
    return R.set_scope(block, index, ch.choice(scopes))


def draw_storage_align(ch: Chooser, mod: IRModule):
    """A random ``storage_align`` of an intermediate buffer, or None."""
    from .. import rewrites as R

    func = _main(mod)
    sites = [s for s in _write_sites(func, _allocated(func)) if len(s[2].shape) > 0]
    if not sites:
        return None
    block, index, buf = ch.choice(sites)
    ndim = len(buf.shape)
    axis = ch.integer(-ndim, ndim - 1)
    factor = ch.choice([1, 2, 3, 4, 8, 16])
    return R.storage_align(block, index, axis, factor, ch.integer(0, factor - 1))


def draw_unsafe_set_dtype(ch: Chooser, mod: IRModule):
    """A random exact widening of an intermediate buffer's type, or None."""
    from .. import rewrites as R

    func = _main(mod)
    sites = [s for s in _write_sites(func, _allocated(func)) if str(s[2].dtype) in WIDER]
    if not sites:
        return None
    block, index, buf = ch.choice(sites)
    return R.unsafe_set_dtype(block, index, ch.choice(WIDER[str(buf.dtype)]))


def draw_set_axis_separator(ch: Chooser, mod: IRModule):
    """A random ``set_axis_separator`` of a buffer a block accesses, or None.
    It keeps the meaning; the CPU build refuses the result."""
    from .. import rewrites as R

    func = _main(mod)
    sites = []
    views = {m.buffer for n in walk(func.body) if isinstance(n, Block) for m in n.match_buffers}
    for s in stmt_nodes(func, skip_init=True):
        if isinstance(s, Block):
            for kind, regions in (("read", s.reads), ("write", s.writes)):
                sites += [(s.name_hint, kind, k, r.buffer) for k, r in enumerate(regions)
                          if r.buffer not in views]
    if not sites:
        return None
    block, kind, index, buf = ch.choice(sites)
    ndim = len(buf.shape)
    seps = sorted(set(ch.integer(0, ndim) for _ in range(ch.integer(0, 2))))
    return R.set_axis_separator(block, index, kind, seps)


def draw_transform_layout(ch: Chooser, mod: IRModule):  # noqa: C901 - one drawer, its cases inline
    """A random ``transform_layout`` of an intermediate buffer a block
    accesses, or None: a map one to one onto a box (a dimension split by a
    divisor of its extent, two adjacent dimensions fused, or two swapped),
    so it keeps the meaning, or a split that pads, with a pad value that is
    a constant or a function of the new indices; parameters keep their
    layout, which the caller's arrays follow."""
    from .. import rewrites as R
    from ..analysis.arith.terms import int_value
    from ..nodes import Var

    func = _main(mod)
    views = {m.buffer for n in walk(func.body) if isinstance(n, Block) for m in n.match_buffers}
    allocated = _allocated(func) - views
    sites = []
    for s in stmt_nodes(func, skip_init=True):
        if isinstance(s, Block):
            for kind, regions in (("read", s.reads), ("write", s.writes)):
                sites += [(s.name_hint, kind, k, r.buffer) for k, r in enumerate(regions)
                          if r.buffer in allocated and r.buffer.shape]
    # the sites where it applies (no strides, offset or axis separators a
    # storage primitive set before, no pointer taken, no vector access):
    # each drawn application keeps the meaning and builds
    for block, kind, index, buf in ch.shuffled(sites):
        extents = [int_value(d) for d in buf.shape]
        ragged = [(k, f) for k, e in enumerate(extents) if e for f in range(2, e) if e % f]
        if ragged and ch.chance(30):
            # a split that does not divide: the new layout has padding
            k, f = ch.choice(ragged)
            params = tuple(Var(f"i{j}") for j in range(len(extents)))
            results = (*params[:k], params[k] // f, params[k] % f, *params[k + 1:])
            record = R.transform_layout(block, (kind, index), (params, results),
                                        pad_value=_draw_pad_value(ch, buf, len(results)))
        else:
            record = R.transform_layout(block, (kind, index), _random_bijection(ch, extents, list(buf.shape)))
        if not record.violations(mod):
            return record
    return None


def _draw_pad_value(ch: Chooser, buf, ndim: int):
    """A pad value for ``buf``: a constant of its type, or a function of
    the new layout's ``ndim`` indices (their sum, in the buffer's type)."""
    from ..nodes import Cast, Var

    if ch.chance(50):
        return 0.0 if buf.dtype.is_float else 0
    params = tuple(Var(f"p{k}") for k in range(ndim))
    total = params[0]
    for p in params[1:]:
        total = total + p
    return params, (total if str(total.dtype) == str(buf.dtype) else Cast(buf.dtype, total),)


def _random_bijection(ch: Chooser, extents: list, dims: list | None = None):
    """``(params, results)`` of a random map one to one onto a box, over a
    domain of ``extents`` (None where symbolic; ``dims``, when given, the
    extents as expressions): one dimension split by a divisor of its
    extent, two adjacent ones fused (by a symbolic extent too, given
    ``dims``), or two swapped."""
    from ..nodes import Var

    ndim = len(extents)
    d = ch.integer(0, ndim - 1)
    how = ch.choice(["split", "fuse", "swap"])
    if how == "split" and extents[d] and [f for f in range(2, extents[d]) if extents[d] % f == 0]:
        f = ch.choice([f for f in range(2, extents[d]) if extents[d] % f == 0])

        def index_map(*ix):
            return (*ix[:d], ix[d] // f, ix[d] % f, *ix[d + 1:])
    elif how == "fuse" and d + 1 < ndim and (extents[d + 1] or dims is not None):
        # a symbolic extent fuses too, read as TVM's iterator maps read it
        e = extents[d + 1] or dims[d + 1]

        def index_map(*ix):
            return (*ix[:d], ix[d] * e + ix[d + 1], *ix[d + 2:])
    else:
        other = ch.integer(0, ndim - 1)

        def index_map(*ix):
            out = list(ix)
            out[d], out[other] = out[other], out[d]
            return tuple(out)
    params = tuple(Var(f"i{k}") for k in range(ndim))
    return params, tuple(index_map(*params))


def draw_transform_block_layout(ch: Chooser, mod: IRModule):
    """A random ``transform_block_layout`` of a block whose iteration
    variables are bound one to one to the loops around it, or None (a map
    one to one onto a box, as :func:`draw_transform_layout` draws them)."""
    from .. import rewrites as R
    from ..analysis.arith.terms import int_value
    from ..nodes import BlockRealize

    func = _main(mod)
    sites = []
    for s in stmt_nodes(func, skip_init=True):
        if isinstance(s, BlockRealize) and s.block.iter_vars:
            sites.append(s.block)
    # the blocks where it applies (loops one per variable, nothing else in
    # them, no predicate, a map that mixes no data-parallel and reduction
    # variables): each drawn application keeps the meaning and builds
    for block in ch.shuffled(sites):
        record = R.transform_block_layout(
            block.name_hint, _random_bijection(ch, [int_value(iv.dom.extent) for iv in block.iter_vars],
                                               [iv.dom.extent for iv in block.iter_vars]))
        if not record.violations(mod):
            return record
    return None


def draw_blockize(ch: Chooser, mod: IRModule):
    """A random ``blockize`` of a loop with one block under it, or, two
    times in five where the function has them, of a run of two or more
    consecutive loop nests of one sequence, each holding one block (the
    list form); None when neither applies. Only applications where it
    applies are drawn (each binding divides, the blocks agree on the outer
    side)."""
    from .. import rewrites as R

    func = _main(mod)
    if ch.chance(40):
        runs = _sibling_block_runs(func)
        for run in ch.shuffled(runs)[:4]:
            start = ch.integer(0, len(run) - 2)
            stop = ch.integer(start + 2, len(run))
            record = R.blockize(list(run[start:stop]), ch.chance(70))
            if not record.violations(mod):
                return record
    loops = [s.loop_var.name for s in stmt_nodes(func, skip_init=True) if isinstance(s, For)]
    for name in ch.shuffled(loops)[:8]:
        record = R.blockize(name, ch.chance(70))
        if not record.violations(mod):
            return record
    return None


def _nest_block(stmt) -> str | None:
    """The block's name when ``stmt`` is a chain of loops holding one block
    and nothing else (or that block alone), else None."""
    from ..nodes import BlockRealize

    while isinstance(stmt, For):
        stmt = stmt.body
    return stmt.block.name_hint if isinstance(stmt, BlockRealize) else None


def _sibling_block_runs(func: PrimFunc) -> list[tuple[str, ...]]:
    """The maximal runs of two or more consecutive items of one sequence
    that are each a loop nest holding one block: their block names."""
    from ..nodes import SeqStmt

    runs = []
    for s in stmt_nodes(func, skip_init=True):
        if isinstance(s, SeqStmt):
            run: list[str] = []
            for item in list(s.seq) + [None]:
                name = None if item is None else _nest_block(item)
                if name is not None:
                    run.append(name)
                    continue
                if len(run) >= 2:
                    runs.append(tuple(run))
                run = []
    return runs


def draw_rolling_buffer(ch: Chooser, mod: IRModule):
    """A ``rolling_buffer`` of a block writing an intermediate buffer, or
    None; it applies only where a tiled producer's windows overlap (see
    :func:`sliding_source` for programs where it does)."""
    from .. import rewrites as R

    func = _main(mod)
    sites = _write_sites(func, _allocated(func))
    if not sites:
        return None
    block, index, _ = ch.choice(sites)
    return R.rolling_buffer(block, index)


DRAWERS: dict[str, Callable[[Chooser, IRModule], object]] = {
    "set_scope": draw_set_scope,
    "storage_align": draw_storage_align,
    "unsafe_set_dtype": draw_unsafe_set_dtype,
    "rolling_buffer": draw_rolling_buffer,
    "set_axis_separator": draw_set_axis_separator,
    "transform_layout": draw_transform_layout,
    "transform_block_layout": draw_transform_block_layout,
    "blockize": draw_blockize,
}


# --------------------------------------------------------------------------
# programs with producers inside their consumers' loops

_KINDS = ("range", "T.parallel", "T.vectorized", "T.unroll", "T.serial")


def located_source(ch: Chooser) -> str:
    """TVMScript of one random program: ``C[i, j] = f(S)`` where the
    producer of the intermediate ``S`` sits inside the consumer's loop
    ``i``, and writes either row ``i`` of ``S`` (what compute_at makes) or
    the same elements in every iteration (a producer placed under a loop it
    does not depend on); or a register-tile accumulator ``S`` placed with
    reverse_compute_at. Any loop may be parallel, vectorized or unrolled."""
    rows = ch.integer(1, 5)
    cols = ch.integer(1, 6)
    dtype = ch.choice(["float32", "int32", "float64"])
    scope = ch.choice(["global", "local", "shared"])
    shape = ch.choice(["row", "shared_row", "tile"])
    outer = ch.choice(_KINDS)
    inner = ch.choice(_KINDS)
    producer = ch.choice(_KINDS)
    one = "T.float32(1)" if dtype == "float32" else ("T.float64(1)" if dtype == "float64" else "1")
    zero = one.replace("1", "0")
    head = (f'@T.prim_func\ndef main(A: T.Buffer(({rows}, {cols}), "{dtype}"), '
            f'C: T.Buffer(({rows}, {cols}), "{dtype}")):\n'
            f'    T.func_attr({{"tir.noalias": True}})\n')
    if shape == "tile":
        tile = ch.integer(1, 3)
        k_ext = ch.integer(1, 4)
        rows_t = rows * tile
        head = (f'@T.prim_func\ndef main(A: T.Buffer(({rows_t}, {k_ext}), "{dtype}"), '
                f'B: T.Buffer(({k_ext}, {cols}), "{dtype}"), C: T.Buffer(({rows_t}, {cols}), "{dtype}")):\n'
                f'    T.func_attr({{"tir.noalias": True}})\n')
        return head + (
            f'    S = T.alloc_buffer(({rows_t}, {cols}), "{dtype}", scope="{scope}")\n'
            f'    for i0 in {outer}({rows}):\n'
            f'        for k in range({k_ext}):\n'
            f'            for i1 in T.unroll({tile}):\n'
            f'                for j in {inner}({cols}):\n'
            f'                    with T.block("S"):\n'
            f'                        vi = T.axis.spatial({rows_t}, i0 * {tile} + i1)\n'
            f'                        vj = T.axis.spatial({cols}, j)\n'
            f'                        vk = T.axis.reduce({k_ext}, k)\n'
            f'                        with T.init():\n'
            f'                            S[vi, vj] = {zero}\n'
            f'                        S[vi, vj] = S[vi, vj] + A[vi, vk] * B[vk, vj]\n'
            f'        for i1 in range({tile}):\n'
            f'            for j in {producer}({cols}):\n'
            f'                with T.block("C"):\n'
            f'                    vi = T.axis.spatial({rows_t}, i0 * {tile} + i1)\n'
            f'                    vj = T.axis.spatial({cols}, j)\n'
            f'                    C[vi, vj] = S[vi, vj] + {one}\n')
    if shape == "row":
        alloc = f'    S = T.alloc_buffer(({rows}, {cols}), "{dtype}", scope="{scope}")\n'
        s_index, s_read = "vi, vj", "S[vi, vj] + S[vi, {last} - vj]"
        prod_axes = ('                vi, vj = T.axis.remap("SS", [i, j])\n')
    else:
        alloc = f'    S = T.alloc_buffer(({cols},), "{dtype}", scope="{scope}")\n'
        s_index, s_read = "vj", "S[vj] + S[{last} - vj]"
        prod_axes = '                vj = T.axis.spatial({cols}, j)\n'.format(cols=cols)
    last = cols - 1
    read = s_read.format(last=last)
    value = f'S[{s_index}] = A[{"vi" if shape == "row" else "0"}, vj] * {one.replace("1", "2")}'
    factor = ch.choice([0, 2, 4])
    if factor:
        # the producer split by a factor that need not divide its extent
        axes = [f"vi = T.axis.spatial({rows}, i)"] if shape == "row" else []
        axes += [f"vj = T.axis.spatial({cols}, j0 * {factor} + j)", f"T.where(j0 * {factor} + j < {cols})"]
        pad = " " * 20
        producer_nest = (f'        for j0 in range({(cols + factor - 1) // factor}):\n'
                         f'            for j in {producer}({factor}):\n'
                         f'                with T.block("S"):\n'
                         + "".join(f"{pad}{line}\n" for line in axes + [value]))
    else:
        producer_nest = (f'        for j in {producer}({cols}):\n'
                         f'            with T.block("S"):\n' + prod_axes + f'                {value}\n')
    body = (alloc +
            f'    for i in {outer}({rows}):\n' + producer_nest +
            f'        for j in {inner}({cols}):\n'
            f'            with T.block("C"):\n'
            f'                vi, vj = T.axis.remap("SS", [i, j])\n'
            f'                C[vi, vj] = {read} + A[vi, vj]\n')
    return head + body


def sliding_source(ch: Chooser) -> str:
    """TVMScript of one random sliding-window cascade, the shape
    rolling_buffer folds: per tile of the output, the producer computes the
    tile plus its halo, ``C[x] = f(B[x .. x + k - 1])`` (in one or two
    dimensions), the windows of neighbouring tiles overlapping. The tile
    loops are serial, unrolled or parallel (where rolling must be refused:
    its iterations do not run in order)."""
    ndim = ch.integer(1, 2)
    tiles = [ch.integer(1, 3) for _ in range(ndim)]
    sizes = [ch.integer(1, 3) for _ in range(ndim)]
    k = ch.integer(2, 3)
    dtype = ch.choice(["float32", "int32"])
    pool = ch.chance(50)
    kinds = [ch.choice(["range", "T.unroll", "T.parallel"]) for _ in range(ndim)]
    outs = [t * n for t, n in zip(tiles, sizes)]
    mids = [o + k - 1 for o in outs]

    def dims(items):
        return ", ".join(str(x) for x in items)

    two = "T.float32(2)" if dtype == "float32" else "2"
    lo = "T.float32(-1000)" if dtype == "float32" else "-1000"
    lines = [f"for t{d} in {kinds[d]}({tiles[d]}):" for d in range(ndim)]
    depth = ndim
    body = [f'for {dims(f"p{d}" for d in range(ndim))} in T.grid({dims(n + k - 1 for n in sizes)}):',
            '    with T.block("B"):']
    body += [f"        b{d} = T.axis.spatial({mids[d]}, t{d} * {sizes[d]} + p{d})" for d in range(ndim)]
    bidx = dims(f"b{d}" for d in range(ndim))
    body.append(f"        B[{bidx}] = A[{bidx}] * {two}")
    oidx = dims(f"o{d}" for d in range(ndim))
    if pool:
        body.append(f'for {dims([f"c{d}" for d in range(ndim)] + [f"r{d}" for d in range(ndim)])} in '
                    f'T.grid({dims(sizes + [k] * ndim)}):')
        body.append('    with T.block("C"):')
        body += [f"        o{d} = T.axis.spatial({outs[d]}, t{d} * {sizes[d]} + c{d})" for d in range(ndim)]
        body += [f"        q{d} = T.axis.reduce({k}, r{d})" for d in range(ndim)]
        body += ["        with T.init():", f"            C[{oidx}] = {lo}",
                 f'        C[{oidx}] = T.max(C[{oidx}], B[{dims(f"o{d} + q{d}" for d in range(ndim))}])']
    else:
        body.append(f'for {dims(f"c{d}" for d in range(ndim))} in T.grid({dims(sizes)}):')
        body.append('    with T.block("C"):')
        body += [f"        o{d} = T.axis.spatial({outs[d]}, t{d} * {sizes[d]} + c{d})" for d in range(ndim)]
        terms = " + ".join(f"B[{dims(f'o{d} + {j}' for d in range(ndim))}]" for j in range(k))
        body.append(f"        C[{oidx}] = {terms}")
    text = (f'@T.prim_func\ndef main(A: T.Buffer(({dims(mids)},), "{dtype}"), '
            f'C: T.Buffer(({dims(outs)},), "{dtype}")):\n'
            f'    B = T.alloc_buffer(({dims(mids)},), "{dtype}")\n')
    for d, line in enumerate(lines):
        text += "    " * (d + 1) + line + "\n"
    for line in body:
        text += "    " * (depth + 1) + line + "\n"
    return text


def sliding_programs():
    """A hypothesis strategy of :func:`sliding_source` programs (PrimFuncs)."""
    from hypothesis import strategies as st

    from ..script import from_source

    return st.binary(min_size=16, max_size=16).map(lambda data: from_source(sliding_source(BytesChooser(data))))


def random_located_program(seed: int) -> PrimFunc:
    """One program of :func:`located_programs`, determined by ``seed``."""
    from ..script import from_source

    return from_source(located_source(RandomChooser(seed)))


def located_programs():
    """A hypothesis strategy of :func:`located_source` programs (PrimFuncs)."""
    from hypothesis import strategies as st

    from ..script import from_source

    return st.binary(min_size=16, max_size=16).map(lambda data: from_source(located_source(BytesChooser(data))))


__all__ = ["DRAWERS", "WIDER", "draw_set_scope", "draw_storage_align", "draw_unsafe_set_dtype",
           "draw_rolling_buffer", "sliding_source", "sliding_programs",
           "draw_set_axis_separator", "draw_transform_layout", "draw_transform_block_layout", "draw_blockize", "located_source", "located_programs", "random_located_program"]
