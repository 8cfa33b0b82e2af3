"""``python -m benchmarks leaderboard``: the command line of :mod:`benchmarks.leaderboard.harness`."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from variants import REGISTRY

from . import harness


def sample_caps(values: list[str] | None) -> int | dict[str, int] | None:
    """``--max-samples``: one cap for every variant (``500``), or per variant (``500 ccs=200``: ccs 200, the
    others 500; a variant not named and no plain number: all its examples)."""
    if not values:
        return None
    caps: dict[str, int] = {}
    default = None
    for value in values:
        name, _, number = value.rpartition("=")
        if not number.isdigit() or int(number) < 1 or (name and name not in REGISTRY):
            raise ValueError(
                f"--max-samples: {value!r} is not N or VARIANT=N with N >= 1 and VARIANT one of {', '.join(REGISTRY)}"
            )
        if name:
            caps[name] = int(number)
        else:
            default = int(number)
    if not caps:
        return default
    return {vid: caps.get(vid, default) for vid in REGISTRY}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks leaderboard",
        description=harness.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--models-dir", default="checkpoints", help="folder of checkpoint folders (steersum.json)")
    parser.add_argument("--out", default="leaderboard", help="output folder (default: ./leaderboard)")
    parser.add_argument(
        "--variants", nargs="+", metavar="ID", help=f"variants to run (default: all: {', '.join(REGISTRY)})"
    )
    parser.add_argument(
        "--max-samples",
        nargs="+",
        default=None,
        metavar="N|VARIANT=N",
        help="test examples per variant (default: all); VARIANT=N sets one variant's, e.g. 500 ccs=200",
    )
    parser.add_argument(
        "--catalog", default=None, help="JSON file of Hub ids pinned to revisions (see space/catalog.py)"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="sources per generate call (default: each model's generation settings)",
    )
    parser.add_argument(
        "--store-cards",
        action="store_true",
        help="then rewrite the model store's cards with what this leaderboard measured of each model",
    )
    parser.add_argument(
        "--guidance-only",
        action="store_true",
        help="rewrite only the control-strength table and guidance.png of the leaderboard in --out "
        "from the models' guidance sweeps (guidance_sweep.json), evaluating nothing",
    )
    args = parser.parse_args(argv)
    if args.guidance_only:
        from space.catalog import build_catalog

        from .guidance import refresh

        catalog = build_catalog(args.models_dir, args.catalog)
        board = refresh(Path(args.out), [e for vid in REGISTRY for e in catalog.models(vid, available=True)])
        print(f"control strength: {len(board)} model(s) with a guidance sweep -> {Path(args.out) / 'leaderboard.md'}")
        return
    unknown = sorted(set(args.variants or ()) - set(REGISTRY))
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; allowed: {', '.join(REGISTRY)}")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        max_samples = sample_caps(args.max_samples)
    except ValueError as err:
        parser.error(str(err))
    board = harness.run(args.models_dir, args.out, args.variants, max_samples, args.catalog, args.batch_size)
    if board is not None and args.store_cards:
        from training.storing_cards import rewrite_cards

        for path in rewrite_cards(board):
            print(f"rewrote {path}")
    if board is not None:
        print((Path(args.out) / "leaderboard.md").read_text(encoding="utf-8"))
