"""The text rules after document words (tests/test_document_words.py): finished sentences
(variants/text_rules.py ``SentenceEndLogitsProcessor``: no end of sequence before the text ends a sentence)
no repeated trigram, no doubled word and verbatim quotes. By hand on MiniLM's WordPiece tokenizer (as stored), and on a tiny random BART that
would stop mid-sentence, or loop, without them."""

from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BartForConditionalGeneration, LogitsProcessor, NoRepeatNGramLogitsProcessor

from variants.decoding import generate
from variants.decoding_rules import (
    DOCUMENT_WORDS,
    FINISH_SENTENCES,
    NO_DOUBLED_WORDS,
    NO_REPEAT_TRIGRAMS,
    REPEAT_PENALTY,
    VERBATIM_QUOTES,
    whole_words,
    word_joiners,
    word_pieces,
)
from variants.presets import tiny_bart_config
from variants.seq2seq import GenerationSettings
from variants.text_rules import (
    DocumentWordsLogitsProcessor,
    NoDoubledWordsLogitsProcessor,
    NoRepeatNgramsLogitsProcessor,
    SentenceEndLogitsProcessor,
    VerbatimQuotesLogitsProcessor,
)

WORDPIECE = Path(__file__).resolve().parents[1] / "store" / "models" / "general"  # MiniLM's tokenizer, as stored
DOCUMENTS = ["Davies joined from Loftus Road in 2019. He scored twice.", "The jury gave its prize to Titane."]


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(WORDPIECE)


def test_the_end_waits_for_a_full_stop_by_hand(tokenizer):
    rule = SentenceEndLogitsProcessor(tokenizer)
    eos = tokenizer.eos_token_id
    rows = [tokenizer.encode(text, add_special_tokens=False) for text in ("he scored", "he scored.", 'he said "no!"')]
    width = max(map(len, rows))
    batch = torch.tensor([[tokenizer.pad_token_id] * (width - len(r)) + r for r in rows])
    scores = torch.zeros(3, len(tokenizer))
    out = rule(batch, scores)
    assert out[0, eos] == -float("inf") and out[1, eos] == 0 and out[2, eos] == 0  # a quote may close the sentence
    assert torch.equal(out[0, :eos], scores[0, :eos])  # nothing else is touched
    only_end = torch.full((1, len(tokenizer)), -float("inf"))
    only_end[0, eos] = 0.0  # another rule forces the end: this one gives way
    assert torch.equal(rule(batch[:1], only_end), only_end)


class StopsMidSentence(LogitsProcessor):
    """A model's wish, in place of a trained one's: end after three tokens, and only later, from the sixth,
    think of a full stop (less than of the end)."""

    def __init__(self, eos: int, period: int, start: int):
        self.eos, self.period, self.start = eos, period, start

    def __call__(self, input_ids, scores):
        written = input_ids.shape[1] - self.start
        scores = scores.clone()
        if written >= 5:
            scores[:, self.period] = scores.max() + 50
        if written >= 3:
            scores[:, self.eos] = scores.max() + 50
        return scores


def test_generation_with_the_rule_ends_every_summary_on_a_finished_sentence(tokenizer):
    torch.manual_seed(0)
    model = BartForConditionalGeneration(tiny_bart_config(tokenizer)).eval()
    batch = tokenizer(DOCUMENTS, return_tensors="pt", padding=True)

    def summaries(**switches):
        wish = StopsMidSentence(tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids("."), 1)
        kwargs = dict(max_new_tokens=24, num_beams=2, tokenizer=tokenizer, documents=DOCUMENTS)
        with torch.inference_mode():
            out = generate(model, **batch, logits_processor=[wish], **kwargs, **switches)
        return tokenizer.batch_decode(out, skip_special_tokens=True)

    free, ruled = summaries(finish_sentences=False), summaries(finish_sentences=True)
    assert [len(text.split()) for text in free] == [3, 3] and not any(t.endswith(".") for t in free), free
    assert all(text.endswith(".") and len(text.split()) == 5 for text in ruled), ruled  # five tokens, then "."
    setattr(model.generation_config, FINISH_SENTENCES, True)  # the served default, from the generation config
    assert summaries() == ruled and summaries(constraints=False) == free


