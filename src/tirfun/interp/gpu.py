"""The GPU meaning of a thread-bound PrimFunc.

``interp.run`` of a function with thread-bound loops (``T.thread_binding``
to ``blockIdx.*``, ``threadIdx.*``, ``vthread*``) or launched threads
(``T.launch_thread``) runs it as the GPU does:

* each kernel (an outermost thread-bound statement) is launched where the
  host code reaches it; every thread of every thread block runs the whole
  kernel body, and each thread-bound loop inside it takes the thread's
  index for its tag. Loops bound to one tag in one kernel must have the
  same extent, as TVM requires;
* ``shared`` buffers allocated inside the kernel are one per thread block,
  other allocations inside it one per thread; ``shared`` and ``local``
  buffers allocated outside it (at the root, where TensorIR schedules leave
  them) get fresh storage per block or per thread, as TVM's lowering moves
  them into the kernel; such a buffer that host code or another kernel
  uses too is an InterpError (no value crosses into or out of the kernel:
  CUDA has no such program); every other buffer from outside is global
  memory;
* the threads of a block run phase by phase: each runs until its next
  ``T.tvm_storage_sync("shared")`` (a barrier of the block), and the next
  phase starts when all have arrived. ``"warp"`` orders the threads of one
  warp of 32; ``"global"`` waits for every thread of every block. A barrier
  that some threads reach and others do not (divergent control flow) is an
  InterpError;
* virtual threads (``vthread``) are loops of their thread, as TVM's
  virtual-thread injection makes them
  (:mod:`tirfun.analysis.virtual_threads`, run on the function first):
  one with no barrier inside runs its iterations one after another; one
  with a barrier inside is split there, so that
  every virtual thread reaches the barrier before any passes it. What lies
  outside the loop runs once per thread;
* a cross-thread reduction (a reduction block whose reduction variable
  comes from a ``threadIdx`` loop; TVM lowers it to an all-reduce) runs
  between two barriers, its threads updating the output in turn; an
  output of ``local`` scope (one per thread) passes from each thread's copy
  to the next one's, and every copy holds the whole result at the end, as
  TVM's all-reduce leaves it;
* a warp shuffle (``T.tvm_warp_shuffle``, ``_down``, ``_up``) waits until
  every lane of its mask has reached it, then gives each lane the value of
  its source lane, chosen as PTX's ``shfl.sync`` with CUDA's width clamp
  does; a mask naming a lane the warp lacks, lanes of the mask that diverge,
  or a read of a lane outside the mask (whose value is undefined) is an
  InterpError;
* two different threads touching one element between two barriers, at
  least one of them writing, is a data race: an InterpError naming the
  buffer, the index, both threads and both statements. Threads of
  different blocks race on global memory whenever they touch one element
  in one kernel, one of them writing (unless a global barrier lies between).
  A store that leaves an element's bits as they were (every thread writing
  the same value, as after compute_at places a producer under thread loops
  before its copy is shared out) races with nothing, and a thread that
  reads an element after storing to it in the same phase reads its own
  value: every order of the threads gives the same result there. A store
  that changes the bits still races with every other thread's access.

Barriers are taken as written: TVM inserts them when it lowers a schedule
(its thread-sync pass), so a TensorIR schedule that stages data through
shared memory without an explicit ``T.tvm_storage_sync`` is reported as a
race here, and the message says so; interpret the lowered program
(``tirfun.lower(mod, target="cuda")``) to run it with the barriers
lowering placed, and to check them.

Recording accesses costs time, so functions without thread-bound code run
on the plain path of :mod:`.compile`.
"""

from __future__ import annotations

import functools
import itertools

import attrs
import numpy as np

from ..analysis.nesting import guard_depth
from ..analysis.threads import binds_threads
from ..analysis.kernel_storage import crossing_kernel_storage
from ..analysis.virtual_threads import Undistributable, inject_virtual_threads
from ..errors import InterpError
from ..nodes import PrimFunc
from .compile import CompiledFunc, statement_text, translate
from .gpu_codegen import GpuCompiler
from .semantics import Fault

