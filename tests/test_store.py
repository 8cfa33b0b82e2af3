"""The model store: int8 compaction of the base, one peft adapter per variant on it, the budget.

Everything here runs on tiny random models (the store itself holds only trained ones)."""

import json

import pytest
import torch

from store import compact
from store.adapters import ARCHITECTURE, derive, load_adapter_model, load_base
from variants.base import read_record, write_record


@pytest.fixture(scope="module")
def tiny_general(tmp_path_factory):
    """A tiny random BART saved as a general summarizer would be (weights, tokenizer, generation config)."""
    from transformers import BartForConditionalGeneration

    from variants.presets import tiny_bart_config, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    model = BartForConditionalGeneration(tiny_bart_config(tokenizer))
    model.generation_config.num_beams = 2
    folder = tmp_path_factory.mktemp("store") / "general"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_rows_round_trip_within_half_a_scale():
    # |w/scale| <= 127 by the choice of scale, so rounding never clips and moves w/scale by at most 1/2:
    # |w - q*scale| <= scale/2 on every row (fp32 rounding of w/scale and q*scale adds a few ulps).
    torch.manual_seed(0)
    weight = torch.randn(64, 48) * torch.logspace(-3, 1, 64)[:, None]  # rows of very different ranges
    weight[5] = 0.0  # an all-zero row is stored exactly
    weight[9, 3] = 40.0  # an outlier sets its row's scale alone
    q, scale = compact.quantize_rows(weight)
    assert q.dtype == torch.int8 and scale.shape == (64,) and q.abs().max() == compact.QMAX
    error = (weight - compact.dequantize_rows(q, scale)).abs()
    assert (error.amax(dim=1) <= scale / 2 * (1 + 1e-5)).all()
    assert (error.amax(dim=1) > scale / 4).float().mean() > 0.9  # the bound is nearly reached: it is the real one
    assert error[5].max() == 0 and q[9, 3] == compact.QMAX and torch.allclose(scale[9], torch.tensor(40.0 / 127))
    with pytest.raises(ValueError, match="2-D"):
        compact.quantize_rows(torch.ones(3))


def test_compact_model_loads_as_a_plain_transformers_model_four_times_smaller(tiny_general, tmp_path):
    from transformers import AutoModelForSeq2SeqLM, BartForConditionalGeneration

    with pytest.raises(ValueError, match="model.shared.weight"):  # 2001 x 64 int8 codes: a tensor is never split
        compact.write_compact(tiny_general, tmp_path / "too-small", shard_bytes=100_000)
    out = compact.write_compact(tiny_general, tmp_path / "general", shard_bytes=150_000)
    shards = sorted(out.glob("compact-*.safetensors"))
    assert len(shards) > 1 and all(s.stat().st_size <= 150_000 + 8_000 for s in shards)  # + its header
    with pytest.raises(OSError):  # int8 codes are never mistaken for weights by a plain from_pretrained
        AutoModelForSeq2SeqLM.from_pretrained(out)
    original = AutoModelForSeq2SeqLM.from_pretrained(tiny_general).eval()
    model = compact.load_compact(out)
    assert type(model) is BartForConditionalGeneration and model.lm_head.weight is model.model.shared.weight
    assert model.generation_config.num_beams == 2  # the folder's generation config came along
    theirs = dict(model.named_parameters())
    for name, weight in original.named_parameters():
        if weight.dim() == 2:
            _, scale = compact.quantize_rows(weight)
            assert ((weight - theirs[name]).abs().amax(dim=1) <= scale / 2 * (1 + 1e-5)).all(), name
        else:
            assert torch.equal(weight, theirs[name]), name  # 1-D tensors stay fp32
    # Size: a (rows x d) fp32 weight of 4*rows*d bytes becomes rows*d int8 bytes + 4*rows of scales, so the
    # ratio is 4d/(d+4) for the 2-D weights (d=64 here: 3.76; MiniLM-BART's d=384: 3.96), the 1-D ones kept.
    two_d = [w for w in original.state_dict().values() if w.dim() == 2]
    unique = {w.data_ptr(): w for w in two_d}.values()
    one_d = sum(w.numel() for w in original.state_dict().values() if w.dim() == 1)
    expected = sum(w.numel() + 4 * w.shape[0] for w in unique) + 4 * one_d
    assert abs(compact.folder_bytes(out, "compact-*.safetensors") - expected) < 8_000 * len(shards)  # headers
    ratio = compact.folder_bytes(tiny_general, "*.safetensors") / compact.folder_bytes(out, "compact-*.safetensors")
    assert 3.4 < ratio < 4.0


