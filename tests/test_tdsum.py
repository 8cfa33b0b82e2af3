"""TDSum and the TF-IDF family (Takeshita et al., ROUGE-K, Sec. 4): TF-IDF features aligned to subwords,
the boost/suppress control, the four mechanisms' invariants, training, export and the baseline."""

import json
import math
from dataclasses import replace

import pytest
import torch
from transformers import BartConfig, BartForConditionalGeneration

import models  # noqa: F401  (registers TDSum with the Auto classes)
from metrics.io import DataError
from models import TDSumConfig, TDSumForConditionalGeneration
from variants import get_variant, load_summarizer
from variants.base import ControlError, InputError
from variants.presets import tiny_tokenizer
from variants.sources import load_source
from variants.tdsum import (
    BOOST_SCORE,
    TDSumAssets,
    fit_vectorizer,
    keyword_covering_extract,
    load_vectorizer,
    save_vectorizer,
)

TINY = dict(
    vocab_size=99,
    d_model=16,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
    encoder_ffn_dim=32,
    decoder_ffn_dim=32,
    max_position_embeddings=64,
    dropout=0.0,
    attention_dropout=0.0,
    init_std=0.2,
)  # larger than BART's 0.02: visible effects at d=16
DOCS = ["cats chase mice", "dogs chase cats", "mice eat cheese"]
VARIANT = get_variant("tdsum")
METHOD_SETTINGS = {
    "tdsum": dict(tdmtl_lambda=0.1),
    "rwenc": dict(tfidf_attention=False, rwenc_layers=[0]),
    "rwgen": dict(tfidf_attention=False, rwgen_lambda=0.3),
    "tdmtl": dict(tfidf_attention=False, tdmtl_lambda=0.1),
}


def tiny_model(seed=0, **settings):
    torch.manual_seed(seed)
    config = TDSumConfig(**{**TINY, "tfidf_attention_init_std": 0.5, **settings})
    config._attn_implementation = "eager"  # RwEnc's test reads the attention weights
    return TDSumForConditionalGeneration(config).eval()


def inputs(seed=1):
    """Two sources (the second padded), their scores and decoder inputs."""
    torch.manual_seed(seed)
    ids = torch.randint(4, 99, (2, 9))
    ids[1, -2:] = 1  # pad
    return dict(
        input_ids=ids,
        attention_mask=(ids != 1).long(),
        tfidf=torch.rand(2, 9),
        decoder_input_ids=torch.randint(4, 99, (2, 5)),
    )


@pytest.fixture(scope="module")
def assets():
    vectorizer = fit_vectorizer(DOCS + ["the zebra eats grass", "a zebra runs", "photosynthesis converts light"], 1)
    return TDSumAssets(vectorizer, tiny_tokenizer(), max_source_length=16)


# --- TF-IDF features ------------------------------------------------------------------------------
def test_tfidf_scores_by_hand_and_the_saved_vocabulary_reloads(tmp_path):
    vectorizer = fit_vectorizer(DOCS, min_df=1)
    row = vectorizer.transform(["dogs chase cats"]).toarray()[0]
    score = {term: row[column] for term, column in vectorizer.vocabulary_.items()}
    # smooth idf = ln((1 + 3) / (1 + df)) + 1: dogs (df 1) 1.693147, chase and cats (df 2) 1.287682;
    # l2 norm sqrt(1.693147^2 + 2 * 1.287682^2) = 2.486564 -> dogs 0.680918, chase = cats 0.517856.
    assert score["dogs"] == pytest.approx(0.680918, abs=1e-6)
    assert score["chase"] == pytest.approx(0.517856, abs=1e-6) and score["cats"] == pytest.approx(0.517856, abs=1e-6)
    save_vectorizer(vectorizer, tmp_path)
    again = load_vectorizer(tmp_path)
    assert (again.transform(DOCS) != vectorizer.transform(DOCS)).nnz == 0
    with pytest.raises(FileNotFoundError, match="tfidf_vectorizer.json"):
        load_vectorizer(tmp_path / "missing")


