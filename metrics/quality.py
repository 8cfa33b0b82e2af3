"""Scores that catch text a reader would not accept, whatever the control: batched pure functions.

A control metric says whether a summary obeys its control; these say whether it reads as a summary:

* ``ends_sentence`` (1/0): the summary ends in sentence-final punctuation (``. ! ?``, possibly followed
  by a closing quote or bracket), so it was not cut mid-sentence;
* ``repeated_trigram`` (1/0): a run of three lower-cased words (:data:`metrics.text.WORD`) occurs twice
  anywhere in it, the mark of a decoding loop ("out out out", a sentence written twice);
* ``doubled_word`` (1/0): a word comes twice in a row ("with with", "was was"), a loop no trigram shows;
* ``altered_quote`` (1/0): it puts in quotation marks words its document does not write in that order (a
  made-up quote: "I don't want me to get in in the competition");
* ``unsupported_facts`` (count) and ``has_unsupported`` (1/0): the summary's names and numbers that its
  document never writes, compared case-insensitively. A name is a capitalised word that does not
  start a sentence, or one :func:`summary_facts` finds in lower-cased text (a word the document only
  writes capitalised mid-sentence, or one no dictionary knows: "ufkos"), but no contraction ("I'm", "don't");
  a number is a digit token (:func:`summary_numbers`).

:func:`quality` gives all of them per summary (:data:`QUALITY_FIELDS`); a mean over summaries is a share.
Where the controls ask for a length (a word range, such as CCS's length bin), :func:`length_against` sets the
summary's whitespace words (as the length bins count them) against it: ``length_in_bounds`` (1/0).
:func:`quality_notices` says in words which of them a summary fails. :func:`verbatim_share` is the
general summarizer's faithfulness figure: the share of all such facts found in their sources.
"""

from __future__ import annotations

import re

from metrics.text import WORD as TOKEN

QUALITY_FIELDS = (
    "ends_sentence",
    "repeated_trigram",
    "doubled_word",
    "altered_quote",
    "unsupported_facts",
    "has_unsupported",
)
LENGTH_FIELDS = ("words", "asked_min_words", "asked_max_words", "length_in_bounds")  # only where a length is asked
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
WORD = re.compile(r"[a-z][a-z'-]*")  # a fact's word: hyphens and apostrophes inside ("o'shea", "non-league")
FINAL = re.compile(r"[.!?][\"'”’)\]]*$")
# A capitalised word and whether text before it ends a sentence (or there is none).
CAPITALISED = re.compile(r"(?<![\w'’-])([A-Z][A-Za-z'’-]*)")
SENTENCE_BREAK = re.compile(r"(?:^|[.!?:][\"'”’)\]]*)[\s\"'“‘(\[]*$")
UNFINISHED = "the summary does not end with a complete sentence"  # the notice of a failed ``ends_sentence``
POSSESSIVE = re.compile(r"(?:['’]s?)$")
QUOTE = re.compile(r'["“”]')
SENTENCE_GAP = re.compile(r"(?<=[.!?])\s+")  # where a quote's sentences part
DOUBLED = re.compile(r"(?<![\w'’-])(\w+)\s+\1(?![\w'’-])", re.IGNORECASE)  # "with with", not "that that's"
TITLES = frozenset({"mr", "mrs", "ms", "dr", "prof", "sir", "dame", "lord", "lady"})  # a name's title is no fact
SPACED_NUMBER = re.compile(r"\d+(?:\s*[.,]\s*\d+)+")  # "1. 4" as WordPiece decodes "1.4", or "2025, 40"
# A contraction: a word and its clitic ("don't", "I'm", "we've"), no name; "'s" only after a function word ("it's"),
# since "Smith's" is a name's possessive
CONTRACTION = re.compile(r"^([a-z]+)(n['’]t|['’](?:m|re|ve|ll|d|s))$")
CONTRACTED = frozenset({"ca", "wo", "sha", "ai"})  # "can't", "won't", "shan't", "ain't"


def summary_facts(summary: str, document: str) -> list[str]:
    """The names and numbers a summary states, which must be copied right. A summary may be lower-cased
    (MiniLM's vocabulary is uncased), so a name is found by its word: one the source only writes
    capitalized mid-sentence (a proper noun), or one no dictionary knows (WordNet and stop words: rare
    names, and garbled ones such as "ufkos")."""
    from nltk.corpus import wordnet
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    proper = {m.group(1).lower() for m in re.finditer(r"(?<=[a-z,;] )([A-Z][A-Za-z'-]+)", document)}
    lowered = set(WORD.findall(document))  # words the source also writes in lower case
    names = [
        w
        for w in WORD.findall(summary.lower())
        if len(w) > 2
        and ((w in proper and w not in lowered) or (w not in ENGLISH_STOP_WORDS and not wordnet.morphy(w)))
    ]
    return [w for w in names if not contraction(w)] + summary_numbers(summary, document)


