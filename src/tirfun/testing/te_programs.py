"""Hypothesis strategies of random te programs.

``te_programs()`` draws a :class:`TeProgram`: placeholders, a few computes
built on them, and the tensors that are the function's outputs. The kinds
cover what tensor programs are made of: elementwise expressions, broadcasts,
matmul and batched matmul, convolutions (with strides and zero padding),
reductions (sum, max, min, with and without a ``where`` condition), a
transpose, softmax, computes with several outputs, tuple reductions
(argmax and argmin from ``te.comm_reducer``), and random chains of these.
Sizes are small; the first dimension is sometimes a symbolic size, a
``te.var`` whose name may be the name of an axis (``i``, ``k``) or of
another size: te variables are objects, so create_prim_func must keep
them apart.

``program.args`` is the argument list for ``te.create_prim_func``;
``program.description`` says in a few lines what was drawn, for failure
messages. A test gets the meaning of a program from the te bodies
themselves (``tensor.op.body``), for example by evaluating them with numpy.
"""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from .. import te
from ..nodes import IntImm, Select
from ..tir import op as tir_op

KINDS = ("elementwise", "broadcast", "matmul", "batched_matmul", "conv1d", "conv2d",
         "reduction", "transpose", "softmax", "chain", "multi_output", "arg_reduction")


@attrs.frozen(eq=False)
class TeProgram:
    """A drawn te program."""

    kind: str
    dtype: str
    inputs: tuple
    outputs: tuple
    size_vars: tuple
    description: str

    @property
    def args(self) -> list:
        """Inputs then outputs: the argument list for ``te.create_prim_func``."""
        return list(self.inputs) + list(self.outputs)

    def __repr__(self) -> str:
        return f"TeProgram({self.kind}, {self.dtype}):\n{self.description}"

    def _repr_pretty_(self, printer, cycle) -> None:
        # hypothesis shows drawn values with this; the description says more than the fields
        printer.text(repr(self))


