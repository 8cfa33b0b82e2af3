"""The topic processor: a document and a topic as the model's input (SteerSum's topic variant, after
Passali & Tsoumakas 2024):

* ``prepend``     the topic's name, then ``[TOPIC]``, in front of the document (the paper's BARTpre);
* ``tag``         every word whose lemma is one of the topic's ``top_n`` representative terms wrapped in
                  ``[TAG] ... [TAG]`` (BARTtag);
* ``prepend-tag`` both (BARTpre+tag);
* ``emb``         the document, plus ``topic_ids``: the topic's row in the model's topic embedding.

A topic's representative terms are the highest-weighted terms of its vector in the topic space
(``topic_space.json``: topics, vocabulary, IDF; ``topic_space.npz``: the topic vectors), ties in
alphabetical order. An unseen topic (``tag``/``prepend`` methods) is described by ``topic_words``
(or its own name): their TF-IDF vector in the same space gives its terms.

Terms are WordNet lemmas (SteerSum's ``metrics.stas.term``). WordNet is not a dependency here: the repo
ships ``topic_lemmas.json``, every written form whose term is a term of the space's vocabulary, with that
term. The table was made by asking the lemmatizer itself about each vocabulary term's possible forms
(WordNet's morphology applies one suffix rule or one exception, so the forms are the term, each rule
undone once and the exceptions that name it), so it gives the lemmatizer's answer for every word whose
term the space knows, and no term for any other word, which is all that tagging and an unseen topic's
vector need. SteerSum's ``variants.topic`` tags with the functions of this file (and the lemmatizer).

Self-contained (torch, transformers, numpy and the standard library): it ships in every exported topic
repo and ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` loads it.
"""

import inspect
import json
import logging
import os
import re
import shutil
import threading

import numpy as np
import torch
from transformers import AutoTokenizer, PreTrainedConfig, ProcessorMixin
from transformers.utils import cached_file

logger = logging.getLogger(__name__)
DOCUMENT_PATH_BIAS = 2.0  # the decoder's bias along the document's sentences (SteerSum's variants.topic)

TAG, TOPIC = "[TAG]", "[TOPIC]"
SPACE_FILE, VECTORS_FILE, LEMMAS_FILE = "topic_space.json", "topic_space.npz", "topic_lemmas.json"
# The topic id that adds no embedding, as models.topic_bart.modeling_topic_bart.NO_TOPIC (a test checks).
NO_TOPIC = -1
CLITICS = frozenset({"s", "re", "ve", "ll", "d", "m"})  # "bank's" is "bank"; "don't" is no term
# A word: letters/digits with an optional inner apostrophe (SteerSum's metrics.text.WORD).
WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?", re.IGNORECASE)


def table_term(lemmas: dict[str, str]):
    """A word's topic-space term from the shipped table (``metrics.stas.term`` for the space's terms):
    clitics cut as there, then the table; None for a word whose term the space does not know."""

    def term(word: str):
        head, apostrophe, tail = word.replace("’", "'").partition("'")
        if apostrophe and tail == "t":
            return None
        if apostrophe and tail in CLITICS:
            word = head
        return lemmas.get(word)

    return term


def tag_words(document: str, terms: frozenset[str], term) -> str:
    """Wrap each word (:data:`WORD`) whose term (``term`` of the lower-cased word) is in ``terms`` in
    ``[TAG] ... [TAG]``: the tagging rule, word by word."""
    return WORD.sub(
        lambda m: f"{TAG} {m.group(0)} {TAG}" if term(m.group(0).lower()) in terms else m.group(0), document
    )


class Tagger:
    """:func:`tag_words` for one topic's terms, fast: a document is cut at spaces (``str.split``) into
    chunks such as ``"(banks'"``; a chunk met before is looked up in a dict of the chunks holding a
    tagged word, with their tagged text; a chunk not met before goes through the rule (:func:`tag_words`
    on the chunk alone: exactly what it gives inside the document, since no WORD token holds a space).
    Thread-safe; the cache starts over past ``max_chunks`` chunks."""

    def __init__(self, terms: frozenset[str], term, max_chunks: int = 500_000):
        self.terms, self.term, self.max_chunks = terms, term, max_chunks
        self._lock = threading.Lock()
        # chunks (as written) already looked at; those among them holding a tagged word → their tagged text
        self._state: tuple[set[str], dict[str, str]] = (set(), {})

    def __call__(self, document: str) -> str:
        chunks = document.split(" ")
        seen, tagged = self._state
        new = set(chunks) - seen
        if new:
            with self._lock:  # tagged first, then seen: a reader never sees a chunk before its tagged text
                seen, tagged = self._state
                if len(seen) > self.max_chunks:
                    seen, tagged = set(), {}
                for chunk in new - seen:
                    text = tag_words(chunk, self.terms, self.term)
                    if text != chunk:
                        tagged[chunk] = text
                seen |= new
                self._state = (seen, tagged)
        if tagged.keys().isdisjoint(chunks):
            return document
        return " ".join([tagged.get(chunk, chunk) for chunk in chunks])


