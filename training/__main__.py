"""``python -m training``: train a variant, evaluate a model, or build a variant's training data.

    python -m training topic --method tag --train-file F --eval-file F --output-dir DIR [--preset tiny] ...
    python -m training evaluate --model DIR_OR_HUB_ID_OR_baseline --variant topic --data F [--out report.json]
        (a checkpoint folder's report goes into the folder, where ``python -m hub_cards export`` reads it;
        ``--guidance G`` generates at control strength G and reports γ = 1 beside it, ``--constraints``
        enforces length bins and keywords, ``--save-default-guidance`` keeps G as the model's default)
    python -m training build-data topic --out DIR
    python -m training base minilm --out DIR      (a BART checkpoint warm-started from MiniLM; training/base.py)
    python -m training general --preset minilm --output-dir DIR   (the general summarizer; training/general.py)
    python -m training zoo [--only V] [--minutes-per-model N] [--out checkpoints]   (every model; training/zoo.py)

Every variant's trainer takes the same data/model flags (``DataArguments``), its own flags, and all
of ``Seq2SeqTrainingArguments`` (epochs, steps, learning rate, batch size, gradient accumulation,
fp16/bf16, seed, ``--resume-from-checkpoint [PATH|auto]``, ...). Runs unchanged under ``torchrun`` and
``accelerate launch`` (:mod:`training.distributed`: N processes, process 0 writes; a launch that asked for
N and got one stops with the command that works).
Re-running a command on an output folder that holds ``checkpoint-N`` folders resumes from the
latest (``--overwrite-output-dir`` starts again from step 0). ``--push-to-hub`` checks the token
(``--hub-token``, else ``HF_TOKEN`` or the login cache) with the Hub before training starts; the
token is kept out of the checkpoint (``training_args.bin``).
``--adapter lora`` trains a peft adapter on ``--base-model`` instead of every weight (:mod:`training.adapter`;
the store's format, the zoo's default). On a CPU with AMX (bf16 matmuls faster than fp32) forward and backward run on a bf16 copy of the model
(``--bf16-weights``, :mod:`training.bf16`) unless ``--bf16-weights False``, ``--bf16`` or ``--fp16`` is given;
on one with AVX512-BF16 and no AMX, under bf16 autocast (``--bf16``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path

VARIANTS = ["topic", "tdsum", "entity", "ccs", "persona"]  # each has variants/<v>/train.py and variants/<v>/data.py


def train_variant(variant_id: str, argv: list[str]) -> None:
    from transformers import HfArgumentParser, Seq2SeqTrainingArguments, set_seed

    from variants import get_variant, load_summarizer

    from . import adapter as adapters
    from .data import load_examples
    from .distributed import check_processes
    from .evaluate import REPORT_FILE, write_report
    from .sensitivity import evaluate_with_sensitivity
    from .seq2seq import SAMPLING, DataArguments, checkpoint_to_resume, default_training_flags, train

    module = importlib.import_module(f"variants.{variant_id}.train")
    parser = HfArgumentParser(
        (module.Arguments, DataArguments, adapters.AdapterArguments, Seq2SeqTrainingArguments),
        prog=f"python -m training {variant_id}",
        description=module.__doc__,
    )
    parser.set_defaults(train_sampling_strategy=SAMPLING, **module.PAPER_DEFAULTS)
    own, data, adapter, args = parser.parse_args_into_dataclasses(
        bare_resume_means_auto(argv) + default_training_flags(argv)
    )
    push, token = args.push_to_hub, args.hub_token
    # SteerSum exports its own layout and card, then pushes (hub_cards); the token stays out of the
    # pickled training_args.bin the Trainer writes into every checkpoint.
    args.push_to_hub, args.hub_token = False, None
    try:
        if push:
            from hub_cards.push import hub_api

            token = hub_api(token).token  # fails now, not after hours of training
        args.resume_from_checkpoint = checkpoint_to_resume(
            args.output_dir, args.resume_from_checkpoint, data.overwrite_output_dir
        )
        check_processes(args.world_size)  # sets up the processes' group: a launch that got fewer stops here
    except ValueError as err:  # PushError, nothing to resume, or LaunchError
        sys.exit(f"error: {err}")
    set_seed(args.seed)  # before the model is built: a random preset's weights follow --seed too
    model, tokenizer, assets = module.build(own, data)
    try:
        model, adapter_facts = adapters.wrap(model, adapter, data.base_model, data.preset)
    except ValueError as err:
        sys.exit(f"error: {err}")
    out = train(
        get_variant(variant_id),
        own.method,
        model,
        tokenizer,
        assets,
        data,
        args,
        {"adapter": adapter_facts} if adapter_facts else None,
    )
    if args.process_index != 0:  # process 0 alone writes the record, the adapter, the report and pushes
        return
    from variants.base import read_record, write_record

    if adapter_facts:
        adapters.save(model, out, data.base_model)
    record = read_record(out)
    record.update(module.save_assets(out, assets))
    write_record(out, record)
    if data.eval_file:
        summarizer = load_summarizer(out)
        records = load_examples(data.eval_file, summarizer.variant, summarizer.assets, data.max_eval_samples)
        report = evaluate_with_sensitivity(summarizer, records, data.eval_file, data.eval_batch_size)
        write_report(report, out / REPORT_FILE)
        logging.getLogger(__name__).info("evaluation: %s", report["metrics"])
    if push:
        from hub_cards.__main__ import export_and_push

        try:
            export_and_push(out, args.hub_model_id, private=args.hub_private_repo, token=token)
        except ValueError as err:  # ExportError, PushError: the checkpoint is saved, the message says what to do
            sys.exit(f"error: {err} (the checkpoint is in {out}; push it with python -m hub_cards)")


def bare_resume_means_auto(argv: list[str]) -> list[str]:
    """``--resume-from-checkpoint`` given without a path means ``auto`` (the latest checkpoint)."""
    flags = ("--resume-from-checkpoint", "--resume_from_checkpoint")
    out = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg in flags and (i + 1 == len(argv) or argv[i + 1].startswith("--")):
            out.append("auto")
    return out


def evaluate_main(argv: list[str]) -> None:
    from variants import RECORD_FILE, get_variant, load_summarizer
    from variants.seq2seq import DTYPES, save_default_guidance

    from .data import load_examples
    from .evaluate import REPORT_FILE, evaluate, write_report
    from .guidance import SWEEP, SWEEP_FILE, evaluate_guided, sweep, with_settings
    from .sensitivity import effect_summary, sweep_summary

    parser = argparse.ArgumentParser(
        prog="python -m training evaluate", description="Evaluate a summarizer on JSONL examples."
    )
    parser.add_argument("--model", required=True, help="checkpoint folder, Hub id, or 'baseline'")
    parser.add_argument("--variant", help="variant id (required for 'baseline')")
    parser.add_argument("--revision", help="Hub revision (branch, tag or commit) of --model")
    parser.add_argument("--data", required=True, help="JSONL examples (document, controls, target)")
    parser.add_argument(
        "--out",
        help="where to write the report (default: eval_report.json in the checkpoint "
        "folder, where the model card reads it; ./eval_report.json for a Hub id "
        "or a baseline, or with --ignore-controls)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="sources per generate call (default: the model's generation settings, 8)",
    )
    parser.add_argument("--max-samples", type=int, default=None)
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default=None,
        help="CPU generation: bf16 autocast (auto: where the CPU has bf16 instructions), an int8 "
        "copy of the Linear layers, or fp32 (default: the model's generation settings)",
    )
    parser.add_argument(
        "--guidance",
        type=float,
        default=None,
        help="control strength γ of classifier-free guidance, 1 (plain generation) to 10 (default: "
        "the model's, from its generation config); at γ != 1 the report also holds γ = 1",
    )
    parser.add_argument(
        "--constraints",
        action="store_true",
        default=None,
        help="enforce controls that are a number or a list (length bin, keywords) in the decoder",
    )
    parser.add_argument(
        "--guidance-sweep",
        type=float,
        nargs="*",
        default=None,
        metavar="G",
        help="evaluate at each control strength G (none given: "
        + " ".join(f"{g:g}" for g in SWEEP)
        + ") and write the effect against γ to guidance_sweep.json (beside the checkpoint's "
        "report; --out overrides), which the leaderboard plots",
    )
    parser.add_argument(
        "--save-default-guidance",
        action="store_true",
        help="after evaluating, keep --guidance as the checkpoint folder's default (generation config)",
    )
    parser.add_argument(
        "--ignore-controls",
        action="store_true",
        help="summarize every example with no controls (ablation: what the controls add)",
    )
    parser.add_argument(
        "--no-control-sensitivity",
        dest="control_sensitivity",
        action="store_false",
        help="skip the report's control_sensitivity: the same system given shuffled controls "
        "(doubles generation time), a Lead-k row at its output length and the control effect",
    )
    a = parser.parse_args(argv)
    from .distributed import launched_processes

    if (launched_processes() or 1) > 1:  # N copies would each evaluate every example and write one report
        parser.error(
            "evaluating one model runs in one process; python -m benchmarks leaderboard shares systems "
            "out across processes"
        )
    if a.model == "baseline":
        if not a.variant:
            parser.error("--variant is required with --model baseline")
        summarizer = get_variant(a.variant).baseline()
    else:
        summarizer = load_summarizer(a.model, revision=a.revision)
    if a.dtype and hasattr(summarizer, "settings"):
        summarizer.settings = summarizer.settings.but(dtype=a.dtype)
    local = Path(a.model).is_dir() and (Path(a.model) / RECORD_FILE).is_file()
    if a.save_default_guidance and (a.guidance is None or not local):
        parser.error("--save-default-guidance needs --guidance and a local checkpoint folder as --model")
    try:
        with_settings(summarizer, a.guidance, a.constraints)
    except ValueError as err:
        parser.error(str(err))
    records = load_examples(a.data, summarizer.variant, summarizer.assets, a.max_samples)
    if a.guidance_sweep is not None:
        if a.guidance is not None or a.ignore_controls or a.save_default_guidance:
            parser.error(
                "--guidance-sweep sets γ itself: leave out --guidance, --save-default-guidance and --ignore-controls"
            )
        try:
            report, _ = sweep(summarizer, records, a.data, a.guidance_sweep or SWEEP, a.batch_size)
        except ValueError as err:
            parser.error(str(err))
        out = write_report(report, a.out or (Path(a.model) / SWEEP_FILE if local else SWEEP_FILE))
        print(sweep_summary(report))
        print(f"report: {out}")
        return
    if a.ignore_controls:
        report = evaluate(summarizer, records, a.data, a.batch_size, ignore_controls=True)
    else:
        report = evaluate_guided(summarizer, records, a.data, a.batch_size, a.control_sensitivity)
    if a.save_default_guidance:
        save_default_guidance(a.model, a.guidance)
    out = a.out or (Path(a.model) / REPORT_FILE if local and not a.ignore_controls else REPORT_FILE)
    write_report(report, out)
    print({k: v for k, v in report.items() if k not in ("examples", "control_sensitivity", "at_guidance_1")})
    if "control_sensitivity" in report:
        print(effect_summary(report["control_sensitivity"]))
    if report.get("at_guidance_1", {}).get("control_sensitivity"):
        print("at guidance 1 (plain generation):\n" + effect_summary(report["at_guidance_1"]["control_sensitivity"]))
    print(f"report: {out}")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    commands = [*VARIANTS, "evaluate", "build-data", "base", "general", "zoo"]
    if not argv or argv[0] not in commands:
        print(__doc__)
        sys.exit(0 if argv and argv[0] in ("-h", "--help") else 2)
    command, rest = argv[0], argv[1:]
    if command == "evaluate":
        evaluate_main(rest)
    elif command == "base":
        from .base import main as base_main

        base_main(rest)
    elif command == "general":
        from .general import main as general_main

        general_main(rest)
    elif command == "zoo":
        from .zoo import main as zoo_main

        zoo_main(rest)
    elif command == "build-data":
        if not rest or rest[0] not in VARIANTS:
            sys.exit(f"usage: python -m training build-data {{{','.join(VARIANTS)}}} --out DIR")
        from metrics.io import DataError

        try:
            importlib.import_module(f"variants.{rest[0]}.data").main(rest[1:])
        except DataError as err:  # no data (offline, no mirror) or a bad line: one line, not a traceback
            sys.exit(f"error: {err}")
    else:
        train_variant(command, rest)


if __name__ == "__main__":
    main()
