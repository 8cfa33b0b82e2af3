"""The base model a checkpoint names: a Hub id goes in a card's ``base_model`` metadata and an adapter's
config; a local folder never leaves the machine (its card names it without the path), and a random test
model (``--preset``) has none at all. An export's ``--base-model`` must resolve on this machine (the local
Hugging Face cache, or the folder of its export) and fit the checkpoint's shapes before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from huggingface_hub.utils import HFValidationError, validate_repo_id
from safetensors import safe_open

from store.adapters import ADAPTER_CONFIG
from variants.base import RECORD_FILE

from .export_checks import ExportError, check_weights
from .export_weights import adapter_weights, adds_modules, read_config

LOCAL_BASE = " (a local model folder)"


def adapter_config(folder: Path) -> dict | None:
    """A peft adapter folder's ``adapter_config.json`` (None for a full model): it names the adapter's base."""
    return _json(folder / ADAPTER_CONFIG)


def base_model_of(record: dict, adapter: dict | None) -> dict[str, Any]:
    """The base model facts: ``base_model`` (its Hub id, or None), ``base_model_text`` (never a local
    path), ``tiny`` (a random test model), ``license_base`` (whose terms the weights inherit
    besides the data's: None for a test model) and ``weights_license`` (the licence of the pretrained
    weights a SteerSum base was warm-started from, or None)."""
    base = (adapter or {}).get("base_model_name_or_path") or record.get("base_model")
    tiny = is_test_model(record) or "preset" in str(base or "")
    hub_base = base if base and not tiny and is_hub_id(base) else None
    if base and not tiny and not hub_base:
        base = local_base_text(base)
    return {
        "base_model": hub_base,
        "base_model_text": base or "not recorded",
        "tiny": tiny,
        "license_base": None if tiny else hub_base or base,
        "weights_license": (record.get("base_weights") or {}).get("license"),
    }


def local_base_text(base: str) -> str:
    """A base model that is a local folder, named without the machine's path (and never taken for a Hub id)."""
    return base if base.endswith(LOCAL_BASE) else f"{Path(base).name}{LOCAL_BASE}"


def is_test_model(record: dict) -> bool:
    """A random ``--preset`` model (its record says so): its scores mean nothing."""
    return "preset" in str(record.get("base_model", ""))


def is_hub_id(name: str) -> bool:
    """A Hub repo id (``org/name``), not a local path: only those go in the ``base_model`` metadata."""
    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return not Path(name).exists()


def check_base_model(checkpoint: Path, base_model: str | None) -> str | None:
    """The Hub id to write as the model's base, checked before anything is written. ``base_model`` is a
    Hub id found in the local Hugging Face cache (``HF_HUB_CACHE``; nothing is downloaded), or an exported
    SteerSum folder whose ``steersum.json`` names its repo id; its weights must fit the checkpoint (every
    LoRA layer of an adapter has its base layer, with the shapes the adapter was trained on; a full model
    has the base's architecture). An adapter without ``base_model`` must name a Hub id itself: a local
    base folder would not exist on anyone else's machine."""
    adapter = adapter_config(checkpoint)
    if base_model is None:
        base = (adapter or {}).get("base_model_name_or_path") or ""
        if adapter and not is_hub_id(base):
            raise ExportError(
                f"{checkpoint}: the adapter's base model {base or '(none)'} is not a Hub id, so the adapter would not "
                "load anywhere else. Export the merged model instead (train with --merge, export OUTPUT_DIR/merged), "
                "train from a Hub id, or pass --base-model ORG/NAME (in the local Hugging Face cache) or the folder "
                "of its export, the same base, to write into the adapter"
            )
        return None
    folder, repo_id = resolve_base(base_model)
    check_base_fits(checkpoint, adapter, folder, base_model)
    return repo_id


