# Copied from models.processing_base
"""The base every SteerSum processor is built on: documents and controls in, model inputs out, and the
repo files a processor saves and loads.

An exported repo runs without SteerSum, so every ``models/<name>/`` folder with a processor holds this
file whole, as ``models/<name>/processing_base.py``, which its processor imports relatively
(``from .processing_base import ...``): transformers' remote-code loader fetches a module's relative
imports with it, and :meth:`SteerSumProcessor.save_pretrained` saves them beside it. It is written here
once; ``python scripts/fix_copies.py`` writes the copies (``--check``, which CI runs, fails on a copy that
differs). Edit it here, never in a copy.

Self-contained as the processors are: torch, transformers, numpy and the standard library.
"""

import inspect
import json
import logging
import os
import shutil

import numpy as np
import torch
from transformers import AutoTokenizer, PreTrainedConfig, ProcessorMixin
from transformers.dynamic_module_utils import get_relative_imports
from transformers.utils import cached_file

from .windows import PICK_RATIO, SOURCE_WINDOWS, WINDOW_MODE, cut_notice, pad_windows, source_windows

logger = logging.getLogger(__name__)


HUB_KWARGS = ("cache_dir", "force_download", "local_files_only", "token", "revision", "subfolder")
PROCESSOR_FILE = "processor_config.json"
# processor_config.json: the processor also gives what the repo's custom_generate/generate.py reads
DECODING_INPUTS = "decoding_inputs"
SERVED_RULES = "served_rules"  # whether the repo's model is served with its decoding rules (its record's constraints)
DOCUMENT_WORDS = "document_words"  # whether it is served with the document-words rule, which reads the documents

try:  # in an exported repo: decoded text in the document's case and spacing, as SteerSum serves it
    from .postprocess import postprocess
except ImportError:  # inside SteerSum's tree the file is variants/postprocess.py: decode gives the tokenizer's text
    postprocess = None


def cut(ids: list[int], max_length: int) -> list[int]:
    """Token ids cut to ``max_length``, keeping the last (end-of-sequence) one: how SteerSum's trainer and
    summarizer cut a source that is too long."""
    return ids[: max_length - 1] + ids[-1:] if len(ids) > max_length else ids


