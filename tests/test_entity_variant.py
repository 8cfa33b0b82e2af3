"""Entity variant (EntSUM, Maddela et al.): GSum (signal attention, cache, warm start), the proxy-target
builder, Lead3ent, the signal, scores, suggestions, a tiny trained checkpoint (loss, export, fresh-process
reload), and bad input. The metric itself is tested in tests/test_entity.py."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM, BartConfig, BartForConditionalGeneration

import models  # noqa: F401  (registers GSum)
from hub_cards.card import MISSING
from hub_cards.export import export_checkpoint
from metrics.quality import QUALITY_FIELDS
from models import GSumConfig, GSumForConditionalGeneration
from variants import REGISTRY, ControlError, InputError, get_variant, load_summarizer
from variants.entity import EXAMPLE_DOCUMENT, EntityAssets, MissingNERModel, group_names, ner
from variants.entity.data import entity_examples, proxy_target, reference_target
from variants.presets import tiny_tokenizer

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(
    vocab_size=99,
    d_model=16,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
    encoder_ffn_dim=32,
    decoder_ffn_dim=32,
    max_position_embeddings=64,
)
# Six sentences; Merkel is named (full name or surname) in sentences 1, 3, 4 and 6.
DOC = (
    "Angela Merkel arrived in Paris on Monday. The weather was cold. Merkel met the French president. "
    "Later Merkel spoke to reporters. Markets were calm. In the evening Angela Merkel flew home."
)


@pytest.fixture(scope="module")
def entity():
    return get_variant("entity")


def tiny_gsum(**overrides):
    torch.manual_seed(0)
    return GSumForConditionalGeneration(GSumConfig(**{**TINY, "init_std": 0.2, **overrides})).eval()


# --- GSum ----------------------------------------------------------------------------------------
def test_config_checks_the_number_of_signal_layers():
    assert GSumConfig(**TINY).signal_top_layers == 1  # GSum/EntSUM: only the top layer is not shared
    for bad in (0, 3, "1"):
        with pytest.raises(ValueError, match="signal_top_layers must be an integer between 1 and encoder_layers"):
            GSumConfig(signal_top_layers=bad, **TINY)


def test_the_signal_changes_the_output_distribution_and_padding_does_not():
    model = tiny_gsum()
    ids, dec = torch.randint(4, 99, (2, 9)), torch.randint(4, 99, (2, 5))
    signal = torch.tensor([[0, 11, 12, 2], [0, 13, 2, 1]])  # pad id 1
    with torch.no_grad():
        base = model(input_ids=ids, decoder_input_ids=dec, signal_input_ids=signal).logits.softmax(-1)
        other = model(
            input_ids=ids, decoder_input_ids=dec, signal_input_ids=torch.tensor([[0, 40, 41, 2], [0, 42, 2, 1]])
        ).logits.softmax(-1)
        padded = model(
            input_ids=ids,
            decoder_input_ids=dec,
            signal_input_ids=torch.cat([signal, torch.ones(2, 5, dtype=torch.long)], 1),
        ).logits.softmax(-1)
    # Total variation between the next-token distributions: other signal, other summary.
    assert (base - other).abs().sum(-1).max() / 2 > 1e-3
    torch.testing.assert_close(padded, base, rtol=0, atol=1e-6)  # prepare's padding is dropped by the model
    with pytest.raises(ValueError, match="needs its signal"):
        model(input_ids=ids, decoder_input_ids=dec)
    with pytest.raises(ValueError, match="no signal token"):
        model(input_ids=ids, decoder_input_ids=dec, signal_input_ids=torch.tensor([[0, 2], [1, 1]]))


def test_cached_decoding_equals_the_full_forward_and_beam_search_runs():
    # The signal attentions cache their keys/values in cross-attention slots L..2L-1 (L = 2 here).
    model = tiny_gsum()
    ids, dec = torch.randint(4, 99, (2, 9)), torch.randint(4, 99, (2, 5))
    signal = torch.tensor([[0, 11, 12, 2], [0, 13, 2, 1]])
    with torch.no_grad():
        full = model(input_ids=ids, decoder_input_ids=dec, signal_input_ids=signal).logits
        encoded, past, steps = model.get_encoder()(input_ids=ids, signal_input_ids=signal), None, []
        for t in range(dec.shape[1]):
            out = model(
                encoder_outputs=encoded, decoder_input_ids=dec[:, t : t + 1], past_key_values=past, use_cache=True
            )
            past = out.past_key_values
            steps.append(out.logits)
    torch.testing.assert_close(torch.cat(steps, 1), full, rtol=0, atol=1e-5)
    assert len(past.cross_attention_cache.layers) == 4
    out = model.generate(input_ids=ids, signal_input_ids=signal, max_new_tokens=4, num_beams=3)
    assert out.shape[0] == 2


@pytest.mark.parametrize("top_layers", [1, 2])
def test_warm_start_copies_the_right_weights(top_layers):
    torch.manual_seed(0)
    bart = BartForConditionalGeneration(BartConfig(**TINY)).eval()
    model = GSumForConditionalGeneration.from_bart(bart, signal_top_layers=top_layers)
    mine = model.state_dict()
    for name, weight in bart.state_dict().items():  # every BART weight, as is
        assert torch.equal(mine[name], weight), name
    encoder = model.model.encoder
    for j, layer in enumerate(encoder.signal_layers):  # signal top layer j <- source layer L - k + j
        source = bart.model.encoder.layers[len(encoder.layers) - top_layers + j]
        for (name, w), (_, v) in zip(layer.state_dict().items(), source.state_dict().items()):
            assert torch.equal(w, v), (j, name)
    for layer, plain in zip(model.model.decoder.layers, bart.model.decoder.layers):
        for name, w in layer.signal_attn.state_dict().items():
            assert torch.equal(w, plain.encoder_attn.state_dict()[name]), name
        assert torch.equal(layer.signal_attn_layer_norm.weight, plain.encoder_attn_layer_norm.weight)
    # The signal layers are copies, not the same tensors: training moves them apart.
    assert encoder.signal_layers[0].fc1.weight.data_ptr() != encoder.layers[-top_layers].fc1.weight.data_ptr()
    with pytest.raises(ValueError, match="plain BART, not a GSum"):
        GSumForConditionalGeneration.from_bart(model)


def test_a_bart_checkpoint_loads_with_only_the_signal_weights_new(tmp_path):
    from training.seq2seq import DataArguments
    from variants.entity.train import Arguments, build

    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    bart = BartForConditionalGeneration(BartConfig(**{**TINY, "vocab_size": len(tokenizer)}))
    bart.save_pretrained(tmp_path / "bart")
    tokenizer.save_pretrained(tmp_path / "bart")
    _, info = GSumForConditionalGeneration.from_pretrained(tmp_path / "bart", output_loading_info=True)
    assert info["missing_keys"] and all(".signal_" in k for k in info["missing_keys"])
    # The trainer's --warm-start: GSum from the BART folder, recorded as the base model.
    (tmp_path / "train.jsonl").write_text("{}\n")
    data = DataArguments(train_file=str(tmp_path / "train.jsonl"))
    model, _, assets = build(Arguments(method="name", warm_start=str(tmp_path / "bart")), data)
    assert data.base_model == str(tmp_path / "bart") and assets.max_signal_length == 32
    assert torch.equal(
        model.model.decoder.layers[1].signal_attn.q_proj.weight,
        bart.model.decoder.layers[1].encoder_attn.q_proj.weight,
    )


def old_names(file: Path) -> None:
    """Rewrite a saved folder's weight names as they were before the signal had its name."""
    from safetensors.torch import load_file, save_file

    renamed = {k.replace(".signal_", ".guidance_"): v for k, v in load_file(str(file)).items()}
    assert any(".guidance_attn." in k for k in renamed) and any(".guidance_layers." in k for k in renamed)
    save_file(renamed, str(file), metadata={"format": "pt"})


