"""How the Space runs models: one torch thread, batched requests, and a cache of loaded models.

* Every model load and ``generate`` runs on one thread, :data:`TORCH_THREAD` (see :func:`on_torch_thread`).
* Concurrent requests for one model are gathered by a :class:`Batcher` into one ``summarize`` call:
  a worker takes the first waiting request and more while they keep arriving (each within
  ``max_wait``, 5 ms; all within ``max_delay``, 50 ms; at most ``max_batch``), and generates them
  together. A batched ``generate`` costs far less than its requests one by one, so throughput
  grows with the load (``benchmarks/serving.py`` measures it).
* Models are loaded on first use and cached per (variant, model) id by :class:`ModelCache`, least
  recently used evicted past ``max_models`` or ``max_bytes`` of weights, so a Space with many
  checkpoints stays in memory. A model that fails to load raises :class:`ModelLoadError` naming it.
* Loading puts weights on the GPU in bf16 when there is one (:func:`variants.seq2seq.load_seq2seq`);
  on ZeroGPU hardware (the ``spaces`` package is importable) generation runs under ``spaces.GPU``.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

from variants import InputError, Summarizer
from variants.base import Summary
from variants.decoding_rules import TEXT_RULES

from .catalog import Entry

log = logging.getLogger(__name__)


class Switches(NamedTuple):
    """A request's generation switches: the control strength γ (None: the model's default) and whether
    to decode with the variant's rules (True: as served; False: the model alone). Requests batch together
    only when their switches match: both are settings of a whole ``generate`` call."""

    guidance: float | None = None
    constraints: bool = True


try:  # ZeroGPU: a GPU is attached only inside functions decorated with spaces.GPU
    import spaces

    on_gpu = spaces.GPU
except ImportError:

    def on_gpu(function):
        return function


# libgomp gives each thread that runs a parallel torch op a pool of its own OpenMP workers, and once
# the pools hold more threads than the machine has cores it stops spin-waiting them between ops: a
# model run on another thread than the one that loaded it was more than twice as slow (docs/log.md).
# So all torch work in the Space goes to one long-lived thread; on 2 cores two generate calls at once
# would only compete for them anyway.
TORCH_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="steersum-torch")


def on_torch_thread(function, *args):
    """``function(*args)`` run on :data:`TORCH_THREAD`; its result or its exception."""
    return TORCH_THREAD.submit(function, *args).result()


@on_gpu
def _generate(summarizer: Summarizer, documents: list[str], controls: list[dict], switches: Switches) -> list[Summary]:
    changes = {"control_strength": switches.guidance} if switches.guidance is not None else {}
    if not switches.constraints:  # no decoding rules, the text's rules included
        changes.update(constraints=False, **dict.fromkeys(TEXT_RULES, False))
    if summarizer.settings is None or not changes:  # a baseline has no settings: nothing to switch
        return summarizer.summarize(documents, controls)
    return summarizer.summarize(documents, controls, settings=summarizer.settings.but(**changes))


def generate(
    summarizer: Summarizer, documents: list[str], controls: list[dict], switches: Switches = Switches()
) -> list[Summary]:
    """Summaries on the torch thread, under the request's :class:`Switches` (default: as the model is served)."""
    return on_torch_thread(_generate, summarizer, documents, controls, switches)


