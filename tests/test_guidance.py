"""Classifier-free guidance (variants/classifier_free_guidance.py) on every neural variant's tiny random model:
γ = 1 is today's generation token for token; the guided distribution is l_u + γ (l_c − l_u) by hand; the
cached unconditional pass follows beam search's reordering (equal to recomputing it from the whole
prefix); the default γ lives in the generation config; guidance reads no judge."""

import functools

import pytest
import torch
from transformers import BartForConditionalGeneration, LogitsProcessorList, T5ForConditionalGeneration

import variants.seq2seq
import variants.speedups
from models import (
    GSumConfig,
    GSumForConditionalGeneration,
    PersonaBartConfig,
    PersonaBartForConditionalGeneration,
    TDSumConfig,
    TDSumForConditionalGeneration,
)
from models.topic_bart import TopicBartConfig, TopicBartForConditionalGeneration
from models.topic_bart.modeling_topic_bart import NO_TOPIC
from variants import get_variant
from variants.classifier_free_guidance import check_strength, parent_rows
from variants.postprocess import postprocess
from variants.presets import tiny_bart_config, tiny_t5_config, tiny_t5_tokenizer, tiny_tokenizer
from variants.seq2seq import GenerationSettings, Seq2SeqSummarizer, save_default_strength
from variants.speedups import PairedGuidance, fast_lm_head
from variants.steering import encode

DOCS = [
    "Shares in the bank rose after it said profits grew. Investors welcomed the news from London.",
    "The film won an award at the festival. Its director thanked the cast and the city of Cannes.",
]
RECORD = {"max_target_length": 10, "num_beams": 1, "max_source_length": 64}


def bart(tokenizer, config_class=None, **overrides):
    torch.manual_seed(0)
    config = tiny_bart_config(
        tokenizer, **({"config_class": config_class} if config_class else {}), init_std=0.3, **overrides
    )
    model_class = {
        None: BartForConditionalGeneration,
        TopicBartConfig: TopicBartForConditionalGeneration,
        TDSumConfig: TDSumForConditionalGeneration,
        GSumConfig: GSumForConditionalGeneration,
        PersonaBartConfig: PersonaBartForConditionalGeneration,
    }[config_class]
    return model_class(config).eval()


def topic_case(method):
    from metrics.topic_space import TopicSpace
    from variants.seq2seq import add_control_tokens
    from variants.topic import SPECIAL_TOKENS, TopicAssets

    tokenizer, space = tiny_tokenizer(), TopicSpace.default()
    if method == "emb":
        model = bart(tokenizer, TopicBartConfig, topics=list(space.topics), topic_init_std=1.0)
        assets = TopicAssets(space, embedding_topics=list(space.topics))
    else:
        model = bart(tokenizer)
        add_control_tokens(tokenizer, model, SPECIAL_TOKENS)
        assets = TopicAssets(space)
    return model, tokenizer, assets, [{"topic": "business"}, {"topic": "entertainment"}]


def tdsum_case(method):
    from variants.tdsum import TDSumAssets, fit_vectorizer

    tokenizer = tiny_tokenizer()
    settings = {
        "tdsum": dict(tfidf_attention=True, tfidf_attention_init_std=0.5),
        "rwgen": dict(tfidf_attention=False, rwgen_lambda=0.3),
    }[method]
    model = bart(tokenizer, TDSumConfig, **settings)
    assets = TDSumAssets(fit_vectorizer(DOCS, 1), tokenizer, 64, method, settings)
    return model, tokenizer, assets, [{"boost": ["investors"]}, {"boost": ["director"], "suppress": ["film"]}]


def entity_case(method):
    from variants.entity import EntityAssets

    tokenizer = tiny_tokenizer()
    return (
        bart(tokenizer, GSumConfig),
        tokenizer,
        EntityAssets(tokenizer, 16),
        [{"entity": "London"}, {"entity": "Cannes"}],
    )


def ccs_case(method):
    tokenizer = tiny_t5_tokenizer()
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(tiny_t5_config(tokenizer, initializer_factor=3.0)).eval()
    return (
        model,
        tokenizer,
        None,
        [{"length": 0, "keywords": ["bank"], "readability": "high"}, {"focus": "empirical", "readability": "normal"}],
    )


