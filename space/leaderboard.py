"""The Space's Leaderboard tab: the latest ``python -m benchmarks leaderboard`` output, read from disk.

The folder is ``STEERSUM_LEADERBOARD`` or ``./leaderboard``; the tab reads ``leaderboard.md`` (the
tables, with the paper's rows) and the PNG plots named in ``leaderboard.json``, on start-up and again
on "Reload", so a new run shows without restarting the Space.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import gradio as gr

from .standing import BOARD_DIR as DEFAULT_DIR  # the same file orders each variant's models

IMAGE_LINE = re.compile(r"^!\[[^\]]*\]\([^)]*\)\s*$", re.M)  # the md's plot links: the gallery shows the plots


def read_leaderboard(folder: str | Path = DEFAULT_DIR) -> tuple[str, list[tuple]]:
    """The tables as markdown and the plots as (image, caption) pairs; a hint when there is none yet."""
    folder = Path(folder)
    table, board = folder / "leaderboard.md", folder / "leaderboard.json"
    if not table.is_file() or not board.is_file():
        return (
            f"No leaderboard in `{folder}` yet: run `python -m benchmarks leaderboard --out {folder}` "
            "(and set `STEERSUM_LEADERBOARD` if it lives elsewhere)."
        ), []
    from PIL import Image

    generated = json.loads(board.read_text(encoding="utf-8"))
    plots = []
    for variant_id, part in generated["variants"].items():
        path = folder / part.get("plot", "")
        if part.get("plot") and path.is_file():
            with Image.open(path) as image:  # pixels, not a path: gradio serves files only from allowed folders
                plots.append((image.copy(), f"{part['title']} ({variant_id})"))
    text = IMAGE_LINE.sub("", table.read_text(encoding="utf-8"))
    return f"{text}\n_Generated {generated.get('generated', '?')} from `{folder}`._", plots


def leaderboard_tab(folder: str | Path | None = None) -> None:
    """The tab's contents, inside the caller's ``gr.Tab``."""
    folder = DEFAULT_DIR if folder is None else folder
    text, plots = read_leaderboard(folder)
    reload = gr.Button("Reload", size="sm")
    tables = gr.Markdown(text, elem_id="leaderboard")
    gallery = gr.Gallery(
        plots,
        columns=1,
        height="auto",
        object_fit="contain",  # whole plots, not cropped thumbnails
        label="plots (ours solid, the paper's hatched)",
        elem_id="leaderboard-plots",
    )
    reload.click(lambda: read_leaderboard(folder), None, [tables, gallery], api_visibility="private")