class _Builder:
    """State of one draw: the tensors made so far and their description."""

    def __init__(self, draw, dtype: str, max_size: int, symbolic: bool):
        self.draw = draw
        self.dtype = dtype
        self.max_size = max_size
        self.symbolic = symbolic
        self.inputs: list = []
        self.lines: list[str] = []
        self.size_vars: list = []

    def size(self, lo: int = 1) -> int:
        return self.draw(st.integers(lo, max(lo, self.max_size)))

    def shape(self, ndim: int, allow_symbolic: bool = True) -> list:
        dims = [self.size() for _ in range(ndim)]
        if ndim and allow_symbolic and self.symbolic and self.draw(st.integers(0, 3)) == 0:
            if not self.size_vars:
                # a name that axes and reduction axes also use, now and then
                self.size_vars.append(te.var(self.draw(st.sampled_from(["n", "n", "i", "k"]))))
            dims[0] = self.size_vars[0]
            if ndim >= 2 and self.draw(st.integers(0, 2)) == 0:
                # a second size with the same name as the first
                if len(self.size_vars) < 2:
                    self.size_vars.append(te.var(self.size_vars[0].name))
                dims[1] = self.size_vars[1]
        return dims

    def placeholder(self, shape) -> te.Tensor:
        name = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[len(self.inputs)]
        t = te.placeholder(tuple(shape), dtype=self.dtype, name=name)
        self.inputs.append(t)
        self.lines.append(f"{name} = placeholder({_dims(shape)}, {self.dtype})")
        return t

    def compute(self, shape, fn, name: str, text: str) -> te.Tensor:
        t = te.compute(tuple(shape), fn, name=name)
        self.lines.append(f"{name} = compute({_dims(shape)}, {text})")
        return t

    def constant(self) -> tuple:
        if self.dtype.startswith("int"):
            c = self.draw(st.integers(-3, 3))
            return tir_op.const(c, self.dtype), str(c)
        c = self.draw(st.integers(-8, 8)) / 4.0
        return tir_op.const(c, self.dtype), repr(c)

    def elementwise(self, leaves: list, depth: int) -> tuple:
        """A random expression over ``leaves`` (each a pair: function of the
        index variables giving an expression, and its text)."""
        draw = self.draw
        if depth == 0 or draw(st.integers(0, 2)) == 0:
            if draw(st.integers(0, 4)) == 0:
                c, text = self.constant()
                return (lambda idx: c), text
            fn, text = leaves[draw(st.integers(0, len(leaves) - 1))]
            return fn, text
        is_int = self.dtype.startswith("int")
        ops = ["add", "sub", "mul", "max", "min"] + (["floordiv", "floormod"] if is_int else
                                                      ["div", "abs", "tanh", "sigmoid", "exp"])
        op = draw(st.sampled_from(ops))
        a, ta = self.elementwise(leaves, depth - 1)
        if op in ("abs", "tanh", "sigmoid"):
            f = getattr(tir_op, op)
            return (lambda idx: f(a(idx))), f"{op}({ta})"
        if op == "exp":  # bounded argument: exp(tanh(x))
            return (lambda idx: tir_op.exp(tir_op.tanh(a(idx)))), f"exp(tanh({ta}))"
        if op in ("floordiv", "floormod"):
            c = draw(st.integers(2, 4))
            f = getattr(tir_op, op)
            return (lambda idx: f(a(idx), c)), f"{op}({ta}, {c})"
        b, tb = self.elementwise(leaves, depth - 1)
        if op == "add":
            return (lambda idx: a(idx) + b(idx)), f"({ta} + {tb})"
        if op == "sub":
            return (lambda idx: a(idx) - b(idx)), f"({ta} - {tb})"
        if op == "mul":
            return (lambda idx: a(idx) * b(idx)), f"({ta} * {tb})"
        if op == "div":  # a denominator at least 1 in magnitude
            return (lambda idx: a(idx) / (tir_op.abs(b(idx)) + 1.0)), f"({ta} / (abs({tb}) + 1))"
        f = getattr(tir_op, op)
        return (lambda idx: f(a(idx), b(idx))), f"{op}({ta}, {tb})"


