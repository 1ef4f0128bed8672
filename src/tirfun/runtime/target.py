"""Compilation targets: :mod:`tirfun.target`, re-exported where the
runtime has always offered them."""

from __future__ import annotations

from ..target import DEFAULT_OPT_LEVEL, MATH_MODES, Target, host_description

__all__ = ["Target", "host_description", "DEFAULT_OPT_LEVEL", "MATH_MODES"]
