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

from .processing_base import SteerSumProcessor

BIN_WIDTH = 50  # words per length bin (CCSBench Sec. 3.1)
N_LENGTH_BINS = 5  # bins 0-4; the last one is open-ended
FOCUS_LEVEL = {"conceptual": "low", "empirical": "high"}  # focus is asked as an "Empirical Focus Level"


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


class CCSProcessor(SteerSumProcessor):
    """``processor(document, {"length": 1, "keywords": ["LoRA"], "readability": "high"})``: the hard prompt,
    tokenized (controls: ``length`` 0-4, ``keywords``, ``readability`` normal/high, ``focus``
    conceptual/empirical; any subset)."""

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        if controls.get("keywords") == []:
            controls = {k: v for k, v in controls.items() if k != "keywords"}
        return hard_prompt(document, controls), {}, []

    def rules(self, document: str, controls: dict):
        """The length bin as word bounds (bin b: 50b+1 to 50(b+1) words, bin 0 from 1 word, the last bin open
        above) and the keywords, as SteerSum's ``variants.ccs`` gives its decoder. (SteerSum also prefers the
        common-worded half of the document's sentences for ``high`` readability; that rule needs its word
        counts and is not shipped.)"""
        low = high = None
        if controls.get("length") is not None:
            b = controls["length"]
            low, high = (1 if b == 0 else b * BIN_WIDTH + 1), (b + 1) * BIN_WIDTH
            high = None if b == N_LENGTH_BINS - 1 else high
        keywords = list(controls.get("keywords") or [])
        return {"min_words": low, "max_words": high, "keywords": keywords} if low or keywords else None
