"""Command line: ``python -m tirfun tour | show FILE | bench``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tirfun", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tour", help="walk the TensorIR tutorial end to end")
    show = sub.add_parser("show", help="parse a TVMScript file and print it canonically")
    show.add_argument("file")
    sub.add_parser("bench", help="run the benchmarks and print their tables")
    args = parser.parse_args(argv)

    from .errors import ParseError, TirfunError

    try:
        if args.command == "tour":
            from .tour import run_tour

            run_tour()
        elif args.command == "show":
            from .script import from_source

            with open(args.file, encoding="utf-8") as f:
                text = f.read()
            from_source(text, filename=args.file).show()
        elif args.command == "bench":
            return _run_benchmarks()
    except TirfunError as err:
        # a ParseError already reads "file:line:col: error: ..."
        print(err if isinstance(err, ParseError) else f"error: {err}", file=sys.stderr)
        return 1
    return 0


def _run_benchmarks() -> int:
    """Run every script of the source tree's ``benchmarks/`` folder in turn,
    each in a fresh process so that one's threads and caches do not skew the
    next one's timings."""
    import pathlib
    import subprocess

    folder = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
    scripts = sorted(folder.glob("*.py")) if folder.is_dir() else []
    if not scripts:
        print("error: the benchmarks live in the source tree's benchmarks/ folder, "
              "which this installation does not have", file=sys.stderr)
        return 1
    status = 0
    for script in scripts:
        print(f"\n== {script.name} ==", flush=True)
        status = subprocess.call([sys.executable, str(script)]) or status
    return status


if __name__ == "__main__":
    sys.exit(main())
