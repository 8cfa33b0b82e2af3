"""Example documents for the document box: one bundled BBC test article per topic (with its reference
summary, so ROUGE shows too) and one two-topic article where the controls visibly steer the summary.

A Space on the Hub may ship without ``../shared/data``; then a few embedded examples stand in.
"""
from __future__ import annotations

from metrics.io import DATA_DIR, DataError, read_jsonl
from metrics.text import sentences

EMBEDDED = [
    ["The city council approved a new budget on Tuesday that raises spending on schools and public transport. "
     "The mayor said the plan would be paid for by a small rise in business taxes. Opposition members warned "
     "that companies could move to nearby towns. Meanwhile the local football club won its third match in a row, "
     "with the striker scoring twice in the second half. The coach praised the team's defence and said the "
     "players were ready for the cup final next month.", ""],
    ["Researchers released a new smartphone chip that uses half the power of last year's model. The company said "
     "the processor will ship in phones from several manufacturers by the summer. Analysts expect the chip to "
     "lift the firm's profits, and its shares rose four percent. The chip also speeds up software that runs "
     "machine learning models on the device, so photos and speech can be processed without the internet.", ""],
]


def load_examples(per_topic: int = 1) -> list[list[str]]:
    """``[document, reference]`` pairs from ``bbc_summary/test.jsonl``, or the embedded ones."""
    try:
        records = read_jsonl(DATA_DIR / "bbc_summary" / "test.jsonl")
    except DataError:
        return EMBEDDED
    by_topic: dict[str, list[dict]] = {}
    for record in records:
        by_topic.setdefault(record.get("topic", "?"), []).append(record)
    picked = [r for group in by_topic.values() for r in group[:per_topic]]
    examples = [[r["source"], r.get("target", "")] for r in picked]
    if len(picked) >= 2:  # sentences of two topics in turn, as in the topic paper's super-articles
        first, second = sentences(picked[0]["source"])[:5], sentences(picked[-1]["source"])[:5]
        examples.append([" ".join(s for pair in zip(first, second) for s in pair), ""])
    return examples or EMBEDDED
