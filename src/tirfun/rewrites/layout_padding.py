"""How transform_layout writes a padded layout's pad value, as TVM does.

A map that pads (``i -> (i // 4, i % 4)`` over 14 elements) leaves
elements of the new layout that no element of the old one lands on. With a
``pad_value`` (a function of the new indices, or a constant), TVM promises
that they hold it, in one of three ways, in this order of preference:

1. the buffer is only read in its scope (an input): the caller provides
   the padding, and a block ``buffer_<name>_assumption`` states it with
   ``T.assume`` at the top of the scope;
2. a producer writes every element in row-major order (one serial loop
   from 0 per dimension, each index the loop's variable): its loops are
   replaced by loops over the new layout, and its store writes
   ``T.if_then_else(padding, pad_value, value)``;
3. otherwise a block ``<block>_pad_<name>`` after the last producer writes
   the pad value where the index is padding.

tirfun replaces a producer's loops only where that keeps the meaning: its
loops hold nothing but the stores to the buffer (no other buffer written,
no predicate or condition that would skip padding, every load of another
buffer inside a store's guarded value), and a store reads the buffer only
at the element it writes (the new loops may visit the elements in another
order, where TVM would read an element not yet written); elsewhere, and
for a pad value that reads the buffer, it writes the padding after the
producer.
"""

from __future__ import annotations

import attrs

from ..analysis.arith.iter_map import simplify_index
from ..analysis.traversal import get_at, replace_at, stmt_children, walk
from ..nodes import (
    GE, Block, BlockRealize, Cast, BufferLoad, BufferRegion, BufferStore, Call, Evaluate, For, IntImm, IterVar,
    IterVarType, Not, Or, PrimExpr, Range, SeqStmt, Var,
)
from ..nodes.base import with_fields
from .exprs import cast as _cast, substitute, substitute_expr, uses_any, var_names

_TRUE = IntImm("bool", 1)


@attrs.frozen
class Padding:
    """What writing the padding needs: the pad value as ``(params,
    expr)`` of the new indices, the map's ``params``, its inverse over the
    padded domain and the old extents (beyond which an index is padding,
    constants or expressions)."""

    value: tuple
    params: tuple
    #: the new indices (a sequence of variables) -> each old index plus its
    #: shift, as an expression of them
    shifted_inverse: object
    extents: tuple
    #: the constant each old index is read shifted by (``(i + 1) // 8``)
    shifts: tuple = ()

    def _shifted(self, new_vars) -> dict:
        """Each old index plus its shift, as an expression of the new ones."""
        return self.shifted_inverse(tuple(new_vars))

    def inverse(self, new_vars) -> dict:
        """Each old index as an expression of the new ones."""
        out = self._shifted(new_vars)
        for p, c in zip(self.params, self.shifts):
            if c:
                out[p] = simplify_index(out[p] - IntImm(out[p].dtype, c))
        return out

    def predicate(self, new_vars, shape) -> PrimExpr:
        """Whether the element at ``new_vars`` (over ``shape``) is padding:
        its old index, by the inverse, lies past the old shape."""
        from ..analysis.arith.terms import int_value

        shifted = self._shifted(new_vars)
        spans = {v: int_value(d) for v, d in zip(new_vars, shape)}
        out = None
        for p, ext, shift in zip(self.params, self.extents, self.shifts or [0] * len(self.params)):
            # compared in the new indices' type (the map's variables may be
            # narrower than the buffer's dimensions)
            e = shifted[p].value if isinstance(shifted[p], Cast) else shifted[p]
            terms = [_at_least(e, ext + shift if shift else ext, spans)]
            if shift:  # before the domain: not (e >= shift)
                terms.append(Not(_at_least(e, shift, spans)))
            for c in terms:
                if isinstance(c, IntImm) and c.value == 0:
                    continue  # never padding on this side
                out = c if out is None else Or(out, c)
        return IntImm("bool", 0) if out is None else out

    def at(self, indices) -> PrimExpr:
        """The pad value at ``indices`` of the new layout."""
        params, expr = self.value
        return substitute_expr(expr, {p: _cast(i, p.dtype) for p, i in zip(params, indices)})


