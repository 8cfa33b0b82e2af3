"""Control sensitivity: can the evaluation tell a summarizer that obeys its controls from one that
ignores them? (docs/evaluation.md, "Control sensitivity".)

Beside a system's report (controls given) come two rows:

* the **same system given shuffled controls**: each example gets another example's controls (a seeded
  derangement, :func:`training.evaluate.derangement`: another topic, entity, reader or CCS control
  set) while its document, target and the controls it is *scored* against stay its own;
* a **control-blind row**, :class:`training.lead_k.LeadK`: the document's first sentences up to a length budget in
  words, whatever the controls say;
* a **pasted row**, :class:`training.lead_k.PastedLeadK`: the same Lead-k with the controls' own words pasted in
  (:meth:`Evaluation.paste`: the topic's terms, the entity's name, the keywords, a cue sentence, the
  reader's titles), the cheapest imitation of obedience.

The **control effect** of a metric is its mean with the right controls minus its mean with shuffled
ones, with a 95 % paired-bootstrap interval (:mod:`training.effect_intervals`) that resamples
documents, not examples: the examples of one document (CCS's four control sets of an abstract,
persona's four readers of an article) are resampled together, since they are not independent
evidence (resampled one by one, a CCS model that ignored readability counted each summary twice).
A system that ignores its controls writes the same summaries in both passes, so its effect is exactly
0; a positive effect whose interval excludes 0 says the controls steer the summaries in the
direction the metric rewards (for a lower-is-better metric such as ``length_error`` or ``egises``,
a negative one). Metrics that exist only for a whole test set (``egises``, ``length_pcc``, ...)
get the difference without an interval: there are no per-example scores to resample.

Which metrics measure obedience to the controls is the variant's :attr:`Evaluation.control_metrics`.
A control metric **stands** (:func:`verdicts`) when the system with the right controls beats the pasted
row by at least half its own control effect, beyond what the choice of test documents explains: the
per-example margin ``(right - pasted) - (right - shuffled) / 2`` is bootstrapped over documents and its
95 % interval must lie above 0, as must the effect's. Pasting must not buy what obeying buys. On a
ROUGE-type metric the right controls must also beat the control-blind Lead-k (its interval above 0): a
system below Lead-k does not earn its reference overlap by following the controls. A corpus metric
without per-example scores (``egises``, ``length_pcc``) gets no verdict: there is nothing to resample.

The pasted row has the length of the summaries it stands beside: Lead-k gives up as many words as the
pasted controls add, and the whole is cut at the budget (a reader's clicked titles would otherwise make
it five times longer than the summary).
"""

from __future__ import annotations

from metrics.bootstrap import N_RESAMPLES
from variants.base import Variant

from .effect_intervals import control_effect, margin_test
from .evaluate import SHUFFLE_SEED, evaluate
from .lead_k import lead_k_report, length_budget


def control_names(variant: Variant, report: dict) -> list[str]:
    """The variant's control metrics that the report has a value for."""
    return [n for n in variant.evaluation.control_metrics if report["metrics"].get(n) is not None]


def is_rouge(name: str) -> bool:
    """Whether ``name`` scores overlap with a reference (ROUGE, ROUGE-K): such a metric must also beat Lead-k."""
    return "rouge" in name.lower()


def stands(margin: dict, effect: dict, lead_margin: dict | None = None, lower_is_better: bool = False) -> bool:
    """Whether a control metric stands: the intervals of the effect (right - shuffled), of the margin over
    the pasted row (``(right - pasted) - effect / 2``) and, where given, of the margin over Lead-k all lie
    on the good side of 0 (above it; below it for a lower-is-better metric, whose margins are computed
    with the sign turned, so that a margin is always better above 0)."""
    good_effect = effect["ci_high"] < 0 if lower_is_better else effect["ci_low"] > 0
    return bool(good_effect and margin["ci_low"] > 0 and (lead_margin is None or lead_margin["ci_low"] > 0))


