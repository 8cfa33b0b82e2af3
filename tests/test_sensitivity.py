"""Control sensitivity (training/sensitivity.py): the shuffled-controls pass, its seeded derangement,
the control-blind Lead-k row and the control effect, on the model-free baselines and bundled data."""

import json
from collections import Counter

import pytest

from training.effect_intervals import control_effect, margin_test
from training.evaluate import derangement, evaluate
from training.lead_k import LeadK, PastedLeadK, lead_words
from training.sensitivity import control_sensitivity, evaluate_with_sensitivity, stands
from training.sensitivity_text import effect_summary
from variants import REGISTRY

TOPIC = REGISTRY["topic"]
N_TOPIC = 20  # bundled topic test examples: small, and still five topics among them


# --- the derangement ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "values",
    [
        ["a", "b"],
        ["a", "a", "b", "b"],
        ["a", "b", "c", "a", "b", "c", "a"],
        [{"topic": t} for t in "xxxyyzzzwq"],  # dicts compare by content
        ["a", "a", "a", "b"],  # 3 of 4 alike: no permutation can move them all, draws with replacement
        ["a", "a", "a", "a", "a", "b", "c"],
    ],
)
def test_shuffle_never_leaves_an_example_its_own_control_when_two_differ(values):
    for seed in range(25):
        donors = derangement(values, seed)
        assert all(values[j] != value for value, j in zip(values, donors)), (seed, donors)
        assert derangement(values, seed) == donors  # reproducible for a seed
        if max(Counter(map(json.dumps, values)).values()) * 2 <= len(values):
            assert sorted(donors) == list(range(len(values)))  # a permutation: the controls' mix is kept


def test_shuffle_depends_on_the_seed_and_moves_equal_values_too():
    values = [f"v{i % 5}" for i in range(40)]
    assert len({tuple(derangement(values, seed)) for seed in range(5)}) == 5
    same = ["x"] * 6  # nothing can differ: the examples still trade places (a single cycle)
    donors = derangement(same, 3)
    assert sorted(donors) == list(range(6)) and all(j != i for i, j in enumerate(donors))
    assert derangement([], 0) == [] and derangement(["only"], 0) == [0]


def test_shuffled_pass_gives_other_controls_and_scores_against_the_own():
    records = TOPIC.evaluation.test_examples(N_TOPIC)
    shuffled = evaluate(TOPIC.baseline(), records, "topic.jsonl", controls="shuffled", seed=0)
    assert shuffled["controls"] == "shuffled" and shuffled["shuffle_seed"] == 0
    for record, row in zip(records, shuffled["examples"]):
        assert row["controls"] == record["controls"] and row["given_controls"]["topic"] != record["controls"]["topic"]
        # scored for the topic it should have been about, not the one it was given
        assert row["stas"] == TOPIC.score(row["summary"], record["document"], record["controls"])["stas"].value
        assert row["output_words"] == len(row["summary"].split())
    with pytest.raises(ValueError, match="controls must be one of given, shuffled, none, got 'random'"):
        evaluate(TOPIC.baseline(), records[:1], "topic.jsonl", controls="random")


# --- the control effect ---------------------------------------------------------------------------
def test_topic_baseline_has_a_positive_control_effect_on_stas():
    report = evaluate_with_sensitivity(TOPIC.baseline(), TOPIC.evaluation.test_examples(N_TOPIC), "topic.jsonl")
    sensitivity = report["control_sensitivity"]
    effect = sensitivity["effect"]["stas"]
    assert (
        sensitivity["control_metrics"] == list(TOPIC.evaluation.control_metrics)
        and sensitivity["shuffled"]["controls_changed"] == N_TOPIC
    )
    # Measured on these 20 super-articles: STAS 1.000 with the right topic, 0.578 with another one,
    # effect +0.42 [+0.31, +0.54]. The baseline picks the sentences closest to the topic it is given,
    # so another topic moves it to other sentences; the interval must stay clear of 0.
    assert effect["given"] == pytest.approx(report["metrics"]["stas"])
    assert effect["shuffled"] == pytest.approx(sensitivity["shuffled"]["metrics"]["stas"])
    assert effect["difference"] == pytest.approx(effect["given"] - effect["shuffled"])
    assert effect["ci_low"] > 0.1 and effect["p_value"] < 0.01 and effect["n"] == N_TOPIC
    lead = sensitivity["lead_k"]  # control-blind, at the baseline's own mean length
    assert lead["budget_words"] == round(report["metrics"]["output_words"]) and lead["budget_from"] == "outputs"
    assert lead["metrics"]["stas"] < report["metrics"]["stas"]


