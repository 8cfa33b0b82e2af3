"""Compositional control (Ding et al., "CCSBench: Evaluating Compositional Controllability of LLMs
for Scientific Document Summarization").

Four controls, any subset at once (Sec. 3.1): ``length`` (a 50-word bin, 0-4), ``keywords`` (terms
the summary must contain), ``readability`` (``normal`` / ``high`` = readable by laymen) and
``focus`` (``conceptual`` / ``empirical``: the paper's low / high "empirical focus level").

The model is Flan-T5 given the paper's hard prompt (App. A.1, "HP", after MACSum): one
``Attribute: Value`` line per requested control, in the order and wording of the paper's prompt
template (App. C.4), then the document::

    Summarize the document.
    Length: 51-100 words
    Keywords: "multi-scale", "pedestrian"
    Readability: high
    Empirical Focus Level: low
    Document: ...

Two methods share that prompt: ``lora`` is a peft LoRA adapter on the base model (the paper's B1/B2
rows), ``prompt`` a full model (zero-shot Flan-T5 as A1/A2, fully fine-tuned as C1, or a merged
adapter). Every metric comes from :mod:`metrics.ccs`.

Baseline: length-, keyword-, readability- and focus-controlled extraction (focus by sentence position,
never the judge). Metrics: ROUGE-L, length MAD/PCC, keyword success rate, ΔFKGL (FKGL by Kincaid's
formula), focus F1 (the paper's Table 4 columns). So that pasting cannot win them (docs/pasted-controls.md), a
keyword counts only inside a run of words the document supports (:mod:`metrics.support`), the focus
judge reads only those runs, and FKGL counts no sentence end where the document goes on in the same
sentence.
Test set: 503 SciTLDR test abstracts that hold both kinds of content, each split into its conceptual
and its empirical sentences (CCSBench App. C.2, by the cue rule of :mod:`metrics.focus`, not by the
judge): two targets per abstract, each asked with readability normal and high, with the target's
length bin (0-4) and 1-3 of its keywords: 2,012 examples with all four controls
(:func:`variants.ccs.data.build_test_set`). Measured on it (no judge in the baseline): the baseline
scores ROUGE-L 0.681, length PCC 1.00 / MAD 0.00, keyword SR 0.984, ΔFKGL 0.96, focus F1 0.871 (0.887
with the judge trained on the cue rule); with the cue-rule judge, the same extraction given only length
and keywords: ΔFKGL 0.00, focus F1 0.715; the whole abstract: PCC 0.32, MAD 2.17, ΔFKGL 0.00, focus F1
0.492. Extra test set ``macsum-length``: MACSum-Doc's human summaries at three lengths
(docs/evaluation-targets.md). Files: data builder ``variants/ccs/data.py`` (``python -m training build-data ccs``);
trainer defaults and flags ``variants/ccs/train.py`` (``python -m training ccs``).
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Any

from metrics.ccs import (
    BIN_WIDTH,
    CONTROLS,
    N_LENGTH_BINS,
    READABILITY,
    fkgl,
    focus_f1,
    keyword_success,
    length_bin_words,
    score_records,
)
from metrics.focus import FOCUS, default_focus_classifier
from metrics.support import supported_spans
from metrics.text import STOPWORDS, WORD, sentences, stem, words
from models.ccs.processing_ccs import CCSProcessor, hard_prompt

from ..base import (
    Baseline,
    Control,
    ControlError,
    Paper,
    Prepared,
    Score,
    Summarizer,
    Summary,
    Variant,
    processor_settings,
    whole_groups,
)
from .preference import preferred_sentences, sentence_rank

ADAPTER_CONFIG = "adapter_config.json"
CORPUS_METRICS = ("length_pcc", "delta_fkgl", "focus_f1")  # Table 4 columns that are not per-example means
DEFAULT_LENGTH_BIN = 1  # the baseline's length when none is asked: 51-100 words, an abstract's size
# The pasted row (Variant.paste): a period every few words reads "easier" by FKGL, and one sentence of the
# focus judge's cue words (metrics.focus) reads as the asked focus.
PASTED_PERIOD_WORDS = 4
PASTED_CUES = {
    "empirical": "Experiments on benchmark datasets show improved results and accuracy.",
    "conceptual": "We propose a novel framework and theory for the problem.",
}


def periods_every(text: str, n: int) -> str:
    """``text`` with a sentence end after every ``n`` words, the next word capitalized."""
    tokens = text.split()
    chunks = [" ".join(tokens[i : i + n]).rstrip(".,;:") + "." for i in range(0, len(tokens), n)]
    return " ".join(chunk[:1].upper() + chunk[1:] for chunk in chunks)


def composition(controls: dict) -> str:
    """The requested controls as one name in the paper's order, e.g. ``length+keywords+focus``."""
    return "+".join(name for name in CONTROLS if controls.get(name) not in (None, "", [])) or "none"


