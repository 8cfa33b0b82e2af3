"""Configuration of TDSum and its TF-IDF relatives (Takeshita et al., "ROUGE-K: Do Your Summaries Have
Keywords?", Sec. 4)."""

from transformers import BartConfig


class TDSumConfig(BartConfig):
    r"""
    A [`BartConfig`] plus the four ways of the paper (Sec. 4) to let per-token TF-IDF scores of the
    source guide BART. They combine freely; SteerSum's methods switch on one each (``tdsum`` also
    trains with the TDMTL loss, as the paper does).

    Args:
        tfidf_attention (`bool`, *optional*, defaults to `True`):
            TDSum: a TF-IDF encoder (two linear layers, residual, over each source token's embedding
            at unit RMS times its TF-IDF score) and an added cross-attention over its output in every
            decoder layer.
        tfidf_attention_init_std (`float`, *optional*, defaults to 0.0):
            Standard deviation of the added attention's output projection at initialization. 0 (the
            default) makes a model warm-started from BART compute exactly what BART does until
            training moves it.
        rwenc_layers (`list[int]`, *optional*, defaults to `[]`):
            RwEnc: encoder layers whose self-attention logits get the keys' TF-IDF scores added,
            ``softmax(QK^T / sqrt(d_k) + T) V``. The paper uses layers 0, 4 and 8 of BART-large.
        rwgen_lambda (`float`, *optional*, defaults to 0.0):
            RwGen: the next-token distribution becomes ``(1 - lambda) * p + lambda * T``, ``T`` the
            source's TF-IDF scores over the vocabulary (normalized to sum 1). 0 turns it off.
        tdmtl_lambda (`float`, *optional*, defaults to 0.0):
            TDMTL: a head predicts each source token's TF-IDF score from the encoder's output and the
            loss becomes ``(1 - lambda) * L_sum + lambda * MSE``. 0 turns it off (no head).
        kwargs:
            Everything [`BartConfig`] takes.
    """

    model_type = "tdsum"

    def __init__(
        self,
        tfidf_attention: bool = True,
        tfidf_attention_init_std: float = 0.0,
        rwenc_layers: list[int] | None = None,
        rwgen_lambda: float = 0.0,
        tdmtl_lambda: float = 0.0,
        **kwargs,
    ):
        self.tfidf_attention = bool(tfidf_attention)
        self.tfidf_attention_init_std = float(tfidf_attention_init_std)
        self.rwenc_layers = sorted({int(i) for i in (rwenc_layers or [])})
        self.rwgen_lambda = float(rwgen_lambda)
        self.tdmtl_lambda = float(tdmtl_lambda)
        super().__init__(**kwargs)
        for name in ("rwgen_lambda", "tdmtl_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.tfidf_attention_init_std < 0:
            raise ValueError(f"tfidf_attention_init_std must be >= 0, got {self.tfidf_attention_init_std}")
        outside = [i for i in self.rwenc_layers if not 0 <= i < self.encoder_layers]
        if outside:
            raise ValueError(
                f"rwenc_layers {outside} are not encoder layers; the model has layers 0..{self.encoder_layers - 1}"
            )

    @property
    def uses_tfidf_input(self) -> bool:
        """Whether ``forward`` needs the ``tfidf`` input (TDMTL alone reads it only as a training target)."""
        return self.tfidf_attention or bool(self.rwenc_layers) or self.rwgen_lambda > 0
