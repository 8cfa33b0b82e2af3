"""Training step time on CPU: fp32 vs bf16, on the MiniLM-initialised BART (``python -m training base minilm``).

The general summarizer's shape: batch 8, 256 source / 96 target tokens of real BBC text (``bbc_summary`` train,
padded to full length so every step has the same shape), AdamW lr 3e-4, one CPU thread (the
machine's CPU-slot rule). Ways, each timed on the same batch after one untimed warm-up step
(which allocates AdamW's state), interleaved across rounds, best round kept:

* **fp32** — what a CPU without AMX trains with; **fp32 + fused AdamW** the same with ``AdamW(fused=True)``.
* **autocast** — ``torch.autocast("cpu", torch.bfloat16)`` with fp32 weights: what the Trainer's
  ``--bf16 --use_cpu`` does.
* **autocast + fused AdamW** — the same with ``AdamW(fused=True)`` (one kernel per step on CPU).
* **bf16 copy + fp32 master** — forward and backward run on a bf16 copy of the model (no per-op
  casts), the gradients are copied into the fp32 master weights, AdamW (fused) updates those, and
  the bf16 copy is refreshed: mixed precision as on GPUs before autocast. The same
  :class:`training.bf16.Bf16Copy` that ``python -m training`` trains with (``--bf16-weights``, the
  default on CPUs with AMX: ``training.seq2seq.cpu_bf16_supported``).
* **fp32 + oneDNN bf16 matmul** — no autocast: fp32 tensors throughout, but oneDNN computes fp32
  matrix products in bf16 (``torch.backends.mkldnn.matmul.fp32_precision = "bf16"``, AMX only),
  with fused AdamW.

Measured on a 2-core Xeon with AVX512-BF16 but no AMX, shared with other jobs: every bf16 way was slower than
fp32 (oneDNN's AVX512-BF16 matmul: 60 GFLOPS vs MKL fp32 92 on one thread), so bf16 is the default only
where AMX is present; a 1.55x had been measured on a machine whose bf16 matmul ran at 193 GFLOPS.

Check: each way's first-step loss on the batch, next to fp32's (bf16 rounds; it must stay close).
"""

from __future__ import annotations

import copy
import tempfile
import time
from pathlib import Path

import torch

from training.bf16 import Bf16Copy

BATCH, SOURCE_TOKENS, TARGET_TOKENS, ROUNDS, STEPS = 8, 256, 96, 2, 2
WAYS = (
    "fp32",
    "fp32 + fused AdamW",
    "autocast",
    "autocast + fused AdamW",
    "bf16 copy + fp32 master",
    "fp32 + oneDNN bf16 matmul + fused AdamW",
)


def batch_of_text(
    tokenizer, source_tokens: int = SOURCE_TOKENS, target_tokens: int = TARGET_TOKENS
) -> dict[str, torch.Tensor]:
    from variants.sources import load_source

    rows = load_source("bbc_summary", "train")[:BATCH]
    enc = tokenizer(
        [r["source"] for r in rows],
        truncation=True,
        max_length=source_tokens,
        padding="max_length",
        return_tensors="pt",
    )
    labels = tokenizer(
        [r["target"] for r in rows],
        truncation=True,
        max_length=target_tokens,
        padding="max_length",
        return_tensors="pt",
    )["input_ids"]
    labels[labels == tokenizer.pad_token_id] = -100
    return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "labels": labels}


def best_step_seconds(ways, batch, rounds: int, steps: int) -> dict[str, float]:
    """Each way's seconds per ``step(batch)``: rounds of ``steps`` steps, interleaved across the ways
    (so a slow spell of the machine hits all of them), the best round kept."""
    best = {w.name: float("inf") for w in ways}
    for _ in range(rounds):
        for w in ways:
            start = time.perf_counter()
            for _ in range(steps):
                w.step(batch)
            best[w.name] = min(best[w.name], (time.perf_counter() - start) / steps)
    return best


class Way:
    """One way of training: ``step(batch) -> loss``."""

    def __init__(self, name: str, model):
        self.name = name
        self.model = copy.deepcopy(model).train()
        fused = "fused" in name or "master" in name
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4, fused=fused)
        self.compute = Bf16Copy(self.model) if name == "bf16 copy + fp32 master" else None  # what training runs

    def step(self, batch) -> float:
        if self.compute is not None:
            return self.compute.step(batch, self.optimizer).item()
        torch.backends.mkldnn.matmul.fp32_precision = "bf16" if "oneDNN bf16" in self.name else "none"
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.name.startswith("autocast")):
                loss = self.model(**batch).loss
            loss.backward()
            self.optimizer.step()
        finally:
            torch.backends.mkldnn.matmul.fp32_precision = "none"
        self.optimizer.zero_grad(set_to_none=True)
        return loss.item()


def run() -> str:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from training.base import convert_minilm
    from training.seq2seq import cpu_bf16_supported

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        base = convert_minilm(Path(tmp) / "minilm-bart")
        tokenizer = AutoTokenizer.from_pretrained(base)
        # no dropout: every way computes the same function, so their first-step losses compare
        model = AutoModelForSeq2SeqLM.from_pretrained(
            base, dtype=torch.float32, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0
        )
    batch = batch_of_text(tokenizer)
    ways = [Way(name, model) for name in WAYS]
    first_loss = {w.name: w.step(batch) for w in ways}  # warm-up: AdamW state, allocator
    best = best_step_seconds(ways, batch, ROUNDS, STEPS)
    base_time = best["fp32"]
    rows = [f"| {name} | {best[name]:.2f} | {base_time / best[name]:.2f}x | {first_loss[name]:.4f} |" for name in WAYS]
    return "\n".join(
        [
            "## Training step on CPU: fp32 vs bf16 (MiniLM-initialised BART, 37M parameters)",
            "",
            f"Batch {BATCH}, {SOURCE_TOKENS} source / {TARGET_TOKENS} target tokens of BBC text, AdamW, 1 CPU thread; "
            f"best of {ROUNDS} interleaved rounds of {STEPS} steps. AVX512-BF16: {torch.cpu._is_avx512_bf16_supported()}, "
            f"AMX: {torch.cpu._is_amx_tile_supported()}, so bf16 is the training default here: {cpu_bf16_supported()}. "
            "First-step loss on the same batch checks that bf16 computes the same function (up to rounding).",
            "",
            "| way | s/step | speed-up vs fp32 | first-step loss |",
            "|---|---|---|---|",
            *rows,
        ]
    )
