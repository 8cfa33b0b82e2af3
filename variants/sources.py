"""The data sources SteerSum builds its training and test sets from, and their licences.

A checkpoint records the ``dataset`` of every training example, so its model card can state the
licence of the data the model was trained on: several sources are non-commercial
(``../shared/data/README.md``).
"""
from __future__ import annotations

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


def data_licenses(records: list[dict]) -> dict[str, str]:
    names = sorted({r.get("dataset", "unknown") for r in records})
    return {name: DATASET_LICENSES.get(name, "unknown: check the data's source") for name in names}
