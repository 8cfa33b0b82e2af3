"""The serving contract: what every controllable summarizer family declares and provides.

A variant is a schema of controls plus the functions that serve them, in the order a request meets them:

* ``controls`` / ``validate`` — the typed schema of the user's controls (``controls_for(assets)``, the one
  place a variant declares it). The Space turns it into widgets; the API and the training data loader
  validate against it.
* ``prepare(document, controls, method, assets)`` — the *one* function that turns a document and its
  controls into model inputs. Training, evaluation, the Space and the model card's usage snippet
  all call it, so a model is always given what it was trained on.
* ``unconditional`` and ``constraints`` — the control-free twin input (for guidance) and the decoding
  rules the controls imply.
* ``load(path, record)`` — a trained checkpoint as a :class:`Summarizer` (written once here; a variant
  reads its own files in ``load_assets``); ``baseline()`` — the paper's model-free baseline.
* ``score``, ``evidence``, ``suggestions`` — live metrics that say whether the controls were obeyed, the
  words that show it, and control values worth offering for a document.

How a variant is evaluated (test sets, metric names, the paper's numbers) is a second, separate
contract: ``variant.evaluation`` (:mod:`variants.evaluation`). A checkpoint folder says which variant it
belongs to in ``steersum.json`` (:data:`RECORD_FILE`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from models.windows import WINDOW_SETTINGS
from store.compact import file_sha256

from .evaluation import Evaluation, whole_groups  # noqa: F401  (whole_groups: test sets cut by document)
from .valid_controls import ValidControls

RECORD_FILE = "steersum.json"


class InputError(ValueError):
    """A user mistake (empty document, bad control): shown to the user as is, the server keeps serving."""


class ControlError(InputError):
    """A control value the variant cannot take; the message names it and the allowed values."""


def check_document(document: Any) -> str:
    if not isinstance(document, str) or not document.strip():
        raise InputError("document is empty: give the text to summarize")
    return document.strip()


def check_value(control: dict, value, error=ValueError):
    """One control's value normalized, or ``error`` (a ValueError) naming it and what is allowed; the control
    as its ``to_json`` gives it (and as an exported processor's ``processor_config.json`` lists it)."""
    name, kind = control["name"], control["kind"]
    if kind == "choice":
        if not isinstance(value, str) or not value.strip():
            raise error(f"control '{name}' must be one of {list(control['choices'])}, got {value!r}")
        value = value.strip()
        if value not in control["choices"] and not control.get("open"):
            raise error(f"unknown {name} {value!r}; allowed: {', '.join(control['choices'])}")
        return value
    if kind == "text":
        if not isinstance(value, str):
            raise error(f"control '{name}' must be text, got {type(value).__name__}")
        return value.strip()
    if kind in ("keywords", "history"):
        if isinstance(value, str):
            value = [part for part in (p.strip() for p in value.split(",")) if part]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise error(f"control '{name}' must be a list of strings, got {value!r}")
        return [v.strip() for v in value if v.strip()]
    if kind == "integer":
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        low, high = control.get("minimum"), control.get("maximum")
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or not ((low is None or value >= low) and (high is None or value <= high))
        ):
            raise error(f"control '{name}' must be an integer in [{low}, {high}], got {value!r}")
        return value
    raise ValueError(f"control '{name}' has unknown kind {kind!r}")


