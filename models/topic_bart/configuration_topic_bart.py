"""Configuration of BART with topic embeddings (Passali et al., "Topic-controllable summarization", Sec. 4.1)."""

from transformers import BartConfig


class TopicBartConfig(BartConfig):
    r"""
    A [`BartConfig`] plus a table of trainable topic embeddings added to the encoder input:
    ``z_i = WE(x_i) + PE(i) + TE(topic)`` (paper eq. 4).

    Args:
        topics (`list[str]`, *optional*):
            Names of the topics, in the order of the embedding table's rows. The model can only be
            steered towards these topics (unlike the tag/prepend methods, the embedding method cannot
            take an unseen topic).
        topic_init_std (`float`, *optional*, defaults to 0.0):
            Standard deviation of the topic embeddings at initialization. 0 (the default) makes a
            warm-started model behave exactly like its base model until training moves the table.
        kwargs:
            Everything [`BartConfig`] takes.
    """

    model_type = "topic_bart"

    def __init__(self, topics: list[str] | None = None, topic_init_std: float = 0.0, **kwargs):
        self.topics = list(topics or [])
        if len(set(self.topics)) != len(self.topics):
            raise ValueError(f"topic names must be unique, got {self.topics}")
        self.topic_init_std = topic_init_std
        super().__init__(**kwargs)

    @property
    def num_topics(self) -> int:
        return len(self.topics)
