"""STAS, the Summarization Topic Affinity Score (Passali & Tsoumakas, LREC-COLING 2024, Sec. 3).

A *topic space* is a tf-idf model fitted on topic-labelled documents (idf over all of them). A
topic's vector is the mean of its documents' tf-idf vectors (eq. 1); a summary is vectorized in the
same space, and its affinity to a topic is the cosine of the two (eq. 3). STAS divides the affinity
to the requested topic by the summary's best affinity (eq. 2), so 1 means "the summary is most
about the requested topic", whatever the topic's typical cosine is::

    STAS(s, t) = cos(y_s, y_t) / max_z cos(y_s, y_z)

Choices the paper leaves open, made here:

* Terms (:func:`term`) are WordNet lemmas (:func:`metrics.text.lemma`, the lemmas the ``tag``
  method matches, Sec. 4.2) of words that are not stop words, two characters or longer (as
  scikit-learn's default token pattern), possessives and clitics cut ("england's" is "england",
  "it's" is the stop word "it", "don't" is dropped). tf-idf is scikit-learn's default: raw
  counts, ``smooth_idf`` (idf = ln((1 + n) / (1 + df)) + 1), rows L2-normalized.
* A summary with no known term has a zero vector, every cosine is 0 and STAS is 0/0: we define
  it as **0.0** (no evidence that the summary is about the topic), never NaN.
* Representative terms (Sec. 4.2, Fig. 1) are the N terms with the highest weight in the topic
  vector, ties broken alphabetically; terms of weight 0 are never representative.
* An unseen topic (Sec. 5.3) gets its vector from a few example texts (eq. 1 over them) or from a
  few words, vectorized as one pseudo-document, so idf weighs rare words up as for any text.

The default space (:meth:`TopicSpace.default`) is fitted on the bundled BBC articles that are
training articles: the 1,645 of ``bbc/articles.jsonl`` (5 topics) whose ids are not in the
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
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from metrics.io import DATA_DIR, DataError, get_field, read_jsonl
from metrics.text import STOPWORDS, lemma, words

FORMAT = "steersum-topic-space/1"
JSON_NAME, NPZ_NAME = "topic_space.json", "topic_space.npz"  # fixed: a checkpoint carries its space under these
DEFAULT_DIR = Path(__file__).resolve().parent / "assets" / "bbc_topic_space"
JUDGE_DIR = Path(__file__).resolve().parent / "assets" / "bbc_topic_judge"
JUDGE_SPLIT = "val"  # the bbc_summary split whose articles the judge is fitted on
DEFAULT_MAX_FEATURES = None  # keep every lemma of the training articles (see the module docstring)
HELD_OUT_SPLITS = ("val", "test")  # bbc_summary splits whose articles the default space never sees
# Everything about the tf-idf model that is not learnt; saved with the space and checked on load.
TFIDF_SETTINGS = {
    "analyzer": "metrics.stas.analyze",
    "norm": "l2",
    "use_idf": True,
    "smooth_idf": True,
    "sublinear_tf": False,
}

FIELDS = """
  prediction  str  the generated summary
  topic       str  the requested topic, one of the default space's topics
                   (business, entertainment, politics, sport, tech)
"""


# Clitics after an apostrophe: "england's" counts as "england" and "we've" as "we" (a stop word).
# Negations ("don't", "won't") are function words and are dropped: "won't" must not count as "win".
CLITICS = frozenset({"s", "re", "ve", "ll", "d", "m"})


@lru_cache(maxsize=200_000)
def term(word: str) -> str | None:
    """The topic-space term of one word token of :func:`metrics.text.words`, or None when it is
    not a term: its WordNet lemma, with stop words dropped before lemmatizing ("was" would become
    "wa") and after ("downs" is "down"), and one-character tokens dropped as scikit-learn's default does."""
    head, apostrophe, tail = word.replace("’", "'").partition("'")
    if apostrophe and tail == "t":
        return None
    if apostrophe and tail in CLITICS:
        word = head
    if len(word) < 2 or word in STOPWORDS:
        return None
    lemmatized = lemma(word)
    return None if lemmatized in STOPWORDS else lemmatized