def test_a_control_blind_summarizer_has_a_control_effect_of_exactly_zero():
    records = TOPIC.evaluation.test_examples(N_TOPIC)
    lead = LeadK(TOPIC, 60)
    report = evaluate(lead, records, "topic.jsonl")
    sensitivity = control_sensitivity(lead, records, "topic.jsonl", report)
    # Lead-k never reads the controls: both passes write the same summaries, so every paired difference
    # and every resampled mean difference is 0.
    assert [e["summary"] for e in sensitivity["shuffled"]["examples"]] == [e["summary"] for e in report["examples"]]
    effect = sensitivity["effect"]["stas"]
    assert effect["difference"] == effect["ci_low"] == effect["ci_high"] == 0.0


def test_lead_k_takes_the_first_sentences_closest_to_the_budget():
    document = "One two three. Four five six seven. Eight nine."
    summarize = lambda words: LeadK(TOPIC, words).summarize([document], [{"topic": "sport"}])[0].text  # noqa: E731
    assert summarize(1) == "One two three."  # at least one sentence
    assert summarize(5) == "One two three."  # 3 or 7 words: a tie goes to the shorter
    assert summarize(6) == "One two three. Four five six seven."
    assert summarize(100) == document
    with pytest.raises(ValueError, match="at least 1 word, got 0"):
        LeadK(TOPIC, 0)


def test_corpus_metrics_get_the_difference_without_an_interval():
    given = {
        "n_examples": 2,
        "metrics": {"egises": 0.3, "rouge1": 0.5},
        "examples": [{"id": "a", "rouge1": 0.6}, {"id": "b", "rouge1": 0.4}],
    }
    shuffled = {
        "n_examples": 2,
        "metrics": {"egises": 0.5, "rouge1": 0.3},
        "examples": [{"id": "a", "rouge1": 0.3}, {"id": "b", "rouge1": 0.3}],
    }
    effects = control_effect(given, shuffled, ["rouge1", "egises"])
    assert effects["rouge1"]["difference"] == pytest.approx(0.2) and effects["rouge1"]["ci_low"] == pytest.approx(0.1)
    assert effects["egises"] == {
        "given": 0.3,
        "shuffled": 0.5,
        "difference": pytest.approx(-0.2),
        "ci_low": None,
        "ci_high": None,
        "p_value": None,
        "n": 2,
    }
    with pytest.raises(ValueError, match="scored different examples"):
        control_effect(given, {**shuffled, "examples": shuffled["examples"][::-1]}, ["rouge1"])
    # both examples ask about one document: one unit to resample, so every resample is the whole set
    one = control_effect(given, shuffled, ["rouge1"], documents=["same article", "same article"])["rouge1"]
    assert one["documents"] == 1 and one["ci_low"] == one["ci_high"] == pytest.approx(0.2)


