"""The document-names rule (variants/text_rules.py ``DocumentNamesLogitsProcessor``): a name of one token is one the
document writes, a name the document writes only as a longer word's start goes on, and a name after a name comes
only as the document writes the two. Its names (training/name_words.py) come from a corpus's capitalisation. By
hand on MiniLM's WordPiece tokenizer (as stored), and on a tiny random BART that writes a name the document lacks."""

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BartForConditionalGeneration, GenerationConfig, LogitsProcessor

from training.name_words import capitalisation, name_words, training_documents
from variants.base import write_record
from variants.decoding import generate
from variants.decoding_rules import DOCUMENT_NAMES, NAME_WORDS
from variants.presets import tiny_bart_config
from variants.seq2seq import GenerationSettings, save_generation_defaults
from variants.text_rules import DocumentNamesLogitsProcessor

WORDPIECE = Path(__file__).resolve().parents[1] / "store" / "models" / "general"  # MiniLM's tokenizer, as stored
DOCUMENT = "Jason Scott beat Alan Smith and Anna-Lena Groenefeld in London."
NAMES = ("alan", "jason", "scott", "smith", "london", "paris", "gogh", "gr")


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(WORDPIECE)


@pytest.fixture(scope="module")
def names(tokenizer):
    assert tokenizer.tokenize("groenefeld")[0] == "gr"  # the case of a name that starts a longer word
    return tokenizer.convert_tokens_to_ids(list(NAMES))


def kept(tokenizer, rule, text: str) -> set[str]:
    """The tokens the rule leaves after ``text`` (random scores, which the kept tokens keep)."""
    row = torch.tensor([[tokenizer.sep_token_id] + tokenizer.encode(text, add_special_tokens=False)])
    scores = torch.randn(1, len(tokenizer))
    out = rule(row, scores)
    assert torch.equal(out[torch.isfinite(out)], scores[torch.isfinite(out)])
    return set(tokenizer.convert_ids_to_tokens(torch.isfinite(out[0]).nonzero().flatten().tolist()))


def test_a_name_is_the_documents_and_follows_a_name_as_the_document_writes_them_by_hand(tokenizer, names):
    rule = DocumentNamesLogitsProcessor(tokenizer, [DOCUMENT], names)
    free = kept(tokenizer, rule, "he beat")
    assert len(free) == len(tokenizer) - 2 and not {"paris", "gogh"} & free  # the two names the document lacks
    assert {"alan", "london", "gr", "the", "beat"} <= free
    assert {"smith", "the"} <= kept(tokenizer, rule, "alan") and "scott" not in kept(tokenizer, rule, "alan")
    assert "scott" in kept(tokenizer, rule, "jason") and "smith" not in kept(tokenizer, rule, "jason")
    after_gr = kept(tokenizer, rule, "he beat gr")  # "gr" alone is no word of the document's: a piece goes on
    assert "##oe" in after_gr and not {"the", "alan", ".", "in"} & after_gr
    after_name = kept(tokenizer, rule, "he beat groenefeld")  # a name the document follows by no name: none follows
    assert not set(NAMES) & after_name and {"in", "and", "the"} <= after_name
    only_paris = torch.full((1, len(tokenizer)), -float("inf"))
    only_paris[0, tokenizer.convert_tokens_to_ids("paris")] = 0.0  # another rule leaves only "paris": it gives way
    row = torch.tensor([[tokenizer.sep_token_id] + tokenizer.encode("he beat", add_special_tokens=False)])
    assert torch.equal(rule(row, only_paris), only_paris)


