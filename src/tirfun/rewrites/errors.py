"""The ScheduleError subclasses: one per failed precondition or bad argument.

Every error names the primitive, the loop or block concerned and the
reason, and (at the default ``"detail"`` level) shows the offending
TVMScript lines. The text is rendered when the error is printed, so
``violations()`` can collect errors cheaply.
"""

from __future__ import annotations

from ..errors import ScheduleError

RENDER_LEVELS = ("detail", "fast", "none")
_MAX_LINES = 24


class RewriteError(ScheduleError):
    """Base of the errors raised by the rewrites in :mod:`tirfun.rewrites`.

    ``primitive`` is the primitive's TVM name (``"split"``), ``subject``
    names what failed (``"loop 'i'"``), ``reason`` says why, and ``nodes``
    are the statements shown as TVMScript under the message.
    """

    def __init__(self, primitive: str, subject: str, reason: str, nodes=(), *, level: str = "detail"):
        self.primitive = primitive
        self.subject = subject
        self.reason = reason
        self.nodes = tuple(nodes)
        self.level = level
        # one message, as every exception: str() renders it at the level
        super().__init__(self.summary)

    @property
    def summary(self) -> str:
        """The first line: primitive, subject and reason."""
        return f"{self.primitive}: {self.subject}: {self.reason}"

    def with_level(self, level: str) -> "RewriteError":
        """The same error rendered at ``level`` (``"detail"``, ``"fast"``
        or ``"none"``), as TVM's ``error_render_level`` selects."""
        return type(self)(self.primitive, self.subject, self.reason, self.nodes, level=level)

    @classmethod
    def description(cls) -> str:
        """The class's short description: the first sentence of its docstring."""
        doc = " ".join((cls.__doc__ or cls.__name__).split())
        end = doc.find(". ")
        return doc if end < 0 else doc[:end + 1]

    def __str__(self) -> str:
        """The message at the error's level: ``"detail"``, the summary line
        then the offending TVMScript; ``"fast"``, the summary line alone;
        ``"none"``, the class name and its short description."""
        if self.level == "none":
            return f"{type(self).__name__}: {self.description()}"
        if self.level == "fast" or not self.nodes:
            return self.summary
        parts = [self.summary]
        for node in self.nodes:
            parts.append(_snippet(node))
        return "\n".join(parts)

    def __reduce__(self):
        return (_rebuild, (type(self), self.primitive, self.subject, self.reason, self.nodes, self.level))


def _rebuild(cls, primitive, subject, reason, nodes, level):
    return cls(primitive, subject, reason, nodes, level=level)


def _snippet(node) -> str:
    """The node as indented TVMScript, cut after a screenful."""
    try:
        from ..script.printer import to_script

        text = to_script(node)
    except Exception:  # the message must render even if printing fails
        text = repr(node)
    lines = text.rstrip("\n").split("\n")
    if len(lines) > _MAX_LINES:
        lines = lines[:_MAX_LINES] + ["..."]
    return "\n".join("    " + line for line in lines)


# -- arguments and name resolution -------------------------------------------------

class InvalidModuleError(RewriteError):
    """The rewrite was applied to something that is not an IRModule or PrimFunc."""


class UnknownFunctionError(RewriteError, ValueError):
    """The function named by a reference is not in the module, or the module
    has several functions and none is ``main``. It is also a ``ValueError``,
    what TVM raises when a schedule does not know which function to work on."""


class UnknownLoopError(RewriteError):
    """No loop has the given loop variable name."""


class UnknownBlockError(RewriteError):
    """No block has the given name."""


class RemovedLoopRefError(UnknownLoopError, IndexError):
    """A loop reference given to ``remove_rv`` was used again. It is also an
    ``IndexError``, what TVM raises for a removed random variable."""


class RemovedBlockRefError(UnknownBlockError, IndexError):
    """A block reference given to ``remove_rv`` was used again. It is also an
    ``IndexError``, what TVM raises for a removed random variable."""


class NotSingleBlockError(RewriteError):
    """Several blocks have the given name, so the name does not identify one."""


