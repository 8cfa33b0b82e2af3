"""The Gradio UI and the named API endpoints: wiring only, the work is in :mod:`space.service`.

Every registered variant gets a column of control widgets built from its schema (one widget per
control kind, see :data:`WIDGETS`); choosing a variant shows its column, choosing a model narrows
the choices to what the model accepts. An optional control has an explicit "not set" state (empty box,
or the ``not set`` choice), so any subset of controls can be sent. Switching variant clears every
result on screen. The API endpoints (``/summarize``, ``/compare``, ``/sweep``, ``/score``,
``/variants``, ``/compare_readers``) take the controls as one JSON object, so scripts need no widget layout.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import gradio as gr

from variants import InputError

from .api import api_functions
from .examples import variant_examples
from .leaderboard import leaderboard_tab
from .readers import reader_tab
from .service import Service, highlight, log_user_error, sweep_values
from .suggest import SuggestionBox
from .texts import about, api_help, comparable, compare_note, onboarding, page_url, sweep_note
from .views import chart_colours, chart_frame, escape_html, metrics_markdown, table_frame
from .widgets import ControlPanel, example_value

CONCURRENCY_LIMIT = 16  # requests run at once; concurrent ones for one model share a generate call
# Passed to launch() (gradio 6 takes css there). Gradio's highlighted text lays tokens out as flex items,
# breaks words anywhere (word-break: break-all) and pads highlighted tokens apart from the punctuation
# after them ("Cable ."): flow them as ordinary text instead. Its template leaves whitespace nodes
# between and inside tokens, so the containers get font-size 0 and only the token text a real size.
# Leaderboard scores and headers stay on one line, system names wrap at spaces only, and a table wider
# than the page scrolls sideways instead of squeezing its first column; each plot is shown whole, at its
# own aspect ratio (the gallery's cells are square).
CSS = """
#summary .textfield { display: block; word-break: normal; overflow-wrap: break-word; font-size: 0; }
#summary .token-container, #summary .token { font-size: 0; }
#summary .token .text { font-size: var(--text-lg); line-height: 1.7; }
#summary .token.highlighted { margin: 0; padding: 1px 0; }
#leaderboard table { display: block; overflow-x: auto; }
#leaderboard th, #leaderboard td { word-break: normal; overflow-wrap: normal; }
#leaderboard th, #leaderboard td:not(:first-child) { white-space: nowrap; }
#leaderboard td:first-child { min-width: 16em; }
#leaderboard-plots .thumbnail-item { aspect-ratio: auto; height: auto; }
#leaderboard-plots .thumbnail-item img { height: auto; }
.dark button[role=tab].selected { color: var(--primary-400); }
"""
# WCAG AA asks 4.5:1 for text. Gradio's default theme gave help text and footer zinc-400 #bbbbc2 on white
# (1.91:1) and the primary button and selected tab orange-500 #f97316 against white (2.80:1). Darker
# shades of the same hues: zinc-600 #52525b on white 7.73:1, white on orange-700 #c2410c 5.18:1 (hover
# orange-800 #9a3412, 7.31:1); in dark mode the selected tab is orange-400 (CSS above) on zinc-950.
# tests/test_space_contrast.py computes each ratio, and the browser test reads the rendered colours.
THEME_COLOURS = {
    "body_text_color_subdued": "*neutral_600",
    "block_info_text_color": "*neutral_600",
    "color_accent": "*primary_700",
    "button_primary_background_fill": "*primary_700",
    "button_primary_background_fill_hover": "*primary_800",
    "button_primary_background_fill_dark": "*primary_700",
    "button_primary_background_fill_hover_dark": "*primary_800",
}


def theme() -> gr.themes.Base:
    """Gradio's default theme with text colours that reach WCAG AA contrast (see :data:`THEME_COLOURS`)."""
    return gr.themes.Default().set(**THEME_COLOURS)


def user_errors(function: Callable, escape: bool = True) -> Callable:
    """Show the user's mistakes as ``gr.Error``; the server keeps serving. The UI's toasts render HTML,
    so their text is escaped; an API caller (``escape=False``) gets the message as it is."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except InputError as err:
            log_user_error(function.__name__, err)
            raise gr.Error(escape_html(err) if escape else str(err), print_exception=False) from None

    return wrapper


# --- text for the page ---------------------------------------------------------------------
def model_choices(service: Service, variant: str) -> list[tuple[str, str]]:
    """The variant's usable models, in the catalog's order: best measured on the leaderboard first."""
    return [
        (e.title if e.title.startswith(e.model) else f"{e.model} — {e.title}", e.model)
        for e in service.catalog.models(variant, available=True)
    ]


def default_model(service: Service, variant: str) -> str:
    """The model a variant opens with: the first listed, so the page leads with what measures best."""
    return next((model for _, model in model_choices(service, variant)), "baseline")


# --- the app -------------------------------------------------------------------------------
def examples_section(service: Service, panel: ControlPanel, document, reference, shown: str) -> dict:
    """One labelled set of examples per variant (document, reference and every control), only the
    current variant's visible."""
    columns = {}
    for variant in service.catalog.registry.values():
        examples = variant_examples(variant)
        with gr.Column(visible=variant.id == shown) as columns[variant.id]:
            pairs = panel.widgets[variant.id]
            rows = [[e.document, e.reference, *(example_value(c, e.controls) for c, _ in pairs)] for e in examples]
            gr.Examples(
                rows,
                [document, reference, *(w for _, w in pairs)],
                label=f"examples for {variant.title}",
                example_labels=[e.label for e in examples],
                examples_per_page=8,
            )
    return columns


