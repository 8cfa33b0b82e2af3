"""Generation where users wait: one settings object for evaluation, the leaderboard and the
Space; batches sorted by source length with outputs back in the caller's order; bf16 checked
against fp32; the topic tagger's one-pass expression equal to the word-by-word rule."""

import shutil
from unittest import mock

import pytest

import metrics.terms
from metrics.io import read_jsonl
from metrics.terms import term
from metrics.text import WORD, lemma
from variants.base import Summarizer, Summary
from variants.seq2seq import GenerationSettings, by_length, cpu_has_bf16
from variants.topic import TAG, Tagger, default_assets, tag_document, tag_words


# --- the settings object ----------------------------------------------------------------------
def test_settings_come_from_the_checkpoint_record_and_check_their_values():
    settings = GenerationSettings.from_record({"max_target_length": 32, "num_beams": 2})
    assert GenerationSettings.from_record({"dtype": "int8-weights"}).dtype == "int8-weights"  # a stored model's own
    assert (settings.max_new_tokens, settings.num_beams, settings.early_stopping) == (32, 2, True)
    assert settings.generate_kwargs() == {"max_new_tokens": 32, "num_beams": 2, "early_stopping": True}
    assert "early_stopping" not in settings.but(num_beams=1).generate_kwargs()  # greedy: nothing to stop early
    assert settings.but(batch_size=None) == settings  # None leaves a field as it is
    with pytest.raises(
        ValueError, match="dtype must be one of auto, bfloat16, float32, int8, int8-weights, got 'fp16'"
    ):
        GenerationSettings(dtype="fp16")
    with pytest.raises(ValueError, match="batch_size must be a positive integer, got 0"):
        GenerationSettings(batch_size=0)


def test_batches_hold_the_longest_sources_first():
    assert by_length([3, 9, 1, 7, 5], 2) == [[1, 3], [4, 0], [2]]
    assert by_length([], 4) == []


class Recorder(Summarizer):
    """A summarizer that records how it is called: the summary of a document is its first word."""

    variant = None

    def __init__(self, settings: GenerationSettings):
        self.settings, self.calls, self.name, self.method = settings, [], "recorder", "none"

    def summarize(self, documents, controls, **overrides):
        self.calls.append((len(documents), overrides))
        return [Summary(d.split()[0]) for d in documents]


def test_evaluation_and_the_space_generate_with_the_summarizers_own_settings():
    from space.batching import generate
    from training.evaluate import evaluate

    recorder = Recorder(GenerationSettings(batch_size=3))
    recorder.variant = mock.Mock(
        score=lambda *a: {},
        evaluation=mock.Mock(
            metric_names=(), corpus_scores=lambda *a: {}, breakdown=lambda rows: {}, report_extras=lambda *a: {}
        ),
        id="fake",
    )
    records = [{"id": str(i), "document": f"d{i} " + "x " * i, "controls": {}, "target": ""} for i in range(7)]
    report = evaluate(recorder, records, "data.jsonl")
    assert [n for n, _ in recorder.calls] == [3, 3, 1] and all(o == {"batch_size": 3} for _, o in recorder.calls)
    assert [row["summary"] for row in report["examples"]] == [f"d{i}" for i in range(7)]  # the file's order
    recorder.calls.clear()
    generate(recorder, ["a b", "c d"], [{}, {}])  # the Space's batched call: no overrides, the model's settings
    assert recorder.calls == [(2, {})]


def test_the_leaderboard_and_the_evaluate_cli_default_to_the_models_settings():
    import inspect

    from benchmarks.leaderboard import cli, harness
    from training.evaluate import evaluate

    assert inspect.signature(harness.run).parameters["batch_size"].default is None
    assert inspect.signature(evaluate).parameters["batch_size"].default is None
    with mock.patch.object(harness, "run", return_value=None) as run:
        cli.main(["--out", "x"])
    assert run.call_args.args[5] is None


# --- sorted batching and bf16 on a tiny model ------------------------------------------------
@pytest.fixture(scope="module")
def tiny(tiny_topic_checkpoint, tmp_path_factory):
    from variants import load_summarizer

    folder = tmp_path_factory.mktemp("gen") / "topic-tiny"
    shutil.copytree(tiny_topic_checkpoint, folder)
    return load_summarizer(folder)


@pytest.fixture(scope="module")
def documents(data_dir):
    records = read_jsonl(data_dir / "bbc_summary" / "test.jsonl")[:5]
    short = "Shares in the bank fell after profits dropped."
    return [r["source"][: 300 * (i + 1)] for i, r in enumerate(records)] + [short], [
        {"topic": r["topic"]} for r in records
    ] + [{"topic": "business"}]


