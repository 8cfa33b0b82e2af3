"""The focus judge: a classifier that labels a text ``conceptual`` or ``empirical``.

CCSBench (Ding et al., Sec. 4.2) labels the focus of generated summaries with GPT-4o. SteerSum runs
offline, so it ships a small scikit-learn classifier instead (``TfidfVectorizer`` +
``LogisticRegression``) behind the :class:`FocusJudge` protocol, which an LLM judge can replace. How
the committed default was trained and how well it does is in :mod:`metrics.focus`, which rebuilds it.

The classifier is saved as JSON (parameters, vocabulary, report) + NPZ (idf, weights), never pickled,
so loading the committed file or a downloaded one runs no code.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from metrics.focus_labels import FOCUS

DEFAULT_DIR = Path(__file__).resolve().parent / "assets" / "focus"


class FocusJudge(Protocol):
    """Anything that labels texts ``"conceptual"`` or ``"empirical"`` (e.g. an LLM, as the paper)."""

    def predict(self, texts: list[str]) -> list[str]: ...


def normalize(text: str) -> str:
    """Lower-case, every number becomes ``#`` so "78.22 %" and "3.1 %" are the same feature."""
    return re.sub(r"\d+(?:[.,]\d+)*", " # ", text.lower())


VECTORIZER_PARAMS = {
    "ngram_range": (1, 2),
    "min_df": 3,
    "max_features": 12000,
    "sublinear_tf": True,
    "token_pattern": r"(?u)\b\w\w+\b|[#%]",
}
MODEL_PARAMS = {"C": 4.0, "class_weight": "balanced", "max_iter": 2000}


def select_vocabulary(
    texts: list[str], min_df: int = VECTORIZER_PARAMS["min_df"], max_features: int = VECTORIZER_PARAMS["max_features"]
) -> list[str]:
    """The ``max_features`` most frequent terms (total count, scikit-learn's meaning of
    ``max_features``) among those in at least ``min_df`` texts, ties broken by the term itself, in
    alphabetical order. scikit-learn breaks ties with numpy's unstable argsort, whose order differs
    between CPUs (AVX-512 or not), so the same data gave different vocabularies on different machines."""
    counter = CountVectorizer(
        preprocessor=normalize,
        min_df=min_df,
        ngram_range=VECTORIZER_PARAMS["ngram_range"],
        token_pattern=VECTORIZER_PARAMS["token_pattern"],
    )
    totals = np.asarray(counter.fit_transform(texts).sum(axis=0)).ravel()
    terms = counter.get_feature_names_out().tolist()
    ranked = sorted(range(len(terms)), key=lambda i: (-totals[i], terms[i]))
    return sorted(terms[i] for i in ranked[:max_features])


class SklearnFocusClassifier:
    """TF-IDF (word 1-2-grams, numbers as ``#``) + logistic regression. Saved as JSON (parameters,
    vocabulary, report) + NPZ (idf, weights): no pickle, so loading a file runs no code."""

    def __init__(
        self,
        vectorizer: TfidfVectorizer | None = None,
        model: LogisticRegression | None = None,
        report: dict | None = None,
    ):
        self.vectorizer = vectorizer or TfidfVectorizer(preprocessor=normalize, **VECTORIZER_PARAMS)
        self.model = model or LogisticRegression(**MODEL_PARAMS)
        self.report = report or {}

    def fit(self, texts: list[str], labels: list[str]) -> SklearnFocusClassifier:
        unknown = sorted(set(labels) - set(FOCUS))
        if unknown:
            raise ValueError(f"unknown focus label(s) {unknown}; allowed: {', '.join(FOCUS)}")
        params = {k: v for k, v in VECTORIZER_PARAMS.items() if k not in ("min_df", "max_features")}
        self.vectorizer = TfidfVectorizer(preprocessor=normalize, vocabulary=select_vocabulary(texts), **params)
        self.model.fit(self.vectorizer.fit_transform(texts), labels)
        return self

    def predict(self, texts: list[str]) -> list[str]:
        return self.model.predict(self.vectorizer.transform(texts)).tolist()

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), 2)`` probabilities, columns in :data:`FOCUS` order."""
        proba = self.model.predict_proba(self.vectorizer.transform(texts))
        return proba[:, [list(self.model.classes_).index(label) for label in FOCUS]]

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        config = {
            "format": "steersum-focus-classifier/1",
            "labels": self.model.classes_.tolist(),
            "vectorizer": {**VECTORIZER_PARAMS, "preprocessor": "metrics.focus_classifier.normalize"},
            "model": MODEL_PARAMS,
            "report": self.report,
            "vocabulary": self.vectorizer.get_feature_names_out().tolist(),
        }
        (directory / "classifier.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
        np.savez_compressed(
            directory / "classifier.npz",
            idf=self.vectorizer.idf_,
            coef=self.model.coef_,
            intercept=self.model.intercept_,
        )

    @classmethod
    def load(cls, directory: str | Path) -> SklearnFocusClassifier:
        directory = Path(directory)
        config = json.loads((directory / "classifier.json").read_text(encoding="utf-8"))
        with np.load(directory / "classifier.npz", allow_pickle=False) as arrays:
            idf, coef, intercept = arrays["idf"], arrays["coef"], arrays["intercept"]
        params = {**config["vectorizer"], "ngram_range": tuple(config["vectorizer"]["ngram_range"])}
        del params["preprocessor"], params["min_df"], params["max_features"]  # fixed by the vocabulary
        vectorizer = TfidfVectorizer(preprocessor=normalize, vocabulary=config["vocabulary"], **params)
        vectorizer.idf_ = idf
        model = LogisticRegression(**config["model"])
        model.classes_, model.coef_, model.intercept_ = np.array(config["labels"]), coef, intercept
        return cls(vectorizer, model, config["report"])


@lru_cache(maxsize=1)
def default_focus_classifier() -> SklearnFocusClassifier:
    """The committed classifier in ``metrics/assets/focus`` (no data needed at run time)."""
    return SklearnFocusClassifier.load(DEFAULT_DIR)
