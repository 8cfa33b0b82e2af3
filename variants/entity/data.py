"""EntSUM's proxy training data (Maddela et al. Sec. 4.1.4): entity-centric examples from generic
(article, reference summary) pairs, since entity-centric references exist only for evaluation.

One example per (article, entity), for every person or organization the article names (spaCy NER,
:func:`variants.entity.named_entities`) in at least ``--min-mentions`` sentences (EntSUM keeps salient
entities, which are "generally mentioned" more than once, Sec. 3.3.1). Its target, the **proxy target**:

  (a) at most three reference sentences that mention the entity;
  (b) with fewer than three, the rest from the lead three sentences of the article that mention it
      (Lead3ent), skipping any already taken.

A mention is the entity's full name or surname as whole words (:mod:`metrics.entity`).

The **test** split is built by rule (a) only: the reference sentences that name the entity, pairs whose
reference never names it dropped. Rule (b) is Lead3ent's own rule, so a test target made with it would
reward the baseline by construction (with (a)+(b), 321 of the 432 CNN/DM test targets were Lead3ent's
output). EntSUM too uses proxy targets for training only. ``bbc_summary``'s references are sentences
people picked from the article, so its test split is the main test set; CNN/DM's (highlights, written
anew) is the second. A ``bbc_summary`` reference can name the entity in exactly the article's first
sentences that name it; such a target *is* Lead3ent's output, and those pairs (27 of 341 in the
bundled test split) are dropped too, so the test set never contains the baseline's own output.

Each test example also carries ``shuffled_controls``: another entity the same document names
(:func:`other_entity`), which the shuffled-controls pass gives it (:mod:`training.evaluate`). Drawn
from the whole test set instead, 408 of 423 shuffled entities did not occur in their document, and a
summary of any of the document's entities beat such a pass.

    python -m training build-data entity --out data/entity [--sources cnndm_sample bbc_summary]
                                         [--min-mentions 2] [--max-entities N] [--limit N]

Writes ``{train,val,test}.jsonl`` (both sources together, ``dataset`` naming each) and prints counts. The
output depends only on the data and the options: NER is deterministic and order is the files' order.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path

from tqdm.auto import tqdm

from metrics.entity import aliases, sentences_mentioning
from metrics.io import write_jsonl
from variants.sources import add_data_dir_argument, load_source, set_data_dir

from . import named_entities, salient_entities
from .baseline import LEAD, lead_sentences, naming

SOURCES = ("cnndm_sample", "bbc_summary")
SPLITS = ("train", "val", "test")


def proxy_target(document: str, reference: str, entity: str, n: int = LEAD) -> tuple[list[str], int]:
    """The proxy target's sentences and how many of them come from the reference (rule (a) then (b)), picked by
    the variant's matcher (:func:`variants.entity.baseline.naming`), not the metric's: a target the metric's
    own matcher picked would teach the model to write what the metric counts."""
    picked = naming(reference, entity)[:n]
    from_reference = len(picked)
    seen = {" ".join(s.split()).lower() for s in picked}
    for sentence in lead_sentences(document, entity, n):
        key = " ".join(sentence.split()).lower()
        if len(picked) < n and key not in seen:  # bbc_summary references are article sentences
            picked.append(sentence)
            seen.add(key)
    return picked, from_reference


def reference_target(reference: str, entity: str, n: int = LEAD) -> tuple[list[str], int]:
    """A test target, rule (a) only: at most ``n`` reference sentences that name the entity (none: no target)."""
    picked = sentences_mentioning(reference, entity)[:n]
    return picked, len(picked)


def same_sentences(first: list[str], second: list[str]) -> bool:
    """Whether two lists hold the same sentences, ignoring case and spacing."""
    return [" ".join(s.split()).lower() for s in first] == [" ".join(s.split()).lower() for s in second]


def other_entity(entity: str, named: list[tuple[str, int]], min_mentions: int, seed: str) -> str | None:
    """The entity a test example is given in the shuffled pass: another entity the same document names,
    drawn (seeded by the example's id) among the salient ones (named in ``min_mentions`` sentences),
    else among any it names; never one sharing a name with ``entity`` ("Cherie Blair" for "Tony Blair").
    A summarizer given it can only be rewarded for the asked entity by reading the document, not by
    writing a name the document never mentions (the shuffled pass across documents allowed that)."""
    own = {a.lower() for a in aliases(entity)}
    others = [(name, k) for name, k in named if name != entity and not own & {a.lower() for a in aliases(name)}]
    pool = [name for name, k in others if k >= min_mentions] or [name for name, _ in others]
    return random.Random(seed).choice(pool) if pool else None


def entity_examples(
    records: list[dict],
    dataset: str,
    min_mentions: int = 2,
    max_entities: int | None = None,
    workers: int = 1,
    test: bool = False,
) -> tuple[list[dict], Counter]:
    """Examples for the most mentioned entities of each record (``source``, ``target``), and counts.
    ``test``: targets by rule (a) only; an entity its reference never names, or whose target would be
    Lead3ent's output, gives no example."""
    counts: Counter = Counter(documents=len(records))
    out = []
    names_per_record = named_entities([r["source"] for r in records], workers=workers)
    for record, names in tqdm(
        zip(records, names_per_record),
        total=len(records),
        desc=f"NER {dataset}",
        unit="article",
        disable=len(records) < 100,
    ):
        counts["entities"] += len(names)
        named = salient_entities(record["source"], names)
        salient = [(name, k) for name, k in named if k >= min_mentions]
        counts["too few mentions"] += len(names) - len(salient)
        for number, (entity, _) in enumerate(salient[:max_entities]):
            if test:
                target, from_reference = reference_target(record["target"], entity)
                if not target:
                    counts["not named in the reference"] += 1
                    continue
                if same_sentences(target, lead_sentences(record["source"], entity)):
                    counts["target equals Lead3ent"] += 1
                    continue
            else:
                target, from_reference = proxy_target(record["source"], record["target"], entity)
            counts[
                "target: reference only"
                if from_reference == len(target)
                else "target: lead only"
                if from_reference == 0
                else "target: reference + lead"
            ] += 1
            example = {
                "id": f"{record['id']}-e{number}",
                "document": record["source"],
                "controls": {"entity": entity},
                "target": " ".join(target),
                "dataset": dataset,
                "source_id": record["id"],
                "target_from_reference": from_reference,
            }
            if test:
                other = other_entity(entity, named, min_mentions, example["id"])
                if other is None:
                    counts["no other entity to shuffle to"] += 1
                else:
                    example["shuffled_controls"] = {"entity": other}
            out.append(example)
    counts["examples"] = len(out)
    return out, counts


def build_split(
    source: str, split: str, limit: int | None = None, min_mentions: int = 2, max_entities: int | None = None
) -> list[dict]:
    """The examples of one bundled split; ``test`` by rule (a) only (the leaderboard's test set is
    ``bbc_summary`` then ``cnndm_sample`` ``test``)."""
    records = load_source(source, split)[:limit]
    return entity_examples(records, source, min_mentions, max_entities, test=split == "test")[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training build-data entity", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder for {train,val,test}.jsonl")
    parser.add_argument("--sources", nargs="+", choices=SOURCES, default=list(SOURCES))
    parser.add_argument("--min-mentions", type=int, default=2, help="sentences that must name an entity (default 2)")
    parser.add_argument(
        "--max-entities", type=int, default=None, help="at most N entities per article, most mentioned first"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N articles of each split (quick runs)")
    parser.add_argument("--workers", type=int, default=1, help="NER processes (spaCy n_process; 2 on 2 cores: 1.8x)")
    add_data_dir_argument(parser)
    args = parser.parse_args(argv)
    set_data_dir(args.data_dir)
    if args.min_mentions < 1:
        parser.error(f"--min-mentions must be at least 1, got {args.min_mentions}")
    for split in SPLITS:
        examples, counts = [], Counter()
        for source in args.sources:
            records = load_source(source, split)[: args.limit]
            made, made_counts = entity_examples(
                records, source, args.min_mentions, args.max_entities, args.workers, test=split == "test"
            )
            examples += made
            counts += made_counts
        path = Path(args.out) / f"{split}.jsonl"
        write_jsonl(path, examples)
        print(
            f"{path}: {counts['examples']} examples from {counts['documents']} articles "
            f"({', '.join(args.sources)}); {counts['entities']} entities found, {counts['too few mentions']} "
            f"named in fewer than {args.min_mentions} sentences; targets: "
            f"{counts['target: reference only']} reference only, {counts['target: reference + lead']} "
            f"reference + lead, {counts['target: lead only']} lead only"
            + (
                f"; dropped: {counts['not named in the reference']} (reference never names the entity), "
                f"{counts['target equals Lead3ent']} (target is Lead3ent's output)"
                if split == "test"
                else ""
            )
        )


if __name__ == "__main__":
    main()
