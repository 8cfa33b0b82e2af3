"""CCSBench control metrics (Ding et al.): was each requested attribute obeyed?

CCSBench asks for summaries under four controls at once (Sec. 3.1) and scores each one on its own
(Sec. 4.2, Table 4):

===========  ==============================  ============================================
control      values                          metric
===========  ==============================  ============================================
length       bin 0-4, 50 words each          MAD of bins (lower is better), PCC (higher)
keywords     list of terms                   success rate SR: share of keywords found
                                             after stemming (He et al., 2020)
readability  ``normal`` / ``high``           ΔFKGL = mean FKGL(normal) − mean FKGL(high)
focus        ``conceptual`` / ``empirical``  F1 of a judge's labels against the request
quality      references                      ROUGE-L F1
===========  ==============================  ============================================

Conventions taken from the paper, and where it leaves a choice:

* Length bins (Sec. 3.1): "Bin 0: 0-50 words; Bin 1: 51-100 words", so a bin's upper edge belongs
  to it (50 words is bin 0, 51 is bin 1); the last bin is open-ended. Words are whitespace tokens,
  a reader's word count ("state-of-the-art" is one word).
* MAD and PCC (Sec. 4.2 and App. A.3, after Liu et al., 2018) compare the requested bin with the
  bin of the produced summary. PCC is undefined for fewer than two examples or a constant side: NaN from the
  functions, ``null`` in reports.
* SR (App. A.3): "the fraction of keywords actually occurring in the output summaries ... exact
  matching after stemming": Porter stems of whole word tokens, a multi-word keyword must occur as
  a contiguous run. We also report the share of summaries that contain *all* their keywords.
* FKGL is Kincaid's formula with every sentence counted (:func:`fkgl`; textstat's own function
  drops sentences of two words or fewer). Given the source documents, :func:`fkgl` counts no sentence
  end where the source goes on in the same sentence, so periods added to copied text read no easier.
* ΔFKGL (Sec. 4.2, Table 4: GPT-4 has F_normal 19.12, F_high 16.99, δ 2.13): F_normal − F_high,
  so it is positive when the "high readability" summaries are easier to read; higher is better.
* Focus (Sec. 4.2, App. A.3): the paper's GPT-4o judge is replaced by :mod:`metrics.focus` (a
  documented proxy; see its docstring for its quality). The paper computes "the F1 score for each
  category" and reports one number; we report both and their macro average as that number.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import textstat
from rouge_score import rouge_scorer
from scipy.stats import ConstantInputWarning, pearsonr
from sklearn.metrics import f1_score

from metrics.focus_classifier import FocusJudge, default_focus_classifier
from metrics.focus_labels import FOCUS
from metrics.io import DataError, get_field
from metrics.support import resegment
from metrics.text import sentences, stem, words

BIN_WIDTH = 50  # words per length bin (Sec. 3.1)
N_LENGTH_BINS = 5  # bins 0-4; the last one is open-ended
READABILITY = ("normal", "high")  # "high" = readable by laymen (App. C)
CONTROLS = ("length", "keywords", "readability", "focus")

FIELDS = """
  prediction  str        the generated summary
  controls    object     any of: length (int bin 0-4, 50 words each), keywords (list[str]),
                         readability ("normal"|"high"), focus ("conceptual"|"empirical")
  references  list[str]  optional: reference summaries for ROUGE-L
