"""Public testing helpers: hypothesis strategies and equivalence checks.

Users property-test their own passes with the same tools tirfun tests
itself with. Submodules load on first use (hypothesis is only needed for the
strategies):

* ``tirfun.testing.programs``  random well-formed PrimFuncs (``prim_funcs()``,
  ``random_prim_func(seed)``)
* ``tirfun.testing.renaming``  ``rename_bound``: consistent renaming of bound names
* ``tirfun.testing.mutations``  single changes of a constant, dtype or block name
* ``tirfun.testing.draw_compute_location``  random compute_at, reverse_compute_at,
  compute_inline and reverse_compute_inline applications (``DRAWERS``), and
  consumers under a condition moved by reverse_compute_at (``draw_guarded_consumer``)
* ``tirfun.testing.draw_blockize``  blockize where the division reads more than loops
  from 0: predicates bounding fused parts, domains not from 0, offsets, padded sums,
  fuses over run-time extents (``draw_blockize_case``)
* ``tirfun.testing.stage_programs``  multi-stage programs: elementwise chains, a
  reduction feeding a stage, two consumers of one producer, stencils, ...
* ``tirfun.testing.features``  ``program_features``: what a PrimFunc contains
* ``tirfun.testing.te_programs``  random te programs
* ``tirfun.testing.reduction_nests``  reductions among spatial loops, fused and split
* ``tirfun.testing.equivalence``  ``assert_equivalent`` and random inputs
* ``tirfun.testing.statements``  random ``while`` and ``T.allocate_const`` programs
* ``tirfun.testing.accepted``  TensorIR that TVM accepts and a stricter reading
  refuses (nested blocks using outer block variables, repeated and anonymous
  block names, regions that do not cover the body, overlapping windows)
* ``tirfun.testing.calls``  modules whose functions call one another
* ``tirfun.testing.draw_cache``  random caching applications (``DRAWERS``: cache_read, cache_write, cache_inplace,
  reindex and its caches, cache_index, read_at, write_at), chains of them (``draw_cache_chain``), and
  register tiles of a partitioned tile loop (``draw_partitioned_tiles``)
* ``tirfun.testing.casts``  chains of conversions over short vectors of every dtype
* ``tirfun.testing.draw_storage``  random storage primitives (``DRAWERS``) and
  programs with producers inside their consumers' loops (``located_programs``)
* ``tirfun.testing.cuda``  a CUDA build run without a GPU (``run_split``), ptxas
* ``tirfun.testing.draw_allreduce``  row reductions bound across GPU threads
  (``thread_reductions()``) and what their all-reduce computes
* ``tirfun.testing.draw_reduction``  reductions (sum, product, min, max, argmax;
  repeated under a consumer's loop) and random decompose_reduction / rfactor
* ``tirfun.testing.draw_padding``  padded stages as conv2d's, and random
  decompose_padding, pad_einsum, loop_partition and region hints (annotate_buffer_access,
  unsafe_hide_buffer_access)
* ``tirfun.testing.index_programs``  blocks whose loads index through arithmetic
  and gathers (``index_programs()``, ``random_index_program(seed)``), for cache_index
* ``tirfun.testing.masked``  predicated loads and stores in every spelling TVM has
  (``masked_programs()``), with a numpy oracle of their result
* ``tirfun.testing.stages``  multi-stage programs as users write them
  (elementwise chains, reductions, padding, softmax, conv, matmul):
  ``multi_stage_programs()``, ``random_stages(seed)``, ``stage_features``
"""

from __future__ import annotations

import importlib

_LAZY = {
    "prim_funcs": "tirfun.testing.programs",
    "random_prim_func": "tirfun.testing.programs",
    "ProgramOptions": "tirfun.testing.programs",
    "rename_bound": "tirfun.testing.renaming",
    "random_renaming": "tirfun.testing.renaming",
    "bound_names": "tirfun.testing.renaming",
    "mutations": "tirfun.testing.mutations",
    "mutants": "tirfun.testing.mutations",
    "mutation_sites": "tirfun.testing.mutations",
    "compute_location_drawers": "tirfun.testing.draw_compute_location",
    "stage_programs": "tirfun.testing.stage_programs",
    "random_stage_program": "tirfun.testing.stage_programs",
    "program_features": "tirfun.testing.features",
    "te_programs": "tirfun.testing.te_programs",
    "reduction_nests": "tirfun.testing.reduction_nests",
    "assert_equivalent": "tirfun.testing.equivalence",
    "random_inputs": "tirfun.testing.equivalence",
    "inputs_for": "tirfun.testing.equivalence",
    "while_programs": "tirfun.testing.statements",
    "const_programs": "tirfun.testing.statements",
    "accepted_sources": "tirfun.testing.accepted",
    "random_accepted_source": "tirfun.testing.accepted",
    "call_modules": "tirfun.testing.calls",
    "draw_cache_read": "tirfun.testing.draw_cache", "draw_cache_write": "tirfun.testing.draw_cache",
    "cast_chains": "tirfun.testing.casts",
    "located_programs": "tirfun.testing.draw_storage",
    "run_split": "tirfun.testing.cuda",
    "reduction_programs": "tirfun.testing.draw_reduction",
    "thread_reductions": "tirfun.testing.draw_allreduce",
    "padded_programs": "tirfun.testing.draw_padding",
    "multi_stage_programs": "tirfun.testing.stages",
    "random_stages": "tirfun.testing.stages",
    "stage_features": "tirfun.testing.stages",
    "StageOptions": "tirfun.testing.stages",
    "index_programs": "tirfun.testing.index_programs", "random_index_program": "tirfun.testing.index_programs",
    "masked_programs": "tirfun.testing.masked",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tirfun.testing' has no attribute {name!r}")


__all__ = list(_LAZY)
