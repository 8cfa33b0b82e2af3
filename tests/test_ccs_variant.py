"""CCS variant (CCSBench, Ding et al.): the hard prompt for every control subset, bad controls, the
controlled extractive baseline, live scores, the control-labelled data builder, and a tiny random
Flan-T5 architecture with a LoRA adapter (only the adapter trains; saved, reloaded both peft ways
with identical logits; merged = unmerged; exported as an adapter whose card snippet runs).
The metric functions themselves are tested in tests/test_ccs.py."""

import itertools
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import variants.ccs as ccs_module
from metrics.ccs import delta_fkgl, group_metrics, length_bins, length_pcc, paper_metrics
from metrics.io import read_jsonl
from metrics.text import sentences
from variants import ControlError, get_variant
from variants.ccs import EXAMPLE_DOCUMENT, CCSVariant, content_keywords, controlled_extract, missing_keywords
from variants.ccs.data import Labeller, build_source, build_test_set, examples_for, read_pairs

ROOT = Path(__file__).resolve().parents[1]
CONTROL_ORDER = ("length", "keywords", "readability", "focus")
FULL = {"length": 1, "keywords": ["multi-scale", "recall"], "readability": "high", "focus": "conceptual"}
# The paper's own focus examples (App. B.2): the same CRF study written empirical- and conceptual-focused.
EMPIRICAL = (
    "This study evaluates the performance of a modified CRF-based POS tagging system for Manipuri, incorporating "
    "new features and the Reduplicated Multiword Expression (RMWE) feature. The experiment shows that the new "
    "CRF system achieves a Recall of 78.22%, Precision of 73.15%, and F-measure of 75.60%. With the inclusion "
    "of RMWE as a feature, the results improve to a Recall of 80.20%, Precision of 74.31%, and F-measure of 77.14%."
)
CONCEPTUAL = (
    "This paper provides an in-depth overview of the updated feature selection approach in CRF for Manipuri POS "
    "tagging. It highlights the significance of optimal feature selection in enhancing CRF performance and "
    "discusses the introduction of new features, including the Reduplicated Multiword Expression (RMWE), which "
    "is crucial for accurately tagging Manipuri language POS due to its rich occurrence of RMWE."
)


@pytest.fixture(scope="module")
def ccs():
    return get_variant("ccs")


# --- the hard prompt --------------------------------------------------------------------------
def test_full_prompt_is_the_papers_attribute_lines_then_the_document(ccs):
    prepared = ccs.prepare(EXAMPLE_DOCUMENT, ccs.validate(FULL), "lora")
    # App. C.4's control block: Length as a word range, quoted keywords, Readability, and the focus as
    # "Empirical Focus Level" (conceptual = low, Sec. 3.1).
    assert prepared.text == (
        'Summarize the document.\nLength: 51-100 words\nKeywords: "multi-scale", "recall"\n'
        "Readability: high\nEmpirical Focus Level: low\nDocument: " + EXAMPLE_DOCUMENT
    )
    assert prepared.extra == {} and prepared.notices == []
    assert ccs.prepare(EXAMPLE_DOCUMENT, FULL, "prompt").text == prepared.text  # one prompt for both methods


@pytest.mark.parametrize(
    "subset",
    [s for n in range(5) for s in itertools.combinations(CONTROL_ORDER, n)],
    ids=lambda s: "+".join(s) or "none",
)
def test_every_control_subset_builds_a_valid_prompt(ccs, subset):
    controls = ccs.validate({name: FULL[name] for name in subset})
    lines = ccs.prepare(EXAMPLE_DOCUMENT, controls, "lora").text.split("\n")
    assert lines[0] == "Summarize the document." and lines[-1] == f"Document: {EXAMPLE_DOCUMENT}"
    attributes = [line.split(": ", 1) for line in lines[1:-1]]
    names = {
        "Length": "length",
        "Keywords": "keywords",
        "Readability": "readability",
        "Empirical Focus Level": "focus",
    }
    assert [names[a] for a, _ in attributes] == list(subset)  # exactly the requested ones, in the paper's order
    assert all(value.strip() for _, value in attributes)


