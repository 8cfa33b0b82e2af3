"""A document longer than the model's source limit, read whole: split into windows of whole sentences
(``models.windows.source_windows``, one definition for the Space and the exported processor), each
encoded alone, the decoder attending to all (``variants.decoding.fuse_windows``), and an exported folder
writing what the Space serves from the same windows."""

import json
import uuid

import pytest
import torch
from test_decoding import SERVED, exported
from test_guidance import DOCS, summarizer_of, topic_case

from models.windows import pad_windows, source_windows
from variants.decoding import fuse_windows
from variants.presets import tiny_tokenizer
from variants.seq2seq import GenerationSettings

# the articles one after the other: six and four sentences
LONG = [f"{DOCS[0]} {DOCS[1]} {DOCS[0]}", f"{DOCS[1]} {DOCS[0]}"]


def words(text: str) -> int:
    return len(text.split()) + 2  # a prefix of two tokens, as a prepended control gives


def test_windows_are_runs_of_whole_sentences_that_fit():
    document = "A b c. D e! F g h i? J. K l m n o p q."
    # by hand: "A b c. D e!" is 5 words + 2 = 7 <= 8; adding "F g h i?" makes 11; "F g h i? J." is 8
    assert source_windows(document, words, 8, most=5) == (["A b c. D e!", "F g h i? J.", "K l m n o p q."], True)
    # the last sentence alone is 7 words + 2 = 9 > 8: a run of its own, cut, so something is left out
    assert source_windows(document, words, 9, most=5) == (["A b c. D e!", "F g h i? J.", "K l m n o p q."], False)
    assert source_windows(document, words, 9, most=2) == (["A b c. D e!", "F g h i? J."], True)  # the rest left out
    assert source_windows(document, words, 40, most=5) == ([document], False)  # it fits: the document itself
    assert source_windows(document, words, 9, most=1) == ([document], True)  # one window: cut, as before
    # picking reads one of the longest runs that fit from each sentence on, by hand at 9 tokens: "A b c. D e!",
    # "D e! F g h i? J." (7 words + 2), "F g h i? J.", "J." (the next sentence would make 10), "K l m n o p q."
    scores = {"A b c. D e!": 0.2, "D e! F g h i? J.": 0.5, "F g h i? J.": 0.3, "J.": 0.1, "K l m n o p q.": 0.45}
    seen = []
    assert source_windows(document, words, 9, 5, lambda run: seen.append(run) or scores[run], ratio=2) == (
        ["D e! F g h i? J."],  # 0.5 > 2 x 0.2: a run across two of the windows above
        True,
    )
    assert seen == list(scores)
    assert source_windows(document, words, 9, 5, scores.get, ratio=2.5) == (["A b c. D e!"], True)  # 0.5 = 2.5 x 0.2
    assert source_windows(document, words, 40, 5, scores.get) == ([document], False)  # it fits: nothing to pick