@pytest.fixture
def looping(tokenizer):
    """A tiny random BART that loops ("bared bared bared ..."), and a function giving its rows, special tokens
    left out, for the rules' switches (a test may change its generation config: one model per test)."""
    torch.manual_seed(0)
    model = BartForConditionalGeneration(tiny_bart_config(tokenizer, init_std=0.3)).eval()
    batch = tokenizer(DOCUMENTS, return_tensors="pt", padding=True)

    def rows(**switches):
        with torch.inference_mode():
            out = generate(model, **batch, max_new_tokens=24, num_beams=2, tokenizer=tokenizer, **switches)
        return [[t for t in row if t not in tokenizer.all_special_ids] for row in out.tolist()]

    return model, rows


def repeated_trigrams(row: list[int]) -> list[tuple[int, ...]]:
    seen, repeated = set(), []
    for i in range(len(row) - 2):
        trigram = tuple(row[i : i + 3])
        if trigram in seen:
            repeated.append(trigram)
        seen.add(trigram)
    return repeated


def test_generation_without_repeated_trigrams_writes_none(looping):
    model, rows = looping
    free, ruled = rows(no_repeat_trigrams=False), rows(no_repeat_trigrams=True)
    assert all(repeated_trigrams(row) for row in free), free  # "bared bared bared ...": a loop
    assert not any(repeated_trigrams(row) for row in ruled) and all(len(row) >= 6 for row in ruled), ruled
    setattr(model.generation_config, NO_REPEAT_TRIGRAMS, True)  # the served default, from the generation config
    assert rows() == ruled and rows(constraints=False) == free


def test_a_repeated_trigram_costs_the_penalty_and_is_taken_only_when_nothing_else_is_left(tokenizer):
    # by hand: in [7, 8, 9, 7, 8] the next 9 would repeat (7, 8, 9); every other token keeps its score
    scores = torch.zeros(1, 16)
    penalised = NoRepeatNgramsLogitsProcessor()(torch.tensor([[7, 8, 9, 7, 8]]), scores)
    assert penalised[0, 9] == -REPEAT_PENALTY and (penalised[0, :9] == 0).all() and (penalised[0, 10:] == 0).all()
    # "adversarial" a second time: the document-words rule leaves "##aria" alone to go on with "ad ##vers", and
    # that piece repeats the trigram (ad, ##vers, ##aria). A ban leaves no finite score, so the beam would take
    # any piece ("adversiral"); the penalty leaves "##aria" the best token.
    document = "We augment adversarial training."
    row = torch.tensor(
        [
            tokenizer.convert_tokens_to_ids(
                ["we", "augment", "ad", "##vers", "##aria", "##l", "training", "with", "ad", "##vers"]
            )
        ]
    )
    words = DocumentWordsLogitsProcessor(tokenizer, [document])
    logits = torch.randn(1, len(tokenizer))
    banned = NoRepeatNGramLogitsProcessor(3)(row, words(row, logits.clone()))
    assert not torch.isfinite(banned).any()
    kept = NoRepeatNgramsLogitsProcessor()(row, words(row, logits.clone()))
    assert tokenizer.convert_ids_to_tokens(int(kept.argmax())) == "##aria" and torch.isfinite(kept).sum() == 1


def test_a_piece_that_goes_on_with_a_word_is_never_penalised(tokenizer):
    # "Bruvik" a second time after the same four tokens: a 5-gram ban removes "##u", so with the document-words
    # rule the word can only stop at "br" ("br university", as served before); judged at word starts, "##u" keeps
    # its score, and the repeat is judged at the next word's first token ("must" after "br ##u ##vik").
    document = "A court ruled that Bruvik must pay."
    ids = tokenizer.encode(document.lower() + " a court ruled that bruvik", add_special_tokens=False)
    piece, must = tokenizer.convert_tokens_to_ids(["##u", "must"])
    scores = torch.randn(1, len(tokenizer))
    at_piece = torch.tensor([ids[:-2]])  # ... a court ruled that br
    assert torch.isinf(NoRepeatNGramLogitsProcessor(5)(at_piece, scores.clone())[0, piece])
    words = NoRepeatNgramsLogitsProcessor(5, pieces=word_pieces(tokenizer)[0])
    assert torch.equal(words(at_piece, scores), scores)  # the only repeat here is a piece: nothing is penalised
    assert NoRepeatNgramsLogitsProcessor(5)(at_piece, scores)[0, piece] == scores[0, piece] - REPEAT_PENALTY
    at_word = torch.tensor([ids])  # ... a court ruled that br ##u ##vik
    out = words(at_word, scores)
    assert out[0, must] == scores[0, must] - REPEAT_PENALTY and (out != scores).sum() == 1


