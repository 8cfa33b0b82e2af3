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
(:mod:`hub_cards.export_weights`): the int8 general summarizer as an fp16 model, an adapter as a peft adapter
with fp32 weights, or merged into a full model when its architecture adds modules to the base.

Left out: sub-folders (Trainer's ``checkpoint-N/``, ``runs/``), pickled training state
(``training_args.bin``, ``optimizer.pt``, ...) and a README the trainer may have written.

Made to work off this machine: no absolute local path is written (paths in the JSON files become
file names, and the export fails if one is left anywhere: :mod:`hub_cards.export_checks`); an adapter whose
base model is a local folder is refused unless ``base_model`` names its Hub id, which must resolve (the
local Hugging Face cache, or the folder of its export) and fit the adapter's shapes
(:mod:`hub_cards.base_model`); ``generation_config.json`` carries the
recorded beams and summary length (an adapter's too, from its base's); ``steersum.json`` gets each weight file's sha256, which
:func:`variants.load_summarizer` verifies.
"""

from __future__ import annotations

import copy
import fnmatch
import logging
import shutil
from pathlib import Path
from typing import Any

from store import machine_paths
from store.adapters import ADAPTER_CONFIG, is_adapter
from store.compact import file_sha256
from variants import get_variant
from variants.base import RECORD_FILE, WEIGHT_CHECKSUMS, Summarizer, read_record, verify_weights, write_record
from variants.decoding_rules import TEXT_RULES

from .base_model import check_base_model, is_hub_id, is_test_model, local_base_text, set_adapter_base
from .card import INT8_DTYPES, REPORT_FILE, build_card, measured_lines
from .export_checks import PICKLE_SUFFIXES, ExportError, check_no_local_path, check_weights, drop_local_paths
from .export_weights import REWRITTEN, adapter_weights, export_form, read_config, write_weights
from .general import GENERAL, GeneralModel, general_card, load_general
from .licenses import write_license_file

# Files of the repo that are SteerSum source, copied whole into every variant repo: (source, name in the repo).
# The decoding that ships with a model joins this list, so that the Space, evaluation and the repo run one file.
REPO_SOURCES: list[tuple[Path, str]] = []
REPLACED = {"README.md"}
log = logging.getLogger(__name__)


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
    if record.get("dtype") in INT8_DTYPES:  # a CPU speed-up of the store's int8 copy, not of these weights: served
        # from the repo, the model computes in float32, as the card's code does, so both give one summary
        record = {**record, "dtype": "float32", "measured_dtype": record["dtype"]}
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


def add_remote_code(out: Path) -> None:
    """Make a SteerSum architecture loadable from the folder alone: if the config has no ``auto_map``
    (a checkpoint saved without :func:`models.register_custom_code`), re-save it with the code."""
    config = read_config(out)
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
        config = read_config(out)
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

    from models.processing_base import DECODING_INPUTS, DOCUMENT_WORDS, SERVED_RULES
    from variants import decoding, postprocess

    try:
        processor = summarizer.variant.processor(summarizer)
    except NotImplementedError:
        log.warning("variant '%s' has no processor: the repo ships none", summarizer.variant.id)
        return
    processor.settings[DECODING_INPUTS] = True  # it gives custom_generate's control-free inputs and rules too
    processor.settings[SERVED_RULES] = bool(getattr(summarizer.settings, "constraints", False))  # as the Space serves
    processor.settings[DOCUMENT_WORDS] = bool(getattr(summarizer.settings, "document_words", False))
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

    if not read_config(out):
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
    for rule in TEXT_RULES:  # as the Space serves the model
        if getattr(getattr(summarizer, "settings", None), rule, False):
            setattr(generation, rule, True)
    generation.save_pretrained(out)
