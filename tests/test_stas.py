"""STAS and the topic space (Passali et al., Sec. 3): a hand-computed tiny space, the invariants of
eq. 2 on real BBC summaries, unseen topics, save/load, the committed default, and bad input."""

import json
import math
import re

import numpy as np
import pytest

from metrics.io import DataError, read_jsonl
from metrics.stas import build_default, score_records, stas_scores
from metrics.terms import analyze, term
from metrics.topic_space import DEFAULT_DIR, JSON_NAME, NPZ_NAME, TopicSpace

# Three documents, two topics. Terms (columns, alphabetical): goal, match, phone, team.
TINY_TEXTS = ["Goal match", "goals, team!", "The phone match"]
TINY_TOPICS = ["sport", "sport", "tech"]


@pytest.fixture(scope="module")
def tiny():
    return TopicSpace.fit(TINY_TEXTS, TINY_TOPICS)


@pytest.fixture(scope="module")
def bbc():
    return TopicSpace.default()


@pytest.fixture(scope="module")
def bbc_summaries():
    """60 reference summary sentences of the bundled BBC val split, 12 per topic."""
    from conftest import whole_mirror

    by_topic = {}
    for record in read_jsonl(whole_mirror() / "bbc_summary" / "val.jsonl"):
        by_topic.setdefault(record["topic"], []).extend(record["target_sentences"])
    return [s for topic in sorted(by_topic) for s in by_topic[topic][:12]]


def test_terms_are_lemmas_without_stop_words():
    assert analyze("The players WERE running; ups and downs, goals.") == ["player", "run", "goal"]
    assert term("was") is None  # a stop word: dropped before WordNet would turn it into "wa"
    assert term("england's") == term("england’s") == "england"  # possessive cut, either apostrophe
    assert term("it's") is None and term("won't") is None  # "it" is a stop word; "won't" is not "win"
    assert term("x") is None and term("o'neill") == "o'neill"


def test_stop_words_are_nltks_list_without_content_words():
    # scikit-learn's 318-word list dropped all five content words, so "interest rates" lost its topic word
    assert analyze("The interest bill show fire system") == ["interest", "bill", "show", "fire", "system"]
    assert analyze("the") == [] and term("the") is None


@pytest.mark.full_data
def test_default_space_is_fitted_on_training_articles_only(full_data_dir, bbc):
    held_out = {
        r["id"] for split in ("val", "test") for r in read_jsonl(full_data_dir / "bbc_summary" / f"{split}.jsonl")
    }
    articles = read_jsonl(full_data_dir / "bbc" / "articles.jsonl")
    assert bbc.fitted_on["documents"] == len(articles) - len(held_out) == 1645
    assert bbc.fitted_on["excluded_documents"] == len(held_out) == 309
    assert sum(int(n.split()[0]) for n in bbc.sources.values()) == 1645
    # a term that only held-out (val/test) articles use is not in the space
    training_terms = {t for a in articles if a["id"] not in held_out for t in analyze(a["text"])}
    held_out_only = {t for a in articles if a["id"] in held_out for t in analyze(a["text"])} - training_terms
    assert held_out_only and not held_out_only & set(bbc.vectorizer.vocabulary_)


def test_hand_computed_stas_on_a_tiny_space(tiny):
    # smooth idf, n = 3 documents: idf = ln((1 + n) / (1 + df)) + 1
    #   goal, match: df 2 -> a = 1 + ln(4/3) = 1.287682;  phone, team: df 1 -> b = 1 + ln 2 = 1.693147
    a, b = 1 + math.log(4 / 3), 1 + math.log(2)
    assert tiny.terms.tolist() == ["goal", "match", "phone", "team"]
    assert tiny.vectorizer.idf_ == pytest.approx([a, a, b, b], abs=1e-12)
    # L2-normalized documents (r = sqrt(a² + b²) = 2.127175):
    #   "Goal match" = (1/√2, 1/√2, 0, 0); "goals, team!" = (a/r, 0, 0, b/r) = (0.605349, 0, 0, 0.795961)
    #   "The phone match" = (0, a/r, b/r, 0)
    # eq. 1: sport = mean of the first two = (0.656228, 0.353553, 0, 0.397980); tech = the third
    r = math.hypot(a, b)
    sport = np.array([(1 / math.sqrt(2) + a / r) / 2, 1 / math.sqrt(2) / 2, 0, b / r / 2])
    assert tiny.topic_vectors[0] == pytest.approx(sport, abs=1e-12)
    assert tiny.topic_vectors[0] == pytest.approx([0.656228, 0.353553, 0, 0.397980], abs=1e-6)
    # Summary "match" = (0, 1, 0, 0). |sport| = sqrt(0.656228² + 0.353553² + 0.397980²) = 0.844999
    #   cos(s, sport) = 0.353553 / 0.844999 = 0.418407;  cos(s, tech) = a/r = 0.605349 (tech has norm 1)
    #   STAS(s, sport) = 0.418407 / max(0.418407, 0.605349) = 0.691184;  STAS(s, tech) = 1
    assert tiny.affinities(["match"])[0] == pytest.approx([0.418407, 0.605349], abs=1e-6)
    assert tiny.stas(["match", "match"], ["sport", "tech"]) == pytest.approx([0.691184, 1.0], abs=1e-6)


