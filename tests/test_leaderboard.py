"""The leaderboard harness (``python -m benchmarks leaderboard``), the paired bootstrap behind its
significance marks, and the Space's Leaderboard tab, on a tiny topic checkpoint and the bundled data."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from metrics.io import DataError, read_jsonl
from metrics.quality import QUALITY_FIELDS
from training.lead_k import PastedLeadK
from variants import REGISTRY
from variants.base import Control, Paper, Summarizer, Summary, Variant
from variants.evaluation import Evaluation
from variants.topic import TopicVariant
from variants.topic.evaluation import TopicEvaluation

MAX_SAMPLES = 4


# --- a variant without a test set: the harness must skip it, not fail --------------------------
class FirstWords(Summarizer):
    name, method = "baseline: first words", "extractive"

    def __init__(self, variant):
        self.variant = variant

    def summarize(self, documents, controls, **_):
        return [Summary(" ".join(d.split()[:5])) for d in documents]


class NoTestSetEvaluation(Evaluation):
    metric_names = ("length",)


class NoTestSet(Variant):
    id, title, description = "untested", "Untested", "A variant that declares no test set."
    paper = Paper("Nothing", "Nobody", 2024, "https://example.org", "@misc{nothing}")
    methods, evaluation_class = ("extractive",), NoTestSetEvaluation

    def controls_for(self, assets=None):
        return (Control("note", "text", "free text"),)

    def baseline(self):
        return FirstWords(self)


class FakeState:
    """What the harness uses of ``accelerate.PartialState``, for one of ``num_processes`` processes
    run one after the other (waiting for the others is then a no-op)."""

    device = "cpu"

    def __init__(self, process_index, num_processes):
        self.process_index, self.num_processes = process_index, num_processes
        self.is_main_process = process_index == 0

    def wait_for_everyone(self):
        pass


# --- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def models_dir(tmp_path_factory, tiny_topic_checkpoint):
    """A models folder with one tiny topic checkpoint (tests/conftest.py)."""
    models = tmp_path_factory.mktemp("leaderboard") / "checkpoints"
    shutil.copytree(tiny_topic_checkpoint, models / "topic-tiny")
    return models


REGISTRY_UNDER_TEST = {"topic": REGISTRY["topic"], "untested": NoTestSet()}


def run_board(models_dir, out, **kwargs):
    from benchmarks.leaderboard.harness import run

    kwargs.setdefault("state", FakeState(0, 1))
    return run(models_dir, out, max_samples=MAX_SAMPLES, catalog_file=None, registry=REGISTRY_UNDER_TEST, **kwargs)


@pytest.fixture(scope="module")
def board_dir(models_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("board")
    run_board(models_dir, out)
    return out


def load_board(out):
    return json.loads((out / "leaderboard.json").read_text())


# --- the harness ----------------------------------------------------------------------------
def test_harness_writes_json_markdown_and_plots(board_dir):
    from PIL import Image

    board = load_board(board_dir)
    topic = board["variants"]["topic"]
    assert [s["model"] for s in topic["systems"]] == ["baseline", "local/topic-tiny"]
    assert topic["test_set"]["n"] == MAX_SAMPLES and topic["test_set"]["datasets"] == ["bbc_summary"]
    assert all(
        set(s["metrics"]) == {"stas", "rouge1", "rouge2", "rougeLsum", "output_words", *QUALITY_FIELDS}
        for s in topic["systems"]
    )
    assert board["variants"]["untested"]["skipped"] and "systems" not in board["variants"]["untested"]
    markdown = (board_dir / "leaderboard.md").read_text()
    assert "| system | method | n | words | stas | rouge1 | rouge2 | rougeLsum |" in markdown
    assert "_Skipped: no bundled test set" in markdown and "## Untested (`untested`)" in markdown
    with Image.open(board_dir / topic["plot"]) as image:
        assert image.format == "PNG" and image.width > 300
    assert not (board_dir / "untested.png").exists()


def test_test_set_is_the_variants_super_articles(board_dir):
    written = read_jsonl(board_dir / "data" / "topic.jsonl")
    # Passali et al. Sec. 4.3: each super-article mixes two articles' sentences and asks for one's topic
    assert written == REGISTRY["topic"].evaluation.test_examples(MAX_SAMPLES)
    assert all(r["controls"]["topic"] != r["other_topic"] and len(r["sources"]) == 2 for r in written)


def test_numbers_equal_the_evaluation_cli(board_dir, models_dir, tmp_path):
    from training.__main__ import main as training

    data = board_dir / "data" / "topic.jsonl"
    rows = {s["model"]: s for s in load_board(board_dir)["variants"]["topic"]["systems"]}
    markdown = (board_dir / "leaderboard.md").read_text()
    for model, args in (
        ("baseline", ["--model", "baseline", "--variant", "topic"]),
        ("local/topic-tiny", ["--model", str(models_dir / "topic-tiny")]),
    ):
        training(["evaluate", *args, "--data", str(data), "--out", str(tmp_path / "report.json")])
        report = json.loads((tmp_path / "report.json").read_text())
        assert report["metrics"] == rows[model]["metrics"] and report["n_examples"] == MAX_SAMPLES
        cells = " | ".join(f"{report['metrics'][n]:.4f}" for n in ("stas", "rouge1", "rouge2", "rougeLsum"))
        row = next(line for line in markdown.splitlines() if line.startswith(f"| {rows[model]['system']} |"))
        assert row.replace("†", "").endswith(f"| {report['metrics']['output_words']:.1f} | {cells} |")
        # the same shuffled pass, control effect and Lead-k as the CLI's report
        sensitivity = report["control_sensitivity"]
        assert rows[model]["control_effect"] == sensitivity["effect"]
        assert rows[model]["shuffled"]["metrics"] == sensitivity["shuffled"]["metrics"]
        assert rows[model]["lead_k"]["metrics"] == sensitivity["lead_k"]["metrics"]


def test_every_system_has_shuffled_controls_lead_k_pasted_and_control_effect_rows(board_dir):
    topic = load_board(board_dir)["variants"]["topic"]
    assert topic["control_metrics"] == ["stas", "rouge1", "rouge2", "rougeLsum"]
    lines = (board_dir / "leaderboard.md").read_text().splitlines()
    for system in topic["systems"]:
        at = lines.index(next(line for line in lines if line.startswith(f"| {system['system']} |")))
        shuffled, lead = system["shuffled"], system["lead_k"]
        # right under the system: the same system given shuffled controls, then Lead-k at its length
        assert lines[at + 1] == (
            f"| ↳ same system, shuffled controls |  | {MAX_SAMPLES} | "
            f"{shuffled['metrics']['output_words']:.1f} | {shuffled['metrics']['stas']:.4f} | "
            f"{shuffled['metrics']['rouge1']:.4f} | {shuffled['metrics']['rouge2']:.4f} | "
            f"{shuffled['metrics']['rougeLsum']:.4f} |"
        )
        assert lines[at + 2].startswith(
            f"| ↳ Lead-k at the same length ({lead['budget_words']} words), control-blind | lead-k | {MAX_SAMPLES} | "
        )
        pasted = system["pasted"]  # then Lead-k with the topic's terms pasted after it, at the same length
        assert lines[at + 3].startswith(
            f"| ↳ Lead-k + pasted controls ({lead['budget_words']} words) | pasted | {MAX_SAMPLES} | "
        )
        assert pasted["budget_words"] == lead["budget_words"]
        records = {r["id"]: r for r in read_jsonl(board_dir / "data" / "topic.jsonl")}
        for example in pasted["examples"]:
            record = records[example["id"]]
            assert (
                example["summary"]
                == PastedLeadK(REGISTRY["topic"], lead["budget_words"])
                .extract(record["document"], record["controls"])
                .text
            )
        assert lead["budget_words"] == round(system["metrics"]["output_words"])
        effect, verdict = system["control_effect"]["stas"], system["verdict"]["stas"]
        assert effect["difference"] == pytest.approx(system["metrics"]["stas"] - shuffled["metrics"]["stas"])
        # the margin over pasted: (right - pasted) - effect / 2, a mean of per-example margins
        assert verdict["margin"]["difference"] == pytest.approx(
            effect["given"] - pasted["metrics"]["stas"] - effect["difference"] / 2
        )
        m = verdict["margin"]
        # per control metric: right, shuffled, Lead-k, pasted, effect [interval], verdict with the margin
        assert (
            f"| {system['system']} | stas | {effect['given']:.4f} | {effect['shuffled']:.4f} | "
            f"{lead['metrics']['stas']:.4f} | {pasted['metrics']['stas']:.4f} | {effect['difference']:+.4f} "
            f"[{effect['ci_low']:+.4f}, {effect['ci_high']:+.4f}] | "
            f"{'stands' if verdict['stands'] else 'does not stand'} "
            f"({m['difference']:+.4f} [{m['ci_low']:+.4f}, {m['ci_high']:+.4f}]) |"
        ) in lines
    assert (
        "| system | metric | right | shuffled | Lead-k | pasted | effect [95% interval] | vs pasted: margin |" in lines
    )


def test_paper_rows_are_labelled_and_on_our_scale(board_dir):
    topic = load_board(board_dir)["variants"]["topic"]
    best = next(r for r in topic["reported"] if r["system"] == "BARTpre+tag")
    # Table 2 prints BARTpre+tag as R-1 41.66, R-2 19.57, R-L 38.83, STAS 72.36 (%): /100 to fractions
    assert best["metrics"] == {"stas": 0.7236, "rouge1": 0.4166, "rouge2": 0.1957, "rougeLsum": 0.3883}
    assert all(0 <= v <= 1 for r in topic["reported"] for v in r["metrics"].values())
    markdown = (board_dir / "leaderboard.md").read_text()
    assert (
        "| _BARTpre+tag — reported in paper (different data/base model), Table 2_ | | | | "
        "0.7236 | 0.4166 | 0.1957 | 0.3883 |"
    ) in markdown
    assert (
        "| _PG — reported in paper (different data/base model), Table 2_ | | | | – | 0.2680 |" in markdown
    )  # no STAS


def test_checkpoints_are_tested_against_the_baseline_on_rouge(board_dir):
    baseline, tiny = load_board(board_dir)["variants"]["topic"]["systems"]
    assert "vs_baseline" not in baseline
    assert set(tiny["vs_baseline"]) == {"rouge1", "rouge2", "rougeLsum"}  # ROUGE only: STAS is no ROUGE score
    for name, test in tiny["vs_baseline"].items():
        # same examples on both sides, none missing: the mean difference is the difference of the means
        assert test["n"] == MAX_SAMPLES and test["difference"] == pytest.approx(
            tiny["metrics"][name] - baseline["metrics"][name]
        )
        assert 0.0 <= test["p_value"] <= 1.0


def test_the_baseline_comparison_resamples_documents(tmp_path):
    """Four examples of two documents (as persona asks four readers of one article): the bootstrap
    draws 2 documents, not 4 examples, and the id -> document map, not the row order, says which."""
    from benchmarks.leaderboard.harness import system_row

    def report(rouge1):
        examples = [{"id": f"e{i}", "rouge1": r, "rouge2": r, "rougeLsum": r} for i, r in enumerate(rouge1)]
        return {
            "system": {"title": "t", "model": "m", "source": "checkpoint", "revision": None},
            "method": "tag",
            "n_examples": 4,
            "truncated_inputs": 0,
            "metrics": {},
            "examples": examples,
        }

    documents = {"e0": "A", "e1": "B", "e2": "A", "e3": "B"}
    row = system_row(
        tmp_path,
        REGISTRY["topic"],
        report([0.5, 0.2, 0.7, 0.2]),
        tmp_path / "c.json",
        report([0.1, 0.2, 0.1, 0.2]),
        documents,
    )
    test = row["vs_baseline"]["rouge1"]
    assert test["n"] == 4 and test["units"] == 2
    # document A gains 0.5 on average over its two examples, B nothing: a resample of A and A gives 0.5
    assert test["difference"] == pytest.approx(0.25) and test["ci_high"] == pytest.approx(0.5)


def test_resume_after_a_killed_run_reuses_the_finished_systems(board_dir, models_dir, tmp_path, monkeypatch):
    import benchmarks.leaderboard.harness as leaderboard

    real_evaluate, evaluated = leaderboard.evaluate, []

    def killed_after_first(summarizer, *args):
        if evaluated:
            raise KeyboardInterrupt("killed")
        evaluated.append(summarizer.name)
        return real_evaluate(summarizer, *args)

    monkeypatch.setattr(leaderboard, "evaluate", killed_after_first)
    with pytest.raises(KeyboardInterrupt):
        run_board(models_dir, tmp_path)
    assert (
        len(list((tmp_path / "cache" / "topic").glob("*.json"))) == 1 and not (tmp_path / "leaderboard.json").exists()
    )

    def counted(summarizer, *args):
        evaluated.append(summarizer.name)
        return real_evaluate(summarizer, *args)

    monkeypatch.setattr(leaderboard, "evaluate", counted)
    run_board(models_dir, tmp_path)
    # each system once per test set (the derived one, then each human-reference set), in all
    sets = 1 + len(REGISTRY["topic"].evaluation.extra_test_sets)
    assert evaluated == ["baseline: topic-focused extraction", "topic-tiny"] * sets
    assert load_board(tmp_path)["variants"] == load_board(board_dir)["variants"]
    assert (tmp_path / "leaderboard.md").read_text() == (board_dir / "leaderboard.md").read_text()
    evaluated.clear()
    run_board(models_dir, tmp_path)
    assert evaluated == []


def test_a_rewritten_card_keeps_a_systems_cache_and_a_changed_model_file_does_not(tmp_path):
    # --store-cards rewrites each stored model's README.md from the leaderboard's numbers: the next run must
    # not evaluate the model again for it. Any other file (weights, generation config) is the model's own.
    from types import SimpleNamespace

    from benchmarks.leaderboard.harness import fingerprint

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "README.md").write_text("card\n")
    (folder / "generation_config.json").write_text("{}\n")
    entry = SimpleNamespace(source="store", location=str(folder))
    before = fingerprint(entry)
    (folder / "README.md").write_text("the card, rewritten with the measured numbers\n")
    assert fingerprint(entry) == before
    (folder / "generation_config.json").write_text('{"num_beams": 4}\n')
    assert fingerprint(entry) != before


def test_a_change_to_the_decoding_code_evaluates_every_model_again(tmp_path, monkeypatch):
    # the model's files stay as they were, but what it writes does not: its cached rows are stale
    from types import SimpleNamespace

    import variants.postprocess
    from benchmarks.leaderboard.harness import fingerprint

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "generation_config.json").write_text("{}\n")
    model = SimpleNamespace(source="store", location=str(folder))
    baseline = SimpleNamespace(source="baseline", location="", revision=None, title="baseline: lead")
    before = fingerprint(model), fingerprint(baseline)
    changed = tmp_path / "postprocess.py"
    changed.write_text(Path(variants.postprocess.__file__).read_text() + "\n# a changed rule\n")
    monkeypatch.setattr(variants.postprocess, "__file__", str(changed))
    assert fingerprint(model) != before[0] and fingerprint(baseline) == before[1]  # a baseline decodes nothing


def test_a_change_to_the_text_judges_scores_every_system_again(tmp_path, monkeypatch):
    # a baseline's summaries stay as they were, but a judge's verdict on them does not
    from types import SimpleNamespace

    import metrics.quality
    from benchmarks.leaderboard.harness import fingerprint

    baseline = SimpleNamespace(source="baseline", location="", revision=None, title="baseline: lead")
    before = fingerprint(baseline)
    changed = tmp_path / "quality.py"
    changed.write_text(Path(metrics.quality.__file__).read_text() + "\n# a changed judge\n")
    monkeypatch.setattr(metrics.quality, "__file__", str(changed))
    assert fingerprint(baseline) != before


def test_a_run_over_some_variants_keeps_the_other_variants_tables(board_dir, models_dir, tmp_path):
    """Re-measuring one variant rewrites its table and keeps every other variant's, with their sample caps
    and guidance rows, from the leaderboard it updates."""
    shutil.copytree(board_dir, tmp_path, dirs_exist_ok=True)
    previous = load_board(tmp_path)
    other = {**previous["variants"]["topic"], "title": "a variant measured before"}
    previous["variants"] = {"earlier": other, **previous["variants"]}
    previous["max_samples"] = {"earlier": 7, "topic": 1, "untested": 3}
    effect = {"given": 0.5, "shuffled": 0.4, "difference": 0.1, "ci_low": 0.0, "ci_high": 0.2}
    row = {"guidance": 1.0, "effect": effect, "verdict": None, "pasted": 0.3, "rouge1": 0.2, "time_ratio": None}
    sweep = {"metric": "stas", "default_guidance": 1.0, "n_examples": 2, "data": "val.jsonl", "rows": [row]}
    previous["guidance"] = [{**sweep, "variant": "earlier", "system": "kept"}, {**sweep, "variant": "topic"}]
    (tmp_path / "leaderboard.json").write_text(json.dumps(previous))
    board = run_board(models_dir, tmp_path, variants=["topic"])
    assert list(board["variants"]) == ["earlier", "topic", "untested"]
    assert board["variants"]["earlier"] == {**other, "plot": "earlier.png"}  # its plot drawn again from it
    assert board["variants"]["topic"]["systems"] == load_board(board_dir)["variants"]["topic"]["systems"]
    assert board["max_samples"] == {"earlier": 7, "topic": MAX_SAMPLES, "untested": 3}
    assert [row["system"] for row in board["guidance"]] == ["kept"]  # the tiny topic model has no sweep
    assert "a variant measured before" in (tmp_path / "leaderboard.md").read_text()


def test_sharded_processes_split_the_systems_and_the_main_one_gathers(board_dir, models_dir, tmp_path, monkeypatch):
    import benchmarks.leaderboard.harness as leaderboard

    real_evaluate, evaluated = leaderboard.evaluate, []
    monkeypatch.setattr(leaderboard, "evaluate", lambda s, *a: evaluated.append(s.name) or real_evaluate(s, *a))
    assert run_board(models_dir, tmp_path, state=FakeState(1, 2)) is None  # not main: evaluates, writes nothing else
    sets = 1 + len(
        REGISTRY["topic"].evaluation.extra_test_sets
    )  # each system on the derived and each human-reference set
    assert evaluated == ["topic-tiny"] * sets and not (tmp_path / "leaderboard.json").exists()
    run_board(models_dir, tmp_path, state=FakeState(0, 2))
    assert evaluated == ["topic-tiny"] * sets + ["baseline: topic-focused extraction"] * sets
    assert load_board(tmp_path)["variants"] == load_board(board_dir)["variants"]


def test_hub_ids_from_the_catalog_are_scored_when_reachable_and_listed_when_not(board_dir, models_dir, tmp_path):
    import shutil

    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps(
            {
                "models": [
                    {"repo": "steersum-test/topic-tiny", "revision": "a" * 40, "variant": "topic"},
                    {"repo": "steersum-test/gone", "revision": "b" * 40, "variant": "topic"},
                ]
            }
        )
    )

    def download(repo, revision):  # the Hub as the tests see it: one repo is there, one is not
        if repo == "steersum-test/gone":
            raise OSError("offline")
        return str(models_dir / "topic-tiny")

    out = tmp_path / "board"
    shutil.copytree(board_dir, out)  # baseline and local checkpoint come from the cache
    from benchmarks.leaderboard.harness import run

    topic = run(
        models_dir,
        out,
        max_samples=MAX_SAMPLES,
        catalog_file=catalog,
        registry=REGISTRY_UNDER_TEST,
        download=download,
        state=FakeState(0, 1),
    )["variants"]["topic"]
    hub = topic["systems"][2]
    assert (hub["model"], hub["source"], hub["revision"]) == ("steersum-test/topic-tiny", "hub", "a" * 40)
    assert hub["metrics"] == topic["systems"][1]["metrics"]  # the same weights as local/topic-tiny
    assert [u["model"] for u in topic["unavailable"]] == ["steersum-test/gone"]
    assert (
        "- unavailable: steersum-test/gone — not reachable (OSError: offline)" in (out / "leaderboard.md").read_text()
    )


def test_shard_covers_every_job_once():
    from benchmarks.leaderboard.harness import shard

    jobs = list(range(7))
    shares = [shard(jobs, i, 3) for i in range(3)]
    assert shares == [[0, 3, 6], [1, 4], [2, 5]] and sorted(sum(shares, [])) == jobs


def test_unknown_variant_is_refused_with_the_allowed_ones(models_dir, tmp_path, capsys):
    from benchmarks.leaderboard.cli import main

    with pytest.raises(ValueError, match=r"unknown variant\(s\) nope; allowed: topic, untested"):
        run_board(models_dir, tmp_path, variants=["nope"])
    with pytest.raises(SystemExit) as exit_info:
        main(["--variants", "nope", "--out", str(tmp_path)])
    assert exit_info.value.code == 2 and "unknown variant(s) nope; allowed: " in capsys.readouterr().err


def test_benchmarks_cli_dispatches_leaderboard_but_not_by_default(monkeypatch, capsys):
    import benchmarks.__main__ as cli

    monkeypatch.setattr("sys.argv", ["python -m benchmarks", "leaderboard", "--help"])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert exit_info.value.code == 0 and "--max-samples" in capsys.readouterr().out
    assert not any("leaderboard" in modules for modules in cli.GROUPS.values())  # not a timing group


@pytest.mark.parametrize("variant_id", sorted(REGISTRY))
def test_every_registered_variants_test_set_is_valid(variant_id):
    """A declared test set must load as ``python -m training evaluate --data`` loads it (or be empty).
    (That it is the same on every call, which the cache key relies on, is checked for topic above.)"""
    variant = REGISTRY[variant_id]
    records = variant.evaluation.test_examples(2)
    assert isinstance(records, list) and len(records) <= 2
    for record in records:
        assert record["document"].strip() and record["target"].strip() and record["dataset"]
        variant.validate(record["controls"])


# --- paired bootstrap -----------------------------------------------------------------------
def test_bootstrap_identical_systems_give_p_one():
    from metrics.bootstrap import paired_bootstrap

    scores = list(np.random.default_rng(1).uniform(0.1, 0.6, 50))
    result = paired_bootstrap(scores, scores, seed=3)
    # every resample's difference is exactly 0, and "A not better" counts 0 <= 0
    assert result["p_value"] == 1.0 and result["difference"] == 0.0 and result["ci_low"] == result["ci_high"] == 0.0


def test_bootstrap_clearly_better_system_gives_small_p():
    from metrics.bootstrap import paired_bootstrap

    rng = np.random.default_rng(0)
    b = rng.uniform(0.1, 0.5, 60)
    a = b + rng.normal(0.05, 0.05, 60)  # better by 0.05 on average, standard error 0.05 / sqrt(60) = 0.0065
    result = paired_bootstrap(list(a), list(b), n_resamples=2000, seed=0)
    assert result["p_value"] < 0.05 and result["ci_low"] > 0
    assert result["difference"] == pytest.approx(float(np.mean(a - b)))
    # the reverse question (is B better than A?) is answered no
    assert paired_bootstrap(list(b), list(a), n_resamples=2000, seed=0)["p_value"] > 0.95


def test_bootstrap_no_difference_gives_p_near_one_half():
    from metrics.bootstrap import paired_bootstrap

    # differences +1 and -1, 50 each: by symmetry P(mean < 0) = P(mean > 0), and P(mean = 0) is
    # P(exactly 50 of 100 draws are +1) = C(100, 50) / 2^100 = 0.0796, so p = 0.5 + 0.0796 / 2 = 0.54
    result = paired_bootstrap([1.0, 0.0] * 50, [0.0, 1.0] * 50, n_resamples=4000, seed=0)
    assert 0.51 < result["p_value"] < 0.57  # 0.54 +- 3 standard errors (sqrt(0.54 * 0.46 / 4000) = 0.008)


def test_bootstrap_is_seeded_and_agrees_with_scipys_interval():
    from scipy.stats import bootstrap

    from metrics.bootstrap import paired_bootstrap

    rng = np.random.default_rng(5)
    a, b = rng.uniform(0, 1, 80), rng.uniform(0, 1, 80)
    first, again = paired_bootstrap(list(a), list(b), 3000, seed=7), paired_bootstrap(list(a), list(b), 3000, seed=7)
    assert first == again
    theirs = bootstrap((a - b,), np.mean, n_resamples=3000, method="percentile", rng=np.random.default_rng(7))
    # two independent resamplings of the same statistic: the 95% bounds agree to Monte-Carlo error
    assert first["ci_low"] == pytest.approx(theirs.confidence_interval.low, abs=0.02)
    assert first["ci_high"] == pytest.approx(theirs.confidence_interval.high, abs=0.02)


def test_bootstrap_over_groups_resamples_a_documents_examples_together():
    """A test set that asks the same question twice of each document (CCS's two readability levels of
    one target, answered alike) is no more evidence than asking it once: resampling examples one by
    one narrows the interval by about sqrt(2); resampling the documents gives the interval of the set
    with no duplicates, exactly (each document's sum and count both double, and the draws are the same)."""
    from metrics.bootstrap import paired_bootstrap

    rng = np.random.default_rng(2)
    a, b = list(rng.uniform(0, 1, 40)), list(rng.uniform(0, 1, 40))
    once = paired_bootstrap(a, b, 2000, seed=4)
    twice = [x for x in a for _ in range(2)], [x for x in b for _ in range(2)]
    documents = [f"doc{i}" for i in range(40) for _ in range(2)]
    grouped = paired_bootstrap(*twice, 2000, seed=4, groups=documents)
    assert (grouped["ci_low"], grouped["ci_high"], grouped["p_value"]) == pytest.approx(
        (once["ci_low"], once["ci_high"], once["p_value"])
    )
    assert grouped["units"] == 40 and grouped["n"] == 80 and grouped["difference"] == pytest.approx(once["difference"])
    naive = paired_bootstrap(*twice, 2000, seed=4)
    assert naive["ci_high"] - naive["ci_low"] < 0.8 * (once["ci_high"] - once["ci_low"])  # about 1/sqrt(2)
    # a document whose scores are missing on one side leaves with them
    assert paired_bootstrap([0.5, None, 0.7], [0.1, 0.2, 0.3], groups=["x", "y", "x"])["units"] == 1
    with pytest.raises(DataError, match="groups has 1 labels for 2 pairs"):
        paired_bootstrap([0.1, 0.2], [0.1, 0.3], groups=["x"])


def test_bootstrap_leaves_out_missing_scores_and_rejects_bad_input():
    from metrics.bootstrap import compare, paired_bootstrap

    result = paired_bootstrap([0.5, None, float("nan"), 0.7], [0.1, 0.2, 0.3, None])
    assert result["n"] == 1 and result["excluded"] == 3 and result["difference"] == pytest.approx(0.4)
    with pytest.raises(DataError, match="differ in length: 2 vs 1"):
        paired_bootstrap([0.1, 0.2], [0.1])
    with pytest.raises(DataError, match="no example has a score for both systems"):
        paired_bootstrap([None], [0.3])
    assert set(
        compare([{"rouge1": 0.2, "rouge_k": None}], [{"rouge1": 0.1, "rouge_k": None}], ["rouge1", "rouge_k"])
    ) == {"rouge1"}


def test_bootstrap_records_score_rouge_and_rouge_k_differences():
    from metrics.bootstrap import score_records

    record = {
        "prediction": "the cat sat on the mat",
        "baseline": "dogs ran away quickly",
        "references": ["the cat sat on a mat", "the cat is on the mat"],
    }
    result = score_records([record] * 6, source="pairs.jsonl")
    # prediction vs "the cat sat on a mat": 5 of 6 unigrams shared each way (the/cat/sat/on/mat), F1 = 5/6;
    # the baseline shares none with either reference. Same gain on every example: p = 0.
    assert result["corpus"]["rouge1_mean_a"] == pytest.approx(5 / 6) and result["corpus"]["rouge1_mean_b"] == 0.0
    assert result["corpus"]["rouge1_p_value"] == 0.0
    # keywords shared by both references: "cat", "mat" (stop words dropped); the prediction has both
    assert result["corpus"]["rouge_k_mean_a"] == 1.0 and result["corpus"]["rouge_k_p_value"] == 0.0
    with pytest.raises(DataError, match=r"^pairs.jsonl:2: missing field 'baseline'"):
        score_records([record, {"prediction": "x", "references": ["y"]}], source="pairs.jsonl")


def test_bootstrap_is_a_metrics_cli_command(tmp_path, capsys):
    from metrics.__main__ import main

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps(
            {
                "prediction": "the cat sat on the mat",
                "baseline": "dogs ran away",
                "references": ["the cat sat on a mat"],
            }
        )
        + "\n"
    )
    assert main(["bootstrap", str(pairs)]) == 0
    assert json.loads(capsys.readouterr().out)["corpus"]["rouge1_mean_a"] == pytest.approx(5 / 6)


