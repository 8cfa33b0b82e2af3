"""The Space's order of each variant's models (best measured first, from the leaderboard) and each
measured model's one line on its standing against the baseline, against hand-made leaderboards and the
committed one."""

import json
from pathlib import Path

from variants import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "leaderboard" / "leaderboard.json"


def row(model, metrics, n=40, vs_baseline=None):
    return {
        "model": model,
        "n_examples": n,
        "metrics": metrics,
        **({"vs_baseline": vs_baseline} if vs_baseline else {}),
    }


def board(systems, control_metrics=("stas", "rouge1"), metric_names=("stas", "rouge1", "rouge2")):
    return {
        "variants": {
            "topic": {"control_metrics": list(control_metrics), "metric_names": list(metric_names), "systems": systems}
        }
    }


def entries(*models):
    from space.catalog import Entry

    return [Entry("topic", m, m, "baseline" if m == "baseline" else "store") for m in models]


def test_models_are_ordered_by_the_first_control_metric_then_rouge_and_unmeasured_last():
    from space.catalog import ranked

    hand = board(
        [
            row("baseline", {"stas": 0.80, "rouge1": 0.40}),
            row("tie-better-rouge", {"stas": 0.80, "rouge1": 0.45}),
            row("best-stas", {"stas": 0.90, "rouge1": 0.30}),
            row("worst", {"stas": 0.50, "rouge1": 0.60}),
            row("rouge-only", {"stas": None, "rouge1": 0.99}),  # no STAS: after every system that has it
            row("nothing", {"stas": None, "rouge1": None}),  # measured nothing: as unmeasured
        ]
    )
    given = entries("baseline", "unmeasured-a", "worst", "nothing", "rouge-only", "tie-better-rouge", "best-stas")
    given.append(entries("unmeasured-b")[0])
    # by hand: STAS 0.90 > 0.80 = 0.80 (ROUGE-1 0.45 > 0.40) > 0.50 > none; then the unmeasured, as given
    expected = [
        "best-stas",
        "tie-better-rouge",
        "baseline",
        "worst",
        "rouge-only",
        "unmeasured-a",
        "nothing",
        "unmeasured-b",
    ]
    assert [e.model for e in ranked(given, hand, REGISTRY)] == expected
    # the baseline leads where it measures best; with no leaderboard the catalog's order stands
    hand["variants"]["topic"]["systems"][0]["metrics"]["stas"] = 0.95
    assert [e.model for e in ranked(given, hand, REGISTRY)][:2] == ["baseline", "best-stas"]
    assert [e.model for e in ranked(given, {}, REGISTRY)] == [e.model for e in given]


def test_a_lower_is_better_first_metric_orders_lowest_first():
    from space.catalog import ranked

    class Lower:
        class evaluation:
            lower_is_better = ("length_error",)

    hand = board(
        [
            row("baseline", {"length_error": 0.5, "rougeL": 0.3}),
            row("close", {"length_error": 0.1, "rougeL": 0.2}),
            row("far", {"length_error": 0.9, "rougeL": 0.9}),
        ],
        control_metrics=("length_error", "length_hit"),
        metric_names=("rougeL", "length_error", "length_hit"),
    )
    ordered = ranked(entries("baseline", "far", "close"), hand, {"topic": Lower()})
    assert [e.model for e in ordered] == ["close", "baseline", "far"]
    assert ordered[2].standing == (
        "below its baseline on length error (lower is better), above it on ROUGE-L "
        "(test set, 40 examples: length error 0.900 vs 0.500, ROUGE-L 0.900 vs 0.300)"
    )


