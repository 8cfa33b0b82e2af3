"""Training throughput on CPU: random batches vs batches grouped by source length (the zoo's CCS model).

The collator pads each batch to its longest source and target (``training.batches.collate``), so a
batch costs what its longest example costs. CCS prompts run from ~60 to 384 tokens (SciTLDR
abstracts and the CCSBench prompt), targets from ~10 to 192. With random batches 28% of the source
positions are padding (measured below); transformers' ``LengthGroupedSampler`` (the Trainer's
``train_sampling_strategy="group_by_length"``, as ``run_summarization.py --group_by_length``) permutes
the data, cuts it into megabatches of 50 batches, and sorts each megabatch by source length: batches
of neighbours, in a random order of megabatches.

Ways, on the same model and data (the zoo's CCS shape: CCSBench prompt from ``variants.ccs``'s
``prepare``, at most 384 source / 192 target tokens, batch 8, the SciTLDR part of ``build-data ccs
--long-repeats 3``'s training set), each with its own copy of the converted MiniLM-BART and fused AdamW, in the precision
training uses on this CPU, the Trainer's 2 threads:

* **padding, whole epoch**: the share of the padded source and target positions that hold tokens,
  counted exactly over every batch of one epoch of each sampler (no model);
* **timed**: ``STEPS`` batches spread evenly over each sampler's epoch (not its first ones: a grouped
  megabatch runs from its longest batch to its shortest, and the epoch starts with the longest of
  all), the two ways' steps interleaved (so a slow spell of the machine hits both); seconds per step
  and examples per second.

Check: each sampler's epoch is a permutation of the training set (every example once), so the ways
differ only in which examples share a batch.
"""

from __future__ import annotations

import copy
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import torch

BATCH, SOURCE_TOKENS, TARGET_TOKENS, STEPS, THREADS, SEED = 8, 384, 192, 24, 2, 0


def ccs_features(tokenizer) -> list[dict]:
    """The zoo's CCS training features: its data builder's train split, tokenized through ``prepare``."""
    from training.seq2seq import features
    from variants.ccs import CCSVariant
    from variants.ccs.data import build_source

    records = build_source("scitldr", long_repeats=3)["train"]
    lengths = SimpleNamespace(max_source_length=SOURCE_TOKENS, max_target_length=TARGET_TOKENS)  # all features reads
    return features(CCSVariant(), records, "prompt", None, tokenizer, lengths)


def epoch_orders(items: list[dict]) -> dict[str, list[int]]:
    """One epoch's example order under each sampler, seeded as the Trainer seeds them."""
    from torch.utils.data import RandomSampler
    from transformers.trainer_pt_utils import LengthGroupedSampler

    generator = lambda: torch.Generator().manual_seed(SEED)  # noqa: E731 - a fresh, equal seed for each
    return {
        "random batches (the Trainer's default)": list(RandomSampler(items, generator=generator())),
        "grouped by source length": list(
            LengthGroupedSampler(BATCH, lengths=[len(i["input_ids"]) for i in items], generator=generator())
        ),
    }


def utilisation(items: list[dict], order: list[int], key: str) -> float:
    """Tokens over padded positions, for ``key`` over the batches of ``order``."""
    tokens = padded = 0
    for start in range(0, len(order), BATCH):
        sizes = [len(items[i][key]) for i in order[start : start + BATCH]]
        tokens, padded = tokens + sum(sizes), padded + max(sizes) * len(sizes)
    return tokens / padded


def spread(batches: int) -> list[int]:
    """``STEPS`` batch positions evenly over an epoch, at the middle of equal stretches."""
    return [int((step + 0.5) * batches / STEPS) for step in range(STEPS)]


class Way:
    def __init__(self, name: str, model, bf16: bool):
        from training.bf16 import Bf16Copy

        self.name, self.model, self.seconds = name, copy.deepcopy(model).train(), 0.0
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=2e-4, fused=True)
        self.compute = Bf16Copy(self.model) if bf16 else None

    def step(self, batch) -> None:
        start = time.perf_counter()
        if self.compute:
            self.compute.step(batch, self.optimizer)
        else:
            self.model(**batch).loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
        self.seconds += time.perf_counter() - start


def run() -> str:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from training.base import convert_minilm
    from training.batches import collate
    from training.seq2seq import cpu_bf16_supported

    torch.set_num_threads(THREADS)
    with tempfile.TemporaryDirectory() as tmp:
        base = convert_minilm(Path(tmp) / "minilm-bart")
        tokenizer = AutoTokenizer.from_pretrained(base)
        model = AutoModelForSeq2SeqLM.from_pretrained(base, dtype=torch.float32)
    items = ccs_features(tokenizer)
    orders = epoch_orders(items)
    for order in orders.values():
        assert sorted(order) == list(range(len(items))), "a sampler's epoch must hold every example once"
    bf16 = cpu_bf16_supported()
    ways = [Way(name, model, bf16) for name in orders]
    pad = collate(tokenizer.pad_token_id)
    warm = pad([items[i] for i in range(BATCH)])
    for way in ways:  # AdamW state and the allocator, untimed
        way.step(warm)
        way.seconds = 0.0
    batches = -(-len(items) // BATCH)
    for position in spread(batches):
        for way in ways:
            way.step(pad([items[i] for i in orders[way.name][position * BATCH : (position + 1) * BATCH]]))
    reference = ways[0]
    rows = []
    for way in ways:
        per_step = way.seconds / STEPS
        rows.append(
            f"| {way.name} | {utilisation(items, orders[way.name], 'input_ids'):.1%} | "
            f"{utilisation(items, orders[way.name], 'labels'):.1%} | {per_step:.2f} | {BATCH / per_step:.2f} | "
            f"{reference.seconds / way.seconds:.2f}x | {batches * per_step / 3600:.1f} h |"
        )
    return "\n".join(
        [
            "## Training throughput on CPU: random batches vs grouped by source length (CCS, MiniLM-BART)",
            "",
            f"The SciTLDR part of the zoo's CCS training set ({len(items):,} examples, `--long-repeats 3`, CCSBench prompt, "
            f"at most {SOURCE_TOKENS} source / {TARGET_TOKENS} target tokens), batch {BATCH}, fused AdamW, "
            f"{'bf16 copy' if bf16 else 'fp32'} (this CPU's training precision), {THREADS} threads. Padding counted over "
            f"a whole epoch ({batches:,} batches); time over {STEPS} batches spread evenly over each epoch, steps "
            "interleaved. One epoch is estimated from those batches.",
            "",
            "| way | source positions that are tokens | target positions that are tokens | s/step | examples/s | "
            "speed-up | one epoch |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