def test_representative_terms_are_ordered_and_skip_absent_terms(tiny, bbc):
    # sport: goal 0.656 > team 0.398 > match 0.354; tech has only two terms of positive weight.
    assert tiny.representative_terms("sport") == ["goal", "team", "match"]
    assert tiny.representative_terms("tech", n=10) == ["phone", "match"]
    # Words "team" and "phone" both have idf b and tf 1: equal weights, so alphabetical order.
    assert tiny.with_topic("mixed", words=["team", "phone"]).representative_terms("mixed") == ["phone", "team"]
    sport = bbc.representative_terms("sport", 100)
    assert len(sport) == 100 and {"match", "player", "team", "cup", "coach", "league"} <= set(sport[:40])
    assert sport[:10] == bbc.representative_terms("sport", 10)
    assert not {"film", "bank", "election"} & set(sport)


@pytest.mark.full_data
def test_stas_invariants_on_real_summaries(bbc, bbc_summaries):
    n_topics = len(bbc.topics)
    affinity = bbc.affinities(bbc_summaries)
    assert affinity.shape == (len(bbc_summaries), n_topics) and (affinity >= 0).all() and (affinity <= 1 + 1e-12).all()
    every = bbc.stas_all_topics(bbc_summaries)
    assert ((every >= 0) & (every <= 1)).all()
    best = [bbc.topics[j] for j in affinity.argmax(axis=1)]
    assert (bbc.stas(bbc_summaries, best) == 1.0).all()  # eq. 2: the best topic over itself, exactly
    # Batched equals one summary at a time, for every topic.
    one_by_one = np.vstack([bbc.stas_all_topics([s]) for s in bbc_summaries])
    np.testing.assert_allclose(every, one_by_one, rtol=0, atol=1e-12)
    # Reference sentences of a topic are mostly about it (a loose check that the space is sensible).
    own = np.repeat(bbc.topics, 12)
    assert (np.array(best) == own).mean() > 0.6


def test_summary_without_known_words_scores_zero(bbc):
    # 0/0 is defined as 0.0: no evidence that the summary is about the topic.
    assert bbc.affinities(["the of and", "xyzzy"]).tolist() == [[0.0] * 5, [0.0] * 5]
    assert stas_scores(["the of and", "xyzzy"], ["sport", "tech"]).tolist() == [0.0, 0.0]
    assert bbc.stas([], []).shape == (0,)


def test_unseen_topic_from_words_or_texts(tiny, bbc):
    health = bbc.with_topic("health", words=["health", "hospital", "doctors", "xyzzy"])
    assert health.topics == ["business", "entertainment", "health", "politics", "sport", "tech"]
    assert bbc.topics == ["business", "entertainment", "politics", "sport", "tech"]  # the default is unchanged
    assert set(health.representative_terms("health")) == {"health", "hospital", "doctor"}  # xyzzy is unknown
    assert health.stas(["Doctors at the hospital warned about patients' health."], ["health"]).tolist() == [1.0]
    # From texts: the mean of their vectors (eq. 1), so the same as the fitted topic.
    again = tiny.with_topic("football", texts=TINY_TEXTS[:2])
    np.testing.assert_allclose(again.topic_vectors[again.topic_index("football")], tiny.topic_vectors[0], atol=1e-15)
    with pytest.raises(ValueError, match="none of the words 'xyzzy', 'the' is in"):
        bbc.with_topic("nonsense", words=["xyzzy", "the"])
    with pytest.raises(ValueError, match="already exists"):
        bbc.with_topic("sport", words=["goal"])
    with pytest.raises(ValueError, match="either words or texts"):
        bbc.with_topic("x")
    with pytest.raises(ValueError, match="none of the 1 texts"):
        bbc.with_topic("x", texts=["xyzzy"])