def _at_least(e: PrimExpr, bound, spans: dict) -> PrimExpr:
    """``e >= bound``, digit by digit where it can (TVM's form)."""
    if not isinstance(bound, int):
        return GE(e, _cast(bound, e.dtype))  # a symbolic extent
    c = _lexicographic_ge(e, bound, spans)
    return GE(e, IntImm(e.dtype, bound)) if c is None else c


def _lexicographic_ge(e: PrimExpr, bound: int, spans: dict) -> PrimExpr | None:
    """``e >= bound`` digit by digit where ``e`` is a mixed radix of new
    indices (``v0 * 4 + v1``, ``v1`` in [0, 4)), as TVM's simplifier
    writes it (``v0 == 3 and 2 <= v1``); None when ``e`` is not such a sum.
    ``spans`` gives each new index's constant extent."""
    from ..analysis.arith.terms import int_value
    from ..nodes import EQ, GT, LE, Add, And, Mul

    digits = []
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, Add):
            stack += [n.a, n.b]
        elif isinstance(n, Mul) and isinstance(n.a, Var) and int_value(n.b) is not None:
            digits.append((int_value(n.b), n.a))
        elif isinstance(n, Var):
            digits.append((1, n))
        else:
            return None
    digits.sort(key=lambda d: -d[0])
    if not digits or digits[-1][0] != 1 or any(spans.get(v) is None for _, v in digits):
        return None
    # each digit below the top runs over exactly its radix
    for (hi, _), (lo, v) in zip(digits, digits[1:]):
        if hi % lo or spans[v] != hi // lo:
            return None
    conds, rest = [], bound
    for scale, v in digits:
        d, rest = divmod(rest, scale)
        conds.append((v, d))
    # (v0..vn) >= (d0..dn) lexicographically: v0 > d0 or (v0 == d0 and
    # (...)), without the terms the extents settle (True/False as Python
    # booleans until the end)
    out = True
    for k, (v, d) in reversed(list(enumerate(conds))):
        c = IntImm(v.dtype, d)
        if k == len(conds) - 1:
            out = True if d <= 0 else False if d >= spans[v] else LE(c, v)
            continue
        if d >= spans[v]:
            return IntImm("bool", 0)
        greater = False if d >= spans[v] - 1 else GT(v, c)
        same = EQ(v, c) if out is True else False if out is False else And(EQ(v, c), out)
        if greater is False:
            out = same
        elif same is False:
            out = greater
        elif out is True:
            out = LE(c, v)
        else:
            out = Or(greater, same)
    return IntImm("bool", int(out)) if isinstance(out, bool) else out


@attrs.frozen
class _Write:
    """One store to the buffer: its path (under the scope), the loops
    around it ((path, For), outermost first), the innermost block realize
    around it ((path, BlockRealize) or None), and the variables bound
    between (block and let variables -> their values in loop variables)."""

    store: BufferStore
    path: tuple
    loops: tuple
    realize: object
    bindings: dict
    depth: dict


def collect_writes(root, buffer) -> list[_Write]:
    """Every store to ``buffer`` under ``root``, in program order."""
    from ..nodes import LetStmt

    out: list[_Write] = []

    def depth_of(e, depth):
        found = [depth[n] for n in var_names(e) if n in depth]
        if not found:
            return None
        return (min(f[0] for f in found), max(f[1] for f in found))

    def visit(node, path, loops, realize, bindings, depth):
        if isinstance(node, BufferStore):
            if node.buffer == buffer:
                out.append(_Write(node, path, loops, realize, bindings, depth))
            return
        if isinstance(node, For):
            depth = {**depth, node.loop_var.name: (len(loops), len(loops))}
            loops = loops + ((path, node),)
        elif isinstance(node, LetStmt):
            d = depth_of(node.value, depth)
            if d is not None:
                depth = {**depth, node.var.name: d}
                bindings = {**bindings, node.var: substitute_expr(node.value, bindings)}
        elif isinstance(node, BlockRealize):
            depth, bindings = dict(depth), dict(bindings)
            for iv, value in zip(node.block.iter_vars, node.iter_values):
                d = depth_of(value, depth)
                if d is not None:
                    depth[iv.var.name] = d
                    bindings[iv.var] = substitute_expr(value, bindings)
            realize = (path, node)
        for step, child in stmt_children(node):
            visit(child, path + (step,), loops, realize, bindings, depth)

    visit(root, (), (), None, {}, {})
    return out


