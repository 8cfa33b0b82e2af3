"""Keyword-guided summarization with TF-IDF (Takeshita et al., "ROUGE-K: Do Your Summaries Have
Keywords?", *SEM 2024, Sec. 4), scored with the paper's ROUGE-K.

Every method gives the model the same extra input: each source token's TF-IDF score (the score of
the word it belongs to), from a scikit-learn vectorizer fitted on the training documents and saved
with the checkpoint (``tfidf_vectorizer.json``), so inference uses the training vocabulary and IDF.
The methods differ in where the scores go (:mod:`models.tdsum`):

* ``tdsum``  a TF-IDF encoder and an added cross-attention in every decoder layer, trained with the
             TDMTL loss (the paper's proposal);
* ``rwenc``  scores added to the self-attention logits of encoder layers 0, 4 and 8;
* ``rwgen``  the output distribution mixed with the source's TF-IDF distribution;
* ``tdmtl``  the scores are a second training target (predicted from the encoder, MSE loss).

The user's control: words to ``boost`` (their input score is raised to the highest a word can have)
and to ``suppress`` (set to 0). Live scores: ``boosted_found``, the share of the boosted words found
in the summary (found / given, so a boosted word the document lacks counts as missed); without
boosts, ``doc_keyword_recall``, the share of the document's own top 5 TF-IDF terms found. The latter
is a recall of the document's keywords, *not* the paper's ROUGE-K (whose keywords come from the
references), and the baseline picks sentences for exactly those terms, so it says how a summary
covers the source's salient words, not how good it is.

Every system is scored with one vectorizer, the committed default (:func:`default_assets`), never
a checkpoint's own, so models and the baseline are compared on the same terms.

Baseline: keyword-covering extraction, sentences chosen greedily to cover the top TF-IDF terms,
within a budget of :data:`BASELINE_WORDS` words (the median SciTLDR training TLDR), so its output is
about as long as the references rather than several times longer (docs/log.md has its scores with and
without the budget).
Metrics: headline the paper's ROUGE-K over the reference keywords (``rouge_k_refs``), then
ROUGE-1/2/Lsum and ``doc_keyword_recall``.
Test set: SciTLDR-A test abstracts → the author's TLDR as target, asking to boost up to two words of that
TLDR that the document uses outside its top-10 TF-IDF terms (data.with_reference_boosts); every TLDR
(author and peer-review derived, 2-4) and the paper title as references for ROUGE-K's keywords.

Files: ``baseline.py``, ``evaluation.py`` (test set, Table 8, ROUGE-K, the pasted row), ``data.py``
(``python -m training build-data tdsum``), ``train.py`` (trainer defaults and flags, ``python -m training
tdsum``); model ``models/tdsum``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from metrics.rouge_k import found_keywords
from metrics.support import supported_spans
from metrics.text import STOPWORDS, WORD, words
from models.tdsum.processing_tdsum import (  # noqa: F401
    BOOST_SCORE,
    VECTORIZER_FILE,
    TDSumProcessor,
    control_terms,
    steer,
    token_scores,
    word_scores,
)

from ..base import (
    Control,
    ControlError,
    Paper,
    Prepared,
    Score,
    Summarizer,
    Variant,
    check_document,
    processor_settings,
    reference_scores,
)
from .baseline import BASELINE_WORDS, TDSumBaseline, keyword_covering_extract  # noqa: F401
from .evaluation import TDSumEvaluation

TOP_TERMS = 5  # the document's keywords for doc_keyword_recall (SciTLDR: ~4-5 keywords, Table 4)
METHODS = ("tdsum", "rwenc", "rwgen", "tdmtl")
SETTINGS = ("tfidf_attention", "rwenc_layers", "rwgen_lambda", "tdmtl_lambda")  # models.tdsum.TDSumConfig
TFIDF_SETTINGS = dict(
    lowercase=True, token_pattern=WORD.pattern, stop_words=sorted(STOPWORDS), norm="l2", sublinear_tf=False
)


# --- the TF-IDF vocabulary ---------------------------------------------------------------------
def fit_vectorizer(documents: list[str], min_df: int = 2) -> TfidfVectorizer:
    """TF-IDF fitted on training documents: SteerSum's word pattern, scikit-learn's stop words, words
    seen in at least ``min_df`` documents (the paper gives no settings)."""
    # WORD matches case-insensitively; the vectorizer lower-cases first, so the plain pattern suffices.
    return TfidfVectorizer(min_df=min_df, **TFIDF_SETTINGS).fit(documents)


def save_vectorizer(vectorizer: TfidfVectorizer, folder: str | Path) -> None:
    """Vocabulary and IDF as JSON (a pickle would be refused by the Hub export: loading one runs code)."""
    terms = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get)
    Path(folder, VECTORIZER_FILE).write_text(
        json.dumps({"terms": terms, "idf": [float(x) for x in vectorizer.idf_], "min_df": vectorizer.min_df}) + "\n",
        encoding="utf-8",
    )


def load_vectorizer(folder: str | Path) -> TfidfVectorizer:
    file = Path(folder, VECTORIZER_FILE)
    if not file.is_file():
        raise FileNotFoundError(
            f"{folder}: no {VECTORIZER_FILE} (a TDSum checkpoint saves its TF-IDF vocabulary there)"
        )
    saved = json.loads(file.read_text(encoding="utf-8"))
    vectorizer = TfidfVectorizer(vocabulary={t: i for i, t in enumerate(saved["terms"])}, **TFIDF_SETTINGS)
    vectorizer.idf_ = np.asarray(saved["idf"], dtype=np.float64)
    return vectorizer


class TokenScores(list):
    """Per-token TF-IDF scores: a plain list (it stacks into a tensor) that prints as a one-line summary."""

    def __str__(self) -> str:
        nonzero = [s for s in self if s]
        return f"{len(self)} per-token TF-IDF scores, {len(nonzero)} non-zero" + (
            f", highest {max(nonzero):.3f}" if nonzero else ""
        )


@dataclass
class DocumentWords:
    """A document's words: character spans, lower-cased terms and TF-IDF scores (0 when unknown)."""

    starts: np.ndarray
    ends: np.ndarray
    terms: list[str]
    scores: np.ndarray


