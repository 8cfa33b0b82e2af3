"""P-Acc: accuracy discounted by insensitivity to readers (Vansh et al., EMNLP 2023, Sec. 7).

P-Acc (Sec. 7, eq. 13-14): Unit = 1 - alpha * f_sig(beta * EGISES) / Acc and P-Acc = Acc * Unit,
which is Acc - alpha * f_sig(beta * EGISES) (computed in that form, so Acc = 0 is defined). alpha =
0.5 and beta = 1 are the paper's values. f_sig is ``tanh`` by default: footnote 7 says beta = 0
gives Unit_P-Acc = Unit_Acc = 1, which needs f_sig(0) = 0; the logistic function has f(0) = 1/2
(pass ``sigmoid=scipy.special.expit`` for that reading). Acc is ROUGE-L F1 (rouge-score, Porter
stemming; RG-L is the paper's first accuracy measure) of each reader's summary against that
reader's reference, averaged over the readers EGISES scores.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rouge_score import rouge_scorer

DEFAULT_ALPHA, DEFAULT_BETA = 0.5, 1.0  # Sec. 7.1


def rouge_l(summaries: list[str], references: list[str]) -> np.ndarray:
    """ROUGE-L F1 of each summary against its reference (rouge-score, Porter stemming)."""
    if len(summaries) != len(references):
        raise ValueError(f"summaries and references differ in length: {len(summaries)} vs {len(references)}")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return np.array([scorer.score(ref, summary)["rougeL"].fmeasure for summary, ref in zip(summaries, references)])


def p_acc(
    accuracy: float,
    egises_score: float,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    sigmoid: Callable[[float], float] = np.tanh,
) -> float:
    """P-Acc (eq. 13-14) = Acc * (1 - alpha * f_sig(beta * EGISES) / Acc) = Acc - alpha * f_sig(beta * EGISES).

    >>> round(p_acc(0.5, 0.4), 6)  # 0.5 - 0.5 * tanh(0.4) = 0.5 - 0.5 * 0.379949
    0.310026
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1] (Sec. 7.1), got {alpha}")
    if not 0.0 < beta <= 1.0:
        raise ValueError(f"beta must be in (0, 1] (Sec. 7.1), got {beta}")
    return float(accuracy - alpha * sigmoid(beta * egises_score))
