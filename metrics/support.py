"""Which words of a summary does its document support? Runs of words the document also has.

A control metric that counts the control's own words (a keyword, an entity's name, a topic's terms, a
reader's title words) is won by pasting those words after any text: "Lead-k, then the keywords"
finds every keyword. What pasting cannot give is the words *in a sentence that the document
supports*. So the control metrics of SteerSum count a control word only inside a **supported run**:

* a word of the summary is *supported* when it sits in a run of :data:`N` consecutive words of one
  summary sentence (:func:`metrics.text.sentences`, words as :func:`metrics.text.words`, any case)
  that occurs, word for word, in the document;
* :func:`supported_spans` gives the maximal runs of supported words, as the summary writes them
  (case and punctuation kept, so a case-sensitive matcher still works on them);
* :func:`support_share` is the share of the summary's words that are supported.

A sentence copied from the document is supported throughout; a bare list of keywords, a name alone
("Barack Obama."), a topic's terms in a row or a pasted title are not, since no four of their words
follow one another in the document. A faithful abstractive summary keeps most of its words supported
(it reuses the document's phrases); a sentence the document does not say loses them, which is the
point: a control is obeyed by what the summary says about the document.

N = 4, not 3 or 2: a three-word name or keyword ("Bank of England") is itself a run of the document, so
with N = 3 it would support itself when pasted alone.
"""

from __future__ import annotations

from functools import lru_cache

from metrics.text import WORD, sentences

N = 4  # words in a run the document must have (see the module docstring)


@lru_cache(maxsize=512)
def document_runs(document: str, n: int = N) -> frozenset[tuple[str, ...]]:
    """Every run of ``n`` consecutive lower-cased words of the document (across its sentences)."""
    tokens = [w.lower() for w in WORD.findall(document)]
    return frozenset(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def supported_flags(sentence: str, document: str, n: int = N) -> list[tuple[int, int, bool]]:
    """``(start, end, supported)`` for each word of ``sentence`` (character offsets in it)."""
    matches = list(WORD.finditer(sentence))
    tokens = tuple(m.group(0).lower() for m in matches)
    runs = document_runs(document, n)
    flags = [False] * len(tokens)
    for a in range(len(tokens) - n + 1):
        if tokens[a : a + n] in runs:
            flags[a : a + n] = [True] * n
    return [(m.start(), m.end(), flag) for m, flag in zip(matches, flags)]


def sentence_spans(sentence: str, document: str, n: int = N) -> list[str]:
    """The maximal runs of supported words of one sentence, as written in it."""
    spans, start, end = [], None, None
    for a, b, flag in supported_flags(sentence, document, n):
        if flag:
            start, end = (a if start is None else start), b
        elif start is not None:
            spans.append(sentence[start:end])
            start = None
    if start is not None:
        spans.append(sentence[start:end])
    return spans


def supported_spans(summary: str, document: str, n: int = N) -> list[str]:
    """The summary's supported runs, sentence by sentence, as written in the summary.

    >>> supported_spans("The cat sat on the mat. Cat, mat.", "Yesterday the cat sat on the mat.")
    ['The cat sat on the mat']
    """
    return [span for sentence in sentences(summary) for span in sentence_spans(sentence, document, n)]


def support_share(summary: str, document: str, n: int = N) -> float:
    """Share of the summary's words that are supported (0 for a summary without words)."""
    flags = [flag for sentence in sentences(summary) for _, _, flag in supported_flags(sentence, document, n)]
    return sum(flags) / len(flags) if flags else 0.0


@lru_cache(maxsize=512)
def sentence_runs(document: str, n: int = N) -> frozenset[tuple[str, ...]]:
    """Runs of ``n`` words inside one sentence of the document (none across a sentence end)."""
    runs = set()
    for sentence in sentences(document):
        tokens = [w.lower() for w in WORD.findall(sentence)]
        runs.update(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return frozenset(runs)


def resegment(summary: str, document: str, n: int = N) -> list[str]:
    """The summary's sentences, with a sentence end removed where the document goes on in the same
    sentence: when ``n`` words around it (at least one on each side) are a run inside one sentence of
    the document. A period put every four words into copied text ends no sentence here; a sentence end
    the document has, or one between words the document never writes together, stays.

    >>> resegment("The cat sat. On the mat. It slept.", "The cat sat on the mat. It slept.")
    ['The cat sat. On the mat.', 'It slept.']
    """
    runs = sentence_runs(document, n)
    merged: list[str] = []
    previous: list[str] = []
    for sentence in sentences(summary):
        tokens = [w.lower() for w in WORD.findall(sentence)]
        joined = previous + tokens
        cut = len(previous)
        continues = any(
            tuple(joined[a : a + n]) in runs for a in range(max(0, cut - n + 1), min(cut - 1, len(joined) - n) + 1)
        )
        if merged and continues:
            merged[-1] = f"{merged[-1]} {sentence}"
            previous = joined
        else:
            merged.append(sentence)
            previous = tokens
    return merged
