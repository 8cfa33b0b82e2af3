"""One batch of a seq2seq summarizer, from prepared inputs to summaries: token ids cut to the model's limit
(:func:`tokenize`), padded batches (:func:`pad`), the ``generate`` call with its control strength, decoding
rules and speed-ups (:class:`Steering`), and the generated text as a :class:`~variants.base.Summary`
(:func:`decoded`). :class:`variants.seq2seq.Seq2SeqSummarizer` runs them for every batch, and the persona
variant for its history-prefix path.
"""

from __future__ import annotations

from typing import Any

import torch

from metrics.text import sentences
from models.processing_base import cut
from models.windows import cut_notice, pad_windows, source_windows

from .base import Prepared, Summary
from .decoding import generate
from .decoding_rules import TEXT_RULES, DecodingRules
from .postprocess import postprocess
from .speedups import SPEEDUPS


def tokenize(tokenizer, prepared: list[Prepared], max_source_length: int) -> tuple[list[list[int]], list[bool]]:
    """Token ids of prepared inputs; sources longer than ``max_source_length`` tokens are cut (keeping
    the end-of-sequence token) and flagged, so callers can say so instead of failing."""
    ids = tokenizer([p.text for p in prepared], truncation=False)["input_ids"]
    return [cut(x, max_source_length) for x in ids], [len(x) > max_source_length for x in ids]


def decoded(
    text: str,
    prepared: Prepared,
    truncated: bool,
    max_source_length: int,
    document: str,
    parts: list[str] | None = None,
) -> Summary:
    """A generated text as a :class:`Summary` in the document's case and spacing, without a trailing
    unfinished sentence (:func:`variants.postprocess.postprocess`), with the notices of its input (and
    one if it was cut: :func:`models.windows.cut_notice` of the ``parts`` it read)."""
    notices = list(prepared.notices)
    if truncated:
        notices.append(cut_notice(max_source_length, document, parts))
    return Summary(postprocess(text, document), notices)


def by_length(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices in batches of ``batch_size``, longest sources first: each batch holds similar lengths, so
    little of it is padding (generation batches in evaluation and serving). Callers put results back
    by index."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def read_windows(
    tokenizer, make, documents: list[str], max_source_length: int, most: int, relevance=None, ratio: float = 1.0
) -> tuple[list[list[str]], list[list[list[int]]], list[bool]]:
    """What a summarizer reads of each document, as an exported repo's processor reads it
    (:func:`models.windows.source_windows`, up to ``most`` windows; with ``relevance(i, text)``, the
    window of document ``i`` it scores highest, when more than ``ratio`` times the first): its parts, their
    token ids (each part prepared by ``make(i, text)``, cut to ``max_source_length``) and whether anything of
    it was left out."""

    known: dict[tuple[int, str], list[int]] = {}  # a part's length was counted on the ids it is read as

    def ids(i: int, text: str) -> list[int]:
        if (i, text) not in known:
            known[i, text] = tokenizer(make(i, text).text, truncation=False)["input_ids"]
        return known[i, text]

    parts, truncated = [], []
    for i, document in enumerate(documents):
        texts, left_out = source_windows(
            document,
            lambda text, i=i: len(ids(i, text)),
            max_source_length,
            most,
            None if relevance is None else (lambda text, i=i: relevance(i, text)),
            ratio,
        )
        parts.append(texts)
        truncated.append(left_out)
    windows = [[cut(ids(i, text), max_source_length) for text in texts] for i, texts in enumerate(parts)]
    return parts, windows, truncated


def pad(tokenizer, windows: list[list[list[int]]], prepared: list[Prepared]) -> dict[str, torch.Tensor]:
    """A batch of each source's windows of token ids (one window each: the usual (sources, tokens) batch;
    :func:`models.windows.pad_windows`) with the prepared inputs' extra inputs."""
    batch = pad_windows(tokenizer, windows, return_tensors="pt")
    for key in prepared[0].extra if prepared else ():
        batch[key] = torch.tensor([p.extra[key] for p in prepared])
    return dict(batch)


