"""Sentence embeddings with transformers alone, computed as sentence-transformers computes them for
``all-MiniLM-L6-v2`` (its ``modules.json``: the transformer, mean pooling over the attention mask, unit
length; at most 256 tokens, its ``sentence_bert_config.json``). SteerSum's persona baseline and the processor
of an exported persona repo both embed with this class, so they pick the same reader sentences, and a Hub
user needs no sentence-transformers package.
"""

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length: longer sentences are cut, as sentence-transformers cuts them
BATCH_SIZE = 64


class SentenceEncoder:
    """``encoder(texts)``: the texts' unit-length mean-pooled embeddings, a (len(texts), hidden) float32 array."""

    def __init__(self, name_or_path: str, **hub_kwargs):
        self.tokenizer = AutoTokenizer.from_pretrained(name_or_path, **hub_kwargs)
        self.model = AutoModel.from_pretrained(name_or_path, **hub_kwargs).eval()

    @torch.no_grad()
    def __call__(self, texts: list[str]) -> np.ndarray:
        vectors = [np.zeros((0, self.model.config.hidden_size), dtype=np.float32)]
        for start in range(0, len(texts), BATCH_SIZE):
            batch = self.tokenizer(
                list(texts[start : start + BATCH_SIZE]),
                padding=True,
                truncation=True,
                max_length=MAX_TOKENS,
                return_tensors="pt",
            )
            states = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            vectors.append(torch.nn.functional.normalize(pooled, p=2, dim=1).numpy())
        return np.concatenate(vectors)
