"""The model card: front matter from :class:`huggingface_hub.ModelCardData` (with the eval report as
``model-index`` via :class:`~huggingface_hub.EvalResult`), body from one Jinja template per variant
family, ``templates/<variant id>.md``, which extends ``templates/base.md`` (a variant without a
template of its own gets ``base.md``).

Every fact comes from the checkpoint: the variant object (paper, description, controls, metrics,
``prepare``), ``steersum.json`` (base model, data and its licences, the base model's data when it is a
SteerSum model, hyperparameters) and
``eval_report.json`` (scores; without it the card says "not evaluated" and gives no numbers). A
variant may add or override template facts with :meth:`variants.base.Variant.card_facts`.

Template facts: ``model_name``, ``repo_id``, ``variant``, ``paper``, ``method``, ``controls``
(:class:`~variants.base.Control` list), ``example_document``, ``example_controls``,
``example_prepared`` (:class:`~variants.base.Prepared`: what the model is given for the example),
``base_model`` (a Hub id or None), ``base_model_text`` (never a local path), ``tiny``, ``adapter``,
``custom_code``, ``record``, ``hyperparameters`` (with the steps and epochs actually trained),
``datasets`` (its own training data), ``upstream_datasets`` (only its base model's, for a model
fine-tuned from SteerSum's general summarizer), ``training_data`` (dataset, licence, the base
model's included), ``license_note`` (all that data and the base model), ``report`` (or None),
``results`` (label, name, value), ``eval_data`` (type, name, split as the Hub names it, file, hub),
``max_source_length``, ``max_new_tokens``, ``num_beams``, ``license_base``, ``weights_license``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jinja2
from huggingface_hub import EvalResult, ModelCard, ModelCardData
from huggingface_hub.utils import HFValidationError, validate_repo_id

from metrics.io import DataError, read_jsonl
from variants.base import Control, Summarizer, read_record
from variants.sources import NON_COMMERCIAL, all_data_licenses

TEMPLATES = Path(__file__).with_name("templates")
ADAPTER_CONFIG = "adapter_config.json"  # what makes a folder a peft adapter
REPORT_FILE = "eval_report.json"  # written by training.evaluate
LICENSE_FILE = "LICENSE.md"
PLACEHOLDER_REPO = "ORG/NAME"
LOCAL_BASE = " (a local model folder)"
MISSING = "[More Information Needed]"  # huggingface_hub's template default; never in a SteerSum card

# Training-data licence texts (variants.sources.DATASET_LICENSES) that are a Hub licence id.
HUB_LICENSES = {"Apache-2.0": "apache-2.0"}
# Bundled datasets that are samples of a Hub dataset (for the ``datasets`` front matter).
HUB_DATASETS = {"scitldr": "allenai/scitldr", "xsum": "EdinburghNLP/xsum", "cnndm_sample": "abisee/cnn_dailymail"}
# Data file names (their stem) -> the split name the Hub uses; SciTLDR's `dev` is `validation` there.
HUB_SPLITS = {"val": "validation", "valid": "validation", "dev": "validation", "eval": "validation"}
# Hub licence ids of the base models SteerSum's defaults and docs name (each model's Hub card);
# any other base is "unknown" and the card says to check its terms.
BASE_MODEL_LICENSES = {
    "facebook/bart-base": "apache-2.0",
    "facebook/bart-large": "apache-2.0",
    "google/flan-t5-small": "apache-2.0",
    "google/flan-t5-base": "apache-2.0",
    "google/flan-t5-large": "apache-2.0",
    "google/flan-t5-xl": "apache-2.0",
    "google/flan-t5-xxl": "apache-2.0",
    "sentence-transformers/all-MiniLM-L6-v2": "apache-2.0",
}
METRIC_LABELS = {
    "rouge1": "ROUGE-1",
    "rouge2": "ROUGE-2",
    "rougeL": "ROUGE-L",
    "rougeLsum": "ROUGE-Lsum",
    "stas": "STAS",
    "output_words": "mean summary length (words)",
    "ends_sentence": "share ending a sentence",
    "repeated_trigram": "share with a repeated 3-gram",
    "unsupported_facts": "names and numbers not in the document (mean)",
    "has_unsupported": "share with a name or number not in the document",
}

# The usage example's document when a variant gives none: two topics, so a control has work to do.
EXAMPLE_DOCUMENT = (
    "Shares in the carmaker fell 6% after it cut its profit forecast, blaming weak demand in Europe and the "
    "cost of new factories. The chief executive said savings of 2bn euros would restore margins by next year. "
    "In the evening the city's football club beat the league leaders 2-1, with a late goal from their young "
    "striker. The manager said the win showed his side could still challenge for the title."
)


def build_card(
    folder: str | Path, summarizer: Summarizer, repo_id: str | None = None, measured: list[str] | None = None
) -> ModelCard:
    """The card of an exported folder (``steersum.json``, ``eval_report.json`` if any, the config or
    adapter config) whose checkpoint is loaded as ``summarizer``; ``measured``: the leaderboard's lines on
    the model as served and alone (:func:`measured_lines`). Raises ValueError if a template left anything
    unfilled."""
    folder, variant = Path(folder), summarizer.variant
    record, report = read_record(folder), read_json(folder / REPORT_FILE)
    adapter = read_json(folder / ADAPTER_CONFIG)
    custom_code = bool((read_json(folder / "config.json") or {}).get("auto_map"))
    repo_id = repo_id or PLACEHOLDER_REPO
    facts = gather_facts(summarizer, record, report, repo_id, adapter, custom_code)
    facts["processor_file"] = next((p.name for p in sorted(folder.glob("processing_*.py"))), None)
    facts["custom_generate"] = (folder / CUSTOM_GENERATE).is_file()
    facts["added_tokens"] = added_tokens(adapter)
    facts["measured"] = list(measured or [])
    facts["base_architecture"] = architecture_name(summarizer)
    results = eval_results(report, record)
    tags = ["summarization", "controllable-summarization", "steersum", f"steersum-{variant.id}", summarizer.method]
    data = ModelCardData(
        language="en",
        library_name="peft" if adapter else "transformers",
        pipeline_tag="summarization",
        tags=tags + (["custom_code"] if custom_code else []) + (["peft", "lora"] if adapter else []),
        base_model=facts["base_model"],
        # what this repo trained on; the base's data is the base's (its own card lists it)
        datasets=own_hub_datasets(record),
        model_name=facts["model_name"],
        eval_results=results or None,
        # the metrics the model-index reports, no others (the Hub lists them as the card's metrics)
        metrics=list(dict.fromkeys(r.metric_type for r in results)) or None,
        **license_fields(all_data_licenses(record), facts["license_base"]),
    )
    name = f"{variant.id}.md" if (TEMPLATES / f"{variant.id}.md").is_file() else "base.md"
    # ModelCard.from_template renders with a loader-less jinja2.Template, so {% extends %} would not
    # resolve; this is the same render (card_data = the YAML front matter) with the templates folder.
    content = environment().get_template(name).render(card_data=data.to_yaml(), **facts)
    card = ModelCard(content)
    if MISSING in card.content:
        raise ValueError(f"templates/{name}: the card still says {MISSING!r}")
    return card


ARCHITECTURES = {"bart": "BART", "t5": "T5", "mt5": "mT5"}
CUSTOM_GENERATE = "custom_generate/generate.py"  # the served decoding, run by transformers' generate
MEASURED = "## Measured on the leaderboard"  # the store card's section that the leaderboard writes
# The decoding rules each variant's served model runs with (the variant's ``constraints``), in words.
DECODING_RULES = {
    "ccs": "the requested length bin as word bounds and the requested keywords enforced, and for high readability "
    "the document's sentences of common words preferred",
    "entity": "the entity's name as a keyword, favoured (with the document's sentences that name it) until the "
    "summary names it",
    "persona": "the document's sentences closest to the reader's titles preferred",
    "topic": "the document's sentences preferred as a path to copy, whatever the topic",
    "tdsum": "none",
}
# What a processor needs besides transformers (and peft), by (variant, method).
EXTRA_REQUIREMENTS = {
    ("persona", "interest-prefix"): (
        "`sentence-transformers` with the MiniLM encoder `sentence-transformers/all-MiniLM-L6-v2` (downloaded on "
        "first use)",
        "`nltk` with its Punkt data (`nltk.download('punkt_tab')`)",
    )
}


def own_hub_datasets(record: dict) -> list[str] | None:
    """The Hub datasets a model trained on itself (never its base model's), for the card's ``datasets``."""
    return sorted({HUB_DATASETS[d] for d in record.get("data_licenses", {}) if d in HUB_DATASETS}) or None


def added_tokens(adapter: dict | None) -> list[int]:
    """The token ids an adapter adds to its base's vocabulary (peft's ``trainable_token_indices``)."""
    indices = (adapter or {}).get("trainable_token_indices") or []
    return sorted(indices.get("embed_tokens", []) if isinstance(indices, dict) else indices)


def decoding_facts(record: dict, variant_id: str) -> dict[str, Any]:
    """How SteerSum serves the model (its record): decoding rules, control strength γ, int8 decoder weights."""
    from variants.decoding import read_strength

    guidance = float(read_strength(record, 1) or 1)
    rules = bool(record.get("constraints"))
    return {
        "rules": rules,
        "rules_text": DECODING_RULES.get(variant_id, "the variant's decoding rules") if rules else "none",
        "guidance": guidance,
        "int8": record.get("dtype") in ("int8", "int8-weights"),
        "plain": not rules and guidance == 1 and record.get("dtype") not in ("int8", "int8-weights"),
    }


def measured_lines(card_text: str) -> list[str]:
    """The lines of a stored model's "Measured on the leaderboard" section (as served and the model alone),
    or none when its card has no such section."""
    if MEASURED not in card_text:
        return []
    section = card_text.split(MEASURED, 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def architecture_name(summarizer: Summarizer) -> str:
    """The architecture of the model a summarizer runs (an adapter's base model's), as its paper names it."""
    model = getattr(summarizer, "model", None)
    model = model.get_base_model() if hasattr(model, "get_base_model") else model
    model_type = getattr(getattr(model, "config", None), "model_type", None) or "seq2seq"
    return ARCHITECTURES.get(model_type, model_type)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["py"] = repr
    env.filters["py_text"] = python_text
    return env


def gather_facts(
    summarizer: Summarizer, record: dict, report: dict | None, repo_id: str, adapter: dict | None, custom_code: bool
) -> dict[str, Any]:
    """The template's facts (listed in the module docstring); the variant's ``card_facts`` win."""
    variant, assets = summarizer.variant, summarizer.assets
    controls = list(summarizer.controls())
    extra = variant.card_facts(assets)
    document = extra.get("example_document", EXAMPLE_DOCUMENT)
    example = extra.get("example_controls") or example_controls(variant.id, controls)
    base = base_model_of(record, adapter)
    licences = record.get("data_licenses", {})
    inherited = {
        name: terms for name, terms in record.get("upstream_data_licenses", {}).items() if name not in licences
    }
    facts = dict(
        model_name=repo_id.split("/")[-1],
        repo_id=repo_id,
        variant=variant,
        paper=variant.paper,
        method=summarizer.method,
        controls=controls,
        example_document=document,
        example_controls=example,
        example_prepared=variant.prepare(document, variant.validate(example, assets), summarizer.method, assets),
        **base,
        adapter=bool(adapter),
        custom_code=custom_code,
        record=record,
        hyperparameters=hyperparameters(record),
        datasets=sorted(licences),
        upstream_datasets=sorted(inherited),
        training_data=sorted(licences.items())
        + [(f"{name} (the base model's training data)", terms) for name, terms in sorted(inherited.items())],
        license_note=license_note(
            all_data_licenses(record), base["license_base"], base["tiny"], base["weights_license"]
        ),
        report=report,
        results=[],
        eval_data=None,
        few_steps=few_steps(record),
        max_source_length=int(record.get("max_source_length", 1024)),
        max_new_tokens=int(record.get("max_target_length", 128)),
        num_beams=int(record.get("num_beams", 4)),
        decoding=decoding_facts(record, variant.id),
        measured=[],
        extra_requirements=list(EXTRA_REQUIREMENTS.get((variant.id, summarizer.method), ())),
    )
    if report:
        facts["results"] = [
            {"name": n, "label": METRIC_LABELS.get(n, n), "value": v}
            for n, v in report.get("metrics", {}).items()
            if v is not None
        ]
        facts["eval_data"] = eval_dataset(report, record)
    facts.update(extra)
    return facts


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


def hyperparameters(record: dict) -> dict[str, Any]:
    """The recorded settings, with what the trainer state says happened (optimizer steps, epochs
    covered) in place of what was asked (``num_train_epochs`` is ignored once ``max_steps`` is set)."""
    table = dict(record.get("hyperparameters", {}))
    done = record.get("training")
    if done and done.get("epochs") is not None:
        table.pop("num_train_epochs", None)
        table.pop("max_steps", None)
        table["optimizer steps"] = done["global_step"]
        table["epochs covered"] = f"{done['epochs']:.2f}"
    return table


FEW_STEPS = 10  # a model trained for fewer optimizer steps is a plumbing check (zoo --quick trains 1)


def few_steps(record: dict) -> int | None:
    """The optimizer steps of a model trained for fewer than :data:`FEW_STEPS` (its card says it is a
    test model whatever its base), else None."""
    steps = (record.get("training") or {}).get("global_step", record.get("steps"))
    return int(steps) if steps is not None and int(steps) < FEW_STEPS else None


def is_test_model(record: dict) -> bool:
    """A random ``--preset`` model (its record says so): its scores mean nothing."""
    return "preset" in str(record.get("base_model", ""))


def example_controls(variant_id: str, controls: list[Control]) -> dict:
    """An example value for every required control: the first choice, or the smallest integer.
    Other required kinds have no neutral example; the variant names one in ``card_facts``."""
    example = {}
    for control in controls:
        if not control.required:
            continue
        if control.kind == "choice" and control.choices:
            example[control.name] = control.choices[0]
        elif control.kind == "integer":
            example[control.name] = control.minimum if control.minimum is not None else 0
        else:
            raise ValueError(
                f"variant '{variant_id}': required control '{control.name}' ({control.kind}) has no "
                "example value; give one in Variant.card_facts() as 'example_controls'"
            )
    return example


def eval_results(report: dict | None, record: dict) -> list[EvalResult]:
    """The report's corpus scores as ``model-index`` entries; none without a report. A test model's
    zero scores are left out: they describe random weights, not a result anyone should compare with."""
    if not report:
        return []
    data = eval_dataset(report, record)
    scores = {name: value for name, value in report.get("metrics", {}).items() if value is not None}
    if is_test_model(record):
        scores = {name: value for name, value in scores.items() if value != 0}
    return [
        EvalResult(
            task_type="summarization",
            task_name="Controllable summarization",
            dataset_type=data["type"],
            dataset_name=data["name"],
            dataset_split=data["split"],
            metric_type=name,
            metric_name=METRIC_LABELS.get(name, name),
            metric_value=value,
        )
        for name, value in scores.items()
    ]


def eval_dataset(report: dict, record: dict) -> dict[str, str]:
    """Which data the report scored: the ``dataset`` names the report lists, else those in its data
    file when it is still there, else the training data's (SteerSum builders write train and eval
    splits from the same source). The split is named as the Hub names it (``validation``, not ``val``);
    a SteerSum set built from a Hub dataset (controls and targets added) says it is derived from it."""
    file = Path(report.get("data_file", "eval.jsonl"))
    names = report.get("datasets")
    if not names:
        try:
            names = sorted({str(r.get("dataset")) for r in read_jsonl(file) if r.get("dataset")})
        except DataError:
            names = []
    names = names or sorted(record.get("data_licenses", {})) or ["unknown"]
    hub = HUB_DATASETS.get(names[0]) if len(names) == 1 else None
    split = HUB_SPLITS.get(file.stem, file.stem)
    name = f"{', '.join(names)} {split} set ({file.name})"
    if hub:
        name += f", derived from {hub} by SteerSum (controls and targets added)"
    return {"type": hub or "+".join(names), "name": name, "split": split, "file": file.name, "hub": hub}


def license_fields(data_licenses: dict[str, str], base_model: str | None = None) -> dict[str, str]:
    """A Hub licence id when all training data and the base model (a Hub id; None for a random test
    model) share one open licence; otherwise ``other``, pointing to ``LICENSE.md``, which lists each
    one's terms (the weights derive from both)."""
    ids = {HUB_LICENSES.get(text) for text in data_licenses.values()}
    if base_model:
        ids.add(BASE_MODEL_LICENSES.get(base_model))
    if len(ids) == 1 and None not in ids:
        return {"license": ids.pop()}
    restricted = set(data_licenses) & NON_COMMERCIAL
    return {
        "license": "other",
        "license_name": "steersum-non-commercial" if restricted else "steersum-research-use",
        "license_link": LICENSE_FILE,
    }


