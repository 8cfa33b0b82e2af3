"""The Space: catalog, service, views, and every API endpoint through ``gradio_client`` on a server
launched on 127.0.0.1 (the registered variants' baselines, a tiny trained topic checkpoint, and a
probe variant with one control of every kind, which shows the Space needs no per-variant code)."""

import json
import shutil
import socket
import threading
import time

import pytest

from metrics.io import read_jsonl
from metrics.text import sentences
from variants import REGISTRY, InputError
from variants.base import Control, Paper, Score, Summarizer, Summary, Variant, check_document, write_record

# gradio's queue calls pandas options that pandas 3 deprecates; not ours to fix
GRADIO_PANDAS_WARNINGS = [
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
pytestmark = GRADIO_PANDAS_WARNINGS


# --- a probe variant: every control kind, a score whose value is easy to compute by hand ---------
class ProbeBaseline(Summarizer):
    name, method = "baseline: first sentences", "extractive"

    def __init__(self, variant):
        self.variant = variant

    def summarize(self, documents, controls, **_):
        out = []
        for document, given in zip(documents, controls):
            checked = self.variant.validate(given)
            out.append(Summary(" ".join(sentences(check_document(document))[: checked["sentences"]])))
        return out


class ProbeVariant(Variant):
    id, title, description = "probe", "Probe", "Test variant with one control of each kind."
    paper = Paper("A probe", "Nobody", 2024, "https://example.org", "@misc{probe}")
    methods = ("extractive",)

    def controls_for(self, assets=None):
        return (
            Control("style", "choice", "closed choice", choices=("short", "long"), required=True),
            Control("word", "choice", "open choice", choices=("alpha", "beta"), open=True),
            Control("note", "text", "free text"),
            Control("keywords", "keywords", "words the summary should contain"),
            Control("sentences", "integer", "sentences to keep", default=2, minimum=1, maximum=5),
            Control("history", "history", "titles the user read", required=True),
        )

    def baseline(self):
        return ProbeBaseline(self)

    def score(self, summary, document, controls, reference=None, assets=None):
        keywords = controls.get("keywords", [])
        found = {k: float(k.lower() in summary.lower()) for k in keywords}
        recall = sum(found.values()) / len(found) if found else None
        return {"keyword_recall": Score(recall, "share of the keywords found in the summary", {"found": found})}

    def evidence(self, summary, controls, assets=None):
        return [k for k in controls.get("keywords", []) if k.lower() in summary.lower()]


PROBE = {"style": "short", "history": ["Title one", "Title two"]}
SPORT = (
    "The striker scored twice as the club won the league match on Saturday. Shares in the bank fell after "
    "profits dropped. The coach praised the team's defence before the cup final."
)


# --- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def models_dir(tmp_path_factory, tiny_topic_checkpoint):
    """A models folder with a tiny topic checkpoint (a few training steps) and a foreign one."""
    models = tmp_path_factory.mktemp("space") / "checkpoints"
    shutil.copytree(tiny_topic_checkpoint, models / "topic-tiny")
    (models / "alien").mkdir()
    write_record(models / "alien", {"variant": "alien", "method": "x"})
    return models


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("catalog") / "catalog.json"
    path.write_text(
        json.dumps({"models": [{"repo": "steersum-test/not-here", "revision": "0" * 40, "variant": "topic"}]})
    )
    return path


@pytest.fixture(scope="module")
def service(models_dir, catalog_file):
    from space.catalog import build_catalog
    from space.service import Service

    return Service(build_catalog(models_dir, catalog_file, registry={**REGISTRY, "probe": ProbeVariant()}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def url(service):
    from space.app import build_app

    demo = build_app(service)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


@pytest.fixture(scope="module")
def client(url):
    from gradio_client import Client

    return Client(url, verbose=False)


@pytest.fixture(scope="module")
def article(data_dir):
    return next(r for r in read_jsonl(data_dir / "bbc_summary" / "test.jsonl") if r["topic"] == "business")


# --- pure functions -------------------------------------------------------------------------
def test_highlight_marks_whole_words_and_phrases_case_insensitively():
    from space.service import highlight

    assert highlight("Bank shares fell; banks rallied in New York.", ["bank", "new york"]) == [
        ("Bank", "evidence"),
        (" shares fell; banks rallied in ", None),
        ("New York", "evidence"),
        (".", None),
    ]
    assert highlight("no match", []) == [("no match", None)]


def test_topic_evidence_is_the_summarys_topic_terms():
    topic = REGISTRY["topic"]
    sport = topic.evidence(SPORT, {"topic": "sport"})
    business = topic.evidence(SPORT, {"topic": "business"})
    assert {"league", "match"} <= set(sport) and "Shares" in business and "league" not in business
    assert all(word in SPORT for word in sport + business)  # words as written in the summary


def test_parse_controls_and_clip_document():
    from space.inputs import MAX_DOCUMENT_CHARS, clip_document, parse_controls

    assert parse_controls('{"topic": "sport"}') == {"topic": "sport"} and parse_controls("") == {}
    with pytest.raises(InputError, match="not valid JSON"):
        parse_controls("{topic: sport")
    with pytest.raises(InputError, match="must be a JSON object"):
        parse_controls('["sport"]')
    text, notices = clip_document("word " * 20_000)  # 100,000 characters, 99,999 once stripped
    # the cut keeps whole words: 20,000 / 5 = 4,000 "word " units, less the trailing space = 19,999
    assert MAX_DOCUMENT_CHARS == 20_000 and len(text) == 19_999 and text.endswith("word")
    assert notices == ["the document has 99,999 characters; only the first 19,999 were summarized"]
    assert clip_document("  short text ") == ("short text", [])


def test_batcher_gathers_concurrent_requests_and_isolates_a_bad_one():
    from space.batching import Batcher

    class Slow(ProbeBaseline):
        calls = []

        def summarize(self, documents, controls, **_):
            self.calls.append(len(documents))
            time.sleep(0.05)
            return super().summarize(documents, controls)

    batcher = Batcher(Slow(ProbeVariant()), max_wait=0.02, max_batch=16)
    results, errors = [], []

    def ask(document):
        try:
            results.append(batcher.submit([document], [{**PROBE, "sentences": 1}])[0].text)
        except InputError as err:
            errors.append(str(err))

    threads = [threading.Thread(target=ask, args=(f"Sentence {i}. More.",)) for i in range(7)]
    threads.append(threading.Thread(target=ask, args=("   ",)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [f"Sentence {i}." for i in range(7)] and errors == [
        "document is empty: give the text to summarize"
    ]
    # 8 requests arriving within the 20 ms wait share a call; the failing batch was re-run one by one
    assert Slow.calls[0] > 1 and sum(Slow.calls) == Slow.calls[0] + 8


def test_model_cache_evicts_the_least_recently_used():
    from space.batching import ModelCache
    from space.catalog import Entry

    loads = []
    entries = [
        Entry("probe", name, name, "local", load=lambda n=name: loads.append(n) or ProbeBaseline(ProbeVariant()))
        for name in "abc"
    ]
    cache = ModelCache(max_models=2)
    for entry in (entries[0], entries[1], entries[0], entries[2], entries[0], entries[1]):
        cache.get(entry)
    # a, b loaded; a reused; c evicts b (least recent); a reused; b loaded again, evicting c
    assert loads == ["a", "b", "c", "b"] and cache.loaded() == [("probe", "a"), ("probe", "b")]


def test_catalog_sources_and_their_reasons(models_dir, catalog_file, tmp_path):
    from space.catalog import build_catalog, read_catalog_file

    seen = {}

    def fake_download(repo, revision):
        seen[repo] = revision
        return str(models_dir / "topic-tiny")

    catalog = build_catalog(models_dir, catalog_file, download=fake_download)
    by_model = {e.model: e for e in catalog.entries}
    assert {"baseline", "local/topic-tiny", "local/alien", "steersum-test/not-here"} <= set(by_model)
    assert "not registered" in by_model["local/alien"].reason
    hub = by_model["steersum-test/not-here"]
    assert hub.available and seen == {"steersum-test/not-here": "0" * 40}
    assert hub.load.keywords == {"trust_remote_code": True}  # only catalog ids run remote code
    assert "trust_remote_code" not in by_model["local/topic-tiny"].load.keywords
    offline = {e.model: e for e in build_catalog(None, catalog_file).entries}  # HF_HUB_OFFLINE=1 in conftest
    assert offline["steersum-test/not-here"].reason.startswith("not reachable")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"models": [{"repo": "a/b", "variant": "topic"}]}))
    with pytest.raises(ValueError, match="model 1: field 'revision'"):
        read_catalog_file(bad)


def test_views_turn_scores_into_a_table_and_chart_rows():
    from space.views import chart_frame, metrics_markdown, table_frame

    scores = {
        "stas": {"value": 0.5, "meaning": "topic affinity", "details": {"affinity": {"sport": 0.2, "tech": 0.4}}},
        "rouge1": {"value": None, "meaning": "overlap", "details": None},
    }
    frame = chart_frame(scores)
    assert frame.values.tolist() == [["sport", 0.2, "stas affinity"], ["tech", 0.4, "stas affinity"]]
    marked = chart_frame(scores, {"topic": "tech"})  # the requested topic's bar is a series of its own
    assert marked["series"].tolist() == ["stas affinity", "stas affinity (requested)"]
    assert chart_frame({"rouge1": scores["rouge1"]}).empty  # nothing to plot: the app hides the chart
    from space.views import REQUESTED_COLOUR, chart_colours

    colours = chart_colours(marked)  # the requested bar keeps one colour whatever came before it
    assert colours["stas affinity (requested)"] == REQUESTED_COLOUR != colours["stas affinity"]
    assert chart_colours(chart_frame(scores, {"topic": "sport"})) == colours
    text = metrics_markdown({"scores": scores, "notices": ["cut"]})
    assert text.splitlines()[:2] == ["- **stas = 0.500** — topic affinity", "- **rouge1 = —** — overlap"]
    assert text.endswith("> ⚠ cut")
    table = table_frame([{"model": "m", "summary": "s", "scores": scores}], "model")
    assert table.columns.tolist() == ["model", "stas", "rouge1", "summary"] and table.values.tolist() == [
        ["m", "0.500", "—", "s"]
    ]


def test_every_control_kind_has_a_widget_and_values_come_back_typed(service):
    import gradio as gr

    from space.widgets import WIDGETS, ControlPanel

    kinds = {c.kind for v in service.catalog.registry.values() for c in v.controls_for(None)}
    assert kinds <= set(WIDGETS)
    with gr.Blocks():
        panel = ControlPanel(service, "probe")
    values = [None] * (len(panel.all) - len(ProbeVariant().controls)) + ["long", "gamma", "", ["x"], 3.0, "A\n\n B "]
    assert panel.controls("probe", tuple(values)) == {
        "style": "long",
        "word": "gamma",
        "keywords": ["x"],
        "sentences": 3,
        "history": ["A", "B"],
    }


def test_user_text_is_escaped_for_markdown_and_toasts():
    from space.suggest import suggestions_markdown
    from space.views import escape_html, escape_markdown, metrics_markdown

    payload = "<img src=x onerror=alert(1)>"
    assert escape_html(payload) == "&lt;img src=x onerror=alert(1)&gt;"
    assert (
        escape_markdown(payload + " *b* [l](u) `c`") == r"&lt;img src=x onerror=alert\(1\)&gt; \*b\* \[l\]\(u\) \`c\`"
    )
    assert "<img" not in metrics_markdown({"scores": {}, "notices": [f"unknown {payload}"]})
    assert "<img" not in suggestions_markdown({"entity": [payload]})


def test_optional_controls_can_be_left_unset(service):
    """A slider always has a value (the CCS length slider sent bin 0 on every run): optional choices and
    short integer ranges are dropdowns whose "not set" leaves the control out."""
    import gradio as gr

    from space.views import NOT_SET
    from space.widgets import ControlPanel

    with gr.Blocks():
        panel = ControlPanel(service, "ccs")
    ccs = {c.name: w for c, w in panel.widgets["ccs"]}
    assert ccs["length"].value == NOT_SET and ccs["length"].choices[0] == (NOT_SET, NOT_SET)
    assert [v for _, v in ccs["length"].choices[1:]] == [0, 1, 2, 3, 4]
    assert ccs["readability"].value == NOT_SET and ccs["focus"].value == NOT_SET
    start = sum(
        len(pairs)
        for v, pairs in panel.widgets.items()
        if list(panel.widgets).index(v) < list(panel.widgets).index("ccs")
    )
    values = [None] * len(panel.all)
    values[start : start + 4] = [NOT_SET, [], NOT_SET, NOT_SET]
    assert panel.controls("ccs", tuple(values)) == {}
    values[start : start + 4] = [2, ["bank"], "high", NOT_SET]
    assert panel.controls("ccs", tuple(values)) == {"length": 2, "keywords": ["bank"], "readability": "high"}


@pytest.mark.parametrize("variant_id", sorted(REGISTRY))
def test_every_variant_has_labelled_examples_its_baseline_accepts(variant_id):
    from space.examples import variant_examples

    variant = REGISTRY[variant_id]
    examples = variant_examples(variant)
    assert examples and all(e.label and e.document.strip() for e in examples)
    for example in examples:
        variant.validate(example.controls, variant.baseline().assets)  # raises if a control does not fit
    if variant_id == "topic":  # a two-topic article, once for each of its topics
        mixed = [e for e in examples if e.label.startswith("two topics")]
        assert len(mixed) == 2 and mixed[0].document == mixed[1].document
        assert mixed[0].controls["topic"] != mixed[1].controls["topic"]


def test_api_help_lists_every_endpoint_at_this_pages_address(client):
    from types import SimpleNamespace

    from space.texts import api_help, page_url

    endpoints = set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    text = api_help(page_url(SimpleNamespace(headers={"host": "example.org:8080"})))
    assert 'Client("http://example.org:8080/")' in text and "7860" not in text
    assert all(f"`{name}`" in text for name in endpoints), endpoints
    proxied = SimpleNamespace(
        headers={"host": "10.0.0.1:7860", "x-forwarded-host": "x.hf.space", "x-forwarded-proto": "https"}
    )
    assert page_url(proxied) == "https://x.hf.space/"


def test_launch_address_flags_then_gradio_variables_then_defaults(monkeypatch):
    from space.__main__ import arguments

    monkeypatch.delenv("GRADIO_SERVER_NAME", raising=False)
    monkeypatch.delenv("GRADIO_SERVER_PORT", raising=False)
    assert (arguments([]).host, arguments([]).port) == ("127.0.0.1", 7860)
    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "8123")
    assert (arguments([]).host, arguments([]).port) == ("0.0.0.0", 8123)
    assert (arguments(["--host", "127.0.0.2", "--port", "9000"]).host, arguments(["--port", "9000"]).port) == (
        "127.0.0.2",
        9000,
    )


def test_space_dtype_flag_sets_every_loaded_models_generation_dtype(models_dir, monkeypatch, capsys):
    from space.__main__ import arguments
    from space.catalog import build_catalog
    from space.service import Service

    assert arguments([]).dtype is None and arguments(["--dtype", "int8"]).dtype == "int8"
    with pytest.raises(SystemExit):
        arguments(["--dtype", "fp16"])  # argparse names the allowed choices
    monkeypatch.setenv("STEERSUM_DTYPE", "int8")
    assert arguments([]).dtype == "int8" and arguments(["--dtype", "float32"]).dtype == "float32"
    monkeypatch.setenv("STEERSUM_DTYPE", "fp16")
    with pytest.raises(SystemExit):
        arguments([])
    assert "STEERSUM_DTYPE='fp16': choose from auto, bfloat16, float32, int8" in capsys.readouterr().err
    int8 = Service(build_catalog(models_dir, None), dtype="int8")
    own = Service(build_catalog(models_dir, None)).summarizer("topic", "local/topic-tiny").settings
    assert own.dtype == "float32" and int8.summarizer("topic", "local/topic-tiny").settings == own.but(dtype="int8")
    assert isinstance(int8.summarize(SPORT, "topic", "local/topic-tiny", {"topic": "sport"})["summary"], str)


def test_exported_app_reads_gradio_variables_then_port(monkeypatch, tmp_path):
    import runpy
    import sys

    from hub_cards.space import APP

    seen = []
    monkeypatch.setattr(runpy, "run_module", lambda *args, **kwargs: seen.append(list(sys.argv)))
    monkeypatch.setattr(sys, "path", list(sys.path))
    app = tmp_path / "app.py"
    app.write_text(APP.format(nltk_dir="nltk_data"))
    for env, expected in (
        ({"PORT": "7000"}, ["0.0.0.0", "7000"]),
        ({"PORT": "7000", "GRADIO_SERVER_PORT": "7001", "GRADIO_SERVER_NAME": "127.0.0.1"}, ["127.0.0.1", "7001"]),
    ):
        for name in ("PORT", "GRADIO_SERVER_PORT", "GRADIO_SERVER_NAME"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(sys, "argv", ["app.py"])
        exec(compile(app.read_text(), str(app), "exec"), {"__file__": str(app)})
        assert seen[-1][1:] == ["--host", expected[0], "--port", expected[1]]
    monkeypatch.setattr(sys, "argv", ["app.py", "--port", "9000"])  # a flag given to app.py still wins
    exec(compile(app.read_text(), str(app), "exec"), {"__file__": str(app)})
    assert seen[-1][-2:] == ["--port", "9000"]


# --- the API, through gradio_client ------------------------------------------------------------
def test_variants_endpoint_lists_the_catalog_and_schemas(client):
    listing = client.predict(api_name="/variants")["variants"]
    assert set(REGISTRY) | {"probe"} == set(listing)
    for variant in listing.values():
        assert any(m["model"] == "baseline" and m["available"] for m in variant["models"])
    topic_models = {m["model"]: m for m in listing["topic"]["models"]}
    assert topic_models["local/topic-tiny"]["available"]
    assert not topic_models["steersum-test/not-here"]["available"]
    assert topic_models["steersum-test/not-here"]["reason"].startswith("not reachable")
    assert [c["kind"] for c in listing["probe"]["controls"]] == [
        "choice",
        "choice",
        "text",
        "keywords",
        "integer",
        "history",
    ]


def example_controls(variant: Variant) -> dict | None:
    """Controls a variant's baseline accepts: its card's example, else the first choice / minimum of
    each required control (None when a required control needs free text)."""
    facts = variant.card_facts()
    if "example_controls" in facts:
        return facts["example_controls"]
    controls = {}
    for control in variant.controls_for(None):
        if control.required and control.kind == "choice" and control.choices:
            controls[control.name] = control.choices[0]
        elif control.required and control.kind == "integer":
            controls[control.name] = control.minimum or 0
        elif control.required:
            return None
    return controls


@pytest.mark.parametrize("variant_id", sorted(REGISTRY))
def test_every_registered_variant_serves_its_baseline(client, article, variant_id):
    variant = REGISTRY[variant_id]
    controls = example_controls(variant)
    if controls is None:
        pytest.skip(f"{variant_id}: a required control needs free text and its card gives no example_controls")
    document = variant.card_facts().get("example_document") or article["source"]
    summary, result = client.predict(
        document, variant_id, "baseline", json.dumps(controls), article["target"], api_name="/summarize"
    )
    assert summary.strip() and result["variant"] == variant_id and result["model"] == "baseline"
    assert all(score["meaning"] for score in result["scores"].values())  # every score says what it means


def test_summarize_baseline_scores_and_evidence(client, article):
    summary, result = client.predict(
        article["source"], "topic", "baseline", '{"topic": "business"}', article["target"], api_name="/summarize"
    )
    assert summary == result["summary"] and summary
    assert all(s in article["source"] for s in sentences(summary))  # extractive
    stas = result["scores"]["stas"]
    assert 0.0 <= stas["value"] <= 1.0 and stas["meaning"]  # STAS is a cosine over the best topic's cosine
    assert set(stas["details"]["affinity"]) == set(REGISTRY["topic"].baseline().assets.space.topics)
    assert 0.0 < result["scores"]["rouge1"]["value"] <= 1.0  # a reference was given, and the summary overlaps it
    assert result["evidence"] and all(word in summary for word in result["evidence"])


def test_summarize_with_the_tiny_checkpoint_and_compare(client, article):
    summary, result = client.predict(
        article["source"], "topic", "local/topic-tiny", '{"topic": "sport"}', api_name="/summarize"
    )
    assert isinstance(summary, str) and result["model"] == "local/topic-tiny" and "stas" in result["scores"]
    rows = client.predict(
        article["source"], "topic", "baseline, local/topic-tiny", '{"topic": "sport"}', "", api_name="/compare"
    )
    assert [r["model"] for r in rows] == ["baseline", "local/topic-tiny"]
    assert rows[0]["summary"] != rows[1]["summary"]  # extraction vs a random tiny model


def test_sweep_moves_the_summary_with_the_topic(client, data_dir):
    from space.examples import load_examples

    mixed = load_examples()[-1][0]  # sentences of a business and a tech article in turn
    rows = client.predict(mixed, "topic", "baseline", "topic", "{}", "", api_name="/sweep")
    topics = REGISTRY["topic"].baseline().assets.space.topics
    assert [r["value"] for r in rows] == list(topics)
    assert len({r["summary"] for r in rows}) > 1
    assert {r["controls"]["topic"] for r in rows} == set(topics)


def test_score_endpoint_computes_the_metric_for_a_given_summary(client):
    controls = json.dumps({**PROBE, "keywords": ["alpha", "gamma"]})
    scores = client.predict(
        "alpha and beta", "Alpha beta gamma delta.", "probe", controls, "", "baseline", api_name="/score"
    )["scores"]
    assert scores["keyword_recall"]["value"] == 0.5  # "alpha" found, "gamma" not: 1 / 2


def test_keywords_absent_from_the_document_are_allowed_and_scored(client):
    controls = json.dumps({**PROBE, "keywords": ["zebra"]})
    _, result = client.predict(SPORT, "probe", "baseline", controls, api_name="/summarize")
    assert result["scores"]["keyword_recall"]["value"] == 0.0 and result["evidence"] == []


def test_a_100k_character_document_is_truncated_with_a_notice(client):
    _, result = client.predict(
        SPORT + " " + "word " * 20_000, "probe", "baseline", json.dumps(PROBE), api_name="/summarize"
    )
    assert any("only the first" in n for n in result["notices"])


def test_a_2mb_reference_is_clipped_with_a_notice(client):
    _, result = client.predict(
        SPORT, "probe", "baseline", json.dumps(PROBE), "striker " * 250_000, api_name="/summarize"
    )
    # 2,000,000 characters, 1,999,999 once stripped; cut at the last whole word within 5,000: 625 x "striker "
    assert "the reference has 1,999,999 characters; only the first 4,999 were scored against" in result["notices"]


def test_score_bounds_the_summary_and_the_keywords(client):
    from space.inputs import MAX_LIST_ITEMS, MAX_SUMMARY_CHARS

    keywords = ["alpha"] + [f"word{i}" for i in range(99)]
    result = client.predict(
        "alpha " * 2_000,
        "Alpha beta.",
        "probe",
        json.dumps({**PROBE, "keywords": keywords}),
        "",
        "baseline",
        api_name="/score",
    )
    assert MAX_SUMMARY_CHARS == 5_000 and MAX_LIST_ITEMS == 50
    # 2,000 x "alpha " stripped = 11,999 characters; 5,000 ends inside word 834, so 833 words are kept:
    # 833 x 6 - the trailing space = 4,997
    assert "the summary has 11,999 characters; only the first 4,997 were scored" in result["notices"]
    assert "control 'keywords' has 100 entries; only the first 50 were used" in result["notices"]
    assert len(result["controls"]["keywords"]) == 50
    assert result["scores"]["keyword_recall"]["value"] == 1 / 50  # "alpha" of the 50 kept


def test_history_titles_are_bounded_in_number_and_length(client):
    history = ["t" * 1_000] + [f"Title {i}" for i in range(79)]
    _, result = client.predict(
        SPORT, "probe", "baseline", json.dumps({**PROBE, "history": history}), api_name="/summarize"
    )
    assert "control 'history' has 80 entries; only the first 50 were used" in result["notices"]
    assert "control 'history': entries past 300 characters were cut" in result["notices"]
    assert len(result["controls"]["history"]) == 50 and len(result["controls"]["history"][0]) == 300


def test_sweep_explains_a_variant_with_nothing_to_sweep(client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="variant 'entity' has no control with a list of values to sweep"):
        client.predict(SPORT, "entity", "baseline", "", '{"entity": "the coach"}', "", api_name="/sweep")


BAD_INPUT = [
    ("\x00\x01\x02 \x1f", "topic", "baseline", '{"topic": "sport"}', "document has no letters or digits"),
    ("   ", "topic", "baseline", '{"topic": "sport"}', "document is empty"),
    (SPORT, "nope", "baseline", "{}", "unknown variant 'nope'; allowed: .*topic"),
    (
        SPORT,
        "topic",
        "nope",
        '{"topic": "sport"}',
        "unknown model 'nope' for variant 'topic'; allowed: baseline, local/topic-tiny",
    ),
    (SPORT, "topic", "steersum-test/not-here", '{"topic": "sport"}', "is unavailable: not reachable"),
    (SPORT, "topic", "baseline", '{"topic": "qwzxvb"}', "unseen topic 'qwzxvb'.*pick one of: business"),
    (SPORT, "topic", "baseline", "{topic: sport", "controls is not valid JSON"),
    (SPORT, "topic", "baseline", '{"topic": "sport", "colour": "red"}', r"unknown control\(s\) colour"),
    (
        SPORT,
        "probe",
        "baseline",
        json.dumps({**PROBE, "style": "medium"}),
        "unknown style 'medium'; allowed: short, long",
    ),
    (SPORT, "probe", "baseline", json.dumps({**PROBE, "sentences": 9}), r"'sentences' must be an integer in \[1, 5\]"),
    (SPORT, "probe", "baseline", json.dumps({**PROBE, "history": []}), "control 'history' is required"),
]


@pytest.mark.parametrize("document, variant, model, controls, message", BAD_INPUT)
def test_bad_input_is_an_error_naming_the_problem(client, document, variant, model, controls, message):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match=message):
        client.predict(document, variant, model, controls, api_name="/summarize")
    summary, _ = client.predict(SPORT, "probe", "baseline", json.dumps(PROBE), api_name="/summarize")
    assert summary  # the server keeps serving


def test_load_16_concurrent_clients_10_requests_each(url, service):
    from gradio_client import Client

    clients = [Client(url, verbose=False) for _ in range(16)]
    failures, answers = [], []

    def run(client, number):
        for i in range(10):
            try:
                summary, _ = client.predict(
                    f"Client {number} request {i}. {SPORT}",
                    "probe",
                    "baseline",
                    json.dumps({**PROBE, "sentences": 1}),
                    api_name="/summarize",
                )
                answers.append(summary == f"Client {number} request {i}.")
            except Exception as err:  # any failure counts
                failures.append(repr(err))

    threads = [threading.Thread(target=run, args=(c, n)) for n, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and len(answers) == 160 and all(answers)  # every client got its own summary back
    batcher = service.cache.get(service.catalog.get("probe", "baseline"))
    assert max(batcher.batch_sizes) > 1  # concurrent requests shared summarize calls
