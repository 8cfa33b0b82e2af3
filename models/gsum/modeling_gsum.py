"""GSum (Dou et al., 2021, "GSum: a general framework for guided neural abstractive summarization") as
EntSUM adapts it to entity-centric summarization (Maddela et al., 2022, Sec. 4.1.3-4.1.4).

BART with a second input, the signal (GSum's "guidance signal": the entity's name, or the source
sentences that mention it):

* **encoder**: the source and the signal go through the same embeddings and the same layers, except
  the top ``config.signal_top_layers`` (GSum: 1), which each input has of its own;
* **decoder layer**: self-attention -> cross-attention over the signal -> cross-attention over the
  source -> feed-forward, so the decoder "first attends to the guidance signal to select the part of
  the document to focus on and then attends to the document" (EntSUM Sec. 4.1.3).

Warm start (:meth:`GSumForConditionalGeneration.from_bart`): every BART weight loads as is; the signal
encoder's own top layers and each decoder layer's signal attention start as copies of their source
counterparts. Only the dynamic cache is supported in ``generate`` (the default).

Self-contained (torch + transformers only) so an exported repo runs with ``trust_remote_code=True``.
"""

import os
from dataclasses import dataclass

import torch
from torch import nn
from transformers import BartForConditionalGeneration, BartModel
from transformers.cache_utils import DynamicCache, DynamicLayer, EncoderDecoderCache
from transformers.masking_utils import create_bidirectional_mask
from transformers.modeling_outputs import BaseModelOutput
from transformers.models.bart.modeling_bart import (
    BartAttention,
    BartDecoder,
    BartDecoderLayer,
    BartEncoder,
    BartEncoderLayer,
)

from .configuration_gsum import GSumConfig

# Weight names from before the second input was called the signal (to keep "guidance" for classifier-free
# guidance alone), as patterns to their new names: a checkpoint or peft adapter saved then still loads.
# from_pretrained hands them to transformers as its key_mapping; peft reads them from the model's
# _checkpoint_conversion_mapping.
OLD_WEIGHT_NAMES = {
    "guidance_attn_layer_norm": "signal_attn_layer_norm",
    "guidance_attn": "signal_attn",
    "guidance_layers": "signal_layers",
}


@dataclass
class GSumEncoderOutput(BaseModelOutput):
    """BART's encoder output (``last_hidden_state``: the source) plus the signal's encoding and mask.

    ``generate`` keeps this object for the whole decoding and expands every tensor in it for beam
    search, so the signal travels with the source without any extra bookkeeping."""

    signal_last_hidden_state: torch.FloatTensor | None = None
    signal_attention_mask: torch.LongTensor | None = None


