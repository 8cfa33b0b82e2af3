"""``python -m training``: train a variant, evaluate a model, or build a variant's training data.

    python -m training topic --method tag --train-file F --eval-file F --output-dir DIR [--preset tiny] ...
    python -m training evaluate --model DIR_OR_HUB_ID_OR_baseline --variant topic --data F [--out report.json]
    python -m training build-data topic --out DIR

Every variant's trainer takes the same data/model flags (``DataArguments``), its own flags, and all
of ``Seq2SeqTrainingArguments`` (epochs, steps, learning rate, batch size, gradient accumulation,
fp16/bf16, seed, ``--resume-from-checkpoint``, ...). Runs unchanged under ``accelerate launch``.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

VARIANTS = ["topic", "tdsum", "entity", "ccs", "persona"]  # each has variants/<v>/train.py and variants/<v>/data.py


def train_variant(variant_id: str, argv: list[str]) -> None:
    from transformers import HfArgumentParser, Seq2SeqTrainingArguments, set_seed

    from variants import get_variant, load_summarizer

    from .data import load_examples
    from .evaluate import REPORT_FILE, evaluate, write_report
    from .seq2seq import DataArguments, train

    module = importlib.import_module(f"variants.{variant_id}.train")
    parser = HfArgumentParser((module.Arguments, DataArguments, Seq2SeqTrainingArguments),
                              prog=f"python -m training {variant_id}", description=module.__doc__)
    parser.set_defaults(**module.PAPER_DEFAULTS)
    own, data, args = parser.parse_args_into_dataclasses(argv)
    push = args.push_to_hub
    args.push_to_hub = False  # SteerSum exports its own layout and card, then pushes (hub_cards)
    set_seed(args.seed)  # before the model is built: a random preset's weights follow --seed too
    model, tokenizer, assets = module.build(own, data)
    out = train(get_variant(variant_id), own.method, model, tokenizer, assets, data, args)
    if not args.process_index == 0:
        return
    from variants.base import read_record, write_record

    record = read_record(out)
    record.update(module.save_assets(out, assets))
    write_record(out, record)
    if data.eval_file:
        summarizer = load_summarizer(out)
        records = load_examples(data.eval_file, summarizer.variant, summarizer.assets, data.max_eval_samples)
        report = evaluate(summarizer, records, data.eval_file, data.eval_batch_size)
        write_report(report, out / REPORT_FILE)
        logging.getLogger(__name__).info("evaluation: %s", report["metrics"])
    if push:
        from hub_cards.__main__ import export_and_push

        export_and_push(out, args.hub_model_id, private=args.hub_private_repo)


def evaluate_main(argv: list[str]) -> None:
    from variants import get_variant, load_summarizer

    from .data import load_examples
    from .evaluate import evaluate, write_report

    parser = argparse.ArgumentParser(prog="python -m training evaluate", description="Evaluate a summarizer on JSONL examples.")
    parser.add_argument("--model", required=True, help="checkpoint folder, Hub id, or 'baseline'")
    parser.add_argument("--variant", help="variant id (required for 'baseline')")
    parser.add_argument("--revision", help="Hub revision (branch, tag or commit) of --model")
    parser.add_argument("--data", required=True, help="JSONL examples (document, controls, target)")
    parser.add_argument("--out", default="eval_report.json", help="where to write the report")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-samples", type=int, default=None)
    parser.add_argument("--ignore-controls", action="store_true",
                        help="summarize every example with no controls (ablation: what the controls add)")
    a = parser.parse_args(argv)
    if a.model == "baseline":
        if not a.variant:
            parser.error("--variant is required with --model baseline")
        summarizer = get_variant(a.variant).baseline()
    else:
        summarizer = load_summarizer(a.model, revision=a.revision)
    records = load_examples(a.data, summarizer.variant, summarizer.assets, a.max_samples)
    report = evaluate(summarizer, records, a.data, a.batch_size, a.ignore_controls)
    write_report(report, a.out)
    print({k: v for k, v in report.items() if k != "examples"})


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    commands = [*VARIANTS, "evaluate", "build-data"]
    if not argv or argv[0] not in commands:
        print(__doc__)
        sys.exit(0 if argv and argv[0] in ("-h", "--help") else 2)
    command, rest = argv[0], argv[1:]
    if command == "evaluate":
        evaluate_main(rest)
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
