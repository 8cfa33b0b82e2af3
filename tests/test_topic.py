"""Topic variant (Passali et al.): the four control schemes, unseen topics, the super-article builder,
the extractive baseline, and bad input."""

import random

import pytest

from variants import ControlError, InputError, get_variant, load_summarizer
from variants.topic import TAG, TOPIC, TopicAssets, default_assets, tag_document
from variants.topic.data import interleave, pair_articles, super_articles

PAPER_SENTENCE = (
    "By one estimate, American individuals and businesses together spend 6.1 billion hours "
    "complying with the tax code every year."
)
SPORT_DOC = (
    "The striker scored twice as the club won the league match on Saturday. "
    "Shares in the bank fell after profits dropped. The coach praised the team's defence."
)


@pytest.fixture(scope="module")
def topic():
    return get_variant("topic")


def test_tagging_reproduces_the_papers_example():
    # Sec. 4.2: with "business", "billion" and "tax" among the representative terms of
    # "Business & Finance", exactly those three words are wrapped.
    terms = frozenset({"business", "billion", "tax", "market"})
    assert tag_document(PAPER_SENTENCE, terms) == (
        "By one estimate, American individuals and [TAG] businesses [TAG] together spend 6.1 [TAG] billion [TAG] "
        "hours complying with the [TAG] tax [TAG] code every year."
    )


def test_tagging_matches_lemmas_not_substrings():
    # "teams" -> lemma "team" is tagged; "steam" contains "team" but is another word.
    assert tag_document("Teams let off steam.", frozenset({"team"})) == "[TAG] Teams [TAG] let off steam."


def test_each_method_gives_different_inputs_for_different_topics(topic):
    assets = default_assets()
    emb_assets = TopicAssets(assets.space, assets.top_n, list(assets.space.topics))
    for method in ("tag", "prepend", "prepend-tag"):
        sport = topic.prepare(SPORT_DOC, {"topic": "sport"}, method, assets)
        business = topic.prepare(SPORT_DOC, {"topic": "business"}, method, assets)
        assert sport.text != business.text, method
    assert topic.prepare(SPORT_DOC, {"topic": "sport"}, "prepend", assets).text == f"sport {TOPIC} {SPORT_DOC}"
    tagged = topic.prepare(SPORT_DOC, {"topic": "sport"}, "prepend-tag", assets).text
    assert tagged.startswith(f"sport {TOPIC} ") and f"{TAG} league {TAG}" in tagged
    emb = [topic.prepare(SPORT_DOC, {"topic": t}, "emb", emb_assets) for t in ("sport", "business")]
    assert emb[0].text == emb[1].text == SPORT_DOC
    assert emb[0].extra["topic_ids"] != emb[1].extra["topic_ids"]


def test_unseen_topic_gets_terms_from_its_words(topic):
    assets = default_assets()
    prepared = topic.prepare(
        "The election campaign and the vote on the new health law.",
        {"topic": "health policy", "topic_words": "health, hospital, doctor, patient"},
        "tag",
        assets,
    )
    assert f"{TAG} health {TAG}" in prepared.text and prepared.notices
    with pytest.raises(ControlError, match="only knows the topics it was trained on"):
        topic.prepare(
            SPORT_DOC, {"topic": "health policy"}, "emb", TopicAssets(assets.space, 100, list(assets.space.topics))
        )


def test_unknown_topic_error_lists_the_valid_ones(topic):
    closed = TopicAssets(default_assets().space, 100, ["business", "sport"])
    with pytest.raises(ControlError, match="allowed: business, sport"):
        topic.validate({"topic": "cooking"}, closed)
    with pytest.raises(ControlError, match="required"):
        topic.validate({}, default_assets())
    with pytest.raises(ControlError, match="unknown control"):
        topic.validate({"topic": "sport", "colour": "red"})


def test_baseline_picks_the_topic_sentences_and_rejects_empty_documents(topic):
    baseline = topic.baseline()
    doc = SPORT_DOC + " The central bank raised interest rates as inflation and market prices rose."
    [sport] = baseline.summarize([doc], [{"topic": "sport"}])
    [business] = baseline.summarize([doc], [{"topic": "business"}])
    assert "striker" in sport.text and "bank" in business.text and sport.text != business.text
    scores = topic.score(business.text, doc, {"topic": "business"})
    assert scores["stas"].value == pytest.approx(1.0)  # the summary's best topic is the requested one
    with pytest.raises(InputError, match="document is empty"):
        baseline.summarize(["   "], [{"topic": "sport"}])


