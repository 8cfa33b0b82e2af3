"""Upload an exported folder (a model, or a Space) to the Hub, after checking it.

Checks before anything is sent: the card's metadata parses (``ModelCard.load`` + ``card.data``);
a model's weights are readable safetensors, match the sha256 sums in ``steersum.json`` and load
through the variant's own loader; a Space has its ``app_file``; a token is found (given, ``HF_TOKEN``
or the login cache) and the Hub accepts it (``whoami``, which also proves the Hub can be reached);
the Hub accepts the metadata (``card.validate()``). The token is handed to ``HfApi`` and is never printed or logged. A Hub that
cannot be reached (offline mode, no network) or refuses the token ends in a :class:`PushError`, one
line saying what to do.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path

from huggingface_hub import HfApi, ModelCard, SpaceCard, get_token
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

from variants.base import RECORD_FILE, read_record, verify_weights

from .export import load_checkpoint
from .export_checks import ExportError, check_weights

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
            load_checkpoint(folder)  # verifies the recorded checksums, then loads
        else:
            verify_weights(folder, read_record(folder))
    except (ExportError, ValueError) as err:
        raise PushError(f"weights fail to load: {err}") from None
    return card


@contextmanager
def hub_errors(action: str):
    """Turn what the Hub client raises into one ``PushError`` line that says what to do (no
    traceback); none of these messages carries the token."""
    try:
        yield
    except OfflineModeIsEnabled:
        raise PushError(
            f"{action}: HF_HUB_OFFLINE is set, so nothing can reach the Hub; unset HF_HUB_OFFLINE "
            "on a machine with network access and push again"
        ) from None
    except HfHubHTTPError as err:
        status = getattr(err.response, "status_code", None)
        if status in (401, 403):
            raise PushError(
                f"{action}: the Hub refused the token ({status}); pass a token with write access "
                "(--hub-token, HF_TOKEN or `hf auth login`)"
            ) from None
        first_line = (str(err).strip().splitlines() or [""])[0]
        raise PushError(f"{action}: the Hub answered {status}: {first_line}") from None
    except (OSError, ConnectionError) as err:  # no network, DNS, proxy, timeout
        raise PushError(
            f"{action}: cannot reach the Hub ({type(err).__name__}); check the network or proxy "
            "(HF_ENDPOINT, HTTPS_PROXY) and push again"
        ) from None
    except Exception as err:  # the HTTP client's own errors (ConnectError, ReadTimeout) are not OSErrors
        if "http" not in type(err).__module__:
            raise
        raise PushError(
            f"{action}: cannot reach the Hub ({type(err).__name__}); check the network or proxy "
            "(HF_ENDPOINT, HTTPS_PROXY) and push again"
        ) from None


def hub_api(token: str | None = None) -> HfApi:
    """An ``HfApi`` holding ``token`` (default: ``HF_TOKEN``, else the login cache) once the Hub has
    accepted it. ``python -m training --push-to-hub`` calls this before training starts."""
    token = token or get_token()
    if not token:
        raise PushError(
            "no Hugging Face token: pass --hub-token, set HF_TOKEN or run `hf auth login`; nothing was uploaded"
        )
    api = HfApi(token=token)
    with hub_errors("checking the token"):
        api.whoami()
    return api


def push_folder(
    folder: str | Path,
    repo_id: str,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
    repo_type: str = "model",
    load: bool = True,
    api: HfApi | None = None,
    token: str | None = None,
) -> str:
    """Check ``folder``, create the repo (and the ``revision`` branch) if needed, upload; return the
    commit URL. ``api`` is for tests; by default an ``HfApi`` holding ``token`` (default: the found one)."""
    commit = push_commit(folder, repo_id, private, revision, commit_message, repo_type, load, api, token)
    return getattr(commit, "commit_url", None) or str(commit)


def push_commit(
    folder: str | Path,
    repo_id: str,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
    repo_type: str = "model",
    load: bool = True,
    api: HfApi | None = None,
    token: str | None = None,
):
    """:func:`push_folder`, returning the Hub's ``CommitInfo`` (its ``oid`` pins the revision pushed)."""
    card = check_folder(folder, repo_type, load=load)
    api = api or hub_api(token)
    with hub_errors("checking the card"):
        try:
            card.validate(repo_type=repo_type)  # the Hub's own metadata check (network), before any write
        except ValueError as err:
            raise PushError(f"the Hub rejects the card's metadata: {err}") from None
    card_text = Path(folder, "README.md").read_text(encoding="utf-8")
    if repo_type == "model" and repo_id not in card_text:
        log.warning("the card's usage snippet does not name %s; re-export with --repo-id %s", repo_id, repo_id)
    with hub_errors(f"pushing to {repo_id}"):
        api.create_repo(
            repo_id,
            private=private,
            repo_type=repo_type,
            exist_ok=True,
            space_sdk="gradio" if repo_type == "space" else None,
        )
        if revision:
            api.create_branch(repo_id, branch=revision, repo_type=repo_type, exist_ok=True)
        message = commit_message or f"Upload {Path(folder).name} with SteerSum hub_cards"
        commit = api.upload_folder(
            repo_id=repo_id, folder_path=str(folder), repo_type=repo_type, revision=revision, commit_message=message
        )
    log.info("pushed %s to %s (%s)", folder, repo_id, getattr(commit, "commit_url", commit))
    return commit
