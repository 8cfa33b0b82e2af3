"""What an export must pass before it is published: readable safetensors weights (a pickle is refused:
loading one runs arbitrary code), only floating-point tensors (no int8 code of the store left behind),
and no path of this machine in any file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from safetensors import safe_open

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib")
VOCABULARIES = {"tokenizer.json", "vocab.json"}  # tokens are not paths, whatever they look like
ABSOLUTE_PATH = re.compile(r"(/[^/\s]+){2,}/?")  # /home/me/x, /tmp/x/y: a local path, not a Hub id


class ExportError(ValueError):
    """A checkpoint that cannot be published as it is; the message says what to fix."""


def check_weights(folder: str | Path) -> list[Path]:
    """The folder's weight files, each opened as safetensors (a truncated or corrupt file fails here),
    and every shard a ``*.safetensors.index.json`` names present. Pickled weights are refused."""
    folder = Path(folder)
    weights = sorted(folder.glob("*.safetensors"))
    if not weights:
        pickles = sorted(p.name for p in folder.iterdir() if p.suffix in PICKLE_SUFFIXES and "model" in p.name)
        if pickles:
            raise ExportError(
                f"{folder}: weights only as pickle ({', '.join(pickles)}), which is refused: loading a "
                "pickle runs arbitrary code. Re-save with save_pretrained() (safetensors is its default)"
            )
        raise ExportError(f"{folder}: no weights (*.safetensors)")
    for path in weights:
        try:
            with safe_open(str(path), framework="pt") as handle:
                handle.keys()
        except Exception as err:  # SafetensorError, OSError: the file is unusable either way
            raise ExportError(f"{path}: not a readable safetensors file ({err})") from None
    for index in folder.glob("*.safetensors.index.json"):
        shards = set(json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values())
        missing = sorted(s for s in shards if not (folder / s).is_file())
        if missing:
            raise ExportError(f"{index}: shard(s) missing: {', '.join(missing)}")
    return weights


def check_floating(path: Path) -> None:
    """The last guard on an exported weight file: every tensor a float (no int8 code left behind)."""
    with safe_open(str(path), framework="pt") as handle:
        for name in handle.keys():
            dtype = handle.get_slice(name).get_dtype()
            if dtype not in ("F16", "BF16", "F32", "F64"):
                raise ExportError(f"{path.name}: {name} is {dtype}, not a floating-point weight")


def drop_local_paths(out: Path) -> None:
    """Absolute local paths in the exported JSON files (``steersum.json``'s data files, the output and
    logging folders of ``training_args.json``, the report's data file) become their last component:
    enough to say which file, nothing about the machine."""

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: scrub(item) for key, item in value.items()}
        if isinstance(value, list):
            return [scrub(item) for item in value]
        if isinstance(value, str) and ABSOLUTE_PATH.fullmatch(value):
            return Path(value).name
        return value

    for file in sorted(out.glob("*.json")):
        if file.name in VOCABULARIES:
            continue
        data = json.loads(file.read_text(encoding="utf-8"))
        clean = scrub(data)
        if clean != data:
            file.write_text(json.dumps(clean, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def check_no_local_path(out: Path, checkpoint: Path) -> None:
    """The last guard: no exported file may name the folder the checkpoint sits in."""
    local = {str(checkpoint.resolve().parent), str(checkpoint.absolute().parent)} - {"/"}
    leaks = sorted(p.name for p in out.iterdir() if p.is_file() and any(s.encode() in p.read_bytes() for s in local))
    if leaks:
        raise ExportError(f"{', '.join(leaks)}: would publish a local path ({checkpoint.resolve().parent})")
