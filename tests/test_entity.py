"""Entity mention metrics (metrics.entity): aliases, whole-word mentions, sentence coverage by hand,
sentences for Lead3ent, and bad input."""

import pytest

from metrics.entity import aliases, entity_scores, mentions, score_records, sentences_mentioning
from metrics.io import DataError


def test_aliases():
    assert aliases("Barack Obama") == ["Barack Obama", "Obama"]  # EntSUM Sec. 3.2: "Barack Obama – Obama"
    assert aliases("  Barack\n Obama ") == ["Barack Obama", "Obama"]
    assert aliases("Martin Luther King Jr.") == ["Martin Luther King Jr.", "King"]  # suffix skipped
    assert aliases("Ludwig van Beethoven") == ["Ludwig van Beethoven", "Beethoven"]
    assert aliases("Bank of England") == ["Bank of England"]  # "England" alone is another entity
    assert aliases("barack obama") == ["barack obama"]  # not capitalized: no surname
    assert aliases("The Who") == ["The Who"]  # "who" is a stop word
    assert aliases("Apple Inc.") == ["Apple Inc."] and aliases("Madonna") == ["Madonna"]
    assert aliases("Barack Obama", ["obama", "the President"]) == ["Barack Obama", "Obama", "the President"]
    with pytest.raises(ValueError, match="empty"):
        aliases("  ")


def test_mentions_are_whole_words_in_any_case():
    assert mentions("Obama spoke.", "Barack Obama")  # the surname counts
    assert mentions("BARACK\nOBAMA spoke.", "Barack Obama")
    assert mentions("Obama's plan and the Obama-era rules.", "Barack Obama")
    assert not mentions("Obamacare passed.", "Barack Obama")  # whole words only
    assert not mentions("Bank of Englandia.", "Bank of England") and not mentions("Barack spoke.", "Barack Obama")
    assert mentions("King Jr. spoke.", "Martin Luther King Jr.", aliases=["King Jr."])
    assert not mentions("The president spoke.", "Barack Obama")
    assert mentions("The president spoke.", "Barack Obama", aliases=["the president"])


def test_sentence_coverage_by_hand():
    summaries = [
        "Obama met the Bank of England. Markets rose. Barack Obama then flew home. He was tired.",
        "Markets rose on Obamacare news.",
        "The president left. Obama returned.",
    ]
    result = entity_scores(summaries, ["Barack Obama"] * 3, [None, None, ["the president"]])
    # 1: sentences 1 and 3 of 4 mention him ("He" is not resolved): 2/4 = 0.5
    # 2: one sentence, "Obamacare" is no mention: 0/1;  3: both sentences (an alias, the surname): 2/2
    assert [(e["mentioned"], e["sentence_coverage"]) for e in result["examples"]] == [(1, 0.5), (0, 0.0), (1, 1.0)]
    assert [(e["sentences"], e["sentences_mentioning"]) for e in result["examples"]] == [(4, 2), (1, 0), (2, 2)]
    # corpus: mentioned (1 + 0 + 1) / 3, coverage (0.5 + 0 + 1) / 3 = 0.5
    assert result["corpus"] == {"n": 3, "mentioned": pytest.approx(2 / 3), "sentence_coverage": pytest.approx(0.5)}
    assert entity_scores([], [])["corpus"] == {"n": 0, "mentioned": None, "sentence_coverage": None}


def test_sentences_mentioning_keeps_document_order():
    document = (
        "Markets rose on Monday. Angela Merkel spoke in Berlin. Investors waited.\n"
        "Merkel said growth would return. Critics disagreed. Chancellor Merkel left."
    )
    assert sentences_mentioning(document, "Angela Merkel") == [
        "Angela Merkel spoke in Berlin.",
        "Merkel said growth would return.",
        "Chancellor Merkel left.",
    ]
    assert sentences_mentioning(document, "Berlin Wall") == []


