"""Train the store's models on one GPU in a fixed time, and pack them into files of at most 15 MiB.

    python scripts/train_on_gpu.py --work ck --out OUT [--general-seconds 120] [--adapter-seconds 45]
                                   [--deadline-seconds 470] [--epochs 8] [--only topic tdsum ...] [--quick]

What it does:

1. the stored general summarizer (``store/models/general``, int8) is continued for ``--general-seconds``
   at batch 32 (``training.general.train_general``: it counts on from the stored model's steps);
2. the result is compacted (``store.compact``) and packed as ``general.tar.NN`` parts of 15 MiB;
3. the compact copy is expanded to fp32 (``python -m store.compact --expand``): the weights the store will
   serve, exactly, and the base every adapter trains on (``--adapters-only``: the stored one as it is);
4. each variant model of the zoo (``training.zoo_models.MODELS``, ``--method`` for another method) trains as a
   LoRA adapter on it for ``--adapter-seconds``, at most ``--epochs`` passes over its
   ``<work>/data/<variant>/train.jsonl``, then is appended to ``adapters-a.tar`` / ``adapters-b.tar``.

The stored models came from three runs on one H200 (the machine had no network: the wheels of the
packages it lacked and the training data built here by ``python -m training build-data`` travelled
beside the repository, with ``STEERSUM_DATA`` pointing at the bundled sources):

    --general-seconds 120 --adapter-seconds 45 --adapter-learning-rate 5e-4   # general, then tdsum, entity, ccs
    --adapters-only --only persona --adapter-rank 16 --adapter-targets q_proj,k_proj,v_proj,out_proj,fc1,fc2 \
        --adapter-learning-rate 1e-3 --epochs 16 --adapter-seconds 60
    --adapters-only --only topic --epochs 16 --adapter-seconds 45                # the zoo's prepend-tag recipe

Steps are the seconds over a training step timed at the model's full padded shape
(``training.zoo_training.measure_step_seconds``) plus the Trainer's own per-step work; a model still training
1.4x its seconds (and half a minute) later stops where it is (``--max-train-seconds``). A variant is
skipped when too little of ``--deadline-seconds`` is left. Back on the CPU,
``python -m training zoo --out <root> --max-steps 1 --store store/index.json`` evaluates what was unpacked
into ``<root>`` (``general/``, the adapters pointed at ``../general``) and stores what measures better.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository's packages

PART_BYTES = 15 * 2**20  # a returned file stays under 16 MiB
STEP_OVERHEAD_S = 0.03  # the Trainer's work per step beyond the timed forward/backward/AdamW (measured on an H200)
ORDER = ("topic", "tdsum", "entity", "ccs", "persona")
TAR = {
    "topic": "adapters-a",
    "tdsum": "adapters-a",
    "entity": "adapters-a",
    "ccs": "adapters-b",
    "persona": "adapters-b",
}


class Clock:
    def __init__(self, deadline: float):
        self.start, self.deadline = time.time(), deadline

    def left(self) -> float:
        return self.deadline - (time.time() - self.start)

    def log(self, message: str) -> None:
        print(f"[{time.time() - self.start:6.1f}s] {message}", flush=True)


def stage_seconds(seconds: float) -> float:
    """A stage's Trainer stops at 1.4x its planned seconds and half a minute (``training.seq2seq.TimeLimit``):
    steps timed one at a time miss some of the Trainer's own work."""
    return 1.4 * seconds + 30


