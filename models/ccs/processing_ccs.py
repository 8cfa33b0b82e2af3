"""The CCS processor: a document and its controls as the CCSBench hard prompt (App. A.1, after MACSum),
one ``Attribute: Value`` line per requested control in the order of the paper's prompt template
(App. C.4), then the document::

    Summarize the document.
    Length: 51-100 words
    Keywords: "multi-scale", "pedestrian"
    Readability: high
    Empirical Focus Level: low
    Document: ...

Self-contained (torch, transformers, numpy and the standard library): it ships in every exported CCS
repo and ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` loads it; SteerSum's
``variants.ccs`` builds its prompts with :func:`hard_prompt` from this file, so the two cannot differ.
"""

import re

from .processing_base import SteerSumProcessor

BIN_WIDTH = 50  # words per length bin (CCSBench Sec. 3.1)
N_LENGTH_BINS = 5  # bins 0-4; the last one is open-ended
FOCUS_LEVEL = {"conceptual": "low", "empirical": "high"}  # focus is asked as an "Empirical Focus Level"
COMMON_WORDS_FILE = "common_words.json"  # the English words high readability counts as common (SteerSum's list)
WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?", re.IGNORECASE)  # SteerSum's metrics.text.WORD


def length_bin_words(bin_index: int, bin_width: int = BIN_WIDTH, n_bins: int = N_LENGTH_BINS) -> str:
    """The bin as words, for prompts: 0 → "0-50 words", 1 → "51-100 words", 4 → "more than 200 words"."""
    if bin_index == n_bins - 1:
        return f"more than {bin_index * bin_width} words"
    low = 0 if bin_index == 0 else bin_index * bin_width + 1
    return f"{low}-{(bin_index + 1) * bin_width} words"


def hard_prompt(document: str, controls: dict) -> str:
    """The model's input: an instruction, one ``Attribute: Value`` line per control, the document."""
    lines = ["Summarize the document."]
    if controls.get("length") is not None:
        lines.append(f"Length: {length_bin_words(controls['length'])}")
    if controls.get("keywords"):
        lines.append("Keywords: " + ", ".join(f'"{keyword}"' for keyword in controls["keywords"]))
    if controls.get("readability"):
        lines.append(f"Readability: {controls['readability']}")
    if controls.get("focus"):
        lines.append(f"Empirical Focus Level: {FOCUS_LEVEL[controls['focus']]}")
    return "\n".join(lines + [f"Document: {document}"])


# Copied from variants.decoding_rules.sentences
def sentences(text: str) -> list[str]:
    """Sentences by NLTK's Punkt model, line breaks treated as paragraph ends (SteerSum's
    ``metrics.text.sentences``, which its callers pass in)."""
    import nltk

    return [
        s.strip()
        for paragraph in text.split("\n")
        if paragraph.strip()
        for s in nltk.sent_tokenize(paragraph)
        if s.strip()
    ]


# Copied from variants.ccs.baseline.common_shares
def common_shares(sentences: list[str], common: frozenset[str]) -> list[float]:
    """Each sentence's share of words in ``common`` (0 for a sentence without words)."""
    out = []
    for sentence in sentences:
        tokens = [w.lower() for w in WORD.findall(sentence) if w.isalpha()]
        out.append(sum(w in common for w in tokens) / len(tokens) if tokens else 0.0)
    return out


# Copied from variants.ccs.baseline.common_half
def common_half(document_sentences: list[str], common: frozenset[str]) -> list[str]:
    """The more common-worded half of the sentences (at least the median one, see :func:`common_shares`), in
    document order."""
    if not document_sentences:
        return []
    shares = common_shares(document_sentences, common)
    middle = sorted(shares, reverse=True)[(len(shares) - 1) // 2]
    return [s for s, c in zip(document_sentences, shares) if c >= middle]


class CCSProcessor(SteerSumProcessor):
    """``processor(document, {"length": 1, "keywords": ["LoRA"], "readability": "high"})``: the hard prompt,
    tokenized (controls: ``length`` 0-4, ``keywords``, ``readability`` normal/high, ``focus``
    conceptual/empirical; any subset)."""

    files = (COMMON_WORDS_FILE,)

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        if controls.get("keywords") == []:
            controls = {k: v for k, v in controls.items() if k != "keywords"}
        return hard_prompt(document, controls), {}, []

    def rules(self, document: str, controls: dict):
        """The length bin as word bounds (bin b: 50b+1 to 50(b+1) words, bin 0 from 1 word, the last bin open
        above), the keywords, and for ``high`` readability the document's more common-worded half of sentences
        to prefer (:func:`common_half`), as SteerSum's ``variants.ccs`` gives its decoder."""
        low = high = None
        if controls.get("length") is not None:
            b = controls["length"]
            low, high = (1 if b == 0 else b * BIN_WIDTH + 1), (b + 1) * BIN_WIDTH
            high = None if b == N_LENGTH_BINS - 1 else high
        keywords = list(controls.get("keywords") or [])
        rules = {"min_words": low, "max_words": high, "keywords": keywords} if low or keywords else {}
        if controls.get("readability") == "high":
            rules["prefer"] = common_half(sentences(document), self.common_words())
        return rules or None

    def common_words(self) -> frozenset[str]:
        if getattr(self, "_common_words", None) is None:
            self._common_words = frozenset(self.data[COMMON_WORDS_FILE])
        return self._common_words
