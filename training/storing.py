"""Putting trained models into the store (:mod:`store`), and measuring what compaction costs.

:func:`put` stores a checkpoint the zoo has evaluated: the general summarizer compacted to int8
(:mod:`store.compact`), a variant model as its adapter folder pointed at ``../general`` with its weights in
int8 the same way (:func:`store.adapters.compact_adapter`), each with its report and a card, listed in
``store/index.json``. Admission is decided on the val split, never on the test split a model's report and
card show: a stored model is replaced only by one that measures better on val — the general summarizer on
ROUGE-1 over the bbc_summary val split, a variant model on the lower end of its control-effect interval for
its variant's first control metric (ROUGE-1 breaking ties) — and the outcome is returned as a sentence for
the zoo to print. A variant model whose val interval does not lie above 0 is not stored at all: a model its
controls do not steer (or steer the wrong way) is not served. The index keeps the measure with its split.
Adapters are tied to the base they were trained on: one whose base is not the stored general summarizer
is refused, and replacing the general summarizer drops the adapters of the old one from the index
(retrain them on the new one).

:func:`compare_compact` is the compaction check: the same test set through the fp32 and the int8 base
(ROUGE-1, the control effect, and how many generated tokens agree).
"""

from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

import store
from store.adapters import compact_adapter, is_adapter, point_at_base
from store.compact import is_compact, weights_fingerprint, write_compact
from variants.base import read_record, write_record
from variants.decoding import read_strength

DATA_FILE_FIELDS = ("train_file", "eval_file")  # record fields that name a data file
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


def portable_record(record: dict) -> dict:
    """``record`` with every data file field (:data:`DATA_FILE_FIELDS`) as a :func:`data_name`."""
    return {key: data_name(value) if key in DATA_FILE_FIELDS else value for key, value in record.items()}


def report_split(report: dict) -> str | None:
    """The split a report was measured on: its ``split``; a general summarizer's set names (``bbc_summary val``);
    else its data file's name (``val.jsonl``: an evaluation report's ``data_file``, a sweep's ``data``); None
    when it does not say."""
    if report.get("split"):
        return report["split"]
    names = {name.split()[1] for name in report.get("sets") or {} if len(name.split()) > 1}
    if len(names) == 1:
        return names.pop()
    stem = Path(str(report.get("data_file") or report.get("data") or "")).stem
    return stem if stem in ("train", "val", "test") else None


def general_measure(report: dict) -> dict:
    scores = next(v for k, v in report["sets"].items() if k.startswith("bbc_summary "))
    return {
        "score": scores["rouge1"],
        "rouge1": scores["rouge1"],
        "ratio_to_lead": scores["ratio_to_lead"],
        "verbatim_fact_share": scores["verbatim_fact_share"],
        "examples": scores["examples"],
    }


def variant_effect(variant_id: str, report: dict) -> dict | None:
    """The control effect a card and the index lead with: the variant's first control metric measured."""
    from variants import get_variant

    effects = (report.get("control_sensitivity") or {}).get("effect") or {}
    name = next((n for n in get_variant(variant_id).evaluation.control_metrics if n in effects), None)
    if name is None:
        return None
    e = effects[name]
    return {
        "metric": name,
        "difference": e["difference"],
        "ci_low": e.get("ci_low"),
        "ci_high": e.get("ci_high"),
        "n": e.get("n"),
    }


def variant_measure(variant_id: str, report: dict) -> dict:
    effect = variant_effect(variant_id, report)
    low = None if effect is None else (effect["ci_low"] if effect["ci_low"] is not None else effect["difference"])
    return {"score": low, "rouge1": report["metrics"].get("rouge1"), "effect": effect}


def better(new: dict, old: dict) -> bool:
    """Whether measure ``new`` beats ``old``: a higher score, or the same score and a higher ROUGE-1."""

    def key(m):
        return (
            float("-inf") if m.get("score") is None else m["score"],
            float("-inf") if m.get("rouge1") is None else m["rouge1"],
        )

    return key(new) > key(old)


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


def measured_section(name: str, board: dict | None) -> str:
    lines = measured_lines(name, board or {})
    if not lines:
        return ""
    return (
        "\n## Measured on the leaderboard\n\nRight controls, with the effect (right minus shuffled controls, "
        "95% interval over documents), whether it stands against the pasted row, and the baseline's score. "
        "A claim that the controls steer the model rests on the model alone; the difference from the model "
        "as served is what its decoding rules and guidance add.\n\n" + "\n".join(lines) + "\n"
    )


