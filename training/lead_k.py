"""The control-blind rows of the control-sensitivity check (:mod:`training.sensitivity`): :class:`LeadK`, the
document's first sentences up to a length budget in words whatever the controls say, and :class:`PastedLeadK`,
the same with the controls' own words pasted in, the cheapest imitation of obedience. A system that follows its
controls must beat both; the budget is the length of the summaries they stand beside (:func:`length_budget`).
"""

from __future__ import annotations

from typing import Any

from metrics.text import sentences
from variants.base import Baseline, Summary, Variant

from .evaluate import evaluate

BUDGETS = ("outputs", "targets")  # where a Lead-k length budget comes from


class LeadK(Baseline):
    """The document's first sentences, as many as bring the summary closest to ``words`` words (at
    least one sentence; a tie goes to the shorter). Controls are validated like any summarizer's,
    then ignored."""

    method = "lead-k"

    def __init__(self, variant: Variant, words: int, assets: Any = None):
        if words < 1:
            raise ValueError(f"Lead-k needs a length budget of at least 1 word, got {words}")
        super().__init__(variant, assets)
        self.words = words
        self.name = f"Lead-k (control-blind, first sentences up to {words} words)"

    def extract(self, document: str, controls: dict) -> Summary:
        return Summary(lead_words(document, self.words))


class PastedLeadK(LeadK):
    """:class:`LeadK` with the controls' own words pasted in by :meth:`Evaluation.paste`: a summary that
    looks obedient to a metric that counts control words, without reading the document for them."""

    method = "pasted"

    def __init__(self, variant: Variant, words: int, assets: Any = None):
        super().__init__(variant, words, assets)
        self.name = f"Lead-k + pasted controls (first sentences up to {words} words, the controls' words pasted in)"

    def extract(self, document: str, controls: dict) -> Summary:
        lead = lead_words(document, self.words).split()
        added = len(self.variant.evaluation.paste(" ".join(lead), controls, self.assets).split()) - len(lead)
        kept = " ".join(lead[: max(0, self.words - added)])  # Lead-k gives up the words the paste adds
        return Summary(" ".join(self.variant.evaluation.paste(kept, controls, self.assets).split()[: self.words]))


def lead_words(document: str, words: int) -> str:
    """The document's first sentences, as many as bring the text closest to ``words`` words (at least
    one; a tie goes to the shorter)."""
    lead, total = [], 0
    for sentence in sentences(document):
        size = len(sentence.split())
        if lead and abs(total + size - words) >= abs(total - words):
            break
        lead.append(sentence)
        total += size
    return " ".join(lead)


def length_budget(report: dict, records: list[dict], budget: str = "outputs") -> int:
    """Words for :class:`LeadK`: the mean length of the system's own summaries (``outputs``) or of
    the test targets (``targets``), rounded, at least 1."""
    if budget == "outputs":
        words = [row["output_words"] for row in report["examples"]]
    elif budget == "targets":
        words = [len(r["target"].split()) for r in records]
    else:
        raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
    return max(1, round(sum(words) / len(words))) if words else 1


def lead_k_report(
    variant: Variant,
    records: list[dict],
    data_file: str,
    words: int,
    budget: str,
    assets: Any = None,
    batch_size: int = 8,
    pasted: bool = False,
) -> dict:
    """The control-blind row, :class:`LeadK` at ``words`` words (``pasted``: :class:`PastedLeadK`),
    scored like any system."""
    system = (PastedLeadK if pasted else LeadK)(variant, words, assets)
    report = evaluate(system, records, data_file, batch_size)
    return {**report, "budget_words": words, "budget_from": budget}