class RefKindError(RewriteError):
    """An argument is not a reference of the expected kind: a block where a
    loop goes, a loop where a block goes, or not a reference at all."""


class ForeignRefError(RewriteError):
    """The references given to one primitive point into different functions."""


class InvalidArgumentError(RewriteError):
    """An argument has the wrong type (a flag that is not a bool, a thread
    axis that is not a string, ...)."""


class NotEnoughLoopsError(RewriteError):
    """The primitive needs more loops than it was given (fuse needs one,
    merge two)."""


class InvalidFactorError(RewriteError):
    """A split factor is neither None, a positive int, nor an integer
    expression over names defined at the loop."""


class NonPositiveFactorError(RewriteError):
    """A constant split factor is zero or negative."""


class NotSingleInferFactorError(RewriteError):
    """More than one split factor is None (only one can be inferred)."""


class WrongFactorProductError(RewriteError):
    """The product of the split factors is not provably at least the loop's extent."""


class InvalidThreadAxisError(RewriteError):
    """The thread axis of ``bind`` is not one of blockIdx/threadIdx/vthread .x/.y/.z."""


class InvalidAnnotationError(RewriteError):
    """An annotation key is not a string, or its value is not a string, int,
    float, bool, expression, or a list or dict of those."""


class InvalidReorderIndexError(RewriteError):
    """``reorder_block_iter_var``'s order is not a permutation of the block's
    iteration variable positions."""


# -- preconditions -------------------------------------------------------------------

class LoopHasAnnotationOrThreadBindingError(RewriteError):
    """The loop carries annotations or a thread binding, which the primitive
    cannot carry over to the loops it creates."""


class LoopNotStartWithZeroError(RewriteError):
    """The loop does not start at 0."""


class LoopMultiAppearanceError(RewriteError):
    """A loop appears more than once in the arguments."""


class OuterNotInnerParentError(RewriteError):
    """Of two loops to fuse, the outer one is not the parent of the inner one."""


class NotOnlyChildError(RewriteError):
    """The inner loop is not the only child of the outer loop (the loops are
    not perfectly nested)."""


class DependentLoopError(RewriteError):
    """A loop's min or extent depends on a loop that would be inner to it
    (reorder) or fused with it (fuse)."""


class LoopsNotAChainError(RewriteError):
    """The loops to reorder are not on one chain of single-child loops in
    one block scope."""


class BlockIterTypeError(RewriteError):
    """A block under the loops has an iteration variable that is neither
    data-parallel nor a reduction."""


class NonLoopAncestorError(RewriteError):
    """Between the block and the statement the primitive takes it out of
    there is a statement other than a loop (an ``if``, a let binding), which
    the block would not take with it to its new place; for ``merge``, such
    a statement lies between a nest and the loops' common ancestor."""


class LoopDependentDomainError(RewriteError):
    """The domain of one of the block's iteration variables names a loop
    around it (a triangular nest: ``T.axis.reduce(i + 1, k)``), and the
    primitive makes new loops from the domains or sizes buffers by them,
    where that loop is gone or out of reach."""


class LoopVariableInBlockError(RewriteError):
    """An opaque block (one without iteration variables, which TVM lets
    name the loops around it) uses the variable of a loop that the
    primitive takes the block out of: moved, the block would name a
    variable nothing binds."""


class NotAffineBindingError(RewriteError):
    """A block under the loops binds its iteration variables with values
    that are not affine in the loop variables."""


class NotSameScopeError(RewriteError):
    """The loops to merge are not in the same block scope."""


class NestDepthMismatchError(RewriteError):
    """The loop nests to merge have different depths below their common ancestor."""


class NestExtentMismatchError(RewriteError):
    """The loop nests to merge have loops of different extents."""


class RootBlockError(RewriteError):
    """No loop can be added above the root block of a function."""


class NotCompactDataflowError(RewriteError):
    """A block directly under the loop is neither a complete block (all
    iteration variables data-parallel, no buffer both read and written) nor
    a reduction block (with ``init``, data-parallel and reduction variables
    only, affine bindings, reduction variables not indexing its outputs)."""


