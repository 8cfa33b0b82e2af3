"""scripts/train_on_gpu.py on the CPU with --quick: a compact general summarizer continued (its steps counted
on), compacted and packed in parts, an adapter trained on the expansion of that compact copy and packed."""

import json
import shutil
import sys
import tarfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def gpu_script():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import train_on_gpu

        yield train_on_gpu
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_pack_splits_into_parts_that_join_back(gpu_script, tmp_path, monkeypatch):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(bytes(range(256)) * 40)  # 10,240 bytes
    monkeypatch.setattr(gpu_script, "PART_BYTES", 4096)
    parts = gpu_script.pack(folder, tmp_path / "model.tar", split=True)
    assert [p.name for p in parts] == [f"model.tar.{i:02d}" for i in range(len(parts))] and len(parts) >= 3
    assert all(p.stat().st_size <= 4096 for p in parts) and not (tmp_path / "model.tar").exists()
    joined = tmp_path / "joined.tar"
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    with tarfile.open(joined) as archive:
        assert archive.extractfile("model/weights.bin").read() == bytes(range(256)) * 40
    other = tmp_path / "other"
    shutil.copytree(folder, other)
    for name in (folder, other):  # appended, one archive for several folders
        gpu_script.pack(name, tmp_path / "both.tar")
    with tarfile.open(tmp_path / "both.tar") as archive:
        assert {"model/weights.bin", "other/weights.bin"} <= set(archive.getnames())


def test_quick_run_continues_the_general_summarizer_and_trains_an_adapter_on_what_is_served(gpu_script, tmp_path):
    from transformers import BartForConditionalGeneration

    from store.compact import FINGERPRINT, weights_fingerprint, write_compact
    from training.zoo_models import MODELS, Budget
    from training.zoo_training import build_data
    from variants.base import write_record
    from variants.presets import tiny_bart_config, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    start = tmp_path / "stored-general"
    BartForConditionalGeneration(tiny_bart_config(tokenizer)).save_pretrained(start)
    tokenizer.save_pretrained(start)
    write_record(
        start,
        {
            "variant": "general",
            "method": "plain",
            "steps": 5,
            "train_examples": {"bbc_summary": 4},
            "data_licenses": {"bbc_summary": "x"},
        },
    )
    stored = write_compact(start, tmp_path / "store-general")
    work, out = tmp_path / "work", tmp_path / "out"
    build_data(next(m for m in MODELS if m.variant == "topic"), work, Budget.for_quick())

    gpu_script.main(["--work", str(work), "--out", str(out), "--start", str(stored), "--quick", "--only", "topic"])

    assert sorted(p.name for p in out.iterdir()) == ["adapters-a.tar", "general.tar.00"]
    record = json.loads((work / "general" / "steersum.json").read_text())
    assert record["steps"] == 5 + 2 and [(p["from_step"], p["to_step"]) for p in record["phases"]] == [(0, 5), (5, 7)]
    compact = json.loads((work / "general-int8" / "steersum.json").read_text())
    assert compact[FINGERPRINT] == weights_fingerprint(work / "general") == weights_fingerprint(work / "served")
    with tarfile.open(out / "adapters-a.tar") as archive:
        names = archive.getnames()
    assert "topic-prepend-tag/adapter_model.safetensors" in names
    adapter = json.loads((work / "topic-prepend-tag" / "adapter_config.json").read_text())
    assert Path(adapter["base_model_name_or_path"]).resolve() == (work / "served").resolve()


def test_a_time_limit_stops_training_at_the_first_step_past_it(tmp_path):
    """The limit every trainer takes (``--max-train-seconds``, ``train_general(max_seconds=)``): a step ending
    within it lets training go on, the first one past it stops it; no limit adds no callback."""
    import time

    from transformers import TrainerControl, TrainerState

    from training.seq2seq import DataArguments, TimeLimit, time_limit

    for seconds, stops in ((3600, False), (0.001, True)):
        limit, control = TimeLimit(seconds), TrainerControl()
        limit.on_train_begin(None, TrainerState(), control)
        time.sleep(0.01)
        limit.on_step_end(None, TrainerState(), control)
        assert control.should_training_stop is stops
    assert time_limit(None) is None and isinstance(time_limit(5)[0], TimeLimit)
    train_file = tmp_path / "train.jsonl"
    train_file.write_text("{}\n")
    with pytest.raises(ValueError, match="--max-train-seconds must be positive, got -1"):
        DataArguments(train_file=str(train_file), max_train_seconds=-1)
