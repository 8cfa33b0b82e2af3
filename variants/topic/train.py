"""``python -m training topic``: fine-tune BART for topic control (Passali et al.).

    python -m training topic --method prepend-tag --base-model facebook/bart-large \\
        --train-file super/train.jsonl --eval-file super/val.jsonl --output-dir checkpoints/topic-prepend-tag

Defaults follow the paper (Sec. 5.1): BART-large, learning rate 3e-5, batch size 4, top-N = 100
representative terms. ``--preset tiny`` trains a small random BART of the same architecture on CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, BartConfig, BartForConditionalGeneration

from metrics.topic_space import TopicSpace
from models import TopicBartConfig, TopicBartForConditionalGeneration

from ..presets import tiny_bart_config, tiny_tokenizer
from ..seq2seq import add_control_tokens
from . import DEFAULT_TOP_N, SPECIAL_TOKENS, TopicAssets, TopicVariant

PAPER_DEFAULTS = {"learning_rate": 3e-5, "per_device_train_batch_size": 4}


@dataclass
class Arguments:
    method: str = field(default="prepend-tag", metadata={"help": "tag | emb | prepend | prepend-tag"})
    top_n: int = field(default=DEFAULT_TOP_N, metadata={"help": "representative terms tagged per topic (paper: 100)"})
    topic_space: str | None = field(
        default=None, metadata={"help": "folder of a saved TopicSpace (default: bundled BBC)"}
    )

    def __post_init__(self):
        TopicVariant().check_method(self.method)
        if self.top_n < 1:
            raise ValueError(f"--top-n must be positive, got {self.top_n}")


def build(topic: Arguments, data, adapter=None):
    """Model, tokenizer and assets for a method: BART for the token methods, TopicBart for ``emb``
    (a plain BART checkpoint loads into it with only the topic table new)."""
    space = TopicSpace.load(topic.topic_space) if topic.topic_space else TopicSpace.default()
    emb = topic.method == "emb"
    model_class = TopicBartForConditionalGeneration if emb else BartForConditionalGeneration
    extra = {"topics": space.topics} if emb else {}
    if data.preset == "tiny":
        tokenizer = tiny_tokenizer()
        model = model_class(tiny_bart_config(tokenizer, TopicBartConfig if emb else BartConfig, **extra))
    else:
        tokenizer = AutoTokenizer.from_pretrained(data.base_model)
        model = (model_class if emb else AutoModelForSeq2SeqLM).from_pretrained(data.base_model, **extra)
    add_control_tokens(tokenizer, model, SPECIAL_TOKENS)
    return model, tokenizer, TopicAssets(space, topic.top_n, list(space.topics) if emb else [])


def save_assets(out, assets: TopicAssets) -> dict:
    assets.space.save(out)
    return {"top_n": assets.top_n}
