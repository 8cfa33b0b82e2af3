"""The Space's generation switches on ``/summarize``, ``/compare`` and ``/sweep`` (keywords appended with a
default, so earlier calls keep working): the control strength ``guidance`` (the model's default γ when it
is not given, a clear error outside 1-10) and ``constraints`` (the decoding rules as served, or the model
alone); through the service and through ``gradio_client``."""

import json
import shutil

import pytest
from gradio_client.exceptions import AppError

from metrics.io import read_jsonl
from variants import REGISTRY, InputError
from variants.seq2seq import save_default_constraints, save_default_strength

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
MODEL = "local/topic-tiny"
SERVED = "local/topic-served"  # the same weights, served with the topic variant's decoding rules


@pytest.fixture(scope="module")
def service(tmp_path_factory, tiny_topic_checkpoint):
    from space.catalog import build_catalog
    from space.service import Service

    root = tmp_path_factory.mktemp("space-guidance")
    shutil.copytree(tiny_topic_checkpoint, root / "checkpoints" / "topic-tiny")
    save_default_strength(root / "checkpoints" / "topic-tiny", 1.5)  # the model's own default γ
    shutil.copytree(root / "checkpoints" / "topic-tiny", root / "checkpoints" / "topic-served")
    save_default_constraints(root / "checkpoints" / "topic-served")
    catalog = root / "catalog.json"
    catalog.write_text(json.dumps({"models": []}))
    return Service(build_catalog(root / "checkpoints", catalog, registry=dict(REGISTRY)))


@pytest.fixture(scope="module")
def client(service):
    import socket

    from gradio_client import Client

    from space.app import build_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo = build_app(service)
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield Client(f"http://127.0.0.1:{port}/", verbose=False)
    demo.close()


@pytest.fixture(scope="module")
def article(data_dir):
    return next(r for r in read_jsonl(data_dir / "bbc_summary" / "test.jsonl") if r["topic"] == "business")


def test_the_service_uses_the_models_default_unless_told(service, article):
    assert service.default_guidance("topic", MODEL) == 1.5
    assert service.summarize(article["source"], "topic", MODEL, {"topic": "sport"})["guidance"] == 1.5
    assert service.summarize(article["source"], "topic", MODEL, {"topic": "sport"}, guidance=3)["guidance"] == 3.0
    with pytest.raises(InputError, match=r"from 1 \(plain generation\) to 10, got 0.5"):
        service.summarize(article["source"], "topic", MODEL, {"topic": "sport"}, guidance=0.5)
    baseline = service.summarize(article["source"], "topic", "baseline", {"topic": "sport"}, guidance=2)
    assert baseline["guidance"] == 1.0 and any("ignores it" in n for n in baseline["notices"])


def test_the_batcher_generates_each_strength_apart():
    from space.batching import Batcher, Switches
    from variants.base import Summarizer, Summary
    from variants.seq2seq import GenerationSettings

    class Recorder(Summarizer):
        variant, name, method = None, "recorder", "none"
        settings = GenerationSettings()

        def __init__(self):
            self.calls = []

        def summarize(self, documents, controls, settings=None, **_):
            self.calls.append((len(documents), (settings or self.settings).control_strength))
            return [Summary(f"{d} at {(settings or self.settings).control_strength}") for d in documents]

    recorder = Recorder()
    batcher = Batcher(recorder)
    batcher._run(
        [("a", {}, _future(), Switches(2.0)), ("b", {}, _future(), Switches()), ("c", {}, _future(), Switches(2.0))]
    )
    assert recorder.calls == [(2, 2.0), (1, 1.0)]


def _future():
    from concurrent.futures import Future

    return Future()


def test_the_api_takes_guidance_as_a_keyword_on_summarize_compare_and_sweep(client, article):
    _, result = client.predict(
        article["source"], "topic", MODEL, '{"topic": "sport"}', guidance=2.5, api_name="/summarize"
    )
    assert result["guidance"] == 2.5
    _, default = client.predict(article["source"], "topic", MODEL, '{"topic": "sport"}', api_name="/summarize")
    assert default["guidance"] == 1.5  # an earlier call, without the keyword, gets the model's default
    rows = client.predict(
        article["source"], "topic", f"baseline, {MODEL}", '{"topic": "sport"}', "", guidance=2, api_name="/compare"
    )
    assert [r["guidance"] for r in rows] == [1.0, 2.0]
    rows = client.predict(article["source"], "topic", MODEL, "topic", "{}", "", guidance=3, api_name="/sweep")
    assert {r["guidance"] for r in rows} == {3.0} and len(rows) == len(
        REGISTRY["topic"].baseline().controls()[0].choices
    )
    with pytest.raises(AppError, match="got 12"):
        client.predict(article["source"], "topic", MODEL, '{"topic": "sport"}', guidance=12, api_name="/summarize")


def test_the_api_switches_the_decoding_rules_on_summarize_compare_and_sweep(client, service, article):
    controls = '{"topic": "sport"}'
    _, served = client.predict(article["source"], "topic", SERVED, controls, api_name="/summarize")
    _, alone = client.predict(article["source"], "topic", SERVED, controls, constraints=False, api_name="/summarize")
    _, plain = client.predict(article["source"], "topic", MODEL, controls, api_name="/summarize")
    assert served["constraints"] is True and alone["constraints"] is False and plain["constraints"] is False
    # the served model with its rules off is the same weights with no rules recorded: the same summary
    assert alone["summary"] == plain["summary"]
    rows = client.predict(
        article["source"], "topic", f"baseline, {SERVED}", controls, "", constraints=False, api_name="/compare"
    )
    assert [r["constraints"] for r in rows] == [False, False]
    assert any("has none to turn off" in n for n in rows[0]["notices"])
    assert rows[1]["summary"] == plain["summary"]
    rows = client.predict(article["source"], "topic", SERVED, "topic", "{}", "", constraints=False, api_name="/sweep")
    assert {r["constraints"] for r in rows} == {False}
    with pytest.raises(AppError, match=r"constraints must be true .* or false .*, got 'maybe'"):
        client.predict(article["source"], "topic", SERVED, controls, constraints="maybe", api_name="/summarize")
    with pytest.raises(InputError, match="got 2"):
        service.summarize(article["source"], "topic", SERVED, controls, constraints=2)
