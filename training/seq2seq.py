"""The training loop every BART/T5 variant shares: prepare → tokenize → Seq2SeqTrainer → save.

It runs under ``accelerate launch`` unchanged (the Trainer is built on accelerate), so the same
command trains on one CPU or many GPUs.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments, TrainerCallback
from transformers.trainer_utils import get_last_checkpoint

from models import register_custom_code
from models.windows import SOURCE_WINDOWS, WINDOW_MODE
from variants.base import Variant, write_record
from variants.sources import data_licenses

from .base import base_weights, upstream_data_licenses
from .batches import FusedWindowsTrainer, collate, collate_windows, window_ids
from .bf16 import Bf16WeightsTrainer
from .data import load_examples

logger = logging.getLogger(__name__)
DEFAULT_NUM_BEAMS = 4  # beams at inference unless --generation-num-beams says otherwise (recorded per checkpoint)
# Variant trainers batch neighbours in source length (transformers' LengthGroupedSampler: megabatches of 50
# batches, each sorted), so little of a batch is padding: on the zoo's CCS data 99% of the source positions
# hold tokens against 72% in random batches, 1.18x the examples per second here (``python -m benchmarks
# grouping``; 1.15x the Trainer's train_runtime over 120 steps, docs/log.md). ``--train-sampling-strategy random``
# is the Trainer's default back.
SAMPLING = "group_by_length"
# Training drops the controls from this share of its examples, so the control-free input that
# classifier-free guidance contrasts with (variants/classifier_free_guidance.py) is one the model has seen; the share
# Sanchez et al. and the guidance probe on the topic model (README) trained with.
DEFAULT_CONTROL_DROPOUT = 0.15


class TimeLimit(TrainerCallback):
    """Ends training at the first step that finishes ``seconds`` after training began; the model is then
    saved as at any end (a run with a fixed time on a GPU stops where it is, with what it learned)."""

    def __init__(self, seconds: float):
        self.seconds, self.started = seconds, None

    def on_train_begin(self, args, state, control, **kwargs):
        self.started = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):
        if time.monotonic() - self.started > self.seconds:
            logger.info("time limit of %.0f s reached at step %d: stopping", self.seconds, state.global_step)
            control.should_training_stop = True


def time_limit(seconds: float | None) -> list[TrainerCallback] | None:
    """The Trainer's ``callbacks`` for an optional time limit."""
    return [TimeLimit(seconds)] if seconds else None


@dataclass
class DataArguments:
    """What every variant's trainer takes besides ``Seq2SeqTrainingArguments``."""

    train_file: str = field(metadata={"help": "training examples, JSONL (document, controls, target)"})
    eval_file: str | None = field(default=None, metadata={"help": "evaluation examples, same format"})
    base_model: str = field(default="facebook/bart-large", metadata={"help": "Hub id or local path of the base model"})
    preset: str | None = field(
        default=None,
        metadata={
            "help": "'tiny': a small random model of the same architecture; "
            "'minilm': MiniLM converted to BART once (training/base.py), "
            "used as --base-model"
        },
    )
    max_source_length: int = field(default=1024, metadata={"help": "source tokens kept (longer inputs are truncated)"})
    max_target_length: int = field(default=128, metadata={"help": "summary tokens kept in training and generated"})
    max_train_samples: int | None = field(default=None, metadata={"help": "use only the first N training examples"})
    max_eval_samples: int | None = field(
        default=64,
        metadata={
            "help": "use only the first N evaluation examples, 0 for all (default 64: the end-of-training generation is "
            "slow on CPU; evaluate a whole test set with python -m training evaluate)"
        },
    )
    eval_batch_size: int = field(default=8, metadata={"help": "batch size of the final generation-based evaluation"})
    bf16_weights: bool = field(
        default=False,
        metadata={
            "help": "forward and backward on a bf16 copy of the model, AdamW on the fp32 weights (training/bf16.py); "
            "the default on CPUs with AMX, where it is faster than --bf16 (autocast)"
        },
    )
    control_dropout: float = field(
        default=DEFAULT_CONTROL_DROPOUT,
        metadata={
            "help": "share of training examples given without their controls (the variant's control-free input), "
            "so that input is in distribution for classifier-free guidance at generation (0: none)"
        },
    )
    max_train_seconds: float | None = field(
        default=None,
        metadata={
            "help": "stop training at the first step that ends this many seconds after it began, and save (a run "
            "with a fixed time, e.g. minutes on a GPU; default: --max-steps alone decides)"
        },
    )
    source_windows: int = field(
        default=1,
        metadata={
            "help": "read a longer document in up to N windows of whole sentences, each with its controls, fused by "
            "the decoder (training/batches.py), as the trained model's generation config then says (1: cut)"
        },
    )
    frozen_encoder: bool = field(
        default=False,
        metadata={"help": "with --source-windows: the windows' encoder states without gradients (the decoder learns)"},
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "train from step 0 even if OUTPUT_DIR holds checkpoint-N folders (by default training resumes "
            "from the latest)"
        },
    )

    def __post_init__(self):
        if self.preset not in (None, "tiny", "minilm"):
            raise ValueError(f"unknown preset {self.preset!r}; allowed: tiny, minilm")
        if self.preset == "minilm":  # real weights: an ordinary --base-model from here on
            from filelock import FileLock

            from .base import default_cache, ensure_base

            # The processes of one launch (and runs side by side) convert once: the others wait, then find it done.
            with FileLock(f"{default_cache()}.lock"):
                self.base_model, self.preset = str(ensure_base("minilm")), None
        if not Path(self.train_file).is_file():
            raise ValueError(f"--train-file {self.train_file}: no such file")
        if self.max_eval_samples == 0:
            self.max_eval_samples = None  # every evaluation example
        if self.max_train_seconds is not None and self.max_train_seconds <= 0:
            raise ValueError(f"--max-train-seconds must be positive, got {self.max_train_seconds}")
        if self.source_windows < 1:
            raise ValueError(f"--source-windows must be at least 1, got {self.source_windows}")
        if not 0.0 <= self.control_dropout < 1.0:
            raise ValueError(f"--control-dropout must be in [0, 1), got {self.control_dropout}")


