"""Loading and batched generation shared by every variant whose model is a Hugging Face seq2seq model.

A variant supplies ``prepare``; this module turns prepared inputs into padded batches (truncating
sources that exceed the model's limit, with a notice), runs ``generate`` on GPU when there is one,
and decodes.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from tokenizers import AddedToken
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

import models  # noqa: F401  (registers SteerSum's architectures with the Auto classes)

from .base import Prepared, Summarizer, Summary, Variant, check_document


def pick_device(device: str | None = None) -> str:
    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def load_seq2seq(path: str | Path, device: str | None = None, **kwargs: Any):
    """Model and tokenizer from a checkpoint folder; bf16 on a GPU that supports it, fp32 on CPU."""
    device = pick_device(device)
    dtype = torch.bfloat16 if device.startswith("cuda") and torch.cuda.is_bf16_supported() else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    model = AutoModelForSeq2SeqLM.from_pretrained(path, dtype=dtype, **kwargs).to(device).eval()
    return model, tokenizer


def encode(tokenizer, prepared: list[Prepared], max_source_length: int) -> tuple[dict[str, torch.Tensor], list[bool]]:
    """Pad a batch of prepared inputs; sources longer than ``max_source_length`` tokens are cut (keeping
    the end-of-sequence token) and flagged, so callers can say so instead of failing."""
    ids = tokenizer([p.text for p in prepared], truncation=False)["input_ids"]
    truncated = [len(x) > max_source_length for x in ids]
    ids = [x[: max_source_length - 1] + x[-1:] if cut else x for x, cut in zip(ids, truncated)]
    batch = tokenizer.pad({"input_ids": ids}, return_tensors="pt")
    for key in prepared[0].extra if prepared else ():
        batch[key] = torch.tensor([p.extra[key] for p in prepared])
    return dict(batch), truncated


class Seq2SeqSummarizer(Summarizer):
    """A trained checkpoint: ``prepare`` → ``encode`` → ``generate`` → decode, in batches."""

    def __init__(self, variant: Variant, name: str, method: str, model, tokenizer, assets: Any, record: dict):
        self.variant, self.name, self.method = variant, name, method
        self.model, self.tokenizer, self.assets, self.record = model, tokenizer, assets, record
        self.max_source_length = int(record.get("max_source_length", 1024))
        self.generation = {"max_new_tokens": int(record.get("max_target_length", 128)), "num_beams": int(record.get("num_beams", 4))}

    @torch.inference_mode()
    def summarize(self, documents: list[str], controls: list[dict], batch_size: int = 8, **generation: Any) -> list[Summary]:
        if len(documents) != len(controls):
            raise ValueError(f"{len(documents)} documents but {len(controls)} control sets")
        prepared = [self.variant.prepare(check_document(d), self.variant.validate(c, self.assets), self.method, self.assets)
                    for d, c in zip(documents, controls)]
        settings = {**self.generation, **generation}
        summaries = []
        for start in range(0, len(prepared), batch_size):
            chunk = prepared[start:start + batch_size]
            batch, truncated = encode(self.tokenizer, chunk, self.max_source_length)
            batch = {k: v.to(self.model.device) for k, v in batch.items()}
            output = self.model.generate(**batch, **settings)
            texts = self.tokenizer.batch_decode(output, skip_special_tokens=True)
            for text, item, cut in zip(texts, chunk, truncated):
                notices = list(item.notices)
                if cut:
                    notices.append(f"the input was longer than the model's limit of {self.max_source_length} "
                                   "tokens and was truncated")
                summaries.append(Summary(text.strip(), notices))
        return summaries


def add_control_tokens(tokenizer, model, tokens: list[str]) -> None:
    """Add the variant's control tokens (e.g. ``[TAG]``) as special tokens that swallow the space
    before them, and grow the embedding table to match."""
    new = [AddedToken(t, lstrip=True, rstrip=False, special=True, normalized=False) for t in tokens
           if t not in tokenizer.get_vocab()]
    if new:
        tokenizer.add_special_tokens({"additional_special_tokens": new})
    if model.get_input_embeddings().num_embeddings < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer))