def test_interleave_and_pairing_follow_the_paper():
    assert interleave(["a1", "a2", "a3"], ["b1"]) == ["a1", "b1", "a2", "a3"]
    articles = [{"id": str(i), "topic": t} for i, t in enumerate("aaabbc")]
    pairs = pair_articles(articles, random.Random(0))
    assert all(x["topic"] != y["topic"] for x, y in pairs)
    used = [a["id"] for pair in pairs for a in pair]
    assert len(used) == len(set(used)) == 6  # a/b/c counts 3/2/1 allow three mixed pairs


def test_super_articles_keep_the_target_topic_and_both_sources(data_dir):
    from metrics.io import read_jsonl

    records = read_jsonl(data_dir / "bbc_summary" / "val.jsonl")[:12]
    examples = super_articles(records, seed=0, split="val", dataset="bbc_summary")
    assert examples == super_articles(records, seed=0, split="val", dataset="bbc_summary")  # deterministic
    by_id = {r["id"]: r for r in records}
    for example in examples:
        main, other = (by_id[i] for i in example["sources"])
        assert example["controls"]["topic"] == main["topic"] != other["topic"] == example["other_topic"]
        assert example["target"] == main["target"]
        # every sentence of both articles is in the super-article
        assert main["target_sentences"][0] in example["document"]
        assert other["target_sentences"][-1] in example["document"]
        assert example["document"].startswith(by_id[example["leading"]]["source"][:40].strip())
        assert example["asked"] == ("first" if example["leading"] == main["id"] else "second")


def test_the_breakdown_splits_by_where_the_asked_article_comes(topic):
    rows = [
        {"asked": "first", "rouge1": 0.5, "stas": 1.0},
        {"asked": "second", "rouge1": 0.1, "stas": 0.2},
        {"asked": "second", "rouge1": 0.3, "stas": None},
    ]
    # by hand: second's ROUGE-1 (0.1 + 0.3) / 2; its STAS is missing for one row, so not averaged
    groups = topic.evaluation.breakdown(rows)
    assert groups["asked first"] == {"n": 1, "rouge1": 0.5, "stas": 1.0}
    assert groups["asked second"] == {"n": 2, "rouge1": pytest.approx(0.2)}


@pytest.mark.full_data
def test_which_article_leads_is_a_coin_flip_not_the_topic(full_data_dir):
    from metrics.io import read_jsonl

    examples = super_articles(
        read_jsonl(full_data_dir / "bbc_summary" / "val.jsonl"), seed=0, split="val", dataset="bbc_summary"
    )
    requested_first = sum(e["leading"] == e["sources"][0] for e in examples)
    assert 0.35 * len(examples) < requested_first < 0.65 * len(examples)  # was every example
    other_seed = super_articles(
        read_jsonl(full_data_dir / "bbc_summary" / "val.jsonl"), seed=1, split="val", dataset="bbc_summary"
    )
    assert [e["document"] for e in examples] != [e["document"] for e in other_seed]


def test_a_topic_blind_rule_scores_clearly_below_the_topic_baseline(topic):
    """Sentences 0, 2, 4 of a super-article are the requested article's only when it leads (half the
    time), so STAS falls to about the mean of ~1 and the other topic's ~0.4. Measured on the bundled
    test set (102 examples): baseline 0.993, blind 0.696 (before the coin flip: 0.994 vs 0.992)."""
    from metrics.text import sentences
    from variants.topic import topic_focused_extract

    examples = topic.evaluation.test_examples()
    space, topics = default_assets().space, [e["controls"]["topic"] for e in examples]
    baseline = [topic_focused_extract(e["document"], e["controls"]["topic"], space) for e in examples]
    blind = [" ".join(sentences(e["document"])[0:6:2]) for e in examples]
    baseline_stas, blind_stas = space.stas(baseline, topics).mean(), space.stas(blind, topics).mean()
    assert baseline_stas > 0.95
    assert baseline_stas - blind_stas > 0.2
    assert not any(summary == e["target"] for summary, e in zip(baseline, examples))


