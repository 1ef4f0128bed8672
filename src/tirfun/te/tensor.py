"""Tensors, placeholders and computes: TVM's tensor expression language.

``A = te.placeholder((n,), name="A")`` declares an input;
``B = te.compute((n,), lambda i: A[i] + 1.0, name="B")`` declares an output
whose element ``i`` is the lambda's body. Indexing a tensor (``A[i]`` or
``A(i)``) builds a :class:`TensorLoad`, an expression leaf that
``create_prim_func`` turns into a load from the tensor's buffer.

Tensors, operations and variables are identified by object, as in TVM: two
placeholders with the same name are still two inputs, and a size
``te.var("k")`` is another variable than a reduction axis named ``"k"``.
``create_prim_func`` gives each variable a name of its own in the PrimFunc,
where names are identities.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import attrs
from attrs import field
from pyrsistent import PVector

from ..errors import NodeError
from ..nodes import IntImm, IterVar, IterVarType, PrimExpr, Range, Var, to_expr
from ..nodes.base import node
from ..nodes.dtype import DataType
from ..nodes.expr import check_identifier, to_expr_vector


@attrs.frozen(eq=False, repr=False)
class TeVar(Var):
    """A variable of a te program (``te.var``, a compute axis, a reduction
    axis). Unlike a PrimFunc's :class:`~tirfun.nodes.Var`, whose name is its
    identity, a te variable is itself: two made with the same name are two
    variables, as in TVM. ``create_prim_func`` replaces each one by a plain
    Var with a name unique in the function."""

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    __hash__ = object.__hash__


def to_shape(shape) -> tuple[PrimExpr, ...]:
    """A tuple of scalar integer expressions from an int, an expression or
    a sequence of them."""
    if isinstance(shape, (int, PrimExpr)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence):
        raise NodeError(f"a shape must be a tuple of sizes, got {shape!r}")
    out = []
    for d in shape:
        if isinstance(d, float) and d.is_integer():
            d = int(d)
        if isinstance(d, bool) or not isinstance(d, (int, PrimExpr)):
            raise NodeError(f"a shape holds integers or integer expressions, got {d!r}")
        e = to_expr(d)
        if not e.dtype.is_integer or e.dtype.lanes != 1:
            raise NodeError(f"a shape dimension must be a scalar integer, got {e.script()}: {e.dtype}")
        if isinstance(e, IntImm) and e.value < 0:
            raise NodeError(f"a shape dimension cannot be negative, got {e.value}")
        out.append(e)
    return tuple(out)


@attrs.frozen(eq=False)
class PlaceholderOp:
    """The operation behind ``te.placeholder``: an input of the program."""

    name: str
    shape: tuple
    dtype: DataType

    @property
    def input_tensors(self) -> list["Tensor"]:
        return []

    def output(self, index: int = 0) -> "Tensor":
        return Tensor(self, index)


@attrs.frozen(eq=False)
class ComputeOp:
    """The operation behind ``te.compute``: ``body`` (one expression per
    output) over the data-parallel ``axis`` and, for a reduction, its
    ``reduce_axis``."""

    name: str
    tag: str
    attrs: dict
    axis: tuple
    reduce_axis: tuple
    body: tuple
    shape: tuple

    @property
    def dtype(self) -> DataType:
        return self.body[0].dtype

    @property
    def num_outputs(self) -> int:
        return len(self.body)

    def output_dtype(self, index: int) -> DataType:
        return self.body[index].dtype

    @property
    def input_tensors(self) -> list["Tensor"]:
        """The tensors the body reads, in order of first appearance."""
        from ..analysis.traversal import walk

        found: list[Tensor] = []
        for root in self.body:
            for n in walk(root):
                if isinstance(n, TensorLoad) and not any(n.tensor is t for t in found):
                    found.append(n.tensor)
        return found

    def output(self, index: int = 0) -> "Tensor":
        if not 0 <= index < len(self.body):
            raise NodeError(f"compute {self.name} has {len(self.body)} outputs, not {index + 1}")
        return Tensor(self, index)


@attrs.frozen(eq=False)
class Tensor:
    """A tensor of a te program: the output of a placeholder or a compute.

    ``T[i, j]`` and ``T(i, j)`` read an element (a :class:`TensorLoad`).
    """

    op: object
    value_index: int = 0

    @property
    def name(self) -> str:
        """The operation's name; ``name.v<k>`` for output ``k`` of a compute
        with several outputs, as TVM names them."""
        if getattr(self.op, "num_outputs", 1) == 1:
            return self.op.name
        return f"{self.op.name}.v{self.value_index}"

    @property
    def buffer_name(self) -> str:
        """The name of this tensor's buffer in a PrimFunc: :attr:`name`
        spelt as an identifier (``B_v0``), as TVM prints it."""
        return self.name.replace(".", "_")

    @property
    def shape(self) -> tuple:
        output_shape = getattr(self.op, "output_shape", None)
        return output_shape(self.value_index) if output_shape else self.op.shape

    @property
    def dtype(self) -> DataType:
        output_dtype = getattr(self.op, "output_dtype", None)
        return output_dtype(self.value_index) if output_dtype else self.op.dtype

    @property
    def ndim(self) -> int:
        return len(self.op.shape)

    def __getitem__(self, indices) -> "TensorLoad":
        if not isinstance(indices, tuple):
            indices = (indices,)
        return TensorLoad(self, [_index(i) for i in indices])

    def __call__(self, *indices) -> "TensorLoad":
        return TensorLoad(self, [_index(i) for i in indices])

    def __repr__(self) -> str:
        kind = {PlaceholderOp: "placeholder", ComputeOp: "compute"}.get(type(self.op), "extern")
        dims = ", ".join(d.script() if not isinstance(d, IntImm) else str(d.value) for d in self.shape)
        comma = "," if len(self.shape) == 1 else ""
        return f"Tensor({kind} {self.name!r}, shape=({dims}{comma}), dtype={self.dtype!r})"

    def __bool__(self) -> bool:
        return True

    def __len__(self) -> int:
        raise NodeError("a te tensor has no Python length; use tensor.shape")


@node
class TensorLoad(PrimExpr):
    """``tensor[indices]`` inside a te expression (TVM's ProducerLoad)."""

    tensor: Tensor
    indices: PVector = field(converter=to_expr_vector)

    @property
    def dtype(self) -> DataType:
        return self.tensor.dtype

    def __attrs_post_init__(self):
        if not isinstance(self.tensor, Tensor):
            raise NodeError("TensorLoad needs a te tensor")
        if len(self.indices) != len(self.tensor.shape):
            raise NodeError(f"tensor {self.tensor.name} has {len(self.tensor.shape)} dimensions, "
                            f"indexed with {len(self.indices)}")
        for index in self.indices:
            if not index.dtype.is_integer or index.dtype.lanes != 1:
                raise NodeError(f"index {index!r} of tensor {self.tensor.name} has dtype "
                                f"{index.dtype}; indices must be scalar integers")


def placeholder(shape, dtype=None, name: str = "placeholder") -> Tensor:
    """An input tensor of ``shape`` and ``dtype`` (float32 by default)."""
    check_identifier("tensor", name)
    return Tensor(PlaceholderOp(name, to_shape(shape), DataType("float32" if dtype is None else dtype)))


def _axis_names(fcompute, ndim: int, varargs_names) -> list[str]:
    """The names of the lambda's index variables, as TVM chooses them."""
    try:
        spec = inspect.getfullargspec(fcompute)
    except TypeError:
        raise NodeError(f"te.compute needs a function of the indices, got {fcompute!r}") from None
    if spec.varkw is not None or spec.defaults or spec.kwonlyargs:
        raise NodeError("the function given to te.compute takes only positional indices "
                        "(no defaults, keyword arguments or **kwargs)")
    args = list(spec.args)
    if spec.varargs is not None:
        rest = ndim - len(args)
        if rest < 0:
            raise NodeError(f"the compute function names {len(args)} indices for "
                            f"{ndim} dimensions")
        if varargs_names is not None:
            if len(varargs_names) != rest:
                raise NodeError(f"{rest} indices come through *args but {len(varargs_names)} "
                                "varargs_names were given")
            return args + list(varargs_names)
        return args + [f"i{k}" for k in range(rest)]
    if not args:
        return [f"i{k}" for k in range(ndim)]
    if len(args) != ndim:
        raise NodeError(f"the compute function takes {len(args)} indices but the shape has "
                        f"{ndim} dimensions")
    return args


def compute(shape, fcompute, name: str = "compute", tag: str = "", attrs=None,
            varargs_names=None):
    """A tensor whose element at each index is ``fcompute(*index)``.

    ``fcompute`` takes one index variable per dimension (or ``*i``); its
    body may read other tensors, use intrinsics, and be a reduction such as
    ``te.sum(A[i, k], axis=k)``. A body that is a tuple of expressions makes
    a compute with several outputs, and ``compute`` then returns a tuple of
    tensors, as TVM's does: either plain expressions (one block per output
    inside one loop nest) or the values of one tuple reduction such as an
    argmax from :func:`te.comm_reducer` (one block writing every output).
    """
    from .reduce import Reduce

    check_identifier("tensor", name)
    shape = to_shape(shape)
    names = _axis_names(fcompute, len(shape), varargs_names)
    axis = tuple(Axis(Range(IntImm(d.dtype, 0), d), TeVar(n, d.dtype), IterVarType.DataPar)
                 for n, d in zip(names, shape))
    result = fcompute(*[iv.var for iv in axis])
    several = isinstance(result, (list, tuple))
    parts = list(result) if several else [result]
    if not parts:
        raise NodeError(f"compute {name}: the function returned an empty tuple")
    body = tuple(_body_expr(name, part) for part in parts)
    reduce_axis: tuple = ()
    reductions = [b for b in body if isinstance(b, Reduce)]
    if reductions:
        if len(reductions) != len(body):
            raise NodeError(f"compute {name}: the outputs of a compute are either all values of "
                            "one reduction or none is a reduction")
        _check_tuple_reduction(name, body)
        reduce_axis = tuple(body[0].axis)
    op = ComputeOp(name, tag, dict(attrs or {}), axis, reduce_axis, body, shape)
    outputs = tuple(Tensor(op, k) for k in range(len(body)))
    return outputs if several else outputs[0]


def _body_expr(name: str, part) -> PrimExpr:
    if isinstance(part, Tensor):
        raise NodeError(f"compute {name}: the body is a tensor; index it (A[i]) to read an element")
    try:
        e = to_expr(part)
    except NodeError:
        raise NodeError(f"compute {name}: the body must be an expression, got {part!r}") from None
    if e.dtype.lanes != 1:
        raise NodeError(f"compute {name}: the body must be a scalar, got {e.dtype}")
    _check_reductions(name, e)
    return e


def _check_tuple_reduction(name: str, body: tuple) -> None:
    """The outputs of a tuple reduction are the values ``0..n-1`` of one
    reduction (same reducer, sources, axes and condition), in order."""
    first = body[0]
    if len(first.source) != len(body):
        raise NodeError(f"compute {name}: the reduction has {len(first.source)} values but the "
                        f"compute returns {len(body)}; return all of them, in order")
    for k, r in enumerate(body):
        same = (r.combiner is first.combiner or r.combiner == first.combiner) and \
            r.source == first.source and list(r.axis) == list(first.axis) and \
            r.condition == first.condition
        if not same or r.value_index != k:
            raise NodeError(f"compute {name}: output {k} is not value {k} of the same reduction "
                            "as output 0")


def _check_reductions(name: str, body: PrimExpr) -> None:
    from ..analysis.traversal import walk
    from .reduce import Reduce

    for n in walk(body):
        if isinstance(n, Reduce) and n is not body:
            raise NodeError(f"compute {name}: a reduction must be the whole body of a compute; "
                            "put it in a compute of its own and read that tensor")


def _delegate(op_name: str):
    def method(self, *args):
        return getattr(self.var, op_name)(*args)
    method.__name__ = op_name
    return method


@node
class Axis(IterVar):
    """An iteration axis of te (``te.reduce_axis``): an IterVar that can be
    used as its variable in expressions (``A[i, k]``, ``k * 2 + 1``), as in TVM."""

    for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__truediv__",
                "__rtruediv__", "__neg__", "__lt__", "__le__", "__gt__", "__ge__", "equal",
                "not_equal", "astype"):
        locals()[_op] = _delegate(_op)
    del _op

    @property
    def dtype(self) -> DataType:
        return self.var.dtype

    def __prim_expr__(self) -> Var:
        """In an expression an axis means its variable."""
        return self.var