def rewrite_cards(board: dict, index: Path | None = None) -> list[Path]:
    """Rewrite every stored model's card with what ``board`` measured of it; the paths written."""
    written = []
    for model in store.read_index(index):
        folder = store.model_path(model.name, index)
        (folder / "README.md").write_text(card(model, folder, board), encoding="utf-8")
        written.append(folder / "README.md")
    return written


def measured_lines(name: str, board: dict) -> list[str]:
    """What the leaderboard (``leaderboard.json``) measured of the stored model ``name`` on each test set:
    as served and alone (γ = 1, no decoding rules), each control metric's effect and whether it stands,
    and where it stands against its variant's baseline. Empty when the leaderboard has not scored it."""
    lines = []
    for variant in board.get("variants", {}).values():
        parts = [("derived test set", variant)] + [
            (f"`{n}`", part) for n, part in (variant.get("extra_test_sets") or {}).items()
        ]
        for title, part in parts:
            systems = {row["model"]: row for row in part.get("systems", [])}
            baseline = systems.get("baseline")
            for model, label in ((name, "as served"), (f"{name} (model alone)", "the model alone (γ = 1, no rules)")):
                row = systems.get(model)
                if row is None:
                    continue
                effects = []
                for metric, effect in (row.get("control_effect") or {}).items():
                    verdict = (row.get("verdict") or {}).get(metric)
                    interval = (
                        f" [{effect['ci_low']:+.3f}, {effect['ci_high']:+.3f}]"
                        if effect.get("ci_low") is not None
                        else ""
                    )
                    standing = "" if verdict is None else ", stands" if verdict["stands"] else ", does not stand"
                    versus = (
                        ""
                        if baseline is None or baseline["metrics"].get(metric) is None
                        else f", baseline {baseline['metrics'][metric]:.3f}"
                    )
                    effects.append(
                        f"{metric} {effect['given']:.3f} (effect {effect['difference']:+.3f}{interval}"
                        f"{standing}{versus})"
                    )
                lines.append(f"- {title}, {row['n_examples']} examples, {label}: " + "; ".join(effects))
    return lines


def card(model: store.StoredModel, folder: Path | None = None, board: dict | None = None) -> str:
    """The stored model's card: what it is, how it was trained and measured, how to load it. How it
    generates comes from the record in ``folder`` (default: the model's folder in the store); ``board``
    (a ``leaderboard.json``) adds what the leaderboard measured, as served and alone."""
    licences = "\n".join(f"| {name} | {licence} |" for name, licence in sorted(model.data_licenses.items()))
    kind = (
        "the shared base of every stored adapter"
        if model.format == "int8"
        else f"a peft LoRA adapter on the stored `{model.base}`"
    )
    kind += ", weight-only int8 with per-row scales, dequantized at load"
    record = read_record(folder or model.path)
    if record.get("dtype") == "int8-weights":
        kind += (
            "; it decodes with its decoder's weights requantized to int8 (`dtype: int8-weights`, measured as served)"
        )
    decoding = (["with its hard constraints on"] if record.get("constraints") else []) + (
        [f"at control strength γ = {read_strength(record):g}"] if read_strength(record, 1) != 1 else []
    )
    if decoding:
        kind += "; it generates " + " and ".join(decoding) + ", as measured"
    return f"""---
library_name: {"transformers" if model.format == "int8" else "peft"}
pipeline_tag: summarization
tags: [summarization, steersum, steersum-{model.variant}]
---
# {model.name}

SteerSum's `{model.variant}` model (method `{model.method}`): {kind}.

- trained for {model.steps} steps on {", ".join(model.data)}
- control effect when it was stored (given minus shuffled controls, paired-bootstrap 95% interval): {model.effect_text()}
- evaluation report: [`{Path(model.eval_report).name}`]({Path(model.eval_report).name}); measured when stored: {model.measure}
- stored {model.stored}

```python
from variants import load_summarizer
summarizer = load_summarizer("{model.name}")
```
{measured_section(model.name, board)}
## Training data

| data set | licence |
|---|---|
{licences}
"""


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
        compact_adapter(staging)
        point_at_base(staging, f"../{store.GENERAL}")
        # the record names the base it was checked against (by fingerprint), not where it lay when trained
        write_record(staging, {**read_record(staging), "base_model": f"store/models/{store.GENERAL}"})
    write_record(staging, portable_record(read_record(staging)))
    # minified: a report keeps every example three times (right, shuffled, γ = 1), each with its controls
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


