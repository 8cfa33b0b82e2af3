"""Generation-based evaluation of any summarizer (checkpoint, Hub id or baseline) on JSONL examples.

The report is the same for every variant: corpus means of the variant's live metrics (``Variant.score``
against the example's ``target``), of the summaries' length in words (``output_words``) and of their
text's quality (:mod:`metrics.quality`: ``ends_sentence``, ``repeated_trigram``, ``unsupported_facts``,
``has_unsupported``; a mean of a 0/1 score is a share), the number of truncated inputs, and per-example
rows. The model card reads it (``eval_report.json``).

What the system is *given* is one of :data:`CONTROL_MODES`: each example's own controls, another
example's (``shuffled``: a seeded derangement, :func:`derangement`, within a record's
``shuffle_group`` when the test set names one, or the record's own ``shuffled_controls``) or none. It is always *scored*
against the example's own controls and target, so the difference between the ``given`` and the
``shuffled`` report is what following the controls earns (:mod:`training.sensitivity`).

Examples are generated longest source first in batches (``variants.steering.by_length``: little padding)
under the summarizer's own :class:`variants.seq2seq.GenerationSettings`, the ones the leaderboard and
the Space use too; rows come back in the data file's order.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from metrics.quality import QUALITY_FIELDS, quality
from variants.base import Summarizer
from variants.steering import by_length

REPORT_FILE = "eval_report.json"
CONTROL_MODES = ("given", "shuffled", "none")  # what the system is given; scoring always uses the example's own
SHUFFLE_SEED = 0
# A record field: the shuffled pass gives a record only controls of records with the same value (e.g.
# the document's id: another topic of the same document), see :func:`shuffle_groups`.
SHUFFLE_GROUP = "shuffle_group"
# A record field: the controls a record is given in the shuffled pass, fixed by its test set (the entity
# test set: another entity of the same document, variants.entity.data.other_entity); wins over the draw.
SHUFFLED_CONTROLS = "shuffled_controls"


def evaluate(
    summarizer: Summarizer,
    records: list[dict],
    data_file: str,
    batch_size: int | None = None,
    ignore_controls: bool = False,
    controls: str = "given",
    seed: int = SHUFFLE_SEED,
) -> dict:
    """Summarize every record given ``controls`` (one of :data:`CONTROL_MODES`; ``shuffled`` with
    :func:`derangement` under ``seed``) and score it against its own controls and target.
    ``ignore_controls`` is ``controls="none"``: the same system made blind to its controls.
    ``batch_size`` (default: the summarizer's generation settings, else 8) overrides the settings'."""
    variant = summarizer.variant
    settings = getattr(summarizer, "settings", None)
    batch_size = batch_size or (settings.batch_size if settings else 8)
    if ignore_controls:
        controls = "none"
    if controls not in CONTROL_MODES:
        raise ValueError(f"controls must be one of {', '.join(CONTROL_MODES)}, got {controls!r}")
    given = [r["controls"] for r in records]
    if controls == "shuffled":
        given = [
            r.get(SHUFFLED_CONTROLS) or given[j]
            for r, j in zip(records, derangement(given, seed, shuffle_groups(records)))
        ]
    elif controls == "none":
        given = [{} for _ in records]
    summaries = [None] * len(records)
    started = time.perf_counter()
    for chunk in tqdm(
        by_length([len(r["document"]) for r in records], batch_size),
        desc=f"evaluating {summarizer.name}",
        unit="batch",
    ):
        done = summarizer.summarize(
            [records[i]["document"] for i in chunk], [given[i] for i in chunk], batch_size=batch_size
        )
        for i, summary in zip(chunk, done):
            summaries[i] = summary
    seconds = time.perf_counter() - started
    rows, truncated = [], 0
    text_quality = quality([s.text for s in summaries], [r["document"] for r in records])
    for i, (record, summary) in enumerate(zip(records, summaries)):
        scores = variant.score(
            summary.text, record["document"], record["controls"], record["target"], summarizer.assets
        )
        truncated += any("truncated" in n for n in summary.notices)
        keys = {k: v for k, v in record.items() if isinstance(v, str) and k not in ("document", "target")}
        rows.append(
            {
                "id": record.get("id"),
                **keys,
                "controls": record["controls"],
                **({} if controls == "given" else {"given_controls": given[i]}),
                "summary": summary.text,
                "output_words": len(summary.text.split()),
                **text_quality[i],
                **{name: score.value for name, score in scores.items()},
            }
        )
    names = [
        n
        for n in (*variant.evaluation.metric_names, "output_words", *QUALITY_FIELDS)
        if any(row.get(n) is not None for row in rows)
    ]
    metrics = {}
    for name in names:
        values = [row[name] for row in rows if row.get(name) is not None and not math.isnan(row[name])]
        metrics[name] = sum(values) / len(values) if values else None
    metrics.update(variant.evaluation.corpus_scores(records, rows, str(data_file)))
    return {
        "variant": variant.id,
        "model": summarizer.name,
        "method": summarizer.method,
        "data_file": str(data_file),
        "datasets": sorted({str(r["dataset"]) for r in records if r.get("dataset")}),
        "n_examples": len(rows),
        "truncated_inputs": truncated,
        "ignore_controls": controls == "none",
        "controls": controls,
        **({"shuffle_seed": seed} if controls == "shuffled" else {}),
        "metrics": metrics,
        "breakdown": variant.evaluation.breakdown(rows),
        **variant.evaluation.report_extras(records, rows),
        "summarize_seconds": seconds,
        "examples": rows,
    }


def shuffle_groups(records: list[dict]) -> list | None:
    """Each record's :data:`SHUFFLE_GROUP` (records without one form one group together), or None when
    no record names one. A test set names groups when only some controls are fair substitutes: MACSum's
    topics are shuffled among the topics of the same document, so the shuffled pass asks for another
    topic of the text the system reads, never one the document does not treat."""
    if not any(SHUFFLE_GROUP in r for r in records):
        return None
    return [r.get(SHUFFLE_GROUP, "") for r in records]


def derangement(values: list, seed: int = SHUFFLE_SEED, groups: list | None = None) -> list[int]:
    """With ``groups`` (one key per position), each position takes a value from its own group only:
    every group is deranged on its own, as below (a group of one keeps its value).

    For each position, the index of another position whose value it takes: a seeded permutation in
    which no position keeps a value equal to its own (a dict compares by content) whenever that is
    possible, i.e. when no value fills more than half the positions. Otherwise (e.g. 3 of 4 examples
    ask for the same topic) each position draws, with replacement, one of the positions whose value
    differs. When all values are equal every permutation leaves them unchanged; the positions are
    then only deranged.

    A random permutation is repaired one clash at a time: position ``i`` that got a value equal to
    its own swaps with a ``j`` such that both end up with a different value. With at most half the
    positions sharing ``i``'s value such a ``j`` always exists (at least ``n - 2c + 1`` of them)."""
    if groups is not None:
        if len(groups) != len(values):
            raise ValueError(f"{len(values)} values but {len(groups)} shuffle groups")
        members: dict[str, list[int]] = {}
        for i, group in enumerate(groups):
            members.setdefault(json.dumps(group, sort_keys=True), []).append(i)
        donors = list(range(len(values)))
        for number, (_, positions) in enumerate(sorted(members.items())):
            inner = derangement([values[i] for i in positions], seed + number)
            for i, j in zip(positions, inner):
                donors[i] = positions[j]
        return donors
    keys = [json.dumps(v, sort_keys=True, ensure_ascii=False) for v in values]
    n, rng = len(keys), np.random.default_rng(seed)
    if n < 2:
        return list(range(n))
    codes = np.unique(keys, return_inverse=True)[1]
    counts = np.bincount(codes)
    if len(counts) == 1:  # nothing differs: only the positions move
        order = rng.permutation(n)  # one cycle through a random order: nobody keeps their own
        return [int(j) for j in order[(np.argsort(order) + 1) % n]]
    if counts.max() * 2 > n:
        return [int(rng.choice(np.flatnonzero(codes != codes[i]))) for i in range(n)]
    donor = rng.permutation(n)
    for i in rng.permutation(n):
        if codes[donor[i]] != codes[i]:
            continue
        fits = np.flatnonzero((codes[donor] != codes[i]) & (codes != codes[donor[i]]))
        j = int(rng.choice(fits))
        donor[i], donor[j] = donor[j], donor[i]
    return [int(j) for j in donor]


def write_report(report: dict, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