def _dims(shape) -> str:
    parts = [d.name if hasattr(d, "name") else str(d) for d in shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _load(t: te.Tensor, name: str, pattern=None):
    """A leaf reading ``t`` at the index variables (or at ``pattern(idx)``)."""
    if pattern is None:
        return (lambda idx: t(*idx)), f"{name}[...]"
    return (lambda idx: t(*pattern(idx))), f"{name}[...]"


# ---------------------------------------------------------------------------- kinds


def _elementwise(b: _Builder):
    ndim = b.draw(st.integers(1, 3))
    shape = b.shape(ndim)
    count = b.draw(st.integers(1, 3))
    leaves = [_load(b.placeholder(shape), b.inputs[-1].name) for _ in range(count)]
    fn, text = b.elementwise(leaves, b.draw(st.integers(1, 3)))
    out = b.compute(shape, lambda *idx: fn(idx), "T_elemwise", text)
    return [out]


def _broadcast(b: _Builder):
    ndim = b.draw(st.integers(2, 3))
    shape = b.shape(ndim)
    keep = [b.draw(st.booleans()) for _ in range(ndim)]
    small = [d if k else 1 for d, k in zip(shape, keep)]
    x = b.placeholder(shape)
    y = b.placeholder(small)
    leaves = [(lambda idx: x(*idx), "A[i...]"),
              (lambda idx: y(*[i if k else 0 for i, k in zip(idx, keep)]), "B[broadcast]")]
    fn, text = b.elementwise(leaves, 2)
    return [b.compute(shape, lambda *idx: fn(idx), "T_broadcast", text)]


def _matmul(b: _Builder):
    m, k, n = b.shape(1)[0], b.size(), b.size()
    x = b.placeholder((m, k))
    transposed = b.draw(st.booleans())
    w = b.placeholder((n, k) if transposed else (k, n))
    r = te.reduce_axis((0, k), "k")
    if transposed:
        out = b.compute((m, n), lambda i, j: te.sum(x[i, r] * w[j, r], axis=r), "T_matmul_NT",
                        "sum_k A[i, k] * B[j, k]")
    else:
        out = b.compute((m, n), lambda i, j: te.sum(x[i, r] * w[r, j], axis=r), "T_matmul",
                        "sum_k A[i, k] * B[k, j]")
    return [out]


def _batched_matmul(b: _Builder):
    batch, m, k, n = b.shape(1)[0], b.size(), b.size(), b.size()
    x = b.placeholder((batch, m, k))
    w = b.placeholder((batch, k, n))
    r = te.reduce_axis((0, k), "k")
    out = b.compute((batch, m, n), lambda q, i, j: te.sum(x[q, i, r] * w[q, r, j], axis=r),
                    "T_batch_matmul", "sum_k A[b, i, k] * B[b, k, j]")
    return [out]


def _conv1d(b: _Builder):
    length = b.size(2)
    width = b.draw(st.integers(1, length))
    pad = b.draw(st.integers(0, 2))
    x = b.placeholder((length,))
    w = b.placeholder((width,))
    src = x
    if pad:
        padded = length + 2 * pad
        src = b.compute((padded,), lambda i: tir_op.if_then_else(
            tir_op.all(i >= pad, i < length + pad), x[i - pad], tir_op.const(0, b.dtype)),
            "pad", f"A[i - {pad}] inside, 0 outside")
        length = padded
    stride = b.draw(st.integers(1, 2))
    out_len = (length - width) // stride + 1
    r = te.reduce_axis((0, width), "r")
    out = b.compute((out_len,), lambda i: te.sum(src[i * stride + r] * w[r], axis=r), "conv",
                    f"sum_r src[i * {stride} + r] * B[r]")
    return [out]


def _conv2d(b: _Builder):
    c, h, wd = b.draw(st.integers(1, 2)), b.size(2), b.size(2)
    f = b.draw(st.integers(1, 2))
    kh, kw = b.draw(st.integers(1, h)), b.draw(st.integers(1, wd))
    x = b.placeholder((c, h, wd))
    w = b.placeholder((f, c, kh, kw))
    rc = te.reduce_axis((0, c), "rc")
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    out = b.compute((f, h - kh + 1, wd - kw + 1),
                    lambda ff, y, xx: te.sum(x[rc, y + ry, xx + rx] * w[ff, rc, ry, rx],
                                             axis=[rc, ry, rx]),
                    "conv2d", "sum_{c,r,s} A[c, y + r, x + s] * B[f, c, r, s]")
    return [out]


def _reduction(b: _Builder, x=None):
    if x is None:
        ndim = b.draw(st.integers(1, 3))
        x = b.placeholder(b.shape(ndim))
    shape = list(x.shape)
    reducer_name = b.draw(st.sampled_from(["sum", "max", "min"]))
    reducer = getattr(te, reducer_name)
    count = b.draw(st.integers(1, len(shape)))
    axes_at = sorted(b.draw(st.permutations(range(len(shape))))[:count])
    raxes = [te.reduce_axis((0, shape[a]), f"k{j}") for j, a in enumerate(axes_at)]
    kept = [d for a, d in enumerate(shape) if a not in axes_at]
    use_where = b.draw(st.integers(0, 3)) == 0

    def body(*idx):
        it = iter(idx)
        full = []
        for a in range(len(shape)):
            full.append(raxes[axes_at.index(a)] if a in axes_at else next(it))
        where = (raxes[0] % 2).equal(0) if use_where else None
        return reducer(x(*full), axis=raxes, where=where)

    text = f"{reducer_name} over axes {axes_at}" + (" where k0 % 2 == 0" if use_where else "")
    return [b.compute(kept, body, f"T_{reducer_name}", text)]


def _transpose(b: _Builder, x=None):
    if x is None:
        ndim = b.draw(st.integers(2, 3))
        x = b.placeholder(b.shape(ndim))
    ndim = len(x.shape)
    perm = list(b.draw(st.permutations(range(ndim))))
    shape = [x.shape[p] for p in perm]

    def body(*idx):
        src = [None] * ndim
        for out_axis, p in enumerate(perm):
            src[p] = idx[out_axis]
        return x(*src)

    return [b.compute(shape, body, "T_transpose", f"permute {perm}")]


def _softmax(b: _Builder):
    m, n = b.shape(1)[0], b.size()
    x = b.placeholder((m, n))
    k1 = te.reduce_axis((0, n), "k")
    mx = b.compute((m,), lambda i: te.max(x[i, k1], axis=k1), "T_softmax_maxelem", "max_k A[i, k]")
    ex = b.compute((m, n), lambda i, j: tir_op.exp(x[i, j] - mx[i]), "T_softmax_exp",
                   "exp(A[i, j] - max[i])")
    k2 = te.reduce_axis((0, n), "k")
    sm = b.compute((m,), lambda i: te.sum(ex[i, k2], axis=k2), "T_softmax_expsum", "sum_k exp[i, k]")
    out = b.compute((m, n), lambda i, j: ex[i, j] / sm[i], "T_softmax_norm", "exp[i, j] / sum[i]")
    return [out]


def _chain(b: _Builder):
    ndim = b.draw(st.integers(1, 3))
    current = b.placeholder(b.shape(ndim))
    outputs = []
    for _ in range(b.draw(st.integers(2, 4))):
        steps = ["unary", "binary"]
        if len(current.shape) >= 1:
            steps.append("reduce")
        if len(current.shape) >= 2:
            steps.append("transpose")
        if len(current.shape) == 2:
            steps.append("matmul")
        step = b.draw(st.sampled_from(steps))
        shape = list(current.shape)
        cur = current
        if step == "unary":
            fn, text = b.elementwise([(lambda idx, c=cur: c(*idx), f"{cur.name}[...]")], 2)
            current = b.compute(shape, lambda *idx: fn(idx), "compute", text)
        elif step == "binary":
            other = b.placeholder([d if b.draw(st.booleans()) else 1 for d in shape])
            keep = [not (isinstance(d, IntImm) and d.value == 1) for d in other.shape]
            leaves = [(lambda idx, c=cur: c(*idx), f"{cur.name}[...]"),
                      (lambda idx, o=other, k=keep: o(*[i if kk else 0 for i, kk in zip(idx, k)]),
                       f"{other.name}[broadcast]")]
            fn, text = b.elementwise(leaves, 2)
            current = b.compute(shape, lambda *idx: fn(idx), "compute", text)
        elif step == "reduce":
            current = _reduction(b, cur)[0]
        elif step == "transpose":
            current = _transpose(b, cur)[0]
        else:
            k = te.reduce_axis((0, shape[1]), "k")
            n = b.size()
            w = b.placeholder((shape[1], n))
            current = b.compute((shape[0], n), lambda i, j: te.sum(cur[i, k] * w[k, j], axis=k),
                                "compute", f"sum_k {cur.name}[i, k] * {w.name}[k, j]")
        if b.draw(st.integers(0, 4)) == 0:
            outputs.append(current)
    if not outputs or outputs[-1] is not current:
        outputs.append(current)
    return outputs


def _multi_output(b: _Builder):
    ndim = b.draw(st.integers(1, 3))
    shape = b.shape(ndim)
    count = b.draw(st.integers(1, 2))
    leaves = [_load(b.placeholder(shape), b.inputs[-1].name) for _ in range(count)]
    parts = [b.elementwise(leaves, b.draw(st.integers(0, 2)))
             for _ in range(b.draw(st.integers(2, 3)))]
    outs = te.compute(tuple(shape), lambda *idx: tuple(fn(idx) for fn, _ in parts), name="T_multi")
    b.lines.append(f"T_multi = compute({_dims(shape)}, ({', '.join(t for _, t in parts)}))")
    return list(outs)


def _arg_reduction(b: _Builder):
    """argmax or argmin over some axes of an input: a tuple reduction whose
    values are an index (int32) and a value, in either order."""
    ndim = b.draw(st.integers(1, 3))
    x = b.placeholder(b.shape(ndim))
    shape = list(x.shape)
    count = b.draw(st.integers(1, len(shape)))
    axes_at = sorted(b.draw(st.permutations(range(len(shape))))[:count])
    raxes = [te.reduce_axis((0, shape[a]), f"k{j}") for j, a in enumerate(axes_at)]
    kept = [d for a, d in enumerate(shape) if a not in axes_at]
    largest = b.draw(st.booleans())
    index_first = b.draw(st.booleans())
    use_where = b.draw(st.integers(0, 3)) == 0
    vi, ii = (1, 0) if index_first else (0, 1)

    def combine(x, y):
        keep = x[vi] >= y[vi] if largest else x[vi] <= y[vi]
        out = [None, None]
        out[vi] = Select(keep, x[vi], y[vi])
        out[ii] = Select(keep, x[ii], y[ii])
        return tuple(out)

    def identity(*dtypes):
        out = [None, None]
        out[vi] = te.min_value(dtypes[vi]) if largest else te.max_value(dtypes[vi])
        out[ii] = tir_op.const(-1, dtypes[ii])
        return tuple(out)

    name = "argmax" if largest else "argmin"
    reducer = te.comm_reducer(combine, identity, name=name)

    def body(*idx):
        it = iter(idx)
        full = [raxes[axes_at.index(a)] if a in axes_at else next(it) for a in range(len(shape))]
        flat = raxes[0].var.astype("int32")
        for r in raxes[1:]:  # the position in the reduced axes, row-major
            flat = flat * r.dom.extent.astype("int32") + r.var.astype("int32")
        values = [None, None]
        values[vi], values[ii] = x(*full), flat
        where = (raxes[0] % 2).equal(0) if use_where else None
        return reducer(tuple(values), axis=raxes, where=where)

    outs = te.compute(tuple(kept), body, name=f"T_{name}")
    order = "(index, value)" if index_first else "(value, index)"
    b.lines.append(f"T_{name} = compute({_dims(kept)}, {name} {order} over axes {axes_at}"
                   + (" where k0 % 2 == 0)" if use_where else ")"))
    return list(outs)


_BUILDERS = {
    "elementwise": _elementwise, "broadcast": _broadcast, "matmul": _matmul,
    "batched_matmul": _batched_matmul, "conv1d": _conv1d, "conv2d": _conv2d,
    "reduction": _reduction, "transpose": _transpose, "softmax": _softmax, "chain": _chain,
    "multi_output": _multi_output, "arg_reduction": _arg_reduction,
}

_INT_KINDS = ("elementwise", "broadcast", "matmul", "batched_matmul", "conv1d", "conv2d",
              "reduction", "transpose", "chain", "multi_output", "arg_reduction")


@st.composite
def te_programs(draw, kinds=KINDS, dtypes=("float32", "int32"), max_size: int = 5,
                symbolic: bool = True) -> TeProgram:
    """A strategy of :class:`TeProgram`: ``kinds`` (a subset of
    :data:`KINDS`), element types from ``dtypes``, sizes up to ``max_size``,
    and symbolic sizes when ``symbolic``."""
    dtype = draw(st.sampled_from(list(dtypes)))
    usable = [k for k in kinds if dtype.startswith("float") or k in _INT_KINDS]
    kind = draw(st.sampled_from(usable))
    b = _Builder(draw, dtype, max_size, symbolic)
    outputs = _BUILDERS[kind](b)
    return TeProgram(kind, dtype, tuple(b.inputs), tuple(outputs), tuple(b.size_vars),
                     "\n".join(b.lines))


__all__ = ["TeProgram", "te_programs", "KINDS"]
