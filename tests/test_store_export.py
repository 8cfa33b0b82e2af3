"""The store published as a Hub user gets it: every stored model exported through ``python -m hub_cards publish``'s
code path, from a tiny store written by :func:`training.storing.put` as the zoo writes the real one (an int8
general summarizer and one int8 LoRA adapter per variant, each trained one step as an adapter: topic's and
persona's with added control tokens, tdsum's and entity's on architectures that add modules to BART).

Checked: the weights a Hub user downloads are the store's own (dequantized, never int8 codes), every load
route of each repo gives the model SteerSum serves from it, from an offline Hugging Face cache in a fresh
process with neither SteerSum nor the checkout on the path; the cards name their base, their own data and
the served decoding; nothing names a machine path; ``publish_store`` uploads everything or nothing."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import torch
from conftest import add_to_cache
from huggingface_hub import ModelCard
from huggingface_hub import constants as hub_constants
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from test_hub_repos import training_data

from hub_cards.cache import run_offline
from hub_cards.export import export_checkpoint
from hub_cards.export_checks import ExportError
from hub_cards.export_weights import ADAPTER, HALF_MODEL, MERGED

ORG = "steersum-test"
ADAPTERS = {  # variant -> method, each trained as the store keeps it: a LoRA adapter on the general summarizer
    "topic": "prepend-tag",  # adds [TOPIC] and [TAG]: trainable token rows
    "persona": "history-prefix",  # adds [HISTORY]
    "tdsum": "tdsum",  # adds a TF-IDF encoder and a TF-IDF attention to every decoder layer
    "entity": "sentences",  # GSum: adds a signal encoder path and cross-attention
    "ccs": "lora",  # a plain BART
}
FORMS = {"topic": ADAPTER, "persona": ADAPTER, "ccs": ADAPTER, "tdsum": MERGED, "entity": MERGED}
MEASURED = "- derived test set, 4 examples, as served: stas 0.500 (effect +0.040 [+0.010, +0.070], stands)"


def name(variant: str) -> str:
    return f"{variant}-{ADAPTERS[variant]}"


def repo(variant: str) -> str:
    return f"{ORG}/steersum-{'general' if variant == 'general' else name(variant)}"


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory, data_dir):
    """A store (``index``) holding a tiny int8 general summarizer and the five variant adapters on it."""
    from transformers import BartForConditionalGeneration

    from training.__main__ import main as training_main
    from training.storing import put
    from training.storing_cards import card
    from variants.base import read_record, write_record
    from variants.presets import tiny_bart_config, tiny_tokenizer
    from variants.seq2seq import save_generation_defaults

    root = tmp_path_factory.mktemp("store-export")
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    general = root / "general"
    BartForConditionalGeneration(tiny_bart_config(tokenizer)).save_pretrained(general)
    tokenizer.save_pretrained(general)
    pretrained = {"source": f"{ORG}/tiny-pretrained (random)", "license": "apache-2.0", "parameters": 10**5}
    licences = {"xsum": "XSum: research use only", "scitldr": "Apache-2.0"}
    write_record(
        general,
        {
            "variant": "general",
            "method": "plain",
            "steps": 2,
            "base_weights": pretrained,
            "data_licenses": licences,
            "train_examples": {"xsum": 4, "scitldr": 4},
        },
    )
    scores = {
        "rouge1": 0.30,
        "rouge2": 0.1,
        "lead3_rouge1": 0.25,
        "ratio_to_lead": 1.2,
        "lead_at_summary_length_rouge1": 0.35,
        "summary_words": 40,
        "verbatim_fact_share": 0.9,
        "examples": 4,
    }
    (general / "general_report.json").write_text(json.dumps({"sets": {"bbc_summary test": scores}}))
    index = root / "store" / "index.json"
    index.parent.mkdir()
    validation = {"sets": {"bbc_summary val": scores}}  # the store admits on val (put's rule)
    test = {"sets": {"bbc_summary test": scores}}
    stored, sentence = put(general, test, general / "general_report.json", index=index, validation=validation)
    assert stored, sentence
    for variant, method in ADAPTERS.items():
        data = root / "data" / variant / "train.jsonl"
        data.parent.mkdir(parents=True)
        data.write_text("".join(json.dumps(r) + "\n" for r in training_data(variant, data_dir)))
        out = root / name(variant)
        training_main(
            [
                variant,
                "--method",
                method,
                "--base-model",
                str(general),
                "--adapter",
                "lora",
                "--adapter-rank",
                "4",
                "--adapter-targets",
                "q_proj,v_proj",
                "--train-file",
                str(data),
                "--output-dir",
                str(out),
                "--max-steps",
                "1",
                "--per-device-train-batch-size",
                "2",
                "--max-source-length",
                "64",
                "--max-target-length",
                "8",
                "--generation-num-beams",
                "2",
                "--report-to",
                "none",
                "--save-strategy",
                "no",
                "--dataloader-pin-memory",
                "false",
            ]
        )
        if variant == "topic":  # served with its decoding rules at γ = 2, the text rules and int8 weights
            record = {**read_record(out), "constraints": True, "control_guidance": 2.0, "dtype": "int8-weights"}
            write_record(out, record)
            save_generation_defaults(out, document_words=True, finish_sentences=True, no_repeat_trigrams=True)
        report = {"metrics": {"rouge1": 0.2}, "n_examples": 4}
        (out / "eval_report.json").write_text(json.dumps(report))
        stored, sentence = put(
            out,
            report,
            out / "eval_report.json",
            index=index,
            require_effect=False,
            validation={**report, "split": "val"},
        )
        assert stored, sentence
    # the leaderboard's lines on the topic model, as rewrite_cards puts them in its stored card
    import store

    topic = next(m for m in store.read_index(index) if m.variant == "topic")
    folder = index.parent / "models" / topic.name
    (folder / "README.md").write_text(
        card(topic, folder) + "\n## Measured on the leaderboard\n\nIntro.\n\n" + MEASURED + "\n"
    )
    return index


@pytest.fixture(scope="module")
def exported(tiny_store, tmp_path_factory):
    """``folders`` (variant or ``general`` -> exported folder, as ``python -m hub_cards publish`` exports them) and the
    Hub ``cache`` holding them."""
    from hub_cards.publish import export_store

    out = tmp_path_factory.mktemp("exports") / "out"
    result = export_store(out, ORG, index=tiny_store)
    folders = {entry["variant"]: entry["folder"] for entry in result["models"]}
    cache = out.parent / "hub-cache"
    for variant, folder in folders.items():
        add_to_cache(cache, repo(variant), folder)
    return {"folders": folders, "cache": cache, "space": result["space"], "store": tiny_store.parent / "models"}


def dtypes(path: Path) -> set[str]:
    with safe_open(str(path), framework="pt") as handle:
        return {handle.get_slice(k).get_dtype() for k in handle.keys()}


def test_every_stored_model_exports_as_a_hub_user_expects_it(exported):
    from store.compact import read_compact

    folders, stored = exported["folders"], exported["store"]
    assert set(folders) == {"general", *ADAPTERS}
    general = folders["general"]
    assert dtypes(general / "model.safetensors") == {"F16"} and not list(general.glob("compact*"))
    assert json.loads((general / "steersum.json").read_text())["export_format"] == HALF_MODEL
    assert json.loads((general / "config.json").read_text())["dtype"] == "float32"  # loads as fp32 by default
    # the fp16 weights are the store's, dequantized by store.compact, then rounded to half precision
    served = read_compact(stored / "general")
    half = load_file(str(general / "model.safetensors"))
    for key, tensor in half.items():
        assert torch.equal(tensor, served[key].half()), key
    for variant, form in FORMS.items():
        folder, record = folders[variant], json.loads((folders[variant] / "steersum.json").read_text())
        assert record["export_format"] == form, variant
        if form == ADAPTER:
            weights = load_file(str(folder / "adapter_model.safetensors"))
            assert dtypes(folder / "adapter_model.safetensors") == {"F32"} and not any("int8" in k for k in weights)
            codes = load_file(str(stored / name(variant) / "adapter_model.safetensors"))
            for key, tensor in weights.items():  # q * scale, exactly as the store's loader reads it
                expected = (
                    codes[key].float() * codes[key + ".int8_scale"][:, None]
                    if key + ".int8_scale" in codes
                    else codes[key]
                )
                assert torch.equal(tensor, expected.float()), (variant, key)
            adapter = json.loads((folder / "adapter_config.json").read_text())
            assert adapter["base_model_name_or_path"] == repo("general"), variant
        else:
            config = json.loads((folder / "config.json").read_text())
            assert dtypes(folder / "model.safetensors") == {"F16"} and "AutoModelForSeq2SeqLM" in config["auto_map"]
            module = config["auto_map"]["AutoModelForSeq2SeqLM"].split(".")[0]
            assert (folder / f"{module}.py").is_file() and not (folder / "adapter_config.json").exists(), variant
    # the store's int8 weights are a CPU speed-up of its copy: from the repo the model computes in float32, as the
    # card's code does, and the card says its numbers were measured on the int8 copy
    topic = json.loads((folders["topic"] / "steersum.json").read_text())
    assert (topic["dtype"], topic["measured_dtype"]) == ("float32", "int8-weights")
    assert "measured on SteerSum's int8 copy" in (folders["topic"] / "README.md").read_text()
    for variant in ("topic", "persona"):  # the adapter's tokenizer holds its added tokens: the base is resized to it
        added = json.loads((folders[variant] / "adapter_config.json").read_text())["trainable_token_indices"]
        assert added and json.loads((folders[variant] / "config.json").read_text())["vocab_size"] == max(added) + 1


def test_the_export_refuses_int8_codes_where_peft_expects_weights(tiny_store, tmp_path):
    folder = tmp_path / "ccs"
    shutil.copytree(tiny_store.parent / "models" / name("ccs"), folder)
    state = load_file(str(folder / "adapter_model.safetensors"))
    key = sorted(k for k in state if k.endswith(".int8_scale"))[0]
    del state[key]  # codes without their scales: peft would load the codes as weights
    save_file(state, str(folder / "adapter_model.safetensors"))
    with pytest.raises(ExportError, match=rf"{key.removesuffix('.int8_scale')} holds torch.int8 codes without"):
        export_checkpoint(folder, tmp_path / "out", repo_id=repo("ccs"), base_model=str(tmp_path))
    assert not (tmp_path / "out").exists()


ROUTES = r"""
import json, sys, torch
from huggingface_hub import snapshot_download
from peft import AutoPeftModelForSeq2SeqLM, PeftModel
from transformers import AutoModelForSeq2SeqLM, AutoProcessor, AutoTokenizer

