"""``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])``.

The combiner is the one lambda TVMScript has: its parameters are the left
values then the right values (two per identity), each of its identity's
dtype, and its body one expression or a tuple of them. The parameters are
bound as fresh variables (names are identities within a function) while
the body is read; nothing of it is run by Python.
"""

from __future__ import annotations

import ast

from ..errors import NodeError
from ..nodes import IntImm, PrimExpr, Var
from ..nodes.reducer import CommReducer
from .parser_args import sig, bind
from .parser_values import describe

SIGNATURE = sig("combiner", "identity")


def comm_reducer(ip, node: ast.Call) -> CommReducer:
    """The CommReducer a ``T.comm_reducer(...)`` call writes."""
    lam = None
    positional = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise ip.fail(arg, "unpacking arguments with * is not supported in TVMScript")
        if isinstance(arg, ast.Lambda) and not positional:
            lam = arg
            positional.append((None, arg))
        else:
            positional.append((ip.eval(arg), arg))
    keywords = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise ip.fail(kw.value, "unpacking arguments with ** is not supported in TVMScript")
        if kw.arg == "combiner" and isinstance(kw.value, ast.Lambda):
            lam = kw.value
            keywords[kw.arg] = (None, kw.value)
        else:
            keywords[kw.arg] = (ip.eval(kw.value), kw.value)
    a = bind(ip, "T.comm_reducer", SIGNATURE, node, positional, keywords)
    if lam is None:
        raise ip.fail(a.node("combiner"), "the combiner of T.comm_reducer must be written as a "
                      "lambda, such as lambda x, y: x + y")
    identity = a.identity
    if not isinstance(identity, (list, tuple)):
        identity = [identity]
    ids = [_identity(ip, v, a.node("identity")) for v in identity]
    params = lam.args
    if params.vararg or params.kwarg or params.kwonlyargs or params.defaults or params.posonlyargs:
        raise ip.fail(lam, "the combiner of T.comm_reducer takes plain parameters only")
    names = [p.arg for p in params.args]
    if len(names) != 2 * len(ids):
        raise ip.fail(lam, f"the combiner of a comm_reducer with {len(ids)} "
                      f"identit{'y' if len(ids) == 1 else 'ies'} takes {2 * len(ids)} parameters "
                      f"(the left values, then the right values), got {len(names)}")
    dtypes = [e.dtype for e in ids] * 2
    variables = [Var(ip.namer.fresh(n), dt) for n, dt in zip(names, dtypes)]
    ip.scopes.push()
    try:
        for n, v in zip(names, variables):
            ip.scopes.define(n, v)
        body = ip.eval(lam.body)
    finally:
        ip.scopes.pop()
    results = list(body) if isinstance(body, tuple) else [body]
    if len(results) != len(ids):
        raise ip.fail(lam.body, f"the combiner returns {len(results)} value(s) but the "
                      f"comm_reducer has {len(ids)} identit{'y' if len(ids) == 1 else 'ies'}")
    exprs = [ip.cast_to(r, e.dtype, lam.body) for r, e in zip(results, ids)]
    k = len(ids)
    try:
        return CommReducer(variables[:k], variables[k:], exprs, ids)
    except NodeError as err:
        raise ip.fail(node, str(err)) from None


def _identity(ip, value, node) -> PrimExpr:
    # TVM types a plain int identity as int32
    if isinstance(value, bool):
        return IntImm("bool", int(value))
    if isinstance(value, int):
        return IntImm("int32", value)
    if isinstance(value, (float, PrimExpr)):
        return ip.as_expr(value, node)
    raise ip.fail(node, f"the identities of T.comm_reducer are values, got {describe(value)}")