class WrongBlockIterTypeError(RewriteError):
    """A block binds the loop variable into an iteration variable that is not
    data-parallel (a reduction variable is allowed only for threadIdx.* in bind)."""


class ReplicatedThreadReductionError(RewriteError):
    """Threads would each run the same update of shared elements at once:
    ``unroll`` of a loop bound to threadIdx.* that feeds a cross-thread
    reduction writing a non-local buffer, where without the binding some
    thread axis of the kernel would not reach the block (every thread of it
    would run the whole reduction); or ``parallel`` / ``bind`` of a loop
    that feeds no iteration variable of a block updating a buffer the
    threads share from what it reads (every iteration runs the same
    instance). TVM does either, and the threads race."""


class AnnotationNotFoundError(RewriteError):
    """``unannotate`` was given a key the loop or block does not have."""


# -- compute location: compute_at, reverse_compute_at, compute_inline, reverse_compute_inline

class NotStagePipelineError(RewriteError):
    """The scope is not a stage pipeline where the primitive needs one: the
    producers of a buffer do not cover, within the loop the producer and the
    consumer share, the region the consumer reads there; or (rfactor,
    pad_einsum) another block under the reduction's loops writes a buffer
    the reduction reads."""


class NotInSameScopeError(RewriteError):
    """The block and the loop are not under the same block scope, or the loop
    is an ancestor of the block."""


class NotAllRequiredBlocksAreVisitedError(RewriteError):
    """Some consumer (compute_at) or producer (reverse_compute_at) of the
    block is not under the target loop."""


class InvalidInsertionIndexError(RewriteError):
    """``index`` is neither -1, -2 nor a position between the last producer
    and the first consumer under the target loop."""


class NotCompleteOrReductionBlockError(RewriteError):
    """The block is neither a complete block nor a reduction block of its scope."""


class IncompleteBlockError(RewriteError):
    """The block is not a complete block of its scope (data-parallel
    iteration variables only, the only writer of its outputs, reading no
    buffer it writes)."""


class OutputBlockError(RewriteError):
    """The block writes a buffer its scope does not allocate (an output of the
    scope), which the primitive cannot move or remove."""


class OnlyLeafError(RewriteError):
    """The block is the only leaf of its scope, which removing it would leave empty."""


class HasInitBlockError(RewriteError):
    """The block to inline has an init statement (it is a reduction)."""


class NotSingleReadWriteBufferError(RewriteError):
    """The block to inline writes more than one buffer (compute_inline), or
    reads not exactly one buffer that its scope writes (reverse_compute_inline)."""


class BodyAnalysisError(RewriteError):
    """The body of the block to inline is not of the form the primitive
    substitutes: ``B[v0, v1, ...] = f(...)`` with distinct iteration variables
    or constants as indices (compute_inline), or ``C[...] = f(B[v0, v1, ...])``
    reading the producer's buffer at one index that maps back to the
    producer's (reverse_compute_inline)."""


class NonSingleProducerError(RewriteError):
    """The consumer to inline has more than one producer of the buffer it
    reads, the producer is not a complete block, or another block reads the
    producer's buffer too."""


class OpaqueAccessError(RewriteError):
    """The buffer is reached other than by its loads and stores: through its
    data pointer, another buffer declared on that pointer, or (for the
    buffer to inline) a ``T.match_buffer`` view, so its uses cannot be
    rewritten."""


class UnsupportedRegionError(RewriteError):
    """The region the block provides is not one the primitive can solve its
    iteration domain from (not one point per dimension, indexed by distinct
    iteration variables or constants, where the primitive needs that)."""


class NonTrivialPredicateError(RewriteError):
    """The block's predicate (``T.where``) says more than that its iteration
    variables stay in their domains, so it cannot survive the loops it is
    written in being replaced."""


class ThreadOverlapError(RewriteError):
    """Under parallel loops, the block placed by compute_at or
    reverse_compute_at would be computed for the same iterations by several
    threads, which would write the same elements at the same time; or, under
    thread-bound loops, a block that reads what it writes would be run by
    several threads that share its output, and update it at once; or
    cache_inplace's copies, placed beside a block that reduces across the
    threads of a loop, would copy the shared region in and back in every
    thread."""