def missing_keywords(text: str, keywords: list[str]) -> list[str]:
    """The keywords that do not occur in ``text`` (Porter stems, whole words, as the SR metric)."""
    if not keywords:
        return []
    [found] = keyword_success([text], [keywords]).found
    return [keyword for keyword, hit in zip(keywords, found) if not hit]


def content_keywords(text: str, n: int, idf: dict[str, float] | None = None, within: str | None = None) -> list[str]:
    """Up to ``n`` keywords of ``text``: its content words (not stop words, at least 3 letters),
    one per stem, ranked by count x ``idf`` (1 when not given), then first occurrence; with
    ``within``, only words whose stem also occurs there (so a keyword is in the document)."""
    allowed = {stem(w) for w in words(within)} if within is not None else None
    tokens = [w for w in words(text) if w.isalpha() and len(w) >= 3 and w not in STOPWORDS]
    counts = Counter(stem(w) for w in tokens)
    surface: dict[str, str] = {}
    for w in tokens:
        surface.setdefault(stem(w), w)
    default_idf = max(idf.values()) if idf else 1.0
    ranked = sorted(surface, key=lambda s: -counts[s] * (idf.get(surface[s], default_idf) if idf else 1.0))
    return [surface[s] for s in ranked if allowed is None or s in allowed][:n]


# ---- the model-free baseline ------------------------------------------------------------------------


def bin_range(length_bin: int) -> tuple[int, int]:
    """Words a summary of the bin may have (bin 0: 1-50, bin 1: 51-100, ...); the open last bin is
    given a 50-word range too, so an extract stops somewhere."""
    return (1 if length_bin == 0 else length_bin * BIN_WIDTH + 1), (length_bin + 1) * BIN_WIDTH


