"""Structural equality and hashing on random PrimFuncs.

Equal modulo a consistent renaming of every bound name (with equal hashes);
different after changing any one constant, dtype or block name, even when
the change comes with such a renaming.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tirfun.analysis.equality import (
    assert_structural_equal, structural_equal, structural_hash,
)
from tirfun.testing.mutations import KINDS, mutations
from tirfun.testing.programs import prim_funcs
from tirfun.testing.renaming import rename_bound


@given(prim_funcs(), st.integers(0, 2**32 - 1))
def test_equal_after_a_consistent_renaming(func, seed):
    renamed = rename_bound(func, seed)
    assert structural_equal(func, renamed)
    assert structural_equal(renamed, func)
    assert_structural_equal(func, renamed)
    assert structural_hash(func) == structural_hash(renamed)


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_different_after_one_change(kind, data):
    func = data.draw(prim_funcs(), label="func")
    mutation = data.draw(mutations(func, kinds=[kind]), label="mutation")
    renamed = rename_bound(func, data.draw(st.integers(0, 2**32 - 1), label="seed"))
    assert not structural_equal(func, mutation.func), mutation.description
    assert not structural_equal(mutation.func, func), mutation.description
    assert not structural_equal(renamed, mutation.func), mutation.description
    with pytest.raises(AssertionError):
        assert_structural_equal(func, mutation.func)
