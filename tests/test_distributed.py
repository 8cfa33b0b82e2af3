"""Training on many processes (training/distributed.py): two CPU processes under ``torchrun`` train as one
process with the doubled batch, a launch that asked for two and got one stops saying why, and no
architecture leaves a trainable weight out of a step (DDP runs without searching for unused ones)."""

import json
import os
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file

from metrics.io import read_jsonl
from training.distributed import LaunchError, check_processes
from training.seq2seq import dropped_controls

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
SEED, CONTROL_DROPOUT, STEPS, PER_DEVICE, TARGET_TOKENS = 0, 0.4, 3, 2, 8
# Flags both runs share: a fixed learning rate from the first step, batches in file order, a fixed target
# length. The model's loss is the mean over its batch's target tokens and DDP averages the processes'
# gradients, so two processes equal one with both batches only when each holds as many target tokens:
# every target is cut to TARGET_TOKENS. The tiny presets and --adapter-dropout 0 draw no dropout masks,
# and control dropout is drawn per example from --seed, the same in every process.
SHARED = [
    "--bf16",  # fp32 on every CPU: bf16 autocast, the default on CPUs with AVX512-BF16, rounds the two runs apart
    "False",
    "--max-steps",
    str(STEPS),
    "--max-train-samples",
    str(2 * PER_DEVICE * 2),
    "--max-source-length",
    "64",
    "--max-target-length",
    str(TARGET_TOKENS),
    "--learning-rate",
    "1e-3",
    "--warmup-steps",
    "0",
    "--lr-scheduler-type",
    "constant",
    "--train-sampling-strategy",
    "sequential",
    "--logging-steps",
    "1",
    "--save-strategy",
    "steps",
    "--save-steps",
    str(STEPS),
    "--seed",
    str(SEED),
    "--report-to",
    "none",
    "--control-dropout",
    str(CONTROL_DROPOUT),
    "--dataloader-pin-memory",
    "false",
]


def launch(*command: str) -> subprocess.CompletedProcess:
    """A launcher command from the repository root, as a user types it (offline, this checkout on the path)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([*command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def torchrun(*training_args: str) -> subprocess.CompletedProcess:
    # --standalone: a free local port, so runs side by side (pytest-xdist) never meet
    return launch(
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "training",
        *training_args,
    )


def write_examples(path, controls, lead: str = "") -> str:
    """The first eight BBC fixture articles as training examples, ``controls(record)`` each, ``lead`` first."""
    records = read_jsonl(ROOT / "tests" / "fixtures" / "bbc_summary" / "val.jsonl")[:8]
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": r["id"],
                    "document": lead + r["source"],
                    "controls": controls(r),
                    "target": r["target"],
                    "dataset": "bbc_summary",
                }
            )
            + "\n"
            for r in records
        )
    )
    return str(path)


def norm(tensors) -> float:
    """The norm of several tensors taken as one vector."""
    return float(sum(t.double().pow(2).sum() for t in tensors) ** 0.5)


def test_the_control_dropout_drawn_leaves_one_process_a_first_batch_without_controls():
    # The case DDP's reduction must survive: in step 1 process 0 holds two examples with controls,
    # process 1 two without (a batch that never reaches a control-only weight, if a model had one).
    dropped = dropped_controls(2 * PER_DEVICE * 2, CONTROL_DROPOUT, SEED)
    assert dropped[:PER_DEVICE] == [False] * PER_DEVICE and dropped[PER_DEVICE : 2 * PER_DEVICE] == [True] * PER_DEVICE


def check_two_processes_equal_one(one, two, weights_file, start):
    """The two-process run: world size 2, one checkpoint, every step's loss and the weights as the
    one-process run's within 1e-5 relative. The weights' difference is measured against what training
    changed (the weights less ``start``, the weights before training), not against the weights' size."""
    record_one, record_two = (json.loads((d / "steersum.json").read_text()) for d in (one, two))
    assert record_two["hyperparameters"]["world_size"] == 2 and record_one["hyperparameters"]["world_size"] == 1
    assert (
        record_two["hyperparameters"]["total_train_batch_size"]
        == record_one["hyperparameters"]["total_train_batch_size"]
        == 2 * PER_DEVICE
    )
    assert json.loads((two / "training_args.json").read_text())["ddp_find_unused_parameters"] is False
    checkpoints = sorted(p.name for p in two.glob("checkpoint-*"))
    assert checkpoints == [f"checkpoint-{STEPS}"]  # one, written by process 0; each process keeps its RNG state
    assert {p.name for p in (two / checkpoints[0]).glob("rng_state*")} == {"rng_state_0.pth", "rng_state_1.pth"}
    losses = [[h["loss"] for h in r["loss_history"] if "loss" in h] for r in (record_one, record_two)]
    assert len(losses[0]) == len(losses[1]) == STEPS
    for a, b in zip(*losses):
        assert abs(a - b) <= 1e-5 * abs(a), losses
    weights_one, weights_two = (load_file(str(d / weights_file)) for d in (one, two))
    names = sorted(weights_one)
    assert sorted(weights_two) == names
    update = norm(weights_one[k] - start[k] for k in names)
    ratio = norm(weights_one[k] - weights_two[k] for k in names) / update
    assert update > 0 and ratio <= 1e-5, (update, ratio)
    return losses, ratio


