"""The shortcuts a block primitive takes to find what it works on give what
the general paths give:

* ``resolve_site`` with references that name one function, or none, gives
  the site the general path gives for every mix of references (the
  general path is the one a tuple of references takes);
* ``loops_and_parent`` gives the loops between a block and its enclosing
  block (as the nodes above its path show them) and the node one step
  above the path, ``scope_path`` the path of that enclosing block, and the
  cache primitives' ``_enclosing_domains`` the domains of the blocks
  above, for every block of many random programs.
"""

import itertools

import pytest

from tirfun.analysis.traversal import ancestors, blocks, get_at
from tirfun.nodes import Block, For, IRModule
from tirfun.rewrites.base import Checks, _Stop
from tirfun.rewrites.cache import _enclosing_domains
from tirfun.rewrites.checks import loops_above, loops_and_parent, resolve_site, scope_path
from tirfun.rewrites.index import index_of
from tirfun.rewrites.refs import BlockRef, LoopRef
from tirfun.testing.block_programs import SOURCES, random_block_program


def _site_or_error(mod, refs):
    chk = Checks("test")
    try:
        site = resolve_site(chk, mod, refs)
    except _Stop:
        return [(type(e), str(e)) for e in chk.errors]
    assert not chk.errors
    return site.func_name, site.func, site.index


def _modules():
    func = random_block_program(0, SOURCES[0])["main"]
    other = random_block_program(1, SOURCES[0])["main"]
    return [IRModule({"main": func}), IRModule({"main": func, "other": other}),
            IRModule({"f": func}), IRModule({"f": func, "g": other})]


@pytest.mark.parametrize("mod", _modules())
def test_resolve_site_shortcut_is_the_general_path(mod):
    funcs = [None, "main", "other", "f", "g", "nope", 3]
    for n in range(4):
        for named in itertools.product(funcs, repeat=n):
            refs = [(BlockRef if k % 2 else LoopRef)("x", func) for k, func in enumerate(named)]
            want = _site_or_error(mod, tuple(refs))  # a tuple takes the general path
            assert _site_or_error(mod, refs) == want, named


def _loops_by_ancestors(func, path):
    """The loops above ``path`` up to its nearest enclosing block, read
    from every node above it."""
    out = []
    for p, node in ancestors(func, path):
        if isinstance(node, Block):
            out = []
        elif isinstance(node, For):
            out.append((p, node))
    return out


def test_the_walks_up_a_path_are_the_ancestors_walks():
    for seed in range(12):
        for source in SOURCES:
            func = random_block_program(seed, source)["main"]
            site = resolve_site(Checks("test"), IRModule({"main": func}), [])
            assert site.index is index_of(func)
            for path, _block in blocks(func):
                loops, parent = loops_and_parent(site, path)
                assert loops == loops_above(site, path) == _loops_by_ancestors(func, path)
                assert all(a[1] is b[1] for a, b in zip(loops, _loops_by_ancestors(func, path)))
                above = ancestors(func, path[:-1])
                scopes = [p for p, node in above if isinstance(node, Block)]
                assert scope_path(site, path[:-1]) == (scopes[-1] if scopes else None)
                domains = {iv.var: iv.dom for _, node in ancestors(func, path) if isinstance(node, Block)
                           for iv in node.iter_vars}
                assert _enclosing_domains(site, path) == domains
                assert list(_enclosing_domains(site, path)) == list(domains)
                assert parent is get_at(func, path[:-1])
