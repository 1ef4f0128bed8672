"""The verifier on random PrimFuncs: it accepts every well-formed one (also
after a renaming, also inside a module), and rejects each one after a single
break of one of its rules."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st

from tirfun.analysis.traversal import blocks, get_at, replace_at, transform, walk
from tirfun.analysis.verify import verify
from tirfun.errors import VerifyError
from tirfun.nodes import BufferLoad, Cast, For, IntImm, IRModule, IterVar, LetStmt, Range, Var
from tirfun.testing.programs import prim_funcs
from tirfun.testing.renaming import rename_bound
from tirfun.script import from_source


@given(prim_funcs(), st.integers(0, 2**32 - 1))
def test_verify_accepts_every_random_program(func, seed):
    assert verify(func) is func
    verify(rename_bound(func, seed))
    verify(IRModule({"main": func}))


def _realizes(func):
    """(path, BlockRealize) of every block but the root."""
    out = []
    for path, block in blocks(func):
        if block.name_hint != "root":
            out.append((path[:-1], get_at(func, path[:-1])))
    return out


def _rejects(func, *rules, strict=False):
    with pytest.raises(VerifyError) as info:
        verify(func, strict=strict)
    assert any(rule in str(info.value) for rule in rules), str(info.value)


@given(data=st.data())
def test_a_name_bound_twice_is_rejected(data):
    func = data.draw(prim_funcs(), label="func")
    binders = [p for p in func.params]
    for node in walk(func.body):
        if isinstance(node, For):
            binders.append(node.loop_var)
        elif isinstance(node, IterVar):
            binders.append(node.var)
        elif isinstance(node, LetStmt):
            binders.append(node.var)
    assume(len(binders) >= 2)
    a, b = data.draw(st.lists(st.sampled_from(binders), min_size=2, max_size=2, unique=True))
    clash = Var(b.name, a.dtype)
    _rejects(transform(func, lambda n: clash if n == a else n), "duplicate name")


@given(data=st.data())
def test_a_block_name_used_twice_is_rejected(data):
    func = data.draw(prim_funcs(), label="func")
    realizes = _realizes(func)
    assume(len(realizes) >= 2)
    (pa, ra), (pb, rb) = data.draw(st.lists(st.sampled_from(realizes), min_size=2, max_size=2,
                                            unique_by=lambda r: r[1].block.name_hint))
    renamed = attrs.evolve(ra.block, name_hint=rb.block.name_hint)
    _rejects(replace_at(func, pa + (("block", None),), renamed), "duplicate name")


@given(data=st.data())
def test_a_loop_variable_used_inside_a_block_is_rejected(data):
    func = data.draw(prim_funcs(), label="func")
    candidates = []
    for path, realize in _realizes(func):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if isinstance(value, Var) and any(n == iv.var for n in walk(realize.block.body)):
                candidates.append((path, realize, iv.var, value))
    assume(candidates)
    path, realize, iter_var, loop_var = data.draw(st.sampled_from(candidates))
    body = transform(realize.block.body, lambda n: loop_var if n == iter_var else n)
    broken = replace_at(func, path, attrs.evolve(realize, block=attrs.evolve(realize.block, body=body)))
    _rejects(broken, "block isolation", "use outside scope")


@given(data=st.data())
def test_an_undeclared_buffer_is_rejected(data):
    func = data.draw(prim_funcs(), label="func")
    candidates = [(path, realize, load) for path, realize in _realizes(func)
                  for load in walk(realize.block.body) if isinstance(load, BufferLoad)]
    assume(candidates)
    path, realize, load = data.draw(st.sampled_from(candidates))
    stranger = attrs.evolve(load.buffer, name=load.buffer.name + "_undeclared")
    # only the body changes: the buffer's declaration and the regions keep the old one
    body = transform(realize.block.body, lambda n: stranger if n == load.buffer else n)
    broken = replace_at(func, path, attrs.evolve(realize, block=attrs.evolve(realize.block, body=body)))
    _rejects(broken, "undeclared buffer")


@given(data=st.data())
def test_a_read_region_left_out_is_accepted_and_rejected_when_strict(data):
    func = data.draw(prim_funcs(), label="func")
    candidates = []
    for path, realize in _realizes(func):
        written = {r.buffer.name for r in realize.block.writes}
        for i, region in enumerate(realize.block.reads):
            if region.buffer.name not in written:
                candidates.append((path, realize, i))
    assume(candidates)
    path, realize, i = data.draw(st.sampled_from(candidates))
    block = realize.block
    smaller = attrs.evolve(block, reads=block.reads.delete(i))
    smaller_func = replace_at(func, path, attrs.evolve(realize, block=smaller))
    assert verify(smaller_func) is smaller_func  # the user's declaration, as in TVM
    _rejects(smaller_func, "region not covered", strict=True)


@given(data=st.data())
def test_a_binding_of_the_wrong_dtype_is_rejected(data):
    func = data.draw(prim_funcs(), label="func")
    candidates = [(path, realize, i) for path, realize in _realizes(func)
                  for i in range(len(realize.iter_values))]
    assume(candidates)
    path, realize, i = data.draw(st.sampled_from(candidates))
    value = realize.iter_values[i]
    other = "int64" if value.dtype == "int32" else "int32"
    broken = attrs.evolve(realize, iter_values=realize.iter_values.set(i, Cast(other, value)))
    _rejects(replace_at(func, path, broken), "binding dtype")


@given(data=st.data())
def test_a_binding_outside_its_constant_domain_is_a_lint_and_refused_for_a_build(data):
    func = data.draw(prim_funcs(allow_where=False), label="func")
    loops = {n.loop_var: n for n in walk(func.body) if isinstance(n, For)}
    candidates = []
    for path, realize in _realizes(func):
        for i, (iv, value) in enumerate(zip(realize.block.iter_vars, realize.iter_values)):
            loop = loops.get(value) if isinstance(value, Var) else None
            if (loop is not None and isinstance(loop.extent, IntImm) and loop.extent.value >= 2
                    and isinstance(loop.min, IntImm) and loop.min.value == 0):
                candidates.append((path, realize, i))
    assume(candidates)
    path, realize, i = data.draw(st.sampled_from(candidates))
    iv = realize.block.iter_vars[i]
    extent = iv.dom.extent
    narrow = attrs.evolve(iv, dom=Range(iv.dom.min, IntImm(extent.dtype, extent.value - 1)))
    block = attrs.evolve(realize.block, iter_vars=realize.block.iter_vars.set(i, narrow))
    broken = replace_at(func, path, attrs.evolve(realize, block=block))
    assert verify(broken) is broken  # TVM parses and schedules it
    _rejects(broken, "binding outside domain", strict=True)
    with pytest.raises(VerifyError, match="binding outside domain"):
        verify(broken, domains=True)  # what a build checks first


_SHIFTED = '''
@T.prim_func
def main(B: T.Buffer(({size},), "float32")):
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.{kind}({n}, i)
            B[vi + {a}] = B[vi + {b}] * T.float32(2.0)
'''


def _named_instances(text: str) -> tuple[int, int]:
    """The values of vi of the two instances a spatial dependence names."""
    first = int(text.split("the instance with vi = ")[1].split(" ")[0])
    second = int(text.split("and the instance with vi = ")[1].split(" ")[0])
    return first, second


@given(st.integers(1, 40), st.integers(0, 5), st.integers(0, 5), st.sampled_from(["spatial", "scan"]))
def test_a_block_reading_another_instances_element_is_a_spatial_dependence(n, a, b, kind):
    from tirfun.script import from_source

    func = from_source(_SHIFTED.format(size=n + 5, n=n, a=a, b=b, kind=kind))
    assert verify(func) is func
    conflicting = a != b and n > abs(a - b) and kind == "spatial"
    if not conflicting:
        assert verify(func, strict=True) is func
        return
    with pytest.raises(VerifyError) as info:
        verify(func, strict=True)
    assert info.value.rule == "spatial dependence"
    # the two instances it names do touch one element: the first writes it,
    # the second reads it
    first, second = _named_instances(str(info.value))
    location = int(str(info.value).split("writes B[")[1].split("]")[0])
    assert first != second and first + a == location == second + b


_GUARDED_SHIFT = '''
@T.prim_func
def main(B: T.Buffer(({size},), "int32")):
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            {store}
'''


@given(st.integers(2, 8), st.integers(0, 2), st.integers(0, 2), st.integers(-1, 9),
       st.sampled_from(["<", ">=", "=="]), st.sampled_from(["expression", "statement"]))
def test_a_read_under_a_condition_is_a_dependence_where_the_condition_holds(n, a, b, c, op, form):
    # the read of another instance's element counts only in the instances
    # where its condition holds: a dependence iff some instance y with
    # (y op c) reads y + b, which another instance x writes at x + a
    from tirfun.script import from_source

    if form == "expression":
        store = f"B[vi + {a}] = T.if_then_else(vi {op} {c}, B[vi + {b}], 0) + 1"
    else:
        store = f"if vi {op} {c}:\n                B[vi + {a}] = B[vi + {b}] + 1"
    func = from_source(_GUARDED_SHIFT.format(size=n + 5, n=n, store=store))
    assert verify(func) is func
    holds = {"<": lambda y: y < c, ">=": lambda y: y >= c, "==": lambda y: y == c}[op]
    writers = range(n) if form == "expression" else [x for x in range(n) if holds(x)]
    conflicting = any(x != y and x + a == y + b for y in range(n) if holds(y) for x in writers)
    if not conflicting:
        assert verify(func, strict=True) is func
        return
    event(f"dependence under the condition ({form})")
    with pytest.raises(VerifyError) as info:
        verify(func, strict=True)
    assert info.value.rule == "spatial dependence"
    first, second = _named_instances(str(info.value))
    assert first != second and holds(second)


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_block_programs_and_their_schedules_have_no_spatial_dependence(program_seed, seed):
    # the strategies declare iteration types truthfully, and no primitive
    # may make instances of a spatial variable depend on each other
    from tirfun.testing.block_programs import random_block_program
    from tirfun.testing.schedules import random_block_schedule

    mod = random_block_program(program_seed)
    for stage in (mod, random_block_schedule(mod, seed, max_steps=5)(mod)):
        try:
            verify(stage, strict=True)
        except VerifyError as error:
            assert error.rule != "spatial dependence", str(error)


# -- regions at a symbolic size ------------------------------------------------------

_SYMBOLIC_REGION = '''
@T.prim_func
def main(A: T.Buffer((512,), "float32"), C: T.Buffer((512,), "float32"), n: T.int32):
    for once in range(1):
        with T.block("outer"):
            T.reads(A[{a} * n + {b}:{a} * n + {b} + {e}])
            T.writes(C[0:512])
            for j in range({p} * n + {q}):
                with T.block("inner"):
                    T.reads(A[j + {d}])
                    T.writes(C[j])
                    C[j] = A[j + {d}]
'''


def _symbolic_misses(a, b, e, p, q, d):
    """Per value of ``n`` at which the loop runs (from the least, up to 60),
    whether the read below the declared region's start, and whether past
    its end."""
    first = -((q - 1) // p)  # the least n with p * n + q >= 1
    out = []
    for n in range(first, first + 60):
        low, high = d, p * n + q - 1 + d
        out.append((low < a * n + b, high > a * n + b + e - 1))
    return out


@given(st.integers(0, 1), st.integers(-4, 8), st.integers(1, 8), st.integers(1, 2), st.integers(-3, 3),
       st.integers(-2, 4))
def test_a_region_at_a_symbolic_size_is_rejected_when_strict_exactly_when_reads_surely_leave_it(a, b, e, p, q, d):
    # TVM's compacted_symbolic_func declares A[i, m] and reads A[i, 0:m]: the
    # loop's extent runs the body only where it is at least 1, which decides
    misses = _symbolic_misses(a, b, e, p, q, d)
    func = from_source(_SYMBOLIC_REGION.format(a=a, b=b, e=e, p=p, q=q, d=d))
    assert verify(func) is func
    try:
        verify(func, strict=True)
        rejected = False
    except VerifyError as exc:
        assert exc.rule == "region not covered", str(exc)
        rejected = True
    event(f"rejected: {rejected}")
    # sound: a rejection names a program whose reads do leave the region
    assert not rejected or any(low or high for low, high in misses)
    # both ends move monotonically in n (the start falls, the excess grows),
    # so an end missed at the least n is missed at every n: a sure miss
    if misses[0][0] or misses[0][1]:
        assert rejected
