"""Word distributions of texts, re-weighted by their document, and the Jensen-Shannon divergence of pairs.

EGISES (Vansh et al., EMNLP 2023, Sec. 3) compares texts as word distributions over one document's
terms: a text is a bag of terms (:func:`metrics.terms.analyze`), its document d is p(w|d) (eq. 3), and
a reference or summary t is re-weighted by d (eq. 4-5) so that what t says and d says rarely weighs
more; a term of t that d lacks is smoothed by Algorithm 1 when a :data:`Similarity` is given, else
dropped. Divergence is JSD in base 2. :mod:`metrics.egises` states each choice; this module computes
them for a whole corpus at once on sparse rows, and the Space's reader view reuses it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.special import softmax
from sklearn.feature_extraction.text import CountVectorizer

from metrics.terms import analyze

# similarity(oov_terms, document_terms) -> (len(oov_terms), len(document_terms)) cosine similarities.
Similarity = Callable[[list[str], list[str]], np.ndarray]
# analyzer(text) -> its terms, in order (a bag of words: order does not matter here).
Analyzer = Callable[[str], list[str]]


def count_terms(texts: list[str], analyzer: Analyzer = analyze) -> tuple[sp.csr_matrix, np.ndarray]:
    """(n_texts, n_terms) counts of the terms ``analyzer`` finds, and the terms (the columns), by
    one scikit-learn CountVectorizer over the whole corpus."""
    vectorizer = CountVectorizer(analyzer=analyzer, dtype=np.float64)
    try:
        counts = vectorizer.fit_transform(texts).tocsr()
    except ValueError as err:  # scikit-learn refuses an empty vocabulary: no text has a term
        if "empty vocabulary" not in str(err):
            raise
        return sp.csr_matrix((len(texts), 0)), np.array([], dtype=object)
    counts.sort_indices()
    return counts, vectorizer.get_feature_names_out()


def row_ids(matrix: sp.csr_matrix) -> np.ndarray:
    """The row of every stored entry of a CSR matrix, aligned with ``matrix.data``."""
    return np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))


def oov_denominators(oov_terms: list[str], document_terms: list[str], similarity: Similarity) -> np.ndarray:
    """Algorithm 1 for each OOV term: S(w), the softmax mass of the document's terms against the
    bias, when w may stand for a document word; ``inf`` when it is unrelated (r = p / inf = 0)."""
    sims = np.asarray(similarity(oov_terms, document_terms), dtype=float)  # (n_oov, n_doc_terms)
    if sims.shape != (len(oov_terms), len(document_terms)):
        raise ValueError(f"similarity returned shape {sims.shape}, expected {(len(oov_terms), len(document_terms))}")
    best = sims.max(axis=1)
    bias = 1.0 - np.sqrt(np.clip(best, 0.0, None))
    related = (best > 0) & (bias <= best)  # Algorithm 1: bias > max similarity -> no smoothing
    logits = np.concatenate([sims, bias[:, None]], axis=1)  # the bias is one more candidate
    mass = 1.0 - softmax(logits, axis=1)[:, -1]  # the document terms' share
    return np.where(related, mass, np.inf)


def distributions(
    counts: sp.csr_matrix, document_rows: np.ndarray, terms: np.ndarray, similarity: Similarity | None = None
) -> sp.csr_matrix:
    """Eq. 3-5 for every row of the corpus at once. ``document_rows[i]`` is the row of text i's
    document (a document's own row points at itself; -1: no document). Document rows get p(w|d)
    (eq. 3), the others p^(w|t) against their document (eq. 4-5), or p(w|t) without one."""
    rows = row_ids(counts)
    totals = np.bincount(rows, weights=counts.data, minlength=counts.shape[0])
    plain = counts.data / totals[rows]  # p(w|t) of every stored entry; p(w|d) on document rows
    # p(w|d) under each entry: find (its document's row, its column) among the stored entries.
    width = counts.shape[1]
    keys = rows * width + counts.indices  # sorted: CSR rows in order, indices sorted
    doc_of_entry = document_rows[rows]
    is_text = (doc_of_entry >= 0) & (doc_of_entry != rows)
    wanted = doc_of_entry * width + counts.indices
    found = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    in_doc = is_text & (keys[found] == wanted)
    denominators = np.where(in_doc, plain[found], np.inf)  # an OOV term: r = 0 unless smoothed
    if similarity is not None:
        oov = np.flatnonzero(is_text & ~in_doc)  # grouped by document: rows come document by document
        for entries in np.split(oov, np.flatnonzero(np.diff(doc_of_entry[oov])) + 1) if oov.size else []:
            doc_row = doc_of_entry[entries[0]]
            columns = np.unique(counts.indices[entries])
            doc_columns = counts.indices[counts.indptr[doc_row] : counts.indptr[doc_row + 1]]
            per_term = oov_denominators(terms[columns].tolist(), terms[doc_columns].tolist(), similarity)
            denominators[entries] = per_term[np.searchsorted(columns, counts.indices[entries])]
    ratios = np.where(is_text, plain / denominators, 0.0)  # eq. 4
    sums = np.bincount(rows, weights=ratios, minlength=counts.shape[0])[rows]
    reweighted = is_text & (sums > 0)  # else p(w|t): no document, or nothing of the text is in it
    data = np.where(reweighted, ratios / np.where(reweighted, sums, 1.0), plain)  # eq. 5
    out = sp.csr_matrix((data, counts.indices, counts.indptr), shape=counts.shape)
    out.eliminate_zeros()  # unrelated OOV terms
    return out


def jsd_pairs(dist: sp.csr_matrix, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """JSD, base 2, of rows ``dist[left[i]]`` and ``dist[right[i]]`` (distributions, or empty rows).

    Only the terms both rows use need logarithms: for a term of P alone m = p/2, so its KL term is
    p log2(p/m) = p. Hence JSD = 1/2 [sum over shared terms of p log2(p/m) + q log2(q/m), plus P's
    mass off Q's terms, plus Q's mass off P's terms], which equals
    ``jensenshannon(p, q, base=2) ** 2`` (tested) at the cost of the shared terms, not of the
    vocabulary. An empty row is at 1 from a non-empty one and at 0 from another empty one."""
    P, Q = dist[left], dist[right]  # (n_pairs, n_terms)
    p_shared = P.multiply(Q.astype(bool)).tocsr()  # P on the terms both use
    q_shared = Q.multiply(P.astype(bool)).tocsr()  # Q on the same terms: same sparsity pattern
    p_shared.sort_indices()
    q_shared.sort_indices()
    p, q = p_shared.data, q_shared.data
    m = (p + q) / 2
    n_pairs = len(left)
    shared_rows = row_ids(p_shared)
    both = np.bincount(shared_rows, weights=p * np.log2(p / m) + q * np.log2(q / m), minlength=n_pairs)
    # Masses summed the same way on both sides, so that identical rows give exactly 0.
    p_total = np.bincount(row_ids(P), weights=P.data, minlength=n_pairs)
    q_total = np.bincount(row_ids(Q), weights=Q.data, minlength=n_pairs)
    p_off = p_total - np.bincount(shared_rows, weights=p, minlength=n_pairs)
    q_off = q_total - np.bincount(shared_rows, weights=q, minlength=n_pairs)
    divergence = (both + p_off + q_off) / 2
    empty_p, empty_q = P.getnnz(axis=1) == 0, Q.getnnz(axis=1) == 0
    return np.where(empty_p | empty_q, (empty_p != empty_q).astype(float), divergence)


def embedding_similarity(encode: Callable[[list[str]], np.ndarray]) -> Similarity:
    """A :data:`Similarity` from any encoder of word lists to (n, dim) vectors: the cosine of every
    OOV term with every document term (Algorithm 1's f_cos). The paper used RoBERTa
    (all-distilroberta-v1), e.g. ``embedding_similarity(SentenceTransformer(...).encode)``."""

    def similarity(oov_terms: list[str], document_terms: list[str]) -> np.ndarray:
        a = np.asarray(encode(oov_terms), dtype=float)
        b = np.asarray(encode(document_terms), dtype=float)
        a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
        b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
        return a @ b.T

    return similarity
