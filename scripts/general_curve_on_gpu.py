"""Continue the stored general summarizer on one GPU, with its learning curve, and pack the best val step.

    python -m training.general_curve prepare --out .gpu/curve-inputs.json.xz      # here, beforehand
    python scripts/general_curve_on_gpu.py --inputs .gpu/curve-inputs.json.xz --out OUT \\
        [--steps 5000] [--every 500] [--seconds 260] [--work ck-curve] [--quick]

What it does:

1. the stored general summarizer (``store/models/general``, int8, expanded) continues for ``--steps`` at batch
   32 and learning rate 2e-4 decaying linearly to 0 at ``--steps``, on the recipe's training mix read from
   ``--inputs`` (the machine needs neither the datasets nor their loader); training stops early after
   ``--seconds``;
2. before the first step, every ``--every`` steps and after the last, :class:`training.general_curve.ValSummaries`
   writes the val summaries to ``OUT/curve_summaries.json`` (rewritten at each point, so a run cut short
   returns its points) and saves the weights;
3. the step with the best mean ROUGE-1 over the val sets (``rouge-score`` on the raw summaries: a quick
   pick on val; the curve's reported scores come from ``python -m training.general_curve score`` back on
   the CPU) is compacted (``store.compact``) with a ``steersum.json`` that counts its steps, and packed as
   ``OUT/general-best.tar.NN`` parts of 15 MiB (:func:`train_on_gpu.pack`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository's packages

from train_on_gpu import Clock, pack  # noqa: E402 - the scripts folder is on the path when run as a script


def mean_rouge1(summaries: dict, sets: dict) -> float:
    """Mean over the val sets of the mean ROUGE-1 F of each set's summaries (stemmed, as the curve's scores)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    means = []
    for name, texts in summaries.items():
        targets = [e["target"] for e in sets[name]["examples"]]
        means.append(sum(scorer.score(t, s)["rouge1"].fmeasure for t, s in zip(targets, texts)) / len(texts))
    return sum(means) / len(means)


def record_at(final: dict, step: int, start_steps: int) -> dict:
    """The final model's ``steersum.json`` told of the snapshot at ``step`` of this run."""
    record = dict(final)
    record["steps"] = start_steps + step
    record["phases"] = [*final["phases"][:-1], {**final["phases"][-1], "to_step": start_steps + step}]
    record["loss_history"] = [h for h in final.get("loss_history", []) if h.get("step", 0) <= step]
    record["learning_curve"] = "chosen by val ROUGE-1 among the snapshots of scripts/general_curve_on_gpu.py"
    return record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=Path, required=True, help="from `python -m training.general_curve prepare`")
    parser.add_argument("--out", type=Path, required=True, help="where the curve and the packed model go")
    parser.add_argument("--work", type=Path, default=Path("ck-curve"))
    parser.add_argument("--start", type=Path, default=Path("store/models/general"))
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=260, help="training stops after this long")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=2e-4)
    parser.add_argument("--quick", action="store_true", help="a few steps on a few examples: a plumbing check")
    a = parser.parse_args(argv)

    from transformers import AutoTokenizer

    from store.compact import write_compact
    from training.general import train_general
    from training.general_curve import ValSummaries, read_inputs
    from training.general_recipe import RECIPE

    clock = Clock(a.seconds + 120)
    a.out.mkdir(parents=True, exist_ok=True)
    inputs = read_inputs(a.inputs)
    sets = inputs["val"]
    if a.quick:
        sets = {name: {**entry, "examples": entry["examples"][:4]} for name, entry in sets.items()}
    start_steps = json.loads((a.start / "steersum.json").read_text())["steps"]
    general, snapshots = a.work / "general", a.work / "snapshots"
    curve = ValSummaries(
        sets, AutoTokenizer.from_pretrained(a.start), a.out / "curve_summaries.json", snapshots, a.every
    )
    clock.log(f"training {a.steps} steps from step {start_steps}, val summaries every {a.every}")
    train_general(
        str(a.start),
        general,
        a.steps,
        max_examples=16 if a.quick else None,
        learning_rate=a.learning_rate,
        batch_size=2 if a.quick else a.batch_size,
        max_source_length=32 if a.quick else RECIPE["max_source_length"],
        max_target_length=8 if a.quick else RECIPE["max_target_length"],
        save_steps=10**6,
        max_seconds=a.seconds,
        examples=inputs["train"],
        callbacks=[curve],
    )
    scores = {int(step): mean_rouge1(point, sets) for step, point in curve.curve.items()}
    best = max(scores, key=lambda step: (scores[step], -step))  # a tie goes to the earlier step
    clock.log("val ROUGE-1 (quick pick): " + ", ".join(f"{s}: {v:.4f}" for s, v in sorted(scores.items())))
    chosen = snapshots / f"step-{best}"
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(general / name, chosen / name)
    final = json.loads((general / "steersum.json").read_text())
    (chosen / "steersum.json").write_text(json.dumps(record_at(final, best, start_steps), indent=2))
    (a.out / "curve_pick.json").write_text(json.dumps({"scores": scores, "best": best, "start_steps": start_steps}))
    compact = write_compact(chosen, a.work / "general-best")
    clock.log(
        f"step {best} packed: " + ", ".join(p.name for p in pack(compact, a.out / "general-best.tar", split=True))
    )


if __name__ == "__main__":
    main()
