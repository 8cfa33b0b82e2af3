"""Exported repos that work with transformers and peft alone: the processor every repo ships, card snippets
run from an offline Hugging Face cache in a fresh process outside the checkout, the general summarizer as
a repo of its own that the CCS adapter names as its base, and ``zoo --push-to-hub``.

One shared fixture builds what the zoo builds, tiny: a general summarizer (a random tiny BART trained
for one step) and the zoo's five variant models fine-tuned from it for one step each, exports all six
and lays them out in a Hub cache as a download would (``models--ORG--NAME/snapshots/<rev>/``, files
linked to ``blobs/``, ``refs/main``)."""

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import torch
from conftest import add_to_cache
from huggingface_hub import ModelCard
from huggingface_hub import constants as hub_constants

from hub_cards.cache import run_offline
from hub_cards.export import export_checkpoint
from hub_cards.export_checks import ExportError
from metrics.io import read_jsonl

ORG = "steersum-test"
ROOT = Path(__file__).resolve().parents[1]
ZOO = {
    "topic": "topic-prepend-tag",
    "tdsum": "tdsum-tdsum",
    "entity": "entity-sentences",
    "persona": "persona-history-prefix",
    "ccs": "ccs-lora",
}  # each variant's paper-best method (topic's tags)
GENERAL_REPO = f"{ORG}/general"


def repo(variant: str) -> str:
    return f"{ORG}/{ZOO[variant]}"


# --- building: tiny checkpoints, exports, a Hub cache ------------------------------------------------
def training_data(variant: str, data_dir: Path) -> list[dict]:
    """Four training examples of the variant, from the bundled fixtures."""
    from variants.entity import EXAMPLE_DOCUMENT as ENTITY_DOCUMENT
    from variants.persona import default_assets as readers

    bbc = read_jsonl(data_dir / "bbc_summary" / "val.jsonl")[:4]
    scitldr = read_jsonl(data_dir / "scitldr" / "dev.jsonl")[:4]
    if variant == "topic":
        return [
            {
                "document": r["source"],
                "controls": {"topic": r["topic"]},
                "target": r["target"],
                "dataset": "bbc_summary",
            }
            for r in bbc
        ]
    if variant == "tdsum":
        return [
            {"document": r["source"], "controls": {}, "target": r["targets"][0], "dataset": "scitldr"} for r in scitldr
        ]
    if variant == "ccs":
        return [
            {
                "document": r["source"],
                "controls": {"length": 0, "readability": "high"},
                "target": r["targets"][0],
                "dataset": "scitldr",
            }
            for r in scitldr
        ]
    if variant == "entity":
        return [
            {
                "document": ENTITY_DOCUMENT,
                "controls": {"entity": name},
                "target": f"{name} met in Berlin.",
                "dataset": "bbc_summary",
            }
            for name in ("Angela Merkel", "Emmanuel Macron") * 2
        ]
    ids = list(readers().readers)[:4]
    return [
        {"document": r["source"], "controls": {"reader": reader}, "target": r["target"], "dataset": "bbc_summary"}
        for r, reader in zip(bbc, ids)
    ]


@pytest.fixture(scope="session")
def zoo(tmp_path_factory, data_dir):
    """``root`` (a zoo folder: ``general/`` and one folder per variant model, as ``training zoo`` lays it
    out), ``exports`` (variant or ``general`` → exported folder), ``cache`` (the Hub cache holding them)."""
    from transformers import BartForConditionalGeneration

    from training.__main__ import main as training_main
    from training.general import train_general
    from variants.presets import tiny_bart_config, tiny_tokenizer

    root = tmp_path_factory.mktemp("hub-repos")
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    BartForConditionalGeneration(tiny_bart_config(tokenizer)).save_pretrained(root / "tiny-bart")
    tokenizer.save_pretrained(root / "tiny-bart")
    general = train_general(
        str(root / "tiny-bart"),
        root / "general",
        max_steps=1,
        max_examples=4,
        batch_size=2,
        max_source_length=32,
        max_target_length=8,
        precision="fp32",
    )
    for variant, name in ZOO.items():
        data = root / "data" / f"{variant}.jsonl"
        data.parent.mkdir(exist_ok=True)
        data.write_text("".join(json.dumps(r) + "\n" for r in training_data(variant, data_dir)))
        training_main(
            [
                variant,
                "--method",
                name.split("-", 1)[1],
                "--base-model",
                str(general),
                "--train-file",
                str(data),
                "--output-dir",
                str(root / name),
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
                *(["--lora-target-modules", "q_proj,v_proj", "--lora-r", "4"] if variant == "ccs" else []),
            ]
        )
    out, cache = root / "exports", root / "hub-cache"
    exports = {"general": export_checkpoint(general, out / "general", repo_id=GENERAL_REPO)}
    add_to_cache(cache, GENERAL_REPO, exports["general"])
    with pytest.MonkeyPatch.context() as patch:  # the adapter's base is found in the cache, as on a user's machine
        patch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
        exports["ccs"] = export_checkpoint(
            root / ZOO["ccs"], out / "ccs", repo_id=repo("ccs"), base_model=GENERAL_REPO
        )
    for variant in ("topic", "tdsum", "entity", "persona"):
        exports[variant] = export_checkpoint(root / ZOO[variant], out / variant, repo_id=repo(variant))
    for variant in ZOO:
        add_to_cache(cache, repo(variant), exports[variant])
    return {"root": root, "exports": exports, "cache": cache}