"""


# ---- length ---------------------------------------------------------------------------------------


def length_bins(texts: list[str], bin_width: int = BIN_WIDTH, n_bins: int = N_LENGTH_BINS) -> list[int]:
    """Bin of each text's word count: 0..bin_width words is bin 0, then one bin per bin_width
    words (upper edge inclusive, as the paper's "Bin 1: 51-100 words"), the last bin open-ended."""
    counts = np.array([len(text.split()) for text in texts])
    bins = np.ceil(counts / bin_width).astype(int) - 1
    return np.clip(bins, 0, n_bins - 1).tolist()


def length_bin(text: str, bin_width: int = BIN_WIDTH, n_bins: int = N_LENGTH_BINS) -> int:
    return length_bins([text], bin_width, n_bins)[0]


def length_bin_words(bin_index: int, bin_width: int = BIN_WIDTH, n_bins: int = N_LENGTH_BINS) -> str:
    """The bin as words, for prompts: 0 → "0-50 words", 1 → "51-100 words", 4 → "more than 200 words"."""
    if bin_index == n_bins - 1:
        return f"more than {bin_index * bin_width} words"
    low = 0 if bin_index == 0 else bin_index * bin_width + 1
    return f"{low}-{(bin_index + 1) * bin_width} words"


def length_mad(requested_bins: list[int], produced_bins: list[int]) -> float:
    """Mean absolute deviation between requested and produced bins (lower is better)."""
    if len(requested_bins) != len(produced_bins) or not requested_bins:
        raise ValueError(
            f"need two non-empty lists of the same length, got {len(requested_bins)} and {len(produced_bins)}"
        )
    return float(np.mean(np.abs(np.asarray(requested_bins) - np.asarray(produced_bins))))


def length_pcc(requested: list[float], produced: list[float]) -> float:
    """Pearson correlation (scipy); NaN when fewer than two pairs or either side is constant."""
    if len(requested) != len(produced):
        raise ValueError(f"need lists of the same length, got {len(requested)} and {len(produced)}")
    if len(requested) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        return float(pearsonr(requested, produced).statistic)


# ---- keywords -------------------------------------------------------------------------------------


@dataclass
class KeywordSuccess:
    found: list[list[bool]]  # per summary, per keyword
    all_found: list[int | None]  # 1 when every keyword of the summary was found; None for no keywords
    rate: float  # share of summaries (with keywords) that contain all of theirs
    keyword_rate: float  # share of all keywords found: the paper's SR


def _stems(text: str) -> tuple[str, ...]:
    return tuple(stem(word) for word in words(text))


def keyword_success(summaries: list[str], keyword_lists: list[list[str]]) -> KeywordSuccess:
    """Is each keyword in its summary? Both sides are cut into word tokens and Porter-stemmed, and
    a keyword must match whole tokens in a row: "runs" is found in "running" (both stem to "run"),
    "art" is not found in "start"."""
    if len(summaries) != len(keyword_lists):
        raise ValueError(f"{len(summaries)} summaries but {len(keyword_lists)} keyword lists")
    found = []
    for summary, keywords in zip(summaries, keyword_lists):
        tokens = _stems(summary)
        wanted = [_stems(keyword) for keyword in keywords]
        if any(not keyword for keyword in wanted):
            raise ValueError(f"a keyword has no word tokens: {keywords}")
        ngrams = {tokens[i : i + n] for n in {len(k) for k in wanted} for i in range(len(tokens) - n + 1)}
        found.append([keyword in ngrams for keyword in wanted])
    all_found = [int(all(flags)) if flags else None for flags in found]
    scored = [flag for flag in all_found if flag is not None]
    flat = [flag for flags in found for flag in flags]
    return KeywordSuccess(
        found,
        all_found,
        float(np.mean(scored)) if scored else float("nan"),
        float(np.mean(flat)) if flat else float("nan"),
    )


# ---- readability ----------------------------------------------------------------------------------


def fkgl(texts: list[str], documents: list[str] | None = None) -> list[float]:
    """Flesch-Kincaid grade level of each text by Kincaid's formula (Kincaid et al., 1975), lower
    reads easier: ``0.39 * words / sentences + 11.8 * syllables / words - 15.59`` (0 for a text
    without words). Every sentence counts: ``textstat.flesch_kincaid_grade`` (0.7.13) leaves
    sentences of two words or fewer out of the sentence count, which raises the grade of short,
    simple text ("It ran." is no sentence there). Sentences are :func:`metrics.text.sentences`
    (NLTK Punkt, so "e.g." ends none); words and syllables are textstat's (CMUdict, else Pyphen).
    With ``documents`` (each text's source), a sentence end counts only where the source does not go on
    in the same sentence (:func:`metrics.support.resegment`): periods added to copied text read no easier."""
    if documents is not None and len(documents) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(documents)} documents")
    grades = []
    for i, text in enumerate(texts):
        n_words = textstat.lexicon_count(text)
        if not n_words:
            grades.append(0.0)
            continue
        split = resegment(text, documents[i]) if documents is not None else sentences(text)
        n_sentences = max(1, len(split))
        grades.append(0.39 * n_words / n_sentences + 11.8 * textstat.syllable_count(text) / n_words - 15.59)
    return grades