def persona_case(method):
    from variants.persona import PersonaAssets, PersonaSummarizer

    tokenizer = tiny_tokenizer()
    model = bart(tokenizer, PersonaBartConfig, max_history=4, max_title_tokens=12, user_init_std=1.0)
    assets = PersonaAssets({}, tokenizer=tokenizer, max_history=4, max_title_tokens=12, prefix_titles=4)
    controls = [{"history": ["Bank profits rise", "Markets in London"]}, {"history": ["Cannes film festival"]}]
    return model, tokenizer, assets, controls, PersonaSummarizer


CASES = [
    ("topic", "prepend-tag", topic_case),
    ("topic", "emb", topic_case),
    ("tdsum", "tdsum", tdsum_case),
    ("tdsum", "rwgen", tdsum_case),
    ("entity", "sentences", entity_case),
    ("ccs", "prompt", ccs_case),
    ("persona", "history-prefix", persona_case),
    ("persona", "user-embedding", persona_case),
    ("persona", "interest-prefix", persona_case),
]


def summarizer_of(variant_id, method, build):
    model, tokenizer, assets, controls, *wrap = build(method)
    summarizer = Seq2SeqSummarizer(
        get_variant(variant_id),
        "tiny",
        method,
        model,
        tokenizer,
        assets,
        {**RECORD, "variant": variant_id, "method": method},
    )
    return (wrap[0](summarizer) if wrap else summarizer), controls


@pytest.fixture(scope="module", params=CASES, ids=[f"{v}-{m}" for v, m, _ in CASES])
def case(request):
    return summarizer_of(*request.param)


def ids_of(summarizer, controls, settings):
    """The token ids each summary decodes from, via the summarizer's own decoding (its output text
    tokenized back would lose special tokens, so compare texts and scores instead)."""
    return [s.text for s in summarizer.summarize(DOCS, controls, settings=settings)]


@pytest.mark.parametrize("beams", [1, 3])
def test_guidance_1_is_todays_generation_token_for_token(case, beams):
    summarizer, controls = case
    settings = GenerationSettings(num_beams=beams, max_new_tokens=10, control_strength=1.0)
    got = summarizer.summarize(DOCS, controls, settings=settings)
    # today's path: prepare → encode → model.generate with the settings' keywords, nothing else
    base = getattr(summarizer, "base", summarizer)
    if summarizer.method == "user-embedding":  # its own path encodes the article once; compare to generate
        prepared = [
            summarizer.variant.prepare(
                d, summarizer.variant.validate(c, summarizer.assets), "user-embedding", summarizer.assets
            )
            for d, c in zip(DOCS, controls)
        ]
        batch, _ = encode(summarizer.tokenizer, prepared, 64)
        output = summarizer.model.generate(**batch, **settings.generate_kwargs())
    else:
        prepared = [
            base.variant.prepare(d, base.variant.validate(c, base.assets), base.method, base.assets)
            for d, c in zip(DOCS, controls)
        ]
        batch, _ = encode(base.tokenizer, prepared, 64)
        output = base.model.generate(**batch, **settings.generate_kwargs())
    decoded = base.tokenizer.batch_decode(output, skip_special_tokens=True)
    assert [s.text for s in got] == [postprocess(t, d) for t, d in zip(decoded, DOCS)]  # as every summary is written


@pytest.mark.parametrize("paired", [True, False], ids=["one-pass", "own-pass"])
@pytest.mark.parametrize("beams", [1, 3])
def test_the_cached_unconditional_pass_follows_the_beams(case, beams, paired, monkeypatch):
    """γ = 4: the unconditional cache, reordered as beam search reorders its own, gives exactly the
    summaries of recomputing the unconditional pass from the whole prefix at every step; so do the
    control-free rows decoded in generate's own forward pass (as served) and in a pass of their own
    (as a processor given to any generate call, and for peft's unmerged models)."""
    summarizer, controls = case
    settings = GenerationSettings(num_beams=beams, max_new_tokens=10, control_strength=4.0)
    if not paired:
        monkeypatch.setattr(PairedGuidance, "pairs", lambda self, model: False)
    cached = ids_of(summarizer, controls, settings)
    monkeypatch.setattr(
        variants.speedups.Speedups, "guidance_class", functools.partial(PairedGuidance, use_cache=False)
    )
    assert ids_of(summarizer, controls, settings) == cached