def test_gsum_on_two_cpu_processes_trains_as_one_process_with_the_doubled_batch(tmp_path):
    from types import SimpleNamespace

    from transformers import set_seed

    from training.__main__ import main as training_main
    from variants.entity.train import Arguments, build

    # GSum (the entity variant's own architecture), guided by the sentences that name the entity
    train_file = write_examples(tmp_path / "train.jsonl", lambda r: {"entity": "Maria Lopez"}, "Maria Lopez spoke. ")
    flags = [
        "entity",
        "--method",
        "sentences",
        "--preset",
        "tiny",
        "--max-signal-length",
        "32",
        "--train-file",
        train_file,
        *SHARED,
    ]
    two = torchrun(
        *flags,
        "--per-device-train-batch-size",
        str(PER_DEVICE),
        "--output-dir",
        str(tmp_path / "two"),
        "--use_cpu",
        "True",
    )
    assert two.returncode == 0, two.stderr[-3000:]
    training_main(
        [*flags, "--per-device-train-batch-size", str(2 * PER_DEVICE), "--output-dir", str(tmp_path / "one")]
    )
    set_seed(SEED)  # the weights both runs started from, built as the command builds them
    start, _, _ = build(Arguments(method="sentences", max_signal_length=32), SimpleNamespace(preset="tiny"))
    losses, ratio = check_two_processes_equal_one(
        tmp_path / "one", tmp_path / "two", "model.safetensors", {k: v.detach() for k, v in start.state_dict().items()}
    )
    print(f"gsum: losses {losses}, weights differ by {ratio:.2e} of the update")


