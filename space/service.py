"""The Space's inference service: plain functions the UI and the API both call.

* Models are loaded on first use and cached per (variant, model) id, least recently used evicted
  past ``max_models`` or ``max_bytes`` of weights, so a Space with many checkpoints stays in memory.
* Concurrent requests for one model are gathered by a :class:`Batcher` into one ``summarize`` call:
  a worker takes the first waiting request and more while they keep arriving (each within
  ``max_wait``, 5 ms; all within ``max_delay``, 50 ms; at most ``max_batch``), and generates them
  together. A batched ``generate`` costs far less than its requests one by one, so throughput
  grows with the load (``benchmarks/serving.py`` measures it).
* Every model load and ``generate`` runs on one thread, :data:`TORCH_THREAD` (see :func:`on_torch_thread`).
* Loading puts weights on the GPU in bf16 when there is one (:func:`variants.seq2seq.load_seq2seq`);
  on ZeroGPU hardware (the ``spaces`` package is importable) generation runs under ``spaces.GPU``.

User mistakes raise :class:`variants.InputError` with a message naming the problem and the allowed
values; the app shows it as ``gr.Error`` and logs it as one line. A model that fails to load raises
:class:`ModelLoadError` (an ``InputError``: the caller can pick another model), naming the model and
the reason; its traceback goes to the server log once.

Results carry notices for inputs that change nothing or outputs that are not what they seem: a
document that does not look English, a summary that stopped at the model's token limit mid-sentence,
and each text-quality score (:mod:`metrics.quality`) a summary fails: one that does not end a sentence,
repeats three words, or names a name or number its document does not hold. The scores themselves are
the result's ``quality``.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from typing import Any

import metrics.rouge  # noqa: F401  (silences rouge-score's absl INFO line per scorer, for every metric)
from metrics.quality import UNFINISHED, quality, quality_notices
from metrics.text import STOPWORDS
from variants import InputError, Summarizer
from variants.base import Score, Summary, check_document
from variants.guidance import check_guidance

from .catalog import Catalog, Entry

log = logging.getLogger(__name__)

MAX_DOCUMENT_CHARS = 20_000  # ~4k words: well past BART's 1024 tokens, short enough to score quickly
MAX_REFERENCE_CHARS = 5_000  # a reference summary is a few hundred words; ROUGE on 2 MB took 11 s
MAX_SUMMARY_CHARS = 5_000  # the summary /score is given: as long as any reference
MAX_LIST_ITEMS = 50  # keywords or history titles: more than a reader or a prompt can use
MAX_ITEM_CHARS = 300  # one keyword, title, entity name or topic
MAX_SWEEP_VALUES = 25  # an integer control is swept over its whole range when it has at most this many values
# A document "looks English" (every model and metric here is English-only) when at least this share of
# its words are English stop words and of its letters ASCII. Measured on the bundled test sets (BBC,
# SciTLDR, CNN/DM; 810 documents): stop words are 21-44 % of the words (lowest 0.213), ASCII 99.4-100 %
# of the letters; a German, French, Spanish and Italian news paragraph: 0-5 % stop words; Russian: 0 %
# ASCII. The limits sit halfway: 10 % and 90 %. Texts under MIN_LANGUAGE_WORDS words are not judged.
MIN_STOPWORD_SHARE = 0.10
MIN_ASCII_LETTER_SHARE = 0.90
MIN_LANGUAGE_WORDS = 20
SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")  # a summary that ends a sentence
LETTERS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")  # words of letters in any script

try:  # ZeroGPU: a GPU is attached only inside functions decorated with spaces.GPU
    import spaces

    on_gpu = spaces.GPU
except ImportError:

    def on_gpu(function):
        return function


# libgomp gives each thread that runs a parallel torch op a pool of its own OpenMP workers, and once
# the pools hold more threads than the machine has cores it stops spin-waiting them between ops. A
# model loaded on one thread and run on another (the batcher's) took 2.2 s for a 400-word tdsum summary
# on 2 cores, against 0.95 s on the thread that loaded it. So all torch work in the Space goes to one
# long-lived thread; on 2 cores two generate calls at once would only compete for them anyway.
TORCH_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="steersum-torch")


def on_torch_thread(function, *args):
    """``function(*args)`` run on :data:`TORCH_THREAD`; its result or its exception."""
    return TORCH_THREAD.submit(function, *args).result()


@on_gpu
def _generate(
    summarizer: Summarizer, documents: list[str], controls: list[dict], guidance: float | None = None
) -> list[Summary]:
    if guidance is None or getattr(summarizer, "settings", None) is None:
        return summarizer.summarize(documents, controls)
    return summarizer.summarize(documents, controls, settings=summarizer.settings.but(guidance=guidance))


def generate(
    summarizer: Summarizer, documents: list[str], controls: list[dict], guidance: float | None = None
) -> list[Summary]:
    """Summaries on the torch thread; ``guidance`` (None: the model's default) is the control strength γ."""
    return on_torch_thread(_generate, summarizer, documents, controls, guidance)


def check_strength(guidance: Any) -> float | None:
    """The API's ``guidance`` (γ) checked: None (the model's default) or a number from 1 to 10."""
    if guidance is None or guidance == "":
        return None
    try:
        return check_guidance(float(guidance) if isinstance(guidance, str) else guidance)
    except ValueError as err:
        raise InputError(str(err)) from None


class Batcher:
    """Gathers concurrent requests for one summarizer into batched ``summarize`` calls.

    The worker thread starts with the first request and ends after ``idle`` seconds without one, so
    an evicted model's batcher and weights go away by themselves.
    """

    def __init__(
        self,
        summarizer: Summarizer,
        max_wait: float = 0.005,
        max_delay: float = 0.05,
        max_batch: int = 16,
        idle: float = 30.0,
    ):
        self.summarizer, self.max_wait, self.max_delay = summarizer, max_wait, max_delay
        self.max_batch, self.idle = max_batch, idle
        self.batch_sizes: list[int] = []  # what each generate call got (the benchmark reads it)
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def submit(self, documents: list[str], controls: list[dict], guidance: float | None = None) -> list[Summary]:
        futures = [Future() for _ in documents]
        with self._lock:
            for document, control, future in zip(documents, controls, futures):
                self._queue.put((document, control, future, guidance))
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="batcher", daemon=True)
                self._worker.start()
        return [future.result() for future in futures]

    def _work(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=self.idle)
            except queue.Empty:
                with self._lock:  # a submit holding the lock has either queued (we go on) or not (we stop)
                    if self._queue.empty():
                        self._worker = None
                        return
                continue
            # keep gathering while requests keep coming (gaps under max_wait), for at most max_delay
            batch, deadline = [first], time.monotonic() + self.max_delay
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get(timeout=max(0.0, min(self.max_wait, deadline - time.monotonic()))))
                except queue.Empty:
                    break
            self._run(batch)

    def _run(self, batch: list[tuple[str, dict, Future, float | None]]) -> None:
        # requests at different control strengths are generated apart (γ is a setting of the whole call)
        strengths = list(dict.fromkeys(item[3] for item in batch))
        for guidance in strengths:
            self._run_at([item[:3] for item in batch if item[3] == guidance], guidance)

    def _run_at(self, batch: list[tuple[str, dict, Future]], guidance: float | None) -> None:
        self.batch_sizes.append(len(batch))
        batch = sorted(batch, key=lambda item: len(item[0]))  # similar lengths side by side: less padding
        try:
            summaries = generate(self.summarizer, [d for d, _, _ in batch], [c for _, c, _ in batch], guidance)
        except Exception:
            # One bad request must not fail the others: run them one by one, each gets its own error.
            for document, controls, future in batch:
                try:
                    future.set_result(generate(self.summarizer, [document], [controls], guidance)[0])
                except Exception as err:
                    future.set_exception(err)
            return
        for (_, _, future), summary in zip(batch, summaries):
            future.set_result(summary)


