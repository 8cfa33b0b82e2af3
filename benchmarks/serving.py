"""The Space's serving path: batched generation versus one request at a time, latency under load, and
what the live metrics cost.

Model: a tiny topic BART (``--preset tiny``, ``tag`` method, two training steps), 32 new tokens,
4 beams, on whatever device ``load_seq2seq`` picks. Inputs: 16 bundled BBC test articles, each with
its own topic.

* naive: ``summarizer.summarize([document], [controls])`` for each request in turn;
* SteerSum: the same 16 requests as 16 concurrent ``Service.summarize`` calls (the path every
  request takes after HTTP), which the :class:`space.service.Batcher` gathers into one ``summarize``;
  the live metrics are included in its time, so the ratio is conservative;
* under load: 16 ``gradio_client`` clients × 10 requests each against the app on 127.0.0.1; latency
  per request as the client sees it. On a tiny CPU model the HTTP round trip (~0.1 s of client and
  server CPU per request) is a large part of it; on a real model generation dominates;
* metrics: ``Variant.score`` + ``evidence`` time as a share of the server-side request time.
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

CLIENTS, REQUESTS_PER_CLIENT, NEW_TOKENS = 16, 10, 64


def tiny_checkpoint(folder: Path) -> Path:
    from training.__main__ import main as train

    records = load_source("bbc_summary", "val")[:8]
    train_file = folder / "train.jsonl"
    train_file.write_text("".join(json.dumps({"id": r["id"], "document": r["source"], "controls": {"topic": r["topic"]},
                                              "target": r["target"]}) + "\n" for r in records))
    out = folder / "checkpoints" / "topic-tiny"
    train(["topic", "--preset", "tiny", "--method", "tag", "--train-file", str(train_file), "--max-steps", "2",
           "--output-dir", str(out), "--report-to", "none", "--max-target-length", str(NEW_TOKENS),
           "--save-strategy", "no", "--dataloader-pin-memory", "false", "--disable-tqdm", "true"])
    return out.parent


def requests() -> list[tuple[str, dict]]:
    records = load_source("bbc_summary", "test")[::6][:CLIENTS]
    return [(r["source"], {"topic": r["topic"]}) for r in records]


def concurrently(url: str, jobs: list[list[tuple[str, dict]]]) -> tuple[float, list[list], list[float], list[str]]:
    """One client per job list, all at once: wall time, results per client, latencies, failures."""
    from gradio_client import Client

    clients = [Client(url, verbose=False) for _ in jobs]
    results, latencies, failures = [[] for _ in jobs], [], []

    def work(number: int) -> None:
        for document, controls in jobs[number]:
            start = time.perf_counter()
            try:
                results[number].append(clients[number].predict(document, "topic", "local/topic-tiny",
                                                                json.dumps(controls), api_name="/summarize"))
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
    from space.app import build_app
    from space.catalog import build_catalog
    from space.service import Service

    with tempfile.TemporaryDirectory() as tmp:
        service = Service(build_catalog(tiny_checkpoint(Path(tmp)), catalog_file=None))
        summarizer = service.summarizer("topic", "local/topic-tiny")
        batch_sizes = service.cache.get(service.catalog.get("topic", "local/topic-tiny")).batch_sizes
        inputs = requests()
        service.summarize(inputs[0][0], "topic", "local/topic-tiny", inputs[0][1])  # warm-up: first-call costs out

        def serve_all() -> list[dict]:
            with ThreadPoolExecutor(len(inputs)) as pool:
                return list(pool.map(lambda item: service.summarize(item[0], "topic", "local/topic-tiny", item[1]), inputs))

        naive_time, naive = best_time(lambda: [summarizer.summarize([d], [c])[0].text for d, c in inputs], repeats=2)
        mark = len(batch_sizes)
        served_time, served = best_time(serve_all, repeats=2)
        served_batches, mark = batch_sizes[mark:], len(batch_sizes)

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        demo = build_app(service)
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
        try:
            jobs = [[item] * REQUESTS_PER_CLIENT for item in inputs]
            load_time, _, latencies, failures = concurrently(f"http://127.0.0.1:{port}/", jobs)
        finally:
            demo.close()
        load_batches = batch_sizes[mark:]

    assert not failures, failures[:3]
    agree = sum(a == b["summary"] for a, b in zip(naive, served))
    assert agree == len(naive), f"batched outputs differ from one-at-a-time outputs for {len(naive) - agree} requests"
    metric_share = [r["seconds"]["metrics"] / (r["seconds"]["generate"] + r["seconds"]["metrics"]) for r in served]
    p50, p95 = np.percentile(latencies, [50, 95])
    n = len(inputs)
    return "\n".join([
        "## Space serving: batched generation vs one request at a time",
        "",
        f"Tiny topic BART (`--preset tiny`, tag), {NEW_TOKENS} new tokens, 4 beams; {n} BBC test articles "
        f"(371–1,653 tokens), each with its own topic. Best of two runs each.",
        "",
        f"| way | time for {n} requests | requests/s | ratio | outputs identical |",
        "|---|---|---|---|---|",
        f"| naive: `summarize([doc])`, one request at a time | {naive_time:.2f} s | {n / naive_time:.1f} | 1.0× | — |",
        f"| SteerSum: {n} concurrent `Service.summarize` calls, batched ({'+'.join(map(str, served_batches))} in 2 runs) | "
        f"{served_time:.2f} s | {n / served_time:.1f} | {naive_time / served_time:.1f}× | {agree}/{n} |",
        "",
        f"Under load over HTTP ({CLIENTS} `gradio_client` clients × {REQUESTS_PER_CLIENT} requests, loopback, same "
        f"process): {len(latencies)} requests in {load_time:.1f} s ({len(latencies) / load_time:.1f} requests/s), "
        f"latency p50 {p50:.2f} s, p95 {p95:.2f} s, {len(failures)} failures; generate calls took batches of "
        f"{np.mean(load_batches):.1f} requests on average.",
        "",
        f"Live metrics (STAS + evidence terms) cost {100 * np.mean(metric_share):.2f}% of the server-side request "
        f"time on average (max {100 * max(metric_share):.2f}%; target < 5%).",
    ])


if __name__ == "__main__":
    print(run())