def test_compact_entry_point_reports_the_size(tiny_general, tmp_path, capsys):
    compact.main([str(tiny_general), str(tmp_path / "c")])
    assert "x smaller" in capsys.readouterr().out and compact.is_compact(tmp_path / "c")
    with pytest.raises(ValueError, match="compact already"):
        compact.write_compact(tmp_path / "c", tmp_path / "d")


def _zoo_models():
    from training.zoo_models import MODELS

    return MODELS


@pytest.mark.parametrize("zoo_model", _zoo_models(), ids=lambda m: m.name)
def test_two_step_adapter_saves_small_and_reloads_generating_identically(
    zoo_model, tiny_general, tmp_path, monkeypatch
):
    """Each zoo variant model, trained two steps as ``--adapter lora`` on a tiny general summarizer: the
    folder holds an adapter (no full weights), small beside the base; loaded by ``load_summarizer`` (the
    adapter merged into the derived architecture) it writes the same summaries as peft's unmerged model."""
    from safetensors import safe_open

    from training.__main__ import main as training_main
    from training.data import load_examples
    from training.zoo_models import Budget
    from training.zoo_training import build_data
    from variants import load_summarizer

    data = build_data(zoo_model, tmp_path, Budget.for_quick())
    out = tmp_path / zoo_model.name
    extra = ["--readers", str(data / "persona_readers.json")] if zoo_model.variant == "persona" else []
    if zoo_model.variant == "ccs":  # its own LoRA (the adapter is its method), on BART's projections
        extra += ["--lora-target-modules", "q_proj,v_proj"]
    training_main(
        [
            zoo_model.variant,
            "--method",
            zoo_model.method,
            "--base-model",
            str(tiny_general),
            "--adapter",
            "lora",
            "--train-file",
            str(data / "train.jsonl"),
            "--output-dir",
            str(out),
            "--max-steps",
            "2",
            "--learning-rate",
            "5e-2",
            "--per-device-train-batch-size",
            "2",
            "--max-source-length",
            "64",
            "--max-target-length",
            "12",
            "--max-train-samples",
            "4",
            "--report-to",
            "none",
            "--save-strategy",
            "no",
            "--dataloader-pin-memory",
            "false",
            *extra,
        ]
    )
    names = {p.name for p in out.iterdir()}
    assert "adapter_model.safetensors" in names and "model.safetensors" not in names
    base_bytes = (tiny_general / "model.safetensors").stat().st_size
    adapter_bytes = (out / "adapter_model.safetensors").stat().st_size
    assert adapter_bytes < base_bytes / 4, (adapter_bytes, base_bytes)  # never the whole (grown) embedding table
    with safe_open(str(out / "adapter_model.safetensors"), "pt") as f:
        keys = list(f.keys())
    assert any("lora_B" in k for k in keys) and not any("base_layer" in k for k in keys)
    record = json.loads((out / "steersum.json").read_text())
    if zoo_model.variant in ("topic", "persona"):  # control tokens were added: their rows, and no more, are trained
        assert record["adapter"]["trainable_token_indices"] and any("trainable_tokens_delta" in k for k in keys)
    if zoo_model.variant == "tdsum":  # the TF-IDF encoder starts random: saved whole; the added attention gets LoRA
        assert record["adapter"]["modules_to_save"] == ["model.encoder.tfidf_encoder", "model.encoder.tfidf_head"]
        assert any("tfidf_attn.q_proj.lora_B" in k for k in keys)
        # its output projection starts at zero: frozen there, the whole TF-IDF path would stay silent
        assert "model.decoder.layers.0.tfidf_attn.out_proj" in record["adapter"]["target_modules"]
        with safe_open(str(out / "adapter_model.safetensors"), "pt") as f:
            assert f.get_tensor("base_model.model.model.decoder.layers.0.tfidf_attn.out_proj.lora_B.weight").any()
    if zoo_model.variant == "entity":  # GSum's signal path starts as copies of the base: rebuilt, not stored
        assert record["adapter"]["modules_to_save"] == [] and any("signal_attn.q_proj.lora_B" in k for k in keys)
    summarizer = load_summarizer(out)
    with monkeypatch.context() as patch:  # peft's own model, the adapter beside the derived weights, as trained
        patch.setattr("store.load_stored_model", lambda folder, **kw: load_adapter_model(folder, merge=False, **kw))
        unmerged = load_summarizer(out)
    records = load_examples(data / "test.jsonl", summarizer.variant, summarizer.assets, 3)
    documents, controls = [r["document"] for r in records], [r["controls"] for r in records]
    merged_texts = [s.text for s in summarizer.summarize(documents, controls, max_new_tokens=8)]
    assert merged_texts == [s.text for s in unmerged.summarize(documents, controls, max_new_tokens=8)]
    # the adapter changed the model: its derived architecture without the adapter scores other logits
    model = getattr(summarizer, "base", summarizer).model  # a persona summarizer wraps the seq2seq one
    base = derive(load_base(tiny_general), model.config)
    batch = summarizer.tokenizer(["the bank said profits rose"], return_tensors="pt")
    inputs = {**batch, "decoder_input_ids": batch["input_ids"][:, :4]}
    if zoo_model.variant == "tdsum":
        inputs["tfidf"] = torch.full(batch["input_ids"].shape, 0.5)
    if zoo_model.variant == "entity":
        inputs["signal_input_ids"] = batch["input_ids"]
    with torch.no_grad():
        trained, untrained = model(**inputs).logits, base.eval()(**inputs).logits
    assert not torch.allclose(trained, untrained)
    # stored as int8 with per-row scales (what the store keeps): every matrix int8 with one scale per row,
    # and the model it loads into moves its logits by under 5% of what the adapter itself moved them
    import shutil

    from store.adapters import compact_adapter, is_compact_adapter

    compact_copy = tmp_path / "int8" / zoo_model.name
    shutil.copytree(out, compact_copy)
    compact_adapter(compact_copy)
    assert is_compact_adapter(compact_copy) and not is_compact_adapter(out)
    with safe_open(str(compact_copy / "adapter_model.safetensors"), "pt") as f:
        stored = {k: f.get_tensor(k) for k in f.keys()}
    matrices = [k for k, t in stored.items() if t.dim() == 2]
    assert matrices and all(
        stored[k].dtype == torch.int8 and stored[k + compact.SCALE].shape == (stored[k].shape[0],) for k in matrices
    )
    assert (compact_copy / "adapter_model.safetensors").stat().st_size < adapter_bytes
    int8_summarizer = load_summarizer(compact_copy)
    compact_model = getattr(int8_summarizer, "base", int8_summarizer).model
    with torch.no_grad():
        moved = (compact_model(**inputs).logits - trained).abs().max()
    assert moved < 0.05 * (trained - untrained).abs().max(), (moved, (trained - untrained).abs().max())


