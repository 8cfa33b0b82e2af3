"""Does an entity-centric summary talk about its entity? Mention and sentence coverage (EntSUM).

EntSUM (Maddela et al.) asks for "a summary capturing important information about the entity"
(Sec. 3.1). Before content, that summary must name the entity, and most of its sentences should be
about it. Two scores per summary:

* ``mentioned``: 1 when some sentence names the entity, else 0;
* ``sentence_coverage``: the share of the summary's sentences (:func:`metrics.text.sentences`) that
  name it; corpus scores are means over summaries, in [0, 1].

How a name is found. EntSUM detects mentions with Flair NER and SpanBERT coreference (Sec. 4) and
groups entity strings "using substring matching ... (e.g. Barack Obama – Obama)" (Sec. 3.2). SteerSum
matches names instead, which needs no model and gives the same answer on every machine:

* :func:`aliases`: the full name and, for a person's multi-word name, its last word (the surname:
  "Barack Obama" – "Obama") when it is capitalized and not a stop word. Generational and company
  suffixes are skipped ("Martin Luther King Jr." – "King"), and a name with a stop word inside ("Bank
  of England") gets no short alias: its last word names something else. Organisations get no short
  alias either: "BBC One" is not "One", "Manchester United" not "United". With no NER label at scoring
  time, a name counts as a person's (:func:`person_like`) when every word is written like a name part
  (capital then lower case, an initial such as "H.", or a particle such as "van") and its last word is
  not one that ends organisation names (:data:`ORGANISATION_WORDS`). Callers may add aliases ("the
  Fed" for "Federal Reserve").
* a mention is an alias as whole words: "Obama's" and "Obama-era" mention Obama, "Obamacare" does
  not. Every alias matches in any case ("bbc one", "blair": a summarizer with an uncased vocabulary
  writes lower case), but a one-word alias that is also a common word (:func:`metrics.text.common_word`:
  "Short", "Brown") only as written, unless the document capitalises it wherever it uses it: then a
  lower-case "short" in the summary can only be the name. So "Ms Short resigned" is found, and "a short
  list" is not, when the document also speaks of short things.
* pronouns and descriptions ("he", "the senator") are not resolved, so coverage is a lower bound of
  what a coreference system would count.

:func:`sentences_mentioning` is the same test over a document's sentences: the entity variant's
signal sentences and its Lead3ent baseline ("the first three sentences in the document that
mention the given entity", Sec. 4.2.1) are built from it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from metrics.io import DataError, get_field
from metrics.text import STOPWORDS, common_word, sentences

# Tokens after a surname that are not the surname ("Jr.", "III", "Inc."), compared lower-cased without dots.
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "inc", "ltd", "plc", "llc", "corp", "co"})

# Honorifics before a name: "Mr Blair" is the "Tony Blair" of the same article (variants.entity groups them).
TITLES = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "miss",
        "mx",
        "dr",
        "prof",
        "professor",
        "sir",
        "dame",
        "lord",
        "lady",
        "rev",
        "reverend",
        "judge",
        "president",
        "senator",
        "sen",
        "rep",
        "gov",
        "governor",
        "mayor",
        "chancellor",
        "minister",
        "prince",
        "princess",
        "king",
        "queen",
        "pope",
        "st",
    }
)
# Lower-case parts of persons' names ("Ludwig van Beethoven").
NAME_PARTICLES = frozenset(
    {
        "van",
        "von",
        "de",
        "der",
        "den",
        "da",
        "di",
        "du",
        "la",
        "le",
        "bin",
        "ibn",
        "al",
        "el",
        "dos",
        "das",
        "del",
        "della",
        "ter",
        "y",
    }
)
# Last words of organisation names, never a surname alias ("Manchester United", "Sony Music", "BBC News").
ORGANISATION_WORDS = frozenset(
    [
        "united",
        "city",
        "rovers",
        "athletic",
        "wanderers",
        "albion",
        "county",
        "fc",
        "party",
        "council",
        "bank",
        "group",
        "union",
        "club",
        "association",
        "awards",
        "music",
        "news",
        "times",
        "post",
        "journal",
        "office",
        "department",
        "ministry",
        "commission",
        "committee",
        "agency",
        "court",
        "police",
        "airlines",
        "airways",
        "motors",
        "foundation",
        "university",
        "college",
        "school",
        "institute",
        "service",
        "services",
        "company",
        "league",
        "federation",
        "board",
        "authority",
        "network",
        "channel",
        "records",
        "studios",
        "pictures",
        "entertainment",
        "trust",
        "fund",
        "capital",
        "holdings",
        "partners",
        "systems",
        "technologies",
        "media",
        "broadcasting",
        "television",
        "tv",
        "radio",
        "press",
        "bureau",
        "senate",
        "congress",
        "parliament",
        "assembly",
        "army",
        "navy",
        "force",
        "forces",
        "corporation",
        "industries",
        "international",
        "enterprises",
        "securities",
        "insurance",
        "energy",
        "oil",
        "software",
        "games",
        "electronics",
        "communications",
        "telecom",
        "mobile",
        "online",
        "labs",
        "society",
        "organisation",
        "organization",
        "centre",
        "center",
        "exchange",
        "reserve",
        "treasury",
        "government",
        "administration",
        "team",
        "review",
        "magazine",
        "festival",
        "show",
        "cup",
        "championship",
        "one",
        "two",
        "three",
        "four",
        "five",
        "express",
        "mail",
        "telegraph",
        "guardian",
        "herald",
        "standard",
        "mirror",
        "sun",
    ]
)


def name_part(word: str) -> bool:
    """A word written like part of a person's name: an initial ("H."), or letters (apostrophes and
    hyphens aside) starting with a capital and not all capitals ("Tony", "O'Neill", "McDonald", "José")."""
    if re.fullmatch(r"[^\W\d_]\.", word):
        return word[0].isupper()
    letters = re.sub(r"['’-]", "", word.rstrip("."))
    return letters.isalpha() and word[0].isupper() and not letters.isupper()


def person_like(words: list[str]) -> bool:
    """Whether a multi-word name (suffixes removed) reads as a person's: every word a name part
    (:func:`name_part`) or a particle ("van"), the last word not one that ends organisation names.
    All-capital words ("BBC") and digits mark an organisation or a product."""
    return (
        all(w.lower() in NAME_PARTICLES or name_part(w) for w in words[:-1])
        and name_part(words[-1])
        and words[-1].lower() not in ORGANISATION_WORDS
    )


FIELDS = """
  prediction  str        the generated (entity-centric) summary
  entity      str        the entity it should be about, e.g. "Barack Obama" (its surname counts too)
  aliases     list[str]  optional: more names of the entity, e.g. ["the president"]
