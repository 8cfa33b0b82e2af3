"""TDSum and its TF-IDF relatives (Takeshita et al., "ROUGE-K: Do Your Summaries Have Keywords?", Sec. 4):
BART guided by the TF-IDF scores of its source tokens, four ways that combine freely (see the config):

* **TDSum** — a TF-IDF encoder (two linear layers) turns each source token's score into a "word
  importance feature", and an added cross-attention in every decoder layer reads them.
* **RwEnc** — the scores are added to the self-attention logits of chosen encoder layers.
* **RwGen** — the next-token distribution is mixed with the source's TF-IDF distribution.
* **TDMTL** — a head predicts the scores from the encoder's output; its MSE joins the loss.

The scores come in as ``tfidf``, a float tensor aligned to ``input_ids`` (``(batch, source_len)``; a
wider tensor is cut to the source length, so per-example lists padded to one fixed width stack).
Self-contained (torch + transformers only) so an exported repo runs with ``trust_remote_code=True``.
"""

from dataclasses import dataclass

import torch
from torch import nn
from transformers import BartForConditionalGeneration, BartModel
from transformers import initialization as init
from transformers.modeling_outputs import BaseModelOutput
from transformers.models.bart.modeling_bart import BartDecoder, BartDecoderLayer, BartEncoder, BartEncoderLayer

from .configuration_tdsum import TDSumConfig
from .tfidf_layers import TDSumTfidfAttention, TDSumTfidfEncoder, add_key_bias


@dataclass
class TDSumEncoderOutput(BaseModelOutput):
    """BART's encoder output plus what the TF-IDF parts derive from the source once per input.

    Args:
        tfidf: `(batch, source_len)` the scores given, zero on padding.
        tfidf_states: `(batch, source_len, d_model)` the TF-IDF encoder's output (TDSum).
        tfidf_key_values: `(batch, decoder_layers, 2, heads, source_len, head_dim)` the added attention's
            keys and values, computed once per source (as BART caches its cross-attention's).
        tfidf_predicted: `(batch, source_len)` the TDMTL head's predicted scores.
        tfidf_distribution: `(batch, vocab_size)` RwGen's ``T``: each vocabulary token's highest score in
            the source, normalized to sum 1 (all zero when the source has no scored token).
    """

    tfidf: torch.FloatTensor | None = None
    tfidf_states: torch.FloatTensor | None = None
    tfidf_key_values: torch.FloatTensor | None = None
    tfidf_predicted: torch.FloatTensor | None = None
    tfidf_distribution: torch.FloatTensor | None = None


class TDSumEncoderLayer(BartEncoderLayer):
    """A BART encoder layer; in the layers listed in ``config.rwenc_layers`` the keys' TF-IDF scores
    are added to the self-attention logits (RwEnc: "higher values for the important words")."""

    def __init__(self, config: TDSumConfig, layer_idx: int):
        super().__init__(config, layer_idx)
        self.reweighted = layer_idx in config.rwenc_layers

    def forward(self, hidden_states, attention_mask, tfidf=None, **kwargs):
        if self.reweighted:
            attention_mask = add_key_bias(attention_mask, tfidf, hidden_states.dtype)
        return super().forward(hidden_states, attention_mask, **kwargs)


