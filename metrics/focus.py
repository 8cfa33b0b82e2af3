"""Focus judge for CCSBench: is a summary *conceptual* or *empirical*?

CCSBench (Ding et al., Sec. 4.2 and App. C.3) labels the focus of generated summaries with GPT-4o
(93 % accuracy on their hand-labelled set) and reports the F1 of those labels against the requested
focus. SteerSum runs offline, so it ships a small scikit-learn classifier instead
(``TfidfVectorizer`` + ``LogisticRegression``, :mod:`metrics.focus_classifier`) behind the
:class:`~metrics.focus_classifier.FocusJudge` protocol, which an LLM judge can replace. The paper's
"low empirical focus" is ``conceptual`` and "high" is ``empirical``.

How the training labels were made (a proxy; no human focus labels exist in the bundled data).
The ccs focus *targets* are split from each abstract by a transparent cue rule,
:func:`metrics.focus_labels.rule_focus` (empirical cues such as experiments, results, datasets,
outperform, numbers with ``%``; conceptual cues such as propose, framework, theory, problem, method;
the larger count wins, ties left out), as the paper has GPT-4 split abstracts (App. C.2). The judge
must not learn that rule: a system that applied it would then win both the target and the judge. So
the judge learns from other labels, :func:`metrics.focus_labels.position_parts`: an abstract's first
half is ``conceptual`` (motivation, problem and method come first) and its last half ``empirical``
(experiments and results come last); no cue word decides. Abstracts: SciTLDR train (ML papers,
OpenReview) and the first 1,600 Inspec abstracts (engineering and CS, 1998-2002) for training;
SciTLDR dev + test and the last 400 Inspec held out.

Label quality, honestly. Position is a weak label, and the judge is weaker than one trained on the
cue rule was. The human-side numbers come from ``assets/focus/hand_check.jsonl``: SciTLDR *test*
sentences read by this module's author, one reader, blind to the rule and the classifier, following
the paper's App. C definitions (no agreement study). The cue rule itself agrees with the reading on
57 of the 60 sentences it labels (0.950).

Held-out results of the committed default (``python -m metrics.focus build-default``; the same
numbers are in ``assets/focus/classifier.json`` under ``report``):

====================================  =====  ========  ==========================
set                                   n      accuracy  majority-class baseline
====================================  =====  ========  ==========================
held-out parts vs position labels     3,128  0.893     0.500 (conceptual)
held-out parts vs cue-rule labels     2,684  0.795     0.537 (conceptual)
hand-read sentences, all              94     0.798     0.798 (conceptual)
hand-read sentences the rule labels   60     0.817     0.733 (conceptual)
hand-read sentences without cues      34     0.765     0.912 (conceptual)
====================================  =====  ========  ==========================

The judge trained on the cue rule scored 0.926 on all 94 hand-read sentences (0.950 / 0.882 on the
two parts), but agreed with the ccs targets by construction (docs/evaluation-targets.md). On single
sentences this judge is no better than always answering "conceptual"; it separates whole parts
(0.795 agreement with the targets' labels) better than sentences.

Generated summaries that mix both kinds of content, or paraphrase away the cue words, are where
this judge is weakest; pass a stronger :class:`~metrics.focus_classifier.FocusJudge` to
:func:`metrics.ccs.score_records` when one is available.

This module builds the committed default from the bundled data and holds the command line;
:mod:`metrics.focus_labels` holds the two labelling rules and :mod:`metrics.focus_classifier` the judge.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sklearn.metrics import accuracy_score

from metrics.focus_classifier import DEFAULT_DIR, SklearnFocusClassifier, default_focus_classifier
from metrics.focus_labels import FOCUS, focus_parts, position_parts, rule_focus
from metrics.io import DATA_DIR, read_jsonl
from metrics.text import sentences

INSPEC_TRAIN = 1600  # first 1,600 Inspec abstracts train, the last 400 are held out


def _labelled(abstracts: list[list[str]], parts=focus_parts) -> tuple[list[str], list[str]]:
    texts, labels = [], []
    for abstract in abstracts:
        for label, text in sorted(parts(abstract).items()):
            texts.append(text)
            labels.append(label)
    return texts, labels


def training_data(data_dir: Path = DATA_DIR) -> dict[str, tuple[list[str], list[str]]]:
    """``{"train": (texts, labels), "heldout-scitldr": ..., "heldout-inspec": ..., "heldout-position": ...}``
    from the bundled data: training parts labelled by position (:func:`position_parts`); held-out parts
    labelled by the cue rule (the ccs targets' labels: agreement with them) and by position. Held-out
    abstracts that also occur in training (SciTLDR repeats six) are dropped."""
    scitldr = {
        split: [r["source_sentences"] for r in read_jsonl(data_dir / "scitldr" / f"{split}.jsonl")]
        for split in ("train", "dev", "test")
    }
    inspec = [sentences(r["abstract"]) for r in read_jsonl(data_dir / "inspec" / "inspec.jsonl")]
    train = scitldr["train"] + inspec[:INSPEC_TRAIN]
    seen = {" ".join(abstract) for abstract in train}
    heldout_scitldr = [a for a in scitldr["dev"] + scitldr["test"] if " ".join(a) not in seen]
    heldout_inspec = [a for a in inspec[INSPEC_TRAIN:] if " ".join(a) not in seen]
    return {
        "train": _labelled(train, position_parts),
        "heldout-scitldr": _labelled(heldout_scitldr),
        "heldout-inspec": _labelled(heldout_inspec),
        "heldout-position": _labelled(heldout_scitldr + heldout_inspec, position_parts),
    }


def _accuracy(labels: list[str], predicted: list[str]) -> dict:
    majority = max(FOCUS, key=labels.count)
    return {
        "n": len(labels),
        "accuracy": round(accuracy_score(labels, predicted), 4),
        "majority_class": majority,
        "majority_accuracy": round(labels.count(majority) / len(labels), 4),
    }


def _read_vs(predict, rows: list[dict]) -> tuple[list[str], list[str]]:
    return [r["read"] for r in rows], predict([r["text"] for r in rows])


def build_default(data_dir: Path = DATA_DIR, out_dir: Path = DEFAULT_DIR) -> dict:
    """Train on the position-labelled training parts, measure on the held-out parts and on the
    hand-read sentences, save to ``out_dir``; return the report."""
    data = training_data(data_dir)
    classifier = SklearnFocusClassifier().fit(*data["train"])
    heldout_texts = data["heldout-scitldr"][0] + data["heldout-inspec"][0]
    heldout_labels = data["heldout-scitldr"][1] + data["heldout-inspec"][1]
    hand = read_jsonl(DEFAULT_DIR / "hand_check.jsonl")
    covered = [r for r in hand if rule_focus(r["text"]) is not None]
    uncovered = [r for r in hand if rule_focus(r["text"]) is None]
    train_labels = data["train"][1]
    classifier.report = {
        "data": {
            "train": f"scitldr/train + inspec[:{INSPEC_TRAIN}]",
            "heldout": f"scitldr/dev + scitldr/test + inspec[{INSPEC_TRAIN}:], minus abstracts seen in train",
            "labels": "metrics.focus_labels.position_parts (first half of an abstract conceptual, last half "
            "empirical); never the cue rule that makes the ccs focus targets",
            "hand_read": "assets/focus/hand_check.jsonl: one reader, blind to rule and classifier",
        },
        "train": {
            "n": len(train_labels),
            "conceptual": train_labels.count("conceptual"),
            "empirical": train_labels.count("empirical"),
        },
        "heldout_vs_rule": _accuracy(heldout_labels, classifier.predict(heldout_texts)),
        **{
            f"{name}_vs_rule": _accuracy(data[name][1], classifier.predict(data[name][0]))
            for name in ("heldout-scitldr", "heldout-inspec")
        },
        "heldout_vs_position": _accuracy(data["heldout-position"][1], classifier.predict(data["heldout-position"][0])),
        "hand_read": _accuracy(*_read_vs(classifier.predict, hand)),
        "hand_read_with_cues": _accuracy(*_read_vs(classifier.predict, covered)),
        "rule_vs_hand_read_with_cues": _accuracy(*_read_vs(lambda texts: list(map(rule_focus, texts)), covered)),
        "hand_read_without_cues": _accuracy(*_read_vs(classifier.predict, uncovered)),
    }
    classifier.save(out_dir)
    return classifier.report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m metrics.focus", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build-default", help="retrain the committed classifier from the bundled data")
    build.add_argument("--data-dir", type=Path, default=DATA_DIR)
    build.add_argument("--out-dir", type=Path, default=DEFAULT_DIR)
    predict = commands.add_parser("predict", help="label each line of a text file")
    predict.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    if args.command == "build-default":
        print(json.dumps(build_default(args.data_dir, args.out_dir), indent=1))
    else:
        lines = [line for line in args.file.read_text(encoding="utf-8").splitlines() if line.strip()]
        for label, line in zip(default_focus_classifier().predict(lines), lines):
            print(f"{label}\t{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