def test_sorted_batches_give_each_document_its_own_summary_in_input_order(tiny, documents):
    docs, controls = documents
    settings = tiny.settings.but(max_new_tokens=8, num_beams=2)
    alone = [tiny.summarize([d], [c], settings=settings.but(batch_size=1))[0].text for d, c in zip(docs, controls)]
    batched = [s.text for s in tiny.summarize(docs, controls, settings=settings.but(batch_size=4))]
    assert batched == alone  # shortest and longest mixed in the input; padding changes nothing
    reversed_ = [s.text for s in tiny.summarize(docs[::-1], controls[::-1], settings=settings.but(batch_size=4))]
    assert reversed_ == alone[::-1]


def test_the_lm_head_computes_faster_only_while_generating_with_the_same_logits(tiny, documents):
    import torch

    from variants.speedups import LMHead, fast_lm_head

    model, head = tiny.model, tiny.model.get_output_embeddings()
    batch = tiny.tokenizer(documents[0][:2], return_tensors="pt", padding=True)
    with torch.inference_mode():
        plain = model(**batch, decoder_input_ids=batch["input_ids"][:, :5]).logits
        with fast_lm_head(model):
            assert type(head) is LMHead and head.weight is model.get_input_embeddings().weight  # still tied
            fast = model(**batch, decoder_input_ids=batch["input_ids"][:, :5]).logits
    assert type(head) is torch.nn.Linear  # what callers see and save: a standard model
    assert torch.allclose(plain, fast, atol=1e-5) and fast.shape == plain.shape  # the same sums, another order
    with pytest.raises(RuntimeError, match="inside"), fast_lm_head(model):
        raise RuntimeError("inside")
    assert type(head) is torch.nn.Linear  # given back on an error too


def test_beam_search_reorders_only_the_self_attention_cache_and_finds_the_same_beams(tiny, documents):
    import torch
    from transformers.cache_utils import DynamicCache

    from variants.speedups import BeamSearchCache

    docs, _ = documents
    batch = tiny.tokenizer(docs[:3], return_tensors="pt", padding=True, truncation=True, max_length=64)
    search = {"num_beams": 3, "max_new_tokens": 8, "early_stopping": True, "no_repeat_ngram_size": 0}
    with torch.inference_mode():
        plain = tiny.model.generate(**batch, **search)  # transformers' own cache: both halves reordered
        cache = BeamSearchCache(DynamicCache(), DynamicCache())
        shared = tiny.model.generate(**batch, **search, past_key_values=cache)
    assert torch.equal(plain, shared)
    # What it rests on: an example's beams hold equal cross-attention states, so reordering them is a no-op.
    keys = cache.cross_attention_cache.layers[0].keys
    assert keys.shape[0] == 9 and all(torch.equal(keys[3 * e], keys[3 * e + b]) for e in range(3) for b in (1, 2))
    assert not torch.equal(keys[0], keys[3])  # different examples differ


@pytest.mark.skipif(not cpu_has_bf16(), reason="this CPU has no bf16 instructions (AVX512-BF16 or AMX)")
def test_bf16_autocast_gives_fp32s_greedy_tokens(tiny, documents):
    docs, controls = documents
    greedy = tiny.settings.but(max_new_tokens=8, num_beams=1, batch_size=6)
    fp32 = [s.text for s in tiny.summarize(docs, controls, settings=greedy.but(dtype="float32"))]
    bf16 = [s.text for s in tiny.summarize(docs, controls, settings=greedy.but(dtype="bfloat16"))]
    assert bf16 == fp32


def test_int8_generates_from_a_quantized_copy_built_once_and_leaves_the_model_as_it_was(tiny, documents):
    import torch
    from torch.ao.nn.quantized.dynamic import Linear as Int8Linear

    docs, controls = documents
    int8 = tiny.settings.but(max_new_tokens=8, num_beams=2, dtype="int8")
    copy = int8.model(tiny.model)
    assert copy is int8.model(tiny.model) and tiny.settings.model(tiny.model) is tiny.model  # fp32 default: itself
    assert isinstance(copy.lm_head, Int8Linear) and isinstance(tiny.model.lm_head, torch.nn.Linear)
    assert not any(isinstance(m, Int8Linear) for m in tiny.model.modules())
    batch = tiny.tokenizer(
        docs[:2], return_tensors="pt", padding=True, truncation=True, max_length=tiny.max_source_length
    )
    with torch.inference_mode():
        exact, approx = (
            m(**batch, decoder_input_ids=batch["input_ids"][:, :4]).logits.flatten() for m in (tiny.model, copy)
        )
    assert torch.nn.functional.cosine_similarity(exact, approx, dim=0) > 0.99  # int8 rounding, not other weights
    summaries = tiny.summarize(docs, controls, settings=int8)
    assert len(summaries) == len(docs) and all(isinstance(s, Summary) for s in summaries)


