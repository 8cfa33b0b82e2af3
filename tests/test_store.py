"""The model store: int8 compaction of the base, one peft adapter per variant on it, the budget.

Everything here runs on tiny random models (the store itself holds only trained ones)."""
import json

import pytest
import torch

from store import compact
from store.adapters import ARCHITECTURE, derive, load_adapter_model, load_base


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
    from training.zoo import MODELS

    return MODELS


@pytest.mark.parametrize("zoo_model", _zoo_models(), ids=lambda m: m.name)
def test_two_step_adapter_saves_small_and_reloads_generating_identically(zoo_model, tiny_general, tmp_path, monkeypatch):
    """Each zoo variant model, trained two steps as ``--adapter lora`` on a tiny general summarizer: the
    folder holds an adapter (no full weights), small beside the base; loaded by ``load_summarizer`` (the
    adapter merged into the derived architecture) it writes the same summaries as peft's unmerged model."""
    from safetensors import safe_open

    from training.__main__ import main as training_main
    from training.data import load_examples
    from training.zoo import Budget, build_data
    from variants import load_summarizer

    data = build_data(zoo_model, tmp_path, Budget.for_quick())
    out = tmp_path / zoo_model.name
    extra = ["--readers", str(data / "persona_readers.json")] if zoo_model.variant == "persona" else []
    if zoo_model.variant == "ccs":  # its own LoRA (the adapter is its method), on BART's projections
        extra += ["--lora-target-modules", "q_proj,v_proj"]
    training_main([zoo_model.variant, "--method", zoo_model.method, "--base-model", str(tiny_general), "--adapter", "lora",
                   "--train-file", str(data / "train.jsonl"), "--output-dir", str(out), "--max-steps", "2",
                   "--learning-rate", "5e-2", "--per-device-train-batch-size", "2", "--max-source-length", "64",
                   "--max-target-length", "12", "--max-train-samples", "4", "--report-to", "none",
                   "--save-strategy", "no", "--dataloader-pin-memory", "false", *extra])
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
    if zoo_model.variant == "entity":  # GSum's guidance path starts as copies of the base: rebuilt, not stored
        assert record["adapter"]["modules_to_save"] == [] and any("guidance_attn.q_proj.lora_B" in k for k in keys)
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
        inputs["guidance_input_ids"] = batch["input_ids"]
    with torch.no_grad():
        assert not torch.allclose(model(**inputs).logits, base.eval()(**inputs).logits)
