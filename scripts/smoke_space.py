"""Start a Space, call ``/summarize`` once for every variant's baseline and every stored model (``store/``),
a model once more with guidance, through ``gradio_client``, stop it.

    python scripts/smoke_space.py                       # python -m space, from this checkout
    python scripts/smoke_space.py --cwd S -- app.py     # an exported Space folder (hub_cards space --out S)
    python scripts/smoke_space.py --models checkpoints  # also every trained model there (python -m training zoo)

The Space is started on a free port in a subprocess of its own, so it sees only what it ships
(``.ci/run`` runs it in a plain clone; tests/test_sources.py in an exported Space with nothing beside it).
Exits non-zero, with the Space's log tail, when the start or any call fails.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# One example per variant: the cards' usage examples (topic: a topic of the default topic space).
DOCUMENT = (
    "The striker scored twice as the club won the cup final on Saturday, and the coach praised the defence. "
    "Shares in the bank fell after profits dropped, and analysts expect more job cuts this year. "
    "Angela Merkel said the talks on the budget would continue next week."
)
CONTROLS = {
    "topic": {"topic": "sport"},
    "persona": {"reader": "sim01-business"},
    "entity": {"entity": "Angela Merkel"},
    "ccs": {"length": 0, "keywords": ["bank"]},
    "tdsum": {"boost": ["profits"]},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


GUIDED = 2.0  # a control strength besides the model's default, as the page's slider sets it


def smoke(url: str, systems: list[tuple[str, str]]) -> dict[str, str]:
    """One ``/summarize`` call per (variant, model choice), keyed by the variant (its baseline) or "variant
    model"; the first model also once at γ = :data:`GUIDED` (guided generation), keyed "variant model γ=2"."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    summaries = {}
    first_model = next((system for system in systems if system[1] != "baseline"), None)
    for variant, model in systems:
        system = variant if model == "baseline" else f"{variant} {model}"
        for guidance in (None, GUIDED) if (variant, model) == first_model else (None,):
            name = system if guidance is None else f"{system} γ={guidance:g}"
            summary = client.predict(
                DOCUMENT, variant, model, json.dumps(CONTROLS[variant]), "", guidance, api_name="/summarize"
            )[0]
            if not summary.strip():
                raise RuntimeError(f"{name}: /summarize wrote an empty summary")
            summaries[name] = summary
    return summaries


def trained_models(folder: Path) -> list[tuple[str, str]]:
    """(variant, model choice) of each checkpoint folder under ``folder``, as the Space names them."""
    records = [
        (d.name, json.loads((d / "steersum.json").read_text()))
        for d in sorted(folder.iterdir())
        if (d / "steersum.json").is_file()
    ]
    return [(record["variant"], f"local/{name}") for name, record in records if record.get("variant") in CONTROLS]


def stored_models(index: Path) -> list[tuple[str, str]]:
    """(variant, model choice) of every model in the store's index that a variant serves (read as JSON:
    this script runs from any folder, without the project on its path)."""
    if not index.is_file():
        return []
    rows = json.loads(index.read_text(encoding="utf-8"))["models"]
    return [(row["variant"], row["name"]) for row in rows if row["variant"] in CONTROLS]


def wait_for(port: int, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Space exited with code {process.returncode} before serving")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(1)
    raise RuntimeError(f"the Space did not listen on port {port} within {timeout:.0f} s")


def run(
    command: list[str], cwd: Path, env: dict | None = None, timeout: float = 300, models: list[tuple[str, str]] = ()
) -> dict[str, str]:
    """Start ``python <command> --port P`` (an exported ``app.py`` reads ``$PORT``) in ``cwd``, call every
    variant's baseline and the given (variant, model) pairs, stop it."""
    port = free_port()
    env = {**(os.environ if env is None else env), "PORT": str(port)}
    log = Path(tempfile.mkstemp(prefix="space-", suffix=".log")[1])
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, *command, "--port", str(port)], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            wait_for(port, process, timeout)
            return smoke(f"http://127.0.0.1:{port}/", [(v, "baseline") for v in CONTROLS] + list(models))
        except Exception as err:
            raise RuntimeError(f"{err}\n--- Space log ({log}) ---\n{log.read_text()[-4000:]}") from None
        finally:
            process.terminate()
            process.wait(timeout=30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="folder to start the Space in")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the Space to listen")
    parser.add_argument(
        "--models", type=Path, help="also call every trained model in this folder (the Space's --models-dir)"
    )
    parser.add_argument("command", nargs="*", default=["-m", "space"], help="what python runs (default: -m space)")
    args = parser.parse_args(argv)
    try:
        models = stored_models(args.cwd.resolve() / "store" / "index.json")
        if not models:
            print("the model store is empty: only the baselines are called")
        models += trained_models(args.models) if args.models else []
        command = args.command + (["--models-dir", str(args.models.resolve())] if args.models else [])
        summaries = run(command, args.cwd.resolve(), timeout=args.timeout, models=models)
    except RuntimeError as err:
        sys.exit(f"error: {err}")
    for name, summary in summaries.items():
        print(f"{name}: {summary[:70]!r}")


if __name__ == "__main__":
    main()
