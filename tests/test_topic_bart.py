"""TopicBart (Passali et al. Sec. 4.1): z_i = WE(x_i) + PE(i) + TE(topic), saved and loaded like any Hub model."""

import torch
from transformers import AutoModelForSeq2SeqLM, BartConfig, BartForConditionalGeneration

import models  # noqa: F401
from models import TopicBartConfig, TopicBartForConditionalGeneration, register_custom_code

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
)


def tiny_topic_bart(std=0.5):
    torch.manual_seed(0)
    return TopicBartForConditionalGeneration(
        TopicBartConfig(topics=["business", "sport", "tech"], topic_init_std=std, **TINY)
    ).eval()


def test_topic_embedding_is_added_to_the_encoder_input():
    model = tiny_topic_bart()
    ids = torch.randint(4, 99, (2, 7))
    encoder = model.get_encoder()
    with torch.no_grad():
        plain = encoder.embed_tokens(ids)
        topic = encoder.topic_embeddings(torch.tensor([1, 2]))
        # Eq. 4 before BART's position embedding and layer norm: WE + TE, the same TE at every position.
        expected = encoder.layernorm_embedding(plain + topic[:, None, :] + encoder.embed_positions(plain[:, :, -1]))
        captured = {}
        hook = encoder.layernorm_embedding.register_forward_hook(lambda m, i, o: captured.setdefault("out", o))
        encoder(input_ids=ids, topic_ids=torch.tensor([1, 2]))
        hook.remove()
    torch.testing.assert_close(captured["out"], expected)


def test_different_topics_give_different_outputs_and_generate_takes_topic_ids():
    model = tiny_topic_bart()
    ids, dec = torch.randint(4, 99, (1, 9)), torch.randint(4, 99, (1, 4))
    with torch.no_grad():
        a = model(input_ids=ids, decoder_input_ids=dec, topic_ids=torch.tensor([0])).logits
        b = model(input_ids=ids, decoder_input_ids=dec, topic_ids=torch.tensor([1])).logits
    assert (a - b).abs().max() > 1e-4
    out = model.generate(input_ids=ids.repeat(2, 1), topic_ids=torch.tensor([0, 1]), max_new_tokens=4, num_beams=2)
    assert out.shape[0] == 2


def test_zero_init_topic_table_starts_as_the_base_model(tmp_path):
    # Warm start: a BART checkpoint loads into TopicBart with only the topic table new, and with
    # topic_init_std = 0 the model computes exactly what the base BART does.
    torch.manual_seed(0)
    bart = BartForConditionalGeneration(BartConfig(**TINY)).eval()
    bart.save_pretrained(tmp_path)
    model, info = TopicBartForConditionalGeneration.from_pretrained(
        tmp_path, topics=["a", "b"], output_loading_info=True
    )
    assert set(info["missing_keys"]) == {"model.encoder.topic_embeddings.weight"}
    ids, dec = torch.randint(4, 99, (1, 9)), torch.randint(4, 99, (1, 4))
    with torch.no_grad():
        torch.testing.assert_close(
            model.eval()(input_ids=ids, decoder_input_ids=dec, topic_ids=torch.tensor([1])).logits,
            bart(input_ids=ids, decoder_input_ids=dec).logits,
        )


def test_round_trip_with_trust_remote_code_in_a_fresh_process(tmp_path, fresh_process_logits):
    model = tiny_topic_bart()
    register_custom_code(model)
    model.save_pretrained(tmp_path)
    assert (tmp_path / "modeling_topic_bart.py").is_file() and (tmp_path / "model.safetensors").is_file()
    torch.manual_seed(1)
    ids, dec = torch.randint(4, 99, (2, 9)), torch.randint(4, 99, (2, 4))
    with torch.no_grad():
        expected = model(input_ids=ids, decoder_input_ids=dec, topic_ids=torch.tensor([2, 0])).logits
    logits, module = fresh_process_logits(
        tmp_path, input_ids=ids, decoder_input_ids=dec, topic_ids=torch.tensor([2, 0])
    )
    assert module.startswith("transformers_modules") and torch.equal(logits, expected)  # the folder's own code


def test_auto_class_loads_a_local_checkpoint_without_remote_code(tmp_path):
    model = tiny_topic_bart()
    model.save_pretrained(tmp_path)
    loaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path)
    assert isinstance(loaded, TopicBartForConditionalGeneration) and loaded.config.topics == [
        "business",
        "sport",
        "tech",
    ]
