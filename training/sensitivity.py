"""Control sensitivity: can the evaluation tell a summarizer that obeys its controls from one that
ignores them? (docs/evaluation.md, "Control sensitivity".)

Beside a system's report (controls given) come two rows:

* the **same system given shuffled controls**: each example gets another example's controls (a seeded
  derangement, :func:`training.evaluate.derangement`: another topic, entity, reader or CCS control
  set) while its document, target and the controls it is *scored* against stay its own;
* a **control-blind row**, :class:`LeadK`: the document's first sentences up to a length budget in
  words, whatever the controls say;
* a **pasted row**, :class:`PastedLeadK`: the same Lead-k with the controls' own words pasted in
  (:meth:`Evaluation.paste`: the topic's terms, the entity's name, the keywords, a cue sentence, the
  reader's titles), the cheapest imitation of obedience.

The **control effect** of a metric is its mean with the right controls minus its mean with shuffled
ones, with a 95 % paired-bootstrap interval (:func:`metrics.bootstrap.compare`) that resamples
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

from typing import Any

from metrics.bootstrap import N_RESAMPLES, compare, contrast_bootstrap, paired_bootstrap
from metrics.text import sentences
from variants.base import Baseline, Summary, Variant

from .evaluate import SHUFFLE_SEED, evaluate

BUDGETS = ("outputs", "targets")  # where a Lead-k length budget comes from


class LeadK(Baseline):
    """The document's first sentences, as many as bring the summary closest to ``words`` words (at
    least one sentence; a tie goes to the shorter). Controls are validated like any summarizer's,
    then ignored."""

    method = "lead-k"

    def __init__(self, variant: Variant, words: int, assets: Any = None):
        if words < 1:
            raise ValueError(f"Lead-k needs a length budget of at least 1 word, got {words}")
        super().__init__(variant, assets)
        self.words = words
        self.name = f"Lead-k (control-blind, first sentences up to {words} words)"

    def extract(self, document: str, controls: dict) -> Summary:
        return Summary(lead_words(document, self.words))


class PastedLeadK(LeadK):
    """:class:`LeadK` with the controls' own words pasted in by :meth:`Evaluation.paste`: a summary that
    looks obedient to a metric that counts control words, without reading the document for them."""

    method = "pasted"

    def __init__(self, variant: Variant, words: int, assets: Any = None):
        super().__init__(variant, words, assets)
        self.name = f"Lead-k + pasted controls (first sentences up to {words} words, the controls' words pasted in)"

    def extract(self, document: str, controls: dict) -> Summary:
        lead = lead_words(document, self.words).split()
        added = len(self.variant.evaluation.paste(" ".join(lead), controls, self.assets).split()) - len(lead)
        kept = " ".join(lead[: max(0, self.words - added)])  # Lead-k gives up the words the paste adds
        return Summary(" ".join(self.variant.evaluation.paste(kept, controls, self.assets).split()[: self.words]))


def lead_words(document: str, words: int) -> str:
    """The document's first sentences, as many as bring the text closest to ``words`` words (at least
    one; a tie goes to the shorter)."""
    lead, total = [], 0
    for sentence in sentences(document):
        size = len(sentence.split())
        if lead and abs(total + size - words) >= abs(total - words):
            break
        lead.append(sentence)
        total += size
    return " ".join(lead)


def length_budget(report: dict, records: list[dict], budget: str = "outputs") -> int:
    """Words for :class:`LeadK`: the mean length of the system's own summaries (``outputs``) or of
    the test targets (``targets``), rounded, at least 1."""
    if budget == "outputs":
        words = [row["output_words"] for row in report["examples"]]
    elif budget == "targets":
        words = [len(r["target"].split()) for r in records]
    else:
        raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
    return max(1, round(sum(words) / len(words))) if words else 1


def control_names(variant: Variant, report: dict) -> list[str]:
    """The variant's control metrics that the report has a value for."""
    return [n for n in variant.evaluation.control_metrics if report["metrics"].get(n) is not None]


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


def lead_k_report(
    variant: Variant,
    records: list[dict],
    data_file: str,
    words: int,
    budget: str,
    assets: Any = None,
    batch_size: int = 8,
    pasted: bool = False,
) -> dict:
    """The control-blind row, :class:`LeadK` at ``words`` words (``pasted``: :class:`PastedLeadK`),
    scored like any system."""
    system = (PastedLeadK if pasted else LeadK)(variant, words, assets)
    report = evaluate(system, records, data_file, batch_size)
    return {**report, "budget_words": words, "budget_from": budget}


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
