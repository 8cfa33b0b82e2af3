"""The zoo's evaluation of a trained variant model: every setting chosen on the val split (its decoding
rules on or off, then the control strength γ), then one report on the test split at those settings.

:func:`evaluate_model` writes ``val_report.json`` (:data:`VAL_REPORT`: what admits the model to the store),
``guidance_sweep.json`` and ``eval_report.json`` (test, which the card shows), and records each choice
with the split it was made on. Test never chooses: a setting picked where it is reported would report the
luckiest of several tries.
"""

from __future__ import annotations

from pathlib import Path

from .zoo_models import Budget

VAL_REPORT = (
    "val_report.json"  # a variant model's evaluation on val at its chosen settings: what admits it to the store
)


def eval_batch_size() -> int:
    """Sources per ``generate`` call: 8 on a CPU, as the Space batches; 32 on a GPU, which runs them in
    parallel (a batch's padding can change a beam's scores slightly, so GPU and CPU reports may differ)."""
    from variants.seq2seq import pick_device

    return 32 if pick_device() == "cuda" else 8


def declares_constraints(variant) -> bool:
    """Whether ``variant`` has decoding rules to turn on (it overrides :meth:`variants.base.Variant.constraints`)."""
    from variants.base import Variant

    return type(variant).constraints is not Variant.constraints


def sweep_row(guidance: float, report: dict) -> dict:
    """A report as a row of :func:`training.guidance.sweep`'s table: what :func:`training.guidance.pick_default` reads."""
    sensitivity = report["control_sensitivity"]
    return {
        "guidance": guidance,
        "metrics": report["metrics"],
        "effect": sensitivity["effect"],
        "verdict": sensitivity["verdict"],
    }


def pick_constraints(off: dict, on: dict, control_metrics, lower_is_better) -> bool:
    """Whether a model generates with its decoding rules, from its reports without (``off``) and with them
    (``on``) on the same val examples at γ = 1, by the rule that picks γ (:func:`training.guidance.pick_default`)
    with the rules in the place of a stronger γ: taken only when they make the lead control metric stand,
    do not lower its effect, raise the lower end of its interval and cost at most 0.02 ROUGE-1 (a tie keeps
    them off)."""
    from .guidance import pick_default

    swept = {
        "control_metrics": list(control_metrics),
        "lower_is_better": sorted(lower_is_better),
        "sweep": [sweep_row(1.0, off), sweep_row(2.0, on)],  # 2.0 stands for "rules on"
    }
    return pick_default(swept) != 1.0


def text_rules() -> dict[str, tuple[str, bool]]:
    """The decoding rules that read the text and no control (:mod:`variants.text_rules`), each with the
    quality share (:mod:`metrics.quality`) it is taken for and whether lower is better: names and numbers
    from the document only (``has_unsupported``), no end before a finished sentence (``ends_sentence``), no
    token trigram twice (``repeated_trigram``), no word twice in a row (``doubled_word``), what it quotes the
    document's (``altered_quote``), names of one token the document's (``has_unsupported``). Chosen in the order
    of :data:`variants.decoding_rules.TEXT_RULES`."""
    from variants.decoding_rules import (
        DOCUMENT_NAMES,
        DOCUMENT_WORDS,
        FINISH_SENTENCES,
        NO_DOUBLED_WORDS,
        NO_REPEAT_TRIGRAMS,
        TEXT_RULES,
        VERBATIM_QUOTES,
    )

    aims = {
        DOCUMENT_WORDS: ("has_unsupported", True),
        FINISH_SENTENCES: ("ends_sentence", False),
        NO_REPEAT_TRIGRAMS: ("repeated_trigram", True),
        NO_DOUBLED_WORDS: ("doubled_word", True),
        VERBATIM_QUOTES: ("altered_quote", True),
        DOCUMENT_NAMES: ("has_unsupported", True),
    }
    return {rule: aims[rule] for rule in TEXT_RULES}


def pick_text_rule(rule: str, off: dict, on: dict, control_metrics, lower_is_better) -> bool:
    """Whether a model generates with the text rule ``rule`` (:func:`text_rules`), from its reports without
    (``off``) and with it (``on``) at its other chosen settings on the same val examples: taken only when it
    improves the quality share it is for, at a cost of at most 0.02 in ROUGE-1 (ROUGE-L for ccs), in the
    lead control metric's effect and in each other rule's share (a trigram barred where a keyword is forced
    makes the beam invent words); a tie keeps it off."""
    from .guidance import ROUGE_TOLERANCE, lead_metric, rouge_metric

    def gain(field: str, lower: bool) -> float | None:  # on minus off, better > 0; None: unmeasured
        before, after = off["metrics"].get(field), on["metrics"].get(field)
        return None if before is None or after is None else (before - after if lower else after - before)

    own = gain(*text_rules()[rule])
    if own is None or own <= 0:  # unmeasured (a report without text scores) or no better: off
        return False
    others = [gain(*aim) for name, aim in text_rules().items() if name != rule]
    if any(g is not None and round(g, 9) < -ROUGE_TOLERANCE for g in others):  # 0.035 - 0.015 is within 0.02
        return False
    rouge = rouge_metric(off["metrics"])
    if rouge is not None and on["metrics"][rouge] < off["metrics"][rouge] - ROUGE_TOLERANCE:
        return False
    rows = [sweep_row(1.0, off), sweep_row(2.0, on)]
    name = lead_metric({"control_metrics": list(control_metrics), "sweep": rows})
    if name is None:
        return True
    sign = -1.0 if name in lower_is_better else 1.0
    return sign * effects(on)[name]["difference"] >= sign * effects(off)[name]["difference"] - ROUGE_TOLERANCE