# --- the Space's tab ------------------------------------------------------------------------
def test_space_tab_reads_the_latest_leaderboard(board_dir, tmp_path):
    import gradio as gr

    from space.leaderboard import leaderboard_tab, read_leaderboard

    text, plots = read_leaderboard(board_dir)
    assert "| system | method | n |" in text and "![" not in text  # tables kept, plot links left to the gallery
    assert [caption for _, caption in plots] == ["Topic-controlled BART (topic)"]
    hint, none = read_leaderboard(tmp_path)
    assert none == [] and "python -m benchmarks leaderboard" in hint
    with gr.Blocks():
        leaderboard_tab(board_dir)


class TopicWithHumanSetEvaluation(TopicEvaluation):
    """The topic variant's evaluation with one extra test set, as a variant with MACSum references declares it."""

    extra_test_sets = ("human",)

    def extra_test_set(self, name, max_samples=None):
        if name != "human":
            return super().extra_test_set(name, max_samples)
        return [{**r, "id": f"human-{r['id']}", "dataset": "human_refs"} for r in self.test_examples(max_samples)]


class TopicWithHumanSet(TopicVariant):
    id, evaluation_class = "topic-extra", TopicWithHumanSetEvaluation


def test_extra_test_sets_get_their_own_table_with_every_control_row(tmp_path):
    from benchmarks.leaderboard.harness import run

    board = run(
        tmp_path / "no-models",
        tmp_path,
        max_samples=2,
        registry={"topic-extra": TopicWithHumanSet()},
        state=FakeState(0, 1),
    )["variants"]["topic-extra"]
    human = board["extra_test_sets"]["human"]
    assert human["test_set"] == {
        "file": "data/topic-extra-human.jsonl",
        "n": 2,
        "datasets": ["human_refs"],
        "sha256": human["test_set"]["sha256"],
    }
    [system] = human["systems"]
    assert {"shuffled", "lead_k", "pasted", "control_effect", "verdict"} <= set(system)
    assert set(system["verdict"]) == set(system["control_effect"]) == {"stas", "rouge1", "rouge2", "rougeLsum"}
    markdown = (tmp_path / "leaderboard.md").read_text()
    assert "### Test set `human` (human references)" in markdown
    table = markdown.split("### Test set `human`")[1]
    assert (
        "| ↳ Lead-k + pasted controls (" in table
        and "| system | metric | right | shuffled | Lead-k | pasted |" in table
    )


