"""What the Space does to a request's inputs before any model sees them, once per request: clip what is
too long (with a notice), check the document looks English, parse and bound the controls, validate them
against the summarizer's schema, and check the generation switches (γ, decoding rules).

Every user mistake raises :class:`variants.InputError` naming the value and the allowed ones; the app
shows it as ``gr.Error``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from metrics.text import STOPWORDS
from variants import InputError, Summarizer, classifier_free_guidance
from variants.base import check_document

MAX_DOCUMENT_CHARS = 20_000  # ~4k words: well past BART's 1024 tokens, short enough to score quickly
MAX_REFERENCE_CHARS = 5_000  # a reference summary is a few hundred words; ROUGE on a 2 MB one takes seconds
MAX_SUMMARY_CHARS = 5_000  # the summary /score is given: as long as any reference
MAX_LIST_ITEMS = 50  # keywords or history titles: more than a reader or a prompt can use
MAX_ITEM_CHARS = 300  # one keyword, title, entity name or topic
# A document "looks English" (every model and metric here is English-only) when at least this share of
# its words are English stop words and of its letters ASCII: halfway between English news and abstracts
# and the other languages tried (the shares measured are in docs/log.md). Shorter texts are not judged.
MIN_STOPWORD_SHARE = 0.10
MIN_ASCII_LETTER_SHARE = 0.90
MIN_LANGUAGE_WORDS = 20
LETTERS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")  # words of letters in any script


@dataclass
class Request:
    """A request's inputs, read once (:func:`read_request`): the document and reference as clipped, each
    control set bounded and validated, and the notices about what was changed or looks wrong."""

    document: str
    controls: list[dict]
    reference: str | None = None
    notices: list[str] = field(default_factory=list)


def read_request(summarizer: Summarizer, document: Any, controls: list[Any], reference: Any = None) -> Request:
    """The inputs of one request checked in order, cheapest cut first (a 2 MB reference is cut at once):
    reference, document and its language, then each control set parsed, bounded and validated against
    the summarizer's schema, so a bad value fails before anything is batched or generated."""
    reference, notices = clip_reference(reference)
    document, document_notices = clip_document(document)
    notices = document_notices + language_notices(document) + notices
    kinds = {c.name: c.kind for c in summarizer.controls()}
    checked = []
    for given in controls:
        bounded, control_notices = clip_controls(parse_controls(given), kinds)
        notices += control_notices
        checked.append(summarizer.variant.validate(bounded, summarizer.assets))
    return Request(document, checked, reference, notices)


def check_constraints(constraints: Any) -> bool:
    """The API's ``constraints`` switch: True (the default) decodes as the model is served, with its
    variant's decoding rules where it has them; False generates with the model alone."""
    if constraints is None or constraints == "":
        return True
    if isinstance(constraints, str) and constraints.strip().lower() in ("true", "false"):
        return constraints.strip().lower() == "true"
    if not isinstance(constraints, bool):
        raise InputError(
            f"constraints must be true (the decoding rules, as served) or false (the model alone), got {constraints!r}"
        )
    return constraints


def check_strength(guidance: Any) -> float | None:
    """The API's ``guidance`` (γ) checked: None (the model's default) or a number from 1 to 10."""
    if guidance is None or guidance == "":
        return None
    try:
        return classifier_free_guidance.check_strength(float(guidance) if isinstance(guidance, str) else guidance)
    except ValueError as err:
        raise InputError(str(err)) from None


def parse_controls(text: str | dict | None) -> dict:
    """Controls as the API receives them: a JSON object (string), e.g. ``{"topic": "sport"}``."""
    if isinstance(text, dict) or text is None:
        return text or {}
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        controls = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            f"controls is not valid JSON ({err.msg} at column {err.colno}); "
            'give a JSON object such as {"topic": "sport"}'
        ) from None
    if not isinstance(controls, dict):
        raise InputError(f'controls must be a JSON object such as {{"topic": "sport"}}, got {type(controls).__name__}')
    return controls


