"""The variant contract: what every controllable summarizer family declares and provides.

A variant is data plus five functions:

* ``controls`` — a typed schema of the user's controls. The Space turns it into widgets, the API and
  the training data loader validate against it (:meth:`Variant.validate`).
* ``prepare(document, controls, method, assets)`` — the *one* function that turns a document and its
  controls into model inputs. Training, evaluation, the Space and the model card's usage snippet
  all call it, so a model is always given what it was trained on.
* ``baseline()`` — the paper's model-free baseline, a :class:`Baseline` (needs no weights).
* ``load(path, record)`` — a trained checkpoint as a :class:`Summarizer`.
* ``score(summary, document, controls, ...)`` — live metrics that say whether the controls were obeyed.

A checkpoint folder says which variant it belongs to in ``steersum.json`` (:data:`RECORD_FILE`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from store.compact import file_sha256

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
    """Base class; subclasses set the class attributes and implement the methods below."""

    id: str
    title: str
    description: str
    paper: Paper
    methods: tuple[str, ...]
    controls: tuple[Control, ...]
    metric_names: tuple[str, ...] = ()
    # The metrics (of metric_names) that measure obedience to the controls: the leaderboard and every
    # evaluation report give their control effect, given minus shuffled controls (training.sensitivity).
    control_metrics: tuple[str, ...] = ()
    # The paper's own numbers for its main table, shown beside ours on the leaderboard and labelled
    # "reported in paper" (different data and base model). Each: {"system": ..., "source": "Table 2",
    # "metrics": {metric name: value on the same scale as ours}}.
    reported: tuple[dict, ...] = ()
    # Metrics (of metric_names) where lower is better (a length error, EGISES): their control effect is
    # good when negative, and the pasted row is beaten by scoring below it (training.sensitivity).
    lower_is_better: tuple[str, ...] = ()
    # Corpus control metrics that contrast two per-example scores (name -> (one side's, the other's)),
    # e.g. CCSBench's ΔFKGL: their control effect gets an interval as the per-example metrics' do.
    contrasts: dict[str, tuple[str, str]] = {}

    def controls_for(self, assets: Any = None) -> tuple[Control, ...]:
        return self.controls

    def validate(self, controls: dict | None, assets: Any = None) -> dict:
        """Check a controls object against the schema: unknown names, bad values and missing required
        controls raise :class:`ControlError` naming the problem and the allowed values."""
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

    def load(self, path: Path, record: dict, device: str | None = None, **kwargs: Any) -> Summarizer:
        raise NotImplementedError

    def score(
        self, summary: str, document: str, controls: dict, reference: str | None = None, assets: Any = None
    ) -> dict[str, Score]:
        raise NotImplementedError

    # --- optional ----------------------------------------------------------------------------
    def paste(self, lead: str, controls: dict, assets: Any = None) -> str:
        """The pasted-controls adversary: ``lead`` (a control-blind Lead-k) with the controls' own words
        pasted in (the topic's terms, the entity's name, the keywords, ...), the cheapest way to look
        obedient. Every control metric must score the controlled baseline well above it
        (:mod:`training.sensitivity`). ``controls`` are validated. Default: ``lead`` unchanged."""
        return lead

    def unconditional(self, document: str, method: str, assets: Any = None) -> Prepared:
        """The same document with the controls removed: the input classifier-free guidance contrasts the
        controlled one with (:mod:`variants.guidance`), and the one control dropout trains on
        (``--control-dropout``), so it is in distribution. Its ``extra`` has the keys ``prepare``'s has,
        so both batch together. Default: ``prepare`` with no controls."""
        return self.prepare(document, {}, method, assets)

    def constraints(self, controls: dict, assets: Any = None) -> Any:
        """The hard constraints of the decoder for these (validated) controls, a
        :class:`variants.constraints.HardConstraints`, for controls that are a number or a list (a
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

    def corpus_scores(self, records: list[dict], rows: list[dict], source: str = "<records>") -> dict[str, Any]:
        """Metrics that only exist for a whole test set (e.g. EGISES compares the summaries of one
        article for all its readers), from the examples and their evaluation rows (``summary`` and
        the live scores). :func:`training.evaluate.evaluate` adds them to the report's ``metrics``.
        Default: none."""
        return {}

    def breakdown(self, rows: list[dict]) -> dict[str, dict]:
        """Corpus metrics per group of examples (e.g. per composition of controls), for the report's
        ``breakdown``. Default: none."""
        return {}

    def report_extras(self, records: list[dict], rows: list[dict]) -> dict[str, Any]:
        """Fields an evaluation report carries beside ``metrics`` for this variant (e.g. ROUGE per
        reader, a note that the data is simulated), from the examples and their rows. Default: none."""
        return {}

    # Test sets with human references scored beside the derived one (e.g. MACSum-Doc's topic- and
    # length-focused summaries), by name; :meth:`extra_test_set` builds each.
    extra_test_sets: tuple[str, ...] = ()

    def extra_test_set(self, name: str, max_samples: int | None = None) -> list[dict]:
        """The records of the extra test set ``name`` (one of :attr:`extra_test_sets`), shaped like
        :meth:`test_examples`' and the same on every call."""
        raise KeyError(
            f"variant '{self.id}' has no test set {name!r}; it has: "
            f"{', '.join(self.extra_test_sets) or 'none besides its derived one'}"
        )

    def test_examples(self, max_samples: int | None = None) -> list[dict]:
        """The bundled test set the leaderboard scores every system of this variant on
        (``python -m benchmarks leaderboard``): at most ``max_samples`` records shaped like training
        data (``{"id", "document", "controls", "target", "dataset"}``), the same on every call.
        Default: none, and the leaderboard skips the variant with a note."""
        return []


def processor_settings(summarizer: Summarizer, **settings: Any) -> dict[str, Any]:
    """What every processor's ``processor_config.json`` holds: the variant, method, source length and the
    controls' schema (checked as :meth:`Control.check` does), then the variant's own ``settings``."""
    return {
        "variant": summarizer.variant.id,
        "method": summarizer.method,
        "max_source_length": int(getattr(summarizer, "max_source_length", 1024)),
        "controls": [control.to_json() for control in summarizer.controls()],
        **settings,
    }


def by_length(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices in batches of ``batch_size``, longest sources first: each batch holds similar lengths, so
    little of it is padding (generation batches in evaluation and serving). Callers put results back
    by index."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def whole_groups(records: list[dict], max_samples: int | None, key: str = "doc_id") -> list[dict]:
    """The first records, whole groups only (records sharing ``key``, e.g. one document's): as many
    groups as fit in ``max_samples`` records, at least one. A test set whose shuffled controls stay
    within a document cut this way leaves no record alone with its own controls to shuffle."""
    if max_samples is None:
        return records
    groups: dict[Any, list[dict]] = {}
    for record in records:
        groups.setdefault(record[key], []).append(record)
    kept: list[dict] = []
    for group in groups.values():
        if kept and len(kept) + len(group) > max_samples:
            break
        kept += group
    return kept


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