@pytest.fixture
def from_cache(zoo, monkeypatch):
    """This process reads Hub repos from the fixture's cache (offline, as conftest sets)."""
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(zoo["cache"]))
    return zoo


def snippet(readme: Path) -> str:
    usage = readme.read_text(encoding="utf-8").split("\n## Usage\n", 1)[1]
    return re.search(r"```python\n(.*?)```", usage, re.S).group(1)


# --- 1. the processor is the code load_summarizer runs -----------------------------------------------
CONTROLS = {
    "topic": [{"topic": "business"}, {"topic": "sport"}, {"topic": "weather", "topic_words": "rain, storm, football"}],
    "tdsum": [{}, {"boost": ["summaries", "giraffe"]}, {"boost": ["keywords"], "suppress": ["rouge"]}],
    "entity": [{"entity": "Angela Merkel"}, {"entity": "Renault"}, {"entity": "Nobody Here"}],
    "persona": [{}, {"reader": None}, {"history": ["Bank profits rise", "Striker scores twice"]}],
    "ccs": [
        {},
        {"length": 2, "keywords": ["multi-scale"], "readability": "high", "focus": "empirical"},
        {"focus": "conceptual"},
    ],
}


def decoding_inputs(inputs) -> set:
    """What the shipped decoding (custom_generate/generate.py) reads beside the model's inputs: the control-free
    input classifier-free guidance contrasts with, and the decoding rules."""
    return {k for k in inputs if k.startswith("unconditional_") or k == "decoding_rules"}


@pytest.mark.parametrize("variant", list(ZOO))
def test_the_processor_gives_the_inputs_load_summarizer_gives(zoo, from_cache, variant):
    from transformers import AutoProcessor

    from hub_cards.card import EXAMPLE_DOCUMENT
    from variants import load_summarizer
    from variants.steering import decoded, pad, read_windows

    summarizer = load_summarizer(repo(variant))  # from the cache, as a SteerSum user would
    processor = AutoProcessor.from_pretrained(repo(variant), trust_remote_code=True)
    assert type(processor).__module__.startswith("transformers_modules")  # the repo's own code, not SteerSum's
    documents = [
        EXAMPLE_DOCUMENT,
        summarizer.variant.card_facts(summarizer.assets).get("example_document", EXAMPLE_DOCUMENT),
    ]
    controls = CONTROLS[variant]
    if variant == "persona":
        controls[1] = {"reader": next(iter(summarizer.assets.readers))}
    for document in documents:
        for given in controls:
            checked = summarizer.variant.validate(given, summarizer.assets)
            prepared = summarizer.variant.prepare(document, checked, summarizer.method, summarizer.assets)
            _, ids, [cut] = read_windows(
                summarizer.tokenizer,
                lambda _, text: summarizer.variant.prepare(text, checked, summarizer.method, summarizer.assets),
                [document],
                summarizer.max_source_length,
                summarizer.settings.source_windows,
            )
            expected = pad(summarizer.tokenizer, ids, [prepared])
            got = processor(document, given, return_tensors="pt")
            # beside the model's inputs, what the shipped decoding reads (custom_generate/generate.py)
            assert set(got) - decoding_inputs(got) == set(expected), (variant, given)
            for key in expected:
                assert torch.equal(got[key], expected[key].to(got[key].dtype)), (variant, given, key)
            if variant != "ccs":  # ccs also notes keywords absent from the document (stemmed, with NLTK)
                summary = decoded("", prepared, cut, summarizer.max_source_length, document)  # as the summarizer notes
                assert processor.notices == [summary.notices], (variant, given)
        # the control-free input classifier-free guidance contrasts with: the same as the variant's
        unconditional = summarizer.variant.unconditional(document, summarizer.method, summarizer.assets)
        _, ids, _ = read_windows(
            summarizer.tokenizer,
            lambda _, text: summarizer.variant.unconditional(text, summarizer.method, summarizer.assets),
            [document],
            summarizer.max_source_length,
            summarizer.settings.source_windows,
        )
        expected = pad(summarizer.tokenizer, ids, [unconditional])
        got = processor(document, return_tensors="pt", unconditional=True)
        assert set(got) - decoding_inputs(got) == set(expected), variant
        for key in expected:
            assert torch.equal(got[key], expected[key].to(got[key].dtype)), (variant, "unconditional", key)