"""


def aliases(entity: str, extra: list[str] | None = None) -> list[str]:
    """Names that mention ``entity``: the full name (spaces normalized), its surname when it is a
    person's (see the module docstring), then ``extra``; duplicates (ignoring case) removed.

    >>> aliases("Barack Obama")
    ['Barack Obama', 'Obama']
    >>> aliases("BBC One")
    ['BBC One']
    >>> aliases("Bank of England", ["the Bank"])
    ['Bank of England', 'the Bank']
    """
    name = " ".join(entity.split())
    if not name:
        raise ValueError("the entity name is empty")
    names = [name]
    words = name.split(" ")
    while len(words) > 1 and words[-1].lower().replace(".", "") in NAME_SUFFIXES:
        words = words[:-1]
    if (
        len(words) > 1
        and not any(w.lower() in STOPWORDS for w in words[:-1])
        and person_like([w.rstrip(",") for w in words])
    ):
        surname = words[-1].rstrip(",")  # "King, Jr." -> "King"
        if surname[:1].isupper() and surname.lower() not in STOPWORDS:
            names.append(surname)
    names += [" ".join(alias.split()) for alias in extra or [] if alias.strip()]
    unique = {}
    for n in names:
        unique.setdefault(n.lower(), n)
    return list(unique.values())


@lru_cache(maxsize=4096)
def _pattern(entity: str, extra: tuple[str, ...], as_written: frozenset[str] = frozenset()) -> re.Pattern:
    """One regex for all aliases, longest first; ``(?<!\\w)``/``(?!\\w)`` make matches whole words
    (``\\b`` would fail next to an alias that starts or ends with punctuation, like "Jr."). Aliases match
    in any case (``(?i:...)`` scopes the flag) but those in ``as_written``."""
    names = sorted(aliases(entity, list(extra)), key=len, reverse=True)
    alternatives = "|".join(
        re.escape(n) if n in as_written else r"(?i:" + r"\s+".join(map(re.escape, n.split(" "))) + ")" for n in names
    )
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


def as_written(names: list[str], document: str | None) -> frozenset[str]:
    """The one-word aliases to match only as written: common words (:func:`metrics.text.common_word`)
    that the ``document`` also uses in lower case (without a document: every common word)."""

    def ambiguous(name: str) -> bool:
        lower = re.compile(rf"(?<!\w){re.escape(name.lower())}(?!\w)")
        return common_word(name) and (document is None or lower.search(document) is not None)

    return frozenset(n for n in names if " " not in n and ambiguous(n))


def mention_pattern(entity: str, extra: list[str] | None = None, document: str | None = None) -> re.Pattern:
    """The regex that finds ``entity``'s names in a text about ``document`` (see the module docstring)."""
    extra = tuple(extra or ())
    return _pattern(entity, extra, as_written(aliases(entity, list(extra)), document))


