"""The papers' base models at their published shapes, random weights: what a training step costs.

    python -m benchmarks.paper_shapes [--shapes NAME ...] [--steps 5] [--json FILE]   # on a GPU
    python -m benchmarks.paper_shapes --tiny      # the same code at the tiny presets' sizes, on any device

Each shape trains a few steps at its paper's batch size and sequence lengths, as ``python -m training``
trains on a GPU (bf16 autocast over fp32 weights, AdamW), once plainly and once with activation
(gradient) checkpointing; the table gives the peak GPU memory and the examples per second after an
untimed first step (which allocates AdamW's state). Memory and speed depend on the shapes, not on
the weights' values, so nothing is downloaded: each base is built from its published configuration
(the numbers below are those of facebook/bart-large and google/flan-t5-large / -xl / -xxl) with the
variant's own architecture on top (transformers 5 ties T5's output layer to its input embeddings, so a
Flan-T5 built here holds 32,128 x d_model weights fewer than the checkpoint). Tokens are random ids,
every sequence at its full length (the worst batch; real batches, grouped by length, are shorter).

Flan-T5-XXL with LoRA (CCSBench's model) is counted but not stepped by default: its fp32 base alone
is about 44 GB, and training it is what training/configs/fsdp-flan-t5-lora.yaml shards across GPUs.
``--tiny`` runs every shape at the tiny presets' sizes: on a CPU it checks that each one builds and
steps, and measures nothing about the papers' sizes.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field

import torch

# facebook/bart-large (config.json): the base of topic, TDSum, GSum (entity) and persona
BART_LARGE = dict(
    vocab_size=50265,
    d_model=1024,
    encoder_layers=12,
    decoder_layers=12,
    encoder_attention_heads=16,
    decoder_attention_heads=16,
    encoder_ffn_dim=4096,
    decoder_ffn_dim=4096,
    max_position_embeddings=1024,
    dropout=0.1,
    attention_dropout=0.1,
    activation_dropout=0.1,
)
# google/flan-t5-* (config.json): T5 v1.1 blocks, gated GELU, untied output layer, 32,128 tokens
FLAN_T5 = dict(
    vocab_size=32128,
    d_kv=64,
    num_layers=24,
    num_decoder_layers=24,
    feed_forward_proj="gated-gelu",
    tie_word_embeddings=False,
    dropout_rate=0.1,
)
FLAN_T5_SIZES = {
    "large": dict(d_model=1024, d_ff=2816, num_heads=16),
    "xl": dict(d_model=2048, d_ff=5120, num_heads=32),
    "xxl": dict(d_model=4096, d_ff=10240, num_heads=64),
}
TINY_VOCAB = 2000  # the tiny tokenizers' size
# persona's user-embedding, at its trainer's defaults
PERSONA_HISTORY = dict(user_vectors=4, max_history=32, max_title_tokens=24, title_encoder="encoder")


@dataclass(frozen=True)
class Shape:
    name: str
    variants: str  # which variants train this shape
    base: str  # the published base whose configuration it copies
    batch: int  # per-device examples as the paper trained (variants/<v>/train.py PAPER_DEFAULTS; else the Trainer's 8)
    source_tokens: int = 1024  # DataArguments' default: BART's whole window
    target_tokens: int = 128
    lora: bool = False  # CCS: a LoRA adapter, every base weight frozen
    stepped: bool = True  # measured unless named (False: counted only)
    extra: dict = field(default_factory=dict)


SHAPES = [
    Shape("bart-large", "topic (tag, prepend, prepend-tag), persona (prefixes)", "facebook/bart-large", 4),
    Shape("tdsum-bart-large", "tdsum", "facebook/bart-large", 8),  # x 4 gradient accumulation in the paper
    Shape("gsum-bart-large", "entity", "facebook/bart-large", 4),
    Shape("persona-bart-large", "persona (user-embedding)", "facebook/bart-large", 4),
    Shape("flan-t5-large-lora", "ccs", "google/flan-t5-large", 8, target_tokens=320, lora=True),
    Shape("flan-t5-xl-lora", "ccs", "google/flan-t5-xl", 8, target_tokens=320, lora=True),
    Shape(
        "flan-t5-xxl-lora",
        "ccs (CCSBench's model)",
        "google/flan-t5-xxl",
        8,
        target_tokens=320,
        lora=True,
        stepped=False,
    ),
]


def bart_config(config_class, tiny: bool, **extra):
    from variants.presets import TINY_BART

    return config_class(**({"vocab_size": TINY_VOCAB, **TINY_BART} if tiny else BART_LARGE), **extra)


def build(shape: Shape, tiny: bool = False):
    """The shape's model with random weights (the tiny presets' sizes with ``tiny``), as its trainer wraps it."""
    from transformers import BartConfig, BartForConditionalGeneration, T5Config, T5ForConditionalGeneration

    from models import (
        GSumConfig,
        GSumForConditionalGeneration,
        PersonaBartConfig,
        PersonaBartForConditionalGeneration,
        TDSumConfig,
        TDSumForConditionalGeneration,
    )

    if shape.name == "bart-large":
        return BartForConditionalGeneration(bart_config(BartConfig, tiny))
    if shape.name == "tdsum-bart-large":
        from variants.tdsum.train import Arguments, method_settings

        layers = bart_config(BartConfig, tiny).encoder_layers
        return TDSumForConditionalGeneration(bart_config(TDSumConfig, tiny, **method_settings(Arguments(), layers)))
    if shape.name == "gsum-bart-large":
        return GSumForConditionalGeneration(bart_config(GSumConfig, tiny, signal_top_layers=1))
    if shape.name == "persona-bart-large":
        return PersonaBartForConditionalGeneration(bart_config(PersonaBartConfig, tiny, **PERSONA_HISTORY))
    from peft import get_peft_model

    from variants.ccs.train import LoraSettings, lora_config
    from variants.presets import TINY_T5

    size = FLAN_T5_SIZES[shape.name.split("-")[2]]
    config = T5Config(
        **({"vocab_size": TINY_VOCAB, **TINY_T5} if tiny else {**FLAN_T5, **size}), decoder_start_token_id=0
    )
    return get_peft_model(T5ForConditionalGeneration(config), lora_config(LoraSettings()))


def parameters(model) -> tuple[int, int]:
    """(all, trainable) parameters."""
    return (sum(p.numel() for p in model.parameters()), sum(p.numel() for p in model.parameters() if p.requires_grad))


def batch(shape: Shape, model, device: str, tiny: bool) -> dict[str, torch.Tensor]:
    """Random token ids at the full lengths, with the inputs the architecture adds (its control)."""
    from variants.entity import SIGNAL_LENGTH

    n, source, target = (2, 32, 8) if tiny else (shape.batch, shape.source_tokens, shape.target_tokens)
    vocabulary = model.config.vocab_size
    ids = lambda *size: torch.randint(4, vocabulary, size, device=device)  # noqa: E731 - past the special tokens
    out = {"input_ids": ids(n, source), "labels": ids(n, target)}
    if shape.name == "tdsum-bart-large":
        out["tfidf"] = torch.rand(n, source, device=device)  # a score per source token
    elif shape.name == "gsum-bart-large":
        out["signal_input_ids"] = ids(n, 16 if tiny else SIGNAL_LENGTH["sentences"])
    elif shape.name == "persona-bart-large":
        titles, tokens = (4, 6) if tiny else (PERSONA_HISTORY["max_history"], PERSONA_HISTORY["max_title_tokens"])
        out["history_ids"] = ids(n, titles, tokens)
    return out


def measure(shape: Shape, checkpointing: bool, steps: int, device: str, tiny: bool) -> dict:
    """Peak memory (GPU) and examples per second of ``steps`` timed training steps."""
    torch.manual_seed(0)
    model = build(shape, tiny).to(device).train()
    if checkpointing:  # the base model's layers; on a peft model too (its frozen inputs need no gradient)
        base = model.get_base_model() if shape.lora else model
        base.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5, fused=True)
    inputs, (total, trainable) = batch(shape, model, device, tiny), parameters(model)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times = []
    try:
        for _ in range(steps + 1):
            start = time.perf_counter()
            with torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda"):
                loss = model(**inputs).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if device == "cuda":
                torch.cuda.synchronize()  # kernels run asynchronously: wait before reading the clock
            times.append(time.perf_counter() - start)
    except torch.OutOfMemoryError:
        return {"parameters": total, "trainable": trainable, "out_of_memory": True}
    finally:
        del model, optimizer
        if device == "cuda":
            torch.cuda.empty_cache()
    examples = len(inputs["input_ids"])
    return {
        "parameters": total,
        "trainable": trainable,
        "examples_per_second": examples / (sum(times[1:]) / steps),
        "loss": loss.item(),
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else None,
    }


def count(shape: Shape) -> tuple[int, int]:
    """(all, trainable) parameters at the paper's size, built on the meta device (no memory, no time)."""
    with torch.device("meta"):
        return parameters(build(shape))


