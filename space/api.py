"""The Space's named API endpoints (``/summarize``, ``/compare``, ``/sweep``, ``/score``, ``/variants``):
plain functions over :class:`space.service.Service` whose signatures (type hints, docstrings) are the
API's documentation. They take the controls as one JSON object, so scripts need no widget layout."""

from __future__ import annotations

from collections.abc import Callable

from .service import Service


def api_functions(service: Service) -> dict[str, Callable]:
    """The named endpoints; their signatures (type hints, docstrings) are the API's documentation."""

    def summarize(
        document: str,
        variant: str,
        model: str = "baseline",
        controls: str = "{}",
        reference: str = "",
        guidance: float | None = None,
        constraints: bool = True,
    ) -> tuple[str, dict]:
        """Summarize `document` with a model of `variant` under `controls` (a JSON object), at control
        strength `guidance` (γ from 1, plain generation, to 10; default: the model's), with the variant's
        decoding rules as the model is served (`constraints` true) or the model alone (false).
        Returns the summary and a result object: scores, text checks (`quality`: sentence end, repeated
        3-gram, names and numbers not in the document, length against the asked one), evidence, notices,
        controls used, γ, rules, timings."""
        result = service.summarize(document, variant, model, controls, reference, guidance, constraints)
        return result["summary"], result

    def compare(
        document: str,
        variant: str,
        models: str,
        controls: str = "{}",
        reference: str = "",
        guidance: float | None = None,
        constraints: bool = True,
    ) -> list[dict]:
        """The same document and controls through two or more models (comma-separated ids), side by
        side, at control strength `guidance` (default: each model's own), with or without the decoding
        rules (`constraints`); an error when the variant serves only one model."""
        models_asked = [m.strip() for m in models.split(",") if m.strip()]
        return service.compare(document, variant, models_asked, controls, reference, guidance, constraints)

    def sweep(
        document: str,
        variant: str,
        model: str,
        control: str,
        controls: str = "{}",
        reference: str = "",
        guidance: float | None = None,
        constraints: bool = True,
    ) -> list[dict]:
        """One model, every value of one control: a choice (e.g. every topic) or a short integer range
        (e.g. CCS length bins 0-4), at control strength `guidance`, with or without the decoding rules
        (`constraints`)."""
        return service.sweep(document, variant, model, control, controls, reference, guidance, constraints)

    def score(
        summary: str, document: str, variant: str, controls: str = "{}", reference: str = "", model: str = "baseline"
    ) -> dict:
        """Live metrics for a given summary under `controls`."""
        return service.score(summary, document, variant, controls, reference, model)

    def variants() -> dict:
        """The model catalog and every variant's control schema."""
        return service.variants()

    return {"summarize": summarize, "compare": compare, "sweep": sweep, "score": score, "variants": variants}