class NestingTooDeepError(RewriteError):
    """The module nests deeper than tirfun can rewrite: its analyses and
    rebuilding recurse along the nesting, past Python's recursion limit.
    TVMScript is read up to ``tirfun.analysis.nesting.MAX_DEPTH`` levels;
    deeper programs come from nodes made by hand, or from inlining long
    expressions into the bottom of others."""


class DependenceViolationError(RewriteError):
    """Moving the block would reorder it with another block it depends on
    through a buffer (one writes what the other reads or writes), which
    would change what the program computes."""
# -- storage: set_scope, storage_align, unsafe_set_dtype, set_axis_separator ----------

class BufferIndexOutOfRangeError(RewriteError, AssertionError):
    """The buffer index does not index the block's write (or read) regions.
    It is also an ``AssertionError``, what TVM's Python API raises where it
    checks a ``("read" | "write", index)`` argument."""


class InvalidStorageScopeError(RewriteError):
    """The storage scope is not one TVM knows (global, shared, warp, local,
    optionally with a ``.tag``, or a wmma scope)."""


class ViewScopeMismatchError(RewriteError):
    """A block that the rewrite would redirect to a new buffer views the old
    one through a ``match_buffer`` declared in another storage scope than
    the new buffer's (a tensorized block views its operands in the scopes
    its intrinsic asks for). A view must be in the scope of what it views;
    TVM fails an internal check here. Cache in the view's scope, or cache
    before tensorizing."""


class NonAllocatedBufferError(RewriteError):
    """The buffer is not allocated by a block: it is a function parameter or
    a match_buffer view, whose storage belongs to someone else."""


class PartitionAllocationError(RewriteError):
    """The loop to partition uses, in its body, a buffer over one of the
    body's own allocations without declaring it with ``T.decl_buffer``
    (lowered TIR's ``T.Buffer(..., data=B_data)``): each part's copy
    renames the allocation, which such a buffer would not follow."""


class CacheStageScopeError(RewriteError):
    """The buffer is declared inside the block scope, by a
    ``T.decl_buffer`` below the scope block's top, where a cache stage,
    which goes in the scope block's body, could not name it."""


class StorageAlignInvalidFactorError(RewriteError):
    """The ``factor`` of storage_align is not positive."""


class StorageAlignAxisOutOfRangeError(RewriteError):
    """The ``axis`` of storage_align is outside ``[-ndim, ndim)``."""


class StorageAlignInvalidAnnotationError(RewriteError):
    """The block's ``buffer_dim_align`` annotation is not a list of
    ``[buffer_index, axis, factor, offset]`` int lists."""


class InvalidAxisSeparatorError(RewriteError):
    """The axis separators are not increasing ints within the buffer's
    dimensions."""


class BufferIsSubregionError(RewriteError):
    """The buffer is a match_buffer view of a region of another buffer."""


class TransformationIntroducesPaddingError(RewriteError):
    """transform_layout's index map does not take the buffer's shape one to
    one onto a box from 0: some elements of the new layout would be padding
    (TVM's error of the same name; TVM then takes a ``pad_value``)."""


class TransformationPaddingTypeError(RewriteError):
    """transform_layout's ``pad_value`` is not of the buffer's element type
    (an ``int8`` constant for an ``int32`` buffer, a Python int for a float
    buffer), as TVM refuses it."""


class TransformationPaddingExpressionError(RewriteError):
    """transform_layout's ``pad_value`` reads a buffer other than the one
    transformed, or does not give one value (TVM's error of the same name)."""


class UnsupportedLayoutError(RewriteError):
    """transform_layout cannot restate the buffer in the new layout: it has
    explicit strides, an offset or axis separators, its pointer is taken,
    or it is accessed as a vector."""


class NotTrivialBindingError(RewriteError):
    """The block's iteration variables are not bound to the loops around it,
    one loop each, in order, each domain from 0 (transform_block_layout
    replaces those loops)."""


