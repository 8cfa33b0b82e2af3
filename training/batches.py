"""How training examples become batches: one input each (:func:`collate`), or a long document read whole: its windows
of whole sentences, each prepared with its controls and encoded alone, fused by the decoder (``--source-windows
N``; Fusion-in-Decoder, Izacard & Grave 2021). Generation reads a long document the same way
(:func:`variants.decoding.fuse_windows` with a model's ``source_windows``), so a model trained here sees in
training what it reads when served; a model trained on one window, then given several, wrote text its document
does not support (docs/log.md).

The windows are cut as an exported repo's processor cuts them (:func:`variants.steering.read_windows`, the
same :mod:`models.windows`), so training, the Space and the exported repos read one document alike.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import Seq2SeqTrainer

from models.windows import pad_windows
from variants.decoding import encoder_extras, fuse_windows
from variants.steering import read_windows


def labels_and_extras(batch: list[dict]) -> dict[str, torch.Tensor]:
    """A batch's labels padded with -100 (no loss) and the examples' other inputs; what both collators add to
    their inputs."""
    width = max(len(b["labels"]) for b in batch)
    out = {"labels": torch.tensor([b["labels"] + [-100] * (width - len(b["labels"])) for b in batch])}
    for key in batch[0].keys() - {"input_ids", "labels"}:
        out[key] = torch.tensor([b[key] for b in batch])
    return out


def collate(pad_token_id: int):
    """A batch of examples of one input each: ``input_ids`` padded with ``pad_token_id``, its mask, then
    :func:`labels_and_extras`."""

    def collate_batch(batch: list[dict]) -> dict[str, torch.Tensor]:
        width = max(len(b["input_ids"]) for b in batch)
        ids = torch.tensor([b["input_ids"] + [pad_token_id] * (width - len(b["input_ids"])) for b in batch])
        return {"input_ids": ids, "attention_mask": (ids != pad_token_id).long(), **labels_and_extras(batch)}

    return collate_batch


def window_ids(tokenizer, make, document: str, max_source_length: int, most: int) -> list[list[int]]:
    """The token ids of each window a model reads of ``document`` (one when it fits), each window's text
    prepared by ``make(text)``."""
    _, windows, _ = read_windows(tokenizer, lambda _, text: make(text), [document], max_source_length, most)
    return windows[0]


def collate_windows(tokenizer):
    """A batch of examples whose ``input_ids`` are lists of windows: ``input_ids`` and ``attention_mask`` of
    shape (examples, windows, tokens) (:func:`models.windows.pad_windows`; (examples, tokens) when every
    example is one window), then :func:`labels_and_extras`."""

    def collate_batch(batch: list[dict]) -> dict[str, torch.Tensor]:
        inputs = pad_windows(tokenizer, [b["input_ids"] for b in batch], return_tensors="pt")
        return {**inputs, **labels_and_extras(batch)}

    return collate_batch


class FusedWindowsTrainer(Seq2SeqTrainer):
    """``Seq2SeqTrainer`` whose batches of (examples, windows, tokens) are encoded a window at a time and fused
    (:func:`variants.decoding.fuse_windows`) before the decoder computes the loss. ``frozen_encoder``: the
    windows' states are computed without gradients, so only the decoder's weights learn (how to read several
    windows is the decoder's to learn; the encoder reads each window as it was trained to), at about half the
    cost of a fused step (docs/log.md)."""

    frozen_encoder: bool = False

    def compute_loss(self, model, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch=None):
        if inputs["input_ids"].dim() == 3:
            inputs = dict(inputs)
            ids, mask = inputs.pop("input_ids"), inputs.pop("attention_mask")
            core = self.accelerator.unwrap_model(model)  # DDP's wrapper has no get_encoder
            extras = encoder_extras(core, inputs)
            with torch.set_grad_enabled(torch.is_grad_enabled() and not self.frozen_encoder):
                inputs["encoder_outputs"], inputs["attention_mask"] = fuse_windows(core, ids, mask, extras)
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
