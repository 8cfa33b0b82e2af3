"""Scores that catch bad text: sentence ends, loops, names and numbers the document lacks."""

import pytest

from metrics.quality import (
    QUALITY_FIELDS,
    doubled_word,
    ends_sentence,
    quality,
    quality_notices,
    repeated_trigram,
    unsupported,
)

DOCUMENT = (
    "Renault's profit rose to 1.4bn euros (£960m) in 2004, said chairman Louis Schweitzer. "
    "The carmaker's shares closed 5.25% higher in Paris."
)


def test_ends_sentence_counts_final_punctuation_and_closing_quotes():
    assert ends_sentence(
        [
            "It rose.",
            'He said "fine."',
            "It rose (again",
            "Did it?",
            "it rose and",
            "It rose. and then",
            "  It rose!  ",
            "",
        ]
    ) == [1, 1, 0, 1, 0, 0, 1, 0]


def test_repeated_trigram_finds_loops_in_any_case():
    assert repeated_trigram(
        [
            "37 out out out out of work",
            "Davies impressed. davies impressed during a loan.",
            "Davies impressed during a loan.",
            "out out",
        ]
    ) == [1, 0, 0, 0]
    assert repeated_trigram(["Davies impressed during. Then davies IMPRESSED DURING a loan."]) == [1]


def test_doubled_word_finds_a_word_twice_in_a_row_in_any_case():
    # topic's own faults ("With with", "get in in", "bible bible"); a comma, another word or a word's part between
    # the two is no double ("had, had", "that that's", "Le-May may")
    assert doubled_word(
        [
            "With with the rise.",
            "I want to get in in the race.",
            "chart bible bible British",
            "It had, had it not.",
            "He said that that's fine.",
            "Le-May may go.",
            "the theme park",
            "rose 10 10 times",
        ]
    ) == [1, 1, 1, 0, 0, 0, 0, 1]


def test_unsupported_facts_are_names_and_numbers_the_document_lacks():
    # 55% is not the document's 5.25%; "Underwood" is a capitalised word mid-sentence it never writes
    assert unsupported("Renault's profit rose 55% said Mr Underwood.", DOCUMENT) == ["55", "underwood"]
    # supported: names in any case, possessives, numbers as the tokenizer spaces them, sentence-initial words
    assert unsupported("Shares of Renault rose to 1. 4bn euros in 2004, said schweitzer's carmaker.", DOCUMENT) == []
    # a hyphenated word counts as its parts: a name's parts need the document, other parts a dictionary
    assert unsupported(
        "Betts-Green met Smith-Jones about a well-known renault-led plan.", "Mr Betts-Green spoke."
    ) == ["smith-jones", "renault-led"]
    # a word no dictionary knows is a (garbled) name even in lower case
    assert unsupported("the profit of qari u harmlessdullah rose.", DOCUMENT) == ["qari", "harmlessdullah"]


def test_a_contraction_is_no_name_and_a_spaced_number_is_whole_only_where_the_document_writes_it():
    # "I'm", "don't", "it's", "we've" are no names (the judge's dictionary knows none of them); "Smith's" still is
    assert unsupported("I'm sure we've won, I don't know why it's so, said Smith's aide.", DOCUMENT) == ["smith"]
    # "By 2025, 40%" is two numbers, neither the document's; "1. 4bn" is its 1.4bn, "1. 5bn" is "1" and "5"
    assert unsupported("By 2025, 40% rose to 1. 4bn.", DOCUMENT) == ["2025", "40"]
    assert unsupported("It rose to 1. 5bn.", DOCUMENT) == ["1", "5"]
    assert unsupported("By 2004, 1.4bn euros.", DOCUMENT) == []


def test_quality_gives_every_field_per_summary():
    summaries = ["Renault's profit rose to 1.4bn euros.", "profit rose rose rose rose and 77"]
    none = dict.fromkeys(QUALITY_FIELDS, 0)
    assert quality(summaries, [DOCUMENT] * 2) == [
        {**none, "ends_sentence": 1},
        {**none, "repeated_trigram": 1, "doubled_word": 1, "unsupported_facts": 1, "has_unsupported": 1},
    ]
    assert set(quality(summaries[:1], [DOCUMENT])[0]) == set(QUALITY_FIELDS)
    with pytest.raises(ValueError, match="2 summaries but 1 documents"):
        quality(summaries, [DOCUMENT])


def test_a_notice_for_each_failed_score_and_none_for_good_text():
    assert quality_notices("Renault's profit rose to 1.4bn euros.", DOCUMENT) == []
    notices = quality_notices("Profit rose rose rose rose said Mr Underwood", DOCUMENT)
    assert len(notices) == 4 and "underwood" in notices[3] and "complete sentence" in notices[0]
    assert notices[2] == "the summary writes a word twice in a row ('rose rose')"


def test_length_against_the_asked_word_range():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from metrics.quality import LENGTH_FIELDS, asked_words, length_against, length_notices

    # 60 whitespace words, no two alike (no repeated 3-gram) and none a name: stop words, as one sentence
    sixty = " ".join(sorted(ENGLISH_STOP_WORDS)[:60]).capitalize() + "."
    assert length_against(sixty, 1, 50) == {
        "words": 60,
        "asked_min_words": 1,
        "asked_max_words": 50,
        "length_in_bounds": 0,
    }
    assert set(length_against(sixty, 1, 50)) == set(LENGTH_FIELDS)
    assert length_against(sixty, 51, 100)["length_in_bounds"] == 1
    assert length_against(sixty, 60, 60)["length_in_bounds"] == 1  # both bounds inclusive
    assert length_against(sixty, 201, None)["length_in_bounds"] == 0  # the open last bin: a floor only
    assert length_against(sixty, None, None) == {}  # no length asked: no length fields
    assert asked_words(1, 50) == "1-50 words" and asked_words(201, None) == "at least 201 words"
    assert asked_words(None, 50) == "at most 50 words"
    assert length_notices(sixty, 1, 50) == ["the summary has 60 words; its controls ask for 1-50 words"]
    assert length_notices(sixty, 51, 100) == length_notices(sixty, None, None) == []
    # quality_notices adds the length notice to the others, and only when a length is asked
    assert quality_notices(sixty, DOCUMENT, 201, None) == [
        "the summary has 60 words; its controls ask for at least 201 words"
    ]
    assert quality_notices(sixty, DOCUMENT) == []