def test_bad_controls_name_what_is_allowed(ccs):
    for bad in (5, -1, "two"):
        with pytest.raises(ControlError, match=re.escape("[0, 4]")):
            ccs.validate({"length": bad})
    with pytest.raises(ControlError, match="allowed: normal, high"):
        ccs.validate({"readability": "low"})
    with pytest.raises(ControlError, match="allowed: conceptual, empirical"):
        ccs.validate({"focus": "theory"})
    with pytest.raises(ControlError, match="allowed: length, keywords, readability, focus"):
        ccs.validate({"tone": "formal"})
    with pytest.raises(ControlError, match="no word to match"):
        ccs.validate({"keywords": ["--"]})
    with pytest.raises(ControlError, match="allowed: lora, prompt"):
        ccs.prepare(EXAMPLE_DOCUMENT, {}, "adapter")
    assert ccs.validate({"keywords": " recall , precision "}) == {"keywords": ["recall", "precision"]}


def test_keywords_absent_from_the_document_are_allowed_and_scored(ccs):
    controls = ccs.validate({"keywords": ["recall", "banana"]})
    prepared = ccs.prepare(EXAMPLE_DOCUMENT, controls, "lora")
    assert '"banana"' in prepared.text and "banana" in prepared.notices[0] and "recall" not in prepared.notices[0]
    # "recall" counts inside a run of words the abstract has (metrics.support); "banana" nowhere
    scores = ccs.score("The new CRF system achieves a recall of 78.22%.", EXAMPLE_DOCUMENT, controls)
    assert scores["keyword_sr"].value == 0.5 and scores["keyword_sr"].details == {"recall": True, "banana": False}
    [summary] = ccs.baseline().summarize([EXAMPLE_DOCUMENT], [controls])
    assert "recall" in summary.text and any("banana" in notice for notice in summary.notices)


# --- live scores ------------------------------------------------------------------------------
def test_scores_by_hand(ccs):
    summary = "The experiment shows that the new CRF system achieves a recall of 78.22%."
    controls = ccs.validate(
        {"length": 1, "keywords": ["recalls", "precision"], "readability": "normal", "focus": "empirical"}
    )
    scores = ccs.score(summary, EXAMPLE_DOCUMENT, controls, reference="The new CRF system achieves a recall.")
    # 13 whitespace words: bin 0, one bin below the requested bin 1.
    assert (scores["length_hit"].value, scores["length_error"].value) == (0.0, 1.0)
    assert scores["length_hit"].details == {"requested_bin": 1, "produced_bin": 0, "words": 13}
    # "recalls" and "recall" share the Porter stem "recal"; "precision" is absent: 1 of 2.
    assert scores["keyword_sr"].value == 0.5
    # The paper's empirical example sentence (App. B.2) is read as empirical.
    assert scores["focus_match"].value == 1.0
    assert scores["fkgl_normal"].value == scores["fkgl"].value and "fkgl_high" not in scores
    # ROUGE-L: 14 summary tokens ("78.22%" gives "78", "22"), 7 reference tokens, all 7 in order in the
    # summary: P = 7/14, R = 7/7, F1 = 2 * 0.5 * 1 / 1.5 = 2/3.
    assert scores["rougeL"].value == pytest.approx(2 / 3, abs=1e-6)
    assert all(score.meaning for score in scores.values())
    assert ccs.evidence("Recalls rose; multi-scale windows helped.", {"keywords": ["recall", "multi-scale"]}) == [
        "Recalls",
        "multi",
        "scale",
    ]


def test_paper_metrics_per_composition_by_hand():
    rows = [
        {"controls": {"length": 0}, "summary": "short " * 10, "rougeL": 0.2},
        {"controls": {"length": 1}, "summary": "long " * 60, "rougeL": 0.4},
        {"controls": {"length": 1, "readability": "high"}, "summary": "Cats sit. Dogs run.", "rougeL": None},
    ]
    metrics = paper_metrics(rows)
    assert set(metrics) == {"all", "length", "length+readability"}
    # Requested bins 0, 1, 1; produced 0 (10 words), 1 (60 words), 0 (4 words): MAD = (0 + 0 + 1) / 3.
    assert metrics["all"]["length_mad"] == pytest.approx(1 / 3, abs=1e-6)
    assert metrics["length"]["length_mad"] == 0.0 and metrics["length"]["length_pcc"] == pytest.approx(1.0)
    assert metrics["all"]["rougeL"] == pytest.approx(0.3) and metrics["length+readability"]["rougeL"] is None
    assert metrics["all"]["delta_fkgl"] is None  # no "normal" summary: ΔFKGL undefined


