"""``python -m benchmarks [GROUP ...]``: run benchmark groups, update ``benchmarks/RESULTS.md``.

Each benchmark module has ``run() -> str`` returning a markdown section; the section replaces the
one with the same name in RESULTS.md, so groups can be re-run on their own.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import re
import time
from pathlib import Path

import torch

GROUPS = {
    "metrics": ["benchmarks.stas", "benchmarks.egises"],
    "topic": ["benchmarks.tagging"],
    "entity": ["benchmarks.entity"],
    "space": ["benchmarks.serving"],
    "generation": ["benchmarks.generation"],
    "ccs": ["benchmarks.lora"],
    "persona": ["benchmarks.persona"],
    "tdsum": ["benchmarks.tdsum"],
    "bf16": ["benchmarks.bf16_training"],
    "grouping": ["benchmarks.length_grouping"],
    "compaction": ["benchmarks.compaction"],
    "guidance": ["benchmarks.guidance"],
    "store": ["benchmarks.store_latency"],
}
RESULTS = Path(__file__).with_name("RESULTS.md")
HEADER = "# SteerSum benchmarks\n\nRatios are measured in the same run, on the same inputs, same outputs checked.\n"


def machine() -> str:
    """Where a run was made. Timings on CPU depend on its instructions (the int8 and bf16 kernels use
    AVX512-BF16 and AMX where there are), so the footer names them."""
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU only"
    bf16 = [
        name
        for name, has in (
            ("AVX512-BF16", torch.cpu._is_avx512_bf16_supported()),
            ("AMX", torch.cpu._is_amx_tile_supported()),
        )
        if has
    ]
    return (
        f"{platform.machine()}, {os.cpu_count()} CPU cores ({' + '.join(bf16) or 'no bf16 instructions'}), "
        f"{device}, torch {torch.__version__}"
    )


def update_results(name: str, body: str) -> None:
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else HEADER
    block = f"<!-- bench:{name} -->\n{body.strip()}\n<!-- /bench:{name} -->"
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text, encoding="utf-8")


def main() -> None:
    import sys

    if sys.argv[1:2] == ["leaderboard"]:  # a command with its own flags (benchmarks/leaderboard/), not a timing group
        from benchmarks.leaderboard.cli import main as leaderboard
        from training.distributed import LaunchError, checked_state

        try:  # the launch's process group, before the harness shares the systems out: fewer than asked stops here
            checked_state()  # a process that finished its share waits for the slowest one at a barrier
        except LaunchError as err:
            sys.exit(f"error: {err}")
        return leaderboard(sys.argv[2:])
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__.splitlines()[0],
        epilog="python -m benchmarks leaderboard --help: the evaluation leaderboard",
    )
    parser.add_argument("groups", nargs="*", help=f"groups to run (default: all): {', '.join(GROUPS)}")
    args = parser.parse_args()
    unknown = sorted(set(args.groups) - set(GROUPS))
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}")
    for group in args.groups or list(GROUPS):
        for module_name in GROUPS[group]:
            start = time.perf_counter()
            body = importlib.import_module(module_name).run()
            stamp = (
                f"\n\n_{time.strftime('%Y-%m-%d')}, {machine()}; whole benchmark {time.perf_counter() - start:.1f} s; "
                f"load average {os.getloadavg()[0]:.1f} at the end (other processes share the machine)._"
            )
            update_results(module_name.split(".")[-1], body + stamp)
            print(body + stamp + "\n")


if __name__ == "__main__":
    main()
