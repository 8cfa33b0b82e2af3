"""Data for the ``persona`` variant: real PENS files, or a **simulated** PENS-format benchmark.

    python -m training build-data persona --out data/persona-simulated            # simulated (BBC)
    python -m training build-data persona --out data/pens --pens-news news.tsv \\
        --pens-test personalized_test.tsv                                         # real PENS, unchanged

**Real PENS** (Ao et al. 2021, Microsoft Research License, non-commercial): ``news.tsv`` with a
header row naming at least ``News ID``, ``Headline`` and ``News body`` (PENS also has ``Category``,
``Topic``, ``Title entity``, ``Entity content``), and ``personalized_test.tsv`` with ``userid``,
``clicknewsID`` (the click history, comma- or space-separated news ids), ``posnewID`` (the news the
user wrote headlines for, comma-separated) and ``rewrite_titles`` (their headlines, ``;;``-separated,
aligned with ``posnewID``). Each (user, news) becomes one example: the body is the document, the
user's headline the target, the titles of their clicks the ``history`` control. Clicks whose id is
not in ``news.tsv`` are dropped (PENS's own preprocessing does the same) and counted.

**Simulated** (``dataset: "pens_simulated"``, BBC News Summary, non-commercial): PENS's news text is
not available here (``../shared/data/README.md``), so readers and their expected summaries are made
up, by this deterministic rule (``--seed``):

* Articles: ``bbc_summary`` train/val/test. The train split is cut in two by a seeded shuffle: half
  only supplies *titles to click* (never summarized), half is summarized for training.
* Readers: reader r has a primary topic (topics in turn) with preference 0.6, a secondary one (drawn)
  with 0.25, and the three others share 0.15. Their history is 24-30 titles drawn from the click
  pool, each topic drawn by those preferences, the article uniformly within it (no repeats). A model
  is given up to 32 titles by default (``user-embedding``'s ``max_history``, ``history-prefix``'s
  ``prefix_titles``), so it sees the whole history, the only evidence of the preferences (with half as
  many titles the baseline was barely above a reader-blind summary: docs/log.md).
* Expected summary of article a for reader r: the ``--summary-sentences`` (2) sentences of a that
  the reader prefers most (:func:`expected_summary`), in document order; ties go to the earlier
  sentence. A sentence's preference is measured in the readers' own *interest space*
  (:mod:`variants.persona.reader_model`): NMF themes of the XSum sample, each topic's theme profile from
  the click pool, the reader's interest the preference-weighted profiles minus their mean. Not the
  topic space the baselines and STAS use: with references made there, guessing the preferences from
  the titles in that space and applying the rule rebuilt most test references (docs/log.md).
  The reference comes from the hidden preferences, not from the history, and never by the
  baseline's rule (TF-IDF cosine to the history's titles): a model must infer the preferences from
  the titles. Two readers' references differ where the article touches their interests
  differently, which is what EGISES measures.
* Each val/test article gets ``--readers-per-article`` (4, as PENS's ~4 headlines per news) readers,
  each train article ``--train-readers-per-article`` (2), drawn without replacement. More readers of
  one article teach more: their references differ (most pairs of train readers' do), and only the
  history tells which one is asked for. Readers beyond the first two come from a generator of their own,
  so val and test are the same whatever this number.

Both write ``{split}.jsonl`` examples ``{"id", "document", "controls": {"history": [...]}, "target",
"dataset", "article_id", "user"}`` (``controls`` carry the titles, so any checkpoint can be scored on
them); the simulated builder also writes its readers (``persona_readers.json``, the ``reader``
control's choices) and the benchmark in PENS layout (``news.tsv``, ``personalized_test.tsv``), which
the real loader reads back unchanged.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
from collections import Counter
from pathlib import Path

import numpy as np

from metrics.io import DataError, write_jsonl
from metrics.text import sentences
from variants.sources import add_data_dir_argument, load_source, set_data_dir

from .reader_model import InterestSpace

NEWS_COLUMNS = ("News ID", "Category", "Topic", "Headline", "News body", "Title entity", "Entity content")
NEWS_REQUIRED = ("News ID", "Headline", "News body")
TEST_COLUMNS = ("userid", "clicknewsID", "posnewID", "rewrite_titles")
SIMULATED, PENS = "pens_simulated", "pens"
TRAIN_READERS_DRAWN = 2  # train readers per article drawn from the shared generator (the test set depends on it)
READERS_FILE = "persona_readers.json"  # the name variants.persona reads in a checkpoint


# ---- real PENS files -----------------------------------------------------------------------------


def read_tsv(path: str | Path, required: tuple[str, ...]) -> list[tuple[int, dict]]:
    """Rows of a headed TSV as (line number, {column: value}); a missing column or a row with the
    wrong number of fields fails with ``file:line``. Quoting as pandas reads PENS (minimal)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    csv.field_size_limit(1 << 30)
    reader = csv.reader(io.StringIO(path.read_text(encoding="utf-8")), delimiter="\t")
    header = next(reader, None)
    if not header:
        raise DataError(f"{path}:1: empty file (a header row naming the columns is expected)")
    header = [h.strip() for h in header]
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(
            f"{path}:1: missing column {', '.join(repr(c) for c in missing)} (the header has: {', '.join(header)})"
        )
    rows = []
    for fields in reader:
        line = reader.line_num
        if not fields or not any(f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise DataError(
                f"{path}:{line}: expected {len(header)} tab-separated fields ({', '.join(header)}), got {len(fields)}"
            )
        rows.append((line, dict(zip(header, fields))))
    return rows


def split_ids(text: str) -> list[str]:
    return [x for x in text.replace(",", " ").split() if x]


def load_pens(news_file: str | Path, test_file: str | Path, dataset: str = PENS) -> tuple[list[dict], dict]:
    """Examples from PENS's ``news.tsv`` and ``personalized_test.tsv`` (layout in the module
    docstring) and counts."""
    news = {}
    for line, row in read_tsv(news_file, NEWS_REQUIRED):
        news_id = row["News ID"].strip()
        if not news_id:
            raise DataError(f"{news_file}:{line}: column 'News ID' is empty")
        news[news_id] = {"title": " ".join(row["Headline"].split()), "body": row["News body"].strip()}
    examples, dropped_clicks = [], 0
    for line, row in read_tsv(test_file, TEST_COLUMNS):
        user = row["userid"].strip()
        clicks = split_ids(row["clicknewsID"])
        history = [news[c]["title"] for c in clicks if c in news and news[c]["title"]]
        dropped_clicks += len(clicks) - len(history)
        targets = [" ".join(t.split()) for t in row["rewrite_titles"].split(";;")]
        news_ids = split_ids(row["posnewID"])
        if len(targets) != len(news_ids):
            raise DataError(
                f"{test_file}:{line}: column 'rewrite_titles' has {len(targets)} titles for "
                f"{len(news_ids)} news ids in column 'posnewID'"
            )
        for news_id, target in zip(news_ids, targets):
            if news_id not in news:
                raise DataError(f"{test_file}:{line}: news id {news_id!r} (column 'posnewID') is not in {news_file}")
            if not target or not news[news_id]["body"]:
                continue  # PENS has one empty headline; nothing to score against
            examples.append(
                {
                    "id": f"{user}-{news_id}",
                    "document": news[news_id]["body"],
                    "controls": {"history": history},
                    "target": target,
                    "dataset": dataset,
                    "article_id": news_id,
                    "user": user,
                }
            )
    counts = {
        "news": len(news),
        "examples": len(examples),
        "users": len({e["user"] for e in examples}),
        "articles": len({e["article_id"] for e in examples}),
        "clicks_not_in_news": dropped_clicks,
    }
    return examples, counts


# ---- the simulated benchmark ---------------------------------------------------------------------


def simulate_readers(
    pool: list[dict], n_readers: int, rng: random.Random, history_size: tuple[int, int] = (24, 30)
) -> list[dict]:
    """Readers with topic preferences and click histories drawn from ``pool`` (see the docstring)."""
    topics = sorted({a["topic"] for a in pool})
    if len(topics) < 2:
        raise DataError(
            f"the click pool has articles of {len(topics)} topic(s) ({', '.join(topics) or 'none'}); "
            "simulated readers need at least 2"
        )
    by_topic = {t: [a for a in pool if a["topic"] == t] for t in topics}
    readers = []
    for r in range(n_readers):
        primary = topics[r % len(topics)]
        secondary = rng.choice([t for t in topics if t != primary])
        rest = [t for t in topics if t not in (primary, secondary)]
        preferences = {primary: 0.6, secondary: 0.25, **{t: 0.15 / len(rest) for t in rest}}
        size = min(rng.randint(*history_size), len(pool))  # a small pool (tests) cannot fill a long history
        clicked, seen = [], set()
        while len(clicked) < size:
            topic = rng.choices(topics, weights=[preferences[t] for t in topics])[0]
            article = rng.choice(by_topic[topic])
            if article["id"] not in seen:
                seen.add(article["id"])
                clicked.append(article)
        readers.append(
            {
                "id": f"sim{r + 1:02d}-{primary}",
                "simulated": True,
                "preferences": {t: round(p, 4) for t, p in preferences.items()},
                "description": f"simulated reader: mostly {primary}, also {secondary}",
                "clicked": [a["id"] for a in clicked],
                "history": [a["title"] for a in clicked],
            }
        )
    return readers


def interest_space(pool: list[dict]) -> InterestSpace:
    """The readers' interest space (:mod:`variants.persona.reader_model`): themes of the XSum sample,
    topic profiles from the click pool's articles. Never the topic space of the baselines and STAS."""
    corpus = [row["source"] for row in load_source("xsum", "sample")]
    return InterestSpace.fit(corpus, [(article["source"], article["topic"]) for article in pool])


def expected_summary(
    article_sentences: list[str],
    preferences: dict[str, float],
    space: InterestSpace,
    k: int,
    mixtures: np.ndarray | None = None,
) -> str:
    """The rule: the ``k`` sentences the reader prefers most (:meth:`InterestSpace.sentence_preference`),
    in document order; ties go to the earlier sentence."""
    if len(article_sentences) <= k:
        return " ".join(article_sentences)
    preference = space.sentence_preference(article_sentences, preferences, mixtures)
    best = sorted(sorted(range(len(article_sentences)), key=lambda i: (-preference[i], i))[:k])
    return " ".join(article_sentences[i] for i in best)


def split_click_pool(train: list[dict], rng: random.Random) -> tuple[list[dict], list[dict]]:
    """The train split, shuffled by ``rng``, cut in two: the click pool (titles only) and the rest."""
    train = sorted(train, key=lambda a: a["id"])
    rng.shuffle(train)
    return train[: len(train) // 2], train[len(train) // 2 :]


def build_simulated(
    seed: int = 0,
    n_readers: int = 24,
    readers_per_article: int = 4,
    train_readers: int = 2,
    summary_sentences: int = 2,
    max_articles: dict | None = None,
) -> tuple[dict, list[dict]]:
    """{split: examples} (plus ``"pool"``, the click pool's articles) and the readers, deterministic
    given the arguments. ``max_articles`` caps splits by name (``"pool"`` too: for quick tests)."""
    rng = random.Random(seed)
    splits = {s: load_source("bbc_summary", s) for s in ("train", "val", "test")}
    pool, splits["train"] = split_click_pool(splits["train"], rng)
    pool = pool[: (max_articles or {}).get("pool")]
    readers = simulate_readers(pool, n_readers, rng)
    space = interest_space(pool)
    examples = {}
    for split, articles in splits.items():
        articles = articles[: (max_articles or {}).get(split)]
        rows = []
        for article in articles:
            article_sentences = sentences(article["source"])
            mixtures = space.mixtures(article_sentences)  # once per article, for all its readers
            if split != "train":
                chosen = rng.sample(readers, readers_per_article)
            else:  # always two from ``rng`` and any more aside, so val and test stay the same
                chosen = rng.sample(readers, TRAIN_READERS_DRAWN)[:train_readers]
                if train_readers > len(chosen):
                    others = [r for r in readers if r not in chosen]
                    chosen += random.Random(f"{seed}:readers:{article['id']}").sample(
                        others, train_readers - len(chosen)
                    )
            for reader in chosen:
                target = expected_summary(article_sentences, reader["preferences"], space, summary_sentences, mixtures)
                rows.append(
                    {
                        "id": f"{article['id']}-{reader['id']}",
                        "document": article["source"],
                        "controls": {"history": reader["history"]},
                        "target": target,
                        "dataset": SIMULATED,
                        "article_id": article["id"],
                        "user": reader["id"],
                        "title": article["title"],
                        "topic": article["topic"],
                    }
                )
        examples[split] = rows
    examples["pool"] = pool  # the click pool's articles (for news.tsv)
    return examples, readers


def write_pens_layout(out: Path, articles: list[dict], test: list[dict], readers: list[dict]) -> None:
    """The simulated test split as PENS files, so ``load_pens`` reads it back like the real thing."""
    with (out / "news.tsv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(NEWS_COLUMNS)
        for a in articles:
            writer.writerow([a["id"], a["topic"], a["topic"], a["title"], " ".join(a["source"].split()), "{}", "{}"])
    by_user: dict[str, list[dict]] = {}
    for e in test:
        by_user.setdefault(e["user"], []).append(e)
    with (out / "personalized_test.tsv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(TEST_COLUMNS)
        for reader in readers:
            rows = by_user.get(reader["id"], [])
            if rows:
                writer.writerow(
                    [
                        reader["id"],
                        ",".join(reader["clicked"]),
                        ",".join(e["article_id"] for e in rows),
                        ";;".join(e["target"] for e in rows),
                    ]
                )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training build-data persona",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--pens-news", help="real PENS news.tsv (with --pens-test): convert instead of simulating")
    parser.add_argument("--pens-test", help="real PENS personalized_test.tsv")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--readers", type=int, default=24, help="simulated readers")
    parser.add_argument("--readers-per-article", type=int, default=4, help="readers per val/test article (PENS: ~4)")
    parser.add_argument(
        "--train-readers-per-article",
        type=int,
        default=2,
        help="readers per train article (default 2; the zoo takes 5, one per topic on average)",
    )
    parser.add_argument("--summary-sentences", type=int, default=2, help="sentences in a reader's expected summary")
    parser.add_argument("--max-train-articles", type=int, default=None)
    parser.add_argument("--max-eval-articles", type=int, default=None, help="cap on val and test articles each")
    add_data_dir_argument(parser)
    a = parser.parse_args(argv)
    set_data_dir(a.data_dir)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.pens_news or a.pens_test:
        if not (a.pens_news and a.pens_test):
            parser.error("--pens-news and --pens-test go together")
        examples, counts = load_pens(a.pens_news, a.pens_test)
        write_jsonl(out / "test.jsonl", examples)
        print(f"PENS: {json.dumps(counts)} -> {out / 'test.jsonl'}")
        return
    if not 1 <= a.train_readers_per_article <= a.readers:
        parser.error(
            f"--train-readers-per-article must be between 1 and --readers ({a.readers}), "
            f"got {a.train_readers_per_article}"
        )
    caps = {"train": a.max_train_articles, "val": a.max_eval_articles, "test": a.max_eval_articles}
    examples, readers = build_simulated(
        a.seed, a.readers, a.readers_per_article, a.train_readers_per_article, a.summary_sentences, caps
    )
    pool = examples.pop("pool")
    for split, rows in examples.items():
        write_jsonl(out / f"{split}.jsonl", rows)
    (out / READERS_FILE).write_text(
        json.dumps({"simulated": True, "seed": a.seed, "readers": readers}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    articles = {e["article_id"]: e for rows in examples.values() for e in rows}
    news = [
        {"id": k, "topic": v["topic"], "title": v["title"], "source": v["document"]}
        for k, v in sorted(articles.items())
    ]
    write_pens_layout(out, pool + news, examples["test"], readers)
    print(f"SIMULATED PENS-format benchmark (BBC News Summary; not real PENS) in {out}:")
    for split, rows in examples.items():
        print(f"  {split}: {len(rows)} (article, reader) examples, {len({r['article_id'] for r in rows})} articles")
    topics = Counter(r["id"].split("-", 1)[1] for r in readers)
    print(
        f"  readers: {len(readers)} (primary topics {dict(sorted(topics.items()))}), "
        f"history {min(len(r['history']) for r in readers)}-{max(len(r['history']) for r in readers)} titles; "
        f"click pool {len(pool)} articles"
    )


if __name__ == "__main__":
    main()
