"""Test-wide settings: nothing may reach the network. Data comes from tests/fixtures (a tiny local
mirror, so a plain clone passes); tests marked ``full_data`` need ../shared/data and skip without it."""

import os
from pathlib import Path

for var, value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ.setdefault(var, value)

import pytest  # noqa: E402

from hub_cards.cache import add_to_cache  # noqa: E402,F401  (tests import it from here)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
FULL_DATA = ROOT.parent / "shared" / "data"
# Builders called without --data-dir read this mirror, in CI and in a plain clone alike.
os.environ["STEERSUM_DATA"] = str(FIXTURES)

# Under pytest-xdist (pytest.ini runs one worker per core): each worker converts MiniLM into a cache of its
# own, never two into one folder at once, and computes on one thread, so the workers do not oversubscribe
# the cores (one torch job per core).
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if WORKER:
    os.environ.setdefault("STEERSUM_CACHE", str(Path.home() / ".cache" / f"steersum-{WORKER}"))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


# The files whose tests take longest (`pytest --durations`, 2-core AMD EPYC), slowest first: they start
# first, so the last files a pytest-xdist worker takes are short and no worker waits long for another at
# the end (pytest.ini keeps this order: --no-loadscope-reorder). The other files follow in their own order.
SLOWEST_FILES = (
    "test_zoo.py",
    "test_distributed.py",
    "test_hub_cards.py",
    "test_space_browser.py",
    "test_store_export.py",
    "test_persona.py",
    "test_base_model.py",
    "test_sources.py",
    "test_hub_repos.py",
    "test_space.py",
    "test_leaderboard.py",
)


@pytest.fixture(scope="session", autouse=True)
def _empty_store(tmp_path_factory) -> Path:
    """Tests see an empty model store (the Space's catalog, the leaderboard and ``load_summarizer`` read
    it), so what they expect — which models a variant serves, what Compare allows — does not depend on
    the models committed in ``store/``; the committed index is returned for :func:`committed_store`.
    Set once for the whole run, so that module-scoped Services built before any test see it too."""
    import store

    index = tmp_path_factory.mktemp("empty-store") / "index.json"
    index.write_text('{"models": []}\n')
    committed, store.INDEX = store.INDEX, index
    yield committed
    store.INDEX = committed


@pytest.fixture
def committed_store(_empty_store, monkeypatch) -> Path:
    """The committed ``store/index.json`` for a test that checks what the repository ships."""
    import store

    monkeypatch.setattr(store, "INDEX", _empty_store)
    return _empty_store


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The tiny mirror under tests/fixtures (the first rows of each bundled file)."""
    return FIXTURES


@pytest.fixture(scope="session")
def full_data_dir() -> Path:
    """The whole bundled data; tests asking for it carry ``@pytest.mark.full_data``."""
    if not FULL_DATA.is_dir():
        pytest.skip(f"needs the full bundled data at {FULL_DATA} (../shared beside the checkout)")
    return FULL_DATA


@pytest.fixture(autouse=True)
def _whole_data_for_full_data_tests(request):
    """A test marked ``full_data`` reads the whole bundled data through every builder and test set
    (``variants.sources``), not the fixtures; its module-scoped fixtures use :func:`whole_mirror`."""
    if not request.node.get_closest_marker("full_data") or not FULL_DATA.is_dir():
        yield
        return
    from variants import sources

    sources.set_data_dir(FULL_DATA)
    try:
        yield
    finally:
        sources.set_data_dir(None)


def whole_mirror() -> Path:
    """The whole bundled data when present, else the fixtures."""
    return FULL_DATA if FULL_DATA.is_dir() else FIXTURES


def pytest_collection_modifyitems(config, items):
    """The slowest files first (:data:`SLOWEST_FILES`); a ``full_data`` test skips with its reason when
    ../shared/data is absent (a plain clone)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file keeps its order
    if FULL_DATA.is_dir():
        return
    skip = pytest.mark.skip(reason=f"needs the full bundled data at {FULL_DATA}")
    for item in items:
        if "full_data" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def tiny_topic_checkpoint(tmp_path_factory, data_dir) -> Path:
    """A tiny random topic checkpoint (``tag``, two training steps on 8 BBC articles), trained once
    through the training CLI; tests copy it into their own models folder."""
    import json

    from metrics.io import read_jsonl
    from training.__main__ import main as train

    root = tmp_path_factory.mktemp("tiny-topic")
    records = read_jsonl(data_dir / "bbc_summary" / "val.jsonl")[:8]
    train_file = root / "train.jsonl"
    train_file.write_text(
        "".join(
            json.dumps(
                {
                    "id": r["id"],
                    "document": r["source"],
                    "controls": {"topic": r["topic"]},
                    "target": r["target"],
                    "dataset": "bbc_summary",
                }
            )
            + "\n"
            for r in records
        )
    )
    train(
        [
            "topic",
            "--preset",
            "tiny",
            "--method",
            "tag",
            "--train-file",
            str(train_file),
            "--max-steps",
            "2",
            "--per-device-train-batch-size",
            "4",
            "--output-dir",
            str(root / "topic-tiny"),
            "--report-to",
            "none",
            "--max-target-length",
            "16",
            "--save-strategy",
            "no",
            "--dataloader-pin-memory",
            "false",
        ]
    )
    return root / "topic-tiny"


@pytest.fixture
def fresh_process_logits(tmp_path):
    """``logits(folder, **inputs)``: a saved model's logits for ``inputs`` (tensors, passed as keyword
    arguments to ``forward``), computed in a fresh interpreter outside the project with
    ``AutoModelForSeq2SeqLM.from_pretrained(folder, trust_remote_code=True)``: offline, with nothing of
    SteerSum on the path, so custom classes must come from the folder's own code. Returns the logits
    and the module the model class came from."""
    import subprocess
    import sys

    import torch

    code = (
        "import sys, torch\n"
        "from transformers import AutoModelForSeq2SeqLM\n"
        "m = AutoModelForSeq2SeqLM.from_pretrained(sys.argv[1], trust_remote_code=True).eval()\n"
        "with torch.no_grad():\n"
        "    torch.save(m(**torch.load(sys.argv[2])).logits, sys.argv[3])\n"
        "print(type(m).__module__)\n"
    )

    def logits(folder, **inputs):
        torch.save(inputs, tmp_path / "inputs.pt")
        run = subprocess.run(
            [sys.executable, "-c", code, str(folder), str(tmp_path / "inputs.pt"), str(tmp_path / "logits.pt")],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={
                "HF_HUB_OFFLINE": "1",
                "PATH": "/usr/bin:/bin",
                "HOME": str(tmp_path),
                # the same threads as this process: fp32 sums in another order differ in the last bit
                "OMP_NUM_THREADS": str(torch.get_num_threads()),
            },
        )
        assert run.returncode == 0, run.stderr[-3000:]
        return torch.load(tmp_path / "logits.pt"), run.stdout.strip()

    return logits