def cpu_bf16_supported() -> bool:
    """Whether a bf16 *copy* of the model trains faster than fp32 on this CPU (:mod:`training.bf16`): it
    needs AMX tiles (Sapphire Rapids and later). With AVX512-BF16 alone oneDNN's bf16 matmul ran at 60
    GFLOPS against MKL's 92 in fp32 on one thread of one machine; on a 2-core AMD EPYC with AVX512-BF16
    the Trainer's autocast was 1.39x faster than fp32 (:func:`cpu_autocast_bf16_supported`)."""
    try:
        return bool(torch.cpu._is_amx_tile_supported() and torch.cpu._is_avx512_bf16_supported())
    except AttributeError:  # a torch without these probes
        return False


def cpu_autocast_bf16_supported() -> bool:
    """Whether this CPU has AVX512-BF16 (bf16 dot products without AMX tiles): there bf16 *autocast* trains
    faster than fp32 (a MiniLM-BART step, batch 8, 256/96 tokens, 2 threads on a 2-core AMD EPYC: 2.14 s in
    fp32, 1.54 s under autocast, 1.39x), where a whole bf16 copy of the model gains nothing without AMX."""
    try:
        return bool(torch.cpu._is_avx512_bf16_supported())
    except AttributeError:  # a torch without the probe
        return False


def training_hardware() -> str:
    """What a model was trained on, for its record and card: "a CPU", or the GPU by name."""
    return f"a GPU ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available() else "a CPU"


PRECISION_FLAGS = {"--bf16", "--fp16", "--bf16-weights", "--bf16_weights"}


def default_precision() -> str:
    """What training computes in unless told, chosen by the device that trains: ``bf16`` (the Trainer's
    autocast, fp32 weights) on a GPU with bf16, ``bf16-weights`` (a bf16 copy, :mod:`training.bf16`) on a
    CPU with AMX, ``bf16`` autocast on a CPU with AVX512-BF16 but no AMX, else ``fp32``. Until 2026-11-25 the
    CPU alone decided, so on a GPU machine whose CPU had AMX the general summarizer trained on a bf16 copy and the variant models in fp32.
    Under a launcher of several processes an AMX CPU trains under autocast too: the copy's gradients
    would never reach DDP, so each process would train alone (:class:`training.bf16.Bf16WeightsTrainer`)."""
    from .distributed import launched_processes

    if torch.cuda.is_available():
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    if cpu_bf16_supported():
        return "bf16-weights" if (launched_processes() or 1) == 1 else "bf16"
    return "bf16" if cpu_autocast_bf16_supported() else "fp32"


def default_training_flags(argv: list[str]) -> list[str]:
    """Trainer flags for this machine, unless given: :func:`default_precision` (an explicit ``--bf16``,
    ``--fp16`` or ``--bf16-weights`` wins; ``--bf16 False`` keeps fp32) and, on a CPU, fused AdamW (one
    kernel per step; measured 1.05-1.2x per step here, the same loss: ``python -m benchmarks bf16``)."""
    given = {a.split("=")[0] for a in argv}
    on_cpu = not torch.cuda.is_available()
    flags = ["--optim", "adamw_torch_fused"] if on_cpu and "--optim" not in given else []
    if not given & PRECISION_FLAGS:
        flags += {
            "bf16": ["--bf16", "True"],
            "bf16-weights": ["--bf16-weights", "True", "--use_cpu", "True"],
            "fp32": [],
        }[default_precision()]
        if on_cpu and default_precision() == "bf16":
            flags += ["--use_cpu", "True"]  # the Trainer refuses bf16 without a GPU unless told it is on a CPU
    return flags