def _dependent_loops(write: _Write) -> tuple:
    """The loops from the outermost to the innermost one the store's
    indices depend on (TVM's dependent loop nest)."""
    ranges = [write.depth[n] for i in write.store.indices for n in var_names(i) if n in write.depth]
    if not ranges:
        return ()
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    return write.loops[lo:hi + 1]


def _row_major(write: _Write, buffer) -> bool:
    """Whether the store's loops visit every element in row-major order:
    one serial loop from 0 over each dimension, the index its variable."""
    from ..analysis.arith.terms import int_value

    loops = _dependent_loops(write)
    if not loops or len(loops) != len(buffer.shape) or len(write.store.indices) != len(loops):
        return False
    for (_, loop), dim, index in zip(loops, buffer.shape, write.store.indices):
        index = substitute_expr(index, write.bindings)
        same = int_value(loop.extent) == int_value(dim) if int_value(dim) is not None else loop.extent == dim
        if not (index == loop.loop_var and int_value(loop.min) == 0 and same and loop.kind == "serial"):
            return False
    return True


def _guarded_only(body, write: _Write, buffer) -> bool:
    """Whether replacing the loops around ``body`` keeps the meaning: it
    holds only loops, blocks without predicates and stores to the buffer at
    the written index (TVM's condition), and every load of another buffer
    lies in a store's value, which the padding guard skips."""
    from ..analysis.arith.simplify import is_true

    point = list(write.store.indices)
    for node in _stmts(body):
        if isinstance(node, BufferStore):
            if node.buffer != buffer or list(node.indices) != point or node.predicate is not None:
                return False
            # the new loops may visit the elements in another order: the
            # value may read the buffer only at the element it writes
            if any(isinstance(n, BufferLoad) and n.buffer == buffer and list(n.indices) != point
                   for n in walk(node.value)):
                return False
        elif isinstance(node, BlockRealize):
            if not is_true(node.predicate) or node.block.match_buffers or \
                    any(_loads_other(v, buffer) for v in node.iter_values):
                return False
        elif isinstance(node, For):
            if _loads_other(node.min, buffer) or _loads_other(node.extent, buffer):
                return False
        elif not isinstance(node, (SeqStmt, Block)):
            return False
    return True


def _stmts(root):
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(child for _, child in stmt_children(n))


def _loads_other(e, buffer) -> bool:
    return any(isinstance(n, BufferLoad) and n.buffer != buffer for n in walk(e))


def _new_loops(new, fresh, body, loop_vars):
    for lv, d in reversed(list(zip(loop_vars, new.shape))):
        body = For(lv, IntImm(lv.dtype, 0), d, "serial", body)
    return body


