"""``python -m hub_cards``: export a checkpoint as a Hub repo folder, push a folder, package the Space.

    python -m hub_cards export CHECKPOINT_DIR --out DIR [--repo-id ORG/NAME] [--eval-report FILE]
                               [--base-model ORG/NAME]
    python -m hub_cards push DIR --repo-id ORG/NAME [--private] [--revision BRANCH] [--commit-message MSG]
                             [--repo-type model|space] [--skip-load-check] [--hub-token TOKEN]
    python -m hub_cards space --out DIR [--catalog FILE] [--hardware cpu-basic]
    python -m hub_cards publish ORG [--dry-run] [--private] [--hub-token TOKEN] [--out DIR]

``publish`` exports the model store's six models and the Space, checks every folder, and only then
uploads them (:mod:`hub_cards.publish`): one export that fails and nothing is pushed. ``--dry-run`` stops
before the first upload; ``--out`` keeps the exported folders.

The token comes from ``HF_TOKEN`` or the login cache (``hf auth login``) and is never printed; the
Hub is asked to accept it before anything is sent.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

from .export import export_checkpoint
from .export_checks import ExportError
from .publish import publish_store
from .push import REPO_TYPES, PushError, push_folder
from .space import package_space


def export_and_push(checkpoint_dir: str | Path, repo_id: str, private: bool = False, token: str | None = None) -> str:
    """Export ``checkpoint_dir`` (card naming ``repo_id``) to a temporary folder and push it with
    ``token`` (default: ``HF_TOKEN`` or the login cache); return the commit URL.
    ``python -m training ... --push-to-hub --hub-model-id ORG/NAME`` calls this."""
    if not repo_id:
        raise PushError("no repo id: pass --hub-model-id ORG/NAME")
    with tempfile.TemporaryDirectory(prefix="steersum-export-") as tmp:
        folder = export_checkpoint(checkpoint_dir, Path(tmp) / Path(checkpoint_dir).name, repo_id=repo_id)
        # The export just loaded the model with its variant's loader; loading it again proves nothing new.
        return push_folder(folder, repo_id, private=private, load=False, token=token)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hub_cards", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="checkpoint folder -> Hub repo folder with its model card")
    export.add_argument("checkpoint", help="a checkpoint folder written by python -m training")
    export.add_argument("--out", required=True, help="the repo folder to write (new or empty)")
    export.add_argument("--repo-id", help="ORG/NAME the card's usage snippet loads (default: a placeholder)")
    export.add_argument(
        "--eval-report",
        help="the evaluation report the card shows, e.g. the test set's (default: CHECKPOINT_DIR/eval_report.json)",
    )
    export.add_argument(
        "--base-model",
        help="the model's base as a Hub id in the local Hugging Face cache, or the "
        "folder of its export (made with --repo-id): checked against the "
        "checkpoint, then written into the card (and an adapter's "
        "adapter_config.json); needed when training used a local copy of it",
    )
    push = commands.add_parser("push", help="upload an exported folder to the Hub")
    push.add_argument("folder")
    push.add_argument("--repo-id", required=True, help="ORG/NAME")
    push.add_argument("--private", action="store_true", help="create the repo private")
    push.add_argument("--revision", help="branch to push to (created if missing; default: main)")
    push.add_argument("--commit-message")
    push.add_argument("--repo-type", choices=REPO_TYPES, default="model")
    push.add_argument(
        "--hub-token", help="a Hub token with write access (default: HF_TOKEN or the login cache); never printed"
    )
    push.add_argument(
        "--skip-load-check",
        action="store_true",
        help="do not load the model with its variant's loader (too big for this machine); "
        "the safetensors check still runs",
    )
    space = commands.add_parser("space", help="package the Gradio Space as a Space repo folder")
    space.add_argument("--out", required=True, help="the Space folder to write (new or empty)")
    space.add_argument("--catalog", help="model catalog JSON (default: space/catalog.json if present)")
    space.add_argument("--hardware", help="suggested_hardware (default: t4-small with models, else cpu-basic)")
    publish = commands.add_parser("publish", help="the model store's six models and the Space, all or nothing")
    publish.add_argument("org", help="the Hub user or organisation the repos go under")
    publish.add_argument("--dry-run", action="store_true", help="export and check everything, upload nothing")
    publish.add_argument("--private", action="store_true", help="create the repos private")
    publish.add_argument("--hub-token", help="a token with write access (default: HF_TOKEN or the login cache)")
    publish.add_argument("--out", help="export into this folder (new or empty) and keep it")
    publish.add_argument("--hardware", help="the Space's suggested_hardware")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "export":
            print(
                export_checkpoint(
                    args.checkpoint,
                    args.out,
                    repo_id=args.repo_id,
                    base_model=args.base_model,
                    eval_report=args.eval_report,
                )
            )
        elif args.command == "push":
            print(
                push_folder(
                    args.folder,
                    args.repo_id,
                    private=args.private,
                    revision=args.revision,
                    commit_message=args.commit_message,
                    repo_type=args.repo_type,
                    load=not args.skip_load_check,
                    token=args.hub_token,
                )
            )
        elif args.command == "publish":
            published = publish_store(
                args.org,
                dry_run=args.dry_run,
                private=args.private,
                token=args.hub_token,
                hardware=args.hardware,
                keep=args.out,
            )
            print(json.dumps(published, indent=2))
        else:
            print(package_space(args.out, catalog=args.catalog, hardware=args.hardware))
    except (ExportError, PushError, ValueError, FileNotFoundError) as err:
        sys.exit(f"error: {err}")


if __name__ == "__main__":
    main()