@pytest.fixture(scope="module")
def tiny_store(tiny_general, tmp_path_factory):
    """A store written by :func:`training.storing.put` from a tiny general summarizer and a two-step
    topic adapter on it (tiny random models: in a temporary folder, never the committed store)."""
    import shutil

    from training.__main__ import main as training_main
    from training.storing import put
    from training.zoo_models import MODELS, Budget
    from training.zoo_training import build_data
    from variants.base import write_record

    root = tmp_path_factory.mktemp("zoo")
    general = root / "general"
    shutil.copytree(tiny_general, general)
    write_record(general, {"variant": "general", "method": "plain", "steps": 2, "data_licenses": {"bbc_summary": "x"}})
    scores = {"rouge1": 0.30, "ratio_to_lead": 0.7, "verbatim_fact_share": 0.9, "examples": 4}
    (general / "general_report.json").write_text(json.dumps({"sets": {"bbc_summary test": scores}}))
    index = root / "store" / "index.json"
    index.parent.mkdir()
    stored, sentence = put(
        general,
        {"sets": {"bbc_summary test": scores}},
        general / "general_report.json",
        index=index,
        validation={"sets": {"bbc_summary val": scores}},
    )
    assert stored and "stored (new)" in sentence
    topic = next(m for m in MODELS if m.variant == "topic")
    data = build_data(topic, root, Budget.for_quick())
    out = root / topic.name
    training_main(
        [
            "topic",
            "--method",
            topic.method,
            "--base-model",
            str(general),
            "--adapter",
            "lora",
            "--train-file",
            str(data / "train.jsonl"),
            "--output-dir",
            str(out),
            "--max-steps",
            "2",
            "--per-device-train-batch-size",
            "2",
            "--max-source-length",
            "64",
            "--max-target-length",
            "12",
            "--max-train-samples",
            "4",
            "--report-to",
            "none",
            "--save-strategy",
            "no",
            "--dataloader-pin-memory",
            "false",
        ]
    )
    report = {
        "metrics": {"rouge1": 0.2, "stas": 0.5},
        "control_sensitivity": {"effect": {"stas": {"difference": 0.04, "ci_low": 0.01, "ci_high": 0.07, "n": 4}}},
    }
    (out / "eval_report.json").write_text(json.dumps(report))
    stored, sentence = put(out, report, out / "eval_report.json", index=index, validation={**report, "split": "val"})
    assert stored, sentence
    return index


