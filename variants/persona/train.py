"""``python -m training persona``: fine-tune BART to summarize for a reader (PENS setting).

    python -m training build-data persona --out data/persona-simulated
    python -m training persona --method user-embedding --base-model facebook/bart-large \\
        --train-file data/persona-simulated/train.jsonl --eval-file data/persona-simulated/val.jsonl \\
        --readers data/persona-simulated/persona_readers.json --output-dir checkpoints/persona-user-embedding
    python -m training evaluate --model checkpoints/persona-user-embedding --data data/persona-simulated/test.jsonl

``history-prefix`` trains plain BART on ``titles [HISTORY] article`` (the paper's injection of a cue
into a generic model, Sec. 5.1), ``interest-prefix`` on ``reader's sentences [HISTORY] article``;
``user-embedding`` trains ``persona_bart`` (a plain BART
checkpoint loads into it with only the user encoder new). Defaults: BART-large, learning rate 3e-5,
batch size 4 (the common BART fine-tuning recipe; the evaluation paper trains no model).
``--preset tiny`` trains a small random model of the same architecture on CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, BartConfig, BartForConditionalGeneration

from models import PersonaBartConfig, PersonaBartForConditionalGeneration

from ..presets import tiny_bart_config, tiny_tokenizer
from ..seq2seq import add_control_tokens
from . import DEFAULT_MAX_HISTORY, DEFAULT_PREFIX_TITLES, SPECIAL_TOKENS, PersonaAssets, PersonaVariant, default_assets

PAPER_DEFAULTS = {"learning_rate": 3e-5, "per_device_train_batch_size": 4}


@dataclass
class Arguments:
    method: str = field(
        default="user-embedding", metadata={"help": "history-prefix | user-embedding | interest-prefix"}
    )
    readers: str | None = field(
        default=None,
        metadata={
            "help": "persona_readers.json: the readers the 'reader' control offers (default: SteerSum's simulated ones)"
        },
    )
    prefix_titles: int = field(
        default=DEFAULT_PREFIX_TITLES, metadata={"help": "history-prefix: recent titles put in front"}
    )
    user_vectors: int = field(default=4, metadata={"help": "user-embedding: vectors per reader in the decoder memory"})
    max_history: int = field(
        default=DEFAULT_MAX_HISTORY, metadata={"help": "user-embedding: most recent titles encoded"}
    )
    max_title_tokens: int = field(default=24, metadata={"help": "user-embedding: tokens kept per title"})
    title_encoder: str = field(
        default="encoder", metadata={"help": "user-embedding: 'encoder' (BART encoder) or 'embeddings'"}
    )

    def __post_init__(self):
        PersonaVariant().check_method(self.method)
        if self.prefix_titles < 1:
            raise ValueError(f"--prefix-titles must be positive, got {self.prefix_titles}")


def build(persona: Arguments, data, adapter=None):
    """Model, tokenizer and assets: BART + ``[HISTORY]`` for the prefix methods, PersonaBart for
    ``user-embedding`` (its user-encoder settings go in the config, so they travel with the weights)."""
    readers = PersonaAssets.from_file(persona.readers) if persona.readers else default_assets()
    if persona.method != "user-embedding":
        if data.preset == "tiny":
            tokenizer = tiny_tokenizer()
            model = BartForConditionalGeneration(tiny_bart_config(tokenizer, BartConfig))
        else:
            tokenizer = AutoTokenizer.from_pretrained(data.base_model)
            model = AutoModelForSeq2SeqLM.from_pretrained(data.base_model)
        add_control_tokens(tokenizer, model, SPECIAL_TOKENS)
        return model, tokenizer, PersonaAssets(readers.readers, persona.prefix_titles, simulated=readers.simulated)
    extra = dict(
        user_vectors=persona.user_vectors,
        max_history=persona.max_history,
        max_title_tokens=persona.max_title_tokens,
        title_encoder=persona.title_encoder,
    )
    if data.preset == "tiny":
        tokenizer = tiny_tokenizer()
        model = PersonaBartForConditionalGeneration(tiny_bart_config(tokenizer, PersonaBartConfig, **extra))
    else:
        tokenizer = AutoTokenizer.from_pretrained(data.base_model)
        model = PersonaBartForConditionalGeneration.from_pretrained(data.base_model, **extra)
    assets = PersonaAssets(
        readers.readers,
        persona.prefix_titles,
        tokenizer,
        persona.max_history,
        persona.max_title_tokens,
        simulated=readers.simulated,
    )
    return model, tokenizer, assets


def save_assets(out, assets: PersonaAssets) -> dict:
    assets.save(out)
    return {
        "prefix_titles": assets.prefix_titles,
        "simulated_readers": assets.simulated,
        "max_history": assets.max_history,
        "max_title_tokens": assets.max_title_tokens,
    }