def _index(value):
    """An index given as a te axis means its variable."""
    return value.var if isinstance(value, IterVar) else value


def reduce_axis(dom, name: str = "rv", thread_tag: str = "") -> IterVar:
    """A reduction axis over ``dom``: a ``(begin, end)`` pair or a Range."""
    check_identifier("reduction axis", name)
    if isinstance(dom, Range):
        rng = dom
    elif isinstance(dom, (tuple, list)) and len(dom) == 2:
        begin, end = to_expr(dom[0]), to_expr(dom[1])
        if begin.dtype != end.dtype:
            if isinstance(begin, IntImm):
                begin = IntImm(end.dtype, begin.value)
            elif isinstance(end, IntImm):
                end = IntImm(begin.dtype, end.value)
        rng = Range(begin, end) if isinstance(begin, IntImm) and begin.value == 0 else \
            Range.from_begin_end(begin, end)
    else:
        raise NodeError(f"a reduction axis needs a (begin, end) pair or a Range, got {dom!r}")
    return Axis(rng, TeVar(name, rng.extent.dtype), IterVarType.CommReduce, thread_tag)


def var(name: str = "tindex", dtype="int32") -> Var:
    """A symbolic scalar, such as a size: ``n = te.var("n")``. Each call
    makes a new variable, whatever its name (a :class:`TeVar`); a
    PointerType for ``dtype`` makes a handle pointing to its element."""
    from ..nodes import PointerType

    if isinstance(dtype, PointerType):
        return TeVar(name, "handle", dtype)
    return TeVar(name, dtype)


def size_var(name: str = "size", dtype="int32") -> Var:
    """A symbolic size (a non-negative variable)."""
    return TeVar(name, dtype)


__all__ = ["Tensor", "TensorLoad", "PlaceholderOp", "ComputeOp", "TeVar", "placeholder",
           "compute", "reduce_axis", "var", "size_var", "to_shape", "Axis"]