def test_gradient_accumulation_does_not_scale_the_loss(data_dir, tmp_path):
    """Four copies of one example: one batch of 4, or 4 accumulated batches of 1, give the same first
    loss (a mean of equal losses), not a 4-fold one (tiny preset, dropout 0, same seed)."""
    import json

    from metrics.io import read_jsonl
    from training.__main__ import main as train

    record = read_jsonl(data_dir / "bbc_summary" / "val.jsonl")[0]
    example = {
        "id": "x",
        "document": record["source"],
        "controls": {"topic": record["topic"]},
        "target": record["target"],
        "dataset": "bbc_summary",
    }
    train_file = tmp_path / "train.jsonl"
    train_file.write_text((json.dumps(example) + "\n") * 4)
    losses = {}
    for batch, steps in ((4, 1), (1, 4)):
        out = tmp_path / f"b{batch}"
        train(
            [
                "topic",
                "--preset",
                "tiny",
                "--method",
                "prepend",
                "--train-file",
                str(train_file),
                "--max-steps",
                "1",
                "--per-device-train-batch-size",
                str(batch),
                "--gradient-accumulation-steps",
                str(steps),
                "--logging-steps",
                "1",
                "--output-dir",
                str(out),
                "--report-to",
                "none",
                "--max-target-length",
                "16",
                "--save-strategy",
                "no",
                "--dataloader-pin-memory",
                "false",
                "--seed",
                "0",
                "--generation-num-beams",
                "2",
            ]
        )
        record_file = json.loads((out / "steersum.json").read_text())
        assert record_file["num_beams"] == 2 and load_summarizer(out).generation["num_beams"] == 2  # as trained
        losses[steps] = next(h["loss"] for h in record_file["loss_history"] if "loss" in h)
    assert losses[4] == pytest.approx(losses[1], rel=1e-3)


def test_the_decoder_prefers_every_document_sentence_whatever_the_topic(topic):
    """Topic's hard constraints bias the path of every document sentence, the same for every topic: the
    topic reaches the summary through the model's tag alone, and the choice reads nothing of the topic
    space that scores STAS (the guard on guidance and constraints)."""
    from metrics.text import sentences
    from variants.topic import DOCUMENT_PATH_BIAS

    sents = sentences(SPORT_DOC)
    sport, business = (topic.constraints({"topic": t}, default_assets()) for t in ("sport", "business"))
    assert sport.prefer(sents) == business.prefer(sents) == sents and len(sents) == 3
    assert sport.prefer_bias == business.prefer_bias == DOCUMENT_PATH_BIAS
    assert (sport.min_words, sport.max_words, sport.keywords) == (None, None, ())


def test_stas_is_scored_with_its_own_judge_never_the_space_the_inputs_and_rules_read(topic, monkeypatch):
    """Swap STAS's judge for another space: the model's inputs, the decoder's paths and the baseline do
    not change (no input or rule reads the judge); the scores follow the judge, whatever space the
    summarizer carries."""
    from metrics.topic_space import TopicSpace

    document = (
        "The striker scored twice as the club won the league match. Shares in the bank fell after profits "
        "dropped. The coach praised the team's defence before the cup final."
    )
    controls = {"topic": "sport"}

    def outputs():
        return (
            [topic.prepare(document, controls, method).text for method in ("tag", "prepend", "prepend-tag")],
            topic.constraints(controls).prefer(document.split(". ")),
            topic.baseline().summarize([document], [controls])[0].text,
        )

    before = outputs()
    judge = TopicSpace.judge()
    stas = topic.score(before[2], document, controls)["stas"].value
    other = TopicSpace.fit(
        ["the bank and its shares and profits", "a match, a goal, a club and a cup final"], ["sport", "business"]
    )  # a different judge: labels swapped on purpose
    monkeypatch.setattr(TopicSpace, "judge", classmethod(lambda cls: other))
    assert outputs() == before
    assert topic.score(before[2], document, controls)["stas"].value != stas
    monkeypatch.setattr(TopicSpace, "judge", classmethod(lambda cls: judge))
    # the summarizer's own space (its assets) never scores: a foreign space changes nothing
    assert topic.score(before[2], document, controls, assets=TopicAssets(other))["stas"].value == stas
    assert judge.fitted_on["data"] == "bbc_summary/val.jsonl"  # articles the systems' space was not fitted on
    assert TopicSpace.default().fitted_on["documents"] != judge.fitted_on["documents"]
