"""``python -m training zoo``: a trained model for every variant, from real pretrained weights, on CPU.

    python -m training zoo [--only V] [--minutes-per-model N | --max-steps N] [--batch-size 8] [--out checkpoints]
                           [--push-to-hub ORG [--hub-token T] [--private]]

Stages, each skipped when its output is complete and resumed from its newest ``checkpoint-*`` when
it was interrupted (rerun the same command):

1. ``minilm-bart/``: MiniLM converted to BART (:mod:`training.base`; seconds).
2. ``general/``: the general summarizer (:mod:`training.general`) fine-tuned from it.
3. one model per variant, each with its paper's best method, fine-tuned from ``general/`` on the
   variant's own training data (``data/<v>/``, built by ``build-data``): topic ``prepend-tag`` on
   BBC super-articles, ``tdsum`` on SciTLDR, entity GSum with ``sentences`` guidance, persona
   ``interest-prefix`` (five readers per training article), and for ccs a LoRA adapter (rank 16 on
   every attention projection) with the CCSBench prompt — on the BART general summarizer (the
   paper's base is Flan-T5; no T5 weights install offline).

The general summarizer trains for its recipe's 2,700 steps (:data:`training.general.RECIPE`; about 80
minutes here with AMX). Every variant model trains for at most ``--minutes-per-model`` (default 35):
its ``max_steps`` is that time over a training step measured on this machine at the model's own shape
(``--batch-size``, default 8, and its source / target tokens; kept in ``zoo.json``), so the zoo takes
about 80 + 5 x N minutes plus evaluation. The step is timed padded to the full lengths; real batches,
grouped by length (:data:`training.seq2seq.SAMPLING`), are shorter, so a model trains for less: about
26 of 35 minutes for ccs on a 2-core CPU in fp32.

Every choice is made on the variant's val split (:func:`evaluate_model`): its decoding rules on or off
(for a variant that has them), then the control strength γ of ``--guidance-sweep`` (default γ = 1, 1.5, 2, 3;
:func:`training.guidance.sweep`, :func:`training.guidance.pick_default`), and the store's admission. The
model, at the settings chosen there, is then evaluated once on the test split with its control sensitivity,
as ``python -m training evaluate`` reports it (shuffled controls scored against the right ones, the control
effect with intervals, Lead-k; γ = 1 beside it when γ is not 1). Reports: ``<model>/eval_report.json``
(test; ``chosen_on: val`` and the ``choices``), ``<model>/val_report.json`` and ``<model>/guidance_sweep.json``
(val), ``general/general_report.json`` (test) and ``general/general_val_report.json`` (val), and a summary
in ``zoo.json``.

On a GPU, minutes measured per step mean little (an H100 ran the general recipe at 19 steps/s): give
``--max-steps N`` instead, the same N for every variant model, and a larger ``--batch-size`` (a small
model leaves a GPU idle at batch 8); evaluation there generates in batches of 32.

Every model is trained as the store keeps it (a variant model is a ``--adapter lora`` adapter on
``general/``) and, once evaluated, goes into the store (:func:`training.storing.put`: the general
summarizer compacted to int8, each adapter beside it) when it measures better than the stored one on
val; the output says which (``--store``).

Under a launcher (``torchrun --nproc_per_node N -m training zoo --max-steps S ...``, ``--use_cpu`` is passed
on a CPU) every process trains each model on its share of the batches, and process 0 alone converts,
builds data, evaluates, stores and writes ``zoo.json`` while the others wait (:mod:`training.distributed`).

``--quick`` runs the same plumbing on a tiny budget (one step per model, short inputs, a handful of
examples): what CI runs.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from .general import RECIPE
from .guidance import SWEEP

logger = logging.getLogger(__name__)
BATCH = 8
VAL_REPORT = (
    "val_report.json"  # a variant model's evaluation on val at its chosen settings: what admits it to the store
)
GENERAL_VAL_REPORT = "general_val_report.json"  # the general summarizer's on the val sets, likewise


@dataclass(frozen=True)
class ZooModel:
    variant: str
    method: str
    build: tuple[str, ...] = ()  # build-data flags
    train: tuple[tuple[str, object], ...] = ()  # trainer fields besides the shared ones: (name, value)
    quick_build: tuple[str, ...] = ()  # build-data flags that keep --quick runs small
    learning_rate: float = 2e-4  # below the general run's 3e-4: it starts from a trained summarizer
    source_tokens: int = 256
    target_tokens: int = 96

    @property
    def name(self) -> str:
        return f"{self.variant}-{self.method}"


MODELS = [
    # The paper's best, `prepend-tag`, with LoRA on every attention and feed-forward projection (rank 16): 670
    # steps at batch 32 gave STAS effect +0.19. `prepend` with rank 8 on q/v learned nothing in 411 steps
    # (-0.01), and `prepend-tag` after 91 CPU steps at batch 8 summarized the other article (-0.21).
    ZooModel(
        "topic",
        "prepend-tag",
        ("--source", "bbc_summary"),
        (("adapter_rank", 16), ("adapter_targets", "q_proj,k_proj,v_proj,out_proj,fc1,fc2")),
        source_tokens=384,
        learning_rate=1e-3,
    ),
    ZooModel("tdsum", "tdsum", ("--source", "scitldr")),
    ZooModel("entity", "sentences", ("--sources", "cnndm_sample", "bbc_summary"), quick_build=("--limit", "6")),
    # The reader's sentences (MiniLM's pick, ~70 tokens) in front of the article. `history-prefix` (24-30 titles,
    # ~176 tokens, at 512) learned nothing in 441 CPU steps (-0.003) and needed 2,000 GPU steps for +0.017.
    # Five readers per training article: their references differ, and only the history says which is asked.
    ZooModel(
        "persona",
        "interest-prefix",
        ("--train-readers-per-article", "5"),
        source_tokens=256,
        quick_build=("--max-train-articles", "6", "--max-eval-articles", "4"),
    ),
    # Targets up to 192 tokens: at 96 no summary could reach length bins 2-4 (101-250 words, 9% of the test set).
    # Sources of 384: at 256, 52 of the first 100 test abstracts were cut. Requests past bin 0 three times, as
    # many as bin 0's: on the plain mix (73% bin 0) the adapter wrote ~33 words whatever length was asked.
    ZooModel(
        "ccs",
        "lora",
        ("--long-repeats", "3"),
        (("adapter_targets", "q_proj,k_proj,v_proj,out_proj"), ("adapter_rank", 16)),
        quick_build=("--limit", "6"),
        source_tokens=384,
        target_tokens=192,
        learning_rate=1e-3,  # LoRA's usual higher rate: only the adapter trains
    ),
]


@dataclass
class Budget:
    minutes_per_model: float
    quick: bool = False
    max_steps: int | None = None  # per model; None: the minutes over the model's measured step time
    batch_size: int = BATCH  # per variant-model step (the general summarizer keeps its recipe's)
    step_seconds: dict[str, float] = field(default_factory=dict)  # key(model) -> s, measured here
    general_steps: int = RECIPE["max_steps"]  # the general summarizer's own recipe, whatever the per-model time
    lengths: tuple[int, int] | None = None  # (source, target) tokens for every model; None: each one's own
    max_train_samples: int | None = None
    max_train_seconds: float | None = None  # per variant model: stop at this time even if steps are left
    max_eval_samples: int | None = 100
    guidance_sweep: tuple[float, ...] = SWEEP  # control strengths each variant model is measured at; () for none
    extra: dict = field(default_factory=dict)

    @classmethod
    def for_quick(cls) -> Budget:
        return cls(
            0,
            quick=True,
            max_steps=1,
            batch_size=2,
            general_steps=1,
            lengths=(32, 8),
            max_train_samples=4,
            max_eval_samples=2,
            guidance_sweep=(),
        )

    def shape(self, model: ZooModel | None) -> tuple[int, int]:
        """(source, target) tokens of a variant model, or of the general summarizer (``None``)."""
        own = (
            (RECIPE["max_source_length"], RECIPE["max_target_length"])
            if model is None
            else (model.source_tokens, model.target_tokens)
        )
        return self.lengths or own

    def batch(self, model: ZooModel | None) -> int:
        """Examples per step: ``batch_size`` for a variant model; the general recipe's 8 (not in a quick run)."""
        return RECIPE["per_device_train_batch_size"] if model is None and not self.quick else self.batch_size

    def key(self, model: ZooModel | None) -> str:
        """``batch x source x target``: the shape a training step of this model is timed at."""
        return "x".join(map(str, (self.batch(model), *self.shape(model))))

    def seconds_per_step(self, model: ZooModel | None) -> float | None:
        return self.step_seconds.get(self.key(model))

    def steps(self, model: ZooModel) -> int:
        return self.max_steps or max(1, int(self.minutes_per_model * 60 / self.seconds_per_step(model)))


