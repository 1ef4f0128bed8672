"""transform_layout's shortcut for maps that only tile a constant shape
(reorder its dimensions and split some of them by constants that divide
them) gives the layout the general bound and iterator-map analysis gives,
and is taken for exactly those maps."""

import importlib
import random

import pytest

from tirfun.nodes import IntImm, Var

from test_verify import GOOD_SOURCES  # the tutorial's matmul and relu, 16 x 16

layout = importlib.import_module("tirfun.rewrites.layout")


def _draw_map(rng: random.Random, dtype: str):
    """A map over 1 to 3 dimensions of random constant extents: each
    dimension kept whole or split by a constant (dividing it or not), its
    pieces shuffled; sometimes a piece is dropped or repeated. Returns
    ``(params, results, dims, tiles)``, ``tiles`` telling whether the map is
    a tiling of the shape (the shortcut's case)."""
    ndim = rng.randint(1, 3)
    params = tuple(Var(f"p{k}", dtype) for k in range(ndim))
    dims = tuple(IntImm(dtype, rng.choice([1, 4, 6, 8, 12, 16, 30])) for _ in range(ndim))
    pieces, tiles = [], True
    for p, d in zip(params, dims):
        c = rng.choice([0, 0, 1, 2, 3, 4, 5, 8])
        if c == 0:
            pieces.append(p)
        else:
            pieces += [p // c, p % c]
            tiles = tiles and c > 1 and d.value % c == 0
    rng.shuffle(pieces)
    mutation = rng.random()
    if mutation < 0.1 and len(pieces) > 1:
        pieces.pop()
        tiles = False
    elif mutation < 0.2:
        pieces.append(rng.choice(pieces))
        tiles = False
    return params, tuple(pieces), dims, tiles


def _described(found):
    """A layout, comparable: the shape's values and dtypes and whether it
    pads, or the refusal."""
    if isinstance(found, layout._Refusal):
        return found
    shape, padding = found
    return [(d.dtype, d.value) for d in shape], padding is None


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_tiled_shape_is_the_analysis_s(dtype):
    rng = random.Random(7)
    taken = 0
    for _ in range(300):
        params, results, dims, tiles = _draw_map(rng, dtype)
        shortcut = layout._tiled_shape(params, results, dims)
        assert (shortcut is not None) == tiles, [e.script() for e in results]
        taken += shortcut is not None
        for injective in (False, True):
            for padded in (False, True):
                general = layout._analysed_layout(params, results, dims, injective, padded)
                if shortcut is not None:
                    assert _described((shortcut, None)) == _described(general)
                assert _described(layout._layout_of.__wrapped__(params, results, dims, injective, padded)) \
                    == _described(general)
    assert taken > 50


def test_tiled_shape_leaves_symbolic_shapes_and_other_maps_to_the_analysis():
    i, j, n = Var("i", "int32"), Var("j", "int32"), Var("n", "int32")
    eight = IntImm("int32", 8)
    assert layout._tiled_shape((i, j), (i // 4, j, i % 4), (n, eight)) is None
    assert layout._tiled_shape((i, j), (i + j, j), (eight, eight)) is None
    assert layout._tiled_shape((i, j), (i // 4, j, i % 2), (eight, eight)) is None
    assert layout._tiled_shape((i, j), (j, i // n, i % n), (eight, eight)) is None
    # another variable of the same name is not the parameter
    assert layout._tiled_shape((i, j), (Var("i", "int32"), j), (eight, eight)) is None




def _with_let_index(func, buffer: str):
    """``func`` with the first index of the first load of ``buffer`` read
    through a let (``Y[let t = vi in t, vj]``)."""
    from tirfun.analysis.traversal import transform
    from tirfun.nodes import BufferLoad, Let

    t, done = Var("t", "int32"), []

    def edit(n):
        if type(n) is BufferLoad and n.buffer.name == buffer and not done:
            done.append(n)
            return BufferLoad(n.buffer, [Let(t, n.indices[0], t), *n.indices[1:]], n.predicate)
        return n

    out = transform(func, edit)
    assert done
    return out


@pytest.mark.parametrize("buffer, block", [("Y", "C"), ("A", "Y")])
@pytest.mark.parametrize("let", [False, True])
def test_index_kept_only_where_names_do_not_change(buffer, block, let):
    """A map of plain indices changes no name the function binds: the old
    index is kept. A map that copies an index holding a let binds its
    variable twice: the index is derived, and equals one built afresh."""
    from tirfun import rewrites as R
    from tirfun.nodes import IRModule
    from tirfun.rewrites.index import build_index, index_of
    from tirfun.script import from_source

    def walk_buffers(f):
        yield from f.buffer_map.values()
        yield from f.body.block.alloc_buffers

    func = from_source(GOOD_SOURCES["matmul_relu"])
    if let:
        func = _with_let_index(func, buffer)
    mod = IRModule({"main": func})
    before = index_of(mod["main"])
    after = R.transform_layout(block, ("read", 0), lambda i, j: (i // 4, j, i % 4))(mod)["main"]
    assert any(b.name == buffer and len(b.shape) == 3 for b in walk_buffers(after))
    assert index_of(after) == build_index(after)
    assert (index_of(after) is before) == (not let)


def test_substituted_is_substitute_expr():
    """The written-out substitution for tiling maps gives what the general
    one gives, on the drawn maps' results and indices of several shapes."""
    from tirfun.rewrites.exprs import substitute_expr

    rng = random.Random(3)
    x, y = Var("x", "int32"), Var("y", "int32")
    values = [x, x * 4 + y, IntImm("int32", 5), y // 2]
    for _ in range(200):
        params, results, _dims, _tiles = _draw_map(rng, "int32")
        mapping = {p: rng.choice(values) for p in params if rng.random() < 0.8}
        extra = [params[0] + 1, (params[0] * 2) // 3, Var("other", "int32") // 4]
        for e in results + tuple(extra):
            fast, slow = layout._substituted(e, mapping), substitute_expr(e, mapping)
            assert type(fast) is type(slow) and fast == slow and fast.dtype == slow.dtype
            assert (fast is e) == (slow is e)


def test_names_in_result_is_var_names():
    from tirfun.rewrites.exprs import var_names

    rng = random.Random(5)
    n = Var("n", "int32")
    for _ in range(100):
        params, results, _dims, _tiles = _draw_map(rng, "int64")
        for e in results + (params[0] // n, params[-1] * 2 + 1, IntImm("int64", 3)):
            assert layout._names_in_result(e) == var_names(e)
