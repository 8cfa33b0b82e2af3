"""The simulated readers' interests, in a space no system or metric uses.

A simulated reader prefers some BBC topics (:func:`variants.persona.data.simulate_readers`); which
sentences of an article they want is decided here, not in the topic space (:mod:`metrics.stas`) that
the baselines and STAS use. Were the references made in that space, a rule that guesses the
preferences from the history's titles *in that space* and applies the builder's rule would rebuild
them (it did, for most test references: docs/evaluation-targets.md).

The space: non-negative matrix factorization (scikit-learn ``NMF``, ``init="nndsvd"``, its randomized SVD seeded)
of TF-IDF vectors of a different corpus, the XSum sample (BBC articles of other years and subjects).
Its components are themes learned without labels. A topic's *profile* is the mean theme mixture of the
click pool's articles of that topic (the only labelled text a simulated reader has seen); a reader's
*interest* is the preference-weighted sum of the profiles minus their plain mean (what the reader
wants more than a reader who likes every topic equally). A sentence's preference is its theme mixture
(L1-normalized) dotted with the interest. A model can still learn it: the titles show the
preferences, and the preferences fix the interest.
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import NMF
from sklearn.feature_extraction.text import TfidfVectorizer

N_THEMES = 20  # NMF components: more than the 5 topics, so sentences of one topic still differ in theme


class InterestSpace:
    """TF-IDF + NMF themes, and each topic's theme profile (see the module docstring)."""

    def __init__(self, vectorizer: TfidfVectorizer, nmf: NMF, profiles: dict[str, np.ndarray]):
        self.vectorizer, self.nmf, self.profiles = vectorizer, nmf, profiles

    @classmethod
    def fit(cls, corpus: list[str], labelled: list[tuple[str, str]], n_themes: int = N_THEMES) -> InterestSpace:
        """Themes from ``corpus`` (texts), topic profiles from ``labelled`` ``(text, topic)`` pairs."""
        if len(corpus) < 2 or not labelled:
            raise ValueError(
                f"an interest space needs a corpus of at least 2 texts and labelled texts; "
                f"got {len(corpus)} and {len(labelled)}"
            )
        vectorizer = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5, sublinear_tf=True)
        matrix = vectorizer.fit_transform(corpus)
        nmf = NMF(n_components=min(n_themes, len(corpus) - 1), init="nndsvd", max_iter=500, random_state=0).fit(matrix)
        space = cls(vectorizer, nmf, {})
        mixtures = space.mixtures([text for text, _ in labelled])
        topics = sorted({topic for _, topic in labelled})
        space.profiles = {
            t: mixtures[[i for i, (_, topic) in enumerate(labelled) if topic == t]].mean(axis=0) for t in topics
        }
        return space

    def mixtures(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), n_themes)`` theme weights, each row summing to 1 (all zeros: no known word)."""
        weights = self.nmf.transform(self.vectorizer.transform(texts))
        totals = weights.sum(axis=1, keepdims=True)
        return np.divide(weights, totals, out=np.zeros_like(weights), where=totals > 0)

    def interest(self, preferences: dict[str, float]) -> np.ndarray:
        """The reader's interest: sum of preference x topic profile, minus the profiles' mean."""
        profiles = np.stack([self.profiles[t] for t in sorted(self.profiles)])
        weights = np.array([preferences.get(t, 0.0) for t in sorted(self.profiles)])
        return weights @ profiles - profiles.mean(axis=0) * weights.sum()

    def sentence_preference(
        self, sentences: list[str], preferences: dict[str, float], mixtures: np.ndarray | None = None
    ) -> np.ndarray:
        """How much the reader wants each sentence (``mixtures``: the sentences' own, when computed)."""
        mixtures = self.mixtures(sentences) if mixtures is None else mixtures
        return mixtures @ self.interest(preferences)