def test_served_guidance_decodes_each_row_beside_its_twin_in_one_pass(monkeypatch):
    """As served, a guided step runs the decoder once, on twice generate's rows (2 documents x 3 beams,
    and their control-free twins); given a pass of its own, the unconditional side doubles the calls."""
    summarizer, controls = summarizer_of("entity", "sentences", entity_case)
    settings = GenerationSettings(num_beams=3, max_new_tokens=6, control_strength=3.0)
    rows = []
    hook = summarizer.model.get_decoder().register_forward_hook(
        lambda m, args, kwargs, out: rows.append(len(kwargs["input_ids"])), with_kwargs=True
    )
    try:
        one_pass = ids_of(summarizer, controls, settings)
        together, rows[:] = list(rows), []
        monkeypatch.setattr(PairedGuidance, "pairs", lambda self, model: False)
        assert ids_of(summarizer, controls, settings) == one_pass
    finally:
        hook.remove()
    assert set(together) == {12} and set(rows) == {6} and len(rows) == 2 * len(together)
    # what generate kept: the model's forward is its class's again
    assert "forward" not in vars(summarizer.model)


def test_pairs_of_batches_are_stacked_with_zero_padding_and_their_cache_rows_follow_the_beams():
    from transformers.cache_utils import DynamicCache

    from variants.speedups import PairedCache, stack_pair

    first, second = torch.ones(2, 3, 4), 2 * torch.ones(2, 5, 4)
    stacked = stack_pair(first, second)
    assert stacked.shape == (4, 5, 4) and stacked[:2, 3:].abs().sum() == 0 and torch.equal(stacked[:2, :3], first)
    assert torch.equal(
        stack_pair(torch.tensor([[1, 1]]), torch.tensor([[1, 1, 1]])), torch.tensor([[1, 1, 0], [1, 1, 1]])
    )
    cache = PairedCache(DynamicCache(), DynamicCache())
    keys = torch.arange(4.0)[:, None, None, None].expand(4, 1, 1, 2).clone()  # rows 0,1 and their twins 2,3
    cache.self_attention_cache.update(keys, keys.clone(), 0)
    cache.cross_attention_cache.update(keys.clone(), keys.clone(), 0)
    cache.reorder_cache(torch.tensor([1, 1]))  # beam search keeps row 1 twice: its twin follows
    assert cache.self_attention_cache.layers[0].keys[:, 0, 0, 0].tolist() == [1, 1, 3, 3]
    assert cache.cross_attention_cache.layers[0].keys[:, 0, 0, 0].tolist() == [0, 1, 2, 3]  # shared per example


SHARED_SOURCE = [("tdsum", "tdsum", tdsum_case), ("tdsum", "rwgen", tdsum_case), ("entity", "sentences", entity_case)]


@pytest.mark.parametrize("variant_id, method, build", SHARED_SOURCE, ids=[f"{v}-{m}" for v, m, _ in SHARED_SOURCE])
def test_a_batch_and_its_control_free_twins_share_one_encoding_of_the_source(variant_id, method, build, monkeypatch):
    """GSum's signal and TDSum's scores travel beside the source: under guidance the source's encoder
    layers run once per batch, not once more for the twins, and the summaries are those of encoding the
    twins from scratch (2 documents x 3 beams, γ = 3, as served and in a pass of their own)."""
    summarizer, controls = summarizer_of(variant_id, method, build)
    settings = GenerationSettings(num_beams=3, max_new_tokens=8, control_strength=3.0)
    first_layer = summarizer.model.get_encoder().layers[0]  # GSum's signal runs through it too: it is shorter
    runs = []
    hook = first_layer.register_forward_hook(lambda m, args, out: runs.append(tuple(args[0].shape[:2])))

    def sources():
        return [shape for shape in runs if shape[1] == max(length for _, length in runs)]

    try:
        shared = ids_of(summarizer, controls, settings)
        assert len(sources()) == 1 and sources()[0][0] == 2  # one batch of two sources, once
        monkeypatch.setattr(
            variants.seq2seq.Steering, "encode_once", lambda self, model, rows, inputs: (inputs, None, None)
        )
        runs[:] = []
        assert ids_of(summarizer, controls, settings) == shared
        assert len(sources()) == 2  # the twins' sources encoded again
        monkeypatch.setattr(PairedGuidance, "pairs", lambda self, model: False)
        assert ids_of(summarizer, controls, settings) == shared
    finally:
        hook.remove()