def test_unknown_topic_error_lists_the_valid_ones(bbc):
    valid = "valid topics: business, entertainment, politics, sport, tech"
    with pytest.raises(ValueError, match=f"unknown topic 'cooking'; {valid}"):
        bbc.stas(["a summary"], ["cooking"])
    with pytest.raises(ValueError, match="unknown topic 'cooking'"):
        bbc.representative_terms("cooking")
    with pytest.raises(ValueError, match="differ in length"):
        bbc.stas(["one", "two"], ["sport"])


def test_save_load_round_trip(tmp_path, tiny, bbc_summaries):
    space = tiny.with_topic("phones", words=["phone"])
    space.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [JSON_NAME, NPZ_NAME]
    loaded = TopicSpace.load(tmp_path)
    assert loaded.topics == space.topics and loaded.sources == space.sources
    np.testing.assert_array_equal(loaded.affinities(bbc_summaries), space.affinities(bbc_summaries))
    assert loaded.representative_terms("sport") == space.representative_terms("sport")
    with pytest.raises(FileNotFoundError, match="no topic space here"):
        TopicSpace.load(tmp_path / "missing")


@pytest.mark.full_data
def test_committed_default_equals_a_fresh_fit(tmp_path, full_data_dir, bbc):
    fresh = build_default(full_data_dir, tmp_path)  # about 1.5 s once WordNet is loaded
    committed = json.loads((DEFAULT_DIR / JSON_NAME).read_text(encoding="utf-8"))
    rebuilt = json.loads((tmp_path / JSON_NAME).read_text(encoding="utf-8"))
    for key in ("format", "settings", "topics", "sources", "fitted_on", "vocabulary"):
        assert committed[key] == rebuilt[key], key
    np.testing.assert_allclose(committed["idf"], rebuilt["idf"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(bbc.topic_vectors, fresh.topic_vectors, rtol=1e-12, atol=1e-15)
    assert sum(p.stat().st_size for p in DEFAULT_DIR.iterdir()) < 3_000_000  # the Space ships it
    assert TopicSpace.default() is bbc  # cached


@pytest.mark.full_data
def test_committed_judge_equals_a_fresh_fit_on_articles_the_systems_space_never_saw(tmp_path, full_data_dir, bbc):
    from metrics.stas import build_judge
    from metrics.topic_space import JUDGE_DIR

    fresh = build_judge(full_data_dir, tmp_path)
    committed, rebuilt = (json.loads((d / JSON_NAME).read_text(encoding="utf-8")) for d in (JUDGE_DIR, tmp_path))
    for key in ("format", "settings", "topics", "sources", "fitted_on", "vocabulary"):
        assert committed[key] == rebuilt[key], key
    np.testing.assert_allclose(TopicSpace.judge().topic_vectors, fresh.topic_vectors, rtol=1e-12, atol=1e-15)
    assert fresh.topics == bbc.topics and set(fresh.terms) != set(bbc.terms)  # the same topics, another fit


def test_score_records_from_a_file(tmp_path):
    records = [
        {"prediction": "The striker scored twice in the cup final.", "topic": "sport"},
        {"prediction": "The striker scored twice in the cup final.", "topic": "business"},
        {"prediction": "the of and", "topic": "tech"},
    ]
    result = score_records(records, "x.jsonl")
    scores = [e["stas"] for e in result["examples"]]
    assert scores[0] == 1.0 and 0 < scores[1] < 1 and scores[2] == 0.0
    assert result["corpus"] == {"n": 3, "stas": pytest.approx(sum(scores) / 3)}
    assert list(result["examples"][0]["affinity"]) == result["topics"]
    # As `python -m metrics stas FILE` reads it: record i is line i + 1.
    path = tmp_path / "preds.jsonl"
    path.write_text(
        "\n".join(json.dumps(r) for r in records + [{"prediction": "", "topic": "tech"}]) + "\n", encoding="utf-8"
    )
    with pytest.raises(DataError, match="^" + re.escape(f"{path}:4: field 'prediction' is empty")):
        score_records(read_jsonl(path), str(path))


@pytest.mark.parametrize(
    "record, message",
    [
        ({"topic": "sport"}, "x.jsonl:2: missing field 'prediction'"),
        ({"prediction": "  ", "topic": "sport"}, "x.jsonl:2: field 'prediction' is empty"),
        ({"prediction": "a goal", "topic": ["sport"]}, "x.jsonl:2: field 'topic' must be a string"),
        (
            {"prediction": "a goal", "topic": "cooking"},
            "x.jsonl:2: field 'topic': unknown topic 'cooking'; valid topics: business",
        ),
    ],
)
def test_bad_records_name_line_and_field(record, message):
    with pytest.raises(DataError) as err:
        score_records([{"prediction": "a goal", "topic": "sport"}, record], "x.jsonl")
    assert str(err.value).startswith(message)