def effects(report: dict) -> dict:
    """A sensitivity report's control effects, by metric."""
    return report.get("control_sensitivity", {}).get("effect", {})


def choose_text_rule(summarizer, rule: str, val: list, val_file: Path, off: dict) -> tuple[bool, dict]:
    """The text rule ``rule`` on or off on val (:func:`pick_text_rule`), the summarizer at its other chosen
    settings and ``off`` its val report there: the choice, and the val report at it. The summarizer is left
    at the choice. A share at its best already (no summary ends unfinished, say) leaves nothing to take the
    rule for: it stays off, unmeasured."""
    from variants.decoding_rules import DOCUMENT_NAMES, NAME_WORDS

    from .sensitivity import evaluate_with_sensitivity

    settings = summarizer.settings.but(**{rule: False})
    field, lower = text_rules()[rule]
    if off["metrics"].get(field) == (0.0 if lower else 1.0):
        summarizer.settings = settings
        return False, off
    config = summarizer.model.generation_config
    if rule == DOCUMENT_NAMES and getattr(config, NAME_WORDS, None) is None:  # its names, from its training documents
        from .name_words import name_words, training_documents

        setattr(
            config, NAME_WORDS, name_words(summarizer.tokenizer, training_documents(val_file.parent / "train.jsonl"))
        )
    summarizer.settings = settings.but(**{rule: True})
    on = evaluate_with_sensitivity(summarizer, val, str(val_file), eval_batch_size())
    evaluation = summarizer.variant.evaluation
    taken = pick_text_rule(rule, off, on, evaluation.control_metrics, evaluation.lower_is_better)
    fields = [f for f, _ in text_rules().values()] + ["rouge1", "rougeLsum"]
    print(
        f"{rule} on val, off -> on ({'taken' if taken else 'refused'}): "
        + ", ".join(f"{f} {off['metrics'][f]:.3f} -> {on['metrics'][f]:.3f}" for f in fields if f in off["metrics"])
        + "".join(
            f", {m} effect {effects(off)[m]['difference']:+.3f} -> {effects(on)[m]['difference']:+.3f}"
            for m in evaluation.control_metrics
            if m in effects(off) and m in effects(on)
        ),
        flush=True,
    )
    summarizer.settings = settings.but(**{rule: taken})
    return taken, on if taken else off


def rule_defaults(summarizer, rule: str, taken: bool) -> dict:
    """What a model's generation config keeps of a text rule's choice: its switch, and with the document-names rule
    taken, the names it reads (set by :func:`choose_text_rule`)."""
    from variants.decoding_rules import DOCUMENT_NAMES, NAME_WORDS

    names = getattr(summarizer.model.generation_config, NAME_WORDS, None)
    return {rule: taken, **({NAME_WORDS: names} if rule == DOCUMENT_NAMES and taken else {})}