def build_app(service: Service) -> gr.Blocks:
    first = next(iter(service.catalog.registry))
    with gr.Blocks(title="SteerSum") as demo:
        gr.Markdown(
            "# SteerSum — controllable summarization\nPick a variant, a model and its controls; "
            "the metrics say whether the summary obeyed them.\n\n" + onboarding(service),
            elem_id="onboarding",
        )
        document = gr.Textbox(lines=12, label="document", elem_id="document", render=False)
        reference = gr.Textbox(lines=3, label="reference summary (optional: adds ROUGE)", render=False)
        panel = ControlPanel(service, first)
        with gr.Tab("Try it"):
            with gr.Row():
                variant = gr.Dropdown(
                    [(v.title, v.id) for v in service.catalog.registry.values()],
                    value=first,
                    label="variant",
                    elem_id="variant",
                )
                model = gr.Dropdown(
                    model_choices(service, first), value=default_model(service, first), label="model", elem_id="model"
                )
                strength = strength_slider()
                rules = rules_checkbox()
            about_text = gr.Markdown(about(service, first), elem_id="about")
            example_columns = examples_section(service, panel, document, reference, first)
            with gr.Row():
                with gr.Column():
                    document.render()
                    panel.render()
                    suggestions = SuggestionBox(service, panel, document, variant)
                    reference.render()
                with gr.Column():
                    with gr.Tab("Summarize"):
                        generate_button = gr.Button("Generate", variant="primary", elem_id="generate")
                        summary = gr.HighlightedText(
                            label="summary (evidence of the controls highlighted)",
                            color_map={"evidence": "yellow"},
                            show_legend=True,
                            show_inline_category=False,
                            elem_id="summary",
                        )
                        metrics = gr.Markdown(elem_id="metrics")
                        chart = gr.BarPlot(
                            None,
                            x="label",
                            y="value",
                            color="series",
                            label="score breakdown",
                            visible=False,
                            elem_id="chart",
                        )
                        with gr.Accordion("Score your own summary", open=False):
                            own_summary = gr.Textbox(lines=3, label="summary to score")
                            score_button = gr.Button("Score")
                            own_metrics = gr.Markdown()
                    with gr.Tab("Compare"):
                        compare_help = gr.Markdown(compare_note(service, first), elem_id="compare-note")
                        compare_models = gr.Dropdown(model_choices(service, first), multiselect=True, label="models")
                        compare_button = gr.Button(
                            "Compare", elem_id="compare", interactive=comparable(service, first)
                        )
                        compare_table = gr.Dataframe(
                            wrap=True, label="side by side", visible=False, elem_id="compare-table"
                        )
                    with gr.Tab("Sweep"):
                        names = sweepable(service, first)
                        sweep_help = gr.Markdown(
                            sweep_note(names, service.catalog.variant(first).title), elem_id="sweep-note"
                        )
                        sweep_control = gr.Dropdown(
                            names, value=names[0] if names else None, label="control to sweep (every value)"
                        )
                        sweep_button = gr.Button("Sweep", elem_id="sweep", interactive=bool(names))
                        sweep_table = gr.Dataframe(
                            wrap=True, label="one row per value", elem_id="sweep-table", visible=False
                        )
                    readers = None
                    if "persona" in service.catalog.registry:  # one article, two readers: only for persona
                        with gr.Tab("Readers", visible=first == "persona", elem_id="readers-tab") as readers:
                            reader_tab(service, document, user_errors)
        with gr.Tab("Leaderboard"):  # full width: its tables are wide
            leaderboard_tab()
        with gr.Tab("API"):
            api_text = gr.Markdown(api_help("<this page's address>"), elem_id="api-help")

        def on_load(request: gr.Request):  # the annotation is how gradio knows to pass the request
            return api_help(page_url(request))

        demo.load(on_load, None, api_text, api_visibility="private")
        results = [summary, metrics, chart, own_metrics, suggestions.shown, compare_table, sweep_table]
        wire_ui(
            service,
            panel,
            variant,
            model,
            about_text,
            example_columns,
            results,
            (compare_help, compare_models),
            (sweep_help, sweep_control, sweep_button),
            (compare_button, readers),
        )
        inputs = [document, reference, variant]

        @user_errors
        def on_generate(document, reference, variant, model, guidance, constraints, *values):
            controls = panel.controls(variant, values)
            result = service.summarize(document, variant, model, controls, reference, guidance, constraints)
            for notice in result["notices"]:
                gr.Warning(escape_html(notice))
            frame = chart_frame(result["scores"], result["controls"])
            return (
                highlight(result["summary"], result["evidence"]),
                metrics_markdown(result),
                gr.update(value=frame, visible=not frame.empty, color_map=chart_colours(frame) or None),
            )

        @user_errors
        def on_score(summary, document, reference, variant, model, *values):
            return metrics_markdown(
                service.score(summary, document, variant, panel.controls(variant, values), reference, model)
            )

        @user_errors
        def on_compare(document, reference, variant, models, guidance, constraints, *values):
            controls = panel.controls(variant, values)
            results = service.compare(document, variant, models, controls, reference, guidance, constraints)
            return gr.update(value=table_frame(results, "model"), visible=True)

        @user_errors
        def on_sweep(document, reference, variant, model, control, guidance, constraints, *values):
            controls = panel.controls(variant, values)
            results = service.sweep(document, variant, model, control, controls, reference, guidance, constraints)
            return gr.update(value=table_frame(results, "value"), visible=True)

        private = {"api_visibility": "private"}
        generate_button.click(
            on_generate, [*inputs, model, strength, rules, *panel.all], [summary, metrics, chart], **private
        )
        score_button.click(on_score, [own_summary, *inputs, model, *panel.all], own_metrics, **private)
        compare_button.click(
            on_compare, [*inputs, compare_models, strength, rules, *panel.all], compare_table, **private
        )
        sweep_button.click(
            on_sweep, [*inputs, model, sweep_control, strength, rules, *panel.all], sweep_table, **private
        )
        model.change(
            user_errors(lambda v, m: service.default_guidance(v, m) if v and m else gr.update()),
            [variant, model],
            strength,
            api_visibility="private",
        )  # the slider starts at the model's default
        for name, function in api_functions(service).items():
            gr.api(user_errors(function, escape=False), api_name=name)
    return demo.queue(default_concurrency_limit=CONCURRENCY_LIMIT)


