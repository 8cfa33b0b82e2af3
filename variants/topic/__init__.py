"""Topic-controlled summarization (Passali et al., "Topic-controllable summarization: topic-aware
evaluation and transformer methods", LREC-COLING 2024).

Four ways to tell BART which topic to summarize for, one ``prepare`` for all of them:

* ``prepend``     the topic's name, then the special token ``[TOPIC]``, in front of the document
                  (Sec. 4.2 a). The name is text, so an unseen topic can be prepended too (Sec. 5.3).
* ``tag``         every word whose lemma is one of the topic's top-N representative terms is wrapped
                  in ``[TAG] ... [TAG]`` (Sec. 4.2 b and its example).
* ``prepend-tag`` both (the paper's best method, Table 2).
* ``emb``         a trainable topic embedding added to the encoder input (Sec. 4.1,
                  :mod:`models.topic_bart`); only topics seen in training.

The topic vocabulary is a :class:`metrics.stas.TopicSpace` saved inside each checkpoint; the same
space scores the summary with STAS.

Baseline: topic-focused extraction, the document's sentences closest to the topic in the topic space.
Metrics: STAS (the topic's affinity, Sec. 3) and ROUGE-1/2/L against the reference.
Test set: super-articles (Sec. 5.1), the sentences of two BBC test articles of different topics
interleaved, which one leads a seeded coin flip per example, the target the summary of the article
whose topic is asked for; the topic space scoring them is fitted on training articles only.
Files: data builder ``variants/topic/data.py`` (``python -m training build-data topic``); trainer
defaults and flags ``variants/topic/train.py`` (``python -m training topic``); model ``models/topic_bart``.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from metrics.stas import TopicSpace, term
from metrics.text import WORD, sentences

from ..base import (Baseline, Control, ControlError, Paper, Prepared, Score, Summarizer, Summary, Variant,
                   reference_scores)

TAG, TOPIC = "[TAG]", "[TOPIC]"
SPECIAL_TOKENS = [TAG, TOPIC]
DEFAULT_TOP_N = 100  # representative terms per topic (Sec. 5.1: "top-N=100")


@dataclass
class TopicAssets:
    """What a topic summarizer carries besides weights: its topic space, the number of terms tagged
    per topic, and (for ``emb``) the topics its embedding table was trained on."""

    space: TopicSpace
    top_n: int = DEFAULT_TOP_N
    embedding_topics: list[str] = field(default_factory=list)
    _terms: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

    def terms(self, topic: str) -> frozenset[str]:
        if topic not in self._terms:
            self._terms[topic] = frozenset(self.space.representative_terms(topic, self.top_n))
        return self._terms[topic]

    def resolve(self, controls: dict) -> tuple["TopicAssets", list[str]]:
        """Assets that know the requested topic: an unseen topic gets its representative terms from
        the topic space on the fly, from ``topic_words`` (or the topic's own name) (Sec. 5.3)."""
        topic = controls["topic"]
        if topic in self.space.topics:
            return self, []
        words = controls.get("topic_words") or topic
        try:
            space = self.space.with_topic(topic, words=[w.strip() for w in words.split(",") if w.strip()])
        except ValueError as err:
            raise ControlError(f"unseen topic {topic!r}: {err}; describe it with a few known words in "
                               f"'topic_words' or pick one of: {', '.join(self.space.topics)}") from None
        notice = f"unseen topic {topic!r}: its representative terms come from the words {words!r}"
        return replace(self, space=space, _terms={}), [notice]


def tag_document(document: str, terms: frozenset[str]) -> str:
    """Wrap each word whose topic-space term (its lemma, :func:`metrics.stas.term`) is in ``terms`` in
    ``[TAG] ... [TAG]`` (the paper's tagging), through the topic's cached :class:`Tagger`."""
    return tagger(terms)(document)


def tag_words(document: str, terms: frozenset[str]) -> str:
    """The tagging rule itself, word by word (:data:`metrics.text.WORD` tokens, each looked up through
    :func:`metrics.stas.term`): the definition :class:`Tagger` reproduces faster."""
    return WORD.sub(lambda m: f"{TAG} {m.group(0)} {TAG}" if term(m.group(0).lower()) in terms else m.group(0),
                    document)


class Tagger:
    """:func:`tag_words` for one topic's terms, fast: a document is cut at spaces (``str.split``) into
    chunks such as ``"(banks'"``; a chunk met before is looked up in a dict of the chunks holding a
    tagged word, with their tagged text; a chunk not met before goes through the lemma rule
    (:func:`tag_words` on the chunk alone: exactly what it gives inside the document, since no WORD
    token holds a space). Python touches each chunk once, in one list comprehension; the lemma rule
    runs only for new chunks. Thread-safe; the cache starts over past ``max_chunks`` chunks."""

    def __init__(self, terms: frozenset[str], max_chunks: int = 500_000):
        self.terms, self.max_chunks = terms, max_chunks
        self._lock = threading.Lock()
        # chunks (as written) already looked at; those among them holding a tagged word → their tagged text
        self._state: tuple[set[str], dict[str, str]] = (set(), {})

    def __call__(self, document: str) -> str:
        chunks = document.split(" ")
        seen, tagged = self._state
        new = set(chunks) - seen
        if new:
            with self._lock:  # tagged first, then seen: a reader never sees a chunk before its tagged text
                seen, tagged = self._state
                if len(seen) > self.max_chunks:
                    seen, tagged = set(), {}
                for chunk in new - seen:
                    text = tag_words(chunk, self.terms)
                    if text != chunk:
                        tagged[chunk] = text
                seen |= new
                self._state = (seen, tagged)
        if tagged.keys().isdisjoint(chunks):
            return document
        return " ".join([tagged.get(chunk, chunk) for chunk in chunks])


@lru_cache(maxsize=64)
def tagger(terms: frozenset[str]) -> Tagger:
    """The :class:`Tagger` of a set of terms, built once (per topic, per topic space)."""
    return Tagger(terms)


def topic_focused_extract(document: str, topic: str, space: TopicSpace, n_sentences: int = 3) -> str:
    """The model-free baseline: the ``n_sentences`` sentences most similar to the topic vector, in
    document order (a topic-focused Lead-3)."""
    sents = sentences(document)
    if len(sents) <= n_sentences:
        return " ".join(sents)
    column = space.topics.index(topic)
    similarity = space.affinities(sents)[:, column]
    best = sorted(sorted(range(len(sents)), key=lambda i: (-similarity[i], i))[:n_sentences])
    return " ".join(sents[i] for i in best)


class TopicBaseline(Baseline):
    name = "baseline: topic-focused extraction"

    def extract(self, document: str, controls: dict) -> Summary:
        assets, notices = self.assets.resolve(controls)
        return Summary(topic_focused_extract(document, controls["topic"], assets.space), notices)


class TopicVariant(Variant):
    id = "topic"
    title = "Topic-controlled BART"
    description = "Summarize a document for a chosen topic (tag, prepend, prepend+tag or topic embeddings)."
    paper = Paper(
        title="Topic-controllable summarization: topic-aware evaluation and transformer methods",
        authors="Tatiana Passali, Grigorios Tsoumakas",
        year=2024,
        url="https://aclanthology.org/2024.lrec-main.1432",
        bibtex="""@inproceedings{passali2024topic,
  title     = {Topic-controllable summarization: topic-aware evaluation and transformer methods},
  author    = {Passali, Tatiana and Tsoumakas, Grigorios},
  booktitle = {Proceedings of LREC-COLING 2024},
  year      = {2024}
}""",
    )
    methods = ("tag", "emb", "prepend", "prepend-tag")
    metric_names = ("stas", "rouge1", "rouge2", "rougeLsum")
    control_metrics = ("stas",)
    # Table 2 (super-articles from CNN/DailyMail, BART-large) prints percentages; divided by 100 here
    # to be fractions like ours (39.30 -> 0.3930). The paper's "R-L" is listed as rougeLsum; the PG
    # rows have no STAS.
    reported = (
        {"system": "PG", "source": "Table 2", "metrics": {"rouge1": 0.268, "rouge2": 0.092, "rougeLsum": 0.245}},
        {"system": "Topic-Oriented PG", "source": "Table 2",
         "metrics": {"rouge1": 0.341, "rouge2": 0.136, "rougeLsum": 0.312}},
        {"system": "BART (no topic)", "source": "Table 2",
         "metrics": {"stas": 0.5186, "rouge1": 0.3046, "rouge2": 0.1192, "rougeLsum": 0.2057}},
        {"system": "BARTtag", "source": "Table 2",
         "metrics": {"stas": 0.6842, "rouge1": 0.3930, "rouge2": 0.1806, "rougeLsum": 0.3667}},
        {"system": "BARTemb", "source": "Table 2",
         "metrics": {"stas": 0.6850, "rouge1": 0.4015, "rouge2": 0.1853, "rougeLsum": 0.3741}},
        {"system": "BARTpre", "source": "Table 2",
         "metrics": {"stas": 0.7190, "rouge1": 0.4158, "rouge2": 0.1955, "rougeLsum": 0.3874}},
        {"system": "BARTpre+tag", "source": "Table 2",
         "metrics": {"stas": 0.7236, "rouge1": 0.4166, "rouge2": 0.1957, "rougeLsum": 0.3883}},
    )

    def test_examples(self, max_samples: int | None = None) -> list[dict]:
        """Super-articles (Sec. 4.3) built from the ``bbc_summary`` test split, seed 0."""
        from ..sources import load_source
        from .data import super_articles

        articles = load_source("bbc_summary", "test")
        return super_articles(articles, seed=0, split="test", dataset="bbc_summary")[:max_samples]

    def controls_for(self, assets: TopicAssets | None = None) -> tuple[Control, ...]:
        assets = assets or default_assets()
        closed = bool(assets.embedding_topics)
        return (
            Control("topic", "choice", "the topic the summary should be about; tag/prepend models also take "
                    "an unseen topic typed as free text", choices=tuple(assets.embedding_topics or assets.space.topics),
                    open=not closed, required=True),
            Control("topic_words", "text", "for an unseen topic: a few comma-separated words that describe it"),
        )

    @property
    def controls(self) -> tuple[Control, ...]:
        return self.controls_for()

    def prepare(self, document: str, controls: dict, method: str, assets: TopicAssets | None = None) -> Prepared:
        assets = assets or default_assets()
        topic = controls["topic"]
        if self.check_method(method) == "emb":
            if topic not in assets.embedding_topics:
                raise ControlError(f"method 'emb' only knows the topics it was trained on; unknown topic {topic!r}; "
                                   f"allowed: {', '.join(assets.embedding_topics)}")
            return Prepared(document, {"topic_ids": assets.embedding_topics.index(topic)})
        assets, notices = assets.resolve(controls)
        text = tag_document(document, assets.terms(topic)) if "tag" in method else document
        if method.startswith("prepend"):
            text = f"{topic} {TOPIC} {text}"
        return Prepared(text, notices=notices)

    def unconditional(self, document: str, method: str, assets: TopicAssets | None = None) -> Prepared:
        """The document as is: no topic prepended, no word tagged; for ``emb`` the topic id
        :data:`models.topic_bart.NO_TOPIC`, which adds no topic embedding (the plain BART input)."""
        if self.check_method(method) == "emb":
            from models.topic_bart.modeling_topic_bart import NO_TOPIC

            return Prepared(document, {"topic_ids": NO_TOPIC})
        return Prepared(document)

    def baseline(self) -> Summarizer:
        return TopicBaseline(self, default_assets())

    def load(self, path: Path, record: dict, device: str | None = None, **kwargs: Any) -> Summarizer:
        from ..seq2seq import Seq2SeqSummarizer, load_seq2seq

        model, tokenizer = load_seq2seq(path, device, **kwargs)
        assets = TopicAssets(TopicSpace.load(path), int(record.get("top_n", DEFAULT_TOP_N)),
                             list(getattr(model.config, "topics", []) or []))
        return Seq2SeqSummarizer(self, record.get("name", Path(path).name), record["method"], model, tokenizer, assets, record)

    def score(self, summary: str, document: str, controls: dict, reference: str | None = None,
              assets: TopicAssets | None = None) -> dict[str, Score]:
        assets, _ = (assets or default_assets()).resolve(controls)
        affinity = assets.space.affinities([summary])[0]
        stas = float(assets.space.stas([summary], [controls["topic"]])[0])
        scores = {"stas": Score(stas, "topic affinity: cosine to the requested topic over the best topic's "
                                "(1 = the summary is most about the requested topic)",
                                {"affinity": dict(zip(assets.space.topics, map(float, affinity)))})}
        scores.update(reference_scores(summary, reference))
        return scores

    def evidence(self, summary: str, controls: dict, assets: TopicAssets | None = None) -> list[str]:
        """The summary's words whose lemma is a representative term of the requested topic: the
        words the ``tag`` method would mark, as written in the summary."""
        assets, _ = (assets or default_assets()).resolve(controls)
        terms = assets.terms(controls["topic"])
        return list(dict.fromkeys(w for w in WORD.findall(summary) if term(w.lower()) in terms))


_DEFAULT_ASSETS: TopicAssets | None = None


def default_assets() -> TopicAssets:
    """The embedded default: the topic space fitted on the bundled BBC training articles (5 topics)."""
    global _DEFAULT_ASSETS
    if _DEFAULT_ASSETS is None:
        _DEFAULT_ASSETS = TopicAssets(TopicSpace.default())
    return _DEFAULT_ASSETS
