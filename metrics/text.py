"""Shared text processing: sentence splitting, word tokens, lemmas, stems and stop words.

All NLTK data comes from the offline build in ``scripts/setup.sh`` (nothing is downloaded at run
time). When it is missing, :func:`check_nltk_data` raises an error that names the setup command.
"""

from __future__ import annotations

import re
from functools import lru_cache

import nltk
from nltk.stem import PorterStemmer

SETUP_HINT = "run `bash scripts/setup.sh` (it builds the offline NLTK data into .venv/share/nltk_data)"
NLTK_RESOURCES = ("corpora/wordnet", "tokenizers/punkt_tab/english", "corpora/stopwords", "corpora/cmudict")

# NLTK's English stop words (the classic 179-word list), used wherever SteerSum analyses text (topic
# space, TF-IDF models, keywords, entity names). Not scikit-learn's 318-word list: that one also drops
# content words ("interest", "bill", "show", "fire", "system", "detail"), so "interest rates" would
# lose its topic word. Written here rather than read from NLTK's data so the terms never depend on
# which data was installed; scripts/build_nltk_data.py writes this list as NLTK's ``stopwords/english``.
STOPWORDS = frozenset(
    [
        "i",
        "me",
        "my",
        "myself",
        "we",
        "our",
        "ours",
        "ourselves",
        "you",
        "you're",
        "you've",
        "you'll",
        "you'd",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "she's",
        "her",
        "hers",
        "herself",
        "it",
        "it's",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "that'll",
        "these",
        "those",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "a",
        "an",
        "the",
        "and",
        "but",
        "if",
        "or",
        "because",
        "as",
        "until",
        "while",
        "of",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "in",
        "out",
        "on",
        "off",
        "over",
        "under",
        "again",
        "further",
        "then",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "s",
        "t",
        "can",
        "will",
        "just",
        "don",
        "don't",
        "should",
        "should've",
        "now",
        "d",
        "ll",
        "m",
        "o",
        "re",
        "ve",
        "y",
        "ain",
        "aren",
        "aren't",
        "couldn",
        "couldn't",
        "didn",
        "didn't",
        "doesn",
        "doesn't",
        "hadn",
        "hadn't",
        "hasn",
        "hasn't",
        "haven",
        "haven't",
        "isn",
        "isn't",
        "ma",
        "mightn",
        "mightn't",
        "mustn",
        "mustn't",
        "needn",
        "needn't",
        "shan",
        "shan't",
        "shouldn",
        "shouldn't",
        "wasn",
        "wasn't",
        "weren",
        "weren't",
        "won",
        "won't",
        "wouldn",
        "wouldn't",
    ]
)

# A word: letters/digits with an optional inner apostrophe ("don't"). Case-insensitive so callers can
# find words in the original text (e.g. to tag them) with the same boundaries as words().
WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?", re.IGNORECASE)


class MissingNLTKData(LookupError):
    """NLTK data SteerSum needs is not installed."""


def check_nltk_data() -> None:
    missing = []
    for resource in NLTK_RESOURCES:
        try:
            nltk.data.find(resource)
        except LookupError:
            missing.append(resource)
    if missing:
        raise MissingNLTKData(f"NLTK data not found: {', '.join(missing)}; {SETUP_HINT}")


@lru_cache(maxsize=1)
def _lemmatizer():
    check_nltk_data()
    from nltk.stem import WordNetLemmatizer

    lemmatizer = WordNetLemmatizer()
    lemmatizer.lemmatize("warmup")  # loads WordNet once, here, not inside a timed loop
    return lemmatizer


@lru_cache(maxsize=200_000)
def lemma(word: str) -> str:
    """WordNet lemma of a lower-cased word (noun reading, then verb: 'studies' -> 'study',
    'running' -> 'run'). Cached: corpora repeat words, WordNet lookups are the slow part."""
    lemmatizer = _lemmatizer()
    noun = lemmatizer.lemmatize(word)
    return noun if noun != word else lemmatizer.lemmatize(word, "v")


_stemmer = PorterStemmer()


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter stem, as rouge-score's ``use_stemmer=True`` uses."""
    return _stemmer.stem(word)


@lru_cache(maxsize=50_000)
def common_word(word: str) -> bool:
    """Whether WordNet knows ``word`` (or its lemma) written in lower case, as an ordinary word: "short",
    "brown", "jobs" are; "blair", "renault", "merkel" are not (WordNet has "Blair" only capitalised)."""
    from nltk.corpus import wordnet

    _lemmatizer()  # checks the NLTK data and loads WordNet once
    word = word.lower()
    forms = {word, lemma(word)}
    return any(name in forms for form in forms for synset in wordnet.synsets(form) for name in synset.lemma_names())


def decoy_words(document: str, avoid: str, n: int, rng) -> list[str]:
    """``n`` content words of ``document`` (letters only, at least 4, not stop words) that ``avoid`` (a
    reference summary, the right controls) does not contain, drawn by ``rng`` (a ``random.Random``), in
    document order: the controls of a shuffled pass that asks for words the document has but the summary
    should not favour (asking for words the document lacks tests nothing: no summarizer writes them)."""
    avoided = set(words(avoid))
    candidates = [
        w
        for w in dict.fromkeys(words(document))
        if w.isalpha() and len(w) >= 4 and w not in STOPWORDS and w not in avoided
    ]
    chosen = set(rng.sample(candidates, min(n, len(candidates))))
    return [w for w in candidates if w in chosen]


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters/digits, with an inner apostrophe); punctuation dropped."""
    return WORD.findall(text.lower())


def lemmas(text: str) -> list[str]:
    return [lemma(w) for w in words(text)]


def sentences(text: str) -> list[str]:
    """Sentences by NLTK's Punkt model, line breaks treated as paragraph ends."""
    try:
        out = []
        for paragraph in text.split("\n"):
            if paragraph.strip():
                out.extend(s.strip() for s in nltk.sent_tokenize(paragraph) if s.strip())
        return out
    except LookupError as err:
        raise MissingNLTKData(f"NLTK Punkt data not found; {SETUP_HINT}") from err
