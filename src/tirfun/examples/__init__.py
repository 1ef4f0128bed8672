"""Worked examples: programs and the schedules that make them fast.

:mod:`tirfun.examples.schedules` holds the CPU schedules that
``benchmarks/cpu.py`` measures and the tour ends with, each built from a
plain program by :class:`tirfun.Schedule` primitives. Nothing here is
imported by ``import tirfun``.
"""
