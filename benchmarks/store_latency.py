"""What a plain clone's Space serves: each stored model's latency on one request (``python -m benchmarks store``).

For every model of the store (``store/index.json``) beside its variant's baseline, as ``python -m space``
serves them (:func:`space.catalog.build_catalog` with no models folder and no catalog file): one
``Service.summarize`` call on a 400-word document (the variant's first test document of at least 400
words cut to 400, else its longest), with that example's controls, at the model's default control
strength, at γ = 1 and at γ = 2 (the Space's control-strength slider moved: guided generation, each
row decoded beside its control-free twin in one pass). One warm-up call, then the median (p50) of
``REPEATS`` calls of server-side time (generation + live metrics), ``torch.set_num_threads(THREADS)``.
The goal is p50 ≤ 2 s per model.

Side by side, in the same run on the same request, γ = 1 the transformers way: the LM head as
``nn.Linear`` computes it (SteerSum generates with :class:`variants.speedups.LMHead`'s product),
``generate`` reordering the cross-attention cache with the beams (SteerSum reorders only the
self-attention cache, :class:`variants.speedups.BeamSearchCache`) and fp32 weights where a stored model
generates with int8 ones (its record's ``dtype``: ``int8-weights``). Both ways should write the same
summary; the table says whether they did.
"""

from __future__ import annotations

import contextlib
import os
from unittest import mock

import numpy as np

REPEATS = 5
WORDS = 400
SLIDER = 2.0  # a control strength a user picks on the page


def request(variant) -> tuple[str, dict]:
    """A 400-word document of the variant's test set (or its longest) with that example's controls."""
    records = variant.evaluation.test_examples(200)
    record = next(
        (r for r in records if len(r["document"].split()) >= WORDS),
        max(records, key=lambda r: len(r["document"].split())),
    )
    return " ".join(record["document"].split()[:WORDS]), record["controls"]


def p50(service, document: str, variant: str, model: str, controls: dict, guidance: float | None) -> tuple[float, str]:
    """Median server-side seconds of ``REPEATS`` calls after a warm-up, and the summary they wrote."""
    service.summarize(document, variant, model, controls, guidance=guidance)  # warm-up: first-call costs out
    answers = [service.summarize(document, variant, model, controls, guidance=guidance) for _ in range(REPEATS)]
    return float(np.median([a["seconds"]["generate"] + a["seconds"]["metrics"] for a in answers])), answers[-1][
        "summary"
    ]


@contextlib.contextmanager
def transformers_way():
    """Generation as transformers does it by default: ``nn.Linear``'s LM head, both caches reordered,
    the model's own fp32 weights."""
    from transformers.cache_utils import EncoderDecoderCache

    from variants.seq2seq import GenerationSettings
    from variants.speedups import BeamSearchCache

    with (
        mock.patch.object(BeamSearchCache, "reorder_cache", EncoderDecoderCache.reorder_cache),
        mock.patch("variants.speedups.fast_lm_head", lambda model: contextlib.nullcontext()),
        mock.patch.object(GenerationSettings, "model", lambda self, model: model),
    ):
        yield


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
        plain, summary = p50(service, document, model.variant, model.name, controls, 1.0)
        with transformers_way():
            reference, reference_summary = p50(service, document, model.variant, model.name, controls, 1.0)
        guided = p50(service, document, model.variant, model.name, controls, None)[0] if default != 1 else plain
        slider = p50(service, document, model.variant, model.name, controls, SLIDER)[0]
        base_s = p50(service, document, model.variant, baseline, controls, None)[0]
        rows.append(
            f"| {model.name} | {len(document.split())} | {len(summary.split())} | {reference:.2f} s | "
            f"{plain:.2f} s | {reference / plain:.2f}× | {'yes' if summary == reference_summary else 'no'} | "
            f"{default:g} | {guided:.2f} s | {slider:.2f} s | {slider / plain:.2f}× | {base_s:.2f} s | "
            f"{'yes' if max(plain, guided) <= 2 else 'no'} |"
        )
    return "\n".join(
        [
            "## Stored models served",
            "",
            f"`python -m space` with no flags (the store's models beside each baseline); one `Service.summarize` call "
            f"on a {WORDS}-word test document (or the test set's longest) with its own controls; p50 of {REPEATS} calls "
            f"after one warm-up, server-side (generation + live metrics), `torch.set_num_threads({THREADS})`. "
            "\"transformers' way\": the same model and request with `nn.Linear`'s LM head product, both caches "
            "reordered with the beams and fp32 weights (where a model's record asks for int8 decoder weights), in the "
            "same run.",
            "",
            f"| model | words | summary words | p50 at γ = 1, transformers' way | p50 at γ = 1, as served | speed-up | "
            f"same summary | default γ | p50 at default γ | p50 at γ = {SLIDER:g} | ratio to γ = 1 | baseline p50 | "
            "p50 ≤ 2 s (default γ) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )


if __name__ == "__main__":
    print(run())
