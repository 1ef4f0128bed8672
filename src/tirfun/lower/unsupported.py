"""Constructs that parse, print and interpret but that the CPU build refuses,
with a BuildError naming the construct and what to write instead: those
TVM's own build refuses, and a parallel loop that TVM builds into a race."""

from __future__ import annotations

from ..analysis.mentions import names_in
from ..analysis.traversal import stmt_nodes, transform
from ..errors import BuildError
from ..nodes import BlockRealize, Evaluate, For, ForKind, IntImm, IRModule, IterVarType, SeqStmt
from ..nodes.extra_stmt import BufferRealize, Prefetch
from ._util import map_funcs


def drop_prefetch(mod: IRModule) -> IRModule:
    """``mod`` without its ``T.prefetch`` hints, which compute nothing (TVM's
    CPU build has no lowering for them and refuses them; dropping one is
    exact)."""
    return map_funcs(mod, _drop_prefetch_func)


def _drop_prefetch_func(func):
    if not any(isinstance(s, Prefetch) for s in stmt_nodes(func.body)):
        return func

    def post(n):
        if isinstance(n, SeqStmt) and any(isinstance(s, Prefetch) for s in n.seq):
            kept = [s for s in n.seq if not isinstance(s, Prefetch)]
            return SeqStmt(kept) if len(kept) > 1 else kept[0] if kept else _NOTHING
        return _NOTHING if isinstance(n, Prefetch) else n

    return func.with_body(transform(func.body, post))


_NOTHING = Evaluate(IntImm("int32", 0))


def refuse_unbuildable(mod: IRModule) -> IRModule:
    """``mod`` unchanged, or a BuildError for its first unbuildable statement."""
    for name in mod:
        for s in stmt_nodes(mod[name].body):
            if isinstance(s, BufferRealize):
                raise BuildError(
                    f"function {name}: T.realize of buffer {s.buffer.name} (BufferRealize) cannot "
                    "be built for the CPU (llvm); TVM's build does not lower it either. "
                    "Declare the buffer with T.alloc_buffer or T.decl_buffer instead")
    _refuse_racing_parallel(name, mod[name].body)
    return mod


def _refuse_racing_parallel(name: str, body) -> None:
    """A parallel loop bound into a reduction (or opaque) iteration variable
    runs iterations that update the same elements at once. TVM's
    ``parallel`` primitive refuses such a loop; TVMScript that writes
    ``T.parallel`` there builds, in TVM, into a race whose result changes
    from run to run, while the interpreter runs the iterations one after
    another. The build refuses it instead."""
    for loop in stmt_nodes(body):
        if type(loop) is not For or loop.kind is not ForKind.PARALLEL:
            continue
        var = loop.loop_var.name
        for node in stmt_nodes(loop.body):
            if type(node) is not BlockRealize:
                continue
            for iv, value in zip(node.block.iter_vars, node.iter_values):
                if iv.iter_type is IterVarType.DataPar or var not in names_in(value):
                    continue
                kind = "reduction" if iv.iter_type is IterVarType.CommReduce else str(iv.iter_type).lower()
                raise BuildError(
                    f"function {name}: loop {var} is parallel, but block {node.block.name_hint!r} binds it "
                    f"into its {kind} variable {iv.var.name}: its iterations would update the same "
                    "elements at once, and the result would change from run to run (the interpreter "
                    "runs them one after another). Make the loop serial, or give each iteration a "
                    "partial result of its own with rfactor and make the loop over those parallel")


__all__ = ["drop_prefetch", "refuse_unbuildable"]