def test_put_compacts_the_base_points_adapters_at_it_and_replaces_only_when_better(tiny_store, monkeypatch):
    import store
    from training.storing import put

    models = store.read_index(tiny_store)
    assert [(m.name, m.format, m.base) for m in models] == [
        ("general", "int8", None),
        ("topic-prepend-tag", "lora", "general"),
    ]
    topic = models[1]
    assert topic.control_effect == {"metric": "stas", "difference": 0.04, "ci_low": 0.01, "ci_high": 0.07, "n": 4}
    assert topic.effect_text() == "stas +0.040 [+0.010, +0.070] (n=4)" and topic.steps == 2
    folder = tiny_store.parent / "models" / "topic-prepend-tag"
    adapter = json.loads((folder / "adapter_config.json").read_text())
    assert adapter["base_model_name_or_path"] == "../general"  # the stored base, wherever the clone is
    # its record names the stored base too, not the folder it was trained against on some machine
    assert json.loads((folder / "steersum.json").read_text())["base_model"] == "store/models/general"
    assert {"README.md", "eval_report.json", "adapter_model.safetensors", ARCHITECTURE} <= {
        p.name for p in folder.iterdir()
    }
    assert "stas +0.040 [+0.010, +0.070]" in (folder / "README.md").read_text()
    assert not list((tiny_store.parent / "models" / "general").glob("model*.safetensors"))  # int8 shards only
    # the same measure again is not better: the stored one stays, and the output says so
    zoo_topic = tiny_store.parent.parent / "topic-prepend-tag"
    report = {**json.loads((zoo_topic / "eval_report.json").read_text()), "split": "val"}
    stored, sentence = put(zoo_topic, report, zoo_topic / "eval_report.json", index=tiny_store, validation=report)
    assert not stored and "kept the stored model" in sentence
    report["control_sensitivity"]["effect"]["stas"]["ci_low"] = 0.02  # a better lower bound replaces it
    trained = read_record(zoo_topic)  # ... and its card says how the new one generates, from its own record
    write_record(zoo_topic, {**trained, "constraints": True, "control_guidance": 3.0, "document_words": True})
    try:
        stored, sentence = put(zoo_topic, report, zoo_topic / "eval_report.json", index=tiny_store, validation=report)
    finally:
        write_record(zoo_topic, trained)
    assert stored and "replaced the stored model, which measured 0.01" in sentence
    assert (
        "it generates with its hard constraints on and at control strength γ = 3 and with the document-words rule"
        in (folder / "README.md").read_text()
    )
    # an interval that does not lie above 0 is never stored, whatever is stored already
    other = tiny_store.parent / "elsewhere" / "index.json"
    other.parent.mkdir()
    other.write_text((tiny_store).read_text())
    report["control_sensitivity"]["effect"]["stas"].update(difference=-0.2, ci_low=-0.3, ci_high=-0.1)
    stored, sentence = put(
        zoo_topic, report, zoo_topic / "eval_report.json", name="topic-2", index=other, validation=report
    )
    assert not stored and sentence == (
        "topic-2: not stored: its stas effect on val -0.200, interval low end -0.300; "
        "the store serves only models whose controls steer them"
    )
    assert store.budget_problems(tiny_store.parent) == []
    assert store.budget_problems(tiny_store.parent, max_total=10_000, max_file=1_000)  # the check can fail


