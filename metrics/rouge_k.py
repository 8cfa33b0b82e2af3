"""ROUGE-K: the share of a document's keywords that a summary contains (Takeshita et al., Sec. 3).

    R-K = Count(kws ∩ n-grams) / Count(kws)

``kws`` is the document's set of keywords and ``n-grams`` those of the summary. Keywords are not
annotated: they are "the n-grams used in multiple reference summaries" (Sec. 3, *Keyword
extraction*). The procedure, as the paper states it, and the choices it leaves open:

1. **Normalization.** "We tokenize and lowercase the reference summaries" (Sec. 3): tokens are
   :func:`metrics.text.words` (lower-case letters/digits, punctuation dropped, so "end-to-end" is
   three tokens) with a possessive ``'s`` cut ("Opec's" is "opec"). Nothing more: no stemming or
   lemmatizing, since the paper states none and calls ROUGE-K a "hard string match" (Sec. 8).
2. **Stop words.** The paper "remove[s] stopwords from the extracted n-grams" without naming a list
   or saying what is left of an n-gram with a stop word inside. Here an n-gram is a keyword candidate
   only when its first and last tokens are not stop words: n-grams of stop words only are dropped,
   "the hawaiian language" gives way to "hawaiian language", and inner stop words stay ("state of the
   art" is a phrase, "state art" is not). The list (:data:`STOPWORDS`) is NLTK's English one plus
   the five words the authors' code adds for scientific summaries ("paper", "authors", "propose",
   "proposes", "use"), so "we propose" boilerplate is no keyword.
3. **Shared.** A candidate is a keyword when at least two references contain it; a document with a
   single reference uses its title as the second one, a "proxy reference" (Sec. 3). With two or more
   references the title is not used, as Sec. 3 says; ``always_use_title=True`` adds it to every
   document, as the paper's numbers were made: Table 4's "# references on avg." for SciTLDR
   (2.0/3.3/4.2) is the bundled splits' 1.00/2.35/3.18 references plus one title.
4. **Longest first.** "To capture multi-word keywords, the extraction process starts from 10-grams
   to unigrams" (Sec. 3). The order only matters if a longer keyword takes the place of its parts,
   so an n-gram found inside an already selected, longer keyword is not selected again: with
   "recurrent neural networks" selected, "neural networks" and "recurrent" are not keywords.
5. **Matching.** A keyword is found when its tokens occur in the summary's tokens consecutively:
   whole tokens only, so "art" is not found in "start", nor "neural network" in "neural networks".
6. **No keyword.** A document whose references share nothing has no ROUGE-K (0/0): its score is
   ``None``, it is left out of the corpus mean and counted under ``excluded``.

Differences from the authors' public code (github.com/sobamchan/rougek), which reproduces the
paper's tables but deviates from its text: it matches keywords as substrings of the summary ("art"
counts in "start"); it lemmatizes with spaCy; it deletes stop words from inside n-grams and from the
summary before matching; it always adds the title as a reference; and it drops any n-gram that
shares a *word* with a longer keyword, not only the n-grams inside it.

Scores are fractions in [0, 1]; the paper prints x100. The corpus score is the mean over documents
with keywords.
"""

from __future__ import annotations

from collections import Counter

from metrics.io import DataError, get_field
from metrics.rouge import check_references
from metrics.text import STOPWORDS as TEXT_STOPWORDS
from metrics.text import words

MAX_N = 10  # "starts from 10-grams to unigrams" (Sec. 3)

NLTK_ENGLISH_STOPWORDS = TEXT_STOPWORDS  # NLTK's English list (179 words), SteerSum's list everywhere
STOPWORDS = NLTK_ENGLISH_STOPWORDS | {"paper", "authors", "propose", "proposes", "use"}

FIELDS = """
  prediction  str        the generated summary
  references  list[str]  reference summaries; keywords are the n-grams at least two of them share
                         (a document without any is left out of the mean and counted as excluded)
  title       str        optional: the document's title, the second reference of a document
                         that has only one
"""


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, possessive ``'s`` cut: the units keywords are made of and matched by."""
    out = []
    for word in words(text):
        word = word.replace("’", "'")
        out.append(word[:-2] if word.endswith("'s") else word)
    return out


def _candidates(token_list: list[str], n: int) -> dict[tuple[str, ...], None]:
    """The distinct n-grams that begin and end with a non-stop word, in order of first occurrence
    (a dict as an ordered set, so keywords come out in reading order)."""
    grams = {}
    for i in range(len(token_list) - n + 1):
        if token_list[i] not in STOPWORDS and token_list[i + n - 1] not in STOPWORDS:
            grams.setdefault(tuple(token_list[i : i + n]), None)
    return grams


