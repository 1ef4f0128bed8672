"""The shortcuts of ``swap_buffer`` give what its checked walk gives, on the
allocated buffers of many random programs and of a program with views:

* the copies it makes of the nodes it rebuilds (filled as a twin class,
  then given the node's own class) equal the nodes the checked walk
  builds, are of the same class, frozen, and hash as freshly built ones;
* it tells the swapped buffer by identity where it can, and still swaps a
  buffer that is equal to it without being the same object;
* the nodes above the swapped block (or a block given a new annotation)
  are copied around it, as ``replace_at`` rebuilds them;
* a short sequence in which several items change is rebuilt in one edit,
  which gives the sequence a rebuild of every node gives, and remembers
  the span of the items it replaced.
"""

import importlib

import attrs
import pytest

from tirfun.analysis.traversal import map_children, nodes_along, replace_at, walk, walk_stmts
from tirfun.nodes import Block, Buffer, DataType, Node, SeqStmt
from tirfun.nodes.stmt import sequence_edit
from tirfun.nodes.base import with_fields
from tirfun.rewrites.index import index_of
from tirfun.script import from_source
from tirfun.testing.block_programs import SOURCES, random_block_program

# a view of the buffer, and a view of that view with fewer dimensions
from test_rewrites_storage import NESTED_VIEWS

swap = importlib.import_module("tirfun.rewrites.buffer_swap")

# buffers allocated by blocks inside loops, in a sequence at the root
INNER = '''@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32"), D: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("outer"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi, 0:8])
            T.writes(C[vi, 0:8])
            B = T.alloc_buffer((8,))
            for j in range(8):
                with T.block("B"):
                    vj = T.axis.spatial(8, j)
                    B[vj] = A[vi, vj] * T.float32(2)
            for j in range(8):
                with T.block("C"):
                    vj = T.axis.spatial(8, j)
                    C[vi, vj] = B[vj] + T.float32(1)
    for i in range(4):
        with T.block("outer_1"):
            vi = T.axis.spatial(4, i)
            T.reads(C[vi, 0:8])
            T.writes(D[vi, 0:8])
            E = T.alloc_buffer((8,))
            for j in range(8):
                with T.block("E"):
                    vj = T.axis.spatial(8, j)
                    E[vj] = C[vi, vj] * T.float32(2)
            for j in range(8):
                with T.block("D"):
                    vj = T.axis.spatial(8, j)
                    D[vi, vj] = E[vj] + T.float32(1)
'''


def _funcs():
    for seed in range(12):
        for source in SOURCES:
            yield from random_block_program(seed, source).functions.values()
    yield from_source(NESTED_VIEWS)
    yield from_source(INNER)


def _allocations():
    """(function, path of the allocating block, block, buffer) for every
    allocated buffer."""
    for func in _funcs():
        for path, stmt in walk_stmts(func):
            if isinstance(stmt, Block):
                for buffer in stmt.alloc_buffers:
                    yield func, path, stmt, buffer


def _changes():
    """(new version of a buffer, cast) for each kind of swap: a new scope,
    new axis separators, a new element type."""
    return [
        (lambda b, _source=None: with_fields(b, storage_scope="shared"), None),
        (lambda b, _source=None: with_fields(b, axis_separators=[0] * min(len(b.shape), 1)), None),
        (lambda b, _source=None: with_fields(b, dtype=DataType("float64")), "float64"),
    ]


def _swapped(func, path, block, buffer, view_of, cast, make):
    dtypes = None if cast is None else (buffer.dtype, DataType(cast))
    return swap._Swap(buffer, view_of(buffer), view_of, index_of(func), dtypes, make).run(block, path)


def _freshly_built(node: Node) -> Node:
    """``node`` built again through its constructor, every rule checked."""
    return map_children(node, _freshly_built) if attrs.has(type(node)) else node