def test_admission_reads_the_val_report_and_the_card_the_test_one(tiny_store, tmp_path):
    """The store admits a model on its val report and keeps its test report: a model whose val effect
    interval does not lie above 0 is refused however good its test one, one whose val interval does is
    stored whatever its test one, the index keeps the val measure with its split, and a test report
    offered as the val one is refused by name."""
    import shutil

    import store
    from training.storing import put

    zoo_topic = tiny_store.parent.parent / "topic-prepend-tag"
    index = tmp_path / "store" / "index.json"
    index.parent.mkdir()
    shutil.copy(tiny_store, index)  # the general summarizer and the topic adapter, as stored
    shutil.copytree(tiny_store.parent / "models", index.parent / "models")

    def report(split, low, high):
        effect = {"difference": (low + high) / 2, "ci_low": low, "ci_high": high, "n": 4}
        return {
            "split": split,
            "metrics": {"rouge1": 0.2, "stas": 0.5},
            "control_sensitivity": {"effect": {"stas": effect}},
        }

    test_good, val_bad = report("test", 0.3, 0.5), report("val", -0.1, 0.2)
    stored, sentence = put(zoo_topic, test_good, zoo_topic / "eval_report.json", "t", index, validation=val_bad)
    assert not stored and "its stas effect on val +0.050, interval low end -0.100" in sentence
    test_bad, val_good = report("test", -0.2, 0.1), report("val", 0.05, 0.15)
    stored, sentence = put(zoo_topic, test_bad, zoo_topic / "eval_report.json", "t", index, validation=val_good)
    assert stored, sentence
    entry = next(m for m in store.read_index(index) if m.name == "t")
    assert entry.measure["split"] == "val" and entry.measure["score"] == 0.05  # the val interval's low end
    assert entry.control_effect["ci_low"] == -0.2  # the card and the index report the test effect
    with pytest.raises(ValueError, match="admits a model on its val report"):
        put(zoo_topic, test_good, zoo_topic / "eval_report.json", "t", index, validation=test_good)
    with pytest.raises(ValueError, match="got none"):
        put(zoo_topic, test_good, zoo_topic / "eval_report.json", "t", index)
    # a stored model measured on test does not compare with a val measure: it is kept, and the sentence says why
    rows = json.loads(index.read_text())["models"]
    for row in rows:
        row["measure"].pop("split", None)
    index.write_text(json.dumps({"models": rows}))
    stored, sentence = put(zoo_topic, test_bad, zoo_topic / "eval_report.json", "t", index, validation=val_good)
    assert not stored and "it was measured on test, this one on val" in sentence


