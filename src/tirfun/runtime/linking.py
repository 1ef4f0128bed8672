"""Every symbol the compiled code needs is found before it can run.

The JIT resolves a function that nothing defines to address 0, so code
that calls it would crash when called. Two things prevent that:

* :func:`install_libcalls` compiles the helpers LLVM's backend calls for
  16-bit floats (:mod:`tirfun.lower.llvm_libcalls`) once per process and
  gives their addresses to the JIT;
* :func:`check_linkable` reads the undefined symbols of the object code
  about to be loaded (ELF symbol table; on other object formats, the
  functions the IR declares) and raises :class:`BuildError` naming any that
  neither the process, the libraries loaded for the JIT nor the helpers
  define.
"""

from __future__ import annotations

import struct
import threading

from ..errors import BuildError

_lock = threading.Lock()
# the engine holding the helpers' code, kept for the life of the process
# (the JIT was given their addresses); set once, under _lock
_installed: list = []


def install_libcalls(binding, target_machine) -> None:
    """Compile the 16-bit float helpers (once) and register their
    addresses with the JIT. ``target_machine`` is a fresh TargetMachine
    for the host, which the helpers' engine takes."""
    from ..lower.llvm_libcalls import NAMES, support_ir

    with _lock:
        if _installed:
            return
        mod = binding.parse_assembly(support_ir())
        try:
            mod.verify()
            engine = binding.create_mcjit_compiler(mod, target_machine)
        except BaseException:
            # freed now, under the caller's LLVM lock, not when the exception is dropped
            mod.close()
            target_machine.close()
            raise
        try:
            engine.finalize_object()
            addresses = [(name, engine.get_function_address(name)) for name in NAMES]
        except BaseException:
            engine.close()
            raise
        missing = [name for name, address in addresses if not address]
        if missing:
            engine.close()
            raise BuildError(f"internal error: the helper {missing[0]} did not compile")
        for name, address in addresses:
            binding.add_symbol(name, address)
        _installed.append(engine)


def undefined_symbols(obj: bytes) -> list[str] | None:
    """The names an ELF object file uses but does not define, in order of
    its symbol table; None when ``obj`` is not a 64-bit little-endian ELF."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + k * shentsize) for k in range(shnum)]
    out: list[str] = []
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        offset, size, link, entsize = sh[4], sh[5], sh[6], sh[9] or 24
        strtab = sections[link][4]
        for k in range(1, size // entsize):  # entry 0 is the null symbol
            name_off, info, _other, shndx = struct.unpack_from("<IBBH", obj, offset + k * entsize)
            if shndx != 0 or name_off == 0:
                continue
            end = obj.index(b"\0", strtab + name_off)
            name = obj[strtab + name_off:end].decode("utf-8", "replace")
            if name not in out:
                out.append(name)
    return out


def check_linkable(binding, ir_text: str, obj: bytes) -> None:
    """Raise :class:`BuildError` unless every symbol the object code
    ``obj`` (compiled from the LLVM IR ``ir_text``) leaves undefined can be
    found. The caller holds the LLVM lock."""
    names = undefined_symbols(obj)
    if names is None:
        with binding.parse_assembly(ir_text) as llvm_module:
            names = [f.name for f in llvm_module.functions
                     if f.is_declaration and not f.name.startswith("llvm.")]
    missing = [n for n in names if not binding.address_of_symbol(n)]
    if missing:
        shown = ", ".join(missing)
        raise BuildError(f"the compiled code calls {shown}, which nothing in this process defines "
                         "(a call_extern to a function that is not loaded, or a runtime helper "
                         "tirfun does not provide)")


__all__ = ["install_libcalls", "undefined_symbols", "check_linkable"]
