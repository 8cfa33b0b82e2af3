"""Paired bootstrap resampling: is system A's ROUGE (or ROUGE-K) really higher than system B's?

Both systems summarize the same documents, so their per-example scores come in pairs. Resample the
documents with replacement many times and count how often A's mean is *not* above B's (Koehn, 2004,
"Statistical significance tests for machine translation evaluation"; the test summarization papers
cite for ROUGE differences):

    p = share of resamples with mean(A*) - mean(B*) <= 0

A small ``p`` (< 0.05) says A is better than B beyond what the choice of test documents explains.
Identical systems give a difference of 0 in every resample, so ``p = 1``; ``p`` near 0.5 means no
difference either way. The test is one-sided (A better than B); to test B over A, swap them.

A pair whose score is missing on either side (``None`` or NaN, e.g. ROUGE-K of a document without
keywords) is left out and counted as ``excluded``. Resampling is vectorized with numpy and seeded,
so the same inputs and seed give the same ``p``.

Where a test set asks several questions of one document (CCS: four control sets per abstract;
persona: four readers per article), its examples are not independent evidence: a model that writes
the same summary for an abstract's two readability levels scores the same twice. Resampling examples
then gives an interval narrower than the test set supports. With ``groups`` (one label per example,
e.g. its document) whole groups are resampled together, a cluster bootstrap (Field & Welsh 2007),
and the statistic stays the mean over examples.
"""

from __future__ import annotations

import math

import numpy as np

from metrics.io import DataError, get_field
from metrics.rouge import ROUGE_TYPES, rouge
from metrics.rouge_k import rouge_k

N_RESAMPLES = 1000
CHUNK = 1 << 22  # resampled indices held at once (x 8 bytes): bounds memory for long test sets

FIELDS = """
  prediction  str        system A's summary
  baseline    str        system B's summary of the same document (A is tested for being better)
  references  list[str]  reference summaries, shared by both systems
  title       str        optional: the document's title (ROUGE-K's proxy reference, see rouge-k)
"""