def test_one_measured_line_on_each_models_standing_against_its_baseline():
    from space.standing import standing

    # ROUGE-1's paired interval (model minus baseline) decides it when the leaderboard gives one
    hand = board(
        [
            row("baseline", {"stas": 0.8, "rouge1": 0.4}, n=102),
            row(
                "worse",
                {"stas": 0.7, "rouge1": 0.35},
                n=102,
                vs_baseline={"rouge1": {"ci_low": -0.08, "ci_high": -0.02}},
            ),
            row(
                "noisy",
                {"stas": 0.9, "rouge1": 0.42},
                n=102,
                vs_baseline={"rouge1": {"ci_low": -0.01, "ci_high": 0.05}},
            ),
            row("level", {"stas": 0.8, "rouge1": 0.5}, n=102),
        ]
    )["variants"]["topic"]
    assert standing(hand, "worse") == (
        "below its baseline on STAS and ROUGE-1 (test set, 102 examples: STAS 0.700 vs 0.800, ROUGE-1 0.350 vs 0.400)"
    )
    assert standing(hand, "noisy") == (
        "above its baseline on STAS, within noise of it on ROUGE-1 "
        "(test set, 102 examples: STAS 0.900 vs 0.800, ROUGE-1 0.420 vs 0.400)"
    )
    assert standing(hand, "level") == (
        "level with its baseline on STAS, above it on ROUGE-1 "
        "(test set, 102 examples: STAS 0.800 vs 0.800, ROUGE-1 0.500 vs 0.400)"
    )
    assert standing(hand, "baseline") == standing(hand, "absent") == ""
    # the first control metric is ROUGE-1 itself (persona): one metric, named once
    persona = board([row("baseline", {"rouge1": 0.33}), row("p", {"rouge1": 0.30})], ("rouge1", "egises"), ("rouge1",))
    assert standing(persona["variants"]["topic"], "p") == (
        "below its baseline on ROUGE-1 (test set, 40 examples: ROUGE-1 0.300 vs 0.330)"
    )


def test_the_page_shows_the_order_and_each_models_line(tmp_path, committed_store):
    """The committed store's topic model on a hand-made leaderboard: listed first when it measures best,
    its line in the variant's about text and in /variants."""
    from space.app import default_model, model_choices
    from space.catalog import build_catalog
    from space.service import Service
    from space.texts import about
    from space.views import escape_markdown

    path = tmp_path / "leaderboard.json"
    path.write_text(
        json.dumps(
            board(
                [row("baseline", {"stas": 0.8, "rouge1": 0.4}), row("topic-prepend-tag", {"stas": 0.9, "rouge1": 0.3})]
            )
        )
    )
    service = Service(build_catalog(None, None, leaderboard=path))
    assert [m for _, m in model_choices(service, "topic")] == ["topic-prepend-tag", "baseline"]
    assert default_model(service, "topic") == "topic-prepend-tag"
    line = "above its baseline on STAS, below it on ROUGE-1 (test set, 40 examples: STAS 0.900 vs 0.800, ROUGE-1 0.300 vs 0.400)"
    text = about(service, "topic")
    assert "listed best first by their leaderboard test score (STAS, then ROUGE-1)" in text
    assert f"**topic\\-prepend\\-tag** (as served): {escape_markdown(line)}" in text
    listing = service.variants()["variants"]["topic"]
    assert listing["ordered_by"] == ["stas", "rouge1"] and listing["models"][0]["standing"] == line
    # a variant the leaderboard did not measure keeps the catalog's order and says nothing of it
    assert "listed best first" not in about(service, "ccs") and default_model(service, "ccs") == "baseline"


def test_the_committed_leaderboard_puts_the_baseline_first_where_it_measures_best(committed_store):
    from space.catalog import build_catalog
    from space.standing import ordering_metrics

    measured = json.loads(COMMITTED.read_text(encoding="utf-8"))["variants"]
    catalog = build_catalog(None, None, leaderboard=COMMITTED)
    checked = []
    for variant_id, part in measured.items():
        first = ordering_metrics(part)[0]
        scores = {r["model"]: r["metrics"].get(first) for r in part["systems"]}
        served = [e.model for e in catalog.models(variant_id)]
        stored = [m for m in served if m != "baseline" and scores.get(m) is not None]
        if stored and all(scores["baseline"] > scores[m] for m in stored):  # read off the file, metric by metric
            assert served[0] == "baseline", (variant_id, served)
            entry = catalog.models(variant_id)[1]
            assert entry.standing.startswith("below its baseline on "), entry.standing
            checked.append(variant_id)
    assert "topic" in checked  # STAS 0.990 (baseline) vs 0.818 (topic-prepend-tag, as served)
    topic = next(e for e in catalog.models("topic") if e.model == "topic-prepend-tag")
    assert topic.standing == (
        "below its baseline on STAS and ROUGE-1 (test set, 102 examples: STAS 0.818 vs 0.990, ROUGE-1 0.392 vs 0.447)"
    )
