"""The persona processor: an article and a reader as the model's inputs (SteerSum's persona variant, after
PENS). A reader is their reading history, the titles they clicked, most recent last: a reader the
model knows (``persona_readers.json``, shipped in the repo) or a pasted history (wins over the reader).

* ``history-prefix``  the most recent ``prefix_titles`` titles joined by `` | ``, then ``[HISTORY]``,
                      in front of the article;
* ``user-embedding``  the article, plus ``history_ids``: the ``max_history`` most recent titles as a
                      (titles x tokens) grid of token ids that the model encodes (``modeling_persona``);
* ``interest-prefix`` the article's ``READER_SENTENCES`` sentences closest in meaning to the reader's
                      titles (MiniLM: each sentence's cosine to the mean title embedding, as SteerSum's
                      persona baseline picks them), then ``[HISTORY]``, in front of the article: GSum's
                      guidance (an extractive pick shown to the abstractive model) for a reader. Needs
                      ``nltk`` (Punkt) besides the packages below, and the MiniLM encoder's repo.

Self-contained (torch, transformers, numpy and the standard library): it ships in every exported
persona repo and ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` loads it; SteerSum's
``variants.persona`` builds its inputs with the functions of this file, so the two cannot differ.
"""

import numpy as np

from .processing_base import SteerSumProcessor
from .sentence_encoder import SentenceEncoder

HISTORY = "[HISTORY]"
TITLE_SEPARATOR = " | "
READERS_FILE = "persona_readers.json"
NO_HISTORY = "no reading history (no reader, or an empty history): the summary is not personalized"
READER_SENTENCES = 2  # interest-prefix: sentences shown for the reader (the simulated references have 2)
READER_PATH_BIAS = 5.0  # added along the reader's sentences' path when a model decodes with its rules
INTEREST_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"
METHODS = ("history-prefix", "user-embedding", "interest-prefix")


def history_prefix(document: str, titles: list[str], n_titles: int) -> str:
    """``"t1 | t2 | t3 [HISTORY] document"`` with the ``n_titles`` most recent titles."""
    return f"{TITLE_SEPARATOR.join(titles[-n_titles:])} {HISTORY} {document}"


def interest_prefix(document: str, guide: str) -> str:
    """``"guide sentences [HISTORY] document"``: the reader's sentences first, so a cut source keeps them."""
    return f"{guide} {HISTORY} {document}"


def closest_sentences(
    sentences: list[str], sentence_vectors: np.ndarray, title_vectors: np.ndarray, k: int = READER_SENTENCES
) -> list[str]:
    """The ``k`` sentences whose unit vectors have the highest cosine to the mean of the titles' unit
    vectors (the reader's interests), in document order; ties go to the earlier sentence."""
    interests = title_vectors.mean(axis=0)
    similarity = sentence_vectors @ (interests / max(float(np.linalg.norm(interests)), 1e-12))
    best = sorted(sorted(range(len(sentences)), key=lambda i: (-similarity[i], i))[:k])
    return [sentences[i] for i in best]


def history_ids(tokenizer, titles: list[str], max_history: int, max_title_tokens: int) -> list[list[int]]:
    """The ``max_history`` most recent titles as a fixed (max_history, max_title_tokens) grid of token
    ids, padded with the tokenizer's pad id (a padding row is no title), so a batch stacks."""
    pad = tokenizer.pad_token_id
    grid = [[pad] * max_title_tokens for _ in range(max_history)]
    recent = titles[-max_history:]
    for row, ids in enumerate(
        tokenizer(recent, truncation=True, max_length=max_title_tokens)["input_ids"] if recent else []
    ):
        grid[row][: len(ids)] = ids
    return grid