class Batcher:
    """Gathers concurrent requests for one summarizer into batched ``summarize`` calls.

    The worker thread starts with the first request and ends after ``idle`` seconds without one, so
    an evicted model's batcher and weights go away by themselves.
    """

    def __init__(
        self,
        summarizer: Summarizer,
        max_wait: float = 0.005,
        max_delay: float = 0.05,
        max_batch: int = 16,
        idle: float = 30.0,
    ):
        self.summarizer, self.max_wait, self.max_delay = summarizer, max_wait, max_delay
        self.max_batch, self.idle = max_batch, idle
        self.batch_sizes: list[int] = []  # what each generate call got (the benchmark reads it)
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def submit(self, documents: list[str], controls: list[dict], switches: Switches = Switches()) -> list[Summary]:
        futures = [Future() for _ in documents]
        with self._lock:
            for document, control, future in zip(documents, controls, futures):
                self._queue.put((document, control, future, switches))
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="batcher", daemon=True)
                self._worker.start()
        return [future.result() for future in futures]

    def _work(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=self.idle)
            except queue.Empty:
                with self._lock:  # a submit holding the lock has either queued (we go on) or not (we stop)
                    if self._queue.empty():
                        self._worker = None
                        return
                continue
            # keep gathering while requests keep coming (gaps under max_wait), for at most max_delay
            batch, deadline = [first], time.monotonic() + self.max_delay
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get(timeout=max(0.0, min(self.max_wait, deadline - time.monotonic()))))
                except queue.Empty:
                    break
            self._run(batch)

    def _run(self, batch: list[tuple[str, dict, Future, Switches]]) -> None:
        # requests with different switches are generated apart (γ and the rules are settings of the whole call)
        for switches in dict.fromkeys(item[3] for item in batch):
            self._run_at([item[:3] for item in batch if item[3] == switches], switches)

    def _run_at(self, batch: list[tuple[str, dict, Future]], switches: Switches) -> None:
        self.batch_sizes.append(len(batch))
        batch = sorted(batch, key=lambda item: len(item[0]))  # similar lengths side by side: less padding
        try:
            summaries = generate(self.summarizer, [d for d, _, _ in batch], [c for _, c, _ in batch], switches)
        except Exception:
            # One bad request must not fail the others: run them one by one, each gets its own error.
            for document, controls, future in batch:
                try:
                    future.set_result(generate(self.summarizer, [document], [controls], switches)[0])
                except Exception as err:
                    future.set_exception(err)
            return
        for (_, _, future), summary in zip(batch, summaries):
            future.set_result(summary)


class ModelLoadError(InputError):
    """A model of the catalog that could not be loaded (missing or corrupt weights, out of memory):
    the message names the model and the reason, so an API caller learns what failed instead of an
    opaque error."""


def load_entry(entry: Entry) -> Summarizer:
    """``entry.load()`` on the torch thread; any failure becomes a :class:`ModelLoadError`."""
    try:
        return on_torch_thread(entry.load)
    except Exception as err:
        log.warning(
            "model %s (%s) failed to load from %s",
            entry.model,
            entry.variant,
            entry.location or entry.source,
            exc_info=True,
        )
        reason = str(err).strip().splitlines()[0][:300] if str(err).strip() else "no message"
        raise ModelLoadError(
            f"model {entry.model!r} of variant '{entry.variant}' could not be loaded "
            f"({type(err).__name__}: {reason}); pick another model"
        ) from None


class ModelCache:
    """Summarizers with their batchers, by (variant, model); least recently used dropped first."""

    def __init__(self, max_models: int = 4, max_bytes: int = 8 << 30, dtype: str | None = None, **batching: Any):
        self.max_models, self.max_bytes, self.dtype, self.batching = max_models, max_bytes, dtype, batching
        self._cache: OrderedDict[tuple[str, str], tuple[Batcher, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple[str, str], threading.Lock] = {}

    def get(self, entry: Entry) -> Batcher:
        key = (entry.variant, entry.model)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key][0]
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:  # concurrent first requests load the model once
            with self._lock:
                if key in self._cache:
                    return self._cache[key][0]
            summarizer = load_entry(entry)
            if self.dtype and summarizer.settings is not None:  # the Space's --dtype over the model's own
                summarizer.settings = summarizer.settings.but(dtype=self.dtype)
            batcher = Batcher(summarizer, **self.batching)
            with self._lock:
                self._cache[key] = (batcher, weight_bytes(batcher.summarizer))
                while len(self._cache) > 1 and (
                    len(self._cache) > self.max_models
                    or sum(size for _, size in self._cache.values()) > self.max_bytes
                ):
                    self._cache.popitem(last=False)
            return batcher

    def loaded(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._cache)


def weight_bytes(summarizer: Summarizer) -> int:
    if summarizer.model is None:  # a baseline: no weights
        return 0
    return sum(p.numel() * p.element_size() for p in summarizer.model.parameters())