def controlled_extract(document: str, controls: dict) -> tuple[str, list[str]]:
    """Sentences of the document that meet the length bin and cover the keywords, in document order.

    Sentences are ranked by :func:`variants.ccs.preference.sentence_rank` (common words first for
    ``high`` readability; nothing a metric reads; a focus changes nothing). Each keyword brings its best-ranked
    sentence; then sentences by rank are added while the extract stays within the bin, until it
    reaches the bin's middle. If whole sentences cannot reach the bin, the next one is cut to fit.
    Returns the extract and notices (keywords absent or left out, a document shorter than the bin).
    """
    sents = sentences(document)
    sizes = [len(s.split()) for s in sents]
    low, high = bin_range(controls.get("length", DEFAULT_LENGTH_BIN))
    if sum(sizes) < low:
        return " ".join(sents), [f"the document has only {sum(sizes)} words, fewer than the length bin's {low}"]
    rank = sentence_rank(sents, controls.get("readability"))

    notices, chosen = [], []
    keywords = controls.get("keywords") or []
    absent = missing_keywords(document, keywords)
    if absent:
        notices.append(f"keyword(s) not in the document, so not in an extract: {', '.join(absent)}")
    for keyword in (k for k in keywords if k not in absent):
        if not missing_keywords(" ".join(sents[i] for i in chosen), [keyword]):
            continue  # an earlier keyword's sentence has it
        best = next((i for i in rank if not missing_keywords(sents[i], [keyword])), None)
        if best is not None and sum(sizes[i] for i in chosen) + sizes[best] <= high:
            chosen.append(best)
        else:
            notices.append(f"keyword {keyword!r} left out: no sentence that has it fits the length bin")
    middle = (low + high) // 2
    for i in rank:
        total = sum(sizes[j] for j in chosen)
        if total >= middle:
            break
        if i not in chosen and total + sizes[i] <= high:
            chosen.append(i)
    parts = {i: sents[i] for i in chosen}
    total = sum(sizes[i] for i in chosen)
    if total < low:  # only long sentences left: cut the best-ranked one to fill the bin
        cut = next(i for i in rank if i not in chosen)
        parts[cut] = " ".join(sents[cut].split()[: middle - total])
        notices.append(
            f"a sentence was cut to its first {middle - total} words to reach the length bin, so the "
            f"summary has part of a sentence{' at its end' if cut == max(parts) else ''}"
        )
    return " ".join(parts[i] for i in sorted(parts)), notices


class CCSBaseline(Baseline):
    name = "baseline: length- and keyword-controlled extraction"

    def extract(self, document: str, controls: dict) -> Summary:
        text, notices = controlled_extract(document, controls)
        return Summary(text, notices + readability_notices(document, controls, text))


def readability_notices(document: str, controls: dict, text: str) -> list[str]:
    """A notice when asking for ``high`` readability changed nothing: the extract is the one given
    ``normal``. The baseline only ranks sentences by their words' commonness, so this happens exactly when there is no
    choice to make (a one-sentence document, or one whose words fit the bin's middle, so every sentence
    is taken) or when the easiest sentences are the ones chosen anyway."""
    if controls.get("readability") != "high":
        return []
    plain, _ = controlled_extract(document, {**controls, "readability": "normal"})
    if plain != text:
        return []
    sents = sentences(document)
    if len(sents) < 2:
        why = "the document is one sentence, so there is no easier sentence to choose"
    elif all(s in text for s in sents):
        why = (
            f"the document's {len(document.split())} words fit the length bin, so every sentence is in the "
            "extract either way (try a shorter length bin or a longer document)"
        )
    else:
        why = "the sentences the length bin and keywords select are already the easiest ones"
    return [
        f"readability 'high' changed nothing here: {why}; the baseline picks easier sentences, it does not "
        "rewrite them"
    ]


# ---- loading a checkpoint --------------------------------------------------------------------------


def load_adapter(path: str | Path, device: str | None = None, base_model: str | None = None, **kwargs: Any):
    """A LoRA adapter folder on its base model: the base named in ``adapter_config.json``
    (``base_model_name_or_path``: a Hub id or a local folder) unless ``base_model`` is given."""
    import torch

    from store.adapters import load_adapter_model

    from ..seq2seq import pick_device

    device = pick_device(device)
    dtype = torch.bfloat16 if device.startswith("cuda") and torch.cuda.is_bf16_supported() else torch.float32
    # the base as a folder relative to the adapter's (the store's ../general), absolute, or a Hub id;
    # a compact base is dequantized (store.compact). Merged, as every stored adapter is served: peft's
    # unmerged layers run each projection three times (base, A, B), 2.5 x the Linear calls per step.
    model = load_adapter_model(path, base_model, **kwargs)
    return model.to(dtype).to(device).eval()


# ---- the variant -----------------------------------------------------------------------------------


