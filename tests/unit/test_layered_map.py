"""The name index's persistent mapping, and the cheap rebuilds rewrites use
(``with_fields``, ``SeqStmt.with_item``): each must give exactly what the
slow path gives."""

import random

import attrs
import pytest

from tirfun.errors import NodeError
from tirfun.nodes import (
    Block, BlockRealize, Buffer, Evaluate, For, IntImm, IterVar, PrimFunc, Range, SeqStmt, Var,
)
from tirfun.nodes.base import with_fields
from tirfun.rewrites.layered_map import LayeredMap


def test_changes_leave_the_original_untouched():
    base = LayeredMap({"i": 1, "j": 2})
    grown = base.set("k", 3).remove("i")
    assert dict(base.items()) == {"i": 1, "j": 2}
    assert dict(grown.items()) == {"j": 2, "k": 3}
    assert "i" not in grown and "i" in base
    assert grown.get("i") is None and grown.get("i", 0) == 0
    with pytest.raises(KeyError):
        grown["i"]
    with pytest.raises(KeyError):
        base.remove("x")
    assert base.discard("x") is base


def test_a_random_history_agrees_with_dicts():
    # long enough that the layer is folded into the base several times
    rng = random.Random(0)
    versions = [(LayeredMap(), {})]
    for step in range(3000):
        m, d = versions[rng.randrange(len(versions))] if rng.random() < 0.2 else versions[-1]
        key = f"n{rng.randrange(200)}"
        if key in d and rng.random() < 0.4:
            m, d = m.remove(key), {k: v for k, v in d.items() if k != key}
        else:
            m, d = m.set(key, step), {**d, key: step}
        versions.append((m, d))
    for m, d in versions[::50] + versions[-5:]:
        assert len(m) == len(d)
        assert dict(m.items()) == d
        assert set(m) == set(d)
        assert m == LayeredMap(d) and hash(m) == hash(LayeredMap(d))


def test_the_evolver_batches_changes():
    base = LayeredMap({"a": 1})
    e = base.evolver()
    e["b"] = 2
    e.set("c", 3)
    del e["a"]
    assert "a" not in e and e["b"] == 2 and len(e) == 2 and e.is_dirty()
    out = e.persistent()
    assert dict(out.items()) == {"b": 2, "c": 3}
    assert base.evolver().persistent() is base
    assert dict(base.update({"a": 5}, {"z": 0}).items()) == {"a": 5, "z": 0}


def test_with_fields_is_evolve_with_every_check():
    loop = For(Var("i"), 0, 8, "serial", Evaluate(0))
    shorter = with_fields(loop, extent=IntImm("int32", 4))
    assert shorter == attrs.evolve(loop, extent=IntImm("int32", 4))
    assert hash(shorter) == hash(attrs.evolve(loop, extent=IntImm("int32", 4)))
    assert with_fields(loop, annotations={"k": 1}).annotations["k"] == 1  # converted
    with pytest.raises(NodeError, match="has dtype int64"):
        with_fields(loop, extent=IntImm("int64", 4))  # the node's own rule still runs
    expr = Var("x") + 1
    assert with_fields(expr, b=IntImm("int32", 2)).dtype == "int32"


def test_with_fields_checks_what_a_change_can_break():
    # a statement's own rules run again only when a field they read changes;
    # a replaced body is still checked by its field's rule
    loop = For(Var("i"), 0, 8, "serial", Evaluate(0))
    with pytest.raises(NodeError, match="must be a statement"):
        with_fields(loop, body=IntImm("int32", 0))
    with pytest.raises(NodeError, match="unknown thread tag"):
        with_fields(loop, kind="thread_binding")
    assert with_fields(loop, body=Evaluate(1)) == For(Var("i"), 0, 8, "serial", Evaluate(1))
    func = PrimFunc([], loop)
    with pytest.raises(NodeError, match="PrimFunc body must be a statement"):
        with_fields(func, body=IntImm("int32", 0))
    with pytest.raises(NodeError, match="PrimFunc body must be a statement"):
        PrimFunc([], IntImm("int32", 0))
    with pytest.raises(NodeError, match="not a parameter"):
        with_fields(func, buffer_map={Var("a", "handle"): Buffer("A", [4], "float32")})
    assert with_fields(func, body=Evaluate(1)).body == Evaluate(1)
    block = Block([], [], [], "B", Evaluate(0))
    realize = BlockRealize([], True, block)
    vi = IterVar(Range(0, 4), Var("vi"), "DataPar")
    with pytest.raises(NodeError, match="1 iteration variables but 0 bound values"):
        with_fields(realize, block=with_fields(block, iter_vars=[vi]))
    with pytest.raises(NodeError, match="iter_vars holds a Var"):
        with_fields(block, iter_vars=[Var("vi")])
    assert with_fields(block, body=Evaluate(1)) == Block([], [], [], "B", Evaluate(1))


def test_replacing_one_item_of_a_sequence_keeps_it_flat():
    seq = SeqStmt([Evaluate(1), Evaluate(2), Evaluate(3)])
    one = seq.with_item(1, Evaluate(7))
    assert one == SeqStmt([Evaluate(1), Evaluate(7), Evaluate(3)])
    assert hash(one) == hash(SeqStmt([Evaluate(1), Evaluate(7), Evaluate(3)]))
    spliced = seq.with_item(0, SeqStmt([Evaluate(5), Evaluate(6)]))
    assert list(spliced.seq) == [Evaluate(5), Evaluate(6), Evaluate(2), Evaluate(3)]
    assert list(seq.with_item(2, Evaluate(0)).seq) == [Evaluate(1), Evaluate(2)]


