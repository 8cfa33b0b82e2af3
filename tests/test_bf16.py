"""Training on a bf16 copy with fp32 master weights (training/bf16.py), on tiny models."""

import pytest
import torch
from torch import nn

from training.bf16 import Bf16Copy, low_precision


def test_handed_gradients_add_up_in_fp32_and_skip_frozen_weights():
    torch.manual_seed(0)
    master = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    master[0].requires_grad_(False)  # as a LoRA base: never stepped, so never synced
    copy = Bf16Copy(master)
    assert len(copy.pairs) == 2 and all(low.dtype == torch.bfloat16 for _, low in copy.pairs)
    batches = [torch.randn(5, 4), torch.randn(5, 4)]
    for x in batches:  # two micro-batches, as with gradient accumulation
        copy.model(x.to(torch.bfloat16)).square().mean().backward()
        expected = [low.grad.float() for _, low in copy.pairs]
        before = [w.grad.clone() if w.grad is not None else 0 for w, _ in copy.pairs]
        copy.hand_gradients()
        for (weight, low), b, e in zip(copy.pairs, before, expected):
            assert weight.grad.dtype == torch.float32 and low.grad is None
            assert torch.equal(weight.grad, b + e)  # exact: bf16 values add into fp32 without rounding here
    assert master[0].weight.grad is None
    # the same function as fp32 up to bf16 rounding (~3 significant digits)
    fp32 = [torch.autograd.grad(sum(master(x).square().mean() for x in batches), w)[0] for w, _ in copy.pairs]
    for (weight, _), g in zip(copy.pairs, fp32):
        assert torch.allclose(weight.grad, g, rtol=0.05, atol=0.02)


def test_refresh_copies_the_stepped_master_weights():
    master = nn.Linear(3, 3)
    copy = Bf16Copy(master)
    with torch.no_grad():
        master.weight.add_(1.0)
    copy.refresh()
    assert torch.equal(copy.model.weight, master.weight.to(torch.bfloat16))


def test_low_precision_casts_floats_only():
    inputs = low_precision({"input_ids": torch.tensor([[5, 6]]), "tfidf": torch.tensor([[0.25, 0.5]]), "n": 3})
    assert inputs["input_ids"].dtype == torch.int64 and inputs["tfidf"].dtype == torch.bfloat16 and inputs["n"] == 3


@pytest.fixture
def tiny_bart():
    from transformers import BartConfig, BartForConditionalGeneration

    torch.manual_seed(0)
    config = BartConfig(
        vocab_size=64,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
    )
    return BartForConditionalGeneration(config)


def train_steps(model, trainer_class, tmp_path, **args):
    from transformers import Seq2SeqTrainingArguments

    from training.batches import collate

    torch.manual_seed(1)
    data = [
        {"input_ids": torch.randint(3, 64, (12,)).tolist(), "labels": torch.randint(3, 64, (6,)).tolist()}
        for _ in range(8)
    ]
    training_args = Seq2SeqTrainingArguments(
        str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=2,
        learning_rate=1e-2,
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        remove_unused_columns=False,
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=1,
        **args,
    )
    trainer = trainer_class(model=model, args=training_args, data_collator=collate(1), train_dataset=data)
    trainer.train()
    return trainer


@pytest.mark.parametrize("accumulation", [1, 2])
def test_trainer_steps_the_fp32_weights_as_fp32_training_does(tiny_bart, tmp_path, accumulation):
    """Two optimizer steps (with and without gradient accumulation) on the same batches: the weights stay
    fp32 and move as fp32 training moves them. Adam's first steps are about ±lr per weight whatever a
    gradient's size, so bf16 rounding can flip only near-zero gradients: the updates point the same way
    (cosine > 0.9) and the first logged loss agrees to bf16 rounding."""
    import copy

    from transformers import Seq2SeqTrainer

    from training.bf16 import Bf16WeightsTrainer

    start = [p.detach().clone() for p in tiny_bart.parameters()]
    runs = {}
    for name, trainer_class in (("fp32", Seq2SeqTrainer), ("bf16 copy", Bf16WeightsTrainer)):
        model = copy.deepcopy(tiny_bart)
        trainer = train_steps(model, trainer_class, tmp_path / name, gradient_accumulation_steps=accumulation)
        assert all(p.dtype == torch.float32 for p in model.parameters())
        update = torch.cat([(p.detach() - s).flatten() for p, s in zip(model.parameters(), start)])
        runs[name] = (update, [h["loss"] for h in trainer.state.log_history if "loss" in h])
    (fp32, fp32_losses), (low, low_losses) = runs["fp32"], runs["bf16 copy"]
    assert low.abs().max() > 0
    assert torch.nn.functional.cosine_similarity(fp32, low, dim=0) > 0.9
    assert low_losses[0] == pytest.approx(fp32_losses[0], rel=0.02)


def test_bf16_weights_and_autocast_exclude_each_other(tiny_bart, tmp_path):
    from training.bf16 import Bf16WeightsTrainer

    with pytest.raises(ValueError, match="--bf16-weights replaces --bf16"):
        train_steps(tiny_bart, Bf16WeightsTrainer, tmp_path, bf16=True)


@pytest.mark.parametrize(
    "cuda,cuda_bf16,amx,avx512_bf16,expected",
    [
        (True, True, True, True, ["--bf16", "True"]),  # a GPU machine decides by its GPU, whatever its CPU has
        (True, False, True, True, []),
        (False, False, True, True, ["--optim", "adamw_torch_fused", "--bf16-weights", "True", "--use_cpu", "True"]),
        # AVX512-BF16 without AMX: autocast (1.39x a fp32 step on a 2-core EPYC), not a bf16 copy
        (False, False, False, True, ["--optim", "adamw_torch_fused", "--bf16", "True", "--use_cpu", "True"]),
        (False, False, False, False, ["--optim", "adamw_torch_fused"]),
    ],
)
def test_the_training_precision_follows_the_device_that_trains(
    monkeypatch, cuda, cuda_bf16, amx, avx512_bf16, expected
):
    from training import seq2seq

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: cuda_bf16)
    monkeypatch.setattr(seq2seq, "cpu_bf16_supported", lambda: amx)
    monkeypatch.setattr(seq2seq, "cpu_autocast_bf16_supported", lambda: avx512_bf16)
    assert seq2seq.default_precision() == {"--bf16": "bf16", "--bf16-weights": "bf16-weights"}.get(
        next((f for f in expected if f.startswith("--bf16")), None), "fp32"
    )
    assert seq2seq.default_training_flags([]) == expected
    # what the user says wins: no precision flag added, and their optimizer kept
    given = seq2seq.default_training_flags(["--bf16=False", "--optim", "adamw_torch"])
    assert not {"--bf16", "--bf16-weights"} & set(given) and "--optim" not in given
