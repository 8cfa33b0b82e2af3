"""CCSBench control metrics: every expected value is computed by hand in the comment beside it."""

import math

import pytest
import textstat

from metrics.ccs import (
    BIN_WIDTH,
    FOCUS,
    N_LENGTH_BINS,
    READABILITY,
    delta_fkgl,
    fkgl,
    focus_f1,
    keyword_success,
    length_bin,
    length_bin_words,
    length_bins,
    length_mad,
    length_pcc,
    score_records,
)
from metrics.io import DataError
from metrics.text import stem


def n_words(n: int) -> str:
    return " ".join(["word"] * n)


def test_constants_match_the_paper():
    # Sec. 3.1: five bins of 50 words; readability [normal, high]; focus low/high = conceptual/empirical.
    assert (BIN_WIDTH, N_LENGTH_BINS) == (50, 5)
    assert (READABILITY, FOCUS) == (("normal", "high"), ("conceptual", "empirical"))


def test_length_bins_by_hand():
    # Sec. 3.1 "Bin 0: 0-50 words; Bin 1: 51-100 words": bin = ceil(n / 50) - 1, clipped to 0..4.
    # 0 -> 0, 49 -> ceil(0.98)-1 = 0, 50 -> ceil(1)-1 = 0 (the paper puts 50 in bin 0), 51 -> 1,
    # 100 -> 1, 101 -> 2, 260 -> ceil(5.2)-1 = 5 -> clipped to the open-ended bin 4.
    counts = [0, 49, 50, 51, 100, 101, 260]
    assert length_bins([n_words(n) for n in counts]) == [0, 0, 0, 1, 1, 2, 4]
    assert length_bin(n_words(260)) == 4
    # Configurable: width 10, 3 bins: 25 -> ceil(2.5)-1 = 2; 35 -> 3 -> clipped to 2; 11 -> 1.
    assert length_bins([n_words(25), n_words(35), n_words(11)], bin_width=10, n_bins=3) == [2, 2, 1]
    # Words are whitespace tokens: a hyphenated compound is one word.
    assert length_bins(["state-of-the-art " * 51]) == [1]


def test_length_bin_words_for_prompts():
    assert [length_bin_words(b) for b in (0, 1, 4)] == ["0-50 words", "51-100 words", "more than 200 words"]


def test_length_mad_and_pcc_by_hand():
    # |0-0| + |1-2| + |2-2| + |4-1| = 0 + 1 + 0 + 3 = 4, over 4 pairs = 1.0
    assert length_mad([0, 1, 2, 4], [0, 2, 2, 1]) == 1.0
    # x = [0,1,2,3], y = [0,2,1,3]: both means 1.5; dx = [-1.5,-.5,.5,1.5], dy = [-1.5,.5,-.5,1.5];
    # sum dx*dy = 2.25 - .25 - .25 + 2.25 = 4; sum dx^2 = sum dy^2 = 5; r = 4 / 5 = 0.8
    assert length_pcc([0, 1, 2, 3], [0, 2, 1, 3]) == pytest.approx(0.8)
    assert length_pcc([0, 1, 2], [0, 1, 2]) == pytest.approx(1.0)
    # Undefined cases are NaN, not an exception: a constant side, or a single pair.
    assert math.isnan(length_pcc([2, 2, 2], [0, 1, 2]))
    assert math.isnan(length_pcc([1], [1]))
    with pytest.raises(ValueError):
        length_mad([1, 2], [1])


def test_keyword_success_stems_whole_tokens():
    # Porter: "running" -> "run" and "runs" -> "run", so the keyword "runs" is found in "running".
    assert stem("running") == stem("runs") == "run"
    result = keyword_success(
        [
            "The model keeps running fast.",
            "A start is made.",
            "We report state-of-the-art results.",
            "A network of neural units.",
        ],
        [["runs", "Model"], ["art"], ["state of the art"], ["neural network"]],
    )
    # "art" is not a token of "start"; "state-of-the-art" gives the tokens state/of/the/art in a row;
    # "neural network" must be contiguous and in order, which "network of neural" is not.
    assert result.found == [[True, True], [False], [True], [False]]
    assert result.all_found == [1, 0, 1, 0]
    # Paper's SR = found keywords / all keywords = (2 + 0 + 1 + 0) / 5 = 0.6;
    # summaries with all their keywords: 2 of 4 = 0.5.
    assert result.keyword_rate == pytest.approx(0.6)
    assert result.rate == 0.5