def cut_target(labels: list[int], max_length: int) -> list[int]:
    """A target cut to ``max_length`` tokens that keeps its last (end-of-sequence) token, so a model
    trained on long targets still learns to stop, instead of running to ``max_new_tokens``."""
    return labels if len(labels) <= max_length else labels[: max_length - 1] + labels[-1:]


def dropped_controls(n: int, share: float, seed: int) -> list[bool]:
    """Which of ``n`` examples lose their controls: each independently with probability ``share``,
    from its own seeded generator (the same examples for the same seed, whatever else draws numbers)."""
    if share <= 0:
        return [False] * n
    generator = torch.Generator().manual_seed(seed)
    return (torch.rand(n, generator=generator) < share).tolist()


def features(
    variant: Variant,
    records: list[dict],
    method: str,
    assets: Any,
    tokenizer,
    data: DataArguments,
    control_dropout: float = 0.0,
    seed: int = 0,
) -> list[dict]:
    """Tokenized training features; the inputs come from ``variant.prepare``, as at inference, or for a
    ``control_dropout`` share of them from ``variant.unconditional`` (the same document, no controls). With
    ``data.source_windows`` > 1 an input is the list of its windows' ids (:func:`training.batches.window_ids`)."""
    out = []
    for record, dropped in zip(records, dropped_controls(len(records), control_dropout, seed)):

        def make(text: str, controls=record["controls"], dropped=dropped):
            return (
                variant.unconditional(text, method, assets)
                if dropped
                else variant.prepare(text, controls, method, assets)
            )

        prepared = make(record["document"])
        labels = tokenizer(text_target=record["target"], truncation=True, max_length=data.max_source_length)
        if data.source_windows > 1:
            ids = window_ids(tokenizer, make, record["document"], data.max_source_length, data.source_windows)
        else:
            ids = tokenizer(prepared.text, truncation=True, max_length=data.max_source_length)["input_ids"]
        labels = cut_target(labels["input_ids"], data.max_target_length)
        out.append({"input_ids": ids, "labels": labels, **prepared.extra})
    return out


def latest_checkpoint(output_dir: str | Path) -> str | None:
    """The highest ``checkpoint-N`` folder in ``output_dir`` (none if the folder does not exist yet)."""
    return get_last_checkpoint(str(output_dir)) if Path(output_dir).is_dir() else None


def checkpoint_to_resume(output_dir: str, wanted: str | None, overwrite: bool) -> str | None:
    """The checkpoint training resumes from: ``wanted`` (a path), the latest ``checkpoint-N`` in
    ``output_dir`` for ``auto``, and that same latest one when nothing was said, unless ``overwrite``:
    re-running a command must not silently start again from step 0."""
    last = latest_checkpoint(output_dir)
    if wanted == "auto":
        if not last:
            raise ValueError(f"--resume-from-checkpoint: {output_dir} holds no checkpoint-N folder to resume from")
        return last
    if wanted or overwrite or not last:
        return wanted
    logger.warning(
        "%s holds %s: resuming from it (--overwrite-output-dir starts again from step 0)", output_dir, Path(last).name
    )
    return last


