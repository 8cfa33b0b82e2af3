"""The postprocess step: generated text in the document's case and spacing, complete sentences, and
text that is already cased (a cased model's, an extractive baseline's) left as it is."""

import pytest

from variants.postprocess import capitalise_sentences, complete_sentences, postprocess, restore_surface

DOCUMENT = (
    "Renault's profit rose to 1.4bn euros (£960m; $1.85bn) after better-than-expected sales in the U.S. "
    'and Europe. Chairman Louis Schweitzer said 2004 had been a "great year" for the firm. '
    "The carmaker's shares, which didn't move, closed at 5.25% above their low."
)


def test_numbers_and_currencies_take_the_documents_form():
    assert postprocess("1. 4bn euros ( £960m ; $ 1. 85bn )", DOCUMENT) == "1.4bn euros (£960m; $1.85bn)"


def test_initials_and_hyphenated_words_take_the_documents_form():
    assert restore_surface("u. s.", DOCUMENT) == "U.S."
    assert restore_surface("better - than - expected", DOCUMENT) == "better-than-expected"
    assert restore_surface("sales in the u. s. and europe", DOCUMENT) == "sales in the U.S. and Europe"


def test_names_take_their_mid_sentence_case_and_sentence_starts_are_capitalised():
    text = 'chairman louis schweitzer praised renault\'s sales. the firm had a " great year ".'
    assert (
        postprocess(text, DOCUMENT)
        == 'Chairman Louis Schweitzer praised Renault\'s sales. The firm had a "great year".'
    )
    # "The" opens a sentence in the document: that says nothing about its case mid-sentence
    assert postprocess("shares of the carmaker rose.", DOCUMENT) == "Shares of the carmaker rose."


def test_words_the_document_lacks_keep_their_form_and_spacing_rules_apply():
    text = "the ceo ' s well - known plan , worth 2. 5bn , didn ' t work ( again ) ."
    assert postprocess(text, DOCUMENT) == "The ceo's well-known plan, worth 2.5bn, didn't work (again)."


def test_a_plural_possessive_glued_to_the_next_word_by_the_decoder_gets_its_space():
    # MiniLM's decoder writes "tories ' clause" as "tories'clause"; a contraction's ending stays joined, and a
    # name the document writes with an apostrophe keeps its form; cased text is left as written
    document = "Mr Blair rejected the Tories' sunset clause. O'Neill said it didn't matter."
    assert postprocess("mr blair rejected the tories'clause.", document) == "Mr Blair rejected the Tories' clause."
    assert restore_surface("o'neill said it didn't.", document) == "O'Neill said it didn't."
    assert restore_surface("The Tories'clause.", document) == "The Tories'clause."


def test_a_trailing_unfinished_sentence_is_dropped_but_a_lone_one_is_kept():
    assert postprocess("profit rose. the firm said that it", DOCUMENT) == "Profit rose."
    assert postprocess("profit rose and the firm said that it", DOCUMENT) == "Profit rose and the firm said that it"
    assert complete_sentences('He said "fine." Then') == 'He said "fine."'
    # an initial or an abbreviation ends no sentence
    assert complete_sentences("Sales in the U.S. rose") == "Sales in the U.S. rose"
    assert complete_sentences("It rose. Mr. Smith said") == "It rose."


@pytest.mark.parametrize(
    "text",
    [
        DOCUMENT,
        'Chairman Louis Schweitzer said 2004 had been a "great year" for the firm. Renault\'s profit rose.',
        "The iPhone maker, Apple, said NASA's budget was 5.25% of $1.85bn.",  # a cased model's own words
    ],
)
def test_cased_text_comes_out_unchanged_and_postprocess_is_idempotent(text):
    assert postprocess(text, DOCUMENT) == text
    once = postprocess("renault ' s profit rose to 1. 4bn euros. it was", DOCUMENT)
    assert postprocess(once, DOCUMENT) == once == "Renault's profit rose to 1.4bn euros."


def test_every_baselines_extractive_summary_comes_out_unchanged():
    # An extractive summary is the document's own text: postprocess changes nothing in it, except that a
    # clause cut out of a sentence ("different aspects of ..., we present ...") gains its capital
    # (a few of the bundled test examples).
    from variants import REGISTRY

    checked = 0
    for variant in REGISTRY.values():
        baseline = variant.baseline()
        records = variant.evaluation.test_examples(5)
        summaries = baseline.summarize([r["document"] for r in records], [r["controls"] for r in records])
        for record, summary in zip(records, summaries):
            text = summary.text.strip()
            assert postprocess(text, record["document"]) == capitalise_sentences(text), (variant.id, text)
            checked += 1
    assert checked >= 15