def delta_fkgl(texts: list[str], readability_labels: list[str]) -> float:
    """Mean FKGL of the ``normal`` texts minus that of the ``high`` texts (the paper's δ_FKGL,
    higher is better); NaN when either group is empty."""
    unknown = sorted(set(readability_labels) - set(READABILITY))
    if unknown:
        raise ValueError(f"unknown readability {unknown}; allowed: {', '.join(READABILITY)}")
    grades = np.array(fkgl(texts))
    labels = np.array(readability_labels)
    if not (labels == "normal").any() or not (labels == "high").any():
        return float("nan")
    return float(grades[labels == "normal"].mean() - grades[labels == "high"].mean())


# ---- focus ----------------------------------------------------------------------------------------


def focus_f1(predicted_labels: list[str], requested_labels: list[str]) -> dict[str, float]:
    """F1 per focus category and their macro average (scikit-learn), the requested focus as truth."""
    per_class = f1_score(requested_labels, predicted_labels, labels=list(FOCUS), average=None, zero_division=0)
    return {**{label: float(f) for label, f in zip(FOCUS, per_class)}, "macro": float(per_class.mean())}


# ---- records --------------------------------------------------------------------------------------


def _allowed(value, allowed, where: str, name: str, hint: str = "") -> None:
    if value not in allowed:
        listed = ", ".join(map(repr, allowed))
        raise DataError(f"{where}: field 'controls.{name}' is {value!r}; allowed: {listed}{hint}")


def _read_record(record: dict, where: str) -> tuple[str, dict, list[str] | None]:
    """``(prediction, controls that are set, references)``, every control value checked."""
    prediction = get_field(record, "prediction", str, where, non_empty=False)
    controls = get_field(record, "controls", dict, where, non_empty=False)
    references = get_field(record, "references", list, where, required=False, items=str)
    unknown = sorted(set(controls) - set(CONTROLS))
    if unknown:
        raise DataError(f"{where}: unknown control(s) {unknown} in 'controls'; allowed: {', '.join(CONTROLS)}")
    at = f"{where}: controls"
    length = get_field(controls, "length", int, at, required=False)
    if length is not None:
        _allowed(
            length,
            range(N_LENGTH_BINS),
            where,
            "length",
            f" (bins of {BIN_WIDTH} words: 0 is "
            f"{length_bin_words(0)}, {N_LENGTH_BINS - 1} is {length_bin_words(N_LENGTH_BINS - 1)})",
        )
    keywords = get_field(controls, "keywords", list, at, required=False, non_empty=False, items=str)
    for keyword in keywords or []:
        if not words(keyword):
            raise DataError(f"{where}: field 'controls.keywords' holds {keyword!r}, which has no word to match")
    for name, allowed in (("readability", READABILITY), ("focus", FOCUS)):
        value = get_field(controls, name, str, at, required=False)
        if value is not None:
            _allowed(value, allowed, where, name)
    return prediction, {k: v for k, v in controls.items() if v is not None and v != []}, references


def _json(value: float | None) -> float | None:
    return None if value is None or np.isnan(value) else round(float(value), 6)


def _mean(values: list) -> float | None:
    return _json(np.mean(values)) if len(values) else None


# Each _score_<control> takes the texts and requested values of the records that ask for the
# control, and returns (per-example entries, corpus entries).


def _score_length(texts: list[str], requested: list[int]) -> tuple[list[dict], dict]:
    produced = length_bins(texts)
    examples = [
        {"length_requested": want, "length_produced": got, "length_abs_error": abs(want - got)}
        for want, got in zip(requested, produced)
    ]
    return examples, {
        "length_n": len(texts),
        "length_mad": _mean([e["length_abs_error"] for e in examples]),
        "length_pcc": _json(length_pcc(requested, produced)),
    }