def test_every_subword_gets_its_words_score_and_the_list_has_a_fixed_width(assets):
    document = "Photosynthesis converts zebra light"
    assets = replace(assets, max_source_length=32)  # the 20 tokens fit
    [scores], [notices] = assets.token_scores([document], [{}])
    words = dict(
        zip(
            ["photosynthesis", "converts", "zebra", "light"],
            assets.vectorizer.transform([document]).toarray()[0][
                [assets.vectorizer.vocabulary_[w] for w in ["photosynthesis", "converts", "zebra", "light"]]
            ],
        )
    )
    encoded = assets.tokenizer(document, return_offsets_mapping=True)
    expected = []
    for start, end in encoded["offset_mapping"]:
        word = next(
            (w for w, (a, b) in zip(words, [(0, 14), (15, 23), (24, 29), (30, 35)]) if a < end and start < b), None
        )
        expected.append(float(words[word]) if word else 0.0)  # <s>, </s> and the lone space token: 0
    assert len(scores) == 32 and notices == []
    assert scores[: len(expected)] == pytest.approx(expected) and set(scores[len(expected) :]) == {0.0}
    assert len(encoded["input_ids"]) > 5 and expected.count(float(words["photosynthesis"])) > 1  # split into subwords


def test_long_sources_are_cut_as_encode_cuts_them_and_batches_equal_single_calls(assets):
    long_doc = " ".join(["zebra runs"] * 20)
    batch, _ = assets.token_scores([long_doc, "cats chase mice"], [{}, {}])
    alone = [assets.token_scores([d], [{}])[0][0] for d in (long_doc, "cats chase mice")]
    assert batch == alone
    ids = assets.tokenizer(long_doc)["input_ids"]
    assert len(ids) > 16 and batch[0][-1] == 0.0  # the kept end token (</s>) has no score
    pieces = assets.tokenizer.convert_ids_to_tokens(ids[1:15])  # the 14 pieces kept between <s> and </s>
    assert [s > 0 for s in batch[0][1:15]] == [p != "Ġ" for p in pieces]  # a lone space is no word


def test_boost_and_suppress_set_the_input_and_unknown_words_are_notices(assets):
    document = "the zebra eats grass near cats"
    assets = replace(assets, max_source_length=32)
    [plain], _ = assets.token_scores([document], [{}])
    [steered], [notices] = assets.token_scores(
        [document], [{"boost": ["zebra", "the", "lion"], "suppress": ["grass"]}]
    )
    spans = {"the": (0, 3), "zebra": (4, 9), "grass": (15, 20)}
    offsets = assets.tokenizer(document, return_offsets_mapping=True)["offset_mapping"]
    for i, (start, end) in enumerate(offsets):
        word = next((w for w, (a, b) in spans.items() if a < end and start < b), None)
        expected = {"the": BOOST_SCORE, "zebra": BOOST_SCORE, "grass": 0.0}.get(word, plain[i])
        assert steered[i] == pytest.approx(expected), (i, word)
    assert max(plain) < BOOST_SCORE and steered.count(BOOST_SCORE) >= 3  # "the" and zebra's pieces
    assert any("'the' is not in the TF-IDF vocabulary" in n for n in notices)  # a stop word: boosted anyway
    assert any("'lion' does not occur in the document" in n for n in notices)
    with pytest.raises(ControlError, match="'zebra'.*both boosted and suppressed"):
        VARIANT.validate({"boost": ["Zebra"], "suppress": ["zebra"]})