@pytest.fixture(scope="module")
def tiny_general(tmp_path_factory):
    """A tiny random BART saved as a general summarizer (the base a ``--adapter lora`` model trains on)."""
    from transformers import BartForConditionalGeneration

    from variants.presets import tiny_bart_config, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("store") / "general"
    BartForConditionalGeneration(tiny_bart_config(tokenizer)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_lora_adapter_on_two_cpu_processes_trains_as_one_process_with_the_doubled_batch(tmp_path, tiny_general):
    from training.__main__ import main as training_main

    # the store's format: a peft adapter (LoRA, the topic tokens' rows) on the general summarizer
    train_file = write_examples(tmp_path / "train.jsonl", lambda r: {"topic": r["topic"]})
    flags = [
        "topic",
        "--method",
        "prepend-tag",
        "--base-model",
        str(tiny_general),
        "--adapter",
        "lora",
        "--adapter-dropout",
        "0",
        "--train-file",
        train_file,
        *SHARED,
    ]
    two = torchrun(
        *flags,
        "--per-device-train-batch-size",
        str(PER_DEVICE),
        "--output-dir",
        str(tmp_path / "two"),
        "--use_cpu",
        "True",
    )
    assert two.returncode == 0, two.stderr[-3000:]
    training_main(
        [*flags, "--per-device-train-batch-size", str(2 * PER_DEVICE), "--output-dir", str(tmp_path / "one")]
    )
    # LoRA's B and the added tokens' rows start at zero: what they hold is what training changed. A's start
    # is not saved; taking the trained A as its start counts A's differences without its update.
    weights = load_file(str(tmp_path / "one" / "adapter_model.safetensors"))
    zero_start = {
        k: torch.zeros_like(v) if ("lora_B" in k or "trainable_tokens" in k) else v for k, v in weights.items()
    }
    assert any("trainable_tokens" in k for k in weights) and any("lora_B" in k for k in weights)
    losses, ratio = check_two_processes_equal_one(
        tmp_path / "one", tmp_path / "two", "adapter_model.safetensors", zero_start
    )
    print(f"lora: losses {losses}, weights differ by {ratio:.2e} of the update")


# --- launches that ask for two processes and get one --------------------------------------------------------
def test_a_launcher_world_larger_than_the_run_stops_naming_use_cpu():
    check_processes(2, {"WORLD_SIZE": "2"})
    check_processes(1, {})
    with pytest.raises(LaunchError, match=r"started 2 processes .* group of 1.*--use_cpu True"):
        check_processes(1, {"WORLD_SIZE": "2", "RANK": "1"})
    with pytest.raises(LaunchError, match=r"started 4 processes"):  # mpirun's own variable counts too
        check_processes(1, {"OMPI_COMM_WORLD_SIZE": "4"})


def test_accelerates_single_process_launcher_asked_for_two_stops_naming_torchrun():
    launched_one = {"ACCELERATE_MIXED_PRECISION": "no", "ACCELERATE_USE_CPU": "True", "MASTER_ADDR": "127.0.0.1"}
    with pytest.raises(LaunchError, match=r"accelerate launch was asked for several.*mpirun_hostfile.*torchrun"):
        check_processes(1, launched_one)
    check_processes(1, {"ACCELERATE_MIXED_PRECISION": "no", "ACCELERATE_USE_CPU": "False"})  # plain accelerate launch


def test_the_commands_that_start_one_process_fail_saying_why(tmp_path):
    # As a user types them on a machine without GPUs: each would train alone, or as two copies of one run.
    train_file = write_examples(tmp_path / "train.jsonl", lambda r: {"topic": r["topic"]})
    flags = [
        "topic",
        "--method",
        "tag",
        "--preset",
        "tiny",
        "--train-file",
        train_file,
        "--max-steps",
        "1",
        "--bf16",  # fp32, the default where the CPU has no bf16 (with bf16 the flags add --use_cpu themselves)
        "False",
        "--report-to",
        "none",
        "--output-dir",
        str(tmp_path / "out"),
    ]
    accelerate = launch(
        sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2", "-m", "training", *flags
    )
    assert accelerate.returncode != 0 and "accelerate launch was asked for several processes but started one" in (
        accelerate.stderr
    ), accelerate.stderr[-2000:]
    assert "torchrun --nproc_per_node N -m ... --use_cpu True" in accelerate.stderr
    without_cpu = torchrun(*flags)
    assert without_cpu.returncode != 0 and "add --use_cpu True" in without_cpu.stderr, without_cpu.stderr[-2000:]
    assert not (tmp_path / "out" / "steersum.json").exists()  # stopped before training


# --- why DDP runs without searching for unused parameters --------------------------------------------------
def architectures():
    from training.__main__ import VARIANTS
    from variants import get_variant

    plain = [(v, m, False) for v in VARIANTS for m in get_variant(v).methods]
    return plain + [
        ("topic", "prepend-tag", True),
        ("tdsum", "tdsum", True),
        ("entity", "sentences", True),
        ("persona", "interest-prefix", True),
    ]  # the zoo's adapters on a general summarizer


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """Four training examples per variant: its test set's, GSum's with a name in every document."""
    from variants import get_variant

    folder, files = tmp_path_factory.mktemp("examples"), {}
    for variant_id in ("topic", "tdsum", "persona", "ccs"):
        records = get_variant(variant_id).evaluation.test_examples(4)
        files[variant_id] = folder / f"{variant_id}.jsonl"
        files[variant_id].write_text("".join(json.dumps(r) + "\n" for r in records))
    files["entity"] = write_examples(
        folder / "entity.jsonl", lambda r: {"entity": "Maria Lopez"}, "Maria Lopez spoke. "
    )
    return files


@pytest.mark.parametrize("variant_id, method, adapter", architectures(), ids=lambda x: str(x))
def test_every_trainable_weight_takes_part_with_controls_and_without(
    variant_id, method, adapter, examples, tiny_general, tmp_path
):
    """DDP without ``find_unused_parameters`` needs every trainable weight in every step's graph, on
    every process; control dropout may give a process a batch without any control. So each
    architecture, as its trainer builds it, gets a gradient for every trainable weight both from a
    batch with controls and from one without."""
    import importlib

    from transformers import HfArgumentParser, Seq2SeqTrainingArguments, set_seed

    from training import adapter as adapters
    from training.batches import collate
    from training.data import load_examples
    from training.seq2seq import DataArguments, features
    from variants import get_variant

    module = importlib.import_module(f"variants.{variant_id}.train")
    parser = HfArgumentParser((module.Arguments, DataArguments, adapters.AdapterArguments, Seq2SeqTrainingArguments))
    where = ["--base-model", str(tiny_general), "--adapter", "lora"] if adapter else ["--preset", "tiny"]
    if variant_id == "tdsum":
        where += ["--tfidf-min-df", "1"]  # a vocabulary from four documents
    own, data, adapter_args, _ = parser.parse_args_into_dataclasses(
        [
            "--method",
            method,
            "--train-file",
            str(examples[variant_id]),
            "--output-dir",
            str(tmp_path),
            *where,
            "--max-source-length",
            "64",
            "--max-target-length",
            "8",
        ]
    )
    set_seed(0)
    model, tokenizer, assets = module.build(own, data)
    model, _ = adapters.wrap(model, adapter_args, data.base_model, data.preset)
    model.train()
    variant = get_variant(variant_id)
    records = load_examples(data.train_file, variant, assets, 4)
    for share in (0.0, 0.99):  # controls on every example; on none (dropped_controls draws 4 below 0.99)
        model.zero_grad(set_to_none=True)
        batch = collate(tokenizer.pad_token_id)(features(variant, records, method, assets, tokenizer, data, share))
        model(**batch).loss.backward()
        left_out = [name for name, p in model.named_parameters() if p.requires_grad and p.grad is None]
        assert not left_out, (share, left_out)


# --- the shipped accelerate configs and the papers' shapes -------------------------------------------------
CONFIGS = ROOT / "training" / "configs"


def launch_environment(config_file) -> dict[str, str]:
    """The environment ``accelerate launch --config_file FILE`` gives each process (what accelerate makes of
    the file: a key it does not know, or a value it refuses, fails here)."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils.launch import prepare_multi_gpu_env

    args = launch_command_parser().parse_args(["--config_file", str(config_file), "-m", "training", "ccs"])
    args, _, _ = _validate_launch_command(args)
    return prepare_multi_gpu_env(args)


def test_the_ddp_config_starts_processes_that_average_gradients():
    env = launch_environment(CONFIGS / "ddp.yaml")
    assert env["ACCELERATE_MIXED_PRECISION"] == "bf16" and "ACCELERATE_USE_FSDP" not in env


def test_the_fsdp_config_shards_flan_t5_with_lora_block_by_block(monkeypatch):
    from accelerate.utils import FullyShardedDataParallelPlugin

    from benchmarks.paper_shapes import SHAPES, build

    env = launch_environment(CONFIGS / "fsdp-flan-t5-lora.yaml")
    assert env["ACCELERATE_USE_FSDP"] == "true" and env["FSDP_VERSION"] == "2"
    for name, value in env.items():
        if name.startswith(("FSDP_", "ACCELERATE_")):
            monkeypatch.setenv(name, value)
    plugin = FullyShardedDataParallelPlugin()  # accelerate reads the launch's settings and checks them
    assert plugin.activation_checkpointing and plugin.cpu_ram_efficient_loading
    assert "SHARDED_STATE_DICT" in str(plugin.state_dict_type)
    model = build(next(s for s in SHAPES if s.name == "flan-t5-xl-lora"), tiny=True)  # the same classes, tiny
    plugin.set_auto_wrap_policy(model)  # finds the T5Block class to wrap in the model, or fails
    assert sum(type(m).__name__ == "T5Block" for m in model.modules()) == 4  # 2 + 2 tiny layers: one unit each


def test_the_papers_bases_build_at_their_published_sizes():
    from benchmarks.paper_shapes import FLAN_T5, FLAN_T5_SIZES, SHAPES, count

    sizes = {s.name: count(s) for s in SHAPES}  # on the meta device: no memory
    published = {
        "bart-large": 406e6,
        "flan-t5-large-lora": 783e6,
        "flan-t5-xl-lora": 2.85e9,
        "flan-t5-xxl-lora": 11.1e9,
    }
    for name, expected in published.items():
        total, trainable = sizes[name]
        base = total - trainable if name.endswith("lora") else total  # the adapter is not the base's
        if name.endswith("lora"):  # transformers 5 ties T5's output layer to its embeddings (T5Config forces
            base += FLAN_T5["vocab_size"] * FLAN_T5_SIZES[name.split("-")[2]]["d_model"]  # it): Flan-T5 has its own
        assert abs(base - expected) < 0.01 * expected, (name, sizes[name])
    for name in ("tdsum-bart-large", "gsum-bart-large", "persona-bart-large"):  # BART-large and what they add
        assert sizes["bart-large"][0] < sizes[name][0] < 1.2 * sizes["bart-large"][0], (name, sizes[name])
    assert all(trainable < 0.01 * total for total, trainable in (sizes[n] for n in sizes if n.endswith("lora")))


def test_the_shape_benchmark_steps_every_shape_at_tiny_size(capsys):
    from benchmarks.paper_shapes import main

    main(["--tiny", "--steps", "1"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "shape" not in line]
    assert len(rows) == 12 and all(row.split("|")[-2].strip() not in ("—", "") for row in rows), out


def test_several_processes_on_an_amx_cpu_train_under_autocast_not_on_a_bf16_copy(monkeypatch):
    # The copy (training/bf16.py) computes gradients outside DDP: with it, each process would train alone.
    from training import seq2seq

    monkeypatch.setattr(seq2seq.torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(seq2seq, "cpu_bf16_supported", lambda: True)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert seq2seq.default_precision() == "bf16-weights"
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert seq2seq.default_precision() == "bf16"
    assert seq2seq.default_training_flags([])[-4:] == ["--bf16", "True", "--use_cpu", "True"]