def test_the_shared_source_encoding_is_the_one_the_twins_would_compute():
    """Every output of the encoder given ``source_states`` equals the one it computes itself; a TDSum
    whose encoder reads the scores (RwEnc) cannot share its source's encoding, and says so."""
    tokenizer = tiny_tokenizer()
    ids = tokenizer(DOCS, return_tensors="pt", padding=True)
    tfidf = torch.rand(ids.input_ids.shape)
    gsum, tdsum = bart(tokenizer, GSumConfig), bart(tokenizer, TDSumConfig, tfidf_attention=True, tdmtl_lambda=0.1)
    signal = tokenizer(["London", ""], return_tensors="pt", padding=True).input_ids
    with torch.no_grad():
        for encoder, extra in (
            (gsum.get_encoder(), {"signal_input_ids": signal}),
            (tdsum.get_encoder(), {"tfidf": tfidf}),
        ):
            source = encoder(**ids, **extra).last_hidden_state
            assert encoder.encodes_source_alone
            mine, theirs = encoder(**ids, **extra, source_states=source), encoder(**ids, **extra)
            assert type(mine) is type(theirs) and list(mine.keys()) == list(theirs.keys())
            for key in theirs.keys():
                assert torch.allclose(mine[key], theirs[key], atol=1e-6), key
    rwenc = bart(tokenizer, TDSumConfig, tfidf_attention=True, rwenc_layers=[0]).get_encoder()
    assert not rwenc.encodes_source_alone
    with pytest.raises(ValueError, match=r"RwEnc layers \[0\]"):
        rwenc(**ids, tfidf=tfidf, source_states=torch.zeros(2, ids.input_ids.shape[1], rwenc.config.d_model))


def test_guidance_changes_what_some_model_writes():
    """On the tiny random models γ = 4 changes at least one summary of most variants (a model that
    ignores its input entirely could not change, so this is a floor, not every case)."""
    changed = 0
    for variant_id, method, build in CASES:
        summarizer, controls = summarizer_of(variant_id, method, build)
        plain = ids_of(summarizer, controls, GenerationSettings(num_beams=1, max_new_tokens=10))
        changed += plain != ids_of(
            summarizer, controls, GenerationSettings(num_beams=1, max_new_tokens=10, control_strength=4.0)
        )
    assert changed >= len(CASES) // 2


def test_the_guided_scores_are_the_mixture_by_hand():
    tokenizer = tiny_tokenizer()
    model = bart(tokenizer)
    conditional = tokenizer(["business [TOPIC] " + d for d in DOCS], return_tensors="pt", padding=True)
    unconditional = tokenizer(DOCS, return_tensors="pt", padding=True)
    prefix = torch.tensor([[2, 0, 100, 7], [2, 0, 55, 9]])  # decoder tokens so far
    with torch.no_grad():
        l_c = model(**conditional, decoder_input_ids=prefix).logits[:, -1].log_softmax(-1)
        l_u = model(**unconditional, decoder_input_ids=prefix).logits[:, -1].log_softmax(-1)
        every = PairedGuidance(model, 2.5, dict(unconditional), use_cache=False, candidates=None)
        guided = every(prefix, l_c.clone())
        top = PairedGuidance(model, 2.5, dict(unconditional), use_cache=False, candidates=50)(prefix, l_c.clone())
    expected = (l_u + 2.5 * (l_c - l_u)).log_softmax(-1)  # renormalized: p ∝ p_u^(1-γ) p_c^γ
    torch.testing.assert_close(guided, expected, atol=1e-5, rtol=1e-5)
    assert torch.exp(guided).sum(-1).sub(1).abs().max() < 1e-5
    # 50 candidates: the mixture over the conditional's 50 most likely tokens, with the unconditional scores
    # put on the whole vocabulary's scale by the candidates' conditional mass; every other token keeps its
    # conditional score
    candidates = l_c.topk(50, dim=-1).indices
    mass = l_c.gather(1, candidates).logsumexp(-1, keepdim=True)
    u_50 = l_u.gather(1, candidates).log_softmax(-1) + mass
    mixed = l_c.clone().scatter(1, candidates, u_50 + 2.5 * (l_c.gather(1, candidates) - u_50))
    torch.testing.assert_close(top, mixed.log_softmax(-1), atol=1e-5, rtol=1e-5)
    with torch.no_grad(), fast_lm_head(model):  # as generate runs it: the candidates still stand in for the head
        fast = PairedGuidance(model, 2.5, dict(unconditional), use_cache=False, candidates=50)(prefix, l_c.clone())
    torch.testing.assert_close(fast, mixed.log_softmax(-1), atol=1e-5, rtol=1e-5)
    # and where the head is one the candidates cannot stand in for (peft's wrapper of a head with trainable
    # tokens), every logit is computed, and still only the candidates are guided
    wrapped = PairedGuidance(model, 2.5, dict(unconditional), use_cache=False, candidates=50)
    wrapped.head_owner = None
    with torch.no_grad():
        torch.testing.assert_close(wrapped(prefix, l_c.clone()), mixed.log_softmax(-1), atol=1e-5, rtol=1e-5)
    # so where the controls change nothing (the same input twice), the candidates change nothing either
    same = PairedGuidance(model, 2.5, dict(conditional), use_cache=False, candidates=50)(prefix, l_c.clone())
    torch.testing.assert_close(same, l_c, atol=1e-5, rtol=1e-5)
    # a token another processor ruled out stays ruled out, and the rows keep the scale of the scores they were
    # given (beam search adds log-probabilities taken before tokens were ruled out): with the same input twice,
    # the scores come back as they were
    l_c[:, 5:40] = -float("inf")
    assert torch.isneginf(PairedGuidance(model, 2.5, dict(unconditional), use_cache=False)(prefix, l_c)[:, 5]).all()
    same = PairedGuidance(model, 1.5, dict(conditional), use_cache=False, candidates=50)(prefix, l_c.clone())
    torch.testing.assert_close(same, l_c, atol=1e-5, rtol=1e-5)


