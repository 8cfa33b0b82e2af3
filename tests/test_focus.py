"""The focus judge: the labelling rule, save/load without pickle, and the committed default.

The default is rebuilt once per test run from the bundled data (about 4 s) and compared with the
committed asset, so the numbers in ``metrics/assets/focus/classifier.json`` and in the module
docstring are the ones this code produces.
"""

import json

import numpy as np
import pytest

import metrics.focus as focus
from metrics.focus import build_default
from metrics.focus_classifier import DEFAULT_DIR, SklearnFocusClassifier, default_focus_classifier, select_vocabulary
from metrics.focus_labels import FOCUS, focus_parts, rule_focus

# CCSBench App. B.2: the paper's own example pair of focus-controlled summaries.
PAPER_EMPIRICAL = (
    "This study evaluates the performance of a modified CRF-based POS tagging system for Manipuri, "
    "incorporating new features and the Reduplicated Multiword Expression (RMWE) feature. The experiment "
    "shows that the new CRF system achieves a Recall of 78.22%, Precision of 73.15%, and F-measure of 75.60%. "
    "With the inclusion of RMWE as a feature, the results improve to a Recall of 80.20%, Precision of 74.31%, "
    "and F-measure of 77.14%."
)
PAPER_CONCEPTUAL = (
    "This paper provides an in-depth overview of the updated feature selection approach in CRF for Manipuri "
    "POS tagging. It highlights the significance of optimal feature selection in enhancing CRF performance and "
    "discusses the introduction of new features, including the Reduplicated Multiword Expression (RMWE), which "
    "is crucial for accurately tagging Manipuri language POS due to its rich occurrence of RMWE."
)


def test_rule_counts_cues():
    # propose + novel + framework = 3 conceptual cues, 0 empirical
    assert rule_focus("We propose a novel framework.") == "conceptual"
    # experiments + accuracy = 2 empirical, plus "91.2%" counted twice = 4; 0 conceptual
    assert rule_focus("Experiments show 91.2% accuracy.") == "empirical"
    # method (1 conceptual) vs outperforms + baselines (2 empirical)
    assert rule_focus("Our method outperforms the baselines.") == "empirical"
    assert rule_focus("The cat sat on the mat.") is None  # no cue
    assert rule_focus("We propose a benchmark.") is None  # one each: a tie is left out
    assert rule_focus("EXPERIMENTS ON IMAGENET.") == "empirical"  # case does not matter


def test_judge_labels_come_from_position_not_from_the_cue_rule():
    from metrics.focus_labels import position_parts

    abstract = [
        "We propose a novel framework.",
        "The cat sat.",
        "Experiments show 91.2% accuracy.",
        "However, the problem remains.",
    ]
    # by position: the first two sentences conceptual, the last two empirical, whatever their cue words
    assert position_parts(abstract) == {
        "conceptual": "We propose a novel framework. The cat sat.",
        "empirical": "Experiments show 91.2% accuracy. However, the problem remains.",
    }
    assert position_parts(abstract[:3])["empirical"] == "Experiments show 91.2% accuracy."
    assert position_parts(abstract[:2]) == {}
    assert "position_parts" in default_focus_classifier().report["data"]["labels"]


def test_focus_parts_split_an_abstract_like_the_paper():
    abstract = [
        "We propose a novel framework.",
        "The cat sat.",
        "Experiments show 91.2% accuracy.",
        "However, the problem remains.",
    ]
    assert focus_parts(abstract) == {
        "conceptual": "We propose a novel framework. However, the problem remains.",
        "empirical": "Experiments show 91.2% accuracy.",
    }


