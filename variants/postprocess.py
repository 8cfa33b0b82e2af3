"""Generated text as a reader expects it: the document's case and spacing, complete sentences.

The stored models share an uncased WordPiece vocabulary, so what they write comes out lower case with
the tokenizer's spacing: "1. 4bn euros ( £960m ; $ 1. 85bn )", "better - than - expected", "u. s.".
Most of those words are the document's own, and the document says how to write them. So
:func:`postprocess` maps the generated token stream onto the document:

1. Both texts are cut into surface tokens (a run of word characters, or one other non-space
   character), each keyed without case, accents or quote style.
2. From each generated token on, the longest run of tokens that the document also has, in a row, is
   written as the document writes it (its case and its spacing inside the run): "1 . 4bn" becomes
   "1.4bn", "u . s ." becomes "U.S.". Where the document writes the run several ways, the way the
   generated text already has wins (so cased text stays as it is), else the most frequent one.
3. A word the document has only alone takes its most frequent case in the document, counting only
   occurrences that do not start a sentence ("The" at a sentence start says nothing about "the").
   A word the document never has is left as written. Text with any capital letter is cased already
   (a cased model's, an extractive summary): its case is left as written, only its spacing is fixed.
4. Between tokens that no document run joins, spaces the tokenizer put around punctuation go
   (", . ; : ! ? % )" take no space before, "( $ £" none after, "don ' t", "1 . 4bn", "well - known"
   close up); a space is added only after a plural possessive's apostrophe that the uncased tokenizer's
   decoder glued to the next word ("tories'clause" is "Tories' clause").
5. Sentence starts are capitalised, and a trailing unfinished sentence is dropped when a complete one
   comes before it (a summary that is one unfinished sentence is kept: dropping it leaves nothing).

Pure Python with no dependency, so an exported Hub repo can carry a copy of this file. Text that is
already cased and spaced, a cased model's output or an extractive summary, comes out unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

__all__ = ["postprocess", "restore_surface", "complete_sentences", "capitalise_sentences", "SENTENCE_END"]

TOKEN = re.compile(r"\w+|[^\w\s]")
NO_SPACE_BEFORE = frozenset(",.;:!?%)]}”’")
NO_SPACE_AFTER = frozenset("([{$£€#“‘")
JOINERS = frozenset(".,:")  # between digits: "1 . 4bn", "1 , 000", "3 : 30"
CONTRACTIONS = frozenset({"s", "t", "re", "ve", "ll", "d", "m"})  # after an apostrophe: "don ' t", "bank ' s"
APOSTROPHES = frozenset("'’")
# A period after one of these (or after a single letter: "U.S.", "J. Smith") ends no sentence.
ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
        "gen",
        "gov",
        "sen",
        "rep",
        "lt",
        "col",
        "sgt",
        "capt",
        "vs",
        "inc",
        "ltd",
        "co",
        "corp",
        "jan",
        "feb",
        "apr",
        "aug",
        "sept",
        "oct",
        "nov",
        "dec",
        "al",
    }
)
# Sentence-final punctuation, possibly followed by closing quotes or brackets.
SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*")
QUOTE_KEYS = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})


def key(token: str) -> str:
    """A token without case, accents or quote style: what an uncased tokenizer keeps of it."""
    decomposed = unicodedata.normalize("NFKD", token.translate(QUOTE_KEYS))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def tokens_of(text: str) -> list[tuple[str, str]]:
    """Surface tokens of ``text``, each with the whitespace before it ("" for none)."""
    matches = list(TOKEN.finditer(text))
    return [(m.group(0), text[(matches[i - 1].end() if i else m.start()) : m.start()]) for i, m in enumerate(matches)]


def starts_sentence(tokens: list[tuple[str, bool]], i: int) -> bool:
    """Whether token ``i`` opens a sentence: the first word, or the first after a sentence end (past
    any opening quote or bracket) that no abbreviation or initial explains."""
    j = i - 1
    while j >= 0 and tokens[j][0] in "\"'“‘([":
        j -= 1
    while j >= 0 and tokens[j][0] in "\"'”’)]":
        j -= 1
    if j < 0:
        return True
    if tokens[j][0] not in ".!?":
        return False
    if tokens[j][0] == "." and j > 0:
        before = key(tokens[j - 1][0])
        if (len(before) == 1 and before.isalpha()) or before in ABBREVIATIONS:
            return False
    return True


class DocumentIndex:
    """The document's tokens, where each key occurs, and each word's most frequent mid-sentence case."""

    def __init__(self, document: str):
        self.tokens = tokens_of(document)
        self.keys = [key(t) for t, _ in self.tokens]
        self.initial = [starts_sentence(self.tokens, i) for i in range(len(self.tokens))]
        self.positions: dict[str, list[int]] = {}
        inner: dict[str, Counter] = {}
        leading: dict[str, Counter] = {}  # sentence-initial words that look like names: the fallback
        for i, (token, k) in enumerate(zip((t for t, _ in self.tokens), self.keys)):
            self.positions.setdefault(k, []).append(i)
            if not self.initial[i]:
                inner.setdefault(k, Counter())[token] += 1
            elif self.name_like(i):
                leading.setdefault(k, Counter())[token] += 1
        self.case = {k: counts.most_common(1)[0][0] for k, counts in {**leading, **inner}.items()}

    def name_like(self, i: int) -> bool:
        """Whether a sentence-initial capitalised word reads as a name: a possessive follows it
        ("Renault's") or another capitalised word does ("Louis Schweitzer"); "However," does not."""
        following = [t for t, _ in self.tokens[i + 1 : i + 3]]
        return (
            self.tokens[i][0][:1].isupper()
            and bool(following)
            and (following[0][:1].isupper() or (following[0] in APOSTROPHES and following[1:] == ["s"]))
        )

    def word(self, token: str) -> str:
        """A lower-case ``token`` in the document's mid-sentence case; other tokens, and words the document
        writes only at sentence starts (unless they read as names there), as written."""
        return self.case.get(key(token), token) if token.islower() else token

    def rendering(self, start: int, n: int) -> tuple[tuple[str, str], ...]:
        """The run of ``n`` tokens at ``start`` as the document writes it (with whether a space precedes
        each), a sentence-initial word in its mid-sentence case: the summary may not start a sentence there."""
        return tuple(
            (
                self.word(token.lower()) if self.initial[i] and token[:1].isupper() and token[1:].islower() else token,
                spaced,
            )
            for i, (token, spaced) in enumerate(self.tokens[start : start + n], start)
        )

    def match(self, generated: list[str], i: int) -> tuple[int, tuple[tuple[str, str], ...] | None]:
        """The longest run of two or more document tokens equal to the generated ones from ``i`` on: its
        length and how it is written (as the generated text writes it when the document has that way,
        else the document's most frequent way); ``(1, None)`` when no such run exists."""
        wanted = [key(t) for t in generated[i:]]
        best, starts = 1, []
        for start in self.positions.get(wanted[0], ()):
            n = 1
            while n < len(wanted) and start + n < len(self.keys) and self.keys[start + n] == wanted[n]:
                n += 1
            if n > best:
                best, starts = n, [start]
            elif n == best and n > 1:
                starts.append(start)
        if not starts:
            return 1, None
        ways = Counter(self.rendering(s, best) for s in starts)
        for way in ways:
            if [t for t, _ in way] == generated[i : i + best]:
                return best, way
        return best, ways.most_common(1)[0][0]


@lru_cache(maxsize=64)
def document_index(document: str) -> DocumentIndex:
    return DocumentIndex(document)


def closes_up(
    before: str | None, left: str, right: str, after: str | None, quote_open: bool, left_spaced: bool
) -> bool:
    """Whether the tokenizer's space between ``left`` and ``right`` goes (``before`` and ``after``: the
    tokens around them; ``quote_open``: a straight double quote is open after ``left``;
    ``left_spaced``: a space stays before ``left``)."""
    if right in NO_SPACE_BEFORE or left in NO_SPACE_AFTER:
        return True
    if right == '"':
        return quote_open  # it closes the quote
    if left == '"':
        return quote_open  # it opened one
    if right in APOSTROPHES:  # "don ' t", "bank ' s"
        return left[-1:].isalnum() and after is not None and key(after) in CONTRACTIONS
    if left in APOSTROPHES:
        return key(right) in CONTRACTIONS and before is not None and before[-1:].isalnum()
    if right == "-":  # "well - known", between two words only
        return left[-1:].isalnum() and after is not None and after[:1].isalnum()
    if left == "-":  # a dash the document spaces ("the draw - is") stays spaced on both sides
        return right[:1].isalnum() and before is not None and before[-1:].isalnum() and not left_spaced
    return False


def surface_tokens(text: str, document: str) -> list[tuple[str, str, bool]]:
    """The generated tokens in the document's forms: ``(token, whitespace before it, from_document)``,
    where ``from_document`` says the document decided whether a space precedes the token (inside one of
    its runs; the whitespace itself stays the generated text's where both have some)."""
    generated = tokens_of(text)
    words = [t for t, _ in generated]
    index = document_index(document)
    cased = any(c.isupper() for c in text)  # a cased writer's case is its own
    out: list[tuple[str, str, bool]] = []
    i = 0
    while i < len(words):
        n, way = index.match(words, i)
        if way is None:
            out.append((words[i] if cased else index.word(words[i]), generated[i][1], False))
        else:
            for j, ((token, space), written) in enumerate(zip(way, words[i : i + n])):
                token = written if cased else token
                space = generated[i + j][1] if not j or (space and generated[i + j][1]) else space and " "
                out.append((token, space, j > 0))
        i += n
    return out


def glued_possessive(tokens: list[tuple[str, str, bool]], i: int) -> bool:
    """Whether token ``i`` is a word that the uncased tokenizer's decoder glued to a plural possessive's
    apostrophe ("tories ' clause" decodes as "tories'clause"): an apostrophe after a word, then a word that is
    no contraction's ending."""
    token, left, before = tokens[i][0], tokens[i - 1][0], tokens[i - 2][0] if i > 1 else ""
    return left in APOSTROPHES and before[-1:].isalnum() and token[:1].isalpha() and key(token) not in CONTRACTIONS


def restore_surface(text: str, document: str) -> str:
    """``text`` with the document's surface forms (case, and spacing inside its runs) and the
    tokenizer's spaces around punctuation closed up (see the module docstring)."""
    tokens = surface_tokens(text, document)
    cased = any(c.isupper() for c in text)
    pieces, quote_open, spaces = [], False, []
    for i, (token, space, from_document) in enumerate(tokens):
        spaced = bool(space)
        if i and not spaced and not from_document and not cased and glued_possessive(tokens, i):
            space, spaced = " ", True
        if i and spaced and not from_document:
            left = tokens[i - 1][0]
            before = tokens[i - 2][0] if i > 1 else None
            after = tokens[i + 1][0] if i + 1 < len(tokens) else None
            number = token[:1].isdigit() and left in JOINERS and (before or "")[-1:].isdigit()  # "1 . 4bn"
            spaced = not (number or closes_up(before, left, token, after, quote_open, spaces[-1]))
        spaces.append(bool(i and spaced))
        pieces.append((space if i and spaced else "") + token)
        if token == '"':
            quote_open = not quote_open
    return "".join(pieces)


def sentence_ends(text: str) -> list[int]:
    """Where each sentence of ``text`` ends (offsets just past its final punctuation and closers):
    before whitespace or the end, and not after an abbreviation or an initial ("Mr.", "U.S.", "J.")."""
    ends = []
    for m in SENTENCE_END.finditer(text):
        if m.end() < len(text) and not text[m.end()].isspace():
            continue
        before = re.search(r"(\w+)$", text[: m.start()])
        word = before.group(1).lower() if before else ""
        if (
            m.end() < len(text)
            and text[m.start()] == "."
            and ((len(word) == 1 and word.isalpha()) or word in ABBREVIATIONS)
        ):
            continue
        ends.append(m.end())
    return ends


def complete_sentences(text: str) -> str:
    """``text`` without a trailing unfinished sentence, when a complete sentence comes before it."""
    text = text.strip()
    ends = sentence_ends(text)
    if not ends or ends[-1] == len(text):
        return text
    return text[: ends[-1]]


def capitalise_sentences(text: str) -> str:
    """``text`` with the first word of each sentence capitalised when it is written in lower case."""
    chars = list(text)
    for start in [0, *sentence_ends(text)]:
        m = re.compile(r"[\s\"'“‘(\[]*([^\W\d_]\w*)").match(text, start)
        if m and m.group(1).islower():
            chars[m.start(1)] = chars[m.start(1)].upper()
    return "".join(chars)


def postprocess(text: str, document: str) -> str:
    """A generated summary as a reader expects it: the document's case and spacing, sentence starts
    capitalised, a trailing unfinished sentence dropped when a complete one precedes it. Text with a
    capital letter anywhere is cased already: its words keep their case (a sentence written in lower
    case still gains its capital)."""
    return capitalise_sentences(complete_sentences(restore_surface(text, document)))