def pack(folder: Path, tar: Path, split: bool = False) -> list[Path]:
    """``folder`` appended to ``tar``; with ``split``, written whole and cut into ``PART_BYTES`` parts."""
    with tarfile.open(tar, "w" if split else "a") as archive:
        archive.add(folder, arcname=folder.name)
    if not split:
        return [tar]
    data = tar.read_bytes()
    tar.unlink()
    parts = [tar.with_name(f"{tar.name}.{i:02d}") for i in range(0, (len(data) + PART_BYTES - 1) // PART_BYTES)]
    for i, part in enumerate(parts):
        part.write_bytes(data[i * PART_BYTES : (i + 1) * PART_BYTES])
    return parts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--work", type=Path, default=Path("ck"), help="working folder; holds data/<variant>/train.jsonl"
    )
    parser.add_argument("--out", type=Path, required=True, help="where the packed files go")
    parser.add_argument(
        "--start", type=Path, default=Path("store/models/general"), help="the general summarizer to continue"
    )
    parser.add_argument("--general-seconds", type=float, default=120)
    parser.add_argument("--adapter-seconds", type=float, default=45)
    parser.add_argument("--deadline-seconds", type=float, default=470)
    parser.add_argument("--epochs", type=float, default=8, help="at most this many passes over a variant's data")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--only", nargs="+", choices=ORDER, default=list(ORDER))
    parser.add_argument(
        "--method",
        nargs="+",
        default=[],
        metavar="VARIANT=METHOD",
        help="train another of a variant's methods than the zoo's (e.g. topic=prepend-tag)",
    )
    parser.add_argument(
        "--adapters-only",
        action="store_true",
        help="train the adapters on --start as it is (it must be the stored general summarizer)",
    )
    parser.add_argument("--adapter-learning-rate", type=float, help="for the variants but ccs (default: the zoo's)")
    parser.add_argument("--adapter-rank", type=int, help="LoRA rank of the variants but ccs (default: the trainer's)")
    parser.add_argument("--adapter-targets", help="their LoRA modules, comma-separated (default: the trainer's)")
    parser.add_argument("--quick", action="store_true", help="two steps per model on short inputs: a plumbing check")
    a = parser.parse_args(argv)

    from store.compact import expand, weights_fingerprint, write_compact
    from training.general import train_general
    from training.zoo_models import MODELS, Budget
    from training.zoo_training import measure_step_seconds, remove_checkpoints, train_variant_model

    methods = dict(pair.split("=", 1) for pair in a.method)
    clock = Clock(a.deadline_seconds)
    a.out.mkdir(parents=True, exist_ok=True)
    batch = 2 if a.quick else a.batch_size
    general = a.work / "general"
    if not a.adapters_only and not (general / "steersum.json").is_file():
        start = expand(a.start, a.work / "start")  # plain from_pretrained, for the step timing
        source, target = (32, 8) if a.quick else (256, 128)
        step = measure_step_seconds(start, batch, source, target)
        steps = 2 if a.quick else max(1, int(a.general_seconds / (step + STEP_OVERHEAD_S)))
        clock.log(f"general: {step * 1000:.0f} ms a step at batch {batch}: {steps} steps")
        train_general(
            str(a.start),
            general,
            steps,
            max_examples=8 if a.quick else None,
            batch_size=batch,
            save_steps=10**6,
            learning_rate=2e-4,
            max_source_length=source,
            max_target_length=target,
            max_seconds=stage_seconds(a.general_seconds),
        )
        remove_checkpoints(general)
    compact = a.start if a.adapters_only else a.work / "general-int8"
    if not (compact / "steersum.json").is_file():
        write_compact(general, compact)
        clock.log("packed " + ", ".join(p.name for p in pack(compact, a.out / "general.tar", split=True)))
    served = a.work / "served"
    if not (served / "model.safetensors").is_file():
        expand(compact, served)
    clock.log(f"adapters train on {served} (fingerprint {weights_fingerprint(served)[:12]})")

    for variant in [v for v in ORDER if v in a.only]:
        model = next(m for m in MODELS if m.variant == variant)
        model = dataclasses.replace(model, method=methods.get(variant, model.method))
        if variant != "ccs":
            flags = (("--adapter-rank", str(a.adapter_rank)) if a.adapter_rank else ()) + (
                ("--adapter-targets", a.adapter_targets) if a.adapter_targets else ()
            )
            model = dataclasses.replace(
                model, learning_rate=a.adapter_learning_rate or model.learning_rate, train=model.train + flags
            )
        if clock.left() < a.adapter_seconds + 45:
            clock.log(f"{model.name}: skipped, {clock.left():.0f} s left")
            continue
        data = a.work / "data" / variant
        with open(data / "train.jsonl", encoding="utf-8") as lines:
            examples = sum(1 for _ in lines)
        source, target = (32, 8) if a.quick else (model.source_tokens, model.target_tokens)
        step = measure_step_seconds(served, batch, source, target)
        steps = (
            2
            if a.quick
            else max(1, min(int(a.adapter_seconds / (step + STEP_OVERHEAD_S)), int(a.epochs * examples / batch)))
        )
        clock.log(f"{model.name}: {step * 1000:.0f} ms a step: {steps} steps ({steps * batch / examples:.1f} passes)")
        budget = Budget(
            0,
            max_steps=steps,
            batch_size=batch,
            lengths=(source, target) if a.quick else None,
            max_train_samples=4 if a.quick else None,
            max_train_seconds=stage_seconds(a.adapter_seconds),
        )
        try:
            train_variant_model(model, served, data, a.work / model.name, budget)
        except Exception as err:  # noqa: BLE001 - one variant's failure leaves the others their time
            clock.log(f"{model.name}: failed: {type(err).__name__}: {err}")
            continue
        remove_checkpoints(a.work / model.name)
        pack(a.work / model.name, a.out / f"{TAR[variant]}.tar")
        clock.log(f"{model.name}: packed")
    clock.log("done")


if __name__ == "__main__":
    main()
