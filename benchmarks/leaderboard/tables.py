"""The leaderboard's outputs: ``leaderboard.md`` (one table per variant and test set, each system
followed by its shuffled-controls, Lead-k and pasted rows, then the control effects with the
verdict against the pasted row), ``<variant>.png`` bar charts and ``leaderboard.json``, all from
the board that :func:`benchmarks.leaderboard.harness.run` gathers."""

from __future__ import annotations

import json
from pathlib import Path

from metrics.bootstrap import N_RESAMPLES
from metrics.io import write_atomically

from .cells import ALPHA, cell, effect_cell, verdict_cell, words_cell
from .guidance import guidance_markdown, plot_guidance

REPORTED_LABEL = "reported in paper (different data/base model)"
SHUFFLED_LABEL = "↳ same system, shuffled controls"
PASTED_LABEL = "↳ Lead-k + pasted controls"
PLOT_COLUMNS = 4  # metrics per row of plots
TEXT_FIELDS = ("ends_sentence", "repeated_trigram", "doubled_word", "altered_quote", "has_unsupported")


def variant_markdown(variant_id: str, board: dict) -> str:
    paper = board["paper"]
    lines = [
        f"## {board['title']} (`{variant_id}`)",
        "",
        f"Paper: [{paper['title']}]({paper['url']}) ({paper['authors']}, {paper['year']}).",
    ]
    if "skipped" in board:
        return "\n".join(lines + ["", f"_Skipped: {board['skipped']}._", ""])
    lines += test_set_markdown(board, board, "derived test set", reported=True)
    for name, part in board.get("extra_test_sets", {}).items():
        lines += ["", f"### Test set `{name}` (human references)", ""]
        lines += test_set_markdown(board, part, name, reported=False)
    lines += [f"- unavailable: {u['model']} — {u['reason']}" for u in board["unavailable"]]
    if board.get("plot"):
        lines += ["", f"![{variant_id}]({board['plot']})"]
    return "\n".join(lines + [""])


def test_set_markdown(board: dict, part: dict, label: str, reported: bool) -> list[str]:
    """One test set's table (systems, their control rows, the paper's rows when ``reported``), its
    footnotes and its control effects."""
    names, test_set = board["metric_names"], part["test_set"]
    lines = [
        f"Test set ({label}): {test_set['n']} examples from {', '.join(test_set['datasets'])} "
        f"(`{test_set['file']}`). Numbers as `python -m training evaluate` reports them (ROUGE as fractions; "
        "the papers print x100); the paper's rows are converted to the same scale. _words_: mean summary "
        "length in words.",
        "",
        "| system | method | n | words | " + " | ".join(names) + " |",
        "|" + "---|" * (len(names) + 4),
    ]
    for row in part["systems"]:
        tests = row.get("vs_baseline", {})
        lines.append(
            f"| {row['system']} | {row['method']} | {row['n_examples']} | {words_cell(row['metrics'])} | "
            + " | ".join(cell(row["metrics"].get(n), tests.get(n)) for n in names)
            + " |"
        )
        for sub_label, method, sub in control_rows(row):
            lines.append(
                f"| {sub_label} | {method} | {sub['n_examples']} | {words_cell(sub['metrics'])} | "
                + " | ".join(cell(sub["metrics"].get(n)) for n in names)
                + " |"
            )
    for row in board["reported"] if reported else []:
        lines.append(
            f"| _{row['system']} — {REPORTED_LABEL}, {row['source']}_ | | | | "
            + " | ".join(cell(row["metrics"].get(n)) for n in names)
            + " |"
        )
    lines += [
        "",
        f"† better than the baseline at p < {ALPHA} (one-sided paired bootstrap over documents, each "
        f"resampled with all its examples, {N_RESAMPLES} resamples, seed 0; ROUGE / ROUGE-K scores only). "
        f"{SHUFFLED_LABEL}: each example summarized with another example's controls (seeded derangement), "
        "scored against its own. ↳ Lead-k: the control-blind row, the document's first sentences up to the "
        f"system's mean summary length, controls ignored. {PASTED_LABEL}: the same Lead-k with the "
        "controls' own words pasted in (the topic's terms, the entity's name, the keywords, a focus cue "
        "sentence and extra periods, the boost words, the reader's titles).",
    ]
    lines += breakdown_markdown(names, part)
    lines += text_markdown(part)
    lines += control_effect_markdown(board, part)
    lines += [
        f"- {row['system']}: {row['truncated_inputs']} of {row['n_examples']} inputs cut to the model's length limit."
        for row in part["systems"]
        if row["truncated_inputs"]
    ]
    return lines


