"""Named-entity recognition for the entity data builder: ``nlp.pipe`` in batches versus one ``nlp(text)``
call per document.

SteerSum's way (:func:`variants.entity.named_entities`, used by ``training/entity_data.py`` and the
Space's suggestions) streams the articles through spaCy's ``nlp.pipe`` with ``batch_size=32``: the
entity recognizer's network runs on a whole batch at once. The naive way calls the pipeline on one
article at a time. Both use the same loaded pipeline (only its entity recognizer) and the same
post-processing (:func:`variants.entity.entity_names`); the entities found must be identical.

Inputs: the first ``N_DOCUMENTS`` articles of the bundled ``bbc_summary/train`` split, a subset sized so
that the benchmark stays under a minute on two CPU cores. The model is loaded and warmed up before
either timing.
"""
from __future__ import annotations

import time

from metrics.io import DATA_DIR, read_jsonl
from variants.entity import entity_names, named_entities, ner

N_DOCUMENTS = 200
BATCH_SIZE = 32


def one_by_one(texts: list[str]) -> list[list[str]]:
    nlp = ner()
    return [entity_names(nlp(text)) for text in texts]


def timed(function, texts: list[str]) -> tuple[float, list[list[str]]]:
    start = time.perf_counter()
    result = function(texts)
    return time.perf_counter() - start, result


def run() -> str:
    texts = [r["source"] for r in read_jsonl(DATA_DIR / "bbc_summary" / "train.jsonl")[:N_DOCUMENTS]]
    words = sum(len(t.split()) for t in texts)
    one_by_one(texts[:4])  # load and warm up the model outside the timings
    naive_s, naive = timed(one_by_one, texts)
    batched_s, batched = timed(lambda t: named_entities(t, batch_size=BATCH_SIZE), texts)
    differing = sum(a != b for a, b in zip(batched, naive))
    assert differing == 0, f"{differing} documents get different entities batched and one by one"
    found = sum(len(names) for names in batched)
    return "\n".join([
        "## Entity data builder: spaCy NER batched (`nlp.pipe`) vs one call per document",
        "",
        f"{len(texts)} BBC articles (`bbc_summary/train`, {words:,} words), `en_core_web_sm` entity recognizer "
        f"only; {found:,} persons/organizations found, identical both ways.",
        "",
        "| way | time | documents/s | ratio | documents with different entities |",
        "|---|---|---|---|---|",
        f"| SteerSum: `nlp.pipe`, batches of {BATCH_SIZE} | {batched_s:.2f} s | {len(texts) / batched_s:.1f} | 1.0× | — |",
        f"| naive: `nlp(text)` per document | {naive_s:.2f} s | {len(texts) / naive_s:.1f} | "
        f"{naive_s / batched_s:.2f}× slower | {differing} |",
    ])
