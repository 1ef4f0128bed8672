"""Schedule primitives as rewrite records: pure functions from one IRModule
to another.

Each primitive is a frozen record whose fields are its arguments::

    from tirfun import rewrites as R

    r = R.split("i", [None, 4])       # a value: compare it, hash it, store it
    r.violations(mod)                  # [] when it applies, else the failed checks
    new = r(mod)                       # the rewritten module; mod is untouched
    p = R.split("i", [2, 2, 2]) >> R.reorder("i_0", "i_2", "i_1")
    new = R.apply(mod, p)              # or p(mod)

Loops and blocks are named by their loop variable and block name (or by
:class:`LoopRef` / :class:`BlockRef`); the names of the loops a primitive
creates are a pure function of the names in use, so a pipeline replays
exactly. :mod:`.queries` finds blocks and loops; :class:`tirfun.Schedule`
wraps all of this in TVM's Schedule API.
"""

from .annotate import Annotate, Unannotate, annotate, unannotate
from .base import Outcome, Rewrite
from .cache import (
    CacheInplace, CacheRead, CacheWrite, ReIndex, ReindexCacheRead, ReindexCacheWrite, cache_inplace,
    cache_read, cache_write, reindex, reindex_cache_read, reindex_cache_write,
)
from .cache_index import CacheIndex, cache_index
from .compute_location import (
    ComputeAt, ComputeInline, ReverseComputeAt, ReverseComputeInline, compute_at, compute_inline,
    reverse_compute_at, reverse_compute_inline,
)
from .errors import *  # noqa: F401,F403 - every ScheduleError subclass
from .errors import __all__ as _errors_all
from .for_kind import Bind, Parallel, Unroll, Vectorize, bind, parallel, unroll, vectorize
from .loops import (
    AddUnitLoop, Fuse, Merge, Reorder, ReorderBlockIterVar, Split, add_unit_loop, fuse, merge,
    reorder, reorder_block_iter_var, split,
)
from .pipeline import Pipeline, apply
from .queries import (
    StmtSRef, get, get_block, get_child_blocks, get_consumers, get_loops, get_output_blocks,
    get_producers, get_sref,
)
from .refs import BlockRef, LoopRef
from .blockize import Blockize, blockize
from .tensorize import Tensorize, tensorize
from ..tir.tensor_intrin import TensorIntrin
from .block_layout import TransformBlockLayout, transform_block_layout
from .layout import TransformLayout, transform_layout
from .rolling import RollingBuffer, rolling_buffer
from .storage import (
    SetAxisSeparator, SetScope, StorageAlign, UnsafeSetDType, set_axis_separator, set_scope, storage_align,
    unsafe_set_dtype,
)
from .reduction import DecomposeReduction, RFactor, decompose_reduction, rfactor
from .padding import DecomposePadding, PadEinsum, can_decompose_padding, decompose_padding, pad_einsum
from .partition import LoopPartition, loop_partition
from .buffer_access import (
    AnnotateBufferAccess, UnsafeHideBufferAccess, annotate_buffer_access, unsafe_hide_buffer_access,
)
from .read_write_at import ReadAt, WriteAt, read_at, write_at

__all__ = [
    "Rewrite", "Outcome", "Pipeline", "apply", "LoopRef", "BlockRef",
    "Split", "split", "Fuse", "fuse", "Reorder", "reorder", "Merge", "merge",
    "AddUnitLoop", "add_unit_loop", "ReorderBlockIterVar", "reorder_block_iter_var",
    "Parallel", "parallel", "Vectorize", "vectorize", "Bind", "bind", "Unroll", "unroll",
    "Annotate", "annotate", "Unannotate", "unannotate",
    "CacheRead", "cache_read", "CacheWrite", "cache_write", "ReIndex", "reindex",
    "CacheInplace", "cache_inplace", "ReindexCacheRead", "reindex_cache_read", "ReindexCacheWrite",
    "reindex_cache_write",
    "CacheIndex", "cache_index",
    "ComputeAt", "compute_at", "ReverseComputeAt", "reverse_compute_at",
    "ComputeInline", "compute_inline", "ReverseComputeInline", "reverse_compute_inline",
    "get", "get_block", "get_loops", "get_child_blocks", "get_producers", "get_consumers",
    "get_output_blocks", "get_sref", "StmtSRef",
    "SetScope", "set_scope", "StorageAlign", "storage_align", "UnsafeSetDType", "unsafe_set_dtype",
    "SetAxisSeparator", "set_axis_separator", "RollingBuffer", "rolling_buffer",
    "TransformLayout", "transform_layout", "TransformBlockLayout", "transform_block_layout",
    "Blockize", "blockize", "Tensorize", "tensorize", "TensorIntrin",
    "DecomposeReduction", "decompose_reduction", "RFactor", "rfactor",
    "DecomposePadding", "decompose_padding", "can_decompose_padding", "PadEinsum", "pad_einsum",
    "LoopPartition", "loop_partition",
    "AnnotateBufferAccess", "annotate_buffer_access", "UnsafeHideBufferAccess",
    "unsafe_hide_buffer_access",
    "ReadAt", "read_at", "WriteAt", "write_at",
    *_errors_all,
]
