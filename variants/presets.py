"""``--preset tiny``: a small random model of the real architecture, for CPU runs, tests and demos.

The tokenizer is a byte-level BPE (BART's scheme) trained in a second on 400 BBC articles and
committed (variants/assets/), so nothing is downloaded; it is saved and loaded like any Hub tokenizer.
"""

from __future__ import annotations

from pathlib import Path

from transformers import BartConfig, BartTokenizerFast, PreTrainedTokenizerFast

# The trained tokenizers are committed (variants/assets/, rebuilt by ``python -m variants.build_assets``),
# so a plain clone needs no data folder.
ASSETS = Path(__file__).resolve().parent / "assets"
TINY_BPE_FILE, TINY_UNIGRAM_FILE = "tiny_bpe.json", "tiny_unigram.json"

TINY_BART = dict(
    d_model=64,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    encoder_ffn_dim=128,
    decoder_ffn_dim=128,
    max_position_embeddings=1024,
    dropout=0.0,
    attention_dropout=0.0,
)


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """A fresh tokenizer object each call (callers add their own special tokens to it)."""
    from tokenizers import Tokenizer

    return _wrap(Tokenizer.from_file(str(ASSETS / TINY_BPE_FILE)))


def train_bpe(texts: list[str], vocab_size: int = 2000) -> str:
    """BART's byte-level BPE trained on ``texts``, as JSON (the committed asset is ``build_assets``' output)."""
    from tokenizers import ByteLevelBPETokenizer, processors

    bpe = ByteLevelBPETokenizer(add_prefix_space=False)
    bpe.train_from_iterator(
        texts,
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        show_progress=False,
    )
    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return bpe._tokenizer.to_str()


def _wrap(backend) -> PreTrainedTokenizerFast:
    return BartTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )


def tiny_bart_config(tokenizer, config_class=BartConfig, **overrides) -> BartConfig:
    return config_class(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
        **{**TINY_BART, **overrides},
    )


# T5 (Flan-T5's architecture: gated-GELU feed-forward, relative attention, untied head), for CCS.
TINY_T5 = dict(
    d_model=32,
    d_kv=8,
    d_ff=64,
    num_layers=2,
    num_decoder_layers=2,
    num_heads=4,
    feed_forward_proj="gated-gelu",
    tie_word_embeddings=False,
    dropout_rate=0.0,
)


def tiny_t5_tokenizer():
    """A T5 tokenizer (Unigram over Metaspace pieces, as T5's SentencePiece model) trained on 400
    SciTLDR abstracts (committed asset); ``<pad>``=0, ``</s>``=1, ``<unk>``=2 as in T5."""
    import json

    from transformers import T5Tokenizer

    vocab = json.loads((ASSETS / TINY_UNIGRAM_FILE).read_text(encoding="utf-8"))["model"]["vocab"]
    return T5Tokenizer(vocab=[tuple(piece) for piece in vocab], extra_ids=0)


def train_unigram(texts: list[str], vocab_size: int = 2000) -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    unigram = Tokenizer(models.Unigram())
    unigram.pre_tokenizer = pre_tokenizers.Sequence(
        [  # T5Tokenizer's own pre-tokenizer
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always"),
        ]
    )
    unigram.train_from_iterator(
        texts,
        trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>", show_progress=False
        ),
    )
    return unigram.to_str()


def tiny_t5_config(tokenizer, **overrides):
    from transformers import T5Config

    return T5Config(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        **{**TINY_T5, **overrides},
    )