class CCSVariant(Variant):
    id = "ccs"
    title = "Compositional control (CCSBench)"
    description = (
        "Summarize under any mix of four controls at once: length bin, keywords, readability and empirical focus."
    )
    paper = Paper(
        title="CCSBench: Evaluating Compositional Controllability in LLMs for Scientific Document Summarization",
        authors="Yixi Ding, Jiaying Wu, Tongyao Zhu, Yanxia Qin, Qian Liu, Min-Yen Kan",
        year=2025,
        url="https://arxiv.org/abs/2410.12601",
        bibtex="""@misc{ding2025ccsbench,
  title         = {CCSBench: Evaluating Compositional Controllability in LLMs for Scientific Document Summarization},
  author        = {Ding, Yixi and Wu, Jiaying and Zhu, Tongyao and Qin, Yanxia and Liu, Qian and Kan, Min-Yen},
  year          = {2025},
  eprint        = {2410.12601},
  archivePrefix = {arXiv},
  note          = {KDD 2025 SciSoc LLM Workshop}
}""",
    )
    methods = ("lora", "prompt")
    controls = (
        Control(
            "length",
            "integer",
            f"length bin, {BIN_WIDTH} words each: 0 is {length_bin_words(0)}, "
            f"1 is {length_bin_words(1)}, ..., {N_LENGTH_BINS - 1} is {length_bin_words(N_LENGTH_BINS - 1)}",
            minimum=0,
            maximum=N_LENGTH_BINS - 1,
        ),
        Control("keywords", "keywords", "terms the summary must contain (comma-separated)"),
        Control("readability", "choice", "high: readable by laymen; normal: not simplified", choices=READABILITY),
        Control(
            "focus",
            "choice",
            "empirical: experiments, data and results; conceptual: motivation, theory, method and implications",
            choices=FOCUS,
        ),
    )
    # Per-example scores whose corpus mean is the paper's number (the mean length_error is the MAD),
    # then the paper's corpus-only numbers (corpus_scores): PCC, ΔFKGL = fkgl_normal - fkgl_high, F1.
    metric_names = (
        "rougeL",
        "length_error",
        "length_hit",
        "keyword_sr",
        "fkgl_normal",
        "fkgl_high",
        "focus_match",
        *CORPUS_METRICS,
    )
    control_metrics = ("length_hit", "length_error", "keyword_sr", "focus_match", *CORPUS_METRICS)
    lower_is_better = ("length_error",)
    contrasts = {"delta_fkgl": ("fkgl_normal", "fkgl_high")}  # ΔFKGL's effect interval (training.sensitivity)
    # Table 4, on CCSBench's compositional test set (arXiv papers; ours is other data). ROUGE-L /100;
    # the paper's SR pools all keywords, ours is the mean of each summary's share (equal when every
    # summary has as many keywords).
    reported = tuple(
        {
            "system": system,
            "source": "Table 4",
            "metrics": dict(
                zip(
                    (
                        "rougeL",
                        "length_pcc",
                        "length_error",
                        "keyword_sr",
                        "fkgl_normal",
                        "fkgl_high",
                        "delta_fkgl",
                        "focus_f1",
                    ),
                    values,
                )
            ),
        }
        for system, values in (
            ("A2 Flan-T5-XXL zero-shot", (0.1425, 0.00, 1.39, 0.46, 12.66, 12.68, -0.02, 0.39)),
            ("B1 Flan-T5-XL + LoRA", (0.2222, 0.49, 0.55, 0.78, 13.11, 9.37, 3.59, 0.70)),
            ("B2 Flan-T5-XXL + LoRA", (0.2343, 0.78, 0.27, 0.85, 14.40, 10.78, 3.62, 0.75)),
            ("C1 Flan-T5-Large hard prompt, fully fine-tuned", (0.2136, 0.56, 0.53, 0.86, 13.71, 10.40, 3.31, 0.63)),
        )
    )

    def validate(self, controls: dict | None, assets: Any = None) -> dict:
        checked = super().validate(controls, assets)
        for keyword in checked.get("keywords", []):
            if not words(keyword):
                raise ControlError(f'keyword {keyword!r} has no word to match; give words, e.g. "multi-scale"')
        if checked.get("keywords") == []:
            del checked["keywords"]
        return checked

    def prepare(self, document: str, controls: dict, method: str, assets: Any = None) -> Prepared:
        self.check_method(method)
        absent = missing_keywords(document, controls.get("keywords") or [])
        notices = (
            [f"keyword(s) not in the document (allowed; the summary is scored on them): {', '.join(absent)}"]
            if absent
            else []
        )
        return Prepared(hard_prompt(document, controls), notices=notices)

    def processor(self, summarizer: Summarizer) -> CCSProcessor:
        """The hard prompt as a self-contained processor (:mod:`models.ccs.processing_ccs`)."""
        return CCSProcessor(summarizer.tokenizer, processor_settings(summarizer))

    def constraints(self, controls: dict, assets: Any = None):
        """The length bin as word bounds (bin b: 50b+1 to 50(b+1) words; bin 0 from 1 word; the last bin
        open above) and the keywords, for the decoder to enforce (:mod:`variants.constraints`); ``high``
        readability as the document sentences to prefer (:func:`variants.ccs.preference.preferred_sentences`)."""
        from ..constraints import HardConstraints

        low = high = None
        if controls.get("length") is not None:
            b = controls["length"]
            low, high = bin_range(b)
            high = None if b == N_LENGTH_BINS - 1 else high  # the decoder leaves the last bin open
        high_readability = controls.get("readability") == "high"
        prefer = functools.partial(preferred_sentences, readability="high") if high_readability else None
        return HardConstraints(low, high, tuple(controls.get("keywords") or ()), prefer)

    def baseline(self) -> Summarizer:
        return CCSBaseline(self)

    def load(self, path: Path, record: dict, device: str | None = None, **kwargs: Any) -> Summarizer:
        """An adapter folder (``adapter_config.json``: LoRA on its base model) or a full model folder
        (``prompt``, or a merged adapter)."""
        from transformers import AutoTokenizer

        from ..seq2seq import Seq2SeqSummarizer, load_seq2seq

        path = Path(path)
        if (path / ADAPTER_CONFIG).is_file():
            from store import tokenizer_folder

            model = load_adapter(path, device, **kwargs)
            tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder(path))
        else:
            model, tokenizer = load_seq2seq(path, device, **kwargs)
        return Seq2SeqSummarizer(self, record.get("name", path.name), record["method"], model, tokenizer, None, record)

    def score(
        self, summary: str, document: str, controls: dict, reference: str | None = None, assets: Any = None
    ) -> dict[str, Score]:
        asked = {name: value for name, value in controls.items() if name != "focus"}  # focus: judged below
        record = {"prediction": summary, "controls": asked, **({"references": [reference]} if reference else {})}
        result = score_records([record])["examples"][0]
        scores = {}
        if "length_produced" in result:
            want, got = result["length_requested"], result["length_produced"]
            details = {"requested_bin": want, "produced_bin": got, "words": len(summary.split())}
            scores["length_hit"] = Score(
                float(want == got),
                f"1 if the summary's {len(summary.split())} words "
                f"fall in the requested bin ({length_bin_words(want)})",
                details,
            )
            scores["length_error"] = Score(
                float(abs(want - got)),
                "bins between requested and produced length "
                "(its mean over examples is the paper's MAD; lower is better)",
                details,
            )
        spans = supported_spans(summary, document)
        if "keywords_found" in result:
            found = dict(zip(controls["keywords"], supported_keywords(spans, controls["keywords"])))
            scores["keyword_sr"] = Score(
                sum(found.values()) / len(found),
                "share of the keywords the summary uses "
                "(after stemming, whole words) inside runs of words the document supports: "
                "the paper's success rate, a pasted keyword list not counted",
                found,
            )
        grade = fkgl([summary], [document])[0]
        scores["fkgl"] = Score(
            grade,
            "Flesch-Kincaid grade level of the summary (lower reads easier), a sentence "
            "end counted only where the document does not go on in the same sentence",
        )
        if controls.get("readability"):
            level = controls["readability"]
            scores[f"fkgl_{level}"] = Score(
                grade,
                f"FKGL of a summary asked for {level} readability; ΔFKGL = "
                "mean fkgl_normal - mean fkgl_high (higher is better)",
            )
        if controls.get("focus"):
            # The judge reads what the document supports: a pasted cue sentence is not part of it.
            supported = " ".join(spans)
            proba = default_focus_classifier().predict_proba([supported])[0] if spans else None
            read = FOCUS[int(proba.argmax())] if spans else None
            scores["focus_match"] = Score(
                float(read == controls["focus"]),
                f"1 if the focus judge reads the summary's words that the document supports "
                f"as {controls['focus']} (it reads {read or 'nothing: no supported words'})",
                {"probabilities": dict(zip(FOCUS, map(float, proba))) if spans else {}},
            )
        if "rougeL" in result:
            scores["rougeL"] = Score(result["rougeL"], "ROUGE-L F1 against the reference")
        return scores

    def paste(self, lead: str, controls: dict, assets: Any = None) -> str:
        """Lead-k cut by a period every :data:`PASTED_PERIOD_WORDS` words when high readability is
        asked, then the keywords as a list and a sentence of the asked focus's cue words."""
        text = periods_every(lead, PASTED_PERIOD_WORDS) if controls.get("readability") == "high" else lead
        if controls.get("keywords"):
            text += " " + ", ".join(controls["keywords"]) + "."
        if controls.get("focus"):
            text += " " + PASTED_CUES[controls["focus"]]
        return text

    def evidence(self, summary: str, controls: dict, assets: Any = None) -> list[str]:
        """The summary's words that match a requested keyword (same stem)."""
        wanted = {stem(w) for keyword in controls.get("keywords") or [] for w in words(keyword)}
        return list(dict.fromkeys(w for w in WORD.findall(summary) if stem(w.lower()) in wanted))

    def suggestions(self, document: str, assets: Any = None) -> dict[str, list[str]]:
        return {"keywords": content_keywords(document, 5)}

    def card_facts(self, assets: Any = None) -> dict[str, Any]:
        return {
            "example_document": EXAMPLE_DOCUMENT,
            "example_controls": {
                "length": 0,
                "keywords": ["multi-scale"],
                "readability": "high",
                "focus": "empirical",
            },
        }

    def corpus_scores(self, records: list[dict], rows: list[dict], source: str = "<records>") -> dict[str, Any]:
        """The paper's numbers that are not means of per-example scores: length PCC, ΔFKGL and focus
        F1 over all rows (:func:`group_metrics`)."""
        overall = group_metrics(rows)
        return {name: overall[name] for name in CORPUS_METRICS}

    def breakdown(self, rows: list[dict]) -> dict[str, dict]:
        """The paper's columns for each composition of controls (``length+keywords``, ...)."""
        return composition_metrics(rows)

    extra_test_sets = ("macsum-length",)

    def extra_test_set(self, name: str, max_samples: int | None = None) -> list[dict]:
        """``macsum-length``: MACSum-Doc's human summaries of each document at its three lengths
        (CC BY-NC-ND: references unchanged, for evaluation only), asked as length bins
        (:func:`variants.ccs.data.macsum_length_set`); whole documents only (three records each)."""
        if name not in self.extra_test_sets:
            return super().extra_test_set(name, max_samples)
        from ..sources import load_source
        from .data import macsum_length_set

        return whole_groups(macsum_length_set(load_source("macsum_doc", "val")), max_samples)

    def test_examples(self, max_samples: int | None = None) -> list[dict]:
        """The compositional test set of :func:`variants.ccs.data.build_test_set`: each SciTLDR test
        abstract's conceptual and empirical parts as targets, each asked with readability normal
        and high (four adjacent examples per abstract, all four controls)."""
        from .data import build_test_set

        return build_test_set(seed=0)[:max_samples]