def test_an_unconditional_input_equal_to_the_conditional_one_changes_nothing_with_beams():
    tokenizer = tiny_tokenizer()
    model = bart(tokenizer)
    inputs = tokenizer(DOCS, return_tensors="pt", padding=True)
    kwargs = dict(max_new_tokens=12, num_beams=3)
    plain = model.generate(**inputs, **kwargs)
    same = model.generate(
        **inputs, **kwargs, logits_processor=LogitsProcessorList([PairedGuidance(model, 3.0, dict(inputs))])
    )
    assert torch.equal(plain, same)


def test_parent_rows_by_hand():
    previous = torch.tensor([[2, 5], [2, 6], [2, 7], [2, 8]])  # 2 examples x 2 beams
    current = torch.tensor([[2, 6, 1], [2, 6, 3], [2, 8, 4], [2, 7, 0]])
    assert parent_rows(current, previous, 2).tolist() == [1, 1, 3, 2]
    assert parent_rows(torch.tensor([[2, 9, 1], [2, 6, 3], [2, 8, 4], [2, 7, 0]]), previous, 2) is None


@pytest.mark.parametrize("bad", [0.5, 0, -1, 11, float("nan"), "2", True, None])
def test_guidance_outside_1_to_10_is_refused_naming_the_range(bad):
    with pytest.raises(ValueError, match=r"from 1 \(plain generation\) to 10, got"):
        GenerationSettings(control_strength=bad)
    assert check_strength(1) == 1.0 and GenerationSettings(control_strength=2).control_strength == 2.0


def test_the_default_guidance_is_kept_in_the_generation_config(tmp_path):
    from variants.base import write_record

    tokenizer = tiny_tokenizer()
    model = bart(tokenizer)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    write_record(tmp_path, {"variant": "topic", "method": "prepend", "max_target_length": 8})
    save_default_strength(tmp_path, 1.5)
    assert '"control_strength": 1.5' in (tmp_path / "generation_config.json").read_text()
    from variants.seq2seq import load_seq2seq

    model, tokenizer = load_seq2seq(tmp_path)
    summarizer = Seq2SeqSummarizer(
        get_variant("topic"), "t", "prepend", model, tokenizer, None, {"max_target_length": 8}
    )
    assert summarizer.settings.control_strength == 1.5
    with pytest.raises(ValueError, match="got 0.2"):
        save_default_strength(tmp_path, 0.2)


def test_an_adapter_without_a_generation_config_keeps_its_bases_with_the_default_guidance(tmp_path):
    """An adapter generates with its base's generation config (start token, n-gram rule); a default γ
    saved into an adapter folder that had none must not replace it with a bare config."""
    import json

    from variants.base import write_record

    model = bart(tiny_tokenizer())
    model.generation_config.no_repeat_ngram_size = 3
    model.save_pretrained(tmp_path / "base")
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "../base"}))
    write_record(adapter, {"variant": "ccs", "method": "lora"})
    save_default_strength(adapter, 2)
    saved = json.loads((adapter / "generation_config.json").read_text())
    assert saved["control_strength"] == 2.0 and saved["no_repeat_ngram_size"] == 3
    assert saved["decoder_start_token_id"] == model.generation_config.decoder_start_token_id is not None


