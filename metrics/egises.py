"""EGISES and P-Acc: how insensitive a summarizer is to its readers (Vansh et al., EMNLP 2023).

For one document d, reader j wrote the reference u_j (the summary they expect) and the model wrote
s_j for that reader. Personalization is not closeness of s_j to u_j (that is accuracy, Sec. 2.2) but
whether the summaries differ from one another *as much as the readers' references do*. Sec. 3
measures it on word distributions, one probability space per document:

* A text is a bag of terms: lemmas of non-stop words (:func:`metrics.stas.analyze`, the terms STAS
  uses; Appendix A's example keeps {red, cat, red, tall, table} of "The red cat is on the red tall
  table"). The space of d (eq. 1) holds the terms of d, of every u_j and of every s_j.
* d is its term frequencies, p(w|d) (eq. 3). A reference or summary t is re-weighted by the
  document (eq. 4-5): r(w|t) = p(w|t) / p(w|d), p^(w|t) = r(w|t) / sum_w' r(w'|t), so what t says
  that d says rarely weighs more.
* Divergence is the Jensen-Shannon **divergence** of footnote 2, JSD = 1/2 [KL(P||M) + KL(Q||M)],
  M = (P + Q) / 2, in base 2 (as the authors' code), so JSD is in [0, 1]. That is
  ``scipy.spatial.distance.jensenshannon(p, q, base=2) ** 2``: scipy returns the distance, the
  square root of the divergence.
* Weights (eq. 7-10): w(u_j|u_k) = JSD(u_j||u_k) / JSD(u_j||d), the divergence of two readers
  relative to how far reader j is from the document; X_jk = softmax_k(w(u_j|u_k)) * JSD(u_j||u_k),
  and Y_jk the same for the summaries s_j, s_k.
* Summary-level deviation (eq. 6): Dev_j = mean over k != j of min(X_jk, Y_jk) / max(X_jk, Y_jk),
  1 when the summaries diverge exactly in proportion to the references, 0 when one side diverges
  and the other does not.
* EGISES = 1 - mean Dev (eq. 11): per document the mean over its readers, then the mean over
  documents (as the authors' code; the same as eq. 11 when every document has as many readers).

**Lower EGISES is better.** Dev is a degree of personalization, so 1 - mean Dev is a degree of
*insensitivity*: 0 when every summary diverges from the others as its reader does, 1 when the model
writes the same summary whatever the reader (or different ones where readers agree). Table 1 ranks
models by the lowest EGISES (BigBird-Pegasus 0.4286 first, given each reader's gold reference as input
per Sec. 5.1; PENS-NRMS T2 0.9971 last), and Sec. 3.4
says a high EGISES means a model insensitive to its readers. Formula and ranking agree.

Out-of-vocabulary smoothing (Sec. 3.3, Appendix A, Algorithm 1). A term w of a summary that d does
not contain has p(w|d) = 0, and eq. 4 divides by it. Algorithm 1 compares w with every distinct term
w_l of d by the cosine of their embeddings (RoBERTa in the paper): with m = max_l cos(w, w_l) and
bias = 1 - sqrt(m), a term with bias > m is an unrelated addition and gets r = 0; otherwise
r(w|t) = p(w|t) / S(w), S(w) = sum_l softmax([cos(w, w_1), ..., cos(w, w_L), bias])_l, the chance
that w stands for some word of d ("desk" for "table": S = 0.876, r = (1/3) / 0.876, Table 5). The
similarity is a parameter (:data:`Similarity`; :func:`embedding_similarity` wraps any text
encoder). Without one (the default: these machines are offline and ship no embedding model) every
OOV term is taken as unrelated, r = 0, which is Algorithm 1's own outcome when the bias wins.

Choices the paper leaves open (following the authors' code where it decides):

* In eq. 6 the k = j term is 0/0: it is left out and Dev_j averages over the n - 1 other readers
  (as the authors' code). The softmax of eq. 7-8 runs over all l = 1..n as written, l = j included
  (w(u_j|u_j) = 0 adds e^0 to the denominator), as in the authors' script for the paper.
* min/max with X_jk = Y_jk = 0 (two readers agree and so do their summaries): 1, the model mirrors
  its readers (the authors' code adds an epsilon to both, which tends to 1).
* JSD(t||d) = 0 (a text distributed exactly as its document): w = 0 (the authors' code also turns
  this division by zero into 0).
* A text whose terms all lie outside d, with none smoothed (sum r = 0), keeps its plain distribution
  p(w|t). A text with no term at all (only stop words) is at JSD 1 from any text with terms and at 0
  from another empty one.
* A document given only by id (``document=None``; the bundled PENS sample has no news text): no
  re-weighting by d (p^ = p(w|t)) and no eq. 9-10 weights (all w = 0, a uniform softmax, which
  cancels in min/max), so Dev_j compares plain JSDs. ``EgisesResult.with_document`` says which.
* A document with one reader has no pair to compare: it is excluded and counted, never 0/0.

How it is computed (:func:`egises`): one scikit-learn CountVectorizer counts every text of the
corpus (a document's rows are zero outside the terms its texts use, so eq. 1's space needs no
vocabulary of its own); eq. 3-5 run on the sparse rows at once; every JSD the corpus needs comes from
one :func:`jsd_pairs` call, whose cost is the terms two texts share, not the vocabulary; eq. 6-10 run
at once for all documents with as many readers. Sizes (documents, readers) come from the input; the
authors' code (github.com/KDM-LAB/EGISES-EMNLP23) was read for the choices above, not copied.

P-Acc (Sec. 7, eq. 13-14): Unit = 1 - alpha * f_sig(beta * EGISES) / Acc and P-Acc = Acc * Unit,
which is Acc - alpha * f_sig(beta * EGISES) (computed in that form, so Acc = 0 is defined). alpha =
0.5 and beta = 1 are the paper's values. f_sig is ``tanh`` by default: footnote 7 says beta = 0
gives Unit_P-Acc = Unit_Acc = 1, which needs f_sig(0) = 0; the logistic function has f(0) = 1/2
(pass ``sigmoid=scipy.special.expit`` for that reading). Acc is ROUGE-L F1 (rouge-score, Porter
stemming; RG-L is the paper's first accuracy measure) of each reader's summary against that
reader's reference, averaged over the readers EGISES scores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from rouge_score import rouge_scorer
from scipy.special import softmax
from sklearn.feature_extraction.text import CountVectorizer

from metrics.io import DataError, get_field
from metrics.terms import analyze

FIELDS = """
  document    str        the source text; records with the same document (or doc_id) form a group
  doc_id      str        optional: groups records instead of the text; alone, EGISES runs without
                         the document (no eq. 4-5 re-weighting, uniform eq. 9-10 weights)
  user        str        the reader's id, once per document
  prediction  str        the model's summary for this reader
  references  list[str]  this reader's own summary (the gold reference); the first is used
