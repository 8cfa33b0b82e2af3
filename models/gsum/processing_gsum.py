"""The GSum processor: a document and an entity as the model's two inputs (SteerSum's entity variant,
after EntSUM's GSum_ent-name and GSum_ent-sent): the document as ``input_ids`` and the guidance as
``guidance_input_ids``, padded to a fixed length, which is

* ``name``       the entity's name;
* ``sentences``  the document's sentences that mention it (full name or surname, whole words, any
                 case), or the name when none does.

Sentences are cut by :func:`split_sentences`, a rule that needs no model: a sentence ends at ``.``,
``!`` or ``?`` (closing quotes and brackets included) followed by a space and a capital, a digit or an
opening quote, except after an abbreviation of NLTK Punkt's English model (``Mr.``, ``U.S.``, ...) or an
initial. SteerSum's entity variant builds its guidance (for training and inference alike) with the
functions of this file, so the two cannot differ.

Self-contained (torch, transformers, numpy and the standard library): it ships in every exported
entity repo and ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` loads it.
"""

import inspect
import json
import logging
import os
import re
import shutil

import numpy as np
import torch
from transformers import AutoTokenizer, PreTrainedConfig, ProcessorMixin
from transformers.utils import cached_file

logger = logging.getLogger(__name__)

# Guidance tokens kept (and padded to): a name is short; the sentences naming a salient entity are ~4 of a
# news article's (EntSUM Table 1: 3.95 on average), about 120 BART tokens.
GUIDANCE_LENGTH = {"name": 32, "sentences": 256}
# NLTK's English stop words (SteerSum's metrics.text.STOPWORDS): a name with one before its last word
# ("Bank of England") gets no surname alias.
STOPWORDS = frozenset(
    [
        "i",
        "me",
        "my",
        "myself",
        "we",
        "our",
        "ours",
        "ourselves",
        "you",
        "you're",
        "you've",
        "you'll",
        "you'd",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "she's",
        "her",
        "hers",
        "herself",
        "it",
        "it's",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "that'll",
        "these",
        "those",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "a",
        "an",
        "the",
        "and",
        "but",
        "if",
        "or",
        "because",
        "as",
        "until",
        "while",
        "of",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "in",
        "out",
        "on",
        "off",
        "over",
        "under",
        "again",
        "further",
        "then",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "s",
        "t",
        "can",
        "will",
        "just",
        "don",
        "don't",
        "should",
        "should've",
        "now",
        "d",
        "ll",
        "m",
        "o",
        "re",
        "ve",
        "y",
        "ain",
        "aren",
        "aren't",
        "couldn",
        "couldn't",
        "didn",
        "didn't",
        "doesn",
        "doesn't",
        "hadn",
        "hadn't",
        "hasn",
        "hasn't",
        "haven",
        "haven't",
        "isn",
        "isn't",
        "ma",
        "mightn",
        "mightn't",
        "mustn",
        "mustn't",
        "needn",
        "needn't",
        "shan",
        "shan't",
        "shouldn",
        "shouldn't",
        "wasn",
        "wasn't",
        "weren",
        "weren't",
        "won",
        "won't",
        "wouldn",
        "wouldn't",
    ]
)
# Tokens after a surname that are not the surname ("Jr.", "III", "Inc."), lower-cased without dots.
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "inc", "ltd", "plc", "llc", "corp", "co"})
# Copied from metrics.entity (tests/test_hub_repos.py checks that both give the same aliases):
# Lower-case parts of persons' names ("Ludwig van Beethoven").
NAME_PARTICLES = frozenset(
    {
        "van",
        "von",
        "de",
        "der",
        "den",
        "da",
        "di",
        "du",
        "la",
        "le",
        "bin",
        "ibn",
        "al",
        "el",
        "dos",
        "das",
        "del",
        "della",
        "ter",
        "y",
    }
)
# Last words of organisation names, never a surname alias ("Manchester United", "Sony Music", "BBC News").
ORGANISATION_WORDS = frozenset(
    [
        "united",
        "city",
        "rovers",
        "athletic",
        "wanderers",
        "albion",
        "county",
        "fc",
        "party",
        "council",
        "bank",
        "group",
        "union",
        "club",
        "association",
        "awards",
        "music",
        "news",
        "times",
        "post",
        "journal",
        "office",
        "department",
        "ministry",
        "commission",
        "committee",
        "agency",
        "court",
        "police",
        "airlines",
        "airways",
        "motors",
        "foundation",
        "university",
        "college",
        "school",
        "institute",
        "service",
        "services",
        "company",
        "league",
        "federation",
        "board",
        "authority",
        "network",
        "channel",
        "records",
        "studios",
        "pictures",
        "entertainment",
        "trust",
        "fund",
        "capital",
        "holdings",
        "partners",
        "systems",
        "technologies",
        "media",
        "broadcasting",
        "television",
        "tv",
        "radio",
        "press",
        "bureau",
        "senate",
        "congress",
        "parliament",
        "assembly",
        "army",
        "navy",
        "force",
        "forces",
        "corporation",
        "industries",
        "international",
        "enterprises",
        "securities",
        "insurance",
        "energy",
        "oil",
        "software",
        "games",
        "electronics",
        "communications",
        "telecom",
        "mobile",
        "online",
        "labs",
        "society",
        "organisation",
        "organization",
        "centre",
        "center",
        "exchange",
        "reserve",
        "treasury",
        "government",
        "administration",
        "team",
        "review",
        "magazine",
        "festival",
        "show",
        "cup",
        "championship",
        "one",
        "two",
        "three",
        "four",
        "five",
        "express",
        "mail",
        "telegraph",
        "guardian",
        "herald",
        "standard",
        "mirror",
        "sun",
    ]
)


