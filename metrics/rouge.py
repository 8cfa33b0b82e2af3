"""ROUGE-1, ROUGE-2 and ROUGE-Lsum (Lin, 2004) with Porter stemming, as the five papers report it.

The numbers come from Google's ``rouge-score`` package (``RougeScorer(["rouge1", "rouge2",
"rougeLsum"], use_stemmer=True)``), the implementation behind the Hugging Face summarization
examples; nothing here re-counts n-grams. What this module adds:

* **Sentences for ROUGE-Lsum.** rouge-score's ``rougeLsum`` splits a summary into sentences at
  ``\\n`` only; a one-line summary would be scored as one long sentence (plain ROUGE-L). Every text is
  first split with :func:`metrics.text.sentences` (Punkt) and re-joined with newlines, as the
  Hugging Face examples do with ``nltk.sent_tokenize``.
* **Several references.** Each example is scored against each of its references and, per ROUGE type,
  the reference with the highest F1 is kept (rouge-score's ``score_multi``); ROUGE-1 and ROUGE-2 may
  so come from different references.
* **Scale.** Scores are fractions in [0, 1], as rouge-score returns them; the papers print them x100.
  Per example: F1 under the plain names (``rouge1``, ``rouge2``, ``rougeLsum``) and precision/recall
  under ``<name>_precision`` / ``<name>_recall``; the corpus score is the mean over examples.
"""

from __future__ import annotations

from functools import lru_cache

from absl import logging as absl_logging
from rouge_score import rouge_scorer

from metrics.io import DataError, get_field
from metrics.text import sentences

ROUGE_TYPES = ("rouge1", "rouge2", "rougeLsum")

# rouge-score logs "Using default tokenizer." through absl at INFO for every RougeScorer it builds
# (metrics.egises and metrics.ccs build one per call): one line per scored summary in a server log.
absl_logging.set_verbosity(absl_logging.WARNING)

FIELDS = """
  prediction  str        the generated summary
  references  list[str]  one or more reference summaries (a single string is one reference);
                         the best-matching reference counts, per ROUGE type
"""


@lru_cache(maxsize=1)
def _scorer() -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def _lines(text: str) -> str:
    """One sentence per line: the form rouge-score's ``rougeLsum`` expects."""
    return "\n".join(sentences(text))


def check_references(predictions: list[str], references: list, allow_empty: bool = False) -> list[list[str]]:
    """References as lists of strings, after checking that nothing is empty: an empty text has no
    n-gram, and a score of 0 for it would hide a broken generation or data file. ``allow_empty``
    lets a prediction be empty (a model's real output, scored 0, as a variant's live score needs)."""
    if len(predictions) != len(references):
        raise DataError(f"predictions and references differ in length: {len(predictions)} vs {len(references)}")
    checked = []
    for i, (prediction, refs) in enumerate(zip(predictions, references)):
        if not isinstance(prediction, str) or not (prediction.strip() or allow_empty):
            raise DataError(f"predictions[{i}]: the prediction is empty")
        refs = [refs] if isinstance(refs, str) else list(refs)
        if not refs:
            raise DataError(f"references[{i}]: the list of references is empty")
        for j, ref in enumerate(refs):
            if not isinstance(ref, str) or not ref.strip():
                raise DataError(f"references[{i}][{j}]: the reference is empty")
        checked.append(refs)
    return checked


def rouge(predictions: list[str], references: list[list[str]] | list[str], allow_empty: bool = False) -> dict:
    """ROUGE-1/2/Lsum of each prediction against its reference(s), and corpus means.

    ``references[i]`` is a list of references for ``predictions[i]`` or one reference string.
    Returns ``{"corpus": {"n", "rouge1", ...}, "examples": [{"rouge1", "rouge1_precision", ...}]}``,
    scores in [0, 1]; a corpus of no example has ``None`` means. An empty prediction raises
    :class:`DataError` unless ``allow_empty`` (then it scores 0).

    >>> rouge(["The cat sat on the mat."], [["The cat is on the mat."]])["examples"][0]["rouge2"]
    0.6
    """
    references = check_references(predictions, references, allow_empty)
    scorer = _scorer()
    examples = []
    for prediction, refs in zip(predictions, references):
        best = scorer.score_multi([_lines(ref) for ref in refs], _lines(prediction))
        example = {}
        for name in ROUGE_TYPES:
            example[name] = best[name].fmeasure
            example[f"{name}_precision"] = best[name].precision
            example[f"{name}_recall"] = best[name].recall
        examples.append(example)
    keys = list(examples[0]) if examples else [f"{n}{s}" for n in ROUGE_TYPES for s in ("", "_precision", "_recall")]
    corpus = {"n": len(examples)}
    corpus.update({key: sum(e[key] for e in examples) / len(examples) if examples else None for key in keys})
    return {"corpus": corpus, "examples": examples}


def score_records(records: list[dict], source: str = "<records>") -> dict:
    """``python -m metrics rouge FILE.jsonl``: the fields of :data:`FIELDS`, checked line by line."""
    predictions, references = [], []
    for i, record in enumerate(records):
        where = f"{source}:{i + 1}"
        predictions.append(get_field(record, "prediction", str, where))
        refs = get_field(record, "references", (list, str), where, items=str)
        refs = [refs] if isinstance(refs, str) else refs
        for j, ref in enumerate(refs):
            if not ref.strip():
                raise DataError(f"{where}: field 'references'[{j}] is empty")
        references.append(refs)
    result = rouge(predictions, references)
    return {
        "metric": "rouge",
        **result,
        "notes": "F1 (and precision/recall) in [0, 1], the papers print x100; rouge-score with Porter "
        "stemming, best reference per ROUGE type; rougeLsum over Punkt sentences.",
    }