def document_words(documents: list[str], vectorizer: TfidfVectorizer) -> list[DocumentWords]:
    """Every document's words and their scores: ``vectorizer.transform``'s values, computed by the exported
    repo's processor code (:func:`models.tdsum.processing_tdsum.word_scores`), so SteerSum and a Hub user
    give the model the same numbers."""
    return [DocumentWords(*word_scores(document, vectorizer.vocabulary_, vectorizer.idf_)) for document in documents]


@dataclass
class TDSumAssets:
    """What a TDSum summarizer carries besides weights: the fitted vectorizer, the model's tokenizer
    (to align scores to its subwords) and the width every score list is padded to."""

    vectorizer: TfidfVectorizer
    tokenizer: Any = None
    max_source_length: int = 1024
    method: str = "tdsum"
    settings: dict = field(default_factory=dict)  # the model's TF-IDF settings (config), for its card

    def token_scores(self, documents: list[str], controls: list[dict]) -> tuple[list[TokenScores], list[list[str]]]:
        """Batched TF-IDF features aligned to the tokenizer's subwords, with each document's boosts
        and suppressions applied; cut as ``encode`` cuts the ids and padded with 0 to
        ``max_source_length`` (:func:`models.tdsum.processing_tdsum.token_scores`). Returns the scores and,
        per document, notices about the controls."""
        scores, notices = token_scores(
            self.tokenizer,
            documents,
            controls,
            self.vectorizer.vocabulary_,
            self.vectorizer.idf_,
            self.max_source_length,
            self.method,
        )
        return [TokenScores(row) for row in scores], notices

    def steered(self, doc: DocumentWords, controls: dict) -> tuple[np.ndarray, list[str]]:
        """The document's word scores after the user's boosts (raised to :data:`BOOST_SCORE`) and
        suppressions (0), and notices for words that change nothing or are unknown to the vocabulary."""
        return steer(doc.terms, doc.scores, controls, self.vectorizer.vocabulary_, self.method)

    def top_terms(self, document: str, n: int = TOP_TERMS, exclude: frozenset[str] = frozenset()) -> list[str]:
        """The document's ``n`` highest-scoring terms (ties in order of first occurrence)."""
        doc = document_words([document], self.vectorizer)[0]
        best: dict[str, float] = {}
        for term, score in zip(doc.terms, doc.scores.tolist()):
            if score > 0 and term not in exclude and term not in best:
                best[term] = score
        return sorted(best, key=lambda t: -best[t])[:n]


