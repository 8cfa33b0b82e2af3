"""The weight files of an export: the store's folders (:mod:`store`) leave as a Hub user expects them, not
as the store keeps them (:func:`export_form`). The int8 general summarizer becomes one half-precision
``model.safetensors`` (dequantized with :func:`store.compact.read_compact`; ``config.json`` keeps
``"dtype": "float32"``, so ``from_pretrained`` computes in fp32 as SteerSum does, from a file half the
size); an adapter on a plain BART a peft adapter with its int8 codes dequantized to fp32 weights (a tensor
of int8 codes without its scales is refused: peft would read the codes as weights); an adapter whose
architecture adds modules to the base (TDSum's TF-IDF attention, GSum's signal path) a full
half-precision model of its architecture, merged, with the remote code that builds it, since peft alone
cannot build modules its base lacks.
"""

from __future__ import annotations

import json
from pathlib import Path

from store.adapters import ADAPTER_WEIGHTS, ARCHITECTURE, is_adapter
from store.compact import INDEX as COMPACT_INDEX
from store.compact import SCALE, expand_state_dict, is_compact

from .export_checks import ExportError, check_floating

# How a checkpoint leaves (export_form): as it is; the store's int8 base as an fp16 model; a store adapter
# as a peft adapter with fp32 weights; an adapter whose architecture adds modules as a merged fp16 model.
AS_IS, HALF_MODEL, ADAPTER, MERGED = "as saved", "fp16 model", "peft adapter (fp32 weights)", "merged fp16 model"
REWRITTEN = {  # files of the checkpoint that write_weights writes anew, by export form
    AS_IS: (),
    HALF_MODEL: ("compact*.safetensors", COMPACT_INDEX),
    ADAPTER: (ADAPTER_WEIGHTS,),
    MERGED: (ADAPTER_WEIGHTS, "adapter_config.json", ARCHITECTURE),
}


def export_form(checkpoint: Path) -> str:
    """How ``checkpoint`` is exported (:data:`AS_IS`, :data:`HALF_MODEL`, :data:`ADAPTER`, :data:`MERGED`).
    An adapter whose architecture (``config.json``) is one of SteerSum's own, which add modules to BART,
    is merged: peft applies an adapter to a model it can build from the base alone, and ``from_pretrained``
    of a BART has no TF-IDF attention or signal path to put its weights in."""
    if is_compact(checkpoint):
        return HALF_MODEL
    if not is_adapter(checkpoint):
        return AS_IS
    return MERGED if adds_modules(read_config(checkpoint)) else ADAPTER


def adds_modules(config: dict) -> bool:
    """Whether a config names one of SteerSum's architectures (remote code), not a stock transformers one."""
    if not config.get("model_type"):
        return False
    from transformers import CONFIG_MAPPING

    import models

    # transformers' lazy mapping answers `in` and `[]`, but its inherited .get() sees none of its entries
    config_class = CONFIG_MAPPING[config["model_type"]] if config["model_type"] in CONFIG_MAPPING else None  # noqa: SIM401
    return config_class is not None and config_class.__module__.startswith(models.__name__ + ".")


def adapter_weights(folder: Path) -> dict:
    """An adapter folder's weights as peft reads them: the store's int8 codes dequantized with their per-row
    scales (:func:`store.compact.expand_state_dict`), fp32. A tensor of int8 codes without its scales is
    refused by name: peft would load the codes themselves as weights (a LoRA B of +-127)."""
    from safetensors.torch import load_file

    state = load_file(str(folder / ADAPTER_WEIGHTS))
    codes = sorted(
        name for name, tensor in state.items() if not tensor.is_floating_point() and name + SCALE not in state
    )
    if codes:
        raise ExportError(
            f"{folder / ADAPTER_WEIGHTS}: {codes[0]} holds {state[codes[0]].dtype} codes without their "
            f"{SCALE} scales"
            + (f" (and {len(codes) - 1} more tensors)" if len(codes) > 1 else "")
            + ", where peft expects weights; store the adapter with store.adapters.compact_adapter, or save its "
            "floating-point weights"
        )
    return {name: tensor.float() for name, tensor in expand_state_dict(state).items()}


def write_weights(checkpoint: Path, out: Path, form: str) -> None:
    """The weight files of ``form`` (see :func:`export_form`) in ``out``; nothing to do for :data:`AS_IS`."""
    import torch
    from safetensors.torch import save_file

    if form == ADAPTER:
        save_file(adapter_weights(checkpoint), str(out / ADAPTER_WEIGHTS), metadata={"format": "pt"})
    elif form in (HALF_MODEL, MERGED):
        import models
        from store import load_stored_model

        model = load_stored_model(checkpoint)  # the weights SteerSum serves, fp32 (merged for an adapter)
        models.register_custom_code(model)  # a SteerSum architecture ships its code and auto_map
        model.to(torch.float16).save_pretrained(out)
        config = read_config(out)
        config["dtype"] = "float32"  # from_pretrained's default ("auto") then computes in fp32, as SteerSum does
        (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for path in out.glob("*.safetensors"):
        check_floating(path)


def read_config(folder: Path) -> dict:
    """A folder's ``config.json`` ({} when it has none: an adapter, or no model at all)."""
    file = folder / "config.json"
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
