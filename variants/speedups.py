"""SteerSum's faster decoding: what the Space and the evaluation add to :func:`variants.decoding.generate`,
each a change to how fast a summary is written, not to what is written (``benchmarks/store_latency.py``
and ``benchmarks/guidance.py`` time them; the tests compare their outputs with the plain path's).

* int8 kernels: an int8 copy of the model (:func:`int8_copy`), or a copy whose decoder reads int8
  weights (:func:`int8_weights_copy`), as a checkpoint's generation settings ask (``dtype``);
* the LM head's product taken as ``(W @ xᵀ)ᵀ`` (:class:`LMHead`, inside :func:`fast_lm_head`);
* beam search's cache reordering only the self-attention states (:class:`BeamSearchCache`);
* the control-free rows of classifier-free guidance decoded in ``generate``'s own forward pass
  (:class:`PairedGuidance`, with :class:`PairedCache`) instead of a pass of their own.

:data:`SPEEDUPS` is what ``generate`` takes as ``speedups``.
"""

from __future__ import annotations

import contextlib
import copy
import weakref
from typing import Any

import torch
from torch import nn
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.utils import ModelOutput

from .classifier_free_guidance import CandidateHead, ClassifierFreeGuidance, head_replaced

_INT8_COPIES: weakref.WeakKeyDictionary[torch.nn.Module, torch.nn.Module] = weakref.WeakKeyDictionary()