def resolve_base(base_model: str) -> tuple[Path, str]:
    """The local folder of ``--base-model`` and the Hub id to write: an exported SteerSum folder (its
    recorded ``repo_id``), or a Hub id in the local cache."""
    if Path(base_model).is_dir():
        record = _json(Path(base_model) / RECORD_FILE) or {}
        if not is_hub_id(record.get("repo_id") or ""):
            raise ExportError(
                f"--base-model {base_model}: a folder, but not one exported with --repo-id ORG/NAME, so "
                "there is no Hub id to write; export the base with --repo-id, or pass its Hub id"
            )
        return Path(base_model), record["repo_id"]
    if not is_hub_id(base_model):
        raise ExportError(f"--base-model {base_model}: not a Hub id (ORG/NAME) nor a folder")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(base_model, local_files_only=True)), base_model
    except Exception:  # LocalEntryNotFoundError, or a cache entry without a snapshot
        raise ExportError(
            f"--base-model {base_model}: not in the local Hugging Face cache (HF_HUB_CACHE) nor a "
            f"folder; download it first (hf download {base_model}) or pass the folder of its export, "
            "so that it can be checked against the checkpoint"
        ) from None


SHAPE_KEYS = ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads", "num_layers", "num_heads")


def tensor_shapes(folder: Path) -> dict[str, tuple[int, ...]]:
    """Every tensor's shape in a folder's safetensors files (headers only: nothing is loaded)."""
    shapes = {}
    for path in check_weights(folder):
        with safe_open(str(path), framework="pt") as handle:
            for key in handle.keys():
                shapes[key] = tuple(handle.get_slice(key).get_shape())
    return shapes


def check_base_fits(checkpoint: Path, adapter: dict | None, base: Path, name: str) -> None:
    """An adapter's LoRA layers against the base's weights (``lora_A``: rank x in features, ``lora_B``: out
    features x rank); a full model's architecture against the base's config."""
    if not adapter:  # SteerSum's architectures extend their base's (a TDSum is a BART with more layers)
        mine, theirs = read_config(checkpoint), read_config(base)
        differ = [
            f"{key} {theirs[key]}, the checkpoint's {mine[key]}"
            for key in SHAPE_KEYS
            if key in mine and key in theirs and mine[key] != theirs[key]
        ]
        if differ:
            raise ExportError(f"--base-model {name}: not the base this model was fine-tuned from: {'; '.join(differ)}")
        return
    base_shapes, expected = tensor_shapes(base), {}
    # an architecture that adds modules (TDSum, GSum) has LoRA on layers its base lacks: those are built
    # from the base's own layers when it loads (store.adapters.derive), so only the others are checked
    added = adds_modules(read_config(checkpoint))
    shapes = {key: tuple(tensor.shape) for key, tensor in adapter_weights(checkpoint).items()}
    for key, shape in shapes.items():
        if ".lora_A." in key or ".lora_B." in key:  # lora_A: rank x in features; lora_B: out features x rank
            layer, kind = key.split(".lora_")[0], key.split(".lora_")[1][0]
            weight = layer.removeprefix("base_model.model.") + ".weight"
            out_in = expected.setdefault(weight, [None, None])
            out_in[0 if kind == "B" else 1] = shape[0 if kind == "B" else 1]
    mismatches = []
    for weight, (out_features, in_features) in sorted(expected.items()):
        found = base_shapes.get(weight)
        if found is None and added:
            continue
        if found is None:
            mismatches.append(f"it has no {weight}")
        elif tuple(found[:2]) != (out_features, in_features):
            mismatches.append(f"{weight} is {list(found)}, the adapter's is [{out_features}, {in_features}]")
    if mismatches:
        shown = "; ".join(mismatches[:3]) + (f" (and {len(mismatches) - 3} more)" if len(mismatches) > 3 else "")
        raise ExportError(f"--base-model {name}: not the base this adapter was trained on: {shown}")


def set_adapter_base(out: Path, base_model: str) -> None:
    file = out / ADAPTER_CONFIG
    adapter = adapter_config(out)
    if not adapter:
        raise ExportError(f"--base-model {base_model}: only an adapter (with {ADAPTER_CONFIG}) takes a base model")
    adapter["base_model_name_or_path"] = base_model
    file.write_text(json.dumps(adapter, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _json(file: Path) -> dict | None:
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None
