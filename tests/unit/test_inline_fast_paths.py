"""The shortcuts compute_inline and reverse_compute_inline take give what
the general paths they skip give: the regions of a block of one store read
off its loads, and a reader of one store rewritten by a walk of its store."""

import itertools

from tirfun.analysis.access import access_regions
from tirfun.nodes import IRModule
from tirfun.rewrites import compute_location as CL
from tirfun.rewrites.dataflow import updated_by
from tirfun.script import from_source

from test_compute_location_fast_paths import _modules, _outcome, _realizes

# blocks that update what they hold without an init: B and C by a load in
# their values, D in an index (which its regions hold, so that the
# general path answers)
_ACCUMULATING = IRModule({"main": from_source("""
@T.prim_func
def main(A: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32"), D: T.Buffer((8,), "int32")):
    B = T.alloc_buffer((8,), "int32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * C[(vi + 1) % 8]
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[D[vi] % 8] = A[vi] + T.int32(1)
""")})

# a producer that does not reach the consumer's whole domain, and one that
# reaches past it (reverse_compute_inline: an error, and a predicate)
_REACHES = IRModule({"main": from_source("""
@T.prim_func
def main(A: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32"), E: T.Buffer((6,), "int32")):
    B = T.alloc_buffer((8,), "int32")
    D = T.alloc_buffer((8,), "int32")
    for i in range(6):
        with T.block("B"):
            vi = T.axis.spatial(6, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = A[vi]
    for i in range(6):
        with T.block("E"):
            vi = T.axis.spatial(6, i)
            E[vi] = D[vi]
""")})


def _general(m):
    """Every shortcut of the inliners left to the general path."""
    m.setattr(CL, "_store_regions", lambda block: None)
    m.setattr(CL, "_inlined_store_realize", lambda *args: None)
    m.setattr(CL, "_store_accumulates", lambda *args: None)
    m.setattr(CL, "_plain_reach", lambda *args: None)


def test_inliners_give_the_general_outcome(monkeypatch):
    """Both inliners of every block of the test modules: the same failed
    checks, or the same module, with every shortcut left to the general
    path; and every block of one store, in the modules and in what the
    inliners make of them (the loads of two bodies in one), has the
    regions the general inference gives."""
    compared = regions = updates = accumulating = 0
    for mod in [_ACCUMULATING, _REACHES, *itertools.islice(_modules(), 0, None, 3)]:  # a third of them: the test is cheap
        results = [mod]
        for _, realize in _realizes(mod["main"]):
            for record in (CL.compute_inline(realize.block.name_hint),
                           CL.reverse_compute_inline(realize.block.name_hint)):
                got = _outcome(record, mod)
                with monkeypatch.context() as m:
                    _general(m)
                    want = _outcome(record, mod)
                assert got == want, (record, mod.script())
                compared += 1
                if not isinstance(got, list):
                    results.append(got)
        for result in results:
            for _, realize in _realizes(result["main"]):
                found = CL._store_regions(realize.block)
                if found is not None:
                    assert found == access_regions(realize.block)
                    regions += 1
                block = realize.block
                for buffer in {r.buffer for r in list(block.reads) + list(block.writes)}:
                    fast = CL._store_accumulates(block, buffer)
                    if fast is not None:
                        assert fast == (buffer in updated_by(block))
                        updates += 1
                        accumulating += fast
    assert compared > 150 and regions > 100 and updates > 150 and accumulating >= 2