def compare_compact(
    fp32_dir: str | Path, compact_dir: str | Path, max_examples: int | None = 100, batch_size: int = 8
) -> dict:
    """The general summarizer in fp32 and compacted, on the bbc_summary test split: ROUGE-1 of each
    (the goal: within 0.005), the verbatim share of names and numbers, and the share of generated
    tokens that agree position by position on the sets' first ``max_examples`` documents."""
    from .general import evaluate_general

    reports = {
        kind: evaluate_general(folder, max_examples, batch_size)
        for kind, folder in (("fp32", fp32_dir), ("int8", compact_dir))
    }
    out = {}
    for set_name in reports["fp32"]["sets"]:
        a, b = reports["fp32"]["sets"][set_name], reports["int8"]["sets"][set_name]
        out[set_name] = {
            "rouge1_fp32": a["rouge1"],
            "rouge1_int8": b["rouge1"],
            "rouge1_difference": b["rouge1"] - a["rouge1"],
            "within_goal": abs(b["rouge1"] - a["rouge1"]) <= 0.005,
            "verbatim_fp32": a["verbatim_fact_share"],
            "verbatim_int8": b["verbatim_fact_share"],
        }
    return out


def token_agreement(model_a, model_b, tokenizer, documents: list[str], max_new_tokens: int = 32) -> float:
    """Share of positions where two models' greedy generations hold the same token (a shorter output is
    padded, so a length difference counts as disagreement)."""
    import torch

    agree = total = 0
    with torch.inference_mode():
        for document in documents:
            batch = tokenizer([document], return_tensors="pt", truncation=True, max_length=256)
            a, b = (
                m.generate(**batch, num_beams=1, do_sample=False, max_new_tokens=max_new_tokens)[0].tolist()
                for m in (model_a, model_b)
            )
            width = max(len(a), len(b))
            a, b = a + [-1] * (width - len(a)), b + [-2] * (width - len(b))
            agree += sum(x == y for x, y in zip(a, b))
            total += width
    return agree / max(total, 1)


def compare_compact_adapter(
    adapter: str | Path,
    fp32_base: str | Path,
    test_file: str | Path,
    max_examples: int | None = 100,
    batch_size: int = 8,
) -> dict:
    """A stored adapter on the int8 base it is served with against the same adapter on the fp32 base:
    ROUGE-1 of each (goal: within 0.005) and, per control metric, whether the int8 control effect lies
    inside the fp32 one's interval."""
    import tempfile

    from variants import load_summarizer

    from .data import load_examples
    from .sensitivity import evaluate_with_sensitivity

    reports = {}
    with tempfile.TemporaryDirectory() as scratch:
        on_fp32 = Path(scratch) / Path(adapter).name
        shutil.copytree(adapter, on_fp32)
        point_at_base(on_fp32, Path(fp32_base).resolve())
        for kind, folder in (("int8", Path(adapter)), ("fp32", on_fp32)):
            summarizer = load_summarizer(folder)
            records = load_examples(test_file, summarizer.variant, summarizer.assets, max_examples)
            reports[kind] = evaluate_with_sensitivity(summarizer, records, str(test_file), batch_size)
    a, b = reports["fp32"], reports["int8"]
    out = {"rouge1_fp32": a["metrics"].get("rouge1"), "rouge1_int8": b["metrics"].get("rouge1"), "effects": {}}
    if out["rouge1_fp32"] is not None and out["rouge1_int8"] is not None:
        out["rouge1_difference"] = out["rouge1_int8"] - out["rouge1_fp32"]
        out["within_goal"] = abs(out["rouge1_difference"]) <= 0.005
    for name, e in a["control_sensitivity"]["effect"].items():
        other = b["control_sensitivity"]["effect"].get(name)
        if other is None:
            continue
        inside = None if e.get("ci_low") is None else e["ci_low"] <= other["difference"] <= e["ci_high"]
        out["effects"][name] = {
            "fp32": e["difference"],
            "fp32_interval": [e.get("ci_low"), e.get("ci_high")],
            "int8": other["difference"],
            "int8_inside_fp32_interval": inside,
        }
    return out
