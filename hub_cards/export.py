"""A trained checkpoint folder → a folder laid out exactly as its Hub repo.

What goes in: safetensors weights (pickles are refused: loading one runs arbitrary code), the config
with ``auto_map`` and the ``configuration_*.py``/``modeling_*.py`` it names (so the repo alone loads
with ``trust_remote_code=True``), tokenizer files, ``generation_config.json``, the variant's assets
(every other file of the checkpoint: ``steersum.json``, a TopicSpace, a TF-IDF vocabulary, ...),
``eval_report.json`` when there is one, and ``README.md``, the model card. A peft adapter folder
(``adapter_config.json``) is exported as an adapter, the same way.

Left out: sub-folders (Trainer's ``checkpoint-N/``, ``runs/``), pickled training state
(``training_args.bin``, ``optimizer.pt``, ...) and a README the trainer may have written.
"""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

from safetensors import safe_open

from variants import get_variant
from variants.base import RECORD_FILE, Summarizer, read_record

from .card import REPORT_FILE, build_card, write_license_file

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib")
REPLACED = {"README.md"}
log = logging.getLogger(__name__)


class ExportError(ValueError):
    """A checkpoint that cannot be published as it is; the message says what to fix."""


def check_weights(folder: str | Path) -> list[Path]:
    """The folder's weight files, each opened as safetensors (a truncated or corrupt file fails here),
    and every shard a ``*.safetensors.index.json`` names present. Pickled weights are refused."""
    folder = Path(folder)
    weights = sorted(folder.glob("*.safetensors"))
    if not weights:
        pickles = sorted(p.name for p in folder.iterdir() if p.suffix in PICKLE_SUFFIXES and "model" in p.name)
        if pickles:
            raise ExportError(f"{folder}: weights only as pickle ({', '.join(pickles)}), which is refused: loading a "
                              "pickle runs arbitrary code. Re-save with save_pretrained() (safetensors is its default)")
        raise ExportError(f"{folder}: no weights (*.safetensors)")
    for path in weights:
        try:
            with safe_open(str(path), framework="pt") as handle:
                handle.keys()
        except Exception as err:  # SafetensorError, OSError: the file is unusable either way
            raise ExportError(f"{path}: not a readable safetensors file ({err})") from None
    for index in folder.glob("*.safetensors.index.json"):
        shards = set(json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values())
        missing = sorted(s for s in shards if not (folder / s).is_file())
        if missing:
            raise ExportError(f"{index}: shard(s) missing: {', '.join(missing)}")
    return weights


def load_checkpoint(folder: str | Path, record: dict | None = None) -> Summarizer:
    """The checkpoint through its variant's own loader, on CPU: proof that the weights load, and the
    assets (topic space, control choices) that the card describes."""
    record = record or read_record(folder)
    try:
        return get_variant(record["variant"]).load(Path(folder), record, device="cpu")
    except Exception as err:
        raise ExportError(f"{folder}: the '{record['variant']}' variant cannot load it: "
                          f"{type(err).__name__}: {err}") from err


def export_checkpoint(checkpoint: str | Path, out: str | Path, repo_id: str | None = None) -> Path:
    """Write the Hub repo folder for ``checkpoint`` into ``out`` (new or empty) and return it.
    ``repo_id`` is the id the card's usage snippet loads from (a placeholder when not given)."""
    checkpoint, out = Path(checkpoint), Path(out)
    if not checkpoint.is_dir():
        raise ExportError(f"{checkpoint}: no such checkpoint folder")
    if not (checkpoint / RECORD_FILE).is_file():
        raise ExportError(f"{checkpoint}: not a SteerSum checkpoint (no {RECORD_FILE}; "
                          "train it with python -m training)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out}: exists and is not an empty folder")
    record = read_record(checkpoint)
    check_weights(checkpoint)
    summarizer = load_checkpoint(checkpoint, record)
    out.mkdir(parents=True, exist_ok=True)
    try:
        write_repo(checkpoint, out, summarizer, record, repo_id)
    except BaseException:
        shutil.rmtree(out)  # it was empty or new: leave no half-written repo behind
        raise
    return out


def write_repo(checkpoint: Path, out: Path, summarizer: Summarizer, record: dict, repo_id: str | None) -> None:
    """Copy what the repo needs, complete the config side (remote code, generation config), write the card."""
    for path in sorted(checkpoint.iterdir()):
        if path.is_file() and path.suffix not in PICKLE_SUFFIXES and path.name not in REPLACED \
                and not path.name.startswith("."):
            shutil.copy2(path, out / path.name)
        else:
            log.info("not exported: %s", path.name)
    add_remote_code(out)
    add_generation_config(out)
    if not (out / REPORT_FILE).is_file():
        log.warning("%s: no %s, the card will say the model was not evaluated", checkpoint, REPORT_FILE)
    build_card(out, summarizer, repo_id).save(out / "README.md")
    write_license_file(out, record)


def add_remote_code(out: Path) -> None:
    """Make a SteerSum architecture loadable from the folder alone: if the config has no ``auto_map``
    (a checkpoint saved without :func:`models.register_custom_code`), re-save it with the code."""
    config = _config(out)
    if not config:
        return
    if not config.get("auto_map"):
        from transformers import CONFIG_MAPPING

        import models

        config_class = CONFIG_MAPPING[config["model_type"]] if config.get("model_type") in CONFIG_MAPPING else None
        if config_class is None or not config_class.__module__.startswith(models.__name__ + "."):
            return  # a stock transformers architecture: no code to ship
        from transformers import AutoModelForSeq2SeqLM

        model = AutoModelForSeq2SeqLM.from_pretrained(out)
        models.register_custom_code(model)
        model.save_pretrained(out)
        config = _config(out)
    for target in config["auto_map"].values():
        module = (target[0] if isinstance(target, list) else target).split(".")[0]
        if "--" not in module and not (out / f"{module}.py").is_file():
            raise ExportError(f"{out}: config.json auto_map names {module}.py, which the checkpoint does not have")


def add_generation_config(out: Path) -> None:
    """``generation_config.json`` from the model config when the checkpoint has none."""
    if _config(out) and not (out / "generation_config.json").is_file():
        from transformers import AutoConfig, GenerationConfig

        import models  # noqa: F401  (SteerSum's model types)

        GenerationConfig.from_model_config(AutoConfig.from_pretrained(out)).save_pretrained(out)


def _config(folder: Path) -> dict:
    file = folder / "config.json"
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
