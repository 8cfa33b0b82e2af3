"""Evaluation at a control strength γ (``python -m training evaluate --guidance G``).

A report made at γ ≠ 1 carries the same evaluation at γ = 1 beside it (``at_guidance_1``: its metrics
and control effect), so the card's control-effect table shows what guidance adds on the same
examples, and the pasted and Lead-k rows keep any gain honest. The report says how it was generated
(``generation``: γ, constraints, beams). ``--save-default-guidance`` makes γ the checkpoint's default,
kept in its generation config (:func:`variants.seq2seq.save_default_strength`).

``--guidance-sweep 1 1.5 2 3`` evaluates the same examples at each γ (:func:`sweep`): per γ the metrics,
the control effect with its interval, the shuffled, Lead-k and pasted rows, whether each control metric
stands, and the seconds spent generating. The leaderboard plots the effect against γ from it
(:mod:`benchmarks.leaderboard.guidance`).
"""

from __future__ import annotations

from tqdm.auto import tqdm

from variants.seq2seq import GenerationSettings

from .sensitivity import evaluate_with_sensitivity

SWEEP_FILE = "guidance_sweep.json"  # beside eval_report.json in a checkpoint (or stored model) folder
SWEEP = (1.0, 1.5, 2.0, 3.0)  # the control strengths every variant is measured at
ROUGE_TOLERANCE = 0.02  # a default γ may cost at most this much ROUGE-1 against γ = 1


def with_settings(
    summarizer, guidance: float | None = None, constraints: bool | None = None
) -> GenerationSettings | None:
    """Set the summarizer's generation settings to ``guidance`` and ``constraints`` (None: its own) and
    return them; ``None`` for a summarizer without settings (a baseline), which refuses γ ≠ 1."""
    settings = getattr(summarizer, "settings", None)
    if settings is None:
        if (guidance is not None and guidance != 1) or constraints:
            raise ValueError(f"{summarizer.name} is model-free: guidance and constraints apply to models only")
        return None
    summarizer.settings = settings.but(control_strength=guidance, constraints=constraints)
    return summarizer.settings


def evaluate_guided(
    summarizer, records: list[dict], data_file: str, batch_size: int | None = None, sensitivity: bool = True
) -> dict:
    """:func:`training.sensitivity.evaluate_with_sensitivity` under the summarizer's settings, with
    ``generation`` recorded and, when its γ is not 1, the same evaluation at γ = 1 in ``at_guidance_1``."""
    settings = getattr(summarizer, "settings", None)
    report = evaluate_with_sensitivity(summarizer, records, data_file, batch_size, sensitivity)
    if settings is None:
        return report
    plain = None
    if settings.control_strength != 1:
        summarizer.settings = settings.but(control_strength=1.0)
        try:
            plain = evaluate_with_sensitivity(summarizer, records, data_file, batch_size, sensitivity)
        finally:
            summarizer.settings = settings
    return beside_plain(report, settings, plain)


def beside_plain(report: dict, settings: GenerationSettings, plain: dict | None) -> dict:
    """``report`` (made under ``settings``) with ``generation`` recorded and, when γ is not 1, ``plain``'s
    metrics and control sensitivity in ``at_guidance_1``: what the card's effect table shows side by side."""
    report["generation"] = settings.to_json()
    if settings.control_strength != 1 and plain is not None:
        report["at_guidance_1"] = {k: plain[k] for k in ("metrics", "control_sensitivity") if k in plain}
    return report


