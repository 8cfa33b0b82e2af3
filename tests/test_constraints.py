"""The decoding rules (variants/decoding_rules.py) and their processors (variants/rule_processors.py) on tiny
random models: the word count lands in the asked bounds, a keyword's tokens gain probability until it is written, and CCS's controls map
to the bins of its metric."""

import math
from pathlib import Path

import pytest
import torch
from transformers import BartForConditionalGeneration, T5ForConditionalGeneration

from metrics.ccs import length_bin
from metrics.text import sentences
from variants import get_variant
from variants.decoding_rules import DecodingRules, missing, token_budget, tokens_per_word
from variants.presets import tiny_bart_config, tiny_t5_config, tiny_t5_tokenizer, tiny_tokenizer
from variants.rule_processors import KeywordBiasLogitsProcessor, rule_kwargs
from variants.seq2seq import GenerationSettings, Seq2SeqSummarizer

WORDPIECE = Path(__file__).resolve().parents[1] / "store" / "models" / "general"  # MiniLM's tokenizer, as stored
DOCS = [
    "Shares in the bank rose after it said profits grew. Investors welcomed the news from London.",
    "The film won an award at the festival. Its director thanked the cast and the city of Cannes.",
]


@pytest.fixture(scope="module")
def bart():
    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    return BartForConditionalGeneration(tiny_bart_config(tokenizer, init_std=0.3)).eval(), tokenizer


@pytest.fixture(scope="module")
def wordpiece_bart():
    """A tiny random BART on the stored general summarizer's WordPiece tokenizer (MiniLM's: ``##``
    continuations, no space marks), whose decoder spaces words differently from BPE."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(WORDPIECE)
    torch.manual_seed(0)
    return BartForConditionalGeneration(tiny_bart_config(tokenizer, init_std=0.3)).eval(), tokenizer


def test_wordpiece_word_starts_are_what_its_decoder_spaces():
    from transformers import AutoTokenizer

    from variants.decoding_rules import word_starts

    tokenizer = AutoTokenizer.from_pretrained(WORDPIECE)
    starts = word_starts(tokenizer)
    is_start = {t: bool(starts[tokenizer.convert_tokens_to_ids(t)]) for t in ("the", "##ing", ".", ",", "-", "(")}
    # "a rest - of the model, ( yes )." is how the decoder writes them: "-" and "(" are words of their own
    assert is_start == {"the": True, "##ing": False, ".": False, ",": False, "-": True, "(": True}


@pytest.mark.parametrize("model_and_tokenizer", ["bart", "wordpiece_bart"])
@pytest.mark.parametrize("beams", [1, 3])
@pytest.mark.parametrize("bounds", [(6, 9), (12, 14), (1, 3)])
def test_the_word_count_lands_in_the_bounds(model_and_tokenizer, beams, bounds, request):
    model, tokenizer = request.getfixturevalue(model_and_tokenizer)
    rules = [DecodingRules(*bounds), DecodingRules(*bounds)]
    inputs = tokenizer(DOCS, return_tensors="pt", padding=True)
    kwargs = rule_kwargs(tokenizer, rules, DOCS, max_new_tokens=8, split=sentences)
    output = model.generate(**inputs, num_beams=beams, **kwargs)
    counts = [len(t.split()) for t in tokenizer.batch_decode(output, skip_special_tokens=True)]
    assert all(bounds[0] <= c <= bounds[1] for c in counts), counts
    unconstrained = model.generate(**inputs, num_beams=beams, max_new_tokens=kwargs["max_new_tokens"])
    free = [len(t.split()) for t in tokenizer.batch_decode(unconstrained, skip_special_tokens=True)]
    assert free != counts or all(bounds[0] <= c <= bounds[1] for c in free)  # nothing to change only if already in


def test_a_missing_keyword_gains_probability_and_loses_the_bias_once_written(bart):
    model, tokenizer = bart
    processor = KeywordBiasLogitsProcessor(tokenizer, [DecodingRules(keywords=("profits",))], bias=4.0)
    first = tokenizer(" profits", add_special_tokens=False)["input_ids"][0]
    scores = torch.zeros(1, len(tokenizer))
    before = torch.tensor([[2, 0] + tokenizer(" Shares rose", add_special_tokens=False)["input_ids"]])
    biased = processor(before, scores.clone()).softmax(-1)
    assert (
        biased[0, first] > 40 * scores.softmax(-1)[0, first]
    )  # e^4 ≈ 55 times the odds, a little less after normalizing
    after = torch.tensor([[2, 0] + tokenizer(" profits rose", add_special_tokens=False)["input_ids"]])
    assert torch.equal(processor(after, scores.clone()), scores)


def test_the_document_sentence_that_holds_a_keyword_draws_the_summary_to_it(bart):
    """Bias on the path of the document's sentence that says the keyword: its first token where a summary
    sentence starts, and where the summary is copying it, the sentence's next token up to the keyword."""
    model, tokenizer = bart
    document = "Profits rose. The festival drew large crowds to the city. Crowds are large."
    processor = KeywordBiasLogitsProcessor(
        tokenizer, [DecodingRules(keywords=("crowds",))], bias=4.0, documents=[document]
    )

    def ids(text):
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    scores = torch.zeros(1, len(tokenizer))
    at_start = processor(torch.tensor([[2, 0] + ids(" Profits rose.")]), scores.clone())
    assert at_start[0, ids(" The")[0]] == 4.0  # the first held sentence's first token
    assert at_start[0, ids(" Crowds")[0]] == 4.0  # the second's first token (and the keyword's capitalized form)
    assert at_start[0, ids(" drew")[0]] == 0.0
    copying = processor(torch.tensor([[2, 0] + ids(" Profits rose. The festival drew")]), scores.clone())
    assert copying[0, ids(" large")[0]] == 4.0  # "festival drew" -> "large", on the way to "crowds"
    assert copying[0, ids(" The")[0]] == 0.0  # mid-sentence: no sentence start biased
    past = processor(torch.tensor([[2, 0] + ids(" The festival drew large crowds to")]), scores.clone())
    assert torch.equal(past, scores)  # the keyword is in: no bias, and none past it on the path


