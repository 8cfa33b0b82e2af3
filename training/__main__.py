"""``python -m training``: train a variant, evaluate a model, or build a variant's training data
(the commands' code is in :mod:`training.cli`; this file only dispatches).

    python -m training topic --method tag --train-file F --eval-file F --output-dir DIR [--preset tiny] ...
    python -m training evaluate --model DIR_OR_HUB_ID_OR_baseline --variant topic --data F [--out report.json]
        (a checkpoint folder's report goes into the folder, where ``python -m hub_cards export`` reads it;
        ``--guidance G`` generates at control strength G and reports γ = 1 beside it, ``--constraints``
        enforces length bins and keywords, ``--save-default-guidance`` keeps G as the model's default,
        recording the split of ``--data`` it was chosen on: choose on val)
    python -m training build-data topic --out DIR
    python -m training base minilm --out DIR      (a BART checkpoint warm-started from MiniLM; training/base.py)
    python -m training general --preset minilm --output-dir DIR   (the general summarizer; training/general.py)
    python -m training zoo [--only V] [--minutes-per-model N] [--out checkpoints]   (every model; training/zoo.py)

Every variant's trainer takes the same data/model flags (``DataArguments``), its own flags, and all
of ``Seq2SeqTrainingArguments`` (epochs, steps, learning rate, batch size, gradient accumulation,
fp16/bf16, seed, ``--resume-from-checkpoint [PATH|auto]``, ...). Runs unchanged under ``torchrun`` and
``accelerate launch`` (:mod:`training.distributed`: N processes, process 0 writes; a launch that asked for
N and got one stops with the command that works).
Re-running a command on an output folder that holds ``checkpoint-N`` folders resumes from the
latest (``--overwrite-output-dir`` starts again from step 0). ``--push-to-hub`` checks the token
(``--hub-token``, else ``HF_TOKEN`` or the login cache) with the Hub before training starts; the
token is kept out of the checkpoint (``training_args.bin``).
``--adapter lora`` trains a peft adapter on ``--base-model`` instead of every weight (:mod:`training.adapter`;
the store's format, the zoo's default). On a CPU with AMX (bf16 matmuls faster than fp32) forward and backward run on a bf16 copy of the model
(``--bf16-weights``, :mod:`training.bf16`) unless ``--bf16-weights False``, ``--bf16`` or ``--fp16`` is given;
on one with AVX512-BF16 and no AMX, under bf16 autocast (``--bf16``).
"""

from __future__ import annotations

import logging
import sys

from .cli import VARIANTS, build_data, evaluate_command, train_command
from .distributed import end_processes

__all__ = ["VARIANTS", "main"]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    commands = [*VARIANTS, "evaluate", "build-data", "base", "general", "zoo"]
    if not argv or argv[0] not in commands:
        print(__doc__)
        sys.exit(0 if argv and argv[0] in ("-h", "--help") else 2)
    try:
        run_command(argv[0], argv[1:])
    finally:
        end_processes()


def run_command(command: str, rest: list[str]) -> None:
    if command == "evaluate":
        evaluate_command(rest)
    elif command == "build-data":
        build_data(rest[0] if rest else "", rest[1:])
    elif command == "base":
        from .base import main as base_main

        base_main(rest)
    elif command == "general":
        from .general import main as general_main

        general_main(rest)
    elif command == "zoo":
        from .zoo import main as zoo_main

        zoo_main(rest)
    else:
        train_command(command, rest)


if __name__ == "__main__":
    main()
