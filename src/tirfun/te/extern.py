"""``te.extern``: tensors computed by a statement the user writes, usually a
call of an external function.

``fcompute(ins, outs)`` receives one buffer per input tensor and per
output, and returns a statement or an expression (evaluated for its
effect)::

    C = te.extern((n,), [A], lambda ins, outs: tir.call_extern(
        "handle", "memcpy", outs[0].data, ins[0].data, n * 4), name="C")

``create_prim_func`` turns it into one opaque block named after the
operation. The CPU build calls a C function found in the running process
(``call_extern``); :func:`call_packed` needs TVM's packed-function runtime,
which tirfun does not have, so the build refuses it with a BuildError that
says so. The interpreter runs only the C library functions it knows.
"""

from __future__ import annotations

import attrs

from ..errors import NodeError
from ..nodes import Buffer, Call, Evaluate, PrimExpr, Stmt, StringImm, const, to_expr
from ..nodes.dtype import DataType
from ..nodes.expr import check_identifier
from .tensor import Tensor, TeVar, to_shape


@attrs.frozen(eq=False)
class ExternOp:
    """The operation behind ``te.extern``: ``body`` reads the
    ``input_placeholders`` (views of ``inputs``) and writes the
    ``output_placeholders``."""

    name: str
    tag: str
    attrs: dict
    inputs: tuple
    input_placeholders: tuple
    output_placeholders: tuple
    body: Stmt

    @property
    def shape(self) -> tuple:
        return tuple(self.output_placeholders[0].shape)

    @property
    def dtype(self) -> DataType:
        return self.output_placeholders[0].dtype

    @property
    def num_outputs(self) -> int:
        return len(self.output_placeholders)

    def output_dtype(self, index: int) -> DataType:
        return self.output_placeholders[index].dtype

    def output_shape(self, index: int) -> tuple:
        return tuple(self.output_placeholders[index].shape)

    @property
    def input_tensors(self) -> list[Tensor]:
        return list(self.inputs)

    def output(self, index: int = 0) -> Tensor:
        if not 0 <= index < self.num_outputs:
            raise NodeError(f"extern {self.name} has {self.num_outputs} outputs, not {index + 1}")
        return Tensor(self, index)


def _placeholder(shape, dtype, name: str) -> Buffer:
    # the data pointer is a te variable: two externs' buffers named alike
    # stay apart; the element offset is a variable too, as TVM declares it,
    # so the function accepts an array that starts anywhere in its memory
    return Buffer(name, list(shape), dtype, data=TeVar(name, "handle"),
                  elem_offset=TeVar("elem_offset", "int32"))


def extern(shape, inputs, fcompute, name: str = "extern", dtype=None, in_buffers=None,
           out_buffers=None, tag: str = "", attrs=None):
    """Tensors of ``shape`` (or of each shape of a list) computed by the
    statement ``fcompute(input_buffers, output_buffers)`` returns. Returns
    one tensor, or a list for several shapes, as TVM's ``te.extern``."""
    check_identifier("tensor", name)
    several = isinstance(shape, list) and shape and isinstance(shape[0], (list, tuple))
    shapes = [to_shape(s) for s in shape] if several else [to_shape(shape)]
    inputs = list(inputs)
    for t in inputs:
        if not isinstance(t, Tensor):
            raise NodeError(f"extern {name}: the inputs must be te tensors, got {type(t).__name__}")
    ins = list(in_buffers) if in_buffers is not None else \
        [_placeholder(t.shape, t.dtype, t.buffer_name) for t in inputs]
    if len(ins) != len(inputs):
        raise NodeError(f"extern {name}: {len(inputs)} inputs but {len(ins)} in_buffers")
    if out_buffers is not None:
        outs = list(out_buffers)
        if len(outs) != len(shapes):
            raise NodeError(f"extern {name}: {len(shapes)} outputs but {len(outs)} out_buffers")
    else:
        if dtype is None:
            kinds = {str(t.dtype) for t in inputs}
            if len(kinds) != 1:
                raise NodeError(f"extern {name}: cannot infer the output dtype from the inputs; "
                                "pass dtype=")
            dtype = kinds.pop()
        dtypes = [dtype] * len(shapes) if isinstance(dtype, (str, DataType)) else list(dtype)
        outs = [_placeholder(s, DataType(d), name) for s, d in zip(shapes, dtypes)]
    for b in ins + outs:
        if not isinstance(b, Buffer):
            raise NodeError(f"extern {name}: buffers must be Buffer nodes, got {type(b).__name__}")
    body = fcompute(ins, outs)
    if isinstance(body, PrimExpr) or isinstance(body, (int, float)):
        body = Evaluate(to_expr(body))
    if not isinstance(body, Stmt):
        raise NodeError(f"extern {name}: fcompute must return a statement or an expression, "
                        f"got {type(body).__name__}")
    op = ExternOp(name, tag, dict(attrs or {}), tuple(inputs), tuple(ins), tuple(outs), body)
    results = [op.output(k) for k in range(len(outs))]
    return results if several else results[0]


def pack_buffer(buf: Buffer) -> Call:
    """The array descriptor TVM passes for a buffer to a packed function:
    ``T.tvm_stack_make_array(data, shape, strides, ndim, a zero of the
    element type, elem_offset)``, strides 0 for a compact buffer."""
    if not buf.shape:
        raise NodeError(f"buffer {buf.name}: a 0-d buffer cannot be passed to a packed function")
    shape = Call("handle", "tir.tvm_stack_make_shape", list(buf.shape))
    strides = Call("handle", "tir.tvm_stack_make_shape", list(buf.strides)) if buf.strides else 0
    offset = buf.elem_offset if buf.elem_offset is not None else 0
    return Call("handle", "tir.tvm_stack_make_array",
                [buf.data, shape, strides, len(buf.shape), const(0, buf.dtype), offset])


def call_packed(*args) -> Call:
    """TVM's ``tir.call_packed(name, *args)``: a call through TVM's
    packed-function runtime; a buffer is passed as its array descriptor
    (:func:`pack_buffer`), as TVM passes it. tirfun prints it; the CPU build
    refuses it, naming the runtime it needs."""
    if not args or not isinstance(args[0], str):
        raise NodeError("call_packed needs the packed function's name as a string first")
    rest = [pack_buffer(a) if isinstance(a, Buffer) and a.data is not None else a for a in args[1:]]
    return Call("int32", "tir.tvm_call_packed", [StringImm(args[0]), *rest])


__all__ = ["ExternOp", "extern", "call_packed", "pack_buffer"]
