"""EGISES and P-Acc: how insensitive a summarizer is to its readers (Vansh et al., EMNLP 2023).

For one document d, reader j wrote the reference u_j (the summary they expect) and the model wrote
s_j for that reader. Personalization is not closeness of s_j to u_j (that is accuracy, Sec. 2.2) but
whether the summaries differ from one another *as much as the readers' references do*. Sec. 3
measures it on word distributions, one probability space per document:

* A text is a bag of terms: lemmas of non-stop words (:func:`metrics.terms.analyze`, the terms STAS
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
similarity is a parameter (:data:`~metrics.term_distributions.Similarity`;
:func:`metrics.term_distributions.embedding_similarity` wraps any text encoder). Without one (the default: these machines are offline and ship no embedding model) every
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

P-Acc (Sec. 7, eq. 13-14), which :func:`score_records` reports beside EGISES, is :mod:`metrics.p_acc`;
the word distributions and JSD (eq. 1-5, Algorithm 1) are computed by :mod:`metrics.term_distributions`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy.special import softmax

from metrics.io import DataError, get_field
from metrics.p_acc import DEFAULT_ALPHA, DEFAULT_BETA, p_acc, rouge_l
from metrics.term_distributions import Analyzer, Similarity, count_terms, distributions, jsd_pairs
from metrics.terms import analyze

FIELDS = """
  document    str        the source text; records with the same document (or doc_id) form a group
  doc_id      str        optional: groups records instead of the text; alone, EGISES runs without
                         the document (no eq. 4-5 re-weighting, uniform eq. 9-10 weights)
  user        str        the reader's id, once per document
  prediction  str        the model's summary for this reader
  references  list[str]  this reader's own summary (the gold reference); the first is used
"""


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
    non-stop words, :func:`metrics.terms.analyze`).

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
