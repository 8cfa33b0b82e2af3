"""The document-words rule (variants/decoding_rules.py, variants/text_rules.py): a word the vocabulary writes in
several tokens, or one that starts with a digit, is one the document writes. Checked by hand on MiniLM's WordPiece
tokenizer (as stored), and on a tiny random BART generating with it, where without the rule such words are invented."""

from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BartForConditionalGeneration

from variants.decoding import generate
from variants.decoding_rules import document_words, last_word, word_pieces
from variants.presets import tiny_bart_config
from variants.seq2seq import GenerationSettings
from variants.text_rules import DocumentWordsLogitsProcessor

WORDPIECE = Path(__file__).resolve().parents[1] / "store" / "models" / "general"  # MiniLM's tokenizer, as stored
DOCUMENT = "Davies joined from Loftus Road in 2019 for £960m, a 56% rise."


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(WORDPIECE)


def ids(tokenizer, *tokens: str) -> list[int]:
    return tokenizer.convert_tokens_to_ids(list(tokens))


def words_of(tokenizer, row: list[int]) -> list[tuple[str, ...]]:
    """A generated row's words as token runs, as the rule splits them."""
    pieces, _ = word_pieces(tokenizer)
    out = []
    for token in row:
        if out and token < len(pieces) and pieces[token]:
            out[-1] += (token,)
        else:
            out.append((token,))
    return [tuple(tokenizer.convert_ids_to_tokens(list(w))) for w in out]


def test_the_documents_words_by_hand(tokenizer):
    # MiniLM's WordPiece: "Loftus" is loft ##us, "£960m" is £ ##9 ##60 ##m, "2019" and "56" are one token each
    follow, whole, _, _, _ = document_words(tokenizer, DOCUMENT)
    loft, us, pound, nine, sixty, m = ids(tokenizer, "loft", "##us", "£", "##9", "##60", "##m")
    assert follow[(loft,)] == {us} and (loft, us) in whole
    assert follow[(pound,)] == {nine} and follow[(pound, nine)] == {sixty} and follow[(pound, nine, sixty)] == {m}
    assert (pound, nine, sixty, m) in whole and (pound, nine) not in whole
    pieces, digits = word_pieces(tokenizer)
    assert pieces[us] and not pieces[loft] and not pieces[ids(tokenizer, ".")[0]]  # punctuation is no piece
    assert digits[ids(tokenizer, "56")[0]] and not digits[loft]
    assert last_word([102, 1, loft, us], pieces) == (loft, us)


def test_the_rule_keeps_names_and_numbers_to_the_documents(tokenizer):
    rule = DocumentWordsLogitsProcessor(tokenizer, [DOCUMENT])
    loft, us, u, road, pound, nine, sixty, fifty_five, fifty_six = ids(
        tokenizer, "loft", "##us", "##u", "road", "£", "##9", "##60", "55", "56"
    )
    start = tokenizer.sep_token_id  # the decoder's start token
    rows = torch.tensor([[start, start, x] for x in (loft, pound)] + [[start, pound, nine]])
    rows = torch.cat([rows, torch.tensor([[start, start, road], [start, start, fifty_six]])])
    out = rule(rows, torch.zeros(len(rows), len(tokenizer)))
    allowed = torch.isfinite(out)
    # after "loft": "##us" (Loftus) but not "##u" ("loftu"); a one-token word ends freely
    assert allowed[0, us] and not allowed[0, u] and allowed[0, road] and allowed[0, tokenizer.sep_token_id]
    # "£9" is only the start of "£960m": it goes on with "##60", nothing ends it
    assert allowed[2].sum() == 1 and allowed[2, sixty]
    assert not allowed[2, tokenizer.sep_token_id] and not allowed[2, road]
    # a number starts as the document's do: 56, not 55
    assert allowed[3, fifty_six] and not allowed[3, fifty_five]
    assert allowed[4, tokenizer.sep_token_id]  # "56" is a whole document word
    # pieces no document word continues with are out after any word
    assert not allowed[3, u] and not allowed[1, u]