def _score_keywords(texts: list[str], keyword_lists: list[list[str]]) -> tuple[list[dict], dict]:
    result = keyword_success(texts, keyword_lists)
    examples = [
        {"keywords_found": flags, "keywords_all_found": all_found}
        for flags, all_found in zip(result.found, result.all_found)
    ]
    return examples, {
        "keywords_n": len(texts),
        "keywords_total": sum(map(len, result.found)),
        "keyword_sr": _json(result.keyword_rate),
        "keyword_all_rate": _json(result.rate),
    }


def _score_readability(texts: list[str], labels: list[str]) -> tuple[list[dict], dict]:
    grades = fkgl(texts)
    corpus = {}
    for level in READABILITY:
        group = [grade for grade, label in zip(grades, labels) if label == level]
        corpus.update({f"readability_n_{level}": len(group), f"fkgl_{level}": _mean(group)})
    corpus["delta_fkgl"] = _json(delta_fkgl(texts, labels))
    return [{"readability": label, "fkgl": round(grade, 4)} for label, grade in zip(labels, grades)], corpus


def _score_focus(texts: list[str], requested: list[str], judge: FocusJudge) -> tuple[list[dict], dict]:
    predicted = judge.predict(texts) if texts else []
    f1 = focus_f1(predicted, requested) if texts else {}
    return (
        [{"focus_requested": want, "focus_predicted": got} for want, got in zip(requested, predicted)],
        {
            "focus_n": len(texts),
            "focus_f1": _json(f1.get("macro")),
            **{f"focus_f1_{label}": _json(f1.get(label)) for label in FOCUS},
            "focus_accuracy": _mean([want == got for want, got in zip(requested, predicted)]),
        },
    )


def _score_rouge(texts: list[str], references: list[list[str]]) -> tuple[list[dict], dict]:
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    # best reference per example, as rouge-score's score_multi
    scores = [scorer.score_multi(refs, text)["rougeL"].fmeasure for text, refs in zip(texts, references)]
    return [{"rougeL": round(score, 6)} for score in scores], {"rougeL_n": len(texts), "rougeL": _mean(scores)}


def score_records(records: list[dict], source: str = "<records>", focus_judge: FocusJudge | None = None) -> dict:
    """Score every control each record asks for; corpus scores are over the records that asked.
    ``focus_judge`` defaults to :func:`metrics.focus_classifier.default_focus_classifier`."""
    rows = [_read_record(record, f"{source}:{i + 1}") for i, record in enumerate(records)]
    examples: list[dict] = [{} for _ in rows]
    corpus: dict = {"n": len(rows)}
    judge = focus_judge or (default_focus_classifier() if any("focus" in c for _, c, _ in rows) else None)
    scorers = {
        "length": _score_length,
        "keywords": _score_keywords,
        "readability": _score_readability,
        "focus": lambda texts, wanted: _score_focus(texts, wanted, judge),
    }
    for control, score in scorers.items():
        asked = [i for i, (_, controls, _) in enumerate(rows) if control in controls]
        per_example, totals = score([rows[i][0] for i in asked], [rows[i][1][control] for i in asked])
        for i, entry in zip(asked, per_example):
            examples[i].update(entry)
        corpus.update(totals)
    with_refs = [i for i, (_, _, refs) in enumerate(rows) if refs]
    per_example, totals = _score_rouge([rows[i][0] for i in with_refs], [rows[i][2] for i in with_refs])
    for i, entry in zip(with_refs, per_example):
        examples[i].update(entry)
    corpus.update(totals)
    return {
        "metric": "ccs",
        "corpus": corpus,
        "examples": examples,
        "focus_judge": type(judge).__name__ if judge else None,
        "notes": "null = undefined: no example asked for the control, PCC with fewer than two "
        "examples or a constant side, ΔFKGL without both readability levels. "
        "rougeL is F1 in [0, 1] (the paper's Table 4 shows x100).",
    }


# ---- corpus columns of an evaluation report (the paper's Table 4, per composition of controls) ----

CORPUS_METRICS = ("length_pcc", "delta_fkgl", "focus_f1")  # Table 4 columns that are not per-example means


def composition(controls: dict) -> str:
    """The requested controls as one name in the paper's order, e.g. ``length+keywords+focus``."""
    return "+".join(name for name in CONTROLS if controls.get(name) not in (None, "", [])) or "none"


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