def test_keyword_success_without_keywords_is_not_counted():
    result = keyword_success(["anything", "the cat"], [[], ["cats"]])
    assert result.all_found == [None, 1]
    assert result.rate == 1.0 and result.keyword_rate == 1.0
    with pytest.raises(ValueError, match="no word tokens"):
        keyword_success(["x"], [["--"]])


def test_fkgl_by_hand_and_delta_sign():
    # FKGL = 0.39 * words/sentences + 11.8 * syllables/words - 15.59 (Kincaid et al., 1975).
    easy = "The cat sat on the mat."  # 6 words, 1 sentence, 6 syllables: 2.34 + 11.8 - 15.59 = -1.45
    # 5 words, 1 sentence, syllables com-pu-ta-tion-al 5 + lin-guis-tics 3 + in-ves-ti-gates 4
    # + prob-a-bil-is-tic 5 + rep-re-sen-ta-tions 5 = 22: 1.95 + 11.8 * 4.4 - 15.59 = 38.28
    hard = "Computational linguistics investigates probabilistic representations."
    assert textstat.syllable_count("probabilistic") == 5
    assert fkgl([easy, hard]) == pytest.approx([-1.45, 38.28])
    # δ = mean FKGL(normal) - mean FKGL(high) (Table 4: GPT-4 19.12 - 16.99 = 2.13): positive when the
    # "high readability" summaries are easier. Here 38.28 - (-1.45 + -1.45) / 2 = 39.73.
    assert delta_fkgl([hard, easy, easy], ["normal", "high", "high"]) == pytest.approx(39.73)
    assert delta_fkgl([easy, hard], ["normal", "high"]) == pytest.approx(-39.73)  # control ignored: negative
    assert math.isnan(delta_fkgl([easy], ["high"]))
    with pytest.raises(ValueError, match="allowed: normal, high"):
        delta_fkgl([easy], ["easy"])


def test_fkgl_counts_every_sentence_even_short_ones():
    # Sentences 3 (Punkt: "The cat sat." / "It ran." / "Dogs bark loudly at night."); words 3 + 2 + 5 = 10;
    # syllables the 1, cat 1, sat 1, it 1, ran 1, dogs 1, bark 1, loud-ly 2, at 1, night 1 = 11.
    # Kincaid: 0.39 * 10/3 + 11.8 * 11/10 - 15.59 = 1.30 + 12.98 - 15.59 = -1.31.
    text = "The cat sat. It ran. Dogs bark loudly at night."
    assert textstat.syllable_count(text) == 11 and textstat.lexicon_count(text) == 10
    assert fkgl([text]) == pytest.approx([-1.31])
    # textstat 0.7.13 does not count "It ran." (two words): 0.39 * 10/2 + 12.98 - 15.59 = -0.66.
    assert textstat.flesch_kincaid_grade(text) == pytest.approx(-0.66)
    assert fkgl(["", "..."]) == [0.0, 0.0]  # no word, no grade


def test_focus_f1_by_hand():
    requested = ["conceptual", "conceptual", "conceptual", "empirical", "empirical"]
    predicted = ["conceptual", "conceptual", "empirical", "empirical", "conceptual"]
    # conceptual: TP 2, FP 1, FN 1 -> P = R = 2/3, F1 = 2/3; empirical: TP 1, FP 1, FN 1 -> F1 = 1/2;
    # macro = (2/3 + 1/2) / 2 = 7/12
    scores = focus_f1(predicted, requested)
    assert scores == pytest.approx({"conceptual": 2 / 3, "empirical": 1 / 2, "macro": 7 / 12})


class StubJudge:
    """Labels a text empirical when it holds a digit: keeps these tests independent of the classifier."""

    def predict(self, texts):
        return ["empirical" if any(c.isdigit() for c in t) else "conceptual" for t in texts]


