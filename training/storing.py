"""Putting trained models into the store (:mod:`store`).

:func:`put` stores a checkpoint the zoo has evaluated: the general summarizer compacted to int8
(:mod:`store.compact`), a variant model as its adapter folder pointed at ``../general`` with its weights in
int8 the same way (:func:`store.adapters.compact_adapter`), each with its report and a card
(:mod:`training.storing_cards`), listed in ``store/index.json``. Admission is decided on the val split, never
on the test split a model's report and card show (:mod:`training.storing_admission`): a stored model is
replaced only by one that measures better on val — the general summarizer on ROUGE-1 over the bbc_summary val
split, a variant model on the lower end of its control-effect interval for its variant's first control metric
(ROUGE-1 breaking ties) — and the outcome is returned as a sentence for the zoo to print. A variant model whose
val interval does not lie above 0 is not stored at all: a model its controls do not steer (or steer the wrong
way) is not served. The index keeps the measure with its split. Adapters are tied to the base they were trained
on: one whose base is not the stored general summarizer is refused, and replacing the general summarizer drops
the adapters of the old one from the index (retrain them on the new one).

What compaction costs is measured by :mod:`training.storing_compaction`.
"""

from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

import store
from store.adapters import compact_adapter, is_adapter, is_compact_adapter, point_at_base
from store.compact import is_compact, weights_fingerprint, write_compact
from variants.base import read_record, write_record

from .guidance import SWEEP_FILE
from .storing_admission import better, general_measure, report_split, variant_effect, variant_measure
from .storing_cards import card

DATA_FILE_FIELDS = ("train_file", "eval_file")  # record fields that name a data file
REPORT_DATA_FIELDS = ("data_file", "data")  # an evaluation report's, a guidance sweep's
SKIPPED = {"model.safetensors", "training_args.bin", "training_args.json", "README.md", "optimizer.pt", "scheduler.pt"}
SKIPPED |= {"val_report.json"}  # what admitted the model: its measure, with its split, is in the index
SKIPPED_DIRS = ("checkpoint-", "merged", "tiny-preset-base", "runs")


def data_name(path: str | None) -> str | None:
    """A data file as a name that means the same on any machine: its folder and file
    (``/work/x/ck/data/ccs/train.jsonl`` -> ``ccs/train.jsonl``, the variant's built set and its split).
    A stored record travels with the repository and into every exported repo; the machine's path
    would say nothing there but where someone once trained."""
    if not path:
        return path
    parts = Path(path).parts
    return "/".join(parts[-2:]) if Path(path).is_absolute() else str(path)


def portable_record(record: dict, fields: tuple[str, ...] = DATA_FILE_FIELDS) -> dict:
    """``record`` (or a report, with :data:`REPORT_DATA_FIELDS`) with every data file field as a
    :func:`data_name`."""
    return {key: data_name(value) if key in fields else value for key, value in record.items()}


def tokenizer_state(path: Path) -> dict | bytes:
    """What a tokenizer file holds: its bytes, or for ``tokenizer.json`` its JSON without the truncation and
    padding it was last called with (transformers sets both on every call, so they say nothing of the vocabulary)."""
    if path.name != "tokenizer.json":
        return path.read_bytes()
    return {
        k: v for k, v in json.loads(path.read_text(encoding="utf-8")).items() if k not in ("truncation", "padding")
    }


def copy_folder(source: Path, dest: Path, base: Path | None = None) -> None:
    """An adapter folder's files, without the full weights and training state a store has no room for,
    and without its tokenizer files when they hold the base's tokenizer (the loader then takes the base's:
    :func:`store.tokenizer_folder`; 0.7 MB each for MiniLM's WordPiece vocabulary)."""
    tokenizer = [source / name for name in store.TOKENIZER_FILES if (source / name).is_file()]
    shares_base_tokenizer = base is not None and all(
        (base / path.name).is_file() and tokenizer_state(path) == tokenizer_state(base / path.name)
        for path in tokenizer
    )
    for path in source.iterdir():
        if path.is_file() and path.name not in SKIPPED and not (shares_base_tokenizer and path in tokenizer):
            shutil.copy2(path, dest / path.name)
        elif path.is_dir() and not path.name.startswith(SKIPPED_DIRS):
            shutil.copytree(path, dest / path.name)


