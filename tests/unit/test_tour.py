"""The tour (``make tour``): TVM's transformation tutorial step and the
matmul story that ends with the packed, register-tiled schedule."""

from __future__ import annotations

import numpy as np

import tirfun
from tirfun import tour


def _primitives(sch: tirfun.Schedule) -> list[str]:
    return [type(step).__name__ for step in sch.trace.rewrites]


def test_the_tutorial_step_makes_the_calls_of_tvms_transformation_tutorial(capsys):
    sch = tour.tour_transformation()
    out = capsys.readouterr().out
    assert _primitives(sch) == ["Split", "Reorder", "ReverseComputeAt", "DecomposeReduction"]
    # the module after each call, the three timings, the trace and the schedule
    for shown in ("sch.split(j, factors=[None, 8]); sch.mod.show()", "sch.reorder(j0, k, j1); sch.mod.show()",
                  "sch.reverse_compute_at(block_C, j0); sch.mod.show()",
                  "sch.decompose_reduction(block_Y, k); sch.mod.show()", "sch.trace.show():", "sch.show():"):
        assert shown in out
    assert out.count("evaluate: mean ") == 3
    assert "sch.decompose_reduction(BlockRef(\"Y\", \"main\"), LoopRef(\"k\", \"main\"))" in out
    # the relu is computed under the j0 loop, the reduction's init before k
    assert 'with T.block("Y_init")' in sch.mod.script()
    assert tirfun.structural_equal(sch.trace(tour.MatmulRelu), sch.mod)


def test_the_matmul_story_ends_with_the_packed_register_tiled_schedule(capsys):
    sch = tour.tour_matmul(64)
    out = capsys.readouterr().out
    rows = ["naive loops i, j, k", "32x32 tiles, k split by 4, j innermost", "+ vectorize the inner j",
            "+ parallel over the outer i", "B in panels, 6x64 register tile", "the same, -fast-math-contract"]
    positions = [out.index(row) for row in rows]
    assert positions == sorted(positions)
    names = _primitives(sch)
    for primitive in ("CacheRead", "ComputeAt", "CacheWrite", "ReverseComputeAt", "Unroll", "Vectorize",
                      "Parallel", "DecomposeReduction", "LoopPartition"):
        assert primitive in names
    # the tile is zeroed before the k loop, whose steps are then unrolled by 4
    assert names[-3:] == ["DecomposeReduction", "Split", "Unroll"]
    # 14 does not divide 64: each part of the partitioned tile loop caches
    # its own tile
    assert 'sch.cache_write(BlockRef("C_i_00", "main"), 0, "local")' in out
    assert 'sch.cache_write(BlockRef("C_i_01", "main"), 0, "local")' in out
    # the story's last schedule computes the product
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 64)).astype("float32")
    b = rng.standard_normal((64, 64)).astype("float32")
    c = np.zeros((64, 64), "float32")
    tirfun.build(sch.mod)(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_the_whole_tour_runs(capsys, monkeypatch):
    monkeypatch.setattr(tour, "N", 64)
    tour.run_tour()
    out = capsys.readouterr().out
    titles = ["1. An IRModule written in TVMScript", "2. The same program from a tensor expression",
              "3. Build for the CPU and run", "4. Transform the module with a Schedule",
              "5. The TensorIR transformation tutorial", "6. A 64x64x64 matmul, step by step",
              "7. The GPU step", "The tour took"]
    positions = [out.index(title) for title in titles]
    assert positions == sorted(positions)