class TDSumDecoderLayer(BartDecoderLayer):
    """Self-attention → TF-IDF attention → source attention → feed-forward (the order of GSum, Dou et
    al. 2021, which TDSum follows). The TF-IDF block adds to the residual stream and leaves the layer
    norm to the source attention after it, so a zero contribution leaves BART's computation as it was."""

    def __init__(self, config: TDSumConfig, layer_idx: int):
        super().__init__(config, layer_idx)
        self.tfidf_attn = TDSumTfidfAttention(config, layer_idx) if config.tfidf_attention else None

    # Adapted from transformers.models.bart.modeling_bart.BartDecoderLayer.forward (TF-IDF block added)
    def forward(
        self,
        hidden_states,
        attention_mask=None,
        encoder_hidden_states=None,
        encoder_attention_mask=None,
        past_key_values=None,
        use_cache=True,
        tfidf_key_values=None,
        **kwargs,
    ):
        residual = hidden_states
        # Self Attention
        hidden_states, _ = self.self_attn(
            hidden_states, past_key_values=past_key_values, attention_mask=attention_mask, **kwargs
        )
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        hidden_states = self.self_attn_layer_norm(residual + hidden_states)

        # TF-IDF Attention Block (TDSum)
        if self.tfidf_attn is not None:
            if tfidf_key_values is None:
                raise ValueError(
                    "TDSum's decoder needs tfidf_key_values: run the model with `tfidf` or with "
                    "encoder_outputs from its encoder"
                )
            tfidf_output = self.tfidf_attn(
                hidden_states, tfidf_key_values[:, self.tfidf_attn.layer_idx], encoder_attention_mask
            )
            hidden_states = hidden_states + nn.functional.dropout(tfidf_output, p=self.dropout, training=self.training)

        # Cross-Attention Block
        if encoder_hidden_states is not None:
            residual = hidden_states
            hidden_states, _ = self.encoder_attn(
                hidden_states,
                key_value_states=encoder_hidden_states,
                attention_mask=encoder_attention_mask,
                past_key_values=past_key_values,
                **kwargs,
            )
            hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
            hidden_states = self.encoder_attn_layer_norm(residual + hidden_states)

        # Fully Connected
        residual = hidden_states
        hidden_states = self.activation_fn(self.fc1(hidden_states))
        hidden_states = nn.functional.dropout(hidden_states, p=self.activation_dropout, training=self.training)
        hidden_states = self.fc2(hidden_states)
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        return self.final_layer_norm(residual + hidden_states)


class TDSumEncoder(BartEncoder):
    """BART's encoder (RwEnc in the chosen layers) plus the TF-IDF encoder (TDSum), the TDMTL head and
    RwGen's vocabulary distribution, all computed once per source.

    Without RwEnc the source's encoding reads the source tokens only, not their scores, so two inputs
    with the same source and different scores (a steered input and its control-free twin) can share
    it: give it as ``source_states`` and only the score-derived parts are computed."""

    def __init__(self, config: TDSumConfig):
        super().__init__(config)
        self.layers = nn.ModuleList([TDSumEncoderLayer(config, layer_idx=i) for i in range(config.encoder_layers)])
        self.tfidf_encoder = TDSumTfidfEncoder(config) if config.tfidf_attention else None
        self.tfidf_head = nn.Linear(config.d_model, 1) if config.tdmtl_lambda > 0 else None
        self.post_init()

    @property
    def encodes_source_alone(self) -> bool:
        """Whether the source's encoding reads no TF-IDF score (no RwEnc layer), so it may be shared."""
        return not self.config.rwenc_layers

    def forward(
        self, input_ids=None, attention_mask=None, inputs_embeds=None, tfidf=None, source_states=None, **kwargs
    ):
        if source_states is not None and not self.encodes_source_alone:
            raise ValueError(
                f"source_states: this model's encoding of the source reads the TF-IDF scores "
                f"(RwEnc layers {self.config.rwenc_layers}), so it cannot be shared between inputs"
            )
        if inputs_embeds is None:
            if input_ids is None:
                raise ValueError("You must specify input_ids or inputs_embeds")
            inputs_embeds = self.embed_tokens(input_ids)  # (B, T, d), scaled like BART's
        tfidf = self.check_tfidf(tfidf, inputs_embeds.shape[:2], attention_mask)
        kwargs["return_dict"] = True
        reweighted = {"tfidf": tfidf} if self.config.rwenc_layers else {}
        out = (
            BaseModelOutput(last_hidden_state=source_states)
            if source_states is not None
            else super().forward(inputs_embeds=inputs_embeds, attention_mask=attention_mask, **reweighted, **kwargs)
        )
        result = TDSumEncoderOutput(
            last_hidden_state=out.last_hidden_state,
            hidden_states=out.hidden_states,
            attentions=out.attentions,
            tfidf=tfidf,
        )
        if self.tfidf_encoder is not None:
            result["tfidf_states"] = self.tfidf_encoder(inputs_embeds, tfidf)
        if self.tfidf_head is not None:
            result["tfidf_predicted"] = self.tfidf_head(out.last_hidden_state).squeeze(-1)  # (B, T)
        if self.config.rwgen_lambda > 0:
            if input_ids is None:
                raise ValueError("RwGen needs input_ids (its distribution is over the source's tokens)")
            result["tfidf_distribution"] = self.tfidf_distribution(input_ids, tfidf)
        return result

    def check_tfidf(self, tfidf, shape, attention_mask):
        """Scores cut to the source length and zeroed on padding; required unless only TDMTL is on."""
        if tfidf is None:
            if self.config.uses_tfidf_input:
                raise ValueError(
                    f"this TDSum model needs `tfidf`: per-token TF-IDF scores aligned to input_ids, "
                    f"shape {tuple(shape)}"
                )
            return None
        if tfidf.dim() != 2 or tfidf.shape[0] != shape[0] or tfidf.shape[1] < shape[1]:
            raise ValueError(f"tfidf must have shape {tuple(shape)} (or be wider), got {tuple(tfidf.shape)}")
        tfidf = tfidf[:, : shape[1]].float()
        return tfidf * attention_mask.to(tfidf.dtype) if attention_mask is not None else tfidf

    def tfidf_distribution(self, input_ids: torch.Tensor, tfidf: torch.Tensor) -> torch.Tensor:
        """RwGen's ``T`` over the vocabulary: a token's highest score in the source, normalized to sum 1."""
        scores = tfidf.new_zeros(input_ids.shape[0], self.embed_tokens.num_embeddings)  # (B, V)
        scores = scores.scatter_reduce(1, input_ids, tfidf, reduce="amax")
        return scores / scores.sum(-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)

    def _init_weights(self, module):
        super()._init_weights(module)  # Linear: normal(config.init_std), zero bias, as BART's own


