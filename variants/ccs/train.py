"""``python -m training ccs``: Flan-T5 with a LoRA adapter for compositional control (CCSBench).

    python -m training build-data ccs --out data/ccs
    accelerate launch -m training ccs --base-model google/flan-t5-xxl --train-file data/ccs/train.jsonl \\
        --eval-file data/ccs/val.jsonl --output-dir checkpoints/ccs-lora --bf16 --activation-checkpointing [--merge]

Paper settings (App. A.2): LoRA on Flan-T5-XXL (Table 4, B2; XL is B1), learning rate 1e-4, at most
20 epochs. The paper does not give the LoRA rank, alpha or dropout; they are the flags every trainer
takes (``--adapter-rank``, ``--adapter-alpha``, ``--adapter-dropout``, ``--adapter-targets``), and their
defaults here (rank 8, alpha 32, dropout 0.1 on T5's ``q`` and ``v`` projections) are peft's own seq2seq
example settings. The older ``--lora-r``, ``--lora-alpha``, ``--lora-dropout`` and
``--lora-target-modules`` still work, with a warning, and map to them. Smaller
bases: ``google/flan-t5-large`` (780M) or ``google/flan-t5-xl`` (3B). ``--method prompt`` fine-tunes
every weight instead (the paper's C1, hard prompt on Flan-T5-Large).

The checkpoint is the adapter alone (``adapter_config.json`` + ``adapter_model.safetensors``),
loadable with ``AutoPeftModelForSeq2SeqLM``; ``--merge`` also writes ``merged/``, the base with the
adapter folded in, a plain transformers model. ``--preset tiny`` trains on a small random T5, which
is saved in ``tiny-preset-base/`` beside the adapter (an adapter needs its base).
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, T5ForConditionalGeneration

from store.adapters import ADAPTER_CONFIG

from ..base import read_record, write_record
from ..presets import tiny_t5_config, tiny_t5_tokenizer
from . import CCSVariant

PAPER_DEFAULTS = {
    "base_model": "google/flan-t5-xxl",
    "learning_rate": 1e-4,
    "num_train_epochs": 20,
    "max_target_length": 320,  # bin 4 summaries run past 200 words, about 300 T5 tokens
    # LoRA as peft's seq2seq example sets it (the paper gives none), on the flags every trainer takes
    "adapter_rank": 8,
    "adapter_alpha": 32,
    "adapter_dropout": 0.1,
    "adapter_targets": "q,v",
}
# The retired ccs LoRA flags, each the name of the generic flag it now sets (hidden from --help).
DEPRECATED_LORA_FLAGS = {
    "lora_r": "adapter_rank",
    "lora_alpha": "adapter_alpha",
    "lora_dropout": "adapter_dropout",
    "lora_target_modules": "adapter_targets",
}
TINY_BASE = "tiny-preset-base"  # the name says "preset": the model card then calls it a test model
MERGED = "merged"
BART_PROJECTIONS = {"q_proj", "k_proj", "v_proj", "out_proj"}  # a BART base (e.g. the zoo's MiniLM-initialised one)
log = logging.getLogger(__name__)


@dataclass
class Arguments:
    method: str = field(default="lora", metadata={"help": "lora (adapter) | prompt (every weight trained)"})
    merge: bool = field(default=False, metadata={"help": f"also write the merged model to OUTPUT_DIR/{MERGED}"})
    # deprecated: DEPRECATED_LORA_FLAGS maps each to the generic flag (None: not given)
    lora_r: int | None = field(default=None, metadata={"help": argparse.SUPPRESS})
    lora_alpha: int | None = field(default=None, metadata={"help": argparse.SUPPRESS})
    lora_dropout: float | None = field(default=None, metadata={"help": argparse.SUPPRESS})
    lora_target_modules: str | None = field(default=None, metadata={"help": argparse.SUPPRESS})

    def __post_init__(self):
        CCSVariant().check_method(self.method)
        if self.merge and self.method != "lora":
            raise ValueError("--merge needs --method lora (a prompt model has no adapter to merge)")


@dataclass(frozen=True)
class LoraSettings:
    """The adapter of ``--method lora``: the generic adapter flags (:mod:`training.adapter`), with ccs's
    defaults, and any deprecated ``--lora-*`` flag given in their place."""

    rank: int = PAPER_DEFAULTS["adapter_rank"]
    alpha: int = PAPER_DEFAULTS["adapter_alpha"]
    dropout: float = PAPER_DEFAULTS["adapter_dropout"]
    target_modules: str = PAPER_DEFAULTS["adapter_targets"]

    def __post_init__(self):
        if self.rank < 1 or self.alpha < 1:
            raise ValueError(f"--adapter-rank and --adapter-alpha must be positive, got {self.rank} and {self.alpha}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"--adapter-dropout must be in [0, 1), got {self.dropout}")
        unknown = sorted(set(self.targets) - {"q", "k", "v", "o"} - BART_PROJECTIONS)
        if unknown or not self.targets:
            raise ValueError(
                f"--adapter-targets: unknown {unknown}; allowed: q, k, v, o (T5) or "
                f"{', '.join(sorted(BART_PROJECTIONS))} (BART)"
            )

    @property
    def targets(self) -> list[str]:
        return [name.strip() for name in self.target_modules.split(",") if name.strip()]

    @classmethod
    def of(cls, own: Arguments, adapter=None) -> LoraSettings:
        """The settings from the trainer's adapter flags (``adapter``: :class:`training.adapter.AdapterArguments`;
        None: ccs's defaults), each deprecated ``--lora-*`` flag of ``own`` taking the place of its new flag."""
        given = {new: getattr(adapter, new) for new in DEPRECATED_LORA_FLAGS.values()} if adapter else {}
        for old, new in DEPRECATED_LORA_FLAGS.items():
            if getattr(own, old) is not None:
                flag = "--" + new.replace("_", "-")
                warnings.warn(
                    f"--{old.replace('_', '-')} is deprecated: use {flag} (it now sets {flag})",
                    FutureWarning,
                    stacklevel=2,
                )
                given[new] = getattr(own, old)
        names = dict(zip(DEPRECATED_LORA_FLAGS.values(), ("rank", "alpha", "dropout", "target_modules")))
        return cls(**{names[new]: value for new, value in given.items()})


