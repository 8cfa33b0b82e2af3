"""The control effects as lines of text, as ``python -m training evaluate`` prints them: one report's
(:func:`effect_summary`) and a guidance sweep's (:func:`sweep_summary`), each metric with its interval and
whether it stands against the pasted row (:func:`verdict_text`).
"""

from __future__ import annotations


def effect_summary(sensitivity: dict) -> str:
    """The control effects as lines of text (``python -m training evaluate`` prints them): per control
    metric the right-controls, shuffled, Lead-k and pasted scores, the effect with its interval and
    whether the metric stands against the pasted row."""
    lead, pasted = sensitivity["lead_k"], sensitivity.get("pasted")
    lines = [
        f"control effect (right - shuffled controls; {sensitivity['shuffled']['controls_changed']} of "
        f"{sensitivity['shuffled']['n_examples']} examples given other controls); Lead-k and pasted at "
        f"{lead['budget_words']} words:"
    ]
    for name, e in sensitivity["effect"].items():
        interval = (
            f" [{e['ci_low']:+.4f}, {e['ci_high']:+.4f}] over {e['documents']} documents"
            if e["ci_low"] is not None
            else " (corpus metric)"
        )
        line = (
            f"  {name}: right {e['given']:.4f}, shuffled {e['shuffled']:.4f}, "
            f"effect {e['difference']:+.4f}{interval}; Lead-k {number(lead['metrics'].get(name))}"
        )
        if pasted is not None:
            line += f", pasted {number(pasted['metrics'].get(name))}"
        line += verdict_text(sensitivity.get("verdict", {}).get(name))
        lines.append(line)
    return "\n".join(lines)


def verdict_text(verdict: dict | None) -> str:
    """``: stands (margin +0.0300 [+0.0100, +0.0500])`` or why it falls; empty for no verdict."""
    if verdict is None:
        return ""
    m = verdict["margin"]
    text = f"margin over pasted {m['difference']:+.4f} [{m['ci_low']:+.4f}, {m['ci_high']:+.4f}]"
    lead = verdict.get("vs_lead_k")
    if lead is not None:
        text += f", over Lead-k {lead['difference']:+.4f} [{lead['ci_low']:+.4f}, {lead['ci_high']:+.4f}]"
    return f": {'stands' if verdict['stands'] else 'does not stand'} ({text})"


def number(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def sweep_summary(report: dict) -> str:
    """A guidance sweep (:func:`training.guidance.sweep`) as lines of text: per γ and control metric the
    effect with its interval, the pasted row's score and the verdict; ROUGE-1 and the time per γ."""
    lines = [f"{report['model']} on {report['n_examples']} examples of {report['data']}:"]
    plain = report["sweep"][0]["seconds"] or None
    for row in report["sweep"]:
        cost = f", {row['seconds'] / plain:.2f}x the time of γ = {report['sweep'][0]['guidance']:g}" if plain else ""
        lines.append(f"γ = {row['guidance']:g}: rouge1 {number(row['metrics'].get('rouge1'))}{cost}")
        for name, e in row["effect"].items():
            interval = f" [{e['ci_low']:+.4f}, {e['ci_high']:+.4f}]" if e["ci_low"] is not None else " (corpus)"
            verdict = row["verdict"].get(name)
            lines.append(
                f"  {name}: right {e['given']:.4f}, effect {e['difference']:+.4f}{interval}, pasted "
                f"{number(row['pasted']['metrics'].get(name))}" + verdict_text(verdict)
            )
    return "\n".join(lines)