def test_processors_refuse_bad_controls_by_name(zoo):
    from transformers import AutoProcessor

    topic = AutoProcessor.from_pretrained(zoo["exports"]["topic"], trust_remote_code=True)
    with pytest.raises(ValueError, match="control 'topic' is required; allowed: business"):
        topic("A document.", {})
    with pytest.raises(ValueError, match=r"unknown control\(s\) colour; allowed: topic, topic_words"):
        topic("A document.", {"topic": "sport", "colour": "red"})
    ccs = AutoProcessor.from_pretrained(zoo["exports"]["ccs"], trust_remote_code=True)
    with pytest.raises(ValueError, match=r"control 'length' must be an integer in \[0, 4\], got 9"):
        ccs("A document.", {"length": 9})
    tdsum = AutoProcessor.from_pretrained(zoo["exports"]["tdsum"], trust_remote_code=True)
    with pytest.raises(ValueError, match="both boosted and suppressed"):
        tdsum("A document.", {"boost": ["x"], "suppress": ["x"]})


def test_the_processor_code_needs_only_what_a_hub_user_has_and_matches_steersum():
    from metrics import text
    from metrics.ccs import length_bin_words
    from metrics.entity import aliases as steersum_aliases
    from models.ccs import processing_ccs
    from models.gsum import mentions, sentences, stopwords
    from models.processing_base import code_files
    from models.tdsum import processing_tdsum
    from models.topic_bart import processing_topic_bart

    processors = sorted(f for f in (ROOT / "models").glob("*/processing_*.py") if f.name != "processing_base.py")
    assert len(processors) == 5
    base = (ROOT / "models" / "processing_base.py").read_text()
    files = set()
    for processor in processors:  # each ships with the base beside it, whole (scripts/fix_copies.py writes it)
        copy = processor.parent / "processing_base.py"
        assert copy.read_text().startswith("# Copied from models.processing_base\n" + base), copy
        shipped = {Path(f) for f in code_files(str(processor))}  # what its save_pretrained copies
        assert copy in shipped, processor
        files |= shipped
    assert {"mentions.py", "sentences.py", "stopwords.py"} <= {f.name for f in files}  # the entity processor's
    allowed = {
        "__future__",
        "inspect",
        "json",
        "logging",
        "os",
        "re",
        "shutil",
        "threading",
        "numpy",
        "torch",
        "transformers",
    }  # a Hub user's environment: transformers needs numpy and torch, nothing more
    # the reader's sentences (persona) and ccs's high readability split the article with Punkt, as the served
    # decoding rules do: imported inside those functions only (the card names it), never at the top of the file,
    # so a model served without rules needs nothing more
    only_inside = {"processing_persona.py": {"nltk"}, "processing_ccs.py": {"nltk"}}
    for f in sorted(files):
        imported = set(re.findall(r"^\s*(?:from|import) (\w+)", f.read_text(), re.M))
        at_top = set(re.findall(r"^(?:from|import) (\w+)", f.read_text(), re.M))
        assert imported <= allowed | only_inside.get(f.name, set()) and at_top <= allowed, (f.name, imported - allowed)
    for module in (processing_tdsum, processing_topic_bart):  # the word pattern is SteerSum's
        assert (module.WORD.pattern, module.WORD.flags) == (text.WORD.pattern, text.WORD.flags)
    assert stopwords.STOPWORDS == text.STOPWORDS
    from models.topic_bart.modeling_topic_bart import NO_TOPIC

    assert processing_topic_bart.NO_TOPIC == NO_TOPIC
    assert [processing_ccs.length_bin_words(b) for b in range(5)] == [length_bin_words(b) for b in range(5)]
    for name in (
        "Barack Obama",
        "Martin Luther King Jr.",
        "Bank of England",
        "Renault",
        "BBC One",
        "Manchester United",
        "Ludwig van Beethoven",
        "H. G. Wells",
    ):
        assert mentions.aliases(name) == steersum_aliases(name)
    # organisations get no last-word alias, and a one-word alias matches only as written
    assert not mentions.mention_pattern("BBC One").search("It was one of the best years")
    assert mentions.mention_pattern("Barack Obama").search("Obama spoke")
    assert not mentions.mention_pattern("Barack Obama").search("the obama era")
    # the sentence rule: abbreviations and initials do not end a sentence
    assert sentences.split_sentences('Mr. J. Smith met U.S. officials. "Fine," he said! It rained.') == [
        "Mr. J. Smith met U.S. officials.",
        '"Fine," he said!',
        "It rained.",
    ]


