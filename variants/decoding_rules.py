"""The decoding rules: what one example's summary must satisfy or should prefer (:class:`DecodingRules`),
and the text and token measures the rules' logits processors (:mod:`variants.rule_processors`) read.

* Length: the summary's word count (whitespace words, as ``metrics.ccs.length_bins`` counts them) lands
  in the bin. The processor rules out the end of sequence until the text has the bin's fewest words, and
  once it has the most, every token that would start another word (the text can still end its last word
  and its sentence). The token budget comes from a measured tokens-per-word of the source
  (:func:`token_budget`).
* Keywords: biased, and along the path of the document sentences that hold them (:func:`keyword_paths`);
  forced only when the words left run out. The summary does not end while one is missing, nor before the
  sentence that wrote it is finished (:func:`sentence_finished`), so a keyword is never a fragment at the end.
* Preferred sentences (CCSBench's focus and readability, a persona reader's interests): their path
  (:func:`sentence_path`) is biased.
* Document words (a model's generation config's ``document_words``, whatever its controls): a word the
  vocabulary writes in more than one token, or one that starts with a digit, is one the document writes
  (:func:`document_words`), so a name or number is copied, not invented ("loftu" for Loftus, 55% for 56%);
  a number the tokenizer cuts at its point ("1 . 2") goes on as one of the document's.
* Document names (the generation config's ``document_names``, with its ``name_words``: the vocabulary's words a
  corpus writes capitalised mid-sentence more often than not): a name of one token ("alan", "london") is one the
  document writes, and a name right after a name follows it as in the document (:func:`document_names`); MiniLM's
  vocabulary holds most names whole, which the document-words rule leaves free.
* The other text rules' token sets: the vocabulary's whole words (:func:`whole_words`), the marks a reader reads
  inside a word (:func:`word_joiners`) and the quotation marks (:func:`quote_marks`); their processors are
  :mod:`variants.text_rules`.

Each row has its own rules (a batch mixes length bins): rows are the batch's examples, each repeated for
its beams, as ``generate`` expands them (:func:`per_row`).

Ships beside :mod:`variants.decoding` in an exported repo's ``custom_generate/``: torch, transformers and the
standard library only (NLTK's Punkt inside :func:`sentences`, for a rule that reads the document's
sentences when no splitter is given).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import torch

DOCUMENT_WORDS = "document_words"  # the generation config's switch of the document-words rule
FINISH_SENTENCES = "finish_sentences"  # ... and of the rule that a summary ends where a sentence does
NO_REPEAT_TRIGRAMS = "no_repeat_trigrams"  # ... and of the rule that no three tokens come twice
NO_DOUBLED_WORDS = "no_doubled_words"  # ... and of the rule that no word comes twice in a row ("with with")
VERBATIM_QUOTES = "verbatim_quotes"  # ... and of the rule that what a summary quotes, the document writes
DOCUMENT_NAMES = "document_names"  # ... and of the rule that a name of one token is the document's
NAME_WORDS = "name_words"  # the generation config's names for that rule: token ids (:func:`document_names`)
# The rules that read the text and no control, each a generation-config switch chosen on val.
TEXT_RULES = (DOCUMENT_WORDS, FINISH_SENTENCES, NO_REPEAT_TRIGRAMS, NO_DOUBLED_WORDS, VERBATIM_QUOTES, DOCUMENT_NAMES)
WORD_JOINERS = ("-", "'", "’")  # marks a reader reads inside a word: "Le-May", "they've"
NUMBER_MARKS = (".", ",")  # inside a number: "1.2", "1,000"
QUOTE_MARKS = (('"', '"'), ("“", "”"))  # a quotation's opening mark and the one that closes it
KEYWORD_BIAS = 4.0  # added to a keyword token's log-probability: e^4 ≈ 55 times more likely
PATH_BIAS = 2.0  # added along a preferred sentence's path: a preference, weaker than a keyword's
REPEAT_PENALTY = 1e4  # taken from a token that repeats an n-gram: below any other token's log-probability
WORD = re.compile(r"\w+")
SENTENCE_FINISHED = re.compile(r"[.!?](?:\s*[\"'’”)\]])*$")  # a closing mark may follow, spaced as tokens decode


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


@lru_cache(maxsize=8)
def word_pieces(tokenizer) -> tuple[list[bool], list[bool]]:
    """Which vocabulary tokens continue a word (no space before them, a letter or digit in them: WordPiece's
    ``##`` pieces, BPE's tokens without ``Ġ``), and which start one with a digit."""
    starts = word_starts(tokenizer).tolist()
    spelled = [t.lstrip("#Ġ▁") if t else "" for t in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))]
    pieces = [not start and any(c.isalnum() for c in t) for start, t in zip(starts, spelled)]
    digits = [start and t[:1].isdigit() for start, t in zip(starts, spelled)]
    return pieces, digits


