"""How the entity variant is evaluated (:mod:`variants.evaluation`): entity coverage and mention in words
the document supports, and ROUGE, on the salient entities of the BBC News Summary and CNN/DM test articles
(EntSUM's rule (a) targets, :mod:`variants.entity.data`); the paper's Table 3 beside ours."""

from __future__ import annotations

from typing import Any

from ..evaluation import Evaluation, group_means
from .baseline import entity_of


class EntityEvaluation(Evaluation):
    metric_names = ("entity_coverage", "entity_mentioned", "rouge1", "rouge2", "rougeLsum")
    control_metrics = ("entity_coverage", "entity_mentioned")
    # EntSUM Table 3 (ROUGE x100 there, fractions here). The paper's ROUGE-L is set beside our rougeLsum:
    # on multi-sentence summaries ROUGE-1.5.5's ROUGE-L is the summary-level (sentence-split) LCS.
    reported = tuple(
        {
            "system": system,
            "source": "Table 3",
            "metrics": {"rouge1": r1 / 100, "rouge2": r2 / 100, "rougeLsum": rl / 100},
        }
        for system, r1, r2, rl in (
            ("Lead3ovr (Lead-3)", 34.44, 19.14, 30.97),
            ("Lead3ent", 68.41, 60.51, 65.03),
            ("GSumovr", 40.29, 24.87, 37.30),
            ("GSument-name", 51.71, 40.49, 48.75),
            ("GSument-sent", 61.45, 52.04, 58.37),
        )
    )

    def paste(self, lead: str, controls: dict, assets: Any = None) -> str:
        """The entity's name as a sentence of its own, then Lead-k."""
        return f"{entity_of(controls)}. {lead}"

    def breakdown(self, rows: list[dict]) -> dict[str, dict]:
        """Each metric's mean per test set (``dataset``: ``bbc_summary``, ``cnndm_sample``), which
        differ in kind: extractive references (sentences people picked) vs written highlights."""
        groups: dict[str, list[dict]] = {}
        for row in rows:
            groups.setdefault(row.get("dataset", "?"), []).append(row)
        return group_means(groups, self.metric_names)

    def test_examples(self, max_samples: int | None = None) -> list[dict]:
        """Rule-(a) examples (:mod:`variants.entity.data`) of the bundled ``bbc_summary`` test split
        (human-selected reference sentences), then of ``cnndm_sample``'s (highlights)."""
        from .data import build_split

        return (build_split("bbc_summary", "test") + build_split("cnndm_sample", "test"))[:max_samples]
