"""The multi-stage program strategy itself: deterministic, every stage shape
and dtype drawn, options respected, and a feature reader that tells the
shapes apart on programs written by hand."""

from __future__ import annotations

import collections

import pytest

import tirfun.testing
from tirfun.errors import TirfunError
from tirfun.script import from_source
from tirfun.testing._choices import RandomChooser
from tirfun.testing.stages import (
    DEFAULT_DTYPES, STAGE_KINDS, StageOptions, random_stages, stage_features, stage_source,
)

SEEDS = range(150)


@pytest.fixture(scope="module")
def counts():
    out = collections.Counter()
    for seed in SEEDS:
        out.update(stage_features(random_stages(seed)))
    return out


def test_the_same_seed_gives_the_same_program():
    assert random_stages(11) == random_stages(11)
    assert stage_source(RandomChooser(4), StageOptions()) == stage_source(RandomChooser(4),
                                                                          StageOptions())


@pytest.mark.parametrize("feature", ["reduction", "reduction_feeds", "padding", "softmax", "conv",
                                     "matmul", "several_consumers", "alloc", "stages:1",
                                     "stages:6+", *(f"dtype:{d}" for d in DEFAULT_DTYPES)])
def test_every_shape_and_dtype_is_drawn(counts, feature):
    # each in at least one program in twenty
    assert counts[feature] >= len(SEEDS) // 20, sorted(counts.items())


@pytest.mark.parametrize("kind, feature", [("softmax", "softmax"), ("conv", "conv"),
                                           ("matmul", "matmul"), ("padding", "padding"),
                                           ("reduction", "reduction_feeds")])
def test_kinds_restrict_what_is_drawn(kind, feature):
    others = {"softmax", "conv", "matmul", "padding"} - {feature}
    if kind == "conv":
        others.discard("padding")  # a conv pads its input first, or not
    for seed in range(20):
        features = stage_features(random_stages(seed, kinds=[kind], dtypes=["float32"]))
        assert feature in features
        assert not features & others


def test_dtypes_restrict_what_is_drawn():
    for seed in range(20):
        func = random_stages(seed, dtypes=["float64"])
        assert {str(b.dtype) for b in func.buffer_map.values()} == {"float64"}


def test_softmax_needs_floats():
    assert all("softmax" not in stage_features(random_stages(s, dtypes=["int32"]))
               for s in range(30))


@pytest.mark.parametrize("kwargs, message", [
    ({"kinds": ["transpose"]}, "stage kinds are some of"),
    ({"dtypes": ["uint8"]}, "stage programs are made of float scalars or signed integer scalars"),
    ({"max_stages": 0}, "max_stages and max_extent are at least 1"),
    ({"colour": 1}, "unknown stage program option"),
])
def test_bad_options_are_refused(kwargs, message):
    with pytest.raises(TirfunError, match=message):
        random_stages(0, **kwargs)


def test_the_strategy_is_exported_lazily():
    assert tirfun.testing.random_stages is random_stages
    assert set(STAGE_KINDS) == {"elementwise", "reduction", "padding", "softmax", "conv", "matmul"}


HAND = '''
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    B = T.alloc_buffer((4, 4))
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
'''


def test_features_of_hand_written_programs():
    plain = stage_features(from_source(HAND))
    assert plain == {"stages:2", "alloc", "dtype:float32"}
    softmax = stage_features(from_source('''
@T.prim_func
def main(A: T.Buffer((2, 3), "float32"), C: T.Buffer((2, 3), "float32")):
    M = T.alloc_buffer((2,))
    E = T.alloc_buffer((2, 3))
    S = T.alloc_buffer((2,))
    for i, k in T.grid(2, 3):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.min_value("float32")
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, j in T.grid(2, 3):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj] - M[vi])
    for i, k in T.grid(2, 3):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vk]
    for i, j in T.grid(2, 3):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = E[vi, vj] / S[vi]
'''))
    assert {"softmax", "reduction", "reduction_feeds", "several_consumers", "stages:4"} <= softmax
    assert not softmax & {"conv", "matmul", "padding"}
    matmul = stage_features(from_source('''
@T.prim_func
def main(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3, 2), "float32"), C: T.Buffer((2, 2), "float32")):
    for i, j, k in T.grid(2, 2, 3):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''))
    assert matmul == {"matmul", "reduction", "stages:1", "dtype:float32"}
