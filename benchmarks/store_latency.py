"""What a plain clone's Space serves: each stored model's latency on one request (``python -m benchmarks store``).

For every model of the store (``store/index.json``) beside its variant's baseline, as ``python -m space``
serves them (:func:`space.catalog.build_catalog` with no models folder and no catalog file): one
``Service.summarize`` call on a 400-word document (the variant's first test document of at least 400
words cut to 400, else its longest), with that example's controls, at the model's default control
strength and at γ = 1. One warm-up call, then the median (p50) of ``REPEATS`` calls of server-side
time (generation + live metrics), ``torch.set_num_threads(THREADS)``. The goal is p50 ≤ 2 s per model.
"""
from __future__ import annotations

import os

import numpy as np

REPEATS = 5
WORDS = 400


def request(variant) -> tuple[str, dict]:
    """A 400-word document of the variant's test set (or its longest) with that example's controls."""
    records = variant.test_examples(200)
    record = next((r for r in records if len(r["document"].split()) >= WORDS),
                  max(records, key=lambda r: len(r["document"].split())))
    return " ".join(record["document"].split()[:WORDS]), record["controls"]


def p50(service, document: str, variant: str, model: str, controls: dict, guidance: float | None) -> float:
    service.summarize(document, variant, model, controls, guidance=guidance)  # warm-up: first-call costs out
    times = [service.summarize(document, variant, model, controls, guidance=guidance)["seconds"]
             for _ in range(REPEATS)]
    return float(np.median([t["generate"] + t["metrics"] for t in times]))


def run() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    import store
    from benchmarks.generation import THREADS
    from space.catalog import build_catalog
    from space.service import Service

    torch.set_num_threads(THREADS)
    models = store.servable()
    if not models:
        held = ", ".join(store.names()) or "nothing"
        return f"## Stored models served\n\nNo stored variant model to serve (the store holds: {held})."
    service = Service(build_catalog(None, catalog_file=None))
    rows = []
    for model in models:
        variant = service.catalog.registry[model.variant]
        document, controls = request(variant)
        baseline = next(e.model for e in service.catalog.models(model.variant) if e.source == "baseline")
        default = service.default_guidance(model.variant, model.name)
        plain = p50(service, document, model.variant, model.name, controls, 1.0)
        guided = p50(service, document, model.variant, model.name, controls, None) if default != 1 else plain
        base_s = p50(service, document, model.variant, baseline, controls, None)
        rows.append(f"| {model.name} | {len(document.split())} | {plain:.2f} s | {default:g} | {guided:.2f} s | "
                    f"{guided / plain:.2f}× | {base_s:.2f} s | {'yes' if max(plain, guided) <= 2 else 'no'} |")
    return "\n".join([
        "## Stored models served",
        "",
        f"`python -m space` with no flags (the store's models beside each baseline); one `Service.summarize` call "
        f"on a {WORDS}-word test document with its own controls; p50 of {REPEATS} calls after one warm-up, "
        f"server-side (generation + live metrics), `torch.set_num_threads({THREADS})`.",
        "",
        "| model | words | p50 at γ = 1 | default γ | p50 at default γ | ratio | baseline p50 | p50 ≤ 2 s |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
    ])


if __name__ == "__main__":
    print(run())