def test_the_lemma_table_gives_the_lemmatizers_terms_on_every_word_of_the_bundled_articles(zoo, data_dir):
    # The exported topic processor tags without WordNet: its table must agree with metrics.terms.term on every
    # word whose term the topic space knows (and know no term for any other word).
    from transformers import AutoProcessor

    from metrics.terms import term
    from metrics.text import WORD

    processor = AutoProcessor.from_pretrained(zoo["exports"]["topic"], trust_remote_code=True)
    vocabulary = set(processor.vocabulary)
    texts = [
        r["source"]
        for name in ("train", "val", "test")
        for r in read_jsonl(data_dir / "bbc_summary" / f"{name}.jsonl")
    ]
    found = {w.lower() for t in texts for w in WORD.findall(t)} | {"banks'", "children", "ran", "don't", "it's"}
    wrong = [w for w in sorted(found) if processor.term(w) != (term(w) if term(w) in vocabulary else None)]
    assert len(found) > 3000 and wrong == []


# --- 2. cards whose snippet needs transformers and peft only ------------------------------------------
def test_every_card_snippet_runs_offline_from_the_cache_and_equals_load_summarizer(zoo, from_cache, tmp_path):
    from variants import load_summarizer

    scripts = {}
    for name in [*ZOO, "general"]:
        code = snippet(zoo["exports"][name] / "README.md")
        assert "steersum" not in code.lower().replace(ORG, "") and "import variants" not in code
        assert set(re.findall(r"^(?:from|import) (\w+)", code, re.M)) <= {"transformers", "peft"}, code
        scripts[name] = tmp_path / f"usage_{name}.py"
        scripts[name].write_text(code)  # as written: it names the repo id, which the cache holds
    runner = (
        "import runpy, sys\nfor path in sys.argv[1:]:\n    print('=== ' + path, flush=True)\n"
        "    runpy.run_path(path, run_name='__main__')\n    sys.stdout.flush()\n"
    )
    run = run_offline(runner, *map(str, scripts.values()), home=tmp_path, cache=zoo["cache"])
    assert run.returncode == 0, run.stderr[-4000:]
    printed = dict(zip(scripts, (part.split("\n", 1)[1] for part in run.stdout.split("=== ")[1:])))
    for variant in ZOO:
        summarizer = load_summarizer(repo(variant))
        facts = summarizer.variant.card_facts(summarizer.assets)
        from hub_cards.card import EXAMPLE_DOCUMENT, example_controls

        document = facts.get("example_document", EXAMPLE_DOCUMENT)
        controls = facts.get("example_controls") or example_controls(variant, list(summarizer.controls()))
        [summary] = summarizer.summarize([document], [controls])
        assert printed[variant].strip() == summary.text, (variant, printed[variant], summary.text)
    assert printed["general"].strip() is not None


# --- 3. the general summarizer, the adapter that names it, --base-model ---------------------------------
def test_the_general_summarizer_exports_with_its_card_and_the_adapter_names_it(zoo):
    general, ccs = zoo["exports"]["general"], zoo["exports"]["ccs"]
    assert {
        "model.safetensors",
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "steersum.json",
        "README.md",
    } <= {p.name for p in general.iterdir()}
    card = ModelCard.load(general / "README.md")
    assert (card.data.library_name, card.data.pipeline_tag) == ("transformers", "summarization")
    assert "steersum-general" in card.data.tags and "**Test model.** It was trained for 1 optimizer step" in card.text
    assert f'repo_id = "{GENERAL_REPO}"' in snippet(general / "README.md")
    from hub_cards.push import check_folder

    assert check_folder(general).data.model_name == "general"  # pushable: its metadata parses, its weights load
    assert json.loads((ccs / "adapter_config.json").read_text())["base_model_name_or_path"] == GENERAL_REPO
    ccs_card = ModelCard.load(ccs / "README.md")
    assert (ccs_card.data.base_model, ccs_card.data.library_name) == (GENERAL_REPO, "peft")
    assert "on the BART attention projections" in " ".join(ccs_card.text.split())  # not T5: the base is a BART
    assert 'AutoPeftModelForSeq2SeqLM.from_pretrained(repo_id, dtype="float32")' in snippet(ccs / "README.md")


