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

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from variants.sources import all_data_licenses

from .base_model import is_hub_id, local_base_text
from .card import MISSING, PLACEHOLDER_REPO, environment, hyperparameters
from .card_metadata import HUB_DATASETS
from .licenses import LICENSE_FILE, license_fields, license_note

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
    """The general summarizer of a checkpoint folder, an exported repo or the store's int8 folder (dequantized)."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from store import load_stored_model

    model = load_stored_model(folder) or AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    return GeneralModel(model, AutoTokenizer.from_pretrained(folder), record)


def general_card(folder: Path, record: dict, repo_id: str | None) -> ModelCard:
    """The card of an exported general summarizer (``templates/general.md``)."""
    repo_id = repo_id or PLACEHOLDER_REPO
    licences = all_data_licenses(record)
    base = pretrained_base(record) or record.get("base_model")
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
        eval_results=general_results(report) or None,
        metrics=["rouge1", "rouge2"] if report else None,
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


def pretrained_base(record: dict) -> str | None:
    """The Hub id of the pretrained weights the general summarizer was converted from (``base_weights.source``
    starts with it), or None: its own record's ``base_model`` names where it was trained, not what from."""
    source = str((record.get("base_weights") or {}).get("source") or "").split(" ")[0]
    return source if source and is_hub_id(source) else None


def general_results(report: dict | None) -> list[EvalResult]:
    """The report's test sets as ``model-index`` entries: ROUGE-1 and ROUGE-2 of the model on each."""
    results = []
    for name, scores in (report or {}).get("sets", {}).items():
        dataset = name.split(" ")[0]
        split = " ".join(name.split(" ")[1:]) or "test"
        for metric, label in (("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2")):
            if scores.get(metric) is None:
                continue
            results.append(
                EvalResult(
                    task_type="summarization",
                    task_name="Summarization",
                    dataset_type=HUB_DATASETS.get(dataset, dataset),
                    dataset_name=f"{name} ({scores.get('examples')} articles)",
                    dataset_split=split,
                    metric_type=metric,
                    metric_name=label,
                    metric_value=scores[metric],
                )
            )
    return results


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
        "lead_same_length": scores.get("lead_at_summary_length_rouge1"),
        "summary_words": scores.get("summary_words"),
        "verbatim": scores.get("verbatim_fact_share"),
    }


__all__ = ["GENERAL", "GENERAL_REPORT", "GeneralModel", "LICENSE_FILE", "general_card", "load_general"]