"""

# similarity(oov_terms, document_terms) -> (len(oov_terms), len(document_terms)) cosine similarities.
Similarity = Callable[[list[str], list[str]], np.ndarray]
# analyzer(text) -> its terms, in order (a bag of words: order does not matter here).
Analyzer = Callable[[str], list[str]]

DEFAULT_ALPHA, DEFAULT_BETA = 0.5, 1.0  # Sec. 7.1


@dataclass(frozen=True)
class DocumentGroup:
    """One document and its readers: reader ``user_ids[i]`` got the model summary ``summaries[i]``
    and wrote the reference ``references[i]``. ``document`` is the source text, or None when only
    an id is known (see the module docstring)."""

    document: str | None
    user_ids: list[str]
    summaries: list[str]
    references: list[str]

    def __post_init__(self):
        sizes = (len(self.user_ids), len(self.summaries), len(self.references))
        if len(set(sizes)) != 1:
            raise ValueError(f"user_ids, summaries and references must be parallel, got lengths {sizes}")
        if len(set(self.user_ids)) != len(self.user_ids):
            raise ValueError(f"a reader appears twice in one document: {self.user_ids}")


@dataclass
class EgisesResult:
    """Corpus EGISES and what it averages. Lists follow the input groups; a group with fewer than
    two readers has ``None`` and is counted in ``n_excluded``."""

    egises: float | None  # None when no document has two readers
    document_deviations: list[float | None]  # mean Dev_j over the group's readers
    reader_deviations: list[np.ndarray | None]  # Dev_j, one per reader, in the group's order
    with_document: list[bool]  # False: scored without the document text (or it had no term)
    n_excluded: int = field(default=0)


# ---- distributions ---------------------------------------------------------------------------------


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


# ---- deviation -------------------------------------------------------------------------------------


def weighted_divergences(pairs: np.ndarray, to_doc: np.ndarray) -> np.ndarray:
    """X (side 0) and Y (side 1) of eq. 7-10 for a batch of documents with n readers each.

    ``pairs`` (n_docs, 2, n, n) holds JSD(u_j||u_k) and JSD(s_j||s_k); ``to_doc`` (n_docs, 2, n, 1)
    holds JSD(u_j||d) and JSD(s_j||d), 0 where the document is unknown (then every w is 0, a
    uniform softmax). Returns (n_docs, 2, n, n)."""
    weights = np.divide(pairs, to_doc, out=np.zeros_like(pairs), where=to_doc > 0)  # eq. 9-10
    return softmax(weights, axis=-1) * pairs  # softmax over l = 1..n, l = j included (w = 0 there)


def reader_deviations(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Dev_j (eq. 6) from X and Y (..., n, n): mean over k != j of min/max, with 0/0 = 1."""
    low, high = np.minimum(x, y), np.maximum(x, y)
    ratio = np.divide(low, high, out=np.ones_like(low), where=high > 0)
    n = x.shape[-1]
    return (ratio * ~np.eye(n, dtype=bool)).sum(axis=-1) / (n - 1)


