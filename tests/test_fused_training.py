"""Training on a long document read whole (``--source-windows N``, :mod:`training.batches`): each example's
windows prepared with its controls as generation reads them, the loss of the decoder reading their states end
to end, the encoder left alone with ``--frozen-encoder``, and an adapter trained on from a stored one
(``--adapter-init``); the topic data's train split in both joins (``--train-joins``)."""

import json

import pytest
import torch
from safetensors.torch import load_file
from test_distributed import tiny_general, write_examples  # noqa: F401 (a fixture)
from transformers import HfArgumentParser, Seq2SeqTrainingArguments

from metrics.io import read_jsonl
from training import adapter as adapters
from training.batches import FusedWindowsTrainer, collate, collate_windows
from training.data import load_examples
from training.seq2seq import DataArguments, features
from variants import get_variant
from variants.topic.train import Arguments, build

SOURCE_TOKENS = 48  # every fixture article is longer: two to five windows each


def parsed(train_file, out, *flags):
    parser = HfArgumentParser((Arguments, DataArguments, adapters.AdapterArguments, Seq2SeqTrainingArguments))
    return parser.parse_args_into_dataclasses(
        [
            "--method",
            "prepend-tag",
            "--train-file",
            str(train_file),
            "--output-dir",
            str(out),
            "--max-source-length",
            str(SOURCE_TOKENS),
            "--max-target-length",
            "12",
            *flags,
        ]
    )


@pytest.fixture
def windowed(tmp_path):
    """Four topic examples as features read in up to 8 windows and as the usual cut features, with the tiny
    random model they are read by."""
    train_file = write_examples(tmp_path / "train.jsonl", lambda r: {"topic": r["topic"]})
    own, data, _, _ = parsed(train_file, tmp_path / "out", "--preset", "tiny", "--source-windows", "8")
    torch.manual_seed(0)
    model, tokenizer, assets = build(own, data)
    variant = get_variant("topic")
    records = load_examples(data.train_file, variant, assets, 4)
    fused = features(variant, records, "prepend-tag", assets, tokenizer, data)
    data.source_windows = 1
    cut = features(variant, records, "prepend-tag", assets, tokenizer, data)
    return model.eval(), tokenizer, fused, cut, (variant, records, assets)


def test_each_window_is_prepared_with_the_controls_as_generation_reads_it(windowed):
    _, tokenizer, fused, cut, (variant, records, assets) = windowed
    for example, plain, record in zip(fused, cut, records):
        windows = example["input_ids"]
        assert len(windows) >= 2 and all(len(w) <= SOURCE_TOKENS for w in windows)
        # the first window is the cut input's start, up to a sentence's end
        assert windows[0][:-1] == plain["input_ids"][: len(windows[0]) - 1]
        assert example["labels"] == plain["labels"]
        # every window carries the controls' prefix: the tokens before the document's first word
        prefix = tokenizer(variant.prepare("", record["controls"], "prepend-tag", assets).text.rstrip())["input_ids"]
        prefix = prefix[:-1]  # without the end token
        assert all(w[: len(prefix)] == prefix for w in windows)


def test_the_fused_loss_is_the_decoders_on_every_windows_own_states_end_to_end(windowed, tmp_path):
    model, tokenizer, fused, _, _ = windowed
    batch = collate_windows(tokenizer)(fused[:2])
    assert batch["input_ids"].dim() == 3  # examples x windows x tokens
    trainer = FusedWindowsTrainer(
        model=model, args=Seq2SeqTrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[])
    )
    with torch.no_grad():
        loss = trainer.compute_loss(model, dict(batch))
        # by hand, an example at a time: each window encoded alone, the states laid end to end
        summed, tokens = 0.0, 0
        for example in fused[:2]:
            states = torch.cat(
                [model.get_encoder()(input_ids=torch.tensor([w])).last_hidden_state for w in example["input_ids"]], 1
            )
            labels = torch.tensor([example["labels"]])
            alone = model(encoder_outputs=(states,), labels=labels).loss
            summed, tokens = summed + alone * labels.numel(), tokens + labels.numel()
    torch.testing.assert_close(loss, summed / tokens, atol=1e-5, rtol=1e-5)


def test_one_window_each_is_the_usual_batch_and_loss(windowed, tmp_path):
    model, tokenizer, _, cut, _ = windowed
    one_each = [{**example, "input_ids": [example["input_ids"]]} for example in cut[:2]]
    batch = collate_windows(tokenizer)(one_each)
    usual = collate(tokenizer.pad_token_id)(cut[:2])
    assert batch["input_ids"].dim() == 2
    assert all(torch.equal(batch[key], usual[key]) for key in ("input_ids", "attention_mask", "labels"))