def replacement(root, write: _Write, old, new, padding: Padding, fresh):
    """``root`` with the loops of a row-major producer replaced by loops
    over the new layout, its stores guarded by the padding test; None where
    that would change the meaning."""
    loops = _dependent_loops(write)
    outer_path, inner = loops[0][0], loops[-1][1]
    # the loops are replaced whole: each must hold only the next one
    nested = all(b[0] == a[0] + (("body", None),) for a, b in zip(loops, loops[1:]))
    if not nested or not _guarded_only(inner.body, write, old):
        return None
    loop_vars = [Var(fresh(f"axis{k}"), d.dtype) for k, d in enumerate(new.shape)]
    inverse = padding.inverse(loop_vars)
    remap = {loop.loop_var: _cast(inverse[p], loop.loop_var.dtype) for (_, loop), p in zip(loops, padding.params)}
    indices, pred = list(loop_vars), padding.predicate(loop_vars, new.shape)
    body = inner.body
    realize_rel = None
    inner_body = loops[-1][0] + (("body", None),)
    if write.realize is not None and write.realize[0][:len(inner_body)] == inner_body:
        realize_rel = write.realize[0][len(inner_body):]
    old_indices = list(write.store.indices)
    if realize_rel is not None:
        realize = get_at(body, realize_rel)
        block = realize.block
        ivs = list(block.iter_vars)
        places = _own_variables(old_indices, ivs)
        if places is not None:
            # the store's indices are the block's own data-parallel
            # variables (in any order): the block takes new variables over
            # the new layout in their place, where the first of them stood
            start, taken = min(places), set(places)
            block_vars = [Var(fresh(f"v_{lv.name}"), lv.dtype) for lv in loop_vars]
            new_vars = [IterVar(Range(IntImm(d.dtype, 0), d), v, IterVarType.DataPar)
                        for v, d in zip(block_vars, new.shape)]
            new_ivs, values = [], []
            for k, (iv, value) in enumerate(zip(ivs, realize.iter_values)):
                if k == start:
                    new_ivs.extend(new_vars)
                    values.extend(loop_vars)
                if k not in taken:
                    new_ivs.append(iv)
                    values.append(value)
            block_inverse = padding.inverse(block_vars)
            inner_map = {ivs[k].var: _cast(block_inverse[p], ivs[k].var.dtype)
                         for k, p in zip(places, padding.params)}
            block = with_fields(block, iter_vars=new_ivs)
            body = replace_at(body, realize_rel, BlockRealize(values, realize.predicate, block))
            remap.update(inner_map)
            indices, pred = list(block_vars), padding.predicate(block_vars, new.shape)
        elif any(uses_any(v, {loop.loop_var.name for _, loop in loops}) is not None
                 for v in realize.iter_values):
            # the block's variables are bound to the loops being replaced,
            # but the store is not at those variables: over the padded
            # layout a binding would leave its domain
            return None
    value_at = padding.at(indices)
    body = _guard(body, old, new, old_indices, indices, pred, value_at, remap)
    return replace_at(root, outer_path, _new_loops(new, fresh, body, loop_vars))


def _own_variables(indices, ivs) -> list[int] | None:
    """The positions among the block's iteration variables ``ivs`` of the
    store's ``indices`` when each is a distinct data-parallel one of them;
    None otherwise."""
    where = {iv.var: k for k, iv in enumerate(ivs) if iv.iter_type is IterVarType.DataPar}
    places = [where.get(i) if type(i) is Var else None for i in indices]
    if not places or None in places or len(set(places)) != len(places):
        return None
    return places


def _guard(body, old, new, old_indices, indices, pred, pad, remap):
    """``body`` with the store's point of the old buffer read and written
    at ``indices`` of the new one, each store guarded, and the variables of
    ``remap`` replaced by their values."""
    from ..analysis.traversal import transform

    point = [Range(i, IntImm(i.dtype, 1)) for i in indices]

    def pre(n):
        if isinstance(n, BufferLoad) and n.buffer == old and list(n.indices) == old_indices:
            return BufferLoad(new, indices)
        if isinstance(n, BufferRegion) and n.buffer == old and [r.min for r in n.region] == old_indices \
                and all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in n.region):
            return BufferRegion(new, point)
        if isinstance(n, BufferStore) and n.buffer == old and list(n.indices) == old_indices:
            value = _guard(n.value, old, new, old_indices, indices, pred, pad, remap)
            guarded = Call(old.dtype, "tir.if_then_else", [pred, pad, value])
            return BufferStore(new, guarded, indices)
        return None

    return substitute(transform(body, lambda n: n, pre), remap)


