"""How the leaderboard writes one number: a score (marked † when it beats the baseline), a control effect
with its interval, a verdict against the pasted row. Both the main tables (:mod:`.tables`) and the
control-strength table (:mod:`.guidance`) use these."""

from __future__ import annotations

from typing import Any

ALPHA = 0.05  # a system's ROUGE / ROUGE-K cell is marked when it beats the baseline at p < ALPHA


def cell(value: Any, test: dict | None = None) -> str:
    if value is None:
        return "–"
    mark = "†" if test is not None and test["p_value"] < ALPHA and test["difference"] > 0 else ""
    return f"{value:.4f}{mark}"


def words_cell(metrics: dict) -> str:
    value = metrics.get("output_words")
    return "–" if value is None else f"{value:.1f}"


def effect_cell(effect: dict | None) -> str:
    """``+0.4222 [+0.3177, +0.5183]``; a corpus metric has no interval."""
    if effect is None:
        return "–"
    if effect["ci_low"] is None:
        return f"{effect['difference']:+.4f} (corpus)"
    return f"{effect['difference']:+.4f} [{effect['ci_low']:+.4f}, {effect['ci_high']:+.4f}]"


def verdict_cell(verdict: dict | None) -> str:
    """``stands (+0.0300 [+0.0100, +0.0500])``: the verdict and the margin over the pasted row; a ROUGE-type
    metric that loses to Lead-k says so."""
    if verdict is None:  # a corpus metric: nothing to resample
        return "–"
    if not isinstance(verdict.get("margin"), dict):  # a report from before margins had intervals
        return f"{'stands' if verdict['stands'] else 'pasting wins'} (earlier rule, no interval)"
    text = f"{'stands' if verdict['stands'] else 'does not stand'} ({interval(verdict['margin'])})"
    lead = verdict.get("vs_lead_k")
    if lead is not None and lead["ci_low"] <= 0:
        text += f"; vs Lead-k {interval(lead)}"
    return text


def interval(test: dict) -> str:
    """``+0.0300 [+0.0100, +0.0500]``: a difference and its 95% interval."""
    return f"{test['difference']:+.4f} [{test['ci_low']:+.4f}, {test['ci_high']:+.4f}]"
