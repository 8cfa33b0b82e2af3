"""Summarizing one article for each of its readers: shared encoder states versus one call per pair.

In the PENS setting every article is summarized for several readers (about four in PENS, four in
SteerSum's simulated benchmark); with ``user-embedding`` only the reader's history differs between
them, so the article's encoder states can be computed once and shared.

Model: ``persona_bart`` with random weights (d_model 256, 4+2 layers, user encoder over the BART
encoder; SteerSum's tiny BPE tokenizer), 16 new tokens, greedy, CPU or whatever ``pick_device``
finds. Inputs: the first 4 articles x 4 readers of the **simulated** benchmark's test split
(``variants/persona/data.py``, capped click pool).

* naive: ``model.generate(article, history_ids=reader)`` once per (article, reader) pair;
* batched: the generic :class:`variants.seq2seq.Seq2SeqSummarizer` path, pairs in batches of 8, each
  pair's article encoded again;
* SteerSum: :class:`variants.persona.PersonaSummarizer`, pairs sorted by article, batches of 8, every
  distinct article of a batch encoded once and its states shared by its readers.

The batched ways run 3 times, interleaved, and the best time counts (a shared machine only adds
noise). The three must write the same summaries (asserted); "max abs diff" is the largest difference between
an article's encoder states computed alone and in SteerSum's padded batch.
"""

from __future__ import annotations

import torch

from benchmarks import best_time
from models import PersonaBartConfig, PersonaBartForConditionalGeneration
from variants import get_variant
from variants.persona import PersonaAssets, PersonaSummarizer, default_assets
from variants.persona.data import build_simulated
from variants.presets import tiny_bart_config, tiny_tokenizer
from variants.seq2seq import Seq2SeqSummarizer, pick_device

ARTICLES, READERS, NEW_TOKENS, BEAMS, BATCH, REPEATS = 4, 4, 16, 1, 8, 3


def summarizer(device: str) -> PersonaSummarizer:
    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = tiny_bart_config(
        tokenizer,
        PersonaBartConfig,
        d_model=256,
        encoder_ffn_dim=1024,
        decoder_ffn_dim=1024,
        encoder_layers=4,
        max_history=16,
        max_title_tokens=24,
    )
    model = PersonaBartForConditionalGeneration(config).to(device).eval()
    assets = PersonaAssets(default_assets().readers, tokenizer=tokenizer, max_history=16, max_title_tokens=24)
    record = {"max_source_length": 512, "max_target_length": NEW_TOKENS}
    return PersonaSummarizer(
        Seq2SeqSummarizer(
            get_variant("persona"), "random persona_bart", "user-embedding", model, tokenizer, assets, record
        )
    )


@torch.inference_mode()
def naive(fast: PersonaSummarizer, documents: list[str], controls: list[dict]) -> list[str]:
    variant, model, tokenizer = fast.variant, fast.model, fast.tokenizer
    out = []
    for document, given in zip(documents, controls):
        prepared = variant.prepare(document, variant.validate(given, fast.assets), "user-embedding", fast.assets)
        inputs = tokenizer([prepared.text], return_tensors="pt", truncation=True, max_length=512).to(model.device)
        history = torch.tensor([prepared.extra["history_ids"]], device=model.device)
        ids = model.generate(**inputs, history_ids=history, max_new_tokens=NEW_TOKENS, num_beams=BEAMS)
        out.append(tokenizer.decode(ids[0], skip_special_tokens=True).strip())
    return out


@torch.inference_mode()
def state_difference(fast: PersonaSummarizer, documents: list[str]) -> float:
    """Largest |alone - padded batch| over the articles' encoder states (real tokens only)."""
    articles = list(dict.fromkeys(documents))
    batch = fast.tokenizer(articles, return_tensors="pt", padding=True, truncation=True, max_length=512).to(
        fast.model.device
    )
    together = fast.model.get_encoder()(**batch).last_hidden_state
    worst = 0.0
    for i, article in enumerate(articles):
        alone = fast.model.get_encoder()(
            **fast.tokenizer([article], return_tensors="pt", truncation=True, max_length=512).to(fast.model.device)
        ).last_hidden_state[0]
        worst = max(worst, (together[i, : alone.shape[0]] - alone).abs().max().item())
    return worst


def run() -> str:
    fast = summarizer(pick_device())
    examples, _ = build_simulated(
        seed=0, max_articles={"pool": 150, "train": 0, "val": 0, "test": ARTICLES}, readers_per_article=READERS
    )
    pairs = examples["test"]
    documents, controls = [e["document"] for e in pairs], [e["controls"] for e in pairs]
    settings = dict(max_new_tokens=NEW_TOKENS, num_beams=BEAMS)
    fast.summarize(documents[:2], controls[:2], batch_size=2, **settings)  # warm-up
    t_naive, out_naive = best_time(naive, fast, documents, controls, repeats=1)
    batched_times, shared_times = [], []
    for _ in range(REPEATS):  # interleaved, best of REPEATS: the machine is shared, noise only adds time
        t_batched, out_batched = best_time(
            lambda: [s.text for s in fast.base.summarize(documents, controls, batch_size=BATCH, **settings)], repeats=1
        )
        t_shared, out_shared = best_time(
            lambda: [s.text for s in fast.summarize(documents, controls, batch_size=BATCH, **settings)], repeats=1
        )
        batched_times.append(t_batched)
        shared_times.append(t_shared)
    t_batched, t_shared = min(batched_times), min(shared_times)
    assert out_shared == out_naive, "shared encoder states changed a summary"
    assert out_batched == out_naive, "batching changed a summary"
    diff = state_difference(fast, documents)
    n = len(pairs)
    return "\n".join(
        [
            "## persona: one article, several readers (shared encoder states vs one call per pair)",
            "",
            f"{ARTICLES} articles x {READERS} readers of the simulated PENS-format benchmark = {n} pairs; random "
            f"persona_bart (d_model 256, 4+2 layers), {NEW_TOKENS} new tokens, {BEAMS} beam(s), batches of {BATCH}. "
            f"Same summaries asserted for all three ways; batched times are the best of {REPEATS} interleaved runs.",
            "",
            "| way | time (s) | per pair (ms) | ratio vs naive | max abs diff |",
            "|---|---|---|---|---|",
            f"| naive: one generate per (article, reader) | {t_naive:.2f} | {1000 * t_naive / n:.0f} | 1.00x | - |",
            f"| batched, article re-encoded per pair | {t_batched:.2f} | {1000 * t_batched / n:.0f} | "
            f"{t_naive / t_batched:.2f}x | 0 (same text) |",
            f"| SteerSum: batched, article encoded once per batch | {t_shared:.2f} | {1000 * t_shared / n:.0f} | "
            f"{t_naive / t_shared:.2f}x | {diff:.1e} (encoder states) |",
        ]
    )


if __name__ == "__main__":
    print(run())
