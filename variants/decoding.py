"""How a SteerSum model decodes: one plain ``generate`` call given logits processors.

* Control strength: classifier-free guidance (Ho & Salimans 2022; for language models Sanchez et al.
  2023, "Stay on topic with classifier-free guidance"). At every step the next-token log-probabilities
  given the controls, ``l_c``, move away from those given the same document without them, ``l_u``::

      l = l_u + γ (l_c − l_u)

  γ = 1 is plain generation. ``generate`` takes γ under transformers' name, ``guidance_scale``; inside
  SteerSum it is the control strength (``control_strength``), and a model's default is its generation
  config's ``control_strength`` (``control_guidance`` in older folders).
* Decoding rules (:class:`DecodingRules`): what a weakly trained model does not obey, the decoder
  enforces or prefers. A length bin's word count, keywords that must appear, and the document sentences
  a summary should copy (a bias along their path).
* The text fixes (the document's case and spacing, complete sentences) run on decode: ``postprocess.py``,
  through the processor's ``decode``.

``generate(model, **inputs)`` is the whole path; ``constraints=False`` gives the model alone (no rules).
SteerSum's Space and evaluation call it with their speed-ups (:mod:`variants.speedups`: int8 kernels, the
LM head's product, the beam cache, the control-free rows decoded in the same forward pass), which change
how fast, not what is written.

Standalone (torch, transformers and the standard library; NLTK's Punkt only where a rule needs the
document's sentences and none were given): an exported repo ships this file as
``custom_generate/generate.py``, and ``AutoModelForSeq2SeqLM.from_pretrained(repo, trust_remote_code=True)``
makes it the model's ``generate``. ``scripts/fix_copies.py`` and the export keep the copies in step.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch
from torch import nn
from transformers import (
    AutoTokenizer,
    LogitsProcessor,
    LogitsProcessorList,
    StoppingCriteria,
    StoppingCriteriaList,
    UnbatchedClassifierFreeGuidanceLogitsProcessor,
)
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput

STRENGTH_RANGE = (1.0, 10.0)
STRENGTH_FIELD = "control_strength"  # generation_config.json and steersum.json: the model's default γ
OLD_STRENGTH_FIELDS = ("control_guidance",)  # the same, as older folders name it
UNCONDITIONAL = "unconditional_"  # a processor's control-free inputs: unconditional_input_ids, ...
# Tokens per row whose unconditional logits are computed: the conditional distribution's most likely.
# The mixture is renormalized, so the unconditional normalizer cancels and only these logits are
# needed; the language-model head then costs K x d instead of vocabulary x d per row (most of a small
# model's decoding step: 30k x 384 for the MiniLM base). Tokens outside them get no guided score:
# guidance re-ranks what the controlled model finds plausible rather than promoting tokens it does not.
CANDIDATES = 256


def check_strength(value: Any) -> float:
    """γ as a float in :data:`STRENGTH_RANGE`, or a ``ValueError`` naming the bad value and the range.

    γ < 1 is refused: between 0 and 1 guidance weakens the controls, which the evaluation's shuffled
    and ignored-control rows already measure, and at 0 it would drop the masks other processors set
    (a forced end of sequence). Above 10 the mixture is dominated by the difference of two nearly equal
    distributions: noise, not control."""
    low, high = STRENGTH_RANGE
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise ValueError(
            f"control strength (guidance_scale, γ) must be a number from {low:g} (plain generation) to "
            f"{high:g}, got {value!r}"
        )
    return float(value)


def read_strength(config: Any, default: Any = None) -> Any:
    """The control strength a generation config or a record (a dict) holds, under its name or an older one."""
    get = config.get if isinstance(config, dict) else lambda name: getattr(config, name, None)
    for name in (STRENGTH_FIELD, *OLD_STRENGTH_FIELDS):
        if get(name) is not None:
            return get(name)
    return default


def default_strength(model) -> float:
    """A model's default control strength: its generation config's, else 1 (plain generation)."""
    return check_strength(read_strength(getattr(model, "generation_config", None), 1.0))


def sentences(text: str) -> list[str]:
    """Sentences by NLTK's Punkt model, line breaks treated as paragraph ends (SteerSum's
    ``metrics.text.sentences``, which its callers pass in)."""
    import nltk

    return [
        s.strip()
        for paragraph in text.split("\n")
        if paragraph.strip()
        for s in nltk.sent_tokenize(paragraph)
        if s.strip()
    ]


# --- decoding rules -------------------------------------------------------------------------------------
# * Length: the summary's word count (whitespace words, as ``metrics.ccs.length_bins`` counts them) lands
#   in the bin. WordBoundsLogitsProcessor rules out the end of sequence until the text has the bin's fewest
#   words, and once it has the most, every token that would start another word (the text can still end
#   its last word and its sentence). The token budget comes from a measured tokens-per-word of the source
#   (token_budget); WordLimitStoppingCriteria stops a row once it has ended its last word at the limit.
# * Keywords: KeywordBiasLogitsProcessor adds a bias to the tokens that begin a missing keyword, to the
#   next token of one begun, and along the path of the document sentences that hold it (keyword_paths).
#   The end of sequence waits for missing keywords unless the word limit is reached; only when the words
#   left run out is a keyword forced.
# * Preferred sentences (CCSBench's focus and readability, a persona reader's interests):
#   SentencePathLogitsProcessor biases the path of the sentences the variant's rule picks.
# Each row has its own rules (a batch mixes length bins): rows are the batch's examples, each repeated
# for its beams, as ``generate`` expands them.

KEYWORD_BIAS = 4.0  # added to a keyword token's log-probability: e^4 ≈ 55 times more likely
PATH_BIAS = 2.0  # added along a preferred sentence's path: a preference, weaker than a keyword's
WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class DecodingRules:
    """What one example's output must satisfy: a word count in ``[min_words, max_words]`` (``None``:
    unbounded) and every keyword present; and what it should prefer: ``prefer`` picks, from the
    document's sentences, those a summary sentence should copy (``None``: any), with ``prefer_bias``
    added along their path."""

    min_words: int | None = None
    max_words: int | None = None
    keywords: tuple[str, ...] = ()
    prefer: Callable[[list[str]], list[str]] | tuple[str, ...] | None = None
    prefer_bias: float = PATH_BIAS

    def __post_init__(self):
        if self.min_words is not None and self.max_words is not None and self.min_words > self.max_words:
            raise ValueError(f"min_words {self.min_words} exceeds max_words {self.max_words}")

    @property
    def empty(self) -> bool:
        return self.min_words is None and self.max_words is None and not self.keywords and self.prefer is None

    def preferred(self, document_sentences: list[str]) -> list[str]:
        """The document sentences a summary sentence should copy: ``prefer``'s pick (a rule, or the
        sentences themselves when a processor picked them already)."""
        if callable(self.prefer):
            return self.prefer(document_sentences)
        return list(self.prefer) if self.prefer is not None else document_sentences

    @classmethod
    def from_json(cls, rules: dict) -> DecodingRules:
        """Rules as a processor gives them to ``generate``: ``prefer`` true for every document sentence, or
        the list of sentences it picked."""
        prefer = rules.get("prefer")
        return cls(
            rules.get("min_words"),
            rules.get("max_words"),
            tuple(rules.get("keywords") or ()),
            list if prefer is True else tuple(prefer) if prefer else None,
            rules.get("prefer_bias", PATH_BIAS),
        )


def tokens_per_word(tokenizer, texts: list[str]) -> float:
    """Tokens per whitespace word of ``texts`` under ``tokenizer``: the measured rate that turns a
    word bound into a token budget (about 1.3 for BART's BPE on news, more on scientific text)."""
    words = sum(len(t.split()) for t in texts)
    tokens = sum(len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"])
    return tokens / words if words else 1.0


def token_budget(constraints: list[DecodingRules], rate: float, default: int, slack: float = 1.3) -> int:
    """``max_new_tokens`` for a batch: room for the most words any row may need at ``rate`` tokens per
    word, with ``slack`` for punctuation and rare words; never below ``default``. A row without an
    upper bound needs its lower bound plus one more default's worth."""
    need = [
        c.max_words if c.max_words is not None else (c.min_words or 0) + default / max(rate, 1e-6)
        for c in constraints
        if c.max_words is not None or c.min_words is not None
    ]
    return max([default] + [math.ceil(words * rate * slack) + 4 for words in need])


@lru_cache(maxsize=8)
def word_starts(tokenizer) -> torch.Tensor:
    """Which vocabulary tokens begin a new whitespace word: those the tokenizer's own decoder writes after
    a space when they follow a word — BPE's ``Ġ`` and SentencePiece's ``▁`` tokens, a newline, and in
    WordPiece every token but a ``##`` continuation and the punctuation its decoder attaches (``.``, ``,``).
    Asking the decoder, not the token's spelling, keeps the count the one ``text.split()`` makes."""
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    return torch.tensor([bool(t) and tokenizer.convert_tokens_to_string(["a", t])[1:2].isspace() for t in tokens])


def per_row(values: list, rows: int) -> list:
    """The examples' values repeated for their beams (``rows`` = examples x beams)."""
    if rows % len(values):
        raise ValueError(f"{len(values)} examples' constraints for {rows} decoded rows")
    times = rows // len(values)
    return [v for v in values for _ in range(times)]


class DecodedRows:
    """The generated text of each row, shared by the constraints: each distinct row is decoded once.
    Beam search shows the stopping criterion its candidates (one token past the processors' rows), and
    the next step's processors the candidates it kept: the same rows, decoded already."""

    def __init__(self, tokenizer):
        self.tokenizer, self.texts = tokenizer, {}

    def __call__(self, input_ids: torch.Tensor) -> list[str]:
        rows = [tuple(row) for row in input_ids.tolist()]
        new = [row for row in dict.fromkeys(rows) if row not in self.texts]
        if new:
            self.texts.update(zip(new, self.tokenizer.batch_decode(new, skip_special_tokens=True)))
        return [self.texts[row] for row in rows]


class WordBoundsLogitsProcessor(LogitsProcessor):
    """Per row: no end of sequence before ``min_words`` words, and when the tokens left in the budget
    (``max_new_tokens``) are barely enough for the words missing, only tokens that start a word; no
    token that starts a word once the text has ``max_words`` words; and, when the row asks for
    keywords, no end before they are in, unless the limit is reached. A rule that would leave a row
    no token at all (another processor forcing the end) gives way."""

    def __init__(
        self, tokenizer, constraints: list[DecodingRules], max_new_tokens: int, decoded: DecodedRows | None = None
    ):
        self.constraints, self.eos, self.max_new_tokens = constraints, tokenizer.eos_token_id, max_new_tokens
        self.decoded = decoded or DecodedRows(tokenizer)
        self.starts = word_starts(tokenizer)
        self.start_length: int | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        rows = per_row(self.constraints, input_ids.shape[0])
        if self.start_length is None:
            self.start_length = input_ids.shape[1]
        left = self.max_new_tokens - (
            input_ids.shape[1] - self.start_length
        )  # tokens still to come, this one included
        width = min(len(self.starts), scores.shape[-1])
        starts = torch.zeros(scores.shape[-1], dtype=torch.bool, device=scores.device)
        starts[:width] = self.starts[:width].to(scores.device)
        out = scores.clone()
        for i, (text, c) in enumerate(zip(self.decoded(input_ids), rows)):
            count = len(text.split())
            banned = torch.zeros_like(starts)
            if c.max_words is not None and count >= c.max_words:
                banned |= starts
            else:
                if (c.min_words is not None and count < c.min_words) or missing(text, c.keywords):
                    banned[self.eos] = True
                if c.min_words is not None and left <= c.min_words - count + 1:
                    banned |= ~starts
            row = out[i].masked_fill(banned, -math.inf)
            if bool(torch.isfinite(row).any()):
                out[i] = row
        return out


def missing(text: str, keywords: tuple[str, ...]) -> list[str]:
    """The keywords whose words do not occur in a row in ``text`` (lower-cased word tokens)."""
    found = " " + " ".join(WORD.findall(text.lower())) + " "
    return [k for k in keywords if f" {' '.join(WORD.findall(k.lower()))} " not in found]


class KeywordBiasLogitsProcessor(LogitsProcessor):
    """Per row, until a keyword is in the text: ``bias`` added to each token that begins it (written
    with and without a leading space, lower-case and capitalized), and to the next token of a spelling
    the text has just begun. Unlike transformers' ``SequenceBiasLogitsProcessor``, whose bias stays
    for the whole generation and so makes the model repeat the keyword, the bias ends once the keyword
    is there."""

    def __init__(
        self,
        tokenizer,
        constraints: list[DecodingRules],
        bias: float = KEYWORD_BIAS,
        decoded: DecodedRows | None = None,
        max_new_tokens: int | None = None,
        documents: list[str] | None = None,
        split: Callable[[str], list[str]] | None = None,
    ):
        self.constraints, self.bias, self.max_new_tokens = constraints, bias, max_new_tokens
        self.paths = (
            [keyword_paths(tokenizer, c.keywords, d, split) for c, d in zip(constraints, documents)]
            if documents is not None
            else None
        )
        self.start_length: int | None = None
        self.decoded = decoded or DecodedRows(tokenizer)
        self.spellings: dict[str, list[list[int]]] = {}
        for keyword in {k for c in constraints for k in c.keywords}:
            forms = {keyword, keyword.lower(), keyword[:1].upper() + keyword[1:]}
            ids = tokenizer([f" {f}" for f in forms] + list(forms), add_special_tokens=False)["input_ids"]
            self.spellings[keyword] = [s for s in {tuple(x) for x in ids} if s]
        self.tail = max(
            [2] + [len(s) for spellings in self.spellings.values() for s in spellings]
        )  # tokens a check reads

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        rows = per_row(self.constraints, input_ids.shape[0])
        row_paths = per_row(self.paths, input_ids.shape[0]) if self.paths is not None else [None] * len(rows)
        if self.start_length is None:
            self.start_length = input_ids.shape[1]
        left = (
            math.inf if self.max_new_tokens is None else self.max_new_tokens - (input_ids.shape[1] - self.start_length)
        )
        out = scores.clone()
        for i, (text, c, paths) in enumerate(zip(self.decoded(input_ids), rows, row_paths)):
            tail, wanted = input_ids[i, -self.tail :].tolist(), missing(text, c.keywords)
            boosted, fits = set(), set()  # fits: tokens that still leave room for every missing keyword
            room = sum(min(len(s) for s in self.spellings[k]) for k in wanted)  # tokens the keywords need at least
            for keyword in wanted:
                for spelling in self.spellings[keyword]:
                    boosted.add(spelling[0])
                    if len(spelling) + room - min(len(s) for s in self.spellings[keyword]) < left:
                        fits.add(spelling[0])
                    for done in range(1, len(spelling)):  # the spelling's first `done` tokens end the text
                        if tail[-done:] == list(spelling[:done]):
                            boosted.add(spelling[done])
                            fits.add(spelling[done])
            if paths is not None:
                for keyword in wanted:
                    boosted |= on_path(text, tail, paths.get(keyword, (set(), {})))
            if boosted:
                out[i, sorted(boosted)] += self.bias
            # The last resort: when the budget (one token kept for the end of sequence), or the words left
            # under the length limit, have just room for the missing keywords, only their tokens may come
            # (constrained decoding), so a keyword the bias did not bring is still written; never so far that
            # the row is left no token at all.
            words_left = math.inf if c.max_words is None else c.max_words - len(text.split())
            if wanted and (left <= room + 1 or words_left <= sum(len(k.split()) for k in wanted)) and fits:
                row = torch.full_like(out[i], -math.inf)
                row[sorted(fits)] = out[i, sorted(fits)]
                if bool(torch.isfinite(row).any()):
                    out[i] = row
        return out


def sentence_path(tokenizer, document_sentences: list[str], until: list[int] | None = None) -> tuple[set, dict]:
    """The path of ``document_sentences`` in token ids: the first token of each, and for each two-token
    context in one, the token that follows it there (up to the first ``until`` run, when given)."""
    starts, follow = set(), {}
    for sentence in document_sentences:
        ids = tokenizer(" " + sentence, add_special_tokens=False)["input_ids"]
        end = (
            next((j + len(until) for j in range(len(ids)) if ids[j : j + len(until)] == until), len(ids))
            if until
            else len(ids)
        )
        if ids:
            starts.add(ids[0])
        for j in range(2, min(end, len(ids))):
            follow.setdefault((ids[j - 2], ids[j - 1]), set()).add(ids[j])
    return starts, follow


def on_path(text: str, tail: list[int], path: tuple[set, dict]) -> set:
    """The tokens of ``path`` that may come next: a sentence's first token where the text starts a
    sentence, and the token that follows the text's last two where it is copying one."""
    starts, follow = path
    at_start = not text.strip() or text.rstrip().endswith((".", "!", "?"))
    return (starts if at_start else set()) | follow.get(tuple(tail[-2:]), set())


def keyword_paths(
    tokenizer, keywords: tuple[str, ...], document: str, split: Callable[[str], list[str]] | None = None
) -> dict[str, tuple[set, dict]]:
    """Where the document says each keyword: the path (:func:`sentence_path`) of the (first two)
    document sentences that hold it, up to the keyword. :class:`KeywordBiasLogitsProcessor` biases it,
    so a summary that starts one of those sentences, or is already copying it, is drawn along it to the
    keyword: the keyword comes in the document's own sentence, not alone at the end."""
    document_sentences = (split or sentences)(document)
    return {
        keyword: sentence_path(
            tokenizer,
            [s for s in document_sentences if not missing(s, (keyword,))][:2],
            until=tokenizer(" " + keyword, add_special_tokens=False)["input_ids"],
        )
        for keyword in keywords
    }


class SentencePathLogitsProcessor(LogitsProcessor):
    """Per row whose constraints ``prefer`` some of the document's sentences: their ``prefer_bias``
    added along the sentences' path (:func:`on_path`), so a summary sentence starts one of them and,
    once copying it, goes on with it. A bias, not a rule: the model still writes what it finds far
    likelier."""

    def __init__(
        self,
        tokenizer,
        constraints: list[DecodingRules],
        documents: list[str],
        decoded: DecodedRows | None = None,
        split: Callable[[str], list[str]] | None = None,
    ):
        self.decoded = decoded or DecodedRows(tokenizer)
        self.paths = [
            (sentence_path(tokenizer, c.preferred((split or sentences)(d))), c.prefer_bias)
            if c.prefer is not None
            else None
            for c, d in zip(constraints, documents)
        ]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        out = scores.clone()
        rows = per_row(self.paths, input_ids.shape[0])
        for i, (text, path) in enumerate(zip(self.decoded(input_ids), rows)):
            boosted = on_path(text, input_ids[i, -2:].tolist(), path[0]) if path is not None else set()
            if boosted:
                out[i, sorted(boosted)] += path[1]
        return out


class WordLimitStoppingCriteria(StoppingCriteria):
    """A row is done once its text has ``max_words`` words and its last token ended a sentence (the
    logits processor already keeps it from starting another word)."""

    def __init__(self, tokenizer, constraints: list[DecodingRules], decoded: DecodedRows | None = None):
        self.constraints, self.decoded = constraints, decoded or DecodedRows(tokenizer)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> torch.BoolTensor:
        rows = per_row(self.constraints, input_ids.shape[0])
        done = [
            c.max_words is not None and len(text.split()) >= c.max_words and text.rstrip().endswith((".", "!", "?"))
            for text, c in zip(self.decoded(input_ids), rows)
        ]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


def rule_kwargs(
    tokenizer,
    rules: list[DecodingRules],
    sources: list[str],
    max_new_tokens: int,
    split: Callable[[str], list[str]] | None = None,
) -> dict:
    """``generate`` keyword arguments that apply ``rules`` (one per example; all empty: none): the
    processors, the stopping criterion and the token budget. ``split``: the sentence splitter for the
    rules that read the document's sentences (default :func:`sentences`)."""
    if all(r.empty for r in rules):
        return {}
    decoded = DecodedRows(tokenizer)
    budget = token_budget(rules, tokens_per_word(tokenizer, sources), max_new_tokens)
    processors = [WordBoundsLogitsProcessor(tokenizer, rules, budget, decoded)]
    if any(r.keywords for r in rules):
        processors.insert(
            0,
            KeywordBiasLogitsProcessor(
                tokenizer, rules, decoded=decoded, max_new_tokens=budget, documents=sources, split=split
            ),
        )
    if any(r.prefer is not None for r in rules):
        processors.insert(0, SentencePathLogitsProcessor(tokenizer, rules, sources, decoded=decoded, split=split))
    return {
        "logits_processor": processors,
        "stopping_criteria": [WordLimitStoppingCriteria(tokenizer, rules, decoded)],
        "max_new_tokens": budget,
    }


# --- classifier-free guidance ---------------------------------------------------------------------------
# transformers' UnbatchedClassifierFreeGuidanceLogitsProcessor does this for decoder-only models, the
# unconditional prompt re-run with its own cache. ClassifierFreeGuidance adds the encoder side: it encodes
# the unconditional inputs once (with any extra model inputs: TF-IDF scores, GSum's signal ids, topic ids),
# runs the decoder on the same decoder tokens as ``generate`` with its own ``past_key_values``, and follows
# beam search's reordering of the beams.


def expand_rows(value: Any, times: int) -> Any:
    """Every tensor of an encoder output (a ModelOutput or a tensor) repeated ``times`` times along
    the batch, each row's copies together, as ``generate`` expands its own for beams."""
    if times == 1 or value is None:
        return value
    if isinstance(value, torch.Tensor):
        return value.repeat_interleave(times, dim=0)
    for key in list(value.keys()):
        if isinstance(value[key], torch.Tensor):
            value[key] = value[key].repeat_interleave(times, dim=0)
    return value


def parent_rows(sequences: torch.Tensor, previous: torch.Tensor, group: int) -> torch.Tensor | None:
    """Which row of the previous step each row continues: beam search keeps the best continuations,
    so row r's tokens but the last are some row's tokens of the previous step, in the same example's
    group of ``group`` beams. Rows with equal prefixes have equal caches, so the first match serves.
    ``None`` when some row has no parent (then the caller recomputes from scratch)."""
    n, length = previous.shape
    current = sequences[:, :length].view(n // group, group, 1, length)  # (B, k, 1, t)
    before = previous.view(n // group, 1, group, length)  # (B, 1, k, t)
    same = (current == before).all(-1)  # (B, k, k): row i continues row j
    if not bool(same.any(-1).all()):
        return None
    first = same.int().argmax(-1)  # (B, k)
    offsets = torch.arange(0, n, group, device=sequences.device)[:, None]
    return (offsets + first).reshape(-1)


class CandidateHead(nn.Module):
    """Stands in for a language-model head (a Linear) during the unconditional pass: each row's logits
    for its candidate tokens only, -inf for every other token, in the head's full output shape."""

    def __init__(self, head: nn.Linear, candidates: torch.Tensor):
        super().__init__()
        self.head, self.candidates = head, candidates  # candidates: (rows, K) token ids

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        weight = self.head.weight[self.candidates]  # (N, K, d)
        logits = torch.einsum("nsd,nkd->nsk", hidden, weight.to(hidden.dtype))  # (N, S, K)
        if self.head.bias is not None:
            logits = logits + self.head.bias[self.candidates][:, None, :]
        out = hidden.new_full((*hidden.shape[:2], self.head.out_features), -math.inf)  # (N, S, V)
        return out.scatter(2, self.candidates[:, None, :].expand(-1, hidden.shape[1], -1), logits)


def head_owner(model) -> nn.Module | None:
    """The module that holds ``model``'s LM head as ``lm_head``, when the unconditional side may have only
    its candidates scored: the head is a Linear layer (a subclass counts: generation computes it with
    :class:`variants.seq2seq.LMHead`, whose weight is the Linear's) and the model does not post-process
    its logits over the whole vocabulary (TDSum's RwGen). ``None`` otherwise (an int8 copy's head,
    RwGen): every logit is needed. Found once per processor, not at every step (it walks the modules)."""
    head = model.get_output_embeddings()
    if not isinstance(head, nn.Linear) or getattr(model.config, "rwgen_lambda", 0):
        return None
    return next((m for m in model.modules() if m._modules.get("lm_head") is head), None)


@contextlib.contextmanager
def head_replaced(owner: nn.Module | None, replacement: nn.Module | None):
    """``owner``'s LM head is ``replacement`` while inside; nothing changes when either is ``None``."""
    if owner is None or replacement is None:
        yield
        return
    head, owner.lm_head = owner.lm_head, replacement
    try:
        yield
    finally:
        owner.lm_head = head


class ClassifierFreeGuidance(UnbatchedClassifierFreeGuidanceLogitsProcessor):
    """Classifier-free guidance for an encoder-decoder ``model``, as a logits processor for ``generate``.

    ``unconditional``: the control-free encoder inputs, one row per example of the batch
    (``input_ids``, ``attention_mask`` and any extra encoder input such as ``tfidf``,
    ``guidance_input_ids``, ``topic_ids``); or give ``encoder_outputs`` (and ``attention_mask``)
    already computed, e.g. a persona model's article states without the reader. With beams, each
    example's rows are expanded as ``generate`` expands its own.

    Beam search reorders the beams after each step and tells only its own cache (``reorder_cache``);
    a logits processor sees the reordered token sequences. Each row's tokens but the last are those of
    the row it continues (:func:`parent_rows`), so the unconditional cache is reordered to match.
    ``use_cache=False`` re-runs the decoder on the whole prefix at each step instead (the reference
    the cached path is tested against, and slower: ``benchmarks/guidance.py``). ``candidates``: how
    many of each row's most likely conditional tokens get a guided score (:data:`CANDIDATES`; None:
    every token, the whole LM head run twice).

    Served, the unconditional rows are decoded in ``generate``'s own forward pass instead
    (:class:`variants.speedups.PairedGuidance`): the same scores, one pass.
    """

    def __init__(
        self,
        model,
        guidance_scale: float,
        unconditional: dict[str, torch.Tensor] | None = None,
        encoder_outputs: Any = None,
        attention_mask: torch.Tensor | None = None,
        use_cache: bool = True,
        candidates: int | None = CANDIDATES,
    ):
        if unconditional is None and encoder_outputs is None:
            raise ValueError("classifier-free guidance needs the unconditional inputs or their encoder_outputs")
        super().__init__(check_strength(guidance_scale), model, use_cache=use_cache)
        self.inputs = dict(unconditional or {})
        self.encoder_outputs = encoder_outputs
        self.attention_mask = attention_mask if attention_mask is not None else self.inputs.get("attention_mask")
        self.cache: EncoderDecoderCache | None = None
        self.previous: torch.Tensor | None = None  # the decoder tokens the cache holds
        self.group, self.encoded = 1, False
        self.candidates = candidates
        self.head_owner = head_owner(model)  # None: the unconditional side needs every logit

    def encode(self, rows: int) -> None:
        """The unconditional encoder outputs, once, expanded to the ``rows`` that ``generate`` decodes."""
        if self.encoder_outputs is None:
            self.encoder_outputs = self.model.get_encoder()(**self.inputs, return_dict=True)
        if not isinstance(self.encoder_outputs, (BaseModelOutput, dict)):
            self.encoder_outputs = BaseModelOutput(last_hidden_state=self.encoder_outputs)
        batch = self.encoder_outputs["last_hidden_state"].shape[0]
        if rows % batch:
            raise ValueError(f"guidance was given {batch} unconditional inputs for {rows} decoded rows")
        self.group = rows // batch
        self.encoder_outputs = expand_rows(self.encoder_outputs, self.group)
        self.attention_mask = expand_rows(self.attention_mask, self.group)
        self.encoded = True

    def get_unconditional_logits(
        self, input_ids: torch.Tensor, candidates: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Next-token logits ``(rows, vocab)`` of the unconditional input after the decoder tokens
        ``input_ids``; with ``candidates`` (``(rows, K)`` token ids) only theirs, -inf elsewhere."""
        if not self.encoded:
            self.encode(input_ids.shape[0])
        step = input_ids
        if not self.unconditional_context["use_cache"]:
            cache = None
        elif (
            self.previous is not None
            and self.previous.shape[1] == input_ids.shape[1] - 1
            and (parents := parent_rows(input_ids, self.previous, self.group)) is not None
        ):
            if not torch.equal(parents, torch.arange(len(parents), device=parents.device)):
                # Only the self-attention cache: an example's beams share one encoder row and a parent is
                # in its child's group, so the cross-attention keys and values are already right, and
                # reordering them would copy rows x source length x d_model per layer at every step.
                self.cache.self_attention_cache.reorder_cache(parents)
            cache, step = self.cache, input_ids[:, -1:]
        else:  # the first step, or a sequence the cache cannot follow: start again from the whole prefix
            cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        owner = self.head_owner
        plain = owner is None or candidates is None
        with head_replaced(owner, None if plain else CandidateHead(owner.lm_head, candidates)):
            out = self.model(
                encoder_outputs=self.encoder_outputs,
                attention_mask=self.attention_mask,
                decoder_input_ids=step,
                past_key_values=cache,
                use_cache=cache is not None,
                return_dict=True,
            )
        self.cache, self.previous = cache, input_ids
        return out.logits[:, -1, :]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        # As UnbatchedClassifierFreeGuidanceLogitsProcessor.__call__, in float32, with two changes. A
        # token another processor ruled out (-inf: end of sequence before min_new_tokens, anything but
        # it at max_length) stays ruled out. And the mixture is normalized again, p ∝ p_u^(1-γ) p_c^γ
        # (Ho & Salimans' guided distribution): beam search adds these scores up, and unnormalized they
        # would rank hypotheses by more than their tokens (a forced end of sequence would score
        # (1 - γ) l_u instead of 0).
        conditional = torch.nn.functional.log_softmax(scores.float(), dim=-1)
        candidates = None
        if self.candidates is not None and self.candidates < scores.shape[-1]:
            candidates = conditional.topk(self.candidates, dim=-1).indices  # (rows, K)
        unconditional = torch.nn.functional.log_softmax(
            self.get_unconditional_logits(input_ids, candidates).float(), dim=-1
        )
        if candidates is not None:
            # The unconditional scores are normalized over the candidates only: put them on the whole
            # vocabulary's scale by giving the candidates the mass they have under the conditional; every
            # other token (-inf here) keeps its conditional score below (no guidance there). Renormalized
            # over the candidates alone, each beam's scores would rise by its own -log(candidate mass), and
            # beam search would rank hypotheses differently even where the controls change nothing.
            unconditional = unconditional + torch.logsumexp(conditional.gather(1, candidates), dim=-1, keepdim=True)
        mixed = unconditional + self.guidance_scale * (conditional - unconditional)
        mixed = torch.where(torch.isfinite(unconditional), mixed, conditional)
        mixed = torch.where(torch.isneginf(conditional), conditional, mixed)
        # Normalized, then given back the scale of ``scores``: beam search adds log-probabilities taken
        # before other processors ruled tokens out (no repeated n-grams), so each row keeps its own
        # -log(mass left) as in plain generation; renormalized alone, rows with much ruled out would rise
        # and the beams would be ranked differently even at γ = 1.
        offset = torch.logsumexp(scores.float(), dim=-1, keepdim=True)
        return (torch.nn.functional.log_softmax(mixed, dim=-1) + offset).to(scores.dtype)


# --- generate -------------------------------------------------------------------------------------------


def decoder_room(model) -> int | float:
    """The most tokens the decoder can write after its start token: a model with learned positions
    (BART's ``max_position_embeddings``) has no position past them, so a length bin's token budget (the
    open last bin asks for 201+ words) is capped there; unbounded for relative positions (T5)."""
    limit = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    return limit - 1 if isinstance(limit, int) else math.inf


def generate(
    model,
    *args: Any,
    guidance_scale: float | None = None,
    unconditional: dict[str, torch.Tensor] | None = None,
    unconditional_encoder_outputs: Any = None,
    decoding_rules: list | None = None,
    constraints: bool = True,
    documents: list[str] | None = None,
    tokenizer: Any = None,
    split_sentences: Callable[[str], list[str]] | None = None,
    speedups: Any = None,
    **kwargs: Any,
) -> torch.Tensor:
    """``model.generate(*args, **kwargs)`` with the control strength and the decoding rules as logits processors.

    ``guidance_scale``: the control strength γ (default: that of the ``generation_config`` given, else the
    model's, as :func:`default_strength` reads it); guidance
    needs the control-free inputs, ``unconditional`` (a dict of encoder inputs, or given as
    ``unconditional_input_ids``, ``unconditional_attention_mask``, ... keyword arguments, as a processor
    returns them) or their ``unconditional_encoder_outputs`` (with ``unconditional_attention_mask``).
    ``decoding_rules``: one :class:`DecodingRules` (or its JSON, as a processor returns it, holding its
    ``document``) per example, applied unless ``constraints=False`` (the model alone); they read the
    ``documents`` through ``tokenizer`` (default: the model's own folder's). ``speedups``: an object with
    ``guidance_class`` and ``prepare(model, guidance, kwargs) -> (context, kwargs)``, for SteerSum's faster
    path (:mod:`variants.speedups`); the same outputs either way."""
    kwargs.pop("model", None)
    unconditional = dict(unconditional or {})
    for key in [k for k in kwargs if k.startswith(UNCONDITIONAL)]:
        value = kwargs.pop(key)
        if value is not None:  # a caller's None is no input (it would stand for the encoded inputs' mask)
            unconditional[key[len(UNCONDITIONAL) :]] = value
    control_free_mask = None
    if unconditional_encoder_outputs is not None:
        control_free_mask = unconditional.pop("attention_mask", None)
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
    if constraints and decoding_rules is not None:
        rules = [DecodingRules.from_json(r) if isinstance(r, dict) else r for r in decoding_rules]
        if documents is None:
            documents = [r["document"] for r in decoding_rules]
        if tokenizer is None:
            # the tokenizer files only: the repo's processor code is not needed to split words into tokens
            tokenizer = AutoTokenizer.from_pretrained(model.name_or_path, trust_remote_code=False)
        budget = kwargs.get("max_new_tokens") or config.max_new_tokens or 128
        extra = rule_kwargs(tokenizer, rules, documents, budget, split_sentences)
        processors += extra.get("logits_processor", [])
        stopping += extra.get("stopping_criteria", [])
        kwargs["max_new_tokens"] = min(extra.get("max_new_tokens", budget), decoder_room(model))
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
