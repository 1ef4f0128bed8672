"""Traversal: structural sharing, paths, replacement along a path."""

import pytest

from tirfun.analysis import (
    find_block, find_loop, get_at, iter_children, map_children, replace_at, transform, walk,
    walk_stmts,
)
from tirfun.errors import UnknownNameError
from tirfun.nodes import (
    Block, BlockRealize, Buffer, BufferStore, Evaluate, FloatImm, For, IntImm, IterVar, PrimFunc,
    Range, SeqStmt, Var,
)


def _two_block_func():
    A, B, C = Buffer("A", [8]), Buffer("B", [8]), Buffer("C", [8])
    stmts = []
    for loop_name, blk, src, dst in (("i", "B", A, B), ("j", "C", B, C)):
        lv, v = Var(loop_name), Var("v" + loop_name)
        block = Block([IterVar(Range(0, 8), v, "DataPar")], [src[v:v + 1]], [dst[v:v + 1]], blk,
                      BufferStore(dst, src[v] * 2.0, [v]))
        stmts.append(For(lv, 0, 8, "serial", BlockRealize([lv], True, block)))
    root = BlockRealize([], True, Block([], [], [], "root", SeqStmt(stmts)))
    params = [Var("a", "handle"), Var("b", "handle"), Var("c", "handle")]
    return PrimFunc(params, root, buffer_map=dict(zip(params, (A, B, C))))


def test_map_children_returns_same_object_when_nothing_changes():
    f = _two_block_func()
    assert map_children(f, lambda n: n) is f
    assert transform(f, lambda n: n) is f


def test_transform_rebuilds_only_what_changed():
    f = _two_block_func()

    def double_to_triple(n):
        if n == FloatImm("float32", 2.0):
            return FloatImm("float32", 3.0)
        return n

    g = transform(f, double_to_triple)
    assert g != f
    assert all(isinstance(n, object) for n in walk(g))
    assert FloatImm("float32", 2.0) not in list(walk(g))
    # buffers did not change, so they are shared
    assert g.buffer_map[g.params[0]] is f.buffer_map[f.params[0]]


def test_find_and_replace_along_a_path_shares_siblings():
    f = _two_block_func()
    path = find_block(f, "C")
    block = get_at(f, path)
    assert isinstance(block, Block) and block.name_hint == "C"
    new_block = block.__class__(**{**{a: getattr(block, a) for a in
                                      ("iter_vars", "reads", "writes", "body", "init",
                                       "alloc_buffers", "match_buffers", "annotations")},
                                   "name_hint": "C2"})
    g = replace_at(f, path, new_block)
    assert get_at(g, path).name_hint == "C2"
    other = find_block(f, "B")
    assert get_at(g, other) is get_at(f, other)
    assert get_at(f, path).name_hint == "C"  # the input is untouched


def test_find_loop_and_unknown_names():
    f = _two_block_func()
    loop = get_at(f, find_loop(f, "j"))
    assert isinstance(loop, For) and loop.loop_var.name == "j"
    with pytest.raises(UnknownNameError, match="no block named 'Z'"):
        find_block(f, "Z")
    with pytest.raises(UnknownNameError, match="no loop named 'k'"):
        find_loop(f, "k")


def test_walk_stmts_visits_statements_in_order_with_paths():
    f = _two_block_func()
    kinds = [type(s).__name__ for _, s in walk_stmts(f)]
    assert kinds[:3] == ["BlockRealize", "Block", "SeqStmt"]
    assert kinds.count("For") == 2 and kinds.count("BufferStore") == 2
    for path, stmt in walk_stmts(f):
        assert get_at(f, path) is stmt


def test_children_include_buffer_map_entries():
    f = _two_block_func()
    kids = list(iter_children(f))
    assert any(isinstance(k, Buffer) and k.name == "A" for k in kids)


def test_deep_nests_do_not_hit_the_recursion_limit_when_walking():
    body = Evaluate(IntImm("int32", 0))
    for d in range(3000):
        body = For(Var(f"i{d}"), 0, 2, "serial", body)
    assert sum(1 for _ in walk_stmts(body)) == 3001
    assert sum(1 for _ in walk(body)) > 3000


def test_map_children_visits_each_child_once_in_field_order_and_rebuilds_the_one_changed():
    # map_children runs a mapper written out per node class: over every
    # node of programs holding annotations, a buffer map, optional fields
    # left empty and vectors, it must hand fn exactly the children
    # iter_children lists, and replacing one child changes that child only
    import attrs
    from pyrsistent import PMap

    from tirfun.script import from_source

    source = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
    T.func_attr({"tir.noalias": True})
    for i in T.serial(8, annotations={"pragma_unroll": 1}):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(i < n)
            T.block_attr({"meta": 2})
            x: T.float32 = T.if_then_else(vi < 4, A[vi], T.float32(0))
            B[vi] = x * T.float32(3)
"""
    func = from_source(source)
    checked = 0
    for node in walk(func):
        seen = []
        assert map_children(node, lambda c: seen.append(c) or c) is node
        expected = list(iter_children(node))
        assert sorted(map(id, seen)) == sorted(map(id, expected)), type(node).__name__
        if not any(isinstance(getattr(node, a.name), PMap) for a in attrs.fields(type(node))):
            assert seen == expected, type(node).__name__  # a map's entries come in another order
        for target in {id(c): c for c in expected}.values():
            if not isinstance(target, Var):
                continue
            fresh = Var(target.name + "_new", target.dtype)
            out = map_children(node, lambda c, t=target: fresh if c is t else c)
            assert out is not node and type(out) is type(node)
            assert [fresh if c is target else c for c in iter_children(node)] == list(iter_children(out))
            checked += 1
    assert checked >= 10


def test_rename_keeps_what_a_handle_points_to():
    from tirfun.analysis.traversal import rename
    from tirfun.nodes import PointerType

    p = Var("p", PointerType("float32", "shared"))
    out = rename(Evaluate(p), {"p": "q"})
    assert out.value.name == "q" and out.value.type_annotation == p.type_annotation
