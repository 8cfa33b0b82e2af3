"""Mixed precision on a CPU without autocast: forward and backward run on a bf16 copy of the model,
AdamW updates the fp32 weights.

Autocast keeps fp32 weights and casts each one to bf16 at every matrix product, forward and backward.
Here the copy is cast once per optimizer step instead, and every op runs in bf16: on this 2-core AMX
CPU a step of the MiniLM BART took 1.27 s against 2.62 s in fp32 (2.06x) and 1.46 s under autocast
(1.79x; ``python -m benchmarks bf16``). The Trainer still holds, clips, steps and saves the fp32
model, so checkpoints, resuming and the saved weights are those of fp32 training: only the forward and
backward arithmetic is bf16, as under autocast (which also runs layer norms and softmax in fp32; here
they round to bf16 too).

    python -m training topic ... --bf16-weights True    # the default on CPUs with AMX
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn
from transformers import Seq2SeqTrainer


class Bf16Copy:
    """A bf16 copy of ``master`` that computes the gradients of its trainable weights."""

    def __init__(self, master: nn.Module):
        self.model = copy.deepcopy(master).to(torch.bfloat16)
        # Frozen weights (a LoRA adapter's base) never change: only the trainable ones are synced.
        self.pairs = [
            (weight, low) for weight, low in zip(master.parameters(), self.model.parameters()) if weight.requires_grad
        ]

    @torch.no_grad()
    def refresh(self) -> None:
        """The copy set to the master weights (after each optimizer step)."""
        for weight, low in self.pairs:
            low.copy_(weight)

    @torch.no_grad()
    def hand_gradients(self) -> None:
        """The copy's gradients added, in fp32, to the master's (several micro-batches accumulate)."""
        for weight, low in self.pairs:
            if low.grad is None:
                continue
            if weight.grad is None:
                weight.grad = low.grad.float()
            else:
                weight.grad.add_(low.grad)
            low.grad = None

    def step(self, batch: dict[str, Any], optimizer: torch.optim.Optimizer) -> torch.Tensor:
        """One optimizer step of the master weights on ``batch``, forward and backward on the copy (the
        step the benchmarks and the zoo's step timing measure; the Trainer's is :class:`Bf16WeightsTrainer`)."""
        loss = self.model(**batch).loss
        loss.backward()
        self.hand_gradients()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        self.refresh()
        return loss


def low_precision(inputs: dict[str, Any]) -> dict[str, Any]:
    """Floating inputs (tdsum's TF-IDF weights) in bf16, as the copy's weights; token ids unchanged."""
    return {k: v.to(torch.bfloat16) if torch.is_tensor(v) and v.is_floating_point() else v for k, v in inputs.items()}


class Bf16WeightsTrainer(Seq2SeqTrainer):
    """``Seq2SeqTrainer`` whose training steps run forward and backward on a :class:`Bf16Copy`; the
    optimizer, gradient clipping, evaluation and saving see only the fp32 model."""

    bf16_copy: Bf16Copy | None = None
    synced_step: int | None = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.args.bf16 or self.args.fp16:
            raise ValueError("--bf16-weights replaces --bf16/--fp16 (autocast): give one of them")
        if self.args.world_size > 1:  # the copy runs outside DDP: no process would see another's gradients
            raise ValueError(
                "--bf16-weights trains on a copy of the model that DDP does not see, so the processes "
                "would never average their gradients: with several processes use --bf16 True"
            )

    def training_step(self, model: nn.Module, inputs: dict[str, Any], num_items_in_batch=None) -> torch.Tensor:
        if self.bf16_copy is None:  # here, not in __init__: a resumed run has loaded its weights by now
            self.bf16_copy = Bf16Copy(model)
            self.synced_step = self.state.global_step
        elif self.synced_step != self.state.global_step:  # the optimizer stepped since the last micro-batch
            self.bf16_copy.refresh()
            self.synced_step = self.state.global_step
        loss = super().training_step(self.bf16_copy.model, low_precision(inputs), num_items_in_batch)
        self.bf16_copy.hand_gradients()
        return loss.float()
