"""The decoding rules as ``generate``'s logits processors and stopping criterion, one rule set per example
(:class:`~variants.decoding_rules.DecodingRules`), and :func:`rule_kwargs`, which builds them for a batch.

* :class:`WordBoundsLogitsProcessor`: the word count's bounds (no end before the fewest words, no new word
  after the most) and no end while a keyword is missing.
* :class:`KeywordBiasLogitsProcessor`: a missing keyword's tokens, and its path through the document,
  gain a bias until it is written.
* :class:`SentencePathLogitsProcessor`: the preferred document sentences' path gains a bias.
* :class:`WordLimitStoppingCriteria`: a row ends once it has its most words and a finished sentence.

The rules that read the text and no control are :mod:`variants.text_rules`.

Ships beside :mod:`variants.decoding` in an exported repo's ``custom_generate/``: torch, transformers and its
siblings only.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from transformers import LogitsProcessor, StoppingCriteria

from .decoding_rules import (
    KEYWORD_BIAS,
    DecodedRows,
    DecodingRules,
    keyword_paths,
    missing,
    on_path,
    per_row,
    sentence_finished,
    sentence_path,
    sentences,
    token_budget,
    tokens_per_word,
    word_starts,
)


class WordBoundsLogitsProcessor(LogitsProcessor):
    """Per row: no end of sequence before ``min_words`` words, and when the tokens left in the budget
    (``max_new_tokens``) are barely enough for the words missing, only tokens that start a word; no
    token that starts a word once the text has ``max_words`` words; and, when the row asks for
    keywords, no end before they are in and the sentence is finished, unless the limit is reached. A
    rule that would leave a row no token at all (another processor forcing the end) gives way."""

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
                short = c.min_words is not None and count < c.min_words
                if short or missing(text, c.keywords) or (c.keywords and not sentence_finished(text)):
                    banned[self.eos] = True  # a written keyword's sentence is finished before the end
                if c.min_words is not None and left <= c.min_words - count + 1:
                    banned |= ~starts
            row = out[i].masked_fill(banned, -math.inf)
            if bool(torch.isfinite(row).any()):
                out[i] = row
        return out


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
            c.max_words is not None and len(text.split()) >= c.max_words and sentence_finished(text)
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