_WARP = 32
_DIMS = {"blockIdx": ("blockIdx.x", "blockIdx.y", "blockIdx.z"),
         "threadIdx": ("threadIdx.x", "threadIdx.y", "threadIdx.z")}


@functools.lru_cache(maxsize=1024)
def is_thread_bound(func: PrimFunc) -> bool:
    """Whether ``func`` has a thread-bound loop or a launched thread."""
    return binds_threads(func.body)


@guard_depth(InterpError)
@functools.lru_cache(maxsize=256)
def compile_gpu(func: PrimFunc) -> CompiledFunc:
    """Translate a thread-bound ``func`` into Python with the GPU's meaning
    (cached per function value). Virtual threads become loops of their
    thread first, as lowering makes them
    (:mod:`tirfun.analysis.virtual_threads`)."""
    try:
        func = inject_virtual_threads(func)
    except Undistributable as exc:
        raise InterpError(f"a barrier (T.tvm_storage_sync) inside a loop bound to a vthread, which "
                          f"cannot be split there: {exc.why}:\n{_indent(statement_text(exc.stmt, 6))}"
                          ) from None
    check_kernel_storage(func)
    return translate(func, GpuCompiler(func), _launcher)


def check_kernel_storage(func: PrimFunc) -> None:
    """Raise an InterpError when a ``shared`` or ``local`` buffer allocated
    outside the kernels is used in two places of {host code, each kernel}
    (:func:`~tirfun.analysis.kernel_storage.crossing_kernel_storage`).

    TVM's lowering allocates such a buffer inside the kernel that uses it
    (per thread block or per thread), and the interpreter does the same (a
    fresh storage at each launch): what host code or another kernel wrote
    there never reaches the kernel, and what the kernel wrote never leaves
    it. CUDA has no such program (the CUDA build refuses it too), so it has
    no meaning to give; reading the never-written storage would otherwise
    pass for one.
    """
    crossing = crossing_kernel_storage(func)
    if crossing is not None:
        raise InterpError(crossing.message(lambda s: statement_text(s, 4)))


def _launcher(compiler: GpuCompiler) -> dict:
    """The launcher of the kernels ``compiler`` recorded."""
    program = _Program(tuple(compiler.kernels), tuple(compiler.sites), tuple(compiler.barriers))
    return {"h_launch": program.launch}


@attrs.frozen
class _Program:
    """The kernels, access sites and barriers of one compiled function."""

    kernels: tuple
    sites: tuple
    barriers: tuple

    def launch(self, k: int, thread_fn, values: tuple, live: tuple) -> None:
        """Run kernel ``k``: ``values`` are (start, extent) per binding."""
        dims = self.dims(k, values)
        used = [t for t in itertools.chain(*_DIMS.values()) if t in dims]
        grid = _space(dims, _DIMS["blockIdx"])
        threads = _space(dims, _DIMS["threadIdx"])
        if not grid or not threads:
            return
        races = _Races(self, used)
        paused = []
        for b in grid:
            block = _Block(self, races, thread_fn, live, b, threads)
            if block.run() is not None:
                paused.append(block)
        while paused:
            sites = {blk.waiting for blk in paused}
            if len(paused) != len(grid) or len(sites) != 1:
                raise Fault("T.tvm_storage_sync(\"global\") in divergent control flow: not every "
                            "thread block reaches the same global barrier\n  barrier:\n"
                            + _indent(statement_text(self.barriers[paused[0].waiting])))
            races.global_map.clear()
            paused = [blk for blk in paused if blk.run() is not None]

    def dims(self, k: int, values: tuple) -> dict:
        """The extent of each tag, checked to agree across the kernel's loops."""
        dims: dict = {}
        first: dict = {}
        for n, binding in enumerate(self.kernels[k].bindings):
            lo, ext = values[2 * n], values[2 * n + 1]
            tag = binding.tag
            if tag not in dims:
                dims[tag], first[tag] = ext, (lo, binding.stmt)
                continue
            if dims[tag] != ext or first[tag][0] != lo:
                what = (f"extent, but {dims[tag]} and {ext}" if dims[tag] != ext
                        else f"start, but {first[tag][0]} and {lo}")
                raise Fault(f"all loops bound to {tag} in one kernel must have the same {what} "
                            f"differ:\n{_indent(statement_text(first[tag][1], 2))}\nand\n"
                            f"{_indent(statement_text(binding.stmt, 2))}")
        return dims