@lru_cache(maxsize=64)
def reader_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each unordered pair (j, k), j < k, of n readers once: JSD is symmetric."""
    return np.triu_indices(n, 1)


def egises(
    groups: list[DocumentGroup], similarity: Similarity | None = None, analyzer: Analyzer = analyze
) -> EgisesResult:
    """EGISES (eq. 11) over documents with several readers each; lower is better. ``similarity``
    turns on OOV smoothing (Algorithm 1); ``analyzer`` maps a text to its terms (default: lemmas of
    non-stop words, :func:`metrics.stas.analyze`).

    One CountVectorizer counts every text of the corpus; eq. 3-5 and every JSD the corpus needs are
    computed at once on sparse rows, and eq. 6-10 at once for all documents with as many readers.

    >>> doc = "The striker scored twice. The club sold tickets and shirts."
    >>> same = egises([DocumentGroup(doc, ["a", "b"], ["striker scored"] * 2, ["striker scored", "tickets shirts"])])
    >>> own = egises([DocumentGroup(doc, ["a", "b"], ["striker scored", "tickets shirts"],
    ...                             ["striker scored", "tickets shirts"])])
    >>> same.egises, own.egises
    (1.0, 0.0)
    """
    # Rows of the corpus, document by document: the document, its n references, its n summaries.
    texts, firsts = [], []
    for group in groups:
        firsts.append(len(texts))
        texts.extend([group.document or "", *group.references, *group.summaries])
    counts, terms = count_terms(texts, analyzer)
    has_document = [bool(counts.indptr[first + 1] > counts.indptr[first]) for first in firsts]  # has terms
    document_rows = np.full(len(texts), -1)
    for group, first, present in zip(groups, firsts, has_document):
        if present:
            document_rows[first : first + 1 + 2 * len(group.user_ids)] = first
    dist = distributions(counts, document_rows, terms, similarity)

    # Every JSD the corpus needs, in one call. Per document, in a flat array: its m = n(n-1)/2
    # reference pairs, its m summary pairs, then (with a document) each reference and summary
    # against the document.
    left, right, layout = [], [], []  # layout: (group index, n, first pair, first text-document or -1)
    at = 0
    for index, (group, first, present) in enumerate(zip(groups, firsts, has_document)):
        n = len(group.user_ids)
        if n < 2:
            continue
        j, k = reader_pairs(n)
        references = first + 1 + np.arange(n)
        summaries = references + n
        left += [references[j], summaries[j]]
        right += [references[k], summaries[k]]
        layout.append((index, n, at, at + 2 * len(j) if present else -1))
        at += 2 * len(j)
        if present:
            left += [references, summaries]
            right.append(np.full(2 * n, first))
            at += 2 * n
    divergence = jsd_pairs(dist, np.concatenate(left), np.concatenate(right)) if left else np.array([])
    divergence = np.append(divergence, 0.0)  # last: JSD(t||d) = 0 stands in for an unknown document

    per_reader = [None] * len(groups)
    for n in sorted({entry[1] for entry in layout}):
        batch = [entry for entry in layout if entry[1] == n]
        j, k = reader_pairs(n)
        first_pair = np.array([entry[2] for entry in batch])[:, None]
        first_to_doc = np.array([entry[3] for entry in batch])[:, None]
        pairs = np.zeros((len(batch), 2, n, n))
        pairs[:, :, j, k] = divergence[first_pair + np.arange(2 * len(j))].reshape(len(batch), 2, len(j))
        pairs[:, :, k, j] = pairs[:, :, j, k]
        to_doc_at = np.where(first_to_doc >= 0, first_to_doc + np.arange(2 * n), len(divergence) - 1)
        weighted = weighted_divergences(pairs, divergence[to_doc_at].reshape(len(batch), 2, n, 1))
        for entry, deviations in zip(batch, reader_deviations(weighted[:, 0], weighted[:, 1])):
            per_reader[entry[0]] = deviations
    document_deviations = [None if d is None else float(d.mean()) for d in per_reader]
    scored = [d for d in document_deviations if d is not None]
    score = 1.0 - float(np.mean(scored)) if scored else None
    return EgisesResult(score, document_deviations, per_reader, has_document, n_excluded=len(groups) - len(scored))


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


# ---- P-Acc -----------------------------------------------------------------------------------------


def rouge_l(summaries: list[str], references: list[str]) -> np.ndarray:
    """ROUGE-L F1 of each summary against its reference (rouge-score, Porter stemming)."""
    if len(summaries) != len(references):
        raise ValueError(f"summaries and references differ in length: {len(summaries)} vs {len(references)}")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return np.array([scorer.score(ref, summary)["rougeL"].fmeasure for summary, ref in zip(summaries, references)])


def p_acc(
    accuracy: float,
    egises_score: float,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    sigmoid: Callable[[float], float] = np.tanh,
) -> float:
    """P-Acc (eq. 13-14) = Acc * (1 - alpha * f_sig(beta * EGISES) / Acc) = Acc - alpha * f_sig(beta * EGISES).

    >>> round(p_acc(0.5, 0.4), 6)  # 0.5 - 0.5 * tanh(0.4) = 0.5 - 0.5 * 0.379949
    0.310026
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1] (Sec. 7.1), got {alpha}")
    if not 0.0 < beta <= 1.0:
        raise ValueError(f"beta must be in (0, 1] (Sec. 7.1), got {beta}")
    return float(accuracy - alpha * sigmoid(beta * egises_score))


