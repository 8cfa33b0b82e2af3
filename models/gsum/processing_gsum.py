"""The GSum processor: a document and an entity as the model's two inputs (SteerSum's entity variant,
after EntSUM's GSum_ent-name and GSum_ent-sent): the document as ``input_ids`` and the signal (GSum's
"guidance signal") as ``signal_input_ids``, padded to a fixed length, which is

* ``name``       the entity's name;
* ``sentences``  the document's sentences that mention it (full name or surname, whole words, any
                 case), or the name when none does.

Sentences are cut by a rule that needs no model (:mod:`.sentences`), and a sentence mentions the entity
when it holds one of its aliases (:mod:`.mentions`). SteerSum's entity variant builds its signal (for
training and inference alike) with the functions of this file, so the two cannot differ.

Self-contained (torch, transformers, numpy and the standard library): it ships in every exported
entity repo and ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` loads it.
"""

from .mentions import entity_name, sentences_naming
from .processing_base import SteerSumProcessor

# Signal tokens kept (and padded to): a name is short; the sentences naming a salient entity are ~4 of a
# news article's (EntSUM Table 1: 3.95 on average), about 120 BART tokens.
SIGNAL_LENGTH = {"name": 32, "sentences": 256}


def absent(entity: str) -> str:
    return (
        f"{entity!r} is not mentioned in the document (neither its full name nor its surname), "
        "so the summary cannot be about it"
    )


def signal(document: str, entity: str, method: str) -> tuple[str, list[str]]:
    """The signal's text for a method, and notices: without a sentence naming the entity, the
    ``sentences`` signal falls back to the name."""
    if method not in SIGNAL_LENGTH:
        raise ValueError(f"unknown method {method!r}; allowed: {', '.join(SIGNAL_LENGTH)}")
    named = sentences_naming(document, entity)
    if method == "name":
        return entity, [] if named else [absent(entity)]
    if not named:
        return entity, [absent(entity) + "; the model is guided by the name alone"]
    return " ".join(named), []


def signal_ids(tokenizer, text: str, length: int, entity: str) -> tuple[list[int], list[str]]:
    """The signal's token ids, cut to ``length`` (keeping the end-of-sequence token) and padded to it."""
    ids, notices = tokenizer(text, truncation=False)["input_ids"], []
    if len(ids) > length:
        ids = ids[: length - 1] + ids[-1:]
        notices.append(f"the sentences naming {entity!r} (the model's signal) were cut to {length} tokens")
    return ids + [tokenizer.pad_token_id] * (length - len(ids)), notices


def gsum_input(document: str, entity: str, method: str, tokenizer, length: int | None = None):
    """Source text, extra inputs (``signal_input_ids``) and notices for one document and entity."""
    entity = entity_name(entity)
    text, notices = signal(document, entity, method)
    ids, cut_notices = signal_ids(tokenizer, text, length or SIGNAL_LENGTH[method], entity)
    return document, {"signal_input_ids": ids}, notices + cut_notices, text


class GSumProcessor(SteerSumProcessor):
    """``processor(document, {"entity": "Angela Merkel"})``: ``input_ids`` and ``signal_input_ids``."""

    def unconditional(self, document: str) -> tuple[str, dict, list[str]]:
        """The document with an empty signal (begin and end of sequence only, padded as any signal):
        it names no entity and picks no sentence."""
        length = self.settings.get("max_signal_length") or SIGNAL_LENGTH[self.settings["method"]]
        ids = self.tokenizer("", truncation=False)["input_ids"]
        return document, {"signal_input_ids": ids + [self.tokenizer.pad_token_id] * (length - len(ids))}, []

    def rules(self, document: str, controls: dict):
        """The entity's name as a keyword the summary must hold, as SteerSum's ``variants.entity`` gives its
        decoder."""
        entity = " ".join(str(controls.get("entity") or "").split())
        return {"keywords": [entity]} if entity else None

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        text, extra, notices, _ = gsum_input(
            document,
            controls.get("entity"),
            self.settings["method"],
            self.tokenizer,
            self.settings.get("max_signal_length"),
        )
        return text, extra, notices