def test_evaluation_report_carries_the_papers_corpus_columns_and_each_composition(ccs):
    from training.evaluate import evaluate

    records = ccs.evaluation.test_examples(6)
    records = [
        {**r, "controls": {k: r["controls"][k] for k in keys}}
        for r, keys in zip(records, itertools.cycle([("length",), ("length", "keywords"), ("readability", "focus")]))
    ]
    report = evaluate(ccs.baseline(), records, "test.jsonl", batch_size=3)
    expected = paper_metrics(report["examples"])
    for name in ("length_pcc", "delta_fkgl", "focus_f1"):  # Table 4 columns that are not per-example means
        assert report["metrics"][name] == expected["all"][name]
    assert report["metrics"]["length_error"] == pytest.approx(expected["all"]["length_mad"])  # mean error = MAD
    assert set(report["breakdown"]) == {"length", "length+keywords", "readability+focus"}
    assert report["breakdown"]["length"]["n"] == 2


# --- the baseline -----------------------------------------------------------------------------
def test_baseline_meets_the_length_bin_and_covers_the_keywords(ccs, data_dir):
    baseline = ccs.baseline()
    documents = [r["source"] for r in read_jsonl(data_dir / "cnndm_sample" / "val.jsonl")[:3]]
    for document, length in itertools.product(documents, range(4)):
        keywords = content_keywords(document, 2)[::-1]  # not simply the lead sentence's words
        for extra in ({}, {"readability": "high", "focus": "empirical"}):
            controls = {"length": length, "keywords": keywords, **extra}
            [summary] = baseline.summarize([document], [controls])
            assert length_bins([summary.text]) == [length], (length, len(summary.text.split()))
            assert missing_keywords(summary.text, keywords) == [] or summary.notices
            # extractive: every sentence but at most one cut to fit is a sentence of the document
            assert sum(s not in document for s in sentences(summary.text)) <= 1
    [short] = baseline.summarize(["One short sentence here."], [{"length": 3}])
    assert short.text == "One short sentence here." and "fewer than" in short.notices[0]


# --- the data builder -------------------------------------------------------------------------
def test_data_builder_labels_match_hand_checked_examples():
    # FKGL of the paper's empirical example is 12.5 (3 sentences; textstat's own function reads 7.5,
    # counting "78.22%" as a sentence end) and of its conceptual one 17.7; a corpus median of 15 puts
    # them on either side. 67 and 59 words: both bin 1 (51-100 words).
    labeller = Labeller(idf={}, fkgl_median=15.0)
    document = EMPIRICAL + " " + CONCEPTUAL
    pairs = [
        {"id": "e", "document": document, "reference": EMPIRICAL, "focus": "empirical"},
        {"id": "c", "document": document, "reference": CONCEPTUAL},
    ]
    empirical, conceptual = labeller.attributes(pairs, random.Random(0))
    assert (empirical["length"], empirical["readability"], empirical["focus"]) == (1, "high", "empirical")
    assert (conceptual["length"], conceptual["readability"]) == (1, "normal")
    assert "focus" not in conceptual  # a reference without a focus target gets no label (no judge labels it)
    # Keywords rank by count x idf, only words also in the document: "recall" 2 x 2.0 = 4, "precision"
    # 1 x 3.0 = 3, "rmwe" 2 x 1.0 = 2, "improves" 1 x 0.5 (stem "improv", as the document's "improve");
    # "rise" 1 x 0.5 is not in the document.
    labeller.idf = {"rmwe": 1.0, "recall": 2.0, "precision": 3.0, "improves": 0.5, "rise": 0.5}
    short = {
        "id": "s",
        "document": document,
        "reference": "RMWE improves recall; recall and precision rise with RMWE.",
    }
    assert labeller.keywords(short, 3) == ["recall", "precision", "rmwe"]
    assert labeller.keywords(short, 5) == ["recall", "precision", "rmwe", "improves"]
    # Given keywords (CTRLsum's oracle words) are kept when in both texts, dropped otherwise.
    given = {"id": "g", "document": document, "reference": EMPIRICAL, "keywords": ["Manipuri", "banana", "recall"]}
    assert labeller.keywords(given, 3) == ["Manipuri", "recall"]