def measure_step_seconds(
    base: Path, batch_size: int, source_tokens: int, target_tokens: int, repeats: int = 2
) -> float:
    """Seconds per training step of the full model at one shape (batch, token lengths; AdamW),
    in the precision training uses here (:func:`training.seq2seq.default_precision`). Persona's
    512-token sources take about twice the 256-token step: timing each model at its own shape is what
    makes ``--minutes-per-model`` minutes (a LoRA step, with fewer weights to update, is a little faster)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from variants.seq2seq import pick_device

    from .bf16 import Bf16Copy
    from .seq2seq import default_precision

    device, precision = pick_device(), default_precision()  # where and how the Trainer will compute
    model = AutoModelForSeq2SeqLM.from_pretrained(base).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)  # as the Trainer runs here
    low = Bf16Copy(model) if precision == "bf16-weights" else None
    vocabulary = model.config.vocab_size  # ids past the special tokens, inside any vocabulary (a tiny one too)
    batch = {
        "input_ids": torch.randint(vocabulary // 2, vocabulary, (batch_size, source_tokens), device=device),
        "labels": torch.randint(vocabulary // 2, vocabulary, (batch_size, target_tokens), device=device),
    }
    times = []
    for _ in range(repeats + 1):  # the first step allocates AdamW's state: not timed
        start = time.perf_counter()
        if low:
            low.step(batch, optimizer)
        else:
            with torch.autocast(device, dtype=torch.bfloat16, enabled=precision == "bf16"):  # the Trainer's --bf16
                loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        if device == "cuda":
            torch.cuda.synchronize()  # kernels run asynchronously: wait for them before reading the clock
        times.append(time.perf_counter() - start)
    return min(times[1:])


def remove_checkpoints(folder: Path) -> None:
    """A finished model's resumable states (weights + AdamW, ~0.4 GB each) are no longer needed."""
    import shutil

    for checkpoint in folder.glob("checkpoint-*"):
        shutil.rmtree(checkpoint)


