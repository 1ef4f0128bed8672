"""The common shape of every schedule primitive record.

A primitive is a frozen attrs record whose fields are its arguments. It
works in one fixed order:

1. resolve names to paths (:mod:`.checks`),
2. check the arguments,
3. check the preconditions,
4. choose fresh names,
5. build the new subtree,
6. replace it along the path (:func:`commit`).

Steps 1-3 live in the record's ``plan`` method, which reports every failed
check to a :class:`Checks` collector and returns a plan; steps 4-6 live in
``build``, which runs only when no check failed. So ``violations(mod)`` is
``plan`` alone, ``__call__`` is ``plan`` then ``build``, and nothing is ever
built for a rewrite that does not apply.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from ..analysis.nesting import TOO_DEEP, call_with_room
from ..analysis.traversal import Path, get_at, replace_at
from ..nodes import IRModule, Node, PrimFunc
from .errors import InvalidModuleError, NestingTooDeepError, RewriteError
from ..analysis.mentions import plain_arithmetic
from .index import FuncIndex, derive_index, derive_merge_index, derive_nest_index, remember


class _Stop(Exception):
    """Raised inside ``plan`` when a failed check makes later checks meaningless."""


class Checks:
    """Collects the failed preconditions of one primitive application."""

    def __init__(self, primitive: str):
        self.primitive = primitive
        self.errors: list[RewriteError] = []

    def fail(self, cls: type[RewriteError], subject: str, reason: str, *nodes: Node) -> None:
        """Record a failed check and go on checking."""
        self.errors.append(cls(self.primitive, subject, reason, nodes))

    def stop(self, cls: type[RewriteError], subject: str, reason: str, *nodes: Node):
        """Record a failed check after which nothing else can be checked."""
        self.fail(cls, subject, reason, *nodes)
        raise _Stop

    def checkpoint(self) -> None:
        """Stop here if anything failed so far."""
        if self.errors:
            raise _Stop


@attrs.frozen
class Site:
    """One function of a module, resolved, with its name index."""

    mod: IRModule
    func_name: str
    func: PrimFunc
    index: FuncIndex

    def at(self, path: Path) -> Node:
        """The node at ``path`` in the function."""
        return get_at(self.func, path)


@attrs.frozen
class Outcome:
    """What applying a primitive gives: the new module, the primitive's
    result (new loop or block references, or None) and the blocks it
    renamed, as ``(old, new)`` pairs of BlockRefs (decompose_reduction's
    ``B`` becomes ``B_update``), which :class:`tirfun.Schedule` follows as
    TVM's block random variables follow their block."""

    mod: IRModule
    result: Any = None
    renamed: tuple = ()


def commit(site: Site, path: Path, new: Node, *, index: FuncIndex | None = None, derive=None,
           rebuild=None) -> IRModule:
    """The module with the node at ``path`` of the site's function replaced
    by ``new``; only the nodes along the path are rebuilt.

    The new function's index is ``index`` when the caller knows it (a
    rewrite that changes no name and no path passes the old one), or
    ``derive(new_func)`` for a rewrite that can state it from what it
    changed (see :func:`~tirfun.rewrites.index.derive_insert_index`);
    otherwise, or where ``derive`` gives None (it cannot tell cheaply), it
    is derived from the old index by re-indexing the replaced subtree.
    ``rebuild`` is how the nodes along the path are rebuilt (see
    :func:`~tirfun.analysis.traversal.replace_at`).
    """
    new_func = replace_at(site.func, path, new, rebuild=rebuild)
    if index is None and derive is not None:
        index = derive(new_func)
    if index is None:
        index = derive_index(site.index, path, get_at(site.func, path), new, new_func, site.func)
    remember(new_func, index)
    return site.mod.with_function(site.func_name, new_func)


def commit_nest(site: Site, path: Path, old_nest: list, new: Node, new_depth: int, values) -> IRModule:
    """:func:`commit` for a loop primitive that replaced the perfect nest
    of loops ``old_nest`` at ``path`` (empty: the statement there was
    wrapped) by ``new``, a nest of ``new_depth`` loops over the old
    innermost body with loop variables replaced by ``values``. Where the
    values are plain arithmetic of variables and constants, the body names
    the same buffers as before and binds the same names, so the new index is
    the old one with the nest's loops swapped and the entries below them
    moved (:func:`derive_nest_index`), without walking the body."""
    index = None
    if all(map(plain_arithmetic, values)):
        nest, node = [], new
        for _ in range(new_depth):
            nest.append(node)
            node = node.body
        index = derive_nest_index(site.index, path, old_nest, nest)
    return commit(site, path, new, index=index)


