"""Methods of buffers in TVMScript: ``A.vload(begin, dtype)`` and
``A.vstore(begin, value)``, as TVM's ``Buffer.vload``/``Buffer.vstore``
define them: a load or store at ``begin`` whose last index becomes a Ramp
when the dtype (or the value) has more lanes than the buffer's elements.
"""

from __future__ import annotations

from ..nodes import BufferLoad, IntImm, PrimExpr, Ramp
from .parser_args import bind, sig, to_dtype
from .parser_values import BufferMethod

#: the methods a buffer has in TVMScript
METHODS = ("vload", "vstore")

_SIGNATURES = {
    "vload": sig("begin", ("dtype", None), ("predicate", None)),
    "vstore": sig("begin", "value", ("predicate", None)),
}


def call(ip, method: BufferMethod, node, positional, keywords):
    """Run ``buffer.<method>(...)``."""
    buf = method.buffer
    name = f"{buf.name}.{method.name}"
    a = bind(ip, name, _SIGNATURES[method.name], node, positional, keywords)
    if a.predicate is not None:
        raise ip.fail(a.node("predicate"), f"{name}: predicated vector accesses are not supported "
                      "by tirfun yet")
    begin = a.begin if isinstance(a.begin, (list, tuple)) else [a.begin]
    indices = [ip._index(v, a.node("begin")) for v in begin]
    if len(indices) != len(buf.shape):
        raise ip.fail(a.node("begin"), f"{name}: buffer {buf.name} has {len(buf.shape)} "
                      f"dimensions but begin has {len(indices)} indices")
    if method.name == "vload":
        dtype = buf.dtype if a.dtype is None else to_dtype(ip, a.dtype, a.node("dtype"))
        lanes = _factor(ip, buf, dtype, a.node("dtype"), name)
        return BufferLoad(buf, _ramp_last(indices, lanes))
    value = a.value
    if not isinstance(value, PrimExpr):
        value = ip.cast_to(value, buf.dtype, a.node("value"))
    lanes = _factor(ip, buf, value.dtype, a.node("value"), name)
    indices = _ramp_last(indices, lanes)
    return ip.store_value(buf, indices, value, a.node("value"))


def _factor(ip, buf, dtype, node, name) -> int:
    if dtype.element_of != buf.dtype.element_of or dtype.lanes % buf.dtype.lanes:
        raise ip.fail(node, f"{name}: {dtype} does not hold elements of buffer {buf.name} "
                      f"({buf.dtype})")
    return dtype.lanes // buf.dtype.lanes


def _ramp_last(indices: list[PrimExpr], lanes: int) -> list[PrimExpr]:
    if lanes == 1 or not indices:
        return indices
    last = indices[-1]
    return indices[:-1] + [Ramp(last, IntImm(last.dtype, 1), lanes)]
