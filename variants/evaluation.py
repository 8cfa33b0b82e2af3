"""The evaluation contract: what a variant's test sets are and how its numbers are read, one object per
variant (``variant.evaluation``), as a task of lm-evaluation-harness is one object per benchmark.

Serving needs none of it (:mod:`variants.base` is the serving contract); evaluation
(:mod:`training.evaluate`), the control effect (:mod:`training.sensitivity`) and the leaderboard
(:mod:`benchmarks.leaderboard`) read it:

* ``metric_names`` and ``control_metrics``: what a report holds, and which of it measures obedience;
* ``lower_is_better`` and ``contrasts``: how to read a control effect;
* ``reported``: the paper's own numbers, shown beside ours;
* ``test_examples`` and ``extra_test_set``: the bundled test sets; ``long_validation_sets``: validation
  sets of documents longer than a model's source limit, where how it reads them is chosen;
* ``corpus_scores``, ``breakdown``, ``report_extras``: hooks that see a whole test set;
* ``paste``: the pasted-controls adversary every control metric must beat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Variant


class Evaluation:
    """Base class; a variant's ``evaluation.py`` subclasses it and sets the attributes it needs."""

    metric_names: tuple[str, ...] = ()
    # The metrics (of metric_names) that measure obedience to the controls: the leaderboard and every
    # evaluation report give their control effect, given minus shuffled controls (training.sensitivity).
    control_metrics: tuple[str, ...] = ()
    # Metrics (of metric_names) where lower is better (a length error, EGISES): their control effect is
    # good when negative, and the pasted row is beaten by scoring below it (training.sensitivity).
    lower_is_better: tuple[str, ...] = ()
    # Corpus control metrics that contrast two per-example scores (name -> (one side's, the other's)),
    # e.g. CCSBench's ΔFKGL: their control effect gets an interval as the per-example metrics' do.
    contrasts: dict[str, tuple[str, str]] = {}
    # The paper's own numbers for its main table, shown beside ours on the leaderboard and labelled
    # "reported in paper" (different data and base model). Each: {"system": ..., "source": "Table 2",
    # "metrics": {metric name: value on the same scale as ours}}.
    reported: tuple[dict, ...] = ()
    # Test sets with human references scored beside the derived one (e.g. MACSum-Doc's topic- and
    # length-focused summaries), by name; :meth:`extra_test_set` builds each.
    extra_test_sets: tuple[str, ...] = ()

    def __init__(self, variant: Variant):
        # The variant whose summaries are evaluated: its default assets score and paste without a checkpoint.
        self.variant = variant

    def test_examples(self, max_samples: int | None = None) -> list[dict]:
        """The bundled test set the leaderboard scores every system of this variant on
        (``python -m benchmarks leaderboard``): at most ``max_samples`` records shaped like training
        data (``{"id", "document", "controls", "target", "dataset"}``), the same on every call.
        Default: none, and the leaderboard skips the variant with a note."""
        return []

    def extra_test_set(self, name: str, max_samples: int | None = None) -> list[dict]:
        """The records of the extra test set ``name`` (one of :attr:`extra_test_sets`), shaped like
        :meth:`test_examples`' and the same on every call."""
        raise KeyError(
            f"variant '{self.variant.id}' has no test set {name!r}; it has: "
            f"{', '.join(self.extra_test_sets) or 'none besides its derived one'}"
        )

    def long_validation_sets(self, max_samples: int | None = None) -> dict[str, list[dict]]:
        """Validation sets, by name, whose documents run past a model's source limit: where the windows a
        longer document is read in (``source_windows``) are chosen (``scripts/choose_on_val.py
        --source-windows``). Default: none."""
        return {}

    def corpus_scores(self, records: list[dict], rows: list[dict], source: str = "<records>") -> dict[str, Any]:
        """Metrics that only exist for a whole test set (e.g. EGISES compares the summaries of one
        article for all its readers), from the examples and their evaluation rows (``summary`` and
        the live scores). :func:`training.evaluate.evaluate` adds them to the report's ``metrics``.
        Default: none."""
        return {}

    def breakdown(self, rows: list[dict]) -> dict[str, dict]:
        """Corpus metrics per group of examples (e.g. per composition of controls), for the report's
        ``breakdown``. Default: none."""
        return {}

    def report_extras(self, records: list[dict], rows: list[dict]) -> dict[str, Any]:
        """Fields an evaluation report carries beside ``metrics`` for this variant (e.g. ROUGE per
        reader, a note that the data is simulated), from the examples and their rows. Default: none."""
        return {}

    def paste(self, lead: str, controls: dict, assets: Any = None) -> str:
        """The pasted-controls adversary: ``lead`` (a control-blind Lead-k) with the controls' own words
        pasted in (the topic's terms, the entity's name, the keywords, ...), the cheapest way to look
        obedient. Every control metric must score the controlled baseline well above it
        (:mod:`training.sensitivity`). ``controls`` are validated. Default: ``lead`` unchanged."""
        return lead


def group_means(groups: dict[str, list[dict]], metric_names: tuple[str, ...]) -> dict[str, dict]:
    """Each group's size and mean of each metric every row of it has: a ``breakdown``'s values."""
    return {
        name: {
            "n": len(group),
            **{
                metric: sum(r[metric] for r in group) / len(group)
                for metric in metric_names
                if all(r.get(metric) is not None for r in group)
            },
        }
        for name, group in groups.items()
    }


def whole_groups(records: list[dict], max_samples: int | None, key: str = "doc_id") -> list[dict]:
    """The first records, whole groups only (records sharing ``key``, e.g. one document's): as many
    groups as fit in ``max_samples`` records, at least one. A test set whose shuffled controls stay
    within a document cut this way leaves no record alone with its own controls to shuffle."""
    if max_samples is None:
        return records
    groups: dict[Any, list[dict]] = {}
    for record in records:
        groups.setdefault(record[key], []).append(record)
    kept: list[dict] = []
    for group in groups.values():
        if kept and len(kept) + len(group) > max_samples:
            break
        kept += group
    return kept
