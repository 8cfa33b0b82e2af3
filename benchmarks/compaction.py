"""Compaction: the stored int8 general summarizer against its fp32 checkpoint (``python -m benchmarks compaction``).

With a trained zoo here (``checkpoints/general`` in fp32 and the stored ``general``): ROUGE-1 on the
bbc_summary test split and the verbatim share of names and numbers, fp32 vs int8 (goal: ROUGE-1 within
0.005), and for each stored adapter its ROUGE-1 and control effect on its variant's test split on
both bases (the int8 effect inside the fp32 interval). Without one, how far int8 moves a model's
predictions: greedy-token agreement and teacher-forced next-token top-1 agreement of a fp32 model and
its compacted copy, for a tiny random BART and for MiniLM-BART (real pretrained weights, before any
summarization training).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

ZOO = Path("checkpoints")
DOCUMENTS = 20
FORCED_TOKENS = 64


def agreement(fp32_folder: Path, documents: list[str]) -> dict:
    """A fp32 checkpoint and its int8 copy: greedy-token agreement (32 tokens) with the distinct tokens the
    fp32 model wrote (a random model repeats one token, so agreement alone can say little), and the top-1
    agreement of the next-token prediction with each document as the decoder's input (teacher forced:
    every position a different context)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from store.compact import load_compact, write_compact
    from training.storing_compaction import token_agreement

    tokenizer = AutoTokenizer.from_pretrained(fp32_folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(fp32_folder).eval()
    with tempfile.TemporaryDirectory() as scratch:
        compact = load_compact(write_compact(fp32_folder, Path(scratch) / "int8"))
    with torch.inference_mode():
        batch = tokenizer(documents, return_tensors="pt", truncation=True, max_length=256, padding=True)
        batch.pop("token_type_ids", None)
        distinct = len(
            set(model.generate(**batch, num_beams=1, do_sample=False, max_new_tokens=32).flatten().tolist())
        )
        forced = {
            **batch,
            "decoder_input_ids": batch["input_ids"][:, :FORCED_TOKENS],
            "decoder_attention_mask": batch["attention_mask"][:, :FORCED_TOKENS],
        }
        same = model(**forced).logits.argmax(-1) == compact(**forced).logits.argmax(-1)
        real = forced["decoder_attention_mask"].bool()
    return {
        "greedy": token_agreement(model, compact, tokenizer, documents),
        "distinct": distinct,
        "forced": float(same[real].float().mean()),
        "positions": int(real.sum()),
    }


def untrained_rows(documents: list[str]) -> list[str]:
    import torch
    from transformers import BartForConditionalGeneration

    from training.base import ensure_base
    from variants.presets import tiny_bart_config, tiny_tokenizer

    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        tokenizer = tiny_tokenizer()
        torch.manual_seed(0)
        tiny = Path(scratch) / "tiny"
        BartForConditionalGeneration(tiny_bart_config(tokenizer)).save_pretrained(tiny)
        tokenizer.save_pretrained(tiny)
        for name, folder in (
            ("tiny random BART (d=64)", tiny),
            ("MiniLM-BART, converted, untrained", ensure_base("minilm")),
        ):
            r = agreement(folder, documents)
            rows.append(f"| {name} | {r['greedy']:.3f} | {r['distinct']} | {r['forced']:.3f} | {r['positions']} |")
    return rows


def run() -> str:
    import store
    from training.storing_compaction import compare_compact, compare_compact_adapter
    from variants.sources import load_source

    lines = ["## Compaction (int8 base vs fp32)", ""]
    stored = store.stored(store.GENERAL)
    if stored is None or not (ZOO / "general").is_dir():
        documents = [r["source"] for r in load_source("bbc_summary", "test")][:DOCUMENTS]
        lines += [
            f"No trained general summarizer here ({'the store is empty' if stored is None else 'no checkpoints/general'}): "
            f"fp32 vs its int8 copy on {DOCUMENTS} bbc_summary test documents, greedy generation of 32 tokens and "
            f"next-token top-1 teacher forced on each document's first {FORCED_TOKENS} tokens.",
            "",
            "| model | greedy token agreement | distinct tokens (fp32) | teacher-forced top-1 agreement | positions |",
            "|---|---|---|---|---|",
            *untrained_rows(documents),
        ]
        return "\n".join(lines)
    general = compare_compact(ZOO / "general", store.model_path(store.GENERAL))
    lines += [
        "| test set | ROUGE-1 fp32 | ROUGE-1 int8 | difference | within 0.005 | verbatim fp32 | verbatim int8 |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {r['rouge1_fp32']:.4f} | {r['rouge1_int8']:.4f} | {r['rouge1_difference']:+.4f} | "
        f"{r['within_goal']} | {r['verbatim_fp32']} | {r['verbatim_int8']} |"
        for name, r in general.items()
    ]
    for model in store.servable():
        test = ZOO / "data" / model.variant / "test.jsonl"
        if not test.is_file():
            lines.append(f"\n{model.name}: no {test} here (python -m training build-data {model.variant})")
            continue
        r = compare_compact_adapter(model.path, ZOO / "general", test)
        effects = "; ".join(
            f"{n} {e['int8']:+.3f} vs {e['fp32']:+.3f} (inside: {e['int8_inside_fp32_interval']})"
            for n, e in r["effects"].items()
        )
        lines.append(f"\n{model.name}: ROUGE-1 {r['rouge1_int8']:.4f} int8 vs {r['rouge1_fp32']:.4f} fp32; {effects}")
    return "\n".join(lines)
