"""Service results turned into what the UI shows: a metrics table, chart data, comparison rows.

Scores are ``{"value", "meaning", "details"}``; a ``details`` entry that maps labels to numbers
(e.g. STAS's affinity per topic) reads faster as a bar chart than as a table.

Every user-supplied string shown in Markdown or in a toast goes through :func:`escape_markdown` or
:func:`escape_html` first: a topic typed as ``<img src=x onerror=...>`` shows as those characters.
"""

from __future__ import annotations

import html
import re

import pandas as pd

from metrics.quality import asked_words

CHART_COLUMNS = ["label", "value", "series"]
NOT_SET = "not set"  # the choice that leaves an optional control out of the request
MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")


def escape_html(text: object) -> str:
    """Text for a toast (``gr.Error``/``gr.Warning`` render HTML): tags show as characters."""
    return html.escape(str(text), quote=False)


def escape_markdown(text: object) -> str:
    """Text for a Markdown block: HTML escaped and Markdown's punctuation backslashed, so a value
    renders as the characters it holds (no tags, links, emphasis or code spans)."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def format_value(value) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def text_checks(quality: dict) -> list[tuple[bool, str]]:
    """A result's text checks (its ``quality``: :mod:`metrics.quality`) as (passed, words) pairs: the
    sentence end, a repeated 3-gram, a word twice in a row, an altered quote, names and numbers the document lacks, and the length against the
    asked one where the controls ask for a length."""
    missing = quality["unsupported_facts"]
    checks = [
        (bool(quality["ends_sentence"]), "ends a sentence" if quality["ends_sentence"] else "does not end a sentence"),
        (
            not quality["repeated_trigram"],
            "a repeated 3-gram" if quality["repeated_trigram"] else "no repeated 3-gram",
        ),
        (
            not quality["doubled_word"],
            "a word twice in a row" if quality["doubled_word"] else "no word twice in a row",
        ),
        (
            not quality["altered_quote"],
            "a quote the document does not write" if quality["altered_quote"] else "no altered quote",
        ),
        (
            not missing,
            f"{missing} name(s) or number(s) not in the document"
            if missing
            else "every name and number in the document",
        ),
    ]
    if "length_in_bounds" in quality:
        asked = asked_words(quality["asked_min_words"], quality["asked_max_words"])
        checks.append((bool(quality["length_in_bounds"]), f"{quality['words']} words (asked {asked})"))
    return checks


def checks_markdown(quality: dict, title: str = "text") -> str:
    """The text checks as one line of a score panel, each marked passed (✓) or failed (✗)."""
    return f"- **{title}** — " + " · ".join(f"{'✓' if ok else '✗'} {words}" for ok, words in text_checks(quality))


def checks_cell(quality: dict | None) -> str:
    """The text checks as a table cell: ✓ when every one passes, else the failed ones."""
    failed = [words for ok, words in text_checks(quality) if not ok] if quality else []
    return "✗ " + "; ".join(failed) if failed else "✓"


def metrics_markdown(result: dict) -> str:
    """The live metrics panel: one line per score with its one-line meaning, the text checks, then any
    notices."""
    lines = [f"- **{name} = {format_value(s['value'])}** — {s['meaning']}" for name, s in result["scores"].items()]
    lines = lines or ["_this variant reports no metrics for these controls_"]
    lines += [checks_markdown(result["quality"])] if result.get("quality") else []
    lines += [f"\n> ⚠ {escape_markdown(notice)}" for notice in result.get("notices", [])]
    return "\n".join(lines)


def short(label: str, limit: int = 16) -> str:
    """A chart label short enough not to run into its neighbours' (an unseen topic can be a sentence)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def chart_frame(scores: dict, controls: dict | None = None) -> pd.DataFrame:
    """Every per-label breakdown found in the scores' details, as (label, value, series) rows; a label
    that is a requested control value (the topic asked for) gets its own series, so its bar stands out."""
    requested = {str(v) for v in (controls or {}).values() if isinstance(v, (str, int))}
    rows = [
        (short(str(label)), float(number), f"{name} {key}" + (" (requested)" if str(label) in requested else ""))
        for name, score in scores.items()
        for key, breakdown in (score.get("details") or {}).items()
        if isinstance(breakdown, dict)
        for label, number in breakdown.items()
        if isinstance(number, (int, float)) and not isinstance(number, bool)
    ]
    return pd.DataFrame(rows, columns=CHART_COLUMNS)


REQUESTED_COLOUR = "#f97316"  # the requested value's bar: the same orange in every result
SERIES_COLOURS = ("#4c78a8", "#72b7b2", "#9d755d", "#b279a2", "#54a24b")  # the other series, in order


def chart_colours(frame: pd.DataFrame) -> dict[str, str]:
    """A colour per series of this result (gradio otherwise colours by order of appearance, so the
    requested bar changed colour from one result to the next)."""
    series = list(dict.fromkeys(frame["series"]))
    plain = [name for name in series if not name.endswith(" (requested)")]
    colours = {name: SERIES_COLOURS[i % len(SERIES_COLOURS)] for i, name in enumerate(plain)}
    return colours | {name: REQUESTED_COLOUR for name in series if name.endswith(" (requested)")}


def table_frame(results: list[dict], first_column: str) -> pd.DataFrame:
    """Side-by-side results (Compare: one row per model; Sweep: one row per control value), with a column
    of text checks (:func:`checks_cell`) when the results carry them."""
    names = list(dict.fromkeys(name for r in results for name in r["scores"]))
    checks = ["text checks"] if any(r.get("quality") for r in results) else []
    rows = [
        [
            r[first_column],
            *(format_value(r["scores"].get(n, {}).get("value")) for n in names),
            *([checks_cell(r.get("quality"))] if checks else []),
            r["summary"],
        ]
        for r in results
    ]
    return pd.DataFrame(rows, columns=[first_column, *names, *checks, "summary"])  # scores first: short, read first
