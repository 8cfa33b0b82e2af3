"""A variant model as a peft adapter on the general summarizer: LoRA, plus what LoRA cannot hold.

The store keeps one base and, per variant, only what differs from it. Training (``--adapter lora``,
:func:`wrap_for_training`) compares the variant's model with :func:`derive` — the same architecture
rebuilt from the base alone — and saves, besides the LoRA matrices:

* ``trainable_token_indices``: the embedding rows of added control tokens (``[TAG]``, ``[HISTORY]``);
* ``modules_to_save``: the modules an architecture adds that cannot be rebuilt from the base (TDSum's
  TF-IDF encoder, a topic or user table). Added modules that start as copies of base modules (GSum's
  signal layers, TDSum's query/key/value over TF-IDF) are rebuilt by the architecture's own warm
  start (:data:`WARM_STARTS`) and get LoRA like any attention, so they cost no stored weights; an added
  layer that starts at zero (TDSum's TF-IDF attention output) gets LoRA as well (:func:`silent_linears`).

Loading (:func:`load_adapter_model`) rebuilds the architecture from the base with :func:`derive`,
applies the adapter with ``PeftModel.from_pretrained`` and folds it in (``merge_and_unload``): the
served model is a plain transformers model of the variant's architecture.

The adapter folder is a peft adapter folder (``adapter_config.json``, ``adapter_model.safetensors``)
plus the variant architecture's ``config.json`` (:data:`ARCHITECTURE`). Its ``base_model_name_or_path``
is a folder, relative to the adapter's own (the store uses ``../general``) or absolute; a compact base
(:mod:`store.compact`) is dequantized on the way in, and so is a compact adapter (the store's: int8
weights with per-row scales, :func:`compact_adapter`; peft then reads a dequantized copy).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
ARCHITECTURE = "config.json"  # the variant model's config, saved beside the adapter
DEFAULT_TARGETS = ("q_proj", "v_proj")  # BART's attention projections: peft's own default pair for BART
DERIVE_SEED = 0  # modules a warm start does not fill start from this seed, at training and at load alike


def base_weights_into(model: torch.nn.Module, base: torch.nn.Module) -> None:
    """Copy every base weight into ``model`` by name; a tensor grown along one dimension (the vocabulary,
    for added tokens: the embedding's rows, ``final_logits_bias``'s columns) gets the base's part first
    and keeps its own for the rest."""
    own = model.state_dict()
    with torch.no_grad():
        for name, tensor in base.state_dict().items():
            if name not in own:
                continue
            target = own[name]
            grown = [
                i for i in range(tensor.dim()) if target.dim() == tensor.dim() and target.shape[i] != tensor.shape[i]
            ]
            if not grown:
                target.copy_(tensor)
            elif len(grown) == 1 and target.shape[grown[0]] > tensor.shape[grown[0]]:  # a vocabulary dimension
                target.narrow(grown[0], 0, tensor.shape[grown[0]]).copy_(tensor)
            else:
                raise ValueError(
                    f"base weight {name} has shape {tuple(tensor.shape)}, the variant's "
                    f"{tuple(target.shape)}: not the same architecture"
                )


def _gsum(model_class, base, config):
    return model_class.from_bart(base, signal_top_layers=config.signal_top_layers)


def _tdsum(model_class, base, config):
    model = _plain(model_class, base, config)
    if config.tfidf_attention:
        model.copy_source_attention_into_tfidf_attention()
    return model


def _plain(model_class, base, config):
    model = model_class(config)
    base_weights_into(model, base)
    return model


# How an architecture that adds modules to BART starts from a plain BART: its own warm start (by
# model_type; every other architecture takes the base weights by name and inits the rest).
WARM_STARTS: dict[str, Callable] = {"gsum": _gsum, "tdsum": _tdsum}


def derive(base: torch.nn.Module, config) -> torch.nn.Module:
    """The variant architecture ``config`` rebuilt from ``base`` alone, the same on every call."""
    from transformers import AutoModelForSeq2SeqLM

    model_class = AutoModelForSeq2SeqLM._model_mapping[type(config)]
    if type(base) is model_class and base.config.vocab_size == config.vocab_size:
        return base
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(DERIVE_SEED)
        # the class's model_type: a config loaded from a plain BART folder carries "bart" as its own attribute
        model = WARM_STARTS.get(type(config).model_type, _plain)(model_class, base, config)
    return model.float()


def differences(model: torch.nn.Module, derived: torch.nn.Module) -> tuple[list[int], list[str]]:
    """What an adapter must hold besides LoRA: the input embedding rows (token ids) where ``model``
    differs from ``derived``, and its modules with any other weight that differs."""
    embeddings = model.get_input_embeddings().weight
    other = derived.get_input_embeddings().weight
    if embeddings.shape != other.shape:
        raise ValueError(f"embedding table {tuple(embeddings.shape)} vs derived {tuple(other.shape)}")
    tokens = sorted(int(i) for i in torch.nonzero((embeddings != other).any(dim=1)).flatten())
    tied = {
        id(p)
        for p in (embeddings, model.get_output_embeddings().weight if model.get_output_embeddings() else None)
        if p is not None
    }
    theirs = dict(derived.named_parameters(remove_duplicate=False))
    changed = {
        name
        for name, parameter in model.named_parameters()
        if id(parameter) not in tied
        and (name not in theirs or theirs[name].shape != parameter.shape or not torch.equal(theirs[name], parameter))
    }
    return tokens, whole_modules(model, changed)


def whole_modules(model: torch.nn.Module, changed: set[str]) -> list[str]:
    """The fewest modules that hold exactly the ``changed`` parameters: each changed parameter's module,
    replaced by its parent as long as every parameter of the parent changed (``tfidf_encoder``, not its
    ``fc1`` and ``fc2``)."""
    params = [name for name, _ in model.named_parameters()]
    modules = set()
    for name in changed:
        module = name.rsplit(".", 1)[0]
        while "." in module:
            parent = module.rsplit(".", 1)[0]
            if not all(p in changed for p in params if p.startswith(parent + ".")):
                break
            module = parent
        modules.add(module)
    return sorted(modules)


def silent_linears(model: torch.nn.Module, saved: list[str]) -> list[str]:
    """Linear layers whose weight is all zero and that are not saved whole: an added path that starts
    silent (TDSum's TF-IDF attention output, so the model starts as its base). Frozen at zero it would stay
    silent for good, so each gets LoRA too (``B A`` learns from B = 0 as on any weight)."""
    return [
        name
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear)
        and not torch.any(module.weight)
        and not any(name == m or name.startswith(m + ".") for m in saved)
    ]


def wrap_for_training(
    model,
    base: torch.nn.Module,
    rank: int = 8,
    alpha: int = 16,
    dropout: float = 0.05,
    targets: tuple[str, ...] = DEFAULT_TARGETS,
):
    """``model`` (a variant model built from ``base``) as a peft LoRA model whose adapter, on
    :func:`derive` of the base, is the whole difference: LoRA on ``targets``, the added tokens'
    rows, and the modules that cannot be rebuilt from the base. Returns ``(peft_model, facts)``."""
    from peft import LoraConfig, TaskType, get_peft_model

    tokens, modules = differences(model, derive(base, model.config))
    silent = silent_linears(model, modules)
    config = LoraConfig(
        task_type=TaskType.SEQ_2_SEQ_LM,
        r=rank,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=list(targets) + silent,
        trainable_token_indices=tokens or None,
        modules_to_save=modules or None,
    )
    peft_model = get_peft_model(model, config)
    trainable = sum(p.numel() for p in peft_model.parameters() if p.requires_grad)
    facts = {
        "method": "lora",
        "r": rank,
        "alpha": alpha,
        "dropout": dropout,
        "target_modules": list(targets) + silent,
        "trainable_token_indices": tokens,
        "modules_to_save": modules,
        "trainable_parameters": trainable,
    }
    return peft_model, facts


def save_adapter(peft_model, out: str | Path, base_path: str | Path) -> None:
    """The adapter (LoRA, token rows, saved modules; never the whole embedding table, which peft
    would add because the vocabulary grew), the architecture's config, and the base's folder."""
    out = Path(out)
    peft_model.save_pretrained(out, save_embedding_layers=False)
    peft_model.get_base_model().config.save_pretrained(out)
    point_at_base(out, base_path)


def point_at_base(adapter: str | Path, base_path: str | Path) -> None:
    """Name ``base_path`` in the adapter's config: relative to the adapter folder when given relative."""
    file = Path(adapter) / ADAPTER_CONFIG
    config = json.loads(file.read_text(encoding="utf-8"))
    base = Path(base_path)
    config["base_model_name_or_path"] = str(base if not base.is_absolute() or not base.exists() else base.resolve())
    file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def is_adapter(folder: str | Path) -> bool:
    return (Path(folder) / ADAPTER_CONFIG).is_file()


def base_folder(adapter: str | Path, base_model: str | Path | None = None) -> Path | str:
    """The base an adapter folder names (a path relative to the folder, or absolute, or a Hub id)."""
    name = (
        base_model
        or json.loads((Path(adapter) / ADAPTER_CONFIG).read_text(encoding="utf-8"))["base_model_name_or_path"]
    )
    relative = Path(adapter) / name
    return relative.resolve() if relative.is_dir() else (Path(name) if Path(name).is_dir() else str(name))


def load_base(base: Path | str, **kwargs: Any) -> torch.nn.Module:
    """A base checkpoint in fp32: compact (dequantized) or an ordinary folder or Hub id."""
    from transformers import AutoModelForSeq2SeqLM

    from .compact import is_compact, load_compact

    if isinstance(base, Path) and is_compact(base):
        return load_compact(base, **kwargs)
    return AutoModelForSeq2SeqLM.from_pretrained(str(base), dtype=torch.float32, **kwargs).eval()


def compact_adapter(folder: str | Path) -> None:
    """The adapter's weights as int8 with per-row scales, in place (:func:`store.compact.compact_state_dict`:
    every 2-D matrix — LoRA's A and B, token rows, saved modules' weights — a quarter of fp32; biases and
    LayerNorms stay fp32). Each weight moves by at most half its row's scale, as in the compact base."""
    from safetensors.torch import load_file, save_file

    from .compact import compact_state_dict

    file = Path(folder) / ADAPTER_WEIGHTS
    save_file(compact_state_dict(load_file(str(file))), str(file), metadata={"format": "pt", "steersum": "int8"})


def is_compact_adapter(folder: str | Path) -> bool:
    from safetensors import safe_open

    from .compact import SCALE

    with safe_open(str(Path(folder) / ADAPTER_WEIGHTS), framework="pt") as handle:
        return any(name.endswith(SCALE) for name in handle.keys())


def peft_folder(folder: Path, scratch: Path) -> Path:
    """``folder`` as peft reads it: itself, or for an int8 adapter (:func:`compact_adapter`) its config and
    dequantized fp32 weights written to ``scratch``."""
    if not is_compact_adapter(folder):
        return folder
    from safetensors.torch import load_file, save_file

    from .compact import expand_state_dict

    (scratch / ADAPTER_CONFIG).write_bytes((folder / ADAPTER_CONFIG).read_bytes())
    save_file(
        expand_state_dict(load_file(str(folder / ADAPTER_WEIGHTS))),
        str(scratch / ADAPTER_WEIGHTS),
        metadata={"format": "pt"},
    )
    return scratch


def load_adapter_model(folder: str | Path, base_model: str | Path | None = None, merge: bool = True, **kwargs: Any):
    """The variant model of an adapter folder (fp16 or int8 weights): its architecture derived from its base,
    the adapter applied and, with ``merge``, folded in (a plain transformers model; generation config from
    the folder when it has one)."""
    import tempfile

    from peft import PeftModel
    from transformers import AutoConfig, GenerationConfig

    folder = Path(folder)
    base = load_base(base_folder(folder, base_model), **kwargs)
    model = derive(base, AutoConfig.from_pretrained(folder, **kwargs)) if (folder / ARCHITECTURE).is_file() else base
    with tempfile.TemporaryDirectory() as scratch:
        model = PeftModel.from_pretrained(model, str(peft_folder(folder, Path(scratch))))
    if (folder / "generation_config.json").is_file():
        model.generation_config = GenerationConfig.from_pretrained(folder)
    if merge:
        generation = model.generation_config
        model = model.merge_and_unload()
        model.generation_config = generation
    return model.eval()