def test_a_base_compacted_where_it_was_trained_is_stored_as_is_and_owns_adapters_trained_on_its_expansion(
    tiny_general, tmp_path, capsys
):
    """A GPU machine returns the general summarizer compacted (its fp32 folder is too big to bring back) and
    adapters trained on the fp32 expansion of that compact copy: the weights the store serves, exactly."""
    import shutil

    from transformers import AutoModelForSeq2SeqLM

    from training.__main__ import main as training_main
    from training.storing import put
    from training.zoo_models import MODELS, Budget
    from training.zoo_training import build_data
    from variants.base import write_record

    general = tmp_path / "general"
    shutil.copytree(tiny_general, general)
    write_record(general, {"variant": "general", "method": "plain", "steps": 2, "data_licenses": {"bbc_summary": "x"}})
    packed = compact.write_compact(general, tmp_path / "general-int8")
    fingerprint = compact.weights_fingerprint(general)
    assert json.loads((packed / "steersum.json").read_text())[compact.FINGERPRINT] == fingerprint
    assert compact.weights_fingerprint(packed) == fingerprint
    compact.main(["--expand", str(packed), str(tmp_path / "served")])
    assert f"fingerprint {fingerprint[:12]}" in capsys.readouterr().out
    served = tmp_path / "served"
    assert compact.weights_fingerprint(served) == fingerprint  # recorded: its own bytes are not the fp32 original's
    dequantized, expanded = (
        compact.load_compact(packed).state_dict(),
        AutoModelForSeq2SeqLM.from_pretrained(served).state_dict(),
    )
    assert dequantized.keys() == expanded.keys() and all(torch.equal(dequantized[k], expanded[k]) for k in dequantized)
    with pytest.raises(SystemExit):
        compact.main(["--expand", str(general), str(tmp_path / "not-compact")])

    scores = {"rouge1": 0.30, "ratio_to_lead": 0.7, "verbatim_fact_share": 0.9, "examples": 4}
    (packed / "general_report.json").write_text(json.dumps({"sets": {"bbc_summary test": scores}}))
    index = tmp_path / "store" / "index.json"
    stored, sentence = put(
        packed,
        {"sets": {"bbc_summary test": scores}},
        packed / "general_report.json",
        index=index,
        validation={"sets": {"bbc_summary val": scores}},
    )
    assert stored, sentence
    folder = index.parent / "models" / "general"
    for shard in packed.glob("compact-*.safetensors"):  # copied byte for byte, not compacted twice
        assert (folder / shard.name).read_bytes() == shard.read_bytes()
    assert {"README.md", "general_report.json", compact.INDEX} <= {p.name for p in folder.iterdir()}
    import store

    assert store.read_index(index)[0].fingerprint == fingerprint

    topic = next(m for m in MODELS if m.variant == "topic")
    data = build_data(topic, tmp_path, Budget.for_quick())
    report = {
        "metrics": {"rouge1": 0.2, "stas": 0.5},
        "control_sensitivity": {"effect": {"stas": {"difference": 0.04, "ci_low": 0.01, "ci_high": 0.07, "n": 4}}},
    }
    from transformers import AutoConfig, AutoTokenizer, BartForConditionalGeneration

    torch.manual_seed(1)
    other = tmp_path / "other-base"  # the same architecture, other weights
    BartForConditionalGeneration(AutoConfig.from_pretrained(tiny_general)).save_pretrained(other)
    AutoTokenizer.from_pretrained(tiny_general).save_pretrained(other)
    for base, name in ((served, "on-served"), (other, "on-another")):
        training_main(
            [
                "topic",
                "--method",
                topic.method,
                "--base-model",
                str(base),
                "--adapter",
                "lora",
                "--train-file",
                str(data / "train.jsonl"),
                "--output-dir",
                str(tmp_path / name),
                "--max-steps",
                "1",
                "--per-device-train-batch-size",
                "2",
                "--max-source-length",
                "32",
                "--max-target-length",
                "8",
                "--max-train-samples",
                "2",
                "--report-to",
                "none",
                "--save-strategy",
                "no",
                "--dataloader-pin-memory",
                "false",
            ]
        )
        (tmp_path / name / "eval_report.json").write_text(json.dumps(report))
    val = {**report, "split": "val"}
    stored, sentence = put(
        tmp_path / "on-served", report, tmp_path / "on-served" / "eval_report.json", index=index, validation=val
    )
    assert stored, sentence
    stored, sentence = put(
        tmp_path / "on-another", report, tmp_path / "on-another" / "eval_report.json", index=index, validation=val
    )
    assert not stored and "is not the stored general summarizer (another one)" in sentence


def test_stored_names_load_and_the_space_lists_them(tiny_store, monkeypatch):
    import store
    from space.catalog import build_catalog
    from variants import load_summarizer

    monkeypatch.setattr(store, "INDEX", tiny_store)
    summarizer = load_summarizer("topic-prepend-tag")  # a stored name: the adapter on the int8 base
    assert summarizer.summarize(["The bank said profits rose."], [{"topic": "business"}], max_new_tokens=4)
    with pytest.raises(KeyError, match="the store holds: general, topic-prepend-tag"):
        store.model_path("nope")
    catalog = build_catalog(None, None, store_index=tiny_store)
    entry = next(e for e in catalog.models("topic") if e.source == "store")
    assert entry.model == "topic-prepend-tag" and entry.available and not catalog.notes
    # (the lower bound is the one the replacement test above stored)
    assert entry.title.startswith("topic-prepend-tag: 2 steps on bbc_summary; control effect stas +0.040 [+0.0")
    assert not [e for e in catalog.entries if e.model == "general"]  # the base has no controls to serve
    from space.__main__ import arguments

    assert arguments(["--store", "none"]).store == "none"  # python -m space --store none: baselines only
    assert {e.source for e in build_catalog(None, None, store_index=False).entries} == {"baseline"}


def test_an_empty_store_says_so_everywhere(tmp_path, monkeypatch, capsys):
    import store
    from space.catalog import build_catalog

    empty = tmp_path / "index.json"
    empty.write_text('{"models": []}')
    monkeypatch.setattr(store, "INDEX", empty)
    catalog = build_catalog(None, None)
    assert catalog.notes == [store.EMPTY] and {e.source for e in catalog.entries} == {"baseline"}
    with pytest.raises(KeyError, match="the model store is empty"):
        store.model_path("topic-prepend-tag")


