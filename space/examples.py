"""Example documents for the document box: one BBC News Summary test article per topic (with its
reference summary, so ROUGE shows too) and one two-topic article where the controls visibly steer the
summary.

They are committed (``space/examples.json``), so the Space, on the Hub or from a plain clone, needs
no data folder; ``python -m space.examples [--data-dir DIR]`` rebuilds the file from the data.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from metrics.text import sentences
from variants.sources import add_data_dir_argument, load_source, set_data_dir

EXAMPLES_FILE = Path(__file__).resolve().parent / "examples.json"


def load_examples() -> list[list[str]]:
    """``[document, reference]`` pairs (reference ``""`` for the two-topic article)."""
    return json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))


def build_examples(per_topic: int = 1) -> list[list[str]]:
    """The first ``per_topic`` ``bbc_summary`` test articles of each topic, then the first and last
    picked articles' sentences in turn, as in the topic paper's super-articles."""
    by_topic: dict[str, list[dict]] = {}
    for record in load_source("bbc_summary", "test"):
        by_topic.setdefault(record.get("topic", "?"), []).append(record)
    picked = [r for group in by_topic.values() for r in group[:per_topic]]
    examples = [[r["source"], r.get("target", "")] for r in picked]
    first, second = sentences(picked[0]["source"])[:5], sentences(picked[-1]["source"])[:5]
    examples.append([" ".join(s for pair in zip(first, second) for s in pair), ""])
    return examples


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m space.examples", description="Rebuild space/examples.json.")
    parser.add_argument("--out", type=Path, default=EXAMPLES_FILE)
    add_data_dir_argument(parser)
    args = parser.parse_args(argv)
    set_data_dir(args.data_dir)
    args.out.write_text(json.dumps(build_examples(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{args.out}: {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
