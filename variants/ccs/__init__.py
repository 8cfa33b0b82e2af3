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
Test set: SciTLDR test abstracts that hold both kinds of content, each split into its conceptual and its
empirical sentences (CCSBench App. C.2, by the cue rule of :mod:`metrics.focus_labels`, not by the judge): two
targets per abstract, each asked with readability normal and high, with the target's length bin (0-4) and
1-3 of its keywords (:func:`variants.ccs.data.build_test_set`; the baseline's scores on it are in
docs/log.md). Extra test set ``macsum-length``: MACSum-Doc's human summaries at three lengths
(docs/evaluation-targets.md).

Files: ``baseline.py`` (the extraction and the sentence ranking it shares with the decoder),
``evaluation.py`` (test sets, Table 4, the pasted row), ``data.py`` (``python -m training build-data ccs``),
``train.py`` (trainer defaults and flags, ``python -m training ccs``).
"""

from __future__ import annotations

import functools
from typing import Any

from metrics.ccs import BIN_WIDTH, N_LENGTH_BINS, READABILITY, fkgl, keyword_success, length_bin_words, score_records
from metrics.focus_classifier import default_focus_classifier
from metrics.focus_labels import FOCUS
from metrics.support import supported_spans
from metrics.text import WORD, stem, words
from models.ccs.processing_ccs import COMMON_WORDS_FILE, CCSProcessor, hard_prompt

from ..base import Control, ControlError, Paper, Prepared, Score, Summarizer, Variant, processor_settings
from .baseline import (  # noqa: F401  (the baseline's pieces, for the data builder and tests)
    CCSBaseline,
    bin_range,
    common_words,
    content_keywords,
    controlled_extract,
    missing_keywords,
    preferred_sentences,
)
from .evaluation import CCSEvaluation

CONTROLS = (
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

    evaluation_class = CCSEvaluation

    def controls_for(self, assets: Any = None) -> tuple[Control, ...]:
        return CONTROLS

    def check_controls(self, controls: dict | None, assets: Any = None) -> dict:
        checked = super().check_controls(controls, assets)
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
        """The hard prompt as a self-contained processor (:mod:`models.ccs.processing_ccs`), with the common
        words its high-readability rule reads."""
        common = {COMMON_WORDS_FILE: sorted(common_words())}
        return CCSProcessor(summarizer.tokenizer, processor_settings(summarizer), common)

    def constraints(self, controls: dict, assets: Any = None):
        """The length bin as word bounds (bin b: 50b+1 to 50(b+1) words; bin 0 from 1 word; the last bin
        open above) and the keywords, for the decoder to enforce (:mod:`variants.decoding_rules`); ``high``
        readability as the document sentences to prefer (:func:`variants.ccs.baseline.preferred_sentences`)."""
        from ..decoding_rules import DecodingRules

        low = high = None
        if controls.get("length") is not None:
            b = controls["length"]
            low, high = bin_range(b)
            high = None if b == N_LENGTH_BINS - 1 else high  # the decoder leaves the last bin open
        high_readability = controls.get("readability") == "high"
        prefer = functools.partial(preferred_sentences, readability="high") if high_readability else None
        return DecodingRules(low, high, tuple(controls.get("keywords") or ()), prefer)

    def baseline(self) -> Summarizer:
        return CCSBaseline(self)

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

__all__ = ["CCSVariant", "controlled_extract", "content_keywords", "hard_prompt", "missing_keywords"]