def persona_input(
    document: str,
    titles: list[str],
    method: str,
    prefix_titles: int,
    tokenizer=None,
    max_history: int = 32,
    max_title_tokens: int = 24,
    guide=None,
) -> tuple[str, dict, list[str]]:
    """Source text, extra inputs and notices for one article and a reader's titles. ``interest-prefix``
    needs ``guide(document, titles)``: the reader's sentences of the document (:func:`closest_sentences`)."""
    notices = [] if titles else [NO_HISTORY]
    if method == "history-prefix":
        return (history_prefix(document, titles, prefix_titles) if titles else document), {}, notices
    if method == "interest-prefix":
        if guide is None:
            raise ValueError("method 'interest-prefix' needs the reader's sentences: give guide(document, titles)")
        return (interest_prefix(document, guide(document, titles)) if titles else document), {}, notices
    if method != "user-embedding":
        raise ValueError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")
    if tokenizer is None:
        raise ValueError("method 'user-embedding' needs the model's tokenizer")
    return document, {"history_ids": history_ids(tokenizer, titles, max_history, max_title_tokens)}, notices


class PersonaProcessor(SteerSumProcessor):
    """``processor(article, {"reader": "sim01-business"})`` or ``{"history": ["title 1", "title 2"]}``
    (a pasted history: a list, or one title per line)."""

    files = (READERS_FILE,)

    def check(self, controls) -> dict:
        if isinstance(controls, dict) and isinstance(controls.get("history"), str):  # one title per line
            controls = {**controls, "history": [t.strip() for t in controls["history"].splitlines() if t.strip()]}
        checked = super().check(controls)
        readers = {reader["id"] for reader in self.data[READERS_FILE]["readers"]}
        if checked.get("reader") is not None and checked["reader"] not in readers:
            raise ValueError(
                f"unknown reader {checked['reader']!r}; allowed: {', '.join(sorted(readers))}, "
                "or paste a history (one title per line)"
            )
        return checked

    def titles(self, controls: dict) -> list[str]:
        """The reader's titles: the pasted ``history`` if any, else the chosen ``reader``'s, else []."""
        if controls.get("history"):
            return list(controls["history"])
        readers = {reader["id"]: reader for reader in self.data[READERS_FILE]["readers"]}
        return list(readers[controls["reader"]]["history"]) if controls.get("reader") else []

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        s = self.settings
        return persona_input(
            document,
            self.titles(controls),
            s["method"],
            int(s["prefix_titles"]),
            self.tokenizer,
            int(s.get("max_history", 32)),
            int(s.get("max_title_tokens", 24)),
            self.reader_sentences,
        )

    def reader_sentences(self, document: str, titles: list[str]) -> str:
        """``interest-prefix``'s guide: :meth:`reader_sentence_list`, joined."""
        return " ".join(self.reader_sentence_list(document, titles))

    def reader_sentence_list(self, document: str, titles: list[str]) -> list[str]:
        """The document's sentences (NLTK Punkt, line breaks end paragraphs) closest to the titles by MiniLM
        (:func:`closest_sentences`, :class:`SentenceEncoder`), as SteerSum's persona baseline ranks them."""
        try:
            import nltk
        except ImportError as err:
            raise ImportError("the reader's sentences are found with NLTK's Punkt: pip install nltk") from err
        sentences = [
            s.strip()
            for paragraph in document.split("\n")
            if paragraph.strip()
            for s in nltk.sent_tokenize(paragraph)
            if s.strip()
        ]
        if len(sentences) <= READER_SENTENCES or not titles:
            return sentences[:READER_SENTENCES]
        key = (document, tuple(titles))  # interest-prefix's input and the decoding rule ask for the same pick
        if getattr(self, "_last_pick", (None, None))[0] != key:
            if getattr(self, "_encoder", None) is None:
                self._encoder = SentenceEncoder(self.settings.get("interest_encoder", INTEREST_ENCODER))
            self._last_pick = key, closest_sentences(sentences, self._encoder(sentences), self._encoder(list(titles)))
        return list(self._last_pick[1])

    def rules(self, document: str, controls: dict):
        """The reader's sentences for the decoder to prefer, by :data:`READER_PATH_BIAS`, as SteerSum's
        ``variants.persona`` gives its decoder; none without a reading history."""
        titles = self.titles(controls)
        if not titles:
            return None
        return {"prefer": self.reader_sentence_list(document, titles), "prefer_bias": READER_PATH_BIAS}