def test_focus_training_targets_are_the_cue_rule_parts_never_the_judges_labels(monkeypatch):
    import metrics.focus_classifier
    from metrics.focus_labels import focus_parts
    from variants.sources import load_source

    def no_judge(*args, **kwargs):
        raise AssertionError("the focus judge labelled training data")

    monkeypatch.setattr(metrics.focus_classifier, "default_focus_classifier", no_judge)
    built = build_source("scitldr", limit=8)
    parts = {
        f"{r['id']}-{label}": text
        for r in load_source("scitldr", "train")[:8]
        for label, text in focus_parts(r["source_sentences"]).items()
    }
    focused = [e for e in built["train"] if "focus" in e["controls"]]
    assert focused and {e["id"].rsplit("-", 1)[0] for e in focused} <= set(parts)
    for e in focused:  # the target is the part the focus names, and only such targets carry a focus
        assert e["target"] == parts[e["id"].rsplit("-", 1)[0]] and e["id"].rsplit("-", 1)[0].endswith(
            e["controls"]["focus"]
        )


def test_long_repeats_repeat_only_train_examples_asking_past_bin_0():
    once, thrice = build_source("scitldr", limit=8), build_source("scitldr", limit=8, long_repeats=3)
    asks_long = [e["id"] for e in once["train"] if e["controls"].get("length", 0) > 0]
    assert asks_long  # the focus parts of the first 8 abstracts include targets past 50 words
    counts = {e["id"]: 0 for e in once["train"]}
    for e in thrice["train"]:
        counts[e["id"]] += 1
    assert {i for i, n in counts.items() if n == 3} == set(asks_long) and set(counts.values()) == {1, 3}
    assert thrice["val"] == once["val"] and thrice["test"] == once["test"]


def test_examples_are_single_attributes_and_compositions():
    attributes = {"length": 1, "keywords": ["recall"], "readability": "high", "focus": "empirical"}
    pair = {"id": "p", "document": "d", "reference": "r"}
    train = examples_for(pair, attributes, "train", "scitldr", random.Random(0))
    assert [e["composition"] for e in train[:4]] == ["length", "keywords", "readability", "focus"]
    assert len(train) == 5 and train[4]["composition"].count("+") in (1, 2)  # 2 or 3 attributes (Sec. 3.3)
    assert all(e["controls"] == {k: attributes[k] for k in e["composition"].split("+")} for e in train)
    [test] = examples_for(pair, attributes, "test", "scitldr", random.Random(0))
    assert test["controls"] == attributes and test["id"] == "p-length+keywords+readability+focus"


def test_builder_is_deterministic_and_splits_macsum_by_document(tmp_path, capsys):
    from training.__main__ import main as training_main

    assert build_source("cnndm_sample", seed=3, limit=4) == build_source("cnndm_sample", seed=3, limit=4)
    splits = read_pairs("macsum_doc", seed=0)
    docs = {split: {row["id"].rsplit("-r", 1)[0] for row in rows} for split, rows in splits.items()}
    assert not (docs["train"] & docs["val"] or docs["train"] & docs["test"] or docs["val"] & docs["test"])
    assert len(docs["train"]) == round(0.6 * sum(map(len, docs.values())))
    training_main(["build-data", "ccs", "--out", str(tmp_path), "--sources", "cnndm_sample", "--limit", "3"])
    printed = capsys.readouterr().out
    assert "test.jsonl: 12 examples (scitldr test, 6 targets x 2 readability levels)" in printed
    for record in read_jsonl(tmp_path / "test.jsonl"):
        assert set(record["controls"]) == set(CONTROL_ORDER)
        assert missing_keywords(record["target"], record["controls"]["keywords"]) == []
        assert length_bins([record["target"]]) == [record["controls"]["length"]]


# --- the test set: a control-blind system cannot score like a controlled one ------------------
@pytest.fixture(scope="module")
def test_set():
    from conftest import whole_mirror

    from variants import sources

    sources.set_data_dir(whole_mirror())
    try:
        return build_test_set()
    finally:
        sources.set_data_dir(None)