def build_data(model: ZooModel, root: Path, budget: Budget) -> Path:
    from . import cli

    folder = root / "data" / model.variant
    if not (folder / "test.jsonl").is_file():
        cli.build_data(
            model.variant, ["--out", str(folder), *model.build, *(model.quick_build if budget.quick else ())]
        )
    return folder


def train_variant_model(model: ZooModel, general: Path, data: Path, out: Path, budget: Budget) -> None:
    import torch

    from . import cli
    from .seq2seq import latest_checkpoint

    steps = budget.steps(model)
    source, target = budget.shape(model)
    values = {
        "method": model.method,
        "base_model": str(general),
        "train_file": str(data / "train.jsonl"),
        "output_dir": str(out),
        "max_steps": steps,
        "per_device_train_batch_size": budget.batch(model),
        "gradient_accumulation_steps": 1,
        "learning_rate": model.learning_rate,
        "warmup_steps": min(50, steps // 10),
        "max_source_length": source,
        "max_target_length": target,
        "save_steps": 100,
        "save_total_limit": 2,
        "logging_steps": 10,
        "report_to": "none",
        "generation_num_beams": 2,
        "dataloader_pin_memory": False,
        "adapter": "lora",
        "max_train_samples": budget.max_train_samples,
        "max_train_seconds": budget.max_train_seconds,
        "resume_from_checkpoint": str(resume) if (resume := latest_checkpoint(out)) else None,
        **dict(model.train),
    }
    if not torch.cuda.is_available():  # as train_general: the processes of a launch train together over gloo
        values["use_cpu"] = True
    if model.variant == "persona":
        values["readers"] = str(data / "persona_readers.json")
    cli.train_variant(model.variant, *cli.training_arguments(model.variant, **values))


def eval_batch_size() -> int:
    """Sources per ``generate`` call: 8 on a CPU, as the Space batches; 32 on a GPU, which runs them in
    parallel (a batch's padding can change a beam's scores slightly, so GPU and CPU reports may differ)."""
    from variants.seq2seq import pick_device

    return 32 if pick_device() == "cuda" else 8


def declares_constraints(variant) -> bool:
    """Whether ``variant`` has decoding rules to turn on (it overrides :meth:`variants.base.Variant.constraints`)."""
    from variants.base import Variant

    return type(variant).constraints is not Variant.constraints


def sweep_row(guidance: float, report: dict) -> dict:
    """A report as a row of :func:`training.guidance.sweep`'s table: what :func:`training.guidance.pick_default` reads."""
    sensitivity = report["control_sensitivity"]
    return {
        "guidance": guidance,
        "metrics": report["metrics"],
        "effect": sensitivity["effect"],
        "verdict": sensitivity["verdict"],
    }


def pick_constraints(off: dict, on: dict, control_metrics, lower_is_better) -> bool:
    """Whether a model generates with its decoding rules, from its reports without (``off``) and with them
    (``on``) on the same val examples at γ = 1, by the rule that picks γ (:func:`training.guidance.pick_default`)
    with the rules in the place of a stronger γ: taken only when they make the lead control metric stand,
    do not lower its effect, raise the lower end of its interval and cost at most 0.02 ROUGE-1 (a tie keeps
    them off)."""
    from .guidance import pick_default

    swept = {
        "control_metrics": list(control_metrics),
        "lower_is_better": sorted(lower_is_better),
        "sweep": [sweep_row(1.0, off), sweep_row(2.0, on)],  # 2.0 stands for "rules on"
    }
    return pick_default(swept) != 1.0


def evaluate_model(model_dir: Path, data: Path, budget: Budget) -> dict:
    """Every choice on the val split, then one report on test.

    On ``data/val.jsonl``: the decoding rules on or off (:func:`pick_constraints`, for a variant that has
    them), then the control strength γ at each of ``budget.guidance_sweep`` (:func:`training.guidance.sweep`
    under the chosen rules; :func:`training.guidance.pick_default` picks). Both become the model's defaults.
    Then the model, as it will be served, is evaluated once on ``data/test.jsonl`` with its control
    sensitivity (:mod:`training.sensitivity`; γ = 1 beside it when γ is not 1): its ``eval_report.json``,
    where the card reads it. Every report and the record say the split each choice was made on
    (``chosen_on``, ``choices``); ``val_report.json`` (the val evaluation at the chosen settings) is what
    the store admits the model on (:func:`training.storing.put`). Test never chooses: a γ or a rule picked
    where it is reported would report the luckiest of several tries."""
    from variants import load_summarizer
    from variants.base import read_record, write_record
    from variants.seq2seq import save_default_guidance

    from .data import load_examples
    from .evaluate import REPORT_FILE, write_report
    from .guidance import SWEEP_FILE, evaluate_guided, pick_default, sweep
    from .sensitivity import evaluate_with_sensitivity

    summarizer = load_summarizer(model_dir)
    variant, batch = summarizer.variant, eval_batch_size()
    val_file, test_file = data / "val.jsonl", data / "test.jsonl"
    val = load_examples(val_file, variant, summarizer.assets, budget.max_eval_samples)
    chosen = {"chosen_on": "val", "data": f"{data.name}/val.jsonl", "n_examples": len(val)}  # no machine path
    plain = summarizer.settings.but(guidance=1.0)
    summarizer.settings = plain.but(constraints=False)
    chosen_report = evaluate_with_sensitivity(summarizer, val, str(val_file), batch)
    choices, constraints = {}, False
    if declares_constraints(variant):
        summarizer.settings = plain.but(constraints=True)
        on = evaluate_with_sensitivity(summarizer, val, str(val_file), batch)
        evaluation = variant.evaluation
        constraints = pick_constraints(chosen_report, on, evaluation.control_metrics, evaluation.lower_is_better)
        choices["constraints"] = {"value": constraints, **chosen}
        chosen_report = on if constraints else chosen_report
    summarizer.settings = plain.but(constraints=constraints)
    guidance = 1.0
    if budget.guidance_sweep:  # the same val examples at each γ, γ = 1 being the report above
        swept, reports = sweep(
            summarizer, val, str(val_file), budget.guidance_sweep, batch, known={1.0: chosen_report}
        )
        swept["default_guidance"] = guidance = pick_default(swept)
        swept.update(split="val", chosen_on="val")
        write_report(swept, model_dir / SWEEP_FILE)
        choices["guidance"] = {"value": guidance, "swept": list(budget.guidance_sweep), **chosen}
        chosen_report = reports[guidance]
    if guidance != 1.0:  # the model generates at its default from now on
        save_default_guidance(model_dir, guidance)
    write_report({**chosen_report, "split": "val", "chosen_on": "val", "choices": choices}, model_dir / VAL_REPORT)
    write_record(
        model_dir, {**read_record(model_dir), "constraints": constraints, "chosen_on": "val", "choices": choices}
    )

    summarizer.settings = plain.but(constraints=constraints, guidance=guidance)
    test = load_examples(test_file, variant, summarizer.assets, budget.max_eval_samples)
    report = evaluate_guided(summarizer, test, str(test_file), batch)  # reported once, at the chosen settings
    report.update(split="test", chosen_on="val", choices=choices)
    write_report(report, model_dir / REPORT_FILE)
    return {
        "metrics": report["metrics"],
        "control_effect": report["control_sensitivity"]["effect"],
        "chosen_on": "val",
        "choices": choices,
        **({"generation": report["generation"]} if "generation" in report else {}),
    }


def store_model(
    folder: Path, report_file: Path, val_report_file: Path, index: Path | None, quick: bool = False
) -> None:
    """Put an evaluated model into the store at ``index`` (none: not stored), saying what happened: admitted
    on its val report, stored with its test report; a ``quick`` run stores its one-step models whatever their
    effect, so that its store's sizes are checked."""
    if index is None:
        return
    from .storing import put

    index.parent.mkdir(parents=True, exist_ok=True)
    _, sentence = put(
        folder,
        json.loads(report_file.read_text()),
        report_file,
        index=index,
        require_effect=not quick,
        validation=json.loads(val_report_file.read_text()),
    )
    print(f"store: {sentence}", flush=True)


def run_zoo(root: Path, only: list[str] | None, budget: Budget, store_index: Path | None = None) -> dict:
    from .base import ensure_base
    from .distributed import checked_state
    from .general import evaluate_general, train_general
    from .seq2seq import default_precision, latest_checkpoint

    launch = checked_state()  # the launch's processes (one without a launcher); see the docstring
    if launch.num_processes > 1 and budget.max_steps is None:
        raise SystemExit(
            "--minutes-per-model times a step in each process, and processes that train different "
            "numbers of steps wait on each other forever: with several processes give --max-steps N"
        )
    root.mkdir(parents=True, exist_ok=True)
    state_file = root / "zoo.json"
    state = json.loads(state_file.read_text()) if state_file.is_file() else {"models": {}}
    models = [m for m in MODELS if not only or m.variant in only or m.name in only]
    unknown = sorted(set(only or ()) - {m.variant for m in MODELS} - {m.name for m in MODELS} - {"general"})
    if unknown:
        raise SystemExit(
            f"--only: unknown {', '.join(unknown)}; choose from general, {', '.join(m.variant for m in MODELS)}"
        )
    if only == ["general"]:
        models = []

    with launch.main_process_first():  # the others find it converted
        base = ensure_base("minilm", root / "minilm-bart")
    general = root / "general"
    todo = [m for m in models if not (root / m.name / "eval_report.json").is_file()]
    general_todo = not (general / "general_report.json").is_file()
    general_steps = budget.general_steps if not (general / "steersum.json").is_file() else 0
    general_shape = budget.shape(None)
    if budget.max_steps is None:  # time a step at every shape still to train (an older zoo.json kept one number)
        precision = default_precision()  # as measure_step_seconds and training run
        measured = state.get("step_seconds") if state.get("step_precision") == precision else None
        budget.step_seconds = dict(measured) if isinstance(measured, dict) else {}
        state["step_precision"] = precision
        for model in todo + ([None] if general_steps else []):
            if budget.key(model) not in budget.step_seconds:
                budget.step_seconds[budget.key(model)] = measure_step_seconds(
                    base, budget.batch(model), *budget.shape(model)
                )
        state["step_seconds"] = budget.step_seconds
    seconds = general_steps * (budget.seconds_per_step(None) or 0)
    seconds += sum(budget.steps(m) * (budget.seconds_per_step(m) or 0) for m in todo)
    per = ", ".join(
        f"{m.name} {budget.steps(m)} steps"
        + (f" at {budget.seconds_per_step(m):.1f} s" if budget.step_seconds else "")
        for m in todo
    )
    launch.print(
        f"zoo: {len(todo)} variant model(s)"
        + (f" ({per})" if todo else "")
        + (f" and the general summarizer ({general_steps} steps)" if general_steps else "")
        + f" to train in {root}, "
        + (f"about {seconds / 60:.0f} min of training" if budget.step_seconds else "steps not timed (--max-steps)")
        + ", plus evaluation "
        f"on up to {budget.max_eval_samples} test examples per model",
        flush=True,
    )

    stages = [("general", None)] + [(m.name, m) for m in models]
    for index, (name, model) in enumerate(stages, start=1):
        started = time.time()
        launch.wait_for_everyone()  # what process 0 wrote in the last stage decides this one for every process
        launch.print(f"[{index}/{len(stages)}] {name}: ", end="", flush=True)
        if model is None:
            if general_todo:
                if not (general / "steersum.json").is_file():
                    launch.print(f"training {budget.general_steps} steps", flush=True)
                    train_general(
                        str(base),
                        general,
                        budget.general_steps,
                        budget.max_train_samples,
                        batch_size=budget.batch(None),
                        max_source_length=general_shape[0],
                        max_target_length=general_shape[1],
                    )
                    if launch.is_main_process:
                        remove_checkpoints(general)
                if launch.is_main_process:
                    beams = RECIPE["num_beams"]
                    report = evaluate_general(general, budget.max_eval_samples, eval_batch_size(), beams)
                    (general / "general_report.json").write_text(json.dumps(report, indent=2) + "\n")
                    val = evaluate_general(general, budget.max_eval_samples, eval_batch_size(), beams, split="val")
                    (general / GENERAL_VAL_REPORT).write_text(json.dumps(val, indent=2) + "\n")
                    shown = ("rouge1", "ratio_to_lead", "verbatim_fact_share")
                    state["models"]["general"] = {k: {m: v[m] for m in shown} for k, v in report["sets"].items()}
                    store_model(general, general / "general_report.json", general / GENERAL_VAL_REPORT, store_index)
            else:
                launch.print("done already", flush=True)
                continue
        else:
            out = root / model.name
            if (out / "eval_report.json").is_file():
                launch.print("done already", flush=True)
                continue
            with launch.main_process_first():  # the others find the data built
                data = build_data(model, root, budget)
            if not (out / "steersum.json").is_file():
                resuming = " (resuming)" if latest_checkpoint(out) else ""
                launch.print(f"training {budget.steps(model)} steps{resuming}", flush=True)
                train_variant_model(model, general, data, out, budget)
                if launch.is_main_process:
                    remove_checkpoints(out)
            if launch.is_main_process:
                state["models"][model.name] = evaluate_model(out, data, budget)
                store_model(out, out / "eval_report.json", out / VAL_REPORT, store_index, budget.quick)
        if launch.is_main_process:
            state_file.write_text(json.dumps(state, indent=2) + "\n")
        launch.print(f"[{index}/{len(stages)}] {name}: finished in {(time.time() - started) / 60:.1f} min", flush=True)
    launch.wait_for_everyone()
    return state


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training zoo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", nargs="+", help="variants (or model names) to build; 'general' for the general one only"
    )
    parser.add_argument(
        "--minutes-per-model",
        type=float,
        default=35.0,
        help="at most this much training per model, in minutes (default 35)",
    )
    parser.add_argument("--out", default="checkpoints", help="root folder of the zoo (default: checkpoints)")
    parser.add_argument(
        "--max-steps",
        type=int,
        help="training steps per variant model, instead of "
        "--minutes-per-model (the general summarizer keeps its recipe's steps)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=BATCH,
        help=f"examples per variant-model step (default "
        f"{BATCH}; on a GPU a larger batch takes about as long a step: more epochs in the same time)",
    )
    parser.add_argument("--max-eval-samples", type=int, default=100, help="test examples per model (default 100)")
    parser.add_argument(
        "--guidance-sweep",
        type=float,
        nargs="*",
        default=list(SWEEP),
        metavar="G",
        help="control strengths each variant model is evaluated at besides its default (default: "
        + " ".join(f"{g:g}" for g in SWEEP)
        + "; none given: no sweep), in guidance_sweep.json",
    )
    parser.add_argument("--quick", action="store_true", help="one step per model, tiny inputs: a plumbing check")
    parser.add_argument(
        "--store",
        default=None,
        help="the store index each evaluated model goes into when it measures "
        "better than the stored one (default: the committed store/index.json; with --quick, "
        "OUT/store/index.json, so a plumbing check never touches the committed store); 'none': not stored",
    )
    parser.add_argument(
        "--push-to-hub",
        metavar="ORG",
        help="then publish under ORG: the general summarizer, the "
        "five variant models and the Space, its catalog pinned to their revisions (hub_cards.zoo)",
    )
    parser.add_argument(
        "--hub-token",
        help="a Hub token with write access (default: HF_TOKEN or the login cache); "
        "checked before training starts, never printed",
    )
    parser.add_argument("--private", action="store_true", help="create the Hub repos private")
    a = parser.parse_args(argv)
    for flag, value in (("--max-steps", a.max_steps), ("--batch-size", a.batch_size)):
        if value is not None and value < 1:
            raise SystemExit(f"{flag} {value}: must be 1 or more")
    budget = (
        Budget.for_quick()
        if a.quick
        else Budget(
            a.minutes_per_model,
            max_steps=a.max_steps,
            batch_size=a.batch_size,
            max_eval_samples=a.max_eval_samples,
            guidance_sweep=tuple(a.guidance_sweep),
        )
    )
    import store

    index = (
        None
        if a.store == "none"
        else Path(a.store)
        if a.store
        else (Path(a.out) / "store" / "index.json" if a.quick else store.INDEX)
    )
    api = None
    if a.push_to_hub:
        from hub_cards.push import PushError, hub_api

        try:
            api = hub_api(a.hub_token)  # fails now, not after hours of training
        except PushError as err:
            raise SystemExit(f"error: {err}") from None
    state = run_zoo(Path(a.out), a.only, budget, index)
    from accelerate import PartialState

    if not PartialState().is_main_process:  # process 0 alone reports and publishes
        return
    print(json.dumps(state["models"], indent=2))
    if api is not None:
        from hub_cards.zoo import publish_zoo

        try:
            published = publish_zoo(
                Path(a.out), a.push_to_hub, [(m.name, m.variant) for m in MODELS], private=a.private, api=api
            )
        except ValueError as err:  # ExportError, PushError: the zoo is trained, the message says what to do
            raise SystemExit(
                f"error: {err} (the models are in {a.out}; publish them with python -m training zoo "
                f"--out {a.out} --push-to-hub {a.push_to_hub}, which trains nothing more)"
            ) from None
        print(json.dumps(published, indent=2))