def test_bad_input_is_refused_with_a_clear_message(assets, tmp_path):
    with pytest.raises(InputError, match="document is empty"):
        VARIANT.prepare("  ", {}, "tdsum", assets)
    with pytest.raises(ValueError, match="needs the model's assets"):
        VARIANT.prepare("cats", {}, "tdsum", None)
    with pytest.raises(ControlError, match="unknown method 'bart'"):
        VARIANT.prepare("cats", {}, "bart", assets)
    with pytest.raises(ControlError, match="'boost' must be a list of strings"):
        VARIANT.validate({"boost": 3})
    model, batch = tiny_model(), inputs()
    with pytest.raises(ValueError, match="needs `tfidf`"):
        model(**{k: v for k, v in batch.items() if k != "tfidf"})
    with pytest.raises(ValueError, match=r"tfidf must have shape \(2, 9\)"):
        model(**{**batch, "tfidf": batch["tfidf"][:, :4]})
    with pytest.raises(ValueError, match="rwgen_lambda must be in"):
        TDSumConfig(rwgen_lambda=1.5, **TINY)
    with pytest.raises(ValueError, match=r"rwenc_layers \[8\] are not encoder layers"):
        TDSumConfig(rwenc_layers=[0, 8], **TINY)
    from training.data import load_examples

    data = tmp_path / "bad.jsonl"
    data.write_text(
        json.dumps({"document": "a", "target": "b", "controls": {}})
        + "\n"
        + json.dumps({"document": "a", "target": "b", "controls": {"boost": 7}})
        + "\n"
    )
    with pytest.raises(DataError, match="bad.jsonl:2: control 'boost'"):
        load_examples(data, VARIANT)


# --- the model's invariants -------------------------------------------------------------------
def bart_twin(model):
    """A plain BART holding the TDSum model's BART weights (the TF-IDF parts left out)."""
    bart = BartForConditionalGeneration(BartConfig(**TINY)).eval()
    missing, unexpected = bart.load_state_dict(model.state_dict(), strict=False)
    assert not missing and all("tfidf" in key for key in unexpected)
    return bart


def test_zero_scores_make_the_added_attention_contribute_nothing():
    model, batch = tiny_model(), inputs()
    bart_logits = bart_twin(model)(**{k: v for k, v in batch.items() if k != "tfidf"}).logits
    with torch.no_grad():
        assert (model(**batch).logits - bart_logits).abs().max() > 1e-3  # the added attention is at work
        torch.testing.assert_close(model(**{**batch, "tfidf": batch["tfidf"] * 0}).logits, bart_logits)


def test_tfidf_features_are_the_scored_unit_embeddings_whatever_the_embeddings_scale():
    encoder = tiny_model().model.encoder.tfidf_encoder
    torch.manual_seed(2)
    embeds, tfidf = torch.randn(2, 5, 16) * 0.064, torch.tensor([[0.0, 0.1, 0.5, 1.0, 0.3]] * 2)  # MiniLM's RMS
    with torch.no_grad():
        torch.testing.assert_close(encoder(embeds * 100, tfidf), encoder(embeds, tfidf), rtol=1e-4, atol=1e-5)
        encoder.fc2.weight.zero_()  # the residual alone: each feature's RMS is its token's score
        rms = encoder(embeds, tfidf).pow(2).mean(-1).sqrt()
    torch.testing.assert_close(rms, tfidf, rtol=1e-4, atol=1e-6)


def test_training_from_plain_bart_starts_the_added_attention_as_the_source_attention(tmp_path):
    # With the output projections made equal too and the source encoder's output as the TF-IDF
    # features, the added attention computes exactly what the source attention does.
    from types import SimpleNamespace

    from variants.tdsum.train import Arguments, build

    torch.manual_seed(0)
    bart = BartForConditionalGeneration(BartConfig(**TINY))
    with torch.no_grad():  # BART starts its biases at zero: random ones show whether they are copied
        for name, parameter in bart.named_parameters():
            if "encoder_attn." in name and name.endswith("bias"):
                parameter.normal_()
    bart.save_pretrained(tmp_path / "bart")
    tiny_tokenizer().save_pretrained(tmp_path / "bart")
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps({"document": d, "controls": {}, "target": d}) + "\n" for d in DOCS))
    data = SimpleNamespace(
        train_file=str(train),
        max_train_samples=None,
        preset=None,
        base_model=str(tmp_path / "bart"),
        max_source_length=16,
    )
    model = build(Arguments(tfidf_min_df=1), data)[0].eval()
    layer = model.model.decoder.layers[1]
    assert torch.equal(layer.tfidf_attn.out_proj.weight, torch.zeros(16, 16))  # still starts as its BART
    with torch.no_grad():
        layer.tfidf_attn.out_proj.weight.copy_(layer.encoder_attn.out_proj.weight)
        states, source = torch.randn(2, 3, 16), torch.randn(2, 7, 16)
        # minus what the source attention's biases add to every output: the added attention has none on
        # its value and output projections (zero scores contribute nothing)
        source_attn = layer.encoder_attn
        expected = (
            source_attn(states, key_value_states=source)[0]
            - source_attn.out_proj.bias
            - source_attn.out_proj.weight @ source_attn.v_proj.bias
        )
        added = layer.tfidf_attn(states, layer.tfidf_attn.key_values(source))
    torch.testing.assert_close(added, expected)


