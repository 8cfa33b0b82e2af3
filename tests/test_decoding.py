"""variants/decoding.py, the one decoding module (with the siblings it imports): the plain ``generate`` call
(what an exported repo runs as ``custom_generate/generate.py``) writes what the Space's faster path writes, and an
exported folder's ``AutoProcessor`` + ``AutoModelForSeq2SeqLM.generate`` + ``processor.decode`` gives the Space's
summaries."""

import ast
import json
import sys
import uuid
from pathlib import Path

import pytest
import torch
from test_guidance import DOCS, ccs_case, entity_case, summarizer_of, tdsum_case, topic_case

import variants.seq2seq
from variants.classifier_free_guidance import STRENGTH_FIELD, check_strength, default_strength, read_strength
from variants.decoding_rules import DecodingRules
from variants.seq2seq import GenerationSettings

ROOT = Path(__file__).resolve().parents[1]
SERVED = GenerationSettings(
    num_beams=2, max_new_tokens=12, control_strength=3.0, constraints=True, document_words=True
)
CASES = [
    ("topic", "prepend-tag", topic_case),
    ("entity", "sentences", entity_case),
    ("tdsum", "tdsum", tdsum_case),
    ("ccs", "prompt", ccs_case),
]


def texts(summarizer, controls, settings):
    return [s.text for s in summarizer.summarize(DOCS, controls, settings=settings)]


def shipped() -> list[Path]:
    """The decoding module and the sibling modules it imports relatively, as transformers finds them (the export
    copies them into custom_generate/ under their own names)."""
    from transformers.dynamic_module_utils import get_relative_import_files

    return [
        ROOT / "variants" / "decoding.py",
        *map(Path, get_relative_import_files(ROOT / "variants" / "decoding.py")),
    ]


def test_the_modules_import_torch_transformers_the_standard_library_and_each_other_only():
    files = shipped()
    assert len(files) > 1 and all(f.parent == ROOT / "variants" for f in files)
    imported = set()
    for path in files:
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level:
                # a sibling by name (``from .x import y``): what transformers copies beside generate.py
                assert node.level == 1 and node.module, (
                    f"{path.name}:{node.lineno} would not resolve in custom_generate/"
                )
                assert ROOT / "variants" / f"{node.module}.py" in files, f"{path.name}:{node.lineno}"
            elif isinstance(node, ast.ImportFrom):
                imported.add(node.module.split(".")[0])
        assert "\nimport nltk" not in source and "\nfrom nltk" not in source, path.name
    # nltk only inside sentences(), for a rule that reads the document's sentences when none are given
    assert imported - set(sys.stdlib_module_names) == {"torch", "transformers", "nltk"}


@pytest.mark.parametrize(("variant_id", "method", "build"), CASES, ids=[c[0] for c in CASES])
def test_the_plain_generate_call_writes_what_the_served_path_writes(variant_id, method, build, monkeypatch):
    summarizer, controls = summarizer_of(variant_id, method, build)
    served = texts(summarizer, controls, SERVED)
    monkeypatch.setattr(variants.seq2seq.Steering, "speedups", None)
    assert texts(summarizer, controls, SERVED) == served


def test_the_model_alone_differs_from_the_served_decoding_for_a_rule_the_model_does_not_follow():
    summarizer, controls = summarizer_of("entity", "sentences", entity_case)
    served = texts(summarizer, controls, SERVED)
    alone = texts(summarizer, controls, SERVED.alone())
    # the entity's name is a keyword the served decoding forces in; a random tiny model writes it by chance only
    assert all(c["entity"].lower() in s.lower() for s, c in zip(served, controls))
    assert served != alone


def test_the_strength_is_read_under_its_name_and_its_old_one():
    assert read_strength({"control_strength": 2.0, "control_guidance": 3.0}) == 2.0
    assert read_strength({"control_guidance": 3.0}) == 3.0 and read_strength({}, 1.0) == 1.0
    assert GenerationSettings.from_record({"control_guidance": 2.5}).control_strength == 2.5
    with pytest.raises(ValueError, match=r"from 1 \(plain generation\) to 10, got 0.5"):
        check_strength(0.5)


