"""Check a CUDA build without a GPU.

:func:`run_split` runs what ``tirfun.build(mod, target="cuda")`` made, host
code and kernels, on numpy arrays: the host code as the GPU build runs it,
each kernel launch in the reference interpreter with the GPU's meaning
(every thread of every block, barriers, races reported). Comparing its
results with ``interp.run`` of the original program shows that lowering,
barrier insertion and the split kept the program's meaning.

:func:`bind_everything` makes a schedule's program buildable for CUDA by
putting each block that no thread-bound loop reaches under a unit loop
bound to ``blockIdx.x`` (one thread runs it), and :func:`ptxas_check` runs
NVIDIA's PTX assembler on PTX when it is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import numpy as np

from ..errors import ArgumentError
from ..nodes import BlockRealize, For, IRModule, PrimFunc, Var


def run_split(rt, *args, name: str | None = None):
    """Run function ``name`` (the entry by default) of the CUDA build ``rt``
    on ``args`` (numpy arrays and numbers, written in place) with the
    interpreter as the GPU; returns the launches made, as
    ``(kernel, grid, block)``."""
    from ..runtime.host_launch import InterpLauncher, run_host

    name = name or rt.entry_name
    hd = rt.splits[name]
    func = rt.lowered[name]
    if len(args) != len(func.params):
        raise ArgumentError(f"function {name} takes {len(func.params)} arguments, got {len(args)}")
    env: dict = {}
    for p, arg in zip(func.params, args):
        buf = func.buffer_map.get(p)
        if buf is None:
            env[p] = arg
            continue
        if not isinstance(arg, np.ndarray) or not arg.flags.c_contiguous:
            raise ArgumentError(f"parameter {buf.name}: run_split takes C-contiguous numpy arrays")
        env[p] = env[buf.data] = arg.reshape(-1)
        for dim, actual in zip(buf.shape, arg.shape):
            if isinstance(dim, Var):
                env.setdefault(dim, actual)
    launcher = InterpLauncher()
    run_host(hd, env, launcher)
    return launcher.launches


def unbound_blocks(func: PrimFunc) -> list[str]:
    """The innermost blocks of ``func`` that no thread-bound loop reaches."""
    out: list[str] = []

    def visit(node, bound: bool) -> None:
        from ..analysis.traversal import stmt_children

        if isinstance(node, For) and node.thread_binding is not None:
            bound = True
        if isinstance(node, BlockRealize) and node.block.name_hint != "root":
            inner = [s for _, s in _walk(node.block.body) if isinstance(s, BlockRealize)]
            if not inner and not bound:
                out.append(node.block.name_hint)
        for _, child in stmt_children(node):
            visit(child, bound)

    visit(func.body, False)
    return out


def _walk(stmt):
    from ..analysis.traversal import walk_stmts

    return walk_stmts(stmt)


def bind_everything(mod: IRModule) -> IRModule:
    """``mod`` with every block outside a kernel put under a unit loop bound
    to ``blockIdx.x`` (see the module)."""
    import attrs

    from ..analysis.traversal import find_loop, get_at, replace_at
    from ..nodes import ForKind
    from ..schedule import Schedule

    sch = Schedule(mod)
    for block in unbound_blocks(sch.mod["main"]):
        loop = sch.add_unit_loop(sch.get_block(block))
        func = sch.mod["main"]
        path = find_loop(func.body, loop.name)
        unit = get_at(func.body, path)
        # one iteration, one thread: binding it needs none of bind's checks,
        # which refuse blocks that read what they write
        bound = attrs.evolve(unit, kind=ForKind.THREAD_BINDING, thread_binding="blockIdx.x")
        sch = Schedule(sch.mod.with_function("main", func.with_body(
            replace_at(func.body, path, bound))))
    return sch.mod


def ptxas_path() -> str | None:
    """Where NVIDIA's ``ptxas`` is, or None."""
    return shutil.which("ptxas") or next(
        (p for p in ("/usr/local/cuda/bin/ptxas",) if os.path.isfile(p)), None)


def ptxas_check(ptx: str, arch: str = "sm_80") -> None:
    """Assemble ``ptx`` with ``ptxas -arch=<arch>``; raises AssertionError with
    ptxas's messages when it refuses (and RuntimeError when it is absent)."""
    exe = ptxas_path()
    if exe is None:
        raise RuntimeError("ptxas is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "kernel.ptx")
        with open(src, "w") as fh:
            fh.write(ptx)
        done = subprocess.run([exe, f"-arch={arch}", src, "-o", os.path.join(tmp, "kernel.cubin")],
                              capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"ptxas -arch={arch} refuses the PTX:\n{done.stderr}{done.stdout}")


__all__ = ["run_split", "bind_everything", "unbound_blocks", "ptxas_check", "ptxas_path"]