def epilogue(root, write: _Write, new, padding: Padding, fresh, block_name: str):
    """``root`` with a nest writing the pad value where the new layout is
    padding inserted after the last producer's loops."""
    loops = _dependent_loops(write)
    if loops:
        after = loops[0][0]
    elif write.realize is not None:
        after = write.realize[0]
    else:
        after = write.path
    loop_vars = [Var(fresh(f"ax{k}"), d.dtype) for k, d in enumerate(new.shape)]
    block_vars = [Var(fresh(f"v{k}"), d.dtype) for k, d in enumerate(new.shape)]
    point = [Range(v, IntImm(v.dtype, 1)) for v in block_vars]
    value = padding.at(block_vars)
    # the elements the pad value reads (of the buffer, in its old layout,
    # which the caller then maps)
    reads = [BufferRegion(n.buffer, [Range(i, IntImm(i.dtype, 1)) for i in n.indices])
             for n in walk(value) if isinstance(n, BufferLoad)]
    block = Block([IterVar(Range(IntImm(d.dtype, 0), d), v, IterVarType.DataPar)
                   for v, d in zip(block_vars, new.shape)],
                  reads, [BufferRegion(new, point)], block_name, BufferStore(new, value, block_vars))
    stage = _new_loops(new, fresh, BlockRealize(loop_vars, padding.predicate(loop_vars, new.shape), block), loop_vars)
    return _insert_after(root, after, stage)


def prologue(root_body, new, padding: Padding, fresh, block_name: str):
    """A nest stating with ``T.assume`` that the padding of an input holds
    the pad value, followed by ``root_body``."""
    from ..nodes import EQ, Not

    loop_vars = [Var(fresh(f"axis{k}"), d.dtype) for k, d in enumerate(new.shape)]
    block_vars = [Var(fresh(f"v_axis{k}"), d.dtype) for k, d in enumerate(new.shape)]
    point = [Range(v, IntImm(v.dtype, 1)) for v in block_vars]
    holds = Or(Not(padding.predicate(block_vars, new.shape)), EQ(BufferLoad(new, block_vars), padding.at(block_vars)))
    block = Block([IterVar(Range(IntImm(d.dtype, 0), d), v, IterVarType.DataPar)
                   for v, d in zip(block_vars, new.shape)],
                  [BufferRegion(new, point)], [], block_name, Evaluate(Call("bool", "tir.assume", [holds])))
    stage = _new_loops(new, fresh, BlockRealize(loop_vars, _TRUE, block), loop_vars)
    items = list(root_body.seq) if isinstance(root_body, SeqStmt) else [root_body]
    return SeqStmt([stage] + items)


def _insert_after(root, path, stmt):
    """``root`` with ``stmt`` right after the statement at ``path``."""
    if path and path[-1][0] == "seq":
        parent = get_at(root, path[:-1])
        k = path[-1][1]
        return replace_at(root, path[:-1], parent.with_items(k + 1, k + 1, [stmt]))
    return replace_at(root, path, SeqStmt([get_at(root, path), stmt]))


def write_padding(scope, old, new, padding: Padding, fresh, fresh_block):
    """``scope`` (the block that allocates the buffer, or the function's
    root) with the pad value written or assumed, as TVM does (see the
    module docstring). The accesses to ``old`` elsewhere are left for the
    caller to map."""
    writes = collect_writes(scope, old)
    if not writes:
        name = fresh_block(f"buffer_{new.name}_assumption")
        if isinstance(scope, Block):
            return with_fields(scope, body=prologue(scope.body, new, padding, fresh, name))
        return prologue(scope, new, padding, fresh, name)
    out, done = scope, []
    # a pad value that reads the buffer is written after every producer:
    # within a producer's loops it could read an element not yet written
    reads_itself = any(isinstance(n, BufferLoad) and n.buffer == old for n in walk(padding.value[1]))
    for write in ([] if reads_itself else writes):
        if not _row_major(write, old):
            continue
        outer = _dependent_loops(write)[0][0]
        if any(outer[:len(p)] == p for p in done):
            continue  # under loops already replaced
        replaced = replacement(out, write, old, new, padding, fresh)
        if replaced is not None:
            out = replaced
            done.append(outer)
    if done:
        return out
    return epilogue(scope, writes[-1], new, padding, fresh, fresh_block(f"buffer_{new.name}_padding"))
