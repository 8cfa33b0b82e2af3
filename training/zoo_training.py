"""The zoo's training steps, one model at a time: timing a step at a model's shape (what
``--minutes-per-model`` divides), building a variant's data, training a variant model as the store keeps
it (a LoRA adapter on ``general/``, through :func:`training.cli.train_variant`, the command line's path)
and clearing a finished model's resumable states. :mod:`training.zoo` calls them in order.
"""

from __future__ import annotations

import time
from pathlib import Path

from .zoo_models import Budget, ZooModel


def measure_step_seconds(
    base: Path, batch_size: int, source_tokens: int, target_tokens: int, repeats: int = 2
) -> float:
    """Seconds per training step of the full model at one shape (batch, token lengths; AdamW),
    in the precision training uses here (:func:`training.seq2seq.default_precision`). Persona's
    512-token sources take about twice the 256-token step: timing each model at its own shape is what
    makes ``--minutes-per-model`` minutes (a LoRA step, with fewer weights to update, is a little faster)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from variants.seq2seq import pick_device

    from .bf16 import Bf16Copy
    from .seq2seq import default_precision

    device, precision = pick_device(), default_precision()  # where and how the Trainer will compute
    model = AutoModelForSeq2SeqLM.from_pretrained(base).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)  # as the Trainer runs here
    low = Bf16Copy(model) if precision == "bf16-weights" else None
    vocabulary = model.config.vocab_size  # ids past the special tokens, inside any vocabulary (a tiny one too)
    batch = {
        "input_ids": torch.randint(vocabulary // 2, vocabulary, (batch_size, source_tokens), device=device),
        "labels": torch.randint(vocabulary // 2, vocabulary, (batch_size, target_tokens), device=device),
    }
    times = []
    for _ in range(repeats + 1):  # the first step allocates AdamW's state: not timed
        start = time.perf_counter()
        if low:
            low.step(batch, optimizer)
        else:
            with torch.autocast(device, dtype=torch.bfloat16, enabled=precision == "bf16"):  # the Trainer's --bf16
                loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        if device == "cuda":
            torch.cuda.synchronize()  # kernels run asynchronously: wait for them before reading the clock
        times.append(time.perf_counter() - start)
    return min(times[1:])


def remove_checkpoints(folder: Path) -> None:
    """A finished model's resumable states (weights + AdamW, ~0.4 GB each) are no longer needed."""
    import shutil

    for checkpoint in folder.glob("checkpoint-*"):
        shutil.rmtree(checkpoint)


def build_data(model: ZooModel, root: Path, budget: Budget) -> Path:
    from . import cli

    folder = root / "data" / model.variant
    if not (folder / "test.jsonl").is_file():
        cli.build_data(
            model.variant, ["--out", str(folder), *model.build, *(model.quick_build if budget.quick else ())]
        )
    return folder


def train_variant_model(model: ZooModel, general: Path, data: Path, out: Path, budget: Budget) -> None:
    import torch

    from . import cli
    from .seq2seq import latest_checkpoint

    steps = budget.steps(model)
    source, target = budget.shape(model)
    values = {
        "method": model.method,
        "base_model": str(general),
        "train_file": str(data / "train.jsonl"),
        "output_dir": str(out),
        "max_steps": steps,
        "per_device_train_batch_size": budget.batch(model),
        "gradient_accumulation_steps": 1,
        "learning_rate": model.learning_rate,
        "warmup_steps": min(50, steps // 10),
        "max_source_length": source,
        "max_target_length": target,
        "save_steps": 100,
        "save_total_limit": 2,
        "logging_steps": 10,
        "report_to": "none",
        "generation_num_beams": 2,
        "dataloader_pin_memory": False,
        "adapter": "lora",
        "max_train_samples": budget.max_train_samples,
        "max_train_seconds": budget.max_train_seconds,
        "resume_from_checkpoint": str(resume) if (resume := latest_checkpoint(out)) else None,
        **dict(model.train),
    }
    if not torch.cuda.is_available():  # as train_general: the processes of a launch train together over gloo
        values["use_cpu"] = True
    if model.variant == "persona":
        values["readers"] = str(data / "persona_readers.json")
    cli.train_variant(model.variant, *cli.training_arguments(model.variant, **values))
