"""The MiniLM → BART converter (real weights, seconds), training from it, and bf16 vs fp32."""

import json

import pytest
import torch

from metrics.io import read_jsonl, write_jsonl
from training.seq2seq import cpu_bf16_supported, default_precision
from variants import load_summarizer


@pytest.fixture(scope="module")
def minilm_bart(tmp_path_factory):
    from training.base import convert_minilm

    return convert_minilm(tmp_path_factory.mktemp("minilm") / "bart")


@pytest.fixture(scope="module")
def texts():
    return ["The Bank of England raised rates to 5.25% on Thursday, said Andrew Bailey.", "A short one."]


def test_converted_encoder_equals_bert(minilm_bart, texts):
    """The mapping is exact: with BART's LayerNorm eps set to BERT's 1e-12 the encoders agree within
    1e-5; as saved (BART fixes eps at 1e-5) they differ by under 2e-3 (measured 7e-4, mean |h| 0.3)."""
    from transformers import AutoTokenizer, BartForConditionalGeneration, BertModel

    from training.base import minilm_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_bart)
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    bert = BertModel.from_pretrained(minilm_path()).eval()
    bart = BartForConditionalGeneration.from_pretrained(minilm_bart).eval()
    mask = batch["attention_mask"].bool()
    with torch.no_grad():
        expected = bert(**batch).last_hidden_state[mask]
        as_saved = bart.get_encoder()(**batch).last_hidden_state[mask]
        for module in bart.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.eps = bert.config.layer_norm_eps
        same_eps = bart.get_encoder()(**batch).last_hidden_state[mask]
    assert (same_eps - expected).abs().max() <= 1e-5
    assert 1e-5 < (as_saved - expected).abs().max() < 2e-3  # the eps gap is real, and small


def test_checkpoint_is_a_standard_bart_with_bart_token_roles(minilm_bart, texts):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(minilm_bart)
    model = AutoModelForSeq2SeqLM.from_pretrained(minilm_bart).eval()
    assert type(model).__name__ == "BartForConditionalGeneration"
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    assert set(batch) == {"input_ids", "attention_mask"}  # no token_type_ids: BART's generate refuses them
    ids = tokenizer.convert_tokens_to_ids(["[PAD]", "[CLS]", "[SEP]"])
    c = model.config
    assert [c.pad_token_id, c.bos_token_id, c.eos_token_id, c.decoder_start_token_id] == [
        ids[0],
        ids[1],
        ids[2],
        ids[2],
    ]
    assert batch["input_ids"][0, 0] == c.bos_token_id and batch["input_ids"][0, -1] == c.eos_token_id
    assert model.get_input_embeddings().weight.data_ptr() == model.lm_head.weight.data_ptr()  # tied
    # hidden dropout as BERT's; none on attention probabilities, whose per-element masks cost a third of
    # a CPU training step (training/base.py)
    assert (c.dropout, c.attention_dropout, c.activation_dropout) == (0.1, 0.0, 0.0)
    # the decoder is warm-started from the same layers: its cross-attention starts as the self-attention
    layer = model.model.decoder.layers[3]
    assert torch.equal(layer.encoder_attn.q_proj.weight, model.model.encoder.layers[3].self_attn.q_proj.weight)
    long = tokenizer(" ".join(["word"] * 300))["input_ids"]
    assert len(long) == 302  # MiniLM's own file truncates at 128; the converted tokenizer leaves it to callers
    with torch.no_grad():
        output = model.generate(**batch, max_new_tokens=4, num_beams=1)
    assert output.shape[0] == 2
    provenance = json.loads((minilm_bart / "base_model.json").read_text())
    assert provenance["license"] == "apache-2.0" and "all-MiniLM-L6-v2" in provenance["source"]
    assert provenance["parameters"] == model.num_parameters() and 30e6 < provenance["parameters"] < 45e6


