"""The page's own words: what is served and how to add models, the variant's about line, the notes that
explain the Compare and Sweep tabs, and the API help at this page's address. User-supplied strings in
them (model names, reasons) are escaped (:func:`space.views.escape_markdown`)."""

from __future__ import annotations

import gradio as gr

from .service import Service
from .standing import label
from .views import escape_markdown

ADD_MODELS = (
    "To add models: `python -m training zoo` trains one per variant into `checkpoints/`, and "
    "`python -m space --models-dir checkpoints` serves every checkpoint found there."
)


def trained_models(service: Service, variant: str) -> list[str]:
    return [e.model for e in service.catalog.models(variant, available=True) if e.source != "baseline"]


def onboarding(service: Service) -> str:
    """The page's first line on what is served: plainly, only baselines when no trained model is here."""
    if any(trained_models(service, v) for v in service.catalog.registry):
        return "Trained models and each variant's model-free baseline are served. " + ADD_MODELS
    return (
        "**Only the model-free baselines are served here** (extractive methods from each paper, no "
        "neural model): the variant titles name the papers' models, which are not loaded. " + ADD_MODELS
    )


def about(service: Service, variant_id: str) -> str:
    v = service.catalog.variant(variant_id)
    text = (
        f"**{v.title}** — {v.description} Paper: [{v.paper.title}]({v.paper.url}) ({v.paper.authors}, {v.paper.year})."
    )
    if not trained_models(service, variant_id):
        text += f"\n\n_Served for this variant: only its baseline, {escape_markdown(v.baseline().name)}._"
    text += standings(service, variant_id)
    missing = service.catalog.models(variant_id, available=False)
    return text + "".join(
        f"\n\n_unavailable: {escape_markdown(e.model)} — {escape_markdown(e.reason)}_" for e in missing
    )


def standings(service: Service, variant_id: str) -> str:
    """Which numbers order the model list, and each measured model's one line against the baseline
    (nothing when the variant serves one model: there is no order to explain)."""
    metrics, served = service.catalog.ordered_by.get(variant_id), service.catalog.models(variant_id, available=True)
    if not metrics or len(served) < 2:
        return ""
    lines = [
        f"\n- **{escape_markdown(e.model)}** (as served): {escape_markdown(e.standing)}" for e in served if e.standing
    ]
    order = ", then ".join(label(m) for m in metrics)
    return f"\n\n_Models are listed best first by their leaderboard test score ({order})._" + "".join(lines)


def comparable(service: Service, variant_id: str) -> bool:
    """Whether the variant serves two or more models (else Compare has nothing to compare)."""
    return len(service.catalog.models(variant_id, available=True)) >= 2


def compare_note(service: Service, variant_id: str) -> str:
    if comparable(service, variant_id):
        return "Pick two or more models: the same document and controls go through each."
    return "_Only the baseline is served for this variant, so there is nothing to compare it with yet._ " + ADD_MODELS


def sweep_note(names: list[str], variant_title: str) -> str:
    if names:
        return (
            "One summary per value of the chosen control (every choice, or every number of a short "
            "range such as the CCS length bins 0-4), generated as one batch."
        )
    return (
        f"_{escape_markdown(variant_title)} has no control with a list of values to sweep (its controls "
        "are free text): try values one by one with Generate._"
    )


def api_help(base_url: str) -> str:
    return f"""Scripts call the same service through `gradio_client` (controls as one JSON object):

```python
from gradio_client import Client
client = Client("{base_url}")
summary, result = client.predict("The striker scored twice ...", "topic", "baseline", '{{"topic": "sport"}}', "",
                                  api_name="/summarize")
print(summary, result["scores"])
```
Endpoints: `/summarize`, `/compare` (two or more models, comma-separated), `/sweep` (every value of a
choice, or of a short integer range such as the CCS length bins), `/score`, `/compare_readers` (one
article, two readers of the persona variant, and how far apart their summaries are), `/variants` (the
catalog and every variant's control schema). `/summarize`, `/compare` and `/sweep` also take `guidance=`
(the control strength γ, 1 to 10) and `constraints=` (true: the decoding rules, as served; false: the
model alone). Bad input comes back as an error naming the problem and the allowed values; long inputs
are cut, with a notice in the result."""


def page_url(request: gr.Request) -> str:
    """This page's address as the browser sees it (behind the Hub's proxy too): the API example's URL."""
    headers = getattr(request, "headers", None) or {}
    host = headers.get("x-forwarded-host") or headers.get("host")
    scheme = (headers.get("x-forwarded-proto") or "http").split(",")[0].strip()
    return f"{scheme}://{host}/" if host else "<this page's address>"
