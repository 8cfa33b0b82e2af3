"""Loading and batched generation shared by every variant whose model is a Hugging Face seq2seq model.

A variant supplies ``prepare``; this module loads the model and turns prepared inputs into padded batches
(truncating sources that exceed the model's limit, with a notice), runs ``generate`` on GPU when there is
one, and decodes, writing the text as the document writes its words (:mod:`variants.postprocess`); one
batch's steps are :mod:`variants.steering`'s.

How a model generates is one :class:`GenerationSettings` per summarizer (beams, new tokens, early
stopping, batch size, dtype), read from the checkpoint's record: evaluation, the leaderboard and the
Space all go through :meth:`Seq2SeqSummarizer.summarize` with it, so a score and a demo come from the
same decoding. Batches are formed from sources sorted by length (little padding; outputs come back in
the caller's order) and, on a CPU, run under bf16 autocast, through an int8 copy of the model, or
through a copy whose decoder reads int8 weights when the settings say so (``benchmarks/generation.py``
and ``benchmarks/store_latency.py`` measure speed and agreement with fp32).
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from tokenizers import AddedToken
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

import models  # noqa: F401  (registers SteerSum's architectures with the Auto classes)
from models.windows import PICK_RATIO, SOURCE_WINDOWS, WINDOW_MODE, WINDOW_MODES

from .base import Summarizer, Summary, Variant, check_document, read_record, write_record
from .classifier_free_guidance import OLD_STRENGTH_FIELDS, STRENGTH_FIELD, check_strength, read_strength
from .decoding_rules import NAME_WORDS, TEXT_RULES
from .speedups import int8_copy, int8_weights_copy
from .steering import Steering, by_length, decoded, pad, read_windows

DTYPES = ("auto", "bfloat16", "float32", "int8", "int8-weights")


@dataclass(frozen=True)
class GenerationSettings:
    """How a summarizer generates, in one place for evaluation, the leaderboard and the Space.

    ``early_stopping``: a beam search ends as soon as every beam has finished (no waiting for a
    better hypothesis that cannot come). ``batch_size``: sources per ``generate`` call, sorted by
    length. ``dtype``: ``float32``; ``bfloat16`` (bf16 autocast on CPU; refused on a CPU without
    bf16 instructions); ``auto``: bf16 autocast where the CPU has AVX512-BF16 or AMX, else fp32;
    ``int8``: an int8 copy of the model's Linear layers (:func:`int8_copy`): faster on a CPU without
    AMX, at a measured cost in quality (``benchmarks/RESULTS.md``), so never the default;
    ``int8-weights``: a copy whose decoder reads its weights as int8 (:func:`int8_weights_copy`), for
    a request's few rows, where a decoding step waits on reading weights; a stored model whose record
    says so generates this way. On a GPU the weights' own dtype rules (:func:`load_seq2seq` loads
    bf16 there).

    ``source_windows``: how many windows of ``max_source_length`` tokens a longer document is read in, its
    decoder attending to all of them (:func:`variants.decoding.fuse_windows`); 1: the document is cut. A
    checkpoint's default is its generation config's ``source_windows``. It is how the model reads, not a
    rule on what it writes, so :meth:`alone` keeps it. ``window_mode`` "pick" (the generation config's
    ``window_mode``): the model reads only the window its controls ask for most
    (:meth:`variants.base.Variant.relevance`) when it scores more than ``pick_ratio`` times the first window
    (else the first), a rule of the variant's: :meth:`alone` reads the first window, as the model was trained.

    ``control_strength``: γ of classifier-free guidance (:mod:`variants.decoding`; ``guidance_scale`` at
    ``generate``), 1 for plain generation, up to 10; a checkpoint's default is its generation config's
    ``control_strength`` (:func:`save_default_strength`). ``constraints``: apply the variant's decoding
    rules (:class:`variants.decoding_rules.DecodingRules`: a length bin, keywords, preferred sentences), for
    variants that declare them. ``document_words``: names and numbers from the document only (the rule
    that reads no control, :class:`variants.text_rules.DocumentWordsLogitsProcessor`; a checkpoint's
    default is its generation config's ``document_words``). ``finish_sentences``: no end before the text ends a
    sentence (:class:`variants.text_rules.SentenceEndLogitsProcessor`, reading no control either; the
    default is the generation config's). ``no_repeat_trigrams``: no token trigram twice unless nothing else
    is left (:class:`variants.text_rules.NoRepeatNgramsLogitsProcessor`). ``no_doubled_words``: no word twice
    in a row (:class:`variants.text_rules.NoDoubledWordsLogitsProcessor`). ``verbatim_quotes``: what a summary
    quotes, the document writes (:class:`variants.text_rules.VerbatimQuotesLogitsProcessor`). ``document_names``:
    a name of one token is the document's (:class:`variants.text_rules.DocumentNamesLogitsProcessor`, its names the
    generation config's ``name_words``). These six are :data:`variants.decoding_rules.TEXT_RULES`. :meth:`alone`:
    the model alone, none of them.
    """

    num_beams: int = 4
    max_new_tokens: int = 128
    early_stopping: bool = True
    batch_size: int = 8
    dtype: str = "float32"
    control_strength: float = 1.0
    constraints: bool = False
    document_words: bool = False
    finish_sentences: bool = False
    no_repeat_trigrams: bool = False
    no_doubled_words: bool = False
    verbatim_quotes: bool = False
    document_names: bool = False
    source_windows: int = 1
    window_mode: str = "fuse"
    pick_ratio: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "control_strength", check_strength(self.control_strength))
        for name in ("constraints", *TEXT_RULES):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"generation {name} must be true or false, got {getattr(self, name)!r}")
        if self.window_mode not in WINDOW_MODES:
            raise ValueError(
                f"generation window_mode must be one of {', '.join(WINDOW_MODES)}, got {self.window_mode!r}"
            )
        if not isinstance(self.pick_ratio, (int, float)) or self.pick_ratio < 1:
            raise ValueError(f"generation pick_ratio must be a number of at least 1, got {self.pick_ratio!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"generation dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        for name in ("num_beams", "max_new_tokens", "batch_size", "source_windows"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"generation {name} must be a positive integer, got {getattr(self, name)!r}")

    @classmethod
    def from_record(cls, record: dict, **overrides: Any) -> GenerationSettings:
        """A checkpoint's settings: the beams and target length it was trained and evaluated with."""
        given = {
            "max_new_tokens": int(record.get("max_target_length", cls.max_new_tokens)),
            "num_beams": int(record.get("num_beams", cls.num_beams)),
            "control_strength": read_strength(record, cls.control_strength),
            "constraints": bool(record.get("constraints", cls.constraints)),
            **{rule: bool(record.get(rule, False)) for rule in TEXT_RULES},
            SOURCE_WINDOWS: int(record.get(SOURCE_WINDOWS, cls.source_windows)),
            WINDOW_MODE: record.get(WINDOW_MODE, cls.window_mode),
            PICK_RATIO: float(record.get(PICK_RATIO, cls.pick_ratio)),
            "dtype": record.get("dtype", cls.dtype),
        }
        return cls(**{**given, **{k: v for k, v in overrides.items() if v is not None}})

    def but(self, **changes: Any) -> GenerationSettings:
        """A copy with the given (non-None) fields changed."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def alone(self) -> GenerationSettings:
        """The model alone: γ = 1 and no decoding rules (neither the variant's nor the text's), and no window
        picked for it (it reads the first, as trained; fused windows it keeps)."""
        picked = {"source_windows": 1, "window_mode": "fuse"} if self.window_mode == "pick" else {}
        return self.but(control_strength=1.0, constraints=False, **dict.fromkeys(TEXT_RULES, False), **picked)

    def generate_kwargs(self) -> dict:
        """The keyword arguments of ``model.generate``."""
        kwargs = {"max_new_tokens": self.max_new_tokens, "num_beams": self.num_beams}
        if self.num_beams > 1:  # meaningless (and warned about) for greedy decoding
            kwargs["early_stopping"] = self.early_stopping
        return kwargs

    def model(self, model):
        """The model that generates: ``model`` itself, or on CPU with dtype ``int8`` (``int8-weights``)
        its int8 copy (its copy with int8 decoder weights), which generates with ``model``'s own generation
        config: a default set after the copy was made (a text rule's names, chosen on val) holds for it too."""
        if model.device.type != "cpu" or self.dtype not in ("int8", "int8-weights"):
            return model
        copied = int8_copy(model) if self.dtype == "int8" else int8_weights_copy(model)
        copied.generation_config = model.generation_config
        return copied

    def autocast(self, device: torch.device | str):
        """The context generation runs in: bf16 autocast on a CPU when the settings ask for it."""
        if str(device).startswith("cpu") and self.dtype in ("auto", "bfloat16"):
            if cpu_has_bf16():
                return torch.autocast("cpu", dtype=torch.bfloat16)
            if self.dtype == "bfloat16":
                raise RuntimeError(
                    "generation dtype 'bfloat16' asked for, but this CPU has no bf16 instructions "
                    "(AVX512-BF16 or AMX); use 'auto' or 'float32'"
                )
        return contextlib.nullcontext()

    def to_json(self) -> dict:
        return asdict(self)


@lru_cache(maxsize=1)
def cpu_has_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX); without it bf16 is emulated and slow."""
    checks = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    if any(check is not None for check in checks):
        return any(check() for check in checks if check is not None)
    try:  # older torch: the kernel's own flags
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def pick_device(device: str | None = None) -> str:
    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def load_seq2seq(path: str | Path, device: str | None = None, **kwargs: Any):
    """Model and tokenizer from a checkpoint folder; bf16 on a GPU that supports it, fp32 on CPU. The
    store's folders load too: a compact (int8) model dequantized, an adapter on its base (:mod:`store`)."""
    from store import load_stored_model, tokenizer_folder

    device = pick_device(device)
    dtype = torch.bfloat16 if device.startswith("cuda") and torch.cuda.is_bf16_supported() else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder(path), **kwargs)
    model = load_stored_model(path, **kwargs)
    if model is None:
        model = AutoModelForSeq2SeqLM.from_pretrained(path, dtype=dtype, **kwargs)
    return model.to(dtype).to(device).eval(), tokenizer


class Seq2SeqSummarizer(Summarizer):
    """A trained checkpoint: ``prepare`` → ``encode`` → ``generate`` → decode, in batches."""

    def __init__(self, variant: Variant, name: str, method: str, model, tokenizer, assets: Any, record: dict):
        self.variant, self.name, self.method = variant, name, method
        self.model, self.tokenizer, self.assets, self.record = model, tokenizer, assets, record
        # A checkpoint saved from training can carry use_cache=False (its config's, copied into its generation
        # config): without the cache every step re-runs the whole prefix and the cross-attention projections
        # (GSum's stored adapter: 13 s instead of 2 s for a 400-word article). The outputs are the same.
        generation_config = getattr(model, "generation_config", None)
        if generation_config is not None:
            generation_config.use_cache = True
        self.max_source_length = int(record.get("max_source_length", 1024))
        self.settings = GenerationSettings.from_record(
            {
                **record,
                STRENGTH_FIELD: default_strength(model, record),
                **{rule: bool(getattr(generation_config, rule, False)) for rule in TEXT_RULES},
                SOURCE_WINDOWS: int(getattr(generation_config, SOURCE_WINDOWS, None) or 1),
                WINDOW_MODE: getattr(generation_config, WINDOW_MODE, None) or "fuse",
                PICK_RATIO: float(getattr(generation_config, PICK_RATIO, None) or 1.0),
            }
        )

    @property
    def generation(self) -> dict:
        """``model.generate`` keyword arguments of :attr:`settings`."""
        return self.settings.generate_kwargs()

    @torch.inference_mode()
    def summarize(
        self,
        documents: list[str],
        controls: list[dict],
        batch_size: int | None = None,
        settings: GenerationSettings | None = None,
        **generation: Any,
    ) -> list[Summary]:
        """Summaries in the order of ``documents``, generated in batches of similar source lengths under
        ``settings`` (default: :attr:`settings`; ``batch_size`` and ``generate`` keywords override it)."""
        if len(documents) != len(controls):
            raise ValueError(f"{len(documents)} documents but {len(controls)} control sets")
        settings = (settings or self.settings).but(batch_size=batch_size)
        documents = [check_document(d) for d in documents]
        checked = [self.variant.validate(c, self.assets) for c in controls]
        prepared = [self.variant.prepare(d, c, self.method, self.assets) for d, c in zip(documents, checked)]
        parts, ids, truncated = read_windows(
            self.tokenizer,
            lambda i, text: self.variant.prepare(text, checked[i], self.method, self.assets),
            documents,
            self.max_source_length,
            settings.source_windows,
            (lambda i, text: self.variant.relevance(text, checked[i], self.assets))
            if settings.window_mode == "pick"
            else None,
            settings.pick_ratio,
        )
        steering = Steering(self, settings, documents, checked, prepared, parts)
        summaries: list[Summary | None] = [None] * len(prepared)
        for rows in by_length([sum(map(len, x)) for x in ids], settings.batch_size):
            batch = pad(self.tokenizer, [ids[i] for i in rows], [prepared[i] for i in rows])
            batch = {k: v.to(self.model.device) for k, v in batch.items()}
            with settings.autocast(self.model.device):
                output = steering.generate(settings.model(self.model), rows, generation, batch)
            for i, text in zip(rows, self.tokenizer.batch_decode(output, skip_special_tokens=True)):
                summaries[i] = decoded(text, prepared[i], truncated[i], self.max_source_length, documents[i], parts[i])
        return summaries


def default_strength(model, record: dict) -> float:
    """A checkpoint's default control strength: its generation config's ``control_strength`` (or
    ``control_guidance``, its older name), else its record's, else 1 (plain generation)."""
    value = read_strength(getattr(model, "generation_config", None))
    return check_strength(value if value is not None else read_strength(record, 1.0))


def save_default_strength(path: str | Path, strength: float) -> None:
    """Make ``strength`` a checkpoint folder's default control strength: written to its
    ``generation_config.json`` (where ``from_pretrained`` users, its ``generate`` and the Space read it) and
    its record, under :data:`variants.classifier_free_guidance.STRENGTH_FIELD` (an older name is dropped)."""
    save_generation_defaults(path, **{STRENGTH_FIELD: check_strength(strength)})


def save_generation_defaults(path: str | Path, **fields: Any) -> None:
    """Write ``fields`` into a checkpoint folder's ``generation_config.json`` (an adapter without one starts
    from its base's, what it generates with) and its record: the defaults its ``generate`` and the Space
    read (the control strength, ``document_words``, ``no_repeat_ngram_size``)."""
    from transformers import GenerationConfig

    path = Path(path)
    record = read_record(path)
    try:
        config = GenerationConfig.from_pretrained(path)
    except OSError:
        from store.adapters import base_folder, is_adapter

        base = base_folder(path) if is_adapter(path) else None
        config = GenerationConfig.from_pretrained(base) if base is not None else GenerationConfig()
    if STRENGTH_FIELD in fields:
        for old in OLD_STRENGTH_FIELDS:
            if hasattr(config, old):
                delattr(config, old)
        record = {k: v for k, v in record.items() if k not in OLD_STRENGTH_FIELDS}
    for name, value in fields.items():
        setattr(config, name, value)
    # a config marked as derived from the model config is rebuilt from it on loading, which drops the fields
    config._from_model_config = False
    config.save_pretrained(path)
    write_record(path, {**record, **{k: v for k, v in fields.items() if k != NAME_WORDS}})  # ids: the config's alone


def save_default_constraints(path: str | Path) -> None:
    """Make a checkpoint folder generate with its variant's decoding rules unless told otherwise (its
    record's ``constraints``, read into :class:`GenerationSettings`)."""
    write_record(path, {**read_record(path), "constraints": True})


def add_control_tokens(tokenizer, model, tokens: list[str]) -> None:
    """Add the variant's control tokens (e.g. ``[TAG]``) as special tokens that swallow the space
    before them, and grow the embedding table to match."""
    new = [
        AddedToken(t, lstrip=True, rstrip=False, special=True, normalized=False)
        for t in tokens
        if t not in tokenizer.get_vocab()
    ]
    if new:
        tokenizer.add_special_tokens({"additional_special_tokens": new})
    if model.get_input_embeddings().num_embeddings < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer))