def license_note(
    data_licenses: dict[str, str],
    base_model: str | None = None,
    tiny: bool = False,
    weights_license: str | None = None,
) -> str:
    """The data's terms, then the base model's: the weights derive from both. ``weights_license``: the
    licence of the pretrained weights a local base (SteerSum's own) was warm-started from."""
    restricted = sorted(set(data_licenses) & NON_COMMERCIAL)
    if restricted:
        note = (
            f"The training data ({', '.join(restricted)}) may be used for non-commercial research only. The "
            "weights are derived from it, so use them under the same terms: non-commercial research only."
        )
    elif license_fields(data_licenses, base_model)["license"] != "other":
        return (
            f"All training data is under {next(iter(data_licenses.values()))}, and so is the base model, "
            f"`{base_model}`; so are the weights."
            if base_model
            else f"All training data is under {next(iter(data_licenses.values()))}, and so are the weights."
        )
    else:
        note = (
            "The terms of some training data are unclear or research-only (see below); treat the weights as "
            "research use only unless you have checked each source."
        )
    if tiny:
        return note + " There is no base model: the weights started from a random initialization."
    if not base_model:
        return note
    known = BASE_MODEL_LICENSES.get(base_model)
    if not known and weights_license:
        return note + (
            f" The base model, `{base_model}`, was trained by SteerSum from pretrained weights under "
            f"{weights_license}, on the data listed here; both terms apply to the weights as well."
        )
    return note + (
        f" The base model, `{base_model}`, is under {known}; its terms apply to the weights as well."
        if known
        else f" The base model, `{base_model}`, comes with its own terms, which SteerSum does not "
        "record: check them, as they apply to the weights as well."
    )