def run(names: list[str] | None = None, steps: int = 5, tiny: bool = False, sizes_only: bool = False) -> list[dict]:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not (tiny or sizes_only):
        raise SystemExit(
            "no GPU here: the papers' shapes would take hours per step on a CPU; --tiny checks the code, "
            "--sizes lists the table without measuring"
        )
    chosen = [] if sizes_only else [s for s in SHAPES if (s.name in names if names else s.stepped)]
    rows = []
    for shape in chosen:
        for checkpointing in (False, True):
            row = {
                "shape": shape.name,
                "variants": shape.variants,
                "base": shape.base,
                "checkpointing": checkpointing,
                "batch": 2 if tiny else shape.batch,
                "tokens": "32/8" if tiny else f"{shape.source_tokens}/{shape.target_tokens}",
            }
            rows.append({**row, **measure(shape, checkpointing, steps, device, tiny)})
    for shape in SHAPES if not tiny else ():  # the ones not stepped: their size alone
        if shape not in chosen:
            total, trainable = count(shape)
            rows.append(
                {
                    "shape": shape.name,
                    "variants": shape.variants,
                    "base": shape.base,
                    "checkpointing": None,
                    "batch": shape.batch,
                    "tokens": f"{shape.source_tokens}/{shape.target_tokens}",
                    "parameters": total,
                    "trainable": trainable,
                }
            )
    return rows


