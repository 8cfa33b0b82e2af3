"""Rebuild the variants' committed runtime assets from the training data: ``python -m variants.build_assets``.

The Space, the baselines and the tiny presets need a few fitted objects at run time. They are
committed under ``variants/assets/`` so that a plain clone runs with no data folder:
- ``tdsum_default/tfidf_vectorizer.json``: the TDSum baseline's TF-IDF vocabulary and IDF, fitted on
  SciTLDR train + the XSum sample (``variants.tdsum.default_assets``);
- ``tiny_bpe.json``: ``--preset tiny``'s byte-level BPE, trained on the first 400 BBC articles;
- ``tiny_unigram.json``: the tiny T5 Unigram tokenizer, trained on the first 400 SciTLDR train abstracts;
- ``common_words.txt``: the English words ccs's high-readability rule counts as common, from ``wordfreq``
  (``variants.ccs.baseline.build_common_words``).
Each rebuild is byte-identical (tests/test_sources.py checks it when the full data is present).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .ccs.baseline import COMMON_WORDS_FILE, build_common_words
from .presets import ASSETS, TINY_BPE_FILE, TINY_UNIGRAM_FILE, train_bpe, train_unigram
from .sources import add_data_dir_argument, load_source, set_data_dir
from .tdsum import default_documents, fit_vectorizer, save_vectorizer

TOKENIZER_DOCUMENTS = 400


def build(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "tdsum_default").mkdir(exist_ok=True)
    save_vectorizer(fit_vectorizer(default_documents()), out / "tdsum_default")
    bbc = [r["text"] for r in load_source("bbc", "articles")[:TOKENIZER_DOCUMENTS]]
    (out / TINY_BPE_FILE).write_text(train_bpe(bbc), encoding="utf-8")
    scitldr = [r["source"] for r in load_source("scitldr", "train")[:TOKENIZER_DOCUMENTS]]
    (out / TINY_UNIGRAM_FILE).write_text(train_unigram(scitldr), encoding="utf-8")
    (out / COMMON_WORDS_FILE.name).write_text(build_common_words(), encoding="utf-8")
    return sorted(p for p in out.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m variants.build_assets", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ASSETS, help=f"output folder (default: {ASSETS})")
    add_data_dir_argument(parser)
    args = parser.parse_args(argv)
    set_data_dir(args.data_dir)
    for path in build(args.out):
        print(f"{path}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