def test_preferred_sentences_are_biased_along_their_path(bart):
    """``DecodingRules.prefer`` picks document sentences; a summary sentence start gets their first
    tokens, a summary copying one its next token; a row that prefers nothing is left as it is."""
    from variants.rule_processors import SentencePathLogitsProcessor

    model, tokenizer = bart
    document = "Profits rose sharply. The festival drew large crowds to the city."
    last = lambda sents: sents[-1:]  # noqa: E731 - the rule: the document's last sentence
    processor = SentencePathLogitsProcessor(
        tokenizer, [DecodingRules(prefer=last, prefer_bias=2.5), DecodingRules()], [document, document]
    )
    ids = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    scores = torch.zeros(2, len(tokenizer))
    at_start = processor(torch.tensor([[2, 0] + ids(" Shares fell."), [2, 0] + ids(" Shares fell.")]), scores.clone())
    assert at_start[0, ids(" The")[0]] == 2.5 and at_start[0, ids(" Profits")[0]] == 0.0
    assert torch.equal(at_start[1], scores[1])
    copying = processor(torch.tensor([[2, 0] + ids(" The festival drew")] * 2), scores.clone())
    assert copying[0, ids(" large")[0]] == 2.5 and copying[0, ids(" The")[0]] == 0.0


def test_ccs_prefers_the_common_worded_sentences_for_high_readability_and_nothing_for_a_focus():
    from variants.ccs.baseline import commonness, preferred_sentences, sentence_rank

    sents = [
        "We propose a new method for learning.",
        "It is simple and works well.",
        "Our experiments on ten datasets show gains of five points over strong baselines in every setting.",
        "The heteroscedastic posterior factorizes.",
    ]
    common = commonness(sents)
    # "It is simple and works well": every word common (Zipf >= 4); "heteroscedastic posterior factorizes":
    # of its four words only "the" is
    assert common[1] == 1.0 and common[3] == 0.25
    assert preferred_sentences(sents, "high") == [s for s, c in zip(sents, common) if c >= sorted(common)[-2]]
    assert sents[1] in preferred_sentences(sents, "high") and sents[3] not in preferred_sentences(sents, "high")
    assert preferred_sentences(sents, "normal") == [] and sentence_rank(sents, None) == [0, 1, 2, 3]
    assert sentence_rank(sents, "high")[0] == 1 and sentence_rank(sents, "high")[-1] == 3
    ccs = get_variant("ccs")
    assert ccs.constraints({"focus": "empirical", "length": 0}).prefer is None  # focus is left to the model
    assert ccs.constraints({"readability": "high"}).prefer(sents) == preferred_sentences(sents, "high")


