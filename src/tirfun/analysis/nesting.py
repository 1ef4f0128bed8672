"""How deeply a program nests, and how deep tirfun takes it.

Parsing, hashing, comparing, lowering and interpreting a program recurse
along its nesting, so Python's recursion limit bounds the depth tirfun can
take. TVMScript is read up to :data:`MAX_DEPTH` levels of syntax, past what
TVM's own parser reads (a sum of about 255 terms, one level per term, is its
last); ``te.create_prim_func`` refuses a deeper compute. Every public step
(the rewrites, ``lower``, ``build``, the interpreter) runs such a program
whatever the depth of its caller's own stack (:func:`call_with_room`), and
ends a program nested deeper still (made by hand, or by inlining a long sum
at the bottom of another) in its own error, never a RecursionError.
"""

from __future__ import annotations

import functools
import sys

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


#: the Python frames a program of MAX_DEPTH levels may take in the pass
#: that recurses most (lowering: three frames a level), with some to spare
ROOM = 4 * MAX_DEPTH + 200


def _stack_depth() -> int:
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def call_with_room(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; where that runs past Python's recursion
    limit, once more with the limit raised to :data:`ROOM` frames above the
    caller's, then set back. A caller deep in its own stack (a compiler
    that embeds tirfun) may have left less than a program of
    :data:`MAX_DEPTH` levels needs; the retry gives every caller the same
    room. A RecursionError the retry meets as well is raised."""
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        need = _stack_depth() + ROOM
        old = sys.getrecursionlimit()
        if need <= old:
            raise  # the room was there: the program is too deep
    sys.setrecursionlimit(need)
    try:
        return fn(*args, **kwargs)
    finally:
        sys.setrecursionlimit(old)


def guard_depth(make_error):
    """Decorate a public entry point: it runs with :func:`call_with_room`,
    and a program nested past that ends in ``make_error(TOO_DEEP)``, one of
    tirfun's errors, instead of a RecursionError from deep inside tirfun."""
    def wrap(fn):
        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            try:
                return call_with_room(fn, *args, **kwargs)
            except RecursionError:
                raise make_error(TOO_DEEP) from None
        return guarded
    return wrap


__all__ = ["MAX_DEPTH", "ROOM", "TOO_DEEP", "call_with_room", "guard_depth", "nesting_depth"]
