"""EGISES and P-Acc (Vansh et al., Sec. 3 and 7, Appendix A): JSD against scipy, a hand-computed
two-reader example, the paper's OOV example (Table 5), invariants on real BBC sentences, P-Acc by
hand, records and bad input."""

import json
import math
import random

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import jensenshannon
from scipy.special import expit

from metrics.__main__ import main as metrics_cli
from metrics.egises import DocumentGroup, egises, score_records
from metrics.io import DataError, read_jsonl
from metrics.p_acc import p_acc, rouge_l
from metrics.term_distributions import count_terms, distributions, embedding_similarity, jsd_pairs, oov_denominators

# Terms (columns, alphabetical): apple, banana, cherry. p(w|d) = (1/2, 1/4, 1/4).
FRUIT = "Apple apple banana cherry."


def sigmoid(x):  # a two-reader softmax over l = {j, k} with w(j|j) = 0 is e^w / (1 + e^w)
    return 1 / (1 + math.exp(-x))


# ---- JSD -------------------------------------------------------------------------------------------


def test_jsd_is_scipy_jensenshannon_squared_in_base_2():
    rng = np.random.default_rng(0)
    dense = rng.random((12, 30)) * (rng.random((12, 30)) < 0.4)  # sparse-ish rows, some terms shared
    dense[3] = dense[4]  # identical rows: exactly 0
    dense /= dense.sum(axis=1, keepdims=True)
    left, right = np.repeat(np.arange(12), 12), np.tile(np.arange(12), 12)
    ours = jsd_pairs(sp.csr_matrix(dense), left, right)
    scipy_squared = [jensenshannon(dense[i], dense[j], base=2) ** 2 for i, j in zip(left, right)]
    assert ours == pytest.approx(scipy_squared, abs=1e-12)
    assert ours[3 * 12 + 4] == 0.0 and np.all((ours >= 0) & (ours <= 1))
    # Disjoint supports are at the maximum, 1 bit; an empty row (a text of stop words only) is at 1
    # from any distribution and at 0 from another empty row.
    rows = sp.csr_matrix(np.array([[0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5], [0, 0, 0, 0]]))
    assert jsd_pairs(rows, np.array([0, 0, 2, 2]), np.array([1, 2, 0, 2])).tolist() == [1.0, 1.0, 1.0, 0.0]


# ---- the formula by hand ------------------------------------------------------------------------------


def test_hand_computed_two_readers_with_the_document():
    # Document "apple apple banana cherry": p(w|d) = (1/2, 1/4, 1/4).
    # Eq. 4-5, r = p(w|t) / p(w|d), then normalized:
    #   u1 = "apple banana": p = (1/2, 1/2, 0) -> r = (1, 2, 0) -> p^ = (1/3, 2/3, 0);  s1 = the same text
    #   u2 = "cherry":       p = (0, 0, 1)                   -> p^ = (0, 0, 1)
    #   s2 = "apple cherry": p = (1/2, 0, 1/2) -> r = (1, 0, 2) -> p^ = (1/3, 0, 2/3)
    # JSD (base 2) between texts:
    #   JSD(u1||u2) = 1 (disjoint supports)
    #   JSD(s1||s2): M = (1/3, 1/3, 1/3); KL(s1||M) = 2/3 log2 2 = 2/3 = KL(s2||M) -> JSD = 2/3
    # JSD to the document (eq. 9-10 denominators):
    #   JSD(u1||d): M = (5/12, 11/24, 1/8);
    #     KL(u1||M) = 1/3 log2(4/5) + 2/3 log2(16/11);  KL(d||M) = 1/2 log2(6/5) + 1/4 log2(6/11) + 1/4 log2 2
    #     JSD = 0.207985; s1 and s2 (banana and cherry weigh the same in d) have the same JSD to d
    #   JSD(u2||d): M = (1/4, 1/8, 5/8); KL(u2||M) = log2(8/5); KL(d||M) = 1/2 + 1/4 + 1/4 log2(2/5)
    #     JSD = 0.548795
    jsd_u1_d = (
        1 / 3 * math.log2(4 / 5)
        + 2 / 3 * math.log2(16 / 11)
        + 1 / 2 * math.log2(6 / 5)
        + 1 / 4 * math.log2(6 / 11)
        + 1 / 4
    ) / 2
    jsd_u2_d = (math.log2(8 / 5) + 3 / 4 + 1 / 4 * math.log2(2 / 5)) / 2
    assert (jsd_u1_d, jsd_u2_d) == pytest.approx((0.207985, 0.548795), abs=1e-6)
    # Eq. 7-8, softmax over l in {1, 2} with w(j|j) = 0:
    #   X12 = sigmoid(1 / 0.207985) * 1 = 0.991902;   Y12 = sigmoid((2/3) / 0.207985) * 2/3 = 0.640690
    #   X21 = sigmoid(1 / 0.548795) * 1 = 0.860827;   Y21 = sigmoid((2/3) / 0.207985) * 2/3 = 0.640690
    # Eq. 6: Dev_1 = 0.640690 / 0.991902 = 0.645921;  Dev_2 = 0.640690 / 0.860827 = 0.744273
    # Eq. 11: EGISES = 1 - (0.645921 + 0.744273) / 2 = 0.304903
    y = sigmoid((2 / 3) / jsd_u1_d) * 2 / 3
    dev_1, dev_2 = y / sigmoid(1 / jsd_u1_d), y / sigmoid(1 / jsd_u2_d)
    result = egises([DocumentGroup(FRUIT, ["u1", "u2"], ["apple banana", "apple cherry"], ["apple banana", "cherry"])])
    assert result.reader_deviations[0] == pytest.approx([dev_1, dev_2], abs=1e-9)
    assert result.egises == pytest.approx(1 - (dev_1 + dev_2) / 2, abs=1e-9)
    assert result.egises == pytest.approx(0.304903, abs=1e-6)
    assert result.with_document == [True] and result.n_excluded == 0