def topic_text(document: str, topic: str, method: str, tag=None) -> str:
    """The model's source text for the ``tag``, ``prepend`` and ``prepend-tag`` methods (``tag``: the
    topic's :class:`Tagger`, needed by the tag methods)."""
    text = tag(document) if "tag" in method else document
    return f"{topic} {TOPIC} {text}" if method.startswith("prepend") else text


def representative_terms(weights: np.ndarray, terms: np.ndarray, n: int) -> list[str]:
    """The ``n`` highest-weighted terms of a topic vector, highest first, ties in alphabetical order;
    fewer when fewer have a positive weight."""
    order = np.lexsort((terms, -weights))  # last key first: weight descending, then term
    return [str(terms[j]) for j in order[:n] if weights[j] > 0]


def words_vector(text: str, vocabulary: dict[str, int], idf: np.ndarray, term) -> np.ndarray:
    """The l2-normalized TF-IDF vector of a text in the topic space (scikit-learn's ``transform``)."""
    vector = np.zeros(len(idf), dtype=np.float64)
    for word in WORD.findall(text.lower()):
        column = vocabulary.get(term(word))
        if column is not None:
            vector[column] += 1
    vector *= idf
    norm = np.sqrt(np.dot(vector, vector))
    return vector / norm if norm > 0 else vector


def unseen_topic_words(topic: str, topic_words: str | None) -> list[str]:
    """The words that describe an unseen topic: ``topic_words`` split at commas, else the topic's name."""
    return [w.strip() for w in (topic_words or topic).split(",") if w.strip()]


def unseen_notice(topic: str, topic_words: str | None) -> str:
    return f"unseen topic {topic!r}: its representative terms come from the words {topic_words or topic!r}"


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


class TopicProcessor(SteerSumProcessor):
    """``processor(document, {"topic": "business"})``, or an unseen topic
    ``{"topic": "weather", "topic_words": "rain, storm, forecast"}`` (tag and prepend methods)."""

    files = (SPACE_FILE, VECTORS_FILE, LEMMAS_FILE)

    def __init__(self, tokenizer, settings: dict | None = None, data: dict | None = None):
        super().__init__(tokenizer, settings, data)
        space = self.data[SPACE_FILE]
        self.topics = list(space["topics"])
        self.terms = np.array(space["vocabulary"])
        self.vocabulary = {t: i for i, t in enumerate(space["vocabulary"])}
        self.idf = np.asarray(space["idf"], dtype=np.float64)
        lemmas = self.data[LEMMAS_FILE]
        table = {t: t for t in space["vocabulary"] if t not in set(lemmas["not_terms"])}
        self.term = table_term({**table, **lemmas["forms"]})
        self.taggers: dict[tuple[str, str], Tagger] = {}

    def tagger(self, topic: str, topic_words: str | None) -> tuple[Tagger, list[str]]:
        """The topic's tagger (its representative terms), and a notice for an unseen topic."""
        key = (topic, "" if topic in self.topics else topic_words or topic)
        if topic in self.topics:
            weights, notices = self.data[VECTORS_FILE]["topic_vectors"][self.topics.index(topic)], []
        else:
            words = unseen_topic_words(topic, topic_words)
            known = [w for w in words if any(self.term(t) in self.vocabulary for t in WORD.findall(w.lower()))]
            if not known:
                raise ValueError(
                    f"unseen topic {topic!r}: none of the words {', '.join(map(repr, words))} is in the "
                    "topic space's vocabulary; describe it with a few known words in 'topic_words' or "
                    f"pick one of: {', '.join(self.topics)}"
                )
            weights, notices = (
                words_vector(" ".join(known), self.vocabulary, self.idf, self.term),
                [unseen_notice(topic, topic_words)],
            )
        if key not in self.taggers:
            terms = representative_terms(weights, self.terms, int(self.settings.get("top_n", 100)))
            self.taggers[key] = Tagger(frozenset(terms), self.term)
        return self.taggers[key], notices

    def unconditional(self, document: str) -> tuple[str, dict, list[str]]:
        """The document as is: no topic prepended, no word tagged; for ``emb`` the topic id that adds no
        embedding (``models.topic_bart.modeling_topic_bart.NO_TOPIC``)."""
        return (document, {"topic_ids": NO_TOPIC}, []) if self.settings["method"] == "emb" else (document, {}, [])

    def rules(self, document: str, controls: dict):
        """Every document sentence for the decoder to prefer, whatever the topic, as SteerSum's
        ``variants.topic`` gives its decoder (bias :data:`DOCUMENT_PATH_BIAS`)."""
        return {"prefer": True, "prefer_bias": DOCUMENT_PATH_BIAS}

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        topic, method = controls["topic"], self.settings["method"]
        if method == "emb":
            embedded = list(self.settings.get("embedding_topics") or [])
            if topic not in embedded:
                raise ValueError(
                    f"method 'emb' only knows the topics it was trained on; unknown topic {topic!r}; "
                    f"allowed: {', '.join(embedded)}"
                )
            return document, {"topic_ids": embedded.index(topic)}, []
        tag, notices = self.tagger(topic, controls.get("topic_words"))
        return topic_text(document, topic, method, tag), {}, notices