def test_a_frozen_encoder_gets_no_gradient_and_the_decoder_learns(windowed, tmp_path):
    model, tokenizer, fused, _, _ = windowed
    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[])
    trainer = FusedWindowsTrainer(model=model.train(), args=args)
    trainer.frozen_encoder = True
    trainer.compute_loss(model, collate_windows(tokenizer)(fused[:2])).backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    assert all(g is None for name, g in grads.items() if ".encoder." in name)
    assert all(g is not None for name, g in grads.items() if ".decoder.layers." in name)


def test_an_adapter_trained_on_starts_from_its_weights_and_counts_their_steps(tmp_path, tiny_general):  # noqa: F811
    from training.__main__ import main as training_main
    from variants import load_summarizer
    from variants.base import read_record

    train_file = write_examples(tmp_path / "train.jsonl", lambda r: {"topic": r["topic"]})
    common = ["topic", "--method", "prepend-tag", "--base-model", str(tiny_general), "--adapter", "lora"]
    common += ["--train-file", train_file, "--max-source-length", str(SOURCE_TOKENS), "--max-target-length", "12"]
    common += ["--bf16", "False", "--per-device-train-batch-size", "4", "--report-to", "none"]
    first, second = tmp_path / "first", tmp_path / "second"
    training_main([*common, "--max-steps", "2", "--learning-rate", "1e-2", "--output-dir", str(first)])
    # learning rate 0: what it saves is what it started from (a new LoRA's B would be zero)
    training_main(
        [*common, "--max-steps", "1", "--learning-rate", "0", "--output-dir", str(second)]
        + ["--adapter-init", str(first), "--source-windows", "8", "--frozen-encoder", "True"]
    )
    before, after = (load_file(str(folder / "adapter_model.safetensors")) for folder in (first, second))
    assert before.keys() == after.keys() and any(v.abs().sum() > 0 for k, v in before.items() if "lora_B" in k)
    assert all(torch.equal(before[k], after[k]) for k in before)
    record = read_record(second)
    assert record["steps"] == 3 and record["adapter"]["continued_from"] == {"name": "first", "steps": 2}
    assert (record["source_windows"], record["window_mode"]) == (8, "fuse") and record["hyperparameters"][
        "frozen_encoder"
    ]
    generation = json.loads((second / "generation_config.json").read_text())
    assert (generation["source_windows"], generation["window_mode"]) == (8, "fuse")  # read as trained
    settings = load_summarizer(second).settings
    assert (settings.source_windows, settings.window_mode, settings.num_beams) == (8, "fuse", 4)


def test_adapter_init_must_be_an_adapter_folder(tmp_path):
    with pytest.raises(ValueError, match="--adapter-init .*no adapter_config.json"):
        adapters.AdapterArguments(adapter="lora", adapter_init=str(tmp_path))


def test_the_train_split_holds_each_pair_in_both_joins_and_val_stays_interleaved(tmp_path, data_dir):
    from training.cli import build_data

    build_data(
        "topic", ["--out", str(tmp_path), "--data-dir", str(data_dir), "--train-joins", "interleaved,concatenated"]
    )
    plain = tmp_path / "plain"
    build_data("topic", ["--out", str(plain), "--data-dir", str(data_dir)])
    train, interleaved = read_jsonl(tmp_path / "train.jsonl"), read_jsonl(plain / "train.jsonl")
    assert train[: len(interleaved)] == interleaved  # the paper's super-articles unchanged, then the others
    joined = train[len(interleaved) :]
    assert len(joined) == len(interleaved)
    for mixed, whole in zip(interleaved, joined):
        assert whole["id"] == mixed["id"] + "-concatenated" and whole["target"] == mixed["target"]
        assert sorted(whole["document"].split()) == sorted(mixed["document"].split())  # the same sentences
    assert read_jsonl(tmp_path / "val.jsonl") == read_jsonl(plain / "val.jsonl")
    with pytest.raises(SystemExit):
        build_data("topic", ["--out", str(tmp_path), "--data-dir", str(data_dir), "--train-joins", "sideways"])


def test_source_windows_below_one_is_refused(tmp_path):
    train_file = tmp_path / "train.jsonl"
    train_file.write_text("")
    with pytest.raises(ValueError, match="--source-windows must be at least 1, got 0"):
        parsed(train_file, tmp_path, "--preset", "tiny", "--source-windows", "0")