def test_score_records_counts_and_values():
    records = [
        {
            "prediction": n_words(40),
            "controls": {"length": 0, "focus": "conceptual", "readability": "normal"},
            "references": [n_words(40)],
        },
        {
            "prediction": "Accuracy rose to 91 %.",
            "controls": {"length": 1, "focus": "empirical", "keywords": ["accuracy", "recall"]},
        },
        {"prediction": "The cat sat on the mat.", "controls": {"length": 2, "readability": "high", "keywords": []}},
    ]
    result = score_records(records, "x.jsonl", focus_judge=StubJudge())
    corpus = result["corpus"]
    assert result["metric"] == "ccs" and len(result["examples"]) == 3
    # produced bins [0, 0, 0] vs requested [0, 1, 2]: MAD = (0 + 1 + 2) / 3 = 1.0; PCC: constant side -> null
    assert corpus["length_n"] == 3 and corpus["length_mad"] == 1.0 and corpus["length_pcc"] is None
    # one example with keywords (the empty list is no control): 1 of 2 found
    keyword_scores = [corpus[k] for k in ("keywords_n", "keywords_total", "keyword_sr", "keyword_all_rate")]
    assert keyword_scores == [1, 2, 0.5, 0.0]
    assert corpus["readability_n_normal"] == corpus["readability_n_high"] == 1
    assert corpus["fkgl_high"] == pytest.approx(-1.45)
    assert corpus["delta_fkgl"] == pytest.approx(corpus["fkgl_normal"] - corpus["fkgl_high"])
    assert corpus["focus_n"] == 2 and corpus["focus_f1"] == 1.0 and corpus["focus_accuracy"] == 1.0
    assert corpus["rougeL_n"] == 1 and corpus["rougeL"] == 1.0  # identical to its reference
    assert result["examples"][2] == {
        "length_requested": 2,
        "length_produced": 0,
        "length_abs_error": 2,
        "readability": "high",
        "fkgl": -1.45,
    }


def test_score_records_uses_the_default_classifier():
    result = score_records(
        [{"prediction": "We propose a novel framework and prove a theorem.", "controls": {"focus": "conceptual"}}]
    )
    assert result["focus_judge"] == "SklearnFocusClassifier"
    assert result["examples"][0]["focus_predicted"] == "conceptual"


@pytest.mark.parametrize(
    "controls, message",
    [
        ({"length": 5}, "x.jsonl:2: field 'controls.length' is 5; allowed: 0, 1, 2, 3, 4"),
        (
            {"length": -1},
            "x.jsonl:2: field 'controls.length' is -1; allowed: 0, 1, 2, 3, 4 (bins of 50 words: "
            "0 is 0-50 words, 4 is more than 200 words)",
        ),
        ({"length": "short"}, "x.jsonl:2: controls: field 'length' must be an integer"),
        ({"readability": "easy"}, "x.jsonl:2: field 'controls.readability' is 'easy'; allowed: 'normal', 'high'"),
        ({"focus": "high"}, "x.jsonl:2: field 'controls.focus' is 'high'; allowed: 'conceptual', 'empirical'"),
        ({"lenght": 1}, "x.jsonl:2: unknown control(s) ['lenght'] in 'controls'; allowed: length, keywords"),
        ({"keywords": "cat"}, "x.jsonl:2: controls: field 'keywords' must be a list"),
        ({"keywords": ["?!"]}, "x.jsonl:2: field 'controls.keywords' holds '?!'"),
    ],
)
def test_bad_controls_name_the_value_and_the_allowed_ones(controls, message):
    records = [{"prediction": "fine", "controls": {}}, {"prediction": "bad", "controls": controls}]
    with pytest.raises(DataError) as err:
        score_records(records, "x.jsonl", focus_judge=StubJudge())
    assert str(err.value).startswith(message)


def test_records_without_controls_give_nulls_not_errors():
    corpus = score_records([{"prediction": "a summary", "controls": {}}])["corpus"]
    assert corpus["n"] == 1
    counts = {k: v for k, v in corpus.items() if k.endswith("_n") or k.startswith("readability_n")}
    assert counts == {
        "length_n": 0,
        "keywords_n": 0,
        "readability_n_normal": 0,
        "readability_n_high": 0,
        "focus_n": 0,
        "rougeL_n": 0,
    }
    for name in ("length_mad", "length_pcc", "keyword_sr", "delta_fkgl", "focus_f1", "rougeL"):
        assert corpus[name] is None, name


def test_missing_fields_name_the_line():
    with pytest.raises(DataError, match=r"^x.jsonl:1: missing field 'prediction'"):
        score_records([{"controls": {}}], "x.jsonl")
    with pytest.raises(DataError, match=r"^x.jsonl:1: missing field 'controls'"):
        score_records([{"prediction": "a"}], "x.jsonl")
    with pytest.raises(DataError, match=r"^x.jsonl:1: field 'references'\[0\] must be a string"):
        score_records([{"prediction": "a", "controls": {}, "references": [3]}], "x.jsonl")
