"""Checks shared by the primitives: resolving references, and the loop and
block properties several primitives require.

Resolution uses the function's cached name index, so finding a loop costs
a dictionary look-up and reading the nodes along its path, whatever the
size of the function.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..analysis.traversal import Path, ancestors, get_at, nodes_along, stmt_children
from ..nodes import (
    AttrStmt, Block, BlockRealize, BufferStore, For, IntImm, IRModule, IterVar, IterVarType, LetStmt, Node,
    PrimExpr, Stmt,
)
from ..analysis.arith.iter_map import distinct_index_vars, is_affine_binding, simplify_index
from ..analysis.mentions import mentions_any
from .base import Checks, Site
from .errors import (
    ForeignRefError, LoopHasAnnotationOrThreadBindingError, LoopNotStartWithZeroError,
    NotSingleBlockError, RefKindError, UnknownBlockError, UnknownFunctionError, UnknownLoopError,
)
from .exprs import uses_any
from .index import index_of
from .refs import BlockRef, LoopRef


# -- functions ---------------------------------------------------------------------

def default_function(mod: IRModule) -> str | None:
    """The function a reference without one means: ``main``, or the only one."""
    if "main" in mod.functions:
        return "main"
    if len(mod.functions) == 1:
        return next(iter(mod.functions))
    return None


def describe(ref) -> str:
    """``loop 'i'`` / ``block 'B'`` / the argument's repr."""
    if isinstance(ref, LoopRef):
        return f"loop {ref.name!r}"
    if isinstance(ref, BlockRef):
        return f"block {ref.name!r}"
    return f"argument {ref!r}"


def resolve_site(chk: Checks, mod: IRModule, refs: Iterable) -> Site:
    """The function the references point into (all must agree)."""
    if type(refs) is list:
        # the common case: the references name one function, or none (then
        # the default one, here "main": a module without it takes the
        # general path below)
        name = "main"
        given = False
        for ref in refs:
            func = getattr(ref, "func", None)
            if func is not None:
                if not given:
                    name, given = func, True
                elif func != name:
                    name = None  # several functions: the general path says so
                    break
        if type(name) is str:
            func = mod.functions.get(name)
            if func is not None:
                return Site(mod, name, func, index_of(func))
    elif all(getattr(ref, "func", None) is None for ref in refs):
        # no reference names a function (the common case of several): the
        # default one, ``main`` where the module has it
        func = mod.functions.get("main")
        if func is not None:
            return Site(mod, "main", func, index_of(func))
    named = []
    for ref in refs:
        func = getattr(ref, "func", None)
        if func is not None and func not in named:
            named.append(func)
    if len(named) > 1:
        chk.stop(ForeignRefError, "arguments",
                 f"the references point into different functions ({', '.join(map(repr, named))}); "
                 "one primitive works inside one function")
    if named:
        name = named[0]
        if not isinstance(name, str) or name not in mod.functions:
            have = ", ".join(sorted(mod.functions)) or "none"
            chk.stop(UnknownFunctionError, f"function {name!r}",
                     f"the module has no such function (it has: {have})")
    else:
        name = default_function(mod)
        if name is None:
            have = ", ".join(sorted(mod.functions)) or "none"
            chk.stop(UnknownFunctionError, "arguments",
                     f"the module has several functions and none is 'main' (it has: {have}); "
                     "name the function in the reference")
    func = mod.functions[name]
    return Site(mod, name, func, index_of(func))


def resolve_loop(chk: Checks, site: Site, ref) -> Path:
    """The path of the loop ``ref`` names (stops on failure)."""
    if not isinstance(ref, LoopRef):
        what = "a block" if isinstance(ref, BlockRef) else f"a {type(ref).__name__}"
        chk.stop(RefKindError, describe(ref), f"expected a loop (a LoopRef or a loop name), got {what}")
    name = ref.name
    path = site.index.loops.get(name) if isinstance(name, str) else None
    if path is None:
        chk.stop(UnknownLoopError, describe(ref),
                 f"function {site.func_name!r} has no loop with that loop variable")
    if name in site.index.clashes:
        chk.stop(UnknownLoopError, describe(ref),
                 f"function {site.func_name!r} binds that loop variable more than once")
    if _INIT_STEP in path:
        _check_outside_init(chk, site, ref, path, UnknownLoopError, "loop")
    return path


