"""The registry of variants: ids map to variant objects, and a checkpoint's ``steersum.json`` says
which one loads it. The Space, training and benchmarks look variants up here, never by ``if``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import RECORD_FILE, ControlError, InputError, Summarizer, Variant, read_record, verify_weights
from .ccs import CCSVariant
from .entity import EntityVariant
from .persona import PersonaVariant
from .tdsum import TDSumVariant
from .topic import TopicVariant

REGISTRY: dict[str, Variant] = {
    variant.id: variant
    for variant in (TopicVariant(), PersonaVariant(), EntityVariant(), CCSVariant(), TDSumVariant())
}


def get_variant(variant_id: str) -> Variant:
    if variant_id not in REGISTRY:
        raise InputError(f"unknown variant {variant_id!r}; allowed: {', '.join(REGISTRY)}")
    return REGISTRY[variant_id]


def load_summarizer(
    path_or_repo: str | Path, revision: str | None = None, device: str | None = None, **kwargs: Any
) -> Summarizer:
    """A checkpoint folder, the name of a stored model (``store/index.json``, e.g. ``topic-prepend-tag``:
    an adapter loaded on the stored general summarizer) or a Hub repo id (downloaded at ``revision``)
    as a ready summarizer; the weights are checked against the checksums an exported repo records."""
    import store

    path = Path(path_or_repo)
    if not path.is_dir() and str(path_or_repo) in store.names():
        path = store.model_path(str(path_or_repo))
    if not path.is_dir():
        from huggingface_hub import snapshot_download

        path = Path(snapshot_download(str(path_or_repo), revision=revision))
    record = read_record(path)
    verify_weights(path, record)
    return get_variant(record["variant"]).load(path, record, device=device, **kwargs)


__all__ = [
    "REGISTRY",
    "RECORD_FILE",
    "ControlError",
    "InputError",
    "Summarizer",
    "Variant",
    "get_variant",
    "load_summarizer",
]
