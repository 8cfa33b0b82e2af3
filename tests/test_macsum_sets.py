"""MACSum-Doc's human references as extra test sets (topic: ``macsum-topic``; ccs: ``macsum-length``),
and the shuffled pass that stays within a document (``shuffle_group``), on the fixture rows
(tests/fixtures/macsum_doc: the first five documents, verbatim)."""

from collections import Counter

import pytest

from metrics.text import stem, words
from training.evaluate import derangement, evaluate, shuffle_groups
from variants import REGISTRY
from variants.base import whole_groups
from variants.ccs.data import MACSUM_LENGTH_BINS, macsum_length_set, median_bin
from variants.sources import load_source
from variants.topic.data import macsum_topic, macsum_topic_set

TOPIC, CCS = REGISTRY["topic"], REGISTRY["ccs"]


@pytest.fixture(scope="module")
def rows(data_dir):
    return load_source("macsum_doc", "val", data_dir)


# --- the same-document shuffle ------------------------------------------------------------------
def test_grouped_derangement_never_crosses_a_group_and_moves_every_value_it_can():
    values = ["a", "b", "a", "b", "c", "x", "y", "z", "z", "solo"]
    groups = ["d1", "d1", "d1", "d1", "d2", "d2", "d3", "d3", "d3", "d4"]
    for seed in range(20):
        donors = derangement(values, seed, groups)
        assert derangement(values, seed, groups) == donors
        for i, j in enumerate(donors):
            assert groups[j] == groups[i]
            if groups[i] != "d4":  # a group of one keeps its own value: there is no other
                assert values[j] != values[i], (seed, i, j)
    with pytest.raises(ValueError, match="3 values but 2 shuffle groups"):
        derangement(["a", "b", "c"], 0, ["g", "g"])


def test_shuffle_groups_only_when_a_record_names_one():
    assert shuffle_groups([{"id": 1}, {"id": 2}]) is None
    assert shuffle_groups([{"shuffle_group": "d1"}, {"id": 2}]) == ["d1", ""]


def test_whole_groups_cuts_at_a_document_boundary():
    records = [{"doc_id": d} for d in "aabbbc"]
    assert [r["doc_id"] for r in whole_groups(records, 4)] == list("aa")
    assert [r["doc_id"] for r in whole_groups(records, 5)] == list("aabbb")
    assert [r["doc_id"] for r in whole_groups(records, 1)] == list("aa")  # at least one whole document
    assert whole_groups(records, None) == records


# --- macsum-topic --------------------------------------------------------------------------------
def test_macsum_topic_set_keeps_references_verbatim_and_documents_with_two_topics(rows):
    records = TOPIC.evaluation.extra_test_set("macsum-topic")
    by_id = {r["id"]: r for r in rows}
    # fixture: documents 926, 370, 13 have two topics each; 232 and 157 one (left out)
    assert Counter(r["doc_id"] for r in records) == {"macdoc-val-926": 4, "macdoc-val-370": 4, "macdoc-val-13": 4}
    for record in records:
        row = by_id[record["id"]]
        assert record["target"] == row["reference"] and record["document"] == row["source"]
        assert record["controls"] == {"topic": macsum_topic(row["topic"]), "topic_words": macsum_topic(row["topic"])}
        assert record["shuffle_group"] == row["doc_id"] and record["dataset"] == "macsum_doc"
    assert macsum_topic("maya harris , policy role") == "maya harris, policy role"
    assert TOPIC.evaluation.extra_test_set("macsum-topic") == records  # the same on every call
    assert len(TOPIC.evaluation.extra_test_set("macsum-topic", 5)) == 4  # whole documents only
    with pytest.raises(KeyError, match="no test set 'macsum-length'; it has: macsum-topic"):
        TOPIC.evaluation.extra_test_set("macsum-length")


def test_macsum_topic_set_drops_topics_the_space_cannot_describe(rows):
    records, counts = macsum_topic_set(rows, known=lambda words: "drought" not in words)
    assert "macdoc-val-13" not in {r["doc_id"] for r in records}  # its other topic is left alone
    assert (
        counts["no word of the topic in the topic space"] == 2
        and counts["only one topic in the document"] == 2 + 2 + 2
    )


