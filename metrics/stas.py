"""STAS, the Summarization Topic Affinity Score (Passali & Tsoumakas, LREC-COLING 2024, Sec. 3).

A *topic space* is a tf-idf model fitted on topic-labelled documents (idf over all of them). A
topic's vector is the mean of its documents' tf-idf vectors (eq. 1); a summary is vectorized in the
same space, and its affinity to a topic is the cosine of the two (eq. 3). STAS divides the affinity
to the requested topic by the summary's best affinity (eq. 2), so 1 means "the summary is most
about the requested topic", whatever the topic's typical cosine is::

    STAS(s, t) = cos(y_s, y_t) / max_z cos(y_s, y_z)

Choices the paper leaves open, made here:

* Terms (:func:`metrics.terms.term`) are WordNet lemmas (:func:`metrics.text.lemma`, the lemmas the
  ``tag`` method matches, Sec. 4.2) of words that are not stop words, two characters or longer (as
  scikit-learn's default token pattern), possessives and clitics cut ("england's" is "england",
  "it's" is the stop word "it", "don't" is dropped). tf-idf is scikit-learn's default: raw
  counts, ``smooth_idf`` (idf = ln((1 + n) / (1 + df)) + 1), rows L2-normalized.
* A summary with no known term has a zero vector, every cosine is 0 and STAS is 0/0: we define
  it as **0.0** (no evidence that the summary is about the topic), never NaN.
* Representative terms (Sec. 4.2, Fig. 1) are the N terms with the highest weight in the topic
  vector, ties broken alphabetically; terms of weight 0 are never representative.
* An unseen topic (Sec. 5.3) gets its vector from a few example texts (eq. 1 over them) or from a
  few words, vectorized as one pseudo-document, so idf weighs rare words up as for any text.

The default space (:meth:`metrics.topic_space.TopicSpace.default`) is fitted on the bundled BBC articles
that are training articles: the 1,645 of ``bbc/articles.jsonl`` (5 topics) whose ids are not in the
``bbc_summary`` val or test split, so STAS on the topic test set (super-articles of ``bbc_summary``
test articles) never scores text the space was fitted on. The saved space records this
(``fitted_on``: file, excluded splits, ids excluded, documents used). It is committed under
``assets/bbc_topic_space`` so it works without the data, e.g. on a Hub Space. It keeps every term
(``max_features=None``, 20,588 lemmas): the two files take about 1 MB, inside the 3 MB
budget, so nothing forces a cut, and a cut by corpus frequency would drop the rare names (players,
firms, bands) that are strong topic evidence. Rebuild it with ``python -m metrics.stas
build-default``; a test checks that the committed files equal a fresh fit.

The systems read that space: the topic baseline ranks sentences with it, and the ``tag`` methods mark
its representative terms. So STAS is not scored with it, or a system would be judged by the space it
was built from (its tagged words are exactly the words that space rewards). The **judge**
(:meth:`TopicSpace.judge`) is another fit, on the BBC articles of ``bbc_summary``'s *val* split:
articles neither the systems' space nor the topic test set holds. Rebuild it with
``python -m metrics.stas build-judge``.

This module fits both spaces, scores STAS with the judge and holds the command line; the space
itself (eq. 1-3, files) is :mod:`metrics.topic_space`, its terms :mod:`metrics.terms`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from metrics.io import DATA_DIR, DataError, get_field, read_jsonl
from metrics.topic_space import DEFAULT_DIR, JUDGE_DIR, TopicSpace, stas_from_affinities

JUDGE_SPLIT = "val"  # the bbc_summary split whose articles the judge is fitted on
DEFAULT_MAX_FEATURES = None  # keep every lemma of the training articles (see the module docstring)
HELD_OUT_SPLITS = ("val", "test")  # bbc_summary splits whose articles the default space never sees

FIELDS = """
  prediction  str  the generated summary
  topic       str  the requested topic, one of the default space's topics
                   (business, entertainment, politics, sport, tech)
