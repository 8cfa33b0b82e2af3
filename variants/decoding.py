"""How a SteerSum model decodes: one plain ``generate`` call given logits processors.

* Control strength: classifier-free guidance (Ho & Salimans 2022; for language models Sanchez et al.
  2023, "Stay on topic with classifier-free guidance"). At every step the next-token log-probabilities
  given the controls, ``l_c``, move away from those given the same document without them, ``l_u``::

      l = l_u + γ (l_c − l_u)

  γ = 1 is plain generation. ``generate`` takes γ under transformers' name, ``guidance_scale``; inside
  SteerSum it is the control strength (``control_strength``), and a model's default is its generation
  config's ``control_strength`` (``control_guidance`` in older folders). The processor and the strength's
  checks: :mod:`variants.classifier_free_guidance`.
* Decoding rules (:class:`~variants.decoding_rules.DecodingRules`): what a weakly trained model does not
  obey, the decoder enforces or prefers. A length bin's word count, keywords that must appear, and the
  document sentences a summary should copy (a bias along their path). The rules and what they measure:
  :mod:`variants.decoding_rules`; their logits processors: :mod:`variants.rule_processors`.
* Document words (:data:`~variants.decoding_rules.DOCUMENT_WORDS` in the generation config, or
  ``document_words=``): a word of several tokens or one that starts with a digit is the document's
  (:class:`~variants.text_rules.DocumentWordsLogitsProcessor`), so names and numbers are copied.
* Finished sentences (:data:`~variants.decoding_rules.FINISH_SENTENCES` in the generation config, or
  ``finish_sentences=``): no end before the text ends a sentence
  (:class:`~variants.text_rules.SentenceEndLogitsProcessor`).
* No repeated trigrams (:data:`~variants.decoding_rules.NO_REPEAT_TRIGRAMS`, or ``no_repeat_trigrams=``):
  a token that repeats a trigram is taken only where nothing else is left
  (:class:`~variants.text_rules.NoRepeatNgramsLogitsProcessor`), in place of the model's
  ``no_repeat_ngram_size`` (5 in its generation config). With the document-words rule on, that n-gram size is
  kept but judged the same way, and a piece that goes on with a word is never penalised: ``generate``'s ban
  cut words short or left them no way to finish ("br" for Bruvik, "adversiral"); nor a token right after a
  hyphen or an apostrophe ("Le-May" written twice).
* No doubled words (:data:`~variants.decoding_rules.NO_DOUBLED_WORDS`, or ``no_doubled_words=``): the word just
  written is taken again only where nothing else is left
  (:class:`~variants.text_rules.NoDoubledWordsLogitsProcessor`): "with with" is no trigram.
* Verbatim quotes (:data:`~variants.decoding_rules.VERBATIM_QUOTES`, or ``verbatim_quotes=``): inside quotation
  marks, the summary goes on only as the document's tokens do
  (:class:`~variants.text_rules.VerbatimQuotesLogitsProcessor`): a quote is someone's own words.
* Document names (:data:`~variants.decoding_rules.DOCUMENT_NAMES`, or ``document_names=``, with the generation
  config's ``name_words``): a name of one token is one the document writes
  (:class:`~variants.text_rules.DocumentNamesLogitsProcessor`): MiniLM's vocabulary holds most names whole.
* The whole document (``source_windows`` in the generation config, the processor's setting): a document
  longer than the model's source limit comes as its windows, ``input_ids`` of shape (documents, windows,
  tokens), each window the processor's input for a run of whole sentences. The encoder reads each window
  alone; the decoder attends to all of them at once (:func:`fuse_windows`; Fusion-in-Decoder, Izacard &
  Grave 2021), so a long document is read whole by a model trained on one window.
* The text fixes (the document's case and spacing, complete sentences) run on decode: ``postprocess.py``,
  through the processor's ``decode``.

``generate(model, **inputs)`` is the whole path; ``constraints=False`` gives the model alone (no rules).
SteerSum's Space and evaluation call it with their speed-ups (:mod:`variants.speedups`: int8 kernels, the
LM head's product, the beam cache, the control-free rows decoded in the same forward pass), which change
how fast, not what is written.

Standalone (torch, transformers and the standard library; NLTK's Punkt only where a rule needs the
document's sentences and none were given): an exported repo ships this file as
``custom_generate/generate.py`` and the sibling modules it imports relatively under their own names beside
it (transformers loads those with it), and ``AutoModelForSeq2SeqLM.from_pretrained(repo,
trust_remote_code=True)`` makes it the model's ``generate``. The export copies them unchanged.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Callable
from typing import Any

import torch
from transformers import AutoTokenizer, LogitsProcessorList, StoppingCriteriaList
from transformers.modeling_outputs import BaseModelOutput

from .classifier_free_guidance import ClassifierFreeGuidance, check_strength, read_strength
from .decoding_rules import (
    DOCUMENT_NAMES,
    DOCUMENT_WORDS,
    FINISH_SENTENCES,
    NAME_WORDS,
    NO_DOUBLED_WORDS,
    NO_REPEAT_TRIGRAMS,
    VERBATIM_QUOTES,
    DecodingRules,
    whole_words,
    word_joiners,
    word_pieces,
)
from .rule_processors import rule_kwargs
from .text_rules import (
    DocumentNamesLogitsProcessor,
    DocumentWordsLogitsProcessor,
    NoDoubledWordsLogitsProcessor,
    NoRepeatNgramsLogitsProcessor,
    SentenceEndLogitsProcessor,
    VerbatimQuotesLogitsProcessor,
)

UNCONDITIONAL = "unconditional_"  # a processor's control-free inputs: unconditional_input_ids, ...


def decoder_room(model) -> int | float:
    """The most tokens the decoder can write after its start token: a model with learned positions
    (BART's ``max_position_embeddings``) has no position past them, so a length bin's token budget (the
    open last bin asks for 201+ words) is capped there; unbounded for relative positions (T5)."""
    limit = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    return limit - 1 if isinstance(limit, int) else math.inf


def fuse_windows(
    model, input_ids: torch.Tensor, attention_mask: torch.Tensor, extras: dict[str, torch.Tensor] | None = None
) -> tuple[BaseModelOutput, torch.Tensor]:
    """The encoder's states of each source's windows (``input_ids`` and ``attention_mask`` of shape (sources,
    windows, tokens); a window of padding only is skipped), laid end to end per source without their padding:
    what the decoder attends to, with its (sources, tokens) mask. ``extras``: the encoder's other inputs, per
    window (leading shape (sources, windows)) or per source (given to each of its windows)."""
    sources, windows, _ = input_ids.shape
    real = attention_mask.flatten(0, 1).bool().any(-1)
    inputs = {"input_ids": input_ids.flatten(0, 1)[real], "attention_mask": attention_mask.flatten(0, 1)[real]}
    for name, value in (extras or {}).items():
        per_window = value.dim() >= 2 and tuple(value.shape[:2]) == (sources, windows)
        inputs[name] = (value.flatten(0, 1) if per_window else value.repeat_interleave(windows, 0))[real]
    states = model.get_encoder()(**inputs, return_dict=True).last_hidden_state
    every = states.new_zeros(sources * windows, *states.shape[1:])
    every[real] = states
    every = every.reshape(sources, -1, states.shape[-1])
    keep = attention_mask.reshape(sources, -1).bool()
    counts = keep.sum(1)
    fused = every.new_zeros(sources, int(counts.max()), every.shape[-1])
    mask = attention_mask.new_zeros(sources, fused.shape[1])
    for row in range(sources):
        fused[row, : counts[row]] = every[row][keep[row]]
        mask[row, : counts[row]] = 1
    return BaseModelOutput(last_hidden_state=fused), mask


def encoder_extras(model, inputs: dict) -> dict[str, torch.Tensor]:
    """The tensors among ``inputs`` the model's encoder reads besides the token ids and their mask (a topic
    id, say): taken out, for :func:`fuse_windows`."""
    names = set(inspect.signature(model.get_encoder().forward).parameters) - {"input_ids", "attention_mask"}
    return {
        name: inputs.pop(name) for name in list(inputs) if name in names and isinstance(inputs[name], torch.Tensor)
    }


def source_texts(tokenizer, input_ids: torch.Tensor) -> list[str]:
    """The sources' text, decoded from their ids ((sources, tokens) or windows (sources, windows, tokens))."""
    if input_ids.dim() == 2:
        return tokenizer.batch_decode(input_ids, skip_special_tokens=True)
    return [
        " ".join(t for t in tokenizer.batch_decode(windows, skip_special_tokens=True) if t) for windows in input_ids
    ]


