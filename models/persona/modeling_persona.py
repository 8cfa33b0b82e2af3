"""BART that writes for a reader: a user encoder turns the titles the reader clicked into a few
vectors that the decoder attends to beside the article (the spirit of PENS's injection of a user
embedding into the generator, Ao et al. 2021; the models Vansh et al. 2023 score with EGISES).

    history_ids (B, H, L) ──title encoder──► titles (B, H, d) ──attention pooling──► user (B, K, d)
    input_ids   (B, S)    ──BART encoder───► article (B, S, d)
    memory = [article ; user] (B, S + K, d), mask = [attention_mask ; has history]  ──► BART decoder

A reader with no history (every title padding) gets a fully masked user block: the decoder's
cross-attention gives it weight 0, so the output is exactly the non-personalized model's.
Self-contained (torch + transformers only) so an exported repo runs with ``trust_remote_code=True``.
"""

import math

import torch
from torch import nn
from transformers import BartForConditionalGeneration, BartModel
from transformers import initialization as init
from transformers.modeling_outputs import BaseModelOutput

from .configuration_persona import PersonaBartConfig


class PersonaUserEncoder(nn.Module):
    """Attention pooling of title vectors into ``config.user_vectors`` reader vectors: each learned
    query k scores every title h, a_kh = softmax_h(q_k . W t_h / sqrt(d)), and reads sum_h a_kh t_h."""

    def __init__(self, config: PersonaBartConfig):
        super().__init__()
        self.queries = nn.Parameter(torch.zeros(config.user_vectors, config.d_model))  # (K, d)
        self.key_proj = nn.Linear(config.d_model, config.d_model)
        self.out_proj = nn.Linear(config.d_model, config.d_model)
        self.layer_norm = nn.LayerNorm(config.d_model)  # user vectors on the scale of encoder states

    def forward(self, titles: torch.Tensor, title_mask: torch.Tensor) -> torch.Tensor:
        keys = self.key_proj(titles)  # (B, H, d)
        scores = torch.einsum("kd,bhd->bkh", self.queries.to(keys.dtype), keys) / math.sqrt(keys.shape[-1])
        scores = scores.masked_fill(~title_mask[:, None, :], torch.finfo(scores.dtype).min)
        weights = scores.softmax(dim=-1) * title_mask[:, None, :]  # (B, K, H); no title: all 0
        return self.layer_norm(self.out_proj(weights @ titles))  # (B, K, d)


