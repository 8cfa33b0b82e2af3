"""``python -m training zoo``: a trained model for every variant, from real pretrained weights, on CPU.

    python -m training zoo [--only V] [--minutes-per-model N | --max-steps N] [--batch-size 8] [--out checkpoints]
                           [--push-to-hub ORG [--hub-token T] [--private]]

Stages, each skipped when its output is complete and resumed from its newest ``checkpoint-*`` when
it was interrupted (rerun the same command):

1. ``minilm-bart/``: MiniLM converted to BART (:mod:`training.base`; seconds).
2. ``general/``: the general summarizer (:mod:`training.general`) fine-tuned from it.
3. one model per variant, each with its paper's best method, fine-tuned from ``general/`` on the
   variant's own training data (``data/<v>/``, built by ``build-data``): topic ``prepend-tag`` on
   BBC super-articles, ``tdsum`` on SciTLDR, entity GSum with the ``sentences`` signal, persona
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
from pathlib import Path

from .general_recipe import RECIPE
from .guidance import SWEEP
from .zoo_evaluation import VAL_REPORT, eval_batch_size, evaluate_model
from .zoo_models import BATCH, MODELS, Budget
from .zoo_training import build_data, measure_step_seconds, remove_checkpoints, train_variant_model

logger = logging.getLogger(__name__)
GENERAL_VAL_REPORT = "general_val_report.json"  # the general summarizer's on the val sets: what admits it to the store


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
    from .general import train_general
    from .general_evaluation import evaluate_general
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
