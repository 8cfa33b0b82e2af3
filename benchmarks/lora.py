"""LoRA versus full fine-tuning of the same random T5: trainable share, peak training memory, step time.

The CCS trainer (:mod:`variants.ccs.train`) trains a LoRA adapter (r=8, alpha=32, on ``q`` and ``v``)
instead of every weight, as the paper does for Flan-T5-XL/XXL (App. A). Measured at two sizes of
Flan-T5's architecture, both randomly initialized (nothing downloaded): the ``--preset tiny`` model
the tests train, and the layer shapes of google/flan-t5-small (8+8 layers, d_model 512), where the
training state is large enough to see.

Each (size, way) runs in its own Python process, so its memory is its own: a thread samples the
resident set size (``/proc/self/statm``) during a first, untimed step (it allocates AdamW's state
and reaches the activation peak); "peak training memory" is the highest RSS minus the RSS just
before it (the model already built): gradients, AdamW's two moments, activations. The timed steps
run after it, without the sampler. Same batch (random token ids,
seeded), same optimizer (AdamW over the trainable parameters, lr 1e-4), same seed for the weights.

Each run uses one CPU thread: on a shared machine, OpenMP threads that wait for busy cores spin, and
a tiny model's step then varies 50-fold between runs.

Check: LoRA starts with B = 0, so before any step both models are the same function; the table
reports the difference of their first loss on the same batch (asserted to be 0 up to float rounding).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

SIZES = {
    "tiny preset": None,  # variants.presets.TINY_T5 with the tiny tokenizer's vocabulary
    "flan-t5-small shape": dict(
        vocab_size=32128,
        d_model=512,
        d_kv=64,
        d_ff=1024,
        num_layers=8,
        num_decoder_layers=8,
        num_heads=6,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=False,
        dropout_rate=0.0,
    ),
}
WAYS = ("full", "lora")
BATCH, SOURCE_TOKENS, TARGET_TOKENS, STEPS = 2, 128, 32, 3


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def measure(size: str, way: str) -> dict:
    """One training run (in the calling process): parameters, first loss, peak memory, step time."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    from variants.ccs.train import LoraSettings, lora_config
    from variants.presets import tiny_t5_config, tiny_t5_tokenizer

    torch.set_num_threads(1)  # see the module docstring
    torch.manual_seed(0)
    config = (
        tiny_t5_config(tiny_t5_tokenizer())
        if SIZES[size] is None
        else T5Config(pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, **SIZES[size])
    )
    model = T5ForConditionalGeneration(config)
    if way == "lora":
        from peft import get_peft_model

        model = get_peft_model(model, lora_config(LoraSettings()))
    generator = torch.Generator().manual_seed(1)
    batch = {
        "input_ids": torch.randint(3, config.vocab_size, (BATCH, SOURCE_TOKENS), generator=generator),
        "labels": torch.randint(3, config.vocab_size, (BATCH, TARGET_TOKENS), generator=generator),
    }
    model.eval()
    with torch.no_grad():
        first_loss = float(model(**batch).loss)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-4)

    def step() -> float:
        start = time.perf_counter()
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return time.perf_counter() - start

    # Memory: sampled during the warm-up step, which allocates the optimizer state and reaches the
    # activation peak; the timed steps run without the sampler (its thread would take the GIL).
    before, peak, sampling = _rss_bytes(), [0], [True]

    def sample():
        while sampling[0]:
            peak[0] = max(peak[0], _rss_bytes())
            time.sleep(0.0005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    step()
    sampling[0] = False
    sampler.join()
    times = sorted(step() for _ in range(STEPS))
    return {
        "trainable": sum(p.numel() for p in trainable),
        "total": sum(p.numel() for p in model.parameters()),
        "first_loss": first_loss,
        "peak_mb": max(peak[0] - before, 0) / 2**20,
        "step_s": times[len(times) // 2],
    }


def run_child(size: str, way: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.lora", size, way], capture_output=True, text=True, env=env, timeout=600
    )
    if done.returncode:
        raise RuntimeError(f"benchmarks.lora {size} {way} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run() -> str:
    rows = []
    for size in SIZES:
        full, lora = (run_child(size, way) for way in WAYS)
        difference = abs(full["first_loss"] - lora["first_loss"])
        assert difference <= 1e-5 * abs(full["first_loss"]), f"{size}: LoRA at B = 0 must equal the base model"
        for way, result in (("full fine-tuning", full), ("LoRA r=8 on q, v", lora)):
            rows.append(
                f"| {size} | {way} | {result['trainable']:,} of {result['total']:,} "
                f"({100 * result['trainable'] / result['total']:.2f}%) | {result['peak_mb']:.0f} | "
                f"{result['peak_mb'] / full['peak_mb']:.2f} | {result['step_s'] * 1000:.0f} | "
                f"{result['step_s'] / full['step_s']:.2f} | {difference:.1e} |"
            )
    return "\n".join(
        [
            "## LoRA vs full fine-tuning (CCS trainer)",
            "",
            f"Random T5 (Flan-T5 architecture); batch {BATCH} x {SOURCE_TOKENS} source / {TARGET_TOKENS} target tokens, "
            f"AdamW; median of {STEPS} steps after a warm-up step, each way in its own process, one CPU thread. Peak memory: highest RSS "
            "during training minus RSS before it (gradients, optimizer state, activations). Max abs difference: first "
            "loss of the LoRA model vs the full model (LoRA's B = 0 at start).",
            "",
            "| size | way | trainable parameters | peak training memory (MB) | memory ratio | step (ms) | time ratio "
            "| max abs difference |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )


if __name__ == "__main__":
    if len(sys.argv) == 3:  # a child: one measurement, as JSON on the last line
        print(json.dumps(measure(sys.argv[1], sys.argv[2])))
    else:
        print(run())
