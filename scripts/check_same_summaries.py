"""Record, then compare, the summaries every stored model writes on its first test examples.

A change to the decoding path (how ``generate`` is called, which processors it gets, how text is decoded)
must change structure, not behaviour. Run ``record`` before the change and ``compare`` after it:

    python scripts/check_same_summaries.py record summaries.json [--n 20] [--models ccs-lora ...]
    python scripts/check_same_summaries.py compare summaries.json

Each stored variant model (``store/index.json``; the general base has no controls and is read through its
adapters) summarizes its variant's first ``n`` test examples twice: as served (its record's decoding:
guidance strength, decoding rules, dtype) and alone (strength 1, no decoding rules). ``compare`` prints
the match counts per model and exits 1 when any summary differs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MODES = ("served", "alone")


def summaries(name: str, n: int) -> dict[str, list[str]]:
    """The summaries of stored model ``name`` on its variant's first ``n`` test examples, by mode."""
    from variants import load_summarizer

    summarizer = load_summarizer(name)
    examples = summarizer.variant.evaluation.test_examples(n)[:n]
    documents = [e["document"] for e in examples]
    controls = [e["controls"] for e in examples]
    strength = "control_strength" if hasattr(summarizer.settings, "control_strength") else "guidance"
    if hasattr(summarizer.settings, "alone"):
        alone = summarizer.settings.alone()
    else:  # the settings of code before the document-words rule
        alone = summarizer.settings.but(constraints=False, **{strength: 1.0})
    out = {}
    for mode, settings in (("served", summarizer.settings), ("alone", alone)):
        start = time.perf_counter()
        out[mode] = [s.text for s in summarizer.summarize(documents, controls, settings=settings)]
        print(f"{name} {mode}: {len(documents)} summaries in {time.perf_counter() - start:.0f} s", flush=True)
    return out


def stored_names() -> list[str]:
    import store

    return [m.name for m in store.servable()]


def record(path: Path, n: int, names: list[str]) -> None:
    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for name in names:
        recorded[name] = summaries(name, n)
        path.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def compare(path: Path, names: list[str] | None) -> int:
    recorded = json.loads(path.read_text(encoding="utf-8"))
    differs = 0
    for name in names or list(recorded):
        now = summaries(name, len(recorded[name]["served"]))
        for mode in MODES:
            before, after = recorded[name][mode], now[mode]
            same = sum(a == b for a, b in zip(before, after))
            differs += len(before) - same
            print(f"{name} {mode}: {same} of {len(before)} identical")
            for i, (a, b) in enumerate(zip(before, after)):
                if a != b:
                    print(f"  example {i}:\n    before: {a}\n    after:  {b}")
    return 1 if differs else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("file", type=Path)
    parser.add_argument("--n", type=int, default=20, help="test examples per model (record)")
    parser.add_argument("--models", nargs="*", help="stored model names (default: every stored variant model)")
    args = parser.parse_args(argv)
    if args.action == "record":
        record(args.file, args.n, args.models or stored_names())
        return 0
    return compare(args.file, args.models)


if __name__ == "__main__":
    sys.exit(main())
