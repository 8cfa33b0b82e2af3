"""The data sources SteerSum builds its training and test sets from, and their licences.

A checkpoint records the ``dataset`` of every training example, so its model card can state the
licence of the data the model was trained on: several sources are non-commercial
(``../shared/data/README.md``).
"""

from __future__ import annotations

import os
from pathlib import Path

from metrics.io import DataError, read_jsonl

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


def all_data_licenses(record: dict) -> dict[str, str]:
    """The terms of every dataset a checkpoint's weights derive from (its ``steersum.json``): its own
    training data and, for a model fine-tuned from a SteerSum model (the general summarizer), the
    data that model was trained on in turn (``upstream_data_licenses``)."""
    return {**record.get("upstream_data_licenses", {}), **record.get("data_licenses", {})}


# ---------------------------------------------------------------------------------------------------
# Where each source's rows come from. Every builder reads its data through ``load_source``, which
# returns rows in the local mirror's schema (../shared/data/README.md) whichever way they were loaded:
#   1. a local mirror (``--data-dir``, else ``STEERSUM_DATA``, else ``../shared/data`` beside the
#      checkout), read with ``datasets.load_dataset("json", data_files=...)``;
#   2. else the Hugging Face Hub, for the sources that have a faithful copy there.
# A mirror is a folder laid out as ../shared/data (``<name>/<split>.jsonl``); tests/fixtures is a tiny one.
# Hub ids, configs, split names and licences were checked against each dataset's Hub card / loading
# script. ``hub: None`` means no faithful Hub copy exists: the row says why, and only the mirror works.
SOURCES = {
    "scitldr": {
        "hub": "allenai/scitldr",
        "config": "Abstract",
        "revision": "refs/convert/parquet",
        # The repo is a loading script (unsupported since datasets 4); its Parquet conversion is loaded.
        "splits": {"train": "train", "dev": "validation", "test": "test"},
        "fields": {
            "id": "paper_id",
            "source_sentences": "source",
            "targets": "target",
            "source_labels": "source_labels",
        },  # title: not in the Hub copy (None)
        "license": "Apache-2.0 (loading script: Apache License 2.0)",
    },
    "xsum": {
        "hub": "EdinburghNLP/xsum",
        "config": None,
        "revision": "refs/convert/parquet",
        # "sample" = 800 rows of the test split (200 held out); from the Hub, the whole test split.
        "splits": {"sample": "test"},
        "fields": {"id": "id", "source": "document", "target": "summary"},
        "license": "no known licence (Hub card); XSum: research use only",
    },
    "cnndm_sample": {
        "hub": None,  # abisee/cnn_dailymail (config 3.0.0: article, highlights, id) has the articles but
        # not CTRLsum's oracle keywords nor this 100-row sample (salesforce/ctrl-sum example_dataset).
        "splits": {"train": "train", "val": "val", "test": "test"},
        "license": "CNN/DailyMail articles: research use (ctrl-sum repo BSD-3-Clause)",
    },
    "bbc_summary": {
        "hub": None,  # gopalkalpande/bbc-news-summary (CSV, CC0 packaging) has the 2,225 raw articles,
        # not the de-duplicated, re-split, held-out-filtered version the mirror carries.
        "splits": {"train": "train", "val": "val", "test": "test"},
        "license": "BBC articles: research / non-commercial use only",
    },
    "bbc": {
        "hub": None,  # as bbc_summary (articles with titles and topics, de-duplicated)
        "splits": {"articles": "articles"},
        "license": "BBC articles: research / non-commercial use only",
    },
    "inspec": {
        "hub": None,  # midas/inspec (train/validation/test 1,000/500/500) ships tokenised text with BIO
        # tags, not the LIAAD titles and abstracts the mirror carries.
        "splits": {"inspec": "inspec"},
        "license": "no licence stated; abstracts (c) publishers, research use",
    },
    "macsum_doc": {
        "hub": None,  # psunlpgroup/MACSum is on GitHub only
        "splits": {"val": "val"},
        "license": "CC BY-NC-ND 4.0 (non-commercial, no derivatives)",
    },
    "pens_sample": {
        "hub": None,  # PENS personalized_test.tsv is on GitHub / Microsoft download only
        "splits": {"users": "users"},
        "license": "Microsoft Research License (non-commercial research only)",
    },
}