def trim_padding(input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Drop the columns that are padding in every row. SteerSum pads the signal to a fixed length (so a
    batch stacks like any other per-example input); the encoder need not run over that padding."""
    if (attention_mask.sum(dim=1) == 0).any():
        raise ValueError("signal_input_ids: a row has no signal token (all padding); give at least the entity's name")
    keep = int(attention_mask.any(dim=0).nonzero().max()) + 1
    return input_ids[:, :keep], attention_mask[:, :keep]


class GSumEncoder(BartEncoder):
    """One BART encoder for two inputs: shared embeddings and bottom layers, a top of its own for each.

    The source's encoding reads the source only, so two inputs with the same source and different
    signal (a summary guided by an entity and its control-free twin) can share it: give it as
    ``source_states`` and only the signal is encoded."""

    encodes_source_alone = True

    def __init__(self, config: GSumConfig):
        super().__init__(config)
        first_top = config.encoder_layers - config.signal_top_layers
        self.signal_layers = nn.ModuleList(
            [BartEncoderLayer(config, layer_idx=first_top + i) for i in range(config.signal_top_layers)]
        )

    def encode(self, input_ids, attention_mask, inputs_embeds, top_layers: nn.ModuleList) -> torch.Tensor:
        """``BartEncoder.forward`` with the top layers swapped (layer drop is not applied)."""
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)  # (B, T, d), scaled like BART's
        hidden = inputs_embeds + self.embed_positions(inputs_embeds[:, :, -1]).to(inputs_embeds.device)
        hidden = nn.functional.dropout(self.layernorm_embedding(hidden), p=self.dropout, training=self.training)
        mask = create_bidirectional_mask(
            config=self.config, inputs_embeds=inputs_embeds, attention_mask=attention_mask
        )
        shared = self.layers[: len(self.layers) - len(top_layers)]
        for layer in [*shared, *top_layers]:
            hidden = layer(hidden, mask)
        return hidden

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        signal_input_ids=None,
        signal_attention_mask=None,
        inputs_embeds=None,
        source_states=None,
        **kwargs,
    ) -> GSumEncoderOutput:
        if signal_input_ids is None:
            raise ValueError("GSum needs its signal: pass signal_input_ids (and optionally signal_attention_mask)")
        if signal_attention_mask is None:
            signal_attention_mask = (signal_input_ids != self.config.pad_token_id).long()
        signal_input_ids, signal_attention_mask = trim_padding(signal_input_ids, signal_attention_mask)
        top = len(self.signal_layers)
        if source_states is None:
            source_states = self.encode(
                input_ids, attention_mask, inputs_embeds, self.layers[len(self.layers) - top :]
            )
        signal = self.encode(signal_input_ids, signal_attention_mask, None, self.signal_layers)
        return GSumEncoderOutput(
            last_hidden_state=source_states,
            signal_last_hidden_state=signal,
            signal_attention_mask=signal_attention_mask,
        )


class GSumDecoderLayer(BartDecoderLayer):
    """``BartDecoderLayer`` with a signal cross-attention block between self-attention and the source's."""

    def __init__(self, config: GSumConfig, layer_idx: int | None = None):
        super().__init__(config, layer_idx)
        # Its keys and values are cached in the cross-attention cache after the source's: slot L + i.
        self.signal_attn = BartAttention(
            self.embed_dim,
            config.decoder_attention_heads,
            dropout=config.attention_dropout,
            is_decoder=True,
            config=config,
            layer_idx=config.decoder_layers + (layer_idx or 0),
        )
        self.signal_attn_layer_norm = nn.LayerNorm(self.embed_dim)

    def forward(
        self,
        hidden_states,
        attention_mask=None,
        encoder_hidden_states=None,
        encoder_attention_mask=None,
        past_key_values=None,
        use_cache=True,
        signal_hidden_states=None,
        signal_attention_mask=None,
        **kwargs,
    ) -> torch.Tensor:
        # Self Attention
        residual = hidden_states
        hidden_states, _ = self.self_attn(
            hidden_states, past_key_values=past_key_values, attention_mask=attention_mask, **kwargs
        )
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        hidden_states = self.self_attn_layer_norm(residual + hidden_states)

        # Signal Cross-Attention Block: first, what to look for (GSum)
        residual = hidden_states
        hidden_states, _ = self.signal_attn(
            hidden_states,
            key_value_states=signal_hidden_states,
            attention_mask=signal_attention_mask,
            past_key_values=past_key_values,
            **kwargs,
        )
        hidden_states = nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)
        hidden_states = self.signal_attn_layer_norm(residual + hidden_states)

        # Source Cross-Attention Block: then, the document
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
        hidden_states = nn.functional.dropout(self.fc2(hidden_states), p=self.dropout, training=self.training)
        return self.final_layer_norm(residual + hidden_states)


class GSumDecoder(BartDecoder):
    """``BartDecoder`` whose layers also read the signal (given to ``forward``, passed to each layer)."""

    def __init__(self, config: GSumConfig):
        super().__init__(config)
        self.layers = nn.ModuleList([GSumDecoderLayer(config, layer_idx=i) for i in range(config.decoder_layers)])

    def forward(
        self,
        input_ids=None,
        signal_hidden_states=None,
        signal_attention_mask=None,
        past_key_values=None,
        inputs_embeds=None,
        use_cache=None,
        **kwargs,
    ):
        if signal_hidden_states is None:
            raise ValueError("GSumDecoder needs signal_hidden_states (the signal's encoding)")
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)  # (B, t, d)
        use_cache = self.config.use_cache if use_cache is None else use_cache
        if use_cache and past_key_values is None:
            past_key_values = EncoderDecoderCache(DynamicCache(config=self.config), DynamicCache(config=self.config))
        if isinstance(past_key_values, EncoderDecoderCache):
            add_signal_slots(past_key_values, 2 * len(self.layers))
        signal_mask = create_bidirectional_mask(
            config=self.config,
            inputs_embeds=inputs_embeds,
            attention_mask=signal_attention_mask,
            encoder_hidden_states=signal_hidden_states,
        )
        # BartDecoder hands its extra keyword arguments to every layer.
        return super().forward(
            inputs_embeds=inputs_embeds,
            past_key_values=past_key_values,
            use_cache=use_cache,
            signal_hidden_states=signal_hidden_states,
            signal_attention_mask=signal_mask,
            **kwargs,
        )


def add_signal_slots(cache: EncoderDecoderCache, slots: int) -> None:
    """A cache built from the config has one cross-attention slot per layer; the signal attentions use
    slots L..2L-1 (see :class:`GSumDecoderLayer`), so a fixed-size one gets them appended."""
    cross = cache.cross_attention_cache
    if getattr(cross, "layer_class_to_replicate", None) is None:
        while len(cross.layers) < slots:
            cross.layers.append(DynamicLayer())


