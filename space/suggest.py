"""Control values worth offering for the document on screen (:meth:`variants.base.Variant.suggestions`),
e.g. the persons and organizations a document names, for the entity variant's ``entity`` box.

"Suggest controls" lists them under the control widgets and fills each empty text widget (or open
choice) of the current variant with its first suggestion, so a user can start from a name the document
really uses. Plain functions first (:func:`suggest`, :func:`suggestions_markdown`, :func:`filled`), the
wiring last (:class:`SuggestionBox`).
"""

from __future__ import annotations

import gradio as gr

from variants import InputError

from .inputs import clip_document
from .service import Service, log_user_error
from .views import NOT_SET, escape_html, escape_markdown


def suggest(service: Service, document: str, variant_id: str) -> dict[str, list[str]]:
    """The variant's suggestions for the document (checked and clipped as for summarizing)."""
    variant = service.catalog.variant(variant_id)
    document, _ = clip_document(document)
    return {name: list(values) for name, values in variant.suggestions(document, None).items()}


def suggestions_markdown(suggestions: dict[str, list[str]]) -> str:
    lines = [
        f"- **{escape_markdown(name)}**: " + ", ".join(escape_markdown(value) for value in values)
        for name, values in suggestions.items()
        if values
    ]
    return "\n".join(["Suggested for this document:", *lines]) if lines else "_no suggestions for this document_"


def filled(panel, variant_id: str, suggestions: dict[str, list[str]], values: tuple) -> list:
    """An update per widget of the panel: the current variant's empty text widgets and open choices get
    their control's first suggestion; everything else is left as it is."""
    updates, position = [], 0
    for owner, pairs in panel.widgets.items():
        for control, _ in pairs:
            value, position = values[position], position + 1
            first = next(iter(suggestions.get(control.name) or []), None)
            fits = control.kind == "text" or (control.kind == "choice" and (control.open or first in control.choices))
            empty = value is None or value == NOT_SET or (isinstance(value, str) and not value.strip())
            updates.append(gr.update(value=first) if owner == variant_id and first and fits and empty else gr.update())
    return updates


class SuggestionBox:
    """A "Suggest controls" button and the list it shows, placed where it is built (under the controls)."""

    def __init__(self, service: Service, panel, document: gr.Textbox, variant: gr.Dropdown):
        self.button = gr.Button("Suggest controls", size="sm", elem_id="suggest")
        self.shown = gr.Markdown(elem_id="suggestions")

        def on_suggest(document, variant_id, *values):
            try:
                found = suggest(service, document, variant_id)
            except InputError as err:
                log_user_error("suggest", err)
                raise gr.Error(escape_html(err), print_exception=False) from None
            except Exception as err:  # e.g. the NER model is not installed: say so, keep serving
                raise gr.Error(escape_html(f"no suggestions: {err}")) from None
            return [suggestions_markdown(found), *filled(panel, variant_id, found, values)]

        self.button.click(
            on_suggest, [document, variant, *panel.all], [self.shown, *panel.all], api_visibility="private"
        )
