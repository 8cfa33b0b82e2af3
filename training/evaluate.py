"""Generation-based evaluation of any summarizer (checkpoint, Hub id or baseline) on JSONL examples.

The report is the same for every variant: corpus means of the variant's live metrics (``Variant.score``
against the example's ``target``), the number of truncated inputs, and per-example rows. The model
card reads it (``eval_report.json``).

Examples are generated longest source first in batches (``variants.base.by_length``: little padding)
under the summarizer's own :class:`variants.seq2seq.GenerationSettings`, the ones the leaderboard and
the Space use too; rows come back in the data file's order.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from tqdm.auto import tqdm

from variants.base import Summarizer, by_length

REPORT_FILE = "eval_report.json"


def evaluate(summarizer: Summarizer, records: list[dict], data_file: str, batch_size: int | None = None,
             ignore_controls: bool = False) -> dict:
    """``ignore_controls`` summarizes every example with no controls at all: the same system made
    blind to them, whose scores say what the controls add. ``batch_size`` (default: the summarizer's
    generation settings, else 8) overrides the settings' batch size."""
    variant = summarizer.variant
    settings = getattr(summarizer, "settings", None)
    batch_size = batch_size or (settings.batch_size if settings else 8)
    if ignore_controls:
        records = [{**r, "controls": {}} for r in records]
    summaries = [None] * len(records)
    for chunk in tqdm(by_length([len(r["document"]) for r in records], batch_size),
                      desc=f"evaluating {summarizer.name}", unit="batch"):
        done = summarizer.summarize([records[i]["document"] for i in chunk], [records[i]["controls"] for i in chunk],
                                    batch_size=batch_size)
        for i, summary in zip(chunk, done):
            summaries[i] = summary
    rows, truncated = [], 0
    for record, summary in zip(records, summaries):
        scores = variant.score(summary.text, record["document"], record["controls"], record["target"], summarizer.assets)
        truncated += any("truncated" in n for n in summary.notices)
        keys = {k: v for k, v in record.items() if isinstance(v, str) and k not in ("document", "target")}
        rows.append({"id": record.get("id"), **keys, "controls": record["controls"], "summary": summary.text,
                     **{name: score.value for name, score in scores.items()}})
    names = [n for n in variant.metric_names if any(row.get(n) is not None for row in rows)]
    metrics = {}
    for name in names:
        values = [row[name] for row in rows if row.get(name) is not None and not math.isnan(row[name])]
        metrics[name] = sum(values) / len(values) if values else None
    metrics.update(variant.corpus_scores(records, rows, str(data_file)))
    return {"variant": variant.id, "model": summarizer.name, "method": summarizer.method, "data_file": str(data_file),
            "n_examples": len(rows), "truncated_inputs": truncated, "ignore_controls": ignore_controls,
            "metrics": metrics, "breakdown": variant.breakdown(rows), **variant.report_extras(records, rows),
            "examples": rows}


def write_report(report: dict, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
