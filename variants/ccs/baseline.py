"""The ccs variant's model-free baseline: length-, keyword- and readability-controlled extraction, and
the sentence ranking it shares with the decoder's sentence paths
(:class:`variants.rule_processors.SentencePathLogitsProcessor`).

Neither may read what scores the summary, or pasting the scorer's favourites would pass for control:
ΔFKGL is computed with :func:`metrics.ccs.fkgl`, the focus judge (:mod:`metrics.focus`) learned from
sentence positions, and the focus targets were cut by the cue rule (:func:`metrics.focus_labels.rule_focus`).
So the ranking uses one signal none of them reads, for ``high`` readability ("readable by laymen",
CCSBench Sec. 3.1): sentences of common words, by the share of their words at least as frequent in
general English as :data:`COMMON_ZIPF` (``wordfreq``'s Zipf scale: 4 is ten uses per million words). Those
words are committed as a list (``variants/assets/common_words.txt``, built by ``python -m variants.build_assets``
from ``wordfreq``), so that the rule needs no word-frequency package and ships whole with an exported CCS
processor, which prefers the same sentences.
A lay reader stumbles on rare terms ("heteroscedastic" 0.0, "framework" 4.3, "results" 5.2), whatever
the sentence's length. Of the signals tried on the ccs test set, the share of common words moved the
baseline's ΔFKGL more than their mean frequency and less than word length in characters, which is
nearly FKGL's syllable count.

A focus prefers no sentence. Position is what the judge learned, the cue rule is what cut the targets,
and MiniLM's closeness to the paper's definitions of the two focus levels chose sentences the judge
agreed with less often than a focus-blind extract did (docs/log.md): focus is left to the model.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

from metrics.ccs import BIN_WIDTH, keyword_success
from metrics.text import STOPWORDS, WORD, sentences, stem, words

from ..base import Baseline, Summary

COMMON_ZIPF = 4.0  # a common word: at least 10 uses per million words of English
COMMON_WORDS_FILE = Path(__file__).resolve().parent.parent / "assets" / "common_words.txt"


def build_common_words() -> str:
    """The text of :data:`COMMON_WORDS_FILE`: every alphabetic word of ``wordfreq``'s English list with a Zipf
    frequency of at least :data:`COMMON_ZIPF`, one per line, most frequent first."""
    from wordfreq import iter_wordlist, zipf_frequency

    common = []
    for word in iter_wordlist("en"):  # most frequent first
        if zipf_frequency(word, "en") < COMMON_ZIPF:
            break
        if word.isalpha():
            common.append(word)
    return "\n".join(common) + "\n"


@functools.lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """The committed common words (:data:`COMMON_WORDS_FILE`)."""
    return frozenset(COMMON_WORDS_FILE.read_text(encoding="utf-8").split())


def common_shares(sentences: list[str], common: frozenset[str]) -> list[float]:
    """Each sentence's share of words in ``common`` (0 for a sentence without words)."""
    out = []
    for sentence in sentences:
        tokens = [w.lower() for w in WORD.findall(sentence) if w.isalpha()]
        out.append(sum(w in common for w in tokens) / len(tokens) if tokens else 0.0)
    return out


