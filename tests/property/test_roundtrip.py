"""Printing then parsing gives the function back.

For every random well-formed PrimFunc: its TVMScript parses to a function
structurally equal to it, whose own TVMScript is the identical text; the
same holds for a module holding it.
"""

from __future__ import annotations

from hypothesis import given

from tirfun.analysis.equality import assert_structural_equal
from tirfun.nodes import IRModule, PrimFunc
from tirfun.script import from_source
from tirfun.testing.programs import prim_funcs


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


@given(prim_funcs(max_blocks=2, literal_pairs=True, alloc_scopes=("global", "shared", "local")))
def test_unfolded_literals_and_scopes_survive(func: PrimFunc):
    # operators between two literals (T.Add(1, 2)) must not be folded by the
    # parser; intermediate buffers in other scopes print their scope
    _roundtrip(func)
