"""``tvm.testing``: the helpers of TVM's tests and tutorials.

- :func:`assert_allclose` and :func:`assert_prim_expr_equal` compare values
  and integer expressions;
- :func:`parameter`, :func:`fixture` and :class:`CompareBeforeAfter` are the
  pytest helpers TVM's own tests are written with, so that a test suite
  written for TVM (``class TestMyPass(tvm.testing.CompareBeforeAfter)``)
  runs against tirfun; :func:`main` runs the calling file's tests.

pytest is imported only when one of the pytest helpers is used: tirfun
does not depend on it.
"""

from __future__ import annotations

import inspect
import sys
import textwrap

from ...nodes import IRModule, PrimFunc


def _as_numpy(value):
    import numpy as np

    numpy = getattr(value, "numpy", None)
    return np.asanyarray(numpy() if callable(numpy) else value)


def assert_allclose(actual, desired, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """numpy's ``assert_allclose`` with TVM's default tolerances; tirfun
    arrays are compared by their values."""
    import numpy as np

    np.testing.assert_allclose(_as_numpy(actual), _as_numpy(desired), rtol=rtol, atol=atol,
                               verbose=True)


def assert_prim_expr_equal(lhs, rhs) -> None:
    """TVM's check that two integer expressions are equal for every value
    of their variables (as ``tvm.arith.Analyzer().can_prove_equal``)."""
    from ...errors import TirfunError
    from .arith import Analyzer

    if not Analyzer().can_prove_equal(lhs, rhs):
        raise TirfunError(f"the expressions are not equal: {lhs} and {rhs}")


def _pytest():
    import pytest

    return pytest


def parameter(*values, ids=None, by_dict=None):
    """A pytest fixture that takes each of ``values`` in turn (or each value
    of the dict ``by_dict``, its keys naming the cases): assign it to a
    name at module or class level and every test asking for that name runs
    once per value, as TVM's ``tvm.testing.parameter``."""
    if by_dict is not None:
        if values or ids is not None:
            from ...errors import ArgumentError

            raise ArgumentError("tvm.testing.parameter: give the values either positionally or "
                                "by_dict, not both")
        ids, values = list(by_dict), tuple(by_dict.values())

    # ``*_owner`` takes the instance when the fixture is a class attribute
    def value(*_owner, request):
        return request.param

    return _pytest().fixture(params=list(values), ids=ids)(value)


def fixture(func=None, *, cache_return_value: bool = False):
    """TVM's ``tvm.testing.fixture``: pytest's fixture (the cache flag,
    which TVM uses to keep expensive values across tests, is accepted; the
    fixture is computed once per test, as pytest does by default)."""
    del cache_return_value
    pytest = _pytest()
    return pytest.fixture(func) if func is not None else pytest.fixture


def main() -> None:
    """Run the tests of the file that calls this (``if __name__ ==
    "__main__": tvm.testing.main()``), with the command line's options."""
    caller = inspect.stack()[1].filename
    sys.exit(_pytest().main([caller, *sys.argv[1:]]))


def _is_fixture(value) -> bool:
    # pytest marks fixture functions differently across its versions
    return hasattr(value, "_pytestfixturefunction") or type(value).__name__ == "FixtureFunctionDefinition"


def _takes_self(value) -> bool:
    if not callable(value) or inspect.isclass(value):
        return False
    try:
        return "self" in inspect.signature(value).parameters
    except (TypeError, ValueError):
        return False


def _module_fixture(value, role: str):
    """``before`` / ``expected`` as a fixture: a function or module, a
    method returning one, an undecorated TVMScript function (parsed when
    the test runs, so a parse error fails that test only) or, for
    ``expected``, an exception class the transform must raise."""
    if _is_fixture(value):
        return value
    if isinstance(value, (PrimFunc, IRModule)) or (
            role == "expected" and inspect.isclass(value) and issubclass(value, Exception)):
        def get(self):
            return value
    elif _takes_self(value):
        def get(self):
            return value(self)
    elif inspect.isfunction(value):
        def get(self):
            from ...script import from_source

            return from_source("@T.prim_func\n" + textwrap.dedent(inspect.getsource(value)))
    else:
        raise TypeError(f"CompareBeforeAfter: {role} must be a PrimFunc or IRModule, a TVMScript "
                        f"function, a method or a fixture, got {type(value).__name__}")
    return _pytest().fixture(get, name=role)


def _on_functions(transform):
    """``transform`` (a callable from IRModule to IRModule: a tirfun
    pipeline, rewrite or function) applied to a PrimFunc as to the ``main``
    of a module holding it."""
    def apply(value):
        if isinstance(value, PrimFunc):
            return transform(IRModule({"main": value}))["main"]
        return transform(value)

    return apply


def check_transform(before, expected, transform) -> None:
    """What each :class:`CompareBeforeAfter` test asserts: ``transform``
    applied to ``before`` raises ``expected`` (an exception class), or gives
    a function or module structurally equal to ``expected`` (the
    ``global_symbol`` attributes aside)."""
    from .schedule_testing import assert_structural_equal_ignore_global_symbol

    if inspect.isclass(expected) and issubclass(expected, Exception):
        try:
            after = transform(before)
        except expected:
            return
        raise AssertionError(f"expected the transform to raise {expected.__name__}, it gave\n"
                             f"{after.script()}")
    if not isinstance(expected, (PrimFunc, IRModule)):
        raise TypeError(f"CompareBeforeAfter: expected must give a PrimFunc, an IRModule or an "
                        f"exception class, got {type(expected).__name__}")
    assert_structural_equal_ignore_global_symbol(transform(before), expected)


class CompareBeforeAfter:
    """A test class for a transform, as TVM's: a subclass names
    ``before`` (or ``Before``), ``expected`` (or ``Expected``) and
    ``transform``, and inherits one test, ``test_compare``, that applies the
    transform to ``before`` and checks the result against ``expected``
    (:func:`check_transform`)::

        class TestSplit(tvm.testing.CompareBeforeAfter):
            def transform(self):
                def split(mod):
                    sch = tvm.tir.Schedule(mod)
                    sch.split(sch.get_loops("B")[0], [None, 4])
                    return sch.mod
                return split

            def before(A: T.Buffer(8, "float32")):
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        A[vi] = T.float32(0)

            def expected(A: T.Buffer(8, "float32")):
                for i_0, i_1 in T.grid(2, 4):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i_0 * 4 + i_1)
                        A[vi] = T.float32(0)

    ``before`` and ``expected`` may be functions or modules, undecorated
    TVMScript functions, methods returning them or fixtures; ``expected``
    may be an exception class instead. ``transform`` may be a callable on
    modules, a method returning one, or a fixture giving one (which may
    depend on :func:`parameter` fixtures).
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for role, spellings in (("before", ("before", "Before")), ("expected", ("expected", "Expected"))):
            given = [name for name in spellings if name in cls.__dict__]
            if len(given) > 1:
                raise TypeError(f"CompareBeforeAfter: {cls.__name__} defines both "
                                f"{given[0]} and {given[1]}")
            if given:
                setattr(cls, role, _module_fixture(cls.__dict__[given[0]], role))
        if "transform" in cls.__dict__:
            cls.transform = _transform_fixture(cls, cls.__dict__["transform"])

    def test_compare(self, before, expected, transform):
        """``transform(before)`` is ``expected``, or raises it."""
        check_transform(before, expected, transform)


def _transform_fixture(cls, given):
    pytest = _pytest()
    if _is_fixture(given):
        # the class's own fixture keeps its parameters under another name;
        # ``transform`` adapts what it gives
        cls._transform_given = given

        def transform(self, _transform_given):
            return _on_functions(_transform_given)
    elif _takes_self(given):
        def transform(self):
            return _on_functions(given(self))
    elif callable(given):
        def transform(self):
            return _on_functions(given)
    else:
        raise TypeError(f"CompareBeforeAfter: transform must be callable, a method or a fixture, "
                        f"got {type(given).__name__}")
    return pytest.fixture(transform)


__all__ = ["assert_allclose", "assert_prim_expr_equal", "parameter", "fixture", "main",
           "CompareBeforeAfter", "check_transform"]