def clip_document(document: Any, limit: int = MAX_DOCUMENT_CHARS) -> tuple[str, list[str]]:
    """The document checked and, past ``limit`` characters, cut at a word boundary with a notice."""
    document = check_document(document)
    if not any(character.isalnum() for character in document):
        raise InputError("document has no letters or digits: give the text to summarize")
    cut = clip_text(document, limit)
    if cut == document:
        return document, []
    return cut, [f"the document has {len(document):,} characters; only the first {len(cut):,} were summarized"]


def language_notices(document: str) -> list[str]:
    """A notice when the document does not look English (too few English stop words, or letters
    mostly outside ASCII; see :data:`MIN_STOPWORD_SHARE`): a cheap check, no language model."""
    words = [w.lower() for w in LETTERS.findall(document)]
    if len(words) < MIN_LANGUAGE_WORDS:
        return []
    letters = [c for c in document if c.isalpha()]
    stop = sum(w in STOPWORDS for w in words) / len(words)
    ascii_share = sum(c.isascii() for c in letters) / len(letters)
    if stop >= MIN_STOPWORD_SHARE and ascii_share >= MIN_ASCII_LETTER_SHARE:
        return []
    return [
        f"the document does not look English ({stop:.0%} of its words are English stop words, against 21-44 % "
        f"in English news and abstracts; {ascii_share:.0%} of its letters are ASCII): every model, baseline and "
        "metric here is English-only, so the summary and its scores mean little; give an English text"
    ]


def clip_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at a word boundary when there is one."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not (text[limit - 1].isspace() or text[limit].isspace()) and len(head.split()) > 1:
        head = head.rsplit(None, 1)[0]  # drop the word the limit cut through
    return head.rstrip()


def clip_reference(reference: Any, limit: int = MAX_REFERENCE_CHARS) -> tuple[str | None, list[str]]:
    """The reference summary (None when blank) cut to ``limit`` characters with a notice, before
    anything reads it: ROUGE against a reference of megabytes takes seconds (docs/log.md)."""
    if reference is None or (isinstance(reference, str) and not reference.strip()):
        return None, []
    if not isinstance(reference, str):
        raise InputError(f"reference must be text, got {type(reference).__name__}")
    reference = reference.strip()
    cut = clip_text(reference, limit)
    if cut == reference:
        return reference, []
    return cut, [f"the reference has {len(reference):,} characters; only the first {len(cut):,} were scored against"]


def clip_controls(
    controls: dict, kinds: dict[str, str], max_items: int = MAX_LIST_ITEMS, max_chars: int = MAX_ITEM_CHARS
) -> tuple[dict, list[str]]:
    """Control values bounded before validation, with a notice for each cut: a list control
    (``kinds[name]`` keywords or history; a comma-separated string counts as a list) keeps its first
    ``max_items`` entries, and every text, in a list or not, its first ``max_chars`` characters."""
    clipped, notices = {}, []
    for name, value in controls.items():
        if kinds.get(name) in ("keywords", "history") and isinstance(value, str):
            value = [part for part in (p.strip() for p in value[: max_items * (max_chars + 1)].split(",")) if part]
        if isinstance(value, list) and len(value) > max_items:
            notices.append(f"control '{name}' has {len(value):,} entries; only the first {max_items} were used")
            value = value[:max_items]
        if isinstance(value, list) and any(isinstance(v, str) and len(v) > max_chars for v in value):
            notices.append(f"control '{name}': entries past {max_chars} characters were cut")
            value = [clip_text(v, max_chars) if isinstance(v, str) else v for v in value]
        elif isinstance(value, str) and len(value) > max_chars:
            notices.append(f"control '{name}' has {len(value):,} characters; only the first {max_chars} were used")
            value = clip_text(value, max_chars)
        clipped[name] = value
    return clipped, notices
