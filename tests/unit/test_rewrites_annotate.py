"""annotate and unannotate."""

import pytest

import tirfun.rewrites as R
from tirfun.nodes import IRModule, IntImm
from tirfun.script import from_source

SOURCE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
"""


def mod_of() -> IRModule:
    return IRModule({"main": from_source(SOURCE)})


@pytest.mark.parametrize("target", [R.BlockRef("B"), R.LoopRef("i"), "B"])
@pytest.mark.parametrize("value", [1, 2.5, "text", True, [1, "a"], {"k": 1}, IntImm("int64", 3)])
def test_annotate_then_unannotate_round_trips(target, value):
    mod = mod_of()
    out = R.annotate(target, "key", value)(mod)
    node = R.get(out, target)
    assert node.annotations["key"] == value
    back = R.unannotate(target, "key")(out)
    assert back == mod


def test_an_int32_constant_is_annotated_as_the_python_int_it_prints_as():
    out = R.annotate("B", "key", IntImm("int32", 3))(mod_of())
    value = R.get(out, "B").annotations["key"]
    assert value == 3 and type(value) is int


def test_annotate_leaves_an_existing_key_as_it_is():
    mod = R.annotate("B", "key", 1)(mod_of())
    assert R.annotate("B", "key", 2)(mod) is mod


def test_annotating_a_loop_keeps_the_block():
    mod = mod_of()
    out = R.annotate(R.LoopRef("i"), "pragma", 1)(mod)
    assert R.get(out, "B") is R.get(mod, "B")
    assert 'for i in T.serial(8, annotations={"pragma": 1}):' in out.script()


def test_annotating_a_block_prints_block_attr():
    out = R.annotate("B", "ann_key", "ann_value")(mod_of())
    assert 'T.block_attr({"ann_key": "ann_value"})' in out.script()


@pytest.mark.parametrize("value", [None, object(), {1: 2}, [1, None]])
def test_bad_annotation_values_are_refused(value):
    [err] = R.annotate("B", "key", value).violations(mod_of())
    assert isinstance(err, R.InvalidAnnotationError)
    assert str(err).startswith("annotate: block 'B': the annotation value holds")


@pytest.mark.parametrize("keys", [["a"], ["a", "b"], ["b", "a", "c"]])
@pytest.mark.parametrize("target", ["B", "i"])
def test_unannotate_leaves_what_removing_the_key_leaves(keys, target):
    """Removing the last key takes the shared empty map: the loop or block
    is equal to, and prints as, the one ``remove`` makes, for each key of
    one, two and three annotations."""
    ref = R.LoopRef(target) if target == "i" else target
    mod = mod_of()
    for k, key in enumerate(keys):
        mod = R.annotate(ref, key, k)(mod)
    node = R.get(mod, ref)
    for key in keys:
        out = R.unannotate(ref, key)(mod)
        want = node.annotations.remove(key)
        got = R.get(out, ref).annotations
        assert got == want and dict(got) == dict(want) and hash(got) == hash(want)
        never = mod_of()
        for k, other in enumerate(keys):
            if other != key:
                never = R.annotate(ref, other, k)(never)
        assert out.script() == never.script()