def put(
    checkpoint: str | Path,
    report: dict,
    report_file: str | Path,
    name: str | None = None,
    index: Path | None = None,
    require_effect: bool = True,
    validation: dict | None = None,
) -> tuple[bool, str]:
    """Store ``checkpoint`` (its test report ``report``, saved at ``report_file``, which the store keeps and the
    card shows) under ``name`` if, on ``validation`` (its report on the val split, at the same settings), it
    measures better than the stored one and, for a variant model (unless not ``require_effect``: a plumbing
    check), its control-effect interval lies above 0; ``(stored, sentence)``. A ``validation`` report of another
    split is refused: a model admitted on the numbers it reports would be the luckiest of several tries."""
    checkpoint, index = Path(checkpoint), Path(index or store.INDEX)
    record = read_record(checkpoint)
    general = record["variant"] == store.GENERAL
    name = name or (store.GENERAL if general else checkpoint.name)
    split = None if validation is None else report_split(validation)
    if split != "val":
        raise ValueError(
            f"{name}: the store admits a model on its val report (validation=); got "
            + ("none" if validation is None else f"a report on {split or 'an unnamed split'}")
        )
    models = store.read_index(index)
    old = next((m for m in models if m.name == name), None)
    if general:
        measure, fingerprint, effect = general_measure(validation), weights_fingerprint(checkpoint), None
    else:
        if not is_adapter(checkpoint):
            return (
                False,
                f"{name}: not stored: the store holds adapters (train with --adapter lora), this is a full model",
            )
        from store.adapters import base_folder

        base = Path(base_folder(checkpoint))
        fingerprint = weights_fingerprint(base) if base.is_dir() else ""
        stored_base = next((m for m in models if m.name == store.GENERAL), None)
        if stored_base is None or stored_base.fingerprint != fingerprint:
            return False, (
                f"{name}: not stored: its base {base} is not the stored general summarizer "
                f"({'none stored' if stored_base is None else 'another one'})"
            )
        measure, effect = variant_measure(record["variant"], validation), variant_effect(record["variant"], report)
        if require_effect and (measure["score"] is None or measure["score"] <= 0):
            admitted = measure["effect"]
            said = (
                "no control effect measured on val"
                if admitted is None
                else f"its {admitted['metric']} effect on val {admitted['difference']:+.3f}, "
                f"interval low end {measure['score']:+.3f}"
            )
            return False, f"{name}: not stored: {said}; the store serves only models whose controls steer them"
    measure["split"] = "val"
    if old is not None and old.measure.get("split") != "val":
        return False, (
            f"{name}: kept the stored model: it was measured on {old.measure.get('split') or 'test'}, this one on "
            "val, and the two do not compare (measure the stored one on val, or remove it, to replace it)"
        )
    if old is not None and not better(measure, old.measure):
        return False, f"{name}: kept the stored model (stored {old.measure.get('score')}, new {measure.get('score')})"
    folder = index.parent / "models" / name
    staging = folder.with_name(name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.parent.mkdir(parents=True, exist_ok=True)
    if general and is_compact(checkpoint):  # compacted where it was trained (a GPU machine returns 16 MiB files)
        shutil.copytree(
            checkpoint, staging, ignore=shutil.ignore_patterns("README.md", "*_report.json", "checkpoint-*")
        )
    elif general:
        write_compact(checkpoint, staging)
    else:
        staging.mkdir()
        copy_folder(checkpoint, staging, base)
        if not is_compact_adapter(staging):  # a stored model chosen again on val is compact already
            compact_adapter(staging)
        point_at_base(staging, f"../{store.GENERAL}")
        # the record names the base it was checked against (by fingerprint), not where it lay when trained
        write_record(staging, {**read_record(staging), "base_model": f"store/models/{store.GENERAL}"})
    write_record(staging, portable_record(read_record(staging)))
    sweep = staging / SWEEP_FILE
    if sweep.is_file():
        sweep.write_text(
            json.dumps(portable_record(json.loads(sweep.read_text()), REPORT_DATA_FIELDS), indent=2) + "\n"
        )
    # minified: a report keeps every example three times (right, shuffled, γ = 1), each with its controls
    report = portable_record(report, REPORT_DATA_FIELDS)
    (staging / Path(report_file).name).write_text(json.dumps(report, separators=(",", ":")) + "\n", encoding="utf-8")
    entry = store.StoredModel(
        name=name,
        variant=record["variant"],
        method=record["method"],
        format="int8" if general else "lora",
        base=None if general else store.GENERAL,
        steps=record.get("steps") or (record.get("training") or {}).get("global_step"),
        data=sorted(record.get("data_licenses", {})),
        data_licenses=record.get("data_licenses", {}),
        control_effect=effect,
        eval_report=f"{name}/{Path(report_file).name}",
        card=f"{name}/README.md",
        measure=measure,
        fingerprint=fingerprint,
        stored=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
    )
    (staging / "README.md").write_text(
        card(entry, staging), encoding="utf-8"
    )  # the new record, not the one it replaces
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    dropped = [m.name for m in models if general and m.base == store.GENERAL and old is not None]
    for gone in dropped:  # adapters of the old base are meaningless on the new one
        shutil.rmtree(index.parent / "models" / gone, ignore_errors=True)
    models = [m for m in models if m.name != name and m.name not in dropped]
    store.write_index(([entry] if general else []) + models + ([] if general else [entry]), index)
    verdict = "replaced the stored model, which measured " + str(old.measure.get("score")) if old else "stored (new)"
    return True, f"{name}: {verdict}; measured {measure.get('score')}" + (
        f"; dropped the adapters of the old base: {', '.join(dropped)}" if dropped else ""
    )
