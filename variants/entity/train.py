"""``python -m training entity``: train GSum for entity-centric summarization (EntSUM, Maddela et al.).

    python -m training build-data entity --out data/entity
    python -m training entity --method sentences --warm-start facebook/bart-large \\
        --train-file data/entity/train.jsonl --eval-file data/entity/val.jsonl --output-dir checkpoints/entity-sent

``--method`` is the signal: ``sentences`` (the document's sentences naming the entity, the paper's
best) or ``name``. GSum is warm-started from a plain BART (``--warm-start``, else ``--base-model``): its
signal layers start as copies of the source ones (:meth:`models.GSumForConditionalGeneration.from_bart`);
a ``--base-model`` that already is a GSum checkpoint is trained further as it is. Defaults are fairseq's
BART CNN/DM recipe, which GSum uses and EntSUM keeps (Sec. 5.2: "the original hyperparameters ... seem to
be the most stable"): learning rate 3e-5, 500 warm-up steps, weight decay 0.01, gradient clipping 0.1
(the recipe's label smoothing 0.1 is left out: the shared collator gives the model labels, not decoder
inputs, which the Trainer's label smoother needs). ``--preset tiny`` trains a small random GSum on CPU.
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass, field

from transformers import AutoConfig, AutoTokenizer

from models import GSumConfig, GSumForConditionalGeneration

from ..presets import tiny_bart_config, tiny_tokenizer
from . import SIGNAL_LENGTH, EntityAssets, EntityVariant

PAPER_DEFAULTS = {
    "learning_rate": 3e-5,
    "warmup_steps": 500,
    "weight_decay": 0.01,
    "max_grad_norm": 0.1,
    "per_device_train_batch_size": 4,
}


class OldFlagNames(argparse.Action):
    """Stores a flag's value as argparse's ``store`` does, warning when it was given by its old name: the
    signal's flags were ``--guidance-top-layers`` and ``--max-guidance-length`` before "guidance" was kept
    for classifier-free guidance alone."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string and "guidance" in option_string:
            new = option_string.replace("guidance", "signal").replace("_", "-")
            warnings.warn(f"{option_string} is deprecated: use {new}", FutureWarning, stacklevel=2)
        setattr(namespace, self.dest, values)


@dataclass
class Arguments:
    method: str = field(default="sentences", metadata={"help": "the signal: sentences | name"})
    warm_start: str | None = field(
        default=None,
        metadata={"help": "a plain BART (Hub id or folder) to warm-start GSum from (default: --base-model)"},
    )
    signal_top_layers: int = field(
        default=1,
        metadata={
            "help": "top encoder layers of the signal's own (GSum: 1)",
            "aliases": ["--guidance-top-layers", "--guidance_top_layers"],
            "action": OldFlagNames,
        },
    )
    max_signal_length: int | None = field(
        default=None,
        metadata={
            "help": f"signal tokens kept (default: {SIGNAL_LENGTH['sentences']} for sentences, {SIGNAL_LENGTH['name']} for name)",
            "aliases": ["--max-guidance-length", "--max_guidance_length"],
            "action": OldFlagNames,
        },
    )

    def __post_init__(self):
        EntityVariant().check_method(self.method)
        if self.max_signal_length is not None and self.max_signal_length < 4:
            raise ValueError(f"--max-signal-length must be at least 4, got {self.max_signal_length}")


def build(own: Arguments, data, adapter=None):
    """Model, tokenizer and assets: a random tiny GSum, a GSum checkpoint, or GSum warm-started from BART."""
    length = own.max_signal_length or SIGNAL_LENGTH[own.method]
    if data.preset == "tiny":
        tokenizer = tiny_tokenizer()
        model = GSumForConditionalGeneration(
            tiny_bart_config(tokenizer, GSumConfig, signal_top_layers=own.signal_top_layers)
        )
        return model, tokenizer, EntityAssets(tokenizer, length)
    if own.warm_start:
        data.base_model = own.warm_start  # what steersum.json and the card name as the base
    tokenizer = AutoTokenizer.from_pretrained(data.base_model)
    if AutoConfig.from_pretrained(data.base_model).model_type == GSumConfig.model_type:
        model = GSumForConditionalGeneration.from_pretrained(data.base_model)
    else:
        model = GSumForConditionalGeneration.from_bart(data.base_model, signal_top_layers=own.signal_top_layers)
    return model, tokenizer, EntityAssets(tokenizer, length)


def save_assets(out, assets: EntityAssets) -> dict:
    return {"max_signal_length": assets.max_signal_length}
