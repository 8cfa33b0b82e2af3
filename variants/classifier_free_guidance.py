"""Classifier-free guidance for encoder-decoder models (Ho & Salimans 2022; for language models Sanchez et
al. 2023, "Stay on topic with classifier-free guidance"), and the control strength γ it applies.

At every step the next-token log-probabilities given the controls, ``l_c``, move away from those given the
same document without them, ``l_u``: ``l = l_u + γ (l_c − l_u)``; γ = 1 is plain generation.

transformers' UnbatchedClassifierFreeGuidanceLogitsProcessor does this for decoder-only models, the
unconditional prompt re-run with its own cache. :class:`ClassifierFreeGuidance` adds the encoder side: it
encodes the unconditional inputs once (with any extra model inputs: TF-IDF scores, GSum's signal ids, topic
ids), runs the decoder on the same decoder tokens as ``generate`` with its own ``past_key_values``, and
follows beam search's reordering of the beams.

Ships beside :mod:`variants.decoding` in an exported repo's ``custom_generate/``: torch, transformers and the
standard library only.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import torch
from torch import nn
from transformers import UnbatchedClassifierFreeGuidanceLogitsProcessor
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput

STRENGTH_RANGE = (1.0, 10.0)
STRENGTH_FIELD = "control_strength"  # generation_config.json and steersum.json: the model's default γ
OLD_STRENGTH_FIELDS = ("control_guidance",)  # the same, as older folders name it
# Tokens per row whose unconditional logits are computed: the conditional distribution's most likely.
# The mixture is renormalized, so the unconditional normalizer cancels and only these logits are
# needed; the language-model head then costs K x d instead of vocabulary x d per row (most of a small
# model's decoding step: 30k x 384 for the MiniLM base). Tokens outside them get no guided score:
# guidance re-ranks what the controlled model finds plausible rather than promoting tokens it does not.
CANDIDATES = 256


def check_strength(value: Any) -> float:
    """γ as a float in :data:`STRENGTH_RANGE`, or a ``ValueError`` naming the bad value and the range.

    γ < 1 is refused: between 0 and 1 guidance weakens the controls, which the evaluation's shuffled
    and ignored-control rows already measure, and at 0 it would drop the masks other processors set
    (a forced end of sequence). Above 10 the mixture is dominated by the difference of two nearly equal
    distributions: noise, not control."""
    low, high = STRENGTH_RANGE
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ValueError(
            f"control strength (guidance_scale, γ) must be a number from {low:g} (plain generation) to "
            f"{high:g}, got {value!r}"
        )
    return float(value)


def read_strength(config: Any, default: Any = None) -> Any:
    """The control strength a generation config or a record (a dict) holds, under its name or an older one."""
    get = config.get if isinstance(config, dict) else lambda name: getattr(config, name, None)
    for name in (STRENGTH_FIELD, *OLD_STRENGTH_FIELDS):
        if get(name) is not None:
            return get(name)
    return default


def default_strength(model) -> float:
    """A model's default control strength: its generation config's, else 1 (plain generation)."""
    return check_strength(read_strength(getattr(model, "generation_config", None), 1.0))


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


def head_owner(model) -> nn.Module | None:
    """The module that holds ``model``'s LM head as ``lm_head``, when the unconditional side may have only
    its candidates scored: the head is a Linear layer (a subclass counts: generation computes it with
    :class:`variants.speedups.LMHead`, whose weight is the Linear's) and the model does not post-process
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


class ClassifierFreeGuidance(UnbatchedClassifierFreeGuidanceLogitsProcessor):
    """Classifier-free guidance for an encoder-decoder ``model``, as a logits processor for ``generate``.

    ``unconditional``: the control-free encoder inputs, one row per example of the batch
    (``input_ids``, ``attention_mask`` and any extra encoder input such as ``tfidf``,
    ``signal_input_ids``, ``topic_ids``); or give ``encoder_outputs`` (and ``attention_mask``)
    already computed, e.g. a persona model's article states without the reader. With beams, each
    example's rows are expanded as ``generate`` expands its own.

    Beam search reorders the beams after each step and tells only its own cache (``reorder_cache``);
    a logits processor sees the reordered token sequences. Each row's tokens but the last are those of
    the row it continues (:func:`parent_rows`), so the unconditional cache is reordered to match.
    ``use_cache=False`` re-runs the decoder on the whole prefix at each step instead (the reference
    the cached path is tested against, and slower: ``benchmarks/guidance.py``). ``candidates``: how
    many of each row's most likely conditional tokens get a guided score (:data:`CANDIDATES`; None:
    every token, the whole LM head run twice).

    Served, the unconditional rows are decoded in ``generate``'s own forward pass instead
    (:class:`variants.speedups.PairedGuidance`): the same scores, one pass.
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
            raise ValueError("classifier-free guidance needs the unconditional inputs or their encoder_outputs")
        super().__init__(check_strength(guidance_scale), model, use_cache=use_cache)
        self.inputs = dict(unconditional or {})
        self.encoder_outputs = encoder_outputs
        self.attention_mask = attention_mask if attention_mask is not None else self.inputs.get("attention_mask")
        self.cache: EncoderDecoderCache | None = None
        self.previous: torch.Tensor | None = None  # the decoder tokens the cache holds
        self.group, self.encoded = 1, False
        self.candidates = candidates
        self.head_owner = head_owner(model)  # None: the unconditional side needs every logit

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
        logits = self.get_unconditional_logits(input_ids, candidates).float()
        if candidates is not None and self.head_owner is None:
            # A head the candidates cannot stand in for (peft's wrapper of a head with trainable tokens, RwGen)
            # computed every logit: only the candidates' count, so that a model gets the same guided scores
            # whichever way its head is computed (an adapter repo's PeftModel as the Space's merged copy).
            # Through a head they stand in for (CandidateHead), every other logit is -inf already.
            logits = torch.full_like(logits, -math.inf).scatter(1, candidates, logits.gather(1, candidates))
        unconditional = torch.nn.functional.log_softmax(logits, dim=-1)
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