def name_part(word: str) -> bool:
    """A word written like part of a person's name: an initial ("H."), or letters (apostrophes and
    hyphens aside) starting with a capital and not all capitals ("Tony", "O'Neill", "McDonald", "José")."""
    if re.fullmatch(r"[^\W\d_]\.", word):
        return word[0].isupper()
    letters = re.sub(r"['’-]", "", word.rstrip("."))
    return letters.isalpha() and word[0].isupper() and not letters.isupper()


def person_like(words: list[str]) -> bool:
    """Whether a multi-word name (suffixes removed) reads as a person's: every word a name part
    (:func:`name_part`) or a particle ("van"), the last word not one that ends organisation names.
    All-capital words ("BBC") and digits mark an organisation or a product."""
    return (
        all(w.lower() in NAME_PARTICLES or name_part(w) for w in words[:-1])
        and name_part(words[-1])
        and words[-1].lower() not in ORGANISATION_WORDS
    )


# NLTK Punkt's English abbreviations (tokenizers/punkt_tab/english/abbrev_types.txt): no sentence ends
# after them.
ABBREVIATIONS = frozenset(
    [
        "a.a",
        "a.c",
        "a.d",
        "a.g",
        "a.h",
        "a.m",
        "a.m.e",
        "a.s",
        "a.t",
        "adm",
        "ala",
        "ariz",
        "aug",
        "ave",
        "b.f",
        "b.v",
        "bros",
        "c",
        "c.i.t",
        "c.o.m.b",
        "c.v",
        "calif",
        "chg",
        "cie",
        "co",
        "col",
        "colo",
        "conn",
        "corp",
        "cos",
        "ct",
        "d",
        "d.c",
        "d.h",
        "d.w",
        "dec",
        "dr",
        "e",
        "e.f",
        "e.h",
        "e.l",
        "e.m",
        "f",
        "f.g",
        "f.j",
        "feb",
        "fla",
        "fri",
        "ft",
        "g",
        "g.d",
        "g.f",
        "g.k",
        "ga",
        "gen",
        "h",
        "h.c",
        "h.f",
        "h.m",
        "i.m.s",
        "ill",
        "inc",
        "j.b",
        "j.c",
        "j.j",
        "j.k",
        "j.p",
        "j.r",
        "jan",
        "jr",
        "k",
        "kan",
        "ky",
        "l",
        "l.a",
        "l.f",
        "l.p",
        "lt",
        "ltd",
        "m",
        "m.b.a",
        "m.d.c",
        "m.j",
        "maj",
        "messrs",
        "mg",
        "mich",
        "minn",
        "mr",
        "mrs",
        "ms",
        "n",
        "n.c",
        "n.d",
        "n.h",
        "n.j",
        "n.m",
        "n.v",
        "n.y",
        "nev",
        "nov",
        "oct",
        "ok",
        "okla",
        "ore",
        "p",
        "p.a.m",
        "p.m",
        "pa",
        "ph.d",
        "prof",
        "r",
        "r.a",
        "r.h",
        "r.i",
        "r.j",
        "r.k",
        "r.t",
        "rep",
        "reps",
        "s",
        "s.a",
        "s.a.y",
        "s.c",
        "s.g",
        "s.p.a",
        "s.s",
        "sen",
        "sep",
        "sept",
        "sr",
        "st",
        "sw",
        "t",
        "t.j",
        "tenn",
        "tues",
        "u.k",
        "u.n",
        "u.s",
        "u.s.a",
        "u.s.s.r",
        "v",
        "va",
        "vs",
        "vt",
        "w",
        "w.c",
        "w.r",
        "w.va",
        "w.w",
        "wash",
        "wed",
        "wis",
        "yr",
    ]
)
# A candidate end: the end mark with any closing quotes/brackets, the spaces, and what starts the next sentence.
BOUNDARY = re.compile(r"""([.!?]+["'”’)\]]*)(\s+)(?=["'“‘(\[]*[A-Z0-9])""")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (line breaks end paragraphs, and so sentences), by the rule in the
    module docstring."""
    out = []
    for paragraph in text.split("\n"):
        start = 0
        for match in BOUNDARY.finditer(paragraph):
            if match.group(1).startswith("."):
                before = paragraph[start : match.start()].split()
                word = before[-1].lstrip("\"'“‘([").lower() if before else ""
                if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                    continue  # "Mr. Smith", "J. Smith", "U.S. Army"
            out.append(paragraph[start : match.end(1)])
            start = match.end()
        out.append(paragraph[start:])
    return [s.strip() for s in out if s.strip()]


def entity_name(entity) -> str:
    """The entity's name, spaces normalized; a ValueError when it is empty."""
    name = " ".join(str(entity or "").split())
    if not name:
        raise ValueError(
            "control 'entity' is empty: name a person or organization of the document, "
            'e.g. {"entity": "Angela Merkel"}'
        )
    return name


