"""Training/evaluation examples: JSONL records ``{"id", "document", "controls", "target", "dataset"}``,
the same shape for every variant, checked with ``file:line`` errors.

``dataset`` names the source so that checkpoints and model cards can state the licence of the data
a model was trained on (:mod:`variants.sources`).
"""

from __future__ import annotations

from pathlib import Path

from metrics.io import DataError, get_field, read_jsonl
from variants.base import InputError, Variant


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