def train(
    variant: Variant,
    method: str,
    model,
    tokenizer,
    assets: Any,
    data: DataArguments,
    args: Seq2SeqTrainingArguments,
    record_extra: dict | None = None,
) -> Path:
    """Train, save the checkpoint (weights, tokenizer, assets, ``steersum.json``), return its path."""
    train_records = load_examples(data.train_file, variant, assets, data.max_train_samples)
    eval_records = load_examples(data.eval_file, variant, assets, data.max_eval_samples) if data.eval_file else []
    logger.info("%d training and %d evaluation examples", len(train_records), len(eval_records))
    args.remove_unused_columns = False
    if args.ddp_find_unused_parameters is None:
        # Unless told, the Trainer has DDP look for unused parameters after every backward (a walk over the
        # autograd graph). No SteerSum architecture needs it: every trainable weight takes part in every
        # forward, controls dropped or not (GSum encodes an empty signal, the topic embedding of NO_TOPIC is
        # multiplied by 0, an empty history is masked, LoRA's added-token rows stay in the lookup);
        # tests/test_distributed.py checks each one. A model that skipped a weight would make DDP fail at the
        # next step, naming it: --ddp-find-unused-parameters True turns the search back on.
        args.ddp_find_unused_parameters = False
    fused = data.source_windows > 1
    if fused and data.bf16_weights:
        raise ValueError("--source-windows trains under --bf16 (autocast), not on a --bf16-weights copy")
    trainer = (FusedWindowsTrainer if fused else Bf16WeightsTrainer if data.bf16_weights else Seq2SeqTrainer)(
        model=model,
        args=args,
        processing_class=tokenizer,
        data_collator=collate_windows(tokenizer) if fused else collate(tokenizer.pad_token_id),
        train_dataset=features(
            variant, train_records, method, assets, tokenizer, data, data.control_dropout, args.seed
        ),
        eval_dataset=features(variant, eval_records, method, assets, tokenizer, data) or None,
        callbacks=time_limit(data.max_train_seconds),
    )
    # BART's and T5's forward take **kwargs, so the Trainer would hand them `num_items_in_batch` and skip
    # dividing the loss by the accumulation steps, but their loss is a plain mean that ignores it: the
    # loss (and the gradient clipped by max_grad_norm) would grow N-fold with N accumulation steps.
    trainer.model_accepts_loss_kwargs = False
    if fused:
        trainer.frozen_encoder = data.frozen_encoder
    result = trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)
    out = Path(args.output_dir)
    register_custom_code(model)
    if getattr(model, "generation_config", None) is not None:
        # a plain model.generate(**inputs) after from_pretrained generates as the card says
        model.generation_config.num_beams = args.generation_num_beams or DEFAULT_NUM_BEAMS
        model.generation_config.max_new_tokens = data.max_target_length
        # kept as written on loading (a config marked as derived from the model config is rebuilt from it)
        model.generation_config._from_model_config = False
        if fused:  # the model reads a long document as it was trained to
            setattr(model.generation_config, SOURCE_WINDOWS, data.source_windows)
            setattr(model.generation_config, WINDOW_MODE, "fuse")
    if trainer.is_fsdp_enabled:  # sharded checkpoints while training; the folder must load with from_pretrained
        trainer.accelerator.state.fsdp_plugin.set_state_dict_type("FULL_STATE_DICT")
    trainer.save_model(out)  # weights (safetensors), config, generation config, tokenizer; written by process 0
    if trainer.is_world_process_zero():
        history = [h for h in trainer.state.log_history if "loss" in h or "eval_loss" in h]
        write_record(
            out,
            {
                "variant": variant.id,
                "method": method,
                "base_model": data.base_model if not data.preset else f"{data.preset} preset (random init)",
                "max_source_length": data.max_source_length,
                "max_target_length": data.max_target_length,
                "num_beams": args.generation_num_beams or DEFAULT_NUM_BEAMS,
                "train_file": str(data.train_file),
                "eval_file": data.eval_file,
                "train_examples": len(train_records),
                "data_licenses": data_licenses(train_records),
                "upstream_data_licenses": {} if data.preset else upstream_data_licenses(data.base_model),
                "hyperparameters": {
                    "learning_rate": args.learning_rate,
                    "per_device_train_batch_size": args.per_device_train_batch_size,
                    "gradient_accumulation_steps": args.gradient_accumulation_steps,
                    # processes that each trained on a per-device batch: an optimizer step saw
                    # world_size x per-device batch x accumulation examples
                    "world_size": args.world_size,
                    "total_train_batch_size": args.world_size
                    * (args.per_device_train_batch_size * args.gradient_accumulation_steps),
                    "num_train_epochs": args.num_train_epochs,
                    "max_steps": args.max_steps,
                    "seed": args.seed,
                    "bf16": args.bf16,
                    "fp16": args.fp16,
                    "bf16_weights": data.bf16_weights,
                    "train_sampling_strategy": args.train_sampling_strategy,
                    "control_dropout": data.control_dropout,
                    "frozen_encoder": data.frozen_encoder,
                    "optim": str(args.optim.value if hasattr(args.optim, "value") else args.optim),
                },
                "train_loss": result.training_loss,
                "loss_history": history,
                "base_weights": base_weights(data.base_model),
                "hardware": training_hardware(),
                **(record_extra or {}),
                # what happened, from the trainer state (max_steps overrides num_train_epochs; a resumed run starts late)
                "training": {"global_step": trainer.state.global_step, "epochs": trainer.state.epoch},
                "resumed_from": Path(args.resume_from_checkpoint).name if args.resume_from_checkpoint else None,
                # read as trained (the generation config says the same): windows fused, cut to none
                **({SOURCE_WINDOWS: data.source_windows, WINDOW_MODE: "fuse"} if fused else {}),
            },
        )
        (out / "training_args.json").write_text(json.dumps(args.to_dict(), indent=2, default=str) + "\n")
    return out
