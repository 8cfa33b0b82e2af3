"""The Space's serving path: batched generation versus one request at a time, latency under load, and
what the live metrics cost.

Model: :func:`benchmarks.generation.topic_model`, the zoo's trained topic model when it is here (under its
own beams and target length), else a random BART of its shape (``NEW_TOKENS`` new tokens, 4 beams), with
the checkpoint's :class:`variants.seq2seq.GenerationSettings`, ``torch.set_num_threads(THREADS)``
(``STEERSUM_BENCH_THREADS``). Inputs: 16 bundled BBC test articles, each with its own topic.

* naive: ``summarizer.summarize([document], [controls])`` for each request in turn;
* SteerSum: the same 16 requests as 16 concurrent ``Service.summarize`` calls (the path every
  request takes after HTTP), which the :class:`space.batching.Batcher` gathers into one ``summarize``;
  the live metrics are included in its time, so the ratio is conservative;
* under load: 16 ``gradio_client`` clients × 10 requests each against the app on 127.0.0.1; latency
  per request as the client sees it (the HTTP round trip costs ~0.1 s of client and server CPU per
  request; generation dominates);
* metrics: ``Variant.score`` + ``evidence`` time as a share of the server-side request time;
* a 400-word article alone: the server-side time of one ``Service.summarize`` call, median of 5.

The first three are measured with the checkpoint's own settings (fp32) and with ``dtype="int8"``
(what ``python -m space --dtype int8`` serves); the load test with the model's own settings.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks import best_time
from variants.sources import load_source

CLIENTS, REQUESTS_PER_CLIENT, NEW_TOKENS = 16, 10, 32


def four_hundred_words() -> str:
    """A BBC test article cut to its first 400 words."""
    article = next(r["source"] for r in load_source("bbc_summary", "test") if len(r["source"].split()) > 400)
    return " ".join(article.split()[:400])


def requests() -> list[tuple[str, dict]]:
    records = load_source("bbc_summary", "test")[::6][:CLIENTS]
    return [(r["source"], {"topic": r["topic"]}) for r in records]


def concurrently(
    url: str, model: str, jobs: list[list[tuple[str, dict]]]
) -> tuple[float, list[list], list[float], list[str]]:
    """One client per job list, all at once: wall time, results per client, latencies, failures."""
    from gradio_client import Client

    clients = [Client(url, verbose=False) for _ in jobs]
    results, latencies, failures = [[] for _ in jobs], [], []

    def work(number: int) -> None:
        for document, controls in jobs[number]:
            start = time.perf_counter()
            try:
                results[number].append(
                    clients[number].predict(document, "topic", model, json.dumps(controls), api_name="/summarize")
                )
            except Exception as err:  # counted, not raised: the point is how many fail
                failures.append(repr(err))
            latencies.append(time.perf_counter() - start)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(jobs))]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, results, latencies, failures


def run() -> str:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from benchmarks.generation import THREADS, topic_model
    from space.app import build_app
    from space.batching import on_torch_thread
    from space.catalog import build_catalog
    from space.service import Service

    torch.set_num_threads(THREADS)
    with tempfile.TemporaryDirectory() as tmp:
        folder, described = topic_model(Path(tmp), NEW_TOKENS)
        model = f"local/{folder.name}"
        service = Service(build_catalog(folder.parent, catalog_file=None))
        summarizer = service.summarizer("topic", model)
        batch_sizes = service.cache.get(service.catalog.get("topic", model)).batch_sizes
        inputs = requests()
        article = four_hundred_words()
        own = summarizer.settings

        def serve_all() -> list[dict]:
            with ThreadPoolExecutor(len(inputs)) as pool:
                return list(pool.map(lambda item: service.summarize(item[0], "topic", model, item[1]), inputs))

        measured = {}
        for settings in (own, own.but(dtype="int8")):
            summarizer.settings = settings
            service.summarize(inputs[0][0], "topic", model, inputs[0][1])  # warm-up: first-call costs out
            alone = [service.summarize(article, "topic", model, {"topic": "business"})["seconds"] for _ in range(5)]
            naive_times, served_times, served_batches = [], [], []
            for _ in range(2):  # interleaved, so that what else runs on the machine weighs on both alike
                naive_s, naive = best_time(
                    lambda: on_torch_thread(  # the thread the Space generates on, so both alike
                        lambda: [summarizer.summarize([d], [c])[0].text for d, c in inputs]
                    ),
                    repeats=1,
                )
                mark = len(batch_sizes)
                served_s, served = best_time(serve_all, repeats=1)
                naive_times.append(naive_s), served_times.append(served_s), served_batches.extend(batch_sizes[mark:])
            measured[settings.dtype] = dict(
                naive_s=min(naive_times),
                served_s=min(served_times),
                batches=served_batches,
                naive=naive,
                served=served,
                alone_s=float(np.median([s["generate"] + s["metrics"] for s in alone])),
            )
        summarizer.settings = own
        mark = len(batch_sizes)

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        demo = build_app(service)
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
        try:
            jobs = [[item] * REQUESTS_PER_CLIENT for item in inputs]
            load_time, _, latencies, failures = concurrently(f"http://127.0.0.1:{port}/", model, jobs)
        finally:
            demo.close()
        load_batches = batch_sizes[mark:]

    assert not failures, failures[:3]
    n, rows = len(inputs), []
    for dtype, m in measured.items():
        agree = sum(a == b["summary"] for a, b in zip(m["naive"], m["served"]))
        # fp32 must match exactly; int8 quantizes activations per batch, so a summary may depend on its batch-mates
        assert agree == n or dtype == "int8", f"batched outputs differ from one at a time for {n - agree} requests"
        rows += [
            f"| {dtype}: naive, `summarize([doc])` one request at a time | {m['naive_s']:.2f} s | "
            f"{n / m['naive_s']:.2f} | 1.0× | — | {m['alone_s']:.2f} s |",
            f"| {dtype}: SteerSum, {n} concurrent `Service.summarize` calls, batched "
            f"({'+'.join(map(str, m['batches']))} in 2 runs) | {m['served_s']:.2f} s | {n / m['served_s']:.2f} | "
            f"{m['naive_s'] / m['served_s']:.2f}× | {agree}/{n} | |",
        ]
    served = measured[own.dtype]["served"]
    metric_share = [r["seconds"]["metrics"] / (r["seconds"]["generate"] + r["seconds"]["metrics"]) for r in served]
    p50, p95 = np.percentile(latencies, [50, 95])
    return "\n".join(
        [
            "## Space serving: batched generation vs one request at a time",
            "",
            f"{described}, generation settings {own.to_json()}, and the same with `dtype` int8 (`python -m space "
            f"--dtype int8`); `torch.set_num_threads({THREADS})`; {n} BBC test articles (cut to 512 tokens), each with "
            "its own topic. Best of two interleaved runs each; ratios in the same run, within a dtype.",
            "",
            f"| way | time for {n} requests | requests/s | ratio | outputs identical | a 400-word article alone |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            "A 400-word article alone: the server-side time of one `Service.summarize` call, median of 5.",
            "",
            f"Under load over HTTP ({CLIENTS} `gradio_client` clients × {REQUESTS_PER_CLIENT} requests, loopback, same "
            f"process, dtype {summarizer.settings.dtype}): {len(latencies)} requests in {load_time:.1f} s "
            f"({len(latencies) / load_time:.1f} requests/s), latency p50 {p50:.2f} s, p95 {p95:.2f} s, {len(failures)} "
            f"failures; generate calls took batches of {np.mean(load_batches):.1f} requests on average.",
            "",
            f"Live metrics (STAS + evidence terms) cost {100 * np.mean(metric_share):.2f}% of the server-side request "
            f"time on average (max {100 * max(metric_share):.2f}%; target < 5%).",
        ]
    )


if __name__ == "__main__":
    print(run())
