"""Whose terms a model's weights carry: its training data's (:data:`variants.sources.DATASET_LICENSES`) and
its base model's, since the weights derive from both. One shared open licence becomes the card's Hub
licence id; anything else is ``other`` with a ``LICENSE.md`` that lists each source and its terms.
"""

from __future__ import annotations

from pathlib import Path

from variants.sources import NON_COMMERCIAL, all_data_licenses

from .base_model import adapter_config, base_model_of

LICENSE_FILE = "LICENSE.md"
# Training-data licence texts (variants.sources.DATASET_LICENSES) that are a Hub licence id.
HUB_LICENSES = {"Apache-2.0": "apache-2.0"}
# Hub licence ids of the base models SteerSum's defaults and docs name (each model's Hub card);
# any other base is "unknown" and the card says to check its terms.
BASE_MODEL_LICENSES = {
    "facebook/bart-base": "apache-2.0",
    "facebook/bart-large": "apache-2.0",
    "google/flan-t5-small": "apache-2.0",
    "google/flan-t5-base": "apache-2.0",
    "google/flan-t5-large": "apache-2.0",
    "google/flan-t5-xl": "apache-2.0",
    "google/flan-t5-xxl": "apache-2.0",
    "sentence-transformers/all-MiniLM-L6-v2": "apache-2.0",
}


def license_fields(data_licenses: dict[str, str], base_model: str | None = None) -> dict[str, str]:
    """A Hub licence id when all training data and the base model (a Hub id; None for a random test
    model) share one open licence; otherwise ``other``, pointing to ``LICENSE.md``, which lists each
    one's terms (the weights derive from both)."""
    ids = {HUB_LICENSES.get(text) for text in data_licenses.values()}
    if base_model:
        ids.add(BASE_MODEL_LICENSES.get(base_model))
    if len(ids) == 1 and None not in ids:
        return {"license": ids.pop()}
    restricted = set(data_licenses) & NON_COMMERCIAL
    return {
        "license": "other",
        "license_name": "steersum-non-commercial" if restricted else "steersum-research-use",
        "license_link": LICENSE_FILE,
    }


def license_note(
    data_licenses: dict[str, str],
    base_model: str | None = None,
    tiny: bool = False,
    weights_license: str | None = None,
) -> str:
    """The data's terms, then the base model's: the weights derive from both. ``weights_license``: the
    licence of the pretrained weights a local base (SteerSum's own) was warm-started from."""
    restricted = sorted(set(data_licenses) & NON_COMMERCIAL)
    if restricted:
        note = (
            f"The training data ({', '.join(restricted)}) may be used for non-commercial research only. The "
            "weights are derived from it, so use them under the same terms: non-commercial research only."
        )
    elif license_fields(data_licenses, base_model)["license"] != "other":
        return (
            f"All training data is under {next(iter(data_licenses.values()))}, and so is the base model, "
            f"`{base_model}`; so are the weights."
            if base_model
            else f"All training data is under {next(iter(data_licenses.values()))}, and so are the weights."
        )
    else:
        note = (
            "The terms of some training data are unclear or research-only (see below); treat the weights as "
            "research use only unless you have checked each source."
        )
    if tiny:
        return note + " There is no base model: the weights started from a random initialization."
    if not base_model:
        return note
    known = BASE_MODEL_LICENSES.get(base_model)
    if not known and weights_license:
        return note + (
            f" The base model, `{base_model}`, was trained by SteerSum from pretrained weights under "
            f"{weights_license}, on the data listed here; both terms apply to the weights as well."
        )
    return note + (
        f" The base model, `{base_model}`, is under {known}; its terms apply to the weights as well."
        if known
        else f" The base model, `{base_model}`, comes with its own terms, which SteerSum does not "
        "record: check them, as they apply to the weights as well."
    )


def write_license_file(out: Path, record: dict) -> None:
    """``LICENSE.md`` for a card whose licence is ``other``: each training dataset and its terms, and
    the base model's."""
    licences = all_data_licenses(record)
    base = base_model_of(record, adapter_config(out))
    base_model = base["license_base"]
    if license_fields(licences, base_model)["license"] != "other":
        return
    rows = "\n".join(f"| {name} | {text} |" for name, text in sorted(licences.items())) or "| unknown | unknown |"
    weights_license = base["weights_license"]
    if base_model:
        terms = BASE_MODEL_LICENSES.get(base_model) or (
            f"pretrained weights under {weights_license}; its training data is listed above"
            if weights_license
            else "see its Hub page"
        )
        rows += f"\n| base model `{base_model}` | {terms} |"
    note = license_note(licences, base_model, base["tiny"], weights_license)
    out.joinpath(LICENSE_FILE).write_text(
        f"# Terms of use\n\n{note}\n\n| training data | terms |\n|---|---|\n{rows}\n\n"
        "The SteerSum code that trained and runs the model is separate from these terms.\n",
        encoding="utf-8",
    )
