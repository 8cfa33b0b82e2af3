"""The control widgets: one per control kind (:data:`WIDGETS`), built from a variant's schema, and the
:class:`ControlPanel` that holds a column of them per variant. An optional control has an explicit
"not set" state (empty box, or the ``not set`` choice), so any subset of controls can be sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from variants import InputError
from variants.base import Control

from .service import Service
from .views import NOT_SET

MAX_DROPDOWN_INTEGERS = 25  # an optional integer control with at most this many values is a dropdown


# --- control widgets from the schema -------------------------------------------------------
def default_value(control: Control) -> Any:
    if control.default is not None:
        return control.default
    return control.choices[0] if control.kind == "choice" and control.required and control.choices else None


def unset_value(control: Control) -> Any:
    """What the control's widget shows when the control is left out of the request."""
    return {"keywords": [], "history": "", "text": ""}.get(control.kind, NOT_SET if offers_not_set(control) else None)


def offers_not_set(control: Control) -> bool:
    """Optional choices, and optional integers with a short range, are dropdowns with a ``not set`` entry
    (a slider cannot be left unset: the CCS length slider always sent bin 0)."""
    return not control.required and (
        control.kind == "choice"
        or (
            control.kind == "integer"
            and control.minimum is not None
            and control.maximum is not None
            and control.maximum - control.minimum < MAX_DROPDOWN_INTEGERS
        )
    )


def choice_list(control: Control, choices) -> list:
    return [NOT_SET, *choices] if offers_not_set(control) else list(choices)


def choice_widget(c: Control) -> gr.Component:
    value = default_value(c) if default_value(c) is not None else unset_value(c)
    return gr.Dropdown(
        choice_list(c, c.choices), value=value, label=c.name, info=c.help, allow_custom_value=c.open, render=False
    )


def integer_widget(c: Control) -> gr.Component:
    if offers_not_set(c):
        value = default_value(c) if default_value(c) is not None else NOT_SET
        return gr.Dropdown(
            choice_list(c, range(c.minimum, c.maximum + 1)), value=value, label=c.name, info=c.help, render=False
        )
    if c.minimum is not None and c.maximum is not None:  # required: a slider always has a value
        return gr.Slider(
            c.minimum, c.maximum, value=default_value(c) or c.minimum, step=1, label=c.name, info=c.help, render=False
        )
    return gr.Number(value=default_value(c), precision=0, label=c.name, info=c.help, render=False)


WIDGETS: dict[str, Callable[[Control], gr.Component]] = {
    "choice": choice_widget,
    "text": lambda c: gr.Textbox(value=default_value(c) or "", label=c.name, info=c.help, render=False),
    "keywords": lambda c: gr.Dropdown(
        [],
        value=default_value(c) or [],
        multiselect=True,
        allow_custom_value=True,
        label=c.name,
        info=c.help + " (type a word, press Enter)",
        render=False,
    ),
    "integer": integer_widget,
    "history": lambda c: gr.Textbox(
        value="\n".join(default_value(c) or []), lines=4, label=c.name, info=c.help + " (one per line)", render=False
    ),
}


def widget_value(control: Control, value: Any) -> Any:
    """A widget's value as the control expects it (``not set``: None; history: one text per line;
    integers as int)."""
    if value == NOT_SET:
        return None
    if control.kind == "history" and isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if control.kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def example_value(control: Control, controls: dict) -> Any:
    """The widget value that sets ``control`` as an example's ``controls`` give it (unset when absent)."""
    if control.name not in controls:
        return unset_value(control)
    value = controls[control.name]
    return "\n".join(value) if control.kind == "history" and isinstance(value, list) else value


class ControlPanel:
    """One column of widgets per variant; the values of all of them arrive at every event, and
    :meth:`controls` picks the current variant's. Widgets are made unrendered, so the examples above
    them can name them; :meth:`render` places them."""

    def __init__(self, service: Service, shown: str):
        self.shown, self.columns = shown, {}
        self.widgets = {
            variant.id: [(c, WIDGETS[c.kind](c)) for c in variant.controls_for(None)]
            for variant in service.catalog.registry.values()
        }
        for variant_id, pairs in self.widgets.items():
            for control, widget in pairs:
                widget.elem_id = f"control-{variant_id}-{control.name}"  # for the browser test and custom CSS
        self.all = [widget for pairs in self.widgets.values() for _, widget in pairs]

    def render(self) -> None:
        for variant_id, pairs in self.widgets.items():
            with gr.Column(visible=variant_id == self.shown) as self.columns[variant_id]:
                for _, widget in pairs:
                    widget.render()

    def controls(self, variant: str, values: tuple) -> dict:
        start = 0
        for variant_id, pairs in self.widgets.items():
            if variant_id == variant:
                chosen = zip((c for c, _ in pairs), values[start : start + len(pairs)])
                typed = {c.name: widget_value(c, v) for c, v in chosen}
                return {name: v for name, v in typed.items() if v not in (None, "", [])}
            start += len(pairs)
        raise InputError(f"unknown variant {variant!r}")

    def narrowed(self, variant: str, schema: tuple[Control, ...]) -> list:
        """Updates giving the variant's choice widgets the choices the chosen model accepts."""
        accepted = {c.name: c for c in schema}
        updates = []
        for variant_id, pairs in self.widgets.items():
            for c, _ in pairs:
                if variant_id == variant and c.kind == "choice" and c.name in accepted:
                    narrow = accepted[c.name]
                    value = default_value(narrow) if default_value(narrow) is not None else unset_value(narrow)
                    updates.append(gr.update(choices=choice_list(narrow, narrow.choices), value=value))
                else:
                    updates.append(gr.update())
        return updates
