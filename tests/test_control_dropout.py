"""Control dropout in training (training/seq2seq.py): a seeded share of the examples is given as the
variant's control-free input, so classifier-free guidance contrasts with an input the model knows."""

import json
import math

import pytest
from transformers import HfArgumentParser, Seq2SeqTrainingArguments

from training.seq2seq import DEFAULT_CONTROL_DROPOUT, DataArguments, dropped_controls, features
from variants import get_variant
from variants.presets import tiny_tokenizer
from variants.seq2seq import add_control_tokens
from variants.topic import SPECIAL_TOKENS

DOCUMENT = "Shares in the bank rose after it said profits grew."


def test_the_dropped_share_is_within_a_binomial_bound_and_follows_the_seed():
    n, share = 400, DEFAULT_CONTROL_DROPOUT
    for seed in range(5):
        dropped = sum(dropped_controls(n, share, seed))
        # Binomial(400, 0.15): mean 60, sd 7.14; 4 sd either side holds with probability > 0.9999
        assert abs(dropped - n * share) <= 4 * math.sqrt(n * share * (1 - share))
    assert dropped_controls(n, share, 3) == dropped_controls(n, share, 3)
    assert dropped_controls(n, share, 3) != dropped_controls(n, share, 4)
    assert dropped_controls(n, 0.0, 3) == [False] * n


def args(tmp_path, *flags):
    train = tmp_path / "train.jsonl"
    train.write_text(json.dumps({"document": DOCUMENT, "controls": {"topic": "business"}, "target": "x"}) + "\n")
    parser = HfArgumentParser((DataArguments, Seq2SeqTrainingArguments))
    return parser.parse_args_into_dataclasses(["--train-file", str(train), "--output-dir", str(tmp_path), *flags])[0]


def test_the_flag_defaults_to_0_15_and_refuses_a_share_of_1(tmp_path):
    assert args(tmp_path).control_dropout == 0.15
    assert args(tmp_path, "--control-dropout", "0.3").control_dropout == 0.3
    with pytest.raises(ValueError, match=r"--control-dropout must be in \[0, 1\), got 1.0"):
        args(tmp_path, "--control-dropout", "1")


def test_dropped_examples_get_the_control_free_input_and_0_leaves_the_data_unchanged(tmp_path):
    variant, tokenizer = get_variant("topic"), tiny_tokenizer()
    add_control_tokens(tokenizer, _Embeddings(), SPECIAL_TOKENS)
    records = [
        {"document": f"{DOCUMENT} Item {i}.", "controls": {"topic": "business"}, "target": "Profits grew."}
        for i in range(200)
    ]
    data = args(tmp_path)
    plain = features(variant, records, "prepend", None, tokenizer, data)
    assert features(variant, records, "prepend", None, tokenizer, data, 0.0, seed=7) == plain
    dropped = features(variant, records, "prepend", None, tokenizer, data, 0.5, seed=7)
    which = dropped_controls(len(records), 0.5, 7)
    for record, feature, base, gone in zip(records, dropped, plain, which):
        expected = tokenizer(record["document"])["input_ids"] if gone else base["input_ids"]
        assert feature["input_ids"] == expected and feature["labels"] == base["labels"]
    assert 0 < sum(which) < len(records)


class _Embeddings:
    """Enough of a model for add_control_tokens (its table is already big enough)."""

    def get_input_embeddings(self):
        return type("E", (), {"num_embeddings": 10**6})()


def test_a_trained_checkpoint_records_its_control_dropout(tiny_topic_checkpoint):
    from variants.base import read_record

    assert read_record(tiny_topic_checkpoint)["hyperparameters"]["control_dropout"] == DEFAULT_CONTROL_DROPOUT