#: the step from a Block into its init (a statement field, no index)
_INIT_STEP = ("init", None)


def _check_outside_init(chk: Checks, site: Site, ref, path: Path, error: type, what: str) -> None:
    """A loop or block inside a block's init is not a schedule's to change:
    TVM's schedule does not see it (its tree of statements leaves inits
    out), and a primitive there would have to keep the init's contract
    (run once, before the first update) that nothing checks."""
    for k, step in enumerate(path):
        if step[0] == "init":
            owner = get_at(site.func, path[:k])
            chk.stop(error, describe(ref),
                     f"the {what} lies in the init of block {owner.name_hint!r}, which the schedule does not "
                     "reach into (as in TVM)")


def resolve_block(chk: Checks, site: Site, ref) -> Path:
    """The path of the block ``ref`` names (stops on failure)."""
    if not isinstance(ref, BlockRef):
        what = "a loop" if isinstance(ref, LoopRef) else f"a {type(ref).__name__}"
        chk.stop(RefKindError, describe(ref), f"expected a block (a BlockRef or a block name), got {what}")
    name = ref.name
    path = site.index.blocks.get(name) if isinstance(name, str) else None
    if path is None:
        chk.stop(UnknownBlockError, describe(ref), f"function {site.func_name!r} has no block with that name")
    if name in site.index.clashes:
        chk.stop(NotSingleBlockError, describe(ref),
                 f"function {site.func_name!r} has several blocks with that name")
    if _INIT_STEP in path:
        _check_outside_init(chk, site, ref, path, UnknownBlockError, "block")
    return path


def resolve_block_or_loop(chk: Checks, site: Site, ref) -> Path:
    """The path of the block or loop ``ref`` names."""
    if isinstance(ref, LoopRef):
        return resolve_loop(chk, site, ref)
    if isinstance(ref, BlockRef):
        return resolve_block(chk, site, ref)
    chk.stop(RefKindError, describe(ref),
             f"expected a block or a loop reference, got a {type(ref).__name__}")


# -- structure ---------------------------------------------------------------------

def scope_path(site: Site, path: Path) -> Path | None:
    """The path of the nearest Block strictly above ``path`` (None: the
    function itself is the scope, it has no root block)."""
    found = None
    node = site.func
    for i, (name, index) in enumerate(path):  # the nodes above ``path``; only the scope's path is sliced
        if isinstance(node, Block):
            found = i
        node = getattr(node, name) if index is None else getattr(node, name)[index]
    return None if found is None else path[:found]


def statements_above(site: Site, path: Path) -> list[tuple[Path, Stmt]]:
    """The statements strictly above ``path`` up to its nearest enclosing
    block (loops, conditions, lets, ...), outermost first."""
    out: list = []
    for p, node in ancestors(site.func, path):
        if isinstance(node, Block):
            out = []
        elif isinstance(node, Stmt) and not isinstance(node, BlockRealize):
            out.append((p, node))
    return out


def loops_above(site: Site, path: Path) -> list[tuple[Path, For]]:
    """The loops strictly above ``path`` up to its nearest enclosing block,
    outermost first (TVM's ``get_loops``). The loops of
    :func:`statements_above`, written out: nearly every primitive asks."""
    return loops_and_parent(site, path)[0]


def loops_and_parent(site: Site, path: Path) -> tuple[list[tuple[Path, For]], Node]:
    """:func:`loops_above` and the node one step above ``path`` (a block's
    BlockRealize), from one walk down the path: a primitive on a block
    asks both. Only the loops' paths are sliced off ``path``."""
    out: list[tuple[Path, For]] = []
    node = parent = site.func
    for i, (name, index) in enumerate(path):
        if isinstance(node, Block):
            out = []
        elif isinstance(node, For):
            out.append((path[:i], node))
        parent = node
        node = getattr(node, name) if index is None else getattr(node, name)[index]
    return out, parent


def names_bound_between(func, top: Path | None, path: Path) -> set[str]:
    """The names of the variables bound by the statements strictly below
    ``top`` (None: the function's body) and strictly above ``path``: loops,
    lets, launched threads. Empty where ``top`` is not above ``path``."""
    top = top or ()
    if path[:len(top)] != top:
        return set()
    out = set()
    for node in nodes_along(func, path)[len(top) + 1:-1]:
        if isinstance(node, For):
            out.add(node.loop_var.name)
        elif isinstance(node, LetStmt):
            out.add(node.var.name)
        elif isinstance(node, AttrStmt) and isinstance(node.node, IterVar):
            out.add(node.node.var.name)
    return out