def test_hand_computed_two_readers_without_the_document():
    # No document text: plain p(w|t), all w = 0, the softmax gives 1/2 to each l and cancels in min/max.
    #   u1 = (1/2, 1/2, 0), u2 = (0, 0, 1): JSD = 1
    #   s1 = (1/2, 1/2, 0), s2 = (1/2, 0, 1/2): M = (1/2, 1/4, 1/4), KL = 1/2 log2 2 = 1/2 each -> JSD = 1/2
    #   Dev_1 = Dev_2 = (1/2 * 1/2) / (1/2 * 1) = 1/2 -> EGISES = 1/2
    result = egises([DocumentGroup(None, ["u1", "u2"], ["apple banana", "apple cherry"], ["apple banana", "cherry"])])
    assert result.reader_deviations[0] == pytest.approx([0.5, 0.5], abs=1e-9)
    assert result.egises == pytest.approx(0.5, abs=1e-9)
    assert result.with_document == [False]


# ---- OOV smoothing (Appendix A) ----------------------------------------------------------------------

# Table 5: cosine of "desk" with each document term.
TABLE_5 = {"red": 0.537, "cat": 0.405, "tall": 0.613, "table": 0.892}


def table_5_similarity(oov_terms, document_terms):
    assert oov_terms == ["desk"]
    return np.array([[TABLE_5[t] for t in document_terms]])


def test_oov_smoothing_reproduces_table_5():
    # bias = 1 - sqrt(0.892) = 0.0555 <= 0.892, so "desk" may stand for a document word. Softmax over
    # (0.537, 0.405, 0.613, 0.892, 0.0555) = (0.200, 0.175, 0.216, 0.285, 0.124) (Table 5), so
    # S = 0.200 + 0.175 + 0.216 + 0.285 = 0.876 (0.876408 unrounded) and OOV[desk] = (1/3) / S =
    # 0.3805 (the paper sums the rounded values; unrounded 0.380340).
    document_terms = ["cat", "red", "table", "tall"]
    mass = oov_denominators(["desk"], document_terms, table_5_similarity)[0]
    assert mass == pytest.approx(0.876, abs=5e-4)
    assert (1 / 3) / mass == pytest.approx(0.3805, abs=5e-4)
    # Unrelated: a best similarity of 0.3 has bias 1 - sqrt(0.3) = 0.452 > 0.3: no smoothing (inf -> r = 0).
    assert oov_denominators(["desk"], document_terms, lambda o, d: np.full((1, 4), 0.3))[0] == math.inf