def aliases(entity: str) -> list[str]:
    """Names that mention ``entity``: the full name and, for a person's multi-word name (:func:`person_like`)
    with no stop word before its last word, its surname when capitalized (``Barack Obama`` → ``Obama``,
    ``BBC One`` → none; suffixes such as ``Jr.`` skipped).
    SteerSum's ``metrics.entity.aliases`` without extra aliases."""
    name = entity_name(entity)
    names = [name]
    words = name.split(" ")
    while len(words) > 1 and words[-1].lower().replace(".", "") in NAME_SUFFIXES:
        words = words[:-1]
    if (
        len(words) > 1
        and not any(w.lower() in STOPWORDS for w in words[:-1])
        and person_like([w.rstrip(",") for w in words])
    ):
        surname = words[-1].rstrip(",")
        if surname[:1].isupper() and surname.lower() not in STOPWORDS:
            names.append(surname)
    unique = {}
    for n in names:
        unique.setdefault(n.lower(), n)
    return list(unique.values())


def mention_pattern(entity: str) -> re.Pattern:
    """One regex for all aliases, longest first, as whole words: names of several words in any case,
    one-word aliases only as written ("BBC One" is not "one of the best")."""
    names = sorted(aliases(entity), key=len, reverse=True)
    alternatives = "|".join(
        r"(?i:" + r"\s+".join(map(re.escape, n.split(" "))) + ")" if " " in n else re.escape(n) for n in names
    )
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


def sentences_naming(document: str, entity: str) -> list[str]:
    """The document's sentences (:func:`split_sentences`) that mention the entity, in order."""
    pattern = mention_pattern(entity)
    return [sentence for sentence in split_sentences(document) if pattern.search(sentence)]


def absent(entity: str) -> str:
    return (
        f"{entity!r} is not mentioned in the document (neither its full name nor its surname), "
        "so the summary cannot be about it"
    )


def guidance(document: str, entity: str, method: str) -> tuple[str, list[str]]:
    """The guidance text for a method, and notices: without a sentence naming the entity, the
    ``sentences`` guidance falls back to the name."""
    if method not in GUIDANCE_LENGTH:
        raise ValueError(f"unknown method {method!r}; allowed: {', '.join(GUIDANCE_LENGTH)}")
    named = sentences_naming(document, entity)
    if method == "name":
        return entity, [] if named else [absent(entity)]
    if not named:
        return entity, [absent(entity) + "; the model is guided by the name alone"]
    return " ".join(named), []


def guidance_ids(tokenizer, text: str, length: int, entity: str) -> tuple[list[int], list[str]]:
    """The guidance's token ids, cut to ``length`` (keeping the end-of-sequence token) and padded to it."""
    ids, notices = tokenizer(text, truncation=False)["input_ids"], []
    if len(ids) > length:
        ids = ids[: length - 1] + ids[-1:]
        notices.append(f"the guidance (sentences naming {entity!r}) was cut to {length} tokens")
    return ids + [tokenizer.pad_token_id] * (length - len(ids)), notices


