"""Training/evaluation examples: JSONL records ``{"id", "document", "controls", "target", "dataset"}``,
the same shape for every variant, checked with ``file:line`` errors.

``dataset`` names the bundled source so that checkpoints and model cards can state the licence of
the data a model was trained on (several bundled datasets are non-commercial).
"""
from __future__ import annotations

from pathlib import Path

from metrics.io import DataError, get_field, read_jsonl
from variants.base import InputError, Variant

# Licences of the bundled datasets (../shared/data/README.md).
DATASET_LICENSES = {
    "bbc_summary": "BBC articles: research / non-commercial use only",
    "bbc": "BBC articles: research / non-commercial use only",
    "cnndm_sample": "CNN/DailyMail articles: research use (ctrl-sum repo BSD-3-Clause)",
    "scitldr": "Apache-2.0",
    "xsum": "XSum: research use only",
    "inspec": "no licence stated; abstracts (c) publishers, research use",
    "macsum_doc": "CC BY-NC-ND 4.0 (non-commercial, no derivatives)",
    "pens_sample": "Microsoft Research License (non-commercial research only)",
    "pens": "Microsoft Research License (non-commercial research only)",
    "pens_simulated": "simulated from BBC articles (not real PENS): research / non-commercial use only",
}
NON_COMMERCIAL = {"bbc_summary", "bbc", "xsum", "macsum_doc", "pens_sample", "pens", "pens_simulated"}


def load_examples(path: str | Path, variant: Variant, assets=None, limit: int | None = None) -> list[dict]:
    """Read and validate examples; controls are checked against the variant's schema so a bad topic
    on line 812 is reported as ``file:812`` before any training starts."""
    records = read_jsonl(path)[:limit]
    for number, record in enumerate(records, start=1):
        where = f"{path}:{number}"
        get_field(record, "document", str, where)
        get_field(record, "target", str, where)
        try:
            record["controls"] = variant.validate(get_field(record, "controls", dict, where, non_empty=False), assets)
        except InputError as err:
            raise DataError(f"{where}: {err}") from None
    return records


def data_licenses(records: list[dict]) -> dict[str, str]:
    names = sorted({r.get("dataset", "unknown") for r in records})
    return {name: DATASET_LICENSES.get(name, "unknown: check the data's source") for name in names}