@pytest.mark.full_data
def test_test_set_varies_length_and_pairs_readability_within_a_document(test_set):
    lengths = [e["controls"]["length"] for e in test_set]
    assert len(set(lengths)) >= 4  # bins 0-4 occur (the old test set asked bin 0 of every example)
    assert length_pcc(lengths, [length_bins([e["target"]])[0] for e in test_set]) == pytest.approx(1.0)
    for normal, high in zip(test_set[::2], test_set[1::2]):  # adjacent pairs: same document, target, controls
        assert (normal["controls"]["readability"], high["controls"]["readability"]) == ("normal", "high")
        assert normal["pair"] == high["pair"] and normal["document"] == high["document"]
        assert {**normal["controls"], "readability": "high"} == high["controls"] and normal["target"] == high["target"]
    # a system blind to readability (here: the document itself) gets ΔFKGL 0 exactly, not a median-split artefact
    texts = [e["document"] for e in test_set]
    assert delta_fkgl(texts, [e["controls"]["readability"] for e in test_set]) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.full_data
def test_focus_targets_are_the_abstracts_two_parts_not_the_judges_labels(test_set, monkeypatch):
    by_document = {}
    for e in test_set:
        by_document.setdefault(e["document"], {})[e["controls"]["focus"]] = e["target"]
    assert all(set(parts) == {"conceptual", "empirical"} for parts in by_document.values())
    document, parts = next(iter(by_document.items()))
    assert all(sentence in document for part in parts.values() for sentence in sentences(part))
    assert parts["conceptual"] != parts["empirical"]

    def no_judge():
        raise AssertionError("the focus judge labelled a test target or chose a baseline sentence")

    import metrics.ccs
    import metrics.focus_classifier

    for module in (metrics.focus_classifier, metrics.ccs, ccs_module):  # everywhere the judge is reachable from
        monkeypatch.setattr(module, "default_focus_classifier", no_judge)
    assert build_test_set()[:8] == test_set[:8]
    [summary] = CCSVariant().baseline().summarize([EMPIRICAL + " " + CONCEPTUAL], [{"focus": "empirical"}])
    assert summary.text


def test_baseline_obeys_readability_better_than_when_blind_to_it_and_leaves_focus_alone(test_set):
    sample = test_set[:200]
    blind = [
        controlled_extract(e["document"], {k: e["controls"][k] for k in ("length", "keywords")})[0] for e in sample
    ]
    baseline = [
        s.text
        for s in CCSVariant().baseline().summarize([e["document"] for e in sample], [e["controls"] for e in sample])
    ]
    variant = CCSVariant()  # rows as evaluate() writes them: each summary's scores against its document

    def rows(texts):
        return [
            {
                "summary": t,
                "controls": e["controls"],
                "rougeL": None,
                **{n: v.value for n, v in variant.score(t, e["document"], e["controls"]).items()},
            }
            for t, e in zip(texts, sample)
        ]

    blind_metrics, baseline_metrics = group_metrics(rows(blind)), group_metrics(rows(baseline))
    # common words, not FKGL, rank the sentences: 0.562 on these 200 (docs/log.md)
    assert blind_metrics["delta_fkgl"] == pytest.approx(0.0, abs=1e-9) and baseline_metrics["delta_fkgl"] > 0.3
    # no rule reads focus (position is what the judge learned): asking the other focus changes nothing
    e = sample[0]
    other = {**e["controls"], "focus": next(f for f in ("conceptual", "empirical") if f != e["controls"]["focus"])}
    assert controlled_extract(e["document"], other) == controlled_extract(e["document"], e["controls"])


# --- LoRA on a tiny random Flan-T5 ----------------------------------------------------------------
def _batch(tokenizer):
    return tokenizer(
        ["Summarize the document.\nLength: 0-50 words\nDocument: We propose a tagger."],
        text_target=["A tagger."],
        return_tensors="pt",
    )


