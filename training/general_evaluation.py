"""Scoring the general summarizer (``python -m training general --evaluate``): ROUGE against the extractive
leads on the same articles (Lead-3 on bbc_summary, Lead-1 on the xsum part, and Lead-k at the summaries'
own length, which says whether a ratio comes from choosing words or from writing more of them) and the share
of its names and numbers found verbatim in the source. Its ratios to Lead-N are the general summarizer's goals.
"""

from __future__ import annotations

import json
from pathlib import Path

from metrics.quality import verbatim_share

from .general_recipe import RECIPE, evaluation_sets


def lead(document: str, n: int) -> str:
    from metrics.text import sentences

    return " ".join(sentences(document)[:n])


def summarize(
    model, tokenizer, documents: list[str], batch_size: int, max_source_length: int, **generate
) -> list[str]:
    """The model's summaries of ``documents``, ``batch_size`` at a time, each cut to ``max_source_length`` tokens;
    ``generate``: the generation settings (beams, length)."""
    import torch

    summaries = []
    for start in range(0, len(documents), batch_size):
        batch = tokenizer(
            documents[start : start + batch_size],
            truncation=True,
            padding=True,
            max_length=max_source_length,
            return_tensors="pt",
        ).to(model.device)
        with torch.inference_mode():
            output = model.generate(**batch, **generate)
        summaries += [t.strip() for t in tokenizer.batch_decode(output, skip_special_tokens=True)]
    return summaries


def evaluate_general(
    model_dir: str | Path,
    max_examples: int | None = None,
    batch_size: int = 8,
    num_beams: int | None = None,
    no_repeat_ngram_size: int | None = None,
    max_new_tokens: int | None = None,
    split: str = "test",
) -> dict:
    """ROUGE of the model vs the Lead-N baseline on each test set, and the verbatim share of its facts.
    ``no_repeat_ngram_size`` overrides the model's generation config (0: allow repeats);
    ``max_new_tokens`` the target length it was trained with."""
    from metrics.rouge import rouge
    from variants.seq2seq import load_seq2seq

    from .lead_k import lead_words

    record_file = Path(model_dir) / "steersum.json"  # absent in a checkpoint-N folder: the recipe's lengths
    record = json.loads(record_file.read_text()) if record_file.is_file() else dict(RECIPE)
    model, tokenizer = load_seq2seq(model_dir)  # on the GPU when there is one, as the Space and evaluation
    beams = num_beams or record.get("num_beams", RECIPE["num_beams"])
    if no_repeat_ngram_size is not None:
        model.generation_config.no_repeat_ngram_size = no_repeat_ngram_size
    max_new_tokens = max_new_tokens or record["max_target_length"]
    report = {
        "model": str(model_dir),
        "steps": record.get("steps"),
        "num_beams": beams,
        "max_new_tokens": max_new_tokens,
        "no_repeat_ngram_size": model.generation_config.no_repeat_ngram_size or 0,
        "sets": {},
    }
    for name, (examples, n_lead) in evaluation_sets(split).items():
        examples = examples[:max_examples]
        documents = [e["document"] for e in examples]
        summaries = summarize(
            model,
            tokenizer,
            documents,
            batch_size,
            record["max_source_length"],
            num_beams=beams,
            max_new_tokens=max_new_tokens,
        )
        references = [[e["target"]] for e in examples]
        model_rouge = rouge(summaries, references, allow_empty=True)["corpus"]
        lead_rouge = rouge([lead(d, n_lead) for d in documents], references)["corpus"]
        # The goal is against Lead-N; the lead at the summaries' own length says whether a
        # ratio comes from choosing words or from writing more (or fewer) of them.
        summary_words = round(sum(len(t.split()) for t in summaries) / max(len(summaries), 1))
        lead_k_rouge = rouge([lead_words(d, max(summary_words, 1)) for d in documents], references)["corpus"]
        share, facts = verbatim_share(summaries, documents)
        report["sets"][name] = {
            "examples": len(examples),
            "rouge1": model_rouge["rouge1"],
            "rouge2": model_rouge["rouge2"],
            f"lead{n_lead}_rouge1": lead_rouge["rouge1"],
            "ratio_to_lead": model_rouge["rouge1"] / lead_rouge["rouge1"],
            "summary_words": summary_words,
            "lead_at_summary_length_rouge1": lead_k_rouge["rouge1"],
            "verbatim_fact_share": share,
            "facts_checked": facts,
            "samples": summaries[:3],
        }
    return report
