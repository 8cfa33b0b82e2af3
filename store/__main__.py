"""``python -m store``: the stored models and the budget check; ``python -m store push ORG``: publish them.

    python -m store                      # name, variant, steps, data, control effect; exits 1 over budget
    python -m store push ORG [--dry-run] [--private] [--hub-token TOKEN] [--out DIR]

``push`` exports the six stored models and the Space, checks every folder, and only then uploads them
(:mod:`hub_cards.publish`): one export that fails and nothing is pushed. ``--dry-run`` stops before the
first upload; ``--out`` keeps the exported folders. The token comes from ``--hub-token``, ``HF_TOKEN`` or
the login cache and is never printed.

The publishing code belongs to ``hub_cards``, a layer above the store (``tests/test_layout.py``); this
entry point only hands the command over to it, by name, so that the store's own modules import nothing above
them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys

from . import EMPTY, MAX_FILE_BYTES, MAX_TOTAL_BYTES, budget_problems, file_sizes, read_index


def listing() -> int:
    models = read_index()
    if not models:
        print(EMPTY)
    for m in models:
        print(
            f"{m.name:24} {m.variant:8} {m.method:16} {m.format:5} steps {m.steps}  data {', '.join(m.data)}  "
            f"effect {m.effect_text()}"
        )
    total = sum(file_sizes().values())
    print(
        f"store: {total / 1e6:.2f} MB of {MAX_TOTAL_BYTES / 1e6:.0f} MB; largest file "
        f"{max(file_sizes().values(), default=0) / 2**20:.2f} MiB of {MAX_FILE_BYTES / 2**20:.0f} MiB"
    )
    problems = budget_problems()
    for problem in problems:
        print(f"over budget: {problem}")
    return 1 if problems else 0


def push(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m store push", description="publish the store to the Hub")
    parser.add_argument("org", help="the Hub user or organisation the repos go under")
    parser.add_argument("--dry-run", action="store_true", help="export and check everything, upload nothing")
    parser.add_argument("--private", action="store_true", help="create the repos private")
    parser.add_argument("--hub-token", help="a token with write access (default: HF_TOKEN or the login cache)")
    parser.add_argument("--out", help="export into this folder (new or empty) and keep it")
    parser.add_argument("--hardware", help="the Space's suggested_hardware")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    publish = importlib.import_module("hub_cards.publish")
    errors = (
        importlib.import_module("hub_cards.export").ExportError,
        importlib.import_module("hub_cards.push").PushError,
    )
    try:
        result = publish.publish_store(
            args.org,
            dry_run=args.dry_run,
            private=args.private,
            token=args.hub_token,
            hardware=args.hardware,
            keep=args.out,
        )
    except errors as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    sys.exit(push(argv[1:]) if argv[:1] == ["push"] else listing())


if __name__ == "__main__":
    main()
