"""Publishing that works on any machine: no local path in a published repo, cards that
carry the test evaluation, a push that checks its token before training and never writes it, a
generation config that generates as the card says, resuming, weight checksums, cards that read true.

One tiny topic checkpoint (``tag``, 2 steps, a checkpoint saved at each step, evaluated on 2
validation examples) and one ``emb`` checkpoint are trained once per test run through the CLI."""

import hashlib
import json
import logging
import shutil
import struct
from pathlib import Path

import pytest
from huggingface_hub import ModelCard
from huggingface_hub import constants as hub_constants
from huggingface_hub.repocard import RepoCard

from hub_cards.__main__ import main as hub_main
from hub_cards.card_metadata import eval_results
from hub_cards.export import export_checkpoint
from hub_cards.export_checks import ExportError
from hub_cards.licenses import license_fields, license_note
from hub_cards.push import PushError, check_folder
from metrics.io import read_jsonl

TOKEN = "hf_fakeTokenForTestsThatMustNeverBeWritten"
BEAMS, TARGET = 3, 12


def common(data: Path) -> list[str]:
    return [
        "--preset",
        "tiny",
        "--train-file",
        str(data),
        "--per-device-train-batch-size",
        "4",
        "--report-to",
        "none",
        "--max-target-length",
        str(TARGET),
        "--generation-num-beams",
        str(BEAMS),
        "--eval-strategy",
        "no",
    ]


def tag_command(root: Path, out: Path, steps: int = 2) -> list[str]:
    return [
        "topic",
        "--method",
        "tag",
        *common(root / "train.jsonl"),
        "--max-steps",
        str(steps),
        "--save-strategy",
        "steps",
        "--save-steps",
        "1",
        "--output-dir",
        str(out),
        "--eval-file",
        str(root / "val.jsonl"),
        "--max-eval-samples",
        "2",
        "--eval-batch-size",
        "2",
    ]


@pytest.fixture(scope="session")
def root(tmp_path_factory, data_dir):
    """``train.jsonl`` (8 BBC articles), ``val.jsonl`` and ``test.jsonl`` (the same 8, other names), and
    the two trained checkpoints ``tag`` and ``emb``."""
    from training.__main__ import main as train

    root = tmp_path_factory.mktemp("publishing")
    records = read_jsonl(data_dir / "bbc_summary" / "val.jsonl")[:8]
    lines = "".join(
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
    for name in ("train", "val", "test"):
        (root / f"{name}.jsonl").write_text(lines)
    train(tag_command(root, root / "tag"))
    train(
        [
            "topic",
            "--method",
            "emb",
            *common(root / "train.jsonl"),
            "--max-steps",
            "2",
            "--save-strategy",
            "no",
            "--output-dir",
            str(root / "emb"),
        ]
    )
    return root


@pytest.fixture
def copy_of(tmp_path):
    def copy(folder: Path) -> Path:
        return Path(shutil.copytree(folder, tmp_path / f"copy-{folder.name}"))

    return copy


def files_holding(folder: Path, text: str) -> list[str]:
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()
    )


# --- 2. no local path leaves the machine; an adapter's base must be a Hub id -------------------------
def test_no_exported_file_holds_a_local_path(root, copy_of, tmp_path):
    out = export_checkpoint(root / "tag", tmp_path / "repo", repo_id="org/topic-tag")
    assert (out / "training_args.json").is_file() and (out / "steersum.json").is_file()
    for local in {str(root), str(root.resolve()), str(tmp_path.resolve())}:
        assert files_holding(out, local) == []
    # A model fine-tuned from a local base folder: named by the folder's name, never taken for a Hub id.
    folder = copy_of(root / "tag")
    record = json.loads((folder / "steersum.json").read_text())
    (folder / "steersum.json").write_text(json.dumps({**record, "base_model": str(tmp_path / "bases" / "my-bart")}))
    out = export_checkpoint(folder, tmp_path / "repo-local-base")
    assert files_holding(out, str(tmp_path)) == []
    assert json.loads((out / "steersum.json").read_text())["base_model"] == "my-bart (a local model folder)"
    card = ModelCard.load(out / "README.md")
    assert card.data.base_model is None and "Fine-tuned from `my-bart (a local model folder)`" in card.text


