"""The store's admission gate: what a model is measured on when it asks into the store, and whether it beats
the stored one. The measure is taken from a report on the val split (:func:`report_split` says which split a
report holds): ROUGE-1 over bbc_summary for the general summarizer (:func:`general_measure`), the lower end of
the control-effect interval of its variant's first control metric for a variant model (:func:`variant_measure`),
ROUGE-1 breaking ties (:func:`better`). :func:`training.storing.put` applies it.
"""

from __future__ import annotations

from pathlib import Path


def report_split(report: dict) -> str | None:
    """The split a report was measured on: its ``split``; a general summarizer's set names (``bbc_summary val``);
    else its data file's name (``val.jsonl``: an evaluation report's ``data_file``, a sweep's ``data``); None
    when it does not say."""
    if report.get("split"):
        return report["split"]
    names = {name.split()[1] for name in report.get("sets") or {} if len(name.split()) > 1}
    if len(names) == 1:
        return names.pop()
    stem = Path(str(report.get("data_file") or report.get("data") or "")).stem
    return stem if stem in ("train", "val", "test") else None


def general_measure(report: dict) -> dict:
    scores = next(v for k, v in report["sets"].items() if k.startswith("bbc_summary "))
    return {
        "score": scores["rouge1"],
        "rouge1": scores["rouge1"],
        "ratio_to_lead": scores["ratio_to_lead"],
        "verbatim_fact_share": scores["verbatim_fact_share"],
        "examples": scores["examples"],
    }


def variant_effect(variant_id: str, report: dict) -> dict | None:
    """The control effect a card and the index lead with: the variant's first control metric measured."""
    from variants import get_variant

    effects = (report.get("control_sensitivity") or {}).get("effect") or {}
    name = next((n for n in get_variant(variant_id).evaluation.control_metrics if n in effects), None)
    if name is None:
        return None
    e = effects[name]
    return {
        "metric": name,
        "difference": e["difference"],
        "ci_low": e.get("ci_low"),
        "ci_high": e.get("ci_high"),
        "n": e.get("n"),
    }


def variant_measure(variant_id: str, report: dict) -> dict:
    effect = variant_effect(variant_id, report)
    low = None if effect is None else (effect["ci_low"] if effect["ci_low"] is not None else effect["difference"])
    return {"score": low, "rouge1": report["metrics"].get("rouge1"), "effect": effect}


def better(new: dict, old: dict) -> bool:
    """Whether measure ``new`` beats ``old``: a higher score, or the same score and a higher ROUGE-1."""

    def key(m):
        return (
            float("-inf") if m.get("score") is None else m["score"],
            float("-inf") if m.get("rouge1") is None else m["rouge1"],
        )

    return key(new) > key(old)
