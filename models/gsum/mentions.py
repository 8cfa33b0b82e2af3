"""Where a document names an entity: its aliases (the full name and, for a person, the surname) and the
sentences that mention one of them, as whole words.

The rules are SteerSum's ``metrics.entity``: its word lists and name tests are copied here by
``scripts/fix_copies.py`` (``# Copied from`` markers), and :func:`aliases` and :func:`mention_pattern`
are its functions cut down to what a repo needs (tests/test_hub_repos.py checks that both give the same
aliases).
"""

import re

from .sentences import split_sentences
from .stopwords import STOPWORDS

# Tokens after a surname that are not the surname ("Jr.", "III", "Inc."), lower-cased without dots.
# Copied from metrics.entity.NAME_SUFFIXES
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "inc", "ltd", "plc", "llc", "corp", "co"})
# Lower-case parts of persons' names ("Ludwig van Beethoven").
# Copied from metrics.entity.NAME_PARTICLES
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
# Copied from metrics.entity.ORGANISATION_WORDS
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


# Copied from metrics.entity.name_part
def name_part(word: str) -> bool:
    """A word written like part of a person's name: an initial ("H."), or letters (apostrophes and
    hyphens aside) starting with a capital and not all capitals ("Tony", "O'Neill", "McDonald", "José")."""
    if re.fullmatch(r"[^\W\d_]\.", word):
        return word[0].isupper()
    letters = re.sub(r"['’-]", "", word.rstrip("."))
    return letters.isalpha() and word[0].isupper() and not letters.isupper()


# Copied from metrics.entity.person_like
def person_like(words: list[str]) -> bool:
    """Whether a multi-word name (suffixes removed) reads as a person's: every word a name part
    (:func:`name_part`) or a particle ("van"), the last word not one that ends organisation names.
    All-capital words ("BBC") and digits mark an organisation or a product."""
    return (
        all(w.lower() in NAME_PARTICLES or name_part(w) for w in words[:-1])
        and name_part(words[-1])
        and words[-1].lower() not in ORGANISATION_WORDS
    )


def entity_name(entity) -> str:
    """The entity's name, spaces normalized; a ValueError when it is empty."""
    name = " ".join(str(entity or "").split())
    if not name:
        raise ValueError(
            "control 'entity' is empty: name a person or organization of the document, "
            'e.g. {"entity": "Angela Merkel"}'
        )
    return name


# SteerSum's metrics.entity.aliases without its extra aliases, and with the processor's message for an
# empty name (entity_name): not a copy.
def aliases(entity: str) -> list[str]:
    """Names that mention ``entity``: the full name and, for a person's multi-word name (:func:`person_like`)
    with no stop word before its last word, its surname when capitalized (``Barack Obama`` → ``Obama``,
    ``BBC One`` → none; suffixes such as ``Jr.`` skipped).
    SteerSum's ``metrics.entity.aliases`` without extra aliases."""
    name = entity_name(entity)
    names = [name]
    words = name.split(" ")
    while len(words) > 1 and words[-1].lower().replace(".", "") in NAME_SUFFIXES:
        words = words[:-1]
    if (
        len(words) > 1
        and not any(w.lower() in STOPWORDS for w in words[:-1])
        and person_like([w.rstrip(",") for w in words])
    ):
        surname = words[-1].rstrip(",")
        if surname[:1].isupper() and surname.lower() not in STOPWORDS:
            names.append(surname)
    unique = {}
    for n in names:
        unique.setdefault(n.lower(), n)
    return list(unique.values())


# Not a copy of metrics.entity.mention_pattern: that one matches a one-word alias in any case unless it is
# a common word (which needs NLTK's word lists); here a one-word alias matches only as written.
def mention_pattern(entity: str) -> re.Pattern:
    """One regex for all aliases, longest first, as whole words: names of several words in any case,
    one-word aliases only as written ("BBC One" is not "one of the best")."""
    names = sorted(aliases(entity), key=len, reverse=True)
    alternatives = "|".join(
        r"(?i:" + r"\s+".join(map(re.escape, n.split(" "))) + ")" if " " in n else re.escape(n) for n in names
    )
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


def sentences_naming(document: str, entity: str) -> list[str]:
    """The document's sentences (:func:`split_sentences`) that mention the entity, in order."""
    pattern = mention_pattern(entity)
    return [sentence for sentence in split_sentences(document) if pattern.search(sentence)]
