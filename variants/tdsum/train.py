"""``python -m training tdsum``: fine-tune BART guided by TF-IDF (Takeshita et al., ROUGE-K, Sec. 4).

    python -m training build-data tdsum --out data/tdsum
    python -m training tdsum --method tdsum --base-model facebook/bart-large \\
        --train-file data/tdsum/train.jsonl --eval-file data/tdsum/val.jsonl --output-dir checkpoints/tdsum

``--method`` picks where the TF-IDF scores go: ``tdsum`` (TF-IDF encoder + added decoder
cross-attention, trained with the TDMTL loss), ``rwenc``, ``rwgen`` or ``tdmtl``. The TF-IDF vectorizer
is fitted on the training documents and saved with the checkpoint (``tfidf_vectorizer.json``).

Defaults from the paper: RwEnc in encoder layers 0, 4, 8 (Sec. 4); TDMTL lambda 0.1 and RwGen
lambda 0.3 from its grids {0.1, 0.2, 0.3} and {30, 50} (Sec. 5.1; the chosen values are not
reported, and RwGen's grid is read as percentages, since (1 - lambda) p + lambda T is a mixture);
learning rate 3e-5 and gradient accumulation 4 from its grids {1e-5, 2e-5, 3e-5} and {4, 8}.
``--preset tiny`` trains a small random model of the same architecture on CPU.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from transformers import AutoConfig, AutoTokenizer

from metrics.io import DataError, read_jsonl
from models import TDSumConfig, TDSumForConditionalGeneration

from ..presets import TINY_BART, tiny_bart_config, tiny_tokenizer
from . import METHODS, TDSumAssets, TDSumVariant, fit_vectorizer, save_vectorizer

PAPER_DEFAULTS = {"learning_rate": 3e-5, "gradient_accumulation_steps": 4}
logger = logging.getLogger(__name__)


@dataclass
class Arguments:
    method: str = field(default="tdsum", metadata={"help": " | ".join(METHODS)})
    rwenc_layers: str = field(
        default="0,4,8",
        metadata={
            "help": "rwenc: encoder layers whose attention logits get TF-IDF added (paper: 0,4,8 of BART-large)"
        },
    )
    rwgen_lambda: float = field(default=0.3, metadata={"help": "rwgen: weight of the TF-IDF distribution, in [0, 1]"})
    tdmtl_lambda: float = field(
        default=0.1, metadata={"help": "tdsum, tdmtl: weight of the TF-IDF MSE loss, in [0, 1]"}
    )
    tfidf_min_df: int = field(default=2, metadata={"help": "keep words seen in at least this many training documents"})
    tfidf_attention_init_std: float = field(
        default=0.0,
        metadata={
            "help": "tdsum: std of the added attention's output projection at the start. 0 (default) starts from "
            "exactly the base model's outputs; the projection then grows along its gradient, the added "
            "attention's output over the scored embeddings (its query/key/value start as the source "
            "attention's when the base is a plain BART)"
        },
    )

    def __post_init__(self):
        TDSumVariant().check_method(self.method)
        try:
            self.layers = sorted({int(i) for i in self.rwenc_layers.split(",") if i.strip()})
        except ValueError:
            raise ValueError(f"--rwenc-layers must be comma-separated integers, got {self.rwenc_layers!r}") from None
        for name in ("rwgen_lambda", "tdmtl_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"--{name.replace('_', '-')} must be in [0, 1], got {getattr(self, name)}")
        if self.tfidf_min_df < 1:
            raise ValueError(f"--tfidf-min-df must be positive, got {self.tfidf_min_df}")


def method_settings(args: Arguments, encoder_layers: int) -> dict:
    """The TDSumConfig fields that make a method: each switches on one TF-IDF mechanism (TDSum also
    trains with the TDMTL loss, Sec. 4). RwEnc layers the base model lacks are dropped, with a warning."""
    if args.method == "tdsum":
        return {
            "tfidf_attention": True,
            "tdmtl_lambda": args.tdmtl_lambda,
            "tfidf_attention_init_std": args.tfidf_attention_init_std,
        }
    settings = {"tfidf_attention": False}
    if args.method == "rwenc":
        layers = [i for i in args.layers if i < encoder_layers]
        if layers != args.layers:
            logger.warning(
                "rwenc: the base model has %d encoder layers; using layers %s of %s",
                encoder_layers,
                layers,
                args.layers,
            )
        if not layers:
            raise ValueError(
                f"--rwenc-layers {args.rwenc_layers}: none is a layer of the base model (0..{encoder_layers - 1})"
            )
        settings["rwenc_layers"] = layers
    elif args.method == "rwgen":
        settings["rwgen_lambda"] = args.rwgen_lambda
    else:
        settings["tdmtl_lambda"] = args.tdmtl_lambda
    return settings


def build(own: Arguments, data, adapter=None):
    """Model, tokenizer and assets: a TDSum model (a BART checkpoint loads into it with only the
    TF-IDF parts new) and the vectorizer fitted on the training documents."""
    documents = [r.get("document") for r in read_jsonl(data.train_file)[: data.max_train_samples]]
    try:
        vectorizer = fit_vectorizer([d for d in documents if isinstance(d, str)], own.tfidf_min_df)
    except ValueError as err:  # scikit-learn: "After pruning, no terms remain" / "empty vocabulary"
        raise DataError(
            f"{data.train_file}: cannot fit the TF-IDF vocabulary ({err}); lower --tfidf-min-df or give more documents"
        ) from None
    if data.preset == "tiny":
        tokenizer = tiny_tokenizer()
        settings = method_settings(own, TINY_BART["encoder_layers"])
        model = TDSumForConditionalGeneration(tiny_bart_config(tokenizer, TDSumConfig, **settings))
    else:
        tokenizer = AutoTokenizer.from_pretrained(data.base_model)
        base_config = AutoConfig.from_pretrained(data.base_model)
        settings = method_settings(own, base_config.encoder_layers)
        model = TDSumForConditionalGeneration.from_pretrained(data.base_model, **settings)
        if settings["tfidf_attention"] and base_config.model_type != "tdsum":
            model.copy_source_attention_into_tfidf_attention()
    return model, tokenizer, TDSumAssets(vectorizer, tokenizer, data.max_source_length, own.method)


def save_assets(out, assets: TDSumAssets) -> dict:
    save_vectorizer(assets.vectorizer, out)
    return {"tfidf_vocabulary_size": len(assets.vectorizer.vocabulary_)}
