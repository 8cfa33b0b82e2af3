"""Configuration of GSum (Dou et al., 2021), the guided BART that EntSUM (Maddela et al., 2022) adapts
to entity-centric summarization (Sec. 4.1.3-4.1.4)."""

from transformers import BartConfig


class GSumConfig(BartConfig):
    r"""
    A [`BartConfig`] for a BART with a second input, the **guidance** (for EntSUM: the entity's name, or
    the source sentences that mention it).

    The encoder runs twice, once over the source and once over the guidance, sharing the token and
    position embeddings and every layer except the top ``guidance_top_layers``: those exist twice,
    ``encoder.layers[-k:]`` for the source and ``encoder.guidance_layers`` for the guidance ("the encoders
    share the embedding and the encoding layers except for the topmost layer", EntSUM Sec. 4.1.3). Each
    decoder layer attends to its own prefix, then to the guidance, then to the source, then applies its
    feed-forward block ("the decoder first attends to the guidance signal to select the part of the
    document to focus on and then attends to the document").

    Args:
        guidance_top_layers (`int`, *optional*, defaults to 1):
            How many top encoder layers the guidance encoder has of its own (GSum and EntSUM: 1). Must be
            between 1 and `encoder_layers`.
        kwargs:
            Everything [`BartConfig`] takes.
    """

    model_type = "gsum"

    def __init__(self, guidance_top_layers: int = 1, **kwargs):
        self.guidance_top_layers = guidance_top_layers
        super().__init__(**kwargs)
        if not isinstance(guidance_top_layers, int) or not 1 <= guidance_top_layers <= self.encoder_layers:
            raise ValueError(
                f"guidance_top_layers must be an integer between 1 and encoder_layers "
                f"({self.encoder_layers}), got {guidance_top_layers!r}"
            )