def test_a_folder_saved_under_the_old_names_loads_as_the_renamed_one(tmp_path, monkeypatch):
    """A checkpoint, an adapter, a record and trainer flags from before GSum's second input was called the
    signal (``guidance_top_layers``, ``guidance_attn``, ``guidance_layers``, ``max_guidance_length``) load
    as the renamed ones, giving the same logits."""
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import HfArgumentParser

    from variants.entity.train import Arguments

    model = tiny_gsum(signal_top_layers=2)
    ids, dec, signal = torch.randint(4, 99, (2, 9)), torch.randint(4, 99, (2, 5)), torch.tensor([[0, 11, 2, 1]] * 2)
    with torch.no_grad():
        expected = model(input_ids=ids, decoder_input_ids=dec, signal_input_ids=signal).logits
    model.save_pretrained(tmp_path / "old")
    config = json.loads((tmp_path / "old" / "config.json").read_text())
    config["guidance_top_layers"] = config.pop("signal_top_layers")
    (tmp_path / "old" / "config.json").write_text(json.dumps(config))
    old_names(tmp_path / "old" / "model.safetensors")
    loaded, info = AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "old", output_loading_info=True)
    assert not any(info.values()) and loaded.config.signal_top_layers == 2
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=ids, decoder_input_ids=dec, signal_input_ids=signal).logits, expected)
    loaded.save_pretrained(tmp_path / "again")  # saved again, under the new names
    assert "signal_top_layers" in json.loads((tmp_path / "again" / "config.json").read_text())
    assert ".signal_attn." in (tmp_path / "again" / "model.safetensors").read_bytes().decode("latin-1")

    # A LoRA adapter on the signal path (as the store keeps GSum), its weights under the old names.
    torch.manual_seed(1)
    lora = LoraConfig(r=2, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    adapter = get_peft_model(tiny_gsum(signal_top_layers=2), lora).eval()
    with torch.no_grad():
        expected = adapter(input_ids=ids, decoder_input_ids=dec, signal_input_ids=signal).logits
    adapter.save_pretrained(tmp_path / "adapter")
    old_names(tmp_path / "adapter" / "adapter_model.safetensors")
    merged = PeftModel.from_pretrained(tiny_gsum(signal_top_layers=2), tmp_path / "adapter").merge_and_unload()
    with torch.no_grad():
        logits = merged(input_ids=ids, decoder_input_ids=dec, signal_input_ids=signal).logits
    assert torch.allclose(logits, expected, atol=1e-5)

    # The record's signal length and the trainer's flags.
    tokenizer = tiny_tokenizer()
    assets = get_variant("entity").load_assets(tmp_path, {"max_guidance_length": 32}, None, tokenizer)
    assert assets.max_signal_length == 32
    with pytest.warns(FutureWarning, match="--max-guidance-length is deprecated: use --max-signal-length"):
        (own,) = HfArgumentParser(Arguments).parse_args_into_dataclasses(
            ["--max-guidance-length", "32", "--guidance-top-layers", "2"]
        )
    assert (own.max_signal_length, own.signal_top_layers) == (32, 2)


# --- proxy targets (EntSUM Sec. 4.1.4) ---------------------------------------------------------------
def test_proxy_target_when_the_reference_never_names_the_entity():
    reference = "Markets were calm. Leaders met in Paris."
    target, from_reference = proxy_target(DOC, reference, "Angela Merkel")
    # (a) gives nothing, (b) the lead three sentences naming her: sentences 1, 3 and 4 of DOC.
    assert from_reference == 0 and target == [
        "Angela Merkel arrived in Paris on Monday.",
        "Merkel met the French president.",
        "Later Merkel spoke to reporters.",
    ]


def test_proxy_target_keeps_three_of_more_reference_sentences():
    reference = "Merkel spoke. Prices fell. Merkel left. Angela Merkel returned. Merkel slept."
    target, from_reference = proxy_target(DOC, reference, "Angela Merkel")
    assert from_reference == 3 and target == ["Merkel spoke.", "Merkel left.", "Angela Merkel returned."]


def test_proxy_target_counts_the_surname_and_skips_sentences_already_taken():
    # Only the surname names her in the reference; its second sentence is DOC's sentence 3 (an extractive
    # reference, as bbc_summary's): (b) then adds sentence 1 and, skipping 3, stops at three sentences.
    reference = "Reporters waited. Merkel met the French president. Merkel smiled."
    target, from_reference = proxy_target(DOC, reference, "Angela Merkel")
    assert from_reference == 2 and target == [
        "Merkel met the French president.",
        "Merkel smiled.",
        "Angela Merkel arrived in Paris on Monday.",
    ]
    assert proxy_target(DOC, "Nothing here.", "Boris Johnson") == ([], 0)


def test_entity_examples_keep_salient_entities_and_count(entity):
    record = {"id": "doc-1", "source": DOC + " Emmanuel Macron greeted her.", "target": "Merkel visited Paris."}
    examples, counts = entity_examples([record], "hand", min_mentions=2)
    # spaCy finds Angela Merkel (4 sentences), Paris and Emmanuel Macron (1 sentence: dropped, as Paris is no
    # person or organization). One example, deterministic.
    assert [e["controls"] for e in examples] == [{"entity": "Angela Merkel"}]
    assert examples[0]["target"] == (
        "Merkel visited Paris. Angela Merkel arrived in Paris on Monday. Merkel met the French president."
    )
    assert examples[0]["target_from_reference"] == 1 and examples[0]["dataset"] == "hand"
    assert counts["examples"] == 1 and counts["target: reference + lead"] == 1 and counts["too few mentions"] >= 1
    assert entity_examples([record], "hand")[0] == examples


def test_test_targets_use_rule_a_only_and_drop_what_it_cannot_build(entity):
    # (a) alone: the reference's sentences naming her, no lead sentence added
    assert reference_target("Merkel visited Paris. Prices fell.", "Angela Merkel") == (["Merkel visited Paris."], 1)
    record = {"id": "doc-1", "source": DOC + " Emmanuel Macron greeted her.", "target": "Merkel visited Paris."}
    examples, counts = entity_examples([record], "hand", test=True)
    assert [(e["controls"], e["target"]) for e in examples] == [({"entity": "Angela Merkel"}, "Merkel visited Paris.")]
    never = {**record, "target": "Markets were calm."}  # the reference never names her: no test example
    assert entity_examples([never], "hand", test=True)[0] == []
    assert entity_examples([never], "hand", test=True)[1]["not named in the reference"] == 1
    lead = {
        **record,
        "target": "Angela Merkel arrived in Paris on Monday. Merkel met the French president. "
        "Later Merkel spoke to reporters.",
    }  # exactly Lead3ent's output: dropped
    assert entity_examples([lead], "hand", test=True)[1]["target equals Lead3ent"] == 1


def test_the_test_set_holds_no_lead3ent_output_and_scores_lead3_and_lead3ent(entity):
    """Measured on the bundled test sets (bbc_summary 255 pairs / cnndm_sample 98): Lead3ent ROUGE-1
    0.730 / 0.239, Lead-3 0.377 / 0.197 (with organisations' last-word aliases and unmerged titles:
    314 / 109 pairs, 0.711 / 0.241 and 0.375 / 0.202); before (proxy targets, CNN/DM) 321 of 432
    targets were Lead3ent's output and its ROUGE-1 was 0.938."""
    from training.evaluate import evaluate

    examples = entity.evaluation.test_examples()
    assert [e["dataset"] for e in examples] == sorted(e["dataset"] for e in examples)  # bbc_summary first
    assert {e["dataset"] for e in examples} == {"bbc_summary", "cnndm_sample"}
    reports = {s.method: evaluate(s, examples, "test") for s in (entity.baseline(), entity.lead3())}
    outputs = [row["summary"] for row in reports["lead3ent"]["examples"]]
    assert not any(" ".join(o.split()) == " ".join(e["target"].split()) for o, e in zip(outputs, examples))
    for dataset in ("bbc_summary", "cnndm_sample"):
        ent, lead = reports["lead3ent"]["breakdown"][dataset], reports["lead3"]["breakdown"][dataset]
        # coverage counts a mention inside a run of four words of the document: Lead3ent's sentences are
        # the document's, so all but a sentence of three words or fewer count
        assert ent["entity_coverage"] > 0.99 and lead["entity_coverage"] < 0.5
        assert ent["rouge1"] > lead["rouge1"]
    assert reports["lead3ent"]["metrics"]["rouge1"] < 0.8  # no longer the 0.938 of targets built by its rule


def test_group_names_merges_surnames_and_possessives():
    assert group_names(["Obama", "Barack Obama's", "the European Union", "obama", "42"]) == [
        "Barack Obama",
        "European Union",
    ]  # first mention of each kept entity, longest form


def test_group_names_merges_titles_and_middle_names_not_people_sharing_a_surname():
    assert group_names(["Tony Blair", "Mr Blair", "Margaret Hassan", "Mrs Hassan", "Ms Hassan"]) == [
        "Tony Blair",
        "Margaret Hassan",
    ]
    assert group_names(["Chelsea Manning", "Chelsea Elizabeth Manning"]) == ["Chelsea Elizabeth Manning"]
    assert group_names(["Matt Williams", "Nigel Williams", "World Bank", "Asian Development Bank"]) == [
        "Matt Williams",
        "Nigel Williams",
        "World Bank",
        "Asian Development Bank",
    ]


def test_shuffled_entity_is_another_entity_of_the_same_document(entity):
    from metrics.entity import mentions
    from variants.entity.data import other_entity

    named = [("Angela Merkel", 4), ("Emmanuel Macron", 2), ("Renault", 1), ("Cherie Merkel", 2)]
    # never the entity itself nor one sharing its name; the salient one (2+ sentences) first
    assert {other_entity("Angela Merkel", named, 2, f"id{i}") for i in range(20)} == {"Emmanuel Macron"}
    assert other_entity("Renault", [("Renault", 3)], 2, "x") is None
    record = {
        "id": "doc-1",
        "source": DOC + " Emmanuel Macron greeted her. Macron smiled.",
        "target": "Merkel visited Paris. Macron came too.",
    }
    examples, _ = entity_examples([record], "hand", test=True)
    assert {e["controls"]["entity"]: e["shuffled_controls"]["entity"] for e in examples} == {
        "Angela Merkel": "Emmanuel Macron",
        "Emmanuel Macron": "Angela Merkel",
    }
    # on the bundled test set: every shuffled entity is named in the example's own document
    from training.evaluate import evaluate

    examples = entity.evaluation.test_examples()
    shuffled = evaluate(entity.lead3(), examples, "test", controls="shuffled")
    given = [
        (row["given_controls"]["entity"], e)
        for row, e in zip(shuffled["examples"], examples)
        if "shuffled_controls" in e
    ]
    assert given and all(name != e["controls"]["entity"] and mentions(e["document"], name) for name, e in given)


def test_suggestions_are_the_documents_people_and_organizations(entity):
    found = entity.suggestions(EXAMPLE_DOCUMENT)["entity"]
    # Merkel is named in 3 sentences, Macron in 2, the EU and Renault in 1: most mentioned first.
    assert found[:2] == ["Angela Merkel", "Emmanuel Macron"] and "Renault" in found


def test_a_missing_ner_model_names_the_setup_script(monkeypatch):
    import spacy

    def fail(*args, **kwargs):
        raise OSError("[E050] Can't find model")

    ner.cache_clear()
    monkeypatch.setattr(spacy, "load", fail)
    try:
        with pytest.raises(MissingNERModel, match=re.escape("run `bash scripts/setup.sh`")):
            ner()
    finally:
        ner.cache_clear()


# --- prepare, baselines, scores --------------------------------------------------------------------
def test_prepare_gives_the_name_or_the_entitys_sentences_as_padded_signal(entity):
    tokenizer = tiny_tokenizer()
    assets = EntityAssets(tokenizer, 64)
    name = entity.prepare(DOC, {"entity": "Angela Merkel"}, "name", assets)
    sent = entity.prepare(DOC, {"entity": "Angela Merkel"}, "sentences", assets)
    assert name.text == sent.text == DOC  # the document is the source as it is
    assert name.extra["signal_input_ids"].text == "Angela Merkel"
    assert sent.extra["signal_input_ids"].text == (
        "Angela Merkel arrived in Paris on Monday. Merkel met the French "
        "president. Later Merkel spoke to reporters. In the evening "
        "Angela Merkel flew home."
    )
    ids = tokenizer("Angela Merkel")["input_ids"]
    assert list(name.extra["signal_input_ids"]) == ids + [tokenizer.pad_token_id] * (64 - len(ids))
    short = entity.prepare(DOC, {"entity": "Angela Merkel"}, "sentences", EntityAssets(tokenizer, 8))
    assert len(short.extra["signal_input_ids"]) == 8 and short.extra["signal_input_ids"][-1] == tokenizer.eos_token_id
    assert "cut to 8 tokens" in short.notices[0]
    with pytest.raises(ValueError, match="tokenizes the signal"):
        entity.prepare(DOC, {"entity": "Angela Merkel"}, "name", None)


def test_the_input_targets_and_baseline_never_ask_the_metrics_matcher(entity, monkeypatch):
    """The variant picks sentences with its own matcher (exact alias strings; a surname as written), the
    metric scores with its own (any case): where they disagree, on a lower-case surname, the signal, the
    proxy target and Lead3ent follow the variant's. Replacing the metric's matcher with a failing stand-in
    everywhere it is bound leaves the model's input, the training target and the baseline unchanged, while
    the test targets, which the metric's matcher builds, fail: the stand-in is live."""
    import metrics.entity
    from variants.entity.baseline import naming

    doc = (
        DOC + " Reporters said merkel looked tired."
    )  # a lower-case surname: the metric counts it, a reader's search not
    sentence = "Reporters said merkel looked tired."
    assert sentence in metrics.entity.sentences_mentioning(doc, "Angela Merkel")
    assert sentence not in naming(doc, "Angela Merkel")
    assets = EntityAssets(tiny_tokenizer(), 64)
    reference = "Merkel spoke. Then merkel left."

    def made():
        prepared = entity.prepare(doc, {"entity": "Angela Merkel"}, "sentences", assets)
        [lead] = entity.baseline().summarize([doc], [{"entity": "Angela Merkel"}])
        return (
            list(prepared.extra["signal_input_ids"]),
            prepared.text,
            lead.text,
            proxy_target(doc, reference, "Angela Merkel"),
        )

    before = made()
    assert before[3] == (
        ["Merkel spoke.", "Angela Merkel arrived in Paris on Monday.", "Merkel met the French president."],
        1,
    )

    def failing(*args, **kwargs):
        raise AssertionError("the metric's matcher was asked")

    originals = {getattr(metrics.entity, name) for name in ("sentences_mentioning", "mentions", "mention_pattern")}
    for module in list(sys.modules.values()):
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if any(value is original for original in originals):
                monkeypatch.setattr(module, name, failing)
    assert made() == before
    with pytest.raises(AssertionError, match="metric's matcher"):
        reference_target(reference, "Angela Merkel")


def test_lead3ent_and_lead3_baselines(entity):
    [ent] = entity.baseline().summarize([DOC], [{"entity": "Angela Merkel"}])
    assert (
        ent.text
        == (
            "Angela Merkel arrived in Paris on Monday. Merkel met the French president. "
            "Later Merkel spoke to reporters."
        )
        and not ent.notices
    )
    [lead] = entity.lead3().summarize([DOC], [{"entity": "Angela Merkel"}])
    assert (
        lead.text == "Angela Merkel arrived in Paris on Monday. The weather was cold. Merkel met the French president."
    )


def test_scores_by_hand(entity):
    summary = "Merkel arrived in Paris. The weather was cold. Angela Merkel flew home. Markets were calm."
    scores = entity.score(summary, DOC, {"entity": "Angela Merkel"}, reference="Merkel arrived in Paris.")
    # Sentences 1 and 3 of 4 name her: coverage 2/4.
    assert scores["entity_coverage"].value == 0.5 and scores["entity_mentioned"].value == 1.0
    # ROUGE-1: reference "merkel arriv in pari" (4 stems) all in the summary's 15 tokens: P 4/15, R 1,
    # F1 = 2 * (4/15) / (4/15 + 1) = 8/19.
    assert scores["rouge1"].value == pytest.approx(8 / 19)
    assert entity.evidence(summary, {"entity": "Angela Merkel"}) == ["Angela Merkel", "Merkel"]
    assert entity.score("", DOC, {"entity": "Angela Merkel"})["entity_coverage"].value == 0.0


# --- bad input ----------------------------------------------------------------------------------------
def test_an_absent_entity_warns_and_still_gives_a_summary_with_coverage_0(entity):
    [summary] = entity.baseline().summarize([DOC], [{"entity": "Boris Johnson"}])
    assert summary.text.startswith("Angela Merkel arrived in Paris on Monday. The weather was cold.")  # Lead-3
    assert "'Boris Johnson' is not mentioned in the document" in summary.notices[0]
    assert entity.score(summary.text, DOC, {"entity": "Boris Johnson"})["entity_coverage"].value == 0.0
    prepared = entity.prepare(DOC, {"entity": "Boris Johnson"}, "sentences", EntityAssets(tiny_tokenizer()))
    assert (
        prepared.extra["signal_input_ids"].text == "Boris Johnson"
        and "guided by the name alone" in prepared.notices[0]
    )


def test_empty_entity_and_empty_document_are_refused(entity):
    baseline = entity.baseline()
    with pytest.raises(ControlError, match="control 'entity' is required"):
        baseline.summarize([DOC], [{"entity": ""}])
    with pytest.raises(ControlError, match="control 'entity' is empty"):
        baseline.summarize([DOC], [{"entity": "   "}])
    with pytest.raises(ControlError, match="control 'entity' is empty"):
        entity.prepare(DOC, {"entity": " "}, "name", EntityAssets(tiny_tokenizer()))
    with pytest.raises(InputError, match="document is empty"):
        baseline.summarize(["  "], [{"entity": "Angela Merkel"}])
    with pytest.raises(ControlError, match="unknown method"):
        entity.prepare(DOC, {"entity": "Merkel"}, "keywords", EntityAssets(tiny_tokenizer()))


def test_space_suggestions_fill_the_empty_entity_box():
    from space.catalog import Catalog
    from space.service import Service
    from space.suggest import filled, suggest, suggestions_markdown

    service = Service(Catalog([], REGISTRY))  # suggestions need the variants only, no model
    found = suggest(service, EXAMPLE_DOCUMENT, "entity")
    assert found["entity"][0] == "Angela Merkel" and "Emmanuel Macron" in suggestions_markdown(found)
    assert suggestions_markdown({"entity": []}) == "_no suggestions for this document_"

    class Panel:  # the shape of space.app.ControlPanel.widgets: variant -> [(control, widget)]
        widgets = {v.id: [(c, None) for c in v.controls_for(None)] for v in service.catalog.registry.values()}

    values = [None] * sum(len(p) for p in Panel.widgets.values())
    updates = filled(Panel, "entity", found, tuple(values))
    assert [u.get("value") for u in updates if "value" in u] == ["Angela Merkel"]
    with pytest.raises(InputError, match="document is empty"):
        suggest(service, " ", "entity")


# --- a tiny trained checkpoint ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from metrics.io import write_jsonl
    from training.__main__ import main as train
    from variants.entity.data import build_split

    root = tmp_path_factory.mktemp("entity")
    write_jsonl(root / "data.jsonl", build_split("cnndm_sample", "val", limit=2))
    train(
        [
            "entity",
            "--preset",
            "tiny",
            "--method",
            "sentences",
            "--train-file",
            str(root / "data.jsonl"),
            "--eval-file",
            str(root / "data.jsonl"),
            "--max-train-samples",
            "8",
            "--max-eval-samples",
            "2",
            "--eval-batch-size",
            "2",
            "--max-steps",
            "6",
            "--learning-rate",
            "2e-3",
            "--warmup-steps",
            "0",
            "--max-grad-norm",
            "1.0",
            "--logging-steps",
            "1",
            "--per-device-train-batch-size",
            "4",
            "--max-source-length",
            "192",
            "--max-target-length",
            "12",
            "--report-to",
            "none",
            "--save-strategy",
            "no",
            "--output-dir",
            str(root / "ckpt"),
        ]
    )
    return root / "ckpt"


def test_training_lowers_the_loss_and_records_the_signal_length(checkpoint):
    record = json.loads((checkpoint / "steersum.json").read_text())
    losses = [h["loss"] for h in record["loss_history"] if "loss" in h]
    assert len(losses) == 6 and losses[-1] < losses[0]  # 6 steps over the same 8 examples
    assert (record["variant"], record["method"], record["max_signal_length"]) == ("entity", "sentences", 256)
    report = json.loads((checkpoint / "eval_report.json").read_text())
    assert set(report["metrics"]) == {
        "entity_coverage",
        "entity_mentioned",
        "rouge1",
        "rouge2",
        "rougeLsum",
        "output_words",
        *QUALITY_FIELDS,
    }


def test_a_loaded_model_warns_about_an_absent_entity_and_still_summarizes(checkpoint):
    summarizer = load_summarizer(checkpoint, device="cpu")
    [summary] = summarizer.summarize([DOC], [{"entity": "Boris Johnson"}], max_new_tokens=4, num_beams=1)
    assert isinstance(summary.text, str) and "not mentioned in the document" in summary.notices[0]


def test_with_constraints_on_the_entitys_name_is_a_keyword_of_the_decoder(checkpoint):
    """The entity's name is the one constraint (no word bounds), and a summarizer asked for constraints
    hands it to the decoder (the keyword bias itself is tested in tests/test_constraints.py)."""
    from metrics.io import read_jsonl
    from variants.decoding_rules import DecodingRules

    summarizer = load_summarizer(checkpoint, device="cpu")
    assert summarizer.variant.constraints({"entity": "Theresa May"}) == DecodingRules(keywords=("Theresa May",))
    record = read_jsonl(checkpoint.parent / "data.jsonl")[0]
    controls = {"entity": record["controls"]["entity"]}
    settings = summarizer.settings.but(max_new_tokens=24, num_beams=2)
    plain = summarizer.summarize([record["document"]], [controls], settings=settings)[0].text
    biased = summarizer.summarize([record["document"]], [controls], settings=settings.but(constraints=True))[0].text
    assert biased != plain


def test_export_card_and_identical_logits_in_a_fresh_process(checkpoint, tmp_path):
    out = export_checkpoint(checkpoint, tmp_path / "repo", repo_id="org/entity-tiny")
    card = (out / "README.md").read_text()
    assert MISSING not in card and "plus `signal_input_ids=the token ids of 'Angela Merkel met" in card
    assert {"modeling_gsum.py", "configuration_gsum.py", "steersum.json"} <= {p.name for p in out.iterdir()}
    summarizer = load_summarizer(out, device="cpu")
    prepared = summarizer.variant.prepare(DOC, {"entity": "Angela Merkel"}, "sentences", summarizer.assets)
    ids = summarizer.tokenizer(prepared.text, return_tensors="pt")["input_ids"]
    signal, dec = torch.tensor([prepared.extra["signal_input_ids"]]), torch.tensor([[2, 0, 100, 200]])
    with torch.no_grad():
        expected = summarizer.model(input_ids=ids, signal_input_ids=signal, decoder_input_ids=dec).logits
    torch.save({"ids": ids, "signal": signal, "dec": dec}, tmp_path / "inputs.pt")
    usage = card.split("\n## Usage\n", 1)[1]
    (tmp_path / "usage.py").write_text(
        re.search(r"```python\n(.*?)```", usage, re.S).group(1).replace("org/entity-tiny", str(out))
    )
    code = (  # 1. the folder's own code (nothing imported SteerSum yet), 2. the card's snippet as written
        "import runpy, sys, torch\n"
        "from transformers import AutoModelForSeq2SeqLM\n"
        "m = AutoModelForSeq2SeqLM.from_pretrained(sys.argv[1], trust_remote_code=True).eval()\n"
        "x = torch.load(sys.argv[2] + '/inputs.pt')\n"
        "with torch.no_grad():\n"
        "    out = m(input_ids=x['ids'], signal_input_ids=x['signal'], decoder_input_ids=x['dec']).logits\n"
        "torch.save(out, sys.argv[2] + '/out.pt')\n"
        "print(type(m).__module__)\n"
        "runpy.run_path(sys.argv[2] + '/usage.py', run_name='__main__')\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", code, str(out), str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[0].startswith("transformers_modules") and len(lines) == 2  # module, then the snippet's summary
    assert torch.equal(torch.load(tmp_path / "out.pt"), expected)
    assert isinstance(AutoModelForSeq2SeqLM.from_pretrained(out), GSumForConditionalGeneration)
