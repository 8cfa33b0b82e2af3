"""Loading and batched generation shared by every variant whose model is a Hugging Face seq2seq model.

A variant supplies ``prepare``; this module turns prepared inputs into padded batches (truncating
sources that exceed the model's limit, with a notice), runs ``generate`` on GPU when there is one,
and decodes, writing the text as the document writes its words (:mod:`variants.postprocess`).

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
import copy
import math
import weakref
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from tokenizers import AddedToken
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, LogitsProcessorList, StoppingCriteriaList
from transformers.cache_utils import DynamicCache, EncoderDecoderCache

import models  # noqa: F401  (registers SteerSum's architectures with the Auto classes)

from .base import Prepared, Summarizer, Summary, Variant, by_length, check_document, read_record, write_record
from .constraints import HardConstraints, constraint_kwargs
from .guidance import EncoderDecoderGuidance, PairedCache, check_guidance, takes_own_cache
from .postprocess import postprocess

DTYPES = ("auto", "bfloat16", "float32", "int8", "int8-weights")
GUIDANCE_FIELD = "control_guidance"  # generation_config.json (and steersum.json): the model's default γ


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

    ``guidance``: the control strength γ of classifier-free guidance (:mod:`variants.guidance`), 1 for
    plain generation (exactly today's outputs), up to 10; a checkpoint's default is its generation
    config's ``control_guidance`` (:func:`save_default_guidance`). ``constraints``: enforce the
    controls that are a number or a list (a length bin, keywords) in the decoder
    (:mod:`variants.constraints`), for variants that declare them.
    """

    num_beams: int = 4
    max_new_tokens: int = 128
    early_stopping: bool = True
    batch_size: int = 8
    dtype: str = "float32"
    guidance: float = 1.0
    constraints: bool = False

    def __post_init__(self):
        object.__setattr__(self, "guidance", check_guidance(self.guidance))
        if not isinstance(self.constraints, bool):
            raise ValueError(f"generation constraints must be true or false, got {self.constraints!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"generation dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        for name in ("num_beams", "max_new_tokens", "batch_size"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"generation {name} must be a positive integer, got {getattr(self, name)!r}")

    @classmethod
    def from_record(cls, record: dict, **overrides: Any) -> GenerationSettings:
        """A checkpoint's settings: the beams and target length it was trained and evaluated with."""
        given = {
            "max_new_tokens": int(record.get("max_target_length", cls.max_new_tokens)),
            "num_beams": int(record.get("num_beams", cls.num_beams)),
            "guidance": record.get(GUIDANCE_FIELD, cls.guidance),
            "constraints": bool(record.get("constraints", cls.constraints)),
            "dtype": record.get("dtype", cls.dtype),
        }
        return cls(**{**given, **{k: v for k, v in overrides.items() if v is not None}})

    def but(self, **changes: Any) -> GenerationSettings:
        """A copy with the given (non-None) fields changed."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def generate_kwargs(self) -> dict:
        """The keyword arguments of ``model.generate``."""
        kwargs = {"max_new_tokens": self.max_new_tokens, "num_beams": self.num_beams}
        if self.num_beams > 1:  # meaningless (and warned about) for greedy decoding
            kwargs["early_stopping"] = self.early_stopping
        return kwargs

    def model(self, model):
        """The model that generates: ``model`` itself, or on CPU with dtype ``int8`` (``int8-weights``)
        its int8 copy (its copy with int8 decoder weights)."""
        if model.device.type != "cpu" or self.dtype not in ("int8", "int8-weights"):
            return model
        return int8_copy(model) if self.dtype == "int8" else int8_weights_copy(model)

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


_INT8_COPIES: weakref.WeakKeyDictionary[torch.nn.Module, torch.nn.Module] = weakref.WeakKeyDictionary()


def int8_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` whose Linear layers (the LM head included) compute in int8: weights quantized
    once, activations per call with one scale per tensor (PyTorch's dynamic quantization, VNNI kernels
    on x86), so a summary can change with its batch-mates. Built on first use and kept as long
    as ``model`` lives; ``model`` itself is untouched. ``benchmarks/generation.py`` reports the token
    agreement with fp32 and the scores of both. (``torch.ao.quantization`` is deprecated in favour of
    torchao but present in the pinned torch.)"""
    if model not in _INT8_COPIES:
        _INT8_COPIES[model] = torch.ao.quantization.quantize_dynamic(
            copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8
        ).eval()
    return _INT8_COPIES[model]


_INT8_MM = torch.ops.aten._weight_int8pack_mm.default  # the overload itself: no lookup per call


class Int8WeightLinear(torch.nn.Module):
    """A Linear layer whose weight is held as int8 with one scale per output row (symmetric, the
    store's compact format) and multiplied by PyTorch's int8 weight-only kernel
    (``aten._weight_int8pack_mm``, as gpt-fast and torchao use it), activations in bf16, output back in
    the input's dtype. A decoding step multiplies two rows (a request's beams) by every weight, so it
    waits on reading the weights: a quarter of the bytes of fp32. One thread, two rows: 21 µs for a
    384 × 384 weight against ``F.linear``'s 76 µs fp32 (``docs/log.md``). At 16 rows and more the
    kernel is compute-bound and no faster, so batched evaluation gains nothing."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        weight = linear.weight.detach().float()
        scale = (weight.abs().amax(dim=1) / 127).clamp_min(torch.finfo(torch.float32).tiny)
        self.register_buffer("weight_int8", torch.round(weight / scale[:, None]).to(torch.int8))
        self.register_buffer("scale", scale.to(torch.bfloat16))
        self.bias = None if linear.bias is None else torch.nn.Parameter(linear.bias.detach().float().clone(), False)
        self.out_features = linear.out_features

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        out = _INT8_MM(hidden.reshape(-1, hidden.shape[-1]).to(torch.bfloat16), self.weight_int8, self.scale)
        out = out.view(*hidden.shape[:-1], self.out_features)
        # adding an fp32 bias promotes the bf16 product exactly, as converting it first would: one op less
        return out.to(hidden.dtype) if self.bias is None else out + self.bias


_INT8_WEIGHTS_COPIES: weakref.WeakKeyDictionary[torch.nn.Module, torch.nn.Module] = weakref.WeakKeyDictionary()


def int8_weights_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model`` whose decoder Linear layers and LM head are :class:`Int8WeightLinear`: what
    each decoding step reads. The encoder runs once per request and stays as it is. Built on first
    use and kept as long as ``model`` lives; ``model`` itself is untouched."""
    if model not in _INT8_WEIGHTS_COPIES:
        quantized = copy.deepcopy(model).eval()
        for module in list(quantized.get_decoder().modules()):
            for name, child in list(module.named_children()):
                if type(child) is torch.nn.Linear:
                    setattr(module, name, Int8WeightLinear(child))
        head = quantized.get_output_embeddings()
        if type(head) is torch.nn.Linear:
            quantized.set_output_embeddings(Int8WeightLinear(head))
        _INT8_WEIGHTS_COPIES[model] = quantized
    return _INT8_WEIGHTS_COPIES[model]


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


class LMHead(torch.nn.Linear):
    """The LM head's product taken as ``(W @ xᵀ)ᵀ``: the same numbers as ``nn.Linear``, faster for the few
    rows of a decoding step. On a CPU, ``F.linear`` with one to three rows (a request's beams) takes MKL's
    slow path: 9.1 ms for two rows of MiniLM-BART's 30,524 × 384 head on one thread, against 4.0 ms for
    the same product written ``W @ xᵀ`` (a tall matrix times a thin one); at 16 rows it is not slower
    (11.0 ms against 12.3). Outputs change only by float summation order: the stored models write the
    same summaries. ``benchmarks/store_latency.py`` times whole requests both ways."""

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        rows = hidden.reshape(-1, hidden.shape[-1])
        logits = (self.weight @ rows.t()).t().reshape(*hidden.shape[:-1], self.out_features)
        return logits if self.bias is None else logits + self.bias


@contextlib.contextmanager
def fast_lm_head(model):
    """``model``'s LM head computes with :class:`LMHead`'s product inside the block, as plain ``nn.Linear``
    outside it: only the class of the one module changes, so the head keeps its weight, the weight its
    ties, and the model its state dict; what a caller sees or saves is a standard model. A head that is
    not a plain linear layer (a peft wrapper) is left as it is."""
    head = model.get_output_embeddings()
    if type(head) is not torch.nn.Linear:
        yield
        return
    head.__class__ = LMHead
    try:
        yield
    finally:
        head.__class__ = torch.nn.Linear


def tokenize(tokenizer, prepared: list[Prepared], max_source_length: int) -> tuple[list[list[int]], list[bool]]:
    """Token ids of prepared inputs; sources longer than ``max_source_length`` tokens are cut (keeping
    the end-of-sequence token) and flagged, so callers can say so instead of failing."""
    ids = tokenizer([p.text for p in prepared], truncation=False)["input_ids"]
    truncated = [len(x) > max_source_length for x in ids]
    return [x[: max_source_length - 1] + x[-1:] if cut else x for x, cut in zip(ids, truncated)], truncated


def decoded(text: str, prepared: Prepared, truncated: bool, max_source_length: int, document: str) -> Summary:
    """A generated text as a :class:`Summary` in the document's case and spacing, without a trailing
    unfinished sentence (:func:`variants.postprocess.postprocess`), with the notices of its input (and
    one if it was cut)."""
    notices = list(prepared.notices)
    if truncated:
        notices.append(f"the input was longer than the model's limit of {max_source_length} tokens and was truncated")
    return Summary(postprocess(text, document), notices)


def pad(tokenizer, ids: list[list[int]], prepared: list[Prepared]) -> dict[str, torch.Tensor]:
    batch = tokenizer.pad({"input_ids": ids}, return_tensors="pt")
    for key in prepared[0].extra if prepared else ():
        batch[key] = torch.tensor([p.extra[key] for p in prepared])
    return dict(batch)


def encode(tokenizer, prepared: list[Prepared], max_source_length: int) -> tuple[dict[str, torch.Tensor], list[bool]]:
    """A padded batch of prepared inputs (see :func:`tokenize`) and which of them were truncated."""
    ids, truncated = tokenize(tokenizer, prepared, max_source_length)
    return pad(tokenizer, ids, prepared), truncated


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
        self.settings = GenerationSettings.from_record({**record, GUIDANCE_FIELD: default_guidance(model, record)})

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
        ids, truncated = tokenize(self.tokenizer, prepared, self.max_source_length)
        steering = Steering(self, settings, documents, checked, prepared)
        summaries: list[Summary | None] = [None] * len(prepared)
        for rows in by_length([len(x) for x in ids], settings.batch_size):
            batch = pad(self.tokenizer, [ids[i] for i in rows], [prepared[i] for i in rows])
            batch = {k: v.to(self.model.device) for k, v in batch.items()}
            with settings.autocast(self.model.device):
                output = steering.generate(settings.model(self.model), rows, generation, batch)
            for i, text in zip(rows, self.tokenizer.batch_decode(output, skip_special_tokens=True)):
                summaries[i] = decoded(text, prepared[i], truncated[i], self.max_source_length, documents[i])
        return summaries


class BeamSearchCache(EncoderDecoderCache):
    """``generate``'s cache for beam search, less one copy per step. Beam search reorders the beams of
    each example among themselves, and those beams share one encoder row (repeated for each beam), so
    their cross-attention states are equal and reordering them changes no value; only the
    self-attention cache is reordered. transformers reorders both: for a 400-word article that copy
    (rows x source length x d_model, keys and values, every layer, every step) took 0.16 s of a 2.1 s
    request on one thread (profiled; ``benchmarks/store_latency.py`` times the serving changes together).
    :class:`variants.guidance.EncoderDecoderGuidance` treats its own cache the same way."""

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self.self_attention_cache.reorder_cache(beam_idx)


class Steering:
    """What a batch's ``generate`` call is given besides its inputs: the settings' keyword arguments,
    the guidance processor over the examples' control-free inputs (when γ ≠ 1 and some input differs
    from its control-free one) and the hard constraints (when the settings ask and the variant has
    some), for the rows of a batch."""

    def __init__(
        self,
        summarizer,
        settings: GenerationSettings,
        documents: list[str],
        controls: list[dict],
        prepared: list[Prepared],
    ):
        self.summarizer, self.settings, self.documents = summarizer, settings, documents
        variant, method, assets = summarizer.variant, summarizer.method, summarizer.assets
        self.unconditional = self.unconditional_ids = None
        self.differs = [False] * len(documents)
        if settings.guidance != 1:
            self.unconditional = [variant.unconditional(d, method, assets) for d in documents]
            self.unconditional_ids, _ = tokenize(
                summarizer.tokenizer, self.unconditional, summarizer.max_source_length
            )
            self.differs = [u.text != p.text or u.extra != p.extra for u, p in zip(self.unconditional, prepared)]
        self.constraints = (
            [variant.constraints(c, assets) or HardConstraints() for c in controls] if settings.constraints else None
        )

    def unconditional_batch(self, rows: list[int], device) -> dict[str, torch.Tensor] | None:
        """The control-free inputs of ``rows``, padded; ``None`` without guidance or when no row's
        differs from its controlled input (guidance would then change nothing)."""
        if self.unconditional is None or not any(self.differs[i] for i in rows):
            return None
        batch = pad(
            self.summarizer.tokenizer, [self.unconditional_ids[i] for i in rows], [self.unconditional[i] for i in rows]
        )
        return {k: v.to(device) for k, v in batch.items()}

    def generate_kwargs(
        self,
        model,
        rows: list[int],
        generation: dict,
        encoder_outputs: Any = None,
        attention_mask: torch.Tensor | None = None,
    ) -> tuple[dict, EncoderDecoderGuidance | None]:
        """``generate`` keyword arguments for ``rows``, and the guidance processor whose control-free rows
        are decoded beside ``generate``'s own (None: no guidance, or it runs a pass of its own). A caller
        that has the control-free encoder outputs already (a persona model's article states) gives them,
        with their ``attention_mask``."""
        kwargs = {**self.settings.generate_kwargs(), **generation}
        processors = list(kwargs.pop("logits_processor", None) or [])
        stopping = list(kwargs.pop("stopping_criteria", None) or [])
        inputs = self.unconditional_batch(rows, model.device) if encoder_outputs is None else None
        paired = None
        if inputs is not None or (encoder_outputs is not None and any(self.differs[i] for i in rows)):
            guidance = EncoderDecoderGuidance(
                model, self.settings.guidance, inputs, encoder_outputs=encoder_outputs, attention_mask=attention_mask
            )
            processors.append(guidance)
            paired = guidance if guidance.pairs(model) else None
        if paired is not None:
            kwargs["past_key_values"] = PairedCache(DynamicCache(), DynamicCache())
        elif kwargs.get("num_beams", 1) > 1 and takes_own_cache(model):
            kwargs.setdefault("past_key_values", BeamSearchCache(DynamicCache(), DynamicCache()))
        if self.constraints is not None:
            extra = constraint_kwargs(
                self.summarizer.tokenizer,
                [self.constraints[i] for i in rows],
                [self.documents[i] for i in rows],
                kwargs["max_new_tokens"],
            )
            processors += extra.get("logits_processor", [])
            stopping += extra.get("stopping_criteria", [])
            kwargs["max_new_tokens"] = min(extra.get("max_new_tokens", kwargs["max_new_tokens"]), decoder_room(model))
        if processors:
            kwargs["logits_processor"] = LogitsProcessorList(processors)
        if stopping:
            kwargs["stopping_criteria"] = StoppingCriteriaList(stopping)
        return kwargs, paired

    def generate(
        self,
        model,
        rows: list[int],
        generation: dict,
        inputs: dict,
        encoder_outputs: Any = None,
        attention_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``model.generate(**inputs)`` for the batch of ``rows`` with :meth:`generate_kwargs`, the LM head
        computed as :class:`LMHead` and, under guidance, each row decoded beside its control-free twin in
        one pass (:meth:`variants.guidance.EncoderDecoderGuidance.alongside`)."""
        if encoder_outputs is None:
            inputs, encoder_outputs, attention_mask = self.encode_once(model, rows, inputs)
        kwargs, paired = self.generate_kwargs(model, rows, generation, encoder_outputs, attention_mask)
        with fast_lm_head(model), paired.alongside(model) if paired is not None else contextlib.nullcontext():
            return model.generate(**inputs, **kwargs)

    def encode_once(self, model, rows: list[int], inputs: dict) -> tuple[dict, Any, torch.Tensor | None]:
        """Under guidance, the source encoded once for a batch and its control-free twins when only what
        travels beside the source differs (GSum's guidance, TDSum's scores) and the model's source
        encoding reads the source alone (``encodes_source_alone``): ``generate``'s inputs as its encoder
        outputs, and the twins' encoder outputs and mask (docs/log.md has what the
        twins' own encoder pass cost). Otherwise ``(inputs, None, None)``: nothing changes."""
        encoder = model.get_encoder()
        twins = (
            self.unconditional_batch(rows, model.device) if getattr(encoder, "encodes_source_alone", False) else None
        )
        if twins is None or not torch.equal(twins["input_ids"], inputs["input_ids"]):
            return inputs, None, None
        own = encoder(**inputs, return_dict=True)
        control_free = encoder(**twins, source_states=own.last_hidden_state, return_dict=True)
        return (
            {"encoder_outputs": own, "attention_mask": inputs["attention_mask"]},
            control_free,
            twins["attention_mask"],
        )


def decoder_room(model) -> int | float:
    """The most tokens the decoder can write after its start token: a model with learned positions
    (BART's ``max_position_embeddings``) has no position past them, so a length bin's token budget (the
    open last bin asks for 201+ words) is capped there; unbounded for relative positions (T5)."""
    limit = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    return limit - 1 if isinstance(limit, int) else math.inf


def default_guidance(model, record: dict) -> float:
    """A checkpoint's default control strength: its generation config's ``control_guidance``, else its
    record's, else 1 (plain generation)."""
    value = getattr(getattr(model, "generation_config", None), GUIDANCE_FIELD, None)
    return check_guidance(value if value is not None else record.get(GUIDANCE_FIELD, 1.0))


def save_default_guidance(path: str | Path, guidance: float) -> None:
    """Make ``guidance`` a checkpoint folder's default control strength: written to its
    ``generation_config.json`` (where ``from_pretrained`` users and the Space read it) and its record."""
    from transformers import GenerationConfig

    guidance, path = check_guidance(guidance), Path(path)
    record = read_record(path)
    try:
        config = GenerationConfig.from_pretrained(path)
    except (
        OSError
    ):  # no generation_config.json yet: an adapter's is its base's (what it generates with), else the default
        from store.adapters import base_folder, is_adapter

        base = base_folder(path) if is_adapter(path) else None
        config = GenerationConfig.from_pretrained(base) if base is not None else GenerationConfig()
    setattr(config, GUIDANCE_FIELD, guidance)
    # a config marked as derived from the model config is rebuilt from it on loading, which drops the field
    config._from_model_config = False
    config.save_pretrained(path)
    write_record(path, {**record, GUIDANCE_FIELD: guidance})


def save_default_constraints(path: str | Path) -> None:
    """Make a checkpoint folder generate with its variant's hard constraints unless told otherwise (its
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
