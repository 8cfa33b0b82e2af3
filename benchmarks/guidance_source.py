"""Guidance on the stored GSum and TDSum models: their source encoded once for a batch and its
control-free twins (as served), against encoding the twins' sources again, and plain generation, in
the same run on the same examples (``python -m benchmarks guidance-source``; what is timed: ``run``'s
section text). The two guided ways must write the same summaries.
"""

from __future__ import annotations

import contextlib
import os
from unittest import mock

import torch

from benchmarks.guidance import interleaved

THREADS = int(os.environ.get("STEERSUM_BENCH_THREADS", "1"))
MODELS = ("entity-sentences", "tdsum-tdsum")
N_EXAMPLES, GAMMA, REPEATS = 8, 2.0, 3


def summaries(summarizer, records, guidance: float, source_once: bool = True) -> list[str]:
    from variants.seq2seq import Steering

    settings = summarizer.settings.but(guidance=guidance, batch_size=len(records))
    encode_again = mock.patch.object(Steering, "encode_once", lambda self, model, rows, inputs: (inputs, None, None))
    with contextlib.nullcontext() if source_once else encode_again:  # encode_again: how guidance ran before
        return [
            s.text
            for s in summarizer.summarize(
                [r["document"] for r in records], [r["controls"] for r in records], settings=settings
            )
        ]


def run() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.set_num_threads(THREADS)
    from variants import load_summarizer

    lines = [
        "## Guidance on the stored GSum and TDSum: the source encoded once for a batch and its twins",
        "",
        "GSum's guidance and TDSum's TF-IDF scores travel beside the source, and neither model's source "
        "encoding reads them, so under guidance a batch and its control-free twins share one encoding of the "
        f"source (`Steering.encode_once`). Each stored model ({', '.join(f'`{m}`' for m in MODELS)}) as served "
        f"(its record's beams, dtype and constraints) on its variant's first {N_EXAMPLES} test examples, one "
        "batch as an evaluation runs it, and the first alone as the Space serves a request: plain generation "
        f"(γ = 1), guided at γ = {GAMMA:g} as served, and guided with the twins' sources encoded again (as "
        f"guidance ran before). Run in turn, best of {REPEATS} each, `torch.set_num_threads({THREADS})`.",
        "",
        "| model | examples | plain (γ = 1) | guided, source once (served) | ratio | guided, source encoded again | "
        "ratio | same summaries |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in MODELS:
        summarizer = load_summarizer(name)
        records = summarizer.variant.evaluation.test_examples(N_EXAMPLES)
        summaries(summarizer, records[:1], GAMMA)  # warm-up: first-call costs out of the timings
        for batch in (records, records[:1]):
            (plain_s, _), (once_s, once), (again_s, again) = interleaved(
                lambda: summaries(summarizer, batch, 1.0),
                lambda: summaries(summarizer, batch, GAMMA),
                lambda: summaries(summarizer, batch, GAMMA, source_once=False),
                repeats=REPEATS,
            )
            lines.append(
                f"| {name} | {len(batch)} | {plain_s:.2f} s | {once_s:.2f} s | {once_s / plain_s:.2f}× | "
                f"{again_s:.2f} s | {again_s / plain_s:.2f}× | {sum(a == b for a, b in zip(once, again))}"
                f"/{len(batch)} |"
            )
    lines += [
        "",
        "What stays above plain generation is the decoder on twice the rows at every step (the twins' "
        "guidance or scores are small to encode); a guided summary of another length moves a ratio either way.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