def analyze(text: str) -> list[str]:
    """The terms of a text, in order (the tf-idf analyzer; module level so a space pickles)."""
    return [t for t in map(term, words(text)) if t is not None]


def _vectorizer(
    vocabulary: list[str] | None = None, idf: np.ndarray | None = None, max_features: int | None = None
) -> TfidfVectorizer:
    settings = {k: v for k, v in TFIDF_SETTINGS.items() if k != "analyzer"}
    if vocabulary is None:
        return TfidfVectorizer(analyzer=analyze, max_features=max_features, **settings)
    vectorizer = TfidfVectorizer(
        analyzer=analyze, vocabulary={term: i for i, term in enumerate(vocabulary)}, **settings
    )
    vectorizer.idf_ = idf
    return vectorizer


def stas_from_affinities(affinity: np.ndarray) -> np.ndarray:
    """Eq. 2 for every (summary, topic) cell of an affinity matrix: each row over its maximum.
    A row of zeros (a summary with no known term) stays zeros: we define 0/0 as 0.0."""
    best = affinity.max(axis=1, keepdims=True)  # (n_summaries, 1); n_topics >= 1 in any space
    return np.divide(affinity, best, out=np.zeros_like(affinity), where=best > 0)


class TopicSpace:
    """Topic vectors in a tf-idf space. Immutable: :meth:`with_topic` returns a new space, so the
    cached :meth:`default` can be shared.

    >>> space = TopicSpace.default()
    >>> space.topics
    ['business', 'entertainment', 'politics', 'sport', 'tech']
    >>> space.stas(["The striker scored in the cup final."], ["sport"]).tolist()
    [1.0]
    """

    def __init__(
        self,
        vectorizer: TfidfVectorizer,
        topics: list[str],
        topic_vectors: np.ndarray,
        sources: dict[str, str],
        max_features: int | None = None,
        fitted_on: dict | None = None,
    ):
        """Use :meth:`fit`, :meth:`load` or :meth:`default`. ``topic_vectors`` is (n_topics, n_terms),
        row i the eq. 1 mean for ``topics[i]``; ``sources`` says where each topic came from;
        ``fitted_on`` which documents the space was fitted on (saved with it; free-form)."""
        if list(topics) != sorted(set(topics)):
            raise ValueError(f"topics must be sorted and unique, got {topics}")
        n_terms = len(vectorizer.vocabulary_)
        if topic_vectors.shape != (len(topics), n_terms):
            raise ValueError(f"topic_vectors: expected shape {(len(topics), n_terms)}, got {topic_vectors.shape}")
        norms = np.linalg.norm(topic_vectors, axis=1)
        empty = [t for t, norm in zip(topics, norms) if norm == 0]
        if empty:
            raise ValueError(f"topic(s) without any known term: {', '.join(empty)}")
        self.vectorizer = vectorizer
        self._topics = list(topics)
        self.topic_vectors = topic_vectors
        self.sources = dict(sources)
        self.max_features = max_features
        self.fitted_on = dict(fitted_on or {})
        self.terms = vectorizer.get_feature_names_out()  # column j holds terms[j]
        self._unit_topics_t = (topic_vectors / norms[:, None]).T  # (n_terms, n_topics), for eq. 3

    # ---- building -----------------------------------------------------------------------------

    @classmethod
    def fit(cls, texts: list[str], topics: list[str], max_features: int | None = None) -> TopicSpace:
        """Fit idf over all ``texts`` and average each topic's tf-idf vectors (eq. 1).
        ``max_features`` keeps the most frequent terms (scikit-learn's meaning); None keeps all."""
        if len(texts) != len(topics):
            raise ValueError(f"texts and topics differ in length: {len(texts)} vs {len(topics)}")
        if not texts:
            raise ValueError("cannot fit a topic space on no documents")
        vectorizer = _vectorizer(max_features=max_features)
        tfidf = vectorizer.fit_transform(texts)  # (n_docs, n_terms), rows L2-normalized
        names = sorted(set(topics))
        rows = np.searchsorted(names, topics)  # each document's topic index
        counts = np.bincount(rows, minlength=len(names))
        # Eq. 1 for all topics in one product: averaging (n_topics, n_docs) @ tfidf (n_docs, n_terms).
        averaging = sp.csr_matrix((1.0 / counts[rows], (rows, np.arange(len(texts)))), shape=(len(names), len(texts)))
        topic_vectors = (averaging @ tfidf).toarray()
        sources = {name: f"{count} documents" for name, count in zip(names, counts.tolist())}
        return cls(vectorizer, names, topic_vectors, sources, max_features)

    def with_topic(self, name: str, *, words: list[str] | None = None, texts: list[str] | None = None) -> TopicSpace:
        """A new space with one more topic, defined at run time (an unseen topic, Sec. 5.3) by a few
        ``words`` (one pseudo-document) or example ``texts`` (their mean vector, eq. 1). Words the
        space does not know are ignored; a ``ValueError`` names them when none is known."""
        if not name or not name.strip():
            raise ValueError("a topic needs a non-empty name")
        if name in self._topics:
            raise ValueError(f"topic {name!r} already exists; topics: {', '.join(self._topics)}")
        if (words is None) == (texts is None):
            raise ValueError("give the new topic either words or texts")
        if words is not None:
            known = [w for w in words if any(t in self.vectorizer.vocabulary_ for t in analyze(w))]
            if not known:
                raise ValueError(
                    f"none of the words {', '.join(map(repr, words)) or '(none given)'} is in the "
                    f"topic space's vocabulary (stop words and words never seen in fitting do not count)"
                )
            vector, source = self.vectorize([" ".join(known)]).toarray()[0], "words: " + ", ".join(known)
        else:
            vector = np.asarray(self.vectorize(texts).mean(axis=0)).ravel() if texts else np.zeros(len(self.terms))
            source = f"{len(texts)} texts"
            if not vector.any():
                raise ValueError(f"none of the {len(texts)} texts has a word of the topic space's vocabulary")
        topics = sorted(self._topics + [name])
        at = topics.index(name)
        topic_vectors = np.insert(self.topic_vectors, at, vector, axis=0)
        return TopicSpace(
            self.vectorizer, topics, topic_vectors, {**self.sources, name: source}, self.max_features, self.fitted_on
        )

    # ---- scoring ------------------------------------------------------------------------------

    @property
    def topics(self) -> list[str]:
        """Topic names, sorted; the columns of :meth:`affinities` follow this order."""
        return list(self._topics)

    def vectorize(self, texts: list[str]) -> sp.csr_matrix:
        """(n_texts, n_terms) tf-idf rows, L2-normalized (a text with no known term: a zero row)."""
        if len(texts) == 0:  # scikit-learn refuses an empty batch; an empty batch has empty scores
            return sp.csr_matrix((0, len(self.terms)))
        return self.vectorizer.transform(texts)

    def affinities(self, summaries: list[str]) -> np.ndarray:
        """(n_summaries, n_topics) cosine similarities (eq. 3), one sparse product for all."""
        return np.asarray(self.vectorize(summaries) @ self._unit_topics_t)  # summary rows already unit length

    def stas_all_topics(self, summaries: list[str]) -> np.ndarray:
        """(n_summaries, n_topics): eq. 2 for every topic."""
        return stas_from_affinities(self.affinities(summaries))

    def stas(self, summaries: list[str], topics: list[str]) -> np.ndarray:
        """STAS of each summary for its requested topic (eq. 2); 0.0 for a summary with no known term."""
        if len(summaries) != len(topics):
            raise ValueError(f"summaries and topics differ in length: {len(summaries)} vs {len(topics)}")
        columns = [self.topic_index(topic) for topic in topics]
        return self.stas_all_topics(summaries)[np.arange(len(summaries)), columns]

    def topic_index(self, topic: str) -> int:
        try:
            return self._topics.index(topic)
        except ValueError:
            raise ValueError(f"unknown topic {topic!r}; valid topics: {', '.join(self._topics)}") from None

    def representative_terms(self, topic: str, n: int = 100) -> list[str]:
        """The ``n`` highest-weighted terms of the topic vector (Fig. 1), highest first, ties in
        alphabetical order; fewer when the topic has fewer terms of positive weight."""
        if n < 1:
            raise ValueError(f"n must be positive, got {n}")
        weights = self.topic_vectors[self.topic_index(topic)]
        order = np.lexsort((self.terms, -weights))  # last key first: weight descending, then term
        return [str(self.terms[j]) for j in order[:n] if weights[j] > 0]

    # ---- files --------------------------------------------------------------------------------

    def save(self, directory: str | Path) -> None:
        """``topic_space.json`` (settings, topics, vocabulary, idf) + ``topic_space.npz`` (topic
        vectors). No pickle: loading runs no code, and the JSON diffs line by line."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        config = {
            "format": FORMAT,
            "settings": {**TFIDF_SETTINGS, "max_features": self.max_features},
            "topics": self._topics,
            "sources": self.sources,
            "fitted_on": self.fitted_on,
            "vocabulary": self.terms.tolist(),
            "idf": self.vectorizer.idf_.tolist(),
        }
        (directory / JSON_NAME).write_text(json.dumps(config, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
        np.savez_compressed(directory / NPZ_NAME, topic_vectors=self.topic_vectors)

    @classmethod
    def load(cls, directory: str | Path) -> TopicSpace:
        directory = Path(directory)
        if not (directory / JSON_NAME).is_file() or not (directory / NPZ_NAME).is_file():
            raise FileNotFoundError(f"{directory}: no topic space here (expected {JSON_NAME} and {NPZ_NAME})")
        config = json.loads((directory / JSON_NAME).read_text(encoding="utf-8"))
        if config.get("format") != FORMAT:
            raise ValueError(f"{directory / JSON_NAME}: format {config.get('format')!r}, expected {FORMAT!r}")
        settings = {k: v for k, v in config["settings"].items() if k != "max_features"}
        if settings != TFIDF_SETTINGS:
            raise ValueError(f"{directory / JSON_NAME}: settings {settings} differ from this code's {TFIDF_SETTINGS}")
        with np.load(directory / NPZ_NAME, allow_pickle=False) as arrays:
            topic_vectors = arrays["topic_vectors"]
        vectorizer = _vectorizer(config["vocabulary"], np.asarray(config["idf"], dtype=np.float64))
        return cls(
            vectorizer,
            config["topics"],
            topic_vectors,
            config["sources"],
            config["settings"]["max_features"],
            config.get("fitted_on"),
        )

    @classmethod
    def default(cls) -> TopicSpace:
        """The committed BBC space (5 topics) the systems read, loaded once per process."""
        return _committed_space(DEFAULT_DIR, "build-default")

    @classmethod
    def judge(cls) -> TopicSpace:
        """The committed BBC space STAS is scored with (5 topics, another fit: see the module
        docstring), loaded once per process."""
        return _committed_space(JUDGE_DIR, "build-judge")


@lru_cache(maxsize=2)
def _committed_space(directory: Path, command: str) -> TopicSpace:
    if not (directory / JSON_NAME).is_file():
        raise FileNotFoundError(
            f"{directory}: the committed topic space is missing; rebuild it with `python -m metrics.stas {command}`"
        )
    return TopicSpace.load(directory)


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