def strength_slider() -> gr.Slider:
    """Control strength: γ of classifier-free guidance (variants/classifier_free_guidance.py). 1 is plain generation;
    higher pushes the summary further the way the controls move it. Set to the model's default when a
    model is picked; baselines ignore it."""
    return gr.Slider(
        1.0,
        5.0,
        value=1.0,
        step=0.25,
        label="control strength (γ: 1 = plain generation; higher obeys the controls more, at some cost in fluency)",
        elem_id="strength",
    )


def rules_checkbox() -> gr.Checkbox:
    """The decoding rules switch: on, a model decodes as it is served, with its variant's rules (length
    bounds, keywords, preferred sentences; :mod:`variants.decoding_rules`); off, the model alone, as every
    evaluation report shows it beside the served row. Baselines have no rules."""
    return gr.Checkbox(value=True, label="decoding rules (on: as served; off: the model alone)", elem_id="rules")


def sweepable(service: Service, variant: str) -> list[str]:
    """Controls with a list of values: choices, and integers with a short range (CCS length bins)."""
    return [c.name for c in service.catalog.variant(variant).controls_for(None) if sweep_values(c)]


def wire_ui(
    service: Service,
    panel: ControlPanel,
    variant,
    model,
    about_text,
    example_columns: dict,
    results: list,
    compare: tuple,
    sweep: tuple,
    shown_for: tuple,
) -> None:
    """Variant → its models, controls, examples and notes, and every result on screen cleared (a
    summary scored for another variant's controls would mislead); Compare enabled only when the variant
    serves two models, the Readers tab shown only for persona; model → the choices it accepts."""
    compare_help, compare_models = compare
    sweep_help, sweep_control, sweep_button = sweep
    compare_button, readers = shown_for

    def on_variant(variant_id):
        choices, names = model_choices(service, variant_id), sweepable(service, variant_id)
        title = service.catalog.variant(variant_id).title
        cleared = [
            None,
            "",
            gr.update(value=None, visible=False),
            "",
            "",
            gr.update(value=None, visible=False),
            gr.update(value=None, visible=False),
        ]
        return (
            gr.update(choices=choices, value=default_model(service, variant_id)),
            about(service, variant_id),
            compare_note(service, variant_id),
            gr.update(choices=choices, value=[]),
            sweep_note(names, title),
            gr.update(choices=names, value=names[0] if names else None),
            gr.update(interactive=bool(names)),
            *cleared,
            gr.update(interactive=comparable(service, variant_id)),
            *([gr.update(visible=variant_id == "persona")] if readers is not None else []),
            *(gr.update(visible=v == variant_id) for v in panel.columns),
            *(gr.update(visible=v == variant_id) for v in example_columns),
        )

    @user_errors
    def on_model(variant_id, model_id):
        if not variant_id or not model_id:
            return [gr.update() for _ in panel.all]
        return panel.narrowed(variant_id, service.controls(variant_id, model_id))

    outputs = [
        model,
        about_text,
        compare_help,
        compare_models,
        sweep_help,
        sweep_control,
        sweep_button,
        *results,
        compare_button,
        *([readers] if readers is not None else []),
        *panel.columns.values(),
        *example_columns.values(),
    ]
    variant.change(on_variant, variant, outputs, api_visibility="private")
    model.change(on_model, [variant, model], panel.all, api_visibility="private")
