"""The tour: the TensorIR tutorial, end to end, as ``make tour`` runs it."""

from __future__ import annotations

import textwrap

from .script import tir as T
import tirfun


def _section(title: str) -> None:
    print()
    print(title)
    print("=" * len(title))


def _say(text: str) -> None:
    print(textwrap.fill(textwrap.dedent(text).strip(), width=78))


@tirfun.script.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        # handles are pointers; match_buffer views them as typed arrays
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            # a block is the unit of computation; vi is a spatial axis bound to i
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0


def tour_script() -> tirfun.IRModule:
    """Step 1: the module written in TVMScript, printed and parsed back."""
    _section("1. An IRModule written in TVMScript")
    _say("""The decorated class above becomes an immutable IRModule. Printing it gives
    canonical TVMScript: reads and writes are inferred and shown, literals are typed.""")
    print()
    print(MyModule.script())
    again = tirfun.script.from_source(MyModule.script())
    same = tirfun.structural_equal(MyModule, again)
    identical = again.script() == MyModule.script()
    print(f"parse(print(module)) is structurally equal to the module: {same}")
    print(f"and prints to the identical text: {identical}")
    if not (same and identical):
        raise tirfun.TirfunError("the printed module did not parse back to itself")
    return MyModule


def run_tour() -> None:
    """Run every step of the tour in order."""
    tour_script()
