"""Control strength: classifier-free guidance for encoder-decoder summarizers.

A model trained briefly learns a control weakly: given the controls, its next-token distribution
moves only a little from the one it has without them. Classifier-free guidance (Ho & Salimans 2022;
for language models Sanchez et al. 2023, "Stay on topic with classifier-free guidance") strengthens
that move at every decoding step::

    l = l_u + γ (l_c − l_u)

``l_c``: log-probabilities given the input with the controls (what ``generate`` computes anyway);
``l_u``: log-probabilities given the same document with the controls removed, each variant's
:meth:`~variants.base.Variant.unconditional` input. γ = 1 is plain generation; γ > 1 pushes the
output further in the direction the controls move it. Training drops the controls from a share of
its examples (``--control-dropout``), so the control-free input is one the model knows.

transformers' :class:`~transformers.UnbatchedClassifierFreeGuidanceLogitsProcessor` does this for
decoder-only models, the unconditional prompt re-run with its own cache. :class:`EncoderDecoderGuidance`
adds the encoder side: it encodes the unconditional inputs once (with any extra model inputs: TF-IDF
scores, guidance ids, topic ids), runs the decoder on the same decoder tokens as ``generate`` with its
own ``past_key_values``, and follows beam search's reordering of the beams (below).

Served, the two passes are one (:meth:`EncoderDecoderGuidance.alongside`): each decoding step runs the
decoder once over ``generate``'s rows and their control-free twins. A step of a small model on a CPU
waits on reading its weights, not on the rows it multiplies, so twice the rows cost far less than a
second pass (``benchmarks/guidance.py`` times both).

The guidance reads nothing but the model's two distributions: no judge (the focus classifier), no
topic space (the STAS scorer), no reranking. ``tests/test_guidance.py`` checks that it imports neither.
"""

from __future__ import annotations

import contextlib
import copy
import math
from typing import Any

import torch
from torch import nn
from transformers import UnbatchedClassifierFreeGuidanceLogitsProcessor
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput
from transformers.utils import ModelOutput

GUIDANCE_RANGE = (1.0, 10.0)
# Tokens per row whose unconditional logits are computed: the conditional distribution's most likely.
# The mixture is renormalized, so the unconditional normalizer cancels and only these logits are
# needed; the language-model head then costs K x d instead of vocabulary x d per row (most of a small
# model's decoding step: 30k x 384 for the MiniLM base). Tokens outside them get no guided score:
# guidance re-ranks what the controlled model finds plausible rather than promoting tokens it does not.
CANDIDATES = 256


def check_guidance(value: Any) -> float:
    """γ as a float in :data:`GUIDANCE_RANGE`, or a ``ValueError`` naming the bad value and the range.

    γ < 1 is refused: between 0 and 1 guidance weakens the controls, which the evaluation's shuffled
    and ignored-control rows already measure, and at 0 it would drop the masks other processors set
    (a forced end of sequence). Above 10 the mixture is dominated by the difference of two nearly equal
    distributions: noise, not control."""
    low, high = GUIDANCE_RANGE
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ValueError(
            f"guidance (control strength γ) must be a number from {low:g} (plain generation) to "
            f"{high:g}, got {value!r}"
        )
    return float(value)


def expand_rows(value: Any, times: int) -> Any:
    """Every tensor of an encoder output (a ModelOutput or a tensor) repeated ``times`` times along
    the batch, each row's copies together, as ``generate`` expands its own for beams."""
    if times == 1 or value is None:
        return value
    if isinstance(value, torch.Tensor):
        return value.repeat_interleave(times, dim=0)
    for key in list(value.keys()):
        if isinstance(value[key], torch.Tensor):
            value[key] = value[key].repeat_interleave(times, dim=0)
    return value