def test_cards_of_one_step_models_say_so_and_name_only_reported_metrics(zoo):
    for variant in ZOO:
        card = ModelCard.load(zoo["exports"][variant] / "README.md")
        assert "**Test model.** It was trained for 1 optimizer step " in card.text, variant  # zoo --quick's models
        assert card.data.metrics is None and card.data.eval_results is None  # not evaluated: no metric is claimed
    tdsum = (zoo["exports"]["tdsum"] / "README.md").read_text()
    assert "`rouge_k`" not in tdsum and "`boosted_found`" in tdsum  # the metrics it reports, by their names


def test_base_model_must_resolve_and_fit_the_adapter(zoo, from_cache, tmp_path):
    from transformers import BartForConditionalGeneration

    from variants.presets import tiny_bart_config, tiny_tokenizer

    ccs = zoo["root"] / ZOO["ccs"]
    with pytest.raises(ExportError, match="--base-model steersum-test/nowhere: not in the local Hugging Face cache"):
        export_checkpoint(ccs, tmp_path / "a", base_model=f"{ORG}/nowhere")
    with pytest.raises(ExportError, match="not one exported with --repo-id"):
        export_checkpoint(ccs, tmp_path / "b", base_model=str(zoo["root"] / "general"))  # a checkpoint, no repo id
    # another BART, wider: every LoRA layer's shapes differ from the adapter's
    tokenizer = tiny_tokenizer()
    BartForConditionalGeneration(
        tiny_bart_config(tokenizer, d_model=32, encoder_ffn_dim=64, decoder_ffn_dim=64)
    ).save_pretrained(tmp_path / "wide")
    add_to_cache(zoo["cache"], f"{ORG}/wide-bart", tmp_path / "wide")
    with pytest.raises(
        ExportError,
        match=r"--base-model steersum-test/wide-bart: not the base this adapter was "
        r"trained on: model\.decoder\.layers\.0\.encoder_attn\.q_proj\.weight is \[32, 32\], the "
        r"adapter's is \[64, 64\];.*\(and \d+ more\)",
    ):
        export_checkpoint(ccs, tmp_path / "c", base_model=f"{ORG}/wide-bart")
    assert not any((tmp_path / name).exists() for name in "abc")  # nothing written
    # the folder of the general summarizer's export names its repo id
    out = export_checkpoint(ccs, tmp_path / "d", repo_id=repo("ccs"), base_model=str(zoo["exports"]["general"]))
    assert json.loads((out / "adapter_config.json").read_text())["base_model_name_or_path"] == GENERAL_REPO


def test_the_adapter_loads_with_auto_peft_from_the_cache_in_a_fresh_process(zoo, tmp_path):
    code = (
        "from peft import AutoPeftModelForSeq2SeqLM\n"
        f"model = AutoPeftModelForSeq2SeqLM.from_pretrained({repo('ccs')!r})\n"
        "print(type(model.get_base_model()).__name__, model.peft_config['default'].base_model_name_or_path)\n"
    )
    run = run_offline(code, home=tmp_path, cache=zoo["cache"])
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["BartForConditionalGeneration", GENERAL_REPO]


# --- 4. zoo --push-to-hub: the base, the five variant models and the Space, against a fake Hub ---------
class FakeHub:
    """Records each upload (the files, and what the checks below read) and answers a commit per push."""

    instances: list["FakeHub"] = []

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
        read = {
            name: (folder / name).read_text()
            for name in ("adapter_config.json", "space/catalog.json", "README.md")
            if (folder / name).is_file()
        }
        self.uploads.append(
            {
                "repo_id": kwargs["repo_id"],
                "repo_type": kwargs["repo_type"],
                "oid": oid,
                "files": sorted(p.name for p in folder.iterdir()),
                **read,
            }
        )
        return type(
            "CommitInfo", (), {"oid": oid, "commit_url": f"https://huggingface.co/{kwargs['repo_id']}/commit/{oid}"}
        )()


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    from huggingface_hub.repocard import RepoCard

    import hub_cards.push

    FakeHub.instances = []
    monkeypatch.setattr(hub_cards.push, "HfApi", FakeHub)
    monkeypatch.setattr(RepoCard, "validate", lambda self, repo_type=None: None)
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(hub_constants, "HF_TOKEN_PATH", str(tmp_path / "no-login" / "token"))