@pytest.mark.parametrize("change", range(3), ids=["scope", "separators", "dtype"])
def test_copied_nodes_are_the_checked_ones(change):
    view_of, cast = _changes()[change]
    count = 0
    for func, path, block, buffer in _allocations():
        copied = _swapped(func, path, block, buffer, view_of, cast, swap._COPIED)
        checked = _swapped(func, path, block, buffer, view_of, cast, swap._CHECKS)
        assert copied == checked
        assert copied is not block
        for a, b in zip(walk(copied), walk(checked)):
            assert type(a) is type(b)
            assert hash(a) == hash(b)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            copied.name_hint = "X"
        assert _freshly_built(copied) == copied
        count += 1
    assert count > 50


def _assert_copied_as_rebuilt(func, path, new):
    """``replaced_along`` puts ``new`` at ``path`` as ``replace_at`` does:
    equal nodes of the same classes and hashes along the path."""
    copied, rebuilt = swap.replaced_along(func, path, new), replace_at(func, path, new)
    assert copied == rebuilt
    for a, b in zip(nodes_along(copied, path), nodes_along(rebuilt, path)):
        assert type(a) is type(b)
        assert hash(a) == hash(b)


def test_the_nodes_above_the_swapped_block_are_copied_as_replace_at_rebuilds_them():
    view_of, cast = _changes()[2]
    for func, path, block, buffer in _allocations():
        _assert_copied_as_rebuilt(func, path, _swapped(func, path, block, buffer, view_of, cast, swap._COPIED))
    assert swap.replaced_along(func, path, block) is func


def test_the_nodes_above_a_block_with_a_new_annotation_are_copied_as_replace_at_rebuilds_them():
    # storage_align's edit, at every block, most of them inside loops
    count = 0
    for func in _funcs():
        for path, block in walk_stmts(func):
            if not isinstance(block, Block):
                continue
            new = with_fields(block, annotations=block.annotations.set("buffer_dim_align", ((0, 0, 8, 1),)))
            _assert_copied_as_rebuilt(func, path, new)
            count += len(path) > 2
    assert count > 100


def test_a_buffer_equal_to_the_swapped_one_is_swapped_too():
    func = from_source(NESTED_VIEWS)
    path, block = next((p, s) for p, s in walk_stmts(func) if isinstance(s, Block) and s.alloc_buffers)
    buffer = block.alloc_buffers[0]
    twin = attrs.evolve(buffer)
    assert twin == buffer and twin is not buffer
    new = with_fields(buffer, storage_scope="local")
    out = swap.swap_buffer(block, twin, new, lambda b, _source=None: with_fields(b, storage_scope="local"))
    found = {b for b in walk(out) if isinstance(b, Buffer) and b.name in ("B", "V", "W")}
    assert {b.storage_scope for b in found} == {"local"}
    assert new in found


def _replaced(node, old: Buffer, new: Buffer):
    """``node`` with every buffer equal to ``old`` replaced by ``new``, each
    node rebuilt through its constructor."""
    if isinstance(node, Buffer):
        return new if node == old else node
    return map_children(node, lambda c: _replaced(c, old, new)) if attrs.has(type(node)) else node


def test_several_items_of_a_sequence_change_in_one_edit():
    edited = 0
    for func, path, block, buffer in _allocations():
        if any(isinstance(n, Block) and n.match_buffers for n in walk(func)):
            continue  # a view changes with the buffer: not what _replaced gives
        new = with_fields(buffer, storage_scope="local")
        out = swap.swap_buffer(block, buffer, new, lambda b, _source=None: with_fields(b, storage_scope="local"),
                               index=index_of(func), path=path)
        assert out == _replaced(block, buffer, new)
        for (_, before), (_, after) in zip(walk_stmts(block), walk_stmts(out)):
            if type(before) is not SeqStmt or after is before:
                continue
            changed = [i for i, (a, b) in enumerate(zip(before.seq, after.seq)) if a is not b]
            if len(changed) > 1 and len(before.seq) <= swap._ONE_EDIT_UP_TO:
                span = changed[-1] + 1 - changed[0]
                assert sequence_edit(after, before) == (changed[0], span, span)
                edited += 1
    assert edited > 10