def test_removing_items_of_a_sequence_keeps_it_flat():
    seq = SeqStmt([Evaluate(1), Evaluate(2), Evaluate(3), Evaluate(4)])
    left = seq.without_items([3, 0])
    assert left == SeqStmt([Evaluate(2), Evaluate(3)])
    assert hash(left) == hash(SeqStmt([Evaluate(2), Evaluate(3)]))
    assert list(seq.without_items([1, 2, 3]).seq) == [Evaluate(1)]
    with pytest.raises(NodeError, match="at least one statement"):
        seq.without_items(range(4))


def test_a_sequence_remembers_which_items_its_edits_replaced():
    # the name index reads the span an edit replaced instead of comparing
    # every kept item; the span must hold for chains of edits whose
    # intermediate sequences are gone, and be unknown for anything else
    import gc

    from tirfun.nodes.stmt import sequence_edit

    items = [Evaluate(k + 1) for k in range(10)]
    seq = SeqStmt(items)
    one = seq.with_item(4, Evaluate(40))
    assert sequence_edit(one, seq) == (4, 1, 1)
    assert sequence_edit(seq, one) is None
    grown = one.with_inserted(7, Evaluate(70))
    assert sequence_edit(grown, one) == (7, 0, 1)
    assert sequence_edit(grown, seq) == (4, 3, 4)  # items 4..6 of seq, now 4..7 of grown
    shrunk = seq.without_items([2])
    assert sequence_edit(shrunk, seq) == (2, 1, 0)
    replaced = seq.with_items(-3, 10, [Evaluate(99)])
    assert sequence_edit(replaced, seq) == (7, 3, 1)
    # an intermediate sequence that is gone still composes
    last = seq.with_item(1, Evaluate(11)).with_item(8, Evaluate(88))
    gc.collect()
    assert sequence_edit(last, seq) == (1, 8, 8)
    # built otherwise: nothing is known, even when equal
    assert sequence_edit(SeqStmt(list(one.seq)), seq) is None
    # every span agrees with the items: outside it, the same objects
    for new in (one, grown, shrunk, replaced, last):
        start, removed, added = sequence_edit(new, seq)
        assert list(new.seq[:start]) == items[:start] and all(a is b for a, b in zip(new.seq[:start], items))
        tail = len(items) - start - removed
        assert all(a is b for a, b in zip(new.seq[len(new.seq) - tail:], items[len(items) - tail:]))
        assert len(new.seq) == start + added + tail


def _recounted_by_evolver(names: LayeredMap, delta: dict) -> LayeredMap:
    """What ``recounted`` stands for: each change set or removed through
    an evolver."""
    out = names.evolver()
    for name, d in delta.items():
        if not d:
            continue
        held = names.get(name, 0)
        if held + d > 0:
            out.set(name, held + d)
        elif held:
            out.remove(name)
    return out.persistent()


def test_recounted_is_the_evolver_path():
    """Random count maps, grown and shrunk through layers of changes (so
    that keys sit in the base, in the layer, or are deleted in the layer),
    recounted by random deltas: the same items and size as the evolver's
    steps give, and the map itself when nothing changes."""
    import random

    rng = random.Random(7)
    for trial in range(300):
        names = LayeredMap({f"n{k}": rng.randint(1, 3) for k in range(rng.randint(0, 60))})
        for _ in range(rng.randint(0, 4)):
            names = _recounted_by_evolver(names, {f"n{rng.randint(0, 80)}": rng.choice([-3, -1, 1, 2])
                                                  for _ in range(rng.randint(0, 40))})
        delta = {f"n{rng.randint(0, 80)}": rng.choice([-4, -2, -1, 0, 0, 1, 3]) for _ in range(rng.randint(0, 8))}
        want = _recounted_by_evolver(names, delta)
        got = names.recounted(delta)
        assert dict(got.items()) == dict(want.items()) and len(got) == len(want) == len(dict(got.items()))
        if not any(delta.values()):
            assert got is names


def test_changed_is_the_evolver_path():
    """Random maps with keys in the base, in the layer and deleted in the
    layer, changed by random removals and then settings (a key may be both
    removed and set): the same items and size as an evolver's ``remove``
    and ``set`` calls give, the map itself when nothing changes, and a
    KeyError for an absent key to remove, as the evolver raises."""
    import random

    rng = random.Random(11)
    for trial in range(300):
        m = LayeredMap({f"n{k}": k for k in range(rng.randint(0, 60))})
        for _ in range(rng.randint(0, 4)):
            e = m.evolver()
            for _ in range(rng.randint(0, 30)):
                key = f"n{rng.randint(0, 80)}"
                if key in e and rng.random() < 0.4:
                    e.remove(key)
                else:
                    e.set(key, trial)
            m = e.persistent()
        present = [key for key in m]
        removes = rng.sample(present, min(len(present), rng.randint(0, 3)))
        sets = {f"n{rng.randint(0, 80)}": rng.random() for _ in range(rng.randint(0, 8))}
        if removes and rng.random() < 0.3:
            sets[removes[0]] = "again"
        e = m.evolver()
        for key in removes:
            e.remove(key)
        for key, value in sets.items():
            e.set(key, value)
        want = e.persistent()
        got = m.changed(sets, removes)
        assert dict(got.items()) == dict(want.items()) and len(got) == len(want) == len(dict(got.items()))
        assert dict(m.items()) == {key: m[key] for key in present}  # the original is untouched
        if not sets and not removes:
            assert got is m
        absent = next(f"x{k}" for k in range(100) if f"x{k}" not in m)
        with pytest.raises(KeyError):
            m.changed({}, [absent])