@pytest.fixture
def finished_zoo(zoo, tmp_path):
    """The fixture's zoo as ``training zoo`` leaves it when finished: each model with its evaluation report."""
    root = tmp_path / "zoo"
    for name in ["general", *ZOO.values()]:
        shutil.copytree(zoo["root"] / name, root / name)
    for name in ZOO.values():
        (root / name / "eval_report.json").write_text(json.dumps({"n_examples": 0, "metrics": {}}))
    return root


def test_zoo_push_to_hub_publishes_the_base_the_five_models_and_a_pinned_space(
    finished_zoo, fake_hub, monkeypatch, capsys
):
    from huggingface_hub import SpaceCard

    import training.zoo
    from training.__main__ import main as training_main
    from training.zoo_models import ZooModel

    with pytest.raises(SystemExit, match="^error: no Hugging Face token"):  # checked before anything trains
        training_main(["zoo", "--out", str(finished_zoo), "--push-to-hub", "org"])
    trained = []
    monkeypatch.setattr(
        training.zoo, "run_zoo", lambda root, only, budget, index=None: trained.append(root) or {"models": {}}
    )
    # the fixture's models (topic with tags, whose processor ships the lemma table) stand for the zoo's
    monkeypatch.setattr(training.zoo, "MODELS", [ZooModel(v, n.split("-", 1)[1]) for v, n in ZOO.items()])
    training_main(["zoo", "--out", str(finished_zoo), "--push-to-hub", "org", "--hub-token", "hf_test"])
    [api] = FakeHub.instances
    assert trained == [finished_zoo] and api.token == "hf_test"
    pushed = [u["repo_id"] for u in api.uploads]
    variants = [f"org/steersum-{name}" for name in ZOO.values()]
    assert pushed == ["org/steersum-general", *variants, "org/steersum"]  # the base first: the adapter names it
    general, *models, space = api.uploads
    assert "model.safetensors" in general["files"] and 'repo_id = "org/steersum-general"' in general["README.md"]
    for upload, variant in zip(models, ZOO):
        assert {"processor_config.json", "README.md"} <= set(upload["files"]), variant
        assert (
            any(f.startswith("processing_") for f in upload["files"])
            and f'repo_id = "{upload["repo_id"]}"' in upload["README.md"]
        )
        assert "base_model: org/steersum-general" in upload["README.md"]  # named, never a local folder
    assert json.loads(models[-1]["adapter_config.json"])["base_model_name_or_path"] == "org/steersum-general"
    catalog = json.loads(space["space/catalog.json"])["models"]
    assert [(e["repo"], e["revision"], e["variant"]) for e in catalog] == [
        (u["repo_id"], u["oid"], variant) for u, variant in zip(models, ZOO)
    ]  # each pinned to the commit pushed
    assert space["repo_type"] == "space" and SpaceCard(space["README.md"]).data.models == variants
    assert '"space": "https://huggingface.co/org/steersum/commit/' in capsys.readouterr().out


def test_the_processors_tfidf_is_scikit_learns(data_dir):
    # TDSum's features come from the processor's numpy TF-IDF (no scikit-learn in a Hub user's environment):
    # the same numbers as the fitted vectorizer's transform.
    import numpy as np

    from variants.tdsum import default_assets, document_words

    vectorizer = default_assets().vectorizer
    documents = [r["source"] for r in read_jsonl(data_dir / "scitldr" / "test.jsonl")][:20]
    matrix = vectorizer.transform(documents).tocsr()
    for row, words in enumerate(document_words(documents, vectorizer)):
        start, end = matrix.indptr[row], matrix.indptr[row + 1]
        by_column = dict(zip(matrix.indices[start:end].tolist(), matrix.data[start:end].tolist()))
        expected = np.array([by_column.get(vectorizer.vocabulary_.get(t, -1), 0.0) for t in words.terms], np.float32)
        assert np.array_equal(words.scores, expected) and words.scores.any()
