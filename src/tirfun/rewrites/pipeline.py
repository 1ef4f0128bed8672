"""Composing rewrites: ``Pipeline``, ``>>`` and ``apply``; the trace format.

A Pipeline is itself a rewrite of modules (``pipeline(mod)``), a value
(frozen, comparable, hashable), and a trace: it prints as runnable
Schedule-API Python (:meth:`Pipeline.as_python`) and round-trips exactly
through JSON (:meth:`Pipeline.to_json`, :meth:`Pipeline.from_json`).
"""

from __future__ import annotations

import json

import attrs

from ..nodes import IRModule
from .base import REGISTRY, Rewrite, as_module
from .errors import InvalidArgumentError, RewriteError
from .serialize import decode, encode

JSON_VERSION = 1


def _flatten(items) -> tuple:
    if isinstance(items, (Rewrite, Pipeline)):
        items = (items,)
    out = []
    for item in items:
        if isinstance(item, Pipeline):
            out.extend(item.rewrites)
        elif isinstance(item, Rewrite):
            out.append(item)
        else:
            raise InvalidArgumentError("pipeline", "argument",
                                       f"a pipeline holds rewrites, got a {type(item).__name__}: {item!r}")
    return tuple(out)


@attrs.frozen
class Pipeline:
    """Rewrites applied in order: ``Pipeline([r1, r2])(mod) == r2(r1(mod))``."""

    rewrites: tuple = attrs.field(default=(), converter=_flatten)

    def __call__(self, mod) -> IRModule:
        """Apply every rewrite in order; the first that fails raises its
        ScheduleError and the input is untouched."""
        mod = as_module(mod, "pipeline")
        for rewrite in self.rewrites:
            mod = rewrite(mod)
        return mod

    def violations(self, mod) -> list[RewriteError]:
        """The failed preconditions of the first rewrite that does not apply,
        after applying those before it (empty when the whole pipeline applies)."""
        try:
            mod = as_module(mod, "pipeline")
        except RewriteError as err:
            return [err]
        for rewrite in self.rewrites:
            errors, plan = rewrite.analyze(mod)
            if errors:
                return errors
            mod = rewrite.build(plan).mod
        return []

    def __rshift__(self, other) -> "Pipeline":
        return Pipeline(self.rewrites + _flatten(other))

    def __rrshift__(self, other) -> "Pipeline":
        return Pipeline(_flatten(other) + self.rewrites)

    def __len__(self) -> int:
        return len(self.rewrites)

    def __iter__(self):
        return iter(self.rewrites)

    def __getitem__(self, index):
        got = self.rewrites[index]
        return Pipeline(got) if isinstance(index, slice) else got

    # -- the trace formats ----------------------------------------------------------
    def to_json(self) -> str:
        """This pipeline as JSON text; :meth:`from_json` gives back an equal pipeline."""
        steps = []
        for r in self.rewrites:
            args = {a.name: encode(getattr(r, a.name)) for a in attrs.fields(type(r))}
            steps.append({"primitive": r.primitive, "args": args})
        return json.dumps({"format": "tirfun.trace", "version": JSON_VERSION, "rewrites": steps}, indent=1)

    @staticmethod
    def from_json(text: str) -> "Pipeline":
        """The pipeline :meth:`to_json` wrote."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as err:
            raise InvalidArgumentError("from_json", "argument", f"not JSON text: {err}") from None
        if not isinstance(data, dict) or data.get("format") != "tirfun.trace":
            raise InvalidArgumentError("from_json", "argument", "not a tirfun trace")
        if data.get("version") != JSON_VERSION:
            raise InvalidArgumentError("from_json", "argument",
                                       f"trace version {data.get('version')!r}; this tirfun reads "
                                       f"version {JSON_VERSION}")
        out = []
        for step in data.get("rewrites", []):
            cls = REGISTRY.get(step.get("primitive"))
            if cls is None:
                raise InvalidArgumentError("from_json", "argument",
                                           f"unknown primitive {step.get('primitive')!r}")
            names = {a.name for a in attrs.fields(cls)}
            args = step.get("args", {})
            if set(args) - names:
                raise InvalidArgumentError("from_json", "argument",
                                           f"{cls.primitive} has no argument(s) {sorted(set(args) - names)}")
            out.append(cls(**{k: decode(v) for k, v in args.items()}))
        return Pipeline(out)

    def as_python(self, sch: str = "sch") -> str:
        """Runnable Python: a function ``apply_trace(sch)`` that replays this
        pipeline through the Schedule API (with the imports it needs)."""
        body = [f"    {r.python_call(sch)}" for r in self.rewrites]
        text = "\n".join(body)
        refs = [name for name in ("BlockRef", "LoopRef") if f"{name}(" in text]
        lines = []
        if "tir." in text:
            lines.append("from tirfun import tir")
        if "from_source(" in text:
            lines.append("from tirfun.script import from_source")
        if refs:
            lines.append(f"from tirfun.rewrites import {', '.join(refs)}")
        if lines:
            lines.extend(["", ""])
        lines.append(f"def apply_trace({sch}):")
        lines.extend(body or ["    pass"])
        return "\n".join(lines) + "\n"

    def show(self, file=None) -> None:
        """Print :meth:`as_python`."""
        print(self.as_python(), file=file, end="")


def apply(mod, *rewrites) -> IRModule:
    """``mod`` with the rewrites applied in order: ``apply(mod, split(...), reorder(...))``."""
    return Pipeline(rewrites)(mod)


__all__ = ["Pipeline", "apply", "JSON_VERSION"]