def test_a_model_served_with_guidance_or_rules_is_also_scored_alone(tmp_path):
    """The leaderboard's second row of a model: the same weights at γ = 1 without decoding rules, so the
    table shows what the rules add; a model served plainly gets no second row."""
    from benchmarks.leaderboard.harness import systems_of
    from space.catalog import Catalog, Entry
    from variants.base import write_record

    class Loaded:
        settings = None

    def folder(name, record):
        path = tmp_path / name
        path.mkdir()
        write_record(path, {"variant": "topic", "method": "tag", **record})
        return str(path)

    def load(**_):
        from variants.seq2seq import GenerationSettings

        summarizer = Loaded()
        summarizer.settings = GenerationSettings(control_strength=2.0, constraints=True, num_beams=2)
        return summarizer

    served = Entry(
        "topic",
        "local/served",
        "served",
        "local",
        folder("served", {"control_guidance": 2.0, "constraints": True}),
        load=load,
    )
    plain = Entry("topic", "local/plain", "plain", "local", folder("plain", {}), load=load)
    baseline = Entry("topic", "baseline", "baseline", "baseline")
    catalog = Catalog([baseline, served, plain], {"topic": REGISTRY["topic"]})
    systems = systems_of(catalog, "topic")
    assert [s.model for s in systems] == ["baseline", "local/served", "local/served (model alone)", "local/plain"]
    settings = systems[2].load().settings
    # only γ and rules change
    assert (settings.control_strength, settings.constraints, settings.num_beams) == (1.0, False, 2)
    assert systems[1].load().settings.control_strength == 2.0  # the served row is untouched