def test_a_bart_checkpoint_loads_with_only_the_tfidf_parts_new_and_starts_as_bart(tmp_path):
    torch.manual_seed(0)
    bart = BartForConditionalGeneration(BartConfig(**TINY)).eval()
    bart.save_pretrained(tmp_path)
    model, info = TDSumForConditionalGeneration.from_pretrained(tmp_path, tdmtl_lambda=0.1, output_loading_info=True)
    assert info["missing_keys"] and all("tfidf" in key for key in info["missing_keys"])
    assert {
        "model.encoder.tfidf_encoder.fc1.weight",
        "model.encoder.tfidf_head.weight",
        "model.decoder.layers.1.tfidf_attn.out_proj.weight",
    } <= set(info["missing_keys"])
    batch = inputs()
    with torch.no_grad():  # tfidf_attention_init_std = 0: the added attention's output starts at zero
        torch.testing.assert_close(
            model.eval()(**batch).logits, bart(**{k: v for k, v in batch.items() if k != "tfidf"}).logits
        )


def test_trainer_flag_opens_the_tfidf_path_from_the_first_step(tmp_path):
    # `--tfidf-attention-init-std 0.02` (what the zoo trains with): the added attention's output projection
    # starts non-zero, so boosting changes the logits before any training step; the default keeps it at 0.
    from variants.tdsum.train import Arguments, method_settings

    torch.manual_seed(0)
    BartForConditionalGeneration(BartConfig(**TINY)).save_pretrained(tmp_path)
    for std in (0.0, 0.02):
        model = TDSumForConditionalGeneration.from_pretrained(
            tmp_path, **method_settings(Arguments(tfidf_attention_init_std=std), TINY["encoder_layers"])
        ).eval()
        batch = inputs()
        boosted = {**batch, "tfidf": batch["tfidf"] * 0 + 1.0}
        with torch.no_grad():
            moved = (model(**batch).logits - model(**boosted).logits).abs().max().item()
        assert (moved > 1e-4) == (std > 0), (std, moved)


def test_rwgen_with_lambda_zero_is_plain_bart_and_otherwise_the_papers_mixture():
    ids = torch.tensor([[0, 5, 7, 5, 2]])
    tfidf = torch.tensor([[0.0, 0.2, 0.6, 0.4, 0.0]])
    dec = torch.tensor([[2, 9, 11]])
    plain = tiny_model(tfidf_attention=False)
    bart_probs = bart_twin(plain)(input_ids=ids, decoder_input_ids=dec).logits.softmax(-1)
    torch.testing.assert_close(plain(input_ids=ids, tfidf=tfidf, decoder_input_ids=dec).logits.softmax(-1), bart_probs)
    mixed = tiny_model(tfidf_attention=False, rwgen_lambda=0.5)
    # T: token 5's highest score 0.4, token 7's 0.6; sum 1.0, so T = {5: 0.4, 7: 0.6} (Sec. 4, RwGen).
    target = torch.zeros(99)
    target[5], target[7] = 0.4, 0.6
    expected = 0.5 * bart_probs + 0.5 * target
    torch.testing.assert_close(mixed(input_ids=ids, tfidf=tfidf, decoder_input_ids=dec).logits.exp(), expected)