class NotBijectiveAffineIndexMapError(RewriteError):
    """The index map is not a bijective affine map of the block's iteration
    domain onto a box from 0 (transform_block_layout needs its inverse)."""


class OpaqueNewIterTypeError(RewriteError):
    """A new iteration variable of transform_block_layout would mix
    data-parallel and reduction variables, so it has no iteration type."""


class SubspaceNotDivisibleError(RewriteError):
    """blockize: a binding of the block does not divide at the loop into a
    part of the loops above it times the extent of a part of the loops from
    it down (TVM's error of the same name)."""


class TensorIntrinMismatchError(RewriteError):
    """tensorize: the block does not compute what the tensor intrinsic's
    description computes (TVM's error of the same name); the message names
    the first part that differs."""


class TensorizeWindowOutOfBoundsError(RewriteError):
    """tensorize: a window of a buffer the intrinsic's implementation would
    view runs past the buffer (a padded block's region reaches outside it,
    its accesses guarded by a condition the implementation does not keep)."""


class BlocksNotSiblingsError(RewriteError):
    """blockize of a list of blocks: the blocks do not each sit, under a
    chain of loops holding nothing else, in one sequence of statements (one
    is under another block, under an ``if``, beside other statements in a
    loop, or in another sequence), so no one new block can hold them."""


class BlocksNotConsecutiveError(RewriteError):
    """blockize of a list of blocks: other statements stand between the
    blocks' loop nests in their sequence, and the new block would move them."""


class OuterBindingMismatchError(RewriteError):
    """blockize of a list of blocks: the blocks disagree on the part of
    their bindings (or predicates) that reads the loops above them, which
    the new block's iteration variables (or predicate) would hold for all."""


class OuterReductionInitError(RewriteError):
    """blockize of a list of blocks: a reduction block with an init reduces
    over the loops above the blocks, and its init would then run again on
    every iteration of them."""


class RollingBufferDependencyError(RewriteError):
    """The block has a dependence other than read-after-write in its scope."""


class RollingBufferInsertionError(RewriteError):
    """The lowest common ancestor of the block and its consumers is not a loop."""


class RollingBufferMatchError(RewriteError):
    """No dimension of the region the block writes per iteration slides with
    a loop as ``loop_var * stride`` with an overlap, or the block's index
    there is not that start plus an offset."""


class RollingBufferCoverError(RewriteError):
    """A consumer reads the buffer outside the region the block writes in
    the same iteration, which the rolling window would not hold."""
# -- reductions, padding, partitioning and region hints ----------------------------

class LoopPositionError(RewriteError):
    """The loop given to ``decompose_reduction`` is not an ancestor of the
    block in the block's scope."""


class NotReductionBlockError(RewriteError):
    """The block is not a reduction block (it has no ``init``, an iteration
    variable that is neither data-parallel nor a reduction, a binding that
    is not affine, or a reduction variable indexing what it writes)."""


class LoopHeightError(RewriteError):
    """A loop above the loop given to ``decompose_reduction`` feeds a
    reduction iteration variable of the block."""


class InitAllocationError(RewriteError):
    """The reduction's init uses a buffer the block itself allocates or
    views with a ``match_buffer``: split off into a block of its own
    (decompose_reduction), or lifted into the new outer block (blockize),
    the init would use it outside that declaration."""


class RepeatedReductionError(RewriteError):
    """A loop that feeds no iteration variable of the reduction block
    repeats the whole reduction, re-initialising it each time, where the
    primitive cannot keep that: for decompose_reduction, such a loop lies
    below a loop that feeds a reduction variable, so no placement of the
    init block keeps the meaning; for blockize, it lies under the loop
    made a block, whose one init would run once for every repetition."""


class InitPlacementError(RewriteError):
    """A block under the loop where ``decompose_reduction`` would place the
    init runs before the reduction block and reads or writes what it
    writes: it would meet the init's values, or overwrite them, where it
    met the buffer's earlier values before."""


class ReductionStartError(RewriteError):
    """The loops start a reduction iteration variable of the block somewhere
    other than the start of its domain (the later parts of a
    ``loop_partition`` continue a reduction), or may run none of its values
    (an extent that may be zero), so the block's ``init`` never runs there
    and a separate init would change the result."""


