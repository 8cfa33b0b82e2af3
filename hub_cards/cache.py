"""Exported repo folders laid out as a Hugging Face cache after a download, so that a Hub user's code runs on
them offline (``HF_HUB_CACHE``, ``HF_HUB_OFFLINE=1``): the tests' fixtures and the check of the real store
(``scripts/check_store_repos.py``) run every card's snippet this way, outside the checkout."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path


def add_to_cache(cache: Path, repo_id: str, folder: Path) -> str:
    """``folder`` as ``hf download repo_id`` leaves it in ``cache``: blobs named by their hash, a snapshot
    of links to them at a revision, ``refs/main`` naming it. Returns the revision."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())  # custom_generate/generate.py too
    revision = hashlib.sha1("".join(f"{p.relative_to(folder)}:{p.stat().st_size}" for p in files).encode()).hexdigest()
    base = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = base / "snapshots" / revision
    (base / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True)
    for path in files:
        blob = base / "blobs" / hashlib.sha256(path.read_bytes()).hexdigest()
        shutil.copyfile(path, blob)
        link = snapshot / path.relative_to(folder)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (base / "refs").mkdir(exist_ok=True)
    (base / "refs" / "main").write_text(revision)
    return revision


def offline_env(home: Path, cache: Path) -> dict:
    """A Hub user's environment for a fresh process: no SteerSum on the path, ``cache`` as after a download,
    no network."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "HF_HOME": str(home / "hf-home"),
        "HF_HUB_CACHE": str(cache),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
    }


def run_offline(code: str, *args: str, home: Path, cache: Path) -> subprocess.CompletedProcess:
    """``python -c code args...`` in a Hub user's fresh process (:func:`offline_env`) started in ``home``: its
    exit code and output, as text."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=home,
        capture_output=True,
        text=True,
        env=offline_env(home, cache),
        timeout=600,
    )
