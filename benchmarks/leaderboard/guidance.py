"""The leaderboard's control-strength part: each model's control effect against the guidance strength γ.

A model folder that holds ``guidance_sweep.json`` (``python -m training evaluate --guidance-sweep``:
the same test examples at γ = 1, 1.5, 2, 3) gets one row per γ in ``leaderboard.md`` — its variant's
first control metric with the right, shuffled and pasted scores, the effect with its interval, the
verdict against the pasted row, ROUGE-1 and the generation time relative to γ = 1 — and one panel of
``guidance.png``: the effect with its interval against γ, the model's default γ marked.
"""

from __future__ import annotations

import json
from pathlib import Path

from metrics.io import write_atomically
from training.guidance import SWEEP_FILE, lead_metric
from training.storing_admission import report_split

from .cells import cell, effect_cell, verdict_cell

HEADING = "## Control strength (classifier-free guidance)"


def guidance_board(entries) -> list[dict]:
    """One item per catalog entry (store or local folder) with a guidance sweep: its name, variant,
    default γ, test set and, per γ, the lead metric's effect, verdict, pasted score, ROUGE-1 and time."""
    board = []
    for entry in entries:
        file = Path(entry.location) / SWEEP_FILE if entry.source in ("store", "local") else None
        if file is None or not file.is_file():
            continue
        sweep = json.loads(file.read_text(encoding="utf-8"))
        metric = lead_metric(sweep)
        if metric is None:
            continue
        plain = sweep["sweep"][0]["seconds"] or None
        rows = [
            {
                "guidance": row["guidance"],
                "effect": row["effect"][metric],
                "verdict": row["verdict"].get(metric),
                "pasted": row["pasted"]["metrics"].get(metric),
                "rouge1": row["metrics"].get("rouge1"),
                "time_ratio": row["seconds"] / plain if plain else None,
            }
            for row in sweep["sweep"]
        ]
        board.append(
            {
                "system": entry.model,
                "variant": sweep["variant"],
                "metric": metric,
                "default_guidance": sweep["default_guidance"],
                "n_examples": sweep["n_examples"],
                "data": sweep["data"],
                "split": report_split(sweep) or "test",  # sweeps before choices moved to val ran on test
                "rows": rows,
            }
        )
    return board


def guidance_markdown(board: list[dict], plot: str | None) -> str:
    if not board:
        return ""
    lines = [
        HEADING,
        "",
        "Each model at control strength γ = 1 (plain generation), 1.5, 2 and 3 on the first examples of its "
        "val split, where γ is chosen (older sweeps: its test split; each row names its split) "
        "(`python -m training evaluate --guidance-sweep`): its variant's first control metric with "
        "the right and shuffled controls, the pasted row at the same length, the effect with its 95% interval, "
        "the verdict, ROUGE-1, and the generation time relative to γ = 1. **bold** γ: the model's default.",
        "",
        "| system | γ | metric | right | shuffled | pasted | effect [95% interval] | vs pasted | ROUGE-1 | time |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for item in board:
        for row in item["rows"]:
            e = row["effect"]
            gamma = f"{row['guidance']:g}"
            gamma = f"**{gamma}**" if row["guidance"] == item["default_guidance"] else gamma
            time = "–" if row["time_ratio"] is None else f"{row['time_ratio']:.2f}x"
            lines.append(
                f"| {item['system']} (n={item['n_examples']}, {item.get('split', 'test')}) | {gamma} | {item['metric']} | {cell(e['given'])} | "
                f"{cell(e['shuffled'])} | {cell(row['pasted'])} | {effect_cell(e)} | "
                f"{verdict_cell(row['verdict'])} | {cell(row['rouge1'])} | {time} |"
            )
    if plot:
        lines += ["", f"![control effect against γ]({plot})"]
    return "\n".join(lines + [""])


def plot_guidance(path: Path, board: list[dict]) -> None:
    """One panel per model: the lead metric's effect against γ with its interval, 0 dotted, the default γ ringed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(board), figsize=(3.2 * len(board), 3.0), squeeze=False)
    for axis, item in zip(axes[0], board):
        gammas = [row["guidance"] for row in item["rows"]]
        effects = [row["effect"]["difference"] for row in item["rows"]]
        low = [
            row["effect"]["difference"]
            - (row["effect"]["ci_low"] if row["effect"]["ci_low"] is not None else row["effect"]["difference"])
            for row in item["rows"]
        ]
        high = [
            (row["effect"]["ci_high"] if row["effect"]["ci_high"] is not None else row["effect"]["difference"])
            - row["effect"]["difference"]
            for row in item["rows"]
        ]
        axis.errorbar(gammas, effects, yerr=[low, high], marker="o", capsize=3, color="tab:blue")
        if item["default_guidance"] in gammas:
            i = gammas.index(item["default_guidance"])
            axis.plot([gammas[i]], [effects[i]], marker="o", markersize=12, fillstyle="none", color="tab:orange")
        axis.axhline(0, linestyle=":", color="grey")
        axis.set_xlabel("control strength γ")
        axis.set_title(f"{item['variant']}: {item['metric']} effect", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def refresh(out: Path, entries) -> list[dict]:
    """Rewrite only the control-strength part of an existing leaderboard in ``out`` (its section of
    ``leaderboard.md``, ``guidance.png`` and the ``guidance`` key of ``leaderboard.json``) from the sweeps
    of ``entries``, evaluating nothing (``python -m benchmarks leaderboard --guidance-only``)."""
    board = guidance_board(entries)
    markdown_file, json_file = out / "leaderboard.md", out / "leaderboard.json"
    if not markdown_file.is_file() or not json_file.is_file():
        raise FileNotFoundError(f"no leaderboard in {out}: run python -m benchmarks leaderboard first")
    if board:
        plot_guidance(out / "guidance.png", board)
    markdown = markdown_file.read_text(encoding="utf-8").split("\n" + HEADING)[0].rstrip("\n") + "\n"
    write_atomically(markdown_file, markdown + ("\n" + guidance_markdown(board, "guidance.png") if board else ""))
    whole = json.loads(json_file.read_text(encoding="utf-8"))
    whole["guidance"] = board
    write_atomically(json_file, json.dumps(whole, indent=2, ensure_ascii=False) + "\n")
    return board
