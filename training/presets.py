"""``--preset tiny``: a small random model of the real architecture, for CPU runs, tests and demos.

The tokenizer is a byte-level BPE (BART's scheme) trained in a second on the bundled BBC articles,
so nothing is downloaded; it is saved and loaded like any Hub tokenizer.
"""
from __future__ import annotations

from functools import lru_cache

from transformers import BartConfig, BartTokenizerFast, PreTrainedTokenizerFast

from metrics.io import DATA_DIR, read_jsonl

TINY_BART = dict(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                 max_position_embeddings=1024, dropout=0.0, attention_dropout=0.0)


def tiny_tokenizer(vocab_size: int = 2000, n_docs: int = 400) -> PreTrainedTokenizerFast:
    """A fresh tokenizer object each call (callers add their own special tokens to it)."""
    from tokenizers import Tokenizer

    return _wrap(Tokenizer.from_str(_trained_bpe(vocab_size, n_docs)))


@lru_cache(maxsize=2)
def _trained_bpe(vocab_size: int, n_docs: int) -> str:
    from tokenizers import ByteLevelBPETokenizer, processors

    texts = [r["text"] for r in read_jsonl(DATA_DIR / "bbc" / "articles.jsonl")[:n_docs]]
    bpe = ByteLevelBPETokenizer(add_prefix_space=False)
    bpe.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=2,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return bpe._tokenizer.to_str()


def _wrap(backend) -> PreTrainedTokenizerFast:
    return BartTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                             cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")


def tiny_bart_config(tokenizer, config_class=BartConfig, **overrides) -> BartConfig:
    return config_class(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                        decoder_start_token_id=tokenizer.eos_token_id, forced_eos_token_id=tokenizer.eos_token_id,
                        **{**TINY_BART, **overrides})
