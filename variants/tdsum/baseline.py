"""The tdsum variant's model-free baseline: keyword-covering extraction, sentences chosen greedily to cover
the boosted words or the document's top TF-IDF terms (:meth:`variants.tdsum.TDSumVariant.keywords`), within
a budget of :data:`BASELINE_WORDS` words, so its output is about as long as the references."""

from __future__ import annotations

from metrics.text import sentences, words

from ..base import Baseline, Summary

BASELINE_SENTENCES = 2  # extreme summaries are one or two sentences (SciTLDR, XSum)


BASELINE_WORDS = 18  # the baseline's budget: median words of the SciTLDR training TLDRs (tests/test_tdsum.py checks)


# --- the model-free baseline -------------------------------------------------------------------
def keyword_covering_extract(
    document: str,
    keywords: list[str],
    weights: dict[str, float],
    n_sentences: int = BASELINE_SENTENCES,
    budget_words: int | None = BASELINE_WORDS,
) -> str:
    """Greedy keyword cover within a budget of words (whitespace tokens; ``None``: no budget):
    repeatedly take the sentence that adds the most weight of keywords not yet covered among those
    that still fit, up to ``n_sentences`` or until nothing is added; output in document order. When
    no sentence fits at all, the best one is cut to ``budget_words`` words, starting at its first
    keyword (or earlier, to fill the budget)."""
    sents = sentences(document)
    sizes = [len(s.split()) for s in sents]
    budget = budget_words if budget_words is not None else sum(sizes)
    sentence_terms = [set(words(s)) for s in sents]

    def gain(i: int, covered: set) -> float:
        return sum(weights.get(k, 0.0) for k in keywords if k in sentence_terms[i] and k not in covered)

    chosen, covered = [], set()
    for _ in range(n_sentences):
        room = budget - sum(sizes[i] for i in chosen)
        fits = [i for i in range(len(sents)) if i not in chosen and sizes[i] <= room]
        best = max(fits, key=lambda i: (gain(i, covered), -i), default=None)
        if best is None or gain(best, covered) <= 0:
            break
        chosen.append(best)
        covered |= sentence_terms[best]
    if chosen:
        return " ".join(sents[i] for i in sorted(chosen))
    if not sents:
        return ""
    best = max(range(len(sents)), key=lambda i: (gain(i, set()), -i))
    tokens = sents[best].split()
    hits = [j for j, token in enumerate(tokens) if set(words(token)) & set(keywords)]
    start = max(0, min(hits[0] if hits else 0, len(tokens) - budget))
    return " ".join(tokens[start : start + budget])


class TDSumBaseline(Baseline):
    name = "baseline: keyword-covering extraction"

    def extract(self, document: str, controls: dict) -> Summary:
        keywords, weights, notices = self.variant.keywords(document, controls, self.assets)
        text = keyword_covering_extract(document, keywords, weights)
        return Summary(text, notices + cut_sentence_notices(document, text))


def cut_sentence_notices(document: str, text: str, budget_words: int = BASELINE_WORDS) -> list[str]:
    """A notice when the extract is a sentence cut at the word budget (no whole sentence with a keyword
    fits it): the summary then ends, or starts, mid-sentence."""
    if not text or text in sentences(document) or len(sentences(text)) > 1:
        return []
    return [
        f"the summary is part of a sentence, cut to the baseline's budget of {budget_words} words (no whole "
        "sentence with the keywords fits it), so it ends mid-sentence"
    ]
