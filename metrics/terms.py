"""The terms of a text: the words a topic space (STAS) and EGISES count.

A term is the WordNet lemma (:func:`metrics.text.lemma`, the lemma the topic variant's ``tag`` method
matches, Passali et al. Sec. 4.2) of a word that is not a stop word and is two characters or longer
(as scikit-learn's default token pattern), with possessives and clitics cut: "england's" is
"england", "it's" is the stop word "it", "don't" is dropped. STAS's topic spaces, EGISES's word
distributions and the topic and persona variants read text through these same two functions, so a
word means the same thing to each of them.
"""

from __future__ import annotations

from functools import lru_cache

from metrics.text import STOPWORDS, lemma, words

# Clitics after an apostrophe: "england's" counts as "england" and "we've" as "we" (a stop word).
# Negations ("don't", "won't") are function words and are dropped: "won't" must not count as "win".
CLITICS = frozenset({"s", "re", "ve", "ll", "d", "m"})


@lru_cache(maxsize=200_000)
def term(word: str) -> str | None:
    """The topic-space term of one word token of :func:`metrics.text.words`, or None when it is
    not a term: its WordNet lemma, with stop words dropped before lemmatizing ("was" would become
    "wa") and after ("downs" is "down"), and one-character tokens dropped as scikit-learn's default does."""
    head, apostrophe, tail = word.replace("’", "'").partition("'")
    if apostrophe and tail == "t":
        return None
    if apostrophe and tail in CLITICS:
        word = head
    if len(word) < 2 or word in STOPWORDS:
        return None
    lemmatized = lemma(word)
    return None if lemmatized in STOPWORDS else lemmatized


def analyze(text: str) -> list[str]:
    """The terms of a text, in order (the tf-idf analyzer; module level so a space pickles)."""
    return [t for t in map(term, words(text)) if t is not None]
