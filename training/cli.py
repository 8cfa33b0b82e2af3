"""What ``python -m training`` runs, as functions: train a variant model, evaluate a model, build a variant's data.

:mod:`training.__main__` dispatches a command line here; :mod:`training.zoo` calls the same functions with
values (:func:`training_arguments`), so a zoo run and a command line train through one path and the
zoo never goes back through the command line. Flags and what each does: ``python -m training --help``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path
from typing import Any

VARIANTS = ["topic", "tdsum", "entity", "ccs", "persona"]  # each has variants/<v>/train.py and variants/<v>/data.py


def training_parser(variant_id: str):
    """The variant's trainer flags: its own ``Arguments``, :class:`training.seq2seq.DataArguments`, the adapter
    flags and ``Seq2SeqTrainingArguments``, with the paper's defaults and the length-grouped sampling."""
    from transformers import HfArgumentParser, Seq2SeqTrainingArguments

    from . import adapter as adapters
    from .seq2seq import SAMPLING, DataArguments

    module = importlib.import_module(f"variants.{variant_id}.train")
    parser = HfArgumentParser(
        (module.Arguments, DataArguments, adapters.AdapterArguments, Seq2SeqTrainingArguments),
        prog=f"python -m training {variant_id}",
        description=module.__doc__,
    )
    parser.set_defaults(train_sampling_strategy=SAMPLING, **module.PAPER_DEFAULTS)
    return parser


def parse_training_flags(variant_id: str, argv: list[str]) -> tuple:
    """``(own, data, adapter, args)`` from a command line, with this machine's precision and optimizer
    unless the command line names them (:func:`training.seq2seq.default_training_flags`)."""
    from .seq2seq import default_training_flags

    return tuple(
        training_parser(variant_id).parse_args_into_dataclasses(
            bare_resume_means_auto(argv) + default_training_flags(argv)
        )
    )


def training_arguments(variant_id: str, **values: Any) -> tuple:
    """``(own, data, adapter, args)`` from field values (the dataclasses' names: ``train_file``,
    ``adapter_rank``, ``max_steps``, ...), with the same defaults a command line gets: the variant's paper
    defaults, length-grouped sampling, and this machine's precision and optimizer unless ``values`` set them."""
    from .seq2seq import SAMPLING, default_training_flags

    module = importlib.import_module(f"variants.{variant_id}.train")
    flags = default_training_flags([f"--{name}" for name in values])  # pairs: --optim adamw_torch_fused, --bf16 True
    machine = {
        flag.lstrip("-").replace("-", "_"): {"True": True, "False": False}.get(value, value)
        for flag, value in zip(flags[::2], flags[1::2])
    }
    fields = {"train_sampling_strategy": SAMPLING, **module.PAPER_DEFAULTS, **machine, **values}
    return tuple(training_parser(variant_id).parse_dict(fields))


def train_command(variant_id: str, argv: list[str]) -> Path | None:
    """``python -m training <variant> ...``."""
    return train_variant(variant_id, *parse_training_flags(variant_id, argv))


def train_variant(variant_id: str, own, data, adapter, args) -> Path | None:
    """Train the variant's model (``own``: its ``Arguments``; ``data``, ``adapter``, ``args``: the shared
    flags), then on process 0 save its adapter, record and assets, evaluate it on ``data.eval_file`` and
    push it when asked; the output folder (``None`` on the other processes)."""
    from transformers import set_seed

    from variants import get_variant, load_summarizer

    from . import adapter as adapters
    from .data import load_examples
    from .distributed import check_processes
    from .evaluate import REPORT_FILE, write_report
    from .sensitivity import evaluate_with_sensitivity
    from .seq2seq import checkpoint_to_resume, train

    module = importlib.import_module(f"variants.{variant_id}.train")
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
    model, tokenizer, assets = module.build(own, data, adapter)  # adapter: the LoRA flags, for a build that makes one
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
        return None
    from variants.base import read_record, write_record

    if adapter_facts:
        adapters.save(model, out, data.base_model)
    record = read_record(out)
    record.update(module.save_assets(out, assets))
    if adapter_facts and adapter_facts.get("continued_from"):  # the steps of the adapter it trained on, and its own
        record["steps"] = (adapter_facts["continued_from"]["steps"] or 0) + record["training"]["global_step"]
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
    return out