def variant_examples(variant: str, data_dir):
    """Four training examples of a variant, from its own data builder where it has one."""
    if variant == "topic":
        rows = read_jsonl(data_dir / "bbc_summary" / "val.jsonl")[:4]
        return [
            {
                "id": r["id"],
                "document": r["source"],
                "controls": {"topic": r["topic"]},
                "target": r["target"],
                "dataset": "bbc_summary",
            }
            for r in rows
        ]
    if variant == "tdsum":
        from variants.tdsum.data import xsum_examples

        return xsum_examples(0)["train"][:4]
    if variant == "entity":
        from variants.entity.data import build_split

        return build_split("cnndm_sample", "val", limit=2)[:4]
    from variants.persona.data import build_simulated  # the bundled simulated readers are its seed-0 ones

    return build_simulated(seed=0, n_readers=10, max_articles={"pool": 150, "train": 6, "val": 2, "test": 10})[0][
        "train"
    ][:4]


BART_VARIANTS = [
    ("topic", "prepend-tag"),
    ("topic", "emb"),
    ("tdsum", "tdsum"),
    ("entity", "sentences"),
    ("persona", "history-prefix"),
]


@pytest.mark.parametrize("variant,method", BART_VARIANTS)
def test_every_bart_variant_trains_from_the_converted_base(variant, method, minilm_bart, tmp_path, data_dir):
    from training.__main__ import main as train

    train_file = tmp_path / "train.jsonl"
    write_jsonl(train_file, variant_examples(variant, data_dir))
    out = tmp_path / "ck"
    train(
        [
            variant,
            "--method",
            method,
            "--base-model",
            str(minilm_bart),
            "--train-file",
            str(train_file),
            "--max-steps",
            "2",
            "--per-device-train-batch-size",
            "2",
            "--max-source-length",
            "64",
            "--max-target-length",
            "12",
            "--report-to",
            "none",
            "--save-strategy",
            "no",
            "--output-dir",
            str(out),
        ]
    )
    record = json.loads((out / "steersum.json").read_text())
    assert (record["variant"], record["method"]) == (variant, method)
    assert record["base_weights"]["license"] == "apache-2.0"  # the card can name where the weights came from
    # where bf16 is native, a bf16 copy computes by default (training/bf16.py), not the Trainer's autocast
    assert record["hyperparameters"]["bf16_weights"] == cpu_bf16_supported()
    assert record["hyperparameters"]["bf16"] == (default_precision() == "bf16")  # autocast with AVX512-BF16 alone
    assert record["hyperparameters"]["optim"] == "adamw_torch_fused"  # the CPU default (not given here)
    # batches of neighbours in length by default: every variant's features carry the input_ids the sampler sorts by
    assert record["hyperparameters"]["train_sampling_strategy"] == "group_by_length"

    summary = load_summarizer(out).summarize(
        [read_jsonl(train_file)[0]["document"]], [read_jsonl(train_file)[0]["controls"]], max_new_tokens=4
    )
    assert isinstance(summary[0].text, str)


def test_bf16_weights_train_tdsum_whose_inputs_include_floats(minilm_bart, tmp_path, data_dir):
    """Asked for on any CPU: tdsum's TF-IDF weights (floats) reach the bf16 copy in bf16, and the saved
    weights are the fp32 master's."""
    from safetensors.torch import load_file

    from training.__main__ import main as train

    train_file = tmp_path / "train.jsonl"
    write_jsonl(train_file, variant_examples("tdsum", data_dir))
    out = tmp_path / "ck"
    train(
        [
            "tdsum",
            "--method",
            "tdsum",
            "--base-model",
            str(minilm_bart),
            "--train-file",
            str(train_file),
            "--max-steps",
            "2",
            "--per-device-train-batch-size",
            "2",
            "--gradient-accumulation-steps",
            "2",
            "--max-source-length",
            "64",
            "--max-target-length",
            "12",
            "--report-to",
            "none",
            "--save-strategy",
            "no",
            "--bf16-weights",
            "True",
            "--output-dir",
            str(out),
        ]
    )
    assert json.loads((out / "steersum.json").read_text())["hyperparameters"]["bf16_weights"] is True
    assert {t.dtype for t in load_file(out / "model.safetensors").values()} == {torch.float32}