def breakdown_markdown(names: list[str], part: dict) -> list[str]:
    """The systems' metrics per group of examples (``Evaluation.breakdown``: where the asked article comes in
    a topic super-article, say), when the variant reports groups."""
    groups = sorted({group for row in part["systems"] for group in row.get("breakdown", {})})
    if not groups:
        return []
    lines = [
        "",
        "By group:",
        "",
        "| system | group | n | " + " | ".join(names) + " |",
        "|" + "---|" * (len(names) + 3),
    ]
    for row in part["systems"]:
        for group in groups:
            values = row.get("breakdown", {}).get(group)
            if values:
                lines.append(
                    f"| {row['system']} | {group} | {values['n']} | "
                    + " | ".join(cell(values.get(n)) for n in names)
                    + " |"
                )
    return lines


def text_markdown(part: dict) -> list[str]:
    """The systems' text as a reader sees it (:mod:`metrics.quality`): the share of summaries that end a sentence,
    and of those with a repeated 3-gram, a word twice in a row, a quote the document does not write, a name or
    number it lacks; "–" where a report predates a score."""
    lines = [
        "",
        "Text as a reader sees it (shares of summaries, `metrics.quality`):",
        "",
        "| system | ends a sentence | repeated 3-gram | word twice in a row | altered quote | name or number not in the "
        "document |",
        "|---|---|---|---|---|---|",
    ]
    for row in part["systems"]:
        shares = [row["metrics"].get(field) for field in TEXT_FIELDS]
        lines.append(f"| {row['system']} | " + " | ".join(cell(share) for share in shares) + " |")
    return lines


def control_rows(row: dict) -> list[tuple[str, str, dict]]:
    """The rows under a system: the same system on shuffled controls, Lead-k at its length, and
    Lead-k with the controls pasted in."""
    if "shuffled" not in row:
        return []
    lead = row["lead_k"]
    rows = [
        (SHUFFLED_LABEL, "", row["shuffled"]),
        (f"↳ Lead-k at the same length ({lead['budget_words']} words), control-blind", "lead-k", lead),
    ]
    if "pasted" in row:
        rows.append((f"{PASTED_LABEL} ({lead['budget_words']} words)", "pasted", row["pasted"]))
    return rows


