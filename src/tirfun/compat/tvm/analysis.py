"""``tvm.tir.analysis``: TVM's analysis functions over tirfun's.

``verify_well_formed`` runs tirfun's verifier (:func:`tirfun.analysis.verify`:
its rules, its messages); ``get_block_access_region`` and
``get_block_read_write_region`` are the region detection TVMScript uses
for blocks without ``T.reads``/``T.writes``; ``estimate_tir_flops`` counts
arithmetic by TVM's rules; ``expr_deep_equal`` is exact
equality; ``undefined_vars`` lists the variables a statement or expression
uses without binding them.
"""

from __future__ import annotations

from ...analysis.access import access_regions, detect_access
from ...analysis.flops import estimate_flops
from ...analysis.verify import verify
from ...errors import VerifyError
from ...lower._util import free_vars
from ...analysis.traversal import walk
from ...nodes import Block, BlockRealize, Buffer, IRModule, PrimFunc


class IllFormedError(VerifyError, ValueError):
    """What :func:`verify_well_formed` raises in ``assert_mode``: the
    verifier's error, a ValueError as TVM's is."""


def verify_well_formed(obj, assert_mode: bool = True) -> bool:
    """Whether a PrimFunc or an IRModule is well formed (True), else False,
    or, with ``assert_mode`` (the default), an :class:`IllFormedError`
    naming the rule broken."""
    if not isinstance(obj, (PrimFunc, IRModule)):
        raise IllFormedError(f"verify_well_formed takes a PrimFunc or an IRModule, got "
                             f"{type(obj).__name__}")
    try:
        verify(obj)
    except VerifyError as err:
        if assert_mode:
            raise IllFormedError(err.message, rule=err.rule, function=err.function, block=err.block,
                                 names=err.names) from None
        return False
    return True


def _block(block) -> Block:
    if isinstance(block, BlockRealize):
        return block.block
    if not isinstance(block, Block):
        raise TypeError(f"expected a Block, got {type(block).__name__}")
    return block


def _visible(block: Block, buffer_var_map) -> list:
    """The buffers a map from data pointers names. A tirfun buffer whose
    pointer nothing uses has none (``data`` is None), so a map keyed by
    ``buf.data`` keeps one of several such buffers: with a None key, the
    buffers the block names count too (those it allocates aside)."""
    buffers = dict(buffer_var_map)
    visible = [b for k, b in buffers.items() if k is not None]
    if None in buffers:
        inner = set(block.alloc_buffers)
        for node in walk(block):
            if isinstance(node, Buffer) and node.data is None and node not in inner:
                visible.append(node)
    return visible


def get_block_access_region(block, buffer_var_map) -> list:
    """``[reads, writes, opaque]``: the regions of the buffers of
    ``buffer_var_map`` (data pointer -> Buffer, the buffers defined outside
    the block) that the block's body reads, writes, and uses through a
    pointer."""
    block = _block(block)
    access = detect_access(block, _visible(block, buffer_var_map))
    reads = list(access.reads)
    if block.init is not None:  # what a reduction reads of its own output is not a read
        written = {r.buffer for r in access.writes}
        reads = [r for r in reads if r.buffer not in written]
    return [reads, list(access.writes), list(access.opaques)]


def get_block_read_write_region(block, buffer_var_map) -> list:
    """``[reads, writes]`` as TVMScript infers them for a block without
    ``T.reads``/``T.writes`` (an opaque use counts as both)."""
    block = _block(block)
    reads, writes = access_regions(block, _visible(block, buffer_var_map))
    return [reads, writes]


def estimate_tir_flops(mod_or_stmt) -> float:
    """The arithmetic operations a module or statement runs, counted by
    TVM's rules (:func:`tirfun.analysis.flops.estimate_flops`)."""
    return estimate_flops(mod_or_stmt)


def expr_deep_equal(lhs, rhs) -> bool:
    """Whether two expressions are the same tree (variables by identity)."""
    return lhs == rhs


def undefined_vars(node, defs=None) -> list:
    """The variables ``node`` uses without binding them, in order of first
    use, less those of ``defs``."""
    known = set(defs or ())
    return [v for v in free_vars(node) if v not in known]


__all__ = [
    "IllFormedError", "verify_well_formed", "get_block_access_region", "get_block_read_write_region",
    "estimate_tir_flops", "expr_deep_equal", "undefined_vars",
]