def test_only_lora_parameters_change_in_training(tmp_path, capsys):
    from training.adapter import AdapterArguments
    from training.seq2seq import DataArguments
    from variants.ccs.train import PAPER_DEFAULTS, Arguments, build

    (tmp_path / "train.jsonl").write_text("{}\n")
    adapter = AdapterArguments(
        **{**{k: v for k, v in PAPER_DEFAULTS.items() if k.startswith("adapter_")}, "adapter_rank": 4}
    )
    model, tokenizer, run = build(
        Arguments(), DataArguments(train_file=str(tmp_path / "train.jsonl"), preset="tiny"), adapter
    )
    assert (run.lora.rank, run.lora.alpha, run.lora.targets) == (4, 32, ["q", "v"])
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in name for name in trainable)
    # T5's q and v projections only (peft's default for T5), A and B for each: 2 layers x (encoder self,
    # decoder self, decoder cross) attention = 6 blocks x 2 projections x 2 matrices.
    assert len(trainable) == 24 and all(re.search(r"\.(q|v)\.lora_[AB]\.", name) for name in trainable)
    share = run.parameters["trainable_share"]
    assert f"({100 * share:.4f}%)" in capsys.readouterr().out and 0 < share < 0.1
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)  # every parameter offered to the optimizer
    model.train()
    for _ in range(2):
        model(**_batch(tokenizer)).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    changed = {name for name, p in model.named_parameters() if not torch.equal(p, before[name])}
    assert changed == trainable


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, data_dir):
    """A tiny LoRA checkpoint trained for 3 steps at a high learning rate (so the adapter is far from
    its zero start), with ``--merge``."""
    from training.__main__ import main as training_main

    root = tmp_path_factory.mktemp("ccs")
    rows = read_jsonl(data_dir / "scitldr" / "dev.jsonl")[:8]
    data = root / "train.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "id": r["id"],
                    "document": r["source"],
                    "target": r["targets"][0],
                    "controls": {"length": 0, "readability": "high"},
                    "dataset": "scitldr",
                }
            )
            + "\n"
            for r in rows
        )
    )
    training_main(
        [
            "ccs",
            "--preset",
            "tiny",
            "--train-file",
            str(data),
            "--output-dir",
            str(root / "lora"),
            "--max-steps",
            "3",
            "--learning-rate",
            "0.05",
            "--per-device-train-batch-size",
            "4",
            "--max-target-length",
            "16",
            "--max-source-length",
            "256",
            "--adapter-targets",
            "q,k,v,o",
            "--report-to",
            "none",
            "--save-strategy",
            "no",
            "--merge",
        ]
    )
    return root / "lora"


def _logits(model, tokenizer):
    with torch.no_grad():
        return model.eval()(**_batch(tokenizer)).logits


def test_adapter_reloads_both_peft_ways_with_identical_logits_and_merges(checkpoint):
    from peft import AutoPeftModelForSeq2SeqLM, PeftModel
    from safetensors import safe_open
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    with safe_open(str(checkpoint / "adapter_model.safetensors"), framework="pt") as weights:
        assert all("lora_" in key for key in weights.keys())  # the adapter alone, no base weight
    adapter = json.loads((checkpoint / "adapter_config.json").read_text())
    base_dir = Path(adapter["base_model_name_or_path"])
    assert base_dir == (checkpoint / "tiny-preset-base").resolve() and (base_dir / "config.json").is_file()
    assert sorted(adapter["target_modules"]) == ["k", "o", "q", "v"] and adapter["task_type"] == "SEQ_2_SEQ_LM"
    record = json.loads((checkpoint / "steersum.json").read_text())
    assert record["lora"]["target_modules"] == ["q", "k", "v", "o"] and record["merged"] == "merged"

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    auto = _logits(AutoPeftModelForSeq2SeqLM.from_pretrained(checkpoint), tokenizer)  # base from the local folder
    explicit = _logits(
        PeftModel.from_pretrained(AutoModelForSeq2SeqLM.from_pretrained(base_dir), checkpoint), tokenizer
    )
    assert torch.equal(auto, explicit)
    adapter_effect = (auto - _logits(AutoModelForSeq2SeqLM.from_pretrained(base_dir), tokenizer)).abs().max()
    assert adapter_effect > 1e-2  # the trained adapter changes the output
    # Merged (W + BA alpha/r folded in) = the adapter applied, up to float32 rounding: (W + BA)x and
    # Wx + B(Ax) round differently, about 1e-5 on logits of magnitude 10-30.
    merged = _logits(AutoModelForSeq2SeqLM.from_pretrained(checkpoint / "merged"), tokenizer)
    assert (merged - auto).abs().max() < min(1e-4, adapter_effect / 100)