"""


def build_default(data_dir: Path = DATA_DIR, out_dir: Path = DEFAULT_DIR) -> TopicSpace:
    """Fit the default space on the training articles of ``bbc/articles.jsonl`` (fields ``id``,
    ``text``, ``topic``): those whose ids are not in ``bbc_summary``'s val or test split, where the
    topic test set comes from. Save it with a ``fitted_on`` record of what was used."""
    path = Path(data_dir) / "bbc" / "articles.jsonl"
    held_out = {
        get_field(r, "id", str, f"{split}:{i + 1}")
        for split in HELD_OUT_SPLITS
        for i, r in enumerate(read_jsonl(Path(data_dir) / "bbc_summary" / f"{split}.jsonl"))
    }
    records = [(f"{path}:{i + 1}", r) for i, r in enumerate(read_jsonl(path))]
    training = [(where, r) for where, r in records if get_field(r, "id", str, where) not in held_out]
    texts = [get_field(r, "text", str, where) for where, r in training]
    topics = [get_field(r, "topic", str, where) for where, r in training]
    space = TopicSpace.fit(texts, topics, max_features=DEFAULT_MAX_FEATURES)
    space.fitted_on = {
        "data": "bbc/articles.jsonl",
        "excluded": "ids in bbc_summary/{val,test}.jsonl (the topic test set's articles)",
        "documents": len(training),
        "excluded_documents": len(records) - len(training),
    }
    space.save(out_dir)
    return space


def build_judge(data_dir: Path = DATA_DIR, out_dir: Path = JUDGE_DIR) -> TopicSpace:
    """Fit STAS's judge on the articles of ``bbc_summary``'s :data:`JUDGE_SPLIT` split (fields
    ``source``, ``topic``): disjoint from the systems' space and from the topic test set."""
    path = Path(data_dir) / "bbc_summary" / f"{JUDGE_SPLIT}.jsonl"
    records = [(f"{path}:{i + 1}", r) for i, r in enumerate(read_jsonl(path))]
    texts = [get_field(r, "source", str, where) for where, r in records]
    topics = [get_field(r, "topic", str, where) for where, r in records]
    space = TopicSpace.fit(texts, topics, max_features=DEFAULT_MAX_FEATURES)
    space.fitted_on = {
        "data": f"bbc_summary/{JUDGE_SPLIT}.jsonl",
        "documents": len(records),
        "why": "articles neither the systems' space (bbc/articles.jsonl less bbc_summary val and "
        "test) nor the topic test set (bbc_summary test) holds",
    }
    space.save(out_dir)
    return space


# ---- the metric ----------------------------------------------------------------------------------


def stas_scores(summaries: list[str], topics: list[str], space: TopicSpace | None = None) -> np.ndarray:
    """STAS of each summary for its topic, in ``space`` (default: the judge, :meth:`TopicSpace.judge`)."""
    return (space or TopicSpace.judge()).stas(summaries, topics)


def score_records(records: list[dict], source: str = "<records>", space: TopicSpace | None = None) -> dict:
    """Corpus STAS = mean over records; each example carries its STAS and its affinity to every topic."""
    space = space or TopicSpace.judge()
    summaries, topics = [], []
    for i, record in enumerate(records):
        where = f"{source}:{i + 1}"
        summaries.append(get_field(record, "prediction", str, where))
        topic = get_field(record, "topic", str, where)
        if topic not in space.topics:
            raise DataError(
                f"{where}: field 'topic': unknown topic {topic!r}; valid topics: {', '.join(space.topics)}"
            )
        topics.append(topic)
    affinity = space.affinities(summaries)
    stas = stas_from_affinities(affinity)[np.arange(len(records)), [space.topic_index(t) for t in topics]]
    examples = [
        {"stas": float(score), "affinity": dict(zip(space.topics, map(float, row)))}
        for score, row in zip(stas, affinity)
    ]
    return {
        "metric": "stas",
        "corpus": {"n": len(records), "stas": float(stas.mean()) if len(records) else None},
        "examples": examples,
        "topics": space.topics,
        "notes": "STAS in [0, 1] (the paper reports x100); 0.0 for a summary with no word of the topic space.",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m metrics.stas", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build-default", help="refit the committed BBC topic space from the bundled data")
    build.add_argument("--data-dir", type=Path, default=DATA_DIR)
    build.add_argument("--out-dir", type=Path, default=DEFAULT_DIR)
    judge = commands.add_parser("build-judge", help="refit the committed topic space STAS is scored with")
    judge.add_argument("--data-dir", type=Path, default=DATA_DIR)
    judge.add_argument("--out-dir", type=Path, default=JUDGE_DIR)
    terms = commands.add_parser("terms", help="print a topic's representative terms")
    terms.add_argument("topic")
    terms.add_argument("-n", type=int, default=100)
    terms.add_argument("--space", type=Path, default=None, help="folder of a saved topic space (default: BBC)")
    args = parser.parse_args(argv)
    if args.command in ("build-default", "build-judge"):
        space = (build_default if args.command == "build-default" else build_judge)(args.data_dir, args.out_dir)
        print(f"{args.out_dir}: {len(space.terms)} terms, topics {space.sources}, fitted on {space.fitted_on}")
    else:
        space = TopicSpace.load(args.space) if args.space else TopicSpace.default()
        print(", ".join(space.representative_terms(args.topic, args.n)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