def test_the_neutral_inputs():
    from variants.entity import EntityAssets

    topic, entity = get_variant("topic"), get_variant("entity")
    assert topic.unconditional(DOCS[0], "prepend-tag").text == DOCS[0]
    assert topic.unconditional(DOCS[0], "emb").extra == {"topic_ids": NO_TOPIC}
    tokenizer = tiny_tokenizer()
    neutral = entity.unconditional(DOCS[0], "sentences", EntityAssets(tokenizer, 8))
    assert list(neutral.extra["signal_input_ids"]) == [0, 2] + [tokenizer.pad_token_id] * 6  # <s></s>, padding
    # NO_TOPIC adds no embedding: the encoder output of plain BART's input
    model = bart(tokenizer, TopicBartConfig, topics=["a", "b", "c"], topic_init_std=1.0)
    ids = tokenizer(DOCS[:1], return_tensors="pt").input_ids
    with torch.no_grad():
        none = model.get_encoder()(input_ids=ids, topic_ids=torch.tensor([NO_TOPIC])).last_hidden_state
        plain = model.get_encoder()(input_ids=ids).last_hidden_state
        some = model.get_encoder()(input_ids=ids, topic_ids=torch.tensor([1])).last_hidden_state
    assert torch.equal(none, plain) and not torch.allclose(some, plain)


def test_guidance_reads_no_judge(monkeypatch):
    """Guard: neither the focus judge nor the topic space that scores STAS is read while generating."""
    import inspect

    import metrics.focus_classifier
    import metrics.topic_space
    import variants.classifier_free_guidance
    import variants.decoding
    import variants.decoding_rules
    import variants.rule_processors

    decoding = (
        variants.decoding,
        variants.classifier_free_guidance,
        variants.speedups,
        variants.decoding_rules,
        variants.rule_processors,
    )
    for module in decoding:
        source = inspect.getsource(module)
        assert "metrics.focus" not in source and "metrics.stas" not in source and "TopicSpace" not in source

    def judge(*_, **__):
        raise AssertionError("a judge was read while generating")

    summarizer, controls = summarizer_of("ccs", "prompt", ccs_case)
    monkeypatch.setattr(metrics.focus_classifier, "default_focus_classifier", judge)
    monkeypatch.setattr(metrics.topic_space.TopicSpace, "affinities", judge)
    monkeypatch.setattr(metrics.topic_space.TopicSpace, "stas", judge)
    summarizer.summarize(
        DOCS,
        controls,
        settings=GenerationSettings(num_beams=2, max_new_tokens=8, control_strength=3.0, constraints=True),
    )
    topic, controls = summarizer_of("topic", "prepend", topic_case)
    topic.summarize(DOCS, controls, settings=GenerationSettings(num_beams=2, max_new_tokens=8, control_strength=3.0))


def test_evaluate_at_a_guidance_reports_guidance_1_beside_it_and_keeps_the_default(
    tiny_topic_checkpoint, tmp_path, capsys
):
    import json
    import shutil

    from training.__main__ import main as training

    model = tmp_path / "model"
    shutil.copytree(tiny_topic_checkpoint, model)
    data = tmp_path / "test.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in get_variant("topic").evaluation.test_examples(3)))
    out = tmp_path / "report.json"
    training(
        [
            "evaluate",
            "--model",
            str(model),
            "--data",
            str(data),
            "--out",
            str(out),
            "--guidance",
            "2",
            "--batch-size",
            "3",
            "--save-default-guidance",
        ]
    )
    report = json.loads(out.read_text())
    assert report["generation"]["control_strength"] == 2.0
    assert set(report["at_guidance_1"]) == {"metrics", "control_sensitivity"}
    assert "at guidance 1 (plain generation)" in capsys.readouterr().out
    assert json.loads((model / "generation_config.json").read_text())["control_strength"] == 2.0
    from variants import load_summarizer

    assert load_summarizer(model).settings.control_strength == 2.0
    with pytest.raises(SystemExit):
        training(["evaluate", "--model", "baseline", "--variant", "topic", "--data", str(data), "--guidance", "2"])
    assert "model-free: guidance and constraints apply to models only" in capsys.readouterr().err


