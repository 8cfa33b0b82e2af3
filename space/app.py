"""The Gradio UI and the named API endpoints: wiring only, the work is in :mod:`space.service`.

Every registered variant gets a column of control widgets built from its schema (one widget per
control kind, see :data:`WIDGETS`); choosing a variant shows its column, choosing a model narrows
the choices to what the model accepts. The API endpoints (``/summarize``, ``/compare``, ``/sweep``,
``/score``, ``/variants``) take the controls as one JSON object, so scripts need no widget layout.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import gradio as gr

from variants import InputError
from variants.base import Control

from .examples import load_examples
from .leaderboard import leaderboard_tab
from .readers import reader_tab
from .service import Service, highlight
from .suggest import SuggestionBox
from .views import chart_frame, metrics_markdown, table_frame

CONCURRENCY_LIMIT = 16  # requests run at once; concurrent ones for one model share a generate call


def user_errors(function: Callable) -> Callable:
    """Show the user's mistakes as ``gr.Error`` (UI) / an error result (API); the server keeps serving."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except InputError as err:
            raise gr.Error(str(err)) from None
    return wrapper


# --- control widgets from the schema -------------------------------------------------------
def default_value(control: Control) -> Any:
    if control.default is not None:
        return control.default
    return control.choices[0] if control.kind == "choice" and control.required and control.choices else None


def choice_widget(c: Control) -> gr.Component:
    return gr.Dropdown(list(c.choices), value=default_value(c), label=c.name, info=c.help,
                       allow_custom_value=c.open)


def integer_widget(c: Control) -> gr.Component:
    if c.minimum is not None and c.maximum is not None:
        return gr.Slider(c.minimum, c.maximum, value=default_value(c) or c.minimum, step=1, label=c.name, info=c.help)
    return gr.Number(value=default_value(c), precision=0, label=c.name, info=c.help)


WIDGETS: dict[str, Callable[[Control], gr.Component]] = {
    "choice": choice_widget,
    "text": lambda c: gr.Textbox(value=default_value(c) or "", label=c.name, info=c.help),
    "keywords": lambda c: gr.Dropdown([], value=default_value(c) or [], multiselect=True, allow_custom_value=True,
                                      label=c.name, info=c.help + " (type a word, press Enter)"),
    "integer": integer_widget,
    "history": lambda c: gr.Textbox(value="\n".join(default_value(c) or []), lines=4, label=c.name,
                                    info=c.help + " (one per line)"),
}


def widget_value(control: Control, value: Any) -> Any:
    """A widget's value as the control expects it (history: one text per line; integers as int)."""
    if control.kind == "history" and isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if control.kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class ControlPanel:
    """One column of widgets per variant; the values of all of them arrive at every event, and
    :meth:`controls` picks the current variant's."""

    def __init__(self, service: Service, shown: str):
        self.columns, self.widgets = {}, {}
        for variant in service.catalog.registry.values():
            with gr.Column(visible=variant.id == shown) as self.columns[variant.id]:
                schema = variant.controls_for(None)
                self.widgets[variant.id] = [(c, WIDGETS[c.kind](c)) for c in schema]
        self.all = [widget for pairs in self.widgets.values() for _, widget in pairs]

    def controls(self, variant: str, values: tuple) -> dict:
        start = 0
        for variant_id, pairs in self.widgets.items():
            if variant_id == variant:
                chosen = zip((c for c, _ in pairs), values[start:start + len(pairs)])
                return {c.name: widget_value(c, v) for c, v in chosen if v not in (None, "", [])}
            start += len(pairs)
        raise InputError(f"unknown variant {variant!r}")

    def narrowed(self, variant: str, schema: tuple[Control, ...]) -> list:
        """Updates giving the variant's choice widgets the choices the chosen model accepts."""
        accepted = {c.name: c for c in schema}
        return [gr.update(choices=list(accepted[c.name].choices), value=default_value(accepted[c.name]))
                if variant_id == variant and c.kind == "choice" and c.name in accepted else gr.update()
                for variant_id, pairs in self.widgets.items() for c, _ in pairs]


