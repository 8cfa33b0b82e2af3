"""``python -m training.persona_eval``: how well a summarizer writes for *each* reader (PENS setting).

    python -m training.persona_eval --model checkpoints/persona-user-embedding --data DIR/test.jsonl
    python -m training.persona_eval --model baseline --data DIR/test.jsonl [--ignore-history]

One summary per (article, reader) of the examples (``training/pens_data.py``: ``article_id``,
``user``, ``controls.history``), scored three ways:

* ROUGE-1/2/Lsum against that reader's own reference (:func:`training.evaluate.evaluate`, the
  variant's live metrics), also averaged per reader;
* EGISES (Vansh et al. 2023, eq. 11; **lower is better**): whether the summaries of one article
  differ from each other as much as its readers' references do (:mod:`metrics.egises`);
* P-Acc (eq. 13-14, alpha 0.5, beta 1) on ROUGE-L.

``--ignore-history`` summarizes every pair with no reader at all: the same model made insensitive,
whose EGISES says what personalization adds. The report quotes the paper's Table 1 (real PENS, the
authors' models) for context only: on SteerSum's simulated benchmark the numbers are not comparable.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict

from metrics.io import DataError, get_field
from variants import get_variant, load_summarizer
from variants.base import Summarizer

from .data import load_examples
from .evaluate import REPORT_FILE, evaluate, write_report

NOT_EQUIVALENT = ("The paper's Table 1 scores the authors' models on real PENS headlines; these numbers are quoted "
                  "for context only and are not comparable with scores on other data or models.")


def evaluate_readers(summarizer: Summarizer, records: list[dict], data_file: str, batch_size: int = 8,
                     ignore_history: bool = False) -> dict:
    """The generic report (``training.evaluate``) plus EGISES, P-Acc and per-reader ROUGE."""
    for number, record in enumerate(records, start=1):
        where = f"{data_file}:{number}"
        get_field(record, "article_id", str, where)
        get_field(record, "user", str, where)
    if ignore_history:
        records = [{**r, "controls": {}} for r in records]
    report = evaluate(summarizer, records, data_file, batch_size)  # EGISES, P-Acc: PersonaVariant.corpus_scores
    for row, record in zip(report["examples"], records):
        row.update(article_id=record["article_id"], user=record["user"])
    by_reader = defaultdict(list)
    for row in report["examples"]:
        by_reader[row["user"]].append(row.get("rougeLsum") or 0.0)
    simulated = any(r.get("dataset") == "pens_simulated" for r in records)
    report.update(
        simulated=simulated,
        data_note=("SIMULATED PENS-format benchmark (BBC News Summary articles, made-up readers and reader "
                   "references; training/pens_data.py): not real PENS") if simulated else "PENS-format data",
        ignore_history=ignore_history,
        rouge_per_reader={user: sum(v) / len(v) for user, v in sorted(by_reader.items())},
        reported_in_paper={"note": NOT_EQUIVALENT,
                           "table_1_egises": {e["system"]: e["metrics"]["egises"] for e in summarizer.variant.reported}},
    )
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.persona_eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="checkpoint folder, Hub id, or 'baseline'")
    parser.add_argument("--revision", help="Hub revision of --model")
    parser.add_argument("--data", required=True, help="JSONL (article_id, user, document, controls, target)")
    parser.add_argument("--out", default=REPORT_FILE)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-samples", type=int, default=None)
    parser.add_argument("--ignore-history", action="store_true", help="summarize without any reader (ablation)")
    a = parser.parse_args(argv)
    summarizer = get_variant("persona").baseline() if a.model == "baseline" else load_summarizer(a.model, revision=a.revision)
    if summarizer.variant.id != "persona":
        raise SystemExit(f"{a.model}: a '{summarizer.variant.id}' model, not a persona one")
    try:
        records = load_examples(a.data, summarizer.variant, summarizer.assets, a.max_samples)
        report = evaluate_readers(summarizer, records, a.data, a.batch_size, a.ignore_history)
    except DataError as err:
        raise SystemExit(str(err)) from None
    write_report(report, a.out)
    print(("SIMULATED data. " if report["simulated"] else "") + json.dumps(report["metrics"]))
    print(NOT_EQUIVALENT)


if __name__ == "__main__":
    main()
