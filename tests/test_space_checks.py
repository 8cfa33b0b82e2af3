"""The text checks beside the control metrics in every live score panel and result: sentence end,
repeated 3-gram, names and numbers the document lacks, and the length against the asked one (CCS's
length bin), with a notice for each failed check; hand-made summaries with counts known by hand."""

import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from metrics.io import read_jsonl

# 60 whitespace words, none repeated and none a name (stop words), one sentence: passes every text check
SIXTY = " ".join(sorted(ENGLISH_STOP_WORDS)[:60]).capitalize() + "."
GOOD = {
    "ends_sentence": 1,
    "repeated_trigram": 0,
    "doubled_word": 0,
    "altered_quote": 0,
    "unsupported_facts": 0,
    "has_unsupported": 0,
}


@pytest.fixture(scope="module")
def service():
    from space.catalog import build_catalog
    from space.service import Service

    return Service(build_catalog(None, None, store_index=False, leaderboard=False))


@pytest.fixture(scope="module")
def document(data_dir):
    return next(
        r["source"] for r in read_jsonl(data_dir / "bbc_summary" / "test.jsonl") if len(r["source"].split()) > 150
    )


def test_the_panel_and_the_tables_show_each_check_passed_or_failed():
    from space.views import checks_cell, metrics_markdown, table_frame

    bad = {
        "ends_sentence": 0,
        "repeated_trigram": 1,
        "doubled_word": 1,
        "altered_quote": 0,
        "unsupported_facts": 2,
        "has_unsupported": 1,
        "words": 60,
        "asked_min_words": 1,
        "asked_max_words": 50,
        "length_in_bounds": 0,
    }
    scores = {"length_hit": {"value": 0.0, "meaning": "in the bin", "details": None}}
    panel = metrics_markdown({"scores": scores, "quality": bad, "notices": ["n"]}).splitlines()
    assert panel[1] == (
        "- **text** — ✗ does not end a sentence · ✗ a repeated 3-gram · ✗ a word twice in a row · ✓ no altered "
        "quote · ✗ 2 name(s) or number(s) not in the document · ✗ 60 words (asked 1-50 words)"
    )
    good_panel = metrics_markdown({"scores": scores, "quality": GOOD, "notices": []}).splitlines()
    assert good_panel[1] == (
        "- **text** — ✓ ends a sentence · ✓ no repeated 3-gram · ✓ no word twice in a row · ✓ no altered quote · "
        "✓ every name and number in the document"
    )
    assert checks_cell(GOOD) == "✓" and checks_cell({**GOOD, "repeated_trigram": 1}) == "✗ a repeated 3-gram"
    open_bin = {**GOOD, "words": 60, "asked_min_words": 201, "asked_max_words": None, "length_in_bounds": 0}
    assert checks_cell(open_bin) == "✗ 60 words (asked at least 201 words)"
    rows = [
        {"value": 0, "summary": "a", "scores": scores, "quality": bad},
        {"value": 1, "summary": "b", "scores": scores, "quality": GOOD},
    ]
    table = table_frame(rows, "value")
    assert table.columns.tolist() == ["value", "length_hit", "text checks", "summary"]
    assert table["text checks"].tolist()[1] == "✓" and table["text checks"].tolist()[0].startswith("✗ does not end")


def test_a_scored_summary_carries_its_checks_and_the_asked_length(service, document):
    by_bin = {b: service.score(SIXTY, document, "ccs", {"length": b}) for b in (0, 1, 4)}
    assert by_bin[0]["quality"] == {
        **GOOD,
        "words": 60,
        "asked_min_words": 1,
        "asked_max_words": 50,
        "length_in_bounds": 0,
    }
    assert "the summary has 60 words; its controls ask for 1-50 words" in by_bin[0]["notices"]
    assert by_bin[1]["quality"]["length_in_bounds"] == 1 and not any("words;" in n for n in by_bin[1]["notices"])
    last = by_bin[4]["quality"]  # the last bin is open above: 201 words or more
    assert (last["asked_min_words"], last["asked_max_words"], last["length_in_bounds"]) == (201, None, 0)
    # no length asked (keywords only, or another variant's controls): no length fields, the other checks stay
    for result in (
        service.score(SIXTY, document, "ccs", {"keywords": ["about"]}),
        service.score(SIXTY, document, "topic", {"topic": "business"}),
    ):
        assert result["quality"] == GOOD and not any("words;" in n for n in result["notices"])
    loop = service.score("Profit rose rose rose rose said Mr Qwertyuiop", document, "topic", {"topic": "business"})
    assert {k: loop["quality"][k] for k in GOOD} == {
        "ends_sentence": 0,
        "repeated_trigram": 1,
        "doubled_word": 1,
        "altered_quote": 0,
        "unsupported_facts": 1,
        "has_unsupported": 1,
    }
    assert len(loop["notices"]) == 4 and "qwertyuiop" in loop["notices"][3]
    assert "a word twice in a row ('rose rose')" in loop["notices"][2]


def test_summarize_checks_the_summary_it_generated(service, document):
    result = service.summarize(document, "ccs", "baseline", {"length": 1})
    words = len(result["summary"].split())
    assert result["quality"]["words"] == words and result["quality"]["length_in_bounds"] == int(51 <= words <= 100)
    assert result["quality"]["length_in_bounds"] == 1  # the baseline extracts within the bin
    assert set(GOOD) <= set(result["quality"])


def test_the_readers_panel_shows_each_summarys_checks():
    from space.readers import divergence_markdown

    readers = [
        {"summary": "a", "quality": GOOD, "notices": []},
        {"summary": "b", "quality": {**GOOD, "ends_sentence": 0}, "notices": ["cut"]},
    ]
    text = divergence_markdown({"readers": readers, "divergence": {"jsd": 0.25, "one_minus_rouge_l": 0.5}})
    lines = text.split("\n\n")
    assert lines[0].startswith("**Divergence of the two summaries**: JSD 0.250")
    rest = "✓ no repeated 3-gram · ✓ no word twice in a row · ✓ no altered quote · ✓ every name and number in the document"
    assert lines[1].splitlines() == [
        f"- **reader A** — ✓ ends a sentence · {rest}",
        f"- **reader B** — ✗ does not end a sentence · {rest}",
    ]
    assert lines[2] == "_cut_"
