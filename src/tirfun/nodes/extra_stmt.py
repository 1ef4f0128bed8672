"""Statements outside the schedulable core: ``While``.

They are kept apart from :mod:`.stmt` because schedule primitives never
create them; the parser, printer, verifier, interpreter and lowering know
them.
"""

from __future__ import annotations

from attrs import field

from .base import node
from .expr import PrimExpr, to_expr
from .stmt import Stmt, _is_bool_scalar, _is_stmt


@node
class While(Stmt):
    """``while condition: body``; the condition is evaluated before every
    iteration, as in TVM's ``tir.While``."""

    condition: PrimExpr = field(converter=to_expr, validator=_is_bool_scalar)
    body: Stmt = field(validator=_is_stmt)


__all__ = ["While"]
