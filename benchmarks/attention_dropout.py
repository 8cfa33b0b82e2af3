"""Training step on CPU with and without dropout on the attention probabilities (MiniLM-initialised BART).

BERT pretrains with dropout 0.1 on its attention probabilities; ``python -m training base minilm``
now writes BartConfig's default, 0.0, and keeps 0.1 on hidden states (``training/base.py``). On a
CPU, PyTorch draws a dropout mask one element at a time on one thread, whatever the thread count,
and the attention probabilities (batch x heads x query x key: 6.3M per encoder layer at 256 tokens,
batch 8) are a step's largest tensors, so their masks cost the same seconds in fp32 and in bf16.

Ways, each on the same batch of BBC text (the general summarizer's shape: batch 8, 256 source / 128
target tokens), fused AdamW, the Trainer's 2 threads, one untimed warm-up step, interleaved rounds,
best kept: the converted base with attention dropout 0.1 (as converted before) and with 0.0 (now);
on a CPU with AMX also both under the bf16 copy the Trainer uses there (:class:`training.bf16.Bf16Copy`).

Check: in eval mode (no dropout) the two configurations compute the same loss on the batch, so the
change touches training noise only, never what a converted or fine-tuned model computes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch

from benchmarks.bf16_training import batch_of_text, best_step_seconds
from training.bf16 import Bf16Copy

SOURCE_TOKENS, TARGET_TOKENS, THREADS, ROUNDS, STEPS = 256, 128, 2, 2, 2


class Way:
    """A model with one attention dropout, trained by ``step(batch)`` in fp32 or on a bf16 copy."""

    def __init__(self, base: Path, attention_dropout: float, bf16: bool):
        from transformers import AutoModelForSeq2SeqLM

        self.name = f"attention dropout {attention_dropout}" + (", bf16 copy" if bf16 else ", fp32")
        self.model = AutoModelForSeq2SeqLM.from_pretrained(base, attention_dropout=attention_dropout).train()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4, fused=True)
        self.compute = Bf16Copy(self.model) if bf16 else None

    def step(self, batch) -> None:
        if self.compute:
            self.compute.step(batch, self.optimizer)
            return
        self.model(**batch).loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    @torch.no_grad()
    def eval_loss(self, batch) -> float:
        self.model.eval()
        try:
            return self.model(**batch).loss.item()
        finally:
            self.model.train()


def run() -> str:
    from transformers import AutoTokenizer

    from training.base import convert_minilm
    from training.seq2seq import cpu_bf16_supported

    torch.set_num_threads(THREADS)
    with tempfile.TemporaryDirectory() as tmp:
        base = convert_minilm(Path(tmp) / "minilm-bart")
        tokenizer = AutoTokenizer.from_pretrained(base)
        ways = [
            Way(base, p, bf16) for bf16 in ([False, True] if cpu_bf16_supported() else [False]) for p in (0.1, 0.0)
        ]
    batch = batch_of_text(tokenizer, SOURCE_TOKENS, TARGET_TOKENS)
    eval_loss = {w.name: w.eval_loss(batch) for w in ways}  # before any step: the same weights
    for w in ways:
        w.step(batch)  # warm-up: AdamW state, allocator
    best = best_step_seconds(ways, batch, ROUNDS, STEPS)
    reference = ways[0].name
    rows = [
        f"| {w.name} | {best[w.name]:.2f} | {best[reference] / best[w.name]:.2f}x | {eval_loss[w.name]:.6f} |"
        for w in ways
    ]
    return "\n".join(
        [
            "## Training step on CPU: attention dropout 0.1 (BERT's) vs 0.0 (the converted base's)",
            "",
            f"MiniLM-initialised BART, batch 8, {SOURCE_TOKENS} source / {TARGET_TOKENS} target tokens of BBC text, "
            f"fused AdamW, {THREADS} threads; best of {ROUNDS} interleaved rounds of {STEPS} steps. AMX: "
            f"{torch.cpu._is_amx_tile_supported()} (bf16 copy rows only with AMX). Eval-mode loss on the batch before "
            "training: dropout off, so both configurations must give the same number.",
            "",
            f"| way | s/step | speed-up vs {reference} | eval-mode loss |",
            "|---|---|---|---|",
            *rows,
        ]
    )
