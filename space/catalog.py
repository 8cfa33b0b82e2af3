"""What models the Space offers, found once at start-up.

Four sources, in this order:

1. every registered variant's model-free **baseline** (model id ``baseline``): always there, so the
   Space runs on a machine with no Hub and no GPU;
2. the **model store** committed with the code (``store/index.json``; model id = the stored name,
   e.g. ``topic-prepend-tag``): every stored adapter, beside its variant's baseline, titled with its
   training steps, data and control effect with its interval. An empty store is said once at start-up;
3. **local checkpoints**: folders under ``--models-dir`` holding ``steersum.json`` (model id
   ``local/<folder>``), loaded with :func:`variants.load_summarizer`;
4. **Hub ids** from a catalog file, each pinned to a revision::

       {"models": [{"repo": "org/topic-bart-prepend-tag", "revision": "<commit sha>", "variant": "topic"}]}

   A repo is downloaded at start-up when the Hub is reachable; otherwise it is listed as unavailable
   with the reason, never a crash. Only these ids load with ``trust_remote_code=True``: the catalog
   file is the list of repos whose code the Space's owner has read and pinned.

Each variant's models are then listed best measured first, by the leaderboard's test scores (its first
control metric, then ROUGE; :mod:`space.standing`), and every measured model other than the baseline
carries one line on its standing against the baseline (``Entry.standing``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from variants import RECORD_FILE, REGISTRY, InputError, Summarizer, Variant, load_summarizer
from variants.base import read_record

from . import standing as standings

DEFAULT_CATALOG = Path(__file__).with_name("catalog.json")
log = logging.getLogger(__name__)


@dataclass
class Entry:
    """One offered model. ``reason`` says why it cannot be used ("" when it can)."""

    variant: str
    model: str
    title: str
    source: str  # "baseline" | "store" | "local" | "hub"
    location: str = ""
    revision: str | None = None
    reason: str = ""
    load: Callable[[], Summarizer] | None = field(default=None, repr=False)
    standing: str = ""  # measured against the variant's baseline on the leaderboard ("" when not measured)

    @property
    def available(self) -> bool:
        return not self.reason

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "title": self.title,
            "source": self.source,
            "location": self.location,
            "revision": self.revision,
            "available": self.available,
            "reason": self.reason,
            "standing": self.standing,
        }


class Catalog:
    def __init__(
        self,
        entries: list[Entry],
        registry: dict[str, Variant],
        notes: list[str] | None = None,
        ordered_by: dict[str, list[str]] | None = None,
    ):
        self.entries, self.registry = entries, registry
        self.notes = notes or []  # what the page says about where models come from (e.g. an empty store)
        # per variant, the leaderboard metrics its models are ordered by (none: the catalog's order)
        self.ordered_by = ordered_by or {}

    def variant(self, variant_id: str) -> Variant:
        if variant_id not in self.registry:
            raise InputError(f"unknown variant {variant_id!r}; allowed: {', '.join(self.registry)}")
        return self.registry[variant_id]

    def models(self, variant_id: str, available: bool | None = None) -> list[Entry]:
        return [e for e in self.entries if e.variant == variant_id and available in (None, e.available)]

    def get(self, variant_id: str, model: str) -> Entry:
        """The entry for a usable model, or :class:`InputError` naming the models that can be used."""
        self.variant(variant_id)
        for entry in self.models(variant_id):
            if entry.model == model:
                if not entry.available:
                    raise InputError(f"model {model!r} is unavailable: {entry.reason}")
                return entry
        allowed = ", ".join(e.model for e in self.models(variant_id, available=True))
        raise InputError(f"unknown model {model!r} for variant '{variant_id}'; allowed: {allowed}")


def build_catalog(
    models_dir: str | Path | None = "checkpoints",
    catalog_file: str | Path | None = None,
    registry: dict[str, Variant] | None = None,
    download: Callable[..., str] | None = None,
    store_index: str | Path | None | bool = None,
    leaderboard: str | Path | None | bool = None,
) -> Catalog:
    """Baselines, then the store's models (``store_index``: default the committed ``store/index.json``;
    False: none),
    then local checkpoints, then the catalog file's Hub ids (``download`` defaults to
    ``huggingface_hub.snapshot_download``; tests pass a stand-in); each variant's ordered by the
    ``leaderboard`` file's measurements (default: the Leaderboard tab's ``leaderboard.json``; False: none)."""
    import store

    registry = REGISTRY if registry is None else registry
    entries = [Entry(v.id, "baseline", v.baseline().name, "baseline", load=v.baseline) for v in registry.values()]
    index = Path(store_index) if store_index else store.INDEX
    stored = store_entries(index, registry) if store_index is not False else []
    notes = [] if stored else [store.EMPTY]
    if not stored:
        log.info("%s", store.EMPTY)
    entries += stored
    entries += local_entries(Path(models_dir), registry) if models_dir else []
    if catalog_file is None and DEFAULT_CATALOG.is_file():
        catalog_file = DEFAULT_CATALOG
    entries += hub_entries(Path(catalog_file), registry, download) if catalog_file else []
    for entry in entries:
        if not entry.available:
            log.warning("model %s (%s) unavailable: %s", entry.model, entry.variant, entry.reason)
    board = {} if leaderboard is False else standings.read_board(leaderboard or None)
    parts = board.get("variants") or {}
    ordered_by = {v: standings.ordering_metrics(parts[v]) for v in registry if parts.get(v, {}).get("systems")}
    return Catalog(ranked(entries, board, registry), registry, notes, ordered_by)


def ranked(entries: list[Entry], board: dict, registry: dict[str, Variant]) -> list[Entry]:
    """The entries grouped by variant (variants in order of first appearance), each variant's best measured
    first (:func:`space.standing.rank_key`), with every measured model's standing against the baseline set."""
    by_variant: dict[str, list[Entry]] = {}
    for entry in entries:
        by_variant.setdefault(entry.variant, []).append(entry)
    out = []
    for variant_id, group in by_variant.items():
        part = (board.get("variants") or {}).get(variant_id) or {}
        lower = tuple(registry[variant_id].evaluation.lower_is_better) if variant_id in registry else ()
        for entry in group:
            entry.standing = standings.standing(part, entry.model, lower)
        keys = {id(e): standings.rank_key(part, e.model, lower) for e in group}
        out += sorted(group, key=lambda e: keys[id(e)])
    return out


