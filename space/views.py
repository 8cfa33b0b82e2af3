"""Service results turned into what the UI shows: a metrics table, chart data, comparison rows.

Scores are ``{"value", "meaning", "details"}``; a ``details`` entry that maps labels to numbers
(e.g. STAS's affinity per topic) reads faster as a bar chart than as a table.
"""
from __future__ import annotations

import pandas as pd

CHART_COLUMNS = ["label", "value", "series"]


def format_value(value) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def metrics_markdown(result: dict) -> str:
    """The live metrics panel: one line per score with its one-line meaning, then any notices."""
    lines = [f"- **{name} = {format_value(s['value'])}** — {s['meaning']}" for name, s in result["scores"].items()]
    lines = lines or ["_this variant reports no metrics for these controls_"]
    lines += [f"\n> ⚠ {notice}" for notice in result.get("notices", [])]
    return "\n".join(lines)


def chart_frame(scores: dict) -> pd.DataFrame:
    """Every per-label breakdown found in the scores' details, as (label, value, series) rows."""
    rows = [(str(label), float(number), f"{name} {key}")
            for name, score in scores.items()
            for key, breakdown in (score.get("details") or {}).items() if isinstance(breakdown, dict)
            for label, number in breakdown.items() if isinstance(number, (int, float)) and not isinstance(number, bool)]
    return pd.DataFrame(rows, columns=CHART_COLUMNS)


def table_frame(results: list[dict], first_column: str) -> pd.DataFrame:
    """Side-by-side results (Compare: one row per model; Sweep: one row per control value)."""
    names = list(dict.fromkeys(name for r in results for name in r["scores"]))
    rows = [[r[first_column], *(format_value(r["scores"].get(n, {}).get("value")) for n in names), r["summary"]]
            for r in results]
    return pd.DataFrame(rows, columns=[first_column, *names, "summary"])  # scores first: short, and read first
