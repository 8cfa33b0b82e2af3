# Copied from models.windows
"""How a model reads a document longer than its source limit: the windows of whole sentences it is read in,
fused by the decoder or one picked (:func:`source_windows`), their batch (:func:`pad_windows`) and the notice
of a document not read whole (:func:`cut_notice`). One definition for SteerSum's Space and an exported repo's
processor: every ``models/<name>/`` folder with a processor holds this file whole, as ``models/<name>/windows.py``
(``python scripts/fix_copies.py`` writes the copies), beside the processor base that imports it.

Standard library only.
"""

import re

# How a document longer than ``max_source_length`` is read (processor settings and generation config): in up
# to ``source_windows`` windows (1: cut), "fuse"d by generate or one "pick"ed (:func:`source_windows`)
SOURCE_WINDOWS, WINDOW_MODE, PICK_RATIO = "source_windows", "window_mode", "pick_ratio"
WINDOW_SETTINGS, WINDOW_MODES = (SOURCE_WINDOWS, WINDOW_MODE, PICK_RATIO), ("fuse", "pick")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def source_windows(
    document: str, length, limit: int, most: int, relevance=None, ratio: float = 1.0
) -> tuple[list[str], bool]:
    """The parts of ``document`` a model reads, and whether anything of it is left out. ``length(text)``: the
    tokens of a text's prepared input. A document that fits in ``limit`` tokens, or any with ``most`` 1, is
    one part (cut to ``limit`` when longer). Otherwise its windows: consecutive runs of whole sentences (split
    after ``.``, ``!`` or ``?`` and a space), each as long as fits in ``limit`` tokens, at most ``most`` of them
    (the rest is left out; a sentence longer than ``limit`` is a run of its own, cut). The model reads each
    run as a source of its own, with its own controls, and its decoder reads them together
    (``custom_generate/generate.py``'s ``fuse_windows``). With ``relevance(text)`` (how much a window holds of
    what the controls ask for), one window only, of the runs that start at each sentence of those windows: the
    one it scores highest (the first of equals) when that scores more than ``ratio`` times the first window,
    else the first (the start of a document, where its lead is); the rest is left out."""
    whole = length(document)
    if whole <= limit or most == 1:
        return [document], whole > limit
    sentences = [part for part in SENTENCE_END.split(document.strip()) if part]
    windows, current, used = [], [], len(sentences)
    for at, sentence in enumerate(sentences):
        if current and length(" ".join(current + [sentence])) > limit:
            windows.append(" ".join(current))
            current = []
            if len(windows) == most:
                used = at
                break
        current.append(sentence)
    if current:
        windows.append(" ".join(current))
    left_out = used < len(sentences) or any(length(window) > limit for window in windows)
    if relevance is None or len(windows) == 1:
        return windows, left_out
    runs, end = [], 0  # picking: the longest run that fits from each sentence on, until one reaches the end
    for start in range(used):
        end = max(end, start + 1)
        while end < used and length(" ".join(sentences[start : end + 1])) <= limit:
            end += 1
        runs.append(" ".join(sentences[start:end]))
        if end == used:
            break
    scores = [relevance(run) for run in runs]
    best = scores.index(max(scores))
    return [runs[best] if scores[best] > ratio * scores[0] else runs[0]], True


def cut_notice(limit: int, document: str, parts: list[str] | None = None) -> str:
    """The notice of a document the model did not read whole: cut at ``limit`` tokens, or, when it read one
    window of it (``parts``, from :func:`source_windows` with a ``relevance``), which part."""
    notice = f"the input was longer than the model's limit of {limit} tokens and was truncated"
    if parts is not None and len(parts) == 1 and parts[0] != document:
        notice += (
            f": the model read {len(parts[0].split())} of its {len(document.split())} words, the run of whole "
            "sentences its controls pick (the start, unless a later run matches them clearly better)"
        )
    return notice


def pad_windows(tokenizer, windows: list[list[list[int]]], return_tensors=None) -> dict:
    """Each source's windows of token ids (cut already) as one batch: ``input_ids`` and ``attention_mask`` of
    shape (sources, windows, tokens), a source with fewer windows filled with windows of padding (mask 0);
    with one window each, the usual (sources, tokens) batch."""
    if all(len(w) == 1 for w in windows):
        return tokenizer.pad({"input_ids": [w[0] for w in windows]}, return_tensors=return_tensors)
    most = max(len(w) for w in windows)
    flat = [ids for w in windows for ids in w + [[tokenizer.pad_token_id]] * (most - len(w))]
    batch = tokenizer.pad({"input_ids": flat}, return_tensors=return_tensors)
    for key in ("input_ids", "attention_mask"):
        rows = batch[key]
        batch[key] = (
            rows.reshape(len(windows), most, -1)
            if return_tensors == "pt"
            else [rows[i * most : (i + 1) * most] for i in range(len(windows))]
        )
    for i, w in enumerate(windows):  # the padding windows' one token is padding too
        for j in range(len(w), most):
            batch["attention_mask"][i][j][0] = 0
    return batch


# End of copy
