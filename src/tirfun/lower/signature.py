"""The calling convention of a compiled PrimFunc.

A compiled function takes, in order, one argument per parameter (a data
pointer for a buffer parameter, the value for a scalar parameter) and then
one hidden integer per *size variable*: a variable that appears in a
parameter buffer's shape or strides without being a parameter itself (``n``
in ``A: T.Buffer((n,), "float32")``). The runtime reads those from the
arrays before the call. A function with a return type (``-> T.int32``,
``T.ret(v)``) takes last a pointer to the slot its value is written to. It
returns an int32 status: 0 for success, ``k > 0`` when the ``k``-th
assertion failed, negative for a failed allocation; a call of another
function of the module passes a failed status on.

This module is pure (no llvmlite): the code generator and the runtime's
argument checks both read the same :class:`Signature`.
"""

from __future__ import annotations

import attrs

from ..errors import BuildError
from ..nodes import (
    Add, Buffer, DataType, FloorDiv, FloorMod, IntImm, Max, Min, Mul, PrimExpr, PrimFunc, Sub, Var,
)

STATUS_OK = 0
STATUS_OUT_OF_MEMORY = -1


@attrs.frozen
class Param:
    """One parameter: ``buffer`` is None for a scalar parameter."""

    var: Var
    buffer: Buffer | None

    @property
    def name(self) -> str:
        """The name a user knows the parameter by: the buffer's for a buffer."""
        return self.buffer.name if self.buffer is not None else self.var.name


@attrs.frozen
class Signature:
    """Parameters, hidden size variables and which buffers are written."""

    name: str
    params: tuple
    size_vars: tuple
    written: frozenset
    noalias: bool
    ret: DataType | None = None  # the return type; None: the function returns nothing
    # bare handle parameters the body tests with T.isnullptr: only those may be
    # passed None, so compiled code never dereferences a null it did not expect
    nullable: frozenset = frozenset()

    @staticmethod
    def of(name: str, func: PrimFunc, written_buffers=frozenset()) -> "Signature":
        """The signature of ``func``; raises BuildError when a size cannot be
        taken from the arguments. A handle parameter without a buffer is a
        plain pointer, as TVM passes it (from Python: an array's data or
        None)."""
        params = []
        scalars: set[Var] = set()
        for var in func.params:
            buf = func.buffer_map.get(var)
            if buf is None:
                if var.dtype.lanes != 1:
                    raise BuildError(f"function {name}: vector scalar parameter {var.name} is not "
                                     "supported")
                scalars.add(var)
            params.append(Param(var, buf))
        size_vars: dict[Var, None] = {}
        for p in params:
            if p.buffer is None:
                continue
            buf = p.buffer
            if buf.elem_offset is not None and not (isinstance(buf.elem_offset, IntImm)
                                                    and buf.elem_offset.value == 0):
                raise BuildError(f"function {name}: buffer {buf.name} has an element offset; "
                                 "parameters must start at their data pointer")
            for dim in list(buf.shape) + list(buf.strides):
                if isinstance(dim, Var) and dim not in scalars:
                    size_vars.setdefault(dim, None)
        known = set(size_vars) | scalars
        for p in params:
            if p.buffer is None:
                continue
            for dim in list(p.buffer.shape) + list(p.buffer.strides):
                missing = _vars(dim) - known
                if missing:
                    names = ", ".join(sorted(v.name for v in missing))
                    raise BuildError(
                        f"function {name}: the size {names} of buffer {p.buffer.name} cannot be "
                        "taken from the arguments (it appears in no dimension by itself)")
        noalias = bool(func.attrs.get("tir.noalias", False))
        ret = None if func.ret_type is None else DataType(func.ret_type)
        if ret is not None and (ret.is_void or ret.is_handle):
            ret = None if ret.is_void else ret
        if ret is not None and (ret.lanes != 1 or ret.is_handle):
            raise BuildError(f"function {name}: returning {ret} is not supported; return a scalar")
        return Signature(name, tuple(params), tuple(size_vars), frozenset(written_buffers), noalias,
                         ret, _null_tested(func))


def _null_tested(func: PrimFunc) -> frozenset:
    from ..analysis.traversal import walk
    from ..nodes import Call

    bare = {v for v in func.params if v.dtype.is_handle and v not in func.buffer_map}
    if not bare:
        return frozenset()
    return frozenset(n.args[0] for n in walk(func.body) if isinstance(n, Call)
                     and n.op == "tir.isnullptr" and len(n.args) == 1 and n.args[0] in bare)


def _vars(e: PrimExpr) -> set[Var]:
    from ..analysis.traversal import walk

    return {n for n in walk(e) if isinstance(n, Var)}


def eval_int(e: PrimExpr, env: dict) -> int:
    """Evaluate an integer size expression with variables bound in ``env``
    (the operators sizes are made of)."""
    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, Var):
        return env[e]
    if isinstance(e, (Add, Sub, Mul, FloorDiv, FloorMod, Min, Max)):
        a, b = eval_int(e.a, env), eval_int(e.b, env)
        if isinstance(e, Add):
            return a + b
        if isinstance(e, Sub):
            return a - b
        if isinstance(e, Mul):
            return a * b
        if isinstance(e, Min):
            return min(a, b)
        if isinstance(e, Max):
            return max(a, b)
        if b == 0:
            raise ZeroDivisionError
        return a // b if isinstance(e, FloorDiv) else a % b
    raise BuildError(f"unsupported size expression {e.script()}")


def dtype_fits(dtype: DataType, value: int) -> bool:
    """Whether ``value`` is representable in the integer ``dtype``."""
    return dtype.min_value() <= value <= dtype.max_value()


__all__ = ["Param", "Signature", "eval_int", "dtype_fits", "STATUS_OK", "STATUS_OUT_OF_MEMORY"]
