"""``python -m training zoo --push-to-hub ORG``: the zoo's models published as Hub repos, and the Space.

Order matters: the general summarizer first (``ORG/steersum-general``), because the CCS adapter names
it as its base (``--base-model`` is its export's folder, whose recorded repo id is written into
``adapter_config.json``); then each variant model (``ORG/steersum-<variant>-<method>``, the card naming
its repo, the processor inside); then the Space (``ORG/steersum``), whose catalog lists each variant
model pinned to the commit its push made. Every folder is checked before anything is sent
(:func:`hub_cards.push.check_folder`: card metadata, weights and their checksums; the export has just loaded
each model with its variant's loader), and the token once, before the first upload.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path

from .export import export_checkpoint
from .export_checks import ExportError
from .push import hub_api, push_commit
from .space import package_space

log = logging.getLogger(__name__)
GENERAL_NAME = "steersum-general"
SPACE_NAME = "steersum"


def repo_name(model_name: str) -> str:
    """The Hub name of a zoo model folder (``topic-prepend-tag`` → ``steersum-topic-prepend-tag``)."""
    return f"steersum-{model_name}"


def publish_zoo(
    root: str | Path,
    org: str,
    models: list[tuple[str, str]],
    private: bool = False,
    token: str | None = None,
    api=None,
    hardware: str | None = None,
) -> dict:
    """Export and push every finished model of the zoo in ``root`` under ``org``, then the Space; return
    ``{"models": {repo: revision}, "space": url, "catalog": [...]}``. A zoo without its general summarizer
    or a variant model's evaluation (``eval_report.json``: the model is finished) is refused before any push.
    ``models``: the zoo's ``(folder name, variant)`` pairs, in publishing order (``training.zoo.MODELS``)."""
    root = Path(root)
    general = root / "general"
    if not (general / "steersum.json").is_file():
        raise ExportError(f"{general}: no general summarizer; run python -m training zoo first")
    missing = [name for name, _ in models if not (root / name / "eval_report.json").is_file()]
    if missing:
        raise ExportError(
            f"{root}: unfinished model(s) {', '.join(missing)} (no eval_report.json); run python -m training zoo first"
        )
    api = api or hub_api(token)
    published, catalog = {}, []
    with tempfile.TemporaryDirectory(prefix="steersum-zoo-") as tmp:
        # every model exported (and so loaded and checked) before the first upload: all of them or none
        general_repo = f"{org}/{GENERAL_NAME}"
        general_export = export_checkpoint(general, Path(tmp) / "general", repo_id=general_repo)
        exports = [(general_repo, general_export, None)]
        for name, variant in models:
            repo_id = f"{org}/{repo_name(name)}"
            # every model names the general summarizer's repo as its base (the adapter must: it runs on it)
            folder = export_checkpoint(root / name, Path(tmp) / name, repo_id=repo_id, base_model=str(general_export))
            exports.append((repo_id, folder, variant))
        for repo_id, folder, variant in exports:
            published[repo_id] = push_commit(folder, repo_id, private=private, load=False, api=api).oid
            if variant:
                catalog.append({"repo": repo_id, "revision": published[repo_id], "variant": variant})
        catalog_file = Path(tmp) / "catalog.json"
        catalog_file.write_text(json.dumps({"models": catalog}, indent=2) + "\n", encoding="utf-8")
        space = package_space(Path(tmp) / "space", catalog=catalog_file, hardware=hardware)
        space_repo = f"{org}/{SPACE_NAME}"
        commit = push_commit(space, space_repo, private=private, repo_type="space", api=api)
    log.info("published %d models and the Space %s", len(published), space_repo)
    return {"models": published, "space": getattr(commit, "commit_url", None) or str(commit), "catalog": catalog}
