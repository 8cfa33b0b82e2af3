"""The Space's control strength: the ``guidance`` keyword of ``/summarize``, ``/compare`` and ``/sweep``
(appended with a default, so earlier calls keep working), the model's default γ when it is not
given, and a clear error outside 1-10; through the service and through ``gradio_client``."""

import json
import shutil

import pytest
from gradio_client.exceptions import AppError

from metrics.io import read_jsonl
from variants import REGISTRY, InputError
from variants.seq2seq import save_default_guidance

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*no_silent_downcasting"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
MODEL = "local/topic-tiny"


@pytest.fixture(scope="module")
def service(tmp_path_factory, tiny_topic_checkpoint):
    from space.catalog import build_catalog
    from space.service import Service

    root = tmp_path_factory.mktemp("space-guidance")
    shutil.copytree(tiny_topic_checkpoint, root / "checkpoints" / "topic-tiny")
    save_default_guidance(root / "checkpoints" / "topic-tiny", 1.5)  # the model's own default γ
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
    from space.service import Batcher
    from variants.base import Summarizer, Summary
    from variants.seq2seq import GenerationSettings

    class Recorder(Summarizer):
        variant, name, method = None, "recorder", "none"
        settings = GenerationSettings()

        def __init__(self):
            self.calls = []

        def summarize(self, documents, controls, settings=None, **_):
            self.calls.append((len(documents), (settings or self.settings).guidance))
            return [Summary(f"{d} at {(settings or self.settings).guidance}") for d in documents]

    recorder = Recorder()
    batcher = Batcher(recorder)
    batcher._run([("a", {}, _future(), 2.0), ("b", {}, _future(), None), ("c", {}, _future(), 2.0)])
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
