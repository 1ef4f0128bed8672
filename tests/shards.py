"""Run the test suite in shards, one pytest process per core: what ``make
test`` runs.

Each test file goes to one shard. Files are dealt out largest first, each
to the shard with the least work so far, by the seconds each file took in a
recorded run (``durations.json`` beside this script; a file the record
does not know counts as the median file). The shards run at once. The first
one prints as it goes; the others print their output when they end, in
order. The exit status is the first shard's that failed, else 0.

    python tests/shards.py              # one shard per core
    python tests/shards.py --jobs 1     # one pytest, as `pytest tests` runs it
    python tests/shards.py --record     # one pytest, then write durations.json
    python tests/shards.py -- -x -k foo # arguments for every pytest

The record only balances the shards: a stale or missing entry costs
balance, never a test.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RECORD = HERE / "durations.json"


def test_files() -> list[str]:
    """Every test file of the suite, relative to the repository root."""
    return sorted(str(p.relative_to(ROOT)) for p in HERE.rglob("test_*.py"))


def deal(files: list[str], weights: dict[str, float], jobs: int) -> list[list[str]]:
    """``files`` in ``jobs`` shards of about equal recorded time: largest
    first, each to the shard with the least so far."""
    known = [weights[f] for f in files if f in weights]
    default = statistics.median(known) if known else 1.0
    shards: list[list[str]] = [[] for _ in range(jobs)]
    load = [0.0] * jobs
    for f in sorted(files, key=lambda f: (-weights.get(f, default), f)):
        k = load.index(min(load))
        shards[k].append(f)
        load[k] += weights.get(f, default)
    return [sorted(s) for s in shards if s]


def _pytest(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", *args]


def run_shards(jobs: int, extra: list[str]) -> int:
    """Run the suite in ``jobs`` pytest processes at once (``extra``: their
    arguments); the exit status is the first failing process's, else 0."""
    weights = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    shards = deal(test_files(), weights, jobs)
    started = time.perf_counter()
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, files in enumerate(shards):
            if k == 0:
                procs.append((subprocess.Popen(_pytest([*extra, *files]), cwd=ROOT), None))
                continue
            log = open(Path(tmp) / f"shard{k}.log", "w+")
            procs.append((subprocess.Popen(_pytest([*extra, *files]), cwd=ROOT, stdout=log,
                                           stderr=subprocess.STDOUT), log))
        codes = []
        for k, (proc, log) in enumerate(procs):
            codes.append(proc.wait())
            if log is not None:
                log.seek(0)
                sys.stdout.write(f"\n--- shard {k + 1} of {len(shards)} ({len(shards[k])} files) ---\n")
                sys.stdout.write(log.read())
                log.close()
    seconds = time.perf_counter() - started
    print(f"\n{len(shards)} shards, exit codes {codes}, {seconds:.0f} s in all")
    return next((c for c in codes if c != 0), 0)


def record(extra: list[str]) -> int:
    """Run the suite in one process and write the seconds of each file."""
    out = subprocess.run(_pytest([*extra, "--durations=0", "tests"]), cwd=ROOT, capture_output=True, text=True)
    sys.stdout.write(out.stdout[-3000:])
    seconds: dict[str, float] = {}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(tests/\S+?\.py)::", line)
        if m:
            seconds[m.group(2)] = seconds.get(m.group(2), 0.0) + float(m.group(1))
    RECORD.write_text(json.dumps({f: round(s, 1) for f, s in sorted(seconds.items())}, indent=1) + "\n")
    return out.returncode


def main(argv: list[str]) -> int:
    """The command line: see the module's docstring."""
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    if "--record" in own:
        return record(extra)
    jobs = int(own[own.index("--jobs") + 1]) if "--jobs" in own else (os.cpu_count() or 1)
    if jobs <= 1:
        # the whole suite, unless the arguments name what to run
        named = any((ROOT / a.split("::")[0]).exists() for a in extra if not a.startswith("-"))
        return subprocess.call(_pytest(extra if named else [*extra, "tests"]), cwd=ROOT)
    return run_shards(jobs, extra)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
