"""Choose a stored model's decoding on validation, as the zoo chooses for a model it trains, and report it
once on test: ``training.zoo_evaluation.evaluate_model`` on a copy of the stored model.

    python scripts/choose_on_val.py --work DIR [--max-eval-samples 48] NAME [NAME ...]

For each stored model ``NAME`` (``store/index.json``), the variant's data is built into ``DIR/data/<variant>``
with the zoo's flags (``training.zoo_models.MODELS``), the model and the general summarizer it adapts are copied
to ``DIR/models/``, and on ``val.jsonl`` the decoding rules are turned on or off, then the control strength γ
is picked from the zoo's sweep; the copy is then evaluated once on ``test.jsonl`` at those settings (its
``eval_report.json``). The store itself is not touched: the printed table says where the choice on val agrees
with the settings the model is served with, and the report (``--report``) holds every number.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def served_settings(folder: Path) -> dict:
    """The decoding a stored model is served with: its record's rules, its generation config's strength."""
    from variants import load_summarizer

    settings = load_summarizer(str(folder)).settings
    return {"constraints": bool(settings.constraints), "guidance": float(settings.control_strength)}


def choose(name: str, work: Path, max_eval_samples: int) -> dict:
    import store
    from training.zoo_evaluation import evaluate_model
    from training.zoo_models import MODELS, Budget
    from training.zoo_training import build_data

    [stored] = [m for m in store.read_index() if m.name == name]
    [zoo_model] = [m for m in MODELS if m.variant == stored.variant]
    budget = Budget(0, max_eval_samples=max_eval_samples)
    data = build_data(zoo_model, work, budget)
    models = work / "models"
    for folder in (store.GENERAL, name):  # the adapter names its base as ../general
        if not (models / folder).is_dir():
            shutil.copytree(store.model_path(folder), models / folder)
    served = served_settings(models / name)
    start = time.perf_counter()
    result = evaluate_model(models / name, data, budget)
    chosen = {
        "constraints": result["choices"].get("constraints", {}).get("value", False),
        "guidance": result["choices"].get("guidance", {}).get("value", 1.0),
    }
    row = {"name": name, "served": served, "chosen_on_val": chosen, "same": served == chosen, **result}
    row["seconds"] = round(time.perf_counter() - start)
    print(f"{name}: served {served}, chosen on val {chosen} ({row['seconds']} s)", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", help="stored model names")
    parser.add_argument("--work", required=True, type=Path, help="a folder for the data and the copies")
    parser.add_argument("--max-eval-samples", type=int, default=48, help="val and test examples (default 48)")
    parser.add_argument("--report", type=Path, help="write the choices and the test reports here (JSON)")
    args = parser.parse_args(argv)
    rows = []
    for name in args.names:
        rows.append(choose(name, args.work, args.max_eval_samples))
        if args.report:  # after each model, so that a long run keeps what it measured
            args.report.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
