"""The two focus labellings of an abstract's sentences: the cue rule and the position rule.

CCSBench (Ding et al., App. C.2) has GPT-4 split each abstract into its *conceptual* part (motivation,
problem, theory, method) and its *empirical* part (experiments, data, results). SteerSum splits it with
a transparent cue rule instead, :func:`rule_focus` (empirical cues such as experiments, results,
datasets, outperform, numbers with ``%``; conceptual cues such as propose, framework, theory, problem,
method; the larger count wins, ties left out), and :func:`focus_parts` cuts the ccs focus *targets*
with it.

The focus judge (:mod:`metrics.focus_classifier`) must not learn that rule: a system that applied it
would then win both the target and the judge. So the judge learns from :func:`position_parts`, where
no cue word decides: an abstract's first half is ``conceptual`` (motivation, problem and method come
first) and its last half ``empirical`` (experiments and results come last). Both rules live here, apart
from the judge, so that the data builders can cut targets without loading a classifier.
"""

from __future__ import annotations

import re

FOCUS = ("conceptual", "empirical")  # CCSBench's low / high empirical focus level


def _cues(*patterns: str) -> re.Pattern:
    # Matched against lower-cased text: five times faster than re.IGNORECASE on these alternations.
    return re.compile(r"\b(?:" + "|".join(patterns) + r")\b")


# Paper, App. C.2: empirical = "experimental, data-driven aspects ... data collection, experimental
# settings, performance metrics and concrete results ... statistics and data".
EMPIRICAL_CUES = _cues(
    r"experiment(?:s|al|ally|ed)?",
    r"empirical(?:ly)?",
    r"results?",
    r"outperform(?:s|ed|ing)?",
    r"achiev(?:e|es|ed|ing)",
    r"demonstrat(?:e|es|ed|ing)",
    r"trained on",
    r"compared (?:to|with)",
    r"(?:faster|slower|higher|lower|better|worse) than",
    r"comparable",
    r"on par",
    r"comparative",
    r"verif(?:y|ies|ied)",
    r"accura(?:cy|cies|te)",
    r"benchmarks?",
    r"datasets?",
    r"data sets?",
    r"evaluat(?:e|es|ed|ing|ion|ions)",
    r"baselines?",
    r"performance",
    r"improved",
    r"improvements?",
    r"scores?",
    r"measur(?:e|ed|ing|ement|ements)",
    r"significantly",
    r"statistic(?:s|al|ally)?",
    r"state[- ]of[- ]the[- ]art",
    r"speed-?ups?",
    r"error rates?",
    r"participants",
    r"survey(?:s|ed)?",
    r"simulations?",
    r"tested",
    r"test set",
    r"we observe",
    r"observed",
)
# Concrete quantities (78.22%, 0.93, 3x, a million sentences) are the strongest empirical signal.
NUMBER_CUES = re.compile(
    r"\d+(?:\.\d+)?\s*%|\b\d+\.\d+\b|\b\d+(?:\.\d+)?x\b|\bpercent\b"
    r"|\b(?:thousand|million|billion)s?\b"
)
# Paper, App. C.2: conceptual = "theoretical and innovative aspects ... motivation, the challenge,
# the underlying theoretical framework, the description of the proposed method or algorithm, and
# broader implications".
CONCEPTUAL_CUES = _cues(
    r"propos(?:e|es|ed|al)",
    r"introduc(?:e|es|ed|ing)",
    r"frameworks?",
    r"novel",
    r"ideas?",
    r"theor(?:y|ies|etical|etically|em|ems)",
    r"motivat(?:e|es|ed|ion)",
    r"challeng(?:e|es|ing)",
    r"problems?",
    r"however",
    r"argue",
    r"prove[sn]?",
    r"proofs?",
    r"formulat(?:e|es|ed|ion)",
    r"principles?",
    r"insights?",
    r"understand(?:ing)?",
    r"implications?",
    r"paradigms?",
    r"concepts?",
    r"conceptual(?:ly)?",
    r"intuiti(?:on|ve)",
    r"inspired",
    r"hypothes(?:is|es|ize)",
    r"mechanisms?",
    r"algorithms?",
    r"approach(?:es)?",
    r"methods?",
    r"architectures?",
    r"formalism",
    r"interpret(?:ation|able)",
)


def rule_focus(sentence: str) -> str | None:
    """The proxy label of one sentence: the side with more cues, ``None`` on a tie (or no cue)."""
    sentence = sentence.lower()
    empirical = len(EMPIRICAL_CUES.findall(sentence)) + 2 * len(NUMBER_CUES.findall(sentence))
    conceptual = len(CONCEPTUAL_CUES.findall(sentence))
    if empirical == conceptual:
        return None
    return "empirical" if empirical > conceptual else "conceptual"


def focus_parts(abstract_sentences: list[str]) -> dict[str, str]:
    """Split an abstract into its conceptual and empirical parts (each the joined sentences of
    that label, in order); a side with no sentence is absent. Mirrors the paper's App. C.2."""
    parts: dict[str, list[str]] = {}
    for sentence in abstract_sentences:
        label = rule_focus(sentence)
        if label is not None:
            parts.setdefault(label, []).append(sentence)
    return {label: " ".join(found) for label, found in parts.items()}


def position_parts(abstract_sentences: list[str]) -> dict[str, str]:
    """The judge's training labels, by position alone: an abstract of n >= 3 sentences gives its first
    n // 2 sentences joined as ``conceptual`` (motivation, problem, method come first) and its last
    n // 2 as ``empirical`` (experiments and results come last); a shorter one gives nothing. No cue
    word decides, so the judge never learns the rule that makes the ccs focus targets (:func:`focus_parts`)."""
    n = len(abstract_sentences)
    if n < 3:
        return {}
    k = n // 2
    return {"conceptual": " ".join(abstract_sentences[:k]), "empirical": " ".join(abstract_sentences[-k:])}