@dataclass(frozen=True)
class Control:
    """One user-facing control.

    ``kind`` is one of ``choice`` (one of ``choices``; ``open=True`` also accepts free text, e.g. an
    unseen topic), ``text``, ``keywords`` (list of strings), ``integer`` (``minimum``..``maximum``)
    and ``history`` (list of texts, e.g. a user's clicked titles).
    """

    name: str
    kind: str
    help: str
    choices: tuple[str, ...] = ()
    open: bool = False
    default: Any = None
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: Any) -> Any:
        """Return the value normalized, or raise :class:`ControlError` naming it and what is allowed."""
        return check_value(self.to_json(), value, ControlError)

    def to_json(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Paper:
    title: str
    authors: str
    year: int
    url: str
    bibtex: str


@dataclass
class Prepared:
    """Model inputs for one document: the source text and any extra per-example inputs
    (e.g. ``{"topic_ids": 3}`` for topic embeddings)."""

    text: str
    extra: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


@dataclass
class Score:
    """One live metric: its value, a one-line meaning for the reader, optional details (for a plot)."""

    value: float | None
    meaning: str
    details: dict[str, Any] | None = None


def reference_scores(summary: str, reference: str | None, against: str = "the reference") -> dict[str, Score]:
    """ROUGE-1/2/Lsum F1 of a summary against a reference, for a variant's ``score``; none without a
    reference, 0 for an empty summary."""
    if not reference:
        return {}
    from metrics.rouge import rouge

    r = rouge([summary], [[reference]], allow_empty=True)["examples"][0]
    return {name: Score(r[name], f"{name} F1 against {against}") for name in ("rouge1", "rouge2", "rougeLsum")}


@dataclass
class Summary:
    text: str
    notices: list[str] = field(default_factory=list)


class Summarizer:
    """Something that summarizes under a variant's controls: a baseline or a loaded model."""

    variant: Variant
    name: str
    method: str
    assets: Any = None
    # A loaded model's weights, tokenizer and generation settings (variants.seq2seq.GenerationSettings);
    # None for a model-free baseline, so a caller asks ``summarizer.settings is None``, never hasattr.
    model: Any = None
    tokenizer: Any = None
    settings: Any = None

    def controls(self) -> tuple[Control, ...]:
        """The controls this summarizer accepts (a trained model may narrow the variant's choices)."""
        return self.variant.controls_for(self.assets)

    def summarize(self, documents: list[str], controls: list[dict], **generation: Any) -> list[Summary]:
        raise NotImplementedError


class Baseline(Summarizer):
    """A model-free summarizer (a paper's extractive baseline): each document on its own, checked and
    with its controls validated, through :meth:`extract`."""

    method = "extractive"

    def __init__(self, variant: Variant, assets: Any = None):
        self.variant, self.assets = variant, assets

    def extract(self, document: str, controls: dict) -> Summary:
        raise NotImplementedError

    def summarize(self, documents: list[str], controls: list[dict], **_: Any) -> list[Summary]:
        if len(documents) != len(controls):
            raise ValueError(f"{len(documents)} documents but {len(controls)} control sets")
        return [
            self.extract(check_document(document), self.variant.validate(given, self.assets))
            for document, given in zip(documents, controls)
        ]


class Variant:
    """Base class of the serving contract; a variant's package subclasses it, sets the class attributes and
    implements :meth:`prepare`, :meth:`baseline` and :meth:`score`. Its evaluation (test sets, metric names,
    the paper's numbers) is a separate object, :attr:`evaluation` (:mod:`variants.evaluation`)."""

    id: str
    title: str
    description: str
    paper: Paper
    methods: tuple[str, ...]
    # How the variant is evaluated: ``variant.evaluation`` is one of these, made for the variant.
    evaluation_class: type[Evaluation] = Evaluation

    def __init__(self):
        self.evaluation = self.evaluation_class(self)

    # --- the controls ------------------------------------------------------------------------
    def controls_for(self, assets: Any = None) -> tuple[Control, ...]:
        """The controls a summarizer with these assets accepts (a trained model may narrow the choices,
        e.g. the topics its embedding table knows). Every variant declares its controls here."""
        raise NotImplementedError(f"variant '{self.id}' declares no controls: define controls_for(assets)")

    @property
    def controls(self) -> tuple[Control, ...]:
        """The controls of the variant's default assets (the baseline's)."""
        return self.controls_for(self.default_assets())

    def default_assets(self) -> Any:
        """What the baseline, scoring and pasting read when no checkpoint gives its own (a topic space,
        the bundled readers, a vectorizer), built once. Default: none."""
        return None

    def validate(self, controls: dict | None, assets: Any = None) -> ValidControls:
        """The controls checked (:meth:`check_controls`) and marked as checked, once per request: controls this
        variant validated against the same assets already come back as they are (:mod:`variants.valid_controls`)."""
        if isinstance(controls, ValidControls) and controls.checked_for(self.id, assets):
            return controls
        return ValidControls(self.check_controls(controls, assets), self.id, assets)

    def check_controls(self, controls: dict | None, assets: Any = None) -> dict:
        """Check a controls object against the schema: unknown names, bad values and missing required
        controls raise :class:`ControlError` naming the problem and the allowed values. A variant with
        checks the schema cannot state (two controls that exclude each other) extends this, not validate."""
        if controls is None:
            controls = {}
        if not isinstance(controls, dict):
            raise ControlError(f"controls must be a JSON object, got {type(controls).__name__}")
        schema = {c.name: c for c in self.controls_for(assets)}
        unknown = sorted(set(controls) - set(schema))
        if unknown:
            raise ControlError(
                f"unknown control(s) {', '.join(unknown)} for variant '{self.id}'; allowed: {', '.join(schema)}"
            )
        checked = {}
        for name, control in schema.items():
            value = controls.get(name)
            if value is None or value == "" or value == []:
                if control.required:
                    raise ControlError(
                        f"control '{name}' is required for variant '{self.id}'"
                        + (f"; allowed: {', '.join(control.choices)}" if control.choices else "")
                    )
                if control.default is not None:
                    checked[name] = control.default
                continue
            checked[name] = control.check(value)
        return checked

    def check_method(self, method: str) -> str:
        if method not in self.methods:
            raise ControlError(
                f"unknown method {method!r} for variant '{self.id}'; allowed: {', '.join(self.methods)}"
            )
        return method

    # --- implemented by each variant -------------------------------------------------------
    def prepare(self, document: str, controls: dict, method: str, assets: Any = None) -> Prepared:
        raise NotImplementedError

    def baseline(self) -> Summarizer:
        raise NotImplementedError

    def score(
        self, summary: str, document: str, controls: dict, reference: str | None = None, assets: Any = None
    ) -> dict[str, Score]:
        raise NotImplementedError

    # --- loading a checkpoint ----------------------------------------------------------------
    def load(self, path: Path, record: dict, device: str | None = None, **kwargs: Any) -> Summarizer:
        """A trained checkpoint as a summarizer: the model and tokenizer through
        :func:`variants.seq2seq.load_seq2seq` (full, compact or adapter folders alike), with the assets
        :meth:`load_assets` reads from the folder."""
        from .seq2seq import Seq2SeqSummarizer, load_seq2seq

        model, tokenizer = load_seq2seq(path, device, **kwargs)
        assets = self.load_assets(Path(path), record, model, tokenizer)
        name = record.get("name", Path(path).name)
        return Seq2SeqSummarizer(self, name, record["method"], model, tokenizer, assets, record)

    def load_assets(self, path: Path, record: dict, model: Any, tokenizer: Any) -> Any:
        """What a checkpoint carries besides weights (its topic space, vectorizer, readers), given the
        loaded model and tokenizer. Default: none."""
        return None

    # --- optional ----------------------------------------------------------------------------
    def unconditional(self, document: str, method: str, assets: Any = None) -> Prepared:
        """The same document with the controls removed: the input classifier-free guidance contrasts the
        controlled one with (:mod:`variants.classifier_free_guidance`), and the one control dropout trains on
        (``--control-dropout``), so it is in distribution. Its ``extra`` has the keys ``prepare``'s has,
        so both batch together. Default: ``prepare`` with no controls."""
        return self.prepare(document, {}, method, assets)

    def relevance(self, text: str, controls: dict, assets: Any = None) -> float:
        """How much a window of a document holds of what the ``controls`` ask for (``window_mode`` "pick"), from
        the summarizer's own assets, never a metric's judge, as the variant's processor scores it."""
        raise NotImplementedError(f"variant '{self.id}' has no window relevance: its windows can only be fused")

    def constraints(self, controls: dict, assets: Any = None) -> Any:
        """The decoding rules for these (validated) controls, a
        :class:`variants.decoding_rules.DecodingRules`, for controls that are a number or a list (a
        length bin, keywords) or that pick document sentences; ``None``: none. Used when the generation
        settings ask for them."""
        return None

    def evidence(self, summary: str, controls: dict, assets: Any = None) -> list[str]:
        """Words or phrases of ``summary`` that show the controls at work (topic terms, keywords,
        entity mentions), so the Space can highlight them. ``controls`` are validated. Default: none."""
        return []

    def suggestions(self, document: str, assets: Any = None) -> dict[str, list[str]]:
        """Values worth offering for some controls given this document (e.g. the entities it names,
        the bundled readers), keyed by control name, so the Space can propose them. Default: none."""
        return {}

    # --- publishing (hub_cards) ----------------------------------------------------------------
    def processor(self, summarizer: Summarizer) -> Any:
        """The self-contained processor an exported repo ships (``models/<name>/processing_<name>.py``):
        the same code as :meth:`prepare`, with this summarizer's settings and files, so that
        ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` gives a Hub user the model's
        inputs without SteerSum. Default: none (the repo ships no processor)."""
        raise NotImplementedError(f"variant '{self.id}' has no processor for its exported repos")

    def card_facts(self, assets: Any = None) -> dict[str, Any]:
        """Facts for this variant's model card (``hub_cards/templates/<id>.md``) that its schema cannot
        give, e.g. ``example_controls`` (needed when a required control is not a choice or an integer)
        and ``example_document`` for the usage snippet; any key overrides the card's own fact of
        that name (see :mod:`hub_cards.card`). Default: none."""
        return {}


def processor_settings(summarizer: Summarizer, **settings: Any) -> dict[str, Any]:
    """What every processor's ``processor_config.json`` holds: the variant, method, source length, how a longer
    document is read (:data:`WINDOW_SETTINGS` of the summarizer's settings) and the controls' schema (checked
    as :meth:`Control.check` does), then the variant's own ``settings``."""
    generation = getattr(summarizer, "settings", None)
    return {
        "variant": summarizer.variant.id,
        "method": summarizer.method,
        "max_source_length": int(getattr(summarizer, "max_source_length", 1024)),
        **{name: getattr(generation, name) for name in WINDOW_SETTINGS if hasattr(generation, name)},
        "controls": [control.to_json() for control in summarizer.controls()],
        **settings,
    }


def read_record(path: str | Path) -> dict:
    """The checkpoint's ``steersum.json``: variant id, method and the settings it was trained with."""
    file = Path(path) / RECORD_FILE
    if not file.is_file():
        raise FileNotFoundError(f"{path}: not a SteerSum checkpoint (no {RECORD_FILE})")
    record = json.loads(file.read_text(encoding="utf-8"))
    if "variant" not in record:
        raise ValueError(f"{file}: missing field 'variant'")
    return record


def write_record(path: str | Path, record: dict) -> None:
    Path(path, RECORD_FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


WEIGHT_CHECKSUMS = "weights_sha256"  # steersum.json field: weight file name -> sha256, written by hub_cards export


def verify_weights(path: str | Path, record: dict) -> None:
    """Check every weight file the record has a checksum for (an exported repo has them): a file
    changed by a bad download or a disk fault loads without complaint otherwise, as safetensors only
    checks its header."""
    for name, expected in sorted(record.get(WEIGHT_CHECKSUMS, {}).items()):
        file = Path(path) / name
        if not file.is_file():
            raise ValueError(f"{file}: missing; {RECORD_FILE} lists it among the weights")
        if file_sha256(file) != expected:
            raise ValueError(
                f"{file}: sha256 does not match {RECORD_FILE} (the file is corrupt or was changed); "
                "download or export it again"
            )