def test_rwenc_adds_each_keys_score_to_the_attention_logits():
    batch = inputs()
    model = tiny_model(tfidf_attention=False, rwenc_layers=[0])
    encoder = model.get_encoder()
    with torch.no_grad():
        plain = encoder(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            tfidf=torch.zeros(2, 9),
            output_attentions=True,
        ).attentions[0]
        weighted = encoder(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            tfidf=batch["tfidf"],
            output_attentions=True,
        ).attentions[0]
    # softmax(s + t) = softmax(s) * exp(t) / sum(softmax(s) * exp(t)): the same layer-0 input either way.
    scores = batch["tfidf"] * batch["attention_mask"]
    expected = plain * scores.exp()[:, None, None, :]
    torch.testing.assert_close(weighted, expected / expected.sum(-1, keepdim=True))


def test_tdmtl_loss_interpolates_the_summary_loss_and_the_tfidf_mse():
    batch = inputs()
    labels = torch.randint(4, 99, (2, 5))
    model = tiny_model(tfidf_attention=False, tdmtl_lambda=0.2)
    with torch.no_grad():
        loss = model(**{k: v for k, v in batch.items() if k != "decoder_input_ids"}, labels=labels).loss
        summary_loss = bart_twin(model)(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels
        ).loss
        predicted = model.get_encoder()(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], tfidf=batch["tfidf"]
        ).tfidf_predicted
    mask = batch["attention_mask"].float()
    mse = (((predicted - batch["tfidf"]) ** 2) * mask).sum() / mask.sum()  # 16 real tokens (9 + 7)
    torch.testing.assert_close(loss, 0.8 * summary_loss + 0.2 * mse)


@pytest.mark.parametrize("method", sorted(METHOD_SETTINGS))
def test_training_steps_lower_the_loss(method):
    model, batch = tiny_model(**METHOD_SETTINGS[method]).train(), inputs()
    labels = torch.randint(4, 99, (2, 5))
    del batch["decoder_input_ids"]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(8):
        loss = model(**batch, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0], losses  # memorizing one batch: the loss must fall clearly


def test_generation_reuses_the_tfidf_keys_and_matches_a_full_forward():
    model, batch = tiny_model(rwenc_layers=[1], rwgen_lambda=0.3), inputs()
    source = {k: v for k, v in batch.items() if k != "decoder_input_ids"}
    out = model.generate(
        **source, max_new_tokens=5, num_beams=1, do_sample=False, output_logits=True, return_dict_in_generate=True
    )
    with torch.no_grad():
        full = model(**source, decoder_input_ids=out.sequences[:, :-1]).logits
    torch.testing.assert_close(torch.stack(out.logits, 1), full, atol=1e-5, rtol=1e-5)
    beams = model.generate(**source, max_new_tokens=5, num_beams=3)
    assert torch.equal(beams, model.generate(**source, max_new_tokens=5, num_beams=3, use_cache=False))


def test_boosting_a_word_raises_its_generation_probability(assets):
    """RwGen: p'(w) = (1 - l) p(w) + l T(w), and boosting w raises T(w) = s / (s + R) to 1 / (1 + R)
    while BART's p(w) is unchanged, so p'(w) must rise. TDSum: the boost reaches the logits."""
    document, assets = "the zebra eats grass near cats", replace(assets, max_source_length=64)
    ids = assets.tokenizer(document)["input_ids"]
    plain, boosted = (VARIANT.prepare(document, c, "rwgen", assets).extra["tfidf"] for c in ({}, {"boost": ["zebra"]}))
    first = next(i for i, s, b in zip(ids, plain, boosted) if b == BOOST_SCORE > s)  # a piece of "zebra"
    for method, settings in (("rwgen", METHOD_SETTINGS["rwgen"]), ("tdsum", METHOD_SETTINGS["tdsum"])):
        model = tiny_model(**{**settings, "vocab_size": len(assets.tokenizer)})
        probs = []
        for controls in ({}, {"boost": ["zebra"]}):
            prepared = VARIANT.prepare(document, VARIANT.validate(controls), method, assets)
            with torch.no_grad():
                logits = model(
                    input_ids=torch.tensor([ids]),
                    tfidf=torch.tensor([prepared.extra["tfidf"]]),
                    decoder_input_ids=torch.tensor([[2]]),
                ).logits
            probs.append(logits[0, -1].softmax(-1))
        if method == "rwgen":
            assert probs[1][first] > probs[0][first] + 1e-3
        else:
            assert (probs[1] - probs[0]).abs().max() > 1e-6


