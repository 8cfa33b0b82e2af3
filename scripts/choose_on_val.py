"""Choose a stored model's decoding on validation, as the zoo chooses for a model it trains, and report it
once on test: ``training.zoo_evaluation.evaluate_model`` on a copy of the stored model.

    python scripts/choose_on_val.py --work DIR [--max-eval-samples 48] NAME [NAME ...]
    python scripts/choose_on_val.py --work DIR --text-rule RULE NAME [NAME ...]
    python scripts/choose_on_val.py --work DIR --apply [--admit-samples 200] NAME [NAME ...]
    python scripts/choose_on_val.py --work DIR --source-windows 8 [--window-mode pick] [--max-eval-samples 100] NAME ...

For each stored model ``NAME`` (``store/index.json``), the variant's data is built into ``DIR/data/<variant>``
with the zoo's flags (``training.zoo_models.MODELS``), the model and the general summarizer it adapts are copied
to ``DIR/models/``, and on ``val.jsonl`` the decoding rules are turned on or off, then the control strength γ
is picked from the zoo's sweep; the copy is then evaluated once on ``test.jsonl`` at those settings (its
``eval_report.json``). The store itself is not touched: the printed table says where the choice on val agrees
with the settings the model is served with, and the report (``--report``) holds every number.

``--text-rule`` chooses, for copies chosen already without it (or, where ``DIR`` holds none, the stored model as
served), a rule that reads the text and no control (``document_words``: names and numbers from the document only;
``finish_sentences``: no end before a finished sentence; ``no_repeat_trigrams``: no token trigram twice;
``no_doubled_words``: no word twice in a row; ``verbatim_quotes``: what a summary quotes, the document writes;
``document_names``: a name of one token is the document's) as
the zoo now does after γ (``training.zoo_evaluation.choose_text_rule_again``), and reports them on test again.

``--source-windows N`` chooses how a stored model reads a document longer than its source limit: cut, or in
up to N windows its decoder reads together (:func:`variants.decoding.fuse_windows`), or with ``--window-mode
pick`` only the window its controls ask for most (:meth:`variants.base.Variant.relevance`) when it scores
more than a ratio (each of ``--pick-ratios``) times the first window. The model as served summarizes each of
its evaluation's long validation sets (``Evaluation.long_validation_sets``) cut and at each candidate; a
candidate is admissible when ROUGE-1 rises on one set and on no set ROUGE-1 or the lead control metric's
effect falls by more than 0.02, and the admissible one with the largest ROUGE-1 gain summed over the sets is
taken (none: cut). The choice is written into the stored model's generation config and record (its
``choices``, with the val numbers); ``DIR/<NAME>-source-windows.json`` holds the reports.

``--apply`` then serves each copy at its choice: the copy's defaults become the choice its record holds, and
it is stored in place of ``NAME`` through :func:`training.storing.put`, which admits a model on a val report
only (the choice's own, or one re-measured at the chosen settings on the first ``--admit-samples`` val
examples: more documents, a narrower interval). A copy that is not admitted leaves the store as it was.
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
    from variants.decoding_rules import TEXT_RULES

    settings = load_summarizer(str(folder)).settings
    return {
        "constraints": bool(settings.constraints),
        "guidance": float(settings.control_strength),
        **{rule: bool(getattr(settings, rule)) for rule in TEXT_RULES},
    }


def copy_stored(name: str, work: Path, budget) -> Path:
    """The variant's data built into ``work/data`` with the zoo's flags, and the stored ``name`` and the general
    summarizer it adapts copied to ``work/models`` (once); the data folder."""
    import store
    from training.zoo_models import MODELS
    from training.zoo_training import build_data

    [stored] = [m for m in store.read_index() if m.name == name]
    [zoo_model] = [m for m in MODELS if m.variant == stored.variant]
    data = build_data(zoo_model, work, budget)
    for folder in (store.GENERAL, name):  # the adapter names its base as ../general
        if not (work / "models" / folder).is_dir():
            shutil.copytree(store.model_path(folder), work / "models" / folder)
    return data


def choose(name: str, work: Path, max_eval_samples: int) -> dict:
    from training.zoo_evaluation import evaluate_model
    from training.zoo_models import Budget
    from variants.decoding_rules import TEXT_RULES

    budget = Budget(0, max_eval_samples=max_eval_samples)
    data = copy_stored(name, work, budget)
    models = work / "models"
    served = served_settings(models / name)
    start = time.perf_counter()
    result = evaluate_model(models / name, data, budget)
    chosen = {
        "constraints": result["choices"].get("constraints", {}).get("value", False),
        "guidance": result["choices"].get("guidance", {}).get("value", 1.0),
        **{rule: result["choices"].get(rule, {}).get("value", False) for rule in TEXT_RULES},
    }
    row = {"name": name, "served": served, "chosen_on_val": chosen, "same": served == chosen, **result}
    row["seconds"] = round(time.perf_counter() - start)
    print(f"{name}: served {served}, chosen on val {chosen} ({row['seconds']} s)", flush=True)
    return row


def served_copy(name: str, work: Path, max_eval_samples: int) -> None:
    """A copy of the stored ``name`` in ``work`` with its val report as served, where none was chosen there: the
    variant's data built, the copy and the general summarizer copied, and the copy at its served settings
    evaluated on the first ``max_eval_samples`` val examples (with control sensitivity), the report a text rule
    is chosen against (:func:`training.zoo_evaluation.choose_text_rule_again`)."""
    from training.data import load_examples
    from training.evaluate import write_report
    from training.sensitivity import evaluate_with_sensitivity
    from training.zoo_evaluation import VAL_REPORT, eval_batch_size
    from training.zoo_models import Budget
    from variants import load_summarizer
    from variants.base import read_record

    copy = work / "models" / name
    if (copy / VAL_REPORT).is_file():
        return
    data = copy_stored(name, work, Budget(0, max_eval_samples=max_eval_samples))
    summarizer = load_summarizer(copy)
    val_file = data / "val.jsonl"
    val = load_examples(val_file, summarizer.variant, summarizer.assets, max_eval_samples)
    report = evaluate_with_sensitivity(summarizer, val, str(val_file), eval_batch_size())
    report.update(split="val", chosen_on="val", choices=read_record(copy).get("choices") or {})
    write_report(report, copy / VAL_REPORT)


def choose_text_rule(name: str, work: Path, max_eval_samples: int, rule: str) -> dict:
    """The text rule ``rule`` chosen on val for the copy of ``name`` in ``work``: one chosen there already, else
    the stored model as served (:func:`served_copy`)."""
    import store
    from training.zoo_evaluation import choose_text_rule_again
    from training.zoo_models import Budget

    [stored] = [m for m in store.read_index() if m.name == name]
    start = time.perf_counter()
    served_copy(name, work, max_eval_samples)
    result = choose_text_rule_again(
        work / "models" / name, work / "data" / stored.variant, Budget(0, max_eval_samples=max_eval_samples), rule
    )
    row = {"name": name, rule: result["choices"][rule]["value"], **result}
    row["seconds"] = round(time.perf_counter() - start)
    print(f"{name}: {rule} chosen on val: {row[rule]} ({row['seconds']} s)", flush=True)
    return row


def choose_windows(name: str, work: Path, max_eval_samples: int, most: int, mode: str, ratios: list[float]) -> dict:
    """``source_windows`` chosen on val for the stored ``name`` as served (see the module's docstring)."""
    import store
    from metrics.io import write_jsonl
    from training.data import load_examples
    from training.guidance import ROUGE_TOLERANCE
    from training.sensitivity import evaluate_with_sensitivity
    from training.zoo_evaluation import eval_batch_size
    from variants import load_summarizer
    from variants.base import read_record, write_record
    from variants.seq2seq import save_generation_defaults

    folder = store.model_path(name)
    summarizer = load_summarizer(folder)
    evaluation = summarizer.variant.evaluation
    sets = evaluation.long_validation_sets(max_eval_samples)
    if not sets:
        raise SystemExit(f"{name}: variant '{summarizer.variant.id}' declares no long validation set")
    lead = evaluation.control_metrics[0]
    served, rows = summarizer.settings, {}
    candidates = {"cut": served.but(source_windows=1, window_mode="fuse")}
    for ratio in ratios if mode == "pick" else [1.0]:
        candidates[f"{mode} {ratio:g}"] = served.but(source_windows=most, window_mode=mode, pick_ratio=ratio)
    work.mkdir(parents=True, exist_ok=True)
    for set_name, records in sets.items():
        data_file = work / f"{summarizer.variant.id}-val-{set_name}.jsonl"
        write_jsonl(data_file, records)
        examples = load_examples(data_file, summarizer.variant, summarizer.assets)
        for label, settings in candidates.items():
            summarizer.settings = settings
            start = time.perf_counter()
            report = evaluate_with_sensitivity(summarizer, examples, str(data_file), eval_batch_size())
            rows[f"{set_name}/{label}"] = {
                "metrics": report["metrics"],
                "breakdown": report.get("breakdown", {}),
                "effect": report["control_sensitivity"]["effect"].get(lead, {}),
                "seconds": round(time.perf_counter() - start),
            }
            print(f"{name} {set_name} {label}: {rows[f'{set_name}/{label}']}", flush=True)

    def gains(label: str) -> dict:
        return {
            set_name: {
                "rouge1": rows[f"{set_name}/{label}"]["metrics"]["rouge1"]
                - rows[f"{set_name}/cut"]["metrics"]["rouge1"],
                lead: rows[f"{set_name}/{label}"]["effect"].get("difference", 0.0)
                - rows[f"{set_name}/cut"]["effect"].get("difference", 0.0),
            }
            for set_name in sets
        }

    def admissible(gain: dict) -> bool:
        return any(g["rouge1"] > 0 for g in gain.values()) and all(
            g["rouge1"] >= -ROUGE_TOLERANCE and g[lead] >= -ROUGE_TOLERANCE for g in gain.values()
        )

    measured = {label: gains(label) for label in candidates if label != "cut"}
    taken = [label for label in measured if admissible(measured[label])]
    best = max(taken, key=lambda label: sum(g["rouge1"] for g in measured[label].values()), default=None)
    settings = candidates[best or "cut"]
    choice = {
        "value": best or "cut",
        "chosen_on": "val",
        "data": ", ".join(f"{set_name} ({len(records)})" for set_name, records in sets.items()),
        "gains": measured,
    }
    (work / f"{name}-source-windows.json").write_text(json.dumps({"rows": rows, "choice": choice}, indent=1) + "\n")
    save_generation_defaults(
        folder,
        source_windows=settings.source_windows,
        window_mode=settings.window_mode,
        pick_ratio=settings.pick_ratio,
    )
    record = read_record(folder)
    write_record(folder, {**record, "choices": {**record.get("choices", {}), "source_windows": choice}})
    print(f"{name}: chosen on val: {choice['value']} (gains {measured})", flush=True)
    return choice


def apply(name: str, work: Path, admit_samples: int | None) -> tuple[bool, str]:
    """Store the copy of ``name`` in ``work`` at its choice on val, in place of the stored ``name``."""
    import store
    from training.data import load_examples
    from training.evaluate import write_report
    from training.sensitivity import evaluate_with_sensitivity
    from training.storing import put
    from training.zoo_evaluation import VAL_REPORT, eval_batch_size, text_rules
    from variants import load_summarizer
    from variants.base import read_record, write_record
    from variants.seq2seq import save_default_strength, save_generation_defaults

    copy = work / "models" / name
    record = read_record(copy)
    if record.get("chosen_on") != "val":
        raise SystemExit(f"{copy}: no choice on val in its record (run this script without --apply first)")
    choices = record.get("choices") or {}
    save_default_strength(copy, choices.get("guidance", {}).get("value", 1.0))
    save_generation_defaults(copy, **{rule: choices[rule]["value"] for rule in text_rules() if rule in choices})
    write_record(copy, {**read_record(copy), "constraints": choices.get("constraints", {}).get("value", False)})
    validation = json.loads((copy / VAL_REPORT).read_text())
    if admit_samples:
        summarizer = load_summarizer(copy)
        val_file = work / "data" / summarizer.variant.id / "val.jsonl"
        val = load_examples(val_file, summarizer.variant, summarizer.assets, admit_samples)
        validation = evaluate_with_sensitivity(summarizer, val, str(val_file), eval_batch_size())
        validation.update(split="val", chosen_on="val", choices=choices)
        write_report(validation, copy / VAL_REPORT)
    report_file = copy / "eval_report.json"
    # put() replaces a stored model only by one measured on the same split; the stored entry, measured on test,
    # is out of the index for the call and comes back, in its place, when the copy is not admitted
    kept = store.read_index()
    store.write_index([m for m in kept if m.name != name])
    stored = False
    try:
        stored, sentence = put(
            copy, json.loads(report_file.read_text()), report_file, name=name, validation=validation
        )
    finally:
        if stored:
            order = [m.name for m in kept]
            store.write_index(sorted(store.read_index(), key=lambda m: order.index(m.name)))
        else:
            store.write_index(kept)
    return stored, sentence


def main(argv: list[str] | None = None) -> int:
    from training.zoo_evaluation import text_rules

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", help="stored model names")
    parser.add_argument("--work", required=True, type=Path, help="a folder for the data and the copies")
    parser.add_argument("--max-eval-samples", type=int, default=48, help="val and test examples (default 48)")
    parser.add_argument("--report", type=Path, help="write the choices and the test reports here (JSON)")
    parser.add_argument("--apply", action="store_true", help="store each copy in DIR at its choice (see above)")
    parser.add_argument(
        "--text-rule",
        choices=sorted(text_rules()),
        help="choose this rule that reads the text only, for copies chosen already without it",
    )
    parser.add_argument(
        "--source-windows", type=int, metavar="N", help="choose cut or up to N windows for long documents"
    )
    parser.add_argument("--window-mode", choices=["fuse", "pick"], default="fuse", help="with --source-windows")
    parser.add_argument(
        "--pick-ratios", type=float, nargs="+", default=[1.0], help="with --window-mode pick: the ratios tried"
    )
    parser.add_argument(
        "--admit-samples", type=int, help="with --apply: val examples to admit on (default: the choice's)"
    )
    args = parser.parse_args(argv)
    if args.apply:
        results = [apply(name, args.work, args.admit_samples) for name in args.names]
        for _, sentence in results:
            print(sentence)
        return 0 if all(stored for stored, _ in results) else 1
    if args.source_windows:
        for name in args.names:
            choose_windows(
                name, args.work, args.max_eval_samples, args.source_windows, args.window_mode, args.pick_ratios
            )
        return 0
    rows = []
    for name in args.names:
        rows.append(
            choose_text_rule(name, args.work, args.max_eval_samples, args.text_rule)
            if args.text_rule
            else choose(name, args.work, args.max_eval_samples)
        )
        if args.report:  # after each model, so that a long run keeps what it measured
            args.report.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
