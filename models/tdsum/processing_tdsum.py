"""The TDSum processor: a document and the user's keyword controls as the model's inputs (SteerSum's
tdsum variant, after Takeshita et al. 2024, Sec. 4): ``input_ids`` and ``tfidf``, each source token's
TF-IDF score (the score of the word it belongs to), padded with 0 to ``max_source_length``.

The scores are scikit-learn's ``TfidfVectorizer.transform`` for the vectorizer fitted on the training
documents (``tfidf_vectorizer.json`` in the repo: vocabulary and IDF): a term's count in the document
times its IDF, the document's vector l2-normalized. Words are SteerSum's word tokens (:data:`WORD`,
lower-cased). ``boost`` raises the listed words' scores to 1.0 (the highest a word can have),
``suppress`` sets them to 0.

Self-contained (torch, transformers, numpy and the standard library): it ships in every exported
TDSum repo and ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` loads it; SteerSum's
``variants.tdsum`` computes its model inputs with the functions of this file, so the two cannot differ.
"""

import re

import numpy as np

from .processing_base import SteerSumProcessor

VECTORIZER_FILE = "tfidf_vectorizer.json"
BOOST_SCORE = 1.0  # the highest score in an l2-normalized TF-IDF vector: the word as the document's only term
# A word: letters/digits with an optional inner apostrophe (SteerSum's metrics.text.WORD).
WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?", re.IGNORECASE)


def words(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return WORD.findall(text.lower())


def control_terms(values: list[str] | None) -> list[str]:
    """The words of keyword controls, lower-cased, each once ("neural networks" is two words)."""
    return list(dict.fromkeys(w for value in values or [] for w in words(value)))


def word_scores(document: str, vocabulary: dict[str, int], idf: np.ndarray):
    """The document's words: character starts and ends, lower-cased terms, and TF-IDF scores (float32;
    0 for a word outside the vocabulary)."""
    spans = [(m.start(), m.end(), m.group(0).lower()) for m in WORD.finditer(document)]
    terms = [t for _, _, t in spans]
    counts: dict[int, int] = {}
    for t in terms:
        column = vocabulary.get(t)
        if column is not None:
            counts[column] = counts.get(column, 0) + 1
    columns = np.fromiter(counts, dtype=np.int64, count=len(counts))
    weights = np.fromiter(counts.values(), dtype=np.float64, count=len(counts)) * np.asarray(idf)[columns]
    norm = np.sqrt(np.dot(weights, weights))
    by_column = dict(zip(columns.tolist(), (weights / norm if norm > 0 else weights).tolist()))
    scores = np.array([by_column.get(vocabulary.get(t, -1), 0.0) for t in terms], dtype=np.float32)
    return (
        np.array([s for s, _, _ in spans], dtype=np.int64),
        np.array([e for _, e, _ in spans], dtype=np.int64),
        terms,
        scores,
    )


def token_words(starts: np.ndarray, ends: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """For each token (character span ``[a, b)``), the index of the first word it overlaps, or -1
    (special tokens, punctuation, spaces). Subwords of one word share its index."""
    if not len(ends):
        return np.full(len(offsets), -1, dtype=np.int64)
    first = np.searchsorted(ends, offsets[:, 0], side="right")  # first word ending after the token's start
    inside = first < len(ends)
    hit = inside & (starts[np.minimum(first, len(ends) - 1)] < offsets[:, 1])
    return np.where(hit, first, -1)


def steer(
    terms: list[str], scores: np.ndarray, controls: dict, vocabulary: dict[str, int], method: str
) -> tuple[np.ndarray, list[str]]:
    """The word scores after the user's boosts (raised to :data:`BOOST_SCORE`) and suppressions (0),
    and notices for words that change nothing or are unknown to the vocabulary."""
    scores, notices = scores.copy(), []
    array = np.array(terms, dtype=object)
    for control, value in (("boost", BOOST_SCORE), ("suppress", 0.0)):
        for term in control_terms(controls.get(control)):
            where = array == term if len(array) else np.zeros(0, dtype=bool)
            if not where.any():
                notices.append(f"{control} word {term!r} does not occur in the document: nothing to {control}")
                continue
            if control == "boost" and term not in vocabulary:
                notices.append(
                    f"boost word {term!r} is not in the TF-IDF vocabulary (a stop word or a word "
                    "unseen in training): its tokens are boosted anyway"
                )
            scores[where] = value
    if method == "tdmtl" and (controls.get("boost") or controls.get("suppress")):
        notices.append(
            "method 'tdmtl' reads TF-IDF only as a training target: boost and suppress do not change its summary"
        )
    return scores, notices


def token_scores(
    tokenizer, documents: list[str], controls: list[dict], vocabulary: dict[str, int], idf, width: int, method: str
) -> tuple[list[list[float]], list[list[str]]]:
    """Per-token TF-IDF features aligned to the tokenizer's subwords (a fast tokenizer's offsets), with each
    document's boosts and suppressions; cut as the ids are cut (first ``width - 1`` and the end token) and
    padded with 0 to ``width``. Returns the scores and, per document, notices about the controls."""
    if tokenizer is None or not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            "TDSum aligns TF-IDF scores to subwords with a fast tokenizer's offsets: give the model's (fast) tokenizer"
        )
    encoded = tokenizer(documents, return_offsets_mapping=True)
    out, notices = [], []
    for document, offsets, given in zip(documents, encoded["offset_mapping"], controls):
        starts, ends, terms, scores = word_scores(document, vocabulary, idf)
        scores, said = steer(terms, scores, given, vocabulary, method)
        index = token_words(starts, ends, np.asarray(offsets, dtype=np.int64).reshape(-1, 2))
        per_token = np.where(index >= 0, scores[np.maximum(index, 0)], 0.0).astype(np.float32)
        if len(per_token) > width:
            per_token = np.concatenate([per_token[: width - 1], per_token[-1:]])
        padded = np.zeros(width, dtype=np.float32)
        padded[: len(per_token)] = per_token
        out.append(padded.tolist())
        notices.append(said)
    return out, notices


class TDSumProcessor(SteerSumProcessor):
    """``processor(document, {"boost": ["keywords"], "suppress": ["rouge"]})``: ``input_ids`` and ``tfidf``."""

    files = (VECTORIZER_FILE,)

    def check(self, controls) -> dict:
        checked = super().check(controls)
        both = sorted(set(control_terms(checked.get("boost"))) & set(control_terms(checked.get("suppress"))))
        if both:
            raise ValueError(
                f"word(s) {', '.join(map(repr, both))} are both boosted and suppressed; "
                "allowed: a word in one of the two lists"
            )
        return checked

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        saved = self.data[VECTORIZER_FILE]
        if "_vocabulary" not in self.__dict__:
            self._vocabulary = {term: i for i, term in enumerate(saved["terms"])}
            self._idf = np.asarray(saved["idf"], dtype=np.float64)
        [scores], [notices] = token_scores(
            self.tokenizer,
            [document],
            [controls],
            self._vocabulary,
            self._idf,
            self.max_source_length,
            self.settings["method"],
        )
        return document, {"tfidf": scores}, notices