def test_a_token_after_a_hyphen_or_an_apostrophe_goes_on_with_the_word(tokenizer):
    # "Le-May" a second time: the trigram (le, -, may) repeats at "may"; penalised, the beam wrote "Le-might".
    # With the joiners, the row whose last token is "-" is left as it is; at "le" the repeat is judged as before.
    ids = tokenizer.encode("le - may told itv . then le -", add_special_tokens=False)
    may, told = tokenizer.convert_tokens_to_ids(["may", "told"])
    scores = torch.randn(1, len(tokenizer))
    pieces = word_pieces(tokenizer)[0]
    assert set(tokenizer.convert_tokens_to_ids(["-", "'", "’"])) == word_joiners(tokenizer)
    plain = NoRepeatNgramsLogitsProcessor(3, pieces=pieces)(torch.tensor([ids]), scores)
    assert plain[0, may] == scores[0, may] - REPEAT_PENALTY
    joined = NoRepeatNgramsLogitsProcessor(3, pieces=pieces, joiners=word_joiners(tokenizer))
    assert torch.equal(joined(torch.tensor([ids]), scores), scores)
    after_may = torch.tensor([ids + [may]])  # ... then le - may: "told" would repeat (-, may, told)
    assert joined(after_may, scores)[0, told] == scores[0, told] - REPEAT_PENALTY


def test_a_word_just_written_costs_the_penalty_by_hand(tokenizer):
    rule = NoDoubledWordsLogitsProcessor(word_pieces(tokenizer)[0], whole_words(tokenizer))
    scores = torch.randn(3, len(tokenizer))
    rows = [
        ["[SEP]", "with"],  # "with with": the word just written
        ["[SEP]", "br", "##u", "##vik"],  # after a word of pieces: its first token
        ["[SEP]", "said", ","],  # after punctuation: nothing
    ]
    out = rule(torch.tensor([tokenizer.convert_tokens_to_ids(r) for r in rows[:1]]), scores[:1])
    with_ = tokenizer.convert_tokens_to_ids("with")
    assert out[0, with_] == scores[0, with_] - REPEAT_PENALTY and (out != scores[:1]).sum() == 1
    out = rule(torch.tensor([tokenizer.convert_tokens_to_ids(rows[1])]), scores[1:2])
    br = tokenizer.convert_tokens_to_ids("br")
    assert out[0, br] == scores[1, br] - REPEAT_PENALTY and (out != scores[1:2]).sum() == 1
    assert torch.equal(rule(torch.tensor([tokenizer.convert_tokens_to_ids(rows[2])]), scores[2:]), scores[2:])
    start = torch.tensor([[tokenizer.sep_token_id]])  # the decoder's start token is no word: the end stays free
    assert torch.equal(rule(start, scores[:1]), scores[:1])


def test_generation_without_doubled_words_writes_none(looping):
    model, rows = looping

    def doubles(row):
        return [a for a, b in zip(row, row[1:]) if a == b]

    free, ruled = rows(no_doubled_words=False), rows(no_doubled_words=True)
    assert all(doubles(row) for row in free), free  # "bared bared ...": a word twice in a row
    assert not any(doubles(row) for row in ruled) and all(len(row) >= 6 for row in ruled), ruled
    setattr(model.generation_config, NO_DOUBLED_WORDS, True)  # the served default, from the generation config
    assert rows() == ruled and rows(constraints=False) == free


