"""Compaction: the stored int8 general summarizer against its fp32 checkpoint (``python -m benchmarks compaction``).

With a trained zoo here (``checkpoints/general`` in fp32 and the stored ``general``): ROUGE-1 on the
bbc_summary test split and the verbatim share of names and numbers, fp32 vs int8 (goal: ROUGE-1 within
0.005), and for each stored adapter its ROUGE-1 and control effect on its variant's test split on
both bases (the int8 effect inside the fp32 interval). Without one: the greedy-token agreement of a
tiny random BART with its compacted copy, which checks the plumbing, not the quality.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

ZOO = Path("checkpoints")
DOCUMENTS = 20


def tiny_agreement() -> tuple[float, int]:
    """(agreement, distinct tokens generated) of a tiny random BART and its int8 copy on bbc_summary test."""
    import torch
    from transformers import BartForConditionalGeneration

    from store.compact import load_compact, write_compact
    from training.storing import token_agreement
    from variants.presets import tiny_bart_config, tiny_tokenizer
    from variants.sources import load_source

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    model = BartForConditionalGeneration(tiny_bart_config(tokenizer)).eval()
    documents = [r["source"] for r in load_source("bbc_summary", "test")][:DOCUMENTS]
    with tempfile.TemporaryDirectory() as scratch:
        model.save_pretrained(Path(scratch) / "fp32")
        compact = load_compact(write_compact(Path(scratch) / "fp32", Path(scratch) / "int8"))
    with torch.inference_mode():
        batch = tokenizer(documents, return_tensors="pt", truncation=True, max_length=256, padding=True)
        distinct = len(set(model.generate(**batch, num_beams=1, do_sample=False, max_new_tokens=32).flatten().tolist()))
    return token_agreement(model, compact, tokenizer, documents), distinct


def run() -> str:
    import store
    from training.storing import compare_compact, compare_compact_adapter

    lines = ["## Compaction (int8 base vs fp32)", ""]
    stored = store.stored(store.GENERAL)
    if stored is None or not (ZOO / "general").is_dir():
        agreement, distinct = tiny_agreement()
        lines += [f"No trained general summarizer here ({'the store is empty' if stored is None else 'no checkpoints/general'}). "
                  f"Tiny random BART (d=64) vs its int8 copy, greedy, {DOCUMENTS} bbc_summary test documents x 32 tokens: "
                  f"token agreement {agreement:.3f} ({distinct} distinct tokens generated)."]
        return "\n".join(lines)
    general = compare_compact(ZOO / "general", store.model_path(store.GENERAL))
    lines += ["| test set | ROUGE-1 fp32 | ROUGE-1 int8 | difference | within 0.005 | verbatim fp32 | verbatim int8 |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {name} | {r['rouge1_fp32']:.4f} | {r['rouge1_int8']:.4f} | {r['rouge1_difference']:+.4f} | "
              f"{r['within_goal']} | {r['verbatim_fp32']} | {r['verbatim_int8']} |" for name, r in general.items()]
    for model in store.servable():
        test = ZOO / "data" / model.variant / "test.jsonl"
        if not test.is_file():
            lines.append(f"\n{model.name}: no {test} here (python -m training build-data {model.variant})")
            continue
        r = compare_compact_adapter(model.path, ZOO / "general", test)
        effects = "; ".join(f"{n} {e['int8']:+.3f} vs {e['fp32']:+.3f} (inside: {e['int8_inside_fp32_interval']})"
                            for n, e in r["effects"].items())
        lines.append(f"\n{model.name}: ROUGE-1 {r['rouge1_int8']:.4f} int8 vs {r['rouge1_fp32']:.4f} fp32; {effects}")
    return "\n".join(lines)