general, routes = sys.argv[1], json.loads(sys.argv[2])
out = {}
for variant, repo, route in routes:
    if route == "auto":
        model = AutoModelForSeq2SeqLM.from_pretrained(repo, trust_remote_code=True)
    elif route == "auto-peft":
        model = AutoPeftModelForSeq2SeqLM.from_pretrained(repo)
    elif route == "auto-peft-folder":  # offline, peft resizes for added tokens when it sees the tokenizer file
        model = AutoPeftModelForSeq2SeqLM.from_pretrained(snapshot_download(repo))
    else:  # the card's snippet: the base, resized to the adapter's tokenizer, then the adapter
        tokenizer = AutoProcessor.from_pretrained(repo, trust_remote_code=True).tokenizer
        base = AutoModelForSeq2SeqLM.from_pretrained(general)
        base.resize_token_embeddings(len(tokenizer))
        model = PeftModel.from_pretrained(base, repo)
    config = getattr(model, "peft_config", {}).get("default")
    added = list(getattr(config, "trainable_token_indices", None) or [])
    ids = torch.tensor([[0, added[0] if added else 10, 11, 12, 13, 14, 2]])  # an added token's row in the input
    extra = {"tdsum": {"tfidf": torch.linspace(0, 1, 7)[None]},
             "entity": {"signal_input_ids": ids[:, :4], "signal_attention_mask": torch.ones(1, 4, dtype=torch.long)}}
    with torch.no_grad():
        logits = model.eval()(input_ids=ids, decoder_input_ids=ids[:, :3], **extra.get(variant, {})).logits
    out[variant + ":" + route] = [str(next(model.parameters()).dtype), ids.tolist(), logits.flatten().tolist()]