def mentions(text: str, entity: str, aliases: list[str] | None = None, document: str | None = None) -> bool:
    """Whether ``text`` names ``entity`` (full name, surname or an extra alias; whole words; in any case
    but a common word that ``document`` also uses in lower case)."""
    return mention_pattern(entity, aliases, document).search(text) is not None


def sentences_mentioning(text: str, entity: str, aliases: list[str] | None = None) -> list[str]:
    """The sentences of ``text`` (:func:`metrics.text.sentences`) that mention ``entity``, in order (the
    text is its own document: a common word it also uses in lower case counts only as written)."""
    pattern = mention_pattern(entity, aliases, text)
    return [sentence for sentence in sentences(text) if pattern.search(sentence)]


def entity_scores(summaries: list[str], entities: list[str], aliases: list[list[str] | None] | None = None) -> dict:
    """``mentioned`` and ``sentence_coverage`` of each summary for its entity, and corpus means.

    ``aliases[i]`` adds names for ``entities[i]`` (None: the default aliases only). Returns
    ``{"corpus": {"n", "mentioned", "sentence_coverage"}, "examples": [{"mentioned",
    "sentence_coverage", "sentences", "sentences_mentioning"}]}``; means are ``None`` for no summary.
    """
    extra = [None] * len(summaries) if aliases is None else list(aliases)
    if not len(summaries) == len(entities) == len(extra):
        raise DataError(
            f"summaries, entities and aliases differ in length: {len(summaries)}, {len(entities)}, {len(extra)}"
        )
    examples = []
    for i, (summary, entity, names) in enumerate(zip(summaries, entities, extra)):
        if not isinstance(summary, str) or not summary.strip():
            raise DataError(f"summaries[{i}]: the summary is empty")
        if not isinstance(entity, str) or not entity.strip():
            raise DataError(f"entities[{i}]: the entity is missing or empty")
        summary_sentences = sentences(summary)
        pattern = mention_pattern(entity, names)
        mentioning = sum(1 for sentence in summary_sentences if pattern.search(sentence))
        examples.append(
            {
                "mentioned": int(mentioning > 0),
                "sentence_coverage": mentioning / len(summary_sentences),
                "sentences": len(summary_sentences),
                "sentences_mentioning": mentioning,
            }
        )
    corpus = {"n": len(examples)}
    for key in ("mentioned", "sentence_coverage"):
        corpus[key] = sum(e[key] for e in examples) / len(examples) if examples else None
    return {"corpus": corpus, "examples": examples}


def score_records(records: list[dict], source: str = "<records>") -> dict:
    """``python -m metrics entity FILE.jsonl``: the fields of :data:`FIELDS`, checked line by line."""
    summaries, entities, extra = [], [], []
    for i, record in enumerate(records):
        where = f"{source}:{i + 1}"
        summaries.append(get_field(record, "prediction", str, where))
        entities.append(get_field(record, "entity", str, where))
        extra.append(get_field(record, "aliases", list, where, required=False, non_empty=False, items=str))
    result = entity_scores(summaries, entities, extra)
    return {
        "metric": "entity",
        **result,
        "notes": "mentioned (0/1) and sentence_coverage (share of summary sentences naming the entity) "
        "in [0, 1]; names match as whole words in any case: the full name, a person's surname, given "
        "aliases; a one-word alias that is a common word only as written.",
    }
