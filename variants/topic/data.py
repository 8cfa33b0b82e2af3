"""Topic-oriented "super-articles" (Passali et al. Sec. 4.3, after Krishna & Srinivasan 2018).

Two articles with different topics are mixed sentence by sentence; the mixed article is paired once
with each article's summary and that article's topic. A model trained on them must find the
requested topic's sentences among the other topic's. Which article leads (gives the first sentence)
is a seeded coin flip per example, so position says nothing about the topic: were the requested
article always first, a topic-blind rule taking sentences 0, 2, 4 would score like the topic baseline.

    python -m training build-data topic --out data/topic [--source bbc_summary|cnndm_sample] [--seed 0]
                                       [--train-joins interleaved,concatenated]

``bbc_summary`` carries topic labels. ``cnndm_sample`` does not: each article gets the topic its
reference is most similar to in the TopicSpace, and articles whose best two topics are within
``--margin`` of each other ("more than one dominant topic") are discarded, as in the paper.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path

from metrics.io import write_jsonl
from metrics.text import sentences
from variants.sources import add_data_dir_argument, load_source, set_data_dir

SPLITS = {"bbc_summary": ("train", "val", "test"), "cnndm_sample": ("train", "val", "test")}


def interleave(first: list[str], second: list[str]) -> list[str]:
    """Sentences taken in turn from both articles: a1[0], a2[0], a1[1], a2[1], ... then the rest."""
    mixed = []
    for i in range(max(len(first), len(second))):
        mixed += first[i : i + 1] + second[i : i + 1]
    return mixed


def pair_articles(articles: list[dict], rng: random.Random) -> list[tuple[dict, dict]]:
    """Random pairs with different topics, each article used once, until the remaining articles
    all share one topic (the paper's stopping rule).

    Each pair takes an article of the topic with the most articles left and a random article of
    another topic; drawing from the largest topic first is what keeps the leftover as small as the
    topic counts allow (a random first pick can strand two topics' articles unpaired).
    """
    by_topic: dict[str, list[dict]] = {}
    for article in articles:
        by_topic.setdefault(article["topic"], []).append(article)
    for group in by_topic.values():
        rng.shuffle(group)
    pairs = []
    while sum(1 for group in by_topic.values() if group) > 1:
        topics = sorted((t for t, group in by_topic.items() if group), key=lambda t: (-len(by_topic[t]), t))
        largest = topics[0]
        other = rng.choice(topics[1:])
        pairs.append((by_topic[largest].pop(), by_topic[other].pop()))
    rng.shuffle(pairs)
    return pairs


JOINS = {"interleaved": interleave, "concatenated": lambda first, second: first + second}


def super_articles(articles: list[dict], seed: int, split: str, dataset: str, join: str = "interleaved") -> list[dict]:
    """Two examples per pair: the mixed article with a1's summary, and with a2's. Each example's
    leading article (``leading``: its id; ``asked``: whether the asked one leads, ``first``, or not) is drawn
    by the seeded ``rng``, independently of the topic.
    ``join``: the articles' sentences taken in turn (the paper's super-articles) or ``concatenated``,
    one article after the other, as a user pastes two articles: the same draws, so the asked article
    comes first in about half the examples and second in the others."""
    rng = random.Random(seed)
    mix = JOINS[join]
    out = []
    for number, (a1, a2) in enumerate(pair_articles(articles, rng)):
        s1, s2 = sentences(a1["source"]), sentences(a2["source"])
        for suffix, (main, other, main_sents, other_sents) in (("a", (a1, a2, s1, s2)), ("b", (a2, a1, s2, s1))):
            main_leads = rng.random() < 0.5
            mixed = mix(main_sents, other_sents) if main_leads else mix(other_sents, main_sents)
            out.append(
                {
                    "id": f"super-{split}-{number:05d}{suffix}",
                    "document": " ".join(mixed),
                    "controls": {"topic": main["topic"]},
                    "target": main["target"],
                    "dataset": dataset,
                    "sources": [main["id"], other["id"]],
                    "other_topic": other["topic"],
                    "leading": (main if main_leads else other)["id"],
                    "asked": "first" if main_leads else "second",  # where the asked article starts
                }
            )
    return out


# ---- MACSum-Doc: human topic-focused references (an extra test set) ---------------------------------

MACSUM_TOPIC_SET = "macsum-topic"


def macsum_topic(topic: str) -> str:
    """A MACSum topic as a control: its parts (MACSum separates several with `` , ``) joined by ", "."""
    return ", ".join(part.strip() for part in topic.split(",") if part.strip())


def macsum_topic_set(rows: list[dict], known) -> tuple[list[dict], Counter]:
    """MACSum-Doc's topic-focused references as topic test records, and counts of what was left out.

    Each row with a topic gives one record: the document, the controls ``{"topic": its topic,
    "topic_words": the same words}`` (an unseen topic: its representative terms come from those words,
    Sec. 5.3), the human reference unchanged as the target. ``known(words)`` says whether the topic space
    knows one of a topic's words (else the topic cannot be asked for). Only documents with at least two
    such topics are kept, and every record carries its document as ``shuffle_group``: the shuffled
    pass then asks for *another topic of the same document* (:func:`training.evaluate.derangement`),
    so the right topic is compared with one the document also treats, never with an unrelated one."""
    counts: Counter = Counter(rows=len(rows))
    by_document: dict[str, list[dict]] = {}
    for row in rows:
        topic = macsum_topic(row["topic"])
        if not topic:
            counts["no topic"] += 1
            continue
        if not known([part.strip() for part in topic.split(",")]):
            counts["no word of the topic in the topic space"] += 1
            continue
        by_document.setdefault(row["doc_id"], []).append(
            {
                "id": row["id"],
                "document": row["source"],
                "controls": {"topic": topic, "topic_words": topic},
                "target": row["reference"],
                "dataset": "macsum_doc",
                "doc_id": row["doc_id"],
                "shuffle_group": row["doc_id"],
                "macsum_length": row["length"],
            }
        )
    records = []
    for group in by_document.values():
        if len({r["controls"]["topic"] for r in group}) < 2:
            counts["only one topic in the document"] += len(group)
            continue
        records += group
    counts["records"], counts["documents"] = len(records), len({r["doc_id"] for r in records})
    return records, counts


def assign_topics(records: list[dict], margin: float) -> list[dict]:
    """Label CNN/DM articles with the TopicSpace topic closest to their reference; drop ambiguous ones."""
    from metrics.topic_space import TopicSpace

    space = TopicSpace.default()
    affinity = space.affinities([r["target"] for r in records])
    labelled = []
    for record, row in zip(records, affinity):
        best, second = sorted(row, reverse=True)[:2]
        if best > 0 and best - second >= margin:
            labelled.append({**record, "topic": space.topics[int(row.argmax())]})
    return labelled


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training build-data topic", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder for {train,val,test}.jsonl")
    parser.add_argument("--source", choices=sorted(SPLITS), default="bbc_summary")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--margin", type=float, default=0.02, help="cnndm_sample: minimum gap between the best two topics"
    )
    parser.add_argument(
        "--train-joins",
        default="interleaved",
        help="comma-separated joins of the train split's super-articles (interleaved, concatenated): each pair "
        "once in each; val and test stay interleaved, the paper's",
    )
    add_data_dir_argument(parser)
    args = parser.parse_args(argv)
    joins = [join.strip() for join in args.train_joins.split(",") if join.strip()]
    if not joins or set(joins) - set(JOINS):
        parser.error(f"--train-joins {args.train_joins!r}: allowed joins are {', '.join(JOINS)}")
    set_data_dir(args.data_dir)
    for split in SPLITS[args.source]:
        records = load_source(args.source, split)
        if args.source == "cnndm_sample":
            records = assign_topics(records, args.margin)
        examples = []
        for join in joins if split == "train" else ["interleaved"]:
            mixed = super_articles(records, args.seed, split, args.source, join)
            examples += mixed if join == "interleaved" else [{**e, "id": f"{e['id']}-{join}"} for e in mixed]
        path = Path(args.out) / f"{split}.jsonl"
        write_jsonl(path, examples)
        topics = Counter(e["controls"]["topic"] for e in examples)
        print(
            f"{path}: {len(examples)} super-articles from {len(records)} articles; topics {dict(sorted(topics.items()))}"
        )


if __name__ == "__main__":
    main()
