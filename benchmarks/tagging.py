"""Topic tagging (the ``tag`` method's input) for 100 BBC articles: SteerSum's way versus naive ones.

SteerSum's way (:func:`variants.topic.tag_document`) goes through the topic's cached
:class:`variants.topic.Tagger`: the document cut at spaces (``str.split``), each chunk met before looked
up in a dict of the chunks that hold a tagged word (with their tagged text), chunks not met before
tagged by the lemma rule (:func:`variants.topic.tag_words`, WORD tokens and :func:`metrics.terms.term`)
and remembered. Cold: the tagger and the lemma cache start empty; warm: steady state over a corpus.
The word-by-word rule with a cached lemma per word (SteerSum's earlier rule) is a row too.
Tried first and dropped: one compiled trie expression per topic over the tagged surface forms (plus
a pass for unseen words); Python's ``re`` spends ~0.1 µs per character on it, no faster than the
word-by-word rule.

Two naive ways, timed in the same run on the same articles:

* the usual first implementation: ``nltk.word_tokenize``, WordNet's lemmatizer on every token,
  lookup in the list of terms, tokens joined back. It tokenizes differently ("bank's" -> "bank",
  "'s"), so its output is compared by the words it tags, not by the string;
* the same rule as SteerSum with no cache: identical output (asserted), WordNet on every
  occurrence, list lookup.

The paper reports 7.1 s per 100 articles for its tagging (Passali et al., Sec. 4.2).
"""

from __future__ import annotations

from collections import Counter
from unittest import mock

import nltk

import metrics.terms
from benchmarks import best_time
from metrics.terms import term
from metrics.text import WORD, lemma
from variants.sources import load_source
from variants.topic import TAG, default_assets, tag_document, tag_words, tagger

N_ARTICLES = 100
REPEATS = 3


def nltk_tag(document: str, terms: list[str]) -> str:
    lemmatizer = nltk.stem.WordNetLemmatizer()
    return " ".join(
        f"{TAG} {token} {TAG}" if lemmatizer.lemmatize(token.lower()) in terms else token
        for token in nltk.word_tokenize(document)
    )


def uncached_tag(document: str, terms: list[str]) -> str:
    with mock.patch.object(metrics.terms, "lemma", lemma.__wrapped__):  # WordNet on every occurrence
        return WORD.sub(
            lambda m: f"{TAG} {m.group(0)} {TAG}" if term.__wrapped__(m.group(0).lower()) in terms else m.group(0),
            document,
        )


def tagged_words(text: str) -> Counter:
    parts = text.split(TAG)
    return Counter(parts[i].strip().lower() for i in range(1, len(parts), 2))


def tag_all(function, articles, terms) -> list[str]:
    return [function(a, terms) for a in articles]


def run() -> str:
    articles = [r["source"] for r in load_source("bbc_summary", "train")[:N_ARTICLES]]
    assets = default_assets()
    topic = assets.space.topics[0]
    term_set = assets.terms(topic)
    term_list = sorted(term_set)
    lemma.__wrapped__("warm")  # load WordNet and Punkt before any timing
    nltk.word_tokenize("Warm up.")

    term.cache_clear()
    tagger.cache_clear()
    cold_s, fast = best_time(tag_all, tag_document, articles, term_set, repeats=1)
    warm_s, _ = best_time(tag_all, tag_document, articles, term_set, repeats=REPEATS)
    words_s, by_words = best_time(tag_all, tag_words, articles, term_set, repeats=REPEATS)
    uncached_s, uncached = best_time(tag_all, uncached_tag, articles, term_list, repeats=REPEATS)
    nltk_s, naive = best_time(tag_all, nltk_tag, articles, term_list, repeats=REPEATS)
    assert fast == uncached == by_words, "SteerSum's tagging must equal the uncached rule's"
    ours, theirs = sum((tagged_words(t) for t in fast), Counter()), sum((tagged_words(t) for t in naive), Counter())
    agreement = sum((ours & theirs).values()) / max(sum((ours | theirs).values()), 1)

    rows = [
        ("naive: `nltk.word_tokenize` + WordNet per token + list lookup", nltk_s),
        ("naive: SteerSum's rule, WordNet per token, list lookup (same output)", uncached_s),
        ("word by word, lemma cached per word (`tag_words`, SteerSum's earlier rule)", words_s),
        ("SteerSum, cold (tagger built, lemma cache empty: first 100 articles)", cold_s),
        ("SteerSum, warm (steady state over a corpus)", warm_s),
    ]
    lines = [
        f"## Topic tagging ({N_ARTICLES} BBC articles, topic {topic!r}, top-{assets.top_n} terms)",
        "",
        "| way | time (s) | ms/article | vs nltk naive | vs same-output naive |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {way} | {s:.3f} | {1000 * s / N_ARTICLES:.2f} | {nltk_s / s:.1f}× | {uncached_s / s:.1f}× |"
        for way, s in rows
    ]
    lines += [
        "",
        f"{sum(ours.values())} words tagged by SteerSum; agreement with the nltk naive way's tagged "
        f"words (multiset Jaccard): {agreement:.3f}. The paper: 7.1 s per 100 articles.",
    ]
    return "\n".join(lines)
