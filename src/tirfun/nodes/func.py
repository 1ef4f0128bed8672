"""Functions and modules."""

from __future__ import annotations

import keyword
from collections.abc import Iterator, Mapping

from attrs import evolve, field
from pyrsistent import PMap, PVector, pmap

from ..errors import NodeError, UnknownNameError
from .base import Node, freeze_value, node, to_attr_map, to_pvector
from .buffer import Buffer
from .expr import Var
from .stmt import Stmt


def _check_params(self, _attribute, params):
    for p in params:
        if not isinstance(p, Var):
            raise NodeError(f"PrimFunc parameters must be Vars, got {p!r}")


def _to_buffer_map(value) -> PMap:
    if isinstance(value, PMap):
        out = value
    else:
        out = pmap(dict(value or {}))
    for k, v in out.items():
        if not isinstance(k, Var) or not isinstance(v, Buffer):
            raise NodeError("PrimFunc.buffer_map maps handle parameters (Var) to Buffers")
    return out


def _to_renames(value) -> PMap:
    if isinstance(value, PMap):
        return value
    return pmap({k: tuple(v) for k, v in dict(value or {}).items()})


class _Displayable(Node):
    __slots__ = ()

    def show(self, style=None, black_format: bool = False, *, file=None) -> None:
        """Print as TVMScript, with syntax colour where the terminal has it
        (through Pygments, the ``color`` extra; plain text without it), as
        TVM's ``show()``: ``style`` names a Pygments style or ``"light"``,
        ``"dark"``, ``"ansi"``, ``"plain"``; ``black_format`` reformats with
        Black where installed."""
        from ..script.highlight import show  # the printer sits above nodes

        show(self.script(), style=style, file=file, black_format=black_format)

    def _repr_html_(self) -> str:
        """Coloured TVMScript for Jupyter."""
        from ..script.highlight import repr_html

        return repr_html(self)

    def _repr_pretty_(self, printer, cycle) -> None:
        """Coloured TVMScript for IPython's terminal."""
        from ..script.highlight import repr_pretty

        repr_pretty(self, printer)


def _check_body(body) -> None:
    if not isinstance(body, Stmt):
        raise NodeError(f"PrimFunc body must be a statement, got {type(body).__name__}")


@node
class PrimFunc(_Displayable):
    """A TensorIR function.

    ``params`` are handle or scalar variables; ``buffer_map`` gives the
    buffer each handle parameter is viewed as; ``attrs`` holds function
    attributes such as ``{"tir.noalias": True}``. ``renamed_blocks``
    records the block names the source repeated (see
    :mod:`tirfun.analysis.block_names`); it takes no part in equality.
    """

    params: PVector = field(converter=to_pvector, validator=_check_params)
    body: Stmt = field(validator=lambda _s, _a, v: _check_body(v))
    ret_type: object = field(default=None)
    buffer_map: PMap = field(factory=dict, converter=_to_buffer_map)
    attrs: PMap = field(factory=dict, converter=to_attr_map)
    # Block names the source repeated, each with the names its blocks were
    # given (``{"B": ("B", "B_1")}``), so that a look-up of ``B`` can say it
    # is ambiguous as TVM's would. A note about where the function came
    # from, not part of its value: no equality, hash or printed form.
    renamed_blocks: PMap = field(factory=dict, converter=_to_renames, eq=False)

    # the fields __attrs_post_init__ reads (see with_fields): a new body is
    # checked by its validator alone
    _POST_INIT_READS = frozenset({"params", "buffer_map"})

    def __attrs_post_init__(self):
        params = set(self.params)
        for var in self.buffer_map:
            if var not in params:
                raise NodeError(f"buffer_map names {var.name}, which is not a parameter")

    def with_attr(self, key, value=None) -> "PrimFunc":
        """A copy with attribute ``key`` set to ``value`` (or with every
        pair of a dict ``key`` set)."""
        if isinstance(key, Mapping):
            return evolve(self, attrs=self.attrs.update(to_attr_map(key)))
        if not isinstance(key, str):
            raise NodeError(f"attribute keys must be strings, got {key!r}")
        return evolve(self, attrs=self.attrs.set(key, freeze_value(value)))

    def without_attr(self, key: str) -> "PrimFunc":
        return evolve(self, attrs=self.attrs.discard(key))

    def specialize(self, param_map) -> "PrimFunc":
        """This function with parameters bound to values, as TVM's
        ``PrimFunc.specialize``: a buffer parameter takes a Buffer, whose
        shape, strides and offset give the variables of the parameter's own
        buffer their values; a scalar parameter takes an expression or a
        number. The bound scalars leave the signature, and the operators
        whose operands became constants are folded. Keys are parameters or
        their names; a mistake (not a parameter, a buffer for a scalar, a
        dimension that is not a variable, a variable given two values) is a
        :class:`~tirfun.errors.NodeError`. Returns this function itself when
        ``param_map`` binds nothing. See :mod:`tirfun.tir.specialize`.

        .. code-block:: python

            # before
            @T.prim_func
            def main(a: T.handle, b: T.handle):
                n = T.int32()
                A = T.match_buffer(a, (n,))
                B = T.match_buffer(b, (n,))
                for i in range(n - 1):
                    with T.block("B"):
                        vi = T.axis.spatial(n - 1, i)
                        B[vi] = A[vi + 1] - A[vi]

            # specialize
            main.specialize({"b": T.Buffer((16,))})   # or {main.params[1]: tir.decl_buffer((16,))}

            # after
            @T.prim_func
            def main(a: T.handle, b: T.handle):
                A = T.match_buffer(a, (16,))
                B = T.match_buffer(b, (16,))
                for i in range(15):
                    with T.block("B"):
                        vi = T.axis.spatial(15, i)
                        B[vi] = A[vi + 1] - A[vi]
        """
        from ..tir.specialize import specialize

        return specialize(self, param_map)

    def with_body(self, body: Stmt) -> "PrimFunc":
        return evolve(self, body=body)

    @property
    def buffers(self) -> list[Buffer]:
        """The parameter buffers in parameter order."""
        return [self.buffer_map[p] for p in self.params if p in self.buffer_map]