def test_the_committed_store_fits_its_budget(committed_store):
    import store

    assert store.budget_problems() == [], store.budget_problems()
    for model in store.read_index():  # every listed model has its folder, report and card
        assert (store.MODELS / model.eval_report).is_file() and (store.MODELS / model.card).is_file()


def test_token_agreement_of_the_compact_copy(tiny_general, tmp_path):
    """The measure the compaction benchmark reports: 1 for a model with itself, low for a model whose
    LM head is reversed (it picks other tokens), and for the int8 copy of a tiny random BART at least
    0.9 (measured here: 1.0 on 20 BBC test documents x 32 greedy tokens; ``python -m benchmarks compaction``)."""
    import copy

    from training.storing_compaction import token_agreement
    from variants.presets import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    model = load_base(tiny_general)
    documents = ["The bank said profits rose by 5% in the year to March.", "The striker scored twice on Saturday."]
    assert token_agreement(model, model, tokenizer, documents, 8) == 1.0
    reversed_head = copy.deepcopy(model)
    reversed_head.lm_head.weight = torch.nn.Parameter(-model.lm_head.weight.detach().clone())
    reversed_head.config.tie_word_embeddings = False
    assert token_agreement(model, reversed_head, tokenizer, documents, 8) < 0.5
    compacted = compact.load_compact(compact.write_compact(tiny_general, tmp_path / "c"))
    assert token_agreement(model, compacted, tokenizer, documents, 8) >= 0.9


def test_an_adapter_needs_a_base_checkpoint_and_a_known_kind(tmp_path):
    from training.__main__ import main as training_main
    from training.adapter import AdapterArguments

    train_file = tmp_path / "train.jsonl"
    train_file.write_text(
        json.dumps(
            {"document": "The bank said profits rose.", "controls": {"topic": "business"}, "target": "Profits rose."}
        )
        + "\n"
    )
    with pytest.raises(SystemExit, match="--adapter lora needs a base checkpoint folder.*--preset tiny"):
        training_main(
            [
                "topic",
                "--preset",
                "tiny",
                "--adapter",
                "lora",
                "--train-file",
                str(train_file),
                "--output-dir",
                str(tmp_path / "out"),
                "--max-steps",
                "1",
                "--report-to",
                "none",
            ]
        )
    with pytest.raises(ValueError, match="--adapter 'qlora'; allowed: none, lora"):
        AdapterArguments(adapter="qlora")


def test_an_adapter_keeps_tokenizer_files_only_when_they_are_not_the_bases(tmp_path):
    """``tokenizer.json`` saved after a call with other truncation is still the base's tokenizer (dropped);
    one with an added token is not, and then every tokenizer file stays (they are read together)."""
    from training.storing import copy_folder

    base, adapter, dest = tmp_path / "base", tmp_path / "adapter", tmp_path / "stored"
    for folder in (base, adapter, dest):
        folder.mkdir()
    tokenizer = {"truncation": {"max_length": 256}, "padding": None, "added_tokens": [], "model": {"vocab": {"a": 0}}}
    (base / "tokenizer.json").write_text(json.dumps(tokenizer))
    (base / "tokenizer_config.json").write_text('{"model_max_length": 512}')
    (adapter / "tokenizer.json").write_text(json.dumps({**tokenizer, "truncation": {"max_length": 384}}))
    (adapter / "tokenizer_config.json").write_text('{"model_max_length": 512}')
    (adapter / "adapter_config.json").write_text("{}")
    copy_folder(adapter, dest, base)
    assert sorted(p.name for p in dest.iterdir()) == ["adapter_config.json"]
    (adapter / "tokenizer.json").write_text(json.dumps({**tokenizer, "added_tokens": [{"id": 1, "content": "[TAG]"}]}))
    copy_folder(adapter, dest, base)
    assert sorted(p.name for p in dest.iterdir()) == ["adapter_config.json", "tokenizer.json", "tokenizer_config.json"]