def test_default_classifier_on_the_papers_example_pair():
    classifier = default_focus_classifier()
    assert classifier.predict([PAPER_EMPIRICAL, PAPER_CONCEPTUAL]) == ["empirical", "conceptual"]
    proba = classifier.predict_proba([PAPER_EMPIRICAL, PAPER_CONCEPTUAL])
    assert proba.shape == (2, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert proba[0, FOCUS.index("empirical")] > 0.5 > proba[1, FOCUS.index("empirical")]
    assert default_focus_classifier() is classifier  # cached


def test_save_load_round_trip_without_pickle(tmp_path):
    texts = [
        "we propose a new theory",
        "experiments show 90 % accuracy",
        "a novel framework and idea",
        "results on three datasets",
        "we introduce a method",
        "the benchmark scores improved",
    ] * 3
    labels = ["conceptual", "empirical"] * 9
    classifier = SklearnFocusClassifier().fit(texts, labels)
    classifier.report = {"note": "tiny"}
    classifier.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["classifier.json", "classifier.npz"]
    np.load(tmp_path / "classifier.npz", allow_pickle=False).close()  # plain arrays only
    loaded = SklearnFocusClassifier.load(tmp_path)
    probe = ["a theory of accuracy", "datasets", "we propose"]
    assert np.allclose(loaded.predict_proba(probe), classifier.predict_proba(probe))
    assert loaded.predict(probe) == classifier.predict(probe) and loaded.report == {"note": "tiny"}


def test_fit_rejects_unknown_labels():
    with pytest.raises(ValueError, match="allowed: conceptual, empirical"):
        SklearnFocusClassifier().fit(["a", "b"], ["conceptual", "high"])


def test_vocabulary_ties_are_broken_by_the_term_not_by_the_cpu():
    # Every unigram and bigram occurs 3 times: a cut at 3 terms falls inside one big tie, which
    # scikit-learn's max_features resolves with numpy's unstable argsort (machine-dependent order).
    # Sorted by (-count, term): "alpha" < "alpha gamma" < "beta" < "beta alpha" < "gamma".
    texts = ["beta alpha gamma"] * 3
    assert select_vocabulary(texts, min_df=3, max_features=3) == ["alpha", "alpha gamma", "beta"]
    # A more frequent term beats the alphabet, and the input order changes nothing.
    texts = ["zeta zeta beta alpha gamma", "beta alpha gamma zeta", "gamma beta alpha zeta"]
    assert select_vocabulary(texts, min_df=3, max_features=2) == ["alpha", "zeta"]
    assert select_vocabulary(texts[::-1], min_df=3, max_features=2) == ["alpha", "zeta"]
    classifier = SklearnFocusClassifier().fit(texts * 2, ["conceptual", "empirical", "conceptual"] * 2)
    assert classifier.vectorizer.vocabulary is not None  # the selected list, not scikit-learn's max_features


@pytest.fixture(scope="module")
def fresh_build(tmp_path_factory, full_data_dir):
    out = tmp_path_factory.mktemp("focus")
    report = build_default(full_data_dir, out)
    return out, report


@pytest.mark.full_data
def test_held_out_accuracy_beats_the_majority_baseline(fresh_build):
    _, report = fresh_build
    # trained on position labels, it still agrees with the cue rule of the targets well above chance
    for name in ("heldout_vs_position", "heldout_vs_rule", "heldout-scitldr_vs_rule"):
        assert report[name]["accuracy"] > report[name]["majority_accuracy"] + 0.15, name
    assert report["hand_read_with_cues"]["accuracy"] > report["hand_read_with_cues"]["majority_accuracy"]
    assert report["heldout_vs_rule"]["n"] > 2000 and report["hand_read"]["n"] == 94


@pytest.mark.full_data
def test_fresh_build_reproduces_the_committed_default(fresh_build):
    out, _ = fresh_build
    fresh = json.loads((out / "classifier.json").read_text())
    committed = json.loads((DEFAULT_DIR / "classifier.json").read_text())
    assert fresh == committed  # vocabulary, parameters and report
    with np.load(out / "classifier.npz") as a, np.load(DEFAULT_DIR / "classifier.npz") as b:
        for name in ("idf", "coef", "intercept"):
            np.testing.assert_allclose(a[name], b[name], rtol=1e-6, atol=1e-9, err_msg=name)


def test_committed_default_is_small_and_its_numbers_are_in_the_docstring():
    assert sum(p.stat().st_size for p in DEFAULT_DIR.iterdir()) < 1_000_000
    report = default_focus_classifier().report
    for name in (
        "heldout_vs_position",
        "heldout_vs_rule",
        "hand_read",
        "hand_read_with_cues",
        "hand_read_without_cues",
    ):
        assert f"{report[name]['accuracy']:.3f}" in focus.__doc__, name
        assert f"{report[name]['majority_accuracy']:.3f}" in focus.__doc__, name