def summary_numbers(summary: str, document: str) -> list[str]:
    """The summary's numbers: one written with spaces around its point or comma is read whole where the document
    writes it so (WordPiece decodes "5.25" as "5. 25"), else as its parts ("By 2025, 40%" is two numbers)."""
    known = set(NUMBER.findall(document))

    def whole(match: re.Match) -> str:
        compact = re.sub(r"\s+", "", match.group(0))
        return compact if compact in known else match.group(0)

    return NUMBER.findall(SPACED_NUMBER.sub(whole, summary))


def contraction(word: str) -> bool:
    """Whether a lower-cased word is a contraction ("don't", "i'm", "it's"): no name, whatever the document
    writes."""
    from nltk.corpus import wordnet
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    match = CONTRACTION.match(word)
    if match is None:
        return False
    stem, clitic = match.groups()
    common = stem in ENGLISH_STOP_WORDS or stem in CONTRACTED
    return common or (clitic[-1] != "s" and bool(wordnet.morphy(stem)))


def verbatim_share(summaries: list[str], documents: list[str]) -> tuple[float | None, int]:
    """Share of the summaries' names and numbers (:func:`summary_facts`) found verbatim in their source,
    compared case-insensitively, as whole words."""
    found = total = 0
    for summary, document in zip(summaries, documents):
        source_words = set(WORD.findall(document.lower())) | set(NUMBER.findall(document))
        for fact in summary_facts(summary, document):
            total += 1
            found += fact in source_words
    return (found / total if total else None), total


def capitalised_names(summary: str) -> list[str]:
    """The summary's capitalised words that do not start a sentence, lower-cased ("I", single letters as
    in "U.S.", titles such as "Mr" and contractions such as "I'm" are left out)."""
    return [
        word
        for m in CAPITALISED.finditer(summary)
        if len(word := m.group(1).lower()) > 1
        and word not in TITLES
        and not contraction(word)
        and not SENTENCE_BREAK.search(summary[: m.start()])
    ]


def bare(word: str) -> str:
    """A word without a possessive or a dangling hyphen ("Smith's" -> "smith", "cub-" -> "cub")."""
    return POSSESSIVE.sub("", word.lower()).strip("-'’")


def unsupported(summary: str, document: str) -> list[str]:
    """The summary's names and numbers (see the module docstring) that its document never writes, each
    once, in order. A possessive counts as its word ("Smith's" is supported by "Smith"), and a hyphenated
    word as its parts: each must be the document's or a dictionary word ("Betts-Green" needs "Betts"; a
    compound the model joins from the document's words, "human-originated", is no invented fact)."""
    from nltk.corpus import wordnet

    words = {bare(w) for w in WORD.findall(document.lower())}
    source = words | {part for w in words for part in w.split("-")} | set(NUMBER.findall(document))
    missing = []
    for fact in summary_facts(summary, document) + capitalised_names(summary):
        fact = bare(fact) if fact[:1].isalpha() else fact
        parts = [p for p in fact.split("-") if p] if fact[:1].isalpha() and fact not in source else []
        if (
            fact
            and fact not in source
            and not (
                len(parts) > 1
                and all(p in source or (p not in capitalised_words(summary) and wordnet.morphy(p)) for p in parts)
            )
        ):
            missing.append(fact)
    return list(dict.fromkeys(missing))


def capitalised_words(summary: str) -> set[str]:
    """The lower-cased parts of the summary's capitalised words: a name's parts need the document."""
    return {part for m in CAPITALISED.finditer(summary) for part in bare(m.group(1)).split("-")}


def ends_sentence(summaries: list[str]) -> list[int]:
    """1 for each summary that ends in sentence-final punctuation, else 0."""
    return [int(bool(FINAL.search(s.strip()))) for s in summaries]


def repeated_trigram(summaries: list[str]) -> list[int]:
    """1 for each summary in which some run of three lower-cased words occurs twice, else 0."""
    flags = []
    for summary in summaries:
        words = [w.lower() for w in TOKEN.findall(summary)]
        trigrams = list(zip(words, words[1:], words[2:]))
        flags.append(int(len(set(trigrams)) < len(trigrams)))
    return flags


def doubled_word(summaries: list[str]) -> list[int]:
    """1 for each summary in which a lower-cased word follows itself, with nothing but spaces between, else 0
    ("with with"; "had, had" is no double)."""
    return [int(bool(DOUBLED.search(summary))) for summary in summaries]


