"""Control-labelled data for compositional control (CCSBench, Ding et al., Sec. 3.3), from bundled
(document, reference summary) pairs.

CCSBench itself is not available here, so each pair's controls are the attributes its reference
*has*, each defined as the paper defines it:

* ``length``      the reference's 50-word bin (Sec. 3.1; :func:`metrics.ccs.length_bin`).
* ``keywords``    1 to ``--max-keywords`` terms of the reference that also occur in the document,
                  checked after stemming (the paper keeps the KWX keywords "that appear in the
                  abstracts"). ``cnndm_sample`` has CTRLsum oracle keywords, taken as given; the
                  others get the reference's content words ranked by TF-IDF, the IDF fitted on the
                  source's training references.
* ``readability`` ``high`` when the reference's FKGL is below the median FKGL of the source's
                  training references, else ``normal``: "high" means easier than a typical summary
                  of that corpus (the paper's "high" summaries are GPT-4 rewrites for laymen, 3-4
                  FKGL grades easier, Table 4; we have no rewrites, so the corpus median splits).
* ``focus``       only for targets made to have one, as CCSBench builds its focus data (App. C.2):
                  the *conceptual* and the *empirical* sentences of each SciTLDR abstract that has
                  both (:func:`metrics.focus_labels.focus_parts`, the transparent cue rule), each part a
                  target of its own with its other attributes as above (:func:`focus_targets`). A
                  reference summary gets no focus label: labelling it with the :mod:`metrics.focus`
                  judge would train the model on the judge that scores it.

Examples (Sec. 3.3): in ``train`` and ``val``, each pair gives one example per single attribute
(the four single-attribute datasets) and one with a random 2 or 3 of its attributes (the
compositional data, "tagged with 2-3 attributes"). Deterministic by ``--seed``.

``--long-repeats N`` writes each ``train`` example that asks for a length past bin 0 N times. The
TLDRs and highlights are short: most length-controlled examples ask for bin 0, and a model trained on
that mix wrote the same length whatever it was asked for (docs/log.md, 2026-11-25). With 3 the requests
past bin 0 weigh about as much as bin 0. Val and test are never repeated.

The test set (:func:`build_test_set`, whatever ``--sources``) is built so that a summarizer that
ignores a control cannot score like one that obeys it. From each SciTLDR test abstract whose
sentences hold both kinds of content, two targets, as CCSBench builds its focus data (App. C.2):
the abstract's *conceptual* sentences and its *empirical* sentences (:func:`metrics.focus_labels.focus_parts`,
the transparent cue rule; never the focus judge that scores focus). Each target is asked for twice,
with readability ``normal`` and ``high`` and otherwise the same controls: the target's length bin
(so bins vary, 0-4, within and across documents) and 1-3 of its keywords. So every document gives
four examples with all four controls, and ΔFKGL compares outputs for the same document and focus;
a summarizer blind to readability scores ΔFKGL 0 exactly. The shuffled pass changes every attribute
(:func:`opposite_controls`), with keywords the same document has.

    python -m training build-data ccs --out data/ccs [--sources scitldr,cnndm_sample[,macsum_doc]] [--seed 0]

Sources: ``scitldr`` (abstract -> author TLDR, Apache-2.0), ``cnndm_sample`` (news -> highlights),
``macsum_doc`` (news -> MACSum human summaries, CC BY-NC-ND; its one released split is cut 60/20/20
by document, as CCSBench's splits).
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from sklearn.feature_extraction.text import TfidfVectorizer

from metrics.ccs import CONTROLS, N_LENGTH_BINS, READABILITY, composition, fkgl, length_bin, length_bins
from metrics.focus_labels import FOCUS, focus_parts
from metrics.io import write_jsonl
from metrics.text import decoy_words, words
from variants.sources import add_data_dir_argument, load_source, set_data_dir

from .baseline import content_keywords, missing_keywords

SPLITS = ("train", "val", "test")
SOURCES = ("scitldr", "cnndm_sample", "macsum_doc")
# MACSum is CC BY-NC-ND: data built from it, and a model trained on it, may count as derivatives that
# must not be shared. It is used only when asked for (--sources ...,macsum_doc).
DEFAULT_SOURCES = ("scitldr", "cnndm_sample")
MACSUM_SHARES = (0.6, 0.2)  # train, val; the rest is test (CCSBench's 60/20/20)


def read_pairs(source: str, seed: int = 0) -> dict[str, list[dict]]:
    """``{split: [{"id", "document", "reference", "keywords"?}]}`` for a bundled source."""
    if source == "scitldr":
        files = {"train": "train", "val": "dev", "test": "test"}
        return {
            split: [
                {"id": r["id"], "document": r["source"], "reference": r["targets"][0]}
                for r in load_source("scitldr", name)
            ]
            for split, name in files.items()
        }
    if source == "cnndm_sample":
        return {
            split: [
                {"id": r["id"], "document": r["source"], "reference": r["target"], "keywords": r["keywords"]}
                for r in load_source("cnndm_sample", split)
            ]
            for split in SPLITS
        }
    if source == "macsum_doc":
        rows = load_source("macsum_doc", "val")
        docs = sorted({r["doc_id"] for r in rows})
        random.Random(seed).shuffle(docs)
        cut = [round(len(docs) * MACSUM_SHARES[0]), round(len(docs) * sum(MACSUM_SHARES))]
        split_of = {d: SPLITS[(i >= cut[0]) + (i >= cut[1])] for i, d in enumerate(docs)}
        out: dict[str, list[dict]] = {split: [] for split in SPLITS}
        for r in rows:
            out[split_of[r["doc_id"]]].append({"id": r["id"], "document": r["source"], "reference": r["reference"]})
        return out
    raise ValueError(f"unknown source {source!r}; allowed: {', '.join(SOURCES)}")


@dataclass
class Labeller:
    """What a source's training references fix: the IDF that ranks keywords and the FKGL median
    that splits readability; val and test are labelled with the same."""

    idf: dict[str, float]
    fkgl_median: float
    max_keywords: int = 3

    @classmethod
    def fit(cls, train_references: list[str], max_keywords: int = 3) -> Labeller:
        vectorizer = TfidfVectorizer(tokenizer=words, lowercase=False, token_pattern=None).fit(train_references)
        return cls(
            dict(zip(vectorizer.get_feature_names_out(), vectorizer.idf_.tolist())),
            median(fkgl(train_references)),
            max_keywords,
        )

    def keywords(self, pair: dict, n: int) -> list[str]:
        """Up to ``n`` keywords in both the reference and the document (after stemming)."""
        candidates = pair.get("keywords") or content_keywords(pair["reference"], n, self.idf, within=pair["document"])
        present = [
            k
            for k in candidates
            if words(k)
            and not missing_keywords(pair["reference"], [k])
            and not missing_keywords(pair["document"], [k])
        ]
        return present[:n]

    def attributes(self, pairs: list[dict], rng: random.Random) -> list[dict]:
        """Length, keywords and readability of each pair's reference (``keywords`` absent when none
        qualifies); ``focus`` only where the pair carries one (:func:`focus_targets`)."""
        references = [p["reference"] for p in pairs]
        out = []
        for pair, length, grade in zip(pairs, length_bins(references), fkgl(references)):
            attributes = {
                "length": length,
                "keywords": self.keywords(pair, rng.randint(1, self.max_keywords)),
                "readability": "high" if grade < self.fkgl_median else "normal",
                "focus": pair.get("focus"),
            }
            out.append({k: v for k, v in attributes.items() if v not in ([], None)})
        return out


def focus_targets(records: list[dict]) -> list[dict]:
    """Pairs whose reference is the conceptual or the empirical part of a SciTLDR abstract that has both
    (:func:`metrics.focus_labels.focus_parts`, the cue rule of App. C.2; never the focus judge), with that focus."""
    pairs = []
    for record in records:
        parts = focus_parts(record["source_sentences"])
        if len(parts) < len(FOCUS):  # the paper's abstracts "predominated by only one type" have no pair
            continue
        pairs += [
            {"id": f"{record['id']}-{focus}", "document": record["source"], "reference": parts[focus], "focus": focus}
            for focus in FOCUS
        ]
    return pairs


def examples_for(pair: dict, attributes: dict, split: str, dataset: str, rng: random.Random) -> list[dict]:
    """Single-attribute examples and one 2-3-attribute composition (train/val), or all four (test)."""
    names = [name for name in CONTROLS if name in attributes]
    if split == "test":
        subsets = [names]
    else:
        subsets = [[name] for name in names]
        if len(names) >= 2:
            subsets.append(sorted(rng.sample(names, min(len(names), rng.choice((2, 3)))), key=CONTROLS.index))
    return [
        {
            "id": f"{pair['id']}-{composition(dict.fromkeys(subset, 1))}",
            "document": pair["document"],
            "controls": {name: attributes[name] for name in subset},
            "target": pair["reference"],
            "dataset": dataset,
            "composition": composition(dict.fromkeys(subset, 1)),
            "attributes": attributes,
        }
        for subset in subsets
    ]


def build_source(
    source: str, seed: int = 0, max_keywords: int = 3, limit: int | None = None, long_repeats: int = 1
) -> dict[str, list[dict]]:
    """``{split: examples}`` for one source; the labeller is fitted on its whole training split."""
    pairs = read_pairs(source, seed)
    labeller = Labeller.fit([p["reference"] for p in pairs["train"]], max_keywords)
    out = {}
    for split in SPLITS:
        rng = random.Random(f"{seed}:{source}:{split}")
        chosen = pairs[split][:limit]
        if source == "scitldr" and split != "test":  # the focus data: abstract parts, two targets per abstract
            chosen += focus_targets(load_source("scitldr", {"train": "train", "val": "dev"}[split])[:limit])
        out[split] = [
            example
            for pair, attributes in zip(chosen, labeller.attributes(chosen, rng))
            for example in examples_for(pair, attributes, split, source, rng)
        ]
    out["train"] = [
        example
        for example in out["train"]
        for _ in range(long_repeats if example["controls"].get("length", 0) > 0 else 1)
    ]
    return out


def build_test_set(seed: int = 0, max_keywords: int = 3) -> list[dict]:
    """The compositional test set (module docstring): per SciTLDR test abstract with both focus
    parts, 2 focus targets x 2 readability levels, each with the target's length bin and keywords.
    The two readability examples of a target are adjacent and differ only in ``readability``."""
    labeller = Labeller.fit([p["reference"] for p in read_pairs("scitldr", seed)["train"]], max_keywords)
    rng = random.Random(f"{seed}:scitldr:test-focus")
    shuffle_rng = random.Random(f"{seed}:scitldr:test-shuffle")  # its own draws: the test set stays as it was
    out = []
    for pair in focus_targets(load_source("scitldr", "test")):
        attributes = {
            "length": length_bin(pair["reference"]),
            "focus": pair["focus"],
            "keywords": labeller.keywords(pair, rng.randint(1, max_keywords)),
        }
        for readability in READABILITY:
            controls = {k: v for k, v in {**attributes, "readability": readability}.items() if v != []}
            controls = {name: controls[name] for name in CONTROLS if name in controls}
            out.append(
                {
                    "id": f"{pair['id']}-{readability}",
                    "document": pair["document"],
                    "controls": controls,
                    "target": pair["reference"],
                    "dataset": "scitldr",
                    "composition": composition(controls),
                    "attributes": controls,
                    "pair": pair["id"],
                    "shuffled_controls": opposite_controls(controls, pair, shuffle_rng),
                }
            )
    return out


def opposite_controls(controls: dict, pair: dict, rng: random.Random) -> dict:
    """The controls of the shuffled pass: every attribute changed, so each metric tests its own control
    (drawn from other examples, half the shuffles kept the focus or the readability). Another length
    bin, the other readability and focus, and as many keywords, other words of the same document
    (:func:`metrics.text.decoy_words`: words from another document are words this one lacks)."""
    other = {
        "length": rng.choice([b for b in range(N_LENGTH_BINS) if b != controls["length"]]),
        "keywords": decoy_words(pair["document"], pair["reference"], len(controls.get("keywords", [])), rng),
        "readability": next(r for r in READABILITY if r != controls["readability"]),
        "focus": next(f for f in FOCUS if f != controls["focus"]),
    }
    return {name: other[name] for name in CONTROLS if name in controls and other[name] != []}


# ---- MACSum-Doc: human summaries per length (an extra test set) -------------------------------------

MACSUM_LENGTH_SET = "macsum-length"
# MACSum's relative lengths as CCS length bins: the median bin of the references of that length (the
# bin that minimizes the mean bin distance to them; their distribution is in docs/evaluation-targets.md).
# Normal and long share bin 1: MACSum's lengths are relative to the document, and on these news articles
# both fall mostly in 51-100 words; a test asks for the bin, and their references' word counts are
# reported apart.
MACSUM_LENGTH_BINS = {"short": 0, "normal": 1, "long": 1}


def median_bin(references: list[str]) -> int:
    """The median length bin of references (lower median): the fixed bin closest, in mean bins, to all."""
    bins = sorted(length_bins(references))
    return bins[(len(bins) - 1) // 2]


def macsum_length_set(rows: list[dict], seed: int = 0, max_keywords: int = 3) -> list[dict]:
    """MACSum-Doc's topic-free references, one per length (short / normal / long) of each document, as
    CCS records asking for the length's bin (:data:`MACSUM_LENGTH_BINS`) and 1 to ``max_keywords`` words
    of the human reference that its document also holds; the reference unchanged as the target, its
    words counted (``reference_words``).

    Keywords are the reference's content words ranked by count x IDF, the IDF fitted on the set's own
    references (the ccs model never trains on MACSum, so it has no training references here), each kept
    only when its stem occurs in the document (:func:`variants.ccs.baseline.content_keywords`; not the
    keyword-SR matcher). The shuffled pass (``shuffled_controls``) asks, of the same document, for the
    other bin (short's bin for normal and long, theirs for short) and as many of the document's words
    that the reference lacks (:func:`metrics.text.decoy_words`), so each control changes."""
    kept = [row for row in rows if not row["topic"].strip()]
    idf = Labeller.fit([row["reference"] for row in kept]).idf if kept else {}
    records = []
    for row in kept:
        rng = random.Random(f"{seed}:macsum-length:{row['id']}")
        keywords = content_keywords(row["reference"], rng.randint(1, max_keywords), idf, within=row["source"])
        length = MACSUM_LENGTH_BINS[row["length"]]
        controls = {"length": length, "keywords": keywords} if keywords else {"length": length}
        other_length = MACSUM_LENGTH_BINS["normal" if row["length"] == "short" else "short"]
        shuffled = {
            "length": other_length,
            "keywords": decoy_words(row["source"], row["reference"], len(keywords), rng),
        }
        records.append(
            {
                "id": row["id"],
                "document": row["source"],
                "controls": controls,
                "target": row["reference"],
                "dataset": "macsum_doc",
                "composition": composition(controls),
                "doc_id": row["doc_id"],
                "shuffled_controls": {k: v for k, v in shuffled.items() if k in controls and v != []},
                "macsum_length": row["length"],
                "reference_words": len(row["reference"].split()),
            }
        )
    return records


def mixed(examples: list[dict], split: str, seed: int) -> list[dict]:
    """Train and val shuffled (seeded), so the first N examples mix sources and compositions."""
    if split != "test":
        random.Random(f"{seed}:mix:{split}").shuffle(examples)
    return examples


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m training build-data ccs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", required=True, help="output folder for {train,val,test}.jsonl")
    parser.add_argument(
        "--sources",
        default=",".join(DEFAULT_SOURCES),
        help=f"comma-separated, from: {', '.join(SOURCES)} (default: {','.join(DEFAULT_SOURCES)}; "
        "macsum_doc is CC BY-NC-ND: non-commercial and no derivatives, so opt in knowingly)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-keywords", type=int, default=3, help="keywords per example: 1 to this many")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N pairs of each split")
    parser.add_argument(
        "--long-repeats",
        type=int,
        default=1,
        help="write each train example asking for a length past bin 0 this many times (default 1)",
    )
    add_data_dir_argument(parser)
    args = parser.parse_args(argv)
    set_data_dir(args.data_dir)
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    unknown = sorted(set(sources) - set(SOURCES))
    if unknown or args.max_keywords < 1 or args.long_repeats < 1:
        parser.error(
            f"unknown source(s) {unknown}; allowed: {', '.join(SOURCES)}"
            if unknown
            else "--max-keywords and --long-repeats must be at least 1"
        )
    built = {
        source: build_source(source, args.seed, args.max_keywords, args.limit, args.long_repeats) for source in sources
    }
    for split in SPLITS:
        examples = mixed([example for source in sources for example in built[source][split]], split, args.seed)
        if split == "test":  # one fair test set for every choice of sources (module docstring)
            examples = build_test_set(args.seed, args.max_keywords)[: args.limit and 4 * args.limit]
        path = Path(args.out) / f"{split}.jsonl"
        write_jsonl(path, examples)
        kinds = Counter(e["composition"] for e in examples)
        labels = Counter(
            f"{k}={e['controls'][k]}"
            for e in examples
            for k in ("length", "readability", "focus")
            if k in e["controls"]
        )
        origin = (
            f"scitldr test, {len({e['pair'] for e in examples})} targets x 2 readability levels"
            if split == "test"
            else ", ".join(f"{s} {len(built[s][split])}" for s in sources)
        )
        print(
            f"{path}: {len(examples)} examples ({origin}); "
            f"compositions {dict(sorted(kinds.items()))}; labels {dict(sorted(labels.items()))}"
        )


if __name__ == "__main__":
    main()
