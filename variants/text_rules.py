"""The rules that read the text and no control, as ``generate``'s logits processors: each is a switch in a model's
generation config (:data:`~variants.decoding_rules.TEXT_RULES`), chosen on val for the share of readable text it
is for (:mod:`metrics.quality`).

* :class:`DocumentWordsLogitsProcessor`: a word of several tokens, or one that starts with a digit, is one
  the document writes.
* :class:`SentenceEndLogitsProcessor`: no end before the text finishes a sentence.
* :class:`NoRepeatNgramsLogitsProcessor`: no token n-gram twice, unless nothing else is left, judged where a word
  starts.
* :class:`NoDoubledWordsLogitsProcessor`: no word twice in a row, unless nothing else is left.
* :class:`VerbatimQuotesLogitsProcessor`: what a summary quotes, the document writes.
* :class:`DocumentNamesLogitsProcessor`: a name of one token is the document's, and a name after a name follows it
  as in the document.

The control rules (a length bin, keywords, preferred sentences) are :mod:`variants.rule_processors`. Ships beside
:mod:`variants.decoding` in an exported repo's ``custom_generate/``: torch, transformers and its siblings only.
"""

from __future__ import annotations

import math

import torch
from transformers import LogitsProcessor, NoRepeatNGramLogitsProcessor

from .decoding_rules import (
    REPEAT_PENALTY,
    DecodedRows,
    document_names,
    document_tokens,
    document_words,
    last_word,
    number_marks,
    per_row,
    quote_marks,
    sentence_finished,
    starts_number,
    word_pieces,
)


def token_mask(flags: list[bool], size: int, device) -> torch.Tensor:
    """``flags``, one per vocabulary token, as a mask over ``size`` scores: a token past them (an added token)
    is not flagged."""
    mask = torch.zeros(size, dtype=torch.bool, device=device)
    width = min(len(flags), size)
    mask[:width] = torch.tensor(flags[:width], dtype=torch.bool, device=device)
    return mask


