"""Training data for TDSum: SciTLDR abstracts → TLDRs, or the XSum sample's articles → one-sentence
summaries, as SteerSum examples ``{"id", "document", "controls", "target", "dataset"}``.

    python -m training build-data tdsum --out data/tdsum [--source scitldr|xsum] [--seed 0]

TDSum's guidance is the TF-IDF of the document itself; a user's boosts come at inference. The val and
test splits ask for words, so that obeying a boost is measurable (:func:`reference_boosts`): up to two
content words of the author's TLDR that the document uses but does not rank among its top TF-IDF
terms, which a keyword extractor blind to the boosts would pick anyway. The words come from the
reference, not from the score that judges them (``boosted_found``). A seeded share of the training
examples (``--train-boost-share``, default half) carries the same kind of boosts, as GSum trains on
oracle guidance: a model trained on plain TF-IDF alone never sees a score of 1.0 and ignored boosts
(docs/log.md). The rest keep empty controls, so the model also summarizes
without any. Each example also keeps all its ``references`` and, for SciTLDR, the paper ``title``, the
fields ROUGE-K's keyword extraction reads (``python -m metrics rouge-k``; Sec. 3).

SciTLDR keeps its official splits; the target of a dev/test paper with several TLDRs is the first
(the author's). The XSum sample (800 articles, one split) is shuffled with ``--seed`` and cut 80/10/10.
The paper trains on SciTLDR with full texts (5,000 words on average, Table 4); the bundled SciTLDR is
the abstract-only SciTLDR-A.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from metrics.io import write_jsonl
from metrics.text import STOPWORDS, decoy_words, words
from variants.sources import add_data_dir_argument, load_source, set_data_dir

SCITLDR_SPLITS = {"train": "train", "val": "dev", "test": "test"}
BOOSTS_PER_EXAMPLE = 2
BLIND_TOP_TERMS = 10  # a document's terms this high in TF-IDF are never asked for: blind extraction finds them


def scitldr_examples(split: str) -> list[dict]:
    records = load_source("scitldr", SCITLDR_SPLITS[split])
    return [
        {
            "id": f"scitldr-{split}-{r['id']}",
            "document": r["source"],
            "controls": {},
            "target": r["targets"][0],
            "dataset": "scitldr",
            "references": r["targets"],
            "title": r["title"],
        }
        for r in records
        if r["source"].strip() and r["targets"]
    ]


def reference_boosts(example: dict, assets) -> list[str]:
    """The first content words of the example's target (not stop words, at least 4 letters) that its
    document contains and does not rank among its top :data:`BLIND_TOP_TERMS` TF-IDF terms (``assets``:
    :class:`variants.tdsum.TDSumAssets`), at most :data:`BOOSTS_PER_EXAMPLE`."""
    in_document = set(words(example["document"]))
    blind = set(assets.top_terms(example["document"], BLIND_TOP_TERMS))
    wanted = [
        w
        for w in dict.fromkeys(words(example["target"]))
        if w.isalpha() and len(w) >= 4 and w not in STOPWORDS and w in in_document and w not in blind
    ]
    return wanted[:BOOSTS_PER_EXAMPLE]


def with_reference_boosts(examples: list[dict], assets, seed: int = 0) -> list[dict]:
    """The val or test split: each example with its :func:`reference_boosts`; examples with none are dropped.
    Each also carries ``shuffled_controls``: as many other words of its own document, none of its
    target's (:func:`metrics.text.decoy_words`), for the shuffled pass. Boosts drawn from another
    document were mostly words this document lacks, which no summary writes whatever it is asked."""
    out = []
    for e in examples:
        if boosts := reference_boosts(e, assets):
            rng = random.Random(f"{seed}:{e['id']}")
            decoys = decoy_words(e["document"], e["target"], len(boosts), rng)
            out.append(
                {**e, "controls": {"boost": boosts}, **({"shuffled_controls": {"boost": decoys}} if decoys else {})}
            )
    return out


def with_some_training_boosts(examples: list[dict], assets, share: float, seed: int) -> list[dict]:
    """A seeded ``share`` of the examples with their :func:`reference_boosts` (where they have any)."""
    chosen = random.Random(seed).sample(range(len(examples)), round(share * len(examples)))
    out = list(examples)
    for i in chosen:
        if boosts := reference_boosts(examples[i], assets):
            out[i] = {**examples[i], "controls": {"boost": boosts}}
    return out


def xsum_examples(seed: int) -> dict[str, list[dict]]:
    records = load_source("xsum", "sample")
    random.Random(seed).shuffle(records)
    cut_train, cut_val = int(0.8 * len(records)), int(0.9 * len(records))
    parts = {"train": records[:cut_train], "val": records[cut_train:cut_val], "test": records[cut_val:]}
    return {
        split: [
            {
                "id": f"xsum-{r['id']}",
                "document": r["source"],
                "controls": {},
                "target": r["target"],
                "dataset": "xsum",
                "references": [r["target"]],
            }
            for r in rows
        ]
        for split, rows in parts.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training build-data tdsum",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", required=True, help="output folder for {train,val,test}.jsonl")
    parser.add_argument("--source", choices=["scitldr", "xsum"], default="scitldr")
    parser.add_argument(
        "--seed", type=int, default=0, help="xsum: shuffle before splitting; the training boosts' draw"
    )
    parser.add_argument(
        "--train-boost-share",
        type=float,
        default=0.5,
        help="share of training examples given their reference's words as boosts (default 0.5)",
    )
    add_data_dir_argument(parser)
    args = parser.parse_args(argv)
    if not 0.0 <= args.train_boost_share <= 1.0:
        parser.error(f"--train-boost-share must be in [0, 1], got {args.train_boost_share}")
    set_data_dir(args.data_dir)
    splits = (
        {split: scitldr_examples(split) for split in SCITLDR_SPLITS}
        if args.source == "scitldr"
        else xsum_examples(args.seed)
    )
    from . import default_assets

    assets = default_assets()
    splits["train"] = with_some_training_boosts(splits["train"], assets, args.train_boost_share, args.seed)
    # val asks for words as test does: the decoding and γ are chosen there, on the boosts they must obey
    splits["val"] = with_reference_boosts(splits["val"], assets)
    splits["test"] = with_reference_boosts(splits["test"], assets)
    for split, examples in splits.items():
        path = Path(args.out) / f"{split}.jsonl"
        write_jsonl(path, examples)
        references = sum(len(e["references"]) for e in examples) / max(len(examples), 1)
        print(f"{path}: {len(examples)} {args.source} examples, {references:.2f} references on average")


if __name__ == "__main__":
    main()
