"""Random modules whose functions call one another (``Module.f(...)``).

:func:`call_modules` draws the TVMScript text of an ``@I.ir_module``: one
to three callees with scalar parameters, each returning a value through
``T.ret`` (some with an early return under a condition, some calling the
callee before them), and a public ``main(A, x)`` that calls the last callee
for every element of ``A`` in a loop of a random kind. Some modules also
have a procedure that updates ``A`` in place through a pointer: its data
pointer (``Module.update(A.data, x)``) taken as a ``T.Buffer`` parameter or
as a bare ``T.handle`` viewed with ``T.decl_buffer``, or a pointer into it
(``T.address_of(A[k])``, ``A.access_ptr("rw", offset=k)``) to a procedure
that is told how many elements follow; main calls it before or after its
loop. The text is parsed,
so the parser, the printer, the verifier, the interpreter and the build can
all be checked on the result. Every value stays small: integer arithmetic
never overflows and floats stay finite.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ..script import from_source

_HEAD = "from tirfun.script import ir as I\nfrom tirfun.script import tir as T\n\n"

_SCALARS = ("int32", "int64", "float32", "float64")

_INT_BODIES = (
    "{a} * {c} + {b}",
    "T.max({a}, {b}) - {c}",
    "({a} + {b}) // {d}",
    "T.Select({a} < {b}, {a}, {b} + {c})",
    "({a} - {b}) % {d}",
)
_FLOAT_BODIES = (
    "{a} * T.{t}({c}) + {b}",
    "T.max({a}, {b}) - T.{t}({c})",
    "{a} - {b} * T.{t}(0.5)",
    "T.Select({a} < {b}, {a}, {b} + T.{t}({c}))",
)


def _as(expr: str, have: str, want: str) -> str:
    return expr if have == want else f'T.Cast("{want}", {expr})'


def _body(draw, params: list[tuple[str, str]], ret: str) -> str:
    """An expression of dtype ``ret`` over ``params`` (name, dtype)."""
    a_name, a_dt = draw(st.sampled_from(params), label="a")
    b_name, b_dt = draw(st.sampled_from(params), label="b")
    a, b = _as(a_name, a_dt, ret), _as(b_name, b_dt, ret)
    c = draw(st.integers(-3, 4), label="c")
    d = draw(st.integers(2, 5), label="d")
    if ret.startswith("int"):
        template = draw(st.sampled_from(_INT_BODIES), label="body")
        return template.format(a=a, b=b, c=c, d=d)
    template = draw(st.sampled_from(_FLOAT_BODIES), label="body")
    return template.format(a=a, b=b, c=float(c), t=ret)


@st.composite
def call_modules(draw):
    """``(mod, dtype, n)``: an IRModule whose ``main(A: dtype[n], x: int32)``
    calls functions of the module; ``x`` should be drawn from -5..5."""
    n = draw(st.integers(1, 12), label="n")
    dtype = draw(st.sampled_from(_SCALARS), label="dtype")
    count = draw(st.integers(1, 3), label="callees")
    lines: list[str] = ["@I.ir_module", "class Module:"]
    previous: tuple[str, list[str], str] | None = None
    for k in range(count):
        name = f"f{k}"
        ret = draw(st.sampled_from(_SCALARS), label=f"{name} returns")
        arity = draw(st.integers(1, 3), label=f"{name} arity")
        params = [(f"p{j}", draw(st.sampled_from(_SCALARS), label=f"{name} p{j}")) for j in range(arity)]
        private = draw(st.booleans(), label=f"{name} private")
        body_params = list(params)
        stmts: list[str] = []
        if previous is not None and draw(st.booleans(), label=f"{name} calls"):
            # call the previous callee on this one's parameters, converted
            prev_name, prev_params, prev_ret = previous
            args = []
            for pdt in prev_params:
                pname, pdt_have = draw(st.sampled_from(params), label="argument")
                args.append(_as(pname, pdt_have, pdt))
            stmts.append(f"v = Module.{prev_name}({', '.join(args)})")
            body_params.append(("v", prev_ret))
        if draw(st.booleans(), label=f"{name} early return"):
            (cname, cdt), (dname, ddt) = draw(st.sampled_from(params)), draw(st.sampled_from(params))
            stmts.append(f"if {_as(cname, cdt, 'float64')} < {_as(dname, ddt, 'float64')}:")
            stmts.append(f"    T.ret({_body(draw, body_params, ret)})")
        stmts.append(f"T.ret({_body(draw, body_params, ret)})")
        decorator = "@T.prim_func(private=True)" if private else "@T.prim_func"
        signature = ", ".join(f"{p}: T.{t}" for p, t in params)
        lines += [f"    {decorator}", f"    def {name}({signature}) -> T.{ret}:"]
        lines += [f"        {s}" for s in stmts]
        lines.append("")
        previous = (name, [t for _, t in params], ret)
    update = draw(st.sampled_from(["none", "buffer", "handle", "address_of", "access_ptr"]),
                  label="update")
    k = draw(st.integers(0, n - 1), label="pointer offset")
    if update != "none":
        body = _body(draw, [("B[j]", dtype), ("y", "int32")], dtype)
        extent = "m" if update in ("address_of", "access_ptr") else str(n)
        if update == "buffer":
            lines += ["    @T.prim_func(private=True)",
                      f'    def update(B: T.Buffer(({n},), "{dtype}"), y: T.int32):']
        elif update == "handle":
            lines += ["    @T.prim_func(private=True)",
                      f'    def update(B_data: T.handle("{dtype}"), y: T.int32):',
                      f'        B = T.decl_buffer(({n},), "{dtype}", data=B_data)']
        else:
            lines += ["    @T.prim_func(private=True)",
                      "    def update(B_data: T.handle, m: T.int32, y: T.int32):",
                      f'        B = T.decl_buffer((m,), "{dtype}", data=B_data)']
        lines += [f"        for j in range({extent}):", f"            B[j] = {body}", ""]
    last_name, last_params, last_ret = previous
    kind = draw(st.sampled_from(["range", "T.serial", "T.parallel", "T.unroll", "T.vectorized"]),
                label="loop")
    sources = [("i", "int32"), ("x", "int32"), ("A[i]", dtype)]
    args = []
    for pdt in last_params:
        expr, have = draw(st.sampled_from(sources), label="main argument")
        args.append(_as(expr, have, pdt))
    call = _as(f"Module.{last_name}({', '.join(args)})", last_ret, dtype)
    main = [f"for i in {kind}({n}):", f"    A[i] = {call}"]
    if update != "none":
        pointer = {"address_of": f"T.address_of(A[{k}]), {n - k}",
                   "access_ptr": f'A.access_ptr("rw", offset={k}), {n - k}'}.get(update, "A.data")
        step = f"Module.update({pointer}, x)"
        before = draw(st.booleans(), label="update first")
        main = [step] + main if before else main + [step]
    lines += ["    @T.prim_func",
              f'    def main(A: T.Buffer(({n},), "{dtype}"), x: T.int32):']
    lines += [f"        {s}" for s in main]
    return from_source(_HEAD + "\n".join(lines) + "\n"), dtype, n


__all__ = ["call_modules"]