def generate(
    model,
    *args: Any,
    guidance_scale: float | None = None,
    unconditional: dict[str, torch.Tensor] | None = None,
    unconditional_encoder_outputs: Any = None,
    decoding_rules: list | None = None,
    constraints: bool = True,
    document_words: bool | None = None,
    finish_sentences: bool | None = None,
    no_repeat_trigrams: bool | None = None,
    no_doubled_words: bool | None = None,
    verbatim_quotes: bool | None = None,
    document_names: bool | None = None,
    documents: list[str] | None = None,
    tokenizer: Any = None,
    split_sentences: Callable[[str], list[str]] | None = None,
    speedups: Any = None,
    **kwargs: Any,
) -> torch.Tensor:
    """``model.generate(*args, **kwargs)`` with the control strength and the decoding rules as logits processors.

    ``guidance_scale``: the control strength γ (default: that of the ``generation_config`` given, else the
    model's, as :func:`~variants.classifier_free_guidance.default_strength` reads it); guidance needs the
    control-free inputs, ``unconditional`` (a dict of encoder inputs, or given as
    ``unconditional_input_ids``, ``unconditional_attention_mask``, ... keyword arguments, as a processor
    returns them) or their ``unconditional_encoder_outputs`` (with ``unconditional_attention_mask``).
    ``decoding_rules``: one :class:`DecodingRules` (or its JSON, as a processor returns it, holding its
    ``document``) per example, applied unless ``constraints=False`` (the model alone); they read the
    ``documents`` through ``tokenizer`` (default: the model's own folder's). ``document_words``: names and
    numbers from the ``documents`` only (default: the generation config's ``document_words``, unless
    ``constraints=False``; the documents default to the rules' or, without them, the decoded
    ``input_ids``). ``finish_sentences``: no end before a finished sentence (default: the generation config's
    ``finish_sentences``, unless ``constraints=False``); ``no_repeat_trigrams`` likewise, no token trigram twice
    unless nothing else is left; ``no_doubled_words`` likewise, no word twice in a row; ``verbatim_quotes``
    likewise, what a summary quotes is a run of the document's tokens; ``document_names`` likewise, a name of one
    token (the generation config's ``name_words``) is the document's.
    ``speedups``: an object with ``guidance_class`` and ``prepare(model, guidance, kwargs) ->
    (context, kwargs)``, for SteerSum's faster path (:mod:`variants.speedups`); the same outputs either way."""
    kwargs.pop("model", None)
    unconditional = dict(unconditional or {})
    for key in [k for k in kwargs if k.startswith(UNCONDITIONAL)]:
        value = kwargs.pop(key)
        if value is not None:  # a caller's None is no input (it would stand for the encoded inputs' mask)
            unconditional[key[len(UNCONDITIONAL) :]] = value
    control_free_mask = None
    if unconditional_encoder_outputs is not None:
        control_free_mask = unconditional.pop("attention_mask", None)
    elif unconditional.get("input_ids") is not None and unconditional["input_ids"].dim() == 3:  # windows
        ids, mask = unconditional.pop("input_ids"), unconditional.pop("attention_mask")
        unconditional_encoder_outputs, control_free_mask = fuse_windows(model, ids, mask, unconditional)
        unconditional = {}
    input_ids = args[0] if args else kwargs.get("input_ids")
    if input_ids is not None and input_ids.dim() == 3:  # windows
        args = args[1:]
        kwargs.pop("input_ids", None)
        kwargs["encoder_outputs"], kwargs["attention_mask"] = fuse_windows(
            model, input_ids, kwargs["attention_mask"], encoder_extras(model, kwargs)
        )
    # a generation config given to generate (an adapter repo's) outranks the model's, as in generate itself
    config = kwargs.get("generation_config") or model.generation_config
    strength = check_strength(read_strength(config, 1.0) if guidance_scale is None else guidance_scale)
    processors = list(kwargs.pop("logits_processor", None) or [])
    stopping = list(kwargs.pop("stopping_criteria", None) or [])
    guidance = None
    if strength != 1 and (unconditional or unconditional_encoder_outputs is not None):
        guidance = (speedups.guidance_class if speedups is not None else ClassifierFreeGuidance)(
            model,
            strength,
            unconditional or None,
            encoder_outputs=unconditional_encoder_outputs,
            attention_mask=control_free_mask,
        )
        processors.append(guidance)
    if documents is None and decoding_rules is not None:
        documents = [r["document"] if isinstance(r, dict) else None for r in decoding_rules]
        documents = None if None in documents else documents
    given = {
        DOCUMENT_WORDS: document_words,
        FINISH_SENTENCES: finish_sentences,
        NO_REPEAT_TRIGRAMS: no_repeat_trigrams,
        NO_DOUBLED_WORDS: no_doubled_words,
        VERBATIM_QUOTES: verbatim_quotes,
        DOCUMENT_NAMES: document_names,
    }  # a caller's switch, else the generation config's unless constraints=False
    on = {
        rule: constraints and bool(getattr(config, rule, False)) if value is None else value
        for rule, value in given.items()
    }
    document_words = on[DOCUMENT_WORDS]
    if tokenizer is None and (
        any(on[rule] for rule in (DOCUMENT_WORDS, FINISH_SENTENCES, NO_DOUBLED_WORDS, VERBATIM_QUOTES, DOCUMENT_NAMES))
        or (constraints and decoding_rules is not None)
    ):
        # the tokenizer files only: the repo's processor code is not needed to split words into tokens
        tokenizer = AutoTokenizer.from_pretrained(model.name_or_path, trust_remote_code=False)
    repeat = 3 if on[NO_REPEAT_TRIGRAMS] else 0
    if document_words and not repeat:  # generate's own ban would cut the words the rule holds to the document's
        repeat = kwargs.get("no_repeat_ngram_size", getattr(config, "no_repeat_ngram_size", None)) or 0
    if repeat:
        kwargs["no_repeat_ngram_size"] = 0  # the penalty stands in for the ban
        pieces, joiners = (
            (word_pieces(tokenizer)[0], word_joiners(tokenizer)) if document_words else (None, frozenset())
        )
        processors.append(NoRepeatNgramsLogitsProcessor(repeat, pieces=pieces, joiners=joiners))
    if on[NO_DOUBLED_WORDS]:
        processors.append(NoDoubledWordsLogitsProcessor(word_pieces(tokenizer)[0], whole_words(tokenizer)))
    if constraints and decoding_rules is not None:
        rules = [DecodingRules.from_json(r) if isinstance(r, dict) else r for r in decoding_rules]
        budget = kwargs.get("max_new_tokens") or config.max_new_tokens or 128
        extra = rule_kwargs(tokenizer, rules, documents, budget, split_sentences)
        processors += extra.get("logits_processor", [])
        stopping += extra.get("stopping_criteria", [])
        kwargs["max_new_tokens"] = min(extra.get("max_new_tokens", budget), decoder_room(model))
    if document_words or on[VERBATIM_QUOTES] or on[DOCUMENT_NAMES]:
        sources = documents if documents is not None else source_texts(tokenizer, input_ids)
    if document_words:
        processors.append(DocumentWordsLogitsProcessor(tokenizer, sources))
    if on[VERBATIM_QUOTES]:
        processors.append(VerbatimQuotesLogitsProcessor(tokenizer, sources))
    if on[DOCUMENT_NAMES]:
        names = getattr(config, NAME_WORDS, None)
        if names is None:
            raise ValueError(f"{DOCUMENT_NAMES} is on, but the generation config lists no {NAME_WORDS} (token ids)")
        processors.append(DocumentNamesLogitsProcessor(tokenizer, sources, names))
    if on[FINISH_SENTENCES]:
        processors.append(SentenceEndLogitsProcessor(tokenizer))
    if processors:
        kwargs["logits_processor"] = LogitsProcessorList(processors)
    if stopping:
        kwargs["stopping_criteria"] = StoppingCriteriaList(stopping)
    context = contextlib.nullcontext()
    if speedups is not None:
        context, kwargs = speedups.prepare(model, guidance, kwargs)
    with context:
        # the class's generate: in an exported repo the model's own ``generate`` is this function
        return type(model).generate(model, *args, **kwargs)