@lru_cache(maxsize=8)
def whole_words(tokenizer) -> list[bool]:
    """Which vocabulary tokens start a word with a letter or digit in them: not a piece, not punctuation, not a
    special token such as ``[SEP]``."""
    starts = word_starts(tokenizer).tolist()
    special = set(tokenizer.all_special_ids)
    spelled = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    return [
        start and i not in special and any(c.isalnum() for c in t or "")
        for i, (start, t) in enumerate(zip(starts, spelled))
    ]


@lru_cache(maxsize=8)
def quote_marks(tokenizer) -> dict[int, int]:
    """The vocabulary's opening quotation marks (:data:`QUOTE_MARKS`), each with the mark that closes it: the
    straight mark closes itself, "“" is closed by "”"."""
    pairs = {}
    for opening, closing in QUOTE_MARKS:
        first, last = tokenizer.convert_tokens_to_ids([opening, closing])
        if tokenizer.unk_token_id not in (first, last) and None not in (first, last):
            pairs[first] = last
    return pairs


@lru_cache(maxsize=8)
def word_joiners(tokenizer) -> frozenset[int]:
    """The vocabulary's tokens that are a hyphen or an apostrophe alone (:data:`WORD_JOINERS`): the token after
    one goes on with the word a reader sees ("le - may" is "Le-May"), though the tokenizer starts a new word."""
    ids = tokenizer.convert_tokens_to_ids(list(WORD_JOINERS))
    return frozenset(i for i in ids if i is not None and i != tokenizer.unk_token_id)


@lru_cache(maxsize=64)
def document_tokens(tokenizer, document: str) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...] | None]:
    """The document's token ids as the text rules read it (a space before it, as a word within text), once per
    document for all of them, and where each token is in that text (a fast tokenizer's offsets; None from a slow
    one)."""
    text = " " + document
    if getattr(tokenizer, "is_fast", False):
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return tuple(encoded["input_ids"]), tuple(map(tuple, encoded["offset_mapping"]))
    return tuple(tokenizer(text, add_special_tokens=False)["input_ids"]), None


def document_runs(tokenizer, document: str) -> tuple[list[tuple[int, ...]], list[tuple[int, int]] | None]:
    """The document's words as token runs (a token and the pieces that continue it, :func:`word_pieces`), and each
    run's first and last character in the text (None where the tokenizer gives no offsets)."""
    pieces = word_pieces(tokenizer)[0]
    ids, offsets = document_tokens(tokenizer, document)
    runs, starts = [], []
    for position, token in enumerate(ids):
        if runs and token < len(pieces) and pieces[token]:
            runs[-1] += (token,)
        else:
            runs.append((token,))
            starts.append(position)
    if offsets is None:
        return runs, None
    ends = [start + len(run) - 1 for start, run in zip(starts, runs)]
    return runs, [(offsets[start][0], offsets[end][1]) for start, end in zip(starts, ends)]


