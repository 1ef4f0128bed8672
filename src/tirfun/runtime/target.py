"""Compilation targets.

``Target("llvm")`` means *this* machine: the host's triple, CPU name and
CPU features, so generated code uses every vector instruction the host has
(a generic x86-64 would leave AVX2 and FMA unused). Options override parts:
``"llvm -mcpu=skylake"``, ``"llvm -mattr=+avx2,+fma"``, ``"llvm
-mtriple=x86_64-unknown-linux-gnu"`` (a build runs only code for the
host's triple), ``"llvm -opt-level=1"`` (LLVM's optimisation level, 0 to 3;
3 by default) and ``"llvm -num-cores=4"`` (the threads a parallel loop
runs on; by default ``TIRFUN_NUM_THREADS`` or every core of the process).
Every other option is refused with a BuildError: an option that changed
nothing would look honoured. ``Target("cuda")`` names the GPU.

By default floating point is exact IEEE arithmetic, rounding after every
operation as the reference interpreter does. ``-fast-math-contract`` (TVM's
option) lets LLVM fuse ``a*b + c`` into one fused multiply-add, which rounds
once: faster on CPUs whose adders and multipliers share ports, and no
longer bit-identical to the interpreter. Contraction only drops the
rounding of a product; it never reorders additions, so a sum of ``n``
products keeps the program's order and both builds stay within
``gamma_n * sum |a_i * b_i|`` of the true sum (``gamma_n = n*u / (1 - n*u)``,
``u`` the unit roundoff: ``2**-24`` for float32). The contracted result
therefore differs from the interpreter's by at most ``2 * gamma_n * sum
|a_i * b_i|``; the tests of contracted kernels compare against that bound.
"""

from __future__ import annotations

import functools
import shlex

import attrs

from ..errors import BuildError

_KINDS = ("llvm", "cuda")
#: the options each kind takes
_OPTIONS = {
    "llvm": ("mtriple", "mcpu", "mattr", "opt-level", "num-cores", "fast-math-contract"),
    "cuda": ("mtriple", "mcpu", "mattr", "fast-math-contract", "keys", "tag", "opt-level",
             "num-cores", "arch", "max_num_threads", "thread_warp_size"),
}
#: LLVM's optimisation level unless ``-opt-level`` says otherwise
DEFAULT_OPT_LEVEL = 3
_TRUE = ("", "1", "true", "True")
_FALSE = ("0", "false", "False")


@functools.cache
def host_description() -> tuple[str, str, str]:
    """``(triple, cpu, features)`` of the machine running this process."""
    import llvmlite.binding as llvm

    from .jit import LOCK  # every call into LLVM holds it (see tirfun.runtime.jit)

    with LOCK:
        return llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


@attrs.frozen(init=False)
class Target:
    """A compilation target: the kind (``"llvm"`` or ``"cuda"``) and, for
    LLVM, the triple, CPU, features, whether float operations may be
    contracted, LLVM's optimisation level and the threads of a parallel
    loop (``num_cores``; 0 leaves the choice to the runtime). Build one
    from TVM's string form with ``Target("llvm -mcpu=...")``, or from
    keywords."""

    kind: str
    triple: str = ""
    cpu: str = ""
    features: str = ""
    contract: bool = False
    opt_level: int = DEFAULT_OPT_LEVEL
    num_cores: int = 0

    def __init__(self, kind="llvm", triple=None, cpu=None, features=None, contract=None,
                 opt_level=None, num_cores=None):
        keywords = (triple, cpu, features, contract, opt_level, num_cores)
        if isinstance(kind, Target) and all(k is None for k in keywords):
            parsed = kind
        elif isinstance(kind, str) and all(k is None for k in keywords):
            parsed = _parse(kind)
        else:
            parsed = _resolve(kind, triple, cpu, features, bool(contract),
                              _level(opt_level, "opt_level"), _cores(num_cores, "num_cores"))
        self.__attrs_init__(parsed.kind, parsed.triple, parsed.cpu, parsed.features,
                            parsed.contract, parsed.opt_level, parsed.num_cores)

    @staticmethod
    def from_string(text: str) -> "Target":
        """Parse TVM's target string (``"llvm -mcpu=znver3"``)."""
        return Target(text)

    @staticmethod
    def of(value) -> "Target":
        """A Target from a Target or a target string."""
        if isinstance(value, Target):
            return value
        if value is None:
            return Target("llvm")
        if isinstance(value, str):
            return Target(value)
        raise BuildError(f"a target is a string such as 'llvm' or a Target, got {value!r}")

    @property
    def is_host(self) -> bool:
        """Whether code for this target runs in this process."""
        return self.kind == "llvm" and self.triple == host_description()[0]

    def __str__(self) -> str:
        if self.kind != "llvm":
            return self.kind
        parts = ["llvm", f"-mtriple={self.triple}", f"-mcpu={self.cpu}"]
        if self.features:
            parts.append(f"-mattr={self.features}")
        if self.opt_level != DEFAULT_OPT_LEVEL:
            parts.append(f"-opt-level={self.opt_level}")
        if self.num_cores:
            parts.append(f"-num-cores={self.num_cores}")
        if self.contract:
            parts.append("-fast-math-contract")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"