class TDSumDecoder(BartDecoder):
    """BART's decoder whose layers carry the added TF-IDF attention."""

    def __init__(self, config: TDSumConfig):
        super().__init__(config)
        self.layers = nn.ModuleList([TDSumDecoderLayer(config, layer_idx=i) for i in range(config.decoder_layers)])
        self.post_init()

    def tfidf_key_values(self, tfidf_states: torch.Tensor) -> torch.Tensor:
        """Every layer's keys and values over the TF-IDF encoder output, ``(B, L, 2, H, T, hd)``."""
        return torch.stack([layer.tfidf_attn.key_values(tfidf_states) for layer in self.layers], dim=1)

    def _init_weights(self, module):
        # transformers dispatches to the nearest PreTrainedModel's _init_weights: this decoder's.
        if getattr(module, "is_tfidf_output", False):
            # Zero by default: a warm-started model starts as its base BART (config.tfidf_attention_init_std).
            if self.config.tfidf_attention_init_std > 0:
                init.normal_(module.weight, mean=0.0, std=self.config.tfidf_attention_init_std)
            else:
                init.zeros_(module.weight)
        else:
            super()._init_weights(module)


class TDSumModel(BartModel):
    config_class = TDSumConfig

    def __init__(self, config: TDSumConfig):
        super().__init__(config)
        self.encoder, self.decoder = TDSumEncoder(config), TDSumDecoder(config)
        self.encoder.embed_tokens = self.decoder.embed_tokens = self.shared
        self.post_init()

    def tfidf_encoder_outputs(
        self, input_ids=None, attention_mask=None, tfidf=None, encoder_outputs=None, inputs_embeds=None
    ) -> TDSumEncoderOutput:
        """The encoder's output, with the added attention's keys and values. They depend on the source
        only, so they are stored in ``encoder_outputs`` and reused at every generation step."""
        if encoder_outputs is None:
            encoder_outputs = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds, tfidf=tfidf
            )
        elif not isinstance(encoder_outputs, TDSumEncoderOutput):
            if self.config.uses_tfidf_input:
                raise ValueError("encoder_outputs must come from TDSum's own encoder (called with tfidf)")
            return encoder_outputs
        if self.config.tfidf_attention and encoder_outputs.tfidf_key_values is None:
            encoder_outputs["tfidf_key_values"] = self.decoder.tfidf_key_values(encoder_outputs.tfidf_states)
        return encoder_outputs

    def forward(
        self, input_ids=None, attention_mask=None, tfidf=None, encoder_outputs=None, inputs_embeds=None, **kwargs
    ):
        encoder_outputs = self.tfidf_encoder_outputs(input_ids, attention_mask, tfidf, encoder_outputs, inputs_embeds)
        key_values = getattr(encoder_outputs, "tfidf_key_values", None)
        return super().forward(
            input_ids=input_ids,
            attention_mask=attention_mask,
            encoder_outputs=encoder_outputs,
            tfidf_key_values=key_values,
            **kwargs,
        )