def test_a_row_the_rule_would_leave_no_token_gives_way(tokenizer):
    rule = DocumentWordsLogitsProcessor(tokenizer, [DOCUMENT])
    pound, u = ids(tokenizer, "£", "##u")
    scores = torch.full((1, len(tokenizer)), -float("inf"))
    scores[0, u] = 0.0  # another rule left only a piece this one rules out
    assert torch.equal(rule(torch.tensor([[102, pound]]), scores), scores)


def test_generation_with_the_rule_writes_only_the_documents_long_words_and_numbers(tokenizer):
    torch.manual_seed(0)
    model = BartForConditionalGeneration(tiny_bart_config(tokenizer, init_std=0.3)).eval()
    pieces, digits = word_pieces(tokenizer)
    with torch.no_grad():  # a model that likes pieces and numbers, as one that invents names does
        model.final_logits_bias[0, torch.tensor(pieces) | torch.tensor(digits)] += 3.0
    documents = [DOCUMENT, "The 2021 Cannes jury, led by Spike Lee, gave its prize to Titane on 17 July."]
    batch = tokenizer(documents, return_tensors="pt", padding=True)
    _, whole, _, _, _ = zip(*(document_words(tokenizer, d) for d in documents))
    whole = [{tuple(tokenizer.convert_ids_to_tokens(list(w))) for w in ws} for ws in whole]

    def bound(word):  # a word the rule binds: several tokens, or a digit first
        return len(word) > 1 or digits[tokenizer.convert_tokens_to_ids(word[0])]

    kwargs = dict(max_new_tokens=24, num_beams=2, tokenizer=tokenizer, documents=documents)
    with torch.inference_mode():
        free = generate(model, **batch, document_words=False, **kwargs)
        ruled = generate(model, **batch, document_words=True, **kwargs)
    special = set(tokenizer.all_special_ids)
    invented = [
        [w for w in words_of(tokenizer, [t for t in row if t not in special]) if bound(w) and w not in ws]
        for row, ws in zip(free.tolist(), whole)
    ]
    assert any(invented)  # a random model strings pieces into words no document has
    for row, ws in zip(ruled.tolist(), whole):
        words = words_of(tokenizer, [t for t in row if t not in special])
        assert [w for w in words if bound(w) and w not in ws] == [], words


def test_the_rule_reads_no_metric_part(tokenizer, monkeypatch):
    """has_unsupported (metrics.quality) judges names by their case and a dictionary: the rule reads neither."""
    import metrics.quality

    before = DocumentWordsLogitsProcessor(tokenizer, [DOCUMENT]).words
    for name in ("summary_facts", "quality"):
        monkeypatch.setattr(metrics.quality, name, lambda *a, **k: pytest.fail("the rule read a metric"))
    assert DocumentWordsLogitsProcessor(tokenizer, [DOCUMENT]).words == before


def test_the_settings_carry_the_rule_and_the_model_alone_drops_it():
    served = GenerationSettings.from_record({"document_words": True, "constraints": True, "control_strength": 2.0})
    assert served.document_words and not served.alone().document_words
    assert (served.alone().constraints, served.alone().control_strength) == (False, 1.0)
    with pytest.raises(ValueError, match="document_words must be true or false, got 'yes'"):
        GenerationSettings(document_words="yes")


