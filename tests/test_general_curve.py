"""The general summarizer's learning curve (``training.general_curve``): its inputs hold the recipe's mix and
the val sets and no test example, each point's scores check by hand, and a run cut short keeps its points."""

import json
from types import SimpleNamespace

import pytest
import torch

from training.general_curve import ValSummaries, read_inputs, score_curve, write_inputs
from training.general_recipe import evaluation_sets, training_examples


def test_the_inputs_hold_the_training_mix_and_the_val_sets_and_no_test_example(tmp_path):
    inputs = read_inputs(write_inputs(tmp_path / "inputs.json.xz"))
    assert inputs["train"] == training_examples()
    assert {name: (entry["examples"], entry["lead"]) for name, entry in inputs["val"].items()} == {
        name: (examples, lead) for name, (examples, lead) in evaluation_sets("val").items()
    }
    read = [e["document"] for e in inputs["train"]] + [
        e["document"] for entry in inputs["val"].values() for e in entry["examples"]
    ]
    tests = {e["document"] for examples, _ in evaluation_sets("test").values() for e in examples}
    assert read and tests and not tests & set(read)


def test_each_point_is_scored_as_served_against_the_references_and_lead_k():
    sets = {
        "news": {
            "lead": 1,
            "examples": [
                {
                    "document": "Alice met Bob in Leeds. They talked for hours. It rained.",
                    "target": "Alice met Bob in Leeds.",
                },
                {"document": "The bank cut rates. Markets rose.", "target": "The bank cut rates."},
            ],
        }
    }
    summaries = {
        "0": {"news": ["alice met bob in leeds .", "the bank cut rates ."]},  # the model's case and spacing
        "500": {"news": ["They talked in Paris.", "Markets rose."]},
    }
    first, second = score_curve(summaries, sets, start_step=100)
    assert (first["step"], second["step"]) == (100, 600)
    news = first["sets"]["news"]
    # postprocessed, each summary is its reference; 4.5 words round to 4, and Lead-k at 4 words keeps
    # each document's first sentence (at least one), which is its reference too
    assert news["rouge1"] == pytest.approx(1.0) and news["summary_words"] == 4
    assert news["lead_at_summary_length_rouge1"] == pytest.approx(1.0)
    assert (news["ends_sentence"], news["repeated_trigram"], news["has_unsupported"]) == (1.0, 0.0, 0.0)
    news = second["sets"]["news"]
    # "in" is the one shared word of the first (P 1/4, R 1/5: F 2/9); the second shares none
    assert news["rouge1"] == pytest.approx((2 / 9 + 0) / 2)
    assert news["has_unsupported"] == 0.5  # "Paris" is not in its document


def test_val_summaries_keep_each_point_and_a_run_cut_short_resumes_from_them(tmp_path):
    from transformers import BartForConditionalGeneration

    from variants.presets import tiny_bart_config, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    model = BartForConditionalGeneration(tiny_bart_config(tokenizer))
    sets = {
        "a": {"lead": 1, "examples": [{"document": "the cat sat on the mat.", "target": "a cat."}] * 3},
        "b": {"lead": 3, "examples": [{"document": "rates rose again.", "target": "rates rose."}]},
    }
    out, snapshots = tmp_path / "curve_summaries.json", tmp_path / "snapshots"
    callback = ValSummaries(sets, tokenizer, out, snapshots, every=2, batch_size=2)
    state = SimpleNamespace(global_step=0)
    callback.on_train_begin(None, state, None, model=model)
    state.global_step = 1
    callback.on_step_end(None, state, None, model=model)  # not a multiple of every: no point
    state.global_step = 2
    callback.on_step_end(None, state, None, model=model)
    written = json.loads(out.read_text())
    assert sorted(written) == ["0", "2"]
    assert [len(written["2"][name]) for name in ("a", "b")] == [3, 1]
    assert (snapshots / "step-2" / "config.json").is_file() and model.training  # back to training mode

    def fail(*args, **kwargs):
        raise AssertionError("a point already written is summarized again")

    model.generate = fail
    resumed = ValSummaries(sets, tokenizer, out, snapshots, every=2)
    resumed.on_train_end(None, state, None, model=model)  # step 2 is on file: kept as it is
    assert resumed.curve == written
