"""How the ccs variant is evaluated (:mod:`variants.evaluation`): CCSBench's Table 4 columns (ROUGE-L,
length MAD/PCC, keyword success rate, ΔFKGL, focus F1) on a compositional test set built from SciTLDR
(:func:`variants.ccs.data.build_test_set`), the paper's own rows beside ours, and MACSum-Doc's human
summaries at three lengths as an extra test set. The corpus columns are computed in :mod:`metrics.ccs`."""

from __future__ import annotations

from typing import Any

from metrics.ccs import CORPUS_METRICS, composition_metrics, group_metrics

from ..evaluation import Evaluation, whole_groups

# The pasted row (Evaluation.paste): a period every few words reads "easier" by FKGL, and one sentence of the
# focus judge's cue words (metrics.focus) reads as the asked focus.
PASTED_PERIOD_WORDS = 4


PASTED_CUES = {
    "empirical": "Experiments on benchmark datasets show improved results and accuracy.",
    "conceptual": "We propose a novel framework and theory for the problem.",
}


def periods_every(text: str, n: int) -> str:
    """``text`` with a sentence end after every ``n`` words, the next word capitalized."""
    tokens = text.split()
    chunks = [" ".join(tokens[i : i + n]).rstrip(".,;:") + "." for i in range(0, len(tokens), n)]
    return " ".join(chunk[:1].upper() + chunk[1:] for chunk in chunks)


class CCSEvaluation(Evaluation):
    # Per-example scores whose corpus mean is the paper's number (the mean length_error is the MAD),
    # then the paper's corpus-only numbers (corpus_scores): PCC, ΔFKGL = fkgl_normal - fkgl_high, F1.
    metric_names = (
        "rougeL",
        "length_error",
        "length_hit",
        "keyword_sr",
        "fkgl_normal",
        "fkgl_high",
        "focus_match",
        *CORPUS_METRICS,
    )
    control_metrics = ("length_hit", "length_error", "keyword_sr", "focus_match", *CORPUS_METRICS)
    lower_is_better = ("length_error",)
    contrasts = {"delta_fkgl": ("fkgl_normal", "fkgl_high")}  # ΔFKGL's effect interval (training.sensitivity)
    # Table 4, on CCSBench's compositional test set (arXiv papers; ours is other data). ROUGE-L /100;
    # the paper's SR pools all keywords, ours is the mean of each summary's share (equal when every
    # summary has as many keywords).
    reported = tuple(
        {
            "system": system,
            "source": "Table 4",
            "metrics": dict(
                zip(
                    (
                        "rougeL",
                        "length_pcc",
                        "length_error",
                        "keyword_sr",
                        "fkgl_normal",
                        "fkgl_high",
                        "delta_fkgl",
                        "focus_f1",
                    ),
                    values,
                )
            ),
        }
        for system, values in (
            ("A2 Flan-T5-XXL zero-shot", (0.1425, 0.00, 1.39, 0.46, 12.66, 12.68, -0.02, 0.39)),
            ("B1 Flan-T5-XL + LoRA", (0.2222, 0.49, 0.55, 0.78, 13.11, 9.37, 3.59, 0.70)),
            ("B2 Flan-T5-XXL + LoRA", (0.2343, 0.78, 0.27, 0.85, 14.40, 10.78, 3.62, 0.75)),
            ("C1 Flan-T5-Large hard prompt, fully fine-tuned", (0.2136, 0.56, 0.53, 0.86, 13.71, 10.40, 3.31, 0.63)),
        )
    )

    def paste(self, lead: str, controls: dict, assets: Any = None) -> str:
        """Lead-k cut by a period every :data:`PASTED_PERIOD_WORDS` words when high readability is
        asked, then the keywords as a list and a sentence of the asked focus's cue words."""
        text = periods_every(lead, PASTED_PERIOD_WORDS) if controls.get("readability") == "high" else lead
        if controls.get("keywords"):
            text += " " + ", ".join(controls["keywords"]) + "."
        if controls.get("focus"):
            text += " " + PASTED_CUES[controls["focus"]]
        return text

    def corpus_scores(self, records: list[dict], rows: list[dict], source: str = "<records>") -> dict[str, Any]:
        """The paper's numbers that are not means of per-example scores: length PCC, ΔFKGL and focus
        F1 over all rows (:func:`group_metrics`)."""
        overall = group_metrics(rows)
        return {name: overall[name] for name in CORPUS_METRICS}

    def breakdown(self, rows: list[dict]) -> dict[str, dict]:
        """The paper's columns for each composition of controls (``length+keywords``, ...)."""
        return composition_metrics(rows)

    extra_test_sets = ("macsum-length",)

    def extra_test_set(self, name: str, max_samples: int | None = None) -> list[dict]:
        """``macsum-length``: MACSum-Doc's human summaries of each document at its three lengths
        (CC BY-NC-ND: references unchanged, for evaluation only), asked as length bins
        (:func:`variants.ccs.data.macsum_length_set`); whole documents only (three records each)."""
        if name not in self.extra_test_sets:
            return super().extra_test_set(name, max_samples)
        from ..sources import load_source
        from .data import macsum_length_set

        return whole_groups(macsum_length_set(load_source("macsum_doc", "val")), max_samples)

    def test_examples(self, max_samples: int | None = None) -> list[dict]:
        """The compositional test set of :func:`variants.ccs.data.build_test_set`: each SciTLDR test
        abstract's conceptual and empirical parts as targets, each asked with readability normal
        and high (four adjacent examples per abstract, all four controls)."""
        from .data import build_test_set

        return build_test_set(seed=0)[:max_samples]