class NonSingleChildBlockError(RewriteError):
    """The loop does not have exactly one block under it."""


class NotSerialLoopKindError(RewriteError):
    """The loop given to ``rfactor`` is not a serial loop."""


class LoopPropertyError(RewriteError):
    """The loops above the reduction block do not allow ``rfactor``: the
    rfactor loop feeds a data-parallel or no reduction iteration variable,
    a loop feeds both kinds, the block is not the first block under the
    outermost loop, a loop that feeds no iteration variable sits under a
    reduction loop, or the rfactor loop's extent is not defined outside the
    loops."""


class RFactorNotApplicableError(RewriteError):
    """The reduction block's ``init`` and body do not have the form rfactor
    recognises (stores of identities, then stores of combined values, one
    per buffer, at the same indices, through ``LetStmt`` values when there
    are several), or it writes the reduction through a ``match_buffer``
    view."""


class NoMatchedReducerError(RewriteError):
    """The identities and the combiner of the reduction match none of the
    known reducers (sum, product, min, max, the pair sum, argmax and argmin
    forms)."""


class FactorAxisOutOfRangeError(RewriteError):
    """``factor_axis`` is not an int in ``[-(ndim + 1), ndim]`` for the
    buffer the reduction writes."""


class BufTypeError(RewriteError):
    """The buffer type of a region hint is neither ``"read"`` nor ``"write"``."""


class InvalidIndexError(RewriteError):
    """An index given to ``unsafe_hide_buffer_access`` does not index the
    block's read or write regions."""


class InvalidRegionError(RewriteError):
    """The region given to ``annotate_buffer_access`` does not have one
    index or ``(begin, end)`` pair of integer expressions over names defined
    at the block for each dimension of the buffer."""


class PaddingPatternMatchError(RewriteError):
    """The block does not store ``T.if_then_else(cond, value, pad)`` with a
    constant ``pad`` and a condition that is not always true, or an
    in-bound range is empty."""


class SymbolicShapeError(RewriteError):
    """The loop's min or extent is not a constant, which ``loop_partition``
    needs to place its parts."""


class WrongFactorError(RewriteError):
    """The partition factors sum to the loop's extent or more, leaving
    nothing for the inferred or the last part."""


class InvalidPaddingError(RewriteError):
    """The padding of ``pad_einsum`` is not one positive int per iteration
    variable of the block."""


class NonEinsumError(RewriteError):
    """The block is not an einsum: a region that is not one point at
    iteration variables or constants, a buffer accessed twice, an index
    that is not a variable or a constant, or a padded domain that does not
    start at 0."""


class PaddedDivisionError(RewriteError):
    """The padded iterations would divide an integer by zero: the block
    divides (or takes a remainder) by a value of a buffer that is padded
    with zeros, or of a padded variable, which the instances the padding
    adds evaluate too (TVM pads regardless: the generated code traps or
    computes garbage there)."""


# -- caching (cache_read, cache_write, cache_inplace, cache_index, reindex) -------------

class BufferNotAccessedError(RewriteError):
    """The buffer given by name or as a Buffer is not among the block's reads
    (or writes)."""


class NoScopeBlockError(RewriteError):
    """The block has no enclosing block in which the new buffer could be
    allocated (it is the root block, or the function has no root block)."""


class NotSingleWriteBlockError(RewriteError):
    """More than one block of the scope writes the buffer, so there is no
    single producer to cache."""


class NotRegionCoverError(RewriteError):
    """A block of the scope reads elements of the buffer that the blocks
    writing it before it do not (provably) write."""


class ConsumerNotInScopeError(RewriteError):
    """A consumer block given to cache_read or cache_write is not in the
    scope of the cached block."""


class CacheStageOrderError(RewriteError):
    """A block that would read the cache runs before the cache is filled:
    redirecting it would change what it reads."""


