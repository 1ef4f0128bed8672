"""Printing then parsing gives the function back.

For every random well-formed PrimFunc: its TVMScript parses to a function
structurally equal to it, whose own TVMScript is the identical text; the
same holds for a module holding it. The later tests add what is valid but
rare: operators between literals, infinities and other special literals,
unusual dtypes and scopes, non-default buffer fields, and bound names that
collide with the printer's own vocabulary.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tirfun.analysis.equality import assert_structural_equal
from tirfun.nodes import IRModule, PrimFunc
from tirfun.script import from_source
from tirfun.testing.programs import prim_funcs
from tirfun.testing.renaming import TRICKY_NAMES, random_renaming, rename_bound

ALL_DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
              "uint8", "uint16", "uint32", "uint64", "bool")


def _roundtrip(node):
    text = node.script()
    parsed = from_source(text)
    assert type(parsed) is type(node), text
    assert_structural_equal(parsed, node)
    assert parsed.script() == text
    return parsed


@given(prim_funcs())
def test_print_parse_gives_the_function_back(func: PrimFunc):
    _roundtrip(func)


@given(prim_funcs(max_blocks=2))
def test_print_parse_gives_the_module_back(func: PrimFunc):
    name = func.attrs.get("global_symbol", "main")
    _roundtrip(IRModule({name: func}))


@given(prim_funcs(max_blocks=2, literal_pairs=True, special_values=True, dtypes=ALL_DTYPES,
                  alloc_scopes=("global", "shared", "local")))
def test_literals_dtypes_and_scopes_survive(func: PrimFunc):
    # operators between two literals (T.Add(1, 2), T.max(7, 2)) must not be
    # folded by the parser; infinities, -0.0 and denormals keep their values
    _roundtrip(func)


@given(prim_funcs(max_blocks=2, buffer_fields=True))
def test_buffer_fields_survive(func: PrimFunc):
    _roundtrip(func)


@given(prim_funcs(max_blocks=2), st.integers(0, 2**32 - 1))
def test_names_the_printer_uses_itself_survive(func: PrimFunc, seed):
    # buffers or loops named T, range, min... must not shadow what the
    # printed text relies on
    renamed = rename_bound(func, random_renaming(func, seed, TRICKY_NAMES))
    _roundtrip(renamed)
    _roundtrip(IRModule({"main": renamed}))