# --- the baseline and the live metrics -------------------------------------------------------------
def test_baseline_covers_the_boosted_word_and_scores_say_so():
    document = (
        "Markets fell sharply on Monday. The central bank kept rates unchanged. A zebra escaped from the city zoo."
    )
    # The greedy cover with "zebra" boosted: only the third sentence holds it (weight 1.0), then no
    # sentence adds weight of an uncovered keyword, so the summary is that sentence alone.
    assert keyword_covering_extract(document, ["zebra"], {"zebra": 1.0}) == "A zebra escaped from the city zoo."
    baseline = VARIANT.baseline()
    [summary] = baseline.summarize([document], [{"boost": ["zebra"], "suppress": ["bank"]}])
    assert "zebra" in summary.text
    scores = VARIANT.score(
        summary.text,
        document,
        {"boost": ["zebra"], "suppress": ["bank", "markets"]},
        reference="A zebra escaped.",
        assets=baseline.assets,
    )
    assert scores["boosted_found"].value == 1.0 and scores["boosted_found"].details["found"] == ["zebra"]  # 1 of 1
    assert scores["suppressed_absent"].value == (1.0 if "bank" not in summary.text.lower() else 0.5)
    assert 0 < scores["rouge1"].value <= 1 and "boosted words" in scores["boosted_found"].meaning
    [lion] = baseline.summarize([document], [{"boost": ["lion"]}])
    assert any("'lion' does not occur" in n for n in lion.notices)
    assert VARIANT.suggestions(document)["boost"]  # top TF-IDF terms offered to the Space
    assert VARIANT.evidence("The Zebra ran.", {"boost": ["zebra"]}) == ["Zebra"]
    assert VARIANT.score("", document, {})["doc_keyword_recall"].value == 0.0  # an empty summary includes no keyword


def test_boosted_words_are_scored_found_over_given_even_when_the_document_lacks_them():
    # Before: a boost word absent from the document fell back to the document's top terms (1.0).
    document = "Markets fell sharply on Monday. The central bank kept rates unchanged."
    summary = "Markets fell sharply on Monday."
    assert VARIANT.score(summary, document, {"boost": ["Poppins"]})["boosted_found"].value == 0.0
    both = VARIANT.score(summary, document, {"boost": ["Poppins", "markets"]})["boosted_found"]
    assert both.value == 0.5 and both.details == {"keywords": ["poppins", "markets"], "found": ["markets"]}
    plain = VARIANT.score(summary, document, {})
    assert "boosted_found" not in plain and "not the paper's ROUGE-K" in plain["doc_keyword_recall"].meaning
    assert (
        VARIANT.evaluation.metric_names[0] == "rouge_k_refs" and "rouge_k" not in VARIANT.evaluation.metric_names
    )  # the paper's first


def test_every_system_is_scored_with_the_committed_default_vectorizer():
    # A checkpoint's own vectorizer (here fitted on a corpus where "zebra" is everywhere, so it ranks
    # low) must not change the score: models and the baseline are scored alike.
    document = "A zebra escaped from the zoo. Markets fell sharply on Monday. The central bank kept rates."
    own = TDSumAssets(fit_vectorizer(["zebra zoo markets"] * 5 + ["zebra bank rates monday"] * 5, min_df=1))
    summary = "A zebra escaped from the zoo."
    assert VARIANT.score(summary, document, {}, assets=own) == VARIANT.score(summary, document, {})