def gsum_input(document: str, entity: str, method: str, tokenizer, length: int | None = None):
    """Source text, extra inputs (``guidance_input_ids``) and notices for one document and entity."""
    entity = entity_name(entity)
    text, notices = guidance(document, entity, method)
    ids, cut_notices = guidance_ids(tokenizer, text, length or GUIDANCE_LENGTH[method], entity)
    return document, {"guidance_input_ids": ids}, notices + cut_notices, text


# Copied from models.processing_base
HUB_KWARGS = ("cache_dir", "force_download", "local_files_only", "token", "revision", "subfolder")
PROCESSOR_FILE = "processor_config.json"
# processor_config.json: the processor also gives what the repo's custom_generate/generate.py reads
DECODING_INPUTS = "decoding_inputs"
SERVED_RULES = "served_rules"  # whether the repo's model is served with its decoding rules (its record's constraints)
POSTPROCESS_FILE = "postprocess.py"  # SteerSum's postprocess, which an exported repo carries beside this file

try:  # in an exported repo: decoded text in the document's case and spacing, as SteerSum serves it
    from .postprocess import postprocess
except ImportError:  # inside SteerSum's tree the file is variants/postprocess.py: decode gives the tokenizer's text
    postprocess = None


def cut(ids: list[int], max_length: int) -> list[int]:
    """Token ids cut to ``max_length``, keeping the last (end-of-sequence) one: how SteerSum's trainer and
    summarizer cut a source that is too long."""
    return ids[: max_length - 1] + ids[-1:] if len(ids) > max_length else ids


# Copied from variants.base.check_value
def check_value(control: dict, value, error=ValueError):
    """One control's value normalized, or ``error`` (a ValueError) naming it and what is allowed; the control
    as its ``to_json`` gives it (and as an exported processor's ``processor_config.json`` lists it)."""
    name, kind = control["name"], control["kind"]
    if kind == "choice":
        if not isinstance(value, str) or not value.strip():
            raise error(f"control '{name}' must be one of {list(control['choices'])}, got {value!r}")
        value = value.strip()
        if value not in control["choices"] and not control.get("open"):
            raise error(f"unknown {name} {value!r}; allowed: {', '.join(control['choices'])}")
        return value
    if kind == "text":
        if not isinstance(value, str):
            raise error(f"control '{name}' must be text, got {type(value).__name__}")
        return value.strip()
    if kind in ("keywords", "history"):
        if isinstance(value, str):
            value = [part for part in (p.strip() for p in value.split(",")) if part]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise error(f"control '{name}' must be a list of strings, got {value!r}")
        return [v.strip() for v in value if v.strip()]
    if kind == "integer":
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        low, high = control.get("minimum"), control.get("maximum")
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or not ((low is None or value >= low) and (high is None or value <= high))
        ):
            raise error(f"control '{name}' must be an integer in [{low}, {high}], got {value!r}")
        return value
    raise ValueError(f"control '{name}' has unknown kind {kind!r}")


def check_controls(controls, schema: list[dict]) -> dict:
    """A controls object checked against the model's schema (unknown names, bad values, missing required
    controls raise a ValueError naming them and the allowed values); defaults filled in."""
    controls = {} if controls is None else controls
    if not isinstance(controls, dict):
        raise ValueError(f"controls must be a dict, got {type(controls).__name__}")
    by_name = {control["name"]: control for control in schema}
    unknown = sorted(set(controls) - set(by_name))
    if unknown:
        raise ValueError(f"unknown control(s) {', '.join(unknown)}; allowed: {', '.join(by_name)}")
    checked = {}
    for name, control in by_name.items():
        value = controls.get(name)
        if value is None or value == "" or value == []:
            if control.get("required"):
                raise ValueError(
                    f"control '{name}' is required"
                    + (f"; allowed: {', '.join(control['choices'])}" if control.get("choices") else "")
                )
            if control.get("default") is not None:
                checked[name] = control["default"]
            continue
        checked[name] = check_value(control, value)
    return checked