def test_names_are_the_words_a_corpus_capitalises_mid_sentence_more_often_than_not(tokenizer):
    texts = [
        'Yesterday Alan met the world in London. London is big and "Paris" is far.',
        "He saw Alan and London again, the world over.\nWorld news: Gogh once in Gogh.",
    ]
    capitalised, lower = capitalisation(texts)
    # by hand: mid-sentence, "Alan" twice, "London" twice ("London is" starts a sentence), "Gogh" once ("Gogh
    # once" follows a colon); "world" twice in lower case; "Paris" opens a quote, "Yesterday" and "He" a paragraph
    assert (capitalised["alan"], capitalised["london"], capitalised["gogh"], lower["world"]) == (2, 2, 1, 2)
    assert not {"paris", "yesterday", "he", "world"} & set(capitalised)
    names = set(tokenizer.convert_ids_to_tokens(name_words(tokenizer, texts)))
    written = {"alan", "london", "gogh", "world", "paris", "the", "he", "yesterday", "saw", "met", "in", "is"}
    assert names & written == {"alan", "london"}  # "Gogh" once is too few
    assert "gogh" in tokenizer.convert_ids_to_tokens(name_words(tokenizer, texts, least=1))
    # a word of the vocabulary the corpus never writes is bound too ("fra" of "Fratton"); no piece, mark or letter
    assert {"fra", "gr"} <= names
    assert not {"##us", "i", "a", ".", "[SEP]", "£"} & names


def test_training_documents_are_distinct_and_a_bad_line_is_named(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(json.dumps({"document": d}) for d in ["a", "b", "a"]) + '\n{"text": "c"}\n')
    with pytest.raises(ValueError, match=r"train.jsonl:4: an example without a 'document'"):
        training_documents(train)
    train.write_text("\n".join(json.dumps({"document": d}) for d in ["a", "b", "a"]))
    assert training_documents(train) == ["a", "b"]


class WritesAName(LogitsProcessor):
    """A model's wish, in place of a trained one's: "paris" from the second token on."""

    def __init__(self, token: int, start: int):
        self.token, self.start = token, start

    def __call__(self, input_ids, scores):
        scores = scores.clone()
        if input_ids.shape[1] - self.start >= 1:
            scores[:, self.token] = scores.max() + 50
        return scores


def test_generation_with_the_rule_writes_no_name_the_document_lacks(tokenizer, names):
    torch.manual_seed(0)
    model = BartForConditionalGeneration(tiny_bart_config(tokenizer)).eval()
    batch = tokenizer([DOCUMENT], return_tensors="pt")
    paris = tokenizer.convert_tokens_to_ids("paris")

    def row(**switches):
        kwargs = dict(max_new_tokens=8, num_beams=2, tokenizer=tokenizer, documents=[DOCUMENT])
        with torch.inference_mode():
            out = generate(model, **batch, logits_processor=[WritesAName(paris, 1)], **kwargs, **switches)
        return out[0].tolist()

    with pytest.raises(ValueError, match="document_names is on, but the generation config lists no name_words"):
        row(document_names=True)
    setattr(model.generation_config, NAME_WORDS, names)
    free, ruled = row(document_names=False), row(document_names=True)
    assert paris in free and paris not in ruled, (free, ruled)
    setattr(model.generation_config, DOCUMENT_NAMES, True)  # the served default, from the generation config
    assert row() == ruled and row(constraints=False) == free


def test_the_rule_reads_no_metric_part(tokenizer, names, monkeypatch):
    """has_unsupported (metrics.quality) is what the rule is chosen for: the rule reads none of its judges."""
    import metrics.quality

    before = kept(tokenizer, DocumentNamesLogitsProcessor(tokenizer, [DOCUMENT], names), "alan")
    for name in ("quality", "unsupported", "summary_facts", "capitalised_names"):
        monkeypatch.setattr(metrics.quality, name, lambda *a, **k: pytest.fail("the rule read a metric"))
    assert kept(tokenizer, DocumentNamesLogitsProcessor(tokenizer, [DOCUMENT], names), "alan") == before


def test_the_settings_carry_the_rule_and_the_config_alone_its_names(tmp_path):
    served = GenerationSettings.from_record({DOCUMENT_NAMES: True})
    assert served.document_names and not served.alone().document_names
    write_record(tmp_path, {"variant": "topic"})
    save_generation_defaults(tmp_path, **{DOCUMENT_NAMES: True, NAME_WORDS: [5, 7]})
    config = GenerationConfig.from_pretrained(tmp_path)
    assert getattr(config, DOCUMENT_NAMES) is True and getattr(config, NAME_WORDS) == [5, 7]
    record = json.loads((tmp_path / "steersum.json").read_text())
    assert record[DOCUMENT_NAMES] is True and NAME_WORDS not in record  # token ids are the config's alone