class PersonaBartModel(BartModel):
    config_class = PersonaBartConfig

    def __init__(self, config: PersonaBartConfig):
        super().__init__(config)
        self.user_encoder = PersonaUserEncoder(config)
        self.post_init()

    def _init_weights(self, module):
        # transformers dispatches to the nearest PreTrainedModel's _init_weights: this model's.
        super()._init_weights(module)
        if isinstance(module, PersonaUserEncoder):
            std = self.config.user_init_std if self.config.user_init_std is not None else self.config.init_std
            init.normal_(module.queries, mean=0.0, std=std)

    def encode_titles(self, history_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, H, L) title token ids, padding where there is no title → title vectors (B, H, d) and
        which titles exist (B, H). Only real titles are encoded."""
        if history_ids.dim() != 3:
            raise ValueError(f"history_ids must have shape (batch, titles, tokens), got {tuple(history_ids.shape)}")
        batch, n_titles, length = history_ids.shape
        token_mask = history_ids.ne(self.config.pad_token_id)  # (B, H, L)
        title_mask = token_mask.any(dim=-1)  # (B, H)
        flat_ids, flat_mask = (
            history_ids.reshape(-1, length)[title_mask.reshape(-1)],
            token_mask.reshape(-1, length)[title_mask.reshape(-1)],
        )
        titles = self.shared.weight.new_zeros(batch * n_titles, self.config.d_model)
        if flat_ids.shape[0]:
            if self.config.title_encoder == "encoder":
                states = self.encoder(input_ids=flat_ids, attention_mask=flat_mask.long()).last_hidden_state
            else:
                states = self.shared(flat_ids)  # (n, L, d), scaled like BART's input embeddings
            mask = flat_mask[..., None].to(states.dtype)
            titles[title_mask.reshape(-1)] = (states * mask).sum(1) / mask.sum(1)  # mean over real tokens
        return titles.view(batch, n_titles, -1), title_mask

    def encode_with_history(
        self, input_ids=None, attention_mask=None, history_ids=None, encoder_outputs=None, **encoder_kwargs
    ) -> tuple[BaseModelOutput, torch.Tensor]:
        """The decoder's memory: the article's encoder states (computed unless ``encoder_outputs`` is
        given, e.g. shared by several readers of one article) with the reader's vectors appended,
        and the matching attention mask (B, S + K)."""
        if encoder_outputs is None:
            encoder_outputs = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, return_dict=True, **encoder_kwargs
            )
        elif not isinstance(encoder_outputs, BaseModelOutput):
            encoder_outputs = BaseModelOutput(last_hidden_state=encoder_outputs[0])
        article = encoder_outputs.last_hidden_state  # (B, S, d)
        if attention_mask is None:
            attention_mask = torch.ones(article.shape[:2], dtype=torch.long, device=article.device)
        if history_ids is None:
            return encoder_outputs, attention_mask
        if history_ids.shape[0] != article.shape[0]:
            raise ValueError(f"history_ids has {history_ids.shape[0]} readers for {article.shape[0]} articles")
        titles, title_mask = self.encode_titles(history_ids)
        user = self.user_encoder(titles, title_mask).to(article.dtype)  # (B, K, d)
        has_history = title_mask.any(dim=-1, keepdim=True).expand(-1, user.shape[1])  # (B, K)
        memory = torch.cat([article, user], dim=1)  # (B, S + K, d)
        mask = torch.cat([attention_mask, has_history.to(attention_mask.dtype)], dim=1)
        return BaseModelOutput(last_hidden_state=memory), mask

    def forward(self, input_ids=None, attention_mask=None, history_ids=None, encoder_outputs=None, **kwargs):
        if history_ids is not None:
            encoder_outputs, attention_mask = self.encode_with_history(
                input_ids, attention_mask, history_ids, encoder_outputs
            )
        return super().forward(
            input_ids=input_ids, attention_mask=attention_mask, encoder_outputs=encoder_outputs, **kwargs
        )


class PersonaBartForConditionalGeneration(BartForConditionalGeneration):
    """``BartForConditionalGeneration`` that takes ``history_ids`` (B, H, L): each reader's clicked
    titles, token ids padded with ``pad_token_id`` (a row of padding = no title). Loading a plain
    BART checkpoint reports only ``user_encoder`` weights as new.

    ``generate`` builds the memory once (article + reader) and decodes from it; callers that
    summarize one article for many readers may pass the article's ``encoder_outputs`` (expanded to
    the readers) with ``history_ids`` to encode the article once.

    >>> out = model.generate(**tokenizer(["..."], return_tensors="pt"), history_ids=history_ids)
    """

    config_class = PersonaBartConfig

    def __init__(self, config: PersonaBartConfig):
        super().__init__(config)
        self.model = PersonaBartModel(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, history_ids=None, encoder_outputs=None, **kwargs):
        if history_ids is not None:
            encoder_outputs, attention_mask = self.model.encode_with_history(
                input_ids, attention_mask, history_ids, encoder_outputs
            )
        return super().forward(
            input_ids=input_ids, attention_mask=attention_mask, encoder_outputs=encoder_outputs, **kwargs
        )

    def generate(self, inputs=None, attention_mask=None, history_ids=None, encoder_outputs=None, **kwargs):
        # The reader's vectors join the memory before decoding starts; the decoding steps then see a
        # plain encoder-decoder memory and mask (nothing is recomputed per step).
        if inputs is None:
            inputs = kwargs.pop("input_ids", None)
        if history_ids is not None:
            encoder_outputs, attention_mask = self.model.encode_with_history(
                inputs, attention_mask, history_ids, encoder_outputs
            )
            inputs = None  # the batch size comes from encoder_outputs
        return super().generate(inputs, attention_mask=attention_mask, encoder_outputs=encoder_outputs, **kwargs)