def test_max_samples_takes_one_cap_or_one_per_variant():
    from benchmarks.leaderboard.cli import sample_caps

    assert sample_caps(None) is None and sample_caps(["500"]) == 500
    caps = sample_caps(["500", "ccs=200"])
    assert caps["ccs"] == 200 and caps["topic"] == 500 and set(caps) == set(REGISTRY)
    assert sample_caps(["ccs=200"])["topic"] is None  # a variant not named: all its examples
    for bad in (["0"], ["x"], ["nope=3"], ["ccs=-1"]):
        with pytest.raises(ValueError, match="--max-samples"):
            sample_caps(bad)


def test_a_variants_groups_get_a_table_of_their_own():
    from benchmarks.leaderboard.tables import breakdown_markdown

    part = {
        "systems": [
            {"system": "model", "breakdown": {"asked first": {"n": 3, "rouge1": 0.5}, "asked second": {"n": 2}}},
            {"system": "baseline"},  # no groups: no row
        ]
    }
    lines = breakdown_markdown(["rouge1", "stas"], part)
    assert lines[-2:] == ["| model | asked first | 3 | 0.5000 | – |", "| model | asked second | 2 | – | – |"]
    assert breakdown_markdown(["rouge1"], {"systems": [{"system": "baseline"}]}) == []


def test_each_test_set_has_a_table_of_its_systems_text():
    from benchmarks.leaderboard.tables import text_markdown

    part = {
        "systems": [
            {"system": "model", "metrics": {"ends_sentence": 1.0, "repeated_trigram": 0.25, "has_unsupported": 0.5}},
            {"system": "baseline", "metrics": {"doubled_word": 0.0, "altered_quote": 0.125}},
        ]
    }
    lines = text_markdown(part)
    assert "| system | ends a sentence | repeated 3-gram | word twice in a row | altered quote |" in lines[3]
    # a share a report does not hold (measured before it was scored) is a dash, never a zero
    assert lines[-2:] == ["| model | 1.0000 | 0.2500 | – | – | 0.5000 |", "| baseline | – | – | 0.0000 | 0.1250 | – |"]