def store_entries(index: Path, registry: dict[str, Variant]) -> list[Entry]:
    """One entry per stored adapter (the shared base has no controls of its own), titled with what it is."""
    import store

    entries = []
    for model in store.servable(index):
        folder = index.parent / "models" / model.name
        title = f"{model.name}: {model.steps} steps on {', '.join(model.data)}; control effect {model.effect_text()}"
        entry = Entry(model.variant, model.name, title, "store", str(folder))
        entries.append(_checked(entry, folder, registry, load=partial(load_summarizer, folder)))
        entry.title = title  # _checked appends the method; the name already says it
    return entries


def local_entries(models_dir: Path, registry: dict[str, Variant]) -> list[Entry]:
    if not models_dir.is_dir():
        return []
    entries = []
    for record_file in sorted(models_dir.glob(f"*/{RECORD_FILE}")):
        folder = record_file.parent
        entry = Entry("", f"local/{folder.name}", folder.name, "local", str(folder))
        entries.append(_checked(entry, folder, registry, load=partial(load_summarizer, folder)))
    return entries


def hub_entries(catalog_file: Path, registry: dict[str, Variant], download: Callable[..., str] | None) -> list[Entry]:
    if download is None:
        from huggingface_hub import snapshot_download as download
    entries = []
    for spec in read_catalog_file(catalog_file):
        entry = Entry(
            spec["variant"], spec["repo"], spec.get("title", spec["repo"]), "hub", spec["repo"], spec["revision"]
        )
        try:
            folder = Path(download(spec["repo"], revision=spec["revision"]))
        except Exception as err:  # offline, unknown repo or revision, auth: all mean "not here now"
            entry.reason = (
                f"not reachable ({type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''})"
            )
            entries.append(entry)
            continue
        load = partial(load_summarizer, folder, trust_remote_code=True)
        entries.append(_checked(entry, folder, registry, load=load))
    return entries


def read_catalog_file(path: Path) -> list[dict]:
    """The catalog file's model specs; a malformed file fails with its name and the bad entry."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: cannot read the model catalog: {err}") from None
    specs = data.get("models") if isinstance(data, dict) else None
    if not isinstance(specs, list):
        raise ValueError(f'{path}: expected {{"models": [{{"repo", "revision", "variant"}}, ...]}}')
    for number, spec in enumerate(specs, start=1):
        for name in ("repo", "revision", "variant"):
            if not isinstance(spec, dict) or not isinstance(spec.get(name), str) or not spec[name].strip():
                raise ValueError(
                    f"{path}: model {number}: field '{name}' is missing or empty "
                    "(every Hub id is pinned to a revision and names its variant)"
                )
    return specs


def _checked(entry: Entry, folder: Path, registry: dict[str, Variant], load: Callable[[], Summarizer]) -> Entry:
    """Fill the entry's variant from the checkpoint's record, or say why it cannot be used."""
    try:
        record: dict[str, Any] = read_record(folder)
    except (OSError, ValueError) as err:
        entry.reason = str(err)
        return entry
    if entry.variant and record["variant"] != entry.variant:
        entry.reason = f"the catalog says variant '{entry.variant}' but the checkpoint is '{record['variant']}'"
    elif record["variant"] not in registry:
        entry.variant = entry.variant or record["variant"]
        entry.reason = f"variant {record['variant']!r} is not registered in this Space"
    else:
        entry.variant, entry.load = record["variant"], load
        entry.title = f"{entry.title} ({record.get('method', '?')})"
    return entry