def sweep(
    summarizer,
    records: list[dict],
    data_file: str,
    values=SWEEP,
    batch_size: int | None = None,
    known: dict[float, dict] | None = None,
) -> tuple[dict, dict[float, dict]]:
    """The evaluation with its control sensitivity at each control strength in ``values`` (the same
    examples, shuffled controls and seed), one row per γ; ``known`` holds reports already made on these
    records (γ -> :func:`training.sensitivity.evaluate_with_sensitivity`'s report), which are not made
    again. ``seconds`` is the time the system spent summarizing (right and shuffled controls, without
    scoring; after one record summarized untimed): its ratio to γ = 1's is what the second pass costs
    on real inputs. Returns the sweep (what ``guidance_sweep.json`` holds) and the full report at each γ."""
    settings = getattr(summarizer, "settings", None)
    if settings is None:
        raise ValueError(f"{summarizer.name} is model-free: a guidance sweep needs a model")
    rows, reports = [], {}
    try:
        # One record summarized untimed first: what a process loads once (WordNet for topic's tags, the
        # tokenizer's caches) would otherwise count against the first γ and lower every ratio to it.
        if records and values:
            summarizer.settings = settings.but(control_strength=values[0])
            summarizer.summarize([records[0]["document"]], [records[0]["controls"]], batch_size=1)
        for guidance in tqdm(values, desc="guidance sweep", unit="γ"):
            summarizer.settings = settings.but(control_strength=guidance)
            report = (known or {}).get(guidance) or evaluate_with_sensitivity(
                summarizer, records, data_file, batch_size
            )
            reports[guidance] = report
            sensitivity = report["control_sensitivity"]
            rows.append(
                {
                    "guidance": guidance,
                    "metrics": report["metrics"],
                    "seconds": report["summarize_seconds"] + sensitivity["shuffled"]["summarize_seconds"],
                    "effect": sensitivity["effect"],
                    "verdict": sensitivity["verdict"],
                    **{
                        row: {
                            "budget_words": sensitivity[row].get("budget_words"),
                            "metrics": sensitivity[row]["metrics"],
                        }
                        for row in ("shuffled", "lead_k", "pasted")
                    },
                }
            )
    finally:
        summarizer.settings = settings
    return {
        "model": summarizer.name,
        "variant": summarizer.variant.id,
        "data": data_file,
        "n_examples": len(records),
        "control_metrics": list(summarizer.variant.evaluation.control_metrics),
        "lower_is_better": sorted(summarizer.variant.evaluation.lower_is_better),
        "generation": settings.to_json(),
        "default_guidance": settings.control_strength,
        "sweep": rows,
    }, reports


def lead_metric(swept: dict) -> str | None:
    """The control metric a sweep leads with: its variant's first one measured at every γ."""
    return next(
        (name for name in swept["control_metrics"] if all(name in row["effect"] for row in swept["sweep"])), None
    )


def rouge_metric(metrics: dict) -> str | None:
    """The ROUGE a choice may not cost: ROUGE-1, or the one the variant reports instead (ccs: ROUGE-L, as
    CCSBench does)."""
    return next((r for r in ("rouge1", "rougeLsum", "rougeL") if r in metrics), None)


def pick_default(swept: dict, rouge_tolerance: float = ROUGE_TOLERANCE) -> float:
    """The control strength a model should generate at, by a rule fixed before any sweep was run: of γ = 1
    and the swept γ whose ROUGE-1 (ROUGE-L where the variant reports no ROUGE-1) is at most
    ``rouge_tolerance`` below γ = 1's, whose lead control metric
    stands against the pasted row and whose effect is at least γ = 1's, the one with the highest lower end
    of its effect interval (the effect itself for a corpus metric; sign turned for a lower-is-better
    metric; a tie goes to the smaller γ, which costs less fluency)."""
    name = lead_metric(swept)
    rows = {row["guidance"]: row for row in swept["sweep"]}
    if name is None or 1.0 not in rows:
        return 1.0
    sign = -1.0 if name in swept.get("lower_is_better", ()) else 1.0

    def low(row: dict) -> float:
        e = row["effect"][name]
        bound = e["ci_high"] if sign < 0 else e["ci_low"]
        return sign * (e["difference"] if bound is None else bound)

    plain = rows[1.0]
    rouge = rouge_metric(plain["metrics"])
    plain_rouge = plain["metrics"].get(rouge)
    fits = [1.0] + [
        g
        for g, row in rows.items()
        if g != 1.0
        and (plain_rouge is None or (row["metrics"].get(rouge) or 0.0) >= plain_rouge - rouge_tolerance)
        and (row["verdict"].get(name) or {}).get("stands")
        and sign * row["effect"][name]["difference"] >= sign * plain["effect"][name]["difference"]
    ]
    return max(fits, key=lambda g: (low(rows[g]), -g))