def verdicts(
    variant: Variant, effect: dict[str, dict], rows: dict[str, list[dict]], documents: list[str], seed: int = 0
) -> dict[str, dict]:
    """Per control metric with per-example scores: the pasted row's mean, the ``margin`` over it with its
    interval (:func:`margin_test`), for a ROUGE-type metric the margin over Lead-k (``vs_lead_k``, right -
    Lead-k, signed likewise), and whether the metric :func:`stands`. ``rows``: the per-example rows of
    the ``right``, ``shuffled``, ``pasted`` and ``lead_k`` reports, in the same order as ``documents``."""
    out = {}
    for name, e in effect.items():
        lower = name in variant.evaluation.lower_is_better
        if e.get("ci_low") is None:
            continue  # a corpus metric: no per-document interval, no verdict
        contrast = variant.evaluation.contrasts.get(name)
        if contrast:  # each example has the score of its side; the margin is a contrast of the two sides
            score = [contrast[0] if r.get(contrast[0]) is not None else contrast[1] for r in rows["right"]]
            sides = [s == contrast[0] for s in score]
        else:
            score, sides = [name] * len(documents), None
        series = {k: [r.get(s) for r, s in zip(rows[k], score)] for k in ("right", "shuffled", "pasted", "lead_k")}
        margin = margin_test(series["right"], series["shuffled"], series["pasted"], lower, documents, seed, sides)
        if margin is None:
            continue
        verdict = {"pasted": mean(series["pasted"]), "margin": margin, "lower_is_better": lower}
        lead_margin = None
        if is_rouge(name):
            # with the right controls as both sides, the margin is right - Lead-k
            lead_margin = margin_test(series["right"], series["right"], series["lead_k"], lower, documents, seed)
            verdict["vs_lead_k"] = lead_margin
        verdict["stands"] = stands(margin, e, lead_margin, lower)
        out[name] = verdict
    return out


def mean(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def control_sensitivity(
    summarizer,
    records: list[dict],
    data_file: str,
    report: dict,
    batch_size: int = 8,
    seed: int = SHUFFLE_SEED,
    budget: str = "outputs",
) -> dict:
    """The shuffled-controls pass, the Lead-k row (budget from the system's ``outputs`` by default)
    and the control effect, for ``report`` (the given-controls report of ``summarizer`` on
    ``records``); goes into the report as ``report["control_sensitivity"]``."""
    variant = summarizer.variant
    shuffled = evaluate(summarizer, records, data_file, batch_size, controls="shuffled", seed=seed)
    changed = sum(row["given_controls"] != row["controls"] for row in shuffled["examples"])
    words = length_budget(report, records, budget)
    lead = lead_k_report(variant, records, data_file, words, budget, summarizer.assets, batch_size)
    pasted = lead_k_report(variant, records, data_file, words, budget, summarizer.assets, batch_size, pasted=True)
    names = control_names(variant, report)
    documents = [r["document"] for r in records]
    effect = control_effect(
        report, shuffled, names, seed=seed, documents=documents, contrasts=variant.evaluation.contrasts
    )
    rows = {
        "right": report["examples"],
        "shuffled": shuffled["examples"],
        "pasted": pasted["examples"],
        "lead_k": lead["examples"],
    }
    source = "system's summaries" if budget == "outputs" else "test targets"
    return {
        "control_metrics": names,
        "seed": seed,
        "shuffled": {
            "n_examples": shuffled["n_examples"],
            "controls_changed": changed,
            "truncated_inputs": shuffled["truncated_inputs"],
            "metrics": shuffled["metrics"],
            "summarize_seconds": shuffled["summarize_seconds"],
            "examples": [
                {"id": r["id"], "given_controls": r["given_controls"], "summary": r["summary"]}
                for r in shuffled["examples"]
            ],
        },
        "effect": effect,
        "lead_k": {
            "model": lead["model"],
            "budget_words": lead["budget_words"],
            "budget_from": budget,
            "n_examples": lead["n_examples"],
            "metrics": lead["metrics"],
        },
        "pasted": {
            "model": pasted["model"],
            "budget_words": words,
            "budget_from": budget,
            "n_examples": pasted["n_examples"],
            "metrics": pasted["metrics"],
            "examples": [{"id": r["id"], "summary": r["summary"]} for r in pasted["examples"][:3]],
        },
        "verdict": verdicts(variant, effect, rows, documents, seed),
        "note": (
            f"effect = mean with the right controls - mean with shuffled controls (each example given another "
            f"example's controls, seed {seed}; scored against its own), 95% paired-bootstrap interval "
            f"({N_RESAMPLES} resamples of the documents, each with all its examples); Lead-k ignores the "
            f"controls, budget = mean words of the {source}; pasted = Lead-k with the controls' own words "
            "pasted in, cut at the same budget; a metric stands when the intervals of the effect and of the "
            "margin (right - pasted) - effect / 2 lie above 0 (for ROUGE also right - Lead-k), bootstrapped over "
            "documents"
        ),
    }


def evaluate_with_sensitivity(
    summarizer,
    records: list[dict],
    data_file: str,
    batch_size: int = 8,
    sensitivity: bool = True,
    seed: int = SHUFFLE_SEED,
) -> dict:
    """:func:`training.evaluate.evaluate` with the right controls, plus ``control_sensitivity`` (two
    more passes: the system on shuffled controls, which doubles generation time, and Lead-k) unless
    ``sensitivity`` is false."""
    report = evaluate(summarizer, records, data_file, batch_size)
    if sensitivity:
        report["control_sensitivity"] = control_sensitivity(summarizer, records, data_file, report, batch_size, seed)
    return report