def test_oov_smoothing_in_the_summary_distribution():
    # Appendix A: document bow {red, cat, red, tall, table}, summary bow {red, cat, desk}.
    # r(cat) = (1/3) / (1/5) = 5/3, r(red) = (1/3) / (2/5) = 5/6, r(desk) = (1/3) / 0.876408 = 0.380340
    document, summary = "The red cat is on the red tall table.", "The red cat is on the desk"
    counts, terms = count_terms([document, summary])
    assert terms.tolist() == ["cat", "desk", "red", "table", "tall"]
    smoothed = distributions(counts, np.array([0, 0]), terms, table_5_similarity).toarray()
    r = np.array([5 / 3, (1 / 3) / 0.876408, 5 / 6, 0, 0])
    assert smoothed[1] == pytest.approx(r / r.sum(), abs=1e-6)
    assert smoothed[0] == pytest.approx([1 / 5, 0, 2 / 5, 1 / 5, 1 / 5], abs=1e-12)  # eq. 3
    # Without a similarity "desk" is unrelated: p^ = (5/3, 0, 5/6) / (5/2) = (2/3, 0, 1/3).
    plain = distributions(counts, np.array([0, 0]), terms).toarray()
    assert plain[1] == pytest.approx([2 / 3, 0, 1 / 3, 0, 0], abs=1e-12)
    # A summary with no word of the document (and nothing smoothed) keeps its plain distribution.
    counts, terms = count_terms([document, "desk lamp lamp"])
    assert terms.tolist() == ["cat", "desk", "lamp", "red", "table", "tall"]
    assert distributions(counts, np.array([0, 0]), terms).toarray()[1].tolist() == [0, 1 / 3, 2 / 3, 0, 0, 0]


def test_embedding_similarity_is_the_cosine():
    vectors = {"desk": [1.0, 0.0], "table": [3.0, 4.0], "cat": [0.0, 2.0]}
    similarity = embedding_similarity(lambda words: np.array([vectors[w] for w in words]))
    # cos(desk, table) = 3 / 5; cos(desk, cat) = 0
    assert similarity(["desk"], ["table", "cat"]) == pytest.approx(np.array([[0.6, 0.0]]), abs=1e-12)
    # In egises: "desk" (best cosine 0.6 >= bias 1 - sqrt(0.6) = 0.225) now counts as an alternative
    # word of the document, so "the cat at the desk" is no longer just "cat" and the score moves.
    group = DocumentGroup(
        "The cat is on the table.", ["a", "b"], ["the cat at the desk", "the cat"], ["the table", "a cat"]
    )
    smoothed, unsmoothed = egises([group], similarity), egises([group])
    # Unsmoothed, "desk" is dropped: both summaries are "cat" while the references differ, Dev = 0.
    assert unsmoothed.reader_deviations[0].tolist() == [0.0, 0.0] and unsmoothed.egises == 1.0
    assert smoothed.egises < 0.99


# ---- invariants on real text -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bbc_groups(data_dir):
    """10 BBC val articles, 4 readers each; reader i's reference is the article's i-th summary sentence."""
    groups = []
    for record in read_jsonl(data_dir / "bbc_summary" / "val.jsonl"):
        salient = list(dict.fromkeys(record["target_sentences"]))
        if len(salient) >= 4:
            groups.append(DocumentGroup(record["source"], ["r0", "r1", "r2", "r3"], salient[:4], salient[:4]))
        if len(groups) == 10:
            return groups
    pytest.fail("expected 10 BBC val articles with 4 summary sentences")


def with_summaries(groups, summaries_of):
    return [DocumentGroup(g.document, g.user_ids, summaries_of(g), g.references) for g in groups]


def test_own_references_are_the_best_and_one_summary_for_all_the_worst(bbc_groups):
    # Summaries equal to each reader's reference: Y = X for every pair, min/max = 1, EGISES = 0 (best).
    own = egises(bbc_groups)
    assert own.egises == 0.0 and all(np.all(d == 1.0) for d in own.reader_deviations)
    # The same summary for every reader: Y = 0 while the references differ (X > 0), Dev = 0, EGISES = 1.
    for pick in (0, 2):
        same = egises(with_summaries(bbc_groups, lambda g: [g.references[pick]] * 4))
        assert same.egises == 1.0 and all(np.all(d == 0.0) for d in same.reader_deviations)
    # Also without the document text (ids only).
    ids_only = [DocumentGroup(None, g.user_ids, g.summaries, g.references) for g in bbc_groups]
    assert egises(ids_only).egises == 0.0
    assert egises(with_summaries(ids_only, lambda g: [g.document or g.references[0]] * 4)).egises == 1.0


def test_bounds_and_reader_order(bbc_groups):
    rng = random.Random(0)
    pool = [r for g in bbc_groups for r in g.references]
    mixed = with_summaries(bbc_groups, lambda g: [rng.choice([*g.references, *pool[:5]]) for _ in g.user_ids])
    result = egises(mixed)
    assert 0.0 < result.egises < 1.0
    assert all(np.all((d >= 0) & (d <= 1)) for d in result.reader_deviations)
    assert result.egises == pytest.approx(1 - np.mean([d.mean() for d in result.reader_deviations]), abs=1e-12)
    # Listing the readers in another order permutes their deviations and changes nothing else.
    order = [2, 0, 3, 1]
    shuffled = [
        DocumentGroup(
            g.document,
            [g.user_ids[i] for i in order],
            [g.summaries[i] for i in order],
            [g.references[i] for i in order],
        )
        for g in mixed
    ]
    reordered = egises(shuffled)
    for before, after in zip(result.reader_deviations, reordered.reader_deviations):
        assert after == pytest.approx(before[order], abs=1e-12)
    # Each document scores alone as it does in the corpus (sizes come from the input, nothing global).
    assert egises(mixed[3:4]).reader_deviations[0] == pytest.approx(result.reader_deviations[3], abs=1e-12)


