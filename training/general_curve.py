"""The general summarizer's learning curve: its val summaries every N training steps, scored here against
the references and against Lead-k at the summaries' own length, so that where more steps stop helping is
measured rather than guessed.

    python -m training.general_curve prepare --out curve-inputs.json.xz
    python scripts/general_curve_on_gpu.py --inputs curve-inputs.json.xz --out OUT ...   (on a GPU)
    python -m training.general_curve score --summaries OUT/curve_summaries.json --out docs/general_curve.json \\
        --plot docs/general_curve.png

``prepare`` reads the recipe's training mix and the val sets (:mod:`training.general_recipe`) into one file,
so the machine that trains needs no data loader and no copy of the datasets. Training writes the summaries of
each evaluated step (:class:`ValSummaries`); ``score`` gives each step ROUGE-1 and ROUGE-2 per set, Lead-k's
ROUGE-1 at the same length, the share of names and numbers found verbatim in the document and the text
scores (:func:`metrics.quality.quality`), all on the summaries as served (postprocessed). The test sets are
never read: the curve chooses, test reports once.
"""

from __future__ import annotations

import argparse
import json
import lzma
import time
from pathlib import Path

from transformers import TrainerCallback

from .general_evaluation import summarize
from .general_recipe import RECIPE, evaluation_sets, training_examples


def val_sets() -> dict[str, dict]:
    """The recipe's val sets, each with its examples and the number of lead sentences of its baseline."""
    return {name: {"examples": examples, "lead": n} for name, (examples, n) in evaluation_sets("val").items()}


def write_inputs(out: str | Path) -> Path:
    """The recipe's training mix and the val sets, as xz-compressed JSON."""
    out = Path(out)
    with lzma.open(out, "wt", encoding="utf-8") as f:
        json.dump({"train": training_examples(), "val": val_sets()}, f)
    return out


def read_inputs(path: str | Path) -> dict:
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


class ValSummaries(TrainerCallback):
    """Every ``every`` steps (and before the first and after the last), the model summarizes each val set
    as it is served (the recipe's beams, length and repeat bar) into ``out`` (JSON: step -> set -> summaries,
    rewritten each time, so a run cut short keeps its points) and is saved to ``snapshots/step-N``."""

    def __init__(self, sets: dict, tokenizer, out: Path, snapshots: Path, every: int, batch_size: int = 64):
        self.sets, self.tokenizer, self.out, self.snapshots = sets, tokenizer, Path(out), Path(snapshots)
        self.every, self.batch_size = every, batch_size
        self.curve: dict[str, dict] = json.loads(self.out.read_text()) if self.out.is_file() else {}

    def add_point(self, model, step: int) -> None:
        if str(step) in self.curve:
            return
        started = time.monotonic()
        was_training = model.training
        model.eval()
        point = {}
        for name, entry in self.sets.items():
            point[name] = summarize(
                model,
                self.tokenizer,
                [e["document"] for e in entry["examples"]],
                self.batch_size,
                RECIPE["max_source_length"],
                num_beams=RECIPE["num_beams"],
                max_new_tokens=RECIPE["max_target_length"],
                no_repeat_ngram_size=RECIPE["no_repeat_ngram_size"],
                use_cache=True,
            )
        model.train(was_training)
        model.save_pretrained(self.snapshots / f"step-{step}")
        self.curve[str(step)] = point
        self.out.write_text(json.dumps(self.curve))
        print(f"step {step}: val summaries in {time.monotonic() - started:.1f} s", flush=True)

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.add_point(model, state.global_step)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step % self.every == 0:
            self.add_point(model, state.global_step)

    def on_train_end(self, args, state, control, model=None, **kwargs):
        self.add_point(model, state.global_step)


def score_curve(summaries: dict, sets: dict, start_step: int = 0) -> list[dict]:
    """One row per evaluated step: per val set, ROUGE-1/2, Lead-k's ROUGE-1 at the summaries' mean length,
    the verbatim share of names and numbers and the text scores (ending a sentence, a repeated 3-gram, a
    name or number the document lacks), all of the summaries as the Space serves them (postprocessed)."""
    from metrics.quality import quality, verbatim_share
    from metrics.rouge import rouge
    from variants.postprocess import postprocess

    from .lead_k import lead_words

    rows = []
    for step in sorted(summaries, key=int):
        row = {"step": start_step + int(step), "sets": {}}
        for name, generated in summaries[step].items():
            examples = sets[name]["examples"]
            documents = [e["document"] for e in examples]
            texts = [postprocess(t, d) for t, d in zip(generated, documents)]  # as the Space serves them
            references = [[e["target"]] for e in examples]
            scores = rouge(texts, references, allow_empty=True)["corpus"]
            words = max(1, round(sum(len(t.split()) for t in texts) / len(texts)))
            lead_k = rouge([lead_words(d, words) for d in documents], references)["corpus"]
            share, _ = verbatim_share(texts, documents)
            flags = quality(texts, documents)
            row["sets"][name] = {
                "rouge1": scores["rouge1"],
                "rouge2": scores["rouge2"],
                "summary_words": words,
                "lead_at_summary_length_rouge1": lead_k["rouge1"],
                "verbatim_fact_share": share,
                **{
                    key: sum(f[key] for f in flags) / len(flags)
                    for key in ("ends_sentence", "repeated_trigram", "has_unsupported")
                },
            }
        rows.append(row)
    return rows


def plot_curve(rows: list[dict], out: str | Path) -> None:
    """ROUGE-1 of each val set against steps, with Lead-k at the same length dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    for i, name in enumerate(rows[0]["sets"]):
        steps = [r["step"] for r in rows]
        color = f"C{i}"
        axis.plot(steps, [r["sets"][name]["rouge1"] for r in rows], "o-", color=color, label=f"{name}: model")
        axis.plot(
            steps,
            [r["sets"][name]["lead_at_summary_length_rouge1"] for r in rows],
            "--",
            color=color,
            label=f"{name}: Lead-k at its length",
        )
    axis.set_xlabel("training steps")
    axis.set_ylabel("ROUGE-1 (val)")
    axis.legend(fontsize=8)
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prepare = commands.add_parser("prepare", help="the training mix and val sets in one file")
    prepare.add_argument("--out", type=Path, required=True)
    score = commands.add_parser("score", help="score a run's val summaries")
    score.add_argument("--summaries", type=Path, required=True, help="curve_summaries.json of a run")
    score.add_argument("--start-step", type=int, default=0, help="the steps the run's start model had")
    score.add_argument("--out", type=Path, required=True, help="the scored curve (JSON)")
    score.add_argument("--plot", type=Path, help="and its plot (PNG)")
    a = parser.parse_args(argv)
    if a.command == "prepare":
        print(write_inputs(a.out))
        return
    rows = score_curve(json.loads(a.summaries.read_text()), val_sets(), a.start_step)
    a.out.write_text(json.dumps(rows, indent=1))
    if a.plot:
        plot_curve(rows, a.plot)
    for row in rows:
        print(
            row["step"],
            " | ".join(
                f"{name}: R-1 {s['rouge1']:.3f} (Lead-k {s['lead_at_summary_length_rouge1']:.3f}, "
                f"{s['summary_words']} words, ends {s['ends_sentence']:.2f})"
                for name, s in row["sets"].items()
            ),
        )


if __name__ == "__main__":
    main()
