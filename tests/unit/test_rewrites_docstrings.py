"""Every primitive's docstring example runs: the rewrite applied to the
"before" function gives the "after" function."""

import inspect
import textwrap

import pytest

import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.nodes import IRModule
from tirfun.script import from_source

RECORDS = [R.Split, R.Fuse, R.Reorder, R.Merge, R.AddUnitLoop, R.ReorderBlockIterVar,
           R.Parallel, R.Vectorize, R.Bind, R.Unroll, R.Annotate, R.Unannotate]
RECORDS += [R.CacheRead, R.CacheWrite, R.CacheInplace, R.ReIndex, R.ReindexCacheRead, R.ReindexCacheWrite]  # caching
RECORDS += [R.CacheIndex]  # cache_index
RECORDS += [R.ComputeAt, R.ReverseComputeAt, R.ComputeInline, R.ReverseComputeInline]  # compute location
RECORDS += [R.SetScope, R.StorageAlign, R.UnsafeSetDType, R.SetAxisSeparator, R.RollingBuffer,
            R.TransformLayout, R.TransformBlockLayout, R.Blockize, R.Tensorize]  # storage, layout, blockize
RECORDS += [R.DecomposeReduction, R.RFactor, R.DecomposePadding, R.PadEinsum, R.LoopPartition,
            R.AnnotateBufferAccess,
            R.UnsafeHideBufferAccess]  # reductions, padding, partitioning, region hints
RECORDS += [R.ReadAt, R.WriteAt]  # copies made per loop iteration


def examples(cls) -> list[tuple[str, str, str, dict]]:
    """Each example's before source, rewrite expression, after source, and
    the functions an ``# intrinsic`` section defines (tensorize's), by name
    (a docstring may show several examples, one per code block)."""
    doc = inspect.getdoc(cls)
    out = []
    for code in doc.split(".. code-block:: python")[1:]:
        code = code.split("\n\nExample", 1)[0]  # the prose that introduces the next example
        before = code.split("# before", 1)[1].split("# rewrite", 1)[0]
        funcs = {}
        if "# intrinsic" in before:
            before, defs = before.split("# intrinsic", 1)
            for part in defs.split("@T.prim_func")[1:]:
                func = from_source("@T.prim_func" + textwrap.dedent(part))
                funcs[func.attrs["global_symbol"]] = func
        rewrite = code.split("# rewrite", 1)[1].split("# after", 1)[0]
        after = code.split("# after", 1)[1]
        out.append((textwrap.dedent(before), textwrap.dedent(rewrite).strip(), textwrap.dedent(after), funcs))
    return out


CASES = [(cls, k) for cls in RECORDS for k in range(len(examples(cls)))]


@pytest.mark.parametrize("cls, k", CASES, ids=lambda c: getattr(c, "primitive", str(c)))
def test_docstring_example_runs(cls, k):
    before_src, rewrite_src, after_src, funcs = examples(cls)[k]
    before = from_source(before_src)
    expected = from_source(after_src)
    names = {name: getattr(R, name) for name in R.__all__} | funcs
    rewrite = eval(rewrite_src, names)  # our own docstring
    assert cls in {type(r) for r in (rewrite.rewrites if isinstance(rewrite, R.Pipeline) else [rewrite])}
    result = rewrite(IRModule({"main": before}))
    assert_structural_equal(result["main"], expected)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.primitive)
def test_docstring_lists_numbered_requirements_naming_errors(cls):
    doc = inspect.getdoc(cls)
    # every error class the docstring names exists and is a ScheduleError subclass
    named = [name for name in R.__all__ if name.endswith("Error") and name in doc]
    assert named, f"{cls.__name__}'s docstring names no error class"
    for name in named:
        assert issubclass(getattr(R, name), R.RewriteError)
    assert "1. " in doc
