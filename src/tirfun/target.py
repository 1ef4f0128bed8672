"""Compilation targets: one record for the CPU and the GPU.

``Target("llvm")`` means *this* machine: the host's triple, CPU name and
CPU features, so generated code uses every vector instruction the host has
(a generic x86-64 would leave AVX2 and FMA unused). Options override parts:
``"llvm -mcpu=skylake"``, ``"llvm -mattr=+avx2,+fma"``, ``"llvm
-mtriple=x86_64-unknown-linux-gnu"`` (a build runs only code for the
host's triple), ``"llvm -opt-level=1"`` (LLVM's optimisation level, 0 to 3;
3 by default) and ``"llvm -num-cores=4"`` (the threads a parallel loop
runs on; by default ``TIRFUN_NUM_THREADS`` or every core of the process).
Every other option is refused with a BuildError: an option that changed
nothing would look honoured.

``Target("cuda")`` is an NVIDIA GPU reached through PTX
(``nvptx64-nvidia-cuda``): ``"cuda -arch=sm_90"`` names the compute
capability; without ``-arch`` a build uses the device's when cuda-python
finds one, else :data:`DEFAULT_CUDA_ARCH`. ``-max_threads_per_block``,
``-max_shared_memory_per_block`` (bytes of static shared memory),
``-thread_warp_size`` and ``-max_num_threads`` set the limits lowering
checks (TVM's defaults: 1024 threads, 48 KiB, 32). TVM's tags
(``"nvidia/nvidia-h100"``, ``"nvidia/geforce-rtx-4090"``, ...) name a
device of :data:`TAGS`.

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

Math functions call the C library by default, as TVM's CPU code does
(``-math=exact``): one call per vector lane, and results identical to the
interpreter's. ``-math=fast`` (CPU only) computes ``exp``, ``exp2``,
``log``, ``log2``, ``log1p``, ``tanh``, ``sigmoid``, ``sin``, ``cos`` and
``erf`` of ``float32``, ``float16`` and ``bfloat16`` inline, as vector
polynomials (scalar calls too, so a result does not depend on the
schedule): within 1 ulp of the interpreter everywhere, with its special
values (infinities, NaN, signed zeros, overflow and underflow thresholds)
exactly; ``float64`` and the other functions still call the C library.
See :mod:`tirfun.lower.llvm_vecmath`.

:func:`create_target_machine` is the one factory of LLVM target machines,
for the host and for NVPTX; every use of LLVM holds :data:`LLVM_LOCK`.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import threading

import attrs

from .errors import BuildError

_KINDS = ("llvm", "cuda")
#: the options each kind takes
_OPTIONS = {
    "llvm": ("mtriple", "mcpu", "mattr", "opt-level", "num-cores", "fast-math-contract", "math"),
    "cuda": ("arch", "mcpu", "mattr", "opt-level", "fast-math-contract", "max_threads_per_block",
             "max_num_threads", "max_shared_memory_per_block", "thread_warp_size", "tag", "keys"),
}
#: LLVM's optimisation level unless ``-opt-level`` says otherwise
DEFAULT_OPT_LEVEL = 3
#: how math functions are computed: ``exact`` (the C library) or ``fast``
MATH_MODES = ("exact", "fast")
#: the compute capability of a CUDA build when neither the target nor a device names one
DEFAULT_CUDA_ARCH = "sm_80"
#: the triple of NVIDIA's PTX
NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
#: the CUDA limits of TVM's ``cuda`` target kind
CUDA_MAX_THREADS_PER_BLOCK = 1024
CUDA_MAX_SHARED_MEMORY = 48 * 1024
CUDA_WARP_SIZE = 32
#: the largest extent of each launch dimension on every CUDA device of compute
#: capability 3.0 and later: the driver refuses a launch past them
CUDA_DIM_LIMITS = {"threadIdx.x": 1024, "threadIdx.y": 1024, "threadIdx.z": 64,
                   "blockIdx.x": 2 ** 31 - 1, "blockIdx.y": 65535, "blockIdx.z": 65535}
#: TVM's NVIDIA target tags and the compute capability of each
TAGS = {
    "nvidia/nvidia-v100": "sm_70", "nvidia/tesla-v100": "sm_70", "nvidia/nvidia-t4": "sm_75",
    "nvidia/tesla-t4": "sm_75", "nvidia/geforce-rtx-2080-ti": "sm_75",
    "nvidia/nvidia-a100": "sm_80", "nvidia/nvidia-a30": "sm_80", "nvidia/nvidia-a10": "sm_86",
    "nvidia/nvidia-a10g": "sm_86", "nvidia/nvidia-a40": "sm_86", "nvidia/geforce-rtx-3080": "sm_86",
    "nvidia/geforce-rtx-3090": "sm_86", "nvidia/nvidia-l4": "sm_89", "nvidia/nvidia-l40s": "sm_89",
    "nvidia/geforce-rtx-4090": "sm_89", "nvidia/nvidia-h100": "sm_90", "nvidia/nvidia-h200": "sm_90",
    "nvidia/nvidia-b200": "sm_100",
}
_TRUE = ("", "1", "true", "True")
_FALSE = ("0", "false", "False")

#: held around every call into LLVM: llvmlite parses every module into one
#: global LLVM context and target machines are shared (reentrant, since a
#: build holds it across several calls)
LLVM_LOCK = threading.RLock()

if hasattr(os, "register_at_fork"):
    # a fork while another thread is inside LLVM would leave the child a
    # held lock and LLVM half-way through a change: fork between uses
    os.register_at_fork(before=LLVM_LOCK.acquire, after_in_parent=LLVM_LOCK.release,
                        after_in_child=LLVM_LOCK.release)


@functools.cache
def host_description() -> tuple[str, str, str]:
    """``(triple, cpu, features)`` of the machine running this process."""
    import llvmlite.binding as llvm

    with LLVM_LOCK:
        return llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


@attrs.frozen(init=False)
class Target:
    """A compilation target: the kind (``"llvm"`` or ``"cuda"``), the LLVM
    triple, CPU (for CUDA, ``arch``: the ``sm_XX`` compute capability,
    empty for "the device's") and features, whether float operations may be
    contracted, LLVM's optimisation level, the threads of a parallel loop
    (``num_cores``; 0 leaves the choice to the runtime), how math functions
    are computed (``math``: ``"exact"``, the C library, or ``"fast"``,
    inline vector polynomials within 1 ulp; CPU only), and, for CUDA, the
    limits lowering checks. Build one from TVM's string form with
    ``Target("cuda -arch=sm_90")``, or from keywords."""

    kind: str
    triple: str = ""
    cpu: str = ""
    features: str = ""
    contract: bool = False
    opt_level: int = DEFAULT_OPT_LEVEL
    num_cores: int = 0
    max_threads_per_block: int = 0
    max_shared_memory_per_block: int = 0
    thread_warp_size: int = 0
    tag: str = ""
    math: str = "exact"

    def __init__(self, kind="llvm", triple=None, cpu=None, features=None, contract=None,
                 opt_level=None, num_cores=None, *, arch=None, max_threads_per_block=None,
                 max_shared_memory_per_block=None, thread_warp_size=None, math=None):
        keywords = (triple, cpu, features, contract, opt_level, num_cores, arch,
                    max_threads_per_block, max_shared_memory_per_block, thread_warp_size, math)
        if isinstance(kind, Target) and all(k is None for k in keywords):
            parsed = kind
        elif isinstance(kind, str) and all(k is None for k in keywords):
            parsed = _parse(kind)
        else:
            parsed = _resolve(kind, triple, cpu if arch is None else arch, features,
                              bool(contract), _level(opt_level, "opt_level"),
                              _cores(num_cores, "num_cores"),
                              _limits("", max_threads_per_block, max_shared_memory_per_block,
                                      thread_warp_size), math=_math(math, "math"))
        self.__attrs_init__(*attrs.astuple(parsed, recurse=False))

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
    def arch(self) -> str:
        """The compute capability of a CUDA target (``"sm_90"``), empty when
        the device decides; empty for the CPU."""
        return self.cpu if self.kind == "cuda" else ""

    @property
    def keys(self) -> tuple[str, ...]:
        """TVM's target keys."""
        return ("cuda", "gpu") if self.kind == "cuda" else ("cpu",)

    @property
    def is_host(self) -> bool:
        """Whether code for this target runs in this process."""
        return self.kind == "llvm" and self.triple == host_description()[0]

    def with_arch(self, arch: str) -> "Target":
        """This CUDA target for compute capability ``arch``."""
        if self.kind != "cuda":
            raise BuildError(f"{self} is no CUDA target: it has no arch")
        fields = attrs.asdict(self, recurse=False)
        fields["cpu"] = _arch(arch, str(self))
        return _make(**fields)

    def __str__(self) -> str:
        if self.kind == "cuda":
            parts = ["cuda"]
            if self.tag:
                parts = [self.tag]
            elif self.cpu:
                parts.append(f"-arch={self.cpu}")
            for name, value, default in (
                    ("max_threads_per_block", self.max_threads_per_block, CUDA_MAX_THREADS_PER_BLOCK),
                    ("max_shared_memory_per_block", self.max_shared_memory_per_block,
                     CUDA_MAX_SHARED_MEMORY),
                    ("thread_warp_size", self.thread_warp_size, CUDA_WARP_SIZE)):
                if value != default:
                    parts.append(f"-{name}={value}")
            if self.opt_level != DEFAULT_OPT_LEVEL:
                parts.append(f"-opt-level={self.opt_level}")
            if self.contract:
                parts.append("-fast-math-contract")
            return " ".join(parts)
        parts = ["llvm", f"-mtriple={self.triple}", f"-mcpu={self.cpu}"]
        if self.features:
            parts.append(f"-mattr={self.features}")
        if self.opt_level != DEFAULT_OPT_LEVEL:
            parts.append(f"-opt-level={self.opt_level}")
        if self.num_cores:
            parts.append(f"-num-cores={self.num_cores}")
        if self.contract:
            parts.append("-fast-math-contract")
        if self.math != "exact":
            parts.append(f"-math={self.math}")
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