def document_words(tokenizer, document: str) -> tuple[dict[tuple, set], set[tuple], set[int], dict[tuple, set], set]:
    """The document's words as token runs (:func:`document_runs`): for each proper prefix of a run, the pieces that
    follow it somewhere in the document, and the whole runs; the first tokens of its numbers, where a number
    starts (the "1" of "2.1%" and the "000" of "21,000" start none: "fell to 1." and "21.1 000" were numbers no
    reader finds in the document); for a number and the point or comma written right after it
    (:func:`number_marks`), the first tokens of the numbers the document goes on with there (the tokenizer cuts
    "1.2%" into the words "1", ".", "2"; "12, 14" is two numbers); and the parts of numbers the document never
    ends a number with: a number it writes only before a point and digits ("14" of "14.74"), and such a number
    with its mark ("14", ".")."""
    digits = word_pieces(tokenizer)[1]
    words, spans = document_runs(tokenizer, document)
    follow, whole = {}, set(words)
    for word in whole:
        for k in range(1, len(word)):
            follow.setdefault(word[:k], set()).add(word[k])
    decimals, marks, ended, parts = {}, number_marks(tokenizer), set(), set()
    for i, number in enumerate(words):
        if not starts_number(number, digits):
            continue
        mark, after = (words[i + 1 : i + 3] + [(), ()])[:2]
        joined = spans is None or (
            i + 2 < len(words) and spans[i][1] == spans[i + 1][0] and spans[i + 1][1] == spans[i + 2][0]
        )
        if joined and len(mark) == 1 and mark[0] in marks and after and starts_number(after, digits):
            decimals.setdefault((number, mark[0]), set()).add(after[0])
            parts.add(i + 2)
        else:  # the number ends here ("14 seconds", "12, 14"), and with a mark after it, so does the mark
            ended |= {number} | ({(number, mark[0])} if len(mark) == 1 else set())
    partial = {key for key in decimals if key not in ended} | {key[0] for key in decimals if key[0] not in ended}
    numbers = {word[0] for i, word in enumerate(words) if i not in parts and starts_number(word, digits)}
    return follow, whole, numbers, decimals, partial


def document_names(
    tokenizer, document: str, names: frozenset[int]
) -> tuple[set[int], set[int], dict[tuple, set[int]]]:
    """What the document writes of ``names`` (token ids of names of one token, :data:`NAME_WORDS`): the first
    tokens of its words, those it writes as a word alone, and for each of its words (a token run) the names that
    follow it: "Jason Scott" is the document's, "Alan Scott" not."""
    runs = document_runs(tokenizer, document)[0]
    starts = {run[0] for run in runs}
    alone = {run[0] for run in runs if len(run) == 1}
    after = {}
    for run, following in zip(runs, runs[1:]):
        if following[0] in names:
            after.setdefault(run, set()).add(following[0])
    return starts, alone, after


def starts_number(word: tuple[int, ...], digits: list[bool]) -> bool:
    return word[0] < len(digits) and digits[word[0]]


@lru_cache(maxsize=8)
def number_marks(tokenizer) -> frozenset[int]:
    """The tokens of :data:`NUMBER_MARKS`, which join the parts of a number the tokenizer cuts."""
    return frozenset(tokenizer.convert_tokens_to_ids(list(NUMBER_MARKS))) - {tokenizer.unk_token_id}


def last_word(row: list[int], pieces: list[bool]) -> tuple[int, ...]:
    """The token run of the word a row ends in: its last token that is not a piece, and the pieces after it."""
    start = len(row) - 1
    while start > 0 and row[start] < len(pieces) and pieces[row[start]]:
        start -= 1
    return tuple(row[start:])


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


def missing(text: str, keywords: tuple[str, ...]) -> list[str]:
    """The keywords whose words do not occur in a row in ``text`` (lower-cased word tokens)."""
    found = " " + " ".join(WORD.findall(text.lower())) + " "
    return [k for k in keywords if f" {' '.join(WORD.findall(k.lower()))} " not in found]


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


def sentence_finished(text: str) -> bool:
    """Whether ``text`` ends a sentence: its last mark, before any closing quote or bracket, is ``.``, ``!`` or
    ``?`` (empty text has no sentence to finish)."""
    return bool(SENTENCE_FINISHED.search(text.rstrip()))


def on_path(text: str, tail: list[int], path: tuple[set, dict]) -> set:
    """The tokens of ``path`` that may come next: a sentence's first token where the text starts a
    sentence, and the token that follows the text's last two where it is copying one."""
    starts, follow = path
    at_start = not text.strip() or sentence_finished(text)
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