def _inside(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    n = len(short)
    return any(long[i : i + n] == short for i in range(len(long) - n + 1))


def extract_keywords(references: list[str], title: str | None = None, *, always_use_title: bool = False) -> list[str]:
    """The keywords of one document: n-grams (n = 10 down to 1) shared by at least two references,
    the title counting as a reference when there is only one (or always, with ``always_use_title``).
    Longest first, then in the order they occur; each keyword is its tokens joined by spaces. Empty
    when the references share nothing.

    >>> extract_keywords(["We use bilingual dictionaries for neural machine translation."],
    ...                  title="Bilingual dictionaries for low-resource neural machine translation")
    ['neural machine translation', 'bilingual dictionaries']
    """
    use_title = title is not None and title.strip() and (len(references) == 1 or always_use_title)
    sources = list(references) + ([title] if use_title else [])
    token_lists = [tokens(text) for text in sources]
    selected: list[tuple[str, ...]] = []
    for n in range(MAX_N, 0, -1):
        in_references = Counter()  # n-gram -> number of references that contain it
        first_seen = {}
        for token_list in token_lists:
            grams = _candidates(token_list, n)
            in_references.update(grams.keys())  # keys: a dict would add its values
            first_seen.update({gram: None for gram in grams if gram not in first_seen})
        for gram in first_seen:
            if in_references[gram] >= 2 and not any(_inside(gram, keyword) for keyword in selected):
                selected.append(gram)
    return [" ".join(keyword) for keyword in selected]


def found_keywords(prediction: str, keywords: list[str]) -> list[str]:
    """The keywords whose tokens occur consecutively in the prediction (whole tokens; a keyword is
    normalized as the prediction is, so "Neural Machine Translation" works as well)."""
    wanted = {keyword: tuple(tokens(keyword)) for keyword in keywords}
    lengths = {len(gram) for gram in wanted.values()}
    summary = tokens(prediction)
    present = {tuple(summary[i : i + n]) for n in lengths for i in range(len(summary) - n + 1)}
    return [keyword for keyword, gram in wanted.items() if gram and gram in present]


def rouge_k_from_keywords(predictions: list[str], keywords: list[list[str]]) -> dict:
    """ROUGE-K of each prediction for given keyword lists (e.g. the paper's IN-SRC / OUT-SRC
    keywords, Sec. 5.2). An empty keyword list gives ``None`` and counts as ``excluded``.

    Returns ``{"corpus": {"n", "excluded", "rouge_k"}, "examples": [{"rouge_k", "keywords", "found"}]}``.
    """
    if len(predictions) != len(keywords):
        raise DataError(f"predictions and keywords differ in length: {len(predictions)} vs {len(keywords)}")
    examples = []
    for i, (prediction, kws) in enumerate(zip(predictions, keywords)):
        if not isinstance(prediction, str) or not prediction.strip():
            raise DataError(f"predictions[{i}]: the prediction is empty")
        kws = list(dict.fromkeys(kws))  # "kws is a set" (Sec. 3)
        for keyword in kws:
            if not tokens(keyword):
                raise DataError(f"keywords[{i}]: keyword {keyword!r} has no word")
        found = found_keywords(prediction, kws)
        examples.append({"rouge_k": len(found) / len(kws) if kws else None, "keywords": kws, "found": found})
    scores = [e["rouge_k"] for e in examples if e["rouge_k"] is not None]
    corpus = {
        "n": len(scores),
        "excluded": len(examples) - len(scores),
        "rouge_k": sum(scores) / len(scores) if scores else None,
    }
    return {"corpus": corpus, "examples": examples}


def rouge_k(
    predictions: list[str],
    references_list: list[list[str]] | list[str],
    titles: list[str | None] | None = None,
    *,
    always_use_title: bool = False,
) -> dict:
    """ROUGE-K of each prediction, with keywords extracted from its references (and title; see
    :func:`extract_keywords` for ``always_use_title``).

    Returns ``{"corpus": {"n", "excluded", "rouge_k"}, "examples": [{"rouge_k", "keywords", "found"}]}``:
    ``n`` documents scored, ``excluded`` documents without keywords (their ``rouge_k`` is ``None``),
    ``rouge_k`` the mean over the scored ones (``None`` when there is none).
    """
    references_list = check_references(predictions, references_list)
    titles = [None] * len(predictions) if titles is None else list(titles)
    if len(titles) != len(predictions):
        raise DataError(f"predictions and titles differ in length: {len(predictions)} vs {len(titles)}")
    keywords = [
        extract_keywords(refs, title, always_use_title=always_use_title)
        for refs, title in zip(references_list, titles)
    ]
    return rouge_k_from_keywords(predictions, keywords)


def score_records(records: list[dict], source: str = "<records>") -> dict:
    """``python -m metrics rouge-k FILE.jsonl``: the fields of :data:`FIELDS`, checked line by line."""
    predictions, references, titles = [], [], []
    for i, record in enumerate(records):
        where = f"{source}:{i + 1}"
        predictions.append(get_field(record, "prediction", str, where))
        refs = get_field(record, "references", list, where, items=str)
        for j, ref in enumerate(refs):
            if not ref.strip():
                raise DataError(f"{where}: field 'references'[{j}] is empty")
        references.append(refs)
        titles.append(get_field(record, "title", str, where, required=False, non_empty=False))
    result = rouge_k(predictions, references, titles)
    return {
        "metric": "rouge-k",
        **result,
        "notes": "ROUGE-K in [0, 1] (the paper prints x100): share of keywords (n-grams shared by two "
        "references, or by the reference and the title) found as whole tokens in the summary; "
        "documents without keywords have null and are counted under 'excluded'.",
    }
