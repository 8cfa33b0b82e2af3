"""The general summarizer in a quarter of its size: weight-only int8 with one scale per output row.

    python -m store.compact CHECKPOINT OUT [--shard-mib 15]

Every 2-D floating weight (the Linear layers, the embedding table that is also the LM head, the
position tables) is stored as int8 with a symmetric per-row scale, ``scale = max|w_row| / 127``,
``q = round(w / scale)``; 1-D tensors (biases, LayerNorms, ``final_logits_bias``: under 1% of the
parameters) stay fp32. At load every weight is dequantized, ``w' = q * scale``, into an ordinary fp32
model built by transformers' own ``from_pretrained`` machinery (config, tied weights, generation
config), so generation is a normal transformers model and nothing downstream knows the difference.

Why the error is bounded: ``|w / scale| <= 127`` by the choice of scale, so rounding never clips, and
rounding to the nearest integer moves ``w / scale`` by at most 1/2: ``|w - w'| <= scale / 2`` on every
row (plus fp32 rounding of the product, a few ulps). An all-zero row gets scale 1 and is stored exactly.

Files: ``compact-0000k-of-0000n.safetensors`` shards (each under ``--shard-mib``, so every file fits the
store's 16 MiB limit) with ``compact.safetensors.index.json`` (huggingface_hub's shard index), beside
the checkpoint's config, generation config, tokenizer and ``steersum.json``. The weight files are
deliberately not named ``model*.safetensors``: a plain ``from_pretrained`` on the folder fails
instead of loading int8 codes as if they were weights; :func:`load_compact` is the way in.

The compact ``steersum.json`` records the fingerprint of the fp32 weights it was made from
(:func:`weights_fingerprint`), and ``--expand`` writes the dequantized model back out as an ordinary fp32
folder that keeps it: an adapter trained on that folder (with every trainer's plain ``from_pretrained``)
is trained on exactly the weights the store serves, and the store knows it belongs to that base.

    python -m store.compact --expand COMPACT OUT
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

import torch

INDEX = "compact.safetensors.index.json"
SHARD_PATTERN = "compact{suffix}.safetensors"
SCALE = ".int8_scale"  # the per-row scales of weight W are stored as W + SCALE
QMAX = 127  # symmetric: -127..127 (-128 unused, so the grid is the same on both sides)
SHARD_BYTES = 15 * 2**20  # under the store's 16 MiB per file, with room for the safetensors header
FINGERPRINT = "weights_fingerprint"  # steersum.json key: the fp32 weights a compact folder was made from
KEPT = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "steersum.json",
)


def quantize_rows(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(q, scale)``: int8 codes of a 2-D weight and its fp32 per-row scales (symmetric, no zero point;
    rounding to nearest, halves to even)."""
    if weight.dim() != 2:
        raise ValueError(f"quantize_rows takes a 2-D weight, got shape {tuple(weight.shape)}")
    weight = weight.detach().float()
    scale = weight.abs().amax(dim=1) / QMAX
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # an all-zero row: any scale stores it exactly
    q = torch.round(weight / scale[:, None]).clamp(-QMAX, QMAX)  # the clamp only guards fp32 rounding at +-127
    return q.to(torch.int8), scale