@dataclass
class Run:
    """What ``save_assets`` needs from ``build``. The CCS variant itself carries no assets (its
    prompt needs none), so this rides in the trainer's assets slot and the variant ignores it."""

    own: Arguments
    model: torch.nn.Module
    tiny_base: torch.nn.Module | None = None  # the random base, kept untouched for saving
    parameters: dict | None = None
    lora: LoraSettings | None = None


def lora_config(lora: LoraSettings):
    from peft import LoraConfig, TaskType

    return LoraConfig(
        task_type=TaskType.SEQ_2_SEQ_LM,
        r=lora.rank,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.targets,
    )


def build(own: Arguments, data, adapter=None):
    """Base model and tokenizer (the tiny preset or ``--base-model``), wrapped in a LoRA adapter for
    ``lora`` (:class:`LoraSettings` from the ``adapter`` flags): every base weight frozen, only the adapter
    trained."""
    if data.preset == "tiny":
        tokenizer = tiny_t5_tokenizer()
        torch.manual_seed(0)  # the random base is saved with the adapter; the seed makes it repeatable
        model = T5ForConditionalGeneration(tiny_t5_config(tokenizer))
    else:
        tokenizer = AutoTokenizer.from_pretrained(data.base_model)
        model = AutoModelForSeq2SeqLM.from_pretrained(data.base_model)
    run = Run(own, model, lora=LoraSettings.of(own, adapter))
    if own.method == "lora":
        from peft import get_peft_model

        run.tiny_base = copy.deepcopy(model) if data.preset == "tiny" else None
        run.model = model = get_peft_model(model, lora_config(run.lora))
    trainable, total = (
        sum(p.numel() for p in model.parameters() if p.requires_grad),
        sum(p.numel() for p in model.parameters()),
    )
    run.parameters = {"trainable": trainable, "total": total, "trainable_share": trainable / total}
    log.info("trainable parameters: %d of %d (%.4f%%)", trainable, total, 100 * trainable / total)
    print(f"trainable parameters: {trainable:,} of {total:,} ({100 * trainable / total:.4f}%)")
    return model, tokenizer, run


def save_assets(out: Path, run: Run) -> dict:
    """Finish the checkpoint: the tiny base beside the adapter (named in ``adapter_config.json``),
    ``merged/`` with ``--merge``; returns what ``steersum.json`` adds."""
    out = Path(out)
    extra: dict = {"parameters": run.parameters}
    if run.own.method != "lora":
        return extra
    extra["lora"] = {
        "r": run.lora.rank,
        "alpha": run.lora.alpha,
        "dropout": run.lora.dropout,
        "target_modules": run.lora.targets,
    }
    adapter_file = out / ADAPTER_CONFIG
    adapter = json.loads(adapter_file.read_text(encoding="utf-8"))
    if run.tiny_base is not None:
        run.tiny_base.save_pretrained(out / TINY_BASE)
        adapter["base_model_name_or_path"] = str((out / TINY_BASE).resolve())
    elif adapter.get("base_model_name_or_path") and Path(adapter["base_model_name_or_path"]).is_dir():
        # a local base folder: made absolute, so the adapter loads from any working directory
        adapter["base_model_name_or_path"] = str(Path(adapter["base_model_name_or_path"]).resolve())
    adapter_file.write_text(json.dumps(adapter, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if run.own.merge:
        write_merged(out, run.model, extra)
        extra["merged"] = MERGED
    return extra


def write_merged(out: Path, peft_model, record_extra: dict | None = None) -> Path:
    """The base with the adapter folded into its weights (``W + B A * alpha / r``), saved as a
    plain model with the tokenizer and a ``steersum.json`` of its own."""
    merged_dir = out / MERGED
    peft_model.merge_and_unload().save_pretrained(merged_dir)
    AutoTokenizer.from_pretrained(out).save_pretrained(merged_dir)
    record = {**read_record(out), **(record_extra or {})}
    write_record(merged_dir, {**record, "merged_from_adapter": True, "name": f"{record.get('name', out.name)}-merged"})
    return merged_dir
