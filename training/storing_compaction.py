"""What compacting costs: the same test set through the fp32 and the int8 general summarizer
(:func:`compare_compact`: ROUGE-1, the verbatim share of names and numbers), through a stored adapter on each
base (:func:`compare_compact_adapter`: ROUGE-1 and whether the int8 control effect lies in the fp32 interval),
and how many generated tokens two models agree on (:func:`token_agreement`). ``python -m benchmarks
compaction`` reports them; the store (:mod:`training.storing`) keeps the int8 weights they check.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from store.adapters import point_at_base


def compare_compact(
    fp32_dir: str | Path, compact_dir: str | Path, max_examples: int | None = 100, batch_size: int = 8
) -> dict:
    """The general summarizer in fp32 and compacted, on the bbc_summary test split: ROUGE-1 of each
    (the goal: within 0.005), the verbatim share of names and numbers, and the share of generated
    tokens that agree position by position on the sets' first ``max_examples`` documents."""
    from .general_evaluation import evaluate_general

    reports = {
        kind: evaluate_general(folder, max_examples, batch_size)
        for kind, folder in (("fp32", fp32_dir), ("int8", compact_dir))
    }
    out = {}
    for set_name in reports["fp32"]["sets"]:
        a, b = reports["fp32"]["sets"][set_name], reports["int8"]["sets"][set_name]
        out[set_name] = {
            "rouge1_fp32": a["rouge1"],
            "rouge1_int8": b["rouge1"],
            "rouge1_difference": b["rouge1"] - a["rouge1"],
            "within_goal": abs(b["rouge1"] - a["rouge1"]) <= 0.005,
            "verbatim_fp32": a["verbatim_fact_share"],
            "verbatim_int8": b["verbatim_fact_share"],
        }
    return out


def token_agreement(model_a, model_b, tokenizer, documents: list[str], max_new_tokens: int = 32) -> float:
    """Share of positions where two models' greedy generations hold the same token (a shorter output is
    padded, so a length difference counts as disagreement)."""
    import torch

    agree = total = 0
    with torch.inference_mode():
        for document in documents:
            batch = tokenizer([document], return_tensors="pt", truncation=True, max_length=256)
            a, b = (
                m.generate(**batch, num_beams=1, do_sample=False, max_new_tokens=max_new_tokens)[0].tolist()
                for m in (model_a, model_b)
            )
            width = max(len(a), len(b))
            a, b = a + [-1] * (width - len(a)), b + [-2] * (width - len(b))
            agree += sum(x == y for x, y in zip(a, b))
            total += width
    return agree / max(total, 1)


def compare_compact_adapter(
    adapter: str | Path,
    fp32_base: str | Path,
    test_file: str | Path,
    max_examples: int | None = 100,
    batch_size: int = 8,
) -> dict:
    """A stored adapter on the int8 base it is served with against the same adapter on the fp32 base:
    ROUGE-1 of each (goal: within 0.005) and, per control metric, whether the int8 control effect lies
    inside the fp32 one's interval."""
    import tempfile

    from variants import load_summarizer

    from .data import load_examples
    from .sensitivity import evaluate_with_sensitivity

    reports = {}
    with tempfile.TemporaryDirectory() as scratch:
        on_fp32 = Path(scratch) / Path(adapter).name
        shutil.copytree(adapter, on_fp32)
        point_at_base(on_fp32, Path(fp32_base).resolve())
        for kind, folder in (("int8", Path(adapter)), ("fp32", on_fp32)):
            summarizer = load_summarizer(folder)
            records = load_examples(test_file, summarizer.variant, summarizer.assets, max_examples)
            reports[kind] = evaluate_with_sensitivity(summarizer, records, str(test_file), batch_size)
    a, b = reports["fp32"], reports["int8"]
    out = {"rouge1_fp32": a["metrics"].get("rouge1"), "rouge1_int8": b["metrics"].get("rouge1"), "effects": {}}
    if out["rouge1_fp32"] is not None and out["rouge1_int8"] is not None:
        out["rouge1_difference"] = out["rouge1_int8"] - out["rouge1_fp32"]
        out["within_goal"] = abs(out["rouge1_difference"]) <= 0.005
    for name, e in a["control_sensitivity"]["effect"].items():
        other = b["control_sensitivity"]["effect"].get(name)
        if other is None:
            continue
        inside = None if e.get("ci_low") is None else e["ci_low"] <= other["difference"] <= e["ci_high"]
        out["effects"][name] = {
            "fp32": e["difference"],
            "fp32_interval": [e.get("ci_low"), e.get("ci_high")],
            "int8": other["difference"],
            "int8_inside_fp32_interval": inside,
        }
    return out