# ---- records ---------------------------------------------------------------------------------------


def group_records(records: list[dict], source: str = "<records>") -> tuple[list[DocumentGroup], list[list[int]]]:
    """Group JSONL records by ``doc_id`` (or, without one, by ``document`` text): the groups in
    order of first appearance, and for each the indices of its records (reader order)."""
    by_key: dict[tuple, dict] = {}
    for i, record in enumerate(records):
        where = f"{source}:{i + 1}"
        if not isinstance(record, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(record).__name__}")
        document = get_field(record, "document", str, where, required=False)
        doc_id = get_field(record, "doc_id", str, where, required=False)
        if document is None and doc_id is None:
            raise DataError(f"{where}: missing field 'document' (or 'doc_id')")
        user = get_field(record, "user", str, where)
        prediction = get_field(record, "prediction", str, where, non_empty=False)  # a model may write nothing
        reference = get_field(record, "references", list, where, items=str)[0]
        if not reference.strip():
            raise DataError(f"{where}: field 'references'[0] is empty")
        key = ("doc_id", doc_id) if doc_id is not None else ("document", document)
        group = by_key.setdefault(
            key, {"document": document, "users": [], "summaries": [], "references": [], "rows": []}
        )
        if document != group["document"]:
            raise DataError(
                f"{where}: field 'document' differs from line {group['rows'][0] + 1}, "
                f"which has the same doc_id {doc_id!r}"
            )
        if user in group["users"]:
            first = group["rows"][group["users"].index(user)] + 1
            raise DataError(
                f"{where}: field 'user': reader {user!r} already has a summary of this document at line {first}"
            )
        group["users"].append(user)
        group["summaries"].append(prediction)
        group["references"].append(reference)
        group["rows"].append(i)
    groups = [DocumentGroup(g["document"], g["users"], g["summaries"], g["references"]) for g in by_key.values()]
    return groups, [g["rows"] for g in by_key.values()]


