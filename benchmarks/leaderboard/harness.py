"""``python -m benchmarks leaderboard``: every system of every variant on its bundled test set, in one table
per variant beside the paper's own numbers.

    python -m benchmarks leaderboard [--models-dir checkpoints] [--out leaderboard] [--variants topic ...]
                                     [--max-samples N [VARIANT=N ...]] [--catalog FILE] [--batch-size N]
    python -m benchmarks leaderboard --guidance-only     # the control-strength table from the models' sweeps
    accelerate launch -m benchmarks leaderboard ...      # systems shared out across processes / GPUs

Systems come from :func:`space.catalog.build_catalog`, as in the Space: each variant's model-free
baseline, every model of the store (``store/index.json``), every checkpoint folder (``steersum.json``) under ``--models-dir``, and the catalog file's Hub
ids when the Hub can be reached. The test set is :meth:`Evaluation.test_examples`; a variant that declares
none is listed as skipped. Each name in :attr:`Evaluation.extra_test_sets` (human references, e.g.
MACSum-Doc) is a further test set, :meth:`Evaluation.extra_test_set`, scored the same way in a table of
its own. Each system is scored by :func:`training.evaluate.evaluate` on the test set
written to ``OUT/data/<variant>.jsonl`` (``<variant>-<name>.jsonl``) and loaded as ``python -m training evaluate --data`` loads it,
so the numbers are that command's numbers.

Written to ``--out``:

* ``leaderboard.json``: per variant its test set, systems (metrics with ``output_words``, the paired
  bootstrap of each ROUGE / ROUGE-K score against the baseline (over documents), the same system given shuffled controls
  and its control effect per control metric with a paired-bootstrap interval, the control-blind
  Lead-k at the system's mean summary length, the pasted row (Lead-k with the controls' own words) and
  whether each control metric stands against it: :mod:`training.sensitivity`), the same for each extra
  test set, the paper's reported rows and the models that could not be used;
* ``leaderboard.md``: one table per variant and test set shaped like the paper's main table (each system
  followed by its shuffled-controls, Lead-k and pasted rows, the paper's rows labelled), and per control
  metric right, shuffled, Lead-k, pasted, the effect with its interval and the verdict
  (:mod:`benchmarks.leaderboard.tables`);
* ``<variant>.png``: one bar chart per metric, ours solid (shuffled-controls, Lead-k and pasted rows pale),
  the paper's hatched;
* ``guidance.png`` and a "Control strength" table: the control effect against the guidance strength γ
  for each model whose folder holds a guidance sweep (:mod:`benchmarks.leaderboard.guidance`);
* ``cache/<variant>/<key>.json``: each system's full evaluation report, keyed by a hash of the model
  (folder contents or Hub revision, and the decoding code), the test set and ``--max-samples``. An
  interrupted run resumes from them; delete ``cache/`` to recompute.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path

from tqdm.auto import tqdm

from metrics.bootstrap import compare
from metrics.io import write_atomically
from training.data import load_examples
from training.evaluate import evaluate
from training.sensitivity import control_sensitivity
from variants import REGISTRY, Variant

from .guidance import guidance_board
from .tables import write_outputs

REPORT_VERSION = 3  # in the cache key: 3 = control_sensitivity carries the pasted row and its verdicts
log = logging.getLogger(__name__)


# --- the systems and their cache keys --------------------------------------------------------
def decoding_code() -> str:
    """A digest of the served decoding's code: ``variants/decoding.py``, the modules it imports and
    ``postprocess.py`` (what an exported repo ships). A change there changes what every model writes, while
    the model's files stay as they were."""
    from transformers.dynamic_module_utils import get_relative_import_files

    from variants import decoding, postprocess

    files = [decoding.__file__, *sorted(get_relative_import_files(decoding.__file__)), postprocess.__file__]
    return hashlib.sha256(b"".join(Path(f).read_bytes() for f in files)).hexdigest()[:16]


