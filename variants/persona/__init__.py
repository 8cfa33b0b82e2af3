"""Personalized summarization in the PENS setting (Ao et al. 2021), evaluated as Vansh et al.,
"Accuracy is Not Enough: Evaluating Personalization in Summarizers" (EMNLP Findings 2023) do: with
EGISES (lower is better) and P-Acc beside ROUGE against each reader's own reference.

A reader is their reading history: the titles of the news they clicked, most recent last. Two ways
to give it to BART, one ``prepare`` for both:

* ``history-prefix``  the reader's cue, their most recent clicked titles joined by `` | ``, then the
                      special token ``[HISTORY]``, in front of the article. It has the form of the
                      paper's injection for generic models (Sec. 5.1), but not its content: there
                      "the gold reference summary of every reader" is added "as a title to the
                      document", i.e. the target itself is an input. Here only clicked titles are.
* ``user-embedding``  the titles as token ids (``history_ids``, titles x tokens, padded); the
                      ``persona_bart`` model encodes them, pools them with attention into a few
                      vectors and appends them to the decoder's memory (:mod:`models.persona`), in
                      the spirit of PENS's user-embedding injection.
* ``interest-prefix`` the two sentences of the article closest in meaning to the titles (the
                      baseline's pick: MiniLM cosine to the mean title), then ``[HISTORY]``, in front
                      of the article: GSum's guidance signal (Dou et al. 2021, an extractive pick
                      given to the abstractive model) for a reader. The model learns to write from
                      the reader's sentences; a small model learns that in CPU time, where reading
                      interests from raw titles took GPU time (docs/log.md).

Controls: ``reader``, one of the readers the summarizer carries (SteerSum bundles *simulated*
readers, ``variants/persona/assets/persona_readers.json``, built by ``python -m training build-data
persona``), or ``history``, pasted titles (one per line), which wins over ``reader``. No history at
all is allowed: the summary is then not personalized, and a notice says so.

Baseline: history-similarity extraction, by meaning: the sentences whose MiniLM embedding is closest
to the mean of the titles' (:mod:`variants.persona.baseline`; TF-IDF word overlap where MiniLM is
not installed). Metrics: ROUGE against the reader's reference, EGISES, P-Acc.
Test set: the simulated PENS-format test split: 4 simulated readers per BBC test article, each reader's
reference the 2 article sentences their hidden topic preferences favour in the readers' own interest
space (NMF themes of the XSum sample, :mod:`variants.persona.reader_model`; not the topic space of the
baselines and STAS), their history 24-30 titles drawn from those preferences
(:mod:`variants.persona.data`); not the baseline's rule (MiniLM or TF-IDF cosine to the history).
Files: ``baseline.py`` (history-similarity extraction and its MiniLM encoder), ``evaluation.py`` (test
set, EGISES, P-Acc, Table 1, the pasted row), ``data.py`` (``python -m training build-data persona``; also
reads real PENS files) with ``reader_model.py`` (the simulated readers' interest space), ``train.py``
(trainer defaults and flags, ``python -m training persona``); model ``models/persona``; bundled readers
``variants/persona/assets/``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from metrics.support import supported_spans
from metrics.terms import analyze
from metrics.text import WORD
from models.persona.processing_persona import (  # noqa: F401
    HISTORY,
    INTEREST_ENCODER,
    METHODS,
    NO_HISTORY,
    READER_PATH_BIAS,
    READER_SENTENCES,
    READERS_FILE,
    PersonaProcessor,
    history_ids,
    persona_input,
)

from ..base import (
    Control,
    ControlError,
    Paper,
    Prepared,
    Score,
    Summarizer,
    Summary,
    Variant,
    check_document,
    processor_settings,
    reference_scores,
)
from .baseline import (  # noqa: F401  (the baseline's pieces, for benchmarks and tests)
    MISSING_ENCODER,
    PersonaBaseline,
    closest_to_history,
    history_similarity_extract,
    interest_encoder,
    reader_sentences,
)
from .evaluation import PersonaEvaluation

SPECIAL_TOKENS = [HISTORY]
DEFAULT_PREFIX_TITLES = 32  # titles put in front of the article: a simulated reader's whole history (24-30)
DEFAULT_MAX_HISTORY = 32  # titles user-embedding encodes: the whole history too
BUNDLED_READERS = Path(__file__).with_name("assets") / READERS_FILE


@dataclass
class PersonaAssets:
    """What a persona summarizer carries besides weights: the readers it knows (id → clicked titles,
    most recent last, and a description), and for ``user-embedding`` the tokenizer and the shape
    of ``history_ids`` (from the model's config)."""

    readers: dict[str, dict] = field(default_factory=dict)
    prefix_titles: int = DEFAULT_PREFIX_TITLES
    tokenizer: Any = None
    max_history: int = DEFAULT_MAX_HISTORY
    max_title_tokens: int = 24
    simulated: bool = True

    def history(self, controls: dict) -> list[str]:
        """The reader's titles: the pasted ``history`` if any, else the chosen ``reader``'s, else []."""
        if controls.get("history"):
            return list(controls["history"])
        reader = controls.get("reader")
        return list(self.readers[reader]["history"]) if reader else []

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> PersonaAssets:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls({r["id"]: r for r in data["readers"]}, simulated=bool(data.get("simulated", False)), **kwargs)

    def save(self, folder: str | Path) -> None:
        data = {"simulated": self.simulated, "readers": list(self.readers.values())}
        Path(folder, READERS_FILE).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def history_overlap(summary: str, titles: list[str], document: str | None = None) -> float | None:
    """Share of the summary's distinct content terms (lemmas, no stop words) that the reader's
    titles also use; None without a history or a content term. With the ``document``, a term counts
    toward the overlap only when a run of words the document supports holds it
    (:func:`metrics.support.supported_spans`), while every term counts in the denominator: titles
    pasted after a summary add terms, not overlap."""
    terms = set(analyze(summary))
    if not titles or not terms:
        return None
    shown = terms if document is None else set(analyze(" ".join(supported_spans(summary, document))))
    return len(shown & set(analyze(" ".join(titles)))) / len(terms)


class PersonaSummarizer(Summarizer):
    """A trained checkpoint. ``user-embedding`` encodes each distinct article of a batch once and
    shares its encoder states among the readers who asked for it (only their history differs);
    ``history-prefix`` gives every (article, reader) its own source, as :class:`Seq2SeqSummarizer`."""

    def __init__(self, base):
        self.base = base
        self.variant, self.name, self.method, self.assets = base.variant, base.name, base.method, base.assets
        self.model, self.tokenizer = base.model, base.tokenizer
        self.max_source_length, self.record = base.max_source_length, base.record

    @property
    def settings(self):
        """The checkpoint's :class:`~variants.seq2seq.GenerationSettings`, shared with the history-prefix path."""
        return self.base.settings

    @settings.setter
    def settings(self, value) -> None:
        self.base.settings = value

    @torch.inference_mode()
    def summarize(
        self,
        documents: list[str],
        controls: list[dict],
        batch_size: int | None = None,
        settings=None,
        **generation: Any,
    ) -> list[Summary]:
        """As :meth:`Seq2SeqSummarizer.summarize`, under the same settings (beams, length, early
        stopping, batch size, bf16 autocast)."""
        if self.method != "user-embedding":
            return self.base.summarize(documents, controls, batch_size=batch_size, settings=settings, **generation)
        from transformers.modeling_outputs import BaseModelOutput

        from ..steering import Steering, decoded, encode

        if len(documents) != len(controls):
            raise ValueError(f"{len(documents)} documents but {len(controls)} control sets")
        documents = [check_document(d) for d in documents]
        checked = [self.variant.validate(c, self.assets) for c in controls]
        prepared = [self.variant.prepare(d, c, self.method, self.assets) for d, c in zip(documents, checked)]
        order = sorted(range(len(prepared)), key=lambda i: (prepared[i].text, i))  # a document's readers together
        settings = (settings or self.settings).but(batch_size=batch_size)
        # guidance contrasts each reader with no reader: the article's own states, without the user block
        steering = Steering(self.base, settings, documents, checked, prepared)
        out: list[Summary | None] = [None] * len(prepared)
        for start in range(0, len(order), settings.batch_size):
            rows = order[start : start + settings.batch_size]
            articles = list(dict.fromkeys(prepared[i].text for i in rows))
            batch, truncated = encode(self.tokenizer, [Prepared(a) for a in articles], self.base.max_source_length)
            batch = {k: v.to(self.model.device) for k, v in batch.items()}
            which = torch.tensor([articles.index(prepared[i].text) for i in rows], device=self.model.device)
            history = torch.tensor([prepared[i].extra["history_ids"] for i in rows], device=self.model.device)
            model = settings.model(self.model)
            with settings.autocast(self.model.device):
                states = model.get_encoder()(**batch).last_hidden_state  # (articles, S, d): once per article
                mask = batch["attention_mask"][which]
                inputs = {
                    "encoder_outputs": BaseModelOutput(last_hidden_state=states[which]),
                    "attention_mask": mask,
                    "history_ids": history,
                }
                output = steering.generate(
                    model, rows, generation, inputs, encoder_outputs=states[which], attention_mask=mask
                )
            for i, text, at in zip(
                rows, self.tokenizer.batch_decode(output, skip_special_tokens=True), which.tolist()
            ):
                out[i] = decoded(text, prepared[i], truncated[at], self.base.max_source_length, documents[i])
        return out


class PersonaVariant(Variant):
    id = "persona"
    title = "Personalized BART (reading history)"
    description = (
        "Summarize a news article for a reader, given the titles they clicked before (PENS setting); "
        "scored by ROUGE against the reader's own summary, EGISES and P-Acc."
    )
    paper = Paper(
        title="Accuracy is Not Enough: Evaluating Personalization in Summarizers",
        authors="Rahul Vansh, Darsh Rank, Sourish Dasgupta, Tanmoy Chakraborty",
        year=2023,
        url="https://aclanthology.org/2023.findings-emnlp.169",
        bibtex="""@inproceedings{vansh2023accuracy,
  title     = {Accuracy is Not Enough: Evaluating Personalization in Summarizers},
  author    = {Vansh, Rahul and Rank, Darsh and Dasgupta, Sourish and Chakraborty, Tanmoy},
  booktitle = {Findings of the Association for Computational Linguistics: EMNLP 2023},
  year      = {2023}
}""",
    )
    methods = METHODS

    evaluation_class = PersonaEvaluation

    def default_assets(self) -> PersonaAssets:
        return default_assets()

    def controls_for(self, assets: PersonaAssets | None = None) -> tuple[Control, ...]:
        assets = assets or self.default_assets()
        kind = "simulated " if assets.simulated else ""
        return (
            Control(
                "reader",
                "choice",
                f"one of the {kind}readers this model knows (their clicked titles are the history)",
                choices=tuple(assets.readers),
                open=True,
            ),
            Control("history", "history", "or the reader's clicked news titles, most recent last (wins over reader)"),
        )

    def check_controls(self, controls: dict | None, assets: PersonaAssets | None = None) -> dict:
        """The schema's checks, plus: a pasted history is one title per line (titles have commas),
        and a reader must be one the summarizer knows."""
        assets = assets or self.default_assets()
        if isinstance(controls, dict) and isinstance(controls.get("history"), str):
            controls = {**controls, "history": [t.strip() for t in controls["history"].splitlines() if t.strip()]}
        checked = super().check_controls(controls, assets)
        reader = checked.get("reader")
        if reader is not None and reader not in assets.readers:
            some = list(assets.readers)[:8]
            raise ControlError(
                f"unknown reader {reader!r}; allowed: {', '.join(some)}"
                f"{f' (and {len(assets.readers) - len(some)} more)' if len(assets.readers) > len(some) else ''}"
                ", or paste a history (one title per line)"
            )
        return checked

    def prepare(self, document: str, controls: dict, method: str, assets: PersonaAssets | None = None) -> Prepared:
        assets = assets or self.default_assets()
        self.check_method(method)
        titles = assets.history(controls)
        text, extra, notices = persona_input(
            document,
            titles,
            method,
            assets.prefix_titles,
            assets.tokenizer,
            assets.max_history,
            assets.max_title_tokens,
            reader_sentences,
        )
        if method == "interest-prefix" and titles and interest_encoder() is None:
            notices = [*notices, MISSING_ENCODER]
        return Prepared(text, extra, notices)

    def processor(self, summarizer: Summarizer) -> PersonaProcessor:
        """The reader histories and the method's input as a self-contained processor
        (:mod:`models.persona.processing_persona`), with the readers this summarizer knows."""
        assets = summarizer.assets
        settings = processor_settings(
            summarizer,
            prefix_titles=assets.prefix_titles,
            max_history=assets.max_history,
            max_title_tokens=assets.max_title_tokens,
            interest_encoder=INTEREST_ENCODER,
        )
        readers = {"simulated": assets.simulated, "readers": list(assets.readers.values())}
        return PersonaProcessor(summarizer.tokenizer, settings, {READERS_FILE: readers})

    def constraints(self, controls: dict, assets: PersonaAssets | None = None):
        """The reader's sentences for the decoder to prefer
        (:class:`variants.rule_processors.SentencePathLogitsProcessor`): the baseline's ranking
        (:func:`closest_to_history`; the readers' references come from their hidden preferences, never from
        it), biased by :data:`READER_PATH_BIAS`. None without a history."""
        from ..decoding_rules import DecodingRules

        titles = (assets or self.default_assets()).history(controls)
        if not titles:
            return None
        return DecodingRules(
            prefer=functools.partial(
                closest_to_history, titles=titles, n_sentences=READER_SENTENCES, encode=interest_encoder()
            ),
            prefer_bias=READER_PATH_BIAS,
        )

    def baseline(self) -> Summarizer:
        return PersonaBaseline(self, self.default_assets())

    def load(self, path: Path, record: dict, device: str | None = None, **kwargs: Any) -> Summarizer:
        """The checkpoint as every variant loads it, wrapped so that ``user-embedding`` encodes each
        article once for all its readers (:class:`PersonaSummarizer`)."""
        return PersonaSummarizer(super().load(path, record, device, **kwargs))

    def load_assets(self, path: Path, record: dict, model: Any, tokenizer: Any) -> PersonaAssets:
        """The readers the checkpoint knows (its own file, else the bundled ones) and, for
        ``user-embedding``, the tokenizer and the shape of ``history_ids`` from the model's config."""
        readers = Path(path) / READERS_FILE
        settings = {"prefix_titles": int(record.get("prefix_titles", DEFAULT_PREFIX_TITLES))}
        if record["method"] == "user-embedding":
            settings.update(
                tokenizer=tokenizer,
                max_history=model.config.max_history,
                max_title_tokens=model.config.max_title_tokens,
            )
        if readers.is_file():
            return PersonaAssets.from_file(readers, **settings)
        return PersonaAssets(default_assets().readers, **settings)

    def score(
        self,
        summary: str,
        document: str,
        controls: dict,
        reference: str | None = None,
        assets: PersonaAssets | None = None,
    ) -> dict[str, Score]:
        titles = (assets or self.default_assets()).history(controls)
        scores = {
            "history_overlap": Score(
                history_overlap(summary, titles, document),
                "share of the summary's content words that the reader's clicked titles "
                "also use, counted in words the document supports (none without a history)",
            )
        }
        scores.update(reference_scores(summary, reference, "this reader's reference"))
        return scores

    def evidence(self, summary: str, controls: dict, assets: PersonaAssets | None = None) -> list[str]:
        """The summary's words whose term also occurs in the reader's titles."""
        history_terms = set(analyze(" ".join((assets or self.default_assets()).history(controls))))
        return list(dict.fromkeys(w for w in WORD.findall(summary) if set(analyze(w)) & history_terms))

    def suggestions(self, document: str, assets: PersonaAssets | None = None) -> dict[str, list[str]]:
        return {"reader": list((assets or self.default_assets()).readers)[:10]}

    def card_facts(self, assets: PersonaAssets | None = None) -> dict[str, Any]:
        assets = assets or self.default_assets()
        return {
            "example_controls": {"reader": next(iter(assets.readers))},
            "simulated_readers": assets.simulated,
            "n_readers": len(assets.readers),
            "reader_sentences": READER_SENTENCES,
        }


@lru_cache(maxsize=1)
def default_assets() -> PersonaAssets:
    """The embedded default: SteerSum's bundled simulated readers (BBC titles; see the module docstring)."""
    return PersonaAssets.from_file(BUNDLED_READERS)