def evaluate_model(model_dir: Path, data: Path, budget: Budget) -> dict:
    """Every choice on the val split, then one report on test.

    On ``data/val.jsonl``: the decoding rules on or off (:func:`pick_constraints`, for a variant that has
    them), then the control strength γ at each of ``budget.guidance_sweep`` (:func:`training.guidance.sweep`
    under the chosen rules; :func:`training.guidance.pick_default` picks), then each text rule on or off in
    turn (:func:`pick_text_rule`, in the order of :func:`text_rules`). They become the model's
    defaults. Then the model, as it will be served, is evaluated once on ``data/test.jsonl`` with its control
    sensitivity (:mod:`training.sensitivity`; γ = 1 beside it when γ is not 1): its ``eval_report.json``, where
    the card reads it. Every report and the record say the split each choice was made on (``chosen_on``,
    ``choices``); ``val_report.json`` (the val evaluation at the chosen settings) is what
    the store admits the model on (:func:`training.storing.put`). Test never chooses: a γ or a rule picked
    where it is reported would report the luckiest of several tries."""
    from variants import load_summarizer
    from variants.base import read_record, write_record
    from variants.seq2seq import save_default_strength, save_generation_defaults

    from .data import load_examples
    from .evaluate import write_report
    from .guidance import SWEEP_FILE, pick_default, sweep
    from .sensitivity import evaluate_with_sensitivity

    summarizer = load_summarizer(model_dir)
    variant, batch = summarizer.variant, eval_batch_size()
    val_file = data / "val.jsonl"
    val = load_examples(val_file, variant, summarizer.assets, budget.max_eval_samples)
    chosen = {"chosen_on": "val", "data": f"{data.name}/val.jsonl", "n_examples": len(val)}  # no machine path
    served_strength = summarizer.settings.control_strength  # a stored model's default, chosen before this
    served_rules = {rule: getattr(summarizer.settings, rule) for rule in text_rules()}
    plain = summarizer.settings.alone()
    summarizer.settings = plain.but(constraints=False)
    chosen_report = evaluate_with_sensitivity(summarizer, val, str(val_file), batch)
    choices, constraints = {}, False
    if declares_constraints(variant):
        summarizer.settings = plain.but(constraints=True)
        on = evaluate_with_sensitivity(summarizer, val, str(val_file), batch)
        evaluation = variant.evaluation
        constraints = pick_constraints(chosen_report, on, evaluation.control_metrics, evaluation.lower_is_better)
        choices["constraints"] = {"value": constraints, **chosen}
        chosen_report = on if constraints else chosen_report
    summarizer.settings = plain.but(constraints=constraints)
    guidance = 1.0
    if budget.guidance_sweep:  # the same val examples at each γ, γ = 1 being the report above
        swept, reports = sweep(
            summarizer, val, str(val_file), budget.guidance_sweep, batch, known={1.0: chosen_report}
        )
        swept["default_guidance"] = guidance = pick_default(swept)
        swept.update(split="val", chosen_on="val")
        write_report(swept, model_dir / SWEEP_FILE)
        choices["guidance"] = {"value": guidance, "swept": list(budget.guidance_sweep), **chosen}
        chosen_report = reports[guidance]
    if guidance != served_strength:  # the model generates at the chosen γ from now on, 1 included
        save_default_strength(model_dir, guidance)
    summarizer.settings = plain.but(constraints=constraints, control_strength=guidance)
    for rule in text_rules():
        taken, chosen_report = choose_text_rule(summarizer, rule, val, val_file, chosen_report)
        choices[rule] = {"value": taken, **chosen}
        if taken != served_rules[rule]:
            save_generation_defaults(model_dir, **rule_defaults(summarizer, rule, taken))
    write_report({**chosen_report, "split": "val", "chosen_on": "val", "choices": choices}, model_dir / VAL_REPORT)
    write_record(
        model_dir, {**read_record(model_dir), "constraints": constraints, "chosen_on": "val", "choices": choices}
    )
    return report_on_test(summarizer, model_dir, data, budget, choices)


def choose_text_rule_again(model_dir: Path, data: Path, budget: Budget, rule: str) -> dict:
    """For a model chosen on val already (its ``val_report.json`` at its choices, on the same first
    ``budget.max_eval_samples`` val examples, ``rule`` off): the text rule ``rule`` chosen on val as
    :func:`evaluate_model` chooses it, then the model reported once on test at all its choices."""
    import json

    from variants import load_summarizer
    from variants.base import read_record, write_record
    from variants.seq2seq import save_generation_defaults

    from .data import load_examples
    from .evaluate import write_report

    summarizer = load_summarizer(model_dir)
    if getattr(summarizer.settings, rule):
        raise ValueError(f"{model_dir} generates with {rule} already: its val report is not the one without it")
    off = json.loads((model_dir / VAL_REPORT).read_text())
    val_file = data / "val.jsonl"
    val = load_examples(val_file, summarizer.variant, summarizer.assets, budget.max_eval_samples)
    if off.get("n_examples") != len(val):
        raise ValueError(f"{model_dir / VAL_REPORT} holds {off.get('n_examples')} val examples, not {len(val)}")
    choices = dict(off.get("choices") or {})
    taken, report = choose_text_rule(summarizer, rule, val, val_file, off)
    choices[rule] = {"value": taken, "chosen_on": "val", "data": f"{data.name}/val.jsonl", "n_examples": len(val)}
    if taken:
        save_generation_defaults(model_dir, **rule_defaults(summarizer, rule, taken))
    write_report({**report, "split": "val", "chosen_on": "val", "choices": choices}, model_dir / VAL_REPORT)
    write_record(model_dir, {**read_record(model_dir), "chosen_on": "val", "choices": choices})
    return report_on_test(summarizer, model_dir, data, budget, choices)


def report_on_test(summarizer, model_dir: Path, data: Path, budget: Budget, choices: dict) -> dict:
    """The model at its chosen settings (the summarizer's), evaluated once on ``data/test.jsonl`` with its
    control sensitivity: its ``eval_report.json``, which records the choices and the split they were made on."""
    from .data import load_examples
    from .evaluate import REPORT_FILE, write_report
    from .guidance import evaluate_guided

    test_file = data / "test.jsonl"
    test = load_examples(test_file, summarizer.variant, summarizer.assets, budget.max_eval_samples)
    # reported once, at the chosen settings
    report = evaluate_guided(summarizer, test, str(test_file), eval_batch_size())
    report.update(split="test", chosen_on="val", choices=choices)
    write_report(report, model_dir / REPORT_FILE)
    return {
        "metrics": report["metrics"],
        "control_effect": report["control_sensitivity"]["effect"],
        "chosen_on": "val",
        "choices": choices,
        **({"generation": report["generation"]} if "generation" in report else {}),
    }
