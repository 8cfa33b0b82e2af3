"""The Space's theme reaches WCAG 2.x AA contrast (4.5:1 for text) for every colour it sets.

The ratio is computed by hand from WCAG 2.x's definitions: relative luminance
L = 0.2126 R + 0.7152 G + 0.0722 B of the linearized sRGB channels (c / 12.92 up to 0.04045, else
((c + 0.055) / 1.055) ** 2.4), and contrast (L_light + 0.05) / (L_dark + 0.05). The formula is checked
against the ratios measured in the browser before the fix (help text 1.91:1, button and selected tab
2.80:1); tests/test_space_browser.py reads the rendered colours too."""

import re

import pytest

AA_TEXT = 4.5  # WCAG 2.x success criterion 1.4.3, normal-size text


def relative_luminance(colour: str) -> float:
    """WCAG 2.x relative luminance of ``#rrggbb``, ``rgb(r, g, b)`` or ``white``."""
    if colour == "white":
        colour = "#ffffff"
    if colour.startswith("#"):
        channels = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    else:
        channels = [int(float(v)) for v in re.findall(r"[\d.]+", colour)[:3]]
    linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    light, dark = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def resolved(theme, value: str) -> str:
    """A theme value with its ``*name`` references followed to a colour (``*primary_700`` → ``#c2410c``)."""
    while value.startswith("*"):
        value = getattr(theme, value[1:])
    return value


def test_the_formula_gives_wcags_own_anchors_and_the_ratios_measured_before_the_fix():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)  # the largest ratio WCAG defines
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic "just fails AA" grey
    assert contrast("rgb(187, 187, 194)", "white") == pytest.approx(1.91, abs=0.005)  # zinc-400 help text
    assert contrast("#f97316", "white") == pytest.approx(2.80, abs=0.005)  # orange-500 button and tab


@pytest.mark.parametrize(
    "foreground, background, where",
    [
        ("block_info_text_color", "block_background_fill", "a control's help text"),
        ("body_text_color_subdued", "body_background_fill", "subdued text (footer, notes)"),
        ("button_primary_text_color", "button_primary_background_fill", "the primary button (Generate)"),
        ("button_primary_text_color", "button_primary_background_fill_hover", "the primary button, hovered"),
        ("color_accent", "background_fill_primary", "the selected tab"),
        ("button_primary_text_color_dark", "button_primary_background_fill_dark", "dark mode: the primary button"),
        ("body_text_color_subdued_dark", "block_background_fill_dark", "dark mode: help text"),
        ("primary_400", "background_fill_primary_dark", "dark mode: the selected tab (app.CSS)"),
    ],
)
def test_every_text_colour_the_theme_sets_reaches_aa(foreground, background, where):
    from space.app import theme

    t = theme()
    ratio = contrast(resolved(t, getattr(t, foreground)), resolved(t, getattr(t, background)))
    assert ratio >= AA_TEXT, f"{where}: {ratio:.2f}:1"


def test_the_fixed_colours_and_their_ratios():
    from space.app import THEME_COLOURS, theme

    t = theme()
    assert {name: resolved(t, value) for name, value in THEME_COLOURS.items()} == {
        "body_text_color_subdued": "#52525b",
        "block_info_text_color": "#52525b",
        "color_accent": "#c2410c",
        "button_primary_background_fill": "#c2410c",
        "button_primary_background_fill_hover": "#9a3412",
        "button_primary_background_fill_dark": "#c2410c",
        "button_primary_background_fill_hover_dark": "#9a3412",
    }
    assert round(contrast("#52525b", "white"), 2) == 7.73
    assert round(contrast("#c2410c", "white"), 2) == 5.18
