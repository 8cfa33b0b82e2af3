"""JSON Lines in and out, with errors that point at ``file:line``.

Every dataset and every metric input in SteerSum is JSONL. A malformed line must say where it is
and what is wrong, so a user can fix line 812 of a 10,000-line file without guessing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# The bundled datasets (../shared/data beside the checkout); STEERSUM_DATA points elsewhere.
DATA_DIR = Path(os.environ.get("STEERSUM_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


class DataError(ValueError):
    """Bad input data. The message starts with where it is (``file:line`` or a field name)."""


def read_jsonl(path: str | Path) -> list[dict]:
    """Read one JSON object per line. Record ``i`` comes from line ``i + 1``: blank lines are errors
    (except at the very end), so that positions in the returned list map back to lines."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    records = []
    lines = path.read_text(encoding="utf-8").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise DataError(f"{path}:{number}: empty line (one JSON object per line expected)")
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{number}: invalid JSON: {err.msg} (column {err.colno})") from None
        if not isinstance(record, dict):
            raise DataError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
        records.append(record)
    return records


def write_jsonl(path: str | Path, records: Iterable[dict]) -> int:
    """Write records atomically (temp file + rename) so an interrupted run never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(path)
    return count


def write_atomically(path: Path, text: str) -> None:
    """Write beside the target, then rename: a killed run leaves the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


_TYPE_NAMES = {str: "a string", list: "a list", dict: "an object", int: "an integer", float: "a number"}


def get_field(
    record: dict,
    name: str,
    kind: type | tuple[type, ...],
    where: str,
    *,
    required: bool = True,
    non_empty: bool = True,
    default: Any = None,
    items: type | None = None,
) -> Any:
    """Return ``record[name]`` checked against ``kind`` (and, for lists, each item against
    ``items``); raise :class:`DataError` naming ``where`` (e.g. ``data.jsonl:12``) and the field
    when it is missing, of the wrong type, or empty."""
    if name not in record or record[name] is None:
        if required:
            raise DataError(f"{where}: missing field '{name}'")
        return default
    value = record[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise DataError(f"{where}: field '{name}' must be {wanted}, got {type(value).__name__}")
    if non_empty and isinstance(value, (str, list, dict)) and not (value.strip() if isinstance(value, str) else value):
        raise DataError(f"{where}: field '{name}' is empty")
    if items is not None and isinstance(value, list):
        for j, item in enumerate(value):
            if not isinstance(item, items):
                raise DataError(
                    f"{where}: field '{name}'[{j}] must be {_TYPE_NAMES.get(items, items.__name__)}, "
                    f"got {type(item).__name__}"
                )
    return value
