"""Evaluation at a control strength γ (``python -m training evaluate --guidance G``).

A report made at γ ≠ 1 carries the same evaluation at γ = 1 beside it (``at_guidance_1``: its metrics
and control effect), so the card's control-effect table shows what guidance adds on the same
examples, and the pasted and Lead-k rows keep any gain honest. The report says how it was generated
(``generation``: γ, constraints, beams). ``--save-default-guidance`` makes γ the checkpoint's default,
kept in its generation config (:func:`variants.seq2seq.save_default_guidance`).
"""
from __future__ import annotations

from variants.seq2seq import GenerationSettings

from .sensitivity import evaluate_with_sensitivity


def with_settings(summarizer, guidance: float | None = None, constraints: bool | None = None) -> GenerationSettings | None:
    """Set the summarizer's generation settings to ``guidance`` and ``constraints`` (None: its own) and
    return them; ``None`` for a summarizer without settings (a baseline), which refuses γ ≠ 1."""
    settings = getattr(summarizer, "settings", None)
    if settings is None:
        if (guidance is not None and guidance != 1) or constraints:
            raise ValueError(f"{summarizer.name} is model-free: guidance and constraints apply to models only")
        return None
    summarizer.settings = settings.but(guidance=guidance, constraints=constraints)
    return summarizer.settings


def evaluate_guided(summarizer, records: list[dict], data_file: str, batch_size: int | None = None,
                    sensitivity: bool = True) -> dict:
    """:func:`training.sensitivity.evaluate_with_sensitivity` under the summarizer's settings, with
    ``generation`` recorded and, when its γ is not 1, the same evaluation at γ = 1 in ``at_guidance_1``."""
    settings = getattr(summarizer, "settings", None)
    report = evaluate_with_sensitivity(summarizer, records, data_file, batch_size, sensitivity)
    if settings is None:
        return report
    report["generation"] = settings.to_json()
    if settings.guidance != 1:
        summarizer.settings = settings.but(guidance=1.0)
        try:
            plain = evaluate_with_sensitivity(summarizer, records, data_file, batch_size, sensitivity)
        finally:
            summarizer.settings = settings
        report["at_guidance_1"] = {k: plain[k] for k in ("metrics", "control_sensitivity") if k in plain}
    return report
