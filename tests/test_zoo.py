"""``python -m training zoo --quick``: the whole zoo's plumbing on a tiny budget (one step per model)."""

import json

from metrics.io import read_jsonl


def test_quick_zoo_builds_evaluates_and_resumes(tmp_path, capsys):
    from training.__main__ import main as training_main
    from training.zoo_models import MODELS

    root = tmp_path / "zoo"
    training_main(["zoo", "--quick", "--out", str(root)])
    state = json.loads((root / "zoo.json").read_text())
    assert sorted(state["models"]) == sorted(["general", *(m.name for m in MODELS)])
    assert (root / "minilm-bart" / "base_model.json").is_file()
    general = json.loads((root / "general" / "general_report.json").read_text())
    assert set(general["sets"]) == {"bbc_summary test", "xsum test part"}
    from training.general_evaluation import evaluate_general

    capped = evaluate_general(root / "general", max_examples=2, no_repeat_ngram_size=2, max_new_tokens=3)
    assert (capped["max_new_tokens"], capped["no_repeat_ngram_size"]) == (3, 2)
    for scores in capped["sets"].values():  # 3 new tokens (the start token aside) make at most 3 words
        assert scores["summary_words"] <= 3 and 0 <= scores["lead_at_summary_length_rouge1"] <= 1
    from training.general_recipe import RECIPE

    saved = json.loads((root / "general" / "generation_config.json").read_text())
    assert saved["no_repeat_ngram_size"] == RECIPE["no_repeat_ngram_size"] == 5  # the base converter's is 3
    val = evaluate_general(
        root / "general", max_examples=1, max_new_tokens=2, split="val"
    )  # where settings are chosen
    assert set(val["sets"]) == {"bbc_summary val", "xsum val part"} and val["no_repeat_ngram_size"] == 5
    general_record = json.loads((root / "general" / "steersum.json").read_text())
    general_data = general_record["data_licenses"]
    assert "bbc_summary" in general_data
    from training.seq2seq import default_precision  # this machine's: the general model and the variants alike

    assert general_record["hyperparameters"]["bf16_weights"] == (default_precision() == "bf16-weights")
    for model in MODELS:
        folder = root / model.name
        record = json.loads((folder / "steersum.json").read_text())
        assert (record["variant"], record["method"]) == (model.variant, model.method)
        assert record["base_weights"]["license"] == "apache-2.0"  # carried from the converted base via general/
        assert record["upstream_data_licenses"] == general_data  # the weights derive from general/'s data too
        assert record["hyperparameters"]["max_steps"] == 1
        assert record["hyperparameters"]["bf16_weights"] == general_record["hyperparameters"]["bf16_weights"]
        assert (folder / "eval_report.json").is_file() and not list(folder.glob("checkpoint-*"))
        report = json.loads((folder / "eval_report.json").read_text())
        effect = report["control_sensitivity"]["effect"]
        assert all(v["difference"] == v["given"] - v["shuffled"] for v in effect.values())
        # every choice on val (the decoding rules, where the variant has them), reported once on test
        assert (report["split"], report["chosen_on"], record["chosen_on"]) == ("test", "val", "val")
        assert report["data_file"].endswith("test.jsonl") and (folder / "val_report.json").is_file()
        val_report = json.loads((folder / "val_report.json").read_text())
        assert val_report["split"] == "val" and val_report["data_file"].endswith("val.jsonl")
        assert ("constraints" in record["choices"]) == (model.variant != "tdsum")  # tdsum has no decoding rules
    # every evaluated model went into the quick run's own store (never the committed one), whatever its effect
    # (a plumbing check): the int8 base, then one adapter per variant on it, under the budget (the real
    # MiniLM-BART sizes: 1 step changes no size)
    import store

    index = root / "store" / "index.json"
    assert [m.name for m in store.read_index(index)] == ["general", *(m.name for m in MODELS)]
    assert all(m.format == ("int8" if m.name == "general" else "lora") for m in store.read_index(index))
    assert {m.measure["split"] for m in store.read_index(index)} == {"val"}  # admitted on val
    assert (root / "general" / "general_val_report.json").is_file()
    assert store.budget_problems(index.parent) == [], store.file_sizes(index.parent)
    assert "store: general: stored (new)" in capsys.readouterr().out
    adapter = json.loads((root / "ccs-lora" / "adapter_config.json").read_text())
    assert (sorted(adapter["target_modules"]), adapter["r"]) == (["k_proj", "out_proj", "q_proj", "v_proj"], 16)
    readers = {}
    for row in read_jsonl(root / "data" / "persona" / "train.jsonl"):
        readers.setdefault(row["article_id"], set()).add(row["user"])
    assert {len(users) for users in readers.values()} == {5}  # the zoo's five readers per training article
    from hub_cards.card import build_card
    from variants import load_summarizer

    topic = root / next(m.name for m in MODELS if m.variant == "topic")
    card = build_card(topic, load_summarizer(topic)).content
    assert "all-MiniLM-L6-v2" in card and "for 1 steps" in card and "bart-large quality" in card  # says what it is
    from training.seq2seq import training_hardware

    record_file = topic / "steersum.json"
    record = json.loads(record_file.read_text())
    assert (
        record["hardware"]
        == json.loads((root / "general" / "steersum.json").read_text())["hardware"]
        == training_hardware()
    )
    assert f"It was trained on {training_hardware()}" in card
    record_file.write_text(
        json.dumps({**record, "hardware": "a GPU (NVIDIA H100 80GB HBM3)"})
    )  # the card reads the record
    assert "It was trained on a GPU (NVIDIA H100 80GB HBM3)" in build_card(topic, load_summarizer(topic)).content
    tdsum = root / "tdsum-tdsum"  # trained on scitldr only, from a general/ that saw bbc_summary
    tdsum_data = json.loads((tdsum / "steersum.json").read_text())["data_licenses"]
    assert set(general_data) - set(tdsum_data), (general_data, tdsum_data)
    tdsum_card = build_card(tdsum, load_summarizer(tdsum)).content
    assert all(
        f"| {name} (the base model's training data) | {general_data[name]} |" in tdsum_card
        for name in set(general_data) - set(tdsum_data)
    )
    assert "trained by SteerSum from pretrained weights under apache-2.0" in card
    capsys.readouterr()
    training_main(["zoo", "--quick", "--out", str(root)])  # rerun: everything is finished, nothing retrains
    out = capsys.readouterr().out
    assert out.count("done already") == 1 + len(MODELS) and "training" not in out.split("zoo:")[1].split("\n", 1)[1]


