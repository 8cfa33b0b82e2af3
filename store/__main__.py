"""``python -m store``: the stored models (name, variant, steps, data, control effect) and the budget check."""

from __future__ import annotations

import sys

from . import EMPTY, MAX_FILE_BYTES, MAX_TOTAL_BYTES, budget_problems, file_sizes, read_index


def main() -> None:
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
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