def test_single_reader_documents_are_excluded_and_empty_texts_score():
    groups = [
        DocumentGroup(FRUIT, ["u1"], ["apple"], ["banana"]),
        DocumentGroup(FRUIT, ["u1", "u2"], ["apple banana", "It is."], ["apple banana", "cherry"]),
    ]
    result = egises(groups)
    assert result.n_excluded == 1 and result.document_deviations[0] is None and result.reader_deviations[0] is None
    # "It is." has no term: it is at JSD 1 from s1 (X12 = sigmoid(1/0.207985), Y12 = sigmoid(w) * 1) -> finite.
    assert 0.0 <= result.egises <= 1.0 and np.all(np.isfinite(result.reader_deviations[1]))
    assert egises(groups[:1]).egises is None and egises([]).egises is None
    # A corpus of stop words only: every text is empty, every JSD 0, min/max 0/0 = 1, EGISES = 0.
    assert egises([DocumentGroup("It is.", ["a", "b"], ["the", "of"], ["a", "an"])]).egises == 0.0


def test_document_group_checks_its_shape():
    with pytest.raises(ValueError, match="parallel"):
        DocumentGroup(FRUIT, ["a", "b"], ["apple"], ["apple", "banana"])
    with pytest.raises(ValueError, match="twice"):
        DocumentGroup(FRUIT, ["a", "a"], ["apple", "banana"], ["apple", "banana"])


# ---- P-Acc --------------------------------------------------------------------------------------------


def test_p_acc_by_hand():
    # Eq. 13-14: P-Acc = Acc - alpha * f_sig(beta * EGISES); Acc = 0.5, EGISES = 1:
    #   alpha 0.5, beta 1 (paper):   0.5 - 0.5 * tanh(1) = 0.5 - 0.5 * 0.761594 = 0.119203
    #   beta 0.5:                    0.5 - 0.5 * tanh(0.5) = 0.5 - 0.5 * 0.462117 = 0.268941
    #   logistic f_sig:              0.5 - 0.5 * 0.731059 = 0.134471
    assert p_acc(0.5, 1.0) == pytest.approx(0.119203, abs=1e-6)
    assert p_acc(0.5, 1.0, beta=0.5) == pytest.approx(0.268941, abs=1e-6)
    assert p_acc(0.5, 1.0, sigmoid=expit) == pytest.approx(0.134471, abs=1e-6)
    # Equal to Acc * Unit_P-Acc (eq. 13) whenever Acc > 0; alpha = 0 leaves the accuracy unchanged.
    unit = 1 - 0.5 * math.tanh(0.7) / 0.4
    assert p_acc(0.4, 0.7) == pytest.approx(0.4 * unit, abs=1e-12)
    assert p_acc(0.4, 0.7, alpha=0.0) == 0.4
    with pytest.raises(ValueError, match="alpha"):
        p_acc(0.5, 0.5, alpha=1.5)
    with pytest.raises(ValueError, match="beta"):
        p_acc(0.5, 0.5, beta=0.0)


def test_rouge_l_by_hand():
    # LCS of "the cat sat on the mat" and "the cat lay on the mat" is 5 of 6 tokens: P = R = F = 5/6.
    assert rouge_l(
        ["the cat sat on the mat", "apple"], ["the cat lay on the mat", "cherry"]
    ).tolist() == pytest.approx([5 / 6, 0.0], abs=1e-12)


def fruit_records():
    return [
        {"document": FRUIT, "user": "u1", "prediction": "apple banana", "references": ["apple banana"]},
        {"document": FRUIT, "user": "u2", "prediction": "apple banana", "references": ["cherry", "unused"]},
        {"doc_id": "n7", "user": "u1", "prediction": "apple", "references": ["banana"]},
    ]


