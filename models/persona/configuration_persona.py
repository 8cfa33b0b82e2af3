"""Configuration of BART with a user encoder over the reader's click history (PENS-style injection,
Ao et al. 2021, as evaluated by Vansh et al. 2023)."""

from transformers import BartConfig

TITLE_ENCODERS = ("encoder", "embeddings")


class PersonaBartConfig(BartConfig):
    r"""
    A [`BartConfig`] plus a user encoder: the titles a reader clicked are encoded, pooled with
    attention into ``user_vectors`` vectors, and appended to the memory the decoder cross-attends to.

    Args:
        user_vectors (`int`, *optional*, defaults to 4):
            How many vectors represent a reader (learned attention queries over their titles). They
            are appended to the encoder output, so every decoder layer can attend to the reader as it
            attends to the article.
        max_history (`int`, *optional*, defaults to 16):
            Clicked titles kept per reader, the most recent ones (PENS caps histories at 50; 16 keeps
            the cost of encoding them small beside the article).
        max_title_tokens (`int`, *optional*, defaults to 24):
            Tokens kept per title (PENS: 16 words; BPE needs a few more tokens than words).
        title_encoder (`str`, *optional*, defaults to `"encoder"`):
            How a title becomes a vector: `"encoder"` runs it through the (shared) BART encoder and
            averages the token states, as NRMS encodes titles with self-attention; `"embeddings"`
            averages its token embeddings only (cheaper, weaker).
        user_init_std (`float`, *optional*):
            Standard deviation of the pooling queries at initialization; defaults to `init_std`.
        kwargs:
            Everything [`BartConfig`] takes.
    """

    model_type = "persona_bart"

    def __init__(
        self,
        user_vectors: int = 4,
        max_history: int = 16,
        max_title_tokens: int = 24,
        title_encoder: str = "encoder",
        user_init_std: float | None = None,
        **kwargs,
    ):
        for name, value in (
            ("user_vectors", user_vectors),
            ("max_history", max_history),
            ("max_title_tokens", max_title_tokens),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if title_encoder not in TITLE_ENCODERS:
            raise ValueError(f"title_encoder must be one of {TITLE_ENCODERS}, got {title_encoder!r}")
        if user_init_std is not None and user_init_std < 0:
            raise ValueError(f"user_init_std must be >= 0, got {user_init_std}")
        self.user_vectors = user_vectors
        self.max_history = max_history
        self.max_title_tokens = max_title_tokens
        self.title_encoder = title_encoder
        self.user_init_std = user_init_std
        super().__init__(**kwargs)