# The checkout's sibling ../shared/data, used when present.
BESIDE_CHECKOUT = Path(__file__).resolve().parents[2] / "shared" / "data"
_data_dir: Path | None = None


def add_data_dir_argument(parser) -> None:
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="a local mirror laid out as ../shared/data (default: $STEERSUM_DATA, else "
        "../shared/data when present, else the Hugging Face Hub)",
    )


def set_data_dir(path: str | Path | None) -> None:
    """The mirror every later ``load_source`` reads (a build-data command's ``--data-dir``)."""
    global _data_dir
    _data_dir = Path(path) if path else None


def mirror() -> Path | None:
    """The local mirror in use: ``--data-dir``, else ``STEERSUM_DATA``, else ``../shared/data``."""
    if _data_dir is not None:
        return _data_dir
    if os.environ.get("STEERSUM_DATA"):
        return Path(os.environ["STEERSUM_DATA"])
    return BESIDE_CHECKOUT if BESIDE_CHECKOUT.is_dir() else None


def load_source(name: str, split: str, data_dir: str | Path | None = None) -> list[dict]:
    """Rows of one split of a source, in the mirror's schema, through the ``datasets`` library."""
    if name not in SOURCES:
        raise DataError(f"unknown dataset {name!r}; known: {', '.join(SOURCES)}")
    source = SOURCES[name]
    if split not in source["splits"]:
        raise DataError(f"{name}: unknown split {split!r}; known: {', '.join(source['splits'])}")
    folder = Path(data_dir) if data_dir else mirror()
    if folder is not None:
        return _from_mirror(folder / name / f"{split}.jsonl")
    if source["hub"] is None or _offline():
        why = (
            "it has no faithful copy on the Hub"
            if source["hub"] is None
            else f"the Hub ({source['hub']}) cannot be reached: HF_HUB_OFFLINE / HF_DATASETS_OFFLINE is set"
        )
        raise DataError(
            f"dataset {name!r} ({split}): no local mirror found and {why}. Pass --data-dir DIR "
            f"(or set STEERSUM_DATA) to a folder laid out as ../shared/data"
            + ("" if source["hub"] is None else ", or go online")
        )
    return _from_hub(name, source, split)


def _from_mirror(path: Path) -> list[dict]:
    from datasets import load_dataset

    if not path.is_file():
        raise DataError(f"{path}: no such file (the mirror must hold <dataset>/<split>.jsonl)")
    read_jsonl(path)  # malformed lines fail as file:line first; datasets' JSON errors name no line
    return load_dataset("json", data_files=str(path), split="train").to_list()
    # Arrow would fill a key some rows lack with None and unify key order; the mirror's rows all carry
    # the same keys in the same order (every bundled file loads equal to read_jsonl; a test checks it).


def _from_hub(name: str, source: dict, split: str) -> list[dict]:
    from datasets import load_dataset

    kwargs = {"data_dir": source["config"]} if source["config"] else {}
    try:
        dataset = load_dataset(source["hub"], revision=source["revision"], split=source["splits"][split], **kwargs)
    except (ConnectionError, OSError) as err:
        raise DataError(
            f"dataset {name!r}: could not load {source['hub']} from the Hub ({err}). Pass --data-dir "
            "DIR (or set STEERSUM_DATA) to a local mirror laid out as ../shared/data"
        ) from None
    fields = source["fields"]
    rows = []
    for hub_row in dataset:
        row = {ours: hub_row[theirs] for ours, theirs in fields.items()}
        if name == "scitldr":  # the mirror joins the abstract's sentences and keeps the title slot
            row = {"id": row["id"], "title": None, "source": " ".join(row["source_sentences"]), **row}
        rows.append(row)
    return rows


def _offline() -> bool:
    return any(
        os.environ.get(var, "").upper() in ("1", "ON", "YES", "TRUE")
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )
