"""Structural equality and hashing on random PrimFuncs.

Equal modulo a consistent renaming of every bound name (with equal hashes);
different after changing any one constant, dtype or (with ``names=True``)
block name, even when the change comes with such a renaming. Without
``names``, a block name does not count, as in TVM.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tirfun.analysis.equality import (
    assert_structural_equal, structural_equal, structural_hash,
)
from tirfun.testing.mutations import KINDS, mutations
from tirfun.testing.programs import prim_funcs
from tirfun.testing.renaming import TRICKY_NAMES, bound_names, random_renaming, rename_bound

# everything valid, however rare: for equality nothing is out of scope
EXTENDED = dict(literal_pairs=True, special_values=True, buffer_fields=True,
                alloc_scopes=("global", "shared", "local"),
                dtypes=("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32",
                        "int64", "uint8", "uint16", "uint32", "uint64", "bool"))


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
    names = kind == "block_name"
    assert not structural_equal(func, mutation.func, names=names), mutation.description
    assert not structural_equal(mutation.func, func, names=names), mutation.description
    assert not structural_equal(renamed, mutation.func, names=names), mutation.description
    with pytest.raises(AssertionError):
        assert_structural_equal(func, mutation.func, names=names)
    if names:  # as TVM's Block equality: the name alone does not count
        assert structural_equal(func, mutation.func)
        assert structural_hash(func) == structural_hash(mutation.func)


@given(prim_funcs(max_blocks=2, **EXTENDED), st.integers(0, 2**32 - 1))
def test_equal_after_renaming_rare_programs_to_tricky_names(func, seed):
    renamed = rename_bound(func, random_renaming(func, seed, TRICKY_NAMES))
    assert structural_equal(func, renamed)
    assert structural_hash(func) == structural_hash(renamed)


@given(data=st.data())
def test_rare_programs_differ_after_one_change(data):
    func = data.draw(prim_funcs(max_blocks=2, **EXTENDED), label="func")
    mutation = data.draw(mutations(func), label="mutation")
    names = mutation.kind == "block_name"
    assert not structural_equal(func, mutation.func, names=names), mutation.description



@given(prim_funcs(), st.integers(0, 2**32 - 1))
def test_a_body_alone_equals_its_copy_with_the_parameter_buffers_renamed(func, seed):
    # taken out of its function, a body's parameter buffers are declared by
    # nothing in it; TVM maps such buffers by their fields, not their names.
    # The names are permuted among themselves and fresh ones, so a buffer
    # often takes another's name, the case a comparison by name gets wrong
    names = sorted({b.name for b in func.buffer_map.values()})
    taken = set(bound_names(func))
    fresh = [f"free{k}" for k in range(len(names)) if f"free{k}" not in taken]
    targets = random.Random(seed).sample(names + fresh, len(names))
    renamed = rename_bound(func, dict(zip(names, targets)))
    assert structural_equal(func.body, renamed.body)
    assert structural_equal(renamed.body, func.body)
    assert structural_hash(func.body) == structural_hash(renamed.body)