def test_a_number_the_tokenizer_cuts_at_its_point_goes_on_as_the_documents(tokenizer):
    # "1.4bn" is the words "1", ".", "4bn"; "£960m" is one word: after "1 ." only "4" (the document's 1.4bn)
    # starts a number, after "5 ." only "25" (5.25%); after "2004" and a comma, none: the document writes none
    document = "Profit rose to 1.4bn euros in 2004, or 5.25% of sales."
    _, _, _, decimals, partial = document_words(tokenizer, document)
    one, five, year, point, comma, four, twenty_five, two = ids(tokenizer, "1", "5", "2004", ".", ",", "4", "25", "2")
    assert decimals == {((one,), point): {four}, ((five,), point): {twenty_five}}
    assert partial == {(one,), ((one,), point), (five,), ((five,), point)}  # each written only with its decimals
    rule = DocumentWordsLogitsProcessor(tokenizer, [document])
    start = tokenizer.sep_token_id
    rows = torch.tensor([[start, one, point], [start, five, point], [start, year, comma], [start, start, start]])
    allowed = torch.isfinite(rule(rows, torch.zeros(len(rows), len(tokenizer))))
    assert allowed[0].nonzero().flatten().tolist() == [four]  # the document ends "1." nowhere: only "4" goes on
    assert allowed[1].nonzero().flatten().tolist() == [twenty_five]
    assert not allowed[2, four] and not allowed[2, two] and allowed[2, ids(tokenizer, "or")[0]]  # a word goes on
    assert allowed[3, one] and allowed[3, five] and not allowed[3, four]  # elsewhere as the document's numbers start


def test_a_number_the_document_writes_only_with_its_decimals_gets_them(tokenizer):
    # "14" is only the start of 14.74: after it only its point, then only "74"; "12, 13" is two numbers (a space
    # after the comma); "1" ends a sentence once ("or 1."), so "1" and "1 ." may end
    document = "Holmes won in four minutes 14.74 seconds, scores of 12, 13 and 1.8% or 1."
    _, _, _, decimals, partial = document_words(tokenizer, document)
    one, twelve, fourteen, point, comma, seventy_four, eight = ids(tokenizer, "1", "12", "14", ".", ",", "74", "8")
    assert decimals == {((fourteen,), point): {seventy_four}, ((one,), point): {eight}}
    assert partial == {(fourteen,), ((fourteen,), point)}
    rule = DocumentWordsLogitsProcessor(tokenizer, [document])
    start, seconds = tokenizer.sep_token_id, ids(tokenizer, "seconds")[0]
    rows = [[start, fourteen], [start, fourteen, point], [start, twelve, comma], [start, one], [start, one, point]]
    batch = torch.tensor([[start] * (3 - len(row)) + row for row in rows])  # the start token pads on the left
    allowed = torch.isfinite(rule(batch, torch.zeros(len(rows), len(tokenizer))))
    assert allowed[0].nonzero().flatten().tolist() == [point] and allowed[1].nonzero().flatten().tolist() == [
        seventy_four
    ]
    assert (
        allowed[2, seconds] and allowed[3, seconds] and allowed[3, point] and allowed[4, seconds] and allowed[4, eight]
    )
    assert not allowed[4, seventy_four]


def test_a_numbers_decimals_start_no_number(tokenizer):
    # "2.1%" is the words "2", ".", "1" and "21,000" is "21", ",", "000": "1" and "000" start no number of the
    # document's (a summary's "fell to 1." or "21.1 000" holds a number no reader finds there); "2", "21" and
    # "1998" do, and after "2 ." the "1" still goes on as the document's 2.1
    document = "Growth slowed to 2.1% as 21,000 jobs went in 1998."
    _, _, numbers, decimals, _ = document_words(tokenizer, document)
    two, one, twenty_one, thousands, year, point, comma = ids(tokenizer, "2", "1", "21", "000", "1998", ".", ",")
    assert numbers == {two, twenty_one, year}
    assert decimals == {((two,), point): {one}, ((twenty_one,), comma): {thousands}}
    rule = DocumentWordsLogitsProcessor(tokenizer, [document])
    start = tokenizer.sep_token_id
    rows = torch.tensor([[start, start, start], [start, two, point], [start, twenty_one, comma]])
    allowed = torch.isfinite(rule(rows, torch.zeros(len(rows), len(tokenizer))))
    assert allowed[0, two] and allowed[0, twenty_one] and allowed[0, year]
    assert not allowed[0, one] and not allowed[0, thousands]
    assert allowed[1].nonzero().flatten().tolist() == [one] and allowed[2, thousands]