def score_records(
    records: list[dict],
    source: str = "<records>",
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    similarity: Similarity | None = None,
) -> dict:
    """Corpus EGISES and P-Acc (ROUGE-L); one example per record with its Dev_j and ROUGE-L F1."""
    groups, indices = group_records(records, source)
    result = egises(groups, similarity)
    accuracy = rouge_l([s for g in groups for s in g.summaries], [r for g in groups for r in g.references])
    examples = [None] * len(records)
    scored_accuracy, start = [], 0
    for group, rows, deviations in zip(groups, indices, result.reader_deviations):
        for j, row in enumerate(rows):
            score = float(accuracy[start + j])
            examples[row] = {
                "user": group.user_ids[j],
                "rouge_l": score,
                "deviation": None if deviations is None else float(deviations[j]),
            }
            if deviations is not None:
                scored_accuracy.append(score)
        start += len(rows)
    mean_accuracy = float(np.mean(scored_accuracy)) if scored_accuracy else None
    corpus = {
        "n": len(records),
        "n_documents": len(groups) - result.n_excluded,
        "n_excluded_documents": result.n_excluded,  # one reader: nothing to compare
        "n_excluded_records": sum(len(rows) for rows, d in zip(indices, result.document_deviations) if d is None),
        "n_documents_without_text": sum(
            not w for w, d in zip(result.with_document, result.document_deviations) if d is not None
        ),
        "egises": result.egises,
        "rouge_l": mean_accuracy,
        "p_acc_rouge_l": (p_acc(mean_accuracy, result.egises, alpha, beta) if result.egises is not None else None),
        "alpha": alpha,
        "beta": beta,
    }
    return {
        "metric": "egises",
        "corpus": corpus,
        "examples": examples,
        "notes": "EGISES in [0, 1], lower is better (less insensitive to readers); deviation per reader in "
        "[0, 1], higher is more personalized; null for documents with a single reader (excluded). "
        "P-Acc = ROUGE-L - alpha * tanh(beta * EGISES) over the scored readers.",
    }
