"""Shared text processing: sentence splitting, word tokens, lemmas, stems and stop words.

All NLTK data comes from the offline build in ``scripts/setup.sh`` (nothing is downloaded at run
time). When it is missing, :func:`check_nltk_data` raises an error that names the setup command.
"""
from __future__ import annotations

import re
from functools import lru_cache

import nltk
from nltk.stem import PorterStemmer
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

SETUP_HINT = "run `bash scripts/setup.sh` (it builds the offline NLTK data into .venv/share/nltk_data)"
NLTK_RESOURCES = ("corpora/wordnet", "tokenizers/punkt_tab/english", "corpora/stopwords", "corpora/cmudict")

# scikit-learn's list (318 words): the same one the TF-IDF models in SteerSum use.
STOPWORDS = frozenset(ENGLISH_STOP_WORDS)

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
