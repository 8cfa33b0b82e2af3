"""The Readers tab and ``/compare_readers``: one article, two readers of the ``persona`` variant, their
summaries side by side and how far apart they are.

A reader is a bundled (simulated) reader id or pasted titles, one per line. The divergence is the
one EGISES is built on (Vansh et al. 2023, eq. 3-5 and footnote 2): the Jensen-Shannon divergence,
base 2, of the two summaries' word distributions re-weighted by the article, in [0, 1]; with 1 -
ROUGE-L F1 between the two summaries beside it. Two readers with different interests should get
summaries that diverge; identical summaries (0) mean the model ignored who was reading.
"""

from __future__ import annotations

from collections.abc import Callable

import gradio as gr
import numpy as np

from metrics.p_acc import rouge_l
from metrics.term_distributions import count_terms, distributions, jsd_pairs
from variants import InputError

from .inputs import parse_controls
from .service import Service
from .views import checks_markdown, escape_markdown

VARIANT = "persona"


def summary_divergence(document: str, first: str, second: str) -> dict[str, float]:
    """EGISES's divergence of two summaries of one document, and 1 - ROUGE-L between them."""
    counts, terms = count_terms([document, first, second])
    dist = distributions(counts, np.zeros(3, dtype=int), terms)  # every row's document is row 0
    jsd = float(jsd_pairs(dist, np.array([1]), np.array([2]))[0])
    return {"jsd": jsd, "one_minus_rouge_l": float(1.0 - rouge_l([first], [second])[0])}


def reader_controls(reader: str | None, history: str | None) -> dict:
    """The controls of one side: pasted titles (one per line) win over a reader id."""
    controls = {}
    if reader:
        controls["reader"] = reader
    if history and history.strip():
        controls["history"] = history
    return controls


def compare_readers(
    service: Service, document: str, model: str, first: dict | str, second: dict | str, reference: str = ""
) -> dict:
    """Both readers' summaries (full results, as ``/summarize`` gives) and their divergence."""
    results = [
        service.summarize(document, VARIANT, model or "baseline", parse_controls(c), reference)
        for c in (first, second)
    ]
    if not all(r["summary"].strip() for r in results):
        raise InputError("a summary came back empty: nothing to compare")
    return {
        "readers": results,
        "divergence": summary_divergence(document, results[0]["summary"], results[1]["summary"]),
    }


def divergence_markdown(result: dict) -> str:
    """The divergence of the two readers' summaries, each summary's text checks, then the notices."""
    d = result["divergence"]
    notices = sorted({n for r in result["readers"] for n in r["notices"]})
    checks = [
        checks_markdown(r["quality"], f"reader {side}") for side, r in zip("AB", result["readers"]) if r.get("quality")
    ]
    return (
        f"**Divergence of the two summaries**: JSD {d['jsd']:.3f} (EGISES's word distributions, 0 = the same "
        f"words in the same proportions, 1 = nothing shared); 1 − ROUGE-L {d['one_minus_rouge_l']:.3f}."
        + ("\n\n" + "\n".join(checks) if checks else "")
        + "".join(f"\n\n_{escape_markdown(n)}_" for n in notices)
    )


def reader_tab(service: Service, document: gr.Textbox, wrap: Callable[[Callable], Callable]) -> None:
    """The tab's widgets and events (call inside a ``gr.Tab``), and the ``/compare_readers`` endpoint;
    ``wrap`` turns user mistakes into ``gr.Error`` (the app's ``user_errors``)."""
    readers = list(service.catalog.variant(VARIANT).controls_for(None)[0].choices)
    models = [e.model for e in service.catalog.models(VARIANT, available=True)]
    model = gr.Dropdown(models, value=models[0] if models else None, label="persona model")  # best measured first
    sides = []
    with gr.Row():
        for label, default in (
            ("reader A", readers[0] if readers else None),
            ("reader B", readers[1] if len(readers) > 1 else None),
        ):
            with gr.Column():
                pick = gr.Dropdown(readers, value=default, label=label, allow_custom_value=True)
                pasted = gr.Textbox(lines=3, label=f"{label}: or paste clicked titles (one per line)")
                summary = gr.Textbox(lines=5, label=f"summary for {label}", interactive=False)
                sides.append((pick, pasted, summary))
    button = gr.Button("Compare readers")
    divergence = gr.Markdown()

    def on_compare(text, model_id, reader_a, history_a, reader_b, history_b):
        result = compare_readers(
            service, text, model_id, reader_controls(reader_a, history_a), reader_controls(reader_b, history_b)
        )
        return result["readers"][0]["summary"], result["readers"][1]["summary"], divergence_markdown(result)

    inputs = [document, model, sides[0][0], sides[0][1], sides[1][0], sides[1][1]]
    button.click(wrap(on_compare), inputs, [sides[0][2], sides[1][2], divergence], api_visibility="private")

    def compare_readers_api(
        document: str, model: str = "baseline", first: str = "{}", second: str = "{}", reference: str = ""
    ) -> dict:
        """One article for two readers of the persona variant (controls as JSON objects, e.g.
        `{"reader": "sim01-business"}` or `{"history": ["title", ...]}`): both results and the
        divergence of the two summaries (JSD as in EGISES, and 1 - ROUGE-L)."""
        return compare_readers(service, document, model, first, second, reference)

    gr.api(wrap(compare_readers_api, escape=False), api_name="compare_readers")


__all__ = ["compare_readers", "reader_tab", "summary_divergence"]