def test_a_card_quotes_the_leaderboard_as_served_and_alone():
    from training.storing_cards import measured_lines

    def row(model, given, shuffled, stands, low):
        return {
            "model": model,
            "n_examples": 40,
            "metrics": {"stas": given},
            "control_effect": {
                "stas": {
                    "given": given,
                    "shuffled": shuffled,
                    "difference": given - shuffled,
                    "ci_low": low,
                    "ci_high": low + 0.1,
                }
            },
            "verdict": {"stas": {"stands": stands}},
        }

    board = {
        "variants": {
            "topic": {
                "systems": [
                    row("baseline", 0.9, 0.4, True, 0.4),
                    row("topic-x", 0.8, 0.5, True, 0.2),
                    row("topic-x (model alone)", 0.6, 0.55, False, -0.02),
                ],
                "extra_test_sets": {"concatenated": {"systems": [row("topic-x", 0.7, 0.6, False, 0.0)]}},
            }
        }
    }
    lines = measured_lines("topic-x", board)
    assert lines == [
        "- derived test set, 40 examples, as served: stas 0.800 (effect +0.300 [+0.200, +0.300], stands, baseline 0.900)",
        "- derived test set, 40 examples, the model alone (γ = 1, no rules): stas 0.600 (effect +0.050 [-0.020, +0.080], "
        "does not stand, baseline 0.900)",
        "- `concatenated`, 40 examples, as served: stas 0.700 (effect +0.100 [+0.000, +0.100], does not stand)",
    ]
    assert measured_lines("other", board) == []


def test_no_stored_record_or_card_names_a_machine_path(committed_store, tiny_store, tmp_path):
    import store
    from training.storing import data_name

    assert store.machine_paths(store.ROOT) == []  # the index, every record, report and card, the store's code
    # put() writes the data file as its folder and name, wherever training read it from
    record = read_record(tiny_store.parent / "models" / "topic-prepend-tag")
    assert record["train_file"] == "topic/train.jsonl" and store.machine_paths(tiny_store.parent) == []
    assert data_name("/work/x/ck/data/ccs/train.jsonl") == "ccs/train.jsonl" and data_name("a/b.jsonl") == "a/b.jsonl"
    # the check can fail: a record as the zoo used to store it, and a card naming the checkout
    write_record(tmp_path, {"train_file": "/tmp/s9/zoo/data/persona/train.jsonl"})
    (tmp_path / "README.md").write_text(f"trained in {store.ROOT.parent}/ck\n")
    found = store.machine_paths(tmp_path)
    assert "steersum.json: /tmp/s9/zoo/data/persona/train.jsonl" in found
    assert f"README.md: {store.ROOT.parent}" in found


def test_a_stored_model_stored_again_keeps_its_weights_and_one_can_be_removed(tiny_store, tmp_path):
    """A stored model chosen again (its copy, int8 already, re-admitted in its place) keeps its int8 weights
    as they were, not compacted a second time; ``store.remove`` takes a model out, and refuses the base while
    an adapter adds its weights to it."""
    import shutil

    from safetensors.torch import load_file

    import store
    from training.storing import put

    root = tmp_path / "store"
    shutil.copytree(tiny_store.parent, root)
    index = root / "index.json"
    copies = tmp_path / "copies"
    for name in ("general", "topic-prepend-tag"):
        shutil.copytree(root / "models" / name, copies / name)
    weights = root / "models" / "topic-prepend-tag" / "adapter_model.safetensors"
    before = load_file(str(weights))
    # its reports were written where it was chosen again: they name that machine's data files
    report = {
        **json.loads((copies / "topic-prepend-tag" / "eval_report.json").read_text()),
        "data_file": "/m/d/t.jsonl",
    }
    (copies / "topic-prepend-tag" / "guidance_sweep.json").write_text(json.dumps({"data": "/m/data/topic/val.jsonl"}))
    kept = store.read_index(index)
    store.write_index([m for m in kept if m.name != "topic-prepend-tag"], index)
    stored, sentence = put(
        copies / "topic-prepend-tag",
        report,
        copies / "topic-prepend-tag" / "eval_report.json",
        index=index,
        validation={**report, "split": "val"},
    )
    assert stored, sentence
    after = load_file(str(weights))
    assert before.keys() == after.keys() and all(torch.equal(before[k], after[k]) for k in before)
    assert store.machine_paths(root / "models" / "topic-prepend-tag") == []
    sweep = json.loads((root / "models" / "topic-prepend-tag" / "guidance_sweep.json").read_text())
    assert sweep["data"] == "topic/val.jsonl"

    with pytest.raises(ValueError, match="topic-prepend-tag add their weights to general: remove them first"):
        store.remove("general", index)
    store.remove("topic-prepend-tag", index)
    assert store.names(index) == ["general"] and not (root / "models" / "topic-prepend-tag").exists()
    with pytest.raises(KeyError, match="the store holds: general"):
        store.remove("topic-prepend-tag", index)
