"""The model card's text: one Jinja template per variant family, ``templates/<variant id>.md``, which
extends ``templates/base.md`` (a variant without a template of its own gets ``base.md``), filled with the
facts below, under the front matter of :mod:`hub_cards.card_metadata` (licence, datasets, the eval report
as ``model-index``); whose terms the weights carry is :mod:`hub_cards.licenses`.

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
from huggingface_hub import ModelCard

from variants.base import Control, Summarizer, read_record
from variants.sources import all_data_licenses

from .base_model import adapter_config, base_model_of
from .card_metadata import METRIC_LABELS, card_data, eval_dataset
from .licenses import license_note

TEMPLATES = Path(__file__).with_name("templates")
REPORT_FILE = "eval_report.json"  # written by training.evaluate
PLACEHOLDER_REPO = "ORG/NAME"
MISSING = "[More Information Needed]"  # huggingface_hub's template default; never in a SteerSum card

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
    adapter = adapter_config(folder)
    custom_code = bool((read_json(folder / "config.json") or {}).get("auto_map"))
    repo_id = repo_id or PLACEHOLDER_REPO
    facts = gather_facts(summarizer, record, report, repo_id, adapter, custom_code)
    facts["processor_file"] = next((p.name for p in sorted(folder.glob("processing_*.py"))), None)
    facts["custom_generate"] = (folder / CUSTOM_GENERATE).is_file()
    facts["added_tokens"] = added_tokens(adapter)
    facts["measured"] = list(measured or [])
    facts["base_architecture"] = architecture_name(summarizer)
    data = card_data(summarizer, facts, record, report, adapter, custom_code)
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
# How a card names each text rule a model is served with (variants.decoding_rules.TEXT_RULES).
TEXT_RULE_WORDS = {
    "document_words": "the document-words rule (a word of several tokens, or one that starts with a digit, is one the "
    "document writes: names and numbers are copied, not invented)",
    "finish_sentences": "the finished-sentences rule (no end before the text ends a sentence)",
    "no_repeat_trigrams": "no repeated trigram (a repeat taken only where nothing else is left)",
    "no_doubled_words": "no word twice in a row (taken again only where nothing else is left)",
    "verbatim_quotes": "verbatim quotes (inside quotation marks, only the document's own words in its order)",
    "document_names": 'document names (a name of one token, such as "London", only where the document writes it, '
    "and a name after a name only as the document writes the two)",
}
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
PUNKT = "`nltk` with its Punkt data (`nltk.download('punkt_tab')`)"
MINILM = (
    "the MiniLM encoder `sentence-transformers/all-MiniLM-L6-v2` (downloaded on first use; transformers embeds "
    "with it, no sentence-transformers package)"
)
# What a processor needs besides transformers (and peft), by (variant, method).
EXTRA_REQUIREMENTS = {("persona", "interest-prefix"): (MINILM, PUNKT)}
# What the decoding rules need, where the model is served with them: they read the document's sentences (Punkt);
# persona's rules prefer the reader's sentences, which MiniLM picks.
RULE_REQUIREMENTS = {"persona": (MINILM, PUNKT)}


def requirements(variant_id: str, method: str, rules: bool) -> list[str]:
    """What the repo's processor and served decoding need besides transformers (and peft)."""
    needed = list(EXTRA_REQUIREMENTS.get((variant_id, method), ()))
    for requirement in RULE_REQUIREMENTS.get(variant_id, (PUNKT,)) if rules else ():
        needed += [requirement] if requirement not in needed else []
    return needed


def added_tokens(adapter: dict | None) -> list[int]:
    """The token ids an adapter adds to its base's vocabulary (peft's ``trainable_token_indices``)."""
    indices = (adapter or {}).get("trainable_token_indices") or []
    return sorted(indices.get("embed_tokens", []) if isinstance(indices, dict) else indices)


INT8_DTYPES = ("int8", "int8-weights")  # the generation dtypes that requantize the decoder's weights on a CPU


def decoding_facts(record: dict, variant_id: str) -> dict[str, Any]:
    """How SteerSum serves the model (its record): decoding rules, control strength γ, the text rules
    (:data:`variants.decoding_rules.TEXT_RULES`), int8 decoder weights, and the windows a longer document is
    read in (``source_windows``)."""
    from variants.classifier_free_guidance import read_strength

    guidance = float(read_strength(record, 1) or 1)
    rules = bool(record.get("constraints"))
    from variants.decoding_rules import TEXT_RULES

    text_rules = {rule: bool(record.get(rule)) for rule in TEXT_RULES}
    served = []
    if rules:
        described = DECODING_RULES.get(variant_id, "the variant's decoding rules")
        served.append(f"decoding rules ({described})")
    if guidance != 1:
        served.append(
            f"classifier-free guidance at control strength γ = {guidance:g} (the controlled input contrasted with "
            "the control-free one)"
        )
    served += [words for rule, words in TEXT_RULE_WORDS.items() if text_rules.get(rule)]
    return {
        "rules": rules,
        "served": ", ".join(served[:-1]) + (" and " if len(served) > 1 else "") + (served[-1] if served else ""),
        "guidance": guidance,
        "int8": record.get("dtype") in INT8_DTYPES,
        "measured_int8": record.get("measured_dtype") in INT8_DTYPES,
        "source_windows": int(record.get("source_windows") or 1),
        "window_mode": record.get("window_mode") or "fuse",
        "pick_ratio": float(record.get("pick_ratio") or 1.0),
        **text_rules,
        "plain": not (rules or any(text_rules.values())) and guidance == 1 and record.get("dtype") not in INT8_DTYPES,
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
        extra_requirements=requirements(variant.id, summarizer.method, bool(record.get("constraints"))),
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


def read_json(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def python_text(text: str, width: int = 88, indent: int = 4) -> str:
    """A long string as a parenthesized run of literals, so a snippet stays readable and runnable
    (a JSON string literal is a valid Python one)."""
    parts = textwrap.wrap(text, width - indent - 4, drop_whitespace=False, break_on_hyphens=False) or [""]
    return "(\n" + "".join(f"{' ' * indent}{json.dumps(part, ensure_ascii=False)}\n" for part in parts) + ")"