def log_user_error(where: str, err: Exception) -> None:
    """A user's mistake is one line in the server log (gradio printed a full traceback for each:
    977 lines for 35 bad calls); a server-side failure keeps its traceback."""
    log.info("user error in %s: %s", where, " ".join(str(err).split())[:500])


class ModelLoadError(InputError):
    """A model of the catalog that could not be loaded (missing or corrupt weights, out of memory):
    the message names the model and the reason, so an API caller learns what failed instead of an
    opaque error."""


def load_entry(entry: Entry) -> Summarizer:
    """``entry.load()`` on the torch thread; any failure becomes a :class:`ModelLoadError`."""
    try:
        return on_torch_thread(entry.load)
    except Exception as err:
        log.warning(
            "model %s (%s) failed to load from %s",
            entry.model,
            entry.variant,
            entry.location or entry.source,
            exc_info=True,
        )
        reason = str(err).strip().splitlines()[0][:300] if str(err).strip() else "no message"
        raise ModelLoadError(
            f"model {entry.model!r} of variant '{entry.variant}' could not be loaded "
            f"({type(err).__name__}: {reason}); pick another model"
        ) from None


class ModelCache:
    """Summarizers with their batchers, by (variant, model); least recently used dropped first."""

    def __init__(self, max_models: int = 4, max_bytes: int = 8 << 30, dtype: str | None = None, **batching: Any):
        self.max_models, self.max_bytes, self.dtype, self.batching = max_models, max_bytes, dtype, batching
        self._cache: OrderedDict[tuple[str, str], tuple[Batcher, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple[str, str], threading.Lock] = {}

    def get(self, entry: Entry) -> Batcher:
        key = (entry.variant, entry.model)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key][0]
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:  # concurrent first requests load the model once
            with self._lock:
                if key in self._cache:
                    return self._cache[key][0]
            summarizer = load_entry(entry)
            if self.dtype and hasattr(summarizer, "settings"):  # the Space's --dtype over the model's own
                summarizer.settings = summarizer.settings.but(dtype=self.dtype)
            batcher = Batcher(summarizer, **self.batching)
            with self._lock:
                self._cache[key] = (batcher, weight_bytes(batcher.summarizer))
                while len(self._cache) > 1 and (
                    len(self._cache) > self.max_models
                    or sum(size for _, size in self._cache.values()) > self.max_bytes
                ):
                    self._cache.popitem(last=False)
            return batcher

    def loaded(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._cache)