def test_score_records_corpus_and_examples():
    result = score_records(fruit_records(), "fruit.jsonl")
    corpus = result["corpus"]
    # Both readers of FRUIT get "apple banana": Y = 0, Dev = 0, EGISES = 1. ROUGE-L: 1 (own reference)
    # and 0 (nothing shared with "cherry"): Acc = 0.5, P-Acc = 0.5 - 0.5 * tanh(1) = 0.119203.
    # Document n7 has one reader: excluded, counted, not in the mean ROUGE-L.
    assert corpus["egises"] == 1.0 and corpus["rouge_l"] == 0.5
    assert corpus["p_acc_rouge_l"] == pytest.approx(0.119203, abs=1e-6)
    assert (corpus["n"], corpus["n_documents"], corpus["n_excluded_documents"], corpus["n_excluded_records"]) == (
        3,
        1,
        1,
        1,
    )
    assert [e["deviation"] for e in result["examples"]] == [0.0, 0.0, None]
    assert [e["user"] for e in result["examples"]] == ["u1", "u2", "u1"]
    assert result["examples"][2]["rouge_l"] == 0.0
    json.dumps(result)  # JSON-serializable
    nobody = score_records(fruit_records()[2:], "x.jsonl")["corpus"]
    assert nobody["egises"] is None and nobody["p_acc_rouge_l"] is None and nobody["rouge_l"] is None


def test_records_group_by_doc_id_in_any_order():
    records = [
        {"doc_id": "n1", "user": "b", "prediction": "apple cherry", "references": ["cherry"]},
        {"doc_id": "n2", "user": "a", "prediction": "apple", "references": ["apple"]},
        {"doc_id": "n1", "user": "a", "prediction": "apple banana", "references": ["apple banana"]},
    ]
    result = score_records(records, "ids.jsonl")
    # n1 without text: readers b, a; the hand-computed ids-only example above, with readers swapped.
    assert result["corpus"]["egises"] == pytest.approx(0.5, abs=1e-9)
    assert result["corpus"]["n_documents_without_text"] == 1
    assert [e["deviation"] for e in result["examples"]] == pytest.approx([0.5, None, 0.5], abs=1e-9)


# ---- bad input ----------------------------------------------------------------------------------------


def test_an_empty_prediction_is_a_summary_that_shares_nothing():
    # A barely trained model may write nothing: that scores ROUGE-L 0 instead of failing the evaluation.
    records = fruit_records()
    records[1] = {**records[1], "prediction": " "}
    assert score_records(records, "empty.jsonl")["examples"][1]["rouge_l"] == 0.0


@pytest.mark.parametrize(
    "line, change, message",
    [
        (1, {"references": []}, r"^bad\.jsonl:2: field 'references' is empty$"),
        (1, {"references": [""]}, r"^bad\.jsonl:2: field 'references'\[0\] is empty$"),
        (0, {"prediction": 3}, r"^bad\.jsonl:1: field 'prediction' must be a string, got int$"),
        (2, {"user": None}, r"^bad\.jsonl:3: missing field 'user'$"),
        (2, {"doc_id": None}, r"^bad\.jsonl:3: missing field 'document' \(or 'doc_id'\)$"),
        (
            1,
            {"user": "u1"},
            r"^bad\.jsonl:2: field 'user': reader 'u1' already has a summary of this document at line 1$",
        ),
    ],
)
def test_bad_records_name_the_line_and_field(line, change, message):
    records = fruit_records()
    records[line] = {k: v for k, v in {**records[line], **change}.items() if v is not None}
    with pytest.raises(DataError, match=message):
        score_records(records, "bad.jsonl")


def test_bad_records_not_an_object_or_two_texts_for_one_id():
    with pytest.raises(DataError, match=r"^bad\.jsonl:2: expected a JSON object, got list$"):
        score_records([fruit_records()[0], ["apple"]], "bad.jsonl")
    records = [
        {"doc_id": "n1", "document": FRUIT, "user": "a", "prediction": "x", "references": ["y"]},
        {"doc_id": "n1", "document": "Another text.", "user": "b", "prediction": "x", "references": ["y"]},
    ]
    with pytest.raises(DataError, match=r"^bad\.jsonl:2: field 'document' differs from line 1"):
        score_records(records, "bad.jsonl")


def test_cli_reports_file_and_line(tmp_path, capsys):
    path = tmp_path / "preds.jsonl"
    lines = [json.dumps(r) for r in fruit_records()]
    lines[1] = json.dumps({"document": FRUIT, "user": "u2", "prediction": "apple", "references": [""]})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert metrics_cli(["egises", str(path)]) == 2
    assert f"{path}:2: field 'references'[0] is empty" in capsys.readouterr().err
    path.write_text("\n".join(json.dumps(r) for r in fruit_records()) + "\n", encoding="utf-8")
    assert metrics_cli(["egises", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["corpus"]["egises"] == 1.0
