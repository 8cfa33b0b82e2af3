"""Upload an exported folder (a model, or a Space) to the Hub, after checking it.

Checks before anything is sent: the card's metadata parses (``ModelCard.load`` + ``card.data``);
a model's weights are readable safetensors and load through the variant's own loader; a Space has
its ``app_file``; a token is found (``HF_TOKEN`` or the login cache); the Hub accepts the metadata
(``card.validate()``). The token is handed to ``HfApi`` and is never printed or logged.
"""
from __future__ import annotations

import logging
from pathlib import Path

from huggingface_hub import HfApi, ModelCard, SpaceCard, get_token

from variants.base import RECORD_FILE

from .export import ExportError, check_weights, load_checkpoint

REPO_TYPES = ("model", "space")
log = logging.getLogger(__name__)


class PushError(ValueError):
    """The folder or the environment is not ready to push; nothing was uploaded."""


def check_folder(folder: str | Path, repo_type: str = "model", load: bool = True) -> ModelCard | SpaceCard:
    """Refuse (``PushError``) a folder that would make a broken repo. ``load=False`` skips loading the
    model with its variant's loader (for models too big for this machine); the safetensors check stays."""
    folder = Path(folder)
    if repo_type not in REPO_TYPES:
        raise PushError(f"unknown repo type {repo_type!r}; allowed: {', '.join(REPO_TYPES)}")
    if not folder.is_dir():
        raise PushError(f"{folder}: no such folder")
    card_file = folder / "README.md"
    if not card_file.is_file():
        raise PushError(f"{folder}: no README.md (export the folder with python -m hub_cards export or space)")
    try:
        card = (SpaceCard if repo_type == "space" else ModelCard).load(card_file)
        metadata = card.data.to_dict()
    except Exception as err:  # a YAML error, a malformed model-index: either way the Hub page would be broken
        raise PushError(f"{card_file}: the card's metadata does not parse: {err}") from None
    if repo_type == "space":
        app_file = metadata.get("app_file")
        if not app_file or not (folder / app_file).is_file():
            raise PushError(f"{card_file}: app_file {app_file!r} is not in the folder")
        return card
    if not (folder / RECORD_FILE).is_file():
        raise PushError(f"{folder}: no {RECORD_FILE}; export a checkpoint with python -m hub_cards export")
    try:
        check_weights(folder)
        if load:
            load_checkpoint(folder)
    except ExportError as err:
        raise PushError(f"weights fail to load: {err}") from None
    return card


def push_folder(folder: str | Path, repo_id: str, private: bool = False, revision: str | None = None,
                commit_message: str | None = None, repo_type: str = "model", load: bool = True,
                api: HfApi | None = None) -> str:
    """Check ``folder``, create the repo (and the ``revision`` branch) if needed, upload; return the
    commit URL. ``api`` is for tests; by default an ``HfApi`` holding the found token."""
    card = check_folder(folder, repo_type, load=load)
    token = get_token()  # HF_TOKEN, else the login cache
    if not token:
        raise PushError("no Hugging Face token: set HF_TOKEN or run `hf auth login`; nothing was uploaded")
    try:
        card.validate(repo_type=repo_type)  # the Hub's own metadata check (network), before any write
    except ValueError as err:
        raise PushError(f"the Hub rejects the card's metadata: {err}") from None
    card_text = Path(folder, "README.md").read_text(encoding="utf-8")
    if repo_type == "model" and repo_id not in card_text:
        log.warning("the card's usage snippet does not name %s; re-export with --repo-id %s", repo_id, repo_id)
    api = api or HfApi(token=token)
    api.create_repo(repo_id, private=private, repo_type=repo_type, exist_ok=True,
                    space_sdk="gradio" if repo_type == "space" else None)
    if revision:
        api.create_branch(repo_id, branch=revision, repo_type=repo_type, exist_ok=True)
    commit = api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type=repo_type, revision=revision,
                               commit_message=commit_message or f"Upload {Path(folder).name} with SteerSum hub_cards")
    url = getattr(commit, "commit_url", None) or str(commit)
    log.info("pushed %s to %s (%s)", folder, repo_id, url)
    return url
