"""Data through ``datasets`` (variants.sources), committed runtime assets, and a checkout that stands
alone: the exported Space starts and serves every variant from a folder with nothing beside it."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from metrics.io import read_jsonl
from variants import REGISTRY, sources
from variants.sources import SOURCES, load_source

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import smoke_space  # noqa: E402


def fixture_files(data_dir):
    return sorted(data_dir.glob("*/*.jsonl"))


def test_every_fixture_loads_through_datasets_exactly_as_written(data_dir):
    files = fixture_files(data_dir)
    assert {f.parent.name for f in files} == set(SOURCES)  # one fixture per source
    for path in files:
        rows = load_source(path.parent.name, path.stem, data_dir)
        # Byte-identical rows: same keys, same order, no None filled in by Arrow, ints stay ints.
        assert [json.dumps(r, ensure_ascii=False) for r in rows] == list(
            path.read_text(encoding="utf-8").splitlines()
        ), path


@pytest.mark.full_data
def test_fixtures_are_rows_of_the_bundled_files_verbatim_and_in_order(data_dir, full_data_dir):
    for path in fixture_files(data_dir):
        mine = path.read_text(encoding="utf-8").splitlines()
        bundled = full_data_dir.joinpath(path.parent.name, path.name).read_text(encoding="utf-8").splitlines()
        if path.parent.name == "bbc_summary" and path.stem in ("test", "train"):  # the first 6 of each topic
            by_topic = {}
            for line in bundled:
                by_topic.setdefault(json.loads(line)["topic"], []).append(line)
            bundled = [line for line in bundled if line in {x for rows in by_topic.values() for x in rows[:6]}]
        assert bundled[: len(mine)] == mine, path


def test_unknown_dataset_or_split_is_named(data_dir):
    with pytest.raises(ValueError, match="unknown dataset 'cnn'"):
        load_source("cnn", "train", data_dir)
    with pytest.raises(ValueError, match="scitldr: unknown split 'val'; known: train, dev, test"):
        load_source("scitldr", "val", data_dir)


@pytest.fixture
def no_data(monkeypatch, tmp_path):
    """Offline, no STEERSUM_DATA, no ../shared/data beside the checkout."""
    monkeypatch.delenv("STEERSUM_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(sources, "BESIDE_CHECKOUT", tmp_path / "absent")
    sources.set_data_dir(None)


@pytest.mark.parametrize(
    "variant, dataset, online_helps", [("topic", "bbc_summary", False), ("tdsum", "scitldr", True)]
)
def test_build_data_without_network_or_mirror_says_what_to_do(no_data, tmp_path, variant, dataset, online_helps):
    from training.__main__ import main

    with pytest.raises(SystemExit) as stop:
        main(["build-data", variant, "--out", str(tmp_path / "out")])
    message = str(stop.value.code)
    assert message.startswith("error: ") and f"dataset {dataset!r}" in message and "--data-dir" in message
    assert ("go online" in message) == online_helps
    assert not (tmp_path / "out").exists()


def test_data_dir_argument_reads_that_mirror(no_data, tmp_path, data_dir):
    from training.__main__ import main

    main(["build-data", "tdsum", "--out", str(tmp_path / "out"), "--data-dir", str(data_dir)])
    built = [r["id"] for r in read_jsonl(tmp_path / "out" / "val.jsonl")]
    mirrored = [f"scitldr-val-{r['id']}" for r in read_jsonl(data_dir / "scitldr" / "dev.jsonl")]
    # the mirror's dev papers, in order, less those whose TLDR has no word to ask for as a boost
    assert built and built == [i for i in mirrored if i in set(built)]
    sources.set_data_dir(None)


@pytest.mark.full_data
def test_committed_runtime_assets_rebuild_identically(full_data_dir, tmp_path):
    from space.examples import EXAMPLES_FILE, build_examples
    from variants.build_assets import build
    from variants.presets import ASSETS

    sources.set_data_dir(full_data_dir)
    try:
        build(tmp_path)
        examples = build_examples()
    finally:
        sources.set_data_dir(None)
    for name in ("tdsum_default/tfidf_vectorizer.json", "tiny_bpe.json", "common_words.txt"):
        assert (tmp_path / name).read_bytes() == (ASSETS / name).read_bytes(), name
    # The Unigram trainer's EM is not bit-reproducible (seen: log-probabilities up to 4e-4 apart, ties
    # reordered): the same pieces, with scores (log-probabilities around -5 to -15) within 1e-2.
    fresh, committed = (
        dict(map(tuple, json.loads(p.read_text())["model"]["vocab"]))
        for p in (tmp_path / "tiny_unigram.json", ASSETS / "tiny_unigram.json")
    )
    assert set(fresh) == set(committed) and all(abs(fresh[k] - committed[k]) < 1e-2 for k in fresh)
    assert json.dumps(examples, ensure_ascii=False, indent=1) + "\n" == EXAMPLES_FILE.read_text(encoding="utf-8")


def test_exported_space_serves_every_variant_from_a_bare_folder(tmp_path):
    """Export, copy to a folder with nothing beside it, start ``python app.py``,
    call /summarize for all five variants through gradio_client."""
    from hub_cards.__main__ import main as hub_main

    hub_main(["space", "--out", str(tmp_path / "export")])
    bare = tmp_path / "bare" / "space"  # nothing beside it: no ../shared, no checkout
    shutil.copytree(tmp_path / "export", bare)
    env = {k: v for k, v in os.environ.items() if k not in ("STEERSUM_DATA", "PYTHONPATH")}
    env |= {"HF_HUB_OFFLINE": "1", "HOME": str(tmp_path), "NLTK_DATA": str(bare / "nltk_data")}
    summaries = smoke_space.run(["app.py"], bare, env=env)
    assert sorted(summaries) == sorted(REGISTRY) and all(s.strip() for s in summaries.values())


def test_the_committed_common_words_are_wordfreqs_on_every_word_of_the_bundled_abstracts(data_dir):
    # ccs's high-readability rule reads the committed list instead of wordfreq, so that an exported processor
    # prefers the same sentences: on every word it can meet, both must say the same
    from wordfreq import zipf_frequency

    from metrics.text import WORD
    from variants.ccs.baseline import COMMON_ZIPF, common_words, commonness

    texts = [
        r["source"] for name in ("train", "dev", "test") for r in read_jsonl(data_dir / "scitldr" / f"{name}.jsonl")
    ]
    tokens = {w.lower() for text in texts for w in WORD.findall(text) if w.isalpha()}
    assert len(tokens) > 1000
    assert {w for w in tokens if w in common_words()} == {w for w in tokens if zipf_frequency(w, "en") >= COMMON_ZIPF}
    # a hand count: "the" and "results" are common (Zipf 7.7, 5.2), "heteroscedastic" is not
    assert commonness(["The results.", "Heteroscedastic results", ""]) == [1.0, 0.5, 0.0]