def quotes(text: str) -> list[str]:
    """What ``text`` puts in quotation marks: straight marks pair in order (the first opens), curly ones say
    which they are; a quote left open runs to the end."""
    found, start = [], None
    for match in QUOTE.finditer(text):
        mark = match.group(0)
        if start is None and mark != "”":
            start = match.end()
        elif start is not None and mark != "“":
            found.append(text[start : match.start()])
            start = None
    return found + ([text[start:]] if start is not None else [])


def altered_quotes(summary: str, document: str) -> list[str]:
    """The summary's quotes (:func:`quotes`), stripped, with a sentence whose lower-cased words
    (:data:`metrics.text.WORD`) the document does not write in a row; a quote without a word is none. Each sentence
    of a quote is judged alone: a news paragraph that goes on quoting in the next leaves its quote open, so an
    extract of two sentences far apart in the document reads as one quote across them."""

    def words(text: str) -> str:
        return " ".join(w.lower() for w in TOKEN.findall(text))

    written = f" {words(document)} "
    return [
        q.strip()
        for q in quotes(summary)
        if any(words(part) and f" {words(part)} " not in written for part in SENTENCE_GAP.split(q))
    ]


def quality(summaries: list[str], documents: list[str]) -> list[dict[str, int]]:
    """The :data:`QUALITY_FIELDS` of each summary against its document."""
    if len(summaries) != len(documents):
        raise ValueError(f"{len(summaries)} summaries but {len(documents)} documents")
    missing = [unsupported(s, d) for s, d in zip(summaries, documents)]
    return [
        {
            "ends_sentence": end,
            "repeated_trigram": loop,
            "doubled_word": double,
            "altered_quote": int(bool(altered_quotes(s, d))),
            "unsupported_facts": len(m),
            "has_unsupported": int(bool(m)),
        }
        for s, d, end, loop, double, m in zip(
            summaries,
            documents,
            ends_sentence(summaries),
            repeated_trigram(summaries),
            doubled_word(summaries),
            missing,
        )
    ]


def asked_words(min_words: int | None, max_words: int | None) -> str:
    """A word range in words: "1-50 words", "at least 201 words", "at most 50 words"."""
    if min_words is not None and max_words is not None:
        return f"{min_words}-{max_words} words"
    return f"at least {min_words} words" if min_words is not None else f"at most {max_words} words"


def length_against(summary: str, min_words: int | None, max_words: int | None) -> dict[str, int | None]:
    """The :data:`LENGTH_FIELDS` of one summary: its whitespace words, the range its controls ask for
    (``None``: open on that side) and 1 if the words fall inside it, else 0. Empty when no length is asked."""
    if min_words is None and max_words is None:
        return {}
    words = len(summary.split())
    inside = (min_words is None or words >= min_words) and (max_words is None or words <= max_words)
    return {
        "words": words,
        "asked_min_words": min_words,
        "asked_max_words": max_words,
        "length_in_bounds": int(inside),
    }


def quality_notices(
    summary: str, document: str, min_words: int | None = None, max_words: int | None = None
) -> list[str]:
    """What a reader should know about one summary's text: each quality score it fails, in words, and its
    length when it falls outside the word range its controls ask for (``min_words``/``max_words``)."""
    if not summary.strip():
        return []
    notices = []
    if not ends_sentence([summary])[0]:
        notices.append(UNFINISHED)
    if repeated_trigram([summary])[0]:
        notices.append("the summary repeats itself (three words in a row occur twice)")
    altered = altered_quotes(summary, document)
    if altered:
        notices.append(f"the summary quotes words the document does not write: “{altered[0][:80]}”")
    if doubled_word([summary])[0]:
        notices.append(f"the summary writes a word twice in a row ({DOUBLED.search(summary).group(0)!r})")
    missing = unsupported(summary, document)
    if missing:
        notices.append(
            f"the summary names {len(missing)} name(s) or number(s) the document does not contain: "
            + ", ".join(missing[:5])
            + (", ..." if len(missing) > 5 else "")
        )
    return notices + length_notices(summary, min_words, max_words)


def length_notices(summary: str, min_words: int | None, max_words: int | None) -> list[str]:
    """A notice when the summary's words fall outside the range its controls ask for; none when they
    fall inside it or no length is asked."""
    length = length_against(summary, min_words, max_words)
    if not length or length["length_in_bounds"]:
        return []
    return [f"the summary has {length['words']} words; its controls ask for {asked_words(min_words, max_words)}"]
