"""BART with topic embeddings (Passali et al., Sec. 4.1): a trainable vector per topic, summed with the
token and position embeddings of every encoder input token, like a positional encoding that says
"summarize for this topic". Only the encoder input changes; the rest is BART.

Self-contained (torch + transformers only) so an exported repo runs with ``trust_remote_code=True``.
"""

from torch import nn
from transformers import BartForConditionalGeneration, BartModel
from transformers import initialization as init
from transformers.models.bart.modeling_bart import BartEncoder

from .configuration_topic_bart import TopicBartConfig

NO_TOPIC = -1  # a topic id that adds no embedding: the document without a topic (guidance, control dropout)


class TopicBartEncoder(BartEncoder):
    """A BART encoder whose input embedding is ``WE(x_i) + PE(i) + TE(topic)`` (paper eq. 4)."""

    def __init__(self, config: TopicBartConfig):
        super().__init__(config)
        self.topic_embeddings = nn.Embedding(max(config.num_topics, 1), config.d_model)
        self.topic_embeddings.is_topic_table = True  # initialized from config.topic_init_std, see _init_weights

    def _init_weights(self, module):
        # transformers dispatches to the nearest PreTrainedModel's _init_weights: this encoder's.
        if getattr(module, "is_topic_table", False):
            # Zero by default: a warm-started model starts as its base model (see config.topic_init_std).
            if self.config.topic_init_std > 0:
                init.normal_(module.weight, mean=0.0, std=self.config.topic_init_std)
            else:
                init.zeros_(module.weight)
        else:
            super()._init_weights(module)

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, topic_ids=None, **kwargs):
        if topic_ids is not None:
            if inputs_embeds is None:
                inputs_embeds = self.embed_tokens(input_ids)  # (B, T, d), already scaled like BART's
            if topic_ids.dim() != 1 or topic_ids.shape[0] != inputs_embeds.shape[0]:
                raise ValueError(
                    f"topic_ids must have shape ({inputs_embeds.shape[0]},), got {tuple(topic_ids.shape)}"
                )
            # BART adds PE inside the encoder; adding TE here gives WE + TE + PE. NO_TOPIC adds nothing.
            given = topic_ids.ne(NO_TOPIC)
            topic = self.topic_embeddings(topic_ids.clamp_min(0)) * given[:, None].to(inputs_embeds.dtype)
            inputs_embeds = inputs_embeds + topic[:, None, :]  # (B, 1, d) broadcast over T
            input_ids = None
        return super().forward(
            input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds, **kwargs
        )


class TopicBartModel(BartModel):
    config_class = TopicBartConfig

    def __init__(self, config: TopicBartConfig):
        super().__init__(config)
        self.encoder = TopicBartEncoder(config)
        self.encoder.embed_tokens = self.shared
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, topic_ids=None, encoder_outputs=None, **kwargs):
        if encoder_outputs is None and topic_ids is not None:
            encoder_outputs = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                inputs_embeds=kwargs.pop("inputs_embeds", None),
                topic_ids=topic_ids,
            )
        return super().forward(
            input_ids=input_ids, attention_mask=attention_mask, encoder_outputs=encoder_outputs, **kwargs
        )


class TopicBartForConditionalGeneration(BartForConditionalGeneration):
    """``BartForConditionalGeneration`` that takes ``topic_ids`` (shape ``(batch,)``) in ``forward`` and
    ``generate``; the id ``NO_TOPIC`` (-1) gives a row no topic. Loading a plain BART checkpoint reports
    only ``topic_embeddings`` as new weights.

    >>> out = model.generate(**tokenizer(["..."], return_tensors="pt"), topic_ids=torch.tensor([2]))
    """

    config_class = TopicBartConfig

    def __init__(self, config: TopicBartConfig):
        super().__init__(config)
        self.model = TopicBartModel(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, topic_ids=None, encoder_outputs=None, **kwargs):
        if encoder_outputs is None and topic_ids is not None:
            encoder_outputs = self.get_encoder()(
                input_ids=input_ids, attention_mask=attention_mask, topic_ids=topic_ids
            )
        return super().forward(
            input_ids=input_ids, attention_mask=attention_mask, encoder_outputs=encoder_outputs, **kwargs
        )