def judges_code() -> str:
    """A digest of the text judges' code (``metrics/quality.py``): a change there re-scores every system, the
    baselines too, so no row keeps a judge's old verdicts."""
    from metrics import quality

    return hashlib.sha256(Path(quality.__file__).read_bytes()).hexdigest()[:16]


def fingerprint(entry) -> dict:
    """What identifies a system's numbers besides the data: a Hub revision, or a local folder's
    files (name, size, modification time), so a retrained checkpoint is evaluated again; for a model, the
    decoding code (:func:`decoding_code`); and the text judges' code (:func:`judges_code`). Not the card
    (``README.md``): ``--store-cards`` rewrites it from these very numbers, and it changes no output."""
    if entry.source in ("local", "store"):
        files = sorted(p for p in Path(entry.location).iterdir() if p.is_file() and p.name != "README.md")
        identity = {
            "location": str(Path(entry.location).resolve()),
            "files": [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files],
        }
    else:
        identity = {"location": entry.location, "revision": entry.revision, "title": entry.title}
    if entry.source != "baseline":  # a baseline decodes nothing
        identity["decoding"] = decoding_code()
    identity["judges"] = judges_code()
    return identity


def cache_file(out: Path, variant: Variant, entry, data_sha: str, max_samples: int | None) -> Path:
    key = {
        "variant": variant.id,
        "model": entry.model,
        "system": fingerprint(entry),
        "data": data_sha,
        "max_samples": max_samples,
        "report": REPORT_VERSION,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return out / "cache" / variant.id / f"{digest}.json"


def write_test_set(
    out: Path, variant: Variant, max_samples: int | None, name: str | None = None
) -> tuple[Path, list[dict]]:
    """The variant's derived test set (``name`` None) or its extra test set ``name`` (one of
    :attr:`Evaluation.extra_test_sets`) as a JSONL file (every process writes the same bytes, atomically)."""
    records = (
        variant.evaluation.test_examples(max_samples)
        if name is None
        else variant.evaluation.extra_test_set(name, max_samples)
    )
    path = out / "data" / (f"{variant.id}.jsonl" if name is None else f"{variant.id}-{name}.jsonl")
    if records:
        write_atomically(path, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
    return path, records


def alone(entry):
    """The model alone beside the model as served: the same weights generating at γ = 1 with no decoding
    rules (constraints, sentence paths, document words), an entry of its own, so the leaderboard shows what the rules
    add. None when the model is served that way already (its record asks for neither)."""
    from dataclasses import replace

    from variants.base import read_record
    from variants.classifier_free_guidance import read_strength
    from variants.decoding_rules import DOCUMENT_WORDS

    record = read_record(entry.location)
    if not record.get("constraints") and not record.get(DOCUMENT_WORDS) and float(read_strength(record) or 1.0) == 1.0:
        return None

    def load(**kwargs):
        summarizer = entry.load(**kwargs)
        summarizer.settings = summarizer.settings.alone()
        return summarizer

    return replace(
        entry,
        model=f"{entry.model} (model alone)",
        load=load,
        title=f"{entry.title} — the model alone (γ = 1, no decoding rules)",
    )


def systems_of(catalog, variant_id: str) -> list:
    """The variant's usable systems: each entry and, after a model served with guidance or decoding
    rules, the same model alone (:func:`alone`)."""
    entries = []
    for entry in catalog.models(variant_id, available=True):
        entries.append(entry)
        if entry.source in ("store", "local") and (bare := alone(entry)) is not None:
            entries.append(bare)
    return entries


def shard(jobs: list, process_index: int, num_processes: int) -> list:
    """This process's share of the systems: every ``num_processes``-th, starting at its index."""
    return jobs[process_index::num_processes]


# --- the run ---------------------------------------------------------------------------------
def run(
    models_dir: str | Path | None = "checkpoints",
    out: str | Path = "leaderboard",
    variants: list[str] | None = None,
    max_samples: int | dict[str, int] | None = None,
    catalog_file: str | Path | None = None,
    batch_size: int | None = None,
    registry: dict[str, Variant] | None = None,
    download=None,
    state=None,
) -> dict | None:
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
        plan[variant.id] = {}
        cap = max_samples.get(variant.id) if isinstance(max_samples, dict) else max_samples
        for name in (None, *variant.evaluation.extra_test_sets):  # None: the derived test set
            data_file, records = write_test_set(out, variant, cap, name)
            if not records:
                plan[variant.id][name] = None
                continue
            data_sha = hashlib.sha256(data_file.read_bytes()).hexdigest()
            systems = [
                (entry, cache_file(out, variant, entry, data_sha, cap)) for entry in systems_of(catalog, variant.id)
            ]
            plan[variant.id][name] = (data_file, data_sha, systems)
            jobs += [(variant, data_file, entry, cache) for entry, cache in systems]
    mine = shard(jobs, state.process_index, state.num_processes)
    for variant, data_file, entry, cache in tqdm(
        mine, desc=f"leaderboard (process {state.process_index})", unit="system"
    ):
        if cache.is_file():
            log.info("%s / %s: cached in %s", variant.id, entry.model, cache)
        else:
            evaluate_system(variant, entry, data_file, cache, batch_size, str(state.device))
    state.wait_for_everyone()
    if not state.is_main_process:
        return None
    board = {
        "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "max_samples": max_samples,
        "variants": {vid: variant_board(out, registry[vid], plan[vid], catalog) for vid in plan},
        "guidance": guidance_board(e for vid in plan for e in catalog.models(vid, available=True)),
    }
    if variants:
        board = with_the_others(board, out / "leaderboard.json")
    write_outputs(out, board)
    return board


def caps_by_variant(max_samples: int | dict | None, variant_ids) -> dict:
    return dict(max_samples) if isinstance(max_samples, dict) else dict.fromkeys(variant_ids, max_samples)


def with_the_others(board: dict, previous: Path) -> dict:
    """``board`` of a run over some variants, with every other variant's table, guidance rows and sample cap
    taken from the leaderboard it updates (``previous``), in that leaderboard's order: re-measuring one variant
    does not drop the tables of the others."""
    if not previous.is_file():
        return board
    old = json.loads(previous.read_text(encoding="utf-8"))
    ran = set(board["variants"])
    parts = {vid: board["variants"].get(vid, part) for vid, part in old["variants"].items()}
    parts.update(board["variants"])
    caps = caps_by_variant(old.get("max_samples"), old["variants"])
    caps.update(caps_by_variant(board.get("max_samples"), ran))
    guidance = [row for row in old.get("guidance") or [] if row.get("variant") not in ran] + board["guidance"]
    return {**board, "max_samples": {vid: caps.get(vid) for vid in parts}, "variants": parts, "guidance": guidance}


def evaluate_system(
    variant: Variant, entry, data_file: Path, cache: Path, batch_size: int | None, device: str
) -> None:
    """Score one system as ``python -m training evaluate`` does and cache its report (the model is
    freed on return, before the next one loads)."""
    summarizer = entry.load() if entry.source == "baseline" else entry.load(device=device)
    records = load_examples(data_file, variant, summarizer.assets)
    report = evaluate(summarizer, records, str(data_file), batch_size)
    report["control_sensitivity"] = control_sensitivity(summarizer, records, str(data_file), report, batch_size)
    write_atomically(cache, json.dumps({"system": entry.to_json(), **report}, ensure_ascii=False))


def variant_board(out: Path, variant: Variant, plan: dict, catalog) -> dict:
    """One variant's part of ``leaderboard.json``, from the cached reports: its derived test set's
    systems and, under ``extra_test_sets``, each human-reference test set's."""
    paper = {
        "title": variant.paper.title,
        "authors": variant.paper.authors,
        "year": variant.paper.year,
        "url": variant.paper.url,
    }
    board = {
        "title": variant.title,
        "paper": paper,
        "metric_names": list(variant.evaluation.metric_names),
        "reported": [dict(row) for row in variant.evaluation.reported],
        "unavailable": [{"model": e.model, "reason": e.reason} for e in catalog.models(variant.id, available=False)],
    }
    extra = {name: test_set_board(out, variant, part) for name, part in plan.items() if name is not None and part}
    if plan.get(None) is None:
        return {**board, "skipped": "no bundled test set (the variant's test_examples() returns none)"}
    return {
        **board,
        "control_metrics": list(variant.evaluation.control_metrics),
        **test_set_board(out, variant, plan[None]),
        **({"extra_test_sets": extra} if extra else {}),
    }


def test_set_board(out: Path, variant: Variant, plan: tuple) -> dict:
    """One test set's description and systems, from the cached reports."""
    data_file, data_sha, systems = plan
    reports = []
    for entry, cache in systems:
        if not cache.is_file():
            raise RuntimeError(f"{variant.id} / {entry.model}: no result in {cache} (did a process fail?)")
        reports.append(json.loads(cache.read_text(encoding="utf-8")))
    baseline = next((r for r in reports if r["system"]["source"] == "baseline"), None)
    written = [json.loads(line) for line in data_file.read_text(encoding="utf-8").splitlines()]
    documents = {r["id"]: r["document"] for r in written}
    rows = [
        system_row(out, variant, report, cache, baseline, documents) for report, (_, cache) in zip(reports, systems)
    ]
    test_set = {
        "file": str(data_file.relative_to(out)),
        "n": len(written),
        "datasets": sorted({r.get("dataset", "?") for r in written}),
        "sha256": data_sha,
    }
    return {"test_set": test_set, "systems": rows}


def system_row(
    out: Path, variant: Variant, report: dict, cache: Path, baseline: dict | None, documents: dict[str, str]
) -> dict:
    """A system's metrics and, for ROUGE / ROUGE-K scores, the paired bootstrap against the baseline,
    resampling documents (``documents``: example id -> its document), each with all its examples: CCS
    and persona ask several control sets of one document, which are not independent evidence."""
    row = {
        "system": report["system"]["title"],
        "model": report["system"]["model"],
        "source": report["system"]["source"],
        "revision": report["system"]["revision"],
        "method": report["method"],
        "n_examples": report["n_examples"],
        "truncated_inputs": report["truncated_inputs"],
        "metrics": report["metrics"],
        **({"breakdown": report["breakdown"]} if report.get("breakdown") else {}),
        "cache": str(cache.relative_to(out)),
    }
    if baseline is not None and report is not baseline:
        ids = [e["id"] for e in report["examples"]], [e["id"] for e in baseline["examples"]]
        if ids[0] != ids[1]:
            raise RuntimeError(f"{variant.id}: {row['model']} and the baseline were scored on different examples")
        names = [n for n in variant.evaluation.metric_names if "rouge" in n.lower()]
        row["vs_baseline"] = compare(
            report["examples"], baseline["examples"], names, groups=[documents[e["id"]] for e in report["examples"]]
        )
    sensitivity = report.get("control_sensitivity")
    if sensitivity:
        shuffled = sensitivity["shuffled"]
        row["shuffled"] = {
            "n_examples": shuffled["n_examples"],
            "controls_changed": shuffled["controls_changed"],
            "metrics": shuffled["metrics"],
        }
        row["control_effect"] = sensitivity["effect"]
        row["lead_k"] = {k: sensitivity["lead_k"][k] for k in ("budget_words", "budget_from", "n_examples", "metrics")}
        if "pasted" in sensitivity:
            row["pasted"] = {
                k: sensitivity["pasted"][k] for k in ("budget_words", "n_examples", "metrics", "examples")
            }
            row["verdict"] = sensitivity["verdict"]
    return row