def int8_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` whose Linear layers (the LM head included) compute in int8: weights quantized
    once, activations per call with one scale per tensor (PyTorch's dynamic quantization, VNNI kernels
    on x86), so a summary can change with its batch-mates. Built on first use and kept as long
    as ``model`` lives; ``model`` itself is untouched. ``benchmarks/generation.py`` reports the token
    agreement with fp32 and the scores of both. (``torch.ao.quantization`` is deprecated in favour of
    torchao but present in the pinned torch.)"""
    if model not in _INT8_COPIES:
        _INT8_COPIES[model] = torch.ao.quantization.quantize_dynamic(
            copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8
        ).eval()
    return _INT8_COPIES[model]


_INT8_MM = torch.ops.aten._weight_int8pack_mm.default  # the overload itself: no lookup per call


class Int8WeightLinear(torch.nn.Module):
    """A Linear layer whose weight is held as int8 with one scale per output row (symmetric, the
    store's compact format) and multiplied by PyTorch's int8 weight-only kernel
    (``aten._weight_int8pack_mm``, as gpt-fast and torchao use it), activations in bf16, output back in
    the input's dtype. A decoding step multiplies two rows (a request's beams) by every weight, so it
    waits on reading the weights: a quarter of the bytes of fp32. One thread, two rows: 21 µs for a
    384 × 384 weight against ``F.linear``'s 76 µs fp32 (``docs/log.md``). At 16 rows and more the
    kernel is compute-bound and no faster, so batched evaluation gains nothing."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        weight = linear.weight.detach().float()
        scale = (weight.abs().amax(dim=1) / 127).clamp_min(torch.finfo(torch.float32).tiny)
        self.register_buffer("weight_int8", torch.round(weight / scale[:, None]).to(torch.int8))
        self.register_buffer("scale", scale.to(torch.bfloat16))
        self.bias = None if linear.bias is None else torch.nn.Parameter(linear.bias.detach().float().clone(), False)
        self.out_features = linear.out_features

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        out = _INT8_MM(hidden.reshape(-1, hidden.shape[-1]).to(torch.bfloat16), self.weight_int8, self.scale)
        out = out.view(*hidden.shape[:-1], self.out_features)
        # adding an fp32 bias promotes the bf16 product exactly, as converting it first would: one op less
        return out.to(hidden.dtype) if self.bias is None else out + self.bias


_INT8_WEIGHTS_COPIES: weakref.WeakKeyDictionary[torch.nn.Module, torch.nn.Module] = weakref.WeakKeyDictionary()


def int8_weights_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` whose decoder Linear layers and LM head are :class:`Int8WeightLinear`: what
    each decoding step reads. The encoder runs once per request and stays as it is. Built on first
    use and kept as long as ``model`` lives; ``model`` itself is untouched."""
    if model not in _INT8_WEIGHTS_COPIES:
        quantized = copy.deepcopy(model).eval()
        for module in list(quantized.get_decoder().modules()):
            for name, child in list(module.named_children()):
                if type(child) is torch.nn.Linear:
                    setattr(module, name, Int8WeightLinear(child))
        head = quantized.get_output_embeddings()
        if type(head) is torch.nn.Linear:
            quantized.set_output_embeddings(Int8WeightLinear(head))
        _INT8_WEIGHTS_COPIES[model] = quantized
    return _INT8_WEIGHTS_COPIES[model]


class LMHead(torch.nn.Linear):
    """The LM head's product taken as ``(W @ xᵀ)ᵀ``: the same numbers as ``nn.Linear``, faster for the few
    rows of a decoding step. On a CPU, ``F.linear`` with one to three rows (a request's beams) takes MKL's
    slow path: 9.1 ms for two rows of MiniLM-BART's 30,524 × 384 head on one thread, against 4.0 ms for
    the same product written ``W @ xᵀ`` (a tall matrix times a thin one); at 16 rows it is not slower
    (11.0 ms against 12.3). Outputs change only by float summation order: the stored models write the
    same summaries. ``benchmarks/store_latency.py`` times whole requests both ways."""

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        rows = hidden.reshape(-1, hidden.shape[-1])
        logits = (self.weight @ rows.t()).t().reshape(*hidden.shape[:-1], self.out_features)
        return logits if self.bias is None else logits + self.bias


@contextlib.contextmanager
def fast_lm_head(model):
    """``model``'s LM head computes with :class:`LMHead`'s product inside the block, as plain ``nn.Linear``
    outside it: only the class of the one module changes, so the head keeps its weight, the weight its
    ties, and the model its state dict; what a caller sees or saves is a standard model. A head that is
    not a plain linear layer (a peft wrapper) is left as it is."""
    head = model.get_output_embeddings()
    if type(head) is not torch.nn.Linear:
        yield
        return
    head.__class__ = LMHead
    try:
        yield
    finally:
        head.__class__ = torch.nn.Linear


class BeamSearchCache(EncoderDecoderCache):
    """``generate``'s cache for beam search, less one copy per step. Beam search reorders the beams of
    each example among themselves, and those beams share one encoder row (repeated for each beam), so
    their cross-attention states are equal and reordering them changes no value; only the
    self-attention cache is reordered. transformers reorders both: for a 400-word article that copy
    (rows x source length x d_model, keys and values, every layer, every step) took 0.16 s of a 2.1 s
    request on one thread (profiled; ``benchmarks/store_latency.py`` times the serving changes together).
    :class:`PairedGuidance` treats its own cache the same way."""

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self.self_attention_cache.reorder_cache(beam_idx)


class SplitHead(nn.Module):
    """Stands in for the LM head during a forward pass of ``generate``'s rows and their control-free
    twins (:meth:`PairedGuidance.alongside`): the first ``rows`` rows' logits as the head
    computes them; the twins' hidden states kept (:attr:`twins`) until the processors have chosen the
    candidates, whose logits are then all the twins need (:class:`CandidateHead`)."""

    def __init__(self, head: nn.Linear, rows: int):
        super().__init__()
        self.head, self.rows, self.twins = head, rows, None

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        self.twins = hidden[self.rows :]
        return self.head(hidden[: self.rows])


def pad_to(tensor: torch.Tensor, size: tuple[int, ...]) -> torch.Tensor:
    """``tensor`` zero-padded at the end of every dimension but the first to ``size``."""
    pads = []
    for have, want in reversed(list(zip(tensor.shape[1:], size))):
        pads += [0, want - have]
    return torch.nn.functional.pad(tensor, pads) if any(pads) else tensor


def stack_pair(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """Two batches of the same kind stacked, each zero-padded to the larger size in every other
    dimension: a source length, a signal length. Zero is padding for a mask, so every position
    added is one no attention reads (BART's source attention, GSum's signal, TDSum's TF-IDF
    attention all take their keys' masks from the encoder output or ``attention_mask``)."""
    size = tuple(max(a, b) for a, b in zip(first.shape[1:], second.shape[1:]))
    return torch.cat([pad_to(first, size), pad_to(second, size)])


def stack_outputs(first: Any, second: Any) -> Any:
    """Two encoder outputs of the same class stacked along the batch (:func:`stack_pair`). What only
    one holds (TDSum's TF-IDF keys, computed on a model's first step) is left for the model to compute
    once for both."""
    stacked = copy.copy(first)
    for key in list(first.keys()):
        a, b = first[key], second.get(key)
        stacked[key] = stack_pair(a, b) if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) else None
    return stacked


class PairedCache(EncoderDecoderCache):
    """``generate``'s cache when every row is decoded beside its control-free twin: rows ``[0, n)`` are
    ``generate``'s, ``[n, 2n)`` their twins. Beam search reorders its rows and the twins follow; as in
    :class:`BeamSearchCache` only the self-attention cache moves (an example's beams
    share their encoder states)."""

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self.self_attention_cache.reorder_cache(torch.cat([beam_idx, beam_idx + len(beam_idx)]))


def takes_own_cache(model) -> bool:
    """Whether ``generate`` may be given SteerSum's cache (:class:`BeamSearchCache`,
    :class:`PairedCache`): an encoder-decoder model that peft does not wrap. (peft's unmerged models,
    which the Space never serves, keep transformers' own: given a cache, one with trainable token rows
    wrote nothing.)"""
    return model.config.is_encoder_decoder and not hasattr(model, "peft_config")


# What ``generate`` hands a decoding step that the decoder reads; its encoder inputs (``input_ids``,
# TF-IDF scores, GSum's signal ids, topic ids) are already in ``encoder_outputs`` and are not passed twice.
DECODER_INPUTS = (
    "decoder_attention_mask",
    "use_cache",
    "cache_position",
    "return_dict",
    "output_attentions",
    "output_hidden_states",
)


class PairedGuidance(ClassifierFreeGuidance):
    """:class:`variants.classifier_free_guidance.ClassifierFreeGuidance` whose control-free rows are decoded
    beside ``generate``'s own, in one forward pass (:meth:`alongside`), when the model allows it
    (:meth:`pairs`); otherwise the plain processor's own pass. The same scores either way."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # the twins' hidden states (or logits) of this step, inside alongside()
        self.paired_hidden: torch.Tensor | None = None
        self.paired_logits: torch.Tensor | None = None
        self.stacked: tuple[Any, torch.Tensor] | None = None  # both rows' encoder outputs and mask

    def pairs(self, model) -> bool:
        """Whether ``model`` can decode the control-free rows beside its own (:meth:`alongside`): it takes
        SteerSum's cache, and the unconditional pass is cached (recomputed from the whole prefix at each
        step, the reference, it stays a pass of its own)."""
        return self.unconditional_context["use_cache"] and takes_own_cache(model)

    @contextlib.contextmanager
    def alongside(self, model):
        """``model`` decodes each row and its control-free twin in one forward pass while inside, for a
        ``generate`` call given a :class:`PairedCache`: its forward takes ``generate``'s rows, runs the
        decoder on them and on the twins (the same decoder tokens, the unconditional encoder outputs),
        and returns the rows' own logits. The twins' wait for :meth:`__call__`: their hidden states, so
        that only the candidates' logits are computed (:class:`SplitHead`), or where every logit is
        needed (no :func:`head_owner`), the logits. Only the instance's ``forward`` changes, for the
        block."""
        forward = model.forward

        def paired(decoder_input_ids=None, encoder_outputs=None, attention_mask=None, past_key_values=None, **kwargs):
            rows = decoder_input_ids.shape[0]
            if self.stacked is None:
                self.encode(rows)
                if not isinstance(encoder_outputs, ModelOutput):
                    raise ValueError("decoding alongside the control-free rows needs generate's encoder outputs")
                mask = (
                    attention_mask
                    if attention_mask is not None
                    else torch.ones(
                        encoder_outputs.last_hidden_state.shape[:2], dtype=torch.long, device=decoder_input_ids.device
                    )
                )
                twins = (
                    self.attention_mask
                    if self.attention_mask is not None
                    else torch.ones(
                        self.encoder_outputs["last_hidden_state"].shape[:2], dtype=mask.dtype, device=mask.device
                    )
                )
                self.stacked = stack_outputs(encoder_outputs, self.encoder_outputs), stack_pair(mask, twins)
            owner = self.head_owner
            split = SplitHead(owner.lm_head, rows) if owner is not None else None
            with head_replaced(owner, split):
                out = forward(
                    decoder_input_ids=decoder_input_ids.repeat(2, 1),
                    encoder_outputs=self.stacked[0],
                    attention_mask=self.stacked[1],
                    past_key_values=past_key_values,
                    **{k: v for k, v in kwargs.items() if k in DECODER_INPUTS and v is not None},
                )
            if split is None:
                self.paired_logits, out.logits = out.logits[rows:, -1, :], out.logits[:rows]
            else:
                self.paired_hidden = split.twins[:, -1:, :]
            return out

        model.forward = paired
        try:
            yield
        finally:
            del model.forward

    def get_unconditional_logits(
        self, input_ids: torch.Tensor, candidates: torch.Tensor | None = None
    ) -> torch.Tensor:
        if self.paired_hidden is not None:  # decoded beside generate's own rows (alongside()): the head is left
            hidden, self.paired_hidden = self.paired_hidden, None
            head = self.model.get_output_embeddings()
            logits = (head if candidates is None else CandidateHead(head, candidates))(hidden)[:, -1, :]
            bias = getattr(self.model, "final_logits_bias", None)  # BART's, added after its head
            return logits if bias is None else logits + bias
        if self.paired_logits is not None:  # every logit (a model that post-processes them over the vocabulary)
            logits, self.paired_logits = self.paired_logits, None
            return logits
        return super().get_unconditional_logits(input_ids, candidates)


class Speedups:
    """What :func:`variants.decoding.generate` takes as ``speedups``: the guidance processor's class, and
    the cache and context of a ``generate`` call."""

    guidance_class = PairedGuidance

    @staticmethod
    def prepare(model, guidance: ClassifierFreeGuidance | None, kwargs: dict) -> tuple[Any, dict]:
        """``generate``'s keyword arguments given SteerSum's cache, and the context it runs in: the LM head
        as :class:`LMHead` and, under guidance, the control-free rows decoded alongside."""
        paired = guidance if isinstance(guidance, PairedGuidance) and guidance.pairs(model) else None
        if paired is not None:
            kwargs["past_key_values"] = PairedCache(DynamicCache(), DynamicCache())
        elif kwargs.get("num_beams", 1) > 1 and takes_own_cache(model):
            kwargs.setdefault("past_key_values", BeamSearchCache(DynamicCache(), DynamicCache()))
        stack = contextlib.ExitStack()
        stack.enter_context(fast_lm_head(model))
        if paired is not None:
            stack.enter_context(paired.alongside(model))
        return stack, kwargs


SPEEDUPS = Speedups()
