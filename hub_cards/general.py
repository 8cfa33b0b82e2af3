"""The general summarizer as a Hub repo of its own: the plain BART every variant model is fine-tuned from
(``python -m training general``; ``checkpoints/general`` in the zoo). Its ``steersum.json`` says
``"variant": "general"``: it has no controls, so no variant loads it; it loads with
``AutoModelForSeq2SeqLM`` and its card (``templates/general.md``) says what it was trained on and how it
scores against the extractive leads (``general_report.json``, :func:`training.general.evaluate_general`).
Adapter repos (the CCS LoRA adapter) name it as their base model (``hub_cards export --base-model``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from huggingface_hub import ModelCard, ModelCardData

from variants.sources import all_data_licenses

from .card import (
    HUB_DATASETS,
    LICENSE_FILE,
    MISSING,
    PLACEHOLDER_REPO,
    environment,
    hyperparameters,
    is_hub_id,
    license_fields,
    license_note,
    local_base_text,
)

GENERAL = "general"  # the record's "variant" of the general summarizer
GENERAL_REPORT = "general_report.json"
EXAMPLE_DOCUMENT = (
    "Shares in the carmaker fell 6% after it cut its profit forecast, blaming weak demand in Europe and the "
    "cost of new factories. The chief executive said savings of 2bn euros would restore margins by next year. "
    "Analysts said the plan depended on a recovery in sales of electric cars, which slowed this spring."
)


@dataclass
class GeneralModel:
    """The loaded general summarizer: proof that its weights load, and what its card needs."""

    model: Any
    tokenizer: Any
    record: dict


def load_general(folder: str | Path, record: dict) -> GeneralModel:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    return GeneralModel(model, AutoTokenizer.from_pretrained(folder), record)


def general_card(folder: Path, record: dict, repo_id: str | None) -> ModelCard:
    """The card of an exported general summarizer (``templates/general.md``)."""
    repo_id = repo_id or PLACEHOLDER_REPO
    licences = all_data_licenses(record)
    base = record.get("base_model")
    base_text = base if base and is_hub_id(base) else (local_base_text(base) if base else "not recorded")
    report_file = folder / GENERAL_REPORT
    report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.is_file() else None
    weights_license = (record.get("base_weights") or {}).get("license")
    data = ModelCardData(
        language="en",
        library_name="transformers",
        pipeline_tag="summarization",
        tags=["summarization", "steersum", "steersum-general", "bart"],
        model_name=repo_id.split("/")[-1],
        base_model=base if base and is_hub_id(base) else None,
        datasets=sorted({HUB_DATASETS[d] for d in licences if d in HUB_DATASETS}) or None,
        **license_fields(licences, base if base and is_hub_id(base) else None),
    )
    steps = record.get("steps")
    rows = [report_row(name, scores) for name, scores in (report or {}).get("sets", {}).items()]
    content = (
        environment()
        .get_template("general.md")
        .render(
            card_data=data.to_yaml(),
            model_name=repo_id.split("/")[-1],
            repo_id=repo_id,
            record=record,
            rows=rows,
            base_model_text=base_text,
            hyperparameters=hyperparameters(record),
            steps=steps,
            training_data=sorted(record.get("data_licenses", {}).items()),
            example_document=EXAMPLE_DOCUMENT,
            license_note=license_note(licences, base_text if base else None, weights_license=weights_license),
            max_source_length=int(record.get("max_source_length", 1024)),
            max_new_tokens=int(record.get("max_target_length", 128)),
            num_beams=int(record.get("num_beams", 4)),
            few_steps=steps is not None and steps < 10,
        )
    )
    card = ModelCard(content)
    if MISSING in card.content:
        raise ValueError(f"templates/general.md: the card still says {MISSING!r}")
    return card


def report_row(name: str, scores: dict) -> dict:
    """One test set of ``general_report.json`` as a row of the card's table (its lead is Lead-1 or Lead-3)."""
    lead = next((key for key in scores if key.startswith("lead") and key[4:5].isdigit()), None)
    return {
        "name": name,
        "examples": scores.get("examples"),
        "rouge1": scores.get("rouge1"),
        "lead": f"Lead-{lead[4:].split('_')[0]}" if lead else "lead",
        "lead_rouge1": scores.get(lead),
        "ratio": scores.get("ratio_to_lead"),
        "verbatim": scores.get("verbatim_fact_share"),
    }


__all__ = ["GENERAL", "GENERAL_REPORT", "GeneralModel", "LICENSE_FILE", "general_card", "load_general"]