def common_half(document_sentences: list[str], common: frozenset[str]) -> list[str]:
    """The more common-worded half of the sentences (at least the median one, see :func:`common_shares`), in
    document order."""
    if not document_sentences:
        return []
    shares = common_shares(document_sentences, common)
    middle = sorted(shares, reverse=True)[(len(shares) - 1) // 2]
    return [s for s, c in zip(document_sentences, shares) if c >= middle]


def commonness(sentences: list[str]) -> list[float]:
    """Each sentence's share of words with a Zipf frequency in English of at least :data:`COMMON_ZIPF`."""
    return common_shares(sentences, common_words())


def sentence_rank(sentences: list[str], readability: str | None) -> list[int]:
    """Sentence indices, best first: for ``high`` readability the most common-worded first, then
    document order (document order alone otherwise)."""
    common = commonness(sentences) if readability == "high" else [0.0] * len(sentences)
    return sorted(range(len(sentences)), key=lambda i: (-common[i], i))


def preferred_sentences(document_sentences: list[str], readability: str | None) -> list[str]:
    """The sentences to prefer for ``high`` readability: the more common-worded half (:func:`common_half`);
    none otherwise. An exported CCS processor gives the same (``models/ccs/processing_ccs.py``)."""
    return common_half(document_sentences, common_words()) if readability == "high" else []


DEFAULT_LENGTH_BIN = 1  # the baseline's length when none is asked: 51-100 words, an abstract's size


def missing_keywords(text: str, keywords: list[str]) -> list[str]:
    """The keywords that do not occur in ``text`` (Porter stems, whole words, as the SR metric)."""
    if not keywords:
        return []
    [found] = keyword_success([text], [keywords]).found
    return [keyword for keyword, hit in zip(keywords, found) if not hit]


def content_keywords(text: str, n: int, idf: dict[str, float] | None = None, within: str | None = None) -> list[str]:
    """Up to ``n`` keywords of ``text``: its content words (not stop words, at least 3 letters),
    one per stem, ranked by count x ``idf`` (1 when not given), then first occurrence; with
    ``within``, only words whose stem also occurs there (so a keyword is in the document)."""
    allowed = {stem(w) for w in words(within)} if within is not None else None
    tokens = [w for w in words(text) if w.isalpha() and len(w) >= 3 and w not in STOPWORDS]
    counts = Counter(stem(w) for w in tokens)
    surface: dict[str, str] = {}
    for w in tokens:
        surface.setdefault(stem(w), w)
    default_idf = max(idf.values()) if idf else 1.0
    ranked = sorted(surface, key=lambda s: -counts[s] * (idf.get(surface[s], default_idf) if idf else 1.0))
    return [surface[s] for s in ranked if allowed is None or s in allowed][:n]


def bin_range(length_bin: int) -> tuple[int, int]:
    """Words a summary of the bin may have (bin 0: 1-50, bin 1: 51-100, ...); the open last bin is
    given a 50-word range too, so an extract stops somewhere."""
    return (1 if length_bin == 0 else length_bin * BIN_WIDTH + 1), (length_bin + 1) * BIN_WIDTH


def controlled_extract(document: str, controls: dict) -> tuple[str, list[str]]:
    """Sentences of the document that meet the length bin and cover the keywords, in document order.

    Sentences are ranked by :func:`sentence_rank` (common words first for
    ``high`` readability; nothing a metric reads; a focus changes nothing). Each keyword brings its best-ranked
    sentence; then sentences by rank are added while the extract stays within the bin, until it
    reaches the bin's middle. If whole sentences cannot reach the bin, the next one is cut to fit.
    Returns the extract and notices (keywords absent or left out, a document shorter than the bin).
    """
    sents = sentences(document)
    sizes = [len(s.split()) for s in sents]
    low, high = bin_range(controls.get("length", DEFAULT_LENGTH_BIN))
    if sum(sizes) < low:
        return " ".join(sents), [f"the document has only {sum(sizes)} words, fewer than the length bin's {low}"]
    rank = sentence_rank(sents, controls.get("readability"))

    notices, chosen = [], []
    keywords = controls.get("keywords") or []
    absent = missing_keywords(document, keywords)
    if absent:
        notices.append(f"keyword(s) not in the document, so not in an extract: {', '.join(absent)}")
    for keyword in (k for k in keywords if k not in absent):
        if not missing_keywords(" ".join(sents[i] for i in chosen), [keyword]):
            continue  # an earlier keyword's sentence has it
        best = next((i for i in rank if not missing_keywords(sents[i], [keyword])), None)
        if best is not None and sum(sizes[i] for i in chosen) + sizes[best] <= high:
            chosen.append(best)
        else:
            notices.append(f"keyword {keyword!r} left out: no sentence that has it fits the length bin")
    middle = (low + high) // 2
    for i in rank:
        total = sum(sizes[j] for j in chosen)
        if total >= middle:
            break
        if i not in chosen and total + sizes[i] <= high:
            chosen.append(i)
    parts = {i: sents[i] for i in chosen}
    total = sum(sizes[i] for i in chosen)
    if total < low:  # only long sentences left: cut the best-ranked one to fill the bin
        cut = next(i for i in rank if i not in chosen)
        parts[cut] = " ".join(sents[cut].split()[: middle - total])
        notices.append(
            f"a sentence was cut to its first {middle - total} words to reach the length bin, so the "
            f"summary has part of a sentence{' at its end' if cut == max(parts) else ''}"
        )
    return " ".join(parts[i] for i in sorted(parts)), notices


class CCSBaseline(Baseline):
    name = "baseline: length- and keyword-controlled extraction"

    def extract(self, document: str, controls: dict) -> Summary:
        text, notices = controlled_extract(document, controls)
        return Summary(text, notices + readability_notices(document, controls, text))


def readability_notices(document: str, controls: dict, text: str) -> list[str]:
    """A notice when asking for ``high`` readability changed nothing: the extract is the one given
    ``normal``. The baseline only ranks sentences by their words' commonness, so this happens exactly when there is no
    choice to make (a one-sentence document, or one whose words fit the bin's middle, so every sentence
    is taken) or when the easiest sentences are the ones chosen anyway."""
    if controls.get("readability") != "high":
        return []
    plain, _ = controlled_extract(document, {**controls, "readability": "normal"})
    if plain != text:
        return []
    sents = sentences(document)
    if len(sents) < 2:
        why = "the document is one sentence, so there is no easier sentence to choose"
    elif all(s in text for s in sents):
        why = (
            f"the document's {len(document.split())} words fit the length bin, so every sentence is in the "
            "extract either way (try a shorter length bin or a longer document)"
        )
    else:
        why = "the sentences the length bin and keywords select are already the easiest ones"
    return [
        f"readability 'high' changed nothing here: {why}; the baseline picks easier sentences, it does not "
        "rewrite them"
    ]