def test_the_cards_effect_table_shows_gamma_1_beside_the_models_default():
    from hub_cards.card import environment

    def effect(given, shuffled, low=None):
        return {
            "given": given,
            "shuffled": shuffled,
            "difference": given - shuffled,
            "ci_low": low,
            "ci_high": None if low is None else low + 0.2,
            "n": 40,
        }

    sensitivity = {
        "effect": {"stas": effect(0.9, 0.5, 0.3), "length_pcc": effect(0.6, 0.1)},
        "shuffled": {"controls_changed": 4, "n_examples": 4},
        "lead_k": {"budget_words": 30, "metrics": {"stas": 0.6}},
    }
    plain = {"effect": {"stas": effect(0.8, 0.6, 0.1)}}
    template = environment().get_template("control_effect.md")
    report = {"n_examples": 4, "control_sensitivity": sensitivity}
    text = template.render(report=report)
    assert "| stas | 0.9000 | 0.5000 | 0.6000 | – | +0.4000 | [+0.3000, +0.5000] | – |\n| length_pcc |" in text
    assert "γ" not in text  # a report at γ = 1: the table as it was
    text = template.render(
        report={**report, "generation": {"guidance": 2.0}, "at_guidance_1": {"control_sensitivity": plain}}
    )
    assert "control strength γ = 2 (classifier-free guidance" in text
    assert "| vs pasted | effect at γ = 1 | 95% interval |\n|---|---|---|---|---|---|---|---|---|---|" in text
    assert (
        "| stas | 0.9000 | 0.5000 | 0.6000 | – | +0.4000 | [+0.3000, +0.5000] | – | +0.2000 | [+0.1000, +0.3000] |\n"
        in text
    )
    assert "| length_pcc | 0.6000 | 0.1000 | – | – | +0.5000 | corpus metric: no interval | – | — | — |\n" in text


def test_a_guidance_sweep_measures_each_gamma_and_its_first_row_is_plain_evaluation(
    tiny_topic_checkpoint, tmp_path, capsys
):
    """The sweep's γ = 1 row is the plain evaluation of the same examples (same metrics and effect), and
    the leaderboard reads the file it writes into one table row and one plot panel per γ."""
    import json

    from benchmarks.leaderboard.guidance import HEADING, guidance_board, guidance_markdown, plot_guidance, refresh
    from training.__main__ import main as training
    from training.guidance import SWEEP_FILE

    data = tmp_path / "test.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in get_variant("topic").evaluation.test_examples(4)))
    plain = tmp_path / "plain.json"
    training(
        [
            "evaluate",
            "--model",
            str(tiny_topic_checkpoint),
            "--data",
            str(data),
            "--out",
            str(plain),
            "--batch-size",
            "4",
        ]
    )
    folder = tmp_path / "model"
    folder.mkdir()
    training(
        [
            "evaluate",
            "--model",
            str(tiny_topic_checkpoint),
            "--data",
            str(data),
            "--out",
            str(folder / SWEEP_FILE),
            "--batch-size",
            "4",
            "--guidance-sweep",
            "1",
            "3",
        ]
    )
    assert "γ = 3: rouge1" in capsys.readouterr().out
    sweep, report = json.loads((folder / SWEEP_FILE).read_text()), json.loads(plain.read_text())
    assert [row["guidance"] for row in sweep["sweep"]] == [1.0, 3.0]
    first = sweep["sweep"][0]
    assert first["metrics"] == report["metrics"]
    assert first["effect"] == report["control_sensitivity"]["effect"]
    assert first["pasted"]["metrics"] == report["control_sensitivity"]["pasted"]["metrics"]
    assert all(row["seconds"] > 0 for row in sweep["sweep"])

    class Entry:
        source, location, model = "local", str(folder), "tiny topic"

    board = guidance_board([Entry()])
    assert [row["guidance"] for row in board[0]["rows"]] == [1.0, 3.0] and board[0]["metric"] == "stas"
    assert board[0]["rows"][0]["time_ratio"] == 1.0
    markdown = guidance_markdown(board, "guidance.png")
    assert (
        markdown.count("| tiny topic (n=4, test) |") == 2 and "| **1** |" in markdown
    )  # the default is 1, on test.jsonl
    plot_guidance(tmp_path / "guidance.png", board)
    assert (tmp_path / "guidance.png").stat().st_size > 1000
    out = tmp_path / "leaderboard"  # --guidance-only rewrites only its own section, however often it runs
    out.mkdir()
    (out / "leaderboard.md").write_text("# SteerSum leaderboard\n\n## Topic\n\n| table |\n")
    (out / "leaderboard.json").write_text('{"variants": {}}')
    refresh(out, [Entry()])
    refresh(out, [Entry()])
    text = (out / "leaderboard.md").read_text()
    assert text.startswith("# SteerSum leaderboard\n\n## Topic\n\n| table |\n") and text.count(HEADING) == 1
    assert json.loads((out / "leaderboard.json").read_text())["guidance"][0]["system"] == "tiny topic"
    with pytest.raises(SystemExit):
        training(
            [
                "evaluate",
                "--model",
                str(tiny_topic_checkpoint),
                "--data",
                str(data),
                "--guidance",
                "2",
                "--guidance-sweep",
            ]
        )
    assert "--guidance-sweep sets γ itself" in capsys.readouterr().err


