"""How deeply a program nests, and how deep tirfun takes it.

Parsing, hashing, comparing, lowering and interpreting a program recurse
along its nesting, so Python's recursion limit bounds the depth tirfun can
take. TVMScript is read up to :data:`MAX_DEPTH` levels of syntax, past what
TVM's own parser reads (a sum of about 255 terms, one level per term, is its
last). A program that would grow deeper through ``te.compute`` or a schedule
(inlining a long sum into the bottom of another) is refused where it would
be made, with the error of that step, so that every program tirfun makes
prints and parses back.
"""

from __future__ import annotations

import functools

from ..nodes import Buffer, Node
from .traversal import iter_children

#: deepest nesting of syntax accepted, statements and expressions together
MAX_DEPTH = 264


def nesting_depth(node: Node, stop: int | None = None) -> int:
    """The levels of nodes from ``node`` down to its deepest leaf (a leaf
    counts one), walked without recursion. Buffers are not entered: a
    program names them. With ``stop``, the walk ends as soon as the depth
    passes it, and the result is then some depth above ``stop``."""
    deepest = 0
    stack = [(node, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        current, depth = pop()
        if depth > deepest:
            deepest = depth
            if stop is not None and deepest > stop:
                return deepest
        for child in iter_children(current):
            if not isinstance(child, Buffer):
                push((child, depth + 1))
    return deepest




#: what a program nested deeper than Python's recursion allows is told
TOO_DEEP = (f"the program nests too deeply for tirfun to take (past Python's recursion limit; "
            f"TVMScript is read up to {MAX_DEPTH} levels): split long expressions into several "
            "statements or stages")


def guard_depth(make_error):
    """Decorate a public entry point so that a program nested past Python's
    recursion limit ends in ``make_error(TOO_DEEP)``, one of tirfun's
    errors, instead of a RecursionError from deep inside tirfun."""
    def wrap(fn):
        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except RecursionError:
                raise make_error(TOO_DEEP) from None
        return guarded
    return wrap


__all__ = ["MAX_DEPTH", "TOO_DEEP", "guard_depth", "nesting_depth"]