def test_each_model_gets_the_steps_its_own_shape_allows():
    """--minutes-per-model is minutes: topic's 384-token sources and ccs's 384/192 tokens are timed
    at their own shape, not at the 256/96 one (which once gave a 512-token model 22 minutes for a
    10-minute budget)."""
    from training.zoo_models import MODELS, Budget

    models = {m.variant: m for m in MODELS}
    budget = Budget(10, step_seconds={"8x384x96": 5.0, "8x384x192": 2.0, "8x256x96": 1.5})
    assert budget.steps(models["topic"]) == 10 * 60 // 5
    assert budget.steps(models["ccs"]) == 10 * 60 // 2
    assert budget.steps(models["tdsum"]) == budget.steps(models["persona"]) == 10 * 60 // 1.5
    # a step is timed at its batch too: --batch-size 32 needs its own timing; the general one keeps its recipe's 8
    wide = Budget(10, batch_size=32)
    assert (wide.key(models["ccs"]), wide.key(None)) == ("32x384x192", "8x256x128")
    assert Budget.for_quick().shape(models["persona"]) == (32, 8)  # the tiny budget overrides every model's lengths


def test_max_steps_replaces_the_time_budget(tmp_path):
    """``--max-steps`` (a GPU user's knob: minutes measured on a CPU say nothing there) gives every variant
    model that many steps, whatever its shape, and times nothing; a count below 1 is refused by name."""
    import pytest

    from training.__main__ import main as training_main
    from training.zoo_models import MODELS, Budget

    budget = Budget(35, max_steps=2000)
    assert {budget.steps(m) for m in MODELS} == {2000}
    with pytest.raises(SystemExit, match="--max-steps 0: must be 1 or more"):
        training_main(["zoo", "--max-steps", "0", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="--batch-size 0: must be 1 or more"):
        training_main(["zoo", "--batch-size", "0", "--out", str(tmp_path)])


def test_the_zoo_chooses_on_val_and_reports_once_on_test(tiny_topic_checkpoint, tmp_path, monkeypatch):
    """The decoding rules and γ are picked from val rows, then the model is evaluated once on test at the
    chosen settings (γ = 1 beside it). The scores are rigged by split, so that val and test would pick
    differently by construction: on val the rules raise the lower end of the STAS effect's interval by 0.05
    and γ = 2 by 0.1; on test the rules lower it and γ = 3 raises it. Every report and the record say where
    each choice was made."""
    import shutil
    from pathlib import Path

    import pytest

    import training.guidance
    import training.sensitivity
    from training.guidance import SWEEP_FILE, pick_default, sweep
    from training.name_words import name_words, training_documents
    from training.zoo_evaluation import VAL_REPORT, evaluate_model, pick_constraints
    from training.zoo_models import Budget
    from variants import get_variant, load_summarizer
    from variants.base import read_record
    from variants.classifier_free_guidance import STRENGTH_FIELD  # the record's field of the default γ

    model = tmp_path / "model"
    shutil.copytree(tiny_topic_checkpoint, model)
    data = tmp_path / "topic"
    data.mkdir()
    rows = get_variant("topic").evaluation.test_examples(3)
    for split in ("train", "val", "test"):  # train: the documents the document-names rule learns its names from
        (data / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    real, calls = training.sensitivity.evaluate_with_sensitivity, []
    best_guidance, rules = {"val": 2.0, "test": 3.0}, {"val": 0.05, "test": -0.05}

    def rigged(summarizer, records, data_file, *args, **kwargs):
        report = real(summarizer, records, data_file, *args, **kwargs)
        split, settings = Path(data_file).stem, summarizer.settings
        calls.append((split, settings.control_strength, settings.constraints))
        low = (0.1 if settings.control_strength == best_guidance[split] else 0.0) + (
            rules[split] if settings.constraints else 0
        )
        report["metrics"]["rouge1"] = 0.3  # no γ and no rule costs ROUGE
        # the document-words rule halves the summaries with an invented name on val, and doubles them on test
        report["metrics"]["has_unsupported"] = {"val": 0.2, "test": 0.4}[split] if settings.document_words else 0.3
        if settings.document_names and split == "val":  # and the document-names rule halves them again, on val
            report["metrics"]["has_unsupported"] /= 2
        report["metrics"]["ends_sentence"] = 0.9  # finished sentences, no repeated trigram and no doubled word
        report["metrics"]["repeated_trigram"] = 0.2  # gain nothing: a tie keeps those rules off
        report["metrics"]["doubled_word"] = report["metrics"]["altered_quote"] = 0.1
        sensitivity = report["control_sensitivity"]
        sensitivity["effect"]["stas"] = {"difference": low + 0.1, "ci_low": low, "ci_high": low + 0.2, "n": 3}
        sensitivity.setdefault("verdict", {})["stas"] = {"stands": True}
        return report

    monkeypatch.setattr(training.sensitivity, "evaluate_with_sensitivity", rigged)
    monkeypatch.setattr(training.guidance, "evaluate_with_sensitivity", rigged)
    summary = evaluate_model(model, data, Budget(0, max_eval_samples=3, guidance_sweep=(1.0, 2.0, 3.0)))

    # val chose the rules on and γ = 2, and every val evaluation came before the one on test
    swept = json.loads((model / SWEEP_FILE).read_text())
    assert (swept["split"], swept["chosen_on"], swept["default_guidance"]) == ("val", "val", 2.0)
    assert swept["data"].endswith("val.jsonl") and [r["guidance"] for r in swept["sweep"]] == [1.0, 2.0, 3.0]
    assert [c for c in calls if c[0] == "test"] == [("test", 2.0, True), ("test", 1.0, True)]  # once, γ = 1 beside
    assert calls.index(("test", 2.0, True)) == len(calls) - 2
    record = read_record(model)
    assert (record["chosen_on"], record["constraints"], record[STRENGTH_FIELD]) == ("val", True, 2.0)
    assert record["choices"] == {
        "constraints": {"value": True, "chosen_on": "val", "data": "topic/val.jsonl", "n_examples": 3},
        "guidance": {
            "value": 2.0,
            "swept": [1.0, 2.0, 3.0],
            "chosen_on": "val",
            "data": "topic/val.jsonl",
            "n_examples": 3,
        },
        "document_words": {"value": True, "chosen_on": "val", "data": "topic/val.jsonl", "n_examples": 3},
        "finish_sentences": {"value": False, "chosen_on": "val", "data": "topic/val.jsonl", "n_examples": 3},
        "no_repeat_trigrams": {"value": False, "chosen_on": "val", "data": "topic/val.jsonl", "n_examples": 3},
        "no_doubled_words": {"value": False, "chosen_on": "val", "data": "topic/val.jsonl", "n_examples": 3},
        "verbatim_quotes": {"value": False, "chosen_on": "val", "data": "topic/val.jsonl", "n_examples": 3},
        "document_names": {"value": True, "chosen_on": "val", "data": "topic/val.jsonl", "n_examples": 3},
    }
    settings = load_summarizer(model).settings
    assert (settings.control_strength, settings.constraints, settings.document_words) == (2.0, True, True)
    assert not settings.finish_sentences
    served = json.loads((model / "generation_config.json").read_text())
    assert served["document_words"] is True and served["document_names"] is True
    # the names it reads, from the training documents, in the generation config alone
    tokenizer = load_summarizer(model).tokenizer
    assert served["name_words"] == name_words(tokenizer, training_documents(data / "train.jsonl"))
    assert "name_words" not in record and settings.document_names
    report = json.loads((model / "eval_report.json").read_text())
    assert (report["split"], report["chosen_on"], report["choices"]) == ("test", "val", record["choices"])
    assert report["generation"] == settings.to_json() and "at_guidance_1" in report  # as served: the rules, γ = 2
    assert report["metrics"] == summary["metrics"] and summary["chosen_on"] == "val"
    assert report["control_sensitivity"]["effect"]["stas"]["ci_low"] == -0.05  # test's rows at val's choice, reported
    assert report["metrics"]["has_unsupported"] == 0.4  # reported as test measured it, though val chose the rule
    admitted = json.loads((model / VAL_REPORT).read_text())
    assert admitted["split"] == "val" and admitted["control_sensitivity"]["effect"]["stas"]["ci_low"] == pytest.approx(
        0.15
    )

    # the same rule on the test rows would have chosen otherwise: the rules off, then γ = 3
    summarizer = load_summarizer(model)
    from training.data import load_examples

    test = load_examples(data / "test.jsonl", summarizer.variant, summarizer.assets, 3)
    summarizer.settings = summarizer.settings.but(control_strength=1.0, constraints=False)
    off = rigged(summarizer, test, str(data / "test.jsonl"))
    summarizer.settings = summarizer.settings.but(constraints=True)
    on = rigged(summarizer, test, str(data / "test.jsonl"))
    assert not pick_constraints(off, on, ["stas"], [])
    summarizer.settings = summarizer.settings.but(constraints=False)
    on_test, _ = sweep(summarizer, test, str(data / "test.jsonl"), (1.0, 2.0, 3.0), known={1.0: off})
    assert pick_default(on_test) == 3.0

    # chosen again on val (a stored model served at γ = 2), where γ = 1 now measures best: γ = 1 is its
    # default from then on, not the γ it was served with
    best_guidance["val"] = 1.0
    evaluate_model(model, data, Budget(0, max_eval_samples=3, guidance_sweep=(1.0, 2.0, 3.0)))
    assert read_record(model)[STRENGTH_FIELD] == 1.0
    assert load_summarizer(model).settings.control_strength == 1.0


def test_a_default_kept_from_the_command_line_records_the_split_it_was_chosen_on(
    tiny_topic_checkpoint, tmp_path, caplog
):
    """``python -m training evaluate --guidance G --save-default-guidance`` keeps in the record where γ was
    chosen (the data file's split); a default kept from a test file is recorded as such, with a warning."""
    import shutil

    from training.__main__ import main as training_main
    from variants import get_variant
    from variants.base import read_record

    model = tmp_path / "model"
    shutil.copytree(tiny_topic_checkpoint, model)
    rows = get_variant("topic").evaluation.test_examples(2)
    for split in ("val", "test"):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    flags = ["--no-control-sensitivity", "--max-samples", "2", "--save-default-guidance", "--model", str(model)]
    training_main(["evaluate", *flags, "--data", str(tmp_path / "val.jsonl"), "--guidance", "2"])
    record = read_record(model)
    assert record["chosen_on"] == "val" and "kept as the default" not in caplog.text
    assert record["choices"]["guidance"] == {
        "value": 2.0,
        "chosen_on": "val",
        "data": f"{tmp_path.name}/val.jsonl",
        "n_examples": 2,
    }
    training_main(["evaluate", *flags, "--data", str(tmp_path / "test.jsonl"), "--guidance", "1.5"])
    record = read_record(model)
    assert record["chosen_on"] == "test" and record["choices"]["guidance"]["value"] == 1.5
    assert "γ 1.5 kept as the default from an evaluation on" in caplog.text


def test_a_text_rule_is_taken_only_where_it_improves_its_share_at_little_cost():
    from training.zoo_evaluation import pick_text_rule

    def report(unsupported, rouge1, effect, ends=0.8, repeated=0.3):
        return {
            "metrics": {
                "has_unsupported": unsupported,
                "rouge1": rouge1,
                "ends_sentence": ends,
                "repeated_trigram": repeated,
            },
            "control_sensitivity": {"effect": {"stas": {"difference": effect}}, "verdict": {}},
        }

    def words(off, on, *metrics):
        return pick_text_rule("document_words", off, on, *metrics)

    off = report(0.30, 0.40, 0.20)
    assert words(off, report(0.10, 0.39, 0.19), ["stas"], [])  # fewer, within 0.02 of both
    assert not words(off, report(0.30, 0.40, 0.20), ["stas"], [])  # a tie keeps it off
    assert not words(off, report(0.10, 0.37, 0.20), ["stas"], [])  # 0.03 ROUGE-1 lost
    assert not words(off, report(0.10, 0.40, 0.17), ["stas"], [])  # 0.03 of the effect lost
    # a lower-is-better lead metric: its effect is negative, and must not rise by more than 0.02
    errors = {"control_sensitivity": {"effect": {"length_error": {"difference": -0.50}}, "verdict": {}}}
    off_error = {**off, **errors}
    worse = {**report(0.10, 0.40, 0.0), "control_sensitivity": {"effect": {"length_error": {"difference": -0.45}}}}
    worse["control_sensitivity"]["verdict"] = {}
    assert not words(off_error, worse, ["length_error"], ["length_error"])
    # finished sentences are for ends_sentence, where higher is better; the share of names is not theirs to move
    assert pick_text_rule("finish_sentences", off, report(0.30, 0.39, 0.20, ends=0.95), ["stas"], [])
    assert not pick_text_rule("finish_sentences", off, report(0.10, 0.40, 0.20, ends=0.80), ["stas"], [])
    assert not pick_text_rule("finish_sentences", off, report(0.30, 0.37, 0.20, ends=1.00), ["stas"], [])
    # no repeated trigram, at the cost of invented names (entity on val: 0.125 -> 0.438): another share lost
    assert pick_text_rule("no_repeat_trigrams", off, report(0.31, 0.40, 0.20, repeated=0.0), ["stas"], [])
    assert not pick_text_rule("no_repeat_trigrams", off, report(0.33, 0.40, 0.20, repeated=0.0), ["stas"], [])
    # no doubled word is for doubled_word; a report without that share (measured before it was scored) keeps it off
    doubled = {**off, "metrics": {**off["metrics"], "doubled_word": 0.2}}
    fewer = report(0.30, 0.40, 0.20)
    fewer["metrics"]["doubled_word"] = 0.05
    assert pick_text_rule("no_doubled_words", doubled, fewer, ["stas"], [])
    assert not pick_text_rule("no_doubled_words", off, fewer, ["stas"], [])
    at_most = report(
        0.015, 0.40, 0.20
    )  # 3 of 200 summaries, then 7: a loss of 0.02 exactly, as float 0.020000000000000004
    assert pick_text_rule("no_repeat_trigrams", at_most, report(0.035, 0.40, 0.20, repeated=0.0), ["stas"], [])
