"""Many processes: what the launcher asked for, what a run got, and why a mismatch stops it.

Training (``python -m training V``), the zoo and the leaderboard run unchanged under a launcher;
each process then trains on its share of every batch (DDP averages the gradients) or evaluates its
share of the systems, and the first process alone writes checkpoints, records, reports and the store:

    torchrun --nproc_per_node N -m training V ...                          # N GPUs of one machine
    accelerate launch --multi_gpu --num_processes N -m training V ...      # the same, through accelerate
    accelerate launch --config_file training/configs/fsdp-flan-t5-lora.yaml -m training ccs ...  # sharded
    torchrun --nproc_per_node N -m training V ... --use_cpu True           # N CPU processes over gloo

A launch line that quietly starts one process looks, from outside, like one that starts eight, and
the cases that do so are easy to type:

* ``accelerate launch --cpu --num_processes N`` (or ``--num_processes N`` without ``--multi_gpu`` on a
  machine without GPUs) runs accelerate's single-process launcher: it starts CPU processes only
  through MPI (``--mpirun_hostfile``), and otherwise runs one process that sees no other.
* ``torchrun`` (or ``accelerate launch --multi_gpu``) on a machine without GPUs starts N processes,
  but unless the Trainer is told it is on a CPU (``--use_cpu True``) each one sets up no process
  group and trains alone: N copies of one run, writing into one folder.

:func:`check_processes` turns both into an error that names the command that works.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# What each kind of launcher sets: torchrun and accelerate's multi-GPU launcher set WORLD_SIZE; mpirun
# (Intel MPI / MPICH, Open MPI, MVAPICH) its own. accelerate's own CPU detection reads the same names.
WORLD_SIZE_VARIABLES = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
CPU_COMMAND = "torchrun --nproc_per_node N -m ... --use_cpu True"
GPU_COMMAND = "accelerate launch --multi_gpu --num_processes N -m ... (or torchrun --nproc_per_node N -m ...)"


class LaunchError(ValueError):
    """The launcher asked for more processes than the run has; the message says why and what to type."""


def launched_processes(environ: Mapping[str, str] | None = None) -> int | None:
    """How many processes the launcher says it started (None: no launcher set a world size)."""
    environ = os.environ if environ is None else environ
    for name in WORLD_SIZE_VARIABLES:
        if environ.get(name, "").strip().isdigit():
            return int(environ[name])
    return None


def accelerate_single_launch(environ: Mapping[str, str]) -> bool:
    """Whether accelerate's single-process launcher ran this process after being asked for several:
    it sets ``ACCELERATE_MIXED_PRECISION`` for every process it starts, and ``MASTER_ADDR`` only when
    ``--num_processes`` or ``--num_machines`` is above 1, yet sets no world size."""
    return (
        "ACCELERATE_MIXED_PRECISION" in environ
        and bool(environ.get("MASTER_ADDR"))
        and launched_processes(environ) is None
    )


def check_processes(num_processes: int, environ: Mapping[str, str] | None = None) -> None:
    """Raise :class:`LaunchError` when the launcher asked for more processes than the run has
    (``num_processes``: what accelerate's state reports, e.g. ``TrainingArguments.world_size``)."""
    environ = os.environ if environ is None else environ
    launched = launched_processes(environ)
    if launched is not None and launched != num_processes:
        raise LaunchError(
            f"the launcher started {launched} processes but this one runs in a group of {num_processes}: "
            + (
                "without a GPU each process trains alone unless told it is on a CPU; add --use_cpu True "
                f"({CPU_COMMAND}), and the processes join one group over gloo"
                if num_processes == 1
                else "check that every process sees the same launcher settings"
            )
        )
    if num_processes == 1 and accelerate_single_launch(environ):
        raise LaunchError(
            "accelerate launch was asked for several processes but started one: with --cpu (or without "
            "--multi_gpu) it starts CPU processes only through MPI (--mpirun_hostfile). On CPUs run "
            f"{CPU_COMMAND}; on GPUs {GPU_COMMAND}"
        )


# How long a process waits at a barrier while process 0 works alone (evaluating a model, on a CPU with a
# sweep over control strengths, takes the longest); torch's own limit, 30 minutes, is too short for it.
BARRIER_HOURS = 12


def checked_state(cpu: bool | None = None, timeout_hours: float = BARRIER_HOURS):
    """accelerate's ``PartialState`` for this launch, after :func:`check_processes`: the process group
    of a command that is not a Trainer (the zoo, the leaderboard). Without GPUs the processes talk over
    gloo. The group made here outlives later ``PartialState`` resets (each ``TrainingArguments`` makes
    one; they find the group initialized and keep it), so ``timeout_hours`` holds for every barrier."""
    from datetime import timedelta

    import torch
    from accelerate import PartialState

    state = PartialState(
        cpu=not torch.cuda.is_available() if cpu is None else cpu, timeout=timedelta(hours=timeout_hours)
    )
    check_processes(state.num_processes)
    return state


def end_processes() -> None:
    """Destroy this process's group, if a launch made one, before the interpreter exits: left to exit,
    gloo's threads are destroyed while still joinable and the process aborts ("terminate called without
    an active exception", exit code -6) after its work is done, which fails the whole launch."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
