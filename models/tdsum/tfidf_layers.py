"""The TF-IDF parts TDSum adds to BART's layers (:mod:`.modeling_tdsum` builds them in): RwEnc's bias on
the encoder's attention logits, the TF-IDF encoder that turns scores into word importance features, and
the decoder's added cross-attention that reads them. Self-contained (torch + transformers only): it ships
beside ``modeling_tdsum.py`` in an exported repo, which imports it relatively.
"""

import torch
from torch import nn
from transformers.activations import ACT2FN
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
from transformers.models.bart.modeling_bart import eager_attention_forward

from .configuration_tdsum import TDSumConfig


def add_key_bias(attention_mask: torch.Tensor | None, tfidf: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """RwEnc's ``QK^T / sqrt(d_k) + T``: each key's score added to every query's logit, on top of the
    padding mask (additive float, boolean, or none when nothing is padded)."""
    bias = tfidf[:, None, None, :].to(dtype)  # (B, 1, 1, T): the same for every head and query
    if attention_mask is None:
        return bias
    if attention_mask.dim() != 4:
        raise ValueError("RwEnc adds TF-IDF scores to attention logits: use attn_implementation 'eager' or 'sdpa'")
    if attention_mask.dtype == torch.bool:
        return bias.masked_fill(~attention_mask, torch.finfo(dtype).min)
    return attention_mask + bias


class TDSumTfidfEncoder(nn.Module):
    """The paper's "two linear layers to process TF-IDF scores for words in input documents". Their
    input is each token's embedding, rescaled to unit root mean square, times its score, so a feature
    says which word and how important, and its size is the score whatever the embedding's scale. The
    layers add to that input (a residual), so the features start as the scored embeddings rather than
    as two random projections of them: with BART's 0.02 initialization the plain two layers start
    hundreds of times smaller than the source encoder's output, and the added attention learned nothing
    from them (docs/log.md). No biases: a token scored 0 (stop word, padding, unknown word) has no
    feature at all."""

    def __init__(self, config: TDSumConfig):
        super().__init__()
        self.fc1 = nn.Linear(config.d_model, config.d_model, bias=False)
        self.activation_fn = ACT2FN[config.activation_function]
        self.fc2 = nn.Linear(config.d_model, config.d_model, bias=False)

    def forward(self, inputs_embeds: torch.Tensor, tfidf: torch.Tensor) -> torch.Tensor:
        unit = inputs_embeds * torch.rsqrt(inputs_embeds.pow(2).mean(-1, keepdim=True) + 1e-12)  # (B, T, d)
        weighted = tfidf[..., None].to(inputs_embeds.dtype) * unit
        return weighted + self.fc2(self.activation_fn(self.fc1(weighted)))


class TDSumTfidfAttention(nn.Module):
    """The added cross-attention: decoder states query the TF-IDF encoder's output. Value and output
    projections have no bias, so a zero TF-IDF encoder output contributes exactly nothing."""

    def __init__(self, config: TDSumConfig, layer_idx: int):
        super().__init__()
        self.config, self.layer_idx, self.is_causal = config, layer_idx, False
        self.num_heads = config.decoder_attention_heads
        self.head_dim = config.d_model // self.num_heads
        self.scaling = self.head_dim**-0.5
        self.dropout = config.attention_dropout
        self.q_proj = nn.Linear(config.d_model, config.d_model)
        self.k_proj = nn.Linear(config.d_model, config.d_model)
        self.v_proj = nn.Linear(config.d_model, config.d_model, bias=False)
        self.out_proj = nn.Linear(config.d_model, config.d_model, bias=False)
        self.out_proj.is_tfidf_output = True  # initialized from config.tfidf_attention_init_std

    def key_values(self, tfidf_states: torch.Tensor) -> torch.Tensor:
        shape = (*tfidf_states.shape[:-1], self.num_heads, self.head_dim)
        keys = self.k_proj(tfidf_states).view(shape).transpose(1, 2)  # (B, H, T, hd)
        values = self.v_proj(tfidf_states).view(shape).transpose(1, 2)
        return torch.stack([keys, values], dim=1)  # (B, 2, H, T, hd)

    def forward(
        self, hidden_states: torch.Tensor, key_values: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        input_shape = hidden_states.shape[:-1]
        query = self.q_proj(hidden_states).view(*input_shape, -1, self.head_dim).transpose(1, 2)  # (B, H, S, hd)
        attention = ALL_ATTENTION_FUNCTIONS.get_interface(self.config._attn_implementation, eager_attention_forward)
        output, _ = attention(
            self,
            query,
            key_values[:, 0],
            key_values[:, 1],
            attention_mask,
            dropout=self.dropout if self.training else 0.0,
            scaling=self.scaling,
        )
        return self.out_proj(output.reshape(*input_shape, -1).contiguous())
