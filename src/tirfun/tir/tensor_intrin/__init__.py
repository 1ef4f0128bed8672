"""``TensorIntrin``: a computation and the code that performs it, for
``tensorize``.

A tensor intrinsic is a pair of PrimFuncs over the same parameters:

* ``desc`` says *what* is computed: its root block reads and writes regions
  of its buffers, and its body is the loop nest ``tensorize`` looks for in
  the schedule (loops, blocks, stores, expressions, compared one for one,
  with variables and buffers matched by position);
* ``impl`` says *how*: its root block's body replaces the matched subtree,
  its buffers bound by ``T.match_buffer`` to the regions the match found.

::

    @T.prim_func
    def dot4_desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (4,), offset_factor=1)
        B = T.match_buffer(b, (4,), offset_factor=1)
        C = T.match_buffer(c, (), offset_factor=1)
        with T.block("root"):
            T.reads(C[()], A[0:4], B[0:4])
            T.writes(C[()])
            for k in range(4):
                with T.block("update"):
                    vk = T.axis.remap("R", [k])
                    C[()] = C[()] + A[vk] * B[vk]

    dot4 = TensorIntrin(dot4_desc, dot4_impl)      # a value, used directly
    TensorIntrin.register("dot4", dot4_desc, dot4_impl)   # or by name, as TVM
    sch.tensorize(k_1, "dot4")

``register`` keeps a table of names for the whole process, as TVM's
``TensorIntrin.register`` does, so that code written against TVM runs
unchanged; everything else takes the ``TensorIntrin`` value itself, and
the records a schedule applies hold the value, not the name.
"""

from __future__ import annotations

import threading

import attrs

from ...errors import TirfunError
from ...nodes import BlockRealize, PrimFunc


class TensorIntrinError(TirfunError, ValueError):
    """A tensor intrinsic that cannot be built or found: the two functions
    do not fit together, or no intrinsic is registered under a name."""


def _check_func(role: str, func) -> None:
    if not isinstance(func, PrimFunc):
        raise TensorIntrinError(f"TensorIntrin: {role} must be a PrimFunc, got {type(func).__name__}")
    if not isinstance(func.body, BlockRealize):
        raise TensorIntrinError(f"TensorIntrin: the body of {role} must be a block (with T.block(\"root\"): ...), "
                                f"got {type(func.body).__name__}")
    for p in func.params:
        if p not in func.buffer_map:
            raise TensorIntrinError(f"TensorIntrin: parameter {p.name} of {role} is not a buffer "
                                    "(T.match_buffer); every parameter of a tensor intrinsic is one")
    from ...analysis.verify import verify
    from ...errors import VerifyError
    from ...nodes import IRModule

    try:
        # a variable nothing binds would be carried into the schedule unbound
        verify(IRModule({"main": func}))
    except VerifyError as err:
        raise TensorIntrinError(f"TensorIntrin: {role} is not a well-formed function: {err}") from None


@attrs.frozen
class TensorIntrin:
    """A tensor intrinsic: ``desc`` (what is computed) and ``impl`` (how),
    with as many parameters, each a buffer, position by position. ``name``
    is the name it was registered or looked up under (None for one built
    directly); it only shows in printed schedules."""

    desc: PrimFunc
    impl: PrimFunc
    name: str | None = attrs.field(default=None, kw_only=True)

    def __attrs_post_init__(self):
        _check_func("desc", self.desc)
        _check_func("impl", self.impl)
        if len(self.desc.params) != len(self.impl.params):
            raise TensorIntrinError(f"TensorIntrin: desc has {len(self.desc.params)} parameters and impl "
                                    f"{len(self.impl.params)}; they are matched by position")
        for k, (d, i) in enumerate(zip(self.desc.params, self.impl.params)):
            bd, bi = self.desc.buffer_map[d], self.impl.buffer_map[i]
            if bd.dtype != bi.dtype:
                raise TensorIntrinError(f"TensorIntrin: parameter {k} is a {bd.dtype} buffer in desc and a "
                                        f"{bi.dtype} buffer in impl")
        if self.name is not None and not isinstance(self.name, str):
            raise TensorIntrinError(f"TensorIntrin: name must be a str, got {self.name!r}")

    @staticmethod
    def register(name: str, desc: PrimFunc, impl: PrimFunc, override: bool = False) -> "TensorIntrin":
        """Register ``TensorIntrin(desc, impl)`` under ``name`` for the whole
        process (TVM's ``TensorIntrin.register``); a name taken already is an
        error unless ``override``. Returns the intrinsic."""
        if not isinstance(name, str) or not name:
            raise TensorIntrinError(f"TensorIntrin.register: name must be a non-empty str, got {name!r}")
        intrin = TensorIntrin(desc, impl, name=name)
        with _LOCK:
            if name in _REGISTRY and not override:
                raise TensorIntrinError(f"TensorIntrin.register: {name!r} is registered already "
                                        "(override=True replaces it)")
            _REGISTRY[name] = intrin
        return intrin

    @staticmethod
    def get(name: str, allow_missing: bool = False) -> "TensorIntrin | None":
        """The intrinsic registered under ``name``; None when there is none
        and ``allow_missing``, a TensorIntrinError otherwise."""
        with _LOCK:
            found = _REGISTRY.get(name)
        if found is None and not allow_missing:
            known = ", ".join(sorted(_REGISTRY)) or "none"
            raise TensorIntrinError(f"no tensor intrinsic is registered as {name!r} (registered: {known})")
        return found


# TVM's registry of named intrinsics: the one table of the process, written
# only by ``register``; the rewrites never read it (they hold the values)
_REGISTRY: dict[str, TensorIntrin] = {}
_LOCK = threading.Lock()


def as_tensor_intrin(value) -> TensorIntrin:
    """A TensorIntrin, or the one registered under a name."""
    if isinstance(value, TensorIntrin):
        return value
    if isinstance(value, str):
        return TensorIntrin.get(value)
    raise TensorIntrinError(f"expected a TensorIntrin or the name of a registered one, got "
                            f"{type(value).__name__}")


__all__ = ["TensorIntrin", "TensorIntrinError", "as_tensor_intrin"]