class DocumentWordsLogitsProcessor(LogitsProcessor):
    """Per row, the words of ``documents`` (one per example, :func:`~variants.decoding_rules.document_words`):
    a piece continues the word so far only where a document word does the same; while the word so far is
    only the start of a document word of several tokens, or of a number, nothing ends it; and a word that
    starts with a digit starts as a number of the document's does (not as its decimals: the "1" of "2.1%");
    after a number and a point or a comma, a digit goes on only as a number of the document's does ("1 . 2"
    only where it writes "1.2": the tokenizer cuts a number at its point), and a number the document writes
    only with its decimals gets them ("14" of "14.74" is no number of the document's: "four minutes 14."
    became "14.74"). Words of one token without a digit, the vocabulary's own, stay free: the rule keeps names
    and numbers to the document's, not the wording (the document-names rule binds the names among them). A row
    the rule would leave no token gives way."""

    def __init__(self, tokenizer, documents: list[str]):
        self.pieces, self.digits = word_pieces(tokenizer)
        self.marks = number_marks(tokenizer)
        self.words = []
        for document in documents:
            follow, whole, numbers, decimals, partial = document_words(tokenizer, document)
            self.words.append((follow, whole, sorted(numbers), decimals, partial))
        self._masks: tuple[torch.Tensor, torch.Tensor] | None = None

    def masks(self, size: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        """The pieces and the digit-starting tokens as masks over ``size`` scores (added tokens are neither),
        built at the first step."""
        if self._masks is None or self._masks[0].shape[0] != size:
            self._masks = (token_mask(self.pieces, size, device), token_mask(self.digits, size, device))
        return self._masks

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        pieces, digits = self.masks(scores.shape[-1], scores.device)
        out = scores.clone()
        for i, (row, (follow, whole, numbers, decimals, partial)) in enumerate(
            zip(input_ids.tolist(), per_row(self.words, input_ids.shape[0]))
        ):
            word = last_word(row, self.pieces)
            bound = len(word) > 1 or starts_number(word, self.digits)
            if bound and word not in whole:  # part of a document word: it goes on
                banned = torch.ones_like(pieces)
            elif word in partial:  # "14" of the document's "14.74" only: its point comes next
                banned = torch.ones_like(pieces)
                banned[[mark for (number, mark) in decimals if number == word]] = False
            else:
                banned = pieces | digits
                number = last_word(row[:-1], self.pieces) if row[-1] in self.marks else None
                if number and starts_number(number, self.digits):  # "1 ." goes on as the document's "1.2" only
                    numbers = sorted(decimals.get((number, row[-1]), ()))
                    if (number, row[-1]) in partial:  # ... and must go on where the document never ends it
                        banned = torch.ones_like(pieces)
                banned[numbers] = False
            banned[[t for t in follow.get(word, ()) if t < banned.shape[0]]] = False
            masked = out[i].masked_fill(banned, -math.inf)
            if bool(torch.isfinite(masked).any()):
                out[i] = masked
        return out


class SentenceEndLogitsProcessor(LogitsProcessor):
    """Per row: no end of sequence until the text ends a sentence (:func:`~variants.decoding_rules.sentence_finished`),
    so a summary that would stop on a noun phrase or mid-clause writes on to its full stop; the token budget still
    ends it. Reads the text only, no control. A row the rule would leave no token gives way."""

    def __init__(self, tokenizer, decoded: DecodedRows | None = None):
        self.eos = tokenizer.eos_token_id
        self.decoded = decoded or DecodedRows(tokenizer)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        out = scores.clone()
        for i, text in enumerate(self.decoded(input_ids)):
            if not sentence_finished(text):
                row = out[i].clone()
                row[self.eos] = -math.inf
                if bool(torch.isfinite(row).any()):
                    out[i] = row
        return out


class NoRepeatNgramsLogitsProcessor(LogitsProcessor):
    """No token n-gram twice, as a penalty rather than a ban, judged where a word starts: a token that would
    complete an n-gram the row holds already loses :data:`~variants.decoding_rules.REPEAT_PENALTY` from its
    score, so it is taken only where every token left would repeat one; with ``pieces`` (the vocabulary's word
    pieces, :func:`~variants.decoding_rules.word_pieces`), a piece that goes on with the word so far is never
    penalised, and the repeat is judged at the next word's first token. A ban (``generate``'s
    ``no_repeat_ngram_size``) cuts words: where the document-words rule leaves one piece to finish a word the
    summary wrote before ("ad ##vers" then "##aria" a second time), the ban left the row no finite score and the
    beam took any piece, a word the document never writes ("adversiral"); where the word could stop short, it
    stopped ("br" for Bruvik). With ``joiners`` (:func:`~variants.decoding_rules.word_joiners`), a token right
    after a hyphen or an apostrophe goes on with the word a reader sees and is not penalised either: barred,
    a name written twice changed its last part ("Le-May" became "Le-might") and a contraction its ending
    ("they'have"). Reads the tokens only, no control."""

    def __init__(
        self,
        size: int = 3,
        penalty: float = REPEAT_PENALTY,
        pieces: list[bool] | None = None,
        joiners: frozenset[int] = frozenset(),
    ):
        self.ban, self.penalty = NoRepeatNGramLogitsProcessor(size), penalty
        self.pieces, self.joiners = pieces, joiners
        self._free: torch.Tensor | None = None

    def free(self, size: int, device) -> torch.Tensor:
        """The tokens never penalised, as a mask over ``size`` scores: the word pieces (added tokens are none)."""
        if self._free is None or self._free.shape[0] != size:
            self._free = token_mask(self.pieces or [], size, device)
        return self._free

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        banned = torch.isinf(self.ban(input_ids, scores.clone())) & torch.isfinite(scores)
        banned &= ~self.free(scores.shape[-1], scores.device)
        if self.joiners:
            joined = torch.tensor([row[-1] in self.joiners for row in input_ids.tolist()], device=scores.device)
            banned &= ~joined[:, None]
        return scores - self.penalty * banned


class NoDoubledWordsLogitsProcessor(LogitsProcessor):
    """No word written twice in a row ("with with", "bible bible"), as a penalty: where a new word starts, the
    first token of the word just written loses :data:`~variants.decoding_rules.REPEAT_PENALTY`, so it is taken
    only where nothing else is left. Judged on a word's first token (``pieces``: the vocabulary's word pieces,
    :func:`~variants.decoding_rules.word_pieces`), so after a word of several tokens a different word with the
    same first token is penalised too; tokens without a letter or digit (punctuation) are free. The n-gram
    penalty misses these: a doubled word is a repeated 1-gram. Reads the tokens only, no control."""

    def __init__(self, pieces: list[bool], words: list[bool], penalty: float = REPEAT_PENALTY):
        self.pieces, self.words, self.penalty = pieces, words, penalty

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        out = scores.clone()
        for i, row in enumerate(input_ids.tolist()):
            first = last_word(row, self.pieces)[0]
            if first < min(len(self.words), out.shape[-1]) and self.words[first]:
                out[i, first] -= self.penalty
        return out


class VerbatimQuotesLogitsProcessor(LogitsProcessor):
    """Per row, what it quotes is the document's (one per example, ``documents``): inside a quotation (after an
    opening mark, :func:`~variants.decoding_rules.quote_marks`) the next token continues a run of tokens the
    document writes, the words quoted so far, or closes the quote once it holds a word; a quote opens on any
    token the document writes. A model trained on news makes up quotes ("I don't want me to get in in the
    competition"): a reader takes words in quotation marks as someone's own. The document's tokens are the
    tokenizer's, not the judge's words. A row the rule would leave no token gives way."""

    def __init__(self, tokenizer, documents: list[str]):
        self.closes = quote_marks(tokenizer)
        self.documents = []
        for document in documents:
            ids = list(document_tokens(tokenizer, document)[0])
            starts: dict[int, list[int]] = {}
            for position, token in enumerate(ids):
                starts.setdefault(token, []).append(position)
            self.documents.append((ids, starts))

    def quoted(self, row: list[int]) -> tuple[int, list[int]] | None:
        """The mark that closes the row's open quotation and the tokens after its opening mark, or None outside
        a quotation: a quotation opens at a mark and closes at the mark that closes it."""
        closing, start = None, 0
        for position, token in enumerate(row):
            if closing is None and token in self.closes:
                closing, start = self.closes[token], position + 1
            elif token == closing:
                closing = None
        return None if closing is None else (closing, row[start:])

    def allowed(self, closing: int, quoted: list[int], ids: list[int], starts: dict[int, list[int]]) -> set[int]:
        """The tokens that go on with ``quoted`` somewhere in the document (``ids``), and the ``closing`` mark
        once a word is quoted; any document token but a mark for an empty quote."""
        if not quoted:
            return set(starts) - set(self.closes) - set(self.closes.values())
        nexts = {
            ids[p + len(quoted)]
            for p in starts.get(quoted[0], ())
            if p + len(quoted) < len(ids) and ids[p : p + len(quoted)] == quoted
        }
        return nexts | {closing}

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        out = scores.clone()
        for i, (row, (ids, starts)) in enumerate(zip(input_ids.tolist(), per_row(self.documents, input_ids.shape[0]))):
            quotation = self.quoted(row)
            if quotation is None:
                continue
            allowed = torch.tensor(sorted(t for t in self.allowed(*quotation, ids, starts) if t < out.shape[-1]))
            keep = torch.full_like(out[i], -math.inf)
            if len(allowed):
                keep[allowed] = out[i, allowed]
            if bool(torch.isfinite(keep).any()):
                out[i] = keep
        return out


class DocumentNamesLogitsProcessor(LogitsProcessor):
    """Per row, the names of ``documents`` (one per example, :func:`~variants.decoding_rules.document_names`): a name
    of one token (``names``: token ids, the generation config's :data:`~variants.decoding_rules.NAME_WORDS`) starts
    a word only where the document writes a word that starts with it; one the document writes only as the start
    of a longer word goes on with a piece ("gr" for "Groenefeld" is no word); and right after a name, a name comes
    only where the document writes the two in a row ("Alan Scott" from "Jason Scott" and "Alan Smith"). The
    document-words rule holds names of several tokens; MiniLM's vocabulary writes most names in one token
    ("alan", "london", "gogh"), which it leaves free. The names come from a corpus's capitalisation, not from the
    judge's dictionary. A row the rule would leave no token gives way."""

    def __init__(self, tokenizer, documents: list[str], names):
        self.pieces = word_pieces(tokenizer)[0]
        self.names = frozenset(names)
        self.documents = [document_names(tokenizer, document, self.names) for document in documents]
        self._masks: tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]] | None = None

    def masks(self, size: int, device) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
        """The names and the word pieces as masks over ``size`` scores, and per document the names it lacks (no word
        of it starts with them): built at the first step, not at every one."""
        if self._masks is None or self._masks[0].shape[0] != size:
            names = torch.zeros(size, dtype=torch.bool, device=device)
            names[[t for t in self.names if t < size]] = True
            lacking = []
            for starts, _, _ in self.documents:
                lacks = names.clone()
                lacks[[t for t in starts if t < size]] = False
                lacking.append(lacks)
            self._masks = (names, token_mask(self.pieces, size, device), lacking)
        return self._masks

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        names, pieces, lacking = self.masks(scores.shape[-1], scores.device)
        out = scores.clone()
        for i, (row, (starts, alone, after), lacks) in enumerate(
            zip(input_ids.tolist(), per_row(self.documents, input_ids.shape[0]), per_row(lacking, input_ids.shape[0]))
        ):
            word = last_word(row, self.pieces)
            if len(word) == 1 and word[0] in self.names and word[0] in starts and word[0] not in alone:
                banned = ~pieces  # the start of a document's longer word: it goes on
            elif word[0] in self.names:  # after a name, a name only as the document writes the two
                banned = names.clone()
                banned[[t for t in after.get(word, ()) if t < banned.shape[0]]] = False
            else:
                banned = lacks
            masked = out[i].masked_fill(banned, -math.inf)
            if bool(torch.isfinite(masked).any()):
                out[i] = masked
        return out
