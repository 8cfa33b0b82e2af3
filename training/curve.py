"""A variant model's learning curve on val, beside its baseline: where the model's line flattens below the
baseline's, more steps on this data will not close the gap, and the limit is measured rather than guessed.

    python -m training.curve tdsum --steps 100 200 400 --val DATA/val.jsonl --out OUT [--max-samples 200] \\
        -- --method tdsum --adapter lora --base-model GENERAL --train-file DATA/train.jsonl ...

The flags after ``--`` are the variant's training flags (``python -m training tdsum --help``) without
``--output-dir`` and ``--max-steps``. One training run is stopped at each of ``--steps``: a stage trains
``OUT/run`` up to its step count and ends with the checkpoint the Trainer writes at its last step, from which
the next stage resumes. The learning rate is constant after its warm-up (``constant_with_warmup`` unless the
flags name a schedule), so the model a stage ends with is the one a single longer run holds at that step.
Each stage's model, saved as every trained model is, is copied to ``OUT/step-N`` and evaluated on val by
:func:`training.evaluate.evaluate` as the model alone (γ = 1, no decoding rules: what training gave); the
variant's baseline is evaluated once on the same examples. ``OUT/curve.json`` (with the variant, val file,
sample count and training flags that made it) is rewritten at each point, so a run cut short keeps its points
and the same command goes on from the last (another one is refused); ``OUT/curve.png`` plots them.
Choose with it on val; report the chosen model once on test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

CURVE_FILE = "curve.json"
RESERVED = ("--output-dir", "--output_dir", "--max-steps", "--max_steps")


def stage_flags(flags: list[str], run: Path, steps: int) -> list[str]:
    """The training flags of the stage that ends at ``steps``: the run's folder and step count, a checkpoint
    at its last step, and a constant learning rate unless the flags name a schedule."""
    given = [f for f in flags if f.split("=")[0] in RESERVED]
    if given:
        raise ValueError(f"{', '.join(given)}: set by the curve (--out and --steps); leave it out of the flags")
    schedule = any(f.split("=")[0] in ("--lr-scheduler-type", "--lr_scheduler_type") for f in flags)
    return [
        *flags,
        *(() if schedule else ("--lr-scheduler-type", "constant_with_warmup")),
        "--output-dir",
        str(run),
        "--max-steps",
        str(steps),
        "--save-strategy",
        "steps",
    ]


def keep_model(run: Path, out: Path) -> Path:
    """A copy of the stage's model (the run's folder without its ``checkpoint-N`` folders)."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(run, out, ignore=lambda folder, names: [n for n in names if n.startswith("checkpoint-")])
    return out


def scores(summarizer, val: Path, max_samples: int | None) -> dict:
    """The summarizer's val metrics (the floats of :func:`training.evaluate.evaluate`'s report)."""
    from .data import load_examples
    from .evaluate import evaluate

    records = load_examples(val, summarizer.variant, summarizer.assets, max_samples)
    report = evaluate(summarizer, records, str(val))
    return {"n": len(records), **{k: v for k, v in report["metrics"].items() if isinstance(v, (int, float))}}


def run_curve(
    variant_id: str,
    steps: list[int],
    val: Path,
    out: Path,
    flags: list[str],
    max_samples: int | None,
    metrics: tuple[str, ...] = (),
) -> dict:
    """Train and evaluate each stage not in ``OUT/curve.json`` yet; the curve. ``metrics`` (the ones plotted)
    are checked against the baseline's report before any training."""
    from variants import get_variant, load_summarizer

    from .cli import train_command
    from .distributed import launched_processes

    if not val.is_file():
        raise ValueError(f"--val {val}: no such file")
    if sorted(set(steps)) != steps or steps[0] < 1:
        raise ValueError(f"--steps must rise from 1 up, got {' '.join(map(str, steps))}")
    if (launched_processes() or 1) > 1:  # each process would evaluate every point while the others train on
        raise ValueError("a curve runs in one process: its stages train and evaluate in turn")
    out.mkdir(parents=True, exist_ok=True)
    path = out / CURVE_FILE
    made_by = {"variant": variant_id, "val": str(val), "max_samples": max_samples, "flags": flags}
    curve = json.loads(path.read_text()) if path.is_file() else made_by
    changed = [key for key, value in made_by.items() if curve.get(key) != value]
    if changed:  # its points would mix two runs
        raise ValueError(f"{path} was made with other {', '.join(changed)}: give another --out, or the same ones")
    points = curve.setdefault("points", {})
    if "baseline" not in curve:
        curve["baseline"] = scores(get_variant(variant_id).baseline(), val, max_samples)
        path.write_text(json.dumps(curve, indent=1))
    missing = [m for m in metrics if m not in curve["baseline"]]
    if missing:
        raise ValueError(f"--metrics {', '.join(missing)}: not in the report; it has {', '.join(curve['baseline'])}")
    for n in steps:
        if str(n) in points:
            continue
        trained = train_command(variant_id, stage_flags(flags, out / "run", n))
        summarizer = load_summarizer(keep_model(trained, out / f"step-{n}"))
        summarizer.settings = summarizer.settings.alone()
        points[str(n)] = scores(summarizer, val, max_samples)
        path.write_text(json.dumps(curve, indent=1))
        print(f"step {n}: " + ", ".join(f"{k} {v:.4f}" for k, v in points[str(n)].items() if k != "n"), flush=True)
    return curve


def plot_curve(curve: dict, metrics: list[str], out: Path) -> None:
    """Each metric of the model against steps, the baseline's dashed at its level."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = sorted(curve["points"], key=int)
    figure, axis = plt.subplots(figsize=(7, 4))
    for i, metric in enumerate(metrics):
        color = f"C{i}"
        axis.plot(
            [int(s) for s in steps],
            [curve["points"][s][metric] for s in steps],
            "o-",
            color=color,
            label=f"{metric}: model alone",
        )
        axis.axhline(curve["baseline"][metric], linestyle="--", color=color, label=f"{metric}: baseline")
    axis.set_xlabel("training steps")
    axis.set_ylabel(f"val ({curve['variant']}, n={curve['baseline']['n']})")
    axis.legend(fontsize=8)
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    own, flags = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    from .cli import VARIANTS

    parser = argparse.ArgumentParser(prog="python -m training.curve", description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=VARIANTS)
    parser.add_argument("--steps", type=int, nargs="+", required=True, help="the step counts evaluated, rising")
    parser.add_argument("--val", type=Path, required=True, help="val examples (JSONL), as build-data writes them")
    parser.add_argument("--out", type=Path, required=True, help="the run, each step's model and curve.json")
    parser.add_argument("--max-samples", type=int, default=200, help="val examples evaluated (default 200)")
    parser.add_argument(
        "--metrics", nargs="+", default=["rouge1"], help="metrics plotted (default rouge1; any of the report's)"
    )
    a = parser.parse_args(own)
    try:
        curve = run_curve(a.variant, a.steps, a.val, a.out, flags, a.max_samples, tuple(a.metrics))
    except ValueError as err:
        sys.exit(f"error: {err}")
    plot_curve(curve, a.metrics, a.out / "curve.png")


if __name__ == "__main__":
    main()
