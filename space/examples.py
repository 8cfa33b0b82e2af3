"""Example documents with the controls to try them with, per variant: one bundled BBC test article per
topic (with its reference summary, so ROUGE shows too), one two-topic article where the controls
visibly steer the summary, and each variant's own card example (:meth:`variants.base.Variant.card_facts`).

Nothing here is written per variant: an article's topic goes to any choice control that offers it (the
topic variant's ``topic``, the persona variant's ``sim01-business`` reader), and the card's example
controls fill the rest. The articles are committed (``space/examples.json``), so the Space, on the Hub
or from a plain clone, needs no data folder; ``python -m space.examples [--data-dir DIR]`` rebuilds the
file from the data.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

from metrics.text import sentences
from variants.base import Variant
from variants.sources import add_data_dir_argument, load_source, set_data_dir

EXAMPLES_FILE = Path(__file__).resolve().parent / "examples.json"


@dataclass
class Example:
    """One example row: what it is (``label``), the text boxes and the controls it sets."""

    label: str
    document: str
    reference: str = ""
    controls: dict = field(default_factory=dict)


def bundled_articles() -> list[dict]:
    """One BBC News Summary test article per topic (``source``, ``target``, ``topic``), as committed."""
    return json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))


def build_examples(per_topic: int = 1) -> list[dict]:
    """The first ``per_topic`` ``bbc_summary`` test articles of each topic, from the data."""
    by_topic: dict[str, list[dict]] = {}
    for record in load_source("bbc_summary", "test"):
        by_topic.setdefault(record["topic"], []).append(record)
    return [
        {"topic": r["topic"], "source": r["source"], "target": r["target"]}
        for group in by_topic.values()
        for r in group[:per_topic]
    ]


def two_topic_article(first: dict, second: dict) -> str:
    """Sentences of two articles in turn, as in the topic paper's super-articles."""
    return " ".join(s for pair in zip(sentences(first["source"])[:5], sentences(second["source"])[:5]) for s in pair)


def load_examples() -> list[list[str]]:
    """``[document, reference]`` pairs: the bundled articles, then a two-topic one."""
    picked = bundled_articles()
    examples = [[r["source"], r.get("target", "")] for r in picked]
    if len(picked) >= 2:
        examples.append([two_topic_article(picked[0], picked[-1]), ""])
    return examples


def topic_value(variant: Variant, topic: str) -> dict:
    """The choice controls that offer the article's topic, set to it (exactly, else a choice naming it)."""
    chosen = {}
    for control in variant.controls_for(None):
        if control.kind == "choice" and control.choices:
            value = topic if topic in control.choices else next((c for c in control.choices if topic in c), None)
            if value:
                chosen[control.name] = value
    return chosen


def variant_examples(variant: Variant) -> list[Example]:
    """The variant's examples: its card example if it has one, else the bundled articles (one per topic,
    then the two-topic article once for each of its topics) with the controls that fit them."""
    facts = variant.card_facts()
    base = dict(facts.get("example_controls") or {})
    if facts.get("example_document"):
        card = Example(f"paper example ({described(base)})", facts["example_document"], "", base)
        return [card, *suggested_examples(variant, base)]
    picked, examples = bundled_articles(), []
    for record in picked:
        controls = {**base, **topic_value(variant, record.get("topic", ""))}
        examples.append(
            Example(
                f"{record.get('topic', '?')} article ({described(controls)})",
                record["source"],
                record.get("target", ""),
                controls,
            )
        )
    if len(picked) >= 2:
        mixed = two_topic_article(picked[0], picked[-1])
        pair = f"{picked[0].get('topic')} + {picked[-1].get('topic')}"
        for record in (picked[0], picked[-1]):
            controls = {**base, **topic_value(variant, record.get("topic", ""))}
            examples.append(Example(f"two topics, {pair} ({described(controls)})", mixed, "", controls))
    return examples


def suggested_examples(variant: Variant, card_controls: dict, articles: int = 2) -> list[Example]:
    """Bundled articles with the card's kinds of controls set from what the variant suggests for each
    article (the entity it names most, its top keywords), so an example's controls fit its document.
    None when the variant suggests nothing for those controls (or cannot: e.g. no NER model)."""
    kinds = {c.name: c.kind for c in variant.controls_for(None)}
    examples = []
    for record in bundled_articles()[:articles]:
        try:
            suggested = variant.suggestions(record["source"], None)
        except Exception:  # suggestions are a convenience: without them the card example stands alone
            return []
        controls = {
            name: (values[:2] if kinds.get(name) in ("keywords", "history") else values[0])
            for name, values in suggested.items()
            if name in card_controls and values
        }
        if not controls:
            return []
        controls = {**card_controls, **controls}
        examples.append(
            Example(
                f"{record.get('topic', '?')} article ({described(controls)})",
                record["source"],
                record.get("target", ""),
                controls,
            )
        )
    return examples


def described(controls: dict) -> str:
    """Controls as a short label: ``topic: sport, length: 0``."""
    return (
        ", ".join(f"{k}: {', '.join(v) if isinstance(v, list) else v}" for k, v in controls.items()) or "no controls"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m space.examples", description="Rebuild space/examples.json.")
    parser.add_argument("--out", type=Path, default=EXAMPLES_FILE)
    add_data_dir_argument(parser)
    args = parser.parse_args(argv)
    set_data_dir(args.data_dir)
    args.out.write_text(json.dumps(build_examples(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{args.out}: {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
