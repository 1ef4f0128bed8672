"""Random ``T.comm_reducer`` values: one or several combined values of
mixed dtypes, each combined by a random expression over the reducer's
variables (the expression builder of the random programs), with a random
identity.

``comm_reducers()`` is a hypothesis strategy; ``random_comm_reducer(ch)``
builds one from any :class:`~tirfun.testing._choices.Chooser`.
"""

from __future__ import annotations

from ..nodes import DataType, Var
from ..nodes.reducer import CommReducer
from ._choices import Chooser, DrawChooser
from ._exprs import ExprBuilder

#: the dtypes a random reducer combines
DTYPES = tuple(DataType(d) for d in ("float32", "int32", "float64", "int64", "int8"))


def random_comm_reducer(ch: Chooser, max_values: int = 3, depth: int = 3) -> CommReducer:
    """A reducer of 1 to ``max_values`` values whose results are random
    expressions at most ``depth`` operators deep."""
    n = ch.integer(1, max_values)
    dtypes = [ch.choice(DTYPES) for _ in range(n)]
    suffix = [""] if n == 1 else [str(i) for i in range(n)]
    lhs = [Var(f"x{s}", dt) for s, dt in zip(suffix, dtypes)]
    rhs = [Var(f"y{s}", dt) for s, dt in zip(suffix, dtypes)]
    taken = {v.name for v in lhs + rhs}

    def fresh(base: str) -> str:
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        return name

    # the variables enter as symbols: iteration variables are taken to be indices
    builder = ExprBuilder(ch, index_dtype=DataType("int32"), iter_vars=[], symbols=lhs + rhs,
                          accesses=[], dtypes=list(dict.fromkeys(dtypes)), fresh=fresh,
                          allow_let=False)
    results = [builder.expr(dt, depth) for dt in dtypes]
    identity = [builder.constant(dt) for dt in dtypes]
    return CommReducer(lhs, rhs, results, identity)


def comm_reducers(max_values: int = 3, depth: int = 3):
    """A hypothesis strategy of :func:`random_comm_reducer` values."""
    from hypothesis import strategies as st  # hypothesis is a test dependency only

    @st.composite
    def build(draw):
        return random_comm_reducer(DrawChooser(draw), max_values, depth)

    return build()


__all__ = ["comm_reducers", "random_comm_reducer", "DTYPES"]
