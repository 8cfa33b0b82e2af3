"""ROUGE-1/2/Lsum (metrics.rouge): hand-counted n-grams, the ROUGE-1 of Takeshita et al.'s Table 1,
stemming, sentence splitting for ROUGE-Lsum, several references, and bad input."""

import json

import pytest
from rouge_score import rouge_scorer

from metrics.__main__ import main as metrics_cli
from metrics.io import DataError
from metrics.rouge import rouge, score_records


def test_hand_counted_rouge_1_and_2():
    # prediction: the cat sat on the mat today  (7 unigrams, 6 bigrams)
    # reference:  the cat is on the mat         (6 unigrams, 5 bigrams)
    # unigram overlap, min of counts: the 2 + cat 1 + on 1 + mat 1 = 5 -> P = 5/7, R = 5/6
    #   F = 2PR / (P + R) = (50/42) / (65/42) = 10/13
    # bigram overlap: "the cat", "on the", "the mat" = 3 -> P = 3/6, R = 3/5, F = 0.3 / 0.55 = 6/11
    example = rouge(["The cat sat on the mat today."], [["The cat is on the mat."]])["examples"][0]
    assert example["rouge1_precision"] == pytest.approx(5 / 7)
    assert example["rouge1_recall"] == pytest.approx(5 / 6)
    assert example["rouge1"] == pytest.approx(10 / 13)
    assert example["rouge2_precision"] == pytest.approx(1 / 2)
    assert example["rouge2_recall"] == pytest.approx(3 / 5)
    assert example["rouge2"] == pytest.approx(6 / 11)


def test_rouge_1_of_the_rouge_k_papers_table_1():
    # Takeshita et al., Table 1: R-1 = 27.45 (hypothesis 1) and 26.09 (hypothesis 2). By hand, 25 reference
    # tokens; hypothesis 1 has 26 tokens, 7 shared (to x2, the, problem, data, deep, learning): P = 7/26,
    # R = 7/25, F = 14/51 = 27.45 %; hypothesis 2 has 21, 6 shared (to, the, hawaiian, problem, a, hybrid):
    # P = 6/21, R = 6/25, F = 12/46 = 26.09 %.
    reference = (
        "A novel, hybrid deep learning approach provides the best solution to a limited-data problem "
        "(which is important to the conservation of the Hawaiian language)"
    )
    hypotheses = [
        "We propose two methods to solve the transliteration problem automatically, given that there "
        "were not enough data to train an end-to-end deep learning model.",
        "We propose two methods to solve the Hawaiian orthography transliteration problem automatically "
        "using finite state transducers and a hybrid neural network.",
    ]
    examples = rouge(hypotheses, [reference, reference])["examples"]
    assert [round(100 * e["rouge1"], 2) for e in examples] == [27.45, 26.09]
    assert examples[0]["rouge1"] == pytest.approx(14 / 51) and examples[1]["rouge1"] == pytest.approx(12 / 46)


def test_porter_stemming():
    # cats -> cat, running -> run, runs -> run: prediction {cat, run}, reference {the, cat, run}
    # P = 2/2, R = 2/3, F = 2 * (2/3) / (5/3) = 0.8
    example = rouge(["Cats running"], ["The cat runs"])["examples"][0]
    assert (example["rouge1_precision"], example["rouge1_recall"]) == (1.0, pytest.approx(2 / 3))
    assert example["rouge1"] == pytest.approx(0.8)


def test_rouge_lsum_is_computed_over_sentences():
    prediction, reference = "The dog ran. The cat sat.", "The cat sat. The dog ran."
    # Per reference sentence, the union LCS with the prediction's sentences is the whole sentence
    # (3 + 3 tokens of 6): ROUGE-Lsum = 1. Unsplit, one LCS over both texts has only 3 tokens of 6: 0.5.
    assert rouge([prediction], [reference])["examples"][0]["rougeLsum"] == 1.0
    unsplit = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True).score(reference, prediction)
    assert unsplit["rougeLsum"].fmeasure == pytest.approx(0.5)


def test_best_reference_counts_and_corpus_is_the_mean():
    one = rouge(["The cat sat on the mat today."], [["The cat is on the mat."]])["examples"][0]
    best = rouge(
        ["The cat sat on the mat today.", "Stocks fell sharply."],
        [["Completely unrelated words here.", "The cat is on the mat."], "Stocks fell sharply."],
    )
    assert best["examples"][0] == one  # the unrelated first reference is ignored
    assert best["examples"][1]["rouge1"] == best["examples"][1]["rougeLsum"] == 1.0
    assert best["corpus"]["n"] == 2
    assert best["corpus"]["rouge1"] == pytest.approx((one["rouge1"] + 1.0) / 2)
    for key, value in best["corpus"].items():
        assert key == "n" or 0.0 <= value <= 1.0
    assert rouge([], [])["corpus"] == {"n": 0, **{k: None for k in best["corpus"] if k != "n"}}


def test_bad_input_is_named():
    with pytest.raises(DataError, match=r"predictions\[1\]: the prediction is empty"):
        rouge(["a summary", "  "], [["ref"], ["ref"]])
    with pytest.raises(DataError, match=r"references\[0\]: the list of references is empty"):
        rouge(["a summary"], [[]])
    with pytest.raises(DataError, match="differ in length"):
        rouge(["a", "b"], [["ref"]])
    good = {"prediction": "A summary.", "references": ["A reference."]}
    cases = [
        ({"references": ["r"]}, "data.jsonl:2: missing field 'prediction'"),
        ({"prediction": "", "references": ["r"]}, "data.jsonl:2: field 'prediction' is empty"),
        ({"prediction": "p", "references": []}, "data.jsonl:2: field 'references' is empty"),
        ({"prediction": "p", "references": ["r", " "]}, r"data.jsonl:2: field 'references'\[1\] is empty"),
        ({"prediction": "p", "references": [3]}, r"data.jsonl:2: field 'references'\[0\] must be a string"),
    ]
    for bad, message in cases:
        with pytest.raises(DataError, match=message):
            score_records([good, bad], source="data.jsonl")


def test_cli_scores_a_jsonl_file(tmp_path, capsys):
    path = tmp_path / "preds.jsonl"
    path.write_text(json.dumps({"prediction": "Stocks fell.", "references": "Stocks fell."}) + "\n")
    assert metrics_cli(["rouge", str(path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["metric"] == "rouge" and result["corpus"]["rouge2"] == 1.0
    path.write_text(json.dumps({"prediction": "Stocks fell.", "references": []}) + "\n")
    assert metrics_cli(["rouge", str(path)]) == 2
    assert f"{path}:1: field 'references' is empty" in capsys.readouterr().err
