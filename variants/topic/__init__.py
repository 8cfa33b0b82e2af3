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
Metrics: STAS (the topic's affinity, Sec. 3) of what the document supports (:func:`supported_stas`)
and ROUGE-1/2/L against the reference of the asked topic's article, both control metrics.
Test set: super-articles (Sec. 5.1), the sentences of two BBC test articles of different topics
interleaved, which one leads a seeded coin flip per example, the target the summary of the article
whose topic is asked for; the topic space scoring them is fitted on training articles only.
Extra test set ``macsum-topic``: MACSum-Doc's human topic-focused summaries, each topic asked as an
unseen topic, shuffled among the topics of the same document (docs/evaluation-targets.md).
Files: data builder ``variants/topic/data.py`` (``python -m training build-data topic``); trainer
defaults and flags ``variants/topic/train.py`` (``python -m training topic``); model ``models/topic_bart``.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from metrics.stas import TopicSpace, analyze, term
from metrics.support import support_share, supported_spans
from metrics.text import WORD, sentences
from models.topic_bart import processing_topic_bart as processing
from models.topic_bart.processing_topic_bart import TAG, TOPIC, TopicProcessor, topic_text

from ..base import (
    Baseline,
    Control,
    ControlError,
    Paper,
    Prepared,
    Score,
    Summarizer,
    Summary,
    Variant,
    processor_settings,
    reference_scores,
    whole_groups,
)

SPECIAL_TOKENS = [TAG, TOPIC]
DEFAULT_TOP_N = 100  # representative terms per topic (Sec. 5.1: "top-N=100")
# Added along the path of every document sentence (:meth:`TopicVariant.constraints`): a summary sentence that
# starts copying one goes on with it. Measured at 2 on the stored model (docs/log.md).
DOCUMENT_PATH_BIAS = 2.0
PASTED_TERMS = 10  # the pasted row's terms: ten of them alone already score STAS 1.0


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
        the topic space on the fly, from ``topic_words`` (or the topic's own name) (Sec. 5.3)."""
        topic = controls["topic"]
        if topic in self.space.topics:
            return self, []
        words = controls.get("topic_words") or topic
        try:
            space = self.space.with_topic(topic, words=[w.strip() for w in words.split(",") if w.strip()])
        except ValueError as err:
            raise ControlError(
                f"unseen topic {topic!r}: {err}; describe it with a few known words in "
                f"'topic_words' or pick one of: {', '.join(self.space.topics)}"
            ) from None
        notice = f"unseen topic {topic!r}: its representative terms come from the words {words!r}"
        return replace(self, space=space, _terms={}), [notice]


def tag_document(document: str, terms: frozenset[str]) -> str:
    """Wrap each word whose topic-space term (its lemma, :func:`metrics.stas.term`) is in ``terms`` in
    ``[TAG] ... [TAG]`` (the paper's tagging), through the topic's cached :class:`Tagger`."""
    return tagger(terms)(document)


def tag_words(document: str, terms: frozenset[str]) -> str:
    """The tagging rule itself, word by word (:data:`metrics.text.WORD` tokens, each looked up through
    :func:`metrics.stas.term`): the definition :class:`Tagger` reproduces faster."""
    return processing.tag_words(document, terms, term)


class Tagger(processing.Tagger):
    """:class:`models.topic_bart.processing_topic_bart.Tagger` (the exported processor's code) with the
    lemmatizer's :func:`metrics.stas.term`."""

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
    whose :func:`metrics.stas.term` is a term of the space's vocabulary, with that term (``forms``, the
    forms that differ from their term), and the vocabulary terms that are not their own term
    (``not_terms``). WordNet's morphology (``nltk``'s ``_morphy``) gives a lemma by one suffix rule or
    one exception list entry, so a term's forms are the term, each rule undone once and the exceptions
    naming it: each is checked with :func:`metrics.stas.term` itself."""
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
        text = topic_focused_extract(document, controls["topic"], assets.space)
        unseen = controls["topic"] not in self.assets.space.topics
        return Summary(text, notices + unmatched_topic_notices(document, controls["topic"], assets.space, unseen))


def unmatched_topic_notices(
    document: str, topic: str, space: TopicSpace, unseen: bool, n_sentences: int = 3
) -> list[str]:
    """A notice when no sentence shares a term with the topic's vector: every similarity is 0, so the
    extract is the first sentences (Lead-3) and STAS is 0 whatever was asked. Typical of an unseen
    topic named by one word the document does not use ("football" for a match report)."""
    sents = sentences(document)
    if len(sents) <= n_sentences or space.affinities(sents)[:, space.topics.index(topic)].max() > 0:
        return []
    hint = (
        (
            "describe the topic in 'topic_words' with a few words this document uses (for a match report: "
            "striker, league, match)"
        )
        if unseen
        else "this document is not about it"
    )
    return [
        f"no sentence of the document uses a term of topic {topic!r}, so the extract is its first {n_sentences} "
        f"sentences (Lead-3) and STAS is 0: {hint}"
    ]


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
    # ROUGE is against the asked topic's article: given another topic, a summary is scored against the
    # wrong article's reference, so ROUGE measures obedience too, and pasting cannot write that reference.
    control_metrics = ("stas", "rouge1", "rouge2", "rougeLsum")
    # Table 2 (super-articles from CNN/DailyMail, BART-large) prints percentages; divided by 100 here
    # to be fractions like ours (39.30 -> 0.3930). The paper's "R-L" is listed as rougeLsum; the PG
    # rows have no STAS.
    reported = (
        {"system": "PG", "source": "Table 2", "metrics": {"rouge1": 0.268, "rouge2": 0.092, "rougeLsum": 0.245}},
        {
            "system": "Topic-Oriented PG",
            "source": "Table 2",
            "metrics": {"rouge1": 0.341, "rouge2": 0.136, "rougeLsum": 0.312},
        },
        {
            "system": "BART (no topic)",
            "source": "Table 2",
            "metrics": {"stas": 0.5186, "rouge1": 0.3046, "rouge2": 0.1192, "rougeLsum": 0.2057},
        },
        {
            "system": "BARTtag",
            "source": "Table 2",
            "metrics": {"stas": 0.6842, "rouge1": 0.3930, "rouge2": 0.1806, "rougeLsum": 0.3667},
        },
        {
            "system": "BARTemb",
            "source": "Table 2",
            "metrics": {"stas": 0.6850, "rouge1": 0.4015, "rouge2": 0.1853, "rougeLsum": 0.3741},
        },
        {
            "system": "BARTpre",
            "source": "Table 2",
            "metrics": {"stas": 0.7190, "rouge1": 0.4158, "rouge2": 0.1955, "rougeLsum": 0.3874},
        },
        {
            "system": "BARTpre+tag",
            "source": "Table 2",
            "metrics": {"stas": 0.7236, "rouge1": 0.4166, "rouge2": 0.1957, "rougeLsum": 0.3883},
        },
    )

    def test_examples(self, max_samples: int | None = None, join: str = "interleaved") -> list[dict]:
        """Super-articles (Sec. 4.3) built from the ``bbc_summary`` test split, seed 0. The shuffled pass
        asks each for the other article's topic (``shuffled_controls``): a topic the super-article treats
        as much as the right one, where a topic drawn from another example is mostly one neither article
        is about."""
        from ..sources import load_source
        from .data import super_articles

        articles = load_source("bbc_summary", "test")
        records = super_articles(articles, seed=0, split="test", dataset="bbc_summary", join=join)[:max_samples]
        return [{**r, "shuffled_controls": {"topic": r["other_topic"]}} for r in records]

    extra_test_sets = ("macsum-topic", "concatenated")

    def extra_test_set(self, name: str, max_samples: int | None = None) -> list[dict]:
        """``concatenated``: the derived test set's pairs with one article after the other.
        ``macsum-topic``: MACSum-Doc's human topic-focused summaries (CC BY-NC-ND: references used
        unchanged, for evaluation only), each topic asked through the unseen-topic path, shuffled
        among the topics of the same document (:func:`variants.topic.data.macsum_topic_set`); whole
        documents only (:func:`variants.base.whole_groups`)."""
        if name not in self.extra_test_sets:
            return super().extra_test_set(name, max_samples)
        if name == "concatenated":  # the same pairs, one article after the other, the asked one first or second
            return self.test_examples(max_samples, join="concatenated")
        from ..sources import load_source
        from .data import macsum_topic_set

        # the test TopicSpace.with_topic applies: a topic is usable when one of its words has a known term (a
        # topic the smaller judge does not know gets no STAS, its ROUGE still counts)
        vocabulary = default_assets().space.vectorizer.vocabulary_
        records, _ = macsum_topic_set(
            load_source("macsum_doc", "val"), lambda words: any(t in vocabulary for w in words for t in analyze(w))
        )
        return whole_groups(records, max_samples)

    def controls_for(self, assets: TopicAssets | None = None) -> tuple[Control, ...]:
        assets = assets or default_assets()
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

    @property
    def controls(self) -> tuple[Control, ...]:
        return self.controls_for()

    def prepare(self, document: str, controls: dict, method: str, assets: TopicAssets | None = None) -> Prepared:
        assets = assets or default_assets()
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
        """Every sentence of the document for the decoder to prefer (:class:`variants.constraints.SentencePathLogitsProcessor`),
        whatever the topic: which of them the summary takes is left to the model and its tag. A summary
        sentence that copies the document's is one STAS can credit (it scores only what the document
        supports), and the choice reads nothing of the topic space that scores it."""
        from ..constraints import HardConstraints

        return HardConstraints(prefer=list, prefer_bias=DOCUMENT_PATH_BIAS)

    def baseline(self) -> Summarizer:
        return TopicBaseline(self, default_assets())

    def load(self, path: Path, record: dict, device: str | None = None, **kwargs: Any) -> Summarizer:
        from ..seq2seq import Seq2SeqSummarizer, load_seq2seq

        model, tokenizer = load_seq2seq(path, device, **kwargs)
        assets = TopicAssets(
            TopicSpace.load(path),
            int(record.get("top_n", DEFAULT_TOP_N)),
            list(getattr(model.config, "topics", []) or []),
        )
        return Seq2SeqSummarizer(
            self, record.get("name", Path(path).name), record["method"], model, tokenizer, assets, record
        )

    def score(
        self,
        summary: str,
        document: str,
        controls: dict,
        reference: str | None = None,
        assets: TopicAssets | None = None,
    ) -> dict[str, Score]:
        """STAS in the judge's space (:meth:`metrics.stas.TopicSpace.judge`), never the summarizer's own
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

    def paste(self, lead: str, controls: dict, assets: TopicAssets | None = None) -> str:
        """Lead-k followed by the topic's :data:`PASTED_TERMS` top representative terms."""
        assets, _ = (assets or default_assets()).resolve(controls)
        return f"{lead} {' '.join(assets.space.representative_terms(controls['topic'], PASTED_TERMS))}"

    def evidence(self, summary: str, controls: dict, assets: TopicAssets | None = None) -> list[str]:
        """The summary's words whose lemma is a representative term of the requested topic: the
        words the ``tag`` method would mark, as written in the summary."""
        assets, _ = (assets or default_assets()).resolve(controls)
        terms = assets.terms(controls["topic"])
        return list(dict.fromkeys(w for w in WORD.findall(summary) if term(w.lower()) in terms))


_DEFAULT_ASSETS: TopicAssets | None = None


def judge_space(controls: dict) -> TopicSpace | None:
    """The space STAS is scored with, knowing the requested topic (an unseen one from its
    ``topic_words``, as :meth:`TopicAssets.resolve` does); None when the judge knows none of its words."""
    judge, topic = TopicSpace.judge(), controls["topic"]
    if topic in judge.topics:
        return judge
    words = controls.get("topic_words") or topic
    try:
        return judge.with_topic(topic, words=[w.strip() for w in words.split(",") if w.strip()])
    except ValueError:
        return None


def default_assets() -> TopicAssets:
    """The embedded default: the topic space fitted on the bundled BBC training articles (5 topics)."""
    global _DEFAULT_ASSETS
    if _DEFAULT_ASSETS is None:
        _DEFAULT_ASSETS = TopicAssets(TopicSpace.default())
    return _DEFAULT_ASSETS