@pytest.fixture
def local_base_adapter(tmp_path):
    """A CCS LoRA checkpoint whose ``adapter_config.json`` names a local base folder."""
    import torch
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import T5ForConditionalGeneration

    from variants.base import write_record
    from variants.presets import tiny_t5_config, tiny_t5_tokenizer

    torch.manual_seed(0)
    tokenizer = tiny_t5_tokenizer()
    T5ForConditionalGeneration(tiny_t5_config(tokenizer)).save_pretrained(tmp_path / "base")
    base = T5ForConditionalGeneration.from_pretrained(tmp_path / "base")
    lora = LoraConfig(task_type=TaskType.SEQ_2_SEQ_LM, r=4, lora_alpha=8, target_modules=["q", "v"])
    get_peft_model(base, lora).save_pretrained(tmp_path / "ckpt")
    tokenizer.save_pretrained(tmp_path / "ckpt")
    write_record(
        tmp_path / "ckpt",
        {
            "variant": "ccs",
            "method": "lora",
            "max_target_length": 8,
            "base_model": str(tmp_path / "base"),
            "data_licenses": {"scitldr": "Apache-2.0"},
            "lora": {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q", "v"]},
            "parameters": {"trainable": 4096, "total": 1000000, "trainable_share": 0.004},
        },
    )
    assert str(tmp_path / "base") in (tmp_path / "ckpt" / "adapter_config.json").read_text()
    return tmp_path / "ckpt"


def test_an_adapter_on_a_local_base_is_refused_unless_given_the_base_hub_id(local_base_adapter, tmp_path, monkeypatch):
    from conftest import add_to_cache

    with pytest.raises(ExportError, match=r"not a Hub id.*--merge.*--base-model"):
        export_checkpoint(local_base_adapter, tmp_path / "refused")
    assert not (tmp_path / "refused").exists()
    with pytest.raises(SystemExit, match="^error: .*--base-model"):
        hub_main(["export", str(local_base_adapter), "--out", str(tmp_path / "refused")])
    # the Hub id must resolve (here: in the local cache, as after `hf download org/tiny-t5`) and fit the adapter
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    with pytest.raises(SystemExit, match="^error: --base-model org/tiny-t5: not in the local Hugging Face cache"):
        hub_main(
            ["export", str(local_base_adapter), "--out", str(tmp_path / "refused"), "--base-model", "org/tiny-t5"]
        )
    add_to_cache(tmp_path / "hub-cache", "org/tiny-t5", tmp_path / "base")
    out = export_checkpoint(local_base_adapter, tmp_path / "repo", repo_id="org/ccs-lora", base_model="org/tiny-t5")
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == "org/tiny-t5"
    card = ModelCard.load(out / "README.md")
    assert card.data.base_model == "org/tiny-t5" and "A LoRA adapter (peft) on `org/tiny-t5`" in card.text
    assert files_holding(out, str(tmp_path)) == []


# --- 3. the card carries the test evaluation, under the Hub's split names ----------------------------
def test_evaluate_writes_the_report_export_reads_and_the_card_names_split_and_size(
    root, copy_of, tmp_path, monkeypatch
):
    from training.__main__ import main as training_main

    folder = copy_of(root / "tag")
    monkeypatch.chdir(tmp_path)
    training_main(
        [
            "evaluate",
            "--model",
            str(folder),
            "--data",
            str(root / "test.jsonl"),
            "--max-samples",
            "3",
            "--batch-size",
            "3",
        ]
    )
    assert json.loads((folder / "eval_report.json").read_text())["n_examples"] == 3
    out = export_checkpoint(folder, tmp_path / "repo", repo_id="org/topic-tag")
    card = ModelCard.load(out / "README.md")
    assert {r.dataset_split for r in card.data.eval_results or []} <= {"test"}
    assert "3 examples of the test split" in " ".join(card.text.split())


def test_export_takes_the_report_to_show(root, tmp_path):
    report = json.loads((root / "tag" / "eval_report.json").read_text())
    report.update(data_file=str(root / "test.jsonl"), n_examples=5)
    (tmp_path / "test-report.json").write_text(json.dumps(report))
    hub_main(
        [
            "export",
            str(root / "tag"),
            "--out",
            str(tmp_path / "repo"),
            "--eval-report",
            str(tmp_path / "test-report.json"),
        ]
    )
    text = " ".join((tmp_path / "repo" / "README.md").read_text().split())
    assert "5 examples of the test split" in text
    assert json.loads((tmp_path / "repo" / "eval_report.json").read_text())["n_examples"] == 5


def test_model_index_uses_hub_split_names_says_derived_and_drops_zero_scores_of_test_models(tmp_path):
    dev = tmp_path / "dev.jsonl"
    dev.write_text(json.dumps({"document": "d", "controls": {}, "target": "t", "dataset": "scitldr"}) + "\n")
    report = {"data_file": str(dev), "n_examples": 1, "metrics": {"rougeL": 0.25, "keyword_sr": 0.0}}
    record = {"base_model": "google/flan-t5-large", "data_licenses": {"scitldr": "Apache-2.0"}}
    results = eval_results(report, record)
    assert [(r.metric_type, r.metric_value) for r in results] == [("rougeL", 0.25), ("keyword_sr", 0.0)]
    assert {(r.dataset_type, r.dataset_split) for r in results} == {("allenai/scitldr", "validation")}
    assert "derived from allenai/scitldr" in results[0].dataset_name
    val = tmp_path / "val.jsonl"
    val.write_text(dev.read_text())
    assert {r.dataset_split for r in eval_results({**report, "data_file": str(val)}, record)} == {"validation"}
    tiny = {**record, "base_model": "tiny preset (random init)"}
    assert eval_results({**report, "metrics": {"rouge1": 0.0, "rouge2": 0.0}}, tiny) == []


# --- 4. push: the token is checked before training, used, and never written --------------------------
class FakeApi:
    instances: list["FakeApi"] = []

    def __init__(self, token=None):
        self.token, self.uploads = token, []
        FakeApi.instances.append(self)

    def whoami(self):
        return {"name": "tester"}

    def create_repo(self, repo_id, **kwargs):
        pass

    def upload_folder(self, **kwargs):
        self.uploads.append(files_holding(Path(kwargs["folder_path"]), TOKEN))
        return type("CommitInfo", (), {"commit_url": f"https://huggingface.co/{kwargs['repo_id']}/commit/abc"})()


@pytest.fixture
def hub(monkeypatch, tmp_path):
    import hub_cards.push

    FakeApi.instances = []
    monkeypatch.setattr(hub_cards.push, "HfApi", FakeApi)
    monkeypatch.setattr(RepoCard, "validate", lambda self, repo_type=None: None)
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(hub_constants, "HF_TOKEN_PATH", str(tmp_path / "no-login" / "token"))


def test_push_to_hub_without_a_token_stops_before_training(root, hub, tmp_path):
    from training.__main__ import main as train

    with pytest.raises(SystemExit, match="^error: .*token"):
        train(
            [
                "topic",
                "--method",
                "prepend",
                *common(root / "train.jsonl"),
                "--max-steps",
                "1",
                "--save-strategy",
                "no",
                "--output-dir",
                str(tmp_path / "out"),
                "--push-to-hub",
                "--hub-model-id",
                "org/topic-prepend",
            ]
        )
    assert not (tmp_path / "out" / "model.safetensors").exists() and FakeApi.instances[-1:] == []


def test_hub_token_is_used_and_never_written_or_shown(root, hub, tmp_path, capsys, caplog):
    from training.__main__ import main as train

    caplog.set_level(logging.DEBUG)
    train(
        [
            "topic",
            "--method",
            "prepend",
            *common(root / "train.jsonl"),
            "--max-steps",
            "1",
            "--save-strategy",
            "steps",
            "--save-steps",
            "1",
            "--output-dir",
            str(tmp_path / "out"),
            "--push-to-hub",
            "--hub-model-id",
            "org/topic-prepend",
            "--hub-token",
            TOKEN,
        ]
    )
    assert (tmp_path / "out" / "checkpoint-1" / "training_args.bin").is_file()
    assert [api.token for api in FakeApi.instances] and {api.token for api in FakeApi.instances} == {TOKEN}
    assert [upload for api in FakeApi.instances for upload in api.uploads] == [[]]  # pushed, with no file holding it
    assert files_holding(tmp_path / "out", TOKEN) == []
    out = capsys.readouterr()
    assert TOKEN not in out.out + out.err + caplog.text


def test_push_offline_ends_in_one_error_line(root, tmp_path, monkeypatch):
    folder = export_checkpoint(root / "emb", tmp_path / "repo", repo_id="org/topic-emb")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(SystemExit) as stop:
        hub_main(["push", str(folder), "--repo-id", "org/topic-emb", "--skip-load-check"])
    message = str(stop.value.code)
    assert message.startswith("error: ") and "\n" not in message and "HF_HUB_OFFLINE" in message
    assert TOKEN not in message


# --- 5. generation_config.json generates as the card says ---------------------------------------------
def test_generation_config_carries_the_recorded_settings(root, tmp_path):
    from transformers import GenerationConfig

    out = export_checkpoint(root / "tag", tmp_path / "repo")
    for folder in (root / "tag", out):
        config = GenerationConfig.from_pretrained(folder)
        assert (config.num_beams, config.max_new_tokens) == (BEAMS, TARGET), folder
    assert f"# {BEAMS} beams, at most {TARGET} new tokens (generation_config.json)" in (out / "README.md").read_text()


# --- 6. resuming --------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", [[], ["--resume-from-checkpoint"], ["--resume-from-checkpoint", "auto"]])
def test_rerun_on_a_folder_with_checkpoints_resumes_from_the_latest(root, copy_of, how):
    from training.__main__ import main as train

    folder = copy_of(root / "tag")
    assert {p.name for p in folder.glob("checkpoint-*")} == {"checkpoint-1", "checkpoint-2"}
    train(tag_command(root, folder, steps=3) + how)
    record = json.loads((folder / "steersum.json").read_text())
    assert record["resumed_from"] == "checkpoint-2" and record["training"]["global_step"] == 3


def test_resume_auto_without_checkpoints_says_so(root, tmp_path):
    from training.__main__ import main as train

    with pytest.raises(SystemExit, match="no checkpoint-N folder"):
        train(tag_command(root, tmp_path / "fresh", steps=1) + ["--resume-from-checkpoint", "auto"])


# --- 7. integrity -------------------------------------------------------------------------------------
def test_export_records_weight_checksums_and_loading_names_a_corrupt_file(root, tmp_path):
    from variants import load_summarizer

    out = export_checkpoint(root / "tag", tmp_path / "repo")
    weights = out / "model.safetensors"
    record = json.loads((out / "steersum.json").read_text())
    assert record["weights_sha256"] == {"model.safetensors": hashlib.sha256(weights.read_bytes()).hexdigest()}
    load_summarizer(out)  # intact: loads
    data = bytearray(weights.read_bytes())
    start = 8 + struct.unpack("<Q", bytes(data[:8]))[0]  # after the header: the tensors' bytes
    data[start + 100 : start + 104] = bytes(b ^ 0xFF for b in data[start + 100 : start + 104])
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"model\.safetensors.*sha256"):
        load_summarizer(out)
    with pytest.raises(PushError, match=r"model\.safetensors.*sha256"):  # nor is it pushed
        check_folder(out, load=False)