def test_ccs_rules_read_no_metric_part(monkeypatch):
    """Swap the metric's parts (the FKGL function ΔFKGL is computed with, the focus judge, the cue rule
    that cut the focus targets) for ones that fail: the decoder's constraints and the baseline's
    extract do not change, so no rule reads them."""
    import metrics.ccs
    import metrics.focus_classifier
    import metrics.focus_labels

    ccs = get_variant("ccs")
    document = (
        "We propose a new framework for learning sparse codes. It is simple and works well. Our experiments "
        "on ten datasets show gains of five points over strong baselines. The heteroscedastic posterior "
        "factorizes into conjugate parts. Results hold across seeds."
    )
    controls = {"length": 0, "keywords": ["codes"], "readability": "high", "focus": "empirical"}
    before = (ccs.constraints(controls).prefer(sentences(document)), ccs.baseline().summarize([document], [controls]))

    def swapped(*args, **kwargs):
        raise AssertionError("a decoding rule or the baseline read a metric's part")

    for module, name in (
        (metrics.ccs, "fkgl"),
        (metrics.focus_classifier, "default_focus_classifier"),
        (metrics.focus_labels, "rule_focus"),
        (metrics.focus_labels, "position_parts"),
    ):
        monkeypatch.setattr(module, name, swapped)
    import variants.ccs as ccs_module

    monkeypatch.setattr(ccs_module, "fkgl", swapped)  # the name the variant imported, for its score
    after = (ccs.constraints(controls).prefer(sentences(document)), ccs.baseline().summarize([document], [controls]))
    assert after[0] == before[0] and [s.text for s in after[1]] == [s.text for s in before[1]]


def test_keywords_are_written_and_keep_the_end_of_sequence_waiting(bart):
    model, tokenizer = bart
    rules = [DecodingRules(keywords=("profits",)), DecodingRules(keywords=("director", "Cannes"))]
    inputs = tokenizer(DOCS, return_tensors="pt", padding=True)
    plain = tokenizer.batch_decode(model.generate(**inputs, max_new_tokens=24), skip_special_tokens=True)
    output = model.generate(**inputs, **rule_kwargs(tokenizer, rules, DOCS, max_new_tokens=24, split=sentences))
    texts = tokenizer.batch_decode(output, skip_special_tokens=True)
    assert [missing(t, r.keywords) for t, r in zip(plain, rules)] != [[], []]
    assert [missing(t, r.keywords) for t, r in zip(texts, rules)] == [[], []]


