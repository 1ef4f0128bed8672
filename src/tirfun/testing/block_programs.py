"""Programs for the block primitives, from every generator tirfun has.

Each block primitive needs a program of a particular shape before it can
apply at all: ``rolling_buffer`` a sliding window, ``rfactor`` a reduction,
``decompose_padding`` a padding stage, ``compute_at`` a producer and its
consumer. :func:`block_programs` draws from all of these generators, so one
property test over it, crossed with
:func:`tirfun.testing.schedules.block_schedules`, reaches every primitive:

* :func:`tirfun.testing.stages.multi_stage_programs`: elementwise chains,
  reductions, padding, softmax, conv and matmul stages;
* :func:`tirfun.testing.stage_programs.stage_programs`: chains, two
  consumers, stencils, overwrites, gathers;
* :func:`tirfun.testing.draw_storage.located_programs` and
  :func:`~tirfun.testing.draw_storage.sliding_source`: producers inside their
  consumers' loops, sliding windows;
* :func:`tirfun.testing.draw_reduction.random_reduction_program`: sum,
  product, min, max, argmax reductions, split and repeated;
* :func:`tirfun.testing.draw_padding.random_padded_program`: conv-style
  padding read by stencils and window sums;
* :func:`tirfun.testing.programs.random_prim_func`: general random programs;
* :func:`tirfun.testing.corner_programs.corner_program`: shapes the others
  never draw (no blocks at all, one buffer indexed in two widths, a stage
  under a condition).

:func:`random_block_program` gives the same from a seed, without hypothesis.
"""

from __future__ import annotations

from ..nodes import IRModule, PrimFunc
from ._choices import BytesChooser, Chooser, RandomChooser

#: the generators, by name
SOURCES = ("stages", "stage_programs", "located", "sliding", "reductions", "padded", "random", "corners")


def build_block_program(ch: Chooser, source: str | None = None) -> IRModule:
    """A module with one ``main`` function, from the generator ``source``
    (drawn when None)."""
    from ..script import from_source

    source = source if source is not None else ch.choice(SOURCES)
    if source == "stages":
        from .stages import StageOptions, build_stages

        func = build_stages(ch, StageOptions())
    elif source == "stage_programs":
        from .stage_programs import SHAPES, build_stage_program

        func = build_stage_program(ch, SHAPES)
    elif source == "located":
        from .draw_storage import located_source

        func = from_source(located_source(ch))
    elif source == "sliding":
        from .draw_storage import sliding_source

        func = from_source(sliding_source(ch))
    elif source == "reductions":
        from .draw_reduction import random_reduction_program

        return _module(random_reduction_program(ch))
    elif source == "padded":
        from .draw_padding import random_padded_program

        return _module(random_padded_program(ch))
    elif source == "random":
        from .programs import random_prim_func

        func = random_prim_func(ch.integer(0, 2**31 - 1))
    elif source == "corners":
        from .corner_programs import corner_program

        return corner_program(ch)
    else:
        raise ValueError(f"unknown program source {source!r}; expected one of {', '.join(SOURCES)}")
    return _module(func)


def _module(value) -> IRModule:
    return IRModule({"main": value}) if isinstance(value, PrimFunc) else value


def block_programs(sources=SOURCES):
    """A hypothesis strategy of modules from the generators ``sources``."""
    from hypothesis import strategies as st

    return st.tuples(st.sampled_from(tuple(sources)), st.binary(min_size=64, max_size=64)).map(
        lambda pair: build_block_program(BytesChooser(pair[1]), pair[0]))


def random_block_program(seed: int, source: str | None = None) -> IRModule:
    """One module of :func:`block_programs`, determined by ``seed``."""
    return build_block_program(RandomChooser(seed), source)


__all__ = ["SOURCES", "block_programs", "random_block_program", "build_block_program"]
