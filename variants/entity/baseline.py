"""The entity variant's model-free baselines (EntSUM Sec. 4.2.1): Lead3ent, the first three sentences that
mention the entity (the default), and the entity-blind Lead-3 (the paper's Lead3ovr)."""

from __future__ import annotations

from metrics.text import sentences
from models.gsum.mentions import sentences_naming
from models.gsum.processing_gsum import absent

from ..base import Baseline, ControlError, Summary

LEAD = 3  # sentences in Lead-3, Lead3ent and a proxy target


def naming(text: str, entity: str) -> list[str]:
    """The variant's matcher: the sentences of ``text`` that name ``entity`` by its exact alias strings, as a
    reader would search for them (the full name as whole words in any case; a person's surname, a one-word
    name as written), in order. It is the rule the GSum processor builds the model's signal with
    (:func:`models.gsum.mentions.sentences_naming`), so the signal, the baseline and the training
    targets pick the same sentences; the entity metric (:mod:`metrics.entity`: any case, a guard for common
    words) only scores, and nothing a model reads or learns from is picked by the function that scores it."""
    return sentences_naming(text, entity)


def lead_sentences(document: str, entity: str, n: int = LEAD) -> list[str]:
    """Lead3ent: the first ``n`` sentences that name the entity (EntSUM Sec. 4.2.1), by :func:`naming`."""
    return naming(document, entity)[:n]


def entity_of(controls: dict) -> str:
    entity = " ".join(str(controls.get("entity") or "").split())
    if not entity:
        raise ControlError(
            "control 'entity' is empty: name a person or organization of the document, "
            'e.g. {"entity": "Angela Merkel"}'
        )
    return entity


class Lead3Entity(Baseline):
    name = "baseline: Lead3ent (first 3 sentences naming the entity)"
    method = "lead3ent"

    def extract(self, document: str, controls: dict) -> Summary:
        entity = entity_of(controls)
        picked = lead_sentences(document, entity)
        if picked:
            return Summary(" ".join(picked))
        return Summary(
            " ".join(sentences(document)[:LEAD]),
            [absent(entity) + "; this is the document's first three sentences (Lead-3)"],
        )


class Lead3(Baseline):
    name = "baseline: Lead-3 (first 3 sentences)"
    method = "lead3"

    def extract(self, document: str, controls: dict) -> Summary:
        entity_of(controls)  # the entity is still required: same controls as every entity summarizer
        return Summary(" ".join(sentences(document)[:LEAD]))