def test_a_contrast_metric_gets_its_interval_from_the_documents():
    """ΔFKGL = mean fkgl_normal - mean fkgl_high. By hand: given ΔFKGL (12 + 14)/2 - 10 = 3, shuffled
    (12 + 12)/2 - 12 = 0, effect 3; per example given - shuffled: normal 0 and +2, high -2. Each
    document holds one normal and one high example, so a resample drawing document A only gives
    0 - (-2) = 2, B only 2 - (-2) = 4: the interval lies in [2, 4] and above 0."""

    def report(rows, delta):
        return {
            "n_examples": len(rows),
            "metrics": {"delta_fkgl": delta},
            "examples": [{"id": str(i), **row} for i, row in enumerate(rows)],
        }

    given = report([{"fkgl_normal": 12.0}, {"fkgl_high": 10.0}, {"fkgl_normal": 14.0}, {"fkgl_high": 10.0}], 3.0)
    shuffled = report([{"fkgl_normal": 12.0}, {"fkgl_high": 12.0}, {"fkgl_normal": 12.0}, {"fkgl_high": 12.0}], 0.0)
    contrasts = {"delta_fkgl": ("fkgl_normal", "fkgl_high")}
    effect = control_effect(given, shuffled, ["delta_fkgl"], documents=["A", "A", "B", "B"], contrasts=contrasts)
    assert effect["delta_fkgl"]["difference"] == pytest.approx(3.0)
    assert 2.0 <= effect["delta_fkgl"]["ci_low"] < 3.0 < effect["delta_fkgl"]["ci_high"] <= 4.0
    assert effect["delta_fkgl"]["documents"] == 2 and effect["delta_fkgl"]["p_value"] == 0.0
    plain = control_effect(
        given, shuffled, ["delta_fkgl"], documents=["A", "A", "B", "B"]
    )  # not declared: corpus only
    assert plain["delta_fkgl"]["ci_low"] is None


def test_a_contrast_needs_both_sides():
    from metrics.bootstrap import contrast_bootstrap
    from metrics.io import DataError

    assert contrast_bootstrap([2.0, 2.0, -1.0], [True, True, False], ["a", "b", "c"])["ci_low"] == pytest.approx(3.0)
    with pytest.raises(DataError, match="both sides"):
        contrast_bootstrap([1.0, 2.0], [True, True], ["a", "b"])


@pytest.mark.parametrize("variant_id", sorted(REGISTRY))
def test_every_variants_control_metrics_are_its_metrics(variant_id):
    variant = REGISTRY[variant_id]
    assert variant.evaluation.control_metrics and set(variant.evaluation.control_metrics) <= set(
        variant.evaluation.metric_names
    )


def test_evaluate_cli_adds_control_sensitivity_unless_told_not_to(tmp_path, capsys):
    from training.__main__ import main as training

    data = tmp_path / "topic.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in TOPIC.evaluation.test_examples(4)))
    common = ["evaluate", "--model", "baseline", "--variant", "topic", "--data", str(data)]
    training([*common, "--out", str(tmp_path / "with.json")])
    report = json.loads((tmp_path / "with.json").read_text())
    printed = capsys.readouterr().out
    assert set(report["control_sensitivity"]["effect"]) == set(TOPIC.evaluation.control_metrics)
    assert "stas: right " in printed and ", pasted " in printed
    training([*common, "--out", str(tmp_path / "without.json"), "--no-control-sensitivity"])
    without = json.loads((tmp_path / "without.json").read_text())
    assert "control_sensitivity" not in without and without["metrics"] == report["metrics"]


# --- the pasted row and the rule it enforces ---------------------------------------------------------
def interval(low: float, high: float) -> dict:
    return {"difference": (low + high) / 2, "ci_low": low, "ci_high": high}


def test_a_metric_stands_when_the_intervals_of_effect_and_margin_lie_above_zero():
    assert stands(interval(0.01, 0.05), interval(0.2, 0.6))
    assert not stands(interval(-0.01, 0.05), interval(0.2, 0.6))  # the margin over pasted may be 0
    assert not stands(interval(0.01, 0.05), interval(-0.1, 0.6))  # the effect may be 0
    assert not stands(interval(0.01, 0.05), interval(0.2, 0.6), lead_margin=interval(-0.02, 0.04))  # Lead-k may win
    # lower is better (length_error, egises): the effect must lie below 0; margins are signed to be good above 0
    assert stands(interval(0.01, 0.05), interval(-0.6, -0.2), lower_is_better=True)
    assert not stands(interval(0.01, 0.05), interval(0.2, 0.6), lower_is_better=True)