class CacheWritePartialError(RewriteError):
    """The block may leave elements of the region a write cache (cache_write,
    reindex of a write) copies back unwritten (a predicate, a conditional
    store, a strided index), which would overwrite them with uninitialised
    cache elements."""


class NotReadWriteError(RewriteError):
    """cache_inplace was given a buffer the block does not both read and write."""


class NotSinglePointAccessError(RewriteError):
    """reindex_cache_read or reindex_cache_write was given a buffer the block
    accesses at more than one element per instance."""


class ReindexCacheReadWriteNotMatchError(RewriteError):
    """An iteration variable appears in the block's indices of the buffer but
    not in the index map's, or the other way round."""


class IndexMapCollisionError(RewriteError):
    """reindex_cache_read: the index map sends two iterations of the block
    that read different elements of the buffer to one element of the cache,
    so the copy of one overwrites the other's (TVM builds it all the same);
    or, where the domain is symbolic or large, the map is not one that
    surely keeps them apart (a bijective affine map of the iteration
    variables)."""


class NotLeafBlockError(RewriteError):
    """The block has blocks inside it, and the primitive needs a leaf block."""


class InvalidBufferAccessError(RewriteError):
    """The buffer is not accessed in the block through loads and stores that
    all use the same indices."""


class ReindexIndexVariableError(RewriteError):
    """An index of the buffer access names the variable of a loop between
    the block and its scope (a loop variable used inside an opaque block):
    the reindexed copy is laid out over the block's iteration variables,
    in the scope, outside that loop. For reindex_cache_read and
    reindex_cache_write: the block's binding names a variable bound between
    the copy's place and the block by a statement the copy does not
    re-create (a ``T.launch_thread`` or a let)."""


class ReindexNotChainError(RewriteError):
    """The block does not sit under a chain of single-child loops directly in
    its scope block, so there is no place for the reindex stage."""


class ReindexReadWrittenError(RewriteError):
    """A reindexed read buffer is also written by the block; those writes
    would go to the copy and be lost."""


class ReindexOutOfBoundsError(RewriteError):
    """The copy made by reindex would read the buffer outside its bounds
    (the block guards the access, or reads only part of the domain)."""


class ReindexUnsafeIndexError(ReindexOutOfBoundsError):
    """The copy made by reindex would evaluate an index that divides by a
    value that may be zero: the block evaluates it only under a guard, the
    copy at every point of the domain."""


class UnsafeRegionError(RewriteError):
    """The loops and bindings compute_at or reverse_compute_at builds from
    the regions of the blocks it computes a block for would divide by a
    value that may be zero: those blocks evaluate the index only under a
    condition, the new loops at every iteration."""


class SharedScopeUnderThreadError(RewriteError):
    """A ``shared`` buffer would be allocated by a block that every thread
    of a thread block runs, or a buffer each thread held as its own copy
    (``local``) would move to a scope the threads share (set_scope, a
    cache) while each thread writes the same elements: the threads would
    share what each uses as its own copy."""


class UnrolledBarrierError(RewriteError):
    """A loop bound to threadIdx holds a barrier; unrolled (as TVM does,
    dropping the binding) its iterations would run in turn, and an access
    after the barrier would come before another iteration's access of the
    same element before it."""


class CacheWriteReadBeforeWriteError(RewriteError):
    """The block reads an element of the buffer before writing it itself, so
    a write cache would be read uninitialised."""


# -- read_at, write_at ---------------------------------------------------------------------

class BlockNotUnderLoopError(RewriteError):
    """read_at or write_at was given a block that is not under the loop: the
    copy is made for what the loop's body reads or writes."""


class ReadWriteAtOrderError(RewriteError):
    """read_at: a statement of the loop's body at or after the first read of
    the buffer writes it, so the copy made before that read would miss the
    write."""


class UndeclaredAccessError(RewriteError):
    """read_at or write_at: the loop's body accesses the buffer where no
    block declares it (outside every block, or only in a block nested in
    one whose regions do not name it), so no declared region says what to
    copy."""


__all__ = [name for name, value in dict(globals()).items()
           if isinstance(value, type) and issubclass(value, RewriteError)] + ["RENDER_LEVELS"]
