"""``python -m store``: the stored models (name, variant, method, format, steps, data, control effect) and
the budget check; it exits 1 over budget. ``python -m store remove NAME`` takes a stored model out.
Publishing the store is ``python -m hub_cards publish ORG`` (:mod:`hub_cards.publish`): the layer above the
store."""

from __future__ import annotations

import sys

from . import EMPTY, MAX_FILE_BYTES, MAX_TOTAL_BYTES, budget_problems, file_sizes, read_index, remove


def listing() -> int:
    models = read_index()
    if not models:
        print(EMPTY)
    for m in models:
        print(
            f"{m.name:24} {m.variant:8} {m.method:16} {m.format:5} steps {m.steps}  data {', '.join(m.data)}  "
            f"effect {m.effect_text()}"
        )
    total = sum(file_sizes().values())
    print(
        f"store: {total / 1e6:.2f} MB of {MAX_TOTAL_BYTES / 1e6:.0f} MB; largest file "
        f"{max(file_sizes().values(), default=0) / 2**20:.2f} MiB of {MAX_FILE_BYTES / 2**20:.0f} MiB"
    )
    problems = budget_problems()
    for problem in problems:
        print(f"over budget: {problem}")
    return 1 if problems else 0


def main() -> None:
    if sys.argv[1:2] == ["remove"] and len(sys.argv) == 3:
        try:
            remove(sys.argv[2])
        except (KeyError, ValueError) as err:
            sys.exit(f"python -m store remove: {err.args[0]}")
        print(f"removed {sys.argv[2]} from the store")
        sys.exit(0)
    if sys.argv[1:]:
        sys.exit("usage: python -m store [remove NAME]")
    sys.exit(listing())


if __name__ == "__main__":
    main()
