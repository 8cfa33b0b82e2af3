"""Named-entity recognition for the entity data builder: ``nlp.pipe`` in batches versus one ``nlp(text)``
call per document.

SteerSum's way (:func:`variants.entity.named_entities`, used by ``variants/entity/data.py`` and the
Space's suggestions) streams the articles through spaCy's ``nlp.pipe`` with ``batch_size=32``: the
entity recognizer's network runs on a whole batch at once. The naive way calls the pipeline on one
article at a time. A third row runs ``nlp.pipe`` in ``WORKERS`` processes (the builder's
``--workers``). All use the same loaded pipeline (only its entity recognizer) and the same
post-processing (:func:`variants.entity.entity_names`); the entities found must be identical.

Inputs: the first ``N_DOCUMENTS`` articles of the bundled ``bbc_summary/train`` split, a subset sized so
that the benchmark stays under a minute on two CPU cores. The model is loaded and warmed up before
either timing.
"""

from __future__ import annotations

from benchmarks import best_time
from variants.entity import entity_names, named_entities, ner
from variants.sources import load_source

N_DOCUMENTS = 200
BATCH_SIZE = 32
WORKERS = 2  # processes for the third row (the machine has 2 cores)


def one_by_one(texts: list[str]) -> list[list[str]]:
    nlp = ner()
    return [entity_names(nlp(text)) for text in texts]


def run() -> str:
    texts = [r["source"] for r in load_source("bbc_summary", "train")[:N_DOCUMENTS]]
    words = sum(len(t.split()) for t in texts)
    one_by_one(texts[:4])  # load and warm up the model outside the timings
    naive_s, naive = best_time(one_by_one, texts, repeats=1)
    batched_s, batched = best_time(lambda: list(named_entities(texts, BATCH_SIZE)), repeats=1)
    workers_s, in_workers = best_time(lambda: list(named_entities(texts, BATCH_SIZE, WORKERS)), repeats=1)
    differing = sum(a != b for a, b in zip(batched, naive)) + sum(a != b for a, b in zip(in_workers, naive))
    assert differing == 0, f"{differing} documents get different entities batched and one by one"
    found = sum(len(names) for names in batched)
    return "\n".join(
        [
            "## Entity data builder: spaCy NER batched (`nlp.pipe`) vs one call per document",
            "",
            f"{len(texts)} BBC articles (`bbc_summary/train`, {words:,} words), `en_core_web_sm` entity recognizer "
            f"only; {found:,} persons/organizations found, identical all three ways.",
            "",
            "| way | time | documents/s | ratio | documents with different entities |",
            "|---|---|---|---|---|",
            f"| SteerSum: `nlp.pipe`, batches of {BATCH_SIZE} | {batched_s:.2f} s | {len(texts) / batched_s:.1f} | 1.0× | — |",
            f"| SteerSum, `--workers {WORKERS}`: `nlp.pipe(n_process={WORKERS})` | {workers_s:.2f} s | "
            f"{len(texts) / workers_s:.1f} | {batched_s / workers_s:.2f}× faster | 0 |",
            f"| naive: `nlp(text)` per document | {naive_s:.2f} s | {len(texts) / naive_s:.1f} | "
            f"{naive_s / batched_s:.2f}× slower | {differing} |",
        ]
    )