def parent_rows(sequences: torch.Tensor, previous: torch.Tensor, group: int) -> torch.Tensor | None:
    """Which row of the previous step each row continues: beam search keeps the best continuations,
    so row r's tokens but the last are some row's tokens of the previous step, in the same example's
    group of ``group`` beams. Rows with equal prefixes have equal caches, so the first match serves.
    ``None`` when some row has no parent (then the caller recomputes from scratch)."""
    n, length = previous.shape
    current = sequences[:, :length].view(n // group, group, 1, length)  # (B, k, 1, t)
    before = previous.view(n // group, 1, group, length)  # (B, 1, k, t)
    same = (current == before).all(-1)  # (B, k, k): row i continues row j
    if not bool(same.any(-1).all()):
        return None
    first = same.int().argmax(-1)  # (B, k)
    offsets = torch.arange(0, n, group, device=sequences.device)[:, None]
    return (offsets + first).reshape(-1)


class CandidateHead(nn.Module):
    """Stands in for a language-model head (a Linear) during the unconditional pass: each row's logits
    for its candidate tokens only, -inf for every other token, in the head's full output shape."""

    def __init__(self, head: nn.Linear, candidates: torch.Tensor):
        super().__init__()
        self.head, self.candidates = head, candidates  # candidates: (rows, K) token ids

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        weight = self.head.weight[self.candidates]  # (N, K, d)
        logits = torch.einsum("nsd,nkd->nsk", hidden, weight.to(hidden.dtype))  # (N, S, K)
        if self.head.bias is not None:
            logits = logits + self.head.bias[self.candidates][:, None, :]
        out = hidden.new_full((*hidden.shape[:2], self.head.out_features), -math.inf)  # (N, S, V)
        return out.scatter(2, self.candidates[:, None, :].expand(-1, hidden.shape[1], -1), logits)


class SplitHead(nn.Module):
    """Stands in for the LM head during a forward pass of ``generate``'s rows and their control-free
    twins (:meth:`EncoderDecoderGuidance.alongside`): the first ``rows`` rows' logits as the head
    computes them; the twins' hidden states kept (:attr:`twins`) until the processors have chosen the
    candidates, whose logits are then all the twins need (:class:`CandidateHead`)."""

    def __init__(self, head: nn.Linear, rows: int):
        super().__init__()
        self.head, self.rows, self.twins = head, rows, None

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        self.twins = hidden[self.rows :]
        return self.head(hidden[: self.rows])


def head_owner(model) -> nn.Module | None:
    """The module that holds ``model``'s LM head as ``lm_head``, when the unconditional side may have only
    its candidates scored: the head is a Linear layer (a subclass counts: generation computes it with
    :class:`variants.seq2seq.LMHead`, whose weight is the Linear's) and the model does not post-process
    its logits over the whole vocabulary (TDSum's RwGen). ``None`` otherwise (an int8 copy's head,
    RwGen): every logit is needed. Found once per processor, not at every step (it walks the modules)."""
    head = model.get_output_embeddings()
    if not isinstance(head, nn.Linear) or getattr(model.config, "rwgen_lambda", 0):
        return None
    return next((m for m in model.modules() if m._modules.get("lm_head") is head), None)


@contextlib.contextmanager
def head_replaced(owner: nn.Module | None, replacement: nn.Module | None):
    """``owner``'s LM head is ``replacement`` while inside; nothing changes when either is ``None``."""
    if owner is None or replacement is None:
        yield
        return
    head, owner.lm_head = owner.lm_head, replacement
    try:
        yield
    finally:
        owner.lm_head = head


def pad_to(tensor: torch.Tensor, size: tuple[int, ...]) -> torch.Tensor:
    """``tensor`` zero-padded at the end of every dimension but the first to ``size``."""
    pads = []
    for have, want in reversed(list(zip(tensor.shape[1:], size))):
        pads += [0, want - have]
    return torch.nn.functional.pad(tensor, pads) if any(pads) else tensor


def stack_pair(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """Two batches of the same kind stacked, each zero-padded to the larger size in every other
    dimension: a source length, a guidance length. Zero is padding for a mask, so every position
    added is one no attention reads (BART's source attention, GSum's guidance, TDSum's TF-IDF
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
    :class:`variants.seq2seq.BeamSearchCache` only the self-attention cache moves (an example's beams
    share their encoder states)."""

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self.self_attention_cache.reorder_cache(torch.cat([beam_idx, beam_idx + len(beam_idx)]))


def takes_own_cache(model) -> bool:
    """Whether ``generate`` may be given SteerSum's cache (:class:`variants.seq2seq.BeamSearchCache`,
    :class:`PairedCache`): an encoder-decoder model that peft does not wrap. (peft's unmerged models,
    which the Space never serves, keep transformers' own: given a cache, one with trainable token rows
    wrote nothing.)"""
    return model.config.is_encoder_decoder and not hasattr(model, "peft_config")


# What ``generate`` hands a decoding step that the decoder reads; its encoder inputs (``input_ids``,
# TF-IDF scores, guidance ids, topic ids) are already in ``encoder_outputs`` and are not passed twice.
DECODER_INPUTS = (
    "decoder_attention_mask",
    "use_cache",
    "cache_position",
    "return_dict",
    "output_attentions",
    "output_hidden_states",
)


class EncoderDecoderGuidance(UnbatchedClassifierFreeGuidanceLogitsProcessor):
    """Classifier-free guidance for an encoder-decoder ``model``, as a logits processor for ``generate``.

    ``unconditional``: the control-free encoder inputs, one row per example of the batch
    (``input_ids``, ``attention_mask`` and any extra encoder input such as ``tfidf``,
    ``guidance_input_ids``, ``topic_ids``); or give ``encoder_outputs`` (and ``attention_mask``)
    already computed, e.g. a persona model's article states without the reader. With beams, each
    example's rows are expanded as ``generate`` expands its own.

    Beam search reorders the beams after each step and tells only its own cache (``reorder_cache``);
    a logits processor sees the reordered token sequences. Each row's tokens but the last are those of
    the row it continues (:func:`parent_rows`), so the unconditional cache is reordered to match.
    ``use_cache=False`` re-runs the decoder on the whole prefix at each step instead (the reference
    the cached path is tested against, and slower: ``benchmarks/guidance.py``). ``candidates``: how
    many of each row's most likely conditional tokens get a guided score (:data:`CANDIDATES`; None:
    every token, the whole LM head run twice).

    Inside :meth:`alongside` the unconditional rows are decoded in ``generate``'s own forward pass
    instead, with ``generate`` given :class:`PairedCache`: the same scores, one pass.
    """

    def __init__(
        self,
        model,
        guidance_scale: float,
        unconditional: dict[str, torch.Tensor] | None = None,
        encoder_outputs: Any = None,
        attention_mask: torch.Tensor | None = None,
        use_cache: bool = True,
        candidates: int | None = CANDIDATES,
    ):
        if unconditional is None and encoder_outputs is None:
            raise ValueError("EncoderDecoderGuidance needs the unconditional inputs or their encoder_outputs")
        super().__init__(check_guidance(guidance_scale), model, use_cache=use_cache)
        self.inputs = dict(unconditional or {})
        self.encoder_outputs = encoder_outputs
        self.attention_mask = attention_mask if attention_mask is not None else self.inputs.get("attention_mask")
        self.cache: EncoderDecoderCache | None = None
        self.previous: torch.Tensor | None = None  # the decoder tokens the cache holds
        self.group, self.encoded = 1, False
        self.candidates = candidates
        self.head_owner = head_owner(model)  # None: the unconditional side needs every logit
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

    def encode(self, rows: int) -> None:
        """The unconditional encoder outputs, once, expanded to the ``rows`` that ``generate`` decodes."""
        if self.encoder_outputs is None:
            self.encoder_outputs = self.model.get_encoder()(**self.inputs, return_dict=True)
        if not isinstance(self.encoder_outputs, (BaseModelOutput, dict)):
            self.encoder_outputs = BaseModelOutput(last_hidden_state=self.encoder_outputs)
        batch = self.encoder_outputs["last_hidden_state"].shape[0]
        if rows % batch:
            raise ValueError(f"guidance was given {batch} unconditional inputs for {rows} decoded rows")
        self.group = rows // batch
        self.encoder_outputs = expand_rows(self.encoder_outputs, self.group)
        self.attention_mask = expand_rows(self.attention_mask, self.group)
        self.encoded = True

    def get_unconditional_logits(
        self, input_ids: torch.Tensor, candidates: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Next-token logits ``(rows, vocab)`` of the unconditional input after the decoder tokens
        ``input_ids``; with ``candidates`` (``(rows, K)`` token ids) only theirs, -inf elsewhere."""
        if self.paired_hidden is not None:  # decoded beside generate's own rows (alongside()): the head is left
            hidden, self.paired_hidden = self.paired_hidden, None
            head = self.model.get_output_embeddings()
            logits = (head if candidates is None else CandidateHead(head, candidates))(hidden)[:, -1, :]
            bias = getattr(self.model, "final_logits_bias", None)  # BART's, added after its head
            return logits if bias is None else logits + bias
        if self.paired_logits is not None:  # every logit (a model that post-processes them over the vocabulary)
            logits, self.paired_logits = self.paired_logits, None
            return logits
        if not self.encoded:
            self.encode(input_ids.shape[0])
        step = input_ids
        if not self.unconditional_context["use_cache"]:
            cache = None
        elif (
            self.previous is not None
            and self.previous.shape[1] == input_ids.shape[1] - 1
            and (parents := parent_rows(input_ids, self.previous, self.group)) is not None
        ):
            if not torch.equal(parents, torch.arange(len(parents), device=parents.device)):
                # Only the self-attention cache: an example's beams share one encoder row and a parent is
                # in its child's group, so the cross-attention keys and values are already right, and
                # reordering them would copy rows x source length x d_model per layer at every step.
                self.cache.self_attention_cache.reorder_cache(parents)
            cache, step = self.cache, input_ids[:, -1:]
        else:  # the first step, or a sequence the cache cannot follow: start again from the whole prefix
            cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        owner = self.head_owner
        plain = owner is None or candidates is None
        with head_replaced(owner, None if plain else CandidateHead(owner.lm_head, candidates)):
            out = self.model(
                encoder_outputs=self.encoder_outputs,
                attention_mask=self.attention_mask,
                decoder_input_ids=step,
                past_key_values=cache,
                use_cache=cache is not None,
                return_dict=True,
            )
        self.cache, self.previous = cache, input_ids
        return out.logits[:, -1, :]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        # As UnbatchedClassifierFreeGuidanceLogitsProcessor.__call__, in float32, with two changes. A
        # token another processor ruled out (-inf: end of sequence before min_new_tokens, anything but
        # it at max_length) stays ruled out. And the mixture is normalized again, p ∝ p_u^(1-γ) p_c^γ
        # (Ho & Salimans' guided distribution): beam search adds these scores up, and unnormalized they
        # would rank hypotheses by more than their tokens (a forced end of sequence would score
        # (1 - γ) l_u instead of 0).
        conditional = torch.nn.functional.log_softmax(scores.float(), dim=-1)
        candidates = None
        if self.candidates is not None and self.candidates < scores.shape[-1]:
            candidates = conditional.topk(self.candidates, dim=-1).indices  # (rows, K)
        unconditional = torch.nn.functional.log_softmax(
            self.get_unconditional_logits(input_ids, candidates).float(), dim=-1
        )
        if candidates is not None:
            # The unconditional scores are normalized over the candidates only: put them on the whole
            # vocabulary's scale by giving the candidates the mass they have under the conditional; every
            # other token (-inf here) keeps its conditional score below (no guidance there). Renormalized
            # over the candidates alone, each beam's scores would rise by its own -log(candidate mass), and
            # beam search would rank hypotheses differently even where the controls change nothing.
            unconditional = unconditional + torch.logsumexp(conditional.gather(1, candidates), dim=-1, keepdim=True)
        mixed = unconditional + self.guidance_scale * (conditional - unconditional)
        mixed = torch.where(torch.isfinite(unconditional), mixed, conditional)
        mixed = torch.where(torch.isneginf(conditional), conditional, mixed)
        # Normalized, then given back the scale of ``scores``: beam search adds log-probabilities taken
        # before other processors ruled tokens out (no repeated n-grams), so each row keeps its own
        # -log(mass left) as in plain generation; renormalized alone, rows with much ruled out would rise
        # and the beams would be ranked differently even at γ = 1.
        offset = torch.logsumexp(scores.float(), dim=-1, keepdim=True)
        return (torch.nn.functional.log_softmax(mixed, dim=-1) + offset).to(scores.dtype)
