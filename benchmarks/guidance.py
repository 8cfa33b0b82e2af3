"""The time cost of classifier-free guidance (variants/classifier_free_guidance.py, served by
variants/speedups.py): guided generation (γ = 2) against plain generation (γ = 1) in the same run, on the
same inputs, three ways: as served, each row decoded beside its control-free twin in one forward pass; the
unconditional rows in a pass of their own (with their own cache following the beams: the processor given
to any ``generate`` call); and the unconditional pass recomputed from the whole prefix at every step (what
one does without following beam search's reordering).

Model: the converted MiniLM-BART base (``python -m training base minilm``: real MiniLM weights in a
BART encoder, the decoder warm-started from them; 37M parameters), used as a topic ``prepend``
summarizer: not trained to summarize, so its text means nothing, but its cost per step is a trained
model's of that shape. Without the MiniLM package, a random tiny BART (said so in the section).
Inputs: bundled BBC test super-articles (two articles interleaved, ``TopicEvaluation.test_examples``),
each with its topic, cut to 512 tokens; one batch, sorted by length, as the evaluation runs it, and
one article alone, as the Space serves a request.
Checks on the same batch: the unconditional pass run on the controlled input itself reproduces beam
search's own log-probabilities at every step (its cache follows the beams), and the cached and the
recomputed unconditional passes give the same greedy summaries.
Threads: ``STEERSUM_BENCH_THREADS`` (default 1: the machine is shared).
"""

from __future__ import annotations

import functools
import os
import time
from unittest import mock

import torch

from benchmarks import best_time

THREADS = int(os.environ.get("STEERSUM_BENCH_THREADS", "1"))
# Every summary is held to NEW_TOKENS tokens (min_new_tokens = max_new_tokens): the untrained base would
# stop after ~13 words, where encoding two 512-token sources is most of the work; a trained model writes
# summaries of this length (the BBC references run to ~100 words), so the ratio is the one a user meets.
N_EXAMPLES, NEW_TOKENS, BEAMS, MAX_SOURCE, GAMMA = 8, 64, 4, 512, 2.0


def summarizer_for_timing():
    """A topic ``prepend`` summarizer on the converted MiniLM-BART base, and how to describe it."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from variants import get_variant
    from variants.seq2seq import Seq2SeqSummarizer, add_control_tokens
    from variants.topic import SPECIAL_TOKENS, default_assets

    try:
        from training.base import ensure_base

        folder = ensure_base("minilm")
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
        described = "the converted MiniLM-BART base (real MiniLM weights, 6+6 layers, d_model 384)"
    except (ImportError, OSError) as err:  # no MiniLM package: a tiny random BART
        from transformers import BartForConditionalGeneration

        from variants.presets import tiny_bart_config, tiny_tokenizer

        tokenizer = tiny_tokenizer()
        model = BartForConditionalGeneration(tiny_bart_config(tokenizer)).eval()
        described = f"a tiny random BART (the MiniLM base could not be built: {err})"
    add_control_tokens(tokenizer, model, SPECIAL_TOKENS)
    record = {"max_source_length": MAX_SOURCE, "max_target_length": NEW_TOKENS, "num_beams": BEAMS}
    summarizer = Seq2SeqSummarizer(
        get_variant("topic"), "minilm-bart", "prepend", model, tokenizer, default_assets(), record
    )
    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    return summarizer, f"{described}, {n_params:.0f}M parameters"


WAYS = ("one pass", "own pass", "recomputed")  # how the unconditional rows are decoded (the module's docstring)


def summaries(summarizer, records, settings, way: str = "one pass") -> list[str]:
    from variants.speedups import PairedGuidance, Speedups

    processor = functools.partial(PairedGuidance, use_cache=way != "recomputed")
    with (
        mock.patch.object(Speedups, "guidance_class", processor),
        mock.patch.object(PairedGuidance, "pairs", lambda self, model: way == "one pass"),
    ):
        return [
            s.text
            for s in summarizer.summarize(
                [r["document"] for r in records],
                [r["controls"] for r in records],
                settings=settings,
                min_new_tokens=settings.max_new_tokens,
            )
        ]


class Probe:
    """A logits processor that runs the unconditional pass on the controlled input itself and records,
    at every step, how far its log-probabilities are from the ones ``generate`` computed (both
    normalized over the tokens the other processors left allowed); it changes nothing."""

    def __init__(self, model, batch):
        from variants.speedups import PairedGuidance

        self.guidance, self.gaps = PairedGuidance(model, GAMMA, dict(batch)), []

    def __call__(self, input_ids, scores):
        allowed = torch.isfinite(scores)
        own = self.guidance.get_unconditional_logits(input_ids).float().masked_fill(~allowed, -torch.inf)
        gap = (own.log_softmax(-1) - scores.float().masked_fill(~allowed, -torch.inf).log_softmax(-1))[allowed]
        self.gaps.append(gap.abs().max().item())
        return scores


def beams_followed(summarizer, records) -> float:
    """The largest gap, over every step of a beam search, between the unconditional pass run on the
    controlled input and ``generate``'s own log-probabilities: ~1e-6 when its cache follows the beams."""
    from transformers import LogitsProcessorList

    from variants.steering import encode

    variant, assets = summarizer.variant, summarizer.assets
    prepared = [
        variant.prepare(r["document"], variant.validate(r["controls"], assets), summarizer.method, assets)
        for r in records
    ]
    batch, _ = encode(summarizer.tokenizer, prepared, MAX_SOURCE)
    probe = Probe(summarizer.model, batch)
    with torch.inference_mode():
        summarizer.model.generate(
            **batch,
            num_beams=BEAMS,
            max_new_tokens=NEW_TOKENS,
            early_stopping=True,
            logits_processor=LogitsProcessorList([probe]),
        )
    return max(probe.gaps)