@pytest.mark.full_data
def test_baseline_budget_is_the_median_training_tldr_and_keeps_outputs_that_short():
    from statistics import median

    from variants.tdsum import BASELINE_WORDS
    from variants.tdsum.data import scitldr_examples

    assert median(len(e["target"].split()) for e in scitldr_examples("train")) == BASELINE_WORDS
    document = (
        "Markets fell sharply on Monday after a long week of heavy trading in every large exchange of the "
        "world. A zebra escaped. The zoo keepers said that the small zebra was found near the old station."
    )
    weights = {"zebra": 1.0, "station": 0.5}
    # budget 18: the 19-word first sentence never fits; the 14-word third covers both keywords (1.5),
    # after which "A zebra escaped." adds no uncovered keyword, so it stays out
    assert keyword_covering_extract(document, ["zebra", "station"], weights) == (
        "The zoo keepers said that the small zebra was found near the old station."
    )
    # budget 5: no sentence with a keyword fits but "A zebra escaped." (3 words); then nothing fits
    assert keyword_covering_extract(document, ["zebra", "station"], weights, budget_words=5) == "A zebra escaped."
    # budget 4, one long sentence: cut to 4 words from its first keyword ("station" is the last word: start earlier)
    assert (
        keyword_covering_extract(
            document.split(". A")[0] + ". The zebra was near the station.",
            ["station"],
            {"station": 1.0},
            budget_words=4,
        )
        == "was near the station."
    )
    tests = scitldr_examples("test")[:40]
    outputs = VARIANT.baseline().summarize([e["document"] for e in tests], [{}] * len(tests))
    assert max(len(o.text.split()) for o in outputs) <= BASELINE_WORDS


# --- the CLIs, export and the round trip -------------------------------------------------------------
@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from training.__main__ import main as training_main

    root = tmp_path_factory.mktemp("tdsum")
    training_main(["build-data", "tdsum", "--out", str(root / "data"), "--source", "xsum"])
    training_main(
        [
            "tdsum",
            "--preset",
            "tiny",
            "--method",
            "tdsum",
            "--train-file",
            str(root / "data" / "train.jsonl"),
            "--eval-file",
            str(root / "data" / "val.jsonl"),
            "--max-train-samples",
            "8",
            "--max-eval-samples",
            "2",
            "--eval-batch-size",
            "2",
            "--max-steps",
            "2",
            "--per-device-train-batch-size",
            "4",
            "--max-source-length",
            "128",
            "--max-target-length",
            "8",
            "--save-strategy",
            "no",
            "--report-to",
            "none",
            "--output-dir",
            str(root / "ck"),
        ]
    )
    return root


def test_build_data_writes_the_common_example_format(checkpoint):
    from metrics.io import read_jsonl

    splits = {s: read_jsonl(checkpoint / "data" / f"{s}.jsonl") for s in ("train", "val", "test")}
    # The XSum sample cut 80/10/10 (bundled: 800 → 640/80/80); val and test articles that share no word to
    # boost with their reference are dropped (bundled: 10 of test's)
    n = len(load_source("xsum", "sample"))
    assert len(splits["train"]) == int(0.8 * n)
    assert 0 < len(splits["val"]) <= int(0.9 * n) - int(0.8 * n) and 0 < len(splits["test"]) <= n - int(0.9 * n)
    example = splits["train"][0]
    assert set(example) == {"id", "document", "controls", "target", "dataset", "references"}
    assert example["dataset"] == "xsum" and example["references"] == [example["target"]]
    # Half the training examples were drawn for boosts (--train-boost-share 0.5); those with words of
    # their reference outside the document's top terms carry them, the rest train without controls.
    boosted = [e for e in splits["train"] if e["controls"]]
    assert 0.25 * len(splits["train"]) < len(boosted) <= 0.5 * len(splits["train"])
    assert all(
        1 <= len(e["controls"]["boost"]) <= 2 and all(w in e["target"].lower() for w in e["controls"]["boost"])
        for e in boosted
    )
    # val asks for boosts as test does, so that what is chosen there is chosen on obeying them
    assert all(1 <= len(e["controls"]["boost"]) <= 2 for e in splits["val"] + splits["test"])