def test_padding_windows_are_masked_and_one_window_each_is_the_usual_batch():
    tokenizer = tiny_tokenizer()
    batch = pad_windows(tokenizer, [[[5, 6, 7], [8, 9]], [[10, 11]]], return_tensors="pt")
    assert batch["input_ids"].shape == (2, 2, 3)
    assert batch["attention_mask"].tolist() == [[[1, 1, 1], [1, 1, 0]], [[1, 1, 0], [0, 0, 0]]]
    plain = pad_windows(tokenizer, [[[5, 6, 7]], [[10, 11]]], return_tensors="pt")
    assert plain["input_ids"].shape == (2, 3) and plain["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]


def test_the_decoder_reads_every_windows_own_encoding_end_to_end():
    summarizer, _ = summarizer_of("topic", "prepend-tag", topic_case)
    model, tokenizer = summarizer.model, summarizer.tokenizer
    ids = tokenizer(["shares rose", "the bank", "the film won"])["input_ids"]
    windows = [[ids[0], ids[1]], [ids[2]]]
    batch = pad_windows(tokenizer, windows, return_tensors="pt")
    fused, mask = fuse_windows(model, batch["input_ids"], batch["attention_mask"])
    encoder = model.get_encoder()
    with torch.inference_mode():
        alone = [[encoder(input_ids=torch.tensor([w])).last_hidden_state[0] for w in source] for source in windows]
    first, second = len(ids[0]) + len(ids[1]), len(ids[2])  # the windows' tokens end to end, no padding between
    assert mask.tolist() == [[1] * first, [1] * second + [0] * (first - second)] and first > second
    torch.testing.assert_close(fused.last_hidden_state[0], torch.cat(alone[0]), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fused.last_hidden_state[1, :second], alone[1][0], atol=1e-5, rtol=1e-5)


def test_a_long_document_is_read_in_windows_with_no_notice_and_the_setting_is_checked():
    summarizer, controls = summarizer_of("topic", "prepend-tag", topic_case)
    summarizer.max_source_length = 32  # every sentence fits, no article does
    cut = summarizer.summarize(LONG, controls, settings=SERVED)
    read = summarizer.summarize(LONG, controls, settings=SERVED.but(source_windows=8))
    assert all("truncated" in " ".join(s.notices) for s in cut)
    assert not any("truncated" in " ".join(s.notices) for s in read)
    assert SERVED.but(source_windows=8).alone().source_windows == 8  # how the model reads, not a rule
    with pytest.raises(ValueError, match="source_windows must be a positive integer, got 0"):
        GenerationSettings(source_windows=0)


@pytest.mark.parametrize("method", ["prepend-tag", "emb"])
def test_an_exported_folder_reads_the_windows_the_space_reads_and_writes_the_same(method, tmp_path):
    from transformers import AutoModelForSeq2SeqLM, AutoProcessor

    summarizer, controls = summarizer_of("topic", method, topic_case)
    summarizer.max_source_length = 32  # every sentence fits, no article does
    out = exported(summarizer, tmp_path / f"windows-{method}-{uuid.uuid4().hex[:12]}")
    for name, field in (("processor_config.json", "source_windows"), ("generation_config.json", "source_windows")):
        config = json.loads((out / name).read_text())
        (out / name).write_text(json.dumps({**config, field: 8}))
    processor = AutoProcessor.from_pretrained(out, trust_remote_code=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(out, trust_remote_code=True)
    got = []
    for document, given in zip(LONG, controls):
        inputs = processor(document, given, return_tensors="pt")
        assert inputs["input_ids"].dim() == 3 and inputs["input_ids"].shape[1] > 1  # windows
        assert inputs["unconditional_input_ids"].shape[:2] == inputs["input_ids"].shape[:2]  # the same windows
        assert processor.notices == [[]]  # nothing cut
        with torch.inference_mode():
            output = model.generate(**inputs)
        got.append(processor.decode(output[0], skip_special_tokens=True))
    served = SERVED.but(source_windows=8)
    assert got == [summarizer.summarize([d], [c], settings=served)[0].text for d, c in zip(LONG, controls)]


def test_a_picked_window_is_the_one_the_topics_tagger_marks_most_in_the_space_and_the_repo(tmp_path):
    from transformers import AutoProcessor

    from models.topic_bart.processing_topic_bart import TAG

    summarizer, controls = summarizer_of("topic", "prepend-tag", topic_case)
    summarizer.max_source_length = 32
    picking = SERVED.but(source_windows=8, window_mode="pick")
    summarizer.settings = picking
    out = exported(summarizer, tmp_path / f"pick-{uuid.uuid4().hex[:12]}")
    for name in ("processor_config.json", "generation_config.json"):
        config = json.loads((out / name).read_text())
        (out / name).write_text(json.dumps({**config, "source_windows": 8, "window_mode": "pick"}))
    processor = AutoProcessor.from_pretrained(out, trust_remote_code=True)
    business = {"topic": "business"}
    windows, _ = processor.parts(LONG[0], lambda text: processor.prepare(text, business))
    assert len(windows) == 1 and windows[0] in LONG[0]
    # by hand: the share of [TAG]-marked words of every sentence window, the highest one's is picked
    sentences = LONG[0].replace(". ", ".\n").split("\n")
    shares = [processor.prepare(s, business)[0].count(TAG) / 2 / len(s.replace(".", " ").split()) for s in sentences]
    assert max(shares) > min(shares) and windows[0] == sentences[shares.index(max(shares))]
    assert summarizer.variant.relevance(windows[0], business, summarizer.assets) == pytest.approx(max(shares))
    inputs = processor(LONG[0], business, return_tensors="pt")
    assert inputs["input_ids"].dim() == 2  # one window: the usual batch
    assert picking.alone().source_windows == 1  # the model alone reads the first window, as trained
    served = summarizer.summarize([LONG[0]], [business], settings=picking)[0]
    words = len(windows[0].split()), len(LONG[0].split())
    assert (
        served.notices
        == processor.notices[0]
        == [
            "the input was longer than the model's limit of 32 tokens and was truncated: the model read "
            f"{words[0]} of its {words[1]} words, the run of whole sentences its controls pick (the start, unless a "
            "later run matches them clearly better)"
        ]
    )
    assert (
        served.text == summarizer.summarize([windows[0]], [business], settings=picking.but(source_windows=1))[0].text
    )