def test_bf16_and_fp32_pick_the_same_greedy_tokens(minilm_bart, texts):
    """bf16 autocast (what training uses where it is faster) computes the same function up to rounding:
    on the real converted weights, a short greedy generation picks the same tokens as fp32 (the smallest
    fp32 top-2 logit gap along the way is printed, so a flip would be explained)."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(minilm_bart)
    model = AutoModelForSeq2SeqLM.from_pretrained(minilm_bart).eval()
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    settings = dict(
        max_new_tokens=8,
        num_beams=1,
        do_sample=False,
        no_repeat_ngram_size=0,
        output_scores=True,
        return_dict_in_generate=True,
    )
    with torch.no_grad():
        fp32 = model.generate(**batch, **settings)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            bf16 = model.generate(**batch, **settings)
    gaps = [float((s.topk(2).values[:, 0] - s.topk(2).values[:, 1]).min()) for s in fp32.scores]
    print("smallest fp32 top-2 logit gap:", min(gaps))
    assert bf16.sequences.tolist() == fp32.sequences.tolist()
    assert not torch.equal(bf16.scores[0].float(), fp32.scores[0])  # autocast did compute in bf16


def test_verbatim_share_counts_names_and_numbers_copied_from_the_source():
    """Hand-counted: the names are the source's capitalized-only words (bank, england, andrew, bailey)
    and the dictionary-less "ufkos"; numbers are rejoined across WordPiece's "5. 25". 6 of 7 are copied."""
    from metrics.quality import summary_facts, verbatim_share

    document = (
        "The Bank of England raised rates to 5.25% on Monday, said Andrew Bailey in London. It added 2,300 jobs."
    )
    summary = "the bank of england raised rates to 5. 25 %, said andrew bailey and ufkos, 2, 300 jobs."
    assert summary_facts(summary, document) == ["bank", "england", "andrew", "bailey", "ufkos", "5.25", "2,300"]
    assert verbatim_share([summary], [document]) == (6 / 7, 7)
    assert verbatim_share(["it rose."], [document]) == (None, 0)  # nothing to check: no share


def test_preset_minilm_converts_once_into_the_cache(tmp_path, monkeypatch, data_dir):
    from training.base import PROVENANCE_FILE
    from training.seq2seq import DataArguments

    monkeypatch.setenv("STEERSUM_CACHE", str(tmp_path / "cache"))
    train_file = data_dir / "bbc_summary" / "val.jsonl"
    data = DataArguments(train_file=str(train_file), preset="minilm")
    assert data.preset is None and data.base_model == str(tmp_path / "cache" / "minilm-bart")
    stamp = (tmp_path / "cache" / "minilm-bart" / PROVENANCE_FILE).stat().st_mtime_ns
    DataArguments(train_file=str(train_file), preset="minilm")  # the second use finds it converted
    assert (tmp_path / "cache" / "minilm-bart" / PROVENANCE_FILE).stat().st_mtime_ns == stamp
    # a cache written by an older converter (BERT's attention dropout 0.1) is converted again
    provenance = tmp_path / "cache" / "minilm-bart" / PROVENANCE_FILE
    provenance.write_text(json.dumps({**json.loads(provenance.read_text()), "conversion": "older"}))
    config = tmp_path / "cache" / "minilm-bart" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "attention_dropout": 0.1}))
    DataArguments(train_file=str(train_file), preset="minilm")
    assert json.loads(config.read_text())["attention_dropout"] == 0.0
    with pytest.raises(ValueError, match="allowed: tiny, minilm"):
        DataArguments(train_file=str(train_file), preset="large")


def test_a_cut_training_target_keeps_its_end_of_sequence_token(minilm_bart, data_dir):
    """A variant trained with --max-target-length shorter than its references still learns to stop."""
    from transformers import AutoTokenizer

    from training.seq2seq import DataArguments, features
    from variants import get_variant

    tokenizer = AutoTokenizer.from_pretrained(minilm_bart)
    record = variant_examples("topic", data_dir)[0]
    full = tokenizer(text_target=record["target"])["input_ids"]
    data = DataArguments(train_file=__file__, max_source_length=64, max_target_length=6)
    [item] = features(get_variant("topic"), [record], "prepend", None, tokenizer, data)
    assert len(full) > 6 and item["labels"] == full[:5] + [tokenizer.eos_token_id]
    assert full[-1] == tokenizer.eos_token_id  # [SEP], the converted base's end of sequence
