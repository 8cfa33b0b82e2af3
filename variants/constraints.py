"""Hard constraints of the decoder, for controls that are a number or a list (CCSBench's length bin
and keywords): what a weakly trained model does not obey, the decoder enforces.

* Length: the summary's word count (whitespace words, as :func:`metrics.ccs.length_bins` counts them)
  lands in the bin. :class:`WordBoundsLogitsProcessor` rules out the end of sequence until the text
  has the bin's fewest words, and once it has the most, rules out every token that would start
  another word (the text can still end its last word and its sentence). The token budget comes from
  a measured tokens-per-word of the source (:func:`token_budget`), so the decoder has room for the
  words asked; :class:`WordLimitStoppingCriteria` stops a row once it has ended its last word at the
  limit, so rows wait for nothing.
* Keywords: :class:`KeywordBiasLogitsProcessor` adds a bias to the tokens that begin a keyword, and
  to the next token of a keyword already begun, until the keyword is in the text; and to the path of
  the document's sentences that hold it (:func:`keyword_paths`): their first token where a summary
  sentence starts, and the next token of such a sentence where the summary is copying it. The end of
  sequence waits for missing keywords unless the word limit is reached. The keyword comes where the
  model finds it likely, inside a sentence the document says, not appended (a bias, not a forced
  token); only when the words left run out is it forced.
* Sentences the controls prefer (CCSBench's focus and readability, categories the decoder cannot count;
  a persona reader's interests): :class:`SentencePathLogitsProcessor` biases the path of the document's
  sentences that the variant's rule picks (``HardConstraints.prefer``), as the keyword paths do, so a
  summary sentence that copies the document starts one of them and follows it. The rule reads the
  document and the controls, never the judge that scores the summary.

Each row has its own constraints (a batch mixes length bins): rows are the batch's examples, each
repeated for its beams, as ``generate`` expands them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import torch
from transformers import LogitsProcessor, StoppingCriteria

from metrics.text import sentences

KEYWORD_BIAS = 4.0  # added to a keyword token's log-probability: e^4 ≈ 55 times more likely
PATH_BIAS = 2.0  # added along a preferred sentence's path: a preference, weaker than a keyword's
WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class HardConstraints:
    """What one example's output must satisfy: a word count in ``[min_words, max_words]`` (``None``:
    unbounded) and every keyword present; and what it should prefer: ``prefer`` picks, from the
    document's sentences, those a summary sentence should copy (``None``: any), with ``prefer_bias``
    added along their path."""

    min_words: int | None = None
    max_words: int | None = None
    keywords: tuple[str, ...] = ()
    prefer: Callable[[list[str]], list[str]] | None = None
    prefer_bias: float = PATH_BIAS

    def __post_init__(self):
        if self.min_words is not None and self.max_words is not None and self.min_words > self.max_words:
            raise ValueError(f"min_words {self.min_words} exceeds max_words {self.max_words}")

    @property
    def empty(self) -> bool:
        return self.min_words is None and self.max_words is None and not self.keywords and self.prefer is None


def tokens_per_word(tokenizer, texts: list[str]) -> float:
    """Tokens per whitespace word of ``texts`` under ``tokenizer``: the measured rate that turns a
    word bound into a token budget (about 1.3 for BART's BPE on news, more on scientific text)."""
    words = sum(len(t.split()) for t in texts)
    tokens = sum(len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"])
    return tokens / words if words else 1.0


def token_budget(constraints: list[HardConstraints], rate: float, default: int, slack: float = 1.3) -> int:
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


class _DecodedRows:
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
        self, tokenizer, constraints: list[HardConstraints], max_new_tokens: int, decoded: _DecodedRows | None = None
    ):
        self.constraints, self.eos, self.max_new_tokens = constraints, tokenizer.eos_token_id, max_new_tokens
        self.decoded = decoded or _DecodedRows(tokenizer)
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
        constraints: list[HardConstraints],
        bias: float = KEYWORD_BIAS,
        decoded: _DecodedRows | None = None,
        max_new_tokens: int | None = None,
        documents: list[str] | None = None,
    ):
        self.constraints, self.bias, self.max_new_tokens = constraints, bias, max_new_tokens
        self.paths = (
            [keyword_paths(tokenizer, c.keywords, d) for c, d in zip(constraints, documents)]
            if documents is not None
            else None
        )
        self.start_length: int | None = None
        self.decoded = decoded or _DecodedRows(tokenizer)
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


def keyword_paths(tokenizer, keywords: tuple[str, ...], document: str) -> dict[str, tuple[set, dict]]:
    """Where the document says each keyword: the path (:func:`sentence_path`) of the (first two)
    document sentences that hold it, up to the keyword. :class:`KeywordBiasLogitsProcessor` biases it,
    so a summary that starts one of those sentences, or is already copying it, is drawn along it to the
    keyword: the keyword comes in the document's own sentence, not alone at the end."""
    document_sentences = sentences(document)
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
        self, tokenizer, constraints: list[HardConstraints], documents: list[str], decoded: _DecodedRows | None = None
    ):
        self.decoded = decoded or _DecodedRows(tokenizer)
        self.paths = [
            (sentence_path(tokenizer, c.prefer(sentences(d))), c.prefer_bias) if c.prefer is not None else None
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

    def __init__(self, tokenizer, constraints: list[HardConstraints], decoded: _DecodedRows | None = None):
        self.constraints, self.decoded = constraints, decoded or _DecodedRows(tokenizer)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> torch.BoolTensor:
        rows = per_row(self.constraints, input_ids.shape[0])
        done = [
            c.max_words is not None and len(text.split()) >= c.max_words and text.rstrip().endswith((".", "!", "?"))
            for text, c in zip(self.decoded(input_ids), rows)
        ]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


def constraint_kwargs(tokenizer, constraints: list[HardConstraints], sources: list[str], max_new_tokens: int) -> dict:
    """``generate`` keyword arguments enforcing ``constraints`` (one per example; all empty: none):
    the processors, the stopping criterion and the token budget."""
    if all(c.empty for c in constraints):
        return {}
    decoded = _DecodedRows(tokenizer)
    budget = token_budget(constraints, tokens_per_word(tokenizer, sources), max_new_tokens)
    processors = [WordBoundsLogitsProcessor(tokenizer, constraints, budget, decoded)]
    if any(c.keywords for c in constraints):
        processors.insert(
            0,
            KeywordBiasLogitsProcessor(
                tokenizer, constraints, decoded=decoded, max_new_tokens=budget, documents=sources
            ),
        )
    if any(c.prefer is not None for c in constraints):
        processors.insert(0, SentencePathLogitsProcessor(tokenizer, constraints, sources, decoded=decoded))
    return {
        "logits_processor": processors,
        "stopping_criteria": [WordLimitStoppingCriteria(tokenizer, constraints, decoded)],
        "max_new_tokens": budget,
    }
