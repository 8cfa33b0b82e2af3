"""Configuration of GSum (Dou et al., 2021), the guided BART that EntSUM (Maddela et al., 2022) adapts
to entity-centric summarization (Sec. 4.1.3-4.1.4)."""

from transformers import BartConfig
from transformers.utils import logging

logger = logging.get_logger(__name__)

# The config field's name before the second input was called the signal (to keep "guidance" for
# classifier-free guidance alone): a config.json saved then still loads.
OLD_TOP_LAYERS = "guidance_top_layers"


class GSumConfig(BartConfig):
    r"""
    A [`BartConfig`] for a BART with a second input, the **signal** (GSum's "guidance signal"; for
    EntSUM: the entity's name, or the source sentences that mention it).

    The encoder runs twice, once over the source and once over the signal, sharing the token and
    position embeddings and every layer except the top ``signal_top_layers``: those exist twice,
    ``encoder.layers[-k:]`` for the source and ``encoder.signal_layers`` for the signal ("the encoders
    share the embedding and the encoding layers except for the topmost layer", EntSUM Sec. 4.1.3). Each
    decoder layer attends to its own prefix, then to the signal, then to the source, then applies its
    feed-forward block ("the decoder first attends to the guidance signal to select the part of the
    document to focus on and then attends to the document").

    Args:
        signal_top_layers (`int`, *optional*, defaults to 1):
            How many top encoder layers the signal encoder has of its own (GSum and EntSUM: 1). Must be
            between 1 and `encoder_layers`. A config saved with the field's old name,
            `guidance_top_layers`, loads as this one.
        kwargs:
            Everything [`BartConfig`] takes.
    """

    model_type = "gsum"

    def __init__(self, signal_top_layers: int | None = None, **kwargs):
        if OLD_TOP_LAYERS in kwargs:
            logger.warning_once(f"GSumConfig: {OLD_TOP_LAYERS!r} is read as 'signal_top_layers', its new name")
            old = kwargs.pop(OLD_TOP_LAYERS)
            signal_top_layers = old if signal_top_layers is None else signal_top_layers
        signal_top_layers = 1 if signal_top_layers is None else signal_top_layers
        self.signal_top_layers = signal_top_layers
        super().__init__(**kwargs)
        if not isinstance(signal_top_layers, int) or not 1 <= signal_top_layers <= self.encoder_layers:
            raise ValueError(
                f"signal_top_layers must be an integer between 1 and encoder_layers "
                f"({self.encoder_layers}), got {signal_top_layers!r}"
            )