def child_blocks(stmt: Stmt, path: Path) -> Iterator[tuple[Path, BlockRealize]]:
    """The BlockRealizes under ``stmt`` that are not inside another block,
    in program order, with their paths (TVM's child blocks on the sref tree).
    For a Block, its body is searched (not its init)."""
    if isinstance(stmt, Block):
        start = [(path + (("body", None),), stmt.body)]
    else:
        start = [(path + (step,), child) for step, child in stmt_children(stmt)]
    stack = list(reversed(start))
    while stack:
        p, node = stack.pop()
        if isinstance(node, BlockRealize):
            yield p, node
            continue
        kids = [(p + (step,), child) for step, child in stmt_children(node)]
        stack.extend(reversed(kids))


def statements_outside_blocks(stmt: Stmt, path: Path) -> Iterator[tuple[Path, Stmt]]:
    """``stmt`` and the statements under it that no block below it holds,
    with their paths, in no particular order: what :func:`child_blocks`
    passes through on its way to the blocks (the blocks themselves are
    neither given nor entered)."""
    stack = [(path, stmt)]
    while stack:
        p, node = stack.pop()
        if isinstance(node, BlockRealize):
            continue
        yield p, node
        stack.extend((p + (step,), child) for step, child in stmt_children(node))


def all_block_realizes(stmt: Stmt, path: Path, *, skip_init: bool = True,
                       touching=None) -> Iterator[tuple[Path, BlockRealize]]:
    """Every BlockRealize under ``stmt`` (``stmt`` included), nested ones too,
    in program order; blocks inside a reduction ``init`` are skipped.
    With ``touching`` (buffers), only blocks that may use one of them:
    statements that name none of them are not entered."""
    stack = [(path, stmt)]
    while stack:
        p, node = stack.pop()
        if touching is not None and not mentions_any(node, touching):
            continue
        if isinstance(node, BlockRealize):
            yield p, node
        kids = []
        for step, child in stmt_children(node):
            if skip_init and isinstance(node, Block) and step[0] == "init":
                continue
            kids.append((p + (step,), child))
        stack.extend(reversed(kids))


# -- loop properties ------------------------------------------------------------------

def check_plain_loop(chk: Checks, loop: For) -> None:
    """The loop has no annotations and no thread binding."""
    if loop.annotations or loop.thread_binding is not None:
        what = (f"is bound to {loop.thread_binding}" if loop.thread_binding is not None
                else f"has annotations ({', '.join(sorted(loop.annotations))})")
        chk.fail(LoopHasAnnotationOrThreadBindingError, f"loop {loop.loop_var.name!r}",
                 f"the loop {what}; {chk.primitive} applies only to loops without annotations "
                 "or thread binding", loop)


def starts_at_zero(loop: For) -> bool:
    """Whether the loop's min is (simplifies to) the literal 0."""
    min_ = simplify_index(loop.min)
    return getattr(min_, "value", None) == 0 and not min_.dtype.is_bool


def check_starts_at_zero(chk: Checks, loop: For) -> None:
    """The loop starts at 0."""
    start = loop.min
    if type(start) is IntImm and start.value == 0 and not start.dtype.is_bool:
        return  # the literal 0 (nearly every loop), which simplifies to itself
    if not starts_at_zero(loop):
        chk.fail(LoopNotStartWithZeroError, f"loop {loop.loop_var.name!r}",
                 f"the loop starts at {loop.min.script()}, "
                 f"and {chk.primitive} supports only loops starting at 0", loop)


# -- block properties -----------------------------------------------------------------

def block_loop_map(site: Site, block_path: Path, *, top: Path | None = None) -> dict:
    """Loop variable name -> For for the loops between the block and its
    enclosing block (only those at or below ``top`` when given)."""
    out = {}
    for p, loop in loops_above(site, block_path):
        if top is None or p[:len(top)] == top:
            out[loop.loop_var.name] = loop
    return out