def test_a_written_keyword_holds_the_end_until_its_sentence_is_finished(bart):
    # The stored entity model ended right after the asked name ("... profits at owner France Telecom"): the
    # end waited for the name, then came at once. Once the keyword is in, the end waits for a full stop.
    from variants.decoding_rules import sentence_finished
    from variants.rule_processors import WordBoundsLogitsProcessor

    _, tokenizer = bart
    texts = ["Shares rose on profits", "Shares rose on profits.", "Shares rose", 'He said "profits rose."']
    rows = [tokenizer(t)["input_ids"] for t in texts]
    width = max(map(len, rows))
    input_ids = torch.tensor([r + [tokenizer.pad_token_id] * (width - len(r)) for r in rows])
    rules = [DecodingRules(keywords=("profits",))] * len(texts)
    processor = WordBoundsLogitsProcessor(tokenizer, rules, max_new_tokens=32)
    scores = processor(input_ids, torch.zeros(len(texts), len(tokenizer)))
    ended = torch.isfinite(scores[:, tokenizer.eos_token_id]).tolist()
    assert ended == [False, True, False, True]  # unfinished, finished, keyword missing, finished in a quote
    assert [sentence_finished(t) for t in texts] == [False, True, False, True] and not sentence_finished("")
    unruled = WordBoundsLogitsProcessor(tokenizer, [DecodingRules(min_words=1)] * len(texts), max_new_tokens=32)
    assert torch.isfinite(unruled(input_ids, torch.zeros(len(texts), len(tokenizer)))[:, tokenizer.eos_token_id]).all()


def test_token_budget_and_tokens_per_word_by_hand(bart):
    _, tokenizer = bart
    rate = tokens_per_word(tokenizer, ["profits grew"])
    assert rate == len(tokenizer("profits grew", add_special_tokens=False)["input_ids"]) / 2
    # max 100 words at 1.5 tokens a word with 1.3 slack: ceil(195) + 4 = 199; default 128 is lower
    assert token_budget([DecodingRules(51, 100)], 1.5, 128) == 199
    assert token_budget([DecodingRules(1, 50)], 1.5, 128) == 128
    # open-ended (last bin): its lower bound plus the default's worth of words
    assert token_budget([DecodingRules(201, None)], 1.0, 100) == math.ceil((201 + 100) * 1.3) + 4
    with pytest.raises(ValueError, match="min_words 9 exceeds max_words 3"):
        DecodingRules(9, 3)


def test_ccs_bins_become_the_metrics_word_bounds():
    ccs = get_variant("ccs")
    for b in range(5):
        c = ccs.constraints({"length": b, "keywords": ["bank"]})
        assert c.keywords == ("bank",)
        assert length_bin(" ".join(["w"] * c.min_words)) == b
        if c.max_words is not None:
            assert length_bin(" ".join(["w"] * c.max_words)) == b
            assert length_bin(" ".join(["w"] * (c.max_words + 1))) == b + 1
    assert ccs.constraints({"length": 4}).max_words is None and ccs.constraints({}).empty


def test_a_ccs_summarizer_obeys_the_bin_with_constraints_on():
    tokenizer = tiny_t5_tokenizer()
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(tiny_t5_config(tokenizer, initializer_factor=3.0)).eval()
    summarizer = Seq2SeqSummarizer(
        get_variant("ccs"), "tiny", "prompt", model, tokenizer, None, {"max_target_length": 16, "num_beams": 2}
    )
    controls = [{"length": 1, "keywords": ["bank"]}, {"length": 0, "keywords": ["festival"]}]
    settings = GenerationSettings(num_beams=2, max_new_tokens=16, constraints=True)
    summaries = summarizer.summarize(DOCS, controls, settings=settings)
    assert [length_bin(s.text) for s in summaries] == [1, 0]
    assert [missing(s.text, tuple(c["keywords"])) for s, c in zip(summaries, controls)] == [[], []]


def test_a_length_bins_token_budget_stops_at_the_decoders_last_position():
    """The open last length bin (201+ words) asks for more tokens than BART has positions (512): the
    budget is capped there; T5's relative positions have no such limit."""
    import math
    from types import SimpleNamespace

    from variants.decoding import decoder_room

    budget = token_budget([DecodingRules(min_words=201)], rate=1.4, default=192)
    assert budget > 511  # what the bin alone would ask for
    assert min(budget, decoder_room(SimpleNamespace(config=SimpleNamespace(max_position_embeddings=512)))) == 511
    assert decoder_room(SimpleNamespace(config=SimpleNamespace())) == math.inf
