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

    from .errors import TirfunError

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
            from .bench import run_benchmarks

            return run_benchmarks()
    except TirfunError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
