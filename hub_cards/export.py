"""A trained checkpoint folder → a folder laid out exactly as its Hub repo.

What goes in: safetensors weights (pickles are refused: loading one runs arbitrary code), the config
with ``auto_map`` and the ``configuration_*.py``/``modeling_*.py`` it names (so the repo alone loads
with ``trust_remote_code=True``), tokenizer files, ``generation_config.json``, the variant's assets
(every other file of the checkpoint: ``steersum.json``, a TopicSpace, a TF-IDF vocabulary, ...),
the variant's processor (``processor_config.json``, ``processing_<name>.py``, ``postprocess.py`` and the
files it reads: ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` turns documents and
controls into the model's inputs with the code the variant's ``prepare`` runs, and its ``decode`` writes
the text as SteerSum serves it), ``eval_report.json`` when there is one,
and ``README.md``, the model card. A peft adapter folder (``adapter_config.json``) is exported as an
adapter, the same way; the general summarizer (``"variant": "general"``) as a plain model with its own
card (:mod:`hub_cards.general`).

The store's folders (:mod:`store`) export as a Hub user expects them, not as the store keeps them
(:func:`export_form`): the int8 general summarizer as one half-precision ``model.safetensors``
(dequantized with :func:`store.compact.read_compact`; ``config.json`` keeps ``"dtype": "float32"``, so
``from_pretrained`` computes in fp32 as SteerSum does, from a file half the size); an adapter on a plain
BART as a peft adapter with its int8 codes dequantized to fp32 weights (a tensor of int8 codes without its
scales is refused: peft would read the codes as weights); an adapter whose architecture adds modules to
the base (TDSum's TF-IDF attention, GSum's guidance path) merged into a full half-precision model of its
architecture with the remote code that builds it, since peft alone cannot build modules its base lacks.

Left out: sub-folders (Trainer's ``checkpoint-N/``, ``runs/``), pickled training state
(``training_args.bin``, ``optimizer.pt``, ...) and a README the trainer may have written.

Made to work off this machine: no absolute local path is written (paths in the JSON files become
file names, and the export fails if one is left anywhere); an adapter whose base model is a local
folder is refused unless ``base_model`` names its Hub id, which must resolve (the local Hugging Face
cache, or the folder of its export) and fit the adapter's shapes; ``generation_config.json`` carries the
recorded beams and summary length (an adapter's too, from its base's); ``steersum.json`` gets each weight file's sha256, which
:func:`variants.load_summarizer` verifies.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import logging
import re
import shutil
from pathlib import Path
from typing import Any

from safetensors import safe_open

from store import machine_paths
from store.adapters import ADAPTER_WEIGHTS, ARCHITECTURE, is_adapter
from store.compact import INDEX as COMPACT_INDEX
from store.compact import SCALE, expand_state_dict, file_sha256, is_compact
from variants import get_variant
from variants.base import RECORD_FILE, WEIGHT_CHECKSUMS, Summarizer, read_record, verify_weights, write_record

from .card import (
    ADAPTER_CONFIG,
    REPORT_FILE,
    build_card,
    is_hub_id,
    is_test_model,
    local_base_text,
    measured_lines,
    write_license_file,
)
from .general import GENERAL, GeneralModel, general_card, load_general

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib")
# How a checkpoint leaves (export_form): as it is; the store's int8 base as an fp16 model; a store adapter
# as a peft adapter with fp32 weights; an adapter whose architecture adds modules as a merged fp16 model.
AS_IS, HALF_MODEL, ADAPTER, MERGED = "as saved", "fp16 model", "peft adapter (fp32 weights)", "merged fp16 model"
# Files of the repo that are SteerSum source, copied whole into every variant repo: (source, name in the repo).
# The decoding that ships with a model joins this list, so that the Space, evaluation and the repo run one file.
REPO_SOURCES: list[tuple[Path, str]] = []
REPLACED = {"README.md"}
VOCABULARIES = {"tokenizer.json", "vocab.json"}  # tokens are not paths, whatever they look like
ABSOLUTE_PATH = re.compile(r"(/[^/\s]+){2,}/?")  # /home/me/x, /tmp/x/y: a local path, not a Hub id
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
            raise ExportError(
                f"{folder}: weights only as pickle ({', '.join(pickles)}), which is refused: loading a "
                "pickle runs arbitrary code. Re-save with save_pretrained() (safetensors is its default)"
            )
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
        verify_weights(folder, record)
        if record["variant"] == GENERAL:
            return load_general(folder, record)
        return get_variant(record["variant"]).load(Path(folder), record, device="cpu")
    except Exception as err:
        raise ExportError(
            f"{folder}: the '{record['variant']}' variant cannot load it: {type(err).__name__}: {err}"
        ) from err


def export_checkpoint(
    checkpoint: str | Path,
    out: str | Path,
    repo_id: str | None = None,
    base_model: str | None = None,
    eval_report: str | Path | None = None,
) -> Path:
    """Write the Hub repo folder for ``checkpoint`` into ``out`` (new or empty) and return it.
    ``repo_id`` is the id the card's usage snippet loads from (a placeholder when not given);
    ``base_model`` the Hub id of an adapter's base, for an adapter trained on a local copy of it;
    ``eval_report`` the report the card shows (default: the checkpoint's ``eval_report.json``)."""
    checkpoint, out = Path(checkpoint), Path(out)
    if not checkpoint.is_dir():
        raise ExportError(f"{checkpoint}: no such checkpoint folder")
    if not (checkpoint / RECORD_FILE).is_file():
        raise ExportError(
            f"{checkpoint}: not a SteerSum checkpoint (no {RECORD_FILE}; train it with python -m training)"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out}: exists and is not an empty folder")
    if eval_report and not Path(eval_report).is_file():
        raise ExportError(f"--eval-report {eval_report}: no such file")
    record = read_record(checkpoint)
    check_weights(checkpoint)
    if is_adapter(checkpoint):
        adapter_weights(checkpoint)  # refuses int8 codes peft would read as weights, before anything loads
    base_model = check_base_model(checkpoint, base_model)
    summarizer = load_checkpoint(checkpoint, record)
    out.mkdir(parents=True, exist_ok=True)
    try:
        write_repo(checkpoint, out, summarizer, record, repo_id, base_model, eval_report)
    except BaseException:
        shutil.rmtree(out)  # it was empty or new: leave no half-written repo behind
        raise
    return out


def write_repo(
    checkpoint: Path,
    out: Path,
    summarizer: Summarizer,
    record: dict,
    repo_id: str | None,
    base_model: str | None = None,
    eval_report: str | Path | None = None,
) -> None:
    """Copy what the repo needs, complete the config side (remote code, generation config), write the
    card, take local paths out, record the weights' checksums."""
    form = export_form(checkpoint)
    rewritten = REWRITTEN[form]
    for path in sorted(checkpoint.iterdir()):
        if (
            path.is_file()
            and path.suffix not in PICKLE_SUFFIXES
            and path.name not in REPLACED
            and not path.name.startswith(".")
            and not any(fnmatch.fnmatch(path.name, pattern) for pattern in rewritten)
        ):
            shutil.copy2(path, out / path.name)
        else:
            log.info("not exported: %s", path.name)
    write_weights(checkpoint, out, form)
    if eval_report:
        shutil.copyfile(eval_report, out / REPORT_FILE)
    if base_model and (out / ADAPTER_CONFIG).is_file():
        set_adapter_base(out, base_model)
    local_base = record.get("base_model") and not is_hub_id(record["base_model"])
    if not is_test_model(record) and (base_model or local_base):  # a test model's record keeps saying so
        record = {**record, "base_model": base_model or local_base_text(record["base_model"])}
    if repo_id:  # so that an adapter exported later can name this repo as its base (check_base_model)
        record = {**record, "repo_id": repo_id}
    record = {**record, "export_format": form}
    write_record(out, record)
    add_remote_code(out)
    add_generation_config(out, record, summarizer)
    if isinstance(summarizer, GeneralModel):
        general_card(out, record, repo_id).save(out / "README.md")
    else:
        add_processor(out, summarizer)
        copy_sources(out)
        if not (out / REPORT_FILE).is_file():
            log.warning("%s: no %s, the card will say the model was not evaluated", checkpoint, REPORT_FILE)
        stored_card = checkpoint / "README.md"  # a stored model's card holds what the leaderboard measured
        measured = measured_lines(stored_card.read_text(encoding="utf-8")) if stored_card.is_file() else []
        build_card(out, summarizer, repo_id, measured).save(out / "README.md")
    write_license_file(out, record)
    drop_local_paths(out)
    record = read_record(out)
    record[WEIGHT_CHECKSUMS] = {path.name: file_sha256(path) for path in sorted(out.glob("*.safetensors"))}
    write_record(out, record)
    check_no_local_path(out, checkpoint)
    leaks = machine_paths(out)
    if leaks:
        raise ExportError(f"would publish a machine path: {'; '.join(leaks[:3])}")


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
    of a BART has no TF-IDF attention or guidance path to put its weights in."""
    if is_compact(checkpoint):
        return HALF_MODEL
    if not is_adapter(checkpoint):
        return AS_IS
    return MERGED if adds_modules(_config(checkpoint)) else ADAPTER


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
        config = _config(out)
        config["dtype"] = "float32"  # from_pretrained's default ("auto") then computes in fp32, as SteerSum does
        (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for path in out.glob("*.safetensors"):
        check_floating(path)


def check_floating(path: Path) -> None:
    """The last guard on an exported weight file: every tensor a float (no int8 code left behind)."""
    with safe_open(str(path), framework="pt") as handle:
        for name in handle.keys():
            dtype = handle.get_slice(name).get_dtype()
            if dtype not in ("F16", "BF16", "F32", "F64"):
                raise ExportError(f"{path.name}: {name} is {dtype}, not a floating-point weight")


def copy_sources(out: Path, sources: list[tuple[Path, str]] | None = None) -> list[Path]:
    """Copy SteerSum source files whole into the repo (:data:`REPO_SOURCES` by default), each to its
    name there (a sub-folder is made as needed); the paths written."""
    written = []
    for source, name in REPO_SOURCES if sources is None else sources:
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        written.append(target)
    return written


def check_base_model(checkpoint: Path, base_model: str | None) -> str | None:
    """The Hub id to write as the model's base, checked before anything is written. ``base_model`` is a
    Hub id found in the local Hugging Face cache (``HF_HUB_CACHE``; nothing is downloaded), or an exported
    SteerSum folder whose ``steersum.json`` names its repo id; its weights must fit the checkpoint (every
    LoRA layer of an adapter has its base layer, with the shapes the adapter was trained on; a full model
    has the base's architecture). An adapter without ``base_model`` must name a Hub id itself: a local
    base folder would not exist on anyone else's machine."""
    adapter = _json(checkpoint / ADAPTER_CONFIG)
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
        mine, theirs = _config(checkpoint), _config(base)
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
    added = adds_modules(_config(checkpoint))
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
    adapter = _json(file)
    if not adapter:
        raise ExportError(f"--base-model {base_model}: only an adapter (with {ADAPTER_CONFIG}) takes a base model")
    adapter["base_model_name_or_path"] = base_model
    file.write_text(json.dumps(adapter, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def drop_local_paths(out: Path) -> None:
    """Absolute local paths in the exported JSON files (``steersum.json``'s data files, the output and
    logging folders of ``training_args.json``, the report's data file) become their last component:
    enough to say which file, nothing about the machine."""

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: scrub(item) for key, item in value.items()}
        if isinstance(value, list):
            return [scrub(item) for item in value]
        if isinstance(value, str) and ABSOLUTE_PATH.fullmatch(value):
            return Path(value).name
        return value

    for file in sorted(out.glob("*.json")):
        if file.name in VOCABULARIES:
            continue
        data = json.loads(file.read_text(encoding="utf-8"))
        clean = scrub(data)
        if clean != data:
            file.write_text(json.dumps(clean, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def check_no_local_path(out: Path, checkpoint: Path) -> None:
    """The last guard: no exported file may name the folder the checkpoint sits in."""
    local = {str(checkpoint.resolve().parent), str(checkpoint.absolute().parent)} - {"/"}
    leaks = sorted(p.name for p in out.iterdir() if p.is_file() and any(s.encode() in p.read_bytes() for s in local))
    if leaks:
        raise ExportError(f"{', '.join(leaks)}: would publish a local path ({checkpoint.resolve().parent})")


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


def add_processor(out: Path, summarizer: Summarizer) -> None:
    """The variant's processor (remote code, its settings and files), so that ``AutoProcessor`` turns
    documents and controls into the model's inputs from the repo alone (:meth:`Variant.processor`), and
    ``postprocess.py`` beside it, with which its ``decode`` writes the text as SteerSum serves it; and the
    served decoding in ``custom_generate/``: ``variants/decoding.py`` as ``generate.py``, with the modules it
    imports relatively beside it under their own names."""
    from transformers.dynamic_module_utils import get_relative_import_files

    from models.processing_base import DECODING_INPUTS, SERVED_RULES
    from variants import decoding, postprocess

    try:
        processor = summarizer.variant.processor(summarizer)
    except NotImplementedError:
        log.warning("variant '%s' has no processor: the repo ships none", summarizer.variant.id)
        return
    processor.settings[DECODING_INPUTS] = True  # it gives custom_generate's control-free inputs and rules too
    processor.settings[SERVED_RULES] = bool(getattr(summarizer.settings, "constraints", False))  # as the Space serves
    processor.save_pretrained(out)
    shutil.copyfile(postprocess.__file__, out / "postprocess.py")
    (out / "custom_generate").mkdir(exist_ok=True)  # the served decoding: model.generate under trust_remote_code
    shutil.copyfile(decoding.__file__, out / "custom_generate" / "generate.py")
    # and the sibling modules it imports relatively, under their own names: transformers loads them with it
    for sibling in get_relative_import_files(decoding.__file__):
        shutil.copyfile(sibling, out / "custom_generate" / Path(sibling).name)


def add_generation_config(out: Path, record: dict, summarizer: Any = None) -> None:
    """``generation_config.json`` (from the model config when the checkpoint has none; an adapter's from
    its base model's, which its loaded ``summarizer`` runs) with the recorded beams and summary length, so
    a plain ``model.generate(**inputs)`` generates as the card says, not greedily up to ``max_length=20``."""
    from transformers import GenerationConfig

    if not _config(out):
        model = getattr(summarizer, "model", None)
        if model is None or not (out / ADAPTER_CONFIG).is_file():
            return
        generation = copy.deepcopy(model.generation_config)  # the base model's, as the adapter generates
    elif (out / "generation_config.json").is_file():
        generation = GenerationConfig.from_pretrained(out)
    else:
        from transformers import AutoConfig

        import models  # noqa: F401  (SteerSum's model types)

        generation = GenerationConfig.from_model_config(AutoConfig.from_pretrained(out))
    generation.num_beams = int(record.get("num_beams", 4))
    generation.max_new_tokens = int(record.get("max_target_length", 128))
    # as SteerSum's summarizers generate (variants.seq2seq.GenerationSettings): a beam search ends once
    # every beam has finished
    generation.early_stopping = generation.num_beams > 1 or generation.early_stopping
    generation.save_pretrained(out)


def _config(folder: Path) -> dict:
    return _json(folder / "config.json") or {}


def _json(file: Path) -> dict | None:
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None