def paired_bootstrap(
    scores_a: list[float | None],
    scores_b: list[float | None],
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    groups: list | None = None,
) -> dict:
    """One-sided paired bootstrap of mean(A) - mean(B) over the examples both systems scored.

    Returns ``{"n", "excluded", "units", "mean_a", "mean_b", "difference", "p_value", "ci_low",
    "ci_high"}``: ``difference`` is the observed mean difference, ``ci_low``/``ci_high`` the
    2.5th/97.5th percentiles of the resampled differences, ``p_value`` the share of resamples in which
    A is not better (see the module docstring), ``units`` how many things were resampled: the examples,
    or the distinct ``groups`` labels (one per example) when given. Fewer than one scored pair raises
    :class:`DataError`.
    """
    if len(scores_a) != len(scores_b):
        raise DataError(f"scores_a and scores_b differ in length: {len(scores_a)} vs {len(scores_b)}")
    if groups is not None and len(groups) != len(scores_a):
        raise DataError(f"groups has {len(groups)} labels for {len(scores_a)} pairs of scores: give one per pair")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    kept = [i for i, (a, b) in enumerate(zip(scores_a, scores_b)) if _present(a) and _present(b)]
    if not kept:
        raise DataError(f"no example has a score for both systems ({len(scores_a)} given)")
    a, b = np.array([(scores_a[i], scores_b[i]) for i in kept], dtype=float).T  # (n,), (n,)
    differences = a - b
    n = len(differences)
    # The resampling unit of each example: itself, or its group. Per unit, the sum of its differences and
    # its number of examples; a resample's mean difference is then sum(sums) / sum(counts) of its units.
    labels = range(n) if groups is None else [groups[i] for i in kept]
    number = {}
    unit = np.array([number.setdefault(label, len(number)) for label in labels])
    sums, counts = np.bincount(unit, weights=differences), np.bincount(unit)
    units = len(sums)
    rng = np.random.default_rng(seed)
    resampled = np.empty(n_resamples)
    step = max(1, CHUNK // units)
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        indices = rng.integers(0, units, size=(size, units))  # (size, units): one resample of the test set per row
        resampled[start : start + size] = sums[indices].sum(axis=1) / counts[indices].sum(axis=1)
    low, high = np.percentile(resampled, [2.5, 97.5])
    return {
        "n": n,
        "excluded": len(scores_a) - n,
        "units": units,
        "mean_a": float(a.mean()),
        "mean_b": float(b.mean()),
        "difference": float(differences.mean()),
        "p_value": float(np.mean(resampled <= 0)),
        "ci_low": float(low),
        "ci_high": float(high),
    }


def contrast_bootstrap(
    differences: list[float], sides: list[bool], groups: list, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> dict:
    """Bootstrap of a contrast between two kinds of examples, resampling whole ``groups``: the mean
    paired difference over the examples of one side (``sides`` True) minus that over the others.
    CCSBench's ΔFKGL is such a contrast (FKGL of the summaries asked for ``normal`` readability minus
    of those asked for ``high``), so the change of ΔFKGL between two systems on the same examples is the
    contrast of their per-example FKGL differences. A resample that draws no example of a side is
    left out of the percentiles. Returns ``{"n", "units", "difference", "p_value", "ci_low", "ci_high"}``."""
    if not (len(differences) == len(sides) == len(groups)):
        raise DataError(f"{len(differences)} differences, {len(sides)} sides and {len(groups)} groups: give one each")
    d, side = np.array(differences, dtype=float), np.array(sides, dtype=bool)
    if not side.any() or side.all():
        raise DataError("a contrast needs examples of both sides")
    number = {}
    unit = np.array([number.setdefault(label, len(number)) for label in groups])
    units = len(number)
    sums = [np.bincount(unit, weights=np.where(side == s, d, 0.0), minlength=units) for s in (True, False)]
    counts = [np.bincount(unit, weights=(side == s).astype(float), minlength=units) for s in (True, False)]
    indices = np.random.default_rng(seed).integers(0, units, size=(n_resamples, units))  # one resample per row
    with np.errstate(invalid="ignore", divide="ignore"):
        means = [sums[s][indices].sum(axis=1) / counts[s][indices].sum(axis=1) for s in (0, 1)]
    resampled = means[0] - means[1]
    resampled = resampled[np.isfinite(resampled)]
    low, high = np.percentile(resampled, [2.5, 97.5])
    return {
        "n": len(d),
        "units": units,
        "difference": float(d[side].mean() - d[~side].mean()),
        "p_value": float(np.mean(resampled <= 0)),
        "ci_low": float(low),
        "ci_high": float(high),
    }


def _present(score) -> bool:
    return score is not None and not (isinstance(score, float) and math.isnan(score))


def compare(
    examples_a: list[dict],
    examples_b: list[dict],
    names: list[str],
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    groups: list | None = None,
) -> dict[str, dict]:
    """:func:`paired_bootstrap` for each score name in per-example rows (e.g. an evaluation report's
    ``examples``; ``groups``: one label per row, resampled together); a name neither side scored
    anywhere is left out."""
    if len(examples_a) != len(examples_b):
        raise DataError(f"the systems scored different numbers of examples: {len(examples_a)} vs {len(examples_b)}")
    results = {}
    for name in names:
        a, b = [row.get(name) for row in examples_a], [row.get(name) for row in examples_b]
        if any(map(_present, a)) and any(map(_present, b)):
            results[name] = paired_bootstrap(a, b, n_resamples, seed, groups)
    return results


def score_records(records: list[dict], source: str = "<records>") -> dict:
    """``python -m metrics bootstrap FILE.jsonl``: ROUGE-1/2/Lsum and ROUGE-K of ``prediction`` and
    ``baseline`` against the same references, and the paired bootstrap of each difference."""
    predictions, baselines, references, titles = [], [], [], []
    for i, record in enumerate(records):
        where = f"{source}:{i + 1}"
        predictions.append(get_field(record, "prediction", str, where))
        baselines.append(get_field(record, "baseline", str, where))
        refs = get_field(record, "references", (list, str), where, items=str)
        references.append([refs] if isinstance(refs, str) else refs)
        titles.append(get_field(record, "title", str, where, required=False))
    rows = []
    for system in (predictions, baselines):
        r, k = rouge(system, references)["examples"], rouge_k(system, references, titles)["examples"]
        rows.append([{**{name: e[name] for name in ROUGE_TYPES}, "rouge_k": ek["rouge_k"]} for e, ek in zip(r, k)])
    tests = compare(rows[0], rows[1], [*ROUGE_TYPES, "rouge_k"])
    corpus = {f"{name}_{key}": value for name, test in tests.items() for key, value in test.items()}
    examples = [{**{f"{n}_a": v for n, v in a.items()}, **{f"{n}_b": v for n, v in b.items()}} for a, b in zip(*rows)]
    return {
        "metric": "bootstrap",
        "corpus": corpus,
        "examples": examples,
        "notes": f"one-sided paired bootstrap (Koehn 2004), {N_RESAMPLES} resamples, seed 0: p is the share "
        "of resamples where the prediction's mean is not above the baseline's.",
    }
