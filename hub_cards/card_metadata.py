"""A model card's front matter, the YAML the Hub reads: licence, base model, datasets, tags, and the eval
report as ``model-index`` (:class:`huggingface_hub.EvalResult`), with each data file's split named as the
Hub names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, ModelCardData

from metrics.io import DataError, read_jsonl
from variants.base import Summarizer
from variants.sources import all_data_licenses

from .base_model import is_test_model
from .licenses import license_fields

# Bundled datasets that are samples of a Hub dataset (for the ``datasets`` front matter).
HUB_DATASETS = {"scitldr": "allenai/scitldr", "xsum": "EdinburghNLP/xsum", "cnndm_sample": "abisee/cnn_dailymail"}
# Data file names (their stem) -> the split name the Hub uses; SciTLDR's `dev` is `validation` there.
HUB_SPLITS = {"val": "validation", "valid": "validation", "dev": "validation", "eval": "validation"}
METRIC_LABELS = {
    "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "rougeLsum": "ROUGE-Lsum",
    "stas": "STAS",
    "output_words": "mean summary length (words)",
    "ends_sentence": "share ending a sentence",
    "repeated_trigram": "share with a repeated 3-gram",
    "doubled_word": "share with a word written twice in a row",
    "altered_quote": "share quoting words the document does not write",
    "unsupported_facts": "names and numbers not in the document (mean)",
    "has_unsupported": "share with a name or number not in the document",
}


def card_data(
    summarizer: Summarizer,
    facts: dict[str, Any],
    record: dict,
    report: dict | None,
    adapter: dict | None,
    custom_code: bool,
) -> ModelCardData:
    """The front matter of a variant model's card; ``facts``: the template's (``base_model``, ``model_name``,
    ``license_base``)."""
    results = eval_results(report, record)
    tags = [
        "summarization",
        "controllable-summarization",
        "steersum",
        f"steersum-{summarizer.variant.id}",
        summarizer.method,
    ]
    return ModelCardData(
        language="en",
        library_name="peft" if adapter else "transformers",
        pipeline_tag="summarization",
        tags=tags + (["custom_code"] if custom_code else []) + (["peft", "lora"] if adapter else []),
        base_model=facts["base_model"],
        # what this repo trained on; the base's data is the base's (its own card lists it)
        datasets=own_hub_datasets(record),
        model_name=facts["model_name"],
        eval_results=results or None,
        # the metrics the model-index reports, no others (the Hub lists them as the card's metrics)
        metrics=list(dict.fromkeys(r.metric_type for r in results)) or None,
        **license_fields(all_data_licenses(record), facts["license_base"]),
    )


def own_hub_datasets(record: dict) -> list[str] | None:
    """The Hub datasets a model trained on itself (never its base model's), for the card's ``datasets``."""
    return sorted({HUB_DATASETS[d] for d in record.get("data_licenses", {}) if d in HUB_DATASETS}) or None


def eval_results(report: dict | None, record: dict) -> list[EvalResult]:
    """The report's corpus scores as ``model-index`` entries; none without a report. A test model's
    zero scores are left out: they describe random weights, not a result anyone should compare with."""
    if not report:
        return []
    data = eval_dataset(report, record)
    scores = {name: value for name, value in report.get("metrics", {}).items() if value is not None}
    if is_test_model(record):
        scores = {name: value for name, value in scores.items() if value != 0}
    return [
        EvalResult(
            task_type="summarization",
            task_name="Controllable summarization",
            dataset_type=data["type"],
            dataset_name=data["name"],
            dataset_split=data["split"],
            metric_type=name,
            metric_name=METRIC_LABELS.get(name, name),
            metric_value=value,
        )
        for name, value in scores.items()
    ]


def eval_dataset(report: dict, record: dict) -> dict[str, str]:
    """Which data the report scored: the ``dataset`` names the report lists, else those in its data
    file when it is still there, else the training data's (SteerSum builders write train and eval
    splits from the same source). The split is named as the Hub names it (``validation``, not ``val``);
    a SteerSum set built from a Hub dataset (controls and targets added) says it is derived from it."""
    file = Path(report.get("data_file", "eval.jsonl"))
    names = report.get("datasets")
    if not names:
        try:
            names = sorted({str(r.get("dataset")) for r in read_jsonl(file) if r.get("dataset")})
        except DataError:
            names = []
    names = names or sorted(record.get("data_licenses", {})) or ["unknown"]
    hub = HUB_DATASETS.get(names[0]) if len(names) == 1 else None
    split = HUB_SPLITS.get(file.stem, file.stem)
    name = f"{', '.join(names)} {split} set ({file.name})"
    if hub:
        name += f", derived from {hub} by SteerSum (controls and targets added)"
    return {"type": hub or "+".join(names), "name": name, "split": split, "file": file.name, "hub": hub}