def supported_found(summary: str, document: str, keywords: list[str]) -> list[str]:
    """The keywords that some supported run of the summary holds (:func:`metrics.support.supported_spans`)."""
    found = {keyword for span in supported_spans(summary, document) for keyword in found_keywords(span, keywords)}
    return [keyword for keyword in keywords if keyword in found]


CONTROLS = (
    Control(
        "boost",
        "keywords",
        "words the summary should contain: their TF-IDF input is raised to the highest score a word can have",
    ),
    Control("suppress", "keywords", "words to play down: their TF-IDF input is set to 0"),
)


# --- the variant ---------------------------------------------------------------------------------
class TDSumVariant(Variant):
    id = "tdsum"
    title = "TF-IDF-guided BART (TDSum)"
    description = "Summarize so that the document's keywords, or the words you boost, make it into the summary."
    paper = Paper(
        title="ROUGE-K: Do Your Summaries Have Keywords?",
        authors="Sotaro Takeshita, Simone Paolo Ponzetto, Kai Eckert",
        year=2024,
        url="https://arxiv.org/abs/2403.05186",
        bibtex="""@inproceedings{takeshita2024rougek,
  title     = {{ROUGE-K}: Do Your Summaries Have Keywords?},
  author    = {Takeshita, Sotaro and Ponzetto, Simone Paolo and Eckert, Kai},
  booktitle = {Proceedings of the 13th Joint Conference on Lexical and Computational Semantics (*SEM 2024)},
  year      = {2024}
}""",
    )
    methods = METHODS

    evaluation_class = TDSumEvaluation

    def controls_for(self, assets: Any = None) -> tuple[Control, ...]:
        return CONTROLS

    def default_assets(self) -> TDSumAssets:
        return default_assets()

    def check_controls(self, controls: dict | None, assets: Any = None) -> dict:
        checked = super().check_controls(controls, assets)
        both = sorted(set(control_terms(checked.get("boost"))) & set(control_terms(checked.get("suppress"))))
        if both:
            raise ControlError(
                f"word(s) {', '.join(map(repr, both))} are both boosted and suppressed; "
                "allowed: a word in one of the two lists"
            )
        return checked

    def prepare(self, document: str, controls: dict, method: str, assets: TDSumAssets | None = None) -> Prepared:
        self.check_method(method)
        if assets is None or assets.tokenizer is None:
            raise ValueError(
                "TDSum's prepare needs the model's assets (vectorizer and tokenizer): "
                "load the checkpoint with variants.load_summarizer"
            )
        scores, notices = assets.token_scores([check_document(document)], [controls])
        return Prepared(document, {"tfidf": scores[0]}, notices[0])

    def processor(self, summarizer: Summarizer) -> TDSumProcessor:
        """TF-IDF features as a self-contained processor (:mod:`models.tdsum.processing_tdsum`), with the
        checkpoint's vocabulary and IDF."""
        vectorizer = summarizer.assets.vectorizer
        terms = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get)
        saved = {"terms": terms, "idf": [float(x) for x in vectorizer.idf_], "min_df": vectorizer.min_df}
        return TDSumProcessor(summarizer.tokenizer, processor_settings(summarizer), {VECTORIZER_FILE: saved})

    def unconditional(self, document: str, method: str, assets: TDSumAssets | None = None) -> Prepared:
        """The neutral input: the document with its own TF-IDF scores, nothing boosted or suppressed
        (``prepare`` with no controls). The model always reads scores; the user's control is the change
        to them, so guidance strengthens exactly that change. All-zero scores would instead contrast
        with the scores themselves, an input no TDSum model was trained on. Without boosts or
        suppressions the two inputs are equal and guidance changes nothing."""
        return self.prepare(document, {}, method, assets)

    def keywords(self, document: str, controls: dict, assets: TDSumAssets | None = None):
        """The words a summary should contain: the boosted ones, else the document's top TF-IDF terms
        (suppressed words left out); with their TF-IDF weights and notices about the controls."""
        assets = assets or self.default_assets()
        doc = document_words([document], assets.vectorizer)[0]
        scores, notices = assets.steered(doc, controls)
        weights = {}
        for term, score in zip(doc.terms, scores.tolist()):
            weights[term] = max(weights.get(term, 0.0), score)
        boosted = [t for t in control_terms(controls.get("boost")) if t in weights]
        suppressed = frozenset(control_terms(controls.get("suppress")))
        return boosted or assets.top_terms(document, exclude=suppressed), weights, notices

    def baseline(self) -> Summarizer:
        return TDSumBaseline(self, self.default_assets())

    def load_assets(self, path: Path, record: dict, model: Any, tokenizer: Any) -> TDSumAssets:
        """The checkpoint's fitted vectorizer, with the tokenizer its scores are aligned to."""
        settings = {name: getattr(model.config, name, None) for name in SETTINGS}
        return TDSumAssets(
            load_vectorizer(path), tokenizer, int(record.get("max_source_length", 1024)), record["method"], settings
        )

    def score(
        self,
        summary: str,
        document: str,
        controls: dict,
        reference: str | None = None,
        assets: TDSumAssets | None = None,
    ) -> dict[str, Score]:
        """``boosted_found`` when words are boosted, else ``doc_keyword_recall``; ``assets`` is
        ignored: every system is scored with the committed default vectorizer."""
        suppressed = control_terms(controls.get("suppress"))
        boosted = control_terms(controls.get("boost"))
        if boosted:
            # A boosted word counts inside a run of words the document supports (metrics.support): boost
            # words pasted after any text are no evidence that the control steered the summary.
            name, keywords = "boosted_found", boosted
            meaning = (
                "share of the boosted words the summary uses inside runs of words the document supports "
                "(found / given; a boosted word the document lacks counts as missed)"
            )
        else:
            name, keywords = "doc_keyword_recall", default_assets().top_terms(document, exclude=frozenset(suppressed))
            meaning = (
                f"share of the document's own top {TOP_TERMS} TF-IDF terms found in the summary (not the "
                "paper's ROUGE-K, whose keywords come from reference summaries; none without a term)"
            )
        found = (
            supported_found(summary, document, keywords)
            if name == "boosted_found"
            else found_keywords(summary, keywords)
        )
        scores = {
            name: Score(
                len(found) / len(keywords) if keywords else None, meaning, {"keywords": keywords, "found": found}
            )
        }
        if suppressed:
            present = set(words(summary)) & set(suppressed)
            scores["suppressed_absent"] = Score(
                1 - len(present) / len(suppressed),
                "share of the suppressed words the summary leaves out (1 = none of them appears)",
                {"present": sorted(present)},
            )
        scores.update(reference_scores(summary, reference))
        return scores

    def evidence(self, summary: str, controls: dict, assets: TDSumAssets | None = None) -> list[str]:
        """The boosted words the summary contains, as written in it (the document's top terms would
        need the document, which this hook is not given)."""
        boosted = set(control_terms(controls.get("boost")))
        return list(dict.fromkeys(w for w in WORD.findall(summary) if w.lower() in boosted))

    def suggestions(self, document: str, assets: TDSumAssets | None = None) -> dict[str, list[str]]:
        return {"boost": (assets or self.default_assets()).top_terms(document, n=8)}

    def card_facts(self, assets: TDSumAssets | None = None) -> dict[str, Any]:
        return {
            "example_document": EXAMPLE_DOCUMENT,
            "example_controls": {"boost": ["summaries"]},
            "model_settings": dict.fromkeys(SETTINGS) | (assets.settings if assets else {}),
        }


EXAMPLE_DOCUMENT = (
    "Summaries must convey the key information of a document, yet common metrics such as ROUGE reward any "
    "overlap with the reference and ignore whether the important words appear. We measure how often "
    "summarization models include keywords and find that strong models miss many of them. We then guide "
    "BART with the TF-IDF scores of the source words in four ways, and show that the guided models include "
    "more keywords while their ROUGE scores stay the same."
)


DEFAULT_VECTORIZER = Path(__file__).resolve().parents[1] / "assets" / "tdsum_default"


@lru_cache(maxsize=1)
def default_assets() -> TDSumAssets:
    """The embedded default: a vectorizer fitted on the SciTLDR training abstracts and XSum sample
    articles (the paper's two extreme-summarization datasets), committed as JSON (rebuilt by
    ``python -m variants.build_assets``); no tokenizer, no model."""
    return TDSumAssets(load_vectorizer(DEFAULT_VECTORIZER))


def default_documents() -> list[str]:
    """What the default vectorizer is fitted on."""
    from variants.sources import load_source

    return [r["source"] for r in load_source("scitldr", "train")] + [
        r["source"] for r in load_source("xsum", "sample")
    ]