print(json.dumps(out))
"""


def test_every_load_route_gives_the_model_steersum_serves_from_the_repo(exported, tmp_path, monkeypatch):
    from variants import load_summarizer

    routes = {"general": "auto", "tdsum": "auto", "entity": "auto", "ccs": "auto-peft"}.items()
    routes = [*routes, *[(v, r) for r in ("peft", "auto-peft-folder") for v in ("topic", "persona")]]
    # a Hub user's process: no SteerSum, no checkout, the cache after a download, offline
    routes = json.dumps([(v, repo(v), r) for v, r in routes])
    run = run_offline(ROUTES, repo("general"), routes, home=tmp_path, cache=exported["cache"])
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(got) == 8
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(exported["cache"]))
    from transformers import AutoModelForSeq2SeqLM

    for key, (dtype, ids, logits) in got.items():
        variant, ids = key.split(":")[0], torch.tensor(ids)
        if variant in ("topic", "persona"):  # the input holds an added control token
            assert ids[0, 1] >= AutoModelForSeq2SeqLM.from_pretrained(exported["folders"]["general"]).config.vocab_size
        extra = {
            "tdsum": {"tfidf": torch.linspace(0, 1, 7)[None]},
            "entity": {"signal_input_ids": ids[:, :4], "signal_attention_mask": torch.ones(1, 4, dtype=torch.long)},
        }
        if variant == "general":
            model = AutoModelForSeq2SeqLM.from_pretrained(exported["folders"]["general"], dtype=torch.float32)
        else:
            model = load_summarizer(repo(variant)).model  # SteerSum's loader, from the same cache
        with torch.no_grad():
            expected = model(input_ids=ids, decoder_input_ids=ids[:, :3], **extra.get(variant, {})).logits
        assert dtype == "torch.float32", key  # fp16 files, computed in fp32 (config.json's dtype)
        assert torch.allclose(torch.tensor(logits).view_as(expected), expected, atol=1e-4, rtol=1e-4), key


def test_cards_name_the_base_their_own_data_and_the_served_decoding(exported):
    folders = exported["folders"]
    general = ModelCard.load(folders["general"] / "README.md")
    assert general.data.base_model == f"{ORG}/tiny-pretrained" and general.data.eval_results
    assert {r.metric_type for r in general.data.eval_results} == {"rouge1", "rouge2"}
    assert "on bbc_summary test it scores 0.3500, above the model's 0.3000" in " ".join(general.text.split())
    assert sorted(general.data.datasets) == ["EdinburghNLP/xsum", "allenai/scitldr"]
    for variant in ADAPTERS:
        card = ModelCard.load(folders[variant] / "README.md")
        assert card.data.base_model == repo("general"), variant
        assert card.data.eval_results, variant  # its report as model-index
        assert not set(card.data.datasets or []) & {"EdinburghNLP/xsum"}, variant  # the base's data is the base's
        assert "the base model's training data" in card.text, variant
    topic = " ".join((folders["topic"] / "README.md").read_text().split())
    assert "classifier-free guidance at control strength γ = 2" in topic and "decoding rules (" in topic
    assert "the document-words rule (a word of several tokens" in topic
    assert "the finished-sentences rule (no end before the text ends a sentence)" in topic
    assert "and no repeated trigram (a repeat taken only where nothing else is left)" in topic
    if (folders["topic"] / "custom_generate" / "generate.py").is_file():  # the served decoding ships with it
        assert "`constraints=False` gives the model alone" in topic
    else:
        assert "it gives **the model alone**" in topic
    assert MEASURED in topic
    assert "base.resize_token_embeddings(len(processor.tokenizer))" in topic
    assert "its processor also needs `nltk` with its Punkt data" in topic  # its rules read the document's sentences
    tdsum = (folders["tdsum"] / "README.md").read_text()
    assert "served with" not in tdsum and "as the snippet runs it" in tdsum  # no rules, γ = 1
    assert "nltk" not in tdsum  # no rules: nothing they would need


def test_the_base_resolves_from_the_cache_and_the_space_lists_the_models(exported, tiny_store, tmp_path, monkeypatch):
    from huggingface_hub import SpaceCard

    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(exported["cache"]))  # offline: the cache alone
    out = export_checkpoint(
        tiny_store.parent / "models" / name("ccs"), tmp_path / "ccs", repo_id=repo("ccs"), base_model=repo("general")
    )
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == repo("general")
    with pytest.raises(ExportError, match="not in the local Hugging Face cache"):
        export_checkpoint(tiny_store.parent / "models" / name("ccs"), tmp_path / "x", base_model=f"{ORG}/elsewhere")
    space = SpaceCard.load(exported["space"] / "README.md")
    assert sorted(space.data.models) == sorted(repo(v) for v in ADAPTERS)
    assert "baselines only" not in space.text and all(f"[{repo(v)}]" in space.text for v in ADAPTERS)


def test_nothing_exported_names_a_machine_path(exported, tiny_store):
    import store
    from hub_cards.space import PACKAGES

    checkout = tiny_store.parent.parent  # where the tiny store and its models were trained
    for folder in exported["folders"].values():
        assert store.machine_paths(folder, checkout=checkout) == [], folder
        assert store.machine_paths(folder) == [], folder  # nor this checkout
    # the Space's own files (its copies of SteerSum's packages hold example commands such as --output-dir /tmp/x)
    space = [line for line in store.machine_paths(exported["space"]) if line.split("/")[0] not in PACKAGES]
    assert space == []


class FakeHub:
    """Records uploads; never reaches the network."""

    instances: list = []

    def __init__(self, token=None):
        self.token, self.uploads = token, []
        FakeHub.instances.append(self)

    def whoami(self):
        return {"name": "tester"}

    def create_repo(self, repo_id, **kwargs):
        pass

    def upload_folder(self, **kwargs):
        folder = Path(kwargs["folder_path"])
        oid = hashlib.sha1(f"{kwargs['repo_id']}:{len(self.uploads)}".encode()).hexdigest()
        catalog = folder / "space" / "catalog.json"
        self.uploads.append(
            {
                "repo_id": kwargs["repo_id"],
                "repo_type": kwargs["repo_type"],
                "oid": oid,
                "catalog": json.loads(catalog.read_text()) if catalog.is_file() else None,
            }
        )
        return type(
            "Commit", (), {"oid": oid, "commit_url": f"https://huggingface.co/{kwargs['repo_id']}/commit/{oid}"}
        )()


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    from huggingface_hub.repocard import RepoCard

    import hub_cards.push

    FakeHub.instances = []
    monkeypatch.setattr(hub_cards.push, "HfApi", FakeHub)
    monkeypatch.setattr(RepoCard, "validate", lambda self, repo_type=None: None)
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(hub_constants, "HF_TOKEN_PATH", str(tmp_path / "no-login" / "token"))


def test_publish_pushes_all_six_models_and_the_space_or_nothing(tiny_store, fake_hub, tmp_path, capsys):
    import store
    from hub_cards.__main__ import main as hub_main

    token = "hf_aTokenThatIsNeverPrinted"
    with pytest.raises(SystemExit) as done:
        hub_main(["publish", ORG, "--dry-run", "--hub-token", token])
    assert "the model store is empty" in str(done.value.code)  # conftest's empty store: exits with the reason
    store.INDEX, committed = tiny_store, store.INDEX
    try:
        hub_main(["publish", ORG, "--dry-run", "--hub-token", token])
        dry = capsys.readouterr()
        assert FakeHub.instances == []  # exported and checked; no Hub asked, nothing sent
        assert set(json.loads(dry.out)["models"]) == {repo(v) for v in ["general", *ADAPTERS]}
        hub_main(["publish", ORG, "--hub-token", token])
        out = capsys.readouterr()
        uploads = FakeHub.instances[-1].uploads
        assert [u["repo_id"] for u in uploads][0] == repo("general")  # the base first: the adapters name it
        assert {u["repo_id"] for u in uploads[:-1]} == {repo(v) for v in ["general", *ADAPTERS]}
        space = uploads[-1]
        assert (space["repo_id"], space["repo_type"]) == (f"{ORG}/steersum", "space")
        pinned = {(row["repo"], row["revision"]) for row in space["catalog"]["models"]}
        assert pinned == {(u["repo_id"], u["oid"]) for u in uploads[1:-1]}  # each pinned to the commit pushed
        # one model that cannot be exported: nothing at all is uploaded
        broken = tiny_store.parent / "models" / name("persona") / "adapter_model.safetensors"
        kept = broken.read_bytes()
        state = load_file(str(broken))
        save_file({k: v for k, v in state.items() if not k.endswith(".int8_scale")}, str(broken))
        try:
            with pytest.raises(SystemExit) as done:
                hub_main(["publish", ORG, "--hub-token", token])
        finally:
            broken.write_bytes(kept)
        failed = capsys.readouterr()
        assert FakeHub.instances[-1].uploads == []
        assert f"{name('persona')}: not exported, so nothing is pushed" in str(done.value.code)
        said = dry.out + dry.err + out.out + out.err + failed.out + failed.err + str(done.value.code)
        assert token not in said
    finally:
        store.INDEX = committed