def encode(tokenizer, prepared: list[Prepared], max_source_length: int) -> tuple[dict[str, torch.Tensor], list[bool]]:
    """A padded batch of prepared inputs (see :func:`tokenize`) and which of them were truncated."""
    ids, truncated = tokenize(tokenizer, prepared, max_source_length)
    return pad(tokenizer, [[x] for x in ids], prepared), truncated


class Steering:
    """What a batch's ``generate`` call (:func:`variants.decoding.generate`) is given besides its inputs: the
    settings' keyword arguments, the control strength with the examples' control-free inputs (when γ ≠ 1
    and some input differs from its control-free one), the decoding rules (when the settings ask and the
    variant has some), the document-words rule (when the settings ask) and the speed-ups
    (:mod:`variants.speedups`), for the rows of a batch."""

    speedups = SPEEDUPS  # None: the plain path an exported repo runs (the same summaries, more slowly)

    def __init__(
        self,
        summarizer,
        settings: Any,  # variants.seq2seq.GenerationSettings
        documents: list[str],
        controls: list[dict],
        prepared: list[Prepared],
        parts: list[list[str]] | None = None,
    ):
        """``parts``: what is read of each document (:func:`read_windows`; default: each document whole), the
        control-free inputs read the same parts."""
        self.summarizer, self.settings, self.documents = summarizer, settings, documents
        variant, method, assets = summarizer.variant, summarizer.method, summarizer.assets
        self.unconditional = self.unconditional_ids = None
        self.differs = [False] * len(documents)
        if settings.control_strength != 1:
            self.unconditional = [variant.unconditional(d, method, assets) for d in documents]
            tokenizer, limit = summarizer.tokenizer, summarizer.max_source_length
            self.unconditional_ids = [
                [
                    cut(x, limit)
                    for x in tokenizer(
                        [variant.unconditional(t, method, assets).text for t in texts], truncation=False
                    )["input_ids"]
                ]
                for texts in parts or [[d] for d in documents]
            ]
            self.differs = [u.text != p.text or u.extra != p.extra for u, p in zip(self.unconditional, prepared)]
        self.rules = (
            [variant.constraints(c, assets) or DecodingRules() for c in controls] if settings.constraints else None
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

    def generate(
        self,
        model,
        rows: list[int],
        generation: dict,
        inputs: dict,
        encoder_outputs: Any = None,
        attention_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """:func:`variants.decoding.generate` for the batch of ``rows``: the settings' keyword arguments, the
        control strength and the decoding rules, with the speed-ups. A caller that has the control-free
        encoder outputs already (a persona model's article states) gives them, with their ``attention_mask``."""
        if encoder_outputs is None:
            inputs, encoder_outputs, attention_mask = self.encode_once(model, rows, inputs)
        differs = encoder_outputs is not None and any(self.differs[i] for i in rows)
        return generate(
            model,
            **inputs,
            **{**self.settings.generate_kwargs(), **generation},
            guidance_scale=self.settings.control_strength,
            unconditional=self.unconditional_batch(rows, model.device) if encoder_outputs is None else None,
            unconditional_encoder_outputs=encoder_outputs if differs else None,
            unconditional_attention_mask=attention_mask if differs else None,
            decoding_rules=None if self.rules is None else [self.rules[i] for i in rows],
            **{rule: getattr(self.settings, rule) for rule in TEXT_RULES},
            documents=[self.documents[i] for i in rows],
            tokenizer=self.summarizer.tokenizer,
            split_sentences=sentences,
            speedups=self.speedups,
        )

    def encode_once(self, model, rows: list[int], inputs: dict) -> tuple[dict, Any, torch.Tensor | None]:
        """Under guidance, the source encoded once for a batch and its control-free twins when only what
        travels beside the source differs (GSum's signal, TDSum's scores) and the model's source encoding
        reads the source alone (``encodes_source_alone``): ``generate``'s inputs as its encoder outputs, and
        the twins' encoder outputs and mask (``docs/log.md`` has what the twins' own encoder pass cost).
        Otherwise ``(inputs, None, None)``: nothing changes."""
        encoder = model.get_encoder()
        if inputs["input_ids"].dim() == 3:  # windows: generate reads them (variants.decoding.fuse_windows)
            return inputs, None, None
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