def reweighted_log_probs(logits: torch.Tensor, distribution: torch.Tensor, rwgen_lambda: float) -> torch.Tensor:
    """RwGen: ``log((1 - lambda) * softmax(logits) + lambda * T)``, the same ``T`` at every step. Log
    probabilities are valid logits (softmax gives the mixture back), so generate needs no change. A
    source without any scored token (``T`` all zero) keeps BART's distribution."""
    probs = logits.float().softmax(-1)  # (B, S, V)
    target = distribution[:, None, :].float()  # (B, 1, V)
    mixed = torch.where(target.sum(-1, keepdim=True) > 0, (1 - rwgen_lambda) * probs + rwgen_lambda * target, probs)
    return mixed.clamp_min(torch.finfo(mixed.dtype).tiny).log().to(logits.dtype)


class TDSumForConditionalGeneration(BartForConditionalGeneration):
    """``BartForConditionalGeneration`` that takes ``tfidf`` (``(batch, source_len)`` floats aligned to
    ``input_ids``) in ``forward`` and ``generate``. With RwGen on, ``logits`` are the re-weighted log
    probabilities; the summarization loss stays BART's own (the paper fine-tunes BART and re-weights
    its distribution when generating). With TDMTL on, the loss is ``(1 - lambda) L_sum + lambda MSE``.
    Loading a plain BART checkpoint reports only the TF-IDF parts as new weights.

    >>> out = model.generate(**tokenizer(["..."], return_tensors="pt"), tfidf=scores)
    """

    config_class = TDSumConfig

    def __init__(self, config: TDSumConfig):
        super().__init__(config)
        self.model = TDSumModel(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, tfidf=None, encoder_outputs=None, labels=None, **kwargs):
        encoder_outputs = self.model.tfidf_encoder_outputs(
            input_ids, attention_mask, tfidf, encoder_outputs, kwargs.pop("inputs_embeds", None)
        )
        out = super().forward(
            input_ids=input_ids,
            attention_mask=attention_mask,
            encoder_outputs=encoder_outputs,
            labels=labels,
            **kwargs,
        )
        if self.config.rwgen_lambda > 0:
            out.logits = reweighted_log_probs(out.logits, encoder_outputs.tfidf_distribution, self.config.rwgen_lambda)
        if labels is not None and self.config.tdmtl_lambda > 0:
            out.loss = (1 - self.config.tdmtl_lambda) * out.loss + self.config.tdmtl_lambda * self.tfidf_loss(
                encoder_outputs, attention_mask
            )
        return out

    @torch.no_grad()
    def copy_source_attention_into_tfidf_attention(self) -> None:
        """Warm start for a model loaded from a plain BART checkpoint: each decoder layer's added
        attention takes its query, key and value projections from the source attention beside it, so
        from the first step it attends the way a pretrained decoder does, over the scored embeddings.
        The output projection is left as initialized (zero by default), so the model still starts as
        its BART; its gradient is the attention's output, which is no longer near zero."""
        for layer in self.model.decoder.layers:
            for name in ("q_proj", "k_proj", "v_proj"):
                source, added = getattr(layer.encoder_attn, name), getattr(layer.tfidf_attn, name)
                added.weight.copy_(source.weight)
                if added.bias is not None:
                    added.bias.copy_(source.bias)

    @staticmethod
    def tfidf_loss(encoder_outputs: TDSumEncoderOutput, attention_mask: torch.Tensor | None) -> torch.Tensor:
        """TDMTL's L_tfidf: mean squared error of the predicted scores over the real (unpadded) tokens."""
        target = getattr(encoder_outputs, "tfidf", None)
        if target is None:
            raise ValueError("TDMTL's loss needs `tfidf` (the scores to predict)")
        mask = torch.ones_like(target) if attention_mask is None else attention_mask.to(target.dtype)
        error = (encoder_outputs.tfidf_predicted.float() - target) ** 2 * mask
        return error.sum() / mask.sum().clamp_min(1.0)
