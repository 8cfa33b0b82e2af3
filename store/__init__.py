"""The model store: trained models committed in the repository, compact enough to ship.

One general summarizer (the shared base, weight-only int8: :mod:`store.compact`) and one peft adapter
per variant on it (:mod:`store.adapters`), each with its evaluation report and card, listed in
``store/index.json``. ``load_summarizer("topic-prepend-tag")``, the Space and the leaderboard read it;
``python -m training zoo`` writes it (:mod:`training.storing`); ``python -m store`` lists it and checks
its budget (:func:`budget_problems`): at most 50 MB in all and 16 MiB per file, so a clone stays small
and any file fits the transfers it goes through.

An empty store is a normal state (a clone before any model was trained and committed): every reader
says so and goes on with what it has.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
MODELS = ROOT / "models"  # one folder per stored model
INDEX = ROOT / "index.json"
MAX_TOTAL_BYTES = 50 * 10**6  # the whole store (models, reports, cards, index)
MAX_FILE_BYTES = 16 * 2**20  # any one file
GENERAL = "general"  # the shared base's name: every adapter names ../general as its base
EMPTY = "the model store is empty (store/index.json lists no model): train with python -m training zoo"


@dataclass
class StoredModel:
    """One row of ``store/index.json``: what the Space and the leaderboard show about a stored model."""

    name: str
    variant: str  # a variant id, or "general" for the shared base
    method: str
    format: str  # "int8" (a compact full model) or "lora" (an adapter on `base`)
    base: str | None  # the stored model an adapter sits on
    steps: int | None
    data: list[str]  # the training data sets
    data_licenses: dict[str, str]
    control_effect: dict | None  # {"metric", "difference", "ci_low", "ci_high", "n"}; None for the base
    eval_report: str  # relative to the store's models folder
    card: str
    measure: dict = field(default_factory=dict)  # what "better" was judged on when it was stored
    fingerprint: str = ""  # sha256 of the fp32 weights (the base) or of the base an adapter was trained on
    stored: str = ""  # UTC date

    @property
    def path(self) -> Path:
        return MODELS / self.name

    def to_json(self) -> dict:
        return asdict(self)

    def effect_text(self) -> str:
        """``length_hit +0.12 [0.05, 0.19] (n=100)``, or why there is none."""
        e = self.control_effect
        if not e:
            return "no control (the shared base)" if self.variant == GENERAL else "no control effect measured"
        interval = f" [{e['ci_low']:+.3f}, {e['ci_high']:+.3f}]" if e.get("ci_low") is not None else ""
        return f"{e['metric']} {e['difference']:+.3f}{interval}" + (f" (n={e['n']})" if e.get("n") else "")


def _index(index: Path | None) -> Path:
    return Path(index) if index else INDEX  # read at call time, so a test can point INDEX elsewhere


def read_index(index: Path | None = None) -> list[StoredModel]:
    """The stored models, in index order; none when the index is missing or lists none."""
    index = _index(index)
    if not index.is_file():
        return []
    try:
        rows = json.loads(index.read_text(encoding="utf-8"))["models"]
        return [StoredModel(**row) for row in rows]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise ValueError(
            f'{index}: not a store index ({err}); expected {{"models": [{{"name", "variant", ...}}]}}'
        ) from None


def write_index(models: list[StoredModel], index: Path | None = None) -> None:
    _index(index).write_text(
        json.dumps({"models": [m.to_json() for m in models]}, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def names(index: Path | None = None) -> list[str]:
    return [m.name for m in read_index(index)]


def stored(name: str, index: Path | None = None) -> StoredModel | None:
    return next((m for m in read_index(index) if m.name == name), None)


def model_path(name: str, index: Path | None = None) -> Path:
    """The folder of stored model ``name``; a KeyError naming the stored models (or saying there are none)."""
    model = stored(name, index)
    if model is None:
        known = names(index)
        raise KeyError(f"no stored model {name!r}; " + (f"the store holds: {', '.join(known)}" if known else EMPTY))
    return _index(index).parent / "models" / model.name


def remove(name: str, index: Path | None = None) -> None:
    """Take stored model ``name`` out of the store: its index entry, then its folder. The shared base is
    refused while adapters name it: they would be left with nothing to add their weights to."""
    folder = model_path(name, index)  # a KeyError naming the stored models
    models = read_index(index)
    if name == GENERAL and (adapters := [m.name for m in models if m.base == GENERAL]):
        raise ValueError(
            f"the stored adapters {', '.join(adapters)} add their weights to {GENERAL}: remove them first"
        )
    write_index([m for m in models if m.name != name], index)
    shutil.rmtree(folder)


def servable(index: Path | None = None) -> list[StoredModel]:
    """The stored models a variant can load (the adapters; the base has no controls of its own)."""
    return [m for m in read_index(index) if m.variant != GENERAL]


TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
)


def tokenizer_folder(folder: str | Path) -> Path:
    """Where a folder's tokenizer is: the folder itself, or for a stored adapter without tokenizer files
    (its tokenizer is its base's, stored once) the base's folder."""
    from .adapters import base_folder, is_adapter

    folder = Path(folder)
    if is_adapter(folder) and not (folder / "tokenizer_config.json").is_file():
        base = base_folder(folder)
        if isinstance(base, Path):
            return base
    return folder


def load_stored_model(folder: str | Path, **kwargs: Any):
    """The model of a store-format folder as a plain fp32 transformers model — a compact one
    dequantized, an adapter derived on its base and merged — or None for any other folder."""
    from .adapters import is_adapter, load_adapter_model
    from .compact import is_compact, load_compact

    folder = Path(folder)
    if is_compact(folder):
        return load_compact(folder, **kwargs)
    if is_adapter(folder):
        return load_adapter_model(folder, **kwargs)
    return None


def file_sizes(root: Path = ROOT) -> dict[str, int]:
    """Bytes of every data file the store commits (code and caches aside), by path relative to ``root``."""
    return {
        str(p.relative_to(root)): p.stat().st_size
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    }


# An absolute path on a machine: a root folder such systems put checkouts, homes and scratch space in,
# then more. A Hub id (org/name) or a relative data name (ccs/train.jsonl) has no leading slash.
MACHINE_PATH = re.compile(
    r"(?<![\w.~:/-])/(?:home|tmp|work|root|Users|mnt|scratch|var|opt|data|srv|private)/[^\s\"'<>)`]+"
)
TEXT_SUFFIXES = (".json", ".md", ".txt", ".py", ".yaml", ".yml", ".cfg")


def machine_paths(folder: str | Path, checkout: str | Path | None = None) -> list[str]:
    """``"file: path"`` for every absolute machine path (and every mention of ``checkout``, by default the
    repository's own folder) in the text files under ``folder``: what a stored record or an exported repo
    must never hold, since it would say nothing on another machine but where someone once trained."""
    folder = Path(folder)
    checkout = str(Path(checkout) if checkout else ROOT.parent)
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES):
        text = path.read_text(encoding="utf-8", errors="replace")
        hits = MACHINE_PATH.findall(text) + ([checkout] if checkout in text else [])
        found += [f"{path.relative_to(folder)}: {hit}" for hit in dict.fromkeys(hits)]
    return found


def budget_problems(root: Path = ROOT, max_total: int = MAX_TOTAL_BYTES, max_file: int = MAX_FILE_BYTES) -> list[str]:
    """Each way the store breaks its budget, as a sentence; none when it fits."""
    sizes = file_sizes(root)
    problems = [
        f"{name}: {size / 2**20:.2f} MiB, over the {max_file / 2**20:.0f} MiB per file (shard it)"
        for name, size in sizes.items()
        if size > max_file
    ]
    total = sum(sizes.values())
    if total > max_total:
        problems.append(f"the store holds {total / 1e6:.2f} MB, over its {max_total / 1e6:.0f} MB")
    return problems


__all__ = [
    "EMPTY",
    "GENERAL",
    "INDEX",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "MODELS",
    "ROOT",
    "StoredModel",
    "budget_problems",
    "file_sizes",
    "load_stored_model",
    "machine_paths",
    "tokenizer_folder",
    "model_path",
    "names",
    "read_index",
    "servable",
    "stored",
    "write_index",
]
