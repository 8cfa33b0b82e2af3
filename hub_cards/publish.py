"""``python -m hub_cards publish ORG``: the model store published as Hub repos, all of them or none.

Every stored model is exported first (:func:`export_store`): the general summarizer as
``ORG/steersum-general`` (fp16), then each variant model (``ORG/steersum-<name>``) naming it as its base
(``--base-model`` is the general export's folder, whose recorded repo id goes into the card and the
adapter's config), then the Space (``ORG/steersum``), whose catalog lists the variant models. Each folder is
checked as a push would check it (:func:`hub_cards.push.check_folder`). Only when all of that has worked does
anything go to the Hub (:func:`publish_store`): the models, then the Space with its catalog pinned to the
commits just made. An export that fails stops the run before the first upload, so the Hub never holds
half a store. ``--dry-run`` stops after the checks and says what would be pushed, with no token and no
network; otherwise the token is checked (``whoami``) before the first export, and never printed.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path

import store

from .export import export_checkpoint
from .export_checks import ExportError
from .push import check_folder, hub_api, push_commit
from .space import CATALOG, package_space

log = logging.getLogger(__name__)
GENERAL_NAME = "steersum-general"
SPACE_NAME = "steersum"
UNPINNED = "main"  # a catalog revision before the models are pushed; the push pins each to its commit


def repo_id(org: str, model: store.StoredModel) -> str:
    """The Hub id of a stored model: ``ORG/steersum-general`` for the base, ``ORG/steersum-<name>`` otherwise."""
    return f"{org}/{GENERAL_NAME if model.variant == store.GENERAL else 'steersum-' + model.name}"


def export_store(out: str | Path, org: str, index: Path | None = None, hardware: str | None = None) -> dict:
    """Export every model of the store (``index``: default the committed one) and the Space into ``out``
    (new or empty); return ``{"models": [{"name", "repo", "variant", "folder"}], "space": folder}``. Raises
    :class:`ExportError` naming the model at the first one that cannot be exported."""
    out = Path(out)
    models = store.read_index(index)
    general = next((m for m in models if m.variant == store.GENERAL), None)
    if general is None:
        raise ExportError(store.EMPTY if not models else "the store has no general summarizer to publish first")
    ordered = [general] + [m for m in models if m is not general]
    exported = []
    general_folder = None
    for model in ordered:
        folder = out / model.name
        repo = repo_id(org, model)
        try:
            export_checkpoint(
                store.model_path(model.name, index),
                folder,
                repo_id=repo,
                base_model=None if model is general else str(general_folder),
            )
            check_folder(folder, load=False)  # card metadata, weights and their recorded checksums
        except Exception as err:
            raise ExportError(f"{model.name}: not exported, so nothing is pushed: {err}") from err
        general_folder = general_folder or folder
        exported.append({"name": model.name, "repo": repo, "variant": model.variant, "folder": folder})
    catalog = out / "catalog.json"
    write_catalog(catalog, [dict(entry, revision=UNPINNED) for entry in exported[1:]])
    space = package_space(out / "space", catalog=catalog, hardware=hardware)
    check_folder(space, repo_type="space")
    return {"models": exported, "space": space}


def write_catalog(path: Path, entries: list[dict]) -> None:
    """The Space's catalog (``space/catalog.json``): each variant model's repo, revision and variant."""
    rows = [{"repo": e["repo"], "revision": e["revision"], "variant": e["variant"]} for e in entries]
    path.write_text(json.dumps({"models": rows}, indent=2) + "\n", encoding="utf-8")


def publish_store(
    org: str,
    dry_run: bool = False,
    private: bool = False,
    token: str | None = None,
    api=None,
    index: Path | None = None,
    hardware: str | None = None,
    keep: str | Path | None = None,
) -> dict:
    """Export the store and the Space (:func:`export_store`), then, unless ``dry_run``, push the models and
    the Space, its catalog pinned to the commits made. Returns ``{"models": {repo: revision or None},
    "space": url or None, "exported": {name: folder}}``. ``keep``: export into this folder (new or empty)
    and leave it there, instead of a temporary one."""
    if not dry_run:  # the token first: no export is wasted on a push that cannot happen
        api = api or hub_api(token)
    with tempfile.TemporaryDirectory(prefix="steersum-store-") as tmp:
        out = Path(keep) if keep else Path(tmp)
        exported = export_store(out, org, index=index, hardware=hardware)
        result = {
            "models": {entry["repo"]: None for entry in exported["models"]},
            "space": None,
            "exported": {entry["name"]: str(entry["folder"]) for entry in exported["models"]},
        }
        if dry_run:
            log.info("dry run: %d models and the Space exported and checked; nothing pushed", len(result["models"]))
            return result
        for entry in exported["models"]:
            commit = push_commit(entry["folder"], entry["repo"], private=private, load=False, api=api)
            result["models"][entry["repo"]] = commit.oid
        pinned = [dict(entry, revision=result["models"][entry["repo"]]) for entry in exported["models"][1:]]
        write_catalog(exported["space"] / CATALOG, pinned)
        commit = push_commit(exported["space"], f"{org}/{SPACE_NAME}", private=private, repo_type="space", api=api)
        result["space"] = getattr(commit, "commit_url", None) or str(commit)
    return result


__all__ = ["GENERAL_NAME", "SPACE_NAME", "export_store", "publish_store", "repo_id"]