def interleaved(*functions, repeats: int = 3):
    """The best time and last result of each call, run in turn (first, second, ..., first, ...), so a
    change in the machine's load falls on all alike."""
    times, results = [[] for _ in functions], [None] * len(functions)
    for _ in range(repeats):
        for i, function in enumerate(functions):
            start = time.perf_counter()
            results[i] = function()
            times[i].append(time.perf_counter() - start)
    return [(min(t), r) for t, r in zip(times, results)]


def run() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.set_num_threads(THREADS)
    from variants import get_variant
    from variants.seq2seq import GenerationSettings

    records = get_variant("topic").evaluation.test_examples(N_EXAMPLES)
    summarizer, described = summarizer_for_timing()
    rows, checks = [], []
    for beams, batch in ((1, records), (BEAMS, records), (BEAMS, records[:1])):
        plain = GenerationSettings(num_beams=beams, max_new_tokens=NEW_TOKENS, batch_size=N_EXAMPLES)
        guided = plain.but(control_strength=GAMMA)
        summaries(summarizer, records[:2], plain)  # warm-up: first-call costs out of the timings
        (plain_s, plain_out), (one_s, one_out), (own_s, own_out) = interleaved(
            lambda: summaries(summarizer, batch, plain),
            lambda: summaries(summarizer, batch, guided),
            lambda: summaries(summarizer, batch, guided, "own pass"),
        )
        checks.append(("one pass and own pass", sum(a == b for a, b in zip(one_out, own_out)), len(batch)))
        recomputed_s = None
        if beams == 1:  # with beams, recomputing costs ~9x plain here: tests/test_guidance.py checks it on tiny models
            recomputed_s, recomputed_out = best_time(summaries, summarizer, batch, guided, "recomputed", repeats=1)
            checks.append(("cached and recomputed", sum(a == b for a, b in zip(one_out, recomputed_out)), len(batch)))

        def words(out):
            return sum(len(t.split()) for t in out) / len(out)

        rows.append((beams, len(batch), plain_s, one_s, own_s, recomputed_s, words(plain_out), words(one_out)))
    gap, n = beams_followed(summarizer, records), len(records)
    lines = [
        "## Guidance: the cost of the unconditional pass",
        "",
        f"{described}, as a topic `prepend` summarizer; {n} BBC test super-articles with their topics, cut to "
        f"{MAX_SOURCE} tokens, one batch; every summary {NEW_TOKENS} new tokens (min = max: the untrained base "
        f"would stop after ~13 words, where the second encoder pass is most of the cost); γ = {GAMMA:g} against γ = 1 (plain "
        f"generation) in the same process, plain and guided run in turn, best of 3 each (recomputed: 1 run); "
        f"`torch.set_num_threads({THREADS})`.",
        "",
        "| decoding | articles | plain (γ = 1) | guided, one pass (served) | ratio | guided, own pass | ratio | "
        "guided, recomputed each step | ratio | mean words plain / guided |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for beams, n_batch, plain_s, one_s, own_s, recomputed_s, plain_words, guided_words in rows:
        name = "greedy" if beams == 1 else f"{beams} beams"
        recomputed = (
            f"{recomputed_s:.2f} s | {recomputed_s / plain_s:.2f}×" if recomputed_s is not None else "not timed | —"
        )
        lines.append(
            f"| {name} | {n_batch} | {plain_s:.2f} s | {one_s:.2f} s | {one_s / plain_s:.2f}× | {own_s:.2f} s | "
            f"{own_s / plain_s:.2f}× | {recomputed} | {plain_words:.0f} / {guided_words:.0f} |"
        )
    same = "; ".join(f"{what}: the same summary for {k}/{total}" for what, k, total in checks)
    lines += [
        "",
        f"Checks: run on the controlled input itself, the cached unconditional pass gave {BEAMS}-beam search's "
        f"own log-probabilities at every step to within {gap:.1e} (its cache follows the beams' reordering). "
        f"Rows in order: {same} (with beams for every variant: tests/test_guidance.py). γ = 1 runs no second "
        "pass, so it costs nothing and gives today's tokens (tests/test_guidance.py). The guided ratio counts "
        "the second encoder pass and, per token, the decoder on twice the rows (one pass) or a second decoder "
        "step (own pass); a step of this model waits on reading its weights more than on the rows it "
        "multiplies, so the one pass costs least where the rows are fewest (one request). Only the "
        "self-attention cache is reordered (an example's beams share its encoder row); summaries of "
        "different lengths move a ratio either way.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