def commit_merge(site: Site, seq_path: Path, seq_len: int, new: Node, positions: list, old_nests: list,
                 new_nest: list, values, *, rebuild=None) -> IRModule:
    """:func:`commit` for merge, which replaced the sequence at
    ``seq_path`` (of ``seq_len`` items) by ``new``: the perfect nests of
    loops ``old_nests`` (each outermost first, in the order given) were its
    items at ``positions``; all but the last are gone and the last became
    ``new_nest``, the loops of one nest over the old innermost bodies with
    loop variables replaced by ``values``. Where the values are plain
    arithmetic of variables and constants, the new index is the old one
    with the nests' loops swapped, the items after a removed nest shifted
    and the entries below the bodies moved (:func:`derive_merge_index`),
    without walking the bodies. ``rebuild``: as for :func:`commit`."""
    index = None
    if all(map(plain_arithmetic, values)):
        index = derive_merge_index(site.index, seq_path, seq_len, positions, old_nests, new_nest)
    return commit(site, seq_path, new, index=index, rebuild=rebuild)


def as_module(value, primitive: str) -> IRModule:
    """``value`` as an IRModule (a PrimFunc becomes ``{"main": func}``)."""
    if isinstance(value, IRModule):
        return value
    if isinstance(value, PrimFunc):
        return IRModule({"main": value})
    raise InvalidModuleError(primitive, "argument", f"expected an IRModule or a PrimFunc, got "
                             f"{type(value).__name__}")


# primitive name -> record class, for Pipeline.from_json
REGISTRY: dict[str, type] = {}


def register(cls):
    """Class decorator: make a record class known to JSON decoding."""
    REGISTRY[cls.primitive] = cls
    return cls


class Rewrite:
    """Base of the primitive records: ``record(mod)`` applies it,
    ``record.violations(mod)`` lists what prevents it, ``r1 >> r2`` chains."""

    __slots__ = ()
    primitive: ClassVar[str] = ""

    # -- implemented by each primitive ----------------------------------------------
    def plan(self, mod: IRModule, chk: Checks):
        """Resolve names, check arguments and preconditions; return a plan."""
        raise NotImplementedError

    def build(self, plan) -> Outcome:
        """Build the result from a plan whose checks all passed."""
        raise NotImplementedError

    def python_args(self) -> list[str]:
        """The arguments of the equivalent Schedule method call, as Python source."""
        raise NotImplementedError

    # -- shared behaviour -----------------------------------------------------------
    def analyze(self, mod) -> tuple[list[RewriteError], Any]:
        """The failed checks and, when there are none, the plan."""
        try:
            mod = as_module(mod, self.primitive)
        except RewriteError as err:
            return [err], None
        try:
            return call_with_room(self._checked_plan, mod)
        except RecursionError:
            return [self._too_deep()], None

    def _checked_plan(self, mod) -> tuple[list[RewriteError], Any]:
        chk = Checks(self.primitive)
        try:
            plan = self.plan(mod, chk)
        except _Stop:
            plan = None
        return chk.errors, (None if chk.errors else plan)

    def _too_deep(self) -> RewriteError:
        return NestingTooDeepError(self.primitive, "the module", TOO_DEEP)

    def violations(self, mod) -> list[RewriteError]:
        """Every failed precondition (empty when the rewrite applies).

        Checks that depend on an earlier failed one (a precondition on a loop
        that could not be found) are not reported.
        """
        return self.analyze(mod)[0]

    def run(self, mod) -> Outcome:
        """Apply the rewrite: the new module and the primitive's result.

        Raises the first failed precondition's ScheduleError subclass; the
        input module is never changed.
        """
        errors, plan = self.analyze(mod)
        if errors:
            raise errors[0]
        try:
            return call_with_room(self.build, plan)
        except RecursionError:
            raise self._too_deep() from None

    def __call__(self, mod) -> IRModule:
        """The rewritten module."""
        return self.run(mod).mod

    def __rshift__(self, other):
        from .pipeline import Pipeline

        return Pipeline((self,)) >> other

    def python_call(self, sch: str = "sch") -> str:
        """This rewrite as a call of the Schedule method of the same name."""
        return f"{sch}.{self.primitive}({', '.join(self.python_args())})"


__all__ = ["Checks", "Site", "Outcome", "commit", "commit_merge", "commit_nest", "as_module", "register", "Rewrite",
           "REGISTRY"]