def test_bad_input_is_named():
    with pytest.raises(DataError, match=r"summaries\[0\]: the summary is empty"):
        entity_scores([" "], ["Barack Obama"])
    with pytest.raises(DataError, match=r"entities\[1\]: the entity is missing or empty"):
        entity_scores(["Obama spoke.", "Obama spoke."], ["Barack Obama", ""])
    with pytest.raises(DataError, match="differ in length"):
        entity_scores(["Obama spoke."], ["Barack Obama"], aliases=[])
    good = {"prediction": "Obama spoke.", "entity": "Barack Obama"}
    cases = [
        ({"prediction": "Obama spoke."}, "out.jsonl:2: missing field 'entity'"),
        ({"prediction": "Obama spoke.", "entity": ""}, "out.jsonl:2: field 'entity' is empty"),
        ({"entity": "Barack Obama"}, "out.jsonl:2: missing field 'prediction'"),
        ({"prediction": "", "entity": "Barack Obama"}, "out.jsonl:2: field 'prediction' is empty"),
        ({**good, "aliases": "Obama"}, "out.jsonl:2: field 'aliases' must be a list"),
        ({**good, "aliases": [1]}, r"out.jsonl:2: field 'aliases'\[0\] must be a string"),
    ]
    for bad, message in cases:
        with pytest.raises(DataError, match=message):
            score_records([good, bad], source="out.jsonl")
    result = score_records([good, {**good, "prediction": "He spoke.", "aliases": []}])
    assert result["metric"] == "entity" and result["corpus"]["mentioned"] == 0.5


def test_organisations_get_no_short_alias_and_one_word_aliases_match_as_written():
    assert aliases("BBC One") == ["BBC One"] and aliases("Manchester United") == ["Manchester United"]
    assert aliases("World Bank") == ["World Bank"] and aliases("Sony Music") == ["Sony Music"]
    assert not mentions("It was one of the best years.", "BBC One")  # before: "one" matched, any case
    assert mentions("Viewers of bbc one rose.", "BBC One")  # a full name of several words: any case
    assert mentions("Blair said so.", "Tony Blair") and mentions("blair said so.", "Tony Blair")  # not a common word
    assert not mentions("It made a short list.", "Clare Short") and mentions("Ms Short resigned.", "Clare Short")
    assert aliases("Robert H. Schuller") == ["Robert H. Schuller", "Schuller"]  # an initial is a name part
    assert aliases("José Mourinho") == ["José Mourinho", "Mourinho"]
    assert mentions("Shares of renault fell.", "Renault") and mentions("Renault fell.", "Renault")


def test_names_match_in_any_case_but_common_words_the_document_also_uses_in_lower_case():
    """An uncased summarizer writes "merkel" and "ms short": both count when the document can only
    mean the name; a common word the document also uses plainly ("a short list") counts only as written."""
    only_the_name = "Clare Short resigned on Monday. Ms Short had criticised the war."
    also_a_word = "Clare Short resigned after a short meeting. Ms Short had criticised the war."
    for summary in ("Ms Short resigned.", "ms short resigned.", "MS SHORT RESIGNED."):
        assert mentions(summary, "Clare Short", document=only_the_name)
    assert mentions("Ms Short resigned.", "Clare Short", document=also_a_word)  # as written: still the name
    assert not mentions("ms short resigned.", "Clare Short", document=also_a_word)
    assert not mentions("ms short resigned.", "Clare Short")  # no document: a common word only as written
    for summary in ("Angela Merkel spoke.", "angela merkel spoke.", "merkel spoke.", "MERKEL spoke."):
        assert mentions(summary, "Angela Merkel", document="Angela Merkel spoke in Berlin.")
    assert not mentions("the merkelian era.", "Angela Merkel")  # whole words still
    coverage = entity_scores(["brown said so. it rained.", "Brown said so. It rained."], ["Gordon Brown"] * 2)
    assert [e["sentences_mentioning"] for e in coverage["examples"]] == [0, 1]  # no document: "brown" as written


def test_common_words_are_those_wordnet_writes_in_lower_case():
    from metrics.text import common_word

    assert common_word("short") and common_word("Brown") and common_word("jobs")  # lemma "job"
    assert not common_word("Blair") and not common_word("merkel") and not common_word("renault")


def test_person_like_names():
    from metrics.entity import person_like

    assert person_like(["Tony", "Blair"]) and person_like(["Mr", "Blair"]) and person_like(["Conor", "O'Neill"])
    assert (
        not person_like(["BBC", "One"]) and not person_like(["LCD", "TV"]) and not person_like(["Champions", "League"])
    )