# --- 8. cards read true -------------------------------------------------------------------------------
def test_card_says_what_kind_of_model_and_what_training_happened(root, tmp_path):
    tag = export_checkpoint(root / "tag", tmp_path / "tag", repo_id="org/tag")
    emb = export_checkpoint(root / "emb", tmp_path / "emb", repo_id="org/emb")
    assert "a plain transformers model" not in (emb / "README.md").read_text()
    assert "a plain transformers model" in " ".join((tag / "README.md").read_text().split())
    text = (tag / "README.md").read_text()
    # 8 examples, batch 4, 2 steps: one epoch, whatever num_train_epochs (3 by default) asked for.
    assert "| optimizer steps | 2 |" in text and "| epochs covered | 1.00 |" in text
    assert "| num_train_epochs |" not in text


def test_licence_accounts_for_the_base_model():
    data = {"scitldr": "Apache-2.0"}
    assert license_fields(data, "google/flan-t5-large") == {"license": "apache-2.0"}
    assert "google/flan-t5-large" in license_note(data, "google/flan-t5-large")
    unknown = license_fields(data, "someone/some-model")
    assert unknown["license"] == "other"
    assert "someone/some-model" in license_note(data, "someone/some-model")
    assert license_fields(data, None) == {"license": "apache-2.0"}  # a random test model has no base


def test_end_of_training_evaluation_is_capped_by_default(root):
    from training.seq2seq import DataArguments

    assert DataArguments(train_file=str(root / "train.jsonl")).max_eval_samples == 64
    assert DataArguments(train_file=str(root / "train.jsonl"), max_eval_samples=0).max_eval_samples is None  # all
