"""``python -m training entity``: train GSum for entity-centric summarization (EntSUM, Maddela et al.).

    python -m training build-data entity --out data/entity
    python -m training entity --method sentences --warm-start facebook/bart-large \\
        --train-file data/entity/train.jsonl --eval-file data/entity/val.jsonl --output-dir checkpoints/entity-sent

``--method`` is the guidance: ``sentences`` (the document's sentences naming the entity, the paper's
best) or ``name``. GSum is warm-started from a plain BART (``--warm-start``, else ``--base-model``): its
guidance layers start as copies of the source ones (:meth:`models.GSumForConditionalGeneration.from_bart`);
a ``--base-model`` that already is a GSum checkpoint is trained further as it is. Defaults are fairseq's
BART CNN/DM recipe, which GSum uses and EntSUM keeps (Sec. 5.2: "the original hyperparameters ... seem to
be the most stable"): learning rate 3e-5, 500 warm-up steps, weight decay 0.01, gradient clipping 0.1
(the recipe's label smoothing 0.1 is left out: the shared collator gives the model labels, not decoder
inputs, which the Trainer's label smoother needs). ``--preset tiny`` trains a small random GSum on CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transformers import AutoConfig, AutoTokenizer

from models import GSumConfig, GSumForConditionalGeneration

from ..presets import tiny_bart_config, tiny_tokenizer
from . import GUIDANCE_LENGTH, EntityAssets, EntityVariant

PAPER_DEFAULTS = {
    "learning_rate": 3e-5,
    "warmup_steps": 500,
    "weight_decay": 0.01,
    "max_grad_norm": 0.1,
    "per_device_train_batch_size": 4,
}


@dataclass
class Arguments:
    method: str = field(default="sentences", metadata={"help": "the guidance: sentences | name"})
    warm_start: str | None = field(
        default=None,
        metadata={"help": "a plain BART (Hub id or folder) to warm-start GSum from (default: --base-model)"},
    )
    guidance_top_layers: int = field(
        default=1, metadata={"help": "top encoder layers of the guidance's own (GSum: 1)"}
    )
    max_guidance_length: int | None = field(
        default=None,
        metadata={
            "help": f"guidance tokens kept (default: {GUIDANCE_LENGTH['sentences']} for sentences, {GUIDANCE_LENGTH['name']} for name)"
        },
    )

    def __post_init__(self):
        EntityVariant().check_method(self.method)
        if self.max_guidance_length is not None and self.max_guidance_length < 4:
            raise ValueError(f"--max-guidance-length must be at least 4, got {self.max_guidance_length}")


def build(own: Arguments, data, adapter=None):
    """Model, tokenizer and assets: a random tiny GSum, a GSum checkpoint, or GSum warm-started from BART."""
    length = own.max_guidance_length or GUIDANCE_LENGTH[own.method]
    if data.preset == "tiny":
        tokenizer = tiny_tokenizer()
        model = GSumForConditionalGeneration(
            tiny_bart_config(tokenizer, GSumConfig, guidance_top_layers=own.guidance_top_layers)
        )
        return model, tokenizer, EntityAssets(tokenizer, length)
    if own.warm_start:
        data.base_model = own.warm_start  # what steersum.json and the card name as the base
    tokenizer = AutoTokenizer.from_pretrained(data.base_model)
    if AutoConfig.from_pretrained(data.base_model).model_type == GSumConfig.model_type:
        model = GSumForConditionalGeneration.from_pretrained(data.base_model)
    else:
        model = GSumForConditionalGeneration.from_bart(data.base_model, guidance_top_layers=own.guidance_top_layers)
    return model, tokenizer, EntityAssets(tokenizer, length)


def save_assets(out, assets: EntityAssets) -> dict:
    return {"max_guidance_length": assets.max_guidance_length}