def code_files(path: str) -> list[str]:
    """A code file and the sibling modules it imports relatively (``from .x import y``), theirs too: the
    files transformers' remote-code loader fetches with it. Siblings missing here are left out
    (``postprocess.py``, which only an exported repo holds)."""
    files, todo = [], [path]
    while todo:
        current = todo.pop(0)
        if current in files or not os.path.isfile(current):
            continue
        files.append(current)
        todo += [os.path.join(os.path.dirname(path), f"{name}.py") for name in sorted(get_relative_imports(current))]
    return files


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
        ``unconditional=True`` the control-free inputs instead (``controls`` are then ignored). With
        ``source_windows`` above 1 in the settings, a document longer than ``max_source_length`` tokens comes
        as its windows (:func:`source_windows`): ``input_ids`` of shape (documents, windows, tokens)."""
        documents = [documents] if isinstance(documents, str) else list(documents)
        if controls is None or isinstance(controls, dict):
            controls = [controls] * len(documents)
        if len(controls) != len(documents):
            raise ValueError(f"{len(documents)} documents but {len(controls)} control sets")
        for document in documents:
            if not isinstance(document, str) or not document.strip():
                raise ValueError("document is empty: give the text to summarize")
        documents = [document.strip() for document in documents]
        checked = [None if unconditional else self.check(given) for given in controls]
        makers = [
            self.unconditional if unconditional else (lambda text, given=given: self.prepare(text, given))
            for given in checked
        ]
        prepared = [make(document) for make, document in zip(makers, documents)]
        read = [self.parts(*args) for args in zip(documents, makers, checked)]
        batch = self.tokenizer_batch([parts for parts, _ in read], makers, return_tensors)
        for key in prepared[0][1] if prepared else ():
            values = [extra[key] for _, extra, _ in prepared]
            batch[key] = torch.tensor(values) if return_tensors == "pt" else values
        if self.settings.get(DECODING_INPUTS) and not unconditional:
            self.add_decoding_inputs(
                batch, documents, controls, prepared, return_tensors, [parts for parts, _ in read]
            )
        self.notices = [
            notes + ([cut_notice(self.max_source_length, document, parts)] if left_out else [])
            for (_, _, notes), document, (parts, left_out) in zip(prepared, documents, read)
        ]
        for notes in self.notices:
            for note in notes:
                logger.warning(note)
        self.documents = documents
        return batch

    def parts(self, document: str, make, controls: dict | None = None) -> tuple[list[str], bool]:
        """The parts of ``document`` the model reads, each prepared by ``make`` (:meth:`prepare` with the
        document's ``controls``, or :meth:`unconditional`), and whether anything of it is left out
        (:func:`source_windows`, up to the settings' ``source_windows``; with ``window_mode`` "pick", the
        window :meth:`relevance` scores highest for the ``controls`` when it scores ``pick_ratio`` times the
        first's; without controls, the first)."""
        pick = self.settings.get(WINDOW_MODE, "fuse") == "pick"
        return source_windows(
            document,
            lambda text: len(self.tokenizer(make(text)[0], truncation=False)["input_ids"]),
            self.max_source_length,
            int(self.settings.get(SOURCE_WINDOWS, 1)),
            (lambda text: self.relevance(text, controls) if controls is not None else 0.0) if pick else None,
            float(self.settings.get(PICK_RATIO, 1.0)),
        )

    def relevance(self, text: str, controls: dict) -> float:
        """How much a window of a document holds of what the checked ``controls`` ask for, for ``window_mode``
        "pick"; a processor that picks windows defines it."""
        raise NotImplementedError(f"{type(self).__name__} has no relevance: its windows can only be fused")

    def tokenizer_batch(self, parts: list[list[str]], makers: list, return_tensors=None) -> dict:
        """``input_ids`` and ``attention_mask`` of each document's parts, each prepared by its maker and cut to
        ``max_source_length`` (:func:`pad_windows`)."""
        ids = [
            [
                cut(x, self.max_source_length)
                for x in self.tokenizer([make(text)[0] for text in texts], truncation=False)["input_ids"]
            ]
            for texts, make in zip(parts, makers)
        ]
        return pad_windows(self.tokenizer, ids, return_tensors)

    def rules(self, document: str, controls: dict):
        """The decoding rules for one document and its checked controls, as ``generate`` reads them
        (``custom_generate/generate.py``'s ``DecodingRules.from_json``: ``min_words``, ``max_words``,
        ``keywords``, ``prefer``: true for every document sentence, ``prefer_bias``); None: none."""
        return None

    def add_decoding_inputs(self, batch, documents, controls, prepared, return_tensors, parts=None) -> None:
        """What the repo's ``generate`` reads besides the model's inputs: the control-free inputs of
        classifier-free guidance (``unconditional_*``, when any document's differ from its controlled ones:
        otherwise guidance changes nothing; read in the same ``parts`` as the controlled inputs, the
        documents' windows), each document's decoding rules (``decoding_rules``) and, for the document-words
        rule, the ``documents``."""
        free = [self.unconditional(document) for document in documents]
        if any(f[0] != p[0] or f[1] != p[1] for f, p in zip(free, prepared)):
            parts = parts or [[document] for document in documents]
            padded = self.tokenizer_batch(parts, [self.unconditional] * len(documents), return_tensors)
            for key in ("input_ids", "attention_mask"):
                batch[f"unconditional_{key}"] = padded[key]
            for key in free[0][1]:
                values = [extra[key] for _, extra, _ in free]
                batch[f"unconditional_{key}"] = torch.tensor(values) if return_tensors == "pt" else values
        if self.settings.get(DOCUMENT_WORDS):
            batch["documents"] = list(documents)
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
        the repo with ``trust_remote_code=True``), this code file with the siblings it imports
        (:func:`code_files`) and the processor's files."""
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
        for path in code_files(code):  # with the base and the other siblings it imports (postprocess.py too,
            # when saved from an exported repo: the postprocess it was loaded with goes along)
            shutil.copyfile(path, os.path.join(save_directory, os.path.basename(path)))
        for name in self.files:
            write_file(os.path.join(save_directory, name), self.data[name])
        return [os.path.join(save_directory, PROCESSOR_FILE)]


# End of copy