def weight_bytes(summarizer: Summarizer) -> int:
    model = getattr(summarizer, "model", None)
    if model is None or not hasattr(model, "parameters"):
        return 0
    return sum(p.numel() * p.element_size() for p in model.parameters())


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


def unfinished_notices(summarizer: Summarizer, text: str) -> list[str]:
    """A notice when a generated summary stopped at the model's ``max_new_tokens`` without ending a
    sentence (it is cut mid-sentence). Every model variant shares the cause; the text is kept as
    generated, so the scores shown are those of what the model wrote (as in its evaluation). The
    token count is the summary re-tokenized: at the limit, BART has written ``max_new_tokens - 1``
    tokens after its forced start token (T5 ``max_new_tokens``); one token of slack covers a pair that
    re-tokenizing merges. A summary without end punctuation that stopped by itself that close to the
    limit is flagged too: it is nearly always cut there as well."""
    settings, tokenizer = getattr(summarizer, "settings", None), getattr(summarizer, "tokenizer", None)
    limit = getattr(settings, "max_new_tokens", None)
    if not text.strip() or SENTENCE_END.search(text.strip()) or tokenizer is None or limit is None:
        return []
    tokens = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    if tokens < limit - 2:
        return []
    return [f"the summary ends mid-sentence: generation stopped at the model's limit of {limit} new tokens"]


