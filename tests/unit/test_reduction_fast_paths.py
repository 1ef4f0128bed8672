"""rfactor states the index of its result from what it changed
(``reduction._rfactor_index``) where the reduction block sits alone at the
bottom of a perfect nest: it is the index derived by walking what changed,
and the one built from scratch, on random reduction programs (after random
loop primitives) and on the tutorial's matmul; elsewhere the walk is kept."""

from unittest import mock

import tirfun.rewrites as R
from tirfun import IRModule
from tirfun.rewrites import reduction
from tirfun.rewrites.index import build_index, index_of
from tirfun.script import from_source
from tirfun.testing._choices import RandomChooser
from tirfun.testing.draw_reduction import draw_rfactor, random_reduction_module

from test_verify import GOOD_SOURCES  # the tutorial's matmul and relu, 16 x 16


def _cases():
    matmul = IRModule({"main": from_source(GOOD_SOURCES["matmul_relu"])})
    out = [(matmul, R.rfactor("k", 0)), (matmul, R.rfactor("k", 2))]
    for seed in range(6):
        mod = random_reduction_module(seed)
        rewrite = draw_rfactor(RandomChooser(seed), mod)
        if rewrite is not None:
            out.append((mod, rewrite))
    return out


def test_the_stated_index_is_the_derived_and_the_built_one():
    answers = []
    stated_index = reduction._rfactor_index

    def recorded(*args):
        out = stated_index(*args)
        answers.append(out is not None)
        return out

    for mod, rewrite in _cases():
        with mock.patch.object(reduction, "_rfactor_index", recorded):
            after = rewrite(mod)
        with mock.patch.object(reduction, "_rfactor_index", lambda *a: None):
            walked = rewrite(mod)
        assert after == walked, rewrite
        assert index_of(after["main"]) == index_of(walked["main"]) == build_index(after["main"]), rewrite
    # both ways are met: the stated index, and the walk where it cannot be told
    assert answers[0] and any(answers[2:]) and not all(answers)