CHECKPOINTING = {False: "no", True: "yes", None: "not stepped"}


def table(rows: list[dict], device: str) -> str:
    lines = [
        "| shape | variants | parameters (trainable) | batch | source/target tokens | checkpointing | "
        "peak memory | examples/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        memory = (
            "out of memory"
            if r.get("out_of_memory")
            else (f"{r['peak_memory_gib']:.1f} GiB" if r.get("peak_memory_gib") is not None else "—")
        )
        speed = f"{r['examples_per_second']:.1f}" if "examples_per_second" in r else "—"
        size = f"{r['parameters'] / 1e6:,.1f}M ({r['trainable'] / 1e6:,.1f}M)"
        lines.append(
            f"| {r['shape']} | {r['variants']} | {size} | "
            f"{r['batch']} | {r['tokens']} | {CHECKPOINTING[r['checkpointing']]} | {memory} | {speed} |"
        )
    footer = f"_{device}, torch {torch.__version__}, bf16 autocast on a GPU, {time.strftime('%Y-%m-%d')}._"
    return "\n".join(lines) + "\n\n" + footer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paper_shapes", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shapes",
        nargs="+",
        choices=[s.name for s in SHAPES],
        help="shapes to step (default: all but flan-t5-xxl-lora)",
    )
    parser.add_argument("--steps", type=int, default=5, help="timed steps per shape, after one untimed (default 5)")
    parser.add_argument(
        "--tiny", action="store_true", help="the tiny presets' sizes: a check of the code, not a measurement"
    )
    parser.add_argument("--sizes", action="store_true", help="the table's shapes and sizes alone, nothing stepped")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    a = parser.parse_args(argv)
    rows = run(a.shapes, a.steps, a.tiny, a.sizes)
    device = (
        torch.cuda.get_device_name(0)
        if torch.cuda.is_available() and not a.sizes
        else "CPU, tiny shapes"
        if a.tiny
        else "nothing measured"
    )
    print(table(rows, device))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": device, "tiny": a.tiny, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