def test_the_margin_is_right_minus_pasted_minus_half_the_effect_per_example():
    # example 1: (0.9 - 0.6) - (0.9 - 0.5) / 2 = 0.1; example 2: (0.8 - 0.6) - (0.8 - 0.4) / 2 = 0.0
    margin = margin_test([0.9, 0.8], [0.5, 0.4], [0.6, 0.6], lower=False, groups=["a", "b"], seed=0)
    assert margin["difference"] == pytest.approx(0.05)
    assert margin["ci_low"] == pytest.approx(0.0) and margin["ci_high"] == pytest.approx(0.1)
    # lower is better: the sign turns, so pasting below the right controls' error is a negative margin
    assert margin_test([0.9], [0.5], [0.6], lower=True, groups=["a"], seed=0)["difference"] == pytest.approx(-0.1)
    # one document with two examples: resampled together, so the interval is a single point
    one = margin_test([0.9, 0.8], [0.5, 0.4], [0.6, 0.6], lower=False, groups=["d", "d"], seed=0)
    assert one["ci_low"] == one["ci_high"] == pytest.approx(0.05)


def test_the_report_has_the_pasted_row_and_a_verdict_per_control_metric():
    records = TOPIC.evaluation.test_examples(N_TOPIC)
    report = evaluate_with_sensitivity(TOPIC.baseline(), records, "topic.jsonl")
    sensitivity = report["control_sensitivity"]
    pasted, lead = sensitivity["pasted"], sensitivity["lead_k"]
    budget = lead["budget_words"]
    assert pasted["budget_words"] == budget and pasted["n_examples"] == N_TOPIC
    for example, record in zip(pasted["examples"], records):  # Lead-k less the topic's ten terms, then the terms
        terms = len(TOPIC.evaluation.paste("", record["controls"]).split())
        kept = " ".join(lead_words(record["document"], budget).split()[: budget - terms])
        assert example["summary"] == " ".join(TOPIC.evaluation.paste(kept, record["controls"]).split())
        assert len(example["summary"].split()) <= budget
    assert set(sensitivity["verdict"]) == set(sensitivity["effect"]) == set(TOPIC.evaluation.control_metrics)
    for name, verdict in sensitivity["verdict"].items():
        effect = sensitivity["effect"][name]
        assert verdict["pasted"] == pytest.approx(pasted["metrics"][name])
        assert verdict["stands"] == stands(verdict["margin"], effect, verdict.get("vs_lead_k"))
        assert ("vs_lead_k" in verdict) == name.startswith("rouge")  # ROUGE must also beat control-blind Lead-k
    verdict = "stands" if sensitivity["verdict"]["stas"]["stands"] else "does not stand"
    text = effect_summary(sensitivity)
    assert f"pasted {pasted['metrics']['stas']:.4f}: {verdict} (margin over pasted" in text and "Lead-k" in text


def test_pasted_lead_k_is_lead_k_plus_the_variants_paste():
    document = "One two three. Four five six seven. Eight nine."
    pasted = PastedLeadK(REGISTRY["tdsum"], 3).summarize([document], [{"boost": ["nine", "eight"]}])[0].text
    assert pasted == "One nine eight"  # as long as Lead-k at 3 words: Lead-k gives up the two pasted words
    assert (
        PastedLeadK(REGISTRY["tdsum"], 5).summarize([document], [{"boost": ["nine"]}])[0].text == "One two three. nine"
    )
    assert PastedLeadK(REGISTRY["entity"], 3).summarize([document], [{"entity": "Ann Lee"}])[0].text == "Ann Lee. One"