# --- text for the page ---------------------------------------------------------------------
def model_choices(service: Service, variant: str) -> list[tuple[str, str]]:
    return [(e.title if e.title.startswith(e.model) else f"{e.model} — {e.title}", e.model)
            for e in service.catalog.models(variant, available=True)]


def about(service: Service, variant_id: str) -> str:
    v = service.catalog.variant(variant_id)
    text = f"**{v.title}** — {v.description} Paper: [{v.paper.title}]({v.paper.url}) ({v.paper.authors}, {v.paper.year})."
    missing = service.catalog.models(variant_id, available=False)
    return text + "".join(f"\n\n_unavailable: {e.model} — {e.reason}_" for e in missing)


API_HELP = """Scripts call the same service through `gradio_client` (controls as one JSON object):

```python
from gradio_client import Client
client = Client("http://127.0.0.1:7860/")
summary, result = client.predict("The striker scored twice ...", "topic", "baseline", '{"topic": "sport"}', "",
                                  api_name="/summarize")
print(summary, result["scores"])
```
Endpoints: `/summarize`, `/compare` (models comma-separated), `/sweep`, `/score`, `/variants` (the catalog and
every variant's control schema). Bad input comes back as an error naming the problem and the allowed values."""


# --- the app -------------------------------------------------------------------------------
def build_app(service: Service) -> gr.Blocks:
    first = next(iter(service.catalog.registry))
    with gr.Blocks(title="SteerSum") as demo:
        gr.Markdown("# SteerSum — controllable summarization\nPick a variant, a model and its controls; "
                    "the metrics say whether the summary obeyed them.")
        with gr.Row():
            variant = gr.Dropdown([(v.title, v.id) for v in service.catalog.registry.values()], value=first,
                                  label="variant", elem_id="variant")
            model = gr.Dropdown(model_choices(service, first), value="baseline", label="model", elem_id="model")
        about_text = gr.Markdown(about(service, first))
        with gr.Row():
            with gr.Column():
                document = gr.Textbox(lines=12, label="document", elem_id="document")
                panel = ControlPanel(service, first)
                SuggestionBox(service, panel, document, variant)
                reference = gr.Textbox(lines=3, label="reference summary (optional: adds ROUGE)")
                gr.Examples(load_examples(), [document, reference], label="examples (bundled data)")
            with gr.Column():
                with gr.Tab("Summarize"):
                    generate_button = gr.Button("Generate", variant="primary", elem_id="generate")
                    summary = gr.HighlightedText(label="summary (evidence of the controls highlighted)",
                                                 color_map={"evidence": "yellow"}, show_legend=True,
                                                 show_inline_category=False, elem_id="summary")
                    metrics = gr.Markdown(elem_id="metrics")
                    chart = gr.BarPlot(None, x="label", y="value", color="series", label="score breakdown")
                    with gr.Accordion("Score your own summary", open=False):
                        own_summary = gr.Textbox(lines=3, label="summary to score")
                        score_button = gr.Button("Score")
                        own_metrics = gr.Markdown()
                with gr.Tab("Compare"):
                    compare_models = gr.Dropdown(model_choices(service, first), multiselect=True, label="models")
                    compare_button = gr.Button("Compare")
                    compare_table = gr.Dataframe(wrap=True, label="side by side")
                with gr.Tab("Sweep"):
                    sweep_control = gr.Dropdown(sweepable(service, first), label="control to sweep (every value)")
                    sweep_button = gr.Button("Sweep", elem_id="sweep")
                    sweep_table = gr.Dataframe(wrap=True, label="one row per value", elem_id="sweep-table")
                if "persona" in service.catalog.registry:
                    with gr.Tab("Readers"):  # persona: one article, two readers, the divergence
                        reader_tab(service, document, user_errors)
                with gr.Tab("API"):
                    gr.Markdown(API_HELP)
                with gr.Tab("Leaderboard"):
                    leaderboard_tab()
        wire_ui(service, panel, variant, model, about_text, compare_models, sweep_control)
        inputs = [document, reference, variant]

        @user_errors
        def on_generate(document, reference, variant, model, *values):
            result = service.summarize(document, variant, model, panel.controls(variant, values), reference)
            for notice in result["notices"]:
                gr.Warning(notice)
            return highlight(result["summary"], result["evidence"]), metrics_markdown(result), chart_frame(result["scores"])

        @user_errors
        def on_score(summary, document, reference, variant, model, *values):
            return metrics_markdown(service.score(summary, document, variant, panel.controls(variant, values), reference, model))

        @user_errors
        def on_compare(document, reference, variant, models, *values):
            return table_frame(service.compare(document, variant, models, panel.controls(variant, values), reference), "model")

        @user_errors
        def on_sweep(document, reference, variant, model, control, *values):
            controls = panel.controls(variant, values)
            return table_frame(service.sweep(document, variant, model, control, controls, reference), "value")

        private = {"api_visibility": "private"}
        generate_button.click(on_generate, [*inputs, model, *panel.all], [summary, metrics, chart], **private)
        score_button.click(on_score, [own_summary, *inputs, model, *panel.all], own_metrics, **private)
        compare_button.click(on_compare, [*inputs, compare_models, *panel.all], compare_table, **private)
        sweep_button.click(on_sweep, [*inputs, model, sweep_control, *panel.all], sweep_table, **private)
        for name, function in api_functions(service).items():
            gr.api(user_errors(function), api_name=name)
    return demo.queue(default_concurrency_limit=CONCURRENCY_LIMIT)


