"""``python -m training general``: the general summarizer every variant model starts from.

    python -m training general --base-model DIR_OR_--preset minilm --output-dir checkpoints/general [--max-steps N]
    python -m training general --evaluate checkpoints/general [--out report.json]

A plain BART fine-tuned on the bundled *training* splits only: ``bbc_summary`` train (extractive
BBC summaries), the ``xsum`` sample's training part (the same seeded 80% that ``build-data tdsum
--source xsum`` trains on, so its test part stays unseen), ``cnndm_sample`` train and ``scitldr``
train (capped), with bbc_summary repeated ``--bbc-repeat`` times (default 3) so that BBC news is about
three quarters of what the model sees: its goal is ROUGE on bbc_summary test against Lead-3, and copying
names and numbers right is learned from extractive targets. No controls: variant models are fine-tuned
from it with their own methods (``python -m training zoo``). Defaults are the recipe measured on a 2-core CPU
(2026-11-25, docs/log.md): 256 source / 128 target tokens, batch 8 (random batches: its sources nearly all fill 256
tokens, so grouping them by length would save ~4% of the padding), learning rate 3e-4 decaying
linearly, in this machine's precision (:func:`training.seq2seq.default_precision`: a bf16 copy on a CPU
with AMX, autocast on a GPU with bf16). Training is resumable: it saves every ``--save-steps`` (keeping 2) and a
rerun continues from the newest ``checkpoint-*``.

``--evaluate`` scores a checkpoint against the extractive leads on the same articles: ROUGE-1 on the
``bbc_summary`` test split vs Lead-3, on the xsum test part vs Lead-1, and the share of the
summaries' names and numbers that appear verbatim in their source (a faithfulness proxy;
compared case-insensitively because the MiniLM vocabulary is uncased: :func:`summary_facts`).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from .general_evaluation import evaluate_general
from .general_recipe import BBC_REPEAT, RECIPE, tokenize, training_examples

logger = logging.getLogger(__name__)


def train_general(
    base_model: str,
    output_dir: str | Path,
    max_steps: int,
    max_examples: int | None = None,
    learning_rate: float = RECIPE["learning_rate"],
    batch_size: int = RECIPE["per_device_train_batch_size"],
    max_source_length: int = RECIPE["max_source_length"],
    max_target_length: int = RECIPE["max_target_length"],
    save_steps: int = RECIPE["save_steps"],
    precision: str | None = None,
    seed: int = 0,
    bbc_repeat: int = BBC_REPEAT,
    max_seconds: float | None = None,
    examples: list[dict] | None = None,
    callbacks: list | None = None,
) -> Path:
    """Fine-tune ``base_model`` on :func:`training_examples`; resumes from the newest checkpoint-* in
    ``output_dir``. Writes the final model, tokenizer and ``steersum.json`` (what it was trained on);
    ``max_seconds``: stop earlier once training has run that long (:class:`training.seq2seq.TimeLimit`).
    ``examples``: the recipe's mix read beforehand (:func:`training.general_curve.read_inputs`, for a machine
    without the data's loaders); ``callbacks``: more Trainer callbacks (the learning curve's).

    A rerun with a larger ``max_steps`` continues a finished model (its linear schedule is stretched to the
    new end); the record keeps one phase per run, with the steps and data mix of each. ``precision``:
    ``fp32``, ``bf16`` (autocast) or ``bf16-weights``; by default this machine's (:func:`default_precision`)."""
    import torch
    from transformers import AutoTokenizer, Seq2SeqTrainer, Seq2SeqTrainingArguments, set_seed

    from store.adapters import load_base
    from variants.base import write_record
    from variants.sources import data_licenses

    from .base import base_weights, upstream_data_licenses
    from .batches import collate
    from .bf16 import Bf16WeightsTrainer
    from .distributed import check_processes
    from .seq2seq import default_precision, latest_checkpoint, time_limit, training_hardware

    set_seed(seed)
    precision = precision or default_precision()
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    model = load_base(Path(base_model))  # a compact base (the stored general summarizer) is dequantized
    model.generation_config.no_repeat_ngram_size = RECIPE[
        "no_repeat_ngram_size"
    ]  # saved with it: every use decodes alike
    examples = (examples or training_examples(bbc_repeat=bbc_repeat))[:max_examples]
    args = Seq2SeqTrainingArguments(
        output_dir=str(output_dir),
        max_steps=max_steps,
        learning_rate=learning_rate,
        lr_scheduler_type="linear",
        warmup_steps=min(RECIPE["warmup_steps"], max_steps // 10),
        weight_decay=RECIPE["weight_decay"],
        per_device_train_batch_size=batch_size,
        save_steps=save_steps,
        save_total_limit=2,
        logging_steps=10,
        use_cpu=not torch.cuda.is_available(),
        optim="adamw_torch_fused",
        seed=seed,
        report_to=[],
        dataloader_num_workers=0,
        remove_unused_columns=False,
        disable_tqdm=True,
        bf16=precision == "bf16",
        ddp_find_unused_parameters=False,
    )  # BART uses every weight in every step (training.seq2seq.train)
    check_processes(args.world_size)  # a launch that asked for N processes and got fewer stops here
    trainer = (Bf16WeightsTrainer if precision == "bf16-weights" else Seq2SeqTrainer)(
        model=model,
        args=args,
        processing_class=tokenizer,
        data_collator=collate(tokenizer.pad_token_id),
        train_dataset=tokenize(tokenizer, examples, max_source_length, max_target_length),
        callbacks=(time_limit(max_seconds) or []) + (callbacks or []),
    )
    trainer.model_accepts_loss_kwargs = False  # see training.seq2seq.train
    resume = latest_checkpoint(output_dir)
    if resume:
        logger.info("resuming from %s", resume)
    out = Path(output_dir)
    # A model continued from a trained general summarizer (the stored one) counts on from its steps.
    base_phases = previous_phases(Path(base_model))
    phases = previous_phases(out) or list(base_phases)
    result = trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(out)
    counts: dict[str, int] = {}
    for e in examples:
        counts[e["dataset"]] = counts.get(e["dataset"], 0) + 1
    first_step = phases[-1]["to_step"] if phases else 0
    last_step = (base_phases[-1]["to_step"] if base_phases else 0) + trainer.state.global_step
    phases.append(
        {
            "from_step": first_step,
            "to_step": last_step,
            "train_examples": counts,
            "batch_size": batch_size,
            "hardware": training_hardware(),
            "world_size": args.world_size,
        }
    )
    if not trainer.is_world_process_zero():  # process 0 alone writes the record
        return out
    write_record(
        out,
        {
            "variant": "general",
            "method": "plain",
            "base_model": base_model,
            "base_weights": base_weights(base_model),
            "max_source_length": max_source_length,
            "max_target_length": max_target_length,
            "num_beams": RECIPE["num_beams"],
            "no_repeat_ngram_size": RECIPE["no_repeat_ngram_size"],
            "train_examples": counts,
            "steps": last_step,
            "phases": phases,
            "data_licenses": data_licenses(examples),
            "upstream_data_licenses": upstream_data_licenses(base_model),
            "hyperparameters": {
                "learning_rate": learning_rate,
                "per_device_train_batch_size": batch_size,
                "world_size": args.world_size,
                "total_train_batch_size": args.world_size * batch_size,
                "max_steps": max_steps,
                "seed": seed,
                "bf16": precision == "bf16",
                "bf16_weights": precision == "bf16-weights",
            },
            "train_loss": result.training_loss,
            "hardware": training_hardware(),
            "loss_history": [h for h in trainer.state.log_history if "loss" in h],
        },
    )
    return out


def previous_phases(out: Path) -> list[dict]:
    """The phases of the finished general summarizer in ``out`` (one, from its record, if it predates phases)."""
    record_file = out / "steersum.json"
    if not record_file.is_file():
        return []
    record = json.loads(record_file.read_text())
    if record.get("variant") != "general":  # a base that is no general summarizer has no phases to count on from
        return []
    return record.get("phases") or [
        {"from_step": 0, "to_step": record["steps"], "train_examples": record["train_examples"]}
    ]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training general", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base-model", help="a BART checkpoint folder (e.g. from `python -m training base minilm`)")
    parser.add_argument("--preset", choices=["minilm"], help="convert MiniLM into a cache folder once and use it")
    parser.add_argument("--output-dir", help="where the model and its checkpoint-* go")
    parser.add_argument("--max-steps", type=int, default=RECIPE["max_steps"])
    parser.add_argument("--max-examples", type=int, default=None, help="train on only the first N examples")
    parser.add_argument("--learning-rate", type=float, default=RECIPE["learning_rate"])
    parser.add_argument("--batch-size", type=int, default=RECIPE["per_device_train_batch_size"])
    parser.add_argument("--max-source-length", type=int, default=RECIPE["max_source_length"])
    parser.add_argument("--max-target-length", type=int, default=RECIPE["max_target_length"])
    parser.add_argument("--save-steps", type=int, default=RECIPE["save_steps"])
    parser.add_argument(
        "--bbc-repeat",
        type=int,
        default=BBC_REPEAT,
        help=f"times bbc_summary train is repeated (default {BBC_REPEAT})",
    )
    parser.add_argument(
        "--no-bf16", action="store_true", help="train in fp32 even where bf16 is the default (AMX CPUs, GPUs)"
    )
    parser.add_argument("--evaluate", metavar="DIR", help="evaluate this checkpoint instead of training")
    parser.add_argument("--max-eval-examples", type=int, default=None)
    parser.add_argument("--num-beams", type=int, default=None)
    parser.add_argument(
        "--no-repeat-ngram-size",
        type=int,
        default=None,
        help="--evaluate: block repeated n-grams of this size (0: allow; default: the model's setting)",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        default=None,
        help="--evaluate: summary length cap (default: the target length it was trained with)",
    )
    parser.add_argument(
        "--split",
        choices=["test", "val"],
        default="test",
        help="--evaluate: the test sets (the goals), or the val ones (to choose generation settings)",
    )
    parser.add_argument("--out", help="--evaluate: where to write the report (JSON)")
    a = parser.parse_args(argv)
    if a.evaluate:
        report = evaluate_general(
            a.evaluate,
            a.max_eval_examples,
            num_beams=a.num_beams,
            no_repeat_ngram_size=a.no_repeat_ngram_size,
            max_new_tokens=a.max_new_tokens,
            split=a.split,
        )
        text = json.dumps(report, indent=2)
        if a.out:
            Path(a.out).write_text(text + "\n")
        print(text)
        return
    if not a.output_dir or not (a.base_model or a.preset):
        parser.error("training needs --output-dir and --base-model or --preset minilm")
    from .base import ensure_base

    base = str(ensure_base(a.preset)) if a.preset else a.base_model
    train_general(
        base,
        a.output_dir,
        a.max_steps,
        a.max_examples,
        a.learning_rate,
        a.batch_size,
        a.max_source_length,
        a.max_target_length,
        a.save_steps,
        precision="fp32" if a.no_bf16 else None,
        bbc_repeat=a.bbc_repeat,
    )
