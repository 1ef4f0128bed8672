"""What a PrimFunc contains, as a set of feature names.

Read from the tree alone, so a test can tell what a strategy really produced
(and report it with ``hypothesis.event``)::

    >>> from tirfun.testing.features import program_features
    >>> "reduction" in program_features(func)        # doctest: +SKIP
    True

Names: ``blocks:N`` (N = 1, 2, 3+), ``chain`` (a block reads a buffer an
earlier block wrote), ``chain:alloc`` (through a root ``alloc_buffer``),
``reduction``, ``init``, ``where``, ``alloc_buffer``, ``symbolic``,
``index:int64``, ``loop:<kind>``, ``thread:<tag>``, ``loop_min``,
``loop_annotations``, ``block_annotations``, ``inner_loop``, ``range_region``
(a read or write region wider than one element), ``zero_dim``,
``let_stmt``, ``if_stmt``, ``seq_stmt``, ``binding:split``,
``binding:fuse``, ``binding:fuse_mixed`` (one fused loop binding a spatial
and a reduction axis), ``binding:const``, ``noalias`` (``tir.noalias``),
``expr:<Node>`` for every expression
node class, ``call:<op>`` for every intrinsic, ``dtype:<dtype>`` for every
buffer element dtype, ``private`` for a function without a global symbol,
``if_only`` (an ``if`` without ``else``), ``bool_compare`` (``==`` or ``!=``
between conditions), ``literal_pair`` (an operator between two literals),
``special_value`` (an infinity, a NaN, ``-0.0`` or a denormal as a literal),
``shape_expr`` (a buffer extent such as ``n + 2``),
``symbol_in_body`` (a symbolic parameter used as a value inside a block),
``scope:<scope>`` for an allocated buffer outside global memory and
``buffer_fields`` for a parameter buffer with non-default strides, offset,
alignment or offset factor.
"""

from __future__ import annotations

import math

from ..analysis.traversal import walk
from ..nodes import (
    EQ, NE, BinaryOp, Block, BlockRealize, BufferLoad, BufferStore, Call, CmpOp, FloatImm,
    FloorDiv, FloorMod, For, IfThenElse, IntImm, IterVarType, LetStmt, LogicOp, PrimExpr,
    PrimFunc, SeqStmt, Var,
)


def program_features(func: PrimFunc) -> frozenset[str]:
    """The feature names (see the module docstring) present in ``func``."""
    out: set[str] = set()
    blocks = []
    for node in walk(func.body):
        if isinstance(node, PrimExpr):
            out.add(f"expr:{type(node).__name__}")
            if isinstance(node, Call):
                out.add(f"call:{node.op.removeprefix('tir.')}" if isinstance(node.op, str) else "call:subroutine")
            _expr_features(node, out)
        elif isinstance(node, For):
            out.add(f"loop:{node.kind.value}")
            if node.thread_binding:
                out.add(f"thread:{node.thread_binding}")
            if not (isinstance(node.min, IntImm) and node.min.value == 0):
                out.add("loop_min")
            if node.annotations:
                out.add("loop_annotations")
            if node.loop_var.dtype == "int64":
                out.add("index:int64")
        elif isinstance(node, BlockRealize):
            _realize_features(node, out)
            if node.block.name_hint != "root":
                blocks.append(node.block)
        elif isinstance(node, LetStmt):
            out.add("let_stmt")
        elif isinstance(node, IfThenElse):
            out.add("if_stmt" if node.else_case is not None else "if_only")
        elif isinstance(node, SeqStmt):
            out.add("seq_stmt")
    out.add(f"blocks:{min(len(blocks), 3)}" + ("+" if len(blocks) >= 3 else ""))
    for block in blocks:
        _block_features(block, out)
    out |= _chain_features(func, blocks)
    symbols = {p for p in func.params if p not in func.buffer_map}
    for block in blocks:
        if any(isinstance(n, Var) and n in symbols for n in walk(block.body)):
            out.add("symbol_in_body")
    for buffer in func.buffer_map.values():
        out.add(f"dtype:{buffer.dtype}")
        if (buffer.strides or buffer.elem_offset is not None or buffer.data_alignment != 64
                or buffer.offset_factor != 0):
            out.add("buffer_fields")
    for node in walk(func):
        if hasattr(node, "shape") and hasattr(node, "storage_scope"):
            if any(not isinstance(d, (IntImm, Var)) for d in node.shape):
                out.add("shape_expr")
    for param in func.params:
        if param not in func.buffer_map and param.dtype.is_integer:
            out.add("symbolic")
    if "global_symbol" not in func.attrs:
        out.add("private")
    if func.attrs.get("tir.noalias"):
        out.add("noalias")
    return frozenset(out)


def _realize_features(realize: BlockRealize, out: set) -> None:
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        out.add("where")
    kinds_of_loop: dict = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if isinstance(value, (FloorDiv, FloorMod)) and isinstance(value.a, Var):
            kinds_of_loop.setdefault(value.a, set()).add(iv.iter_type)
    if any(len(kinds) > 1 for kinds in kinds_of_loop.values()):
        out.add("binding:fuse_mixed")
    for value in realize.iter_values:
        if isinstance(value, IntImm):
            out.add("binding:const")
        elif isinstance(value, (FloorDiv, FloorMod)):
            out.add("binding:fuse")
        elif any(isinstance(n, Var) for n in walk(value)) and not isinstance(value, Var):
            names = {n.name for n in walk(value) if isinstance(n, Var)}
            if len(names) >= 2:
                out.add("binding:split")
    block = realize.block
    if block.alloc_buffers:
        out.add("alloc_buffer")
        for buffer in block.alloc_buffers:
            out.add(f"dtype:{buffer.dtype}")
            if buffer.storage_scope != "global":
                out.add(f"scope:{buffer.storage_scope}")


def _expr_features(node: PrimExpr, out: set) -> None:
    if isinstance(node, (BinaryOp, CmpOp, LogicOp)):
        if isinstance(node.a, (IntImm, FloatImm)) and isinstance(node.b, (IntImm, FloatImm)):
            out.add("literal_pair")
        if isinstance(node, (EQ, NE)) and node.a.dtype.is_bool:
            out.add("bool_compare")
    if isinstance(node, FloatImm):
        v = node.value
        if (math.isinf(v) or math.isnan(v) or (v == 0 and math.copysign(1.0, v) < 0)
                or (v != 0 and abs(v) < 1e-38)):
            out.add("special_value")


def _block_features(block: Block, out: set) -> None:
    if any(iv.iter_type is IterVarType.CommReduce for iv in block.iter_vars):
        out.add("reduction")
    if block.init is not None:
        out.add("init")
    if block.annotations:
        out.add("block_annotations")
    if any(isinstance(n, For) for n in walk(block.body)):
        out.add("inner_loop")
    for region in list(block.reads) + list(block.writes):
        if not region.region:
            out.add("zero_dim")
        if any(not (isinstance(r.extent, IntImm) and r.extent.value == 1) for r in region.region):
            out.add("range_region")


def _chain_features(func: PrimFunc, blocks) -> set:
    out = set()
    allocated = {b.name for realize in walk(func.body) if isinstance(realize, Block)
                 for b in realize.alloc_buffers}
    written: set[str] = set()
    for block in blocks:
        stored = {n.buffer.name for n in walk(block.body) if isinstance(n, BufferStore)}
        loaded = {n.buffer.name for n in walk(block.body) if isinstance(n, BufferLoad)}
        for name in (loaded & written) - stored:
            out.add("chain")
            if name in allocated:
                out.add("chain:alloc")
        written |= stored
    return out


__all__ = ["program_features"]
