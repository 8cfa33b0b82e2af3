"""Topic spaces: topic vectors in a tf-idf space, the model STAS is computed in (Passali & Tsoumakas, Sec. 3).

A space is a tf-idf model fitted on topic-labelled documents (idf over all of them); a topic's vector
is the mean of its documents' tf-idf vectors (eq. 1); a text's affinity to a topic is the cosine of
its vector with the topic's (eq. 3), and :func:`stas_from_affinities` turns affinities into STAS
(eq. 2). Terms are those of :func:`metrics.terms.analyze`. Representative terms (Sec. 4.2, Fig. 1)
and unseen topics (Sec. 5.3) are read from the same vectors.

Two spaces are committed, both fitted on BBC articles by :mod:`metrics.stas` (which says on which and
why they differ): :meth:`TopicSpace.default`, the space the systems read, and :meth:`TopicSpace.judge`,
the space STAS is scored with. A space is saved as JSON + NPZ, never pickled, so loading one (from the
assets, a checkpoint or a Hub Space) runs no code.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from metrics.terms import analyze

FORMAT = "steersum-topic-space/1"
JSON_NAME, NPZ_NAME = "topic_space.json", "topic_space.npz"  # fixed: a checkpoint carries its space under these
DEFAULT_DIR = Path(__file__).resolve().parent / "assets" / "bbc_topic_space"
JUDGE_DIR = Path(__file__).resolve().parent / "assets" / "bbc_topic_judge"
# Everything about the tf-idf model that is not learnt; saved with the space and checked on load.
# "analyzer" is the name every saved space (the assets, each topic checkpoint) records for
# metrics.terms.analyze: a format value, so it stays as written in those files.
TFIDF_SETTINGS = {
    "analyzer": "metrics.stas.analyze",
    "norm": "l2",
    "use_idf": True,
    "smooth_idf": True,
    "sublinear_tf": False,
}


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
        """The committed BBC space STAS is scored with (5 topics, another fit: see
        :mod:`metrics.stas`), loaded once per process."""
        return _committed_space(JUDGE_DIR, "build-judge")


@lru_cache(maxsize=2)
def _committed_space(directory: Path, command: str) -> TopicSpace:
    if not (directory / JSON_NAME).is_file():
        raise FileNotFoundError(
            f"{directory}: the committed topic space is missing; rebuild it with `python -m metrics.stas {command}`"
        )
    return TopicSpace.load(directory)