def test_export_and_reload_in_a_fresh_process_give_identical_logits(checkpoint, tmp_path, fresh_process_logits):
    from hub_cards.card import MISSING
    from hub_cards.export import export_checkpoint

    record = json.loads((checkpoint / "ck" / "steersum.json").read_text())
    assert record["method"] == "tdsum" and record["tfidf_vocabulary_size"] > 0 and "xsum" in record["data_licenses"]
    assert set(json.loads((checkpoint / "ck" / "eval_report.json").read_text())["metrics"]) >= {
        "boosted_found",  # its eval file, val, asks for boosts
        "rouge1",
    }
    folder = export_checkpoint(checkpoint / "ck", tmp_path / "export", repo_id="steersum-test/tdsum-tiny")
    card = (folder / "README.md").read_text()
    assert MISSING not in card and "tfidf_vectorizer.json" in card and "per-token TF-IDF scores" in card
    summarizer = load_summarizer(folder, device="cpu")
    document = "The zebra escaped from the zoo on Monday. Keepers found the zebra near the station."
    [summary] = summarizer.summarize([document], [{"boost": ["zebra", "giraffe"]}], num_beams=1)
    assert any("'giraffe' does not occur" in n for n in summary.notices)
    prepared = VARIANT.prepare(document, {"boost": ["zebra"]}, "tdsum", summarizer.assets)
    ids = torch.tensor([summarizer.tokenizer(prepared.text)["input_ids"]])
    tfidf, dec = torch.tensor([prepared.extra["tfidf"]]), torch.tensor([[2, 50, 60]])
    with torch.no_grad():
        expected = summarizer.model(input_ids=ids, tfidf=tfidf, decoder_input_ids=dec).logits
    logits, module = fresh_process_logits(folder, input_ids=ids, tfidf=tfidf, decoder_input_ids=dec)
    assert module.startswith("transformers_modules") and torch.equal(logits, expected)  # the folder's own code
    assert not math.isnan(expected.sum().item())


def test_reports_carry_the_papers_rouge_k_over_the_references_keywords():
    from metrics.rouge_k import rouge_k
    from training.evaluate import evaluate

    # The docstring example of metrics.rouge_k.extract_keywords: keywords "neural machine translation"
    # and "bilingual dictionaries"; the summary has one of them.
    record = {
        "references": ["We use bilingual dictionaries for neural machine translation."],
        "title": "Bilingual dictionaries for low-resource neural machine translation",
    }
    assert VARIANT.evaluation.corpus_scores([record], [{"summary": "Bilingual dictionaries help."}]) == {
        "rouge_k_refs": 0.5
    }
    assert (
        VARIANT.evaluation.corpus_scores([{"references": []}], [{"summary": "x"}]) == {}
    )  # no references: not reported
    records = VARIANT.evaluation.test_examples(6)
    report = evaluate(VARIANT.baseline(), records, "test.jsonl", batch_size=3)
    expected = rouge_k(
        [row["summary"] for row in report["examples"]],
        [r["references"] for r in records],
        [r["title"] for r in records],
        always_use_title=True,
    )["corpus"]["rouge_k"]
    assert report["metrics"]["rouge_k_refs"] == pytest.approx(expected)


def test_the_test_set_asks_for_words_of_the_reference_that_blind_extraction_misses():
    # The boosts come from the author's TLDR (not from the boosted_found judge) and are never among the
    # document's top TF-IDF terms, so a keyword extractor blind to them cannot score by accident.
    from training.sensitivity import evaluate_with_sensitivity
    from variants.tdsum import default_assets
    from variants.tdsum.data import BLIND_TOP_TERMS

    records = VARIANT.evaluation.test_examples(40)
    assets = default_assets()
    for record in records:
        boost = record["controls"]["boost"]
        assert 1 <= len(boost) <= 2 and all(w in record["target"].lower() for w in boost)
        assert not set(boost) & set(assets.top_terms(record["document"], BLIND_TOP_TERMS))
    report = evaluate_with_sensitivity(VARIANT.baseline(), records, "test.jsonl")
    effect = report["control_sensitivity"]["effect"]["boosted_found"]
    # Measured on the full split: 0.78 with the right boosts, 0.18 with another paper's.
    assert effect["ci_low"] > 0.2
