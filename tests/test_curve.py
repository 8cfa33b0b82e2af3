"""A variant model's learning curve (:mod:`training.curve`): one run stopped at each step count, the model a
stage ends with equal to the one a single run holds at that step, each evaluated on val as the model alone,
beside the baseline evaluated once."""

import json

import pytest
import torch
from safetensors.torch import load_file
from test_distributed import tiny_general, write_examples  # noqa: F401 (a fixture)

from training import curve

FLAGS = ["--method", "prepend-tag", "--adapter", "lora", "--max-source-length", "48", "--max-target-length", "12"]
FLAGS += ["--bf16", "False", "--per-device-train-batch-size", "4", "--report-to", "none", "--learning-rate", "1e-2"]
FLAGS += ["--warmup-steps", "0", "--seed", "3"]


def test_a_curve_stopped_at_each_step_holds_what_one_run_holds_and_goes_on_from_its_points(
    tmp_path,
    tiny_general,  # noqa: F811
    monkeypatch,
):
    from training.__main__ import main as training_main

    examples = write_examples(tmp_path / "train.jsonl", lambda r: {"topic": r["topic"]})
    flags = [*FLAGS, "--base-model", str(tiny_general), "--train-file", examples]
    out = tmp_path / "curve"
    curve.main(
        ["topic", "--steps", "1", "3", "--val", examples, "--out", str(out), "--max-samples", "2", "--", *flags]
    )
    # one run of 3 steps at the same constant learning rate
    training_main(
        ["topic", *flags, "--lr-scheduler-type", "constant", "--max-steps", "3", "--output-dir", str(tmp_path / "one")]
    )
    staged, single = (load_file(str(f / "adapter_model.safetensors")) for f in (out / "step-3", tmp_path / "one"))
    assert staged.keys() == single.keys()
    assert all(torch.allclose(staged[k], single[k], atol=1e-6) for k in staged)
    first = load_file(str(out / "step-1" / "adapter_model.safetensors"))
    assert any(not torch.equal(first[k], staged[k]) for k in staged)  # the stages trained on

    written = json.loads((out / curve.CURVE_FILE).read_text())
    assert sorted(written["points"], key=int) == ["1", "3"]
    assert written["baseline"]["n"] == written["points"]["1"]["n"] == 2
    assert {"rouge1", "stas"} <= written["baseline"].keys() and (out / "curve.png").is_file()

    # the same command with a further step trains that stage alone: the others are read back
    trained = []
    monkeypatch.setattr("training.cli.train_command", lambda v, argv: trained.append(argv) or out / "run")
    curve.main(
        ["topic", "--steps", "1", "3", "4", "--val", examples, "--out", str(out), "--max-samples", "2", "--", *flags]
    )
    assert len(trained) == 1 and trained[0][trained[0].index("--max-steps") + 1] == "4"
    assert sorted(json.loads((out / curve.CURVE_FILE).read_text())["points"], key=int) == ["1", "3", "4"]
    # a metric the report lacks is refused before any training
    with pytest.raises(SystemExit, match="--metrics nope: not in the report"):
        curve.main(
            ["topic", "--steps", "5", "--val", examples, "--out", str(out), "--max-samples", "2"]
            + ["--metrics", "nope", "--", *flags]
        )
    assert len(trained) == 1
    # other inputs would mix two runs in one curve: refused, with what differs
    with pytest.raises(SystemExit, match="made with other max_samples, flags"):
        curve.main(
            ["topic", "--steps", "5", "--val", examples, "--out", str(out), "--max-samples", "3", "--", "--seed", "4"]
        )
    assert len(trained) == 1


def test_the_curve_sets_the_steps_and_folder_itself(tmp_path):
    with pytest.raises(ValueError, match="--max-steps: set by the curve"):
        curve.stage_flags(["--method", "tag", "--max-steps", "5"], tmp_path, 2)
    flags = curve.stage_flags(["--lr-scheduler-type", "linear"], tmp_path, 2)
    assert "constant_with_warmup" not in flags and flags[flags.index("--max-steps") + 1] == "2"


def test_a_curve_runs_in_one_process(tmp_path, monkeypatch):
    val = tmp_path / "val.jsonl"
    val.write_text("")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(SystemExit, match="a curve runs in one process"):
        curve.main(["topic", "--steps", "1", "--val", str(val), "--out", str(tmp_path / "c")])


def test_steps_must_rise(tmp_path):
    val = tmp_path / "val.jsonl"
    val.write_text("")
    with pytest.raises(SystemExit, match="--steps must rise from 1 up, got 3 2"):
        curve.main(["topic", "--steps", "3", "2", "--val", str(val), "--out", str(tmp_path / "c")])