def sweepable(service: Service, variant: str) -> list[str]:
    return [c.name for c in service.catalog.variant(variant).controls_for(None) if c.kind == "choice" and c.choices]


def wire_ui(service: Service, panel: ControlPanel, variant, model, about_text, compare_models, sweep_control) -> None:
    """Variant → its models, controls and about text; model → the choices it accepts."""
    def on_variant(variant_id):
        choices, names = model_choices(service, variant_id), sweepable(service, variant_id)
        return (gr.update(choices=choices, value="baseline"), about(service, variant_id),
                gr.update(choices=choices, value=[]), gr.update(choices=names, value=names[0] if names else None),
                *(gr.update(visible=v == variant_id) for v in panel.columns))

    @user_errors
    def on_model(variant_id, model_id):
        if not variant_id or not model_id:
            return [gr.update() for _ in panel.all]
        return panel.narrowed(variant_id, service.controls(variant_id, model_id))

    variant.change(on_variant, variant, [model, about_text, compare_models, sweep_control, *panel.columns.values()],
                   api_visibility="private")
    model.change(on_model, [variant, model], panel.all, api_visibility="private")


def api_functions(service: Service) -> dict[str, Callable]:
    """The named endpoints; their signatures (type hints, docstrings) are the API's documentation."""
    def summarize(document: str, variant: str, model: str = "baseline", controls: str = "{}",
                  reference: str = "") -> tuple[str, dict]:
        """Summarize `document` with a model of `variant` under `controls` (a JSON object).
        Returns the summary and a result object: scores, evidence, notices, controls used, timings."""
        result = service.summarize(document, variant, model, controls, reference)
        return result["summary"], result

    def compare(document: str, variant: str, models: str, controls: str = "{}", reference: str = "") -> list[dict]:
        """The same document and controls through several models (comma-separated ids), side by side."""
        return service.compare(document, variant, [m.strip() for m in models.split(",") if m.strip()], controls, reference)

    def sweep(document: str, variant: str, model: str, control: str, controls: str = "{}",
              reference: str = "") -> list[dict]:
        """One model, every value of one choice control (e.g. every topic)."""
        return service.sweep(document, variant, model, control, controls, reference)

    def score(summary: str, document: str, variant: str, controls: str = "{}", reference: str = "",
              model: str = "baseline") -> dict:
        """Live metrics for a given summary under `controls`."""
        return service.score(summary, document, variant, controls, reference, model)

    def variants() -> dict:
        """The model catalog and every variant's control schema."""
        return service.variants()

    return {"summarize": summarize, "compare": compare, "sweep": sweep, "score": score, "variants": variants}