def dequantize_rows(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return q.float() * scale[:, None].float()


def compact_state_dict(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """int8 codes + scales for every 2-D floating tensor, fp32 for the rest; tensors that share storage
    (tied embeddings and LM head) are kept once, under their first name, as ``save_pretrained`` does."""
    out, seen = {}, set()
    for name, tensor in state.items():
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        if key in seen:
            continue
        seen.add(key)
        if tensor.is_floating_point() and tensor.dim() == 2:
            out[name], out[name + SCALE] = quantize_rows(tensor)
        else:
            out[name] = tensor.detach().float().contiguous() if tensor.is_floating_point() else tensor.contiguous()
    return out


def expand_state_dict(compact: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The fp32 state dict back from :func:`compact_state_dict`'s tensors."""
    return {
        name: dequantize_rows(tensor, compact[name + SCALE]) if name + SCALE in compact else tensor
        for name, tensor in compact.items()
        if not name.endswith(SCALE)
    }


def write_compact(source: str | Path, out: str | Path, shard_bytes: int = SHARD_BYTES) -> Path:
    """Compact the checkpoint folder ``source`` into ``out`` (weights sharded, the small files copied)."""
    from huggingface_hub import split_torch_state_dict_into_shards
    from safetensors.torch import save_file
    from transformers import AutoModelForSeq2SeqLM

    source, out = Path(source), Path(out)
    if is_compact(source):
        raise ValueError(f"{source} is compact already")
    model = AutoModelForSeq2SeqLM.from_pretrained(source, dtype=torch.float32)
    state = compact_state_dict(model.state_dict())
    too_big = [
        f"{name} ({t.numel() * t.element_size()} bytes)"
        for name, t in state.items()
        if t.numel() * t.element_size() > shard_bytes
    ]
    if too_big:  # a tensor is never split across shards
        raise ValueError(f"tensors larger than the {shard_bytes}-byte shard size: {', '.join(too_big)}")
    split = split_torch_state_dict_into_shards(state, filename_pattern=SHARD_PATTERN, max_shard_size=shard_bytes)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("compact*.safetensors"):
        old.unlink()
    for filename, names in split.filename_to_tensors.items():
        save_file({name: state[name] for name in names}, str(out / filename), metadata={"format": "pt"})
    index = {
        "metadata": {
            "total_size": split.metadata["total_size"],
            "format": "int8 per-row symmetric",
            "scale_suffix": SCALE,
            "qmax": QMAX,
        },
        "weight_map": split.tensor_to_filename,
    }
    (out / INDEX).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for name in KEPT:
        if (source / name).is_file():
            shutil.copy2(source / name, out / name)
    record = out / "steersum.json"
    if record.is_file():
        record.write_text(
            json.dumps(
                {**json.loads(record.read_text(encoding="utf-8")), FINGERPRINT: weights_fingerprint(source)}, indent=2
            )
            + "\n",
            encoding="utf-8",
        )
    return out


def weights_fingerprint(folder: str | Path) -> str:
    """What identifies a checkpoint's weights: the fingerprint its ``steersum.json`` records (a compact
    folder, or an fp32 folder expanded from one: the fp32 weights it was made from), else the sha256 of
    its ``model*.safetensors`` ("" when it has none)."""
    folder = Path(folder)
    record = folder / "steersum.json"
    recorded = json.loads(record.read_text(encoding="utf-8")).get(FINGERPRINT) if record.is_file() else None
    if recorded:
        return recorded
    files = sorted(folder.glob("model*.safetensors"))
    return file_sha256(files[0]) if len(files) == 1 else "+".join(file_sha256(f)[:16] for f in files)


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def expand(folder: str | Path, out: str | Path) -> Path:
    """The compact ``folder`` as an ordinary fp32 checkpoint folder ``out`` (``model.safetensors``), with
    its tokenizer and ``steersum.json`` (so its fingerprint is the compact one's)."""
    folder, out = Path(folder), Path(out)
    load_compact(folder).save_pretrained(out)
    for name in KEPT:
        if (folder / name).is_file() and name not in ("config.json", "generation_config.json"):
            shutil.copy2(folder / name, out / name)
    return out


def is_compact(folder: str | Path) -> bool:
    return (Path(folder) / INDEX).is_file()


def read_compact(folder: str | Path) -> dict[str, torch.Tensor]:
    """The fp32 state dict of a compact folder (every shard its index names, dequantized)."""
    from safetensors.torch import load_file

    folder = Path(folder)
    index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    compact: dict[str, torch.Tensor] = {}
    for filename in sorted(set(index["weight_map"].values())):
        compact.update(load_file(str(folder / filename)))
    missing = sorted(set(index["weight_map"]) - set(compact))
    if missing:
        raise ValueError(f"{folder}: {INDEX} names tensors its shards lack: {missing[:5]}")
    return expand_state_dict(compact)


def load_compact(folder: str | Path, **kwargs):
    """A compact folder as an ordinary fp32 ``AutoModelForSeq2SeqLM`` (transformers builds it from the
    folder's config and the dequantized weights; ties, missing-weight checks and generation config as
    for any checkpoint)."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, GenerationConfig

    folder = Path(folder)
    config = AutoConfig.from_pretrained(folder, **kwargs)
    model_class = AutoModelForSeq2SeqLM._model_mapping[type(config)]  # the Auto class's own choice for the config
    model = model_class.from_pretrained(None, config=config, state_dict=read_compact(folder), dtype=torch.float32)
    if (folder / "generation_config.json").is_file():
        model.generation_config = GenerationConfig.from_pretrained(folder)
    return model.eval()


def folder_bytes(folder: str | Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in Path(folder).glob(pattern))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m store.compact", description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a seq2seq checkpoint folder (safetensors); with --expand, a compact one")
    parser.add_argument("out", help="the compact folder to write (with --expand: the fp32 folder)")
    parser.add_argument("--expand", action="store_true", help="dequantize a compact folder into an fp32 checkpoint")
    parser.add_argument(
        "--shard-mib",
        type=float,
        default=SHARD_BYTES / 2**20,
        help="largest weight file, MiB (default 15: under the store's 16 MiB per file)",
    )
    a = parser.parse_args(argv)
    if a.shard_mib <= 0:
        parser.error(f"--shard-mib {a.shard_mib}: must be positive")
    if a.expand:
        if not is_compact(a.checkpoint):
            parser.error(f"--expand {a.checkpoint}: not a compact folder (no {INDEX})")
        print(f"{expand(a.checkpoint, a.out)}: fp32, fingerprint {weights_fingerprint(a.out)[:12]}")
        return
    out = write_compact(a.checkpoint, a.out, int(a.shard_mib * 2**20))
    before = folder_bytes(a.checkpoint, "*.safetensors")
    after = folder_bytes(out, "compact*.safetensors")
    print(f"{out}: weights {after / 1e6:.1f} MB (was {before / 1e6:.1f} MB, {before / max(after, 1):.2f}x smaller)")


if __name__ == "__main__":
    main()
