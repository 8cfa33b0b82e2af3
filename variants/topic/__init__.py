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

The topic vocabulary is a :class:`metrics.topic_space.TopicSpace` saved inside each checkpoint; the same
space scores the summary with STAS.

Baseline: topic-focused extraction, the document's sentences closest to the topic in the topic space.
Metrics: STAS (the topic's affinity, Sec. 3) of what the document supports (:func:`supported_stas`)
and ROUGE-1/2/L against the reference of the asked topic's article, both control metrics.
Test set: super-articles (Sec. 5.1), the sentences of two BBC test articles of different topics
interleaved, which one leads a seeded coin flip per example, the target the summary of the article
whose topic is asked for; the topic space scoring them is fitted on training articles only.
Extra test set ``macsum-topic``: MACSum-Doc's human topic-focused summaries, each topic asked as an
unseen topic, shuffled among the topics of the same document (docs/evaluation-targets.md).
Files: ``baseline.py`` (topic-focused extraction), ``evaluation.py`` (test sets, Table 2, the pasted row),
``data.py`` (``python -m training build-data topic``), ``train.py`` (trainer defaults and flags,
``python -m training topic``); model ``models/topic_bart``.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from metrics.support import support_share, supported_spans
from metrics.terms import term
from metrics.text import WORD
from metrics.topic_space import TopicSpace
from models.topic_bart import processing_topic_bart as processing
from models.topic_bart.processing_topic_bart import TAG, TOPIC, TopicProcessor, tagged_share, topic_text

from ..base import (
    Control,
    ControlError,
    Paper,
    Prepared,
    Score,
    Summarizer,
    Variant,
    processor_settings,
    reference_scores,
)
from .baseline import TopicBaseline, topic_focused_extract, unmatched_topic_notices  # noqa: F401
from .evaluation import TopicEvaluation

SPECIAL_TOKENS = [TAG, TOPIC]
DEFAULT_TOP_N = 100  # representative terms per topic (Sec. 5.1: "top-N=100")
# Added along the path of every document sentence (:meth:`TopicVariant.constraints`): a summary sentence that
# starts copying one goes on with it. Chosen on the stored model (docs/log.md).
DOCUMENT_PATH_BIAS = 2.0


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

    def resolve(self, controls: dict) -> tuple[TopicAssets, list[str]]:
        """Assets that know the requested topic: an unseen topic gets its representative terms from
        the topic space on the fly (:func:`with_asked_topic`)."""
        topic = controls["topic"]
        if topic in self.space.topics:
            return self, []
        try:
            space = with_asked_topic(self.space, controls)
        except ValueError as err:
            raise ControlError(
                f"unseen topic {topic!r}: {err}; describe it with a few known words in "
                f"'topic_words' or pick one of: {', '.join(self.space.topics)}"
            ) from None
        notice = f"unseen topic {topic!r}: its representative terms come from the words {topic_words(controls)!r}"
        return replace(self, space=space, _terms={}), [notice]


def topic_words(controls: dict) -> str:
    """The words that describe the asked topic: ``topic_words``, else the topic's own name."""
    return controls.get("topic_words") or controls["topic"]


def with_asked_topic(space: TopicSpace, controls: dict) -> TopicSpace:
    """``space`` knowing the asked topic: as it is for one of its topics; for an unseen one, with the topic
    added from :func:`topic_words` (Sec. 5.3). Both the summarizer's space (:meth:`TopicAssets.resolve`)
    and the judge's (:func:`judge_space`) learn an unseen topic this way, so they read the same words.
    Raises ``ValueError`` when the space knows none of the words."""
    topic = controls["topic"]
    if topic in space.topics:
        return space
    return space.with_topic(topic, words=[w.strip() for w in topic_words(controls).split(",") if w.strip()])


def tag_document(document: str, terms: frozenset[str]) -> str:
    """Wrap each word whose topic-space term (its lemma, :func:`metrics.terms.term`) is in ``terms`` in
    ``[TAG] ... [TAG]`` (the paper's tagging), through the topic's cached :class:`Tagger`."""
    return tagger(terms)(document)


def tag_words(document: str, terms: frozenset[str]) -> str:
    """The tagging rule itself, word by word (:data:`metrics.text.WORD` tokens, each looked up through
    :func:`metrics.terms.term`): the definition :class:`Tagger` reproduces faster."""
    return processing.tag_words(document, terms, term)


class Tagger(processing.Tagger):
    """:class:`models.topic_bart.processing_topic_bart.Tagger` (the exported processor's code) with the
    lemmatizer's :func:`metrics.terms.term`."""

    def __init__(self, terms: frozenset[str], max_chunks: int = 500_000):
        super().__init__(terms, term, max_chunks)


@lru_cache(maxsize=64)
def tagger(terms: frozenset[str]) -> Tagger:
    """The :class:`Tagger` of a set of terms, built once (per topic, per topic space)."""
    return Tagger(terms)


def supported_stas(summary: str, document: str, topic: str, space: TopicSpace) -> tuple[float, float, float]:
    """``(score, raw STAS, supported share)``: STAS (Sec. 3) of the summary's supported runs
    (:func:`metrics.support.supported_spans`) times the share of its words they hold. The topic's terms
    alone score raw STAS 1.0 and 0 here: no four of them follow one another in the document. A summary
    the document supports throughout scores the paper's STAS."""
    raw = float(space.stas([summary], [topic])[0])
    spans = supported_spans(summary, document)
    if not spans:
        return 0.0, raw, 0.0
    share = support_share(summary, document)
    return float(space.stas([" ".join(spans)], [topic])[0]) * share, raw, share


def lemma_table(space: TopicSpace) -> dict[str, Any]:
    """:func:`vocabulary_lemmas` of the space's vocabulary (built once per vocabulary: ~25,000 lemmatizer
    calls for the default space's 20,588 terms)."""
    return vocabulary_lemmas(tuple(map(str, space.terms)))


@lru_cache(maxsize=4)
def vocabulary_lemmas(vocabulary: tuple[str, ...]) -> dict[str, Any]:
    """What the exported processor knows of the lemmatizer (``topic_lemmas.json``): every written form
    whose :func:`metrics.terms.term` is a term of the space's vocabulary, with that term (``forms``, the
    forms that differ from their term), and the vocabulary terms that are not their own term
    (``not_terms``). WordNet's morphology (``nltk``'s ``_morphy``) gives a lemma by one suffix rule or
    one exception list entry, so a term's forms are the term, each rule undone once and the exceptions
    naming it: each is checked with :func:`metrics.terms.term` itself."""
    from nltk.corpus import wordnet

    from metrics.text import lemma

    lemma("warmup")  # loads WordNet
    undone: dict[str, set[str]] = {}
    for pos in ("n", "v"):
        for form, lemmas in wordnet._exception_map[pos].items():
            for name in lemmas:
                undone.setdefault(name, set()).add(form)
    forms, not_terms = {}, []
    for vocabulary_term in vocabulary:
        candidates = {vocabulary_term} | undone.get(vocabulary_term, set())
        for pos in ("n", "v"):
            for old, new in wordnet.MORPHOLOGICAL_SUBSTITUTIONS[pos]:
                if vocabulary_term.endswith(new):
                    candidates.add(vocabulary_term[: len(vocabulary_term) - len(new)] + old)
        for form in sorted(candidates):
            if term(form) == vocabulary_term and form != vocabulary_term:
                forms[form] = vocabulary_term
        if term(vocabulary_term) != vocabulary_term:
            not_terms.append(vocabulary_term)
    return {"forms": dict(sorted(forms.items())), "not_terms": not_terms}


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

    evaluation_class = TopicEvaluation

    def default_assets(self) -> TopicAssets:
        return default_assets()

    def controls_for(self, assets: TopicAssets | None = None) -> tuple[Control, ...]:
        assets = assets or self.default_assets()
        closed = bool(assets.embedding_topics)
        return (
            Control(
                "topic",
                "choice",
                "the topic the summary should be about; tag/prepend models also take "
                "an unseen topic typed as free text",
                choices=tuple(assets.embedding_topics or assets.space.topics),
                open=not closed,
                required=True,
            ),
            Control("topic_words", "text", "for an unseen topic: a few comma-separated words that describe it"),
        )

    def prepare(self, document: str, controls: dict, method: str, assets: TopicAssets | None = None) -> Prepared:
        assets = assets or self.default_assets()
        topic = controls["topic"]
        if self.check_method(method) == "emb":
            if topic not in assets.embedding_topics:
                raise ControlError(
                    f"method 'emb' only knows the topics it was trained on; unknown topic {topic!r}; "
                    f"allowed: {', '.join(assets.embedding_topics)}"
                )
            return Prepared(document, {"topic_ids": assets.embedding_topics.index(topic)})
        assets, notices = assets.resolve(controls)
        tag = tagger(assets.terms(topic)) if "tag" in method else None
        return Prepared(topic_text(document, topic, method, tag), notices=notices)

    def relevance(self, text: str, controls: dict, assets: TopicAssets | None = None) -> float:
        """The share of a window's words the asked topic's tagger marks, in the summarizer's own topic space
        (:func:`~models.topic_bart.processing_topic_bart.tagged_share`, as the exported processor scores it)."""
        assets, _ = (assets or self.default_assets()).resolve(controls)
        return tagged_share(text, tagger(assets.terms(controls["topic"])))

    def processor(self, summarizer: Summarizer) -> TopicProcessor:
        """The method's input as a self-contained processor (:mod:`models.topic_bart.processing_topic_bart`):
        the checkpoint's topic space and its :func:`lemma_table`."""
        import numpy as np

        assets, files = summarizer.assets, {}
        with tempfile.TemporaryDirectory() as folder:
            assets.space.save(folder)
            files[processing.SPACE_FILE] = json.loads(Path(folder, processing.SPACE_FILE).read_text(encoding="utf-8"))
        files[processing.VECTORS_FILE] = {"topic_vectors": np.asarray(assets.space.topic_vectors)}
        files[processing.LEMMAS_FILE] = lemma_table(assets.space)
        settings = processor_settings(summarizer, top_n=assets.top_n, embedding_topics=list(assets.embedding_topics))
        return TopicProcessor(summarizer.tokenizer, settings, files)

    def unconditional(self, document: str, method: str, assets: TopicAssets | None = None) -> Prepared:
        """The document as is: no topic prepended, no word tagged; for ``emb`` the topic id
        :data:`models.topic_bart.NO_TOPIC`, which adds no topic embedding (the plain BART input)."""
        if self.check_method(method) == "emb":
            from models.topic_bart.modeling_topic_bart import NO_TOPIC

            return Prepared(document, {"topic_ids": NO_TOPIC})
        return Prepared(document)

    def constraints(self, controls: dict, assets: TopicAssets | None = None):
        """Every sentence of the document for the decoder to prefer
        (:class:`variants.rule_processors.SentencePathLogitsProcessor`), whatever the topic: which of them the
        summary takes is left to the model and its tag. A summary sentence that copies the document's is one
        STAS can credit (it scores only what the document supports), and the choice reads nothing of the
        topic space that scores it."""
        from ..decoding_rules import DecodingRules

        return DecodingRules(prefer=list, prefer_bias=DOCUMENT_PATH_BIAS)

    def baseline(self) -> Summarizer:
        return TopicBaseline(self, self.default_assets())

    def load_assets(self, path: Path, record: dict, model: Any, tokenizer: Any) -> TopicAssets:
        """The checkpoint's topic space, its tagged terms per topic and (``emb``) its embedding's topics."""
        return TopicAssets(
            TopicSpace.load(path),
            int(record.get("top_n", DEFAULT_TOP_N)),
            list(getattr(model.config, "topics", []) or []),
        )

    def score(
        self,
        summary: str,
        document: str,
        controls: dict,
        reference: str | None = None,
        assets: TopicAssets | None = None,
    ) -> dict[str, Score]:
        """STAS in the judge's space (:meth:`metrics.topic_space.TopicSpace.judge`), never the summarizer's own
        (``assets``), which its tags and the baseline were built from."""
        space = judge_space(controls)
        if space is None:
            scores = {
                "stas": Score(
                    None,
                    f"STAS cannot judge the topic {controls['topic']!r}: its judge knows none of the topic's words",
                )
            }
            scores.update(reference_scores(summary, reference))
            return scores
        affinity = space.affinities([summary])[0]
        stas, raw, share = supported_stas(summary, document, controls["topic"], space)
        scores = {
            "stas": Score(
                stas,
                "topic affinity of what the document supports: STAS (cosine to the requested "
                "topic over the best topic's) of the summary's runs of words found in the document, "
                "times their share of its words (1 = about the topic, and all from the document)",
                {
                    "affinity": dict(zip(space.topics, map(float, affinity))),
                    "stas_of_whole_summary": raw,
                    "supported_share": share,
                },
            )
        }
        scores.update(reference_scores(summary, reference))
        return scores

    def evidence(self, summary: str, controls: dict, assets: TopicAssets | None = None) -> list[str]:
        """The summary's words whose lemma is a representative term of the requested topic: the
        words the ``tag`` method would mark, as written in the summary."""
        assets, _ = (assets or self.default_assets()).resolve(controls)
        terms = assets.terms(controls["topic"])
        return list(dict.fromkeys(w for w in WORD.findall(summary) if term(w.lower()) in terms))


def judge_space(controls: dict) -> TopicSpace | None:
    """The space STAS is scored with, knowing the requested topic (:func:`with_asked_topic`); None when
    the judge knows none of its words."""
    try:
        return with_asked_topic(TopicSpace.judge(), controls)
    except ValueError:
        return None


@lru_cache(maxsize=1)
def default_assets() -> TopicAssets:
    """The embedded default: the topic space fitted on the bundled BBC training articles (5 topics)."""
    return TopicAssets(TopicSpace.default())
