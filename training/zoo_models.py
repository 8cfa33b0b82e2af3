"""What ``python -m training zoo`` trains and for how long: one :class:`ZooModel` per variant
(:data:`MODELS`, each with its paper's best method and the flags its data and trainer take) and the
:class:`Budget` that turns ``--minutes-per-model`` or ``--max-steps`` into each model's steps.

The models' recipes are data, read by :mod:`training.zoo` (which runs them), :mod:`training.zoo_training`
(which trains one) and ``scripts/train_on_gpu.py``; the comments beside each say why its settings are these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .general_recipe import RECIPE
from .guidance import SWEEP

BATCH = 8


@dataclass(frozen=True)
class ZooModel:
    variant: str
    method: str
    build: tuple[str, ...] = ()  # build-data flags
    train: tuple[tuple[str, object], ...] = ()  # trainer fields besides the shared ones: (name, value)
    quick_build: tuple[str, ...] = ()  # build-data flags that keep --quick runs small
    learning_rate: float = 2e-4  # below the general run's 3e-4: it starts from a trained summarizer
    source_tokens: int = 256
    target_tokens: int = 96

    @property
    def name(self) -> str:
        return f"{self.variant}-{self.method}"


MODELS = [
    # The paper's best, `prepend-tag`, with LoRA on every attention and feed-forward projection (rank 16): 670
    # steps at batch 32 gave STAS effect +0.19. `prepend` with rank 8 on q/v learned nothing in 411 steps
    # (-0.01), and `prepend-tag` after 91 CPU steps at batch 8 summarized the other article (-0.21).
    ZooModel(
        "topic",
        "prepend-tag",
        ("--source", "bbc_summary"),
        (("adapter_rank", 16), ("adapter_targets", "q_proj,k_proj,v_proj,out_proj,fc1,fc2")),
        source_tokens=384,
        learning_rate=1e-3,
    ),
    ZooModel("tdsum", "tdsum", ("--source", "scitldr")),
    ZooModel("entity", "sentences", ("--sources", "cnndm_sample", "bbc_summary"), quick_build=("--limit", "6")),
    # The reader's sentences (MiniLM's pick, ~70 tokens) in front of the article. `history-prefix` (24-30 titles,
    # ~176 tokens, at 512) learned nothing in 441 CPU steps (-0.003) and needed 2,000 GPU steps for +0.017.
    # Five readers per training article: their references differ, and only the history says which is asked.
    ZooModel(
        "persona",
        "interest-prefix",
        ("--train-readers-per-article", "5"),
        source_tokens=256,
        quick_build=("--max-train-articles", "6", "--max-eval-articles", "4"),
    ),
    # Targets up to 192 tokens: at 96 no summary could reach length bins 2-4 (101-250 words, 9% of the test set).
    # Sources of 384: at 256, 52 of the first 100 test abstracts were cut. Requests past bin 0 three times, as
    # many as bin 0's: on the plain mix (73% bin 0) the adapter wrote ~33 words whatever length was asked.
    ZooModel(
        "ccs",
        "lora",
        ("--long-repeats", "3"),
        (("adapter_targets", "q_proj,k_proj,v_proj,out_proj"), ("adapter_rank", 16)),
        quick_build=("--limit", "6"),
        source_tokens=384,
        target_tokens=192,
        learning_rate=1e-3,  # LoRA's usual higher rate: only the adapter trains
    ),
]


@dataclass
class Budget:
    minutes_per_model: float
    quick: bool = False
    max_steps: int | None = None  # per model; None: the minutes over the model's measured step time
    batch_size: int = BATCH  # per variant-model step (the general summarizer keeps its recipe's)
    step_seconds: dict[str, float] = field(default_factory=dict)  # key(model) -> s, measured here
    general_steps: int = RECIPE["max_steps"]  # the general summarizer's own recipe, whatever the per-model time
    lengths: tuple[int, int] | None = None  # (source, target) tokens for every model; None: each one's own
    max_train_samples: int | None = None
    max_train_seconds: float | None = None  # per variant model: stop at this time even if steps are left
    max_eval_samples: int | None = 100
    guidance_sweep: tuple[float, ...] = SWEEP  # control strengths each variant model is measured at; () for none
    extra: dict = field(default_factory=dict)

    @classmethod
    def for_quick(cls) -> Budget:
        return cls(
            0,
            quick=True,
            max_steps=1,
            batch_size=2,
            general_steps=1,
            lengths=(32, 8),
            max_train_samples=4,
            max_eval_samples=2,
            guidance_sweep=(),
        )

    def shape(self, model: ZooModel | None) -> tuple[int, int]:
        """(source, target) tokens of a variant model, or of the general summarizer (``None``)."""
        own = (
            (RECIPE["max_source_length"], RECIPE["max_target_length"])
            if model is None
            else (model.source_tokens, model.target_tokens)
        )
        return self.lengths or own

    def batch(self, model: ZooModel | None) -> int:
        """Examples per step: ``batch_size`` for a variant model; the general recipe's 8 (not in a quick run)."""
        return RECIPE["per_device_train_batch_size"] if model is None and not self.quick else self.batch_size

    def key(self, model: ZooModel | None) -> str:
        """``batch x source x target``: the shape a training step of this model is timed at."""
        return "x".join(map(str, (self.batch(model), *self.shape(model))))

    def seconds_per_step(self, model: ZooModel | None) -> float | None:
        return self.step_seconds.get(self.key(model))

    def steps(self, model: ZooModel) -> int:
        return self.max_steps or max(1, int(self.minutes_per_model * 60 / self.seconds_per_step(model)))