def read_file(path: str):
    """A processor file's content: JSON parsed, an ``.npz`` as a dict of arrays (no pickle)."""
    if path.endswith(".npz"):
        with np.load(path, allow_pickle=False) as arrays:
            return {key: arrays[key] for key in arrays.files}
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write_file(path: str, content) -> None:
    if path.endswith(".npz"):
        np.savez_compressed(path, **content)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(content, ensure_ascii=False) + "\n")


class SteerSumProcessor(ProcessorMixin):
    """Documents and controls in, model inputs out: ``processor(documents, controls, return_tensors="pt")``
    gives ``input_ids``, ``attention_mask`` and the model's own inputs, ready for ``model.generate``.
    What a subclass adds is :meth:`prepare` (one document) and the repo files it reads (:attr:`files`,
    besides ``processor_config.json``, which holds the settings and the controls' schema).
    ``notices`` holds, after each call, what each document's preparation said (a control that changes
    nothing, an input that was cut); they are logged as warnings too."""

    files: tuple[str, ...] = ()

    def __init__(self, tokenizer, settings: dict | None = None, data: dict | None = None):
        super().__init__(tokenizer)
        self.settings = dict(settings or {})
        self.data = dict(data or {})
        self.max_source_length = int(self.settings.get("max_source_length", 1024))
        self.notices: list[list[str]] = []
        self.documents: list[str] = []  # the last call's, which decode restores the case and spacing of

    def check(self, controls) -> dict:
        return check_controls(controls, self.settings.get("controls", []))

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        """The model's source text, its extra inputs and notices, for one document and checked controls."""
        raise NotImplementedError

    def unconditional(self, document: str) -> tuple[str, dict, list[str]]:
        """The same document with the controls removed: what classifier-free guidance contrasts the
        controlled input with, and what control dropout trained on. Default: :meth:`prepare` with none."""
        return self.prepare(document, {})

    def __call__(self, documents, controls=None, return_tensors=None, unconditional=False, **_):
        """Model inputs for ``documents`` under ``controls`` (one dict for all, or one per document); with
        ``unconditional=True`` the control-free inputs instead (``controls`` are then ignored)."""
        documents = [documents] if isinstance(documents, str) else list(documents)
        if controls is None or isinstance(controls, dict):
            controls = [controls] * len(documents)
        if len(controls) != len(documents):
            raise ValueError(f"{len(documents)} documents but {len(controls)} control sets")
        prepared = []
        for document, given in zip(documents, controls):
            if not isinstance(document, str) or not document.strip():
                raise ValueError("document is empty: give the text to summarize")
            prepared.append(
                self.unconditional(document.strip())
                if unconditional
                else self.prepare(document.strip(), self.check(given))
            )
        ids = self.tokenizer([text for text, _, _ in prepared], truncation=False)["input_ids"]
        batch = self.tokenizer.pad(
            {"input_ids": [cut(x, self.max_source_length) for x in ids]}, return_tensors=return_tensors
        )
        for key in prepared[0][1] if prepared else ():
            values = [extra[key] for _, extra, _ in prepared]
            batch[key] = torch.tensor(values) if return_tensors == "pt" else values
        if self.settings.get(DECODING_INPUTS) and not unconditional:
            self.add_decoding_inputs(batch, [d.strip() for d in documents], controls, prepared, return_tensors)
        self.notices = [
            notes
            + (
                [f"the input was longer than the model's limit of {self.max_source_length} tokens and was truncated"]
                if len(x) > self.max_source_length
                else []
            )
            for (_, _, notes), x in zip(prepared, ids)
        ]
        for notes in self.notices:
            for note in notes:
                logger.warning(note)
        self.documents = [document.strip() for document in documents]
        return batch

    def rules(self, document: str, controls: dict):
        """The decoding rules for one document and its checked controls, as ``generate`` reads them
        (``custom_generate/generate.py``'s ``DecodingRules.from_json``: ``min_words``, ``max_words``,
        ``keywords``, ``prefer``: true for every document sentence, ``prefer_bias``); None: none."""
        return None

    def add_decoding_inputs(self, batch, documents, controls, prepared, return_tensors) -> None:
        """What the repo's ``generate`` reads besides the model's inputs: the control-free inputs of
        classifier-free guidance (``unconditional_*``, when any document's differ from its controlled ones:
        otherwise guidance changes nothing) and each document's decoding rules (``decoding_rules``)."""
        free = [self.unconditional(document) for document in documents]
        if any(f[0] != p[0] or f[1] != p[1] for f, p in zip(free, prepared)):
            ids = self.tokenizer([text for text, _, _ in free], truncation=False)["input_ids"]
            padded = self.tokenizer.pad(
                {"input_ids": [cut(x, self.max_source_length) for x in ids]}, return_tensors=return_tensors
            )
            for key in ("input_ids", "attention_mask"):
                batch[f"unconditional_{key}"] = padded[key]
            for key in free[0][1]:
                values = [extra[key] for _, extra, _ in free]
                batch[f"unconditional_{key}"] = torch.tensor(values) if return_tensors == "pt" else values
        if not self.settings.get(SERVED_RULES, True):  # served as the model alone: no rules to apply
            return
        rules = [self.rules(document, self.check(given)) for document, given in zip(documents, controls)]
        if any(rule is not None for rule in rules):
            batch["decoding_rules"] = [{**(rule or {}), "document": d} for rule, d in zip(rules, documents)]

    def batch_decode(self, sequences, documents=None, **kwargs):
        """Generated ids as text, each in its document's case and spacing with complete sentences, as
        SteerSum serves it (``postprocess.py``). ``documents`` default: those of the last call, when they
        are as many as the sequences (otherwise, and without ``postprocess.py``, the tokenizer's text)."""
        texts = self.tokenizer.batch_decode(sequences, **kwargs)
        documents = documents if documents is not None else self.documents
        if postprocess is None or len(documents) != len(texts):
            return texts
        return [postprocess(text, document) for text, document in zip(texts, documents)]

    def decode(self, token_ids, document=None, **kwargs):
        """One generated sequence as :meth:`batch_decode` writes it (``document``: its source)."""
        return self.batch_decode([token_ids], None if document is None else [document], **kwargs)[0]

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        """The processor of a repo (a Hub id or a folder): its tokenizer, ``processor_config.json`` and files."""
        hub = {key: kwargs[key] for key in HUB_KWARGS if kwargs.get(key) is not None}
        try:  # the tokenizer's class from tokenizer_config.json: the model's config is not needed (a peft
            # adapter's repo has none; a custom architecture's would ask to trust its code again)
            tokenizer = AutoTokenizer.from_pretrained(pretrained_model_name_or_path, config=PreTrainedConfig(), **hub)
        except (OSError, ValueError):
            tokenizer = AutoTokenizer.from_pretrained(
                pretrained_model_name_or_path, trust_remote_code=kwargs.get("trust_remote_code"), **hub
            )
        settings = read_file(cached_file(pretrained_model_name_or_path, PROCESSOR_FILE, **hub))
        data = {name: read_file(cached_file(pretrained_model_name_or_path, name, **hub)) for name in cls.files}
        return cls(tokenizer, settings, data)

    def save_pretrained(self, save_directory, **_):
        """Tokenizer, ``processor_config.json`` (with ``auto_map``: ``AutoProcessor`` loads this class from
        the repo with ``trust_remote_code=True``), this code file and the processor's files."""
        os.makedirs(save_directory, exist_ok=True)
        self.tokenizer.save_pretrained(save_directory)
        code = inspect.getfile(type(self))
        module = os.path.splitext(os.path.basename(code))[0]
        config = {
            **self.settings,
            "processor_class": type(self).__name__,
            "auto_map": {"AutoProcessor": f"{module}.{type(self).__name__}"},
        }
        write_file(os.path.join(save_directory, PROCESSOR_FILE), config)
        shutil.copyfile(code, os.path.join(save_directory, os.path.basename(code)))
        if postprocess is not None:  # saved from an exported repo: the postprocess it was loaded with goes along
            shutil.copyfile(inspect.getfile(postprocess), os.path.join(save_directory, POSTPROCESS_FILE))
        for name in self.files:
            write_file(os.path.join(save_directory, name), self.data[name])
        return [os.path.join(save_directory, PROCESSOR_FILE)]


# End of copy


class GSumProcessor(SteerSumProcessor):
    """``processor(document, {"entity": "Angela Merkel"})``: ``input_ids`` and ``guidance_input_ids``."""

    def unconditional(self, document: str) -> tuple[str, dict, list[str]]:
        """The document with an empty guidance (begin and end of sequence only, padded as any guidance):
        it names no entity and picks no sentence."""
        length = self.settings.get("max_guidance_length") or GUIDANCE_LENGTH[self.settings["method"]]
        ids = self.tokenizer("", truncation=False)["input_ids"]
        return document, {"guidance_input_ids": ids + [self.tokenizer.pad_token_id] * (length - len(ids))}, []

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
            self.settings.get("max_guidance_length"),
        )
        return text, extra, notices
