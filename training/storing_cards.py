"""A stored model's card (``README.md`` in its store folder): what it is, how it was trained and measured and
how to load it (:func:`card`, written by :func:`training.storing.put`), and what the leaderboard measured of it
as served and alone, added when ``python -m benchmarks leaderboard`` rewrites every card (:func:`rewrite_cards`).
"""

from __future__ import annotations

from pathlib import Path

import store
from variants.base import read_record
from variants.classifier_free_guidance import read_strength


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
    decoding = (
        (["with its hard constraints on"] if record.get("constraints") else [])
        + ([f"at control strength γ = {read_strength(record):g}"] if read_strength(record, 1) != 1 else [])
        + (
            ["with the document-words rule (names and numbers as the document writes them)"]
            if record.get("document_words")
            else []
        )
        + (["with no end before a finished sentence"] if record.get("finish_sentences") else [])
        + (["with no trigram repeated unless nothing else is left"] if record.get("no_repeat_trigrams") else [])
        + (
            ["with no word written twice in a row unless nothing else is left"]
            if record.get("no_doubled_words")
            else []
        )
        + (["quoting only what the document writes"] if record.get("verbatim_quotes") else [])
        + (["with names of one token only as the document writes them"] if record.get("document_names") else [])
        + (
            [
                f"reading a document longer than its {record.get('max_source_length', 1024)}-token source "
                + (
                    "in the run of whole sentences that fits it and its controls ask for most, when clearly more "
                    "than the first (a rule: alone, it reads the first)"
                    if record.get("window_mode") == "pick"
                    else f"in up to {record['source_windows']} windows its decoder reads together"
                )
            ]
            if int(record.get("source_windows") or 1) > 1
            else []
        )
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
