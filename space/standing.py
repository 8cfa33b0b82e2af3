"""Where each served model stands, read from the leaderboard (``leaderboard.json``: the measured test
scores of every system, as ``python -m benchmarks leaderboard`` wrote them): the order in which the Space
lists a variant's models, and one line per measured model on its standing against its variant's baseline.

The numbers that order a variant's systems are their scores on its derived test set (the leaderboard's
``systems`` rows, matched by model id; a trained model by its row as served, not its model-alone row):

1. the variant's **first control metric** (``control_metrics[0]``: STAS for topic, entity coverage,
   length hit for ccs, boosted words found for tdsum, ROUGE-1 for persona), the metric the store's gate
   and the model cards lead with; negated where lower is better;
2. then **ROUGE** against the references (ROUGE-1, else ROUGE-L, else ROUGE-Lsum) where the first ties.

A system the leaderboard has not measured (a local checkpoint, a Hub id it did not score, or no
leaderboard at all) goes last, in catalog order; the baseline leads only where it measures best.
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path

log = logging.getLogger(__name__)

BOARD_DIR = Path(os.environ.get("STEERSUM_LEADERBOARD", "leaderboard"))  # the Leaderboard tab's folder too
BOARD_FILE = "leaderboard.json"
ROUGE_METRICS = ("rouge1", "rougeL", "rougeLsum")  # the ROUGE that breaks a tie, first present
LABELS = {
    "stas": "STAS",
    "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "rougeLsum": "ROUGE-Lsum",
    "boosted_found": "boosted words found",
}  # other metrics: their name with spaces
# A level standing with different means is a paired interval that holds 0: "within noise of" says so.
RELATIONS = {1: "above", 0: "level with", -1: "below", None: "within noise of"}


def read_board(path: str | Path | None = None) -> dict:
    """The leaderboard (default ``BOARD_DIR/leaderboard.json``); empty when there is none or it cannot be
    read, so the Space still starts (its models then keep the catalog's order)."""
    path = Path(path) if path is not None else BOARD_DIR / BOARD_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        log.warning("%s: cannot read the leaderboard, models keep the catalog's order: %s", path, err)
        return {}


def label(metric: str) -> str:
    return LABELS.get(metric, metric.replace("_", " "))


def ordering_metrics(part: dict) -> list[str]:
    """The metrics that order a variant's systems, in order: its first control metric, then ROUGE (one
    metric when the first is that ROUGE, as persona's ROUGE-1)."""
    names = list(part.get("metric_names") or [])
    first = (list(part.get("control_metrics") or []) or names or [None])[0]
    rouge = next((m for m in ROUGE_METRICS if m in names), None)
    return [m for m in dict.fromkeys([first, rouge]) if m is not None]


def measured_row(part: dict, model: str) -> dict | None:
    """The leaderboard's row of ``model`` on the variant's derived test set, if it measured it."""
    return next((row for row in part.get("systems") or [] if row.get("model") == model), None)


def rank_key(part: dict, model: str, lower_is_better: tuple[str, ...] = ()) -> tuple:
    """Sort key (ascending = best first): unmeasured last, then each ordering metric, best first. Python's
    sort is stable, so ties and the unmeasured keep the catalog's order (the baseline first)."""
    scores = (measured_row(part, model) or {}).get("metrics", {})
    values = {m: scores.get(m) for m in ordering_metrics(part)}
    if all(v is None for v in values.values()):
        return (1,)
    return (0, *(math.inf if v is None else v if m in lower_is_better else -v for m, v in values.items()))


def relation(row: dict, base: dict, metric: str, lower_is_better: tuple[str, ...] = ()) -> int | None:
    """+1 when the model stands above its baseline on ``metric``, -1 below, 0 level; None if either lacks it.
    Where the leaderboard gives a paired 95% interval of model minus baseline (``vs_baseline``: ROUGE), the
    model is above or below only when the interval leaves out 0; elsewhere the two means decide."""
    mine, theirs = row.get("metrics", {}).get(metric), base.get("metrics", {}).get(metric)
    if mine is None or theirs is None:
        return None
    paired = (row.get("vs_baseline") or {}).get(metric) or {}
    if paired.get("ci_low") is not None and paired.get("ci_high") is not None:
        sign = 1 if paired["ci_low"] > 0 else -1 if paired["ci_high"] < 0 else 0
    else:
        sign = (mine > theirs) - (mine < theirs)
    return -sign if metric in lower_is_better else sign


def standing(part: dict, model: str, lower_is_better: tuple[str, ...] = (), baseline: str = "baseline") -> str:
    """One line on where ``model`` stands against its variant's baseline on the ordering metrics, from the
    leaderboard's numbers, e.g. "below its baseline on STAS and ROUGE-1 (test set, 102 examples: STAS
    0.874 vs 0.990, ROUGE-1 0.397 vs 0.447)"; "" when the leaderboard measured either of them not at all.
    "within noise of" is a difference whose paired 95% interval holds 0 (:func:`relation`)."""
    row, base = measured_row(part, model), measured_row(part, baseline)
    if row is None or base is None or model == baseline:
        return ""
    groups: dict[int | None, list[str]] = {}
    numbers = []
    for metric in ordering_metrics(part):
        sign = relation(row, base, metric, lower_is_better)
        if sign is None:
            continue
        name = label(metric) + (" (lower is better)" if metric in lower_is_better else "")
        mine, theirs = row["metrics"][metric], base["metrics"][metric]
        groups.setdefault(None if sign == 0 and mine != theirs else sign, []).append(name)
        numbers.append(f"{label(metric)} {row['metrics'][metric]:.3f} vs {base['metrics'][metric]:.3f}")
    if not groups:
        return ""
    said = [
        f"{RELATIONS[sign]} {'its baseline' if i == 0 else 'it'} on {' and '.join(names)}"
        for i, (sign, names) in enumerate(groups.items())
    ]
    n = row.get("n_examples")
    return f"{', '.join(said)} (test set{f', {n} examples' if n else ''}: {', '.join(numbers)})"