def test_int8_weights_hold_each_row_as_int8_times_its_scale_and_compute_what_fp32_does():
    import torch

    from variants.speedups import Int8WeightLinear

    torch.manual_seed(0)
    linear = torch.nn.Linear(64, 48)
    scale = torch.rand(48) / 100 + 1e-3
    integers = torch.randint(-127, 128, (48, 64))
    integers[:, 0] = 127  # every row reaches the extreme, so its scale is recovered exactly
    with torch.no_grad():
        linear.weight.copy_(integers * scale[:, None])
    quantized = Int8WeightLinear(linear)
    assert torch.equal(quantized.weight_int8, integers.to(torch.int8))  # the compact format, read back exactly
    x = torch.randn(2, 3, 64)
    exact, approx = linear(x), quantized(x)
    assert approx.shape == exact.shape and approx.dtype == torch.float32
    assert torch.allclose(approx, exact, rtol=0.02, atol=0.02 * exact.abs().max().item())  # bf16 activations only


def test_int8_weights_copy_quantizes_the_decoder_and_head_only_and_leaves_the_model_as_it_was(tiny, documents):
    import torch

    from variants.speedups import Int8WeightLinear

    docs, controls = documents
    settings = tiny.settings.but(max_new_tokens=8, num_beams=2, dtype="int8-weights")
    copy = settings.model(tiny.model)
    assert copy is settings.model(tiny.model)  # built once
    assert isinstance(copy.get_output_embeddings(), Int8WeightLinear)
    assert any(isinstance(m, Int8WeightLinear) for m in copy.get_decoder().modules())
    assert not any(isinstance(m, Int8WeightLinear) for m in copy.get_encoder().modules())  # runs once a request
    assert not any(isinstance(m, Int8WeightLinear) for m in tiny.model.modules())
    batch = tiny.tokenizer(
        docs[:2], return_tensors="pt", padding=True, truncation=True, max_length=tiny.max_source_length
    )
    with torch.inference_mode():
        exact, approx = (
            m(**batch, decoder_input_ids=batch["input_ids"][:, :4]).logits.flatten() for m in (tiny.model, copy)
        )
    assert torch.nn.functional.cosine_similarity(exact, approx, dim=0) > 0.99
    summaries = tiny.summarize(docs, controls, settings=settings)
    assert len(summaries) == len(docs) and all(isinstance(s, Summary) for s in summaries)


def test_bf16_is_refused_clearly_on_a_cpu_without_it():
    with mock.patch("variants.seq2seq.cpu_has_bf16", return_value=False):
        with pytest.raises(RuntimeError, match="no bf16 instructions"):
            GenerationSettings(dtype="bfloat16").autocast("cpu")
        assert GenerationSettings(dtype="auto").autocast("cpu").__class__.__name__ == "nullcontext"


# --- tagging: the one-pass expression equals the word-by-word rule -----------------------------
EDGE_CASES = [
    "The bank's profits and the banks' shares: BANKS, Banking, banked.",
    "Rock'n'roll markets, it's9 markets, dog'9 market, rock'n9 market and 'market' in quotes.",
    "Curly ’market’ and market’s share; İstanbul markets, ſhares, \u212aelvin markets, \u0131nc markets.",
    "market2004 2004 markets-based co-operation e-mail market.market.",
    "",
]


def nltk_word_by_word(document: str, terms: frozenset[str]) -> str:
    """The naive way: each WORD token lemmatized by NLTK's WordNet on every occurrence (no caches)."""
    with mock.patch.object(metrics.terms, "lemma", lemma.__wrapped__):
        return WORD.sub(
            lambda m: f"{TAG} {m.group(0)} {TAG}" if term.__wrapped__(m.group(0).lower()) in terms else m.group(0),
            document,
        )


def test_tagging_fast_path_equals_the_word_by_word_nltk_way(data_dir):
    assets = default_assets()
    articles = [r["source"] for r in read_jsonl(data_dir / "bbc_summary" / "train.jsonl")[:40]]
    for topic in assets.space.topics[:2]:
        terms = assets.terms(topic) | {"market", "share", "bank"}
        tagger = Tagger(terms)  # a fresh one: its forms grow as the articles go by
        for document in EDGE_CASES + articles:
            assert tagger(document) == tag_words(document, terms) == nltk_word_by_word(document, terms)
        assert tag_document(articles[0], terms) == tag_words(articles[0], terms)


def test_a_word_first_seen_later_is_tagged_by_the_lemma_rule():
    tagger = Tagger(frozenset({"goose"}))
    assert tagger("A goose.") == f"A {TAG} goose {TAG}."
    assert tagger("Two geese and a goose.") == f"Two {TAG} geese {TAG} and a {TAG} goose {TAG}."  # irregular form
    assert "geese" in tagger._state[1]