def bare_resume_means_auto(argv: list[str]) -> list[str]:
    """``--resume-from-checkpoint`` given without a path means ``auto`` (the latest checkpoint)."""
    flags = ("--resume-from-checkpoint", "--resume_from_checkpoint")
    out = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg in flags and (i + 1 == len(argv) or argv[i + 1].startswith("--")):
            out.append("auto")
    return out


def evaluate_command(argv: list[str]) -> None:
    """``python -m training evaluate``: a summarizer's report on JSONL examples (see :mod:`training.__main__`)."""
    from variants import RECORD_FILE, get_variant, load_summarizer
    from variants.seq2seq import DTYPES, save_default_strength

    from .data import load_examples
    from .evaluate import REPORT_FILE, evaluate, write_report
    from .guidance import SWEEP, SWEEP_FILE, evaluate_guided, sweep, with_settings
    from .sensitivity_text import effect_summary, sweep_summary

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
        save_default_strength(a.model, a.guidance)
        split = record_choice(a.model, "guidance", a.guidance, a.data, len(records))
        if split != "val":
            logging.getLogger(__name__).warning(
                "γ %g kept as the default from an evaluation on %s: choose settings on a val split and "
                "report them once on test (docs/evaluation.md)",
                a.guidance,
                a.data,
            )
    out = a.out or (Path(a.model) / REPORT_FILE if local and not a.ignore_controls else REPORT_FILE)
    write_report(report, out)
    print({k: v for k, v in report.items() if k not in ("examples", "control_sensitivity", "at_guidance_1")})
    if "control_sensitivity" in report:
        print(effect_summary(report["control_sensitivity"]))
    if report.get("at_guidance_1", {}).get("control_sensitivity"):
        print("at guidance 1 (plain generation):\n" + effect_summary(report["at_guidance_1"]["control_sensitivity"]))
    print(f"report: {out}")


def split_of(data_file: str | Path) -> str | None:
    """The split a data file holds, by its name (``val.jsonl`` -> ``val``), as every variant's build-data names them."""
    stem = Path(data_file).stem
    return stem if stem in ("train", "val", "test") else None


def record_choice(folder: str | Path, name: str, value: Any, data_file: str | Path, n_examples: int) -> str | None:
    """Keep in a checkpoint's record that setting ``name`` was chosen as ``value`` on ``data_file``'s examples
    (``choices``, and ``chosen_on``: the split, or ``mixed`` when its choices come from several); the split."""
    from variants.base import read_record, write_record

    split = split_of(data_file)
    record = read_record(folder)
    choice = {
        "value": value,
        "chosen_on": split,
        "data": "/".join(Path(data_file).parts[-2:]),
        "n_examples": n_examples,
    }
    choices = {**(record.get("choices") or {}), name: choice}
    splits = {c.get("chosen_on") for c in choices.values()}
    write_record(folder, {**record, "choices": choices, "chosen_on": splits.pop() if len(splits) == 1 else "mixed"})
    return split


def build_data(variant_id: str, argv: list[str]) -> None:
    """``python -m training build-data <variant> --out DIR ...``: the variant's data builder
    (``variants/<v>/data.py``) with its own flags; a missing source or a bad line stops with one line."""
    from metrics.io import DataError

    if variant_id not in VARIANTS:
        sys.exit(f"usage: python -m training build-data {{{','.join(VARIANTS)}}} --out DIR")
    try:
        importlib.import_module(f"variants.{variant_id}.data").main(argv)
    except DataError as err:  # no data (offline, no mirror) or a bad line: one line, not a traceback
        sys.exit(f"error: {err}")