def summary_notices(summarizer: Summarizer, text: str, document: str) -> list[str]:
    """The quality notices of a generated summary (:func:`metrics.quality.quality_notices`), then
    :func:`unfinished_notices`; the one that says it ends no sentence is left out when the other says why."""
    unfinished = unfinished_notices(summarizer, text)
    return [n for n in quality_notices(text, document) if not (unfinished and n == UNFINISHED)] + unfinished


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
    anything reads it: ROUGE against a 2 MB reference took 11 s."""
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
    ``variants``. Results are plain dicts (JSON as the API returns them)."""

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
        """The catalog and each variant's control schema (what ``/variants`` returns)."""
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
                }
                for v in self.catalog.registry.values()
            }
        }

    def controls(self, variant: str, model: str):
        """The controls a model accepts (a trained model may narrow its variant's choices)."""
        return self.summarizer(variant, model).controls()

    def default_guidance(self, variant: str, model: str) -> float:
        """The model's default control strength γ (1 for a baseline: it has nothing to guide)."""
        settings = getattr(self.summarizer(variant, model), "settings", None)
        return settings.guidance if settings is not None else 1.0

    def summarize(
        self,
        document: str,
        variant: str,
        model: str,
        controls: dict | str | None,
        reference: str | None = None,
        guidance: float | None = None,
    ) -> dict:
        """``guidance``: the control strength γ, 1 to 10 (None: the model's default)."""
        return self._summarize_many(document, variant, model, [parse_controls(controls)], reference, guidance)[0]

    def compare(
        self,
        document: str,
        variant: str,
        models: list[str],
        controls: dict | str | None,
        reference: str | None = None,
        guidance: float | None = None,
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
        return [self.summarize(document, variant, model, controls, reference, guidance) for model in models]

    def sweep(
        self,
        document: str,
        variant: str,
        model: str,
        control: str,
        controls: dict | str | None,
        reference: str | None = None,
        guidance: float | None = None,
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
            document, variant, model, [{**base, control: v} for v in values], reference, guidance
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
        controls, control_notices = self._bounded(summarizer, parse_controls(controls))
        checked = summarizer.variant.validate(controls, summarizer.assets)
        notices = document_notices + notices + reference_notices + control_notices + quality_notices(summary, document)
        return self._scored(summarizer, model, summary, document, checked, reference, notices, {})

    @staticmethod
    def _bounded(summarizer: Summarizer, controls: dict) -> tuple[dict, list[str]]:
        return clip_controls(controls, {c.name: c.kind for c in summarizer.controls()})

    def _summarize_many(
        self,
        document: str,
        variant: str,
        model: str,
        controls: list[dict],
        reference: str | None,
        guidance: float | None = None,
    ) -> list[dict]:
        start = time.perf_counter()
        guidance = check_strength(guidance)
        batcher = self.cache.get(self.catalog.get(variant, model))
        summarizer = batcher.summarizer
        reference, reference_notices = clip_reference(reference)  # first: a 2 MB reference is cut at once
        document, notices = clip_document(document)
        notices += language_notices(document)
        bounded = [self._bounded(summarizer, c) for c in controls]
        notices += reference_notices + [n for _, control_notices in bounded for n in control_notices]
        checked = [summarizer.variant.validate(c, summarizer.assets) for c, _ in bounded]  # fail fast, before batching
        summaries = batcher.submit([document] * len(checked), checked, guidance)
        seconds = {"generate": (time.perf_counter() - start) / len(checked)}
        settings = getattr(summarizer, "settings", None)
        if guidance not in (None, 1.0) and settings is None:
            notices.append("control strength applies to trained models; this model-free baseline ignores it")
        used = {
            "guidance": guidance
            if guidance is not None and settings is not None
            else (settings.guidance if settings is not None else 1.0)
        }
        return [
            {
                **self._scored(
                    summarizer,
                    model,
                    s.text,
                    document,
                    c,
                    reference,
                    notices + s.notices + summary_notices(summarizer, s.text, document),
                    dict(seconds),
                ),
                **used,
            }
            for s, c in zip(summaries, checked)
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
        seconds["metrics"] = time.perf_counter() - start
        return {
            "variant": variant.id,
            "model": model,
            "summary": summary,
            "quality": quality([summary], [document])[0],
            "controls": controls,
            "scores": {name: asdict(score) for name, score in scores.items()},
            "evidence": evidence,
            "notices": list(dict.fromkeys(notices)),
            "seconds": seconds,
        }
