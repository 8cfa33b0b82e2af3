"""Control words count only where the document supports the summary (metrics/support.py), and each
control metric built on it scores Lead-k with the control's words pasted in below a summary that
obeys: hand-computed cases."""

import pytest

from metrics.ccs import fkgl
from metrics.support import resegment, support_share, supported_spans
from variants import REGISTRY
from variants.ccs import EXAMPLE_DOCUMENT
from variants.ccs.evaluation import PASTED_CUES, periods_every
from variants.persona import history_overlap

SPORT = (
    "The striker scored twice in the cup final on Saturday. The cup final was played in London in front "
    "of a full stadium. Shares in the club rose on Monday."
)


def test_a_word_is_supported_inside_a_run_of_four_words_the_document_has():
    document = "Yesterday the cat sat on the mat."
    # "the cat sat on the mat": every word in some 4-word run of the document; "Cat, mat." has two words
    assert supported_spans("The cat sat on the mat. Cat, mat.", document) == ["The cat sat on the mat"]
    assert support_share("The cat sat on the mat. Cat, mat.", document) == pytest.approx(6 / 8)
    # a run must stay inside one summary sentence; three words are never enough
    assert supported_spans("The cat sat. On the mat.", document) == []
    assert support_share("", document) == 0.0


def test_resegment_removes_only_the_sentence_ends_the_document_goes_on_across():
    document = "The cat sat on the mat. It slept."
    assert resegment("The cat sat. On the mat. It slept.", document) == ["The cat sat. On the mat.", "It slept."]
    assert resegment("The cat sat on the mat. It slept.", document) == ["The cat sat on the mat.", "It slept."]


def test_fkgl_against_the_document_is_not_lowered_by_extra_periods():
    sentence = EXAMPLE_DOCUMENT.split(". ")[0] + "."
    pasted = periods_every(sentence, 4)
    assert pasted.count(".") == 5  # 18 words: five sentences of four words or fewer
    # without the document every period ends a sentence: 0.39 x (18 - 18 / 5) words per sentence = 5.6 grades
    assert fkgl([sentence])[0] - fkgl([pasted])[0] == pytest.approx(0.39 * (18 - 18 / 5), abs=0.01)
    assert fkgl([pasted], [EXAMPLE_DOCUMENT])[0] == pytest.approx(fkgl([sentence], [EXAMPLE_DOCUMENT])[0])


def test_stas_of_the_topic_terms_alone_is_0_and_of_a_supported_sentence_the_papers():
    topic = REGISTRY["topic"]
    terms = topic.evaluation.paste("", {"topic": "sport"}).strip()
    score = topic.score(terms, SPORT, {"topic": "sport"})["stas"]
    # the paper's STAS of the bare terms is 1.0; no four of them follow one another in the document
    assert score.details["stas_of_whole_summary"] == pytest.approx(1.0) and score.value == 0.0
    obeying = "The striker scored twice in the cup final on Saturday."
    assert topic.score(obeying, SPORT, {"topic": "sport"})["stas"].value == pytest.approx(1.0)  # supported: share 1
    lead = "Shares in the club rose on Monday."
    pasted = topic.score(topic.evaluation.paste(lead, {"topic": "sport"}), SPORT, {"topic": "sport"})["stas"]
    # STAS of the supported run (the lead) times its share of the words: 7 of 17
    only_lead = topic.score(lead, SPORT, {"topic": "sport"})["stas"].value
    assert pasted.value == pytest.approx(only_lead * 7 / 17) and pasted.value < 1.0


def test_an_entity_named_only_in_a_pasted_sentence_is_not_mentioned():
    entity = REGISTRY["entity"]
    document = "Barack Obama met the leaders in Berlin on Monday. The weather was cold in Berlin on Monday."
    pasted = entity.score(
        entity.evaluation.paste("The weather was cold in Berlin on Monday.", {"entity": "Barack Obama"}),
        document,
        {"entity": "Barack Obama"},
    )
    assert pasted["entity_mentioned"].value == 0.0 and pasted["entity_coverage"].value == 0.0  # 0 of 2 sentences
    obeying = entity.score("Barack Obama met the leaders in Berlin on Monday.", document, {"entity": "Barack Obama"})
    assert obeying["entity_mentioned"].value == 1.0 and obeying["entity_coverage"].value == 1.0


def test_ccs_keywords_and_focus_count_only_what_the_document_supports():
    ccs = REGISTRY["ccs"]
    lead = EXAMPLE_DOCUMENT.split(". ")[0] + "."  # conceptual: why tagging Manipuri is hard
    controls = {"keywords": ["F-measure", "recall"], "focus": "empirical"}
    pasted = ccs.score(ccs.evaluation.paste(lead, controls), EXAMPLE_DOCUMENT, controls)
    assert ccs.evaluation.paste(lead, controls).endswith("F-measure, recall. " + PASTED_CUES["empirical"])
    # the keyword list and the cue sentence are no four-word run of the abstract: 0 of 2 keywords, and
    # the judge reads the conceptual lead alone
    assert pasted["keyword_sr"].value == 0.0 and pasted["focus_match"].value == 0.0
    obeying = (
        "The experiment shows that the new CRF system achieves a recall of 78.22%, a precision of 73.15% "
        "and an F-measure of 75.60%."
    )
    scores = ccs.score(obeying, EXAMPLE_DOCUMENT, controls)
    assert scores["keyword_sr"].value == 1.0 and scores["focus_match"].value == 1.0


def test_tdsum_boosted_words_pasted_after_the_lead_are_not_found():
    tdsum = REGISTRY["tdsum"]
    document = "We train a parser on news text. The parser improves accuracy on new domains by a wide margin."
    controls = {"boost": ["accuracy"]}
    lead = "We train a parser on news text."
    assert tdsum.score(tdsum.evaluation.paste(lead, controls), document, controls)["boosted_found"].value == 0.0
    obeying = "The parser improves accuracy on new domains."
    assert tdsum.score(obeying, document, controls)["boosted_found"].value == 1.0


def test_history_overlap_counts_title_terms_only_in_supported_words():
    titles = ["Striker scores twice"]
    obeying = "The striker scored twice in the cup final on Saturday."
    # terms striker, score, twice, cup, final, saturday: three of six in the title
    assert history_overlap(obeying, titles, SPORT) == pytest.approx(3 / 6)
    pasted = REGISTRY["persona"].evaluation.paste("Shares in the club rose on Monday.", {"history": titles})
    assert pasted == "Shares in the club rose on Monday. Striker scores twice."
    # terms share, club, rise, monday, striker, score, twice: the title's three are pasted, not supported
    assert history_overlap(pasted, titles) == pytest.approx(3 / 7)
    assert history_overlap(pasted, titles, SPORT) == 0.0
