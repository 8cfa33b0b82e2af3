"""The control effect's intervals: a metric's mean with the right controls minus its mean with shuffled ones,
with a 95 % paired-bootstrap interval that resamples documents (:func:`control_effect`; for a metric that is a
contrast of two per-example scores, :func:`contrast_effect`), and the interval of the margin a system keeps over
the pasted row (:func:`margin_test`). :mod:`training.sensitivity` says what they decide.
"""

from __future__ import annotations

from metrics.bootstrap import N_RESAMPLES, compare, contrast_bootstrap, paired_bootstrap


def control_effect(
    given: dict,
    shuffled: dict,
    names: list[str],
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    documents: list[str] | None = None,
    contrasts: dict[str, tuple[str, str]] | None = None,
) -> dict[str, dict]:
    """Per metric: the given-controls mean, the shuffled-controls mean, their ``difference`` and, for
    per-example metrics, the paired bootstrap's ``ci_low``/``ci_high``, ``p_value``, ``n`` and
    ``documents`` (the units resampled: each example's document when ``documents`` is given). A corpus
    metric that is a contrast of two per-example scores (``contrasts``: name -> (score of one side, of
    the other), e.g. ΔFKGL = mean fkgl_normal - mean fkgl_high) gets its interval from
    :func:`metrics.bootstrap.contrast_bootstrap`."""
    ids = [e["id"] for e in given["examples"]], [e["id"] for e in shuffled["examples"]]
    if ids[0] != ids[1]:
        raise ValueError("the given- and shuffled-controls reports scored different examples")
    pairs = list(zip(given["examples"], shuffled["examples"]))
    # The bootstrap needs examples scored in both passes (a barely trained model may write nothing).
    per_example = [n for n in names if any(a.get(n) is not None and b.get(n) is not None for a, b in pairs)]
    tests = compare(given["examples"], shuffled["examples"], per_example, n_resamples, seed, documents)
    effects = {}
    for name in names:
        a, b = given["metrics"].get(name), shuffled["metrics"].get(name)
        if name in tests:
            t = tests[name]
            effects[name] = {
                "given": t["mean_a"],
                "shuffled": t["mean_b"],
                "difference": t["difference"],
                "ci_low": t["ci_low"],
                "ci_high": t["ci_high"],
                "p_value": t["p_value"],
                "n": t["n"],
                "documents": t["units"],
            }
        elif a is not None and b is not None and name in (contrasts or {}):
            effects[name] = {
                "given": a,
                "shuffled": b,
                "difference": a - b,
                **contrast_effect(pairs, contrasts[name], documents, n_resamples, seed),
            }
        elif a is not None and b is not None:
            effects[name] = {
                "given": a,
                "shuffled": b,
                "difference": a - b,
                "ci_low": None,
                "ci_high": None,
                "p_value": None,
                "n": given["n_examples"],
            }
    return effects


def contrast_effect(
    pairs: list[tuple[dict, dict]], scores: tuple[str, str], documents: list[str] | None, n_resamples: int, seed: int
) -> dict:
    """The interval of a contrast metric's effect: each example's given-minus-shuffled difference of the
    score it has (shuffled outputs are scored against the example's own controls, so both rows have the
    same one), one side minus the other, resampling documents."""
    differences, sides, groups = [], [], []
    for i, (a, b) in enumerate(pairs):
        for side, score in zip((True, False), scores):
            if a.get(score) is not None and b.get(score) is not None:
                differences.append(a[score] - b[score])
                sides.append(side)
                groups.append(documents[i] if documents is not None else i)
    test = contrast_bootstrap(differences, sides, groups, n_resamples, seed)
    return {
        "ci_low": test["ci_low"],
        "ci_high": test["ci_high"],
        "p_value": test["p_value"],
        "n": test["n"],
        "documents": test["units"],
    }


def margin_test(
    right: list, shuffled: list, pasted: list, lower: bool, groups: list, seed: int, sides: list | None = None
) -> dict | None:
    """The bootstrap of the per-example margin ``(right - pasted) - (right - shuffled) / 2`` over
    ``groups`` (the documents), signed so that above 0 is good; ``sides`` makes it a contrast metric's
    (:func:`metrics.bootstrap.contrast_bootstrap`). None when no example has all three scores."""
    sign = -1.0 if lower else 1.0
    kept = [i for i in range(len(right)) if None not in (right[i], shuffled[i], pasted[i])]
    if not kept:
        return None
    values = [sign * ((right[i] + shuffled[i]) / 2 - pasted[i]) for i in kept]
    if sides is not None:
        test = contrast_bootstrap(values, [sides[i] for i in kept], [groups[i] for i in kept], seed=seed)
    else:
        test = paired_bootstrap(values, [0.0] * len(values), seed=seed, groups=[groups[i] for i in kept])
    return {"difference": test["difference"], "ci_low": test["ci_low"], "ci_high": test["ci_high"]}
