"""A request's controls once a variant has validated them, marked so that they are not checked again.

A request meets ``Variant.validate`` twice: the Space checks its controls before batching (so a bad value
fails before anything is generated), and the summarizer it is given to validates whatever it receives. The
mark makes the second call free and keeps the checks in one place: a :class:`ValidControls` that the same
variant validated against the same assets comes back as it is; a plain dict, or one checked for another
variant or other assets (a model that narrows the variant's choices), is checked.
"""

from __future__ import annotations

from typing import Any


class ValidControls(dict):
    """Validated controls (normalized, defaults filled in): a plain mapping to every reader, plus the variant
    id and the assets they were checked against. A copy (``copy``, ``deepcopy``, pickling) is a plain dict,
    checked again where it is validated: only the object a validation returned skips the checks."""

    def __init__(self, checked: dict, variant: str, assets: Any = None):
        super().__init__(checked)
        self.variant, self.assets = variant, assets

    def checked_for(self, variant: str, assets: Any = None) -> bool:
        """Whether these controls were validated by ``variant`` against these very ``assets``."""
        return self.variant == variant and self.assets is assets

    def __reduce__(self):
        return dict, (dict(self),)
