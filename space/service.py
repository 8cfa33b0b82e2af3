"""The Space's inference service: the facade the UI and the API both call, five calls over the catalog's
models (``summarize``, ``compare``, ``sweep``, ``score``, ``variants``).

A request goes through three modules, in order: :mod:`space.inputs` reads it once (clipping, language
check, controls bounded and validated), :mod:`space.batching` generates it (one torch thread, batched with
concurrent requests, models cached), and this module scores the result (the variant's live metrics, the
evidence to highlight, text-quality scores) and returns plain dicts (JSON as the API returns them).

User mistakes raise :class:`variants.InputError` with a message naming the problem and the allowed
values; the app shows it as ``gr.Error`` and logs it as one line. Results carry notices for inputs that
change nothing or outputs that are not what they seem: a document that does not look English, a summary
that stopped at the model's token limit mid-sentence, and each text-quality score (:mod:`metrics.quality`)
a summary fails, its length against the length its controls ask for included. The scores themselves are
the result's ``quality``.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import asdict

import metrics.rouge  # noqa: F401  (silences rouge-score's absl INFO line per scorer, for every metric)
from metrics.quality import UNFINISHED, length_against, length_notices, quality, quality_notices
from variants import InputError, Summarizer
from variants.base import Score
from variants.decoding_rules import TEXT_RULES

from .batching import ModelCache, Switches
from .catalog import Catalog
from .inputs import (
    MAX_SUMMARY_CHARS,
    check_constraints,
    check_strength,
    clip_controls,
    clip_document,
    clip_reference,
    clip_text,
    language_notices,
    parse_controls,
    read_request,
)

log = logging.getLogger(__name__)

MAX_SWEEP_VALUES = 25  # an integer control is swept over its whole range when it has at most this many values
SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")  # a summary that ends a sentence


def log_user_error(where: str, err: Exception) -> None:
    """A user's mistake is one line in the server log (gradio printed a full traceback for each, dozens
    of lines per bad call); a server-side failure keeps its traceback."""
    log.info("user error in %s: %s", where, " ".join(str(err).split())[:500])


def unfinished_notices(summarizer: Summarizer, text: str) -> list[str]:
    """A notice when a generated summary stopped at the model's ``max_new_tokens`` without ending a
    sentence (it is cut mid-sentence). Every model variant shares the cause; the text is kept as
    generated, so the scores shown are those of what the model wrote (as in its evaluation). The
    token count is the summary re-tokenized: at the limit, BART has written ``max_new_tokens - 1``
    tokens after its forced start token (T5 ``max_new_tokens``); one token of slack covers a pair that
    re-tokenizing merges. A summary without end punctuation that stopped by itself that close to the
    limit is flagged too: it is nearly always cut there as well."""
    if summarizer.settings is None or summarizer.tokenizer is None:  # a baseline: no token limit
        return []
    limit = summarizer.settings.max_new_tokens
    if not text.strip() or SENTENCE_END.search(text.strip()):
        return []
    tokens = len(summarizer.tokenizer(text, add_special_tokens=False)["input_ids"])
    if tokens < limit - 2:
        return []
    return [f"the summary ends mid-sentence: generation stopped at the model's limit of {limit} new tokens"]


def summary_notices(summarizer: Summarizer, text: str, document: str) -> list[str]:
    """The quality notices of a generated summary (:func:`metrics.quality.quality_notices`), then
    :func:`unfinished_notices`; the one that says it ends no sentence is left out when the other says why."""
    unfinished = unfinished_notices(summarizer, text)
    return [n for n in quality_notices(text, document) if not (unfinished and n == UNFINISHED)] + unfinished


def asked_length(summarizer: Summarizer, controls: dict) -> tuple[int | None, int | None]:
    """The word range the (validated) controls ask for, as the variant's decoding rules state it whether
    or not the model decodes with them (CCS's length bin: its bounds, the last bin open above);
    ``(None, None)`` where the controls ask for no length."""
    rules = summarizer.variant.constraints(controls, summarizer.assets)
    return getattr(rules, "min_words", None), getattr(rules, "max_words", None)


def sweep_values(control) -> tuple:
    """The values a sweep runs through: a choice control's choices, an integer control's whole range
    when it has at most :data:`MAX_SWEEP_VALUES` values (CCS length: bins 0-4); else none."""
    if control.kind == "choice" and control.choices:
        return tuple(control.choices)
    if (
        control.kind == "integer"
        and control.minimum is not None
        and control.maximum is not None
        and control.maximum - control.minimum < MAX_SWEEP_VALUES
    ):
        return tuple(range(control.minimum, control.maximum + 1))
    return ()


def distinctive(summarizer: Summarizer, summary: str, controls: dict, max_values: int = 12) -> list[str]:
    """The variant's evidence for ``controls`` less the weak terms: a term that is also evidence for
    more than half of the other values of a choice control (up to ``max_values`` of them) marks none
    of them (the topic variant's "come", "make", "mr" belong to most topics). A control whose values
    all give the same evidence (it does not drive it) is left out of the reckoning."""
    variant, assets = summarizer.variant, summarizer.assets
    evidence = variant.evidence(summary, controls, assets)
    for control in summarizer.controls():
        others = [v for v in control.choices if v != controls.get(control.name)]
        if control.kind != "choice" or control.name not in controls or not others or len(others) >= max_values:
            continue
        other_evidence = [set(variant.evidence(summary, {**controls, control.name: v}, assets)) for v in others]
        if all(found == set(evidence) for found in other_evidence):
            continue
        evidence = [t for t in evidence if sum(t in found for found in other_evidence) * 2 <= len(others)]
    return evidence


def highlight(text: str, evidence: list[str]) -> list[tuple[str, str | None]]:
    """``text`` split into (span, label) pieces, label ``"evidence"`` on whole-word, case-insensitive
    matches of the evidence terms (longest first, so a phrase wins over its words)."""
    terms = sorted({t.strip() for t in evidence if t.strip()}, key=len, reverse=True)
    if not terms:
        return [(text, None)]
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, terms)) + r")(?!\w)", re.IGNORECASE)
    pieces, start = [], 0
    for match in pattern.finditer(text):
        pieces += [(text[start : match.start()], None)] if match.start() > start else []
        pieces.append((match.group(0), "evidence"))
        start = match.end()
    return pieces + ([(text[start:], None)] if start < len(text) else [])


class Service:
    """The catalog's models behind five calls: ``summarize``, ``compare``, ``sweep``, ``score`` and
    ``variants``. Results are plain dicts (JSON as the API returns them).

    Every generating call takes two switches: ``guidance``, the control strength γ from 1 to 10 (None: the
    model's default), and ``constraints``, True to decode as the model is served (with its variant's
    decoding rules where it has them), False for the model alone."""

    def __init__(
        self,
        catalog: Catalog,
        max_models: int = 4,
        max_bytes: int = 8 << 30,
        max_wait: float = 0.005,
        max_batch: int = 16,
        dtype: str | None = None,
    ):
        self.catalog = catalog
        self.cache = ModelCache(max_models, max_bytes, dtype, max_wait=max_wait, max_batch=max_batch)

    def summarizer(self, variant: str, model: str) -> Summarizer:
        return self.cache.get(self.catalog.get(variant, model)).summarizer

    def variants(self) -> dict:
        """The catalog and each variant's control schema (what ``/variants`` returns). ``models`` are best
        measured first, by the leaderboard metrics ``ordered_by`` names (:mod:`space.standing`)."""
        return {
            "variants": {
                v.id: {
                    "title": v.title,
                    "description": v.description,
                    "methods": list(v.methods),
                    "paper": {
                        "title": v.paper.title,
                        "authors": v.paper.authors,
                        "year": v.paper.year,
                        "url": v.paper.url,
                    },
                    "controls": [c.to_json() for c in v.controls_for(None)],
                    "models": [e.to_json() for e in self.catalog.models(v.id)],
                    "ordered_by": self.catalog.ordered_by.get(v.id, []),
                }
                for v in self.catalog.registry.values()
            }
        }

    def controls(self, variant: str, model: str):
        """The controls a model accepts (a trained model may narrow its variant's choices)."""
        return self.summarizer(variant, model).controls()

    def default_guidance(self, variant: str, model: str) -> float:
        """The model's default control strength γ (1 for a baseline: it has nothing to guide)."""
        settings = self.summarizer(variant, model).settings
        return settings.control_strength if settings is not None else 1.0

    def summarize(
        self,
        document: str,
        variant: str,
        model: str,
        controls: dict | str | None,
        reference: str | None = None,
        guidance: float | None = None,
        constraints: bool = True,
    ) -> dict:
        """One summary under ``controls``, scored."""
        return self._summarize_many(document, variant, model, [controls], reference, guidance, constraints)[0]

    def compare(
        self,
        document: str,
        variant: str,
        models: list[str],
        controls: dict | str | None,
        reference: str | None = None,
        guidance: float | None = None,
        constraints: bool = True,
    ) -> list[dict]:
        """The same document and controls through several models of one variant."""
        served = [e.model for e in self.catalog.models(variant, available=True)]
        if len(served) < 2:
            raise InputError(
                f"variant '{variant}' serves only one model ({', '.join(served)}): there is nothing "
                "to compare it with; use /summarize, or serve trained models (python -m space "
                "--models-dir checkpoints)"
            )
        if len(set(models)) < 2:
            raise InputError(
                f"choose at least two models to compare (got {len(set(models))}); allowed: {', '.join(served)}"
            )
        return [
            self.summarize(document, variant, model, controls, reference, guidance, constraints) for model in models
        ]

    def sweep(
        self,
        document: str,
        variant: str,
        model: str,
        control: str,
        controls: dict | str | None,
        reference: str | None = None,
        guidance: float | None = None,
        constraints: bool = True,
    ) -> list[dict]:
        """One model, every value of one control (every topic; every CCS length bin 0-4), generated
        as one batch: choice controls over their choices, integer controls over their range."""
        values_of = {c.name: sweep_values(c) for c in self.controls(variant, model)}
        schema = {name: values for name, values in values_of.items() if values}
        if not schema:
            raise InputError(
                f"variant '{variant}' has no control with a list of values to sweep: "
                "its controls are free text, so try values one by one with Generate"
            )
        if control not in schema:
            raise InputError(f"cannot sweep {control!r} for variant '{variant}'; allowed: {', '.join(schema)}")
        base = parse_controls(controls)
        values = schema[control]
        results = self._summarize_many(
            document, variant, model, [{**base, control: v} for v in values], reference, guidance, constraints
        )
        return [{"value": value, **result} for value, result in zip(values, results)]

    def score(
        self,
        summary: str,
        document: str,
        variant: str,
        controls: dict | str | None,
        reference: str | None = None,
        model: str = "baseline",
    ) -> dict:
        """Live metrics for a given summary, under the controls of ``model`` (default: the baseline's)."""
        summarizer = self.summarizer(variant, model)
        if not isinstance(summary, str) or not summary.strip():
            raise InputError("summary is empty: give the summary to score")
        summary, notices = summary.strip(), []
        if len(summary) > MAX_SUMMARY_CHARS:
            notices.append(
                f"the summary has {len(summary):,} characters; only the first "
                f"{len(clip_text(summary, MAX_SUMMARY_CHARS)):,} were scored"
            )
            summary = clip_text(summary, MAX_SUMMARY_CHARS)
        reference, reference_notices = clip_reference(reference)
        document, document_notices = clip_document(document)
        document_notices += language_notices(document)
        kinds = {c.name: c.kind for c in summarizer.controls()}
        controls, control_notices = clip_controls(parse_controls(controls), kinds)
        checked = summarizer.variant.validate(controls, summarizer.assets)
        notices = document_notices + notices + reference_notices + control_notices + quality_notices(summary, document)
        return self._scored(summarizer, model, summary, document, checked, reference, notices, {})

    def _summarize_many(
        self,
        document: str,
        variant: str,
        model: str,
        controls: list[dict | str | None],
        reference: str | None,
        guidance: float | None = None,
        constraints: bool = True,
    ) -> list[dict]:
        start = time.perf_counter()
        switches = Switches(check_strength(guidance), check_constraints(constraints))
        batcher = self.cache.get(self.catalog.get(variant, model))
        summarizer = batcher.summarizer
        request = read_request(summarizer, document, controls, reference)  # fails fast, before batching
        summaries = batcher.submit([request.document] * len(request.controls), request.controls, switches)
        seconds = {"generate": (time.perf_counter() - start) / len(request.controls)}
        notices, settings = list(request.notices), summarizer.settings
        if settings is None and switches.guidance not in (None, 1.0):
            notices.append("control strength applies to trained models; this model-free baseline ignores it")
        if settings is None and not switches.constraints:
            notices.append("decoding rules apply to trained models; this model-free baseline has none to turn off")
        if settings is None:
            used = {"guidance": 1.0, "constraints": False, **dict.fromkeys(TEXT_RULES, False)}
        else:  # what the model generated under: its own settings, but for the request's switches
            guidance = switches.guidance if switches.guidance is not None else settings.control_strength
            used = {
                "guidance": guidance,
                "constraints": settings.constraints and switches.constraints,
                **{rule: getattr(settings, rule) and switches.constraints for rule in TEXT_RULES},
            }
        return [
            {
                **self._scored(
                    summarizer,
                    model,
                    s.text,
                    request.document,
                    c,
                    request.reference,
                    notices + s.notices + summary_notices(summarizer, s.text, request.document),
                    dict(seconds),
                ),
                **used,
            }
            for s, c in zip(summaries, request.controls)
        ]

    def _scored(
        self,
        summarizer: Summarizer,
        model: str,
        summary: str,
        document: str,
        controls: dict,
        reference: str | None,
        notices: list[str],
        seconds: dict,
    ) -> dict:
        start = time.perf_counter()
        variant, assets = summarizer.variant, summarizer.assets
        scores: dict[str, Score] = variant.score(summary, document, controls, reference or None, assets)
        evidence = distinctive(summarizer, summary, controls)
        bounds = asked_length(summarizer, controls)
        seconds["metrics"] = time.perf_counter() - start
        return {
            "variant": variant.id,
            "model": model,
            "summary": summary,
            # the text checks beside the control metrics: metrics.quality's, and the length against the asked one
            "quality": {**quality([summary], [document])[0], **length_against(summary, *bounds)},
            "controls": controls,
            "scores": {name: asdict(score) for name, score in scores.items()},
            "evidence": evidence,
            "notices": list(dict.fromkeys(notices + length_notices(summary, *bounds))),
            "seconds": seconds,
        }
