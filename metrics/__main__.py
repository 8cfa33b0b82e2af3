"""``python -m metrics NAME FILE.jsonl``: score a JSONL file, print one JSON object.

The object holds the corpus score(s) and one entry per line (``examples``). Errors in the file name
the ``file:line`` and the field; the exit status is 2 for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from metrics import METRICS
from metrics.io import DataError, read_jsonl
from metrics.text import MissingNLTKData


def build_parser() -> argparse.ArgumentParser:
    fields = []
    for name, module_name in METRICS.items():
        module = importlib.import_module(module_name)
        fields.append(f"{name}:\n{module.FIELDS.strip()}\n")
    parser = argparse.ArgumentParser(
        prog="python -m metrics",
        description="Score summaries in a JSONL file (one JSON object per line) with one of SteerSum's metrics.",
        epilog="JSONL fields per metric:\n\n" + "\n".join(fields),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", choices=sorted(METRICS), help="the metric")
    parser.add_argument("file", help="JSONL file, one example per line")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print the JSON output")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module = importlib.import_module(METRICS[args.name])
    try:
        result = module.score_records(read_jsonl(args.file), source=args.file)
    except (DataError, MissingNLTKData) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=args.indent, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