def _buffer_params_init(init):
    """``PrimFunc([x, A], body)`` with a Buffer among the parameters, as
    TVM's constructor takes it: the buffer gets a handle parameter of its
    own (``var_<name>``, unique among the parameters) that the buffer map
    binds to it."""
    def __init__(self, params, body, ret_type=None, buffer_map=None, attrs=None,
                 renamed_blocks=None):
        params = list(params)
        if any(isinstance(p, Buffer) for p in params):
            buffer_map = dict(buffer_map or {})
            taken = {p.name for p in params if isinstance(p, Var)}
            for k, p in enumerate(params):
                if isinstance(p, Buffer):
                    name, n = f"var_{p.name}", 1
                    while name in taken:
                        name, n = f"var_{p.name}_{n}", n + 1
                    taken.add(name)
                    params[k] = Var(name, "handle")
                    buffer_map[params[k]] = p
        init(self, params, body, ret_type, buffer_map if buffer_map is not None else {},
             attrs if attrs is not None else {}, renamed_blocks if renamed_blocks is not None else {})
    __init__.__doc__ = init.__doc__
    return __init__


PrimFunc.__init__ = _buffer_params_init(PrimFunc.__init__)


def _to_functions(value) -> PMap:
    if isinstance(value, IRModule):
        return value.functions
    out = value if isinstance(value, PMap) else pmap(dict(value or {}))
    for name, f in out.items():
        _check_function(name, f)
    return out


def _check_function(name, f) -> None:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise NodeError(f"IRModule functions are keyed by names that are identifiers, got {name!r}")
    if not isinstance(f, PrimFunc):
        raise NodeError(f"IRModule function {name!r} is a {type(f).__name__}, expected a PrimFunc")


@node
class IRModule(_Displayable):
    """A set of named PrimFuncs: ``IRModule({"main": f})``.

    Behaves as a read-only mapping from names to functions, iterated in name
    order. ``with_function`` returns a new module.
    """

    functions: PMap = field(factory=dict, converter=_to_functions)
    attrs: PMap = field(factory=dict, converter=to_attr_map)

    def __getitem__(self, name: str) -> PrimFunc:
        try:
            return self.functions[name]
        except (KeyError, TypeError):
            names = ", ".join(sorted(self.functions)) or "none"
            raise UnknownNameError(f"the module has no function {name!r} (it has: {names})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.functions))

    def __len__(self) -> int:
        return len(self.functions)

    def __contains__(self, name) -> bool:
        return name in self.functions

    def keys(self):
        return list(self)

    def items(self):
        return [(n, self.functions[n]) for n in self]

    def values(self):
        return [self.functions[n] for n in self]

    def get(self, name, default=None):
        return self.functions.get(name, default)

    def with_function(self, name: str, func: PrimFunc) -> "IRModule":
        """A copy with ``name`` bound to ``func`` (added or replaced)."""
        # the other functions were checked when this module was made: only
        # the new binding needs checking (every rewrite makes a module so)
        functions = self.functions.set(name, func)
        _check_function(name, func)
        out = object.__new__(IRModule)
        put = object.__setattr__
        put(out, "functions", functions)
        put(out, "attrs", self.attrs)
        put(out, "_attrs_cached_hash", None)
        return out

    def without_function(self, name: str) -> "IRModule":
        self[name]  # raise the specific error on an unknown name
        return evolve(self, functions=self.functions.remove(name))

    def with_attr(self, key: str, value) -> "IRModule":
        return evolve(self, attrs=self.attrs.set(key, freeze_value(value)))

    @staticmethod
    def from_expr(func: PrimFunc) -> "IRModule":
        """A module holding ``func`` as ``main`` (TVM's spelling)."""
        return IRModule({"main": func})


__all__ = ["PrimFunc", "IRModule"]