def test_variant_loads_the_adapter_and_the_merged_model(checkpoint, data_dir):
    from variants import load_summarizer

    document = read_jsonl(data_dir / "scitldr" / "test.jsonl")[0]["source"]
    for folder in (checkpoint, checkpoint / "merged"):
        summarizer = load_summarizer(folder)
        assert summarizer.variant.id == "ccs" and summarizer.method == "lora"
        [summary] = summarizer.summarize(
            [document], [{"length": 0, "keywords": ["banana"]}], max_new_tokens=4, num_beams=1
        )
        assert isinstance(summary.text, str) and any("banana" in notice for notice in summary.notices)


def test_export_as_an_adapter_whose_card_snippet_runs(checkpoint, tmp_path, monkeypatch):
    from conftest import add_to_cache
    from huggingface_hub import ModelCard

    # The tiny base is a local folder: the export needs the Hub id it would have, found in the local cache
    # (tests/test_publishing.py).
    from huggingface_hub import constants as hub_constants

    from hub_cards.export import export_checkpoint

    add_to_cache(tmp_path / "hub-cache", "org/tiny-t5", checkpoint / "tiny-preset-base")
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    out = export_checkpoint(checkpoint, tmp_path / "repo", repo_id="org/ccs-lora-tiny", base_model="org/tiny-t5")
    names = {p.name for p in out.iterdir()}
    assert {
        "adapter_config.json",
        "adapter_model.safetensors",
        "tokenizer.json",
        "steersum.json",
        "README.md",
    } <= names
    assert (
        "model.safetensors" not in names and "merged" not in names
    )  # the adapter alone; merged/ is its own checkpoint
    card = ModelCard.load(out / "README.md")
    assert card.data.library_name == "peft" and {"peft", "lora", "steersum-ccs"} <= set(card.data.tags)
    text = card.text
    assert "rank 8, alpha 32, dropout 0.1" in " ".join(text.split())  # steersum.json's LoRA settings
    assert "Empirical Focus Level: high" in text and "**Test model.**" in text and "Not evaluated" in text
    usage = text.split("\n## Usage\n", 1)[1]
    code = re.search(r"```python\n(.*?)```", usage, re.S).group(1).replace("org/ccs-lora-tiny", str(out))
    code = code.replace("num_beams=4", "num_beams=1")
    adapter = json.loads((out / "adapter_config.json").read_text())
    adapter["base_model_name_or_path"] = str(checkpoint / "tiny-preset-base")  # offline stand-in for org/tiny-t5
    (out / "adapter_config.json").write_text(json.dumps(adapter))
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # transformers + peft, no SteerSum
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("\n") == 1  # the summary


def test_the_retired_lora_flags_are_hidden_aliases_of_the_adapter_flags():
    import warnings

    from transformers import HfArgumentParser

    from training.adapter import AdapterArguments
    from variants.ccs.train import PAPER_DEFAULTS, Arguments, LoraSettings

    parser = HfArgumentParser((Arguments, AdapterArguments))
    parser.set_defaults(**{k: v for k, v in PAPER_DEFAULTS.items() if k.startswith("adapter_")})
    assert "--adapter-rank" in parser.format_help() and "--lora-r" not in parser.format_help()
    own, adapter = parser.parse_args_into_dataclasses(["--adapter-alpha", "64"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new flags alone: no warning
        assert LoraSettings.of(own, adapter) == LoraSettings(8, 64, 0.1, "q,v")  # ccs's defaults, alpha given
    own, adapter = parser.parse_args_into_dataclasses(["--lora-r", "16", "--lora-target-modules", "q_proj,v_proj"])
    with pytest.warns(FutureWarning, match="--lora-r is deprecated: use --adapter-rank"):
        lora = LoraSettings.of(own, adapter)
    assert lora == LoraSettings(16, 32, 0.1, "q_proj,v_proj")  # what the zoo's old flags asked for
    with pytest.raises(ValueError, match=r"--adapter-targets: unknown \['query'\]"):
        LoraSettings(target_modules="query")