def write_license_file(out: Path, record: dict) -> None:
    """``LICENSE.md`` for a card whose licence is ``other``: each training dataset and its terms, and
    the base model's."""
    licences = all_data_licenses(record)
    base = base_model_of(record, read_json(out / ADAPTER_CONFIG))
    base_model = base["license_base"]
    if license_fields(licences, base_model)["license"] != "other":
        return
    rows = "\n".join(f"| {name} | {text} |" for name, text in sorted(licences.items())) or "| unknown | unknown |"
    weights_license = base["weights_license"]
    if base_model:
        terms = BASE_MODEL_LICENSES.get(base_model) or (
            f"pretrained weights under {weights_license}; its training data is listed above"
            if weights_license
            else "see its Hub page"
        )
        rows += f"\n| base model `{base_model}` | {terms} |"
    note = license_note(licences, base_model, base["tiny"], weights_license)
    out.joinpath(LICENSE_FILE).write_text(
        f"# Terms of use\n\n{note}\n\n| training data | terms |\n|---|---|\n{rows}\n\n"
        "The SteerSum code that trained and runs the model is separate from these terms.\n",
        encoding="utf-8",
    )


def is_hub_id(name: str) -> bool:
    """A Hub repo id (``org/name``), not a local path: only those go in the ``base_model`` metadata."""
    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return not Path(name).exists()


def read_json(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def python_text(text: str, width: int = 88, indent: int = 4) -> str:
    """A long string as a parenthesized run of literals, so a snippet stays readable and runnable
    (a JSON string literal is a valid Python one)."""
    parts = textwrap.wrap(text, width - indent - 4, drop_whitespace=False, break_on_hyphens=False) or [""]
    return "(\n" + "".join(f"{' ' * indent}{json.dumps(part, ensure_ascii=False)}\n" for part in parts) + ")"