def paper_metrics(rows: list[dict]) -> dict[str, dict]:
    """The paper's Table 4 columns over an evaluation report's rows (``training.evaluate``: each
    row has ``controls``, ``summary`` and the per-example ``rougeL``), for all rows (``"all"``) and
    for each composition of controls."""
    return {"all": group_metrics(rows), **composition_metrics(rows)}


def composition_metrics(rows: list[dict]) -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(composition(row["controls"]), []).append(row)
    return {name: group_metrics(group) for name, group in groups.items()}


def group_metrics(group: list[dict]) -> dict:
    """ROUGE-L, length PCC and MAD, keyword SR, FKGL per level and ΔFKGL, focus F1 (macro over the two
    labels) of one group of rows. Length comes from the summaries; keywords, FKGL and focus from the
    rows' own scores (``keyword_sr``, ``fkgl_normal`` / ``fkgl_high``, ``focus_match``), which
    :meth:`CCSVariant.score` computed against the document."""
    corpus = score_records(
        [
            {"prediction": r["summary"], "controls": {"length": r["controls"]["length"]}}
            for r in group
            if r["controls"].get("length") is not None
        ]
    )["corpus"]
    normal, high = (
        mean([r[f"fkgl_{level}"] for r in group if r.get(f"fkgl_{level}") is not None]) for level in READABILITY
    )
    asked = [r for r in group if r.get("focus_match") is not None]
    other = dict(zip(FOCUS, reversed(FOCUS)))  # two labels: a miss is a reading of the other one
    read = [r["controls"]["focus"] if r["focus_match"] else other[r["controls"]["focus"]] for r in asked]
    return {
        "n": len(group),
        "rougeL": mean([r["rougeL"] for r in group if r.get("rougeL") is not None]),
        "length_pcc": corpus.get("length_pcc"),
        "length_mad": corpus.get("length_mad"),
        "keyword_sr": mean([r["keyword_sr"] for r in group if r.get("keyword_sr") is not None]),
        "fkgl_normal": normal,
        "fkgl_high": high,
        "delta_fkgl": normal - high if normal is not None and high is not None else None,
        "focus_f1": focus_f1(read, [r["controls"]["focus"] for r in asked])["macro"] if asked else None,
    }


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def supported_keywords(spans: list[str], keywords: list[str]) -> list[bool]:
    """For each keyword, whether some supported run (:func:`metrics.support.supported_spans`) holds it
    (:func:`metrics.ccs.keyword_success`: stems, whole words, in a row)."""
    if not spans:
        return [False] * len(keywords)
    found = keyword_success(spans, [keywords] * len(spans)).found
    return [any(flags) for flags in zip(*found)]


# The card's and the Space's example: a scientific abstract with conceptual and empirical parts
# (the paper's App. B.2 example, a CRF part-of-speech tagger for Manipuri).
EXAMPLE_DOCUMENT = (
    "Part-of-speech tagging of Manipuri is hard because the language is highly agglutinative and rich in "
    "reduplicated multiword expressions. We propose a conditional random field tagger with new features, "
    "including a feature for reduplicated multiword expressions, and a multi-scale window of word affixes. "
    "The experiment shows that the new CRF system achieves a recall of 78.22%, a precision of 73.15% and "
    "an F-measure of 75.60%. With the reduplicated multiword expression feature, the results improve to a "
    "recall of 80.20%, a precision of 74.31% and an F-measure of 77.14%."
)

__all__ = [
    "CCSVariant",
    "controlled_extract",
    "composition",
    "content_keywords",
    "hard_prompt",
    "load_adapter",
    "missing_keywords",
    "paper_metrics",
]