def _level(value, name: str) -> int:
    """An optimisation level: an integer from 0 to 3."""
    if value is None:
        return DEFAULT_OPT_LEVEL
    try:
        level = int(value)
    except (TypeError, ValueError):
        level = -1
    if isinstance(value, bool) or level not in (0, 1, 2, 3) or str(level) != str(value).strip():
        raise BuildError(f"{name} is LLVM's optimisation level, 0, 1, 2 or 3; got {value!r}")
    return level


def _cores(value, name: str) -> int:
    """A thread count: a positive integer (None: the runtime's choice, 0)."""
    if value is None:
        return 0
    try:
        cores = int(value)
    except (TypeError, ValueError):
        cores = 0
    if isinstance(value, bool) or cores < 1 or str(cores) != str(value).strip():
        raise BuildError(f"{name} is the number of threads of a parallel loop, a positive "
                         f"integer; got {value!r}")
    return cores


def _resolve(kind, triple, cpu, features, contract, opt_level=DEFAULT_OPT_LEVEL,
             num_cores=0) -> Target:
    if kind not in _KINDS:
        raise BuildError(f"unknown target kind {kind!r}; expected one of {', '.join(_KINDS)}")
    if kind != "llvm":
        return _make(kind, "", "", "", False)
    host_triple, host_cpu, host_features = host_description()
    if cpu is None and features is None:
        cpu, features = host_cpu, host_features
    elif cpu is None:
        cpu = host_cpu
    elif features is None:
        features = ""  # an explicit CPU brings its own features
    return _make("llvm", triple or host_triple, cpu, features, contract, opt_level, num_cores)


def _make(kind, triple, cpu, features, contract, opt_level=DEFAULT_OPT_LEVEL,
          num_cores=0) -> Target:
    t = object.__new__(Target)
    t.__attrs_init__(kind, triple, cpu, features, contract, opt_level, num_cores)
    return t


def _parse(text: str) -> Target:
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise BuildError(f"cannot read the target {text!r}: {err}") from None
    if not words:
        raise BuildError("empty target string; expected e.g. 'llvm'")
    kind, options = words[0], words[1:]
    accepted = _OPTIONS.get(kind, ())
    values = {}
    for opt in options:
        key, sep, value = opt.partition("=")
        if not key.startswith("-"):
            raise BuildError(f"target {text!r}: option {opt!r} is not of the form -key=value")
        key = key.lstrip("-")
        if key not in accepted and kind in _OPTIONS:
            raise BuildError(f"target {text!r}: unknown option -{key}: tirfun's {kind} target "
                             f"honours {', '.join('-' + o for o in accepted)} and refuses "
                             "every other option rather than ignore it")
        if not sep and key != "fast-math-contract":
            raise BuildError(f"target {text!r}: option {opt!r} is not of the form -key=value")
        values[key] = value
    contract = values.get("fast-math-contract")
    if contract is not None and contract not in _TRUE + _FALSE:
        raise BuildError(f"target {text!r}: -fast-math-contract takes no value, or 1/0")
    return _resolve(kind, values.get("mtriple"), values.get("mcpu"), values.get("mattr"),
                    contract in _TRUE if contract is not None else False,
                    _level(values.get("opt-level"), "-opt-level"),
                    _cores(values.get("num-cores"), "-num-cores"))


__all__ = ["Target", "host_description", "DEFAULT_OPT_LEVEL"]