class Kwargs(BartForConditionalGeneration):
    """A BART whose ``generate`` returns nothing and keeps what it was given."""

    def generate(self, *args, **kwargs):
        self.given = kwargs
        return torch.zeros(1, 1, dtype=torch.long)


def test_with_document_words_the_models_ngram_ban_is_judged_at_word_starts(tokenizer):
    model = Kwargs(tiny_bart_config(tokenizer)).eval()
    model.generation_config.no_repeat_ngram_size = 5
    batch = tokenizer(DOCUMENTS[:1], return_tensors="pt")

    def given(**switches):
        generate(model, **batch, tokenizer=tokenizer, **switches)
        repeats = [p for p in model.given.get("logits_processor", []) if isinstance(p, NoRepeatNgramsLogitsProcessor)]
        return model.given.get("no_repeat_ngram_size"), [(p.ban.ngram_size, p.pieces is not None) for p in repeats]

    assert given() == (None, [])  # no rule on: generate's own ban, from the generation config
    assert given(document_words=True) == (0, [(5, True)])
    assert given(document_words=True, no_repeat_ngram_size=4) == (0, [(4, True)])  # a caller's size is kept
    assert given(no_repeat_trigrams=True) == (0, [(3, False)])  # no word rule: pieces are judged too
    setattr(model.generation_config, DOCUMENT_WORDS, True)  # the served default, from the generation config
    assert given(no_repeat_trigrams=True) == (0, [(3, True)]) and given(constraints=False) == (None, [])


def test_the_rule_reads_no_metric_part(tokenizer, monkeypatch):
    """ends_sentence (metrics.quality) is what the rule is chosen for: the rule reads none of it."""
    import metrics.quality

    batch = torch.tensor([tokenizer.encode("he scored", add_special_tokens=False)])
    before = SentenceEndLogitsProcessor(tokenizer)(batch, torch.zeros(1, len(tokenizer)))
    for name in ("quality", "quality_notices"):
        monkeypatch.setattr(metrics.quality, name, lambda *a, **k: pytest.fail("the rule read a metric"))
    monkeypatch.setattr(metrics.quality, "FINAL", None)
    assert torch.equal(SentenceEndLogitsProcessor(tokenizer)(batch, torch.zeros(1, len(tokenizer))), before)


def test_the_settings_carry_the_rules_and_the_model_alone_drops_them():
    served = GenerationSettings.from_record(
        {FINISH_SENTENCES: True, "document_words": True, NO_REPEAT_TRIGRAMS: True, NO_DOUBLED_WORDS: True}
    )
    assert served.finish_sentences and served.no_repeat_trigrams and served.document_words and served.no_doubled_words
    alone = served.alone()
    assert not (alone.finish_sentences or alone.no_repeat_trigrams or alone.document_words or alone.no_doubled_words)
    with pytest.raises(ValueError, match="finish_sentences must be true or false, got 'yes'"):
        GenerationSettings(finish_sentences="yes")


QUOTED = 'The minister said: "We will not raise taxes this year," adding that costs fell.'


def test_inside_a_quote_only_the_documents_next_token_or_the_closing_mark_by_hand(tokenizer):
    rule = VerbatimQuotesLogitsProcessor(tokenizer, [QUOTED])

    def kept(text: str) -> set[str]:
        row = torch.tensor([[tokenizer.sep_token_id] + tokenizer.encode(text, add_special_tokens=False)])
        scores = torch.randn(1, len(tokenizer))
        out = rule(row, scores)
        assert torch.equal(out[torch.isfinite(out)], scores[torch.isfinite(out)])  # kept tokens keep their scores
        return set(tokenizer.convert_ids_to_tokens(torch.isfinite(out[0]).nonzero().flatten().tolist()))

    assert len(kept("she said")) == len(tokenizer)  # outside a quote: nothing is touched
    assert kept('she said " we will') == {"not", '"'}  # "we will" goes on only as the document's "we will not"
    assert kept('she said " we will not " and') == kept("she said")  # closed: free again
    opened = kept('she said "')  # a quote opens on a word the document writes, and holds one before it closes
    assert {"we", "minister", "taxes"} <= opened and not {'"', "“", "”", "i"} & opened
    assert kept("“ taxes this year") == {",", "”"}  # a curly mark is closed by its own
    gone = torch.tensor([[tokenizer.sep_token_id] + tokenizer.encode('" we will', add_special_tokens=False)])
    only_other = torch.full((1, len(tokenizer)), -float("inf"))
    only_other[0, tokenizer.convert_tokens_to_ids("raise")] = 0.0  # another rule leaves "raise" alone: it gives way
    assert torch.equal(rule(gone, only_other), only_other)