def test_rules_as_a_processor_gives_them():
    rules = DecodingRules.from_json({"min_words": 51, "max_words": 100, "keywords": ["LoRA"], "document": "x"})
    assert (rules.min_words, rules.max_words, rules.keywords, rules.prefer) == (51, 100, ("LoRA",), None)
    every = DecodingRules.from_json({"prefer": True, "prefer_bias": 2.0})
    assert every.preferred(["a.", "b."]) == ["a.", "b."] and every.prefer_bias == 2.0
    assert DecodingRules.from_json({"prefer": ["b."]}).preferred(["a.", "b."]) == ["b."]
    assert DecodingRules.from_json({"document": "x"}).empty


def exported(summarizer, out: Path) -> Path:
    """The folder an export writes for the summarizer's weights, by the export's own steps: the model (with
    its remote code), the processor, postprocess.py and custom_generate/generate.py, and a generation config
    holding the served beams, length and control strength."""
    from hub_cards.export import add_processor, add_remote_code

    summarizer.model.save_pretrained(out)
    summarizer.tokenizer.save_pretrained(out)
    add_remote_code(out)
    summarizer.settings = SERVED  # served with its rules: the processor gives them
    add_processor(out, summarizer)
    config = json.loads((out / "generation_config.json").read_text())
    config.update(num_beams=SERVED.num_beams, max_new_tokens=SERVED.max_new_tokens, early_stopping=True)
    config[STRENGTH_FIELD] = SERVED.control_strength
    config["document_words"] = SERVED.document_words
    config["_from_model_config"] = False  # else rebuilt from config.json on loading, without the strength
    (out / "generation_config.json").write_text(json.dumps(config))
    return out


@pytest.mark.parametrize(("variant_id", "method", "build"), CASES[:2] + CASES[3:], ids=["topic", "entity", "ccs"])
def test_an_exported_folder_generates_what_the_space_serves(variant_id, method, build, tmp_path):
    from transformers import AutoModelForSeq2SeqLM, AutoProcessor

    summarizer, controls = summarizer_of(variant_id, method, build)  # ccs's first asks for high readability
    # a folder name of its own: transformers caches remote code by the folder's name (HF_MODULES_CACHE)
    out = exported(summarizer, tmp_path / f"decoding-{variant_id}-{uuid.uuid4().hex[:12]}")
    # the shipped decoding is the source's: decoding.py as generate.py, its siblings under their own names
    files = shipped()
    assert sorted(p.name for p in (out / "custom_generate").iterdir()) == sorted(
        ["generate.py", *(f.name for f in files[1:])]
    )
    assert (out / "custom_generate" / "generate.py").read_text() == files[0].read_text()
    assert all((out / "custom_generate" / f.name).read_text() == f.read_text() for f in files[1:])

    processor = AutoProcessor.from_pretrained(out, trust_remote_code=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(out, trust_remote_code=True)
    assert default_strength(model) == SERVED.control_strength
    if variant_id == "ccs":  # high readability: the processor prefers the sentences the Space's rule prefers
        from metrics.text import sentences

        high = {"readability": "high"}
        preferred = summarizer.variant.constraints(high).preferred(sentences(DOCS[0]))
        assert processor.rules(DOCS[0], high) == {"prefer": preferred} and preferred
    got, ruled = [], []
    for document, given in zip(DOCS, controls):  # the contract, one document at a time
        inputs = processor(document, given, return_tensors="pt")
        assert "unconditional_input_ids" in inputs  # these controls change every model input
        ruled.append("decoding_rules" in inputs)
        with torch.inference_mode():
            output = model.generate(**inputs)
        got.append(processor.decode(output[0], skip_special_tokens=True))
    assert any(ruled)  # ccs's second document asks for no length and no keyword: no rules
    # the Space, one document a request
    assert got == [summarizer.summarize([d], [c], settings=SERVED)[0].text for d, c in zip(DOCS, controls)]