class GSumModel(BartModel):
    config_class = GSumConfig

    def __init__(self, config: GSumConfig):
        super().__init__(config)
        self.encoder = GSumEncoder(config)
        self.decoder = GSumDecoder(config)
        self.encoder.embed_tokens = self.decoder.embed_tokens = self.shared
        self.post_init()

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        signal_input_ids=None,
        signal_attention_mask=None,
        encoder_outputs=None,
        inputs_embeds=None,
        **kwargs,
    ):
        if encoder_outputs is None:
            encoder_outputs = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                inputs_embeds=inputs_embeds,
                signal_input_ids=signal_input_ids,
                signal_attention_mask=signal_attention_mask,
            )
        if getattr(encoder_outputs, "signal_last_hidden_state", None) is None:
            raise ValueError("GSum needs its signal: pass signal_input_ids, or encoder_outputs from GSumEncoder")
        return super().forward(
            input_ids=input_ids,
            attention_mask=attention_mask,
            encoder_outputs=encoder_outputs,
            signal_hidden_states=encoder_outputs.signal_last_hidden_state,
            signal_attention_mask=encoder_outputs.signal_attention_mask,
            **kwargs,
        )


class GSumForConditionalGeneration(BartForConditionalGeneration):
    """``BartForConditionalGeneration`` that takes ``signal_input_ids`` (and ``signal_attention_mask``;
    by default every non-pad token) in ``forward`` and ``generate``.

    >>> out = model.generate(**tokenizer(["..."], return_tensors="pt"),
    ...                      signal_input_ids=tokenizer(["Angela Merkel"], return_tensors="pt").input_ids)
    """

    config_class = GSumConfig
    _checkpoint_conversion_mapping = OLD_WEIGHT_NAMES

    def __init__(self, config: GSumConfig):
        super().__init__(config)
        self.model = GSumModel(config)
        self.post_init()

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        """``PreTrainedModel.from_pretrained`` that also reads weights saved under their old names
        (:data:`OLD_WEIGHT_NAMES`)."""
        kwargs.setdefault("key_mapping", dict(OLD_WEIGHT_NAMES))
        return super().from_pretrained(*args, **kwargs)

    def save_pretrained(self, *args, **kwargs):
        """``PreTrainedModel.save_pretrained`` under the current weight names, also for a model loaded from a
        checkpoint with the old ones (transformers would write back the names it read)."""
        kwargs.setdefault("save_original_format", False)
        return super().save_pretrained(*args, **kwargs)

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        signal_input_ids=None,
        signal_attention_mask=None,
        encoder_outputs=None,
        **kwargs,
    ):
        return super().forward(
            input_ids=input_ids,
            attention_mask=attention_mask,
            encoder_outputs=encoder_outputs,
            signal_input_ids=signal_input_ids,
            signal_attention_mask=signal_attention_mask,
            **kwargs,
        )

    @classmethod
    def from_bart(cls, bart: "BartForConditionalGeneration | str | os.PathLike", **config_overrides):
        """GSum warm-started from a plain BART (a model, a local folder or a Hub id): every BART weight is
        loaded as is, then each signal part starts as a copy of its source counterpart (the signal
        encoder's top layers from the source encoder's, each decoder layer's signal attention and its
        layer norm from its source attention's). ``config_overrides`` (e.g. ``signal_top_layers``) go
        to :class:`GSumConfig`."""
        if not isinstance(bart, nn.Module):
            bart = BartForConditionalGeneration.from_pretrained(bart)
        if isinstance(bart, GSumForConditionalGeneration):
            raise ValueError("from_bart takes a plain BART, not a GSum: load a GSum checkpoint with from_pretrained")
        settings = {k: v for k, v in bart.config.to_dict().items() if k not in ("model_type", "architectures")}
        model = cls(GSumConfig(**{**settings, **config_overrides}))
        missing, unexpected = model.load_state_dict(bart.state_dict(), strict=False)
        not_signal = [k for k in missing if ".signal_" not in k]
        if unexpected or not_signal:
            raise ValueError(
                f"{type(bart).__name__} is not a plain BART: unexpected weights {unexpected[:5]}, "
                f"missing {not_signal[:5]}"
            )
        encoder = model.model.encoder
        for copy, source in zip(
            encoder.signal_layers, encoder.layers[len(encoder.layers) - len(encoder.signal_layers) :]
        ):
            copy.load_state_dict(source.state_dict())
        for layer in model.model.decoder.layers:
            layer.signal_attn.load_state_dict(layer.encoder_attn.state_dict())
            layer.signal_attn_layer_norm.load_state_dict(layer.encoder_attn_layer_norm.state_dict())
        return model.to(bart.dtype)