def _space(dims: dict, tags: tuple) -> list[dict]:
    """Every combination of index values of ``tags`` (x fastest)."""
    extents = [max(dims.get(t, 1), 0) for t in tags]
    out = []
    for combo in itertools.product(*[range(e) for e in reversed(extents)]):
        out.append(dict(zip(reversed(tags), combo)))
    return out


class _Lane:
    """One thread: its generator and where it waits."""

    __slots__ = ("gen", "ix", "key", "warp", "lane", "waiting", "done", "payload", "inbox")

    def __init__(self, gen, ix: dict, key: tuple, warp: int, lane: int):
        self.gen, self.ix, self.key, self.warp, self.lane = gen, ix, key, warp, lane
        self.waiting = None   # (kind, barrier) while paused at a barrier or a shuffle
        self.done = False
        self.payload = None   # a shuffle's (mask, value, kind, lane, width, warp size)
        self.inbox = None     # the value a shuffle gave, sent when the thread resumes


class _Block:
    """The threads of one thread block, run phase by phase."""

    def __init__(self, program, races, thread_fn, live, bix: dict, threads):
        self.program, self.races = program, races
        self.bix = bix
        self.shared: dict = {}
        self.carries: dict = {}    # (step, group) -> (threads that took a turn, partial result per storage)
        self.snapshots: dict = {}  # thread -> its storages' contents when its turn began
        self.lanes = []
        self.waiting = None
        bkey = tuple(sorted(bix.items()))
        for n, tix in enumerate(threads):
            key = (bkey, tuple(sorted(tix.items())))
            ix = {**bix, **tix}
            self.lanes.append(_Lane(None, ix, key, n // _WARP, n % _WARP))
        self.thread_fn, self.live = thread_fn, live

    def run(self):
        """Run until every thread finishes (None) or waits at a global
        barrier (its index, kept in ``waiting``)."""
        races = self.races
        races.enter_block(self)
        while True:
            for lane in self.lanes:
                if lane.done or lane.waiting is not None:
                    continue
                races.lane = lane
                if lane.gen is None:
                    lane.gen = self.thread_fn(*self.live, lane.ix, races)
                try:
                    waiting = lane.gen.send(lane.inbox)
                except StopIteration:
                    lane.done = True
                    continue
                lane.inbox = None
                if waiting is not None and waiting[0] == "shfl":
                    lane.payload = waiting[2]
                    waiting = waiting[:2]
                lane.waiting = waiting
            if self.release_shuffles() or self.release_warps():
                continue
            waits = {lane.waiting for lane in self.lanes}
            if waits == {None}:
                return None
            if len(waits) != 1:
                self.divergent()
            (kind, barrier), = waits
            for lane in self.lanes:
                lane.waiting = None
            races.block_map.clear()
            if kind == "global":
                self.waiting = barrier
                return barrier

    def release_warps(self) -> bool:
        """Let warps whose threads all wait at one warp barrier go on."""
        released = False
        by_warp: dict = {}
        for lane in self.lanes:
            by_warp.setdefault(lane.warp, []).append(lane)
        for warp, lanes in by_warp.items():
            waits = {lane.waiting for lane in lanes}
            if not any(w is not None and w[0] == "warp" for w in waits):
                continue
            if len(waits) != 1:
                self.divergent(lanes)
            for lane in lanes:
                lane.waiting = None
            self.races.epochs[warp] = self.races.epochs.get(warp, 0) + 1
            released = True
        return released

    def release_shuffles(self) -> bool:
        """Complete the warp shuffles at which every lane of the mask waits:
        each lane gets the value of its source lane (see :func:`_source_lane`)."""
        released = False
        by_warp: dict = {}
        for lane in self.lanes:
            if lane.waiting is not None and lane.waiting[0] == "shfl":
                by_warp.setdefault(lane.warp, []).append(lane)
        for warp, waiting in by_warp.items():
            lanes = {lane.lane: lane for lane in self.lanes if lane.warp == warp}
            first = waiting[0]
            where = _indent(statement_text(self.program.barriers[first.waiting[1]]))
            who = f"thread ({self.races.who(first)})"
            mask = int(first.payload[0]) & 0xFFFFFFFF
            members = [i for i in range(_WARP) if mask >> i & 1]
            if first.lane not in members:
                raise Fault(f"{who} runs a warp shuffle whose mask {mask:#010x} leaves out its "
                            f"own lane {first.lane}:\n{where}")
            for i in members:
                other = lanes.get(i)
                if other is None:
                    raise Fault(f"{who} runs a warp shuffle whose mask {mask:#010x} names lane "
                                f"{i}, which its warp does not have (the block has "
                                f"{len(self.lanes)} threads):\n{where}")
                if other.waiting != first.waiting or int(other.payload[0]) & 0xFFFFFFFF != mask:
                    what = ("has finished" if other.done else "waits elsewhere" if
                            other.waiting is None or other.waiting[0] != "shfl" or
                            other.waiting != first.waiting else "gives another mask")
                    raise Fault(f"warp shuffle in divergent control flow: {who} waits at\n{where}"
                                f"\nwhile thread ({self.races.who(other)}), lane {i} of its "
                                f"mask, {what}")
            for i in members:
                lane = lanes[i]
                _, value, kind, b, width, size = lane.payload
                src = _source_lane(kind, i, int(b), int(width), int(size), who, where)
                if src not in members:
                    raise Fault(f"thread ({self.races.who(lane)}) reads lane {src} in a warp "
                                f"shuffle, outside the mask {mask:#010x}: the value is "
                                f"undefined\n{where}")
                lane.inbox = lanes[src].payload[1]
            for i in members:
                lanes[i].waiting = lanes[i].payload = None
            released = True
        return released

    def divergent(self, lanes=None):
        lanes = lanes or self.lanes
        first = next(lane for lane in lanes if lane.waiting is not None)
        other = next(lane for lane in lanes if lane.waiting != first.waiting)
        kind, barrier = first.waiting
        text = ("has finished" if other.waiting is None else
                "waits at another barrier:\n" + _indent(statement_text(
                    self.program.barriers[other.waiting[1]])))
        raise Fault(f"barrier in divergent control flow: thread ({self.races.who(first)}) waits at "
                    f"T.tvm_storage_sync(\"{kind}\")\n{_indent(statement_text(self.program.barriers[barrier]))}"
                    f"\nwhile thread ({self.races.who(other)}) {text}")


class _Races:
    """Records who touched each element in the current phase, and reports
    two unordered accesses by different threads, one of them a write."""

    def __init__(self, program, used_tags):
        self.program = program
        self.used = list(used_tags)
        self.block_map: dict = {}
        self.global_map: dict = {}
        self.epochs: dict = {}
        self.lane = None
        self.block = None
        self._pending = None  # the bits and site of the store being made

    def enter_block(self, block) -> None:
        self.block = block
        self.block_map.clear()
        self.epochs.clear()

    # a cross-thread reduction into storage each thread has its own of
    def _group_key(self, step: int, tags: tuple) -> tuple:
        """The reduction ``step`` of the current thread's group: the threads
        that differ from it in the thread indices ``tags`` only."""
        return step, tuple(sorted((t, v) for t, v in self.lane.ix.items() if t not in tags))

    def reduce_enter(self, step: int, tags: tuple, storages: tuple) -> None:
        """The current thread starts its turn in cross-thread reduction
        ``step`` over ``tags``: its ``storages`` take the partial result the
        threads of its group (those differing in ``tags`` only) left so far."""
        lane = self.lane
        key = self._group_key(step, tags)
        carry = self.block.carries.get(key)
        if carry is None or lane in carry[0]:
            # the first turn of this pass (a loop around the step runs it again)
            carry = self.block.carries[key] = (set(), [{} for _ in storages])
        carry[0].add(lane)
        for storage, values in zip(storages, carry[1]):
            for offset, value in values.items():
                storage[offset] = value
        self.block.snapshots[lane] = [list(storage) for storage in storages]

    def reduce_leave(self, step: int, tags: tuple, storages: tuple) -> None:
        """The current thread ends its turn: what it changed joins the partial result."""
        lane = self.lane
        key = self._group_key(step, tags)
        before = self.block.snapshots.pop(lane)
        for storage, old, values in zip(storages, before, self.block.carries[key][1]):
            for offset, value in enumerate(old):
                new = storage[offset]
                if not _same_bits(value, new):
                    values[offset] = new

    def reduce_final(self, step: int, tags: tuple, storages: tuple) -> None:
        """After every turn: each thread's copy holds the whole result."""
        key = self._group_key(step, tags)
        for storage, values in zip(storages, self.block.carries[key][1]):
            for offset, value in values.items():
                storage[offset] = value

    def shared(self, name: str, fresh):
        """The thread block's storage of shared buffer ``name`` (``fresh``
        the first time a thread of the block allocates it)."""
        return self.block.shared.setdefault(name, fresh)

    # the generated code calls these
    def load_block(self, storage, offset, site):
        self._phase(storage, offset, site, False)
        return storage[offset]

    def store_block(self, storage, offset, site):
        self._before_store(storage, offset, site)

    def stored_block(self, storage, offset):
        self._phase(storage, offset, self._pending[1], True, self._silent(storage, offset))

    def load_global(self, storage, offset, site):
        self._phase(storage, offset, site, False)
        self._kernel(storage, offset, site, False)
        return storage[offset]

    def store_global(self, storage, offset, site):
        self._before_store(storage, offset, site)

    def stored_global(self, storage, offset):
        site = self._pending[1]
        silent = self._silent(storage, offset)
        self._phase(storage, offset, site, True, silent)
        self._kernel(storage, offset, site, True, silent)

    def _before_store(self, storage, offset, site):
        self._pending = (_bits(storage[offset]), site)

    def _silent(self, storage, offset) -> bool:
        """Whether the store just made left the element's bits unchanged."""
        return _bits(storage[offset]) == self._pending[0]

    def _phase(self, storage, offset, site, write, silent=False):
        lane = self.lane
        epoch = self.epochs.get(lane.warp, 0)
        me = (lane, epoch, site)
        key = (id(storage), offset)
        entry = self.block_map.get(key)
        if entry is None:
            # storage (kept so its id stays its own for the phase), the
            # writers and the readers of the phase, by thread
            entry = self.block_map[key] = [storage, {}, {}]
        writers, readers = entry[1], entry[2]
        if write:
            if not silent:
                for others, writes in ((writers, True), (readers, False)):
                    for other in others.values():
                        if not self._ordered(other, me):
                            self._race(other, writes, me, True, offset)
            writers[lane.key] = me
        else:
            if lane.key not in writers:
                for other in writers.values():
                    if not self._ordered(other, me):
                        self._race(other, True, me, False, offset)
            readers[lane.key] = me

    def _ordered(self, a, b) -> bool:
        la, lb = a[0], b[0]
        return la.key == lb.key or (la.warp == lb.warp and a[1] != b[1])

    def _kernel(self, storage, offset, site, write, silent=False):
        lane = self.lane
        bkey = lane.key[0]
        me = (lane, site)
        key = (id(storage), offset)
        entry = self.global_map.get(key)
        if entry is None:
            # storage, the last writer, the readers by block, and the blocks
            # that stored the element themselves
            self.global_map[key] = [storage, me, {}, {bkey}] if write else [storage, None, {bkey: me}, set()]
            return
        writer, readers, stored = entry[1], entry[2], entry[3]
        if write and silent:
            # the same bits again: no order of the blocks tells them apart
            entry[1] = entry[1] or me
            stored.add(bkey)
            return
        # a block that stored the element itself reads its own bits, whatever
        # the order of the blocks: every other store so far wrote the same
        # bits (it was silent), and one that does not is caught when it comes
        if writer is not None and writer[0].key[0] != bkey and (write or bkey not in stored):
            self._race((writer[0], 0, writer[1]), True, (lane, 0, site), write, offset, blocks=True)
        if write:
            stored.add(bkey)
            for rkey, other in readers.items():
                if rkey != bkey:
                    self._race((other[0], 0, other[1]), False, (lane, 0, site), True, offset,
                               blocks=True)
            entry[1] = me
        elif len(readers) < 2:
            readers.setdefault(bkey, me)

    def who(self, lane) -> str:
        """The thread as ``blockIdx.x=0, threadIdx.x=3``."""
        return ", ".join(f"{t}={lane.ix[t]}" for t in self.used) or "the only thread"

    def _race(self, first, first_writes, second, second_writes, offset, blocks=False):
        sites = self.program.sites
        s1, s2 = sites[first[2]], sites[second[2]]
        buffer = s2.buffer if s1.buffer == s2.buffer else f"{s2.buffer} (seen as {s1.buffer} too)"
        where = ("in one kernel, in different thread blocks" if blocks else
                 "with no barrier between them")
        if not blocks and s1.shared and s2.shared and first_writes != second_writes:
            # the staging a TVM schedule writes without barriers: its
            # lowering places them, and so does tirfun's
            where += _LOWERING_PLACES_BARRIERS
        raise Fault(
            f"data race on buffer {buffer} at index {s2.index_of(offset)}: thread "
            f"({self.who(first[0])}) {'stores to' if first_writes else 'loads from'} it in\n"
            f"{_indent(statement_text(s1.stmt, 4))}\nand thread ({self.who(second[0])}) "
            f"{'stores to' if second_writes else 'loads from'} it in\n"
            f"{_indent(statement_text(s2.stmt, 4))}\n{where}")


_LOWERING_PLACES_BARRIERS = (
    "\n(barriers run as written here; lowering for the GPU places one where a thread of the block "
    "reads shared memory another wrote, or writes what another read, as TVM's thread-sync pass "
    "does: to run the program with them, interpret tirfun.lower(mod, target=\"cuda\"))")


def _bits(value) -> bytes:
    """An element's bits, so that 0.0 and -0.0 differ and NaN equals itself."""
    return np.asarray(value).tobytes()


def _source_lane(kind: str, lane: int, b: int, width: int, size: int, who: str,
                 where: str) -> int:
    """The lane whose value a shuffle gives ``lane``, as PTX's ``shfl.sync``
    with CUDA's clamp for ``width`` picks it: within the lane's segment of
    ``width`` lanes, else the lane itself."""
    if size != _WARP or width < 1 or width > _WARP or width & (width - 1):
        raise Fault(f"{who} runs a warp shuffle of width {width} and warp size {size}; the "
                    f"width must be a power of two up to {_WARP} and the warp size {_WARP}:\n"
                    f"{where}")
    low = lane & (_WARP - width)
    high = low | (width - 1)
    if kind == "idx":
        return low | (b & (width - 1))
    src = lane + b if kind == "down" else lane - b
    return src if low <= src <= high else lane


def _same_bits(x, y) -> bool:
    """Whether two element values are the same (any two NaNs alike, -0.0 not 0.0)."""
    if x == y:
        return x != 0 or str(x) == str(y)
    return x != x and y != y


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def run(func: PrimFunc, *args, **kwargs):
    """Run a thread-bound ``func`` with the GPU's meaning (see the module)."""
    return compile_gpu(func)(*args, **kwargs)


__all__ = ["is_thread_bound", "compile_gpu", "run"]
