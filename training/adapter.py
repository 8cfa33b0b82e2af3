"""``--adapter lora``: train a variant model as a peft adapter on its base (the general summarizer).

Every variant trainer takes these flags (``python -m training <variant> --adapter lora ...``). The
model ``build`` makes is wrapped by :func:`store.adapters.wrap_for_training`: LoRA on the attention
projections, the added control tokens' embedding rows (``trainable_token_indices``) and the modules
the architecture adds that cannot be rebuilt from the base (``modules_to_save``) train; every base
weight stays frozen. The checkpoint is the adapter folder (:func:`store.adapters.save_adapter`), which
``load_summarizer`` loads on its base. A model ``build`` already made an adapter (``ccs --method lora``)
is kept as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ADAPTERS = ("none", "lora")


@dataclass
class AdapterArguments:
    adapter: str = field(
        default="none",
        metadata={
            "help": "none: fine-tune every weight; lora: a peft adapter on --base-model (LoRA, added tokens' rows, "
            "added modules), the store's format"
        },
    )
    adapter_rank: int = field(default=8, metadata={"help": "LoRA rank of --adapter lora"})
    adapter_alpha: int = field(
        default=16, metadata={"help": "LoRA scaling numerator (the update is scaled by alpha/rank)"}
    )
    adapter_dropout: float = field(default=0.05, metadata={"help": "dropout on the LoRA branch's input"})
    adapter_targets: str = field(
        default="q_proj,v_proj",
        metadata={
            "help": "Linear layers (name suffixes) that get LoRA, comma-separated (BART: q_proj,k_proj,v_proj,out_proj,fc1,fc2)"
        },
    )
    adapter_init: str | None = field(
        default=None,
        metadata={
            "help": "with --adapter lora: train on from this adapter folder's weights (a stored model's, int8 or "
            "fp16, on the same base) instead of a new LoRA; its rank and layers are kept, the flags above unused"
        },
    )

    def __post_init__(self):
        if self.adapter_init and not (Path(self.adapter_init) / "adapter_config.json").is_file():
            raise ValueError(f"--adapter-init {self.adapter_init}: not an adapter folder (no adapter_config.json)")
        if self.adapter not in ADAPTERS:
            raise ValueError(f"--adapter {self.adapter!r}; allowed: {', '.join(ADAPTERS)}")
        if self.adapter_rank < 1 or self.adapter_alpha < 1:
            raise ValueError(
                f"--adapter-rank and --adapter-alpha must be positive, got {self.adapter_rank} and "
                f"{self.adapter_alpha}"
            )
        if not 0.0 <= self.adapter_dropout < 1.0:
            raise ValueError(f"--adapter-dropout must be in [0, 1), got {self.adapter_dropout}")
        if not self.targets:
            raise ValueError("--adapter-targets: name at least one Linear layer, e.g. q_proj,v_proj")

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(name.strip() for name in self.adapter_targets.split(",") if name.strip())


def is_peft(model) -> bool:
    from peft import PeftModel

    return isinstance(model, PeftModel)


def wrap(model, adapter: AdapterArguments, base_model: str, preset: str | None):
    """``(model, facts)``: the model to train, and what ``steersum.json`` records about the adapter."""
    if adapter.adapter == "none" or is_peft(model):
        return model, None
    if preset or not Path(base_model).is_dir():
        raise ValueError(
            f"--adapter lora needs a base checkpoint folder as --base-model (the general summarizer, "
            f"which the adapter is saved against), got {'--preset ' + preset if preset else base_model!r}"
        )
    from store.adapters import load_base, wrap_for_training

    if adapter.adapter_init:
        return continued(model, Path(adapter.adapter_init))
    return wrap_for_training(
        model,
        load_base(Path(base_model)),
        adapter.adapter_rank,
        adapter.adapter_alpha,
        adapter.adapter_dropout,
        adapter.targets,
    )


def continued(model, folder: Path):
    """``(model, facts)``: ``model`` (built from the adapter's base) with the adapter of ``folder`` loaded to
    train on; the facts its record keeps, with the adapter it started from and that adapter's steps."""
    import tempfile

    from peft import PeftModel

    from store.adapters import peft_folder
    from variants.base import read_record

    with tempfile.TemporaryDirectory() as scratch:
        model = PeftModel.from_pretrained(model, str(peft_folder(folder, Path(scratch))), is_trainable=True)
    config, record = model.peft_config["default"], read_record(folder)
    facts = {
        "method": "lora",
        "r": config.r,
        "alpha": config.lora_alpha,
        "dropout": config.lora_dropout,
        "target_modules": sorted(config.target_modules),
        "trainable_token_indices": (record.get("adapter") or {}).get("trainable_token_indices", []),
        "modules_to_save": sorted(config.modules_to_save or []),
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "continued_from": {"name": folder.name, "steps": (record.get("training") or {}).get("global_step")},
    }
    return model, facts


def save(model, out: str | Path, base_model: str) -> None:
    """The adapter folder: rewritten by :func:`store.adapters.save_adapter` (the Trainer's own save keeps
    the whole grown embedding table), with the base model's generation config."""
    from store.adapters import save_adapter

    save_adapter(model, out, Path(base_model).resolve())
    generation_config = model.get_base_model().generation_config
    generation_config.use_cache = True  # training turns it off in the config it is derived from; generation wants it
    generation_config.save_pretrained(out)
