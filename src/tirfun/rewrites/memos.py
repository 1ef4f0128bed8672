"""The memo tables of the rewrites keyed on what a rewrite is given.

Three analyses are pure functions of an index map and a domain or shape,
and costly: whether a map over a block's domain is bijective, and its
inverse (``transform_block_layout``), and the new layout of a buffer under a
map (``transform_layout``). They keep their answers for the next block or
buffer alike (a schedule replayed on another module, or one map applied to
several stages), so a step that meets a map and domain seen before skips
the analysis.

:func:`clear_analysis_memos` forgets them. ``benchmarks/rewrite_speed.py``
calls it before every application it times, which applies one rewrite to
one module again and again: without it the analysis would run once and the
benchmark would time the table instead.
"""

from __future__ import annotations


def analysis_memos() -> tuple:
    """The memoised analyses (functions with ``cache_clear``)."""
    from .block_layout import _inverse_at, _read_map
    from .layout import _layout_of

    return (_read_map, _inverse_at, _layout_of)


def clear_analysis_memos() -> None:
    """Forget every answer :func:`analysis_memos` keep."""
    for memo in analysis_memos():
        memo.cache_clear()


__all__ = ["analysis_memos", "clear_analysis_memos"]