def has_affine_binding(site: Site, block_path: Path, realize: BlockRealize, *, top: Path | None = None,
                       surjective: bool = False) -> bool:
    """Whether the block's binding is affine in its loops (all of them, or,
    failing that, those at or below ``top``), as TVM's partial check does;
    ``surjective`` allows overlapping windows and unit loops as TVM's
    ``IsAffineBinding`` does (see :func:`is_affine_binding`)."""
    values = list(realize.iter_values)
    if distinct_index_vars(values):
        return True  # affine over any loops: no need to find them
    pred = realize.predicate
    if is_affine_binding(values, block_loop_map(site, block_path), surjective=surjective, predicate=pred):
        return True
    return top is not None and is_affine_binding(values, block_loop_map(site, block_path, top=top),
                                                 surjective=surjective, predicate=pred)


def loop_dependent_domain(site: Site, block_path: Path, block: Block):
    """``(iteration variable, loop name)`` for the first iteration variable
    of the block whose domain names a loop between the block and its scope
    (a triangular nest: ``T.axis.reduce(i + 1, k)``), else None. The loops
    are looked up only for a domain that is not two literals."""
    from .exprs import var_names

    names = None
    for iv in block.iter_vars:
        if type(iv.dom.min) is IntImm and type(iv.dom.extent) is IntImm:
            continue
        if names is None:
            names = {loop.loop_var.name for _, loop in loops_above(site, block_path)}
        used = names & (var_names(iv.dom.min) | var_names(iv.dom.extent))
        if used:
            return iv, sorted(used)[0]
    return None


def complete_block_violation(block: Block) -> str | None:
    """Why the block is not a complete block, or None if it is one."""
    for iv in block.iter_vars:
        if iv.iter_type is not IterVarType.DataPar:
            return f"its iteration variable {iv.var.name} is not data-parallel"
    written = {r.buffer for r in block.writes}
    for r in block.reads:
        if r.buffer in written:
            return f"it both reads and writes buffer {r.buffer.name}"
    return None


def reduction_block_violation(site: Site, block_path: Path, realize: BlockRealize) -> str | None:
    """Why the block is not a reduction block, or None if it is one."""
    block = realize.block
    if block.init is None:
        return "it has no init statement"
    if not has_affine_binding(site, block_path, realize):
        return "its binding is not affine"
    for iv in block.iter_vars:
        if iv.iter_type not in (IterVarType.DataPar, IterVarType.CommReduce):
            return f"its iteration variable {iv.var.name} is neither data-parallel nor a reduction"
    reduce_names = {iv.var.name for iv in block.iter_vars if iv.iter_type is IterVarType.CommReduce}
    if reduce_names:
        for store in _stores(block.body):
            for index in store.indices:
                used = uses_any(index, reduce_names)
                if used is not None:
                    return f"its reduction variable {used} indexes the buffer {store.buffer.name} it writes"
    return None


def _stores(stmt: Stmt) -> Iterator[BufferStore]:
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, BufferStore):
            yield node
            continue
        stack.extend(child for _, child in stmt_children(node))


def names_defined_at(site: Site, path: Path) -> set[str]:
    """Variable names usable in an expression placed at ``path``: the
    function's parameters and buffer shape variables, and the loop and
    iteration variables of the enclosing loops and blocks."""
    from .exprs import var_names

    names = {p.name for p in site.func.params}
    for buf in site.func.buffer_map.values():
        names |= var_names(buf)
    for _, node in ancestors(site.func, path):
        if isinstance(node, For):
            names.add(node.loop_var.name)
        elif isinstance(node, Block):
            names.update(iv.var.name for iv in node.iter_vars)
    return names


def is_int_expr(value) -> bool:
    """Whether ``value`` is a scalar integer (not bool) expression."""
    return isinstance(value, PrimExpr) and value.dtype.is_index


__all__ = [
    "default_function", "describe", "resolve_site", "resolve_loop", "resolve_block",
    "resolve_block_or_loop", "scope_path", "loops_above", "loops_and_parent", "child_blocks",
    "all_block_realizes", "check_plain_loop", "starts_at_zero", "check_starts_at_zero", "block_loop_map",
    "has_affine_binding", "loop_dependent_domain", "complete_block_violation", "reduction_block_violation",
    "names_defined_at", "is_int_expr",
]