def test_a_sweep_times_nothing_a_process_loads_once(monkeypatch):
    """Before the first γ's timed pass, one record is summarized at that γ, untimed: a one-time load
    (WordNet for topic's tags) would otherwise count against γ = 1 alone and lower every ratio to it."""
    import training.guidance
    from variants.base import Summary

    calls, timed_after = [], []

    class Fake:
        name, variant, settings = "fake", get_variant("topic"), GenerationSettings()

        def summarize(self, documents, controls, batch_size=None):
            calls.append((self.settings.control_strength, len(documents)))
            return [Summary("Shares rose.") for _ in documents]

    def evaluated(summarizer, records, data_file, batch_size):
        timed_after.append(list(calls))
        row = {"metrics": {}, "budget_words": 2}
        return {
            "metrics": {},
            "summarize_seconds": 1.0,
            "control_sensitivity": {
                "shuffled": {**row, "summarize_seconds": 1.0},
                "lead_k": row,
                "pasted": row,
                "effect": {},
                "verdict": {},
            },
        }

    monkeypatch.setattr(training.guidance, "evaluate_with_sensitivity", evaluated)
    records = [{"document": DOCS[0], "controls": {"topic": "business"}}, {"document": DOCS[1], "controls": {}}]
    training.guidance.sweep(Fake(), records, "data.jsonl", (1.0, 2.0))
    assert timed_after == [[(1.0, 1)], [(1.0, 1)]]  # one record at γ = 1, before either timed pass


def _swept(rows, lower=()):
    """A hand-made sweep: per γ (ROUGE-1, effect, interval, stands) of the lead metric ``m``."""
    return {
        "control_metrics": ["m"],
        "lower_is_better": list(lower),
        "sweep": [
            {
                "guidance": g,
                "metrics": {"rouge1": r},
                "verdict": {"m": {"stands": ok}},
                "effect": {"m": {"difference": d, "ci_low": lo, "ci_high": hi}},
            }
            for g, r, d, lo, hi, ok in rows
        ],
    }


def test_the_default_gamma_is_the_best_lower_bound_among_those_that_keep_rouge_and_stand():
    from training.guidance import pick_default

    rows = [
        (1.0, 0.30, 0.20, 0.10, 0.30, True),
        (1.5, 0.30, 0.30, 0.18, 0.42, True),  # the best lower bound that qualifies
        (2.0, 0.27, 0.40, 0.30, 0.50, True),  # loses 0.03 ROUGE-1 (> 0.02)
        (3.0, 0.29, 0.45, 0.35, 0.55, False),
    ]  # pasting wins
    assert pick_default(_swept(rows)) == 1.5
    assert pick_default(_swept(rows), rouge_tolerance=0.05) == 2.0
    weaker = [(1.0, 0.30, 0.20, 0.10, 0.30, True), (2.0, 0.30, 0.15, 0.12, 0.18, True)]  # a smaller effect
    assert pick_default(_swept(weaker)) == 1.0
    # lower is better: the interval's upper end, sign turned (-0.10 beats -0.05)
    lower = [(1.0, 0.30, -0.10, -0.15, -0.05, True), (2.0, 0.30, -0.20, -0.25, -0.10, True)]
    assert pick_default(_swept(lower, lower=("m",))) == 2.0
    # a variant that reports ROUGE-L and no ROUGE-1 (ccs) is held to it: the ccs adapter with constraints
    # measured ROUGE-L 0.499 at γ = 1 and 0.434 at γ = 3, with effect intervals [0.04, 0.48] and [0.23, 0.46]
    ccs = _swept([(1.0, 0.499, 0.271, 0.042, 0.479, True), (3.0, 0.434, 0.354, 0.229, 0.458, True)])
    for row in ccs["sweep"]:
        row["metrics"] = {"rougeL": row["metrics"].pop("rouge1")}
    assert pick_default(ccs) == 1.0
    assert pick_default(ccs, rouge_tolerance=0.07) == 3.0