def test_macsum_topic_shuffled_pass_asks_for_another_topic_of_the_same_document():
    records = TOPIC.evaluation.extra_test_set("macsum-topic")
    topics = {}
    for r in records:
        topics.setdefault(r["doc_id"], set()).add(r["controls"]["topic"])
    report = evaluate(TOPIC.baseline(), records, "macsum-topic", controls="shuffled")
    for record, row in zip(records, report["examples"]):
        given = row["given_controls"]["topic"]
        assert given != record["controls"]["topic"] and given in topics[record["doc_id"]]
        assert row["rouge1"] is not None  # scored against the human reference of the asked topic


# --- macsum-length -------------------------------------------------------------------------------
def test_macsum_length_mapping_on_fixture_rows(rows):
    records = CCS.evaluation.extra_test_set("macsum-length")
    # fixture: five documents x (short, normal, long), topic-free references only
    assert len(records) == 15 and Counter(r["macsum_length"] for r in records) == {"short": 5, "normal": 5, "long": 5}
    first = {r["macsum_length"]: r for r in records if r["doc_id"] == "macdoc-val-926"}
    # hand-counted: the reference's words, and its bin (0: 0-50 words, 1: 51-100, 2: 101-150)
    assert {k: (v["reference_words"], v["controls"]["length"]) for k, v in first.items()} == {
        "short": (42, 0),
        "normal": (79, 1),
        "long": (107, 1),
    }
    assert first["long"]["target"] == next(r["reference"] for r in rows if r["id"] == "macdoc-val-926-r2")
    assert all(r["controls"]["length"] == MACSUM_LENGTH_BINS[r["macsum_length"]] for r in records)
    assert macsum_length_set(rows) == records and len(CCS.evaluation.extra_test_set("macsum-length", 7)) == 6


def test_macsum_length_keywords_are_words_of_the_human_reference_the_document_holds(rows):
    records = CCS.evaluation.extra_test_set("macsum-length")
    # "Gordon" and "year" (21-year-old, five years) are the short reference's only content words written twice
    assert records[0]["controls"]["keywords"][:2] == ["gordon", "year"]
    for record in records:
        keywords = record["controls"]["keywords"]
        assert 1 <= len(keywords) <= 3 and record["composition"] == "length+keywords"
        for keyword in keywords:
            assert keyword in words(record["target"])
            assert stem(keyword) in {stem(w) for w in words(record["document"])}


def test_macsum_length_shuffle_asks_the_other_bin_and_document_words_the_reference_lacks(rows):
    records = CCS.evaluation.extra_test_set("macsum-length", 6)
    for record in records:
        given, shuffled = record["controls"], record["shuffled_controls"]
        assert {given["length"], shuffled["length"]} == {0, 1}  # short's bin against normal's and long's
        assert len(shuffled["keywords"]) == len(given["keywords"])
        document, reference = set(words(record["document"])), set(words(record["target"]))
        assert all(w in document and w not in reference for w in shuffled["keywords"])
    report = evaluate(CCS.baseline(), records, "macsum-length", controls="shuffled")
    assert [row["given_controls"] for row in report["examples"]] == [r["shuffled_controls"] for r in records]
    assert all(row["controls"] == r["controls"] for row, r in zip(report["examples"], records))


def test_median_bin_is_the_bin_nearest_all_references():
    texts = ["w " * n for n in (10, 60, 70, 120)]  # bins 0, 1, 1, 2
    assert median_bin(texts) == 1 and median_bin(["w " * 30]) == 0


@pytest.mark.full_data
def test_macsum_length_bins_are_the_median_bins_of_the_whole_set(full_data_dir):
    records = macsum_length_set(load_source("macsum_doc", "val", full_data_dir))
    assert len(records) == 279
    for length, bin_index in MACSUM_LENGTH_BINS.items():
        assert median_bin([r["target"] for r in records if r["macsum_length"] == length]) == bin_index


@pytest.mark.full_data
def test_macsum_topic_set_on_the_whole_data(full_data_dir):
    records = TOPIC.evaluation.extra_test_set("macsum-topic")
    assert len(records) == 124 and len({r["doc_id"] for r in records}) == 27
    topics = {}
    for r in records:
        topics.setdefault(r["doc_id"], set()).add(r["controls"]["topic"])
    assert min(map(len, topics.values())) == 2