def _math(value, name: str) -> str:
    """A math mode: ``exact`` (None too) or ``fast``."""
    if value is None:
        return "exact"
    if value not in MATH_MODES:
        raise BuildError(f"{name} is how math functions are computed, 'exact' (the C library) "
                         f"or 'fast' (inline polynomials within 1 ulp); got {value!r}")
    return value


def _positive(value, what: str, text: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if isinstance(value, bool) or number < 1 or str(number) != str(value).strip():
        raise BuildError(f"target {text!r}: {what} is a positive integer; got {value!r}")
    return number


def _limits(text: str, threads, shared, warp) -> tuple[int, int, int]:
    """The CUDA limits, TVM's defaults where not given."""
    return (CUDA_MAX_THREADS_PER_BLOCK if threads is None
            else _positive(threads, "-max_threads_per_block", text),
            CUDA_MAX_SHARED_MEMORY if shared is None
            else _positive(shared, "-max_shared_memory_per_block", text),
            CUDA_WARP_SIZE if warp is None else _positive(warp, "-thread_warp_size", text))


def _arch(value: str, text: str) -> str:
    """``sm_XX`` (``sm_90a`` too), checked."""
    if not re.fullmatch(r"sm_[1-9][0-9]{1,2}[af]?", value):
        raise BuildError(f"target {text!r}: -arch is a compute capability such as sm_80 or "
                         f"sm_90, got {value!r}")
    return value


def _resolve(kind, triple, cpu, features, contract, opt_level=DEFAULT_OPT_LEVEL,
             num_cores=0, limits=(0, 0, 0), tag="", text="", math="exact") -> Target:
    if kind not in _KINDS:
        raise BuildError(f"unknown target kind {kind!r}; expected one of {', '.join(_KINDS)}")
    if kind == "cuda":
        if math != "exact":
            raise BuildError(f"target {text or kind!r}: math={math!r} is an option of the llvm "
                             "target only")
        if triple not in (None, "", NVPTX_TRIPLE):
            raise BuildError(f"target {text or kind!r}: a CUDA target's triple is {NVPTX_TRIPLE}")
        if num_cores:
            raise BuildError(f"target {text or kind!r}: -num-cores is an option of the CPU target")
        arch = _arch(cpu, text or kind) if cpu else ""
        return _make("cuda", NVPTX_TRIPLE, arch, features or "", contract, opt_level, 0,
                     *limits, tag)
    host_triple, host_cpu, host_features = host_description()
    if cpu is None and features is None:
        cpu, features = host_cpu, host_features
    elif cpu is None:
        cpu = host_cpu
    elif features is None:
        features = ""  # an explicit CPU brings its own features
    return _make("llvm", triple or host_triple, cpu, features, contract, opt_level, num_cores,
                 math=math)


def _make(kind, triple, cpu, features, contract, opt_level=DEFAULT_OPT_LEVEL,
          num_cores=0, max_threads_per_block=0, max_shared_memory_per_block=0,
          thread_warp_size=0, tag="", math="exact") -> Target:
    t = object.__new__(Target)
    t.__attrs_init__(kind, triple, cpu, features, contract, opt_level, num_cores,
                     max_threads_per_block, max_shared_memory_per_block, thread_warp_size, tag, math)
    return t


def _parse(text: str) -> Target:
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise BuildError(f"cannot read the target {text!r}: {err}") from None
    if not words:
        raise BuildError("empty target string; expected e.g. 'llvm'")
    kind, options = words[0], words[1:]
    tag = ""
    if "/" in kind:
        if kind not in TAGS:
            raise BuildError(f"unknown target tag {kind!r}; tirfun knows "
                             f"{', '.join(sorted(TAGS))}")
        tag, kind = kind, "cuda"
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
    cpu = values.get("mcpu")
    if kind == "cuda":
        if "keys" in values and not set(values["keys"].split(",")) <= {"cuda", "gpu"}:
            raise BuildError(f"target {text!r}: a CUDA target's keys are cuda,gpu")
        if "tag" in values and values["tag"]:
            if values["tag"] not in TAGS:
                raise BuildError(f"target {text!r}: unknown tag {values['tag']!r}")
            tag = values["tag"]
        arch = values.get("arch") or cpu or (TAGS[tag] if tag else None)
        if values.get("max_num_threads") is not None:
            _positive(values["max_num_threads"], "-max_num_threads", text)
        limits = _limits(text, values.get("max_threads_per_block", values.get("max_num_threads")),
                         values.get("max_shared_memory_per_block"), values.get("thread_warp_size"))
        return _resolve("cuda", None, arch, values.get("mattr"),
                        contract in _TRUE if contract is not None else False,
                        _level(values.get("opt-level"), "-opt-level"), 0, limits, tag, text)
    return _resolve(kind, values.get("mtriple"), cpu, values.get("mattr"),
                    contract in _TRUE if contract is not None else False,
                    _level(values.get("opt-level"), "-opt-level"),
                    _cores(values.get("num-cores"), "-num-cores"), text=text,
                    math=_math(values.get("math"), "-math"))


def initialise_llvm():
    """llvmlite.binding with the host's and NVPTX's code generators ready."""
    with LLVM_LOCK:
        return _initialised()


@functools.cache
def _initialised():
    import llvmlite.binding as binding

    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    binding.initialize_native_asmparser()
    try:
        binding.initialize_all_targets()
        binding.initialize_all_asmprinters()
    except (RuntimeError, AttributeError):  # an llvmlite built for the host only
        pass
    return binding


#: x86 instructions that round float to bfloat16 but flush subnormal inputs
#: and results to zero, unlike the interpreter (and ml_dtypes)
_FLUSHING_BF16 = ("avx512bf16", "avxneconvert")


def _llvm_features(target: Target) -> str:
    """``target``'s features, without the x86 bfloat16 conversions that
    flush subnormals (LLVM then rounds with an exact helper)."""
    if not target.triple.startswith(("x86_64", "i386", "i686")):
        return target.features
    off = ",".join(f"-{name}" for name in _FLUSHING_BF16)
    return f"{target.features},{off}" if target.features else off


def create_target_machine(target: Target, *, codemodel: str = "jitdefault"):
    """A fresh llvmlite TargetMachine for ``target`` at its optimisation
    level: the host's for ``llvm`` targets, NVPTX for ``cuda`` (whose arch
    must be resolved, see :meth:`Target.with_arch`). An execution engine
    takes ownership of the one it is given; the caller closes any other."""
    with LLVM_LOCK:
        binding = initialise_llvm()
        try:
            tgt = binding.Target.from_triple(target.triple)
        except RuntimeError as err:
            raise BuildError(f"LLVM does not know the triple {target.triple!r}: {err}") from None
        if target.kind == "cuda":
            if not target.cpu:
                raise BuildError("a CUDA target needs its arch resolved before code generation")
            return tgt.create_target_machine(cpu=target.cpu, features=target.features,
                                             opt=target.opt_level, reloc="default",
                                             codemodel="default")
        return tgt.create_target_machine(cpu=target.cpu, features=_llvm_features(target),
                                         opt=target.opt_level, reloc="default",
                                         codemodel=codemodel)


__all__ = ["Target", "MATH_MODES", "host_description", "create_target_machine", "initialise_llvm",
           "LLVM_LOCK", "DEFAULT_OPT_LEVEL", "DEFAULT_CUDA_ARCH", "NVPTX_TRIPLE", "TAGS",
           "CUDA_MAX_THREADS_PER_BLOCK", "CUDA_MAX_SHARED_MEMORY", "CUDA_WARP_SIZE",
           "CUDA_DIM_LIMITS"]