def control_effect_markdown(board: dict, part: dict) -> list[str]:
    """Per system, one row per control metric: right, shuffled, Lead-k and pasted scores, the control
    effect with its interval, and whether the metric stands against the pasted row."""
    systems = [row for row in part["systems"] if "control_effect" in row]
    names = [n for n in board.get("control_metrics", []) if any(n in row["control_effect"] for row in systems)]
    if not names:
        return []
    lines = [
        "",
        "Control effect = score with the right controls − score with shuffled controls (95% paired-bootstrap "
        f"interval over documents, each resampled with all its examples, {N_RESAMPLES} resamples, seed 0; "
        "for lower-is-better metrics such as length_error or egises a negative effect means the controls "
        "help). Lead-k ignores the controls: its effect is 0 by construction. A metric _stands_ when the "
        "intervals of the effect and of the margin over the pasted row, (right − pasted) − effect / 2, both "
        "lie above 0, and for ROUGE-type metrics right − Lead-k too (`training.sensitivity.verdicts`); the "
        "last column gives the margin with its interval.",
        "",
        "| system | metric | right | shuffled | Lead-k | pasted | effect [95% interval] | vs pasted: margin |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in systems:
        pasted = row.get("pasted", {}).get("metrics", {})
        for name in names:
            effect = row["control_effect"].get(name)
            if effect is None:
                continue
            lines.append(
                f"| {row['system']} | {name} | {cell(effect['given'])} | {cell(effect['shuffled'])} | "
                f"{cell(row['lead_k']['metrics'].get(name))} | {cell(pasted.get(name))} | "
                f"{effect_cell(effect)} | {verdict_cell(row.get('verdict', {}).get(name))} |"
            )
    lines += [
        f"- {row['system']}: shuffling changed the controls of {row['shuffled']['controls_changed']} of "
        f"{row['shuffled']['n_examples']} examples (they all ask for the same), so its control effect "
        "cannot show anything."
        for row in systems
        if row["shuffled"]["controls_changed"] == 0
    ]
    return lines


def plot_variant(path: Path, variant_id: str, board: dict) -> None:
    """One horizontal bar chart per metric (metrics differ in scale), ours solid, the paper's hatched;
    the derived test set's systems with their shuffled, Lead-k and pasted rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ours = [
        (label, metrics)
        for row in board["systems"]
        for label, metrics in [(row["system"], row["metrics"])]
        + [(f"   {label.lstrip('↳ ')}", sub["metrics"]) for label, _, sub in control_rows(row)]
    ]
    theirs = [(f"{row['system']} (paper)", row["metrics"]) for row in board["reported"]]
    labels = [label for label, _ in ours + theirs]
    names = board["metric_names"]
    columns = min(len(names), PLOT_COLUMNS)
    rows = -(-len(names) // columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(3.2 * columns + 2, rows * (0.35 * len(labels) + 1.2) + 0.5), sharey=True, squeeze=False
    )
    for axis in axes.flat[len(names) :]:
        axis.set_visible(False)
    for axis, name in zip(axes.flat, names):
        values = [metrics.get(name) for _, metrics in ours + theirs]
        bars = axis.barh(
            range(len(labels)),
            [v if v is not None else 0 for v in values],
            color=[("lightsteelblue" if label.startswith("   ") else "tab:blue") for label, _ in ours]
            + ["lightgrey"] * len(theirs),
        )
        for bar in bars[len(ours) :]:
            bar.set_hatch("//")
        for y, value in enumerate(values):
            if value is None:  # no bar is not a zero: say it is missing
                axis.text(0, y, " n/a", va="center", fontsize=7, color="grey")
        axis.set_title(name)
    axes[0][0].set_yticks(range(len(labels)), labels)
    axes[0][0].invert_yaxis()  # first system on top (the axes share y: once for all)
    figure.suptitle(
        f"{board['title']} ({variant_id}): ours (blue; pale: shuffled controls, Lead-k and pasted) and "
        f"{REPORTED_LABEL} (hatched)",
        fontsize=9,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write_outputs(out: Path, board: dict) -> None:
    for variant_id, part in board["variants"].items():
        if part.get("systems"):
            plot_variant(out / f"{variant_id}.png", variant_id, part)
            part["plot"] = f"{variant_id}.png"
    guidance = board.get("guidance") or []
    if guidance:
        plot_guidance(out / "guidance.png", guidance)
    markdown = "# SteerSum leaderboard\n\n" + "\n".join(
        variant_markdown(v, part) for v, part in board["variants"].items()
    )
    markdown += "\n" + guidance_markdown(guidance, "guidance.png" if guidance else None)
    write_atomically(out / "leaderboard.md", markdown)
    write_atomically(out / "leaderboard.json", json.dumps(board, indent=2, ensure_ascii=False) + "\n")
