"""TDSum: TF-IDF features for 1,000 documents, batched versus one at a time; and what the added
attention costs per generated token.

1. **Features.** SteerSum's way (:meth:`variants.tdsum.TDSumAssets.token_scores`) vectorizes all
   documents with one scikit-learn ``transform``, tokenizes them in one batched call of the fast
   tokenizer, and aligns subwords to words with ``numpy.searchsorted`` over word ends. The naive way
   loops over documents, calls ``transform`` and the tokenizer per document, and finds each token's
   word by scanning the words in Python. Inputs: the first 1,000 bundled SciTLDR training abstracts,
   the vectorizer fitted on all 1,992, the tiny preset's byte-level BPE, width 1,024.
2. **Generation.** Greedy decoding of 32 tokens for 2 sources of 256 tokens with a small BART
   (d_model 256, 3 + 3 layers) and the same model with TDSum's TF-IDF attention in every decoder
   layer; the added attention's output projection is zero (its initial state), so both must
   generate the same tokens while doing all the work. Per-token time is
   ``(t(32 tokens) - t(1 token)) / 31``, which leaves out the encoder. A third row recomputes the
   added attention's keys and values at every step instead of once per source.
"""

from __future__ import annotations

import numpy as np
import torch
from transformers import BartConfig, BartForConditionalGeneration

from benchmarks import best_time
from metrics.text import WORD
from models import TDSumConfig, TDSumForConditionalGeneration
from variants.presets import tiny_tokenizer
from variants.sources import load_source
from variants.tdsum import TDSumAssets, fit_vectorizer

N_DOCUMENTS = 1000
WIDTH = 1024
REPEATS = 3  # best of three for each way
MODEL = dict(
    d_model=256,
    encoder_layers=3,
    decoder_layers=3,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    encoder_ffn_dim=1024,
    decoder_ffn_dim=1024,
    max_position_embeddings=1024,
    dropout=0.0,
    attention_dropout=0.0,
)
SOURCES, SOURCE_LEN, NEW_TOKENS = 2, 256, 32


def naive_token_scores(documents: list[str], assets: TDSumAssets) -> list[list[float]]:
    """One document at a time: its own transform and tokenizer call, each token's word by a scan."""
    vocabulary, out = assets.vectorizer.vocabulary_, []
    for document in documents:
        row = assets.vectorizer.transform([document]).toarray()[0]
        spans = [
            (m.start(), m.end(), row[vocabulary[m.group(0).lower()]] if m.group(0).lower() in vocabulary else 0.0)
            for m in WORD.finditer(document)
        ]
        scores = []
        for start, end in assets.tokenizer(document, return_offsets_mapping=True)["offset_mapping"]:
            scores.append(next((score for a, b, score in spans if b > start and a < end), 0.0))
        if len(scores) > WIDTH:
            scores = scores[: WIDTH - 1] + scores[-1:]
        out.append([float(np.float32(s)) for s in scores] + [0.0] * (WIDTH - len(scores)))
    return out


def feature_rows() -> list[str]:
    documents = [r["source"] for r in load_source("scitldr", "train")]
    assets = TDSumAssets(fit_vectorizer(documents), tiny_tokenizer(), WIDTH)
    documents = documents[:N_DOCUMENTS]
    batched_s, batched = best_time(lambda: assets.token_scores(documents, [{}] * len(documents))[0], repeats=REPEATS)
    naive_s, naive = best_time(naive_token_scores, documents, assets, repeats=REPEATS)
    difference = float(np.abs(np.array(batched) - np.array(naive)).max())
    assert difference == 0.0, f"batched and per-document features differ by {difference}"
    return [
        f"| features: batched transform + tokenizer + searchsorted (SteerSum) | {batched_s * 1000:.0f} ms | 1.0 | {difference:.0e} |",
        f"| features: per-document loop, per-token word scan | {naive_s * 1000:.0f} ms | {naive_s / batched_s:.1f} | |",
    ]


class UncachedTDSum(TDSumForConditionalGeneration):
    """TDSum that forgets the added attention's keys and values after every step (the naive way)."""

    def forward(self, *args, encoder_outputs=None, **kwargs):
        if encoder_outputs is not None and getattr(encoder_outputs, "tfidf_key_values", None) is not None:
            encoder_outputs["tfidf_key_values"] = None
        return super().forward(*args, encoder_outputs=encoder_outputs, **kwargs)


@torch.inference_mode()
def per_token_seconds(model, inputs: dict) -> tuple[float, torch.Tensor]:
    def generate(n):
        return model.generate(**inputs, max_new_tokens=n, min_new_tokens=n, num_beams=1, do_sample=False)

    one, _ = best_time(generate, 1, repeats=REPEATS)
    many, output = best_time(generate, NEW_TOKENS, repeats=REPEATS)
    return (many - one) / (NEW_TOKENS - 1), output


def generation_rows() -> list[str]:
    torch.manual_seed(0)
    tdsum = TDSumForConditionalGeneration(TDSumConfig(vocab_size=2000, **MODEL)).eval()  # added output projection 0
    bart = BartForConditionalGeneration(BartConfig(vocab_size=2000, **MODEL)).eval()
    bart.load_state_dict(tdsum.state_dict(), strict=False)
    uncached = UncachedTDSum(tdsum.config).eval()
    uncached.load_state_dict(tdsum.state_dict())
    ids = torch.randint(4, 2000, (SOURCES, SOURCE_LEN))
    tfidf = torch.rand(SOURCES, SOURCE_LEN)
    bart_s, bart_out = per_token_seconds(bart, {"input_ids": ids})
    tdsum_s, tdsum_out = per_token_seconds(tdsum, {"input_ids": ids, "tfidf": tfidf})
    uncached_s, uncached_out = per_token_seconds(uncached, {"input_ids": ids, "tfidf": tfidf})
    assert torch.equal(bart_out, tdsum_out) and torch.equal(tdsum_out, uncached_out), "generated tokens differ"
    return [
        f"| generation: plain BART, per token | {bart_s * 1000:.2f} ms | 1.0 | 0 (same tokens) |",
        f"| generation: TDSum, keys/values once per source (SteerSum) | {tdsum_s * 1000:.2f} ms | {tdsum_s / bart_s:.2f} | 0 |",
        f"| generation: TDSum, keys/values every step | {uncached_s * 1000:.2f} ms | {uncached_s / bart_s:.2f} | 0 |",
    ]


def run() -> str:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    rows = feature_rows() + generation_rows()
    return "\n".join(
        [
            "## TDSum: TF-IDF features and the added attention",
            "",
            f"Features: {N_DOCUMENTS} SciTLDR abstracts to per-token TF-IDF scores (width {WIDTH}), ratio = naive / "
            f"batched. Generation: greedy, {SOURCES} sources x {SOURCE_LEN} tokens, d_model {MODEL['d_model']}, "
            f"{MODEL['decoder_layers']} decoder layers, per generated token; ratio = time / plain BART's. "
            f"Best of {REPEATS}; outputs checked equal.",
            "",
            "| way | time | ratio | max abs difference |",
            "|---|---|---|---|",
            *rows,
        ]
    )


if __name__ == "__main__":
    print(run())
