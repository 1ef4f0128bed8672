"""The shortcuts of tensorize and transform_layout give what the general
walks they skip give, on the blocks of many random programs:

* ``traversal.child_pusher`` pushes a node's children in the order
  ``iter_children`` yields them;
* tensorize asks the index whether a block binds a let, and walks it only
  where the index cannot tell;
* tensorize renames an implementation through a table of its variables,
  leaving names it keeps as they are;
* transform_layout checks a buffer's uses in one walk that passes over
  constants, two-operand nodes, the bounds of ranges and variables not
  named as the buffer's pointer.
"""

import importlib

import attrs
import pytest

from tirfun.analysis.traversal import child_pusher, iter_children, transform, walk, walk_stmts
from tirfun.nodes import Block, BlockRealize, Buffer, BufferLoad, BufferStore, Let, SeqStmt, Stmt, Var
from tirfun.nodes.base import with_fields
from tirfun.rewrites.name_pool import NamePool
from tirfun.rewrites.index import index_of
from tirfun.testing.block_programs import SOURCES, random_block_program
from tirfun.testing.draw_tensorize import intrin_of_block

tensorize = importlib.import_module("tirfun.rewrites.tensorize")
layout = importlib.import_module("tirfun.rewrites.layout")


def _programs():
    out = []
    for seed in range(12):
        for source in SOURCES:
            out.append(random_block_program(seed, source))
    return out


PROGRAMS = _programs()


def _funcs():
    for mod in PROGRAMS:
        yield from mod.functions.values()


def test_child_pusher_order_is_iter_children_order():
    for func in _funcs():
        for node in walk(func):
            pushed = []
            child_pusher(type(node))(node, pushed.append)
            assert pushed == list(iter_children(node)), type(node).__name__


def test_walk_is_the_pre_order_of_iter_children():
    def pre_order(node, out):
        out.append(node)
        for child in iter_children(node):
            pre_order(child, out)
        return out

    for func in _funcs():
        walked = list(walk(func))
        expected = pre_order(func, [])
        assert len(walked) == len(expected) and all(a is b for a, b in zip(walked, expected))


def _with_let(realize: BlockRealize) -> BlockRealize:
    """The realize with its store's value wrapped in a let."""
    store = realize.block.body
    t = Var("t_let", store.value.dtype)
    return with_fields(realize, block=with_fields(realize.block, body=with_fields(store, value=Let(t, store.value, t))))


def test_binds_a_let_agrees_with_the_walk():
    seen = 0
    for func in _funcs():
        index_of(func)
        for _, node in walk_stmts(func):
            if isinstance(node, BlockRealize) and node.block.name_hint != "root":
                assert tensorize._binds_a_let(node) == tensorize._walk_finds_let(node)
                if isinstance(node.block.body, BufferStore):
                    lets = _with_let(node)
                    assert tensorize._binds_a_let(lets) and tensorize._walk_finds_let(lets)
                    seen += 1
    assert seen > 20


def _renamed_by_walk(impl, names: dict, blocks: dict):
    """Every variable, buffer and block renamed as met, each rebuilt."""
    def post(n):
        if isinstance(n, Var):
            return Var(names[n.name], n.dtype, n.type_annotation) if n.name in names else n
        if isinstance(n, Buffer):
            return attrs.evolve(n, name=names[n.name]) if n.name in names else n
        if isinstance(n, Block) and n.name_hint in blocks:
            return with_fields(n, name_hint=blocks[n.name_hint])
        return n
    return transform(impl, post)


def test_renamed_implementation_is_the_walk_s():
    checked = 0
    for mod in PROGRAMS:
        func = next(iter(mod.functions.values()))
        pool = index_of(func)
        for _, node in walk_stmts(func):
            if not isinstance(node, Block) or node.name_hint == "root":
                continue
            intrin = intrin_of_block(func, node.name_hint)
            if intrin is None:
                continue
            for dtype in ("int32", "int64"):
                prep = tensorize.prepared(intrin, dtype)
                names, blocks = prep.fresh_names(NamePool(pool.names).fresh, NamePool(pool.blocks).fresh)
                fast = tensorize._renamed(prep.impl, names, blocks, prep.variables)
                assert fast == _renamed_by_walk(prep.impl, names, blocks)
                assert fast.script() == _renamed_by_walk(prep.impl, names, blocks).script()
                checked += 1
    assert checked > 20


def _uses_by_walk(root, buffer: Buffer, check) -> dict:
    """Every node of the statements naming ``buffer``, expressions whole."""
    from tirfun.analysis.mentions import names_in

    names = {buffer.name} | ({buffer.data.name} if buffer.data is not None else set())
    skip = layout._CONSTANTS if buffer.data is not None else layout._CONSTANTS | {Var}
    ranges: dict = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if isinstance(n, SeqStmt):
            stack.extend(item for item in n.seq if not names.isdisjoint(names_in(item)))
            continue
        if isinstance(n, Stmt) and names.isdisjoint(names_in(n)):
            continue
        if type(n) in skip:
            continue
        if isinstance(n, (BufferLoad, BufferStore)) or (isinstance(n, Var) and n.name == buffer.data.name):
            check(n)
        layout._var_ranges(n, ranges)
        if not isinstance(n, Buffer):
            stack.extend(iter_children(n))
    return ranges


@pytest.mark.parametrize("with_pointer", [None, "fresh", "clashing"])
def test_uses_checked_is_the_walk_s(with_pointer):
    """The same checks, in the same order, and the same ranges; with a
    pointer named as none of the function's variables, and (``clashing``)
    as one of them, which every use of that variable then goes to the
    check as (a pointer is known by its name)."""
    checked = seen = 0
    for func in _funcs():
        buffers = {}
        names = sorted({n.name for n in walk(func) if type(n) is Var})
        for node in walk(func):
            if isinstance(node, Buffer):
                buffers.setdefault(node.name, node)
        for k, buffer in enumerate(buffers.values()):
            if with_pointer and buffer.data is None:
                name = buffer.name + "_data" if with_pointer == "fresh" else names[k % len(names)]
                buffer = with_fields(buffer, data=Var(name, "handle"))
            fast_seen, walk_seen = [], []
            fast = layout._uses_checked(func.body, buffer, {}, fast_seen.append)
            slow = _uses_by_walk(func.body, buffer, walk_seen.append)
            assert fast == slow
            assert fast_seen == walk_seen
            checked += 1
            seen += any(type(n) is Var for n in fast_seen)
    assert checked > 100
    assert (seen > 20) == (with_pointer == "clashing")
