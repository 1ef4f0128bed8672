"""Annotations on loops and blocks: annotate and unannotate."""

from __future__ import annotations

import attrs
from pyrsistent import PMap, PVector, pmap

from ..nodes import Block, PrimExpr
from ..nodes.base import freeze_value, with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .checks import describe, resolve_block_or_loop, resolve_site
from .errors import AnnotationNotFoundError, InvalidAnnotationError
from .refs import as_block_or_loop_ref
from .serialize import py_value


def _freeze(value):
    try:
        return freeze_value(value)
    except TypeError:  # an unhashable oddity: kept, and reported by the checks
        return value


_NONE = object()


def _bad_value(value) -> object | None:
    """The first part of an annotation value that is not allowed, or None."""
    if value is None:
        return _NONE
    if isinstance(value, (bool, int, float, str, PrimExpr)):
        return None
    if isinstance(value, (list, tuple, PVector)):
        for v in value:
            bad = _bad_value(v)
            if bad is not None:
                return bad
        return None
    if isinstance(value, (dict, PMap)):
        for k, v in value.items():
            if not isinstance(k, str):
                return k
            bad = _bad_value(v)
            if bad is not None:
                return bad
        return None
    return value


@register
@attrs.frozen
class Annotate(Rewrite):
    """Annotate a block or a loop with ``ann_key: ann_val``. As in TVM, a key
    that is already present is left as it is.

    Requirements, each with the error raised when it fails:

    1. the block or loop exists (UnknownBlockError, UnknownLoopError,
       RefKindError, UnknownFunctionError);
    2. the key is a string and the value a string, int, float, bool,
       expression, or a list or string-keyed dict of those
       (InvalidAnnotationError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)

        # rewrite
        annotate("B", "ann_key", "ann_value")

        # after
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    T.block_attr({"ann_key": "ann_value"})
                    B[vi] = A[vi] * T.float32(2)
    """

    primitive = "annotate"

    block_or_loop: object = attrs.field(converter=as_block_or_loop_ref)
    ann_key: object = None
    ann_val: object = attrs.field(default=None, converter=_freeze)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block_or_loop])
        path = resolve_block_or_loop(chk, site, self.block_or_loop)
        if not isinstance(self.ann_key, str):
            chk.fail(InvalidAnnotationError, describe(self.block_or_loop),
                     f"the annotation key {self.ann_key!r} is not a string")
        bad = _bad_value(self.ann_val)
        if bad is not None:
            shown = "None" if bad is _NONE else f"{bad!r} ({type(bad).__name__})"
            chk.fail(InvalidAnnotationError, describe(self.block_or_loop),
                     f"the annotation value holds {shown}; values are strings, ints, floats, bools, "
                     "expressions, or lists and string-keyed dicts of those")
        return site, path

    def build(self, plan) -> Outcome:
        site, path = plan
        node = site.at(path)
        if self.ann_key in node.annotations:
            return Outcome(site.mod)
        new = with_fields(node, annotations=node.annotations.set(self.ann_key, self.ann_val))
        return Outcome(commit(site, path, new, index=site.index))

    def python_args(self):
        return [py_value(self.block_or_loop), f"ann_key={py_value(self.ann_key)}",
                f"ann_val={py_value(self.ann_val)}"]


def annotate(block_or_loop, ann_key, ann_val) -> Annotate:
    """The :class:`Annotate` record: ``annotate("B", "pragma", 1)``."""
    return Annotate(block_or_loop, ann_key, ann_val)


@register
@attrs.frozen
class Unannotate(Rewrite):
    """Remove the annotation ``ann_key`` from a block or a loop.

    Requirements, each with the error raised when it fails:

    1. the block or loop exists (UnknownBlockError, UnknownLoopError,
       RefKindError, UnknownFunctionError);
    2. it has an annotation ``ann_key`` (AnnotationNotFoundError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    T.block_attr({"ann_key": "ann_value"})
                    B[vi] = A[vi] * T.float32(2)

        # rewrite
        unannotate("B", "ann_key")

        # after
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)
    """

    primitive = "unannotate"

    block_or_loop: object = attrs.field(converter=as_block_or_loop_ref)
    ann_key: object = None

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block_or_loop])
        path = resolve_block_or_loop(chk, site, self.block_or_loop)
        node = site.at(path)
        if not isinstance(self.ann_key, str) or self.ann_key not in node.annotations:
            have = ", ".join(repr(k) for k in sorted(node.annotations)) or "none"
            chk.fail(AnnotationNotFoundError, describe(self.block_or_loop),
                     f"it has no annotation {self.ann_key!r} (it has: {have})",
                     site.at(path[:-1]) if isinstance(node, Block) else node)
        return site, path, node

    def build(self, plan) -> Outcome:
        site, path, node = plan
        new = with_fields(node, annotations=_without(node.annotations, self.ann_key))
        return Outcome(commit(site, path, new, index=site.index))

    def python_args(self):
        return [py_value(self.block_or_loop), f"ann_key={py_value(self.ann_key)}"]


_EMPTY = pmap()


def _without(annotations: PMap, key: str) -> PMap:
    """``annotations.remove(key)`` for a key it holds. Removing the only
    key leaves an empty map, and every empty map is equal to every other:
    the shared one is taken without the evolver's steps."""
    if len(annotations) == 1:
        return _EMPTY
    return annotations.remove(key)


def unannotate(block_or_loop, ann_key) -> Unannotate:
    """The :class:`Unannotate` record: ``unannotate("B", "pragma")``."""
    return Unannotate(block_or_loop, ann_key)


__all__ = ["Annotate", "annotate", "Unannotate", "unannotate"]
