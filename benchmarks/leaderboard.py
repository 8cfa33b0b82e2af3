"""``python -m benchmarks leaderboard``: every system of every variant on its bundled test set, in one table
per variant beside the paper's own numbers.

    python -m benchmarks leaderboard [--models-dir checkpoints] [--out leaderboard] [--variants topic ...]
                                     [--max-samples N] [--catalog FILE] [--batch-size N]
    accelerate launch -m benchmarks leaderboard ...      # systems shared out across processes / GPUs

Systems come from :func:`space.catalog.build_catalog`, as in the Space: each variant's model-free
baseline, every model of the store (``store/index.json``), every checkpoint folder (``steersum.json``) under ``--models-dir``, and the catalog file's Hub
ids when the Hub can be reached. The test set is :meth:`Variant.test_examples`; a variant that declares
none is listed as skipped. Each system is scored by :func:`training.evaluate.evaluate` on the test set
written to ``OUT/data/<variant>.jsonl`` and loaded as ``python -m training evaluate --data`` loads it,
so the numbers are that command's numbers.

Written to ``--out``:

* ``leaderboard.json``: per variant its test set, systems (metrics with ``output_words``, the paired
  bootstrap of each ROUGE / ROUGE-K score against the baseline (over documents), the same system given shuffled controls
  and its control effect per control metric with a paired-bootstrap interval, and the control-blind
  Lead-k at the system's mean summary length: :mod:`training.sensitivity`), the paper's reported rows
  and the models that could not be used;
* ``leaderboard.md``: one table per variant shaped like the paper's main table (each system followed by
  its shuffled-controls and Lead-k rows, the paper's rows labelled), and a table of control effects;
* ``<variant>.png``: one bar chart per metric, ours solid (shuffled-controls and Lead-k rows pale), the paper's
  hatched;
* ``cache/<variant>/<key>.json``: each system's full evaluation report, keyed by a hash of the model
  (folder contents or Hub revision), the test set and ``--max-samples``. An interrupted run resumes
  from them; delete ``cache/`` to recompute.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from metrics.bootstrap import N_RESAMPLES, compare
from training.data import load_examples
from training.evaluate import evaluate
from training.sensitivity import control_sensitivity
from variants import REGISTRY, Variant

REPORTED_LABEL = "reported in paper (different data/base model)"
ALPHA = 0.05  # a system's ROUGE / ROUGE-K cell is marked when it beats the baseline at p < ALPHA
REPORT_VERSION = 2  # in the cache key: 2 = reports carry control_sensitivity and output_words
SHUFFLED_LABEL = "↳ same system, shuffled controls"
log = logging.getLogger(__name__)


# --- the systems and their cache keys --------------------------------------------------------
def fingerprint(entry) -> dict:
    """What identifies a system's numbers besides the data: a Hub revision, or a local folder's
    files (name, size, modification time), so a retrained checkpoint is evaluated again."""
    if entry.source in ("local", "store"):
        files = sorted(p for p in Path(entry.location).iterdir() if p.is_file())
        return {"location": str(Path(entry.location).resolve()),
                "files": [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files]}
    return {"location": entry.location, "revision": entry.revision, "title": entry.title}


def cache_file(out: Path, variant: Variant, entry, data_sha: str, max_samples: int | None) -> Path:
    key = {"variant": variant.id, "model": entry.model, "system": fingerprint(entry), "data": data_sha,
           "max_samples": max_samples, "report": REPORT_VERSION}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return out / "cache" / variant.id / f"{digest}.json"


def write_atomically(path: Path, text: str) -> None:
    """Write beside the target, then rename: a killed run leaves the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def write_test_set(out: Path, variant: Variant, max_samples: int | None) -> tuple[Path, list[dict]]:
    """The variant's test set as a JSONL file (every process writes the same bytes, atomically)."""
    records = variant.test_examples(max_samples)
    path = out / "data" / f"{variant.id}.jsonl"
    if records:
        write_atomically(path, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
    return path, records


def shard(jobs: list, process_index: int, num_processes: int) -> list:
    """This process's share of the systems: every ``num_processes``-th, starting at its index."""
    return jobs[process_index::num_processes]


# --- the run ---------------------------------------------------------------------------------
def run(models_dir: str | Path | None = "checkpoints", out: str | Path = "leaderboard", variants: list[str] | None = None,
        max_samples: int | None = None, catalog_file: str | Path | None = None, batch_size: int | None = None,
        registry: dict[str, Variant] | None = None, download=None, state=None) -> dict | None:
    """Evaluate this process's share of the systems not yet cached, then (main process) write the
    leaderboard. ``registry``/``download``/``state`` let tests pass stand-ins; ``state`` defaults to
    ``accelerate.PartialState()`` (one process unless started by ``accelerate launch``)."""
    from space.catalog import build_catalog

    if state is None:
        import torch
        from accelerate import PartialState

        state = PartialState(cpu=not torch.cuda.is_available())  # without GPUs, processes talk over gloo
    out, registry = Path(out), dict(REGISTRY if registry is None else registry)
    if variants:
        unknown = sorted(set(variants) - set(registry))
        if unknown:
            raise ValueError(f"unknown variant(s) {', '.join(unknown)}; allowed: {', '.join(registry)}")
        registry = {v: registry[v] for v in variants}
    catalog = build_catalog(models_dir, catalog_file, registry, download)
    plan, jobs = {}, []
    for variant in registry.values():
        data_file, records = write_test_set(out, variant, max_samples)
        if not records:
            plan[variant.id] = None
            continue
        data_sha = hashlib.sha256(data_file.read_bytes()).hexdigest()
        systems = [(entry, cache_file(out, variant, entry, data_sha, max_samples))
                   for entry in catalog.models(variant.id, available=True)]
        plan[variant.id] = (data_file, data_sha, systems)
        jobs += [(variant, data_file, entry, cache) for entry, cache in systems]
    mine = shard(jobs, state.process_index, state.num_processes)
    for variant, data_file, entry, cache in tqdm(mine, desc=f"leaderboard (process {state.process_index})", unit="system"):
        if cache.is_file():
            log.info("%s / %s: cached in %s", variant.id, entry.model, cache)
        else:
            evaluate_system(variant, entry, data_file, cache, batch_size, str(state.device))
    state.wait_for_everyone()
    if not state.is_main_process:
        return None
    board = {"generated": time.strftime("%Y-%m-%d %H:%M:%S"), "max_samples": max_samples,
             "variants": {vid: variant_board(out, registry[vid], plan[vid], catalog) for vid in plan}}
    write_outputs(out, board)
    return board


def evaluate_system(variant: Variant, entry, data_file: Path, cache: Path, batch_size: int | None, device: str) -> None:
    """Score one system as ``python -m training evaluate`` does and cache its report (the model is
    freed on return, before the next one loads)."""
    summarizer = entry.load() if entry.source == "baseline" else entry.load(device=device)
    records = load_examples(data_file, variant, summarizer.assets)
    report = evaluate(summarizer, records, str(data_file), batch_size)
    report["control_sensitivity"] = control_sensitivity(summarizer, records, str(data_file), report, batch_size)
    write_atomically(cache, json.dumps({"system": entry.to_json(), **report}, ensure_ascii=False))


def variant_board(out: Path, variant: Variant, plan: tuple | None, catalog) -> dict:
    """One variant's part of ``leaderboard.json``, from the cached reports."""
    paper = {"title": variant.paper.title, "authors": variant.paper.authors, "year": variant.paper.year,
             "url": variant.paper.url}
    board = {"title": variant.title, "paper": paper, "metric_names": list(variant.metric_names),
             "reported": [dict(row) for row in variant.reported],
             "unavailable": [{"model": e.model, "reason": e.reason} for e in catalog.models(variant.id, available=False)]}
    if plan is None:
        return {**board, "skipped": "no bundled test set (the variant's test_examples() returns none)"}
    data_file, data_sha, systems = plan
    reports = []
    for entry, cache in systems:
        if not cache.is_file():
            raise RuntimeError(f"{variant.id} / {entry.model}: no result in {cache} (did a process fail?)")
        reports.append(json.loads(cache.read_text(encoding="utf-8")))
    baseline = next((r for r in reports if r["system"]["source"] == "baseline"), None)
    written = [json.loads(line) for line in data_file.read_text(encoding="utf-8").splitlines()]
    documents = {r["id"]: r["document"] for r in written}
    rows = [system_row(out, variant, report, cache, baseline, documents) for report, (_, cache) in zip(reports, systems)]
    test_set = {"file": str(data_file.relative_to(out)), "n": len(written),
                "datasets": sorted({r.get("dataset", "?") for r in written}), "sha256": data_sha}
    return {**board, "control_metrics": list(variant.control_metrics), "test_set": test_set, "systems": rows}


def system_row(out: Path, variant: Variant, report: dict, cache: Path, baseline: dict | None,
               documents: dict[str, str]) -> dict:
    """A system's metrics and, for ROUGE / ROUGE-K scores, the paired bootstrap against the baseline,
    resampling documents (``documents``: example id -> its document), each with all its examples: CCS
    and persona ask several control sets of one document, which are not independent evidence."""
    row = {"system": report["system"]["title"], "model": report["system"]["model"],
           "source": report["system"]["source"], "revision": report["system"]["revision"], "method": report["method"],
           "n_examples": report["n_examples"], "truncated_inputs": report["truncated_inputs"],
           "metrics": report["metrics"], "cache": str(cache.relative_to(out))}
    if baseline is not None and report is not baseline:
        ids = [e["id"] for e in report["examples"]], [e["id"] for e in baseline["examples"]]
        if ids[0] != ids[1]:
            raise RuntimeError(f"{variant.id}: {row['model']} and the baseline were scored on different examples")
        names = [n for n in variant.metric_names if "rouge" in n.lower()]
        row["vs_baseline"] = compare(report["examples"], baseline["examples"], names,
                                     groups=[documents[e["id"]] for e in report["examples"]])
    sensitivity = report.get("control_sensitivity")
    if sensitivity:
        shuffled = sensitivity["shuffled"]
        row["shuffled"] = {"n_examples": shuffled["n_examples"], "controls_changed": shuffled["controls_changed"],
                           "metrics": shuffled["metrics"]}
        row["control_effect"] = sensitivity["effect"]
        row["lead_k"] = {k: sensitivity["lead_k"][k] for k in ("budget_words", "budget_from", "n_examples", "metrics")}
    return row


# --- the outputs -----------------------------------------------------------------------------
def cell(value: Any, test: dict | None = None) -> str:
    if value is None:
        return "–"
    mark = "†" if test is not None and test["p_value"] < ALPHA and test["difference"] > 0 else ""
    return f"{value:.4f}{mark}"


def variant_markdown(variant_id: str, board: dict) -> str:
    paper = board["paper"]
    lines = [f"## {board['title']} (`{variant_id}`)", "",
             f"Paper: [{paper['title']}]({paper['url']}) ({paper['authors']}, {paper['year']})."]
    if "skipped" in board:
        return "\n".join(lines + ["", f"_Skipped: {board['skipped']}._", ""])
    names, test_set = board["metric_names"], board["test_set"]
    lines += [f"Test set: {test_set['n']} examples from {', '.join(test_set['datasets'])} (`{test_set['file']}`). "
              "Numbers as `python -m training evaluate` reports them (ROUGE as fractions; the papers print x100); "
              "the paper's rows are converted to the same scale. _words_: mean summary length in words.", "",
              "| system | method | n | words | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 4)]
    for row in board["systems"]:
        tests = row.get("vs_baseline", {})
        lines.append(f"| {row['system']} | {row['method']} | {row['n_examples']} | {words_cell(row['metrics'])} | "
                     + " | ".join(cell(row["metrics"].get(n), tests.get(n)) for n in names) + " |")
        for label, method, sub in control_rows(row):
            lines.append(f"| {label} | {method} | {sub['n_examples']} | {words_cell(sub['metrics'])} | "
                         + " | ".join(cell(sub["metrics"].get(n)) for n in names) + " |")
    for row in board["reported"]:
        lines.append(f"| _{row['system']} — {REPORTED_LABEL}, {row['source']}_ | | | | "
                     + " | ".join(cell(row["metrics"].get(n)) for n in names) + " |")
    lines += ["", f"† better than the baseline at p < {ALPHA} (one-sided paired bootstrap over documents, each "
                  f"resampled with all its examples, {N_RESAMPLES} resamples, seed 0; ROUGE / ROUGE-K scores only). "
                  f"{SHUFFLED_LABEL}: each example summarized with another example's controls (seeded derangement), "
                  "scored against its own. ↳ Lead-k: the control-blind row, the document's first sentences up to the "
                  "system's mean summary length, controls ignored."]
    lines += control_effect_markdown(board)
    lines += [f"- {row['system']}: {row['truncated_inputs']} of {row['n_examples']} inputs cut to the model's length limit."
              for row in board["systems"] if row["truncated_inputs"]]
    lines += [f"- unavailable: {u['model']} — {u['reason']}" for u in board["unavailable"]]
    if board.get("plot"):
        lines += ["", f"![{variant_id}]({board['plot']})"]
    return "\n".join(lines + [""])


def control_rows(row: dict) -> list[tuple[str, str, dict]]:
    """The rows under a system: the same system on shuffled controls, and Lead-k at its length."""
    if "shuffled" not in row:
        return []
    lead = row["lead_k"]
    return [(SHUFFLED_LABEL, "", row["shuffled"]),
            (f"↳ Lead-k at the same length ({lead['budget_words']} words), control-blind", "lead-k", lead)]


def words_cell(metrics: dict) -> str:
    value = metrics.get("output_words")
    return "–" if value is None else f"{value:.1f}"


def effect_cell(effect: dict | None) -> str:
    """``+0.4222 [+0.3177, +0.5183]``; a corpus metric has no interval."""
    if effect is None:
        return "–"
    if effect["ci_low"] is None:
        return f"{effect['difference']:+.4f} (corpus)"
    return f"{effect['difference']:+.4f} [{effect['ci_low']:+.4f}, {effect['ci_high']:+.4f}]"


def control_effect_markdown(board: dict) -> list[str]:
    """The control effects: one row per system, one column per control metric it has."""
    systems = [row for row in board["systems"] if "control_effect" in row]
    names = [n for n in board.get("control_metrics", []) if any(n in row["control_effect"] for row in systems)]
    if not names:
        return []
    lines = ["", "Control effect = score with the right controls − score with shuffled controls (95% paired-bootstrap "
             f"interval over documents, each resampled with all its examples, {N_RESAMPLES} resamples, seed 0; "
             "for lower-is-better metrics such as length_error or egises a negative effect means the controls "
             "help). Lead-k ignores the controls: its effect is 0 by construction.", "",
             "| system | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
    for row in systems:
        lines.append(f"| {row['system']} | " + " | ".join(effect_cell(row["control_effect"].get(n)) for n in names) + " |")
    lines += [f"- {row['system']}: shuffling changed the controls of {row['shuffled']['controls_changed']} of "
              f"{row['shuffled']['n_examples']} examples (they all ask for the same), so its control effect "
              "cannot show anything." for row in systems if row["shuffled"]["controls_changed"] == 0]
    return lines


PLOT_COLUMNS = 4  # metrics per row of plots


def plot_variant(path: Path, variant_id: str, board: dict) -> None:
    """One horizontal bar chart per metric (metrics differ in scale), ours solid, the paper's hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ours = [(label, metrics) for row in board["systems"] for label, metrics in
            [(row["system"], row["metrics"])] + [(f"   {label.lstrip('↳ ')}", sub["metrics"]) for label, _, sub in control_rows(row)]]
    theirs = [(f"{row['system']} (paper)", row["metrics"]) for row in board["reported"]]
    labels = [label for label, _ in ours + theirs]
    names = board["metric_names"]
    columns = min(len(names), PLOT_COLUMNS)
    rows = -(-len(names) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns + 2, rows * (0.35 * len(labels) + 1.2) + 0.5),
                                sharey=True, squeeze=False)
    for axis in axes.flat[len(names):]:
        axis.set_visible(False)
    for axis, name in zip(axes.flat, names):
        values = [metrics.get(name) for _, metrics in ours + theirs]
        bars = axis.barh(range(len(labels)), [v if v is not None else 0 for v in values],
                         color=[("lightsteelblue" if label.startswith("   ") else "tab:blue") for label, _ in ours]
                         + ["lightgrey"] * len(theirs))
        for bar in bars[len(ours):]:
            bar.set_hatch("//")
        for y, value in enumerate(values):
            if value is None:  # no bar is not a zero: say it is missing
                axis.text(0, y, " n/a", va="center", fontsize=7, color="grey")
        axis.set_title(name)
    axes[0][0].set_yticks(range(len(labels)), labels)
    axes[0][0].invert_yaxis()  # first system on top (the axes share y: once for all)
    figure.suptitle(f"{board['title']} ({variant_id}): ours (blue; pale: shuffled controls and Lead-k) and {REPORTED_LABEL} (hatched)",
                    fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write_outputs(out: Path, board: dict) -> None:
    for variant_id, part in board["variants"].items():
        if part.get("systems"):
            plot_variant(out / f"{variant_id}.png", variant_id, part)
            part["plot"] = f"{variant_id}.png"
    markdown = "# SteerSum leaderboard\n\n" + "\n".join(variant_markdown(v, part) for v, part in board["variants"].items())
    write_atomically(out / "leaderboard.md", markdown)
    write_atomically(out / "leaderboard.json", json.dumps(board, indent=2, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks leaderboard", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models-dir", default="checkpoints", help="folder of checkpoint folders (steersum.json)")
    parser.add_argument("--out", default="leaderboard", help="output folder (default: ./leaderboard)")
    parser.add_argument("--variants", nargs="+", metavar="ID", help=f"variants to run (default: all: {', '.join(REGISTRY)})")
    parser.add_argument("--max-samples", type=int, default=None, help="test examples per variant (default: all)")
    parser.add_argument("--catalog", default=None, help="JSON file of Hub ids pinned to revisions (see space/catalog.py)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="sources per generate call (default: each model's generation settings)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.variants or ()) - set(REGISTRY))
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; allowed: {', '.join(REGISTRY)}")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    board = run(args.models_dir, args.out, args.variants, args.max_samples, args.catalog, args.batch_size)
    if board is not None:
        print((Path(args.out) / "leaderboard.md").read_text(encoding="utf-8"))
