"""Which document sentences a ccs summary should copy: one ranking for the baseline's extract and the
decoder's sentence paths (:class:`variants.constraints.SentencePathLogitsProcessor`).

Neither may read what scores the summary, or pasting the scorer's favourites would pass for control:
ΔFKGL is computed with :func:`metrics.ccs.fkgl`, the focus judge (:mod:`metrics.focus`) learned from
sentence positions, and the focus targets were cut by the cue rule (:func:`metrics.focus.rule_focus`).
So the ranking uses one signal none of them reads, for ``high`` readability ("readable by laymen",
CCSBench Sec. 3.1): sentences of common words, by the share of their words at least as frequent in
general English as :data:`COMMON_ZIPF` (``wordfreq``'s Zipf scale: 4 is ten uses per million words).
A lay reader stumbles on rare terms ("heteroscedastic" 0.0, "framework" 4.3, "results" 5.2), whatever
the sentence's length. Of the signals tried on the ccs test set, the share of common words moved the
baseline's ΔFKGL more than their mean frequency and less than word length in characters, which is
nearly FKGL's syllable count.

A focus prefers no sentence. Position is what the judge learned, the cue rule is what cut the targets,
and MiniLM's closeness to the paper's definitions of the two focus levels chose sentences the judge
agreed with less often than a focus-blind extract did (docs/log.md): focus is left to the model.
"""

from __future__ import annotations

from metrics.text import WORD

COMMON_ZIPF = 4.0  # a common word: at least 10 uses per million words of English


def commonness(sentences: list[str]) -> list[float]:
    """Each sentence's share of words with a Zipf frequency in English of at least :data:`COMMON_ZIPF`
    (0 for a sentence without words)."""
    from wordfreq import zipf_frequency

    out = []
    for sentence in sentences:
        tokens = [w.lower() for w in WORD.findall(sentence) if w.isalpha()]
        out.append(sum(zipf_frequency(w, "en") >= COMMON_ZIPF for w in tokens) / len(tokens) if tokens else 0.0)
    return out


def sentence_rank(sentences: list[str], readability: str | None) -> list[int]:
    """Sentence indices, best first: for ``high`` readability the most common-worded first, then
    document order (document order alone otherwise)."""
    common = commonness(sentences) if readability == "high" else [0.0] * len(sentences)
    return sorted(range(len(sentences)), key=lambda i: (-common[i], i))


def preferred_sentences(document_sentences: list[str], readability: str | None) -> list[str]:
    """The sentences to prefer for ``high`` readability, in document order: the more common-worded
    half (at least the median sentence, see :func:`commonness`); none otherwise."""
    if readability != "high" or not document_sentences:
        return []
    common = commonness(document_sentences)
    middle = sorted(common, reverse=True)[(len(common) - 1) // 2]
    return [s for s, c in zip(document_sentences, common) if c >= middle]
