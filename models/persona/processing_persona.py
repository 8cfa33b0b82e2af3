"""The persona processor: an article and a reader as the model's inputs (SteerSum's persona variant, after
PENS). A reader is their reading history, the titles they clicked, most recent last: a reader the
model knows (``persona_readers.json``, shipped in the repo) or a pasted history (wins over the reader).

* ``history-prefix``  the most recent ``prefix_titles`` titles joined by `` | ``, then ``[HISTORY]``,
                      in front of the article;
* ``user-embedding``  the article, plus ``history_ids``: the ``max_history`` most recent titles as a
                      (titles x tokens) grid of token ids that the model encodes (``modeling_persona``);
* ``interest-prefix`` the article's ``READER_SENTENCES`` sentences closest in meaning to the reader's
                      titles (MiniLM: each sentence's cosine to the mean title embedding, as SteerSum's
                      persona baseline picks them), then ``[HISTORY]``, in front of the article: GSum's
                      guidance (an extractive pick shown to the abstractive model) for a reader. Needs
                      ``sentence-transformers`` and ``nltk`` (Punkt) besides the packages below.

Self-contained (torch, transformers, numpy and the standard library): it ships in every exported
persona repo and ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` loads it; SteerSum's
``variants.persona`` builds its inputs with the functions of this file, so the two cannot differ.
"""

import inspect
import json
import logging
import os
import shutil

import numpy as np
import torch
from transformers import AutoTokenizer, PreTrainedConfig, ProcessorMixin
from transformers.utils import cached_file

logger = logging.getLogger(__name__)

HISTORY = "[HISTORY]"
TITLE_SEPARATOR = " | "
READERS_FILE = "persona_readers.json"
NO_HISTORY = "no reading history (no reader, or an empty history): the summary is not personalized"
READER_SENTENCES = 2  # interest-prefix: sentences shown for the reader (the simulated references have 2)
INTEREST_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"
METHODS = ("history-prefix", "user-embedding", "interest-prefix")


def history_prefix(document: str, titles: list[str], n_titles: int) -> str:
    """``"t1 | t2 | t3 [HISTORY] document"`` with the ``n_titles`` most recent titles."""
    return f"{TITLE_SEPARATOR.join(titles[-n_titles:])} {HISTORY} {document}"


def interest_prefix(document: str, guide: str) -> str:
    """``"guide sentences [HISTORY] document"``: the reader's sentences first, so a cut source keeps them."""
    return f"{guide} {HISTORY} {document}"


def closest_sentences(
    sentences: list[str], sentence_vectors: np.ndarray, title_vectors: np.ndarray, k: int = READER_SENTENCES
) -> list[str]:
    """The ``k`` sentences whose unit vectors have the highest cosine to the mean of the titles' unit
    vectors (the reader's interests), in document order; ties go to the earlier sentence."""
    interests = title_vectors.mean(axis=0)
    similarity = sentence_vectors @ (interests / max(float(np.linalg.norm(interests)), 1e-12))
    best = sorted(sorted(range(len(sentences)), key=lambda i: (-similarity[i], i))[:k])
    return [sentences[i] for i in best]


def history_ids(tokenizer, titles: list[str], max_history: int, max_title_tokens: int) -> list[list[int]]:
    """The ``max_history`` most recent titles as a fixed (max_history, max_title_tokens) grid of token
    ids, padded with the tokenizer's pad id (a padding row is no title), so a batch stacks."""
    pad = tokenizer.pad_token_id
    grid = [[pad] * max_title_tokens for _ in range(max_history)]
    recent = titles[-max_history:]
    for row, ids in enumerate(
        tokenizer(recent, truncation=True, max_length=max_title_tokens)["input_ids"] if recent else []
    ):
        grid[row][: len(ids)] = ids
    return grid


def persona_input(
    document: str,
    titles: list[str],
    method: str,
    prefix_titles: int,
    tokenizer=None,
    max_history: int = 32,
    max_title_tokens: int = 24,
    guide=None,
) -> tuple[str, dict, list[str]]:
    """Source text, extra inputs and notices for one article and a reader's titles. ``interest-prefix``
    needs ``guide(document, titles)``: the reader's sentences of the document (:func:`closest_sentences`)."""
    notices = [] if titles else [NO_HISTORY]
    if method == "history-prefix":
        return (history_prefix(document, titles, prefix_titles) if titles else document), {}, notices
    if method == "interest-prefix":
        if guide is None:
            raise ValueError("method 'interest-prefix' needs the reader's sentences: give guide(document, titles)")
        return (interest_prefix(document, guide(document, titles)) if titles else document), {}, notices
    if method != "user-embedding":
        raise ValueError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")
    if tokenizer is None:
        raise ValueError("method 'user-embedding' needs the model's tokenizer")
    return document, {"history_ids": history_ids(tokenizer, titles, max_history, max_title_tokens)}, notices


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


class PersonaProcessor(SteerSumProcessor):
    """``processor(article, {"reader": "sim01-business"})`` or ``{"history": ["title 1", "title 2"]}``
    (a pasted history: a list, or one title per line)."""

    files = (READERS_FILE,)

    def check(self, controls) -> dict:
        if isinstance(controls, dict) and isinstance(controls.get("history"), str):  # one title per line
            controls = {**controls, "history": [t.strip() for t in controls["history"].splitlines() if t.strip()]}
        checked = super().check(controls)
        readers = {reader["id"] for reader in self.data[READERS_FILE]["readers"]}
        if checked.get("reader") is not None and checked["reader"] not in readers:
            raise ValueError(
                f"unknown reader {checked['reader']!r}; allowed: {', '.join(sorted(readers))}, "
                "or paste a history (one title per line)"
            )
        return checked

    def titles(self, controls: dict) -> list[str]:
        """The reader's titles: the pasted ``history`` if any, else the chosen ``reader``'s, else []."""
        if controls.get("history"):
            return list(controls["history"])
        readers = {reader["id"]: reader for reader in self.data[READERS_FILE]["readers"]}
        return list(readers[controls["reader"]]["history"]) if controls.get("reader") else []

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        s = self.settings
        return persona_input(
            document,
            self.titles(controls),
            s["method"],
            int(s["prefix_titles"]),
            self.tokenizer,
            int(s.get("max_history", 32)),
            int(s.get("max_title_tokens", 24)),
            self.reader_sentences,
        )

    def reader_sentences(self, document: str, titles: list[str]) -> str:
        """``interest-prefix``'s guide: the document's sentences (NLTK Punkt, line breaks end paragraphs)
        closest to the titles by MiniLM (:func:`closest_sentences`)."""
        try:
            import nltk
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise ImportError(
                "method 'interest-prefix' picks the reader's sentences with MiniLM: "
                "pip install sentence-transformers nltk"
            ) from err
        if getattr(self, "_encoder", None) is None:
            self._encoder = SentenceTransformer(self.settings.get("interest_encoder", INTEREST_ENCODER), device="cpu")
        sentences = [
            s.strip()
            for paragraph in document.split("\n")
            if paragraph.strip()
            for s in nltk.sent_tokenize(paragraph)
            if s.strip()
        ]
        if len(sentences) <= READER_SENTENCES:
            return " ".join(sentences)
        encode = lambda texts: self._encoder.encode(texts, normalize_embeddings=True, convert_to_numpy=True)  # noqa: E731
        return " ".join(closest_sentences(sentences, encode(sentences), encode(list(titles))))