class QuotesAMadeUpLine(LogitsProcessor):
    """A model's wish, in place of a trained one's: a quotation mark at the second token, then "i don't want"."""

    def __init__(self, tokenizer, start: int):
        self.quote = tokenizer.convert_tokens_to_ids('"')
        self.line = tokenizer.convert_tokens_to_ids(["i", "don", "'", "t", "want"])
        self.start = start

    def __call__(self, input_ids, scores):
        written = input_ids.shape[1] - self.start
        scores = scores.clone()
        wish = [self.quote] + self.line
        if 1 <= written <= len(wish):
            scores[:, wish[written - 1]] = scores.max() + 50
        return scores


def quoted_runs(tokenizer, row: list[int]) -> list[list[int]]:
    quote, runs, run = tokenizer.convert_tokens_to_ids('"'), [], None
    for token in row:
        if token == quote:
            run = [] if run is None else runs.append(run)
        elif run is not None:
            run.append(token)
    return runs + ([run] if run else [])


def test_generation_with_verbatim_quotes_quotes_only_the_document(tokenizer):
    torch.manual_seed(0)
    model = BartForConditionalGeneration(tiny_bart_config(tokenizer)).eval()
    documents = [QUOTED, DOCUMENTS[0]]
    batch = tokenizer(documents, return_tensors="pt", padding=True)

    def rows(**switches):
        wish = QuotesAMadeUpLine(tokenizer, 1)
        kwargs = dict(max_new_tokens=16, num_beams=2, tokenizer=tokenizer, documents=documents)
        with torch.inference_mode():
            out = generate(model, **batch, logits_processor=[wish], **kwargs, **switches)
        return [[t for t in row if t not in tokenizer.all_special_ids] for row in out.tolist()]

    def in_document(run: list[int], document: str) -> bool:
        ids = tokenizer.encode(document, add_special_tokens=False)
        return any(ids[i : i + len(run)] == run for i in range(len(ids)))

    free, ruled = rows(verbatim_quotes=False), rows(verbatim_quotes=True)
    made_up = tokenizer.convert_tokens_to_ids(["i", "don", "'", "t", "want"])
    assert all(quoted_runs(tokenizer, row)[0][:5] == made_up for row in free), free
    for row, document in zip(ruled, documents):
        runs = quoted_runs(tokenizer, row)
        assert runs and all(run and in_document(run, document) for run in runs), (row, runs)
    setattr(model.generation_config, VERBATIM_QUOTES, True)  # the served default, from the generation config
    assert rows() == ruled and rows(constraints=False) == free


def test_altered_quotes_are_those_the_document_does_not_write():
    from metrics.quality import altered_quotes, quotes

    assert quotes('He said "no way" and "yes') == ["no way", "yes"]  # pairs in order; an open one runs to the end
    assert quotes("“a” b ” c “d") == ["a", "d"]  # curly marks say which they are
    assert altered_quotes('She said "we will not raise taxes".', QUOTED) == []  # a part, any case, is verbatim
    assert altered_quotes('She said "I don\'t want taxes" and "costs fell"', QUOTED) == ["I don't want taxes"]
    assert altered_quotes('A "" mark, and "," alone.', QUOTED) == []  # no word quoted
    # an extract's quote left open runs into a later sentence: each sentence is the document's, so none is altered
    assert altered_quotes('"We will not raise taxes. Costs fell.', QUOTED + " Costs fell.") == []
    assert altered_quotes('"We will not raise taxes. Costs rose.', QUOTED) == ["We will not raise taxes. Costs rose."]
